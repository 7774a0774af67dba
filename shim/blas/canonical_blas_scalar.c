/* The scalar path of the canonical level-1/2/3 BLAS: the plain-C kernels
 * of canonical_blas_generic.inc built for baseline x86-64, fma() from libm
 * (the hardware instruction where the CPU has one, glibc's exact software
 * fma elsewhere). The reference every other path must equal bit for bit.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "blas/canonical_kernels.h"

#define PREFIX scalar
#include "canonical_blas_types.inc"

#define REAL_KERNELS(p)                                                                            \
    {                                                                                              \
        .dot = p##dot, .dot_cols = p##dot_cols, .asum = p##asum, .sumsq = p##sumsq,                \
        .amax = p##amax, .axpy = p##axpy, .scal = p##scal, .gemv_n = p##gemv_n,                    \
        .gemv_t = p##gemv_t, .ger_col = p##ger_col, .dot_seq = p##dot_seq,                         \
    }
#define COMPLEX_KERNELS(p)                                                                         \
    {                                                                                              \
        .dot = p##dot, .dot_cols = p##dot_cols, .axpy = p##axpy, .scal = p##scal,                  \
        .gemv_n = p##gemv_n, .gemv_t = p##gemv_t, .ger_col = p##ger_col, .dot_seq = p##dot_seq,    \
    }

const struct canon_blas_isa canon_blas_scalar_kernels = {
    .name = "scalar",
    .t = {
        [CANON_S] = REAL_KERNELS(scalar_s_),
        [CANON_D] = REAL_KERNELS(scalar_d_),
        [CANON_C] = COMPLEX_KERNELS(scalar_c_),
        [CANON_Z] = COMPLEX_KERNELS(scalar_z_),
    },
};
