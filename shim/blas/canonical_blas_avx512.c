/* The AVX-512 path of the canonical level-1/2 BLAS: the hand-written
 * loops of the real types (the LANES reductions, axpy, scal, gemv) in
 * 512-bit registers. Built for AVX-512F/DQ/VL/BW + FMA by target
 * attributes and used only where canon_cpu_has_avx512()
 * (canonical_isa.c). The complex types' dot and gemv and the sequential
 * kernels are the AVX2 path's (canonical_blas_avx2*.c), which this CPU
 * also runs: the table below says which.
 *
 * The contract (shim/blas/canonical.h) fixes 16 lanes for every LANES
 * sum, and these loops keep them: a float zmm holds all 16 lane sums
 * (the AVX2 path holds them in two ymm), a double pair of zmm holds
 * lanes 0-7 and 8-15 (AVX2: four ymm). Every lane is still the one chain
 * in increasing i, and every vector FMA lane rounds like fma(), so the
 * bits are those of the scalar and AVX2 paths. Tails shorter than a
 * block go through the AVX2 path's loops, on the same lane sums.
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>

#include "canonical_blas_avx2.h"
#include "blas/canonical_kernels.h"

#define AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")))

/* The AVX2 table's kernels, for tails and the entries kept from it. */
#define K2(ty) (canon_blas_avx2_kernels.t[ty])

/* |x|: clears the sign bit, exactly like fabs(). */
#define ABS_PS(v) _mm512_abs_ps(v)
#define ABS_PD(v) _mm512_abs_pd(v)

AVX512 static void s_dot(int64_t n, const void *xv, const void *yv, int conj, void *accv)
{
    const float *x = xv, *y = yv;
    float *acc = accv;
    __m512 s = _mm512_loadu_ps(acc);
    int64_t i = 0;
    for (; n - i >= 16; i += 16)
        s = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), s);
    _mm512_storeu_ps(acc, s);
    K2(CANON_S).dot(n - i, x + i, y + i, conj, acc);
}

AVX512 static void d_dot(int64_t n, const void *xv, const void *yv, int conj, void *accv)
{
    const double *x = xv, *y = yv;
    double *acc = accv;
    __m512d s0 = _mm512_loadu_pd(acc), s1 = _mm512_loadu_pd(acc + 8);
    int64_t i = 0;
    for (; n - i >= 16; i += 16) {
        s0 = _mm512_fmadd_pd(_mm512_loadu_pd(x + i), _mm512_loadu_pd(y + i), s0);
        s1 = _mm512_fmadd_pd(_mm512_loadu_pd(x + i + 8), _mm512_loadu_pd(y + i + 8), s1);
    }
    _mm512_storeu_pd(acc, s0);
    _mm512_storeu_pd(acc + 8, s1);
    K2(CANON_D).dot(n - i, x + i, y + i, conj, acc);
}

/* dot_cols: four columns side by side, sharing each load of x, each
 * with its own lane sums (one zmm for float, two for double, as in dot);
 * other counts take the one-column loop, tails the AVX2 path's. */
AVX512 static void s_dot_cols(int64_t n, int ncols, const void *av, int64_t lda, const void *xv,
                              int conj, union canon_lanes *acc)
{
    const float *a = av, *x = xv;
    int c = 0;
    if (ncols == 4) {
        __m512 s[4];
        int64_t i = 0;
        for (int q = 0; q < 4; q++)
            s[q] = _mm512_loadu_ps(acc[q].s);
        for (; n - i >= 16; i += 16) {
            const __m512 xi = _mm512_loadu_ps(x + i);
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++)
                s[q] = _mm512_fmadd_ps(_mm512_loadu_ps(a + q * lda + i), xi, s[q]);
        }
        for (int q = 0; q < 4; q++) {
            _mm512_storeu_ps(acc[q].s, s[q]);
            K2(CANON_S).dot(n - i, a + q * lda + i, x + i, conj, &acc[q]);
        }
        c = 4;
    }
    for (; c < ncols; c++)
        s_dot(n, a + c * lda, x, conj, &acc[c]);
}

AVX512 static void d_dot_cols(int64_t n, int ncols, const void *av, int64_t lda, const void *xv,
                              int conj, union canon_lanes *acc)
{
    const double *a = av, *x = xv;
    int c = 0;
    if (ncols == 4) {
        __m512d s[4][2];
        int64_t i = 0;
        for (int q = 0; q < 4; q++) {
            s[q][0] = _mm512_loadu_pd(acc[q].d);
            s[q][1] = _mm512_loadu_pd(acc[q].d + 8);
        }
        for (; n - i >= 16; i += 16) {
            const __m512d x0 = _mm512_loadu_pd(x + i), x1 = _mm512_loadu_pd(x + i + 8);
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++) {
                const double *col = a + q * lda + i;
                s[q][0] = _mm512_fmadd_pd(_mm512_loadu_pd(col), x0, s[q][0]);
                s[q][1] = _mm512_fmadd_pd(_mm512_loadu_pd(col + 8), x1, s[q][1]);
            }
        }
        for (int q = 0; q < 4; q++) {
            _mm512_storeu_pd(acc[q].d, s[q][0]);
            _mm512_storeu_pd(acc[q].d + 8, s[q][1]);
            K2(CANON_D).dot(n - i, a + q * lda + i, x + i, conj, &acc[q]);
        }
        c = 4;
    }
    for (; c < ncols; c++)
        d_dot(n, a + c * lda, x, conj, &acc[c]);
}

AVX512 static void s_asum(int64_t n, const void *xv, void *accv)
{
    const float *x = xv;
    float *acc = accv;
    __m512 s = _mm512_loadu_ps(acc);
    int64_t i = 0;
    for (; n - i >= 16; i += 16)
        s = _mm512_add_ps(s, ABS_PS(_mm512_loadu_ps(x + i)));
    _mm512_storeu_ps(acc, s);
    K2(CANON_S).asum(n - i, x + i, acc);
}

AVX512 static void d_asum(int64_t n, const void *xv, void *accv)
{
    const double *x = xv;
    double *acc = accv;
    __m512d s0 = _mm512_loadu_pd(acc), s1 = _mm512_loadu_pd(acc + 8);
    int64_t i = 0;
    for (; n - i >= 16; i += 16) {
        s0 = _mm512_add_pd(s0, ABS_PD(_mm512_loadu_pd(x + i)));
        s1 = _mm512_add_pd(s1, ABS_PD(_mm512_loadu_pd(x + i + 8)));
    }
    _mm512_storeu_pd(acc, s0);
    _mm512_storeu_pd(acc + 8, s1);
    K2(CANON_D).asum(n - i, x + i, acc);
}

/* t = (x * scale[0]) * scale[1], each product rounded, then fma(t, t, s). */
AVX512 static void s_sumsq(int64_t n, const void *xv, const void *scalev, void *accv)
{
    const float *x = xv, *scale = scalev;
    float *acc = accv;
    const __m512 c1 = _mm512_set1_ps(scale[0]), c2 = _mm512_set1_ps(scale[1]);
    __m512 s = _mm512_loadu_ps(acc);
    int64_t i = 0;
    for (; n - i >= 16; i += 16) {
        const __m512 t = _mm512_mul_ps(_mm512_mul_ps(_mm512_loadu_ps(x + i), c1), c2);
        s = _mm512_fmadd_ps(t, t, s);
    }
    _mm512_storeu_ps(acc, s);
    K2(CANON_S).sumsq(n - i, x + i, scale, acc);
}

AVX512 static void d_sumsq(int64_t n, const void *xv, const void *scalev, void *accv)
{
    const double *x = xv, *scale = scalev;
    double *acc = accv;
    const __m512d c1 = _mm512_set1_pd(scale[0]), c2 = _mm512_set1_pd(scale[1]);
    __m512d s0 = _mm512_loadu_pd(acc), s1 = _mm512_loadu_pd(acc + 8);
    int64_t i = 0;
    for (; n - i >= 16; i += 16) {
        const __m512d t0 = _mm512_mul_pd(_mm512_mul_pd(_mm512_loadu_pd(x + i), c1), c2);
        const __m512d t1 = _mm512_mul_pd(_mm512_mul_pd(_mm512_loadu_pd(x + i + 8), c1), c2);
        s0 = _mm512_fmadd_pd(t0, t0, s0);
        s1 = _mm512_fmadd_pd(t1, t1, s1);
    }
    _mm512_storeu_pd(acc, s0);
    _mm512_storeu_pd(acc + 8, s1);
    K2(CANON_D).sumsq(n - i, x + i, scale, acc);
}

/* max is exact and order-free; vmaxps returns its second operand when the
 * first is NaN, so max(|x|, m) skips NaN as the contract says. */
AVX512 static void s_amax(int64_t n, const void *xv, void *mv)
{
    const float *x = xv;
    __m512 m0 = _mm512_setzero_ps(), m1 = m0;
    int64_t i = 0;
    for (; n - i >= 32; i += 32) {
        m0 = _mm512_max_ps(ABS_PS(_mm512_loadu_ps(x + i)), m0);
        m1 = _mm512_max_ps(ABS_PS(_mm512_loadu_ps(x + i + 16)), m1);
    }
    float lanes[32], m;
    _mm512_storeu_ps(lanes, m0);
    _mm512_storeu_ps(lanes + 16, m1);
    K2(CANON_S).amax(n - i, x + i, &m);
    for (int l = 0; l < 32; l++)
        m = lanes[l] > m ? lanes[l] : m;
    *(float *)mv = m;
}

AVX512 static void d_amax(int64_t n, const void *xv, void *mv)
{
    const double *x = xv;
    __m512d m0 = _mm512_setzero_pd(), m1 = m0;
    int64_t i = 0;
    for (; n - i >= 16; i += 16) {
        m0 = _mm512_max_pd(ABS_PD(_mm512_loadu_pd(x + i)), m0);
        m1 = _mm512_max_pd(ABS_PD(_mm512_loadu_pd(x + i + 8)), m1);
    }
    double lanes[16], m;
    _mm512_storeu_pd(lanes, m0);
    _mm512_storeu_pd(lanes + 8, m1);
    K2(CANON_D).amax(n - i, x + i, &m);
    for (int l = 0; l < 16; l++)
        m = lanes[l] > m ? lanes[l] : m;
    *(double *)mv = m;
}

/* Elementwise: y_i = fma(alpha, x_i, y_i) and x_i = alpha * x_i; strided
 * calls and tails take the AVX2 path's loops. */
AVX512 static void s_axpy(int64_t n, const void *alphav, const void *xv, int64_t incx, void *yv,
                          int64_t incy)
{
    const float *x = xv;
    float *y = yv;
    int64_t i = 0;
    if (incx == 1 && incy == 1) {
        const __m512 a = _mm512_set1_ps(*(const float *)alphav);
        for (; n - i >= 16; i += 16)
            _mm512_storeu_ps(y + i,
                             _mm512_fmadd_ps(a, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
    }
    K2(CANON_S).axpy(n - i, alphav, x + i * incx, incx, y + i * incy, incy);
}

AVX512 static void d_axpy(int64_t n, const void *alphav, const void *xv, int64_t incx, void *yv,
                          int64_t incy)
{
    const double *x = xv;
    double *y = yv;
    int64_t i = 0;
    if (incx == 1 && incy == 1) {
        const __m512d a = _mm512_set1_pd(*(const double *)alphav);
        for (; n - i >= 8; i += 8)
            _mm512_storeu_pd(y + i,
                             _mm512_fmadd_pd(a, _mm512_loadu_pd(x + i), _mm512_loadu_pd(y + i)));
    }
    K2(CANON_D).axpy(n - i, alphav, x + i * incx, incx, y + i * incy, incy);
}

AVX512 static void s_scal(int64_t n, const void *alphav, void *xv, int64_t incx)
{
    float *x = xv;
    int64_t i = 0;
    if (incx == 1) {
        const __m512 a = _mm512_set1_ps(*(const float *)alphav);
        for (; n - i >= 16; i += 16)
            _mm512_storeu_ps(x + i, _mm512_mul_ps(a, _mm512_loadu_ps(x + i)));
    }
    K2(CANON_S).scal(n - i, alphav, x + i * incx, incx);
}

AVX512 static void d_scal(int64_t n, const void *alphav, void *xv, int64_t incx)
{
    double *x = xv;
    int64_t i = 0;
    if (incx == 1) {
        const __m512d a = _mm512_set1_pd(*(const double *)alphav);
        for (; n - i >= 8; i += 8)
            _mm512_storeu_pd(x + i, _mm512_mul_pd(a, _mm512_loadu_pd(x + i)));
    }
    K2(CANON_D).scal(n - i, alphav, x + i * incx, incx);
}

/* gemv column sweep: 8 columns at a time, each vector of 16 (8) sums
 * taking its 8 products in increasing j before it is stored back; rows
 * past the last full vector use masked loads and stores (the same
 * operations on fewer lanes), columns past the last group of 8 take the
 * AVX2 path's loop, still in increasing j per sum. */
AVX512 static void s_gemv_n(int64_t m, int64_t n, const void *av, int64_t lda, int conj,
                            const void *xv, int64_t incx, void *sv)
{
    const float *a = av, *x = xv;
    float *s = sv;
    int64_t j = 0;
    for (; n - j >= 8; j += 8) {
        const float *c = a + j * lda;
        __m512 xj[8];
#pragma GCC unroll 8
        for (int q = 0; q < 8; q++)
            xj[q] = _mm512_set1_ps(x[(j + q) * incx]);
        for (int64_t i = 0; i < m; i += 16) {
            const __mmask16 k = m - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (m - i)) - 1);
            __m512 t = _mm512_maskz_loadu_ps(k, s + i);
#pragma GCC unroll 8
            for (int q = 0; q < 8; q++)
                t = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, c + q * lda + i), xj[q], t);
            _mm512_mask_storeu_ps(s + i, k, t);
        }
    }
    K2(CANON_S).gemv_n(m, n - j, a + j * lda, lda, conj, x + j * incx, incx, s);
}

AVX512 static void d_gemv_n(int64_t m, int64_t n, const void *av, int64_t lda, int conj,
                            const void *xv, int64_t incx, void *sv)
{
    const double *a = av, *x = xv;
    double *s = sv;
    int64_t j = 0;
    for (; n - j >= 8; j += 8) {
        const double *c = a + j * lda;
        __m512d xj[8];
#pragma GCC unroll 8
        for (int q = 0; q < 8; q++)
            xj[q] = _mm512_set1_pd(x[(j + q) * incx]);
        for (int64_t i = 0; i < m; i += 8) {
            const __mmask8 k = m - i >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << (m - i)) - 1);
            __m512d t = _mm512_maskz_loadu_pd(k, s + i);
#pragma GCC unroll 8
            for (int q = 0; q < 8; q++)
                t = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(k, c + q * lda + i), xj[q], t);
            _mm512_mask_storeu_pd(s + i, k, t);
        }
    }
    K2(CANON_D).gemv_n(m, n - j, a + j * lda, lda, conj, x + j * incx, incx, s);
}

/* A real rank-1 column update is an axpy: fma(x_i, t, a_i) and
 * fma(t, x_i, a_i) are the same rounding of the same product. */
AVX512 static void s_ger_col(int64_t m, const void *x, int64_t incx, int conj, const void *t,
                             void *a)
{
    (void)conj;
    s_axpy(m, t, x, incx, a, 1);
}

AVX512 static void d_ger_col(int64_t m, const void *x, int64_t incx, int conj, const void *t,
                             void *a)
{
    (void)conj;
    d_axpy(m, t, x, incx, a, 1);
}

/* The table: the AVX2 path's, with the real types' loops above in place
 * of its own. gemv_t (column dots, whose AVX2 loop is bound by its
 * in-register transposes rather than its width), the sequential dot (one
 * chain) and the complex types stay the AVX2 path's. Built once: a
 * static initializer cannot copy another table's entries. */
#define REAL_KERNELS(k, p)                                                                         \
    do {                                                                                           \
        k.dot = p##dot, k.dot_cols = p##dot_cols, k.asum = p##asum;                                \
        k.sumsq = p##sumsq, k.amax = p##amax, k.axpy = p##axpy, k.scal = p##scal;                  \
        k.gemv_n = p##gemv_n, k.ger_col = p##ger_col;                                              \
    } while (0)

static struct canon_blas_isa table, table_auto;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void build_table(void)
{
    table = canon_blas_avx2_kernels;
    table.name = "avx512";
    REAL_KERNELS(table.t[CANON_S], s_);
    REAL_KERNELS(table.t[CANON_D], d_);
    /* The automatic choice keeps AVX2's single-thread ddot loop: in L1
     * it measured 5-7% faster here (docs/benchmarks.md). */
    table_auto = table;
    table_auto.t[CANON_D].dot = canon_blas_avx2_kernels.t[CANON_D].dot;
}

const struct canon_blas_isa *canon_blas_avx512_kernels(void)
{
    pthread_once(&table_once, build_table);
    return &table;
}

const struct canon_blas_isa *canon_blas_avx512_auto_kernels(void)
{
    pthread_once(&table_once, build_table);
    return &table_auto;
}
