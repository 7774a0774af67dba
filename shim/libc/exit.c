/* _exit and _Exit skip atexit handlers and destructors, and Python's
 * os._exit (used by multiprocessing and DataLoader workers) reaches them:
 * close the trace before the process goes. A vfork child calling _exit
 * after a failed exec is not the trace's owner and writes nothing.
 */
#include <stdlib.h>
#include <unistd.h>

#include "core/core.h"
#include "libc/libc.h"
#include "trace/trace.h"

typedef void (*exit_fn)(int);

static void *real_exit, *real_Exit;

void libc_exit_prepare(void)
{
    /* Resolved at start-up, for the vfork child that _exits after a failed
     * exec: it must not run the loader's lookup in its parent's memory. */
    resolve_real_cached(&real_exit, "_exit");
    resolve_real_cached(&real_Exit, "_Exit");
}

DETSHIM_EXPORT void _exit(int status)
{
    exit_fn fn = (exit_fn)(uintptr_t)resolve_real_cached(&real_exit, "_exit");
    trace_process_flush_all();
    fn(status);
    __builtin_unreachable();
}

DETSHIM_EXPORT void _Exit(int status)
{
    exit_fn fn = (exit_fn)(uintptr_t)resolve_real_cached(&real_Exit, "_Exit");
    trace_process_flush_all();
    fn(status);
    __builtin_unreachable();
}
