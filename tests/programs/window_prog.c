/* A long, simple run for the summary-trace tests (test-summary): `calls`
 * cblas_ddot calls on fixed vectors of 4, of which call `k` gets one input
 * element changed by `delta` just before it. delta "clock" takes it from
 * the clock (a run that differs every time, which the shim does not pin);
 * a number makes it fixed (0: no change). Prints the sum of the results.
 * Usage: window_prog calls k delta
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: window_prog calls k delta|clock\n");
        return 2;
    }
    long calls = strtol(argv[1], NULL, 10), k = strtol(argv[2], NULL, 10);
    double delta;
    if (strcmp(argv[3], "clock") == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        delta = 1.0 + (double)ts.tv_nsec; /* never 0 */
    } else {
        delta = strtod(argv[3], NULL);
    }
    double x[4] = { 1, 2, 3, 4 }, y[4] = { 0.5, 0.25, 0.125, 0.0625 }, sum = 0;
    for (long i = 0; i < calls; i++) {
        if (i == k)
            x[0] += delta;
        sum += cblas_ddot(4, x, 1, y, 1);
        if (i == k)
            x[0] -= delta;
    }
    printf("%.17g\n", sum);
    return 0;
}
