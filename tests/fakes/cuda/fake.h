/* Shared by the fake CUDA libraries in this folder (libcuda, libcublas,
 * libcublasLt, libcudnn, libcurand, built under their real sonames) and
 * by tests/programs/gpu_prog.c: the vendor functions they define beyond
 * the ones detshim declares in shim/cuda/cuda_api.h, and the fakes' one
 * source of per-run variation. "Device memory" is host memory here.
 *
 * Where a real library may be nondeterministic (cuBLAS with atomics
 * allowed, cuBLASLt split-K reductions, a nondeterministic cuDNN
 * algorithm, cuRAND's default ordering) the fakes really are: they sum in
 * an order shuffled by a seed drawn once per process from the pid and the
 * clock, so two runs give different bits. (The fakes also treat TF32 math
 * as varying, though real TF32 is only less precise, so the tests can see
 * detshim's override of it.) Pinned settings sum in index order.
 */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cuda/cuda_api.h"

#define FAKE_EXPORT __attribute__((visibility("default")))

/* cuBLAS */
cublasStatus_t cublasDestroy_v2(cublasHandle_t h);
cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t mode);
cublasGetAtomicsMode_fn cublasGetAtomicsMode;
cublasGetMathMode_fn cublasGetMathMode;
cublasGetPointerMode_v2_fn cublasGetPointerMode_v2;
cublasGetStream_v2_fn cublasGetStream_v2;
cublasCreate_v2_fn cublasCreate_v2;
cublasSetAtomicsMode_fn cublasSetAtomicsMode;
cublasSetMathMode_fn cublasSetMathMode;
cublasSgemm_v2_fn cublasSgemm_v2;
cublasGemmEx_fn cublasGemmEx;
cublasSgemmStridedBatched_fn cublasSgemmStridedBatched;
cublasSgemmBatched_fn cublasSgemmBatched;
cublasGemmStridedBatchedEx_fn cublasGemmStridedBatchedEx;
cublasGemmBatchedEx_fn cublasGemmBatchedEx;
cublasSgemm_v2_64_fn cublasSgemm_v2_64;
cublasGemmEx_64_fn cublasGemmEx_64;
cublasSgemmStridedBatched_64_fn cublasSgemmStridedBatched_64;
cublasSgemmBatched_64_fn cublasSgemmBatched_64;
cublasGemmStridedBatchedEx_64_fn cublasGemmStridedBatchedEx_64;
cublasGemmBatchedEx_64_fn cublasGemmBatchedEx_64;

/* cuBLAS level 1 and 2, solves and solvers (cublas_train.c): FP32, and
 * one complex dot */
cublasSgemv_v2_fn cublasSgemv_v2;
cublasSgemv_v2_64_fn cublasSgemv_v2_64;
cublasSdot_v2_fn cublasSdot_v2;
cublasCdotc_v2_fn cublasCdotc_v2;
cublasDotEx_fn cublasDotEx;
cublasStrsm_v2_fn cublasStrsm_v2;
cublasStrsmBatched_fn cublasStrsmBatched;
cublasSgetrfBatched_fn cublasSgetrfBatched;
cublasSgetrsBatched_fn cublasSgetrsBatched;
cublasSgeqrfBatched_fn cublasSgeqrfBatched;
cublasSgelsBatched_fn cublasSgelsBatched;
cublasSgemmEx_fn cublasSgemmEx;
cublasSetSmCountTarget_fn cublasSetSmCountTarget;

/* cuBLASLt */
cublasStatus_t cublasLtCreate(cublasLtHandle_t *lt);
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute,
                                        cudaDataType scale);
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t size);
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld);
cublasLtMatmulDescGetAttribute_fn cublasLtMatmulDescGetAttribute;
cublasLtMatrixLayoutGetAttribute_fn cublasLtMatrixLayoutGetAttribute;
cublasLtMatmulPreferenceCreate_fn cublasLtMatmulPreferenceCreate;
cublasLtMatmulPreferenceDestroy_fn cublasLtMatmulPreferenceDestroy;
cublasLtMatmulPreferenceSetAttribute_fn cublasLtMatmulPreferenceSetAttribute;
cublasLtMatmulAlgoGetHeuristic_fn cublasLtMatmulAlgoGetHeuristic;
cublasLtMatmulAlgoConfigGetAttribute_fn cublasLtMatmulAlgoConfigGetAttribute;
cublasLtMatmul_fn cublasLtMatmul;

/* cuDNN: 4-d float tensors, NCHW (packed or strided), only what gpu_prog
 * uses. */
enum { CUDNN_TENSOR_NCHW = 0, CUDNN_CROSS_CORRELATION = 1 };
enum { FAKE_CUDNN_ALGO_FAST_NONDET = 4 }; /* CUDNN_CONVOLUTION_FWD_ALGO_FFT */
cudnnStatus_t cudnnCreate(cudnnHandle_t *h);
cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d);
cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, int format,
                                         cudnnDataType_t type, int n, int c, int h, int w);
cudnnStatus_t cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t d, cudnnDataType_t type,
                                           int n, int c, int h, int w, int ns, int cs, int hs,
                                           int ws);
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d);
cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type,
                                         int format, int k, int c, int h, int w);
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d);
cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h,
                                              int pad_w, int u, int v, int dilation_h,
                                              int dilation_w, int mode, cudnnDataType_t type);
cudnnGetStream_fn cudnnGetStream;
cudnnGetTensorNdDescriptor_fn cudnnGetTensorNdDescriptor;
cudnnGetTensorSizeInBytes_fn cudnnGetTensorSizeInBytes;
cudnnGetFilterSizeInBytes_fn cudnnGetFilterSizeInBytes;
cudnnFindConvolutionForwardAlgorithm_fn cudnnFindConvolutionForwardAlgorithm;
cudnnGetConvolutionForwardAlgorithm_v7_fn cudnnGetConvolutionForwardAlgorithm_v7;
cudnnFindConvolutionForwardAlgorithmEx_fn cudnnFindConvolutionForwardAlgorithmEx;
cudnnConvolutionForward_fn cudnnConvolutionForward;
/* The fake's convolution itself (cudnn.c), for the fused forward. */
__attribute__((visibility("hidden"))) cudnnConvolutionForward_fn fake_conv_forward;

/* cuDNN training calls (cudnn_train.c, cudnn_ops.c) and their
 * descriptors, under their real signatures */
cudnnSetConvolutionMathType_fn cudnnSetConvolutionMathType;
cudnnBatchNormalizationForwardTrainingEx_fn cudnnBatchNormalizationForwardTrainingEx;
cudnnBatchNormalizationBackwardEx_fn cudnnBatchNormalizationBackwardEx;
cudnnBatchNormalizationForwardInference_fn cudnnBatchNormalizationForwardInference;
cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize_fn
    cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize;
cudnnGetBatchNormalizationBackwardExWorkspaceSize_fn
    cudnnGetBatchNormalizationBackwardExWorkspaceSize;
cudnnGetBatchNormalizationTrainingExReserveSpaceSize_fn
    cudnnGetBatchNormalizationTrainingExReserveSpaceSize;
cudnnStatus_t cudnnCreateDropoutDescriptor(cudnnDropoutDescriptor_t *d);
cudnnStatus_t cudnnDropoutGetStatesSize(cudnnHandle_t h, size_t *size);
cudnnSetDropoutDescriptor_fn cudnnSetDropoutDescriptor;
cudnnRestoreDropoutDescriptor_fn cudnnRestoreDropoutDescriptor;
cudnnStatus_t cudnnCreateRNNDescriptor(cudnnRNNDescriptor_t *d);
cudnnStatus_t cudnnSetRNNDescriptor_v8(cudnnRNNDescriptor_t d, int algo, int cell, int bias,
                                       int dir, int input, int dtype, int mprec, int math,
                                       int32_t isize, int32_t hsize, int32_t psize,
                                       int32_t layers, cudnnDropoutDescriptor_t drop,
                                       uint32_t aux);
cudnnGetRNNDescriptor_v8_fn cudnnGetRNNDescriptor_v8;
cudnnStatus_t cudnnCreateRNNDataDescriptor(cudnnRNNDataDescriptor_t *d);
cudnnStatus_t cudnnSetRNNDataDescriptor(cudnnRNNDataDescriptor_t d, int type, int layout,
                                        int seq, int batch, int vec, const int lengths[],
                                        void *fill);
cudnnGetRNNDataDescriptor_fn cudnnGetRNNDataDescriptor;
cudnnStatus_t cudnnGetRNNWeightSpaceSize(cudnnHandle_t h, cudnnRNNDescriptor_t d, size_t *size);
cudnnStatus_t cudnnGetRNNTempSpaceSizes(cudnnHandle_t h, cudnnRNNDescriptor_t d, int mode,
                                        cudnnRNNDataDescriptor_t x, size_t *ws, size_t *reserve);
cudnnRNNForward_fn cudnnRNNForward;
cudnnRNNBackwardData_v8_fn cudnnRNNBackwardData_v8;
cudnnRNNBackwardWeights_v8_fn cudnnRNNBackwardWeights_v8;
cudnnStatus_t cudnnCreateCTCLossDescriptor(cudnnCTCLossDescriptor_t *d);
cudnnStatus_t cudnnSetCTCLossDescriptor(cudnnCTCLossDescriptor_t d, int type);
cudnnCTCLoss_fn cudnnCTCLoss;
cudnnCTCLoss_v8_fn cudnnCTCLoss_v8;
cudnnGetCTCLossWorkspaceSize_fn cudnnGetCTCLossWorkspaceSize;
cudnnGetCTCLossWorkspaceSize_v8_fn cudnnGetCTCLossWorkspaceSize_v8;
cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t *d);
cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d, int mode, int nan,
                                           double coef);
cudnnConvolutionBiasActivationForward_fn cudnnConvolutionBiasActivationForward;
cudnnStatus_t cudnnCreatePoolingDescriptor(cudnnPoolingDescriptor_t *d);
cudnnStatus_t cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t d, int mode, int nan, int wh,
                                          int ww, int ph, int pw, int sh, int sw);
cudnnPoolingForward_fn cudnnPoolingForward;
cudnnStatus_t cudnnCreateSpatialTransformerDescriptor(cudnnSpatialTransformerDescriptor_t *d);
cudnnSetSpatialTransformerNdDescriptor_fn cudnnSetSpatialTransformerNdDescriptor;
cudnnSpatialTfGridGeneratorForward_fn cudnnSpatialTfGridGeneratorForward;
cudnnSpatialTfGridGeneratorBackward_fn cudnnSpatialTfGridGeneratorBackward;
cudnnSpatialTfSamplerForward_fn cudnnSpatialTfSamplerForward;
cudnnSpatialTfSamplerBackward_fn cudnnSpatialTfSamplerBackward;

/* A 4-d tensor of the fake cuDNN read through cudnnGetTensorNdDescriptor
 * (cudnn_train.c, cudnn_ops.c): its dims, its strides, and the offset of
 * element (n, c, h, w) in elements. */
struct t4 {
    int d[4], s[4];
};

static inline struct t4 t4_of(cudnnTensorDescriptor_t desc)
{
    struct t4 t = { { 1, 1, 1, 1 }, { 1, 1, 1, 1 } };
    int type, nb;
    cudnnGetTensorNdDescriptor(desc, 4, &type, &nb, t.d, t.s);
    return t;
}

static inline int64_t t4_off(const struct t4 *t, int n, int c, int h, int w)
{
    return (int64_t)n * t->s[0] + (int64_t)c * t->s[1] + (int64_t)h * t->s[2] +
           (int64_t)w * t->s[3];
}

/* cuDNN backend */
cudnnBackendCreateDescriptor_fn cudnnBackendCreateDescriptor;
cudnnBackendDestroyDescriptor_fn cudnnBackendDestroyDescriptor;
cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d);
cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d,
                                       cudnnBackendAttributeName_t attr,
                                       cudnnBackendAttributeType_t type, int64_t n,
                                       const void *values);
cudnnBackendGetAttribute_fn cudnnBackendGetAttribute;
cudnnBackendExecute_fn cudnnBackendExecute;

/* cuRAND */
curandCreateGenerator_fn curandCreateGenerator;
curandCreateGeneratorHost_fn curandCreateGeneratorHost;
curandSetPseudoRandomGeneratorSeed_fn curandSetPseudoRandomGeneratorSeed;
curandSetGeneratorOrdering_fn curandSetGeneratorOrdering;
curandGenerateUniform_fn curandGenerateUniform;
curandGenerateNormalDouble_fn curandGenerateNormalDouble;
curandGeneratePoisson_fn curandGeneratePoisson;
curandGeneratePoissonMethod_fn curandGeneratePoissonMethod;
curandGenerateBinomial_fn curandGenerateBinomial;
curandGenerateBinomialMethod_fn curandGenerateBinomialMethod;
curandGenerateSeeds_fn curandGenerateSeeds;

/* Driver */
cuInit_fn cuInit;
cuMemcpyDtoH_v2_fn cuMemcpyDtoH_v2;
cuStreamSynchronize_fn cuStreamSynchronize;
cuCtxSynchronize_fn cuCtxSynchronize;
cuCtxGetCurrent_fn cuCtxGetCurrent;
cuStreamIsCapturing_fn cuStreamIsCapturing;
cuModuleLoadData_fn cuModuleLoadData;
cuModuleGetFunction_fn cuModuleGetFunction;
cuLaunchKernel_fn cuLaunchKernel;
cuMemAlloc_v2_fn cuMemAlloc_v2;
cuMemcpyDtoHAsync_v2_fn cuMemcpyDtoHAsync_v2;
cuMemHostAlloc_fn cuMemHostAlloc;
cuMemFreeHost_fn cuMemFreeHost;
cuEventCreate_fn cuEventCreate;
cuEventRecord_fn cuEventRecord;
cuEventQuery_fn cuEventQuery;
cuEventSynchronize_fn cuEventSynchronize;
cuEventDestroy_v2_fn cuEventDestroy_v2;
unsigned long long fake_cuda_kernel_launches(void); /* launches so far */
/* A counter of calls by name (cuStreamSynchronize, cuEventSynchronize...) */
unsigned long long fake_cuda_count(const char *name);

/* libcudnn_adv.so.9 (cudnn_adv.c): a vendor library looking a function up
 * itself, dlopen(lib, RTLD_LOCAL) then dlsym, as cuDNN 9 does. */
const void *fake_vendor_lookup(const char *lib, const char *name);

/* The fakes' per-process variation: a seed from the pid and the clock,
 * never the same in two runs. static: each fake library draws its own. */
static inline uint64_t fake_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline uint64_t fake_run_seed(void)
{
    static uint64_t seed;
    if (!seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t t = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec;
        seed = fake_mix((uint64_t)getpid() ^ t) | 1;
    }
    return seed;
}

/* order[0..n): 0..n-1, shuffled when `vary` (differently each run and
 * each call), else in index order. */
static inline void fake_order(int64_t *order, int64_t n, int vary)
{
    static uint64_t calls;
    for (int64_t i = 0; i < n; i++)
        order[i] = i;
    if (!vary)
        return;
    uint64_t s = fake_mix(fake_run_seed() ^ ++calls);
    for (int64_t i = n - 1; i > 0; i--) {
        s = fake_mix(s);
        int64_t j = (int64_t)(s % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

#endif
