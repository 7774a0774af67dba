/* The code a process ran with, recorded at its exit so the root binds it:
 * every loaded shared object (and the program itself) by file name and
 * GNU build-id, and, from the Python start-up hook, the versions of the
 * top-level packages the program imported. Another libopenblas or another
 * numpy can change bits; detverify names such a difference before anything
 * else (docs/verify.md). Paths are left out: a venv in another folder is
 * the same code.
 *
 * Records (identity stream of the exiting thread, chained, after the
 * process's own records; only for a process that recorded something):
 *   env.object   name, id ("build-id:<hex>", or "sha256:<hex>" of the file
 *                when it has no build-id), sorted by name then id; the
 *                vDSO, the CUDA driver's on-demand compilers and a libzstd
 *                of the shim's own are left out (collect)
 *   env.python   package, version (from detshim_record_python_package)
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "core/core.h"
#include "trace/trace.h"
#include "trace/zstd_lib.h"

#define MAX_OBJECTS 2048

struct object {
    char name[128];
    char id[80];
};

struct walk {
    struct object *list;
    int n;
    int zstd;        /* index of the libzstd only the shim loaded, or -1 */
    int zstd_needed; /* another object lists libzstd.so.1 as DT_NEEDED */
};

/* 1 if the object lists `lib` among its DT_NEEDED libraries. glibc has
 * relocated the dynamic section's addresses in place (x86-64); one that
 * looks unrelocated is taken relative to the object's base. */
static int needs(const struct dl_phdr_info *info, const char *lib)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
            continue;
        const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        uintptr_t strtab = 0;
        for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
            if (d->d_tag == DT_STRTAB)
                strtab = d->d_un.d_ptr < info->dlpi_addr ? info->dlpi_addr + d->d_un.d_ptr
                                                         : d->d_un.d_ptr;
        for (const ElfW(Dyn) *d = dyn; strtab && d->d_tag != DT_NULL; d++)
            if (d->d_tag == DT_NEEDED && strcmp((const char *)strtab + d->d_un.d_val, lib) == 0)
                return 1;
    }
    return 0;
}

/* The build-id note of a loaded object, read from its PT_NOTE segments in
 * memory (the dynamic loader maps them). Returns 1 and fills hex. */
static int build_id(const struct dl_phdr_info *info, char *hex, size_t len)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const uint8_t *name = p + sizeof *nh;
            const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);
            if (desc + nh->n_descsz > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                memcmp(name, "GNU", 4) == 0 && nh->n_descsz * 2 + 1 <= len) {
                for (uint32_t k = 0; k < nh->n_descsz; k++)
                    snprintf(hex + 2 * k, 3, "%02x", desc[k]);
                return 1;
            }
            p = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    return 0;
}

/* SHA-256 of a file, for an object without a build-id. Returns 1. */
static int file_sha256(const char *path, char *hex)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL);
    uint8_t buf[65536], d[32];
    for (ssize_t n; ok && (n = read(fd, buf, sizeof buf)) > 0;)
        ok = EVP_DigestUpdate(md, buf, (size_t)n);
    unsigned int dlen = 0;
    ok = ok && EVP_DigestFinal_ex(md, d, &dlen) && dlen == 32;
    EVP_MD_CTX_free(md);
    close(fd);
    for (int i = 0; ok && i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return ok;
}

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct walk *w = arg;
    char path[4096];
    const char *file = info->dlpi_name;
    if (!file || !file[0]) { /* the program itself */
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        path[n > 0 ? n : 0] = 0;
        file = path;
    }
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    /* The vDSO is the kernel's, not the program's: it changes no bit. */
    if (!base[0] || strncmp(base, "linux-vdso", 10) == 0 || strncmp(base, "linux-gate", 10) == 0 ||
        w->n == MAX_OBJECTS)
        return 0;
    /* Nor do the driver's own compilers, which libcuda loads only when it
     * has PTX (or NVVM IR) to compile that its disk cache
     * (~/.nv/ComputeCache) lacks: whether one is mapped says whether that
     * cache was warm, not which code ran (on an H200, the first traced run
     * of a machine had libnvidia-ptxjitcompiler mapped, the second not).
     * They are the driver's, and the driver is recorded as libcuda.so.1. */
    if (strncmp(base, "libnvidia-ptxjitcompiler.so", 27) == 0 ||
        strncmp(base, "libnvidia-nvvm.so", 17) == 0)
        return 0;
    /* Nor does a libzstd the shim loaded to compress the trace, unless
     * the program's own code needs it too: left out, a compressed trace
     * has the root an uncompressed one has (docs/tracing.md). */
    if (zstd_loaded_by_us()) {
        if (info->dlpi_addr == zstd_loaded_by_us())
            w->zstd = w->n;
        else if (needs(info, "libzstd.so.1"))
            w->zstd_needed = 1;
    }
    struct object *o = &w->list[w->n];
    char hex[72];
    if (build_id(info, hex, sizeof hex))
        snprintf(o->id, sizeof o->id, "build-id:%.64s", hex);
    else if (file[0] == '/' && file_sha256(file, hex))
        snprintf(o->id, sizeof o->id, "sha256:%.64s", hex);
    else
        snprintf(o->id, sizeof o->id, "unknown");
    snprintf(o->name, sizeof o->name, "%.127s", base);
    w->n++;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    const struct object *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->id, y->id);
}

void artifact_record_objects(void)
{
    if (!trace_active() || !trace_recorded_any())
        return;
    int owned = guard_enter();
    struct walk w = { .list = malloc(MAX_OBJECTS * sizeof *w.list), .zstd = -1 };
    if (w.list) {
        dl_iterate_phdr(collect, &w);
        if (w.zstd >= 0 && !w.zstd_needed)
            w.list[w.zstd] = w.list[--w.n];
        qsort(w.list, (size_t)w.n, sizeof *w.list, by_name);
        for (int i = 0; i < w.n; i++) {
            if (i && by_name(&w.list[i], &w.list[i - 1]) == 0)
                continue; /* one object mapped twice */
            struct trace_rec r;
            trace_rec_begin(&r, "env.object");
            trace_rec_stream(&r, TRACE_STREAM_IDENTITY);
            trace_rec_str(&r, "name", w.list[i].name);
            trace_rec_str(&r, "id", w.list[i].id);
            trace_rec_commit(&r);
        }
        free(w.list);
    }
    if (owned)
        guard_leave();
}

DETSHIM_EXPORT void detshim_record_python_package(const char *package, const char *version)
{
    if (!package || !version || guard_held() || !trace_active() || !trace_recorded_any())
        return;
    if (!guard_enter())
        return;
    struct trace_rec r;
    trace_rec_begin(&r, "env.python");
    trace_rec_stream(&r, TRACE_STREAM_IDENTITY);
    trace_rec_str(&r, "package", package);
    trace_rec_str(&r, "version", version);
    trace_rec_commit(&r);
    guard_leave();
}
