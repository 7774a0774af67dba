/* Threads and workspace for the canonical kernels: a small persistent pool
 * of worker threads that run the parts of one call (disjoint blocks of C,
 * so the thread count never changes a bit), and the per-thread packing
 * workspace. Workers are started on first need, spin briefly after a job
 * so the many small GEMMs of a training step do not pay a wake-up each,
 * then sleep. One caller uses the pool at a time; a concurrent caller runs
 * its parts on its own thread instead of waiting.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "detshim/canonical.h"
#include "detshim/canonical_kernels.h"

/* Pause iterations a worker (or the waiting caller) spins before it sleeps:
 * about 100 us on this machine, longer than the gap between the GEMMs of
 * one layer, short enough not to steal a core from an idle program. */
#define SPIN_ITERS 4096

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

/* The calling thread's workspace, freed when the thread exits. */
static pthread_key_t ws_key;
static pthread_once_t ws_key_once = PTHREAD_ONCE_INIT;

static void ws_free(void *v)
{
    struct workspace *ws = v;
    free(ws->p);
    free(ws);
}

static void ws_key_make(void)
{
    (void)pthread_key_create(&ws_key, ws_free);
}

static void *ws_local(size_t bytes)
{
    pthread_once(&ws_key_once, ws_key_make);
    struct workspace *ws = pthread_getspecific(ws_key);
    if (!ws) {
        ws = calloc(1, sizeof *ws);
        if (!ws || pthread_setspecific(ws_key, ws) != 0) {
            free(ws);
            return NULL;
        }
    }
    return ws_reserve(ws, bytes ? bytes : 64) == 0 ? ws->p : NULL;
}

/* ---- the pool -------------------------------------------------------- */

typedef void (*part_fn)(void *arg, int part, int nparts, void *ws);

static struct {
    pthread_mutex_t busy; /* held by the one caller using the workers */
    pthread_mutex_t m;    /* with the conditions, for sleeping only */
    pthread_cond_t wake, done;
    int nworkers;         /* started: workers 1 .. nworkers */
    struct workspace ws[CANON_MAX_THREADS];
    part_fn fn;
    void *arg;
    int nparts;
    atomic_uint gen;      /* bumped once per job */
    atomic_int remaining; /* workers yet to finish the current job */
    atomic_int sleepers;  /* workers asleep on `wake` */
} pool = {
    .busy = PTHREAD_MUTEX_INITIALIZER,
    .m = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
};

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* A forked child has none of the parent's workers, and a lock another
 * parent thread held stays held: start the pool afresh. The workspaces
 * were copied with the address space and stay usable. */
static void pool_after_fork_child(void)
{
    pthread_mutex_init(&pool.busy, NULL);
    pthread_mutex_init(&pool.m, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.nworkers = 0;
    atomic_store(&pool.gen, 0);
    atomic_store(&pool.remaining, 0);
    atomic_store(&pool.sleepers, 0);
}

static void pool_register_atfork(void)
{
    (void)pthread_atfork(NULL, NULL, pool_after_fork_child);
}

static inline void cpu_relax(void)
{
    __builtin_ia32_pause();
}

struct worker_start {
    int me;
    unsigned seen;
};

static void *worker_main(void *v)
{
    struct worker_start start = *(struct worker_start *)v;
    free(v);
    int me = start.me;
    unsigned seen = start.seen;
    for (;;) {
        unsigned g = atomic_load(&pool.gen);
        for (int i = 0; g == seen && i < SPIN_ITERS; i++) {
            cpu_relax();
            g = atomic_load(&pool.gen);
        }
        if (g == seen) {
            pthread_mutex_lock(&pool.m);
            atomic_fetch_add(&pool.sleepers, 1);
            while ((g = atomic_load(&pool.gen)) == seen)
                pthread_cond_wait(&pool.wake, &pool.m);
            atomic_fetch_sub(&pool.sleepers, 1);
            pthread_mutex_unlock(&pool.m);
        }
        seen = g;
        if (me < pool.nparts)
            pool.fn(pool.arg, me, pool.nparts, pool.ws[me].p);
        if (atomic_fetch_sub(&pool.remaining, 1) == 1) {
            pthread_mutex_lock(&pool.m);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.m);
        }
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
    if (nparts <= 1)
        return run_here(fn, arg, 1, ws_bytes);
    pthread_once(&atfork_once, pool_register_atfork);
    if (pthread_mutex_trylock(&pool.busy) != 0)
        return run_here(fn, arg, nparts, ws_bytes);
    void *mine = ws_local(ws_bytes);
    int ok = mine != NULL && pool_grow(nparts - 1) >= nparts - 1;
    for (int w = 1; ok && w < nparts; w++)
        ok = ws_reserve(&pool.ws[w], ws_bytes ? ws_bytes : 64) == 0;
    if (!ok) {
        pthread_mutex_unlock(&pool.busy);
        return run_here(fn, arg, nparts, ws_bytes);
    }

    pool.fn = fn;
    pool.arg = arg;
    pool.nparts = nparts;
    atomic_store(&pool.remaining, pool.nworkers);
    atomic_fetch_add(&pool.gen, 1);
    if (atomic_load(&pool.sleepers) > 0) {
        pthread_mutex_lock(&pool.m);
        pthread_cond_broadcast(&pool.wake);
        pthread_mutex_unlock(&pool.m);
    }

    fn(arg, 0, nparts, mine);

    for (int i = 0; atomic_load(&pool.remaining) > 0 && i < SPIN_ITERS; i++)
        cpu_relax();
    if (atomic_load(&pool.remaining) > 0) {
        pthread_mutex_lock(&pool.m);
        while (atomic_load(&pool.remaining) > 0)
            pthread_cond_wait(&pool.done, &pool.m);
        pthread_mutex_unlock(&pool.m);
    }
    pthread_mutex_unlock(&pool.busy);
    return 0;
}
