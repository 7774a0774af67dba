/* Unit tests of the canonical GEMM (shim/blas/canonical_gemm*.c): its
 * results equal, bit for bit, a slow obvious implementation of the order
 * documented in shim/blas/canonical.h, for every element type, layout,
 * transpose, leading dimension, alpha/beta class, blocking, thread count
 * and instruction-set path this machine has; BLAS argument rules and the
 * alpha == 0 / beta == 0 semantics hold; padding is never written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xmmintrin.h>

#include "avx_state.h"
#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* ---- the reference: the contract, written as plainly as possible ------ */

static const size_t elem_size[CANON_NTYPES] = { 4, 8, 8, 16 };

/* Element (i, j) of a rows x cols matrix stored in `order` with leading
 * dimension ld: its index in elements. */
static int64_t at(char order, int64_t i, int64_t j, int64_t ld)
{
    return order == 'C' ? i + j * ld : i * ld + j;
}

/* op(X)[i][p] of X stored in `order`, transposed when trans != 'N'. */
static int64_t op_at(char order, char trans, int64_t i, int64_t p, int64_t ld)
{
    return trans == 'N' ? at(order, i, p, ld) : at(order, p, i, ld);
}

static void ref_real_s(char order, char ta, char tb, int64_t m, int64_t n, int64_t k,
                       float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                       float beta, float *c, int64_t ldc)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            float *cij = c + at(order, i, j, ldc);
            if (alpha == 0 || k == 0) {
                if (beta != 1)
                    *cij = beta == 0 ? 0.0f : beta * *cij;
                continue;
            }
            float s = 0;
            for (int64_t p = 0; p < k; p++)
                s = fmaf(a[op_at(order, ta, i, p, lda)], b[op_at(order, tb, p, j, ldb)], s);
            if (beta == 0) {
                *cij = alpha * s;
            } else {
                float t = beta * *cij;
                *cij = fmaf(alpha, s, t);
            }
        }
}

static void ref_real_d(char order, char ta, char tb, int64_t m, int64_t n, int64_t k,
                       double alpha, const double *a, int64_t lda, const double *b, int64_t ldb,
                       double beta, double *c, int64_t ldc)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double *cij = c + at(order, i, j, ldc);
            if (alpha == 0 || k == 0) {
                if (beta != 1)
                    *cij = beta == 0 ? 0.0 : beta * *cij;
                continue;
            }
            double s = 0;
            for (int64_t p = 0; p < k; p++)
                s = fma(a[op_at(order, ta, i, p, lda)], b[op_at(order, tb, p, j, ldb)], s);
            if (beta == 0) {
                *cij = alpha * s;
            } else {
                double t = beta * *cij;
                *cij = fma(alpha, s, t);
            }
        }
}

/* Complex, in double or float through one body: T is the part type, FMA
 * its fma. */
#define REF_COMPLEX(name, T, FMA)                                                         \
    static void name(char order, char ta, char tb, int64_t m, int64_t n, int64_t k,       \
                     const T *al, const T *a, int64_t lda, const T *b, int64_t ldb,       \
                     const T *be, T *c, int64_t ldc)                                      \
    {                                                                                     \
        int alpha0 = al[0] == 0 && al[1] == 0, beta0 = be[0] == 0 && be[1] == 0;          \
        int beta1 = be[0] == 1 && be[1] == 0;                                             \
        for (int64_t i = 0; i < m; i++)                                                   \
            for (int64_t j = 0; j < n; j++) {                                             \
                T *cij = c + 2 * at(order, i, j, ldc);                                    \
                if (alpha0 || k == 0) {                                                   \
                    if (beta1)                                                            \
                        continue;                                                         \
                    if (beta0) {                                                          \
                        cij[0] = cij[1] = 0;                                              \
                        continue;                                                         \
                    }                                                                     \
                    T tr = be[0] * cij[0], ti = be[0] * cij[1];                           \
                    tr = FMA(-be[1], cij[1], tr);                                         \
                    ti = FMA(be[1], cij[0], ti);                                          \
                    cij[0] = tr, cij[1] = ti;                                             \
                    continue;                                                             \
                }                                                                         \
                T sr = 0, si = 0;                                                         \
                for (int64_t p = 0; p < k; p++) {                                         \
                    const T *x = a + 2 * op_at(order, ta, i, p, lda);                     \
                    const T *y = b + 2 * op_at(order, tb, p, j, ldb);                     \
                    T ar = x[0], ai = ta == 'C' ? -x[1] : x[1];                           \
                    T br = y[0], bi = tb == 'C' ? -y[1] : y[1];                           \
                    sr = FMA(ar, br, sr);                                                 \
                    sr = FMA(-ai, bi, sr);                                                \
                    si = FMA(ar, bi, si);                                                 \
                    si = FMA(ai, br, si);                                                 \
                }                                                                         \
                T rr, ri;                                                                 \
                if (beta0) {                                                              \
                    rr = al[0] * sr;                                                      \
                    rr = FMA(-al[1], si, rr);                                             \
                    ri = al[0] * si;                                                      \
                    ri = FMA(al[1], sr, ri);                                              \
                } else {                                                                  \
                    T tr = be[0] * cij[0], ti = be[0] * cij[1];                           \
                    tr = FMA(-be[1], cij[1], tr);                                         \
                    ti = FMA(be[1], cij[0], ti);                                          \
                    rr = FMA(al[0], sr, tr);                                              \
                    rr = FMA(-al[1], si, rr);                                             \
                    ri = FMA(al[0], si, ti);                                              \
                    ri = FMA(al[1], sr, ri);                                              \
                }                                                                         \
                cij[0] = rr, cij[1] = ri;                                                 \
            }                                                                             \
    }

REF_COMPLEX(ref_complex_c, float, fmaf)
REF_COMPLEX(ref_complex_z, double, fma)

/* alpha, beta: pointers to one element of the type (a pair for complex). */
static void ref_gemm(enum canon_type t, char order, char ta, char tb, int64_t m, int64_t n,
                     int64_t k, const void *alpha, const void *a, int64_t lda, const void *b,
                     int64_t ldb, const void *beta, void *c, int64_t ldc)
{
    switch (t) {
    case CANON_S:
        ref_real_s(order, ta, tb, m, n, k, *(const float *)alpha, a, lda, b, ldb,
                   *(const float *)beta, c, ldc);
        break;
    case CANON_D:
        ref_real_d(order, ta, tb, m, n, k, *(const double *)alpha, a, lda, b, ldb,
                   *(const double *)beta, c, ldc);
        break;
    case CANON_C:
        ref_complex_c(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        break;
    default:
        ref_complex_z(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        break;
    }
}

static int canon_gemm(enum canon_type t, char order, char ta, char tb, int64_t m, int64_t n,
                      int64_t k, const void *alpha, const void *a, int64_t lda, const void *b,
                      int64_t ldb, const void *beta, void *c, int64_t ldc)
{
    switch (t) {
    case CANON_S:
        return canon_sgemm(order, ta, tb, m, n, k, *(const float *)alpha, a, lda, b, ldb,
                           *(const float *)beta, c, ldc);
    case CANON_D:
        return canon_dgemm(order, ta, tb, m, n, k, *(const double *)alpha, a, lda, b, ldb,
                           *(const double *)beta, c, ldc);
    case CANON_C:
        return canon_cgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    default:
        return canon_zgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
}

/* ---- operands ----------------------------------------------------------- */

/* per thread: the concurrency test fills operands on two threads */
static _Thread_local uint64_t rng_state = 0x9E3779B97F4A7C15u;

static double uniform(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* Fills n parts (floats or doubles) with values of full precision and
 * mixed magnitudes, so any change of order or rounding shows in the bits. */
static void fill(void *p, size_t parts, int dbl)
{
    for (size_t i = 0; i < parts; i++) {
        double v = uniform() * ldexp(1.0, (int)(uniform() * 6));
        if (dbl)
            ((double *)p)[i] = v;
        else
            ((float *)p)[i] = (float)v;
    }
}

static int is_double(enum canon_type t)
{
    return t == CANON_D || t == CANON_Z;
}

static int is_complex(enum canon_type t)
{
    return t == CANON_C || t == CANON_Z;
}

/* The scalars a test uses: class 0 (zero), 1 (one), 2 (minus one), 3 (other),
 * as an element of type t (complex "other" has both parts non-zero). */
static void scalar(enum canon_type t, int cls, void *out)
{
    static const double re[4] = { 0, 1, -1, 0.7071067811865476 };
    static const double im[4] = { 0, 0, 0, -0.3333333333333333 };
    if (is_double(t)) {
        ((double *)out)[0] = re[cls];
        if (is_complex(t))
            ((double *)out)[1] = im[cls];
    } else {
        ((float *)out)[0] = (float)re[cls];
        if (is_complex(t))
            ((float *)out)[1] = (float)im[cls];
    }
}

/* One problem: operands with padded leading dimensions, and the
 * reference's result from the same starting C. */
struct problem {
    enum canon_type t;
    char order, ta, tb;
    int64_t m, n, k;
    int alpha_cls, beta_cls;
    int nan_c; /* fill C with NaN */
};

struct operands {
    const struct problem *pr;
    int64_t lda, ldb, ldc;
    size_t c_bytes;
    void *a, *b, *c0, *ref, *c;
    double alpha[2], beta[2];
};

static int64_t stored_rows(char order, char trans, int64_t rows, int64_t cols)
{
    /* Runs (columns for 'C', rows for 'R') and their length. */
    int64_t r = trans == 'N' ? rows : cols, c = trans == 'N' ? cols : rows;
    return order == 'C' ? c : r;
}

static int64_t run_length(char order, char trans, int64_t rows, int64_t cols)
{
    int64_t r = trans == 'N' ? rows : cols, c = trans == 'N' ? cols : rows;
    return order == 'C' ? r : c;
}

static void *checked_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    assert_non_null(p);
    return p;
}

/* Operands of pr, filled, and the reference result. */
static void prepare(const struct problem *pr, struct operands *op)
{
    const size_t es = elem_size[pr->t];
    const int dbl = is_double(pr->t), parts_per = is_complex(pr->t) ? 2 : 1;
    op->pr = pr;
    op->lda = run_length(pr->order, pr->ta, pr->m, pr->k) + 3;
    op->ldb = run_length(pr->order, pr->tb, pr->k, pr->n) + 2;
    op->ldc = run_length(pr->order, 'N', pr->m, pr->n) + 1;
    size_t na = (size_t)(op->lda * (stored_rows(pr->order, pr->ta, pr->m, pr->k) + 1));
    size_t nb = (size_t)(op->ldb * (stored_rows(pr->order, pr->tb, pr->k, pr->n) + 1));
    size_t nc = (size_t)(op->ldc * (stored_rows(pr->order, 'N', pr->m, pr->n) + 1));
    op->c_bytes = nc * es;
    op->a = checked_malloc(na * es);
    op->b = checked_malloc(nb * es);
    op->c0 = checked_malloc(op->c_bytes);
    op->ref = checked_malloc(op->c_bytes);
    op->c = checked_malloc(op->c_bytes);
    fill(op->a, na * parts_per, dbl);
    fill(op->b, nb * parts_per, dbl);
    fill(op->c0, nc * parts_per, dbl);
    if (pr->nan_c)
        for (size_t i = 0; i < nc * parts_per; i++) {
            if (dbl)
                ((double *)op->c0)[i] = NAN;
            else
                ((float *)op->c0)[i] = NAN;
        }
    scalar(pr->t, pr->alpha_cls, op->alpha);
    scalar(pr->t, pr->beta_cls, op->beta);
    memcpy(op->ref, op->c0, op->c_bytes);
    ref_gemm(pr->t, pr->order, pr->ta, pr->tb, pr->m, pr->n, pr->k, op->alpha, op->a, op->lda,
             op->b, op->ldb, op->beta, op->ref, op->ldc);
}

/* Runs the canonical kernel (current ISA, threads, blocking) from the
 * starting C; 1 when the whole C buffer, padding included, has the
 * reference's bits and the call returned with the upper halves of the
 * vector registers clean (avx_state.h). */
static int matches_reference(struct operands *op)
{
    const struct problem *pr = op->pr;
    memcpy(op->c, op->c0, op->c_bytes);
    int rc = canon_gemm(pr->t, pr->order, pr->ta, pr->tb, pr->m, pr->n, pr->k, op->alpha, op->a,
                        op->lda, op->b, op->ldb, op->beta, op->c, op->ldc);
    const int dirty = avx_upper_left_dirty();
    if (dirty)
        print_message("left the upper halves of the vector registers in use (no vzeroupper)\n");
    int same = rc == 0 && !dirty && memcmp(op->c, op->ref, op->c_bytes) == 0;
    if (!same)
        print_message("differs: type %d %c%c%c m=%lld n=%lld k=%lld alpha %d beta %d isa %s "
                      "threads %d rc %d\n",
                      pr->t, pr->order, pr->ta, pr->tb, (long long)pr->m, (long long)pr->n,
                      (long long)pr->k, pr->alpha_cls, pr->beta_cls, canon_isa(),
                      canon_threads(), rc);
    return same;
}

static void release(struct operands *op)
{
    free(op->a);
    free(op->b);
    free(op->c0);
    free(op->ref);
    free(op->c);
}

static int check_problem(const struct problem *pr)
{
    struct operands op;
    prepare(pr, &op);
    int same = matches_reference(&op);
    release(&op);
    return same;
}

/* ---- the paths under test ----------------------------------------------- */

static const char *const isas[] = { "scalar", "avx2", "avx512" };

/* Runs fn once per ISA path this machine supports; returns how many. */
static int for_each_isa(void (*fn)(void *), void *arg)
{
    int ran = 0;
    for (size_t i = 0; i < sizeof isas / sizeof *isas; i++) {
        if (canon_set_isa(isas[i]) != 0)
            continue;
        fn(arg);
        ran++;
    }
    assert_int_equal(canon_set_isa(NULL), 0);
    /* Every path the CPU has runs: AVX-512 is never skipped where it can. */
    assert_int_equal(ran, 1 + (canon_set_isa("avx2") == 0) + canon_cpu_has_avx512());
    assert_int_equal(canon_set_isa(NULL), 0);
    return ran;
}

static const int64_t shapes[][3] = {
    { 0, 5, 3 },   { 5, 0, 3 },    { 4, 5, 0 },    { 1, 1, 1 },    { 1, 7, 3 },
    { 7, 1, 5 },   { 6, 16, 8 },   { 13, 17, 19 }, { 23, 37, 29 }, { 40, 33, 70 },
    { 31, 2, 41 }, { 3, 61, 12 },
};

/* Every shape, order and transpose pair, with alpha/beta classes cycling so
 * each class pair meets many shapes; in one type. */
static void all_shapes(void *arg)
{
    enum canon_type t = *(enum canon_type *)arg;
    static const char orders[] = "CR", trans[] = "NTC";
    int combo = 0, bad = 0, runs = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int o = 0; o < 2; o++)
            for (int x = 0; x < 3; x++)
                for (int y = 0; y < 3; y++) {
                    struct problem pr = { t, orders[o], trans[x], trans[y], shapes[s][0],
                                          shapes[s][1], shapes[s][2], combo % 4,
                                          (combo / 4) % 4, 0 };
                    combo += 3; /* steps through all 16 pairs, coprime to 16 */
                    bad += !check_problem(&pr);
                    runs++;
                }
    assert_int_equal(bad, 0);
    assert_int_equal(runs, 12 * 18);
}

static void each_type_all_shapes(void)
{
    for (int t = 0; t < CANON_NTYPES; t++) {
        enum canon_type type = (enum canon_type)t;
        assert_true(for_each_isa(all_shapes, &type) >= 1);
    }
}

static void test_gemm_canonical_equals_reference_order_default_blocking(void **state)
{
    (void)state;
    canon_set_threads(1);
    canon_set_blocking(0, 0, 0, 0);
    each_type_all_shapes();
}

/* Blocks far smaller than the shapes: many K slices (partial sums stored
 * and reloaded), several row and column blocks, edge tiles everywhere. */
static void test_gemm_canonical_equals_reference_order_small_blocks(void **state)
{
    (void)state;
    canon_set_threads(1);
    canon_set_blocking(8, 5, 20, 0);
    each_type_all_shapes();
    canon_set_blocking(1, 1, 1, 0);
    each_type_all_shapes();
    canon_set_blocking(12, 6, 40, 1); /* B packed slice by slice */
    each_type_all_shapes();
    canon_set_blocking(0, 0, 0, 0);
}

/* Shapes beyond the default blocks (AVX2: mc 144 rows, kc 256, nc 512;
 * AVX2 complex: mc 240, kc 128 for c and 64 for z; AVX-512 z: mc 256, kc
 * 32; scalar: mc 64). */
static void big_shapes(void *arg)
{
    (void)arg;
    static const struct problem prs[] = {
        { CANON_S, 'C', 'N', 'N', 150, 40, 300, 1, 0, 0 },
        { CANON_S, 'R', 'T', 'N', 7, 1100, 270, 3, 3, 0 },
        { CANON_D, 'C', 'T', 'T', 80, 30, 520, 2, 1, 0 },
        { CANON_D, 'R', 'N', 'T', 5, 1030, 260, 3, 2, 0 },
        { CANON_C, 'C', 'C', 'N', 70, 20, 300, 3, 3, 0 },
        { CANON_Z, 'R', 'N', 'C', 66, 21, 270, 3, 1, 0 },
        { CANON_C, 'R', 'N', 'N', 250, 30, 300, 3, 3, 0 },
        { CANON_Z, 'C', 'T', 'N', 20, 245, 150, 2, 1, 0 },
        { CANON_Z, 'R', 'C', 'N', 270, 20, 100, 3, 3, 0 },
        /* so long a K that B is packed slice by slice */
        { CANON_S, 'C', 'N', 'N', 3, 64, 70000, 3, 3, 0 },
        { CANON_D, 'R', 'N', 'N', 150, 9, 30000, 3, 3, 0 },
    };
    for (size_t i = 0; i < sizeof prs / sizeof *prs; i++)
        assert_true(check_problem(&prs[i]));
}

static void test_gemm_canonical_equals_reference_beyond_default_blocks(void **state)
{
    (void)state;
    canon_set_threads(1);
    canon_set_blocking(0, 0, 0, 0);
    assert_true(for_each_isa(big_shapes, NULL) >= 1);
}

/* ---- same bits for any thread count ------------------------------------- */

/* Products long enough (hundreds of microseconds) that the pool's workers
 * wake and take parts; each is checked against one reference computation
 * under every ISA path, thread count and blocking. */
static void test_gemm_canonical_same_bits_any_thread_count(void **state)
{
    (void)state;
    static const struct problem prs[] = {
        { CANON_S, 'C', 'N', 'N', 200, 300, 160, 1, 0, 0 },
        { CANON_S, 'R', 'T', 'N', 301, 97, 150, 3, 3, 0 },
        { CANON_D, 'C', 'N', 'T', 150, 200, 130, 3, 1, 0 },
        { CANON_C, 'R', 'C', 'T', 100, 110, 90, 3, 3, 0 },
        { CANON_Z, 'C', 'N', 'C', 90, 73, 80, 2, 3, 0 },
    };
    static const int counts[] = { 1, 2, 3, 8 };
    static const int64_t blockings[][4] = { { 0, 0, 0, 0 }, { 16, 7, 32, 1 } };
    uint64_t worker_parts = canon_pool_worker_parts();
    for (size_t i = 0; i < sizeof prs / sizeof *prs; i++) {
        struct operands op;
        prepare(&prs[i], &op);
        for (size_t x = 0; x < sizeof isas / sizeof *isas; x++) {
            if (canon_set_isa(isas[x]) != 0)
                continue;
            for (size_t bl = 0; bl < 2; bl++) {
                canon_set_blocking(blockings[bl][0], blockings[bl][1], blockings[bl][2],
                                   blockings[bl][3]);
                for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
                    canon_set_threads(counts[c]);
                    assert_int_equal(canon_threads(), counts[c]);
                    assert_true(matches_reference(&op));
                }
            }
        }
        release(&op);
    }
    /* the test proves something only if workers computed parts */
    assert_true(canon_pool_worker_parts() > worker_parts);
}

struct caller {
    enum canon_type t;
    int ok;
};

static void *concurrent_caller(void *v)
{
    struct caller *cl = v;
    struct problem pr = { cl->t, 'C', 'N', 'T', 120, 90, 80, 3, 3, 0 };
    cl->ok = 1;
    for (int i = 0; i < 5; i++)
        cl->ok &= check_problem(&pr);
    return NULL;
}

/* Two program threads at once while the pool has workers: one gets the
 * pool, the other runs alone; both are right. */
static void test_gemm_canonical_concurrent_callers_both_exact(void **state)
{
    (void)state;
    canon_set_threads(2);
    struct caller cl[2] = { { CANON_S, 0 }, { CANON_D, 0 } };
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, concurrent_caller, &cl[0]), 0);
    concurrent_caller(&cl[1]);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_true(cl[0].ok);
    assert_true(cl[1].ok);
    canon_set_threads(1);
}

/* A forked child has no workers of the parent's pool; it must start its
 * own, not wait for threads that do not exist. */
static void test_gemm_canonical_threads_work_after_fork(void **state)
{
    (void)state;
    /* The library's lifecycle (shim/life/lifecycle.c) registers the pool's
     * fork handler; this test program has no lifecycle, so it does. */
    static int registered;
    if (!registered++)
        pthread_atfork(NULL, NULL, canon_pool_fork_child);
    canon_set_threads(2);
    struct problem pr = { CANON_S, 'C', 'N', 'N', 100, 100, 100, 3, 3, 0 };
    assert_true(check_problem(&pr)); /* the parent's pool exists now */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(20);
        _exit(check_problem(&pr) ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    canon_set_threads(1);
}

/* A program that sets flush-to-zero and denormals-are-zero (as
 * torch.set_flush_denormal does) gets them on every thread of the call,
 * so the thread count still does not show. The operands make every
 * product subnormal, so FTZ/DAZ changes the result (checked too). */
static void test_gemm_canonical_workers_take_callers_ftz_daz(void **state)
{
    (void)state;
    enum { M = 200, N = 300, K = 128 }; /* long enough that a worker wakes for it */
    static float a[M * K], b[K * N], c1[M * N], c2[M * N], plain[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = 1e-20f * (float)(1 + i % 7);
    for (int i = 0; i < K * N; i++)
        b[i] = 1e-20f * (float)(1 + i % 5);
    canon_set_threads(1);
    assert_int_equal(canon_sgemm('C', 'N', 'N', M, N, K, 1.0f, a, M, b, K, 0.0f, plain, M), 0);
    unsigned csr = _mm_getcsr();
    _mm_setcsr(csr | 0x8040); /* FTZ | DAZ */
    int rc1 = canon_sgemm('C', 'N', 'N', M, N, K, 1.0f, a, M, b, K, 0.0f, c1, M);
    canon_set_threads(2);
    int rc2 = canon_sgemm('C', 'N', 'N', M, N, K, 1.0f, a, M, b, K, 0.0f, c2, M);
    _mm_setcsr(csr);
    assert_int_equal(rc1, 0);
    assert_int_equal(rc2, 0);
    assert_memory_equal(c1, c2, sizeof c1);
    assert_true(memcmp(c1, plain, sizeof c1) != 0);
}

/* ---- BLAS semantics ----------------------------------------------------- */

/* beta == 0: C is never read, so NaN there does not reach the result. */
static void nan_c(void *arg)
{
    (void)arg;
    for (int t = 0; t < CANON_NTYPES; t++)
        for (int a = 1; a < 4; a++) {
            struct problem pr = { (enum canon_type)t, 'C', 'N', 'N', 9, 18, 7, a, 0, 1 };
            assert_true(check_problem(&pr));
        }
}

static void test_gemm_canonical_beta_zero_ignores_nan_in_c(void **state)
{
    (void)state;
    canon_set_threads(1);
    assert_true(for_each_isa(nan_c, NULL) >= 1);
    float a[4] = { 1, 2, 3, 4 }, b[4] = { 1, 0, 0, 1 }, c[4] = { NAN, NAN, NAN, NAN };
    assert_int_equal(canon_sgemm('C', 'N', 'N', 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2), 0);
    for (int i = 0; i < 4; i++)
        assert_true(c[i] == a[i]);
}

/* alpha == 0 or k == 0: A and B are not read (NULL here), C = beta*C,
 * beta == 0 stores +0, and beta == 1 leaves C exactly as it was. */
static void test_gemm_canonical_alpha_zero_skips_a_and_b(void **state)
{
    (void)state;
    float c[6] = { 1, -0.0f, NAN, 4, 5, 6 }, keep[6];
    memcpy(keep, c, sizeof c);
    assert_int_equal(canon_sgemm('C', 'N', 'N', 2, 3, 4, 0.0f, NULL, 2, NULL, 4, 1.0f, c, 2), 0);
    assert_memory_equal(c, keep, sizeof c);
    assert_int_equal(canon_sgemm('R', 'T', 'N', 2, 3, 0, 5.0f, NULL, 2, NULL, 3, 1.0f, c, 3), 0);
    assert_memory_equal(c, keep, sizeof c);

    assert_int_equal(canon_sgemm('C', 'N', 'N', 2, 3, 4, -0.0f, NULL, 2, NULL, 4, 2.0f, c, 2), 0);
    assert_true(c[0] == 2 && c[3] == 8 && c[5] == 12 && isnan(c[2]));
    assert_true(c[1] == 0 && signbit(c[1]));
    assert_int_equal(canon_sgemm('C', 'N', 'N', 2, 3, 0, 1.0f, NULL, 2, NULL, 1, 0.0f, c, 2), 0);
    for (int i = 0; i < 6; i++)
        assert_true(c[i] == 0 && !signbit(c[i]));

    double z[4] = { 1, 2, NAN, 4 }, alpha0[2] = { 0, -0.0 }, beta0[2] = { 0, 0 };
    assert_int_equal(canon_zgemm('C', 'C', 'N', 1, 2, 3, alpha0, NULL, 3, NULL, 3, beta0, z, 1),
                     0);
    for (int i = 0; i < 4; i++)
        assert_true(z[i] == 0 && !signbit(z[i]));
}

/* What the BLAS rejects, we reject, leaving C alone: bad characters,
 * negative sizes, leading dimensions shorter than a stored run. */
static void test_gemm_canonical_rejects_what_blas_rejects(void **state)
{
    (void)state;
    float a[64] = { 0 }, b[64] = { 0 }, c[64], keep[64];
    for (int i = 0; i < 64; i++)
        c[i] = (float)i;
    memcpy(keep, c, sizeof c);
    struct {
        char o, ta, tb;
        int64_t m, n, k, lda, ldb, ldc;
    } bad[] = {
        { 'X', 'N', 'N', 2, 2, 2, 2, 2, 2 }, { 'C', 'Q', 'N', 2, 2, 2, 2, 2, 2 },
        { 'C', 'N', 0, 2, 2, 2, 2, 2, 2 },   { 'C', 'N', 'N', -1, 2, 2, 2, 2, 2 },
        { 'C', 'N', 'N', 2, -1, 2, 2, 2, 2 }, { 'C', 'N', 'N', 2, 2, -1, 2, 2, 2 },
        { 'C', 'N', 'N', 3, 2, 2, 2, 2, 3 }, /* lda < m */
        { 'C', 'T', 'N', 2, 2, 3, 2, 3, 2 }, /* transposed A: lda < k */
        { 'C', 'N', 'N', 2, 2, 3, 2, 2, 2 }, /* ldb < k */
        { 'C', 'N', 'T', 2, 3, 2, 2, 2, 2 }, /* transposed B: ldb < n */
        { 'C', 'N', 'N', 3, 2, 2, 3, 2, 2 }, /* ldc < m */
        { 'R', 'N', 'N', 2, 2, 3, 2, 2, 2 }, /* row-major A: lda < k */
        { 'R', 'N', 'N', 2, 3, 2, 2, 2, 2 }, /* row-major B: ldb < n */
        { 'R', 'N', 'N', 2, 3, 2, 2, 3, 2 }, /* row-major C: ldc < n */
        { 'C', 'N', 'N', 0, 2, 2, 0, 2, 1 }, /* ld 0 is short even when empty */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(canon_sgemm(bad[i].o, bad[i].ta, bad[i].tb, bad[i].m, bad[i].n,
                                     bad[i].k, 1.0f, a, bad[i].lda, b, bad[i].ldb, 0.0f, c,
                                     bad[i].ldc),
                         -1);
        assert_memory_equal(c, keep, sizeof c);
    }
    /* lower case is what Fortran callers pass; accepted */
    assert_int_equal(canon_sgemm('c', 'n', 't', 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2), 0);
}

/* The reference would be worthless if a plain multiply-then-add gave the
 * same bits: show that for these operands it does not. */
static void test_gemm_canonical_reference_tells_fused_from_unfused(void **state)
{
    (void)state;
    enum { N = 32 };
    float a[N * N], b[N * N], c[N * N], naive[N * N];
    fill(a, N * N, 0);
    fill(b, N * N, 0);
    assert_int_equal(canon_sgemm('C', 'N', 'N', N, N, N, 1.0f, a, N, b, N, 0.0f, c, N), 0);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            volatile float s = 0;
            for (int p = 0; p < N; p++) {
                volatile float prod = a[i + p * N] * b[p + j * N];
                s = s + prod;
            }
            naive[i + j * N] = s;
        }
    assert_true(memcmp(c, naive, sizeof c) != 0);
}

static void test_gemm_canonical_isa_choice(void **state)
{
    (void)state;
    const char *best = canon_isa();
    assert_int_equal(canon_set_isa("no-such-isa"), -1);
    assert_string_equal(canon_isa(), best);
    assert_int_equal(canon_set_isa("scalar"), 0);
    assert_string_equal(canon_isa(), "scalar");
    assert_int_equal(canon_set_isa("auto"), 0);
    assert_string_equal(canon_isa(), best);
    __builtin_cpu_init();
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const int avx512 = canon_cpu_has_avx512();
    /* The automatic choice is the fastest path the CPU has, as measured
     * (canonical_isa.c): AVX-512 for the GEMM where the CPU has it. */
    assert_string_equal(best, avx512 ? "avx512" : avx2 ? "avx2" : "scalar");
    assert_int_equal(canon_set_isa("avx2"), avx2 ? 0 : -1);
    /* AVX-512 is accepted exactly where the CPU and OS can run it. */
    assert_int_equal(canon_set_isa("avx512"), avx512 ? 0 : -1);
    if (avx512)
        assert_string_equal(canon_isa(), "avx512");
    assert_int_equal(canon_set_isa(NULL), 0);
    assert_string_equal(canon_isa(), best);
}

/* Every test starts and ends on the defaults: best ISA, 1 thread, default
 * blocking, whatever an earlier failure left behind. */
static int defaults(void **state)
{
    (void)state;
    canon_set_isa(NULL);
    canon_set_threads(1);
    canon_set_blocking(0, 0, 0, 0);
    return 0;
}

#define TEST(fn) cmocka_unit_test_setup_teardown(fn, defaults, defaults)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_gemm_canonical_equals_reference_order_default_blocking),
        TEST(test_gemm_canonical_equals_reference_order_small_blocks),
        TEST(test_gemm_canonical_equals_reference_beyond_default_blocks),
        TEST(test_gemm_canonical_same_bits_any_thread_count),
        TEST(test_gemm_canonical_concurrent_callers_both_exact),
        TEST(test_gemm_canonical_threads_work_after_fork),
        TEST(test_gemm_canonical_workers_take_callers_ftz_daz),
        TEST(test_gemm_canonical_beta_zero_ignores_nan_in_c),
        TEST(test_gemm_canonical_alpha_zero_skips_a_and_b),
        TEST(test_gemm_canonical_rejects_what_blas_rejects),
        TEST(test_gemm_canonical_reference_tells_fused_from_unfused),
        TEST(test_gemm_canonical_isa_choice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
