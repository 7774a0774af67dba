/* A cuDNN forward convolution run with an algorithm the program fixed
 * itself, never asking cuDNN for a list: the fake cuDNN's FFT, which it
 * marks nondeterministic and runs in a per-run order (as real cuDNN's
 * backward ALGO_0 runs with atomics). Prints a hash of the output.
 *
 *   gpu_conv_algo          the nondeterministic algorithm
 *   gpu_conv_algo det      algorithm 1, which is deterministic
 *   gpu_conv_algo engine N a cuDNN backend plan built on engine N, chosen
 *                          without the engine heuristics, executed once
 *                          (the fake marks engine 7 nondeterministic)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"
#include "gpu_util.h"

/* The convolution: a 2x3x10x10 NCHW input, 4 filters of
 * 3x3x3, no padding, unit stride: a 2x4x8x8 output. */
struct conv_setup {
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
};

static void conv_setup(struct conv_setup *s)
{
    CHECK(cudnnCreateTensorDescriptor(&s->x));
    CHECK(cudnnSetTensor4dDescriptor(s->x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 3, 10, 10));
    CHECK(cudnnCreateTensorDescriptor(&s->y));
    CHECK(cudnnSetTensor4dDescriptor(s->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 2, 4, 8, 8));
    CHECK(cudnnCreateFilterDescriptor(&s->w));
    CHECK(cudnnSetFilter4dDescriptor(s->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, 3, 3, 3));
    CHECK(cudnnCreateConvolutionDescriptor(&s->conv));
    CHECK(cudnnSetConvolution2dDescriptor(s->conv, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                          CUDNN_DATA_FLOAT));
}

/* A plan on engine `index`, built as a program that bypasses the engine
 * heuristics builds it, then executed. */
static void run_engine(int64_t index)
{
    cudnnHandle_t h;
    cudnnBackendDescriptor_t engine, cfg, plan;
    CHECK(cudnnCreate(&h));
    CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine));
    CHECK(cudnnBackendSetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1,
                                   &index));
    CHECK(cudnnBackendFinalize(engine));
    CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg));
    CHECK(cudnnBackendSetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &engine));
    CHECK(cudnnBackendFinalize(cfg));
    CHECK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan));
    CHECK(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg));
    CHECK(cudnnBackendFinalize(plan));
    CHECK(cudnnBackendExecute(h, plan, NULL));
    printf("engine %lld executed\n", (long long)index);
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "engine") == 0) {
        CHECK(cuInit(0));
        run_engine(atoll(argv[2]));
        return 0;
    }
    int algo = argc > 1 && strcmp(argv[1], "det") == 0 ? 1 : FAKE_CUDNN_ALGO_FAST_NONDET;
    static float x[2 * 3 * 10 * 10], w[4 * 3 * 3 * 3], y[2 * 4 * 8 * 8];
    fill(x, sizeof x / sizeof *x, 7);
    fill(w, sizeof w / sizeof *w, 8);
    CHECK(cuInit(0));
    cudnnHandle_t h;
    struct conv_setup cs;
    CHECK(cudnnCreate(&h));
    conv_setup(&cs);
    float one = 1, zero = 0;
    for (int i = 0; i < 3; i++)
        CHECK(cudnnConvolutionForward(h, &one, cs.x, x, cs.w, w, cs.conv, algo, NULL, 0, &zero,
                                      cs.y, y));
    printf("conv %016llx\n", (unsigned long long)fnv(y, sizeof y, FNV0));
    return 0;
}
