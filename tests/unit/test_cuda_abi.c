/* shim/cuda/cuda_api.h declares the CUDA libraries' ABI itself, so
 * the shim builds without the toolkit. When the toolkit's headers exist
 * (the Makefile passes DETSHIM_HAVE_CUDA_HEADERS), this test includes
 * them and checks that every enum value, struct layout and function type
 * we declare is NVIDIA's: mostly at compile time (a mismatch does not
 * build), and the enum values again at run time so a failure names them.
 * Without the headers it says so and passes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#ifdef DETSHIM_HAVE_CUDA_HEADERS
#include <cuda.h>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cudnn.h>
#include <curand.h>
#include <library_types.h>

#define DETSHIM_CUDA_REAL_TYPES
typedef struct { unsigned short x; } __half; /* cuda_fp16.h: C++ only */
#include "cuda/cuda_api.h"

/* Every enum value, at compile time. */
#define CHECK_VALUE(name, value) _Static_assert((long long)(name) == (value), #name " differs");
DETSHIM_CUDA_ENUMS(CHECK_VALUE)
DETSHIM_CUDA_TRAIN_ENUMS(CHECK_VALUE)

/* Enums travel as int in the shim. */
#define CHECK_INT_SIZED(type)                                                              \
    _Static_assert(sizeof(type) == sizeof(int), #type " is not int-sized");
CHECK_INT_SIZED(cudaDataType)
CHECK_INT_SIZED(cublasStatus_t)
CHECK_INT_SIZED(cublasOperation_t)
CHECK_INT_SIZED(cublasPointerMode_t)
CHECK_INT_SIZED(cublasAtomicsMode_t)
CHECK_INT_SIZED(cublasMath_t)
CHECK_INT_SIZED(cublasComputeType_t)
CHECK_INT_SIZED(cublasGemmAlgo_t)
CHECK_INT_SIZED(cublasLtMatmulPreferenceAttributes_t)
CHECK_INT_SIZED(cublasLtMatrixLayoutAttribute_t)
CHECK_INT_SIZED(cublasLtMatmulDescAttributes_t)
CHECK_INT_SIZED(cublasLtMatmulAlgoConfigAttributes_t)
CHECK_INT_SIZED(cublasLtEpilogue_t)
CHECK_INT_SIZED(cudnnStatus_t)
CHECK_INT_SIZED(cudnnConvolutionFwdAlgo_t)
CHECK_INT_SIZED(cudnnDeterminism_t)
CHECK_INT_SIZED(cudnnMathType_t)
CHECK_INT_SIZED(cudnnDataType_t)
CHECK_INT_SIZED(cudnnBackendAttributeName_t)
CHECK_INT_SIZED(cudnnBackendAttributeType_t)
CHECK_INT_SIZED(cudnnBackendDescriptorType_t)
CHECK_INT_SIZED(cudnnBackendNumericalNote_t)
CHECK_INT_SIZED(curandStatus_t)
CHECK_INT_SIZED(curandRngType_t)
CHECK_INT_SIZED(curandOrdering_t)
CHECK_INT_SIZED(curandMethod_t)
CHECK_INT_SIZED(cublasSideMode_t)
CHECK_INT_SIZED(cublasFillMode_t)
CHECK_INT_SIZED(cublasDiagType_t)
CHECK_INT_SIZED(cudnnCTCLossAlgo_t)
CHECK_INT_SIZED(cudnnForwardMode_t)
CHECK_INT_SIZED(cudnnWgradMode_t)
CHECK_INT_SIZED(cudnnRNNDataLayout_t)
CHECK_INT_SIZED(cudnnRNNAlgo_t)
CHECK_INT_SIZED(cudnnSamplerType_t)
CHECK_INT_SIZED(cudnnRNNMode_t)
CHECK_INT_SIZED(cudnnRNNBiasMode_t)
CHECK_INT_SIZED(cudnnDirectionMode_t)
CHECK_INT_SIZED(cudnnRNNInputMode_t)
CHECK_INT_SIZED(CUresult)
CHECK_INT_SIZED(CUstreamCaptureStatus)

/* Our function types, built from the real parameter types here, must be
 * the real functions' types: same count, order and width of parameters. */
#define CHECK_FN(name)                                                                     \
    _Static_assert(__builtin_types_compatible_p(name##_fn, __typeof__(name)),              \
                   #name " has another signature");
CHECK_FN(cuInit)
CHECK_FN(cuMemcpyDtoH_v2)
CHECK_FN(cuStreamSynchronize)
CHECK_FN(cuCtxSynchronize)
CHECK_FN(cuCtxGetCurrent)
CHECK_FN(cuStreamIsCapturing)
CHECK_FN(cuModuleLoadData)
CHECK_FN(cuModuleGetFunction)
CHECK_FN(cuLaunchKernel)
CHECK_FN(cuMemAlloc_v2)
CHECK_FN(cuMemcpyDtoHAsync_v2)
CHECK_FN(cuMemHostAlloc)
CHECK_FN(cuMemFreeHost)
CHECK_FN(cuEventCreate)
CHECK_FN(cuEventRecord)
CHECK_FN(cuEventQuery)
CHECK_FN(cuEventSynchronize)
CHECK_FN(cuEventDestroy_v2)
CHECK_FN(cublasCreate_v2)
CHECK_FN(cublasSetAtomicsMode)
CHECK_FN(cublasGetAtomicsMode)
CHECK_FN(cublasSetMathMode)
CHECK_FN(cublasGetMathMode)
CHECK_FN(cublasGetPointerMode_v2)
CHECK_FN(cublasGetStream_v2)
CHECK_FN(cublasSgemm_v2)
CHECK_FN(cublasDgemm_v2)
/* cublasHgemm and its batched forms are declared for C++ only; their
 * types are Sgemm's with __half. */
CHECK_FN(cublasCgemm_v2)
CHECK_FN(cublasZgemm_v2)
CHECK_FN(cublasSgemmStridedBatched)
CHECK_FN(cublasDgemmStridedBatched)
CHECK_FN(cublasCgemmStridedBatched)
CHECK_FN(cublasZgemmStridedBatched)
CHECK_FN(cublasSgemmBatched)
CHECK_FN(cublasDgemmBatched)
CHECK_FN(cublasCgemmBatched)
CHECK_FN(cublasZgemmBatched)
CHECK_FN(cublasGemmEx)
CHECK_FN(cublasGemmBatchedEx)
CHECK_FN(cublasGemmStridedBatchedEx)
CHECK_FN(cublasSgemm_v2_64)
CHECK_FN(cublasDgemm_v2_64)
CHECK_FN(cublasCgemm_v2_64)
CHECK_FN(cublasZgemm_v2_64)
CHECK_FN(cublasSgemmStridedBatched_64)
CHECK_FN(cublasDgemmStridedBatched_64)
CHECK_FN(cublasCgemmStridedBatched_64)
CHECK_FN(cublasZgemmStridedBatched_64)
CHECK_FN(cublasSgemmBatched_64)
CHECK_FN(cublasDgemmBatched_64)
CHECK_FN(cublasCgemmBatched_64)
CHECK_FN(cublasZgemmBatched_64)
CHECK_FN(cublasGemmEx_64)
CHECK_FN(cublasGemmBatchedEx_64)
CHECK_FN(cublasGemmStridedBatchedEx_64)
CHECK_FN(cublasLtMatmulPreferenceSetAttribute)
CHECK_FN(cublasLtMatmulPreferenceCreate)
CHECK_FN(cublasLtMatmulPreferenceDestroy)
CHECK_FN(cublasLtMatmulAlgoGetHeuristic)
CHECK_FN(cublasLtMatmul)
CHECK_FN(cublasLtMatmulAlgoConfigGetAttribute)
CHECK_FN(cublasLtMatrixLayoutGetAttribute)
CHECK_FN(cublasLtMatmulDescGetAttribute)
CHECK_FN(cudnnGetStream)
CHECK_FN(cudnnGetTensorSizeInBytes)
CHECK_FN(cudnnGetFilterSizeInBytes)
CHECK_FN(cudnnGetTensorNdDescriptor)
CHECK_FN(cudnnFindConvolutionForwardAlgorithm)
CHECK_FN(cudnnGetConvolutionForwardAlgorithm_v7)
CHECK_FN(cudnnFindConvolutionBackwardDataAlgorithm)
CHECK_FN(cudnnGetConvolutionBackwardDataAlgorithm_v7)
CHECK_FN(cudnnFindConvolutionBackwardFilterAlgorithm)
CHECK_FN(cudnnGetConvolutionBackwardFilterAlgorithm_v7)
CHECK_FN(cudnnFindConvolutionForwardAlgorithmEx)
CHECK_FN(cudnnFindConvolutionBackwardDataAlgorithmEx)
CHECK_FN(cudnnFindConvolutionBackwardFilterAlgorithmEx)
CHECK_FN(cudnnConvolutionForward)
CHECK_FN(cudnnConvolutionBackwardData)
CHECK_FN(cudnnConvolutionBackwardFilter)
CHECK_FN(cudnnBackendCreateDescriptor)
CHECK_FN(cudnnBackendDestroyDescriptor)
CHECK_FN(cudnnBackendGetAttribute)
CHECK_FN(cudnnBackendExecute)
CHECK_FN(cudnnBackendFinalize)
CHECK_FN(curandCreateGenerator)
CHECK_FN(curandCreateGeneratorHost)
CHECK_FN(curandSetStream)
CHECK_FN(curandSetPseudoRandomGeneratorSeed)
CHECK_FN(curandSetGeneratorOrdering)
CHECK_FN(curandGenerate)
CHECK_FN(curandGenerateUniform)
CHECK_FN(curandGenerateNormal)
CHECK_FN(curandGenerateLongLong)
CHECK_FN(curandGenerateUniformDouble)
CHECK_FN(curandGenerateNormalDouble)
CHECK_FN(curandGenerateLogNormal)
CHECK_FN(curandGenerateLogNormalDouble)
CHECK_FN(curandGeneratePoisson)
CHECK_FN(curandGeneratePoissonMethod)
CHECK_FN(curandGenerateBinomial)
CHECK_FN(curandGenerateBinomialMethod)
CHECK_FN(curandGenerateSeeds)
/* shim/cuda/cuda_api_train.h (cuDNN 9 marks BatchNorm, CTC and the
 * spatial transformer deprecated; torch still calls them, and the
 * Makefile builds this test with -Wno-deprecated-declarations). */
#define CHECK_FN4(kind, S, D, C, Z) CHECK_FN(S) CHECK_FN(D) CHECK_FN(C) CHECK_FN(Z)
#define CHECK_FN4_64(S, D, C, Z) CHECK_FN4(, S, D, C, Z) CHECK_FN4(, S##_64, D##_64, C##_64, Z##_64)
CHECK_FN4_64(cublasSgemv_v2, cublasDgemv_v2, cublasCgemv_v2, cublasZgemv_v2)
CHECK_FN4_64(cublasSdot_v2, cublasDdot_v2, cublasCdotu_v2, cublasZdotu_v2)
CHECK_FN(cublasCdotc_v2)
CHECK_FN(cublasCdotc_v2_64)
CHECK_FN(cublasZdotc_v2)
CHECK_FN(cublasZdotc_v2_64)
CHECK_FN(cublasDotEx)
CHECK_FN(cublasDotEx_64)
CHECK_FN4_64(cublasStrsm_v2, cublasDtrsm_v2, cublasCtrsm_v2, cublasZtrsm_v2)
CHECK_FN4_64(cublasStrsmBatched, cublasDtrsmBatched, cublasCtrsmBatched, cublasZtrsmBatched)
CHECK_FN4(, cublasSgetrfBatched, cublasDgetrfBatched, cublasCgetrfBatched, cublasZgetrfBatched)
CHECK_FN4(, cublasSgetrsBatched, cublasDgetrsBatched, cublasCgetrsBatched, cublasZgetrsBatched)
CHECK_FN4(, cublasSgeqrfBatched, cublasDgeqrfBatched, cublasCgeqrfBatched, cublasZgeqrfBatched)
CHECK_FN4(, cublasSgelsBatched, cublasDgelsBatched, cublasCgelsBatched, cublasZgelsBatched)
CHECK_FN(cublasSgemmEx)
CHECK_FN(cublasSetSmCountTarget)
CHECK_FN(cudnnBatchNormalizationForwardTrainingEx)
CHECK_FN(cudnnBatchNormalizationBackwardEx)
CHECK_FN(cudnnBatchNormalizationForwardInference)
CHECK_FN(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize)
CHECK_FN(cudnnGetBatchNormalizationBackwardExWorkspaceSize)
CHECK_FN(cudnnGetBatchNormalizationTrainingExReserveSpaceSize)
CHECK_FN(cudnnCTCLoss)
CHECK_FN(cudnnCTCLoss_v8)
CHECK_FN(cudnnGetCTCLossWorkspaceSize)
CHECK_FN(cudnnGetCTCLossWorkspaceSize_v8)
CHECK_FN(cudnnSetSpatialTransformerNdDescriptor)
CHECK_FN(cudnnSpatialTfGridGeneratorForward)
CHECK_FN(cudnnSpatialTfGridGeneratorBackward)
CHECK_FN(cudnnSpatialTfSamplerForward)
CHECK_FN(cudnnSpatialTfSamplerBackward)
CHECK_FN(cudnnPoolingForward)
CHECK_FN(cudnnRNNForward)
CHECK_FN(cudnnRNNBackwardData_v8)
CHECK_FN(cudnnRNNBackwardWeights_v8)
CHECK_FN(cudnnGetRNNDataDescriptor)
CHECK_FN(cudnnGetRNNDescriptor_v8)
CHECK_FN(cudnnSetDropoutDescriptor)
CHECK_FN(cudnnRestoreDropoutDescriptor)
CHECK_FN(cudnnConvolutionBiasActivationForward)
CHECK_FN(cudnnSetConvolutionMathType)

/* The structs the shim reads and rewrites, field by field. */
#define SAME_FIELD(ours, real, field)                                                      \
    _Static_assert(offsetof(ours, field) == offsetof(real, field) &&                       \
                       sizeof(((ours *)0)->field) == sizeof(((real *)0)->field),           \
                   #real "." #field " differs");
#define SAME_PERF(real)                                                                    \
    _Static_assert(sizeof(struct detshim_cudnn_algo_perf) == sizeof(real), #real);         \
    SAME_FIELD(struct detshim_cudnn_algo_perf, real, algo)                                 \
    SAME_FIELD(struct detshim_cudnn_algo_perf, real, status)                               \
    SAME_FIELD(struct detshim_cudnn_algo_perf, real, time)                                 \
    SAME_FIELD(struct detshim_cudnn_algo_perf, real, memory)                               \
    SAME_FIELD(struct detshim_cudnn_algo_perf, real, determinism)                          \
    SAME_FIELD(struct detshim_cudnn_algo_perf, real, mathType)
SAME_PERF(cudnnConvolutionFwdAlgoPerf_t)
SAME_PERF(cudnnConvolutionBwdDataAlgoPerf_t)
SAME_PERF(cudnnConvolutionBwdFilterAlgoPerf_t)
_Static_assert(sizeof(struct detshim_lt_algo) == sizeof(cublasLtMatmulAlgo_t), "Lt algo size");
_Static_assert(sizeof(struct detshim_lt_heuristic) == sizeof(cublasLtMatmulHeuristicResult_t),
               "Lt heuristic result size");
SAME_FIELD(struct detshim_lt_heuristic, cublasLtMatmulHeuristicResult_t, algo)
SAME_FIELD(struct detshim_lt_heuristic, cublasLtMatmulHeuristicResult_t, workspaceSize)
SAME_FIELD(struct detshim_lt_heuristic, cublasLtMatmulHeuristicResult_t, state)
SAME_FIELD(struct detshim_lt_heuristic, cublasLtMatmulHeuristicResult_t, wavesCount)

static void test_every_enum_value_we_declare_is_nvidias(void **state)
{
    (void)state;
    int checked = 0;
#define RUNTIME_VALUE(name, value)                                                         \
    if ((long long)(name) != (value))                                                      \
        fail_msg("%s is %lld in the CUDA headers, %lld in cuda_api.h", #name,              \
                 (long long)(name), (long long)(value));                                   \
    checked++;
    DETSHIM_CUDA_ENUMS(RUNTIME_VALUE)
    DETSHIM_CUDA_TRAIN_ENUMS(RUNTIME_VALUE)
    assert_true(checked > 90);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_enum_value_we_declare_is_nvidias),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
    puts("test_cuda_abi: skipped: no CUDA toolkit headers (set CUDA_INC to their folder)");
    return 0;
}
#endif
