/* Operand digests cover logical elements only: padding, leading dimensions
 * and increments never change a digest; every element does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "trace/digest.h"
#include "trace/digest_kernels.h"
#define XXH_INLINE_ALL
#include <xxhash.h>
#include "core/core.h"

static int same(detshim_digest a, detshim_digest b)
{
    return a.lo == b.lo && a.hi == b.hi;
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
        for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
            assert_true(same(sse2.oneshot(buf, lens[i]), wide[w].oneshot(buf, lens[i])));
        XXH3_state_t a, b;
        XXH3_128bits_reset(&a);
        XXH3_128bits_reset(&b);
        for (size_t off = 0, step = 1; off < sizeof buf; off += step, step = step * 3 + 1) {
            size_t len = off + step < sizeof buf ? step : sizeof buf - off;
            sse2.update(&a, buf + off, len);
            wide[w].update(&b, buf + off, len);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
