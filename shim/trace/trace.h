/* The trace writer: interceptors describe one call in a struct trace_rec on
 * their stack and commit it; the record is encoded into the calling thread's
 * buffer, chained (SHA-256) and written to this process's trace file in
 * whole frames. No global lock on this path: each thread owns its buffer
 * and the file is opened O_APPEND, so buffers from several threads never
 * interleave inside a frame.
 */
#ifndef DETSHIM_TRACE_H
#define DETSHIM_TRACE_H

#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "core/core.h"
#include "detshim.h"
#include "detshim/trace_format.h"

/* Records of one thread that may wait for deferred digests at once. */
#define TRACE_PENDING_MAX 256

/* A thread's streams (trace_format.h): its calls; the entropy it read; and
 * its identity records: the files it read and wrote and the code it ran
 * with (shim/artifact), which are not calls and must not move them. */
enum trace_stream {
    TRACE_STREAM_CALLS = 0,
    TRACE_STREAM_ENTROPY = 1,
    TRACE_STREAM_IDENTITY = 2,
    TRACE_STREAM_REAL = 3, /* real entropy by design: in no root (trace_format.h) */
    TRACE_NSTREAMS
};

/* A digest that completes after the call: device digests are collected
 * asynchronously (shim/cuda/devdigest.c). complete(arg, wait, &d) returns
 * 1 with *d set, 0 when not ready yet (only when wait is 0; it never
 * blocks then), or -1 when it failed; on 1 and -1 it has released arg.
 * discard(arg) releases arg without completing (a forked child's copy of
 * its parent's pending records). A failed digest records the digest of no
 * bytes, count 0, and the note fail_key=fail_value (static strings). */
struct trace_deferred {
    int (*complete)(void *arg, int wait, detshim_digest *d);
    void (*discard)(void *arg);
    void *arg;
    const char *fail_key, *fail_value;
};

/* Each string's *_len is its encoded length (cut at 255) where the
 * builders below could tell it at compile time (a string literal, which
 * cannot change before the commit), else TRACE_LEN_UNKNOWN: the encoder
 * measures the string then. A caller whose string comes from a table that
 * holds its length (the BLAS family's generated names) sets the field
 * after the builder instead. */
#define TRACE_LEN_UNKNOWN 0xffff
struct trace_rec {
    const char *api;
    uint16_t api_len;
    int stream; /* enum trace_stream; trace_rec_begin sets CALLS */
    int nparams, noperands, nnotes;
    struct {
        const char *name;
        uint16_t name_len, s_len;
        uint8_t type;
        uint64_t a, b; /* value bits; b is the imaginary part */
        const char *s;
    } params[TRACE_MAX_PARAMS];
    struct {
        const char *name;
        uint16_t name_len;
        uint8_t role, elem_size;
        uint64_t count;
        detshim_digest digest;
        struct trace_deferred later; /* complete is NULL: digest is final */
    } operands[TRACE_MAX_OPERANDS];
    struct {
        const char *key, *value;
        uint16_t key_len, value_len;
    } notes[TRACE_MAX_NOTES];
};

/* 1 if calls should be recorded now: tracing is on, start-up is done, and
 * this is not the child of a vfork (which shares our memory until exec).
 * No system call: the vfork wrapper marks its child, and the pid is
 * renewed by the fork handler. */
int trace_active(void);

/* Nonzero on a thread that is the child of a vfork, until it execs: set
 * by the wrapper in shim/libc/vfork.c (x86-64; builds with shadow stacks
 * keep libc's vfork, and trace_active compares pids instead). */
#if defined(__x86_64__) && !(defined(__CET__) && (__CET__ & 2))
#define TRACE_VFORK_MARKED 1
#endif
extern _Thread_local int trace_in_vfork_child __attribute__((tls_model("initial-exec")));

/* The record's builders, inline so that a name given as a string literal
 * has its length known where it is written: measuring every name at each
 * encoding was a quarter of encoding a traced GEMM. None copies a string
 * or allocates: the record points at its caller's values until the
 * commit. */
#define TRACE_INLINE static inline __attribute__((always_inline))

/* s's encoded length if the compiler knows it (s a literal), else
 * TRACE_LEN_UNKNOWN. */
TRACE_INLINE uint16_t trace_lit_len(const char *s)
{
    if (__builtin_constant_p(s != NULL) && s == NULL)
        return 0;
    if (__builtin_constant_p(__builtin_strlen(s)))
        return (uint16_t)(__builtin_strlen(s) < 255 ? __builtin_strlen(s) : 255);
    return TRACE_LEN_UNKNOWN;
}

TRACE_INLINE void trace_rec_begin(struct trace_rec *r, const char *api)
{
    r->api = api;
    r->api_len = trace_lit_len(api);
    r->stream = TRACE_STREAM_CALLS;
    r->nparams = r->noperands = r->nnotes = 0;
}

TRACE_INLINE void trace_rec_param_(struct trace_rec *r, const char *name, uint8_t type,
                                   uint64_t a, uint64_t b, const char *s, uint16_t s_len)
{
    assert(r->nparams < TRACE_MAX_PARAMS);
    r->params[r->nparams].name = name;
    r->params[r->nparams].name_len = trace_lit_len(name);
    r->params[r->nparams].type = type;
    r->params[r->nparams].a = a;
    r->params[r->nparams].b = b;
    r->params[r->nparams].s = s;
    r->params[r->nparams].s_len = s_len;
    r->nparams++;
}

TRACE_INLINE void trace_rec_int(struct trace_rec *r, const char *name, int64_t v)
{
    trace_rec_param_(r, name, TRACE_PARAM_INT, (uint64_t)v, 0, NULL, 0);
}

TRACE_INLINE void trace_rec_char(struct trace_rec *r, const char *name, char v)
{
    trace_rec_param_(r, name, TRACE_PARAM_CHAR, (uint8_t)v, 0, NULL, 0);
}

TRACE_INLINE void trace_rec_f32(struct trace_rec *r, const char *name, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    trace_rec_param_(r, name, TRACE_PARAM_F32, bits, 0, NULL, 0);
}

TRACE_INLINE void trace_rec_f64(struct trace_rec *r, const char *name, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    trace_rec_param_(r, name, TRACE_PARAM_F64, bits, 0, NULL, 0);
}

/* Complex scalars, given as a pointer to {re, im}. */
TRACE_INLINE void trace_rec_c64(struct trace_rec *r, const char *name, const void *v)
{
    uint32_t bits[2];
    memcpy(bits, v, 8);
    trace_rec_param_(r, name, TRACE_PARAM_C64, bits[0], bits[1], NULL, 0);
}

TRACE_INLINE void trace_rec_c128(struct trace_rec *r, const char *name, const void *v)
{
    uint64_t bits[2];
    memcpy(bits, v, 16);
    trace_rec_param_(r, name, TRACE_PARAM_C128, bits[0], bits[1], NULL, 0);
}

TRACE_INLINE void trace_rec_str(struct trace_rec *r, const char *name, const char *v)
{
    trace_rec_param_(r, name, TRACE_PARAM_STR, 0, 0, v, trace_lit_len(v));
}

/* `count` logical elements of `elem_size` bytes digested as `d`. */
TRACE_INLINE void trace_rec_operand(struct trace_rec *r, const char *name, int role,
                                    detshim_digest d, uint64_t count, int elem_size)
{
    assert(r->noperands < TRACE_MAX_OPERANDS);
    r->operands[r->noperands].name = name;
    r->operands[r->noperands].name_len = trace_lit_len(name);
    r->operands[r->noperands].role = (uint8_t)role;
    r->operands[r->noperands].elem_size = (uint8_t)elem_size;
    r->operands[r->noperands].count = count;
    r->operands[r->noperands].digest = d;
    r->operands[r->noperands].later = (struct trace_deferred){ 0 };
    r->noperands++;
}

/* An operand whose digest completes later (struct trace_deferred). */
TRACE_INLINE void trace_rec_operand_deferred(struct trace_rec *r, const char *name, int role,
                                             struct trace_deferred later, uint64_t count,
                                             int elem_size)
{
    /* The digest is set when it completes; what is here is never written. */
    trace_rec_operand(r, name, role, (detshim_digest){ 0, 0 }, count, elem_size);
    r->operands[r->noperands - 1].later = later;
}

/* Puts the record in the thread's entropy stream instead of its calls. */
TRACE_INLINE void trace_rec_stream(struct trace_rec *r, int stream)
{
    r->stream = stream;
}

/* A decision or remark; key and value must outlive the commit. */
TRACE_INLINE void trace_rec_note(struct trace_rec *r, const char *key, const char *value)
{
    assert(r->nnotes < TRACE_MAX_NOTES);
    r->notes[r->nnotes].key = key;
    r->notes[r->nnotes].value = value;
    r->notes[r->nnotes].key_len = trace_lit_len(key);
    r->notes[r->nnotes].value_len = trace_lit_len(value);
    r->nnotes++;
}

/* The call site walked by the interceptor in its own frame, for
 * trace_rec_commit_at: the commit's own walk would unwind the shim's
 * frames between the two as well (some 10 ns each, every record). */
#define TRACE_SITE_ALLOW 2 /* frames of ours it allows for: the interceptor's, a spare */
struct trace_site {
    int depth;
    void *stack[TRACE_MAX_FRAMES + TRACE_SITE_ALLOW];
};

/* The return addresses of this thread's stack, at most n, innermost
 * first, the first its caller's (callsite.c). Inline, so that the walk
 * begins in the frame that calls it. */
typedef int (*callsite_backtrace_fn)(void **, int);
extern callsite_backtrace_fn callsite_backtrace;
extern _Atomic int callsite_ready; /* set once callsite_load has run */
void callsite_load(void);
TRACE_INLINE int callsite_walk(void **stack, int n)
{
    if (!atomic_load_explicit(&callsite_ready, memory_order_acquire))
        callsite_load();
    return callsite_backtrace(stack, n);
}

/* Walks the call site into s, from the frame that calls it (inline);
 * nothing when call sites are off ([trace] frames = 0). */
TRACE_INLINE void trace_site_walk(struct trace_site *s)
{
    int max = core_cfg.trace_frames;
    s->depth = max > 0 ? callsite_walk(s->stack, max + TRACE_SITE_ALLOW) : 0;
}

/* Captures the call site, encodes, chains and buffers the record. Excess
 * params/operands/notes beyond the TRACE_MAX_* limits are a programming
 * error (assert). A record with deferred operands, and any record of the
 * thread behind one, waits in the thread's FIFO of pending records
 * (TRACE_PENDING_MAX): each commit first writes the pending records whose
 * digests are complete, in order, without blocking; a full FIFO waits for
 * its oldest; thread close (thread exit, exit, exec) waits for all. The
 * records, their order and the chain are those of an immediate commit:
 * a queued record is encoded at the commit, so r may go out of scope at
 * once. */
void trace_rec_commit(struct trace_rec *r);
/* The same, with the call site the interceptor walked (trace_site_walk). */
void trace_rec_commit_at(struct trace_rec *r, const struct trace_site *site);

/* Process lifecycle, called by shim/life/lifecycle.c and the exit and exec
 * interposers: set up the trace at start-up; flush every thread and write
 * the closing frames at exit. */
int trace_process_start(char *err, size_t errlen);
/* Fork handlers (the lifecycle calls them): the process lock is held
 * across fork; the child closes its copy of the parent's file and starts
 * its own streams. */
void trace_fork_prepare(void);
void trace_fork_parent(void);
void trace_fork_child(void);
/* Core start-up and, if DETSHIM_TRACE is set, trace start-up; once. */
void trace_start(void);
void trace_process_flush_all(void);
/* The same before an exec: a call after it (the exec failed) marks the
 * trace incomplete, whichever thread makes it. */
void trace_process_flush_for_exec(void);
/* Registers fn to run first in trace_process_flush_all, while records can
 * still be written (artifacts hashed at exit); up to 8, in order. */
void trace_on_exit(void (*fn)(void));
/* 1 if any thread of this process has recorded something. */
int trace_recorded_any(void);
/* Waits for every thread's pending records and writes them, closing
 * nothing: for the exit handler the cuda family registers once CUDA is up,
 * which runs before CUDA's own teardown (records pending when the driver
 * is gone could only be written as not digested). */
void trace_drain_pending(void);

/* Frame helpers shared by the writer and the reader (trace_format.h).
 * The frame hash: XXH3-128 of the payload, low64 then high64 little-endian;
 * a RECORD frame's is its record hash. */
void trace_frame_hash(const uint8_t *payload, uint32_t len, uint8_t hash[16]);
/* The check of a frame whose payload has frame hash `hash`. */
uint32_t trace_frame_check_of(const uint8_t hash[16], uint16_t type, uint32_t thread);
/* The same from the payload. */
uint32_t trace_frame_check(const uint8_t *payload, uint32_t len, uint16_t type,
                           uint32_t thread);
/* Writes the 16-byte frame header for `payload` at h. */
void trace_frame_header(uint8_t *h, uint16_t type, uint32_t thread, const uint8_t *payload,
                        uint32_t len);

#endif
