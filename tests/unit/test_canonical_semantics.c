/* Unit tests of what every canonical BLAS routine shares: the beta = 0
 * and alpha = 0 rules, NaN and Inf propagation, nrm2's range, argument
 * checks and the ISA choice (shim/blas/canonical*.c; helpers in
 * canonical_ref.h).
 */
#include "canonical_ref.h"

/* ---- semantics -------------------------------------------------------------- */

static void test_beta_zero_ignores_nan_in_the_output(void **state)
{
    (void)state;
    float a[6] = {1, 2, 3, 4, 5, 6}, x[3] = {1, 1, 1}, y[2] = {NAN, NAN};
    assert_int_equal(canon_sgemv('C', 'N', 2, 3, 1.0f, a, 2, x, 1, 0.0f, y, 1), 0);
    assert_true(y[0] == 9 && y[1] == 12);
    double c[4] = {NAN, NAN, NAN, NAN}, b[4] = {1, 0, 0, 1}, s[4] = {2, 0, 0, 3};
    assert_int_equal(canon_dsymm('C', 'L', 'U', 2, 2, 1.0, s, 2, b, 2, 0.0, c, 2), 0);
    assert_true(c[0] == 2 && c[1] == 0 && c[2] == 0 && c[3] == 3);
    double c2[4] = {NAN, NAN, NAN, NAN};
    assert_int_equal(canon_dsyrk('C', 'L', 'N', 2, 2, 1.0, b, 2, 0.0, c2, 2), 0);
    assert_true(c2[0] == 1 && c2[1] == 0 && c2[3] == 1);
    assert_true(isnan(c2[2])); /* the other triangle is not written */
}

static void test_alpha_zero_reads_neither_matrix_nor_vector(void **state)
{
    (void)state;
    float a[4] = {NAN, NAN, NAN, NAN}, x[2] = {NAN, INFINITY}, y[2] = {1, 2};
    assert_int_equal(canon_sgemv('R', 'T', 2, 2, 0.0f, a, 2, x, 1, 2.0f, y, 1), 0);
    assert_true(y[0] == 2 && y[1] == 4);
    assert_int_equal(canon_saxpy(2, 0.0f, x, 1, y, 1), 0);
    assert_true(y[0] == 2 && y[1] == 4);
    double b[4] = {NAN, 1, INFINITY, 2}, t[4] = {NAN, NAN, NAN, NAN};
    assert_int_equal(canon_dtrsm('C', 'L', 'U', 'N', 'N', 2, 2, 0.0, t, 2, b, 2), 0);
    assert_true(b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0);
    double b2[4] = {NAN, 1, INFINITY, 2};
    assert_int_equal(canon_dtrmm('R', 'R', 'L', 'C', 'U', 2, 2, 0.0, t, 2, b2, 2), 0);
    assert_true(b2[0] == 0 && b2[1] == 0 && b2[2] == 0 && b2[3] == 0);
    float m[4] = {1, 2, 3, 4};
    assert_int_equal(canon_sger('C', 2, 2, 0.0f, x, 1, x, 1, m, 2), 0);
    assert_true(m[0] == 1 && m[3] == 4);
}

static void test_nan_and_inf_propagate_with_no_zero_skipping(void **state)
{
    (void)state;
    /* ger with y_j == 0 still forms NaN * 0 (the reference BLAS skips it) */
    float x[2] = {NAN, 1}, y[2] = {0, 1}, a[4] = {0, 0, 0, 0};
    assert_int_equal(canon_sger('C', 2, 2, 1.0f, x, 1, y, 1, a, 2), 0);
    assert_true(isnan(a[0]) && a[1] == 0 && isnan(a[2]) && a[3] == 1);
    /* trsm with a zero right-hand side still multiplies by A */
    double t[4] = {1, INFINITY, 0, 1}, b[2] = {0, 1};
    assert_int_equal(canon_dtrsm('C', 'L', 'L', 'N', 'U', 2, 1, 1.0, t, 2, b, 2), 0);
    assert_true(b[0] == 0 && isnan(b[1]));
    float d;
    float inf[3] = {1, INFINITY, 2}, one[3] = {1, 1, 1};
    assert_int_equal(canon_sdot(3, inf, 1, one, 1, &d), 0);
    assert_true(isinf(d) && d > 0);
    /* scal always multiplies: 0 * NaN is NaN */
    float v[2] = {NAN, 3};
    assert_int_equal(canon_sscal(2, 0.0f, v, 1), 0);
    assert_true(isnan(v[0]) && v[1] == 0);
}

static void test_nrm2_does_not_overflow_or_underflow_needlessly(void **state)
{
    (void)state;
    float big[2] = {3e30f, 4e30f}, tiny[2] = {3e-40f, 4e-40f}, r;
    assert_int_equal(canon_snrm2(2, big, 1, &r), 0);
    assert_true(fabsf(r - 5e30f) <= 5e30f * 1e-6f);
    assert_int_equal(canon_snrm2(2, tiny, 1, &r), 0);
    assert_true(fabsf(r - 5e-40f) <= 5e-40f * 1e-3f); /* subnormal inputs: few bits */
    /* A long vector's small terms are kept (scipy's test_stable): 10^4 and
     * 10^4 ones is sqrt(10^8 + 10^4) = 10000.49999 */
    static float ones[10001];
    ones[0] = 1e4f;
    for (int i = 1; i <= 10000; i++)
        ones[i] = 1;
    assert_int_equal(canon_snrm2(10001, ones, 1, &r), 0);
    assert_true(r == 10000.5f);
    double zbig[2] = {3e300, 4e300}, rd;
    assert_int_equal(canon_dznrm2(1, zbig, 1, &rd), 0);
    assert_true(fabs(rd - 5e300) <= 5e300 * 1e-15);
    double with_nan[3] = {INFINITY, NAN, 1};
    assert_int_equal(canon_dnrm2(3, with_nan, 1, &rd), 0);
    assert_true(isnan(rd));
    assert_int_equal(canon_dnrm2(2, with_nan, 1, &rd), 0);
    assert_true(isnan(rd));
    assert_int_equal(canon_dnrm2(1, with_nan, 1, &rd), 0);
    assert_true(isinf(rd));
    assert_int_equal(canon_dnrm2(3, with_nan, -1, &rd), 0);
    assert_true(rd == 0); /* incx <= 0: zero, as the BLAS */
}

/* Every routine family rejects what the BLAS rejects, and then writes
 * nothing. */
static void test_bad_arguments_return_minus_one_and_touch_nothing(void **state)
{
    (void)state;
    float a[16], x[4], y[4], b[16];
    for (int i = 0; i < 16; i++)
        a[i] = b[i] = (float)i;
    for (int i = 0; i < 4; i++)
        x[i] = y[i] = (float)i;
    float a0[16], b0[16], y0[4];
    memcpy(a0, a, sizeof a);
    memcpy(b0, b, sizeof b);
    memcpy(y0, y, sizeof y);
    float zero2[2] = {0, 0}, one2[2] = {1, 0};

    assert_int_equal(canon_sgemv('X', 'N', 2, 2, 1, a, 2, x, 1, 0, y, 1), -1);
    assert_int_equal(canon_sgemv('C', 'Q', 2, 2, 1, a, 2, x, 1, 0, y, 1), -1);
    assert_int_equal(canon_sgemv('C', 'N', -1, 2, 1, a, 2, x, 1, 0, y, 1), -1);
    assert_int_equal(canon_sgemv('C', 'N', 3, 2, 1, a, 2, x, 1, 0, y, 1), -1);
    assert_int_equal(canon_sgemv('R', 'N', 2, 3, 1, a, 2, x, 1, 0, y, 1), -1);
    assert_int_equal(canon_sgemv('C', 'N', 2, 2, 1, a, 2, x, 0, 0, y, 1), -1);
    assert_int_equal(canon_sgemv('C', 'N', 2, 2, 1, a, 2, x, 1, 0, y, 0), -1);
    assert_int_equal(canon_sger('C', 3, 2, 1, x, 1, y, 1, a, 2), -1);
    assert_int_equal(canon_sger('C', 2, 2, 1, x, 0, y, 1, a, 2), -1);
    assert_int_equal(canon_strmv('C', 'X', 'N', 'N', 2, a, 2, y, 1), -1);
    assert_int_equal(canon_strsv('C', 'U', 'N', 'X', 2, a, 2, y, 1), -1);
    assert_int_equal(canon_strsv('C', 'U', 'N', 'N', 3, a, 2, y, 1), -1);
    assert_int_equal(canon_strsv('C', 'U', 'N', 'N', 2, a, 2, y, 0), -1);
    assert_int_equal(canon_ssyrk('C', 'U', 'N', 2, 3, 1, a, 1, 0, b, 2), -1);
    assert_int_equal(canon_ssyrk('C', 'U', 'T', 2, 3, 1, a, 2, 0, b, 2), -1);
    assert_int_equal(canon_ssyrk('C', 'U', 'N', 3, 1, 1, a, 3, 0, b, 2), -1);
    assert_int_equal(canon_csyrk('C', 'U', 'C', 2, 2, one2, a, 2, zero2, b, 2), -1);
    assert_int_equal(canon_ssymm('C', 'X', 'U', 2, 2, 1, a, 2, b, 2, 0, b, 2), -1);
    assert_int_equal(canon_ssymm('C', 'R', 'U', 2, 3, 1, a, 2, b, 2, 0, b, 2), -1);
    assert_int_equal(canon_ssymm('R', 'L', 'U', 2, 3, 1, a, 2, b, 3, 0, b, 2), -1);
    assert_int_equal(canon_strmm('C', 'L', 'U', 'N', 'N', 3, 2, 1, a, 2, b, 3), -1);
    assert_int_equal(canon_strmm('C', 'L', 'U', 'N', 'N', 2, 2, 1, a, 2, b, 1), -1);
    assert_int_equal(canon_strsm('C', 'L', 'U', 'X', 'N', 2, 2, 1, a, 2, b, 2), -1);
    assert_int_equal(canon_strsm('R', 'R', 'U', 'N', 'N', 2, 3, 1, a, 2, b, 3), -1);
    assert_int_equal(canon_strsm('C', 'L', 'U', 'N', 'N', -2, 2, 1, a, 2, b, 2), -1);
    assert_memory_equal(a, a0, sizeof a);
    assert_memory_equal(b, b0, sizeof b);
    assert_memory_equal(y, y0, sizeof y);
    /* lower case is accepted, as by the Fortran BLAS */
    assert_int_equal(canon_sgemv('c', 'n', 2, 2, 1, a, 2, x, 1, 0, y, 1), 0);
    assert_int_equal(canon_strsm('r', 'l', 'u', 'c', 'u', 2, 2, 1, a, 2, b, 2), 0);
}

static void test_isa_can_be_chosen_and_unknown_names_are_refused(void **state)
{
    (void)state;
    assert_int_equal(canon_blas_set_isa("scalar"), 0);
    assert_string_equal(canon_blas_isa(), "scalar");
    assert_int_equal(canon_blas_set_isa("sse9"), -1);
    assert_string_equal(canon_blas_isa(), "scalar");
    assert_int_equal(canon_blas_set_isa("auto"), 0);
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    assert_string_equal(canon_blas_isa(),
                        canon_cpu_has_avx512() ? "avx512" : avx2 ? "avx2" : "scalar");
    assert_int_equal(canon_blas_set_isa("avx2"), avx2 ? 0 : -1);
    assert_int_equal(canon_blas_set_isa("avx512"), canon_cpu_has_avx512() ? 0 : -1);
    if (canon_cpu_has_avx512())
        assert_string_equal(canon_blas_isa(), "avx512");
    assert_int_equal(canon_blas_set_isa(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_beta_zero_ignores_nan_in_the_output),
        cmocka_unit_test(test_alpha_zero_reads_neither_matrix_nor_vector),
        cmocka_unit_test(test_nan_and_inf_propagate_with_no_zero_skipping),
        cmocka_unit_test(test_nrm2_does_not_overflow_or_underflow_needlessly),
        cmocka_unit_test(test_bad_arguments_return_minus_one_and_touch_nothing),
        cmocka_unit_test(test_isa_can_be_chosen_and_unknown_names_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
