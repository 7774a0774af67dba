/* A fake cuBLASLt (libcublasLt.so.13) for tests, on host memory, FP32
 * column-major only. Its heuristic offers a split-K algorithm first (id
 * 1, splitk 4, reduction INPLACE) whenever the preference's reduction-
 * scheme mask allows one, then the plain algorithm (id 0); a matmul with
 * a split-K algorithm, or with none (the library's own heuristic), sums
 * in a per-run shuffled order (fake.h). Descriptors keep their fields in
 * the opaque structs' words.
 */
#include <string.h>

#include "fake.h"

enum { DESC_COMPUTE, DESC_SCALE, DESC_POINTER, DESC_TRANSA, DESC_TRANSB };
enum { LAYOUT_TYPE, LAYOUT_ORDER, LAYOUT_ROWS, LAYOUT_COLS, LAYOUT_LD, LAYOUT_BATCH,
       LAYOUT_STRIDE };
enum { ALGO_ID, ALGO_SPLITK, ALGO_SCHEME };
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
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                                          cublasLtMatmulDescAttributes_t attr,
                                                          const void *buf, size_t size)
{
    int32_t v;
    if (attr < 0 || attr > DESC_TRANSB || size != sizeof v)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&v, buf, sizeof v);
    desc->data[attr] = (uint64_t)(int64_t)v;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc,
                                                          cublasLtMatmulDescAttributes_t attr,
                                                          void *buf, size_t size, size_t *written)
{
    if (attr < 0 || attr > DESC_TRANSB || size != 4)
        return CUBLAS_STATUS_INVALID_VALUE;
    int32_t v = (int32_t)desc->data[attr];
    memcpy(buf, &v, 4);
    *written = 4;
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
    if (attr < 0 || attr > 3 || attr == 1 || size != 4)
        return CUBLAS_STATUS_INVALID_VALUE;
    uint32_t v = (uint32_t)algo->data[attr == CUBLASLT_ALGO_CONFIG_ID ? ALGO_ID
                                      : attr == CUBLASLT_ALGO_CONFIG_SPLITK_NUM ? ALGO_SPLITK
                                                                                : ALGO_SCHEME];
    memcpy(buf, &v, 4);
    *written = 4;
    return CUBLAS_STATUS_SUCCESS;
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
    int ta = (int)desc->data[DESC_TRANSA], tb = (int)desc->data[DESC_TRANSB];
    int64_t m = (int64_t)Ddesc->data[LAYOUT_ROWS], n = (int64_t)Ddesc->data[LAYOUT_COLS];
    int64_t k = (int64_t)(ta == CUBLAS_OP_N ? Adesc->data[LAYOUT_COLS] : Adesc->data[LAYOUT_ROWS]);
    int vary = !algo || algo->data[ALGO_SCHEME] != CUBLASLT_REDUCTION_SCHEME_NONE;
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
            ((float *)D)[i + j * ldd] = al * s + be * c;
        }
    free(order);
    return CUBLAS_STATUS_SUCCESS;
}
