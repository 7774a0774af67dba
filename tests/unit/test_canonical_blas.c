/* Unit tests of the canonical level-1/2/3 BLAS (shim/blas/canonical_l*.c):
 * every routine's result equals, bit for bit, a slow obvious reference
 * written here from the contract in shim/blas/canonical.h (logical
 * elements, the documented formulas, one operation at a time), over a grid
 * of shapes, both layouts, every trans/uplo/side/diag, strides (negative
 * and zero where the BLAS allows them), padded leading dimensions and
 * alpha/beta in {0, 1, -1, other}; on every ISA path this CPU has, so the
 * paths also equal one another. Whole buffers are compared, padding
 * included, so a write outside the logical elements fails too. NaN results
 * compare equal to any NaN (the contract does not fix NaN payloads).
 */
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

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* ---- values of any type ------------------------------------------------- */

enum { TS, TD, TC, TZ, NTYPES };
static const size_t tsize[NTYPES] = {4, 8, 8, 16};
static const char tname[NTYPES] = {'s', 'd', 'c', 'z'};

static int cplx(int t)
{
    return t == TC || t == TZ;
}

static int isf(int t)
{
    return t == TS || t == TC;
}

/* Base elements (floats or doubles) per element. */
static int64_t width(int t)
{
    return cplx(t) ? 2 : 1;
}

/* An element of any type, held exactly in doubles (im is 0 for real). */
typedef struct {
    double re, im;
} cx;

static cx ld(int t, const void *p, int64_t i)
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

static void st(int t, void *p, int64_t i, cx v)
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
static double rfma(int t, double a, double b, double c)
{
    return isf(t) ? (double)fmaf((float)a, (float)b, (float)c) : fma(a, b, c);
}

static double rmul(int t, double a, double b)
{
    return isf(t) ? (double)((float)a * (float)b) : a * b;
}

static double radd(int t, double a, double b)
{
    return isf(t) ? (double)((float)a + (float)b) : a + b;
}

static double rdiv(int t, double a, double b)
{
    return isf(t) ? (double)((float)a / (float)b) : a / b;
}

static cx conj_(cx v)
{
    v.im = -v.im;
    return v;
}

static cx neg(cx v)
{
    v.re = -v.re;
    v.im = -v.im;
    return v;
}

static int is_zero(cx v)
{
    return v.re == 0 && v.im == 0;
}

static int is_one(cx v)
{
    return v.re == 1 && v.im == 0;
}

/* CMAC: s + u*v in the contract's four steps (real: one fma). */
static cx cmac(int t, cx s, cx u, cx v)
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
static cx cmul(int t, cx u, cx v)
{
    cx r = {rmul(t, u.re, v.re), 0};
    if (!cplx(t))
        return r;
    r.im = rmul(t, u.re, v.im);
    r.re = rfma(t, -u.im, v.im, r.re);
    r.im = rfma(t, u.im, v.re, r.im);
    return r;
}

static cx cadd(int t, cx s, cx v)
{
    s.re = radd(t, s.re, v.re);
    s.im = cplx(t) ? radd(t, s.im, v.im) : 0;
    return s;
}

/* CDIV (real: s / d) */
static cx cdiv(int t, cx s, cx d)
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
static cx ab(int t, cx alpha, cx beta, cx s, cx c)
{
    if (is_zero(beta))
        return cmul(t, alpha, s);
    return cmac(t, cmul(t, beta, c), alpha, s);
}

static cx ab0(int t, cx beta, cx c)
{
    const cx zero = {0, 0};
    if (is_one(beta))
        return c;
    return is_zero(beta) ? zero : cmul(t, beta, c);
}

/* ---- buffers ---------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static double uniform(void) /* in [-1, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * 0x1p-52 - 1.0;
}

/* n elements of random values in [-1, 1) (exact in the type). */
static void *rand_buf(int t, int64_t n)
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

static void *dup_buf(int t, const void *p, int64_t n)
{
    const size_t bytes = (size_t)(n > 0 ? n : 1) * tsize[t];
    void *q = malloc(bytes);
    assert_non_null(q);
    memcpy(q, p, bytes);
    return q;
}

/* What a check is about, printed when it fails. */
static char what[256];

static void describe(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
}

/* The two buffers of n elements hold the same bits (any NaN equals any
 * NaN). */
static void assert_same(int t, const void *got, const void *want, int64_t n)
{
    const int64_t nb = (n > 0 ? n : 1) * width(t);
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
static int64_t vidx(int64_t n, int64_t inc, int64_t i)
{
    return inc >= 0 ? i * inc : (n - 1 - i) * -inc;
}

/* Elements a vector spans. */
static int64_t vlen(int64_t n, int64_t inc)
{
    return n <= 0 ? 1 : 1 + (n - 1) * (inc < 0 ? -inc : inc);
}

/* Element (i, j) of a matrix in order 'C' or 'R'. */
static int64_t midx(char order, int64_t i, int64_t j, int64_t ld)
{
    return order == 'C' ? i + j * ld : i * ld + j;
}

/* Elements a rows x cols matrix with leading dimension ld spans. */
static int64_t mlen(char order, int64_t rows, int64_t cols, int64_t ld)
{
    return (order == 'C' ? cols : rows) * ld + 1;
}

/* Alpha and beta values of type t: 0, 1, -1 and two others. */
static cx scalar(int t, int which)
{
    static const cx v[] = {{0, 0}, {1, 0}, {-1, 0}, {0.75, -0.375}, {-1.25, 0.5}};
    cx s = v[which];
    if (!cplx(t))
        s.im = 0;
    return s;
}

/* The (alpha, beta) pairs of the level-2/3 grids, as indices of scalar(). */
static const int ab_pairs[][2] = {{0, 0}, {0, 1}, {0, 3}, {1, 0}, {1, 1}, {2, 2}, {3, 4}, {4, 0}};
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

static struct sc sc_of(cx v)
{
    struct sc s = {{(float)v.re, (float)v.im}, {v.re, v.im}};
    return s;
}

/* Runs fn once per ISA path this CPU supports. */
static void on_every_isa(void (*fn)(void))
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

/* ---- level 1 ---------------------------------------------------------------- */

static const int64_t l1_sizes[] = {0,    1,    2,    7,    15,   16,   17,    31,    33,
                                   100,  257,  1000, 4500, 32767, 32768, 32769, 98305};
#define N_L1 (sizeof l1_sizes / sizeof l1_sizes[0])
static const int64_t l1_incs[] = {1, 2, -1, -3, 0};
#define N_INC (sizeof l1_incs / sizeof l1_incs[0])

/* The contract's tree over 16 lanes. */
static cx tree(int t, cx *lane)
{
    for (int h = 8; h >= 1; h /= 2)
        for (int l = 0; l < h; l++)
            lane[l] = cadd(t, lane[l], lane[l + h]);
    return lane[0];
}

/* The contract's chunks: term i goes to lane i mod 16 of chunk i / 32768.
 * Returns 16 zero lanes per chunk (at least one chunk) for nterms terms. */
#define REF_CHUNK 32768
static cx *ref_chunks(int64_t nterms)
{
    const int64_t k = nterms > REF_CHUNK ? (nterms + REF_CHUNK - 1) / REF_CHUNK : 1;
    cx *p = calloc((size_t)k * 16, sizeof *p);
    assert_non_null(p);
    return p;
}

static cx *ref_lane(cx *chunks, int64_t i)
{
    return &chunks[i / REF_CHUNK * 16 + i % 16];
}

/* Joins chunks lo .. hi-1 into out: split at lo + the largest power of
 * two below hi - lo, left + right lane by lane. */
static void ref_join(int t, const cx *chunks, int64_t lo, int64_t hi, cx *out)
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
static cx ref_finish(int t, cx *chunks, int64_t nterms)
{
    cx lane[16];
    ref_join(t, chunks, 0, nterms > REF_CHUNK ? (nterms + REF_CHUNK - 1) / REF_CHUNK : 1, lane);
    free(chunks);
    return tree(t, lane);
}

static cx ref_dot(int t, int64_t n, const void *x, int64_t incx, const void *y, int64_t incy,
                  int conj)
{
    cx *lanes = ref_chunks(n);
    for (int64_t i = 0; i < n; i++) {
        cx xi = ld(t, x, vidx(n, incx, i));
        if (conj)
            xi = conj_(xi);
        *ref_lane(lanes, i) = cmac(t, *ref_lane(lanes, i), xi, ld(t, y, vidx(n, incy, i)));
    }
    return ref_finish(t, lanes, n);
}

static void lib_dot(int t, int conj, int64_t n, const void *x, int64_t incx, const void *y,
                    int64_t incy, void *r)
{
    int rc;
    switch (t) {
    case TS: rc = canon_sdot(n, x, incx, y, incy, r); break;
    case TD: rc = canon_ddot(n, x, incx, y, incy, r); break;
    case TC:
        rc = conj ? canon_cdotc(n, x, incx, y, incy, r) : canon_cdotu(n, x, incx, y, incy, r);
        break;
    default:
        rc = conj ? canon_zdotc(n, x, incx, y, incy, r) : canon_zdotu(n, x, incx, y, incy, r);
        break;
    }
    assert_int_equal(rc, 0);
}

static void dot_grid(void)
{
    for (int t = 0; t < NTYPES; t++)
        for (int conj = 0; conj <= cplx(t); conj++)
            for (size_t a = 0; a < N_L1; a++)
                for (size_t ix = 0; ix < N_INC; ix++)
                    for (size_t iy = 0; iy < N_INC; iy += 2) {
                        const int64_t n = l1_sizes[a], incx = l1_incs[ix], incy = l1_incs[iy];
                        void *x = rand_buf(t, vlen(n, incx)), *y = rand_buf(t, vlen(n, incy));
                        union result got = {{0, 0}}, want;
                        describe("%cdot%s n=%lld incx=%lld incy=%lld", tname[t], conj ? "c" : "",
                                 (long long)n, (long long)incx, (long long)incy);
                        lib_dot(t, conj, n, x, incx, y, incy, &got);
                        st(t, &want, 0, ref_dot(t, n, x, incx, y, incy, conj));
                        assert_same(t, &got, &want, 1);
                        free(x);
                        free(y);
                    }
}

static void test_dot_equals_the_lanes_and_tree_order(void **state)
{
    (void)state;
    on_every_isa(dot_grid);
}

/* The real type of t, for nrm2 and asum results. */
static int real_of(int t)
{
    return t == TC ? TS : t == TZ ? TD : t;
}

/* Real element r of the 2n (complex) or n reals of the vector. */
static double real_at(int t, int64_t n, const void *x, int64_t inc, int64_t r)
{
    const cx v = ld(t, x, vidx(n, inc, r / width(t)));
    return r % width(t) ? v.im : v.re;
}

static double ref_nrm2(int t, int64_t n, const void *x, int64_t inc)
{
    const int rt = real_of(t);
    const int64_t nr = n * width(t);
    double m = 0;
    int k = 0;
    if (n <= 0 || inc <= 0)
        return 0;
    cx *lane = ref_chunks(nr);
    if (isf(t)) { /* squares summed in double lanes, no scaling */
        for (int64_t r = 0; r < nr; r++) {
            const double v = real_at(t, n, x, inc, r);
            ref_lane(lane, r)->re = fma(v, v, ref_lane(lane, r)->re);
        }
        return (double)(float)sqrt(ref_finish(TD, lane, nr).re);
    }
    for (int64_t r = 0; r < nr; r++) {
        const double a = fabs(real_at(t, n, x, inc, r));
        if (a > m)
            m = a;
    }
    if (m != 0 && !isinf(m))
        frexp(m, &k);
    for (int64_t r = 0; r < nr; r++) {
        const double v = real_at(t, n, x, inc, r);
        const double s = isf(t) ? (double)ldexpf((float)v, -k) : ldexp(v, -k);
        ref_lane(lane, r)->re = rfma(rt, s, s, ref_lane(lane, r)->re);
    }
    const double sum = ref_finish(rt, lane, nr).re;
    return isf(t) ? (double)ldexpf(sqrtf((float)sum), k) : ldexp(sqrt(sum), k);
}

static double ref_asum(int t, int64_t n, const void *x, int64_t inc)
{
    const int rt = real_of(t);
    if (n <= 0 || inc <= 0)
        return 0;
    cx *lane = ref_chunks(n * width(t));
    for (int64_t r = 0; r < n * width(t); r++)
        ref_lane(lane, r)->re = radd(rt, ref_lane(lane, r)->re, fabs(real_at(t, n, x, inc, r)));
    return ref_finish(rt, lane, n * width(t)).re;
}

static void lib_nrm2(int t, int64_t n, const void *x, int64_t inc, void *r)
{
    int rc;
    switch (t) {
    case TS: rc = canon_snrm2(n, x, inc, r); break;
    case TD: rc = canon_dnrm2(n, x, inc, r); break;
    case TC: rc = canon_scnrm2(n, x, inc, r); break;
    default: rc = canon_dznrm2(n, x, inc, r); break;
    }
    assert_int_equal(rc, 0);
}

static void lib_asum(int t, int64_t n, const void *x, int64_t inc, void *r)
{
    int rc;
    switch (t) {
    case TS: rc = canon_sasum(n, x, inc, r); break;
    case TD: rc = canon_dasum(n, x, inc, r); break;
    case TC: rc = canon_scasum(n, x, inc, r); break;
    default: rc = canon_dzasum(n, x, inc, r); break;
    }
    assert_int_equal(rc, 0);
}

/* Scales the base elements of a buffer by 2^e (exactly: powers of two,
 * rounding only where the result is subnormal); variant 3 plants an Inf,
 * variant 4 a NaN, variant 5 mixes huge and tiny. */
static void shape_values(int t, void *x, int64_t n, int variant)
{
    const int64_t nb = n * width(t);
    /* huge reaches the scales whose 2^-k is subnormal, tiny the ones whose
     * 2^-k is not representable */
    const int huge = isf(t) ? 127 : 1023, tiny = isf(t) ? -135 : -1060;
    for (int64_t i = 0; i < nb; i++) {
        int e = variant == 1 ? huge : variant == 2 ? tiny : 0;
        if (variant == 5)
            e = i % 3 ? tiny : huge;
        if (isf(t))
            ((float *)x)[i] = ldexpf(((float *)x)[i], e);
        else
            ((double *)x)[i] = ldexp(((double *)x)[i], e);
    }
    if ((variant == 3 || variant == 4) && nb > 0) {
        const double v = variant == 3 ? INFINITY : NAN;
        if (isf(t))
            ((float *)x)[nb / 2] = (float)v;
        else
            ((double *)x)[nb / 2] = v;
    }
}

static void nrm2_asum_grid(void)
{
    for (int t = 0; t < NTYPES; t++)
        for (size_t a = 0; a < N_L1; a++)
            for (size_t ix = 0; ix < N_INC; ix++)
                for (int variant = 0; variant < 6; variant++) {
                    const int64_t n = l1_sizes[a], inc = l1_incs[ix];
                    const int rt = real_of(t);
                    void *x = rand_buf(t, vlen(n, inc));
                    union result got = {{0, 0}}, want = {{0, 0}};
                    shape_values(t, x, vlen(n, inc), variant);
                    describe("%c nrm2 n=%lld inc=%lld values=%d", tname[t], (long long)n,
                             (long long)inc, variant);
                    lib_nrm2(t, n, x, inc, &got);
                    st(rt, &want, 0, (cx){ref_nrm2(t, n, x, inc), 0});
                    assert_same(rt, &got, &want, 1);
                    describe("%c asum n=%lld inc=%lld values=%d", tname[t], (long long)n,
                             (long long)inc, variant);
                    lib_asum(t, n, x, inc, &got);
                    st(rt, &want, 0, (cx){ref_asum(t, n, x, inc), 0});
                    assert_same(rt, &got, &want, 1);
                    free(x);
                }
}

static void test_nrm2_and_asum_equal_the_scaled_lanes_order(void **state)
{
    (void)state;
    on_every_isa(nrm2_asum_grid);
}

/* Long reductions split their chunks among threads: every type, n at and
 * around the threshold (2^17 terms) and chunk boundaries, contiguous and
 * strided (a positive and a negative step), vectors on and off a
 * cache-line start, at 1 .. 8 threads. */
static void chunks_threads_grid(void)
{
    static const int64_t sizes[] = {131072, 262149, 300007};
    for (int t = 0; t < NTYPES; t++)
        for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++)
            for (int shape = 0; shape < 3; shape++) {
                const int rt = real_of(t), nconj = cplx(t) ? 2 : 1;
                const int64_t n = sizes[a], inc = shape == 2 ? 2 : 1, off = shape == 1;
                const int64_t incy = shape == 2 ? -1 : 1;
                const size_t es = tsize[t];
                char *bx = rand_buf(t, vlen(n, inc) + 1), *by = rand_buf(t, vlen(n, inc) + 1);
                const void *x = bx + off * es, *y = by + off * es;
                union result want[4] = {{{0, 0}}}, got;
                for (int conj = 0; conj < nconj; conj++)
                    st(t, &want[conj], 0, ref_dot(t, n, x, inc, y, incy, conj));
                st(rt, &want[2], 0, (cx){ref_asum(t, n, x, inc), 0});
                st(rt, &want[3], 0, (cx){ref_nrm2(t, n, x, inc), 0});
                for (int threads = 1; threads <= 8; threads++) {
                    canon_set_threads(threads);
                    for (int conj = 0; conj < nconj; conj++) {
                        describe("%cdot%s n=%lld inc=%lld offset=%lld threads=%d", tname[t],
                                 conj ? "c" : "", (long long)n, (long long)inc, (long long)off,
                                 threads);
                        lib_dot(t, conj, n, x, inc, y, incy, &got);
                        assert_same(t, &got, &want[conj], 1);
                    }
                    describe("%c asum/nrm2 n=%lld inc=%lld offset=%lld threads=%d", tname[t],
                             (long long)n, (long long)inc, (long long)off, threads);
                    lib_asum(t, n, x, inc, &got);
                    assert_same(rt, &got, &want[2], 1);
                    lib_nrm2(t, n, x, inc, &got);
                    assert_same(rt, &got, &want[3], 1);
                }
                canon_set_threads(1);
                free(bx);
                free(by);
            }
}

static void test_dot_nrm2_and_asum_same_bits_any_thread_count(void **state)
{
    (void)state;
    const uint64_t worker_parts = canon_pool_worker_parts();
    on_every_isa(chunks_threads_grid);
    /* the test proves something only if workers computed chunks */
    assert_true(canon_pool_worker_parts() > worker_parts);
}

static void lib_axpy(int t, int64_t n, cx alpha, const void *x, int64_t incx, void *y, int64_t incy)
{
    const struct sc a = sc_of(alpha);
    int rc;
    switch (t) {
    case TS: rc = canon_saxpy(n, a.f[0], x, incx, y, incy); break;
    case TD: rc = canon_daxpy(n, a.d[0], x, incx, y, incy); break;
    case TC: rc = canon_caxpy(n, a.f, x, incx, y, incy); break;
    default: rc = canon_zaxpy(n, a.d, x, incx, y, incy); break;
    }
    assert_int_equal(rc, 0);
}

static void axpy_grid(void)
{
    for (int t = 0; t < NTYPES; t++)
        for (size_t a = 0; a < N_L1; a++)
            for (size_t ix = 0; ix < N_INC; ix++)
                for (size_t iy = 0; iy < N_INC; iy++)
                    for (int w = 0; w < 5; w++) {
                        const int64_t n = l1_sizes[a], incx = l1_incs[ix], incy = l1_incs[iy];
                        const cx alpha = scalar(t, w);
                        if (n > 300 && (ix > 1 || iy > 1 || w > 1))
                            continue; /* long vectors: the unit and stride-2 cases */
                        void *x = rand_buf(t, vlen(n, incx)), *y = rand_buf(t, vlen(n, incy));
                        void *want = dup_buf(t, y, vlen(n, incy));
                        describe("%caxpy n=%lld incx=%lld incy=%lld alpha=%g%+gi", tname[t],
                                 (long long)n, (long long)incx, (long long)incy, alpha.re,
                                 alpha.im);
                        lib_axpy(t, n, alpha, x, incx, y, incy);
                        if (!is_zero(alpha))
                            for (int64_t i = 0; i < n; i++) {
                                const int64_t yi = vidx(n, incy, i);
                                st(t, want, yi,
                                   cmac(t, ld(t, want, yi), alpha, ld(t, x, vidx(n, incx, i))));
                            }
                        assert_same(t, y, want, vlen(n, incy));
                        free(x);
                        free(y);
                        free(want);
                    }
}

static void test_axpy_equals_one_fma_per_element(void **state)
{
    (void)state;
    on_every_isa(axpy_grid);
}

/* scal of type t; real_alpha: csscal/zdscal. */
static void lib_scal(int t, int real_alpha, int64_t n, cx alpha, void *x, int64_t inc)
{
    const struct sc a = sc_of(alpha);
    int rc;
    switch (t) {
    case TS: rc = canon_sscal(n, a.f[0], x, inc); break;
    case TD: rc = canon_dscal(n, a.d[0], x, inc); break;
    case TC: rc = real_alpha ? canon_csscal(n, a.f[0], x, inc) : canon_cscal(n, a.f, x, inc); break;
    default: rc = real_alpha ? canon_zdscal(n, a.d[0], x, inc) : canon_zscal(n, a.d, x, inc); break;
    }
    assert_int_equal(rc, 0);
}

static void scal_grid(void)
{
    for (int t = 0; t < NTYPES; t++)
        for (int real_alpha = 0; real_alpha <= cplx(t); real_alpha++)
            for (size_t a = 0; a < N_L1; a++)
                for (size_t ix = 0; ix < N_INC; ix++)
                    for (int w = 0; w < 5; w++) {
                        const int64_t n = l1_sizes[a], inc = l1_incs[ix];
                        cx alpha = scalar(t, w);
                        if (real_alpha)
                            alpha.im = 0;
                        void *x = rand_buf(t, vlen(n, inc)), *want = dup_buf(t, x, vlen(n, inc));
                        describe("%cscal%s n=%lld inc=%lld alpha=%g%+gi", tname[t],
                                 real_alpha ? " (real alpha)" : "", (long long)n, (long long)inc,
                                 alpha.re, alpha.im);
                        lib_scal(t, real_alpha, n, alpha, x, inc);
                        for (int64_t i = 0; inc > 0 && i < n; i++) {
                            cx v = ld(t, want, i * inc);
                            if (real_alpha) {
                                v.re = rmul(t, alpha.re, v.re);
                                v.im = rmul(t, alpha.re, v.im);
                            } else {
                                v = cmul(t, alpha, v);
                            }
                            st(t, want, i * inc, v);
                        }
                        assert_same(t, x, want, vlen(n, inc));
                        free(x);
                        free(want);
                    }
}

static void test_scal_equals_one_product_per_element(void **state)
{
    (void)state;
    on_every_isa(scal_grid);
}

/* ---- level 2 ---------------------------------------------------------------- */

static const char orders[] = {'C', 'R'};
static const char transes[] = {'N', 'T', 'C'};
static const int64_t l2_sizes[] = {0, 1, 3, 8, 17, 37, 70};
#define N_L2 (sizeof l2_sizes / sizeof l2_sizes[0])
static const int64_t l2_incs[][2] = {{1, 1}, {-2, 3}, {2, -1}};
#define N_L2INC (sizeof l2_incs / sizeof l2_incs[0])

static int lib_gemv(int t, char order, char trans, int64_t m, int64_t n, cx alpha, const void *a,
                    int64_t lda, const void *x, int64_t incx, cx beta, void *y, int64_t incy)
{
    const struct sc al = sc_of(alpha), be = sc_of(beta);
    switch (t) {
    case TS: return canon_sgemv(order, trans, m, n, al.f[0], a, lda, x, incx, be.f[0], y, incy);
    case TD: return canon_dgemv(order, trans, m, n, al.d[0], a, lda, x, incx, be.d[0], y, incy);
    case TC: return canon_cgemv(order, trans, m, n, al.f, a, lda, x, incx, be.f, y, incy);
    default: return canon_zgemv(order, trans, m, n, al.d, a, lda, x, incx, be.d, y, incy);
    }
}

/* op(A)_ij of an m x n A (trans 'N') stored in order. */
static cx op_at(int t, char order, char trans, const void *a, int64_t lda, int64_t i, int64_t j)
{
    if (trans == 'N')
        return ld(t, a, midx(order, i, j, lda));
    const cx v = ld(t, a, midx(order, j, i, lda));
    return trans == 'C' ? conj_(v) : v;
}

static void ref_gemv(int t, char order, char trans, int64_t m, int64_t n, cx alpha, const void *a,
                     int64_t lda, const void *x, int64_t incx, cx beta, void *y, int64_t incy)
{
    const int64_t leny = trans == 'N' ? m : n, lenx = trans == 'N' ? n : m;
    if (m == 0 || n == 0 || (is_zero(alpha) && is_one(beta)))
        return;
    for (int64_t i = 0; i < leny; i++) {
        const int64_t yi = vidx(leny, incy, i);
        cx s = {0, 0};
        if (is_zero(alpha)) {
            st(t, y, yi, ab0(t, beta, ld(t, y, yi)));
            continue;
        }
        if ((order == 'C') == (trans != 'N')) { /* along A's stored columns: LANES */
            cx *lanes = ref_chunks(lenx);
            for (int64_t j = 0; j < lenx; j++)
                *ref_lane(lanes, j) = cmac(t, *ref_lane(lanes, j), op_at(t, order, trans, a, lda, i, j),
                                           ld(t, x, vidx(lenx, incx, j)));
            s = ref_finish(t, lanes, lenx);
        } else {
            for (int64_t j = 0; j < lenx; j++)
                s = cmac(t, s, op_at(t, order, trans, a, lda, i, j), ld(t, x, vidx(lenx, incx, j)));
        }
        st(t, y, yi, ab(t, alpha, beta, s, ld(t, y, yi)));
    }
}

/* One gemv call against the reference. */
static void check_gemv(int t, char order, char trans, int64_t m, int64_t n, int64_t pad,
                       int64_t incx, int64_t incy, cx alpha, cx beta)
{
    const int64_t lda = (order == 'C' ? m : n) + pad;
    const int64_t leny = trans == 'N' ? m : n, lenx = trans == 'N' ? n : m;
    void *a = rand_buf(t, mlen(order, m, n, lda > 0 ? lda : 1));
    void *x = rand_buf(t, vlen(lenx, incx)), *y = rand_buf(t, vlen(leny, incy));
    void *want = dup_buf(t, y, vlen(leny, incy));
    describe("%cgemv %c%c m=%lld n=%lld lda=%lld incx=%lld incy=%lld alpha=%g%+gi "
             "beta=%g%+gi",
             tname[t], order, trans, (long long)m, (long long)n, (long long)lda, (long long)incx,
             (long long)incy, alpha.re, alpha.im, beta.re, beta.im);
    assert_int_equal(
        lib_gemv(t, order, trans, m, n, alpha, a, lda > 0 ? lda : 1, x, incx, beta, y, incy), 0);
    ref_gemv(t, order, trans, m, n, alpha, a, lda > 0 ? lda : 1, x, incx, beta, want, incy);
    assert_same(t, y, want, vlen(leny, incy));
    free(a);
    free(x);
    free(y);
    free(want);
}

static void gemv_grid(void)
{
    for (int t = 0; t < NTYPES; t++)
        for (int o = 0; o < 2; o++)
            for (int tr = 0; tr < 3; tr++)
                for (size_t im = 0; im < N_L2; im++)
                    for (size_t in = 0; in < N_L2; in++)
                        for (size_t inc = 0; inc < N_L2INC; inc++)
                            for (size_t p = 0; p < N_AB; p++)
                                check_gemv(t, orders[o], transes[tr], l2_sizes[im], l2_sizes[in],
                                           (int64_t)(p % 2) * 3, l2_incs[inc][0], l2_incs[inc][1],
                                           scalar(t, ab_pairs[p][0]), scalar(t, ab_pairs[p][1]));
    /* A leading dimension of 1024 floats, whose columns share cache sets
     * (the AVX2 column dots then run their two groups skewed), with more
     * and with fewer rows than the skew. */
    for (int t = 0; t < NTYPES; t++)
        for (int tr = 1; tr < 3; tr++) {
            check_gemv(t, 'C', transes[tr], 300, 40, 1024 - 300, 1, -1, scalar(t, 3), scalar(t, 4));
            check_gemv(t, 'C', transes[tr], 100, 35, 1024 - 100, 2, 1, scalar(t, 1), scalar(t, 0));
            check_gemv(t, 'R', 'N', 40, 300, 1024 - 300, 1, 1, scalar(t, 1), scalar(t, 1));
        }
    /* Longer than the block of sums (8 KiB) in either direction. */
    for (int t = 0; t < NTYPES; t++)
        for (int tr = 0; tr < 3; tr++) {
            const int64_t big = 8192 / (int64_t)tsize[t] + 37;
            check_gemv(t, 'C', transes[tr], big, 5, 1, 1, 1, scalar(t, 3), scalar(t, 4));
            check_gemv(t, 'C', transes[tr], 6, big, 0, -1, 2, scalar(t, 3), scalar(t, 4));
        }
    /* Column dots around the chunk boundaries (32768 terms), 1 .. 9
     * columns (groups of 4 and the rest), contiguous and strided x. */
    static const int64_t long_m[] = {32767, 32768, 32769, 98305};
    for (int t = 0; t < NTYPES; t++)
        for (size_t i = 0; i < sizeof long_m / sizeof long_m[0]; i++)
            for (int64_t cols = 1; cols <= 9; cols += 4) {
                check_gemv(t, 'C', t % 2 ? 'C' : 'T', long_m[i], cols, 3, i % 2 ? -2 : 1, 1,
                           scalar(t, 3), scalar(t, 4));
                check_gemv(t, 'R', 'N', cols, long_m[i], 0, 1, -1, scalar(t, 1), scalar(t, 0));
            }
}

static void test_gemv_equals_a_sequential_sum_or_lanes_per_output(void **state)
{
    (void)state;
    on_every_isa(gemv_grid);
}

/* Shapes of at least 2^18 products, so a gemv splits its outputs among
 * threads: uneven lengths (not multiples of the split unit), padded
 * leading dimensions and negative or strided increments. */
static const struct {
    char order, trans;
    int64_t m, n, pad, incx, incy;
} split_shapes[] = {
    {'C', 'N', 1037, 301, 3, 1, 1},   {'C', 'T', 263, 1013, 0, -2, 1},
    {'C', 'C', 517, 611, 5, 1, -3},   {'R', 'N', 389, 811, 1, 3, -1},
    {'R', 'T', 1201, 223, 0, -1, 2},  {'R', 'C', 700, 450, 2, 1, 1},
    {'C', 'T', 40000, 41, 1, 1, 1},   {'C', 'C', 65600, 19, 0, 3, -1},
    {'R', 'N', 20, 40000, 2, -1, 1},  {'C', 'T', 140001, 3, 1, -1, 1},
    {'C', 'C', 131072, 9, 0, 1, -2},  {'R', 'N', 5, 200003, 3, 2, 1},
};

/* Every split shape under threads 1 .. 8 against one reference. */
static void gemv_threads_grid(void)
{
    static const int counts[] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int t = 0; t < NTYPES; t++)
        for (size_t i = 0; i < sizeof split_shapes / sizeof split_shapes[0]; i++) {
            const char order = split_shapes[i].order, trans = split_shapes[i].trans;
            const int64_t m = split_shapes[i].m, n = split_shapes[i].n;
            const int64_t incx = split_shapes[i].incx, incy = split_shapes[i].incy;
            const int64_t lda = (order == 'C' ? m : n) + split_shapes[i].pad;
            const int64_t leny = trans == 'N' ? m : n, lenx = trans == 'N' ? n : m;
            const cx alpha = scalar(t, 3), beta = scalar(t, 4);
            void *a = rand_buf(t, mlen(order, m, n, lda));
            void *x = rand_buf(t, vlen(lenx, incx)), *y0 = rand_buf(t, vlen(leny, incy));
            void *want = dup_buf(t, y0, vlen(leny, incy));
            ref_gemv(t, order, trans, m, n, alpha, a, lda, x, incx, beta, want, incy);
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                void *y = dup_buf(t, y0, vlen(leny, incy));
                canon_set_threads(counts[c]);
                assert_int_equal(canon_threads(), counts[c]);
                describe("%cgemv %c%c m=%lld n=%lld lda=%lld incx=%lld incy=%lld threads=%d",
                         tname[t], order, trans, (long long)m, (long long)n, (long long)lda,
                         (long long)incx, (long long)incy, counts[c]);
                assert_int_equal(
                    lib_gemv(t, order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy), 0);
                assert_same(t, y, want, vlen(leny, incy));
                free(y);
            }
            canon_set_threads(1);
            free(a);
            free(x);
            free(y0);
            free(want);
        }
}

static void test_gemv_same_bits_any_thread_count(void **state)
{
    (void)state;
    const uint64_t worker_parts = canon_pool_worker_parts();
    on_every_isa(gemv_threads_grid);
    /* the test proves something only if workers computed parts */
    assert_true(canon_pool_worker_parts() > worker_parts);
}

static int lib_ger(int t, int conj, char order, int64_t m, int64_t n, cx alpha, const void *x,
                   int64_t incx, const void *y, int64_t incy, void *a, int64_t lda)
{
    const struct sc al = sc_of(alpha);
    switch (t) {
    case TS: return canon_sger(order, m, n, al.f[0], x, incx, y, incy, a, lda);
    case TD: return canon_dger(order, m, n, al.d[0], x, incx, y, incy, a, lda);
    case TC:
        return conj ? canon_cgerc(order, m, n, al.f, x, incx, y, incy, a, lda)
                    : canon_cgeru(order, m, n, al.f, x, incx, y, incy, a, lda);
    default:
        return conj ? canon_zgerc(order, m, n, al.d, x, incx, y, incy, a, lda)
                    : canon_zgeru(order, m, n, al.d, x, incx, y, incy, a, lda);
    }
}

static void ref_ger(int t, int conj, char order, int64_t m, int64_t n, cx alpha, const void *x,
                    int64_t incx, const void *y, int64_t incy, void *a, int64_t lda)
{
    if (m == 0 || n == 0 || is_zero(alpha))
        return;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            const int64_t e = midx(order, i, j, lda);
            const cx xi = ld(t, x, vidx(m, incx, i));
            cx yj = ld(t, y, vidx(n, incy, j));
            if (conj)
                yj = conj_(yj);
            if (order == 'C')
                st(t, a, e, cmac(t, ld(t, a, e), xi, cmul(t, alpha, yj)));
            else
                st(t, a, e, cmac(t, ld(t, a, e), yj, cmul(t, alpha, xi)));
        }
}

static void ger_grid(void)
{
    for (int t = 0; t < NTYPES; t++)
        for (int conj = 0; conj <= cplx(t); conj++)
            for (int o = 0; o < 2; o++)
                for (size_t im = 0; im < N_L2; im++)
                    for (size_t in = 0; in < N_L2; in++)
                        for (size_t inc = 0; inc < N_L2INC; inc++)
                            for (int w = 0; w < 5; w++) {
                                const char order = orders[o];
                                const int64_t m = l2_sizes[im], n = l2_sizes[in];
                                const int64_t incx = l2_incs[inc][0], incy = l2_incs[inc][1];
                                const int64_t lda = (order == 'C' ? m : n) + w % 2 + 1;
                                const cx alpha = scalar(t, w);
                                void *x = rand_buf(t, vlen(m, incx)),
                                     *y = rand_buf(t, vlen(n, incy));
                                void *a = rand_buf(t, mlen(order, m, n, lda));
                                void *want = dup_buf(t, a, mlen(order, m, n, lda));
                                describe("%cger%s %c m=%lld n=%lld lda=%lld incx=%lld incy=%lld "
                                         "alpha=%g%+gi",
                                         tname[t], conj ? "c" : "", order, (long long)m,
                                         (long long)n, (long long)lda, (long long)incx,
                                         (long long)incy, alpha.re, alpha.im);
                                assert_int_equal(
                                    lib_ger(t, conj, order, m, n, alpha, x, incx, y, incy, a, lda),
                                    0);
                                ref_ger(t, conj, order, m, n, alpha, x, incx, y, incy, want, lda);
                                assert_same(t, a, want, mlen(order, m, n, lda));
                                free(x);
                                free(y);
                                free(a);
                                free(want);
                            }
}

static void test_ger_equals_one_fma_per_element_after_alpha(void **state)
{
    (void)state;
    on_every_isa(ger_grid);
}

/* Whether op(A)_ij lies in the triangle: op(A) is upper when
 * (uplo == 'U') == (trans == 'N'). */
static int in_tri(char uplo, char trans, int64_t i, int64_t j)
{
    const int upper = (uplo == 'U') == (trans == 'N');
    return upper ? j >= i : j <= i;
}

/* A random triangular matrix whose diagonal keeps solves tame (|a_ii| at
 * least 2 and n/4, so that long solves stay finite); the other triangle
 * and the padding are random too (never read). */
static void *tri_buf(int t, char order, int64_t n, int64_t lda)
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

static int lib_trv(int t, int solve, char order, char uplo, char trans, char diag, int64_t n,
                   const void *a, int64_t lda, void *x, int64_t incx)
{
    switch (t) {
    case TS:
        return solve ? canon_strsv(order, uplo, trans, diag, n, a, lda, x, incx)
                     : canon_strmv(order, uplo, trans, diag, n, a, lda, x, incx);
    case TD:
        return solve ? canon_dtrsv(order, uplo, trans, diag, n, a, lda, x, incx)
                     : canon_dtrmv(order, uplo, trans, diag, n, a, lda, x, incx);
    case TC:
        return solve ? canon_ctrsv(order, uplo, trans, diag, n, a, lda, x, incx)
                     : canon_ctrmv(order, uplo, trans, diag, n, a, lda, x, incx);
    default:
        return solve ? canon_ztrsv(order, uplo, trans, diag, n, a, lda, x, incx)
                     : canon_ztrmv(order, uplo, trans, diag, n, a, lda, x, incx);
    }
}

static void ref_trmv(int t, char order, char uplo, char trans, char diag, int64_t n, const void *a,
                     int64_t lda, void *x, int64_t incx)
{
    void *old = dup_buf(t, x, vlen(n, incx));
    for (int64_t i = 0; i < n; i++) {
        cx s = {0, 0};
        for (int64_t j = 0; j < n; j++) {
            if (!in_tri(uplo, trans, i, j))
                continue;
            const cx xj = ld(t, old, vidx(n, incx, j));
            if (i == j && diag == 'U')
                s = cadd(t, s, xj);
            else
                s = cmac(t, s, op_at(t, order, trans, a, lda, i, j), xj);
        }
        st(t, x, vidx(n, incx, i), s);
    }
    free(old);
}

static void ref_trsv(int t, char order, char uplo, char trans, char diag, int64_t n, const void *a,
                     int64_t lda, void *x, int64_t incx)
{
    const int upper = (uplo == 'U') == (trans == 'N');
    for (int64_t step = 0; step < n; step++) {
        const int64_t i = upper ? n - 1 - step : step;
        cx s = ld(t, x, vidx(n, incx, i));
        for (int64_t j = 0; j < n; j++)
            if (j != i && in_tri(uplo, trans, i, j))
                s = cmac(t, s, neg(op_at(t, order, trans, a, lda, i, j)),
                         ld(t, x, vidx(n, incx, j)));
        if (diag == 'N')
            s = cdiv(t, s, op_at(t, order, trans, a, lda, i, i));
        st(t, x, vidx(n, incx, i), s);
    }
}

static void trv_grid(void)
{
    static const int64_t sizes[] = {0, 1, 2, 5, 16, 33};
    static const int64_t incs[] = {1, -2, 3};
    for (int t = 0; t < NTYPES; t++)
        for (int solve = 0; solve < 2; solve++)
            for (int o = 0; o < 2; o++)
                for (int u = 0; u < 2; u++)
                    for (int tr = 0; tr < 3; tr++)
                        for (int d = 0; d < 2; d++)
                            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                                for (size_t ix = 0; ix < 3; ix++) {
                                    const char order = orders[o], uplo = "UL"[u],
                                               trans = transes[tr], diag = "NU"[d];
                                    const int64_t n = sizes[s], incx = incs[ix];
                                    const int64_t lda = (n > 0 ? n : 1) + (int64_t)ix;
                                    void *a = tri_buf(t, order, n, lda);
                                    void *x = rand_buf(t, vlen(n, incx));
                                    void *want = dup_buf(t, x, vlen(n, incx));
                                    describe("%ctr%s %c uplo=%c trans=%c diag=%c n=%lld "
                                             "lda=%lld incx=%lld",
                                             tname[t], solve ? "sv" : "mv", order, uplo, trans,
                                             diag, (long long)n, (long long)lda, (long long)incx);
                                    assert_int_equal(lib_trv(t, solve, order, uplo, trans, diag, n,
                                                             a, lda, x, incx),
                                                     0);
                                    if (solve)
                                        ref_trsv(t, order, uplo, trans, diag, n, a, lda, want,
                                                 incx);
                                    else
                                        ref_trmv(t, order, uplo, trans, diag, n, a, lda, want,
                                                 incx);
                                    assert_same(t, x, want, vlen(n, incx));
                                    free(a);
                                    free(x);
                                    free(want);
                                }
}

static void test_trmv_and_trsv_equal_the_documented_substitution(void **state)
{
    (void)state;
    on_every_isa(trv_grid);
}

/* ---- level 3 ---------------------------------------------------------------- */

static int lib_syrk(int t, char order, char uplo, char trans, int64_t n, int64_t k, cx alpha,
                    const void *a, int64_t lda, cx beta, void *c, int64_t ldc)
{
    const struct sc al = sc_of(alpha), be = sc_of(beta);
    switch (t) {
    case TS: return canon_ssyrk(order, uplo, trans, n, k, al.f[0], a, lda, be.f[0], c, ldc);
    case TD: return canon_dsyrk(order, uplo, trans, n, k, al.d[0], a, lda, be.d[0], c, ldc);
    case TC: return canon_csyrk(order, uplo, trans, n, k, al.f, a, lda, be.f, c, ldc);
    default: return canon_zsyrk(order, uplo, trans, n, k, al.d, a, lda, be.d, c, ldc);
    }
}

static void ref_syrk(int t, char order, char uplo, char trans, int64_t n, int64_t k, cx alpha,
                     const void *a, int64_t lda, cx beta, void *c, int64_t ldc)
{
    /* op(A) is n x k: A itself for 'N', else A^T (A k x n) */
    const char tr = trans == 'N' ? 'N' : 'T';
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            const int64_t e = midx(order, i, j, ldc);
            if (uplo == 'U' ? i > j : i < j)
                continue;
            if (is_zero(alpha) || k == 0) {
                st(t, c, e, ab0(t, beta, ld(t, c, e)));
                continue;
            }
            cx s = {0, 0};
            for (int64_t p = 0; p < k; p++) {
                const cx ai = op_at(t, order, tr, a, lda, i, p),
                         aj = op_at(t, order, tr, a, lda, j, p);
                s = order == 'C' ? cmac(t, s, ai, aj) : cmac(t, s, aj, ai);
            }
            st(t, c, e, ab(t, alpha, beta, s, ld(t, c, e)));
        }
}

static void check_syrk(int t, char order, char uplo, char trans, int64_t n, int64_t k, int64_t pad,
                       cx alpha, cx beta)
{
    const int64_t ra = trans == 'N' ? n : k, ca = trans == 'N' ? k : n;
    const int64_t lda = (order == 'C' ? ra : ca) + pad, ldc = n + 2 - pad > 0 ? n + 2 - pad : 1;
    const int64_t la = mlen(order, ra, ca, lda > 0 ? lda : 1), lc = mlen(order, n, n, ldc);
    void *a = rand_buf(t, la), *c = rand_buf(t, lc), *want = dup_buf(t, c, lc);
    describe("%csyrk %c uplo=%c trans=%c n=%lld k=%lld lda=%lld ldc=%lld alpha=%g%+gi "
             "beta=%g%+gi",
             tname[t], order, uplo, trans, (long long)n, (long long)k, (long long)lda,
             (long long)ldc, alpha.re, alpha.im, beta.re, beta.im);
    assert_int_equal(
        lib_syrk(t, order, uplo, trans, n, k, alpha, a, lda > 0 ? lda : 1, beta, c, ldc), 0);
    ref_syrk(t, order, uplo, trans, n, k, alpha, a, lda > 0 ? lda : 1, beta, want, ldc);
    assert_same(t, c, want, lc);
    free(a);
    free(c);
    free(want);
}

static void syrk_grid(void)
{
    static const int64_t ns[] = {0, 1, 4, 17, 33}, ks[] = {0, 1, 5, 19};
    for (int t = 0; t < NTYPES; t++)
        for (int o = 0; o < 2; o++)
            for (int u = 0; u < 2; u++)
                for (int tr = 0; tr < 3 - cplx(t); tr++) /* csyrk has no 'C' */
                    for (size_t in = 0; in < 5; in++)
                        for (size_t ik = 0; ik < 4; ik++)
                            for (size_t p = 0; p < N_AB; p++)
                                check_syrk(t, orders[o], "UL"[u], transes[tr], ns[in], ks[ik],
                                           (int64_t)(p % 3), scalar(t, ab_pairs[p][0]),
                                           scalar(t, ab_pairs[p][1]));
    /* Columns longer than the block of sums. */
    for (int t = 0; t < NTYPES; t++)
        for (int tr = 0; tr < 2; tr++) {
            const int64_t big = 8192 / (int64_t)tsize[t] + 5;
            check_syrk(t, 'C', 'L', transes[tr], big, 2, 0, scalar(t, 3), scalar(t, 4));
        }
}

static void test_syrk_equals_a_sequential_sum_per_element(void **state)
{
    (void)state;
    on_every_isa(syrk_grid);
}

static int lib_symm(int t, char order, char side, char uplo, int64_t m, int64_t n, cx alpha,
                    const void *a, int64_t lda, const void *b, int64_t ldb, cx beta, void *c,
                    int64_t ldc)
{
    const struct sc al = sc_of(alpha), be = sc_of(beta);
    switch (t) {
    case TS: return canon_ssymm(order, side, uplo, m, n, al.f[0], a, lda, b, ldb, be.f[0], c, ldc);
    case TD: return canon_dsymm(order, side, uplo, m, n, al.d[0], a, lda, b, ldb, be.d[0], c, ldc);
    case TC: return canon_csymm(order, side, uplo, m, n, al.f, a, lda, b, ldb, be.f, c, ldc);
    default: return canon_zsymm(order, side, uplo, m, n, al.d, a, lda, b, ldb, be.d, c, ldc);
    }
}

/* A_ip of the symmetric A, read from its uplo triangle. */
static cx sym_at(int t, char order, char uplo, const void *a, int64_t lda, int64_t i, int64_t p)
{
    const int stored = uplo == 'U' ? i <= p : i >= p;
    return stored ? ld(t, a, midx(order, i, p, lda)) : ld(t, a, midx(order, p, i, lda));
}

static void ref_symm(int t, char order, char side, char uplo, int64_t m, int64_t n, cx alpha,
                     const void *a, int64_t lda, const void *b, int64_t ldb, cx beta, void *c,
                     int64_t ldc)
{
    if (m == 0 || n == 0 || (is_zero(alpha) && is_one(beta)))
        return;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            const int64_t e = midx(order, i, j, ldc);
            if (is_zero(alpha)) {
                st(t, c, e, ab0(t, beta, ld(t, c, e)));
                continue;
            }
            cx s = {0, 0};
            for (int64_t p = 0; p < (side == 'L' ? m : n); p++) {
                /* u * v is the product in the operation's order */
                const cx u = side == 'L' ? sym_at(t, order, uplo, a, lda, i, p)
                                         : ld(t, b, midx(order, i, p, ldb));
                const cx v = side == 'L' ? ld(t, b, midx(order, p, j, ldb))
                                         : sym_at(t, order, uplo, a, lda, p, j);
                s = order == 'C' ? cmac(t, s, u, v) : cmac(t, s, v, u);
            }
            st(t, c, e, ab(t, alpha, beta, s, ld(t, c, e)));
        }
}

static void symm_grid(void)
{
    static const int64_t sizes[] = {0, 1, 4, 13, 40};
    for (int t = 0; t < NTYPES; t++)
        for (int o = 0; o < 2; o++)
            for (int sd = 0; sd < 2; sd++)
                for (int u = 0; u < 2; u++)
                    for (size_t im = 0; im < 5; im++)
                        for (size_t in = 0; in < 5; in++)
                            for (size_t p = 0; p < N_AB; p++) {
                                const char order = orders[o], side = "LR"[sd], uplo = "UL"[u];
                                if ((im == 4 || in == 4) && p != 6)
                                    continue; /* the wide shapes: one alpha/beta pair */
                                const int64_t m = sizes[im], n = sizes[in],
                                              ka = side == 'L' ? m : n;
                                const int64_t pad = (int64_t)(p % 2);
                                const int64_t lda = (ka > 0 ? ka : 1) + pad;
                                const int64_t ldb = (order == 'C' ? m : n) + 1 - pad;
                                const int64_t ldc = (order == 'C' ? m : n) + 2;
                                const int64_t lb = mlen(order, m, n, ldb > 0 ? ldb : 1);
                                const int64_t lc = mlen(order, m, n, ldc);
                                const cx alpha = scalar(t, ab_pairs[p][0]);
                                const cx beta = scalar(t, ab_pairs[p][1]);
                                void *a = rand_buf(t, mlen(order, ka, ka, lda));
                                void *b = rand_buf(t, lb), *c = rand_buf(t, lc);
                                void *want = dup_buf(t, c, lc);
                                describe("%csymm %c side=%c uplo=%c m=%lld n=%lld alpha=%g%+gi "
                                         "beta=%g%+gi",
                                         tname[t], order, side, uplo, (long long)m, (long long)n,
                                         alpha.re, alpha.im, beta.re, beta.im);
                                assert_int_equal(lib_symm(t, order, side, uplo, m, n, alpha, a, lda,
                                                          b, ldb > 0 ? ldb : 1, beta, c, ldc),
                                                 0);
                                ref_symm(t, order, side, uplo, m, n, alpha, a, lda, b,
                                         ldb > 0 ? ldb : 1, beta, want, ldc);
                                assert_same(t, c, want, lc);
                                free(a);
                                free(b);
                                free(c);
                                free(want);
                            }
}

static void test_symm_equals_a_sequential_sum_per_element(void **state)
{
    (void)state;
    on_every_isa(symm_grid);
}

static int lib_trm(int t, int solve, char order, char side, char uplo, char trans, char diag,
                   int64_t m, int64_t n, cx alpha, const void *a, int64_t lda, void *b, int64_t ldb)
{
    const struct sc al = sc_of(alpha);
    switch (t) {
    case TS:
        return solve ? canon_strsm(order, side, uplo, trans, diag, m, n, al.f[0], a, lda, b, ldb)
                     : canon_strmm(order, side, uplo, trans, diag, m, n, al.f[0], a, lda, b, ldb);
    case TD:
        return solve ? canon_dtrsm(order, side, uplo, trans, diag, m, n, al.d[0], a, lda, b, ldb)
                     : canon_dtrmm(order, side, uplo, trans, diag, m, n, al.d[0], a, lda, b, ldb);
    case TC:
        return solve ? canon_ctrsm(order, side, uplo, trans, diag, m, n, al.f, a, lda, b, ldb)
                     : canon_ctrmm(order, side, uplo, trans, diag, m, n, al.f, a, lda, b, ldb);
    default:
        return solve ? canon_ztrsm(order, side, uplo, trans, diag, m, n, al.d, a, lda, b, ldb)
                     : canon_ztrmm(order, side, uplo, trans, diag, m, n, al.d, a, lda, b, ldb);
    }
}

/* Both: alpha == 0 zeroes the logical B. */
static int zero_b(int t, char order, int64_t m, int64_t n, cx alpha, void *b, int64_t ldb)
{
    if (!is_zero(alpha))
        return 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++)
            st(t, b, midx(order, i, j, ldb), (cx){0, 0});
    return 1;
}

static void ref_trmm(int t, char order, char side, char uplo, char trans, char diag, int64_t m,
                     int64_t n, cx alpha, const void *a, int64_t lda, void *b, int64_t ldb)
{
    if (m == 0 || n == 0 || zero_b(t, order, m, n, alpha, b, ldb))
        return;
    void *old = dup_buf(t, b, mlen(order, m, n, ldb));
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            cx s = {0, 0};
            const int64_t kk = side == 'L' ? m : n;
            for (int64_t p = 0; p < kk; p++) {
                /* 'L': op(A)_ip * B_pj; 'R': B_ip * op(A)_pj */
                const int64_t ai = side == 'L' ? i : p, aj = side == 'L' ? p : j;
                const int64_t bi = side == 'L' ? p : i, bj = side == 'L' ? j : p;
                if (!in_tri(uplo, trans, ai, aj))
                    continue;
                const cx bv = ld(t, old, midx(order, bi, bj, ldb));
                if (ai == aj && diag == 'U') {
                    s = cadd(t, s, bv);
                    continue;
                }
                const cx av = op_at(t, order, trans, a, lda, ai, aj);
                const cx u = side == 'L' ? av : bv, v = side == 'L' ? bv : av;
                s = order == 'C' ? cmac(t, s, u, v) : cmac(t, s, v, u);
            }
            st(t, b, midx(order, i, j, ldb), cmul(t, alpha, s));
        }
    free(old);
}

static void ref_trsm(int t, char order, char side, char uplo, char trans, char diag, int64_t m,
                     int64_t n, cx alpha, const void *a, int64_t lda, void *b, int64_t ldb)
{
    if (m == 0 || n == 0 || zero_b(t, order, m, n, alpha, b, ldb))
        return;
    const int upper = (uplo == 'U') == (trans == 'N');
    /* side 'L' solves down each column, 'R' along each row; forward when
     * the unknowns' dependencies come first */
    const int forward = side == 'L' ? !upper : upper;
    const int64_t outer = side == 'L' ? n : m, inner = side == 'L' ? m : n;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t step = 0; step < inner; step++) {
            const int64_t q = forward ? step : inner - 1 - step;
            const int64_t i = side == 'L' ? q : o, j = side == 'L' ? o : q;
            const int64_t e = midx(order, i, j, ldb);
            cx s = is_one(alpha) ? ld(t, b, e) : cmul(t, alpha, ld(t, b, e));
            /* the off-diagonal terms in the solving order (version 2 of the
             * contract: a backward solve takes k decreasing) */
            for (int64_t kstep = 0; kstep < inner; kstep++) {
                const int64_t k = forward ? kstep : inner - 1 - kstep;
                /* 'L': op(A)_ik X_kj; 'R': X_ik op(A)_kj; off-diagonal only */
                const int64_t ai = side == 'L' ? i : k, aj = side == 'L' ? k : j;
                if (k == q || !in_tri(uplo, trans, ai, aj))
                    continue;
                const cx av = op_at(t, order, trans, a, lda, ai, aj);
                const cx xv =
                    ld(t, b, side == 'L' ? midx(order, k, j, ldb) : midx(order, i, k, ldb));
                /* the first factor of the (layout's) product is negated */
                const cx u = side == 'L' ? av : xv, v = side == 'L' ? xv : av;
                s = order == 'C' ? cmac(t, s, neg(u), v) : cmac(t, s, neg(v), u);
            }
            if (diag == 'N')
                s = cdiv(t, s, op_at(t, order, trans, a, lda, q, q));
            st(t, b, e, s);
        }
}

/* One trmm (solve: trsm) call against the reference. */
static void check_trm(int t, int solve, char order, char side, char uplo, char trans, char diag,
                      int64_t m, int64_t n, int64_t pad, cx alpha)
{
    const int64_t ka = side == 'L' ? m : n;
    const int64_t lda = (ka > 0 ? ka : 1) + pad;
    const int64_t ldb = (order == 'C' ? m : n) + 1;
    const int64_t lb = mlen(order, m, n, ldb);
    void *a = tri_buf(t, order, ka, lda);
    void *b = rand_buf(t, lb), *want = dup_buf(t, b, lb);
    describe("%ctr%s %c side=%c uplo=%c trans=%c diag=%c m=%lld n=%lld alpha=%g%+gi", tname[t],
             solve ? "sm" : "mm", order, side, uplo, trans, diag, (long long)m, (long long)n,
             alpha.re, alpha.im);
    assert_int_equal(lib_trm(t, solve, order, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb),
                     0);
    if (solve)
        ref_trsm(t, order, side, uplo, trans, diag, m, n, alpha, a, lda, want, ldb);
    else
        ref_trmm(t, order, side, uplo, trans, diag, m, n, alpha, a, lda, want, ldb);
    assert_same(t, b, want, lb);
    free(a);
    free(b);
    free(want);
}

static void trm_grid(void)
{
    static const int64_t sizes[] = {0, 1, 3, 11};
    for (int t = 0; t < NTYPES; t++)
        for (int solve = 0; solve < 2; solve++)
            for (int o = 0; o < 2; o++)
                for (int sd = 0; sd < 2; sd++)
                    for (int u = 0; u < 2; u++)
                        for (int tr = 0; tr < 3; tr++)
                            for (int d = 0; d < 2; d++) {
                                const char order = orders[o], side = "LR"[sd], uplo = "UL"[u];
                                const char trans = transes[tr], diag = "NU"[d];
                                for (size_t im = 0; im < 4; im++)
                                    for (size_t in = 0; in < 4; in++)
                                        for (int w = 0; w < 4; w++)
                                            check_trm(t, solve, order, side, uplo, trans, diag,
                                                      sizes[im], sizes[in], w % 2,
                                                      scalar(t, w == 3 ? 3 : w));
                                /* wide enough for the vector loops' full blocks */
                                check_trm(t, solve, order, side, uplo, trans, diag, 40, 37, 1,
                                          scalar(t, 3));
                            }
    /* Sums longer than one block, and more x values than one gathered
     * block (8 KiB each). */
    for (int t = 0; t < NTYPES; t++) {
        const int64_t big = 8192 / (int64_t)tsize[t] + 5;
        for (int solve = 0; solve < 2; solve++)
            for (int u = 0; u < 2; u++)
                for (int tr = 0; tr < 3; tr += 2) {
                    const char uplo = "UL"[u], trans = transes[tr];
                    check_trm(t, solve, 'C', 'R', uplo, trans, 'N', big, 3, 0, scalar(t, 4));
                    check_trm(t, solve, 'C', 'L', uplo, trans, 'N', 3, big, 0, scalar(t, 4));
                    if (u == 0 && tr == 0) { /* n^2 work: once */
                        check_trm(t, solve, 'C', 'R', uplo, trans, 'N', 2, big, 0, scalar(t, 1));
                        check_trm(t, solve, 'C', 'L', uplo, trans, 'N', big, 2, 0, scalar(t, 1));
                    }
                }
    }
}

static void test_trmm_and_trsm_equal_the_documented_order(void **state)
{
    (void)state;
    on_every_isa(trm_grid);
}

/* ---- semantics -------------------------------------------------------------- */

static void test_beta_zero_ignores_nan_in_the_output(void **state)
{
    (void)state;
    float a[6] = {1, 2, 3, 4, 5, 6}, x[3] = {1, 1, 1}, y[2] = {NAN, NAN};
    assert_int_equal(canon_sgemv('C', 'N', 2, 3, 1.0f, a, 2, x, 1, 0.0f, y, 1), 0);
    assert_true(y[0] == 9 && y[1] == 12);
    double c[4] = {NAN, NAN, NAN, NAN}, b[4] = {1, 0, 0, 1}, s[4] = {2, 0, 0, 3};
    assert_int_equal(canon_dsymm('C', 'L', 'U', 2, 2, 1.0, s, 2, b, 2, 0.0, c, 2), 0);
    assert_true(c[0] == 2 && c[1] == 0 && c[2] == 0 && c[3] == 3);
    double c2[4] = {NAN, NAN, NAN, NAN};
    assert_int_equal(canon_dsyrk('C', 'L', 'N', 2, 2, 1.0, b, 2, 0.0, c2, 2), 0);
    assert_true(c2[0] == 1 && c2[1] == 0 && c2[3] == 1);
    assert_true(isnan(c2[2])); /* the other triangle is not written */
}

static void test_alpha_zero_reads_neither_matrix_nor_vector(void **state)
{
    (void)state;
    float a[4] = {NAN, NAN, NAN, NAN}, x[2] = {NAN, INFINITY}, y[2] = {1, 2};
    assert_int_equal(canon_sgemv('R', 'T', 2, 2, 0.0f, a, 2, x, 1, 2.0f, y, 1), 0);
    assert_true(y[0] == 2 && y[1] == 4);
    assert_int_equal(canon_saxpy(2, 0.0f, x, 1, y, 1), 0);
    assert_true(y[0] == 2 && y[1] == 4);
    double b[4] = {NAN, 1, INFINITY, 2}, t[4] = {NAN, NAN, NAN, NAN};
    assert_int_equal(canon_dtrsm('C', 'L', 'U', 'N', 'N', 2, 2, 0.0, t, 2, b, 2), 0);
    assert_true(b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0);
    double b2[4] = {NAN, 1, INFINITY, 2};
    assert_int_equal(canon_dtrmm('R', 'R', 'L', 'C', 'U', 2, 2, 0.0, t, 2, b2, 2), 0);
    assert_true(b2[0] == 0 && b2[1] == 0 && b2[2] == 0 && b2[3] == 0);
    float m[4] = {1, 2, 3, 4};
    assert_int_equal(canon_sger('C', 2, 2, 0.0f, x, 1, x, 1, m, 2), 0);
    assert_true(m[0] == 1 && m[3] == 4);
}

static void test_nan_and_inf_propagate_with_no_zero_skipping(void **state)
{
    (void)state;
    /* ger with y_j == 0 still forms NaN * 0 (the reference BLAS skips it) */
    float x[2] = {NAN, 1}, y[2] = {0, 1}, a[4] = {0, 0, 0, 0};
    assert_int_equal(canon_sger('C', 2, 2, 1.0f, x, 1, y, 1, a, 2), 0);
    assert_true(isnan(a[0]) && a[1] == 0 && isnan(a[2]) && a[3] == 1);
    /* trsm with a zero right-hand side still multiplies by A */
    double t[4] = {1, INFINITY, 0, 1}, b[2] = {0, 1};
    assert_int_equal(canon_dtrsm('C', 'L', 'L', 'N', 'U', 2, 1, 1.0, t, 2, b, 2), 0);
    assert_true(b[0] == 0 && isnan(b[1]));
    float d;
    float inf[3] = {1, INFINITY, 2}, one[3] = {1, 1, 1};
    assert_int_equal(canon_sdot(3, inf, 1, one, 1, &d), 0);
    assert_true(isinf(d) && d > 0);
    /* scal always multiplies: 0 * NaN is NaN */
    float v[2] = {NAN, 3};
    assert_int_equal(canon_sscal(2, 0.0f, v, 1), 0);
    assert_true(isnan(v[0]) && v[1] == 0);
}

static void test_nrm2_does_not_overflow_or_underflow_needlessly(void **state)
{
    (void)state;
    float big[2] = {3e30f, 4e30f}, tiny[2] = {3e-40f, 4e-40f}, r;
    assert_int_equal(canon_snrm2(2, big, 1, &r), 0);
    assert_true(fabsf(r - 5e30f) <= 5e30f * 1e-6f);
    assert_int_equal(canon_snrm2(2, tiny, 1, &r), 0);
    assert_true(fabsf(r - 5e-40f) <= 5e-40f * 1e-3f); /* subnormal inputs: few bits */
    /* A long vector's small terms are kept (scipy's test_stable): 10^4 and
     * 10^4 ones is sqrt(10^8 + 10^4) = 10000.49999 */
    static float ones[10001];
    ones[0] = 1e4f;
    for (int i = 1; i <= 10000; i++)
        ones[i] = 1;
    assert_int_equal(canon_snrm2(10001, ones, 1, &r), 0);
    assert_true(r == 10000.5f);
    double zbig[2] = {3e300, 4e300}, rd;
    assert_int_equal(canon_dznrm2(1, zbig, 1, &rd), 0);
    assert_true(fabs(rd - 5e300) <= 5e300 * 1e-15);
    double with_nan[3] = {INFINITY, NAN, 1};
    assert_int_equal(canon_dnrm2(3, with_nan, 1, &rd), 0);
    assert_true(isnan(rd));
    assert_int_equal(canon_dnrm2(2, with_nan, 1, &rd), 0);
    assert_true(isnan(rd));
    assert_int_equal(canon_dnrm2(1, with_nan, 1, &rd), 0);
    assert_true(isinf(rd));
    assert_int_equal(canon_dnrm2(3, with_nan, -1, &rd), 0);
    assert_true(rd == 0); /* incx <= 0: zero, as the BLAS */
}

/* Every routine family rejects what the BLAS rejects, and then writes
 * nothing. */
static void test_bad_arguments_return_minus_one_and_touch_nothing(void **state)
{
    (void)state;
    float a[16], x[4], y[4], b[16];
    for (int i = 0; i < 16; i++)
        a[i] = b[i] = (float)i;
    for (int i = 0; i < 4; i++)
        x[i] = y[i] = (float)i;
    float a0[16], b0[16], y0[4];
    memcpy(a0, a, sizeof a);
    memcpy(b0, b, sizeof b);
    memcpy(y0, y, sizeof y);
    float zero2[2] = {0, 0}, one2[2] = {1, 0};

    assert_int_equal(canon_sgemv('X', 'N', 2, 2, 1, a, 2, x, 1, 0, y, 1), -1);
    assert_int_equal(canon_sgemv('C', 'Q', 2, 2, 1, a, 2, x, 1, 0, y, 1), -1);
    assert_int_equal(canon_sgemv('C', 'N', -1, 2, 1, a, 2, x, 1, 0, y, 1), -1);
    assert_int_equal(canon_sgemv('C', 'N', 3, 2, 1, a, 2, x, 1, 0, y, 1), -1);
    assert_int_equal(canon_sgemv('R', 'N', 2, 3, 1, a, 2, x, 1, 0, y, 1), -1);
    assert_int_equal(canon_sgemv('C', 'N', 2, 2, 1, a, 2, x, 0, 0, y, 1), -1);
    assert_int_equal(canon_sgemv('C', 'N', 2, 2, 1, a, 2, x, 1, 0, y, 0), -1);
    assert_int_equal(canon_sger('C', 3, 2, 1, x, 1, y, 1, a, 2), -1);
    assert_int_equal(canon_sger('C', 2, 2, 1, x, 0, y, 1, a, 2), -1);
    assert_int_equal(canon_strmv('C', 'X', 'N', 'N', 2, a, 2, y, 1), -1);
    assert_int_equal(canon_strsv('C', 'U', 'N', 'X', 2, a, 2, y, 1), -1);
    assert_int_equal(canon_strsv('C', 'U', 'N', 'N', 3, a, 2, y, 1), -1);
    assert_int_equal(canon_strsv('C', 'U', 'N', 'N', 2, a, 2, y, 0), -1);
    assert_int_equal(canon_ssyrk('C', 'U', 'N', 2, 3, 1, a, 1, 0, b, 2), -1);
    assert_int_equal(canon_ssyrk('C', 'U', 'T', 2, 3, 1, a, 2, 0, b, 2), -1);
    assert_int_equal(canon_ssyrk('C', 'U', 'N', 3, 1, 1, a, 3, 0, b, 2), -1);
    assert_int_equal(canon_csyrk('C', 'U', 'C', 2, 2, one2, a, 2, zero2, b, 2), -1);
    assert_int_equal(canon_ssymm('C', 'X', 'U', 2, 2, 1, a, 2, b, 2, 0, b, 2), -1);
    assert_int_equal(canon_ssymm('C', 'R', 'U', 2, 3, 1, a, 2, b, 2, 0, b, 2), -1);
    assert_int_equal(canon_ssymm('R', 'L', 'U', 2, 3, 1, a, 2, b, 3, 0, b, 2), -1);
    assert_int_equal(canon_strmm('C', 'L', 'U', 'N', 'N', 3, 2, 1, a, 2, b, 3), -1);
    assert_int_equal(canon_strmm('C', 'L', 'U', 'N', 'N', 2, 2, 1, a, 2, b, 1), -1);
    assert_int_equal(canon_strsm('C', 'L', 'U', 'X', 'N', 2, 2, 1, a, 2, b, 2), -1);
    assert_int_equal(canon_strsm('R', 'R', 'U', 'N', 'N', 2, 3, 1, a, 2, b, 3), -1);
    assert_int_equal(canon_strsm('C', 'L', 'U', 'N', 'N', -2, 2, 1, a, 2, b, 2), -1);
    assert_memory_equal(a, a0, sizeof a);
    assert_memory_equal(b, b0, sizeof b);
    assert_memory_equal(y, y0, sizeof y);
    /* lower case is accepted, as by the Fortran BLAS */
    assert_int_equal(canon_sgemv('c', 'n', 2, 2, 1, a, 2, x, 1, 0, y, 1), 0);
    assert_int_equal(canon_strsm('r', 'l', 'u', 'c', 'u', 2, 2, 1, a, 2, b, 2), 0);
}

static void test_isa_can_be_chosen_and_unknown_names_are_refused(void **state)
{
    (void)state;
    assert_int_equal(canon_blas_set_isa("scalar"), 0);
    assert_string_equal(canon_blas_isa(), "scalar");
    assert_int_equal(canon_blas_set_isa("sse9"), -1);
    assert_string_equal(canon_blas_isa(), "scalar");
    assert_int_equal(canon_blas_set_isa("auto"), 0);
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    assert_string_equal(canon_blas_isa(),
                        canon_cpu_has_avx512() ? "avx512" : avx2 ? "avx2" : "scalar");
    assert_int_equal(canon_blas_set_isa("avx2"), avx2 ? 0 : -1);
    assert_int_equal(canon_blas_set_isa("avx512"), canon_cpu_has_avx512() ? 0 : -1);
    if (canon_cpu_has_avx512())
        assert_string_equal(canon_blas_isa(), "avx512");
    assert_int_equal(canon_blas_set_isa(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dot_equals_the_lanes_and_tree_order),
        cmocka_unit_test(test_nrm2_and_asum_equal_the_scaled_lanes_order),
        cmocka_unit_test(test_dot_nrm2_and_asum_same_bits_any_thread_count),
        cmocka_unit_test(test_axpy_equals_one_fma_per_element),
        cmocka_unit_test(test_scal_equals_one_product_per_element),
        cmocka_unit_test(test_gemv_equals_a_sequential_sum_or_lanes_per_output),
        cmocka_unit_test(test_gemv_same_bits_any_thread_count),
        cmocka_unit_test(test_ger_equals_one_fma_per_element_after_alpha),
        cmocka_unit_test(test_trmv_and_trsv_equal_the_documented_substitution),
        cmocka_unit_test(test_syrk_equals_a_sequential_sum_per_element),
        cmocka_unit_test(test_symm_equals_a_sequential_sum_per_element),
        cmocka_unit_test(test_trmm_and_trsm_equal_the_documented_order),
        cmocka_unit_test(test_beta_zero_ignores_nan_in_the_output),
        cmocka_unit_test(test_alpha_zero_reads_neither_matrix_nor_vector),
        cmocka_unit_test(test_nan_and_inf_propagate_with_no_zero_skipping),
        cmocka_unit_test(test_nrm2_does_not_overflow_or_underflow_needlessly),
        cmocka_unit_test(test_bad_arguments_return_minus_one_and_touch_nothing),
        cmocka_unit_test(test_isa_can_be_chosen_and_unknown_names_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
