/* cuDNN RNN interceptors (nn.LSTM, nn.GRU, nn.RNN on CUDA): the forward
 * pass, the backward passes for data and weights, and the dropout
 * descriptor whose seed decides the masks between layers. cuDNN lists no
 * RNN algorithm as nondeterministic, but its RNNs call cuBLAS inside, and
 * cuDNN's release notes say they vary run to run unless cuBLAS has one
 * buffer size (CUBLAS_WORKSPACE_CONFIG=:4096:8 or :16:8, which the
 * pytorch policy sets); pinned mode says so on stderr, once, when the
 * variable is unset or names two sizes, and every RNN record notes the
 * value. The dropout seed is derived in pinned mode, like a cuRAND
 * generator's (curand.c: the same stream, one seed per descriptor set),
 * and the program's own seed is logged at DETSHIM_LOG=info, not traced;
 * cudnnRestoreDropoutDescriptor reuses states already made and is traced
 * only, without the seed it is given (cuDNN ignores it). Each RNN call is traced with the RNN descriptor (algorithm, cell,
 * direction, math type and precision, sizes), its data shapes, and device
 * digests of what it reads and writes: the sequences over their whole
 * padded span (cuDNN's RNN data layouts), the states through their dims
 * and strides, the weight space as bytes; the workspace and reserve space
 * are cuDNN's scratch and are not digested.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "rng/rng.h"
#include "trace/digest.h"

struct rnn {
    const char *api;
    cudnnHandle_t h;
    cudnnRNNDescriptor_t desc;
    CUstream stream;
    int batch;           /* from the x descriptor, for devSeqLengths */
    const char *workspace;
    struct trace_rec r;
};

/* CUBLAS_WORKSPACE_CONFIG as cuBLAS reads it: one ":SIZE:COUNT" pair is
 * one buffer size. Returns the note for the record. */
static const char *workspace_note(const struct cuda_call *c)
{
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    const char *v = core_getenv("CUBLAS_WORKSPACE_CONFIG");
    int colons = 0;
    for (const char *p = v; p && *p; p++)
        colons += *p == ':';
    if (v && colons == 2)
        return v;
    if (c->pinned && !atomic_flag_test_and_set(&warned))
        core_log(DS_LOG_QUIET, "cuDNN RNNs call cuBLAS inside, which is deterministic only "
                 "with one workspace size: set [cuda] cublas_workspace = :4096:8 in the policy "
                 "(CUBLAS_WORKSPACE_CONFIG is %s)", v ? v : "unset");
    return v ? "two or more buffer sizes (nondeterministic in cuDNN RNNs)"
             : "unset (cuBLAS's two buffer sizes: nondeterministic in cuDNN RNNs)";
}

static void rec_rnn_desc(struct rnn *v)
{
    static void *cache;
    cudnnGetRNNDescriptor_v8_fn *get =
        (cudnnGetRNNDescriptor_v8_fn *)(uintptr_t)cuda_sym(&cache, "cudnnGetRNNDescriptor_v8");
    int algo, cell, bias, dir, input, dtype, mprec, math;
    int32_t isize, hsize, psize, layers;
    cudnnDropoutDescriptor_t drop;
    uint32_t aux;
    if (!get || get(v->desc, &algo, &cell, &bias, &dir, &input, &dtype, &mprec, &math, &isize,
                    &hsize, &psize, &layers, &drop, &aux) != CUDNN_STATUS_SUCCESS) {
        trace_rec_note(&v->r, "cuda.rnn", "descriptor unreadable (cudnnGetRNNDescriptor_v8)");
        return;
    }
    trace_rec_int(&v->r, "algo", algo);
    trace_rec_int(&v->r, "cellMode", cell);
    trace_rec_int(&v->r, "biasMode", bias);
    trace_rec_int(&v->r, "dirMode", dir);
    trace_rec_int(&v->r, "inputMode", input);
    trace_rec_int(&v->r, "dataType", dtype);
    trace_rec_int(&v->r, "mathPrec", mprec);
    trace_rec_int(&v->r, "mathType", math);
    trace_rec_int(&v->r, "inputSize", isize);
    trace_rec_int(&v->r, "hiddenSize", hsize);
    trace_rec_int(&v->r, "projSize", psize);
    trace_rec_int(&v->r, "numLayers", layers);
    trace_rec_int(&v->r, "auxFlags", aux);
}

/* An RNN data tensor (x, y, dx, dy): maxSeqLength x batchSize x
 * vectorSize elements, padding included. `vec` names the parameter its
 * vector size is recorded as (NULL: not recorded); `params` records the
 * layout and the sequence and batch sizes too, and keeps the batch size. */
static void rec_seq(struct rnn *v, const char *name, int role, cudnnRNNDataDescriptor_t d,
                    const void *p, const char *vec_param, int params)
{
    static void *cache;
    cudnnGetRNNDataDescriptor_fn *get = (cudnnGetRNNDataDescriptor_fn *)(uintptr_t)cuda_sym(
        &cache, "cudnnGetRNNDataDescriptor");
    int type, layout, seq, batch, vec;
    int elem = 0;
    if (get && get(d, &type, &layout, &seq, &batch, &vec, 0, NULL, NULL) == CUDNN_STATUS_SUCCESS)
        elem = cudnn_type_size(type);
    if (!elem || !p || seq < 0 || batch < 0 || vec < 0) {
        cuda_note_no_digest(&v->r);
        trace_rec_operand(&v->r, name, role, digest_bytes(NULL, 0), 0, elem);
        return;
    }
    if (params) {
        trace_rec_int(&v->r, "layout", layout);
        trace_rec_int(&v->r, "maxSeqLength", seq);
        trace_rec_int(&v->r, "batchSize", batch);
        v->batch = batch;
    }
    if (vec_param)
        trace_rec_int(&v->r, vec_param, vec);
    uint64_t count = (uint64_t)seq * (uint64_t)batch * (uint64_t)vec;
    if (cuda_rec_bytes(&v->r, name, role, v->stream, p, count * (size_t)elem, count, elem) != 0) {
        cuda_note_no_digest(&v->r);
        trace_rec_operand(&v->r, name, role, digest_bytes(NULL, 0), 0, elem);
    }
}

static void rec_state(struct rnn *v, const char *name, int role, cudnnTensorDescriptor_t d,
                      const void *p)
{
    if (p && d)
        cudnn_rec_tensor(&v->r, name, role, v->stream, p, d, 0);
}

static void rec_space(struct rnn *v, const char *name, int role, const void *p, size_t n)
{
    if (p && cuda_rec_bytes(&v->r, name, role, v->stream, p, n, n, 1) != 0) {
        cuda_note_no_digest(&v->r);
        trace_rec_operand(&v->r, name, role, digest_bytes(NULL, 0), 0, 1);
    }
}

/* Begins the record: descriptor, x's shape (the first data descriptor
 * given) and the sequence lengths on the device. */
static void rnn_begin(struct rnn *v, cudnnRNNDataDescriptor_t xd, const void *x,
                      const char *xname, const char *vec_param, const int32_t *seqlens)
{
    v->stream = cudnn_handle_stream(v->h);
    trace_rec_begin(&v->r, v->api);
    rec_rnn_desc(v);
    rec_seq(v, xname, TRACE_ROLE_IN, xd, x, vec_param, 1);
    if (seqlens && v->batch > 0)
        rec_space(v, "devSeqLengths", TRACE_ROLE_IN, seqlens, (size_t)v->batch * sizeof(int32_t));
}

static void rnn_end(const struct cuda_call *c, struct rnn *v, cudnnStatus_t st)
{
    trace_rec_int(&v->r, "status", st);
    cuda_note_mode(&v->r, c);
    trace_rec_note(&v->r, "cuda.cublas_workspace", v->workspace);
    cuda_commit(&v->r);
}

DETSHIM_EXPORT cudnnStatus_t cudnnRNNForward(
    cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnForwardMode_t fwdMode,
    const int32_t devSeqLengths[], cudnnRNNDataDescriptor_t xDesc, const void *x,
    cudnnRNNDataDescriptor_t yDesc, void *y, cudnnTensorDescriptor_t hDesc, const void *hx,
    void *hy, cudnnTensorDescriptor_t cDesc, const void *cx, void *cy, size_t weightSpaceSize,
    const void *weightSpace, size_t workSpaceSize, void *workSpace, size_t reserveSpaceSize,
    void *reserveSpace)
{
    CUDA_REAL_FN(cudnnRNNForward_fn *, cudnnRNNForward);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, rnnDesc, fwdMode, devSeqLengths, xDesc, x, yDesc, y, hDesc, hx, hy,
                    cDesc, cx, cy, weightSpaceSize, weightSpace, workSpaceSize, workSpace,
                    reserveSpaceSize, reserveSpace);
    /* The workspace check says its line whether or not the call is traced. */
    struct rnn v = { .api = "cudnnRNNForward", .h = handle, .desc = rnnDesc,
                     .workspace = workspace_note(&c) };
    if (c.traced) {
        rnn_begin(&v, xDesc, x, "x", "inputSize_x", devSeqLengths);
        trace_rec_int(&v.r, "fwdMode", fwdMode);
        rec_state(&v, "hx", TRACE_ROLE_IN, hDesc, hx);
        rec_state(&v, "cx", TRACE_ROLE_IN, cDesc, cx);
        rec_space(&v, "weightSpace", TRACE_ROLE_IN, weightSpace, weightSpaceSize);
    }
    cudnnStatus_t st = real(handle, rnnDesc, fwdMode, devSeqLengths, xDesc, x, yDesc, y, hDesc,
                            hx, hy, cDesc, cx, cy, weightSpaceSize, weightSpace, workSpaceSize,
                            workSpace, reserveSpaceSize, reserveSpace);
    if (c.traced) {
        rec_seq(&v, "y", TRACE_ROLE_OUT, yDesc, y, "vectorSize_y", 0);
        rec_state(&v, "hy", TRACE_ROLE_OUT, hDesc, hy);
        rec_state(&v, "cy", TRACE_ROLE_OUT, cDesc, cy);
        rnn_end(&c, &v, st);
    }
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnRNNBackwardData_v8(
    cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, const int32_t devSeqLengths[],
    cudnnRNNDataDescriptor_t yDesc, const void *y, const void *dy, cudnnRNNDataDescriptor_t xDesc,
    void *dx, cudnnTensorDescriptor_t hDesc, const void *hx, const void *dhy, void *dhx,
    cudnnTensorDescriptor_t cDesc, const void *cx, const void *dcy, void *dcx,
    size_t weightSpaceSize, const void *weightSpace, size_t workSpaceSize, void *workSpace,
    size_t reserveSpaceSize, void *reserveSpace)
{
    CUDA_REAL_FN(cudnnRNNBackwardData_v8_fn *, cudnnRNNBackwardData_v8);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, rnnDesc, devSeqLengths, yDesc, y, dy, xDesc, dx, hDesc, hx, dhy, dhx,
                    cDesc, cx, dcy, dcx, weightSpaceSize, weightSpace, workSpaceSize, workSpace,
                    reserveSpaceSize, reserveSpace);
    struct rnn v = { .api = "cudnnRNNBackwardData_v8", .h = handle, .desc = rnnDesc,
                     .workspace = workspace_note(&c) };
    if (c.traced) {
        rnn_begin(&v, yDesc, y, "y", "vectorSize_y", devSeqLengths);
        rec_seq(&v, "dy", TRACE_ROLE_IN, yDesc, dy, NULL, 0);
        rec_state(&v, "hx", TRACE_ROLE_IN, hDesc, hx);
        rec_state(&v, "dhy", TRACE_ROLE_IN, hDesc, dhy);
        rec_state(&v, "cx", TRACE_ROLE_IN, cDesc, cx);
        rec_state(&v, "dcy", TRACE_ROLE_IN, cDesc, dcy);
        rec_space(&v, "weightSpace", TRACE_ROLE_IN, weightSpace, weightSpaceSize);
    }
    cudnnStatus_t st = real(handle, rnnDesc, devSeqLengths, yDesc, y, dy, xDesc, dx, hDesc, hx,
                            dhy, dhx, cDesc, cx, dcy, dcx, weightSpaceSize, weightSpace,
                            workSpaceSize, workSpace, reserveSpaceSize, reserveSpace);
    if (c.traced) {
        rec_seq(&v, "dx", TRACE_ROLE_OUT, xDesc, dx, "inputSize_x", 0);
        rec_state(&v, "dhx", TRACE_ROLE_OUT, hDesc, dhx);
        rec_state(&v, "dcx", TRACE_ROLE_OUT, cDesc, dcx);
        rnn_end(&c, &v, st);
    }
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnRNNBackwardWeights_v8(
    cudnnHandle_t handle, cudnnRNNDescriptor_t rnnDesc, cudnnWgradMode_t addGrad,
    const int32_t devSeqLengths[], cudnnRNNDataDescriptor_t xDesc, const void *x,
    cudnnTensorDescriptor_t hDesc, const void *hx, cudnnRNNDataDescriptor_t yDesc, const void *y,
    size_t weightSpaceSize, void *dweightSpace, size_t workSpaceSize, void *workSpace,
    size_t reserveSpaceSize, void *reserveSpace)
{
    CUDA_REAL_FN(cudnnRNNBackwardWeights_v8_fn *, cudnnRNNBackwardWeights_v8);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, rnnDesc, addGrad, devSeqLengths, xDesc, x, hDesc, hx, yDesc, y,
                    weightSpaceSize, dweightSpace, workSpaceSize, workSpace, reserveSpaceSize,
                    reserveSpace);
    struct rnn v = { .api = "cudnnRNNBackwardWeights_v8", .h = handle, .desc = rnnDesc,
                     .workspace = workspace_note(&c) };
    if (c.traced) {
        rnn_begin(&v, xDesc, x, "x", "inputSize_x", devSeqLengths);
        trace_rec_int(&v.r, "addGrad", addGrad);
        rec_state(&v, "hx", TRACE_ROLE_IN, hDesc, hx);
        rec_seq(&v, "y", TRACE_ROLE_IN, yDesc, y, "vectorSize_y", 0);
        /* CUDNN_WGRAD_MODE_ADD adds to what the buffer holds. */
        if (addGrad == CUDNN_WGRAD_MODE_ADD)
            rec_space(&v, "dweightSpace", TRACE_ROLE_IN, dweightSpace, weightSpaceSize);
    }
    cudnnStatus_t st = real(handle, rnnDesc, addGrad, devSeqLengths, xDesc, x, hDesc, hx, yDesc,
                            y, weightSpaceSize, dweightSpace, workSpaceSize, workSpace,
                            reserveSpaceSize, reserveSpace);
    if (c.traced) {
        rec_space(&v, "dweightSpace", TRACE_ROLE_OUT, dweightSpace, weightSpaceSize);
        rnn_end(&c, &v, st);
    }
    cuda_leave();
    return st;
}

/* Set and Restore share one record; Set pins the seed and initialises
 * the states (digested after), Restore reuses states already made. */
static cudnnStatus_t dropout_call(const char *api, cudnnSetDropoutDescriptor_fn *real,
                                  cudnnDropoutDescriptor_t d, cudnnHandle_t handle, float p,
                                  void *states, size_t size, unsigned long long seed, int set)
{
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(d, handle, p, states, size, seed);
    unsigned long long applied = seed;
    int pinned = set && c.pinned && rng_fill(RNG_CURAND, &applied, sizeof applied) == 0;
    if (pinned)
        core_log(DS_LOG_INFO, "%s: the program's seed %llu is replaced by the pinned seed %llu",
                 api, seed, applied);
    cudnnStatus_t st = real(d, handle, p, states, size, applied);
    if (c.traced) {
        struct rnn v = { .api = api, .h = handle, .stream = cudnn_handle_stream(handle) };
        trace_rec_begin(&v.r, api);
        trace_rec_f32(&v.r, "dropout", p);
        trace_rec_int(&v.r, "stateSizeInBytes", (int64_t)size);
        /* Restore's seed "has no effect" (cuDNN): a clock-seeded program
         * must not trace differently for it. */
        if (set)
            trace_rec_int(&v.r, "seed", (int64_t)applied);
        if (set && st == CUDNN_STATUS_SUCCESS)
            rec_space(&v, "states", TRACE_ROLE_OUT, states, size);
        trace_rec_int(&v.r, "status", st);
        cuda_note_mode(&v.r, &c);
        if (pinned)
            trace_rec_note(&v.r, "cuda.override", "seed->pinned seed (the program's seed is "
                           "logged, not traced)");
        cuda_commit(&v.r);
    }
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnSetDropoutDescriptor(cudnnDropoutDescriptor_t d,
                                                       cudnnHandle_t handle, float dropout,
                                                       void *states, size_t size,
                                                       unsigned long long seed)
{
    CUDA_REAL_FN(cudnnSetDropoutDescriptor_fn *, cudnnSetDropoutDescriptor);
    return dropout_call("cudnnSetDropoutDescriptor", real, d, handle, dropout, states, size,
                        seed, 1);
}

DETSHIM_EXPORT cudnnStatus_t cudnnRestoreDropoutDescriptor(cudnnDropoutDescriptor_t d,
                                                           cudnnHandle_t handle, float dropout,
                                                           void *states, size_t size,
                                                           unsigned long long seed)
{
    CUDA_REAL_FN(cudnnRestoreDropoutDescriptor_fn *, cudnnRestoreDropoutDescriptor);
    return dropout_call("cudnnRestoreDropoutDescriptor", real, d, handle, dropout, states, size,
                        seed, 0);
}
