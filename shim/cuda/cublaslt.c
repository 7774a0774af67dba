/* cuBLASLt interceptors. cuBLASLt picks a matmul algorithm by heuristic,
 * and the algorithms it may pick include split-K reductions (reduction
 * schemes INPLACE, COMPUTE_TYPE, OUTPUT_TYPE) whose summation order is
 * not the plain one. In pinned mode every heuristic query is made with the
 * preference's reduction-scheme mask set to NONE (the program's preference
 * object keeps that setting), and a cublasLtMatmul called without an
 * algorithm, which would run cuBLASLt's own unrestricted heuristic, gets
 * the first algorithm of such a query instead. Every heuristic answer and
 * every matmul is traced with the algorithm's identity (config ID,
 * split-K count, reduction scheme, and a digest of the 64-byte
 * cublasLtMatmulAlgo_t), so detdiff can say a run chose another one.
 */
#include <stdio.h>
#include <string.h>

#include "detshim/core.h"
#include "detshim/cuda.h"
#include "detshim/digest.h"

static cublasStatus_t set_no_reduction(cublasLtMatmulPreference_t pref)
{
    REAL_FN(cublasLtMatmulPreferenceSetAttribute_fn *, cublasLtMatmulPreferenceSetAttribute);
    uint32_t none = CUBLASLT_REDUCTION_SCHEME_NONE;
    return real(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &none, sizeof none);
}

/* "id=N splitk=S reduction=R" for an algorithm, into buf; the config
 * attributes read are also recorded as parameters when r is given. */
static const char *algo_text(const cublasLtMatmulAlgo_t *algo, struct trace_rec *r, char *buf,
                             size_t len)
{
    static void *cache;
    cublasLtMatmulAlgoConfigGetAttribute_fn *get =
        (cublasLtMatmulAlgoConfigGetAttribute_fn *)(uintptr_t)cuda_sym(
            &cache, "cublasLtMatmulAlgoConfigGetAttribute");
    int32_t id = -1;
    uint32_t splitk = 0, scheme = 0;
    size_t n;
    if (!get || get(algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &n) != CUBLAS_STATUS_SUCCESS)
        id = -1;
    if (!get || get(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &n) !=
                    CUBLAS_STATUS_SUCCESS)
        splitk = 0;
    if (!get || get(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme, sizeof scheme, &n) !=
                    CUBLAS_STATUS_SUCCESS)
        scheme = 0;
    if (r) {
        trace_rec_int(r, "algo_id", id);
        trace_rec_int(r, "splitk", splitk);
        trace_rec_int(r, "reduction_scheme", scheme);
    }
    snprintf(buf, len, "id=%d splitk=%u reduction=%u", (int)id, (unsigned)splitk, (unsigned)scheme);
    return buf;
}

DETSHIM_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t results[],
    int *returned)
{
    REAL_FN(cublasLtMatmulAlgoGetHeuristic_fn *, cublasLtMatmulAlgoGetHeuristic);
    struct cuda_call call;
    if (!cuda_enter(&call))
        return real(lt, desc, a, b, c, d, pref, requested, results, returned);
    const char *override = NULL;
    if (call.pinned && pref)
        override = set_no_reduction(pref) == CUBLAS_STATUS_SUCCESS
                       ? "reduction_scheme_mask->none"
                       : "reduction_scheme_mask->none refused by cuBLASLt (not pinned)";
    cublasStatus_t st = real(lt, desc, a, b, c, d, pref, requested, results, returned);
    if (call.traced) {
        struct trace_rec r;
        char chosen[96];
        int n = st == CUBLAS_STATUS_SUCCESS && returned ? *returned : 0;
        trace_rec_begin(&r, "cublasLtMatmulAlgoGetHeuristic");
        trace_rec_int(&r, "requested", requested);
        trace_rec_int(&r, "returned", n);
        trace_rec_int(&r, "status", st);
        /* The algorithms offered, in order: the decision's input. */
        trace_rec_operand(&r, "algos", TRACE_ROLE_OUT,
                          n > 0 ? digest_matrix(results, sizeof results[0].algo, n,
                                                sizeof results[0], 1)
                                : digest_bytes(NULL, 0),
                          (uint64_t)n, (int)sizeof results[0].algo);
        cuda_note_mode(&r, &call);
        trace_rec_note(&r, "cuda.algo", n > 0 ? algo_text(&results[0].algo, NULL, chosen,
                                                           sizeof chosen)
                                              : "none");
        if (override)
            trace_rec_note(&r, "cuda.override", override);
        trace_rec_commit(&r);
    }
    cuda_leave();
    return st;
}

/* In pinned mode, a matmul without an algorithm gets the first one a
 * NONE-reduction query offers for its shapes and workspace. Returns 0 and
 * fills *out, or -1 (the call then runs with NULL, as asked). */
static int pinned_algo(cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
                       cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                       cublasLtMatrixLayout_t d, size_t workspace, cublasLtMatmulAlgo_t *out)
{
    static void *create_cache, *destroy_cache, *set_cache, *heur_cache;
    cublasLtMatmulPreferenceCreate_fn *create = (cublasLtMatmulPreferenceCreate_fn *)(uintptr_t)
        cuda_sym(&create_cache, "cublasLtMatmulPreferenceCreate");
    cublasLtMatmulPreferenceDestroy_fn *destroy = (cublasLtMatmulPreferenceDestroy_fn *)(uintptr_t)
        cuda_sym(&destroy_cache, "cublasLtMatmulPreferenceDestroy");
    cublasLtMatmulPreferenceSetAttribute_fn *set =
        (cublasLtMatmulPreferenceSetAttribute_fn *)(uintptr_t)resolve_real_cached(
            &set_cache, "cublasLtMatmulPreferenceSetAttribute");
    cublasLtMatmulAlgoGetHeuristic_fn *heuristic =
        (cublasLtMatmulAlgoGetHeuristic_fn *)(uintptr_t)resolve_real_cached(
            &heur_cache, "cublasLtMatmulAlgoGetHeuristic");
    cublasLtMatmulPreference_t pref;
    if (!create || !destroy || create(&pref) != CUBLAS_STATUS_SUCCESS)
        return -1;
    uint64_t ws = workspace;
    cublasLtMatmulHeuristicResult_t result;
    int n = 0;
    int ok = set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws) ==
                 CUBLAS_STATUS_SUCCESS &&
             set_no_reduction(pref) == CUBLAS_STATUS_SUCCESS &&
             heuristic(lt, desc, a, b, c, d, pref, 1, &result, &n) == CUBLAS_STATUS_SUCCESS &&
             n > 0;
    destroy(pref);
    if (ok)
        *out = result.algo;
    return ok ? 0 : -1;
}

/* A descriptor attribute of 4 bytes, or `fallback`. */
static int32_t desc_attr(cublasLtMatmulDesc_t desc, int attr, int32_t fallback)
{
    static void *cache;
    cublasLtMatmulDescGetAttribute_fn *get = (cublasLtMatmulDescGetAttribute_fn *)(uintptr_t)
        cuda_sym(&cache, "cublasLtMatmulDescGetAttribute");
    int32_t v;
    size_t n;
    return get && get(desc, attr, &v, sizeof v, &n) == CUBLAS_STATUS_SUCCESS ? v : fallback;
}

/* A layout attribute of `size` bytes (4 or 8), widened; `fallback` if it
 * cannot be read. */
static int64_t layout_attr(cublasLtMatrixLayout_t l, int attr, size_t size, int64_t fallback)
{
    static void *cache;
    cublasLtMatrixLayoutGetAttribute_fn *get = (cublasLtMatrixLayoutGetAttribute_fn *)(uintptr_t)
        cuda_sym(&cache, "cublasLtMatrixLayoutGetAttribute");
    size_t n;
    if (size == 4) {
        int32_t v;
        return get && get(l, attr, &v, 4, &n) == CUBLAS_STATUS_SUCCESS ? v : fallback;
    }
    int64_t v;
    return get && get(l, attr, &v, 8, &n) == CUBLAS_STATUS_SUCCESS ? v : fallback;
}

/* Records the matrix a layout describes, as stored: column order digests
 * columns, row order rows; other orders (tiled) are not digested. */
static void rec_layout(struct trace_rec *r, const char *name, int role, cudaStream_t stream,
                       const void *p, cublasLtMatrixLayout_t l)
{
    int type = (int)layout_attr(l, CUBLASLT_MATRIX_LAYOUT_TYPE, 4, -1);
    int order = (int)layout_attr(l, CUBLASLT_MATRIX_LAYOUT_ORDER, 4, CUBLASLT_ORDER_COL);
    int64_t rows = layout_attr(l, CUBLASLT_MATRIX_LAYOUT_ROWS, 8, 0);
    int64_t cols = layout_attr(l, CUBLASLT_MATRIX_LAYOUT_COLS, 8, 0);
    int64_t ld = layout_attr(l, CUBLASLT_MATRIX_LAYOUT_LD, 8, 0);
    int64_t batch = layout_attr(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 4, 1);
    int64_t stride = layout_attr(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 8, 0);
    int elem = cuda_type_size(type);
    if (!elem || (order != CUBLASLT_ORDER_COL && order != CUBLASLT_ORDER_ROW)) {
        trace_rec_note(r, "cuda.digest",
                       "not taken: a data type or matrix order detshim does not know");
        return;
    }
    int64_t len = order == CUBLASLT_ORDER_COL ? rows : cols;
    int64_t lines = order == CUBLASLT_ORDER_COL ? cols : rows;
    cuda_rec_matrix(r, name, role, stream, p, CUBLAS_OP_N, len, lines, ld, elem, batch, stride);
}

DETSHIM_EXPORT cublasStatus_t cublasLtMatmul(
    cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
    cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
    const void *C, cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
    const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspaceSize, cudaStream_t stream)
{
    REAL_FN(cublasLtMatmul_fn *, cublasLtMatmul);
    struct cuda_call call;
    if (!cuda_enter(&call))
        return real(lt, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
                    workspace, workspaceSize, stream);
    cublasLtMatmulAlgo_t chosen;
    const char *override = NULL;
    if (call.pinned && !algo) {
        if (pinned_algo(lt, desc, Adesc, Bdesc, Cdesc, Ddesc, workspaceSize, &chosen) == 0) {
            algo = &chosen;
            override = "algo NULL->first of a reduction-scheme NONE heuristic";
        } else {
            override = "algo NULL kept: no reduction-scheme NONE algorithm found (not pinned)";
        }
    }
    struct trace_rec r;
    char text[96];
    if (call.traced) {
        trace_rec_begin(&r, "cublasLtMatmul");
        int scale = desc_attr(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, -1);
        int device = desc_attr(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE,
                               CUBLASLT_POINTER_MODE_HOST) != CUBLASLT_POINTER_MODE_HOST;
        trace_rec_int(&r, "computeType", desc_attr(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, -1));
        trace_rec_int(&r, "scaleType", scale);
        trace_rec_int(&r, "transa", desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N));
        trace_rec_int(&r, "transb", desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N));
        trace_rec_int(&r, "workspaceSize", (int64_t)workspaceSize);
        if (algo) {
            algo_text(algo, &r, text, sizeof text);
            trace_rec_operand(&r, "algo", TRACE_ROLE_IN, digest_bytes(algo, sizeof *algo), 1,
                              (int)sizeof *algo);
        }
        int alpha_zero = cuda_rec_scalar(&r, "alpha", stream, alpha, device, scale);
        int beta_zero = cuda_rec_scalar(&r, "beta", stream, beta, device, scale);
        if (!alpha_zero) {
            rec_layout(&r, "A", TRACE_ROLE_IN, stream, A, Adesc);
            rec_layout(&r, "B", TRACE_ROLE_IN, stream, B, Bdesc);
        }
        if (!beta_zero)
            rec_layout(&r, "C", TRACE_ROLE_IN, stream, C, Cdesc);
    }
    cublasStatus_t st = real(lt, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
                             workspace, workspaceSize, stream);
    if (call.traced) {
        rec_layout(&r, "D", TRACE_ROLE_OUT, stream, D, Ddesc);
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &call);
        trace_rec_note(&r, "cuda.algo",
                       algo ? text : "NULL (cuBLASLt's heuristic inside the call)");
        if (override)
            trace_rec_note(&r, "cuda.override", override);
        trace_rec_commit(&r);
    }
    cuda_leave();
    return st;
}
