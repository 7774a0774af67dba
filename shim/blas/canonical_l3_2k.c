/* Canonical rank-2k updates, ?syr2k and ?her2k, and ?herk (her2k's first
 * update alone, with B = A), in the order of the contract
 * (shim/blas/canonical.h). Before these existed all three ran the vendor
 * BLAS pinned, and their bits changed with its thread count. The
 * contract is GEMM updates of the uplo triangle in turn, so they run on
 * the canonical GEMM core (canonical_l3_gemm.c); where it has no
 * workspace, the same sums run one element at a time on the active
 * path's gemv loops, each in increasing p, with the same bits.
 */
#include <math.h>
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* Sums per block: 2048 floats .. 512 double complex, on the stack. */
#define BLOCK_BYTES 8192

union block2k {
    float s[BLOCK_BYTES / sizeof(float)];
    double d[BLOCK_BYTES / sizeof(double)];
};

/* One scalar of any type. */
union scalar2k {
    float s[2];
    double d[2];
};

static int64_t max1(int64_t v)
{
    return v > 1 ? v : 1;
}

static void *at2(const void *x, int64_t i, int64_t j, int64_t ld, size_t size)
{
    return (void *)canon_blas_at(x, i + j * ld, size);
}

/* One rank-2k problem after argument checks and the row-major mapping. */
struct rank2k {
    enum canon_type t;
    int herm;       /* her2k: the second factor conjugated */
    int transposed; /* op(X) = X^T (syr2k) or X^H (her2k), X k x n */
    int64_t n, k;
    const void *a, *b;
    int64_t lda, ldb;
};

/* s_i += op(X)_ip * w(op(Y)_jp) for p = 0 .. k-1 in order, for the nb rows
 * i0 .. i0+nb-1, where w conjugates for her2k. */
static void term(const struct canon_blas_kern *kern, const struct rank2k *P, const void *x,
                 int64_t ldx, const void *y, int64_t ldy, int64_t i0, int64_t nb, int64_t j,
                 void *s)
{
    const size_t size = canon_blas_size(P->t);
    if (P->transposed) /* op(X)_ip = X_pi (conj for her2k), w(op(Y)_jp) = Y_pj */
        kern->gemv_t(P->k, nb, at2(x, 0, i0, ldx, size), ldx, P->herm, at2(y, 0, j, ldy, size), 1,
                     s);
    else /* op(X)_ip = X_ip, w(op(Y)_jp) = Y_jp (conj for her2k) */
        canon_blas_sweep(kern, P->t, nb, P->k, at2(x, i0, 0, ldx, size), ldx,
                         at2(y, j, 0, ldy, size), ldy, P->herm ? X_CONJ : 0, s);
}

/* Sets the imaginary part of a complex element to +0. */
static void imag_zero(enum canon_type t, void *e)
{
    if (t == CANON_C)
        ((float *)e)[1] = 0;
    else
        ((double *)e)[1] = 0;
}

/* her2k with alpha == 0 or k == 0 (beta != 1): c = beta*c on the
 * triangle, each part rounded, the diagonal real; beta == 0 stores 0. */
static void her2k_scale(const struct rank2k *P, int upper, const void *betav, void *c,
                        int64_t ldc)
{
    const size_t size = canon_blas_size(P->t);
    for (int64_t j = 0; j < P->n; j++) {
        const int64_t lo = upper ? 0 : j, hi = upper ? j + 1 : P->n;
        for (int64_t i = lo; i < hi; i++) {
            void *e = at2(c, i, j, ldc, size);
            if (P->t == CANON_C) {
                float *v = e, beta = *(const float *)betav;
                v[0] = beta == 0 ? 0 : beta * v[0];
                v[1] = beta == 0 || i == j ? 0 : beta * v[1];
            } else {
                double *v = e, beta = *(const double *)betav;
                v[0] = beta == 0 ? 0 : beta * v[0];
                v[1] = beta == 0 || i == j ? 0 : beta * v[1];
            }
        }
    }
}

/* passes 2: syr2k or her2k; 1: the first update only (herk, b = a). */
static int rank2k(enum canon_type t, int herm, int passes, char order, char uplo, char trans,
                  int64_t n, int64_t k, const void *alpha, const void *a, int64_t lda,
                  const void *b, int64_t ldb, const void *beta, void *c, int64_t ldc)
{
    const char o = canon_blas_upper(order), tr = canon_blas_upper(trans);
    char u = canon_blas_upper(uplo);
    const size_t size = canon_blas_size(t);
    const int cplx = canon_blas_complex(t);
    /* syr2k: 'N', 'T', and 'C' for real types only; her2k: 'N' and 'C'. */
    const int tr_ok = tr == 'N' || (herm ? tr == 'C' : tr == 'T' || (tr == 'C' && !cplx));
    if ((o != 'R' && o != 'C') || (u != 'U' && u != 'L') || !tr_ok || n < 0 || k < 0)
        return -1;
    struct rank2k P = {t, herm, tr != 'N', n, k, a, b, lda, ldb};
    union scalar2k al;
    memcpy(&al, alpha, size);
    if (o == 'R') { /* uplo flipped, trans 'N' <-> 'T' / 'C'; her2k: conj(alpha) */
        u = u == 'U' ? 'L' : 'U';
        P.transposed = !P.transposed;
        if (herm && t == CANON_C)
            al.s[1] = -al.s[1];
        else if (herm)
            al.d[1] = -al.d[1];
    }
    if (lda < max1(P.transposed ? k : n) || ldb < max1(P.transposed ? k : n) || ldc < max1(n))
        return -1;
    const int upper = u == 'U';
    /* her2k's beta is real: one element of the base type. */
    const int beta_one = herm ? (t == CANON_C ? *(const float *)beta == 1
                                              : *(const double *)beta == 1)
                              : canon_blas_is_one(t, beta);
    const int alpha_zero = canon_blas_is_zero(t, &al);
    if (n == 0 || ((alpha_zero || k == 0) && beta_one))
        return 0;
    if (alpha_zero || k == 0) {
        if (herm) {
            her2k_scale(&P, upper, beta, c, ldc);
            return 0;
        }
        for (int64_t j = 0; j < n; j++) {
            const int64_t i0 = upper ? 0 : j, len = upper ? j + 1 : n - j;
            canon_blas_scale(t, len, beta, at2(c, i0, j, ldc, size), 1);
        }
        return 0;
    }
    /* her2k's beta is real: the GEMM's complex (beta, 0). */
    union scalar2k be = {{0, 0}}, one = {{0, 0}};
    if (herm && t == CANON_C)
        be.s[0] = *(const float *)beta, one.s[0] = 1;
    else if (herm)
        be.d[0] = *(const double *)beta, one.d[0] = 1;
    else
        memcpy(&be, beta, size);
    if (!herm && (t == CANON_S || t == CANON_C))
        one.s[0] = 1;
    else if (!herm)
        one.d[0] = 1;
    /* The two updates: C = alpha*op(A)*w(op(B))^T + beta*C, then
     * C = alpha2*op(B)*w(op(A))^T + 1*C, w conjugating for her2k. */
    const char ta = P.transposed ? (herm ? 'C' : 'T') : 'N';
    const char tb = P.transposed ? 'N' : herm ? 'C' : 'T';
    union scalar2k al2 = al;
    if (herm && t == CANON_C)
        al2.s[1] = -al2.s[1];
    else if (herm)
        al2.d[1] = -al2.d[1];
    const struct canon_tri_update first = {t, upper, herm, n, k, ta, tb, &al, a, lda, b, ldb, &be};
    const struct canon_tri_update second = {t,  upper, herm, n,   k,   ta, tb,
                                            &al2, b,     ldb,  a, lda, &one};
    if (canon_l3_tri_update(&first, c, ldc) == 0)
        return passes == 1 ? 0 : canon_l3_tri_update(&second, c, ldc);
    /* No workspace for the GEMM: the same two updates, one element's sum
     * at a time on the gemv loops (the GEMM's order and AB step). */
    const struct canon_blas_kern *kern = &canon_blas_kernels()->t[t];
    _Alignas(64) union block2k sums;
    const int64_t block = BLOCK_BYTES / (int64_t)size;
    for (int pass = 0; pass < passes; pass++)
        for (int64_t j = 0; j < n; j++) {
            const int64_t lo = upper ? 0 : j, hi = upper ? j + 1 : n;
            for (int64_t i0 = lo; i0 < hi; i0 += block) {
                const int64_t nb = hi - i0 < block ? hi - i0 : block;
                memset(&sums, 0, (size_t)nb * size);
                if (pass == 0)
                    term(kern, &P, a, lda, b, ldb, i0, nb, j, &sums);
                else
                    term(kern, &P, b, ldb, a, lda, i0, nb, j, &sums);
                for (int64_t e = 0; e < nb; e++) {
                    void *ce = at2(c, i0 + e, j, ldc, size);
                    if (herm && i0 + e == j)
                        imag_zero(t, ce);
                    canon_blas_ab(t, pass ? (const void *)&al2 : &al, pass ? (const void *)&one
                                                                         : &be,
                                  canon_blas_at(&sums, e, size), ce);
                    if (herm && i0 + e == j)
                        imag_zero(t, ce);
                }
            }
        }
    return 0;
}

int canon_ssyr2k(char order, char uplo, char trans, int64_t n, int64_t k, float alpha,
                 const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                 int64_t ldc)
{
    return rank2k(CANON_S, 0, 2, order, uplo, trans, n, k, &alpha, a, lda, b, ldb,
                  &beta, c, ldc);
}

int canon_dsyr2k(char order, char uplo, char trans, int64_t n, int64_t k, double alpha,
                 const double *a, int64_t lda, const double *b, int64_t ldb, double beta,
                 double *c, int64_t ldc)
{
    return rank2k(CANON_D, 0, 2, order, uplo, trans, n, k, &alpha, a, lda, b, ldb,
                  &beta, c, ldc);
}

int canon_csyr2k(char order, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                 const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta,
                 void *c, int64_t ldc)
{
    return rank2k(CANON_C, 0, 2, order, uplo, trans, n, k, alpha, a, lda, b, ldb,
                  beta, c, ldc);
}

int canon_zsyr2k(char order, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                 const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta,
                 void *c, int64_t ldc)
{
    return rank2k(CANON_Z, 0, 2, order, uplo, trans, n, k, alpha, a, lda, b, ldb,
                  beta, c, ldc);
}

int canon_cher2k(char order, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                 const void *a, int64_t lda, const void *b, int64_t ldb, float beta, void *c,
                 int64_t ldc)
{
    return rank2k(CANON_C, 1, 2, order, uplo, trans, n, k, alpha, a, lda, b, ldb,
                  &beta, c, ldc);
}

int canon_zher2k(char order, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                 const void *a, int64_t lda, const void *b, int64_t ldb, double beta, void *c,
                 int64_t ldc)
{
    return rank2k(CANON_Z, 1, 2, order, uplo, trans, n, k, alpha, a, lda, b, ldb,
                  &beta, c, ldc);
}

/* herk: her2k's first update with B = A and the complex (alpha, 0). */
int canon_cherk(char order, char uplo, char trans, int64_t n, int64_t k, float alpha,
                const void *a, int64_t lda, float beta, void *c, int64_t ldc)
{
    const float al[2] = {alpha, 0};
    return rank2k(CANON_C, 1, 1, order, uplo, trans, n, k, al, a, lda, a, lda, &beta, c, ldc);
}

int canon_zherk(char order, char uplo, char trans, int64_t n, int64_t k, double alpha,
                const void *a, int64_t lda, double beta, void *c, int64_t ldc)
{
    const double al[2] = {alpha, 0};
    return rank2k(CANON_Z, 1, 1, order, uplo, trans, n, k, al, a, lda, a, lda, &beta, c, ldc);
}
