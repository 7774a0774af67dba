/* cuBLAS triangular solves and batched solvers that PyTorch calls
 * (torch.linalg.solve_triangular, lu_factor, lu_solve, qr, lstsq on small
 * batches): trsm and trsmBatched under their int and _64 names, and the
 * batched getrf, getrs, geqrf and gels. Like the GEMMs (cublas.c) they
 * are traced with their shapes, the scalar, device digests of every
 * matrix they read before the call and of every one they write after it
 * (pivots and device info arrays included), and the handle's atomics and
 * math mode. cuBLAS documents them bitwise reproducible on one GPU model
 * and toolkit, with nothing to pin beyond what the handle already has.
 * A pointer array is digested as cublasGemmBatchedEx's is: the device
 * reads it, nothing waits.
 */
#include <stdio.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "trace/digest.h"

struct solve {
    const char *api;
    cublasHandle_t h;
    CUstream stream;
    int type, elem;
};

static void solve_begin(struct solve *s, struct trace_rec *r)
{
    s->stream = cublas_handle_stream(s->h);
    s->elem = cuda_type_size(s->type);
    trace_rec_begin(r, s->api);
    trace_rec_int(r, "type", s->type);
}

static void solve_end(const struct cuda_call *c, struct solve *s, struct trace_rec *r,
                      cublasStatus_t st)
{
    trace_rec_int(r, "status", st);
    cuda_note_mode(r, c);
    cublas_note_handle(r, s->h);
    cuda_commit(r);
}

/* `count` ints at device address p (pivots, info arrays); NULL records
 * nothing (getrf without pivoting). */
static void rec_dev_ints(struct trace_rec *r, const char *name, int role, CUstream stream,
                         const void *p, int64_t count)
{
    if (!p)
        return;
    if (cuda_rec_bytes(r, name, role, stream, p, (size_t)(count > 0 ? count : 0) * sizeof(int),
                       (uint64_t)(count > 0 ? count : 0), (int)sizeof(int)) != 0) {
        cuda_note_no_digest(r);
        trace_rec_operand(r, name, role, digest_bytes(NULL, 0), 0, (int)sizeof(int));
    }
}

/* The host int `info` of getrs, geqrf and gels, after the call. */
static void rec_host_info(struct trace_rec *r, const int *info)
{
    if (info)
        trace_rec_int(r, "info", *info);
}

/* op(A) X = alpha B or X op(A) = alpha B, X over B; A is m x m (left) or
 * n x n (right), its triangle `uplo` read. */
static void trsm_begin(struct solve *s, struct trace_rec *r, int side, int uplo, int trans,
                       int diag, int64_t m, int64_t n, int64_t lda, int64_t ldb)
{
    solve_begin(s, r);
    trace_rec_char(r, "side", side == CUBLAS_SIDE_LEFT ? 'L' : 'R');
    trace_rec_char(r, "uplo", uplo == CUBLAS_FILL_MODE_LOWER ? 'L' : 'U');
    trace_rec_char(r, "trans", trans == CUBLAS_OP_N ? 'N' : trans == CUBLAS_OP_T ? 'T' : 'C');
    trace_rec_char(r, "diag", diag == CUBLAS_DIAG_UNIT ? 'U' : 'N');
    trace_rec_int(r, "m", m);
    trace_rec_int(r, "n", n);
    trace_rec_int(r, "lda", lda);
    trace_rec_int(r, "ldb", ldb);
}

#define TRSM(NAME, T, TYPE, I)                                                             \
    DETSHIM_EXPORT cublasStatus_t NAME(cublasHandle_t h, cublasSideMode_t side,            \
                                       cublasFillMode_t uplo, cublasOperation_t trans,     \
                                       cublasDiagType_t diag, I m, I n, const T *alpha,    \
                                       const T *A, I lda, T *B, I ldb)                     \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                   \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);          \
        struct solve s = { .api = #NAME, .h = h, .type = TYPE };                           \
        struct trace_rec r;                                                                \
        int64_t ka = side == CUBLAS_SIDE_LEFT ? m : n;                                     \
        if (c.traced) {                                                                    \
            trsm_begin(&s, &r, side, uplo, trans, diag, m, n, lda, ldb);                   \
            /* alpha 0: B is set to zero, neither matrix is read */                  \
            if (!cuda_rec_scalar(&r, "alpha", s.stream, alpha,                             \
                                 cublas_handle_device_scalars(h), TYPE)) {                 \
                cuda_rec_matrix(&r, "A", TRACE_ROLE_IN, s.stream, A, CUBLAS_OP_N, ka, ka,  \
                                lda, s.elem, 1, 0);                                        \
                cuda_rec_matrix(&r, "B", TRACE_ROLE_IN, s.stream, B, CUBLAS_OP_N, m, n,    \
                                ldb, s.elem, 1, 0);                                        \
            }                                                                              \
        }                                                                                  \
        cublasStatus_t st = real(h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb); \
        if (c.traced) {                                                                    \
            cuda_rec_matrix(&r, "B", TRACE_ROLE_OUT, s.stream, B, CUBLAS_OP_N, m, n, ldb,  \
                            s.elem, 1, 0);                                                 \
            solve_end(&c, &s, &r, st);                                                     \
        }                                                                                  \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

#define TRSM_BATCHED(NAME, T, TYPE, I)                                                     \
    DETSHIM_EXPORT cublasStatus_t NAME(cublasHandle_t h, cublasSideMode_t side,            \
                                       cublasFillMode_t uplo, cublasOperation_t trans,     \
                                       cublasDiagType_t diag, I m, I n, const T *alpha,    \
                                       const T *const A[], I lda, T *const B[], I ldb,     \
                                       I batch)                                            \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                   \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, batch);   \
        struct solve s = { .api = #NAME, .h = h, .type = TYPE };                           \
        struct trace_rec r;                                                                \
        int64_t ka = side == CUBLAS_SIDE_LEFT ? m : n;                                     \
        const void *const *a = (const void *const *)A, *const *b = (const void *const *)B; \
        if (c.traced) {                                                                    \
            trsm_begin(&s, &r, side, uplo, trans, diag, m, n, lda, ldb);                   \
            trace_rec_int(&r, "batch", batch);                                             \
            if (!cuda_rec_scalar(&r, "alpha", s.stream, alpha,                             \
                                 cublas_handle_device_scalars(h), TYPE)) {                 \
                cuda_rec_matrix_array(&r, "A", TRACE_ROLE_IN, s.stream, a, CUBLAS_OP_N,    \
                                      ka, ka, lda, s.elem, batch);                         \
                cuda_rec_matrix_array(&r, "B", TRACE_ROLE_IN, s.stream, b, CUBLAS_OP_N, m, \
                                      n, ldb, s.elem, batch);                              \
            }                                                                              \
        }                                                                                  \
        cublasStatus_t st = real(h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb,  \
                                 batch);                                                   \
        if (c.traced) {                                                                    \
            cuda_rec_matrix_array(&r, "B", TRACE_ROLE_OUT, s.stream, b, CUBLAS_OP_N, m, n, \
                                  ldb, s.elem, batch);                                     \
            solve_end(&c, &s, &r, st);                                                     \
        }                                                                                  \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

/* LU of n x n matrices in place, pivots P (n per matrix) and info. */
#define GETRF_BATCHED(NAME, T, TYPE)                                                       \
    DETSHIM_EXPORT cublasStatus_t NAME(cublasHandle_t h, int n, T *const A[], int lda,     \
                                       int *P, int *info, int batch)                       \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                   \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, n, A, lda, P, info, batch);                                     \
        struct solve s = { .api = #NAME, .h = h, .type = TYPE };                           \
        struct trace_rec r;                                                                \
        const void *const *a = (const void *const *)A;                                     \
        if (c.traced) {                                                                    \
            solve_begin(&s, &r);                                                           \
            trace_rec_int(&r, "n", n);                                                     \
            trace_rec_int(&r, "lda", lda);                                                 \
            trace_rec_int(&r, "batch", batch);                                             \
            trace_rec_int(&r, "pivoting", P != NULL);                                      \
            cuda_rec_matrix_array(&r, "A", TRACE_ROLE_IN, s.stream, a, CUBLAS_OP_N, n, n,  \
                                  lda, s.elem, batch);                                     \
        }                                                                                  \
        cublasStatus_t st = real(h, n, A, lda, P, info, batch);                            \
        if (c.traced) {                                                                    \
            cuda_rec_matrix_array(&r, "A", TRACE_ROLE_OUT, s.stream, a, CUBLAS_OP_N, n, n, \
                                  lda, s.elem, batch);                                     \
            rec_dev_ints(&r, "P", TRACE_ROLE_OUT, s.stream, P, (int64_t)n * batch);        \
            rec_dev_ints(&r, "info", TRACE_ROLE_OUT, s.stream, info, batch);               \
            solve_end(&c, &s, &r, st);                                                     \
        }                                                                                  \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

/* op(A) X = B from getrf's factors and pivots, X over B (n x nrhs). */
#define GETRS_BATCHED(NAME, T, TYPE)                                                       \
    DETSHIM_EXPORT cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t trans, int n,   \
                                       int nrhs, const T *const A[], int lda,              \
                                       const int *ipiv, T *const B[], int ldb, int *info,  \
                                       int batch)                                          \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                   \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, trans, n, nrhs, A, lda, ipiv, B, ldb, info, batch);             \
        struct solve s = { .api = #NAME, .h = h, .type = TYPE };                           \
        struct trace_rec r;                                                                \
        const void *const *a = (const void *const *)A, *const *b = (const void *const *)B; \
        if (c.traced) {                                                                    \
            solve_begin(&s, &r);                                                           \
            trace_rec_char(&r, "trans", trans == CUBLAS_OP_N ? 'N'                         \
                                        : trans == CUBLAS_OP_T ? 'T' : 'C');              \
            trace_rec_int(&r, "n", n);                                                     \
            trace_rec_int(&r, "nrhs", nrhs);                                               \
            trace_rec_int(&r, "lda", lda);                                                 \
            trace_rec_int(&r, "ldb", ldb);                                                 \
            trace_rec_int(&r, "batch", batch);                                             \
            cuda_rec_matrix_array(&r, "A", TRACE_ROLE_IN, s.stream, a, CUBLAS_OP_N, n, n,  \
                                  lda, s.elem, batch);                                     \
            rec_dev_ints(&r, "ipiv", TRACE_ROLE_IN, s.stream, ipiv, (int64_t)n * batch);   \
            cuda_rec_matrix_array(&r, "B", TRACE_ROLE_IN, s.stream, b, CUBLAS_OP_N, n,     \
                                  nrhs, ldb, s.elem, batch);                               \
        }                                                                                  \
        cublasStatus_t st = real(h, trans, n, nrhs, A, lda, ipiv, B, ldb, info, batch);    \
        if (c.traced) {                                                                    \
            cuda_rec_matrix_array(&r, "B", TRACE_ROLE_OUT, s.stream, b, CUBLAS_OP_N, n,    \
                                  nrhs, ldb, s.elem, batch);                               \
            rec_host_info(&r, info);                                                       \
            solve_end(&c, &s, &r, st);                                                     \
        }                                                                                  \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

/* QR of m x n matrices in place; tau, min(m, n) per matrix, out. */
#define GEQRF_BATCHED(NAME, T, TYPE)                                                       \
    DETSHIM_EXPORT cublasStatus_t NAME(cublasHandle_t h, int m, int n, T *const A[],       \
                                       int lda, T *const Tau[], int *info, int batch)      \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                   \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, m, n, A, lda, Tau, info, batch);                                \
        struct solve s = { .api = #NAME, .h = h, .type = TYPE };                           \
        struct trace_rec r;                                                                \
        const void *const *a = (const void *const *)A, *const *t = (const void *const *)Tau; \
        int64_t k = m < n ? m : n;                                                         \
        if (c.traced) {                                                                    \
            solve_begin(&s, &r);                                                           \
            trace_rec_int(&r, "m", m);                                                     \
            trace_rec_int(&r, "n", n);                                                     \
            trace_rec_int(&r, "lda", lda);                                                 \
            trace_rec_int(&r, "batch", batch);                                             \
            cuda_rec_matrix_array(&r, "A", TRACE_ROLE_IN, s.stream, a, CUBLAS_OP_N, m, n,  \
                                  lda, s.elem, batch);                                     \
        }                                                                                  \
        cublasStatus_t st = real(h, m, n, A, lda, Tau, info, batch);                       \
        if (c.traced) {                                                                    \
            cuda_rec_matrix_array(&r, "A", TRACE_ROLE_OUT, s.stream, a, CUBLAS_OP_N, m, n, \
                                  lda, s.elem, batch);                                     \
            cuda_rec_matrix_array(&r, "tau", TRACE_ROLE_OUT, s.stream, t, CUBLAS_OP_N, k,  \
                                  1, k, s.elem, batch);                                    \
            rec_host_info(&r, info);                                                       \
            solve_end(&c, &s, &r, st);                                                     \
        }                                                                                  \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

/* Least squares min |op(A) X - C|, A m x n overwritten by its QR, X over
 * C (ldc x nrhs; its first max(m, n) rows are read and written). */
#define GELS_BATCHED(NAME, T, TYPE)                                                        \
    DETSHIM_EXPORT cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t trans, int m,   \
                                       int n, int nrhs, T *const A[], int lda,             \
                                       T *const C[], int ldc, int *info, int *devInfo,     \
                                       int batch)                                          \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                   \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, trans, m, n, nrhs, A, lda, C, ldc, info, devInfo, batch);       \
        struct solve s = { .api = #NAME, .h = h, .type = TYPE };                           \
        struct trace_rec r;                                                                \
        const void *const *a = (const void *const *)A, *const *cc = (const void *const *)C; \
        int64_t rows = m > n ? m : n;                                                      \
        if (c.traced) {                                                                    \
            solve_begin(&s, &r);                                                           \
            trace_rec_char(&r, "trans", trans == CUBLAS_OP_N ? 'N'                         \
                                        : trans == CUBLAS_OP_T ? 'T' : 'C');              \
            trace_rec_int(&r, "m", m);                                                     \
            trace_rec_int(&r, "n", n);                                                     \
            trace_rec_int(&r, "nrhs", nrhs);                                               \
            trace_rec_int(&r, "lda", lda);                                                 \
            trace_rec_int(&r, "ldc", ldc);                                                 \
            trace_rec_int(&r, "batch", batch);                                             \
            cuda_rec_matrix_array(&r, "A", TRACE_ROLE_IN, s.stream, a, CUBLAS_OP_N, m, n,  \
                                  lda, s.elem, batch);                                     \
            cuda_rec_matrix_array(&r, "C", TRACE_ROLE_IN, s.stream, cc, CUBLAS_OP_N, rows, \
                                  nrhs, ldc, s.elem, batch);                               \
        }                                                                                  \
        cublasStatus_t st = real(h, trans, m, n, nrhs, A, lda, C, ldc, info, devInfo,      \
                                 batch);                                                   \
        if (c.traced) {                                                                    \
            cuda_rec_matrix_array(&r, "A", TRACE_ROLE_OUT, s.stream, a, CUBLAS_OP_N, m, n, \
                                  lda, s.elem, batch);                                     \
            cuda_rec_matrix_array(&r, "C", TRACE_ROLE_OUT, s.stream, cc, CUBLAS_OP_N,      \
                                  rows, nrhs, ldc, s.elem, batch);                         \
            rec_dev_ints(&r, "devInfo", TRACE_ROLE_OUT, s.stream, devInfo, batch);         \
            rec_host_info(&r, info);                                                       \
            solve_end(&c, &s, &r, st);                                                     \
        }                                                                                  \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

/* Each routine for the four types (and both index types where cuBLAS has
 * a _64 name). */
#define FOUR_TYPES(KIND, S, D, C, Z)                                                       \
    KIND(S, float, CUDA_R_32F) KIND(D, double, CUDA_R_64F) KIND(C, cuComplex, CUDA_C_32F)  \
    KIND(Z, cuDoubleComplex, CUDA_C_64F)
#define FOUR_TYPES_64(KIND, S, D, C, Z)                                                    \
    KIND(S, float, CUDA_R_32F, int) KIND(S##_64, float, CUDA_R_32F, int64_t)               \
    KIND(D, double, CUDA_R_64F, int) KIND(D##_64, double, CUDA_R_64F, int64_t)             \
    KIND(C, cuComplex, CUDA_C_32F, int) KIND(C##_64, cuComplex, CUDA_C_32F, int64_t)       \
    KIND(Z, cuDoubleComplex, CUDA_C_64F, int) KIND(Z##_64, cuDoubleComplex, CUDA_C_64F, int64_t)

FOUR_TYPES_64(TRSM, cublasStrsm_v2, cublasDtrsm_v2, cublasCtrsm_v2, cublasZtrsm_v2)
FOUR_TYPES_64(TRSM_BATCHED, cublasStrsmBatched, cublasDtrsmBatched, cublasCtrsmBatched,
              cublasZtrsmBatched)
FOUR_TYPES(GETRF_BATCHED, cublasSgetrfBatched, cublasDgetrfBatched, cublasCgetrfBatched,
           cublasZgetrfBatched)
FOUR_TYPES(GETRS_BATCHED, cublasSgetrsBatched, cublasDgetrsBatched, cublasCgetrsBatched,
           cublasZgetrsBatched)
FOUR_TYPES(GEQRF_BATCHED, cublasSgeqrfBatched, cublasDgeqrfBatched, cublasCgeqrfBatched,
           cublasZgeqrfBatched)
FOUR_TYPES(GELS_BATCHED, cublasSgelsBatched, cublasDgelsBatched, cublasCgelsBatched,
           cublasZgelsBatched)
