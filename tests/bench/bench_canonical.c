/* Throughput of the canonical GEMM (shim/blas/canonical_gemm.c) next to the
 * vendor OpenBLAS in the same process: sgemm and dgemm at n = 256, 1024,
 * 2048 (square, column-major, no transpose, alpha = 1, beta = 0) on 1 and
 * 2 threads, cgemm and zgemm at n = 1024, in GFLOP/s (2n^3 / s real, 8n^3
 * complex, 10^9 per G), the ratio canonical/OpenBLAS, and each as a
 * fraction of this machine's FMA peak. The two libraries alternate round by
 * round and the best round counts, so a noisy neighbour hurts both alike.
 *
 * The peak is measured, not taken from a data sheet: a loop of independent
 * 256-bit FMAs on registers only (enough chains to cover latency) on 1
 * thread, then on 2 at once; peak GFLOP/s = FMA instructions/s x lanes x 2
 * flops. That is what the cores deliver at the clock they run at, turbo
 * included; a GEMM kernel, which must also load its operands, reaches
 * only part of it on this core, the vendor's as much as ours.
 *
 * Each canonical row is measured on every instruction-set path the CPU
 * has beyond scalar (the isa column: avx2, and avx512 where the CPU and OS
 * have it), in the same alternation, so the paths compare side by side;
 * the OpenBLAS column is the same for a shape's rows.
 *
 * It also times m = n = k = 16 calls (ns per call, 1 thread, beta != 0),
 * the shape where per-call overhead shows.
 * Usage: bench_canonical [rounds [complex]]   (default 9; about 90 s in all;
 * "complex" times the cgemm and zgemm rows only)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <immintrin.h>

#include "blas/canonical.h"

/* OpenBLAS entry points, declared here so no cblas.h is needed. */
void openblas_set_num_threads(int n);
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a,
                 int lda, const float *b, int ldb, float beta, float *c, int ldc);
void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a,
                 int lda, const double *b, int ldb, double beta, double *c, int ldc);
void cblas_cgemm(int order, int ta, int tb, int m, int n, int k, const void *alpha, const void *a,
                 int lda, const void *b, int ldb, const void *beta, void *c, int ldc);
void cblas_zgemm(int order, int ta, int tb, int m, int n, int k, const void *alpha, const void *a,
                 int lda, const void *b, int ldb, const void *beta, void *c, int ldc);
enum { COL_MAJOR = 102, NO_TRANS = 111 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- FMA peak ----------------------------------------------------------- */

#define PEAK_ITERS 100000000L

/* 12 independent chains of vfmadd231ps: more than latency x ports (4 x 2
 * on this core), so the loop is bound by FMA throughput alone. Returns FMA
 * instructions per second on this thread. */
#define CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define DECL(i) __m256 x##i = _mm256_set1_ps(1.0f + (float)(i));
#define STEP(i) x##i = _mm256_fmadd_ps(x##i, m, a);
#define SUM(i) s = _mm256_add_ps(s, x##i);

__attribute__((target("avx2,fma"), noinline)) static double fma_rate(void)
{
    CHAINS(DECL)
    __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
    double t0 = now_s();
    for (long i = 0; i < PEAK_ITERS; i++) {
        CHAINS(STEP)
        /* keeps m and a in registers but opaque, so nothing is hoisted */
        __asm__ volatile("" : "+x"(m), "+x"(a));
    }
    double t = now_s() - t0;
    __m256 s = _mm256_setzero_ps();
    CHAINS(SUM)
    float out[8];
    _mm256_storeu_ps(out, s);
    if (out[0] == 12345.0f) /* keeps the chains live */
        puts("");
    return 12.0 * (double)PEAK_ITERS / t;
}

static void *fma_rate_thread(void *v)
{
    *(double *)v = fma_rate();
    return NULL;
}

/* FMA instructions/s of `threads` threads running at once, summed. */
static double peak_fma(int threads)
{
    pthread_t t[2];
    double r[2] = { 0, 0 };
    for (int i = 1; i < threads; i++)
        pthread_create(&t[i], NULL, fma_rate_thread, &r[i]);
    r[0] = fma_rate();
    for (int i = 1; i < threads; i++)
        pthread_join(t[i], NULL);
    return r[0] + r[1];
}

/* ---- GEMM timing -------------------------------------------------------- */

enum type { S, D, C, Z };
static const char *const type_name[] = { "sgemm", "dgemm", "cgemm", "zgemm" };
static const size_t type_size[] = { 4, 8, 8, 16 };
/* flops per multiply-add of the type: 2 real, 8 complex */
static const double type_flops[] = { 2, 2, 8, 8 };

/* Fills the parts (floats or doubles) of n elements with values in
 * [-0.5, 0.5). */
static void fill(void *p, size_t n, enum type t, unsigned seed)
{
    size_t parts = n * (t == C || t == Z ? 2 : 1);
    for (size_t i = 0; i < parts; i++) {
        seed = seed * 1103515245u + 12345u;
        double v = (double)(seed >> 9) / (double)(1u << 23) - 0.5;
        if (t == D || t == Z)
            ((double *)p)[i] = v;
        else
            ((float *)p)[i] = (float)v;
    }
}

/* One product C = alpha*A*B + beta*C, n x n, column-major, no transpose,
 * by the canonical kernel (canon = 1) or by OpenBLAS. */
static void one_gemm(int canon, enum type t, int n, const void *a, const void *b, void *c,
                     double beta)
{
    const double one[2] = { 1, 0 }, bz[2] = { beta, 0 };
    const float onef[2] = { 1, 0 }, bzf[2] = { (float)beta, 0 };
    switch (t) {
    case S:
        if (canon)
            canon_sgemm('C', 'N', 'N', n, n, n, 1.0f, a, n, b, n, (float)beta, c, n);
        else
            cblas_sgemm(COL_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0f, a, n, b, n, (float)beta,
                        c, n);
        break;
    case D:
        if (canon)
            canon_dgemm('C', 'N', 'N', n, n, n, 1.0, a, n, b, n, beta, c, n);
        else
            cblas_dgemm(COL_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0, a, n, b, n, beta, c, n);
        break;
    case C:
        if (canon)
            canon_cgemm('C', 'N', 'N', n, n, n, onef, a, n, b, n, bzf, c, n);
        else
            cblas_cgemm(COL_MAJOR, NO_TRANS, NO_TRANS, n, n, n, onef, a, n, b, n, bzf, c, n);
        break;
    case Z:
        if (canon)
            canon_zgemm('C', 'N', 'N', n, n, n, one, a, n, b, n, bz, c, n);
        else
            cblas_zgemm(COL_MAJOR, NO_TRANS, NO_TRANS, n, n, n, one, a, n, b, n, bz, c, n);
        break;
    }
}

/* Idle worker threads of the library timed last may still be spinning
 * (OpenBLAS's wait about 0.1 s, yielding, before they sleep): wait them out
 * so they do not take a core from the library timed next. */
static void settle(void)
{
    struct timespec ts = { 0, 200 * 1000 * 1000 };
    nanosleep(&ts, NULL);
}

/* The contenders of a shape: the canonical kernel on each path, then
 * OpenBLAS (isa NULL). */
static const char *const isa_names[] = { "avx2", "avx512", NULL };
#define NCONT 3

/* Best seconds per call over reps rounds, each round timing enough calls
 * to last ~0.05 s (at least one); the contenders alternate round by round,
 * each round after a pause (settle). Many short rounds give each a fair
 * chance at the quiet moments of a shared machine. best[i] is contender
 * i's (isa_names), 0 for a path this CPU lacks. */
static void time_set(enum type t, int n, int threads, int reps, double beta, double best[NCONT])
{
    size_t elems = (size_t)n * (size_t)n;
    void *a = malloc(elems * type_size[t]), *b = malloc(elems * type_size[t]);
    void *c = malloc(elems * type_size[t]);
    if (!a || !b || !c) {
        fprintf(stderr, "bench_canonical: out of memory\n");
        exit(2);
    }
    fill(a, elems, t, 1);
    fill(b, elems, t, 2);
    fill(c, elems, t, 3);
    canon_set_threads(threads);
    openblas_set_num_threads(threads);
    double flops = type_flops[t] * n * (double)n * n;
    int calls = (int)(0.05 * 40e9 * threads / flops) + 1;
    int have[NCONT];
    for (int q = 0; q < NCONT; q++) {
        have[q] = !isa_names[q] || canon_set_isa(isa_names[q]) == 0;
        best[q] = have[q] ? 1e30 : 0;
        if (have[q]) /* warm-up: workspace, threads, caches */
            one_gemm(isa_names[q] != NULL, t, n, a, b, c, beta);
    }
    for (int r = 0; r < reps; r++)
        for (int q = 0; q < NCONT; q++) {
            if (!have[q])
                continue;
            if (isa_names[q])
                canon_set_isa(isa_names[q]);
            settle();
            double t0 = now_s();
            for (int i = 0; i < calls; i++)
                one_gemm(isa_names[q] != NULL, t, n, a, b, c, beta);
            double per = (now_s() - t0) / calls;
            if (per < best[q])
                best[q] = per;
        }
    canon_set_isa(NULL);
    free(a);
    free(b);
    free(c);
}

/* Peak GFLOP/s of 256-bit FMAs for 1 and 2 threads, float; the best of
 * the measurements so far (the machine's clock varies over minutes, and
 * the GEMMs are best-of too). */
static double peak_f32[3];

static void measure_peak(void)
{
    for (int th = 1; th <= 2; th++) {
        double g = peak_fma(th) * 16 / 1e9; /* 8 float lanes x 2 flops */
        if (g > peak_f32[th])
            peak_f32[th] = g;
    }
}

/* The 1-minute load average, so a reader can tell a busy machine. */
static double loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 9;
    const int only_complex = argc > 2 && strcmp(argv[2], "complex") == 0;
    if (reps < 1)
        reps = 1;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        fprintf(stderr, "bench_canonical: this CPU has no AVX2+FMA; peak loop not portable\n");
        return 2;
    }
    static const int sizes[] = { 256, 1024, 2048 };
    struct row {
        enum type t;
        int n, threads;
        double best[NCONT];
    } rows[3 * 2 * 2 + 4];
    int nrows = 0;
    double load0 = loadavg();
    measure_peak();
    for (enum type t = S; t <= D && !only_complex; t++) {
        for (int s = 0; s < 3; s++)
            for (int threads = 1; threads <= 2; threads++) {
                struct row *r = &rows[nrows++];
                r->t = t, r->n = sizes[s], r->threads = threads;
                time_set(t, r->n, threads, reps, 0.0, r->best);
            }
        measure_peak();
    }
    for (enum type t = C; t <= Z; t++)
        for (int threads = 1; threads <= 2; threads++) {
            struct row *r = &rows[nrows++];
            r->t = t, r->n = 1024, r->threads = threads;
            time_set(t, r->n, threads, reps, 0.0, r->best);
        }
    measure_peak();

    printf("canonical GEMM vs OpenBLAS, same process (automatic isa %s), C = A*B, "
           "column-major, best of %d rounds; load average %.2f before, %.2f after\n",
           canon_isa(), reps, load0, loadavg());
    printf("FMA peak (measured, 256-bit FMAs, best of 4): 1 thread %.1f GFLOP/s float, %.1f "
           "double; 2 threads %.1f float, %.1f double\n",
           peak_f32[1], peak_f32[1] / 2, peak_f32[2], peak_f32[2] / 2);
    printf("%-6s %5s %3s %6s %11s %14s %7s %9s %9s\n", "", "n", "thr", "isa", "canon GF/s",
           "OpenBLAS GF/s", "ratio", "canon %pk", "oblas %pk");
    for (int i = 0; i < nrows; i++) {
        const struct row *r = &rows[i];
        double flops = type_flops[r->t] * r->n * (double)r->n * r->n;
        double g1 = flops / r->best[NCONT - 1] / 1e9;
        double pk = peak_f32[r->threads] / (r->t == D || r->t == Z ? 2 : 1);
        for (int q = 0; q < NCONT - 1; q++) {
            if (!r->best[q])
                continue;
            double g0 = flops / r->best[q] / 1e9;
            printf("%-6s %5d %3d %6s %11.1f %14.1f %7.3f %8.1f%% %8.1f%%\n", type_name[r->t],
                   r->n, r->threads, isa_names[q], g0, g1, g0 / g1, 100 * g0 / pk, 100 * g1 / pk);
        }
    }
    for (enum type t = S; t <= D && !only_complex; t++) {
        double best[NCONT];
        time_set(t, 16, 1, reps, 1e-3, best);
        for (int q = 0; q < NCONT - 1; q++)
            if (best[q])
                printf("%s m=n=k=16, beta != 0, 1 thread, %s: canonical %.0f ns/call, OpenBLAS "
                       "%.0f ns/call\n", type_name[t], isa_names[q], best[q] * 1e9,
                       best[NCONT - 1] * 1e9);
    }
    return 0;
}
