/* A fake CUDA driver (libcuda.so.1) for tests: device memory is host
 * memory. Kernels and the fake libraries' work run at once, in call
 * order, which is stream order; what reaches the host asynchronously does
 * not: cuMemcpyDtoHAsync takes its bytes when called but delivers them
 * into host memory only when the work is waited for (cuEventSynchronize,
 * cuStreamSynchronize, cuCtxSynchronize, a synchronous copy) or when an
 * event recorded after it is queried complete, which cuEventQuery says
 * at its FAKE_CUDA_EVENT_QUERIES-th query (default 3). So a reader that
 * does not wait for its event sees stale bytes. Modules are detshim's
 * digest kernels: loading checks that the image is PTX declaring them,
 * and a launch runs the same kernel logic (shim/cuda/cuda_digest_kernel.h)
 * on the host, one call per thread of the grid, so the tests exercise the
 * code the GPU runs. Streams are never capturing unless
 * FAKE_CUDA_CAPTURING=1. FAKE_CUDA_FAIL=cuEventRecord makes every event
 * record fail, as a driver error would; FAKE_CUDA_FAIL=cuModuleLoadData
 * every module load, as in a context where the PTX does not load.
 * The FAKE_CUDA_* variables are read at the first call and again when a
 * unit test that changed them with setenv calls fake_cuda_env_changed():
 * a getenv in each event call was a tenth of a traced call's cost in
 * bench_cublas.
 * Synchronisations and other calls are counted: fake_cuda_count(name) for
 * unit tests, and with DETSHIM_FAKE_CUDA_STATS=path written to that file
 * at exit as `name count` lines. Only the calls detshim's device digests,
 * its canonical collectives (cuMemcpyHtoD) and gpu_prog make.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_digest_kernel.h"
#include "fake.h"

enum { CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_INVALID_IMAGE = 200,
       CUDA_ERROR_NOT_FOUND = 500 };

/* Counters, by name. */
#define FAKE_COUNTERS(X)                                                                   \
    X(cuStreamSynchronize) X(cuCtxSynchronize) X(cuEventSynchronize) X(cuEventQuery)       \
    X(cuEventRecord) X(cuMemcpyDtoH) X(cuMemcpyDtoHAsync) X(cuLaunchKernel) X(cuEventCreate)     \
    X(cuEventDestroy_v2)
#define FAKE_COUNTER_FIELD(name) unsigned long long name;
static struct { FAKE_COUNTERS(FAKE_COUNTER_FIELD) } counts;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* counts and the queue */

FAKE_EXPORT unsigned long long fake_cuda_count(const char *name)
{
#define FAKE_COUNTER_GET(n) if (strcmp(name, #n) == 0) return counts.n;
    FAKE_COUNTERS(FAKE_COUNTER_GET)
    return ~0ull;
}

static void write_stats(void) __attribute__((destructor));
static void write_stats(void)
{
    const char *path = getenv("DETSHIM_FAKE_CUDA_STATS");
    FILE *f = path && *path ? fopen(path, "w") : NULL;
    if (!f)
        return;
#define FAKE_COUNTER_PRINT(n) fprintf(f, "%s %llu\n", #n, counts.n);
    FAKE_COUNTERS(FAKE_COUNTER_PRINT)
    fclose(f);
}

/* The steering variables, as last read. */
static struct {
    pthread_once_t once;
    char fail[64];     /* FAKE_CUDA_FAIL: the call that fails, or "" */
    int capturing;     /* FAKE_CUDA_CAPTURING=1 */
    int event_queries; /* FAKE_CUDA_EVENT_QUERIES, default 3 */
} env = { .once = PTHREAD_ONCE_INIT };

FAKE_EXPORT void fake_cuda_env_changed(void)
{
    const char *fail = getenv("FAKE_CUDA_FAIL"), *cap = getenv("FAKE_CUDA_CAPTURING"),
               *queries = getenv("FAKE_CUDA_EVENT_QUERIES");
    snprintf(env.fail, sizeof env.fail, "%s", fail ? fail : "");
    env.capturing = cap && *cap == '1';
    env.event_queries = queries && atoi(queries) > 0 ? atoi(queries) : 3;
}

static void env_read(void)
{
    pthread_once(&env.once, fake_cuda_env_changed);
}

/* Asynchronous copies not yet delivered, oldest first; each has the
 * number of the work queued before it, and an event the number of the
 * last work before it. */
struct copy {
    void *dst;
    size_t n;
    unsigned long long seq;
    struct copy *next;
    unsigned char bytes[]; /* taken when queued */
};
static struct copy *queue, **queue_end = &queue;
static unsigned long long queued, delivered;

/* Delivers the copies up to work number `upto`. Caller holds lock. */
static void deliver(unsigned long long upto)
{
    while (queue && queue->seq <= upto) {
        struct copy *c = queue;
        memcpy(c->dst, c->bytes, c->n);
        queue = c->next;
        free(c);
    }
    if (!queue)
        queue_end = &queue;
    if (upto > delivered)
        delivered = upto;
}

static void count_and_deliver_all(unsigned long long *counter)
{
    pthread_mutex_lock(&lock);
    ++*counter;
    deliver(queued);
    pthread_mutex_unlock(&lock);
}

FAKE_EXPORT CUresult cuInit(unsigned int flags)
{
    return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Synchronous: waits for the work queued before it, as the real one. */
FAKE_EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
    count_and_deliver_all(&counts.cuMemcpyDtoH);
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return CUDA_SUCCESS;
}

/* Synchronous, as the real one: the work queued before it is done. */
FAKE_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes)
{
    pthread_mutex_lock(&lock);
    deliver(queued);
    pthread_mutex_unlock(&lock);
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream s)
{
    (void)s;
    struct copy *c = malloc(sizeof *c + bytes);
    if (!c)
        return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
    memcpy(c->bytes, (const void *)(uintptr_t)src, bytes);
    pthread_mutex_lock(&lock);
    counts.cuMemcpyDtoHAsync++;
    c->dst = dst;
    c->n = bytes;
    c->seq = ++queued;
    c->next = NULL;
    *queue_end = c;
    queue_end = &c->next;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned int flags)
{
    (void)flags;
    *p = malloc(bytes);
    return *p ? CUDA_SUCCESS : 2;
}

FAKE_EXPORT CUresult cuMemFreeHost(void *p)
{
    free(p);
    return CUDA_SUCCESS;
}

struct fake_event {
    unsigned long long seq; /* the work it follows */
    int queries;
};

FAKE_EXPORT CUresult cuEventCreate(CUevent *ev, unsigned int flags)
{
    (void)flags;
    struct fake_event *e = calloc(1, sizeof *e);
    *ev = (CUevent)(void *)e;
    pthread_mutex_lock(&lock);
    counts.cuEventCreate++;
    pthread_mutex_unlock(&lock);
    return e ? CUDA_SUCCESS : 2;
}

/* 1 if FAKE_CUDA_FAIL names the call. */
static int told_to_fail(const char *call)
{
    env_read();
    return strcmp(env.fail, call) == 0;
}

FAKE_EXPORT CUresult cuEventRecord(CUevent ev, CUstream s)
{
    (void)s;
    if (told_to_fail("cuEventRecord"))
        return CUDA_ERROR_INVALID_VALUE;
    struct fake_event *e = (struct fake_event *)(void *)ev;
    pthread_mutex_lock(&lock);
    counts.cuEventRecord++;
    e->seq = queued;
    e->queries = 0;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

/* Complete once its work was delivered, or at its FAKE_CUDA_EVENT_QUERIES-th query. */
FAKE_EXPORT CUresult cuEventQuery(CUevent ev)
{
    struct fake_event *e = (struct fake_event *)(void *)ev;
    env_read();
    int needed = env.event_queries;
    pthread_mutex_lock(&lock);
    counts.cuEventQuery++;
    int done = e->seq <= delivered || ++e->queries >= needed;
    if (done)
        deliver(e->seq);
    pthread_mutex_unlock(&lock);
    return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FAKE_EXPORT CUresult cuEventSynchronize(CUevent ev)
{
    struct fake_event *e = (struct fake_event *)(void *)ev;
    pthread_mutex_lock(&lock);
    counts.cuEventSynchronize++;
    deliver(e->seq);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventDestroy_v2(CUevent ev)
{
    pthread_mutex_lock(&lock);
    counts.cuEventDestroy_v2++;
    pthread_mutex_unlock(&lock);
    free((void *)ev);
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
    void *m = malloc(bytes);
    *p = (CUdeviceptr)(uintptr_t)m;
    return m ? CUDA_SUCCESS : 2; /* CUDA_ERROR_OUT_OF_MEMORY */
}

FAKE_EXPORT CUresult cuStreamSynchronize(CUstream stream)
{
    (void)stream;
    count_and_deliver_all(&counts.cuStreamSynchronize);
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxSynchronize(void)
{
    count_and_deliver_all(&counts.cuCtxSynchronize);
    return CUDA_SUCCESS;
}

/* Capturing when FAKE_CUDA_CAPTURING=1, as a stream in CUDA graph capture. */
FAKE_EXPORT CUresult cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus *status)
{
    (void)stream;
    env_read();
    *status = env.capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    static int the_context;
    *ctx = (CUcontext)(void *)&the_context;
    return CUDA_SUCCESS;
}

/* The kernels, as host functions of (arguments, thread index), run for
 * each thread in order: where a kernel waits at a barrier for all its
 * threads, the host function does the work after it in the last thread. */
/* A warp per block: its last thread adds up the 32 threads' parts as the
 * warp's shuffles do (digest.cu), each lane's multiply terms and the
 * words of the lane beside it. */
static void run_sums(void **a, dk_u64 t)
{
    const struct dk_layout *l = a[0];
    dk_u64 b = t / 32, *sums = (dk_u64 *)(uintptr_t)*(CUdeviceptr *)a[3];
    if (t % 32 != 31 || b >= *(dk_u64 *)a[2])
        return;
    dk_u64 mul[8] = { 0 }, data[8] = { 0 };
    for (unsigned w = 0; w < 32; w++) {
        dk_u64 m, d;
        dk_warp_part(l, dk_base(l), *(dk_u64 *)a[1] + b, w, &m, &d);
        mul[w % 8] += m;
        data[w % 8] += d;
    }
    for (unsigned lane = 0; lane < 8; lane++)
        sums[8 * b + lane] = mul[lane] + data[lane ^ 1];
}

static void run_scan(void **a, dk_u64 t)
{
    dk_u64 *state = (dk_u64 *)(uintptr_t)*(CUdeviceptr *)a[2];
    if (t < 8) {
        if (*(dk_u32 *)a[3])
            state[t] = dk_init_lane((unsigned)t);
        dk_scan((const dk_u64 *)(uintptr_t)*(CUdeviceptr *)a[0], *(dk_u64 *)a[1], state,
                (unsigned)t);
    }
    if (t == 7 && *(dk_u32 *)a[4])
        dk_final(a[5], state, (dk_u64 *)(uintptr_t)*(CUdeviceptr *)a[6]);
}

static void run_gather(void **a, dk_u64 t)
{
    const struct dk_layout *l = a[0];
    if (t < l->total)
        dk_gather(l, (dk_u8 *)(uintptr_t)*(CUdeviceptr *)a[1], t);
}

static const struct kernel {
    const char *name;
    void (*run)(void **args, dk_u64 thread);
} kernels[] = {
    { "detshim_dk_block_sums", run_sums },
    { "detshim_dk_scan", run_scan },
    { "detshim_dk_gather", run_gather },
};

FAKE_EXPORT CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
    const char *ptx = image;
    if (told_to_fail("cuModuleLoadData") || strncmp(ptx, "//", 2) != 0 ||
        !strstr(ptx, ".entry detshim_dk_block_sums"))
        return CUDA_ERROR_INVALID_IMAGE;
    *mod = (CUmodule)(void *)kernels;
    return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule mod, const char *name)
{
    (void)mod;
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++)
        if (strcmp(kernels[i].name, name) == 0) {
            *f = (CUfunction)(void *)&kernels[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

/* Every thread of the grid in turn. The kernels' threads never depend on
 * one another within a launch, so any order is the GPU's result. */
FAKE_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                    unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                    CUstream stream, void **params, void **extra)
{
    (void)shared, (void)stream;
    if (gy != 1 || gz != 1 || by != 1 || bz != 1 || extra)
        return CUDA_ERROR_INVALID_VALUE;
    const struct kernel *k = (const struct kernel *)(void *)f;
    for (dk_u64 t = 0; t < (dk_u64)gx * bx; t++)
        k->run(params, t);
    pthread_mutex_lock(&lock);
    counts.cuLaunchKernel++;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

/* For tests: how many kernels this process launched. */
FAKE_EXPORT unsigned long long fake_cuda_kernel_launches(void)
{
    return fake_cuda_count("cuLaunchKernel");
}
