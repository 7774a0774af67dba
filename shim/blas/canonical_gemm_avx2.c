/* The AVX2 + FMA path of the canonical GEMM: register tiles of 6 x 16
 * floats and 6 x 8 doubles (12 accumulators of 8 or 4 lanes, one lane per
 * output element), and 6 x 8 / 6 x 4 complex tiles. Each step broadcasts
 * one element of A and multiply-adds it into a row of accumulators with
 * vfmadd (a*b + acc, rounded once, the same as fma() per lane), so every
 * output element sees its products in increasing p exactly as the
 * contract in shim/blas/canonical.h says. Functions carry target attributes
 * (the file is built for baseline x86-64); the driver calls them only when
 * the CPU has AVX2 and FMA.
 */
#include <immintrin.h>
#include <string.h>

#include "blas/canonical_kernels.h"

#define AVX2 __attribute__((target("avx2,fma")))
#define INLINE_AVX2 static inline __attribute__((always_inline, target("avx2,fma")))

/* ---- packing -------------------------------------------------------------
 * Same layout as the generic packers (canonical_kernels.h); these only move
 * data faster for full strips of the register-tile widths used here, and
 * hand anything else to the generic code. Packing reorders copies, never
 * arithmetic, so it cannot change a result bit. */

/* Transposes 8 vectors of 8 floats in place (named variables, so they stay
 * in registers): afterwards v<q> holds lane q of the eight inputs. */
#define TRANSPOSE8_PS(v0, v1, v2, v3, v4, v5, v6, v7)                                     \
    do {                                                                                  \
        __m256 t0 = _mm256_unpacklo_ps(v0, v1), t1 = _mm256_unpackhi_ps(v0, v1);          \
        __m256 t2 = _mm256_unpacklo_ps(v2, v3), t3 = _mm256_unpackhi_ps(v2, v3);          \
        __m256 t4 = _mm256_unpacklo_ps(v4, v5), t5 = _mm256_unpackhi_ps(v4, v5);          \
        __m256 t6 = _mm256_unpacklo_ps(v6, v7), t7 = _mm256_unpackhi_ps(v6, v7);          \
        __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE); \
        __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE); \
        __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE); \
        __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE); \
        v0 = _mm256_permute2f128_ps(u0, u4, 0x20);                                        \
        v1 = _mm256_permute2f128_ps(u1, u5, 0x20);                                        \
        v2 = _mm256_permute2f128_ps(u2, u6, 0x20);                                        \
        v3 = _mm256_permute2f128_ps(u3, u7, 0x20);                                        \
        v4 = _mm256_permute2f128_ps(u0, u4, 0x31);                                        \
        v5 = _mm256_permute2f128_ps(u1, u5, 0x31);                                        \
        v6 = _mm256_permute2f128_ps(u2, u6, 0x31);                                        \
        v7 = _mm256_permute2f128_ps(u3, u7, 0x31);                                        \
    } while (0)

/* Lanes 0 .. n-1 set, for masked loads (which never touch masked-out
 * lanes, so a strip may end at the edge of a mapping). */
INLINE_AVX2 __m256i lanes_ps(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

INLINE_AVX2 __m256i lanes_pd(int n)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
}

/* Row i of a strip at column p, or zero for a padding row (i >= h). */
#define ROW_PS(i) ((i) < h ? _mm256_loadu_ps(x + (i) * rs + p) : _mm256_setzero_ps())
#define ROW_PD(i) ((i) < h ? _mm256_loadu_pd(x + (i) * rs + p) : _mm256_setzero_pd())

/* Eight rows (i0 .. i0+7) x 8 columns of a 16-row strip, transposed. */
INLINE_AVX2 void s_rows16_block(int i0, int h, int64_t p, const float *x, int64_t rs, float *d)
{
    __m256 v0 = ROW_PS(i0), v1 = ROW_PS(i0 + 1), v2 = ROW_PS(i0 + 2), v3 = ROW_PS(i0 + 3);
    __m256 v4 = ROW_PS(i0 + 4), v5 = ROW_PS(i0 + 5), v6 = ROW_PS(i0 + 6), v7 = ROW_PS(i0 + 7);
    TRANSPOSE8_PS(v0, v1, v2, v3, v4, v5, v6, v7);
    d += i0;
    _mm256_storeu_ps(d, v0);
    _mm256_storeu_ps(d + 16, v1);
    _mm256_storeu_ps(d + 32, v2);
    _mm256_storeu_ps(d + 48, v3);
    _mm256_storeu_ps(d + 64, v4);
    _mm256_storeu_ps(d + 80, v5);
    _mm256_storeu_ps(d + 96, v6);
    _mm256_storeu_ps(d + 112, v7);
}

/* One strip of r rows (6 or 16), h of them real, whose rows are
 * contiguous (cs == 1): 8 columns of 8 rows at a time are loaded and
 * transposed, so the strip is written in order. */
AVX2 static void s_pack_rows(int r, int h, int64_t kb, const float *x, int64_t rs, float *dst)
{
    int64_t p = 0;
    for (; p + 8 <= kb; p += 8) {
        if (r == 16) {
            s_rows16_block(0, h, p, x, rs, dst + p * 16);
            s_rows16_block(8, h, p, x, rs, dst + p * 16);
        } else {
            __m256 v0 = ROW_PS(0), v1 = ROW_PS(1), v2 = ROW_PS(2), v3 = ROW_PS(3);
            __m256 v4 = ROW_PS(4), v5 = ROW_PS(5), v6 = _mm256_setzero_ps(), v7 = v6;
            TRANSPOSE8_PS(v0, v1, v2, v3, v4, v5, v6, v7);
            /* Each store spills 2 lanes into the next group, which the
             * next store overwrites; the last one does not spill. */
            float *d = dst + p * 6;
            _mm256_storeu_ps(d, v0);
            _mm256_storeu_ps(d + 6, v1);
            _mm256_storeu_ps(d + 12, v2);
            _mm256_storeu_ps(d + 18, v3);
            _mm256_storeu_ps(d + 24, v4);
            _mm256_storeu_ps(d + 30, v5);
            _mm256_storeu_ps(d + 36, v6);
            _mm_storeu_ps(d + 42, _mm256_castps256_ps128(v7));
            _mm_storel_pi((__m64 *)(d + 46), _mm256_extractf128_ps(v7, 1));
        }
    }
    for (; p < kb; p++)
        for (int i = 0; i < r; i++)
            dst[p * r + i] = i < h ? x[i * rs + p] : 0.0f;
}

/* The same for a strip whose columns are contiguous (rs == 1). */
AVX2 static void s_pack_cols(int r, int h, int64_t kb, const float *x, int64_t cs, float *dst)
{
    if (r == 16 && h == 16) {
        for (int64_t p = 0; p < kb; p++, dst += 16) {
            _mm256_storeu_ps(dst, _mm256_loadu_ps(x + p * cs));
            _mm256_storeu_ps(dst + 8, _mm256_loadu_ps(x + p * cs + 8));
        }
    } else if (r == 16) {
        __m256i m0 = lanes_ps(h), m1 = lanes_ps(h - 8);
        for (int64_t p = 0; p < kb; p++, dst += 16) {
            _mm256_storeu_ps(dst, _mm256_maskload_ps(x + p * cs, m0));
            _mm256_storeu_ps(dst + 8, _mm256_maskload_ps(x + p * cs + 8, m1));
        }
    } else if (h == 6) {
        for (int64_t p = 0; p < kb; p++, dst += 6) {
            _mm_storeu_ps(dst, _mm_loadu_ps(x + p * cs));
            _mm_storel_pi((__m64 *)(dst + 4),
                          _mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(x + p * cs + 4)));
        }
    } else {
        __m256i m = lanes_ps(h);
        for (int64_t p = 0; p < kb; p++, dst += 6) {
            __m256 v = _mm256_maskload_ps(x + p * cs, m);
            _mm_storeu_ps(dst, _mm256_castps256_ps128(v));
            _mm_storel_pi((__m64 *)(dst + 4), _mm256_extractf128_ps(v, 1));
        }
    }
}

AVX2 static void s_pack(int r, int64_t rows, int64_t kb, const void *xv, int64_t rs, int64_t cs,
                        int flags, void *dstv)
{
    const float *x = xv;
    float *dst = dstv;
    if ((r != 6 && r != 16) || (rs != 1 && cs != 1)) {
        canon_pack_f32(r, rows, kb, x, rs, cs, flags, dst);
        return;
    }
    for (int64_t i0 = 0; i0 < rows; i0 += r, dst += kb * r) {
        int h = rows - i0 < r ? (int)(rows - i0) : r;
        if (cs == 1)
            s_pack_rows(r, h, kb, x + i0 * rs, rs, dst);
        else
            s_pack_cols(r, h, kb, x + i0, cs, dst);
    }
}

/* Doubles: the same with 4 x 4 transposes, for r = 6 or 8. Four rows
 * x 4 columns, transposed into 4 groups r apart. */
INLINE_AVX2 void d_rows4_block(__m256d a, __m256d b, __m256d c, __m256d d, double *dst, int r)
{
    __m256d t0 = _mm256_unpacklo_pd(a, b), t1 = _mm256_unpackhi_pd(a, b);
    __m256d t2 = _mm256_unpacklo_pd(c, d), t3 = _mm256_unpackhi_pd(c, d);
    _mm256_storeu_pd(dst, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm256_storeu_pd(dst + r, _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm256_storeu_pd(dst + 2 * r, _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm256_storeu_pd(dst + 3 * r, _mm256_permute2f128_pd(t1, t3, 0x31));
}

/* Two rows x 4 columns, into 4 groups r apart. */
INLINE_AVX2 void d_rows2_block(__m256d a, __m256d b, double *dst, int r)
{
    __m256d lo = _mm256_unpacklo_pd(a, b), hi = _mm256_unpackhi_pd(a, b);
    _mm_storeu_pd(dst, _mm256_castpd256_pd128(lo));
    _mm_storeu_pd(dst + r, _mm256_castpd256_pd128(hi));
    _mm_storeu_pd(dst + 2 * r, _mm256_extractf128_pd(lo, 1));
    _mm_storeu_pd(dst + 3 * r, _mm256_extractf128_pd(hi, 1));
}

AVX2 static void d_pack_rows(int r, int h, int64_t kb, const double *x, int64_t rs, double *dst)
{
    int64_t p = 0;
    for (; p + 4 <= kb; p += 4) {
        double *d = dst + p * r;
        d_rows4_block(ROW_PD(0), ROW_PD(1), ROW_PD(2), ROW_PD(3), d, r);
        if (r == 8)
            d_rows4_block(ROW_PD(4), ROW_PD(5), ROW_PD(6), ROW_PD(7), d + 4, r);
        else
            d_rows2_block(ROW_PD(4), ROW_PD(5), d + 4, r);
    }
    for (; p < kb; p++)
        for (int i = 0; i < r; i++)
            dst[p * r + i] = i < h ? x[i * rs + p] : 0.0;
}

AVX2 static void d_pack_cols(int r, int h, int64_t kb, const double *x, int64_t cs, double *dst)
{
    __m256i m0 = lanes_pd(h), m1 = lanes_pd(h - 4);
    if (r == 8 && h == 8) {
        for (int64_t p = 0; p < kb; p++, dst += 8) {
            _mm256_storeu_pd(dst, _mm256_loadu_pd(x + p * cs));
            _mm256_storeu_pd(dst + 4, _mm256_loadu_pd(x + p * cs + 4));
        }
    } else if (r == 8) {
        for (int64_t p = 0; p < kb; p++, dst += 8) {
            _mm256_storeu_pd(dst, _mm256_maskload_pd(x + p * cs, m0));
            _mm256_storeu_pd(dst + 4, _mm256_maskload_pd(x + p * cs + 4, m1));
        }
    } else if (h == 6) {
        for (int64_t p = 0; p < kb; p++, dst += 6) {
            _mm256_storeu_pd(dst, _mm256_loadu_pd(x + p * cs));
            _mm_storeu_pd(dst + 4, _mm_loadu_pd(x + p * cs + 4));
        }
    } else {
        __m128i m1x = _mm256_castsi256_si128(m1);
        for (int64_t p = 0; p < kb; p++, dst += 6) {
            _mm256_storeu_pd(dst, _mm256_maskload_pd(x + p * cs, m0));
            _mm_storeu_pd(dst + 4, _mm_maskload_pd(x + p * cs + 4, m1x));
        }
    }
}

AVX2 static void d_pack(int r, int64_t rows, int64_t kb, const void *xv, int64_t rs, int64_t cs,
                        int flags, void *dstv)
{
    const double *x = xv;
    double *dst = dstv;
    if ((r != 6 && r != 8) || (rs != 1 && cs != 1)) {
        canon_pack_f64(r, rows, kb, x, rs, cs, flags, dst);
        return;
    }
    for (int64_t i0 = 0; i0 < rows; i0 += r, dst += kb * r) {
        int h = rows - i0 < r ? (int)(rows - i0) : r;
        if (cs == 1)
            d_pack_rows(r, h, kb, x + i0 * rs, rs, dst);
        else
            d_pack_cols(r, h, kb, x + i0, cs, dst);
    }
}

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

/* Edge tiles: the same formula, 8 lanes where a row has them. */
AVX2 static void s_finish(int64_t rows, int64_t cols, const void *sv, void *cv, int64_t ldc,
                          const void *alphav, const void *betav)
{
    const float *s = sv;
    float *c = cv;
    const float alpha = *(const float *)alphav, beta = *(const float *)betav;
    const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    for (int64_t i = 0; i < rows; i++, s += S_NR, c += ldc) {
        int64_t j = 0;
        for (; j + 8 <= cols; j += 8) {
            __m256 v = _mm256_load_ps(s + j);
            if (beta == 0)
                _mm256_storeu_ps(c + j, _mm256_mul_ps(va, v));
            else
                _mm256_storeu_ps(c + j, _mm256_fmadd_ps(va, v,
                                                        _mm256_mul_ps(vb, _mm256_loadu_ps(c + j))));
        }
        for (; j < cols; j++) {
            if (beta == 0) {
                c[j] = alpha * s[j];
            } else {
                float t = beta * c[j];
                c[j] = __builtin_fmaf(alpha, s[j], t);
            }
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
    const __m256d va = _mm256_set1_pd(alpha), vb = _mm256_set1_pd(beta);
    for (int64_t i = 0; i < rows; i++, s += D_NR, c += ldc) {
        int64_t j = 0;
        for (; j + 4 <= cols; j += 4) {
            __m256d v = _mm256_load_pd(s + j);
            if (beta == 0)
                _mm256_storeu_pd(c + j, _mm256_mul_pd(va, v));
            else
                _mm256_storeu_pd(c + j, _mm256_fmadd_pd(va, v,
                                                        _mm256_mul_pd(vb, _mm256_loadu_pd(c + j))));
        }
        for (; j < cols; j++) {
            if (beta == 0) {
                c[j] = alpha * s[j];
            } else {
                double t = beta * c[j];
                c[j] = __builtin_fma(alpha, s[j], t);
            }
        }
    }
}

/* ---- complex ------------------------------------------------------------
 * Accumulators hold interleaved {re, im} lanes, and one p is two vfmadd per
 * accumulator: s = fma(P1, Q1, s); s = fma(P2, Q2, s), with P1 and P2
 * broadcast pairs from packed A and Q1, Q2 vectors of pairs from packed B
 * (the generic complex layout of canonical_kernels.h, which puts the
 * contract's terms, in its order, into each lane). */

#define C_MR 6
#define C_NR 8
#define Z_MR 6
#define Z_NR 4

/* Edge tiles: the contract's alpha/beta step for complex, one element at
 * a time (same formula as the vector code below). */
#define DEFINE_COMPLEX_FINISH(name, T, NR, FMA)                                           \
    AVX2 static void name(int64_t rows, int64_t cols, const void *sv, void *cv,           \
                          int64_t ldc, const void *alphav, const void *betav)             \
    {                                                                                     \
        const T *s = sv, *al = alphav, *be = betav;                                       \
        T *c = cv;                                                                        \
        int beta0 = be[0] == 0 && be[1] == 0;                                             \
        for (int64_t i = 0; i < rows; i++)                                                \
            for (int64_t j = 0; j < cols; j++) {                                          \
                const T *e = s + 2 * (i * NR + j);                                        \
                T *cij = c + 2 * (i * ldc + j);                                           \
                T rr, ri;                                                                 \
                if (beta0) {                                                              \
                    rr = al[0] * e[0];                                                    \
                    ri = al[0] * e[1];                                                    \
                } else {                                                                  \
                    T tr = be[0] * cij[0];                                                \
                    T ti = be[0] * cij[1];                                                \
                    tr = FMA(-be[1], cij[1], tr);                                         \
                    ti = FMA(be[1], cij[0], ti);                                          \
                    rr = FMA(al[0], e[0], tr);                                            \
                    ri = FMA(al[0], e[1], ti);                                            \
                }                                                                         \
                cij[0] = FMA(-al[1], e[1], rr);                                           \
                cij[1] = FMA(al[1], e[0], ri);                                            \
            }                                                                             \
    }

DEFINE_COMPLEX_FINISH(c_finish, float, C_NR, __builtin_fmaf)
DEFINE_COMPLEX_FINISH(z_finish, double, Z_NR, __builtin_fma)

/* Complex tiles share one shape (6 rows, 2 vectors per row), so one set
 * of macros serves both types; V is the vector type's suffix. Twelve
 * accumulators, each taking its two fmas per p one after the other,
 * leave the FMA units 12 independent chains (8 cover their latency); the
 * two vectors of Q1 are loaded for the first fma of every row, then those
 * of Q2 for the second, so 12 sums, 2 vectors of B and a broadcast fit
 * the 16 registers. */
#define X_DECL(V) V c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51
#define X_ALL(X) X(0) X(1) X(2) X(3) X(4) X(5)

#define C_ZERO(i) c##i##0 = _mm256_setzero_ps(); c##i##1 = _mm256_setzero_ps();
#define C_LOAD(i)                                                                         \
    c##i##0 = _mm256_load_ps(acc + (i) * 2 * C_NR);                                       \
    c##i##1 = _mm256_load_ps(acc + (i) * 2 * C_NR + 8);
#define C_STORE(i)                                                                        \
    _mm256_store_ps(out + (i) * 2 * C_NR, c##i##0);                                       \
    _mm256_store_ps(out + (i) * 2 * C_NR + 8, c##i##1);
#define C_ROW1(i)                                                                         \
    t = _mm256_castpd_ps(_mm256_broadcast_sd((const double *)(a + 4 * (i))));             \
    c##i##0 = _mm256_fmadd_ps(t, b0, c##i##0);                                            \
    c##i##1 = _mm256_fmadd_ps(t, b1, c##i##1);
#define C_ROW2(i)                                                                         \
    t = _mm256_castpd_ps(_mm256_broadcast_sd((const double *)(a + 4 * (i) + 2)));         \
    c##i##0 = _mm256_fmadd_ps(t, w0, c##i##0);                                            \
    c##i##1 = _mm256_fmadd_ps(t, w1, c##i##1);
#define C_STEP()                                                                          \
    do {                                                                                  \
        __m256 t, b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);                     \
        X_ALL(C_ROW1)                                                                     \
        const __m256 w0 = _mm256_load_ps(b + 16), w1 = _mm256_load_ps(b + 24);            \
        X_ALL(C_ROW2)                                                                     \
        a += 4 * C_MR;                                                                    \
        b += 4 * C_NR;                                                                    \
    } while (0)
#define C_ACCUMULATE()                                                                    \
    const float *a = apv, *b = bpv;                                                       \
    X_DECL(__m256);                                                                       \
    if (accv) {                                                                           \
        const float *acc = accv;                                                          \
        X_ALL(C_LOAD)                                                                     \
    } else {                                                                              \
        X_ALL(C_ZERO)                                                                     \
    }                                                                                     \
    for (; kb >= 2; kb -= 2) {                                                            \
        C_STEP();                                                                         \
        C_STEP();                                                                         \
    }                                                                                     \
    if (kb > 0)                                                                           \
        C_STEP();

AVX2 static void c_tile(int64_t kb, const void *apv, const void *bpv, const void *accv,
                        void *outv)
{
    C_ACCUMULATE()
    float *out = outv;
    X_ALL(C_STORE)
}

/* alpha/beta on interleaved lanes: the complex formula of the contract,
 * with {x.im, x.re} from an in-lane swap of the pairs. */
#define C_SWAP(v) _mm256_permute_ps(v, 0xB1)
#define C_APPLY(v, off)                                                                   \
    do {                                                                                  \
        __m256 r;                                                                         \
        if (beta0) {                                                                      \
            r = _mm256_mul_ps(ar, v);                                                     \
        } else {                                                                          \
            __m256 old = _mm256_loadu_ps(ci + (off));                                     \
            __m256 t = _mm256_mul_ps(br, old);                                            \
            t = _mm256_fmadd_ps(bx, C_SWAP(old), t);                                      \
            r = _mm256_fmadd_ps(ar, v, t);                                                \
        }                                                                                 \
        r = _mm256_fmadd_ps(ax, C_SWAP(v), r);                                            \
        _mm256_storeu_ps(ci + (off), r);                                                  \
    } while (0);
#define C_OUT(i)                                                                          \
    {                                                                                     \
        float *ci = c + 2 * (i) * ldc;                                                    \
        C_APPLY(c##i##0, 0)                                                               \
        C_APPLY(c##i##1, 8)                                                               \
    }

AVX2 static void c_tile_c(int64_t kb, const void *apv, const void *bpv, const void *accv,
                          void *cv, int64_t ldc, const void *alphav, const void *betav)
{
    C_ACCUMULATE()
    float *c = cv;
    const float *al = alphav, *be = betav;
    const int beta0 = be[0] == 0 && be[1] == 0;
    const __m256 ar = _mm256_set1_ps(al[0]), br = _mm256_set1_ps(be[0]);
    const __m256 ax = _mm256_setr_ps(-al[1], al[1], -al[1], al[1], -al[1], al[1], -al[1], al[1]);
    const __m256 bx = _mm256_setr_ps(-be[1], be[1], -be[1], be[1], -be[1], be[1], -be[1], be[1]);
    X_ALL(C_OUT)
}

#define Z_ZERO(i) c##i##0 = _mm256_setzero_pd(); c##i##1 = _mm256_setzero_pd();
#define Z_LOAD(i)                                                                         \
    c##i##0 = _mm256_load_pd(acc + (i) * 2 * Z_NR);                                       \
    c##i##1 = _mm256_load_pd(acc + (i) * 2 * Z_NR + 4);
#define Z_STORE(i)                                                                        \
    _mm256_store_pd(out + (i) * 2 * Z_NR, c##i##0);                                       \
    _mm256_store_pd(out + (i) * 2 * Z_NR + 4, c##i##1);
#define Z_ROW1(i)                                                                         \
    t = _mm256_broadcast_pd((const __m128d *)(a + 4 * (i)));                              \
    c##i##0 = _mm256_fmadd_pd(t, b0, c##i##0);                                            \
    c##i##1 = _mm256_fmadd_pd(t, b1, c##i##1);
#define Z_ROW2(i)                                                                         \
    t = _mm256_broadcast_pd((const __m128d *)(a + 4 * (i) + 2));                          \
    c##i##0 = _mm256_fmadd_pd(t, w0, c##i##0);                                            \
    c##i##1 = _mm256_fmadd_pd(t, w1, c##i##1);
#define Z_STEP()                                                                          \
    do {                                                                                  \
        __m256d t, b0 = _mm256_load_pd(b), b1 = _mm256_load_pd(b + 4);                   \
        X_ALL(Z_ROW1)                                                                     \
        const __m256d w0 = _mm256_load_pd(b + 8), w1 = _mm256_load_pd(b + 12);            \
        X_ALL(Z_ROW2)                                                                     \
        a += 4 * Z_MR;                                                                    \
        b += 4 * Z_NR;                                                                    \
    } while (0)
#define Z_ACCUMULATE()                                                                    \
    const double *a = apv, *b = bpv;                                                      \
    X_DECL(__m256d);                                                                      \
    if (accv) {                                                                           \
        const double *acc = accv;                                                         \
        X_ALL(Z_LOAD)                                                                     \
    } else {                                                                              \
        X_ALL(Z_ZERO)                                                                     \
    }                                                                                     \
    for (; kb >= 2; kb -= 2) {                                                            \
        Z_STEP();                                                                         \
        Z_STEP();                                                                         \
    }                                                                                     \
    if (kb > 0)                                                                           \
        Z_STEP();

AVX2 static void z_tile(int64_t kb, const void *apv, const void *bpv, const void *accv,
                        void *outv)
{
    Z_ACCUMULATE()
    double *out = outv;
    X_ALL(Z_STORE)
}

#define Z_SWAP(v) _mm256_permute_pd(v, 0x5)
#define Z_APPLY(v, off)                                                                   \
    do {                                                                                  \
        __m256d r;                                                                        \
        if (beta0) {                                                                      \
            r = _mm256_mul_pd(ar, v);                                                     \
        } else {                                                                          \
            __m256d old = _mm256_loadu_pd(ci + (off));                                    \
            __m256d t = _mm256_mul_pd(br, old);                                           \
            t = _mm256_fmadd_pd(bx, Z_SWAP(old), t);                                      \
            r = _mm256_fmadd_pd(ar, v, t);                                                \
        }                                                                                 \
        r = _mm256_fmadd_pd(ax, Z_SWAP(v), r);                                            \
        _mm256_storeu_pd(ci + (off), r);                                                  \
    } while (0);
#define Z_OUT(i)                                                                          \
    {                                                                                     \
        double *ci = c + 2 * (i) * ldc;                                                   \
        Z_APPLY(c##i##0, 0)                                                               \
        Z_APPLY(c##i##1, 4)                                                               \
    }

AVX2 static void z_tile_c(int64_t kb, const void *apv, const void *bpv, const void *accv,
                          void *cv, int64_t ldc, const void *alphav, const void *betav)
{
    Z_ACCUMULATE()
    double *c = cv;
    const double *al = alphav, *be = betav;
    const int beta0 = be[0] == 0 && be[1] == 0;
    const __m256d ar = _mm256_set1_pd(al[0]), br = _mm256_set1_pd(be[0]);
    const __m256d ax = _mm256_setr_pd(-al[1], al[1], -al[1], al[1]);
    const __m256d bx = _mm256_setr_pd(-be[1], be[1], -be[1], be[1]);
    X_ALL(Z_OUT)
}

#define KERNEL(pre, MR, NR, MC, KC, NC, ELEM, PACKED, PACK_A, PACK_B)                     \
    {                                                                                     \
        .mr = MR, .nr = NR, .mc = MC, .kc = KC, .nc = NC, .elem = ELEM, .packed = PACKED, \
        .pack_a = PACK_A, .pack_b = PACK_B, .tile = pre##_tile, .tile_c = pre##_tile_c,   \
        .finish = pre##_finish,                                                           \
    }

/* Blocking: a kc x nr strip of packed B (16 KiB for s and d) stays in the
 * 32 KiB L1, the mc x kc block of packed A in the L2. nc = 512 was chosen
 * on a Zen 4 without AVX-512 (1 MiB L2), where choices near it were within
 * noise; on a Zen 3 (EPYC Milan, 512 KiB L2, 32 MiB L3) nc = 1024, which
 * packs A half as often, gave dgemm at n = 2048 0.91-0.99 of OpenBLAS
 * against 0.90-0.92 on 1 thread and 0.94-0.98 against 0.92 on 2, and
 * sgemm on 2 threads 0.98-1.01 against 0.89-0.93; at n = 1024 the two were
 * within noise (2026-12-01). Blocking reorders no sum: same bits.
 * The complex tiles read twice the bytes per p (packed {P1, P2} and
 * {Q1, Q2}): at kc = 256 a 6-row strip of A and a strip of B (24 + 32 KiB
 * for c, 48 + 32 for z) overflowed the 48 KiB L1 of the Zen 5 this runs
 * on now, and the loads of B stalled (perf: the B loads took most of the
 * tile's samples). A shorter kc keeps both strips in L1 (kc = 128 for c:
 * 12 + 16 KiB; 64 for z: 12 + 8) and a taller mc reuses each B strip over
 * 40 strips of A: single-thread CPU time at n = 1024 went from 100 to
 * 110 GFLOP/s (c) and from 48 to 56 (z), 2026-12-01, docs/benchmarks.md. */
const struct canon_isa_kernels canon_avx2_kernels = {
    .name = "avx2",
    .k = {
        [CANON_S] = KERNEL(s, S_MR, S_NR, 144, 256, 1024, 4, 4, s_pack, s_pack),
        [CANON_D] = KERNEL(d, D_MR, D_NR, 144, 256, 1024, 8, 8, d_pack, d_pack),
        [CANON_C] = KERNEL(c, C_MR, C_NR, 240, 128, 512, 8, 16, canon_pack_c64_a,
                           canon_pack_c64_b),
        [CANON_Z] = KERNEL(z, Z_MR, Z_NR, 240, 64, 512, 16, 32, canon_pack_c128_a,
                           canon_pack_c128_b),
    },
};
