/* SHA-256 chain and roots (definitions in trace_format.h). The same code
 * runs in the writer and in the reader, so a root printed by detdiff is the
 * root the shim committed to. Window digests (a record hash each, in
 * batches) and stream heads run on SHA-NI where the CPU has it
 * (sha256.c), else through OpenSSL; the roots, hashed once per file,
 * always through OpenSSL.
 */
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "trace/chain.h"
#include "trace/sha256.h"
#include "detshim/trace_format.h"

/* SHA-256 fetched once: EVP_sha256() makes OpenSSL 3 look the algorithm
 * up (under a lock) and rebuild its context at every init, which was a
 * third of the cost of a small traced call. */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void fetch_sha256(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *sha256(void)
{
    pthread_once(&sha256_once, fetch_sha256);
    return sha256_md ? sha256_md : EVP_sha256();
}

/* -1 until first asked: then 1 where SHA-NI serves the chain, else 0.
 * Threads racing to set it store the same value (relaxed: a plain move). */
static atomic_int fast = -1;

static int use_fast(void)
{
    int f = atomic_load_explicit(&fast, memory_order_relaxed);
    if (f < 0) {
        f = sha256_fast_available();
        atomic_store_explicit(&fast, f, memory_order_relaxed);
    }
    return f;
}

int chain_set_fast(int on)
{
    int was = use_fast();
    atomic_store_explicit(&fast, on && sha256_fast_available(), memory_order_relaxed);
    return was;
}

static void fast_sha256(const void *a, size_t alen, const void *b, size_t blen, uint8_t out[32])
{
    struct sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, a, alen);
    sha256_update(&c, b, blen);
    sha256_final(&c, out);
}

int chain_sha256(const void *a, size_t alen, const void *b, size_t blen, uint8_t out[32])
{
    if (use_fast()) {
        fast_sha256(a, alen, b, blen, out);
        return 0;
    }
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned int n = 0;
    int ok = ctx && EVP_DigestInit_ex(ctx, sha256(), NULL) &&
             EVP_DigestUpdate(ctx, a, alen) && (!blen || EVP_DigestUpdate(ctx, b, blen)) &&
             EVP_DigestFinal_ex(ctx, out, &n) && n == 32;
    EVP_MD_CTX_free(ctx);
    return ok ? 0 : -1;
}

int chain_window_begin(struct chain_window *w)
{
    w->fill = 0;
    w->failed = 0;
    w->evp_on = !use_fast();
    if (!w->evp_on) {
        sha256_init(&w->fast);
        sha256_update(&w->fast, TRACE_CHAIN_SEED, strlen(TRACE_CHAIN_SEED));
        return 0;
    }
    if (!w->evp && !(w->evp = EVP_MD_CTX_new()))
        return -1;
    if (!EVP_DigestInit_ex(w->evp, sha256(), NULL) ||
        !EVP_DigestUpdate(w->evp, TRACE_CHAIN_SEED, strlen(TRACE_CHAIN_SEED)))
        w->failed = 1;
    return 0;
}

void chain_window_flush(struct chain_window *w)
{
    if (!w->evp_on)
        sha256_update(&w->fast, w->batch, w->fill);
    else if (!w->evp || !EVP_DigestUpdate(w->evp, w->batch, w->fill))
        w->failed = 1;
    w->fill = 0;
}

int chain_window_end(struct chain_window *w, uint8_t digest[32])
{
    chain_window_flush(w);
    if (!w->evp_on) {
        sha256_final(&w->fast, digest);
        return 0;
    }
    unsigned int n = 0;
    if (w->failed || !EVP_DigestFinal_ex(w->evp, digest, &n) || n != 32) {
        memset(digest, 0, 32);
        return -1;
    }
    return 0;
}

void chain_window_free(struct chain_window *w)
{
    EVP_MD_CTX_free(w->evp);
    w->evp = NULL;
}

static int cmp_thread(const void *a, const void *b)
{
    const struct chain_thread *x = a, *y = b;
    int c = memcmp(x->head, y->head, 32);
    if (c)
        return c;
    return (x->count > y->count) - (x->count < y->count);
}

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void chain_process_root(const struct chain_field *fields, int nfields,
                        struct chain_thread *threads, int nthreads, uint8_t out[32])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned int n = 0;
    uint8_t le[8];
    EVP_DigestInit_ex(ctx, sha256(), NULL);
    EVP_DigestUpdate(ctx, TRACE_PROCESS_SEED, strlen(TRACE_PROCESS_SEED));
    for (int i = 0; i < nfields; i++) {
        put_le(le, fields[i].key, 2);
        put_le(le + 2, fields[i].len, 4);
        EVP_DigestUpdate(ctx, le, 6);
        EVP_DigestUpdate(ctx, fields[i].value, fields[i].len);
    }
    qsort(threads, (size_t)nthreads, sizeof *threads, cmp_thread);
    for (int i = 0; i < nthreads; i++) {
        put_le(le, threads[i].count, 8);
        EVP_DigestUpdate(ctx, le, 8);
        EVP_DigestUpdate(ctx, threads[i].head, 32);
    }
    EVP_DigestFinal_ex(ctx, out, &n);
    EVP_MD_CTX_free(ctx);
}

void chain_run_root(const char *const *names, const uint8_t (*roots)[32], int n, uint8_t out[32])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned int len = 0;
    EVP_DigestInit_ex(ctx, sha256(), NULL);
    EVP_DigestUpdate(ctx, TRACE_RUN_SEED, strlen(TRACE_RUN_SEED));
    for (int i = 0; i < n; i++) {
        EVP_DigestUpdate(ctx, names[i], strlen(names[i]) + 1); /* name and its NUL */
        EVP_DigestUpdate(ctx, roots[i], 32);
    }
    EVP_DigestFinal_ex(ctx, out, &len);
    EVP_MD_CTX_free(ctx);
}

/* Windows (h15s): the stream head over window digests (trace_format.h). */
void chain_stream_start(uint8_t head[32])
{
    chain_sha256(TRACE_STREAM_SEED, strlen(TRACE_STREAM_SEED), NULL, 0, head);
}

int chain_stream_fold(uint8_t head[32], const uint8_t window_digest[32])
{
    return chain_sha256(head, 32, window_digest, 32, head);
}
