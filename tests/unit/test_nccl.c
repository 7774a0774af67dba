/* The element arithmetic of the canonical collectives (shim/nccl/nccl_elem.h),
 * which the fake libnccl shares: each step is the datatype's own rounded
 * operation, avg divides at the end, integers wrap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "nccl/nccl.h"
#include "nccl/nccl_elem.h"

static void test_float_sums_round_to_the_type_after_every_step(void **state)
{
    (void)state;
    /* 1 + 2^-24 rounds back to 1 in float, not in double. */
    float acc = 1.0f, tiny = 0x1p-24f;
    assert_int_equal(nccl_elem_combine(ncclFloat32, ncclSum, &acc, &tiny), 0);
    assert_true(acc == 1.0f);
    assert_int_equal(nccl_elem_combine(ncclFloat32, ncclSum, &acc, &tiny), 0);
    assert_true(acc == 1.0f); /* ((1 + t) + t) in float, never 1 + 2t */
    _Float16 h = (_Float16)1.0f, ht = (_Float16)0x1p-11f;
    nccl_elem_combine(ncclFloat16, ncclSum, &h, &ht);
    assert_true(h == (_Float16)1.0f); /* a tie, to even */
    _Float16 want = (_Float16)3.0f;
    _Float16 a = (_Float16)1.0f, b = (_Float16)2.0f;
    nccl_elem_combine(ncclFloat16, ncclSum, &a, &b);
    assert_memory_equal(&a, &want, 2);
}

static void test_bfloat16_rounds_to_nearest_even(void **state)
{
    (void)state;
    /* bfloat16 keeps 8 bits of mantissa: 1 + 2^-8 is a tie between 1 and
     * 1 + 2^-7, and goes to 1 (even); 1 + 3*2^-9 rounds up. */
    uint16_t one = 0x3f80, half_ulp = 0x3b80 /* 2^-8 */, acc = one;
    nccl_elem_combine(ncclBfloat16, ncclSum, &acc, &half_ulp);
    assert_int_equal(acc, 0x3f80);
    uint16_t up = 0x3bc0; /* 1.5 * 2^-8 */
    acc = one;
    nccl_elem_combine(ncclBfloat16, ncclSum, &acc, &up);
    assert_int_equal(acc, 0x3f81);
}

static void test_avg_divides_once_at_the_end_and_integers_wrap(void **state)
{
    (void)state;
    float acc = 1.0f, x = 2.0f;
    nccl_elem_combine(ncclFloat32, ncclAvg, &acc, &x);
    nccl_elem_combine(ncclFloat32, ncclAvg, &acc, &x);
    nccl_elem_finish(ncclFloat32, ncclAvg, &acc, 3);
    assert_true(acc == 5.0f / 3.0f);
    int32_t i = INT32_MAX, one = 1;
    nccl_elem_combine(ncclInt32, ncclSum, &i, &one);
    assert_int_equal(i, INT32_MIN);
    uint8_t u = 200, v = 100;
    nccl_elem_combine(ncclUint8, ncclMax, &u, &v);
    assert_int_equal(u, 200);
    int64_t s = -5, t = 3;
    nccl_elem_combine(ncclInt64, ncclMin, &s, &t);
    assert_int_equal(s, -5);
}

static void test_unknown_types_and_operators_are_refused(void **state)
{
    (void)state;
    unsigned char a[8] = { 0 }, b[8] = { 0 };
    assert_int_equal(nccl_elem_combine(ncclFloat8e4m3, ncclSum, a, b), -1);
    assert_int_equal(nccl_elem_combine(ncclFloat32, ncclNumOps, a, b), -1);
    assert_int_equal(nccl_type_size(99), 0);
}

static void test_canonical_applies_to_order_dependent_float_reductions_only(void **state)
{
    (void)state;
    assert_true(nccl_canonical_applies(ncclFloat32, ncclSum));
    assert_true(nccl_canonical_applies(ncclBfloat16, ncclAvg));
    assert_true(nccl_canonical_applies(ncclFloat64, ncclProd));
    assert_false(nccl_canonical_applies(ncclFloat32, ncclMax));
    assert_false(nccl_canonical_applies(ncclInt32, ncclSum));
    assert_false(nccl_canonical_applies(ncclFloat32, ncclNumOps)); /* premulsum */
    assert_string_equal(nccl_op_name(ncclNumOps + 1), "premulsum");
    assert_string_equal(nccl_type_name(ncclBfloat16), "bfloat16");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_sums_round_to_the_type_after_every_step),
        cmocka_unit_test(test_bfloat16_rounds_to_nearest_even),
        cmocka_unit_test(test_avg_divides_once_at_the_end_and_integers_wrap),
        cmocka_unit_test(test_unknown_types_and_operators_are_refused),
        cmocka_unit_test(test_canonical_applies_to_order_dependent_float_reductions_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
