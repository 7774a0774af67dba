/* Pinned randomness: every source of entropy a process reads becomes a
 * stream from a keyed PRF of (policy seed, process lineage, source, call
 * ordinal), so an unseeded program gives the same results every run while
 * forked children still get streams of their own. Callers inside
 * cryptographic libraries are exempt and get real entropy: a pinned TLS key
 * is a security hole. Module prefix `rng_`.
 */
#ifndef DETSHIM_RNG_H
#define DETSHIM_RNG_H

#include <stddef.h>
#include <stdint.h>

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
    RNG_NSOURCES
};

/* What an intercepted entropy call does, decided per call. */
enum rng_action {
    RNG_REAL = 0,   /* not ours to touch: during start-up, re-entered, a vfork child */
    RNG_PINNED,     /* serve the derived stream */
    RNG_EXEMPT,     /* real entropy: the caller is a crypto library */
    RNG_UNPINNED,   /* real entropy: the policy says pin = none (still traced) */
};

/* Decides for a call from return address `caller`, starting the shim if it
 * has not started. */
enum rng_action rng_decide(const void *caller);

/* Fills buf with the derived stream for the next call of `source`.
 * Returns 0, or -1 if it could not (reported; the caller then uses real
 * entropy, which only happens with DETSHIM_ON_ERROR=warn). */
int rng_fill(int source, void *buf, size_t len);

/* Records an entropy call in the trace (when tracing): api, byte count, the
 * bytes returned (digested unless the action is RNG_EXEMPT, whose bytes are
 * real entropy and differ every run by design). */
void rng_record(const char *api, int source, enum rng_action action, const void *buf,
                size_t len);

/* The source's name as traced, e.g. "/dev/urandom". */
const char *rng_source_name(int source);

/* 1 if `module` (a file name) is exempt: libssl, libcrypto, libgnutls,
 * libsodium, or a prefix listed in the policy's [rng] exempt_modules. */
int rng_module_exempt(const char *module, const char *policy_list);

#endif
