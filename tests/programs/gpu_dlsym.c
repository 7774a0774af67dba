/* A GPU program that reaches the vendor libraries the way TensorFlow and
 * JAX (XLA's stubs) do: never linked to them, it dlopens each one
 * RTLD_LOCAL by soname and fetches every function with dlsym(handle,
 * name). It runs a cuBLAS SGEMM after asking for atomics, a cuBLASLt
 * matmul with the heuristic's first algorithm, a cuDNN forward
 * convolution with Find's first algorithm and cuRAND uniform numbers on
 * the fake CUDA libraries (tests/fakes/cuda), which vary per run unless
 * pinned; then prints a hash of each result and of all. Like a framework's
 * process, it also draws some entropy (getrandom), a call LD_PRELOAD
 * alone does see.
 *
 * It also prints which file defines the SGEMM it got, and the one a
 * vendor library gets when it looks the same name up itself
 * (libcudnn_adv.so.9, tests/fakes/cuda/cudnn_adv.c, as cuDNN 9 does with
 * its sub-libraries): under the audit module the program gets
 * libdetshim's wrapper and the vendor library the real function.
 *
 *   gpu_dlsym          the run above
 *   gpu_dlsym fork     then forks a child that exits at once, as a
 *                      DataLoader worker may, holding the same libraries
 *   gpu_dlsym stub     only creates a cuBLAS handle through a framework's
 *                      stub (libtfstub.so, tests/fakes/cuda/tfstub.c),
 *                      loaded before cuBLAS, which forwards to what dlsym
 *                      answers
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake.h"
#include "gpu_util.h"

static void *open_lib(const char *name)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "gpu_dlsym: %s\n", dlerror());
        exit(1);
    }
    return h;
}

static void *need(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "gpu_dlsym: %s not found\n", name);
        exit(1);
    }
    return p;
}

/* f_p: f as the library's dlsym answers it. */
#define LOAD(lib, f) __typeof__(f) *f##_p = (__typeof__(f) *)(uintptr_t)need(lib, #f)

static const char *defined_in(const void *p)
{
    Dl_info info;
    if (!dladdr(p, &info) || !info.dli_fname)
        return "?";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

enum { M = 32, N = 24, K = 96 };

/* The stub's cublasCreate_v2, as the framework calls it. */
static int through_stub(void)
{
    void *stub = open_lib("libtfstub.so");
    LOAD(stub, cublasCreate_v2);
    cublasHandle_t h;
    printf("stub_create status %d\n", (int)cublasCreate_v2_p(&h));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "stub") == 0)
        return through_stub();
    uint64_t all = FNV0, entropy;
    if (getrandom(&entropy, sizeof entropy, 0) != (ssize_t)sizeof entropy)
        return 1;
    void *cuda = open_lib("libcuda.so.1"), *blas = open_lib("libcublas.so.13");
    void *lt = open_lib("libcublasLt.so.13"), *dnn = open_lib("libcudnn.so.9");
    void *rand = open_lib("libcurand.so.10"), *adv = open_lib("libcudnn_adv.so.9");
    LOAD(cuda, cuInit);
    CHECK(cuInit_p(0));

    /* cuBLAS, asking for atomics as a program may */
    LOAD(blas, cublasCreate_v2);
    LOAD(blas, cublasSetAtomicsMode);
    LOAD(blas, cublasSgemm_v2);
    static float a[M * K], b[K * N], c[M * N];
    fill(a, M * K, 1);
    fill(b, K * N, 2);
    cublasHandle_t h;
    CHECK(cublasCreate_v2_p(&h));
    CHECK(cublasSetAtomicsMode_p(h, CUBLAS_ATOMICS_ALLOWED));
    float one = 1, zero = 0;
    CHECK(cublasSgemm_v2_p(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a, M, b, K, &zero, c, M));
    printf("sgemm %016llx\n", (unsigned long long)fnv(c, sizeof c, FNV0));
    all = fnv(c, sizeof c, all);

    /* cuBLASLt: D = A B + C with the heuristic's first algorithm */
    LOAD(lt, cublasLtCreate);
    LOAD(lt, cublasLtMatmulDescCreate);
    LOAD(lt, cublasLtMatrixLayoutCreate);
    LOAD(lt, cublasLtMatmulPreferenceCreate);
    LOAD(lt, cublasLtMatmulAlgoGetHeuristic);
    LOAD(lt, cublasLtMatmul);
    cublasLtHandle_t lh;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulPreference_t pref;
    CHECK(cublasLtCreate_p(&lh));
    CHECK(cublasLtMatmulDescCreate_p(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CHECK(cublasLtMatrixLayoutCreate_p(&la, CUDA_R_32F, M, K, M));
    CHECK(cublasLtMatrixLayoutCreate_p(&lb, CUDA_R_32F, K, N, K));
    CHECK(cublasLtMatrixLayoutCreate_p(&lc, CUDA_R_32F, M, N, M));
    CHECK(cublasLtMatmulPreferenceCreate_p(&pref));
    cublasLtMatmulHeuristicResult_t results[4];
    int got = 0;
    CHECK(cublasLtMatmulAlgoGetHeuristic_p(lh, desc, la, lb, lc, lc, pref, 4, results, &got));
    static float d[M * N];
    CHECK(cublasLtMatmul_p(lh, desc, &one, a, la, b, lb, &one, c, lc, d, lc, &results[0].algo,
                           NULL, 0, NULL));
    printf("lt %016llx\n", (unsigned long long)fnv(d, sizeof d, FNV0));
    all = fnv(d, sizeof d, all);

    /* cuDNN: 2x3x10x10 input, 4 filters of 3x3x3, Find's first algorithm */
    LOAD(dnn, cudnnCreate);
    LOAD(dnn, cudnnCreateTensorDescriptor);
    LOAD(dnn, cudnnSetTensor4dDescriptor);
    LOAD(dnn, cudnnCreateFilterDescriptor);
    LOAD(dnn, cudnnSetFilter4dDescriptor);
    LOAD(dnn, cudnnCreateConvolutionDescriptor);
    LOAD(dnn, cudnnSetConvolution2dDescriptor);
    LOAD(dnn, cudnnFindConvolutionForwardAlgorithm);
    LOAD(dnn, cudnnConvolutionForward);
    static float x[2 * 3 * 10 * 10], w[4 * 3 * 3 * 3], y[2 * 4 * 8 * 8];
    fill(x, sizeof x / sizeof *x, 3);
    fill(w, sizeof w / sizeof *w, 4);
    cudnnHandle_t dh;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CHECK(cudnnCreate_p(&dh));
    CHECK(cudnnCreateTensorDescriptor_p(&xd));
    CHECK(cudnnSetTensor4dDescriptor_p(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 10, 10));
    CHECK(cudnnCreateTensorDescriptor_p(&yd));
    CHECK(cudnnSetTensor4dDescriptor_p(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 8, 8));
    CHECK(cudnnCreateFilterDescriptor_p(&wd));
    CHECK(cudnnSetFilter4dDescriptor_p(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 3));
    CHECK(cudnnCreateConvolutionDescriptor_p(&cd));
    CHECK(cudnnSetConvolution2dDescriptor_p(cd, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                            CUDNN_DATA_FLOAT));
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    CHECK(cudnnFindConvolutionForwardAlgorithm_p(dh, xd, wd, cd, yd, 8, &got, perf));
    CHECK(cudnnConvolutionForward_p(dh, &one, xd, x, wd, w, cd, perf[0].algo, NULL, 0, &zero, yd,
                                    y));
    printf("conv %016llx\n", (unsigned long long)fnv(y, sizeof y, FNV0));
    all = fnv(y, sizeof y, all);

    /* cuRAND with the library's default ordering and seed */
    LOAD(rand, curandCreateGenerator);
    LOAD(rand, curandGenerateUniform);
    curandGenerator_t gen;
    static float u[256];
    CHECK(curandCreateGenerator_p(&gen, CURAND_RNG_PSEUDO_DEFAULT));
    CHECK(curandGenerateUniform_p(gen, u, 256));
    printf("curand %016llx\n", (unsigned long long)fnv(u, sizeof u, FNV0));
    all = fnv(u, sizeof u, all);

    LOAD(adv, fake_vendor_lookup);
    printf("program_gets cublasSgemm_v2 from %s\n",
           defined_in((void *)(uintptr_t)cublasSgemm_v2_p));
    printf("vendor_gets cublasSgemm_v2 from %s\n",
           defined_in(fake_vendor_lookup_p("libcublas.so.13", "cublasSgemm_v2")));
    printf("all %016llx\n", (unsigned long long)all);
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "fork") == 0) {
        pid_t child = fork();
        if (child == 0)
            exit(0);
        waitpid(child, NULL, 0);
    }
    return 0;
}
