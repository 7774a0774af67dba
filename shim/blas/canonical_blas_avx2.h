/* The complex-type loops of the AVX2 + FMA canonical BLAS path
 * (canonical_blas_avx2_complex.c), for the kernel table in
 * canonical_blas_avx2.c. Each has the contract of its entry in struct
 * canon_blas_kern (shim/blas/canonical_kernels.h); call them only
 * where the CPU has AVX2 and FMA.
 */
#ifndef DETSHIM_CANONICAL_BLAS_AVX2_H
#define DETSHIM_CANONICAL_BLAS_AVX2_H

#include <stdint.h>

void canon_avx2_c_dot(int64_t n, const void *xv, const void *yv, int conj, void *accv);
void canon_avx2_z_dot(int64_t n, const void *xv, const void *yv, int conj, void *accv);
void canon_avx2_c_gemv_n(int64_t m, int64_t n, const void *av, int64_t lda, int conj,
                         const void *xv, int64_t incx, void *sv);
void canon_avx2_z_gemv_n(int64_t m, int64_t n, const void *av, int64_t lda, int conj,
                         const void *xv, int64_t incx, void *sv);
void canon_avx2_c_gemv_t(int64_t m, int64_t n, const void *av, int64_t lda, int conj,
                         const void *xv, int64_t incx, void *sv);
void canon_avx2_z_gemv_t(int64_t m, int64_t n, const void *av, int64_t lda, int conj,
                         const void *xv, int64_t incx, void *sv);

#endif
