/* All-reduce throughput on the fake libnccl, for scripts/bench.sh:
 *     bench_nccl NRANKS BYTES ITERS
 * starts NRANKS ranks (tests/programs/nccl_launch.h); each all-reduces
 * BYTES of float32 ITERS times after one warm-up call, and rank 0 prints
 *     allreduce BYTES bytes: MS ms/call
 * The shim reaches it only through LD_PRELOAD, so one binary measures the
 * fake alone, pinned and canonical side by side.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "nccl_launch.h"

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclAllReduce_fn ncclAllReduce;

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: bench_nccl NRANKS BYTES ITERS\n");
        return 2;
    }
    int nranks = (int)parse_count("bench_nccl", argv[1], "NRANKS");
    size_t count = (size_t)parse_count("bench_nccl", argv[2], "BYTES") / sizeof(float);
    long iters = parse_count("bench_nccl", argv[3], "ITERS");
    int rank;
    ncclUniqueId id;
    if (nccl_launched(&rank, &id) != 0)
        return nccl_launch(nranks, argv);
    ncclComm_t comm;
    float *x = malloc(count * sizeof *x), *y = malloc(count * sizeof *y);
    if (!x || !y || ncclCommInitRank(&comm, nranks, id, rank) != ncclSuccess)
        return 1;
    for (size_t i = 0; i < count; i++)
        x[i] = (float)((i * 2654435761u + (size_t)rank) % 1000) / 999.0f;
    if (ncclAllReduce(x, y, count, ncclFloat32, ncclSum, comm, NULL) != ncclSuccess)
        return 1;
    double t0 = now_ns();
    for (long k = 0; k < iters; k++)
        if (ncclAllReduce(x, y, count, ncclFloat32, ncclSum, comm, NULL) != ncclSuccess)
            return 1;
    double ms = (now_ns() - t0) / 1e6 / (double)iters;
    if (rank == 0)
        printf("allreduce %zu bytes: %.3f ms/call\n", count * sizeof(float), ms);
    ncclCommDestroy(comm);
    return 0;
}
