/* Whether the cuda family is reached at all (NCCL's calls count too, and
 * libnccl is a vendor library here). TensorFlow and JAX fetch cuBLAS,
 * cuDNN, cuRAND and NCCL functions with dlsym on handles of their own,
 * which a preloaded library never sees; the audit module (LD_AUDIT,
 * shim/audit/audit.c, set by detrun) brings those lookups here. Without
 * it, such a program's GPU work would be neither pinned nor traced while
 * the trace looked complete, so at exit, when a vendor library and the
 * driver are loaded but no call of the family arrived, the shim says so
 * on stderr, whatever DETSHIM_LOG. Forked children stay quiet: they
 * inherit their parent's libraries, not its GPU work.
 */
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "cuda/cuda_libs.h"
#include "nccl/nccl_libs.h"

static atomic_int reached;
static int forked;

void cuda_reach_count(void)
{
    /* A load first: threads calling at once do not fight over the line. */
    if (!atomic_load_explicit(&reached, memory_order_relaxed))
        atomic_store_explicit(&reached, 1, memory_order_relaxed);
}

void cuda_reach_fork_child(void)
{
    forked = 1;
}

struct loaded_vendor {
    char vendor[256]; /* the first vendor library's file name, or "" */
    int driver;       /* libcuda.so.1 is loaded */
};

static int find_vendor(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct loaded_vendor *l = arg;
    const char *slash = strrchr(info->dlpi_name, '/');
    const char *name = slash ? slash + 1 : info->dlpi_name;
    if (strcmp(name, "libcuda.so.1") == 0)
        l->driver = 1;
    if (!l->vendor[0] && (cuda_is_vendor_file(name) || nccl_is_vendor_file(name)))
        snprintf(l->vendor, sizeof l->vendor, "%s", name);
    return 0;
}

void cuda_reach_check(void)
{
    if (forked || resolve_audit_active() || atomic_load_explicit(&reached, memory_order_relaxed))
        return;
    struct loaded_vendor l = { "", 0 };
    dl_iterate_phdr(find_vendor, &l);
    if (!l.driver || !l.vendor[0])
        return;
    core_log(DS_LOG_QUIET,
             "%s was loaded but none of its calls reached the shim: a program that looks "
             "CUDA functions up with dlsym (TensorFlow, JAX) bypasses LD_PRELOAD, so its GPU "
             "calls were neither pinned nor traced; run it under detrun, or add "
             "LD_AUDIT=%s/%s",
             l.vendor, resolve_self_dir(), CUDA_AUDIT_LIB);
}
