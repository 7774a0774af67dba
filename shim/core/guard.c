/* The per-thread re-entry guard. While a thread runs shim code (digesting,
 * writing the trace, calling OpenSSL or libunwind) or the real function an
 * interceptor forwards to, any intercepted call it makes passes straight
 * through: no recursion, no records of our own work.
 */
#include "core/core.h"

static _Thread_local int guard_depth __attribute__((tls_model("initial-exec")));

int guard_enter(void)
{
    if (guard_depth)
        return 0;
    guard_depth = 1;
    return 1;
}

void guard_leave(void)
{
    guard_depth = 0;
}

int guard_held(void)
{
    return guard_depth;
}
