/* cuDNN backend (graph) API interceptors. Programs using the backend API
 * (cuDNN's frontend library, hence PyTorch's convolutions) ask an engine
 * heuristics descriptor for its engine configs, CUDNN_ATTR_ENGINEHEUR_
 * RESULTS, and build an execution plan from one of them. In pinned mode
 * the configs whose engine carries CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC
 * are moved behind the others and the count returned covers only the
 * rest: the caller still owns (and destroys) every descriptor it passed,
 * but sees only deterministic ones. If none is deterministic the list is
 * left whole, the trace says so and a line is logged. Heuristic answers
 * and executions (cudnnBackendExecute) are traced with the engine's
 * global index; executions carry no operand digests (a variant pack's
 * buffers have no sizes in it).
 */
#include <stdio.h>
#include <string.h>

#include "detshim/core.h"
#include "detshim/cuda.h"
#include "detshim/digest.h"

static cudnnStatus_t real_get(cudnnBackendDescriptor_t d, int attr, int type, int64_t requested,
                              int64_t *count, void *array)
{
    REAL_FN(cudnnBackendGetAttribute_fn *, cudnnBackendGetAttribute);
    return real(d, attr, type, requested, count, array);
}

/* A scratch descriptor of `type` for our own queries: 0, or -1 when
 * cuDNN cannot make one. Freed with scratch_free. */
static int scratch(int type, cudnnBackendDescriptor_t *d)
{
    static void *cache;
    cudnnBackendCreateDescriptor_fn *create = (cudnnBackendCreateDescriptor_fn *)(uintptr_t)
        cuda_sym(&cache, "cudnnBackendCreateDescriptor");
    return create && create(type, d) == CUDNN_STATUS_SUCCESS ? 0 : -1;
}

static void scratch_free(cudnnBackendDescriptor_t d)
{
    static void *cache;
    cudnnBackendDestroyDescriptor_fn *destroy = (cudnnBackendDestroyDescriptor_fn *)(uintptr_t)
        cuda_sym(&cache, "cudnnBackendDestroyDescriptor");
    if (destroy)
        destroy(d);
}

/* What a config's engine is: its global index, and whether it is
 * nondeterministic. Returns 0, or -1 if cuDNN would not say. */
static int engine_of(cudnnBackendDescriptor_t cfg, int64_t *index, int *nondeterministic)
{
    cudnnBackendDescriptor_t engine;
    if (scratch(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) != 0)
        return -1;
    int64_t n = 0;
    cudnnBackendNumericalNote_t notes[32];
    int ok = real_get(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                      &engine) == CUDNN_STATUS_SUCCESS &&
             real_get(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, index) ==
                 CUDNN_STATUS_SUCCESS &&
             real_get(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, 32, &n,
                      notes) == CUDNN_STATUS_SUCCESS;
    *nondeterministic = 0;
    for (int64_t i = 0; ok && i < n && i < 32; i++)
        *nondeterministic |= notes[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC;
    scratch_free(engine);
    return ok ? 0 : -1;
}

/* After a successful ENGINEHEUR_RESULTS query: filters (pinned) and
 * records the configs offered. */
static void heuristic_results(const struct cuda_call *c, cudnnBackendDescriptor_t *cfgs,
                              int64_t *count)
{
    enum { MAX = 64 }; /* configs beyond the 64th are dropped in pinned mode */
    int64_t total = *count, offered = total < MAX ? total : MAX, index[MAX], kept = 0;
    int nondet[MAX], unknown = 0;
    for (int64_t i = 0; i < offered; i++)
        if (engine_of(cfgs[i], &index[i], &nondet[i]) != 0) {
            index[i] = -1;
            nondet[i] = 1; /* unknown counts as nondeterministic */
            unknown++;
        }
    for (int64_t i = 0; i < offered; i++)
        kept += !nondet[i];
    char filter[160] = "";
    if (c->pinned && kept == 0 && offered > 0) {
        snprintf(filter, sizeof filter, "none of %lld deterministic: list kept whole (not pinned)",
                 (long long)offered);
        core_log(LOG_INFO, "cuDNN's engine heuristics offered no deterministic engine; the run "
                 "is not pinned there (see the trace's cuda.filter notes)");
    } else if (c->pinned && offered > 0) {
        /* A stable partition of the caller's descriptors: deterministic
         * first, in order; the rest after them, still the caller's. */
        cudnnBackendDescriptor_t sorted[MAX];
        int64_t sorted_index[MAX], k = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int64_t i = 0; i < offered; i++)
                if (nondet[i] == pass) {
                    sorted_index[k] = index[i];
                    sorted[k++] = cfgs[i];
                }
        memcpy(cfgs, sorted, (size_t)offered * sizeof *cfgs);
        memcpy(index, sorted_index, (size_t)offered * sizeof *index);
        snprintf(filter, sizeof filter, "kept %lld of %lld (deterministic only%s%s)",
                 (long long)kept, (long long)total, unknown ? "; unknown engines dropped" : "",
                 total > MAX ? "; only the first 64 examined" : "");
        *count = kept;
    }
    if (!c->traced)
        return;
    char chosen[48];
    struct trace_rec r;
    trace_rec_begin(&r, "cudnnBackendGetAttribute");
    trace_rec_str(&r, "attribute", "CUDNN_ATTR_ENGINEHEUR_RESULTS");
    trace_rec_int(&r, "offered", total);
    trace_rec_int(&r, "returned", *count);
    trace_rec_operand(&r, "engines", TRACE_ROLE_OUT,
                      digest_bytes(index, (size_t)(*count < MAX ? *count : MAX) * sizeof *index),
                      (uint64_t)*count, (int)sizeof *index);
    cuda_note_mode(&r, c);
    snprintf(chosen, sizeof chosen, "engine %lld", (long long)(*count > 0 ? index[0] : -1));
    trace_rec_note(&r, "cuda.algo", chosen);
    if (filter[0])
        trace_rec_note(&r, "cuda.filter", filter);
    trace_rec_commit(&r);
}

DETSHIM_EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d,
                                                      cudnnBackendAttributeName_t attr,
                                                      cudnnBackendAttributeType_t type,
                                                      int64_t requested, int64_t *count,
                                                      void *array)
{
    REAL_FN(cudnnBackendGetAttribute_fn *, cudnnBackendGetAttribute);
    /* Every other attribute goes straight through, without the guard:
     * cuDNN's frontend reads many. */
    if (attr != CUDNN_ATTR_ENGINEHEUR_RESULTS || type != CUDNN_TYPE_BACKEND_DESCRIPTOR)
        return real(d, attr, type, requested, count, array);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(d, attr, type, requested, count, array);
    cudnnStatus_t st = real(d, attr, type, requested, count, array);
    /* A count-only query (no array) is left alone: the filtered answer
     * that follows can only be shorter. */
    if (st == CUDNN_STATUS_SUCCESS && array && count && *count > 0)
        heuristic_results(&c, array, count);
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle,
                                                 cudnnBackendDescriptor_t plan,
                                                 cudnnBackendDescriptor_t pack)
{
    REAL_FN(cudnnBackendExecute_fn *, cudnnBackendExecute);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, plan, pack);
    cudnnStatus_t st = real(handle, plan, pack);
    if (c.traced) {
        cudnnBackendDescriptor_t cfg;
        int64_t index = -1, n;
        int nondet = 0;
        if (scratch(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg) == 0) {
            if (real_get(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &cfg) != CUDNN_STATUS_SUCCESS ||
                engine_of(cfg, &index, &nondet) != 0)
                index = -1;
            scratch_free(cfg);
        }
        char engine[64];
        struct trace_rec r;
        trace_rec_begin(&r, "cudnnBackendExecute");
        trace_rec_int(&r, "engine", index);
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &c);
        snprintf(engine, sizeof engine, "engine %lld (%s)", (long long)index,
                 index < 0 ? "unknown" : nondet ? "nondeterministic" : "deterministic");
        trace_rec_note(&r, "cuda.algo", engine);
        trace_rec_commit(&r);
    }
    cuda_leave();
    return st;
}
