/* A small GPU program for the cuda family's tests, linked against the
 * fake CUDA libraries (tests/fakes/cuda) by their real sonames, as a real
 * program is against NVIDIA's. It runs, in order: a cuBLAS SGEMM and
 * GemmEx, a cuBLASLt matmul with the first algorithm the heuristic
 * offers, two more with epilogues (BIAS, then RELU_AUX) and one with
 * FP8 scales that cuBLASLt refuses for FP32 matrices, a cuDNN forward
 * convolution with the first algorithm Find offers (and FindEx's first
 * offer) on tensors whose padding holds bytes that differ run to run, a
 * cuDNN backend execution plan built from the first engine config the
 * engine heuristics offer, and cuRAND numbers of several distributions;
 * then prints a hash of each result and of all, the algorithm and engine
 * choices, and the XXH3-128 of the convolution's tensors packed (the
 * digests a trace must record for them). Inputs are fixed, so any change
 * between runs comes from the libraries.
 *
 *   gpu_prog           a plain program: library defaults everywhere
 *   gpu_prog asks      a program that asks for nondeterminism itself:
 *                      atomics allowed, TF32 math and compute type, cuDNN's
 *                      Get_v7 first pick, its own cuRAND seed and ordering
 *   gpu_prog otherbias a plain program whose epilogue bias has other
 *                      values: another input, not another library result
 */
#include <stdio.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fake.h"
#include "gpu_util.h"

/* Bytes that differ run to run, as a real program's uninitialised
 * padding may. */
static void garbage(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t v = (uint32_t)fake_mix(fake_run_seed() ^ i);
        memcpy(&x[i], &v, sizeof v);
    }
}

/* Copies a packed 4-d tensor (dims d) into or out of one with strides s,
 * in elements. */
static void restride(float *packed, float *strided, const int d[4], const int s[4], int in)
{
    int e = 0;
    for (int n = 0; n < d[0]; n++)
        for (int c = 0; c < d[1]; c++)
            for (int h = 0; h < d[2]; h++)
                for (int w = 0; w < d[3]; w++, e++) {
                    float *t = &strided[n * s[0] + c * s[1] + h * s[2] + w * s[3]];
                    if (in)
                        *t = packed[e];
                    else
                        packed[e] = *t;
                }
}

static void print_xxh3(const char *name, const void *p, size_t n)
{
    XXH128_hash_t h = XXH3_128bits(p, n);
    printf("%s %016llx%016llx\n", name, (unsigned long long)h.high64,
           (unsigned long long)h.low64);
}

enum { M = 32, N = 24, K = 96 };

int main(int argc, char **argv)
{
    int asks = argc > 1 && strcmp(argv[1], "asks") == 0;
    int otherbias = argc > 1 && strcmp(argv[1], "otherbias") == 0;
    uint64_t all = 0xcbf29ce484222325ull;
    CHECK(cuInit(0));

    /* cuBLAS */
    static float a[M * K], b[K * N], c[M * N], d[M * N];
    fill(a, M * K, 1);
    fill(b, K * N, 2);
    cublasHandle_t h;
    CHECK(cublasCreate_v2(&h));
    if (asks) {
        CHECK(cublasSetAtomicsMode(h, CUBLAS_ATOMICS_ALLOWED));
        CHECK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
    }
    float one = 1, zero = 0;
    CHECK(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a, M, b, K, &zero, c, M));
    printf("sgemm %016llx\n", (unsigned long long)fnv(c, sizeof c, 0xcbf29ce484222325ull));
    all = fnv(c, sizeof c, all);
    CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, M, N, K, &one, a, CUDA_R_32F, K, b,
                       CUDA_R_32F, K, &zero, d, CUDA_R_32F, M,
                       asks ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT));
    printf("gemmex %016llx\n", (unsigned long long)fnv(d, sizeof d, 0xcbf29ce484222325ull));
    all = fnv(d, sizeof d, all);
    /* Two products at once through pointer arrays (the arrays are
     * "device" memory too): A B and, from the second halves, A' B'. */
    static float e[2][16 * 8];
    const float *as[2] = { a, a + 16 * K / 2 }, *bs[2] = { b, b + K * 8 };
    float *es[2] = { e[0], e[1] };
    CHECK(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 8, K / 2, &one, as, 16, bs, K / 2,
                             &zero, es, 16, 2));
    printf("batched %016llx\n", (unsigned long long)fnv(e, sizeof e, 0xcbf29ce484222325ull));
    all = fnv(e, sizeof e, all);

    /* cuBLASLt: D = A B + C, the heuristic's first algorithm */
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulPreference_t pref;
    CHECK(cublasLtCreate(&lt));
    CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, M, K, M));
    CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, K, N, K));
    CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, M, N, M));
    CHECK(cublasLtMatmulPreferenceCreate(&pref));
    cublasLtMatmulHeuristicResult_t results[4];
    int got = 0;
    CHECK(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 4, results, &got));
    static float lt_out[M * N];
    CHECK(cublasLtMatmul(lt, desc, &one, a, la, b, lb, &one, c, lc, lt_out, lc, &results[0].algo,
                         NULL, 0, NULL));
    printf("lt %016llx\n", (unsigned long long)fnv(lt_out, sizeof lt_out, 0xcbf29ce484222325ull));
    all = fnv(lt_out, sizeof lt_out, all);

    /* cuBLASLt epilogues, same algorithm: D = A B + bias, then D = relu(A B)
     * and its bit-mask (leading dimension 128 bits, cuBLASLt's minimum). */
    static float bias[M], lt_bias[M * N], lt_relu[M * N];
    static uint8_t mask[128 / 8 * N];
    fill(bias, M, otherbias ? 6 : 5);
    const float *bias_ptr = bias;
    void *mask_ptr = mask;
    int64_t mask_ld = 128;
    int32_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    cublasLtMatmulDesc_t dbias, drelu;
    CHECK(cublasLtMatmulDescCreate(&dbias, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CHECK(cublasLtMatmulDescSetAttribute(dbias, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                         sizeof epilogue));
    CHECK(cublasLtMatmulDescSetAttribute(dbias, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr,
                                         sizeof bias_ptr));
    CHECK(cublasLtMatmul(lt, dbias, &one, a, la, b, lb, &zero, c, lc, lt_bias, lc,
                         &results[0].algo, NULL, 0, NULL));
    epilogue = CUBLASLT_EPILOGUE_RELU_AUX;
    CHECK(cublasLtMatmulDescCreate(&drelu, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CHECK(cublasLtMatmulDescSetAttribute(drelu, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                         sizeof epilogue));
    CHECK(cublasLtMatmulDescSetAttribute(drelu, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
                                         &mask_ptr, sizeof mask_ptr));
    CHECK(cublasLtMatmulDescSetAttribute(drelu, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &mask_ld,
                                         sizeof mask_ld));
    CHECK(cublasLtMatmul(lt, drelu, &one, a, la, b, lb, &zero, c, lc, lt_relu, lc,
                         &results[0].algo, NULL, 0, NULL));
    /* FP8 scale factors and amax on FP32 matrices: cuBLASLt refuses them
     * (INVALID_VALUE), but the call is still made and recorded. */
    static float a_scale = 1, amax;
    const float *a_scale_ptr = &a_scale;
    float *amax_ptr = &amax;
    cublasLtMatmulDesc_t dscale;
    CHECK(cublasLtMatmulDescCreate(&dscale, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CHECK(cublasLtMatmulDescSetAttribute(dscale, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                         &a_scale_ptr, sizeof a_scale_ptr));
    CHECK(cublasLtMatmulDescSetAttribute(dscale, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &amax_ptr,
                                         sizeof amax_ptr));
    printf("lt_fp8_scales status %d\n",
           (int)cublasLtMatmul(lt, dscale, &one, a, la, b, lb, &zero, c, lc, lt_relu, lc,
                               &results[0].algo, NULL, 0, NULL));
    uint64_t eh = fnv(lt_bias, sizeof lt_bias, 0xcbf29ce484222325ull);
    eh = fnv(mask, sizeof mask, fnv(lt_relu, sizeof lt_relu, eh));
    printf("lt_epilogue %016llx\n", (unsigned long long)eh);
    all = fnv(mask, sizeof mask, fnv(lt_relu, sizeof lt_relu, fnv(lt_bias, sizeof lt_bias, all)));

    /* cuDNN: 2x3x10x10 input, 4 filters of 3x3x3, no padding. The
     * input's rows are padded to 12 elements and its channels by 4 more,
     * the output's rows to 9; their padding holds garbage. */
    static const int xdim[4] = { 2, 3, 10, 10 }, xstr[4] = { 3 * 124, 124, 12, 1 };
    static const int ydim[4] = { 2, 4, 8, 8 }, ystr[4] = { 4 * 72, 72, 9, 1 };
    static float xp[2 * 3 * 10 * 10], x[2 * 3 * 124], w[4 * 3 * 3 * 3], y[2 * 4 * 72];
    static float yp[2 * 4 * 8 * 8];
    fill(xp, sizeof xp / sizeof *xp, 3);
    fill(w, sizeof w / sizeof *w, 4);
    garbage(x, sizeof x / sizeof *x);
    garbage(y, sizeof y / sizeof *y);
    restride(xp, x, xdim, xstr, 1);
    cudnnHandle_t dnn;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CHECK(cudnnCreate(&dnn));
    CHECK(cudnnCreateTensorDescriptor(&xd));
    CHECK(cudnnSetTensor4dDescriptorEx(xd, CUDNN_DATA_FLOAT, 2, 3, 10, 10, xstr[0], xstr[1],
                                       xstr[2], xstr[3]));
    CHECK(cudnnCreateTensorDescriptor(&yd));
    CHECK(cudnnSetTensor4dDescriptorEx(yd, CUDNN_DATA_FLOAT, 2, 4, 8, 8, ystr[0], ystr[1],
                                       ystr[2], ystr[3]));
    CHECK(cudnnCreateFilterDescriptor(&wd));
    CHECK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 3));
    CHECK(cudnnCreateConvolutionDescriptor(&cd));
    CHECK(cudnnSetConvolution2dDescriptor(cd, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                          CUDNN_DATA_FLOAT));
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    if (asks)
        CHECK(cudnnGetConvolutionForwardAlgorithm_v7(dnn, xd, wd, cd, yd, 8, &got, perf));
    else
        CHECK(cudnnFindConvolutionForwardAlgorithm(dnn, xd, wd, cd, yd, 8, &got, perf));
    CHECK(cudnnConvolutionForward(dnn, &one, xd, x, wd, w, cd, perf[0].algo, NULL, 0, &zero, yd,
                                  y));
    restride(yp, y, ydim, ystr, 0);
    printf("conv %016llx\n", (unsigned long long)fnv(yp, sizeof yp, 0xcbf29ce484222325ull));
    print_xxh3("conv_x_packed", xp, sizeof xp);
    print_xxh3("conv_y_packed", yp, sizeof yp);
    static float scratch[sizeof y / sizeof *y];
    CHECK(cudnnFindConvolutionForwardAlgorithmEx(dnn, xd, x, wd, w, cd, yd, scratch, 8, &got, perf,
                                                 NULL, 0));
    printf("findex_first %d of %d\n", perf[0].algo, got);
    all = fnv(yp, sizeof yp, all);

    /* cuDNN backend: the first engine config the heuristics offer */
    cudnnBackendDescriptor_t heur, cfgs[4], plan;
    int64_t ncfg = 0, engine = -1, one64 = 0;
    CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur));
    CHECK(cudnnBackendFinalize(heur));
    for (int i = 0; i < 4; i++)
        CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]));
    /* Like cuDNN's frontend, pass a copy of the list and keep using the
     * program's own: whatever is filtered must show in the descriptors. */
    cudnnBackendDescriptor_t passed[4];
    memcpy(passed, cfgs, sizeof cfgs);
    CHECK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 4, &ncfg, passed));
    CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan));
    CHECK(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[0]));
    CHECK(cudnnBackendFinalize(plan));
    CHECK(cudnnBackendExecute(dnn, plan, NULL));
    cudnnBackendDescriptor_t eng;
    CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng));
    CHECK(cudnnBackendGetAttribute(cfgs[0], CUDNN_ATTR_ENGINECFG_ENGINE,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &one64, &eng));
    CHECK(cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1,
                                   &one64, &engine));
    printf("backend_engine %lld of %lld\n", (long long)engine, (long long)ncfg);

    /* cuRAND */
    curandGenerator_t gen;
    static float u[256];
    CHECK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT));
    if (asks) {
        CHECK(curandSetPseudoRandomGeneratorSeed(gen, 1234));
        CHECK(curandSetGeneratorOrdering(gen, CURAND_ORDERING_PSEUDO_BEST));
    }
    CHECK(curandGenerateSeeds(gen));
    CHECK(curandGenerateUniform(gen, u, 256));
    static double nd[64];
    static unsigned int po[2][64], bi[2][64];
    CHECK(curandGenerateNormalDouble(gen, nd, 64, 0.5, 2.0));
    CHECK(curandGeneratePoisson(gen, po[0], 64, 3.5));
    CHECK(curandGeneratePoissonMethod(gen, po[1], 64, 3.5, CURAND_CHOOSE_BEST));
    CHECK(curandGenerateBinomial(gen, bi[0], 64, 10, 0.25));
    CHECK(curandGenerateBinomialMethod(gen, bi[1], 64, 10, 0.25, CURAND_CHOOSE_BEST));
    uint64_t rh = fnv(u, sizeof u, 0xcbf29ce484222325ull);
    rh = fnv(bi, sizeof bi, fnv(po, sizeof po, fnv(nd, sizeof nd, rh)));
    printf("curand %016llx\n", (unsigned long long)rh);
    all = fnv(u, sizeof u, all);
    all = fnv(bi, sizeof bi, fnv(po, sizeof po, fnv(nd, sizeof nd, all)));
    printf("all %016llx\n", (unsigned long long)all);
    return 0;
}
