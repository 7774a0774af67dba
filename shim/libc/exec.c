/* exec replaces the process image without running destructors, so the
 * records the old image still holds in memory would be lost: close its
 * trace first (the new image starts its own, under the process's name:
 * shim/core/lineage.c). If exec
 * fails and returns, the old image goes on untraced, and says so at
 * DETSHIM_LOG=info; a call it makes then marks its trace incomplete. In a vfork child nothing is written: the trace belongs
 * to the parent. The new image learns it is this process's exec from the
 * environment it is handed (lineage_exec_env), so the forms without an
 * envp run as their envp forms over environ. The variadic execl family is
 * rebuilt into argv arrays.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <unistd.h>

#include "core/core.h"
#include "core/lineage.h"
#include "libc/libc.h"
#include "trace/trace.h"

#define MAX_EXEC_ARGS 4096

static void before_exec(void)
{
    trace_process_flush_for_exec();
}

static int after_failed_exec(int rc)
{
    core_log(DS_LOG_INFO, "exec failed; this process continues untraced");
    return rc;
}

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

extern char **environ;

static void *real_execve, *real_execvpe, *real_fexecve;

#define REAL(type, name) type fn = (type)(uintptr_t)resolve_real_cached(&real_##name, #name)

void libc_exec_prepare(void)
{
    /* Resolved at start-up: a vfork child calling exec must not run the
     * dynamic loader's lookup, which may allocate in the parent's heap. */
    resolve_real_cached(&real_execve, "execve");
    resolve_real_cached(&real_execvpe, "execvpe");
    resolve_real_cached(&real_fexecve, "fexecve");
}

/* Runs one exec form with the environment lineage_exec_env gives. */
#define EXEC_WITH_ENV(call, envp)                          \
    do {                                                   \
        before_exec();                                     \
        char *const *env_ = lineage_exec_env(envp);        \
        int rc_ = (call);                                  \
        lineage_exec_env_free(env_, envp);                 \
        return after_failed_exec(rc_);                     \
    } while (0)

DETSHIM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    REAL(execve_fn, execve);
    EXEC_WITH_ENV(fn(path, argv, env_), envp);
}

DETSHIM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    REAL(execve_fn, execvpe);
    EXEC_WITH_ENV(fn(file, argv, env_), envp);
}

DETSHIM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    REAL(fexecve_fn, fexecve);
    EXEC_WITH_ENV(fn(fd, argv, env_), envp);
}

DETSHIM_EXPORT int execv(const char *path, char *const argv[])
{
    REAL(execve_fn, execve);
    EXEC_WITH_ENV(fn(path, argv, env_), environ);
}

DETSHIM_EXPORT int execvp(const char *file, char *const argv[])
{
    REAL(execve_fn, execvpe);
    EXEC_WITH_ENV(fn(file, argv, env_), environ);
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
