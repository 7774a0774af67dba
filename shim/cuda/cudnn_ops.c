/* cuDNN interceptors for the rest of PyTorch's legacy-API calls: CTC
 * loss (both forms and their workspace queries), the fused
 * convolution-bias-activation forward, pooling forward and the
 * convolution math type. cuDNN's reproducibility notes name
 * CUDNN_CTC_LOSS_ALGO_NON_DETERMINISTIC as varying run to run (atomics):
 * pinned mode runs CUDNN_CTC_LOSS_ALGO_DETERMINISTIC instead, in the
 * workspace queries too so that the workspace fits, and records the
 * override. The fused convolution's algorithm is pinned as the plain
 * forward's is (cudnn_algo.c). Pooling forward is deterministic (only the
 * max-pooling backward is not, and PyTorch does not call cuDNN's). Under
 * [cuda] tf32 = deny, a convolution math type that converts FP32 data
 * down (TENSOR_OP_MATH_ALLOW_CONVERSION) becomes TENSOR_OP_MATH; TF32 in
 * DEFAULT_MATH is already off through NVIDIA_TF32_OVERRIDE=0, and
 * FP16/BF16 tensor-core math is left alone (it is not TF32 and it is
 * deterministic). Every call is traced with its parameters and device
 * digests of what it reads and writes, as the convolutions are.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "core/policy.h"
#include "trace/digest.h"

static const char *const ctc_override = "algo 1->0 (CUDNN_CTC_LOSS_ALGO_DETERMINISTIC)";

static int ctc_algo(const struct cuda_call *c, int algo)
{
    return c->pinned && algo == CUDNN_CTC_LOSS_ALGO_NON_DETERMINISTIC
               ? CUDNN_CTC_LOSS_ALGO_DETERMINISTIC : algo;
}

/* The dims of a tensor; 0 dims when cuDNN will not say. */
static int tensor_dims(cudnnTensorDescriptor_t d, int dims[DIGEST_MAX_DIMS])
{
    static void *cache;
    cudnnGetTensorNdDescriptor_fn *get = (cudnnGetTensorNdDescriptor_fn *)(uintptr_t)cuda_sym(
        &cache, "cudnnGetTensorNdDescriptor");
    int type, nb = 0, strides[DIGEST_MAX_DIMS];
    if (!d || !get || get(d, DIGEST_MAX_DIMS, &type, &nb, dims, strides) != CUDNN_STATUS_SUCCESS)
        return 0;
    return nb;
}

/* Host int arrays (cudnnCTCLoss): digested as bytes. */
static void rec_host_ints(struct trace_rec *r, const char *name, const int *p, int64_t n)
{
    size_t bytes = p && n > 0 ? (size_t)n * sizeof(int) : 0;
    trace_rec_operand(r, name, TRACE_ROLE_IN, digest_bytes(p, bytes), (uint64_t)(bytes / 4), 4);
}

static void rec_dev_bytes(struct trace_rec *r, const char *name, int role, CUstream s,
                          const void *p, int64_t count, int elem)
{
    if (!p)
        return;
    size_t n = count > 0 ? (size_t)count * (size_t)elem : 0;
    if (cuda_rec_bytes(r, name, role, s, p, n, n / (size_t)elem, elem) != 0) {
        cuda_note_no_digest(r);
        trace_rec_operand(r, name, role, digest_bytes(NULL, 0), 0, elem);
    }
}

/* The parts of a CTC record both forms share: probs in; costs and
 * gradients out after the call. N is probs' second dim. */
static void ctc_end(const struct cuda_call *c, struct trace_rec *r, CUstream s, int asked,
                    int ran, cudnnTensorDescriptor_t probsDesc, void *costs,
                    cudnnTensorDescriptor_t gradDesc, void *grads, cudnnStatus_t st)
{
    int dims[DIGEST_MAX_DIMS];
    int nb = tensor_dims(probsDesc, dims);
    rec_dev_bytes(r, "costs", TRACE_ROLE_OUT, s, costs, nb >= 2 ? dims[1] : 0,
                  cudnn_scale_type(probsDesc) == CUDA_R_64F ? 8 : 4);
    if (grads)
        cudnn_rec_tensor(r, "gradients", TRACE_ROLE_OUT, s, grads, gradDesc, 0);
    trace_rec_int(r, "status", st);
    cuda_note_mode(r, c);
    trace_rec_note(r, "cuda.algo", ran == CUDNN_CTC_LOSS_ALGO_DETERMINISTIC ? "0 (deterministic)"
                                                                           : "1 (nondeterministic)");
    if (asked != ran)
        trace_rec_note(r, "cuda.override", ctc_override);
    cuda_commit(r);
}

DETSHIM_EXPORT cudnnStatus_t cudnnCTCLoss(cudnnHandle_t handle,
                                          const cudnnTensorDescriptor_t probsDesc,
                                          const void *probs, const int hostLabels[],
                                          const int hostLabelLengths[],
                                          const int hostInputLengths[], void *costs,
                                          const cudnnTensorDescriptor_t gradDesc, void *grads,
                                          cudnnCTCLossAlgo_t algo,
                                          cudnnCTCLossDescriptor_t ctcDesc, void *ws,
                                          size_t wsSize)
{
    CUDA_REAL_FN(cudnnCTCLoss_fn *, cudnnCTCLoss);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, probsDesc, probs, hostLabels, hostLabelLengths, hostInputLengths,
                    costs, gradDesc, grads, algo, ctcDesc, ws, wsSize);
    int ran = ctc_algo(&c, algo);
    struct trace_rec r;
    CUstream s = NULL;
    if (c.traced) {
        int dims[DIGEST_MAX_DIMS];
        int n = tensor_dims(probsDesc, dims) >= 2 ? dims[1] : 0;
        int64_t labels = 0;
        for (int i = 0; hostLabelLengths && i < n; i++)
            labels += hostLabelLengths[i];
        s = cudnn_handle_stream(handle);
        trace_rec_begin(&r, "cudnnCTCLoss");
        trace_rec_int(&r, "algo", algo);
        trace_rec_int(&r, "workspaceSize", (int64_t)wsSize);
        cudnn_rec_tensor(&r, "probs", TRACE_ROLE_IN, s, probs, probsDesc, 0);
        rec_host_ints(&r, "labels", hostLabels, labels);
        rec_host_ints(&r, "labelLengths", hostLabelLengths, n);
        rec_host_ints(&r, "inputLengths", hostInputLengths, n);
    }
    cudnnStatus_t st = real(handle, probsDesc, probs, hostLabels, hostLabelLengths,
                            hostInputLengths, costs, gradDesc, grads, ran, ctcDesc, ws, wsSize);
    if (c.traced)
        ctc_end(&c, &r, s, algo, ran, probsDesc, costs, gradDesc, grads, st);
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnCTCLoss_v8(cudnnHandle_t handle, cudnnCTCLossAlgo_t algo,
                                             cudnnCTCLossDescriptor_t ctcDesc,
                                             const cudnnTensorDescriptor_t probsDesc,
                                             const void *probs, const int labels[],
                                             const int labelLengths[], const int inputLengths[],
                                             void *costs, const cudnnTensorDescriptor_t gradDesc,
                                             void *grads, size_t wsSize, void *ws)
{
    CUDA_REAL_FN(cudnnCTCLoss_v8_fn *, cudnnCTCLoss_v8);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, algo, ctcDesc, probsDesc, probs, labels, labelLengths, inputLengths,
                    costs, gradDesc, grads, wsSize, ws);
    int ran = ctc_algo(&c, algo);
    struct trace_rec r;
    CUstream s = NULL;
    if (c.traced) {
        int dims[DIGEST_MAX_DIMS];
        int n = tensor_dims(probsDesc, dims) >= 2 ? dims[1] : 0;
        s = cudnn_handle_stream(handle);
        trace_rec_begin(&r, "cudnnCTCLoss_v8");
        trace_rec_int(&r, "algo", algo);
        trace_rec_int(&r, "workspaceSize", (int64_t)wsSize);
        cudnn_rec_tensor(&r, "probs", TRACE_ROLE_IN, s, probs, probsDesc, 0);
        /* The lengths are on the device: read them (waiting for the
         * stream) to know how many labels there are. */
        int *lens = n > 0 ? malloc((size_t)n * sizeof *lens) : NULL;
        int64_t total = 0;
        if (lens && cuda_read(s, lens, labelLengths, (size_t)n * sizeof *lens) == 0)
            for (int i = 0; i < n; i++)
                total += lens[i] > 0 ? lens[i] : 0;
        else
            cuda_note_no_digest(&r);
        free(lens);
        rec_dev_bytes(&r, "labels", TRACE_ROLE_IN, s, labels, total, 4);
        rec_dev_bytes(&r, "labelLengths", TRACE_ROLE_IN, s, labelLengths, n, 4);
        rec_dev_bytes(&r, "inputLengths", TRACE_ROLE_IN, s, inputLengths, n, 4);
    }
    cudnnStatus_t st = real(handle, ran, ctcDesc, probsDesc, probs, labels, labelLengths,
                            inputLengths, costs, gradDesc, grads, wsSize, ws);
    if (c.traced)
        ctc_end(&c, &r, s, algo, ran, probsDesc, costs, gradDesc, grads, st);
    cuda_leave();
    return st;
}

/* The workspace queries answer for the algorithm that will run; not
 * traced (a size decides no bits). */
DETSHIM_EXPORT cudnnStatus_t cudnnGetCTCLossWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t probsDesc,
    const cudnnTensorDescriptor_t gradDesc, const int *labels, const int *labelLengths,
    const int *inputLengths, cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcDesc,
    size_t *size)
{
    CUDA_REAL_FN(cudnnGetCTCLossWorkspaceSize_fn *, cudnnGetCTCLossWorkspaceSize);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, probsDesc, gradDesc, labels, labelLengths, inputLengths, algo,
                    ctcDesc, size);
    cudnnStatus_t st = real(handle, probsDesc, gradDesc, labels, labelLengths, inputLengths,
                            ctc_algo(&c, algo), ctcDesc, size);
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnGetCTCLossWorkspaceSize_v8(
    cudnnHandle_t handle, cudnnCTCLossAlgo_t algo, cudnnCTCLossDescriptor_t ctcDesc,
    const cudnnTensorDescriptor_t probsDesc, const cudnnTensorDescriptor_t gradDesc,
    size_t *size)
{
    CUDA_REAL_FN(cudnnGetCTCLossWorkspaceSize_v8_fn *, cudnnGetCTCLossWorkspaceSize_v8);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, algo, ctcDesc, probsDesc, gradDesc, size);
    cudnnStatus_t st = real(handle, ctc_algo(&c, algo), ctcDesc, probsDesc, gradDesc, size);
    cuda_leave();
    return st;
}

/* y = act(alpha1 conv(x, w) + alpha2 z + bias). */
DETSHIM_EXPORT cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t handle, const void *alpha1, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnConvolutionDescriptor_t conv,
    cudnnConvolutionFwdAlgo_t algo, void *ws, size_t wsSize, const void *alpha2,
    const cudnnTensorDescriptor_t zDesc, const void *z, const cudnnTensorDescriptor_t biasDesc,
    const void *bias, const cudnnActivationDescriptor_t act, const cudnnTensorDescriptor_t yDesc,
    void *y)
{
    CUDA_REAL_FN(cudnnConvolutionBiasActivationForward_fn *,
                 cudnnConvolutionBiasActivationForward);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, alpha1, xDesc, x, wDesc, w, conv, algo, ws, wsSize, alpha2, zDesc, z,
                    biasDesc, bias, act, yDesc, y);
    char override[128] = "";
    int ran = algo;
    if (c.pinned)
        ran = cudnn_pinned_algo(CONV_FORWARD, handle,
                                &(struct conv_descs){ .tensor1 = xDesc, .filter2 = wDesc,
                                                      .conv = conv, .tensor4 = yDesc },
                                algo, wsSize, override, sizeof override);
    struct trace_rec r;
    CUstream s = NULL;
    if (c.traced) {
        s = cudnn_handle_stream(handle);
        trace_rec_begin(&r, "cudnnConvolutionBiasActivationForward");
        trace_rec_int(&r, "algo", algo);
        trace_rec_int(&r, "workspaceSize", (int64_t)wsSize);
        int type = cudnn_scale_type(xDesc);
        int a1_zero = cuda_rec_scalar(&r, "alpha1", s, alpha1, 0, type);
        int a2_zero = cuda_rec_scalar(&r, "alpha2", s, alpha2, 0, type);
        if (!a1_zero) {
            cudnn_rec_tensor(&r, "x", TRACE_ROLE_IN, s, x, xDesc, 0);
            cudnn_rec_tensor(&r, "w", TRACE_ROLE_IN, s, w, wDesc, 1);
        }
        if (!a2_zero)
            cudnn_rec_tensor(&r, "z", TRACE_ROLE_IN, s, z, zDesc, 0);
        if (bias)
            cudnn_rec_tensor(&r, "bias", TRACE_ROLE_IN, s, bias, biasDesc, 0);
    }
    cudnnStatus_t st = real(handle, alpha1, xDesc, x, wDesc, w, conv, ran, ws, wsSize, alpha2,
                            zDesc, z, biasDesc, bias, act, yDesc, y);
    if (c.traced) {
        char text[16];
        cudnn_rec_tensor(&r, "y", TRACE_ROLE_OUT, s, y, yDesc, 0);
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &c);
        snprintf(text, sizeof text, "%d", ran);
        trace_rec_note(&r, "cuda.algo", text);
        if (override[0])
            trace_rec_note(&r, "cuda.override", override);
        cuda_commit(&r);
    }
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnPoolingForward(cudnnHandle_t handle,
                                                 const cudnnPoolingDescriptor_t pool,
                                                 const void *alpha,
                                                 const cudnnTensorDescriptor_t xDesc,
                                                 const void *x, const void *beta,
                                                 const cudnnTensorDescriptor_t yDesc, void *y)
{
    CUDA_REAL_FN(cudnnPoolingForward_fn *, cudnnPoolingForward);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, pool, alpha, xDesc, x, beta, yDesc, y);
    struct trace_rec r;
    CUstream s = NULL;
    if (c.traced) {
        s = cudnn_handle_stream(handle);
        trace_rec_begin(&r, "cudnnPoolingForward");
        int type = cudnn_scale_type(xDesc);
        int alpha_zero = cuda_rec_scalar(&r, "alpha", s, alpha, 0, type);
        int beta_zero = cuda_rec_scalar(&r, "beta", s, beta, 0, type);
        if (!alpha_zero)
            cudnn_rec_tensor(&r, "x", TRACE_ROLE_IN, s, x, xDesc, 0);
        if (!beta_zero)
            cudnn_rec_tensor(&r, "y", TRACE_ROLE_IN, s, y, yDesc, 0);
    }
    cudnnStatus_t st = real(handle, pool, alpha, xDesc, x, beta, yDesc, y);
    if (c.traced) {
        cudnn_rec_tensor(&r, "y", TRACE_ROLE_OUT, s, y, yDesc, 0);
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &c);
        cuda_commit(&r);
    }
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t conv,
                                                         cudnnMathType_t mathType)
{
    CUDA_REAL_FN(cudnnSetConvolutionMathType_fn *, cudnnSetConvolutionMathType);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(conv, mathType);
    int applied = c.pinned && core_cfg.cuda_tf32 == TF32_DENY &&
                          mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
                      ? CUDNN_TENSOR_OP_MATH : mathType;
    cudnnStatus_t st = real(conv, applied);
    if (c.traced) {
        static const char *const names[] = { "default", "tensor_op", "tensor_op_allow_conversion",
                                             "fma" };
        struct trace_rec r;
        trace_rec_begin(&r, "cudnnSetConvolutionMathType");
        trace_rec_int(&r, "mathType", mathType);
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &c);
        trace_rec_note(&r, "cuda.math_mode",
                       applied >= 0 && applied < 4 ? names[applied] : "unknown");
        if (applied != (int)mathType)
            trace_rec_note(&r, "cuda.override", "math tensor_op_allow_conversion->tensor_op "
                           "(FP32 data not converted down)");
        cuda_commit(&r);
    }
    cuda_leave();
    return st;
}
