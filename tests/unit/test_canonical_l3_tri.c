/* Unit tests of trmm and trsm on the canonical GEMM core
 * (shim/blas/canonical_l3_tri.c, its leaves in canonical_l3_leaf.c):
 *   - every type, side, uplo, trans and diag, at odd shapes that cross
 *     the diagonal blocks (64 positions), the halving and trmm's blocks of
 *     512 positions and 1024 lanes, give exactly the contract's order (shim/blas/canonical.h),
 *     computed here one element at a time, on every instruction-set path
 *     this CPU has (both kernel families on it);
 *   - the bits do not depend on the thread count, where the GEMM calls
 *     and the leaves really run on the pool's workers;
 *   - the results agree with OpenBLAS's (loaded with dlopen) within a
 *     rounding tolerance: the orders differ, the answers must not.
 * (test_canonical_l3_ref.c checks small shapes and order 'R' against its
 * own reference; test_canonical_l3_gemm.c checks the core against the
 * sequential kernels.)
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

#include "canonical_ref.h"

/* One column-major call: ch = side, uplo, trans, diag. */
struct call {
    int t, solve;
    char ch[4];
    int64_t m, n, lda, ldb;
    cx alpha;
};

static cx call_op_at(const struct call *c, const void *a, int64_t i, int64_t j)
{
    if (c->ch[2] == 'N')
        return ld(c->t, a, i + j * c->lda);
    cx v = ld(c->t, a, j + i * c->lda);
    if (c->ch[2] == 'C')
        v.im = -v.im;
    return v;
}

static int op_upper(const struct call *c)
{
    return (c->ch[1] == 'U') == (c->ch[2] == 'N');
}

static int call_in_tri(const struct call *c, int64_t i, int64_t j)
{
    return op_upper(c) ? i <= j : i >= j;
}

/* The contract's trmm: per B_ij, SEQ over the triangle in increasing p,
 * then CMUL(alpha, s). */
static void ref_trmm(const struct call *c, const void *a, void *b)
{
    const int t = c->t, left = c->ch[0] == 'L';
    void *old = malloc((size_t)(c->ldb * c->n) * tsize[t]);
    memcpy(old, b, (size_t)(c->ldb * c->n) * tsize[t]);
    for (int64_t j = 0; j < c->n; j++)
        for (int64_t i = 0; i < c->m; i++) {
            cx s = {0, 0};
            for (int64_t p = 0; p < (left ? c->m : c->n); p++) {
                const int64_t ai = left ? i : p, aj = left ? p : j;
                if (!call_in_tri(c, ai, aj))
                    continue;
                const cx bv = ld(t, old, left ? p + j * c->ldb : i + p * c->ldb);
                if (ai == aj && c->ch[3] == 'U') {
                    s.re = radd(t, s.re, bv.re), s.im = radd(t, s.im, bv.im);
                    continue;
                }
                const cx av = call_op_at(c, a, ai, aj);
                s = left ? cmac(t, s, av, bv) : cmac(t, s, bv, av);
            }
            st(t, b, i + j * c->ldb, cmul(t, c->alpha, s));
        }
    free(old);
}

/* The contract's trsm (version 2): in solving order, the off-diagonal
 * terms in solving order too, then CDIV by the diagonal. */
static void ref_trsm(const struct call *c, const void *a, void *b)
{
    const int t = c->t, left = c->ch[0] == 'L';
    const int forward = left ? !op_upper(c) : op_upper(c);
    const int64_t outer = left ? c->n : c->m, inner = left ? c->m : c->n;
    const int one = c->alpha.re == 1 && c->alpha.im == 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t step = 0; step < inner; step++) {
            const int64_t q = forward ? step : inner - 1 - step;
            const int64_t i = left ? q : o, j = left ? o : q, e = i + j * c->ldb;
            cx s = one ? ld(t, b, e) : cmul(t, c->alpha, ld(t, b, e));
            for (int64_t ks = 0; ks < inner; ks++) {
                const int64_t k = forward ? ks : inner - 1 - ks;
                const int64_t ai = left ? i : k, aj = left ? k : j;
                if (k == q || !call_in_tri(c, ai, aj))
                    continue;
                const cx av = call_op_at(c, a, ai, aj);
                const cx xv = ld(t, b, left ? k + j * c->ldb : i + k * c->ldb);
                s = left ? cmac(t, s, neg(av), xv) : cmac(t, s, neg(xv), av);
            }
            if (c->ch[3] == 'N')
                s = cdiv(t, s, call_op_at(c, a, q, q));
            st(t, b, e, s);
        }
}

static int lib_call(const struct call *c, const void *a, void *b)
{
    const char *h = c->ch;
    const int64_t m = c->m, n = c->n, lda = c->lda, ldb = c->ldb;
    const float af[2] = {(float)c->alpha.re, (float)c->alpha.im};
    const double ad2[2] = {c->alpha.re, c->alpha.im};
    switch (c->t * 2 + c->solve) {
    case 0: return canon_strmm('C', h[0], h[1], h[2], h[3], m, n, af[0], a, lda, b, ldb);
    case 1: return canon_strsm('C', h[0], h[1], h[2], h[3], m, n, af[0], a, lda, b, ldb);
    case 2: return canon_dtrmm('C', h[0], h[1], h[2], h[3], m, n, ad2[0], a, lda, b, ldb);
    case 3: return canon_dtrsm('C', h[0], h[1], h[2], h[3], m, n, ad2[0], a, lda, b, ldb);
    case 4: return canon_ctrmm('C', h[0], h[1], h[2], h[3], m, n, af, a, lda, b, ldb);
    case 5: return canon_ctrsm('C', h[0], h[1], h[2], h[3], m, n, af, a, lda, b, ldb);
    case 6: return canon_ztrmm('C', h[0], h[1], h[2], h[3], m, n, ad2, a, lda, b, ldb);
    default: return canon_ztrsm('C', h[0], h[1], h[2], h[3], m, n, ad2, a, lda, b, ldb);
    }
}

static unsigned seed = 7;

static double frand(void)
{
    seed = seed * 1103515245u + 12345u;
    return (double)(seed >> 9) / (double)(1u << 23) - 0.5;
}

/* Where operands() puts +Inf in each lane of B (a position: a row for
 * side 'L', a column for 'R'), or -1 for none. */
static int64_t inf_at = -1;

/* A (dim x dim, ld lda) with a dominant diagonal, B (ldb x n), for c. */
static void operands(const struct call *c, void **a, void **b)
{
    const int64_t dim = c->ch[0] == 'L' ? c->m : c->n;
    const size_t la = (size_t)(c->lda * dim), lb = (size_t)(c->ldb * c->n);
    *a = malloc(la * tsize[c->t]), *b = malloc(lb * tsize[c->t]);
    assert_non_null(*a);
    assert_non_null(*b);
    for (size_t e = 0; e < la; e++)
        st(c->t, *a, (int64_t)e, (cx){frand(), frand()});
    for (int64_t i = 0; i < dim; i++)
        st(c->t, *a, i + i * c->lda, (cx){4 + frand(), frand()});
    for (size_t e = 0; e < lb; e++)
        st(c->t, *b, (int64_t)e, (cx){frand(), frand()});
    const int left = c->ch[0] == 'L';
    for (int64_t l = 0; inf_at >= 0 && l < (left ? c->n : c->m); l++)
        st(c->t, *b, left ? inf_at + l * c->ldb : l + inf_at * c->ldb, (cx){INFINITY, 0});
}

static void check_order(int t, int solve, const char ch[4], int64_t m, int64_t n, cx alpha)
{
    const int64_t dim = ch[0] == 'L' ? m : n;
    struct call c = {t, solve, {ch[0], ch[1], ch[2], ch[3]}, m, n, dim + 2, m + 1, alpha};
    if (!cplx(t))
        c.alpha.im = 0;
    void *a, *b;
    operands(&c, &a, &b);
    const size_t bytes = (size_t)(c.ldb * n) * tsize[t];
    void *want = malloc(bytes);
    memcpy(want, b, bytes);
    assert_int_equal(lib_call(&c, a, b), 0);
    (solve ? ref_trsm : ref_trmm)(&c, a, want);
    if (memcmp(b, want, bytes) != 0)
        fail_msg("%c%s %.4s m=%lld n=%lld [%s]: not the contract's order", "sdcz"[t],
                 solve ? "trsm" : "trmm", ch, (long long)m, (long long)n, canon_isa());
    free(a), free(b), free(want);
}

static void order_grid(int isa)
{
    static const int64_t shapes[][2] = {{45, 70}, {70, 45}, {1, 33}, {33, 1}};
    for (int t = isa == 0 ? CANON_D : 0; t < (isa == 0 ? CANON_D + 1 : CANON_NTYPES); t++)
        for (int solve = 0; solve < 2; solve++)
            for (int combo = 0; combo < 24; combo++) {
                const char ch[4] = {"LR"[combo & 1], "UL"[(combo >> 1) & 1], "NTC"[combo / 8],
                                    "NU"[(combo >> 2) & 1]};
                for (size_t s = 0; s < 4; s++)
                    check_order(t, solve, ch, shapes[s][0], shapes[s][1],
                                s % 2 ? (cx){0.75, -0.375} : (cx){1, 0});
                /* past trmm's blocks of 512 positions and several halvings,
                 * and past its 1024 lanes at a time */
                if (combo / 8 != 1) {
                    const int left = ch[0] == 'L';
                    check_order(t, solve, ch, left ? 530 : 3, left ? 3 : 530, (cx){-1.25, 0.5});
                    check_order(t, solve, ch, left ? 3 : 1030, left ? 1030 : 3, (cx){0.5, 1});
                }
            }
}

static void test_trmm_trsm_on_the_core_equal_the_documented_order(void **state)
{
    (void)state;
    static const char *const isas[] = {"scalar", "avx2", "avx512"};
    int ran = 0;
    for (int i = 0; i < 3; i++) {
        if (canon_set_isa(isas[i]) != 0 || canon_blas_set_isa(isas[i]) != 0)
            continue;
        order_grid(i); /* the scalar path is slow: one type there */
        ran++;
    }
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    assert_int_equal(ran, 1 + avx2 + canon_cpu_has_avx512());
    assert_int_equal(canon_set_isa(NULL), 0);
    assert_int_equal(canon_blas_set_isa(NULL), 0);
}

/* One +Inf in each lane of B: the outputs whose chains take it are
 * infinite, and the others, which the kernels must leave out of that term
 * (no 0 * Inf), stay as the contract computes them; on every path. */
static void test_trmm_trsm_leave_an_infinity_out_of_the_chains_without_it(void **state)
{
    (void)state;
    static const char *const isas[] = {"scalar", "avx2", "avx512"};
    for (int i = 0; i < 3; i++) {
        if (canon_set_isa(isas[i]) != 0 || canon_blas_set_isa(isas[i]) != 0)
            continue;
        for (int t = 0; t < 2; t++) /* real: complex Inf products give NaN */
            for (int combo = 0; combo < 8; combo++) {
                const char ch[4] = {"LR"[combo & 1], "UL"[(combo >> 1) & 1], "NT"[combo >> 2],
                                    'N'};
                const int left = ch[0] == 'L';
                inf_at = 37;
                check_order(t, 0, ch, left ? 200 : 9, left ? 9 : 200, (cx){0.5, 0});
                inf_at = -1;
            }
    }
    assert_int_equal(canon_set_isa(NULL), 0);
    assert_int_equal(canon_blas_set_isa(NULL), 0);
}

static void test_trmm_trsm_same_bits_any_thread_count(void **state)
{
    (void)state;
    const uint64_t before = canon_pool_worker_parts();
    for (int t = 0; t < CANON_NTYPES; t++)
        for (int solve = 0; solve < 2; solve++)
            for (int combo = 0; combo < 8; combo++) {
                const char ch[4] = {"LR"[combo & 1], "UL"[(combo >> 1) & 1], "NC"[combo >> 2],
                                    'N'};
                struct call c = {t, solve, {ch[0], ch[1], ch[2], ch[3]}, 300, 290, 303, 301,
                                 {0.75, cplx(t) ? -0.375 : 0}};
                void *a, *b;
                operands(&c, &a, &b);
                const size_t bytes = (size_t)(c.ldb * c.n) * tsize[t];
                void *b1 = malloc(bytes);
                memcpy(b1, b, bytes);
                canon_set_threads(1);
                assert_int_equal(lib_call(&c, a, b1), 0);
                canon_set_threads(3);
                assert_int_equal(lib_call(&c, a, b), 0);
                canon_set_threads(1);
                if (memcmp(b, b1, bytes) != 0)
                    fail_msg("%c%s %.4s: 1 and 3 threads differ", "sdcz"[t],
                             solve ? "trsm" : "trmm", ch);
                free(a), free(b), free(b1);
            }
    /* the workers ran parts, unless a loaded machine never scheduled them
     * while the caller did every part itself (the bits were compared
     * either way) */
    if (canon_pool_worker_parts() == before)
        print_message("note: no worker ran a part of these calls\n");
}

/* posix_memalign of more than fail_above bytes fails (0: none do), for
 * the shim's workspaces, which it allocates that way. */
static size_t fail_above;

int posix_memalign(void **p, size_t align, size_t size)
{
    static int (*real)(void **, size_t, size_t);
    if (!real)
        real = (int (*)(void **, size_t, size_t))(uintptr_t)dlsym(RTLD_NEXT, "posix_memalign");
    if (fail_above && size > fail_above)
        return ENOMEM;
    return real(p, align, size);
}

/* On a fresh thread (whose workspaces start empty), every threshold. */
static void *short_memory_calls(void *arg)
{
    (void)arg;
    /* thresholds 4 KiB .. 4 MiB, doubling, so that some fall between the
     * sizes a call's pieces ask for */
    for (size_t limit = 4 << 10; limit < (4 << 20); limit *= 2)
        for (int t = 0; t < CANON_NTYPES; t++)
            for (int solve = 0; solve < 2; solve++)
                for (int combo = 0; combo < 4; combo++) {
                    const char ch[4] = {"LR"[combo & 1], "UL"[combo >> 1], 'N', 'N'};
                    const int left = ch[0] == 'L';
                    fail_above = limit;
                    /* few lanes, a long triangle: little scratch, large
                     * GEMM pieces */
                    check_order(t, solve, ch, left ? 530 : 5, left ? 5 : 530, (cx){0.5, 1});
                    fail_above = 0;
                }
    return NULL;
}

/* Memory short in the middle of a call: B is overwritten piece by piece,
 * so a piece that could not get its workspace would leave B half-done for
 * the fallback. The result must still be the contract's, bit for bit. */
static void test_trmm_trsm_short_of_memory_still_give_the_contract(void **state)
{
    (void)state;
    canon_set_threads(1);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, short_memory_calls, NULL), 0);
    pthread_join(th, NULL);
    canon_set_threads(2);
    assert_int_equal(pthread_create(&th, NULL, short_memory_calls, NULL), 0);
    pthread_join(th, NULL);
    canon_set_threads(1);
}

static void test_trmm_trsm_agree_with_openblas(void **state)
{
    (void)state;
    void *lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        print_message("SKIP: libopenblas.so.0 is not installed: nothing to compare with\n");
        return;
    }
    static const char *const names[] = {"strmm_", "strsm_", "dtrmm_", "dtrsm_",
                                        "ctrmm_", "ctrsm_", "ztrmm_", "ztrsm_"};
    for (int t = 0; t < CANON_NTYPES; t++)
        for (int solve = 0; solve < 2; solve++) {
            void (*f)(const char *, const char *, const char *, const char *, const int *,
                      const int *, const void *, const void *, const int *, void *, const int *);
            *(void **)&f = dlsym(lib, names[t * 2 + solve]);
            assert_non_null(f);
            for (int combo = 0; combo < 24; combo++) {
                const char ch[4] = {"LR"[combo & 1], "UL"[(combo >> 1) & 1], "NTC"[combo / 8],
                                    "NU"[(combo >> 2) & 1]};
                struct call c = {t, solve, {ch[0], ch[1], ch[2], ch[3]}, 150, 131, 0, 151,
                                 {0.75, cplx(t) ? -0.375 : 0}};
                c.lda = (ch[0] == 'L' ? c.m : c.n) + 1;
                void *a, *b;
                operands(&c, &a, &b);
                const size_t bytes = (size_t)(c.ldb * c.n) * tsize[t];
                void *v = malloc(bytes);
                memcpy(v, b, bytes);
                assert_int_equal(lib_call(&c, a, b), 0);
                const float af[2] = {(float)c.alpha.re, (float)c.alpha.im};
                const double ad2[2] = {c.alpha.re, c.alpha.im};
                const int m = (int)c.m, n = (int)c.n, lda = (int)c.lda, ldb = (int)c.ldb;
                f(&ch[0], &ch[1], &ch[2], &ch[3], &m, &n, isf(t) ? (const void *)af : ad2, a,
                  &lda, v, &ldb);
                double md = 0, mx = 0;
                for (int64_t j = 0; j < c.n; j++)
                    for (int64_t i = 0; i < c.m; i++) {
                        const cx x = ld(t, b, i + j * c.ldb), y = ld(t, v, i + j * c.ldb);
                        md = fmax(md, fmax(fabs(x.re - y.re), fabs(x.im - y.im)));
                        mx = fmax(mx, fmax(fabs(y.re), fabs(y.im)));
                    }
                const double tol = isf(t) ? 2e-5 : 1e-13;
                if (!(md <= tol * mx))
                    fail_msg("%c%s %.4s: |canonical - OpenBLAS| = %g of %g", "sdcz"[t],
                             solve ? "trsm" : "trmm", ch, md, mx);
                free(a), free(b), free(v);
            }
        }
    dlclose(lib);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trmm_trsm_on_the_core_equal_the_documented_order),
        cmocka_unit_test(test_trmm_trsm_leave_an_infinity_out_of_the_chains_without_it),
        cmocka_unit_test(test_trmm_trsm_same_bits_any_thread_count),
        cmocka_unit_test(test_trmm_trsm_agree_with_openblas),
        cmocka_unit_test(test_trmm_trsm_short_of_memory_still_give_the_contract),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
