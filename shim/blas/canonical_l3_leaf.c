/* The diagonal-block kernels of the canonical trmm and trsm
 * (canonical_l3_tri.c is their driver): the part of each element's chain
 * that lies inside a block of at most CANON_LEAF_NB positions, on a tile
 * of CANON_LEAF_BYTES of lanes per position. The plain-C kernels of
 * canonical_l3_leaf.inc are built three times, for baseline x86-64 (fma()
 * from libm), for AVX2 + FMA and for AVX-512 (target attributes; the file
 * is built for baseline x86-64 like every other), and the table of the
 * canonical GEMM's instruction-set path is used (canon_isa(), so
 * DETSHIM_ISA reaches it too). Every build performs the same operations
 * in the same order on each lane, so they give the same bits.
 */
#include <math.h>
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

struct leaf_table {
    void (*solve[CANON_NTYPES])(const struct canon_leaf *L, void *t);
    void (*mul[CANON_NTYPES])(const struct canon_leaf *L, const void *t, void *o);
};

#define LEAF_SET(pre)                                                                        \
    static void pre##_s_solve_v(const struct canon_leaf *L, void *t) { pre##_s_solve(L, t); } \
    static void pre##_d_solve_v(const struct canon_leaf *L, void *t) { pre##_d_solve(L, t); } \
    static void pre##_c_solve_v(const struct canon_leaf *L, void *t) { pre##_s_csolve(L, t); } \
    static void pre##_z_solve_v(const struct canon_leaf *L, void *t) { pre##_d_csolve(L, t); } \
    static void pre##_s_mul_v(const struct canon_leaf *L, const void *t, void *o)             \
    {                                                                                         \
        pre##_s_mul(L, t, o);                                                                 \
    }                                                                                         \
    static void pre##_d_mul_v(const struct canon_leaf *L, const void *t, void *o)             \
    {                                                                                         \
        pre##_d_mul(L, t, o);                                                                 \
    }                                                                                         \
    static void pre##_c_mul_v(const struct canon_leaf *L, const void *t, void *o)             \
    {                                                                                         \
        pre##_s_cmul(L, t, o);                                                                \
    }                                                                                         \
    static void pre##_z_mul_v(const struct canon_leaf *L, const void *t, void *o)             \
    {                                                                                         \
        pre##_d_cmul(L, t, o);                                                                \
    }                                                                                         \
    static const struct leaf_table pre##_table = {                                            \
        {pre##_s_solve_v, pre##_d_solve_v, pre##_c_solve_v, pre##_z_solve_v},                 \
        {pre##_s_mul_v, pre##_d_mul_v, pre##_c_mul_v, pre##_z_mul_v},                         \
    };

/* Baseline x86-64. */
#define LEAF_FN
#define R float
#define FMA fmaf
#define FABS fabsf
#define LN(name) base_s_##name
#include "canonical_l3_leaf.inc"
#undef R
#undef FMA
#undef FABS
#undef LN
#define R double
#define FMA fma
#define FABS fabs
#define LN(name) base_d_##name
#include "canonical_l3_leaf.inc"
#undef R
#undef FMA
#undef FABS
#undef LN
#undef LEAF_FN
LEAF_SET(base)

/* AVX2 + FMA. */
#define LEAF_FN __attribute__((target("avx2,fma")))
#define R float
#define FMA fmaf
#define FABS fabsf
#define LN(name) avx2_s_##name
#include "canonical_l3_leaf.inc"
#undef R
#undef FMA
#undef FABS
#undef LN
#define R double
#define FMA fma
#define FABS fabs
#define LN(name) avx2_d_##name
#include "canonical_l3_leaf.inc"
#undef R
#undef FMA
#undef FABS
#undef LN
#undef LEAF_FN
LEAF_SET(avx2)

/* AVX-512. */
#define LEAF_FN __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")))
#define R float
#define FMA fmaf
#define FABS fabsf
#define LN(name) avx512_s_##name
#include "canonical_l3_leaf.inc"
#undef R
#undef FMA
#undef FABS
#undef LN
#define R double
#define FMA fma
#define FABS fabs
#define LN(name) avx512_d_##name
#include "canonical_l3_leaf.inc"
#undef R
#undef FMA
#undef FABS
#undef LN
#undef LEAF_FN
LEAF_SET(avx512)

/* The table of the GEMM family's path. */
static const struct leaf_table *table(void)
{
    const char *isa = canon_isa();
    return strcmp(isa, "avx512") == 0 ? &avx512_table
           : strcmp(isa, "avx2") == 0 ? &avx2_table
                                      : &base_table;
}

void canon_leaf_solve(const struct canon_leaf *L, void *t)
{
    table()->solve[L->t](L, t);
}

void canon_leaf_mul(const struct canon_leaf *L, const void *t, void *o)
{
    table()->mul[L->t](L, t, o);
}
