/* A fake cuBLAS (libcublas.so.13) for tests, on host memory: handles with
 * atomics and math modes, and column-major GEMMs (S, GemmEx on FP32 data,
 * S strided-batched). With atomics allowed or TF32 math, or the FAST_TF32
 * compute type, the k-sum runs in a per-run shuffled order (fake.h);
 * otherwise in order k = 0..K-1. Defaults are cuBLAS's: atomics not
 * allowed, default math, host pointer mode.
 */
#include "fake.h"

struct cublasContext {
    int atomics, math, pointer_mode;
    cudaStream_t stream;
};

FAKE_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    *h = calloc(1, sizeof **h);
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

FAKE_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasSetAtomicsMode(cublasHandle_t h, cublasAtomicsMode_t mode)
{
    h->atomics = mode;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasGetAtomicsMode(cublasHandle_t h, cublasAtomicsMode_t *mode)
{
    *mode = h->atomics;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode)
{
    h->math = mode;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t h, cublasMath_t *mode)
{
    *mode = h->math;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t mode)
{
    h->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t *mode)
{
    *mode = h->pointer_mode;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t h, cudaStream_t *stream)
{
    *stream = h->stream;
    return CUBLAS_STATUS_SUCCESS;
}

static int varies(cublasHandle_t h, int compute)
{
    int base = h->math & 0xf;
    return h->atomics == CUBLAS_ATOMICS_ALLOWED || base == CUBLAS_TF32_TENSOR_OP_MATH ||
           base == CUBLAS_TENSOR_OP_MATH || compute == CUBLAS_COMPUTE_32F_FAST_TF32 ||
           compute == CUBLAS_COMPUTE_32F_FAST_16F;
}

/* Element (i, j) of op(X), X column-major with leading dimension ld. */
static float at(const float *x, int trans, int64_t i, int64_t j, int64_t ld)
{
    return trans == CUBLAS_OP_N ? x[i + j * ld] : x[j + i * ld];
}

/* C = alpha op(A) op(B) + beta C; C not read when beta == 0. */
static cublasStatus_t sgemm(cublasHandle_t h, int ta, int tb, int m, int n, int k, float alpha,
                            const float *a, int lda, const float *b, int ldb, float beta,
                            float *c, int ldc, int vary)
{
    if (m < 0 || n < 0 || k < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    int64_t *order = malloc(sizeof *order * (size_t)(k ? k : 1));
    if (!order)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    (void)h;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            fake_order(order, k, vary);
            float s = 0;
            for (int64_t l = 0; l < k; l++)
                s += at(a, ta, i, order[l], lda) * at(b, tb, order[l], j, ldb);
            float *cij = &c[i + j * ldc];
            *cij = alpha * s + (beta != 0 ? beta * *cij : 0);
        }
    free(order);
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta,
                                          cublasOperation_t tb, int m, int n, int k,
                                          const float *alpha, const float *a, int lda,
                                          const float *b, int ldb, const float *beta, float *c,
                                          int ldc)
{
    return sgemm(h, ta, tb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc, varies(h, -1));
}

FAKE_EXPORT cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
    const float *alpha, const float *a, int lda, long long sa, const float *b, int ldb,
    long long sb, const float *beta, float *c, int ldc, long long sc, int batch)
{
    for (int i = 0; i < batch; i++) {
        cublasStatus_t st = sgemm(h, ta, tb, m, n, k, *alpha, a + i * sa, lda, b + i * sb, ldb,
                                  *beta, c + i * sc, ldc, varies(h, -1));
        if (st != CUBLAS_STATUS_SUCCESS)
            return st;
    }
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasSgemmBatched(cublasHandle_t h, cublasOperation_t ta,
                                              cublasOperation_t tb, int m, int n, int k,
                                              const float *alpha, const float *const a[], int lda,
                                              const float *const b[], int ldb, const float *beta,
                                              float *const c[], int ldc, int batch)
{
    for (int i = 0; i < batch; i++) {
        cublasStatus_t st = sgemm(h, ta, tb, m, n, k, *alpha, a[i], lda, b[i], ldb, *beta, c[i],
                                  ldc, varies(h, -1));
        if (st != CUBLAS_STATUS_SUCCESS)
            return st;
    }
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta,
                                        cublasOperation_t tb, int m, int n, int k,
                                        const void *alpha, const void *a, cudaDataType at_,
                                        int lda, const void *b, cudaDataType bt, int ldb,
                                        const void *beta, void *c, cudaDataType ct, int ldc,
                                        cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    (void)algo;
    if (at_ != CUDA_R_32F || bt != CUDA_R_32F || ct != CUDA_R_32F)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    return sgemm(h, ta, tb, m, n, k, *(const float *)alpha, a, lda, b, ldb,
                 *(const float *)beta, c, ldc, varies(h, compute));
}
