/* SHA-256 on the CPU's SHA extensions, for chain.c's hot path. Every
 * function but sha256_fast_available may be called only when it returned 1.
 */
#ifndef DETSHIM_SHA256_H
#define DETSHIM_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256_ctx {
    uint32_t state[8];
    uint64_t total; /* bytes hashed */
    size_t fill;    /* bytes waiting in block */
    uint8_t block[64];
};

/* 1 if this CPU has SHA-NI (and SSSE3, SSE4.1), else 0. Thread-safe. */
int sha256_fast_available(void);
void sha256_init(struct sha256_ctx *c);
void sha256_update(struct sha256_ctx *c, const void *data, size_t len);
/* Writes the digest; c must be initialised again before reuse. */
void sha256_final(struct sha256_ctx *c, uint8_t out[32]);

#endif
