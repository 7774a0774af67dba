/* A fake cuBLASLt (libcublasLt.so.13) for tests, on host memory, FP32
 * column-major only. Its heuristic offers a split-K algorithm first (id
 * 1, splitk 4, reduction INPLACE) whenever the preference's reduction-
 * scheme mask allows one, then the plain algorithm (id 0); a matmul with
 * a split-K algorithm, or with none (the library's own heuristic), sums
 * in a per-run shuffled order (fake.h). FP8 scales and amax are refused,
 * as with FP32 matrices cuBLASLt does. Epilogues: DEFAULT, and the BIAS,
 * RELU and RELU_AUX combinations, applied as cuBLASLt documents them
 * (bias added per row of D, then ReLU; the aux output a bit-mask of the
 * elements ReLU kept, its leading dimension in bits). Descriptors keep
 * their fields in the opaque structs' words, each attribute in the word
 * of its number. An algorithm's words hold its config (ID, split-K,
 * scheme; tile 11 and stages 31 read back as constants, the rest 0) and,
 * like the real cuBLASLt's on an H200, bytes left unset that change from
 * run to run: an algorithm is the same one by its config, not its bytes.
 */
#include <string.h>
#include <unistd.h>

#include "fake.h"

enum { DESC_COMPUTE, DESC_SCALE, DESC_POINTER, DESC_TRANSA, DESC_TRANSB };
enum { LAYOUT_TYPE, LAYOUT_ORDER, LAYOUT_ROWS, LAYOUT_COLS, LAYOUT_LD, LAYOUT_BATCH,
       LAYOUT_STRIDE };
enum { ALGO_ID, ALGO_SPLITK, ALGO_SCHEME, ALGO_UNSET = 4 };
enum { PREF_WORKSPACE = 1, PREF_MASK = 3 };

FAKE_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *lt)
{
    static int handle;
    *lt = (cublasLtHandle_t)(void *)&handle;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc,
                                                    cublasComputeType_t compute,
                                                    cudaDataType scale)
{
    *desc = calloc(1, sizeof **desc);
    if (!*desc)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    (*desc)->data[DESC_COMPUTE] = (uint64_t)compute;
    (*desc)->data[DESC_SCALE] = (uint64_t)scale;
    (*desc)->data[CUBLASLT_MATMUL_DESC_EPILOGUE] = CUBLASLT_EPILOGUE_DEFAULT;
    (*desc)->data[CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE] = (uint64_t)-1;
    (*desc)->data[CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE] = (uint64_t)-1;
    return CUBLAS_STATUS_SUCCESS;
}

/* The size cuBLASLt documents for a descriptor attribute the fake keeps:
 * 4 for the int32/uint32 ones, 8 for pointers and int64; 0 for others.
 * All are below 32, the words of the opaque descriptor. */
static size_t desc_attr_size(int attr)
{
    switch (attr) {
    case DESC_COMPUTE: case DESC_SCALE: case DESC_POINTER: case DESC_TRANSA: case DESC_TRANSB:
    case CUBLASLT_MATMUL_DESC_EPILOGUE: case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE:
        return 4;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER: case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE: case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER: case CUBLASLT_MATMUL_DESC_C_SCALE_POINTER:
    case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER: case CUBLASLT_MATMUL_DESC_AMAX_D_POINTER:
        return 8;
    default:
        return 0;
    }
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                                          cublasLtMatmulDescAttributes_t attr,
                                                          const void *buf, size_t size)
{
    size_t want = desc_attr_size(attr);
    if (!want || size != want)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (want == 4) {
        int32_t v;
        memcpy(&v, buf, 4);
        desc->data[attr] = (uint64_t)(int64_t)v;
    } else {
        memcpy(&desc->data[attr], buf, 8);
    }
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc,
                                                          cublasLtMatmulDescAttributes_t attr,
                                                          void *buf, size_t size, size_t *written)
{
    size_t want = desc_attr_size(attr);
    if (!want || size != want)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (want == 4) {
        int32_t v = (int32_t)desc->data[attr];
        memcpy(buf, &v, 4);
    } else {
        memcpy(buf, &desc->data[attr], 8);
    }
    *written = want;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout,
                                                      cudaDataType type, uint64_t rows,
                                                      uint64_t cols, int64_t ld)
{
    *layout = calloc(1, sizeof **layout);
    if (!*layout)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    (*layout)->data[LAYOUT_TYPE] = (uint64_t)type;
    (*layout)->data[LAYOUT_ORDER] = CUBLASLT_ORDER_COL;
    (*layout)->data[LAYOUT_ROWS] = rows;
    (*layout)->data[LAYOUT_COLS] = cols;
    (*layout)->data[LAYOUT_LD] = (uint64_t)ld;
    (*layout)->data[LAYOUT_BATCH] = 1;
    return CUBLAS_STATUS_SUCCESS;
}

/* Sizes as cuBLASLt documents them: type, order, batch count int32; rows,
 * cols uint64; ld and batch stride int64. */
FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l,
                                                            cublasLtMatrixLayoutAttribute_t attr,
                                                            void *buf, size_t size,
                                                            size_t *written)
{
    size_t want = attr == LAYOUT_TYPE || attr == LAYOUT_ORDER || attr == LAYOUT_BATCH ? 4 : 8;
    if (attr < 0 || attr > LAYOUT_STRIDE || size != want)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (want == 4) {
        int32_t v = (int32_t)l->data[attr];
        memcpy(buf, &v, 4);
    } else {
        memcpy(buf, &l->data[attr], 8);
    }
    *written = want;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
    *pref = calloc(1, sizeof **pref);
    if (!*pref)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    (*pref)->data[PREF_MASK] = CUBLASLT_REDUCTION_SCHEME_MASK; /* cuBLASLt's default: all */
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
    free(pref);
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
    size_t size)
{
    if (attr == PREF_MASK && size == 4) {
        uint32_t v;
        memcpy(&v, buf, 4);
        pref->data[PREF_MASK] = v;
    } else if (attr == PREF_WORKSPACE && size == 8) {
        memcpy(&pref->data[PREF_WORKSPACE], buf, 8);
    } else {
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    return CUBLAS_STATUS_SUCCESS;
}

static void set_algo(cublasLtMatmulAlgo_t *algo, uint64_t id, uint64_t splitk, uint64_t scheme)
{
    memset(algo, 0, sizeof *algo);
    algo->data[ALGO_UNSET] = (uint64_t)getpid() << 16;
    algo->data[ALGO_ID] = id;
    algo->data[ALGO_SPLITK] = splitk;
    algo->data[ALGO_SCHEME] = scheme;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
    cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
    cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t results[],
    int *returned)
{
    (void)lt, (void)desc, (void)a, (void)b, (void)c, (void)d;
    if (requested <= 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    int n = 0;
    if ((pref->data[PREF_MASK] & 1u) != 0) /* INPLACE allowed: split-K, fastest */
        set_algo(&results[n++].algo, 1, 4, 1);
    if (n < requested)
        set_algo(&results[n++].algo, 0, 1, CUBLASLT_REDUCTION_SCHEME_NONE);
    for (int i = 0; i < n; i++) {
        results[i].workspaceSize = 0;
        results[i].state = CUBLAS_STATUS_SUCCESS;
        results[i].wavesCount = 1.0f;
    }
    *returned = n;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(
    const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t attr, void *buf,
    size_t size, size_t *written)
{
    /* cuBLASLt's sizes: INNER_SHAPE_ID and CLUSTER_SHAPE_ID are 2 bytes. */
    size_t want = attr == CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID ||
                          attr == CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID
                      ? 2
                      : 4;
    if (attr < 0 || attr > CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID || size != want)
        return CUBLAS_STATUS_INVALID_VALUE;
    uint32_t v = attr == CUBLASLT_ALGO_CONFIG_ID             ? (uint32_t)algo->data[ALGO_ID]
                 : attr == CUBLASLT_ALGO_CONFIG_SPLITK_NUM   ? (uint32_t)algo->data[ALGO_SPLITK]
                 : attr == CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME ? (uint32_t)algo->data[ALGO_SCHEME]
                 : attr == CUBLASLT_ALGO_CONFIG_TILE_ID      ? 11u
                 : attr == CUBLASLT_ALGO_CONFIG_STAGES_ID    ? 31u
                                                             : 0u;
    if (want == 2) {
        uint16_t v2 = (uint16_t)v;
        memcpy(buf, &v2, 2);
    } else {
        memcpy(buf, &v, 4);
    }
    *written = want;
    return CUBLAS_STATUS_SUCCESS;
}

/* The epilogue of a matmul, from its descriptor. */
struct epilogue {
    const float *bias; /* NULL: no bias */
    int relu;
    uint8_t *mask; /* the RELU_AUX bit-mask; NULL: none */
    int64_t mask_ld; /* in bits */
};

/* Reads the descriptor's epilogue for a D of m rows: SUCCESS, NOT_SUPPORTED
 * for an epilogue or bias type the fake lacks, INVALID_VALUE for a missing
 * pointer or an aux leading dimension cuBLASLt would refuse. */
static cublasStatus_t epilogue_get(const cublasLtMatmulDescOpaque_t *desc, int64_t m,
                                   struct epilogue *ep)
{
    int code = (int)desc->data[CUBLASLT_MATMUL_DESC_EPILOGUE];
    int bias = code == CUBLASLT_EPILOGUE_BIAS || code == CUBLASLT_EPILOGUE_RELU_BIAS ||
               code == CUBLASLT_EPILOGUE_RELU_AUX_BIAS;
    int aux = code == CUBLASLT_EPILOGUE_RELU_AUX || code == CUBLASLT_EPILOGUE_RELU_AUX_BIAS;
    int bias_type = (int)desc->data[CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE];
    memset(ep, 0, sizeof *ep);
    ep->relu = aux || code == CUBLASLT_EPILOGUE_RELU || code == CUBLASLT_EPILOGUE_RELU_BIAS;
    if (!bias && !ep->relu && code != CUBLASLT_EPILOGUE_DEFAULT)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (bias && bias_type != -1 && bias_type != CUDA_R_32F)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    if (bias) {
        memcpy(&ep->bias, &desc->data[CUBLASLT_MATMUL_DESC_BIAS_POINTER], sizeof ep->bias);
        if (!ep->bias)
            return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (aux) {
        memcpy(&ep->mask, &desc->data[CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER], sizeof ep->mask);
        ep->mask_ld = (int64_t)desc->data[CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD];
        if (!ep->mask || ep->mask_ld < m || ep->mask_ld % 128 != 0)
            return CUBLAS_STATUS_INVALID_VALUE;
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* Element (i, j) of D from its value before the epilogue; sets or clears
 * its bit in the mask, touching no other bit. */
static float epilogue_apply(const struct epilogue *ep, float v, int64_t i, int64_t j)
{
    if (ep->bias)
        v += ep->bias[i];
    if (!ep->relu)
        return v;
    int keep = v > 0;
    if (ep->mask) {
        int64_t bit = i + j * ep->mask_ld;
        uint8_t b = (uint8_t)(1u << (bit % 8));
        ep->mask[bit / 8] = keep ? ep->mask[bit / 8] | b : ep->mask[bit / 8] & (uint8_t)~b;
    }
    return keep ? v : 0;
}

static float elem(const float *x, const cublasLtMatrixLayoutOpaque_t *l, int trans, int64_t i,
                  int64_t j)
{
    int64_t ld = (int64_t)l->data[LAYOUT_LD];
    return trans == CUBLAS_OP_N ? x[i + j * ld] : x[j + i * ld];
}

FAKE_EXPORT cublasStatus_t cublasLtMatmul(
    cublasLtHandle_t lt, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
    cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
    const void *C, cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
    const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspaceSize, cudaStream_t stream)
{
    (void)lt, (void)workspace, (void)workspaceSize, (void)stream;
    if (Adesc->data[LAYOUT_TYPE] != CUDA_R_32F || Ddesc->data[LAYOUT_TYPE] != CUDA_R_32F)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    /* FP8 scales and amax with FP32 matrices: cuBLASLt says INVALID_VALUE. */
    for (int attr = CUBLASLT_MATMUL_DESC_A_SCALE_POINTER;
         attr <= CUBLASLT_MATMUL_DESC_AMAX_D_POINTER; attr++)
        if (desc->data[attr])
            return CUBLAS_STATUS_INVALID_VALUE;
    int ta = (int)desc->data[DESC_TRANSA], tb = (int)desc->data[DESC_TRANSB];
    int64_t m = (int64_t)Ddesc->data[LAYOUT_ROWS], n = (int64_t)Ddesc->data[LAYOUT_COLS];
    int64_t k = (int64_t)(ta == CUBLAS_OP_N ? Adesc->data[LAYOUT_COLS] : Adesc->data[LAYOUT_ROWS]);
    int vary = !algo || algo->data[ALGO_SCHEME] != CUBLASLT_REDUCTION_SCHEME_NONE;
    struct epilogue ep;
    cublasStatus_t st = epilogue_get(desc, m, &ep);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    float al = *(const float *)alpha, be = *(const float *)beta;
    int64_t *order = malloc(sizeof *order * (size_t)(k ? k : 1));
    if (!order)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    int64_t ldc = (int64_t)Cdesc->data[LAYOUT_LD], ldd = (int64_t)Ddesc->data[LAYOUT_LD];
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            fake_order(order, k, vary);
            float s = 0;
            for (int64_t l = 0; l < k; l++)
                s += elem(A, Adesc, ta, i, order[l]) * elem(B, Bdesc, tb, order[l], j);
            float c = be != 0 ? ((const float *)C)[i + j * ldc] : 0;
            ((float *)D)[i + j * ldd] = epilogue_apply(&ep, al * s + be * c, i, j);
        }
    free(order);
    return CUBLAS_STATUS_SUCCESS;
}
