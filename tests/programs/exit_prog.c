/* Ways a traced program ends while the shim is busy, for test-exit.sh:
 *   exit_prog sigterm N          N ddot calls (0: until a signal), with a
 *                                SIGTERM handler that calls exit(3); says
 *                                "ready" on stderr after 1000, "done" on
 *                                stdout if it gets through them all
 *   exit_prog threads T MS FILE  T threads calling ddot without end, each
 *                                counting its returned calls in FILE
 *                                (T x u64, mapped shared); the main thread
 *                                calls exit(0) after MS milliseconds
 */
#include <cblas.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double x[64], y[64];
static _Atomic uint64_t *counts;

static void on_term(int sig)
{
    (void)sig;
    exit(3);
}

static void *caller(void *arg)
{
    long i = (long)arg;
    for (;;) {
        volatile double d = cblas_ddot(64, x, 1, y, 1);
        (void)d;
        atomic_fetch_add_explicit(&counts[i], 1, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    for (int i = 0; i < 64; i++) {
        x[i] = i * 0.5;
        y[i] = 1.0 / (i + 1);
    }
    if (argc == 3 && strcmp(argv[1], "sigterm") == 0) {
        signal(SIGTERM, on_term);
        long n = atol(argv[2]);
        double s = 0;
        for (long i = 0; n == 0 || i < n; i++) {
            s += cblas_ddot(64, x, 1, y, 1);
            if (i == 1000) { /* the handler is set and the trace open */
                fputs("ready\n", stderr);
                fflush(stderr);
            }
        }
        printf("done %.17g\n", s);
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "threads") == 0) {
        long t = atol(argv[2]);
        int fd = open(argv[4], O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || ftruncate(fd, t * 8) != 0)
            return 1;
        counts = mmap(NULL, (size_t)t * 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (counts == MAP_FAILED)
            return 1;
        pthread_t th;
        for (long i = 0; i < t; i++)
            pthread_create(&th, NULL, caller, (void *)i);
        struct timespec ms = { 0, atol(argv[3]) * 1000000L };
        nanosleep(&ms, NULL);
        exit(0);
    }
    fprintf(stderr, "usage: exit_prog sigterm N | threads T MS FILE\n");
    return 2;
}
