/* Canonical ssymv, dsymv, ssyr, dsyr, ssyr2 and dsyr2 in the order of the
 * contract (shim/blas/canonical.h, "symv", "syr2"; order version sym=1).
 * Before, they ran on the vendor pinned, whose bits change with the
 * CPU's kernel: LAPACK's dsytd2 and dlatrd (under dsytrd: numpy's and
 * scipy's eigh) make most of their products through them, and detdiff
 * named dsyr2_ as where an eigh under OPENBLAS_CORETYPE=Haswell parted
 * from one on the CPU's own (SkylakeX) kernels, once symv was canonical.
 *
 * symv: one sweep over the stored triangle's columns j = 0 .. n-1
 * (canon_blas_sym_sweep, hemv's too), each read from memory once: column j's part off the diagonal gives output j
 * its LANES dot (canon_?dot) and every other output of its rows its SEQ
 * term (s_i = fma(A_ij, x_j, s_i): the kernels' ger_col, the column as
 * its vector and x_j as its factor), while the column is in the cache. Every output's sum is its own chain, so the sweep's order of
 * outputs never shows; the sums wait in scratch memory and are finished
 * (AB) at the end. One thread (the dots of n >= 2^17 elements share
 * theirs, as every LANES sum does).
 *
 * syr2: per column of the stored triangle, two rank-1 column updates
 * (the kernels' ger_col), each element its own two fmas; syr, one.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* s = fma(a, x, s) in the routine's type: symv's diagonal term. */
static void mac(enum canon_type t, void *s, const void *a, const void *x)
{
    if (t == CANON_S)
        *(float *)s = fmaf(*(const float *)a, *(const float *)x, *(float *)s);
    else
        *(double *)s = fma(*(const double *)a, *(const double *)x, *(double *)s);
}

/* d = the LANES dot of len contiguous elements at a with those at x. */
static void lanes_dot(enum canon_type t, int64_t len, const void *a, const void *x, void *d)
{
    if (t == CANON_S)
        canon_sdot(len, a, 1, x, 1, d);
    else
        canon_ddot(len, a, 1, x, 1, d);
}

static void add(enum canon_type t, void *s, const void *d)
{
    if (t == CANON_S)
        *(float *)s += *(const float *)d;
    else
        *(double *)s += *(const double *)d;
}

static const struct canon_sym_ops real_ops = { mac, lanes_dot, add };

void *canon_blas_contiguous(enum canon_type t, const void *x, int64_t n, int64_t inc, int conj)
{
    const size_t size = canon_blas_size(t);
    char *c = malloc(n > 0 ? (size_t)n * size : 1);
    const void *x0 = n > 0 ? canon_blas_vec0(x, n, inc, size) : x;
    for (int64_t i = 0; c && i < n; i++)
        memcpy(c + (size_t)i * size, canon_blas_at(x0, i * inc, size), size);
    for (int64_t i = 0; c && conj && i < n; i++) {
        if (t == CANON_C)
            ((float *)c)[2 * i + 1] = -((float *)c)[2 * i + 1];
        else
            ((double *)c)[2 * i + 1] = -((double *)c)[2 * i + 1];
    }
    return c;
}

void canon_blas_sym_sweep(enum canon_type t, char u, int64_t n, const void *a, int64_t lda,
                          const void *xs, const struct canon_sym_ops *ops, void *sums)
{
    const size_t size = canon_blas_size(t);
    const struct canon_blas_kern *k = &canon_blas_kernels()->t[t];
    char *s = sums;
    _Alignas(16) unsigned char dot[16];
    for (int64_t j = 0; j < n; j++) {
        const char *col = canon_blas_at(a, j * lda, size);
        const void *xj = canon_blas_at(xs, j, size), *ajj = canon_blas_at(col, j, size);
        void *sj = s + (size_t)j * size;
        if (u == 'L') {
            /* Output j: its SEQ ends with the diagonal, then its dot. */
            ops->diag(t, sj, ajj, xj);
            ops->dot(t, n - 1 - j, canon_blas_at(col, j + 1, size), canon_blas_at(xs, j + 1, size),
                     dot);
            ops->add(t, sj, dot);
            /* The outputs below: their SEQ term j. */
            if (j + 1 < n)
                k->ger_col(n - 1 - j, canon_blas_at(col, j + 1, size), 1, 0, xj,
                           s + (size_t)(j + 1) * size);
        } else {
            /* The outputs above: their SEQ term j; output j: its dot,
             * from which its SEQ starts with the diagonal. */
            if (j > 0)
                k->ger_col(j, col, 1, 0, xj, s);
            ops->dot(t, j, col, xs, sj);
            ops->diag(t, sj, ajj, xj);
        }
    }
}

char canon_blas_sym_triangle(char order, char uplo, int64_t n, int64_t lda, int64_t incx,
                             int64_t incy)
{
    const char o = canon_blas_upper(order), u = canon_blas_upper(uplo);
    if ((o != 'R' && o != 'C') || (u != 'U' && u != 'L') || n < 0 || lda < (n > 1 ? n : 1) ||
        incx == 0 || incy == 0)
        return 0;
    return o == 'C' ? u : u == 'U' ? 'L' : 'U';
}

static int symv(enum canon_type t, char order, char uplo, int64_t n, const void *alpha,
                const void *a, int64_t lda, const void *x, int64_t incx, const void *beta,
                void *y, int64_t incy)
{
    const char u = canon_blas_sym_triangle(order, uplo, n, lda, incx, incy);
    const size_t size = canon_blas_size(t);
    if (!u)
        return -1;
    if (n == 0 || (canon_blas_is_zero(t, alpha) && canon_blas_is_one(t, beta)))
        return 0;
    void *y0 = (void *)canon_blas_vec0(y, n, incy, size);
    if (canon_blas_is_zero(t, alpha)) {
        canon_blas_scale(t, n, beta, y0, incy);
        return 0;
    }
    char *s = calloc((size_t)n, size), *xs = canon_blas_contiguous(t, x, n, incx, 0);
    if (!s || !xs) {
        free(s);
        free(xs);
        return -2;
    }
    canon_blas_sym_sweep(t, u, n, a, lda, xs, &real_ops, s);
    for (int64_t i = 0; i < n; i++)
        canon_blas_ab(t, alpha, beta, s + (size_t)i * size,
                      (void *)canon_blas_at(y0, i * incy, size));
    free(s);
    free(xs);
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

/* syr2, or syr when y is NULL (one update per element, x's). */
static int syr2(enum canon_type t, char order, char uplo, int64_t n, const void *alpha,
                const void *x, int64_t incx, const void *y, int64_t incy, void *a, int64_t lda)
{
    const char u = canon_blas_sym_triangle(order, uplo, n, lda, incx, incy);
    const size_t size = canon_blas_size(t);
    if (!u)
        return -1;
    if (n == 0 || canon_blas_is_zero(t, alpha))
        return 0;
    const struct canon_blas_kern *k = &canon_blas_kernels()->t[t];
    const void *x0 = canon_blas_vec0(x, n, incx, size);
    const void *y0 = y ? canon_blas_vec0(y, n, incy, size) : x0;
    for (int64_t j = 0; j < n; j++) {
        const int64_t lo = u == 'L' ? j : 0, len = u == 'L' ? n - j : j + 1;
        union {
            float f;
            double d;
        } t1, t2;
        if (t == CANON_S) {
            t1.f = *(const float *)alpha * *(const float *)canon_blas_at(y0, j * incy, size);
            t2.f = *(const float *)alpha * *(const float *)canon_blas_at(x0, j * incx, size);
        } else {
            t1.d = *(const double *)alpha * *(const double *)canon_blas_at(y0, j * incy, size);
            t2.d = *(const double *)alpha * *(const double *)canon_blas_at(x0, j * incx, size);
        }
        void *col = (void *)canon_blas_at(a, j * lda + lo, size);
        k->ger_col(len, canon_blas_at(x0, lo * incx, size), incx, 0, &t1, col);
        if (y)
            k->ger_col(len, canon_blas_at(y0, lo * incy, size), incy, 0, &t2, col);
    }
    return 0;
}

int canon_ssyr(char order, char uplo, int64_t n, float alpha, const float *x, int64_t incx,
               float *a, int64_t lda)
{
    return syr2(CANON_S, order, uplo, n, &alpha, x, incx, NULL, incx, a, lda);
}

int canon_dsyr(char order, char uplo, int64_t n, double alpha, const double *x, int64_t incx,
               double *a, int64_t lda)
{
    return syr2(CANON_D, order, uplo, n, &alpha, x, incx, NULL, incx, a, lda);
}

int canon_ssyr2(char order, char uplo, int64_t n, float alpha, const float *x, int64_t incx,
                const float *y, int64_t incy, float *a, int64_t lda)
{
    return syr2(CANON_S, order, uplo, n, &alpha, x, incx, y, incy, a, lda);
}

int canon_dsyr2(char order, char uplo, int64_t n, double alpha, const double *x, int64_t incx,
                const double *y, int64_t incy, double *a, int64_t lda)
{
    return syr2(CANON_D, order, uplo, n, &alpha, x, incx, y, incy, a, lda);
}
