/* A fake BLAS for tests: cblas_sgemm, cblas_dgemm, sgemm_, dgemm_,
 * cblas_ddot and ddot_ with straightforward, correct loops, EXCEPT that
 * every result is deliberately nondeterministic from one process to the
 * next. It stands in for a vendor library whose output depends on things a
 * program does not control (thread count, kernel picked per CPU, atomics),
 * so the tests can check that detdiff flags "same inputs, different
 * outputs" and names this call as the culprit.
 *
 * Why the output varies: once per process a perturbation p in 1..255 is
 * drawn from /dev/urandom (falling back to the pid and the clock), and the
 * low 8 mantissa bits of the first output element (C[0][0] of a gemm, the
 * value of a dot) are XORed with p. The change is a few ulps: the results
 * stay close to right, but two runs differ in their bits (except when they
 * happen to draw the same p, 1 time in 255). Tests that need a sure
 * outcome set FAKEBLAS_PERTURB=N (0..255) in each run: 0 gives exact
 * results, and two different values give two different outputs.
 *
 * Only what the tests need: no argument checking beyond skipping empty
 * shapes, no complex routines, no ILP64 names.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

enum { ROW_MAJOR = 101, COL_MAJOR = 102, NO_TRANS = 111 };

static pthread_once_t perturb_once = PTHREAD_ONCE_INIT;
static unsigned perturb_bits;

static void perturb_init(void)
{
    const char *env = getenv("FAKEBLAS_PERTURB");
    if (env && *env) {
        perturb_bits = (unsigned)strtoul(env, NULL, 0) & 0xffu;
        return;
    }
    unsigned char byte = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, &byte, 1) != 1) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        byte = (unsigned char)((unsigned)getpid() ^ (unsigned)ts.tv_nsec);
    }
    if (fd >= 0)
        close(fd);
    perturb_bits = 1u + byte % 255u; /* never 0: every run is perturbed */
}

static unsigned perturbation(void)
{
    pthread_once(&perturb_once, perturb_init);
    return perturb_bits;
}

static void perturb_f32(float *v)
{
    uint32_t bits;
    memcpy(&bits, v, sizeof bits);
    bits ^= perturbation();
    memcpy(v, &bits, sizeof bits);
}

static void perturb_f64(double *v)
{
    uint64_t bits;
    memcpy(&bits, v, sizeof bits);
    bits ^= perturbation();
    memcpy(v, &bits, sizeof bits);
}

/* Offset of element (i, j) of a matrix stored in `order` with leading
 * dimension ld; with `trans` the stored matrix is the transpose. */
static size_t at(int order, int trans, long i, long j, long ld)
{
    if (trans) {
        long t = i;
        i = j;
        j = t;
    }
    return (size_t)(order == ROW_MAJOR ? i * ld + j : i + j * ld);
}

/* C = alpha * op(A) op(B) + beta * C, summed in order l = 0..k-1. C is not
 * read when beta == 0, A and B are not read when alpha == 0 (BLAS rules). */
#define FAKE_GEMM(NAME, T, PERTURB)                                                  \
    static void NAME(int order, int ta, int tb, long m, long n, long k, T alpha,     \
                     const T *a, long lda, const T *b, long ldb, T beta, T *c,       \
                     long ldc)                                                       \
    {                                                                                \
        if (m <= 0 || n <= 0)                                                        \
            return;                                                                  \
        for (long i = 0; i < m; i++) {                                               \
            for (long j = 0; j < n; j++) {                                           \
                T s = 0;                                                             \
                if (alpha != 0)                                                      \
                    for (long l = 0; l < k; l++)                                     \
                        s += a[at(order, ta, i, l, lda)] * b[at(order, tb, l, j, ldb)]; \
                T *cij = &c[at(order, 0, i, j, ldc)];                                \
                *cij = alpha * s + (beta != 0 ? beta * *cij : 0);                    \
            }                                                                        \
        }                                                                            \
        PERTURB(&c[0]);                                                              \
    }

FAKE_GEMM(gemm_f32, float, perturb_f32)
FAKE_GEMM(gemm_f64, double, perturb_f64)

static int fortran_trans(const char *t)
{
    return *t != 'N' && *t != 'n';
}

FAKE_EXPORT void cblas_sgemm(const int order, const int transa, const int transb, const int m,
                             const int n, const int k, const float alpha, const float *a,
                             const int lda, const float *b, const int ldb, const float beta,
                             float *c, const int ldc)
{
    gemm_f32(order, transa != NO_TRANS, transb != NO_TRANS, m, n, k, alpha, a, lda, b, ldb,
             beta, c, ldc);
}

FAKE_EXPORT void cblas_dgemm(const int order, const int transa, const int transb, const int m,
                             const int n, const int k, const double alpha, const double *a,
                             const int lda, const double *b, const int ldb, const double beta,
                             double *c, const int ldc)
{
    gemm_f64(order, transa != NO_TRANS, transb != NO_TRANS, m, n, k, alpha, a, lda, b, ldb,
             beta, c, ldc);
}

FAKE_EXPORT void sgemm_(const char *transa, const char *transb, const int *m, const int *n,
                        const int *k, const float *alpha, const float *a, const int *lda,
                        const float *b, const int *ldb, const float *beta, float *c,
                        const int *ldc)
{
    gemm_f32(COL_MAJOR, fortran_trans(transa), fortran_trans(transb), *m, *n, *k, *alpha, a,
             *lda, b, *ldb, *beta, c, *ldc);
}

FAKE_EXPORT void dgemm_(const char *transa, const char *transb, const int *m, const int *n,
                        const int *k, const double *alpha, const double *a, const int *lda,
                        const double *b, const int *ldb, const double *beta, double *c,
                        const int *ldc)
{
    gemm_f64(COL_MAJOR, fortran_trans(transa), fortran_trans(transb), *m, *n, *k, *alpha, a,
             *lda, b, *ldb, *beta, c, *ldc);
}

/* Logical element i of a BLAS vector (inc < 0: element 0 is the last). */
static double vec_at(const double *x, long n, long inc, long i)
{
    return inc >= 0 ? x[i * inc] : x[(n - 1 - i) * -inc];
}

static double dot_f64(long n, const double *x, long incx, const double *y, long incy)
{
    if (n <= 0)
        return 0;
    double s = 0;
    for (long i = 0; i < n; i++)
        s += vec_at(x, n, incx, i) * vec_at(y, n, incy, i);
    perturb_f64(&s);
    return s;
}

FAKE_EXPORT double cblas_ddot(const int n, const double *x, const int incx, const double *y,
                              const int incy)
{
    return dot_f64(n, x, incx, y, incy);
}

FAKE_EXPORT double ddot_(const int *n, const double *x, const int *incx, const double *y,
                         const int *incy)
{
    return dot_f64(*n, x, *incx, y, *incy);
}
