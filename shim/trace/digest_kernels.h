/* The XXH3-128 kernels behind digest.c, one per instruction set (built
 * from shim/trace/xxh3_kernel.inc), and the choice between them. Exposed so
 * tests can check that every kernel gives the same bits. */
#ifndef DETSHIM_DIGEST_KERNELS_H
#define DETSHIM_DIGEST_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include "detshim.h"

struct digest_kernel {
    detshim_digest (*oneshot)(const void *p, size_t len);
    void (*update)(void *xxh3_state, const void *p, size_t len);
    /* The lane sums of nblocks 1 KiB blocks at p, 8 per block (digest.h,
     * digest_split_sums). */
    void (*block_sums)(const void *p, size_t nblocks, uint64_t *sums);
    /* XXH3's accumulators through nblocks blocks, read at p (sums NULL)
     * or from their sums. */
    void (*chain)(uint64_t acc[8], const void *p, const uint64_t *sums, size_t nblocks);
};

detshim_digest xxh3_sse2_oneshot(const void *p, size_t len);
void xxh3_sse2_update(void *state, const void *p, size_t len);
void xxh3_sse2_block_sums(const void *p, size_t nblocks, uint64_t *sums);
void xxh3_sse2_chain(uint64_t acc[8], const void *p, const uint64_t *sums, size_t nblocks);
detshim_digest xxh3_avx2_oneshot(const void *p, size_t len);
void xxh3_avx2_update(void *state, const void *p, size_t len);
void xxh3_avx2_block_sums(const void *p, size_t nblocks, uint64_t *sums);
void xxh3_avx2_chain(uint64_t acc[8], const void *p, const uint64_t *sums, size_t nblocks);
detshim_digest xxh3_avx512_oneshot(const void *p, size_t len);
void xxh3_avx512_update(void *state, const void *p, size_t len);
void xxh3_avx512_block_sums(const void *p, size_t nblocks, uint64_t *sums);
void xxh3_avx512_chain(uint64_t acc[8], const void *p, const uint64_t *sums, size_t nblocks);

/* "avx512", "avx2" or "sse2"; the caller checks the CPU supports it. */
struct digest_kernel digest_kernel_for(const char *isa);

#endif
