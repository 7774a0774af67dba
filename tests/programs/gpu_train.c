/* The calls of a training step beyond GEMM and convolution, on the fake
 * CUDA libraries, each asking for what a framework may ask for and the
 * vendor may run nondeterministically: cuBLAS gemv, dot, dotc, DotEx,
 * trsm, trsmBatched and the batched getrf, getrs, geqrf and gels on a
 * handle with atomics allowed and an SM carveout; SgemmEx; cuDNN
 * BatchNorm in SPATIAL_PERSISTENT mode (training forward, backward,
 * inference); a tanh RNN with dropout seeded from the clock (forward,
 * backward data, backward weights, and a descriptor restored from the
 * same states); CTC loss with the nondeterministic algorithm, both forms;
 * the fused convolution with a nondeterministic algorithm; a convolution
 * whose math type converts FP32 down; max pooling. Prints one hash per
 * call and `all`, a hash of them all.
 *
 *   gpu_train            as above
 *   gpu_train nocarve    without the SM carveout
 *   gpu_train sampler    the spatial transformer instead: grid generator
 *                        and sampler, forward and backward (cuDNN's
 *                        sampler backward has no deterministic mode)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake.h"
#include "gpu_util.h"

static uint64_t all = 0xcbf29ce484222325ull;

static void report(const char *name, const void *p, size_t n)
{
    uint64_t h = fnv(p, n, FNV0);
    all = fnv(&h, sizeof h, all);
    printf("%s %016llx\n", name, (unsigned long long)h);
}

static cudnnTensorDescriptor_t tensor(int n, int c, int h, int w)
{
    cudnnTensorDescriptor_t d;
    CHECK(cudnnCreateTensorDescriptor(&d));
    CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
    return d;
}

/* A well-conditioned n x n matrix: the fill plus n on the diagonal. */
static void diag_dominant(float *a, int n, uint32_t seed)
{
    fill(a, (size_t)n * n, seed);
    for (int i = 0; i < n; i++)
        a[i + i * n] += (float)n;
}

static void blas_calls(int carve)
{
    enum { M = 64, N = 16, B = 2 };
    static float A[M * N], x[M], y[M], Ab[B][N * N], Bb[B][N * 3], Cq[B][M * 3], Aq[B][M * N];
    static float tau[B][N], Ag[B][N * N], gA[M * 8], gB[8 * N], gC[M * N];
    enum { D = 4096 }; /* long enough that a reordered sum rounds differently */
    static float dx[D], dy[D];
    static cuComplex cx[D], cy[D], cres;
    static int piv[B * N], info[B];
    cublasHandle_t h;
    CHECK(cublasCreate_v2(&h));
    CHECK(cublasSetAtomicsMode(h, CUBLAS_ATOMICS_ALLOWED));
    if (carve)
        CHECK(cublasSetSmCountTarget(h, 16));
    float one = 1, half = 0.5f, res;
    fill(A, M * N, 1);
    fill(x, M, 2);
    fill(y, M, 3);
    CHECK(cublasSgemv_v2(h, CUBLAS_OP_N, M, N, &one, A, M, x, 1, &half, y, 1));
    report("sgemv", y, sizeof y);
    CHECK(cublasSgemv_v2_64(h, CUBLAS_OP_T, M, N, &one, A, M, x, 1, &half, y, 1));
    report("sgemv_64", y, sizeof y);
    fill(dx, D, 6);
    fill(dy, D, 7);
    CHECK(cublasSdot_v2(h, D, dx, 1, dy, 1, &res));
    report("sdot", &res, sizeof res);
    fill((float *)cx, 2 * D, 4);
    fill((float *)cy, 2 * D, 5);
    CHECK(cublasCdotc_v2(h, D, cx, 1, cy, 1, &cres));
    report("cdotc", &cres, sizeof cres);
    CHECK(cublasDotEx(h, D, dx, CUDA_R_32F, 1, dy, CUDA_R_32F, 1, &res, CUDA_R_32F, CUDA_R_32F));
    report("dotex", &res, sizeof res);

    float *ap[B], *bp[B], *cp[B], *qp[B], *tp[B], *gp[B];
    for (int b = 0; b < B; b++) {
        diag_dominant(Ab[b], N, 10 + (uint32_t)b);
        fill(Bb[b], N * 3, 20 + (uint32_t)b);
        fill(Aq[b], M * N, 30 + (uint32_t)b);
        fill(Cq[b], M * 3, 40 + (uint32_t)b);
        diag_dominant(Ag[b], N, 50 + (uint32_t)b);
        ap[b] = Ab[b], bp[b] = Bb[b], qp[b] = Aq[b], cp[b] = Cq[b], tp[b] = tau[b];
        gp[b] = Ag[b];
    }
    CHECK(cublasStrsm_v2(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                         CUBLAS_DIAG_NON_UNIT, N, 3, &one, Ab[0], N, Bb[0], N));
    report("strsm", Bb[0], sizeof Bb[0]);
    CHECK(cublasStrsmBatched(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T,
                             CUBLAS_DIAG_NON_UNIT, 3, N, &half, (const float *const *)ap, N, bp,
                             3, B));
    report("strsm_batched", Bb, sizeof Bb);
    CHECK(cublasSgetrfBatched(h, N, gp, N, piv, info, B));
    report("sgetrf_batched", Ag, sizeof Ag);
    int hinfo = 0;
    CHECK(cublasSgetrsBatched(h, CUBLAS_OP_N, N, 3, (const float *const *)gp, N, piv, bp, N,
                              &hinfo, B));
    report("sgetrs_batched", Bb, sizeof Bb);
    CHECK(cublasSgeqrfBatched(h, M, N, qp, M, tp, &hinfo, B));
    report("sgeqrf_batched", Aq, sizeof Aq);
    for (int b = 0; b < B; b++)
        fill(Aq[b], M * N, 30 + (uint32_t)b);
    CHECK(cublasSgelsBatched(h, CUBLAS_OP_N, M, N, 3, qp, M, cp, M, &hinfo, info, B));
    report("sgels_batched", Cq, sizeof Cq);
    fill(gA, M * 8, 60);
    fill(gB, 8 * N, 61);
    float zero = 0;
    CHECK(cublasSgemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, 8, &one, gA, CUDA_R_32F, M, gB,
                        CUDA_R_32F, 8, &zero, gC, CUDA_R_32F, M));
    report("sgemmex", gC, sizeof gC);
}

static void batchnorm(cudnnHandle_t h)
{
    enum { N = 4, C = 3, H = 5, W = 5 };
    static float x[N * C * H * W], y[N * C * H * W], dy[N * C * H * W], dx[N * C * H * W];
    static float scale[C], bias[C], rm[C], rv[C], sm[C], si[C], ds[C], db[C];
    cudnnTensorDescriptor_t xd = tensor(N, C, H, W), bd = tensor(1, C, 1, 1);
    fill(x, sizeof x / 4, 70);
    fill(dy, sizeof dy / 4, 71);
    fill(scale, C, 72);
    fill(bias, C, 73);
    for (int c = 0; c < C; c++)
        rv[c] = 1;
    float one = 1, zero = 0;
    int mode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
    size_t ws = 0, wsb = 0, rs = 0;
    CHECK(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(h, mode, 0, xd, NULL, xd, bd,
                                                                   NULL, &ws));
    CHECK(cudnnGetBatchNormalizationBackwardExWorkspaceSize(h, mode, 0, xd, xd, xd, NULL, xd, bd,
                                                            NULL, &wsb));
    CHECK(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(h, mode, 0, NULL, xd, &rs));
    printf("bn_sizes %zu %zu %zu\n", ws, wsb, rs);
    void *work = calloc(1, ws + wsb + rs + 1);
    CHECK(cudnnBatchNormalizationForwardTrainingEx(h, mode, 0, &one, &zero, xd, x, NULL, NULL, xd,
                                                   y, bd, scale, bias, 0.1, rm, rv, 1e-5, sm, si,
                                                   NULL, work, ws, work, rs));
    report("bn_forward", y, sizeof y);
    CHECK(cudnnBatchNormalizationBackwardEx(h, mode, 0, &one, &zero, &one, &zero, xd, x, NULL,
                                            NULL, xd, dy, NULL, NULL, xd, dx, bd, scale, bias,
                                            ds, db, 1e-5, sm, si, NULL, work, wsb, work, rs));
    report("bn_backward", dx, sizeof dx);
    report("bn_dscale", ds, sizeof ds);
    /* On the backward's output, which varies with the reductions before
     * it: inference itself reduces nothing. */
    CHECK(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, xd, dx,
                                                  xd, y, bd, scale, bias, rm, rv, 1e-5));
    report("bn_inference", y, sizeof y);
    free(work);
}

static void rnn(cudnnHandle_t h)
{
    enum { T = 5, N = 3, I = 6, H = 8 };
    static float x[T * N * I], y[T * N * H], dy[T * N * H], dx[T * N * I], hy[N * H];
    cudnnDropoutDescriptor_t drop, drop2;
    cudnnRNNDescriptor_t rd, rd2;
    cudnnRNNDataDescriptor_t xd, yd;
    size_t ssize, wsize, ws, rs;
    CHECK(cudnnCreateDropoutDescriptor(&drop));
    CHECK(cudnnDropoutGetStatesSize(h, &ssize));
    void *states = calloc(1, ssize);
    /* The program's own seed, from the clock, as a careless one has it. */
    unsigned long long seed = (unsigned long long)time(NULL) ^ (unsigned long long)getpid() << 16;
    CHECK(cudnnSetDropoutDescriptor(drop, h, 0.3f, states, ssize, seed));
    CHECK(cudnnCreateRNNDescriptor(&rd));
    CHECK(cudnnSetRNNDescriptor_v8(rd, 0, 2 /* CUDNN_RNN_TANH */, 1, 0, 1, CUDNN_DATA_FLOAT,
                                   CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, I, H, H, 1, drop, 0));
    CHECK(cudnnCreateRNNDataDescriptor(&xd));
    CHECK(cudnnCreateRNNDataDescriptor(&yd));
    int lens[N] = { T, T, T };
    CHECK(cudnnSetRNNDataDescriptor(xd, CUDNN_DATA_FLOAT, 0, T, N, I, lens, NULL));
    CHECK(cudnnSetRNNDataDescriptor(yd, CUDNN_DATA_FLOAT, 0, T, N, H, lens, NULL));
    cudnnTensorDescriptor_t hd = tensor(1, 1, N, H);
    CHECK(cudnnGetRNNWeightSpaceSize(h, rd, &wsize));
    CHECK(cudnnGetRNNTempSpaceSizes(h, rd, CUDNN_FWD_MODE_TRAINING, xd, &ws, &rs));
    float *w = malloc(wsize), *dw = calloc(1, wsize);
    void *reserve = calloc(1, rs), *work = calloc(1, ws + 1);
    fill(w, wsize / 4, 80);
    fill(x, sizeof x / 4, 81);
    fill(dy, sizeof dy / 4, 82);
    int32_t *devlens = malloc(sizeof(int32_t) * N);
    for (int n = 0; n < N; n++)
        devlens[n] = T;
    CHECK(cudnnRNNForward(h, rd, CUDNN_FWD_MODE_TRAINING, devlens, xd, x, yd, y, hd, NULL, hy,
                          NULL, NULL, NULL, wsize, w, ws, work, rs, reserve));
    report("rnn_forward", y, sizeof y);
    CHECK(cudnnRNNBackwardData_v8(h, rd, devlens, yd, y, dy, xd, dx, hd, NULL, NULL, NULL, NULL,
                                  NULL, NULL, NULL, wsize, w, ws, work, rs, reserve));
    report("rnn_backward_data", dx, sizeof dx);
    CHECK(cudnnRNNBackwardWeights_v8(h, rd, CUDNN_WGRAD_MODE_ADD, devlens, xd, x, hd, NULL, yd, y,
                                     wsize, dw, ws, work, rs, reserve));
    report("rnn_backward_weights", dw, wsize);
    /* As PyTorch does for each RNN call: a descriptor restored on the
     * states already made (its seed argument is not used). */
    CHECK(cudnnCreateDropoutDescriptor(&drop2));
    CHECK(cudnnRestoreDropoutDescriptor(drop2, h, 0.3f, states, ssize, 0));
    CHECK(cudnnCreateRNNDescriptor(&rd2));
    CHECK(cudnnSetRNNDescriptor_v8(rd2, 0, 2, 1, 0, 1, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                   CUDNN_DEFAULT_MATH, I, H, H, 1, drop2, 0));
    CHECK(cudnnRNNForward(h, rd2, CUDNN_FWD_MODE_TRAINING, devlens, xd, x, yd, y, hd, NULL, hy,
                          NULL, NULL, NULL, wsize, w, ws, work, rs, reserve));
    report("rnn_restored", y, sizeof y);
    free(w), free(dw), free(reserve), free(work), free(states), free(devlens);
}

static void ctc(cudnnHandle_t h)
{
    enum { T = 64, N = 8, A = 5 };
    static float probs[T * N * A], costs[N], grads[T * N * A];
    int labels[] = { 1, 2, 3, 2, 4, 1, 3, 4, 2, 1, 2, 3, 4, 1, 2, 3 };
    int lens[N] = { 3, 2, 1, 2, 2, 1, 3, 2 }, inlens[N] = { T, T - 4, T, T - 1, T, T - 9, T, T };
    fill(probs, sizeof probs / 4, 90);
    for (size_t i = 0; i < sizeof probs / 4; i++)
        probs[i] = probs[i] * 0.4f + 0.5f; /* positive, as after a softmax */
    cudnnTensorDescriptor_t pd = tensor(T, N, A, 1);
    cudnnCTCLossDescriptor_t cd;
    CHECK(cudnnCreateCTCLossDescriptor(&cd));
    CHECK(cudnnSetCTCLossDescriptor(cd, CUDNN_DATA_FLOAT));
    size_t ws, ws8;
    int algo = CUDNN_CTC_LOSS_ALGO_NON_DETERMINISTIC;
    CHECK(cudnnGetCTCLossWorkspaceSize(h, pd, pd, labels, lens, inlens, algo, cd, &ws));
    CHECK(cudnnGetCTCLossWorkspaceSize_v8(h, algo, cd, pd, pd, &ws8));
    printf("ctc_sizes %zu %zu\n", ws, ws8);
    void *work = calloc(1, ws > ws8 ? ws : ws8);
    CHECK(cudnnCTCLoss(h, pd, probs, labels, lens, inlens, costs, pd, grads, algo, cd, work, ws));
    report("ctc", costs, sizeof costs);
    CHECK(cudnnCTCLoss_v8(h, algo, cd, pd, probs, labels, lens, inlens, costs, pd, grads, ws8,
                          work));
    report("ctc_v8", costs, sizeof costs);
    free(work);
}

static void conv_calls(cudnnHandle_t h)
{
    static float x[2 * 3 * 10 * 10], w[4 * 3 * 3 * 3], y[2 * 4 * 8 * 8], z[2 * 4 * 8 * 8];
    static float bias[4], pooled[2 * 4 * 4 * 4];
    fill(x, sizeof x / 4, 100);
    fill(w, sizeof w / 4, 101);
    fill(z, sizeof z / 4, 102);
    fill(bias, 4, 103);
    cudnnTensorDescriptor_t xd = tensor(2, 3, 10, 10), yd = tensor(2, 4, 8, 8);
    cudnnTensorDescriptor_t bd = tensor(1, 4, 1, 1), pd = tensor(2, 4, 4, 4);
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    cudnnActivationDescriptor_t act;
    CHECK(cudnnCreateFilterDescriptor(&wd));
    CHECK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 3));
    CHECK(cudnnCreateConvolutionDescriptor(&cd));
    CHECK(cudnnSetConvolution2dDescriptor(cd, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                          CUDNN_DATA_FLOAT));
    CHECK(cudnnCreateActivationDescriptor(&act));
    CHECK(cudnnSetActivationDescriptor(act, 1 /* CUDNN_ACTIVATION_RELU */, 0, 0));
    float one = 1, half = 0.5f, zero = 0;
    CHECK(cudnnConvolutionBiasActivationForward(h, &one, xd, x, wd, w, cd,
                                                FAKE_CUDNN_ALGO_FAST_NONDET, NULL, 0, &half, yd,
                                                z, bd, bias, act, yd, y));
    report("conv_bias_act", y, sizeof y);
    cudnnPoolingDescriptor_t pool;
    CHECK(cudnnCreatePoolingDescriptor(&pool));
    CHECK(cudnnSetPooling2dDescriptor(pool, CUDNN_POOLING_MAX, 0, 2, 2, 0, 0, 2, 2));
    CHECK(cudnnPoolingForward(h, pool, &one, yd, y, &zero, pd, pooled));
    report("pool", pooled, sizeof pooled);
    CHECK(cudnnSetConvolutionMathType(cd, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION));
    CHECK(cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, 1, NULL, 0, &zero, yd, y));
    report("conv_math", y, sizeof y);
}

static void sampler(cudnnHandle_t h)
{
    enum { N = 2, C = 3, H = 6, W = 6, XH = 8, XW = 8 };
    static float theta[N * 6], grid[N * H * W * 2], x[N * C * XH * XW], y[N * C * H * W];
    static float dy[N * C * H * W], dx[N * C * XH * XW], dgrid[N * H * W * 2], dtheta[N * 6];
    cudnnSpatialTransformerDescriptor_t st;
    int dims[4] = { N, C, H, W };
    CHECK(cudnnCreateSpatialTransformerDescriptor(&st));
    CHECK(cudnnSetSpatialTransformerNdDescriptor(st, 0, CUDNN_DATA_FLOAT, 4, dims));
    fill(theta, N * 6, 110);
    fill(x, sizeof x / 4, 111);
    fill(dy, sizeof dy / 4, 112);
    cudnnTensorDescriptor_t xd = tensor(N, C, XH, XW), yd = tensor(N, C, H, W);
    float one = 1, zero = 0;
    CHECK(cudnnSpatialTfGridGeneratorForward(h, st, theta, grid));
    report("grid_forward", grid, sizeof grid);
    CHECK(cudnnSpatialTfSamplerForward(h, st, &one, xd, x, grid, &zero, yd, y));
    report("sampler_forward", y, sizeof y);
    CHECK(cudnnSpatialTfSamplerBackward(h, st, &one, xd, x, &zero, xd, dx, &one, yd, dy, grid,
                                        &zero, dgrid));
    report("sampler_backward", dx, sizeof dx);
    CHECK(cudnnSpatialTfGridGeneratorBackward(h, st, dgrid, dtheta));
    report("grid_backward", dtheta, sizeof dtheta);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    CHECK(cuInit(0));
    cudnnHandle_t h;
    CHECK(cudnnCreate(&h));
    if (strcmp(mode, "sampler") == 0) {
        sampler(h);
    } else {
        blas_calls(strcmp(mode, "nocarve") != 0);
        batchnorm(h);
        rnn(h);
        ctc(h);
        conv_calls(h);
    }
    printf("all %016llx\n", (unsigned long long)all);
    return 0;
}
