/* Core services every intercepted family uses: start-up, configuration,
 * logging, the per-thread re-entry guard and real-symbol resolution.
 * Nothing here knows about a particular vendor library.
 */
#ifndef DETSHIM_CORE_H
#define DETSHIM_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define DETSHIM_EXPORT __attribute__((visibility("default")))

enum ds_log_level { DS_LOG_QUIET = 0, DS_LOG_INFO = 1, DS_LOG_DEBUG = 2 };
enum on_error { ON_ERROR_FAIL = 0, ON_ERROR_WARN = 1 };

/* The process configuration, read once from the environment and the policy
 * in core_init(). Read-only afterwards. */
struct core_config {
    int log_level;
    int on_error;
    int trace_on;            /* DETSHIM_TRACE given and usable */
    char trace_dir[4096];    /* absolute path */
    char policy_name[256];
    char policy_path[4096];
    char policy_files[2048]; /* the policy and its includes, " <- " between */
    char policy_digest[65];  /* SHA-256 of the policy file, hex */
    unsigned long long seed; /* DETSHIM_SEED, else the policy's */
    int rng_pin;             /* enum policy_rng_pin */
    char rng_exempt[1024];   /* the policy's extra exempt modules */
    char rng_never_pin[1024]; /* the policy's extra never-pin programs */
    int entropy_rule;        /* enum core_entropy_rule: this process's */
    char entropy_rule_text[256]; /* why it is real, for the trace header; "" when pinned */
    int blas_mode;           /* enum policy_blas_mode */
    int blas_threads;        /* the policy's [blas] threads; 0: auto */
    int cuda_mode;           /* enum policy_cuda_mode */
    int cuda_tf32;           /* enum policy_tf32 */
    int nccl_mode;           /* enum policy_nccl_mode */
    int nccl_conflict;       /* enum policy_nccl_conflict */
    char isa[16];            /* DETSHIM_ISA, "" for the best the CPU has */
    int trace_frames;        /* call-site depth recorded */
    unsigned long long trace_max_bytes; /* [trace] max_bytes per file; 0: unlimited */
    int trace_group_readable; /* [trace] readable_by = group */
    int trace_summary;       /* [trace] level = summary */
    int trace_compress;      /* [trace] compress = zstd */
    unsigned trace_window;   /* [trace] window: records per window digest */
    char artifacts[2048];    /* [trace] artifacts: globs of written files recorded */
    char inputs[2048];       /* [trace] inputs: globs of read files recorded */
};

extern struct core_config core_cfg;

/* The entropy rule of a whole process (core/entropy_rule.c,
 * docs/security.md): pinned where the policy pins, or real throughout. */
enum core_entropy_rule {
    CORE_ENTROPY_PIN = 0,
    CORE_ENTROPY_REAL_PROGRAM = 1, /* its executable is on the never-pin list */
    CORE_ENTROPY_REAL_NO_HOOK = 2, /* a Python that cannot run the start-up hook */
};
/* The built-in never-pin programs, comma-separated. */
extern const char core_never_pin_builtin[];
/* Sets core_cfg.entropy_rule and its text from this process's executable
 * and command line; `policy_list` adds never-pin programs. Says once on
 * stderr when a Python cannot run the start-up hook. */
void core_entropy_rule_read(const char *policy_list);

/* Runs start-up once, whoever calls first (our constructor, or an
 * intercepted call that arrives before it). Safe to call from any thread;
 * concurrent callers wait. On a fatal configuration error it prints one line
 * and exits with status 2, unless DETSHIM_ON_ERROR=warn. */
void core_init(void);
int core_ready(void);

/* Runs fn once per process. Returns 1 once fn has run (waiting for another
 * thread that is running it), 0 if called from inside fn itself. */
struct core_once {
    atomic_int state; /* 0 not run, 1 running, 2 done */
};
int core_once(struct core_once *o, void (*fn)(void));

/* The next item of a list whose items are separated by any of `seps`
 * (core/list.c): returns where it starts and sets *len to its length,
 * spaces around it left out, or returns NULL at the end. *p (a position in
 * the list; NULL: an empty list) moves past the item. */
const char *core_list_next(const char **p, const char *seps, size_t *len);

/* "model=<cpu model>;isa=<features>;cores=<n>" for the trace header
 * (core/machine.c). */
void core_machine_describe(char *out, size_t len);
/* The CPUs this process may run on (its affinity mask), at least 1. */
int core_cpus_allowed(void);
/* 1 if the CPU has AVX-512 (F, DQ, VL, BW, with AVX2 and FMA) and the OS
 * saves its state (XCR0), so code built for it may run (core/machine.c). */
int core_cpu_has_avx512(void);
/* Threads for the canonical kernels, which give the same bits at any
 * count: [blas] threads, or with auto every allowed CPU. */
int core_canonical_threads(void);
/* The vendor BLAS's thread count in pinned mode and for fallbacks, where
 * the count changes bits: [blas] threads, or with auto 1, a count that
 * does not depend on the machine. */
int core_vendor_threads(void);

/* Logging: one line, prefixed "detshim: ". */
void core_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A fatal configuration problem: fail mode prints and exits 2; warn mode
 * prints "(continuing without ...)" and returns. */
void core_fail(const char *what_is_disabled, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Per-thread re-entry guard: while a thread is inside the shim (or inside
 * the real function an interceptor called), nested intercepted calls pass
 * straight through. guard_enter returns 1 if the caller now owns the guard,
 * 0 if it was already held. Inline: every intercepted call takes it, a
 * traced BLAS call three times (shim/core/guard.c). */
extern _Thread_local int guard_depth __attribute__((tls_model("initial-exec")));
static inline int guard_enter(void)
{
    if (guard_depth)
        return 0;
    guard_depth = 1;
    return 1;
}
static inline void guard_leave(void)
{
    guard_depth = 0;
}
static inline int guard_held(void)
{
    return guard_depth;
}

/* Real-symbol resolution. Returns the address of the next definition of
 * `name` after ours: RTLD_NEXT first, then every loaded object (libraries
 * loaded RTLD_LOCAL, e.g. by PyTorch), never our own. NULL if nowhere. */
void *resolve_real(const char *name);
/* A test of a loaded object's file name (without its directory): 1 to
 * prefer its definitions. */
typedef int (*resolve_preference)(const char *file);
/* resolve_real, preferring a definition in an object `preferred` accepts
 * (a vendor library over a wrapper or stub of the same name elsewhere);
 * any other definition only when no such object has one. NULL: none
 * preferred, as resolve_real. */
void *resolve_real_preferring(const char *name, resolve_preference preferred);
/* resolve_real with a per-symbol cache; on a miss, prints one line naming
 * the symbol and exits 2 (there is nothing correct to call). */
void *resolve_real_cached(void **cache, const char *name);
/* resolve_real_preferring with a cache, and the same miss. */
void *resolve_real_cached_preferring(void **cache, const char *name,
                                    resolve_preference preferred);
/* In an interceptor: declares `real`, the next definition of `name` after
 * ours, as a `type` function pointer, resolved at first use and cached. */
#define REAL_FN(type, name)                                                              \
    static void *real_##name##_cache;                                                    \
    type real = (type)(uintptr_t)resolve_real_cached(&real_##name##_cache, #name)

/* 1 if addr lies inside libdetshim itself. */
int resolve_is_ours(const void *addr);
/* A number that changes whenever a library is loaded or unloaded (never 0),
 * for caches of answers that depend on the loaded objects. */
unsigned long long resolve_loaded_generation(void);
/* 1 when the audit module (LD_AUDIT=.../libdetshim-audit.so) is loaded:
 * CUDA library functions looked up with dlsym then reach the shim too. */
int resolve_audit_active(void);
/* Directory holding libdetshim.so (no trailing slash). */
const char *resolve_self_dir(void);

/* The environment, bypassing a program's own getenv/setenv (bash exports
 * both; core/environ.c). core_getenv returns the value in the environ
 * array, or NULL; core_setenv overwrites with glibc's setenv and returns
 * its result (0, or -1 with errno). Every read and write of the shim goes
 * through these. */
const char *core_getenv(const char *name);
int core_setenv(const char *name, const char *value);

#endif
