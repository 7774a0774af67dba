/* The slice of the CUDA libraries' ABI the cuda family (shim/cuda) uses:
 * opaque handle types, the enum values it reads or sets, the structs it
 * inspects, and one function type per symbol it intercepts or calls. Our
 * own declarations, so libdetshim builds without the CUDA toolkit; the
 * names are NVIDIA's, so the code reads like the documentation.
 * tests/unit/test_cuda_abi.c includes the real headers, defines
 * DETSHIM_CUDA_REAL_TYPES, and checks every value, layout and function
 * type below against them. Also used by the fake libraries in
 * tests/fakes/cuda and by tests/programs/gpu_prog.c.
 */
#ifndef DETSHIM_CUDA_API_H
#define DETSHIM_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

/* Every enum value used, as X(name, value): constants in a normal build,
 * static assertions against the real headers in the ABI test. */
#define DETSHIM_CUDA_ENUMS(X)                                                              \
    X(CUDA_SUCCESS, 0) X(CUDA_ERROR_NOT_READY, 600) X(CU_EVENT_DISABLE_TIMING, 2)          \
    X(CU_MEMHOSTALLOC_PORTABLE, 1)                                                         \
    X(CU_STREAM_CAPTURE_STATUS_NONE, 0) X(CU_STREAM_CAPTURE_STATUS_ACTIVE, 1)              \
    X(CUDA_R_32F, 0) X(CUDA_R_64F, 1) X(CUDA_R_16F, 2) X(CUDA_R_8I, 3) X(CUDA_C_32F, 4)    \
    X(CUDA_C_64F, 5) X(CUDA_C_16F, 6) X(CUDA_R_8U, 8) X(CUDA_R_32I, 10) X(CUDA_R_16BF, 14) \
    X(CUDA_R_8F_E4M3, 28) X(CUDA_R_8F_E5M2, 29) X(CUDA_C_8I, 7) X(CUDA_C_32I, 11)          \
    X(CUDA_R_32U, 12) X(CUDA_C_16BF, 15)                                                   \
    X(CUBLAS_STATUS_SUCCESS, 0) X(CUBLAS_STATUS_NOT_INITIALIZED, 1)                        \
    X(CUBLAS_STATUS_INVALID_VALUE, 7) X(CUBLAS_STATUS_NOT_SUPPORTED, 15)                   \
    X(CUBLAS_OP_N, 0) X(CUBLAS_OP_T, 1) X(CUBLAS_OP_C, 2)                                  \
    X(CUBLAS_POINTER_MODE_HOST, 0) X(CUBLAS_POINTER_MODE_DEVICE, 1)                        \
    X(CUBLAS_ATOMICS_NOT_ALLOWED, 0) X(CUBLAS_ATOMICS_ALLOWED, 1)                          \
    X(CUBLAS_DEFAULT_MATH, 0) X(CUBLAS_TENSOR_OP_MATH, 1) X(CUBLAS_PEDANTIC_MATH, 2)       \
    X(CUBLAS_TF32_TENSOR_OP_MATH, 3) X(CUBLAS_FP32_EMULATED_BF16X9_MATH, 4)                \
    X(CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH, 8)                                             \
    X(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, 16)                                \
    X(CUBLAS_COMPUTE_16F, 64) X(CUBLAS_COMPUTE_16F_PEDANTIC, 65)                           \
    X(CUBLAS_COMPUTE_32F, 68) X(CUBLAS_COMPUTE_32F_PEDANTIC, 69)                           \
    X(CUBLAS_COMPUTE_64F, 70) X(CUBLAS_COMPUTE_64F_PEDANTIC, 71)                           \
    X(CUBLAS_COMPUTE_32I, 72) X(CUBLAS_COMPUTE_32I_PEDANTIC, 73)                           \
    X(CUBLAS_COMPUTE_32F_FAST_16F, 74) X(CUBLAS_COMPUTE_32F_FAST_16BF, 75)                 \
    X(CUBLAS_COMPUTE_32F_FAST_TF32, 77)                                                    \
    X(CUBLAS_GEMM_DEFAULT, -1) X(CUBLAS_GEMM_DEFAULT_TENSOR_OP, 99)                        \
    X(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, 1)                                         \
    X(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, 3)                                       \
    X(CUBLASLT_REDUCTION_SCHEME_NONE, 0) X(CUBLASLT_REDUCTION_SCHEME_MASK, 7)              \
    X(CUBLASLT_ALGO_CONFIG_ID, 0) X(CUBLASLT_ALGO_CONFIG_TILE_ID, 1)                       \
    X(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 2) X(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, 3)      \
    X(CUBLASLT_ALGO_CONFIG_STAGES_ID, 6) X(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, 7)         \
    X(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, 8)                                            \
    X(CUBLASLT_MATRIX_LAYOUT_TYPE, 0) X(CUBLASLT_MATRIX_LAYOUT_ORDER, 1)                   \
    X(CUBLASLT_MATRIX_LAYOUT_ROWS, 2) X(CUBLASLT_MATRIX_LAYOUT_COLS, 3)                    \
    X(CUBLASLT_MATRIX_LAYOUT_LD, 4) X(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 5)               \
    X(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 6)                                      \
    X(CUBLASLT_ORDER_COL, 0) X(CUBLASLT_ORDER_ROW, 1)                                      \
    X(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, 0) X(CUBLASLT_MATMUL_DESC_SCALE_TYPE, 1)          \
    X(CUBLASLT_MATMUL_DESC_POINTER_MODE, 2)                                                \
    X(CUBLASLT_MATMUL_DESC_TRANSA, 3) X(CUBLASLT_MATMUL_DESC_TRANSB, 4)                    \
    X(CUBLASLT_MATMUL_DESC_EPILOGUE, 7) X(CUBLASLT_MATMUL_DESC_BIAS_POINTER, 8)            \
    X(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, 10)                                          \
    X(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, 11)                                       \
    X(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, 12)                                            \
    X(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, 13)                                  \
    X(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 17) X(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, 18) \
    X(CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, 19) X(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, 20) \
    X(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, 21)                                             \
    X(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, 22)                                     \
    X(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, 26)                                             \
    X(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, 31) X(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, 32)      \
    X(CUBLASLT_MATMUL_DESC_C_SCALE_MODE, 33) X(CUBLASLT_MATMUL_DESC_D_SCALE_MODE, 34)      \
    X(CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, 0)                                          \
    X(CUBLASLT_EPILOGUE_DEFAULT, 1) X(CUBLASLT_EPILOGUE_RELU, 2)                           \
    X(CUBLASLT_EPILOGUE_RELU_AUX, 130) X(CUBLASLT_EPILOGUE_BIAS, 4)                        \
    X(CUBLASLT_EPILOGUE_RELU_BIAS, 6) X(CUBLASLT_EPILOGUE_RELU_AUX_BIAS, 134)              \
    X(CUBLASLT_EPILOGUE_DRELU, 136) X(CUBLASLT_EPILOGUE_DRELU_BGRAD, 152)                  \
    X(CUBLASLT_EPILOGUE_GELU, 32) X(CUBLASLT_EPILOGUE_GELU_AUX, 160)                       \
    X(CUBLASLT_EPILOGUE_GELU_BIAS, 36) X(CUBLASLT_EPILOGUE_GELU_AUX_BIAS, 164)             \
    X(CUBLASLT_EPILOGUE_DGELU, 192) X(CUBLASLT_EPILOGUE_DGELU_BGRAD, 208)                  \
    X(CUBLASLT_EPILOGUE_BGRADA, 256) X(CUBLASLT_EPILOGUE_BGRADB, 512)                      \
    X(CUBLASLT_POINTER_MODE_HOST, 0)                                                       \
    X(CUDNN_STATUS_SUCCESS, 0) X(CUDNN_NON_DETERMINISTIC, 0) X(CUDNN_DETERMINISTIC, 1)     \
    X(CUDNN_DATA_FLOAT, 0) X(CUDNN_DATA_DOUBLE, 1) X(CUDNN_DATA_HALF, 2)                   \
    X(CUDNN_DATA_INT8, 3) X(CUDNN_DATA_INT32, 4) X(CUDNN_DATA_UINT8, 6)                    \
    X(CUDNN_DATA_BFLOAT16, 9) X(CUDNN_DATA_INT64, 10) X(CUDNN_DATA_FP8_E4M3, 12)           \
    X(CUDNN_DATA_FP8_E5M2, 13) X(CUDNN_DATA_FP8_E8M0, 15) X(CUDNN_DATA_UINT32, 19)         \
    X(CUDNN_DATA_COMPLEX_FP32, 20) X(CUDNN_DATA_COMPLEX_FP64, 21)                          \
    X(CUDNN_ATTR_ENGINEHEUR_RESULTS, 202) X(CUDNN_ATTR_ENGINECFG_ENGINE, 300)              \
    X(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, 401) X(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, 1301) \
    X(CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, 1303)                                              \
    X(CUDNN_TYPE_INT64, 3) X(CUDNN_TYPE_NUMERICAL_NOTE, 11)                                \
    X(CUDNN_TYPE_BACKEND_DESCRIPTOR, 15)                                                   \
    X(CUDNN_BACKEND_ENGINE_DESCRIPTOR, 2) X(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, 3)         \
    X(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, 4) X(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, 5) \
    X(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, 16)                                           \
    X(CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC, 4)                                            \
    X(CURAND_STATUS_SUCCESS, 0)                                                            \
    X(CURAND_RNG_PSEUDO_DEFAULT, 100) X(CURAND_RNG_PSEUDO_XORWOW, 101)                     \
    X(CURAND_RNG_PSEUDO_PHILOX4_32_10, 161) X(CURAND_RNG_QUASI_DEFAULT, 200)               \
    X(CURAND_ORDERING_PSEUDO_BEST, 100) X(CURAND_ORDERING_PSEUDO_DEFAULT, 101)             \
    X(CURAND_ORDERING_PSEUDO_SEEDED, 102) X(CURAND_ORDERING_PSEUDO_LEGACY, 103)            \
    X(CURAND_ORDERING_PSEUDO_DYNAMIC, 104) X(CURAND_CHOOSE_BEST, 0)

/* The element types cuDNN's legacy perf results and cuBLASLt's heuristic
 * results share; named apart from NVIDIA's so the ABI test can compare. */
struct detshim_cudnn_algo_perf {
    int algo;
    int status;
    float time;
    size_t memory;
    int determinism;
    int mathType;
    int reserved[3];
};
struct detshim_lt_algo {
    uint64_t data[8];
};
struct detshim_lt_heuristic {
    struct detshim_lt_algo algo;
    size_t workspaceSize;
    int state;
    float wavesCount;
    int reserved[4];
};

#ifndef DETSHIM_CUDA_REAL_TYPES
#define DETSHIM_CUDA_ENUM_CONSTANT(name, value) name = (value),
enum { DETSHIM_CUDA_ENUMS(DETSHIM_CUDA_ENUM_CONSTANT) };
#undef DETSHIM_CUDA_ENUM_CONSTANT

/* Enums travel as int: every one here is 4 bytes (the ABI test checks). */
typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct CUstream_st *CUstream;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUevent_st *CUevent;
typedef int CUstreamCaptureStatus;
typedef struct CUstream_st *cudaStream_t;
typedef int cudaDataType;
typedef struct { unsigned short x; } __half;
typedef struct { float x, y; } __attribute__((aligned(8))) cuComplex;
typedef struct { double x, y; } __attribute__((aligned(16))) cuDoubleComplex;

typedef struct cublasContext *cublasHandle_t;
typedef int cublasStatus_t;
typedef int cublasOperation_t;
typedef int cublasPointerMode_t;
typedef int cublasAtomicsMode_t;
typedef int cublasMath_t;
typedef int cublasComputeType_t;
typedef int cublasGemmAlgo_t;

typedef struct cublasLtContext *cublasLtHandle_t;
typedef struct { uint64_t data[32]; } cublasLtMatmulDescOpaque_t;
typedef cublasLtMatmulDescOpaque_t *cublasLtMatmulDesc_t;
typedef struct { uint64_t data[8]; } cublasLtMatrixLayoutOpaque_t;
typedef cublasLtMatrixLayoutOpaque_t *cublasLtMatrixLayout_t;
typedef struct { uint64_t data[8]; } cublasLtMatmulPreferenceOpaque_t;
typedef cublasLtMatmulPreferenceOpaque_t *cublasLtMatmulPreference_t;
typedef struct detshim_lt_algo cublasLtMatmulAlgo_t;
typedef struct detshim_lt_heuristic cublasLtMatmulHeuristicResult_t;
typedef int cublasLtMatmulPreferenceAttributes_t;
typedef int cublasLtMatrixLayoutAttribute_t;
typedef int cublasLtMatmulDescAttributes_t;
typedef int cublasLtMatmulAlgoConfigAttributes_t;
typedef int cublasLtEpilogue_t;

typedef struct cudnnContext *cudnnHandle_t;
typedef struct cudnnTensorStruct *cudnnTensorDescriptor_t;
typedef struct cudnnFilterStruct *cudnnFilterDescriptor_t;
typedef struct cudnnConvolutionStruct *cudnnConvolutionDescriptor_t;
typedef int cudnnStatus_t;
typedef int cudnnDataType_t;
typedef void *cudnnBackendDescriptor_t;
typedef int cudnnBackendAttributeName_t;
typedef int cudnnBackendAttributeType_t;
typedef int cudnnBackendDescriptorType_t;
typedef int cudnnBackendNumericalNote_t;
typedef int cudnnConvolutionFwdAlgo_t;
typedef int cudnnConvolutionBwdDataAlgo_t;
typedef int cudnnConvolutionBwdFilterAlgo_t;
typedef struct detshim_cudnn_algo_perf cudnnConvolutionFwdAlgoPerf_t;
typedef struct detshim_cudnn_algo_perf cudnnConvolutionBwdDataAlgoPerf_t;
typedef struct detshim_cudnn_algo_perf cudnnConvolutionBwdFilterAlgoPerf_t;

typedef struct curandGenerator_st *curandGenerator_t;
typedef int curandStatus_t;
typedef int curandRngType_t;
typedef int curandOrdering_t;
typedef int curandMethod_t;
#endif

/* --- Driver API (libcuda.so.1), called by devdigest.c ------------------- */
typedef CUresult cuInit_fn(unsigned int flags);
typedef CUresult cuMemcpyDtoH_v2_fn(void *dst, CUdeviceptr src, size_t bytes);
typedef CUresult cuStreamSynchronize_fn(CUstream stream);
typedef CUresult cuCtxSynchronize_fn(void);
typedef CUresult cuStreamIsCapturing_fn(CUstream hStream, CUstreamCaptureStatus *captureStatus);
typedef CUresult cuCtxGetCurrent_fn(CUcontext *pctx);
typedef CUresult cuModuleLoadData_fn(CUmodule *module, const void *image);
typedef CUresult cuModuleGetFunction_fn(CUfunction *hfunc, CUmodule hmod, const char *name);
typedef CUresult cuLaunchKernel_fn(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                   unsigned int gridDimZ, unsigned int blockDimX,
                                   unsigned int blockDimY, unsigned int blockDimZ,
                                   unsigned int sharedMemBytes, CUstream hStream,
                                   void **kernelParams, void **extra);
typedef CUresult cuMemAlloc_v2_fn(CUdeviceptr *dptr, size_t bytesize);
typedef CUresult cuMemcpyDtoHAsync_v2_fn(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                         CUstream hStream);
typedef CUresult cuMemHostAlloc_fn(void **pp, size_t bytesize, unsigned int Flags);
typedef CUresult cuMemFreeHost_fn(void *p);
typedef CUresult cuEventCreate_fn(CUevent *phEvent, unsigned int Flags);
typedef CUresult cuEventRecord_fn(CUevent hEvent, CUstream hStream);
typedef CUresult cuEventQuery_fn(CUevent hEvent);
typedef CUresult cuEventSynchronize_fn(CUevent hEvent);
typedef CUresult cuEventDestroy_v2_fn(CUevent hEvent);

/* --- cuBLAS (libcublas.so.13) ------------------------------------------- */
typedef cublasStatus_t cublasCreate_v2_fn(cublasHandle_t *handle);
typedef cublasStatus_t cublasSetAtomicsMode_fn(cublasHandle_t h, cublasAtomicsMode_t mode);
typedef cublasStatus_t cublasGetAtomicsMode_fn(cublasHandle_t h, cublasAtomicsMode_t *mode);
typedef cublasStatus_t cublasSetMathMode_fn(cublasHandle_t h, cublasMath_t mode);
typedef cublasStatus_t cublasGetMathMode_fn(cublasHandle_t h, cublasMath_t *mode);
typedef cublasStatus_t cublasGetPointerMode_v2_fn(cublasHandle_t h, cublasPointerMode_t *mode);
typedef cublasStatus_t cublasGetStream_v2_fn(cublasHandle_t h, cudaStream_t *stream);

/* The GEMM family's types. I is the index type: int, or int64_t for the
 * _64 entry points of cuBLAS 12 and later (strides stay long long). */
#define DETSHIM_GEMM_FN(name, T, I)                                                        \
    typedef cublasStatus_t name##_fn(cublasHandle_t h, cublasOperation_t transa,           \
                                     cublasOperation_t transb, I m, I n, I k,              \
                                     const T *alpha, const T *A, I lda, const T *B, I ldb, \
                                     const T *beta, T *C, I ldc);
#define DETSHIM_GEMM_SB_FN(name, T, I)                                                     \
    typedef cublasStatus_t name##_fn(cublasHandle_t h, cublasOperation_t transa,           \
                                     cublasOperation_t transb, I m, I n, I k,              \
                                     const T *alpha, const T *A, I lda,                    \
                                     long long int strideA, const T *B, I ldb,             \
                                     long long int strideB, const T *beta, T *C, I ldc,    \
                                     long long int strideC, I batchCount);
#define DETSHIM_GEMM_BATCHED_FN(name, T, I)                                                \
    typedef cublasStatus_t name##_fn(cublasHandle_t h, cublasOperation_t transa,           \
                                     cublasOperation_t transb, I m, I n, I k,              \
                                     const T *alpha, const T *const Aarray[], I lda,       \
                                     const T *const Barray[], I ldb, const T *beta,        \
                                     T *const Carray[], I ldc, I batchCount);
/* Each typed GEMM under both index types. */
#define DETSHIM_GEMM_FNS(kind, name, T) kind(name, T, int) kind(name##_64, T, int64_t)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_FN, cublasSgemm_v2, float)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_FN, cublasDgemm_v2, double)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_FN, cublasHgemm, __half)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_FN, cublasCgemm_v2, cuComplex)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_FN, cublasZgemm_v2, cuDoubleComplex)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_SB_FN, cublasSgemmStridedBatched, float)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_SB_FN, cublasDgemmStridedBatched, double)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_SB_FN, cublasHgemmStridedBatched, __half)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_SB_FN, cublasCgemmStridedBatched, cuComplex)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_SB_FN, cublasZgemmStridedBatched, cuDoubleComplex)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_BATCHED_FN, cublasSgemmBatched, float)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_BATCHED_FN, cublasDgemmBatched, double)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_BATCHED_FN, cublasHgemmBatched, __half)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_BATCHED_FN, cublasCgemmBatched, cuComplex)
DETSHIM_GEMM_FNS(DETSHIM_GEMM_BATCHED_FN, cublasZgemmBatched, cuDoubleComplex)
#define DETSHIM_GEMM_EX_FN(name, I)                                                        \
    typedef cublasStatus_t name##_fn(                                                      \
        cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, I m, I n,    \
        I k, const void *alpha, const void *A, cudaDataType Atype, I lda, const void *B,   \
        cudaDataType Btype, I ldb, const void *beta, void *C, cudaDataType Ctype, I ldc,   \
        cublasComputeType_t computeType, cublasGemmAlgo_t algo);
#define DETSHIM_GEMM_BATCHED_EX_FN(name, I)                                                \
    typedef cublasStatus_t name##_fn(                                                      \
        cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, I m, I n,    \
        I k, const void *alpha, const void *const Aarray[], cudaDataType Atype, I lda,     \
        const void *const Barray[], cudaDataType Btype, I ldb, const void *beta,           \
        void *const Carray[], cudaDataType Ctype, I ldc, I batchCount,                     \
        cublasComputeType_t computeType, cublasGemmAlgo_t algo);
#define DETSHIM_GEMM_SB_EX_FN(name, I)                                                     \
    typedef cublasStatus_t name##_fn(                                                      \
        cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, I m, I n,    \
        I k, const void *alpha, const void *A, cudaDataType Atype, I lda,                  \
        long long int strideA, const void *B, cudaDataType Btype, I ldb,                   \
        long long int strideB, const void *beta, void *C, cudaDataType Ctype, I ldc,       \
        long long int strideC, I batchCount, cublasComputeType_t computeType,              \
        cublasGemmAlgo_t algo);
DETSHIM_GEMM_EX_FN(cublasGemmEx, int)
DETSHIM_GEMM_EX_FN(cublasGemmEx_64, int64_t)
DETSHIM_GEMM_BATCHED_EX_FN(cublasGemmBatchedEx, int)
DETSHIM_GEMM_BATCHED_EX_FN(cublasGemmBatchedEx_64, int64_t)
DETSHIM_GEMM_SB_EX_FN(cublasGemmStridedBatchedEx, int)
DETSHIM_GEMM_SB_EX_FN(cublasGemmStridedBatchedEx_64, int64_t)

/* --- cuBLASLt (libcublasLt.so.13) --------------------------------------- */
typedef cublasStatus_t cublasLtMatmulPreferenceSetAttribute_fn(
    cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
    size_t sizeInBytes);
typedef cublasStatus_t cublasLtMatmulPreferenceCreate_fn(cublasLtMatmulPreference_t *pref);
typedef cublasStatus_t cublasLtMatmulPreferenceDestroy_fn(cublasLtMatmulPreference_t pref);
typedef cublasStatus_t cublasLtMatmulAlgoGetHeuristic_fn(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
    cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc,
    cublasLtMatrixLayout_t Ddesc, cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int *returnAlgoCount);
typedef cublasStatus_t cublasLtMatmul_fn(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void *alpha,
    const void *A, cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
    const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
    size_t workspaceSizeInBytes, cudaStream_t stream);
typedef cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute_fn(
    const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t attr, void *buf,
    size_t sizeInBytes, size_t *sizeWritten);
typedef cublasStatus_t cublasLtMatrixLayoutGetAttribute_fn(cublasLtMatrixLayout_t matLayout,
                                                           cublasLtMatrixLayoutAttribute_t attr,
                                                           void *buf, size_t sizeInBytes,
                                                           size_t *sizeWritten);
typedef cublasStatus_t cublasLtMatmulDescGetAttribute_fn(cublasLtMatmulDesc_t matmulDesc,
                                                         cublasLtMatmulDescAttributes_t attr,
                                                         void *buf, size_t sizeInBytes,
                                                         size_t *sizeWritten);

/* --- cuDNN legacy API (libcudnn.so.9) ----------------------------------- */
typedef cudnnStatus_t cudnnGetStream_fn(cudnnHandle_t handle, cudaStream_t *streamId);
typedef cudnnStatus_t cudnnGetTensorSizeInBytes_fn(const cudnnTensorDescriptor_t tensorDesc,
                                                   size_t *size);
typedef cudnnStatus_t cudnnGetTensorNdDescriptor_fn(const cudnnTensorDescriptor_t tensorDesc,
                                                    int nbDimsRequested,
                                                    cudnnDataType_t *dataType, int *nbDims,
                                                    int dimA[], int strideA[]);
typedef cudnnStatus_t cudnnGetFilterSizeInBytes_fn(const cudnnFilterDescriptor_t filterDesc,
                                                   size_t *size);
/* Find and Get_v7 share one shape per direction: four descriptors in, a
 * perf list out. */
#define DETSHIM_CUDNN_ALGO_FN(name, D1, D2, D4, Perf)                                      \
    typedef cudnnStatus_t name##_fn(cudnnHandle_t handle, const D1 d1, const D2 d2,        \
                                    const cudnnConvolutionDescriptor_t convDesc,           \
                                    const D4 d4, const int requestedAlgoCount,             \
                                    int *returnedAlgoCount, Perf *perfResults);
DETSHIM_CUDNN_ALGO_FN(cudnnFindConvolutionForwardAlgorithm, cudnnTensorDescriptor_t,
                      cudnnFilterDescriptor_t, cudnnTensorDescriptor_t,
                      cudnnConvolutionFwdAlgoPerf_t)
DETSHIM_CUDNN_ALGO_FN(cudnnGetConvolutionForwardAlgorithm_v7, cudnnTensorDescriptor_t,
                      cudnnFilterDescriptor_t, cudnnTensorDescriptor_t,
                      cudnnConvolutionFwdAlgoPerf_t)
DETSHIM_CUDNN_ALGO_FN(cudnnFindConvolutionBackwardDataAlgorithm, cudnnFilterDescriptor_t,
                      cudnnTensorDescriptor_t, cudnnTensorDescriptor_t,
                      cudnnConvolutionBwdDataAlgoPerf_t)
DETSHIM_CUDNN_ALGO_FN(cudnnGetConvolutionBackwardDataAlgorithm_v7, cudnnFilterDescriptor_t,
                      cudnnTensorDescriptor_t, cudnnTensorDescriptor_t,
                      cudnnConvolutionBwdDataAlgoPerf_t)
DETSHIM_CUDNN_ALGO_FN(cudnnFindConvolutionBackwardFilterAlgorithm, cudnnTensorDescriptor_t,
                      cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
                      cudnnConvolutionBwdFilterAlgoPerf_t)
DETSHIM_CUDNN_ALGO_FN(cudnnGetConvolutionBackwardFilterAlgorithm_v7, cudnnTensorDescriptor_t,
                      cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
                      cudnnConvolutionBwdFilterAlgoPerf_t)
/* The Find*Ex forms run the candidates on the caller's buffers. */
#define DETSHIM_CUDNN_ALGO_EX_FN(name, D1, D2, D4, Perf)                                   \
    typedef cudnnStatus_t name##_fn(cudnnHandle_t handle, const D1 d1, const void *p1,     \
                                    const D2 d2, const void *p2,                           \
                                    const cudnnConvolutionDescriptor_t convDesc,           \
                                    const D4 d4, void *p4, const int requestedAlgoCount,   \
                                    int *returnedAlgoCount, Perf *perfResults,             \
                                    void *workSpace, size_t workSpaceSizeInBytes);
DETSHIM_CUDNN_ALGO_EX_FN(cudnnFindConvolutionForwardAlgorithmEx, cudnnTensorDescriptor_t,
                         cudnnFilterDescriptor_t, cudnnTensorDescriptor_t,
                         cudnnConvolutionFwdAlgoPerf_t)
DETSHIM_CUDNN_ALGO_EX_FN(cudnnFindConvolutionBackwardDataAlgorithmEx, cudnnFilterDescriptor_t,
                         cudnnTensorDescriptor_t, cudnnTensorDescriptor_t,
                         cudnnConvolutionBwdDataAlgoPerf_t)
DETSHIM_CUDNN_ALGO_EX_FN(cudnnFindConvolutionBackwardFilterAlgorithmEx, cudnnTensorDescriptor_t,
                         cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
                         cudnnConvolutionBwdFilterAlgoPerf_t)
typedef cudnnStatus_t cudnnConvolutionForward_fn(
    cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnFilterDescriptor_t wDesc, const void *w,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo,
    void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
    const cudnnTensorDescriptor_t yDesc, void *y);
typedef cudnnStatus_t cudnnConvolutionBackwardData_fn(
    cudnnHandle_t handle, const void *alpha, const cudnnFilterDescriptor_t wDesc, const void *w,
    const cudnnTensorDescriptor_t dyDesc, const void *dy,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionBwdDataAlgo_t algo,
    void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
    const cudnnTensorDescriptor_t dxDesc, void *dx);
typedef cudnnStatus_t cudnnConvolutionBackwardFilter_fn(
    cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t dyDesc, const void *dy,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionBwdFilterAlgo_t algo,
    void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
    const cudnnFilterDescriptor_t dwDesc, void *dw);

/* --- cuDNN backend (graph) API (libcudnn.so.9) ------------------------ */
typedef cudnnStatus_t cudnnBackendCreateDescriptor_fn(cudnnBackendDescriptorType_t descriptorType,
                                                      cudnnBackendDescriptor_t *descriptor);
typedef cudnnStatus_t cudnnBackendDestroyDescriptor_fn(cudnnBackendDescriptor_t descriptor);
typedef cudnnStatus_t cudnnBackendGetAttribute_fn(cudnnBackendDescriptor_t const descriptor,
                                                  cudnnBackendAttributeName_t attributeName,
                                                  cudnnBackendAttributeType_t attributeType,
                                                  int64_t requestedElementCount,
                                                  int64_t *elementCount, void *arrayOfElements);
typedef cudnnStatus_t cudnnBackendFinalize_fn(cudnnBackendDescriptor_t descriptor);
typedef cudnnStatus_t cudnnBackendExecute_fn(cudnnHandle_t handle,
                                             cudnnBackendDescriptor_t executionPlan,
                                             cudnnBackendDescriptor_t variantPack);

/* --- cuRAND host API (libcurand.so.10) ---------------------------------- */
typedef curandStatus_t curandCreateGenerator_fn(curandGenerator_t *generator,
                                                curandRngType_t rng_type);
typedef curandCreateGenerator_fn curandCreateGeneratorHost_fn;
typedef curandStatus_t curandSetStream_fn(curandGenerator_t generator, cudaStream_t stream);
typedef curandStatus_t curandSetPseudoRandomGeneratorSeed_fn(curandGenerator_t generator,
                                                             unsigned long long seed);
typedef curandStatus_t curandSetGeneratorOrdering_fn(curandGenerator_t generator,
                                                     curandOrdering_t order);
typedef curandStatus_t curandGenerate_fn(curandGenerator_t generator, unsigned int *outputPtr,
                                         size_t num);
typedef curandStatus_t curandGenerateUniform_fn(curandGenerator_t generator, float *outputPtr,
                                                size_t num);
typedef curandStatus_t curandGenerateNormal_fn(curandGenerator_t generator, float *outputPtr,
                                               size_t n, float mean, float stddev);
typedef curandStatus_t curandGenerateLongLong_fn(curandGenerator_t generator,
                                                 unsigned long long *outputPtr, size_t num);
typedef curandStatus_t curandGenerateUniformDouble_fn(curandGenerator_t generator,
                                                      double *outputPtr, size_t num);
typedef curandStatus_t curandGenerateNormalDouble_fn(curandGenerator_t generator,
                                                     double *outputPtr, size_t n, double mean,
                                                     double stddev);
typedef curandGenerateNormal_fn curandGenerateLogNormal_fn;
typedef curandGenerateNormalDouble_fn curandGenerateLogNormalDouble_fn;
typedef curandStatus_t curandGeneratePoisson_fn(curandGenerator_t generator,
                                                unsigned int *outputPtr, size_t n, double lambda);
/* The *Method forms are marked "just for internal usage" in curand.h but
 * exported: a program calling them would otherwise go untraced. */
typedef curandStatus_t curandGeneratePoissonMethod_fn(curandGenerator_t generator,
                                                      unsigned int *outputPtr, size_t n,
                                                      double lambda, curandMethod_t method);
typedef curandStatus_t curandGenerateBinomial_fn(curandGenerator_t generator,
                                                 unsigned int *outputPtr, size_t num,
                                                 unsigned int n, double p);
typedef curandStatus_t curandGenerateBinomialMethod_fn(curandGenerator_t generator,
                                                       unsigned int *outputPtr, size_t num,
                                                       unsigned int n, double p,
                                                       curandMethod_t method);
typedef curandStatus_t curandGenerateSeeds_fn(curandGenerator_t generator);

#include "cuda/cuda_api_train.h"

#endif
