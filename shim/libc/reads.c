/* Reading: read, pread, pread64, fread and their _FORTIFY_SOURCE __*_chk
 * forms. A read from a descriptor or stream the random devices module
 * marked as /dev/urandom or /dev/random (shim/rng/devrandom.c) is served
 * the derived stream when pinned; every other read costs one bit test.
 */
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/core.h"
#include "rng/rng.h"


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
    int source = rng_dev_fd_source(fd);                                                  \
    if (__builtin_expect(source < 0, 1))                                                 \
        return call_real;                                                                \
    enum rng_action act;                                                                 \
    if (rng_dev_serve(api, fd, source, buf, len, __builtin_return_address(0), &act))     \
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
    int source = rng_dev_file_source(stream);                                            \
    if (__builtin_expect(source < 0, 1))                                                 \
        return call_real;                                                                \
    enum rng_action act;                                                                 \
    size_t len = size * nmemb;                                                           \
    if (size && len / size == nmemb &&                                                   \
        rng_dev_serve("fread", fileno(stream), source, buf, len, __builtin_return_address(0), \
                      &act))                                                             \
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
