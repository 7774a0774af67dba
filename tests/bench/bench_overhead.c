/* Per-call cost of a small intercepted BLAS call: a loop of cblas_ddot with
 * n = 16, timed as the best of several repetitions. The program knows
 * nothing of the shim; scripts/bench.sh runs this same binary without it,
 * under LD_PRELOAD with no trace, and with a full trace, and compares.
 * Usage: bench_overhead [calls [repetitions]]   (default 2000000 5)
 * Prints one line: "cblas_ddot n=16: <ns> ns/call (...)".
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"

#define N 16

int main(int argc, char **argv)
{
    long calls = argc > 1 ? parse_count("bench_overhead", argv[1], "calls") : 2000000;
    long reps = argc > 2 ? parse_count("bench_overhead", argv[2], "repetitions") : 5;
    double x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = 1.0 / (i + 1);
        y[i] = (double)(i % 5) - 2.0;
    }

    /* The sum keeps the calls from being optimised away and is printed so a
     * wrong result under the shim would show. */
    double best = -1, sum = 0;
    for (long r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (long i = 0; i < calls; i++)
            sum += cblas_ddot(N, x, 1, y, 1);
        double per_call = (now_ns() - t0) / (double)calls;
        if (best < 0 || per_call < best)
            best = per_call;
    }
    printf("cblas_ddot n=%d: %.1f ns/call (best of %ld runs of %ld calls; checksum %.17g)\n",
           N, best, reps, calls, sum);
    return 0;
}
