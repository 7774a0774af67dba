/* /dev/urandom and /dev/random, however a program opens and reads them:
 * open/open64/openat/openat64 (and their _FORTIFY_SOURCE forms __open_2
 * and friends) and fopen/fopen64 mark the descriptor or stream; read,
 * pread, fread (and their __*_chk forms) on a marked one are served from
 * the derived stream. Descriptors are tracked in a bitmap, so every other
 * read costs one bit test. Before serving, the descriptor is checked to
 * still be the random device: a program that dup2()s another file onto a
 * marked number must read its own file, never ours.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "detshim/core.h"
#include "detshim/rng.h"

#define MAX_TRACKED_FD 65536
#define MAX_TRACKED_FILES 64

/* Two bits per descriptor: marked urandom, marked random. */
static _Atomic uint64_t fd_urandom[MAX_TRACKED_FD / 64], fd_random[MAX_TRACKED_FD / 64];
static FILE *_Atomic tracked_files[MAX_TRACKED_FILES];

static int source_of_path(const char *path)
{
    if (!path || path[0] != '/' || path[1] != 'd')
        return -1; /* the common case, decided in two compares */
    if (strcmp(path, "/dev/urandom") == 0)
        return RNG_DEV_URANDOM;
    if (strcmp(path, "/dev/random") == 0)
        return RNG_DEV_RANDOM;
    return -1;
}

static void mark_fd(int fd, int source)
{
    if (fd < 0 || fd >= MAX_TRACKED_FD || source < 0)
        return;
    _Atomic uint64_t *set = source == RNG_DEV_URANDOM ? fd_urandom : fd_random;
    atomic_fetch_or(&set[fd / 64], 1ull << (fd % 64));
}

static int fd_source(int fd);

static void unmark_fd(int fd)
{
    if (fd_source(fd) < 0)
        return; /* the common case: a plain load, no atomic write */
    atomic_fetch_and(&fd_urandom[fd / 64], ~(1ull << (fd % 64)));
    atomic_fetch_and(&fd_random[fd / 64], ~(1ull << (fd % 64)));
}

/* The source a descriptor was opened as, or -1. */
static int fd_source(int fd)
{
    if (fd < 0 || fd >= MAX_TRACKED_FD)
        return -1;
    uint64_t bit = 1ull << (fd % 64);
    if (atomic_load_explicit(&fd_urandom[fd / 64], memory_order_relaxed) & bit)
        return RNG_DEV_URANDOM;
    if (atomic_load_explicit(&fd_random[fd / 64], memory_order_relaxed) & bit)
        return RNG_DEV_RANDOM;
    return -1;
}

/* Still the kernel's random device (char 1:8 or 1:9)? */
static int fd_is_random_device(int fd)
{
    struct stat sb;
    return fstat(fd, &sb) == 0 && S_ISCHR(sb.st_mode) && major(sb.st_rdev) == 1 &&
           (minor(sb.st_rdev) == 8 || minor(sb.st_rdev) == 9);
}

static void track_file(FILE *f, int source)
{
    if (!f || source < 0)
        return;
    mark_fd(fileno(f), source);
    for (int i = 0; i < MAX_TRACKED_FILES; i++) {
        FILE *empty = NULL;
        if (atomic_compare_exchange_strong(&tracked_files[i], &empty, f))
            return;
    }
}

static int file_source(FILE *f)
{
    for (int i = 0; i < MAX_TRACKED_FILES; i++)
        if (atomic_load_explicit(&tracked_files[i], memory_order_relaxed) == f)
            return fd_source(fileno(f));
    return -1;
}

static void untrack_file(FILE *f)
{
    for (int i = 0; i < MAX_TRACKED_FILES; i++) {
        FILE *want = f;
        atomic_compare_exchange_strong(&tracked_files[i], &want, NULL);
    }
}

/* Serves a read of `len` bytes from a marked descriptor if the call is to
 * be pinned: returns 1 and fills buf, or 0 for "do the real read". */
static int serve(const char *api, int fd, int source, void *buf, size_t len, const void *caller,
                 enum rng_action *act)
{
    *act = rng_decide(caller);
    if (*act != RNG_PINNED || !fd_is_random_device(fd))
        return 0;
    if (rng_fill(source, buf, len) != 0)
        return 0;
    rng_record(api, source, RNG_PINNED, buf, len);
    return 1;
}

/* --- opening ------------------------------------------------------------ */

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open2_fn)(const char *, int);
typedef int (*openat2_fn)(int, const char *, int);

#define OPEN_WRAPPER(name)                                                               \
    DETSHIM_EXPORT int name(const char *path, int flags, ...)                            \
    {                                                                                    \
        REAL_FN(open_fn, name);                                                             \
        va_list ap;                                                                      \
        va_start(ap, flags);                                                             \
        mode_t mode = mode_arg(flags, ap);                                               \
        va_end(ap);                                                                      \
        int fd = real(path, flags, mode);                                                \
        mark_fd(fd, source_of_path(path));                                               \
        return fd;                                                                       \
    }
OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

#define OPENAT_WRAPPER(name)                                                             \
    DETSHIM_EXPORT int name(int dirfd, const char *path, int flags, ...)                 \
    {                                                                                    \
        REAL_FN(openat_fn, name);                                                           \
        va_list ap;                                                                      \
        va_start(ap, flags);                                                             \
        mode_t mode = mode_arg(flags, ap);                                               \
        va_end(ap);                                                                      \
        int fd = real(dirfd, path, flags, mode);                                         \
        mark_fd(fd, source_of_path(path));                                               \
        return fd;                                                                       \
    }
OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

#define OPEN2_WRAPPER(name)                                                              \
    DETSHIM_EXPORT int name(const char *path, int flags)                                 \
    {                                                                                    \
        REAL_FN(open2_fn, name);                                                            \
        int fd = real(path, flags);                                                      \
        mark_fd(fd, source_of_path(path));                                               \
        return fd;                                                                       \
    }
OPEN2_WRAPPER(__open_2)
OPEN2_WRAPPER(__open64_2)

#define OPENAT2_WRAPPER(name)                                                            \
    DETSHIM_EXPORT int name(int dirfd, const char *path, int flags)                      \
    {                                                                                    \
        REAL_FN(openat2_fn, name);                                                          \
        int fd = real(dirfd, path, flags);                                               \
        mark_fd(fd, source_of_path(path));                                               \
        return fd;                                                                       \
    }
OPENAT2_WRAPPER(__openat_2)
OPENAT2_WRAPPER(__openat64_2)

typedef FILE *(*fopen_fn)(const char *, const char *);

DETSHIM_EXPORT FILE *fopen(const char *path, const char *mode)
{
    REAL_FN(fopen_fn, fopen);
    FILE *f = real(path, mode);
    track_file(f, source_of_path(path));
    return f;
}

DETSHIM_EXPORT FILE *fopen64(const char *path, const char *mode)
{
    REAL_FN(fopen_fn, fopen64);
    FILE *f = real(path, mode);
    track_file(f, source_of_path(path));
    return f;
}

/* --- closing ------------------------------------------------------------ */

typedef int (*close_fn)(int);
typedef int (*fclose_fn)(FILE *);

DETSHIM_EXPORT int close(int fd)
{
    REAL_FN(close_fn, close);
    unmark_fd(fd);
    return real(fd);
}

DETSHIM_EXPORT int fclose(FILE *f)
{
    REAL_FN(fclose_fn, fclose);
    if (f && file_source(f) >= 0) {
        unmark_fd(fileno(f));
        untrack_file(f);
    }
    return real(f);
}

/* --- reading ------------------------------------------------------------ */

typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*read_chk_fn)(int, void *, size_t, size_t);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*pread_chk_fn)(int, void *, size_t, off_t, size_t);
typedef size_t (*fread_fn)(void *, size_t, size_t, FILE *);
typedef size_t (*fread_chk_fn)(void *, size_t, size_t, size_t, FILE *);

/* Shared tail of the read family: real bytes are traced too. */
static void record_real(const char *api, int source, enum rng_action act, const void *buf,
                        ssize_t n)
{
    if (n > 0)
        rng_record(api, source, act, buf, (size_t)n);
}

#define READ_BODY(api, call_real)                                                        \
    int source = fd_source(fd);                                                          \
    if (__builtin_expect(source < 0, 1))                                                 \
        return call_real;                                                                \
    enum rng_action act;                                                                 \
    if (serve(api, fd, source, buf, len, __builtin_return_address(0), &act))             \
        return (ssize_t)len;                                                             \
    ssize_t n = call_real;                                                               \
    record_real(api, source, act, buf, n);                                               \
    return n

DETSHIM_EXPORT ssize_t read(int fd, void *buf, size_t len)
{
    REAL_FN(read_fn, read);
    READ_BODY("read", real(fd, buf, len));
}

DETSHIM_EXPORT ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
    REAL_FN(read_chk_fn, __read_chk);
    READ_BODY("read", real(fd, buf, len, buflen));
}

DETSHIM_EXPORT ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
    REAL_FN(pread_fn, pread);
    READ_BODY("pread", real(fd, buf, len, off));
}

DETSHIM_EXPORT ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
    REAL_FN(pread_fn, pread64);
    READ_BODY("pread", real(fd, buf, len, off));
}

DETSHIM_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t len, off_t off, size_t buflen)
{
    REAL_FN(pread_chk_fn, __pread_chk);
    READ_BODY("pread", real(fd, buf, len, off, buflen));
}

DETSHIM_EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t len, off_t off, size_t buflen)
{
    REAL_FN(pread_chk_fn, __pread64_chk);
    READ_BODY("pread", real(fd, buf, len, off, buflen));
}

/* fread counts items: a pinned read serves whole items, as the device
 * never runs short. */
#define FREAD_BODY(call_real)                                                            \
    int source = stream ? file_source(stream) : -1;                                      \
    if (__builtin_expect(source < 0, 1))                                                 \
        return call_real;                                                                \
    enum rng_action act;                                                                 \
    size_t len = size * nmemb;                                                           \
    if (size && len / size == nmemb &&                                                   \
        serve("fread", fileno(stream), source, buf, len, __builtin_return_address(0), &act)) \
        return nmemb;                                                                    \
    act = rng_decide(__builtin_return_address(0));                                      \
    size_t items = call_real;                                                            \
    record_real("fread", source, act, buf, (ssize_t)(items * size));                     \
    return items

DETSHIM_EXPORT size_t fread(void *buf, size_t size, size_t nmemb, FILE *stream)
{
    REAL_FN(fread_fn, fread);
    FREAD_BODY(real(buf, size, nmemb, stream));
}

DETSHIM_EXPORT size_t __fread_chk(void *buf, size_t buflen, size_t size, size_t nmemb, FILE *stream)
{
    REAL_FN(fread_chk_fn, __fread_chk);
    FREAD_BODY(real(buf, buflen, size, nmemb, stream));
}
