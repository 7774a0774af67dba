/* The XXH3-128 kernels behind digest.c, one per instruction set (built
 * from shim/trace/xxh3_kernel.inc), and the choice between them. Exposed so
 * tests can check that every kernel gives the same bits. */
#ifndef DETSHIM_DIGEST_KERNELS_H
#define DETSHIM_DIGEST_KERNELS_H

#include <stddef.h>
#include "detshim.h"

struct digest_kernel {
    detshim_digest (*oneshot)(const void *p, size_t len);
    void (*update)(void *xxh3_state, const void *p, size_t len);
};

detshim_digest xxh3_sse2_oneshot(const void *p, size_t len);
void xxh3_sse2_update(void *state, const void *p, size_t len);
detshim_digest xxh3_avx2_oneshot(const void *p, size_t len);
void xxh3_avx2_update(void *state, const void *p, size_t len);
detshim_digest xxh3_avx512_oneshot(const void *p, size_t len);
void xxh3_avx512_update(void *state, const void *p, size_t len);

/* "avx512", "avx2" or "sse2"; the caller checks the CPU supports it. */
struct digest_kernel digest_kernel_for(const char *isa);

#endif
