/* Pinned randomness: every source of entropy a process reads becomes a
 * stream from a keyed PRF of (policy seed, process lineage, source, call
 * ordinal), so an unseeded program gives the same results every run while
 * forked children still get streams of their own. Secrets stay real: callers
 * inside cryptographic libraries, never-pin programs (ssh, gpg, java...)
 * and the Python functions the start-up hook marks get real entropy, as
 * docs/security.md states. Module prefix `rng_`.
 */
#ifndef DETSHIM_RNG_H
#define DETSHIM_RNG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum rng_source {
    RNG_GETRANDOM,
    RNG_GETENTROPY,
    RNG_SYSCALL_GETRANDOM,
    RNG_DEV_URANDOM,
    RNG_DEV_RANDOM,
    RNG_ARC4RANDOM,
    RNG_SRAND,
    RNG_SRANDOM,
    RNG_INITSTATE,
    RNG_SRAND48,
    RNG_SEED48,
    RNG_LCONG48,
    RNG_CURAND, /* cuRAND generator seeds (shim/cuda/curand.c), one per generator */
    RNG_RANDOM_DEVICE, /* libstdc++'s std::random_device (shim/libc/random_device.c) */
    RNG_NSOURCES
};

/* What an intercepted entropy call does, decided per call. */
enum rng_action {
    RNG_REAL = 0,   /* not ours to touch: during start-up, re-entered, a vfork child */
    RNG_PINNED,     /* serve the derived stream */
    RNG_EXEMPT,     /* real entropy: the caller is a crypto library */
    RNG_UNPINNED,   /* real entropy: the policy says pin = none (still traced) */
};

/* Why an RNG_EXEMPT call gets real entropy (docs/security.md). */
enum rng_why {
    RNG_WHY_CRYPTO_LIBRARY = 1, /* caller in libssl, libcrypto, libgnutls, libsodium */
    RNG_WHY_PROGRAM,            /* the process runs a never-pin program (ssh, java...) */
    RNG_WHY_SECRET,             /* inside detshim_rng_real_begin/end (Python's secrets...) */
    RNG_WHY_NO_HOOK,            /* Python that cannot run the start-up hook (-I, -E, -S) */
    RNG_WHY_POLICY_MODULE,      /* caller in a module of the policy's exempt_modules */
    RNG_WHY_COUNT
};

/* Fork handler (the lifecycle calls it): the child's streams restart. */
void rng_fork_child(void);

/* Decides for a call from return address `caller`, starting the shim if it
 * has not started. */
enum rng_action rng_decide(const void *caller);

/* Called by the Python start-up hook (through ctypes) around the library
 * functions that make secrets and identifiers: between begin and end, this
 * thread's entropy reads are real and advance no pinned stream. Nested
 * pairs count; an end without a begin does nothing. */
void detshim_rng_real_begin(void);
void detshim_rng_real_end(void);


/* Fills buf with the derived stream for the next call of `source`.
 * Returns 0, or -1 if it could not (reported; the caller then uses real
 * entropy, which only happens with DETSHIM_ON_ERROR=warn). */
int rng_fill(int source, void *buf, size_t len);

/* Records an entropy call in the trace (when tracing): api, byte count, the
 * bytes returned (digested unless the action is RNG_EXEMPT, whose bytes are
 * real entropy and differ every run by design). */
void rng_record(const char *api, int source, enum rng_action action, const void *buf,
                size_t len);

/* The random devices (shim/rng/devrandom.c), told about every open and
 * close by the libc interposers (shim/libc/files.c). The *opened calls
 * mark a descriptor or stream opened on path if path is /dev/urandom or
 * /dev/random; the *closing calls forget it. */
void rng_dev_opened(int fd, const char *path);
void rng_dev_fopened(FILE *f, const char *path);
void rng_dev_closing(int fd);
void rng_dev_fclosing(FILE *f);
/* The source (RNG_DEV_URANDOM, RNG_DEV_RANDOM) a descriptor or stream was
 * opened as, or -1: the common case, one bit test. */
int rng_dev_fd_source(int fd);
int rng_dev_file_source(FILE *f);
/* For a read of len bytes from a marked descriptor: decides (into *act)
 * and, if pinned and fd is still the random device, fills buf from the
 * derived stream, records it and returns 1; else 0: do the real read. */
int rng_dev_serve(const char *api, int fd, int source, void *buf, size_t len, const void *caller,
                  enum rng_action *act);

/* The source's name as traced, e.g. "/dev/urandom". */
const char *rng_source_name(int source);

/* 1 if `module` (a file name) is exempt: libssl, libcrypto, libgnutls,
 * libsodium, or a prefix listed in `policy_list` (the policy's [rng]
 * exempt_modules; NULL: the built-in ones only). */
int rng_module_exempt(const char *module, const char *policy_list);

#endif
