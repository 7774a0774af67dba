/* Divergence across ranks: after the per-process report, a run of
 * several ranks gets a summary in collective order. A collective's
 * records carry the communicator's identity (param comm), the rank's
 * place in it (rank, nranks) and the collective's ordinal on it (coll),
 * the same on every rank (shim/nccl and the Python hook's
 * torch.distributed records), so the first differences of the ranks can
 * be lined up: per rank, its first divergence; then the earliest
 * collective at which any rank diverged and why. A rank whose inputs to
 * it differ brought the divergence in ("inputs differ on rank 1 only");
 * the other ranks then receive other results with the same inputs, which
 * per process reads as a nondeterministic operation but is explained by
 * the first. A rank whose first divergence is outside collectives (its
 * own GEMM) brought it in the same way, through its next collective.
 * Where neither, the collective itself gave different results: its
 * reduction order changed. ranks_summarize() finds this once;
 * ranks_report() prints it for text.c and ranks_json() for json.c.
 */
#include <string.h>

#include "detdiff.h"

struct coll_at {
    const struct diff_item *it;
    const char *comm;
    int64_t coll, rank, nranks;
};

static const detshim_param *param(const detshim_record *r, const char *name)
{
    for (int i = 0; i < diff_nparams(r); i++)
        if (r->params[i].name && strcmp(r->params[i].name, name) == 0)
            return &r->params[i];
    return NULL;
}

/* Fills *c from a collective's record (run A's); 0, or -1 if it is none. */
static int coll_of(const struct diff_item *it, struct coll_at *c)
{
    const detshim_record *r = it->ra ? it->ra : it->rb;
    if (!r)
        return -1;
    const detshim_param *comm = param(r, "comm"), *coll = param(r, "coll");
    const detshim_param *rank = param(r, "rank"), *nranks = param(r, "nranks");
    if (!comm || comm->type != TRACE_PARAM_STR || !coll || coll->type != TRACE_PARAM_INT ||
        !rank || rank->type != TRACE_PARAM_INT || !nranks || nranks->type != TRACE_PARAM_INT)
        return -1;
    *c = (struct coll_at){ it, comm->v.s, coll->v.i, rank->v.i, nranks->v.i };
    return 0;
}

/* Earlier in collective order: a smaller ordinal; between communicators
 * at one ordinal, the identity's order (a parent before its splits). */
static int earlier(const struct coll_at *a, const struct coll_at *b)
{
    if (a->coll != b->coll)
        return a->coll < b->coll;
    return strcmp(a->comm, b->comm) < 0;
}

static const char *why(enum diff_kind k)
{
    switch (k) {
    case DIFF_INPUTS:
        return "inputs differ";
    case DIFF_NONDETERMINISTIC:
        return "same inputs, results differ";
    case DIFF_DECISION:
        return "a decision differs";
    default:
        return diff_kind_text(k);
    }
}

/* The first item of each process, in the result's order (one group per
 * process). Returns how many, at most `max`. */
static size_t first_items(const struct diff_result *r, const struct diff_item **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nitems && n < max; i++) {
        const struct diff_item *it = &r->items[i];
        if (!it->pa || !it->pb || !it->ra || !it->rb)
            continue;
        int seen = 0;
        for (size_t j = 0; j < n && !seen; j++)
            seen = out[j]->pa == it->pa;
        if (!seen)
            out[n++] = it;
    }
    return n;
}

enum ranks_cause { CAUSE_INPUTS, CAUSE_LOCAL, CAUSE_COLLECTIVE, CAUSE_OTHER };

enum { RANKS_MAX = 256 };

/* What the summary says: every rank's first divergence (coll[i] set when
 * it is a collective), the first collective in collective order, and
 * which ranks are to blame (culprit[i]) for which cause. */
struct ranks_summary {
    size_t n;
    const struct diff_item *firsts[RANKS_MAX];
    struct coll_at coll[RANKS_MAX];
    int is_coll[RANKS_MAX], culprit[RANKS_MAX];
    struct coll_at first;
    enum ranks_cause cause;
    size_t nculprits;
};

static int at_first(const struct ranks_summary *s, size_t i, enum diff_kind kind)
{
    const struct coll_at *c = &s->coll[i];
    return s->is_coll[i] && c->coll == s->first.coll && strcmp(c->comm, s->first.comm) == 0 &&
           c->it->kind == kind;
}

/* Marks as culprits the ranks that brought `cause` about; returns how
 * many (0: the cause is not this one, and nothing is kept). */
static size_t blame(struct ranks_summary *s, enum ranks_cause cause)
{
    enum diff_kind kind = cause == CAUSE_INPUTS ? DIFF_INPUTS : DIFF_NONDETERMINISTIC;
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        s->culprit[i] = cause == CAUSE_LOCAL ? !s->is_coll[i] : at_first(s, i, kind);
        k += (size_t)s->culprit[i];
    }
    if (k) {
        s->cause = cause;
        s->nculprits = k;
    }
    return k;
}

/* Fills *s; returns 0, or -1 when there is no summary to give (one
 * process, or no collective among the first divergences). */
static int ranks_summarize(const struct diff_result *r, struct ranks_summary *s)
{
    size_t ncoll = 0;
    s->n = first_items(r, s->firsts, RANKS_MAX);
    for (size_t i = 0; i < s->n; i++) {
        s->is_coll[i] = coll_of(s->firsts[i], &s->coll[i]) == 0;
        if (s->is_coll[i] && (!ncoll++ || earlier(&s->coll[i], &s->first)))
            s->first = s->coll[i];
    }
    if (ncoll == 0 || s->n < 2)
        return -1;
    s->cause = CAUSE_OTHER;
    s->nculprits = 0;
    /* A rank whose inputs differ brought the divergence in; else a rank
     * that diverged in its own work, outside collectives (its next
     * collective sends other data, and every rank receives it); else the
     * collective's own reduction order. */
    if (!blame(s, CAUSE_INPUTS) && !blame(s, CAUSE_LOCAL))
        blame(s, CAUSE_COLLECTIVE);
    return 0;
}

/* The culprits' names, comma-separated, or their own-work lines. */
static void text_culprits(FILE *f, const struct ranks_summary *s, int own_work)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!s->culprit[i])
            continue;
        fputs(k++ ? (own_work ? "; " : ", ") : "", f);
        text_put(f, pname(s->firsts[i]->pa));
        if (own_work) {
            fputs(" diverged in its own work first (", f);
            text_put(f, s->firsts[i]->ra->api);
            fprintf(f, ": %s)", why(s->firsts[i]->kind));
        }
    }
}

void ranks_report(FILE *f, const struct diff_result *r)
{
    struct ranks_summary s;
    if (ranks_summarize(r, &s) != 0)
        return;
    fputs("ranks: first divergence of each, in collective order\n", f);
    for (size_t i = 0; i < s.n; i++) {
        fputs("  ", f);
        text_put(f, pname(s.firsts[i]->pa));
        fputs(": ", f);
        text_put(f, s.firsts[i]->ra->api);
        if (s.is_coll[i]) {
            fprintf(f, " #%" PRId64 " on communicator ", s.coll[i].coll);
            text_put(f, s.coll[i].comm);
            fprintf(f, " (rank %" PRId64 " of %" PRId64 ")", s.coll[i].rank, s.coll[i].nranks);
        } else {
            fputs(" (not a collective)", f);
        }
        fprintf(f, ": %s\n", why(s.firsts[i]->kind));
    }
    fputs("  first in collective order: ", f);
    text_put(f, s.first.it->ra->api);
    fprintf(f, " #%" PRId64 " on communicator ", s.first.coll);
    text_put(f, s.first.comm);
    fputs("\n  ", f);
    switch (s.cause) {
    case CAUSE_INPUTS:
        fputs("inputs differ on ", f);
        text_culprits(f, &s, 0);
        fprintf(f, " only: the divergence entered there, before this collective; the other "
                "ranks' different results follow from %s inputs\n",
                s.nculprits == 1 ? "its" : "their");
        break;
    case CAUSE_LOCAL:
        text_culprits(f, &s, 1);
        fputs(", before its next collective: the other ranks' different results there follow "
              "from it\n", f);
        break;
    case CAUSE_COLLECTIVE:
        fputs("inputs agree on every rank shown; results differ on ", f);
        text_culprits(f, &s, 0);
        fputs(": the collective's own reduction order changed (nondeterministic; compare the "
              "nccl.algo, nccl.proto and nccl.channels notes)\n", f);
        break;
    case CAUSE_OTHER:
        fprintf(f, "%s there; see each rank's report above\n", why(s.first.it->kind));
        break;
    }
}

static void json_coll(FILE *f, const struct coll_at *c)
{
    fputs("\"api\":", f);
    json_put(f, c->it->ra->api);
    fprintf(f, ",\"collective\":%" PRId64 ",\"communicator\":", c->coll);
    json_put(f, c->comm);
}

void ranks_json(FILE *f, const struct diff_result *r)
{
    static const char *const causes[] = { "inputs", "own_work", "collective", "other" };
    struct ranks_summary s;
    if (ranks_summarize(r, &s) != 0)
        return;
    fputs(",\"ranks\":{\"firsts\":[", f);
    for (size_t i = 0; i < s.n; i++) {
        const struct diff_item *it = s.firsts[i];
        fputs(i ? ",{\"process\":" : "{\"process\":", f);
        json_put(f, pname(it->pa));
        fprintf(f, ",\"kind\":\"%s\",", diff_kind_id(it->kind));
        if (s.is_coll[i]) {
            json_coll(f, &s.coll[i]);
            fprintf(f, ",\"rank\":%" PRId64 ",\"nranks\":%" PRId64, s.coll[i].rank,
                    s.coll[i].nranks);
        } else {
            fputs("\"api\":", f);
            json_put(f, it->ra->api);
            fputs(",\"collective\":null", f);
        }
        fputc('}', f);
    }
    fputs("],\"first\":{", f);
    json_coll(f, &s.first);
    fprintf(f, "},\"cause\":\"%s\",\"culprits\":[", causes[s.cause]);
    for (size_t i = 0, k = 0; i < s.n; i++)
        if (s.culprit[i]) {
            fputs(k++ ? "," : "", f);
            json_put(f, pname(s.firsts[i]->pa));
        }
    fputs("]}", f);
}
