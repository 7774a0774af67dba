/* Operand digests cover logical elements only: padding, leading dimensions
 * and increments never change a digest; every element does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"
#include "trace/digest.h"
#include "trace/digest_kernels.h"
#define XXH_INLINE_ALL
#include <xxhash.h>
#include "core/core.h"
#include "avx_state.h"

static int same(detshim_digest a, detshim_digest b)
{
    return a.lo == b.lo && a.hi == b.hi;
}

/* The last call returned with the upper halves of the vector registers
 * clean (avx_state.h): XXH3's kernels run on every traced call, and
 * left dirty they would slow the program's own SSE code. */
static void assert_left_clean(const char *what)
{
    if (avx_upper_left_dirty())
        fail_msg("%s returned with the upper halves of the vector registers in use", what);
}

static void test_matrix_digest_ignores_padding_beyond_leading_dimension(void **state)
{
    (void)state;
    double packed[6] = { 1, 2, 3, 4, 5, 6 };                     /* 3 x 2, ld 3 */
    double padded[10] = { 1, 2, 3, -7, -7, 4, 5, 6, -9, -9 };     /* 3 x 2, ld 5 */
    assert_true(same(digest_matrix(packed, 3, 2, 3, 8), digest_matrix(padded, 3, 2, 5, 8)));
    padded[3] = 1e300; /* padding only */
    assert_true(same(digest_matrix(packed, 3, 2, 3, 8), digest_matrix(padded, 3, 2, 5, 8)));
    padded[6] = 5.0000001; /* a real element */
    assert_false(same(digest_matrix(packed, 3, 2, 3, 8), digest_matrix(padded, 3, 2, 5, 8)));
}

static void test_strided_vector_digests_like_its_contiguous_copy(void **state)
{
    (void)state;
    float x[9] = { 1, 0, 0, 2, 0, 0, 3, 0, 0 }, c[3] = { 1, 2, 3 };
    assert_true(same(digest_vector(x, 3, 3, 4), digest_vector(c, 3, 1, 4)));
    assert_true(same(digest_vector(c, 3, 1, 4), digest_bytes(c, sizeof c)));
}

static void test_negative_increment_reads_from_the_high_end(void **state)
{
    (void)state;
    /* BLAS: with inc = -2, logical element 0 is x[(n-1)*2]. */
    double x[5] = { 3, 0, 2, 0, 1 }, rev[3] = { 1, 2, 3 };
    assert_true(same(digest_vector(x, 3, -2, 8), digest_vector(rev, 3, 1, 8)));
}

static void test_long_strided_vector_crosses_gather_blocks(void **state)
{
    (void)state;
    enum { N = 3000 };
    static double x[2 * N], c[N];
    for (int i = 0; i < N; i++) {
        x[2 * i] = c[i] = i * 0.5;
        x[2 * i + 1] = -1;
    }
    assert_true(same(digest_vector(x, N, 2, 8), digest_vector(c, N, 1, 8)));
}

static void test_triangle_digest_reads_only_the_referenced_half(void **state)
{
    (void)state;
    /* 3x3 column-major upper: column j holds rows 0..j. */
    double a[9] = { 1, 99, 99, 2, 3, 99, 4, 5, 6 };
    double b[9] = { 1, -5, -5, 2, 3, -5, 4, 5, 6 };
    double upper[6] = { 1, 2, 3, 4, 5, 6 };
    assert_true(same(digest_triangle(a, 3, 3, 8, 1, 0), digest_triangle(b, 3, 3, 8, 1, 0)));
    assert_true(same(digest_triangle(a, 3, 3, 8, 1, 0), digest_bytes(upper, sizeof upper)));
    double unit[3] = { 2, 4, 5 }; /* the diagonal is left out */
    assert_true(same(digest_triangle(a, 3, 3, 8, 1, 1), digest_bytes(unit, sizeof unit)));
    double lower[6] = { 1, 99, 99, 3, 99, 6 }; /* head = 0: run j holds j..n-1 */
    assert_true(same(digest_triangle(a, 3, 3, 8, 0, 0), digest_bytes(lower, sizeof lower)));
}

static void test_empty_operands_digest_as_nothing(void **state)
{
    (void)state;
    double x = 1;
    detshim_digest none = digest_bytes(NULL, 0);
    assert_true(same(digest_vector(&x, 0, 1, 8), none));
    assert_true(same(digest_matrix(&x, 0, 5, 1, 8), none));
    assert_true(same(digest_matrix(&x, 5, 0, 5, 8), none));
    assert_true(same(digest_triangle(&x, 0, 1, 8, 1, 0), none));
}

/* The reference: s's elements copied one by one, in row-major order of
 * its dims, into out. Returns the bytes written. */
static size_t pack(unsigned char *out, const void *base, const struct digest_shape *s)
{
    int64_t total = 1;
    for (int k = 0; k < s->ndims; k++)
        total *= s->dims[k];
    for (int64_t e = 0; e < total; e++) {
        int64_t off = 0, below = 1;
        for (int k = s->ndims - 1; k >= 0; k--) {
            off += e / below % s->dims[k] * s->strides[k];
            below *= s->dims[k];
        }
        memcpy(out + (size_t)e * s->elem, (const unsigned char *)base + (size_t)off * s->elem,
               s->elem);
    }
    return (size_t)total * s->elem;
}

static void test_padded_strided_tensor_digests_like_its_packed_copy(void **state)
{
    (void)state;
    /* 2 x 3 x 5 x 7 floats, NCHW, each row padded to 9, each channel by 4
     * more, each image by 3 more. */
    static float t[2 * 150];
    static unsigned char packed[sizeof t];
    struct digest_shape s = { 4, { 2, 3, 5, 7 }, { 150, 49, 9, 1 }, sizeof(float) };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        t[i] = -1e30f; /* padding, unless overwritten */
    for (int n = 0; n < 2; n++)
        for (int c = 0; c < 3; c++)
            for (int h = 0; h < 5; h++)
                for (int w = 0; w < 7; w++)
                    t[n * 150 + c * 49 + h * 9 + w] = (float)(((n * 3 + c) * 5 + h) * 7 + w);
    detshim_digest d = digest_strided(t, &s);
    assert_true(same(d, digest_bytes(packed, pack(packed, t, &s))));
    for (int i = 0; i < 2 * 3 * 5 * 7; i++)
        assert_true(((float *)(void *)packed)[i] == (float)i); /* the reference is NCHW order */
    t[7] = t[8] = t[48] = t[149] = 12345.0f; /* padding only */
    assert_true(same(digest_strided(t, &s), d));
    t[150 + 49 + 9 + 1] += 1; /* an element */
    assert_false(same(digest_strided(t, &s), d));
}

static void test_broadcast_and_reordered_strides_digest_their_logical_elements(void **state)
{
    (void)state;
    static double x[6000];
    static unsigned char packed[8 * 20000];
    for (size_t i = 0; i < sizeof x / sizeof *x; i++)
        x[i] = (double)i * 0.5;
    /* { ndims, dims, strides }: a broadcast row and column, a transposed
     * (NHWC-stored) tensor, short runs across gather blocks, long runs, a
     * packed array, dims of 1 and a merged pair of dims. */
    static const struct digest_shape shapes[] = {
        { 2, { 4, 6 }, { 0, 1 }, 8 },           { 2, { 6, 4 }, { 1, 0 }, 8 },
        { 4, { 2, 3, 4, 5 }, { 60, 1, 15, 3 }, 8 }, { 2, { 300, 20 }, { 19, 1 }, 8 },
        { 2, { 5, 100 }, { 110, 1 }, 8 },       { 3, { 2, 10, 30 }, { 300, 30, 1 }, 8 },
        { 4, { 1, 3, 1, 40 }, { 7, 41, 9, 1 }, 8 }, { 3, { 4, 5, 6 }, { 60, 12, 1 }, 8 },
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        size_t n = pack(packed, x, &shapes[i]);
        assert_true(same(digest_strided(x, &shapes[i]), digest_bytes(packed, n)));
    }
    /* A matrix digests as digest_matrix does. */
    struct digest_shape m = { 2, { 40, 33 }, { 64, 1 }, 8 };
    assert_true(same(digest_strided(x, &m), digest_matrix(x, 33, 40, 64, 8)));
    struct digest_shape empty = { 2, { 3, 0 }, { 1, 1 }, 8 };
    assert_true(same(digest_strided(x, &empty), digest_bytes(NULL, 0)));
}

static void test_every_xxh3_kernel_gives_the_same_bits(void **state)
{
    (void)state;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2"))
        skip(); /* reported as skipped, not passed */
    static unsigned char buf[1 << 16];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 131 + (i >> 7));
    struct digest_kernel sse2 = digest_kernel_for("sse2");
    struct digest_kernel wide[2] = { digest_kernel_for("avx2"), digest_kernel_for("avx512") };
    int n_wide = core_cpu_has_avx512() ? 2 : 1;
    if (n_wide == 1)
        print_message("no AVX-512 here: the avx512 XXH3 kernel is not compared\n");
    /* Every length class XXH3 treats differently, and streaming. */
    size_t lens[] = { 0, 1, 3, 16, 17, 128, 129, 240, 241, 1023, 1024, 4096, 65536 };
    for (int w = 0; w < n_wide; w++) {
        for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
            detshim_digest d = wide[w].oneshot(buf, lens[i]);
            assert_left_clean("oneshot");
            assert_true(same(sse2.oneshot(buf, lens[i]), d));
        }
        XXH3_state_t a, b;
        XXH3_128bits_reset(&a);
        XXH3_128bits_reset(&b);
        for (size_t off = 0, step = 1; off < sizeof buf; off += step, step = step * 3 + 1) {
            size_t len = off + step < sizeof buf ? step : sizeof buf - off;
            sse2.update(&a, buf + off, len);
            wide[w].update(&b, buf + off, len);
            assert_left_clean("update");
        }
        assert_true(XXH128_isEqual(XXH3_128bits_digest(&a), XXH3_128bits_digest(&b)));
        assert_true(XXH128_isEqual(XXH3_128bits_digest(&a), XXH3_128bits(buf, sizeof buf)));
    }
    assert_true(same(digest_bytes(buf, sizeof buf), sse2.oneshot(buf, sizeof buf)));
    double m[64 * 40];
    memcpy(m, buf, sizeof m);
    detshim_digest d = digest_matrix(m, 33, 40, 64, 8); /* streams through the kernel */
    double packed[33 * 40];
    for (int j = 0; j < 40; j++)
        memcpy(packed + 33 * j, m + 64 * j, 33 * 8);
    assert_true(same(d, sse2.oneshot(packed, sizeof packed)));
}

/* digest_split_*: blocks read on one thread and block sums taken in
 * parts, in any kernel, chained in order, give digest_bytes()'s bits for
 * every length class of XXH3's long loop (a block boundary, one past it,
 * a partial last block, a last stripe that overlaps the one before). */
static void test_a_digest_split_in_parts_gives_digest_bytes(void **state)
{
    (void)state;
    enum { MAX = (3 << 20) + 4096 };
    unsigned char *buf = malloc(MAX);
    uint64_t *sums = malloc(8 * sizeof *sums * (MAX / DIGEST_SPLIT_BLOCK + 1));
    assert_non_null(buf);
    assert_non_null(sums);
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (size_t i = 0; i < MAX; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    __builtin_cpu_init();
    struct digest_kernel k[3] = { digest_kernel_for("sse2"), digest_kernel_for("sse2"),
                                  digest_kernel_for("sse2") };
    if (__builtin_cpu_supports("avx2"))
        k[1] = digest_kernel_for("avx2");
    if (core_cpu_has_avx512())
        k[2] = digest_kernel_for("avx512");
    else
        print_message("no AVX-512 here: the avx512 block sums are not compared\n");
    const size_t B = DIGEST_SPLIT_BLOCK, M = DIGEST_SPLIT_MIN;
    size_t lens[] = { M - 1, M, M + 1, M + 63, M + 64, M + B - 1, M + B, M + B + 1,
                      M + 5 * B + 700, (1 << 20) + 1, 3 << 20, MAX - 1, MAX };
    assert_int_equal(digest_split_blocks(M - 1), 0);
    struct digest_split st;
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
        size_t len = lens[i], n = digest_split_blocks(len);
        detshim_digest want = digest_bytes(buf, len);
        assert_left_clean("digest_bytes");
        if (n == 0) {
            digest_split_begin(&st);
            assert_true(same(digest_split_end(&st, buf, len), want));
            continue;
        }
        assert_int_equal(n, (len - 1) / B);
        /* A head read in place, then parts of uneven sizes, each summed in
         * another kernel, chained in one or two steps. */
        for (int parts = 1; parts <= 7; parts += 3) {
            memset(sums, 0xa5, 8 * sizeof *sums * n);
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t head = parts == 1 ? 0 : parts == 4 ? n : n * (x % 100) / 100;
            digest_split_begin(&st);
            digest_split_run(&st, buf, head);
            size_t first = head;
            for (int p = 0; p < parts; p++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                size_t count = p == parts - 1 ? n - first : (n - first) * (x % 64) / 128;
                if (p % 2) {
                    k[p % 3].block_sums(buf + first * B, count, sums + 8 * first);
                    assert_left_clean("block_sums");
                } else
                    digest_split_sums(buf, first, count, sums + 8 * first);
                first += count;
            }
            size_t half = (n - head) / 2;
            digest_split_chain(&st, sums + 8 * head, half);
            k[parts % 3].chain(st.acc, NULL, sums + 8 * (head + half), n - head - half);
            assert_left_clean("chain");
            st.blocks = n;
            assert_true(same(digest_split_end(&st, buf, len), want));
        }
        /* Every kernel reads blocks in place alike. */
        for (int w = 0; w < 3; w++) {
            digest_split_begin(&st);
            k[w].chain(st.acc, buf, NULL, n);
            assert_left_clean("chain");
            st.blocks = n;
            assert_true(same(digest_split_end(&st, buf, len), want));
        }
        st.blocks = n - 1; /* a block short: digest_bytes()'s answer, not a wrong one */
        assert_true(same(digest_split_end(&st, buf, len), want));
    }
    free(sums);
    free(buf);
}

/* canon_digest_bytes: a long run shared by the canonical pool's threads,
 * past one segment of 64 MiB too, digests as digest_bytes does at any
 * thread count. */
static void test_the_pool_digests_a_long_run_as_one_thread_does(void **state)
{
    (void)state;
    enum { MAX = (64 << 20) + 3 * 1024 + 5 };
    unsigned char *buf = malloc(MAX);
    assert_non_null(buf);
    uint64_t x = 0x2545F4914F6CDD1DULL;
    for (size_t i = 0; i < MAX; i += 8) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(buf + i, &x, MAX - i < 8 ? MAX - i : 8);
    }
    size_t lens[] = { (2 << 20) - 1, 2 << 20, (3 << 20) + 7, (17 << 20) + 1000, MAX - 1, MAX };
    for (int threads = 1; threads <= 3; threads++) {
        canon_set_threads(threads);
        for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
            assert_true(same(canon_digest_bytes(buf, lens[i]), digest_bytes(buf, lens[i])));
    }
    /* lent to the trace, as the BLAS family lends it: a BLAS operand in
     * one run (a vector, a matrix without padding) goes to the pool */
    canon_set_threads(3);
    digest_lend_threads(canon_digest_bytes, canon_digest_runs);
    const int64_t n = (int64_t)(lens[3] / 8);
    assert_true(same(digest_vector(buf, n, 1, 8), digest_bytes(buf, (size_t)n * 8)));
    assert_true(same(digest_matrix(buf, 1000, n / 1000, 1000, 8),
                     digest_bytes(buf, (size_t)(n / 1000 * 1000) * 8)));
    digest_lend_threads(NULL, NULL);
    canon_set_threads(1);
    free(buf);
}

/* canon_digest_runs: a step record's tensors, the short ones one thread
 * each (longest first) and the long ones split, digest as digest_bytes
 * does each, at any thread count, over more runs than one batch, with
 * the pool's workers taking part once there are two threads. */
static void test_the_pool_digests_many_runs_as_one_thread_does(void **state)
{
    (void)state;
    enum { N = 150, MAX = (3 << 20) + 11 };
    unsigned char *buf = malloc(MAX);
    assert_non_null(buf);
    for (size_t i = 0; i < MAX; i++)
        buf[i] = (unsigned char)(i * 2654435761u >> 13);
    const void *p[N];
    size_t len[N];
    detshim_digest got[N];
    for (int i = 0; i < N; i++) { /* empty, short, just under and over the split, long */
        size_t sizes[] = { 0, 1, 240, 4096 + (size_t)i, (64 << 10) * (size_t)(i % 9),
                           (512 << 10) - 1, (2 << 20) - 1, 2 << 20, MAX - (size_t)i };
        len[i] = sizes[(i * 7) % 9];
        p[i] = buf + (size_t)i % 11;
        if (len[i] > MAX - (size_t)i % 11)
            len[i] = MAX - (size_t)i % 11;
    }
    uint64_t before = canon_pool_worker_parts();
    for (int threads = 1; threads <= 3; threads++) {
        canon_set_threads(threads);
        for (int n = 0; n <= N; n += n < 3 ? 1 : 49) {
            memset(got, 0, sizeof got);
            canon_digest_runs((size_t)n, p, len, got);
            for (int i = 0; i < n; i++)
                assert_true(same(got[i], digest_bytes(p[i], len[i])));
        }
    }
    assert_true(canon_pool_worker_parts() > before);
    canon_set_threads(1);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrix_digest_ignores_padding_beyond_leading_dimension),
        cmocka_unit_test(test_strided_vector_digests_like_its_contiguous_copy),
        cmocka_unit_test(test_negative_increment_reads_from_the_high_end),
        cmocka_unit_test(test_long_strided_vector_crosses_gather_blocks),
        cmocka_unit_test(test_triangle_digest_reads_only_the_referenced_half),
        cmocka_unit_test(test_empty_operands_digest_as_nothing),
        cmocka_unit_test(test_padded_strided_tensor_digests_like_its_packed_copy),
        cmocka_unit_test(test_broadcast_and_reordered_strides_digest_their_logical_elements),
        cmocka_unit_test(test_every_xxh3_kernel_gives_the_same_bits),
        cmocka_unit_test(test_a_digest_split_in_parts_gives_digest_bytes),
        cmocka_unit_test(test_the_pool_digests_a_long_run_as_one_thread_does),
        cmocka_unit_test(test_the_pool_digests_many_runs_as_one_thread_does),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
