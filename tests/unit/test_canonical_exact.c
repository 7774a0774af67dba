/* copy, swap and i?amax have no canonical kernel: canonical mode runs the
 * vendor BLAS for them (pinned), and docs/canonical-blas.md declares them
 * exact by construction, since they do no floating-point arithmetic that
 * could round differently (copy and swap move elements; i?amax compares
 * |x_i|, or |re| + |im| for complex, one rounded add that every kernel
 * does alike, and returns the first index of the largest). This test
 * checks that declaration on the vendor this machine has: OpenBLAS
 * (loaded with dlopen, so no build depends on it), at 1 .. 8 threads, on
 * vectors long enough for it to split the work, with ties and strides,
 * gives exactly the reference BLAS's results, computed here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four above first */
#include <cmocka.h>

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N ((1 << 20) + 13)

static void *lib;
static void (*set_threads)(int);

static void *sym(const char *name)
{
    void *p = dlsym(lib, name);
    assert_non_null(p);
    return p;
}

static int setup(void **state)
{
    (void)state;
    lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (lib)
        *(void **)&set_threads = dlsym(lib, "openblas_set_num_threads");
    return 0;
}

static int have_vendor(void)
{
    if (!lib || !set_threads) {
        print_message("SKIP: libopenblas.so.0 is not installed: the vendor cannot be checked\n");
        return 0;
    }
    return 1;
}

static unsigned seed = 1;

static double frand(void)
{
    seed = seed * 1103515245u + 12345u;
    return (double)(seed >> 9) / (double)(1u << 23) - 0.5;
}

/* Values of part e of a vector of `parts` parts: random, with the largest
 * magnitude placed twice (a tie the first index must win) well inside. */
static void fill(double *v, size_t parts)
{
    for (size_t e = 0; e < parts; e++)
        v[e] = frand();
    v[parts / 3] = 7.5;
    v[2 * parts / 3] = -7.5;
}

/* The reference BLAS's i?amax, 1-based (0 for n < 1 or inc <= 0), over
 * |x| (real) or |re| + |im| (complex), first index of the largest. */
static size_t ref_iamax(const double *v, int cplx, long n, long inc)
{
    if (n < 1 || inc <= 0)
        return 0;
    size_t best = 1;
    double m = -1;
    for (long i = 0; i < n; i++) {
        const double *e = v + (cplx ? 2 : 1) * i * inc;
        double a = cplx ? fabs(e[0]) + fabs(e[1]) : fabs(e[0]);
        if (a > m) {
            m = a;
            best = (size_t)i + 1;
        }
    }
    return best;
}

static void test_iamax_is_exact_at_every_thread_count(void **state)
{
    (void)state;
    if (!have_vendor())
        skip();
    size_t (*idamax)(int, const double *, int) = sym("cblas_idamax");
    size_t (*izamax)(int, const void *, int) = sym("cblas_izamax");
    size_t (*isamax)(int, const float *, int) = sym("cblas_isamax");
    double *x = malloc(2 * sizeof(double) * (size_t)N * 3);
    float *xf = malloc(sizeof(float) * (size_t)N * 3);
    assert_non_null(x);
    assert_non_null(xf);
    fill(x, 2 * (size_t)N * 3);
    for (size_t e = 0; e < (size_t)N * 3; e++)
        xf[e] = (float)x[e];
    static const int incs[] = {1, 2, 3};
    for (int th = 1; th <= 8; th++) {
        set_threads(th);
        for (size_t i = 0; i < sizeof incs / sizeof *incs; i++) {
            const int inc = incs[i];
            /* cblas returns the 0-based index */
            assert_int_equal(idamax(N, x, inc) + 1, ref_iamax(x, 0, N, inc));
            assert_int_equal(izamax(N, x, inc) + 1, ref_iamax(x, 1, N, inc));
            size_t want = 1;
            float m = -1;
            for (long k = 0; k < N; k++)
                if (fabsf(xf[k * inc]) > m)
                    m = fabsf(xf[k * inc]), want = (size_t)k + 1;
            assert_int_equal(isamax(N, xf, inc) + 1, want);
        }
    }
    set_threads(1);
    free(x);
    free(xf);
}

/* y as the reference BLAS's copy leaves it: y_i = x_i, logical elements
 * (negative steps count from the far end). */
static void ref_copy(long n, const double *x, long incx, double *y, long incy)
{
    for (long i = 0; i < n; i++) {
        long xi = incx >= 0 ? i * incx : (n - 1 - i) * -incx;
        long yi = incy >= 0 ? i * incy : (n - 1 - i) * -incy;
        y[yi] = x[xi];
    }
}

static void test_copy_and_swap_are_exact_at_every_thread_count(void **state)
{
    (void)state;
    if (!have_vendor())
        skip();
    void (*dcopy)(int, const double *, int, double *, int) = sym("cblas_dcopy");
    void (*dswap)(int, double *, int, double *, int) = sym("cblas_dswap");
    const size_t len = 3 * (size_t)N + 1;
    double *x = malloc(len * sizeof *x), *y = malloc(len * sizeof *y);
    double *wx = malloc(len * sizeof *wx), *wy = malloc(len * sizeof *wy);
    double *x0 = malloc(len * sizeof *x0), *y0 = malloc(len * sizeof *y0);
    assert_true(x && y && wx && wy && x0 && y0);
    fill(x0, len);
    fill(y0, len);
    /* NaN and signed zero pass through bit for bit. */
    x0[5] = NAN;
    x0[6] = -0.0;
    static const int incs[][2] = {{1, 1}, {2, -3}, {-1, 2}, {0, 1}};
    for (int th = 1; th <= 8; th++) {
        set_threads(th);
        for (size_t i = 0; i < sizeof incs / sizeof *incs; i++) {
            const int ix = incs[i][0], iy = incs[i][1];
            memcpy(y, y0, len * sizeof *y);
            memcpy(wy, y0, len * sizeof *y);
            dcopy(N, x0, ix, y, iy);
            ref_copy(N, x0, ix, wy, iy);
            assert_memory_equal(y, wy, len * sizeof *y);
            if (ix == 0)
                continue; /* swap with a zero step is not well defined */
            memcpy(x, x0, len * sizeof *x);
            memcpy(y, y0, len * sizeof *y);
            memcpy(wx, x0, len * sizeof *x);
            memcpy(wy, y0, len * sizeof *y);
            dswap(N, x, ix, y, iy);
            ref_copy(N, x0, ix, wy, iy);
            ref_copy(N, y0, iy, wx, ix);
            assert_memory_equal(x, wx, len * sizeof *x);
            assert_memory_equal(y, wy, len * sizeof *y);
        }
    }
    set_threads(1);
    free(x), free(y), free(wx), free(wy), free(x0), free(y0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iamax_is_exact_at_every_thread_count),
        cmocka_unit_test(test_copy_and_swap_are_exact_at_every_thread_count),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
