/* libdetshim-audit.so: an rtld-audit module (LD_AUDIT, see rtld-audit(7))
 * that brings calls looked up with dlsym into the shim. TensorFlow and JAX
 * (XLA) dlopen cuBLAS, cuDNN, cuRAND and NCCL RTLD_LOCAL and fetch every
 * function with dlsym(handle, name), which searches only that library and
 * its dependencies: a preloaded libdetshim is never asked, so without this
 * module their GPU calls are neither pinned nor traced. The dynamic linker
 * reports each binding to a vendor library here (la_symbind64, for dlsym
 * too); when the program asked and libdetshim exports a wrapper of the
 * same name, the answer becomes that wrapper. The wrapper finds the real
 * function as for any other call (shim/core/resolve.c). Bindings asked
 * for by libdetshim itself or by the vendor libraries (cuDNN 9's
 * libcudnn.so.9 looks its sub-libraries' functions up with dlsym) keep
 * the real answer, or a wrapper would call itself.
 *
 * The module is loaded by the dynamic linker in a namespace of its own,
 * before the program: it calls nothing but string functions, and finds
 * the wrappers by reading libdetshim's dynamic symbol table itself
 * (dlsym from an audit module is not safe; it crashes in glibc 2.36).
 * It also sets libdetshim's detshim_audit_loaded (tell_shim), so the
 * shim knows it is here. detrun sets LD_AUDIT; without it, the shim warns at exit when a
 * vendor library was loaded and none of its calls reached it (reach.c).
 */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "cuda/cuda_libs.h"
#include "nccl/nccl_libs.h"

#define AUDIT_EXPORT __attribute__((visibility("default")))

/* What an object is, kept in its audit cookie. */
enum audit_kind { KIND_OTHER = 1, KIND_SHIM, KIND_VENDOR };

/* libdetshim's dynamic symbol table, found when it is loaded. */
static struct {
    ElfW(Addr) base;
    const ElfW(Sym) *symtab;
    const char *strtab;
    const uint32_t *gnu_hash;
} shim;

static const char *file_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static enum audit_kind kind_of(const char *path)
{
    const char *name = file_name(path);
    if (strcmp(name, "libdetshim.so") == 0)
        return KIND_SHIM;
    return cuda_is_vendor_file(name) || nccl_is_vendor_file(name) ? KIND_VENDOR : KIND_OTHER;
}

/* A dynamic-section address: x86-64's loader relocates these entries in
 * place, other ports leave them as link-time addresses. */
static ElfW(Addr) dyn_addr(const struct link_map *m, ElfW(Addr) a)
{
    return a < m->l_addr ? a + m->l_addr : a;
}

/* Records where libdetshim's symbols are. Returns 0, or -1 when it has no
 * GNU hash table (then nothing is redirected). */
static int shim_tables(const struct link_map *m)
{
    for (const ElfW(Dyn) *d = m->l_ld; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_SYMTAB)
            shim.symtab = (const ElfW(Sym) *)dyn_addr(m, d->d_un.d_ptr);
        else if (d->d_tag == DT_STRTAB)
            shim.strtab = (const char *)dyn_addr(m, d->d_un.d_ptr);
        else if (d->d_tag == DT_GNU_HASH)
            shim.gnu_hash = (const uint32_t *)dyn_addr(m, d->d_un.d_ptr);
    }
    shim.base = m->l_addr;
    return shim.symtab && shim.strtab && shim.gnu_hash ? 0 : -1;
}

static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

/* The symbol libdetshim defines and exports under `name`, or NULL. */
static const ElfW(Sym) *shim_symbol(const char *name)
{
    if (!shim.gnu_hash)
        return NULL;
    const uint32_t *h = shim.gnu_hash;
    uint32_t nbuckets = h[0], symoffset = h[1], bloom_words = h[2];
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(h + 4) + bloom_words);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t want = gnu_hash(name);
    uint32_t i = buckets[want % nbuckets];
    if (i < symoffset)
        return NULL;
    for (;; i++) {
        uint32_t got = chain[i - symoffset];
        const ElfW(Sym) *s = &shim.symtab[i];
        if ((got | 1) == (want | 1) && strcmp(shim.strtab + s->st_name, name) == 0)
            return s->st_shndx != SHN_UNDEF ? s : NULL;
        if (got & 1)
            return NULL;
    }
}

/* The address of libdetshim's function `name`, or 0. */
static ElfW(Addr) shim_function(const char *name)
{
    const ElfW(Sym) *s = shim_symbol(name);
    return s && ELF64_ST_TYPE(s->st_info) == STT_FUNC ? shim.base + s->st_value : 0;
}

/* Sets libdetshim's detshim_audit_loaded (resolve_audit_active), so the
 * shim knows the module is here from its first instruction on: the trace
 * header may be written by a constructor, before main. Called when the
 * shim is mapped, its zero-filled data in place, before any relocation;
 * relocation does not touch a plain int. */
static void tell_shim(void)
{
    const ElfW(Sym) *s = shim_symbol("detshim_audit_loaded");
    if (s && ELF64_ST_TYPE(s->st_info) == STT_OBJECT && s->st_size == sizeof(int))
        *(volatile int *)(shim.base + s->st_value) = 1;
}

AUDIT_EXPORT unsigned int la_version(unsigned int version)
{
    return version < LAV_CURRENT ? version : LAV_CURRENT;
}

AUDIT_EXPORT unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
    /* The shim lives in the base namespace; a library loaded into another
     * (dlmopen) could not find its real functions from there. */
    enum audit_kind kind = lmid == LM_ID_BASE ? kind_of(map->l_name) : KIND_OTHER;
    *cookie = kind;
    if (kind == KIND_SHIM && shim_tables(map) == 0)
        tell_shim();
    /* Only bindings into a vendor library are reported to us. */
    return kind == KIND_VENDOR ? LA_FLG_BINDTO : 0;
}

AUDIT_EXPORT uintptr_t la_symbind64(ElfW(Sym) *sym, unsigned int ndx, uintptr_t *refcook,
                                    uintptr_t *defcook, unsigned int *flags,
                                    const char *symname)
{
    (void)ndx;
    (void)flags;
    if (*defcook != KIND_VENDOR || *refcook != KIND_OTHER)
        return sym->st_value;
    ElfW(Addr) wrapper = shim_function(symname);
    return wrapper ? wrapper : sym->st_value;
}
