/* A GPU program for the tests of pending trace records (device digests
 * collected asynchronously), linked against the fake CUDA libraries
 * (tests/fakes/cuda). Each mode makes SGEMMs whose operand digests are
 * still pending when the program reaches the point under test; run with
 * FAKE_CUDA_EVENT_QUERIES large, no event completes until detshim waits
 * for it. It prints a hash of the results, so runs can be compared, and
 * the fake driver's synchronisations so far, before exit drains the
 * pending records.
 *
 *   gpu_pending many N   N SGEMMs on the main thread (N > 256 fills the FIFO)
 *   gpu_pending thread   4 SGEMMs on a thread that then exits, then 1 on main
 *   gpu_pending fork     2 SGEMMs, fork; the child makes 1 and exits, the
 *                        parent waits for it and makes 1 more
 *   gpu_pending exec     2 SGEMMs, then exec of itself as `many 1`
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "fake.h"

enum { M = 24, N = 16, K = 48 }; /* A is over 4 KiB: a device kernel digests it */
static float a[M * K], b[K * N], c[M * N];
static cublasHandle_t h;

/* One SGEMM, C = A B + C/2, so each call's output differs. */
static void gemm(void)
{
    float one = 1, half = 0.5f;
    if (cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, a, M, b, K, &half, c, M)) {
        fprintf(stderr, "gpu_pending: cublasSgemm_v2 failed\n");
        exit(1);
    }
}

static void *thread_main(void *arg)
{
    (void)arg;
    for (int i = 0; i < 4; i++)
        gemm();
    return NULL;
}

static unsigned long long hash(void)
{
    unsigned long long x = 0xcbf29ce484222325ull;
    const unsigned char *p = (const unsigned char *)c;
    for (size_t i = 0; i < sizeof c; i++)
        x = (x ^ p[i]) * 0x100000001b3ull;
    return x;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "many";
    for (int i = 0; i < M * K; i++)
        a[i] = (float)(i % 13) - 6.0f;
    for (int i = 0; i < K * N; i++)
        b[i] = (float)(i % 7) * 0.25f;
    if (cuInit(0) || cublasCreate_v2(&h))
        return 1;
    if (strcmp(mode, "many") == 0) {
        int n = argc > 2 ? atoi(argv[2]) : 1;
        for (int i = 0; i < n; i++)
            gemm();
    } else if (strcmp(mode, "thread") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, thread_main, NULL);
        pthread_join(t, NULL);
        gemm();
    } else if (strcmp(mode, "fork") == 0) {
        gemm();
        gemm();
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            gemm();
            exit(0);
        }
        waitpid(pid, NULL, 0);
        gemm();
    } else if (strcmp(mode, "exec") == 0) {
        gemm();
        gemm();
        execl("/proc/self/exe", argv[0], "many", "1", (char *)NULL);
        return 1;
    }
    printf("c %016llx\n", hash());
    printf("before exit: cuStreamSynchronize %llu cuCtxSynchronize %llu cuEventSynchronize %llu\n",
           fake_cuda_count("cuStreamSynchronize"), fake_cuda_count("cuCtxSynchronize"),
           fake_cuda_count("cuEventSynchronize"));
    return 0;
}
