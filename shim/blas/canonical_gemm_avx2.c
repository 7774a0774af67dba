/* The AVX2 + FMA path of the canonical GEMM: register tiles of 6 x 16
 * floats and 6 x 8 doubles (12 accumulators of 8 or 4 lanes, one lane per
 * output element), and 4 x 8 / 4 x 4 complex tiles. Each step broadcasts
 * one element of A and multiply-adds it into a row of accumulators with
 * vfmadd (a*b + acc, rounded once, the same as fma() per lane), so every
 * output element sees its products in increasing p exactly as the
 * contract in detshim/canonical.h says. Functions carry target attributes
 * (the file is built for baseline x86-64); the driver calls them only when
 * the CPU has AVX2 and FMA.
 */
#include <immintrin.h>
#include <string.h>

#include "detshim/canonical_kernels.h"

#define AVX2 __attribute__((target("avx2,fma")))
#define INLINE_AVX2 static inline __attribute__((always_inline, target("avx2,fma")))

/* ---- float: 6 x 16 ------------------------------------------------------ */

#define S_MR 6
#define S_NR 16

/* The 12 accumulators: row i, columns 0-7 (c<i>0) and 8-15 (c<i>1). */
#define S_DECL __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51
#define S_ALL(X) X(0) X(1) X(2) X(3) X(4) X(5)

#define S_ZERO(i) c##i##0 = _mm256_setzero_ps(); c##i##1 = _mm256_setzero_ps();
#define S_LOAD(i)                                                                         \
    c##i##0 = _mm256_load_ps(acc + (i) * S_NR);                                           \
    c##i##1 = _mm256_load_ps(acc + (i) * S_NR + 8);
#define S_STORE(i)                                                                        \
    _mm256_store_ps(out + (i) * S_NR, c##i##0);                                           \
    _mm256_store_ps(out + (i) * S_NR + 8, c##i##1);

/* One p: s[i][j] = fma(a[i], b[j], s[i][j]) for the whole tile. */
#define S_ROW(i)                                                                          \
    t = _mm256_broadcast_ss(a + (i));                                                     \
    c##i##0 = _mm256_fmadd_ps(t, b0, c##i##0);                                            \
    c##i##1 = _mm256_fmadd_ps(t, b1, c##i##1);
#define S_STEP()                                                                          \
    do {                                                                                  \
        __m256 t, b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);                     \
        S_ALL(S_ROW)                                                                      \
        a += S_MR;                                                                        \
        b += S_NR;                                                                        \
    } while (0)

/* Sums kb products into the accumulators, from acc (a tile) or zero. */
#define S_ACCUMULATE()                                                                    \
    const float *a = apv, *b = bpv;                                                       \
    S_DECL;                                                                               \
    if (accv) {                                                                           \
        const float *acc = accv;                                                          \
        S_ALL(S_LOAD)                                                                     \
    } else {                                                                              \
        S_ALL(S_ZERO)                                                                     \
    }                                                                                     \
    for (; kb >= 4; kb -= 4) {                                                            \
        S_STEP();                                                                         \
        S_STEP();                                                                         \
        S_STEP();                                                                         \
        S_STEP();                                                                         \
    }                                                                                     \
    for (; kb > 0; kb--)                                                                  \
        S_STEP();

AVX2 static void s_tile(int64_t kb, const void *apv, const void *bpv, const void *accv,
                        void *outv)
{
    S_ACCUMULATE()
    float *out = outv;
    S_ALL(S_STORE)
}

/* beta == 0: C = alpha*s (C not read); else C = fma(alpha, s, beta*C). */
#define S_OUT0(i)                                                                         \
    _mm256_storeu_ps(c + (i) * ldc, _mm256_mul_ps(va, c##i##0));                          \
    _mm256_storeu_ps(c + (i) * ldc + 8, _mm256_mul_ps(va, c##i##1));
#define S_OUT(i)                                                                          \
    _mm256_storeu_ps(c + (i) * ldc,                                                       \
                     _mm256_fmadd_ps(va, c##i##0,                                         \
                                     _mm256_mul_ps(vb, _mm256_loadu_ps(c + (i) * ldc))));  \
    _mm256_storeu_ps(c + (i) * ldc + 8,                                                   \
                     _mm256_fmadd_ps(va, c##i##1,                                         \
                                     _mm256_mul_ps(vb, _mm256_loadu_ps(c + (i) * ldc + 8))));
#define PREFETCH_ROW(i) _mm_prefetch((const char *)(c + (i) * ldc), _MM_HINT_T0);

AVX2 static void s_tile_c(int64_t kb, const void *apv, const void *bpv, const void *accv,
                          void *cv, int64_t ldc, const void *alphav, const void *betav)
{
    float *c = cv;
    S_ALL(PREFETCH_ROW)
    S_ACCUMULATE()
    const float alpha = *(const float *)alphav, beta = *(const float *)betav;
    const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    if (beta == 0) {
        S_ALL(S_OUT0)
    } else {
        S_ALL(S_OUT)
    }
}

AVX2 static void s_finish(int64_t rows, int64_t cols, const void *sv, void *cv, int64_t ldc,
                          const void *alphav, const void *betav)
{
    const float *s = sv;
    float *c = cv;
    const float alpha = *(const float *)alphav, beta = *(const float *)betav;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            float *cij = c + i * ldc + j;
            if (beta == 0) {
                *cij = alpha * s[i * S_NR + j];
            } else {
                float t = beta * *cij;
                *cij = __builtin_fmaf(alpha, s[i * S_NR + j], t);
            }
        }
}

/* ---- double: 6 x 8 ------------------------------------------------------ */

#define D_MR 6
#define D_NR 8

#define D_DECL __m256d c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51
#define D_ZERO(i) c##i##0 = _mm256_setzero_pd(); c##i##1 = _mm256_setzero_pd();
#define D_LOAD(i)                                                                         \
    c##i##0 = _mm256_load_pd(acc + (i) * D_NR);                                           \
    c##i##1 = _mm256_load_pd(acc + (i) * D_NR + 4);
#define D_STORE(i)                                                                        \
    _mm256_store_pd(out + (i) * D_NR, c##i##0);                                           \
    _mm256_store_pd(out + (i) * D_NR + 4, c##i##1);
#define D_ROW(i)                                                                          \
    t = _mm256_broadcast_sd(a + (i));                                                     \
    c##i##0 = _mm256_fmadd_pd(t, b0, c##i##0);                                            \
    c##i##1 = _mm256_fmadd_pd(t, b1, c##i##1);
#define D_STEP()                                                                          \
    do {                                                                                  \
        __m256d t, b0 = _mm256_load_pd(b), b1 = _mm256_load_pd(b + 4);                   \
        S_ALL(D_ROW)                                                                      \
        a += D_MR;                                                                        \
        b += D_NR;                                                                        \
    } while (0)
#define D_ACCUMULATE()                                                                    \
    const double *a = apv, *b = bpv;                                                      \
    D_DECL;                                                                               \
    if (accv) {                                                                           \
        const double *acc = accv;                                                         \
        S_ALL(D_LOAD)                                                                     \
    } else {                                                                              \
        S_ALL(D_ZERO)                                                                     \
    }                                                                                     \
    for (; kb >= 4; kb -= 4) {                                                            \
        D_STEP();                                                                         \
        D_STEP();                                                                         \
        D_STEP();                                                                         \
        D_STEP();                                                                         \
    }                                                                                     \
    for (; kb > 0; kb--)                                                                  \
        D_STEP();

AVX2 static void d_tile(int64_t kb, const void *apv, const void *bpv, const void *accv,
                        void *outv)
{
    D_ACCUMULATE()
    double *out = outv;
    S_ALL(D_STORE)
}

#define D_OUT0(i)                                                                         \
    _mm256_storeu_pd(c + (i) * ldc, _mm256_mul_pd(va, c##i##0));                          \
    _mm256_storeu_pd(c + (i) * ldc + 4, _mm256_mul_pd(va, c##i##1));
#define D_OUT(i)                                                                          \
    _mm256_storeu_pd(c + (i) * ldc,                                                       \
                     _mm256_fmadd_pd(va, c##i##0,                                         \
                                     _mm256_mul_pd(vb, _mm256_loadu_pd(c + (i) * ldc))));  \
    _mm256_storeu_pd(c + (i) * ldc + 4,                                                   \
                     _mm256_fmadd_pd(va, c##i##1,                                         \
                                     _mm256_mul_pd(vb, _mm256_loadu_pd(c + (i) * ldc + 4))));

AVX2 static void d_tile_c(int64_t kb, const void *apv, const void *bpv, const void *accv,
                          void *cv, int64_t ldc, const void *alphav, const void *betav)
{
    double *c = cv;
    S_ALL(PREFETCH_ROW)
    D_ACCUMULATE()
    const double alpha = *(const double *)alphav, beta = *(const double *)betav;
    const __m256d va = _mm256_set1_pd(alpha), vb = _mm256_set1_pd(beta);
    if (beta == 0) {
        S_ALL(D_OUT0)
    } else {
        S_ALL(D_OUT)
    }
}

AVX2 static void d_finish(int64_t rows, int64_t cols, const void *sv, void *cv, int64_t ldc,
                          const void *alphav, const void *betav)
{
    const double *s = sv;
    double *c = cv;
    const double alpha = *(const double *)alphav, beta = *(const double *)betav;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            double *cij = c + i * ldc + j;
            if (beta == 0) {
                *cij = alpha * s[i * D_NR + j];
            } else {
                double t = beta * *cij;
                *cij = __builtin_fma(alpha, s[i * D_NR + j], t);
            }
        }
}
