/* Operand digests cover logical elements only: padding, leading dimensions
 * and increments never change a digest; every element does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "detshim/digest.h"
#include "detshim/digest_kernels.h"

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

static void test_every_xxh3_kernel_gives_the_same_bits(void **state)
{
    (void)state;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2"))
        skip(); /* reported as skipped, not passed */
    static unsigned char buf[1 << 16];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 131 + (i >> 7));
    struct digest_kernel sse2 = digest_kernel_for("sse2"), avx2 = digest_kernel_for("avx2");
    /* Every length class XXH3 treats differently, and streaming. */
    size_t lens[] = { 0, 1, 3, 16, 17, 128, 129, 240, 241, 1023, 1024, 4096, 65536 };
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
        assert_true(same(sse2.oneshot(buf, lens[i]), avx2.oneshot(buf, lens[i])));
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
        cmocka_unit_test(test_every_xxh3_kernel_gives_the_same_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
