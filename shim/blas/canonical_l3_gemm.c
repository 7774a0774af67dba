/* Level-3 routines on the canonical GEMM core (canonical_gemm.c): syrk,
 * syr2k, her2k and symm, whose every output element is one or two GEMM
 * sums, run as GEMM calls on blocks, so they get the GEMM's register
 * tiles, cache blocking, ISA paths and threads, and its bits. The
 * contract of each (shim/blas/canonical.h) is stated so that this is
 * exact:
 *   - syrk: C_ij is the GEMM of op(A) and op(A)^T on the uplo triangle:
 *     the same products in the same order, the same AB step.
 *   - syr2k / her2k: two GEMM updates in turn, the second with beta = 1.
 *   - symm: the GEMM of the full symmetric A (copied from its stored
 *     triangle, a block of rows or columns at a time) and B.
 * Off-diagonal blocks of a triangle are GEMMs straight into C; a diagonal
 * block is computed in a copy of its triangle (the other triangle zero,
 * so C's other triangle is neither read nor written) and copied back.
 * Each function returns 0, or -2 when its workspace cannot be allocated
 * (nothing written); the caller then runs its sequential kernel, which
 * gives the same bits.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* Columns of a diagonal block, and rows (or columns) of A copied at a
 * time by symm. */
#define DIAG_NB 64
#define SYMM_NB 256

static atomic_int use_gemm = 1;

void canon_l3_use_gemm(int on)
{
    atomic_store(&use_gemm, on != 0);
}

int canon_l3_gemm_on(void)
{
    return atomic_load(&use_gemm);
}

/* C = alpha*op(A)*op(B) + beta*C, column-major, on any type. */
static int gemm(enum canon_type t, char ta, char tb, int64_t m, int64_t n, int64_t k,
                const void *alpha, const void *a, int64_t lda, const void *b, int64_t ldb,
                const void *beta, void *c, int64_t ldc)
{
    switch (t) {
    case CANON_S:
        return canon_sgemm('C', ta, tb, m, n, k, *(const float *)alpha, a, lda, b, ldb,
                           *(const float *)beta, c, ldc);
    case CANON_D:
        return canon_dgemm('C', ta, tb, m, n, k, *(const double *)alpha, a, lda, b, ldb,
                           *(const double *)beta, c, ldc);
    case CANON_C: return canon_cgemm('C', ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    default: return canon_zgemm('C', ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
}

static void *at(const void *x, int64_t i, size_t size)
{
    return (void *)canon_blas_at(x, i, size);
}

/* Zeroes the imaginary part of the diagonal of an n x n block (her2k). */
static void real_diagonal(enum canon_type t, int64_t n, void *c, int64_t ldc)
{
    for (int64_t i = 0; i < n; i++) {
        if (t == CANON_C)
            ((float *)c)[2 * (i + i * ldc) + 1] = 0;
        else
            ((double *)c)[2 * (i + i * ldc) + 1] = 0;
    }
}

/* Copies the uplo triangle of an n x n block between C (ldc) and a
 * workspace w (ld n), the workspace's other triangle zeroed on the way
 * in. */
static void tri_copy(int upper, int64_t n, size_t size, void *c, int64_t ldc, void *w, int in)
{
    for (int64_t j = 0; j < n; j++) {
        const int64_t lo = upper ? 0 : j, len = upper ? j + 1 : n - j;
        char *cj = at(c, lo + j * ldc, size), *wj = at(w, lo + j * n, size);
        if (!in) {
            memcpy(cj, wj, (size_t)len * size);
            continue;
        }
        memset(at(w, j * n, size), 0, (size_t)n * size);
        memcpy(wj, cj, (size_t)len * size);
    }
}

/* The uplo triangle of C's rows and columns j0 .. j1-1, halved (whole
 * leaves of DIAG_NB each side) until a diagonal block, which is computed
 * in w: the triangle of the first half, the rectangle between the halves
 * (one GEMM), the triangle of the second half. Columns of DIAG_NB each,
 * every one a GEMM over all the rows below (or above) it, packed each
 * column block's rows anew for only DIAG_NB columns of work: the packing
 * took as long as the tiles in a dsyrk n = 1024. */
static int tri_block(const struct canon_tri_update *u, void *c, int64_t ldc, void *w, int64_t j0,
                     int64_t j1)
{
    const size_t size = canon_blas_size(u->t);
    /* op(A) rows i.. and op(B) columns j.. start at these elements. */
    const int64_t ra = u->ta == 'N' ? 1 : u->lda, rb = u->tb == 'N' ? u->ldb : 1;
    const int64_t nb = j1 - j0;
    if (nb <= DIAG_NB) {
        void *cd = at(c, j0 + j0 * ldc, size);
        tri_copy(u->upper, nb, size, cd, ldc, w, 1);
        if (u->herm)
            real_diagonal(u->t, nb, w, nb);
        const int rc = gemm(u->t, u->ta, u->tb, nb, nb, u->k, u->alpha, at(u->a, j0 * ra, size),
                            u->lda, at(u->b, j0 * rb, size), u->ldb, u->beta, w, nb);
        if (rc != 0)
            return rc;
        if (u->herm)
            real_diagonal(u->t, nb, w, nb);
        tri_copy(u->upper, nb, size, cd, ldc, w, 0);
        return 0;
    }
    const int64_t h = j0 + (nb + DIAG_NB - 1) / DIAG_NB / 2 * DIAG_NB;
    /* the rectangle: rows h.. x columns ..h (lower), rows ..h x columns h.. (upper) */
    const int64_t r0 = u->upper ? j0 : h, c0 = u->upper ? h : j0;
    const int64_t rows = u->upper ? h - j0 : j1 - h, cols = u->upper ? j1 - h : h - j0;
    int rc = tri_block(u, c, ldc, w, j0, h);
    if (rc == 0)
        rc = gemm(u->t, u->ta, u->tb, rows, cols, u->k, u->alpha, at(u->a, r0 * ra, size), u->lda,
                  at(u->b, c0 * rb, size), u->ldb, u->beta, at(c, r0 + c0 * ldc, size), ldc);
    return rc == 0 ? tri_block(u, c, ldc, w, h, j1) : rc;
}

int canon_l3_tri_update(const struct canon_tri_update *u, void *c, int64_t ldc)
{
    const int64_t nb0 = u->n < DIAG_NB ? u->n : DIAG_NB;
    if (!canon_l3_gemm_on())
        return -2;
    if (u->n == 0)
        return 0;
    void *w = malloc((size_t)(nb0 * nb0) * canon_blas_size(u->t));
    if (!w)
        return -2;
    const int rc = tri_block(u, c, ldc, w, 0, u->n);
    free(w);
    return rc == 0 ? 0 : -2;
}

/* Rows i0 .. i0+rows-1 (all m columns) of the symmetric m x m A stored in
 * its lower or upper triangle, into w (ld rows): A_ip = a(i, p) in the
 * stored triangle, else a(p, i). */
static void sym_rows(size_t size, int lower, int64_t m, const void *a, int64_t lda, int64_t i0,
                     int64_t rows, void *w)
{
    for (int64_t p = 0; p < m; p++)
        for (int64_t r = 0; r < rows; r++) {
            const int64_t i = i0 + r;
            const int stored = lower ? i >= p : i <= p;
            memcpy(at(w, r + p * rows, size), at(a, stored ? i + p * lda : p + i * lda, size),
                   size);
        }
}

int canon_l3_symm_gemm(enum canon_type t, int left, int lower, int64_t m, int64_t n,
                       const void *alpha, const void *a, int64_t lda, const void *b, int64_t ldb,
                       const void *beta, void *c, int64_t ldc)
{
    const size_t size = canon_blas_size(t);
    const int64_t dim = left ? m : n; /* A is dim x dim */
    const int64_t nb0 = dim < SYMM_NB ? dim : SYMM_NB;
    if (!canon_l3_gemm_on())
        return -2;
    void *w = malloc((size_t)(nb0 * dim) * size);
    if (!w)
        return -2;
    int rc = 0;
    for (int64_t i0 = 0; i0 < dim && rc == 0; i0 += SYMM_NB) {
        const int64_t nb = dim - i0 < SYMM_NB ? dim - i0 : SYMM_NB;
        /* A's rows i0.. (side 'L'), or by symmetry its columns i0.. read as
         * rows of A^T = A (side 'R'): w holds nb x dim, ld nb */
        sym_rows(size, lower, dim, a, lda, i0, nb, w);
        if (left) /* C(i0.., :) = A(i0.., :) * B */
            rc = gemm(t, 'N', 'N', nb, n, m, alpha, w, nb, b, ldb, beta, at(c, i0, size), ldc);
        else /* C(:, i0..) = B * A(:, i0..), A(:, i0..) = w^T */
            rc = gemm(t, 'N', 'T', m, nb, n, alpha, b, ldb, w, nb, beta, at(c, i0 * ldc, size),
                      ldc);
    }
    free(w);
    return rc == 0 ? 0 : -2;
}
