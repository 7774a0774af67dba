/* XXH3-128 compiled for AVX2 (the Makefile adds -mavx2 for this file only);
 * digest.c calls it only when the CPU reports AVX2. See xxh3_kernel.inc. */
#define XXH3_KERNEL(name) xxh3_avx2_##name
#include "xxh3_kernel.inc"
