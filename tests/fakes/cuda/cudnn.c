/* A fake cuDNN (libcudnn.so.9) for tests, on host memory: 4-d FP32 NCHW
 * tensors, packed or with strides of their own (padding between rows,
 * channels or images, which it never reads nor writes), and forward
 * cross-correlation only. Its algorithm lists (Find
 * and Get_v7 alike) offer a fast nondeterministic algorithm first, as the
 * real lists often do for backward passes, then two deterministic ones; a
 * convolution run with the nondeterministic one sums in a per-run
 * shuffled order (fake.h), the others in index order. Its backend API
 * knows engine heuristics, engine configs, engines and execution plans
 * just well enough to offer engine 7 (nondeterministic) first, then 3 and
 * 5 (deterministic); executing a plan computes nothing. A convolution
 * whose math type is TENSOR_OP_MATH_ALLOW_CONVERSION varies too, as the
 * fake cuBLAS's TF32 does. The training calls (BatchNorm, RNN, CTC) are in
 * cudnn_train.c, the fused convolution, pooling and the spatial
 * transformer in cudnn_ops.c, built into the same library.
 */
#include <string.h>

#include "fake.h"

struct cudnnContext {
    cudaStream_t stream;
};
struct cudnnTensorStruct {
    int n, c, h, w, type;
    int ns, cs, hs, ws; /* strides, in elements */
};
struct cudnnFilterStruct {
    int k, c, h, w, type;
};
struct cudnnConvolutionStruct {
    int pad_h, pad_w, u, v, dil_h, dil_w;
    int math; /* cudnnSetConvolutionMathType; ALLOW_CONVERSION varies, as TF32 does */
};

FAKE_EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *h)
{
    *h = calloc(1, sizeof **h);
    return *h ? CUDNN_STATUS_SUCCESS : 1;
}

FAKE_EXPORT cudnnStatus_t cudnnGetStream(cudnnHandle_t h, cudaStream_t *stream)
{
    *stream = h->stream;
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : 1;
}

FAKE_EXPORT cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, int format,
                                                     cudnnDataType_t type, int n, int c, int h,
                                                     int w)
{
    if (format != CUDNN_TENSOR_NCHW)
        return 9; /* CUDNN_STATUS_NOT_SUPPORTED */
    return cudnnSetTensor4dDescriptorEx(d, type, n, c, h, w, c * h * w, h * w, w, 1);
}

FAKE_EXPORT cudnnStatus_t cudnnSetTensor4dDescriptorEx(cudnnTensorDescriptor_t d,
                                                       cudnnDataType_t type, int n, int c, int h,
                                                       int w, int ns, int cs, int hs, int ws)
{
    if (type != CUDNN_DATA_FLOAT)
        return 9;
    *d = (struct cudnnTensorStruct){ n, c, h, w, type, ns, cs, hs, ws };
    return CUDNN_STATUS_SUCCESS;
}

/* The offset of element (n, c, h, w) of t, in elements. */
static int64_t at(const struct cudnnTensorStruct *t, int n, int c, int h, int w)
{
    return (int64_t)n * t->ns + (int64_t)c * t->cs + (int64_t)h * t->hs + (int64_t)w * t->ws;
}

FAKE_EXPORT cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t d, int req,
                                                     cudnnDataType_t *type, int *nb, int dims[],
                                                     int strides[])
{
    int v[4] = { d->n, d->c, d->h, d->w }, s[4] = { d->ns, d->cs, d->hs, d->ws };
    *type = d->type;
    *nb = 4;
    for (int i = 0; i < 4 && i < req; i++) {
        dims[i] = v[i];
        strides[i] = s[i];
    }
    return CUDNN_STATUS_SUCCESS;
}

/* As cuDNN: the bytes up to the last element, padding included. */
FAKE_EXPORT cudnnStatus_t cudnnGetTensorSizeInBytes(const cudnnTensorDescriptor_t d, size_t *size)
{
    *size = (size_t)(at(d, d->n - 1, d->c - 1, d->h - 1, d->w - 1) + 1) * sizeof(float);
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : 1;
}

FAKE_EXPORT cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d,
                                                     cudnnDataType_t type, int format, int k,
                                                     int c, int h, int w)
{
    if (format != CUDNN_TENSOR_NCHW || type != CUDNN_DATA_FLOAT)
        return 9;
    *d = (struct cudnnFilterStruct){ k, c, h, w, type };
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnGetFilterSizeInBytes(const cudnnFilterDescriptor_t d, size_t *size)
{
    *size = (size_t)d->k * (size_t)d->c * (size_t)d->h * (size_t)d->w * sizeof(float);
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : 1;
}

FAKE_EXPORT cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d,
                                                          int pad_h, int pad_w, int u, int v,
                                                          int dil_h, int dil_w, int mode,
                                                          cudnnDataType_t type)
{
    if (mode != CUDNN_CROSS_CORRELATION || type != CUDNN_DATA_FLOAT || u < 1 || v < 1)
        return 9;
    *d = (struct cudnnConvolutionStruct){ pad_h, pad_w, u, v, dil_h, dil_w, 0 };
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, int math)
{
    d->math = math;
    return CUDNN_STATUS_SUCCESS;
}

/* The list every query returns: fastest first. */
static const struct detshim_cudnn_algo_perf offered[] = {
    { FAKE_CUDNN_ALGO_FAST_NONDET, CUDNN_STATUS_SUCCESS, 0.1f, 0, CUDNN_NON_DETERMINISTIC, 0,
      { 0 } },
    { 1, CUDNN_STATUS_SUCCESS, 0.2f, 0, CUDNN_DETERMINISTIC, 0, { 0 } },
    { 0, CUDNN_STATUS_SUCCESS, 0.3f, 0, CUDNN_DETERMINISTIC, 0, { 0 } },
};

/* FAKE_CUDNN_DET_MEMORY=N: the deterministic algorithms need N bytes of
 * workspace (0 otherwise), for a program whose workspace fits none. */
static cudnnStatus_t list(int requested, int *returned, struct detshim_cudnn_algo_perf *perf)
{
    const char *mem = getenv("FAKE_CUDNN_DET_MEMORY");
    int n = 0;
    for (; n < requested && n < (int)(sizeof offered / sizeof *offered); n++) {
        perf[n] = offered[n];
        if (mem && perf[n].determinism == CUDNN_DETERMINISTIC)
            perf[n].memory = (size_t)strtoull(mem, NULL, 10);
    }
    *returned = n;
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t y, const int requested,
    int *returned, cudnnConvolutionFwdAlgoPerf_t *perf)
{
    (void)h, (void)x, (void)w, (void)conv, (void)y;
    return list(requested, returned, perf);
}

FAKE_EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t h, const cudnnTensorDescriptor_t xd, const void *x,
    const cudnnFilterDescriptor_t wd, const void *w, const cudnnConvolutionDescriptor_t conv,
    const cudnnTensorDescriptor_t yd, void *y, const int requested, int *returned,
    cudnnConvolutionFwdAlgoPerf_t *perf, void *ws, size_t wsize)
{
    (void)h, (void)xd, (void)x, (void)wd, (void)w, (void)conv, (void)yd, (void)y, (void)ws;
    (void)wsize;
    return list(requested, returned, perf);
}

FAKE_EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t y, const int requested,
    int *returned, cudnnConvolutionFwdAlgoPerf_t *perf)
{
    (void)h, (void)x, (void)w, (void)conv, (void)y;
    return list(requested, returned, perf);
}

cudnnStatus_t fake_conv_forward(
    cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd, const void *xv,
    const cudnnFilterDescriptor_t wd, const void *wv, const cudnnConvolutionDescriptor_t cd,
    cudnnConvolutionFwdAlgo_t algo, void *workspace, size_t wsize, const void *beta,
    const cudnnTensorDescriptor_t yd, void *yv)
{
    (void)h, (void)workspace, (void)wsize;
    const float *x = xv, *w = wv;
    float *y = yv, al = *(const float *)alpha, be = *(const float *)beta;
    int64_t taps = (int64_t)wd->c * wd->h * wd->w;
    int64_t *order = malloc(sizeof *order * (size_t)taps);
    if (!order)
        return 1;
    for (int n = 0; n < yd->n; n++)
        for (int k = 0; k < yd->c; k++)
            for (int oh = 0; oh < yd->h; oh++)
                for (int ow = 0; ow < yd->w; ow++) {
                    fake_order(order, taps, algo == FAKE_CUDNN_ALGO_FAST_NONDET ||
                                                cd->math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
                    float s = 0;
                    for (int64_t t = 0; t < taps; t++) {
                        int c = (int)(order[t] / (wd->h * wd->w));
                        int r = (int)(order[t] / wd->w % wd->h), q = (int)(order[t] % wd->w);
                        int ih = oh * cd->u - cd->pad_h + r * cd->dil_h;
                        int iw = ow * cd->v - cd->pad_w + q * cd->dil_w;
                        if (ih < 0 || ih >= xd->h || iw < 0 || iw >= xd->w)
                            continue;
                        s += x[at(xd, n, c, ih, iw)] *
                             w[((k * wd->c + c) * wd->h + r) * wd->w + q];
                    }
                    float *out = &y[at(yd, n, k, oh, ow)];
                    *out = al * s + (be != 0 ? be * *out : 0);
                }
    free(order);
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnConvolutionForward(
    cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd, const void *xv,
    const cudnnFilterDescriptor_t wd, const void *wv, const cudnnConvolutionDescriptor_t cd,
    cudnnConvolutionFwdAlgo_t algo, void *workspace, size_t wsize, const void *beta,
    const cudnnTensorDescriptor_t yd, void *yv)
{
    return fake_conv_forward(h, alpha, xd, xv, wd, wv, cd, algo, workspace, wsize, beta, yd, yv);
}

/* The backend API: every descriptor is one of these. */
struct backend {
    int type;
    int64_t engine; /* ENGINE, ENGINECFG, EXECUTION_PLAN: the engine's global index */
};

static const int64_t engines[] = { 7, 3, 5 };

FAKE_EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                                       cudnnBackendDescriptor_t *d)
{
    struct backend *b = calloc(1, sizeof *b);
    if (!b)
        return 1;
    b->type = type;
    b->engine = -1;
    *d = b;
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d)
{
    (void)d;
    return CUDNN_STATUS_SUCCESS;
}

/* Sets an engine's global index, a config's engine or a plan's config,
 * as a program building a plan on an engine of its own choice does; every
 * other attribute is accepted and ignored. */
FAKE_EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d,
                                                   cudnnBackendAttributeName_t attr,
                                                   cudnnBackendAttributeType_t type, int64_t n,
                                                   const void *values)
{
    struct backend *b = d;
    if ((attr == CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG || attr == CUDNN_ATTR_ENGINECFG_ENGINE) &&
        type == CUDNN_TYPE_BACKEND_DESCRIPTOR && n == 1)
        b->engine = (*(struct backend *const *)values)->engine;
    if (attr == CUDNN_ATTR_ENGINE_GLOBAL_INDEX && type == CUDNN_TYPE_INT64 && n == 1)
        b->engine = *(const int64_t *)values;
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d,
                                                   cudnnBackendAttributeName_t attr,
                                                   cudnnBackendAttributeType_t type,
                                                   int64_t requested, int64_t *count, void *out)
{
    const struct backend *b = d;
    if (attr == CUDNN_ATTR_ENGINEHEUR_RESULTS && type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
        int64_t n = 0;
        for (; out && n < requested && n < 3; n++)
            ((struct backend **)out)[n]->engine = engines[n];
        *count = out ? n : 3;
        return CUDNN_STATUS_SUCCESS;
    }
    if ((attr == CUDNN_ATTR_ENGINECFG_ENGINE || attr == CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG) &&
        type == CUDNN_TYPE_BACKEND_DESCRIPTOR && requested >= 1) {
        (*(struct backend **)out)->engine = b->engine;
        *count = 1;
        return CUDNN_STATUS_SUCCESS;
    }
    if (attr == CUDNN_ATTR_ENGINE_GLOBAL_INDEX && type == CUDNN_TYPE_INT64 && requested >= 1) {
        *(int64_t *)out = b->engine;
        *count = 1;
        return CUDNN_STATUS_SUCCESS;
    }
    if (attr == CUDNN_ATTR_ENGINE_NUMERICAL_NOTE && type == CUDNN_TYPE_NUMERICAL_NOTE) {
        *count = b->engine == engines[0] && requested >= 1;
        if (*count)
            *(cudnnBackendNumericalNote_t *)out = CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC;
        return CUDNN_STATUS_SUCCESS;
    }
    return 3; /* CUDNN_STATUS_BAD_PARAM */
}

FAKE_EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
                                              cudnnBackendDescriptor_t pack)
{
    (void)h, (void)pack;
    return ((struct backend *)plan)->engine >= 0 ? CUDNN_STATUS_SUCCESS : 3;
}
