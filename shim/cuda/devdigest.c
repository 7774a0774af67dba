/* Device digests through the CUDA Driver API (libcuda.so.1, opened with
 * dlopen, never linked). Operands of 4 KiB or more are digested on the
 * device by the embedded PTX kernels (shim/cuda/digest.cu, the logic in
 * shim/cuda/cuda_digest_kernel.h), launched on the call's stream, with
 * scratch memory of that stream's own; only the 16-byte result comes back.
 * Smaller operands, builds without nvcc, and contexts where the module
 * does not load are digested by copy-and-hash: the extent holding the
 * logical elements is copied to the host and they are digested there by
 * shim/trace/digest.c. Both give the host digest of the same bytes; an
 * operand is a strided N-d array (a matrix, a cuDNN tensor), its padding
 * never digested. The matrices of a pointer array in device memory
 * (batched GEMMs) are found by the kernels, which read the array on the
 * device; small ones are gathered packed by a kernel (dk_gather) and
 * copied. On the traced path nothing waits:
 * the kernels' results, or the copies, go by cuMemcpyDtoHAsync into
 * pinned memory of a per-thread pool of jobs, an event is recorded after
 * them, and the trace writer's FIFO of pending records (shim/trace/
 * writer.c) completes the digest when cuEventQuery says the event is done,
 * or waits for it at its drain points. Where that cannot be set up (a
 * driver error, no pinned memory, the pool exhausted, a copy over 1 MiB
 * where no kernel runs) the digest is taken synchronously as before,
 * waiting for the call's stream, and DETSHIM_LOG=info says so once per
 * reason. DETSHIM_CUDA_DIGEST=sync (for the tests) takes every digest
 * synchronously. Where no kernel runs, a pointer array is read to the
 * host first, waiting for the stream (cuda_read); so are alpha and beta
 * given by device pointer, always: whether they are zero decides which
 * operands are read at all. Trace headers say which method
 * (TRACE_FIELD_DEVICE_DIGEST). A stream being captured into a CUDA graph
 * is never waited for nor launched on: its calls' device operands are
 * recorded as not digested.
 */
#include <assert.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "cuda/cuda_digest_kernel.h"
#include "trace/digest.h"

static struct {
    cuMemcpyDtoH_v2_fn *memcpy_dtoh;
    cuStreamSynchronize_fn *stream_sync;
    cuStreamIsCapturing_fn *is_capturing; /* NULL in drivers before CUDA 10 */
    int ok;
    /* the kernel path; all NULL if the driver lacks one */
    cuCtxGetCurrent_fn *ctx_current;
    cuModuleLoadData_fn *module_load;
    cuModuleGetFunction_fn *module_function;
    cuLaunchKernel_fn *launch;
    cuMemAlloc_v2_fn *mem_alloc;
    cuMemcpyDtoHAsync_v2_fn *memcpy_dtoh_async;
    /* the asynchronous path; async is 0 if the driver lacks one of these
     * or DETSHIM_CUDA_DIGEST=sync */
    cuMemHostAlloc_fn *host_alloc;
    cuMemFreeHost_fn *host_free;
    cuEventCreate_fn *event_create;
    cuEventRecord_fn *event_record;
    cuEventQuery_fn *event_query;
    cuEventSynchronize_fn *event_sync;
    cuEventDestroy_v2_fn *event_destroy; /* NULL: a freed job's event is kept */
    int async;
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

/* The driver is already loaded in any process that reached cuBLAS; the
 * dlopen only takes a reference. cuInit is idempotent. */
static void drv_open(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY);
    if (!h) {
        core_log(DS_LOG_INFO, "device digests unavailable: cannot load libcuda.so.1 (%s)", dlerror());
        return;
    }
    cuInit_fn *init = (cuInit_fn *)(uintptr_t)dlsym(h, "cuInit");
    drv.memcpy_dtoh = (cuMemcpyDtoH_v2_fn *)(uintptr_t)dlsym(h, "cuMemcpyDtoH_v2");
    drv.stream_sync = (cuStreamSynchronize_fn *)(uintptr_t)dlsym(h, "cuStreamSynchronize");
    drv.ok = init && drv.memcpy_dtoh && drv.stream_sync && init(0) == CUDA_SUCCESS;
    drv.is_capturing = (cuStreamIsCapturing_fn *)(uintptr_t)dlsym(h, "cuStreamIsCapturing");
    drv.ctx_current = (cuCtxGetCurrent_fn *)(uintptr_t)dlsym(h, "cuCtxGetCurrent");
    drv.module_load = (cuModuleLoadData_fn *)(uintptr_t)dlsym(h, "cuModuleLoadData");
    drv.module_function = (cuModuleGetFunction_fn *)(uintptr_t)dlsym(h, "cuModuleGetFunction");
    drv.launch = (cuLaunchKernel_fn *)(uintptr_t)dlsym(h, "cuLaunchKernel");
    drv.mem_alloc = (cuMemAlloc_v2_fn *)(uintptr_t)dlsym(h, "cuMemAlloc_v2");
    drv.memcpy_dtoh_async = (cuMemcpyDtoHAsync_v2_fn *)(uintptr_t)dlsym(h, "cuMemcpyDtoHAsync_v2");
    drv.host_alloc = (cuMemHostAlloc_fn *)(uintptr_t)dlsym(h, "cuMemHostAlloc");
    drv.host_free = (cuMemFreeHost_fn *)(uintptr_t)dlsym(h, "cuMemFreeHost");
    drv.event_create = (cuEventCreate_fn *)(uintptr_t)dlsym(h, "cuEventCreate");
    drv.event_record = (cuEventRecord_fn *)(uintptr_t)dlsym(h, "cuEventRecord");
    drv.event_query = (cuEventQuery_fn *)(uintptr_t)dlsym(h, "cuEventQuery");
    drv.event_sync = (cuEventSynchronize_fn *)(uintptr_t)dlsym(h, "cuEventSynchronize");
    drv.event_destroy = (cuEventDestroy_v2_fn *)(uintptr_t)dlsym(h, "cuEventDestroy_v2");
    const char *mode = core_getenv("DETSHIM_CUDA_DIGEST");
    drv.async = drv.ok && drv.memcpy_dtoh_async && drv.host_alloc && drv.host_free &&
                drv.event_create && drv.event_record && drv.event_query && drv.event_sync &&
                !(mode && strcmp(mode, "sync") == 0);
    if (!drv.ok)
        core_log(DS_LOG_INFO, "device digests unavailable: libcuda.so.1 lacks the driver calls "
                 "they need or cuInit failed");
}

const char *cuda_digest_method(void)
{
    return TRACE_DEVICE_DIGEST;
}

/* 1 if work queued on `stream` is being captured into a CUDA graph: then
 * nothing may wait for it, and no digest kernel may join the graph. */
static int capturing(CUstream stream)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    return drv.is_capturing && drv.is_capturing(stream, &st) == CUDA_SUCCESS &&
           st != CU_STREAM_CAPTURE_STATUS_NONE;
}

int cuda_read(CUstream stream, void *dst, const void *dptr, size_t n)
{
    pthread_once(&drv_once, drv_open);
    if (!drv.ok || capturing(stream))
        return -1;
    if (n == 0)
        return 0;
    if (drv.stream_sync(stream) != CUDA_SUCCESS)
        return -1;
    return drv.memcpy_dtoh(dst, (CUdeviceptr)(uintptr_t)dptr, n) == CUDA_SUCCESS ? 0 : -1;
}

/* What a thread allocates here (its staging buffer, its pool of jobs) is
 * freed when it exits, by the destructor of thread_key (thread_exit,
 * below); a thread arms it when it first allocates. */
static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;
static void thread_exit(void *arg);

static void make_thread_key(void)
{
    pthread_key_create(&thread_key, thread_exit);
}

static void thread_arm(void)
{
    pthread_once(&thread_key_once, make_thread_key);
    pthread_setspecific(thread_key, (void *)1); /* non-NULL: run the destructor */
}

/* A per-thread staging buffer, grown as needed and kept until the thread
 * exits: operands of one size recur call after call. */
static _Thread_local unsigned char *stage;
static _Thread_local size_t stage_cap;

static unsigned char *stage_get(size_t n)
{
    if (n > stage_cap) {
        if (!stage)
            thread_arm();
        unsigned char *p = realloc(stage, n);
        if (!p)
            return NULL;
        stage = p;
        stage_cap = n;
    }
    return stage;
}

/* The kernels of one context, and each stream's scratch memory there:
 * block sums for a chunk of CHUNK blocks (or dk_gather's packed bytes),
 * the 8 lanes' state, the 16-byte result. Digests on one stream reuse its
 * scratch in stream order; two streams never share one, since their
 * digests may run at once. Made at first use and kept for the process. */
enum { CHUNK = 65536, MAX_CONTEXTS = 16, MAX_STREAMS = 64, KERNEL_MIN_BYTES = 4096 };
enum { SCRATCH_BYTES = CHUNK * 64 + 64 + 16 };
struct kernels {
    CUcontext ctx;
    int ok;
    CUfunction sums, scan, gather;
    int nstreams;
    struct {
        CUstream stream;
        CUdeviceptr scratch;
    } streams[MAX_STREAMS];
};
static struct kernels contexts[MAX_CONTEXTS];
static int ncontexts;
static pthread_mutex_t kernel_lock = PTHREAD_MUTEX_INITIALIZER;

static int kernels_load(struct kernels *k)
{
    CUmodule mod;
    return drv.module_load(&mod, cuda_digest_ptx) == CUDA_SUCCESS &&
                   drv.module_function(&k->sums, mod, "detshim_dk_block_sums") == CUDA_SUCCESS &&
                   drv.module_function(&k->scan, mod, "detshim_dk_scan") == CUDA_SUCCESS &&
                   drv.module_function(&k->gather, mod, "detshim_dk_gather") == CUDA_SUCCESS
               ? 0 : -1;
}

/* The scratch memory of `stream` in k's context, allocated at its first
 * digest; 0 when it cannot be (then the caller copies). Caller holds
 * kernel_lock. */
static CUdeviceptr stream_scratch(struct kernels *k, CUstream stream)
{
    for (int i = 0; i < k->nstreams; i++)
        if (k->streams[i].stream == stream)
            return k->streams[i].scratch;
    CUdeviceptr p;
    if (k->nstreams == MAX_STREAMS || drv.mem_alloc(&p, SCRATCH_BYTES) != CUDA_SUCCESS)
        return 0;
    k->streams[k->nstreams].stream = stream;
    k->streams[k->nstreams].scratch = p;
    k->nstreams++;
    return p;
}

/* The kernels of the current context, loading them on first use; NULL
 * when there is no PTX, no current context, or they would not load (then
 * never tried again in that context). Caller holds kernel_lock. */
static struct kernels *kernels_get(void)
{
    CUcontext ctx;
    if (!cuda_digest_ptx[0] || !drv.ctx_current || !drv.module_load || !drv.module_function ||
        !drv.launch || !drv.mem_alloc || !drv.memcpy_dtoh_async ||
        drv.ctx_current(&ctx) != CUDA_SUCCESS || !ctx)
        return NULL;
    for (int i = 0; i < ncontexts; i++)
        if (contexts[i].ctx == ctx)
            return contexts[i].ok ? &contexts[i] : NULL;
    if (ncontexts == MAX_CONTEXTS)
        return NULL;
    struct kernels *k = &contexts[ncontexts++];
    k->ctx = ctx;
    k->ok = kernels_load(k) == 0;
    if (!k->ok)
        core_log(DS_LOG_INFO, "device digest kernels do not load in this context; "
                 "digesting device operands by copy-and-hash");
    return k->ok ? k : NULL;
}

static int launch(CUfunction f, unsigned grid, unsigned block, CUstream stream, void **params)
{
    return drv.launch(f, grid, 1, 1, block, 1, 1, 0, stream, params, NULL) == CUDA_SUCCESS ? 0 : -1;
}

/* Queues the digest of l on `stream`: block sums chunk by chunk, each
 * scanned into the lanes' state in order (the first scan starting the
 * lanes, the last adding the tail and merging: two launches for up to
 * CHUNK blocks, 64 MiB), and a copy of the 16-byte result to host address
 * out (lo, hi). Nothing waits. Returns 0, or -1 (then the caller copies).
 * Caller holds kernel_lock. */
static int kernel_enqueue(struct kernels *k, CUstream stream, struct dk_layout l, void *out)
{
    CUdeviceptr sums = stream_scratch(k, stream), state = sums + (CUdeviceptr)CHUNK * 64,
                result = state + 64;
    if (!sums)
        return -1;
    dk_u64 blocks = dk_full_blocks(l.total), first = 0;
    int rc = 0;
    do {
        dk_u64 n = blocks - first < CHUNK ? blocks - first : CHUNK;
        dk_u32 starts = first == 0, ends = first + n >= blocks;
        void *sum_args[] = { &l, &first, &n, &sums };
        void *scan_args[] = { &sums, &n, &state, &starts, &ends, &l, &result };
        if (n)
            rc = launch(k->sums, (unsigned)((n + 255) / 256), 256, stream, sum_args);
        rc = rc ? rc : launch(k->scan, 1, 8, stream, scan_args);
        first += n;
    } while (rc == 0 && first < blocks);
    if (rc == 0 && drv.memcpy_dtoh_async(out, result, 16, stream) != CUDA_SUCCESS)
        rc = -1;
    return rc;
}

/* Queues a packed copy of l's logical bytes (under KERNEL_MIN_BYTES) into
 * the stream's scratch memory and from there to host address out, for a
 * layout whose base only the device knows. Returns 0, or -1. Caller holds
 * kernel_lock. */
static int gather_enqueue(struct kernels *k, CUstream stream, struct dk_layout l, void *out)
{
    assert(l.total < KERNEL_MIN_BYTES);
    CUdeviceptr packed = stream_scratch(k, stream);
    void *args[] = { &l, &packed };
    int rc = packed ? launch(k->gather, (unsigned)((l.total + 255) / 256), 256, stream, args) : -1;
    if (rc == 0 && drv.memcpy_dtoh_async(out, packed, l.total, stream) != CUDA_SUCCESS)
        rc = -1;
    return rc;
}

/* The kernels' layout of span s: digest_runs' runs. */
static struct dk_layout layout_of(const struct cuda_span *s)
{
    int64_t run, count[DIGEST_MAX_DIMS], stride[DIGEST_MAX_DIMS];
    struct dk_layout l = { .base = (dk_u64)(uintptr_t)s->p, .indirect = s->indirect != 0 };
    l.ndims = (dk_u32)digest_runs(&s->shape, &run, count, stride);
    l.run_bytes = l.total = (dk_u64)run;
    for (dk_u32 k = 0; k < l.ndims; k++) {
        l.count[k] = (dk_u64)count[k];
        l.stride[k] = (dk_u64)stride[k];
        l.total *= l.count[k];
    }
    return l;
}

/* The digest on the device, waiting for it. Returns 0, or -1 (nothing
 * usable: the caller copies). */
static int kernel_digest(CUstream stream, struct dk_layout l, detshim_digest *d)
{
    dk_u64 out[2];
    pthread_mutex_lock(&kernel_lock);
    struct kernels *k = kernels_get();
    int rc = k ? kernel_enqueue(k, stream, l, out) : -1;
    if (rc == 0 && drv.stream_sync(stream) != CUDA_SUCCESS)
        rc = -1;
    pthread_mutex_unlock(&kernel_lock);
    if (rc == 0) {
        d->lo = out[0];
        d->hi = out[1];
    }
    return rc;
}

int cuda_digest_span(CUstream stream, const struct cuda_span *s, detshim_digest *d)
{
    assert(!s->indirect);
    *d = digest_bytes(NULL, 0);
    for (int k = 0; k < s->shape.ndims; k++)
        if (s->shape.dims[k] <= 0)
            return 0;
    pthread_once(&drv_once, drv_open);
    if (!drv.ok || capturing(stream))
        return -1;
    struct dk_layout l = layout_of(s);
    if (l.total >= KERNEL_MIN_BYTES && kernel_digest(stream, l, d) == 0)
        return 0;
    /* The extent from the first element to the last: padding between
     * them is copied but never digested. */
    size_t extent = digest_extent(&s->shape);
    unsigned char *host = stage_get(extent);
    if (!host || cuda_read(stream, host, s->p, extent) != 0)
        return -1;
    *d = digest_strided(host, &s->shape);
    return 0;
}

int cuda_digest_matrix(CUstream stream, const void *dptr, int64_t len, int64_t lines, int64_t ld,
                       size_t elem, detshim_digest *d)
{
    struct cuda_span s = { dptr, digest_matrix_shape(len, lines, ld, elem), 0 };
    return cuda_digest_span(stream, &s, d);
}

int cuda_digest_bytes(CUstream stream, const void *dptr, size_t n, detshim_digest *d)
{
    return cuda_digest_matrix(stream, dptr, (int64_t)n, 1, (int64_t)n, 1, d);
}

detshim_digest cuda_digest_combine(const detshim_digest *parts, int64_t n)
{
    if (n == 1)
        return parts[0];
    unsigned char *buf = malloc((size_t)n * 16);
    if (!buf)
        return digest_bytes(NULL, 0);
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < 8; k++) {
            buf[16 * i + k] = (unsigned char)(parts[i].lo >> (8 * k));
            buf[16 * i + 8 + k] = (unsigned char)(parts[i].hi >> (8 * k));
        }
    detshim_digest d = digest_bytes(buf, (size_t)n * 16);
    free(buf);
    return d;
}

/* Logs, once per process for each reason, that a device digest was taken
 * synchronously. */
static void log_sync_once(atomic_flag *once, const char *why)
{
    if (!atomic_flag_test_and_set(once))
        core_log(DS_LOG_INFO, "a device digest was taken synchronously (%s); "
                 "further ones for this reason are not logged", why);
}

/* One asynchronous digest of n spans: each span's kernel result (16
 * bytes), copied extent or gathered elements at its offset in pinned
 * memory, complete when the event is. Jobs belong to a per-thread pool
 * and are reused in the context their event was made in. `state` is
 * JOB_BUSY from start to completion, JOB_STUCK forever after a driver
 * error (a queued copy may still land in the pinned memory), and
 * JOB_ORPHAN when its thread exited while it was busy: then whoever
 * completes or discards it (the trace's FIFO of pending records, on any
 * thread) frees it. Only the owning thread takes a free job; other
 * threads only move a busy one on. */
enum { JOB_FREE, JOB_BUSY, JOB_STUCK, JOB_ORPHAN };
struct job {
    atomic_int state;
    CUcontext ctx;
    CUevent event;
    unsigned char *pinned;
    size_t cap;
    int64_t n, parts_cap;
    struct job_part {
        size_t off;
        enum { PART_KERNEL, PART_COPY, PART_GATHER } kind;
        /* 16 result bytes at off; the span's extent, copied; its logical
         * bytes, packed by dk_gather (total of them) */
        struct digest_shape shape;
        size_t total;
    } *parts;
    detshim_digest *digests;
};

/* A full FIFO of pending records, and the record being made, never run
 * out of jobs. */
enum { POOL_MAX = (TRACE_PENDING_MAX + 1) * TRACE_MAX_OPERANDS, ASYNC_COPY_MAX = 1 << 20 };
static _Thread_local struct job **pool;
static _Thread_local unsigned npool, pool_next;

/* Takes j if it belongs to ctx and is free. A plain load first: a locked
 * exchange on every busy job of a scan is what made scans costly. */
static int job_take(struct job *j, CUcontext ctx)
{
    return j->ctx == ctx &&
           atomic_load_explicit(&j->state, memory_order_relaxed) == JOB_FREE &&
           atomic_exchange(&j->state, JOB_BUSY) == JOB_FREE;
}

/* A free job of this thread's pool for context ctx, made when none is;
 * NULL when the pool is at POOL_MAX and none is free, or the driver
 * refuses an event. The pool is a ring in the order jobs were taken, and
 * the FIFO of pending records completes them in that order, so the job at
 * pool_next, the one taken longest ago, is usually free. When it is not
 * (all pending, a job of another context, one stuck after a driver
 * error), the ring is scanned for a free job of ctx, and only when there
 * is none is a new job inserted before pool_next, keeping the order. */
static struct job *job_acquire(CUcontext ctx)
{
    for (unsigned i = 0; i < npool; i++) {
        unsigned at = (pool_next + i) % npool;
        if (job_take(pool[at], ctx)) {
            pool_next = (at + 1) % npool;
            return pool[at];
        }
    }
    if (npool == POOL_MAX)
        return NULL;
    if (!pool) {
        thread_arm();
        if (!(pool = calloc(POOL_MAX, sizeof *pool)))
            return NULL;
    }
    struct job *j = calloc(1, sizeof *j);
    if (!j || drv.event_create(&j->event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
        free(j);
        return NULL;
    }
    atomic_store(&j->state, JOB_BUSY);
    j->ctx = ctx;
    memmove(&pool[pool_next + 1], &pool[pool_next], (npool - pool_next) * sizeof *pool);
    pool[pool_next] = j;
    npool++;
    pool_next = (pool_next + 1) % npool;
    return j;
}

/* Frees j, its event and its pinned memory. */
static void job_free(struct job *j)
{
    if (drv.event_destroy)
        drv.event_destroy(j->event);
    if (j->pinned)
        drv.host_free(j->pinned);
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
 * that thread is gone. */
static void job_release(struct job *j)
{
    if (atomic_exchange(&j->state, JOB_FREE) == JOB_ORPHAN)
        job_free(j);
}

/* The job failed with work possibly still queued into its memory: never
 * reused, and kept when its thread is gone. */
static void job_stick(struct job *j)
{
    if (atomic_exchange(&j->state, JOB_STUCK) == JOB_ORPHAN)
        job_keep(j);
}

/* thread_key's destructor: frees the exiting thread's staging buffer and
 * pool. A free job is freed here; a busy one, whose record still waits
 * in the trace's FIFO (the trace's own thread-exit destructor, which
 * writes that FIFO, may run before or after this one), is handed over to
 * whoever completes it; a stuck one is kept. */
static void thread_exit(void *arg)
{
    (void)arg;
    free(stage);
    stage = NULL;
    stage_cap = 0;
    for (unsigned i = 0; i < npool; i++) {
        struct job *j = pool[i];
        int s = JOB_BUSY;
        if (atomic_compare_exchange_strong(&j->state, &s, JOB_ORPHAN))
            continue;
        if (s == JOB_FREE)
            job_free(j);
        else
            job_keep(j);
    }
    free(pool);
    pool = NULL;
    npool = pool_next = 0;
}

/* Room for n parts and `bytes` of pinned memory; pinned memory starts at
 * 4 KiB (a copy-and-hash operand is under that where kernels run) and
 * grows by powers of two, never shrinking, so freeing pinned memory, which
 * may wait for the device, stays rare. Returns 0 or -1. */
static int job_reserve(struct job *j, int64_t n, size_t bytes)
{
    if (n > j->parts_cap) {
        struct job_part *p = realloc(j->parts, (size_t)n * sizeof *p);
        detshim_digest *d = p ? realloc(j->digests, (size_t)n * sizeof *d) : NULL;
        if (p)
            j->parts = p;
        if (!d)
            return -1;
        j->digests = d;
        j->parts_cap = n;
    }
    if (bytes > j->cap) {
        size_t cap = 4096;
        while (cap < bytes)
            cap *= 2;
        void *m;
        /* Portable: pinned in every context, so a copy from any device
         * into it stays asynchronous. */
        if (drv.host_alloc(&m, cap, CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS)
            return -1;
        if (j->pinned)
            drv.host_free(j->pinned);
        j->pinned = m;
        j->cap = cap;
    }
    return 0;
}

/* trace_deferred.complete of a job: 1 with its digest, releasing it; 0
 * while its event is not done (without wait); -1 after a driver error. */
static int job_complete(void *arg, int wait, detshim_digest *d)
{
    static atomic_flag logged = ATOMIC_FLAG_INIT;
    struct job *j = arg;
    CUresult rc = wait ? drv.event_sync(j->event) : drv.event_query(j->event);
    if (!wait && rc == CUDA_ERROR_NOT_READY)
        return 0;
    if (rc != CUDA_SUCCESS) {
        if (!atomic_flag_test_and_set(&logged))
            core_log(DS_LOG_INFO, "a device digest failed to complete (driver error %d); "
                     "its operand is recorded as not digested", (int)rc);
        job_stick(j); /* its copies may still land */
        return -1;
    }
    for (int64_t b = 0; b < j->n; b++) {
        const struct job_part *p = &j->parts[b];
        uint64_t out[2];
        switch (p->kind) {
        case PART_KERNEL:
            memcpy(out, j->pinned + p->off, 16);
            j->digests[b] = (detshim_digest){ .lo = out[0], .hi = out[1] };
            break;
        case PART_COPY:
            j->digests[b] = digest_strided(j->pinned + p->off, &p->shape);
            break;
        case PART_GATHER:
            j->digests[b] = digest_bytes(j->pinned + p->off, p->total);
            break;
        }
    }
    *d = cuda_digest_combine(j->digests, j->n);
    job_release(j);
    return 1;
}

/* trace_deferred.discard of a job: released uncompleted. */
static void job_discard(void *arg)
{
    job_release(arg);
}

/* Queues the parts' kernels or copies and the event on `stream`. Returns
 * 0, or -1 after a driver error. */
static int job_enqueue(struct job *j, CUstream stream, const struct cuda_span *spans)
{
    int rc = 0;
    pthread_mutex_lock(&kernel_lock);
    struct kernels *k = NULL;
    for (int64_t b = 0; b < j->n && rc == 0; b++) {
        const struct job_part *p = &j->parts[b];
        void *dst = j->pinned + p->off;
        if (p->kind == PART_COPY) {
            rc = drv.memcpy_dtoh_async(dst, (CUdeviceptr)(uintptr_t)spans[b].p,
                                       digest_extent(&p->shape), stream) == CUDA_SUCCESS ? 0 : -1;
            continue;
        }
        k = k ? k : kernels_get();
        if (!k)
            rc = -1;
        else if (p->kind == PART_KERNEL)
            rc = kernel_enqueue(k, stream, layout_of(&spans[b]), dst);
        else
            rc = gather_enqueue(k, stream, layout_of(&spans[b]), dst);
    }
    if (rc == 0 && drv.event_record(j->event, stream) != CUDA_SUCCESS)
        rc = -1;
    pthread_mutex_unlock(&kernel_lock);
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

int cuda_digest_start(CUstream stream, const struct cuda_span *spans, int64_t n,
                      struct trace_deferred *later)
{
    static pthread_once_t drain_once = PTHREAD_ONCE_INIT;
    static atomic_flag log_pool = ATOMIC_FLAG_INIT, log_big = ATOMIC_FLAG_INIT,
                       log_driver = ATOMIC_FLAG_INIT, log_array = ATOMIC_FLAG_INIT;
    pthread_once(&drv_once, drv_open);
    if (!drv.async || n <= 0 || capturing(stream))
        return -1;
    /* Kernels where they load and the stream has scratch memory (made
     * here, so that only a driver error can fail the launches). */
    int kernels = 0;
    if (cuda_digest_ptx[0]) {
        pthread_mutex_lock(&kernel_lock);
        struct kernels *k = kernels_get();
        kernels = k && stream_scratch(k, stream) != 0;
        pthread_mutex_unlock(&kernel_lock);
    }
    for (int64_t b = 0; b < n && !kernels; b++)
        if (spans[b].indirect) {
            log_sync_once(&log_array, "a pointer array where no digest kernel runs is read "
                          "on the host");
            return -1;
        }
    CUcontext ctx = NULL;
    if (drv.ctx_current && drv.ctx_current(&ctx) != CUDA_SUCCESS)
        return -1;
    struct job *j = job_acquire(ctx);
    if (!j) {
        log_sync_once(&log_pool, "no free job in this thread's pool");
        return -1;
    }
    size_t bytes = 0;
    int big = 0;
    if (job_reserve(j, n, 0) != 0) {
        job_release(j);
        log_sync_once(&log_pool, "out of memory");
        return -1;
    }
    for (int64_t b = 0; b < n; b++) {
        struct job_part *p = &j->parts[b];
        size_t total = (size_t)layout_of(&spans[b]).total, room;
        *p = (struct job_part){ .off = bytes, .shape = spans[b].shape, .total = total };
        if (kernels && total >= KERNEL_MIN_BYTES) {
            p->kind = PART_KERNEL;
            room = 16;
        } else if (spans[b].indirect) {
            p->kind = PART_GATHER;
            room = total;
        } else {
            p->kind = PART_COPY;
            room = digest_extent(&spans[b].shape);
            big |= room > ASYNC_COPY_MAX;
        }
        bytes += (room + 15) & ~(size_t)15;
    }
    if (big) {
        job_release(j);
        log_sync_once(&log_big, "a copy over 1 MiB where no digest kernel runs");
        return -1;
    }
    if (job_reserve(j, n, bytes) != 0) {
        job_release(j);
        log_sync_once(&log_pool, "no pinned host memory");
        return -1;
    }
    j->n = n;
    if (job_enqueue(j, stream, spans) != 0) {
        log_sync_once(&log_driver, "a driver error while queueing it");
        job_stick(j); /* what was queued may still land */
        return -1;
    }
    *later = (struct trace_deferred){ job_complete, job_discard, j, "cuda.digest",
                                      CUDA_NO_DIGEST_NOTE };
    pthread_once(&drain_once, register_drain);
    return 0;
}
