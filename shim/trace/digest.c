/* Operand digests: XXH3-128 over logical elements only. Contiguous runs are
 * fed to a streaming XXH3 state as they are; strided vectors and the short
 * runs of strided N-d arrays are gathered a block at a time, so the digest
 * of a buffer depends on its elements and their order, never on its
 * padding, leading dimension, increment or strides.
 */
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include "core/core.h"
#include "trace/digest_kernels.h"

/* The bulk hashing runs in the widest kernel the CPU has; XXH3 gives the
 * same bits on every path, so the kernel may change from one call to the
 * next, within one stream too. Measured on this project's AMD EPYC
 * (docs/benchmarks.md): AVX-512 is faster while the bytes come from the
 * caches (4.5 MB: 78 against 66 GB/s; 8 MiB: 59-73 against 50-57), and
 * slower from memory, the more so where the buffer is not 64-byte aligned
 * and every 64-byte load splits a cache line (32 MiB: 18-24 against
 * 26-36; a malloc'ed 64 MiB buffer: 14-16 against 19-30). So a run longer
 * than DIGEST_LONG bytes goes to the AVX2 kernel. Reset and final steps
 * are not vectorised and stay inline. */
#define DIGEST_LONG ((size_t)8 << 20)
static struct digest_kernel kernel, kernel_long;
static pthread_once_t kernel_once = PTHREAD_ONCE_INIT;

static void pick_kernel(void)
{
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2");
    kernel = digest_kernel_for(core_cpu_has_avx512() ? "avx512" : avx2 ? "avx2" : "sse2");
    kernel_long = digest_kernel_for(avx2 ? "avx2" : "sse2");
}

/* Set once the choice is made: every later call skips pthread_once (six
 * digests a traced call). */
static _Atomic int chosen;

/* The kernel for a run of len bytes. */
static const struct digest_kernel *pick(size_t len)
{
    if (__builtin_expect(!atomic_load_explicit(&chosen, memory_order_acquire), 0)) {
        pthread_once(&kernel_once, pick_kernel);
        atomic_store_explicit(&chosen, 1, memory_order_release);
    }
    return len > DIGEST_LONG ? &kernel_long : &kernel;
}

#include "trace/digest.h"

/* Feeds len bytes at p to st through the kernel for that length. */
static void update(XXH3_state_t *st, const void *p, size_t len)
{
    pick(len)->update(st, p, len);
}

static detshim_digest from_xxh(XXH128_hash_t h)
{
    detshim_digest d = { h.low64, h.high64 };
    return d;
}

struct digest_kernel digest_kernel_for(const char *isa)
{
    struct digest_kernel k = { xxh3_sse2_oneshot, xxh3_sse2_update, xxh3_sse2_block_sums,
                               xxh3_sse2_chain };
    if (isa && __builtin_strcmp(isa, "avx2") == 0)
        k = (struct digest_kernel){ xxh3_avx2_oneshot, xxh3_avx2_update, xxh3_avx2_block_sums,
                                    xxh3_avx2_chain };
    else if (isa && __builtin_strcmp(isa, "avx512") == 0)
        k = (struct digest_kernel){ xxh3_avx512_oneshot, xxh3_avx512_update,
                                    xxh3_avx512_block_sums, xxh3_avx512_chain };
    return k;
}

detshim_digest digest_bytes(const void *p, size_t len)
{
    return pick(len)->oneshot(p, len);
}

/* Copies n elements of a constant size, `step` bytes apart, from src
 * (negative step: downwards) into dst. Inlined per size, so the copies are
 * single moves rather than memcpy calls. */
#define GATHER(size)                                                         \
    static inline void gather_##size(unsigned char *dst, const unsigned char *src, \
                                     int64_t n, int64_t step)              \
    {                                                                        \
        for (int64_t i = 0; i < n; i++, dst += size, src += step)           \
            memcpy(dst, src, size);                                          \
    }
GATHER(4)
GATHER(8)
GATHER(16)

static void gather(unsigned char *dst, const unsigned char *src, int64_t n, int64_t step,
                   size_t elem)
{
    switch (elem) {
    case 4: gather_4(dst, src, n, step); break;
    case 8: gather_8(dst, src, n, step); break;
    case 16: gather_16(dst, src, n, step); break;
    default:
        for (int64_t i = 0; i < n; i++, dst += elem, src += step)
            memcpy(dst, src, elem);
    }
}

detshim_digest digest_vector(const void *x, int64_t n, int64_t inc, size_t elem)
{
    if (n <= 0)
        return digest_bytes(NULL, 0);
    if (inc == 1)
        return digest_bytes_shared(x, (size_t)n * elem);
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    /* BLAS rule: with inc < 0, logical element 0 is the highest one, so the
     * walk starts there and steps down. */
    int64_t abs_inc = inc < 0 ? -inc : inc;
    const unsigned char *p = (const unsigned char *)x + (inc < 0 ? (size_t)((n - 1) * abs_inc) * elem : 0);
    int64_t step = inc * (int64_t)elem;
    unsigned char block[4096];
    int64_t per_block = (int64_t)(sizeof block / elem);
    for (int64_t done = 0; done < n; done += per_block) {
        int64_t count = n - done < per_block ? n - done : per_block;
        gather(block, p + done * step, count, step, elem);
        update(&st, block, (size_t)count * elem);
    }
    return from_xxh(XXH3_128bits_digest(&st));
}

detshim_digest digest_matrix(const void *a, int64_t len, int64_t lines, int64_t ld, size_t elem)
{
    if (len <= 0 || lines <= 0)
        return digest_bytes(NULL, 0);
    if (ld == len || lines == 1)
        return digest_bytes_shared(a, (size_t)(len * lines) * elem);
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    const unsigned char *p = a;
    for (int64_t j = 0; j < lines; j++)
        update(&st, p + (size_t)(j * ld) * elem, (size_t)len * elem);
    return from_xxh(XXH3_128bits_digest(&st));
}

int digest_runs(const struct digest_shape *s, int64_t *run_bytes, int64_t count[],
                int64_t stride_bytes[])
{
    /* The innermost dims that continue the run join it. */
    int64_t run = (int64_t)s->elem;
    int k = s->ndims;
    while (k > 0 && (s->dims[k - 1] == 1 || s->strides[k - 1] * (int64_t)s->elem == run))
        run *= s->dims[--k];
    /* An outer dim whose stride spans all of the next one's merges with it. */
    int n = 0;
    for (int i = 0; i < k; i++) {
        int64_t stride = s->strides[i] * (int64_t)s->elem;
        if (s->dims[i] == 1)
            continue;
        if (n > 0 && stride_bytes[n - 1] == stride * s->dims[i]) {
            count[n - 1] *= s->dims[i];
            stride_bytes[n - 1] = stride;
        } else {
            count[n] = s->dims[i];
            stride_bytes[n++] = stride;
        }
    }
    if (n == 0) {
        count[0] = 1;
        stride_bytes[n++] = 0;
    }
    *run_bytes = run;
    return n;
}

struct digest_shape digest_matrix_shape(int64_t len, int64_t lines, int64_t ld, size_t elem)
{
    return (struct digest_shape){ 2, { lines, len }, { ld, 1 }, elem };
}

size_t digest_extent(const struct digest_shape *s)
{
    size_t bytes = s->elem;
    for (int k = 0; k < s->ndims; k++)
        bytes += (size_t)(s->dims[k] - 1) * (size_t)s->strides[k] * s->elem;
    return bytes;
}

detshim_digest digest_strided(const void *base, const struct digest_shape *s)
{
    for (int k = 0; k < s->ndims; k++)
        if (s->dims[k] <= 0)
            return digest_bytes(NULL, 0);
    int64_t run, count[DIGEST_MAX_DIMS], stride[DIGEST_MAX_DIMS], idx[DIGEST_MAX_DIMS] = { 0 };
    int n = digest_runs(s, &run, count, stride);
    if (n == 1 && count[0] == 1)
        return digest_bytes(base, (size_t)run);
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    /* Runs shorter than SHORT are gathered a block at a time. */
    enum { SHORT = 256 };
    unsigned char block[4096];
    size_t used = 0;
    int64_t off = 0;
    for (int k = n - 1; k >= 0;) {
        const unsigned char *p = (const unsigned char *)base + off;
        if (run < SHORT && used + (size_t)run <= sizeof block) {
            memcpy(block + used, p, (size_t)run);
            used += (size_t)run;
        } else {
            update(&st, block, used);
            used = 0;
            if (run < SHORT) {
                memcpy(block, p, (size_t)run);
                used = (size_t)run;
            } else {
                update(&st, p, (size_t)run);
            }
        }
        /* The next run: the odometer of the outer dims, the last fastest. */
        for (k = n - 1; k >= 0; k--) {
            off += stride[k];
            if (++idx[k] < count[k])
                break;
            off -= stride[k] * count[k];
            idx[k] = 0;
        }
    }
    update(&st, block, used);
    return from_xxh(XXH3_128bits_digest(&st));
}

detshim_digest digest_triangle(const void *a, int64_t n, int64_t ld, size_t elem, int head,
                               int unit_diag)
{
    if (n <= 0)
        return digest_bytes(NULL, 0);
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    const unsigned char *p = a;
    for (int64_t j = 0; j < n; j++) {
        int64_t lo = head ? 0 : j, hi = head ? j + 1 : n;
        if (unit_diag) {
            if (head)
                hi--;
            else
                lo++;
        }
        if (hi > lo)
            update(&st, p + (size_t)(j * ld + lo) * elem, (size_t)(hi - lo) * elem);
    }
    return from_xxh(XXH3_128bits_digest(&st));
}

static _Atomic(digest_bytes_fn) lent;
static _Atomic(digest_runs_fn) lent_runs;

void digest_lend_threads(digest_bytes_fn shared, digest_runs_fn runs)
{
    atomic_store(&lent_runs, runs);
    atomic_store(&lent, shared);
}

detshim_digest digest_bytes_shared(const void *p, size_t len)
{
    /* Too short to split: every BLAS call's small operands come here. */
    if (len < DIGEST_SPLIT_MIN)
        return digest_bytes(p, len);
    digest_bytes_fn shared = atomic_load_explicit(&lent, memory_order_acquire);
    return shared ? shared(p, len) : digest_bytes(p, len);
}

void digest_runs_shared(size_t n, const void *const *p, const size_t *len, detshim_digest *out)
{
    digest_runs_fn runs = atomic_load_explicit(&lent_runs, memory_order_acquire);
    if (runs) {
        runs(n, p, len, out);
        return;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = digest_bytes(p[i], len[i]);
}

/* digest_bytes() of a long run in parts (digest.h): XXH3-128's long-input
 * loop with the default secret, its accumulators chained here over block
 * sums the kernels took, possibly on other threads (the chain in a
 * kernel too: its scrambles are the critical path), and its last partial
 * block, last stripe and merges as XXH3 does them (xxhash.h 0.8, whose
 * output is fixed; test_digest checks the bits against XXH3_128bits). */
#define SPLIT_BLOCK ((size_t)DIGEST_SPLIT_BLOCK)
#define SECRET_LEN sizeof XXH3_kSecret

static uint64_t read64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* One 64-byte stripe into acc, as XXH3's accumulate_512 does. */
static void split_stripe(uint64_t acc[8], const unsigned char *in, const unsigned char *key)
{
    for (int i = 0; i < 8; i++) {
        uint64_t d = read64(in + 8 * i), dk = d ^ read64(key + 8 * i);
        acc[i ^ 1] += d;
        acc[i] += (dk & 0xffffffffu) * (dk >> 32);
    }
}

static uint64_t split_merge(const uint64_t acc[8], const unsigned char *key, uint64_t h)
{
    for (int i = 0; i < 4; i++) {
        __uint128_t m = (__uint128_t)(acc[2 * i] ^ read64(key + 16 * i)) *
                        (acc[2 * i + 1] ^ read64(key + 16 * i + 8));
        h += (uint64_t)m ^ (uint64_t)(m >> 64);
    }
    h ^= h >> 37;
    h *= 0x165667919E3779F9ULL;
    return h ^ (h >> 32);
}

size_t digest_split_blocks(size_t len)
{
    return len < DIGEST_SPLIT_MIN ? 0 : (len - 1) / SPLIT_BLOCK;
}

void digest_split_begin(struct digest_split *st)
{
    static const uint64_t init[8] = { XXH_PRIME32_3, XXH_PRIME64_1, XXH_PRIME64_2,
                                      XXH_PRIME64_3, XXH_PRIME64_4, XXH_PRIME32_2,
                                      XXH_PRIME64_5, XXH_PRIME32_1 };
    memcpy(st->acc, init, sizeof init);
    st->blocks = 0;
}

void digest_split_run(struct digest_split *st, const void *p, size_t count)
{
    const unsigned char *in = (const unsigned char *)p + st->blocks * SPLIT_BLOCK;
    pick(count * SPLIT_BLOCK)->chain(st->acc, in, NULL, count);
    st->blocks += count;
}

void digest_split_sums(const void *p, size_t first, size_t count, uint64_t *sums)
{
    const unsigned char *in = (const unsigned char *)p + first * SPLIT_BLOCK;
    pick(count * SPLIT_BLOCK)->block_sums(in, count, sums);
}

void digest_split_chain(struct digest_split *st, const uint64_t *sums, size_t count)
{
    pick(0)->chain(st->acc, NULL, sums, count);
    st->blocks += count;
}

detshim_digest digest_split_end(const struct digest_split *st, const void *p, size_t len)
{
    if (len < DIGEST_SPLIT_MIN || st->blocks != digest_split_blocks(len))
        return digest_bytes(p, len);
    const unsigned char *in = p, *secret = XXH3_kSecret;
    uint64_t acc[8];
    memcpy(acc, st->acc, sizeof acc);
    size_t nblocks = st->blocks;
    size_t stripes = ((len - 1) - SPLIT_BLOCK * nblocks) / 64;
    for (size_t s = 0; s < stripes; s++)
        split_stripe(acc, in + nblocks * SPLIT_BLOCK + 64 * s, secret + 8 * s);
    split_stripe(acc, in + len - 64, secret + SECRET_LEN - 64 - 7);
    detshim_digest d;
    d.lo = split_merge(acc, secret + 11, (uint64_t)len * XXH_PRIME64_1);
    d.hi = split_merge(acc, secret + SECRET_LEN - 64 - 11, ~((uint64_t)len * XXH_PRIME64_2));
    return d;
}
