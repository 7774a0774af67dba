/* Call sites: the frames above the intercepted call, as module + offset so
 * they are stable under ASLR and across machines (the module is named by
 * its file name, not its path). Stacks come from libunwind, loaded with
 * dlopen RTLD_LOCAL: linked normally, its _Unwind_* and backtrace symbols
 * would replace libgcc's for the whole program. Each frame address is
 * described (module name, nearest symbol) once per thread in a SITE frame.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <string.h>
#include <stdio.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "detshim/core.h"
#include "detshim/trace.h"
#include "detshim/trace_internal.h"

typedef int (*backtrace_fn)(void **, int);
static backtrace_fn unwind_backtrace;
static pthread_once_t unwind_once = PTHREAD_ONCE_INIT;

static void load_unwinder(void)
{
    void *h = dlopen("libunwind.so.8", RTLD_LAZY | RTLD_LOCAL);
    void *fn = h ? dlsym(h, "unw_backtrace") : NULL;
    /* glibc's backtrace() is the fallback when libunwind8 is absent. */
    unwind_backtrace = fn ? (backtrace_fn)(uintptr_t)fn : backtrace;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static struct site_entry *site_lookup(struct thread_buf *tb, uintptr_t addr, int *is_new)
{
    size_t h = (size_t)(XXH3_64bits(&addr, sizeof addr) & (SITE_CACHE_SIZE - 1));
    for (size_t probe = 0; probe < SITE_CACHE_SIZE; probe++) {
        struct site_entry *e = &tb->sites[(h + probe) & (SITE_CACHE_SIZE - 1)];
        if (e->addr == addr) {
            *is_new = 0;
            return e;
        }
        if (!e->addr) {
            *is_new = 1;
            e->addr = addr;
            return e;
        }
    }
    /* Full: recycle the home slot; the site is described again, harmless. */
    struct site_entry *e = &tb->sites[h];
    e->addr = addr;
    *is_new = 1;
    return e;
}

void callsite_describe(struct thread_buf *tb, const struct site_entry *e, uintptr_t addr)
{
    Dl_info info;
    const char *module = "?", *sym = "";
    char symbuf[300] = "";
    if (dladdr((void *)addr, &info)) {
        if (info.dli_fname)
            module = base_name(info.dli_fname);
        if (info.dli_sname) {
            snprintf(symbuf, sizeof symbuf, "%.250s+0x%lx", info.dli_sname,
                     (unsigned long)(addr - (uintptr_t)info.dli_saddr));
            sym = symbuf;
        }
    }
    uint8_t payload[16 + 2 + 512];
    size_t n = 0;
    for (int i = 0; i < 8; i++)
        payload[n++] = (uint8_t)(e->module >> (8 * i));
    for (int i = 0; i < 8; i++)
        payload[n++] = (uint8_t)(e->offset >> (8 * i));
    const char *strs[2] = { module, sym };
    for (int s = 0; s < 2; s++) {
        size_t len = strlen(strs[s]);
        if (len > 255)
            len = 255;
        payload[n++] = (uint8_t)len;
        memcpy(payload + n, strs[s], len);
        n += len;
    }
    trace_buf_append(tb, TRACE_FRAME_SITE, payload, (uint32_t)n);
}

static void resolve_site(struct site_entry *e, uintptr_t addr)
{
    Dl_info info;
    if (dladdr((void *)addr, &info) && info.dli_fname) {
        const char *name = base_name(info.dli_fname);
        e->module = XXH3_64bits(name, strlen(name));
        e->offset = addr - (uintptr_t)info.dli_fbase;
        e->ours = resolve_is_ours((void *)addr);
    } else {
        e->module = 0; /* anonymous code, e.g. a JIT */
        e->offset = 0;
        e->ours = 0;
    }
}

int callsite_capture(struct thread_buf *tb, detshim_frame *frames, int max)
{
    if (max <= 0)
        return 0;
    pthread_once(&unwind_once, load_unwinder);
    void *stack[TRACE_MAX_FRAMES + 8];
    int depth = unwind_backtrace(stack, max + 8);
    int n = 0;
    for (int i = 0; i < depth && n < max; i++) {
        uintptr_t addr = (uintptr_t)stack[i];
        int is_new;
        struct site_entry *e = site_lookup(tb, addr, &is_new);
        if (is_new) {
            resolve_site(e, addr);
            if (!e->ours)
                callsite_describe(tb, e, addr);
        }
        if (e->ours)
            continue; /* our wrapper and the trace code itself */
        frames[n].module = e->module;
        frames[n].offset = e->offset;
        n++;
    }
    return n;
}
