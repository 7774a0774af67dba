/* Unit tests of the canonical level-3 BLAS (syrk, symm, trmm, trsm;
 * shim/blas/canonical_l3*.c) against the element-by-element reference:
 * every routine's result equals, bit for bit, a slow obvious reference
 * written here, on canonical_ref.h's helpers, from the contract in
 * shim/blas/canonical.h (logical elements, the documented formulas, one
 * operation at a time), over a grid
 * of shapes, both layouts, every trans/uplo/side/diag, strides (negative
 * and zero where the BLAS allows them), padded leading dimensions and
 * alpha/beta in {0, 1, -1, other}; on every ISA path this CPU has, so the
 * paths also equal one another. Whole buffers are compared, padding
 * included, so a write outside the logical elements fails too. NaN results
 * compare equal to any NaN (the contract does not fix NaN payloads).
 */
#include "canonical_ref.h"

/* ---- level 3 ---------------------------------------------------------------- */

static int lib_syrk(int t, char order, char uplo, char trans, int64_t n, int64_t k, cx alpha,
                    const void *a, int64_t lda, cx beta, void *c, int64_t ldc)
{
    const struct sc al = sc_of(alpha), be = sc_of(beta);
    switch (t) {
    case TS: return canon_ssyrk(order, uplo, trans, n, k, al.f[0], a, lda, be.f[0], c, ldc);
    case TD: return canon_dsyrk(order, uplo, trans, n, k, al.d[0], a, lda, be.d[0], c, ldc);
    case TC: return canon_csyrk(order, uplo, trans, n, k, al.f, a, lda, be.f, c, ldc);
    default: return canon_zsyrk(order, uplo, trans, n, k, al.d, a, lda, be.d, c, ldc);
    }
}

static void ref_syrk(int t, char order, char uplo, char trans, int64_t n, int64_t k, cx alpha,
                     const void *a, int64_t lda, cx beta, void *c, int64_t ldc)
{
    /* op(A) is n x k: A itself for 'N', else A^T (A k x n) */
    const char tr = trans == 'N' ? 'N' : 'T';
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            const int64_t e = midx(order, i, j, ldc);
            if (uplo == 'U' ? i > j : i < j)
                continue;
            if (is_zero(alpha) || k == 0) {
                st(t, c, e, ab0(t, beta, ld(t, c, e)));
                continue;
            }
            cx s = {0, 0};
            for (int64_t p = 0; p < k; p++) {
                const cx ai = op_at(t, order, tr, a, lda, i, p),
                         aj = op_at(t, order, tr, a, lda, j, p);
                s = order == 'C' ? cmac(t, s, ai, aj) : cmac(t, s, aj, ai);
            }
            st(t, c, e, ab(t, alpha, beta, s, ld(t, c, e)));
        }
}

static void check_syrk(int t, char order, char uplo, char trans, int64_t n, int64_t k, int64_t pad,
                       cx alpha, cx beta)
{
    const int64_t ra = trans == 'N' ? n : k, ca = trans == 'N' ? k : n;
    const int64_t lda = (order == 'C' ? ra : ca) + pad, ldc = n + 2 - pad > 0 ? n + 2 - pad : 1;
    const int64_t la = mlen(order, ra, ca, lda > 0 ? lda : 1), lc = mlen(order, n, n, ldc);
    void *a = rand_buf(t, la), *c = rand_buf(t, lc), *want = dup_buf(t, c, lc);
    describe("%csyrk %c uplo=%c trans=%c n=%lld k=%lld lda=%lld ldc=%lld alpha=%g%+gi "
             "beta=%g%+gi",
             tname[t], order, uplo, trans, (long long)n, (long long)k, (long long)lda,
             (long long)ldc, alpha.re, alpha.im, beta.re, beta.im);
    assert_int_equal(
        lib_syrk(t, order, uplo, trans, n, k, alpha, a, lda > 0 ? lda : 1, beta, c, ldc), 0);
    ref_syrk(t, order, uplo, trans, n, k, alpha, a, lda > 0 ? lda : 1, beta, want, ldc);
    assert_same(t, c, want, lc);
    free(a);
    free(c);
    free(want);
}

static void syrk_grid(void)
{
    static const int64_t ns[] = {0, 1, 4, 17, 33}, ks[] = {0, 1, 5, 19};
    for (int t = 0; t < NTYPES; t++)
        for (int o = 0; o < 2; o++)
            for (int u = 0; u < 2; u++)
                for (int tr = 0; tr < 3 - cplx(t); tr++) /* csyrk has no 'C' */
                    for (size_t in = 0; in < 5; in++)
                        for (size_t ik = 0; ik < 4; ik++)
                            for (size_t p = 0; p < N_AB; p++)
                                check_syrk(t, orders[o], "UL"[u], transes[tr], ns[in], ks[ik],
                                           (int64_t)(p % 3), scalar(t, ab_pairs[p][0]),
                                           scalar(t, ab_pairs[p][1]));
    /* Columns longer than the block of sums. */
    for (int t = 0; t < NTYPES; t++)
        for (int tr = 0; tr < 2; tr++) {
            const int64_t big = 8192 / (int64_t)tsize[t] + 5;
            check_syrk(t, 'C', 'L', transes[tr], big, 2, 0, scalar(t, 3), scalar(t, 4));
        }
}

static void test_syrk_equals_a_sequential_sum_per_element(void **state)
{
    (void)state;
    on_every_isa(syrk_grid);
}

static int lib_symm(int t, char order, char side, char uplo, int64_t m, int64_t n, cx alpha,
                    const void *a, int64_t lda, const void *b, int64_t ldb, cx beta, void *c,
                    int64_t ldc)
{
    const struct sc al = sc_of(alpha), be = sc_of(beta);
    switch (t) {
    case TS: return canon_ssymm(order, side, uplo, m, n, al.f[0], a, lda, b, ldb, be.f[0], c, ldc);
    case TD: return canon_dsymm(order, side, uplo, m, n, al.d[0], a, lda, b, ldb, be.d[0], c, ldc);
    case TC: return canon_csymm(order, side, uplo, m, n, al.f, a, lda, b, ldb, be.f, c, ldc);
    default: return canon_zsymm(order, side, uplo, m, n, al.d, a, lda, b, ldb, be.d, c, ldc);
    }
}

/* A_ip of the symmetric A, read from its uplo triangle. */
static cx sym_at(int t, char order, char uplo, const void *a, int64_t lda, int64_t i, int64_t p)
{
    const int stored = uplo == 'U' ? i <= p : i >= p;
    return stored ? ld(t, a, midx(order, i, p, lda)) : ld(t, a, midx(order, p, i, lda));
}

static void ref_symm(int t, char order, char side, char uplo, int64_t m, int64_t n, cx alpha,
                     const void *a, int64_t lda, const void *b, int64_t ldb, cx beta, void *c,
                     int64_t ldc)
{
    if (m == 0 || n == 0 || (is_zero(alpha) && is_one(beta)))
        return;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            const int64_t e = midx(order, i, j, ldc);
            if (is_zero(alpha)) {
                st(t, c, e, ab0(t, beta, ld(t, c, e)));
                continue;
            }
            cx s = {0, 0};
            for (int64_t p = 0; p < (side == 'L' ? m : n); p++) {
                /* u * v is the product in the operation's order */
                const cx u = side == 'L' ? sym_at(t, order, uplo, a, lda, i, p)
                                         : ld(t, b, midx(order, i, p, ldb));
                const cx v = side == 'L' ? ld(t, b, midx(order, p, j, ldb))
                                         : sym_at(t, order, uplo, a, lda, p, j);
                s = order == 'C' ? cmac(t, s, u, v) : cmac(t, s, v, u);
            }
            st(t, c, e, ab(t, alpha, beta, s, ld(t, c, e)));
        }
}

static void symm_grid(void)
{
    static const int64_t sizes[] = {0, 1, 4, 13, 40};
    for (int t = 0; t < NTYPES; t++)
        for (int o = 0; o < 2; o++)
            for (int sd = 0; sd < 2; sd++)
                for (int u = 0; u < 2; u++)
                    for (size_t im = 0; im < 5; im++)
                        for (size_t in = 0; in < 5; in++)
                            for (size_t p = 0; p < N_AB; p++) {
                                const char order = orders[o], side = "LR"[sd], uplo = "UL"[u];
                                if ((im == 4 || in == 4) && p != 6)
                                    continue; /* the wide shapes: one alpha/beta pair */
                                const int64_t m = sizes[im], n = sizes[in],
                                              ka = side == 'L' ? m : n;
                                const int64_t pad = (int64_t)(p % 2);
                                const int64_t lda = (ka > 0 ? ka : 1) + pad;
                                const int64_t ldb = (order == 'C' ? m : n) + 1 - pad;
                                const int64_t ldc = (order == 'C' ? m : n) + 2;
                                const int64_t lb = mlen(order, m, n, ldb > 0 ? ldb : 1);
                                const int64_t lc = mlen(order, m, n, ldc);
                                const cx alpha = scalar(t, ab_pairs[p][0]);
                                const cx beta = scalar(t, ab_pairs[p][1]);
                                void *a = rand_buf(t, mlen(order, ka, ka, lda));
                                void *b = rand_buf(t, lb), *c = rand_buf(t, lc);
                                void *want = dup_buf(t, c, lc);
                                describe("%csymm %c side=%c uplo=%c m=%lld n=%lld alpha=%g%+gi "
                                         "beta=%g%+gi",
                                         tname[t], order, side, uplo, (long long)m, (long long)n,
                                         alpha.re, alpha.im, beta.re, beta.im);
                                assert_int_equal(lib_symm(t, order, side, uplo, m, n, alpha, a, lda,
                                                          b, ldb > 0 ? ldb : 1, beta, c, ldc),
                                                 0);
                                ref_symm(t, order, side, uplo, m, n, alpha, a, lda, b,
                                         ldb > 0 ? ldb : 1, beta, want, ldc);
                                assert_same(t, c, want, lc);
                                free(a);
                                free(b);
                                free(c);
                                free(want);
                            }
}

static void test_symm_equals_a_sequential_sum_per_element(void **state)
{
    (void)state;
    on_every_isa(symm_grid);
}

static int lib_trm(int t, int solve, char order, char side, char uplo, char trans, char diag,
                   int64_t m, int64_t n, cx alpha, const void *a, int64_t lda, void *b, int64_t ldb)
{
    const struct sc al = sc_of(alpha);
    switch (t) {
    case TS:
        return solve ? canon_strsm(order, side, uplo, trans, diag, m, n, al.f[0], a, lda, b, ldb)
                     : canon_strmm(order, side, uplo, trans, diag, m, n, al.f[0], a, lda, b, ldb);
    case TD:
        return solve ? canon_dtrsm(order, side, uplo, trans, diag, m, n, al.d[0], a, lda, b, ldb)
                     : canon_dtrmm(order, side, uplo, trans, diag, m, n, al.d[0], a, lda, b, ldb);
    case TC:
        return solve ? canon_ctrsm(order, side, uplo, trans, diag, m, n, al.f, a, lda, b, ldb)
                     : canon_ctrmm(order, side, uplo, trans, diag, m, n, al.f, a, lda, b, ldb);
    default:
        return solve ? canon_ztrsm(order, side, uplo, trans, diag, m, n, al.d, a, lda, b, ldb)
                     : canon_ztrmm(order, side, uplo, trans, diag, m, n, al.d, a, lda, b, ldb);
    }
}

/* Both: alpha == 0 zeroes the logical B. */
static int zero_b(int t, char order, int64_t m, int64_t n, cx alpha, void *b, int64_t ldb)
{
    if (!is_zero(alpha))
        return 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++)
            st(t, b, midx(order, i, j, ldb), (cx){0, 0});
    return 1;
}

static void ref_trmm(int t, char order, char side, char uplo, char trans, char diag, int64_t m,
                     int64_t n, cx alpha, const void *a, int64_t lda, void *b, int64_t ldb)
{
    if (m == 0 || n == 0 || zero_b(t, order, m, n, alpha, b, ldb))
        return;
    void *old = dup_buf(t, b, mlen(order, m, n, ldb));
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            cx s = {0, 0};
            const int64_t kk = side == 'L' ? m : n;
            for (int64_t p = 0; p < kk; p++) {
                /* 'L': op(A)_ip * B_pj; 'R': B_ip * op(A)_pj */
                const int64_t ai = side == 'L' ? i : p, aj = side == 'L' ? p : j;
                const int64_t bi = side == 'L' ? p : i, bj = side == 'L' ? j : p;
                if (!in_tri(uplo, trans, ai, aj))
                    continue;
                const cx bv = ld(t, old, midx(order, bi, bj, ldb));
                if (ai == aj && diag == 'U') {
                    s = cadd(t, s, bv);
                    continue;
                }
                const cx av = op_at(t, order, trans, a, lda, ai, aj);
                const cx u = side == 'L' ? av : bv, v = side == 'L' ? bv : av;
                s = order == 'C' ? cmac(t, s, u, v) : cmac(t, s, v, u);
            }
            st(t, b, midx(order, i, j, ldb), cmul(t, alpha, s));
        }
    free(old);
}

static void ref_trsm(int t, char order, char side, char uplo, char trans, char diag, int64_t m,
                     int64_t n, cx alpha, const void *a, int64_t lda, void *b, int64_t ldb)
{
    if (m == 0 || n == 0 || zero_b(t, order, m, n, alpha, b, ldb))
        return;
    const int upper = (uplo == 'U') == (trans == 'N');
    /* side 'L' solves down each column, 'R' along each row; forward when
     * the unknowns' dependencies come first */
    const int forward = side == 'L' ? !upper : upper;
    const int64_t outer = side == 'L' ? n : m, inner = side == 'L' ? m : n;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t step = 0; step < inner; step++) {
            const int64_t q = forward ? step : inner - 1 - step;
            const int64_t i = side == 'L' ? q : o, j = side == 'L' ? o : q;
            const int64_t e = midx(order, i, j, ldb);
            cx s = is_one(alpha) ? ld(t, b, e) : cmul(t, alpha, ld(t, b, e));
            /* the off-diagonal terms in the solving order (version 2 of the
             * contract: a backward solve takes k decreasing) */
            for (int64_t kstep = 0; kstep < inner; kstep++) {
                const int64_t k = forward ? kstep : inner - 1 - kstep;
                /* 'L': op(A)_ik X_kj; 'R': X_ik op(A)_kj; off-diagonal only */
                const int64_t ai = side == 'L' ? i : k, aj = side == 'L' ? k : j;
                if (k == q || !in_tri(uplo, trans, ai, aj))
                    continue;
                const cx av = op_at(t, order, trans, a, lda, ai, aj);
                const cx xv =
                    ld(t, b, side == 'L' ? midx(order, k, j, ldb) : midx(order, i, k, ldb));
                /* the first factor of the (layout's) product is negated */
                const cx u = side == 'L' ? av : xv, v = side == 'L' ? xv : av;
                s = order == 'C' ? cmac(t, s, neg(u), v) : cmac(t, s, neg(v), u);
            }
            if (diag == 'N')
                s = cdiv(t, s, op_at(t, order, trans, a, lda, q, q));
            st(t, b, e, s);
        }
}

/* One trmm (solve: trsm) call against the reference. */
static void check_trm(int t, int solve, char order, char side, char uplo, char trans, char diag,
                      int64_t m, int64_t n, int64_t pad, cx alpha)
{
    const int64_t ka = side == 'L' ? m : n;
    const int64_t lda = (ka > 0 ? ka : 1) + pad;
    const int64_t ldb = (order == 'C' ? m : n) + 1;
    const int64_t lb = mlen(order, m, n, ldb);
    void *a = tri_buf(t, order, ka, lda);
    void *b = rand_buf(t, lb), *want = dup_buf(t, b, lb);
    describe("%ctr%s %c side=%c uplo=%c trans=%c diag=%c m=%lld n=%lld alpha=%g%+gi", tname[t],
             solve ? "sm" : "mm", order, side, uplo, trans, diag, (long long)m, (long long)n,
             alpha.re, alpha.im);
    assert_int_equal(lib_trm(t, solve, order, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb),
                     0);
    if (solve)
        ref_trsm(t, order, side, uplo, trans, diag, m, n, alpha, a, lda, want, ldb);
    else
        ref_trmm(t, order, side, uplo, trans, diag, m, n, alpha, a, lda, want, ldb);
    assert_same(t, b, want, lb);
    free(a);
    free(b);
    free(want);
}

static void trm_grid(void)
{
    static const int64_t sizes[] = {0, 1, 3, 11};
    for (int t = 0; t < NTYPES; t++)
        for (int solve = 0; solve < 2; solve++)
            for (int o = 0; o < 2; o++)
                for (int sd = 0; sd < 2; sd++)
                    for (int u = 0; u < 2; u++)
                        for (int tr = 0; tr < 3; tr++)
                            for (int d = 0; d < 2; d++) {
                                const char order = orders[o], side = "LR"[sd], uplo = "UL"[u];
                                const char trans = transes[tr], diag = "NU"[d];
                                for (size_t im = 0; im < 4; im++)
                                    for (size_t in = 0; in < 4; in++)
                                        for (int w = 0; w < 4; w++)
                                            check_trm(t, solve, order, side, uplo, trans, diag,
                                                      sizes[im], sizes[in], w % 2,
                                                      scalar(t, w == 3 ? 3 : w));
                                /* wide enough for the vector loops' full blocks */
                                check_trm(t, solve, order, side, uplo, trans, diag, 40, 37, 1,
                                          scalar(t, 3));
                            }
    /* Sums longer than one block, and more x values than one gathered
     * block (8 KiB each). */
    for (int t = 0; t < NTYPES; t++) {
        const int64_t big = 8192 / (int64_t)tsize[t] + 5;
        for (int solve = 0; solve < 2; solve++)
            for (int u = 0; u < 2; u++)
                for (int tr = 0; tr < 3; tr += 2) {
                    const char uplo = "UL"[u], trans = transes[tr];
                    check_trm(t, solve, 'C', 'R', uplo, trans, 'N', big, 3, 0, scalar(t, 4));
                    check_trm(t, solve, 'C', 'L', uplo, trans, 'N', 3, big, 0, scalar(t, 4));
                    if (u == 0 && tr == 0) { /* n^2 work: once */
                        check_trm(t, solve, 'C', 'R', uplo, trans, 'N', 2, big, 0, scalar(t, 1));
                        check_trm(t, solve, 'C', 'L', uplo, trans, 'N', big, 2, 0, scalar(t, 1));
                    }
                }
    }
}

static void test_trmm_and_trsm_equal_the_documented_order(void **state)
{
    (void)state;
    on_every_isa(trm_grid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syrk_equals_a_sequential_sum_per_element),
        cmocka_unit_test(test_symm_equals_a_sequential_sum_per_element),
        cmocka_unit_test(test_trmm_and_trsm_equal_the_documented_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
