/* A fake CUDA driver (libcuda.so.1) for tests: device memory is host
 * memory, so a device-to-host copy is memcpy and every stream is always
 * idle. Only the calls detshim's device digests and gpu_prog make.
 */
#include <string.h>

#include "fake.h"

FAKE_EXPORT CUresult cuInit(unsigned int flags)
{
    return flags == 0 ? CUDA_SUCCESS : 1; /* CUDA_ERROR_INVALID_VALUE */
}

FAKE_EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return CUDA_SUCCESS;
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
