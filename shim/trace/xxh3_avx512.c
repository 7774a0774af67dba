/* XXH3-128 compiled for AVX-512 (the Makefile adds -mavx512f for this file
 * only); digest.c calls it only when core_cpu_has_avx512() says the CPU
 * and the OS run it. See xxh3_kernel.inc. */
#define XXH3_KERNEL(name) xxh3_avx512_##name
#include "xxh3_kernel.inc"
