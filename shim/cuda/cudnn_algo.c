/* The algorithm a legacy cuDNN convolution runs, in pinned mode. Filtering
 * the Find and Get_v7 lists (cudnn.c) covers programs that choose from
 * them; a program may also pass an algorithm it fixed itself, or one
 * remembered from an earlier unpinned run, and cuDNN's backward-data
 * ALGO_0 and backward-filter ALGO_0 and ALGO_3 sum with atomics. So before
 * each convolution the program's algorithm is looked up in what
 * cudnnGet*Algorithm_v7 (cuDNN's own heuristic, no timing, nothing run)
 * says of these descriptors: kept when deterministic, else replaced by
 * the first deterministic algorithm there that cuDNN supports here and
 * that fits the program's workspace. An algorithm found deterministic is
 * remembered per direction, so the common case asks cuDNN once per
 * algorithm, not per call: determinism is taken to be a property of the
 * algorithm, as cuDNN's documentation lists it, not of the shapes. When
 * the algorithm has to run unpinned, the shim says so on stderr, once per
 * algorithm.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "core/core.h"
#include "cuda/cuda.h"

enum { LIST_MAX = 32 };

/* Bit a of known_deterministic[dir]: algorithm a found deterministic;
 * of warned[dir]: the user was told that algorithm a ran unpinned. */
static atomic_ullong known_deterministic[3], warned[3];

/* Says on stderr, once per direction and algorithm whatever DETSHIM_LOG,
 * that a convolution runs unpinned: a user who asked for determinism
 * must not get less without a word, trace or no trace. */
static void warn_unpinned(enum conv_direction dir, int algo, const char *why)
{
    static const char *const names[3] = { "forward", "backward-data", "backward-filter" };
    int once = algo >= 0 && algo < 64;
    if (once && (atomic_fetch_or(&warned[dir], 1ull << algo) >> algo) & 1)
        return;
    core_log(DS_LOG_QUIET, "a cuDNN %s convolution runs algorithm %d, chosen by the program, "
             "unpinned: %s", names[dir], algo, why);
}

/* cuDNN's heuristic list for one convolution, unfiltered (the real
 * function, not our wrapper). Returns the count, or -1. */
static int heuristic_list(enum conv_direction dir, cudnnHandle_t h,
                          const struct conv_descs *d,
                          struct detshim_cudnn_algo_perf *perf)
{
    static void *cache[3];
    static const char *const names[3] = {
        "cudnnGetConvolutionForwardAlgorithm_v7",
        "cudnnGetConvolutionBackwardDataAlgorithm_v7",
        "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
    };
    void *fn = cuda_sym(&cache[dir], names[dir]);
    int n = 0;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    if (!fn)
        return -1;
    switch (dir) {
    case CONV_FORWARD:
        st = ((cudnnGetConvolutionForwardAlgorithm_v7_fn *)(uintptr_t)fn)(
            h, d->tensor1, d->filter2, d->conv, d->tensor4, LIST_MAX, &n, perf);
        break;
    case CONV_BACKWARD_DATA:
        st = ((cudnnGetConvolutionBackwardDataAlgorithm_v7_fn *)(uintptr_t)fn)(
            h, d->filter1, d->tensor2, d->conv, d->tensor4, LIST_MAX, &n, perf);
        break;
    case CONV_BACKWARD_FILTER:
        st = ((cudnnGetConvolutionBackwardFilterAlgorithm_v7_fn *)(uintptr_t)fn)(
            h, d->tensor1, d->tensor2, d->conv, d->filter4, LIST_MAX, &n, perf);
        break;
    }
    return st == CUDNN_STATUS_SUCCESS && n >= 0 && n <= LIST_MAX ? n : -1;
}

int cudnn_pinned_algo(enum conv_direction dir, cudnnHandle_t h,
                      const struct conv_descs *d, int algo, size_t workspace,
                      char *note, size_t len)
{
    note[0] = 0;
    int cacheable = algo >= 0 && algo < 64;
    if (cacheable && (atomic_load(&known_deterministic[dir]) >> algo) & 1)
        return algo;
    struct detshim_cudnn_algo_perf perf[LIST_MAX];
    int n = heuristic_list(dir, h, d, perf);
    if (n < 0) {
        snprintf(note, len, "algo %d kept: cuDNN's algorithm list could not be read (not pinned)",
                 algo);
        warn_unpinned(dir, algo, "cuDNN's algorithm list for it could not be read");
        return algo;
    }
    int listed = 0;
    for (int i = 0; i < n; i++) {
        if (perf[i].algo != algo)
            continue;
        listed = 1;
        if (perf[i].determinism == CUDNN_DETERMINISTIC) {
            if (cacheable)
                atomic_fetch_or(&known_deterministic[dir], 1ull << algo);
            return algo;
        }
    }
    if (!listed) {
        snprintf(note, len, "algo %d kept: cuDNN does not list it for this convolution "
                 "(not pinned)", algo);
        warn_unpinned(dir, algo, "cuDNN does not list it for the convolution, so whether it "
                      "is deterministic is unknown");
        return algo;
    }
    for (int i = 0; i < n; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].determinism == CUDNN_DETERMINISTIC &&
            perf[i].memory <= workspace) {
            snprintf(note, len, "algo %d->%d (nondeterministic; the first deterministic one "
                     "that fits the workspace)", algo, perf[i].algo);
            return perf[i].algo;
        }
    snprintf(note, len, "algo %d kept: no deterministic algorithm fits the %zu-byte workspace "
             "(not pinned)", algo, workspace);
    warn_unpinned(dir, algo, "it is nondeterministic and no deterministic algorithm fits its "
                  "workspace");
    return algo;
}
