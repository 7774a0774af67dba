/* XXH3-128 (default secret, seed 0) for inputs longer than 240 bytes,
 * split so a GPU can compute it: the device digest kernel's logic, shared
 * by shim/cuda/digest.cu (compiled to PTX by nvcc and embedded in the
 * shim) and by the fake driver in tests/fakes/cuda (compiled as C, run on
 * the host), so the tests without a GPU check the very code the GPU runs
 * against the host digest (shim/trace/digest.c).
 *
 * XXH3's long hash keeps 8 accumulator lanes. Each 1 KiB block adds to
 * them a sum that depends only on the block's bytes (16 stripes of 64),
 * then scrambles every lane on its own: acc = scramble(acc + sum(block)).
 * A block's sum is a sum, modulo 2^64, of one term per 8-byte word, so
 * it may be added up in any order: the sums of all blocks are computed
 * in parallel, a warp of 32 threads per block, each thread four words
 * (dk_warp_part; the warp adds the parts up), and each lane then runs
 * through the blocks in order (dk_scan, eight threads, the first chunk
 * starting from dk_init_lane);
 * dk_final adds the partial last block and the last stripe and merges the
 * lanes into the 128-bit result. The input is
 * the logical bytes of a strided array (struct dk_layout): contiguous runs
 * over up to DK_MAX_DIMS outer dims, a matrix being runs ld apart. Where
 * the host cannot address the bytes before they are read (an entry of a
 * pointer array in device memory), dk_gather copies them packed, so the
 * host digests them as copy-and-hash does.
 */
#ifndef DETSHIM_CUDA_DIGEST_KERNEL_H
#define DETSHIM_CUDA_DIGEST_KERNEL_H

#include <stdint.h>
/* DK_UNROLL: loops unrolled on the device, so that arrays indexed by
 * their counter (the lanes, a layout's dims) stay in registers and kernel
 * parameters instead of local memory. */
#ifdef __CUDACC__
#define DK_FN static __device__ __forceinline__
#define DK_CONST static __device__ __constant__
#define DK_UNROLL _Pragma("unroll")
typedef unsigned long long dk_u64;
typedef unsigned int dk_u32;
typedef unsigned char dk_u8;
#else
#define DK_FN static inline
#define DK_CONST static const
#define DK_UNROLL
typedef uint64_t dk_u64;
typedef uint32_t dk_u32;
typedef uint8_t dk_u8;
#endif

#define DK_BLOCK_BYTES 1024u  /* 16 stripes of 64 bytes */
#define DK_MIN_BYTES 241u     /* shorter inputs take XXH3's other paths */

#define DK_MAX_DIMS 8

/* Where the logical bytes are: `total` bytes in runs of run_bytes
 * contiguous bytes; run r is at base + sum over the outer dims k of
 * i_k * stride[k], its index r split as (i_0, ..., i_{ndims-1}) over
 * count[0..ndims) with the last varying fastest; byte p is byte
 * p % run_bytes of run p / run_bytes. Strides are in bytes, any value
 * (0 for a broadcast dim). With `indirect`, base is instead the device
 * address of the 64-bit pointer that holds it (an entry of a pointer
 * array), read on the device. Passed to the kernels by value. */
struct dk_layout {
    dk_u64 base, run_bytes, total;
    dk_u64 count[DK_MAX_DIMS], stride[DK_MAX_DIMS];
    dk_u32 ndims, indirect;
};

DK_CONST dk_u8 dk_secret[192] = {
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
    0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
    0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
    0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
};

#define DK_PRIME32_1 0x9E3779B1ull
#define DK_PRIME32_2 0x85EBCA77ull
#define DK_PRIME32_3 0xC2B2AE3Dull
#define DK_PRIME64_1 0x9E3779B185EBCA87ull
#define DK_PRIME64_2 0xC2B2AE3D27D4EB4Full
#define DK_PRIME64_3 0x165667B19E3779F9ull
#define DK_PRIME64_4 0x85EBCA77C2B2AE63ull
#define DK_PRIME64_5 0x27D4EB2F165667C5ull

/* Little-endian 64 bits at secret offset o. */
DK_FN dk_u64 dk_secret64(unsigned o)
{
    dk_u64 v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | dk_secret[o + (unsigned)i];
    return v;
}

/* The address of l's first logical byte: base, or, indirect, the
 * pointer at base, read on the device. The functions below take it. */
DK_FN dk_u64 dk_base(const struct dk_layout *l)
{
    return l->indirect ? *(const dk_u64 *)(uintptr_t)l->base : l->base;
}

/* The address of logical byte p, the first being at base. The outermost
 * dim takes what is left of the run index, so a matrix costs one
 * division. */
DK_FN dk_u64 dk_addr(const struct dk_layout *l, dk_u64 base, dk_u64 p)
{
    dk_u64 run = p / l->run_bytes, addr = base + p % l->run_bytes;
    DK_UNROLL
    for (dk_u32 k = DK_MAX_DIMS - 1; k > 0; k--)
        if (k < l->ndims) {
            addr += (run % l->count[k]) * l->stride[k];
            run /= l->count[k];
        }
    return addr + run * l->stride[0];
}

/* Logical bytes p..p+7, little-endian. Whole aligned words inside a run
 * are read at once (two 4-byte words where only 4 bytes aligned: FP32
 * views); anything else byte by byte. A layout of one run (a contiguous
 * operand, the usual case) needs no division. */
DK_FN dk_u64 dk_read64(const struct dk_layout *l, dk_u64 base, dk_u64 p)
{
    int one_run = l->run_bytes >= l->total;
    dk_u64 addr = one_run ? base + p : dk_addr(l, base, p);
    if (one_run || p % l->run_bytes + 8 <= l->run_bytes) {
        if (addr % 8 == 0)
            return *(const dk_u64 *)(uintptr_t)addr;
        if (addr % 4 == 0)
            return (dk_u64)((const dk_u32 *)(uintptr_t)addr)[0] |
                   (dk_u64)((const dk_u32 *)(uintptr_t)addr)[1] << 32;
    }
    dk_u64 v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | *(const dk_u8 *)(uintptr_t)dk_addr(l, base, p + (dk_u64)i);
    return v;
}

/* Thread t: logical byte t (t < total) into out[t], packed. */
DK_FN void dk_gather(const struct dk_layout *l, dk_u8 *out, dk_u64 t)
{
    out[t] = *(const dk_u8 *)(uintptr_t)dk_addr(l, dk_base(l), t);
}

/* XXH3's accumulate_512: one 64-byte stripe at logical offset p, with the
 * secret from offset s. */
DK_FN void dk_stripe(dk_u64 acc[8], const struct dk_layout *l, dk_u64 base, dk_u64 p,
                     unsigned s)
{
    DK_UNROLL
    for (unsigned lane = 0; lane < 8; lane++) {
        dk_u64 data = dk_read64(l, base, p + 8 * lane);
        dk_u64 key = data ^ dk_secret64(s + 8 * lane);
        acc[lane ^ 1] += data;
        acc[lane] += (key & 0xFFFFFFFFull) * (key >> 32);
    }
}

/* Lane `lane` of the initial state, so each scanning thread can start
 * its own lane; a switch, so that no array lands in local memory. */
DK_FN dk_u64 dk_init_lane(unsigned lane)
{
    switch (lane) {
    case 0: return DK_PRIME32_3;
    case 1: return DK_PRIME64_1;
    case 2: return DK_PRIME64_2;
    case 3: return DK_PRIME64_3;
    case 4: return DK_PRIME64_4;
    case 5: return DK_PRIME32_2;
    case 6: return DK_PRIME64_5;
    default: return DK_PRIME32_1;
    }
}

/* Full 1 KiB blocks before the last byte: the ones that get scrambled. */
DK_FN dk_u64 dk_full_blocks(dk_u64 total)
{
    return (total - 1) / DK_BLOCK_BYTES;
}

/* Thread w (0..31) of the warp that sums block `block`: its words w,
 * w+32, w+64 and w+96, all at lane w % 8 of their stripes. *mul gets
 * their multiply terms, which go to lane w % 8, *data the words
 * themselves, which go to lane (w % 8) ^ 1 (dk_stripe). Over the 32
 * threads these add up to the block's sum: lane L's multiply terms and
 * lane L ^ 1's words (XXH3's accumulate over the block's 16 stripes). */
DK_FN void dk_warp_part(const struct dk_layout *l, dk_u64 base, dk_u64 block, unsigned w,
                        dk_u64 *mul, dk_u64 *data)
{
    dk_u64 m = 0, d = 0, p = block * DK_BLOCK_BYTES;
    DK_UNROLL
    for (unsigned k = 0; k < 4; k++) {
        unsigned word = w + 32 * k; /* stripe word / 8, lane word % 8 */
        dk_u64 v = dk_read64(l, base, p + 8 * word);
        dk_u64 key = v ^ dk_secret64(8 * (word / 8 + word % 8));
        d += v;
        m += (key & 0xFFFFFFFFull) * (key >> 32);
    }
    *mul = m;
    *data = d;
}

/* Lane `lane`: state = scramble(state + sum) for n block sums in order.
 * The loads do not wait on the chain, so the device runs them ahead. */
DK_FN void dk_scan(const dk_u64 *sums, dk_u64 n, dk_u64 *state, unsigned lane)
{
    dk_u64 acc = state[lane], key = dk_secret64(192 - 64 + 8 * lane);
#ifdef __CUDACC__
#pragma unroll 16
#endif
    for (dk_u64 b = 0; b < n; b++) {
        acc += sums[8 * b + lane];
        acc ^= acc >> 47;
        acc ^= key;
        acc *= DK_PRIME32_1;
    }
    state[lane] = acc;
}

DK_FN dk_u64 dk_mul128_fold64(dk_u64 a, dk_u64 b)
{
#ifdef __CUDACC__
    return (a * b) ^ __umul64hi(a, b);
#else
    unsigned __int128 m = (unsigned __int128)a * b;
    return (dk_u64)m ^ (dk_u64)(m >> 64);
#endif
}

DK_FN dk_u64 dk_merge(const dk_u64 acc[8], unsigned s, dk_u64 start)
{
    dk_u64 h = start;
    for (unsigned i = 0; i < 4; i++)
        h += dk_mul128_fold64(acc[2 * i] ^ dk_secret64(s + 16 * i),
                              acc[2 * i + 1] ^ dk_secret64(s + 16 * i + 8));
    h ^= h >> 37;
    h *= 0x165667919E3779F9ull;
    return h ^ (h >> 32);
}

/* After every full block is scanned into state: the partial last block,
 * the last stripe, and the merge. result[0] = low 64 bits, [1] = high. */
DK_FN void dk_final(const struct dk_layout *l, const dk_u64 *state, dk_u64 *result)
{
    dk_u64 acc[8], base = dk_base(l);
    for (unsigned i = 0; i < 8; i++)
        acc[i] = state[i];
    dk_u64 done = dk_full_blocks(l->total) * DK_BLOCK_BYTES;
    dk_u64 stripes = (l->total - 1 - done) / 64;
    for (dk_u64 s = 0; s < stripes; s++)
        dk_stripe(acc, l, base, done + 64 * s, (unsigned)(8 * s));
    dk_stripe(acc, l, base, l->total - 64, 192 - 64 - 7);
    result[0] = dk_merge(acc, 11, l->total * DK_PRIME64_1);
    result[1] = dk_merge(acc, 192 - 64 - 11, ~(l->total * DK_PRIME64_2));
}

#endif
