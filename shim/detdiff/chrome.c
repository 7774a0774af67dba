/* detdiff --chrome-trace OUT.json: the two runs of a comparison written as
 * one file in the Trace Event format (its JSON object form,
 * {"traceEvents": [...]}), which Perfetto's UI (ui.perfetto.dev) and
 * chrome://tracing open, so that a user can look at two runs side by side
 * in a viewer they already have.
 *
 * The picture: one viewer process per traced process and run, named
 * "A: main" and "B: main" and sorted so that the two runs of a process sit
 * next to each other; one viewer thread per stream. The time axis is not
 * time: record N of a stream spans [N, N+1) microseconds, so that the two
 * runs line up record by record. Every difference the comparison found is
 * an instant event, on both sides, named "first divergence: <kind>" (or
 * "divergence" past the first), and its records are coloured. A stream
 * longer than CHROME_HEAD records keeps its first CHROME_HEAD records and
 * the CHROME_AROUND records on either side of each divergence; each gap is
 * one event that says how many records it leaves out, so that a 10^7-record
 * run still gives a file a viewer opens. The file is written beside OUT
 * under a temporary name and renamed, so OUT is never half written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "detdiff.h"

#define CHROME_HEAD 50000
#define CHROME_AROUND 1000

/* Where one side of one process sits in the viewer. */
struct chrome_proc {
    const detshim_process *p;
    int pid, sort, side;
};

struct chrome_out {
    FILE *f;
    const struct diff_result *r;
    int first; /* no event written yet: no comma before the next one */
    int io_error;
};

static void event_start(struct chrome_out *o)
{
    fputs(o->first ? "\n" : ",\n", o->f);
    o->first = 0;
}

/* A thread id for the viewer: the writer's index with its stream bits,
 * which are unique within a process. */
static long long tid_of(const detshim_thread *t)
{
    return (long long)t->index;
}

static void meta(struct chrome_out *o, const char *what, int pid, const detshim_thread *t,
                 const char *key, const char *name, long long number)
{
    event_start(o);
    fprintf(o->f, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d", what, pid);
    if (t)
        fprintf(o->f, ",\"tid\":%lld", tid_of(t));
    fprintf(o->f, ",\"args\":{\"%s\":", key);
    if (name)
        json_put(o->f, name);
    else
        fprintf(o->f, "%lld", number);
    fputs("}}", o->f);
}

/* The family a record belongs to, for the viewer's category: the api up
 * to its first '.' ("cuda", "rng", "artifact"), else "blas". */
static void put_category(FILE *f, const char *api)
{
    const char *dot = api ? strchr(api, '.') : NULL;
    if (dot)
        json_put_n(f, api, (size_t)(dot - api));
    else
        fputs("\"blas\"", f);
}

/* ,"PREFIX.NAME": as an args key (NAME NULL prints "?"). */
static void put_key(FILE *f, const char *prefix, const char *name)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", prefix, name ? name : "?");
    fputc(',', f);
    json_put(f, key);
    fputc(':', f);
}

/* The record's parameters, operand digests and notes as the event's args,
 * each name prefixed by its kind so that none can shadow another. */
static void put_args(FILE *f, const detshim_record *rec, size_t index)
{
    fprintf(f, "{\"record\":%zu,\"seq\":%" PRIu64, index, rec->seq);
    for (int i = 0; i < diff_nparams(rec); i++) {
        put_key(f, "param", rec->params[i].name);
        json_param_value(f, &rec->params[i]);
    }
    for (int i = 0; i < diff_noperands(rec); i++) {
        const detshim_operand *op = &rec->operands[i];
        char hex[33];
        digest_hex(op->digest, hex);
        put_key(f, role_name(op->role), op->name);
        fprintf(f, "\"%s (%" PRIu64 " x %u bytes)\"", hex, op->count, (unsigned)op->elem_size);
    }
    for (int i = 0; i < diff_nnotes(rec); i++) {
        put_key(f, "note", rec->notes[i].key);
        json_put(f, rec->notes[i].value);
    }
    fputc('}', f);
}

/* The divergences the comparison found in thread t of side `side`, as
 * record indices in ascending order (items of one thread come in record
 * order); returns their number, at most max. */
static size_t divergences(const struct diff_result *r, int side, const detshim_thread *t,
                          size_t *at, const struct diff_item **items, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nitems && n < max; i++) {
        const struct diff_item *it = &r->items[i];
        if ((side == DIFF_SIDE_A ? it->ta : it->tb) != t)
            continue;
        at[n] = it->index;
        items[n] = it;
        n++;
    }
    return n;
}

/* 1 if record `index` is drawn: in the head, or near a divergence. */
static int drawn(size_t index, const size_t *at, size_t nat)
{
    if (index < CHROME_HEAD)
        return 1;
    for (size_t i = 0; i < nat; i++)
        if (index + CHROME_AROUND >= at[i] && index <= at[i] + CHROME_AROUND)
            return 1;
    return 0;
}

static void gap(struct chrome_out *o, int pid, const detshim_thread *t, size_t from, size_t to)
{
    event_start(o);
    fprintf(o->f,
            "{\"name\":\"%zu records left out\",\"cat\":\"detdiff\",\"ph\":\"X\",\"ts\":%zu,"
            "\"dur\":%zu,\"pid\":%d,\"tid\":%lld,\"args\":{\"from\":%zu,\"to\":%zu}}",
            to - from, from, to - from, pid, tid_of(t), from, to - 1);
}

static void mark(struct chrome_out *o, int pid, const detshim_thread *t, size_t index,
                 const struct diff_item *it, int first)
{
    event_start(o);
    fprintf(o->f, "{\"name\":\"%s: %s\",\"cat\":\"detdiff\",\"ph\":\"i\",\"s\":\"t\","
                  "\"ts\":%zu,\"pid\":%d,\"tid\":%lld,\"args\":{\"kind\":\"%s\","
                  "\"explanation\":\"%s\",\"record\":%zu}}",
            first ? "first divergence" : "divergence", diff_kind_id(it->kind), index, pid,
            tid_of(t), diff_kind_id(it->kind), diff_kind_text(it->kind), index);
}

/* One stream's records as complete events, its divergences marked. */
static int thread_events(struct chrome_out *o, const struct chrome_proc *cp,
                         const detshim_thread *t)
{
    enum { MAX_MARKS = 4096 };
    static size_t at[MAX_MARKS];
    static const struct diff_item *items[MAX_MARKS];
    size_t nat = divergences(o->r, cp->side, t, at, items, MAX_MARKS);
    detshim_cursor *c = NULL;
    int rc = detshim_cursor_open(cp->p, t, &c);
    if (rc != 0)
        return rc;
    const detshim_record *rec;
    size_t index = 0, gap_from = 0, next_mark = 0;
    int in_gap = 0;
    while ((rc = detshim_cursor_next(c, &rec)) == 1) {
        if (!drawn(index, at, nat)) {
            if (!in_gap)
                gap_from = index;
            in_gap = 1;
            index++;
            continue;
        }
        if (in_gap)
            gap(o, cp->pid, t, gap_from, index);
        in_gap = 0;
        int marked = next_mark < nat && at[next_mark] == index;
        event_start(o);
        fputs("{\"name\":", o->f);
        json_put(o->f, rec->api);
        fputs(",\"cat\":", o->f);
        put_category(o->f, rec->api);
        fprintf(o->f, ",\"ph\":\"X\",\"ts\":%zu,\"dur\":1,\"pid\":%d,\"tid\":%lld,%s\"args\":",
                index, cp->pid, tid_of(t), marked ? "\"cname\":\"terrible\"," : "");
        put_args(o->f, rec, index);
        fputc('}', o->f);
        index++;
        while (next_mark < nat && at[next_mark] < index)
            next_mark++;
    }
    if (in_gap)
        gap(o, cp->pid, t, gap_from, index);
    /* Marks after the last record (a stream that ends early) included. */
    for (size_t i = 0; i < nat; i++)
        mark(o, cp->pid, t, at[i], items[i], i == 0);
    detshim_cursor_close(c);
    return rc < 0 ? rc : 0;
}

/* Process-level differences (a missing process, a header field, an
 * unreadable file) as one instant over the whole viewer process. */
static void process_marks(struct chrome_out *o, const struct chrome_proc *cp)
{
    for (size_t i = 0; i < o->r->nitems; i++) {
        const struct diff_item *it = &o->r->items[i];
        if (it->ta || it->tb || (cp->side == DIFF_SIDE_A ? it->pa : it->pb) != cp->p)
            continue;
        event_start(o);
        fprintf(o->f, "{\"name\":\"%s\",\"cat\":\"detdiff\",\"ph\":\"i\",\"s\":\"p\",\"ts\":0,"
                      "\"pid\":%d,\"tid\":0,\"args\":{\"kind\":\"%s\"",
                diff_kind_text(it->kind), cp->pid, diff_kind_id(it->kind));
        const char *field = it->kind == DIFF_HEADER ? diff_field_name(it->field) : NULL;
        if (field)
            fprintf(o->f, ",\"field\":\"%s\"", field);
        fputs("}}", o->f);
    }
}

static int process_events(struct chrome_out *o, const struct chrome_proc *cp)
{
    char label[512];
    snprintf(label, sizeof label, "%s: %s", side_name(cp->side), pname(cp->p));
    meta(o, "process_name", cp->pid, NULL, "name", label, 0);
    meta(o, "process_sort_index", cp->pid, NULL, "sort_index", NULL, cp->sort);
    process_marks(o, cp);
    for (int i = 0; i < cp->p->nthreads; i++) {
        const detshim_thread *t = &cp->p->threads[i];
        char name[96];
        snprintf(name, sizeof name, "thread " THREAD_FMT, THREAD_ARGS(t->index));
        meta(o, "thread_name", cp->pid, t, "name", name, 0);
        meta(o, "thread_sort_index", cp->pid, t, "sort_index", NULL, i);
        int rc = thread_events(o, cp, t);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The index of the process of run b named like p, or -1. */
static int find_named(const detshim_run *b, const detshim_process *p)
{
    for (int j = 0; j < b->nprocesses; j++)
        if (strcmp(pname(&b->processes[j]), pname(p)) == 0)
            return j;
    return -1;
}

static int write_all(struct chrome_out *o, const detshim_run *a, const detshim_run *b)
{
    fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"detdiff\",\"version\":\""
          DETSHIM_VERSION "\",\"timeline\":\"record N of a stream spans [N, N+1) "
          "microseconds\"},\"traceEvents\":[", o->f);
    o->first = 1;
    int na = a->nprocesses, rc = 0;
    for (int i = 0; i < na && rc == 0; i++) {
        struct chrome_proc cp = {&a->processes[i], 1 + i, 2 * i, DIFF_SIDE_A};
        rc = process_events(o, &cp);
    }
    for (int j = 0, loners = 0; j < b->nprocesses && rc == 0; j++) {
        int i = find_named(a, &b->processes[j]);
        struct chrome_proc cp = {&b->processes[j], 1 + na + j,
                                 i >= 0 ? 2 * i + 1 : 2 * na + loners++, DIFF_SIDE_B};
        rc = process_events(o, &cp);
    }
    fputs("\n]}\n", o->f);
    return rc;
}

int chrome_write(const char *out, const detshim_run *a, const detshim_run *b,
                 const struct diff_result *r, char *err, size_t errlen)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.detdiff-%ld.tmp", out, (long)getpid()) >= (int)sizeof tmp) {
        snprintf(err, errlen, "--chrome-trace %s: the path is too long; give a shorter one", out);
        return -1;
    }
    FILE *f = fopen(tmp, "wx");
    if (!f) {
        snprintf(err, errlen, "--chrome-trace %s: cannot create %s (%s); give a path in a "
                 "writable directory", out, tmp, strerror(errno));
        return -1;
    }
    struct chrome_out o = {.f = f, .r = r};
    int rc = write_all(&o, a, b);
    int werr = ferror(f) ? errno : 0;
    if (fclose(f) != 0 && !werr)
        werr = errno ? errno : EIO;
    if (rc == 0 && werr == 0 && rename(tmp, out) == 0)
        return 0;
    if (rc == 0 && werr == 0)
        werr = errno;
    unlink(tmp);
    if (rc != 0)
        snprintf(err, errlen, "--chrome-trace %s: a trace file no longer reads as it did when "
                 "opened; compare copies that nothing writes to", out);
    else
        snprintf(err, errlen, "--chrome-trace %s: cannot write it (%s); %s was left as it was; "
                 "free some space or give another path", out, strerror(werr), out);
    return -1;
}
