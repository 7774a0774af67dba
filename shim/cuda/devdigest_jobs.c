/* Asynchronous device digests (devdigest_jobs.c): the per-thread pool
 * of jobs, each the pinned memory and the event of one intercepted call's
 * digests on one stream, and the trace_deferred callbacks that complete
 * them from the trace's FIFO of pending records. The driver, the digest
 * kernels and the synchronous digests it falls back on are devdigest.c's
 * (shim/cuda/devdigest.h); docs/gpu.md says how it all fits.
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "cuda/cuda_digest_kernel.h"
#include "cuda/devdigest.h"
#include "trace/digest.h"

/* One asynchronous job: the digests of the device operands that one
 * intercepted call queues on one stream. Each operand is a ticket over
 * some of the job's parts (a span each: its kernel result, 16 bytes; its
 * copied extent; or its elements packed by dk_gather, total of them), at
 * their offsets in the job's pinned memory. Each operand's kernels or
 * copies are queued when it starts; one event, recorded after all of
 * them when the job is sealed (cuda_digest_seal, before the call's record
 * is committed), says when they have landed: one event per call and
 * stream, not one per operand. Jobs belong to a per-thread pool and are
 * reused in the context their event was made in. `state` is JOB_BUSY
 * from being taken until its last ticket is done, JOB_STUCK forever after
 * a driver error (a queued copy may still land in the pinned memory), and
 * JOB_ORPHAN when its thread exited while it was busy: then whoever
 * releases its last ticket (the trace's FIFO of pending records, on any
 * thread) frees it. Only the owning thread takes a free job, fills it and
 * seals it; its record is committed only after the seal, so other threads
 * only ever see sealed jobs. `phase` says what completing a ticket needs:
 * sealing (OPEN), the event (EVENT), nothing (LANDED: the event said so,
 * or the stream was waited for when the event could not be recorded), or
 * that nothing can be had (FAILED). */
enum { JOB_FREE, JOB_BUSY, JOB_STUCK, JOB_ORPHAN };
enum { PHASE_OPEN, PHASE_EVENT, PHASE_LANDED, PHASE_FAILED };
struct job;
struct ticket {
    struct job *job;
    int64_t first, n; /* its parts */
};
struct job {
    atomic_int state, phase, live; /* live: tickets not yet completed or discarded */
    CUcontext ctx;
    CUstream stream;
    CUevent event;
    int kernels; /* the digest kernels run on this stream: 1, 0, or -1 not yet known */
    int broken;  /* a queueing failed: stuck when its last ticket is done */
    unsigned char *pinned;
    size_t cap, used;
    int64_t n, parts_cap;
    int ntickets;
    struct ticket tickets[TRACE_MAX_OPERANDS];
    struct job_part {
        size_t off;
        enum { PART_KERNEL, PART_COPY, PART_GATHER } kind;
        size_t total;
        /* A copied part whose elements are one contiguous run: its bytes
         * (digest_strided's digest_bytes), found when it starts so that
         * completing it, calls later, reads no shape; else 0. */
        size_t run;
        struct digest_shape shape; /* set for a copied part that is not one run */
    } *parts;
    detshim_digest *digests;
};

/* A full FIFO of pending records, and the record being made, never run
 * out of jobs: at most one job per operand. */
enum { POOL_MAX = (TRACE_PENDING_MAX + 1) * TRACE_MAX_OPERANDS, ASYNC_COPY_MAX = 1 << 20 };
/* This thread's pool (a ring in the order jobs were taken) and the job
 * its current call fills, if any. Functions take its address once: each
 * access to a thread-local of this shared object is a call into the
 * dynamic linker. */
struct thread_jobs {
    struct job **pool;
    unsigned npool, next;
    struct job *open;
    size_t want; /* pinned bytes a call has needed, up to WANT_MAX: a new job's least */
};
enum { WANT_MAX = 64 << 10 };
static _Thread_local struct thread_jobs my_jobs;

/* Takes j if it belongs to ctx and is free. A plain load first: a locked
 * exchange on every busy job of a scan is what made scans costly. */
static int job_take(struct job *j, CUcontext ctx)
{
    return j->ctx == ctx &&
           atomic_load_explicit(&j->state, memory_order_relaxed) == JOB_FREE &&
           atomic_exchange(&j->state, JOB_BUSY) == JOB_FREE;
}

/* A free job of t's pool for context ctx, made when none is, emptied and
 * bound to `stream`; NULL when the pool is at POOL_MAX and none is free,
 * or the driver refuses an event. The FIFO of pending records completes
 * jobs in the order they were taken, so the job at t->next, the one
 * taken longest ago, is usually free. When it is not (all pending, a job
 * of another context, one stuck after a driver error), the ring is
 * scanned for a free job of ctx, and only when there is none is a new
 * job inserted before t->next, keeping the order. */
static struct job *job_acquire(struct thread_jobs *t, CUcontext ctx, CUstream stream)
{
    struct job *j = NULL;
    for (unsigned i = 0; i < t->npool && !j; i++) {
        unsigned at = (t->next + i) % t->npool;
        if (job_take(t->pool[at], ctx)) {
            j = t->pool[at];
            t->next = (at + 1) % t->npool;
        }
    }
    if (!j) {
        if (t->npool == POOL_MAX)
            return NULL;
        if (!t->pool) {
            cuda_thread_arm();
            if (!(t->pool = calloc(POOL_MAX, sizeof *t->pool)))
                return NULL;
        }
        j = calloc(1, sizeof *j);
        if (!j || cuda_drv.event_create(&j->event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
            free(j);
            return NULL;
        }
        atomic_store(&j->state, JOB_BUSY);
        j->ctx = ctx;
        memmove(&t->pool[t->next + 1], &t->pool[t->next], (t->npool - t->next) * sizeof *t->pool);
        t->pool[t->next] = j;
        t->npool++;
        t->next = (t->next + 1) % t->npool;
    }
    j->stream = stream;
    j->kernels = -1;
    j->broken = 0;
    j->used = 0;
    j->n = 0;
    j->ntickets = 0;
    atomic_store_explicit(&j->live, 0, memory_order_relaxed);
    atomic_store_explicit(&j->phase, PHASE_OPEN, memory_order_relaxed);
    return j;
}

/* Frees j, its event and its pinned memory. */
static void job_free(struct job *j)
{
    if (cuda_drv.event_destroy)
        cuda_drv.event_destroy(j->event);
    if (j->pinned)
        cuda_drv.host_free(j->pinned);
    free(j->parts);
    free(j->digests);
    free(j);
}

/* Jobs stuck after a driver error whose thread exited: kept for the
 * process, as the device may still write into their pinned memory. */
static struct job **kept;
static size_t nkept, kept_cap;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static void job_keep(struct job *j)
{
    pthread_mutex_lock(&kept_lock);
    if (nkept == kept_cap) {
        size_t cap = kept_cap ? 2 * kept_cap : 16;
        struct job **p = realloc(kept, cap * sizeof *p);
        if (p) {
            kept = p;
            kept_cap = cap;
        }
    }
    if (nkept < kept_cap)
        kept[nkept++] = j;
    pthread_mutex_unlock(&kept_lock);
}

/* The job is done with: free for its thread to take again, or freed when
 * that thread is gone; after a driver error (work possibly still queued
 * into its memory) never reused, and kept when its thread is gone. */
static void job_done(struct job *j)
{
    if (j->broken || atomic_load(&j->phase) == PHASE_FAILED) {
        if (atomic_exchange(&j->state, JOB_STUCK) == JOB_ORPHAN)
            job_keep(j);
    } else if (atomic_exchange(&j->state, JOB_FREE) == JOB_ORPHAN) {
        job_free(j);
    }
}

/* A ticket completed or discarded: the last one of a sealed job is done
 * with it (an open job's seal sees that none is left). */
static void ticket_release(struct ticket *tk)
{
    struct job *j = tk->job;
    if (atomic_fetch_sub(&j->live, 1) == 1 && atomic_load(&j->phase) != PHASE_OPEN)
        job_done(j);
}

static atomic_flag log_driver = ATOMIC_FLAG_INIT;

/* Records the event of t's open job after everything its tickets queued,
 * and closes it. Where the driver refuses the event, the stream is waited
 * for instead (the digests taken synchronously, as the log says), or,
 * failing that too, its operands are recorded as not digested. */
static void job_seal(struct thread_jobs *t)
{
    struct job *j = t->open;
    t->open = NULL;
    int phase = PHASE_EVENT;
    if (j->ntickets && cuda_drv.event_record(j->event, j->stream) != CUDA_SUCCESS) {
        cuda_log_sync_once(&log_driver, "a driver error while queueing it");
        phase = cuda_drv.stream_sync(j->stream) == CUDA_SUCCESS ? PHASE_LANDED : PHASE_FAILED;
    }
    atomic_store(&j->phase, phase);
    if (atomic_load(&j->live) == 0)
        job_done(j);
}

void cuda_digest_seal(void)
{
    struct thread_jobs *t = &my_jobs;
    if (t->open)
        job_seal(t);
}

void cuda_jobs_thread_exit(void)
{
    struct thread_jobs *t = &my_jobs;
    if (t->open)
        job_seal(t);
    for (unsigned i = 0; i < t->npool; i++) {
        struct job *j = t->pool[i];
        int s = JOB_BUSY;
        if (atomic_compare_exchange_strong(&j->state, &s, JOB_ORPHAN))
            continue;
        if (s == JOB_FREE)
            job_free(j);
        else
            job_keep(j);
    }
    free(t->pool);
    t->pool = NULL;
    t->npool = t->next = 0;
}

/* Room for n parts and `bytes` of pinned memory. Pinned memory, which
 * queued copies may still target, only grows while nothing is queued
 * into it (used == 0): from 4 KiB (a copy-and-hash operand is under that
 * where kernels run) by powers of two, never shrinking, so freeing pinned
 * memory, which may wait for the device, stays rare. Returns 0 or -1. */
static int job_reserve(struct job *j, int64_t n, size_t bytes)
{
    if (n > j->parts_cap) {
        int64_t cap = n < 4 ? 4 : 2 * n;
        struct job_part *p = realloc(j->parts, (size_t)cap * sizeof *p);
        detshim_digest *d = p ? realloc(j->digests, (size_t)cap * sizeof *d) : NULL;
        if (p)
            j->parts = p;
        if (!d)
            return -1;
        j->digests = d;
        j->parts_cap = cap;
    }
    if (bytes > j->cap) {
        assert(j->used == 0);
        size_t cap = 4096;
        while (cap < bytes)
            cap *= 2;
        void *m;
        /* Portable: pinned in every context, so a copy from any device
         * into it stays asynchronous. */
        if (cuda_drv.host_alloc(&m, cap, CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS)
            return -1;
        if (j->pinned)
            cuda_drv.host_free(j->pinned);
        j->pinned = m;
        j->cap = cap;
    }
    return 0;
}

/* The digest of part p of a job whose work has landed. */
static detshim_digest part_digest(const struct job *j, const struct job_part *p)
{
    const unsigned char *at = j->pinned + p->off;
    uint64_t out[2];
    switch (p->kind) {
    case PART_KERNEL:
        memcpy(out, at, 16);
        return (detshim_digest){ .lo = out[0], .hi = out[1] };
    case PART_COPY:
        return p->run ? digest_bytes(at, p->run) : digest_strided(at, &p->shape);
    default: /* PART_GATHER */
        return digest_bytes(at, p->total);
    }
}

/* trace_deferred.complete of a ticket: 1 with its digest; 0 while the
 * job's event is not done (without wait); -1 after a driver error, or for
 * a job another thread has not sealed yet (never, as the records of
 * cuda_commit are committed after the seal). Seals the caller's own open
 * job first. */
static int job_complete(void *arg, int wait, detshim_digest *d)
{
    static atomic_flag logged = ATOMIC_FLAG_INIT;
    struct ticket *tk = arg;
    struct job *j = tk->job;
    int phase = atomic_load(&j->phase);
    if (phase == PHASE_OPEN) {
        struct thread_jobs *t = &my_jobs;
        if (t->open != j) {
            if (!wait)
                return 0;
            ticket_release(tk);
            return -1;
        }
        job_seal(t);
        phase = atomic_load(&j->phase);
    }
    if (phase == PHASE_EVENT) {
        CUresult rc = wait ? cuda_drv.event_sync(j->event) : cuda_drv.event_query(j->event);
        if (!wait && rc == CUDA_ERROR_NOT_READY)
            return 0;
        if (rc != CUDA_SUCCESS && !atomic_flag_test_and_set(&logged))
            core_log(DS_LOG_INFO, "a device digest failed to complete (driver error %d); "
                     "its operand is recorded as not digested", (int)rc);
        phase = rc == CUDA_SUCCESS ? PHASE_LANDED : PHASE_FAILED;
        atomic_store(&j->phase, phase);
    }
    if (phase == PHASE_FAILED) {
        ticket_release(tk); /* its copies may still land: the job is stuck */
        return -1;
    }
    /* One part (an operand that is one matrix) is its own digest. */
    if (tk->n == 1) {
        *d = part_digest(j, &j->parts[tk->first]);
    } else {
        for (int64_t b = tk->first; b < tk->first + tk->n; b++)
            j->digests[b] = part_digest(j, &j->parts[b]);
        *d = cuda_digest_combine(j->digests + tk->first, tk->n);
    }
    ticket_release(tk);
    return 1;
}

/* trace_deferred.discard of a ticket: released uncompleted (a forked
 * child's copy of its parent's pending records, a record too late for
 * the trace). Its copies may still land, in memory the job would
 * otherwise reuse or regrow: the job is never reused. */
static void job_discard(void *arg)
{
    struct ticket *tk = arg;
    tk->job->broken = 1;
    ticket_release(tk);
}

/* The bytes of s's elements when they are one contiguous run, else 0. A
 * packed matrix (a GEMM's usual operand) is told at once, as digest_runs
 * would merge its two dims. */
static size_t contiguous_run(const struct cuda_span *s)
{
    const struct digest_shape *sh = &s->shape;
    if (sh->ndims == 2 && sh->strides[1] == 1 &&
        (sh->dims[0] == 1 || sh->strides[0] == sh->dims[1]))
        return (size_t)(sh->dims[0] * sh->dims[1]) * sh->elem;
    int64_t run, count[DIGEST_MAX_DIMS], stride[DIGEST_MAX_DIMS];
    return digest_runs(sh, &run, count, stride) == 1 && count[0] == 1 ? (size_t)run : 0;
}

/* The pinned bytes a part's result takes: its kernel's digest, its
 * packed elements, or its copied extent. */
static size_t part_room(const struct job_part *p)
{
    return p->kind == PART_KERNEL ? 16 : p->kind == PART_GATHER ? p->total
           : p->run                                           ? p->run
                                                              : digest_extent(&p->shape);
}

/* Queues the kernels or copies of j's parts [first, first + n), spans[0]
 * the first's span, on j's stream. Returns 0, or -1 after a driver
 * error. */
static int job_enqueue(struct job *j, int64_t first, int64_t n, const struct cuda_span *spans)
{
    int rc = 0, locked = 0;
    struct kernels *k = NULL;
    for (int64_t b = 0; b < n && rc == 0; b++) {
        const struct job_part *p = &j->parts[first + b];
        void *dst = j->pinned + p->off;
        if (p->kind == PART_COPY) {
            rc = cuda_drv.memcpy_dtoh_async(dst, (CUdeviceptr)(uintptr_t)spans[b].p,
                                            part_room(p), j->stream) == CUDA_SUCCESS ? 0 : -1;
            continue;
        }
        if (!locked) {
            pthread_mutex_lock(&cuda_kernel_lock);
            locked = 1;
            k = cuda_kernels_get();
        }
        if (!k)
            rc = -1;
        else if (p->kind == PART_KERNEL)
            rc = cuda_kernel_enqueue(k, j->stream, cuda_layout_of(&spans[b]), dst);
        else
            rc = cuda_gather_enqueue(k, j->stream, cuda_layout_of(&spans[b]), dst);
    }
    if (locked)
        pthread_mutex_unlock(&cuda_kernel_lock);
    return rc;
}

/* Registered at the first queued digest, after CUDA is up: exit runs it
 * before the handlers CUDA registered earlier, so the driver is still
 * there to wait on. */
static void drain_at_exit(void)
{
    trace_drain_pending();
}

static void register_drain(void)
{
    atexit(drain_at_exit);
}

/* The job of t that digests on `stream` next: its open job when that is
 * on the same stream and has a ticket free, else a newly taken one (the
 * open one sealed first); NULL when none can be had (the stream is being
 * captured, a driver error, the pool exhausted). */
static struct job *job_for(struct thread_jobs *t, CUstream stream)
{
    static atomic_flag log_pool = ATOMIC_FLAG_INIT;
    struct job *j = t->open;
    if (j && j->stream == stream && j->ntickets < TRACE_MAX_OPERANDS)
        return j;
    if (j)
        job_seal(t);
    CUcontext ctx = NULL;
    if (cuda_stream_capturing(stream) || (cuda_drv.ctx_current && cuda_drv.ctx_current(&ctx) != CUDA_SUCCESS))
        return NULL;
    if (!(j = job_acquire(t, ctx, stream))) {
        cuda_log_sync_once(&log_pool, "no free job in this thread's pool");
        return NULL;
    }
    return t->open = j;
}

/* Whether the digest kernels run on j's stream (they load, and it has
 * scratch memory, made here so that only a driver error can fail the
 * launches); asked once per job. */
static int job_kernels(struct job *j)
{
    if (j->kernels < 0) {
        j->kernels = 0;
        if (cuda_digest_ptx[0]) {
            pthread_mutex_lock(&cuda_kernel_lock);
            struct kernels *k = cuda_kernels_get();
            j->kernels = k && cuda_stream_scratch(k, j->stream) != 0;
            pthread_mutex_unlock(&cuda_kernel_lock);
        }
    }
    return j->kernels;
}

/* The logical bytes of span s (every dim >= 1): what cuda_layout_of's
 * total says, without its runs, which only a kernel needs. */
static size_t span_bytes(const struct cuda_span *s)
{
    size_t n = s->shape.elem;
    for (int k = 0; k < s->shape.ndims; k++)
        n *= (size_t)s->shape.dims[k];
    return n;
}

/* How span s, of `total` logical bytes, is digested in a job whose stream
 * runs the digest kernels or not. */
static int part_kind(int kernels, const struct cuda_span *s, size_t total)
{
    return kernels && total >= KERNEL_MIN_BYTES ? PART_KERNEL
           : s->indirect                         ? PART_GATHER : PART_COPY;
}

/* pthread_once(once, fn), without a call into libc once `done` says it
 * has returned: it runs for every operand digested. */
static inline void once_fast(atomic_bool *done, pthread_once_t *once, void (*fn)(void))
{
    if (!atomic_load_explicit(done, memory_order_acquire)) {
        pthread_once(once, fn);
        atomic_store_explicit(done, 1, memory_order_release);
    }
}

int cuda_digest_start(CUstream stream, const struct cuda_span *spans, int64_t n,
                      struct trace_deferred *later)
{
    static pthread_once_t drain_once = PTHREAD_ONCE_INIT;
    static atomic_bool drv_opened, drain_registered;
    static atomic_flag log_mem = ATOMIC_FLAG_INIT, log_big = ATOMIC_FLAG_INIT,
                       log_array = ATOMIC_FLAG_INIT;
    once_fast(&drv_opened, &cuda_drv_once, cuda_drv_open);
    if (!cuda_drv.async || n <= 0)
        return -1;
    struct thread_jobs *t = &my_jobs;
    struct job *j = job_for(t, stream);
    if (!j)
        return -1;
    if (job_reserve(j, j->n + n, 0) != 0) {
        cuda_log_sync_once(&log_mem, "out of memory");
        return -1;
    }
    /* The new parts, after the job's: kernels only where one is needed
     * (an operand of KERNEL_MIN_BYTES or more, or a pointer array). */
    struct job_part *parts = &j->parts[j->n];
    int need_kernels = 0;
    for (int64_t b = 0; b < n; b++) {
        parts[b].total = span_bytes(&spans[b]);
        need_kernels |= spans[b].indirect || parts[b].total >= KERNEL_MIN_BYTES;
    }
    int kernels = need_kernels && job_kernels(j), big = 0;
    size_t off = j->used;
    for (int64_t b = 0; b < n; b++) {
        if (spans[b].indirect && !kernels) {
            cuda_log_sync_once(&log_array, "a pointer array where no digest kernel runs is read "
                          "on the host");
            return -1;
        }
        parts[b].kind = part_kind(kernels, &spans[b], parts[b].total);
        parts[b].run = parts[b].kind == PART_COPY ? contiguous_run(&spans[b]) : 0;
        if (parts[b].kind == PART_COPY && !parts[b].run)
            parts[b].shape = spans[b].shape; /* 144 bytes, only where they are read */
        parts[b].off = off;
        size_t room = part_room(&parts[b]);
        big |= parts[b].kind == PART_COPY && room > ASYNC_COPY_MAX;
        off += (room + 15) & ~(size_t)15;
    }
    if (big) {
        cuda_log_sync_once(&log_big, "a copy over 1 MiB where no digest kernel runs");
        return -1;
    }
    /* Copies already queued target the open job's pinned memory, which
     * cannot grow: what does not fit goes into a new job, and later new
     * jobs start with room for as much (up to WANT_MAX), so that a call
     * keeps to one event. */
    if (j->used && off > j->cap) {
        size_t want = off < WANT_MAX ? off : WANT_MAX;
        t->want = want > t->want ? want : t->want;
        job_seal(t);
        return cuda_digest_start(stream, spans, n, later);
    }
    if (job_reserve(j, j->n + n, j->used || off > t->want ? off : t->want) != 0) {
        cuda_log_sync_once(&log_mem, "no pinned host memory");
        return -1;
    }
    if (job_enqueue(j, j->n, n, spans) != 0) {
        cuda_log_sync_once(&log_driver, "a driver error while queueing it");
        j->broken = 1; /* what was queued may still land */
        job_seal(t);
        return -1;
    }
    struct ticket *tk = &j->tickets[j->ntickets++];
    *tk = (struct ticket){ j, j->n, n };
    j->n += n;
    j->used = off;
    atomic_fetch_add(&j->live, 1);
    *later = (struct trace_deferred){ job_complete, job_discard, tk, "cuda.digest",
                                      CUDA_NO_DIGEST_NOTE };
    once_fast(&drain_registered, &drain_once, register_drain);
    return 0;
}
