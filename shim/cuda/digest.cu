/* The device digest kernels: thin CUDA entry points over the shared logic
 * in shim/cuda/cuda_digest_kernel.h. Compiled by nvcc to PTX at
 * build time (when nvcc exists) and embedded in libdetshim as a string
 * (build/gen/digest_ptx.c); shim/cuda/devdigest.c loads it with
 * cuModuleLoadData and launches these on the call's stream. extern "C"
 * keeps the entry names unmangled for cuModuleGetFunction.
 */
#include "cuda/cuda_digest_kernel.h"

/* A warp per 1 KiB block: the sums of blocks first .. first + n - 1 into
 * sums[8 * (b - first) ...]. blockDim is a multiple of 32, so a warp is
 * past n whole or not at all, and every shuffle has all 32 threads. */
extern "C" __global__ void detshim_dk_block_sums(struct dk_layout l, dk_u64 first, dk_u64 n,
                                                 dk_u64 *sums)
{
    dk_u64 b = ((dk_u64)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    unsigned w = threadIdx.x % 32;
    if (b >= n)
        return;
    dk_u64 mul, data;
    dk_warp_part(&l, dk_base(&l), first + b, w, &mul, &data);
    /* Threads w, w^8, w^16, w^24 hold the same lane's terms. */
    mul += __shfl_xor_sync(0xffffffffu, mul, 8);
    mul += __shfl_xor_sync(0xffffffffu, mul, 16);
    data += __shfl_xor_sync(0xffffffffu, data, 8);
    data += __shfl_xor_sync(0xffffffffu, data, 16);
    /* Lane w's words go to lane w ^ 1: thread w takes thread w ^ 1's. */
    dk_u64 mine = __shfl_xor_sync(0xffffffffu, data, 1);
    if (w < 8)
        sums[8 * b + w] = mul + mine;
}

/* One chunk of blocks scanned into the lanes' state, eight threads: the
 * first chunk starts the lanes (dk_init_lane), and after the last one thread 0
 * adds the tail and merges the result, so a digest of up to CHUNK blocks
 * takes two launches (block sums, then this). `first` and `last` are the
 * same for every thread, so the barrier is reached by all or none. */
extern "C" __global__ void detshim_dk_scan(const dk_u64 *sums, dk_u64 n, dk_u64 *state,
                                           dk_u32 first, dk_u32 last, struct dk_layout l,
                                           dk_u64 *result)
{
    unsigned lane = threadIdx.x;
    if (lane < 8) {
        if (first)
            state[lane] = dk_init_lane(lane);
        dk_scan(sums, n, state, lane);
    }
    if (last) {
        __syncthreads();
        if (lane == 0)
            dk_final(&l, state, result);
    }
}

extern "C" __global__ void detshim_dk_gather(struct dk_layout l, dk_u8 *out)
{
    dk_u64 t = (dk_u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < l.total)
        dk_gather(&l, out, t);
}
