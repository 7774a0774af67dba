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
 * pinned memory of a per-thread pool of jobs (devdigest_jobs.c), one job
 * per call and stream, whose one event is recorded after all of them when
 * the call is sealed (cuda_commit), and the trace writer's FIFO of
 * pending records (shim/trace/writer.c) completes the digests when
 * cuEventQuery says the event is done, or waits for it at its drain
 * points. Where that cannot be set up (a
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
#include "cuda/devdigest.h"
#include "trace/digest.h"

struct cuda_drv cuda_drv;
pthread_once_t cuda_drv_once = PTHREAD_ONCE_INIT;

/* The driver is already loaded in any process that reached cuBLAS; the
 * dlopen only takes a reference. cuInit is idempotent. */
void cuda_drv_open(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY);
    if (!h) {
        core_log(DS_LOG_INFO, "device digests unavailable: cannot load libcuda.so.1 (%s)", dlerror());
        return;
    }
    cuInit_fn *init = (cuInit_fn *)(uintptr_t)dlsym(h, "cuInit");
    cuda_drv.memcpy_dtoh = (cuMemcpyDtoH_v2_fn *)(uintptr_t)dlsym(h, "cuMemcpyDtoH_v2");
    cuda_drv.stream_sync = (cuStreamSynchronize_fn *)(uintptr_t)dlsym(h, "cuStreamSynchronize");
    cuda_drv.ok = init && cuda_drv.memcpy_dtoh && cuda_drv.stream_sync && init(0) == CUDA_SUCCESS;
    cuda_drv.is_capturing = (cuStreamIsCapturing_fn *)(uintptr_t)dlsym(h, "cuStreamIsCapturing");
    cuda_drv.ctx_current = (cuCtxGetCurrent_fn *)(uintptr_t)dlsym(h, "cuCtxGetCurrent");
    cuda_drv.module_load = (cuModuleLoadData_fn *)(uintptr_t)dlsym(h, "cuModuleLoadData");
    cuda_drv.module_function = (cuModuleGetFunction_fn *)(uintptr_t)dlsym(h, "cuModuleGetFunction");
    cuda_drv.launch = (cuLaunchKernel_fn *)(uintptr_t)dlsym(h, "cuLaunchKernel");
    cuda_drv.mem_alloc = (cuMemAlloc_v2_fn *)(uintptr_t)dlsym(h, "cuMemAlloc_v2");
    cuda_drv.memcpy_dtoh_async = (cuMemcpyDtoHAsync_v2_fn *)(uintptr_t)dlsym(h, "cuMemcpyDtoHAsync_v2");
    cuda_drv.host_alloc = (cuMemHostAlloc_fn *)(uintptr_t)dlsym(h, "cuMemHostAlloc");
    cuda_drv.host_free = (cuMemFreeHost_fn *)(uintptr_t)dlsym(h, "cuMemFreeHost");
    cuda_drv.event_create = (cuEventCreate_fn *)(uintptr_t)dlsym(h, "cuEventCreate");
    cuda_drv.event_record = (cuEventRecord_fn *)(uintptr_t)dlsym(h, "cuEventRecord");
    cuda_drv.event_query = (cuEventQuery_fn *)(uintptr_t)dlsym(h, "cuEventQuery");
    cuda_drv.event_sync = (cuEventSynchronize_fn *)(uintptr_t)dlsym(h, "cuEventSynchronize");
    cuda_drv.event_destroy = (cuEventDestroy_v2_fn *)(uintptr_t)dlsym(h, "cuEventDestroy_v2");
    const char *mode = core_getenv("DETSHIM_CUDA_DIGEST");
    cuda_drv.async = cuda_drv.ok && cuda_drv.memcpy_dtoh_async && cuda_drv.host_alloc && cuda_drv.host_free &&
                cuda_drv.event_create && cuda_drv.event_record && cuda_drv.event_query && cuda_drv.event_sync &&
                !(mode && strcmp(mode, "sync") == 0);
    if (!cuda_drv.ok)
        core_log(DS_LOG_INFO, "device digests unavailable: libcuda.so.1 lacks the driver calls "
                 "they need or cuInit failed");
}

const char *cuda_digest_method(void)
{
    return TRACE_DEVICE_DIGEST;
}

/* 1 if work queued on `stream` is being captured into a CUDA graph: then
 * nothing may wait for it, and no digest kernel may join the graph. */
int cuda_stream_capturing(CUstream stream)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    return cuda_drv.is_capturing && cuda_drv.is_capturing(stream, &st) == CUDA_SUCCESS &&
           st != CU_STREAM_CAPTURE_STATUS_NONE;
}

int cuda_read(CUstream stream, void *dst, const void *dptr, size_t n)
{
    pthread_once(&cuda_drv_once, cuda_drv_open);
    if (!cuda_drv.ok || cuda_stream_capturing(stream))
        return -1;
    if (n == 0)
        return 0;
    if (cuda_drv.stream_sync(stream) != CUDA_SUCCESS)
        return -1;
    return cuda_drv.memcpy_dtoh(dst, (CUdeviceptr)(uintptr_t)dptr, n) == CUDA_SUCCESS ? 0 : -1;
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

void cuda_thread_arm(void)
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
            cuda_thread_arm();
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
enum { CHUNK = 65536, MAX_CONTEXTS = 16, MAX_STREAMS = 64 };
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
pthread_mutex_t cuda_kernel_lock = PTHREAD_MUTEX_INITIALIZER;

static int kernels_load(struct kernels *k)
{
    CUmodule mod;
    return cuda_drv.module_load(&mod, cuda_digest_ptx) == CUDA_SUCCESS &&
                   cuda_drv.module_function(&k->sums, mod, "detshim_dk_block_sums") == CUDA_SUCCESS &&
                   cuda_drv.module_function(&k->scan, mod, "detshim_dk_scan") == CUDA_SUCCESS &&
                   cuda_drv.module_function(&k->gather, mod, "detshim_dk_gather") == CUDA_SUCCESS
               ? 0 : -1;
}

/* The scratch memory of `stream` in k's context, allocated at its first
 * digest; 0 when it cannot be (then the caller copies). Caller holds
 * cuda_kernel_lock. */
CUdeviceptr cuda_stream_scratch(struct kernels *k, CUstream stream)
{
    for (int i = 0; i < k->nstreams; i++)
        if (k->streams[i].stream == stream)
            return k->streams[i].scratch;
    CUdeviceptr p;
    if (k->nstreams == MAX_STREAMS || cuda_drv.mem_alloc(&p, SCRATCH_BYTES) != CUDA_SUCCESS)
        return 0;
    k->streams[k->nstreams].stream = stream;
    k->streams[k->nstreams].scratch = p;
    k->nstreams++;
    return p;
}

/* The kernels of the current context, loading them on first use; NULL
 * when there is no PTX, no current context, or they would not load (then
 * never tried again in that context). Caller holds cuda_kernel_lock. */
struct kernels *cuda_kernels_get(void)
{
    CUcontext ctx;
    if (!cuda_digest_ptx[0] || !cuda_drv.ctx_current || !cuda_drv.module_load || !cuda_drv.module_function ||
        !cuda_drv.launch || !cuda_drv.mem_alloc || !cuda_drv.memcpy_dtoh_async ||
        cuda_drv.ctx_current(&ctx) != CUDA_SUCCESS || !ctx)
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
    return cuda_drv.launch(f, grid, 1, 1, block, 1, 1, 0, stream, params, NULL) == CUDA_SUCCESS ? 0 : -1;
}

/* Queues the digest of l on `stream`: block sums chunk by chunk, each
 * scanned into the lanes' state in order (the first scan starting the
 * lanes, the last adding the tail and merging: two launches for up to
 * CHUNK blocks, 64 MiB), and a copy of the 16-byte result to host address
 * out (lo, hi). Nothing waits. Returns 0, or -1 (then the caller copies).
 * Caller holds cuda_kernel_lock. */
int cuda_kernel_enqueue(struct kernels *k, CUstream stream, struct dk_layout l, void *out)
{
    CUdeviceptr sums = cuda_stream_scratch(k, stream), state = sums + (CUdeviceptr)CHUNK * 64,
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
            rc = launch(k->sums, (unsigned)((n + 7) / 8), 256, stream, sum_args); /* a warp a block */
        rc = rc ? rc : launch(k->scan, 1, 8, stream, scan_args);
        first += n;
    } while (rc == 0 && first < blocks);
    if (rc == 0 && cuda_drv.memcpy_dtoh_async(out, result, 16, stream) != CUDA_SUCCESS)
        rc = -1;
    return rc;
}

/* Queues a packed copy of l's logical bytes (under KERNEL_MIN_BYTES) into
 * the stream's scratch memory and from there to host address out, for a
 * layout whose base only the device knows. Returns 0, or -1. Caller holds
 * cuda_kernel_lock. */
int cuda_gather_enqueue(struct kernels *k, CUstream stream, struct dk_layout l, void *out)
{
    assert(l.total < KERNEL_MIN_BYTES);
    CUdeviceptr packed = cuda_stream_scratch(k, stream);
    void *args[] = { &l, &packed };
    int rc = packed ? launch(k->gather, (unsigned)((l.total + 255) / 256), 256, stream, args) : -1;
    if (rc == 0 && cuda_drv.memcpy_dtoh_async(out, packed, l.total, stream) != CUDA_SUCCESS)
        rc = -1;
    return rc;
}

/* The kernels' layout of span s: digest_runs' runs. */
struct dk_layout cuda_layout_of(const struct cuda_span *s)
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
    pthread_mutex_lock(&cuda_kernel_lock);
    struct kernels *k = cuda_kernels_get();
    int rc = k ? cuda_kernel_enqueue(k, stream, l, out) : -1;
    if (rc == 0 && cuda_drv.stream_sync(stream) != CUDA_SUCCESS)
        rc = -1;
    pthread_mutex_unlock(&cuda_kernel_lock);
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
    pthread_once(&cuda_drv_once, cuda_drv_open);
    if (!cuda_drv.ok || cuda_stream_capturing(stream))
        return -1;
    struct dk_layout l = cuda_layout_of(s);
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
void cuda_log_sync_once(atomic_flag *once, const char *why)
{
    if (!atomic_flag_test_and_set(once))
        core_log(DS_LOG_INFO, "a device digest was taken synchronously (%s); "
                 "further ones for this reason are not logged", why);
}

/* thread_key's destructor: frees the exiting thread's staging buffer, and
 * its pool of jobs (devdigest_jobs.c). */
static void thread_exit(void *arg)
{
    (void)arg;
    free(stage);
    stage = NULL;
    stage_cap = 0;
    cuda_jobs_thread_exit();
}
