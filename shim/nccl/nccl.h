/* The nccl family (shim/nccl): interceptors for NCCL's communicator
 * creation (comm.c), its collectives, point-to-point calls and groups
 * (coll.c), the canonical reductions that replace the floating-point
 * ones in canonical mode (canonical.c), and the digest export the Python
 * start-up hook uses for torch.distributed (export.c). Device buffers are
 * digested through the cuda family (shim/cuda/devdigest.c), on the
 * device and asynchronously as for cuBLAS. What is guaranteed is in
 * docs/collectives.md.
 */
#ifndef DETSHIM_NCCL_H
#define DETSHIM_NCCL_H

#include <stdint.h>

#include "core/core.h"
#include "nccl/nccl_api.h"
#include "nccl/nccl_libs.h"
#include "trace/trace.h"

/* REAL_FN for the family, preferring libnccl's definition. */
#define NCCL_REAL_FN(type, name)                                                         \
    static void *real_##name##_cache;                                                    \
    type real = (type)(uintptr_t)resolve_real_cached_preferring(&real_##name##_cache,    \
                                                                #name, nccl_is_vendor_file)

/* One intercepted call: `traced` when recorded; `mode` the policy's
 * [nccl] mode (enum policy_nccl_mode). */
struct nccl_call {
    int traced, mode;
};

/* As cuda_enter/cuda_leave: 0 when re-entered (call the real function
 * and return); 1 with the guard held, paired with nccl_leave(). */
int nccl_enter(struct nccl_call *c);
void nccl_leave(void);

/* What the shim knows of a communicator (comm.c): an identity that is
 * the same in every run and on every rank of it ("w<k>" for the k-th
 * communicator this process made with ncclCommInitRank*, "a<k>" for one
 * of ncclCommInitAll, "<parent>/s<j>c<colour>" for the j-th split of a
 * parent), never a pointer nor the unique id (random in NCCL); its rank
 * and size; and the decision in force when it was made. */
struct nccl_comm_info {
    char id[64];
    int rank, nranks;
    unsigned nsplits;
    int64_t ncoll; /* collectives called on it so far */
    char algo[72], proto[72], channels[40];
};

/* Fills *out for comm; returns 0, or -1 for a communicator the shim did
 * not see made (its info then says "unknown", rank and size from NCCL). */
int nccl_comm_get(ncclComm_t comm, struct nccl_comm_info *out);

/* The ordinal of the next collective on comm (0, 1, ...), the same on
 * every rank, since NCCL requires every rank to call a communicator's
 * collectives in one order; -1 for a communicator the shim did not see
 * made. detdiff lines ranks up by it (shim/detdiff/ranks.c). */
int64_t nccl_comm_next_coll(ncclComm_t comm);

/* Adds rank, nranks and comm to r, and the decision notes nccl.algo,
 * nccl.proto, nccl.channels and nccl.mode. */
void nccl_rec_comm(struct trace_rec *r, const struct nccl_comm_info *ci, int mode);

/* Records `count` elements of type t at p (device memory) as operand
 * `name`, digested on `stream` (queued where it can be). A buffer that
 * cannot be digested records the digest of nothing and the note
 * cuda.digest. */
void nccl_rec_buffer(struct trace_rec *r, const char *name, int role, cudaStream_t stream,
                     const void *p, size_t count, int t);

/* NCCL's names for trace parameters: "float32", "sum"; "premulsum" for
 * an operator made by ncclRedOpCreatePreMulSum. */
const char *nccl_type_name(int t);
const char *nccl_op_name(int op);

/* 1 if canonical mode replaces this reduction: a floating-point type and
 * sum, avg or prod (max and min are exact in any order). */
int nccl_canonical_applies(int t, int op);

/* One collective or point-to-point call, as coll.c hands it on: to the
 * canonical path, and to recording when its group ends. */
enum nccl_kind { NCCL_ALLREDUCE, NCCL_REDUCE, NCCL_BROADCAST, NCCL_BCAST, NCCL_REDUCE_SCATTER,
                 NCCL_ALLGATHER, NCCL_SEND, NCCL_RECV, NCCL_ALLTOALL, NCCL_GATHER, NCCL_SCATTER,
                 NCCL_PUT_SIGNAL };
struct nccl_op {
    int kind;
    const char *api;
    const void *send;
    void *recv;
    size_t count; /* NCCL's count argument (per rank for reduce-scatter, all-gather) */
    int type, op, root, peer;
    ncclComm_t comm;
    cudaStream_t stream;
    ncclWindow_t win; /* put-signal: the peer's window, offset, signal */
    size_t win_offset;
    int sig_idx, sig_ctx;
    unsigned sig_flags;
    struct nccl_comm_info ci;
    int64_t coll;  /* nccl_comm_next_coll; -1 for send and recv */
    int canonical; /* run by nccl_canonical_run, not by NCCL */
    ncclResult_t status;
};

/* Runs the canonical ops[0..n) together (canonical.c, docs/collectives.md):
 * every element summed in ascending rank order, ((x0 + x1) + x2) + ...,
 * rounded to the type after each step, avg then divided by the world
 * size; built from the real ncclAllGather (all-reduce, reduce) or grouped
 * ncclSend/ncclRecv (reduce-scatter), in rounds of CANON_CHUNK bytes per
 * rank, each round of every op in one NCCL group (so one thread may drive
 * several ranks), the sums on the host. Sets each op's status; returns
 * the first error, or ncclSuccess. */
ncclResult_t nccl_canonical_run(struct nccl_op *ops, int n);

#endif
