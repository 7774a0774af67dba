/* NCCL collectives, point-to-point calls and groups: ncclAllReduce,
 * ncclReduce, ncclBroadcast, ncclBcast, ncclReduceScatter, ncclAllGather,
 * ncclAlltoAll, ncclGather, ncclScatter, ncclSend, ncclRecv, ncclPutSignal
 * (what it sends: the peer's window is not this rank's to read),
 * ncclGroupStart and ncclGroupEnd. Each call is one
 * record: the communicator's rank, size and identity (comm.c), the
 * datatype, count, operator and root or peer, the digests of what it
 * reads before and of what it writes after (on the device, queued on the
 * call's stream), and the decision notes. In canonical mode a
 * floating-point sum, avg or prod runs canonical.c's reduction instead of
 * NCCL's. Inside a group NCCL launches nothing until ncclGroupEnd, so
 * calls made there are recorded, and canonical ones run, when the
 * outermost group ends: the records then appear in call order at the
 * group's end.
 */
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"
#include "cuda/cuda.h"
#include "nccl/nccl.h"
#include "nccl/nccl_elem.h"

const char *nccl_type_name(int t)
{
    static const char *const names[] = { "int8", "uint8", "int32", "uint32", "int64", "uint64",
                                         "float16", "float32", "float64", "bfloat16",
                                         "float8e4m3", "float8e5m2" };
    return t >= 0 && t < ncclNumTypes ? names[t] : "unknown";
}

const char *nccl_op_name(int op)
{
    static const char *const names[] = { "sum", "prod", "max", "min", "avg" };
    return op >= 0 && op < ncclNumOps ? names[op] : "premulsum";
}

int nccl_canonical_applies(int t, int op)
{
    return nccl_type_is_float(t) && (op == ncclSum || op == ncclAvg || op == ncclProd);
}

void nccl_rec_buffer(struct trace_rec *r, const char *name, int role, cudaStream_t stream,
                     const void *p, size_t count, int t)
{
    size_t es = nccl_type_size(t);
    if (cuda_rec_bytes(r, name, role, stream, p, count * es, count, (int)es) != 0) {
        cuda_note_no_digest(r);
        trace_rec_operand(r, name, role, digest_bytes(NULL, 0), 0, (int)es);
    }
}

/* Elements each side of op reads and writes on this rank; 0 where it
 * reads or writes nothing (a reduce's non-root, a broadcast's sender
 * side off the root). */
static size_t send_count(const struct nccl_op *o)
{
    const size_t all = o->count * (size_t)(o->ci.nranks > 0 ? o->ci.nranks : 0);
    switch (o->kind) {
    case NCCL_REDUCE_SCATTER: case NCCL_ALLTOALL:
        return all;
    case NCCL_SCATTER:
        return o->ci.rank == o->root ? all : 0;
    case NCCL_BROADCAST: case NCCL_BCAST:
        return o->ci.rank == o->root ? o->count : 0;
    case NCCL_RECV:
        return 0;
    default:
        return o->count;
    }
}

static size_t recv_count(const struct nccl_op *o)
{
    const size_t all = o->count * (size_t)(o->ci.nranks > 0 ? o->ci.nranks : 0);
    switch (o->kind) {
    case NCCL_ALLGATHER: case NCCL_ALLTOALL:
        return all;
    case NCCL_GATHER:
        return o->ci.rank == o->root ? all : 0;
    case NCCL_REDUCE:
        return o->ci.rank == o->root ? o->count : 0;
    case NCCL_SEND: case NCCL_PUT_SIGNAL:
        return 0;
    default:
        return o->count;
    }
}

static int has_op(int kind)
{
    return kind == NCCL_ALLREDUCE || kind == NCCL_REDUCE || kind == NCCL_REDUCE_SCATTER;
}

/* The record's first half: parameters and what the call reads. */
static void rec_start(struct trace_rec *r, const struct nccl_op *o, int mode, int in_group)
{
    trace_rec_begin(r, o->api);
    nccl_rec_comm(r, &o->ci, mode);
    if (o->coll >= 0)
        trace_rec_int(r, "coll", o->coll);
    trace_rec_str(r, "datatype", nccl_type_name(o->type));
    trace_rec_int(r, "count", (int64_t)o->count);
    if (has_op(o->kind))
        trace_rec_str(r, "op", nccl_op_name(o->op));
    if (o->kind == NCCL_REDUCE || o->kind == NCCL_BROADCAST || o->kind == NCCL_BCAST ||
        o->kind == NCCL_GATHER || o->kind == NCCL_SCATTER)
        trace_rec_int(r, "root", o->root);
    if (o->kind == NCCL_SEND || o->kind == NCCL_RECV || o->kind == NCCL_PUT_SIGNAL)
        trace_rec_int(r, "peer", o->peer);
    if (o->kind == NCCL_PUT_SIGNAL) {
        trace_rec_int(r, "peer_win_offset", (int64_t)o->win_offset);
        trace_rec_int(r, "sig_idx", o->sig_idx);
        trace_rec_int(r, "ctx", o->sig_ctx);
        trace_rec_int(r, "flags", (int64_t)o->sig_flags);
    }
    if (send_count(o))
        nccl_rec_buffer(r, o->kind == NCCL_BCAST ? "buff" : "send", TRACE_ROLE_IN, o->stream,
                        o->send, send_count(o), o->type);
    if (o->canonical)
        trace_rec_note(r, "nccl.order", "canonical: ascending rank order");
    else if (has_op(o->kind) && mode == NCCL_MODE_CANONICAL)
        trace_rec_note(r, "nccl.order", nccl_type_is_float(o->type)
                                            ? "NCCL's (operator exact in any order)"
                                            : "NCCL's (integer: exact in any order)");
    if (in_group)
        trace_rec_note(r, "nccl.group", "launched at ncclGroupEnd");
}

/* The second half: what the call wrote, its status; commits. */
static void rec_finish(struct trace_rec *r, const struct nccl_op *o)
{
    if (recv_count(o))
        nccl_rec_buffer(r, o->kind == NCCL_BCAST ? "buff" : "recv", TRACE_ROLE_OUT, o->stream,
                        o->recv, recv_count(o), o->type);
    trace_rec_int(r, "status", o->status);
    cuda_commit(r); /* seals the queued device digests first */
}

static ncclResult_t real_call(const struct nccl_op *o)
{
    switch (o->kind) {
    case NCCL_ALLREDUCE: {
        NCCL_REAL_FN(ncclAllReduce_fn *, ncclAllReduce);
        return real(o->send, o->recv, o->count, o->type, o->op, o->comm, o->stream);
    }
    case NCCL_REDUCE: {
        NCCL_REAL_FN(ncclReduce_fn *, ncclReduce);
        return real(o->send, o->recv, o->count, o->type, o->op, o->root, o->comm, o->stream);
    }
    case NCCL_BROADCAST: {
        NCCL_REAL_FN(ncclBroadcast_fn *, ncclBroadcast);
        return real(o->send, o->recv, o->count, o->type, o->root, o->comm, o->stream);
    }
    case NCCL_BCAST: {
        NCCL_REAL_FN(ncclBcast_fn *, ncclBcast);
        return real(o->recv, o->count, o->type, o->root, o->comm, o->stream);
    }
    case NCCL_REDUCE_SCATTER: {
        NCCL_REAL_FN(ncclReduceScatter_fn *, ncclReduceScatter);
        return real(o->send, o->recv, o->count, o->type, o->op, o->comm, o->stream);
    }
    case NCCL_ALLGATHER: {
        NCCL_REAL_FN(ncclAllGather_fn *, ncclAllGather);
        return real(o->send, o->recv, o->count, o->type, o->comm, o->stream);
    }
    case NCCL_ALLTOALL: {
        NCCL_REAL_FN(ncclAlltoAll_fn *, ncclAlltoAll);
        return real(o->send, o->recv, o->count, o->type, o->comm, o->stream);
    }
    case NCCL_GATHER: {
        NCCL_REAL_FN(ncclGather_fn *, ncclGather);
        return real(o->send, o->recv, o->count, o->type, o->root, o->comm, o->stream);
    }
    case NCCL_SCATTER: {
        NCCL_REAL_FN(ncclScatter_fn *, ncclScatter);
        return real(o->send, o->recv, o->count, o->type, o->root, o->comm, o->stream);
    }
    case NCCL_PUT_SIGNAL: {
        NCCL_REAL_FN(ncclPutSignal_fn *, ncclPutSignal);
        return real(o->send, o->count, o->type, o->peer, o->win, o->win_offset, o->sig_idx,
                    o->sig_ctx, o->sig_flags, o->comm, o->stream);
    }
    case NCCL_SEND: {
        NCCL_REAL_FN(ncclSend_fn *, ncclSend);
        return real(o->send, o->count, o->type, o->peer, o->comm, o->stream);
    }
    default: {
        NCCL_REAL_FN(ncclRecv_fn *, ncclRecv);
        return real(o->recv, o->count, o->type, o->peer, o->comm, o->stream);
    }
    }
}

/* This thread's open groups and the calls made in them. */
static _Thread_local int group_depth;
static _Thread_local struct nccl_op *pending;
static _Thread_local int npending, pending_cap;
static _Thread_local int pending_traced, pending_mode;

/* Every intercepted call: records, and runs NCCL's or the canonical
 * reduction, now or at the group's end. */
static ncclResult_t call(struct nccl_op o)
{
    struct nccl_call c;
    if (!nccl_enter(&c))
        return real_call(&o);
    nccl_comm_get(o.comm, &o.ci);
    o.coll = o.kind == NCCL_SEND || o.kind == NCCL_RECV || o.kind == NCCL_PUT_SIGNAL
                 ? -1 : nccl_comm_next_coll(o.comm);
    o.canonical = c.mode == NCCL_MODE_CANONICAL && has_op(o.kind) &&
                  nccl_canonical_applies(o.type, o.op) && o.ci.nranks > 0;
    if (group_depth > 0) {
        if (npending == pending_cap) {
            int cap = pending_cap ? 2 * pending_cap : 16;
            struct nccl_op *p = realloc(pending, (size_t)cap * sizeof *p);
            if (!p) {
                nccl_leave();
                return ncclSystemError;
            }
            pending = p;
            pending_cap = cap;
        }
        o.status = o.canonical ? ncclSuccess : real_call(&o);
        pending[npending++] = o;
        pending_traced = c.traced;
        pending_mode = c.mode;
        nccl_leave();
        return o.status;
    }
    struct trace_rec r;
    if (c.traced)
        rec_start(&r, &o, c.mode, 0);
    o.status = o.canonical ? nccl_canonical_run(&o, 1) : real_call(&o);
    if (c.traced)
        rec_finish(&r, &o);
    nccl_leave();
    return o.status;
}

DETSHIM_EXPORT ncclResult_t ncclGroupStart(void)
{
    NCCL_REAL_FN(ncclGroupStart_fn *, ncclGroupStart);
    ncclResult_t st = real();
    if (st == ncclSuccess && !guard_held())
        group_depth++;
    return st;
}

DETSHIM_EXPORT ncclResult_t ncclGroupEnd(void)
{
    NCCL_REAL_FN(ncclGroupEnd_fn *, ncclGroupEnd);
    struct nccl_call c;
    if (group_depth == 0 || --group_depth > 0 || !nccl_enter(&c))
        return real();
    int n = npending, traced = pending_traced && trace_active();
    npending = 0;
    struct trace_rec *recs = traced && n ? malloc((size_t)n * sizeof *recs) : NULL;
    for (int i = 0; recs && i < n; i++)
        rec_start(&recs[i], &pending[i], pending_mode, 1);
    ncclResult_t st = real();
    /* Canonical ops run together, after NCCL's own, in their call order. */
    struct nccl_op *canon = malloc((size_t)(n ? n : 1) * sizeof *canon);
    int ncanon = 0;
    for (int i = 0; canon && i < n; i++)
        if (pending[i].canonical)
            canon[ncanon++] = pending[i];
    if (st == ncclSuccess && ncanon) {
        ncclResult_t cs = nccl_canonical_run(canon, ncanon);
        for (int i = 0, k = 0; i < n; i++)
            if (pending[i].canonical)
                pending[i].status = canon[k++].status;
        st = cs;
    }
    free(canon);
    for (int i = 0; recs && i < n; i++)
        rec_finish(&recs[i], &pending[i]);
    free(recs);
    nccl_leave();
    return st;
}

static struct nccl_op op_of(int kind, const char *api, const void *send, void *recv,
                            size_t count, int t, int op, int root, int peer, ncclComm_t comm,
                            cudaStream_t stream)
{
    struct nccl_op o;
    memset(&o, 0, sizeof o);
    o.kind = kind;
    o.api = api;
    o.send = send;
    o.recv = recv;
    o.count = count;
    o.type = t;
    o.op = op;
    o.root = root;
    o.peer = peer;
    o.comm = comm;
    o.stream = stream;
    return o;
}

DETSHIM_EXPORT ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                                          ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm,
                                          cudaStream_t stream)
{
    return call(op_of(NCCL_ALLREDUCE, "ncclAllReduce", send, recv, count, t, op,
                                  -1, -1, comm, stream));
}

DETSHIM_EXPORT ncclResult_t ncclReduce(const void *send, void *recv, size_t count,
                                       ncclDataType_t t, ncclRedOp_t op, int root,
                                       ncclComm_t comm, cudaStream_t stream)
{
    return call(op_of(NCCL_REDUCE, "ncclReduce", send, recv, count, t, op, root, -1,
                                  comm, stream));
}

DETSHIM_EXPORT ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count,
                                          ncclDataType_t t, int root, ncclComm_t comm,
                                          cudaStream_t stream)
{
    return call(op_of(NCCL_BROADCAST, "ncclBroadcast", send, recv, count, t, 0, root,
                                  -1, comm, stream));
}

DETSHIM_EXPORT ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t t, int root,
                                      ncclComm_t comm, cudaStream_t stream)
{
    return call(op_of(NCCL_BCAST, "ncclBcast", buff, buff, count, t, 0, root, -1,
                                  comm, stream));
}

DETSHIM_EXPORT ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recvcount,
                                              ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm,
                                              cudaStream_t stream)
{
    return call(op_of(NCCL_REDUCE_SCATTER, "ncclReduceScatter", send, recv,
                                  recvcount, t, op, -1, -1, comm, stream));
}

DETSHIM_EXPORT ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendcount,
                                          ncclDataType_t t, ncclComm_t comm, cudaStream_t stream)
{
    return call(op_of(NCCL_ALLGATHER, "ncclAllGather", send, recv, sendcount, t, 0,
                                  -1, -1, comm, stream));
}

DETSHIM_EXPORT ncclResult_t ncclSend(const void *send, size_t count, ncclDataType_t t, int peer,
                                     ncclComm_t comm, cudaStream_t stream)
{
    return call(op_of(NCCL_SEND, "ncclSend", send, NULL, count, t, 0, -1, peer, comm,
                                  stream));
}

DETSHIM_EXPORT ncclResult_t ncclRecv(void *recv, size_t count, ncclDataType_t t, int peer,
                                     ncclComm_t comm, cudaStream_t stream)
{
    return call(op_of(NCCL_RECV, "ncclRecv", NULL, recv, count, t, 0, -1, peer, comm,
                                  stream));
}

DETSHIM_EXPORT ncclResult_t ncclAlltoAll(const void *send, void *recv, size_t count,
                                         ncclDataType_t t, ncclComm_t comm, cudaStream_t stream)
{
    return call(op_of(NCCL_ALLTOALL, "ncclAlltoAll", send, recv, count, t, 0, -1, -1, comm,
                      stream));
}

DETSHIM_EXPORT ncclResult_t ncclGather(const void *send, void *recv, size_t count,
                                       ncclDataType_t t, int root, ncclComm_t comm,
                                       cudaStream_t stream)
{
    return call(op_of(NCCL_GATHER, "ncclGather", send, recv, count, t, 0, root, -1, comm,
                      stream));
}

DETSHIM_EXPORT ncclResult_t ncclScatter(const void *send, void *recv, size_t count,
                                        ncclDataType_t t, int root, ncclComm_t comm,
                                        cudaStream_t stream)
{
    return call(op_of(NCCL_SCATTER, "ncclScatter", send, recv, count, t, 0, root, -1, comm,
                      stream));
}

DETSHIM_EXPORT ncclResult_t ncclPutSignal(const void *localbuff, size_t count, ncclDataType_t t,
                                          int peer, ncclWindow_t peer_win, size_t peer_win_offset,
                                          int sig_idx, int ctx, unsigned int flags,
                                          ncclComm_t comm, cudaStream_t stream)
{
    struct nccl_op o = op_of(NCCL_PUT_SIGNAL, "ncclPutSignal", localbuff, NULL, count, t, 0, -1,
                             peer, comm, stream);
    o.win = peer_win;
    o.win_offset = peer_win_offset;
    o.sig_idx = sig_idx;
    o.sig_ctx = ctx;
    o.sig_flags = flags;
    return call(o);
}
