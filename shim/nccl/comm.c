/* NCCL communicator creation: ncclCommInitRank, ncclCommInitRankConfig,
 * ncclCommInitRankScalable, ncclCommInitAll, ncclCommSplit and
 * ncclCommShrink. Each new communicator gets an
 * identity that is the same in every run and on every one of its ranks
 * (nccl.h), kept with its rank, size and the decision in force, for the
 * records of its collectives (coll.c); ncclGetUniqueId only passes
 * through (its id is random). NCCL reads its environment when a
 * communicator is made, so that is where pinned and canonical modes act:
 * each NCCL_* variable the policy sets is checked against what the
 * process has now (a program may have changed it since start-up, as
 * os.environ does), and put back and recorded, or refused with
 * [nccl] conflict = refuse; a config struct's CollNet is turned off and
 * its CTA bounds set to the policy's channel count. Sits left of the
 * trace writer, beside coll.c.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/env.h"
#include "core/policy.h"
#include "cuda/cuda.h"
#include "nccl/nccl.h"

#define MAX_COMMS 1024
static struct {
    ncclComm_t comm;
    struct nccl_comm_info info;
} comms[MAX_COMMS];
static int ncomms;
static pthread_mutex_t comms_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint inits, initalls;

int nccl_enter(struct nccl_call *c)
{
    if (guard_held())
        return 0;
    cuda_reach_count();
    trace_start(); /* a no-op after start-up; NCCL loads late */
    if (!guard_enter())
        return 0;
    c->mode = core_cfg.nccl_mode;
    c->traced = trace_active();
    return 1;
}

void nccl_leave(void)
{
    guard_leave();
}

static void comm_put(ncclComm_t comm, const struct nccl_comm_info *info)
{
    pthread_mutex_lock(&comms_lock);
    int slot = ncomms;
    for (int i = 0; i < ncomms; i++)
        if (comms[i].comm == comm)
            slot = i; /* an address reused after ncclCommDestroy */
    if (slot < MAX_COMMS) {
        comms[slot].comm = comm;
        comms[slot].info = *info;
        if (slot == ncomms)
            ncomms++;
    }
    pthread_mutex_unlock(&comms_lock);
}

/* The parent's next split number, counted on every rank alike. */
static unsigned comm_next_split(ncclComm_t comm)
{
    unsigned k = 0;
    pthread_mutex_lock(&comms_lock);
    for (int i = 0; i < ncomms; i++)
        if (comms[i].comm == comm)
            k = comms[i].info.nsplits++;
    pthread_mutex_unlock(&comms_lock);
    return k;
}

int64_t nccl_comm_next_coll(ncclComm_t comm)
{
    int64_t k = -1;
    pthread_mutex_lock(&comms_lock);
    for (int i = 0; i < ncomms; i++)
        if (comms[i].comm == comm)
            k = comms[i].info.ncoll++;
    pthread_mutex_unlock(&comms_lock);
    return k;
}

int nccl_comm_get(ncclComm_t comm, struct nccl_comm_info *out)
{
    int found = 0;
    pthread_mutex_lock(&comms_lock);
    for (int i = 0; i < ncomms && !found; i++)
        if (comms[i].comm == comm) {
            *out = comms[i].info;
            found = 1;
        }
    pthread_mutex_unlock(&comms_lock);
    if (found)
        return 0;
    static void *count_cache, *rank_cache;
    ncclCommCount_fn *count = (ncclCommCount_fn *)(uintptr_t)resolve_real_cached_preferring(
        &count_cache, "ncclCommCount", nccl_is_vendor_file);
    ncclCommUserRank_fn *rank = (ncclCommUserRank_fn *)(uintptr_t)
        resolve_real_cached_preferring(&rank_cache, "ncclCommUserRank", nccl_is_vendor_file);
    memset(out, 0, sizeof *out);
    snprintf(out->id, sizeof out->id, "unknown");
    if (!comm || count(comm, &out->nranks) != ncclSuccess || rank(comm, &out->rank) != ncclSuccess)
        out->nranks = out->rank = -1;
    snprintf(out->algo, sizeof out->algo, "unknown");
    snprintf(out->proto, sizeof out->proto, "unknown");
    snprintf(out->channels, sizeof out->channels, "unknown");
    return -1;
}

void nccl_rec_comm(struct trace_rec *r, const struct nccl_comm_info *ci, int mode)
{
    static const char *const modes[] = { "passthrough", "pinned", "canonical" };
    trace_rec_int(r, "rank", ci->rank);
    trace_rec_int(r, "nranks", ci->nranks);
    trace_rec_str(r, "comm", ci->id);
    trace_rec_note(r, "nccl.mode", modes[mode]);
    trace_rec_note(r, "nccl.algo", ci->algo);
    trace_rec_note(r, "nccl.proto", ci->proto);
    trace_rec_note(r, "nccl.channels", ci->channels);
}

/* The decision a new communicator is made under, from the environment
 * NCCL reads now and the config's CTA bounds. */
static void decision(struct nccl_comm_info *ci, const ncclConfig_t *cfg)
{
    const char *algo = core_getenv("NCCL_ALGO"), *proto = core_getenv("NCCL_PROTO");
    const char *lo = core_getenv("NCCL_MIN_NCHANNELS"), *hi = core_getenv("NCCL_MAX_NCHANNELS");
    snprintf(ci->algo, sizeof ci->algo, "%s", algo && *algo ? algo : "NCCL's choice");
    snprintf(ci->proto, sizeof ci->proto, "%s", proto && *proto ? proto : "NCCL's choice");
    if (cfg && NCCL_CONFIG_HAS(cfg, maxCTAs) && cfg->maxCTAs != NCCL_CONFIG_UNDEF_INT)
        snprintf(ci->channels, sizeof ci->channels, "%d..%d (config)", cfg->minCTAs,
                 cfg->maxCTAs);
    else if ((lo && *lo) || (hi && *hi))
        snprintf(ci->channels, sizeof ci->channels, "%.16s..%.16s", lo && *lo ? lo : "1",
                 hi && *hi ? hi : "NCCL's");
    else
        snprintf(ci->channels, sizeof ci->channels, "NCCL's choice");
}

/* What pinning changed, for the note nccl.override. */
struct pin_notes {
    char text[512];
};

static void pin_note(struct pin_notes *n, const char *fmt, const char *a, const char *b,
                     const char *c)
{
    size_t len = strlen(n->text);
    snprintf(n->text + len, sizeof n->text - len, "%s", len ? "; " : "");
    len = strlen(n->text);
    snprintf(n->text + len, sizeof n->text - len, fmt, a, b, c);
}

/* Puts back each NCCL_* variable of the policy that the process now holds
 * differently (or had differently at start-up, under refuse). Returns 0,
 * or -1 when [nccl] conflict = refuse and one differs (said on stderr). */
static int pin_env(struct pin_notes *notes)
{
    for (int i = 0; i < env_count(); i++) {
        const struct env_setting *s = env_get(i);
        if (strncmp(s->name, "NCCL_", 5) != 0)
            continue;
        const char *now = core_getenv(s->name);
        int changed = !now || strcmp(now, s->value) != 0;
        int at_start = s->origin == ENV_POLICY_OVER_USER && strcmp(s->user, s->value) != 0;
        if (core_cfg.nccl_conflict == NCCL_CONFLICT_REFUSE && (changed || at_start)) {
            core_log(DS_LOG_QUIET, "%s=%s was set by the program, but the policy pins it to %s "
                     "(%s) and says [nccl] conflict = refuse: remove the program's setting, or "
                     "use conflict = override", s->name, changed ? (now ? now : "(unset)")
                     : s->user, s->value, s->where);
            return -1;
        }
        if (changed) {
            pin_note(notes, "%s=%s->%s", s->name, now ? now : "(unset)", s->value);
            core_setenv(s->name, s->value);
        }
    }
    return 0;
}

/* A copy of the program's config with CollNet off and the CTA bounds at
 * the policy's channel count; *copy is malloc'd (the caller frees it),
 * NULL when cfg is. */
static ncclConfig_t *pin_config(const ncclConfig_t *cfg, struct pin_notes *notes)
{
    if (!cfg)
        return NULL;
    size_t size = cfg->size > sizeof *cfg ? cfg->size : sizeof *cfg;
    ncclConfig_t *c = calloc(1, size);
    if (!c)
        return (ncclConfig_t *)cfg;
    memcpy(c, cfg, cfg->size < size ? cfg->size : size);
    if (NCCL_CONFIG_HAS(c, collnetEnable) && c->collnetEnable != 0) {
        pin_note(notes, "%s%s%s", "config.collnetEnable->0", "", "");
        c->collnetEnable = 0;
    }
    const char *ch = NULL;
    for (int i = 0; i < env_count(); i++)
        if (strcmp(env_get(i)->name, "NCCL_MAX_NCHANNELS") == 0)
            ch = env_get(i)->value;
    if (ch && NCCL_CONFIG_HAS(c, maxCTAs)) {
        int n = atoi(ch);
        if ((c->minCTAs != NCCL_CONFIG_UNDEF_INT && c->minCTAs != n) ||
            (c->maxCTAs != NCCL_CONFIG_UNDEF_INT && c->maxCTAs != n)) {
            pin_note(notes, "config.minCTAs,maxCTAs->%s%s%s", ch, "", "");
            c->minCTAs = c->maxCTAs = n;
        }
    }
    return c;
}

static void rec_config(struct trace_rec *r, const ncclConfig_t *cfg)
{
    if (!cfg)
        return;
    if (NCCL_CONFIG_HAS(cfg, maxCTAs)) {
        trace_rec_int(r, "config.minCTAs", cfg->minCTAs);
        trace_rec_int(r, "config.maxCTAs", cfg->maxCTAs);
    }
    if (NCCL_CONFIG_HAS(cfg, collnetEnable))
        trace_rec_int(r, "config.collnetEnable", cfg->collnetEnable);
    if (NCCL_CONFIG_HAS(cfg, blocking))
        trace_rec_int(r, "config.blocking", cfg->blocking);
}

/* Everything creation shares: pin (pinned and canonical modes), make
 * the communicator(s) with `make`, name them, record. */
struct create {
    const char *api;
    ncclConfig_t *cfg; /* the program's, or NULL */
    ncclComm_t *out;
    int n;             /* communicators made (InitAll: ndev) */
    int nranks, rank;  /* -1: ask NCCL (split, shrink) */
    char id[64];       /* the first's identity; InitAll: all alike */
    int color, key;    /* split only, else 0 */
    int is_split;      /* split or shrink: a child of `parent` */
    ncclUniqueId uid;      /* InitRank* */
    const int *devlist;    /* InitAll */
    ncclComm_t parent;     /* split, shrink */
    int nid;               /* InitRankScalable: ids, the unique ids */
    ncclUniqueId *ids;
    int is_shrink;         /* shrink: the ranks left out, and the flags */
    int *exclude, nexclude, flags;
};

static ncclResult_t create(struct create *k, ncclResult_t (*make)(struct create *k,
                                                                  ncclConfig_t *cfg))
{
    struct nccl_call c;
    if (!nccl_enter(&c))
        return make(k, k->cfg);
    struct pin_notes notes = { "" };
    ncclConfig_t *cfg = k->cfg;
    ncclResult_t st;
    if (c.mode != NCCL_MODE_PASSTHROUGH && pin_env(&notes) != 0) {
        st = ncclInvalidUsage;
    } else {
        if (c.mode != NCCL_MODE_PASSTHROUGH)
            cfg = pin_config(k->cfg, &notes);
        st = make(k, cfg);
    }
    struct nccl_comm_info ci = { "", k->rank, k->nranks, 0, 0, "", "", "" };
    snprintf(ci.id, sizeof ci.id, "%s", k->id);
    decision(&ci, cfg);
    /* A non-blocking communicator (config.blocking = 0) is made, but not
     * ready yet: ncclInProgress. Its handle is known already. */
    int made = st == ncclSuccess || st == ncclInProgress;
    for (int i = 0; made && i < k->n; i++) {
        if (k->out[i] == NULL)
            continue; /* a split's NCCL_SPLIT_NOCOLOR */
        struct nccl_comm_info one = ci;
        if (k->n > 1)
            one.rank = i;
        if (k->is_split) {
            struct nccl_comm_info asked;
            nccl_comm_get(k->out[i], &asked);
            ci.rank = one.rank = asked.rank;
            ci.nranks = one.nranks = asked.nranks;
        }
        comm_put(k->out[i], &one);
    }
    if (c.traced) {
        struct trace_rec r;
        trace_rec_begin(&r, k->api);
        nccl_rec_comm(&r, &ci, c.mode);
        if (k->is_split && !k->is_shrink) {
            trace_rec_int(&r, "color", k->color);
            trace_rec_int(&r, "key", k->key);
        }
        if (k->is_shrink) {
            trace_rec_int(&r, "excluded", k->nexclude);
            trace_rec_int(&r, "flags", k->flags);
        }
        if (k->ids)
            trace_rec_int(&r, "nid", k->nid);
        if (k->n > 1)
            trace_rec_int(&r, "ndev", k->n);
        rec_config(&r, cfg);
        trace_rec_int(&r, "status", st);
        if (notes.text[0])
            trace_rec_note(&r, "nccl.override", notes.text);
        trace_rec_commit(&r);
    }
    if (cfg != k->cfg)
        free(cfg);
    nccl_leave();
    return st;
}

/* Not recorded: the id is random. Wrapped so that a launcher that only
 * makes the id counts as reached (shim/cuda/reach.c). */
DETSHIM_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    NCCL_REAL_FN(ncclGetUniqueId_fn *, ncclGetUniqueId);
    struct nccl_call c;
    if (!nccl_enter(&c))
        return real(id);
    ncclResult_t st = real(id);
    nccl_leave();
    return st;
}

/* ncclCommInitRank and ncclCommInitRankConfig. A pinned config for a
 * call that had none is never made. */
static ncclResult_t make_init(struct create *k, ncclConfig_t *cfg)
{
    NCCL_REAL_FN(ncclCommInitRankConfig_fn *, ncclCommInitRankConfig);
    return real(k->out, k->nranks, k->uid, k->rank, cfg);
}

static ncclResult_t make_init_plain(struct create *k, ncclConfig_t *cfg)
{
    NCCL_REAL_FN(ncclCommInitRank_fn *, ncclCommInitRank);
    (void)cfg;
    return real(k->out, k->nranks, k->uid, k->rank);
}

static ncclResult_t init_rank(const char *api, ncclComm_t *comm, int nranks, ncclUniqueId id,
                              int rank, ncclConfig_t *cfg, int with_config)
{
    struct create k = { .api = api, .cfg = cfg, .out = comm, .n = 1, .nranks = nranks,
                        .rank = rank, .uid = id };
    snprintf(k.id, sizeof k.id, "w%u", atomic_fetch_add(&inits, 1));
    return create(&k, with_config ? make_init : make_init_plain);
}

DETSHIM_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                                             int rank)
{
    return init_rank("ncclCommInitRank", comm, nranks, id, rank, NULL, 0);
}

DETSHIM_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks,
                                                   ncclUniqueId id, int rank,
                                                   ncclConfig_t *config)
{
    return init_rank("ncclCommInitRankConfig", comm, nranks, id, rank, config, 1);
}

static ncclResult_t make_all(struct create *k, ncclConfig_t *cfg)
{
    NCCL_REAL_FN(ncclCommInitAll_fn *, ncclCommInitAll);
    (void)cfg;
    return real(k->out, k->n, k->devlist);
}

DETSHIM_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist)
{
    struct create k = { .api = "ncclCommInitAll", .out = comm, .n = ndev, .nranks = ndev,
                        .devlist = devlist };
    snprintf(k.id, sizeof k.id, "a%u", atomic_fetch_add(&initalls, 1));
    return create(&k, make_all);
}

static ncclResult_t make_split(struct create *k, ncclConfig_t *cfg)
{
    NCCL_REAL_FN(ncclCommSplit_fn *, ncclCommSplit);
    return real(k->parent, k->color, k->key, k->out, cfg);
}

DETSHIM_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                                          ncclComm_t *newcomm, ncclConfig_t *config)
{
    struct nccl_comm_info parent;
    nccl_comm_get(comm, &parent);
    struct create k = { .api = "ncclCommSplit", .cfg = config, .out = newcomm, .n = 1,
                        .nranks = -1, .rank = -1, .color = color, .key = key, .is_split = 1,
                        .parent = comm };
    snprintf(k.id, sizeof k.id, "%.40s/s%uc%d", parent.id, comm_next_split(comm), color);
    return create(&k, make_split);
}

/* A world communicator made from several unique ids: named and pinned
 * as InitRank's. */
static ncclResult_t make_scalable(struct create *k, ncclConfig_t *cfg)
{
    NCCL_REAL_FN(ncclCommInitRankScalable_fn *, ncclCommInitRankScalable);
    return real(k->out, k->nranks, k->rank, k->nid, k->ids, cfg);
}

DETSHIM_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks,
                                                     int myrank, int nId,
                                                     ncclUniqueId *commIds,
                                                     ncclConfig_t *config)
{
    struct create k = { .api = "ncclCommInitRankScalable", .cfg = config, .out = newcomm,
                        .n = 1, .nranks = nranks, .rank = myrank, .nid = nId,
                        .ids = commIds };
    snprintf(k.id, sizeof k.id, "w%u", atomic_fetch_add(&inits, 1));
    return create(&k, make_scalable);
}

/* The parent without the excluded ranks (which do not call it): a child
 * of the parent, named <parent>/k<n> from the parent's count of children
 * (splits and shrinks alike), its rank and size asked from NCCL. */
static ncclResult_t make_shrink(struct create *k, ncclConfig_t *cfg)
{
    NCCL_REAL_FN(ncclCommShrink_fn *, ncclCommShrink);
    return real(k->parent, k->exclude, k->nexclude, k->out, cfg, k->flags);
}

DETSHIM_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList,
                                           int excludeRanksCount, ncclComm_t *newcomm,
                                           ncclConfig_t *config, int shrinkFlags)
{
    struct nccl_comm_info parent;
    nccl_comm_get(comm, &parent);
    struct create k = { .api = "ncclCommShrink", .cfg = config, .out = newcomm, .n = 1,
                        .nranks = -1, .rank = -1, .is_split = 1, .parent = comm,
                        .is_shrink = 1, .exclude = excludeRanksList, .nexclude = excludeRanksCount, .flags = shrinkFlags };
    snprintf(k.id, sizeof k.id, "%.40s/k%u", parent.id, comm_next_split(comm));
    return create(&k, make_shrink);
}
