/* Canonical plane rotations (?rot, csrot, zdrot, and the modified ?rotm):
 * the reference BLAS's formulas, every product rounded before its sum
 * (canonical.h). Elementwise, no sum across elements: one scalar loop
 * gives the same bits on every path and thread count, where the vendor's
 * kernels fuse or not as their ISA path chooses (OpenBLAS's do). Built as
 * ISO C (-std=c11), so the compiler does not contract c*x + s*y into an
 * fma.
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

/* rotm: H from param (flag, h11, h21, h12, h22), by the flag as the
 * reference BLAS tests it: -2 does nothing; < 0 the full H; 0 the unit
 * diagonal; otherwise (> 0, or NaN) h12 = 1 and h21 = -1. */
#define ROTM_BODY(T)                                                                       \
    const T flag = param[0];                                                               \
    if (n <= 0 || flag == -2)                                                              \
        return 0;                                                                          \
    const T h11 = param[1], h21 = param[2], h12 = param[3], h22 = param[4];                \
    T *x0 = (T *)canon_blas_vec0(x, n, incx, sizeof(T));                                   \
    T *y0 = (T *)canon_blas_vec0(y, n, incy, sizeof(T));                                   \
    for (int64_t i = 0; i < n; i++) {                                                      \
        T *xi = x0 + i * incx, *yi = y0 + i * incy;                                        \
        const T w = *xi, z = *yi;                                                          \
        if (flag < 0) {                                                                    \
            const T a = w * h11, b = z * h12, c = w * h21, d = z * h22;                    \
            *xi = a + b;                                                                   \
            *yi = c + d;                                                                   \
        } else if (flag == 0) {                                                            \
            const T b = z * h12, c = w * h21;                                              \
            *xi = w + b;                                                                   \
            *yi = c + z;                                                                   \
        } else {                                                                           \
            const T a = w * h11, d = h22 * z;                                              \
            *xi = a + z;                                                                   \
            *yi = -w + d;                                                                  \
        }                                                                                  \
    }                                                                                      \
    return 0;

int canon_srotm(int64_t n, float *x, int64_t incx, float *y, int64_t incy, const float *param)
{
    ROTM_BODY(float)
}

int canon_drotm(int64_t n, double *x, int64_t incx, double *y, int64_t incy, const double *param)
{
    ROTM_BODY(double)
}
