/* Writes a trace of a chosen size for the detdiff benchmark: cblas_ddot
 * with n = 1, `calls` times on each of `threads` threads, the threads run
 * one after another (created and joined in turn) so that two runs give
 * the same trace. threads = 0: every call on the main thread. The program
 * knows nothing of the shim; scripts/bench.sh runs it under LD_PRELOAD.
 * Usage: bench_trace_calls calls [threads]   Prints the checksum.
 */
#include <cblas.h>
#include <pthread.h>
#include <stdio.h>

#include "bench_util.h"

static long calls;

static void *work(void *out)
{
    double x = 0.5, y = 2.0, sum = 0;
    for (long i = 0; i < calls; i++)
        sum += cblas_ddot(1, &x, 1, &y, 1);
    *(double *)out = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: bench_trace_calls calls [threads]\n");
        return 2;
    }
    calls = parse_count("bench_trace_calls", argv[1], "calls");
    long threads = argc > 2 ? parse_count("bench_trace_calls", argv[2], "threads") : 0;
    double sum = 0, part;
    if (threads == 0)
        work(&sum);
    for (long t = 0; t < threads; t++) {
        pthread_t th;
        if (pthread_create(&th, NULL, work, &part) != 0 || pthread_join(th, NULL) != 0) {
            fprintf(stderr, "bench_trace_calls: cannot run thread %ld\n", t);
            return 1;
        }
        sum += part;
    }
    printf("checksum %.17g\n", sum);
    return 0;
}
