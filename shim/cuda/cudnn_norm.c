/* cuDNN BatchNorm interceptors: the training forward and backward (the Ex
 * forms PyTorch calls), inference, and the three size queries that go
 * with them. cuDNN documents BatchNorm as reproducible run to run; its
 * CUDNN_BATCHNORM_SPATIAL_PERSISTENT mode reduces with atomics, a scaled
 * integer reduction that cuDNN calls deterministic but whose range is
 * narrower (large inputs overflow to NaN or Inf where SPATIAL gives
 * numbers). PyTorch picks that mode for channels-last training. Pinned
 * mode runs the same normalisation in CUDNN_BATCHNORM_SPATIAL, which
 * reduces in a fixed order without atomics, in the training calls and in
 * the size queries alike, so the workspace and reserve space the program
 * allocates are the ones SPATIAL needs; the trace shows the mode asked
 * for and the override. Should cuDNN refuse SPATIAL for a call, the mode
 * asked for runs instead where the program's buffers fit it, said once on
 * stderr and marked "not pinned" in the record. Each call is traced with its mode, ops, epsilon
 * and averaging factor, the scalars, and device digests of every tensor
 * read before and written after (through the tensors' dims and strides,
 * cudnn.c); the reserve space and workspace are cuDNN's own scratch and
 * are not digested.
 */
#include <stdatomic.h>
#include <stdio.h>

#include "core/core.h"
#include "cuda/cuda.h"

/* The mode to run: SPATIAL for SPATIAL_PERSISTENT when pinned. */
static int pinned_mode(const struct cuda_call *c, int mode)
{
    return c->pinned && mode == CUDNN_BATCHNORM_SPATIAL_PERSISTENT ? CUDNN_BATCHNORM_SPATIAL
                                                                   : mode;
}

static const char *const override_note =
    "mode spatial_persistent->spatial (no atomic reduction)";

/* Whether the asked-for mode may run after cuDNN refused SPATIAL for a
 * call (a layout or type its SPATIAL kernels do not take): only when the
 * program's workspace and reserve space, sized for SPATIAL by the
 * queries below, also fit the asked-for mode. Says so on stderr once. */
static int may_fall_back(cudnnHandle_t h, int mode, int ops, cudnnTensorDescriptor_t x,
                         cudnnTensorDescriptor_t bn, cudnnActivationDescriptor_t act,
                         size_t ws, size_t reserve, int backward, cudnnStatus_t refused)
{
    static void *wcache[2], *rcache;
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    size_t need_ws = 0, need_rs = 0;
    int sized;
    if (backward) {
        cudnnGetBatchNormalizationBackwardExWorkspaceSize_fn *w =
            (cudnnGetBatchNormalizationBackwardExWorkspaceSize_fn *)(uintptr_t)cuda_sym(
                &wcache[1], "cudnnGetBatchNormalizationBackwardExWorkspaceSize");
        sized = w && w(h, mode, ops, x, x, x, x, x, bn, act, &need_ws) == CUDNN_STATUS_SUCCESS;
    } else {
        cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize_fn *w =
            (cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize_fn *)(uintptr_t)cuda_sym(
                &wcache[0], "cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize");
        sized = w && w(h, mode, ops, x, x, x, bn, act, &need_ws) == CUDNN_STATUS_SUCCESS;
    }
    cudnnGetBatchNormalizationTrainingExReserveSpaceSize_fn *rsz =
        (cudnnGetBatchNormalizationTrainingExReserveSpaceSize_fn *)(uintptr_t)cuda_sym(
            &rcache, "cudnnGetBatchNormalizationTrainingExReserveSpaceSize");
    sized = sized && rsz && rsz(h, mode, ops, act, x, &need_rs) == CUDNN_STATUS_SUCCESS;
    if (!sized || need_ws > ws || need_rs > reserve)
        return 0;
    if (!atomic_flag_test_and_set(&warned))
        core_log(DS_LOG_QUIET, "cuDNN refused BatchNorm in SPATIAL mode for a tensor (status "
                 "%d): it runs in the persistent mode the program asked for, unpinned", refused);
    return 1;
}

/* Begins a record with the parameters every BatchNorm call has. */
static void bn_begin(struct trace_rec *r, const char *api, int mode, int ops, double epsilon)
{
    trace_rec_begin(r, api);
    trace_rec_int(r, "mode", mode);
    if (ops >= 0)
        trace_rec_int(r, "bnOps", ops);
    trace_rec_f64(r, "epsilon", epsilon);
}

static void bn_end(const struct cuda_call *c, struct trace_rec *r, int asked, int ran,
                   cudnnStatus_t st)
{
    char text[16];
    trace_rec_int(r, "status", st);
    cuda_note_mode(r, c);
    snprintf(text, sizeof text, "mode %d", ran);
    trace_rec_note(r, "cuda.algo", text);
    if (asked != ran)
        trace_rec_note(r, "cuda.override", override_note);
    else if (pinned_mode(c, asked) != asked)
        trace_rec_note(r, "cuda.override", "not pinned: cuDNN refused SPATIAL here");
    cuda_commit(r);
}

/* A tensor operand, skipped when the program passes none. */
static void rec_opt(struct trace_rec *r, const char *name, int role, CUstream s, const void *p,
                    cudnnTensorDescriptor_t d)
{
    if (p && d)
        cudnn_rec_tensor(r, name, role, s, p, d, 0);
}

DETSHIM_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const void *alpha, const void *beta, const cudnnTensorDescriptor_t xDesc, const void *xData,
    const cudnnTensorDescriptor_t zDesc, const void *zData, const cudnnTensorDescriptor_t yDesc,
    void *yData, const cudnnTensorDescriptor_t bnDesc, const void *bnScale, const void *bnBias,
    double factor, void *runningMean, void *runningVar, double epsilon, void *saveMean,
    void *saveInvVar, cudnnActivationDescriptor_t act, void *ws, size_t wsSize, void *reserve,
    size_t reserveSize)
{
    CUDA_REAL_FN(cudnnBatchNormalizationForwardTrainingEx_fn *,
                 cudnnBatchNormalizationForwardTrainingEx);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, mode, bnOps, alpha, beta, xDesc, xData, zDesc, zData, yDesc, yData,
                    bnDesc, bnScale, bnBias, factor, runningMean, runningVar, epsilon, saveMean,
                    saveInvVar, act, ws, wsSize, reserve, reserveSize);
    int ran = pinned_mode(&c, mode);
    struct trace_rec r;
    CUstream s = NULL;
    if (c.traced) {
        s = cudnn_handle_stream(handle);
        bn_begin(&r, "cudnnBatchNormalizationForwardTrainingEx", mode, bnOps, epsilon);
        trace_rec_f64(&r, "exponentialAverageFactor", factor);
        int type = cudnn_scale_type(xDesc);
        cuda_rec_scalar(&r, "alpha", s, alpha, 0, type);
        int beta_zero = cuda_rec_scalar(&r, "beta", s, beta, 0, type);
        cudnn_rec_tensor(&r, "x", TRACE_ROLE_IN, s, xData, xDesc, 0);
        if (bnOps == 2) /* CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION */
            rec_opt(&r, "z", TRACE_ROLE_IN, s, zData, zDesc);
        rec_opt(&r, "scale", TRACE_ROLE_IN, s, bnScale, bnDesc);
        rec_opt(&r, "bias", TRACE_ROLE_IN, s, bnBias, bnDesc);
        rec_opt(&r, "runningMean", TRACE_ROLE_IN, s, runningMean, bnDesc);
        rec_opt(&r, "runningVar", TRACE_ROLE_IN, s, runningVar, bnDesc);
        if (!beta_zero)
            cudnn_rec_tensor(&r, "y", TRACE_ROLE_IN, s, yData, yDesc, 0);
    }
    cudnnStatus_t st = real(handle, ran, bnOps, alpha, beta, xDesc, xData, zDesc, zData, yDesc,
                            yData, bnDesc, bnScale, bnBias, factor, runningMean, runningVar,
                            epsilon, saveMean, saveInvVar, act, ws, wsSize, reserve,
                            reserveSize);
    if (st != CUDNN_STATUS_SUCCESS && ran != (int)mode &&
        may_fall_back(handle, mode, bnOps, xDesc, bnDesc, act, wsSize, reserveSize, 0, st)) {
        ran = mode;
        st = real(handle, ran, bnOps, alpha, beta, xDesc, xData, zDesc, zData, yDesc, yData,
                  bnDesc, bnScale, bnBias, factor, runningMean, runningVar, epsilon, saveMean,
                  saveInvVar, act, ws, wsSize, reserve, reserveSize);
    }
    if (c.traced) {
        cudnn_rec_tensor(&r, "y", TRACE_ROLE_OUT, s, yData, yDesc, 0);
        rec_opt(&r, "runningMean", TRACE_ROLE_OUT, s, runningMean, bnDesc);
        rec_opt(&r, "runningVar", TRACE_ROLE_OUT, s, runningVar, bnDesc);
        rec_opt(&r, "saveMean", TRACE_ROLE_OUT, s, saveMean, bnDesc);
        rec_opt(&r, "saveInvVariance", TRACE_ROLE_OUT, s, saveInvVar, bnDesc);
        bn_end(&c, &r, mode, ran, st);
    }
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const void *alphaData, const void *betaData, const void *alphaParam, const void *betaParam,
    const cudnnTensorDescriptor_t xDesc, const void *xData, const cudnnTensorDescriptor_t yDesc,
    const void *yData, const cudnnTensorDescriptor_t dyDesc, const void *dyData,
    const cudnnTensorDescriptor_t dzDesc, void *dzData, const cudnnTensorDescriptor_t dxDesc,
    void *dxData, const cudnnTensorDescriptor_t bnDesc, const void *bnScale, const void *bnBias,
    void *dScale, void *dBias, double epsilon, const void *savedMean, const void *savedInvVar,
    cudnnActivationDescriptor_t act, void *ws, size_t wsSize, void *reserve, size_t reserveSize)
{
    CUDA_REAL_FN(cudnnBatchNormalizationBackwardEx_fn *, cudnnBatchNormalizationBackwardEx);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, mode, bnOps, alphaData, betaData, alphaParam, betaParam, xDesc,
                    xData, yDesc, yData, dyDesc, dyData, dzDesc, dzData, dxDesc, dxData, bnDesc,
                    bnScale, bnBias, dScale, dBias, epsilon, savedMean, savedInvVar, act, ws,
                    wsSize, reserve, reserveSize);
    int ran = pinned_mode(&c, mode);
    struct trace_rec r;
    CUstream s = NULL;
    int activation = bnOps != 0; /* not CUDNN_BATCHNORM_OPS_BN: y and bias are read */
    if (c.traced) {
        s = cudnn_handle_stream(handle);
        bn_begin(&r, "cudnnBatchNormalizationBackwardEx", mode, bnOps, epsilon);
        int type = cudnn_scale_type(xDesc);
        cuda_rec_scalar(&r, "alphaDataDiff", s, alphaData, 0, type);
        cuda_rec_scalar(&r, "betaDataDiff", s, betaData, 0, type);
        cuda_rec_scalar(&r, "alphaParamDiff", s, alphaParam, 0, type);
        cuda_rec_scalar(&r, "betaParamDiff", s, betaParam, 0, type);
        cudnn_rec_tensor(&r, "x", TRACE_ROLE_IN, s, xData, xDesc, 0);
        if (activation)
            rec_opt(&r, "y", TRACE_ROLE_IN, s, yData, yDesc);
        cudnn_rec_tensor(&r, "dy", TRACE_ROLE_IN, s, dyData, dyDesc, 0);
        rec_opt(&r, "scale", TRACE_ROLE_IN, s, bnScale, bnDesc);
        if (activation)
            rec_opt(&r, "bias", TRACE_ROLE_IN, s, bnBias, bnDesc);
        rec_opt(&r, "savedMean", TRACE_ROLE_IN, s, savedMean, bnDesc);
        rec_opt(&r, "savedInvVariance", TRACE_ROLE_IN, s, savedInvVar, bnDesc);
    }
    cudnnStatus_t st = real(handle, ran, bnOps, alphaData, betaData, alphaParam, betaParam,
                            xDesc, xData, yDesc, yData, dyDesc, dyData, dzDesc, dzData, dxDesc,
                            dxData, bnDesc, bnScale, bnBias, dScale, dBias, epsilon, savedMean,
                            savedInvVar, act, ws, wsSize, reserve, reserveSize);
    if (st != CUDNN_STATUS_SUCCESS && ran != (int)mode &&
        may_fall_back(handle, mode, bnOps, xDesc, bnDesc, act, wsSize, reserveSize, 1, st)) {
        ran = mode;
        st = real(handle, ran, bnOps, alphaData, betaData, alphaParam, betaParam, xDesc, xData,
                  yDesc, yData, dyDesc, dyData, dzDesc, dzData, dxDesc, dxData, bnDesc, bnScale,
                  bnBias, dScale, dBias, epsilon, savedMean, savedInvVar, act, ws, wsSize,
                  reserve, reserveSize);
    }
    if (c.traced) {
        cudnn_rec_tensor(&r, "dx", TRACE_ROLE_OUT, s, dxData, dxDesc, 0);
        if (bnOps == 2)
            rec_opt(&r, "dz", TRACE_ROLE_OUT, s, dzData, dzDesc);
        rec_opt(&r, "dScale", TRACE_ROLE_OUT, s, dScale, bnDesc);
        rec_opt(&r, "dBias", TRACE_ROLE_OUT, s, dBias, bnDesc);
        bn_end(&c, &r, mode, ran, st);
    }
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *x, const cudnnTensorDescriptor_t yDesc,
    void *y, const cudnnTensorDescriptor_t bnDesc, const void *bnScale, const void *bnBias,
    const void *estMean, const void *estVar, double epsilon)
{
    CUDA_REAL_FN(cudnnBatchNormalizationForwardInference_fn *,
                 cudnnBatchNormalizationForwardInference);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, mode, alpha, beta, xDesc, x, yDesc, y, bnDesc, bnScale, bnBias,
                    estMean, estVar, epsilon);
    struct trace_rec r;
    CUstream s = NULL;
    if (c.traced) {
        s = cudnn_handle_stream(handle);
        bn_begin(&r, "cudnnBatchNormalizationForwardInference", mode, -1, epsilon);
        int type = cudnn_scale_type(xDesc);
        cuda_rec_scalar(&r, "alpha", s, alpha, 0, type);
        int beta_zero = cuda_rec_scalar(&r, "beta", s, beta, 0, type);
        cudnn_rec_tensor(&r, "x", TRACE_ROLE_IN, s, x, xDesc, 0);
        rec_opt(&r, "scale", TRACE_ROLE_IN, s, bnScale, bnDesc);
        rec_opt(&r, "bias", TRACE_ROLE_IN, s, bnBias, bnDesc);
        rec_opt(&r, "estimatedMean", TRACE_ROLE_IN, s, estMean, bnDesc);
        rec_opt(&r, "estimatedVariance", TRACE_ROLE_IN, s, estVar, bnDesc);
        if (!beta_zero)
            cudnn_rec_tensor(&r, "y", TRACE_ROLE_IN, s, y, yDesc, 0);
    }
    /* Inference normalises with the given statistics: nothing is
     * reduced, so every mode is deterministic and none is changed. */
    cudnnStatus_t st = real(handle, mode, alpha, beta, xDesc, x, yDesc, y, bnDesc, bnScale,
                            bnBias, estMean, estVar, epsilon);
    if (c.traced) {
        cudnn_rec_tensor(&r, "y", TRACE_ROLE_OUT, s, y, yDesc, 0);
        bn_end(&c, &r, mode, mode, st);
    }
    cuda_leave();
    return st;
}

/* The size queries answer for the mode that will run. Not traced: a
 * size decides no bits, and the calls it sizes are. */
DETSHIM_EXPORT cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t zDesc,
    const cudnnTensorDescriptor_t yDesc, const cudnnTensorDescriptor_t bnDesc,
    const cudnnActivationDescriptor_t act, size_t *size)
{
    CUDA_REAL_FN(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize_fn *,
                 cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, mode, bnOps, xDesc, zDesc, yDesc, bnDesc, act, size);
    cudnnStatus_t st = real(handle, pinned_mode(&c, mode), bnOps, xDesc, zDesc, yDesc, bnDesc,
                            act, size);
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t yDesc,
    const cudnnTensorDescriptor_t dyDesc, const cudnnTensorDescriptor_t dzDesc,
    const cudnnTensorDescriptor_t dxDesc, const cudnnTensorDescriptor_t bnDesc,
    const cudnnActivationDescriptor_t act, size_t *size)
{
    CUDA_REAL_FN(cudnnGetBatchNormalizationBackwardExWorkspaceSize_fn *,
                 cudnnGetBatchNormalizationBackwardExWorkspaceSize);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, mode, bnOps, xDesc, yDesc, dyDesc, dzDesc, dxDesc, bnDesc, act,
                    size);
    cudnnStatus_t st = real(handle, pinned_mode(&c, mode), bnOps, xDesc, yDesc, dyDesc, dzDesc,
                            dxDesc, bnDesc, act, size);
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t bnOps,
    const cudnnActivationDescriptor_t act, const cudnnTensorDescriptor_t xDesc, size_t *size)
{
    CUDA_REAL_FN(cudnnGetBatchNormalizationTrainingExReserveSpaceSize_fn *,
                 cudnnGetBatchNormalizationTrainingExReserveSpaceSize);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, mode, bnOps, act, xDesc, size);
    cudnnStatus_t st = real(handle, pinned_mode(&c, mode), bnOps, act, xDesc, size);
    cuda_leave();
    return st;
}
