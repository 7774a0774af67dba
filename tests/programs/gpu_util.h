/* Shared by the GPU test programs (gpu_prog.c, gpu_dlsym.c, ...): fixed
 * inputs, a hash of results, and stopping at the first failed call.
 */
#ifndef GPU_UTIL_H
#define GPU_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Stops the program, naming the call, when a vendor call fails. */
#define CHECK(call)                                                                        \
    do {                                                                                   \
        int st_ = (int)(call);                                                             \
        if (st_ != 0) {                                                                    \
            fprintf(stderr, "%s: %s failed: %d\n", __FILE__, #call, st_);                  \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static const uint64_t FNV0 = 0xcbf29ce484222325ull;

/* FNV-1a over n bytes, continuing from h (FNV0 to start). */
static inline uint64_t fnv(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* n floats in [-1, 1) from a fixed generator: the same inputs every run. */
static inline void fill(float *x, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
    }
}

#endif
