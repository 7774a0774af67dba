/* The slow, obvious reference of the canonical BLAS contract that the
 * test_canonical_l1, _l2, _l3_ref, _l3_tri and _semantics programs check the
 * kernels against (shim/blas/canonical.h): values of any type held exactly
 * in doubles, the contract's operations rounded once each, buffers,
 * element indexing, the lanes-and-chunks order of the reductions, op(A)
 * and triangles, and the ISA loop. Included by each of them (static
 * inline, so each program keeps only what it uses).
 */
#ifndef DETSHIM_TESTS_CANONICAL_REF_H
#define DETSHIM_TESTS_CANONICAL_REF_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four above first */
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avx_state.h"
#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* ---- values of any type ------------------------------------------------- */

enum { TS, TD, TC, TZ, NTYPES };
static __attribute__((unused)) const size_t tsize[NTYPES] = {4, 8, 8, 16};
static __attribute__((unused)) const char tname[NTYPES] = {'s', 'd', 'c', 'z'};

static inline int cplx(int t)
{
    return t == TC || t == TZ;
}

static inline int isf(int t)
{
    return t == TS || t == TC;
}

/* Base elements (floats or doubles) per element. */
static inline int64_t width(int t)
{
    return cplx(t) ? 2 : 1;
}

/* An element of any type, held exactly in doubles (im is 0 for real). */
typedef struct {
    double re, im;
} cx;

static inline cx ld(int t, const void *p, int64_t i)
{
    cx v = {0, 0};
    if (isf(t)) {
        v.re = ((const float *)p)[i * width(t)];
        if (cplx(t))
            v.im = ((const float *)p)[i * 2 + 1];
    } else {
        v.re = ((const double *)p)[i * width(t)];
        if (cplx(t))
            v.im = ((const double *)p)[i * 2 + 1];
    }
    return v;
}

static inline void st(int t, void *p, int64_t i, cx v)
{
    if (isf(t)) {
        ((float *)p)[i * width(t)] = (float)v.re;
        if (cplx(t))
            ((float *)p)[i * 2 + 1] = (float)v.im;
    } else {
        ((double *)p)[i * width(t)] = v.re;
        if (cplx(t))
            ((double *)p)[i * 2 + 1] = v.im;
    }
}

/* The contract's operations in type t: each rounds once to t's precision. */
static inline double rfma(int t, double a, double b, double c)
{
    return isf(t) ? (double)fmaf((float)a, (float)b, (float)c) : fma(a, b, c);
}

static inline double rmul(int t, double a, double b)
{
    return isf(t) ? (double)((float)a * (float)b) : a * b;
}

static inline double radd(int t, double a, double b)
{
    return isf(t) ? (double)((float)a + (float)b) : a + b;
}

static inline double rdiv(int t, double a, double b)
{
    return isf(t) ? (double)((float)a / (float)b) : a / b;
}

static inline cx conj_(cx v)
{
    v.im = -v.im;
    return v;
}

static inline cx neg(cx v)
{
    v.re = -v.re;
    v.im = -v.im;
    return v;
}

static inline int is_zero(cx v)
{
    return v.re == 0 && v.im == 0;
}

static inline int is_one(cx v)
{
    return v.re == 1 && v.im == 0;
}

/* CMAC: s + u*v in the contract's four steps (real: one fma). */
static inline cx cmac(int t, cx s, cx u, cx v)
{
    s.re = rfma(t, u.re, v.re, s.re);
    if (!cplx(t))
        return s;
    s.re = rfma(t, -u.im, v.im, s.re);
    s.im = rfma(t, u.re, v.im, s.im);
    s.im = rfma(t, u.im, v.re, s.im);
    return s;
}

/* CMUL */
static inline cx cmul(int t, cx u, cx v)
{
    cx r = {rmul(t, u.re, v.re), 0};
    if (!cplx(t))
        return r;
    r.im = rmul(t, u.re, v.im);
    r.re = rfma(t, -u.im, v.im, r.re);
    r.im = rfma(t, u.im, v.re, r.im);
    return r;
}

static inline cx cadd(int t, cx s, cx v)
{
    s.re = radd(t, s.re, v.re);
    s.im = cplx(t) ? radd(t, s.im, v.im) : 0;
    return s;
}

/* CDIV (real: s / d) */
static inline cx cdiv(int t, cx s, cx d)
{
    cx q;
    if (!cplx(t)) {
        q.re = rdiv(t, s.re, d.re);
        q.im = 0;
        return q;
    }
    if (fabs(d.re) >= fabs(d.im)) {
        const double r = rdiv(t, d.im, d.re), e = rfma(t, d.im, r, d.re);
        q.re = rdiv(t, rfma(t, s.im, r, s.re), e);
        q.im = rdiv(t, rfma(t, -s.re, r, s.im), e);
    } else {
        const double r = rdiv(t, d.re, d.im), e = rfma(t, d.re, r, d.im);
        q.re = rdiv(t, rfma(t, s.re, r, s.im), e);
        q.im = rdiv(t, rfma(t, s.im, r, -s.re), e);
    }
    return q;
}

/* AB for a sum s (alpha != 0) and the alpha == 0 rule. */
static inline cx ab(int t, cx alpha, cx beta, cx s, cx c)
{
    if (is_zero(beta))
        return cmul(t, alpha, s);
    return cmac(t, cmul(t, beta, c), alpha, s);
}

static inline cx ab0(int t, cx beta, cx c)
{
    const cx zero = {0, 0};
    if (is_one(beta))
        return c;
    return is_zero(beta) ? zero : cmul(t, beta, c);
}

/* ---- buffers ---------------------------------------------------------------- */

static __attribute__((unused)) uint64_t rng_state = 0x9e3779b97f4a7c15u;

static inline double uniform(void) /* in [-1, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * 0x1p-52 - 1.0;
}

/* n elements of random values in [-1, 1) (exact in the type). */
static inline void *rand_buf(int t, int64_t n)
{
    const int64_t nb = (n > 0 ? n : 1) * width(t);
    void *p = malloc((size_t)nb * (isf(t) ? 4 : 8));
    assert_non_null(p);
    for (int64_t i = 0; i < nb; i++) {
        if (isf(t))
            ((float *)p)[i] = (float)uniform();
        else
            ((double *)p)[i] = uniform();
    }
    return p;
}

static inline void *dup_buf(int t, const void *p, int64_t n)
{
    const size_t bytes = (size_t)(n > 0 ? n : 1) * tsize[t];
    void *q = malloc(bytes);
    assert_non_null(q);
    memcpy(q, p, bytes);
    return q;
}

/* What a check is about, printed when it fails. */
static __attribute__((unused)) char what[256];

static inline void describe(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
}

/* The two buffers of n elements hold the same bits (any NaN equals any
 * NaN); and the call that made got returned with the upper halves of the
 * vector registers clean (avx_state.h): the reference, plain code, leaves
 * them as it found them. */
static inline void assert_same(int t, const void *got, const void *want, int64_t n)
{
    const int64_t nb = (n > 0 ? n : 1) * width(t);
    if (avx_upper_left_dirty()) {
        print_error("%s [%s]: returned with the upper halves of the vector registers in use "
                    "(no vzeroupper)\n", what, canon_blas_isa());
        fail();
    }
    for (int64_t i = 0; i < nb; i++) {
        int same;
        double g, w;
        if (isf(t)) {
            const float x = ((const float *)got)[i], y = ((const float *)want)[i];
            same = memcmp(&x, &y, sizeof x) == 0 || (isnan(x) && isnan(y));
            g = x;
            w = y;
        } else {
            const double x = ((const double *)got)[i], y = ((const double *)want)[i];
            same = memcmp(&x, &y, sizeof x) == 0 || (isnan(x) && isnan(y));
            g = x;
            w = y;
        }
        if (!same) {
            print_error("%s [%s]: base element %lld is %a, the contract says %a\n", what,
                        canon_blas_isa(), (long long)i, g, w);
            fail();
        }
    }
}

/* Logical element i of an n-element vector with step inc. */
static inline int64_t vidx(int64_t n, int64_t inc, int64_t i)
{
    return inc >= 0 ? i * inc : (n - 1 - i) * -inc;
}

/* Elements a vector spans. */
static inline int64_t vlen(int64_t n, int64_t inc)
{
    return n <= 0 ? 1 : 1 + (n - 1) * (inc < 0 ? -inc : inc);
}

/* Element (i, j) of a matrix in order 'C' or 'R'. */
static inline int64_t midx(char order, int64_t i, int64_t j, int64_t ld)
{
    return order == 'C' ? i + j * ld : i * ld + j;
}

/* Elements a rows x cols matrix with leading dimension ld spans. */
static inline int64_t mlen(char order, int64_t rows, int64_t cols, int64_t ld)
{
    return (order == 'C' ? cols : rows) * ld + 1;
}

/* Alpha and beta values of type t: 0, 1, -1 and two others. */
static inline cx scalar(int t, int which)
{
    static const cx v[] = {{0, 0}, {1, 0}, {-1, 0}, {0.75, -0.375}, {-1.25, 0.5}};
    cx s = v[which];
    if (!cplx(t))
        s.im = 0;
    return s;
}

/* The (alpha, beta) pairs of the level-2/3 grids, as indices of scalar(). */
static __attribute__((unused)) const int ab_pairs[][2] = {{0, 0}, {0, 1}, {0, 3}, {1, 0}, {1, 1}, {2, 2}, {3, 4}, {4, 0}};
#define N_AB (sizeof ab_pairs / sizeof ab_pairs[0])

/* A result of dot, nrm2 or asum, of any type. */
union result {
    float f[2];
    double d[2];
};

/* A scalar argument: by value for real types, by pointer for complex. */
struct sc {
    float f[2];
    double d[2];
};

static inline struct sc sc_of(cx v)
{
    struct sc s = {{(float)v.re, (float)v.im}, {v.re, v.im}};
    return s;
}

/* Runs fn once per ISA path this CPU supports. */
static inline void on_every_isa(void (*fn)(void))
{
    static const char *const isas[] = {"scalar", "avx2", "avx512"};
    int ran = 0;
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        if (canon_blas_set_isa(isas[i]) != 0)
            continue;
        assert_string_equal(canon_blas_isa(), isas[i]);
        fn();
        ran++;
    }
    /* Every path the CPU has runs: AVX-512 is never skipped where it can. */
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    assert_int_equal(ran, 1 + avx2 + canon_cpu_has_avx512());
    assert_int_equal(canon_blas_set_isa(NULL), 0);
}

/* The contract's tree over 16 lanes. */
static inline cx tree(int t, cx *lane)
{
    for (int h = 8; h >= 1; h /= 2)
        for (int l = 0; l < h; l++)
            lane[l] = cadd(t, lane[l], lane[l + h]);
    return lane[0];
}

/* The contract's chunks: term i goes to lane i mod 16 of chunk i / 32768.
 * Returns 16 zero lanes per chunk (at least one chunk) for nterms terms. */
#define REF_CHUNK 32768
static inline cx *ref_chunks(int64_t nterms)
{
    const int64_t k = nterms > REF_CHUNK ? (nterms + REF_CHUNK - 1) / REF_CHUNK : 1;
    cx *p = calloc((size_t)k * 16, sizeof *p);
    assert_non_null(p);
    return p;
}

static inline cx *ref_lane(cx *chunks, int64_t i)
{
    return &chunks[i / REF_CHUNK * 16 + i % 16];
}

/* Joins chunks lo .. hi-1 into out: split at lo + the largest power of
 * two below hi - lo, left + right lane by lane. */
static inline void ref_join(int t, const cx *chunks, int64_t lo, int64_t hi, cx *out)
{
    if (hi - lo == 1) {
        memcpy(out, chunks + 16 * lo, 16 * sizeof *out);
        return;
    }
    int64_t p = 1;
    while (2 * p < hi - lo)
        p *= 2;
    cx right[16];
    ref_join(t, chunks, lo, lo + p, out);
    ref_join(t, chunks, lo + p, hi, right);
    for (int l = 0; l < 16; l++)
        out[l] = cadd(t, out[l], right[l]);
}

/* The chunk tree, then the lane tree; frees chunks. */
static inline cx ref_finish(int t, cx *chunks, int64_t nterms)
{
    cx lane[16];
    ref_join(t, chunks, 0, nterms > REF_CHUNK ? (nterms + REF_CHUNK - 1) / REF_CHUNK : 1, lane);
    free(chunks);
    return tree(t, lane);
}

static __attribute__((unused)) const char orders[] = {'C', 'R'};
static __attribute__((unused)) const char transes[] = {'N', 'T', 'C'};

/* op(A)_ij of an m x n A (trans 'N') stored in order. */
static inline cx op_at(int t, char order, char trans, const void *a, int64_t lda, int64_t i, int64_t j)
{
    if (trans == 'N')
        return ld(t, a, midx(order, i, j, lda));
    const cx v = ld(t, a, midx(order, j, i, lda));
    return trans == 'C' ? conj_(v) : v;
}

/* Whether op(A)_ij lies in the triangle: op(A) is upper when
 * (uplo == 'U') == (trans == 'N'). */
static inline int in_tri(char uplo, char trans, int64_t i, int64_t j)
{
    const int upper = (uplo == 'U') == (trans == 'N');
    return upper ? j >= i : j <= i;
}

/* A random triangular matrix whose diagonal keeps solves tame (|a_ii| at
 * least 2 and n/4, so that long solves stay finite); the other triangle
 * and the padding are random too (never read). */
static inline void *tri_buf(int t, char order, int64_t n, int64_t lda)
{
    void *a = rand_buf(t, mlen(order, n, n, lda));
    const double shift = n / 4 > 2 ? (double)(n / 4) : 2.0;
    for (int64_t i = 0; i < n; i++) {
        cx d = ld(t, a, midx(order, i, i, lda));
        d.re = d.re < 0 ? d.re - shift : d.re + shift;
        st(t, a, midx(order, i, i, lda), d);
    }
    return a;
}

#endif
