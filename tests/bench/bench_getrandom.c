/* Cost of a 32-byte getrandom(2), timed as the best of several loops. The
 * program knows nothing of the shim; scripts/bench.sh runs it without the
 * shim, pinned (LD_PRELOAD), and pinned and traced, and compares.
 * Usage: bench_getrandom [calls [repetitions]]   (default 200000 5)
 * Prints one line: "getrandom 32 bytes: <ns> ns/call (...)".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "bench_util.h"

int main(int argc, char **argv)
{
    long calls = argc > 1 ? parse_count("bench_getrandom", argv[1], "calls") : 200000;
    long reps = argc > 2 ? parse_count("bench_getrandom", argv[2], "repetitions") : 5;
    unsigned char buf[32];
    unsigned sink = 0;
    double best = 1e30;
    for (long r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (long i = 0; i < calls; i++) {
            if (getrandom(buf, sizeof buf, 0) != (ssize_t)sizeof buf)
                return 1;
            sink += buf[i % sizeof buf];
        }
        double t = (now_ns() - t0) / (double)calls;
        if (t < best)
            best = t;
    }
    printf("getrandom 32 bytes: %.1f ns/call (best of %ld runs of %ld calls; sink %u)\n", best,
           reps, calls, sink);
    return 0;
}
