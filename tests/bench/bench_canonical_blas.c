/* Throughput of the canonical level-1/2 BLAS (shim/blas/canonical_l1.c,
 * canonical_l2.c) next to the vendor OpenBLAS in the same process: sdot
 * and ddot at n = 10^6 (GB/s of x and y read, 10^9 per G) and sgemv at
 * 4096 x 4096, column-major, 'N' and 'T' (GFLOP/s, 2mn / s), with the ratio
 * canonical/OpenBLAS at 1 and at 2 threads. On 1 thread each, the two
 * alternate, one call of each per repetition, so a noisy neighbour hurts
 * both alike; on 2 threads (canon_set_threads(2): gemv splits its outputs,
 * a long dot its chunks) each runs on its own, canonical
 * first, since OpenBLAS's idle worker spins for a while after each call
 * and would slow whatever runs next. The best repetition counts.
 * The canonical columns are measured on each instruction-set path the
 * CPU has beyond scalar (the isa column: avx2, and avx512 where the CPU
 * and OS have it); the OpenBLAS columns are the same for a routine's
 * rows. "in L1" rows repeat a 4096-element dot 256 times per call, where
 * the 16 lane chains of the contract, not memory, set the speed; the
 * n=16 and n=100 rows repeat a tiny ddot 4096 times per call, which
 * measures the cost of a call (no thread takes part at that size).
 * Level 3 (double, n = 1024, GFLOP/s counting n^3 multiply-adds as 2
 * flops for syrk and trmm's half, 2n^3 for syr2k and symm): dsyrk, dsyr2k
 * and dsymm run on the GEMM core, dtrmm on its sequential kernel. trmm
 * rewrites B in place, so its repetitions multiply B by the triangle
 * again; alpha = 0.18 keeps the entries of about the same size over the
 * repetitions (far from overflow and from subnormals), as alpha = 3
 * does for trsm against A's diagonal of 4.
 * Usage: bench_canonical_blas [repetitions [routines]]   (default 20, all);
 * routines: a comma-separated list of name prefixes ("ddot,sgemv")
 * keeps only the rows whose routine starts with one of them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blas/canonical.h"

/* OpenBLAS entry points, declared here so no cblas.h is needed. */
void openblas_set_num_threads(int n);
float cblas_sdot(int n, const float *x, int incx, const float *y, int incy);
double cblas_ddot(int n, const double *x, int incx, const double *y, int incy);
void cblas_sgemv(int order, int trans, int m, int n, float alpha, const float *a, int lda,
                 const float *x, int incx, float beta, float *y, int incy);
void cblas_dsyrk(int order, int uplo, int trans, int n, int k, double alpha, const double *a,
                 int lda, double beta, double *c, int ldc);
void cblas_dsyr2k(int order, int uplo, int trans, int n, int k, double alpha, const double *a,
                  int lda, const double *b, int ldb, double beta, double *c, int ldc);
void cblas_dsymm(int order, int side, int uplo, int m, int n, double alpha, const double *a,
                 int lda, const double *b, int ldb, double beta, double *c, int ldc);
void cblas_dtrmm(int order, int side, int uplo, int trans, int diag, int m, int n, double alpha,
                 const double *a, int lda, double *b, int ldb);
void cblas_dtrsm(int order, int side, int uplo, int trans, int diag, int m, int n, double alpha,
                 const double *a, int lda, double *b, int ldb);
enum { COL_MAJOR = 102, NO_TRANS = 111, TRANS = 112, UPPER = 121, LOWER = 122, LEFT = 141,
       NON_UNIT = 131 };

#define DOT_N 1000000
#define SMALL_N 4096
#define SMALL_REPS 256
#define GEMV_N 4096
#define L3_N 1024

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *alloc(size_t bytes)
{
    void *p = aligned_alloc(64, bytes);
    if (!p) {
        fprintf(stderr, "bench_canonical_blas: out of memory\n");
        exit(2);
    }
    return p;
}

/* One benchmark: a canonical call and the OpenBLAS call of the same work. */
struct bench {
    const char *name, *unit;
    double work; /* bytes or flops per call */
    void (*canon)(void);
    void (*vendor)(void);
};

static float *sx, *sy, *sa, *sv, *sw;
static double *dx, *dy;
static volatile float sink_f;
static volatile double sink_d;

static void canon_sdot_1(void)
{
    float r;
    canon_sdot(DOT_N, sx, 1, sy, 1, &r);
    sink_f = r;
}

static void vendor_sdot_1(void)
{
    sink_f = cblas_sdot(DOT_N, sx, 1, sy, 1);
}

static void canon_ddot_1(void)
{
    double r;
    canon_ddot(DOT_N, dx, 1, dy, 1, &r);
    sink_d = r;
}

static void vendor_ddot_1(void)
{
    sink_d = cblas_ddot(DOT_N, dx, 1, dy, 1);
}

static void canon_sdot_small(void)
{
    float r;
    for (int i = 0; i < SMALL_REPS; i++)
        canon_sdot(SMALL_N, sx, 1, sy, 1, &r);
    sink_f = r;
}

static void vendor_sdot_small(void)
{
    for (int i = 0; i < SMALL_REPS; i++)
        sink_f = cblas_sdot(SMALL_N, sx, 1, sy, 1);
}

static void canon_ddot_small(void)
{
    double r;
    for (int i = 0; i < SMALL_REPS; i++)
        canon_ddot(SMALL_N, dx, 1, dy, 1, &r);
    sink_d = r;
}

static void vendor_ddot_small(void)
{
    for (int i = 0; i < SMALL_REPS; i++)
        sink_d = cblas_ddot(SMALL_N, dx, 1, dy, 1);
}

/* Tiny dots (n = 16 and 100), TINY_REPS calls per timed call: the cost
 * of a call itself, which must stay on the calling thread. */
#define TINY_REPS 4096
#define TINY_DOT(N)                                                                                \
    static void canon_ddot_##N(void)                                                               \
    {                                                                                              \
        double r = 0;                                                                              \
        for (int i = 0; i < TINY_REPS; i++)                                                        \
            canon_ddot(N, dx + (i & 63), 1, dy, 1, &r);                                            \
        sink_d = r;                                                                                \
    }                                                                                              \
    static void vendor_ddot_##N(void)                                                              \
    {                                                                                              \
        double r = 0;                                                                              \
        for (int i = 0; i < TINY_REPS; i++)                                                        \
            r = cblas_ddot(N, dx + (i & 63), 1, dy, 1);                                            \
        sink_d = r;                                                                                \
    }
TINY_DOT(16)
TINY_DOT(100)

/* Level 3 at n = L3_N, double: C (or B) lives in dc, operands in da, db. */
static double *da, *db, *dc;

static void canon_dsyrk_1(void)
{
    canon_dsyrk('C', 'L', 'N', L3_N, L3_N, 1.0, da, L3_N, 0.5, dc, L3_N);
}

static void vendor_dsyrk_1(void)
{
    cblas_dsyrk(COL_MAJOR, LOWER, NO_TRANS, L3_N, L3_N, 1.0, da, L3_N, 0.5, dc, L3_N);
}

static void canon_dsyr2k_1(void)
{
    canon_dsyr2k('C', 'U', 'N', L3_N, L3_N, 1.0, da, L3_N, db, L3_N, 0.5, dc, L3_N);
}

static void vendor_dsyr2k_1(void)
{
    cblas_dsyr2k(COL_MAJOR, UPPER, NO_TRANS, L3_N, L3_N, 1.0, da, L3_N, db, L3_N, 0.5, dc, L3_N);
}

static void canon_dsymm_1(void)
{
    canon_dsymm('C', 'L', 'U', L3_N, L3_N, 1.0, da, L3_N, db, L3_N, 0.5, dc, L3_N);
}

static void vendor_dsymm_1(void)
{
    cblas_dsymm(COL_MAJOR, LEFT, UPPER, L3_N, L3_N, 1.0, da, L3_N, db, L3_N, 0.5, dc, L3_N);
}

static void canon_dtrmm_1(void)
{
    canon_dtrmm('C', 'L', 'U', 'N', 'N', L3_N, L3_N, 0.18, da, L3_N, dc, L3_N);
}

static void vendor_dtrmm_1(void)
{
    cblas_dtrmm(COL_MAJOR, LEFT, UPPER, NO_TRANS, NON_UNIT, L3_N, L3_N, 0.18, da, L3_N, dc, L3_N);
}

static void canon_dtrsm_1(void)
{
    canon_dtrsm('C', 'L', 'L', 'N', 'N', L3_N, L3_N, 3.0, da, L3_N, dc, L3_N);
}

static void vendor_dtrsm_1(void)
{
    cblas_dtrsm(COL_MAJOR, LEFT, LOWER, NO_TRANS, NON_UNIT, L3_N, L3_N, 3.0, da, L3_N, dc, L3_N);
}

static void canon_sgemv_n(void)
{
    canon_sgemv('C', 'N', GEMV_N, GEMV_N, 1.0f, sa, GEMV_N, sv, 1, 0.0f, sw, 1);
}

static void vendor_sgemv_n(void)
{
    cblas_sgemv(COL_MAJOR, NO_TRANS, GEMV_N, GEMV_N, 1.0f, sa, GEMV_N, sv, 1, 0.0f, sw, 1);
}

static void canon_sgemv_t(void)
{
    canon_sgemv('C', 'T', GEMV_N, GEMV_N, 1.0f, sa, GEMV_N, sv, 1, 0.0f, sw, 1);
}

static void vendor_sgemv_t(void)
{
    cblas_sgemv(COL_MAJOR, TRANS, GEMV_N, GEMV_N, 1.0f, sa, GEMV_N, sv, 1, 0.0f, sw, 1);
}

/* Both kernel families on one path (the level-3 rows run on the GEMM's). */
static int set_isa(const char *isa)
{
    return canon_set_isa(isa) | canon_blas_set_isa(isa);
}

/* Times one call of fn, keeping the best in *best. */
static void best_time(void (*fn)(void), double *best)
{
    const double t0 = now_s();
    fn();
    const double dt = now_s() - t0;
    if (dt < *best)
        *best = dt;
}

/* Whether routine `name` starts with one of the comma-separated
 * prefixes of `list`. */
static int wanted(const char *list, const char *name)
{
    for (const char *p = list; *p;) {
        const size_t len = strcspn(p, ",");
        if (len > 0 && strncmp(name, p, len) == 0)
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 20;
    const struct bench benches[] = {
        {"sdot n=1e6", "GB/s", 2.0 * DOT_N * sizeof(float), canon_sdot_1, vendor_sdot_1},
        {"ddot n=1e6", "GB/s", 2.0 * DOT_N * sizeof(double), canon_ddot_1, vendor_ddot_1},
        {"sdot 4096 in L1", "GB/s", 2.0 * SMALL_REPS * SMALL_N * sizeof(float), canon_sdot_small,
         vendor_sdot_small},
        {"ddot 4096 in L1", "GB/s", 2.0 * SMALL_REPS * SMALL_N * sizeof(double),
         canon_ddot_small, vendor_ddot_small},
        {"ddot n=16", "GB/s", 2.0 * TINY_REPS * 16 * sizeof(double), canon_ddot_16,
         vendor_ddot_16},
        {"ddot n=100", "GB/s", 2.0 * TINY_REPS * 100 * sizeof(double), canon_ddot_100,
         vendor_ddot_100},
        {"sgemv N 4096", "GFLOP/s", 2.0 * GEMV_N * GEMV_N, canon_sgemv_n, vendor_sgemv_n},
        {"sgemv T 4096", "GFLOP/s", 2.0 * GEMV_N * GEMV_N, canon_sgemv_t, vendor_sgemv_t},
        {"dsyrk 1024", "GFLOP/s", 1.0 * L3_N * L3_N * L3_N, canon_dsyrk_1, vendor_dsyrk_1},
        {"dsyr2k 1024", "GFLOP/s", 2.0 * L3_N * L3_N * L3_N, canon_dsyr2k_1, vendor_dsyr2k_1},
        {"dsymm 1024", "GFLOP/s", 2.0 * L3_N * L3_N * L3_N, canon_dsymm_1, vendor_dsymm_1},
        {"dtrmm 1024", "GFLOP/s", 1.0 * L3_N * L3_N * L3_N, canon_dtrmm_1, vendor_dtrmm_1},
        {"dtrsm 1024", "GFLOP/s", 1.0 * L3_N * L3_N * L3_N, canon_dtrsm_1, vendor_dtrsm_1},
    };
    sx = alloc(DOT_N * sizeof *sx);
    sy = alloc(DOT_N * sizeof *sy);
    dx = alloc(DOT_N * sizeof *dx);
    dy = alloc(DOT_N * sizeof *dy);
    sa = alloc((size_t)GEMV_N * GEMV_N * sizeof *sa);
    sv = alloc(GEMV_N * sizeof *sv);
    da = alloc((size_t)L3_N * L3_N * sizeof *da);
    db = alloc((size_t)L3_N * L3_N * sizeof *db);
    dc = alloc((size_t)L3_N * L3_N * sizeof *dc);
    for (size_t i = 0; i < (size_t)L3_N * L3_N; i++) {
        da[i] = (double)(i % 997) * 1e-3 - 0.5;
        db[i] = (double)(i % 991) * 1e-3 - 0.5;
        dc[i] = (double)(i % 983) * 1e-3 - 0.5;
    }
    for (size_t i = 0; i < L3_N; i++) /* trsm: a well-conditioned triangle */
        da[i + i * L3_N] = 4.0;
    sw = alloc(GEMV_N * sizeof *sw);
    srand(1);
    for (int i = 0; i < DOT_N; i++) {
        sx[i] = (float)rand() / RAND_MAX - 0.5f;
        sy[i] = (float)rand() / RAND_MAX - 0.5f;
        dx[i] = sx[i];
        dy[i] = sy[i];
    }
    for (size_t i = 0; i < (size_t)GEMV_N * GEMV_N; i++)
        sa[i] = (float)(i % 1000) * 1e-3f - 0.5f;
    for (int i = 0; i < GEMV_N; i++)
        sv[i] = (float)rand() / RAND_MAX - 0.5f;

    static const char *const isas[] = {"avx2", "avx512"};
    printf("automatic canonical path: %s; best of %d repetitions\n", canon_blas_isa(), reps);
    printf("%-16s %-8s %6s %8s %8s %11s %11s %9s %9s\n", "routine", "unit", "isa", "canon-1t",
           "canon-2t", "openblas-1t", "openblas-2t", "ratio-1t", "ratio-2t");
    for (size_t b = 0; b < sizeof benches / sizeof benches[0]; b++) {
        if (argc > 2 && !wanted(argv[2], benches[b].name))
            continue;
        double best_c[2][2] = {{1e30, 1e30}, {1e30, 1e30}}, best_v[2] = {1e30, 1e30};
        int have[2];
        for (int q = 0; q < 2; q++)
            have[q] = set_isa(isas[q]) == 0;
        canon_set_threads(1);
        openblas_set_num_threads(1);
        for (int r = 0; r < reps; r++) {
            best_time(benches[b].vendor, &best_v[0]);
            for (int q = 0; q < 2; q++)
                if (have[q]) {
                    set_isa(isas[q]);
                    best_time(benches[b].canon, &best_c[q][0]);
                }
        }
        canon_set_threads(2);
        for (int r = 0; r < reps; r++)
            for (int q = 0; q < 2; q++)
                if (have[q]) {
                    set_isa(isas[q]);
                    best_time(benches[b].canon, &best_c[q][1]);
                }
        canon_set_threads(1);
        set_isa(NULL);
        openblas_set_num_threads(2);
        for (int r = 0; r < reps; r++)
            best_time(benches[b].vendor, &best_v[1]);
        const double v1 = benches[b].work / best_v[0] * 1e-9,
                     v2 = benches[b].work / best_v[1] * 1e-9;
        for (int q = 0; q < 2; q++) {
            if (!have[q])
                continue;
            const double c1 = benches[b].work / best_c[q][0] * 1e-9,
                         c2 = benches[b].work / best_c[q][1] * 1e-9;
            printf("%-16s %-8s %6s %8.2f %8.2f %11.2f %11.2f %9.2f %9.2f\n", benches[b].name,
                   benches[b].unit, isas[q], c1, c2, v1, v2, c1 / v1, c2 / v2);
        }
    }
    return 0;
}
