/* Unit tests of the BLAS call protocol's argument rules (shim/blas/
 * blas_call.c): validation as XERBLA checks it and dimensions picked by a
 * char parameter, on ?gemm described as the generator describes it
 * (scripts/gen-blas-wrappers.py). Entering the protocol starts the shim
 * (trace_active), so its decisions are tested under LD_PRELOAD
 * (test-blas-args.sh).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "blas/blas.h"

enum { ORDER, TRANSA, TRANSB, M, N, K, ALPHA, A, LDA, B, LDB, BETA, C, LDC, NPARAMS };

static const uint8_t gemm_kinds[] = { BLAS_K_ORDER, BLAS_K_TRANS, BLAS_K_TRANS, BLAS_K_DIM,
                                      BLAS_K_DIM, BLAS_K_DIM, BLAS_K_SCALAR, BLAS_K_ARRAY,
                                      BLAS_K_LD, BLAS_K_ARRAY, BLAS_K_LD, BLAS_K_SCALAR,
                                      BLAS_K_ARRAY, BLAS_K_LD };
static const char *const gemm_names[] = { "order", "transa", "transb", "m", "n", "k", "alpha",
                                          "a", "lda", "b", "ldb", "beta", "c", "ldc" };
static const uint8_t gemm_name_lens[] = { 5, 6, 6, 1, 1, 1, 5, 1, 3, 1, 3, 4, 1, 3 };
static const struct blas_operand gemm_operands[] = {
    { "A", 1, BLAS_GENERAL, BLAS_READ | BLAS_IF_ALPHA, A, TRANSA, -1, -1, LDA, -1, -1, BLAS_DIM(M),
      BLAS_DIM(K) },
    { "B", 1, BLAS_GENERAL, BLAS_READ | BLAS_IF_ALPHA, B, TRANSB, -1, -1, LDB, -1, -1, BLAS_DIM(K),
      BLAS_DIM(N) },
    { "C", 1, BLAS_GENERAL, BLAS_READ | BLAS_WRITE | BLAS_IF_BETA, C, -1, -1, -1, LDC, -1, -1,
      BLAS_DIM(M), BLAS_DIM(N) },
};
static const struct blas_form gemm_form = { 3, NPARAMS, 3, BLAS_QUICK_AB, ALPHA, BETA, K, 1,
                                            gemm_kinds, gemm_names, gemm_name_lens,
                                            gemm_operands };

/* A valid column-major call: C (4 x 3) = A (4 x 2) B (2 x 3). */
static void valid(union blas_val *v)
{
    v[ORDER].ch = 'C', v[TRANSA].ch = 'N', v[TRANSB].ch = 'N';
    v[M].i = 4, v[N].i = 3, v[K].i = 2;
    v[LDA].i = 4, v[LDB].i = 2, v[LDC].i = 4;
}

static void test_validate_accepts_a_valid_call(void **state)
{
    union blas_val v[NPARAMS];
    valid(v);
    assert_int_equal(blas_validate(&gemm_form, 0, v), 0);
}

static void test_validate_names_the_first_bad_parameter_in_signature_order(void **state)
{
    union blas_val v[NPARAMS];
    valid(v);
    v[LDC].i = 1;
    assert_int_equal(blas_validate(&gemm_form, 0, v), LDC + 1);
    v[M].i = -1;
    assert_int_equal(blas_validate(&gemm_form, 0, v), M + 1);
    valid(v);
    v[TRANSB].ch = 'X';
    assert_int_equal(blas_validate(&gemm_form, 0, v), TRANSB + 1);
    v[ORDER].ch = '?';
    assert_int_equal(blas_validate(&gemm_form, 0, v), ORDER + 1);
}

static void test_validate_checks_ld_against_the_stored_run_of_its_operand(void **state)
{
    union blas_val v[NPARAMS];
    valid(v);
    /* A^T is stored k x m = 2 x 4: lda 2 is enough, lda 1 is not. */
    v[TRANSA].ch = 'T', v[LDA].i = 2;
    assert_int_equal(blas_validate(&gemm_form, 0, v), 0);
    v[LDA].i = 1;
    assert_int_equal(blas_validate(&gemm_form, 0, v), LDA + 1);
    /* Row-major: a run is a row, so ldc must cover n = 3, not m = 4. */
    valid(v);
    v[ORDER].ch = 'R', v[LDA].i = 2, v[LDB].i = 3, v[LDC].i = 3;
    assert_int_equal(blas_validate(&gemm_form, 0, v), 0);
    v[LDC].i = 2;
    assert_int_equal(blas_validate(&gemm_form, 0, v), LDC + 1);
}

static void test_validate_requires_ld_at_least_one_when_a_dimension_is_zero(void **state)
{
    union blas_val v[NPARAMS];
    valid(v);
    v[M].i = 0, v[LDA].i = 0;
    assert_int_equal(blas_validate(&gemm_form, 0, v), LDA + 1);
    v[LDA].i = 1, v[LDC].i = 1;
    assert_int_equal(blas_validate(&gemm_form, 0, v), 0);
}

static void test_validate_trans_sym_refuses_conj_trans_in_complex_only(void **state)
{
    static const uint8_t kinds[] = { BLAS_K_ORDER, BLAS_K_TRANS_SYM };
    static const char *const names[] = { "order", "trans" };
    static const uint8_t name_lens[] = { 5, 5 };
    const struct blas_form f = { 3, 2, 0, 0, -1, -1, -1, 1, kinds, names, name_lens, NULL };
    union blas_val v[2] = { { .ch = 'C' }, { .ch = 'C' } };
    assert_int_equal(blas_validate(&f, 0, v), 0);
    assert_int_equal(blas_validate(&f, 1, v), 2);
}

static void test_level_one_routines_accept_any_dimension_and_increment(void **state)
{
    static const uint8_t kinds[] = { BLAS_K_DIM, BLAS_K_ARRAY, BLAS_K_INC };
    static const char *const names[] = { "n", "x", "incx" };
    static const uint8_t name_lens[] = { 1, 1, 4 };
    const struct blas_form f = { 1, 3, 0, 0, -1, -1, -1, 0, kinds, names, name_lens, NULL };
    union blas_val v[3] = { { .i = -5 }, { .p = NULL }, { .i = 0 } };
    assert_int_equal(blas_validate(&f, 0, v), 0);
}

static void test_dim_picks_by_its_char_parameter(void **state)
{
    union blas_val v[NPARAMS];
    valid(v);
    const struct blas_dim x = BLAS_DIM_IF(TRANSA, 'N', N, M);
    assert_int_equal(blas_dim_value(&x, v), 3);
    v[TRANSA].ch = 'T';
    assert_int_equal(blas_dim_value(&x, v), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_accepts_a_valid_call),
        cmocka_unit_test(test_validate_names_the_first_bad_parameter_in_signature_order),
        cmocka_unit_test(test_validate_checks_ld_against_the_stored_run_of_its_operand),
        cmocka_unit_test(test_validate_requires_ld_at_least_one_when_a_dimension_is_zero),
        cmocka_unit_test(test_validate_trans_sym_refuses_conj_trans_in_complex_only),
        cmocka_unit_test(test_level_one_routines_accept_any_dimension_and_increment),
        cmocka_unit_test(test_dim_picks_by_its_char_parameter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
