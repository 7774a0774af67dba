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
 * reduction order changed. Called by text.c.
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

/* Prints the names, comma-separated, of the processes whose first
 * divergence is the collective `at` with kind `kind` (f NULL: prints
 * nothing); returns how many. */
static size_t list_ranks(FILE *f, const struct coll_at *cs, size_t n, const struct coll_at *at,
                         enum diff_kind kind)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (cs[i].coll != at->coll || strcmp(cs[i].comm, at->comm) != 0 || cs[i].it->kind != kind)
            continue;
        if (f) {
            fputs(k ? ", " : "", f);
            text_put(f, pname(cs[i].it->pa));
        }
        k++;
    }
    return k;
}

void ranks_report(FILE *f, const struct diff_result *r)
{
    enum { MAX = 256 };
    const struct diff_item *firsts[MAX];
    struct coll_at cs[MAX];
    size_t n = first_items(r, firsts, MAX), ncoll = 0;
    for (size_t i = 0; i < n; i++)
        if (coll_of(firsts[i], &cs[ncoll]) == 0)
            ncoll++;
    if (ncoll == 0 || n < 2)
        return; /* one process, or no collective among the first divergences */
    fputs("ranks: first divergence of each, in collective order\n", f);
    for (size_t i = 0; i < n; i++) {
        struct coll_at c;
        fputs("  ", f);
        text_put(f, pname(firsts[i]->pa));
        fputs(": ", f);
        text_put(f, firsts[i]->ra->api);
        if (coll_of(firsts[i], &c) == 0) {
            fprintf(f, " #%" PRId64 " on communicator ", c.coll);
            text_put(f, c.comm);
            fprintf(f, " (rank %" PRId64 " of %" PRId64 ")", c.rank, c.nranks);
        } else {
            fputs(" (not a collective)", f);
        }
        fprintf(f, ": %s\n", why(firsts[i]->kind));
    }
    const struct coll_at *first = &cs[0];
    for (size_t i = 1; i < ncoll; i++)
        if (earlier(&cs[i], first))
            first = &cs[i];
    fputs("  first in collective order: ", f);
    text_put(f, first->it->ra->api);
    fprintf(f, " #%" PRId64 " on communicator ", first->coll);
    text_put(f, first->comm);
    fputs("\n  ", f);
    size_t in = list_ranks(NULL, cs, ncoll, first, DIFF_INPUTS);
    if (in) {
        fputs("inputs differ on ", f);
        list_ranks(f, cs, ncoll, first, DIFF_INPUTS);
        fprintf(f, " only: the divergence entered there, before this collective; the other "
                "ranks' different results follow from %s inputs\n", in == 1 ? "its" : "their");
        return;
    }
    /* A rank that diverged in its own work, outside collectives: its
     * next collective sends other data, and every rank receives it. */
    size_t local = 0;
    for (size_t i = 0; i < n; i++) {
        struct coll_at c;
        if (coll_of(firsts[i], &c) == 0)
            continue;
        fputs(local++ ? "; " : "", f);
        text_put(f, pname(firsts[i]->pa));
        fputs(" diverged in its own work first (", f);
        text_put(f, firsts[i]->ra->api);
        fprintf(f, ": %s)", why(firsts[i]->kind));
    }
    if (local) {
        fputs(", before its next collective: the other ranks' different results there follow "
              "from it\n", f);
        return;
    }
    if (list_ranks(NULL, cs, ncoll, first, DIFF_NONDETERMINISTIC)) {
        fputs("inputs agree on every rank shown; results differ on ", f);
        list_ranks(f, cs, ncoll, first, DIFF_NONDETERMINISTIC);
        fputs(": the collective's own reduction order changed (nondeterministic; compare the "
              "nccl.algo, nccl.proto and nccl.channels notes)\n", f);
        return;
    }
    fprintf(f, "%s there; see each rank's report above\n", why(first->it->kind));
}
