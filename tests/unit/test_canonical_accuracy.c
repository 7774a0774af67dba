/* The canonical LANES reductions (dot, nrm2, asum, gemv 'T'; the order of
 * shim/blas/canonical.h) are about as accurate as the vendor's: on vectors
 * of 10^6 elements, of one sign (where the rounding errors add up) and of
 * both, every routine's error against a long-double reference is within
 * the worst-case bound the order gives (at most 2048 + log2(chunks) + 5
 * roundings on any term's way to the result, times the sum of the
 * magnitudes), and within a factor of 8 of OpenBLAS's error on the same
 * data or of the error a random walk of those roundings would give
 * (OpenBLAS's own error can be far below that by luck, or where it sums in
 * a wider type, so it alone is no floor). The errors are printed for
 * docs/benchmarks.md.
 * OpenBLAS is loaded with dlopen, so no build depends on it; without it
 * the bound alone is checked and the comparison is said to be skipped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four above first */
#include <cmocka.h>

#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "blas/canonical.h"

#define N 1000000

static void *lib;
static double (*v_ddot)(int, const double *, int, const double *, int);
static float (*v_sdot)(int, const float *, int, const float *, int);
static double (*v_dnrm2)(int, const double *, int);
static double (*v_dasum)(int, const double *, int);
static void (*v_sgemv)(int, int, int, int, float, const float *, int, const float *, int, float,
                       float *, int);

static int setup(void **state)
{
    (void)state;
    lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (lib) {
        *(void **)&v_ddot = dlsym(lib, "cblas_ddot");
        *(void **)&v_sdot = dlsym(lib, "cblas_sdot");
        *(void **)&v_dnrm2 = dlsym(lib, "cblas_dnrm2");
        *(void **)&v_dasum = dlsym(lib, "cblas_dasum");
        *(void **)&v_sgemv = dlsym(lib, "cblas_sgemv");
    }
    if (!lib || !v_ddot || !v_sdot || !v_dnrm2 || !v_dasum || !v_sgemv) {
        print_message("SKIP (comparison only): libopenblas.so.0 with cblas is not installed; "
                      "the error bound is still checked\n");
        lib = NULL;
    }
    return 0;
}

static unsigned seed = 7;

/* Uniform in [lo, lo + 1). */
static double frand(double lo)
{
    seed = seed * 1103515245u + 12345u;
    return (double)(seed >> 8) / (double)(1u << 24) + lo;
}

/* The partial sums the LANES order forms over the terms t (n of them),
 * lo .. hi of the chunks' lane sums s joined by the fixed tree J as the
 * order joins them; adds the square of every sum it forms to *sq. */
enum { CHUNK = 32768, LANES = 16 };

static void join(double *s, int lo, int hi, double *sq)
{
    if (hi - lo == 1)
        return;
    int half = 1;
    while (2 * half < hi - lo)
        half *= 2;
    join(s, lo, lo + half, sq);
    join(s, lo + half, hi, sq);
    for (int l = 0; l < LANES; l++) {
        s[lo * LANES + l] += s[(lo + half) * LANES + l];
        *sq += s[lo * LANES + l] * s[lo * LANES + l];
    }
}

/* A random walk of the roundings of the LANES order on the terms t: each
 * rounding errs by up to eps times the sum it makes, so the walk is eps
 * times the root of the sum of the squares of every partial sum the
 * order forms -- the lanes' running sums (which grow with the terms when
 * these share a sign, so a walk over the terms alone would be far too
 * small), the joins of the chunks and the last joins of the lanes. */
static double lanes_walk(const double *t, int n, double eps)
{
    const int chunks = (n + CHUNK - 1) / CHUNK;
    double *s = calloc((size_t)chunks * LANES, sizeof *s), sq = 0;
    assert_non_null(s);
    for (int i = 0; i < n; i++) {
        double *lane = &s[(size_t)(i / CHUNK) * LANES + i % LANES];
        *lane += t[i];
        sq += *lane * *lane;
    }
    join(s, 0, chunks, &sq);
    for (int h = 8; h >= 1; h /= 2)
        for (int l = 0; l < h; l++) {
            s[l] += s[l + h];
            sq += s[l] * s[l];
        }
    free(s);
    return eps * sqrt(sq);
}

/* The error of got against ref, the order's bound for sum |terms| = mag
 * in precision eps, the walk of its roundings (lanes_walk) and
 * OpenBLAS's error (negative without it). */
static void check(const char *what, double got, long double ref, double mag, double walk,
                  double eps, double vendor)
{
    const double err = fabs((double)((long double)got - ref));
    const double chunks = ceil((double)N / 32768.0);
    const double bound = (2048.0 + ceil(log2(chunks)) + 5.0) * eps * mag;
    print_message("%-24s canonical error %.3g, bound %.3g, walk %.3g", what, err, bound, walk);
    if (vendor >= 0)
        print_message(", OpenBLAS error %.3g", vendor);
    print_message("\n");
    assert_true(err <= bound);
    assert_true(err <= 8 * (vendor > walk ? vendor : walk));
}

static void accuracy(double lo)
{
    double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *z = malloc(N * sizeof *z);
    float *xf = malloc(N * sizeof *xf), *yf = malloc(N * sizeof *yf);
    assert_true(x && y && z && xf && yf);
    for (int i = 0; i < N; i++) {
        xf[i] = (float)frand(lo);
        yf[i] = (float)frand(0);
        x[i] = xf[i];
        y[i] = yf[i];
    }
    /* nrm2's vector has every bit of a double: the squares of x (24-bit
     * values) end in bits that the lane sums round off with a bias
     * (squares mod 32 take 7 values), so their errors add up linearly
     * and no walk describes them; x's own sums have no such bias. */
    for (int i = 0; i < N; i++)
        z[i] = x[i] + ldexp(frand(0) + ldexp(frand(0), -24), -24);
    long double dot = 0, nrm = 0, asum = 0;
    double mag = 0;
    for (int i = 0; i < N; i++) {
        dot += (long double)x[i] * y[i];
        nrm += (long double)z[i] * z[i];
        asum += fabsl((long double)x[i]);
        mag += fabs(x[i] * y[i]);
    }
    const long double norm = sqrtl(nrm);
    /* The walks over the terms: x*y for the dots; x^2 for nrm2 (the
     * root then halves the relative error); |x| for asum. */
    double *t = malloc(N * sizeof *t), walk_dot, walk_sdot, walk_nrm, walk_asum;
    assert_non_null(t);
    for (int i = 0; i < N; i++)
        t[i] = x[i] * y[i];
    walk_dot = lanes_walk(t, N, DBL_EPSILON / 2);
    walk_sdot = lanes_walk(t, N, FLT_EPSILON / 2);
    for (int i = 0; i < N; i++)
        t[i] = z[i] * z[i];
    walk_nrm = lanes_walk(t, N, DBL_EPSILON / 2) / (2 * (double)norm);
    for (int i = 0; i < N; i++)
        t[i] = fabs(x[i]);
    walk_asum = lanes_walk(t, N, DBL_EPSILON / 2);
    free(t);
    double d;
    float f;
    char what[64];

    snprintf(what, sizeof what, "ddot (x from %g)", lo);
    canon_ddot(N, x, 1, y, 1, &d);
    check(what, d, dot, mag, walk_dot, DBL_EPSILON / 2,
          lib ? fabs((double)((long double)v_ddot(N, x, 1, y, 1) - dot)) : -1);
    snprintf(what, sizeof what, "sdot (x from %g)", lo);
    canon_sdot(N, xf, 1, yf, 1, &f);
    check(what, f, dot, mag, walk_sdot, FLT_EPSILON / 2,
          lib ? fabs((double)((long double)v_sdot(N, xf, 1, yf, 1) - dot)) : -1);
    snprintf(what, sizeof what, "dnrm2 (x from %g)", lo);
    canon_dnrm2(N, z, 1, &d);
    check(what, d, norm, (double)norm, walk_nrm, DBL_EPSILON / 2,
          lib ? fabs((double)((long double)v_dnrm2(N, z, 1) - norm)) : -1);
    snprintf(what, sizeof what, "dasum (x from %g)", lo);
    canon_dasum(N, x, 1, &d);
    check(what, d, asum, (double)asum, walk_asum, DBL_EPSILON / 2,
          lib ? fabs((double)((long double)v_dasum(N, x, 1) - asum)) : -1);
    /* sgemv 'T' with one column: the column dot of x with y. */
    float yv = 0, vv = 0;
    snprintf(what, sizeof what, "sgemv T (x from %g)", lo);
    canon_sgemv('C', 'T', N, 1, 1.0f, xf, N, yf, 1, 0.0f, &yv, 1);
    if (lib)
        v_sgemv(102, 112, N, 1, 1.0f, xf, N, yf, 1, 0.0f, &vv, 1);
    check(what, yv, dot, mag, walk_sdot, FLT_EPSILON / 2,
          lib ? fabs((double)((long double)vv - dot)) : -1);
    free(x);
    free(y);
    free(z);
    free(xf);
    free(yf);
}

static void test_long_reductions_are_as_accurate_as_openblas(void **state)
{
    (void)state;
    accuracy(0);    /* one sign: errors accumulate */
    accuracy(-0.5); /* both signs */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_reductions_are_as_accurate_as_openblas),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
