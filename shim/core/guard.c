/* The per-thread re-entry guard. While a thread runs shim code (digesting,
 * writing the trace, calling OpenSSL or libunwind) or the real function an
 * interceptor forwards to, any intercepted call it makes passes straight
 * through: no recursion, no records of our own work. The functions are
 * inline (core/core.h); this is the thread's state they share.
 */
#include "core/core.h"

_Thread_local int guard_depth __attribute__((tls_model("initial-exec")));
