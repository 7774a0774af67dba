/* Shared by the GPU test programs (gpu_prog.c, gpu_dlsym.c, ...): fixed
 * inputs, a hash of results, stopping at the first failed call, and the
 * one convolution they run. Include after fake.h.
 */
#ifndef GPU_UTIL_H
#define GPU_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Stops the program, naming the call, when a vendor call fails. */
#define CHECK(call)                                                                        \
    do {                                                                                   \
        int st_ = (int)(call);                                                             \
        if (st_ != 0) {                                                                    \
            fprintf(stderr, "%s: %s failed: %d\n", __FILE__, #call, st_);                  \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static const uint64_t FNV0 = 0xcbf29ce484222325ull;

/* FNV-1a over n bytes, continuing from h (FNV0 to start). */
static inline uint64_t fnv(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* n floats in [-1, 1) from a fixed generator: the same inputs every run. */
static inline void fill(float *x, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
    }
}

/* The convolution the programs run: a 2x3x10x10 NCHW input, 4 filters of
 * 3x3x3, no padding, unit stride: a 2x4x8x8 output. */
struct conv_setup {
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
};

static inline void conv_setup(struct conv_setup *s)
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

#endif
