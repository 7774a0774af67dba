/* The lifecycle of a process under the shim, in one place: the top of the
 * start-up flow, the one set of fork handlers, and the end. Every module
 * below registers into it; none starts another. Kept out of the unit
 * tests, which link every other object without starting a shim.
 *
 * 1. Constructor (detshim_ctor). The exit hooks are registered (the
 *    artifacts, then the loaded code, recorded while the streams are still
 *    open), the fork handlers below, the real exec and _exit functions are
 *    resolved (a vfork child must not run the loader), then trace_start():
 *    core_init() reads
 *    DETSHIM_*, the policy and the trace directory, decides the process's
 *    entropy rule and sets the policy's environment; then the trace
 *    directory is opened. A bad setting stops the program here.
 * 2. Lazy start. An intercepted call that arrives before the constructor
 *    (another library's constructor calls BLAS or reads entropy) starts
 *    the same way through trace_start(), from the family's entry
 *    (rng_decide, blas_enter, cuda_enter); core_once makes it happen once.
 *    A fork before our constructor runs without the handlers below.
 * 3. Fork. Prepare, in order: the trace takes its process lock (so no
 *    thread holds it across the fork), the lineage counts the fork. Parent:
 *    the trace lets go. Child, in order: the lineage names the child
 *    (<parent>.f<k>); the trace closes its copy of the parent's file and
 *    starts fresh streams; the entropy streams restart (their key holds
 *    the new name); the artifacts forget the parent's files; the canonical
 *    BLAS pool starts without the parent's workers; the CUDA reach check
 *    notes the fork. A vfork child records nothing (shim/libc/vfork.c
 *    marks it; trace_active checks the mark).
 * 4. Exec (shim/libc/exec.c). The old image's records are written and its
 *    streams closed; the new image starts as in 1 and keeps the process's
 *    name (shim/core/lineage.c), so its entropy streams are the ones the
 *    program would have had launched directly.
 * 5. Exit. _exit and _Exit (shim/libc/exit.c) and the destructor below
 *    run trace_process_flush_all(): the exit hooks once, then every stream
 *    is closed and the process root written. The CUDA family drains its
 *    pending device digests from an atexit handler it registers once CUDA
 *    is up (shim/cuda/devdigest.c), which runs before this destructor.
 * 6. Destructor (detshim_dtor): the CUDA reach check, then the trace.
 */
#include <pthread.h>

#include "artifact/artifact.h"
#include "libc/libc.h"
#include "blas/canonical_kernels.h"
#include "core/core.h"
#include "cuda/cuda.h"
#include "core/lineage.h"
#include "rng/rng.h"
#include "trace/trace.h"

static void fork_prepare(void)
{
    trace_fork_prepare();
    lineage_fork_prepare();
}

static void fork_parent(void)
{
    trace_fork_parent();
}

static void fork_child(void)
{
    lineage_fork_child();
    trace_fork_child();
    rng_fork_child();
    artifact_fork_child();
    canon_pool_fork_child();
    cuda_reach_fork_child();
}

__attribute__((constructor)) static void detshim_ctor(void)
{
    trace_on_exit(artifact_at_exit);
    trace_on_exit(artifact_record_objects);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    libc_exec_prepare();
    libc_exit_prepare();
    trace_start();
}

__attribute__((destructor)) static void detshim_dtor(void)
{
    cuda_reach_check();
    trace_process_flush_all();
}
