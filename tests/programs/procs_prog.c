/* Processes and threads for the integration tests.
 *   procs_prog threads ORDER...  start one thread per ORDER entry, in that
 *       order and staggered, each making its own BLAS calls (thread i uses
 *       size 8+i): two runs with different orders must diff identical.
 *   procs_prog fork  the parent calls, forks two children one after the
 *       other (the second leaves through _exit), each calls, then the
 *       parent calls again: one trace file per process.
 *   procs_prog vfork  the parent calls, vforks a child that calls BLAS (it
 *       must not be recorded: it shares the parent's memory) and execs
 *       `true`, then the parent calls again.
 *   procs_prog exec  calls, then execs itself as `procs_prog fork`: the
 *       old image's records must survive the exec.
 *   procs_prog forks SEED...  forks one child per SEED, in that order,
 *       each making the same calls on data of its seed; run with the seeds
 *       in another order, the children swap names, as children forked
 *       concurrently may.
 *   procs_prog forkexec SEED...  the same, but each child makes the same
 *       calls first and then execs `procs_prog data SEED`: the exec'd
 *       images (main.f<k>.e) swap names, their parents do not differ.
 *   procs_prog data SEED  those calls, in this process.
 *   procs_prog closefds FILE  calls enough to open the trace, closes every
 *       descriptor above 2 (as daemons do), writes FILE (which may get the
 *       trace's old descriptor number), calls again: FILE must stay intact.
 */
#include <fcntl.h>
#include <cblas.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void calls(int size, int count)
{
    double a[32 * 32], b[32 * 32], c[32 * 32];
    for (int i = 0; i < 32 * 32; i++) {
        a[i] = (i % 7) * 0.25 + size;
        b[i] = (i % 5) * 0.5;
    }
    for (int r = 0; r < count; r++)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, size, size, size, 1.0, a, size,
                    b, size, 0.0, c, size);
    printf("%g\n", c[0]);
}

/* The same dgemm calls whatever the seed; their data follow it. */
static void seeded_calls(int seed)
{
    double a[8 * 8], b[8 * 8], c[8 * 8];
    for (int i = 0; i < 8 * 8; i++) {
        a[i] = (i % 7) * 0.25 + seed;
        b[i] = (i % 5) * 0.5 - seed;
    }
    for (int r = 0; r < 4; r++)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 8, 8, 8, 1.0, a, 8, b, 8, 0.0, c,
                    8);
    printf("%g\n", c[0]);
}

static void *thread_main(void *arg)
{
    calls(8 + (int)(long)arg, 20);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "threads") == 0) {
        pthread_t t[16];
        int n = argc - 2 > 16 ? 16 : argc - 2;
        for (int i = 0; i < n; i++) {
            pthread_create(&t[i], NULL, thread_main, (void *)(long)atoi(argv[2 + i]));
            struct timespec ts = { 0, 5000000 }; /* 5 ms: the first started records first */
            nanosleep(&ts, NULL);
        }
        for (int i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "fork") == 0) {
        calls(4, 2);
        fflush(stdout);
        for (int k = 1; k <= 2; k++) {
            pid_t pid = fork();
            if (pid == 0) {
                calls(4 + k, 3);
                fflush(stdout);
                if (k == 2)
                    _exit(0);
                exit(0);
            }
            waitpid(pid, NULL, 0);
        }
        calls(9, 1);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "forks") == 0) {
        for (int i = 2; i < argc; i++) {
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) {
                seeded_calls(atoi(argv[i]));
                exit(0);
            }
            waitpid(pid, NULL, 0);
        }
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "forkexec") == 0) {
        for (int i = 2; i < argc; i++) {
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) {
                calls(3, 2);
                execl("/proc/self/exe", "procs_prog", "data", argv[i], (char *)NULL);
                _exit(127);
            }
            waitpid(pid, NULL, 0);
        }
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "data") == 0) {
        seeded_calls(atoi(argv[2]));
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "vfork") == 0) {
        calls(4, 1);
        fflush(stdout);
        pid_t pid = vfork();
        if (pid == 0) {
            calls(6, 5); /* not allowed by POSIX, done by real programs */
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        waitpid(pid, NULL, 0);
        calls(5, 1);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "exec") == 0) {
        calls(3, 2);
        fflush(stdout);
        execl("/proc/self/exe", "procs_prog", "fork", (char *)NULL);
        return 1;
    }
    if (argc >= 3 && strcmp(argv[1], "closefds") == 0) {
        calls(16, 3000);
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, "user data\n", 10) != 10)
            return 1;
        calls(16, 3000);
        close(fd);
        return 0;
    }
    fprintf(stderr, "usage: procs_prog threads ORDER... | fork | forks SEED... | forkexec SEED... | data SEED | vfork | exec\n"
                    "       | closefds FILE\n");
    return 2;
}
