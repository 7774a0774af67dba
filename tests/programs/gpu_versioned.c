/* Linked against a fake libcublas.so.13 whose symbols carry NVIDIA's
 * version node (tests/fakes/cuda/cublas.map), as PyTorch's wheels are
 * linked against the real one: its imports are versioned
 * (cublasGemmEx@libcublas.so.13). One handle, one cublasGemmEx; prints a
 * hash of C. test-gpu-versioned checks that the shim's unversioned
 * definitions still bind these imports.
 */
#include <stdio.h>

#include "fake.h"
#include "gpu_util.h"

int main(void)
{
    enum { M = 8, N = 6, K = 5 };
    static float a[M * K], b[K * N], c[M * N];
    fill(a, M * K, 1);
    fill(b, K * N, 2);
    cublasHandle_t h;
    CHECK(cuInit(0));
    CHECK(cublasCreate_v2(&h));
    float one = 1, zero = 0;
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a, CUDA_R_32F, M, b,
                       CUDA_R_32F, K, &zero, c, CUDA_R_32F, M, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT));
    printf("gemmex %016llx\n", (unsigned long long)fnv(c, sizeof c, FNV0));
    return 0;
}
