/* Throughput of the canonical level-3 routines other than gemm (dsyrk,
 * dsymm, dsyr2k, zherk, zhemm on the GEMM core,
 * shim/blas/canonical_l3_gemm.c; trmm and trsm, canonical_l3_tri.c)
 * next to the vendor OpenBLAS in the same
 * process, in GFLOP/s, square n x n, column-major, on the automatic
 * instruction-set path, with the ratio canonical/OpenBLAS at 1 and at 2
 * threads. Flops: n^3 multiply-adds (trmm, trsm: n^3/2) times 2, times 4
 * for complex. trmm and trsm run every side and uplo (trans 'N', diag
 * 'N'), in s, d and z. As in bench_canonical_blas: on 1 thread the two
 * alternate, one call each per repetition; on 2 threads each runs on its
 * own, canonical first, after a pause (settle): OpenBLAS's idle workers
 * spin, yielding, for about 0.1 s after its last 2-thread call, and
 * without the pause they held the second core through the canonical
 * 2-thread calls of the next case at n = 512, whose 1-thread phase is
 * shorter than that. B
 * (or C) is restored before every call, outside the timing; the best
 * repetition counts (repetitions scaled by (1024/n)^2, at least 2). The last column is the largest difference between
 * the two results relative to the largest element (accuracy, not bits:
 * the orders differ).
 * Usage: bench_canonical_l3 [repetitions] [n ...]   (default 3; 512 1024 2048)
 * BENCH_L3_ONLY="strsm RL,dsyrk L" runs only the cases named as the first
 * two columns print them (for measuring one cell many times).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blas/canonical.h"

/* OpenBLAS entry points, declared here so no cblas.h is needed. */
void openblas_set_num_threads(int n);
#define TRI_DECL(name, T, S)                                                                  \
    void name(int order, int side, int uplo, int trans, int diag, int m, int n, S alpha,      \
              const T *a, int lda, T *b, int ldb);
TRI_DECL(cblas_strmm, float, float)
TRI_DECL(cblas_strsm, float, float)
TRI_DECL(cblas_dtrmm, double, double)
TRI_DECL(cblas_dtrsm, double, double)
TRI_DECL(cblas_ztrmm, void, const void *)
TRI_DECL(cblas_ztrsm, void, const void *)
void cblas_dsyrk(int order, int uplo, int trans, int n, int k, double alpha, const double *a,
                 int lda, double beta, double *c, int ldc);
void cblas_dsyr2k(int order, int uplo, int trans, int n, int k, double alpha, const double *a,
                  int lda, const double *b, int ldb, double beta, double *c, int ldc);
void cblas_dsymm(int order, int side, int uplo, int m, int n, double alpha, const double *a,
                 int lda, const double *b, int ldb, double beta, double *c, int ldc);
void cblas_zherk(int order, int uplo, int trans, int n, int k, double alpha, const void *a,
                 int lda, double beta, void *c, int ldc);
void cblas_zhemm(int order, int side, int uplo, int m, int n, const void *alpha, const void *a,
                 int lda, const void *b, int ldb, const void *beta, void *c, int ldc);
enum { COL_MAJOR = 102, NO_TRANS = 111, UPPER = 121, LOWER = 122, LEFT = 141, RIGHT = 142,
       NON_UNIT = 131 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Waits out the idle workers of the library timed last (OpenBLAS's
 * spin for about 0.1 s before they sleep), as bench_canonical does. */
static void settle(void)
{
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* One case: routine (0 trmm, 1 trsm, 2 syrk, 3 symm, 4 syr2k, 5 herk,
 * 6 hemm), type. */
struct bcase {
    int routine, t;
    char side, uplo;
    int64_t n;
};

static void *A, *Bm, *B0, *Cw, *Vw;
static const double alpha_d = 0.75;
static const float alpha_s = 0.75f;
static const double alpha_z[2] = {0.75, -0.25}, beta_z[2] = {0.5, 0};

static void run(const struct bcase *c, int vendor, void *b)
{
    const int n = (int)c->n, sd = c->side == 'L' ? LEFT : RIGHT, up = c->uplo == 'U' ? UPPER : LOWER;
    const char ch[2] = {c->side, c->uplo};
    if (c->routine == 5) { /* double complex only */
        vendor ? cblas_zherk(COL_MAJOR, up, NO_TRANS, n, n, 1.0, A, n, 0.5, b, n)
               : (void)canon_zherk('C', ch[1], 'N', n, n, 1.0, A, n, 0.5, b, n);
        return;
    }
    if (c->routine == 6) {
        vendor ? cblas_zhemm(COL_MAJOR, sd, up, n, n, alpha_z, A, n, B0, n, beta_z, b, n)
               : (void)canon_zhemm('C', ch[0], ch[1], n, n, alpha_z, A, n, B0, n, beta_z, b, n);
        return;
    }
    if (c->routine >= 2) { /* double only */
        const double *a = A, *bb = B0;
        double *cc = b;
        if (c->routine == 2)
            vendor ? cblas_dsyrk(COL_MAJOR, up, NO_TRANS, n, n, 1.0, a, n, 0.5, cc, n)
                   : (void)canon_dsyrk('C', ch[1], 'N', n, n, 1.0, a, n, 0.5, cc, n);
        else if (c->routine == 3)
            vendor ? cblas_dsymm(COL_MAJOR, sd, up, n, n, 1.0, a, n, bb, n, 0.5, cc, n)
                   : (void)canon_dsymm('C', ch[0], ch[1], n, n, 1.0, a, n, bb, n, 0.5, cc, n);
        else
            vendor ? cblas_dsyr2k(COL_MAJOR, up, NO_TRANS, n, n, 1.0, a, n, bb, n, 0.5, cc, n)
                   : (void)canon_dsyr2k('C', ch[1], 'N', n, n, 1.0, a, n, bb, n, 0.5, cc, n);
        return;
    }
    const int solve = c->routine == 1;
#define TRI_RUN(pre, alpha)                                                                     \
    do {                                                                                        \
        if (vendor)                                                                             \
            (solve ? cblas_##pre##trsm : cblas_##pre##trmm)(COL_MAJOR, sd, up, NO_TRANS,        \
                                                            NON_UNIT, n, n, alpha, A, n, b, n); \
        else                                                                                    \
            (solve ? canon_##pre##trsm : canon_##pre##trmm)('C', ch[0], ch[1], 'N', 'N', n, n,  \
                                                            alpha, A, n, b, n);                 \
    } while (0)
    if (c->t == CANON_S)
        TRI_RUN(s, alpha_s);
    else if (c->t == CANON_D)
        TRI_RUN(d, alpha_d);
    else
        TRI_RUN(z, alpha_z);
#undef TRI_RUN
}

static size_t esize(int t)
{
    return t == CANON_S ? 4 : t == CANON_Z ? 16 : 8;
}

/* The output operand's starting values into b, then one timed call. */
static void timed(const struct bcase *c, int vendor, double *best)
{
    const size_t bytes = (size_t)(c->n * c->n) * esize(c->t);
    memcpy(Bm, c->routine >= 2 ? Cw : B0, bytes);
    const double t0 = now_s();
    run(c, vendor, Bm);
    const double dt = now_s() - t0;
    if (dt < *best)
        *best = dt;
}

/* Fills the operands of type t, n x n: A a well-conditioned triangle
 * (diagonal 2, the rest at most 1/n), B and C in [-0.5, 0.5). */
static void fill(int t, int64_t n)
{
    const int64_t parts = n * n * (t == CANON_Z ? 2 : 1);
    unsigned s = 12345;
    for (int64_t i = 0; i < parts; i++) {
        double v[3];
        for (int q = 0; q < 3; q++) {
            s = s * 1103515245u + 12345u;
            v[q] = (double)(s >> 9) / (double)(1u << 23) - 0.5;
        }
        const int64_t e = t == CANON_Z ? i / 2 : i;
        const int diag = e % n == e / n;
        const double av = diag ? ((t == CANON_Z && i % 2) ? 0.5 : 2.0) : v[0] / (double)n;
        if (t == CANON_S) {
            ((float *)A)[i] = (float)av, ((float *)B0)[i] = (float)v[1];
            ((float *)Cw)[i] = (float)v[2];
        } else {
            ((double *)A)[i] = av;
            ((double *)B0)[i] = v[1], ((double *)Cw)[i] = v[2];
        }
    }
}

/* max |canonical - OpenBLAS| / max |OpenBLAS|, over the parts. */
static double rel_diff(const struct bcase *c)
{
    const size_t bytes = (size_t)(c->n * c->n) * esize(c->t);
    const int64_t parts = c->n * c->n * (c->t == CANON_Z ? 2 : 1);
    memcpy(Bm, c->routine >= 2 ? Cw : B0, bytes);
    run(c, 0, Bm);
    memcpy(Vw, c->routine >= 2 ? Cw : B0, bytes);
    run(c, 1, Vw);
    double md = 0, mx = 0;
    for (int64_t i = 0; i < parts; i++) {
        const double x = c->t == CANON_S ? ((float *)Bm)[i] : ((double *)Bm)[i];
        const double y = c->t == CANON_S ? ((float *)Vw)[i] : ((double *)Vw)[i];
        md = fmax(md, fabs(x - y));
        mx = fmax(mx, fabs(y));
    }
    return mx > 0 ? md / mx : md;
}

/* Whether BENCH_L3_ONLY (unset: every case) names label ("strsm RL"). */
static int wanted(const char *label)
{
    const char *only = getenv("BENCH_L3_ONLY");
    if (!only || !*only)
        return 1;
    const size_t len = strlen(label);
    for (const char *p = only; (p = strstr(p, label)) != NULL; p += len)
        if ((p == only || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const int reps0 = argc > 1 ? atoi(argv[1]) : 3;
    int64_t sizes[8] = {512, 1024, 2048};
    int nsizes = 3;
    if (argc > 2) {
        nsizes = 0;
        for (int i = 2; i < argc && nsizes < 8; i++)
            sizes[nsizes++] = atoll(argv[i]);
    }
    int64_t nmax = 0;
    for (int i = 0; i < nsizes; i++)
        nmax = sizes[i] > nmax ? sizes[i] : nmax;
    const size_t bytes = (size_t)(nmax * nmax) * 16;
    A = malloc(bytes), Bm = malloc(bytes), B0 = malloc(bytes), Cw = malloc(bytes);
    Vw = malloc(bytes);
    if (!A || !Bm || !B0 || !Cw || !Vw) {
        fprintf(stderr, "bench_canonical_l3: out of memory\n");
        return 2;
    }
    static const char *const rname[] = {"trmm", "trsm", "syrk", "symm", "syr2k", "herk", "hemm"};
    static const char tname[] = "sdcz";
    printf("canonical path: %s; best of %d repetitions at n = 1024 (more below, at least 2 "
           "above); GFLOP/s\n",
           canon_isa(), reps0);
    printf("%-7s %-4s %5s %9s %9s %11s %11s %8s %8s %9s\n", "routine", "case", "n", "canon-1t",
           "canon-2t", "openblas-1t", "openblas-2t", "ratio-1t", "ratio-2t", "rel-diff");
    for (int s = 0; s < nsizes; s++) {
        const int64_t n = sizes[s];
        struct bcase cases[32];
        int nc = 0;
        for (int r = 2; r < 5; r++)
            cases[nc++] = (struct bcase){r, CANON_D, 'L', r == 3 ? 'U' : 'L', n};
        cases[nc++] = (struct bcase){5, CANON_Z, 'L', 'L', n};
        cases[nc++] = (struct bcase){6, CANON_Z, 'L', 'U', n};
        static const int types[] = {CANON_D, CANON_S, CANON_Z};
        for (int ti = 0; ti < 3; ti++)
            for (int r = 0; r < 2; r++)
                for (int q = 0; q < 4; q++)
                    cases[nc++] = (struct bcase){r, types[ti], "LR"[q / 2], "LU"[q % 2], n};
        int last_t = -1;
        for (int ci = 0; ci < nc; ci++) {
            const struct bcase *c = &cases[ci];
            char name[16], cs[8], label[24];
            snprintf(name, sizeof name, "%c%s", tname[c->t], rname[c->routine]);
            snprintf(cs, sizeof cs, "%c%c", c->side, c->uplo);
            const int tri_only = c->routine == 2 || c->routine == 4 || c->routine == 5;
            const char *shown = tri_only ? c->uplo == 'L' ? "L" : "U" : cs;
            snprintf(label, sizeof label, "%s %s", name, shown);
            if (!wanted(label))
                continue;
            if (c->t != last_t)
                fill(c->t, n);
            last_t = c->t;
            double bc[2] = {1e30, 1e30}, bv[2] = {1e30, 1e30};
            /* about the same time at every n: more repetitions of the
             * short calls, whose best is the one a neighbour spared */
            const double scale = 1024.0 * 1024.0 / ((double)n * (double)n);
            const int reps = (int)(reps0 * scale) > 2 ? (int)(reps0 * scale) : 2;
            canon_set_threads(1);
            openblas_set_num_threads(1);
            for (int r = 0; r < reps; r++) {
                timed(c, 1, &bv[0]);
                timed(c, 0, &bc[0]);
            }
            canon_set_threads(2);
            settle();
            for (int r = 0; r < reps; r++)
                timed(c, 0, &bc[1]);
            canon_set_threads(1);
            openblas_set_num_threads(2);
            for (int r = 0; r < reps; r++)
                timed(c, 1, &bv[1]);
            openblas_set_num_threads(1);
            const double cube = (double)n * (double)n * (double)n;
            const double flops = (c->routine <= 2 || c->routine == 5 ? cube : 2 * cube) *
                                 (c->t == CANON_Z ? 4 : 1);
            const double c1 = flops / bc[0] * 1e-9, c2 = flops / bc[1] * 1e-9;
            const double v1 = flops / bv[0] * 1e-9, v2 = flops / bv[1] * 1e-9;
            printf("%-7s %-4s %5lld %9.2f %9.2f %11.2f %11.2f %8.2f %8.2f %9.1e\n", name,
                   shown, (long long)n, c1, c2, v1, v2, c1 / v1, c2 / v2, rel_diff(c));
            fflush(stdout);
        }
    }
    return 0;
}
