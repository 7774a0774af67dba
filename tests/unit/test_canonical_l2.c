/* Unit tests of the canonical level-2 BLAS (gemv, ger, trmv, trsv;
 * shim/blas/canonical_l2.c; symv, syr, syr2, hemv, her and her2,
 * shim/blas/canonical_sym.c):
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

/* ---- level 2 ---------------------------------------------------------------- */

static const int64_t l2_sizes[] = {0, 1, 3, 8, 17, 37, 70};
#define N_L2 (sizeof l2_sizes / sizeof l2_sizes[0])
static const int64_t l2_incs[][2] = {{1, 1}, {-2, 3}, {2, -1}};
#define N_L2INC (sizeof l2_incs / sizeof l2_incs[0])

static int lib_gemv(int t, char order, char trans, int64_t m, int64_t n, cx alpha, const void *a,
                    int64_t lda, const void *x, int64_t incx, cx beta, void *y, int64_t incy)
{
    const struct sc al = sc_of(alpha), be = sc_of(beta);
    switch (t) {
    case TS: return canon_sgemv(order, trans, m, n, al.f[0], a, lda, x, incx, be.f[0], y, incy);
    case TD: return canon_dgemv(order, trans, m, n, al.d[0], a, lda, x, incx, be.d[0], y, incy);
    case TC: return canon_cgemv(order, trans, m, n, al.f, a, lda, x, incx, be.f, y, incy);
    default: return canon_zgemv(order, trans, m, n, al.d, a, lda, x, incx, be.d, y, incy);
    }
}


static void ref_gemv(int t, char order, char trans, int64_t m, int64_t n, cx alpha, const void *a,
                     int64_t lda, const void *x, int64_t incx, cx beta, void *y, int64_t incy)
{
    const int64_t leny = trans == 'N' ? m : n, lenx = trans == 'N' ? n : m;
    if (m == 0 || n == 0 || (is_zero(alpha) && is_one(beta)))
        return;
    for (int64_t i = 0; i < leny; i++) {
        const int64_t yi = vidx(leny, incy, i);
        cx s = {0, 0};
        if (is_zero(alpha)) {
            st(t, y, yi, ab0(t, beta, ld(t, y, yi)));
            continue;
        }
        if ((order == 'C') == (trans != 'N')) { /* along A's stored columns: LANES */
            cx *lanes = ref_chunks(lenx);
            for (int64_t j = 0; j < lenx; j++)
                *ref_lane(lanes, j) = cmac(t, *ref_lane(lanes, j), op_at(t, order, trans, a, lda, i, j),
                                           ld(t, x, vidx(lenx, incx, j)));
            s = ref_finish(t, lanes, lenx);
        } else {
            for (int64_t j = 0; j < lenx; j++)
                s = cmac(t, s, op_at(t, order, trans, a, lda, i, j), ld(t, x, vidx(lenx, incx, j)));
        }
        st(t, y, yi, ab(t, alpha, beta, s, ld(t, y, yi)));
    }
}

/* One gemv call against the reference. */
static void check_gemv(int t, char order, char trans, int64_t m, int64_t n, int64_t pad,
                       int64_t incx, int64_t incy, cx alpha, cx beta)
{
    const int64_t lda = (order == 'C' ? m : n) + pad;
    const int64_t leny = trans == 'N' ? m : n, lenx = trans == 'N' ? n : m;
    void *a = rand_buf(t, mlen(order, m, n, lda > 0 ? lda : 1));
    void *x = rand_buf(t, vlen(lenx, incx)), *y = rand_buf(t, vlen(leny, incy));
    void *want = dup_buf(t, y, vlen(leny, incy));
    describe("%cgemv %c%c m=%lld n=%lld lda=%lld incx=%lld incy=%lld alpha=%g%+gi "
             "beta=%g%+gi",
             tname[t], order, trans, (long long)m, (long long)n, (long long)lda, (long long)incx,
             (long long)incy, alpha.re, alpha.im, beta.re, beta.im);
    assert_int_equal(
        lib_gemv(t, order, trans, m, n, alpha, a, lda > 0 ? lda : 1, x, incx, beta, y, incy), 0);
    ref_gemv(t, order, trans, m, n, alpha, a, lda > 0 ? lda : 1, x, incx, beta, want, incy);
    assert_same(t, y, want, vlen(leny, incy));
    free(a);
    free(x);
    free(y);
    free(want);
}

static void gemv_grid(void)
{
    for (int t = 0; t < NTYPES; t++)
        for (int o = 0; o < 2; o++)
            for (int tr = 0; tr < 3; tr++)
                for (size_t im = 0; im < N_L2; im++)
                    for (size_t in = 0; in < N_L2; in++)
                        for (size_t inc = 0; inc < N_L2INC; inc++)
                            for (size_t p = 0; p < N_AB; p++)
                                check_gemv(t, orders[o], transes[tr], l2_sizes[im], l2_sizes[in],
                                           (int64_t)(p % 2) * 3, l2_incs[inc][0], l2_incs[inc][1],
                                           scalar(t, ab_pairs[p][0]), scalar(t, ab_pairs[p][1]));
    /* A leading dimension of 1024 floats, whose columns share cache sets
     * (the AVX2 column dots then run their two groups skewed), with more
     * and with fewer rows than the skew. */
    for (int t = 0; t < NTYPES; t++)
        for (int tr = 1; tr < 3; tr++) {
            check_gemv(t, 'C', transes[tr], 300, 40, 1024 - 300, 1, -1, scalar(t, 3), scalar(t, 4));
            check_gemv(t, 'C', transes[tr], 100, 35, 1024 - 100, 2, 1, scalar(t, 1), scalar(t, 0));
            check_gemv(t, 'R', 'N', 40, 300, 1024 - 300, 1, 1, scalar(t, 1), scalar(t, 1));
        }
    /* Longer than the block of sums (8 KiB) in either direction. */
    for (int t = 0; t < NTYPES; t++)
        for (int tr = 0; tr < 3; tr++) {
            const int64_t big = 8192 / (int64_t)tsize[t] + 37;
            check_gemv(t, 'C', transes[tr], big, 5, 1, 1, 1, scalar(t, 3), scalar(t, 4));
            check_gemv(t, 'C', transes[tr], 6, big, 0, -1, 2, scalar(t, 3), scalar(t, 4));
        }
    /* Column dots around the chunk boundaries (32768 terms), 1 .. 9
     * columns (groups of 4 and the rest), contiguous and strided x. */
    static const int64_t long_m[] = {32767, 32768, 32769, 98305};
    for (int t = 0; t < NTYPES; t++)
        for (size_t i = 0; i < sizeof long_m / sizeof long_m[0]; i++)
            for (int64_t cols = 1; cols <= 9; cols += 4) {
                check_gemv(t, 'C', t % 2 ? 'C' : 'T', long_m[i], cols, 3, i % 2 ? -2 : 1, 1,
                           scalar(t, 3), scalar(t, 4));
                check_gemv(t, 'R', 'N', cols, long_m[i], 0, 1, -1, scalar(t, 1), scalar(t, 0));
            }
}

static void test_gemv_equals_a_sequential_sum_or_lanes_per_output(void **state)
{
    (void)state;
    on_every_isa(gemv_grid);
}

/* Shapes of at least 2^18 products, so a gemv splits its outputs among
 * threads: uneven lengths (not multiples of the split unit), padded
 * leading dimensions and negative or strided increments. */
static const struct {
    char order, trans;
    int64_t m, n, pad, incx, incy;
} split_shapes[] = {
    {'C', 'N', 1037, 301, 3, 1, 1},   {'C', 'T', 263, 1013, 0, -2, 1},
    {'C', 'C', 517, 611, 5, 1, -3},   {'R', 'N', 389, 811, 1, 3, -1},
    {'R', 'T', 1201, 223, 0, -1, 2},  {'R', 'C', 700, 450, 2, 1, 1},
    {'C', 'T', 40000, 41, 1, 1, 1},   {'C', 'C', 65600, 19, 0, 3, -1},
    {'R', 'N', 20, 40000, 2, -1, 1},  {'C', 'T', 140001, 3, 1, -1, 1},
    {'C', 'C', 131072, 9, 0, 1, -2},  {'R', 'N', 5, 200003, 3, 2, 1},
};

/* Every split shape under threads 1 .. 8 against one reference. */
static void gemv_threads_grid(void)
{
    static const int counts[] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int t = 0; t < NTYPES; t++)
        for (size_t i = 0; i < sizeof split_shapes / sizeof split_shapes[0]; i++) {
            const char order = split_shapes[i].order, trans = split_shapes[i].trans;
            const int64_t m = split_shapes[i].m, n = split_shapes[i].n;
            const int64_t incx = split_shapes[i].incx, incy = split_shapes[i].incy;
            const int64_t lda = (order == 'C' ? m : n) + split_shapes[i].pad;
            const int64_t leny = trans == 'N' ? m : n, lenx = trans == 'N' ? n : m;
            const cx alpha = scalar(t, 3), beta = scalar(t, 4);
            void *a = rand_buf(t, mlen(order, m, n, lda));
            void *x = rand_buf(t, vlen(lenx, incx)), *y0 = rand_buf(t, vlen(leny, incy));
            void *want = dup_buf(t, y0, vlen(leny, incy));
            ref_gemv(t, order, trans, m, n, alpha, a, lda, x, incx, beta, want, incy);
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                void *y = dup_buf(t, y0, vlen(leny, incy));
                canon_set_threads(counts[c]);
                assert_int_equal(canon_threads(), counts[c]);
                describe("%cgemv %c%c m=%lld n=%lld lda=%lld incx=%lld incy=%lld threads=%d",
                         tname[t], order, trans, (long long)m, (long long)n, (long long)lda,
                         (long long)incx, (long long)incy, counts[c]);
                assert_int_equal(
                    lib_gemv(t, order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy), 0);
                assert_same(t, y, want, vlen(leny, incy));
                free(y);
            }
            canon_set_threads(1);
            free(a);
            free(x);
            free(y0);
            free(want);
        }
}

static void test_gemv_same_bits_any_thread_count(void **state)
{
    (void)state;
    const uint64_t worker_parts = canon_pool_worker_parts();
    on_every_isa(gemv_threads_grid);
    /* the test proves something only if workers computed parts */
    assert_true(canon_pool_worker_parts() > worker_parts);
}

static int lib_ger(int t, int conj, char order, int64_t m, int64_t n, cx alpha, const void *x,
                   int64_t incx, const void *y, int64_t incy, void *a, int64_t lda)
{
    const struct sc al = sc_of(alpha);
    switch (t) {
    case TS: return canon_sger(order, m, n, al.f[0], x, incx, y, incy, a, lda);
    case TD: return canon_dger(order, m, n, al.d[0], x, incx, y, incy, a, lda);
    case TC:
        return conj ? canon_cgerc(order, m, n, al.f, x, incx, y, incy, a, lda)
                    : canon_cgeru(order, m, n, al.f, x, incx, y, incy, a, lda);
    default:
        return conj ? canon_zgerc(order, m, n, al.d, x, incx, y, incy, a, lda)
                    : canon_zgeru(order, m, n, al.d, x, incx, y, incy, a, lda);
    }
}

static void ref_ger(int t, int conj, char order, int64_t m, int64_t n, cx alpha, const void *x,
                    int64_t incx, const void *y, int64_t incy, void *a, int64_t lda)
{
    if (m == 0 || n == 0 || is_zero(alpha))
        return;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            const int64_t e = midx(order, i, j, lda);
            const cx xi = ld(t, x, vidx(m, incx, i));
            cx yj = ld(t, y, vidx(n, incy, j));
            if (conj)
                yj = conj_(yj);
            if (order == 'C')
                st(t, a, e, cmac(t, ld(t, a, e), xi, cmul(t, alpha, yj)));
            else
                st(t, a, e, cmac(t, ld(t, a, e), yj, cmul(t, alpha, xi)));
        }
}

static void ger_grid(void)
{
    for (int t = 0; t < NTYPES; t++)
        for (int conj = 0; conj <= cplx(t); conj++)
            for (int o = 0; o < 2; o++)
                for (size_t im = 0; im < N_L2; im++)
                    for (size_t in = 0; in < N_L2; in++)
                        for (size_t inc = 0; inc < N_L2INC; inc++)
                            for (int w = 0; w < 5; w++) {
                                const char order = orders[o];
                                const int64_t m = l2_sizes[im], n = l2_sizes[in];
                                const int64_t incx = l2_incs[inc][0], incy = l2_incs[inc][1];
                                const int64_t lda = (order == 'C' ? m : n) + w % 2 + 1;
                                const cx alpha = scalar(t, w);
                                void *x = rand_buf(t, vlen(m, incx)),
                                     *y = rand_buf(t, vlen(n, incy));
                                void *a = rand_buf(t, mlen(order, m, n, lda));
                                void *want = dup_buf(t, a, mlen(order, m, n, lda));
                                describe("%cger%s %c m=%lld n=%lld lda=%lld incx=%lld incy=%lld "
                                         "alpha=%g%+gi",
                                         tname[t], conj ? "c" : "", order, (long long)m,
                                         (long long)n, (long long)lda, (long long)incx,
                                         (long long)incy, alpha.re, alpha.im);
                                assert_int_equal(
                                    lib_ger(t, conj, order, m, n, alpha, x, incx, y, incy, a, lda),
                                    0);
                                ref_ger(t, conj, order, m, n, alpha, x, incx, y, incy, want, lda);
                                assert_same(t, a, want, mlen(order, m, n, lda));
                                free(x);
                                free(y);
                                free(a);
                                free(want);
                            }
}

static void test_ger_equals_one_fma_per_element_after_alpha(void **state)
{
    (void)state;
    on_every_isa(ger_grid);
}


static int lib_trv(int t, int solve, char order, char uplo, char trans, char diag, int64_t n,
                   const void *a, int64_t lda, void *x, int64_t incx)
{
    switch (t) {
    case TS:
        return solve ? canon_strsv(order, uplo, trans, diag, n, a, lda, x, incx)
                     : canon_strmv(order, uplo, trans, diag, n, a, lda, x, incx);
    case TD:
        return solve ? canon_dtrsv(order, uplo, trans, diag, n, a, lda, x, incx)
                     : canon_dtrmv(order, uplo, trans, diag, n, a, lda, x, incx);
    case TC:
        return solve ? canon_ctrsv(order, uplo, trans, diag, n, a, lda, x, incx)
                     : canon_ctrmv(order, uplo, trans, diag, n, a, lda, x, incx);
    default:
        return solve ? canon_ztrsv(order, uplo, trans, diag, n, a, lda, x, incx)
                     : canon_ztrmv(order, uplo, trans, diag, n, a, lda, x, incx);
    }
}

static void ref_trmv(int t, char order, char uplo, char trans, char diag, int64_t n, const void *a,
                     int64_t lda, void *x, int64_t incx)
{
    void *old = dup_buf(t, x, vlen(n, incx));
    for (int64_t i = 0; i < n; i++) {
        cx s = {0, 0};
        for (int64_t j = 0; j < n; j++) {
            if (!in_tri(uplo, trans, i, j))
                continue;
            const cx xj = ld(t, old, vidx(n, incx, j));
            if (i == j && diag == 'U')
                s = cadd(t, s, xj);
            else
                s = cmac(t, s, op_at(t, order, trans, a, lda, i, j), xj);
        }
        st(t, x, vidx(n, incx, i), s);
    }
    free(old);
}

static void ref_trsv(int t, char order, char uplo, char trans, char diag, int64_t n, const void *a,
                     int64_t lda, void *x, int64_t incx)
{
    const int upper = (uplo == 'U') == (trans == 'N');
    for (int64_t step = 0; step < n; step++) {
        const int64_t i = upper ? n - 1 - step : step;
        cx s = ld(t, x, vidx(n, incx, i));
        for (int64_t j = 0; j < n; j++)
            if (j != i && in_tri(uplo, trans, i, j))
                s = cmac(t, s, neg(op_at(t, order, trans, a, lda, i, j)),
                         ld(t, x, vidx(n, incx, j)));
        if (diag == 'N')
            s = cdiv(t, s, op_at(t, order, trans, a, lda, i, i));
        st(t, x, vidx(n, incx, i), s);
    }
}

static void trv_grid(void)
{
    static const int64_t sizes[] = {0, 1, 2, 5, 16, 33};
    static const int64_t incs[] = {1, -2, 3};
    for (int t = 0; t < NTYPES; t++)
        for (int solve = 0; solve < 2; solve++)
            for (int o = 0; o < 2; o++)
                for (int u = 0; u < 2; u++)
                    for (int tr = 0; tr < 3; tr++)
                        for (int d = 0; d < 2; d++)
                            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
                                for (size_t ix = 0; ix < 3; ix++) {
                                    const char order = orders[o], uplo = "UL"[u],
                                               trans = transes[tr], diag = "NU"[d];
                                    const int64_t n = sizes[s], incx = incs[ix];
                                    const int64_t lda = (n > 0 ? n : 1) + (int64_t)ix;
                                    void *a = tri_buf(t, order, n, lda);
                                    void *x = rand_buf(t, vlen(n, incx));
                                    void *want = dup_buf(t, x, vlen(n, incx));
                                    describe("%ctr%s %c uplo=%c trans=%c diag=%c n=%lld "
                                             "lda=%lld incx=%lld",
                                             tname[t], solve ? "sv" : "mv", order, uplo, trans,
                                             diag, (long long)n, (long long)lda, (long long)incx);
                                    assert_int_equal(lib_trv(t, solve, order, uplo, trans, diag, n,
                                                             a, lda, x, incx),
                                                     0);
                                    if (solve)
                                        ref_trsv(t, order, uplo, trans, diag, n, a, lda, want,
                                                 incx);
                                    else
                                        ref_trmv(t, order, uplo, trans, diag, n, a, lda, want,
                                                 incx);
                                    assert_same(t, x, want, vlen(n, incx));
                                    free(a);
                                    free(x);
                                    free(want);
                                }
}

static void test_trmv_and_trsv_equal_the_documented_substitution(void **state)
{
    (void)state;
    on_every_isa(trv_grid);
}

/* ---- symv --------------------------------------------------------------- */

static int lib_symv(int t, char order, char uplo, int64_t n, cx alpha, const void *a, int64_t lda,
                    const void *x, int64_t incx, cx beta, void *y, int64_t incy)
{
    const struct sc al = sc_of(alpha), be = sc_of(beta);
    switch (t) { /* the complex types: hemv */
    case TS: return canon_ssymv(order, uplo, n, al.f[0], a, lda, x, incx, be.f[0], y, incy);
    case TD: return canon_dsymv(order, uplo, n, al.d[0], a, lda, x, incx, be.d[0], y, incy);
    case TC: return canon_chemv(order, uplo, n, al.f, a, lda, x, incx, be.f, y, incy);
    default: return canon_zhemv(order, uplo, n, al.d, a, lda, x, incx, be.d, y, incy);
    }
}

/* The contract, one output at a time, on the column-major view (a
 * row-major call is that of the other triangle; hemv's, as CBLAS's, also
 * on conj(x), with alpha, beta and y conjugated). S(i, j): stored element
 * (i, j) of the column-major view. herm: hemv (the dots' terms
 * conjugated, the diagonal's imaginary part taken as +0), else symv. */
static cx cj(int t, cx v, int on)
{
    (void)t;
    return on ? conj_(v) : v;
}

static void ref_sym(int t, int herm, char order, char uplo, int64_t n, cx alpha, const void *a,
                    int64_t lda, const void *x, int64_t incx, cx beta, void *y, int64_t incy)
{
    const int r = order == 'R', c = herm && r;
    const char u = r ? (uplo == 'U' ? 'L' : 'U') : uplo;
#define S(i, j) ld(t, a, (i) + (j) * lda)
#define X(j) cj(t, ld(t, x, vidx(n, incx, j)), c)
    if (n == 0 || (is_zero(alpha) && is_one(beta)))
        return;
    const cx al = cj(t, alpha, c), be = cj(t, beta, c);
    for (int64_t i = 0; i < n; i++) {
        const int64_t yi = vidx(n, incy, i);
        if (is_zero(alpha)) {
            st(t, y, yi, ab0(t, beta, ld(t, y, yi)));
            continue;
        }
        const int64_t lo = u == 'L' ? i + 1 : 0, len = u == 'L' ? n - 1 - i : i;
        cx *lanes = ref_chunks(len);
        for (int64_t e = 0; e < len; e++)
            *ref_lane(lanes, e) =
                cmac(t, *ref_lane(lanes, e), cj(t, S(lo + e, i), herm), X(lo + e));
        const cx d = ref_finish(t, lanes, len);
        const cx diag = herm ? (cx){S(i, i).re, 0} : S(i, i);
        cx s = {0, 0};
        if (u == 'L') {
            for (int64_t j = 0; j < i; j++)
                s = cmac(t, s, S(i, j), X(j));
            s = cadd(t, cmac(t, s, diag, X(i)), d);
        } else {
            s = cmac(t, d, diag, X(i));
            for (int64_t j = i + 1; j < n; j++)
                s = cmac(t, s, S(i, j), X(j));
        }
        st(t, y, yi, cj(t, ab(t, al, be, s, cj(t, ld(t, y, yi), c)), c));
    }
#undef S
#undef X
}

/* One symv (complex types: hemv) call against the reference. The
 * triangle not read holds NaN, and so does the imaginary part of a
 * Hermitian diagonal, so reading them shows. */
static void check_symv(int t, char order, char uplo, int64_t n, int64_t pad, int64_t incx,
                       int64_t incy, cx alpha, cx beta)
{
    const int64_t lda = n + pad > 0 ? n + pad : 1;
    void *a = rand_buf(t, mlen('C', n, n, lda));
    const char u = order == 'C' ? uplo : uplo == 'U' ? 'L' : 'U';
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++)
            if (u == 'L' ? i < j : i > j)
                st(t, a, i + j * lda, (cx){NAN, NAN});
            else if (i == j && cplx(t))
                st(t, a, i + j * lda, (cx){ld(t, a, i + j * lda).re, NAN});
    void *x = rand_buf(t, vlen(n, incx)), *y = rand_buf(t, vlen(n, incy));
    void *want = dup_buf(t, y, vlen(n, incy));
    describe("%c%s %c%c n=%lld lda=%lld incx=%lld incy=%lld alpha=%g%+gi beta=%g%+gi", tname[t],
             cplx(t) ? "hemv" : "symv", order, uplo, (long long)n, (long long)lda,
             (long long)incx, (long long)incy, alpha.re, alpha.im, beta.re, beta.im);
    assert_int_equal(lib_symv(t, order, uplo, n, alpha, a, lda, x, incx, beta, y, incy), 0);
    ref_sym(t, cplx(t), order, uplo, n, alpha, a, lda, x, incx, beta, want, incy);
    assert_same(t, y, want, vlen(n, incy));
    free(a);
    free(x);
    free(y);
    free(want);
}

/* One symmetric level-2 check per type s and d, layout, triangle, size,
 * pair of increments and scalar case p (p odd: a padded lda). */
typedef void sym_check(int t, char order, char uplo, int64_t n, int64_t pad, int64_t incx,
                       int64_t incy, int p);

static void sym_grid(sym_check *check, int ncases)
{
    static const char uplos[] = {'U', 'L'};
    for (int t = TS; t <= TD; t++)
        for (int o = 0; o < 2; o++)
            for (int up = 0; up < 2; up++)
                for (size_t in = 0; in < N_L2; in++)
                    for (size_t inc = 0; inc < N_L2INC; inc++)
                        for (int p = 0; p < ncases; p++)
                            check(t, orders[o], uplos[up], l2_sizes[in], p % 2 * 3,
                                  l2_incs[inc][0], l2_incs[inc][1], p);
}

static void symv_case(int t, char order, char uplo, int64_t n, int64_t pad, int64_t incx,
                      int64_t incy, int p)
{
    check_symv(t, order, uplo, n, pad, incx, incy, scalar(t, ab_pairs[p][0]),
               scalar(t, ab_pairs[p][1]));
}

static void symv_grid(void)
{
    static const char uplos[] = {'U', 'L'};
    sym_grid(symv_case, (int)N_AB);
    /* Longer columns than the dot kernels' unrolled loops (a dot of more
     * than one chunk, 32768 terms, would take an 8 GB matrix: the dots'
     * own tests cover their chunks). */
    for (int t = TS; t <= TD; t++)
        for (int up = 0; up < 2; up++)
            check_symv(t, 'C', uplos[up], 300, 5, up ? -1 : 1, 1, scalar(t, 3), scalar(t, 4));
}

static void test_symv_equals_a_sequence_and_a_lanes_dot_per_output(void **state)
{
    (void)state;
    on_every_isa(symv_grid);
}

/* Column j of the stored triangle u of the column-major `want`, as syr2
 * and her2 update it: A_ij = CMAC(A_ij, x_i, t1), then (two) A_ij =
 * CMAC(A_ij, y_i, t2), x and y conjugated when c; a complex diagonal
 * element then gets +0 for its imaginary part. */
static void ref_rank2_column(int t, void *want, int64_t lda, char u, int64_t n, int64_t j,
                             const void *x, int64_t incx, const void *y, int64_t incy, int two,
                             int c, cx t1, cx t2)
{
    for (int64_t i = u == 'L' ? j : 0; i < (u == 'L' ? n : j + 1); i++) {
        cx v = cmac(t, ld(t, want, i + j * lda), cj(t, ld(t, x, vidx(n, incx, i)), c), t1);
        if (two)
            v = cmac(t, v, cj(t, ld(t, y, vidx(n, incy, i)), c), t2);
        if (i == j && cplx(t))
            v.im = 0;
        st(t, want, i + j * lda, v);
    }
}

/* syr2 (syr when !two: no y) against the contract, element by element;
 * the triangle not written must come back unchanged (assert_same
 * compares all of A). */
static void check_syr2(int t, int two, char order, char uplo, int64_t n, int64_t pad,
                       int64_t incx, int64_t incy, cx alpha)
{
    const int64_t lda = n + pad > 0 ? n + pad : 1;
    void *a = rand_buf(t, mlen('C', n, n, lda)), *want = dup_buf(t, a, mlen('C', n, n, lda));
    void *x = rand_buf(t, vlen(n, incx)), *y = rand_buf(t, vlen(n, incy));
    const char u = order == 'C' ? uplo : uplo == 'U' ? 'L' : 'U';
    describe("%csyr%s %c%c n=%lld lda=%lld incx=%lld incy=%lld alpha=%g", tname[t], two ? "2" : "",
             order, uplo, (long long)n, (long long)lda, (long long)incx, (long long)incy, alpha.re);
    const struct sc al = sc_of(alpha);
    int rc = t == TS ? two ? canon_ssyr2(order, uplo, n, al.f[0], x, incx, y, incy, a, lda)
                           : canon_ssyr(order, uplo, n, al.f[0], x, incx, a, lda)
             : two   ? canon_dsyr2(order, uplo, n, al.d[0], x, incx, y, incy, a, lda)
                     : canon_dsyr(order, uplo, n, al.d[0], x, incx, a, lda);
    assert_int_equal(rc, 0);
    const void *yy = two ? y : x;
    const int64_t incyy = two ? incy : incx;
    for (int64_t j = 0; n > 0 && !is_zero(alpha) && j < n; j++) {
        const cx t1 = cmul(t, alpha, ld(t, yy, vidx(n, incyy, j)));
        const cx t2 = cmul(t, alpha, ld(t, x, vidx(n, incx, j)));
        ref_rank2_column(t, want, lda, u, n, j, x, incx, y, incy, two, 0, t1, t2);
    }
    assert_same(t, a, want, mlen('C', n, n, lda));
    free(a);
    free(want);
    free(x);
    free(y);
}

static void syr2_case(int t, char order, char uplo, int64_t n, int64_t pad, int64_t incx,
                      int64_t incy, int p)
{
    check_syr2(t, 1, order, uplo, n, pad, incx, incy, scalar(t, p));
}

static void syr_case(int t, char order, char uplo, int64_t n, int64_t pad, int64_t incx,
                     int64_t incy, int p)
{
    check_syr2(t, 0, order, uplo, n, pad, incx, incy, scalar(t, p));
}

static void syr2_grid(void)
{
    sym_grid(syr2_case, 5); /* alpha 0, 1, -1 and two others */
    sym_grid(syr_case, 5);
}

static void test_syr2_and_syr_equal_two_and_one_fmas_per_element_after_alpha(void **state)
{
    (void)state;
    on_every_isa(syr2_grid);
}

/* ---- hemv, her, her2 --------------------------------------------------------- */

/* her2 (her when !two, alpha real) against the contract. */
static void check_her2(int t, int two, char order, char uplo, int64_t n, int64_t pad,
                       int64_t incx, int64_t incy, cx alpha)
{
    const int r = order == 'R';
    const int64_t lda = n + pad > 0 ? n + pad : 1;
    if (!two)
        alpha.im = 0;
    void *a = rand_buf(t, mlen('C', n, n, lda)), *want = dup_buf(t, a, mlen('C', n, n, lda));
    void *x = rand_buf(t, vlen(n, incx)), *y = rand_buf(t, vlen(n, incy));
    const char u = r ? (uplo == 'U' ? 'L' : 'U') : uplo;
    describe("%cher%s %c%c n=%lld lda=%lld incx=%lld incy=%lld alpha=%g%+gi", tname[t],
             two ? "2" : "", order, uplo, (long long)n, (long long)lda, (long long)incx,
             (long long)incy, alpha.re, alpha.im);
    const struct sc al = sc_of(alpha);
    int rc = t == TC ? two ? canon_cher2(order, uplo, n, al.f, x, incx, y, incy, a, lda)
                           : canon_cher(order, uplo, n, al.f[0], x, incx, a, lda)
             : two   ? canon_zher2(order, uplo, n, al.d, x, incx, y, incy, a, lda)
                     : canon_zher(order, uplo, n, al.d[0], x, incx, a, lda);
    assert_int_equal(rc, 0);
    const cx alr = cj(t, alpha, r);
    for (int64_t j = 0; n > 0 && !is_zero(alpha) && j < n; j++) {
        const cx xj = cj(t, ld(t, x, vidx(n, incx, j)), r);
        cx t1, t2 = {0, 0};
        if (two) {
            t1 = cmul(t, alr, conj_(cj(t, ld(t, y, vidx(n, incy, j)), r)));
            t2 = conj_(cmul(t, alr, xj));
        } else {
            t1 = (cx){rmul(t, alr.re, xj.re), -rmul(t, alr.re, xj.im)};
        }
        ref_rank2_column(t, want, lda, u, n, j, x, incx, y, incy, two, r, t1, t2);
    }
    assert_same(t, a, want, mlen('C', n, n, lda));
    free(a);
    free(want);
    free(x);
    free(y);
}

static void herm_grid(void)
{
    static const char uplos[] = {'U', 'L'};
    for (int t = TC; t <= TZ; t++)
        for (int o = 0; o < 2; o++)
            for (int up = 0; up < 2; up++)
                for (size_t in = 0; in < N_L2; in++)
                    for (size_t inc = 0; inc < N_L2INC; inc++) {
                        const int64_t n = l2_sizes[in], ix = l2_incs[inc][0], iy = l2_incs[inc][1];
                        for (int p = 0; p < (int)N_AB; p++)
                            check_symv(t, orders[o], uplos[up], n, p % 2 * 3, ix, iy,
                                       scalar(t, ab_pairs[p][0]), scalar(t, ab_pairs[p][1]));
                        for (int p = 0; p < 5; p++) {
                            check_her2(t, 1, orders[o], uplos[up], n, p % 2 * 3, ix, iy,
                                       scalar(t, p));
                            check_her2(t, 0, orders[o], uplos[up], n, p % 2 * 3, ix, iy,
                                       scalar(t, p));
                        }
                    }
}

static void test_hemv_her_and_her2_equal_symv_syr_and_syr2_for_hermitian_a(void **state)
{
    (void)state;
    on_every_isa(herm_grid);
}

/* Arguments the BLAS rejects are rejected. */
static void test_symv_syr_and_syr2_reject_what_the_blas_rejects(void **state)
{
    (void)state;
    double a[4] = {1, 2, 3, 4}, x[2] = {1, 1}, y[2] = {0, 0};
    assert_int_equal(canon_dsymv('C', 'X', 2, 1, a, 2, x, 1, 0, y, 1), -1);
    assert_int_equal(canon_dsymv('C', 'U', 2, 1, a, 1, x, 1, 0, y, 1), -1);
    assert_int_equal(canon_dsymv('C', 'U', 2, 1, a, 2, x, 0, 0, y, 1), -1);
    assert_int_equal(canon_dsymv('C', 'U', 2, 1, a, 2, x, 1, 0, y, 0), -1);
    assert_int_equal(canon_dsymv('C', 'U', -1, 1, a, 2, x, 1, 0, y, 1), -1);
    assert_int_equal(canon_dsymv('Q', 'U', 2, 1, a, 2, x, 1, 0, y, 1), -1);
    assert_int_equal(canon_dsyr2('C', 'U', 2, 1, x, 1, y, 1, a, 1), -1);
    assert_int_equal(canon_dsyr2('C', 'U', 2, 1, x, 0, y, 1, a, 2), -1);
    assert_int_equal(canon_dsyr2('C', 'X', 2, 1, x, 1, y, 1, a, 2), -1);
    assert_int_equal(canon_dsyr('C', 'U', 2, 1, x, 0, a, 2), -1);
    assert_int_equal(canon_dsyr('R', 'L', 2, 1, x, 1, a, 1), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemv_equals_a_sequential_sum_or_lanes_per_output),
        cmocka_unit_test(test_gemv_same_bits_any_thread_count),
        cmocka_unit_test(test_ger_equals_one_fma_per_element_after_alpha),
        cmocka_unit_test(test_trmv_and_trsv_equal_the_documented_substitution),
        cmocka_unit_test(test_symv_equals_a_sequence_and_a_lanes_dot_per_output),
        cmocka_unit_test(test_syr2_and_syr_equal_two_and_one_fmas_per_element_after_alpha),
        cmocka_unit_test(test_hemv_her_and_her2_equal_symv_syr_and_syr2_for_hermitian_a),
        cmocka_unit_test(test_symv_syr_and_syr2_reject_what_the_blas_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
