/* Unit tests of the canonical rank-2k updates (shim/blas/canonical_l3_2k.c):
 * dsyr2k and zsyr2k/zher2k/zherk (her2k's first update, B = A) equal,
 * bit for bit, an obvious reference
 * written here from the contract in shim/blas/canonical.h (column-major;
 * row-major through the mapping the contract defines), over shapes, both
 * layouts, every uplo and trans and alpha/beta classes; every type gives
 * the same bits on every ISA path this CPU has and at 1 .. 8 threads; and
 * the result agrees with the mathematical definition (to rounding), which
 * checks the row-major mapping and where her2k conjugates. Whole buffers
 * are compared, so a write outside the triangle fails too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four above first */
#include <cmocka.h>

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

#define MAXN 150
#define LD 157
#define ELEMS (LD * MAXN + 8)

static double frand(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (double)(*seed >> 9) / (double)(1u << 23) - 0.5;
}

/* One problem of any type; values stored as doubles, converted per type. */
struct prob {
    int t, herm; /* 0: syr2k, 1: her2k, 2: herk (b = a, alpha real) */
    char order, uplo, trans;
    int n, k;
    double alpha[2], beta;
};

/* Calls the library on buffers of type p->t (parts interleaved). */
static int lib(const struct prob *p, const void *a, const void *b, void *c)
{
    const float af[2] = {(float)p->alpha[0], (float)p->alpha[1]};
    const float bf[2] = {(float)p->beta, 0};
    const double bd[2] = {p->beta, 0};
    if (p->herm == 2)
        return p->t == CANON_C ? canon_cherk(p->order, p->uplo, p->trans, p->n, p->k, af[0], a,
                                             LD, bf[0], c, LD)
                               : canon_zherk(p->order, p->uplo, p->trans, p->n, p->k,
                                             p->alpha[0], a, LD, p->beta, c, LD);
    switch (p->t) {
    case CANON_S:
        return canon_ssyr2k(p->order, p->uplo, p->trans, p->n, p->k, af[0], a, LD, b, LD, bf[0], c,
                            LD);
    case CANON_D:
        return canon_dsyr2k(p->order, p->uplo, p->trans, p->n, p->k, p->alpha[0], a, LD, b, LD,
                            p->beta, c, LD);
    case CANON_C:
        return p->herm ? canon_cher2k(p->order, p->uplo, p->trans, p->n, p->k, af, a, LD, b, LD,
                                      bf[0], c, LD)
                       : canon_csyr2k(p->order, p->uplo, p->trans, p->n, p->k, af, a, LD, b, LD,
                                      bf, c, LD);
    default:
        return p->herm ? canon_zher2k(p->order, p->uplo, p->trans, p->n, p->k, p->alpha, a, LD, b,
                                      LD, p->beta, c, LD)
                       : canon_zsyr2k(p->order, p->uplo, p->trans, p->n, p->k, p->alpha, a, LD, b,
                                      LD, bd, c, LD);
    }
}

static size_t esize(int t)
{
    return t == CANON_S ? 4 : t == CANON_Z ? 16 : 8;
}

static void fill(int t, void *x, unsigned seed)
{
    const int parts = ELEMS * (t >= CANON_C ? 2 : 1);
    for (int i = 0; i < parts; i++) {
        double v = frand(&seed);
        if (t == CANON_S || t == CANON_C)
            ((float *)x)[i] = (float)v;
        else
            ((double *)x)[i] = v;
    }
}

/* ---- the reference: the contract, column-major, z and d --------------- */

typedef struct {
    double re, im;
} cx;

static cx cmac(cx s, cx u, cx v)
{
    s.re = fma(u.re, v.re, s.re);
    s.re = fma(-u.im, v.im, s.re);
    s.im = fma(u.re, v.im, s.im);
    s.im = fma(u.im, v.re, s.im);
    return s;
}

static cx conjx(cx v)
{
    v.im = -v.im;
    return v;
}

/* op(X)_ip of the column-major call (X stored n x k or k x n). */
static cx opx(const struct prob *p, const double *x, int transposed, int i, int q)
{
    const int cplx = p->t == CANON_Z;
    const int e = transposed ? q + i * LD : i + q * LD;
    cx v = {cplx ? x[2 * e] : x[e], cplx ? x[2 * e + 1] : 0};
    return transposed && p->herm ? conjx(v) : v;
}

/* The contract's AB step (the GEMM's): beta == 0: CMUL(alpha, s), else
 * CMUL(beta, c) + alpha*s by CMAC; real: alpha*s or fma(alpha, s, beta*c). */
static cx ab(int cplx, cx al, cx be, cx s, cx c)
{
    cx r;
    if (!cplx) {
        r.re = be.re == 0 ? al.re * s.re : fma(al.re, s.re, be.re * c.re);
        r.im = 0;
    } else if (be.re == 0 && be.im == 0) {
        r.re = fma(-al.im, s.im, al.re * s.re);
        r.im = fma(al.im, s.re, al.re * s.im);
    } else {
        cx t = {fma(-be.im, c.im, be.re * c.re), fma(be.im, c.re, be.re * c.im)};
        r = cmac(t, al, s);
    }
    return r;
}

/* Two GEMM updates of the triangle in turn: C = alpha*op(A)*w(op(B))^T +
 * beta*C, then C = alpha2*op(B)*w(op(A))^T + 1*C; w conjugates and alpha2
 * is conj(alpha) for her2k, whose diagonal is read and stored real. */
static void ref(const struct prob *p0, const double *a, const double *b, double *c)
{
    struct prob p = *p0;
    const int passes = p.herm == 2 ? 1 : 2; /* herk: the first update, B = A */
    if (p.herm == 2)
        b = a;
    int transposed = p.trans != 'N';
    char u = p.uplo;
    if (p.order == 'R') {
        u = u == 'U' ? 'L' : 'U';
        transposed = !transposed;
        if (p.herm)
            p.alpha[1] = -p.alpha[1];
    }
    const int cplx = p.t == CANON_Z;
    const cx al = {p.alpha[0], p.alpha[1]};
    const cx al2 = p.herm ? conjx(al) : al, be = {p.beta, 0}, one = {1, 0};
    for (int pass = 0; pass < passes; pass++)
        for (int j = 0; j < p.n; j++)
            for (int i = u == 'U' ? 0 : j; i < (u == 'U' ? j + 1 : p.n); i++) {
                const double *x = pass ? b : a, *y = pass ? a : b;
                double *ce = cplx ? c + 2 * (i + j * LD) : c + i + j * LD;
                cx old = {ce[0], cplx ? ce[1] : 0}, s = {0, 0};
                if (p.herm && i == j)
                    old.im = 0;
                for (int q = 0; q < p.k; q++) {
                    cx w = opx(&p, y, transposed, j, q);
                    s = cmac(s, opx(&p, x, transposed, i, q), p.herm ? conjx(w) : w);
                }
                cx r = ab(cplx, pass ? al2 : al, pass ? one : be, s, old);
                ce[0] = r.re;
                if (cplx)
                    ce[1] = p.herm && i == j ? 0 : r.im;
            }
}

/* ---- the grid --------------------------------------------------------- */

/* Past 128 (the GEMM core's diagonal block) the off-diagonal blocks are
 * GEMMs straight into C. */
static const int shapes[][2] = {{1, 1}, {3, 5}, {7, 1}, {16, 9}, {17, 33}, {40, 37}, {150, 9}};
static const double alphas[][2] = {{1, 0}, {-0.75, 0.5}};
static const double betas[] = {0, 1, -1.25};

/* Calls fn on every problem of type t; fn returns 0 when it fails. */
static void grid(int t, int herm, void (*fn)(const struct prob *))
{
    static const char trans_real[] = "NTC", trans_sym[] = "NT", trans_herm[] = "NC";
    const char *trs = herm ? trans_herm : t < CANON_C ? trans_real : trans_sym;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int o = 0; o < 2; o++)
            for (int u = 0; u < 2; u++)
                for (const char *tr = trs; *tr; tr++)
                    for (int ab = 0; ab < 6; ab++) {
                        struct prob p = {t, herm, "CR"[o], "UL"[u], *tr, shapes[s][0],
                                         shapes[s][1], {alphas[ab % 2][0], alphas[ab % 2][1]},
                                         betas[ab / 2]};
                        if (t < CANON_C || herm == 2)
                            p.alpha[1] = 0;
                        fn(&p);
                    }
}

#define NAME(p) ((p)->herm == 2 ? "herk" : (p)->herm ? "her2k" : "syr2k")

static void check_ref(const struct prob *p)
{
    static double a[2 * ELEMS], b[2 * ELEMS], c[2 * ELEMS], want[2 * ELEMS];
    fill(p->t, a, 1);
    fill(p->t, b, 2);
    fill(p->t, c, 3);
    memcpy(want, c, sizeof c);
    assert_int_equal(lib(p, a, b, c), 0);
    ref(p, a, b, want);
    if (memcmp(c, want, ELEMS * esize(p->t)) != 0)
        fail_msg("%c%s order=%c uplo=%c trans=%c n=%d k=%d beta=%g [%s]: not the contract's bits",
                 p->t == CANON_D ? 'd' : 'z', NAME(p), p->order, p->uplo,
                 p->trans, p->n, p->k, p->beta, canon_blas_isa());
}

static void test_rank2k_equals_the_contract_on_every_isa(void **state)
{
    (void)state;
    static const char *const isas[] = {"scalar", "avx2", "avx512"};
    int ran = 0;
    for (size_t i = 0; i < 3; i++) {
        if (canon_blas_set_isa(isas[i]) != 0)
            continue;
        grid(CANON_D, 0, check_ref);
        grid(CANON_Z, 0, check_ref);
        grid(CANON_Z, 1, check_ref);
        grid(CANON_Z, 2, check_ref);
        ran++;
    }
    assert_int_equal(ran, 1 + (canon_blas_set_isa("avx2") == 0) + canon_cpu_has_avx512());
    assert_int_equal(canon_blas_set_isa(NULL), 0);
}

/* Every type on every path and at 1 .. 8 threads gives the scalar path's
 * bits at 1 thread. */
static void check_paths(const struct prob *p)
{
    static double a[2 * ELEMS], b[2 * ELEMS], c0[2 * ELEMS], c[2 * ELEMS], first[2 * ELEMS];
    static const char *const isas[] = {"scalar", "avx2", "avx512"};
    fill(p->t, a, 4);
    fill(p->t, b, 5);
    fill(p->t, c0, 6);
    int have = 0;
    for (size_t i = 0; i < 3; i++) {
        if (canon_blas_set_isa(isas[i]) != 0)
            continue;
        for (int th = 1; th <= 8; th++) {
            canon_set_threads(th);
            memcpy(c, c0, sizeof c);
            assert_int_equal(lib(p, a, b, c), 0);
            if (!have++)
                memcpy(first, c, sizeof c);
            else if (memcmp(c, first, ELEMS * esize(p->t)) != 0)
                fail_msg("type %d %s order=%c uplo=%c trans=%c n=%d k=%d: %s at %d threads "
                         "differs from scalar at 1",
                         p->t, NAME(p), p->order, p->uplo, p->trans, p->n,
                         p->k, isas[i], th);
        }
    }
    canon_set_threads(1);
    assert_int_equal(canon_blas_set_isa(NULL), 0);
}

static void test_rank2k_same_bits_on_every_path_and_thread_count(void **state)
{
    (void)state;
    for (int t = 0; t < CANON_NTYPES; t++)
        grid(t, 0, check_paths);
    grid(CANON_C, 1, check_paths);
    grid(CANON_Z, 1, check_paths);
    grid(CANON_C, 2, check_paths);
    grid(CANON_Z, 2, check_paths);
}

/* The mathematical definition, in long double complex, to rounding. */
static void check_math(const struct prob *p)
{
    static double a[2 * ELEMS], b[2 * ELEMS], c[2 * ELEMS], c0[2 * ELEMS];
    fill(CANON_Z, a, 7);
    fill(CANON_Z, b, 8);
    fill(CANON_Z, c0, 9);
    if (p->herm == 2) /* herk: B = A */
        memcpy(b, a, sizeof b);
    memcpy(c, c0, sizeof c);
    assert_int_equal(lib(p, a, b, c), 0);
    const int row = p->order == 'R', tr = p->trans != 'N';
    /* X(i, q) of op(X) (n x k) in the caller's layout */
#define EL(x, r, s) ((x)[2 * (row ? (r) * LD + (s) : (r) + (s) * LD)] + \
                     I * (x)[2 * (row ? (r) * LD + (s) : (r) + (s) * LD) + 1])
    const long double complex al = p->alpha[0] + I * p->alpha[1];
    for (int i = 0; i < p->n; i++)
        for (int j = 0; j < p->n; j++) {
            const int in_tri = p->uplo == 'U' ? i <= j : i >= j;
            const long double complex cij = EL(c0, i, j), got = EL(c, i, j);
            if (!in_tri) {
                assert_true(got == cij);
                continue;
            }
            long double complex t1 = 0, t2 = 0;
            for (int q = 0; q < p->k; q++) {
                long double complex ai = tr ? EL(a, q, i) : EL(a, i, q);
                long double complex bi = tr ? EL(b, q, i) : EL(b, i, q);
                long double complex aj = tr ? EL(a, q, j) : EL(a, j, q);
                long double complex bj = tr ? EL(b, q, j) : EL(b, j, q);
                if (p->herm && tr) {
                    ai = conjl(ai), bi = conjl(bi), aj = conjl(aj), bj = conjl(bj);
                }
                t1 += ai * (p->herm ? conjl(bj) : bj);
                t2 += bi * (p->herm ? conjl(aj) : aj);
            }
            if (p->herm == 2) /* herk: one update */
                t2 = 0;
            long double complex want = al * t1 + (p->herm ? conjl(al) : al) * t2 +
                                       (p->beta == 0 ? 0 : p->beta * (p->herm && i == j
                                                                         ? creall(cij)
                                                                         : cij));
            if (p->herm && i == j)
                want = creall(want);
            if (cabsl(got - want) > 1e-12L * (1 + p->k))
                fail_msg("z%s order=%c uplo=%c trans=%c n=%d k=%d: C(%d,%d) off the definition",
                         NAME(p), p->order, p->uplo, p->trans, p->n, p->k, i,
                         j);
        }
#undef EL
}

static void test_rank2k_agrees_with_the_definition(void **state)
{
    (void)state;
    grid(CANON_Z, 0, check_math);
    grid(CANON_Z, 1, check_math);
    grid(CANON_Z, 2, check_math);
}

static void test_rank2k_rejects_what_blas_rejects(void **state)
{
    (void)state;
    double a[4] = {0}, c[4] = {0};
    const double one[2] = {1, 0};
    assert_int_equal(canon_dsyr2k('C', 'X', 'N', 2, 2, 1, a, 2, a, 2, 0, c, 2), -1);
    assert_int_equal(canon_dsyr2k('C', 'U', 'N', 2, 2, 1, a, 1, a, 2, 0, c, 2), -1);
    assert_int_equal(canon_dsyr2k('C', 'U', 'N', -1, 2, 1, a, 2, a, 2, 0, c, 2), -1);
    assert_int_equal(canon_zsyr2k('C', 'U', 'C', 1, 1, one, a, 1, a, 1, one, c, 1), -1);
    assert_int_equal(canon_zher2k('C', 'U', 'T', 1, 1, one, a, 1, a, 1, 1, c, 1), -1);
    assert_int_equal(canon_zherk('C', 'U', 'T', 1, 1, 1, a, 1, 1, c, 1), -1);
    assert_int_equal(canon_zherk('C', 'U', 'N', 2, 1, 1, a, 1, 1, c, 2), -1);
    assert_int_equal(canon_dsyr2k('c', 'u', 'c', 1, 1, 1, a, 1, a, 1, 0, c, 1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank2k_equals_the_contract_on_every_isa),
        cmocka_unit_test(test_rank2k_same_bits_on_every_path_and_thread_count),
        cmocka_unit_test(test_rank2k_agrees_with_the_definition),
        cmocka_unit_test(test_rank2k_rejects_what_blas_rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
