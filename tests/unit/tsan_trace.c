/* A stress test of the trace writer's own code, built with
 * -fsanitize=thread (make build/tests/tsan_trace; test-tsan.sh runs it):
 * threads that start together race to open the file and publish it while
 * others flush, and the exit flush runs while threads still record and
 * while some of them exit. ThreadSanitizer fails the run on any data race;
 * test-tsan.sh then checks what the trace says. Run with DETSHIM_POLICY
 * set to a policy file.
 *   tsan_trace clean DIR   8 threads x 3000 records, joined, then the
 *                          exit flush: the trace must be whole
 *   tsan_trace late DIR    8 threads recording without end (half exit
 *                          after a while); the exit flush runs among
 *                          them and each records again after it: the
 *                          trace must say it is incomplete
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "trace/digest.h"
#include "trace/trace.h"

#define NTHREADS 8
#define PER_THREAD 3000

static pthread_barrier_t start;
static atomic_int flushed, stop;
static atomic_int after_flush[NTHREADS];

static void record_call(long t, long i)
{
    double x[4] = { (double)t, (double)i, 1, 2 };
    struct trace_rec r;
    trace_rec_begin(&r, "ddot_");
    trace_rec_int(&r, "n", 4);
    trace_rec_operand(&r, "x", TRACE_ROLE_IN, digest_vector(x, 4, 1, 8), 4, 8);
    trace_rec_commit(&r);
}

static void *clean_thread(void *arg)
{
    long t = (long)arg;
    pthread_barrier_wait(&start);
    for (long i = 0; i < PER_THREAD; i++)
        record_call(t, i);
    return NULL;
}

static void *late_thread(void *arg)
{
    long t = (long)arg;
    pthread_barrier_wait(&start);
    for (long i = 0; !atomic_load(&stop); i++) {
        int was_flushed = atomic_load(&flushed);
        if (trace_active())
            record_call(t, i);
        if (was_flushed)
            atomic_store(&after_flush[t], 1);
        if (t % 2 && i == 2000 && !was_flushed)
            return NULL; /* its stream closes as the exit flush may run */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "clean") != 0 && strcmp(argv[1], "late") != 0)) {
        fprintf(stderr, "usage: tsan_trace clean|late DIR\n");
        return 2;
    }
    int late = strcmp(argv[1], "late") == 0;
    /* The real start-up, as the constructor runs it; DETSHIM_POLICY comes
     * from the caller (the library's own directory is not this one). */
    setenv("DETSHIM_TRACE", argv[2], 1);
    trace_start();
    if (!trace_active()) {
        fprintf(stderr, "tsan_trace: tracing to %s did not start\n", argv[2]);
        return 2;
    }
    pthread_barrier_init(&start, NULL, NTHREADS);
    pthread_t th[NTHREADS];
    for (long t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, late ? late_thread : clean_thread, (void *)t);
    if (late) {
        struct timespec pause = { 0, 50 * 1000000L };
        nanosleep(&pause, NULL);
        atomic_store(&flushed, 1);
        trace_process_flush_all();
        for (int t = 0; t < NTHREADS; t += 2) /* the even threads never exit early */
            while (!atomic_load(&after_flush[t]))
                sched_yield();
        atomic_store(&stop, 1);
    }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    if (!late)
        trace_process_flush_all();
    printf("%d\n", late ? 0 : NTHREADS * PER_THREAD);
    return 0;
}
