/* libzstd through dlopen (see zstd_lib.h). The prototypes are declared
 * here, not taken from zstd.h, so that no -dev package is needed to build:
 * they are zstd's stable one-shot API (unchanged since v1.0), and the
 * library is looked for by its ABI name, libzstd.so.1.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>

#include "trace/zstd_lib.h"

typedef struct zstd_cctx zstd_cctx; /* ZSTD_CCtx, opaque */

static struct {
    zstd_cctx *(*create_cctx)(void);
    size_t (*free_cctx)(zstd_cctx *);
    size_t (*compress_cctx)(zstd_cctx *, void *, size_t, const void *, size_t, int);
    unsigned (*is_error)(size_t);
    size_t (*decompress)(void *, size_t, const void *, size_t);
    unsigned long long (*content_size)(const void *, size_t);
} z;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[200];
static uintptr_t ours_at;

static void *fn(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p && !load_error[0])
        snprintf(load_error, sizeof load_error, "libzstd.so.1 has no %s (too old?)", name);
    return p;
}

static void load(void)
{
    /* Already in the process (the program's own, or a dependency's)? */
    void *before = dlopen("libzstd.so.1", RTLD_LAZY | RTLD_NOLOAD);
    void *h = before ? before : dlopen("libzstd.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        snprintf(load_error, sizeof load_error,
                 "cannot load libzstd.so.1 (install libzstd1: apt-get install libzstd1)");
        return;
    }
    *(void **)&z.create_cctx = fn(h, "ZSTD_createCCtx");
    *(void **)&z.free_cctx = fn(h, "ZSTD_freeCCtx");
    *(void **)&z.compress_cctx = fn(h, "ZSTD_compressCCtx");
    *(void **)&z.is_error = fn(h, "ZSTD_isError");
    *(void **)&z.decompress = fn(h, "ZSTD_decompress");
    *(void **)&z.content_size = fn(h, "ZSTD_getFrameContentSize");
    struct link_map *lm = NULL;
    if (!before && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm)
        ours_at = (uintptr_t)lm->l_addr;
}

int zstd_load(char *why, size_t whylen)
{
    pthread_once(&load_once, load);
    if (!load_error[0])
        return 0;
    snprintf(why, whylen, "%s", load_error);
    return -1;
}

uintptr_t zstd_loaded_by_us(void)
{
    return ours_at;
}

/* One context per thread, made on its first compressed frame and freed
 * when the thread ends. */
static pthread_key_t cctx_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void free_cctx(void *c)
{
    z.free_cctx(c);
}

static void make_key(void)
{
    if (pthread_key_create(&cctx_key, free_cctx) != 0)
        cctx_key = (pthread_key_t)-1;
}

size_t zstd_compress(void *dst, size_t cap, const void *src, size_t n, int level)
{
    pthread_once(&key_once, make_key);
    if (cctx_key == (pthread_key_t)-1)
        return 0;
    zstd_cctx *c = pthread_getspecific(cctx_key);
    if (!c) {
        c = z.create_cctx();
        if (!c || pthread_setspecific(cctx_key, c) != 0) {
            if (c)
                z.free_cctx(c);
            return 0;
        }
    }
    size_t r = z.compress_cctx(c, dst, cap, src, n, level);
    return z.is_error(r) ? 0 : r;
}

int64_t zstd_content_size(const void *src, size_t n)
{
    unsigned long long s = z.content_size(src, n);
    /* ZSTD_CONTENTSIZE_UNKNOWN and _ERROR are the two largest values. */
    return s >= (unsigned long long)-2 || s > INT64_MAX ? -1 : (int64_t)s;
}

int64_t zstd_decompress(void *dst, size_t cap, const void *src, size_t n)
{
    size_t r = z.decompress(dst, cap, src, n);
    return z.is_error(r) ? -1 : (int64_t)r;
}
