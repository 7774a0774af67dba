/* The process environment as the shim reads and sets it. A program may
 * export its own getenv/setenv (bash does: its getenv reads bash's variable
 * table, empty until bash's main has run, and its setenv writes only that
 * table), and every call the shim makes by those names would reach them.
 * So the shim reads the `environ` array itself and sets variables with
 * glibc's own setenv, looked up in libc's handle: the values land where
 * glibc, the kernel at exec, and bash's main (which glibc hands the
 * environ of the moment) all look.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "core/core.h"

extern char **environ;

const char *core_getenv(const char *name)
{
    size_t n = strlen(name);
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

typedef int (*setenv_fn)(const char *, const char *, int);

/* glibc's setenv, or NULL if libc.so.6 is not loaded (never seen). */
static setenv_fn libc_setenv(void)
{
    static _Atomic(setenv_fn) fn;
    setenv_fn f = atomic_load_explicit(&fn, memory_order_acquire);
    if (!f) {
        void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
        f = libc ? (setenv_fn)(uintptr_t)dlsym(libc, "setenv") : NULL;
        atomic_store_explicit(&fn, f, memory_order_release);
    }
    return f;
}

int core_setenv(const char *name, const char *value)
{
    setenv_fn f = libc_setenv();
    return f ? f(name, value, 1) : -1;
}
