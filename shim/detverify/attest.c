/* The attestation in memory, from a trace and to and from JSON (attest.h).
 * From a trace: header fields give the versions, settings, command line
 * and CPU; the env.* and artifact.* records (chained like every record,
 * so the root commits them) give loaded objects, Python packages, inputs
 * and outputs. Lists are sorted and deduplicated, so the same run always
 * gives the same bytes whatever its processes' order.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "attest.h"
#include "diff.h"
#include "detshim/trace_format.h"
#include "json.h"

/* A malloc'd copy of s, or NULL when s is NULL (or out of memory). */
static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* 1 if s is 64 lowercase hex digits. */
static int is_sha256_hex(const char *s)
{
    if (!s || strlen(s) != 64)
        return 0;
    return strspn(s, "0123456789abcdef") == 64;
}

/* Grows an array of `size`-byte items to hold n + 1; returns 0 or -1. */
static int grow(void **items, size_t n, size_t size)
{
    if (n & (n - 1) && n) /* capacity doubles at powers of two */
        return 0;
    void *p = realloc(*items, (n ? n * 2 : 1) * size);
    if (!p)
        return -1;
    *items = p;
    return 0;
}

/* The parameter `name` of type `type` of r (pointing into the run), or NULL. */
static const detshim_param *param(const detshim_record *r, const char *name, uint8_t type)
{
    for (int i = 0; i < diff_nparams(r); i++)
        if (r->params[i].name && strcmp(r->params[i].name, name) == 0 &&
            r->params[i].type == type)
            return &r->params[i];
    return NULL;
}

/* The string parameter `name` of r (owned by the run), or NULL. */
static const char *param_str(const detshim_record *r, const char *name)
{
    const detshim_param *p = param(r, name, TRACE_PARAM_STR);
    return p ? p->v.s : NULL;
}

/* ---- from a trace -------------------------------------------------- */

/* The value of `name` in a "NAME<sep>value\n" block (sep '=' or ':'), as
 * a malloc'd string, or NULL. Origins are "NAME: who", so one space after
 * ':' is dropped. */
static char *block_value(const char *block, const char *name, size_t nlen, char sep)
{
    for (const char *s = block; s && *s;) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        if (n > nlen && memcmp(s, name, nlen) == 0 && s[nlen] == sep) {
            size_t skip = nlen + 1 + (sep == ':' && n > nlen + 1 && s[nlen + 1] == ' ');
            return strndup(s + skip, n - skip);
        }
        s += n + (nl ? 1 : 0);
    }
    return NULL;
}

/* Adds p's pinned and watched settings (field 11) with their origins
 * (field 12) to a, skipping name=value pairs already there. Returns 0, or
 * -1 out of memory. */
static int add_settings(struct attest *a, const detshim_process *p)
{
    const char *block = detshim_field_get(p, TRACE_FIELD_SETTINGS);
    const char *origins = detshim_field_get(p, TRACE_FIELD_SETTINGS_ORIGIN);
    for (const char *s = block; s && *s;) {
        const char *nl = strchr(s, '\n'), *eq;
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        eq = memchr(s, '=', n);
        if (eq) {
            size_t nlen = (size_t)(eq - s);
            char *name = strndup(s, nlen), *value = strndup(eq + 1, n - nlen - 1);
            int dup = 0;
            for (size_t i = 0; name && value && i < a->nsettings; i++)
                dup |= !strcmp(a->settings[i].name, name) && !strcmp(a->settings[i].value, value);
            if (!name || !value || dup || grow((void **)&a->settings, a->nsettings,
                                               sizeof *a->settings) != 0) {
                free(name);
                free(value);
                if (!dup)
                    return -1;
            } else {
                struct attest_setting *st = &a->settings[a->nsettings++];
                char *origin = block_value(origins, name, nlen, ':');
                st->name = name;
                st->value = value;
                st->origin = origin ? origin : strdup("");
                st->process = strdup(p->name ? p->name : "");
            }
        }
        s += n + (nl ? 1 : 0);
    }
    return 0;
}

/* Adds (name, id) to the list unless it is there. Returns 0, or -1 out
 * of memory (the list stays valid). */
static int add_ident(struct attest_ident **list, size_t *n, const char *name, const char *id)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*list)[i].name, name) && !strcmp((*list)[i].id, id))
            return 0;
    if (grow((void **)list, *n, sizeof **list) != 0)
        return -1;
    struct attest_ident *x = &(*list)[(*n)++];
    x->name = strdup(name);
    x->id = strdup(id);
    return x->name && x->id ? 0 : -1;
}

/* Adds an artifact; a write of the same path later in the same process
 * takes `last` from the earlier one. */
static int add_artifact(struct attest_artifact **list, size_t *n, const char *path, int64_t size,
                        const char *sha, const char *process, int output)
{
    for (size_t i = 0; output && i < *n; i++)
        if (!strcmp((*list)[i].path, path) && !strcmp((*list)[i].process, process))
            (*list)[i].last = 0;
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*list)[i].path, path) && !strcmp((*list)[i].process, process) &&
            !strcmp((*list)[i].sha256, sha)) {
            (*list)[i].last = output;
            return 0;
        }
    if (grow((void **)list, *n, sizeof **list) != 0)
        return -1;
    struct attest_artifact *x = &(*list)[(*n)++];
    x->path = strdup(path);
    x->sha256 = strdup(sha);
    x->process = strdup(process);
    x->size = size;
    x->last = output;
    return x->path && x->sha256 && x->process ? 0 : -1;
}

/* One env.* or artifact.* record; other records are not the attestation's
 * business. Returns 0, or -1 with err set. */
static int add_record(struct attest *a, const detshim_process *p, const detshim_thread *t,
                      const detshim_record *r, char *err, size_t errlen)
{
    const char *api = r->api ? r->api : "", *pn = p->name ? p->name : "";
    int rc = 0;
    if (!strcmp(api, "env.object") || !strcmp(api, "env.python")) {
        int obj = api[4] == 'o';
        const char *name = param_str(r, obj ? "name" : "package");
        const char *id = param_str(r, obj ? "id" : "version");
        if (!name || !id)
            goto bad;
        rc = obj ? add_ident(&a->objects, &a->nobjects, name, id)
                 : add_ident(&a->python, &a->npython, name, id);
    } else if (!strcmp(api, "artifact.write") || !strcmp(api, "artifact.read")) {
        int out = api[9] == 'w';
        const char *path = param_str(r, "path"), *sha = param_str(r, "sha256");
        const detshim_param *size = param(r, "size", TRACE_PARAM_INT);
        if (!path || !*path || !is_sha256_hex(sha) || !size || size->v.i < 0)
            goto bad;
        rc = out ? add_artifact(&a->outputs, &a->noutputs, path, size->v.i, sha, pn, 1)
                 : add_artifact(&a->inputs, &a->ninputs, path, size->v.i, sha, pn, 0);
    }
    if (rc)
        snprintf(err, errlen, "out of memory while reading %s", p->path);
    return rc;
bad:
    snprintf(err, errlen, "%s: thread %" PRIu32 " record %" PRIu64 " (%.20s) lacks its path, "
             "size, sha256, name, id or version; the trace was written by another detshim or "
             "altered", p->path, t->index & ~TRACE_THREAD_ENTROPY, r->seq, api);
    return -1;
}

/* Adds the env.* and artifact.* records of t, read through a cursor: the
 * run is opened, not loaded, because a run's calls may be gigabytes
 * (scikit-learn's tests wrote 15 GB, and loading them took 24 GB of
 * memory). The writer puts these records in identity streams; every
 * stream is read, as the format does not forbid them elsewhere. Returns
 * 0, or -1 with err set. */
static int add_identity_records(struct attest *a, const detshim_process *p,
                                const detshim_thread *t, char *err, size_t errlen)
{
    detshim_cursor *c;
    const detshim_record *r;
    int rc = detshim_cursor_open(p, t, &c), bad = 0;
    if (rc == 0) {
        while (!bad && (rc = detshim_cursor_next(c, &r)) == 1)
            bad = add_record(a, p, t, r, err, errlen) != 0;
        detshim_cursor_close(c);
    }
    if (bad)
        return -1;
    if (rc == 0)
        return 0;
    snprintf(err, errlen, "%s: cannot read the records of thread %" PRIu32 " again (error %d): "
             "the file changed or went away while it was read; attest a trace no program is "
             "writing", p->path, t->index & ~(TRACE_THREAD_IDENTITY | TRACE_THREAD_ENTROPY), rc);
    return -1;
}

/* Fills c from header field 17 ("model=...;isa=...;cores=N"); raw may
 * be NULL (no CPU recorded). Fields it cannot find stay NULL / -1. */
static void parse_cpu(struct attest_cpu *c, const char *raw)
{
    c->cores = -1;
    if (!raw)
        return;
    c->raw = strdup(raw);
    for (const char *s = raw; *s;) {
        const char *semi = strchr(s, ';');
        size_t n = semi ? (size_t)(semi - s) : strlen(s);
        if (n > 6 && !strncmp(s, "model=", 6) && !c->model)
            c->model = strndup(s + 6, n - 6);
        else if (n >= 4 && !strncmp(s, "isa=", 4) && !c->isa)
            c->isa = strndup(s + 4, n - 4);
        else if (n > 6 && !strncmp(s, "cores=", 6))
            c->cores = strtoll(s + 6, NULL, 10);
        s += n + (semi ? 1 : 0);
    }
}

/* NULL if p's file is whole and every end frame agrees with its records,
 * else why not: the reader's reason (the writer's own, such as a reached
 * max_bytes, when it marked the file). */
static const char *process_incomplete(const detshim_process *p)
{
    static const char marked[] = "the writer marked it incomplete: ";
    if (p->truncated && !strncmp(p->trouble, marked, sizeof marked - 1))
        return p->trouble + sizeof marked - 1; /* the writer's reason, as it said it */
    if (p->truncated)
        return p->trouble[0] ? p->trouble : "the file is cut short";
    for (int t = 0; t < p->nthreads; t++)
        if (p->threads[t].end_seen && !p->threads[t].end_matches)
            return "a thread's end frame disagrees with its records (damaged)";
    return NULL;
}

/* qsort orders: by name, then value (settings and identities), by path,
 * process, then digest (artifacts). */
static int cmp_setting(const void *x, const void *y)
{
    const struct attest_setting *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(a->value, b->value);
}

static int cmp_ident(const void *x, const void *y)
{
    const struct attest_ident *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(a->id, b->id);
}

static int cmp_artifact(const void *x, const void *y)
{
    const struct attest_artifact *a = x, *b = y;
    int c = strcmp(a->path, b->path);
    if (!c)
        c = strcmp(a->process, b->process);
    return c ? c : strcmp(a->sha256, b->sha256);
}

/* qsort, but an empty list may be NULL (qsort's pointer must not be). */
static void sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(v, n, size, cmp);
}

/* Sorts every list of a into the documented order. */
static void sort_lists(struct attest *a)
{
    sort(a->settings, a->nsettings, sizeof *a->settings, cmp_setting);
    sort(a->objects, a->nobjects, sizeof *a->objects, cmp_ident);
    sort(a->python, a->npython, sizeof *a->python, cmp_ident);
    sort(a->inputs, a->ninputs, sizeof *a->inputs, cmp_artifact);
    sort(a->outputs, a->noutputs, sizeof *a->outputs, cmp_artifact);
}

int attest_from_run(const detshim_run *run, const char *cwd, struct attest *a, char *err,
                    size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->cpu.cores = -1;
    if (run->nprocesses < 1) {
        snprintf(err, errlen, "the run has no process");
        return -1;
    }
    /* The run's first process is the one with the shortest name: "main"
     * before "main.f1", "rank0" before "rank0.f2". */
    const detshim_process *first = &run->processes[0];
    for (int i = 1; i < run->nprocesses; i++)
        if (strlen(run->processes[i].name ? run->processes[i].name : "") <
            strlen(first->name ? first->name : ""))
            first = &run->processes[i];
    a->shim_version = dup_or_null(detshim_field_get(first, TRACE_FIELD_SHIM_VERSION));
    a->trace_format = TRACE_VERSION;
    detshim_hex32(run->root, a->root);
    a->policy_name = dup_or_null(detshim_field_get(first, TRACE_FIELD_POLICY_NAME));
    a->policy_digest = dup_or_null(detshim_field_get(first, TRACE_FIELD_POLICY_DIGEST));
    a->command = dup_or_null(detshim_field_get(first, TRACE_FIELD_ARGS));
    a->host = dup_or_null(detshim_field_get(first, TRACE_FIELD_HOST));
    a->cwd = dup_or_null(cwd);
    parse_cpu(&a->cpu, detshim_field_get(first, TRACE_FIELD_CPU));
    a->processes = calloc((size_t)run->nprocesses, sizeof *a->processes);
    if (!a->processes)
        goto nomem;
    a->complete = 1;
    for (int i = 0; i < run->nprocesses; i++) {
        const detshim_process *p = &run->processes[i];
        struct attest_process *ap = &a->processes[a->nprocesses++];
        ap->name = strdup(p->name ? p->name : "");
        ap->program = dup_or_null(p->program);
        ap->args = dup_or_null(detshim_field_get(p, TRACE_FIELD_ARGS));
        ap->seed = dup_or_null(detshim_field_get(p, TRACE_FIELD_SEED));
        ap->entropy_rule = dup_or_null(detshim_field_get(p, TRACE_FIELD_ENTROPY_RULE));
        detshim_hex32(p->root, ap->root);
        ap->records = diff_process_records(p);
        const char *why = process_incomplete(p);
        ap->complete = !why;
        if (why && !(ap->incomplete = strdup(why)))
            goto nomem;
        a->complete &= ap->complete;
        if (add_settings(a, p) != 0)
            goto nomem;
        for (int t = 0; t < p->nthreads; t++)
            if (add_identity_records(a, p, &p->threads[t], err, errlen))
                return -1;
    }
    sort_lists(a);
    return 0;
nomem:
    snprintf(err, errlen, "out of memory while gathering the attestation");
    return -1;
}

/* ---- JSON out ------------------------------------------------------ */

/* Writes `"key": value` (null for NULL) and a comma when `comma`. */
static void put_kv(FILE *f, const char *indent, const char *key, const char *value, int comma)
{
    fprintf(f, "%s\"%s\": ", indent, key);
    verify_json_put(f, value);
    fputs(comma ? ",\n" : "\n", f);
}

/* Writes the array `key` of artifacts, one per line; `output` adds
 * "last". */
static void put_artifacts(FILE *f, const char *key, const struct attest_artifact *v, size_t n,
                          int output)
{
    fprintf(f, "  \"%s\": [", key);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n    {\"path\": " : "\n    {\"path\": ", f);
        verify_json_put(f, v[i].path);
        fprintf(f, ", \"size\": %" PRId64 ", \"sha256\": \"%s\", \"process\": ", v[i].size,
                v[i].sha256);
        verify_json_put(f, v[i].process);
        if (output)
            fprintf(f, ", \"last\": %s", v[i].last ? "true" : "false");
        fputc('}', f);
    }
    fputs(n ? "\n  ],\n" : "],\n", f);
}

/* Writes the array `key` of identities as {k1: name, k2: id}. */
static void put_idents(FILE *f, const char *key, const char *k1, const char *k2,
                       const struct attest_ident *v, size_t n)
{
    fprintf(f, "  \"%s\": [", key);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s    {\"%s\": ", i ? ",\n" : "\n", k1);
        verify_json_put(f, v[i].name);
        fprintf(f, ", \"%s\": ", k2);
        verify_json_put(f, v[i].id);
        fputc('}', f);
    }
    fputs(n ? "\n  ],\n" : "],\n", f);
}

int attest_write(FILE *f, const struct attest *a)
{
    fprintf(f, "{\n  \"schema\": \"%s\",\n", ATTEST_SCHEMA);
    put_kv(f, "  ", "detshim_version", a->shim_version, 1);
    fprintf(f, "  \"trace_format\": %" PRId64 ",\n  \"root\": \"%s\",\n  \"complete\": %s,\n",
            a->trace_format, a->root, a->complete ? "true" : "false");
    fputs("  \"policy\": {\n", f);
    put_kv(f, "    ", "name", a->policy_name, 1);
    put_kv(f, "    ", "digest", a->policy_digest, 1);
    fputs("    \"files\": [", f);
    for (int i = 0; i < a->npolicy_files; i++) {
        const struct attest_policy_file *pf = &a->policy_files[i];
        fputs(i ? ",\n      {\"name\": " : "\n      {\"name\": ", f);
        verify_json_put(f, pf->name);
        fprintf(f, ", \"sha256\": \"%s\", \"text\": ", pf->sha256);
        verify_json_put_n(f, pf->text, pf->len);
        fputc('}', f);
    }
    fputs(a->npolicy_files ? "\n    ]\n  },\n" : "]\n  },\n", f);
    fputs("  \"settings\": [", f);
    for (size_t i = 0; i < a->nsettings; i++) {
        const struct attest_setting *s = &a->settings[i];
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
        verify_json_put(f, s->name);
        fputs(", \"value\": ", f);
        verify_json_put(f, s->value);
        fputs(", \"origin\": ", f);
        verify_json_put(f, s->origin);
        fputs(", \"process\": ", f);
        verify_json_put(f, s->process);
        fputc('}', f);
    }
    fputs(a->nsettings ? "\n  ],\n" : "],\n", f);
    put_kv(f, "  ", "command", a->command, 1);
    put_kv(f, "  ", "host", a->host, 1);
    put_kv(f, "  ", "cwd", a->cwd, 1);
    if (a->cpu.raw) {
        fputs("  \"cpu\": {\"model\": ", f);
        verify_json_put(f, a->cpu.model);
        fputs(", \"isa\": ", f);
        verify_json_put(f, a->cpu.isa);
        fprintf(f, ", \"cores\": %" PRId64 ", \"raw\": ", a->cpu.cores);
        verify_json_put(f, a->cpu.raw);
        fputs("},\n", f);
    } else {
        fputs("  \"cpu\": null,\n", f);
    }
    put_idents(f, "objects", "name", "id", a->objects, a->nobjects);
    put_idents(f, "python", "package", "version", a->python, a->npython);
    put_artifacts(f, "inputs", a->inputs, a->ninputs, 0);
    put_artifacts(f, "outputs", a->outputs, a->noutputs, 1);
    fputs("  \"processes\": [", f);
    for (size_t i = 0; i < a->nprocesses; i++) {
        const struct attest_process *p = &a->processes[i];
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
        verify_json_put(f, p->name);
        fputs(", \"program\": ", f);
        verify_json_put(f, p->program);
        fputs(", \"args\": ", f);
        verify_json_put(f, p->args);
        fprintf(f, ", \"root\": \"%s\", \"records\": %" PRIu64 ", \"complete\": %s, \"seed\": ",
                p->root, p->records, p->complete ? "true" : "false");
        verify_json_put(f, p->seed);
        fputs(", \"entropy_rule\": ", f);
        verify_json_put(f, p->entropy_rule);
        fputc('}', f);
    }
    fputs(a->nprocesses ? "\n  ]\n}\n" : "]\n}\n", f);
    return ferror(f) ? -1 : 0;
}

/* ---- JSON in ------------------------------------------------------- */

struct reader {
    char *err;
    size_t errlen;
};

/* Copies member `key` of `o` into *out: a string, or null / absent where
 * `optional`. Returns 0, or -1 with err naming `where` and the key. */
static int get_str(struct reader *rd, const struct verify_json *o, const char *where,
                   const char *key, int optional, char **out)
{
    const struct verify_json *v = verify_json_get(o, key);
    *out = NULL;
    if ((!v || v->type == VERIFY_JSON_NULL) && optional)
        return 0;
    if (!v || v->type != VERIFY_JSON_STRING) {
        snprintf(rd->err, rd->errlen, "%s: \"%s\" is %s; expected a string", where, key,
                 v ? "not a string" : "missing");
        return -1;
    }
    if (!(*out = strndup(v->str, v->len))) {
        snprintf(rd->err, rd->errlen, "out of memory");
        return -1;
    }
    return 0;
}

/* As get_str, and the string must be a SHA-256 in hex. Returns 0 or -1. */
static int get_sha(struct reader *rd, const struct verify_json *o, const char *where,
                   const char *key, char **out)
{
    if (get_str(rd, o, where, key, 0, out) != 0)
        return -1;
    if (is_sha256_hex(*out))
        return 0;
    snprintf(rd->err, rd->errlen, "%s: \"%s\" is not 64 lowercase hex digits", where, key);
    return -1;
}

/* Sets *out from boolean member `key`. Returns 0, or -1 with err set. */
static int get_bool(struct reader *rd, const struct verify_json *o, const char *where,
                    const char *key, int *out)
{
    const struct verify_json *v = verify_json_get(o, key);
    if (v && (v->type == VERIFY_JSON_TRUE || v->type == VERIFY_JSON_FALSE)) {
        *out = v->type == VERIFY_JSON_TRUE;
        return 0;
    }
    snprintf(rd->err, rd->errlen, "%s: \"%s\" is %s; expected true or false", where, key,
             v ? "not a boolean" : "missing");
    return -1;
}

/* Sets *out from integer member `key`. Returns 0, or -1 with err set. */
static int get_int(struct reader *rd, const struct verify_json *o, const char *where,
                   const char *key, int64_t *out)
{
    if (verify_json_get_int(o, key, out) == 0)
        return 0;
    snprintf(rd->err, rd->errlen, "%s: \"%s\" is %s; expected an integer", where, key,
             verify_json_get(o, key) ? "not an integer" : "missing");
    return -1;
}

/* The array `key` of `o`: returns it, or NULL with err set. */
static const struct verify_json *get_array(struct reader *rd, const struct verify_json *o,
                                           const char *where, const char *key)
{
    const struct verify_json *v = verify_json_get(o, key);
    if (v && v->type == VERIFY_JSON_ARRAY)
        return v;
    snprintf(rd->err, rd->errlen, "%s: \"%s\" is %s; expected an array", where, key,
             v ? "not an array" : "missing");
    return NULL;
}

/* Reads the artifact array `key` into a new *out (owned by the
 * attestation). Returns 0, or -1 with err naming the entry. */
static int read_artifacts(struct reader *rd, const struct verify_json *root, const char *key,
                          struct attest_artifact **out, size_t *n, int output)
{
    const struct verify_json *arr = get_array(rd, root, "attestation", key);
    if (!arr || !(*out = calloc(arr->n + 1, sizeof **out)))
        return -1;
    for (size_t i = 0; i < arr->n; i++) {
        const struct verify_json *o = arr->items[i];
        struct attest_artifact *x = &(*out)[(*n)++];
        char where[40];
        snprintf(where, sizeof where, "%s[%zu]", key, i);
        if (get_str(rd, o, where, "path", 0, &x->path) ||
            get_sha(rd, o, where, "sha256", &x->sha256) ||
            get_str(rd, o, where, "process", 0, &x->process) ||
            get_int(rd, o, where, "size", &x->size) ||
            (output && get_bool(rd, o, where, "last", &x->last)))
            return -1;
    }
    return 0;
}

/* Reads the identity array `key` ({k1, k2} objects) into a new *out.
 * Returns 0, or -1 with err naming the entry. */
static int read_idents(struct reader *rd, const struct verify_json *root, const char *key,
                       const char *k1, const char *k2, struct attest_ident **out, size_t *n)
{
    const struct verify_json *arr = get_array(rd, root, "attestation", key);
    if (!arr || !(*out = calloc(arr->n + 1, sizeof **out)))
        return -1;
    for (size_t i = 0; i < arr->n; i++) {
        char where[40];
        snprintf(where, sizeof where, "%s[%zu]", key, i);
        struct attest_ident *x = &(*out)[(*n)++];
        if (get_str(rd, arr->items[i], where, k1, 0, &x->name) ||
            get_str(rd, arr->items[i], where, k2, 0, &x->id))
            return -1;
    }
    return 0;
}

/* Reads "policy" into a. Returns 0, or -1 with err set. */
static int read_policy(struct reader *rd, const struct verify_json *root, struct attest *a)
{
    const struct verify_json *pol = verify_json_get(root, "policy"), *files;
    if (!pol || pol->type != VERIFY_JSON_OBJECT) {
        snprintf(rd->err, rd->errlen, "attestation: \"policy\" is missing or not an object");
        return -1;
    }
    if (get_str(rd, pol, "policy", "name", 0, &a->policy_name) ||
        get_sha(rd, pol, "policy", "digest", &a->policy_digest) ||
        !(files = get_array(rd, pol, "policy", "files")))
        return -1;
    if (files->n > ATTEST_MAX_POLICY_FILES) {
        snprintf(rd->err, rd->errlen, "policy: %zu files; a policy has at most %d", files->n,
                 ATTEST_MAX_POLICY_FILES);
        return -1;
    }
    for (size_t i = 0; i < files->n; i++) {
        struct attest_policy_file *pf = &a->policy_files[a->npolicy_files++];
        const struct verify_json *t = verify_json_get(files->items[i], "text");
        if (get_str(rd, files->items[i], "policy.files", "name", 0, &pf->name) ||
            get_sha(rd, files->items[i], "policy.files", "sha256", &pf->sha256) ||
            get_str(rd, files->items[i], "policy.files", "text", 0, &pf->text))
            return -1;
        pf->len = t->len;
    }
    return 0;
}

/* Reads "settings" into a. Returns 0, or -1 with err set. */
static int read_settings(struct reader *rd, const struct verify_json *root, struct attest *a)
{
    const struct verify_json *arr = get_array(rd, root, "attestation", "settings");
    if (!arr || !(a->settings = calloc(arr->n + 1, sizeof *a->settings)))
        return -1;
    for (size_t i = 0; i < arr->n; i++) {
        struct attest_setting *s = &a->settings[a->nsettings++];
        const struct verify_json *o = arr->items[i];
        if (get_str(rd, o, "settings", "name", 0, &s->name) ||
            get_str(rd, o, "settings", "value", 0, &s->value) ||
            get_str(rd, o, "settings", "origin", 0, &s->origin) ||
            get_str(rd, o, "settings", "process", 0, &s->process))
            return -1;
    }
    return 0;
}

/* Reads "processes" into a. Returns 0, or -1 with err set. */
static int read_processes(struct reader *rd, const struct verify_json *root, struct attest *a)
{
    const struct verify_json *arr = get_array(rd, root, "attestation", "processes");
    if (!arr || !(a->processes = calloc(arr->n + 1, sizeof *a->processes)))
        return -1;
    for (size_t i = 0; i < arr->n; i++) {
        struct attest_process *p = &a->processes[a->nprocesses++];
        const struct verify_json *o = arr->items[i];
        char *root_hex = NULL;
        int64_t records = 0;
        int rc = get_str(rd, o, "processes", "name", 0, &p->name) ||
                 get_str(rd, o, "processes", "program", 1, &p->program) ||
                 get_str(rd, o, "processes", "args", 1, &p->args) ||
                 get_str(rd, o, "processes", "seed", 1, &p->seed) ||
                 get_str(rd, o, "processes", "entropy_rule", 1, &p->entropy_rule) ||
                 get_sha(rd, o, "processes", "root", &root_hex) ||
                 get_int(rd, o, "processes", "records", &records) ||
                 get_bool(rd, o, "processes", "complete", &p->complete);
        if (root_hex)
            memcpy(p->root, root_hex, 65);
        free(root_hex);
        p->records = (uint64_t)records;
        if (rc)
            return -1;
    }
    return 0;
}

/* Reads "cpu" (an object or null) into a. Returns 0, or -1 with err set. */
static int read_cpu(struct reader *rd, const struct verify_json *root, struct attest *a)
{
    const struct verify_json *cpu = verify_json_get(root, "cpu");
    a->cpu.cores = -1;
    if (!cpu || cpu->type == VERIFY_JSON_NULL)
        return 0;
    return get_str(rd, cpu, "cpu", "model", 1, &a->cpu.model) ||
                   get_str(rd, cpu, "cpu", "isa", 1, &a->cpu.isa) ||
                   get_str(rd, cpu, "cpu", "raw", 0, &a->cpu.raw) ||
                   get_int(rd, cpu, "cpu", "cores", &a->cpu.cores)
               ? -1
               : 0;
}

int attest_read(const char *text, size_t len, struct attest *a, char *err, size_t errlen)
{
    struct reader rd = {err, errlen};
    char *schema = NULL, *root_hex = NULL;
    memset(a, 0, sizeof *a);
    struct verify_json *root = verify_json_parse(text, len, err, errlen);
    if (!root)
        return -1;
    int rc = -1;
    if (root->type != VERIFY_JSON_OBJECT) {
        snprintf(err, errlen, "not a JSON object");
        goto out;
    }
    if (get_str(&rd, root, "attestation", "schema", 0, &schema))
        goto out;
    if (strcmp(schema, ATTEST_SCHEMA) != 0) {
        snprintf(err, errlen, "schema \"%.60s\" is not %s; use the detverify of the detshim "
                 "that wrote it", schema, ATTEST_SCHEMA);
        goto out;
    }
    if (get_str(&rd, root, "attestation", "detshim_version", 1, &a->shim_version) ||
        get_int(&rd, root, "attestation", "trace_format", &a->trace_format) ||
        get_sha(&rd, root, "attestation", "root", &root_hex) ||
        get_bool(&rd, root, "attestation", "complete", &a->complete) ||
        read_policy(&rd, root, a) || read_settings(&rd, root, a) ||
        get_str(&rd, root, "attestation", "command", 1, &a->command) ||
        get_str(&rd, root, "attestation", "host", 1, &a->host) ||
        get_str(&rd, root, "attestation", "cwd", 1, &a->cwd) || read_cpu(&rd, root, a) ||
        read_idents(&rd, root, "objects", "name", "id", &a->objects, &a->nobjects) ||
        read_idents(&rd, root, "python", "package", "version", &a->python, &a->npython) ||
        read_artifacts(&rd, root, "inputs", &a->inputs, &a->ninputs, 0) ||
        read_artifacts(&rd, root, "outputs", &a->outputs, &a->noutputs, 1) ||
        read_processes(&rd, root, a))
        goto out;
    memcpy(a->root, root_hex, 65);
    /* A hand-edited file may list things in any order; comparisons assume
     * the writer's. */
    sort_lists(a);
    rc = 0;
out:
    if (rc && !err[0])
        snprintf(err, errlen, "out of memory");
    free(schema);
    free(root_hex);
    verify_json_free(root);
    return rc;
}

const struct attest_artifact *attest_output(const struct attest *a, const char *path)
{
    for (size_t i = 0; i < a->noutputs; i++)
        if (a->outputs[i].last && !strcmp(a->outputs[i].path, path))
            return &a->outputs[i];
    return NULL;
}

void attest_free(struct attest *a)
{
    free(a->shim_version);
    free(a->policy_name);
    free(a->policy_digest);
    for (int i = 0; i < a->npolicy_files; i++) {
        free(a->policy_files[i].name);
        free(a->policy_files[i].sha256);
        free(a->policy_files[i].text);
    }
    free(a->command);
    free(a->host);
    free(a->cwd);
    free(a->cpu.raw);
    free(a->cpu.model);
    free(a->cpu.isa);
    for (size_t i = 0; i < a->nsettings; i++) {
        free(a->settings[i].name);
        free(a->settings[i].value);
        free(a->settings[i].origin);
        free(a->settings[i].process);
    }
    free(a->settings);
    for (size_t i = 0; i < a->nobjects; i++) {
        free(a->objects[i].name);
        free(a->objects[i].id);
    }
    free(a->objects);
    for (size_t i = 0; i < a->npython; i++) {
        free(a->python[i].name);
        free(a->python[i].id);
    }
    free(a->python);
    for (size_t i = 0; i < a->ninputs; i++) {
        free(a->inputs[i].path);
        free(a->inputs[i].sha256);
        free(a->inputs[i].process);
    }
    free(a->inputs);
    for (size_t i = 0; i < a->noutputs; i++) {
        free(a->outputs[i].path);
        free(a->outputs[i].sha256);
        free(a->outputs[i].process);
    }
    free(a->outputs);
    for (size_t i = 0; i < a->nprocesses; i++) {
        free(a->processes[i].name);
        free(a->processes[i].program);
        free(a->processes[i].args);
        free(a->processes[i].seed);
        free(a->processes[i].entropy_rule);
        free(a->processes[i].incomplete);
    }
    free(a->processes);
    memset(a, 0, sizeof *a);
}
