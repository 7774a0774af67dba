/* The C library's generators are deterministic once seeded, and programs
 * seed them from the clock and the pid (srand(time(NULL) ^ getpid())). The
 * seed passed in is replaced by one derived from the policy seed; the
 * clock itself is never touched, so a program that mixes the time into its
 * own generator stays out of reach (docs/randomness.md). Used without any seed,
 * rand(), random() and drand48() already start from glibc's fixed state.
 */
#include <stdint.h>
#include <stdlib.h>

#include "core/core.h"
#include "rng/rng.h"

typedef void (*srand_fn)(unsigned int);
typedef char *(*initstate_fn)(unsigned int, char *, size_t);
typedef void (*srand48_fn)(long);
typedef unsigned short *(*seed48_fn)(unsigned short[3]);
typedef void (*lcong48_fn)(unsigned short[7]);

/* Replaces *seed (n bytes) with the source's next derived value when the
 * call is pinned; traces the seed that takes effect either way. */
static void derive(const char *api, int source, void *seed, size_t n, const void *caller)
{
    enum rng_action act = rng_decide(caller);
    if (act == RNG_PINNED && rng_fill(source, seed, n) != 0)
        act = RNG_UNPINNED; /* reported; the program's own seed stays */
    rng_record(api, source, act, seed, n);
}

DETSHIM_EXPORT void srand(unsigned int seed)
{
    REAL_FN(srand_fn, srand);
    derive("srand", RNG_SRAND, &seed, sizeof seed, __builtin_return_address(0));
    real(seed);
}

DETSHIM_EXPORT void srandom(unsigned int seed)
{
    REAL_FN(srand_fn, srandom);
    derive("srandom", RNG_SRANDOM, &seed, sizeof seed, __builtin_return_address(0));
    real(seed);
}

DETSHIM_EXPORT char *initstate(unsigned int seed, char *state, size_t n)
{
    REAL_FN(initstate_fn, initstate);
    derive("initstate", RNG_INITSTATE, &seed, sizeof seed, __builtin_return_address(0));
    return real(seed, state, n);
}

DETSHIM_EXPORT void srand48(long seed)
{
    REAL_FN(srand48_fn, srand48);
    derive("srand48", RNG_SRAND48, &seed, sizeof seed, __builtin_return_address(0));
    real(seed);
}

DETSHIM_EXPORT unsigned short *seed48(unsigned short seed[3])
{
    REAL_FN(seed48_fn, seed48);
    unsigned short mine[3] = { seed[0], seed[1], seed[2] };
    derive("seed48", RNG_SEED48, mine, sizeof mine, __builtin_return_address(0));
    return real(mine); /* the caller's array is left as it passed it */
}

DETSHIM_EXPORT void lcong48(unsigned short param[7])
{
    REAL_FN(lcong48_fn, lcong48);
    /* param[0..2] is the seed; param[3..6] define the generator and stay. */
    unsigned short mine[7];
    for (int i = 0; i < 7; i++)
        mine[i] = param[i];
    derive("lcong48", RNG_LCONG48, mine, 3 * sizeof *mine, __builtin_return_address(0));
    real(mine);
}
