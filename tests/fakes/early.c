/* A library whose constructor makes a BLAS call, to test that a call
 * arriving before detshim's own constructor starts the shim lazily and is
 * traced. Preloaded after libdetshim, it is initialized before it. */
#include <stdio.h>

double cblas_ddot(int n, const double *x, int incx, const double *y, int incy);

__attribute__((constructor)) static void early_ctor(void)
{
    double x[3] = { 1, 2, 3 };
    fprintf(stderr, "early: %g\n", cblas_ddot(3, x, 1, x, 1));
}
