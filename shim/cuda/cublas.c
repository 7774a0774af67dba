/* cuBLAS interceptors. In pinned mode every handle is made deterministic
 * where it is created (atomics not allowed; with [cuda] tf32 = deny, the
 * default math mode, which since CUDA 11 never uses TF32 for FP32 data),
 * and a program's later request for atomics, TF32 math or a FAST_TF32
 * compute type is overridden and the override recorded. CUBLAS_PEDANTIC_
 * MATH is not forced: it also disables tensor cores for FP16/BF16 data,
 * costs speed, and adds nothing to run-to-run determinism. Every GEMM of
 * the family is traced with its shape, scalars, operand digests (device
 * digests, devdigest.c) and the handle's decisions (atomics, math mode,
 * algorithm). No cuBLAS header: types come from shim/cuda/cuda_api.h.
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "core/policy.h"

static cublasStatus_t real_set_atomics(cublasHandle_t h, int mode)
{
    CUDA_REAL_FN(cublasSetAtomicsMode_fn *, cublasSetAtomicsMode);
    return real(h, mode);
}

static cublasStatus_t real_set_math(cublasHandle_t h, int mode)
{
    CUDA_REAL_FN(cublasSetMathMode_fn *, cublasSetMathMode);
    return real(h, mode);
}

CUstream cublas_handle_stream(cublasHandle_t h)
{
    static void *cache;
    cublasGetStream_v2_fn *get =
        (cublasGetStream_v2_fn *)(uintptr_t)cuda_sym(&cache, "cublasGetStream_v2");
    cudaStream_t s = NULL;
    if (!get || get(h, &s) != CUBLAS_STATUS_SUCCESS)
        s = NULL;
    return s;
}

int cublas_handle_device_scalars(cublasHandle_t h)
{
    static void *cache;
    cublasGetPointerMode_v2_fn *get =
        (cublasGetPointerMode_v2_fn *)(uintptr_t)cuda_sym(&cache, "cublasGetPointerMode_v2");
    cublasPointerMode_t m = CUBLAS_POINTER_MODE_HOST;
    return get && get(h, &m) == CUBLAS_STATUS_SUCCESS && m == CUBLAS_POINTER_MODE_DEVICE;
}

/* A math mode as text: the mode, then any flags; a static string, as
 * every traced GEMM notes it (a snprintf each was a tenth of the shim's
 * own time per call on the fake). */
static const char *math_name(int mode)
{
#define DISALLOW "+disallow_reduced_precision_reduction"
#define MATH(n) { n, n DISALLOW }
    static const char *const names[16][2] = {
        [0] = MATH("default"), [1] = MATH("tensor_op"), [2] = MATH("pedantic"),
        [3] = MATH("tf32_tensor_op"), [4] = MATH("fp32_emulated_bf16x9"),
        [8] = MATH("fp64_emulated_fixedpoint"),
    };
    static const char *const unknown[2] = MATH("?");
#undef MATH
#undef DISALLOW
    int flag = (mode & CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION) != 0;
    const char *n = names[mode & 0xf][flag];
    return n ? n : unknown[flag];
}

/* Math modes that let FP32 GEMMs round their inputs to TF32 (the
 * deprecated TENSOR_OP_MATH is COMPUTE_32F_FAST_16F, which may too). */
static int math_allows_tf32(int mode)
{
    int base = mode & 0xf;
    return base == CUBLAS_TF32_TENSOR_OP_MATH || base == CUBLAS_TENSOR_OP_MATH;
}

static int compute_allows_tf32(int compute)
{
    return compute == CUBLAS_COMPUTE_32F_FAST_TF32 || compute == CUBLAS_COMPUTE_32F_FAST_16F;
}

static int deny_tf32(const struct cuda_call *c)
{
    return c->pinned && core_cfg.cuda_tf32 == TF32_DENY;
}

void cublas_note_handle(struct trace_rec *r, cublasHandle_t h)
{
    static void *atomics_cache, *math_cache;
    cublasGetAtomicsMode_fn *get_atomics =
        (cublasGetAtomicsMode_fn *)(uintptr_t)cuda_sym(&atomics_cache, "cublasGetAtomicsMode");
    cublasGetMathMode_fn *get_math =
        (cublasGetMathMode_fn *)(uintptr_t)cuda_sym(&math_cache, "cublasGetMathMode");
    cublasAtomicsMode_t atomics;
    cublasMath_t math;
    if (get_atomics && get_atomics(h, &atomics) == CUBLAS_STATUS_SUCCESS)
        trace_rec_note(r, "cuda.atomics",
                       atomics == CUBLAS_ATOMICS_ALLOWED ? "allowed" : "not_allowed");
    if (get_math && get_math(h, &math) == CUBLAS_STATUS_SUCCESS)
        trace_rec_note(r, "cuda.math_mode", math_name(math));
}

DETSHIM_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    CUDA_REAL_FN(cublasCreate_v2_fn *, cublasCreate_v2);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle);
    cublasStatus_t st = real(handle);
    const char *atomics = "library default", *math = "library default";
    if (st == CUBLAS_STATUS_SUCCESS && c.pinned) {
        atomics = real_set_atomics(*handle, CUBLAS_ATOMICS_NOT_ALLOWED) == CUBLAS_STATUS_SUCCESS
                      ? "not_allowed" : "not_allowed (refused by cuBLAS)";
        if (deny_tf32(&c))
            math = real_set_math(*handle, CUBLAS_DEFAULT_MATH) == CUBLAS_STATUS_SUCCESS
                       ? "default" : "default (refused by cuBLAS)";
    }
    if (c.traced) {
        struct trace_rec r;
        trace_rec_begin(&r, "cublasCreate_v2");
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &c);
        trace_rec_note(&r, "cuda.atomics", atomics);
        trace_rec_note(&r, "cuda.math_mode", math);
        cuda_commit(&r);
    }
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cublasStatus_t cublasSetAtomicsMode(cublasHandle_t h, cublasAtomicsMode_t mode)
{
    CUDA_REAL_FN(cublasSetAtomicsMode_fn *, cublasSetAtomicsMode);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(h, mode);
    int applied = c.pinned ? CUBLAS_ATOMICS_NOT_ALLOWED : mode;
    cublasStatus_t st = real(h, applied);
    if (c.traced) {
        struct trace_rec r;
        trace_rec_begin(&r, "cublasSetAtomicsMode");
        trace_rec_int(&r, "mode", mode);
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &c);
        trace_rec_note(&r, "cuda.atomics",
                       applied == CUBLAS_ATOMICS_ALLOWED ? "allowed" : "not_allowed");
        if (applied != (int)mode)
            trace_rec_note(&r, "cuda.override", "atomics_allowed->not_allowed");
        cuda_commit(&r);
    }
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode)
{
    CUDA_REAL_FN(cublasSetMathMode_fn *, cublasSetMathMode);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(h, mode);
    int applied = deny_tf32(&c) && math_allows_tf32(mode) ? (mode & ~0xf) | CUBLAS_DEFAULT_MATH
                                                           : mode;
    cublasStatus_t st = real(h, applied);
    if (c.traced) {
        char override[140];
        struct trace_rec r;
        trace_rec_begin(&r, "cublasSetMathMode");
        trace_rec_int(&r, "mode", mode);
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &c);
        trace_rec_note(&r, "cuda.math_mode", math_name(applied));
        if (applied != (int)mode) {
            snprintf(override, sizeof override, "math_%s->%s", math_name(mode),
                     math_name(applied));
            trace_rec_note(&r, "cuda.override", override);
        }
        cuda_commit(&r);
    }
    cuda_leave();
    return st;
}

/* One GEMM-family call, whatever its entry point: C = alpha op(A) op(B) +
 * beta C over `batch` matrices (strided, or through pointer arrays). */
struct gemm {
    const char *api;
    cublasHandle_t h;
    int transa, transb;
    int64_t m, n, k, lda, ldb, ldc, sa, sb, sc, batch;
    const void *alpha, *beta, *a, *b;
    void *c;
    const void *const *aa, *const *ba; /* pointer arrays (BatchedEx), else NULL */
    void *const *ca;
    int atype, btype, ctype, scalar_type;
    int compute, algo;   /* -1: a typed entry point, which has neither */
    int asked_compute;   /* before an override */
    int batched;         /* record strides and batch count */
    CUstream stream;
    char override[96];
};

static char trans_char(int t)
{
    return t == CUBLAS_OP_N ? 'N' : t == CUBLAS_OP_T ? 'T' : t == CUBLAS_OP_C ? 'C' : '?';
}

static void rec_operand(struct trace_rec *r, const struct gemm *g, const char *name, int role)
{
    int is_a = name[0] == 'A', is_b = name[0] == 'B';
    const void *p = is_a ? g->a : is_b ? g->b : g->c;
    const void *const *arr = is_a ? g->aa : is_b ? g->ba : (const void *const *)g->ca;
    int trans = is_a ? g->transa : is_b ? g->transb : CUBLAS_OP_N;
    int64_t rows = is_a ? g->m : is_b ? g->k : g->m;
    int64_t cols = is_a ? g->k : g->n;
    int64_t ld = is_a ? g->lda : is_b ? g->ldb : g->ldc;
    int type = is_a ? g->atype : is_b ? g->btype : g->ctype;
    int elem = cuda_type_size(type);
    if (!elem) {
        trace_rec_note(r, "cuda.digest", "not taken: a data type detshim does not know");
        return;
    }
    if (arr)
        cuda_rec_matrix_array(r, name, role, g->stream, arr, trans, rows, cols, ld, elem, g->batch);
    else
        cuda_rec_matrix(r, name, role, g->stream, p, trans, rows, cols, ld, elem, g->batch,
                        is_a ? g->sa : is_b ? g->sb : g->sc);
}

/* Applies the policy to the call's arguments (FAST_TF32 under tf32 =
 * deny) and, when tracing, records everything known before the call. */
static void gemm_before(const struct cuda_call *c, struct gemm *g, struct trace_rec *r)
{
    g->asked_compute = g->compute;
    if (deny_tf32(c) && compute_allows_tf32(g->compute)) {
        g->compute = CUBLAS_COMPUTE_32F;
        snprintf(g->override, sizeof g->override, "compute_type_%d->%d (no TF32)",
                 g->asked_compute, g->compute);
    }
    if (!c->traced)
        return;
    g->stream = cublas_handle_stream(g->h);
    trace_rec_begin(r, g->api);
    trace_rec_char(r, "transa", trans_char(g->transa));
    trace_rec_char(r, "transb", trans_char(g->transb));
    trace_rec_int(r, "m", g->m);
    trace_rec_int(r, "n", g->n);
    trace_rec_int(r, "k", g->k);
    trace_rec_int(r, "lda", g->lda);
    trace_rec_int(r, "ldb", g->ldb);
    trace_rec_int(r, "ldc", g->ldc);
    if (g->batched) {
        if (!g->aa) {
            trace_rec_int(r, "strideA", g->sa);
            trace_rec_int(r, "strideB", g->sb);
            trace_rec_int(r, "strideC", g->sc);
        }
        trace_rec_int(r, "batch", g->batch);
    }
    if (g->compute >= 0) {
        trace_rec_int(r, "Atype", g->atype);
        trace_rec_int(r, "Btype", g->btype);
        trace_rec_int(r, "Ctype", g->ctype);
        trace_rec_int(r, "computeType", g->asked_compute);
        trace_rec_int(r, "algo", g->algo);
    }
    int device = cublas_handle_device_scalars(g->h);
    int alpha_zero = cuda_rec_scalar(r, "alpha", g->stream, g->alpha, device, g->scalar_type);
    int beta_zero = cuda_rec_scalar(r, "beta", g->stream, g->beta, device, g->scalar_type);
    /* cuBLAS reads neither A nor B when alpha is 0, nor C when beta is 0:
     * such inputs may hold anything. */
    if (!alpha_zero) {
        rec_operand(r, g, "A", TRACE_ROLE_IN);
        rec_operand(r, g, "B", TRACE_ROLE_IN);
    }
    if (!beta_zero)
        rec_operand(r, g, "C", TRACE_ROLE_IN);
}

static void gemm_after(const struct cuda_call *c, struct gemm *g, struct trace_rec *r,
                       cublasStatus_t st)
{
    if (!c->traced)
        return;
    rec_operand(r, g, "C", TRACE_ROLE_OUT);
    trace_rec_int(r, "status", st);
    cuda_note_mode(r, c);
    cublas_note_handle(r, g->h);
    if (g->compute >= 0)
        trace_rec_note(r, "cuda.algo", g->algo == CUBLAS_GEMM_DEFAULT ? "default (cuBLAS heuristic)"
                                       : "as requested (algo parameter)");
    if (g->override[0])
        trace_rec_note(r, "cuda.override", g->override);
    cuda_commit(r);
}

/* cublas<T>gemm, cublas<T>gemmStridedBatched and cublas<T>gemmBatched:
 * the element type fixes the data and scalar types. I is the index type
 * (int, or int64_t in the _64 entry points). */
#define TYPED_GEMM(NAME, T, TYPE, I)                                                       \
    DETSHIM_EXPORT cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t transa,         \
                                       cublasOperation_t transb, I m, I n, I k,            \
                                       const T *alpha, const T *A, I lda, const T *B,      \
                                       I ldb, const T *beta, T *C, I ldc)                  \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                        \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);  \
        struct gemm g = { .api = #NAME, .h = h, .transa = transa, .transb = transb,        \
                          .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,      \
                          .batch = 1, .alpha = alpha, .beta = beta, .a = A, .b = B,        \
                          .c = C, .atype = TYPE, .btype = TYPE, .ctype = TYPE,             \
                          .scalar_type = TYPE, .compute = -1, .algo = -1 };               \
        struct trace_rec r;                                                                \
        gemm_before(&c, &g, &r);                                                           \
        cublasStatus_t st = real(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta,  \
                                 C, ldc);                                                  \
        gemm_after(&c, &g, &r, st);                                                        \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

#define TYPED_GEMM_SB(NAME, T, TYPE, I)                                                    \
    DETSHIM_EXPORT cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t transa,         \
                                       cublasOperation_t transb, I m, I n, I k,            \
                                       const T *alpha, const T *A, I lda,                  \
                                       long long int sa, const T *B, I ldb,                \
                                       long long int sb, const T *beta, T *C, I ldc,       \
                                       long long int sc, I batch)                          \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                        \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, transa, transb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta,   \
                        C, ldc, sc, batch);                                                \
        struct gemm g = { .api = #NAME, .h = h, .transa = transa, .transb = transb,        \
                          .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,      \
                          .sa = sa, .sb = sb, .sc = sc, .batch = batch, .batched = 1,      \
                          .alpha = alpha, .beta = beta, .a = A, .b = B, .c = C,            \
                          .atype = TYPE, .btype = TYPE, .ctype = TYPE,                     \
                          .scalar_type = TYPE, .compute = -1, .algo = -1 };               \
        struct trace_rec r;                                                                \
        gemm_before(&c, &g, &r);                                                           \
        cublasStatus_t st = real(h, transa, transb, m, n, k, alpha, A, lda, sa, B, ldb,    \
                                 sb, beta, C, ldc, sc, batch);                             \
        gemm_after(&c, &g, &r, st);                                                        \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

#define TYPED_GEMM_BATCHED(NAME, T, TYPE, I)                                               \
    DETSHIM_EXPORT cublasStatus_t NAME(cublasHandle_t h, cublasOperation_t transa,         \
                                       cublasOperation_t transb, I m, I n, I k,            \
                                       const T *alpha, const T *const A[], I lda,          \
                                       const T *const B[], I ldb, const T *beta,           \
                                       T *const C[], I ldc, I batch)                       \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                        \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,   \
                        batch);                                                            \
        struct gemm g = { .api = #NAME, .h = h, .transa = transa, .transb = transb,        \
                          .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,      \
                          .batch = batch, .batched = 1, .alpha = alpha, .beta = beta,      \
                          .aa = (const void *const *)A, .ba = (const void *const *)B,      \
                          .ca = (void *const *)C, .atype = TYPE, .btype = TYPE,            \
                          .ctype = TYPE, .scalar_type = TYPE, .compute = -1, .algo = -1 }; \
        struct trace_rec r;                                                                \
        gemm_before(&c, &g, &r);                                                           \
        cublasStatus_t st = real(h, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta,  \
                                 C, ldc, batch);                                           \
        gemm_after(&c, &g, &r, st);                                                        \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

/* Each under both index types: NAME with int, NAME_64 with int64_t. */
#define BOTH_INDEX_TYPES(KIND, NAME, T, TYPE) \
    KIND(NAME, T, TYPE, int)                  \
    KIND(NAME##_64, T, TYPE, int64_t)

BOTH_INDEX_TYPES(TYPED_GEMM, cublasSgemm_v2, float, CUDA_R_32F)
BOTH_INDEX_TYPES(TYPED_GEMM, cublasDgemm_v2, double, CUDA_R_64F)
BOTH_INDEX_TYPES(TYPED_GEMM, cublasHgemm, __half, CUDA_R_16F)
BOTH_INDEX_TYPES(TYPED_GEMM, cublasCgemm_v2, cuComplex, CUDA_C_32F)
BOTH_INDEX_TYPES(TYPED_GEMM, cublasZgemm_v2, cuDoubleComplex, CUDA_C_64F)
BOTH_INDEX_TYPES(TYPED_GEMM_SB, cublasSgemmStridedBatched, float, CUDA_R_32F)
BOTH_INDEX_TYPES(TYPED_GEMM_SB, cublasDgemmStridedBatched, double, CUDA_R_64F)
BOTH_INDEX_TYPES(TYPED_GEMM_SB, cublasHgemmStridedBatched, __half, CUDA_R_16F)
BOTH_INDEX_TYPES(TYPED_GEMM_SB, cublasCgemmStridedBatched, cuComplex, CUDA_C_32F)
BOTH_INDEX_TYPES(TYPED_GEMM_SB, cublasZgemmStridedBatched, cuDoubleComplex, CUDA_C_64F)
BOTH_INDEX_TYPES(TYPED_GEMM_BATCHED, cublasSgemmBatched, float, CUDA_R_32F)
BOTH_INDEX_TYPES(TYPED_GEMM_BATCHED, cublasDgemmBatched, double, CUDA_R_64F)
BOTH_INDEX_TYPES(TYPED_GEMM_BATCHED, cublasHgemmBatched, __half, CUDA_R_16F)
BOTH_INDEX_TYPES(TYPED_GEMM_BATCHED, cublasCgemmBatched, cuComplex, CUDA_C_32F)
BOTH_INDEX_TYPES(TYPED_GEMM_BATCHED, cublasZgemmBatched, cuDoubleComplex, CUDA_C_64F)

/* The type of alpha and beta for a compute type (cuBLAS's table for
 * cublasGemmEx): the compute precision, complex when C is. */
static int scalar_type_for(int compute, int ctype)
{
    int complex = ctype == CUDA_C_16F || ctype == CUDA_C_16BF || ctype == CUDA_C_32F ||
                  ctype == CUDA_C_64F || ctype == CUDA_C_8I || ctype == CUDA_C_32I;
    switch (compute) {
    case CUBLAS_COMPUTE_16F: case CUBLAS_COMPUTE_16F_PEDANTIC:
        return CUDA_R_16F;
    case CUBLAS_COMPUTE_64F: case CUBLAS_COMPUTE_64F_PEDANTIC:
        return complex ? CUDA_C_64F : CUDA_R_64F;
    case CUBLAS_COMPUTE_32I: case CUBLAS_COMPUTE_32I_PEDANTIC:
        return CUDA_R_32I;
    default:
        return complex ? CUDA_C_32F : CUDA_R_32F;
    }
}

/* cublasGemmEx, cublasGemmBatchedEx and cublasGemmStridedBatchedEx: data
 * types and compute type are arguments; under tf32 = deny a FAST_TF32 or
 * FAST_16F compute type is replaced (gemm_before). I as above. */
#define GEMM_EX(NAME, I)                                                                   \
    DETSHIM_EXPORT cublasStatus_t NAME(                                                    \
        cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, I m, I n,    \
        I k, const void *alpha, const void *A, cudaDataType Atype, I lda, const void *B,   \
        cudaDataType Btype, I ldb, const void *beta, void *C, cudaDataType Ctype, I ldc,   \
        cublasComputeType_t computeType, cublasGemmAlgo_t algo)                            \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                        \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb,   \
                        beta, C, Ctype, ldc, computeType, algo);                           \
        struct gemm g = { .api = #NAME, .h = h, .transa = transa, .transb = transb,        \
                          .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,      \
                          .batch = 1, .alpha = alpha, .beta = beta, .a = A, .b = B,        \
                          .c = C, .atype = Atype, .btype = Btype, .ctype = Ctype,          \
                          .scalar_type = scalar_type_for(computeType, Ctype),              \
                          .compute = computeType, .algo = algo };                          \
        struct trace_rec r;                                                                \
        gemm_before(&c, &g, &r);                                                           \
        cublasStatus_t st = real(h, transa, transb, m, n, k, alpha, A, Atype, lda, B,      \
                                 Btype, ldb, beta, C, Ctype, ldc, g.compute, algo);        \
        gemm_after(&c, &g, &r, st);                                                        \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

#define GEMM_BATCHED_EX(NAME, I)                                                           \
    DETSHIM_EXPORT cublasStatus_t NAME(                                                    \
        cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, I m, I n,    \
        I k, const void *alpha, const void *const Aarray[], cudaDataType Atype, I lda,     \
        const void *const Barray[], cudaDataType Btype, I ldb, const void *beta,           \
        void *const Carray[], cudaDataType Ctype, I ldc, I batchCount,                     \
        cublasComputeType_t computeType, cublasGemmAlgo_t algo)                            \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                        \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray,     \
                        Btype, ldb, beta, Carray, Ctype, ldc, batchCount, computeType,     \
                        algo);                                                             \
        struct gemm g = { .api = #NAME, .h = h, .transa = transa, .transb = transb,        \
                          .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,      \
                          .batch = batchCount, .batched = 1, .alpha = alpha,               \
                          .beta = beta, .aa = Aarray, .ba = Barray, .ca = Carray,          \
                          .atype = Atype, .btype = Btype, .ctype = Ctype,                  \
                          .scalar_type = scalar_type_for(computeType, Ctype),              \
                          .compute = computeType, .algo = algo };                          \
        struct trace_rec r;                                                                \
        gemm_before(&c, &g, &r);                                                           \
        cublasStatus_t st = real(h, transa, transb, m, n, k, alpha, Aarray, Atype, lda,    \
                                 Barray, Btype, ldb, beta, Carray, Ctype, ldc, batchCount, \
                                 g.compute, algo);                                         \
        gemm_after(&c, &g, &r, st);                                                        \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

#define GEMM_SB_EX(NAME, I)                                                                \
    DETSHIM_EXPORT cublasStatus_t NAME(                                                    \
        cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, I m, I n,    \
        I k, const void *alpha, const void *A, cudaDataType Atype, I lda,                  \
        long long int strideA, const void *B, cudaDataType Btype, I ldb,                   \
        long long int strideB, const void *beta, void *C, cudaDataType Ctype, I ldc,       \
        long long int strideC, I batchCount, cublasComputeType_t computeType,              \
        cublasGemmAlgo_t algo)                                                             \
    {                                                                                      \
        CUDA_REAL_FN(NAME##_fn *, NAME);                                                        \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(h, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B,      \
                        Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount,     \
                        computeType, algo);                                                \
        struct gemm g = { .api = #NAME, .h = h, .transa = transa, .transb = transb,        \
                          .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,      \
                          .sa = strideA, .sb = strideB, .sc = strideC,                     \
                          .batch = batchCount, .batched = 1, .alpha = alpha,               \
                          .beta = beta, .a = A, .b = B, .c = C, .atype = Atype,            \
                          .btype = Btype, .ctype = Ctype,                                  \
                          .scalar_type = scalar_type_for(computeType, Ctype),              \
                          .compute = computeType, .algo = algo };                          \
        struct trace_rec r;                                                                \
        gemm_before(&c, &g, &r);                                                           \
        cublasStatus_t st = real(h, transa, transb, m, n, k, alpha, A, Atype, lda,         \
                                 strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc,     \
                                 strideC, batchCount, g.compute, algo);                    \
        gemm_after(&c, &g, &r, st);                                                        \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

GEMM_EX(cublasGemmEx, int)
GEMM_EX(cublasGemmEx_64, int64_t)
GEMM_BATCHED_EX(cublasGemmBatchedEx, int)
GEMM_BATCHED_EX(cublasGemmBatchedEx_64, int64_t)
GEMM_SB_EX(cublasGemmStridedBatchedEx, int)
GEMM_SB_EX(cublasGemmStridedBatchedEx_64, int64_t)

/* cublasSgemmEx: data types are arguments, scalars and compute FP32. */
DETSHIM_EXPORT cublasStatus_t cublasSgemmEx(cublasHandle_t h, cublasOperation_t transa,
                                            cublasOperation_t transb, int m, int n, int k,
                                            const float *alpha, const void *A,
                                            cudaDataType Atype, int lda, const void *B,
                                            cudaDataType Btype, int ldb, const float *beta,
                                            void *C, cudaDataType Ctype, int ldc)
{
    CUDA_REAL_FN(cublasSgemmEx_fn *, cublasSgemmEx);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(h, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                    Ctype, ldc);
    struct gemm g = { .api = "cublasSgemmEx", .h = h, .transa = transa, .transb = transb,
                      .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc, .batch = 1,
                      .alpha = alpha, .beta = beta, .a = A, .b = B, .c = C, .atype = Atype,
                      .btype = Btype, .ctype = Ctype, .scalar_type = CUDA_R_32F,
                      .compute = CUBLAS_COMPUTE_32F, .algo = CUBLAS_GEMM_DEFAULT };
    struct trace_rec r;
    gemm_before(&c, &g, &r);
    cublasStatus_t st = real(h, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb,
                             beta, C, Ctype, ldc);
    gemm_after(&c, &g, &r, st);
    cuda_leave();
    return st;
}
