/* Per-call cost the shim adds to a cuBLAS GEMM, on the fake cuBLAS
 * (tests/fakes/cuda, host memory): a loop of cublasSgemm_v2 on 8x8
 * matrices, timed as the best of several repetitions. The fake's own work
 * is small and the same in every run, so the difference between runs is
 * the shim's CPU cost per call: the policy's checks, and when traced the
 * record and the queued (asynchronous) operand digests. It cannot show a
 * real driver's cost of queueing copies and kernels, nor GPU time.
 * Usage: bench_cublas [calls [repetitions]]   (default 200000 5)
 * Prints one line: "cublasSgemm_v2 8x8x8: <ns> ns/call (...)".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_util.h"
#include "fake.h"

enum { DIM = 8 };

int main(int argc, char **argv)
{
    long calls = argc > 1 ? parse_count("bench_cublas", argv[1], "calls") : 200000;
    long reps = argc > 2 ? parse_count("bench_cublas", argv[2], "repetitions") : 5;
    static float a[DIM * DIM], b[DIM * DIM], c[DIM * DIM];
    for (int i = 0; i < DIM * DIM; i++) {
        a[i] = 1.0f / (float)(i + 1);
        b[i] = (float)(i % 5) - 2.0f;
    }
    cublasHandle_t h;
    if (cuInit(0) != 0 || cublasCreate_v2(&h) != 0) {
        fprintf(stderr, "bench_cublas: cannot start the fake cuBLAS\n");
        return 2;
    }
    const float one = 1, zero = 0;
    double best = -1, sum = 0;
    for (long r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (long i = 0; i < calls; i++) {
            if (cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, DIM, DIM, DIM, &one, a, DIM, b, DIM,
                               &zero, c, DIM) != 0)
                return 1;
            sum += c[0];
        }
        double per_call = (now_ns() - t0) / (double)calls;
        if (best < 0 || per_call < best)
            best = per_call;
    }
    printf("cublasSgemm_v2 %dx%dx%d: %.1f ns/call (best of %ld runs of %ld calls; checksum %.9g)\n",
           DIM, DIM, DIM, best, reps, calls, sum);
    return 0;
}
