/* The rest of a PyTorch training step's ABI, beside the GEMMs and
 * convolutions of cuda_api.h (included from there): cuBLAS level 1 and 2
 * (gemv, dot), the triangular solves and batched solvers, cublasSgemmEx,
 * the SM carveout; cuDNN BatchNorm, RNN and its dropout, CTC loss, the
 * fused convolution, the spatial transformer, pooling and the convolution
 * math type. Same rules as cuda_api.h: our declarations, NVIDIA's names,
 * checked against the real headers by tests/unit/test_cuda_abi.c.
 */
#ifndef DETSHIM_CUDA_API_TRAIN_H
#define DETSHIM_CUDA_API_TRAIN_H

#define DETSHIM_CUDA_TRAIN_ENUMS(X)                                                        \
    X(CUBLAS_SIDE_LEFT, 0) X(CUBLAS_SIDE_RIGHT, 1)                                         \
    X(CUBLAS_FILL_MODE_LOWER, 0) X(CUBLAS_FILL_MODE_UPPER, 1)                              \
    X(CUBLAS_DIAG_NON_UNIT, 0) X(CUBLAS_DIAG_UNIT, 1)                                      \
    X(CUDNN_STATUS_BAD_PARAM, 2000) X(CUDNN_STATUS_NOT_SUPPORTED, 3000)                    \
    X(CUDNN_BATCHNORM_PER_ACTIVATION, 0) X(CUDNN_BATCHNORM_SPATIAL, 1)                     \
    X(CUDNN_BATCHNORM_SPATIAL_PERSISTENT, 2)                                               \
    X(CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, 0) X(CUDNN_CTC_LOSS_ALGO_NON_DETERMINISTIC, 1)    \
    X(CUDNN_DEFAULT_MATH, 0) X(CUDNN_TENSOR_OP_MATH, 1)                                    \
    X(CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, 2) X(CUDNN_FMA_MATH, 3)                       \
    X(CUDNN_POOLING_MAX, 0) X(CUDNN_POOLING_MAX_DETERMINISTIC, 3)                          \
    X(CUDNN_FWD_MODE_INFERENCE, 0) X(CUDNN_FWD_MODE_TRAINING, 1)                           \
    X(CUDNN_WGRAD_MODE_ADD, 0) X(CUDNN_WGRAD_MODE_SET, 1)

#ifndef DETSHIM_CUDA_REAL_TYPES
#define DETSHIM_CUDA_ENUM_CONSTANT(name, value) name = (value),
enum { DETSHIM_CUDA_TRAIN_ENUMS(DETSHIM_CUDA_ENUM_CONSTANT) };
#undef DETSHIM_CUDA_ENUM_CONSTANT

typedef int cublasSideMode_t;
typedef int cublasFillMode_t;
typedef int cublasDiagType_t;
typedef struct cudnnActivationStruct *cudnnActivationDescriptor_t;
typedef struct cudnnPoolingStruct *cudnnPoolingDescriptor_t;
typedef struct cudnnSpatialTransformerStruct *cudnnSpatialTransformerDescriptor_t;
typedef struct cudnnDropoutStruct *cudnnDropoutDescriptor_t;
typedef struct cudnnRNNStruct *cudnnRNNDescriptor_t;
typedef struct cudnnRNNDataStruct *cudnnRNNDataDescriptor_t;
typedef struct cudnnCTCLossStruct *cudnnCTCLossDescriptor_t;
typedef int cudnnBatchNormMode_t;
typedef int cudnnBatchNormOps_t;
typedef int cudnnCTCLossAlgo_t;
typedef int cudnnMathType_t;
typedef int cudnnForwardMode_t;
typedef int cudnnWgradMode_t;
typedef int cudnnRNNDataLayout_t;
typedef int cudnnRNNAlgo_t;
typedef int cudnnSamplerType_t;
typedef int cudnnRNNMode_t;
typedef int cudnnRNNBiasMode_t;
typedef int cudnnDirectionMode_t;
typedef int cudnnRNNInputMode_t;
#endif

/* --- cuBLAS: gemv, dot, trsm, batched solvers, SgemmEx, carveout -------- */
#define DETSHIM_GEMV_FN(name, T, I)                                                        \
    typedef cublasStatus_t name##_fn(cublasHandle_t h, cublasOperation_t trans, I m, I n,  \
                                     const T *alpha, const T *A, I lda, const T *x,        \
                                     I incx, const T *beta, T *y, I incy);
#define DETSHIM_DOT_FN(name, T, I)                                                         \
    typedef cublasStatus_t name##_fn(cublasHandle_t h, I n, const T *x, I incx,            \
                                     const T *y, I incy, T *result);
#define DETSHIM_DOT_EX_FN(name, I)                                                         \
    typedef cublasStatus_t name##_fn(cublasHandle_t h, I n, const void *x,                 \
                                     cudaDataType xType, I incx, const void *y,            \
                                     cudaDataType yType, I incy, void *result,             \
                                     cudaDataType resultType, cudaDataType executionType);
#define DETSHIM_TRSM_FN(name, T, I)                                                        \
    typedef cublasStatus_t name##_fn(cublasHandle_t h, cublasSideMode_t side,              \
                                     cublasFillMode_t uplo, cublasOperation_t trans,       \
                                     cublasDiagType_t diag, I m, I n, const T *alpha,      \
                                     const T *A, I lda, T *B, I ldb);
#define DETSHIM_TRSM_BATCHED_FN(name, T, I)                                                \
    typedef cublasStatus_t name##_fn(cublasHandle_t h, cublasSideMode_t side,              \
                                     cublasFillMode_t uplo, cublasOperation_t trans,       \
                                     cublasDiagType_t diag, I m, I n, const T *alpha,      \
                                     const T *const A[], I lda, T *const B[], I ldb,       \
                                     I batchCount);
#define DETSHIM_GETRF_BATCHED_FN(name, T)                                                  \
    typedef cublasStatus_t name##_fn(cublasHandle_t h, int n, T *const A[], int lda,       \
                                     int *P, int *info, int batchSize);
#define DETSHIM_GETRS_BATCHED_FN(name, T)                                                  \
    typedef cublasStatus_t name##_fn(cublasHandle_t h, cublasOperation_t trans, int n,     \
                                     int nrhs, const T *const Aarray[], int lda,           \
                                     const int *devIpiv, T *const Barray[], int ldb,       \
                                     int *info, int batchSize);
#define DETSHIM_GEQRF_BATCHED_FN(name, T)                                                  \
    typedef cublasStatus_t name##_fn(cublasHandle_t h, int m, int n, T *const Aarray[],    \
                                     int lda, T *const TauArray[], int *info,              \
                                     int batchSize);
#define DETSHIM_GELS_BATCHED_FN(name, T)                                                   \
    typedef cublasStatus_t name##_fn(cublasHandle_t h, cublasOperation_t trans, int m,     \
                                     int n, int nrhs, T *const Aarray[], int lda,          \
                                     T *const Carray[], int ldc, int *info,                \
                                     int *devInfoArray, int batchSize);
/* Every type under one kind, with the _64 index form where cuBLAS has one. */
#define DETSHIM_TRAIN_FNS_64(kind, S, D, C, Z)                                             \
    kind(S, float, int) kind(S##_64, float, int64_t) kind(D, double, int)                  \
    kind(D##_64, double, int64_t) kind(C, cuComplex, int) kind(C##_64, cuComplex, int64_t) \
    kind(Z, cuDoubleComplex, int) kind(Z##_64, cuDoubleComplex, int64_t)
#define DETSHIM_TRAIN_FNS(kind, S, D, C, Z)                                                \
    kind(S, float) kind(D, double) kind(C, cuComplex) kind(Z, cuDoubleComplex)
DETSHIM_TRAIN_FNS_64(DETSHIM_GEMV_FN, cublasSgemv_v2, cublasDgemv_v2, cublasCgemv_v2,
                     cublasZgemv_v2)
DETSHIM_DOT_FN(cublasSdot_v2, float, int)
DETSHIM_DOT_FN(cublasSdot_v2_64, float, int64_t)
DETSHIM_DOT_FN(cublasDdot_v2, double, int)
DETSHIM_DOT_FN(cublasDdot_v2_64, double, int64_t)
DETSHIM_DOT_FN(cublasCdotu_v2, cuComplex, int)
DETSHIM_DOT_FN(cublasCdotu_v2_64, cuComplex, int64_t)
DETSHIM_DOT_FN(cublasCdotc_v2, cuComplex, int)
DETSHIM_DOT_FN(cublasCdotc_v2_64, cuComplex, int64_t)
DETSHIM_DOT_FN(cublasZdotu_v2, cuDoubleComplex, int)
DETSHIM_DOT_FN(cublasZdotu_v2_64, cuDoubleComplex, int64_t)
DETSHIM_DOT_FN(cublasZdotc_v2, cuDoubleComplex, int)
DETSHIM_DOT_FN(cublasZdotc_v2_64, cuDoubleComplex, int64_t)
DETSHIM_DOT_EX_FN(cublasDotEx, int)
DETSHIM_DOT_EX_FN(cublasDotEx_64, int64_t)
DETSHIM_TRAIN_FNS_64(DETSHIM_TRSM_FN, cublasStrsm_v2, cublasDtrsm_v2, cublasCtrsm_v2,
                     cublasZtrsm_v2)
DETSHIM_TRAIN_FNS_64(DETSHIM_TRSM_BATCHED_FN, cublasStrsmBatched, cublasDtrsmBatched,
                     cublasCtrsmBatched, cublasZtrsmBatched)
DETSHIM_TRAIN_FNS(DETSHIM_GETRF_BATCHED_FN, cublasSgetrfBatched, cublasDgetrfBatched,
                  cublasCgetrfBatched, cublasZgetrfBatched)
DETSHIM_TRAIN_FNS(DETSHIM_GETRS_BATCHED_FN, cublasSgetrsBatched, cublasDgetrsBatched,
                  cublasCgetrsBatched, cublasZgetrsBatched)
DETSHIM_TRAIN_FNS(DETSHIM_GEQRF_BATCHED_FN, cublasSgeqrfBatched, cublasDgeqrfBatched,
                  cublasCgeqrfBatched, cublasZgeqrfBatched)
DETSHIM_TRAIN_FNS(DETSHIM_GELS_BATCHED_FN, cublasSgelsBatched, cublasDgelsBatched,
                  cublasCgelsBatched, cublasZgelsBatched)
typedef cublasStatus_t cublasSgemmEx_fn(cublasHandle_t h, cublasOperation_t transa,
                                        cublasOperation_t transb, int m, int n, int k,
                                        const float *alpha, const void *A, cudaDataType Atype,
                                        int lda, const void *B, cudaDataType Btype, int ldb,
                                        const float *beta, void *C, cudaDataType Ctype,
                                        int ldc);
typedef cublasStatus_t cublasSetSmCountTarget_fn(cublasHandle_t h, int smCountTarget);

/* --- cuDNN: BatchNorm ---------------------------------------------------- */
typedef cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx_fn(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const void *alpha, const void *beta, const cudnnTensorDescriptor_t xDesc, const void *xData,
    const cudnnTensorDescriptor_t zDesc, const void *zData, const cudnnTensorDescriptor_t yDesc,
    void *yData, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
    void *resultRunningVariance, double epsilon, void *resultSaveMean,
    void *resultSaveInvVariance, cudnnActivationDescriptor_t activationDesc, void *workspace,
    size_t workSpaceSizeInBytes, void *reserveSpace, size_t reserveSpaceSizeInBytes);
typedef cudnnStatus_t cudnnBatchNormalizationBackwardEx_fn(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const void *alphaDataDiff, const void *betaDataDiff, const void *alphaParamDiff,
    const void *betaParamDiff, const cudnnTensorDescriptor_t xDesc, const void *xData,
    const cudnnTensorDescriptor_t yDesc, const void *yData, const cudnnTensorDescriptor_t dyDesc,
    const void *dyData, const cudnnTensorDescriptor_t dzDesc, void *dzData,
    const cudnnTensorDescriptor_t dxDesc, void *dxData,
    const cudnnTensorDescriptor_t dBnScaleBiasDesc, const void *bnScaleData,
    const void *bnBiasData, void *dBnScaleData, void *dBnBiasData, double epsilon,
    const void *savedMean, const void *savedInvVariance,
    cudnnActivationDescriptor_t activationDesc, void *workSpace, size_t workSpaceSizeInBytes,
    void *reserveSpace, size_t reserveSpaceSizeInBytes);
typedef cudnnStatus_t cudnnBatchNormalizationForwardInference_fn(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc,
    void *y, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, const void *estimatedMean, const void *estimatedVariance,
    double epsilon);

typedef cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize_fn(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t zDesc,
    const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t bnScaleBiasMeanVarDesc,
    const cudnnActivationDescriptor_t activationDesc, size_t *sizeInBytes);
typedef cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize_fn(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t yDesc,
    const cudnnTensorDescriptor_t dyDesc, const cudnnTensorDescriptor_t dzDesc,
    const cudnnTensorDescriptor_t dxDesc, const cudnnTensorDescriptor_t dBnScaleBiasDesc,
    const cudnnActivationDescriptor_t activationDesc, size_t *sizeInBytes);
typedef cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize_fn(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const cudnnActivationDescriptor_t activationDesc, const cudnnTensorDescriptor_t xDesc,
    size_t *sizeInBytes);

/* --- cuDNN: RNN and its dropout ------------------------------------------ */
typedef cudnnStatus_t cudnnRNNForward_fn(
    cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnForwardMode_t fwdMode,
    const int32_t devSeqLengths[], cudnnRNNDataDescriptor_t xDesc, const void *x,
    cudnnRNNDataDescriptor_t yDesc, void *y, cudnnTensorDescriptor_t hDesc, const void *hx,
    void *hy, cudnnTensorDescriptor_t cDesc, const void *cx, void *cy, size_t weightSpaceSize,
    const void *weightSpace, size_t workSpaceSize, void *workSpace, size_t reserveSpaceSize,
    void *reserveSpace);
typedef cudnnStatus_t cudnnRNNBackwardData_v8_fn(
    cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, const int32_t devSeqLengths[],
    cudnnRNNDataDescriptor_t yDesc, const void *y, const void *dy,
    cudnnRNNDataDescriptor_t xDesc, void *dx, cudnnTensorDescriptor_t hDesc, const void *hx,
    const void *dhy, void *dhx, cudnnTensorDescriptor_t cDesc, const void *cx, const void *dcy,
    void *dcx, size_t weightSpaceSize, const void *weightSpace, size_t workSpaceSize,
    void *workSpace, size_t reserveSpaceSize, void *reserveSpace);
typedef cudnnStatus_t cudnnRNNBackwardWeights_v8_fn(
    cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnWgradMode_t addGrad,
    const int32_t devSeqLengths[], cudnnRNNDataDescriptor_t xDesc, const void *x,
    cudnnTensorDescriptor_t hDesc, const void *hx, cudnnRNNDataDescriptor_t yDesc,
    const void *y, size_t weightSpaceSize, void *dweightSpace, size_t workSpaceSize,
    void *workSpace, size_t reserveSpaceSize, void *reserveSpace);
typedef cudnnStatus_t cudnnGetRNNDataDescriptor_fn(cudnnRNNDataDescriptor_t rnnDataDesc,
                                                   cudnnDataType_t *dataType,
                                                   cudnnRNNDataLayout_t *layout,
                                                   int *maxSeqLength, int *batchSize,
                                                   int *vectorSize, int arrayLengthRequested,
                                                   int seqLengthArray[], void *paddingFill);
typedef cudnnStatus_t cudnnGetRNNDescriptor_v8_fn(
    cudnnRNNDescriptor_t rnnDesc, cudnnRNNAlgo_t *algo, cudnnRNNMode_t *cellMode,
    cudnnRNNBiasMode_t *biasMode, cudnnDirectionMode_t *dirMode, cudnnRNNInputMode_t *inputMode,
    cudnnDataType_t *dataType, cudnnDataType_t *mathPrec, cudnnMathType_t *mathType,
    int32_t *inputSize, int32_t *hiddenSize, int32_t *projSize, int32_t *numLayers,
    cudnnDropoutDescriptor_t *dropoutDesc, uint32_t *auxFlags);
typedef cudnnStatus_t cudnnSetDropoutDescriptor_fn(cudnnDropoutDescriptor_t dropoutDesc,
                                                   cudnnHandle_t handle, float dropout,
                                                   void *states, size_t stateSizeInBytes,
                                                   unsigned long long seed);
typedef cudnnSetDropoutDescriptor_fn cudnnRestoreDropoutDescriptor_fn;

/* --- cuDNN: CTC, fused convolution, spatial transformer, pooling ---------- */
typedef cudnnStatus_t cudnnCTCLoss_fn(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t probsDesc, const void *probs,
    const int hostLabels[], const int hostLabelLengths[], const int hostInputLengths[],
    void *costs, const cudnnTensorDescriptor_t gradientsDesc, void *gradients,
    cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcLossDesc, void *workspace,
    size_t workSpaceSizeInBytes);
typedef cudnnStatus_t cudnnCTCLoss_v8_fn(
    cudnnHandle_t handle, cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcLossDesc,
    const cudnnTensorDescriptor_t probsDesc, const void *probs, const int labels[],
    const int labelLengths[], const int inputLengths[], void *costs,
    const cudnnTensorDescriptor_t gradientsDesc, void *gradients, size_t workSpaceSizeInBytes,
    void *workspace);
typedef cudnnStatus_t cudnnGetCTCLossWorkspaceSize_fn(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t probsDesc,
    const cudnnTensorDescriptor_t gradientsDesc, const int *labels, const int *labelLengths,
    const int *inputLengths, cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcLossDesc,
    size_t *sizeInBytes);
typedef cudnnStatus_t cudnnGetCTCLossWorkspaceSize_v8_fn(
    cudnnHandle_t handle, cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcLossDesc,
    const cudnnTensorDescriptor_t probsDesc, const cudnnTensorDescriptor_t gradientsDesc,
    size_t *sizeInBytes);
typedef cudnnStatus_t cudnnSetSpatialTransformerNdDescriptor_fn(
    cudnnSpatialTransformerDescriptor_t stDesc, cudnnSamplerType_t samplerType,
    cudnnDataType_t dataType, const int nbDims, const int dimA[]);
typedef cudnnStatus_t cudnnConvolutionBiasActivationForward_fn(
    cudnnHandle_t handle, const void *alpha1, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnFilterDescriptor_t wDesc, const void *w,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo,
    void *workSpace, size_t workSpaceSizeInBytes, const void *alpha2,
    const cudnnTensorDescriptor_t zDesc, const void *z, const cudnnTensorDescriptor_t biasDesc,
    const void *bias, const cudnnActivationDescriptor_t activationDesc,
    const cudnnTensorDescriptor_t yDesc, void *y);
typedef cudnnStatus_t cudnnSpatialTfGridGeneratorForward_fn(
    cudnnHandle_t handle, const cudnnSpatialTransformerDescriptor_t stDesc, const void *theta,
    void *grid);
typedef cudnnStatus_t cudnnSpatialTfGridGeneratorBackward_fn(
    cudnnHandle_t handle, const cudnnSpatialTransformerDescriptor_t stDesc, const void *dgrid,
    void *dtheta);
typedef cudnnStatus_t cudnnSpatialTfSamplerForward_fn(
    cudnnHandle_t handle, cudnnSpatialTransformerDescriptor_t stDesc, const void *alpha,
    const cudnnTensorDescriptor_t xDesc, const void *x, const void *grid, const void *beta,
    cudnnTensorDescriptor_t yDesc, void *y);
typedef cudnnStatus_t cudnnSpatialTfSamplerBackward_fn(
    cudnnHandle_t handle, cudnnSpatialTransformerDescriptor_t stDesc, const void *alpha,
    const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
    const cudnnTensorDescriptor_t dxDesc, void *dx, const void *alphaDgrid,
    const cudnnTensorDescriptor_t dyDesc, const void *dy, const void *grid,
    const void *betaDgrid, void *dgrid);
typedef cudnnStatus_t cudnnPoolingForward_fn(cudnnHandle_t handle,
                                             const cudnnPoolingDescriptor_t poolingDesc,
                                             const void *alpha,
                                             const cudnnTensorDescriptor_t xDesc,
                                             const void *x, const void *beta,
                                             const cudnnTensorDescriptor_t yDesc, void *y);
typedef cudnnStatus_t cudnnSetConvolutionMathType_fn(cudnnConvolutionDescriptor_t convDesc,
                                                     cudnnMathType_t mathType);

#endif
