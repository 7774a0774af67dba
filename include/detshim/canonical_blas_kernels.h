/* The per-ISA inner loops of the canonical level-1/2/3 BLAS (the drivers
 * in shim/blas/canonical_l1.c, l2.c and l3.c check arguments, map layouts,
 * walk strides and apply alpha/beta; these do the long loops). One table
 * per instruction set: shim/blas/canonical_blas_scalar.c (plain C with
 * fma()) and canonical_blas_avx2.c (the same C built for AVX2 + FMA, with
 * hand-written vector loops for the hot real kernels). Every entry does
 * exactly the operations of the contract in detshim/canonical_blas.h, so
 * the tables are interchangeable bit for bit.
 *
 * Conventions: vectors are passed as a pointer to logical element 0 and a
 * signed step (element i at p + i*inc, any sign); complex arrays are
 * interleaved {re, im} of the base type and steps count complex elements.
 */
#ifndef DETSHIM_CANONICAL_BLAS_KERNELS_H
#define DETSHIM_CANONICAL_BLAS_KERNELS_H

#include <stdint.h>

/* The lane count of every LANES reduction, for every type and path. */
#define CANON_LANES 16

/* Element types; a table holds one set of kernels per type. */
enum canon_blas_type { CANON_BLAS_S, CANON_BLAS_D, CANON_BLAS_C, CANON_BLAS_Z,
                       CANON_BLAS_NTYPES };

/* Flags of the sequential dot: conjugate u, conjugate v (complex only),
 * negate u (after any conjugation). */
#define CANON_CONJ_U 1
#define CANON_CONJ_V 2
#define CANON_NEG_U 4

/* One type's kernels. Pointers are to that type's elements (complex: to
 * {re, im} pairs of the base type); scalars are passed by pointer to one
 * element. `conj` conjugates the matrix or x elements (ignored for real
 * types). Entries marked "real" are NULL for complex types: the drivers
 * run them on the 2n reals of a contiguous complex vector. */
struct canon_blas_kern {
    /* LANES accumulation over n contiguous elements (conj: of x): element
     * e of the call goes to lane e mod 16 (the driver starts every call at
     * a multiple of 16), acc holds the 16 running lane sums (complex: lane
     * l at acc[l] as a pair). No tree; the driver adds the lanes. */
    void (*dot)(int64_t n, const void *x, const void *y, int conj, void *acc);
    /* Real: LANES update s = s + |x_e|. */
    void (*asum)(int64_t n, const void *x, void *acc);
    /* Real: LANES update s = fma(t, t, s), t = (x_e * scale[0]) * scale[1]. */
    void (*sumsq)(int64_t n, const void *x, const void *scale, void *acc);
    /* Real: *m = the largest |x_e| that is not NaN, +0 if none. */
    void (*amax)(int64_t n, const void *x, void *m);

    /* y_i = CMAC(y_i, alpha, x_i) for i = 0 .. n-1 in this order. */
    void (*axpy)(int64_t n, const void *alpha, const void *x, int64_t incx, void *y,
                 int64_t incy);
    /* x_i = CMUL(alpha, x_i). */
    void (*scal)(int64_t n, const void *alpha, void *x, int64_t incx);

    /* Column sweep: for j = 0 .. n-1, for every i < m:
     * s_i = CMAC(s_i, A_ij, x_j) with A_ij = a[i + j*lda]; s is m
     * contiguous sums, carried in and out. */
    void (*gemv_n)(int64_t m, int64_t n, const void *a, int64_t lda, int conj, const void *x,
                   int64_t incx, void *s);
    /* Column dots: for every j < n, for i = 0 .. m-1:
     * s_j = CMAC(s_j, A_ij, x_i); s is n sums, carried in and out. */
    void (*gemv_t)(int64_t m, int64_t n, const void *a, int64_t lda, int conj, const void *x,
                   int64_t incx, void *s);
    /* One column of a rank-1 update: a_i = CMAC(a_i, x_i, *t) (conj: of
     * x_i), i = 0 .. m-1, a contiguous. */
    void (*ger_col)(int64_t m, const void *x, int64_t incx, int conj, const void *t, void *a);
    /* *s = CMAC(*s, u_p, v_p) for p = 0 .. n-1 in order (flags CANON_*). */
    void (*dot_seq)(int64_t n, const void *u, int64_t incu, const void *v, int64_t incv,
                    int flags, void *s);
};

struct canon_blas_isa {
    const char *name;
    struct canon_blas_kern t[CANON_BLAS_NTYPES];
};

extern const struct canon_blas_isa canon_blas_scalar_kernels;
extern const struct canon_blas_isa canon_blas_avx2_kernels;

/* The table in use (canonical_l1.c), chosen by canon_blas_set_isa. */
const struct canon_blas_isa *canon_blas_kernels(void);

#endif
