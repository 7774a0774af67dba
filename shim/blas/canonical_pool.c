/* Threads and workspace for the canonical kernels: a small persistent pool
 * of worker threads that run the parts of one call (disjoint blocks of C,
 * so the thread count never changes a bit), and the per-thread packing
 * workspace. Workers are started on first need, spin briefly after a job
 * so the many small GEMMs of a training step do not pay a wake-up each,
 * then sleep. One caller uses the pool at a time; a concurrent caller runs
 * its parts on its own thread instead of waiting.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <xmmintrin.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

struct workspace {
    void *p;
    size_t cap;
};

/* Grows ws to at least `bytes` (64-byte aligned; contents not kept).
 * Returns 0, or -1 if memory is short (ws is then empty). */
static int ws_reserve(struct workspace *ws, size_t bytes)
{
    if (ws->cap >= bytes)
        return 0;
    free(ws->p);
    ws->p = NULL;
    ws->cap = 0;
    if (posix_memalign(&ws->p, 64, bytes) != 0) {
        ws->p = NULL;
        return -1;
    }
    ws->cap = bytes;
    return 0;
}

/* The calling thread's workspaces, freed when the thread exits: slot 0
 * for the parts it runs, slot 1 for canon_scratch. */
static pthread_key_t ws_key;
static pthread_once_t ws_key_once = PTHREAD_ONCE_INIT;

static void ws_free(void *v)
{
    struct workspace *ws = v;
    free(ws[0].p);
    free(ws[1].p);
    free(ws);
}

static void ws_key_make(void)
{
    (void)pthread_key_create(&ws_key, ws_free);
}

static void *ws_slot(int slot, size_t bytes)
{
    pthread_once(&ws_key_once, ws_key_make);
    struct workspace *ws = pthread_getspecific(ws_key);
    if (!ws) {
        ws = calloc(2, sizeof *ws);
        if (!ws || pthread_setspecific(ws_key, ws) != 0) {
            free(ws);
            return NULL;
        }
    }
    return ws_reserve(&ws[slot], bytes ? bytes : 64) == 0 ? ws[slot].p : NULL;
}

static void *ws_local(size_t bytes)
{
    return ws_slot(0, bytes);
}

void *canon_scratch(size_t bytes)
{
    return ws_slot(1, bytes);
}

int canon_pool_reserve(size_t bytes)
{
    return ws_local(bytes) ? 0 : -1;
}

/* ---- the pool -------------------------------------------------------- */

typedef void (*part_fn)(void *arg, int part, int nparts, void *ws);

/* Parts are claimed, not assigned: the caller and the workers take the next
 * unclaimed part from `claim` until none is left, so a worker that wakes
 * late (or never, on a busy machine) only means the caller does more. The
 * caller returns when every part is done; a worker reads the job only
 * after claiming one of its parts, which cannot happen once all are
 * claimed, so the caller's job may then go out of scope.
 *
 * A claim word holds all a worker needs to decide: the job's generation
 * (bits 63-32), its number of parts (31-16) and its next unclaimed part
 * (15-0). Read apart, a worker could pair an old job's used-up word, still
 * in place while the caller writes the next job, with the next job's
 * larger part count, and claim a part past the old job's end: it then ran
 * a part of the next job twice, and that job's `done` reached its count
 * while one part still ran (TSan saw both parts write C; a GEMM after 3
 * parts, then with 8, differed from the reference in 1 of 200 runs under
 * TSan; tests/unit/test_canonical_pool.c puts a worker in that moment). */
static struct {
    pthread_mutex_t busy; /* held by the one caller using the workers */
    pthread_mutex_t m;    /* with the conditions, for sleeping only */
    pthread_cond_t wake, finished;
    int nworkers;         /* started: workers 1 .. nworkers */
    struct workspace ws[CANON_MAX_THREADS];
    part_fn fn;           /* the job, written before `claim` is published */
    void *arg;
    atomic_int helpers;   /* workers 1 .. helpers may take parts of it */
    atomic_uint mxcsr;    /* the caller's SSE control word (rounding, FTZ, DAZ) */
    atomic_uint_least64_t worker_parts; /* run by workers since start-up */
    atomic_uint gen;            /* bumped once per job; idle workers watch it */
    atomic_uint_least64_t claim; /* CLAIM(gen, nparts, next unclaimed part) */
    atomic_int done;            /* parts of the current job finished */
    atomic_int sleepers;        /* workers asleep on `wake` */
    atomic_int caller_asleep;   /* the caller asleep on `done` */
} pool = {
    .busy = PTHREAD_MUTEX_INITIALIZER,
    .m = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .finished = PTHREAD_COND_INITIALIZER,
};

/* A forked child has none of the parent's workers, and a lock another
 * parent thread held stays held: start the pool afresh. The workspaces
 * were copied with the address space and stay usable. */
void canon_pool_fork_child(void)
{
    pthread_mutex_init(&pool.busy, NULL);
    pthread_mutex_init(&pool.m, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.finished, NULL);
    pool.nworkers = 0;
    atomic_store(&pool.helpers, 0);
    atomic_store(&pool.gen, 0);
    atomic_store(&pool.claim, 0);
    atomic_store(&pool.done, 0);
    atomic_store(&pool.sleepers, 0);
    atomic_store(&pool.caller_asleep, 0);
}

_Static_assert(CANON_MAX_PARTS <= 0xffff, "a part count and index fit 16 bits of a claim");
#define CLAIM(gen, nparts, next) \
    ((uint_least64_t)(gen) << 32 | (uint_least64_t)(nparts) << 16 | (uint_least64_t)(next))

static unsigned claim_gen(uint_least64_t c)
{
    return (unsigned)(c >> 32);
}

static int claim_nparts(uint_least64_t c)
{
    return (int)(c >> 16 & 0xffffu);
}

static int claim_next(uint_least64_t c)
{
    return (int)(c & 0xffffu);
}

/* Spins until pred(arg) holds or about `ticks` time-stamp ticks pass;
 * returns whether it holds. Past SPIN_TICKS (some 20 us here) it yields
 * the CPU between looks, so a runnable thread of the program is not kept
 * waiting by the spin. */
#define SPIN_TICKS 50000u
/* A worker looks for the next job for about 1 ms before it sleeps: waking
 * a sleeping thread took longer than a 0.5 ms part here (a VM's idle CPU),
 * and the caller then ran every part itself (trsm at n = 512 on 2 threads
 * as fast as on 1). OpenBLAS's workers spin, yielding, for about 0.1 s. */
#define WORKER_SPIN_TICKS 3000000u

static int spin_until(int (*pred)(unsigned), unsigned arg, uint64_t ticks)
{
    uint64_t t0 = __builtin_ia32_rdtsc();
    while (!pred(arg)) {
        for (int i = 0; i < 16; i++)
            __builtin_ia32_pause();
        uint64_t spent = __builtin_ia32_rdtsc() - t0;
        if (spent > ticks)
            return pred(arg);
        if (spent > SPIN_TICKS)
            sched_yield();
    }
    return 1;
}

static int gen_moved(unsigned seen)
{
    return atomic_load(&pool.gen) != seen;
}

static int all_done(unsigned nparts)
{
    return atomic_load(&pool.done) >= (int)nparts;
}

/* Claims and runs parts of job `gen` until none is left; me is 0 for the
 * caller (workspace `mine`), else a worker, which takes part only if the
 * job counts it among its helpers. A successful claim means the job is
 * still open, so what is read with it belongs to this job. */
static void run_claimed(unsigned gen, int me, void *mine)
{
    for (;;) {
        uint_least64_t c = atomic_load(&pool.claim);
        const int part = claim_next(c), nparts = claim_nparts(c);
        if (claim_gen(c) != gen || part >= nparts || me > atomic_load(&pool.helpers))
            return;
        if (!atomic_compare_exchange_weak(&pool.claim, &c, c + 1))
            continue;
        /* A worker computes as the caller would: same rounding mode and
         * flush-to-zero / denormals-are-zero, or the thread count would
         * show in the bits of a program that sets them. */
        unsigned csr = atomic_load(&pool.mxcsr);
        if (me && _mm_getcsr() != csr)
            _mm_setcsr(csr);
        pool.fn(pool.arg, part, nparts, me ? pool.ws[me].p : mine);
        if (me)
            atomic_fetch_add_explicit(&pool.worker_parts, 1, memory_order_relaxed);
        if (atomic_fetch_add(&pool.done, 1) + 1 == nparts && atomic_load(&pool.caller_asleep)) {
            pthread_mutex_lock(&pool.m);
            pthread_cond_signal(&pool.finished);
            pthread_mutex_unlock(&pool.m);
        }
    }
}

struct worker_start {
    int me;
    unsigned seen;
};

static void *worker_main(void *v)
{
    struct worker_start start = *(struct worker_start *)v;
    free(v);
    unsigned seen = start.seen;
    for (;;) {
        if (!spin_until(gen_moved, seen, WORKER_SPIN_TICKS)) {
            pthread_mutex_lock(&pool.m);
            atomic_fetch_add(&pool.sleepers, 1);
            while (!gen_moved(seen))
                pthread_cond_wait(&pool.wake, &pool.m);
            atomic_fetch_sub(&pool.sleepers, 1);
            pthread_mutex_unlock(&pool.m);
        }
        seen = atomic_load(&pool.gen);
        run_claimed(seen, start.me, NULL);
    }
    return NULL;
}

/* Starts workers until there are `want`; with pool.busy held and no job
 * running. Workers take no signals (the program's handlers expect its own
 * threads). Returns the number running. */
static int pool_grow(int want)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    while (pool.nworkers < want) {
        struct worker_start *s = malloc(sizeof *s);
        if (!s)
            break;
        s->me = pool.nworkers + 1;
        s->seen = atomic_load(&pool.gen);
        pthread_t t;
        if (pthread_create(&t, NULL, worker_main, s) != 0) {
            free(s);
            break;
        }
        pthread_detach(t);
        pool.nworkers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return pool.nworkers;
}

static int run_here(part_fn fn, void *arg, int nparts, size_t ws_bytes)
{
    void *ws = ws_local(ws_bytes);
    if (!ws)
        return -1;
    for (int part = 0; part < nparts; part++)
        fn(arg, part, nparts, ws);
    return 0;
}

int canon_pool_run(part_fn fn, void *arg, int nparts, size_t ws_bytes)
{
    return canon_pool_run_on(fn, arg, nparts, nparts, ws_bytes);
}

int canon_pool_run_on(part_fn fn, void *arg, int nparts, int threads, size_t ws_bytes)
{
    if (nparts <= 1 || threads <= 1)
        return run_here(fn, arg, nparts > 1 ? nparts : 1, ws_bytes);
    if (pthread_mutex_trylock(&pool.busy) != 0)
        return run_here(fn, arg, nparts, ws_bytes);
    void *mine = ws_local(ws_bytes);
    if (!mine) {
        pthread_mutex_unlock(&pool.busy);
        return -1;
    }
    /* Workers past the job's need, or whose workspace cannot grow, stay
     * out of this job. */
    const int want = (threads < nparts ? threads : nparts) - 1;
    int helpers = pool_grow(want);
    if (helpers > want)
        helpers = want;
    for (int w = 1; w <= helpers; w++)
        if (ws_reserve(&pool.ws[w], ws_bytes ? ws_bytes : 64) != 0)
            helpers = w - 1;

    pool.fn = fn;
    pool.arg = arg;
    atomic_store(&pool.helpers, helpers);
    atomic_store(&pool.mxcsr, _mm_getcsr());
    atomic_store(&pool.done, 0);
    unsigned gen = atomic_load(&pool.gen) + 1;
    atomic_store(&pool.claim, CLAIM(gen, nparts, 0));
    if (helpers > 0) {
        atomic_store(&pool.gen, gen);
        if (atomic_load(&pool.sleepers) > 0) {
            pthread_mutex_lock(&pool.m);
            pthread_cond_broadcast(&pool.wake);
            pthread_mutex_unlock(&pool.m);
        }
    }
    run_claimed(gen, 0, mine);
    if (!spin_until(all_done, (unsigned)nparts, SPIN_TICKS)) {
        pthread_mutex_lock(&pool.m);
        atomic_store(&pool.caller_asleep, 1);
        while (!all_done((unsigned)nparts))
            pthread_cond_wait(&pool.finished, &pool.m);
        atomic_store(&pool.caller_asleep, 0);
        pthread_mutex_unlock(&pool.m);
    }
    pthread_mutex_unlock(&pool.busy);
    return 0;
}

uint64_t canon_pool_worker_parts(void)
{
    return atomic_load(&pool.worker_parts);
}
