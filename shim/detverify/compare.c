/* detverify's comparisons (compare.h). What fails and what is a note
 * follows one rule: a difference fails if it can change a bit of what the
 * program computes under the policy (a library build, a framework version,
 * a pinned or watched setting, the ISA flags that non-canonical kernels
 * dispatch on, a data file), and is a note if it cannot (names, paths,
 * the host, the CPU's model name and core count: canonical kernels give
 * the same bits at any thread count). The ISA flags are the one fact that
 * is settled last: a note when the re-run gave the published trace and
 * outputs anyway. docs/verify.md lists them.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "diff.h"
#include "detshim/trace_format.h"
#include "util.h"

void verify_add(struct verify_report *r, enum verify_step step, int fails, const char *kind,
                const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        struct verify_finding *items = realloc(r->items, cap * sizeof *items);
        if (!items) {
            r->nomem = 1;
            return;
        }
        r->items = items;
        r->cap = cap;
    }
    char *text = strdup(buf);
    if (!text) {
        r->nomem = 1;
        return;
    }
    r->items[r->n++] = (struct verify_finding){step, fails, kind, text};
}

void verify_report_free(struct verify_report *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->items[i].text);
    free(r->items);
    memset(r, 0, sizeof *r);
}

const struct verify_finding *verify_first_failure(const struct verify_report *r)
{
    for (int s = 0; s < VERIFY_STEP_COUNT; s++)
        for (size_t i = 0; i < r->n; i++)
            if (r->items[i].fails && (int)r->items[i].step == s)
                return &r->items[i];
    return NULL;
}

const char *verify_step_name(enum verify_step s)
{
    static const char *const names[] = {"signature", "policy", "environment", "inputs",
                                        "outputs", "trace", "chain"};
    return s < VERIFY_STEP_COUNT ? names[s] : "?";
}

/* s, or "(none)" for NULL, for messages. */
static const char *or_none(const char *s)
{
    return s ? s : "(none)";
}

/* 1 if both are NULL or both equal strings. */
static int str_eq(const char *a, const char *b)
{
    return a && b ? strcmp(a, b) == 0 : a == b;
}

/* ---- environment --------------------------------------------------- */

/* A name with a value, and where it came from: settings and identities
 * are compared by the same code. */
struct named {
    const char *name, *value, *extra;
};

/* Values of names[] in [*i, end) that equal `name`, joined by ", " into
 * buf (with " (extra)" after each where given); advances *i past them. */
static void join_values(const struct named *v, size_t n, size_t *i, const char *name, char *buf,
                        size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (; *i < n && strcmp(v[*i].name, name) == 0; (*i)++) {
        int w = snprintf(buf + off, len - off, "%s\"%s\"%s%s%s", off ? ", " : "", v[*i].value,
                         v[*i].extra && *v[*i].extra ? " (" : "",
                         v[*i].extra ? v[*i].extra : "", v[*i].extra && *v[*i].extra ? ")" : "");
        if (w < 0 || (size_t)w >= len - off)
            break;
        off += (size_t)w;
    }
    for (; *i < n && strcmp(v[*i].name, name) == 0; (*i)++)
        ;
}

/* 1 if the values of `name` agree in both lists (both sorted by name,
 * then value). */
static int same_values(const struct named *a, size_t na, size_t ia, const struct named *b,
                       size_t nb, size_t ib, const char *name)
{
    for (;;) {
        int ea = ia >= na || strcmp(a[ia].name, name) != 0;
        int eb = ib >= nb || strcmp(b[ib].name, name) != 0;
        if (ea || eb)
            return ea && eb;
        if (strcmp(a[ia].value, b[ib].value) != 0)
            return 0;
        ia++;
        ib++;
    }
}

/* Merges two sorted lists by name and adds one failing finding per name
 * whose values differ or that one side lacks: first the names both have
 * (another numpy, another libopenblas), then the ones in one run only,
 * which are often their consequence. `what` names the kind of thing
 * ("loaded object", "Python package", "setting"). */
static void compare_named(const struct named *a, size_t na, const struct named *b, size_t nb,
                          const char *what, const char *kind, struct verify_report *r)
{
    char va[1024], vb[1024];
    for (int pass = 0; pass < 2; pass++) {
        size_t i = 0, j = 0;
        while (i < na || j < nb) {
            int c = i >= na ? 1 : j >= nb ? -1 : strcmp(a[i].name, b[j].name);
            const char *name = c <= 0 ? a[i].name : b[j].name;
            int same = c == 0 && same_values(a, na, i, b, nb, j, name);
            if (c <= 0)
                join_values(a, na, &i, name, va, sizeof va);
            if (c >= 0)
                join_values(b, nb, &j, name, vb, sizeof vb);
            if (same || (c == 0) != (pass == 0))
                continue;
            if (c == 0)
                verify_add(r, VERIFY_STEP_ENV, 1, kind, "%s %s differs: published %s, re-run %s",
                           what, name, va, vb);
            else if (c < 0)
                verify_add(r, VERIFY_STEP_ENV, 1, kind, "%s %s %s is in the published run only",
                           what, name, va);
            else
                verify_add(r, VERIFY_STEP_ENV, 1, kind, "%s %s %s is in the re-run only", what,
                           name, vb);
        }
    }
}

static struct named *idents_named(const struct attest_ident *v, size_t n)
{
    struct named *out = calloc(n + 1, sizeof *out);
    for (size_t i = 0; out && i < n; i++)
        out[i] = (struct named){v[i].name, v[i].id, NULL};
    return out;
}

static struct named *settings_named(const struct attest_setting *v, size_t n)
{
    struct named *out = calloc(n + 1, sizeof *out);
    for (size_t i = 0; out && i < n; i++)
        out[i] = (struct named){v[i].name, v[i].value, v[i].origin};
    return out;
}

/* compare_named over two identity lists; out of memory sets r->nomem. */
static void compare_idents(const struct attest_ident *a, size_t na, const struct attest_ident *b,
                           size_t nb, const char *what, const char *kind, struct verify_report *r)
{
    struct named *x = idents_named(a, na), *y = idents_named(b, nb);
    if (x && y)
        compare_named(x, na, y, nb, what, kind, r);
    else
        r->nomem = 1;
    free(x);
    free(y);
}

/* 1 if the comma-separated flag lists hold the same flags, in any order. */
static int same_flags(const char *a, const char *b)
{
    for (int pass = 0; pass < 2; pass++) {
        const char *s = pass ? b : a, *other = pass ? a : b;
        while (s && *s) {
            size_t n = strcspn(s, ",");
            int found = 0;
            for (const char *t = other; t && *t;) {
                size_t m = strcspn(t, ",");
                found |= m == n && memcmp(s, t, n) == 0;
                t += m + (t[m] == ',');
            }
            if (!found)
                return 0;
            s += n + (s[n] == ',');
        }
    }
    return 1;
}

/* Per process present in both runs: seed and entropy rule (failures),
 * command line (a note). */
static void compare_processes_env(const struct attest *pub, const struct attest *re,
                                  struct verify_report *r)
{
    for (size_t i = 0; i < pub->nprocesses; i++)
        for (size_t j = 0; j < re->nprocesses; j++) {
            const struct attest_process *p = &pub->processes[i], *q = &re->processes[j];
            if (strcmp(p->name, q->name) != 0)
                continue;
            if (!str_eq(p->seed, q->seed))
                verify_add(r, VERIFY_STEP_ENV, 1, "seed",
                           "process %s's seed differs: published %s, re-run %s", p->name,
                           or_none(p->seed), or_none(q->seed));
            if (!str_eq(p->entropy_rule, q->entropy_rule))
                verify_add(r, VERIFY_STEP_ENV, 1, "entropy_rule",
                           "process %s's entropy rule differs: published %s, re-run %s",
                           p->name, p->entropy_rule ? p->entropy_rule : "pinned",
                           q->entropy_rule ? q->entropy_rule : "pinned");
            if (!str_eq(p->args, q->args))
                verify_add(r, VERIFY_STEP_ENV, 0, "args",
                           "process %s's command line differs (cannot change bits by itself): "
                           "published \"%s\", re-run \"%s\"", p->name, or_none(p->args),
                           or_none(q->args));
        }
}

/* A note when both a and b are known and differ; `why` says why it
 * cannot change bits. */
static void note_if_differs(struct verify_report *r, const char *kind, const char *what,
                            const char *a, const char *b, const char *why)
{
    if (a && b && strcmp(a, b) != 0)
        verify_add(r, VERIFY_STEP_ENV, 0, kind, "%s differs (%s): published \"%s\", re-run \"%s\"",
                   what, why, or_none(a), or_none(b));
}

void verify_compare_env(const struct attest *pub, const struct attest *re,
                        struct verify_report *r)
{
    if (!str_eq(pub->shim_version, re->shim_version))
        verify_add(r, VERIFY_STEP_ENV, 1, "shim_version",
                   "detshim version differs: published %s, re-run %s", or_none(pub->shim_version),
                   or_none(re->shim_version));
    if (pub->trace_format != re->trace_format)
        verify_add(r, VERIFY_STEP_ENV, 1, "trace_format",
                   "trace format differs: published %" PRId64 ", re-run %" PRId64,
                   pub->trace_format, re->trace_format);
    if (!str_eq(pub->policy_digest, re->policy_digest))
        verify_add(r, VERIFY_STEP_ENV, 1, "policy_digest",
                   "policy differs: published %s (sha256 %s), re-run %s (sha256 %s)",
                   or_none(pub->policy_name), or_none(pub->policy_digest),
                   or_none(re->policy_name), or_none(re->policy_digest));
    else if (!str_eq(pub->policy_name, re->policy_name))
        verify_add(r, VERIFY_STEP_ENV, 0, "policy_path",
                   "the policy was read from another path (its content, sha256 %s, is the "
                   "same): published %s, re-run %s", or_none(pub->policy_digest),
                   or_none(pub->policy_name), or_none(re->policy_name));
    /* Packages before objects: another numpy is one line that explains the
     * dozens of its extension modules that differ with it. */
    compare_idents(pub->python, pub->npython, re->python, re->npython, "Python package",
                   "python_package", r);
    struct named *x = settings_named(pub->settings, pub->nsettings);
    struct named *y = settings_named(re->settings, re->nsettings);
    if (x && y)
        compare_named(x, pub->nsettings, y, re->nsettings, "setting", "setting", r);
    else
        r->nomem = 1;
    free(x);
    free(y);
    compare_processes_env(pub, re, r);
    if (pub->cpu.raw && re->cpu.raw && !same_flags(pub->cpu.isa, re->cpu.isa))
        verify_add(r, VERIFY_STEP_ENV, 1, "isa",
                   "the CPU's instruction sets differ: published %s, re-run %s; code detshim "
                   "does not make canonical (framework kernels, numpy's ufuncs, libm) picks its "
                   "path by them", or_none(pub->cpu.isa), or_none(re->cpu.isa));
    else if (!pub->cpu.raw != !re->cpu.raw)
        verify_add(r, VERIFY_STEP_ENV, 0, "cpu", "only the %s run recorded its CPU",
                   pub->cpu.raw ? "published" : "re-");
    compare_idents(pub->objects, pub->nobjects, re->objects, re->nobjects, "loaded object",
                   "object", r);
    note_if_differs(r, "cpu_model", "the CPU model", pub->cpu.model, re->cpu.model,
                    "cannot change bits where the instruction sets agree");
    if (pub->cpu.cores != re->cpu.cores && pub->cpu.raw && re->cpu.raw)
        verify_add(r, VERIFY_STEP_ENV, 0, "cores",
                   "the core count differs (canonical kernels give the same bits at any thread "
                   "count, and the policy pins the frameworks' threads): published %" PRId64
                   ", re-run %" PRId64, pub->cpu.cores, re->cpu.cores);
    note_if_differs(r, "host", "the host name", pub->host, re->host, "cannot change bits");
    note_if_differs(r, "cwd", "the working directory", pub->cwd, re->cwd,
                    "artifact paths are recorded relative to it");
}

/* ---- inputs and outputs -------------------------------------------- */

/* 1 if some entry of v has this path and this digest. */
static int path_has_sha(const struct attest_artifact *v, size_t n, const char *path,
                        const char *sha)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].path, path) && !strcmp(v[i].sha256, sha))
            return 1;
    return 0;
}

/* The first entry of v with this path / this digest, or NULL. */
static const struct attest_artifact *by_path(const struct attest_artifact *v, size_t n,
                                             const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].path, path))
            return &v[i];
    return NULL;
}

static const struct attest_artifact *by_sha(const struct attest_artifact *v, size_t n,
                                            const char *sha)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].sha256, sha))
            return &v[i];
    return NULL;
}

void verify_compare_inputs(const struct attest *pub, const struct attest *re,
                           struct verify_report *r)
{
    for (size_t i = 0; i < pub->ninputs; i++) {
        const struct attest_artifact *p = &pub->inputs[i], *q;
        if (i && !strcmp(p->path, pub->inputs[i - 1].path) &&
            !strcmp(p->sha256, pub->inputs[i - 1].sha256))
            continue; /* the same file read by another process */
        if ((q = by_path(re->inputs, re->ninputs, p->path))) {
            if (!path_has_sha(re->inputs, re->ninputs, p->path, p->sha256))
                verify_add(r, VERIFY_STEP_INPUTS, 1, "input_differs",
                           "input %s differs: published sha %s, re-run sha %s", p->path,
                           p->sha256, q->sha256);
        } else if ((q = by_sha(re->inputs, re->ninputs, p->sha256))) {
            verify_add(r, VERIFY_STEP_INPUTS, 0, "input_path",
                       "input %s was read as %s in the re-run (the same bytes, sha %s)",
                       p->path, q->path, p->sha256);
        } else {
            verify_add(r, VERIFY_STEP_INPUTS, 1, "input_missing",
                       "input %s (sha %s) was read by the published run, not by the re-run",
                       p->path, p->sha256);
        }
    }
    for (size_t i = 0; i < re->ninputs; i++) {
        const struct attest_artifact *q = &re->inputs[i];
        if (!by_path(pub->inputs, pub->ninputs, q->path) &&
            !by_sha(pub->inputs, pub->ninputs, q->sha256) &&
            !(i && !strcmp(q->path, re->inputs[i - 1].path)))
            verify_add(r, VERIFY_STEP_INPUTS, 1, "input_extra",
                       "the re-run read %s (sha %s), which the published run did not read",
                       q->path, q->sha256);
    }
}

/* 1 if a recorded path may be looked up under the published folder:
 * relative, without "..". */
static int safe_relative(const char *path)
{
    if (path[0] == '/' || !strcmp(path, ".."))
        return 0;
    return strncmp(path, "../", 3) != 0 && !strstr(path, "/../") &&
           !(strlen(path) >= 3 && !strcmp(path + strlen(path) - 3, "/.."));
}

int verify_hash_published(const struct attest *pub, const char *dir, struct verify_files *out)
{
    out->n = 0;
    out->v = calloc(pub->noutputs + 1, sizeof *out->v);
    if (!out->v)
        return -1;
    for (size_t i = 0; i < pub->noutputs; i++) {
        const struct attest_artifact *p = &pub->outputs[i];
        char err[512];
        int64_t size;
        if (!p->last || attest_output(pub, p->path) != p || !safe_relative(p->path))
            continue;
        struct verify_file *f = &out->v[out->n++];
        size_t len = strlen(dir) + strlen(p->path) + 2;
        f->path = strdup(p->path);
        if (!f->path || !(f->where = malloc(len)))
            return -1;
        snprintf(f->where, len, "%s/%s", dir, p->path);
        if (verify_is_file(f->where) &&
            verify_sha256_file(f->where, f->sha256, &size, err, sizeof err) != 0 &&
            !(f->error = strdup(err)))
            return -1;
    }
    return 0;
}

void verify_files_free(struct verify_files *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].path);
        free(f->v[i].where);
        free(f->v[i].error);
    }
    free(f->v);
    memset(f, 0, sizeof *f);
}

/* Compares the published file for p (hashed before the re-run) with the
 * re-run's record q (or, if the re-run did not write it, the published
 * record). Returns 1 if the file differs from the published record. */
static int compare_published_file(const struct verify_files *files,
                                  const struct attest_artifact *p,
                                  const struct attest_artifact *q, struct verify_report *r)
{
    const struct verify_file *f = NULL;
    for (size_t i = 0; i < files->n && !f; i++)
        if (!strcmp(files->v[i].path, p->path))
            f = &files->v[i];
    if (!f)
        return 0; /* not a path that may be looked up */
    if (f->error) {
        verify_add(r, VERIFY_STEP_OUTPUTS, 1, "unreadable", "%s", f->error);
        return 0;
    }
    if (!f->sha256[0]) {
        verify_add(r, VERIFY_STEP_OUTPUTS, 0, "no_published_file",
                   "no published file at %s; %s compared with the published record only",
                   f->where, p->path);
        return 0;
    }
    const char *want = q ? q->sha256 : p->sha256;
    if (!strcmp(f->sha256, p->sha256) && strcmp(p->sha256, want) != 0)
        return 0; /* the file is the published record, whose difference is said */
    if (strcmp(f->sha256, want) != 0)
        verify_add(r, VERIFY_STEP_OUTPUTS, 1, "published_file_differs",
                   "the published %s (sha %s) is not what the published workflow produces "
                   "(%s: sha %s)", p->path, f->sha256, q ? "re-run" : "published record", want);
    else
        verify_add(r, VERIFY_STEP_OUTPUTS, 0, "published_file_matches",
                   "the published file %s matches (sha %s)", f->where, f->sha256);
    return strcmp(f->sha256, p->sha256) != 0;
}

int verify_compare_outputs(const struct attest *pub, const struct attest *re,
                           const struct verify_files *files, struct verify_report *r)
{
    int outside = 0;
    for (size_t i = 0; i < pub->noutputs; i++) {
        const struct attest_artifact *p = &pub->outputs[i];
        if (!p->last || attest_output(pub, p->path) != p)
            continue; /* one check per path: its last write */
        const struct attest_artifact *q = attest_output(re, p->path);
        if (!q)
            verify_add(r, VERIFY_STEP_OUTPUTS, 1, "output_missing",
                       "the published run wrote %s (sha %s), the re-run did not", p->path,
                       p->sha256);
        else if (strcmp(p->sha256, q->sha256) != 0)
            verify_add(r, VERIFY_STEP_OUTPUTS, 1, "output_differs",
                       "the published %s (sha %s) is not what the published workflow produces "
                       "(re-run: sha %s)", p->path, p->sha256, q->sha256);
        if (files)
            outside |= compare_published_file(files, p, q, r);
    }
    for (size_t i = 0; i < re->noutputs; i++) {
        const struct attest_artifact *q = &re->outputs[i];
        if (q->last && attest_output(re, q->path) == q && !attest_output(pub, q->path))
            verify_add(r, VERIFY_STEP_OUTPUTS, 1, "output_extra",
                       "the re-run wrote %s (sha %s), which the published run did not", q->path,
                       q->sha256);
    }
    return outside;
}

/* ---- the trace ----------------------------------------------------- */

/* A process's name for messages, never NULL. */
static const char *pname(const detshim_process *p)
{
    return p && p->name ? p->name : "(unnamed)";
}

/* The path, name or package a record names, or NULL. */
static const char *record_path(const detshim_record *r)
{
    static const char *const keys[] = {"path", "name", "package"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        for (int i = 0; i < diff_nparams(r); i++)
            if (r->params[i].type == TRACE_PARAM_STR && r->params[i].name &&
                !strcmp(r->params[i].name, keys[k]))
                return r->params[i].v.s;
    return NULL;
}

/* Bits 31, 30 and 29 of a thread index mark the thread's entropy, identity
 * and real-entropy streams (trace_format.h); the rest is the thread. */
#define THREAD_STREAM_BITS (TRACE_THREAD_ENTROPY | TRACE_THREAD_IDENTITY | TRACE_THREAD_REAL)

/* One sentence for detdiff's first divergence, published run as A. */
static void describe_item(const struct diff_item *it, char *buf, size_t len)
{
    const char *proc = pname(it->pa ? it->pa : it->pb);
    const char *shorter = it->side == DIFF_SIDE_A ? "published run" : "re-run";
    const char *longer = it->side == DIFF_SIDE_A ? "re-run" : "published run";
    switch (it->kind) {
    case DIFF_MISSING_PROCESS:
        if (it->side == DIFF_SIDE_A)
            snprintf(buf, len, "the published run has process %s, which the re-run did not "
                     "start", proc);
        else
            snprintf(buf, len, "the re-run started process %s, which the published run did not",
                     proc);
        return;
    case DIFF_HEADER: {
        const char *field = it->field ? diff_field_name(it->field) : NULL;
        snprintf(buf, len, "process %s: header field %s differs", proc,
                 field ? field : "order");
        return;
    }
    case DIFF_MISSING_THREAD:
        snprintf(buf, len, "process %s: a thread of the %s has no partner in the other run", proc,
                 it->ta ? "published run" : "re-run");
        return;
    case DIFF_TRUNCATED:
        if (!it->ta && !it->tb) {
            snprintf(buf, len, "process %s: the %s's trace file is cut short", proc, shorter);
            return;
        }
        __attribute__((fallthrough));
    case DIFF_EXTRA_CALLS:
        snprintf(buf, len, "process %s: the %s makes %zu more call%s after record %zu; the %s's "
                 "%s", proc, longer, it->extra, it->extra == 1 ? "" : "s", it->index, shorter,
                 it->kind == DIFF_TRUNCATED ? "trace is cut short" : "stream ends there");
        return;
    case DIFF_DAMAGED:
        snprintf(buf, len, "process %s: the %s's trace is damaged (an end frame disagrees with "
                 "its records)", proc, shorter);
        return;
    case DIFF_ROOT:
    case DIFF_NONE:
        snprintf(buf, len, "the roots differ although every record matches");
        return;
    case DIFF_WINDOW: { /* summary traces: the window, as detdiff names it */
        uint32_t t = it->ta ? it->ta->index : it->tb ? it->tb->index : 0;
        snprintf(buf, len, "process %s, thread %" PRIu32 "%s, window %zu (records %zu..%zu): the "
                 "window digests differ (a summary trace; detcheck --bisect names the call)",
                 proc, t & ~THREAD_STREAM_BITS, t & TRACE_THREAD_ENTROPY ? " (entropy)" : "",
                 it->window, it->index, it->index + (it->extra ? it->extra - 1 : 0));
        return;
    }
    default: {
        const detshim_record *ra = it->ra;
        const char *api = ra && ra->api ? ra->api : "?";
        const char *path = ra ? record_path(ra) : NULL;
        uint32_t t = it->ta ? it->ta->index : 0;
        size_t n = (size_t)snprintf(buf, len, "process %s, thread %" PRIu32 "%s, record %zu (%s",
                                    proc, t & ~THREAD_STREAM_BITS,
                                    t & TRACE_THREAD_ENTROPY       ? " (entropy)"
                                    : t & TRACE_THREAD_IDENTITY ? " (identity)"
                                                              : "",
                                    it->index, api);
        /* An artifact or environment record differs in what it names, not
         * in how the program ran: say which file or library. */
        if (n < len && (!strncmp(api, "artifact.", 9) || !strncmp(api, "env.", 4)))
            snprintf(buf + n, len - n, " %s): the %s differs", path ? path : "?",
                     api[0] == 'a' ? "file's digest or path" : "identity or version");
        else if (n < len)
            snprintf(buf + n, len - n, "): %s", diff_kind_text(it->kind));
    }
    }
}

/* 1 if the item is the policy's path alone (the digests agree), which the
 * environment step already reported as a note. */
static int policy_path_only(const struct diff_item *it)
{
    if (it->kind != DIFF_HEADER || it->field != TRACE_FIELD_POLICY_NAME || !it->pa || !it->pb)
        return 0;
    const detshim_field *a = diff_compared_field(it->pa, TRACE_FIELD_POLICY_DIGEST);
    const detshim_field *b = diff_compared_field(it->pb, TRACE_FIELD_POLICY_DIGEST);
    return a && b && a->len == b->len && a->value && b->value &&
           !memcmp(a->value, b->value, a->len);
}

/* 1 if a stream of the run holds windows as digests only. */
static int run_summarized(const detshim_run *run)
{
    for (int i = 0; i < run->nprocesses; i++)
        for (int j = 0; j < run->processes[i].nthreads; j++)
            if (run->processes[i].threads[j].nsummary)
                return 1;
    return 0;
}

int verify_compare_trace(const detshim_run *pub_run, const struct attest *pub,
                         const detshim_run *re_run, const struct attest *re, int outside,
                         struct verify_report *r)
{
    if (!pub->complete)
        verify_add(r, VERIFY_STEP_TRACE, 1, "published_incomplete",
                   "the published run is incomplete (a trace file was cut short or damaged), so "
                   "its root commits to part of the run only");
    if (!pub_run) {
        if (strcmp(pub->root, re->root) == 0)
            verify_add(r, VERIFY_STEP_TRACE, 0, "root_matches",
                       "the re-run's root equals the published root %s (no published trace "
                       "here to compare call by call)", pub->root);
        else
            verify_add(r, VERIFY_STEP_TRACE, 1, "root_differs",
                       "the re-run's root %s differs from the published root %s; the "
                       "published trace is not here to say where: ask for it", re->root,
                       pub->root);
        return 0;
    }
    struct diff_result d = {0};
    struct diff_options opt = {0};
    if (diff_runs(pub_run, re_run, &opt, &d) != 0) {
        diff_result_free(&d);
        return -1;
    }
    const struct diff_item *first = NULL;
    for (size_t i = 0; i < d.nitems && !first; i++)
        if (!policy_path_only(&d.items[i]))
            first = &d.items[i];
    if (first) {
        char what[1024];
        describe_item(first, what, sizeof what);
        verify_add(r, VERIFY_STEP_TRACE, 1, "diverged",
                   "the re-run departs from the published trace: %s (detdiff shows the "
                   "details)", what);
    } else if (outside) {
        verify_add(r, VERIFY_STEP_TRACE, 0, "outside_run",
                   "the published trace matches the re-run, so the published weights were "
                   "produced outside the published run");
    } else {
        /* A summary trace holds window digests, not calls: say which. */
        int summary = run_summarized(pub_run) || (re_run && run_summarized(re_run));
        verify_add(r, VERIFY_STEP_TRACE, 0, "identical",
                   "the published trace matches the re-run %s (%zu records, %zu process%s)",
                   summary ? "window by window (a summary trace)" : "call by call", d.nrecords,
                   d.nprocesses, d.nprocesses == 1 ? "" : "es");
    }
    diff_result_free(&d);
    return 0;
}

void verify_settle_isa(struct verify_report *r)
{
    struct verify_finding *isa = NULL;
    int matched = 0;
    for (size_t i = 0; i < r->n; i++) {
        struct verify_finding *f = &r->items[i];
        if (f->fails && strcmp(f->kind, "isa") == 0)
            isa = f;
        else if (f->fails)
            return;
        else if (f->step == VERIFY_STEP_TRACE &&
                 (strcmp(f->kind, "identical") == 0 || strcmp(f->kind, "root_matches") == 0))
            matched = 1;
    }
    if (!isa || !matched)
        return;
    char *text;
    if (asprintf(&text, "%s, and on this CPU it gave the published trace and outputs bit for bit",
                 isa->text) < 0) {
        r->nomem = 1;
        return;
    }
    free(isa->text);
    isa->text = text;
    isa->fails = 0;
}

/* ---- segments ------------------------------------------------------ */

void verify_chain(const struct attest *segs, int n, struct verify_report *r)
{
    for (int k = 1; k < n; k++) {
        const struct attest *prev = &segs[k - 1], *cur = &segs[k];
        const struct attest_artifact *from = NULL, *wrong = NULL;
        for (size_t i = 0; i < cur->ninputs && !from; i++) {
            const struct attest_artifact *in = &cur->inputs[i];
            const struct attest_artifact *w = attest_output(prev, in->path);
            if (by_sha(prev->outputs, prev->noutputs, in->sha256))
                from = in;
            else if (w && !wrong)
                wrong = in;
        }
        if (from) {
            verify_add(r, VERIFY_STEP_CHAIN, 0, "chained",
                       "segment %d started from %s (sha %s), which segment %d wrote", k + 1,
                       from->path, from->sha256, k);
        } else if (wrong) {
            verify_add(r, VERIFY_STEP_CHAIN, 1, "chain_broken",
                       "segment %d started from %s sha %s, which segment %d did not write (it "
                       "wrote sha %s)", k + 1, wrong->path, wrong->sha256, k,
                       attest_output(prev, wrong->path)->sha256);
        } else {
            verify_add(r, VERIFY_STEP_CHAIN, 1, "chain_broken",
                       "segment %d read nothing that segment %d wrote, so it did not resume "
                       "from it (segment %d read %zu input%s, segment %d wrote %zu output%s)",
                       k + 1, k, k + 1, cur->ninputs, cur->ninputs == 1 ? "" : "s", k,
                       prev->noutputs, prev->noutputs == 1 ? "" : "s");
        }
    }
}
