/* Device digests, copy-and-hash: a device operand is copied to the host
 * through the CUDA Driver API (libcuda.so.1, opened with dlopen, never
 * linked) and digested there by shim/trace/digest.c, over the same logical
 * elements in the same order, so its digest equals the host digest of the
 * same bytes by construction. The price: the call's stream is waited for
 * and the copy is synchronous, so a traced GPU program runs with the host
 * in lock-step with the device. Trace headers say so
 * (TRACE_FIELD_DEVICE_DIGEST). A digest kernel run on the device, on the
 * call's stream, is the planned replacement (issue 6).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detshim/core.h"
#include "detshim/cuda.h"
#include "detshim/digest.h"

static struct {
    cuMemcpyDtoH_v2_fn *memcpy_dtoh;
    cuStreamSynchronize_fn *stream_sync;
    int ok;
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
    if (!drv.ok)
        core_log(LOG_INFO, "device digests unavailable: libcuda.so.1 lacks the driver calls "
                 "they need or cuInit failed");
}

const char *cuda_digest_method(void)
{
    return TRACE_DEVICE_DIGEST;
}

int cuda_read(CUstream stream, void *dst, const void *dptr, size_t n)
{
    pthread_once(&drv_once, drv_open);
    if (!drv.ok)
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

int cuda_digest_matrix(CUstream stream, const void *dptr, int64_t len, int64_t lines, int64_t ld,
                       size_t elem, detshim_digest *d)
{
    *d = digest_bytes(NULL, 0);
    if (len <= 0 || lines <= 0)
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
