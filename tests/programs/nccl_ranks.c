/* An NCCL program of N ranks on the fake libnccl (tests/fakes/nccl), as
 * test-nccl.sh runs it:
 *     nccl_ranks NRANKS COUNT [all]
 * starts NRANKS copies of itself (fork + exec, RANK=r in each one's
 * environment, so the shim names each trace by its rank) that share the
 * unique id rank 0's parent made. Each rank all-reduces (sum, float32)
 * COUNT values it makes from its rank, wide in magnitude so that the
 * order of the sum shows in the bits, and prints
 *     rank R allreduce <hash of the result> reference <equal|differs>
 * where the reference is the ascending-rank sum ((x0 + x1) + x2) + ...
 * computed here from every rank's values. With `all` it goes on through
 * ncclReduce, ncclBroadcast, ncclBcast, ncclReduceScatter, ncclAllGather,
 * ncclAlltoAll, ncclGather, ncclScatter, a ring of ncclSend/ncclRecv in a group,
 * an ncclPutSignal to the next rank, ncclCommSplit and an
 * all-reduce on the split, then (3 ranks or more) ncclCommShrink without the
 * last rank and an all-reduce on the rest, printing a hash of each result.
 *     nccl_ranks initall NRANKS COUNT
 * does the all-reduce in one process instead: ncclCommInitAll, and one
 * thread driving every rank in one group, printing
 *     initall allreduce <hash> reference <equal|differs> ranks <agree|disagree>
 * NCCL_TEST_SCALABLE=1 makes the communicator with ncclCommInitRankScalable.
 * NCCL_TEST_ALGO=Tree makes the program set NCCL_ALGO itself just before
 * it creates its communicator; NCCL_TEST_PERTURB=R changes one input
 * value of rank R.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_launch.h"

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist);
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                           ncclConfig_t *config);
ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                      ncclUniqueId *commIds, ncclConfig_t *config);
ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount,
                            ncclComm_t *newcomm, ncclConfig_t *config, int shrinkFlags);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclAllReduce_fn ncclAllReduce;
ncclReduce_fn ncclReduce;
ncclBroadcast_fn ncclBroadcast;
ncclBcast_fn ncclBcast;
ncclReduceScatter_fn ncclReduceScatter;
ncclAllGather_fn ncclAllGather;
ncclAlltoAll_fn ncclAlltoAll;
ncclGather_fn ncclGather;
ncclScatter_fn ncclScatter;
ncclSend_fn ncclSend;
ncclPutSignal_fn ncclPutSignal;
ncclRecv_fn ncclRecv;
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);

#define CHECK(call)                                                                        \
    do {                                                                                   \
        ncclResult_t st_ = (call);                                                         \
        if (st_ != ncclSuccess) {                                                          \
            fprintf(stderr, "nccl_ranks: %s failed: %d\n", #call, (int)st_);               \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* Rank r's value i: a fraction scaled by 2^-12..2^12, so sums round. */
static float value(int r, size_t i)
{
    uint64_t h = hash_bytes(&i, sizeof i) ^ ((uint64_t)r * 0x9e3779b97f4a7c15ull);
    h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
    float f = (float)((h >> 40) & 0xffffff) / 16777216.0f - 0.5f;
    int e = (int)((h >> 8) % 25) - 12;
    return f * (float)(1 << (e + 12)) / 4096.0f;
}

static void fill(float *x, int r, size_t count)
{
    const char *p = getenv("NCCL_TEST_PERTURB");
    for (size_t i = 0; i < count; i++)
        x[i] = value(r, i);
    if (p && atoi(p) == r && count)
        x[0] += 1.0f;
}

static void print_hash(int rank, const char *what, const void *p, size_t n)
{
    printf("rank %d %s %016llx\n", rank, what, (unsigned long long)hash_bytes(p, n));
}

/* The rest of the collectives, each result hashed. */
static void the_others(ncclComm_t comm, int rank, int n, size_t count, const float *x)
{
    float *a = calloc(count * (size_t)n, sizeof *a), *b = calloc(count * (size_t)n, sizeof *b);
    CHECK(ncclReduce(x, a, count, ncclFloat32, ncclSum, n - 1, comm, NULL));
    if (rank == n - 1)
        print_hash(rank, "reduce", a, count * sizeof *a);
    CHECK(ncclBroadcast(x, a, count, ncclFloat32, 1, comm, NULL));
    print_hash(rank, "broadcast", a, count * sizeof *a);
    memcpy(a, x, count * sizeof *a);
    CHECK(ncclBcast(a, count, ncclFloat32, 0, comm, NULL));
    print_hash(rank, "bcast", a, count * sizeof *a);
    for (int r = 0; r < n; r++)
        fill(a + (size_t)r * count, (rank + r) % n, count);
    CHECK(ncclReduceScatter(a, b, count, ncclFloat32, ncclSum, comm, NULL));
    print_hash(rank, "reducescatter", b, count * sizeof *b);
    CHECK(ncclAllGather(x, b, count, ncclFloat32, comm, NULL));
    print_hash(rank, "allgather", b, count * (size_t)n * sizeof *b);
    CHECK(ncclAlltoAll(a, b, count, ncclFloat32, comm, NULL));
    print_hash(rank, "alltoall", b, count * (size_t)n * sizeof *b);
    /* rank r's chunk for this rank was made by fill((r + rank) % n) */
    int routed = 1;
    float *want = malloc(count * sizeof *want);
    for (int r = 0; r < n; r++) {
        fill(want, (r + rank) % n, count);
        routed &= memcmp(want, b + (size_t)r * count, count * sizeof *want) == 0;
    }
    free(want);
    printf("rank %d alltoall routed %s\n", rank, routed ? "right" : "wrong");
    memset(b, 0, count * (size_t)n * sizeof *b);
    CHECK(ncclGather(x, b, count, ncclFloat32, n - 1, comm, NULL));
    if (rank == n - 1)
        print_hash(rank, "gather", b, count * (size_t)n * sizeof *b);
    CHECK(ncclScatter(a, b, count, ncclFloat32, 0, comm, NULL));
    print_hash(rank, "scatter", b, count * sizeof *b);
    CHECK(ncclGroupStart());
    CHECK(ncclSend(x, count, ncclFloat32, (rank + 1) % n, comm, NULL));
    CHECK(ncclRecv(a, count, ncclFloat32, (rank + n - 1) % n, comm, NULL));
    CHECK(ncclGroupEnd());
    print_hash(rank, "sendrecv", a, count * sizeof *a);
    /* A put into the next rank's window (the fake moves no data). */
    static char window;
    CHECK(ncclPutSignal(x, count, ncclFloat32, (rank + 1) % n, (ncclWindow_t)(void *)&window,
                        64, 1, 0, 0, comm, NULL));
    ncclComm_t half;
    CHECK(ncclCommSplit(comm, rank % 2, rank, &half, NULL));
    CHECK(ncclAllReduce(x, a, count, ncclFloat32, ncclAvg, half, NULL));
    print_hash(rank, "split-avg", a, count * sizeof *a);
    CHECK(ncclCommDestroy(half));
    int last = n - 1;
    if (n > 2 && rank != last) { /* the last rank is shrunk away and calls nothing */
        ncclComm_t rest;
        CHECK(ncclCommShrink(comm, &last, 1, &rest, NULL, 0));
        CHECK(ncclAllReduce(x, a, count, ncclFloat32, ncclSum, rest, NULL));
        print_hash(rank, "shrink-sum", a, count * sizeof *a);
        CHECK(ncclCommDestroy(rest));
    }
    free(a);
    free(b);
}

/* The reference: ascending-rank sums of every rank's values. */
static void reference(float *ref, int nranks, size_t count)
{
    float *other = malloc(count * sizeof *other);
    fill(ref, 0, count);
    for (int r = 1; r < nranks; r++) {
        fill(other, r, count);
        for (size_t i = 0; i < count; i++)
            ref[i] = ref[i] + other[i];
    }
    free(other);
}

static int init_all(int n, size_t count)
{
    ncclComm_t comms[16];
    float *x[16], *y[16], *ref = malloc(count * sizeof *ref);
    if (n < 1 || n > 16)
        return 2;
    CHECK(ncclCommInitAll(comms, n, NULL));
    for (int r = 0; r < n; r++) {
        x[r] = malloc(count * sizeof *x[r]);
        y[r] = malloc(count * sizeof *y[r]);
        fill(x[r], r, count);
    }
    CHECK(ncclGroupStart());
    for (int r = 0; r < n; r++)
        CHECK(ncclAllReduce(x[r], y[r], count, ncclFloat32, ncclSum, comms[r], NULL));
    CHECK(ncclGroupEnd());
    reference(ref, n, count);
    int agree = 1;
    for (int r = 1; r < n; r++)
        agree &= memcmp(y[0], y[r], count * sizeof *ref) == 0;
    printf("initall allreduce %016llx reference %s ranks %s\n",
           (unsigned long long)hash_bytes(y[0], count * sizeof *ref),
           memcmp(y[0], ref, count * sizeof *ref) == 0 ? "equal" : "differs",
           agree ? "agree" : "disagree");
    for (int r = 0; r < n; r++)
        CHECK(ncclCommDestroy(comms[r]));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "initall") == 0)
        return init_all(atoi(argv[2]), (size_t)atol(argv[3]));
    if (argc < 3) {
        fprintf(stderr, "usage: nccl_ranks NRANKS COUNT [all]\n");
        return 2;
    }
    int nranks = atoi(argv[1]);
    size_t count = (size_t)atol(argv[2]);
    int rank;
    ncclUniqueId id;
    if (nccl_launched(&rank, &id) != 0)
        return nccl_launch(nranks, argv);
    const char *algo = getenv("NCCL_TEST_ALGO");
    if (algo)
        setenv("NCCL_ALGO", algo, 1);
    ncclComm_t comm;
    if (getenv("NCCL_TEST_SCALABLE"))
        CHECK(ncclCommInitRankScalable(&comm, nranks, rank, 1, &id, NULL));
    else
        CHECK(ncclCommInitRank(&comm, nranks, id, rank));
    float *x = malloc(count * sizeof *x), *y = malloc(count * sizeof *y);
    float *ref = malloc(count * sizeof *ref);
    fill(x, rank, count);
    CHECK(ncclAllReduce(x, y, count, ncclFloat32, ncclSum, comm, NULL));
    reference(ref, nranks, count);
    printf("rank %d allreduce %016llx reference %s\n", rank,
           (unsigned long long)hash_bytes(y, count * sizeof *y),
           memcmp(y, ref, count * sizeof *y) == 0 ? "equal" : "differs");
    if (argc > 3 && strcmp(argv[3], "all") == 0)
        the_others(comm, rank, nranks, count, x);
    CHECK(ncclCommDestroy(comm));
    return 0;
}
