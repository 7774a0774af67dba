/* Canonical chemv, zhemv, cher, zher, cher2 and zher2 in the order of the
 * contract (shim/blas/canonical.h, "hemv", "her", "her2"; order version
 * sym=1): the complex Hermitian twins of canonical_sym.c's symv, syr and
 * syr2, which LAPACK's zhetrd (a complex eigh) makes its products
 * through. The same sweep over the stored triangle's columns; the dots
 * are the conjugating LANES dots (canon_?dotc), the updates the kernels'
 * ger_col (canon_blas_sym_sweep). x (and y) are first copied contiguous, conjugated for a
 * row-major call, which is CBLAS's: the column-major call on the other
 * triangle with x, y, alpha, beta and the result conjugated.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* v = conj(v), one complex element of type t. */
static void conj1(enum canon_type t, void *v)
{
    if (t == CANON_C)
        ((float *)v)[1] = -((float *)v)[1];
    else
        ((double *)v)[1] = -((double *)v)[1];
}

/* s = CMAC(s, (re(a), 0), x): a diagonal element, its imaginary part not
 * read (canonical.h's CMAC with u = (re(a), +0)). */
#define DIAG_MAC(T, FMA, s, a, x)                                                              \
    do {                                                                                       \
        const T ur = (a)[0], ui = 0;                                                           \
        (s)[0] = FMA(ur, (x)[0], (s)[0]);                                                      \
        (s)[0] = FMA(-ui, (x)[1], (s)[0]);                                                     \
        (s)[1] = FMA(ur, (x)[1], (s)[1]);                                                      \
        (s)[1] = FMA(ui, (x)[0], (s)[1]);                                                      \
    } while (0)

/* t = CMUL(u, v). */
#define CMUL(T, FMA, t, u, v)                                                                  \
    do {                                                                                       \
        T re = (u)[0] * (v)[0], im = (u)[0] * (v)[1];                                          \
        (t)[0] = FMA(-(u)[1], (v)[1], re);                                                     \
        (t)[1] = FMA((u)[1], (v)[0], im);                                                      \
    } while (0)

static void diag_mac(enum canon_type t, void *s, const void *a, const void *x)
{
    if (t == CANON_C)
        DIAG_MAC(float, fmaf, (float *)s, (const float *)a, (const float *)x);
    else
        DIAG_MAC(double, fma, (double *)s, (const double *)a, (const double *)x);
}

/* s = s + d, the parts apart. */
static void cadd(enum canon_type t, void *s, const void *d)
{
    if (t == CANON_C) {
        ((float *)s)[0] += ((const float *)d)[0];
        ((float *)s)[1] += ((const float *)d)[1];
    } else {
        ((double *)s)[0] += ((const double *)d)[0];
        ((double *)s)[1] += ((const double *)d)[1];
    }
}

/* d = the LANES dot of conj(len contiguous elements at a) with x. */
static void dotc(enum canon_type t, int64_t len, const void *a, const void *x, void *d)
{
    if (t == CANON_C)
        canon_cdotc(len, a, 1, x, 1, d);
    else
        canon_zdotc(len, a, 1, x, 1, d);
}

union cval {
    float f[2];
    double d[2];
};

static int hemv(enum canon_type t, char order, char uplo, int64_t n, const void *alpha,
                const void *a, int64_t lda, const void *x, int64_t incx, const void *beta,
                void *y, int64_t incy)
{
    const char u = canon_blas_sym_triangle(order, uplo, n, lda, incx, incy);
    const size_t size = canon_blas_size(t);
    const int rows = canon_blas_upper(order) == 'R';
    if (!u)
        return -1;
    if (n == 0 || (canon_blas_is_zero(t, alpha) && canon_blas_is_one(t, beta)))
        return 0;
    void *y0 = (void *)canon_blas_vec0(y, n, incy, size);
    if (canon_blas_is_zero(t, alpha)) { /* CMUL(beta, y) is conj(CMUL(conj(beta), conj(y))) */
        canon_blas_scale(t, n, beta, y0, incy);
        return 0;
    }
    char *s = calloc((size_t)n, size), *xs = canon_blas_contiguous(t, x, n, incx, rows);
    if (!s || !xs) {
        free(s);
        free(xs);
        return -2;
    }
    union cval al, be;
    memcpy(&al, alpha, size);
    memcpy(&be, beta, size);
    if (rows) {
        conj1(t, &al);
        conj1(t, &be);
    }
    static const struct canon_sym_ops ops = { diag_mac, dotc, cadd };
    canon_blas_sym_sweep(t, u, n, a, lda, xs, &ops, s);
    for (int64_t i = 0; i < n; i++) {
        void *yi = (void *)canon_blas_at(y0, i * incy, size);
        union cval w;
        memcpy(&w, yi, size);
        if (rows)
            conj1(t, &w);
        canon_blas_ab(t, &al, &be, s + (size_t)i * size, &w);
        if (rows)
            conj1(t, &w);
        memcpy(yi, &w, size);
    }
    free(s);
    free(xs);
    return 0;
}

/* her2, or her when y is NULL (alpha then real, in alpha's first part). */
static int her2(enum canon_type t, char order, char uplo, int64_t n, const void *alpha,
                const void *x, int64_t incx, const void *y, int64_t incy, void *a, int64_t lda)
{
    const char u = canon_blas_sym_triangle(order, uplo, n, lda, incx, y ? incy : incx);
    const size_t size = canon_blas_size(t);
    const int rows = canon_blas_upper(order) == 'R';
    if (!u)
        return -1;
    union cval al;
    memset(&al, 0, sizeof al);
    memcpy(&al, alpha, y ? size : size / 2);
    if (n == 0 || canon_blas_is_zero(t, &al))
        return 0;
    char *xs = canon_blas_contiguous(t, x, n, incx, rows);
    char *ys = y ? canon_blas_contiguous(t, y, n, incy, rows) : NULL;
    if (!xs || (y && !ys)) {
        free(xs);
        free(ys);
        return -2;
    }
    if (rows)
        conj1(t, &al);
    const struct canon_blas_kern *k = &canon_blas_kernels()->t[t];
    for (int64_t j = 0; j < n; j++) {
        const int64_t lo = u == 'L' ? j : 0, len = u == 'L' ? n - j : j + 1;
        const void *xj = xs + (size_t)j * size;
        union cval t1, t2, v;
        if (y) { /* t1 = CMUL(alpha, conj(y_j)), t2 = conj(CMUL(alpha, x_j)) */
            memcpy(&v, ys + (size_t)j * size, size);
            conj1(t, &v);
            if (t == CANON_C) {
                CMUL(float, fmaf, t1.f, al.f, v.f);
                CMUL(float, fmaf, t2.f, al.f, ((const float *)xj));
            } else {
                CMUL(double, fma, t1.d, al.d, v.d);
                CMUL(double, fma, t2.d, al.d, ((const double *)xj));
            }
            conj1(t, &t2);
        } else if (t == CANON_C) { /* t1 = (alpha*re(x_j), -(alpha*im(x_j))) */
            t1.f[0] = al.f[0] * ((const float *)xj)[0];
            t1.f[1] = -(al.f[0] * ((const float *)xj)[1]);
        } else {
            t1.d[0] = al.d[0] * ((const double *)xj)[0];
            t1.d[1] = -(al.d[0] * ((const double *)xj)[1]);
        }
        char *col = (char *)a + (size_t)(j * lda + lo) * size;
        k->ger_col(len, xs + (size_t)lo * size, 1, 0, &t1, col);
        if (y)
            k->ger_col(len, ys + (size_t)lo * size, 1, 0, &t2, col);
        /* The diagonal stays real: its imaginary part is +0. */
        char *ajj = (char *)a + (size_t)(j * lda + j) * size;
        if (t == CANON_C)
            ((float *)ajj)[1] = 0;
        else
            ((double *)ajj)[1] = 0;
    }
    free(xs);
    free(ys);
    return 0;
}

int canon_chemv(char order, char uplo, int64_t n, const void *alpha, const void *a, int64_t lda,
                const void *x, int64_t incx, const void *beta, void *y, int64_t incy)
{
    return hemv(CANON_C, order, uplo, n, alpha, a, lda, x, incx, beta, y, incy);
}

int canon_zhemv(char order, char uplo, int64_t n, const void *alpha, const void *a, int64_t lda,
                const void *x, int64_t incx, const void *beta, void *y, int64_t incy)
{
    return hemv(CANON_Z, order, uplo, n, alpha, a, lda, x, incx, beta, y, incy);
}

int canon_cher(char order, char uplo, int64_t n, float alpha, const void *x, int64_t incx, void *a,
               int64_t lda)
{
    return her2(CANON_C, order, uplo, n, &alpha, x, incx, NULL, 0, a, lda);
}

int canon_zher(char order, char uplo, int64_t n, double alpha, const void *x, int64_t incx, void *a,
               int64_t lda)
{
    return her2(CANON_Z, order, uplo, n, &alpha, x, incx, NULL, 0, a, lda);
}

int canon_cher2(char order, char uplo, int64_t n, const void *alpha, const void *x, int64_t incx,
                const void *y, int64_t incy, void *a, int64_t lda)
{
    return her2(CANON_C, order, uplo, n, alpha, x, incx, y, incy, a, lda);
}

int canon_zher2(char order, char uplo, int64_t n, const void *alpha, const void *x, int64_t incx,
                const void *y, int64_t incy, void *a, int64_t lda)
{
    return her2(CANON_Z, order, uplo, n, alpha, x, incx, y, incy, a, lda);
}
