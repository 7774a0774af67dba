#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "blas/canonical.h"
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1024, reps = argc > 2 ? atoi(argv[2]) : 10;
    char side = argc > 3 ? argv[3][0] : 'L', uplo = argc > 3 ? argv[3][1] : 'L';
    int solve = argc > 4 ? atoi(argv[4]) : 0; int dbl = argc > 5 ? atoi(argv[5]) : 0;
    canon_set_threads(argc > 6 ? atoi(argv[6]) : 1);
    size_t es = dbl ? 8 : 4;
    char *a = malloc((size_t)n * n * es), *b = malloc((size_t)n * n * es), *b0 = malloc((size_t)n*n*es);
    for (size_t i = 0; i < (size_t)n * n; i++) {
        double v = (double)rand() / RAND_MAX - 0.5;
        if (dbl) { ((double *)a)[i] = v; ((double *)b0)[i] = v; } else { ((float *)a)[i] = (float)v; ((float *)b0)[i] = (float)v; }
    }
    for (int i = 0; i < n; i++) { if (dbl) ((double *)a)[i + (size_t)i * n] = 4; else ((float *)a)[i + (size_t)i * n] = 4; }
    double best = 1e9;
    for (int r = 0; r < reps; r++) {
        memcpy(b, b0, (size_t)n * n * es);
        struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
        if (dbl) { if (solve) canon_dtrsm('C', side, uplo, 'N', 'N', n, n, 1.0, (double*)a, n, (double*)b, n); else canon_dtrmm('C', side, uplo, 'N', 'N', n, n, 1.0, (double*)a, n, (double*)b, n); }
        else { if (solve) canon_strsm('C', side, uplo, 'N', 'N', n, n, 1.0f, (float*)a, n, (float*)b, n); else canon_strmm('C', side, uplo, 'N', 'N', n, n, 1.0f, (float*)a, n, (float*)b, n); }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
        if (s < best) best = s;
    }
    printf("n=%d %c%c %s %s: %.2f GF/s\n", n, side, uplo, solve ? "trsm" : "trmm", dbl ? "d" : "s", (double)n * n * n / best * 1e-9);
    return 0;
}
