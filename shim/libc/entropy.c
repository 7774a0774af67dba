/* The system-call style entropy sources: getrandom, getentropy,
 * syscall(SYS_getrandom, ...) (CPython and others call it directly), and
 * glibc 2.36's arc4random family. Each call is decided by rng_decide() from
 * its caller's module, served from the derived stream when pinned, and
 * traced.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/core.h"
#include "rng/rng.h"

typedef ssize_t (*getrandom_fn)(void *, size_t, unsigned int);
typedef int (*getentropy_fn)(void *, size_t);
typedef long (*syscall_fn)(long, long, long, long, long, long, long);
typedef uint32_t (*arc4random_fn)(void);
typedef void (*arc4random_buf_fn)(void *, size_t);
typedef uint32_t (*arc4random_uniform_fn)(uint32_t);

/* Serves `len` pinned bytes for a call already decided RNG_PINNED, or
 * returns -1 (then the caller uses the real function). */
static int serve(const char *api, int source, void *buf, size_t len)
{
    if (rng_fill(source, buf, len) != 0)
        return -1;
    rng_record(api, source, RNG_PINNED, buf, len);
    return 0;
}

DETSHIM_EXPORT ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
    REAL_FN(getrandom_fn, getrandom);
    enum rng_action act = rng_decide(__builtin_return_address(0));
    if (act == RNG_PINNED && serve("getrandom", RNG_GETRANDOM, buf, len) == 0)
        return (ssize_t)len;
    ssize_t n = real(buf, len, flags);
    if (n > 0)
        rng_record("getrandom", RNG_GETRANDOM, act, buf, (size_t)n);
    return n;
}

DETSHIM_EXPORT int getentropy(void *buf, size_t len)
{
    REAL_FN(getentropy_fn, getentropy);
    enum rng_action act = rng_decide(__builtin_return_address(0));
    if (len > 256) /* the real function's limit, kept */
        return real(buf, len);
    if (act == RNG_PINNED && serve("getentropy", RNG_GETENTROPY, buf, len) == 0)
        return 0;
    int rc = real(buf, len);
    if (rc == 0)
        rng_record("getentropy", RNG_GETENTROPY, act, buf, len);
    return rc;
}

/* syscall() is variadic; every Linux system call takes at most six
 * arguments, passed as longs, so forwarding six is exact. */
DETSHIM_EXPORT long syscall(long number, ...)
{
    REAL_FN(syscall_fn, syscall);
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (number != SYS_getrandom)
        return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    void *buf = (void *)a[0];
    size_t len = (size_t)a[1];
    enum rng_action act = rng_decide(__builtin_return_address(0));
    if (act == RNG_PINNED && serve("syscall(SYS_getrandom)", RNG_SYSCALL_GETRANDOM, buf, len) == 0)
        return (long)len;
    long n = real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (n > 0)
        rng_record("syscall(SYS_getrandom)", RNG_SYSCALL_GETRANDOM, act, buf, (size_t)n);
    return n;
}

DETSHIM_EXPORT void arc4random_buf(void *buf, size_t len)
{
    REAL_FN(arc4random_buf_fn, arc4random_buf);
    enum rng_action act = rng_decide(__builtin_return_address(0));
    if (act == RNG_PINNED && serve("arc4random_buf", RNG_ARC4RANDOM, buf, len) == 0)
        return;
    real(buf, len);
    rng_record("arc4random_buf", RNG_ARC4RANDOM, act, buf, len);
}

DETSHIM_EXPORT uint32_t arc4random(void)
{
    REAL_FN(arc4random_fn, arc4random);
    enum rng_action act = rng_decide(__builtin_return_address(0));
    uint32_t v;
    if (act == RNG_PINNED && serve("arc4random", RNG_ARC4RANDOM, &v, sizeof v) == 0)
        return v;
    v = real();
    rng_record("arc4random", RNG_ARC4RANDOM, act, &v, sizeof v);
    return v;
}

DETSHIM_EXPORT uint32_t arc4random_uniform(uint32_t upper)
{
    REAL_FN(arc4random_uniform_fn, arc4random_uniform);
    enum rng_action act = rng_decide(__builtin_return_address(0));
    if (act != RNG_PINNED || upper < 2) {
        uint32_t v = real(upper);
        rng_record("arc4random_uniform", RNG_ARC4RANDOM, act, &v, sizeof v);
        return v;
    }
    /* Uniform by rejection: drop draws from the incomplete top interval. */
    uint32_t min = (uint32_t)(-upper) % upper, v;
    do {
        if (serve("arc4random_uniform", RNG_ARC4RANDOM, &v, sizeof v) != 0)
            return real(upper);
    } while (v < min);
    return v % upper;
}
