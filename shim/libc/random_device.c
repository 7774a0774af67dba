/* libstdc++'s std::random_device: its inline operator() calls the member
 * _M_getval, exported from libstdc++.so.6 (_M_getval_pretr1 in programs
 * built with headers that lack _GLIBCXX_USE_RANDOM_TR1), and on CPUs with
 * rdrand or rdseed that member reads the instruction, which no libc
 * interposer sees: a C++ program seeding std::mt19937 from
 * std::random_device{}() (PyTorch's own ATen tests do) was unpinned. Both
 * members are defined here by their mangled names: a call decided
 * RNG_PINNED is served 4 bytes of the std::random_device stream, whatever
 * token the device was made with; any other goes to libstdc++. The caller
 * is the program's inlined operator(), so the exemptions (crypto
 * libraries, never-pin programs) apply as to every other source. libc++'s
 * std::random_device reads getentropy, arc4random or /dev/urandom, which
 * the interposers beside this one already serve.
 */
#include <stdint.h>

#include "core/core.h"
#include "rng/rng.h"

typedef unsigned int (*getval_fn)(void *device);

/* One draw for a decided call: pinned, or the real member's. */
static unsigned int draw(getval_fn real, void *device, const void *caller)
{
    static const char api[] = "std::random_device";
    enum rng_action act = rng_decide(caller);
    unsigned int v;
    if (act == RNG_PINNED && rng_fill(RNG_RANDOM_DEVICE, &v, sizeof v) == 0) {
        rng_record(api, RNG_RANDOM_DEVICE, RNG_PINNED, &v, sizeof v);
        return v;
    }
    v = real(device);
    rng_record(api, RNG_RANDOM_DEVICE, act, &v, sizeof v);
    return v;
}

/* std::random_device::_M_getval() */
DETSHIM_EXPORT unsigned int _ZNSt13random_device9_M_getvalEv(void *device)
{
    REAL_FN(getval_fn, _ZNSt13random_device9_M_getvalEv);
    return draw(real, device, __builtin_return_address(0));
}

/* std::random_device::_M_getval_pretr1() */
DETSHIM_EXPORT unsigned int _ZNSt13random_device16_M_getval_pretr1Ev(void *device)
{
    REAL_FN(getval_fn, _ZNSt13random_device16_M_getval_pretr1Ev);
    return draw(real, device, __builtin_return_address(0));
}
