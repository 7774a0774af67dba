/* Collectives recorded from Python: torch.distributed with gloo (or any
 * backend) has no C API to interpose, so the start-up hook
 * (policies/python/detshim_dist.py) wraps its calls and DDP's gradient
 * all-reduce and hands each one here through ctypes: first the digest of
 * what it reads (detshim_digest_buffer, before the call), then the whole
 * record (detshim_dist_record, after). The record has the fields of an
 * NCCL collective's (coll.c): rank, nranks, comm (the group's identity),
 * coll (its ordinal on the group), datatype, count and op, and host
 * digests of the bytes, so detdiff lines ranks up alike
 * (shim/detdiff/ranks.c) and the records join the calling thread's chain.
 */
#include <string.h>

#include "nccl/nccl.h"
#include "trace/digest.h"

/* The digest of n bytes at p (host memory) into out[0] (low half) and
 * out[1] (high half), as every operand digest. Returns 0, or -1 when the
 * process is not tracing (out is then the digest of nothing). */
DETSHIM_EXPORT int detshim_digest_buffer(const void *p, unsigned long long n,
                                         unsigned long long out[2])
{
    trace_start();
    detshim_digest d = digest_bytes(NULL, 0);
    int on = trace_active();
    if (on && p && n)
        d = digest_bytes(p, (size_t)n);
    out[0] = d.lo;
    out[1] = d.hi;
    return on ? 0 : -1;
}

/* Records collective `api` (e.g. "torch.distributed.all_reduce") on the
 * group `comm`: `in` and `out` are digests from detshim_digest_buffer of
 * in_count and out_count elements of `elem` bytes (NULL: the call reads
 * or writes none); op may be "" and note, the note nccl.path, NULL. The
 * strings are copied. Nothing is recorded when the process is not
 * tracing. */
DETSHIM_EXPORT void detshim_dist_record(const char *api, const char *comm, long long rank,
                                        long long nranks, long long coll, const char *dtype,
                                        const char *op, unsigned long long count, int elem,
                                        const unsigned long long in[2],
                                        unsigned long long in_count,
                                        const unsigned long long out[2],
                                        unsigned long long out_count, const char *note)
{
    trace_start();
    if (!trace_active() || !guard_enter())
        return;
    struct trace_rec r;
    trace_rec_begin(&r, api ? api : "?");
    trace_rec_int(&r, "rank", rank);
    trace_rec_int(&r, "nranks", nranks);
    trace_rec_str(&r, "comm", comm ? comm : "?");
    trace_rec_int(&r, "coll", coll);
    trace_rec_str(&r, "datatype", dtype ? dtype : "?");
    trace_rec_int(&r, "count", (int64_t)count);
    if (op && *op)
        trace_rec_str(&r, "op", op);
    if (in)
        trace_rec_operand(&r, "send", TRACE_ROLE_IN, (detshim_digest){ in[0], in[1] }, in_count,
                          elem);
    if (out)
        trace_rec_operand(&r, "recv", TRACE_ROLE_OUT, (detshim_digest){ out[0], out[1] },
                          out_count, elem);
    if (note && *note)
        trace_rec_note(&r, "nccl.path", note);
    trace_rec_commit(&r);
    guard_leave();
}
