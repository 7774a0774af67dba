/* A fake cuBLAS (libcublas.so.13) for tests, on host memory: handles with
 * atomics and math modes, and column-major GEMMs on FP32 data (Sgemm,
 * its strided-batched and batched forms, GemmEx and its two batched
 * forms), each also under its _64 name with 64-bit indices. With atomics
 * allowed or TF32 math, or the FAST_TF32 compute type, the k-sum runs
 * in a per-run shuffled order (fake.h); otherwise in order k = 0..K-1.
 * Defaults are cuBLAS's: atomics not allowed, default math, host pointer
 * mode.
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
static cublasStatus_t sgemm(cublasHandle_t h, int ta, int tb, int64_t m, int64_t n, int64_t k,
                            float alpha, const float *a, int64_t lda, const float *b,
                            int64_t ldb, float beta, float *c, int64_t ldc, int vary)
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

/* `batch` GEMMs, matrix i at a[i] (arrays) or a + i * sa (strides). */
static cublasStatus_t sgemm_batch(cublasHandle_t h, int ta, int tb, int64_t m, int64_t n,
                                  int64_t k, float alpha, const float *a,
                                  const float *const *aa, int64_t lda, long long sa,
                                  const float *b, const float *const *ba, int64_t ldb,
                                  long long sb, float beta, float *c, float *const *ca,
                                  int64_t ldc, long long sc, int64_t batch, int vary)
{
    for (int64_t i = 0; i < batch; i++) {
        cublasStatus_t st = sgemm(h, ta, tb, m, n, k, alpha, aa ? aa[i] : a + i * sa, lda,
                                  ba ? ba[i] : b + i * sb, ldb, beta, ca ? ca[i] : c + i * sc,
                                  ldc, vary);
        if (st != CUBLAS_STATUS_SUCCESS)
            return st;
    }
    return CUBLAS_STATUS_SUCCESS;
}

static int fp32_only(cudaDataType at_, cudaDataType bt, cudaDataType ct)
{
    return at_ == CUDA_R_32F && bt == CUDA_R_32F && ct == CUDA_R_32F;
}

/* Each entry point under its 32-bit name and its _64 name. */
#define SGEMM(NAME, I)                                                                     \
    FAKE_EXPORT cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t ta,                \
                                    cublasOperation_t tb, I m, I n, I k, const float *alpha, \
                                    const float *a, I lda, const float *b, I ldb,          \
                                    const float *beta, float *c, I ldc)                    \
    {                                                                                      \
        return sgemm(h, ta, tb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc,            \
                     varies(h, -1));                                                       \
    }
#define SGEMM_SB(NAME, I)                                                                  \
    FAKE_EXPORT cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t ta,                \
                                    cublasOperation_t tb, I m, I n, I k, const float *alpha, \
                                    const float *a, I lda, long long sa, const float *b,   \
                                    I ldb, long long sb, const float *beta, float *c,      \
                                    I ldc, long long sc, I batch)                          \
    {                                                                                      \
        return sgemm_batch(h, ta, tb, m, n, k, *alpha, a, NULL, lda, sa, b, NULL, ldb, sb, \
                           *beta, c, NULL, ldc, sc, batch, varies(h, -1));                 \
    }
#define SGEMM_BATCHED(NAME, I)                                                             \
    FAKE_EXPORT cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t ta,                \
                                    cublasOperation_t tb, I m, I n, I k, const float *alpha, \
                                    const float *const a[], I lda, const float *const b[], \
                                    I ldb, const float *beta, float *const c[], I ldc,     \
                                    I batch)                                               \
    {                                                                                      \
        return sgemm_batch(h, ta, tb, m, n, k, *alpha, NULL, a, lda, 0, NULL, b, ldb, 0,   \
                           *beta, NULL, c, ldc, 0, batch, varies(h, -1));                  \
    }
#define GEMM_EX(NAME, I)                                                                   \
    FAKE_EXPORT cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t ta,                \
                                    cublasOperation_t tb, I m, I n, I k, const void *alpha, \
                                    const void *a, cudaDataType at_, I lda, const void *b, \
                                    cudaDataType bt, I ldb, const void *beta, void *c,     \
                                    cudaDataType ct, I ldc, cublasComputeType_t compute,   \
                                    cublasGemmAlgo_t algo)                                 \
    {                                                                                      \
        (void)algo;                                                                        \
        if (!fp32_only(at_, bt, ct))                                                       \
            return CUBLAS_STATUS_NOT_SUPPORTED;                                            \
        return sgemm(h, ta, tb, m, n, k, *(const float *)alpha, a, lda, b, ldb,            \
                     *(const float *)beta, c, ldc, varies(h, compute));                    \
    }
#define GEMM_SB_EX(NAME, I)                                                                \
    FAKE_EXPORT cublasStatus_t NAME(                                                       \
        cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,       \
        const void *alpha, const void *a, cudaDataType at_, I lda, long long sa,           \
        const void *b, cudaDataType bt, I ldb, long long sb, const void *beta, void *c,    \
        cudaDataType ct, I ldc, long long sc, I batch, cublasComputeType_t compute,        \
        cublasGemmAlgo_t algo)                                                             \
    {                                                                                      \
        (void)algo;                                                                        \
        if (!fp32_only(at_, bt, ct))                                                       \
            return CUBLAS_STATUS_NOT_SUPPORTED;                                            \
        return sgemm_batch(h, ta, tb, m, n, k, *(const float *)alpha, a, NULL, lda, sa, b, \
                           NULL, ldb, sb, *(const float *)beta, c, NULL, ldc, sc, batch,   \
                           varies(h, compute));                                            \
    }
#define GEMM_BATCHED_EX(NAME, I)                                                           \
    FAKE_EXPORT cublasStatus_t NAME(                                                       \
        cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k,       \
        const void *alpha, const void *const a[], cudaDataType at_, I lda,                 \
        const void *const b[], cudaDataType bt, I ldb, const void *beta, void *const c[],  \
        cudaDataType ct, I ldc, I batch, cublasComputeType_t compute,                      \
        cublasGemmAlgo_t algo)                                                             \
    {                                                                                      \
        (void)algo;                                                                        \
        if (!fp32_only(at_, bt, ct))                                                       \
            return CUBLAS_STATUS_NOT_SUPPORTED;                                            \
        return sgemm_batch(h, ta, tb, m, n, k, *(const float *)alpha, NULL,                \
                           (const float *const *)a, lda, 0, NULL, (const float *const *)b, \
                           ldb, 0, *(const float *)beta, NULL, (float *const *)c, ldc, 0,  \
                           batch, varies(h, compute));                                     \
    }

SGEMM(cublasSgemm_v2, int)
SGEMM(cublasSgemm_v2_64, int64_t)
SGEMM_SB(cublasSgemmStridedBatched, int)
SGEMM_SB(cublasSgemmStridedBatched_64, int64_t)
SGEMM_BATCHED(cublasSgemmBatched, int)
SGEMM_BATCHED(cublasSgemmBatched_64, int64_t)
GEMM_EX(cublasGemmEx, int)
GEMM_EX(cublasGemmEx_64, int64_t)
GEMM_SB_EX(cublasGemmStridedBatchedEx, int)
GEMM_SB_EX(cublasGemmStridedBatchedEx_64, int64_t)
GEMM_BATCHED_EX(cublasGemmBatchedEx, int)
GEMM_BATCHED_EX(cublasGemmBatchedEx_64, int64_t)
