/* The fake cuDNN's training calls beyond convolution (built into
 * libcudnn.so.9 with cudnn.c), FP32 on host memory, small and simplified:
 * BatchNorm (spatial modes), a one-layer tanh RNN with dropout on its
 * output, CTC loss (a stand-in cost, not the real recursion), the fused
 * convolution-bias-activation forward, pooling forward and the spatial
 * transformer. The results are stand-ins; what is faithful is where a
 * real cuDNN may vary run to run, and there the fake sums in a per-run
 * shuffled order (fake.h):
 *   - BatchNorm in CUDNN_BATCHNORM_SPATIAL_PERSISTENT (atomic reductions);
 *   - the RNN's sums unless CUBLAS_WORKSPACE_CONFIG names one buffer size
 *     (cuDNN's RNNs call cuBLAS, which otherwise picks kernels by free
 *     buffer);
 *   - the RNN's dropout mask comes from the seed its states were made
 *     with (cudnnSetDropoutDescriptor; Restore reuses the states);
 *   - CTC loss with CUDNN_CTC_LOSS_ALGO_NON_DETERMINISTIC;
 *   - the fused convolution with the nondeterministic algorithm (cudnn.c);
 *   - cudnnSpatialTfSamplerBackward always (cuDNN has no deterministic
 *     mode for it).
 */
#include <math.h>
#include <string.h>

#include "fake.h"

/* sum over l < n of expr, shuffled when vary. */
#define SUM(n, vary, acc, expr)                                                            \
    do {                                                                                   \
        int64_t *ord_ = malloc(sizeof *ord_ * (size_t)((n) > 0 ? (n) : 1));                \
        fake_order(ord_, (n), (vary));                                                     \
        for (int64_t q_ = 0; q_ < (n); q_++) {                                             \
            int64_t l = ord_[q_];                                                          \
            acc += (expr);                                                                 \
        }                                                                                  \
        free(ord_);                                                                        \
    } while (0)

/* ---- BatchNorm: per channel over (n, h, w) ------------------------------ */
/* FAKE_CUDNN_BN_NO_SPATIAL=1: a cuDNN whose SPATIAL training kernels
 * refuse the tensor and whose persistent ones need no scratch, for the
 * shim's fallback. */
static int no_spatial(int mode)
{
    return mode == CUDNN_BATCHNORM_SPATIAL && getenv("FAKE_CUDNN_BN_NO_SPATIAL");
}

#define BN_ELEM(t, l) t4_off(&(t), (int)((l) / ((t).d[2] * (t).d[3])), c, \
                          (int)((l) / (t).d[3] % (t).d[2]), (int)((l) % (t).d[3]))

FAKE_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, const void *alpha,
    const void *beta, const cudnnTensorDescriptor_t xDesc, const void *xv,
    const cudnnTensorDescriptor_t zDesc, const void *z, const cudnnTensorDescriptor_t yDesc,
    void *yv, const cudnnTensorDescriptor_t bnDesc, const void *scale, const void *bias,
    double factor, void *rmean, void *rvar, double eps, void *smean, void *sinv,
    cudnnActivationDescriptor_t act, void *ws, size_t wsSize, void *reserve, size_t rsSize)
{
    (void)handle, (void)zDesc, (void)z, (void)bnDesc, (void)act, (void)ws, (void)wsSize;
    (void)reserve, (void)rsSize;
    if (mode == CUDNN_BATCHNORM_PER_ACTIVATION || ops != 0 || no_spatial(mode))
        return CUDNN_STATUS_NOT_SUPPORTED;
    struct t4 x = t4_of(xDesc), y = t4_of(yDesc);
    const float *xs = xv, *g = scale, *b = bias;
    float *ys = yv, al = *(const float *)alpha, be = *(const float *)beta;
    int64_t m = (int64_t)x.d[0] * x.d[2] * x.d[3];
    int vary = mode == CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
    for (int c = 0; c < x.d[1]; c++) {
        float sum = 0, sq = 0;
        SUM(m, vary, sum, xs[BN_ELEM(x, l)]);
        float mean = sum / (float)m;
        SUM(m, vary, sq, (xs[BN_ELEM(x, l)] - mean) * (xs[BN_ELEM(x, l)] - mean));
        float var = sq / (float)m, inv = 1.0f / sqrtf(var + (float)eps);
        for (int64_t l = 0; l < m; l++) {
            float *out = &ys[BN_ELEM(y, l)];
            float v = g[c] * (xs[BN_ELEM(x, l)] - mean) * inv + b[c];
            *out = al * v + (be != 0 ? be * *out : 0);
        }
        if (rmean)
            ((float *)rmean)[c] = (float)((1 - factor) * ((float *)rmean)[c] + factor * mean);
        if (rvar)
            ((float *)rvar)[c] = (float)((1 - factor) * ((float *)rvar)[c] +
                                         factor * var * (float)m / (float)(m > 1 ? m - 1 : 1));
        if (smean)
            ((float *)smean)[c] = mean;
        if (sinv)
            ((float *)sinv)[c] = inv;
    }
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops,
    const void *alphaD, const void *betaD, const void *alphaP, const void *betaP,
    const cudnnTensorDescriptor_t xDesc, const void *xv, const cudnnTensorDescriptor_t yDesc,
    const void *yv, const cudnnTensorDescriptor_t dyDesc, const void *dyv,
    const cudnnTensorDescriptor_t dzDesc, void *dz, const cudnnTensorDescriptor_t dxDesc,
    void *dxv, const cudnnTensorDescriptor_t bnDesc, const void *scale, const void *bias,
    void *dscale, void *dbias, double eps, const void *smean, const void *sinv,
    cudnnActivationDescriptor_t act, void *ws, size_t wsSize, void *reserve, size_t rsSize)
{
    (void)handle, (void)yDesc, (void)yv, (void)dzDesc, (void)dz, (void)bnDesc, (void)bias;
    (void)eps, (void)act, (void)ws, (void)wsSize, (void)reserve, (void)rsSize;
    if (mode == CUDNN_BATCHNORM_PER_ACTIVATION || ops != 0 || !smean || !sinv || no_spatial(mode))
        return CUDNN_STATUS_NOT_SUPPORTED;
    struct t4 x = t4_of(xDesc), dy = t4_of(dyDesc), dx = t4_of(dxDesc);
    const float *xs = xv, *dys = dyv, *g = scale;
    float *dxs = dxv, *ds = dscale, *db = dbias;
    float ad = *(const float *)alphaD, bd = *(const float *)betaD;
    float ap = *(const float *)alphaP, bp = *(const float *)betaP;
    int64_t m = (int64_t)x.d[0] * x.d[2] * x.d[3];
    int vary = mode == CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
    for (int c = 0; c < x.d[1]; c++) {
        float mean = ((const float *)smean)[c], inv = ((const float *)sinv)[c];
        float sdy = 0, sdyx = 0;
        SUM(m, vary, sdy, dys[BN_ELEM(dy, l)]);
        SUM(m, vary, sdyx, dys[BN_ELEM(dy, l)] * (xs[BN_ELEM(x, l)] - mean) * inv);
        for (int64_t l = 0; l < m; l++) {
            float xhat = (xs[BN_ELEM(x, l)] - mean) * inv;
            float v = g[c] * inv / (float)m * ((float)m * dys[BN_ELEM(dy, l)] - sdy - xhat * sdyx);
            float *out = &dxs[BN_ELEM(dx, l)];
            *out = ad * v + (bd != 0 ? bd * *out : 0);
        }
        ds[c] = ap * sdyx + (bp != 0 ? bp * ds[c] : 0);
        db[c] = ap * sdy + (bp != 0 ? bp * db[c] : 0);
    }
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnBatchNormalizationForwardInference(
    cudnnHandle_t handle, cudnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const cudnnTensorDescriptor_t xDesc, const void *xv, const cudnnTensorDescriptor_t yDesc,
    void *yv, const cudnnTensorDescriptor_t bnDesc, const void *scale, const void *bias,
    const void *mean, const void *var, double eps)
{
    (void)handle, (void)mode, (void)bnDesc;
    struct t4 x = t4_of(xDesc), y = t4_of(yDesc);
    const float *xs = xv, *g = scale, *b = bias, *mu = mean, *v = var;
    float *ys = yv, al = *(const float *)alpha, be = *(const float *)beta;
    int64_t m = (int64_t)x.d[0] * x.d[2] * x.d[3];
    for (int c = 0; c < x.d[1]; c++)
        for (int64_t l = 0; l < m; l++) {
            float r = g[c] * (xs[BN_ELEM(x, l)] - mu[c]) / sqrtf(v[c] + (float)eps) + b[c];
            float *out = &ys[BN_ELEM(y, l)];
            *out = al * r + (be != 0 ? be * *out : 0);
        }
    return CUDNN_STATUS_SUCCESS;
}

/* SPATIAL needs no scratch; the persistent kernels a little. */
#define BN_SIZE(mode) \
    ((mode) == CUDNN_BATCHNORM_SPATIAL_PERSISTENT && !getenv("FAKE_CUDNN_BN_NO_SPATIAL") ? 256 : 0)
FAKE_EXPORT cudnnStatus_t cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
    cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops,
    const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t z,
    const cudnnTensorDescriptor_t y, const cudnnTensorDescriptor_t bn,
    const cudnnActivationDescriptor_t act, size_t *size)
{
    (void)h, (void)ops, (void)x, (void)z, (void)y, (void)bn, (void)act;
    *size = BN_SIZE(mode);
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnGetBatchNormalizationBackwardExWorkspaceSize(
    cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops,
    const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t y,
    const cudnnTensorDescriptor_t dy, const cudnnTensorDescriptor_t dz,
    const cudnnTensorDescriptor_t dx, const cudnnTensorDescriptor_t bn,
    const cudnnActivationDescriptor_t act, size_t *size)
{
    (void)h, (void)ops, (void)x, (void)y, (void)dy, (void)dz, (void)dx, (void)bn, (void)act;
    *size = BN_SIZE(mode);
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnGetBatchNormalizationTrainingExReserveSpaceSize(
    cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops,
    const cudnnActivationDescriptor_t act, const cudnnTensorDescriptor_t x, size_t *size)
{
    (void)h, (void)ops, (void)act, (void)x;
    *size = BN_SIZE(mode);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- Dropout and the RNN ------------------------------------------------- */
struct cudnnDropoutStruct {
    float p;
    const uint64_t *states; /* states[0]: the seed they were made with */
};
struct cudnnRNNStruct {
    int algo, cell, bias, dir, input, dtype, mprec, math;
    int32_t isize, hsize, psize, layers;
    cudnnDropoutDescriptor_t drop;
    uint32_t aux;
};
struct cudnnRNNDataStruct {
    int type, layout, seq, batch, vec;
};

FAKE_EXPORT cudnnStatus_t cudnnCreateDropoutDescriptor(cudnnDropoutDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : 1;
}

FAKE_EXPORT cudnnStatus_t cudnnDropoutGetStatesSize(cudnnHandle_t h, size_t *size)
{
    (void)h;
    *size = 64;
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnSetDropoutDescriptor(cudnnDropoutDescriptor_t d, cudnnHandle_t h,
                                                    float p, void *states, size_t size,
                                                    unsigned long long seed)
{
    (void)h;
    if (size < 64)
        return CUDNN_STATUS_BAD_PARAM;
    uint64_t *s = states;
    s[0] = seed;
    for (int i = 1; i < 8; i++)
        s[i] = fake_mix(seed + (uint64_t)i);
    d->p = p;
    d->states = s;
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnRestoreDropoutDescriptor(cudnnDropoutDescriptor_t d,
                                                        cudnnHandle_t h, float p, void *states,
                                                        size_t size, unsigned long long seed)
{
    (void)h, (void)size, (void)seed;
    d->p = p;
    d->states = states;
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnCreateRNNDescriptor(cudnnRNNDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : 1;
}

FAKE_EXPORT cudnnStatus_t cudnnSetRNNDescriptor_v8(cudnnRNNDescriptor_t d, int algo, int cell,
                                                   int bias, int dir, int input, int dtype,
                                                   int mprec, int math, int32_t isize,
                                                   int32_t hsize, int32_t psize, int32_t layers,
                                                   cudnnDropoutDescriptor_t drop, uint32_t aux)
{
    if (layers != 1 || dir != 0 || dtype != CUDNN_DATA_FLOAT)
        return CUDNN_STATUS_NOT_SUPPORTED;
    *d = (struct cudnnRNNStruct){ algo, cell, bias, dir, input, dtype, mprec, math,
                                  isize, hsize, psize, layers, drop, aux };
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnGetRNNDescriptor_v8(cudnnRNNDescriptor_t d, int *algo, int *cell,
                                                   int *bias, int *dir, int *input, int *dtype,
                                                   int *mprec, int *math, int32_t *isize,
                                                   int32_t *hsize, int32_t *psize,
                                                   int32_t *layers,
                                                   cudnnDropoutDescriptor_t *drop, uint32_t *aux)
{
    *algo = d->algo, *cell = d->cell, *bias = d->bias, *dir = d->dir, *input = d->input;
    *dtype = d->dtype, *mprec = d->mprec, *math = d->math, *isize = d->isize;
    *hsize = d->hsize, *psize = d->psize, *layers = d->layers, *drop = d->drop, *aux = d->aux;
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnCreateRNNDataDescriptor(cudnnRNNDataDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : 1;
}

FAKE_EXPORT cudnnStatus_t cudnnSetRNNDataDescriptor(cudnnRNNDataDescriptor_t d, int type,
                                                    int layout, int seq, int batch, int vec,
                                                    const int lengths[], void *fill)
{
    (void)lengths, (void)fill;
    *d = (struct cudnnRNNDataStruct){ type, layout, seq, batch, vec };
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnGetRNNDataDescriptor(cudnnRNNDataDescriptor_t d, int *type,
                                                    int *layout, int *seq, int *batch, int *vec,
                                                    int requested, int lengths[], void *fill)
{
    (void)fill;
    *type = d->type, *layout = d->layout, *seq = d->seq, *batch = d->batch, *vec = d->vec;
    for (int i = 0; i < requested && i < d->batch; i++)
        lengths[i] = d->seq;
    return CUDNN_STATUS_SUCCESS;
}

/* W (hidden x input), U (hidden x hidden), b (hidden), row-major. */
FAKE_EXPORT cudnnStatus_t cudnnGetRNNWeightSpaceSize(cudnnHandle_t h, cudnnRNNDescriptor_t d,
                                                     size_t *size)
{
    (void)h;
    *size = (size_t)(d->hsize * d->isize + d->hsize * d->hsize + d->hsize) * sizeof(float);
    return CUDNN_STATUS_SUCCESS;
}

/* The reserve space keeps every step's output, then backward-data's
 * gradients for backward-weights. */
FAKE_EXPORT cudnnStatus_t cudnnGetRNNTempSpaceSizes(cudnnHandle_t h, cudnnRNNDescriptor_t d,
                                                    int mode, cudnnRNNDataDescriptor_t x,
                                                    size_t *ws, size_t *reserve)
{
    (void)h, (void)mode;
    *ws = 0;
    *reserve = (size_t)2 * (size_t)x->seq * (size_t)x->batch * (size_t)d->hsize * sizeof(float);
    return CUDNN_STATUS_SUCCESS;
}

/* cuBLAS inside cuDNN's RNN: deterministic with one buffer size only. */
static int rnn_varies(void)
{
    const char *v = getenv("CUBLAS_WORKSPACE_CONFIG");
    int colons = 0;
    for (; v && *v; v++)
        colons += *v == ':';
    return colons != 2;
}

FAKE_EXPORT cudnnStatus_t cudnnRNNForward(cudnnHandle_t handle, cudnnRNNDescriptor_t d, int mode,
                                          const int32_t seqlens[], cudnnRNNDataDescriptor_t xd,
                                          const void *xv, cudnnRNNDataDescriptor_t yd, void *yv,
                                          cudnnTensorDescriptor_t hDesc, const void *hx,
                                          void *hy, cudnnTensorDescriptor_t cDesc,
                                          const void *cx, void *cy, size_t wsize,
                                          const void *weights, size_t wss, void *ws,
                                          size_t rss, void *reserve)
{
    (void)handle, (void)seqlens, (void)yd, (void)hDesc, (void)cDesc, (void)cx, (void)cy;
    (void)wsize, (void)wss, (void)ws, (void)rss;
    int H = d->hsize, I = d->isize, N = xd->batch, T = xd->seq, vary = rnn_varies();
    const float *x = xv, *W = weights, *U = W + H * I, *b = U + H * H;
    float *y = yv, *saved = reserve;
    float *h = calloc((size_t)N * (size_t)H, sizeof *h), *next = malloc(sizeof *h * (size_t)N * (size_t)H);
    if (hx)
        memcpy(h, hx, sizeof *h * (size_t)N * (size_t)H);
    float p = d->drop ? d->drop->p : 0;
    uint64_t seed = d->drop && d->drop->states ? d->drop->states[0] : 0;
    for (int t = 0; t < T; t++) {
        for (int n = 0; n < N; n++)
            for (int k = 0; k < H; k++) {
                float s = b[k];
                const float *xt = x + ((int64_t)t * N + n) * I, *hn = h + (int64_t)n * H;
                SUM(I, vary, s, W[k * I + l] * xt[l]);
                SUM(H, vary, s, U[k * H + l] * hn[l]);
                next[(int64_t)n * H + k] = tanhf(s);
            }
        memcpy(h, next, sizeof *h * (size_t)N * (size_t)H);
        for (int64_t e = 0; e < (int64_t)N * H; e++) {
            float v = h[e];
            if (mode == CUDNN_FWD_MODE_TRAINING && p > 0) {
                uint64_t r = fake_mix(seed ^ fake_mix((uint64_t)(t * N * H + e)));
                v = (double)(r >> 11) / 9007199254740992.0 < p ? 0 : v / (1 - p);
            }
            y[(int64_t)t * N * H + e] = v;
            if (saved)
                saved[(int64_t)t * N * H + e] = h[e];
        }
    }
    if (hy)
        memcpy(hy, h, sizeof *h * (size_t)N * (size_t)H);
    free(h);
    free(next);
    return CUDNN_STATUS_SUCCESS;
}

/* A stand-in gradient: each step's through tanh, not through time. */
FAKE_EXPORT cudnnStatus_t cudnnRNNBackwardData_v8(
    cudnnHandle_t handle, cudnnRNNDescriptor_t d, const int32_t seqlens[],
    cudnnRNNDataDescriptor_t yd, const void *yv, const void *dyv, cudnnRNNDataDescriptor_t xd,
    void *dxv, cudnnTensorDescriptor_t hDesc, const void *hx, const void *dhy, void *dhx,
    cudnnTensorDescriptor_t cDesc, const void *cx, const void *dcy, void *dcx, size_t wsize,
    const void *weights, size_t wss, void *ws, size_t rss, void *reserve)
{
    (void)handle, (void)seqlens, (void)yv, (void)xd, (void)hDesc, (void)hx, (void)dhy;
    (void)cDesc, (void)cx, (void)dcy, (void)dcx, (void)wsize, (void)wss, (void)ws, (void)rss;
    int H = d->hsize, I = d->isize, N = yd->batch, T = yd->seq, vary = rnn_varies();
    const float *W = weights, *dy = dyv, *saved = reserve;
    float *dx = dxv, *g = (float *)reserve + (int64_t)T * N * H;
    for (int64_t e = 0; e < (int64_t)T * N * H; e++)
        g[e] = dy[e] * (1 - saved[e] * saved[e]);
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++)
            for (int i = 0; i < I; i++) {
                float s = 0;
                const float *gt = g + ((int64_t)t * N + n) * H;
                SUM(H, vary, s, W[l * I + i] * gt[l]);
                dx[((int64_t)t * N + n) * I + i] = s;
            }
    if (dhx)
        memset(dhx, 0, sizeof(float) * (size_t)N * (size_t)H);
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnRNNBackwardWeights_v8(
    cudnnHandle_t handle, cudnnRNNDescriptor_t d, int add, const int32_t seqlens[],
    cudnnRNNDataDescriptor_t xd, const void *xv, cudnnTensorDescriptor_t hDesc, const void *hx,
    cudnnRNNDataDescriptor_t yd, const void *yv, size_t wsize, void *dweights, size_t wss,
    void *ws, size_t rss, void *reserve)
{
    (void)handle, (void)seqlens, (void)hDesc, (void)hx, (void)yd, (void)yv, (void)wsize;
    (void)wss, (void)ws, (void)rss;
    int H = d->hsize, I = d->isize, N = xd->batch, T = xd->seq, vary = rnn_varies();
    const float *x = xv, *saved = reserve, *g = (const float *)reserve + (int64_t)T * N * H;
    float *dW = dweights, *dU = dW + H * I, *db = dU + H * H;
    int64_t steps = (int64_t)T * N;
    for (int k = 0; k < H; k++) {
        for (int i = 0; i < I; i++) {
            float s = add == CUDNN_WGRAD_MODE_ADD ? dW[k * I + i] : 0;
            SUM(steps, vary, s, g[l * H + k] * x[l * I + i]);
            dW[k * I + i] = s;
        }
        for (int j = 0; j < H; j++) {
            float s = add == CUDNN_WGRAD_MODE_ADD ? dU[k * H + j] : 0;
            /* h_{t-1}: the previous step's saved output, zero at t = 0 */
            SUM(steps, vary, s, l >= N ? g[l * H + k] * saved[(l - N) * H + j] : 0.0f);
            dU[k * H + j] = s;
        }
        float s = add == CUDNN_WGRAD_MODE_ADD ? db[k] : 0;
        SUM(steps, vary, s, g[l * H + k]);
        db[k] = s;
    }
    return CUDNN_STATUS_SUCCESS;
}

/* ---- CTC: a stand-in cost per sequence ----------------------------------- */
struct cudnnCTCLossStruct {
    int type;
};

FAKE_EXPORT cudnnStatus_t cudnnCreateCTCLossDescriptor(cudnnCTCLossDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : 1;
}

FAKE_EXPORT cudnnStatus_t cudnnSetCTCLossDescriptor(cudnnCTCLossDescriptor_t d, int type)
{
    d->type = type;
    return CUDNN_STATUS_SUCCESS;
}

/* cost[n] = -sum_t log probs[t][n][label(n, t)], label cycling over the
 * sequence's labels; gradients probs - onehot. probs is T x N x A packed. */
static cudnnStatus_t ctc(cudnnTensorDescriptor_t pd, const float *probs, const int *labels,
                         const int *lens, const int *inlens, float *costs, float *grads, int algo)
{
    struct t4 t = t4_of(pd);
    int T = t.d[0], N = t.d[1], A = t.d[2];
    const int *lab = labels;
    for (int n = 0; n < N; n++) {
        int L = lens[n] > 0 ? lens[n] : 1, steps = inlens[n] < T ? inlens[n] : T;
        float s = 0;
        SUM(steps, algo == CUDNN_CTC_LOSS_ALGO_NON_DETERMINISTIC, s,
            -logf(probs[(l * N + n) * A + lab[l % L] % A] + 1e-6f));
        costs[n] = s;
        for (int step = 0; grads && step < T; step++)
            for (int a = 0; a < A; a++)
                grads[((int64_t)step * N + n) * A + a] =
                    probs[((int64_t)step * N + n) * A + a] - (a == lab[step % L] % A);
        lab += lens[n];
    }
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnCTCLoss(cudnnHandle_t h, const cudnnTensorDescriptor_t pd,
                                       const void *probs, const int labels[], const int lens[],
                                       const int inlens[], void *costs,
                                       const cudnnTensorDescriptor_t gd, void *grads, int algo,
                                       cudnnCTCLossDescriptor_t desc, void *ws, size_t wsize)
{
    (void)h, (void)gd, (void)desc, (void)ws, (void)wsize;
    return ctc(pd, probs, labels, lens, inlens, costs, grads, algo);
}

FAKE_EXPORT cudnnStatus_t cudnnCTCLoss_v8(cudnnHandle_t h, int algo, cudnnCTCLossDescriptor_t desc,
                                          const cudnnTensorDescriptor_t pd, const void *probs,
                                          const int labels[], const int lens[],
                                          const int inlens[], void *costs,
                                          const cudnnTensorDescriptor_t gd, void *grads,
                                          size_t wsize, void *ws)
{
    (void)h, (void)gd, (void)desc, (void)ws, (void)wsize;
    return ctc(pd, probs, labels, lens, inlens, costs, grads, algo);
}

FAKE_EXPORT cudnnStatus_t cudnnGetCTCLossWorkspaceSize(cudnnHandle_t h,
                                                       const cudnnTensorDescriptor_t pd,
                                                       const cudnnTensorDescriptor_t gd,
                                                       const int *labels, const int *lens,
                                                       const int *inlens, int algo,
                                                       cudnnCTCLossDescriptor_t desc,
                                                       size_t *size)
{
    (void)h, (void)pd, (void)gd, (void)labels, (void)lens, (void)inlens, (void)desc;
    *size = algo == CUDNN_CTC_LOSS_ALGO_DETERMINISTIC ? 512 : 128;
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnGetCTCLossWorkspaceSize_v8(cudnnHandle_t h, int algo,
                                                          cudnnCTCLossDescriptor_t desc,
                                                          const cudnnTensorDescriptor_t pd,
                                                          const cudnnTensorDescriptor_t gd,
                                                          size_t *size)
{
    return cudnnGetCTCLossWorkspaceSize(h, pd, gd, NULL, NULL, NULL, algo, desc, size);
}
