/* Canonical collectives: the reduction order of a floating-point sum, avg
 * or prod fixed by the world size alone, whatever algorithm, protocol,
 * channel count or topology NCCL would use (docs/collectives.md). For
 * element i, every rank computes ((x0[i] + x1[i]) + x2[i]) + ... in
 * ascending rank order, rounding to the type after each step.
 *
 * Built from NCCL's own data movement, which is exact: in rounds of at
 * most CANON_CHUNK bytes per rank, all-reduce and reduce gather every
 * rank's chunk with the real ncclAllGather into a scratch buffer from
 * ncclMemAlloc; reduce-scatter sends block p's chunk to rank p with
 * grouped ncclSend/ncclRecv. The scratch is copied to the host (the
 * stream waited for), summed there, and the result copied into the
 * receive buffer. Each round of every op in the batch is one NCCL group,
 * so one thread may drive several ranks (ncclCommInitAll). Cost: an
 * all-reduce moves nranks times its buffer into each rank (a ring moves
 * about twice), plus one device-to-host and one host-to-device copy per
 * round and the host's sum; docs/benchmarks.md has numbers.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda.h"
#include "nccl/nccl.h"
#include "nccl/nccl_elem.h"

#define CANON_CHUNK (4u << 20)

/* One op's state across rounds. */
struct canon {
    struct nccl_op *o;
    size_t es, total, off, m, per_round;
    void *scratch;          /* device: nranks * per_round elements */
    unsigned char *host;    /* the scratch's copy */
    unsigned char *out;     /* one round's result */
};

static void *nccl_fn(void **cache, const char *name)
{
    return resolve_real_cached_preferring(cache, name, nccl_is_vendor_file);
}

/* Queues one round's data movement of k (inside the caller's group). */
static ncclResult_t move_round(struct canon *k)
{
    static void *ag_cache, *send_cache, *recv_cache;
    const struct nccl_op *o = k->o;
    int n = o->ci.nranks;
    const char *send = o->send;
    if (o->kind != NCCL_REDUCE_SCATTER) {
        ncclAllGather_fn *ag = (ncclAllGather_fn *)(uintptr_t)nccl_fn(&ag_cache, "ncclAllGather");
        return ag(send + k->off * k->es, k->scratch, k->m, o->type, o->comm, o->stream);
    }
    ncclSend_fn *snd = (ncclSend_fn *)(uintptr_t)nccl_fn(&send_cache, "ncclSend");
    ncclRecv_fn *rcv = (ncclRecv_fn *)(uintptr_t)nccl_fn(&recv_cache, "ncclRecv");
    for (int p = 0; p < n; p++) {
        ncclResult_t st = snd(send + ((size_t)p * o->count + k->off) * k->es, k->m, o->type, p,
                              o->comm, o->stream);
        if (st == ncclSuccess)
            st = rcv((char *)k->scratch + (size_t)p * k->m * k->es, k->m, o->type, p, o->comm,
                     o->stream);
        if (st != ncclSuccess)
            return st;
    }
    return ncclSuccess;
}

/* Sums the round's gathered chunks in ascending rank order and writes
 * them to the receive buffer. Returns 0, or -1 when a copy failed. */
static int sum_round(struct canon *k)
{
    static void *htod_cache;
    const struct nccl_op *o = k->o;
    int n = o->ci.nranks;
    size_t bytes = k->m * k->es;
    if (cuda_read(o->stream, k->host, k->scratch, (size_t)n * bytes) != 0)
        return -1;
    for (size_t j = 0; j < k->m; j++) {
        unsigned char *acc = k->out + j * k->es;
        memcpy(acc, k->host + j * k->es, k->es);
        for (int r = 1; r < n; r++)
            nccl_elem_combine(o->type, o->op, acc, k->host + ((size_t)r * k->m + j) * k->es);
        nccl_elem_finish(o->type, o->op, acc, n);
    }
    if (o->kind == NCCL_REDUCE && o->ci.rank != o->root)
        return 0;
    cuMemcpyHtoD_v2_fn *htod = (cuMemcpyHtoD_v2_fn *)(uintptr_t)cuda_sym(&htod_cache,
                                                                         "cuMemcpyHtoD_v2");
    if (!htod)
        return -1;
    CUdeviceptr dst = (CUdeviceptr)(uintptr_t)((char *)o->recv + k->off * k->es);
    return htod(dst, k->out, bytes) == CUDA_SUCCESS ? 0 : -1;
}

static void release(struct canon *ks, int n)
{
    static void *free_cache;
    ncclMemFree_fn *mfree = (ncclMemFree_fn *)(uintptr_t)nccl_fn(&free_cache, "ncclMemFree");
    for (int i = 0; i < n; i++) {
        if (ks[i].scratch)
            mfree(ks[i].scratch);
        free(ks[i].host);
        free(ks[i].out);
    }
    free(ks);
}

ncclResult_t nccl_canonical_run(struct nccl_op *ops, int n)
{
    static void *alloc_cache, *start_cache, *end_cache;
    ncclMemAlloc_fn *malloc_dev = (ncclMemAlloc_fn *)(uintptr_t)nccl_fn(&alloc_cache,
                                                                        "ncclMemAlloc");
    ncclGroupStart_fn *gstart = (ncclGroupStart_fn *)(uintptr_t)nccl_fn(&start_cache,
                                                                        "ncclGroupStart");
    ncclGroupEnd_fn *gend = (ncclGroupEnd_fn *)(uintptr_t)nccl_fn(&end_cache, "ncclGroupEnd");
    struct canon *ks = calloc((size_t)n, sizeof *ks);
    ncclResult_t st = ks ? ncclSuccess : ncclSystemError;
    for (int i = 0; st == ncclSuccess && i < n; i++) {
        struct canon *k = &ks[i];
        k->o = &ops[i];
        k->es = nccl_type_size(ops[i].type);
        k->total = ops[i].count;
        k->per_round = CANON_CHUNK / k->es;
        if (k->per_round > k->total)
            k->per_round = k->total ? k->total : 1;
        size_t all = (size_t)ops[i].ci.nranks * k->per_round * k->es;
        k->host = malloc(all);
        k->out = malloc(k->per_round * k->es);
        if (!k->host || !k->out || malloc_dev(&k->scratch, all) != ncclSuccess)
            st = ncclSystemError;
    }
    for (int more = 1; st == ncclSuccess && more;) {
        more = 0;
        st = gstart();
        for (int i = 0; st == ncclSuccess && i < n; i++) {
            struct canon *k = &ks[i];
            k->m = k->total - k->off < k->per_round ? k->total - k->off : k->per_round;
            if (k->m)
                st = move_round(k);
        }
        ncclResult_t end = gend();
        if (st == ncclSuccess)
            st = end;
        for (int i = 0; st == ncclSuccess && i < n; i++) {
            struct canon *k = &ks[i];
            if (!k->m)
                continue;
            if (sum_round(k) != 0) {
                core_log(DS_LOG_QUIET, "%s: the canonical reduction could not copy its data "
                         "between the device and the host; the call failed", k->o->api);
                st = ncclUnhandledCudaError;
            }
            k->off += k->m;
            more |= k->off < k->total;
        }
    }
    for (int i = 0; i < n; i++)
        ops[i].status = st;
    if (ks)
        release(ks, n);
    return st;
}
