/* exec replaces the process image without running destructors, so the
 * records the old image still holds in memory would be lost: close its
 * trace first (the new image starts its own, named <name>.e). If exec
 * fails and returns, the old image goes on untraced, and says so at
 * DETSHIM_LOG=info. In a vfork child nothing is written: the trace belongs
 * to the parent. The variadic execl family is rebuilt into argv arrays.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>

#include "detshim/core.h"
#include "detshim/trace.h"

#define MAX_EXEC_ARGS 4096

static void before_exec(void)
{
    trace_process_flush_all();
}

static int after_failed_exec(int rc)
{
    core_log(LOG_INFO, "exec failed; this process continues untraced");
    return rc;
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

static void *real_execve, *real_execvpe, *real_fexecve, *real_execv, *real_execvp;

#define REAL(type, name) type fn = (type)(uintptr_t)resolve_real_cached(&real_##name, #name)

void trace_exec_prepare(void)
{
    /* Resolved at start-up: a vfork child calling exec must not run the
     * dynamic loader's lookup, which may allocate in the parent's heap. */
    resolve_real_cached(&real_execve, "execve");
    resolve_real_cached(&real_execvpe, "execvpe");
    resolve_real_cached(&real_fexecve, "fexecve");
    resolve_real_cached(&real_execv, "execv");
    resolve_real_cached(&real_execvp, "execvp");
}

DETSHIM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    REAL(execve_fn, execve);
    before_exec();
    return after_failed_exec(fn(path, argv, envp));
}

DETSHIM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    REAL(execve_fn, execvpe);
    before_exec();
    return after_failed_exec(fn(file, argv, envp));
}

DETSHIM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    REAL(fexecve_fn, fexecve);
    before_exec();
    return after_failed_exec(fn(fd, argv, envp));
}

DETSHIM_EXPORT int execv(const char *path, char *const argv[])
{
    REAL(execv_fn, execv);
    before_exec();
    return after_failed_exec(fn(path, argv));
}

DETSHIM_EXPORT int execvp(const char *file, char *const argv[])
{
    REAL(execv_fn, execvp);
    before_exec();
    return after_failed_exec(fn(file, argv));
}

/* The execl family: collects (arg0, ..., NULL) into an argv array, then
 * calls the matching array form; execle's envp follows the NULL. */
enum exec_list_kind { LIST_PATH, LIST_SEARCH, LIST_ENV };

static int exec_list(enum exec_list_kind kind, const char *path, const char *arg0, va_list *ap)
{
    char *argv[MAX_EXEC_ARGS];
    int n = 0;
    argv[n++] = (char *)arg0;
    while (argv[n - 1]) {
        if (n == MAX_EXEC_ARGS) {
            errno = E2BIG;
            return -1;
        }
        argv[n++] = va_arg(*ap, char *);
    }
    if (kind == LIST_SEARCH)
        return execvp(path, argv);
    if (kind == LIST_ENV)
        return execve(path, argv, va_arg(*ap, char *const *));
    return execv(path, argv);
}

DETSHIM_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(LIST_PATH, path, arg, &ap);
    va_end(ap);
    return rc;
}

DETSHIM_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(LIST_SEARCH, file, arg, &ap);
    va_end(ap);
    return rc;
}

DETSHIM_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(LIST_ENV, path, arg, &ap);
    va_end(ap);
    return rc;
}
