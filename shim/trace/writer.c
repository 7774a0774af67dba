/* Record encoding and per-thread buffers. An interceptor fills a struct
 * trace_rec (the builders in trace.h); commit encodes it straight into the calling
 * thread's buffer and adds its record hash to the thread's open window
 * (window.c); when the buffer is full it is written to the process's file
 * in one write(2). Threads never share a buffer, so the hot path takes no
 * global lock. A record with digests still being computed (device
 * digests, collected asynchronously) is encoded at once and waits in a
 * bounded per-thread FIFO, with every later record of its thread, until
 * they complete and are filled in: the bytes and the chain are those of
 * an immediate commit. The exit flush may run in a signal handler on a
 * thread that is inside the shim, or while other threads still call: it
 * never waits on a buffer for long, and a record it cannot take marks the
 * trace incomplete.
 */
#include <assert.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "trace/chain.h"
#include "core/core.h"
#include "trace/digest.h"
#include "trace/trace.h"
#include "trace/trace_internal.h"
#include "trace/window.h"

/* A thread's streams: its calls, and the entropy it read (trace_format.h),
 * kept apart so that entropy read at timing-dependent moments (a worker's
 * handshake) never reorders the calls. */
static _Thread_local struct thread_buf *tls_tb[TRACE_NSTREAMS]
    __attribute__((tls_model("initial-exec")));
static _Thread_local uint32_t tls_index __attribute__((tls_model("initial-exec")));
static _Thread_local int tls_has_index __attribute__((tls_model("initial-exec")));
static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;

/* Runs on the exiting thread, so its thread-locals are still there. */
static void on_thread_exit(void *arg)
{
    (void)arg;
    for (int s = 0; s < TRACE_NSTREAMS; s++)
        trace_thread_close(tls_tb[s]);
}

static void make_key(void)
{
    pthread_key_create(&thread_key, on_thread_exit);
}

/* The bit a stream's records carry in their thread index. */
static uint32_t stream_bit(int stream)
{
    return stream == TRACE_STREAM_ENTROPY    ? TRACE_THREAD_ENTROPY
           : stream == TRACE_STREAM_IDENTITY ? TRACE_THREAD_IDENTITY
           : stream == TRACE_STREAM_REAL     ? TRACE_THREAD_REAL
                                             : 0;
}

static struct thread_buf *thread_get(int stream)
{
    struct thread_buf *tb = tls_tb[stream];
    if (tb)
        return tb;
    tb = calloc(1, sizeof *tb);
    if (!tb)
        return NULL;
    tb->buf = malloc(TRACE_BUF_CAP);
    tb->cap = TRACE_BUF_CAP;
    /* hook (window.c): the window digests and the stream head over them */
    if (!tb->buf || window_start(tb) != 0) {
        free(tb->buf);
        window_free(tb);
        free(tb);
        return NULL;
    }
    atomic_flag_clear(&tb->busy);
    pthread_once(&thread_key_once, make_key);
    /* After the exit flush took the list, a new stream would never be
     * written: refuse it, and say the trace lacks its records. */
    int locked = trace_proc_lock() == 0;
    if (!locked || atomic_load(&trace_proc.closing)) {
        if (locked)
            trace_proc_unlock();
        free(tb->buf);
        window_free(tb);
        free(tb);
        trace_late_record();
        return NULL;
    }
    /* The main thread is always 0; others are numbered as they first
     * record, which may differ run to run and is never compared. */
    if (!tls_has_index) {
        tls_index = (pid_t)syscall(SYS_gettid) == getpid() ? 0 : trace_proc.next_index++;
        tls_has_index = 1;
    }
    tb->index = tls_index | stream_bit(stream);
    tb->next = atomic_load(&trace_proc.threads);
    atomic_store(&trace_proc.threads, tb);
    trace_proc_unlock();
    pthread_setspecific(thread_key, (void *)1); /* non-NULL: run the destructor */
    tls_tb[stream] = tb;
    return tb;
}

static void buf_lock(struct thread_buf *tb)
{
    while (atomic_flag_test_and_set_explicit(&tb->busy, memory_order_acquire))
        ;
}

static void buf_unlock(struct thread_buf *tb)
{
    atomic_flag_clear_explicit(&tb->busy, memory_order_release);
}

/* Takes tb->busy for the exit flush, which may run in a signal handler
 * that interrupted this thread inside the shim: this thread's own buffer
 * found busy is never let go, so 0 at once; another thread's is waited
 * for at most TRACE_EXIT_WAIT_MS. Returns 0 holding it, or -1. */
static int buf_lock_at_exit(struct thread_buf *tb)
{
    int own = 0;
    for (int s = 0; s < TRACE_NSTREAMS; s++)
        own |= tb == tls_tb[s];
    struct timespec now, end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += TRACE_EXIT_WAIT_MS / 1000;
    while (atomic_flag_test_and_set_explicit(&tb->busy, memory_order_acquire)) {
        if (own)
            return -1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
            return -1;
        sched_yield();
    }
    return 0;
}

static void put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put_u32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put_u64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }

/* The frame header of a payload whose frame hash is `hash`. */
static void frame_header_of(uint8_t *h, uint16_t type, uint32_t thread, uint32_t len,
                            const uint8_t hash[16])
{
    put_u32(h, len);
    put_u16(h + 4, type);
    put_u16(h + 6, 0);
    put_u32(h + 8, thread);
    put_u32(h + 12, trace_frame_check_of(hash, type, thread));
}

void trace_frame_header(uint8_t *h, uint16_t type, uint32_t thread, const uint8_t *payload,
                        uint32_t len)
{
    uint8_t hash[16];
    trace_frame_hash(payload, len, hash);
    frame_header_of(h, type, thread, len, hash);
}

/* Caller holds tb->busy. */
void trace_buf_flush(struct thread_buf *tb)
{
    if (tb->len) {
        compress_write(tb->buf, tb->len); /* a failure is reported there */
        tb->flushes++;
    }
    tb->len = 0;
}

static void ensure_room(struct thread_buf *tb, size_t need)
{
    if (tb->cap - tb->len < need)
        trace_buf_flush(tb);
}

/* Caller holds tb->busy; tb is not finished. */
static void append_locked(struct thread_buf *tb, uint16_t type, const void *payload, uint32_t len)
{
    assert(len <= TRACE_MAX_FRAME);
    ensure_room(tb, TRACE_FRAME_HEADER_LEN + len);
    uint8_t *h = tb->buf + tb->len;
    memcpy(h + TRACE_FRAME_HEADER_LEN, payload, len);
    trace_frame_header(h, type, tb->index, h + TRACE_FRAME_HEADER_LEN, len);
    tb->len += TRACE_FRAME_HEADER_LEN + len;
}

void trace_buf_append(struct thread_buf *tb, uint16_t type, const void *payload, uint32_t len)
{
    buf_lock(tb);
    if (!tb->finished)
        append_locked(tb, type, payload, len);
    buf_unlock(tb);
}

/* A small writer over a fixed buffer; overflow is remembered, not UB.
 * Fields are stored with single moves (the format is little-endian, as is
 * every machine the shim builds for): encoding is on every record's path. */
struct enc {
    uint8_t *p;
    size_t len, cap;
};

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the trace encoder stores little-endian fields with plain moves"
#endif
_Static_assert(sizeof(detshim_frame) == 16, "a call-site frame is {u64 module, u64 offset}");

static inline void enc_bytes(struct enc *e, const void *v, size_t n)
{
    if (__builtin_expect(e->len + n <= e->cap, 1))
        memcpy(e->p + e->len, v, n);
    e->len += n;
}

static inline void enc_u8(struct enc *e, uint8_t v)
{
    if (__builtin_expect(e->len < e->cap, 1))
        e->p[e->len] = v;
    e->len++;
}

static inline void enc_u32(struct enc *e, uint32_t v) { enc_bytes(e, &v, 4); }
static inline void enc_u64(struct enc *e, uint64_t v) { enc_bytes(e, &v, 8); }

/* Copies the n bytes of s to d with moves of a fixed size where n is at
 * most 16, as most names are, reading and writing only those n bytes: a
 * memcpy call for each string was a third of encoding. */
static inline void copy_short(uint8_t *d, const char *s, size_t n)
{
    if (n > 16) {
        memcpy(d, s, n);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n) {
        d[0] = (uint8_t)s[0];
        d[n / 2] = (uint8_t)s[n / 2];
        d[n - 1] = (uint8_t)s[n - 1];
    }
}

/* A string of encoded length `len` (TRACE_LEN_UNKNOWN: measured here). */
static inline void enc_str(struct enc *e, const char *s, uint16_t len)
{
    size_t n = len != TRACE_LEN_UNKNOWN ? len : s ? strnlen(s, 255) : 0;
    enc_u8(e, (uint8_t)n);
    if (__builtin_expect(e->len + n <= e->cap, 1))
        copy_short(e->p + e->len, s, n);
    e->len += n;
}

/* Where a payload's fields that a pending record fills in later are:
 * each operand's count (its digest follows), and the note count. */
struct rec_marks {
    uint32_t count_at[TRACE_MAX_OPERANDS];
    uint32_t notes_at;
};

/* Encodes a RECORD payload (trace_format.h) into out and returns its
 * length; only one of at most cap bytes is written whole. marks, if not
 * NULL, gets the offsets of the fields a pending record fills in later. */
static size_t encode_record(const struct trace_rec *r, uint64_t seq, const detshim_frame *frames,
                            int nframes, uint8_t *out, size_t cap, struct rec_marks *marks)
{
    struct enc e = { out, 0, cap };
    enc_u64(&e, seq);
    enc_str(&e, r->api, r->api_len);
    enc_u8(&e, (uint8_t)r->nparams);
    for (int i = 0; i < r->nparams; i++) {
        enc_str(&e, r->params[i].name, r->params[i].name_len);
        enc_u8(&e, r->params[i].type);
        switch (r->params[i].type) {
        case TRACE_PARAM_CHAR: enc_u8(&e, (uint8_t)r->params[i].a); break;
        case TRACE_PARAM_F32: enc_u32(&e, (uint32_t)r->params[i].a); break;
        case TRACE_PARAM_C64:
            enc_u32(&e, (uint32_t)r->params[i].a);
            enc_u32(&e, (uint32_t)r->params[i].b);
            break;
        case TRACE_PARAM_C128: enc_u64(&e, r->params[i].a); enc_u64(&e, r->params[i].b); break;
        case TRACE_PARAM_STR: enc_str(&e, r->params[i].s, r->params[i].s_len); break;
        default: enc_u64(&e, r->params[i].a); break; /* INT, F64 */
        }
    }
    enc_u8(&e, (uint8_t)r->noperands);
    for (int i = 0; i < r->noperands; i++) {
        enc_str(&e, r->operands[i].name, r->operands[i].name_len);
        enc_u8(&e, r->operands[i].role);
        enc_u8(&e, r->operands[i].elem_size);
        if (marks)
            marks->count_at[i] = (uint32_t)e.len;
        enc_u64(&e, r->operands[i].count);
        enc_u64(&e, r->operands[i].digest.lo);
        enc_u64(&e, r->operands[i].digest.hi);
    }
    enc_u8(&e, (uint8_t)nframes);
    enc_bytes(&e, frames, (size_t)nframes * sizeof *frames); /* {u64 module, u64 offset} each */
    if (marks)
        marks->notes_at = (uint32_t)e.len;
    enc_u8(&e, (uint8_t)r->nnotes);
    for (int i = 0; i < r->nnotes; i++) {
        enc_str(&e, r->notes[i].key, r->notes[i].key_len);
        enc_str(&e, r->notes[i].value, r->notes[i].value_len);
    }
    return e.len;
}

/* Makes the RECORD payload of n bytes at tb->buf + tb->len +
 * TRACE_FRAME_HEADER_LEN, whose sequence number is tb->seq, the thread's
 * next record, and adds its record hash to the open window. Caller holds
 * tb->busy. */
static void buffer_record(struct thread_buf *tb, size_t n)
{
    assert(n > 0 && n <= TRACE_MAX_FRAME); /* bounded by TRACE_MAX_* and 255-byte strings */
    uint8_t *h = tb->buf + tb->len;
    uint8_t *payload = h + TRACE_FRAME_HEADER_LEN;
    /* The payload is hashed once in a calls or entropy stream: its frame
     * hash is both the frame's check and its record hash, what the window
     * digest is over (an identity stream's record hash is SHA-256: few
     * records, and the files they name). It is XXH3-128 (trace_frame_hash)
     * in the operand digests' kernel, the widest the CPU has. Hook
     * (window.c): a kept record stays in the buffer; a record of a
     * summarized window leaves its bytes unused past the buffer's end.
     * Either way its hash enters the open window, and when the window
     * closes window_after_record folds it into the stream head and fills
     * the WINDOW frame that stands for a summarized one. */
    uint8_t hash[16], rhash[32];
    detshim_digest fh = digest_bytes(payload, n);
    memcpy(hash, &fh.lo, 8);
    memcpy(hash + 8, &fh.hi, 8);
    uint32_t rlen = chain_record_hash(tb->index, payload, (uint32_t)n, hash, rhash);
    if (window_keeps_record(tb)) {
        frame_header_of(h, TRACE_FRAME_RECORD, tb->index, (uint32_t)n, hash);
        tb->len += TRACE_FRAME_HEADER_LEN + n;
    }
    tb->seq++;
    uint8_t wf[TRACE_WINDOW_FRAME_LEN];
    if (window_after_record(tb, rhash, rlen, wf))
        append_locked(tb, TRACE_FRAME_WINDOW, wf, sizeof wf);
}

/* Encodes and buffers one record as the thread's next. Caller holds
 * tb->busy; every operand's digest is final. */
static void write_record(struct thread_buf *tb, const struct trace_rec *r,
                         const detshim_frame *frames, int nframes)
{
    /* Encode into the room left; if the record does not fit, write the
     * buffer out and encode again into the empty one. */
    size_t n = 0, room = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (attempt)
            trace_buf_flush(tb);
        room = tb->cap - tb->len;
        room = room > TRACE_FRAME_HEADER_LEN ? room - TRACE_FRAME_HEADER_LEN : 0;
        n = encode_record(r, tb->seq, frames, nframes,
                          tb->buf + tb->len + TRACE_FRAME_HEADER_LEN, room, NULL);
        if (n <= room)
            break;
    }
    assert(n <= room);
    buffer_record(tb, n);
}

/* A record waiting in its thread's FIFO: its payload, encoded at call
 * time from the trace_rec (so that every string is copied once, as
 * encoding cuts it), but for its sequence number and its deferred
 * operands' digests, filled in when it is written. Room is kept past its
 * end for the notes a failed digest adds. Kept and reused in its ring
 * slot. */
struct pending_rec {
    uint8_t *bytes;
    size_t len, cap;
    uint32_t notes_at; /* the offset of its note count */
    int ndeferred;
    struct {
        uint32_t at; /* the offset of the operand's count, then digest */
        struct trace_deferred later;
    } deferred[TRACE_MAX_OPERANDS];
};

/* What a failed digest's note may add to a payload: its key and value,
 * cut at 255 bytes, each after its length. */
enum { FAIL_NOTE_MAX = 2 * (1 + 255) };

static int rec_has_deferred(const struct trace_rec *r)
{
    for (int i = 0; i < r->noperands; i++)
        if (r->operands[i].later.complete)
            return 1;
    return 0;
}

/* Fills p with r's payload. Returns 0, or -1 when memory ran out (p
 * unchanged but for its bytes). */
static int pending_fill(struct pending_rec *p, const struct trace_rec *r,
                        const detshim_frame *frames, int nframes)
{
    struct rec_marks m;
    int ndeferred = 0;
    for (int i = 0; i < r->noperands; i++)
        ndeferred += r->operands[i].later.complete != NULL;
    size_t n = encode_record(r, 0, frames, nframes, p->bytes, p->cap, &m);
    size_t need = n + (size_t)ndeferred * FAIL_NOTE_MAX;
    if (need > p->cap) {
        uint8_t *b = realloc(p->bytes, need);
        if (!b)
            return -1;
        p->bytes = b;
        p->cap = need;
        n = encode_record(r, 0, frames, nframes, p->bytes, p->cap, &m);
    }
    assert(n > 0 && n <= TRACE_MAX_FRAME);
    p->len = n;
    p->notes_at = m.notes_at;
    p->ndeferred = 0;
    for (int i = 0; i < r->noperands; i++)
        if (r->operands[i].later.complete) {
            p->deferred[p->ndeferred].at = m.count_at[i];
            p->deferred[p->ndeferred++].later = r->operands[i].later;
        }
    return 0;
}

/* Completes a deferred digest that is not final yet: 1 with *d its
 * digest, 0 when not ready yet (only without wait), -1 when it failed,
 * *d then the digest of no bytes. Final once it returns 1 or -1. */
static int deferred_take(struct trace_deferred *later, int wait, detshim_digest *d)
{
    int rc = later->complete(later->arg, wait, d);
    if (rc < 0)
        *d = digest_bytes(NULL, 0);
    if (rc != 0)
        later->complete = NULL;
    return rc;
}

/* Adds to p's payload the note a failed digest of `later` leaves, as
 * rec_complete adds it to a trace_rec: unless a note of that key is there
 * already or the notes are full. The room was kept by pending_fill. */
static void pending_note_failure(struct pending_rec *p, const struct trace_deferred *later)
{
    uint8_t *notes = p->bytes + p->notes_at;
    size_t key_len = strnlen(later->fail_key, 255), at = p->notes_at + 1;
    for (int k = 0; k < notes[0]; k++) {
        size_t len = p->bytes[at];
        if (len == key_len && memcmp(p->bytes + at + 1, later->fail_key, len) == 0)
            return;
        at += 1 + len;
        at += 1 + p->bytes[at];
    }
    if (notes[0] >= TRACE_MAX_NOTES)
        return;
    struct enc e = { p->bytes, p->len, p->cap };
    enc_str(&e, later->fail_key, TRACE_LEN_UNKNOWN);
    enc_str(&e, later->fail_value, TRACE_LEN_UNKNOWN);
    assert(e.len <= e.cap);
    p->len = e.len;
    notes[0]++;
}

/* Completes p's deferred digests into its payload, waiting for them
 * when `wait`. Returns 1 when all are final, 0 when one is not ready yet
 * (only without wait). */
static int pending_complete(struct pending_rec *p, int wait)
{
    for (int i = 0; i < p->ndeferred; i++) {
        detshim_digest d;
        if (!p->deferred[i].later.complete)
            continue;
        int rc = deferred_take(&p->deferred[i].later, wait, &d);
        if (rc == 0)
            return 0;
        uint8_t *op = p->bytes + p->deferred[i].at;
        if (rc < 0) {
            memset(op, 0, 8); /* count 0 */
            pending_note_failure(p, &p->deferred[i].later);
        }
        memcpy(op + 8, &d.lo, 8);
        memcpy(op + 16, &d.hi, 8);
    }
    return 1;
}

/* Completes r's deferred digests, waiting for them when `wait`. Returns 1
 * when all are final, 0 when one is not ready yet (only without wait). */
static int rec_complete(struct trace_rec *r, int wait)
{
    for (int i = 0; i < r->noperands; i++) {
        struct trace_deferred *later = &r->operands[i].later;
        if (!later->complete)
            continue;
        detshim_digest d;
        int rc = deferred_take(later, wait, &d);
        if (rc == 0)
            return 0;
        r->operands[i].digest = d;
        if (rc < 0) {
            r->operands[i].count = 0;
            int noted = 0;
            for (int k = 0; k < r->nnotes; k++)
                noted |= strcmp(r->notes[k].key, later->fail_key) == 0;
            if (!noted && r->nnotes < TRACE_MAX_NOTES)
                trace_rec_note(r, later->fail_key, later->fail_value);
        }
    }
    return 1;
}

/* Writes the thread's pending records whose digests are complete, oldest
 * first, stopping at the first that is not (`wait`: waiting for each).
 * Caller holds tb->busy. */
static void pending_write(struct thread_buf *tb, int wait)
{
    while (tb->npending) {
        struct pending_rec *p = tb->pending[tb->pending_head];
        if (!pending_complete(p, wait))
            return;
        ensure_room(tb, TRACE_FRAME_HEADER_LEN + p->len);
        uint8_t *payload = tb->buf + tb->len + TRACE_FRAME_HEADER_LEN;
        memcpy(payload, p->bytes, p->len);
        memcpy(payload, &tb->seq, 8);
        buffer_record(tb, p->len);
        tb->pending_head = (tb->pending_head + 1) % TRACE_PENDING_MAX;
        tb->npending--;
    }
}

/* Queues r behind the thread's pending records, writing the oldest first
 * when the FIFO is full. Returns 0, or -1 when no memory was left for the
 * copy (nothing queued). Caller holds tb->busy. */
static int pending_push(struct thread_buf *tb, const struct trace_rec *r,
                        const detshim_frame *frames, int nframes)
{
    if (!tb->pending && !(tb->pending = calloc(TRACE_PENDING_MAX, sizeof *tb->pending)))
        return -1;
    while (tb->npending == TRACE_PENDING_MAX) {
        struct pending_rec *oldest = tb->pending[tb->pending_head];
        pending_complete(oldest, 1);
        pending_write(tb, 0);
    }
    unsigned slot = (tb->pending_head + tb->npending) % TRACE_PENDING_MAX;
    struct pending_rec *p = tb->pending[slot];
    if (!p && !(p = tb->pending[slot] = calloc(1, sizeof *p)))
        return -1;
    if (pending_fill(p, r, frames, nframes) != 0)
        return -1;
    tb->npending++;
    return 0;
}

static void pending_free(struct thread_buf *tb)
{
    if (!tb->pending)
        return;
    for (unsigned i = 0; i < TRACE_PENDING_MAX; i++) {
        if (tb->pending[i])
            free(tb->pending[i]->bytes);
        free(tb->pending[i]);
    }
    free(tb->pending);
    tb->pending = NULL;
    tb->pending_head = tb->npending = 0;
}

/* Releases a deferred digest uncompleted. */
static void deferred_discard(struct trace_deferred *later)
{
    if (later->complete && later->discard)
        later->discard(later->arg);
}

/* Releases r's deferred digests uncompleted. */
static void rec_discard(struct trace_rec *r)
{
    for (int i = 0; i < r->noperands; i++)
        deferred_discard(&r->operands[i].later);
}

/* Drops the pending records without writing them, releasing their
 * deferred digests (a forked child: they are its parent's). */
static void pending_discard(struct thread_buf *tb)
{
    for (; tb->npending; tb->npending--) {
        struct pending_rec *p = tb->pending[tb->pending_head];
        for (int i = 0; i < p->ndeferred; i++)
            deferred_discard(&p->deferred[i].later);
        tb->pending_head = (tb->pending_head + 1) % TRACE_PENDING_MAX;
    }
    tb->pending_head = 0;
}

/* Asks the CPU for what the thread's next commit reads of its FIFO, which
 * was written some TRACE_PENDING_MAX calls ago and has left the caches: the
 * oldest record, which that commit writes (its payload and its deferred
 * digests' state), and the slot of the next one, whose digests it asks
 * after. Caller holds tb->busy. */
static void pending_prefetch(const struct thread_buf *tb)
{
    if (tb->npending > 1) {
        const char *next = (const char *)tb->pending[(tb->pending_head + 1) % TRACE_PENDING_MAX];
        __builtin_prefetch(next);
        __builtin_prefetch(next + 64);
    }
    const struct pending_rec *p = tb->pending[tb->pending_head];
    for (size_t off = 0; off < p->len; off += 64)
        __builtin_prefetch(p->bytes + off);
    for (int i = 0; i < p->ndeferred; i++)
        __builtin_prefetch(p->deferred[i].later.arg);
}

/* Gives a busy stream its larger buffer (TRACE_BUF_MAX), keeping what it
 * holds; on the record path only, never at exit, which may be in a
 * signal handler. Without memory the stream keeps its buffer and asks
 * again after as many writes. Caller holds tb->busy. */
static void grow_if_busy(struct thread_buf *tb)
{
    if (tb->cap >= TRACE_BUF_MAX || tb->flushes < TRACE_BUF_GROW_AFTER)
        return;
    uint8_t *b = realloc(tb->buf, TRACE_BUF_MAX);
    if (b) {
        tb->buf = b;
        tb->cap = TRACE_BUF_MAX;
    }
    tb->flushes = 0;
}

/* trace_rec_commit with the call site walked already: depth return
 * addresses at stack, allowing for `allow` frames of ours (callsite.c). */
static void commit_walked(struct trace_rec *r, void *const *stack, int depth, int allow)
{
    struct thread_buf *tb = thread_get(r->stream);
    if (!tb) {
        rec_discard(r);
        return;
    }
    detshim_frame frames[TRACE_MAX_FRAMES];
    const int max = core_cfg.trace_frames;
    int nframes = max > 0 ? callsite_capture(tb, stack, depth, allow, frames, max) : 0;
    /* The Python frame that made the call, last (outermost) among them. */
    if (max > 0 && nframes < TRACE_MAX_FRAMES &&
        r->stream != TRACE_STREAM_IDENTITY && pysite_capture(tb, &frames[nframes]))
        nframes++;

    buf_lock(tb);
    if (tb->finished) {
        rec_discard(r);
        buf_unlock(tb);
        if (!tb->gone) /* closed at exit while this thread still ran */
            trace_late_record();
        return;
    }
    grow_if_busy(tb);
    pending_write(tb, 0);
    if ((tb->npending || rec_has_deferred(r)) && pending_push(tb, r, frames, nframes) == 0) {
        pending_prefetch(tb);
        buf_unlock(tb);
        return;
    }
    /* Nothing pending, or no memory to queue: in order, now. */
    pending_write(tb, 1);
    rec_complete(r, 1);
    write_record(tb, r, frames, nframes);
    buf_unlock(tb);
}

void trace_rec_commit(struct trace_rec *r)
{
    /* Walked from here (callsite_walk is inline): the frames under it
     * are the family's and the interceptor's. */
    void *stack[TRACE_MAX_FRAMES + CALLSITE_FIRST_ALLOW];
    const int max = core_cfg.trace_frames;
    int depth = max > 0 ? callsite_walk(stack, max + CALLSITE_FIRST_ALLOW) : 0;
    commit_walked(r, stack, depth, CALLSITE_FIRST_ALLOW);
}

void trace_rec_commit_at(struct trace_rec *r, const struct trace_site *site)
{
    commit_walked(r, site->stack, site->depth, TRACE_SITE_ALLOW);
}

void trace_drain_pending(void)
{
    if (!atomic_load(&trace_proc.on) || trace_proc.pid != getpid())
        return;
    /* An exit handler: it may run in a signal handler that interrupted
     * this thread inside the shim. A buffer it cannot have is left to the
     * exit flush, which marks the trace incomplete. */
    struct thread_buf *list = atomic_load(&trace_proc.threads);
    for (struct thread_buf *tb = list; tb; tb = tb->next) {
        if (buf_lock_at_exit(tb) != 0)
            continue;
        if (!tb->finished)
            pending_write(tb, 1);
        buf_unlock(tb);
    }
}

/* Writes tb's pending records and its THREAD_END, and flushes it. Caller
 * holds tb->busy. */
static void finish_locked(struct thread_buf *tb)
{
    if (tb->finished)
        return;
    pending_write(tb, 1);
    /* A stream that recorded nothing (a forked child's inherited one) is
     * left out, here and in the process root. */
    if (tb->seq) {
        uint8_t wf[TRACE_WINDOW_FRAME_LEN]; /* hook (window.c): the last window, */
        if (window_finish(tb, wf))          /* and tb->head becomes the stream head */
            append_locked(tb, TRACE_FRAME_WINDOW, wf, sizeof wf);
        uint8_t payload[40];
        put_u64(payload, tb->seq);
        memcpy(payload + 8, tb->head, 32);
        append_locked(tb, TRACE_FRAME_THREAD_END, payload, sizeof payload);
    }
    trace_buf_flush(tb);
    tb->finished = 1;
}

int trace_thread_finish(struct thread_buf *tb)
{
    if (buf_lock_at_exit(tb) != 0)
        return -1;
    finish_locked(tb);
    buf_unlock(tb);
    return 0;
}

void trace_thread_close(struct thread_buf *tb)
{
    if (!tb)
        return;
    buf_lock(tb);
    if (tb->gone) {
        buf_unlock(tb);
        return;
    }
    finish_locked(tb);
    /* Its own calls from later thread-exit destructors are dropped, as
     * the thread is over; the stream and its head stay for the root. */
    tb->gone = 1;
    pending_free(tb);
    free(tb->buf);
    tb->buf = NULL;
    window_free(tb);
    buf_unlock(tb);
}

void trace_threads_reset_after_fork(void)
{
    struct thread_buf *tb = trace_proc.threads;
    while (tb) {
        struct thread_buf *next = tb->next;
        int mine = 0;
        for (int s = 0; s < TRACE_NSTREAMS; s++)
            mine |= tb == tls_tb[s];
        if (!mine) {
            pending_discard(tb);
            pending_free(tb);
            free(tb->buf);
            window_free(tb);
            free(tb);
        }
        tb = next;
    }
    atomic_store(&trace_proc.threads, NULL);
    trace_proc.next_index = 1;
    /* The forking thread is the child's main thread; the parent's unwritten
     * records stay the parent's to write. */
    tls_index = 0;
    for (int s = 0; s < TRACE_NSTREAMS; s++) {
        struct thread_buf *mine = tls_tb[s];
        if (!mine)
            continue;
        mine->index = stream_bit(s);
        mine->seq = 0;
        mine->len = 0;
        pending_discard(mine);
        memset(mine->sites, 0, sizeof mine->sites);
        callsite_forget(mine);
        memset(mine->pysites, 0, sizeof mine->pysites); /* described anew in the child's file */
        atomic_flag_clear(&mine->busy);
        window_start(mine); /* hook (window.c): its OpenSSL state, if any, is reused */
        mine->next = atomic_load(&trace_proc.threads);
        atomic_store(&trace_proc.threads, mine);
    }
}
