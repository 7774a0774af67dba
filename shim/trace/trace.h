/* The trace writer: interceptors describe one call in a struct trace_rec on
 * their stack and commit it; the record is encoded into the calling thread's
 * buffer, chained (SHA-256) and written to this process's trace file in
 * whole frames. No global lock on this path: each thread owns its buffer
 * and the file is opened O_APPEND, so buffers from several threads never
 * interleave inside a frame.
 */
#ifndef DETSHIM_TRACE_H
#define DETSHIM_TRACE_H

#include <stddef.h>
#include <stdint.h>
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

struct trace_rec {
    const char *api;
    int stream; /* enum trace_stream; trace_rec_begin sets CALLS */
    int nparams, noperands, nnotes;
    struct {
        const char *name;
        uint8_t type;
        uint64_t a, b; /* value bits; b is the imaginary part */
        const char *s;
    } params[TRACE_MAX_PARAMS];
    struct {
        const char *name;
        uint8_t role, elem_size;
        uint64_t count;
        detshim_digest digest;
        struct trace_deferred later; /* complete is NULL: digest is final */
    } operands[TRACE_MAX_OPERANDS];
    struct {
        const char *key, *value;
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

void trace_rec_begin(struct trace_rec *r, const char *api);
void trace_rec_int(struct trace_rec *r, const char *name, int64_t v);
void trace_rec_char(struct trace_rec *r, const char *name, char v);
void trace_rec_f32(struct trace_rec *r, const char *name, float v);
void trace_rec_f64(struct trace_rec *r, const char *name, double v);
/* Complex scalars, given as a pointer to {re, im}. */
void trace_rec_c64(struct trace_rec *r, const char *name, const void *v);
void trace_rec_c128(struct trace_rec *r, const char *name, const void *v);
void trace_rec_str(struct trace_rec *r, const char *name, const char *v);
/* `count` logical elements of `elem_size` bytes digested as `d`. */
void trace_rec_operand(struct trace_rec *r, const char *name, int role,
                       detshim_digest d, uint64_t count, int elem_size);
/* An operand whose digest completes later (struct trace_deferred). */
void trace_rec_operand_deferred(struct trace_rec *r, const char *name, int role,
                                struct trace_deferred later, uint64_t count, int elem_size);
/* Puts the record in the thread's entropy stream instead of its calls. */
void trace_rec_stream(struct trace_rec *r, int stream);
/* A decision or remark; key and value must outlive the commit. */
void trace_rec_note(struct trace_rec *r, const char *key, const char *value);
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
