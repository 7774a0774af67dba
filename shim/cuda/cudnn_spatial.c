/* cuDNN spatial transformer interceptors (F.affine_grid and F.grid_sample
 * on CUDA, when PyTorch takes cuDNN's path): the grid generator and the
 * bilinear sampler, forward and backward. cuDNN's reproducibility notes
 * name cudnnSpatialTfSamplerBackward as varying run to run (atomics) with
 * no deterministic mode, so nothing can be pinned there: in pinned mode
 * the shim says so on stderr once, and every such record carries the note
 * cuda.nondeterministic, so that detdiff's culprit is explained. The rest
 * is deterministic and traced. cuDNN has no getter for a spatial
 * transformer descriptor, so cudnnSetSpatialTransformerNdDescriptor is
 * intercepted to remember each descriptor's dims (N, C, H, W), which size
 * theta (N x 2 x 3) and the grid (N x H x W x 2); the sampler's grid is
 * sized by its output tensor.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "trace/digest.h"

/* The descriptors' dims, most recently set first out: a descriptor set
 * more than TABLE_MAX others ago is forgotten, and its grid generator
 * calls record the digest of nothing with a cuda.digest note. */
enum { TABLE_MAX = 64 };
static struct st_dims {
    const void *desc;
    int n, h, w, type;
} table[TABLE_MAX];
static unsigned table_next;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static int dims_of(const void *desc, struct st_dims *out)
{
    int found = 0;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < TABLE_MAX && !found; i++)
        if (table[i].desc == desc) {
            *out = table[i];
            found = 1;
        }
    pthread_mutex_unlock(&table_lock);
    return found;
}

DETSHIM_EXPORT cudnnStatus_t cudnnSetSpatialTransformerNdDescriptor(
    cudnnSpatialTransformerDescriptor_t st, cudnnSamplerType_t sampler, cudnnDataType_t type,
    const int nbDims, const int dimA[])
{
    CUDA_REAL_FN(cudnnSetSpatialTransformerNdDescriptor_fn *,
                 cudnnSetSpatialTransformerNdDescriptor);
    cudnnStatus_t s = real(st, sampler, type, nbDims, dimA);
    if (s == CUDNN_STATUS_SUCCESS && nbDims == 4) {
        pthread_mutex_lock(&table_lock);
        int slot = -1;
        for (int i = 0; i < TABLE_MAX && slot < 0; i++)
            if (table[i].desc == st)
                slot = i;
        if (slot < 0)
            slot = (int)(table_next++ % TABLE_MAX);
        table[slot] = (struct st_dims){ st, dimA[0], dimA[2], dimA[3], type };
        pthread_mutex_unlock(&table_lock);
    }
    return s;
}

/* n elements of the descriptor's data type at device address p. */
static void rec_elems(struct trace_rec *r, const char *name, int role, CUstream s,
                      const void *p, int64_t n, int type)
{
    int elem = cudnn_type_size(type);
    size_t bytes = n > 0 && elem ? (size_t)n * (size_t)elem : 0;
    if (!elem || !p || cuda_rec_bytes(r, name, role, s, p, bytes, bytes / (size_t)(elem ? elem : 1),
                                      elem) != 0) {
        cuda_note_no_digest(r);
        trace_rec_operand(r, name, role, digest_bytes(NULL, 0), 0, elem);
    }
}

/* The grid generator: theta (N x 2 x 3) <-> grid (N x H x W x 2). */
static cudnnStatus_t grid_call(const char *api, int backward, void *real_fn, cudnnHandle_t h,
                               const cudnnSpatialTransformerDescriptor_t st, const void *in,
                               void *out)
{
    struct cuda_call c;
    cudnnSpatialTfGridGeneratorForward_fn *real =
        (cudnnSpatialTfGridGeneratorForward_fn *)(uintptr_t)real_fn;
    if (!cuda_enter(&c))
        return real(h, st, in, out);
    struct st_dims d = { 0 };
    int known = c.traced && dims_of(st, &d);
    int64_t theta = (int64_t)d.n * 6, grid = (int64_t)d.n * d.h * d.w * 2;
    struct trace_rec r;
    CUstream s = NULL;
    if (c.traced) {
        s = cudnn_handle_stream(h);
        trace_rec_begin(&r, api);
        trace_rec_int(&r, "n", d.n);
        trace_rec_int(&r, "h", d.h);
        trace_rec_int(&r, "w", d.w);
        if (!known)
            trace_rec_note(&r, "cuda.digest", "not taken: the descriptor's dims are unknown "
                           "(set before the shim loaded, or forgotten)");
        rec_elems(&r, backward ? "dgrid" : "theta", TRACE_ROLE_IN, s, in, backward ? grid : theta,
                  d.type);
    }
    cudnnStatus_t st_ = real(h, st, in, out);
    if (c.traced) {
        rec_elems(&r, backward ? "dtheta" : "grid", TRACE_ROLE_OUT, s, out,
                  backward ? theta : grid, d.type);
        trace_rec_int(&r, "status", st_);
        cuda_note_mode(&r, &c);
        cuda_commit(&r);
    }
    cuda_leave();
    return st_;
}

DETSHIM_EXPORT cudnnStatus_t cudnnSpatialTfGridGeneratorForward(
    cudnnHandle_t h, const cudnnSpatialTransformerDescriptor_t st, const void *theta, void *grid)
{
    CUDA_REAL_FN(cudnnSpatialTfGridGeneratorForward_fn *, cudnnSpatialTfGridGeneratorForward);
    return grid_call("cudnnSpatialTfGridGeneratorForward", 0, (void *)(uintptr_t)real, h, st,
                     theta, grid);
}

DETSHIM_EXPORT cudnnStatus_t cudnnSpatialTfGridGeneratorBackward(
    cudnnHandle_t h, const cudnnSpatialTransformerDescriptor_t st, const void *dgrid,
    void *dtheta)
{
    CUDA_REAL_FN(cudnnSpatialTfGridGeneratorBackward_fn *, cudnnSpatialTfGridGeneratorBackward);
    return grid_call("cudnnSpatialTfGridGeneratorBackward", 1, (void *)(uintptr_t)real, h, st,
                     dgrid, dtheta);
}

/* The sampler's grid: N x H_out x W_out x 2 elements of y's type. */
static int64_t grid_elems(cudnnTensorDescriptor_t y, int *type)
{
    static void *cache;
    cudnnGetTensorNdDescriptor_fn *get = (cudnnGetTensorNdDescriptor_fn *)(uintptr_t)cuda_sym(
        &cache, "cudnnGetTensorNdDescriptor");
    int nb = 0, dims[DIGEST_MAX_DIMS], strides[DIGEST_MAX_DIMS];
    if (!get || get(y, DIGEST_MAX_DIMS, type, &nb, dims, strides) != CUDNN_STATUS_SUCCESS ||
        nb != 4)
        return 0;
    return (int64_t)dims[0] * dims[2] * dims[3] * 2;
}

DETSHIM_EXPORT cudnnStatus_t cudnnSpatialTfSamplerForward(
    cudnnHandle_t h, cudnnSpatialTransformerDescriptor_t st, const void *alpha,
    const cudnnTensorDescriptor_t xDesc, const void *x, const void *grid, const void *beta,
    cudnnTensorDescriptor_t yDesc, void *y)
{
    CUDA_REAL_FN(cudnnSpatialTfSamplerForward_fn *, cudnnSpatialTfSamplerForward);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(h, st, alpha, xDesc, x, grid, beta, yDesc, y);
    struct trace_rec r;
    CUstream s = NULL;
    if (c.traced) {
        int type = CUDNN_DATA_FLOAT;
        int64_t g = grid_elems(yDesc, &type);
        s = cudnn_handle_stream(h);
        trace_rec_begin(&r, "cudnnSpatialTfSamplerForward");
        int stype = cudnn_scale_type(xDesc);
        cuda_rec_scalar(&r, "alpha", s, alpha, 0, stype);
        int beta_zero = cuda_rec_scalar(&r, "beta", s, beta, 0, stype);
        cudnn_rec_tensor(&r, "x", TRACE_ROLE_IN, s, x, xDesc, 0);
        rec_elems(&r, "grid", TRACE_ROLE_IN, s, grid, g, type);
        if (!beta_zero)
            cudnn_rec_tensor(&r, "y", TRACE_ROLE_IN, s, y, yDesc, 0);
    }
    cudnnStatus_t st_ = real(h, st, alpha, xDesc, x, grid, beta, yDesc, y);
    if (c.traced) {
        cudnn_rec_tensor(&r, "y", TRACE_ROLE_OUT, s, y, yDesc, 0);
        trace_rec_int(&r, "status", st_);
        cuda_note_mode(&r, &c);
        cuda_commit(&r);
    }
    cuda_leave();
    return st_;
}

DETSHIM_EXPORT cudnnStatus_t cudnnSpatialTfSamplerBackward(
    cudnnHandle_t h, cudnnSpatialTransformerDescriptor_t st, const void *alpha,
    const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
    const cudnnTensorDescriptor_t dxDesc, void *dx, const void *alphaDgrid,
    const cudnnTensorDescriptor_t dyDesc, const void *dy, const void *grid,
    const void *betaDgrid, void *dgrid)
{
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    CUDA_REAL_FN(cudnnSpatialTfSamplerBackward_fn *, cudnnSpatialTfSamplerBackward);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(h, st, alpha, xDesc, x, beta, dxDesc, dx, alphaDgrid, dyDesc, dy, grid,
                    betaDgrid, dgrid);
    if (c.pinned && !atomic_flag_test_and_set(&warned))
        core_log(DS_LOG_QUIET, "cudnnSpatialTfSamplerBackward (grid_sample's backward) sums "
                 "with atomics and cuDNN has no deterministic mode for it: its results are not "
                 "pinned");
    struct trace_rec r;
    CUstream s = NULL;
    int type = CUDNN_DATA_FLOAT;
    int64_t g = 0;
    int bdx = 0, bdg = 0;
    if (c.traced) {
        g = grid_elems(dyDesc, &type);
        s = cudnn_handle_stream(h);
        trace_rec_begin(&r, "cudnnSpatialTfSamplerBackward");
        int stype = cudnn_scale_type(xDesc);
        cuda_rec_scalar(&r, "alpha", s, alpha, 0, stype);
        bdx = cuda_rec_scalar(&r, "beta", s, beta, 0, stype);
        cuda_rec_scalar(&r, "alphaDgrid", s, alphaDgrid, 0, stype);
        bdg = cuda_rec_scalar(&r, "betaDgrid", s, betaDgrid, 0, stype);
        cudnn_rec_tensor(&r, "x", TRACE_ROLE_IN, s, x, xDesc, 0);
        cudnn_rec_tensor(&r, "dy", TRACE_ROLE_IN, s, dy, dyDesc, 0);
        rec_elems(&r, "grid", TRACE_ROLE_IN, s, grid, g, type);
        if (!bdx)
            cudnn_rec_tensor(&r, "dx", TRACE_ROLE_IN, s, dx, dxDesc, 0);
        if (!bdg)
            rec_elems(&r, "dgrid", TRACE_ROLE_IN, s, dgrid, g, type);
    }
    cudnnStatus_t st_ = real(h, st, alpha, xDesc, x, beta, dxDesc, dx, alphaDgrid, dyDesc, dy,
                             grid, betaDgrid, dgrid);
    if (c.traced) {
        cudnn_rec_tensor(&r, "dx", TRACE_ROLE_OUT, s, dx, dxDesc, 0);
        rec_elems(&r, "dgrid", TRACE_ROLE_OUT, s, dgrid, g, type);
        trace_rec_int(&r, "status", st_);
        cuda_note_mode(&r, &c);
        trace_rec_note(&r, "cuda.nondeterministic", "atomics; cuDNN has no deterministic mode "
                       "for cudnnSpatialTfSamplerBackward (not pinned)");
        cuda_commit(&r);
    }
    cuda_leave();
    return st_;
}
