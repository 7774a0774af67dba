/* The fake cuBLAS's level 1 and 2 routines, solves and batched solvers
 * (built into libcublas.so.13 with cublas.c), FP32 and one complex dot,
 * on host memory: gemv, dot, dotc, DotEx, trsm, trsmBatched, getrf,
 * getrs, geqrf and gels batched, SgemmEx, and the SM carveout. With
 * atomics allowed every sum runs in a per-run shuffled order (fake.h), as
 * cuBLAS may where atomics are allowed; otherwise in index order. An SM
 * carveout (cublasSetSmCountTarget, nonzero) sums in reverse order: other
 * kernels, other bits, the same every run.
 */
#include <math.h>
#include <string.h>

#include "fake.h"

static int carveout;

FAKE_EXPORT cublasStatus_t cublasSetSmCountTarget(cublasHandle_t h, int target)
{
    (void)h;
    carveout = target;
    return CUBLAS_STATUS_SUCCESS;
}

static int vary(cublasHandle_t h)
{
    cublasAtomicsMode_t m = CUBLAS_ATOMICS_NOT_ALLOWED;
    cublasGetAtomicsMode(h, &m);
    return m == CUBLAS_ATOMICS_ALLOWED;
}

/* sum_{l<n} f(l) in the handle's order. */
#define ORDERED_SUM(h, n, acc, expr)                                                       \
    do {                                                                                   \
        int64_t *ord_ = malloc(sizeof *ord_ * (size_t)((n) > 0 ? (n) : 1));                \
        fake_order(ord_, (n), vary(h));                                                    \
        for (int64_t q_ = 0; q_ < (n); q_++) {                                             \
            int64_t l = carveout ? (n) - 1 - ord_[q_] : ord_[q_];                          \
            acc += (expr);                                                                 \
        }                                                                                  \
        free(ord_);                                                                        \
    } while (0)

static const float *vec(const float *x, int64_t n, int64_t inc)
{
    return inc < 0 ? x - (n - 1) * inc : x; /* BLAS: x[(n-1-i)*|inc|] for negative inc */
}

#define SGEMV(NAME, I)                                                                     \
    FAKE_EXPORT cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t trans, I m, I n,   \
                                    const float *alpha, const float *A, I lda,             \
                                    const float *x, I incx, const float *beta, float *y,   \
                                    I incy)                                                \
    {                                                                                      \
        if (m < 0 || n < 0 || incx == 0 || incy == 0)                                      \
            return CUBLAS_STATUS_INVALID_VALUE;                                            \
        int t = trans != CUBLAS_OP_N;                                                      \
        int64_t rows = t ? n : m, k = t ? m : n;                                           \
        const float *xv = vec(x, k, incx);                                                 \
        for (int64_t i = 0; i < rows; i++) {                                               \
            float s = 0;                                                                   \
            ORDERED_SUM(h, k, s, (t ? A[l + i * lda] : A[i + l * lda]) * xv[l * incx]);    \
            float *yi = &y[i * (incy < 0 ? -incy : incy)];                                 \
            *yi = *alpha * s + (*beta != 0 ? *beta * *yi : 0);                             \
        }                                                                                  \
        return CUBLAS_STATUS_SUCCESS;                                                      \
    }
SGEMV(cublasSgemv_v2, int)
SGEMV(cublasSgemv_v2_64, int64_t)

static void put_result(cublasHandle_t h, void *result, const void *value, size_t size)
{
    memcpy(result, value, size); /* host and "device" memory are one here */
    (void)h;
}

FAKE_EXPORT cublasStatus_t cublasSdot_v2(cublasHandle_t h, int n, const float *x, int incx,
                                         const float *y, int incy, float *result)
{
    float s = 0;
    ORDERED_SUM(h, n, s, x[l * incx] * y[l * incy]);
    put_result(h, result, &s, sizeof s);
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasCdotc_v2(cublasHandle_t h, int n, const cuComplex *x, int incx,
                                          const cuComplex *y, int incy, cuComplex *result)
{
    cuComplex s = { 0, 0 };
    ORDERED_SUM(h, n, s.x, x[l * incx].x * y[l * incy].x + x[l * incx].y * y[l * incy].y);
    ORDERED_SUM(h, n, s.y, x[l * incx].x * y[l * incy].y - x[l * incx].y * y[l * incy].x);
    put_result(h, result, &s, sizeof s);
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasDotEx(cublasHandle_t h, int n, const void *x, cudaDataType xt,
                                       int incx, const void *y, cudaDataType yt, int incy,
                                       void *result, cudaDataType rt, cudaDataType et)
{
    if (xt != CUDA_R_32F || yt != CUDA_R_32F || rt != CUDA_R_32F || et != CUDA_R_32F)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    return cublasSdot_v2(h, n, x, incx, y, incy, result);
}

/* Solves op(A) X = alpha B (left) or X op(A) = alpha B (right) for X over
 * B, column by column (left) or row by row (right), by substitution. */
static cublasStatus_t strsm(cublasHandle_t h, int side, int uplo, int trans, int diag,
                            int64_t m, int64_t n, float alpha, const float *A, int64_t lda,
                            float *B, int64_t ldb)
{
    int left = side == CUBLAS_SIDE_LEFT, tr = trans != CUBLAS_OP_N;
    int64_t k = left ? m : n, count = left ? n : m;
    /* op(A) lower <=> substitute forwards. */
    int lower = (uplo == CUBLAS_FILL_MODE_LOWER) != tr;
    if (!left)
        lower = !lower;
    for (int64_t v = 0; v < count; v++) {
        for (int64_t s = 0; s < k; s++) {
            int64_t i = lower ? s : k - 1 - s;
            float *bi = left ? &B[i + v * ldb] : &B[v + i * ldb];
            float acc = alpha * *bi;
            /* the solved entries j before i in substitution order */
            float sub = 0;
            int64_t done = s;
            ORDERED_SUM(h, done, sub, ({
                int64_t j = lower ? l : k - 1 - l;
                float a = left ? (tr ? A[j + i * lda] : A[i + j * lda])
                               : (tr ? A[i + j * lda] : A[j + i * lda]);
                a * (left ? B[j + v * ldb] : B[v + j * ldb]);
            }));
            acc -= sub;
            *bi = diag == CUBLAS_DIAG_UNIT ? acc : acc / A[i + i * lda];
        }
    }
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasStrsm_v2(cublasHandle_t h, cublasSideMode_t side,
                                          cublasFillMode_t uplo, cublasOperation_t trans,
                                          cublasDiagType_t diag, int m, int n,
                                          const float *alpha, const float *A, int lda, float *B,
                                          int ldb)
{
    return strsm(h, side, uplo, trans, diag, m, n, *alpha, A, lda, B, ldb);
}

FAKE_EXPORT cublasStatus_t cublasStrsmBatched(cublasHandle_t h, cublasSideMode_t side,
                                              cublasFillMode_t uplo, cublasOperation_t trans,
                                              cublasDiagType_t diag, int m, int n,
                                              const float *alpha, const float *const A[],
                                              int lda, float *const B[], int ldb, int batch)
{
    for (int b = 0; b < batch; b++)
        strsm(h, side, uplo, trans, diag, m, n, *alpha, A[b], lda, B[b], ldb);
    return CUBLAS_STATUS_SUCCESS;
}

/* Left-looking LU with partial pivoting (P given) or none, in place;
 * info 0 or the first zero pivot (1-based). Column j is first updated by
 * the columns before it, each entry a sum over them. */
FAKE_EXPORT cublasStatus_t cublasSgetrfBatched(cublasHandle_t h, int n, float *const A[],
                                               int lda, int *P, int *info, int batch)
{
    for (int b = 0; b < batch; b++) {
        float *a = A[b];
        info[b] = 0;
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < n; i++) {
                float s = 0;
                int64_t upto = i < j ? i : j;
                ORDERED_SUM(h, upto, s, a[i + l * lda] * a[l + j * lda]);
                a[i + j * lda] -= s;
            }
            int p = j;
            for (int i = j + 1; P && i < n; i++)
                if (fabsf(a[i + j * lda]) > fabsf(a[p + j * lda]))
                    p = i;
            if (P)
                P[b * n + j] = p + 1;
            for (int c = 0; p != j && c < n; c++) {
                float t = a[j + c * lda];
                a[j + c * lda] = a[p + c * lda];
                a[p + c * lda] = t;
            }
            if (a[j + j * lda] == 0) {
                if (!info[b])
                    info[b] = j + 1;
                continue;
            }
            for (int i = j + 1; i < n; i++)
                a[i + j * lda] /= a[j + j * lda];
        }
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* Solves A X = B from getrf's factors (trans N only), X over B. */
FAKE_EXPORT cublasStatus_t cublasSgetrsBatched(cublasHandle_t h, cublasOperation_t trans, int n,
                                               int nrhs, const float *const A[], int lda,
                                               const int *ipiv, float *const B[], int ldb,
                                               int *info, int batch)
{
    *info = 0;
    if (trans != CUBLAS_OP_N)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    float one = 1;
    for (int b = 0; b < batch; b++) {
        for (int j = 0; ipiv && j < n; j++) {
            int p = ipiv[b * n + j] - 1;
            for (int c = 0; p != j && c < nrhs; c++) {
                float t = B[b][j + c * ldb];
                B[b][j + c * ldb] = B[b][p + c * ldb];
                B[b][p + c * ldb] = t;
            }
        }
        strsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, n,
              nrhs, one, A[b], lda, B[b], ldb);
        strsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n,
              nrhs, one, A[b], lda, B[b], ldb);
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* Householder QR in place (LAPACK's layout: R above the diagonal, the
 * reflectors below it, tau their scales). */
static void sgeqrf(cublasHandle_t h, int m, int n, float *a, int lda, float *tau)
{
    int k = m < n ? m : n;
    for (int j = 0; j < k; j++) {
        float norm2 = 0;
        ORDERED_SUM(h, m - j, norm2, a[j + l + j * lda] * a[j + l + j * lda]);
        float alpha = a[j + j * lda], norm = sqrtf(norm2);
        if (norm == 0) {
            tau[j] = 0;
            continue;
        }
        float beta = alpha >= 0 ? -norm : norm;
        tau[j] = (beta - alpha) / beta;
        for (int i = j + 1; i < m; i++)
            a[i + j * lda] /= alpha - beta;
        a[j + j * lda] = beta;
        for (int c = j + 1; c < n; c++) {
            float s = a[j + c * lda];
            ORDERED_SUM(h, m - j - 1, s, a[j + 1 + l + j * lda] * a[j + 1 + l + c * lda]);
            s *= tau[j];
            a[j + c * lda] -= s;
            for (int i = j + 1; i < m; i++)
                a[i + c * lda] -= s * a[i + j * lda];
        }
    }
}

FAKE_EXPORT cublasStatus_t cublasSgeqrfBatched(cublasHandle_t h, int m, int n, float *const A[],
                                               int lda, float *const Tau[], int *info,
                                               int batch)
{
    *info = 0;
    for (int b = 0; b < batch; b++)
        sgeqrf(h, m, n, A[b], lda, Tau[b]);
    return CUBLAS_STATUS_SUCCESS;
}

/* Least squares for m >= n, trans N: QR of A, C = Q^T C, R X = C. */
FAKE_EXPORT cublasStatus_t cublasSgelsBatched(cublasHandle_t h, cublasOperation_t trans, int m,
                                              int n, int nrhs, float *const A[], int lda,
                                              float *const C[], int ldc, int *info,
                                              int *devInfo, int batch)
{
    *info = 0;
    if (trans != CUBLAS_OP_N || m < n || n > 64)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    float tau[64], one = 1;
    for (int b = 0; b < batch; b++) {
        float *a = A[b], *c = C[b];
        sgeqrf(h, m, n, a, lda, tau);
        for (int j = 0; j < n; j++)
            for (int r = 0; r < nrhs; r++) {
                float s = c[j + r * ldc];
                ORDERED_SUM(h, m - j - 1, s, a[j + 1 + l + j * lda] * c[j + 1 + l + r * ldc]);
                s *= tau[j];
                c[j + r * ldc] -= s;
                for (int i = j + 1; i < m; i++)
                    c[i + r * ldc] -= s * a[i + j * lda];
            }
        strsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n,
              nrhs, one, a, lda, c, ldc);
        if (devInfo)
            devInfo[b] = 0;
    }
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasSgemmEx(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const float *alpha, const void *A, cudaDataType at,
                                         int lda, const void *B, cudaDataType bt, int ldb,
                                         const float *beta, void *C, cudaDataType ct, int ldc)
{
    return cublasGemmEx(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}
