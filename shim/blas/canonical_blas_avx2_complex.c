/* The AVX2 + FMA path of the canonical BLAS, complex types: the
 * hand-written dot and gemv loops of cdotu/cdotc/zdotu/zdotc and
 * cgemv/zgemv, which canonical_blas_avx2.c puts in its kernel table
 * (declared in canonical_blas_avx2.h). Built for AVX2 + FMA by a target
 * pragma like that file, and used only where the CPU has both; the tails
 * run the plain-C kernels of canonical_blas_generic.inc. Every loop does
 * the contract's operations (shim/blas/canonical.h) element for
 * element, as that file explains.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "canonical_blas_avx2.h"
#include "blas/canonical_kernels.h"

/* From here on built for AVX2 + FMA. */
#include "canonical_blas_avx2_prelude.inc"

/* ---- complex ---------------------------------------------------------------
 * Sums stay interleaved {re, im}. One CMAC of u into s against v is two
 * vector FMAs: s += [u.re, u.re] * [v.re, v.im], then s += [u.im, u.im] *
 * [-v.im, v.re]; lane by lane that is s.re = fma(u.re, v.re, s.re), then
 * fma(u.im, -v.im, s.re) (the same rounding as fma(-u.im, v.im, s.re)),
 * and s.im = fma(u.re, v.im, s.im), then fma(u.im, v.re, s.im): the
 * contract's four steps in its order. Conjugating u negates the other
 * factor of the second FMA instead: [v.im, -v.re]. */

/* Sign masks: negate the even (re) or the odd (im) positions. */
static inline __m256 neg_even_ps(void)
{
    return _mm256_setr_ps(-0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f);
}

static inline __m256 neg_odd_ps(void)
{
    return _mm256_setr_ps(0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f);
}

static inline __m256d neg_even_pd(void)
{
    return _mm256_setr_pd(-0.0, 0.0, -0.0, 0.0);
}

static inline __m256d neg_odd_pd(void)
{
    return _mm256_setr_pd(0.0, -0.0, 0.0, -0.0);
}

/* s + u*v for 4 (2) interleaved pairs; sw is v with re and im swapped and
 * signed as above. */
static inline __m256 cmac_ps(__m256 s, __m256 u, __m256 v, __m256 sw)
{
    s = _mm256_fmadd_ps(_mm256_moveldup_ps(u), v, s);
    return _mm256_fmadd_ps(_mm256_movehdup_ps(u), sw, s);
}

static inline __m256d cmac_pd(__m256d s, __m256d u, __m256d v, __m256d sw)
{
    s = _mm256_fmadd_pd(_mm256_movedup_pd(u), v, s);
    return _mm256_fmadd_pd(_mm256_permute_pd(u, 0xf), sw, s);
}

/* LANES dot: register k holds lanes 4k .. 4k+3 (2k, 2k+1 for double). */
void canon_avx2_c_dot(int64_t n, const void *xv, const void *yv, int conj, void *accv)
{
    const float *x = xv, *y = yv;
    float *acc = accv;
    const __m256 sign = conj ? neg_odd_ps() : neg_even_ps();
    __m256 s[4];
    int64_t i = 0;
    for (int k = 0; k < 4; k++)
        s[k] = _mm256_loadu_ps(acc + 8 * k);
    for (; n - i >= 16; i += 16)
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) {
            const __m256 xk = _mm256_loadu_ps(x + 2 * i + 8 * k);
            const __m256 yk = _mm256_loadu_ps(y + 2 * i + 8 * k);
            const __m256 sw = _mm256_xor_ps(_mm256_permute_ps(yk, 0xb1), sign);
            s[k] = cmac_ps(s[k], xk, yk, sw);
        }
    for (int k = 0; k < 4; k++)
        _mm256_storeu_ps(acc + 8 * k, s[k]);
    gen_c_dot(n - i, x + 2 * i, y + 2 * i, conj, acc);
}

void canon_avx2_z_dot(int64_t n, const void *xv, const void *yv, int conj, void *accv)
{
    const double *x = xv, *y = yv;
    double *acc = accv;
    const __m256d sign = conj ? neg_odd_pd() : neg_even_pd();
    __m256d s[8];
    int64_t i = 0;
    for (int k = 0; k < 8; k++)
        s[k] = _mm256_loadu_pd(acc + 4 * k);
    for (; n - i >= 16; i += 16)
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            const __m256d xk = _mm256_loadu_pd(x + 2 * i + 4 * k);
            const __m256d yk = _mm256_loadu_pd(y + 2 * i + 4 * k);
            const __m256d sw = _mm256_xor_pd(_mm256_permute_pd(yk, 0x5), sign);
            s[k] = cmac_pd(s[k], xk, yk, sw);
        }
    for (int k = 0; k < 8; k++)
        _mm256_storeu_pd(acc + 4 * k, s[k]);
    gen_z_dot(n - i, x + 2 * i, y + 2 * i, conj, acc);
}

/* Column sweep: here u is the matrix element (conj: conjugated) and v is
 * x_j, so the swapped factor is built once per column: [-x.im, x.re], or
 * [x.im, -x.re] for conj(A). Four columns per pass over the sums. */
void canon_avx2_c_gemv_n(int64_t m, int64_t n, const void *av, int64_t lda, int conj,
                         const void *xv, int64_t incx, void *sv)
{
    const float *a = av, *x = xv;
    float *s = sv;
    const int64_t mv = m & ~(int64_t)3;
    int64_t j = 0;
    for (; n - j >= 4; j += 4) {
        const float *c = a + 2 * j * lda;
        __m256 v[4], sw[4];
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            const float xr = x[2 * (j + q) * incx], xi = x[2 * (j + q) * incx + 1];
            v[q] = _mm256_setr_ps(xr, xi, xr, xi, xr, xi, xr, xi);
            sw[q] = conj ? _mm256_setr_ps(xi, -xr, xi, -xr, xi, -xr, xi, -xr)
                         : _mm256_setr_ps(-xi, xr, -xi, xr, -xi, xr, -xi, xr);
        }
        for (int64_t i = 0; i < mv; i += 4) {
            __m256 t = _mm256_loadu_ps(s + 2 * i);
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++)
                t = cmac_ps(t, _mm256_loadu_ps(c + 2 * (q * lda + i)), v[q], sw[q]);
            _mm256_storeu_ps(s + 2 * i, t);
        }
        gen_c_gemv_n(m - mv, 4, c + 2 * mv, lda, conj, x + 2 * j * incx, incx, s + 2 * mv);
    }
    gen_c_gemv_n(m, n - j, a + 2 * j * lda, lda, conj, x + 2 * j * incx, incx, s);
}

void canon_avx2_z_gemv_n(int64_t m, int64_t n, const void *av, int64_t lda, int conj,
                         const void *xv, int64_t incx, void *sv)
{
    const double *a = av, *x = xv;
    double *s = sv;
    const int64_t mv = m & ~(int64_t)1;
    int64_t j = 0;
    for (; n - j >= 4; j += 4) {
        const double *c = a + 2 * j * lda;
        __m256d v[4], sw[4];
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            const double xr = x[2 * (j + q) * incx], xi = x[2 * (j + q) * incx + 1];
            v[q] = _mm256_setr_pd(xr, xi, xr, xi);
            sw[q] = conj ? _mm256_setr_pd(xi, -xr, xi, -xr) : _mm256_setr_pd(-xi, xr, -xi, xr);
        }
        for (int64_t i = 0; i < mv; i += 2) {
            __m256d t = _mm256_loadu_pd(s + 2 * i);
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++)
                t = cmac_pd(t, _mm256_loadu_pd(c + 2 * (q * lda + i)), v[q], sw[q]);
            _mm256_storeu_pd(s + 2 * i, t);
        }
        gen_z_gemv_n(m - mv, 4, c + 2 * mv, lda, conj, x + 2 * j * incx, incx, s + 2 * mv);
    }
    gen_z_gemv_n(m, n - j, a + 2 * j * lda, lda, conj, x + 2 * j * incx, incx, s);
}

/* Column dots: one register holds the sums of 4 (2) columns; each row
 * gathers those columns' elements of row i (one pair each) and adds
 * u = A_ij against v = x_i, rows in increasing i. Four registers run side
 * by side to hide the FMA latency. Here the swapped factor comes from the
 * element: s += [a.re, a.re] * [x.re, x.im] + [a.im, a.im] * [-x.im, x.re]
 * is the same as the sweep's, with conj(A) negating a.im's factor. */
void canon_avx2_c_gemv_t(int64_t m, int64_t n, const void *av, int64_t lda, int conj,
                         const void *xv, int64_t incx, void *sv)
{
    const float *a = av, *x = xv;
    float *s = sv;
    int64_t j = 0;
    for (; n - j >= 16; j += 16) {
        const float *c = a + 2 * j * lda;
        __m256 acc[4];
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++)
            acc[g] = _mm256_loadu_ps(s + 2 * (j + 4 * g));
        for (int64_t i = 0; i < m; i++) {
            const float xr = x[2 * i * incx], xi = x[2 * i * incx + 1];
            const __m256 v = _mm256_setr_ps(xr, xi, xr, xi, xr, xi, xr, xi);
            const __m256 sw = conj ? _mm256_setr_ps(xi, -xr, xi, -xr, xi, -xr, xi, -xr)
                                   : _mm256_setr_ps(-xi, xr, -xi, xr, -xi, xr, -xi, xr);
#pragma GCC unroll 4
            for (int g = 0; g < 4; g++) {
                const float *e = c + 2 * (4 * g * lda + i);
                __m128 p01 = _mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)e);
                p01 = _mm_loadh_pi(p01, (const __m64 *)(e + 2 * lda));
                __m128 p23 = _mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(e + 4 * lda));
                p23 = _mm_loadh_pi(p23, (const __m64 *)(e + 6 * lda));
                const __m256 u = _mm256_insertf128_ps(_mm256_castps128_ps256(p01), p23, 1);
                acc[g] = cmac_ps(acc[g], u, v, sw);
            }
        }
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++)
            _mm256_storeu_ps(s + 2 * (j + 4 * g), acc[g]);
    }
    gen_c_gemv_t(m, n - j, a + 2 * j * lda, lda, conj, x, incx, s + 2 * j);
}

void canon_avx2_z_gemv_t(int64_t m, int64_t n, const void *av, int64_t lda, int conj,
                         const void *xv, int64_t incx, void *sv)
{
    const double *a = av, *x = xv;
    double *s = sv;
    int64_t j = 0;
    for (; n - j >= 8; j += 8) {
        const double *c = a + 2 * j * lda;
        __m256d acc[4];
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++)
            acc[g] = _mm256_loadu_pd(s + 2 * (j + 2 * g));
        for (int64_t i = 0; i < m; i++) {
            const double xr = x[2 * i * incx], xi = x[2 * i * incx + 1];
            const __m256d v = _mm256_setr_pd(xr, xi, xr, xi);
            const __m256d sw = conj ? _mm256_setr_pd(xi, -xr, xi, -xr)
                                    : _mm256_setr_pd(-xi, xr, -xi, xr);
#pragma GCC unroll 4
            for (int g = 0; g < 4; g++) {
                const double *e = c + 2 * (2 * g * lda + i);
                const __m256d u = _mm256_insertf128_pd(
                    _mm256_castpd128_pd256(_mm_loadu_pd(e)), _mm_loadu_pd(e + 2 * lda), 1);
                acc[g] = cmac_pd(acc[g], u, v, sw);
            }
        }
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++)
            _mm256_storeu_pd(s + 2 * (j + 2 * g), acc[g]);
    }
    gen_z_gemv_t(m, n - j, a + 2 * j * lda, lda, conj, x, incx, s + 2 * j);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif
