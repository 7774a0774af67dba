/* trmm and trsm on the canonical GEMM core, in the contract's order
 * (shim/blas/canonical.h), unchanged: each element's sum is one chain in
 * increasing p, which runs in pieces. Blocks of NB rows (side 'L') or
 * columns (side 'R') of B are computed in a workspace W: the part of each
 * chain over whole earlier or later blocks is one GEMM that continues W's
 * sums (canon_gemm_acc: tiles, ISA paths, threads), the part inside the
 * block runs on the active path's gemv loops, carried in W, and the block
 * is written back when done. Blocks go in the order that reads only old
 * values (trmm) or solved ones (trsm), as the sequential kernels do.
 *
 * Covered: trmm side 'R' (every type) and side 'L' (real types, whose
 * products may trade factors: x*y == y*x); trsm where the GEMM part comes
 * first in each chain, side 'R' with upper op(A) (every type) and side
 * 'L' with lower op(A) (real). The other trsm cases put the products of
 * the block's own, not yet solved, elements first; they and complex side
 * 'L' stay on canonical_l3.c's kernels. Same bits either way.
 */
#include <stdlib.h>
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

#define NB 64

static void *at2(const void *x, int64_t i, int64_t j, int64_t ld, size_t size)
{
    return (void *)canon_blas_at(x, i + j * ld, size);
}

/* op(A)_ij for row and column steps ri, rj. */
static const void *opa(const void *a, int64_t ri, int64_t rj, int64_t i, int64_t j, size_t size)
{
    return canon_blas_at(a, i * ri + j * rj, size);
}

/* The job of one call after trm_args (canonical_l3.c). */
struct tri_job {
    enum canon_type t;
    const struct canon_blas_tri *tri;
    const struct canon_blas_kern *kern;
    size_t size;
    int64_t m, n, ri, rj, lda, ldb;
    const void *alpha, *a;
    void *b;
    int solve;    /* trsm (else trmm) */
    int alpha1;   /* trsm: alpha == 1 */
    void *neg;    /* trsm: room for a negated block of op(A) */
};

/* The GEMM operand that is op(A)[p0 .. p0+k) x [c0 .. c0+cols) (side 'R',
 * p the row) or its transpose op(A)[c0 ..) x [p0 ..) read as (p, c)
 * (side 'L'): transposition, first element and leading dimension; trsm
 * negates a copy (every product with it then rounds as the contract's
 * "s -= ..."). */
static char op_block(const struct tri_job *J, int left, int64_t p0, int64_t k, int64_t c0,
                     int64_t cols, const void **ptr, int64_t *ld)
{
    const struct canon_blas_tri *tri = J->tri;
    /* (p, c) of the operand is op(A)_{p,c} (right) or op(A)_{c,p} (left) */
    const int64_t sp = left ? J->rj : J->ri, sc = left ? J->ri : J->rj;
    const char *first = left ? opa(J->a, J->ri, J->rj, c0, p0, J->size)
                             : opa(J->a, J->ri, J->rj, p0, c0, J->size);
    if (!J->solve) {
        *ptr = first;
        *ld = J->lda;
        /* element (p, c) at first + p*sp + c*sc: 'N' when sp == 1 */
        return sp == 1 ? 'N' : tri->conj ? 'C' : 'T';
    }
    for (int64_t c = 0; c < cols; c++)
        for (int64_t p = 0; p < k; p++) {
            union {
                float s[2];
                double d[2];
            } v;
            memcpy(&v, canon_blas_at(first, p * sp + c * sc, J->size), J->size);
            const int cplx = canon_blas_complex(J->t);
            if (J->t == CANON_S || J->t == CANON_C) {
                v.s[0] = -v.s[0];
                if (cplx)
                    v.s[1] = tri->conj ? v.s[1] : -v.s[1];
            } else {
                v.d[0] = -v.d[0];
                if (cplx)
                    v.d[1] = tri->conj ? v.d[1] : -v.d[1];
            }
            memcpy(at2(J->neg, p, c, k, J->size), &v, J->size);
        }
    *ptr = J->neg;
    *ld = k > 1 ? k : 1;
    return 'N';
}

/* The part of block x0 .. x0+nb-1's chains over p = g0 .. g0+gk-1, one
 * GEMM continuing W's sums: side 'R' W += B(:, g0..) * op(A)(g0.., x0..),
 * side 'L' W += B(g0.., :)^T * op(A)(x0.., g0..)^T (W holds the rows'
 * sums as columns). Returns 0 or -2. */
static int gemm_part(const struct tri_job *J, int left, int64_t g0, int64_t gk, int64_t x0,
                     int64_t nb, void *w)
{
    if (gk <= 0)
        return 0;
    const void *ap;
    int64_t ld;
    const char tb = op_block(J, left, g0, gk, x0, nb, &ap, &ld);
    const int64_t rows = left ? J->n : J->m;
    const void *bp = left ? at2(J->b, g0, 0, J->ldb, J->size) : at2(J->b, 0, g0, J->ldb, J->size);
    return canon_gemm_acc(J->t, left ? 'T' : 'N', tb, rows, nb, gk, bp, J->ldb, ap, ld, w, rows) ==
                   0
               ? 0
               : -2;
}

/* The diagonal term of column j's sums s (side 'R', trmm): s_i + B_ij
 * (unit) or CMAC(s_i, B_ij, op(A)_jj). */
static void right_diag(const struct tri_job *J, int64_t j, int how, void *s)
{
    const void *bj = at2(J->b, 0, j, J->ldb, J->size);
    if (J->tri->unit)
        for (int64_t i = 0; i < J->m; i++)
            canon_blas_add(J->t, at2(s, i, 0, J->m, J->size), canon_blas_at(bj, i, J->size));
    else
        canon_blas_sweep(J->kern, J->t, J->m, 1, bj, J->ldb,
                         opa(J->a, J->ri, J->rj, j, j, J->size), J->ri, how, s);
}

/* The same for row i's sums (side 'L', real: B_ij*op(A)_ii). */
static void left_diag(const struct tri_job *J, int64_t i, int how, void *s)
{
    const void *bi = at2(J->b, i, 0, J->ldb, J->size);
    if (J->tri->unit)
        for (int64_t j = 0; j < J->n; j++)
            canon_blas_add(J->t, at2(s, j, 0, J->n, J->size), at2(bi, 0, j, J->ldb, J->size));
    else
        canon_blas_dots(J->kern, J->t, 1, J->n, bi, J->ldb,
                        opa(J->a, J->ri, J->rj, i, i, J->size), J->rj, how, s);
}

/* The starting sums of block x0 .. x0+nb-1 in W (column c: that row
 * (left) or column of B, `other` elements): trmm +0, trsm B_ij or
 * CMUL(alpha, B_ij). */
static void start_sums(const struct tri_job *J, int left, int64_t x0, int64_t nb, void *w)
{
    const int64_t other = left ? J->n : J->m;
    if (!J->solve) {
        memset(w, 0, (size_t)(other * nb) * J->size);
        return;
    }
    for (int64_t c = 0; c < nb; c++)
        for (int64_t e = 0; e < other; e++) {
            const void *bij = left ? at2(J->b, x0 + c, e, J->ldb, J->size)
                                   : at2(J->b, e, x0 + c, J->ldb, J->size);
            void *we = at2(w, e, c, other, J->size);
            if (J->alpha1)
                memcpy(we, bij, J->size);
            else
                canon_blas_mul(J->t, J->alpha, bij, we);
        }
}

/* Side 'R': columns j0 .. j0+nb-1 of the result into W (m x nb, ld m).
 * trmm: B_ij = alpha * SEQ over p in column j's triangle of B_ip*op(A)_pj;
 * trsm (upper op(A)): X_ij = (s = alpha*B_ij, minus X_ik*op(A)_kj, k < j,
 * in increasing k) / op(A)_jj. */
static int right_block(const struct tri_job *J, int64_t j0, int64_t nb, void *w)
{
    const struct canon_blas_tri *tri = J->tri;
    const size_t size = J->size;
    const int64_t m = J->m, n = J->n;
    const int how = (J->solve ? X_NEG : 0) | (tri->conj ? X_CONJ : 0);
    start_sums(J, 0, j0, nb, w);
    /* the GEMM part: p < j0 (upper) first, p >= j0 + nb (lower) last */
    const int64_t g0 = tri->upper ? 0 : j0 + nb, gk = tri->upper ? j0 : n - j0 - nb;
    if (tri->upper && gemm_part(J, 0, g0, gk, j0, nb, w) != 0)
        return -2;
    for (int64_t c = 0; c < nb; c++) {
        const int64_t j = j0 + c;
        void *s = at2(w, 0, c, m, size);
        /* inside the block, in increasing p: upper p = j0 .. j, lower j .. */
        const int64_t lo = tri->upper ? j0 : j + 1, cnt = tri->upper ? j - j0 : j0 + nb - j - 1;
        if (!tri->upper && !J->solve)
            right_diag(J, j, how, s);
        canon_blas_sweep(J->kern, J->t, m, cnt, at2(J->b, 0, lo, J->ldb, size), J->ldb,
                         opa(J->a, J->ri, J->rj, lo, j, size), J->ri, how, s);
        if (J->solve) { /* X(:, j) is solved: later columns of the block read it */
            for (int64_t i = 0; i < m; i++) {
                void *se = at2(s, i, 0, m, size);
                if (!tri->unit)
                    canon_blas_div(J->t, se, se, opa(J->a, J->ri, J->rj, j, j, size), tri->conj);
                memcpy(at2(J->b, i, j, J->ldb, size), se, size);
            }
        } else if (tri->upper) {
            right_diag(J, j, how, s);
        }
    }
    return tri->upper ? 0 : gemm_part(J, 0, g0, gk, j0, nb, w);
}

/* Side 'L', real types: rows i0 .. i0+nb-1 into W (n x nb, ld n: row i's
 * sums contiguous in j). trmm: B_ij = alpha * SEQ over p in row i's
 * triangle of op(A)_ip*B_pj; trsm (lower op(A)): X_ij = (s = alpha*B_ij,
 * minus op(A)_ik*X_kj, k < i, in increasing k) / op(A)_ii. Each product
 * is computed as B_pj*op(A)_ip, which rounds the same for real types. */
static int left_block(const struct tri_job *J, int64_t i0, int64_t nb, void *w)
{
    const struct canon_blas_tri *tri = J->tri;
    const size_t size = J->size;
    const int64_t m = J->m, n = J->n;
    const int how = J->solve ? X_NEG : 0;
    start_sums(J, 1, i0, nb, w);
    /* lower op(A): p < i0 first; upper: p >= i0 + nb last */
    const int lower = !tri->upper;
    const int64_t g0 = lower ? 0 : i0 + nb, gk = lower ? i0 : m - i0 - nb;
    if (lower && gemm_part(J, 1, g0, gk, i0, nb, w) != 0)
        return -2;
    for (int64_t r = 0; r < nb; r++) {
        const int64_t i = i0 + r;
        void *s = at2(w, 0, r, n, size);
        const int64_t lo = lower ? i0 : i + 1, cnt = lower ? i - i0 : i0 + nb - i - 1;
        if (!lower) /* trmm only: the diagonal term comes first */
            left_diag(J, i, how, s);
        canon_blas_dots(J->kern, J->t, cnt, n, at2(J->b, lo, 0, J->ldb, size), J->ldb,
                        opa(J->a, J->ri, J->rj, i, lo, size), J->rj, how, s);
        if (J->solve) {
            for (int64_t j = 0; j < n; j++) {
                void *se = at2(s, j, 0, n, size);
                if (!tri->unit)
                    canon_blas_div(J->t, se, se, opa(J->a, J->ri, J->rj, i, i, size), 0);
                memcpy(at2(J->b, i, j, J->ldb, size), se, size);
            }
        } else if (lower) {
            left_diag(J, i, how, s);
        }
    }
    return lower ? 0 : gemm_part(J, 1, g0, gk, i0, nb, w);
}

int canon_l3_tri_gemm(enum canon_type t, int solve, char side, const struct canon_blas_tri *tri,
                      int64_t m, int64_t n, const void *alpha, const void *a, int64_t lda,
                      void *b, int64_t ldb)
{
    const int left = side == 'L';
    if ((left && canon_blas_complex(t)) || (solve && left != !tri->upper) || !canon_l3_gemm_on())
        return 1; /* not covered here */
    struct tri_job J = {
        .t = t, .tri = tri, .kern = &canon_blas_kernels()->t[t], .size = canon_blas_size(t),
        .m = m, .n = n, .ri = canon_blas_tri_ri(tri, lda), .rj = canon_blas_tri_rj(tri, lda),
        .lda = lda, .ldb = ldb, .alpha = alpha, .a = a, .b = b, .solve = solve,
        .alpha1 = canon_blas_is_one(t, alpha),
    };
    const int64_t dim = left ? m : n, other = left ? n : m;
    const int64_t nb0 = dim < NB ? dim : NB;
    void *w = malloc((size_t)(other * nb0) * J.size);
    J.neg = solve ? malloc((size_t)(dim * nb0) * J.size) : NULL;
    if (!w || (solve && !J.neg)) {
        free(w);
        free(J.neg);
        return -2;
    }
    /* trmm: the blocks whose old values the others still need come last
     * (lower side 'L' and upper side 'R' from the end); trsm: in solving
     * order (the covered cases go forward). */
    const int backward = !solve && (left ? !tri->upper : tri->upper);
    const int64_t nblocks = (dim + NB - 1) / NB;
    int rc = 0;
    for (int64_t q = 0; q < nblocks && rc == 0; q++) {
        const int64_t blk = backward ? nblocks - 1 - q : q;
        const int64_t x0 = blk * NB, nb = dim - x0 < NB ? dim - x0 : NB;
        rc = left ? left_block(&J, x0, nb, w) : right_block(&J, x0, nb, w);
        if (rc == 0 && !solve) /* trmm: write the block back, times alpha */
            for (int64_t c = 0; c < nb; c++)
                for (int64_t e = 0; e < other; e++) {
                    void *dst = left ? at2(b, x0 + c, e, ldb, J.size)
                                     : at2(b, e, x0 + c, ldb, J.size);
                    canon_blas_mul(t, alpha, at2(w, e, c, other, J.size), dst);
                }
    }
    free(w);
    free(J.neg);
    return rc;
}
