/* Real-symbol resolution: find the definition an intercepted call would
 * have reached without us. dlsym(RTLD_NEXT) covers libraries in the global
 * scope; libraries loaded RTLD_LOCAL (PyTorch's libtorch and its BLAS, the
 * OpenBLAS bundled in numpy wheels) are only reachable by walking the loaded
 * objects and asking each one. Our own definitions are never returned, or a
 * call would loop back into its wrapper.
 */
#include <dlfcn.h>
#include <link.h>
#include <libgen.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"

/* Cached atomically: every recording thread asks, the first ones at once. */
static void *self_base(void)
{
    static _Atomic(void *) base;
    void *b = atomic_load_explicit(&base, memory_order_relaxed);
    Dl_info info;
    if (!b && dladdr((void *)&self_base, &info))
        atomic_store_explicit(&base, b = info.dli_fbase, memory_order_relaxed);
    return b;
}

int resolve_is_ours(const void *addr)
{
    Dl_info info;
    if (!dladdr(addr, &info))
        return 0;
    return info.dli_fbase == self_base();
}

const char *resolve_self_dir(void)
{
    static char dir[PATH_MAX];
    if (!dir[0]) {
        Dl_info info;
        char path[PATH_MAX];
        if (dladdr((void *)&resolve_self_dir, &info) && info.dli_fname &&
            realpath(info.dli_fname, path)) {
            snprintf(dir, sizeof dir, "%s", dirname(path));
        } else {
            snprintf(dir, sizeof dir, ".");
        }
    }
    return dir;
}

/* Set to 1 by the audit module (shim/audit/audit.c) when it sees this
 * library mapped, before anything here runs; exported for it alone. */
DETSHIM_EXPORT volatile int detshim_audit_loaded;

int resolve_audit_active(void)
{
    return detshim_audit_loaded;
}

struct loaded_names {
    char (*names)[PATH_MAX];
    int n, cap;
};

static int collect_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct loaded_names *ln = arg;
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0; /* the main program: RTLD_NEXT already searched it */
    if ((void *)info->dlpi_addr == self_base())
        return 0;
    if (ln->n < ln->cap)
        snprintf(ln->names[ln->n++], PATH_MAX, "%s", info->dlpi_name);
    return 0;
}

static int count_loads(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(unsigned long long *)arg = info->dlpi_adds + info->dlpi_subs + 1;
    return 1; /* the counters are global: the first object is enough */
}

unsigned long long resolve_loaded_generation(void)
{
    unsigned long long gen = 0;
    dl_iterate_phdr(count_loads, &gen);
    return gen;
}

/* 1 if addr lies in a loaded object whose file name (without its
 * directory) `preferred` accepts. */
static int in_preferred(const void *addr, resolve_preference preferred)
{
    Dl_info info;
    if (!addr || !dladdr(addr, &info) || !info.dli_fname)
        return 0;
    const char *slash = strrchr(info.dli_fname, '/');
    return preferred(slash ? slash + 1 : info.dli_fname);
}

/* The walk over loaded objects: the first definition of name that is not
 * ours and, given `preferred`, lies in an object it accepts. NULL if none. */
static void *walk_loaded(const char *name, resolve_preference preferred)
{
    /* Names are copied out first: dlopen must not run inside
     * dl_iterate_phdr, which holds the loader's list lock. */
    enum { MAX_OBJECTS = 1024 };
    struct loaded_names ln = { malloc(sizeof(*ln.names) * MAX_OBJECTS), 0, MAX_OBJECTS };
    if (!ln.names)
        return NULL;
    dl_iterate_phdr(collect_loaded, &ln);
    void *found = NULL;
    for (int i = 0; i < ln.n && !found; i++) {
        void *h = dlopen(ln.names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            continue;
        void *p = dlsym(h, name);
        if (p && !resolve_is_ours(p) && (!preferred || in_preferred(p, preferred)))
            found = p;
        dlclose(h);
    }
    free(ln.names);
    return found;
}

void *resolve_real_preferring(const char *name, resolve_preference preferred)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (p && resolve_is_ours(p))
        p = NULL;
    if (p && (!preferred || in_preferred(p, preferred)))
        return p;
    void *found = preferred ? walk_loaded(name, preferred) : NULL;
    if (found)
        return found;
    return p ? p : walk_loaded(name, NULL);
}

void *resolve_real(const char *name)
{
    return resolve_real_preferring(name, NULL);
}

void *resolve_real_cached_preferring(void **cache, const char *name,
                                    resolve_preference preferred)
{
    void *p = atomic_load_explicit((_Atomic(void *) *)cache, memory_order_acquire);
    if (p)
        return p;
    p = resolve_real_preferring(name, preferred);
    if (!p) {
        /* Nothing correct can be called: the program reached our
         * definition of a symbol that no loaded library provides. */
        char line[512];
        int len = snprintf(line, sizeof line,
                           "detshim: %s was called but no loaded library defines it "
                           "(only libdetshim does); load the library that provides it "
                           "or run without LD_PRELOAD\n",
                           name);
        ssize_t w = write(STDERR_FILENO, line, (size_t)len);
        (void)w;
        _exit(2);
    }
    atomic_store_explicit((_Atomic(void *) *)cache, p, memory_order_release);
    if (core_cfg.log_level >= DS_LOG_DEBUG) {
        Dl_info info;
        core_log(DS_LOG_DEBUG, "%s resolves to %s", name,
                 dladdr(p, &info) && info.dli_fname ? info.dli_fname : "?");
    }
    return p;
}

void *resolve_real_cached(void **cache, const char *name)
{
    return resolve_real_cached_preferring(cache, name, NULL);
}
