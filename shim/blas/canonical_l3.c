/* Canonical level-3 BLAS other than gemm (syrk, symm, trmm, trsm) in the
 * order of the contract (shim/blas/canonical.h). Each output element is
 * one SEQ sum, so these drivers only choose which elements to compute in
 * which order (in-place trmm and trsm must read old or solved values as
 * the contract says) and hand the sums to the active path's gemv kernels,
 * which run many independent sums side by side. Both gemv kernels take
 * each product's first factor from a matrix and the second from a vector:
 * that fits syrk, and the right-side cases with B as the matrix. Left-side
 * cases have A's element first; for real types the factors may trade
 * places (the product rounds the same), so they too run on B, while the
 * complex ones, and a backward trsm on side 'L' (whose terms run up the
 * columns of X), take the sequential dot one element at a time. These are
 * the fallbacks of canonical_l3_gemm.c and canonical_l3_tri.c, which run
 * the same sums on the GEMM core when they get their workspace.
 */
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* Bytes of a block of sums (a piece of a row or column of the output) and
 * of a block of gathered x values: 2048 floats .. 512 double complex each,
 * on the stack, small enough to stay in L1 beside the streams of A and B. */
#define BLOCK_BYTES 8192

union elem {
    float s[2];
    double d[2];
};

static int64_t max1(int64_t v)
{
    return v > 1 ? v : 1;
}

/* The element (i, j) of a column-major matrix of `size`-byte elements. */
static void *at2(const void *x, int64_t i, int64_t j, int64_t ld, size_t size)
{
    return (void *)canon_blas_at(x, i + j * ld, size);
}

/* op(A)_ij of a triangular operand whose rows and columns step by ri and
 * rj elements (canon_blas_tri_ri/rj). */
static const void *opa(const void *a, int64_t ri, int64_t rj, int64_t i, int64_t j, size_t size)
{
    return canon_blas_at(a, i * ri + j * rj, size);
}

static void zero_matrix(int64_t m, int64_t n, void *b, int64_t ldb, size_t size)
{
    for (int64_t j = 0; j < n; j++)
        memset(at2(b, 0, j, ldb, size), 0, (size_t)m * size);
}

union block {
    float s[BLOCK_BYTES / sizeof(float)];
    double d[BLOCK_BYTES / sizeof(double)];
};


/* Copies x_p = x[p*incx], p < cnt, to buf, negated and conjugated as how
 * says (exact sign flips). */
static void load_x(enum canon_type t, int64_t cnt, const void *x, int64_t incx, int how,
                   void *buf)
{
    const size_t size = canon_blas_size(t);
    for (int64_t p = 0; p < cnt; p++) {
        union elem v;
        memcpy(&v, canon_blas_at(x, p * incx, size), size);
        if (t == CANON_S || t == CANON_C) {
            if (how & X_NEG)
                v.s[0] = -v.s[0];
            if (t == CANON_C && !(how & X_NEG) != !(how & X_CONJ))
                v.s[1] = -v.s[1];
        } else {
            if (how & X_NEG)
                v.d[0] = -v.d[0];
            if (t == CANON_Z && !(how & X_NEG) != !(how & X_CONJ))
                v.d[1] = -v.d[1];
        }
        memcpy((char *)buf + p * (int64_t)size, &v, size);
    }
}

/* Column sweep: for p = 0 .. cnt-1 in order, for every i < rows:
 * s_i = CMAC(s_i, M_ip, x_p), M column-major (ldm), x as how says. */
/* Declared in canonical_kernels.h (the rank-2k and GEMM-core drivers use
 * them too); here under their short names. */
#define sweep canon_blas_sweep
#define dots canon_blas_dots

void canon_blas_sweep(const struct canon_blas_kern *kern, enum canon_type t, int64_t rows,
                      int64_t cnt, const void *mat, int64_t ldm, const void *x, int64_t incx,
                      int how, void *s)
{
    const size_t size = canon_blas_size(t);
    if (!how) {
        kern->gemv_n(rows, cnt, mat, ldm, 0, x, incx, s);
        return;
    }
    _Alignas(64) union block xb;
    const int64_t cap = BLOCK_BYTES / (int64_t)size;
    for (int64_t p0 = 0; p0 < cnt; p0 += cap) {
        const int64_t c = cnt - p0 < cap ? cnt - p0 : cap;
        load_x(t, c, canon_blas_at(x, p0 * incx, size), incx, how, &xb);
        kern->gemv_n(rows, c, canon_blas_at(mat, p0 * ldm, size), ldm, 0, &xb, 1, s);
    }
}

/* Column dots: for every j < cols, for p = 0 .. cnt-1 in order:
 * s_j = CMAC(s_j, M_pj, x_p). For real types M_pj*x_p is x_p*M_pj. */
void canon_blas_dots(const struct canon_blas_kern *kern, enum canon_type t, int64_t cnt,
                     int64_t cols, const void *mat, int64_t ldm, const void *x, int64_t incx,
                     int how, void *s)
{
    const size_t size = canon_blas_size(t);
    if (!how) {
        kern->gemv_t(cnt, cols, mat, ldm, 0, x, incx, s);
        return;
    }
    _Alignas(64) union block xb;
    const int64_t cap = BLOCK_BYTES / (int64_t)size;
    for (int64_t p0 = 0; p0 < cnt; p0 += cap) {
        const int64_t c = cnt - p0 < cap ? cnt - p0 : cap;
        load_x(t, c, canon_blas_at(x, p0 * incx, size), incx, how, &xb);
        kern->gemv_t(c, cols, canon_blas_at(mat, p0, size), ldm, 0, &xb, 1, s);
    }
}

static int syrk(enum canon_type t, char order, char uplo, char trans, int64_t n, int64_t k,
                const void *alpha, const void *a, int64_t lda, const void *beta, void *c,
                int64_t ldc)
{
    const char o = canon_blas_upper(order), tr = canon_blas_upper(trans);
    char u = canon_blas_upper(uplo);
    const size_t size = canon_blas_size(t);
    const struct canon_blas_kern *kern = &canon_blas_kernels()->t[t];
    if ((o != 'R' && o != 'C') || (u != 'U' && u != 'L') ||
        (tr != 'N' && tr != 'T' && (tr != 'C' || canon_blas_complex(t))) || n < 0 || k < 0)
        return -1;
    int transposed = tr != 'N';
    if (o == 'R') { /* uplo flipped, trans 'N' <-> 'T' ('C' -> 'N') */
        u = u == 'U' ? 'L' : 'U';
        transposed = !transposed;
    }
    if (lda < max1(transposed ? k : n) || ldc < max1(n))
        return -1;
    if (n == 0)
        return 0;
    const int upper = u == 'U';
    if (canon_blas_is_zero(t, alpha) || k == 0) {
        for (int64_t j = 0; j < n; j++) {
            const int64_t i0 = upper ? 0 : j, len = upper ? j + 1 : n - j;
            canon_blas_scale(t, len, beta, at2(c, i0, j, ldc, size), 1);
        }
        return 0;
    }
    /* On the GEMM core: the same sums in the same order (see
     * canonical_l3_gemm.c); the loop below where it has no workspace. */
    const struct canon_tri_update up = {
        t, upper, 0, n, k, transposed ? 'T' : 'N', transposed ? 'N' : 'T', alpha, a, lda, a, lda,
        beta,
    };
    if (canon_l3_tri_update(&up, c, ldc) == 0)
        return 0;
    _Alignas(64) union block sums;
    const int64_t block = BLOCK_BYTES / (int64_t)size;
    for (int64_t j = 0; j < n; j++) {
        const int64_t lo = upper ? 0 : j, hi = upper ? j + 1 : n;
        for (int64_t i0 = lo; i0 < hi; i0 += block) {
            const int64_t nb = hi - i0 < block ? hi - i0 : block;
            memset(&sums, 0, (size_t)nb * size);
            /* s_i = SEQ over p of op(A)_ip * op(A)_jp */
            if (transposed)
                kern->gemv_t(k, nb, at2(a, 0, i0, lda, size), lda, 0, at2(a, 0, j, lda, size), 1,
                             &sums);
            else
                kern->gemv_n(nb, k, at2(a, i0, 0, lda, size), lda, 0, at2(a, j, 0, lda, size), lda,
                             &sums);
            for (int64_t e = 0; e < nb; e++)
                canon_blas_ab(t, alpha, beta, canon_blas_at(&sums, e, size),
                              at2(c, i0 + e, j, ldc, size));
        }
    }
    return 0;
}

int canon_ssyrk(char order, char uplo, char trans, int64_t n, int64_t k, float alpha,
                const float *a, int64_t lda, float beta, float *c, int64_t ldc)
{
    return syrk(CANON_S, order, uplo, trans, n, k, &alpha, a, lda, &beta, c, ldc);
}

int canon_dsyrk(char order, char uplo, char trans, int64_t n, int64_t k, double alpha,
                const double *a, int64_t lda, double beta, double *c, int64_t ldc)
{
    return syrk(CANON_D, order, uplo, trans, n, k, &alpha, a, lda, &beta, c, ldc);
}

int canon_csyrk(char order, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                const void *a, int64_t lda, const void *beta, void *c, int64_t ldc)
{
    return syrk(CANON_C, order, uplo, trans, n, k, alpha, a, lda, beta, c, ldc);
}

int canon_zsyrk(char order, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                const void *a, int64_t lda, const void *beta, void *c, int64_t ldc)
{
    return syrk(CANON_Z, order, uplo, trans, n, k, alpha, a, lda, beta, c, ldc);
}

/* s = SEQ over p of A_ip*B_pj (side 'L'), one element, where the symmetric
 * A is read from its stored triangle: one run along a row and one along a
 * column of the stored triangle. */
static void symm_left_sum(const struct canon_blas_kern *kern, size_t size, int lower, int64_t m,
                          const void *a, int64_t lda, const void *b, int64_t ldb, int64_t i,
                          int64_t j, void *s)
{
    if (lower) { /* p <= i: a(i, p); p > i: a(p, i) */
        kern->dot_seq(i + 1, at2(a, i, 0, lda, size), lda, at2(b, 0, j, ldb, size), 1, 0, s);
        kern->dot_seq(m - 1 - i, at2(a, i + 1, i, lda, size), 1, at2(b, i + 1, j, ldb, size), 1, 0,
                      s);
    } else { /* p < i: a(p, i); p >= i: a(i, p) */
        kern->dot_seq(i, at2(a, 0, i, lda, size), 1, at2(b, 0, j, ldb, size), 1, 0, s);
        kern->dot_seq(m - i, at2(a, i, i, lda, size), lda, at2(b, i, j, ldb, size), 1, 0, s);
    }
}

/* A_ip of a Hermitian A read from its stored triangle (hemm): conj(A_pi)
 * across it, the diagonal's imaginary part +0. */
static void herm_el(enum canon_type t, int lower, const void *a, int64_t lda, int64_t i,
                    int64_t p, union elem *e)
{
    const size_t size = canon_blas_size(t);
    const int stored = lower ? i >= p : i <= p;
    memcpy(e, stored ? at2(a, i, p, lda, size) : at2(a, p, i, lda, size), size);
    if (i == p || !stored)
        canon_herm_fix(e, size, i == p);
}

/* hemm where the GEMM core has no workspace: each C_ij's products one at
 * a time in increasing p (dot_seq, A's element first for side 'L', B's
 * for 'R', as symm), then AB: the GEMM's bits, slowly. */
static void hemm_seq(enum canon_type t, int left, int lower, int64_t m, int64_t n,
                     const void *alpha, const void *a, int64_t lda, const void *b, int64_t ldb,
                     const void *beta, void *c, int64_t ldc)
{
    const struct canon_blas_kern *kern = &canon_blas_kernels()->t[t];
    const size_t size = canon_blas_size(t);
    const int64_t dim = left ? m : n;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            union elem s, e;
            memset(&s, 0, sizeof s);
            for (int64_t p = 0; p < dim; p++) {
                herm_el(t, lower, a, lda, left ? i : p, left ? p : j, &e);
                if (left)
                    kern->dot_seq(1, &e, 1, at2(b, p, j, ldb, size), 1, 0, &s);
                else
                    kern->dot_seq(1, at2(b, i, p, ldb, size), 1, &e, 1, 0, &s);
            }
            canon_blas_ab(t, alpha, beta, &s, at2(c, i, j, ldc, size));
        }
}

/* symm, or hemm (herm) for c and z. */
static int symm(enum canon_type t, int herm, char order, char side, char uplo, int64_t m,
                int64_t n, const void *alpha, const void *a, int64_t lda, const void *b,
                int64_t ldb, const void *beta, void *c, int64_t ldc)
{
    const char o = canon_blas_upper(order);
    char sd = canon_blas_upper(side), u = canon_blas_upper(uplo);
    const size_t size = canon_blas_size(t);
    const struct canon_blas_kern *kern = &canon_blas_kernels()->t[t];
    if ((o != 'R' && o != 'C') || (sd != 'L' && sd != 'R') || (u != 'U' && u != 'L') || m < 0 ||
        n < 0)
        return -1;
    if (o == 'R') { /* side and uplo flipped, m and n swapped */
        const int64_t swap = m;
        sd = sd == 'L' ? 'R' : 'L';
        u = u == 'U' ? 'L' : 'U';
        m = n;
        n = swap;
    }
    if (lda < max1(sd == 'L' ? m : n) || ldb < max1(m) || ldc < max1(m))
        return -1;
    if (m == 0 || n == 0 || (canon_blas_is_zero(t, alpha) && canon_blas_is_one(t, beta)))
        return 0;
    if (canon_blas_is_zero(t, alpha)) {
        for (int64_t j = 0; j < n; j++)
            canon_blas_scale(t, m, beta, at2(c, 0, j, ldc, size), 1);
        return 0;
    }
    const int lower = u == 'L';
    /* On the GEMM core (canonical_l3_gemm.c); the loops below where it has
     * no workspace, with the same bits. */
    if (canon_l3_symm_gemm(t, herm, sd == 'L', lower, m, n, alpha, a, lda, b, ldb, beta, c,
                           ldc) == 0)
        return 0;
    if (herm) {
        hemm_seq(t, sd == 'L', lower, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
        return 0;
    }
    const int64_t block = BLOCK_BYTES / (int64_t)size;
    _Alignas(64) union block sums;
    if (sd == 'R') { /* C(:, j): sweeps of B's columns against A(:, j) */
        for (int64_t j = 0; j < n; j++)
            for (int64_t i0 = 0; i0 < m; i0 += block) {
                const int64_t nb = m - i0 < block ? m - i0 : block;
                const void *bi = at2(b, i0, 0, ldb, size), *bj = at2(b, i0, j, ldb, size);
                memset(&sums, 0, (size_t)nb * size);
                if (lower) { /* p < j: a(j, p); p >= j: a(p, j) */
                    sweep(kern, t, nb, j, bi, ldb, at2(a, j, 0, lda, size), lda, 0, &sums);
                    sweep(kern, t, nb, n - j, bj, ldb, at2(a, j, j, lda, size), 1, 0, &sums);
                } else { /* p <= j: a(p, j); p > j: a(j, p) */
                    sweep(kern, t, nb, j + 1, bi, ldb, at2(a, 0, j, lda, size), 1, 0, &sums);
                    sweep(kern, t, nb, n - 1 - j, at2(b, i0, j + 1, ldb, size), ldb,
                          at2(a, j, j + 1, lda, size), lda, 0, &sums);
                }
                for (int64_t e = 0; e < nb; e++)
                    canon_blas_ab(t, alpha, beta, canon_blas_at(&sums, e, size),
                                  at2(c, i0 + e, j, ldc, size));
            }
    } else if (!canon_blas_complex(t)) { /* C(i, :): dots of B's columns with A(i, :) */
        for (int64_t i = 0; i < m; i++)
            for (int64_t j0 = 0; j0 < n; j0 += block) {
                const int64_t nb = n - j0 < block ? n - j0 : block;
                memset(&sums, 0, (size_t)nb * size);
                if (lower) { /* p <= i: a(i, p); p > i: a(p, i) */
                    dots(kern, t, i + 1, nb, at2(b, 0, j0, ldb, size), ldb, at2(a, i, 0, lda, size),
                         lda, 0, &sums);
                    dots(kern, t, m - 1 - i, nb, at2(b, i + 1, j0, ldb, size), ldb,
                         at2(a, i + 1, i, lda, size), 1, 0, &sums);
                } else { /* p < i: a(p, i); p >= i: a(i, p) */
                    dots(kern, t, i, nb, at2(b, 0, j0, ldb, size), ldb, at2(a, 0, i, lda, size), 1,
                         0, &sums);
                    dots(kern, t, m - i, nb, at2(b, i, j0, ldb, size), ldb, at2(a, i, i, lda, size),
                         lda, 0, &sums);
                }
                for (int64_t e = 0; e < nb; e++)
                    canon_blas_ab(t, alpha, beta, canon_blas_at(&sums, e, size),
                                  at2(c, i, j0 + e, ldc, size));
            }
    } else { /* complex, side 'L': A's element is the first factor */
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) {
                union elem s;
                memset(&s, 0, sizeof s);
                symm_left_sum(kern, size, lower, m, a, lda, b, ldb, i, j, &s);
                canon_blas_ab(t, alpha, beta, &s, at2(c, i, j, ldc, size));
            }
    }
    return 0;
}

int canon_ssymm(char order, char side, char uplo, int64_t m, int64_t n, float alpha, const float *a,
                int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    return symm(CANON_S, 0, order, side, uplo, m, n, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

int canon_dsymm(char order, char side, char uplo, int64_t m, int64_t n, double alpha,
                const double *a, int64_t lda, const double *b, int64_t ldb, double beta, double *c,
                int64_t ldc)
{
    return symm(CANON_D, 0, order, side, uplo, m, n, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

int canon_csymm(char order, char side, char uplo, int64_t m, int64_t n, const void *alpha,
                const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta, void *c,
                int64_t ldc)
{
    return symm(CANON_C, 0, order, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
}

int canon_zsymm(char order, char side, char uplo, int64_t m, int64_t n, const void *alpha,
                const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta, void *c,
                int64_t ldc)
{
    return symm(CANON_Z, 0, order, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
}

int canon_chemm(char order, char side, char uplo, int64_t m, int64_t n, const void *alpha,
                const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta, void *c,
                int64_t ldc)
{
    return symm(CANON_C, 1, order, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
}

int canon_zhemm(char order, char side, char uplo, int64_t m, int64_t n, const void *alpha,
                const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta, void *c,
                int64_t ldc)
{
    return symm(CANON_Z, 1, order, side, uplo, m, n, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* The checks and mapping shared by trmm and trsm. Returns 0 with the
 * column-major side ('L' or 'R'), dimensions and tri filled, 1 for a
 * quick return, -1 for bad arguments. */
static int trm_args(enum canon_type t, char order, char side, char uplo, char transa,
                    char diag, int64_t *m, int64_t *n, int64_t lda, int64_t ldb, char *sd,
                    struct canon_blas_tri *tri)
{
    const char o = canon_blas_upper(order);
    *sd = canon_blas_upper(side);
    if ((o != 'R' && o != 'C') || (*sd != 'L' && *sd != 'R') ||
        canon_blas_tri(t, uplo, transa, diag, o == 'R', 0, tri) || *m < 0 || *n < 0)
        return -1;
    if (o == 'R') { /* side and uplo flipped, m and n swapped; trans kept */
        const int64_t swap = *m;
        *sd = *sd == 'L' ? 'R' : 'L';
        *m = *n;
        *n = swap;
    }
    if (lda < max1(*sd == 'L' ? *m : *n) || ldb < max1(*m))
        return -1;
    return *m == 0 || *n == 0;
}

/* B = alpha*op(A)*B or alpha*B*op(A), in place: the rows (side 'L') or
 * columns (side 'R') of B in the order that reads only old ones. */
static int trmm(enum canon_type t, char order, char side, char uplo, char transa, char diag,
                int64_t m, int64_t n, const void *alpha, const void *a, int64_t lda, void *b,
                int64_t ldb)
{
    struct canon_blas_tri tri;
    char sd;
    const int r = trm_args(t, order, side, uplo, transa, diag, &m, &n, lda, ldb, &sd, &tri);
    if (r)
        return r < 0 ? -1 : 0;
    const size_t size = canon_blas_size(t);
    if (canon_blas_is_zero(t, alpha)) {
        zero_matrix(m, n, b, ldb, size);
        return 0;
    }
    /* On the GEMM core (canonical_l3_tri.c); below, where it has no
     * workspace, the same sums one row or column at a time. */
    if (canon_l3_tri_gemm(t, 0, sd, &tri, m, n, alpha, a, lda, b, ldb) == 0)
        return 0;
    const struct canon_blas_kern *kern = &canon_blas_kernels()->t[t];
    const int64_t ri = canon_blas_tri_ri(&tri, lda), rj = canon_blas_tri_rj(&tri, lda);
    const int64_t block = BLOCK_BYTES / (int64_t)size;
    _Alignas(64) union block sums;
    if (sd == 'R') { /* B(:, j) = alpha * sweeps of B's columns against op(A)(:, j) */
        const int how = tri.conj ? X_CONJ : 0;
        for (int64_t step = 0; step < n; step++) {
            const int64_t j = tri.upper ? n - 1 - step : step;
            for (int64_t i0 = 0; i0 < m; i0 += block) {
                const int64_t nb = m - i0 < block ? m - i0 : block;
                const void *bj = at2(b, i0, j, ldb, size);
                memset(&sums, 0, (size_t)nb * size);
                if (tri.upper) /* p < j */
                    sweep(kern, t, nb, j, at2(b, i0, 0, ldb, size), ldb, opa(a, ri, rj, 0, j, size),
                          ri, how, &sums);
                if (tri.unit)
                    for (int64_t e = 0; e < nb; e++)
                        canon_blas_add(t, (void *)canon_blas_at(&sums, e, size),
                                       canon_blas_at(bj, e, size));
                else
                    sweep(kern, t, nb, 1, bj, ldb, opa(a, ri, rj, j, j, size), ri, how, &sums);
                if (!tri.upper) /* p > j */
                    sweep(kern, t, nb, n - 1 - j, at2(b, i0, j + 1, ldb, size), ldb,
                          opa(a, ri, rj, j + 1, j, size), ri, how, &sums);
                for (int64_t e = 0; e < nb; e++)
                    canon_blas_mul(t, alpha, canon_blas_at(&sums, e, size),
                                   (void *)canon_blas_at(bj, e, size));
            }
        }
    } else if (!canon_blas_complex(t)) { /* B(i, :) = alpha * dots with op(A)(i, :) */
        for (int64_t step = 0; step < m; step++) {
            const int64_t i = tri.upper ? step : m - 1 - step;
            for (int64_t j0 = 0; j0 < n; j0 += block) {
                const int64_t nb = n - j0 < block ? n - j0 : block;
                memset(&sums, 0, (size_t)nb * size);
                if (!tri.upper) /* p < i */
                    dots(kern, t, i, nb, at2(b, 0, j0, ldb, size), ldb, opa(a, ri, rj, i, 0, size),
                         rj, 0, &sums);
                if (tri.unit)
                    for (int64_t e = 0; e < nb; e++)
                        canon_blas_add(t, (void *)canon_blas_at(&sums, e, size),
                                       at2(b, i, j0 + e, ldb, size));
                else
                    dots(kern, t, 1, nb, at2(b, i, j0, ldb, size), ldb, opa(a, ri, rj, i, i, size),
                         rj, 0, &sums);
                if (tri.upper) /* p > i */
                    dots(kern, t, m - 1 - i, nb, at2(b, i + 1, j0, ldb, size), ldb,
                         opa(a, ri, rj, i, i + 1, size), rj, 0, &sums);
                for (int64_t e = 0; e < nb; e++)
                    canon_blas_mul(t, alpha, canon_blas_at(&sums, e, size),
                                   at2(b, i, j0 + e, ldb, size));
            }
        }
    } else { /* complex, side 'L': op(A)'s element is the first factor */
        const int flags = tri.conj ? CANON_CONJ_U : 0;
        for (int64_t j = 0; j < n; j++)
            for (int64_t step = 0; step < m; step++) {
                const int64_t i = tri.upper ? step : m - 1 - step;
                void *bij = at2(b, i, j, ldb, size);
                union elem s;
                memset(&s, 0, sizeof s);
                if (!tri.upper)
                    kern->dot_seq(i, opa(a, ri, rj, i, 0, size), rj, at2(b, 0, j, ldb, size), 1,
                                  flags, &s);
                if (tri.unit)
                    canon_blas_add(t, &s, bij);
                else
                    kern->dot_seq(1, opa(a, ri, rj, i, i, size), rj, bij, 1, flags, &s);
                if (tri.upper)
                    kern->dot_seq(m - 1 - i, opa(a, ri, rj, i, i + 1, size), rj,
                                  at2(b, i + 1, j, ldb, size), 1, flags, &s);
                canon_blas_mul(t, alpha, &s, bij);
            }
    }
    return 0;
}

/* s = B_ij, or CMUL(alpha, B_ij), for nb elements of B from b0 (step
 * inc), into the sums. */
static void scaled_rhs(enum canon_type t, int one, const void *alpha, int64_t nb,
                       const void *b0, int64_t inc, void *sums)
{
    const size_t size = canon_blas_size(t);
    for (int64_t e = 0; e < nb; e++) {
        void *se = (void *)canon_blas_at(sums, e, size);
        const void *be = canon_blas_at(b0, e * inc, size);
        if (one)
            memcpy(se, be, size);
        else
            canon_blas_mul(t, alpha, be, se);
    }
}

/* Solves op(A)*X = alpha*B or X*op(A) = alpha*B in place, each row (side
 * 'L') or column (side 'R') of X once the ones it needs are solved. */
static int trsm(enum canon_type t, char order, char side, char uplo, char transa, char diag,
                int64_t m, int64_t n, const void *alpha, const void *a, int64_t lda, void *b,
                int64_t ldb)
{
    struct canon_blas_tri tri;
    char sd;
    const int r = trm_args(t, order, side, uplo, transa, diag, &m, &n, lda, ldb, &sd, &tri);
    if (r)
        return r < 0 ? -1 : 0;
    const size_t size = canon_blas_size(t);
    if (canon_blas_is_zero(t, alpha)) {
        zero_matrix(m, n, b, ldb, size);
        return 0;
    }
    if (canon_l3_tri_gemm(t, 1, sd, &tri, m, n, alpha, a, lda, b, ldb) == 0)
        return 0;
    const struct canon_blas_kern *kern = &canon_blas_kernels()->t[t];
    const int64_t ri = canon_blas_tri_ri(&tri, lda), rj = canon_blas_tri_rj(&tri, lda);
    const int one = canon_blas_is_one(t, alpha);
    const int64_t block = BLOCK_BYTES / (int64_t)size;
    _Alignas(64) union block sums;
    if (sd == 'R') {
        /* X(:, j): s -= X_ik op(A)_kj as sweeps of X's columns against
         * -op(A)(:, j) (negating either factor rounds the same) */
        const int how = X_NEG | (tri.conj ? X_CONJ : 0);
        for (int64_t step = 0; step < n; step++) {
            const int64_t j = tri.upper ? step : n - 1 - step;
            for (int64_t i0 = 0; i0 < m; i0 += block) {
                const int64_t nb = m - i0 < block ? m - i0 : block;
                void *bj = at2(b, i0, j, ldb, size);
                scaled_rhs(t, one, alpha, nb, bj, 1, &sums);
                if (tri.upper) /* k < j, increasing */
                    sweep(kern, t, nb, j, at2(b, i0, 0, ldb, size), ldb, opa(a, ri, rj, 0, j, size),
                          ri, how, &sums);
                else /* k > j, decreasing: the solving order */
                    sweep(kern, t, nb, n - 1 - j, at2(b, i0, n - 1, ldb, size), -ldb,
                          opa(a, ri, rj, n - 1, j, size), -ri, how, &sums);
                for (int64_t e = 0; e < nb; e++) {
                    void *se = (void *)canon_blas_at(&sums, e, size);
                    if (!tri.unit)
                        canon_blas_div(t, se, se, opa(a, ri, rj, j, j, size), tri.conj);
                    memcpy(at2(b, i0 + e, j, ldb, size), se, size);
                }
            }
        }
    } else if (!canon_blas_complex(t) && !tri.upper) {
        /* X(i, :), forward: s -= op(A)_ik X_kj, k < i, as dots of X's
         * columns with -op(A)(i, :) (real: the factors may trade places) */
        for (int64_t i = 0; i < m; i++) {
            for (int64_t j0 = 0; j0 < n; j0 += block) {
                const int64_t nb = n - j0 < block ? n - j0 : block;
                scaled_rhs(t, one, alpha, nb, at2(b, i, j0, ldb, size), ldb, &sums);
                dots(kern, t, i, nb, at2(b, 0, j0, ldb, size), ldb, opa(a, ri, rj, i, 0, size), rj,
                     X_NEG, &sums);
                for (int64_t e = 0; e < nb; e++) {
                    void *se = (void *)canon_blas_at(&sums, e, size);
                    if (!tri.unit)
                        canon_blas_div(t, se, se, opa(a, ri, rj, i, i, size), 0);
                    memcpy(at2(b, i, j0 + e, ldb, size), se, size);
                }
            }
        }
    } else { /* complex, or backward, side 'L': s -= op(A)_ik X_kj, one
              * element at a time, k in the solving order */
        const int flags = (tri.conj ? CANON_CONJ_U : 0) | CANON_NEG_U;
        for (int64_t j = 0; j < n; j++)
            for (int64_t step = 0; step < m; step++) {
                const int64_t i = tri.upper ? m - 1 - step : step;
                void *bij = at2(b, i, j, ldb, size);
                union elem s;
                scaled_rhs(t, one, alpha, 1, bij, 1, &s);
                if (tri.upper) /* k = m-1 .. i+1 */
                    kern->dot_seq(m - 1 - i, opa(a, ri, rj, i, m - 1, size), -rj,
                                  at2(b, m - 1, j, ldb, size), -1, flags, &s);
                else
                    kern->dot_seq(i, opa(a, ri, rj, i, 0, size), rj, at2(b, 0, j, ldb, size), 1,
                                  flags, &s);
                if (!tri.unit)
                    canon_blas_div(t, &s, &s, opa(a, ri, rj, i, i, size), tri.conj);
                memcpy(bij, &s, size);
            }
    }
    return 0;
}

int canon_strmm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                float alpha, const float *a, int64_t lda, float *b, int64_t ldb)
{
    return trmm(CANON_S, order, side, uplo, transa, diag, m, n, &alpha, a, lda, b, ldb);
}

int canon_dtrmm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                double alpha, const double *a, int64_t lda, double *b, int64_t ldb)
{
    return trmm(CANON_D, order, side, uplo, transa, diag, m, n, &alpha, a, lda, b, ldb);
}

int canon_ctrmm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                const void *alpha, const void *a, int64_t lda, void *b, int64_t ldb)
{
    return trmm(CANON_C, order, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb);
}

int canon_ztrmm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                const void *alpha, const void *a, int64_t lda, void *b, int64_t ldb)
{
    return trmm(CANON_Z, order, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb);
}

int canon_strsm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                float alpha, const float *a, int64_t lda, float *b, int64_t ldb)
{
    return trsm(CANON_S, order, side, uplo, transa, diag, m, n, &alpha, a, lda, b, ldb);
}

int canon_dtrsm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                double alpha, const double *a, int64_t lda, double *b, int64_t ldb)
{
    return trsm(CANON_D, order, side, uplo, transa, diag, m, n, &alpha, a, lda, b, ldb);
}

int canon_ctrsm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                const void *alpha, const void *a, int64_t lda, void *b, int64_t ldb)
{
    return trsm(CANON_C, order, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb);
}

int canon_ztrsm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                const void *alpha, const void *a, int64_t lda, void *b, int64_t ldb)
{
    return trsm(CANON_Z, order, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb);
}
