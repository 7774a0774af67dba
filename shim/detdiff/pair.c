/* Thread pairing for one process pair (diff_pair_threads in diff.h): which
 * thread of run B each thread of run A is compared with. Each rule is a
 * lookup in a table of B's threads sorted by that rule's key, so 65,536
 * threads pair in n log n; only threads whose first records agree and
 * whose streams then differ are compared record by record, through
 * cursors (detshim.h), to find the longest common prefix. Last, the
 * same likeness across processes: children whose names swapped between
 * runs (diff_swapped_names), for the hint text.c prints.
 */
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "detshim/trace_format.h"

/* The bits of a thread index that name the stream, not the thread. */
#define STREAM_BITS (TRACE_THREAD_ENTROPY | TRACE_THREAD_IDENTITY | TRACE_THREAD_REAL)

/* A thread of B under one rule's key; a table sorts them by (key, j). */
struct entry {
    uint8_t key[40];
    int j;
};
struct table {
    struct entry *e;
    size_t *next; /* next[p] == p, or a later entry to look at first */
    size_t n;
    const char *used; /* B's threads already paired */
};

static int entry_cmp(const void *x, const void *y)
{
    const struct entry *p = x, *q = y;
    int c = memcmp(p->key, q->key, sizeof p->key);
    return c ? c : (p->j > q->j) - (p->j < q->j);
}

/* Sorts the n entries and takes them over (freed by table_free). Returns
 * 0, or DETSHIM_ERR_NOMEM. */
static int table_init(struct table *t, struct entry *e, size_t n, const char *used)
{
    t->e = e;
    t->n = n;
    t->used = used;
    t->next = malloc((n + 1) * sizeof *t->next);
    if (!t->next)
        return DETSHIM_ERR_NOMEM;
    for (size_t p = 0; p <= n; p++)
        t->next[p] = p;
    qsort(e, n, sizeof *e, entry_cmp);
    return 0;
}

static void table_free(struct table *t)
{
    free(t->e);
    free(t->next);
}

/* The first entry at or after p whose thread is not yet paired, or t->n;
 * paired ones are skipped for good (path halving keeps this near O(1)). */
static size_t table_free_from(struct table *t, size_t p)
{
    while (p < t->n) {
        if (t->next[p] == p && !t->used[t->e[p].j])
            return p;
        if (t->next[p] == p)
            t->next[p] = p + 1;
        size_t q = t->next[p];
        if (q < t->n && t->next[q] != q)
            t->next[p] = t->next[q];
        p = q;
    }
    return t->n;
}

/* The first entry whose key is `key`, or t->n. */
static size_t table_find(const struct table *t, const uint8_t key[40])
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (memcmp(t->e[mid].key, key, 40) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The lowest-indexed unpaired thread of B with `key`, or -1. */
static int table_take(struct table *t, const uint8_t key[40])
{
    size_t p = table_free_from(t, table_find(t, key));
    return p < t->n && memcmp(t->e[p].key, key, 40) == 0 ? t->e[p].j : -1;
}

/* Keys: a stream's kind; its index; its length and head; its kind and a
 * hash of its first record's fields (equal records hash alike). */
static void key_kind(const detshim_thread *t, uint8_t key[40])
{
    uint32_t kind = t->index & STREAM_BITS;
    memset(key, 0, 40);
    memcpy(key, &kind, 4);
}

static void key_index(const detshim_thread *t, uint8_t key[40])
{
    memset(key, 0, 40);
    memcpy(key, &t->index, 4);
}

static void key_content(const detshim_thread *t, uint8_t key[40])
{
    uint64_t n = t->count ? t->count : t->nrecords; /* summary streams: every call (windows.c) */
    memcpy(key, &n, 8);
    memcpy(key + 8, t->head, 32);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
    return fnv(h, s ? s : "", s ? strlen(s) + 1 : 0);
}

/* A hash of every field diff_records_equal compares, so equal records
 * (by digest or by fields) hash alike. */
static uint64_t record_hash(const detshim_record *r)
{
    uint64_t h = fnv(1469598103934665603ull, &r->seq, sizeof r->seq);
    h = fnv_str(h, r->api);
    for (int i = 0; i < diff_nparams(r); i++) {
        const detshim_param *p = &r->params[i];
        h = fnv_str(fnv(h, &p->type, 1), p->name);
        if (p->type == TRACE_PARAM_STR)
            h = fnv_str(h, p->v.s);
        else if (p->type == TRACE_PARAM_CHAR)
            h = fnv(h, &p->v.c, 1);
        else if (p->type == TRACE_PARAM_C64 || p->type == TRACE_PARAM_C128)
            h = fnv(h, p->v.z, sizeof p->v.z);
        else if (p->type >= TRACE_PARAM_INT && p->type <= TRACE_PARAM_F64)
            h = fnv(h, &p->v.i, 8);
    }
    for (int i = 0; i < diff_noperands(r); i++) {
        const detshim_operand *o = &r->operands[i];
        h = fnv_str(h, o->name);
        h = fnv(fnv(fnv(h, &o->role, 1), &o->elem_size, 1), &o->count, 8);
        h = fnv(fnv(h, &o->digest.lo, 8), &o->digest.hi, 8);
    }
    for (int i = 0; i < diff_nnotes(r); i++)
        h = fnv_str(fnv_str(h, r->notes[i].key), r->notes[i].value);
    for (int i = 0; i < diff_nframes(r); i++)
        h = fnv(fnv(h, &r->frames[i].module, 8), &r->frames[i].offset, 8);
    return h;
}

/* Kind and first-record hash of a thread with records; read through a
 * cursor. Returns 0, or a DETSHIM_ERR_* code. */
static int key_first(const detshim_process *p, const detshim_thread *t, uint8_t key[40])
{
    detshim_cursor *c;
    const detshim_record *r;
    key_kind(t, key);
    int rc = detshim_cursor_open(p, t, &c);
    if (rc)
        return rc;
    rc = detshim_cursor_next(c, &r);
    if (rc == 1) {
        uint64_t h = record_hash(r);
        memcpy(key + 4, &h, 8);
        rc = 0;
    }
    detshim_cursor_close(c);
    return rc;
}

/* The number of leading records two streams share, through cursors;
 * negative: a DETSHIM_ERR_* code. */
static long common_prefix(const detshim_process *pa, const detshim_thread *a,
                          const detshim_process *pb, const detshim_thread *b)
{
    detshim_cursor *ca = NULL, *cb = NULL;
    long n = 0;
    int rc = detshim_cursor_open(pa, a, &ca);
    if (!rc)
        rc = detshim_cursor_open(pb, b, &cb);
    while (!rc) {
        const detshim_record *ra, *rb;
        int ka = detshim_cursor_next(ca, &ra), kb = detshim_cursor_next(cb, &rb);
        rc = ka < 0 ? ka : kb < 0 ? kb : 0;
        if (rc || ka == 0 || kb == 0 || !diff_records_equal(ra, rb))
            break;
        n++;
    }
    detshim_cursor_close(ca);
    detshim_cursor_close(cb);
    return rc ? rc : n;
}

/* Builds a table of B's unpaired threads that `want` accepts, keyed by
 * `key`. Returns 0, or a DETSHIM_ERR_* code. */
static int table_of(struct table *t, const detshim_process *b, const char *used,
                    int (*want)(const detshim_thread *),
                    int (*key)(const detshim_process *, const detshim_thread *, uint8_t[40]))
{
    int nb = b->nthreads > 0 ? b->nthreads : 0;
    struct entry *e = malloc(((size_t)nb + 1) * sizeof *e);
    size_t n = 0;
    if (!e)
        return DETSHIM_ERR_NOMEM;
    for (int j = 0; j < nb; j++) {
        if (used[j] || !want(&b->threads[j]))
            continue;
        int rc = key(b, &b->threads[j], e[n].key);
        if (rc) {
            free(e);
            return rc;
        }
        e[n++].j = j;
    }
    return table_init(t, e, n, used);
}

static int want_main(const detshim_thread *t)
{
    return (t->index & ~STREAM_BITS) == 0;
}

static int want_any(const detshim_thread *t)
{
    (void)t;
    return 1;
}

static int want_records(const detshim_thread *t)
{
    return t->nrecords > 0;
}

static int by_index(const detshim_process *p, const detshim_thread *t, uint8_t key[40])
{
    (void)p;
    key_index(t, key);
    return 0;
}

static int by_content(const detshim_process *p, const detshim_thread *t, uint8_t key[40])
{
    (void)p;
    key_content(t, key);
    return 0;
}

static int by_kind(const detshim_process *p, const detshim_thread *t, uint8_t key[40])
{
    (void)p;
    key_kind(t, key);
    return 0;
}

static int pair_cmp(const void *x, const void *y)
{
    const struct diff_thread_pair *p = x, *q = y;
    uint64_t pk = p->ta ? p->ta->index : UINT64_MAX, qk = q->ta ? q->ta->index : UINT64_MAX;
    if (pk != qk)
        return pk < qk ? -1 : 1;
    pk = p->tb ? p->tb->index : UINT64_MAX;
    qk = q->tb ? q->tb->index : UINT64_MAX;
    return pk < qk ? -1 : pk > qk;
}

struct pairing {
    const detshim_process *a, *b;
    char *used_a, *used_b;
    struct diff_thread_pair *pairs;
    int np;
};

static void pair(struct pairing *s, int i, int j)
{
    s->used_a[i] = s->used_b[j] = 1;
    s->pairs[s->np].ta = &s->a->threads[i];
    s->pairs[s->np++].tb = &s->b->threads[j];
}

/* Each of A's unpaired threads that `want` accepts takes the first B
 * thread of the same key, in A's order. Returns 0 or an error code. */
static int pair_by(struct pairing *s, int (*want)(const detshim_thread *),
                   int (*key)(const detshim_process *, const detshim_thread *, uint8_t[40]))
{
    struct table t = { 0 };
    int rc = table_of(&t, s->b, s->used_b, want, key);
    for (int i = 0; !rc && i < s->a->nthreads; i++) {
        uint8_t k[40];
        if (s->used_a[i] || !want(&s->a->threads[i]))
            continue;
        key(s->a, &s->a->threads[i], k);
        int j = table_take(&t, k);
        if (j >= 0)
            pair(s, i, j);
    }
    if (t.e)
        table_free(&t);
    return rc;
}

/* Streams that start alike: among B's threads whose first record equals
 * A's, the longest common prefix wins, the lowest index breaks ties. */
static int pair_by_prefix(struct pairing *s)
{
    struct table t = { 0 };
    int rc = table_of(&t, s->b, s->used_b, want_records, key_first);
    for (int i = 0; !rc && i < s->a->nthreads; i++) {
        const detshim_thread *ta = &s->a->threads[i];
        uint8_t k[40];
        if (s->used_a[i] || ta->nrecords == 0 || (rc = key_first(s->a, ta, k)) != 0)
            continue;
        int best = -1;
        long best_len = 0;
        for (size_t p = table_free_from(&t, table_find(&t, k));
             p < t.n && memcmp(t.e[p].key, k, 40) == 0; p = table_free_from(&t, p + 1)) {
            long len = common_prefix(s->a, ta, s->b, &s->b->threads[t.e[p].j]);
            if (len < 0) {
                rc = (int)len;
                break;
            }
            if (len > best_len) {
                best = t.e[p].j;
                best_len = len;
            }
            if ((size_t)best_len == ta->nrecords)
                break; /* no later thread can share more */
        }
        if (!rc && best >= 0)
            pair(s, i, best);
    }
    if (t.e)
        table_free(&t);
    return rc;
}

int diff_pair_threads(const detshim_process *a, const detshim_process *b,
                      struct diff_thread_pair *pairs)
{
    int na = a->nthreads > 0 ? a->nthreads : 0, nb = b->nthreads > 0 ? b->nthreads : 0;
    struct pairing s = { a, b, calloc((size_t)na + 1, 1), calloc((size_t)nb + 1, 1), pairs, 0 };
    int rc = s.used_a && s.used_b ? 0 : DETSHIM_ERR_NOMEM;
    /* Real-entropy streams are never compared (trace_format.h): taken out
     * before pairing, they pair with nothing and are missed by no one. */
    for (int i = 0; !rc && i < na; i++)
        s.used_a[i] = (a->threads[i].index & TRACE_THREAD_REAL) != 0;
    for (int j = 0; !rc && j < nb; j++)
        s.used_b[j] = (b->threads[j].index & TRACE_THREAD_REAL) != 0;
    /* The main thread is thread 0 in every run, and each of its streams
     * pairs with the same stream; then identical streams, wherever the
     * threads started; then streams that start alike; what is left pairs
     * in index order, a stream with one of its kind. */
    if (!rc)
        rc = pair_by(&s, want_main, by_index);
    if (!rc)
        rc = pair_by(&s, want_any, by_content);
    if (!rc)
        rc = pair_by_prefix(&s);
    if (!rc)
        rc = pair_by(&s, want_any, by_kind);
    for (int i = 0; !rc && i < na; i++)
        if (!s.used_a[i]) {
            pairs[s.np].ta = &a->threads[i];
            pairs[s.np++].tb = NULL;
        }
    for (int j = 0; !rc && j < nb; j++)
        if (!s.used_b[j]) {
            pairs[s.np].ta = NULL;
            pairs[s.np++].tb = &b->threads[j];
        }
    free(s.used_a);
    free(s.used_b);
    if (rc)
        return rc;
    qsort(pairs, (size_t)s.np, sizeof *pairs, pair_cmp);
    return s.np;
}

/* ---- children that swapped names ------------------------------------- */

/* Siblings looked at per process: enough for any pool of workers a
 * program starts at once, and a bound on the records read. */
#define SWAP_MAX_SIBLINGS 64

/* p's call stream of its main thread (index 0), or NULL. */
static const detshim_thread *main_calls(const detshim_process *p)
{
    for (int i = 0; i < p->nthreads; i++)
        if (p->threads[i].index == 0)
            return &p->threads[i];
    return NULL;
}

/* A field's value, or NULL where p has none. */
static const char *field_value(const detshim_process *p, uint16_t key)
{
    for (int i = 0; i < p->nfields; i++)
        if (p->fields[i].key == key)
            return p->fields[i].value;
    return NULL;
}

static int str_same(const char *x, const char *y)
{
    return strcmp(x ? x : "", y ? y : "") == 0;
}

/* How much run A's process p looks like run B's q as the same child: 0
 * when their programs differ (or a record cannot be read); else 1, plus
 * 1 for the same command line, plus 2 per leading record their main
 * threads' calls share. */
static long likeness(const detshim_process *p, const detshim_process *q)
{
    if (!str_same(p->program, q->program))
        return 0;
    long score = 1 + str_same(field_value(p, TRACE_FIELD_ARGS), field_value(q, TRACE_FIELD_ARGS));
    const detshim_thread *tp = main_calls(p), *tq = main_calls(q);
    long shared = tp && tq ? common_prefix(p, tp, q, tq) : 0;
    return shared < 0 ? 0 : score + 2 * shared;
}

/* The length of the parent part of a lineage name ("main.f" of
 * "main.f2", "main.s" of "main.s10" and of "main.s10.e", the image
 * main.s10 exec'd into), or 0 for a name that is not a fork's, a
 * spawn's, or an image one of them exec'd into; *suffix is then where
 * the ".e" images start (the name's end for the child itself). */
static size_t parent_len(const char *name, const char **suffix)
{
    if (!name)
        return 0;
    size_t end = strlen(name);
    while (end >= 2 && name[end - 2] == '.' && name[end - 1] == 'e')
        end -= 2;
    size_t dot = end;
    while (dot > 0 && name[dot - 1] >= '0' && name[dot - 1] <= '9')
        dot--;
    if (dot == end || dot < 2 || name[dot - 2] != '.' || (name[dot - 1] != 'f' && name[dot - 1] != 's'))
        return 0;
    *suffix = name + end;
    return dot;
}

static const detshim_process *named(const detshim_run *run, const char *name)
{
    for (int i = 0; i < run->nprocesses; i++)
        if (str_same(run->processes[i].name, name))
            return &run->processes[i];
    return NULL;
}

int diff_swapped_names(const detshim_run *a, const detshim_run *b, const detshim_process *pa,
                       const detshim_process *pb, const detshim_process **qa,
                       const detshim_process **qb)
{
    const char *suffix, *sib_suffix;
    size_t len = parent_len(pa->name, &suffix);
    if (!len || !str_same(pa->name, pb->name))
        return 0;
    long direct = likeness(pa, pb);
    int looked = 0;
    for (int i = 0; i < a->nprocesses && looked < SWAP_MAX_SIBLINGS; i++) {
        const detshim_process *sa = &a->processes[i], *sb;
        if (sa == pa || parent_len(sa->name, &sib_suffix) != len ||
            strncmp(sa->name, pa->name, len) != 0 || !str_same(sib_suffix, suffix) ||
            !(sb = named(b, sa->name)))
            continue;
        looked++;
        /* Each child looks more like the other's partner than its own. */
        if (likeness(pa, sb) > direct && likeness(sa, pb) > likeness(sa, sb)) {
            *qa = sa;
            *qb = sb;
            return 1;
        }
    }
    return 0;
}
