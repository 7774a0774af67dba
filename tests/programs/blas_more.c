/* The rest of the reference BLAS (rotg, rotmg, rotm, sdsdot, dsdot, cabs1,
 * the band, packed, symmetric and Hermitian level-2 routines, hemm, herk,
 * her2k) called once each, through cblas and, for some, Fortran, for
 * tests/integration/test-blas-more.sh. Every element the reference BLAS
 * does not reference (the other triangle, band corners, a unit or
 * Hermitian diagonal's unread part, rotm's unused H entries) is garbage
 * drawn from SEED; the one line printed hashes what the BLAS defines, so
 * it is the same for every SEED, as must be the traces.
 * Usage: blas_more SEED
 */
#include <cblas.h>
#include <complex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double dcabs1_(const void *z);
void dsymv_(const char *uplo, const int *n, const double *alpha, const double *a, const int *lda,
            const double *x, const int *incx, const double *beta, double *y, const int *incy);
void dtbmv_(const char *uplo, const char *trans, const char *diag, const int *n, const int *k,
            const double *a, const int *lda, double *x, const int *incx);
void zhemv_(const char *uplo, const int *n, const void *alpha, const void *a, const int *lda,
            const void *x, const int *incx, const void *beta, void *y, const int *incy);

enum { N = 4, K = 1 };

static uint64_t hash = 1469598103934665603ull, rng;

static void mix(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        hash = (hash ^ b[i]) * 1099511628211ull;
}

static double garbage(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    double d;
    memcpy(&d, &rng, sizeof d);
    return d;
}

static void junk(double *x, int n)
{
    for (int i = 0; i < n; i++)
        x[i] = garbage();
}

/* Defined values: small integers, exact in every routine here. */
static void vals(double *x, int n, int base)
{
    for (int i = 0; i < n; i++)
        x[i] = (double)((base + i * 7) % 5 - 2);
}

/* A column-major N x N real matrix, the upper triangle defined and the
 * rest garbage; complex: doubles per element 2, the diagonal's imaginary
 * part garbage too (a Hermitian matrix's, never read). */
static void upper(double *a, int cplx, int base)
{
    int w = cplx ? 2 : 1;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++)
            for (int p = 0; p < w; p++)
                a[(i + j * N) * w + p] = i < j || (i == j && p == 0)
                                             ? (double)((base + i + 3 * j + p) % 4 - 1)
                                             : garbage();
}

/* The upper triangle of a column-major N x N matrix, as written. */
static void mix_upper(const double *a, int cplx)
{
    int w = cplx ? 2 : 1;
    for (int j = 0; j < N; j++)
        mix(&a[j * N * w], (size_t)(j + 1) * (size_t)w * sizeof *a);
}

static void level1(void)
{
    double a = 3, b = 4, c, s, za[2] = { 1, 2 }, zb[2] = { 3, -1 }, zs[2];
    cblas_drotg(&a, &b, &c, &s);
    mix(&a, 8), mix(&b, 8), mix(&c, 8), mix(&s, 8);
    cblas_zrotg(za, zb, &c, zs);
    mix(za, 16), mix(&c, 8), mix(zs, 16);
    double d1 = 2, d2 = 3, x1 = 1, param[5];
    junk(param, 5);
    cblas_drotmg(&d1, &d2, &x1, 2.0, param);
    mix(&d1, 8), mix(&d2, 8), mix(&x1, 8), mix(param, 8);
    double x[N], y[N];
    vals(x, N, 1), vals(y, N, 2);
    cblas_drotm(N, x, 1, y, 1, param);
    mix(x, sizeof x), mix(y, sizeof y);
    /* Flag -2: the identity; x, y and the H entries are never read. */
    double skip[5] = { -2, garbage(), garbage(), garbage(), garbage() }, gx[N], gy[N];
    junk(gx, N), junk(gy, N);
    cblas_drotm(N, gx, 1, gy, 1, skip);
    float fx[N] = { 1, 2, 3, 4 }, fy[N] = { 4, 3, 2, 1 };
    float sd = cblas_sdsdot(N, 0.5f, fx, 1, fy, 1);
    double dd = cblas_dsdot(N, fx, 1, fy, 1), z[2] = { -3, 4 }, ab = dcabs1_(z);
    mix(&sd, 4), mix(&dd, 8), mix(&ab, 8);
}

static void band_and_packed(void)
{
    /* gbmv: N x N, kl = ku = K, lda = 2K+1; the corners are garbage. */
    double band[(2 * K + 1) * N], x[N], y[N];
    for (int j = 0; j < N; j++)
        for (int r = 0; r < 2 * K + 1; r++) {
            int i = r - K + j;
            band[r + j * (2 * K + 1)] = i >= 0 && i < N ? (double)((i + j) % 3) : garbage();
        }
    vals(x, N, 3), junk(y, N);
    cblas_dgbmv(CblasColMajor, CblasNoTrans, N, N, K, K, 1.0, band, 2 * K + 1, x, 1, 0.0, y, 1);
    mix(y, sizeof y);
    junk(y, N);
    cblas_dgbmv(CblasRowMajor, CblasTrans, N, N, K, K, 2.0, band, 2 * K + 1, x, 1, 0.0, y, 1);
    mix(y, sizeof y);
    /* sbmv and tbmv, upper, k = K, lda = K + 1: band row 0 of column 0 is
     * outside; tbmv's unit diagonal (band row K) is not read either. */
    double sb[(K + 1) * N];
    for (int j = 0; j < N; j++)
        for (int r = 0; r <= K; r++)
            sb[r + j * (K + 1)] = r - K + j >= 0 ? (double)((r + 2 * j) % 3) : garbage();
    junk(y, N);
    cblas_dsbmv(CblasColMajor, CblasUpper, N, K, 1.0, sb, K + 1, x, 1, 0.0, y, 1);
    mix(y, sizeof y);
    for (int j = 0; j < N; j++)
        sb[K + j * (K + 1)] = garbage();
    double tx[N];
    vals(tx, N, 4);
    cblas_dtbmv(CblasColMajor, CblasUpper, CblasNoTrans, CblasUnit, N, K, sb, K + 1, tx, 1);
    mix(tx, sizeof tx);
    int n = N, k = K, ld = K + 1, one = 1;
    dtbmv_("U", "T", "U", &n, &k, sb, &ld, tx, &one);
    mix(tx, sizeof tx);
    /* Packed upper, unit diagonal garbage for tpmv. */
    double ap[N * (N + 1) / 2];
    vals(ap, N * (N + 1) / 2, 5);
    junk(y, N);
    cblas_dspmv(CblasColMajor, CblasUpper, N, 1.0, ap, x, 1, 0.0, y, 1);
    mix(y, sizeof y);
    cblas_dspr(CblasColMajor, CblasUpper, N, 1.0, x, 1, ap);
    cblas_dspr2(CblasColMajor, CblasUpper, N, 1.0, x, 1, tx, 1, ap);
    mix(ap, sizeof ap);
    for (int j = 0; j < N; j++)
        ap[j * (j + 1) / 2 + j] = garbage();
    cblas_dtpmv(CblasColMajor, CblasUpper, CblasNoTrans, CblasUnit, N, ap, tx, 1);
    cblas_dtpsv(CblasColMajor, CblasUpper, CblasTrans, CblasUnit, N, ap, tx, 1);
    mix(tx, sizeof tx);
    double tb[(K + 1) * N];
    vals(tb, (K + 1) * N, 1);
    for (int j = 0; j < N; j++)
        tb[K + j * (K + 1)] = 4;
    tb[0] = garbage();
    cblas_dtbsv(CblasColMajor, CblasUpper, CblasNoTrans, CblasNonUnit, N, K, tb, K + 1, tx, 1);
    mix(tx, sizeof tx);
}

static void symmetric(void)
{
    double a[N * N], x[N], y[N], w[N];
    upper(a, 0, 1);
    vals(x, N, 2), vals(w, N, 3), junk(y, N);
    cblas_dsymv(CblasColMajor, CblasUpper, N, 1.0, a, N, x, 1, 0.0, y, 1);
    mix(y, sizeof y);
    int n = N, one = 1;
    double d1 = 1, d0 = 0;
    junk(y, N);
    dsymv_("U", &n, &d1, a, &n, x, &one, &d0, y, &one);
    mix(y, sizeof y);
    cblas_dsyr(CblasColMajor, CblasUpper, N, 2.0, x, 1, a, N);
    cblas_dsyr2(CblasColMajor, CblasUpper, N, 1.0, x, 1, w, 1, a, N);
    mix_upper(a, 0);
}

static void hermitian(void)
{
    double a[2 * N * N], x[2 * N], y[2 * N], w[2 * N], c[2 * N * N], b[2 * N * N];
    double one[2] = { 1, 0 }, zero[2] = { 0, 0 };
    upper(a, 1, 2);
    vals(x, 2 * N, 1), vals(w, 2 * N, 4), junk(y, 2 * N);
    cblas_zhemv(CblasColMajor, CblasUpper, N, one, a, N, x, 1, zero, y, 1);
    mix(y, sizeof y);
    int n = N, inc = 1;
    junk(y, 2 * N);
    zhemv_("U", &n, one, a, &n, x, &inc, zero, y, &inc);
    mix(y, sizeof y);
    double hb[2 * (K + 1) * N], hp[N * (N + 1)];
    for (int i = 0; i < 2 * (K + 1) * N; i++)
        hb[i] = (double)(i % 3);
    hb[0] = hb[1] = garbage();
    for (int j = 0; j < N; j++)
        hb[2 * (K + j * (K + 1)) + 1] = garbage();
    junk(y, 2 * N);
    cblas_zhbmv(CblasColMajor, CblasUpper, N, K, one, hb, K + 1, x, 1, zero, y, 1);
    mix(y, sizeof y);
    for (int i = 0; i < N * (N + 1); i++)
        hp[i] = (double)(i % 4 - 1);
    for (int j = 0; j < N; j++)
        hp[2 * (j * (j + 1) / 2 + j) + 1] = garbage();
    junk(y, 2 * N);
    cblas_zhpmv(CblasColMajor, CblasUpper, N, one, hp, x, 1, zero, y, 1);
    mix(y, sizeof y);
    cblas_zhpr(CblasColMajor, CblasUpper, N, 1.0, x, 1, hp);
    for (int j = 0; j < N; j++)
        hp[2 * (j * (j + 1) / 2 + j) + 1] = garbage();
    cblas_zhpr2(CblasColMajor, CblasUpper, N, one, x, 1, w, 1, hp);
    mix(hp, sizeof hp);
    cblas_zher(CblasColMajor, CblasUpper, N, 1.0, x, 1, a, N);
    upper(a, 1, 3);
    cblas_zher2(CblasColMajor, CblasUpper, N, one, x, 1, w, 1, a, N);
    mix_upper(a, 1);
    /* Level 3: hemm, herk, her2k with C's lower triangle garbage. */
    upper(a, 1, 1);
    vals(b, 2 * N * N, 2);
    junk(c, 2 * N * N);
    cblas_zhemm(CblasColMajor, CblasLeft, CblasUpper, N, N, one, a, N, b, N, zero, c, N);
    mix(c, sizeof c);
    upper(c, 1, 4);
    cblas_zherk(CblasColMajor, CblasUpper, CblasNoTrans, N, N, 1.0, b, N, 1.0, c, N);
    mix_upper(c, 1);
    upper(c, 1, 5);
    cblas_zher2k(CblasColMajor, CblasUpper, CblasConjTrans, N, N, one, b, N, b, N, 1.0, c, N);
    mix_upper(c, 1);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: blas_more SEED\n");
        return 2;
    }
    rng = strtoull(argv[1], NULL, 0) * 0x9e3779b97f4a7c15ull + 1;
    level1();
    band_and_packed();
    symmetric();
    hermitian();
    printf("%016llx\n", (unsigned long long)hash);
    return 0;
}
