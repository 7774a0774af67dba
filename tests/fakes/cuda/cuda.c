/* A fake CUDA driver (libcuda.so.1) for tests: device memory is host
 * memory, so a device-to-host copy is memcpy and every stream is always
 * idle. Modules are detshim's digest kernels: loading checks that the
 * image is PTX declaring them, and a launch runs the same kernel logic
 * (detshim/cuda_digest_kernel.h) on the host, one call per thread of the
 * grid, so the tests exercise the code the GPU runs. Streams are never
 * capturing unless FAKE_CUDA_CAPTURING=1. Only the calls
 * detshim's device digests and gpu_prog make.
 */
#include <stdlib.h>
#include <string.h>

#include "detshim/cuda_digest_kernel.h"
#include "fake.h"

enum { CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_INVALID_IMAGE = 200,
       CUDA_ERROR_NOT_FOUND = 500 };

static unsigned long long launches;

FAKE_EXPORT CUresult cuInit(unsigned int flags)
{
    return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream s)
{
    (void)s;
    return cuMemcpyDtoH_v2(dst, src, bytes);
}

FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
    void *m = malloc(bytes);
    *p = (CUdeviceptr)(uintptr_t)m;
    return m ? CUDA_SUCCESS : 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}

FAKE_EXPORT CUresult cuStreamSynchronize(CUstream stream)
{
    (void)stream;
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxSynchronize(void)
{
    return CUDA_SUCCESS;
}

/* Capturing when FAKE_CUDA_CAPTURING=1, as a stream in CUDA graph capture. */
FAKE_EXPORT CUresult cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus *status)
{
    (void)stream;
    const char *v = getenv("FAKE_CUDA_CAPTURING");
    *status = v && *v == '1' ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    static int the_context;
    *ctx = (CUcontext)(void *)&the_context;
    return CUDA_SUCCESS;
}

/* The kernels, as host functions of (arguments, thread index). */
static void run_init(void **a, dk_u64 t)
{
    if (t == 0)
        dk_init(*(dk_u64 **)a[0]);
}

static void run_sums(void **a, dk_u64 t)
{
    if (t < *(dk_u64 *)a[2])
        dk_block_sums(a[0], *(dk_u64 *)a[1], (dk_u64 *)(uintptr_t)*(CUdeviceptr *)a[3], t);
}

static void run_scan(void **a, dk_u64 t)
{
    if (t < 8)
        dk_scan((const dk_u64 *)(uintptr_t)*(CUdeviceptr *)a[0], *(dk_u64 *)a[1],
                (dk_u64 *)(uintptr_t)*(CUdeviceptr *)a[2], (unsigned)t);
}

static void run_final(void **a, dk_u64 t)
{
    if (t == 0)
        dk_final(a[0], (const dk_u64 *)(uintptr_t)*(CUdeviceptr *)a[1],
                 (dk_u64 *)(uintptr_t)*(CUdeviceptr *)a[2]);
}

static const struct kernel {
    const char *name;
    void (*run)(void **args, dk_u64 thread);
} kernels[] = {
    { "detshim_dk_init", run_init }, { "detshim_dk_block_sums", run_sums },
    { "detshim_dk_scan", run_scan }, { "detshim_dk_final", run_final },
};

FAKE_EXPORT CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
    const char *ptx = image;
    if (strncmp(ptx, "//", 2) != 0 || !strstr(ptx, ".entry detshim_dk_block_sums"))
        return CUDA_ERROR_INVALID_IMAGE;
    *mod = (CUmodule)(void *)kernels;
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule mod, const char *name)
{
    (void)mod;
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++)
        if (strcmp(kernels[i].name, name) == 0) {
            *f = (CUfunction)(void *)&kernels[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

/* Every thread of the grid in turn. The kernels' threads never depend on
 * one another within a launch, so any order is the GPU's result. */
FAKE_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                    unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                    CUstream stream, void **params, void **extra)
{
    (void)shared, (void)stream;
    if (gy != 1 || gz != 1 || by != 1 || bz != 1 || extra)
        return CUDA_ERROR_INVALID_VALUE;
    const struct kernel *k = (const struct kernel *)(void *)f;
    for (dk_u64 t = 0; t < (dk_u64)gx * bx; t++)
        k->run(params, t);
    launches++;
    return CUDA_SUCCESS;
}

/* For tests: how many kernels this process launched. */
FAKE_EXPORT unsigned long long fake_cuda_kernel_launches(void)
{
    return launches;
}
