/* _exit and _Exit skip atexit handlers and destructors, and Python's
 * os._exit (used by multiprocessing and DataLoader workers) reaches them:
 * close the trace before the process goes. A vfork child calling _exit
 * after a failed exec is not the trace's owner and writes nothing.
 */
#include <stdlib.h>
#include <unistd.h>

#include "detshim/core.h"
#include "detshim/trace.h"

typedef void (*exit_fn)(int);

DETSHIM_EXPORT void _exit(int status)
{
    static void *real;
    exit_fn fn = (exit_fn)(uintptr_t)resolve_real_cached(&real, "_exit");
    trace_process_flush_all();
    fn(status);
    __builtin_unreachable();
}

DETSHIM_EXPORT void _Exit(int status)
{
    static void *real;
    exit_fn fn = (exit_fn)(uintptr_t)resolve_real_cached(&real, "_Exit");
    trace_process_flush_all();
    fn(status);
    __builtin_unreachable();
}
