/* The derived entropy streams and the per-call decision. A call's bytes are
 * the ChaCha20 keystream under key SHA256("detshim.rng.v1" || seed ||
 * lineage || 0 || source || 0 || ordinal), where ordinal counts this
 * process's calls of that source. Same seed, same process in the lineage,
 * same call: same bytes; anything else: unrelated bytes.
 */
#include <dlfcn.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "trace/chain.h"
#include "core/core.h"
#include "trace/digest.h"
#include "core/lineage.h"
#include "core/policy.h"
#include "rng/rng.h"
#include "trace/trace.h"

static const char *const source_names[RNG_NSOURCES] = {
    [RNG_GETRANDOM] = "getrandom",
    [RNG_GETENTROPY] = "getentropy",
    [RNG_SYSCALL_GETRANDOM] = "syscall(SYS_getrandom)",
    [RNG_DEV_URANDOM] = "/dev/urandom",
    [RNG_DEV_RANDOM] = "/dev/random",
    [RNG_ARC4RANDOM] = "arc4random",
    [RNG_SRAND] = "srand",
    [RNG_SRANDOM] = "srandom",
    [RNG_INITSTATE] = "initstate",
    [RNG_SRAND48] = "srand48",
    [RNG_SEED48] = "seed48",
    [RNG_LCONG48] = "lcong48",
    [RNG_CURAND] = "curand",
    [RNG_RANDOM_DEVICE] = "std::random_device",
};

static _Atomic uint64_t ordinals[RNG_NSOURCES];
static pid_t owner_pid;
static EVP_CIPHER *chacha;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

/* Why a call gets real entropy (docs/security.md), as traced. */
static const char *const why_names[] = {
    [RNG_WHY_CRYPTO_LIBRARY] = "crypto library",
    [RNG_WHY_PROGRAM] = "never-pin program",
    [RNG_WHY_SECRET] = "secret (Python start-up hook)",
    [RNG_WHY_NO_HOOK] = "Python without its start-up hook",
    [RNG_WHY_POLICY_MODULE] = "policy exempt_modules",
};
/* This process's own reason (its program is never pinned), 0 if none. */
static int process_why;
/* Set by rng_decide for rng_record on the same thread. */
static _Thread_local int last_why;
/* Depth of detshim_rng_real_begin calls on this thread. */
static _Thread_local int real_depth;

void rng_fork_child(void)
{
    /* The child's lineage name differs, so its streams restart at 0. */
    for (int i = 0; i < RNG_NSOURCES; i++)
        atomic_store(&ordinals[i], 0);
    owner_pid = getpid();
}

static void setup(void)
{
    owner_pid = getpid();
    chacha = EVP_CIPHER_fetch(NULL, "ChaCha20", NULL);
    process_why = core_cfg.entropy_rule == CORE_ENTROPY_REAL_PROGRAM   ? RNG_WHY_PROGRAM
                  : core_cfg.entropy_rule == CORE_ENTROPY_REAL_NO_HOOK ? RNG_WHY_NO_HOOK
                                                                        : 0;
}

DETSHIM_EXPORT void detshim_rng_real_begin(void)
{
    real_depth++;
}

DETSHIM_EXPORT void detshim_rng_real_end(void)
{
    if (real_depth > 0)
        real_depth--;
}

const char *rng_source_name(int source)
{
    return source >= 0 && source < RNG_NSOURCES ? source_names[source] : "?";
}

static int has_prefix(const char *s, const char *prefix, size_t n)
{
    return n && strncmp(s, prefix, n) == 0;
}

int rng_module_exempt(const char *module, const char *policy_list)
{
    static const char *const builtin[] = { "libssl", "libcrypto", "libgnutls", "libsodium" };
    for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++)
        if (has_prefix(module, builtin[i], strlen(builtin[i])))
            return 1;
    size_t n;
    for (const char *p = policy_list, *s; (s = core_list_next(&p, ", ", &n));)
        if (has_prefix(module, s, n))
            return 1;
    return 0;
}

/* RNG_WHY_CRYPTO_LIBRARY or RNG_WHY_POLICY_MODULE for a caller in an
 * exempt module, else 0. */
static int module_exempt_at(const void *caller)
{
    Dl_info info;
    if (!caller || !dladdr(caller, &info) || !info.dli_fname)
        return 0;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    if (rng_module_exempt(base, NULL))
        return RNG_WHY_CRYPTO_LIBRARY;
    return rng_module_exempt(base, core_cfg.rng_exempt) ? RNG_WHY_POLICY_MODULE : 0;
}

/* dladdr walks the link map; call sites repeat. Each slot is one 64-bit
 * word, (return address << 3) | why, so a racing writer can never pair
 * one address with another's answer. A library unloaded and another
 * loaded at the same address would keep a stale answer: the cache is
 * flushed when the loaded-object count changes. */
#define EXEMPT_CACHE 64
static _Atomic uint64_t exempt_cache[EXEMPT_CACHE];
static _Atomic unsigned long long exempt_cache_gen;

static int caller_exempt(const void *caller)
{
    uintptr_t a = (uintptr_t)caller;
    unsigned long long gen = resolve_loaded_generation();
    if (atomic_exchange(&exempt_cache_gen, gen) != gen)
        for (int i = 0; i < EXEMPT_CACHE; i++)
            atomic_store(&exempt_cache[i], 0);
    size_t slot = (a >> 4) % EXEMPT_CACHE;
    uint64_t v = atomic_load_explicit(&exempt_cache[slot], memory_order_relaxed);
    if (v && (v >> 3) == a)
        return (int)(v & 7);
    int why = module_exempt_at(caller);
    atomic_store_explicit(&exempt_cache[slot], ((uint64_t)a << 3) | (uint64_t)why,
                          memory_order_relaxed);
    return why;
}

enum rng_action rng_decide(const void *caller)
{
    if (guard_held())
        return RNG_REAL;
    trace_start();
    if (!core_ready())
        return RNG_REAL; /* start-up itself reached us (e.g. reading the policy) */
    pthread_once(&setup_once, setup);
    if (getpid() != owner_pid)
        return RNG_REAL; /* a vfork child: it shares our counters until exec */
    last_why = process_why ? process_why : real_depth ? RNG_WHY_SECRET : caller_exempt(caller);
    if (last_why)
        return RNG_EXEMPT;
    return core_cfg.rng_pin == RNG_PIN_ALL ? RNG_PINNED : RNG_UNPINNED;
}

int rng_fill(int source, void *buf, size_t len)
{
    pthread_once(&setup_once, setup);
    int owned = guard_enter(); /* OpenSSL must not see our own wrappers */
    uint64_t ordinal = atomic_fetch_add(&ordinals[source], 1);
    uint8_t material[512], key[32], iv[16] = { 0 };
    size_t n = 0;
    const char *parts[2] = { lineage_name(), source_names[source] };
    memcpy(material, "detshim.rng.v1", 14);
    n = 14;
    for (int i = 0; i < 8; i++)
        material[n++] = (uint8_t)(core_cfg.seed >> (8 * i));
    for (int p = 0; p < 2; p++) {
        size_t l = strnlen(parts[p], 200);
        memcpy(material + n, parts[p], l);
        n += l;
        material[n++] = 0;
    }
    for (int i = 0; i < 8; i++)
        material[n++] = (uint8_t)(ordinal >> (8 * i));
    chain_sha256(material, n, NULL, 0, key);

    /* Keystream = ChaCha20 encryption of zeros. */
    memset(buf, 0, len);
    /* One cipher context per thread, re-keyed per call (allocating one per
     * call was a third of a pinned getrandom). */
    static _Thread_local EVP_CIPHER_CTX *ctx;
    if (!ctx)
        ctx = EVP_CIPHER_CTX_new();
    int ok = ctx && chacha && EVP_EncryptInit_ex(ctx, chacha, NULL, key, iv);
    uint8_t *out = buf;
    for (size_t done = 0; ok && done < len;) {
        int chunk = len - done > (1u << 30) ? (1 << 30) : (int)(len - done), got = 0;
        ok = EVP_EncryptUpdate(ctx, out + done, &got, out + done, chunk) && got == chunk;
        done += (size_t)chunk;
    }
    if (owned)
        guard_leave();
    if (!ok) /* never hand out zeros: fail, or (warn) let the caller use real entropy */
        core_fail("pinned randomness", "cannot derive pinned entropy: OpenSSL's ChaCha20 "
                  "is unavailable; install libssl3 with its default provider");
    return ok ? 0 : -1;
}

void rng_record(const char *api, int source, enum rng_action action, const void *buf, size_t len)
{
    if (action == RNG_REAL || !trace_active() || !guard_enter())
        return;
    static const char *const action_names[] = { "real", "pinned", "exempt", "unpinned" };
    struct trace_rec r;
    trace_rec_begin(&r, api);
    /* Real reads are outside every root: their number and timing may
     * differ run to run without changing what the run commits to. */
    trace_rec_stream(&r, action == RNG_EXEMPT ? TRACE_STREAM_REAL : TRACE_STREAM_ENTROPY);
    trace_rec_int(&r, "n", (int64_t)len);
    /* Exempt bytes are real entropy: only their count is comparable. */
    detshim_digest d = action == RNG_EXEMPT ? digest_bytes(NULL, 0) : digest_bytes(buf, len);
    trace_rec_operand(&r, "bytes", TRACE_ROLE_OUT, d, action == RNG_EXEMPT ? 0 : len, 1);
    trace_rec_note(&r, "rng.source", source_names[source]);
    trace_rec_note(&r, "rng", action_names[action]);
    if (action == RNG_EXEMPT && last_why > 0 && last_why < RNG_WHY_COUNT)
        trace_rec_note(&r, "rng.why", why_names[last_why]);
    trace_rec_commit(&r);
    guard_leave();
}
