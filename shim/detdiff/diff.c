/* Comparison of two loaded runs, the heart of detdiff: processes pair by
 * name, threads by content (so start order never shows), records by index.
 * Each difference becomes a diff_item carrying its classification and
 * pointers into the runs; text.c and json.c turn items into output. Runs read
 * from damaged or hostile files reach this code, so every count is clamped
 * and every string may be NULL.
 */
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "detshim/trace_format.h"

/* A count is trusted only with the array it counts. */
static int safe_count(int n, const void *array)
{
    return n > 0 && array ? n : 0;
}

int diff_nparams(const detshim_record *r)
{
    return safe_count(r->nparams, r->params);
}

int diff_noperands(const detshim_record *r)
{
    return safe_count(r->noperands, r->operands);
}

int diff_nframes(const detshim_record *r)
{
    return safe_count(r->nframes, r->frames);
}

int diff_nnotes(const detshim_record *r)
{
    return safe_count(r->nnotes, r->notes);
}

/* String equality where NULL equals only NULL. */
static int str_eq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

/* Names compare with NULL as "", so a nameless process still sorts. */
static const char *name_of(const detshim_process *p)
{
    return p && p->name ? p->name : "";
}

static int digest_eq(detshim_digest a, detshim_digest b)
{
    return a.lo == b.lo && a.hi == b.hi;
}

static int has_digest(const detshim_record *r)
{
    static const uint8_t zero[sizeof r->digest];
    return memcmp(r->digest, zero, sizeof zero) != 0;
}

int diff_param_equal(const detshim_param *a, const detshim_param *b)
{
    if (!str_eq(a->name, b->name) || a->type != b->type)
        return 0;
    switch (a->type) {
    case TRACE_PARAM_INT:
        return a->v.i == b->v.i;
    case TRACE_PARAM_CHAR:
        return a->v.c == b->v.c;
    case TRACE_PARAM_F32:
    case TRACE_PARAM_F64:
        /* Bits, not ==: -0.0 and 0.0 are different inputs, NaN equals its
         * own bits. */
        return memcmp(&a->v.f, &b->v.f, sizeof a->v.f) == 0;
    case TRACE_PARAM_C64:
    case TRACE_PARAM_C128:
        return memcmp(a->v.z, b->v.z, sizeof a->v.z) == 0;
    case TRACE_PARAM_STR:
        return str_eq(a->v.s, b->v.s);
    default:
        return 1; /* an unknown type carries no value we could compare */
    }
}

int diff_params_equal(const detshim_record *a, const detshim_record *b)
{
    int n = diff_nparams(a);
    if (n != diff_nparams(b))
        return 0;
    for (int i = 0; i < n; i++)
        if (!diff_param_equal(&a->params[i], &b->params[i]))
            return 0;
    return 1;
}

int diff_operand_layout_equal(const detshim_operand *a, const detshim_operand *b)
{
    return str_eq(a->name, b->name) && a->role == b->role &&
           a->elem_size == b->elem_size && a->count == b->count;
}

static int operand_layouts_equal(const detshim_record *a, const detshim_record *b)
{
    int n = diff_noperands(a);
    if (n != diff_noperands(b))
        return 0;
    for (int i = 0; i < n; i++)
        if (!diff_operand_layout_equal(&a->operands[i], &b->operands[i]))
            return 0;
    return 1;
}

/* 1 if every operand of `role` has the same digest in both records; the
 * layouts must already be equal. */
static int role_digests_equal(const detshim_record *a, const detshim_record *b, int role)
{
    int n = diff_noperands(a);
    for (int i = 0; i < n; i++)
        if (a->operands[i].role == role &&
            !digest_eq(a->operands[i].digest, b->operands[i].digest))
            return 0;
    return 1;
}

static int all_digests_equal(const detshim_record *a, const detshim_record *b)
{
    int n = diff_noperands(a);
    for (int i = 0; i < n; i++)
        if (!digest_eq(a->operands[i].digest, b->operands[i].digest))
            return 0;
    return 1;
}

int diff_notes_equal(const detshim_record *a, const detshim_record *b)
{
    int n = diff_nnotes(a);
    if (n != diff_nnotes(b))
        return 0;
    for (int i = 0; i < n; i++)
        if (!str_eq(a->notes[i].key, b->notes[i].key) ||
            !str_eq(a->notes[i].value, b->notes[i].value))
            return 0;
    return 1;
}

int diff_sites_equal(const detshim_record *a, const detshim_record *b)
{
    int n = diff_nframes(a);
    if (n != diff_nframes(b))
        return 0;
    for (int i = 0; i < n; i++)
        if (a->frames[i].module != b->frames[i].module ||
            a->frames[i].offset != b->frames[i].offset)
            return 0;
    return 1;
}

int diff_records_equal(const detshim_record *a, const detshim_record *b)
{
    /* The digest covers the whole payload; fields decide only when a
     * record was built without one (in memory, by a test). */
    if (has_digest(a) && has_digest(b))
        return memcmp(a->digest, b->digest, sizeof a->digest) == 0;
    return a->seq == b->seq && str_eq(a->api, b->api) && diff_params_equal(a, b) &&
           operand_layouts_equal(a, b) && all_digests_equal(a, b) &&
           diff_notes_equal(a, b) && diff_sites_equal(a, b);
}

enum diff_kind diff_classify(const detshim_record *a, const detshim_record *b)
{
    if (!str_eq(a->api, b->api) || !diff_params_equal(a, b) || !operand_layouts_equal(a, b))
        return DIFF_CONTROL_FLOW;
    if (!role_digests_equal(a, b, TRACE_ROLE_IN))
        return DIFF_INPUTS;
    if (!diff_notes_equal(a, b))
        return DIFF_DECISION;
    if (!role_digests_equal(a, b, TRACE_ROLE_OUT))
        return DIFF_NONDETERMINISTIC;
    /* Same call, same data: a different call site, sequence number or
     * encoding means the program reached this call another way. */
    return DIFF_CONTROL_FLOW;
}

int diff_ran_audited(const detshim_process *p)
{
    static const char audited[] = TRACE_INTERPOSITION_AUDIT;
    for (int i = 0; p && i < p->nfields; i++)
        if (p->fields[i].key == TRACE_FIELD_INTERPOSITION)
            return p->fields[i].len >= sizeof audited - 1 &&
                   memcmp(p->fields[i].value, audited, sizeof audited - 1) == 0;
    return -1;
}

size_t diff_process_records(const detshim_process *p)
{
    size_t n = 0;
    for (int t = 0; t < p->nthreads; t++)
        n += p->threads[t].count ? p->threads[t].count : p->threads[t].nrecords;
    return n;
}

struct diff_item *diff_add_item(struct diff_result *r, enum diff_kind kind,
                                const detshim_process *pa, const detshim_process *pb)
{
    if (r->nitems == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        struct diff_item *items = realloc(r->items, cap * sizeof *items);
        if (!items)
            return NULL;
        r->items = items;
        r->cap = cap;
    }
    struct diff_item *it = &r->items[r->nitems++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    it->pa = pa;
    it->pb = pb;
    return it;
}

static int field_eq(const detshim_field *a, const detshim_field *b)
{
    if (a->len != b->len)
        return 0;
    if (!a->value || !b->value)
        return a->value == b->value;
    return memcmp(a->value, b->value, a->len) == 0;
}

const detshim_field *diff_compared_field(const detshim_process *p, uint16_t key)
{
    for (int i = 0; i < p->nfields; i++)
        if (p->fields[i].key == key && !(p->fields[i].flags & TRACE_FIELD_INFO))
            return &p->fields[i];
    return NULL;
}

/* The n-th compared field of p, or NULL. */
static const detshim_field *nth_compared(const detshim_process *p, int n)
{
    for (int i = 0; i < p->nfields; i++)
        if (!(p->fields[i].flags & TRACE_FIELD_INFO) && n-- == 0)
            return &p->fields[i];
    return NULL;
}

/* One HEADER item per differing key, A's keys first; field 0 when the
 * values agree but their order or repetition does not (the root hashes
 * fields in file order). */
static int diff_headers(const detshim_process *pa, const detshim_process *pb,
                        struct diff_result *r)
{
    size_t before = r->nitems;
    for (int pass = 0; pass < 2; pass++) {
        const detshim_process *p = pass ? pb : pa, *q = pass ? pa : pb;
        for (int i = 0; i < p->nfields; i++) {
            const detshim_field *f = &p->fields[i];
            if ((f->flags & TRACE_FIELD_INFO) || diff_compared_field(p, f->key) != f)
                continue;
            const detshim_field *g = diff_compared_field(q, f->key);
            if (pass && g)
                continue; /* B's keys that A has were handled in pass 0 */
            if (g && field_eq(f, g))
                continue;
            struct diff_item *it = diff_add_item(r, DIFF_HEADER, pa, pb);
            if (!it)
                return DETSHIM_ERR_NOMEM;
            it->field = f->key;
        }
    }
    if (r->nitems > before)
        return 0;
    for (int n = 0;; n++) {
        const detshim_field *f = nth_compared(pa, n), *g = nth_compared(pb, n);
        if (!f && !g)
            return 0;
        if (!f || !g || f->key != g->key || !field_eq(f, g))
            return diff_add_item(r, DIFF_HEADER, pa, pb) ? 0 : DETSHIM_ERR_NOMEM;
    }
}

/* Fills the records of a record item: A's and B's current records and
 * A's marked one, kept in the runs. Returns 0 or an error code. */
static int keep_records(struct diff_item *it, detshim_cursor *ca, detshim_cursor *cb)
{
    int rc = ca ? detshim_cursor_keep(ca, 0, &it->ra) : 0;
    if (!rc && cb)
        rc = detshim_cursor_keep(cb, 0, &it->rb);
    if (!rc && ca)
        rc = detshim_cursor_keep(ca, 1, &it->last_match);
    return rc;
}

/* Walks one thread pair in lockstep, one record of each side at a time;
 * A's last equal record is only marked, and kept for an item. Both
 * threads exist. Returns 0 or an error code. */
static int walk_thread_pair(const detshim_process *pa, const detshim_process *pb,
                            const detshim_thread *ta, const detshim_thread *tb,
                            detshim_cursor *ca, detshim_cursor *cb,
                            const struct diff_options *opt, struct diff_result *r)
{
    size_t n = ta->nrecords < tb->nrecords ? ta->nrecords : tb->nrecords;
    int found = 0, rc = 0;
    for (size_t i = 0; i < n; i++) {
        const detshim_record *ra, *rb;
        int ka = detshim_cursor_next(ca, &ra), kb = detshim_cursor_next(cb, &rb);
        if (ka != 1 || kb != 1)
            return ka < 0 ? ka : kb < 0 ? kb : DETSHIM_ERR_FORMAT;
        if (diff_records_equal(ra, rb)) {
            detshim_cursor_mark(ca);
            continue;
        }
        struct diff_item *it = diff_add_item(r, diff_classify(ra, rb), pa, pb);
        if (!it)
            return DETSHIM_ERR_NOMEM;
        it->ta = ta;
        it->tb = tb;
        it->index = i;
        if ((rc = keep_records(it, ca, cb)) != 0)
            return rc;
        found = 1;
        if (!opt->all)
            return 0;
    }
    if (ta->nrecords == tb->nrecords || (found && !opt->all))
        return 0;
    int b_short = tb->nrecords < ta->nrecords;
    const detshim_process *shorter = b_short ? pb : pa;
    detshim_cursor *longer = b_short ? ca : cb;
    const detshim_record *next;
    if ((rc = detshim_cursor_next(longer, &next)) != 1)
        return rc < 0 ? rc : DETSHIM_ERR_FORMAT;
    struct diff_item *it =
        diff_add_item(r, shorter->truncated ? DIFF_TRUNCATED : DIFF_EXTRA_CALLS, pa, pb);
    if (!it)
        return DETSHIM_ERR_NOMEM;
    it->side = b_short ? DIFF_SIDE_B : DIFF_SIDE_A;
    it->ta = ta;
    it->tb = tb;
    it->index = n;
    rc = detshim_cursor_keep(longer, 0, b_short ? &it->ra : &it->rb);
    if (!rc)
        rc = detshim_cursor_keep(ca, 1, &it->last_match);
    it->extra = (b_short ? ta->nrecords : tb->nrecords) - n;
    return rc;
}

/* One thread pair, through a cursor on each side. */
static int diff_thread_pair(const detshim_process *pa, const detshim_process *pb,
                            const detshim_thread *ta, const detshim_thread *tb,
                            const struct diff_options *opt, struct diff_result *r)
{
    detshim_cursor *ca = NULL, *cb = NULL;
    int rc = detshim_cursor_open(pa, ta, &ca);
    if (!rc)
        rc = detshim_cursor_open(pb, tb, &cb);
    if (!rc)
        rc = walk_thread_pair(pa, pb, ta, tb, ca, cb, opt, r);
    detshim_cursor_close(ca);
    detshim_cursor_close(cb);
    return rc;
}

/* The first record of t, kept in its run; NULL for an empty stream. */
static int first_record(const detshim_process *p, const detshim_thread *t,
                        const detshim_record **out)
{
    detshim_cursor *c = NULL;
    const detshim_record *r;
    *out = NULL;
    if (!t || !t->nrecords)
        return 0;
    int rc = detshim_cursor_open(p, t, &c);
    if (!rc && (rc = detshim_cursor_next(c, &r)) == 1)
        rc = detshim_cursor_keep(c, 0, out);
    detshim_cursor_close(c);
    return rc;
}

/* A thread whose stream disagrees with its own THREAD_END frame. */
static int check_thread_end(const detshim_process *pa, const detshim_process *pb,
                            const detshim_thread *t, enum diff_side side,
                            struct diff_result *r)
{
    if (!t || !t->end_seen || t->end_matches)
        return 0;
    struct diff_item *it = diff_add_item(r, DIFF_DAMAGED, pa, pb);
    if (!it)
        return DETSHIM_ERR_NOMEM;
    it->side = side;
    if (side == DIFF_SIDE_A)
        it->ta = t;
    else
        it->tb = t;
    return 0;
}

static int diff_process_pair(const detshim_process *pa, const detshim_process *pb,
                             const struct diff_options *opt, struct diff_result *r)
{
    size_t before = r->nitems;
    int rc = diff_headers(pa, pb, r);
    if (rc)
        return rc;
    /* A cut-short file is a difference even if every record it kept
     * matches: the run it describes is incomplete. */
    for (int s = 0; s < 2; s++) {
        const detshim_process *p = s ? pb : pa;
        if (!p->truncated)
            continue;
        struct diff_item *it = diff_add_item(r, DIFF_TRUNCATED, pa, pb);
        if (!it)
            return DETSHIM_ERR_NOMEM;
        it->side = s ? DIFF_SIDE_B : DIFF_SIDE_A;
    }
    size_t np = (size_t)(pa->nthreads > 0 ? pa->nthreads : 0) +
                (size_t)(pb->nthreads > 0 ? pb->nthreads : 0);
    struct diff_thread_pair *pairs = malloc((np ? np : 1) * sizeof *pairs);
    if (!pairs)
        return DETSHIM_ERR_NOMEM;
    int n = diff_pair_threads(pa, pb, pairs);
    if (n < 0) {
        free(pairs);
        return n;
    }
    for (int i = 0; i < n && !rc; i++) {
        const detshim_thread *ta = pairs[i].ta, *tb = pairs[i].tb;
        rc = check_thread_end(pa, pb, ta, DIFF_SIDE_A, r);
        if (!rc)
            rc = check_thread_end(pa, pb, tb, DIFF_SIDE_B, r);
        if (rc)
            break;
        if (ta && tb) { /* hook (windows.c): summary streams, window by window */
            rc = diff_windows_apply(ta, tb) ? diff_windows_pair(pa, pb, ta, tb, opt, r)
                                            : diff_thread_pair(pa, pb, ta, tb, opt, r);
            continue;
        }
        /* A thread without partner: the other file lost it to a cut, or
         * the other run never started it. */
        const detshim_process *lacking = ta ? pb : pa;
        struct diff_item *it = diff_add_item(
            r, lacking->truncated ? DIFF_TRUNCATED : DIFF_MISSING_THREAD, pa, pb);
        if (!it) {
            rc = DETSHIM_ERR_NOMEM;
            break;
        }
        it->side = ta ? DIFF_SIDE_A : DIFF_SIDE_B; /* the side that has it */
        if (it->kind == DIFF_TRUNCATED)
            it->side = ta ? DIFF_SIDE_B : DIFF_SIDE_A; /* the shorter side */
        it->ta = ta;
        it->tb = tb;
        it->extra = ta ? ta->nrecords : tb->nrecords;
        rc = first_record(pa, ta, &it->ra);
        if (!rc)
            rc = first_record(pb, tb, &it->rb);
    }
    free(pairs);
    if (!rc && r->nitems == before && memcmp(pa->root, pb->root, 32) != 0)
        rc = diff_add_item(r, DIFF_ROOT, pa, pb) ? 0 : DETSHIM_ERR_NOMEM;
    return rc;
}

/* The unreadable file of `run` that stands for process `name`, or NULL. */
static const detshim_unreadable *unreadable_named(const detshim_run *run, const char *name)
{
    for (int i = 0; i < run->nunreadable; i++)
        if (run->unreadable && strcmp(run->unreadable[i].name, name) == 0)
            return &run->unreadable[i];
    return NULL;
}

static const detshim_process *process_named(const detshim_run *run, const char *name)
{
    for (int i = 0; i < run->nprocesses; i++)
        if (strcmp(name_of(&run->processes[i]), name) == 0)
            return &run->processes[i];
    return NULL;
}

/* One UNREADABLE item per unreadable file of `run`, the `side` run. */
static int diff_unreadable(const detshim_run *run, const detshim_run *other,
                           enum diff_side side, struct diff_result *r)
{
    for (int i = 0; run->unreadable && i < run->nunreadable; i++) {
        const detshim_unreadable *u = &run->unreadable[i];
        const detshim_process *partner = process_named(other, u->name);
        struct diff_item *it = side == DIFF_SIDE_A ? diff_add_item(r, DIFF_UNREADABLE, NULL, partner)
                                                   : diff_add_item(r, DIFF_UNREADABLE, partner, NULL);
        if (!it)
            return DETSHIM_ERR_NOMEM;
        it->side = side;
        it->file = u;
        it->compared = partner || unreadable_named(other, u->name);
    }
    return 0;
}

struct proc_pair {
    const detshim_process *pa, *pb;
};

static int proc_pair_cmp(const void *x, const void *y)
{
    const struct proc_pair *p = x, *q = y;
    int c = strcmp(name_of(p->pa ? p->pa : p->pb), name_of(q->pa ? q->pa : q->pb));
    if (c)
        return c;
    /* Same name: pairs before loners, A's loners before B's. */
    int pk = (p->pa != NULL) + 2 * (p->pb != NULL), qk = (q->pa != NULL) + 2 * (q->pb != NULL);
    return qk - pk;
}

/* Pairs processes by name without trusting the runs' sort order; a name
 * that repeats pairs in order of appearance. */
static struct proc_pair *pair_processes(const detshim_run *a, const detshim_run *b,
                                        const struct diff_options *opt, size_t *count)
{
    size_t na = a->nprocesses > 0 ? (size_t)a->nprocesses : 0;
    size_t nb = b->nprocesses > 0 ? (size_t)b->nprocesses : 0, n = 0;
    struct proc_pair *pairs = malloc((na + nb + 1) * sizeof *pairs);
    char *used_b = calloc(nb + 1, 1);
    if (!pairs || !used_b) {
        free(pairs);
        free(used_b);
        return NULL;
    }
    if (opt->pair_single && na == 1 && nb == 1) {
        pairs[n].pa = &a->processes[0];
        pairs[n++].pb = &b->processes[0];
        used_b[0] = 1;
        na = 0;
    }
    for (size_t i = 0; i < na; i++) {
        pairs[n].pa = &a->processes[i];
        pairs[n].pb = NULL;
        for (size_t j = 0; j < nb; j++)
            if (!used_b[j] && strcmp(name_of(&a->processes[i]), name_of(&b->processes[j])) == 0) {
                used_b[j] = 1;
                pairs[n].pb = &b->processes[j];
                break;
            }
        n++;
    }
    for (size_t j = 0; j < nb; j++)
        if (!used_b[j]) {
            pairs[n].pa = NULL;
            pairs[n++].pb = &b->processes[j];
        }
    free(used_b);
    qsort(pairs, n, sizeof *pairs, proc_pair_cmp);
    *count = n;
    return pairs;
}

int diff_runs(const detshim_run *a, const detshim_run *b,
              const struct diff_options *opt, struct diff_result *out)
{
    static const struct diff_options defaults;
    size_t n;
    int rc = 0;
    if (!opt)
        opt = &defaults;
    struct proc_pair *pairs = pair_processes(a, b, opt, &n);
    if (!pairs)
        return DETSHIM_ERR_NOMEM;
    out->nprocesses = n;
    out->nrecords = 0;
    for (int i = 0; i < a->nprocesses; i++)
        out->nrecords += diff_process_records(&a->processes[i]);
    for (size_t i = 0; i < n && !rc; i++) {
        if (pairs[i].pa && pairs[i].pb) {
            rc = diff_process_pair(pairs[i].pa, pairs[i].pb, opt, out);
            continue;
        }
        if (unreadable_named(pairs[i].pa ? b : a, name_of(pairs[i].pa ? pairs[i].pa : pairs[i].pb)))
            continue; /* reported with the unreadable file below */
        struct diff_item *it = diff_add_item(out, DIFF_MISSING_PROCESS, pairs[i].pa, pairs[i].pb);
        if (!it)
            rc = DETSHIM_ERR_NOMEM;
        else
            it->side = pairs[i].pa ? DIFF_SIDE_A : DIFF_SIDE_B;
    }
    free(pairs);
    if (!rc)
        rc = diff_unreadable(a, b, DIFF_SIDE_A, out);
    if (!rc)
        rc = diff_unreadable(b, a, DIFF_SIDE_B, out);
    /* Every process agreed, so the run roots must too; if not, say so
     * rather than call the runs identical. */
    if (!rc && out->nitems == 0 && memcmp(a->root, b->root, 32) != 0)
        rc = diff_add_item(out, DIFF_ROOT, NULL, NULL) ? 0 : DETSHIM_ERR_NOMEM;
    return rc;
}

void diff_result_free(struct diff_result *r)
{
    free(r->items);
    r->items = NULL;
    r->nitems = r->cap = 0;
}

const char *diff_kind_id(enum diff_kind k)
{
    switch (k) {
    case DIFF_NONE: return "none";
    case DIFF_MISSING_PROCESS: return "missing_process";
    case DIFF_HEADER: return "header";
    case DIFF_MISSING_THREAD: return "missing_thread";
    case DIFF_NONDETERMINISTIC: return "nondeterministic";
    case DIFF_INPUTS: return "inputs_differ";
    case DIFF_CONTROL_FLOW: return "control_flow";
    case DIFF_DECISION: return "decision";
    case DIFF_TRUNCATED: return "truncated";
    case DIFF_EXTRA_CALLS: return "extra_calls";
    case DIFF_DAMAGED: return "damaged";
    case DIFF_ROOT: return "root";
    case DIFF_UNREADABLE: return "unreadable_file";
    case DIFF_WINDOW: return "window";
    }
    return "unknown";
}

const char *diff_kind_text(enum diff_kind k)
{
    switch (k) {
    case DIFF_NONE: return "identical";
    case DIFF_MISSING_PROCESS: return "missing process";
    case DIFF_HEADER: return "header differs";
    case DIFF_MISSING_THREAD: return "missing thread";
    case DIFF_NONDETERMINISTIC:
        return "nondeterministic operation: same call, same inputs, different outputs";
    case DIFF_INPUTS:
        return "inputs differ: divergence entered earlier, outside intercepted calls";
    case DIFF_CONTROL_FLOW: return "control flow diverged";
    case DIFF_DECISION: return "decision differs";
    case DIFF_TRUNCATED: return "truncated";
    case DIFF_EXTRA_CALLS: return "extra calls";
    case DIFF_DAMAGED: return "damaged trace";
    case DIFF_ROOT: return "roots differ";
    case DIFF_UNREADABLE: return "not a readable trace";
    case DIFF_WINDOW: return "window differs";
    }
    return "unknown";
}

const char *diff_field_name(uint16_t key)
{
    switch (key) {
    case TRACE_FIELD_DIGEST_ALGS: return "digest_algs";
    case TRACE_FIELD_PROGRAM: return "program";
    case TRACE_FIELD_PROCESS: return "process";
    case TRACE_FIELD_POLICY_NAME: return "policy_name";
    case TRACE_FIELD_POLICY_DIGEST: return "policy_digest";
    case TRACE_FIELD_SHIM_VERSION: return "shim_version";
    case TRACE_FIELD_ARGS: return "args";
    case TRACE_FIELD_PID: return "pid";
    case TRACE_FIELD_HOST: return "host";
    case TRACE_FIELD_START_TIME: return "start_time";
    case TRACE_FIELD_SETTINGS: return "settings";
    case TRACE_FIELD_SETTINGS_ORIGIN: return "settings_origin";
    case TRACE_FIELD_SEED: return "seed";
    case TRACE_FIELD_DEVICE_DIGEST: return "device_digest";
    case TRACE_FIELD_INTERPOSITION: return "interposition";
    case TRACE_FIELD_ENTROPY_RULE: return "entropy_rule";
    case TRACE_FIELD_CPU: return "cpu";
    case TRACE_FIELD_WINDOW: return "window";
    case TRACE_FIELD_LEVEL: return "level";
    case TRACE_FIELD_PYTHON_SITES: return "python_sites";
    case TRACE_FIELD_CANONICAL_ORDERS: return "canonical_orders";
    case TRACE_FIELD_COMPRESSION: return "compression";
    }
    return NULL;
}
