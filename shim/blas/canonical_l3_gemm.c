/* Level-3 routines on the canonical GEMM core (canonical_gemm.c): syrk,
 * syr2k, herk, her2k, symm and hemm, whose every output element is one or
 * two GEMM sums, run as GEMM calls, so they get the GEMM's register
 * tiles, cache blocking, ISA paths and threads, and its bits. The
 * contract of each (shim/blas/canonical.h) is stated so that this is
 * exact:
 *   - syrk: C_ij is the GEMM of op(A) and op(A)^T on the uplo triangle:
 *     the same products in the same order, the same AB step.
 *   - syr2k / her2k: two GEMM updates in turn, the second with beta = 1;
 *     herk: her2k's first alone.
 *   - symm: the GEMM of the full symmetric A and B; hemm: of the full
 *     Hermitian A.
 * Each is one call of canon_gemm_opnds: a triangle update skips the
 * register tiles outside the triangle and stores only the triangle's part
 * of a tile on the diagonal (its other triangle is never written); symm's
 * A is packed from its stored triangle, as the GEMM packs any operand, so
 * nothing is copied first. Until session 10 (2026-12-03) a triangle ran
 * as a halving into 64-column diagonal blocks, each a GEMM call of its
 * own on a copy, and symm copied A's rows a block at a time: the same
 * bits, at 0.72-0.84 of OpenBLAS on an AVX2 Zen 3 at n = 512.
 * Each function returns 0, or -2 when the GEMM's workspace cannot be
 * allocated (nothing written but, for her2k and herk, the zeros of the
 * diagonal's imaginary parts); the caller then runs its sequential
 * kernel, which gives the same bits.
 */
#include <stdatomic.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

static atomic_int use_gemm = 1;

void canon_l3_use_gemm(int on)
{
    atomic_store(&use_gemm, on != 0);
}

int canon_l3_gemm_on(void)
{
    return atomic_load(&use_gemm);
}

/* The operand op(X) of a column-major X (ld ldx), op by tr ('N', 'T',
 * 'C'): element (i, p) at x + i*rs + p*cs, as canonical_gemm.c's gemm
 * makes it (for op(B), (p, j)). */
static struct canon_gemm_opnd opnd(char tr, const void *x, int64_t ldx)
{
    const int down = tr == 'N'; /* the first index runs down X's columns */
    return (struct canon_gemm_opnd){x, down ? 1 : ldx, down ? ldx : 1, tr == 'C', 0, 0};
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

int canon_l3_tri_update(const struct canon_tri_update *u, void *c, int64_t ldc)
{
    if (!canon_l3_gemm_on())
        return -2;
    if (u->n == 0)
        return 0;
    const struct canon_gemm_opnd oa = opnd(u->ta, u->a, u->lda);
    const struct canon_gemm_opnd ob = opnd(u->tb, u->b, u->ldb);
    /* her2k reads the diagonal's imaginary part as 0: it is set so first
     * (the BLAS leaves it undefined on entry and zero on exit) */
    if (u->herm)
        real_diagonal(u->t, u->n, c, ldc);
    const int rc = canon_gemm_opnds(u->t, u->upper ? 'U' : 'L', u->n, u->n, u->k, &oa, &ob,
                                    u->alpha, u->beta, c, ldc);
    if (rc == 0 && u->herm)
        real_diagonal(u->t, u->n, c, ldc);
    return rc == 0 ? 0 : -2;
}

int canon_l3_symm_gemm(enum canon_type t, int herm, int left, int lower, int64_t m, int64_t n,
                       const void *alpha, const void *a, int64_t lda, const void *b, int64_t ldb,
                       const void *beta, void *c, int64_t ldc)
{
    if (!canon_l3_gemm_on())
        return -2;
    struct canon_gemm_opnd sa = opnd('N', a, lda);
    sa.sym = (lower ? CANON_SYM_LOWER : CANON_SYM_UPPER) | (herm ? CANON_SYM_HERM : 0);
    const struct canon_gemm_opnd sb = opnd('N', b, ldb);
    /* left: C = A*B (A m x m); right: C = B*A (A n x n) */
    const int rc = left ? canon_gemm_opnds(t, 0, m, n, m, &sa, &sb, alpha, beta, c, ldc)
                        : canon_gemm_opnds(t, 0, m, n, n, &sb, &sa, alpha, beta, c, ldc);
    return rc == 0 ? 0 : -2;
}
