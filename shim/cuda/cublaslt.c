/* cuBLASLt interceptors. cuBLASLt picks a matmul algorithm by heuristic,
 * and the algorithms it may pick include split-K reductions (reduction
 * schemes INPLACE, COMPUTE_TYPE, OUTPUT_TYPE) whose summation order is
 * not the plain one. In pinned mode every heuristic query is made with the
 * preference's reduction-scheme mask set to NONE (the program's preference
 * object keeps that setting), and a cublasLtMatmul called without an
 * algorithm, which would run cuBLASLt's own unrestricted heuristic, gets
 * the first algorithm of such a query instead. Every heuristic answer and
 * every matmul is traced with the algorithm's identity: its nine config
 * attributes (ID, tile, split-K count, reduction scheme, CTA swizzling,
 * custom option, stages, inner and cluster shape), read through
 * cublasLtMatmulAlgoConfigGetAttribute and digested, so detdiff can say a
 * run chose another one. Not the 64 bytes of cublasLtMatmulAlgo_t: on an
 * H200 (cuBLASLt 13.0) two runs' heuristics returned the same algorithm
 * with two bytes of it different, left unset by cuBLASLt. A
 * matmul's record also holds what else decides D: the epilogue, the
 * operands it reads or writes (bias or bias gradient, aux buffer) and the
 * FP8 scale factors and amax, so a changed bias shows as a changed input
 * rather than as a nondeterministic matmul.
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "trace/digest.h"

static cublasStatus_t set_no_reduction(cublasLtMatmulPreference_t pref)
{
    CUDA_REAL_FN(cublasLtMatmulPreferenceSetAttribute_fn *, cublasLtMatmulPreferenceSetAttribute);
    uint32_t none = CUBLASLT_REDUCTION_SCHEME_NONE;
    return real(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &none, sizeof none);
}

/* An algorithm's identity: its config attributes 0 (ID) to 8 (cluster
 * shape) in that order, each widened to 32 bits; one cuBLASLt cannot
 * read (an older version lacks the shapes) is -1, the ID included. */
enum { ALGO_ATTRS = 9 };

static void algo_identity(const cublasLtMatmulAlgo_t *algo, int32_t out[ALGO_ATTRS])
{
    static void *cache;
    cublasLtMatmulAlgoConfigGetAttribute_fn *get =
        (cublasLtMatmulAlgoConfigGetAttribute_fn *)(uintptr_t)cuda_sym(
            &cache, "cublasLtMatmulAlgoConfigGetAttribute");
    for (int a = 0; a < ALGO_ATTRS; a++) {
        /* INNER_SHAPE_ID and CLUSTER_SHAPE_ID are uint16_t, the rest 4 bytes. */
        int narrow = a == CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID ||
                     a == CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID;
        uint32_t v4 = 0;
        uint16_t v2 = 0;
        size_t n;
        int ok = get && get(algo, (cublasLtMatmulAlgoConfigAttributes_t)a,
                            narrow ? (void *)&v2 : (void *)&v4, narrow ? 2 : 4, &n) ==
                            CUBLAS_STATUS_SUCCESS;
        out[a] = !ok ? -1 : narrow ? (int32_t)v2 : (int32_t)v4;
    }
}

/* The digest of n identities (little-endian, as the host stores them). */
static detshim_digest algos_digest(const int32_t (*ids)[ALGO_ATTRS], int n)
{
    return digest_bytes(ids, (size_t)n * sizeof *ids);
}

/* "id=N tile=T stages=S splitk=K reduction=R" for an algorithm, into buf;
 * ID, split-K count and reduction scheme are also recorded as parameters
 * when r is given. */
static const char *algo_text(const int32_t id[ALGO_ATTRS], struct trace_rec *r, char *buf,
                             size_t len)
{
    if (r) {
        trace_rec_int(r, "algo_id", id[CUBLASLT_ALGO_CONFIG_ID]);
        trace_rec_int(r, "splitk", id[CUBLASLT_ALGO_CONFIG_SPLITK_NUM]);
        trace_rec_int(r, "reduction_scheme", id[CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME]);
    }
    snprintf(buf, len, "id=%d tile=%d stages=%d splitk=%d reduction=%d",
             (int)id[CUBLASLT_ALGO_CONFIG_ID], (int)id[CUBLASLT_ALGO_CONFIG_TILE_ID],
             (int)id[CUBLASLT_ALGO_CONFIG_STAGES_ID], (int)id[CUBLASLT_ALGO_CONFIG_SPLITK_NUM],
             (int)id[CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME]);
    return buf;
}

DETSHIM_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t results[],
    int *returned)
{
    CUDA_REAL_FN(cublasLtMatmulAlgoGetHeuristic_fn *, cublasLtMatmulAlgoGetHeuristic);
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
        enum { MAX_DIGESTED = 64 }; /* a longer answer is digested in its first 64 */
        int32_t ids[MAX_DIGESTED][ALGO_ATTRS];
        int m = n < MAX_DIGESTED ? n : MAX_DIGESTED;
        for (int i = 0; i < m; i++)
            algo_identity(&results[i].algo, ids[i]);
        trace_rec_operand(&r, "algos", TRACE_ROLE_OUT, algos_digest(ids, m), (uint64_t)m,
                          (int)sizeof ids[0]);
        cuda_note_mode(&r, &call);
        trace_rec_note(&r, "cuda.algo", n > 0 ? algo_text(ids[0], NULL, chosen, sizeof chosen)
                                              : "none");
        if (override)
            trace_rec_note(&r, "cuda.override", override);
        cuda_commit(&r);
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

/* Reads a descriptor attribute of exactly `size` bytes into buf (cuBLASLt
 * checks the size). Returns 0, or -1 when it cannot be read. */
static int desc_get(cublasLtMatmulDesc_t desc, int attr, void *buf, size_t size)
{
    static void *cache;
    cublasLtMatmulDescGetAttribute_fn *get = (cublasLtMatmulDescGetAttribute_fn *)(uintptr_t)
        cuda_sym(&cache, "cublasLtMatmulDescGetAttribute");
    size_t n;
    return get && get(desc, attr, buf, size, &n) == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

/* A descriptor attribute of 4 bytes, or `fallback`. */
static int32_t desc_attr(cublasLtMatmulDesc_t desc, int attr, int32_t fallback)
{
    int32_t v;
    return desc_get(desc, attr, &v, sizeof v) == 0 ? v : fallback;
}

/* A descriptor attribute of 8 bytes (an int64_t), or 0. */
static int64_t desc_attr64(cublasLtMatmulDesc_t desc, int attr)
{
    int64_t v;
    return desc_get(desc, attr, &v, sizeof v) == 0 ? v : 0;
}

/* A device pointer held by the descriptor, or NULL (unset or unreadable). */
static const void *desc_ptr(cublasLtMatmulDesc_t desc, int attr)
{
    const void *p;
    return desc_get(desc, attr, &p, sizeof p) == 0 ? p : NULL;
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

/* Notes that an operand was not digested: its data type, or its matrix
 * order, is one detshim cannot size. */
static void note_unknown_type(struct trace_rec *r)
{
    trace_rec_note(r, "cuda.digest", "not taken: a data type or matrix order detshim does not know");
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
        note_unknown_type(r);
        return;
    }
    int64_t len = order == CUBLASLT_ORDER_COL ? rows : cols;
    int64_t lines = order == CUBLASLT_ORDER_COL ? cols : rows;
    cuda_rec_matrix(r, name, role, stream, p, CUBLAS_OP_N, len, lines, ld, elem, batch, stride);
}

/* What an epilogue reads and writes besides A, B, C and D, read from the
 * descriptor before the call (cublasLt.h, cublasLtEpilogue_t and
 * cublasLtMatmulDescAttributes_t). The bias vector is read by the BIAS
 * epilogues and written, as a bias gradient, by the BGRAD ones; the aux
 * buffer is written by the forward *_AUX epilogues and read by DRELU and
 * DGELU. Roles are TRACE_ROLE_IN or _OUT, 0 where the operand is unused. */
struct epilogue {
    int code, known;
    int bias_role, bias_type;
    const void *bias;
    int64_t bias_len, bias_batch, bias_stride;
    int aux_role, aux_bits, aux_type; /* aux_bits: a ReLU bit-mask, 1 bit per element */
    const void *aux;
    int64_t rows, cols, aux_ld, aux_batch, aux_stride;
};

/* Sets e's roles from its epilogue code; 0, or -1 for a code detshim does
 * not know. */
static int epilogue_roles(struct epilogue *e)
{
    int in = TRACE_ROLE_IN, out = TRACE_ROLE_OUT;
    switch (e->code) {
    case CUBLASLT_EPILOGUE_DEFAULT: case CUBLASLT_EPILOGUE_RELU: case CUBLASLT_EPILOGUE_GELU:
        break;
    case CUBLASLT_EPILOGUE_BIAS: case CUBLASLT_EPILOGUE_RELU_BIAS:
    case CUBLASLT_EPILOGUE_GELU_BIAS:
        e->bias_role = in;
        break;
    case CUBLASLT_EPILOGUE_RELU_AUX_BIAS: case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
        e->bias_role = in;
        e->aux_role = out;
        break;
    case CUBLASLT_EPILOGUE_RELU_AUX: case CUBLASLT_EPILOGUE_GELU_AUX:
        e->aux_role = out;
        break;
    case CUBLASLT_EPILOGUE_DRELU: case CUBLASLT_EPILOGUE_DGELU:
        e->aux_role = in;
        break;
    case CUBLASLT_EPILOGUE_DRELU_BGRAD: case CUBLASLT_EPILOGUE_DGELU_BGRAD:
        e->aux_role = in;
        e->bias_role = out;
        break;
    case CUBLASLT_EPILOGUE_BGRADA: case CUBLASLT_EPILOGUE_BGRADB:
        e->bias_role = out;
        break;
    default:
        return -1;
    }
    e->aux_bits = e->code == CUBLASLT_EPILOGUE_RELU_AUX ||
                  e->code == CUBLASLT_EPILOGUE_RELU_AUX_BIAS ||
                  e->code == CUBLASLT_EPILOGUE_DRELU || e->code == CUBLASLT_EPILOGUE_DRELU_BGRAD;
    return 0;
}

/* 1 for the FP8 data types, whose kernels document their own defaults. */
static int is_fp8(int type)
{
    return type == CUDA_R_8F_E4M3 || type == CUDA_R_8F_E5M2;
}

/* The type of the bias or aux elements: the descriptor's, or the default
 * cuBLASLt documents when it is -1: D's type, but for the bias of IMMA
 * kernels (compute type 32I, C of type R_8I) the scale type. FP8 kernels
 * have other defaults detshim does not know: -1. */
static int epilogue_type(int set, int bias, int compute, int scale, int a, int c, int d)
{
    if (set != -1)
        return set;
    if (is_fp8(a) || is_fp8(d))
        return -1;
    if (bias && (compute == CUBLAS_COMPUTE_32I || compute == CUBLAS_COMPUTE_32I_PEDANTIC) &&
        c == CUDA_R_8I)
        return scale;
    return d;
}

/* Fills e from the descriptor and D's layout. */
static void epilogue_read(struct epilogue *e, cublasLtMatmulDesc_t desc, int compute, int scale,
                          cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Cdesc,
                          cublasLtMatrixLayout_t Ddesc)
{
    memset(e, 0, sizeof *e);
    e->code = desc_attr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_DEFAULT);
    e->known = epilogue_roles(e) == 0;
    if (!e->bias_role && !e->aux_role)
        return;
    int a = (int)layout_attr(Adesc, CUBLASLT_MATRIX_LAYOUT_TYPE, 4, -1);
    int c = (int)layout_attr(Cdesc, CUBLASLT_MATRIX_LAYOUT_TYPE, 4, -1);
    int d = (int)layout_attr(Ddesc, CUBLASLT_MATRIX_LAYOUT_TYPE, 4, -1);
    int64_t batch = layout_attr(Ddesc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 4, 1);
    e->rows = layout_attr(Ddesc, CUBLASLT_MATRIX_LAYOUT_ROWS, 8, 0);
    e->cols = layout_attr(Ddesc, CUBLASLT_MATRIX_LAYOUT_COLS, 8, 0);
    if (e->bias_role) {
        int set = desc_attr(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, -1);
        e->bias = desc_ptr(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER);
        e->bias_type = epilogue_type(set, 1, compute, scale, a, c, d);
        /* One entry per row of D; BGRADB's gradient has one per column. */
        e->bias_len = e->code == CUBLASLT_EPILOGUE_BGRADB ? e->cols : e->rows;
        e->bias_stride = desc_attr64(desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE);
        e->bias_batch = batch > 1 && e->bias_stride != 0 ? batch : 1;
    }
    if (e->aux_role) {
        int set = desc_attr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, -1);
        e->aux = desc_ptr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER);
        e->aux_type = e->aux_bits ? -1 : epilogue_type(set, 0, compute, scale, a, c, d);
        e->aux_ld = desc_attr64(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD);
        e->aux_stride = desc_attr64(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE);
        e->aux_batch = batch > 1 ? batch : 1;
    }
}

/* Records the epilogue's operands of `role` (IN before the call, OUT
 * after). A ReLU bit-mask is digested as bytes: ceil(rows / 8) per column
 * of D, its leading dimension and batch stride being in bits (multiples
 * of 128, so whole bytes); the last byte of a column also carries the bits
 * past the last row when rows is not a multiple of 8. */
static void epilogue_rec(struct trace_rec *r, const struct epilogue *e, int role,
                         cudaStream_t stream)
{
    if (e->bias_role == role) {
        int elem = cuda_type_size(e->bias_type);
        if (!elem)
            note_unknown_type(r);
        else if (!e->bias)
            trace_rec_operand(r, "bias", role, digest_bytes(NULL, 0), 0, elem);
        else
            cuda_rec_matrix(r, "bias", role, stream, e->bias, CUBLAS_OP_N, e->bias_len, 1,
                            e->bias_len, elem, e->bias_batch, e->bias_stride);
    }
    if (e->aux_role != role)
        return;
    int elem = e->aux_bits ? 1 : cuda_type_size(e->aux_type);
    if (!elem)
        note_unknown_type(r);
    else if (!e->aux)
        trace_rec_operand(r, "aux", role, digest_bytes(NULL, 0), 0, elem);
    else if (e->aux_bits)
        cuda_rec_matrix(r, "aux", role, stream, e->aux, CUBLAS_OP_N, (e->rows + 7) / 8, e->cols,
                        e->aux_ld / 8, 1, e->aux_batch, e->aux_stride / 8);
    else
        cuda_rec_matrix(r, "aux", role, stream, e->aux, CUBLAS_OP_N, e->rows, e->cols, e->aux_ld,
                        elem, e->aux_batch, e->aux_stride);
}

/* Bytes of a scalar of the compute type (amax of D), or 0. */
static int compute_size(int compute)
{
    switch (compute) {
    case CUBLAS_COMPUTE_16F: case CUBLAS_COMPUTE_16F_PEDANTIC:
        return 2;
    case CUBLAS_COMPUTE_32F: case CUBLAS_COMPUTE_32F_PEDANTIC: case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF: case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32I: case CUBLAS_COMPUTE_32I_PEDANTIC:
        return 4;
    case CUBLAS_COMPUTE_64F: case CUBLAS_COMPUTE_64F_PEDANTIC:
        return 8;
    default:
        return 0;
    }
}

/* Records `size` bytes of device memory at p, a scalar; size 0 (a type
 * detshim does not know) records nothing and says so. */
static void rec_device_scalar(struct trace_rec *r, const char *name, int role,
                              cudaStream_t stream, const void *p, int size)
{
    if (!size) {
        note_unknown_type(r);
    } else if (cuda_rec_bytes(r, name, role, stream, p, (size_t)size, 1, size) != 0) {
        cuda_note_no_digest(r);
        trace_rec_operand(r, name, role, digest_bytes(NULL, 0), 0, size);
    }
}

/* Records an FP8 scale factor (an input) if the descriptor's pointer
 * `attr` is set, with its scale mode as parameter `mode_name`: with
 * SCALAR_32F, the default, one float is digested; the other modes point
 * to block scale tensors whose shapes detshim does not derive, recorded
 * as set (digest of nothing) and noted. */
static void rec_scale(struct trace_rec *r, const char *name, const char *mode_name,
                      cudaStream_t stream, cublasLtMatmulDesc_t desc, int attr, int mode_attr)
{
    const void *p = desc_ptr(desc, attr);
    if (!p)
        return;
    int mode = desc_attr(desc, mode_attr, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F);
    trace_rec_int(r, mode_name, mode);
    if (mode == CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F) {
        rec_device_scalar(r, name, TRACE_ROLE_IN, stream, p, 4);
        return;
    }
    trace_rec_operand(r, name, TRACE_ROLE_IN, digest_bytes(NULL, 0), 0, 0);
    trace_rec_note(r, "cuda.digest", "not taken: block scale factors (a scale mode other than "
                                     "SCALAR_32F)");
}

DETSHIM_EXPORT cublasStatus_t cublasLtMatmul(
    cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
    cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
    const void *C, cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
    const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspaceSize, cudaStream_t stream)
{
    CUDA_REAL_FN(cublasLtMatmul_fn *, cublasLtMatmul);
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
    struct epilogue epi;
    char text[96];
    int compute = -1;
    if (call.traced) {
        trace_rec_begin(&r, "cublasLtMatmul");
        int scale = desc_attr(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, -1);
        int device = desc_attr(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE,
                               CUBLASLT_POINTER_MODE_HOST) != CUBLASLT_POINTER_MODE_HOST;
        compute = desc_attr(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, -1);
        epilogue_read(&epi, desc, compute, scale, Adesc, Cdesc, Ddesc);
        trace_rec_int(&r, "computeType", compute);
        trace_rec_int(&r, "scaleType", scale);
        trace_rec_int(&r, "transa", desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N));
        trace_rec_int(&r, "transb", desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N));
        /* The epilogue changes D from the same A, B and C. */
        trace_rec_int(&r, "epilogue", epi.code);
        if (epi.bias_role)
            trace_rec_int(&r, "biasType", epi.bias_type);
        if (epi.aux_role && !epi.aux_bits)
            trace_rec_int(&r, "auxType", epi.aux_type);
        trace_rec_int(&r, "workspaceSize", (int64_t)workspaceSize);
        if (algo) {
            int32_t id[1][ALGO_ATTRS];
            algo_identity(algo, id[0]);
            algo_text(id[0], &r, text, sizeof text);
            trace_rec_operand(&r, "algo", TRACE_ROLE_IN, algos_digest(id, 1), 1,
                              (int)sizeof id[0]);
        }
        int alpha_zero = cuda_rec_scalar(&r, "alpha", stream, alpha, device, scale);
        int beta_zero = cuda_rec_scalar(&r, "beta", stream, beta, device, scale);
        if (!alpha_zero) {
            rec_layout(&r, "A", TRACE_ROLE_IN, stream, A, Adesc);
            rec_layout(&r, "B", TRACE_ROLE_IN, stream, B, Bdesc);
        }
        if (!beta_zero)
            rec_layout(&r, "C", TRACE_ROLE_IN, stream, C, Cdesc);
        rec_scale(&r, "a_scale", "a_scale_mode", stream, desc,
                  CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_A_SCALE_MODE);
        rec_scale(&r, "b_scale", "b_scale_mode", stream, desc,
                  CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_MODE);
        rec_scale(&r, "c_scale", "c_scale_mode", stream, desc,
                  CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_C_SCALE_MODE);
        rec_scale(&r, "d_scale", "d_scale_mode", stream, desc,
                  CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_MODE);
        epilogue_rec(&r, &epi, TRACE_ROLE_IN, stream);
    }
    cublasStatus_t st = real(lt, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
                             workspace, workspaceSize, stream);
    if (call.traced) {
        rec_layout(&r, "D", TRACE_ROLE_OUT, stream, D, Ddesc);
        epilogue_rec(&r, &epi, TRACE_ROLE_OUT, stream);
        const void *amax = desc_ptr(desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER);
        if (amax)
            rec_device_scalar(&r, "amax_d", TRACE_ROLE_OUT, stream, amax, compute_size(compute));
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &call);
        if (!epi.known)
            trace_rec_note(&r, "cuda.epilogue",
                           "unknown to detshim: its bias and aux operands are not digested");
        trace_rec_note(&r, "cuda.algo",
                       algo ? text : "NULL (cuBLASLt's heuristic inside the call)");
        if (override)
            trace_rec_note(&r, "cuda.override", override);
        cuda_commit(&r);
    }
    cuda_leave();
    return st;
}
