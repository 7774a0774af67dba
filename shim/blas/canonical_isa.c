/* The one choice of instruction-set path for every canonical kernel
 * family (the GEMM's in canonical_gemm.c, the other routines' in
 * canonical_l1.c): which paths this build has, which the CPU can run, and
 * what a DETSHIM_ISA name means. Each family keeps its own table per path
 * and its own setter, so each can be tested alone.
 *
 * AVX-512 needs the instructions and an OS that saves the zmm state
 * (core_cpu_has_avx512 checks both). The automatic choice is per family,
 * by measurement (docs/benchmarks.md): every path gives the same bits, so
 * it is only a matter of speed.
 */
#include <string.h>

#include "blas/canonical.h"
#include "core/core.h"

static int cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

int canon_cpu_has_avx512(void)
{
    return core_cpu_has_avx512();
}

int canon_isa_best(void)
{
    return canon_cpu_has_avx512() ? CANON_ISA_AVX512
           : cpu_has_avx2()       ? CANON_ISA_AVX2
                                  : CANON_ISA_SCALAR;
}

int canon_isa_auto(enum canon_isa_family family)
{
    /* Measured on AMD EPYC (Zen 5, docs/benchmarks.md): AVX-512 is the
     * faster GEMM by 1.2-2.5x and as fast or faster for the level-1/2
     * loops, so both families take the best path; the one loop that
     * measured slower (ddot) is kept from AVX2 inside the automatic
     * AVX-512 table (canonical_blas_avx512.c). A family that measured
     * slower as a whole would return AVX2 here. */
    (void)family;
    return canon_isa_best();
}

int canon_isa_parse(const char *isa, enum canon_isa_family family)
{
    if (!isa || strcmp(isa, "auto") == 0)
        return canon_isa_auto(family);
    if (strcmp(isa, "scalar") == 0)
        return CANON_ISA_SCALAR;
    if (strcmp(isa, "avx2") == 0 && cpu_has_avx2())
        return CANON_ISA_AVX2;
    if (strcmp(isa, "avx512") == 0 && canon_cpu_has_avx512())
        return CANON_ISA_AVX512;
    return -1; /* unknown, or not in this CPU */
}
