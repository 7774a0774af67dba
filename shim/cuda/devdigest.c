/* Device digests through the CUDA Driver API (libcuda.so.1, opened with
 * dlopen, never linked). Operands of 4 KiB or more are digested on the
 * device by the embedded PTX kernels (shim/cuda/digest.cu, the logic in
 * detshim/cuda_digest_kernel.h), launched on the call's stream; only the
 * 16-byte result comes back. Smaller operands, builds without nvcc, and
 * contexts where the module does not load are digested by copy-and-hash:
 * the logical elements are copied to the host and digested there by
 * shim/trace/digest.c. Both give the host digest of the same bytes. Either
 * way the host waits for the call's stream before the record is written:
 * the trace writer has no deferred records, so digests are not yet
 * collected asynchronously (issue 6). Trace headers say which method
 * (TRACE_FIELD_DEVICE_DIGEST). A stream being captured into a CUDA graph
 * is never waited for nor launched on: its calls' device operands are
 * recorded as not digested.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detshim/core.h"
#include "detshim/cuda.h"
#include "detshim/cuda_digest_kernel.h"
#include "detshim/digest.h"

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
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

/* The driver is already loaded in any process that reached cuBLAS; the
 * dlopen only takes a reference. cuInit is idempotent. */
static void drv_open(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY);
    if (!h) {
        core_log(LOG_INFO, "device digests unavailable: cannot load libcuda.so.1 (%s)", dlerror());
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
    if (!drv.ok)
        core_log(LOG_INFO, "device digests unavailable: libcuda.so.1 lacks the driver calls "
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

/* A per-thread staging buffer, grown as needed and kept: operands of one
 * size recur call after call. */
static _Thread_local unsigned char *stage;
static _Thread_local size_t stage_cap;

static unsigned char *stage_get(size_t n)
{
    if (n > stage_cap) {
        unsigned char *p = realloc(stage, n);
        if (!p)
            return NULL;
        stage = p;
        stage_cap = n;
    }
    return stage;
}

/* The kernels and their scratch memory in one context: block sums for a
 * chunk of CHUNK blocks, the 8 lanes' state, the 16-byte result. Made at
 * the first kernel digest in the context and kept for the process. */
enum { CHUNK = 65536, MAX_CONTEXTS = 16, KERNEL_MIN_BYTES = 4096 };
struct kernels {
    CUcontext ctx;
    int ok;
    CUfunction init, sums, scan, final;
    CUdeviceptr scratch; /* CHUNK * 64 bytes of sums, then state, then result */
};
static struct kernels contexts[MAX_CONTEXTS];
static int ncontexts;
static pthread_mutex_t kernel_lock = PTHREAD_MUTEX_INITIALIZER;

static int kernels_load(struct kernels *k)
{
    CUmodule mod;
    return drv.module_load(&mod, cuda_digest_ptx) == CUDA_SUCCESS &&
                   drv.module_function(&k->init, mod, "detshim_dk_init") == CUDA_SUCCESS &&
                   drv.module_function(&k->sums, mod, "detshim_dk_block_sums") == CUDA_SUCCESS &&
                   drv.module_function(&k->scan, mod, "detshim_dk_scan") == CUDA_SUCCESS &&
                   drv.module_function(&k->final, mod, "detshim_dk_final") == CUDA_SUCCESS &&
                   drv.mem_alloc(&k->scratch, (size_t)CHUNK * 64 + 64 + 16) == CUDA_SUCCESS
               ? 0 : -1;
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
        core_log(LOG_INFO, "device digest kernels do not load in this context; "
                 "digesting device operands by copy-and-hash");
    return k->ok ? k : NULL;
}

static int launch(CUfunction f, unsigned grid, unsigned block, CUstream stream, void **params)
{
    return drv.launch(f, grid, 1, 1, block, 1, 1, 0, stream, params, NULL) == CUDA_SUCCESS ? 0 : -1;
}

/* The digest on the device: block sums chunk by chunk, each scanned into
 * the lanes' state in order, then the tail and the merge, all on
 * `stream`. Returns 0, or -1 (nothing usable: the caller copies). */
static int kernel_digest(CUstream stream, struct dk_layout l, detshim_digest *d)
{
    pthread_mutex_lock(&kernel_lock);
    struct kernels *k = kernels_get();
    int rc = k ? 0 : -1;
    CUdeviceptr sums = k ? k->scratch : 0, state = sums + (CUdeviceptr)CHUNK * 64,
                result = state + 64;
    void *init_args[] = { &state };
    rc = rc ? rc : launch(k->init, 1, 1, stream, init_args);
    dk_u64 blocks = dk_full_blocks(l.total);
    for (dk_u64 first = 0; rc == 0 && first < blocks; first += CHUNK) {
        dk_u64 n = blocks - first < CHUNK ? blocks - first : CHUNK;
        void *sum_args[] = { &l, &first, &n, &sums };
        void *scan_args[] = { &sums, &n, &state };
        rc = launch(k->sums, (unsigned)((n + 255) / 256), 256, stream, sum_args);
        rc = rc ? rc : launch(k->scan, 1, 8, stream, scan_args);
    }
    void *final_args[] = { &l, &state, &result };
    rc = rc ? rc : launch(k->final, 1, 1, stream, final_args);
    dk_u64 out[2];
    if (rc == 0 && (drv.memcpy_dtoh_async(out, result, sizeof out, stream) != CUDA_SUCCESS ||
                    drv.stream_sync(stream) != CUDA_SUCCESS))
        rc = -1;
    pthread_mutex_unlock(&kernel_lock);
    if (rc == 0) {
        d->lo = out[0];
        d->hi = out[1];
    }
    return rc;
}

int cuda_digest_matrix(CUstream stream, const void *dptr, int64_t len, int64_t lines, int64_t ld,
                       size_t elem, detshim_digest *d)
{
    *d = digest_bytes(NULL, 0);
    if (len <= 0 || lines <= 0)
        return 0;
    pthread_once(&drv_once, drv_open);
    if (!drv.ok || capturing(stream))
        return -1;
    struct dk_layout l = { (dk_u64)(uintptr_t)dptr, (dk_u64)len * elem, (dk_u64)ld * elem,
                           (dk_u64)len * (dk_u64)lines * elem };
    if (l.total >= KERNEL_MIN_BYTES && kernel_digest(stream, l, d) == 0)
        return 0;
    /* The span from the first element to the last: padding between
     * columns is copied but never digested. */
    size_t span = ((size_t)(lines - 1) * (size_t)ld + (size_t)len) * elem;
    unsigned char *host = stage_get(span);
    if (!host || cuda_read(stream, host, dptr, span) != 0)
        return -1;
    *d = digest_matrix(host, len, lines, ld, elem);
    return 0;
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
