/* Canonical symmetric and Hermitian level 2 -- ssymv, dsymv, chemv,
 * zhemv; ssyr, dsyr, cher, zher; ssyr2, dsyr2, cher2, zher2 -- in the
 * order of the contract (shim/blas/canonical.h, "symv", "syr2" and "hemv,
 * her, her2"; order version sym=1). Before, they ran on the vendor
 * pinned, whose bits change with the CPU's kernel: LAPACK's dsytd2 and
 * dlatrd (under dsytrd: numpy's and scipy's eigh) and zhetd2 (a complex
 * eigh) make most of their products through them, and detdiff named
 * dsyr2_ as where an eigh under OPENBLAS_CORETYPE=Haswell parted from one
 * on the CPU's own (SkylakeX) kernels, once symv was canonical.
 *
 * The real routines are the complex ones with every conjugation a no-op,
 * so one driver serves both. x (and y) are first copied contiguous,
 * conjugated for a complex row-major call, which is CBLAS's: the
 * column-major call on the other triangle with x, y, alpha, beta and
 * the result conjugated (a real row-major call is just the other
 * triangle).
 *
 * symv/hemv: one sweep over the stored triangle's columns j = 0 .. n-1,
 * each read from memory once: column j's part off the diagonal gives
 * output j its LANES dot (canon_?dot, conjugating for hemv) and every
 * other output of its rows its SEQ term (the kernels' ger_col, the column
 * as its vector and x_j as its factor), while the column is in the
 * cache. Every output's sum is its own chain, so the sweep's order of
 * outputs never shows; the sums wait in scratch memory and are finished
 * (AB) at the end. One thread (the dots of n >= 2^17 elements share
 * theirs, as every LANES sum does).
 *
 * syr2/her2 (syr/her): per column of the stored triangle, two (one)
 * rank-1 column updates through ger_col; a complex diagonal's imaginary
 * part then becomes +0.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* The triangle ('U' or 'L') of the column-major view that a call names
 * (a matrix stored by rows is the column-major one's other triangle); 0
 * for arguments the BLAS rejects. */
static char triangle(char order, char uplo, int64_t n, int64_t lda, int64_t incx, int64_t incy)
{
    const char o = canon_blas_upper(order), u = canon_blas_upper(uplo);
    if ((o != 'R' && o != 'C') || (u != 'U' && u != 'L') || n < 0 || lda < (n > 1 ? n : 1) ||
        incx == 0 || incy == 0)
        return 0;
    return o == 'C' ? u : u == 'U' ? 'L' : 'U';
}

union elem {
    float s[2];
    double d[2];
};

/* v = conj(v); nothing for a real type. */
static void conj_elem(enum canon_type t, void *v)
{
    if (t == CANON_C)
        ((float *)v)[1] = -((float *)v)[1];
    else if (t == CANON_Z)
        ((double *)v)[1] = -((double *)v)[1];
}

/* A malloc'ed contiguous copy of the n-element vector x as the BLAS
 * passes it (step inc), conjugated when conj; NULL when memory is short. */
static void *contiguous(enum canon_type t, const void *x, int64_t n, int64_t inc, int conj)
{
    const size_t size = canon_blas_size(t);
    char *c = malloc((size_t)n * size);
    if (c)
        canon_blas_gather(size, canon_blas_vec0(x, n, inc, size), inc, 0, n, c);
    for (int64_t i = 0; c && conj && i < n; i++)
        conj_elem(t, c + (size_t)i * size);
    return c;
}

/* d = the LANES dot of len contiguous elements at a (conjugated for a
 * complex type) with those at x. */
static void lanes_dot(enum canon_type t, int64_t len, const void *a, const void *x, void *d)
{
    switch (t) {
    case CANON_S: canon_sdot(len, a, 1, x, 1, d); break;
    case CANON_D: canon_ddot(len, a, 1, x, 1, d); break;
    case CANON_C: canon_cdotc(len, a, 1, x, 1, d); break;
    default: canon_zdotc(len, a, 1, x, 1, d); break;
    }
}

/* s = CMAC(s, A_jj, x_j), a complex diagonal taken as (re(A_jj), +0). */
static void diag_term(const struct canon_blas_kern *k, enum canon_type t, void *s,
                      const void *ajj, const void *xj)
{
    union elem u;
    memcpy(&u, ajj, canon_blas_size(t));
    if (t == CANON_C)
        u.s[1] = 0;
    else if (t == CANON_Z)
        u.d[1] = 0;
    k->ger_col(1, &u, 1, 0, xj, s);
}

/* The sweep into sums (n elements, +0 on entry), x contiguous. */
static void sweep(enum canon_type t, char u, int64_t n, const void *a, int64_t lda,
                  const char *xs, char *s)
{
    const size_t size = canon_blas_size(t);
    const struct canon_blas_kern *k = &canon_blas_kernels()->t[t];
    for (int64_t j = 0; j < n; j++) {
        const char *col = canon_blas_at(a, j * lda, size);
        const void *xj = xs + (size_t)j * size, *ajj = canon_blas_at(col, j, size);
        void *sj = s + (size_t)j * size;
        if (u == 'L') {
            /* Output j: its SEQ ends with the diagonal, then its dot. */
            union elem d;
            diag_term(k, t, sj, ajj, xj);
            lanes_dot(t, n - 1 - j, canon_blas_at(col, j + 1, size), xs + (size_t)(j + 1) * size,
                      &d);
            canon_blas_add(t, sj, &d);
            /* The outputs below: their SEQ term j. */
            if (j + 1 < n)
                k->ger_col(n - 1 - j, canon_blas_at(col, j + 1, size), 1, 0, xj,
                           s + (size_t)(j + 1) * size);
        } else {
            /* The outputs above: their SEQ term j; output j: its dot,
             * from which its SEQ starts with the diagonal. */
            if (j > 0)
                k->ger_col(j, col, 1, 0, xj, s);
            lanes_dot(t, j, col, xs, sj);
            diag_term(k, t, sj, ajj, xj);
        }
    }
}

static int symv(enum canon_type t, char order, char uplo, int64_t n, const void *alpha,
                const void *a, int64_t lda, const void *x, int64_t incx, const void *beta,
                void *y, int64_t incy)
{
    const char u = triangle(order, uplo, n, lda, incx, incy);
    const size_t size = canon_blas_size(t);
    const int conj = canon_blas_upper(order) == 'R' && canon_blas_complex(t);
    if (!u)
        return -1;
    if (n == 0 || (canon_blas_is_zero(t, alpha) && canon_blas_is_one(t, beta)))
        return 0;
    void *y0 = (void *)canon_blas_vec0(y, n, incy, size);
    if (canon_blas_is_zero(t, alpha)) { /* CMUL(beta, y) is conj(CMUL(conj(beta), conj(y))) */
        canon_blas_scale(t, n, beta, y0, incy);
        return 0;
    }
    char *s = calloc((size_t)n, size), *xs = contiguous(t, x, n, incx, conj);
    if (!s || !xs) {
        free(s);
        free(xs);
        return -2;
    }
    union elem al, be;
    memcpy(&al, alpha, size);
    memcpy(&be, beta, size);
    if (conj) {
        conj_elem(t, &al);
        conj_elem(t, &be);
    }
    sweep(t, u, n, a, lda, xs, s);
    for (int64_t i = 0; i < n; i++) {
        void *yi = (void *)canon_blas_at(y0, i * incy, size);
        union elem w;
        memcpy(&w, yi, size);
        if (conj)
            conj_elem(t, &w);
        canon_blas_ab(t, &al, &be, s + (size_t)i * size, &w);
        if (conj)
            conj_elem(t, &w);
        memcpy(yi, &w, size);
    }
    free(s);
    free(xs);
    return 0;
}

/* syr2/her2, or syr/her when y is NULL. alpha is of type t, but real for
 * her (its one part at alpha). */
static int rank2(enum canon_type t, char order, char uplo, int64_t n, const void *alpha,
                 const void *x, int64_t incx, const void *y, int64_t incy, void *a, int64_t lda)
{
    const char u = triangle(order, uplo, n, lda, incx, y ? incy : incx);
    const size_t size = canon_blas_size(t);
    const int cplx = canon_blas_complex(t), her = cplx && !y;
    const int conj = canon_blas_upper(order) == 'R' && cplx;
    if (!u)
        return -1;
    union elem al;
    memset(&al, 0, sizeof al);
    memcpy(&al, alpha, her ? size / 2 : size);
    if (n == 0 || canon_blas_is_zero(t, &al))
        return 0;
    char *xs = contiguous(t, x, n, incx, conj), *ys = y ? contiguous(t, y, n, incy, conj) : NULL;
    if (!xs || (y && !ys)) {
        free(xs);
        free(ys);
        return -2;
    }
    if (conj)
        conj_elem(t, &al);
    const struct canon_blas_kern *k = &canon_blas_kernels()->t[t];
    for (int64_t j = 0; j < n; j++) {
        const int64_t lo = u == 'L' ? j : 0, len = u == 'L' ? n - j : j + 1;
        const void *xj = xs + (size_t)j * size;
        union elem t1, t2, v;
        if (her) { /* t1 = (alpha*re(x_j), -(alpha*im(x_j))) */
            if (t == CANON_C) {
                t1.s[0] = al.s[0] * ((const float *)xj)[0];
                t1.s[1] = -(al.s[0] * ((const float *)xj)[1]);
            } else {
                t1.d[0] = al.d[0] * ((const double *)xj)[0];
                t1.d[1] = -(al.d[0] * ((const double *)xj)[1]);
            }
        } else { /* t1 = CMUL(alpha, conj(y_j)) (syr: y = x), t2 = conj(CMUL(alpha, x_j)) */
            memcpy(&v, y ? ys + (size_t)j * size : xj, size);
            conj_elem(t, &v);
            canon_blas_mul(t, &al, &v, &t1);
            if (y) {
                canon_blas_mul(t, &al, xj, &t2);
                conj_elem(t, &t2);
            }
        }
        char *col = (char *)a + (size_t)(j * lda + lo) * size;
        k->ger_col(len, xs + (size_t)lo * size, 1, 0, &t1, col);
        if (y)
            k->ger_col(len, ys + (size_t)lo * size, 1, 0, &t2, col);
        if (cplx) /* the diagonal stays real: its imaginary part is +0 */
            memset(col + (size_t)(j - lo) * size + size / 2, 0, size / 2);
    }
    free(xs);
    free(ys);
    return 0;
}

int canon_ssymv(char order, char uplo, int64_t n, float alpha, const float *a, int64_t lda,
                const float *x, int64_t incx, float beta, float *y, int64_t incy)
{
    return symv(CANON_S, order, uplo, n, &alpha, a, lda, x, incx, &beta, y, incy);
}

int canon_dsymv(char order, char uplo, int64_t n, double alpha, const double *a, int64_t lda,
                const double *x, int64_t incx, double beta, double *y, int64_t incy)
{
    return symv(CANON_D, order, uplo, n, &alpha, a, lda, x, incx, &beta, y, incy);
}

int canon_chemv(char order, char uplo, int64_t n, const void *alpha, const void *a, int64_t lda,
                const void *x, int64_t incx, const void *beta, void *y, int64_t incy)
{
    return symv(CANON_C, order, uplo, n, alpha, a, lda, x, incx, beta, y, incy);
}

int canon_zhemv(char order, char uplo, int64_t n, const void *alpha, const void *a, int64_t lda,
                const void *x, int64_t incx, const void *beta, void *y, int64_t incy)
{
    return symv(CANON_Z, order, uplo, n, alpha, a, lda, x, incx, beta, y, incy);
}

int canon_ssyr(char order, char uplo, int64_t n, float alpha, const float *x, int64_t incx,
               float *a, int64_t lda)
{
    return rank2(CANON_S, order, uplo, n, &alpha, x, incx, NULL, 0, a, lda);
}

int canon_dsyr(char order, char uplo, int64_t n, double alpha, const double *x, int64_t incx,
               double *a, int64_t lda)
{
    return rank2(CANON_D, order, uplo, n, &alpha, x, incx, NULL, 0, a, lda);
}

int canon_cher(char order, char uplo, int64_t n, float alpha, const void *x, int64_t incx, void *a,
               int64_t lda)
{
    return rank2(CANON_C, order, uplo, n, &alpha, x, incx, NULL, 0, a, lda);
}

int canon_zher(char order, char uplo, int64_t n, double alpha, const void *x, int64_t incx, void *a,
               int64_t lda)
{
    return rank2(CANON_Z, order, uplo, n, &alpha, x, incx, NULL, 0, a, lda);
}

int canon_ssyr2(char order, char uplo, int64_t n, float alpha, const float *x, int64_t incx,
                const float *y, int64_t incy, float *a, int64_t lda)
{
    return rank2(CANON_S, order, uplo, n, &alpha, x, incx, y, incy, a, lda);
}

int canon_dsyr2(char order, char uplo, int64_t n, double alpha, const double *x, int64_t incx,
                const double *y, int64_t incy, double *a, int64_t lda)
{
    return rank2(CANON_D, order, uplo, n, &alpha, x, incx, y, incy, a, lda);
}

int canon_cher2(char order, char uplo, int64_t n, const void *alpha, const void *x, int64_t incx,
                const void *y, int64_t incy, void *a, int64_t lda)
{
    return rank2(CANON_C, order, uplo, n, alpha, x, incx, y, incy, a, lda);
}

int canon_zher2(char order, char uplo, int64_t n, const void *alpha, const void *x, int64_t incx,
                const void *y, int64_t incy, void *a, int64_t lda)
{
    return rank2(CANON_Z, order, uplo, n, alpha, x, incx, y, incy, a, lda);
}
