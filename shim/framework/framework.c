/* Framework-level records: what a framework computes that LD_PRELOAD
 * cannot see (Eigen's, XLA's and ATen's own kernels). The Python start-up
 * hook (policies/python/detshim_steps.py) finds the seams -- an optimizer
 * step, an ATen op -- and describes each one through these exported
 * functions, over ctypes; the tensors are digested here, with the same
 * XXH3-128 over the logical elements as every BLAS operand
 * (trace/digest.h), never in Python. The records go on the calling
 * thread's call stream, so they are chained and enter the root like any
 * intercepted call (docs/frameworks.md):
 *
 *   framework.step  framework (str), step (int), [part (int)];
 *                   one OUT operand per parameter and optimizer-state
 *                   tensor, by name. A step with more tensors than a record
 *                   holds (TRACE_MAX_OPERANDS) continues in records of the
 *                   same params with part = 1, 2, ...
 *   framework.op    op, site (file:line in function), shapes, dtypes (str),
 *                   [dropped_in, dropped_out (int)]; IN operands (before
 *                   the op) and OUT operands (after), TRACE_MAX_OPERANDS
 *                   in all: the hook says how many it left out.
 *
 * One record is built at a time per thread (begin, params, tensors one
 * call each or many in one call, end; or a whole step record in one
 * call); a begin while one is open starts over. Nothing is recorded
 * without an active trace or from inside the shim.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "framework/framework.h"
#include "trace/digest.h"
#include "trace/trace.h"

#define FW_STR_MAX 256
#define FW_MAX_PARAMS 8

/* The record being built on this thread, with copies of every string, so
 * the caller's (ctypes') buffers may go at once. */
struct fw_build {
    int open, is_step;
    const char *api;
    int nparams, part;
    struct {
        char name[32];
        int is_str;
        int64_t i;
        char s[FW_STR_MAX];
    } params[FW_MAX_PARAMS];
    int noperands;
    struct {
        char name[FW_NAME_MAX + 1];
        int role, elem;
        uint64_t count;
        detshim_digest d;
    } operands[TRACE_MAX_OPERANDS];
};

/* On the heap, one per thread that records (freed at its exit): the
 * shim's static TLS block is small, and a dlopen'ed shim has little. */
static pthread_key_t fw_key;
static pthread_once_t fw_once = PTHREAD_ONCE_INIT;
static _Thread_local struct fw_build *fw_cur;

static void fw_make_key(void)
{
    pthread_key_create(&fw_key, free);
}

/* This thread's builder, or NULL when out of memory. */
static struct fw_build *fw_get(void)
{
    if (!fw_cur) {
        pthread_once(&fw_once, fw_make_key);
        fw_cur = calloc(1, sizeof *fw_cur);
        if (fw_cur)
            pthread_setspecific(fw_key, fw_cur);
    }
    return fw_cur;
}

/* The builder for the calls after a begin: NULL when none is open. */
#define FW_OPEN() (fw_cur && fw_cur->open ? fw_cur : NULL)

/* Writes the record built so far (a part of a step when more follow). */
static void fw_commit(struct fw_build *b)
{
#define fw (*b)
    struct trace_rec r;
    trace_rec_begin(&r, fw.api);
    for (int i = 0; i < fw.nparams; i++) {
        if (fw.params[i].is_str)
            trace_rec_str(&r, fw.params[i].name, fw.params[i].s);
        else
            trace_rec_int(&r, fw.params[i].name, fw.params[i].i);
    }
    if (fw.part > 0)
        trace_rec_int(&r, "part", fw.part);
    for (int i = 0; i < fw.noperands; i++)
        trace_rec_operand(&r, fw.operands[i].name, fw.operands[i].role, fw.operands[i].d,
                          fw.operands[i].count, fw.operands[i].elem);
    trace_rec_commit(&r);
    fw.noperands = 0;
    fw.part++;
#undef fw
}

int fw_enter(void)
{
    if (guard_held() || !trace_active())
        return 0;
    return guard_enter();
}

/* Starts a record of `kind` ("step" or "op"). Returns 0, or -1 when
 * nothing will be recorded (no trace, a bad kind): the caller may skip
 * the rest, and every later call until the next begin does nothing. */
DETSHIM_EXPORT int detshim_framework_begin(const char *kind)
{
    if (fw_cur)
        fw_cur->open = 0;
    if (!kind || (strcmp(kind, "step") != 0 && strcmp(kind, "op") != 0) || !trace_active())
        return -1;
    struct fw_build *b = fw_get();
    if (!b)
        return -1;
    b->is_step = kind[0] == 's';
    b->api = b->is_step ? "framework.step" : "framework.op";
    b->nparams = b->noperands = b->part = 0;
    b->open = 1;
    return 0;
}

static int fw_param(struct fw_build *b, const char *name)
{
    if (!b || !name || b->nparams == FW_MAX_PARAMS || b->part > 0)
        return -1;
    int i = b->nparams++;
    snprintf(b->params[i].name, sizeof b->params[i].name, "%s", name);
    return i;
}

/* A parameter of the record, taken until its first part is written: an
 * op record's at any time before its end (the counts of the tensors it
 * left out are known after the op). */
DETSHIM_EXPORT void detshim_framework_int(const char *name, int64_t v)
{
    struct fw_build *b = FW_OPEN();
    int i = fw_param(b, name);
    if (i >= 0) {
        b->params[i].is_str = 0;
        b->params[i].i = v;
    }
}

DETSHIM_EXPORT void detshim_framework_str(const char *name, const char *v)
{
    struct fw_build *b = FW_OPEN();
    int i = fw_param(b, name);
    if (i >= 0) {
        b->params[i].is_str = 1;
        snprintf(b->params[i].s, sizeof b->params[i].s, "%s", v ? v : "");
    }
}

int fw_describe(struct fw_job *j, const void *data, int64_t elem_size, int ndims,
                       const int64_t *shape, const int64_t *strides)
{
    if (elem_size < 1 || elem_size > 255 || ndims < 0 || ndims > DIGEST_MAX_DIMS ||
        (ndims && (!shape || !strides)))
        return -1;
    *j = (struct fw_job){ .data = data, .count = 1 };
    j->shape = (struct digest_shape){ .ndims = ndims ? ndims : 1, .elem = (size_t)elem_size };
    j->shape.dims[0] = 1;
    j->shape.strides[0] = 1;
    for (int k = 0; k < ndims; k++) {
        if (shape[k] < 0 || strides[k] < 0)
            return -1;
        j->shape.dims[k] = shape[k];
        j->shape.strides[k] = strides[k];
        j->count *= (uint64_t)shape[k];
    }
    return j->count && !data ? -1 : 0;
}

/* The bytes of a tensor of shape s when it lies in one run, else -1. */
static int64_t fw_run_bytes(const struct digest_shape *s)
{
    int64_t run, count[DIGEST_MAX_DIMS], stride[DIGEST_MAX_DIMS];
    return digest_runs(s, &run, count, stride) == 1 && count[0] == 1 ? run : -1;
}

/* A long run is shared among the threads lent to digests
 * (digest_bytes_shared: a step record's parameters; the program waits on
 * the record, and the canonical pool is idle then). */
detshim_digest fw_digest(const void *data, const struct digest_shape *s)
{
    int64_t run = fw_run_bytes(s);
    return run >= 0 ? digest_bytes_shared(data, (size_t)run) : digest_strided(data, s);
}

enum { FW_TAKEN = 0, FW_REFUSED = -1, FW_FULL = -2 };

/* Digests one tensor (fw_describe's arguments; role 1 = IN, 2 = OUT,
 * trace_format.h) into the open record b. A step record that is full is
 * written as a part and continued; an op record takes TRACE_MAX_OPERANDS
 * tensors, and then FW_FULL, before any digest. FW_REFUSED: a tensor it
 * cannot walk, or a part that could not be written. */
static int fw_take(struct fw_build *b, const char *name, int role, const void *data,
                   int64_t elem_size, int ndims, const int64_t *shape, const int64_t *strides,
                   const detshim_digest *known)
{
    struct fw_job j;
    if (!name || (role != TRACE_ROLE_IN && role != TRACE_ROLE_OUT) ||
        fw_describe(&j, data, elem_size, ndims, shape, strides) != 0)
        return FW_REFUSED;
    if (b->noperands == TRACE_MAX_OPERANDS) {
        if (!b->is_step)
            return FW_FULL;
        if (!fw_enter())
            return FW_REFUSED;
        fw_commit(b);
        guard_leave();
    }
    int i = b->noperands++;
    snprintf(b->operands[i].name, sizeof b->operands[i].name, "%s", name);
    b->operands[i].role = role;
    b->operands[i].elem = (int)elem_size;
    b->operands[i].count = j.count;
    b->operands[i].d = known ? *known : j.count ? fw_digest(data, &j.shape) : digest_bytes(NULL, 0);
    return FW_TAKEN;
}

/* The digests of the tensors of a step record that lie in one run,
 * taken at once on the threads lent to digests (digest_runs_shared):
 * after an optimizer step the parameters come from memory, and two
 * cores read it faster than one. known[i] is set for those, to what
 * fw_take would compute; the others (strided, empty, refused) get
 * none. */
#define FW_BATCH 64

static void fw_digest_runs(int n, const void *const *data, const int64_t *elem_sizes,
                           const int *ndims, const int64_t *shapes, const int64_t *strides,
                           detshim_digest *known, int *has)
{
    const void *p[FW_BATCH];
    size_t len[FW_BATCH];
    int at[FW_BATCH], m = 0;
    for (int i = 0; i < n; i++) {
        struct fw_job j;
        int64_t run = -1;
        if (fw_describe(&j, data[i], elem_sizes[i], ndims[i], shapes + (size_t)i * DIGEST_MAX_DIMS,
                        strides + (size_t)i * DIGEST_MAX_DIMS) == 0 && j.count)
            run = fw_run_bytes(&j.shape);
        has[i] = run >= 0;
        if (has[i]) {
            p[m] = data[i];
            len[m] = (size_t)run;
            at[m++] = i;
        }
    }
    detshim_digest d[FW_BATCH];
    digest_runs_shared((size_t)m, p, len, d);
    for (int k = 0; k < m; k++)
        known[at[k]] = d[k];
}

/* Digests one tensor into the record (fw_take's arguments). Returns 0,
 * or -1 when it was not taken (no record open, a shape it cannot walk, an
 * op record that is full). */
DETSHIM_EXPORT int detshim_framework_tensor(const char *name, int role, const void *data,
                                            int64_t elem_size, int ndims, const int64_t *shape,
                                            const int64_t *strides)
{
    struct fw_build *b = FW_OPEN();
    if (!b)
        return -1;
    return fw_take(b, name, role, data, elem_size, ndims, shape, strides, NULL) == FW_TAKEN ? 0
                                                                                         : -1;
}

/* n tensors in one call, as n calls of detshim_framework_tensor would
 * give them, in order: tensor i is names[i], roles[i], data[i],
 * elem_sizes[i], ndims[i], with its shape and strides at
 * shapes[i * 8 ...] and strides[i * 8 ...] (8 = DIGEST_MAX_DIMS slots per
 * tensor). One ctypes call per record instead of one per tensor: the
 * hook lays the arrays out once per optimizer and passes only the data
 * pointers again. Returns how many were taken (a tensor it cannot walk,
 * or one past a full op record, is left out), or -1 when no record is
 * open. */
DETSHIM_EXPORT int detshim_framework_tensors(int n, const char *const *names, const int *roles,
                                             const void *const *data, const int64_t *elem_sizes,
                                             const int *ndims, const int64_t *shapes,
                                             const int64_t *strides)
{
    struct fw_build *b = FW_OPEN();
    if (!b || n < 0 || (n && (!names || !roles || !data || !elem_sizes || !ndims || !shapes ||
                              !strides)))
        return -1;
    int taken = 0;
    for (int at = 0; at < n; at += FW_BATCH) {
        int m = n - at < FW_BATCH ? n - at : FW_BATCH, has[FW_BATCH] = { 0 };
        detshim_digest known[FW_BATCH];
        const size_t dims = (size_t)at * DIGEST_MAX_DIMS;
        if (b->is_step) /* an op record may be full before its last tensor */
            fw_digest_runs(m, data + at, elem_sizes + at, ndims + at, shapes + dims,
                           strides + dims, known, has);
        for (int i = 0; i < m; i++) {
            int k = at + i;
            int rc = fw_take(b, names[k], roles[k], data[k], elem_sizes[k], ndims[k],
                             shapes + (size_t)k * DIGEST_MAX_DIMS,
                             strides + (size_t)k * DIGEST_MAX_DIMS, has[i] ? &known[i] : NULL);
            if (rc == FW_FULL)
                return taken;
            taken += rc == FW_TAKEN;
        }
    }
    return taken;
}

/* Writes the record (its last part). Returns 0, or -1 when nothing was
 * written (no record open, inside the shim, no trace). */
DETSHIM_EXPORT int detshim_framework_end(void)
{
    struct fw_build *b = FW_OPEN();
    if (!b)
        return -1;
    b->open = 0;
    if (!fw_enter())
        return -1;
    fw_commit(b);
    guard_leave();
    return 0;
}

/* A whole torch-style step record in one call: begin("step"), the
 * params framework, optimizer (str) and step (int), the n tensors of
 * detshim_framework_tensors, end; the record is the one those calls
 * make. One ctypes call instead of six: right after a training step the
 * interpreter's and ctypes' code is out of the caches, and each call then
 * costs some 8 us (docs/frameworks.md, Costs). Returns how many tensors
 * were taken, or -1 when nothing was recorded. */
DETSHIM_EXPORT int detshim_framework_step(const char *framework, const char *optimizer,
                                          int64_t step, int n, const char *const *names,
                                          const int *roles, const void *const *data,
                                          const int64_t *elem_sizes, const int *ndims,
                                          const int64_t *shapes, const int64_t *strides)
{
    if (detshim_framework_begin("step") != 0)
        return -1;
    detshim_framework_str("framework", framework);
    detshim_framework_str("optimizer", optimizer);
    detshim_framework_int("step", step);
    int taken = detshim_framework_tensors(n, names, roles, data, elem_sizes, ndims, shapes,
                                          strides);
    return detshim_framework_end() == 0 ? taken : -1;
}
