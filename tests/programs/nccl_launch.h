/* Shared by the programs that run on the fake libnccl (nccl_ranks,
 * tests/bench/bench_nccl): the parent makes the unique id and starts one
 * copy of the program per rank (fork + exec, RANK=r and the id in hex in
 * NCCL_TEST_ID), as a launcher like torchrun would; each copy reads its
 * rank and the id back.
 */
#ifndef NCCL_LAUNCH_H
#define NCCL_LAUNCH_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nccl/nccl_api.h"

ncclResult_t ncclGetUniqueId(ncclUniqueId *id);

/* In the parent (no NCCL_TEST_ID): starts nranks copies of argv and waits
 * for them; returns 0 if every one exited 0, else 1. */
static int nccl_launch(int nranks, char **argv)
{
    ncclUniqueId id;
    if (nranks < 1 || nranks > 64 || ncclGetUniqueId(&id) != ncclSuccess)
        return 1;
    char hex[2 * NCCL_UNIQUE_ID_BYTES + 1];
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned char)id.internal[i]);
    pid_t pids[64];
    for (int r = 0; r < nranks; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            char rank[16];
            snprintf(rank, sizeof rank, "%d", r);
            setenv("RANK", rank, 1);
            setenv("NCCL_TEST_ID", hex, 1);
            execv("/proc/self/exe", argv);
            _exit(127);
        }
    }
    int failed = 0;
    for (int r = 0; r < nranks; r++) {
        int status;
        waitpid(pids[r], &status, 0);
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    return failed;
}

/* In a rank: its rank and the unique id; 0, or -1 in the parent. */
static int nccl_launched(int *rank, ncclUniqueId *id)
{
    const char *hex = getenv("NCCL_TEST_ID"), *r = getenv("RANK");
    if (!hex || !r)
        return -1;
    for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++) {
        unsigned v = 0;
        sscanf(hex + 2 * i, "%2x", &v);
        id->internal[i] = (char)v;
    }
    *rank = atoi(r);
    return 0;
}

#endif
