/* BLAS calls as the reference testers make them, for the integration tests
 * of what the shim validates and digests (tests/integration/test-blas-
 * args.sh, test-blas-fpenv.sh). Each mode prints one line a test compares:
 *   illegal         dgemm_ with m = 2^27, lda = m, ldc = 1: the vendor
 *                   rejects it (parameter 13) and nothing is read; then
 *                   "survived".
 *   garbage SEED    calls whose unreferenced operands (k = 0, alpha = 0,
 *                   beta = 0 or 1, the other triangle, rejected calls) are
 *                   filled from SEED; prints a hash of what the BLAS
 *                   defines, the same for every SEED.
 *   fpflags         a rejected dgemm_ with a subnormal alpha, a valid empty
 *                   one (m = 0) with it, two valid ones: prints the FP
 *                   status flags after each (FE_* and the x86 MXCSR
 *                   denormal flag).
 */
#include <cblas.h>
#include <fenv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xmmintrin.h>

void dgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b,
            const int *ldb, const double *beta, double *c, const int *ldc);
void dsymm_(const char *side, const char *uplo, const int *m, const int *n, const double *alpha,
            const double *a, const int *lda, const double *b, const int *ldb, const double *beta,
            double *c, const int *ldc);

static uint64_t hash = 1469598103934665603ull;

static void mix(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        hash = (hash ^ b[i]) * 1099511628211ull;
}

/* Garbage that differs with the seed: NaNs and huge values included, as
 * an uninitialised array may hold. */
static void garbage(double *x, int n, unsigned seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 7;
    for (int i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        memcpy(&x[i], &s, sizeof s);
    }
}

static int illegal(void)
{
    int m = 1 << 27, n = 2, k = 2, ldc = 1;
    double alpha = 1, beta = 0, a[4] = { 0 }, b[4] = { 0 }, c[4] = { 0 };
    dgemm_("N", "N", &m, &n, &k, &alpha, a, &m, b, &k, &beta, c, &ldc);
    printf("survived\n");
    return 0;
}

static int unreferenced(unsigned seed)
{
    double a[16], b[16], c[16];
    int two = 2, one = 1, zero = 0;
    double d1 = 1, d0 = 0, d2 = 2;
    /* syrk n = 2, k = 0, beta = 1: a quick return, A and C not referenced. */
    garbage(a, 16, seed);
    garbage(c, 16, seed + 1);
    cblas_dsyrk(CblasColMajor, CblasUpper, CblasNoTrans, 2, 0, 1.0, a, 2, 1.0, c, 2);
    /* k = 0, beta = 0: C's upper triangle is set to zero, never read. */
    cblas_dsyrk(CblasColMajor, CblasUpper, CblasNoTrans, 2, 0, 1.0, a, 2, 0.0, c, 2);
    mix(&c[0], 8), mix(&c[2], 16);
    /* Rejected (lda = 1 < n): nothing is read or written. */
    garbage(c, 16, seed + 2);
    cblas_dsyrk(CblasColMajor, CblasUpper, CblasNoTrans, 2, 1, 1.0, a, 1, 0.0, c, 2);
    /* symm with garbage in A's lower triangle, which it does not read. */
    garbage(a, 16, seed + 3);
    a[0] = 1, a[2] = 2, a[3] = 3;
    for (int i = 0; i < 4; i++)
        b[i] = i + 1, c[i] = 0;
    dsymm_("L", "U", &two, &two, &d1, a, &two, b, &two, &d0, c, &two);
    mix(c, 4 * sizeof *c);
    /* Rejected symm (ldb = 1 < m), all garbage. */
    garbage(b, 16, seed + 4);
    dsymm_("L", "U", &two, &two, &d1, a, &two, b, &one, &d0, c, &two);
    /* gemm k = 0, beta = 1 (a quick return) and alpha = 0 (A, B not read). */
    garbage(a, 16, seed + 5);
    garbage(c, 16, seed + 6);
    dgemm_("N", "N", &two, &two, &zero, &d1, a, &two, b, &two, &d1, c, &two);
    for (int i = 0; i < 4; i++)
        c[i] = i;
    dgemm_("N", "N", &two, &two, &two, &d0, a, &two, b, &two, &d2, c, &two);
    mix(c, 4 * sizeof *c);
    printf("%016llx\n", (unsigned long long)hash);
    return 0;
}

/* The FE_* flags raised, and the MXCSR denormal flag (bit 1), which
 * FE_ALL_EXCEPT does not include. */
static void print_flags(const char *what)
{
    printf("%s: fe=%#x de=%u\n", what, (unsigned)fetestexcept(FE_ALL_EXCEPT),
           (unsigned)(_mm_getcsr() >> 1) & 1u);
}

static void clear_flags(void)
{
    feclearexcept(FE_ALL_EXCEPT);
    _mm_setcsr(_mm_getcsr() & ~0x3fu);
}

static int fpflags(void)
{
    volatile double tiny = 4.9406564584124654e-324;
    double alpha = tiny, beta = 0, a[4] = { 1, 2, 3, 4 }, b[4] = { 1, 0, 0, 1 }, c[4];
    int two = 2, bad = -1;
    clear_flags();
    dgemm_("N", "N", &bad, &two, &two, &alpha, a, &two, b, &two, &beta, c, &two);
    print_flags("rejected");
    /* Valid and empty: the vendor returns before reading alpha, the shim
     * still compares it with zero for its digests. */
    int zero = 0;
    clear_flags();
    dgemm_("N", "N", &zero, &two, &two, &alpha, a, &two, b, &two, &beta, c, &two);
    print_flags("empty");
    clear_flags();
    alpha = 1.5;
    dgemm_("N", "N", &two, &two, &two, &alpha, a, &two, b, &two, &beta, c, &two);
    print_flags("valid");
    clear_flags();
    alpha = 1.0 / 3;
    dgemm_("N", "N", &two, &two, &two, &alpha, a, &two, b, &two, &beta, c, &two);
    print_flags("inexact");
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "illegal"))
        return illegal();
    if (!strcmp(mode, "garbage") && argc > 2)
        return unreferenced((unsigned)strtoul(argv[2], NULL, 0));
    if (!strcmp(mode, "fpflags"))
        return fpflags();
    fprintf(stderr, "usage: blas_args illegal | garbage SEED | fpflags\n");
    return 2;
}
