/* shim/nccl/nccl_api.h declares NCCL's ABI itself, so the shim builds
 * without NCCL. Where nccl.h is installed (the Makefile passes
 * DETSHIM_HAVE_NCCL_HEADER), this test checks our declarations against
 * it: a separate translation of nccl_api.h without the real types gives
 * the values and layout we use, and each is compared with NVIDIA's here,
 * the function types at compile time. Without the header it says so and
 * passes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#ifdef DETSHIM_HAVE_NCCL_HEADER
/* cuda_api.h's real-types mode needs the headers test_cuda_abi.c reads. */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cudnn.h>
#include <curand.h>
#include <library_types.h>
#include <nccl.h>
typedef struct { unsigned short x; } __half; /* cuda_fp16.h: C++ only */

#define DETSHIM_NCCL_REAL_TYPES
#define DETSHIM_CUDA_REAL_TYPES
#include "nccl/nccl_api.h"

/* Every enum value, at compile time. */
#define CHECK_VALUE(name, value) _Static_assert((long long)(name) == (value), #name " differs");
DETSHIM_NCCL_RESULTS(CHECK_VALUE)
DETSHIM_NCCL_OPS(CHECK_VALUE)
DETSHIM_NCCL_TYPES(CHECK_VALUE)
_Static_assert(NCCL_UNIQUE_ID_BYTES == 128 && NCCL_SPLIT_NOCOLOR == -1, "constants");

/* Every function type we call through is NVIDIA's. */
#define SAME_FN(name) _Static_assert(_Generic(&name, name##_fn *: 1, default: 0), #name);
SAME_FN(ncclGetUniqueId) SAME_FN(ncclCommInitRank) SAME_FN(ncclCommInitRankConfig)
SAME_FN(ncclCommInitAll) SAME_FN(ncclCommSplit) SAME_FN(ncclCommCount)
SAME_FN(ncclCommInitRankScalable) SAME_FN(ncclCommShrink)
SAME_FN(ncclCommUserRank) SAME_FN(ncclCommDestroy) SAME_FN(ncclMemAlloc) SAME_FN(ncclMemFree)
SAME_FN(ncclAllReduce) SAME_FN(ncclReduce) SAME_FN(ncclBcast) SAME_FN(ncclBroadcast)
SAME_FN(ncclReduceScatter) SAME_FN(ncclAllGather) SAME_FN(ncclAlltoAll) SAME_FN(ncclGather) SAME_FN(ncclScatter) SAME_FN(ncclSend) SAME_FN(ncclRecv)
SAME_FN(ncclGroupStart) SAME_FN(ncclGroupEnd)

/* The config fields the shim reads and writes, where nccl_api.h puts them. */
struct ours_config {
    size_t size;
    unsigned int magic, version;
    int blocking, cgaClusterSize, minCTAs, maxCTAs;
    const char *netName;
    int splitShare, trafficClass;
    const char *commName;
    int collnetEnable;
};
#define SAME_OFFSET(field)                                                                 \
    _Static_assert(offsetof(ncclConfig_t, field) == offsetof(struct ours_config, field),   \
                   "ncclConfig_t." #field " moved");
SAME_OFFSET(size) SAME_OFFSET(blocking) SAME_OFFSET(minCTAs) SAME_OFFSET(maxCTAs)
SAME_OFFSET(collnetEnable)

static void test_config_initializer_leaves_the_fields_we_pin_undefined(void **state)
{
    (void)state;
    ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
    assert_int_equal(c.minCTAs, NCCL_CONFIG_UNDEF_INT);
    assert_int_equal(c.maxCTAs, NCCL_CONFIG_UNDEF_INT);
    assert_int_equal(c.collnetEnable, NCCL_CONFIG_UNDEF_INT);
    assert_true(NCCL_CONFIG_HAS(&c, collnetEnable));
    c.size = offsetof(ncclConfig_t, minCTAs);
    assert_false(NCCL_CONFIG_HAS(&c, minCTAs)); /* an older, shorter config */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_initializer_leaves_the_fields_we_pin_undefined),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
    puts("test_nccl_abi: skipped: no nccl.h (set NCCL_INC to its folder)");
    return 0;
}
#endif
