/* An NCCL program that links no NCCL: it dlopens the fake libnccl.so.2
 * RTLD_LOCAL and fetches each function with dlsym, as JAX's CUDA plugin
 * does, then all-reduces on 3 ranks driven by one thread
 * (ncclCommInitAll, one group) and prints
 *     dlsym allreduce <hash of rank 0's result>
 * test-nccl.sh runs it under a bare LD_PRELOAD (the shim sees nothing)
 * and under detrun (the audit module hands the lookups to the shim).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nccl/nccl_api.h"

static void *sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "nccl_dlsym: no %s: %s\n", name, dlerror());
        exit(1);
    }
    return p;
}

int main(void)
{
    void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "nccl_dlsym: %s\n", dlerror());
        return 1;
    }
    ncclCommInitAll_fn *init_all = (ncclCommInitAll_fn *)(uintptr_t)sym(lib, "ncclCommInitAll");
    ncclAllReduce_fn *all_reduce = (ncclAllReduce_fn *)(uintptr_t)sym(lib, "ncclAllReduce");
    ncclGroupStart_fn *group_start = (ncclGroupStart_fn *)(uintptr_t)sym(lib, "ncclGroupStart");
    ncclGroupEnd_fn *group_end = (ncclGroupEnd_fn *)(uintptr_t)sym(lib, "ncclGroupEnd");
    enum { N = 3, COUNT = 4096 };
    ncclComm_t comms[N];
    static float x[N][COUNT], y[N][COUNT];
    for (int r = 0; r < N; r++)
        for (int i = 0; i < COUNT; i++)
            x[r][i] = (float)((i * 7919 + r * 104729) % 1000) / 7.0f;
    if (init_all(comms, N, NULL) != ncclSuccess || group_start() != ncclSuccess)
        return 1;
    for (int r = 0; r < N; r++)
        if (all_reduce(x[r], y[r], COUNT, ncclFloat32, ncclSum, comms[r], NULL) != ncclSuccess)
            return 1;
    if (group_end() != ncclSuccess)
        return 1;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof y[0]; i++)
        h = (h ^ ((const unsigned char *)y[0])[i]) * 1099511628211ull;
    printf("dlsym allreduce %016llx\n", (unsigned long long)h);
    return 0;
}
