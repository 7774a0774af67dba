/* The device digest kernels: thin CUDA entry points over the shared logic
 * in include/detshim/cuda_digest_kernel.h. Compiled by nvcc to PTX at
 * build time (when nvcc exists) and embedded in libdetshim as a string
 * (build/gen/digest_ptx.c); shim/cuda/devdigest.c loads it with
 * cuModuleLoadData and launches these on the call's stream. extern "C"
 * keeps the entry names unmangled for cuModuleGetFunction.
 */
#include "detshim/cuda_digest_kernel.h"

extern "C" __global__ void detshim_dk_init(dk_u64 *state)
{
    if (threadIdx.x == 0)
        dk_init(state);
}

extern "C" __global__ void detshim_dk_block_sums(struct dk_layout l, dk_u64 first, dk_u64 n,
                                                 dk_u64 *sums)
{
    dk_u64 t = (dk_u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n)
        dk_block_sums(&l, first, sums, t);
}

extern "C" __global__ void detshim_dk_scan(const dk_u64 *sums, dk_u64 n, dk_u64 *state)
{
    if (threadIdx.x < 8)
        dk_scan(sums, n, state, threadIdx.x);
}

extern "C" __global__ void detshim_dk_final(struct dk_layout l, const dk_u64 *state,
                                            dk_u64 *result)
{
    if (threadIdx.x == 0)
        dk_final(&l, state, result);
}

extern "C" __global__ void detshim_dk_gather(struct dk_layout l, dk_u8 *out)
{
    dk_u64 t = (dk_u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < l.total)
        dk_gather(&l, out, t);
}
