/* cuBLAS level 2 and 1 interceptors that PyTorch calls: gemv (mv, addmv),
 * dot, vdot and cublasDotEx (dot of half and bfloat16), each under its
 * int and _64 names, and the SM carveout (cublasSetSmCountTarget).
 * cuBLAS documents its routines as bitwise reproducible run to run on one
 * GPU model and toolkit, except where atomics are allowed; pinned mode
 * already keeps atomics off on every handle (cublas.c), so these are
 * traced, not changed: shapes, increments, the scalars, device digests of
 * the matrix and vectors (a vector over its n elements |inc| apart; a
 * negative increment walks the same elements backwards, so they are
 * digested in memory order and the record keeps the sign), the result,
 * and the handle's atomics and math mode, as the GEMMs record them. An SM
 * carveout makes cuBLAS pick kernels for fewer SMs, which changes the
 * bits; pinned mode refuses it (the call succeeds, nothing is set) and
 * records what was asked.
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "trace/digest.h"

/* Records n elements of `elem` bytes, inc apart, at device address p. */
static void rec_vector(struct trace_rec *r, const char *name, int role, CUstream stream,
                       const void *p, int64_t n, int64_t inc, int elem)
{
    int64_t step = inc < 0 ? -inc : inc;
    struct digest_shape s = { .ndims = 1, .dims = { n > 0 ? n : 0 },
                              .strides = { step ? step : 1 }, .elem = (size_t)elem };
    if (step == 0 && n > 0)
        s.dims[0] = 1; /* one element, read n times */
    if (cuda_rec_strided(r, name, role, stream, p, &s) != 0) {
        cuda_note_no_digest(r);
        trace_rec_operand(r, name, role, digest_bytes(NULL, 0), 0, elem);
    }
}

/* One gemv or dot call. */
struct vcall {
    const char *api;
    cublasHandle_t h;
    CUstream stream;
    int type, ytype;         /* of the data (dot: of x, of y) */
    int scalar_type;         /* of alpha/beta, or of dot's result */
    int trans;               /* gemv */
    int64_t m, n, lda, incx, incy;
    const void *alpha, *beta, *a, *x, *y; /* y: gemv's output, dot's second input */
    void *result;                          /* dot */
};

static void vcall_begin(struct vcall *v, struct trace_rec *r)
{
    v->stream = cublas_handle_stream(v->h);
    trace_rec_begin(r, v->api);
    if (v->a) {
        trace_rec_char(r, "trans", v->trans == CUBLAS_OP_N ? 'N' : v->trans == CUBLAS_OP_T ? 'T'
                                   : v->trans == CUBLAS_OP_C ? 'C' : '?');
        trace_rec_int(r, "m", v->m);
    }
    trace_rec_int(r, "n", v->n);
    if (v->a)
        trace_rec_int(r, "lda", v->lda);
    trace_rec_int(r, "incx", v->incx);
    trace_rec_int(r, "incy", v->incy);
    trace_rec_int(r, "type", v->type);
}

static void vcall_end(const struct cuda_call *c, struct vcall *v, struct trace_rec *r,
                      cublasStatus_t st)
{
    trace_rec_int(r, "status", st);
    cuda_note_mode(r, c);
    cublas_note_handle(r, v->h);
    cuda_commit(r);
}

/* y = alpha op(A) x + beta y, A m x n. */
static void gemv_before(const struct cuda_call *c, struct vcall *v, struct trace_rec *r)
{
    if (!c->traced)
        return;
    vcall_begin(v, r);
    int elem = cuda_type_size(v->type);
    int64_t xlen = v->trans == CUBLAS_OP_N ? v->n : v->m;
    int64_t ylen = v->trans == CUBLAS_OP_N ? v->m : v->n;
    int device = cublas_handle_device_scalars(v->h);
    int alpha_zero = cuda_rec_scalar(r, "alpha", v->stream, v->alpha, device, v->type);
    int beta_zero = cuda_rec_scalar(r, "beta", v->stream, v->beta, device, v->type);
    if (!alpha_zero) {
        cuda_rec_matrix(r, "A", TRACE_ROLE_IN, v->stream, v->a, CUBLAS_OP_N, v->m, v->n, v->lda,
                        elem, 1, 0);
        rec_vector(r, "x", TRACE_ROLE_IN, v->stream, v->x, xlen, v->incx, elem);
    }
    if (!beta_zero)
        rec_vector(r, "y", TRACE_ROLE_IN, v->stream, v->y, ylen, v->incy, elem);
}

static void gemv_after(const struct cuda_call *c, struct vcall *v, struct trace_rec *r,
                       cublasStatus_t st)
{
    if (!c->traced)
        return;
    rec_vector(r, "y", TRACE_ROLE_OUT, v->stream, v->y, v->trans == CUBLAS_OP_N ? v->m : v->n,
               v->incy, cuda_type_size(v->type));
    vcall_end(c, v, r, st);
}

#define GEMV(NAME, T, TYPE, I)                                                             \
    DETSHIM_EXPORT cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t trans, I m,     \
                                       I n, const T *alpha, const T *A, I lda, const T *x, \
                                       I incx, const T *beta, T *y, I incy)                \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                   \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);            \
        struct vcall v = { .api = #NAME, .h = h, .type = TYPE, .scalar_type = TYPE,        \
                           .trans = trans, .m = m, .n = n, .lda = lda, .incx = incx,       \
                           .incy = incy, .alpha = alpha, .beta = beta, .a = A, .x = x,     \
                           .y = y };                                                       \
        struct trace_rec r;                                                                \
        gemv_before(&c, &v, &r);                                                           \
        cublasStatus_t st = real(h, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);   \
        gemv_after(&c, &v, &r, st);                                                        \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

/* result = x . y (conjugating x for dotc): the result is a host scalar,
 * ready on return, or a device one (pointer mode device). */
static void dot_before(const struct cuda_call *c, struct vcall *v, struct trace_rec *r)
{
    if (!c->traced)
        return;
    vcall_begin(v, r);
    rec_vector(r, "x", TRACE_ROLE_IN, v->stream, v->x, v->n, v->incx, cuda_type_size(v->type));
    rec_vector(r, "y", TRACE_ROLE_IN, v->stream, v->y, v->n, v->incy, cuda_type_size(v->ytype));
}

static void dot_after(const struct cuda_call *c, struct vcall *v, struct trace_rec *r,
                      cublasStatus_t st)
{
    if (!c->traced)
        return;
    int size = cuda_type_size(v->scalar_type);
    if (cublas_handle_device_scalars(v->h)) {
        if (cuda_rec_bytes(r, "result", TRACE_ROLE_OUT, v->stream, v->result, (size_t)size, 1,
                           size) != 0) {
            cuda_note_no_digest(r);
            trace_rec_operand(r, "result", TRACE_ROLE_OUT, digest_bytes(NULL, 0), 0, size);
        }
    } else {
        trace_rec_operand(r, "result", TRACE_ROLE_OUT,
                          digest_bytes(st == CUBLAS_STATUS_SUCCESS ? v->result : NULL,
                                       st == CUBLAS_STATUS_SUCCESS ? (size_t)size : 0),
                          1, size);
    }
    vcall_end(c, v, r, st);
}

#define DOT(NAME, T, TYPE, I)                                                              \
    DETSHIM_EXPORT cublasStatus_t NAME(cublasHandle_t h, I n, const T *x, I incx,          \
                                       const T *y, I incy, T *result)                      \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                   \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, n, x, incx, y, incy, result);                                   \
        struct vcall v = { .api = #NAME, .h = h, .type = TYPE, .ytype = TYPE,              \
                           .scalar_type = TYPE, .n = n, .incx = incx, .incy = incy, .x = x, .y = y,             \
                           .result = result };                                             \
        struct trace_rec r;                                                                \
        dot_before(&c, &v, &r);                                                            \
        cublasStatus_t st = real(h, n, x, incx, y, incy, result);                          \
        dot_after(&c, &v, &r, st);                                                         \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

/* Both index types of one routine. */
#define INT_AND_64(KIND, NAME, T, TYPE) KIND(NAME, T, TYPE, int) KIND(NAME##_64, T, TYPE, int64_t)

INT_AND_64(GEMV, cublasSgemv_v2, float, CUDA_R_32F)
INT_AND_64(GEMV, cublasDgemv_v2, double, CUDA_R_64F)
INT_AND_64(GEMV, cublasCgemv_v2, cuComplex, CUDA_C_32F)
INT_AND_64(GEMV, cublasZgemv_v2, cuDoubleComplex, CUDA_C_64F)
INT_AND_64(DOT, cublasSdot_v2, float, CUDA_R_32F)
INT_AND_64(DOT, cublasDdot_v2, double, CUDA_R_64F)
INT_AND_64(DOT, cublasCdotu_v2, cuComplex, CUDA_C_32F)
INT_AND_64(DOT, cublasCdotc_v2, cuComplex, CUDA_C_32F)
INT_AND_64(DOT, cublasZdotu_v2, cuDoubleComplex, CUDA_C_64F)
INT_AND_64(DOT, cublasZdotc_v2, cuDoubleComplex, CUDA_C_64F)

/* cublasDotEx: x and y of xType, the result of resultType, summed in
 * executionType (recorded). */
#define DOT_EX(NAME, I)                                                                    \
    DETSHIM_EXPORT cublasStatus_t NAME(cublasHandle_t h, I n, const void *x,               \
                                       cudaDataType xType, I incx, const void *y,          \
                                       cudaDataType yType, I incy, void *result,           \
                                       cudaDataType resultType, cudaDataType execType)     \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                   \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, n, x, xType, incx, y, yType, incy, result, resultType,          \
                        execType);                                                         \
        struct vcall v = { .api = #NAME, .h = h, .type = xType, .ytype = yType,            \
                           .scalar_type = resultType, .n = n, .incx = incx, .incy = incy, .x = x, .y = y,             \
                           .result = result };                                             \
        struct trace_rec r;                                                                \
        dot_before(&c, &v, &r);                                                            \
        if (c.traced) {                                                                    \
            trace_rec_int(&r, "yType", yType);                                             \
            trace_rec_int(&r, "resultType", resultType);                                   \
            trace_rec_int(&r, "executionType", execType);                                  \
        }                                                                                  \
        cublasStatus_t st = real(h, n, x, xType, incx, y, yType, incy, result, resultType, \
                                 execType);                                                \
        dot_after(&c, &v, &r, st);                                                         \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

DOT_EX(cublasDotEx, int)
DOT_EX(cublasDotEx_64, int64_t)

DETSHIM_EXPORT cublasStatus_t cublasSetSmCountTarget(cublasHandle_t h, int smCountTarget)
{
    CUDA_REAL_FN(cublasSetSmCountTarget_fn *, cublasSetSmCountTarget);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(h, smCountTarget);
    /* 0 restores cuBLAS's default (every SM): that one is let through. */
    int refused = c.pinned && smCountTarget != 0;
    cublasStatus_t st = refused ? CUBLAS_STATUS_SUCCESS : real(h, smCountTarget);
    if (c.traced) {
        struct trace_rec r;
        trace_rec_begin(&r, "cublasSetSmCountTarget");
        trace_rec_int(&r, "smCountTarget", smCountTarget);
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &c);
        if (refused)
            trace_rec_note(&r, "cuda.override", "sm_count_target->unset (every SM: a carveout "
                           "changes the kernels cuBLAS picks)");
        cuda_commit(&r);
    }
    cuda_leave();
    return st;
}
