/* Throughput of the canonical GEMM (shim/blas/canonical_gemm.c) next to the
 * vendor OpenBLAS in the same process: sgemm and dgemm at n = 256, 1024,
 * 2048 (square, column-major, no transpose, alpha = 1, beta = 0) on 1 and
 * 2 threads, GFLOP/s (2n^3 / s, 10^9 per G), the ratio canonical/OpenBLAS,
 * and each as a fraction of this machine's FMA peak. The two libraries
 * alternate, one repetition each, and the best of the repetitions counts,
 * so a noisy neighbour hurts both alike.
 *
 * The peak is measured, not taken from a data sheet: a loop of independent
 * 256-bit FMAs (enough chains to cover latency) on 1 thread, then on 2 at
 * once; peak GFLOP/s = FMA instructions/s x lanes x 2. That is what the
 * cores deliver at the clock they run at under this load, turbo included.
 *
 * It also times m = n = k = 16 calls (ns per call, 1 thread), the shape
 * where per-call overhead shows.
 * Usage: bench_canonical [repetitions]   (default 5)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <immintrin.h>

#include "detshim/canonical.h"

/* OpenBLAS entry points, declared here so no cblas.h is needed. */
void openblas_set_num_threads(int n);
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a,
                 int lda, const float *b, int ldb, float beta, float *c, int ldc);
void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double *a,
                 int lda, const double *b, int ldb, double beta, double *c, int ldc);
enum { COL_MAJOR = 102, NO_TRANS = 111 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- FMA peak ----------------------------------------------------------- */

#define PEAK_ITERS 50000000L

/* 10 independent chains of vfmadd231ps: more than latency x ports (4 x 2
 * on this core), so the loop is bound by FMA throughput alone. Returns FMA
 * instructions per second on this thread. */
__attribute__((target("avx2,fma"), noinline)) static double fma_rate(void)
{
    __m256 x0 = _mm256_set1_ps(1.0f), x1 = x0, x2 = x0, x3 = x0, x4 = x0, x5 = x0, x6 = x0,
           x7 = x0, x8 = x0, x9 = x0;
    const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
    double t0 = now_s();
    for (long i = 0; i < PEAK_ITERS; i++) {
        x0 = _mm256_fmadd_ps(x0, m, a);
        x1 = _mm256_fmadd_ps(x1, m, a);
        x2 = _mm256_fmadd_ps(x2, m, a);
        x3 = _mm256_fmadd_ps(x3, m, a);
        x4 = _mm256_fmadd_ps(x4, m, a);
        x5 = _mm256_fmadd_ps(x5, m, a);
        x6 = _mm256_fmadd_ps(x6, m, a);
        x7 = _mm256_fmadd_ps(x7, m, a);
        x8 = _mm256_fmadd_ps(x8, m, a);
        x9 = _mm256_fmadd_ps(x9, m, a);
        __asm__ volatile("" : "+x"(x0), "+x"(x1), "+x"(x2), "+x"(x3), "+x"(x4));
    }
    double t = now_s() - t0;
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(x0, x1), _mm256_add_ps(x2, x3)),
                             _mm256_add_ps(_mm256_add_ps(x4, x5), _mm256_add_ps(x6, x7)));
    s = _mm256_add_ps(s, _mm256_add_ps(x8, x9));
    float out[8];
    _mm256_storeu_ps(out, s);
    if (out[0] == 12345.0f) /* keeps the chains live */
        puts("");
    return 10.0 * (double)PEAK_ITERS / t;
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

static void fill(void *p, size_t n, int dbl, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        double v = (double)(seed >> 9) / (double)(1u << 23) - 0.5;
        if (dbl)
            ((double *)p)[i] = v;
        else
            ((float *)p)[i] = (float)v;
    }
}

/* One product C = A*B, n x n, by the canonical kernel (canon = 1) or by
 * OpenBLAS. Returns seconds. */
static double one_gemm(int canon, int dbl, int n, const void *a, const void *b, void *c)
{
    double t0 = now_s();
    if (dbl) {
        if (canon)
            canon_dgemm('C', 'N', 'N', n, n, n, 1.0, a, n, b, n, 0.0, c, n);
        else
            cblas_dgemm(COL_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
    } else {
        if (canon)
            canon_sgemm('C', 'N', 'N', n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        else
            cblas_sgemm(COL_MAJOR, NO_TRANS, NO_TRANS, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    }
    return now_s() - t0;
}

/* Best seconds per call over reps rounds, each round timing enough calls
 * to last ~0.2 s; canonical and OpenBLAS alternate round by round. */
static void time_pair(int dbl, int n, int threads, int reps, double best[2])
{
    size_t elems = (size_t)n * (size_t)n, es = dbl ? 8 : 4;
    void *a = malloc(elems * es), *b = malloc(elems * es), *c = malloc(elems * es);
    fill(a, elems, dbl, 1);
    fill(b, elems, dbl, 2);
    canon_set_threads(threads);
    openblas_set_num_threads(threads);
    double flops = 2.0 * n * (double)n * n;
    int calls = (int)(0.2 * 50e9 * threads / flops) + 1;
    best[0] = best[1] = 1e30;
    for (int w = 0; w < 2; w++) /* warm-up: workspace, threads, caches */
        one_gemm(w, dbl, n, a, b, c);
    for (int r = 0; r < reps; r++)
        for (int canon = 1; canon >= 0; canon--) {
            double t = 0;
            for (int i = 0; i < calls; i++)
                t += one_gemm(canon, dbl, n, a, b, c);
            if (t / calls < best[canon ? 0 : 1])
                best[canon ? 0 : 1] = t / calls;
        }
    free(a);
    free(b);
    free(c);
}

/* ns per m = n = k = 16 call on one thread, C = A*B + C (beta = 1, the
 * accumulate form small layers use), best of reps rounds. */
static void time_small(int dbl, int reps, double ns[2])
{
    enum { N = 16, CALLS = 200000 };
    double a[N * N], b[N * N], c[N * N];
    fill(a, N * N, dbl, 3);
    fill(b, N * N, dbl, 4);
    fill(c, N * N, dbl, 5);
    canon_set_threads(1);
    openblas_set_num_threads(1);
    ns[0] = ns[1] = 1e30;
    for (int r = 0; r < reps; r++)
        for (int canon = 1; canon >= 0; canon--) {
            double t0 = now_s();
            for (int i = 0; i < CALLS; i++) {
                if (dbl && canon)
                    canon_dgemm('C', 'N', 'N', N, N, N, 1.0, a, N, b, N, 1e-3, c, N);
                else if (dbl)
                    cblas_dgemm(COL_MAJOR, NO_TRANS, NO_TRANS, N, N, N, 1.0, a, N, b, N, 1e-3,
                                c, N);
                else if (canon)
                    canon_sgemm('C', 'N', 'N', N, N, N, 1.0f, (float *)a, N, (float *)b, N,
                                1e-3f, (float *)c, N);
                else
                    cblas_sgemm(COL_MAJOR, NO_TRANS, NO_TRANS, N, N, N, 1.0f, (float *)a, N,
                                (float *)b, N, 1e-3f, (float *)c, N);
            }
            double t = (now_s() - t0) / CALLS * 1e9;
            if (t < ns[canon ? 0 : 1])
                ns[canon ? 0 : 1] = t;
        }
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1)
        reps = 1;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        fprintf(stderr, "bench_canonical: this CPU has no AVX2+FMA; peak loop not portable\n");
        return 2;
    }
    double fma1 = peak_fma(1), fma2 = peak_fma(2);
    /* 256-bit FMA: 8 float or 4 double lanes, 2 flops each. */
    double peak[2][3] = { { 0, fma1 * 16 / 1e9, fma2 * 16 / 1e9 },
                          { 0, fma1 * 8 / 1e9, fma2 * 8 / 1e9 } };
    printf("canonical GEMM vs OpenBLAS (isa %s), best of %d\n", canon_isa(), reps);
    printf("measured FMA peak: 1 thread %.1f GFLOP/s float, %.1f double; "
           "2 threads %.1f float, %.1f double (%.2f G vfmadd/s per thread)\n",
           peak[0][1], peak[1][1], peak[0][2], peak[1][2], fma1 / 1e9);
    printf("%-6s %5s %3s %12s %12s %7s %8s %8s\n", "type", "n", "thr", "canon GF/s",
           "openblas GF/s", "ratio", "canon%pk", "oblas%pk");
    static const int sizes[] = { 256, 1024, 2048 };
    for (int dbl = 0; dbl < 2; dbl++)
        for (int s = 0; s < 3; s++)
            for (int threads = 1; threads <= 2; threads++) {
                int n = sizes[s];
                double best[2];
                time_pair(dbl, n, threads, reps, best);
                double flops = 2.0 * n * (double)n * n;
                double g0 = flops / best[0] / 1e9, g1 = flops / best[1] / 1e9;
                printf("%-6s %5d %3d %12.1f %12.1f %7.3f %7.1f%% %7.1f%%\n",
                       dbl ? "dgemm" : "sgemm", n, threads, g0, g1, g0 / g1,
                       100 * g0 / peak[dbl][threads], 100 * g1 / peak[dbl][threads]);
                fflush(stdout);
            }
    for (int dbl = 0; dbl < 2; dbl++) {
        double ns[2];
        time_small(dbl, reps, ns);
        printf("%s m=n=k=16, 1 thread: canonical %.0f ns/call, OpenBLAS %.0f ns/call\n",
               dbl ? "dgemm" : "sgemm", ns[0], ns[1]);
    }
    return 0;
}
