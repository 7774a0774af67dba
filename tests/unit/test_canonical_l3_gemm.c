/* Unit tests of the level-3 routines on the canonical GEMM core
 * (shim/blas/canonical_l3_gemm.c): their contracts say that syrk's
 * triangle is the GEMM of op(A) and op(A)^T, and symm the GEMM of the full
 * symmetric A and B, bit for bit. Checked here at shapes past the core's
 * blocks (several mc x nc blocks and register tiles on the diagonal, k
 * past kc, symm's A packed from its stored triangle), in every type, on
 * every ISA path this CPU has and at 1 and 3 threads (the threads split
 * a triangle by its elements); the other triangle of C must be
 * untouched. trmm, trsm, syr2k and her2k on the GEMM core give
 * the bits of their sequential kernels (canon_l3_use_gemm(0)), at shapes
 * of several blocks, every side, uplo, trans and diag, both layouts.
 * (test_canonical_l3_ref.c and test_canonical_rank2k.c check the sequential
 * kernels against the contract's slow reference.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four above first */
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

#define MAXN 300
#define LD 303
#define ELEMS ((size_t)LD * MAXN)

static const size_t tsize[CANON_NTYPES] = {4, 8, 8, 16};

static void fill(int t, void *x, size_t elems, unsigned seed)
{
    const size_t parts = elems * (t >= CANON_C ? 2 : 1);
    for (size_t i = 0; i < parts; i++) {
        seed = seed * 1103515245u + 12345u;
        double v = (double)(seed >> 9) / (double)(1u << 23) - 0.5;
        if (t == CANON_S || t == CANON_C)
            ((float *)x)[i] = (float)v;
        else
            ((double *)x)[i] = v;
    }
}

/* alpha = 0.75 (- 0.5i), beta = 0 or -1.25 (+ 0.25i), as any type. */
static void scalars(int t, int beta0, void *alpha, void *beta)
{
    const double al[2] = {0.75, -0.5}, be[2] = {beta0 ? 0 : -1.25, beta0 ? 0 : 0.25};
    for (int q = 0; q < 2; q++) {
        if (t == CANON_S || t == CANON_C) {
            ((float *)alpha)[q] = (float)al[q];
            ((float *)beta)[q] = (float)be[q];
        } else {
            ((double *)alpha)[q] = al[q];
            ((double *)beta)[q] = be[q];
        }
    }
}

static int gemm(int t, char ta, char tb, int64_t m, int64_t n, int64_t k, const void *al,
                const void *a, int64_t lda, const void *b, int64_t ldb, const void *be, void *c)
{
    switch (t) {
    case CANON_S:
        return canon_sgemm('C', ta, tb, m, n, k, *(const float *)al, a, lda, b, ldb,
                           *(const float *)be, c, LD);
    case CANON_D:
        return canon_dgemm('C', ta, tb, m, n, k, *(const double *)al, a, lda, b, ldb,
                           *(const double *)be, c, LD);
    case CANON_C: return canon_cgemm('C', ta, tb, m, n, k, al, a, lda, b, ldb, be, c, LD);
    default: return canon_zgemm('C', ta, tb, m, n, k, al, a, lda, b, ldb, be, c, LD);
    }
}

static int syrk(int t, char uplo, char trans, int64_t n, int64_t k, const void *al, const void *a,
                const void *be, void *c)
{
    switch (t) {
    case CANON_S:
        return canon_ssyrk('C', uplo, trans, n, k, *(const float *)al, a, LD, *(const float *)be,
                           c, LD);
    case CANON_D:
        return canon_dsyrk('C', uplo, trans, n, k, *(const double *)al, a, LD,
                           *(const double *)be, c, LD);
    case CANON_C: return canon_csyrk('C', uplo, trans, n, k, al, a, LD, be, c, LD);
    default: return canon_zsyrk('C', uplo, trans, n, k, al, a, LD, be, c, LD);
    }
}

static int symm(int t, char side, char uplo, int64_t m, int64_t n, const void *al, const void *a,
                const void *b, const void *be, void *c);

/* hemm, c and z. */
static int hemm(int t, char order, char side, char uplo, int64_t m, int64_t n, const void *al,
                const void *a, const void *b, const void *be, void *c)
{
    return t == CANON_C ? canon_chemm(order, side, uplo, m, n, al, a, LD, b, LD, be, c, LD)
                        : canon_zhemm(order, side, uplo, m, n, al, a, LD, b, LD, be, c, LD);
}

static int symm(int t, char side, char uplo, int64_t m, int64_t n, const void *al, const void *a,
                const void *b, const void *be, void *c)
{
    switch (t) {
    case CANON_S:
        return canon_ssymm('C', side, uplo, m, n, *(const float *)al, a, LD, b, LD,
                           *(const float *)be, c, LD);
    case CANON_D:
        return canon_dsymm('C', side, uplo, m, n, *(const double *)al, a, LD, b, LD,
                           *(const double *)be, c, LD);
    case CANON_C: return canon_csymm('C', side, uplo, m, n, al, a, LD, b, LD, be, c, LD);
    default: return canon_zsymm('C', side, uplo, m, n, al, a, LD, b, LD, be, c, LD);
    }
}

static void *el(void *x, int t, int64_t i, int64_t j)
{
    return (char *)x + (size_t)(i + j * LD) * tsize[t];
}

static void *A, *B, *C0, *C, *W, *S;

/* The paths and thread counts, each running fn(t). */
static void everywhere(void (*fn)(int t))
{
    static const char *const isas[] = {"scalar", "avx2", "avx512"};
    static const int threads[] = {1, 3};
    int ran = 0;
    for (size_t i = 0; i < 3; i++) {
        if (canon_set_isa(isas[i]) != 0)
            continue;
        for (size_t h = 0; h < 2; h++) {
            canon_set_threads(threads[h]);
            for (int t = 0; t < CANON_NTYPES; t++)
                fn(t);
        }
        ran++;
    }
    assert_int_equal(ran, 1 + (canon_set_isa("avx2") == 0) + canon_cpu_has_avx512());
    canon_set_threads(1);
    assert_int_equal(canon_set_isa(NULL), 0);
}

static const int64_t sizes[][2] = {{129, 7}, {300, 40}, {77, 290}};

static void syrk_is_gemm(int t)
{
    unsigned char al[16], be[16];
    for (size_t s = 0; s < 3; s++)
        for (int u = 0; u < 2; u++)
            for (int tr = 0; tr < 2; tr++) {
                const int64_t n = sizes[s][0], k = sizes[s][1];
                const char uplo = "UL"[u], trans = "NT"[tr];
                scalars(t, (int)s, al, be);
                fill(t, A, ELEMS, 11);
                fill(t, C0, ELEMS, 12);
                memcpy(C, C0, ELEMS * tsize[t]);
                memcpy(W, C0, ELEMS * tsize[t]);
                assert_int_equal(syrk(t, uplo, trans, n, k, al, A, be, C), 0);
                assert_int_equal(gemm(t, trans, trans == 'N' ? 'T' : 'N', n, n, k, al, A, LD, A,
                                      LD, be, W),
                                 0);
                for (int64_t j = 0; j < n; j++)
                    for (int64_t i = 0; i < n; i++) {
                        const int in = uplo == 'U' ? i <= j : i >= j;
                        if (memcmp(el(C, t, i, j), el(in ? W : C0, t, i, j), tsize[t]) != 0)
                            fail_msg("type %d syrk uplo=%c trans=%c n=%lld k=%lld [%s]: C(%lld, "
                                     "%lld) is not the GEMM's",
                                     t, uplo, trans, (long long)n, (long long)k, canon_isa(),
                                     (long long)i, (long long)j);
                    }
            }
}

static void test_syrk_is_the_gemm_on_its_triangle(void **state)
{
    (void)state;
    everywhere(syrk_is_gemm);
}

/* symm, and hemm for c and z (herm = 1: on the core; 2: its sequential
 * fallback, canon_l3_use_gemm(0)): the GEMM of the full matrix S. */
static void symm_is_gemm(int t)
{
    unsigned char al[16], be[16];
    static const int64_t shapes[][2] = {{300, 7}, {9, 290}, {260, 270}};
    for (int herm = 0; herm < (t >= CANON_C ? 3 : 1); herm++)
    for (size_t s = 0; s < 3; s++)
        for (int sd = 0; sd < 2; sd++)
            for (int u = 0; u < 2; u++) {
                if (herm == 2 && s == 2)
                    continue; /* the fallback is slow: the thin shapes */
                const int64_t m = shapes[s][0], n = shapes[s][1], dim = sd ? n : m;
                const char side = "LR"[sd], uplo = "UL"[u];
                scalars(t, (int)(s & 1), al, be);
                fill(t, A, ELEMS, 21);
                fill(t, B, ELEMS, 22);
                fill(t, C0, ELEMS, 23);
                /* S: the full symmetric (Hermitian) matrix of A's uplo
                 * triangle */
                for (int64_t j = 0; j < dim; j++)
                    for (int64_t i = 0; i < dim; i++) {
                        const int stored = uplo == 'U' ? i <= j : i >= j;
                        memcpy(el(S, t, i, j), stored ? el(A, t, i, j) : el(A, t, j, i),
                               tsize[t]);
                        if (herm && (i == j || !stored)) { /* conj, or a real diagonal */
                            if (t == CANON_C)
                                ((float *)el(S, t, i, j))[1] =
                                    i == j ? 0.0f : -((float *)el(S, t, i, j))[1];
                            else
                                ((double *)el(S, t, i, j))[1] =
                                    i == j ? 0.0 : -((double *)el(S, t, i, j))[1];
                        }
                    }
                memcpy(C, C0, ELEMS * tsize[t]);
                memcpy(W, C0, ELEMS * tsize[t]);
                canon_l3_use_gemm(herm != 2);
                assert_int_equal(herm ? hemm(t, 'C', side, uplo, m, n, al, A, B, be, C)
                                      : symm(t, side, uplo, m, n, al, A, B, be, C),
                                 0);
                canon_l3_use_gemm(1);
                if (side == 'L')
                    assert_int_equal(gemm(t, 'N', 'N', m, n, m, al, S, LD, B, LD, be, W), 0);
                else
                    assert_int_equal(gemm(t, 'N', 'N', m, n, n, al, B, LD, S, LD, be, W), 0);
                if (memcmp(C, W, ELEMS * tsize[t]) != 0)
                    fail_msg("type %d %s side=%c uplo=%c m=%lld n=%lld [%s]: not the GEMM's",
                             t, (const char *[]){"symm", "hemm", "hemm (sequential)"}[herm],
                             side, uplo, (long long)m, (long long)n, canon_isa());
            }
}

static void test_symm_is_the_gemm_of_the_full_matrix(void **state)
{
    (void)state;
    everywhere(symm_is_gemm);
}

/* zhemm in both layouts against the definition, to rounding: the 'R'
 * mapping reads A^T, Hermitian too, so no conjugate is missed or
 * doubled. */
static void test_hemm_agrees_with_the_definition(void **state)
{
    (void)state;
    const int64_t m = 9, n = 7;
    const double al[2] = {0.75, -0.5}, be[2] = {-1.25, 0.25};
    for (int o = 0; o < 2; o++)
        for (int sd = 0; sd < 2; sd++)
            for (int u = 0; u < 2; u++) {
                const char order = "CR"[o], side = "LR"[sd], uplo = "UL"[u];
                const int64_t dim = side == 'L' ? m : n;
                fill(CANON_Z, A, ELEMS, 41);
                fill(CANON_Z, B, ELEMS, 42);
                fill(CANON_Z, C0, ELEMS, 43);
                memcpy(C, C0, ELEMS * 16);
                assert_int_equal(hemm(CANON_Z, order, side, uplo, m, n, al, A, B, be, C), 0);
                /* X(r, s) in the caller's layout */
#define ZEL(x, r, s) ((const double *)(x) + 2 * (o ? (r) * LD + (s) : (r) + (s) * LD))
                for (int64_t i = 0; i < m; i++)
                    for (int64_t j = 0; j < n; j++) {
                        long double wr = 0, wi = 0;
                        for (int64_t p = 0; p < dim; p++) {
                            const int64_t r = side == 'L' ? i : p, q = side == 'L' ? p : j;
                            const int stored = uplo == 'U' ? r <= q : r >= q;
                            const double *ae = stored ? ZEL(A, r, q) : ZEL(A, q, r);
                            const long double ar = ae[0],
                                              ai = r == q ? 0 : stored ? ae[1] : -ae[1];
                            const double *be_ = side == 'L' ? ZEL(B, p, j) : ZEL(B, i, p);
                            wr += ar * be_[0] - ai * be_[1];
                            wi += ar * be_[1] + ai * be_[0];
                        }
                        const double *c0 = ZEL(C0, i, j), *got = ZEL(C, i, j);
                        const long double rr = al[0] * wr - al[1] * wi + be[0] * c0[0] -
                                               be[1] * c0[1];
                        const long double ri = al[0] * wi + al[1] * wr + be[0] * c0[1] +
                                               be[1] * c0[0];
                        if (fabsl(got[0] - rr) > 1e-13L || fabsl(got[1] - ri) > 1e-13L)
                            fail_msg("zhemm order=%c side=%c uplo=%c: C(%lld,%lld) off the "
                                     "definition",
                                     order, side, uplo, (long long)i, (long long)j);
                    }
#undef ZEL
            }
}

/* One call of trmm or trsm (op 0, 1), syr2k (2), her2k (3) or herk (4)
 * in type t on A, B (or C) of LD; the character arguments from ch. */
static int tri_call(int op, int t, const char *ch, int64_t m, int64_t n, const void *al,
                    const void *be)
{
    const char o = ch[0], side = ch[1], uplo = ch[2], tr = ch[3], diag = ch[4];
    const float *af = al;
    const double *ad = al;
    if (op == 4) /* herk: alpha and beta real */
        return t == CANON_C ? canon_cherk(o, uplo, tr, n, m, af[0], A, LD, *(const float *)be, C,
                                          LD)
                            : canon_zherk(o, uplo, tr, n, m, ad[0], A, LD, *(const double *)be,
                                          C, LD);
    if (op >= 2) {
        const int herm = op == 3;
        switch (t) {
        case CANON_S:
            return canon_ssyr2k(o, uplo, tr, n, m, af[0], A, LD, B, LD, *(const float *)be, C, LD);
        case CANON_D:
            return canon_dsyr2k(o, uplo, tr, n, m, ad[0], A, LD, B, LD, *(const double *)be, C,
                                LD);
        case CANON_C:
            return herm ? canon_cher2k(o, uplo, tr, n, m, al, A, LD, B, LD, *(const float *)be, C,
                                       LD)
                        : canon_csyr2k(o, uplo, tr, n, m, al, A, LD, B, LD, be, C, LD);
        default:
            return herm ? canon_zher2k(o, uplo, tr, n, m, al, A, LD, B, LD, *(const double *)be,
                                       C, LD)
                        : canon_zsyr2k(o, uplo, tr, n, m, al, A, LD, B, LD, be, C, LD);
        }
    }
    switch (t * 2 + op) {
    case 0: return canon_strmm(o, side, uplo, tr, diag, m, n, af[0], A, LD, C, LD);
    case 1: return canon_strsm(o, side, uplo, tr, diag, m, n, af[0], A, LD, C, LD);
    case 2: return canon_dtrmm(o, side, uplo, tr, diag, m, n, ad[0], A, LD, C, LD);
    case 3: return canon_dtrsm(o, side, uplo, tr, diag, m, n, ad[0], A, LD, C, LD);
    case 4: return canon_ctrmm(o, side, uplo, tr, diag, m, n, al, A, LD, C, LD);
    case 5: return canon_ctrsm(o, side, uplo, tr, diag, m, n, al, A, LD, C, LD);
    case 6: return canon_ztrmm(o, side, uplo, tr, diag, m, n, al, A, LD, C, LD);
    default: return canon_ztrsm(o, side, uplo, tr, diag, m, n, al, A, LD, C, LD);
    }
}

/* A well-conditioned triangle for trsm: a dominant diagonal. */
static void dominant(int t, void *a)
{
    for (int64_t i = 0; i < MAXN; i++) {
        if (t == CANON_S || t == CANON_C)
            ((float *)a)[(t == CANON_C ? 2 : 1) * (i + i * LD)] = 4.0f;
        else
            ((double *)a)[(t == CANON_Z ? 2 : 1) * (i + i * LD)] = 4.0;
    }
}

static void core_is_sequential(int t)
{
    unsigned char al[16], be[16];
    static const int64_t shapes[][2] = {{150, 131}, {131, 150}};
    for (int op = 0; op < 5; op++) {
        if (op >= 3 && t < CANON_C)
            continue;
        for (size_t s = 0; s < 2; s++)
            for (int combo = 0; combo < 32; combo++) {
                /* order, side, uplo, trans, diag */
                const char trs = op >= 3 ? "NC"[(combo >> 3) & 1]
                                 : op == 2 && t >= CANON_C ? "NT"[(combo >> 3) & 1]
                                                           : "NTC"[(combo >> 3) % 3];
                const char ch[5] = {"CR"[combo & 1], "LR"[(combo >> 1) & 1],
                                    "UL"[(combo >> 2) & 1], trs, "NU"[(combo >> 4) & 1]};
                if (op >= 2 && (combo & 2))
                    continue; /* no side */
                const int64_t m = shapes[s][0], n = shapes[s][1];
                scalars(t, 0, al, be);
                if ((combo + (int)s) % 3 == 0) /* alpha == 1 too */
                    scalars(t, 1, al, be), memcpy(al, (t == CANON_S || t == CANON_C)
                                                          ? (const void *)(const float[2]){1, 0}
                                                          : (const void *)(const double[2]){1, 0},
                                                  tsize[t]);
                if (op >= 3) { /* her2k: alpha complex, beta real; herk: both real */
                    memcpy(be, (t == CANON_C) ? (const void *)(const float[1]){-1.25f}
                                              : (const void *)(const double[1]){-1.25},
                           tsize[t] / 2);
                }
                fill(t, A, ELEMS, 31 + (unsigned)combo);
                fill(t, B, ELEMS, 32);
                fill(t, C0, ELEMS, 33);
                dominant(t, A);
                memcpy(C, C0, ELEMS * tsize[t]);
                canon_l3_use_gemm(1);
                assert_int_equal(tri_call(op, t, ch, m, n, al, be), 0);
                memcpy(W, C, ELEMS * tsize[t]);
                memcpy(C, C0, ELEMS * tsize[t]);
                canon_l3_use_gemm(0);
                assert_int_equal(tri_call(op, t, ch, m, n, al, be), 0);
                canon_l3_use_gemm(1);
                if (memcmp(C, W, ELEMS * tsize[t]) != 0)
                    fail_msg("type %d %s %.5s m=%lld n=%lld [%s]: the GEMM core's bits differ "
                             "from the sequential kernel's",
                             t, (const char *[]){"trmm", "trsm", "syr2k", "her2k", "herk"}[op], ch,
                             (long long)m, (long long)n, canon_isa());
            }
    }
}

/* 150 random small shapes (n 1 .. 80, k 1 .. 300), types, uplo, trans, side,
 * layouts, paths and 1 .. 5 threads: syrk, symm, syr2k, her2k, herk and
 * hemm on the core give the sequential kernels' bits over the whole
 * buffer, so a tile of the triangle's edge written outside it, or a
 * thread's share of a triangle lost, fails. */
static void test_random_shapes_core_equals_sequential(void **state)
{
    (void)state;
    static const char *const isas[] = {"scalar", "avx2", "avx512"};
    static const char *const names[] = {"syrk", "symm", "syr2k", "her2k", "herk", "hemm"};
    unsigned seed = 2026;
    unsigned char al[16], be[16];
    for (int it = 0; it < 150; it++) {
        seed = seed * 1103515245u + 12345u;
        const unsigned r = seed >> 4;
        const int routine = (int)(r % 6), t = routine >= 3 ? CANON_C + (int)(r / 6 % 2)
                                                           : (int)(r / 6 % CANON_NTYPES);
        const char *isa = isas[r / 24 % 3];
        if (canon_set_isa(isa) != 0 || canon_blas_set_isa(isa) != 0)
            continue;
        canon_set_threads(1 + (int)(r / 72 % 5));
        seed = seed * 1103515245u + 12345u;
        const int64_t n = 1 + (seed >> 8) % 80, k = 1 + (seed >> 16) % 300;
        const char ch[5] = {"CR"[seed & 1], "LR"[(seed >> 1) & 1], "UL"[(seed >> 2) & 1],
                            routine == 0 || routine == 2 ? "NT"[(seed >> 3) & 1]
                                                         : "NC"[(seed >> 3) & 1],
                            'N'};
        scalars(t, (int)((seed >> 4) & 1), al, be);
        if (routine >= 3 && routine <= 4) /* her2k's beta real; herk's alpha too */
            memcpy(be, (t == CANON_C) ? (const void *)(const float[1]){-1.25f}
                                      : (const void *)(const double[1]){-1.25},
                   tsize[t] / 2);
        fill(t, A, ELEMS, 51 + (unsigned)it);
        fill(t, B, ELEMS, 52);
        fill(t, C0, ELEMS, 53);
        for (int core = 1; core >= 0; core--) {
            memcpy(C, C0, ELEMS * tsize[t]);
            canon_l3_use_gemm(core);
            int rc;
            switch (routine) {
            case 0: rc = syrk(t, ch[2], ch[3], n, k, al, A, be, C); break;
            case 1: rc = symm(t, ch[1], ch[2], n, k, al, A, B, be, C); break;
            case 5: rc = hemm(t, ch[0], ch[1], ch[2], n, k, al, A, B, be, C); break;
            default: rc = tri_call(routine, t, ch, k, n, al, be); /* the same numbers */
            }
            assert_int_equal(rc, 0);
            if (core)
                memcpy(W, C, ELEMS * tsize[t]);
        }
        canon_l3_use_gemm(1);
        if (memcmp(C, W, ELEMS * tsize[t]) != 0)
            fail_msg("type %d %s %.4s n=%lld k=%lld [%s, %d threads]: the core's bits differ "
                     "from the sequential kernel's",
                     t, names[routine], ch, (long long)n, (long long)k, isa, canon_threads());
    }
    canon_set_threads(1);
    assert_int_equal(canon_set_isa(NULL), 0);
    assert_int_equal(canon_blas_set_isa(NULL), 0);
}

static void test_trmm_trsm_rank2k_on_the_core_give_the_sequential_bits(void **state)
{
    (void)state;
    static const char *const isas[] = {"scalar", "avx2", "avx512"};
    for (size_t i = 0; i < 3; i++) {
        if (canon_set_isa(isas[i]) != 0 || canon_blas_set_isa(isas[i]) != 0)
            continue;
        canon_set_threads(2);
        /* the scalar path is slow: one type there */
        for (int t = i == 0 ? CANON_D : 0; t < (i == 0 ? CANON_D + 1 : CANON_NTYPES); t++)
            core_is_sequential(t);
    }
    canon_set_threads(1);
    assert_int_equal(canon_set_isa(NULL), 0);
    assert_int_equal(canon_blas_set_isa(NULL), 0);
}

static int setup(void **state)
{
    (void)state;
    A = malloc(ELEMS * 16), B = malloc(ELEMS * 16), C0 = malloc(ELEMS * 16);
    C = malloc(ELEMS * 16), W = malloc(ELEMS * 16), S = malloc(ELEMS * 16);
    return A && B && C0 && C && W && S ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(A), free(B), free(C0), free(C), free(W), free(S);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syrk_is_the_gemm_on_its_triangle),
        cmocka_unit_test(test_symm_is_the_gemm_of_the_full_matrix),
        cmocka_unit_test(test_hemm_agrees_with_the_definition),
        cmocka_unit_test(test_random_shapes_core_equals_sequential),
        cmocka_unit_test(test_trmm_trsm_rank2k_on_the_core_give_the_sequential_bits),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
