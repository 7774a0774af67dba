/* Opening, closing and renaming files. Two modules need to see them: the
 * random devices (shim/rng/devrandom.c: a descriptor of /dev/urandom is
 * served the pinned stream) and the artifacts (shim/artifact/artifact.c:
 * files the program writes or reads that the policy names are hashed into
 * the trace). Each interposer calls the real function first, then tells
 * both; a failed call tells neither.
 *
 * open, open64, openat, openat64: every way C and most runtimes open a file
 *   (CPython, libstdc++'s ofstream through fopen, Rust's std::fs).
 * __open_2 and friends: what _FORTIFY_SOURCE builds call instead.
 * creat, creat64: old programs create files this way.
 * fopen, fopen64: streams; fclose does not call our close.
 * close, fclose: the last moment a written artifact's bytes are complete.
 * rename, renameat, renameat2: safetensors, orbax and torch write under a
 *   temporary name and rename into place; the final name is the artifact.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "core/core.h"
#include "rng/rng.h"

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

/* After a successful open of path (relative to dirfd) as fd. */
static int opened(int dirfd, const char *path, int flags, int fd)
{
    if (fd >= 0) {
        rng_dev_opened(fd, path);
        artifact_opened(dirfd, path, flags, fd);
    }
    return fd;
}

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open2_fn)(const char *, int);
typedef int (*openat2_fn)(int, const char *, int);
typedef int (*creat_fn)(const char *, mode_t);

#define OPEN_WRAPPER(name)                                                               \
    DETSHIM_EXPORT int name(const char *path, int flags, ...)                            \
    {                                                                                    \
        REAL_FN(open_fn, name);                                                          \
        va_list ap;                                                                      \
        va_start(ap, flags);                                                             \
        mode_t mode = mode_arg(flags, ap);                                               \
        va_end(ap);                                                                      \
        return opened(AT_FDCWD, path, flags, real(path, flags, mode));                   \
    }
OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

#define OPENAT_WRAPPER(name)                                                             \
    DETSHIM_EXPORT int name(int dirfd, const char *path, int flags, ...)                 \
    {                                                                                    \
        REAL_FN(openat_fn, name);                                                        \
        va_list ap;                                                                      \
        va_start(ap, flags);                                                             \
        mode_t mode = mode_arg(flags, ap);                                               \
        va_end(ap);                                                                      \
        return opened(dirfd, path, flags, real(dirfd, path, flags, mode));               \
    }
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

#define OPEN2_WRAPPER(name)                                                              \
    DETSHIM_EXPORT int name(const char *path, int flags)                                 \
    {                                                                                    \
        REAL_FN(open2_fn, name);                                                         \
        return opened(AT_FDCWD, path, flags, real(path, flags));                         \
    }
OPEN2_WRAPPER(__open_2)
OPEN2_WRAPPER(__open64_2)

#define OPENAT2_WRAPPER(name)                                                            \
    DETSHIM_EXPORT int name(int dirfd, const char *path, int flags)                      \
    {                                                                                    \
        REAL_FN(openat2_fn, name);                                                       \
        return opened(dirfd, path, flags, real(dirfd, path, flags));                     \
    }
OPENAT2_WRAPPER(__openat_2)
OPENAT2_WRAPPER(__openat64_2)

#define CREAT_WRAPPER(name)                                                              \
    DETSHIM_EXPORT int name(const char *path, mode_t mode)                               \
    {                                                                                    \
        REAL_FN(creat_fn, name);                                                         \
        return opened(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, real(path, mode));   \
    }
CREAT_WRAPPER(creat)
CREAT_WRAPPER(creat64)

typedef FILE *(*fopen_fn)(const char *, const char *);

static FILE *fopened(const char *path, const char *mode, FILE *f)
{
    if (f) {
        rng_dev_fopened(f, path);
        artifact_fopened(path, mode, f);
    }
    return f;
}

DETSHIM_EXPORT FILE *fopen(const char *path, const char *mode)
{
    REAL_FN(fopen_fn, fopen);
    return fopened(path, mode, real(path, mode));
}

DETSHIM_EXPORT FILE *fopen64(const char *path, const char *mode)
{
    REAL_FN(fopen_fn, fopen64);
    return fopened(path, mode, real(path, mode));
}

typedef int (*close_fn)(int);
typedef int (*fclose_fn)(FILE *);

DETSHIM_EXPORT int close(int fd)
{
    REAL_FN(close_fn, close);
    rng_dev_closing(fd);
    artifact_closing(fd);
    return real(fd);
}

DETSHIM_EXPORT int fclose(FILE *f)
{
    REAL_FN(fclose_fn, fclose);
    rng_dev_fclosing(f);
    artifact_fclosing(f);
    return real(f);
}

typedef int (*rename_fn)(const char *, const char *);
typedef int (*renameat_fn)(int, const char *, int, const char *);
typedef int (*renameat2_fn)(int, const char *, int, const char *, unsigned int);

DETSHIM_EXPORT int rename(const char *old, const char *new)
{
    REAL_FN(rename_fn, rename);
    int rc = real(old, new);
    if (rc == 0)
        artifact_renamed(AT_FDCWD, old, AT_FDCWD, new);
    return rc;
}

DETSHIM_EXPORT int renameat(int olddir, const char *old, int newdir, const char *new)
{
    REAL_FN(renameat_fn, renameat);
    int rc = real(olddir, old, newdir, new);
    if (rc == 0)
        artifact_renamed(olddir, old, newdir, new);
    return rc;
}

DETSHIM_EXPORT int renameat2(int olddir, const char *old, int newdir, const char *new,
                             unsigned int flags)
{
    REAL_FN(renameat2_fn, renameat2);
    int rc = real(olddir, old, newdir, new, flags);
    if (rc == 0)
        artifact_renamed(olddir, old, newdir, new);
    return rc;
}
