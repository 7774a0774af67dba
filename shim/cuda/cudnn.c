/* cuDNN interceptors, legacy convolution API. Frameworks choose a
 * convolution algorithm from the list that cudnnFind*Algorithm and
 * cudnnFind*AlgorithmEx (timed) or cudnnGet*Algorithm_v7 (heuristic)
 * return, fastest first, and some of those algorithms sum in a
 * nondeterministic order (atomics). In pinned mode the lists are filtered
 * to the algorithms cuDNN marks CUDNN_DETERMINISTIC, their order kept and
 * the count fixed, so whatever a program picks from the list is
 * deterministic. When no listed algorithm is deterministic the list is
 * left whole (a convolution must run), the trace says so and a line is
 * logged. An algorithm the program passes to a convolution without taking
 * it from such a list is checked too (cudnn_algo.c). The convolutions
 * themselves are traced with the algorithm they ran, alpha and beta, and
 * operand digests (the output's prior contents only when beta is
 * nonzero, as cuDNN reads them only then). A tensor is digested over its
 * logical elements through its dims and strides
 * (cudnnGetTensorNdDescriptor), in row-major order, so padding between
 * them is never read; a filter, packed by definition, over its
 * cudnnGetFilterSizeInBytes bytes. The backend (graph) API is in
 * cudnn_backend.c.
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "trace/digest.h"

/* Filters perf[0..*count) to the deterministic entries, in order. Writes
 * what it did to note (for cuda.filter) and returns the new count. */
static int keep_deterministic(struct detshim_cudnn_algo_perf *perf, int *count, char *note,
                              size_t len)
{
    int n = *count, kept = 0;
    for (int i = 0; i < n; i++)
        kept += perf[i].determinism == CUDNN_DETERMINISTIC;
    if (kept == 0) {
        snprintf(note, len, "none of %d deterministic: list kept whole (not pinned)", n);
        core_log(DS_LOG_INFO, "cuDNN offered no deterministic convolution algorithm; "
                 "the run is not pinned there (see the trace's cuda.filter notes)");
        return n;
    }
    kept = 0;
    for (int i = 0; i < n; i++)
        if (perf[i].determinism == CUDNN_DETERMINISTIC)
            perf[kept++] = perf[i];
    snprintf(note, len, "kept %d of %d (deterministic only)", kept, n);
    *count = kept;
    return kept;
}

/* Runs after a Find or Get_v7 call: filters in pinned mode, records. */
static void algo_list_after(const struct cuda_call *c, const char *api, int requested,
                            int *returned, struct detshim_cudnn_algo_perf *perf, cudnnStatus_t st)
{
    char filter[96] = "";
    int before = st == CUDNN_STATUS_SUCCESS && returned ? *returned : 0;
    if (c->pinned && before > 0)
        keep_deterministic(perf, returned, filter, sizeof filter);
    if (!c->traced)
        return;
    int n = st == CUDNN_STATUS_SUCCESS && returned ? *returned : 0;
    char first[48];
    struct trace_rec r;
    trace_rec_begin(&r, api);
    trace_rec_int(&r, "requested", requested);
    trace_rec_int(&r, "offered", before);
    trace_rec_int(&r, "returned", n);
    trace_rec_int(&r, "status", st);
    /* (algo, determinism) pairs in order: what the program chooses from.
     * Times and memory vary run to run and stay out. */
    int32_t pairs[2 * 64];
    int np = n < 64 ? n : 64;
    for (int i = 0; i < np; i++) {
        pairs[2 * i] = perf[i].algo;
        pairs[2 * i + 1] = perf[i].determinism;
    }
    trace_rec_operand(&r, "algos", TRACE_ROLE_OUT, digest_bytes(pairs, (size_t)np * 8),
                      (uint64_t)np, 8);
    cuda_note_mode(&r, c);
    snprintf(first, sizeof first, "%d (%s)", n > 0 ? perf[0].algo : -1,
             n > 0 && perf[0].determinism == CUDNN_DETERMINISTIC ? "deterministic"
                                                                 : "nondeterministic");
    trace_rec_note(&r, "cuda.algo", n > 0 ? first : "none");
    if (filter[0])
        trace_rec_note(&r, "cuda.filter", filter);
    cuda_commit(&r);
}

#define ALGO_LIST(NAME, D1, D2, D4, PERF)                                                  \
    DETSHIM_EXPORT cudnnStatus_t NAME(cudnnHandle_t handle, const D1 d1, const D2 d2,      \
                                      const cudnnConvolutionDescriptor_t conv, const D4 d4, \
                                      const int requested, int *returned, PERF *perf)      \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                        \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(handle, d1, d2, conv, d4, requested, returned, perf);              \
        cudnnStatus_t st = real(handle, d1, d2, conv, d4, requested, returned, perf);      \
        algo_list_after(&c, #NAME, requested, returned, perf, st);                         \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

ALGO_LIST(cudnnFindConvolutionForwardAlgorithm, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
          cudnnTensorDescriptor_t, cudnnConvolutionFwdAlgoPerf_t)
ALGO_LIST(cudnnGetConvolutionForwardAlgorithm_v7, cudnnTensorDescriptor_t,
          cudnnFilterDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionFwdAlgoPerf_t)
ALGO_LIST(cudnnFindConvolutionBackwardDataAlgorithm, cudnnFilterDescriptor_t,
          cudnnTensorDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionBwdDataAlgoPerf_t)
ALGO_LIST(cudnnGetConvolutionBackwardDataAlgorithm_v7, cudnnFilterDescriptor_t,
          cudnnTensorDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionBwdDataAlgoPerf_t)
ALGO_LIST(cudnnFindConvolutionBackwardFilterAlgorithm, cudnnTensorDescriptor_t,
          cudnnTensorDescriptor_t, cudnnFilterDescriptor_t, cudnnConvolutionBwdFilterAlgoPerf_t)
ALGO_LIST(cudnnGetConvolutionBackwardFilterAlgorithm_v7, cudnnTensorDescriptor_t,
          cudnnTensorDescriptor_t, cudnnFilterDescriptor_t, cudnnConvolutionBwdFilterAlgoPerf_t)

#define ALGO_LIST_EX(NAME, D1, D2, D4, PERF)                                               \
    DETSHIM_EXPORT cudnnStatus_t NAME(cudnnHandle_t handle, const D1 d1, const void *p1,   \
                                      const D2 d2, const void *p2,                         \
                                      const cudnnConvolutionDescriptor_t conv, const D4 d4, \
                                      void *p4, const int requested, int *returned,        \
                                      PERF *perf, void *ws, size_t wsize)                  \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                        \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(handle, d1, p1, d2, p2, conv, d4, p4, requested, returned, perf,   \
                        ws, wsize);                                                        \
        cudnnStatus_t st = real(handle, d1, p1, d2, p2, conv, d4, p4, requested, returned, \
                                perf, ws, wsize);                                          \
        algo_list_after(&c, #NAME, requested, returned, perf, st);                         \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

ALGO_LIST_EX(cudnnFindConvolutionForwardAlgorithmEx, cudnnTensorDescriptor_t,
             cudnnFilterDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionFwdAlgoPerf_t)
ALGO_LIST_EX(cudnnFindConvolutionBackwardDataAlgorithmEx, cudnnFilterDescriptor_t,
             cudnnTensorDescriptor_t, cudnnTensorDescriptor_t, cudnnConvolutionBwdDataAlgoPerf_t)
ALGO_LIST_EX(cudnnFindConvolutionBackwardFilterAlgorithmEx, cudnnTensorDescriptor_t,
             cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
             cudnnConvolutionBwdFilterAlgoPerf_t)

CUstream cudnn_handle_stream(cudnnHandle_t h)
{
    static void *cache;
    cudnnGetStream_fn *get = (cudnnGetStream_fn *)(uintptr_t)cuda_sym(&cache, "cudnnGetStream");
    cudaStream_t s = NULL;
    if (!get || get(h, &s) != CUDNN_STATUS_SUCCESS)
        s = NULL;
    return s;
}

int cudnn_type_size(cudnnDataType_t type)
{
    switch (type) {
    case CUDNN_DATA_INT8: case CUDNN_DATA_UINT8: case CUDNN_DATA_FP8_E4M3:
    case CUDNN_DATA_FP8_E5M2: case CUDNN_DATA_FP8_E8M0:
        return 1;
    case CUDNN_DATA_HALF: case CUDNN_DATA_BFLOAT16:
        return 2;
    case CUDNN_DATA_FLOAT: case CUDNN_DATA_INT32: case CUDNN_DATA_UINT32:
        return 4;
    case CUDNN_DATA_DOUBLE: case CUDNN_DATA_INT64: case CUDNN_DATA_COMPLEX_FP32:
        return 8;
    case CUDNN_DATA_COMPLEX_FP64:
        return 16;
    default:
        return 0;
    }
}

/* A tensor's logical elements, through its dims and strides. Returns 0,
 * or -1 when cuDNN will not describe it, its type is one detshim cannot
 * walk element by element, or they cannot be digested (nothing
 * recorded). */
static int rec_strided_tensor(struct trace_rec *r, const char *name, int role, CUstream stream,
                              const void *p, cudnnTensorDescriptor_t desc)
{
    static void *cache;
    cudnnGetTensorNdDescriptor_fn *get = (cudnnGetTensorNdDescriptor_fn *)(uintptr_t)cuda_sym(
        &cache, "cudnnGetTensorNdDescriptor");
    cudnnDataType_t type;
    int nb = 0, dims[DIGEST_MAX_DIMS], strides[DIGEST_MAX_DIMS];
    if (!get || get(desc, DIGEST_MAX_DIMS, &type, &nb, dims, strides) != CUDNN_STATUS_SUCCESS ||
        nb < 1 || nb > DIGEST_MAX_DIMS)
        return -1;
    struct digest_shape shape = { .ndims = nb, .elem = (size_t)cudnn_type_size(type) };
    if (!shape.elem)
        return -1;
    for (int k = 0; k < nb; k++) {
        shape.dims[k] = dims[k];
        shape.strides[k] = strides[k];
    }
    return cuda_rec_strided(r, name, role, stream, p, &shape);
}

/* A tensor that cannot be walked element by element (a type packed below
 * a byte, or vectorised) is digested over its span,
 * cudnnGetTensorSizeInBytes bytes, as filters are; the record notes that
 * padding, if it has any, is included. */
void cudnn_rec_tensor(struct trace_rec *r, const char *name, int role, CUstream stream,
                       const void *p, const void *desc, int is_filter)
{
    static void *fcache, *tcache;
    cudnnGetFilterSizeInBytes_fn *fsize = (cudnnGetFilterSizeInBytes_fn *)(uintptr_t)cuda_sym(
        &fcache, "cudnnGetFilterSizeInBytes");
    cudnnGetTensorSizeInBytes_fn *tsize = (cudnnGetTensorSizeInBytes_fn *)(uintptr_t)cuda_sym(
        &tcache, "cudnnGetTensorSizeInBytes");
    size_t bytes = 0;
    if (!is_filter &&
        rec_strided_tensor(r, name, role, stream, p, (cudnnTensorDescriptor_t)(uintptr_t)desc) == 0)
        return;
    int spanned = is_filter ? fsize && fsize((cudnnFilterDescriptor_t)(uintptr_t)desc, &bytes) == 0
                            : tsize && tsize((cudnnTensorDescriptor_t)(uintptr_t)desc, &bytes) == 0;
    if (spanned && cuda_rec_bytes(r, name, role, stream, p, bytes, bytes, 1) == 0) {
        if (!is_filter)
            trace_rec_note(r, "cuda.digest", "digested over the tensor's whole span, padding "
                           "included (not walkable element by element: its data type, or "
                           "cuDNN would not describe it)");
        return;
    }
    cuda_note_no_digest(r);
    trace_rec_operand(r, name, role, digest_bytes(NULL, 0), 0, 1);
}

/* One convolution: out = alpha conv(in1, in2) + beta out. */
struct conv {
    const char *api;
    const char *n1, *n2, *nout;
    const void *in1, *d1, *in2, *d2, *dout;
    void *out;
    int f1, f2, fout; /* which descriptors are filters */
    int algo; /* as the program asked */
    size_t workspace;
    const void *alpha, *beta;
    cudnnTensorDescriptor_t tensor; /* one of the tensors, for the data type */
    int ran;                        /* the algorithm run (conv_pin) */
    char override[128];             /* what conv_pin did, or "" */
};

/* In pinned mode, replaces a nondeterministic algorithm the program chose
 * itself (cudnn_algo.c); sets v->ran and v->override. */
static void conv_pin(const struct cuda_call *c, struct conv *v, enum conv_direction dir,
                     cudnnHandle_t h, const struct conv_descs *d)
{
    v->ran = v->algo;
    v->override[0] = 0;
    if (c->pinned)
        v->ran = cudnn_pinned_algo(dir, h, d, v->algo, v->workspace, v->override,
                                   sizeof v->override);
}

int cudnn_scale_type(cudnnTensorDescriptor_t t)
{
    static void *cache;
    cudnnGetTensorNdDescriptor_fn *get = (cudnnGetTensorNdDescriptor_fn *)(uintptr_t)cuda_sym(
        &cache, "cudnnGetTensorNdDescriptor");
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    int nb, dims[8], strides[8];
    if (get && get(t, 8, &type, &nb, dims, strides) == CUDNN_STATUS_SUCCESS &&
        type == CUDNN_DATA_DOUBLE)
        return CUDA_R_64F;
    return CUDA_R_32F;
}

static void conv_before(const struct cuda_call *c, struct conv *v, cudnnHandle_t h,
                        struct trace_rec *r, CUstream *stream)
{
    if (!c->traced)
        return;
    *stream = cudnn_handle_stream(h);
    trace_rec_begin(r, v->api);
    trace_rec_int(r, "algo", v->algo);
    trace_rec_int(r, "workspaceSize", (int64_t)v->workspace);
    int type = cudnn_scale_type(v->tensor);
    int alpha_zero = cuda_rec_scalar(r, "alpha", *stream, v->alpha, 0, type);
    int beta_zero = cuda_rec_scalar(r, "beta", *stream, v->beta, 0, type);
    if (!alpha_zero) {
        cudnn_rec_tensor(r, v->n1, TRACE_ROLE_IN, *stream, v->in1, v->d1, v->f1);
        cudnn_rec_tensor(r, v->n2, TRACE_ROLE_IN, *stream, v->in2, v->d2, v->f2);
    }
    if (!beta_zero)
        cudnn_rec_tensor(r, v->nout, TRACE_ROLE_IN, *stream, v->out, v->dout, v->fout);
}

static void conv_after(const struct cuda_call *c, struct conv *v, struct trace_rec *r,
                       CUstream stream, cudnnStatus_t st)
{
    if (!c->traced)
        return;
    char algo[16];
    cudnn_rec_tensor(r, v->nout, TRACE_ROLE_OUT, stream, v->out, v->dout, v->fout);
    trace_rec_int(r, "status", st);
    cuda_note_mode(r, c);
    snprintf(algo, sizeof algo, "%d", v->ran);
    trace_rec_note(r, "cuda.algo", algo);
    if (v->override[0])
        trace_rec_note(r, "cuda.override", v->override);
    cuda_commit(r);
}

DETSHIM_EXPORT cudnnStatus_t cudnnConvolutionForward(
    cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnFilterDescriptor_t wDesc, const void *w, const cudnnConvolutionDescriptor_t convDesc,
    cudnnConvolutionFwdAlgo_t algo, void *workSpace, size_t workSpaceSizeInBytes,
    const void *beta, const cudnnTensorDescriptor_t yDesc, void *y)
{
    CUDA_REAL_FN(cudnnConvolutionForward_fn *, cudnnConvolutionForward);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, alpha, xDesc, x, wDesc, w, convDesc, algo, workSpace,
                    workSpaceSizeInBytes, beta, yDesc, y);
    struct conv v = { "cudnnConvolutionForward", "x", "w", "y", x, xDesc, w, wDesc, yDesc, y,
                      0, 1, 0, algo, workSpaceSizeInBytes, alpha, beta, xDesc, algo, "" };
    conv_pin(&c, &v, CONV_FORWARD, handle,
             &(struct conv_descs){ .tensor1 = xDesc, .filter2 = wDesc, .conv = convDesc,
                                   .tensor4 = yDesc });
    struct trace_rec r;
    CUstream stream = NULL;
    conv_before(&c, &v, handle, &r, &stream);
    cudnnStatus_t st = real(handle, alpha, xDesc, x, wDesc, w, convDesc, v.ran, workSpace,
                            workSpaceSizeInBytes, beta, yDesc, y);
    conv_after(&c, &v, &r, stream, st);
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnConvolutionBackwardData(
    cudnnHandle_t handle, const void *alpha, const cudnnFilterDescriptor_t wDesc, const void *w,
    const cudnnTensorDescriptor_t dyDesc, const void *dy,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionBwdDataAlgo_t algo,
    void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
    const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    CUDA_REAL_FN(cudnnConvolutionBackwardData_fn *, cudnnConvolutionBackwardData);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, alpha, wDesc, w, dyDesc, dy, convDesc, algo, workSpace,
                    workSpaceSizeInBytes, beta, dxDesc, dx);
    struct conv v = { "cudnnConvolutionBackwardData", "w", "dy", "dx", w, wDesc, dy, dyDesc,
                      dxDesc, dx, 1, 0, 0, algo, workSpaceSizeInBytes, alpha, beta, dyDesc,
                      algo, "" };
    conv_pin(&c, &v, CONV_BACKWARD_DATA, handle,
             &(struct conv_descs){ .filter1 = wDesc, .tensor2 = dyDesc, .conv = convDesc,
                                   .tensor4 = dxDesc });
    struct trace_rec r;
    CUstream stream = NULL;
    conv_before(&c, &v, handle, &r, &stream);
    cudnnStatus_t st = real(handle, alpha, wDesc, w, dyDesc, dy, convDesc, v.ran, workSpace,
                            workSpaceSizeInBytes, beta, dxDesc, dx);
    conv_after(&c, &v, &r, stream, st);
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnConvolutionBackwardFilter(
    cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t dyDesc, const void *dy,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionBwdFilterAlgo_t algo,
    void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
    const cudnnFilterDescriptor_t dwDesc, void *dw)
{
    CUDA_REAL_FN(cudnnConvolutionBackwardFilter_fn *, cudnnConvolutionBackwardFilter);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, alpha, xDesc, x, dyDesc, dy, convDesc, algo, workSpace,
                    workSpaceSizeInBytes, beta, dwDesc, dw);
    struct conv v = { "cudnnConvolutionBackwardFilter", "x", "dy", "dw", x, xDesc, dy, dyDesc,
                      dwDesc, dw, 0, 0, 1, algo, workSpaceSizeInBytes, alpha, beta, xDesc,
                      algo, "" };
    conv_pin(&c, &v, CONV_BACKWARD_FILTER, handle,
             &(struct conv_descs){ .tensor1 = xDesc, .tensor2 = dyDesc, .conv = convDesc,
                                   .filter4 = dwDesc });
    struct trace_rec r;
    CUstream stream = NULL;
    conv_before(&c, &v, handle, &r, &stream);
    cudnnStatus_t st = real(handle, alpha, xDesc, x, dyDesc, dy, convDesc, v.ran, workSpace,
                            workSpaceSizeInBytes, beta, dwDesc, dw);
    conv_after(&c, &v, &r, stream, st);
    cuda_leave();
    return st;
}
