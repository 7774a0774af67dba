/* Canonical plane rotation (?rot, csrot, zdrot): the reference BLAS's
 * formula with every product rounded before its sum, as the contract in
 * canonical.h says. It is elementwise, with no sum across elements, so
 * one scalar loop gives the same bits on every path and thread count,
 * where the vendor's kernels fuse or not as their ISA path chooses. The
 * file is built as ISO C (-std=c11), so the compiler does not contract
 * c*x + s*y into an fma.
 */
#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* parts reals per element (1 real, 2 complex: a real rotation turns the
 * real parts and the imaginary parts alike). Element i lies at i * inc
 * from element 0, which a negative increment puts at the far end; the
 * elements go in increasing i, the reals of one element together. */
#define ROT_BODY(T)                                                                        \
    T *x0 = (T *)canon_blas_vec0(x, n, incx, (size_t)parts * sizeof(T));                   \
    T *y0 = (T *)canon_blas_vec0(y, n, incy, (size_t)parts * sizeof(T));                   \
    for (int64_t i = 0; i < n; i++)                                                        \
        for (int p = 0; p < parts; p++) {                                                  \
            T *xi = x0 + parts * i * incx + p, *yi = y0 + parts * i * incy + p;            \
            T cx = c * *xi, sy = s * *yi, cy = c * *yi, sx = s * *xi;                      \
            *xi = cx + sy;                                                                 \
            *yi = cy - sx;                                                                 \
        }

static void rot_f(int parts, int64_t n, void *x, int64_t incx, void *y, int64_t incy, float c,
                  float s)
{
    ROT_BODY(float)
}

static void rot_d(int parts, int64_t n, void *x, int64_t incx, void *y, int64_t incy, double c,
                  double s)
{
    ROT_BODY(double)
}

int canon_srot(int64_t n, float *x, int64_t incx, float *y, int64_t incy, float c, float s)
{
    rot_f(1, n, x, incx, y, incy, c, s);
    return 0;
}

int canon_drot(int64_t n, double *x, int64_t incx, double *y, int64_t incy, double c, double s)
{
    rot_d(1, n, x, incx, y, incy, c, s);
    return 0;
}

int canon_csrot(int64_t n, void *x, int64_t incx, void *y, int64_t incy, float c, float s)
{
    rot_f(2, n, x, incx, y, incy, c, s);
    return 0;
}

int canon_zdrot(int64_t n, void *x, int64_t incx, void *y, int64_t incy, double c, double s)
{
    rot_d(2, n, x, incx, y, incy, c, s);
    return 0;
}
