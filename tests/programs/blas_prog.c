/* A C program on the system BLAS for the integration tests: a fixed series
 * of calls across routines, precisions, layouts and both interfaces, then
 * one line with a hash of every output bit. `blas_prog perturb K` changes
 * one input element just before call K (the test expects detdiff to say
 * "inputs differ" there); `blas_prog repeat N` runs the series N times;
 * `blas_prog kill 1` ends with SIGKILL, as an OOM killer would.
 */
#include <cblas.h>
#include <complex.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The Fortran interface, as gfortran-built OpenBLAS exports it. */
void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b,
            const int *ldb, const double *beta, double *c, const int *ldc);
double complex zdotc_(const int *n, const double complex *x, const int *incx,
                      const double complex *y, const int *incy);

static uint64_t hash = 1469598103934665603ull;
static int perturb_at = -1, call_no;

static void mix(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        hash = (hash ^ b[i]) * 1099511628211ull;
}

static void fill(double *x, int n, int seed)
{
    uint64_t s = (uint64_t)seed * 2654435761u + 1;
    for (int i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (double)(int64_t)(s >> 11) / (double)(1ull << 53);
    }
}

/* Called before each BLAS call with that call's first input. */
static void before(double *first_input)
{
    if (call_no++ == perturb_at)
        first_input[0] += 1.0;
}

static void series(void)
{
    enum { N = 64 };
    static double a[N * N], b[N * N], c[N * N], x[2 * N], y[2 * N];
    static float sa[N * N], sb[N * N], sc[N * N];
    static double complex za[N * N], zb[N * N], zc[N * N];
    fill(a, N * N, 1);
    fill(b, N * N, 2);
    fill(c, N * N, 3);
    fill(x, 2 * N, 4);
    fill(y, 2 * N, 5);
    for (int i = 0; i < N * N; i++) {
        sa[i] = (float)a[i];
        sb[i] = (float)b[i];
        za[i] = a[i] + I * b[i];
        zb[i] = b[i] - I * a[i];
        zc[i] = c[i];
    }

    before(a); /* 0: row-major, one transpose, padded leading dimensions */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, 7, 5, 9, 0.5, a, 11, b, 13, -1.0, c, 6);
    mix(c, sizeof c);
    before(a); /* 1 */
    sa[0] = (float)a[0];
    cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, 17, 19, 23, 1.0f, sa, 29, sb, 31, 0.0f, sc, 17);
    mix(sc, sizeof sc);
    before(a); /* 2: the Fortran interface */
    {
        int m = 13, n = 11, k = 7, lda = 13, ldb = 7, ldc = 13;
        double alpha = 1.25, beta = 0.5;
        dgemm_("N", "N", &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
        mix(c, sizeof c);
    }
    before(a); /* 3 */
    za[0] = a[0] + I * b[0];
    {
        double complex alpha = 1.0 - 0.5 * I, beta = 0.25 * I;
        cblas_zgemm(CblasColMajor, CblasConjTrans, CblasNoTrans, 5, 6, 7, &alpha, za, 9, zb, 8, &beta, zc, 5);
        mix(zc, sizeof zc);
    }
    before(x); /* 4 */
    cblas_dgemv(CblasColMajor, CblasTrans, 20, 10, 2.0, a, 21, x, 1, 0.0, y, 2);
    mix(y, sizeof y);
    before(x); /* 5: strided dot */
    double d = cblas_ddot(30, x, 2, y, 3);
    mix(&d, sizeof d);
    before(x); /* 6: negative increment */
    cblas_daxpy(25, -0.75, x, -1, y, 2);
    mix(y, sizeof y);
    before(x); /* 7 */
    d = cblas_dnrm2(40, x, 1);
    mix(&d, sizeof d);
    before(a); /* 8: triangular solve reads one triangle only */
    for (int i = 0; i < 12; i++)
        a[i * 12 + i] += 4.0; /* keep it well conditioned */
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, 12, 8, 1.0, a, 12, b, 12);
    mix(b, sizeof b);
    before(a); /* 9 */
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, 10, 6, 1.0, a, 6, 0.5, c, 10);
    mix(c, sizeof c);
    before(x); /* 10: complex-valued Fortran function */
    {
        int n = 9, inc = 1;
        zb[0] = x[0];
        double complex z = zdotc_(&n, za, &inc, zb, &inc);
        mix(&z, sizeof z);
    }
    before(x); /* 11 */
    size_t imax = cblas_idamax(50, x, 1);
    mix(&imax, sizeof imax);
}

int main(int argc, char **argv)
{
    int repeat = 1, kill_at_end = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "perturb") == 0)
            perturb_at = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "repeat") == 0)
            repeat = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "kill") == 0)
            kill_at_end = atoi(argv[i + 1]);
    }
    for (int r = 0; r < repeat; r++)
        series();
    printf("%016llx\n", (unsigned long long)hash);
    fflush(stdout);
    if (kill_at_end)
        raise(SIGKILL);
    return 0;
}
