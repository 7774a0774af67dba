/* XXH3-128 for every x86-64 CPU (SSE2); see xxh3_kernel.inc. */
#define XXH3_KERNEL(name) xxh3_sse2_##name
#include "xxh3_kernel.inc"
