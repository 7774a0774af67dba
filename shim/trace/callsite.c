/* Call sites: the frames above the intercepted call, as module + offset so
 * they are stable under ASLR and across machines (the module is named by
 * its file name, not its path). Stacks come from libunwind, loaded with
 * dlopen RTLD_LOCAL: linked normally, its _Unwind_* and backtrace symbols
 * would replace libgcc's for the whole program. Each frame address is
 * described (module name, nearest symbol) once per thread in a SITE frame.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <execinfo.h>
#include <link.h>
#include <libunwind.h> /* types only: the functions come from dlsym */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/core.h"
#include "trace/trace.h"
#include "trace/trace_internal.h"

callsite_backtrace_fn callsite_backtrace;
static pthread_once_t unwind_once = PTHREAD_ONCE_INIT;
/* Set once load_unwinder has run: later walks skip pthread_once. */
_Atomic int callsite_ready;

/* The cursor API, for naming functions that have no dynamic symbol
 * (static functions, executables): libunwind reads their ELF symtab. */
static struct {
    int (*getcontext)(unw_context_t *);
    int (*init_local)(unw_cursor_t *, unw_context_t *);
    int (*step)(unw_cursor_t *);
    int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
    int (*get_proc_name)(unw_cursor_t *, char *, size_t, unw_word_t *);
} unw;

static void *sym(void *h, const char *name)
{
    return h ? dlsym(h, name) : NULL;
}

static void load_unwinder(void)
{
    void *h = dlopen("libunwind.so.8", RTLD_LAZY | RTLD_LOCAL);
    void *fn = sym(h, "unw_backtrace");
    /* glibc's backtrace() is the fallback when libunwind8 is absent. */
    callsite_backtrace = fn ? (callsite_backtrace_fn)(uintptr_t)fn : backtrace;
    *(void **)&unw.getcontext = sym(h, "_Ux86_64_getcontext");
    *(void **)&unw.init_local = sym(h, "_ULx86_64_init_local");
    *(void **)&unw.step = sym(h, "_ULx86_64_step");
    *(void **)&unw.get_reg = sym(h, "_ULx86_64_get_reg");
    *(void **)&unw.get_proc_name = sym(h, "_ULx86_64_get_proc_name");
    /* One walk here, inside the once: libunwind sets its globals up on
     * its first walk (tdep_init), and two threads making their first walk
     * together raced there (a signal mask read while the other thread was
     * filling it; ThreadSanitizer in test-tsan). Every walk waits for
     * this once, so later ones find libunwind set up. */
    void *warm[2];
    (void)callsite_backtrace(warm, 2);
}

void callsite_load(void)
{
    pthread_once(&unwind_once, load_unwinder);
    atomic_store_explicit(&callsite_ready, 1, memory_order_release);
}

/* "symbol+0xoff" when addr lies inside a sized dynamic symbol (dladdr
 * checks the size), else 0 and names stays as it was. libunwind would name
 * such an address after the same function, but finds it by mapping the
 * module's ELF file anew each time: for libtorch_cpu some 50 ms of a
 * traced PyTorch start-up. */
static int name_exact(uintptr_t addr, char name[256])
{
    Dl_info info;
    const ElfW(Sym) *esym = NULL;
    if (!dladdr1((void *)addr, &info, (void **)&esym, RTLD_DL_SYMENT) || !esym ||
        !info.dli_sname || !esym->st_size || addr - (uintptr_t)info.dli_saddr >= esym->st_size)
        return 0;
    snprintf(name, 256, "%.219s+0x%lx", info.dli_sname,
             (unsigned long)(addr - (uintptr_t)info.dli_saddr));
    return 1;
}

/* 1 if the ELF file at path has a symbol table beyond its dynamic one
 * (.symtab, or MiniDebugInfo's .gnu_debugdata, which libunwind reads), or
 * cannot be read; 0 for a stripped file. */
static int file_has_symtab(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 1;
    int has = 1;
    ElfW(Ehdr) eh;
    ElfW(Shdr) sh[256];
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_shentsize == sizeof sh[0] && eh.e_shnum > 0 && eh.e_shnum <= 256 &&
        eh.e_shstrndx < eh.e_shnum &&
        pread(fd, sh, eh.e_shnum * sizeof sh[0], (off_t)eh.e_shoff) ==
            (ssize_t)(eh.e_shnum * sizeof sh[0])) {
        has = 0;
        const ElfW(Shdr) *strs = &sh[eh.e_shstrndx];
        for (int i = 0; i < eh.e_shnum && !has; i++) {
            char name[16] = "";
            if (sh[i].sh_name < strs->sh_size &&
                pread(fd, name, sizeof name - 1, (off_t)(strs->sh_offset + sh[i].sh_name)) < 0)
                name[0] = 0;
            has = sh[i].sh_type == SHT_SYMTAB || !strcmp(name, ".gnu_debugdata");
        }
    }
    close(fd);
    return has;
}

/* Whether libunwind can name an address of addr's module better than its
 * dynamic symbols do: only from a symbol table the module's file has
 * besides them. In a stripped module it finds the nearest dynamic
 * function below the address, which name_plausible drops unless it holds
 * the address (name_exact's case): the walk would find nothing, after
 * mapping the file for each frame. Remembered per module (process-wide). */
static int module_has_symtab(uintptr_t addr)
{
    static struct module_symtab { uintptr_t base; int has; } known[64];
    static int nknown;
    /* Taken without waiting: a thread that finds it held (or a forked
     * child whose parent's thread held it) reads the file again. */
    static atomic_flag busy = ATOMIC_FLAG_INIT;
    Dl_info info;
    if (!dladdr((void *)addr, &info) || !info.dli_fbase || !info.dli_fname)
        return 1;
    uintptr_t base = (uintptr_t)info.dli_fbase;
    int has = -1;
    if (!atomic_flag_test_and_set(&busy)) {
        for (int i = 0; i < nknown && has < 0; i++)
            if (known[i].base == base)
                has = known[i].has;
        atomic_flag_clear(&busy);
    }
    if (has >= 0)
        return has;
    /* The main program is named by argv[0] (module_name): read it by
     * /proc/self/exe. */
    int main_program = !info.dli_fname[0] || !strcmp(info.dli_fname, program_invocation_name);
    has = file_has_symtab(main_program ? "/proc/self/exe" : info.dli_fname);
    if (!atomic_flag_test_and_set(&busy)) {
        if (nknown < 64) /* full: asked again, harmless */
            known[nknown++] = (struct module_symtab){ base, has };
        atomic_flag_clear(&busy);
    }
    return has;
}

/* Names the functions holding addrs[0..n): from the dynamic symbols where
 * one holds the address, else, in a module with a symbol table, by
 * walking this thread's stack once; a name not found stays "". */
static void name_frames(const uintptr_t *addrs, int n, char (*names)[256])
{
    int left = 0;
    for (int i = 0; i < n; i++) {
        names[i][0] = 0;
        left += !name_exact(addrs[i], names[i]) && module_has_symtab(addrs[i]);
    }
    if (!left)
        return;
    if (!unw.getcontext || !unw.init_local || !unw.step || !unw.get_reg || !unw.get_proc_name)
        return;
    unw_context_t uc;
    unw_cursor_t cur;
    if (unw.getcontext(&uc) != 0 || unw.init_local(&cur, &uc) != 0)
        return;
    for (int depth = 0; depth < TRACE_MAX_FRAMES + 16; depth++) {
        unw_word_t ip, off;
        if (unw.get_reg(&cur, UNW_REG_IP, &ip) == 0) {
            for (int i = 0; i < n; i++) {
                char fn[220];
                if (addrs[i] == ip && !names[i][0] &&
                    unw.get_proc_name(&cur, fn, sizeof fn, &off) == 0)
                    snprintf(names[i], sizeof names[i], "%s+0x%lx", fn, (unsigned long)off);
            }
        }
        if (unw.step(&cur) <= 0)
            break;
    }
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static struct site_entry *site_lookup(struct thread_buf *tb, uintptr_t addr, int *is_new)
{
    /* Fibonacci hashing: the top bits of addr times 2^64/phi, a multiply
     * where XXH3 took some 40 instructions for each of a call's frames. */
    size_t h = (size_t)(((uint64_t)addr * 0x9E3779B97F4A7C15ull) >> (64 - SITE_CACHE_BITS));
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
    /* Full: recycle the home slot; the site is described again, harmless.
     * The last walk may name the site recycled: it is not taken again. */
    callsite_forget(tb);
    struct site_entry *e = &tb->sites[h];
    e->addr = addr;
    *is_new = 1;
    return e;
}

/* libunwind names a frame after the nearest symbol below it, without
 * checking that symbol's size: in a stripped library that is often an
 * unrelated exported function far away. A name that is a sized dynamic
 * symbol the address lies beyond is dropped. */
static int name_plausible(const char *name, uintptr_t addr)
{
    const char *plus = strrchr(name, '+');
    if (!plus)
        return 1;
    uintptr_t off = (uintptr_t)strtoull(plus + 1, NULL, 16);
    Dl_info info;
    const ElfW(Sym) *esym = NULL;
    if (!dladdr1((void *)(addr - off), &info, (void **)&esym, RTLD_DL_SYMENT) || !esym ||
        info.dli_saddr != (void *)(addr - off))
        return 1; /* not a dynamic symbol: from the symtab, trusted */
    return esym->st_size == 0 || off < esym->st_size;
}

/* The module's file name. glibc's dladdr names the main program by
 * argv[0], the name it was invoked with (python or python3, both links to
 * python3.11): the program is named by the file /proc/self/exe is
 * instead, so one binary gives one name however it was started. */
static char exe_name[256];

static void read_exe_name(void)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    path[n > 0 ? n : 0] = 0;
    snprintf(exe_name, sizeof exe_name, "%.255s", base_name(path));
}

static const char *module_name(const Dl_info *info)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (info->dli_fname != program_invocation_name &&
        strcmp(info->dli_fname, program_invocation_name) != 0)
        return base_name(info->dli_fname);
    pthread_once(&once, read_exe_name);
    return exe_name[0] ? exe_name : base_name(info->dli_fname);
}

static void callsite_describe(struct thread_buf *tb, const struct site_entry *e, uintptr_t addr,
                       const char *name)
{
    Dl_info info;
    const char *module = "?", *sym = name;
    char symbuf[300] = "";
    if (dladdr((void *)addr, &info)) {
        if (info.dli_fname)
            module = module_name(&info);
        if (!sym[0] && info.dli_sname) { /* glibc checks the symbol's size */
            snprintf(symbuf, sizeof symbuf, "%.250s+0x%lx", info.dli_sname,
                     (unsigned long)(addr - (uintptr_t)info.dli_saddr));
            sym = symbuf;
        }
    }
    if (!name_plausible(sym, addr))
        sym = "";
    callsite_emit(tb, e->module, e->offset, module, sym);
}

void callsite_emit(struct thread_buf *tb, uint64_t module, uint64_t offset, const char *name,
                   const char *symbol)
{
    uint8_t payload[16 + 2 + 512];
    size_t n = 0;
    memcpy(payload, &module, 8); /* little-endian, as the format */
    memcpy(payload + 8, &offset, 8);
    n = 16;
    const char *strs[2] = { name, symbol };
    for (int s = 0; s < 2; s++) {
        size_t len = strnlen(strs[s], 255);
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
        const char *name = module_name(&info);
        e->module = XXH3_64bits(name, strlen(name));
        e->offset = addr - (uintptr_t)info.dli_fbase;
        e->ours = resolve_is_ours((void *)addr);
    } else {
        e->module = 0; /* anonymous code, e.g. a JIT */
        e->offset = 0;
        e->ours = 0;
    }
}

void callsite_forget(struct thread_buf *tb)
{
    tb->last_walk.max = 0;
}

int callsite_capture(struct thread_buf *tb, void *const *first, int depth, int first_allow,
                     detshim_frame *frames, int max)
{
    /* Our own frames come first: from the commit, usually 3 or 4 above its
     * own (the family's protocol, the wrapper), and the first walk allows
     * for 4 (CALLSITE_FIRST_ALLOW); from a BLAS wrapper, its own and a
     * spare (TRACE_SITE_ALLOW). Either reaches the same frames of the
     * stack. When that cut it short of `max` frames of the program's, it
     * is walked again from here allowing for 8, as it always was: the
     * same frames, with fewer unwinding steps (some 10 ns each) in the
     * common case. */
    void *deeper[TRACE_MAX_FRAMES + 8];
    void *const *stack = first;
    int allow = first_allow;
    /* The same return addresses as the last walk give its frames: each
     * site they name is still cached (a recycled one forgets the walk),
     * and described. A loop of calls from one place skips the lookups. */
    struct callsite_walk *last = &tb->last_walk;
    if (max == last->max && allow == last->allow && depth == last->depth &&
        memcmp(stack, last->stack, (size_t)depth * sizeof *stack) == 0) {
        memcpy(frames, last->frames, (size_t)last->n * sizeof *frames);
        return last->n;
    }
    int n = 0, nnew = 0;
    uintptr_t new_addrs[TRACE_MAX_FRAMES];
    struct site_entry *new_sites[TRACE_MAX_FRAMES];
    last->max = max; /* a site recycled by this walk's lookups clears it */
    for (;; allow = 8, stack = deeper, depth = callsite_walk(deeper, max + allow)) {
        n = nnew = 0;
        for (int i = 0; i < depth && n < max; i++) {
            uintptr_t addr = (uintptr_t)stack[i];
            int is_new;
            struct site_entry *e = site_lookup(tb, addr, &is_new);
            if (is_new)
                resolve_site(e, addr);
            if (e->ours)
                continue; /* our wrapper and the trace code itself */
            if (is_new || e->undescribed) {
                e->undescribed = 1;
                new_addrs[nnew] = addr;
                new_sites[nnew++] = e;
            }
            frames[n].module = e->module;
            frames[n].offset = e->offset;
            n++;
        }
        if (n == max || depth < max + allow || allow == 8)
            break;
    }
    if (nnew) { /* once per site: a stack walk to name them all */
        char names[TRACE_MAX_FRAMES][256];
        name_frames(new_addrs, nnew, names);
        for (int i = 0; i < nnew; i++) {
            callsite_describe(tb, new_sites[i], new_addrs[i], names[i]);
            new_sites[i]->undescribed = 0;
        }
    }
    /* Kept as the first walk left it, every site it names cached: a
     * second walk read deeper. */
    if (allow != first_allow)
        last->max = 0;
    if (last->max) {
        last->allow = allow;
        last->depth = depth;
        last->n = n;
        memcpy(last->stack, stack, (size_t)depth * sizeof *stack);
        memcpy(last->frames, frames, (size_t)n * sizeof *frames);
    }
    return n;
}
