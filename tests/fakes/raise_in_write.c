/* Preloaded ahead of the shim by test-exit.sh: raises SIGTERM from inside
 * the shim's own trace write, deterministically, where the timed runs only
 * land by chance. RAISE_AT_TRACE_WRITE=N: on the Nth write(2) to a file
 * in DETSHIM_TRACE (1: the header, written while the file is being opened;
 * 2: the first full buffer, written while its thread holds the buffer),
 * raise SIGTERM, then write.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 1 if fd is a file in DETSHIM_TRACE: the shim writes a trace file's
 * header before the file has its name (it is linked in afterwards), so
 * the name cannot tell. */
static int is_trace_file(int fd)
{
    const char *dir = getenv("DETSHIM_TRACE");
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (!dir || n <= 0)
        return 0;
    target[n] = 0;
    size_t d = strlen(dir);
    return strncmp(target, dir, d) == 0 && target[d] == '/';
}

ssize_t write(int fd, const void *buf, size_t len)
{
    static ssize_t (*real)(int, const void *, size_t);
    static int count;
    if (!real)
        real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    const char *at = getenv("RAISE_AT_TRACE_WRITE");
    if (at && is_trace_file(fd) && ++count == atoi(at))
        raise(SIGTERM);
    return real(fd, buf, len);
}
