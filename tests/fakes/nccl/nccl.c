/* A fake NCCL (libnccl.so.2) for tests: the ranks of a communicator are
 * processes (or threads, ncclCommInitAll) on this machine, meeting in a
 * POSIX shared-memory segment whose name is the unique id; "device
 * memory" is host memory, as for the fake libcuda, which this library
 * links as the real one does. Every call is synchronous.
 *
 * Its sums really depend on what NCCL's would: the algorithm (NCCL_ALGO,
 * else by message size: Tree up to 64 KiB, Ring above), the protocol
 * (NCCL_PROTO: LL halves the ring's chunks) and the channel count
 * (NCCL_MIN/MAX_NCHANNELS or the config's maxCTAs; unset, rank 0 draws it
 * from 1..4 from the clock and the pid, so it changes run to run as a
 * topology-dependent choice may). Ring: the buffer is cut into
 * nranks*channels chunks, and chunk c is summed around the ring starting
 * at rank c+1. Tree: pairwise halving over the ranks, ascending order on
 * even channels, descending on odd ones. Collective work is done in
 * rounds of at most SLOT bytes per rank through the segment; send/recv go
 * through one mailbox per ordered pair of ranks. Operations inside
 * ncclGroupStart/End run at ncclGroupEnd, one thread per communicator
 * (and per peer and direction for send/recv), so a single thread can
 * drive every rank of ncclCommInitAll.
 *
 * FAKE_NCCL_LOG=path appends one line per collective: rank, operation,
 * algorithm, protocol, channels, count, so a test can check which path
 * was taken. Segments stay mapped until exit.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "nccl/nccl_api.h"
#include "nccl/nccl_elem.h"

#define FAKE_EXPORT __attribute__((visibility("default")))
#define MAX_RANKS 16
#define SLOT (1u << 20)
#define P2P_SLOT (256u << 10)

enum algo { ALGO_AUTO, ALGO_RING, ALGO_TREE };
enum proto { PROTO_AUTO, PROTO_SIMPLE, PROTO_LL, PROTO_LL128 };
static const char *const algo_names[] = { "auto", "Ring", "Tree" };
static const char *const proto_names[] = { "auto", "Simple", "LL", "LL128" };

struct mailbox {
    atomic_size_t len; /* bytes waiting + 1; 0: empty */
    unsigned char data[P2P_SLOT];
};

struct seg {
    atomic_int ready;
    int nranks, algo, proto, nchannels;
    pthread_barrier_t bar;
    int colors[MAX_RANKS], keys[MAX_RANKS];
    unsigned char slots[MAX_RANKS][SLOT];
    struct mailbox box[MAX_RANKS][MAX_RANKS]; /* [from][to] */
};

struct ncclComm {
    struct seg *s;
    int rank, nranks;
    char name[96];
    unsigned nsplits;
};

static ncclResult_t fail(const char *what)
{
    fprintf(stderr, "fake libnccl: %s\n", what);
    return ncclInvalidArgument;
}

static int env_int(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : 0;
}

static int parse_algo(void)
{
    const char *v = getenv("NCCL_ALGO");
    if (!v || !*v)
        return ALGO_AUTO;
    if (strcasestr(v, "tree") && !strcasestr(v, "ring"))
        return ALGO_TREE;
    return strcasestr(v, "ring") ? ALGO_RING : ALGO_AUTO;
}

static int parse_proto(void)
{
    const char *v = getenv("NCCL_PROTO");
    if (!v || !*v)
        return PROTO_AUTO;
    if (strcasecmp(v, "LL128") == 0)
        return PROTO_LL128;
    if (strcasecmp(v, "LL") == 0)
        return PROTO_LL;
    return strcasecmp(v, "Simple") == 0 ? PROTO_SIMPLE : PROTO_AUTO;
}

/* The channel count rank 0 decides: the config's maxCTAs, else the
 * environment's bounds, else a draw from 1..4. */
static int pick_channels(const ncclConfig_t *cfg)
{
    int n = 0;
    if (cfg && NCCL_CONFIG_HAS(cfg, maxCTAs) && cfg->maxCTAs != NCCL_CONFIG_UNDEF_INT)
        n = cfg->maxCTAs;
    if (n <= 0)
        n = env_int("NCCL_MAX_NCHANNELS");
    if (n <= 0)
        n = env_int("NCCL_MIN_NCHANNELS");
    if (n <= 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t z = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_sec;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        n = 1 + (int)((z ^ (z >> 31)) % 4);
    }
    return n > MAX_RANKS ? MAX_RANKS : n;
}

static void barrier(struct seg *s)
{
    pthread_barrier_wait(&s->bar);
}

/* Maps the segment `name`; rank 0 sets it up. With `together`, every rank
 * is in this process (ncclCommInitAll) and no one waits. */
static ncclResult_t attach(struct ncclComm **out, const char *name, int nranks, int rank,
                           const ncclConfig_t *cfg, int together)
{
    if (nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks)
        return fail("bad nranks or rank (1..16 ranks)");
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(struct seg)) != 0)
        return fail("cannot create the shared segment");
    struct seg *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (s == MAP_FAILED)
        return fail("cannot map the shared segment");
    if (rank == 0) {
        pthread_barrierattr_t a;
        pthread_barrierattr_init(&a);
        pthread_barrierattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
        pthread_barrier_init(&s->bar, &a, (unsigned)nranks);
        s->nranks = nranks;
        s->algo = parse_algo();
        s->proto = parse_proto();
        s->nchannels = pick_channels(cfg);
        atomic_store(&s->ready, 1);
    } else {
        for (int i = 0; !atomic_load(&s->ready); i++) {
            if (i > 6000000)
                return fail("rank 0 never came");
            sched_yield();
        }
    }
    struct ncclComm *c = calloc(1, sizeof *c);
    if (!c)
        return ncclSystemError;
    *c = (struct ncclComm){ s, rank, nranks, "", 0 };
    snprintf(c->name, sizeof c->name, "%s", name);
    if (!together) {
        barrier(s);
        if (rank == 0)
            shm_unlink(name);
    }
    *out = c;
    return ncclSuccess;
}

static void log_op(const struct ncclComm *c, const char *op, int algo, int proto, size_t count)
{
    const char *path = getenv("FAKE_NCCL_LOG");
    if (!path || !*path)
        return;
    char line[256];
    int n = snprintf(line, sizeof line, "rank=%d nranks=%d op=%s algo=%s proto=%s channels=%d "
                     "count=%zu\n", c->rank, c->nranks, op, algo_names[algo], proto_names[proto],
                     c->s->nchannels, count);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) {
        if (write(fd, line, (size_t)n) < 0)
            perror("fake libnccl: FAKE_NCCL_LOG");
        close(fd);
    }
}

/* How a collective of `bytes` runs: the segment's choice, else by size. */
static void decide(const struct seg *s, size_t bytes, int *algo, int *proto)
{
    *algo = s->algo != ALGO_AUTO ? s->algo : bytes <= (64u << 10) ? ALGO_TREE : ALGO_RING;
    *proto = s->proto != PROTO_AUTO ? s->proto : bytes <= (64u << 10) ? PROTO_LL : PROTO_SIMPLE;
}

/* Reduces ranks order[lo..hi) of element x (pointers into the slots) into
 * acc, halving pairwise. */
static void tree_sum(int t, int op, const int *order, int lo, int hi, unsigned char *const *x,
                     void *acc)
{
    size_t es = nccl_type_size(t);
    if (hi - lo == 1) {
        memcpy(acc, x[order[lo]], es);
        return;
    }
    int mid = lo + (hi - lo + 1) / 2;
    unsigned char right[8];
    tree_sum(t, op, order, lo, mid, x, acc);
    tree_sum(t, op, order, mid, hi, x, right);
    nccl_elem_combine(t, op, acc, right);
}

/* Element i of `count` (global index), the ranks' values at x[r]: reduced
 * in the order algo, proto and channels give, into out. */
static void reduce_elem(const struct ncclComm *c, int t, int op, int algo, int proto,
                        size_t i, size_t count, unsigned char *const *x, void *out)
{
    int n = c->nranks, ch = c->s->nchannels;
    size_t es = nccl_type_size(t);
    if (algo == ALGO_RING) {
        size_t chunks = (size_t)n * (size_t)ch * (proto == PROTO_LL ? 2 : 1);
        size_t chunk = (count + chunks - 1) / chunks;
        int start = (int)((i / (chunk ? chunk : 1) + 1) % (size_t)n);
        memcpy(out, x[start], es);
        for (int j = 1; j < n; j++)
            nccl_elem_combine(t, op, out, x[(start + j) % n]);
    } else {
        size_t per = (count + (size_t)ch - 1) / (size_t)ch;
        int order[MAX_RANKS], odd = (int)((i / (per ? per : 1)) & 1);
        for (int r = 0; r < n; r++)
            order[r] = odd ? n - 1 - r : r;
        tree_sum(t, op, order, 0, n, x, out);
    }
    nccl_elem_finish(t, op, out, n);
}

/* The shared work of AllReduce (root < 0), Reduce (root) and
 * ReduceScatter (scatter): `count` elements per block, nblocks blocks per
 * rank's send buffer, rank r's result for block r (scatter) or all. */
static ncclResult_t reduce_common(const char *name, const void *send, void *recv, size_t count,
                                  int t, int op, int root, int scatter, struct ncclComm *c)
{
    size_t es = nccl_type_size(t);
    if (!es || (int)op >= ncclNumOps || t == ncclFloat8e4m3 || t == ncclFloat8e5m2)
        return fail("type or operator not supported by the fake");
    int n = c->nranks, nb = scatter ? n : 1, algo, proto;
    size_t total = count * (size_t)nb;
    decide(c->s, total * es, &algo, &proto);
    log_op(c, name, algo, proto, count);
    size_t per_round = SLOT / es / (size_t)nb;
    for (size_t off = 0; off < count; off += per_round) {
        size_t m = count - off < per_round ? count - off : per_round;
        for (int b = 0; b < nb; b++)
            memcpy(c->s->slots[c->rank] + (size_t)b * m * es,
                   (const char *)send + ((size_t)b * count + off) * es, m * es);
        barrier(c->s);
        if (root < 0 || root == c->rank) {
            int b = scatter ? c->rank : 0;
            for (size_t j = 0; j < m; j++) {
                unsigned char *x[MAX_RANKS];
                for (int r = 0; r < n; r++)
                    x[r] = c->s->slots[r] + ((size_t)b * m + j) * es;
                reduce_elem(c, t, op, algo, proto, (size_t)b * count + off + j, total, x,
                            (char *)recv + (off + j) * es);
            }
        }
        barrier(c->s);
    }
    return ncclSuccess;
}

/* AllGather (root < 0) or Broadcast from root. */
static ncclResult_t copy_common(const char *name, const void *send, void *recv, size_t count,
                                int t, int root, struct ncclComm *c)
{
    size_t es = nccl_type_size(t);
    if (!es)
        return fail("type not supported by the fake");
    int algo, proto;
    decide(c->s, count * es, &algo, &proto);
    log_op(c, name, algo, proto, count); /* data moves alike whatever the algorithm */
    size_t per_round = SLOT / es;
    for (size_t off = 0; off < count; off += per_round) {
        size_t m = count - off < per_round ? count - off : per_round;
        if (root < 0 || root == c->rank)
            memcpy(c->s->slots[c->rank], (const char *)send + off * es, m * es);
        barrier(c->s);
        for (int r = 0; r < c->nranks; r++)
            if (root < 0 || r == root)
                memmove((char *)recv + ((root < 0 ? (size_t)r * count : 0) + off) * es,
                        c->s->slots[r], m * es);
        barrier(c->s);
    }
    return ncclSuccess;
}

/* AlltoAll (root < 0: every rank sends chunk d to rank d), Gather (to
 * root) or Scatter (from root, scatter set): one destination at a time,
 * in rounds of at most SLOT bytes per rank through the segment. */
static ncclResult_t route_common(const char *name, const void *send, void *recv, size_t count,
                                 int t, int root, int scatter, struct ncclComm *c)
{
    size_t es = nccl_type_size(t);
    if (!es)
        return fail("type not supported by the fake");
    int algo, proto;
    decide(c->s, count * es, &algo, &proto);
    log_op(c, name, algo, proto, count);
    size_t per_round = SLOT / es;
    for (int d = 0; d < c->nranks; d++) {
        if (root >= 0 && !scatter && d != root)
            continue; /* a gather has one destination */
        for (size_t off = 0; off < count; off += per_round) {
            size_t m = count - off < per_round ? count - off : per_round;
            size_t from = ((root < 0 || scatter) ? (size_t)d * count : 0) + off;
            if (!scatter || c->rank == root)
                memcpy(c->s->slots[c->rank], (const char *)send + from * es, m * es);
            barrier(c->s);
            if (c->rank == d)
                for (int r = 0; r < c->nranks; r++)
                    if (!scatter || r == root)
                        memcpy((char *)recv + ((scatter ? 0 : (size_t)r * count) + off) * es,
                               c->s->slots[r], m * es);
            barrier(c->s);
        }
    }
    return ncclSuccess;
}

static ncclResult_t p2p(void *buf, size_t bytes, int peer, struct ncclComm *c, int sending)
{
    if (peer < 0 || peer >= c->nranks)
        return fail("bad peer");
    struct mailbox *mb = sending ? &c->s->box[c->rank][peer] : &c->s->box[peer][c->rank];
    for (size_t off = 0; off < bytes;) {
        while ((atomic_load(&mb->len) != 0) == sending)
            sched_yield();
        size_t m = bytes - off < P2P_SLOT ? bytes - off : P2P_SLOT;
        if (sending) {
            memcpy(mb->data, (char *)buf + off, m);
            atomic_store(&mb->len, m + 1);
        } else {
            m = atomic_load(&mb->len) - 1;
            memcpy((char *)buf + off, mb->data, m);
            atomic_store(&mb->len, 0);
        }
        off += m;
    }
    return ncclSuccess;
}

/* ---- groups: operations queued between GroupStart and GroupEnd ---- */

enum op_kind { OP_REDUCE, OP_COPY, OP_ROUTE, OP_SEND, OP_RECV };
struct op {
    int kind;
    const char *name;
    const void *send;
    void *recv;
    size_t count;
    int type, redop, root, scatter, peer;
    struct ncclComm *comm;
};
#define MAX_QUEUED 256
static _Thread_local int group_depth;
static _Thread_local struct op queued[MAX_QUEUED];
static _Thread_local int nqueued;

static ncclResult_t run_op(const struct op *o)
{
    switch (o->kind) {
    case OP_REDUCE:
        return reduce_common(o->name, o->send, o->recv, o->count, o->type, o->redop, o->root,
                             o->scatter, o->comm);
    case OP_COPY:
        return copy_common(o->name, o->send, o->recv, o->count, o->type, o->root, o->comm);
    case OP_ROUTE:
        return route_common(o->name, o->send, o->recv, o->count, o->type, o->root, o->scatter,
                            o->comm);
    default:
        return p2p(o->kind == OP_SEND ? (void *)o->send : o->recv,
                   o->count * nccl_type_size(o->type), o->peer, o->comm, o->kind == OP_SEND);
    }
}

static ncclResult_t submit(struct op o)
{
    if (!o.comm)
        return fail("no communicator");
    if (group_depth == 0)
        return run_op(&o);
    if (nqueued == MAX_QUEUED)
        return fail("too many operations in one group");
    queued[nqueued++] = o;
    return ncclSuccess;
}

/* Operations of one lane run in order on one thread. */
struct lane {
    struct ncclComm *comm;
    int key; /* 0: collectives; 1 + 2*peer (+1 for recv): point-to-point */
    pthread_t thread;
    ncclResult_t rc;
    struct op *ops;
    int nops;
};

static void *run_lane(void *arg)
{
    struct lane *l = arg;
    l->rc = ncclSuccess;
    for (int i = 0; i < l->nops; i++) {
        const struct op *o = &l->ops[i];
        int key = o->kind == OP_SEND ? 1 + 2 * o->peer : o->kind == OP_RECV ? 2 + 2 * o->peer : 0;
        if (o->comm == l->comm && key == l->key && l->rc == ncclSuccess)
            l->rc = run_op(o);
    }
    return NULL;
}

static ncclResult_t run_group(void)
{
    struct op ops[MAX_QUEUED];
    int nops = nqueued;
    memcpy(ops, queued, (size_t)nops * sizeof *ops);
    nqueued = 0;
    static _Thread_local struct lane lanes[MAX_QUEUED];
    int nlanes = 0;
    for (int i = 0; i < nops; i++) {
        int key = ops[i].kind == OP_SEND ? 1 + 2 * ops[i].peer
                  : ops[i].kind == OP_RECV ? 2 + 2 * ops[i].peer : 0;
        int found = 0;
        for (int l = 0; l < nlanes && !found; l++)
            found = lanes[l].comm == ops[i].comm && lanes[l].key == key;
        if (!found)
            lanes[nlanes++] = (struct lane){ ops[i].comm, key, 0, ncclSuccess, ops, nops };
    }
    if (nlanes == 1) {
        run_lane(&lanes[0]);
        return lanes[0].rc;
    }
    for (int l = 0; l < nlanes; l++)
        if (pthread_create(&lanes[l].thread, NULL, run_lane, &lanes[l]) != 0)
            return fail("cannot start a group thread");
    ncclResult_t rc = ncclSuccess;
    for (int l = 0; l < nlanes; l++) {
        pthread_join(lanes[l].thread, NULL);
        if (lanes[l].rc != ncclSuccess)
            rc = lanes[l].rc;
    }
    return rc;
}

/* ---- the API ---- */

FAKE_EXPORT ncclResult_t ncclGetVersion(int *version)
{
    *version = 22809;
    return ncclSuccess;
}

FAKE_EXPORT const char *ncclGetErrorString(ncclResult_t r)
{
    return r == ncclSuccess ? "no error" : "fake libnccl error";
}

/* The id: a segment name unique to this process and moment. The real
 * library's internal calls do not go through its exported names, so
 * ncclCommInitAll calls this, not ncclGetUniqueId. */
static void make_id(ncclUniqueId *id)
{
    static atomic_uint counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "/detshim-fakenccl-%d-%u-%ld", (int)getpid(),
             atomic_fetch_add(&counter, 1), (long)ts.tv_nsec);
}

FAKE_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    make_id(id);
    return ncclSuccess;
}

static ncclResult_t init_rank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                              ncclConfig_t *config)
{
    if (id.internal[0] != '/')
        return fail("not a unique id of this fake");
    char name[NCCL_UNIQUE_ID_BYTES + 1];
    memcpy(name, id.internal, NCCL_UNIQUE_ID_BYTES);
    name[NCCL_UNIQUE_ID_BYTES] = 0;
    return attach(comm, name, nranks, rank, config, 0);
}

FAKE_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id,
                                                int rank, ncclConfig_t *config)
{
    return init_rank(comm, nranks, id, rank, config);
}

FAKE_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                                          int rank)
{
    return init_rank(comm, nranks, id, rank, NULL);
}

FAKE_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
    (void)devlist;
    ncclUniqueId id;
    make_id(&id);
    for (int r = 0; r < ndev; r++) {
        ncclResult_t rc = attach(&comms[r], id.internal, ndev, r, NULL, 1);
        if (rc != ncclSuccess)
            return rc;
    }
    shm_unlink(id.internal);
    return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                                       ncclConfig_t *config)
{
    struct seg *s = comm->s;
    s->colors[comm->rank] = color;
    s->keys[comm->rank] = key;
    barrier(s);
    int newrank = 0, newn = 0;
    for (int r = 0; r < comm->nranks; r++) {
        if (s->colors[r] != color)
            continue;
        newn++;
        if (s->keys[r] < key || (s->keys[r] == key && r < comm->rank))
            newrank++;
    }
    barrier(s);
    unsigned k = comm->nsplits++;
    *newcomm = NULL;
    if (color == NCCL_SPLIT_NOCOLOR)
        return ncclSuccess;
    char name[160];
    snprintf(name, sizeof name, "%s.s%u.c%d", comm->name, k, color);
    return attach(newcomm, name, newn, newrank, config, 0);
}

FAKE_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank,
                                                  int nid, ncclUniqueId *ids,
                                                  ncclConfig_t *config)
{
    if (nid < 1 || !ids)
        return fail("ncclCommInitRankScalable without a unique id");
    return init_rank(comm, nranks, ids[0], rank, config);
}

/* The excluded ranks do not call it; the others keep their order. */
FAKE_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *exclude, int nexclude,
                                        ncclComm_t *newcomm, ncclConfig_t *config, int flags)
{
    (void)flags;
    int newrank = comm->rank;
    for (int i = 0; i < nexclude; i++) {
        if (exclude[i] == comm->rank)
            return fail("an excluded rank called ncclCommShrink");
        newrank -= exclude[i] < comm->rank;
    }
    char name[160];
    snprintf(name, sizeof name, "%s.k%u", comm->name, comm->nsplits++);
    return attach(newcomm, name, comm->nranks - nexclude, newrank, config, 0);
}

FAKE_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
    *count = comm->nranks;
    return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
    *rank = comm->rank;
    return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device)
{
    *device = comm->rank;
    return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    free(comm);
    return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
    (void)comm;
    return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclMemAlloc(void **ptr, size_t size)
{
    *ptr = malloc(size ? size : 1);
    return *ptr ? ncclSuccess : ncclSystemError;
}

FAKE_EXPORT ncclResult_t ncclMemFree(void *ptr)
{
    free(ptr);
    return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                                       ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm,
                                       cudaStream_t stream)
{
    (void)stream;
    return submit((struct op){ OP_REDUCE, "AllReduce", send, recv, count, t, op, -1, 0, 0, comm });
}

FAKE_EXPORT ncclResult_t ncclReduce(const void *send, void *recv, size_t count, ncclDataType_t t,
                                    ncclRedOp_t op, int root, ncclComm_t comm,
                                    cudaStream_t stream)
{
    (void)stream;
    if (root < 0 || (comm && root >= comm->nranks))
        return fail("bad root");
    return submit((struct op){ OP_REDUCE, "Reduce", send, recv, count, t, op, root, 0, 0, comm });
}

FAKE_EXPORT ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recvcount,
                                           ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm,
                                           cudaStream_t stream)
{
    (void)stream;
    return submit((struct op){ OP_REDUCE, "ReduceScatter", send, recv, recvcount, t, op, -1, 1,
                               0, comm });
}

FAKE_EXPORT ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendcount,
                                       ncclDataType_t t, ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    return submit((struct op){ OP_COPY, "AllGather", send, recv, sendcount, t, 0, -1, 0, 0,
                               comm });
}

FAKE_EXPORT ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count,
                                       ncclDataType_t t, int root, ncclComm_t comm,
                                       cudaStream_t stream)
{
    (void)stream;
    if (root < 0 || (comm && root >= comm->nranks))
        return fail("bad root");
    return submit((struct op){ OP_COPY, "Broadcast", send, recv, count, t, 0, root, 0, 0, comm });
}

FAKE_EXPORT ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t t, int root,
                                   ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    if (root < 0 || (comm && root >= comm->nranks))
        return fail("bad root");
    return submit((struct op){ OP_COPY, "Broadcast", buff, buff, count, t, 0, root, 0, 0, comm });
}

FAKE_EXPORT ncclResult_t ncclAlltoAll(const void *send, void *recv, size_t count,
                                      ncclDataType_t t, ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    return submit((struct op){ OP_ROUTE, "AlltoAll", send, recv, count, t, 0, -1, 0, 0, comm });
}

FAKE_EXPORT ncclResult_t ncclGather(const void *send, void *recv, size_t count,
                                    ncclDataType_t t, int root, ncclComm_t comm,
                                    cudaStream_t stream)
{
    (void)stream;
    if (root < 0 || (comm && root >= comm->nranks))
        return fail("bad root");
    return submit((struct op){ OP_ROUTE, "Gather", send, recv, count, t, 0, root, 0, 0, comm });
}

FAKE_EXPORT ncclResult_t ncclScatter(const void *send, void *recv, size_t count,
                                     ncclDataType_t t, int root, ncclComm_t comm,
                                     cudaStream_t stream)
{
    (void)stream;
    if (root < 0 || (comm && root >= comm->nranks))
        return fail("bad root");
    return submit((struct op){ OP_ROUTE, "Scatter", send, recv, count, t, 0, root, 1, 0, comm });
}

FAKE_EXPORT ncclResult_t ncclSend(const void *send, size_t count, ncclDataType_t t, int peer,
                                  ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    return submit((struct op){ OP_SEND, "Send", send, NULL, count, t, 0, -1, 0, peer, comm });
}

FAKE_EXPORT ncclResult_t ncclRecv(void *recv, size_t count, ncclDataType_t t, int peer,
                                  ncclComm_t comm, cudaStream_t stream)
{
    (void)stream;
    return submit((struct op){ OP_RECV, "Recv", NULL, recv, count, t, 0, -1, 0, peer, comm });
}

/* NCCL 2.29's one-sided put: the fake has no registered windows and moves
 * no data; it checks the arguments a real NCCL would and reads the source,
 * so a test can see the shim record the call (test-nccl.sh). */
FAKE_EXPORT ncclResult_t ncclPutSignal(const void *localbuff, size_t count, ncclDataType_t t,
                                       int peer, ncclWindow_t peer_win, size_t peer_win_offset,
                                       int sig_idx, int ctx, unsigned int flags, ncclComm_t comm,
                                       cudaStream_t stream)
{
    (void)t; (void)peer_win_offset; (void)sig_idx; (void)ctx; (void)flags; (void)stream;
    if (!comm || peer < 0 || peer >= comm->nranks || peer == comm->rank)
        return fail("ncclPutSignal: bad peer");
    if (!peer_win || (count && !localbuff))
        return fail("ncclPutSignal: no window or no source");
    return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclGroupStart(void)
{
    group_depth++;
    return ncclSuccess;
}

FAKE_EXPORT ncclResult_t ncclGroupEnd(void)
{
    if (group_depth == 0)
        return fail("ncclGroupEnd without ncclGroupStart");
    return --group_depth == 0 && nqueued ? run_group() : ncclSuccess;
}
