/* The fake cuDNN's fused convolution-bias-activation forward, pooling
 * forward and spatial transformer (built into libcudnn.so.9 with cudnn.c
 * and cudnn_train.c), FP32 NCHW on host memory. The fused convolution
 * runs the fake's convolution (its nondeterministic algorithm varies),
 * then alpha2 z, the per-channel bias and ReLU or identity. The sampler's
 * backward scatters into dx in a per-run shuffled order every time: cuDNN
 * documents it as using atomics with no deterministic mode.
 */
#include <math.h>
#include <string.h>

#include "fake.h"

struct cudnnActivationStruct {
    int mode;
};

FAKE_EXPORT cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : 1;
}

FAKE_EXPORT cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d, int mode,
                                                       int nan, double coef)
{
    (void)nan, (void)coef;
    d->mode = mode;
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t h, const void *alpha1, const cudnnTensorDescriptor_t xd, const void *x,
    const cudnnFilterDescriptor_t wd, const void *w, const cudnnConvolutionDescriptor_t cd,
    cudnnConvolutionFwdAlgo_t algo, void *ws, size_t wsize, const void *alpha2,
    const cudnnTensorDescriptor_t zd, const void *zv, const cudnnTensorDescriptor_t bd,
    const void *biasv, const cudnnActivationDescriptor_t act, const cudnnTensorDescriptor_t yd,
    void *yv)
{
    (void)bd;
    float zero = 0, a2 = *(const float *)alpha2;
    struct t4 y = t4_of(yd), z = t4_of(zd);
    /* z may be y itself: keep it before the convolution overwrites y. */
    size_t count = (size_t)y.d[0] * y.d[1] * y.d[2] * y.d[3];
    float *zc = malloc(count * sizeof *zc);
    const float *zs = zv, *bias = biasv;
    float *ys = yv;
    size_t e = 0;
    for (int n = 0; n < y.d[0]; n++)
        for (int c = 0; c < y.d[1]; c++)
            for (int i = 0; i < y.d[2]; i++)
                for (int j = 0; j < y.d[3]; j++)
                    zc[e++] = a2 != 0 ? zs[t4_off(&z, n, c, i, j)] : 0;
    cudnnStatus_t st = fake_conv_forward(h, alpha1, xd, x, wd, w, cd, algo, ws, wsize, &zero,
                                         yd, yv);
    e = 0;
    for (int n = 0; n < y.d[0]; n++)
        for (int c = 0; c < y.d[1]; c++)
            for (int i = 0; i < y.d[2]; i++)
                for (int j = 0; j < y.d[3]; j++) {
                    float *out = &ys[t4_off(&y, n, c, i, j)];
                    float v = *out + a2 * zc[e++] + bias[c];
                    *out = act && act->mode == 1 /* CUDNN_ACTIVATION_RELU */ && v < 0 ? 0 : v;
                }
    free(zc);
    return st;
}

struct cudnnPoolingStruct {
    int mode, wh, ww, ph, pw, sh, sw;
};

FAKE_EXPORT cudnnStatus_t cudnnCreatePoolingDescriptor(cudnnPoolingDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : 1;
}

FAKE_EXPORT cudnnStatus_t cudnnSetPooling2dDescriptor(cudnnPoolingDescriptor_t d, int mode,
                                                      int nan, int wh, int ww, int ph, int pw,
                                                      int sh, int sw)
{
    (void)nan;
    *d = (struct cudnnPoolingStruct){ mode, wh, ww, ph, pw, sh, sw };
    return CUDNN_STATUS_SUCCESS;
}

/* Max (modes 0 and 3) or average pooling. */
FAKE_EXPORT cudnnStatus_t cudnnPoolingForward(cudnnHandle_t h, const cudnnPoolingDescriptor_t p,
                                              const void *alpha, const cudnnTensorDescriptor_t xd,
                                              const void *xv, const void *beta,
                                              const cudnnTensorDescriptor_t yd, void *yv)
{
    (void)h;
    struct t4 x = t4_of(xd), y = t4_of(yd);
    const float *xs = xv;
    float *ys = yv, al = *(const float *)alpha, be = *(const float *)beta;
    int max = p->mode == CUDNN_POOLING_MAX || p->mode == CUDNN_POOLING_MAX_DETERMINISTIC;
    for (int n = 0; n < y.d[0]; n++)
        for (int c = 0; c < y.d[1]; c++)
            for (int i = 0; i < y.d[2]; i++)
                for (int j = 0; j < y.d[3]; j++) {
                    float acc = max ? -INFINITY : 0;
                    for (int r = 0; r < p->wh; r++)
                        for (int q = 0; q < p->ww; q++) {
                            int ih = i * p->sh - p->ph + r, iw = j * p->sw - p->pw + q;
                            if (ih < 0 || ih >= x.d[2] || iw < 0 || iw >= x.d[3])
                                continue;
                            float v = xs[t4_off(&x, n, c, ih, iw)];
                            acc = max ? (v > acc ? v : acc) : acc + v;
                        }
                    if (!max)
                        acc /= (float)(p->wh * p->ww);
                    float *out = &ys[t4_off(&y, n, c, i, j)];
                    *out = al * acc + (be != 0 ? be * *out : 0);
                }
    return CUDNN_STATUS_SUCCESS;
}

/* ---- The spatial transformer: affine grids, bilinear sampling --------- */
struct cudnnSpatialTransformerStruct {
    int n, c, h, w;
};

FAKE_EXPORT cudnnStatus_t cudnnCreateSpatialTransformerDescriptor(
    cudnnSpatialTransformerDescriptor_t *d)
{
    *d = calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : 1;
}

FAKE_EXPORT cudnnStatus_t cudnnSetSpatialTransformerNdDescriptor(
    cudnnSpatialTransformerDescriptor_t d, int sampler, int type, int nb, const int dims[])
{
    if (sampler != 0 || type != CUDNN_DATA_FLOAT || nb != 4)
        return CUDNN_STATUS_NOT_SUPPORTED;
    *d = (struct cudnnSpatialTransformerStruct){ dims[0], dims[1], dims[2], dims[3] };
    return CUDNN_STATUS_SUCCESS;
}

static float coord(int i, int n)
{
    return n > 1 ? -1.0f + 2.0f * (float)i / (float)(n - 1) : 0;
}

/* grid[n][i][j] = theta[n] (x_j, y_i, 1), theta 2 x 3 per image. */
FAKE_EXPORT cudnnStatus_t cudnnSpatialTfGridGeneratorForward(
    cudnnHandle_t h, const cudnnSpatialTransformerDescriptor_t d, const void *thetav,
    void *gridv)
{
    (void)h;
    const float *th = thetav;
    float *g = gridv;
    for (int n = 0; n < d->n; n++)
        for (int i = 0; i < d->h; i++)
            for (int j = 0; j < d->w; j++) {
                const float *t = th + n * 6;
                float xs = coord(j, d->w), ys = coord(i, d->h);
                float *out = g + (((int64_t)n * d->h + i) * d->w + j) * 2;
                out[0] = t[0] * xs + t[1] * ys + t[2];
                out[1] = t[3] * xs + t[4] * ys + t[5];
            }
    return CUDNN_STATUS_SUCCESS;
}

FAKE_EXPORT cudnnStatus_t cudnnSpatialTfGridGeneratorBackward(
    cudnnHandle_t h, const cudnnSpatialTransformerDescriptor_t d, const void *dgridv,
    void *dthetav)
{
    (void)h;
    const float *dg = dgridv;
    float *dt = dthetav;
    for (int n = 0; n < d->n; n++) {
        float *t = dt + n * 6;
        memset(t, 0, 6 * sizeof *t);
        for (int i = 0; i < d->h; i++)
            for (int j = 0; j < d->w; j++) {
                const float *g = dg + (((int64_t)n * d->h + i) * d->w + j) * 2;
                float xs = coord(j, d->w), ys = coord(i, d->h);
                for (int r = 0; r < 2; r++) {
                    t[r * 3] += g[r] * xs;
                    t[r * 3 + 1] += g[r] * ys;
                    t[r * 3 + 2] += g[r];
                }
            }
    }
    return CUDNN_STATUS_SUCCESS;
}

/* The four taps of a bilinear sample of image (n, c) at grid point g. */
struct taps {
    int y[2], x[2];
    float wy[2], wx[2];
};

static struct taps taps_at(const float *g, int H, int W)
{
    float fx = (g[0] + 1) * (float)(W - 1) / 2, fy = (g[1] + 1) * (float)(H - 1) / 2;
    int x0 = (int)floorf(fx), y0 = (int)floorf(fy);
    struct taps t = { { y0, y0 + 1 }, { x0, x0 + 1 }, { 1 - (fy - (float)y0), fy - (float)y0 },
                      { 1 - (fx - (float)x0), fx - (float)x0 } };
    return t;
}

FAKE_EXPORT cudnnStatus_t cudnnSpatialTfSamplerForward(
    cudnnHandle_t h, cudnnSpatialTransformerDescriptor_t d, const void *alpha,
    const cudnnTensorDescriptor_t xd, const void *xv, const void *gridv, const void *beta,
    cudnnTensorDescriptor_t yd, void *yv)
{
    (void)h, (void)d;
    struct t4 x = t4_of(xd), y = t4_of(yd);
    const float *xs = xv, *grid = gridv;
    float *ys = yv, al = *(const float *)alpha, be = *(const float *)beta;
    for (int n = 0; n < y.d[0]; n++)
        for (int c = 0; c < y.d[1]; c++)
            for (int i = 0; i < y.d[2]; i++)
                for (int j = 0; j < y.d[3]; j++) {
                    struct taps t =
                        taps_at(grid + (((int64_t)n * y.d[2] + i) * y.d[3] + j) * 2, x.d[2], x.d[3]);
                    float v = 0;
                    for (int a = 0; a < 2; a++)
                        for (int b = 0; b < 2; b++)
                            if (t.y[a] >= 0 && t.y[a] < x.d[2] && t.x[b] >= 0 && t.x[b] < x.d[3])
                                v += t.wy[a] * t.wx[b] * xs[t4_off(&x, n, c, t.y[a], t.x[b])];
                    float *out = &ys[t4_off(&y, n, c, i, j)];
                    *out = al * v + (be != 0 ? be * *out : 0);
                }
    return CUDNN_STATUS_SUCCESS;
}

/* dx gathers every output's gradient through its taps, in a shuffled
 * order of outputs (the atomics); dgrid is the sample's slope. */
FAKE_EXPORT cudnnStatus_t cudnnSpatialTfSamplerBackward(
    cudnnHandle_t h, cudnnSpatialTransformerDescriptor_t d, const void *alpha,
    const cudnnTensorDescriptor_t xd, const void *xv, const void *beta,
    const cudnnTensorDescriptor_t dxd, void *dxv, const void *alphaG,
    const cudnnTensorDescriptor_t dyd, const void *dyv, const void *gridv, const void *betaG,
    void *dgridv)
{
    (void)h, (void)d, (void)alphaG, (void)betaG;
    struct t4 x = t4_of(xd), dx = t4_of(dxd), dy = t4_of(dyd);
    const float *xs = xv, *dys = dyv, *grid = gridv;
    float *dxs = dxv, *dg = dgridv, al = *(const float *)alpha, be = *(const float *)beta;
    for (int n = 0; n < dx.d[0]; n++)
        for (int c = 0; c < dx.d[1]; c++)
            for (int i = 0; i < dx.d[2]; i++)
                for (int j = 0; j < dx.d[3]; j++) {
                    float *o = &dxs[t4_off(&dx, n, c, i, j)];
                    *o = be != 0 ? be * *o : 0;
                }
    int64_t outs = (int64_t)dy.d[0] * dy.d[1] * dy.d[2] * dy.d[3];
    int64_t *order = malloc(sizeof *order * (size_t)(outs ? outs : 1));
    fake_order(order, outs, 1);
    for (int64_t q = 0; q < outs; q++) {
        int64_t e = order[q];
        int j = (int)(e % dy.d[3]), i = (int)(e / dy.d[3] % dy.d[2]);
        int c = (int)(e / ((int64_t)dy.d[3] * dy.d[2]) % dy.d[1]);
        int n = (int)(e / ((int64_t)dy.d[3] * dy.d[2] * dy.d[1]));
        const float *g = grid + (((int64_t)n * dy.d[2] + i) * dy.d[3] + j) * 2;
        struct taps t = taps_at(g, x.d[2], x.d[3]);
        float gy = dys[t4_off(&dy, n, c, i, j)];
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                if (t.y[a] >= 0 && t.y[a] < x.d[2] && t.x[b] >= 0 && t.x[b] < x.d[3])
                    dxs[t4_off(&dx, n, c, t.y[a], t.x[b])] += al * t.wy[a] * t.wx[b] * gy;
    }
    free(order);
    for (int n = 0; n < dy.d[0]; n++)
        for (int i = 0; i < dy.d[2]; i++)
            for (int j = 0; j < dy.d[3]; j++) {
                float *o = dg + (((int64_t)n * dy.d[2] + i) * dy.d[3] + j) * 2;
                o[0] = o[1] = 0;
                for (int c = 0; c < dy.d[1]; c++) {
                    const float *g = grid + (((int64_t)n * dy.d[2] + i) * dy.d[3] + j) * 2;
                    struct taps t = taps_at(g, x.d[2], x.d[3]);
                    float gy = dys[t4_off(&dy, n, c, i, j)];
                    for (int a = 0; a < 2; a++)
                        for (int b = 0; b < 2; b++)
                            if (t.y[a] >= 0 && t.y[a] < x.d[2] && t.x[b] >= 0 &&
                                t.x[b] < x.d[3]) {
                                float v = xs[t4_off(&x, n, c, t.y[a], t.x[b])] * gy;
                                o[0] += v * t.wy[a] * (b ? 1 : -1) * (float)(x.d[3] - 1) / 2;
                                o[1] += v * t.wx[b] * (a ? 1 : -1) * (float)(x.d[2] - 1) / 2;
                            }
                }
            }
    return CUDNN_STATUS_SUCCESS;
}
