/* The AVX2 + FMA path of the canonical level-1/2/3 BLAS. The whole file is
 * built for AVX2 + FMA (a target pragma; the Makefile builds it for
 * baseline x86-64 like every other file) and is used only when the CPU has
 * both (canonical_l1.c checks). It holds the plain-C kernels of
 * canonical_blas_generic.inc, where fma() becomes one vfmadd, and
 * hand-written vector loops for the kernels that matter for speed (the
 * level-1 reductions and elementwise loops of the real types, dot and
 * gemv of the real types here, of the complex types in
 * canonical_blas_avx2_complex.c).
 * A vector FMA lane rounds exactly like fma(), so every loop below does
 * the contract's operations (shim/blas/canonical.h) element for
 * element: vectors run across independent lanes or outputs, never across
 * one sum.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "canonical_blas_avx2.h"
#include "blas/canonical_kernels.h"

/* From here on built for AVX2 + FMA. */
#include "canonical_blas_avx2_prelude.inc"

/* ---- hand-written loops --------------------------------------------------- */

/* |x|: clears the sign bit, exactly like fabs(). */
static inline __m256 abs_ps(__m256 x)
{
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
}

static inline __m256d abs_pd(__m256d x)
{
    return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
}

/* LANES kernels. The 16 lanes live in 2 (float) or 4 (double) registers,
 * register r holding lanes 8r.. (4r..): element e of a 16-block goes to
 * lane e, as the contract says. A tail shorter than 16 goes through the
 * plain-C loop, on the same lane sums. */

static void avx2_s_dot(int64_t n, const void *xv, const void *yv, int conj, void *accv)
{
    const float *x = xv, *y = yv;
    float *acc = accv;
    __m256 s0 = _mm256_loadu_ps(acc), s1 = _mm256_loadu_ps(acc + 8);
    int64_t i = 0;
    for (; n - i >= 16; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), s1);
    }
    _mm256_storeu_ps(acc, s0);
    _mm256_storeu_ps(acc + 8, s1);
    gen_s_dot(n - i, x + i, y + i, conj, acc);
}

static void avx2_d_dot(int64_t n, const void *xv, const void *yv, int conj, void *accv)
{
    const double *x = xv, *y = yv;
    double *acc = accv;
    __m256d s0 = _mm256_loadu_pd(acc), s1 = _mm256_loadu_pd(acc + 4);
    __m256d s2 = _mm256_loadu_pd(acc + 8), s3 = _mm256_loadu_pd(acc + 12);
    int64_t i = 0;
    for (; n - i >= 16; i += 16) {
        s0 = _mm256_fmadd_pd(_mm256_loadu_pd(x + i), _mm256_loadu_pd(y + i), s0);
        s1 = _mm256_fmadd_pd(_mm256_loadu_pd(x + i + 4), _mm256_loadu_pd(y + i + 4), s1);
        s2 = _mm256_fmadd_pd(_mm256_loadu_pd(x + i + 8), _mm256_loadu_pd(y + i + 8), s2);
        s3 = _mm256_fmadd_pd(_mm256_loadu_pd(x + i + 12), _mm256_loadu_pd(y + i + 12), s3);
    }
    _mm256_storeu_pd(acc, s0);
    _mm256_storeu_pd(acc + 4, s1);
    _mm256_storeu_pd(acc + 8, s2);
    _mm256_storeu_pd(acc + 12, s3);
    gen_d_dot(n - i, x + i, y + i, conj, acc);
}

/* dot_cols: the column dots of gemv 'T' side by side, sharing each load
 * of x; every column keeps its own 16 lane sums (registers as in dot),
 * so each is the chain dot would give it alone. Four float columns (8
 * chains) or two double columns (8 chains) at a time; the rest, and
 * tails, take the one-column loops. */
static void avx2_s_dot_cols(int64_t n, int ncols, const void *av, int64_t lda, const void *xv,
                            int conj, union canon_lanes *acc)
{
    const float *a = av, *x = xv;
    int c = 0;
    if (ncols == 4) {
        __m256 s[4][2];
        int64_t i = 0;
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            s[q][0] = _mm256_loadu_ps(acc[q].s);
            s[q][1] = _mm256_loadu_ps(acc[q].s + 8);
        }
        for (; n - i >= 16; i += 16) {
            const __m256 x0 = _mm256_loadu_ps(x + i), x1 = _mm256_loadu_ps(x + i + 8);
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++) {
                const float *col = a + q * lda + i;
                s[q][0] = _mm256_fmadd_ps(_mm256_loadu_ps(col), x0, s[q][0]);
                s[q][1] = _mm256_fmadd_ps(_mm256_loadu_ps(col + 8), x1, s[q][1]);
            }
        }
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            _mm256_storeu_ps(acc[q].s, s[q][0]);
            _mm256_storeu_ps(acc[q].s + 8, s[q][1]);
            gen_s_dot(n - i, a + q * lda + i, x + i, conj, &acc[q]);
        }
        c = 4;
    }
    for (; c < ncols; c++)
        avx2_s_dot(n, a + c * lda, x, conj, &acc[c]);
}

static void avx2_d_dot_cols(int64_t n, int ncols, const void *av, int64_t lda, const void *xv,
                            int conj, union canon_lanes *acc)
{
    const double *a = av, *x = xv;
    int c = 0;
    for (; ncols - c >= 2; c += 2) {
        __m256d s[2][4];
        int64_t i = 0;
        for (int q = 0; q < 2; q++)
            for (int r = 0; r < 4; r++)
                s[q][r] = _mm256_loadu_pd(acc[c + q].d + 4 * r);
        for (; n - i >= 16; i += 16) {
#pragma GCC unroll 4
            for (int r = 0; r < 4; r++) {
                const __m256d xr = _mm256_loadu_pd(x + i + 4 * r);
                s[0][r] = _mm256_fmadd_pd(_mm256_loadu_pd(a + c * lda + i + 4 * r), xr, s[0][r]);
                s[1][r] =
                    _mm256_fmadd_pd(_mm256_loadu_pd(a + (c + 1) * lda + i + 4 * r), xr, s[1][r]);
            }
        }
        for (int q = 0; q < 2; q++) {
            for (int r = 0; r < 4; r++)
                _mm256_storeu_pd(acc[c + q].d + 4 * r, s[q][r]);
            gen_d_dot(n - i, a + (c + q) * lda + i, x + i, conj, &acc[c + q]);
        }
    }
    for (; c < ncols; c++)
        avx2_d_dot(n, a + c * lda, x, conj, &acc[c]);
}

/* The complex column dots: one column at a time on the dot loops of
 * canonical_blas_avx2_complex.c (4 or 8 chains each already). */
static void avx2_c_dot_cols(int64_t n, int ncols, const void *av, int64_t lda, const void *x,
                            int conj, union canon_lanes *acc)
{
    for (int c = 0; c < ncols; c++)
        canon_avx2_c_dot(n, (const float *)av + 2 * c * lda, x, conj, &acc[c]);
}

static void avx2_z_dot_cols(int64_t n, int ncols, const void *av, int64_t lda, const void *x,
                            int conj, union canon_lanes *acc)
{
    for (int c = 0; c < ncols; c++)
        canon_avx2_z_dot(n, (const double *)av + 2 * c * lda, x, conj, &acc[c]);
}

static void avx2_s_asum(int64_t n, const void *xv, void *accv)
{
    const float *x = xv;
    float *acc = accv;
    __m256 s0 = _mm256_loadu_ps(acc), s1 = _mm256_loadu_ps(acc + 8);
    int64_t i = 0;
    for (; n - i >= 16; i += 16) {
        s0 = _mm256_add_ps(s0, abs_ps(_mm256_loadu_ps(x + i)));
        s1 = _mm256_add_ps(s1, abs_ps(_mm256_loadu_ps(x + i + 8)));
    }
    _mm256_storeu_ps(acc, s0);
    _mm256_storeu_ps(acc + 8, s1);
    gen_s_asum(n - i, x + i, acc);
}

static void avx2_d_asum(int64_t n, const void *xv, void *accv)
{
    const double *x = xv;
    double *acc = accv;
    __m256d s[4];
    int64_t i = 0;
    for (int r = 0; r < 4; r++)
        s[r] = _mm256_loadu_pd(acc + 4 * r);
    for (; n - i >= 16; i += 16)
        for (int r = 0; r < 4; r++)
            s[r] = _mm256_add_pd(s[r], abs_pd(_mm256_loadu_pd(x + i + 4 * r)));
    for (int r = 0; r < 4; r++)
        _mm256_storeu_pd(acc + 4 * r, s[r]);
    gen_d_asum(n - i, x + i, acc);
}

static void avx2_s_sumsq(int64_t n, const void *xv, const void *scalev, void *accv)
{
    const float *x = xv, *scale = scalev;
    float *acc = accv;
    const __m256 c1 = _mm256_set1_ps(scale[0]), c2 = _mm256_set1_ps(scale[1]);
    __m256 s0 = _mm256_loadu_ps(acc), s1 = _mm256_loadu_ps(acc + 8);
    int64_t i = 0;
    for (; n - i >= 16; i += 16) {
        const __m256 t0 = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), c1), c2);
        const __m256 t1 = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i + 8), c1), c2);
        s0 = _mm256_fmadd_ps(t0, t0, s0);
        s1 = _mm256_fmadd_ps(t1, t1, s1);
    }
    _mm256_storeu_ps(acc, s0);
    _mm256_storeu_ps(acc + 8, s1);
    gen_s_sumsq(n - i, x + i, scale, acc);
}

static void avx2_d_sumsq(int64_t n, const void *xv, const void *scalev, void *accv)
{
    const double *x = xv, *scale = scalev;
    double *acc = accv;
    const __m256d c1 = _mm256_set1_pd(scale[0]), c2 = _mm256_set1_pd(scale[1]);
    __m256d s[4];
    int64_t i = 0;
    for (int r = 0; r < 4; r++)
        s[r] = _mm256_loadu_pd(acc + 4 * r);
    for (; n - i >= 16; i += 16)
        for (int r = 0; r < 4; r++) {
            const __m256d t = _mm256_mul_pd(_mm256_mul_pd(_mm256_loadu_pd(x + i + 4 * r), c1), c2);
            s[r] = _mm256_fmadd_pd(t, t, s[r]);
        }
    for (int r = 0; r < 4; r++)
        _mm256_storeu_pd(acc + 4 * r, s[r]);
    gen_d_sumsq(n - i, x + i, scale, acc);
}

/* max is exact and order-free; vmaxps returns its second operand when the
 * first is NaN, so max(|x|, m) skips NaN as the contract says. */
static void avx2_s_amax(int64_t n, const void *xv, void *mv)
{
    const float *x = xv;
    __m256 m0 = _mm256_setzero_ps(), m1 = m0;
    int64_t i = 0;
    for (; n - i >= 16; i += 16) {
        m0 = _mm256_max_ps(abs_ps(_mm256_loadu_ps(x + i)), m0);
        m1 = _mm256_max_ps(abs_ps(_mm256_loadu_ps(x + i + 8)), m1);
    }
    float lanes[16], m;
    _mm256_storeu_ps(lanes, m0);
    _mm256_storeu_ps(lanes + 8, m1);
    gen_s_amax(n - i, x + i, &m);
    for (int l = 0; l < 16; l++)
        m = lanes[l] > m ? lanes[l] : m;
    *(float *)mv = m;
}

static void avx2_d_amax(int64_t n, const void *xv, void *mv)
{
    const double *x = xv;
    __m256d m0 = _mm256_setzero_pd(), m1 = m0;
    int64_t i = 0;
    for (; n - i >= 8; i += 8) {
        m0 = _mm256_max_pd(abs_pd(_mm256_loadu_pd(x + i)), m0);
        m1 = _mm256_max_pd(abs_pd(_mm256_loadu_pd(x + i + 4)), m1);
    }
    double lanes[8], m;
    _mm256_storeu_pd(lanes, m0);
    _mm256_storeu_pd(lanes + 4, m1);
    gen_d_amax(n - i, x + i, &m);
    for (int l = 0; l < 8; l++)
        m = lanes[l] > m ? lanes[l] : m;
    *(double *)mv = m;
}

/* Elementwise: y_i = fma(alpha, x_i, y_i) and x_i = alpha * x_i, 8 or 4
 * elements per instruction; strided calls take the plain-C loop. */
static void avx2_s_axpy(int64_t n, const void *alphav, const void *xv, int64_t incx, void *yv,
                        int64_t incy)
{
    const float *x = xv;
    float *y = yv;
    int64_t i = 0;
    if (incx == 1 && incy == 1) {
        const __m256 a = _mm256_set1_ps(*(const float *)alphav);
        for (; n - i >= 16; i += 16) {
            _mm256_storeu_ps(y + i,
                             _mm256_fmadd_ps(a, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
            _mm256_storeu_ps(y + i + 8, _mm256_fmadd_ps(a, _mm256_loadu_ps(x + i + 8),
                                                        _mm256_loadu_ps(y + i + 8)));
        }
    }
    gen_s_axpy(n - i, alphav, x + i * incx, incx, y + i * incy, incy);
}

static void avx2_d_axpy(int64_t n, const void *alphav, const void *xv, int64_t incx, void *yv,
                        int64_t incy)
{
    const double *x = xv;
    double *y = yv;
    int64_t i = 0;
    if (incx == 1 && incy == 1) {
        const __m256d a = _mm256_set1_pd(*(const double *)alphav);
        for (; n - i >= 8; i += 8) {
            _mm256_storeu_pd(y + i,
                             _mm256_fmadd_pd(a, _mm256_loadu_pd(x + i), _mm256_loadu_pd(y + i)));
            _mm256_storeu_pd(y + i + 4, _mm256_fmadd_pd(a, _mm256_loadu_pd(x + i + 4),
                                                        _mm256_loadu_pd(y + i + 4)));
        }
    }
    gen_d_axpy(n - i, alphav, x + i * incx, incx, y + i * incy, incy);
}

static void avx2_s_scal(int64_t n, const void *alphav, void *xv, int64_t incx)
{
    float *x = xv;
    int64_t i = 0;
    if (incx == 1) {
        const __m256 a = _mm256_set1_ps(*(const float *)alphav);
        for (; n - i >= 8; i += 8)
            _mm256_storeu_ps(x + i, _mm256_mul_ps(a, _mm256_loadu_ps(x + i)));
    }
    gen_s_scal(n - i, alphav, x + i * incx, incx);
}

static void avx2_d_scal(int64_t n, const void *alphav, void *xv, int64_t incx)
{
    double *x = xv;
    int64_t i = 0;
    if (incx == 1) {
        const __m256d a = _mm256_set1_pd(*(const double *)alphav);
        for (; n - i >= 4; i += 4)
            _mm256_storeu_pd(x + i, _mm256_mul_pd(a, _mm256_loadu_pd(x + i)));
    }
    gen_d_scal(n - i, alphav, x + i * incx, incx);
}

/* gemv column sweep: 8 columns at a time, each vector of 8 (4) sums taking
 * its 8 products in increasing j before it is stored back; rows past the
 * last full vector and columns past the last group of 8 take the plain-C
 * loop, still in increasing j per sum. */
static void avx2_s_gemv_n(int64_t m, int64_t n, const void *av, int64_t lda, int conj,
                          const void *xv, int64_t incx, void *sv)
{
    const float *a = av, *x = xv;
    float *s = sv;
    const int64_t mv = m & ~(int64_t)7;
    int64_t j = 0;
    for (; n - j >= 8; j += 8) {
        const float *c = a + j * lda;
        __m256 xj[8];
#pragma GCC unroll 8
        for (int q = 0; q < 8; q++)
            xj[q] = _mm256_set1_ps(x[(j + q) * incx]);
        for (int64_t i = 0; i < mv; i += 8) {
            __m256 t = _mm256_loadu_ps(s + i);
#pragma GCC unroll 8
            for (int q = 0; q < 8; q++)
                t = _mm256_fmadd_ps(_mm256_loadu_ps(c + q * lda + i), xj[q], t);
            _mm256_storeu_ps(s + i, t);
        }
        gen_s_gemv_n(m - mv, 8, c + mv, lda, conj, x + j * incx, incx, s + mv);
    }
    gen_s_gemv_n(m, n - j, a + j * lda, lda, conj, x + j * incx, incx, s);
}

static void avx2_d_gemv_n(int64_t m, int64_t n, const void *av, int64_t lda, int conj,
                          const void *xv, int64_t incx, void *sv)
{
    const double *a = av, *x = xv;
    double *s = sv;
    const int64_t mv = m & ~(int64_t)3;
    int64_t j = 0;
    for (; n - j >= 8; j += 8) {
        const double *c = a + j * lda;
        __m256d xj[8];
#pragma GCC unroll 8
        for (int q = 0; q < 8; q++)
            xj[q] = _mm256_set1_pd(x[(j + q) * incx]);
        for (int64_t i = 0; i < mv; i += 4) {
            __m256d t = _mm256_loadu_pd(s + i);
#pragma GCC unroll 8
            for (int q = 0; q < 8; q++)
                t = _mm256_fmadd_pd(_mm256_loadu_pd(c + q * lda + i), xj[q], t);
            _mm256_storeu_pd(s + i, t);
        }
        gen_d_gemv_n(m - mv, 8, c + mv, lda, conj, x + j * incx, incx, s + mv);
    }
    gen_d_gemv_n(m, n - j, a + j * lda, lda, conj, x + j * incx, incx, s);
}

/* gemv column dots: one register holds the sums of 8 (4) columns. A block
 * of 4 rows of those columns is transposed in registers, so that each
 * vfmadd adds one row's products to all 8 (4) sums, rows in increasing i.
 * Two such groups run side by side to hide the FMA latency, each using a
 * whole cache line of every column per step. When the columns share cache
 * sets (a leading dimension that is a multiple of 1024 floats), the second
 * group runs SKEW steps behind the first, so the two never crowd one set;
 * the sums are independent, so this changes no order. Rows past the last
 * full line are added one at a time (still in increasing i), columns past
 * the last group take the plain-C loop. */

/* [lo[0..3] | hi[0..3]] */
static inline __m256 load_halves(const float *lo, const float *hi)
{
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(lo)), _mm_loadu_ps(hi), 1);
}

/* In-lane 4x4 transpose: w[c] = [col c, rows 0-3 | col c+4, rows 0-3]
 * becomes w[r] = [row r, cols 0-3 | row r, cols 4-7]. */
static inline void transpose4x4_lanes(__m256 w[4])
{
    const __m256 t0 = _mm256_unpacklo_ps(w[0], w[1]), t1 = _mm256_unpackhi_ps(w[0], w[1]);
    const __m256 t2 = _mm256_unpacklo_ps(w[2], w[3]), t3 = _mm256_unpackhi_ps(w[2], w[3]);
    w[0] = _mm256_shuffle_ps(t0, t2, 0x44);
    w[1] = _mm256_shuffle_ps(t0, t2, 0xee);
    w[2] = _mm256_shuffle_ps(t1, t3, 0x44);
    w[3] = _mm256_shuffle_ps(t1, t3, 0xee);
}

/* Offsets of the 8 columns of a group: col[c] = c * lda. */
struct cols8 {
    int64_t l1, l2, l3, l4, l5, l6, l7;
};

/* Adds 16 rows of 8 columns (row 0 at p) to their sums. */
ALWAYS_INLINE __m256 s_step16(__m256 acc, const float *p, const struct cols8 *o, const float *x,
                              int64_t incx)
{
#pragma GCC unroll 4
    for (int h = 0; h < 16; h += 4) {
        const float *ph = p + h;
        __m256 w[4] = {load_halves(ph, ph + o->l4), load_halves(ph + o->l1, ph + o->l5),
                       load_halves(ph + o->l2, ph + o->l6), load_halves(ph + o->l3, ph + o->l7)};
        transpose4x4_lanes(w);
#pragma GCC unroll 4
        for (int r = 0; r < 4; r++)
            acc = _mm256_fmadd_ps(w[r], _mm256_broadcast_ss(x + (h + r) * incx), acc);
    }
    return acc;
}

/* Adds rows from .. m-1 (the part short of a line) of 8 columns, one row
 * at a time. */
static inline __m256 s_rows(__m256 acc, int64_t from, int64_t m, const float *c,
                            const struct cols8 *o, const float *x, int64_t incx)
{
    for (int64_t i = from; i < m; i++) {
        const float *r = c + i;
        const __m256 row = _mm256_setr_ps(r[0], r[o->l1], r[o->l2], r[o->l3], r[o->l4], r[o->l5],
                                          r[o->l6], r[o->l7]);
        acc = _mm256_fmadd_ps(row, _mm256_set1_ps(x[i * incx]), acc);
    }
    return acc;
}

#define SKEW 16

static void avx2_s_gemv_t(int64_t m, int64_t n, const void *av, int64_t lda, int conj,
                          const void *xv, int64_t incx, void *sv)
{
    const float *a = av, *x = xv;
    float *s = sv;
    const struct cols8 o = {lda, 2 * lda, 3 * lda, 4 * lda, 5 * lda, 6 * lda, 7 * lda};
    const int64_t steps = m / 16, x16 = 16 * incx;
    const int64_t skew = lda % 1024 == 0 ? (steps < SKEW ? steps : SKEW) : 0;
    int64_t j = 0;
    for (; n - j >= 16; j += 16) {
        const float *c0 = a + j * lda, *c1 = c0 + 8 * lda;
        __m256 s0 = _mm256_loadu_ps(s + j), s1 = _mm256_loadu_ps(s + j + 8);
        int64_t t = 0;
        for (; t < skew; t++)
            s0 = s_step16(s0, c0 + 16 * t, &o, x + t * x16, incx);
        for (; t < steps; t++) {
            s0 = s_step16(s0, c0 + 16 * t, &o, x + t * x16, incx);
            s1 = s_step16(s1, c1 + 16 * (t - skew), &o, x + (t - skew) * x16, incx);
        }
        for (t = steps - skew; t < steps; t++)
            s1 = s_step16(s1, c1 + 16 * t, &o, x + t * x16, incx);
        s0 = s_rows(s0, 16 * steps, m, c0, &o, x, incx);
        s1 = s_rows(s1, 16 * steps, m, c1, &o, x, incx);
        _mm256_storeu_ps(s + j, s0);
        _mm256_storeu_ps(s + j + 8, s1);
    }
    for (; n - j >= 8; j += 8) {
        const float *c0 = a + j * lda;
        __m256 s0 = _mm256_loadu_ps(s + j);
        for (int64_t t = 0; t < steps; t++)
            s0 = s_step16(s0, c0 + 16 * t, &o, x + t * x16, incx);
        _mm256_storeu_ps(s + j, s_rows(s0, 16 * steps, m, c0, &o, x, incx));
    }
    gen_s_gemv_t(m, n - j, a + j * lda, lda, conj, x, incx, s + j);
}

/* 4x4 doubles: w[c] = column c, rows 0-3, becomes w[r] = row r. */
static inline void transpose4x4_pd(__m256d w[4])
{
    const __m256d t0 = _mm256_unpacklo_pd(w[0], w[1]), t1 = _mm256_unpackhi_pd(w[0], w[1]);
    const __m256d t2 = _mm256_unpacklo_pd(w[2], w[3]), t3 = _mm256_unpackhi_pd(w[2], w[3]);
    w[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    w[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    w[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    w[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

ALWAYS_INLINE void d_gemv_t_groups(int G, int64_t m, const double *c, int64_t lda, const double *x,
                                   int64_t incx, double *s)
{
    const int64_t l1 = lda, l2 = 2 * lda, l3 = 3 * lda, l4 = 4 * lda;
    const int64_t mb = m & ~(int64_t)7;
    const double *p = c;
    __m256d acc[2];
#pragma GCC unroll 2
    for (int q = 0; q < G; q++)
        acc[q] = _mm256_loadu_pd(s + 4 * q);
    for (int64_t i = 0; i < mb; i += 8, p += 8) {
#pragma GCC unroll 2
        for (int q = 0; q < G; q++) {
#pragma GCC unroll 2
            for (int h = 0; h < 8; h += 4) {
                const double *ph = p + q * l4 + h;
                __m256d w[4] = {_mm256_loadu_pd(ph), _mm256_loadu_pd(ph + l1),
                                _mm256_loadu_pd(ph + l2), _mm256_loadu_pd(ph + l3)};
                transpose4x4_pd(w);
#pragma GCC unroll 4
                for (int r = 0; r < 4; r++)
                    acc[q] =
                        _mm256_fmadd_pd(w[r], _mm256_broadcast_sd(x + (i + h + r) * incx), acc[q]);
            }
        }
    }
    for (int64_t i = mb; i < m; i++) {
        const __m256d xi = _mm256_set1_pd(x[i * incx]);
#pragma GCC unroll 2
        for (int q = 0; q < G; q++) {
            const double *cq = c + q * l4 + i;
            const __m256d row = _mm256_setr_pd(cq[0], cq[l1], cq[l2], cq[l3]);
            acc[q] = _mm256_fmadd_pd(row, xi, acc[q]);
        }
    }
#pragma GCC unroll 2
    for (int q = 0; q < G; q++)
        _mm256_storeu_pd(s + 4 * q, acc[q]);
}

static void avx2_d_gemv_t(int64_t m, int64_t n, const void *av, int64_t lda, int conj,
                          const void *xv, int64_t incx, void *sv)
{
    const double *a = av, *x = xv;
    double *s = sv;
    int64_t j = 0;
    for (; n - j >= 8; j += 8)
        d_gemv_t_groups(2, m, a + j * lda, lda, x, incx, s + j);
    for (; n - j >= 4; j += 4)
        d_gemv_t_groups(1, m, a + j * lda, lda, x, incx, s + j);
    gen_d_gemv_t(m, n - j, a + j * lda, lda, conj, x, incx, s + j);
}

/* A real rank-1 column update is an axpy: fma(x_i, t, a_i) and
 * fma(t, x_i, a_i) are the same rounding of the same product. */
static void avx2_s_ger_col(int64_t m, const void *x, int64_t incx, int conj, const void *t, void *a)
{
    (void)conj;
    avx2_s_axpy(m, t, x, incx, a, 1);
}

static void avx2_d_ger_col(int64_t m, const void *x, int64_t incx, int conj, const void *t, void *a)
{
    (void)conj;
    avx2_d_axpy(m, t, x, incx, a, 1);
}

/* The real types: hand-written loops, and the plain-C sequential dot (a
 * single chain: nothing to vectorize). */
#define REAL_KERNELS(p, g)                                                                         \
    {                                                                                              \
        .dot = p##dot, .dot_cols = p##dot_cols, .asum = p##asum, .sumsq = p##sumsq,                \
        .amax = p##amax, .axpy = p##axpy, .scal = p##scal, .gemv_n = p##gemv_n,                    \
        .gemv_t = p##gemv_t, .ger_col = p##ger_col, .dot_seq = g##dot_seq,                         \
    }
/* The complex types: hand-written dot and gemv loops, plain C for the rest. */
#define COMPLEX_KERNELS(p, g, dc)                                                                  \
    {                                                                                              \
        .dot = p##dot, .dot_cols = dc, .axpy = g##axpy, .scal = g##scal, .gemv_n = p##gemv_n,     \
        .gemv_t = p##gemv_t, .ger_col = g##ger_col, .dot_seq = g##dot_seq,                         \
    }

const struct canon_blas_isa canon_blas_avx2_kernels = {
    .name = "avx2",
    .t = {
        [CANON_S] = REAL_KERNELS(avx2_s_, gen_s_),
        [CANON_D] = REAL_KERNELS(avx2_d_, gen_d_),
        [CANON_C] = COMPLEX_KERNELS(canon_avx2_c_, gen_c_, avx2_c_dot_cols),
        [CANON_Z] = COMPLEX_KERNELS(canon_avx2_z_, gen_z_, avx2_z_dot_cols),
    },
};

#if defined(__clang__)
#pragma clang attribute pop
#endif
