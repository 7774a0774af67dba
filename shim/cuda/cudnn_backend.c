/* cuDNN backend (graph) API interceptors. Programs using the backend API
 * (cuDNN's frontend library, hence PyTorch's convolutions) ask an engine
 * heuristics descriptor for its engine configs, CUDNN_ATTR_ENGINEHEUR_
 * RESULTS, and build an execution plan from one of them. In pinned mode
 * the answer is first read into scratch descriptors to learn each
 * engine's numerical notes; then the caller's descriptors are filled so
 * that the configs whose engine carries CUDNN_NUMERICAL_NOTE_
 * NONDETERMINISTIC come last, and the count returned covers only the
 * others. The caller still owns (and destroys) every descriptor it
 * passed. If none is deterministic the list is left whole, the trace says
 * so and a line is logged. A plan the program builds on an engine it
 * chose itself, bypassing the heuristics, cannot be pinned here: when
 * such a plan is finalized on a nondeterministic engine, the shim says so
 * on stderr, once. Heuristic answers and executions (cudnnBackendExecute)
 * are traced with the engine's global index; executions carry no operand
 * digests (a variant pack's buffers have no sizes in it).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "trace/digest.h"

static cudnnStatus_t real_get(cudnnBackendDescriptor_t d, int attr, int type, int64_t requested,
                              int64_t *count, void *array)
{
    CUDA_REAL_FN(cudnnBackendGetAttribute_fn *, cudnnBackendGetAttribute);
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

enum { MAX_CONFIGS = 256 }; /* a query for more is not examined (nor pinned) */

/* Records a heuristics answer: the engine indices of the `returned`
 * configs the caller sees, first the one it will likely use. */
static void rec_engines(const struct cuda_call *c, int64_t offered, int64_t returned,
                        cudnnStatus_t st, const int64_t *index, const char *filter)
{
    char chosen[48];
    struct trace_rec r;
    trace_rec_begin(&r, "cudnnBackendGetAttribute");
    trace_rec_str(&r, "attribute", "CUDNN_ATTR_ENGINEHEUR_RESULTS");
    trace_rec_int(&r, "offered", offered);
    trace_rec_int(&r, "returned", returned);
    trace_rec_int(&r, "status", st);
    trace_rec_operand(&r, "engines", TRACE_ROLE_OUT,
                      digest_bytes(index, (size_t)returned * sizeof *index), (uint64_t)returned,
                      (int)sizeof *index);
    cuda_note_mode(&r, c);
    snprintf(chosen, sizeof chosen, "engine %lld", (long long)(returned > 0 ? index[0] : -1));
    trace_rec_note(&r, "cuda.algo", chosen);
    if (filter[0])
        trace_rec_note(&r, "cuda.filter", filter);
    cuda_commit(&r);
}

/* The heuristics' answer, read into scratch descriptors: each config's
 * engine index and determinism. Returns the count read, or -1. */
static int64_t survey(cudnnBackendDescriptor_t heur, int64_t requested, int64_t *index,
                      int *nondet)
{
    cudnnBackendDescriptor_t cfgs[MAX_CONFIGS];
    int64_t n = requested < MAX_CONFIGS ? requested : MAX_CONFIGS, made = 0, got = -1;
    while (made < n && scratch(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[made]) == 0)
        made++;
    if (made == n && real_get(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                              n, &got, cfgs) != CUDNN_STATUS_SUCCESS)
        got = -1;
    for (int64_t i = 0; i < got; i++)
        if (engine_of(cfgs[i], &index[i], &nondet[i]) != 0) {
            index[i] = -1;
            nondet[i] = 1; /* an engine cuDNN will not describe counts as nondeterministic */
        }
    for (int64_t i = 0; i < made; i++)
        scratch_free(cfgs[i]);
    return made == n ? got : -1;
}

/* Pinned ENGINEHEUR_RESULTS: the caller's descriptors are filled so that
 * the first `kept` hold the deterministic configs in the heuristics'
 * order; the count returned covers only those. Callers that keep their
 * own list of the descriptors they passed (cuDNN's frontend does) see the
 * same thing as callers that read the array. The descriptors are filled
 * by one real query, given them in the order results should land. */
static cudnnStatus_t filtered(const struct cuda_call *c, cudnnBackendDescriptor_t heur,
                              int64_t requested, int64_t *count, cudnnBackendDescriptor_t *cfgs)
{
    CUDA_REAL_FN(cudnnBackendGetAttribute_fn *, cudnnBackendGetAttribute);
    int64_t index[MAX_CONFIGS], order[MAX_CONFIGS], kept = 0;
    int nondet[MAX_CONFIGS];
    int64_t got = requested <= MAX_CONFIGS ? survey(heur, requested, index, nondet) : -1;
    char filter[160] = "";
    cudnnStatus_t st;
    if (got < 0) { /* could not look: the plain answer, said so */
        st = real(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, requested,
                  count, cfgs);
        snprintf(filter, sizeof filter, "not examined: %s (not pinned)",
                 requested > MAX_CONFIGS ? "more than 256 configs requested"
                                         : "cuDNN would not say");
        got = st == CUDNN_STATUS_SUCCESS ? (*count < MAX_CONFIGS ? *count : MAX_CONFIGS) : 0;
        for (int64_t i = 0; i < got; i++)
            index[i] = -1;
    } else {
        for (int64_t i = 0; i < got; i++)
            kept += !nondet[i];
        if (kept == 0 && got > 0) {
            snprintf(filter, sizeof filter,
                     "none of %lld deterministic: list kept whole (not pinned)", (long long)got);
            core_log(DS_LOG_INFO, "cuDNN's engine heuristics offered no deterministic engine; the "
                     "run is not pinned there (see the trace's cuda.filter notes)");
        } else if (got > 0) {
            snprintf(filter, sizeof filter, "kept %lld of %lld (deterministic only)",
                     (long long)kept, (long long)got);
        }
        /* Result i lands in the caller's descriptor order[i]. */
        cudnnBackendDescriptor_t arranged[MAX_CONFIGS];
        int64_t next_det = 0, next_other = kept;
        for (int64_t i = 0; i < requested; i++) {
            int det = i < got && (!nondet[i] || kept == 0);
            order[i] = i >= got ? i : det ? next_det++ : next_other++;
            arranged[i] = cfgs[order[i]];
        }
        st = real(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, requested,
                  count, arranged);
        if (st == CUDNN_STATUS_SUCCESS && kept > 0)
            *count = kept;
        /* The engine indices in the order the caller now sees them. */
        int64_t seen[MAX_CONFIGS];
        for (int64_t i = 0; i < got; i++)
            seen[order[i]] = index[i];
        memcpy(index, seen, (size_t)got * sizeof *index);
    }
    if (c->traced)
        rec_engines(c, got, st == CUDNN_STATUS_SUCCESS ? (*count < got ? *count : got) : 0, st,
                    index, filter);
    return st;
}

/* Passthrough ENGINEHEUR_RESULTS: the answer as cuDNN gives it, recorded. */
static void record_plain(const struct cuda_call *c, cudnnBackendDescriptor_t *cfgs,
                         int64_t count, cudnnStatus_t st)
{
    int64_t index[MAX_CONFIGS], n = st == CUDNN_STATUS_SUCCESS ? count : 0;
    int nondet;
    if (n > MAX_CONFIGS)
        n = MAX_CONFIGS;
    for (int64_t i = 0; i < n; i++)
        if (engine_of(cfgs[i], &index[i], &nondet) != 0)
            index[i] = -1;
    rec_engines(c, n, n, st, index, "");
}

DETSHIM_EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d,
                                                      cudnnBackendAttributeName_t attr,
                                                      cudnnBackendAttributeType_t type,
                                                      int64_t requested, int64_t *count,
                                                      void *array)
{
    CUDA_REAL_FN(cudnnBackendGetAttribute_fn *, cudnnBackendGetAttribute);
    /* Every other attribute, and a count-only query (no array: the
     * filtered answer that follows can only be shorter), goes straight
     * through without the guard: cuDNN's frontend reads many. */
    if (attr != CUDNN_ATTR_ENGINEHEUR_RESULTS || type != CUDNN_TYPE_BACKEND_DESCRIPTOR ||
        !array || !count || requested <= 0)
        return real(d, attr, type, requested, count, array);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(d, attr, type, requested, count, array);
    cudnnStatus_t st;
    if (c.pinned) {
        st = filtered(&c, d, requested, count, array);
    } else {
        st = real(d, attr, type, requested, count, array);
        if (c.traced)
            record_plain(&c, array, *count, st);
    }
    cuda_leave();
    return st;
}

/* The engine an execution plan runs: its global index, and whether it
 * is nondeterministic. Returns 0, or -1 if d is not a plan or cuDNN would
 * not say. */
static int plan_engine(cudnnBackendDescriptor_t plan, int64_t *index, int *nondeterministic)
{
    cudnnBackendDescriptor_t cfg;
    int64_t n;
    if (scratch(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg) != 0)
        return -1;
    int rc = real_get(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &cfg) == CUDNN_STATUS_SUCCESS
                 ? engine_of(cfg, index, nondeterministic)
                 : -1;
    scratch_free(cfg);
    return rc;
}

/* Finalizing is where a plan's engine is fixed. Plans are built once and
 * executed many times, so the check costs nothing on the hot path; every
 * other descriptor answers the plan query with an error and is let be. */
DETSHIM_EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d)
{
    CUDA_REAL_FN(cudnnBackendFinalize_fn *, cudnnBackendFinalize);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(d);
    cudnnStatus_t st = real(d);
    int64_t index;
    int nondet;
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    if (c.pinned && st == CUDNN_STATUS_SUCCESS && plan_engine(d, &index, &nondet) == 0 &&
        nondet && !atomic_flag_test_and_set(&warned))
        core_log(DS_LOG_QUIET, "a cuDNN execution plan was built on engine %lld, which cuDNN marks "
                 "nondeterministic, chosen by the program rather than from the engine "
                 "heuristics the shim filters: its executions are not pinned (the trace notes "
                 "them as nondeterministic)", (long long)index);
    cuda_leave();
    return st;
}

DETSHIM_EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle,
                                                 cudnnBackendDescriptor_t plan,
                                                 cudnnBackendDescriptor_t pack)
{
    CUDA_REAL_FN(cudnnBackendExecute_fn *, cudnnBackendExecute);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(handle, plan, pack);
    cudnnStatus_t st = real(handle, plan, pack);
    if (c.traced) {
        int64_t index = -1;
        int nondet = 0;
        if (plan_engine(plan, &index, &nondet) != 0)
            index = -1;
        char engine[64];
        struct trace_rec r;
        trace_rec_begin(&r, "cudnnBackendExecute");
        trace_rec_int(&r, "engine", index);
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &c);
        snprintf(engine, sizeof engine, "engine %lld (%s)", (long long)index,
                 index < 0 ? "unknown" : nondet ? "nondeterministic" : "deterministic");
        trace_rec_note(&r, "cuda.algo", engine);
        cuda_commit(&r);
    }
    cuda_leave();
    return st;
}
