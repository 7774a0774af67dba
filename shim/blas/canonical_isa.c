/* The one choice of instruction-set path for every canonical kernel
 * family (the GEMM's in canonical_gemm.c, the other routines' in
 * canonical_l1.c): which paths this build has, which the CPU can run, and
 * what a DETSHIM_ISA name means. Each family keeps its own table per path
 * and its own setter, so each can be tested alone.
 */
#include <string.h>

#include "blas/canonical.h"

static int cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

int canon_isa_best(void)
{
    return cpu_has_avx2() ? CANON_ISA_AVX2 : CANON_ISA_SCALAR;
}

int canon_isa_parse(const char *isa)
{
    if (!isa || strcmp(isa, "auto") == 0)
        return canon_isa_best();
    if (strcmp(isa, "scalar") == 0)
        return CANON_ISA_SCALAR;
    if (strcmp(isa, "avx2") == 0 && cpu_has_avx2())
        return CANON_ISA_AVX2;
    return -1; /* unknown, not in this CPU, or "avx512": no kernel built */
}
