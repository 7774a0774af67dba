/* The cuBLAS GEMM family under both index types: each entry point
 * (Sgemm, its strided-batched and batched forms, GemmEx and its two
 * batched forms) is called with int indices and then, on the same inputs,
 * under its _64 name with int64_t indices, on a handle that asks for
 * atomics, so the fake cuBLAS varies its sums unless the shim pins it.
 * Prints, per entry point, a hash of each result: pinned, the two agree
 * and do not change between runs.
 */
#include <stdio.h>
#include <string.h>

#include "fake.h"
#include "gpu_util.h"

enum { M = 16, N = 12, K = 64, BATCH = 2 };
static float a[BATCH][M * K], b[BATCH][K * N], out32[BATCH][M * N], out64[BATCH][M * N];

static void report(const char *name)
{
    printf("%s %016llx %016llx\n", name,
           (unsigned long long)fnv(out32, sizeof out32, FNV0),
           (unsigned long long)fnv(out64, sizeof out64, FNV0));
    memset(out32, 0, sizeof out32);
    memset(out64, 0, sizeof out64);
}

int main(void)
{
    CHECK(cuInit(0));
    fill(a[0], sizeof a / sizeof(float), 5);
    fill(b[0], sizeof b / sizeof(float), 6);
    cublasHandle_t h;
    CHECK(cublasCreate_v2(&h));
    CHECK(cublasSetAtomicsMode(h, CUBLAS_ATOMICS_ALLOWED));
    const float one = 1, zero = 0;
    const long long sa = M * K, sb = K * N, sc = M * N;
    const float *as[BATCH] = { a[0], a[1] }, *bs[BATCH] = { b[0], b[1] };
    float *c32[BATCH] = { out32[0], out32[1] }, *c64[BATCH] = { out64[0], out64[1] };
    const void *const *av = (const void *const *)as, *const *bv = (const void *const *)bs;

    CHECK(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a[0], M, b[0], K, &zero,
                         out32[0], M));
    CHECK(cublasSgemm_v2_64(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a[0], M, b[0], K, &zero,
                            out64[0], M));
    report("sgemm");
    CHECK(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a[0], M, sa,
                                    b[0], K, sb, &zero, out32[0], M, sc, BATCH));
    CHECK(cublasSgemmStridedBatched_64(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a[0], M, sa,
                                       b[0], K, sb, &zero, out64[0], M, sc, BATCH));
    report("sgemm_strided_batched");
    CHECK(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, as, M, bs, K, &zero, c32,
                             M, BATCH));
    CHECK(cublasSgemmBatched_64(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, as, M, bs, K, &zero,
                                c64, M, BATCH));
    report("sgemm_batched");
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a[0], CUDA_R_32F, M, b[0],
                       CUDA_R_32F, K, &zero, out32[0], CUDA_R_32F, M, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT));
    CHECK(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a[0], CUDA_R_32F, M, b[0],
                          CUDA_R_32F, K, &zero, out64[0], CUDA_R_32F, M, CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT));
    report("gemm_ex");
    CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a[0], CUDA_R_32F,
                                     M, sa, b[0], CUDA_R_32F, K, sb, &zero, out32[0], CUDA_R_32F,
                                     M, sc, BATCH, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    CHECK(cublasGemmStridedBatchedEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a[0],
                                        CUDA_R_32F, M, sa, b[0], CUDA_R_32F, K, sb, &zero,
                                        out64[0], CUDA_R_32F, M, sc, BATCH, CUBLAS_COMPUTE_32F,
                                        CUBLAS_GEMM_DEFAULT));
    report("gemm_strided_batched_ex");
    CHECK(cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, av, CUDA_R_32F, M, bv,
                              CUDA_R_32F, K, &zero, (void *const *)c32, CUDA_R_32F, M, BATCH,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    CHECK(cublasGemmBatchedEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, av, CUDA_R_32F, M,
                                 bv, CUDA_R_32F, K, &zero, (void *const *)c64, CUDA_R_32F, M,
                                 BATCH, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    report("gemm_batched_ex");
    return 0;
}
