/* Unit tests of the BLAS operand helpers (shim/blas/blas_operands.c): enum
 * and character mapping, and that each operand shape digests exactly its
 * logical elements in storage order, the same as digest_bytes over those
 * elements packed, never reading padding or the unreferenced triangle;
 * likewise the gathered shapes (packed, band, Hermitian diagonals, rotm's
 * param), which digest what the reference BLAS reads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "blas/blas.h"
#include "trace/digest.h"
#include "trace/trace.h"

static int same(detshim_digest a, detshim_digest b)
{
    return a.lo == b.lo && a.hi == b.hi;
}

static detshim_digest packed(const double *v, size_t n)
{
    return digest_bytes(v, n * sizeof *v);
}

static detshim_digest nothing(void)
{
    return digest_bytes(NULL, 0);
}

/* Fills a[0..n) with distinct values (the padding included), so that a
 * digest over the wrong elements cannot match by accident. */
static void fill(double *a, size_t n, double base)
{
    for (size_t i = 0; i < n; i++)
        a[i] = base + (double)i;
}

/* A buffer whose last `n` doubles end at an inaccessible page: reading one
 * element past them faults. Returns the first of the n doubles. */
static double *at_guard_page(size_t n, void **map, size_t *maplen)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    assert_true(n * sizeof(double) <= page);
    *maplen = 2 * page;
    char *p = mmap(NULL, *maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    assert_int_equal(mprotect(p + page, page, PROT_NONE), 0);
    *map = p;
    return (double *)(p + page) - n;
}

static void test_cblas_enums_map_to_the_fortran_chars(void **state)
{
    assert_int_equal(blas_order_char(101), 'R');
    assert_int_equal(blas_order_char(102), 'C');
    assert_int_equal(blas_trans_char(111), 'N');
    assert_int_equal(blas_trans_char(112), 'T');
    assert_int_equal(blas_trans_char(113), 'C');
    assert_int_equal(blas_uplo_char(121), 'U');
    assert_int_equal(blas_uplo_char(122), 'L');
    assert_int_equal(blas_diag_char(131), 'N');
    assert_int_equal(blas_diag_char(132), 'U');
    assert_int_equal(blas_side_char(141), 'L');
    assert_int_equal(blas_side_char(142), 'R');
}

static void test_cblas_enum_values_outside_the_standard_map_to_question_mark(void **state)
{
    assert_int_equal(blas_order_char(0), '?');
    assert_int_equal(blas_trans_char(114), '?');
    assert_int_equal(blas_uplo_char(111), '?');
    assert_int_equal(blas_diag_char(133), '?');
    assert_int_equal(blas_side_char('L'), '?');
}

static void test_fortran_chars_are_upper_cased_and_others_kept(void **state)
{
    assert_int_equal(blas_fchar("n"), 'N');
    assert_int_equal(blas_fchar("t"), 'T');
    assert_int_equal(blas_fchar("Upper"), 'U');
    assert_int_equal(blas_fchar("l"), 'L');
    assert_int_equal(blas_fchar("?"), '?');
}

static void test_complex_scalar_is_zero_only_when_both_parts_are_zero(void **state)
{
    float c_zero[2] = { 0.0f, -0.0f }, c_imag[2] = { 0.0f, 1.0f }, c_real[2] = { 2.0f, 0.0f };
    double z_zero[2] = { -0.0, 0.0 }, z_imag[2] = { 0.0, 1e-300 }, z_real[2] = { 1.0, 0.0 };
    assert_true(blas_c64_is_zero(c_zero));
    assert_false(blas_c64_is_zero(c_imag));
    assert_false(blas_c64_is_zero(c_real));
    assert_true(blas_c128_is_zero(z_zero));
    assert_false(blas_c128_is_zero(z_imag));
    assert_false(blas_c128_is_zero(z_real));
}

static void test_digest_general_ignores_padding_beyond_rows(void **state)
{
    /* A 3 x 2 column-major matrix with ld 5: rows 3 and 4 are padding. */
    double a[10], b[10];
    fill(a, 10, 0);
    fill(b, 10, 100);
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 3; i++)
            b[j * 5 + i] = a[j * 5 + i];
    struct blas_digest da = blas_digest_general('C', 'N', 3, 2, a, 5, 8);
    struct blas_digest db = blas_digest_general('C', 'N', 3, 2, b, 5, 8);
    double logical[6] = { a[0], a[1], a[2], a[5], a[6], a[7] };
    assert_true(same(da.digest, db.digest));
    assert_true(same(da.digest, packed(logical, 6)));
    assert_int_equal(da.count, 6);
    assert_int_equal(da.elem_size, 8);
}

static void test_digest_general_same_elements_any_leading_dimension_digest_alike(void **state)
{
    double padded[12], tight[6];
    fill(padded, 12, 0);
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 2; i++)
            tight[j * 2 + i] = padded[j * 4 + i];
    assert_true(same(blas_digest_general('C', 'N', 2, 3, padded, 4, 8).digest,
                     blas_digest_general('C', 'N', 2, 3, tight, 2, 8).digest));
}

static void test_digest_general_row_major_digests_rows_of_cols(void **state)
{
    /* A 2 x 3 row-major matrix with ld 4: column 3 is padding. */
    double a[8];
    fill(a, 8, 0);
    double logical[6] = { a[0], a[1], a[2], a[4], a[5], a[6] };
    struct blas_digest d = blas_digest_general('R', 'N', 2, 3, a, 4, 8);
    assert_true(same(d.digest, packed(logical, 6)));
    assert_int_equal(d.count, 6);
}

static void test_digest_general_transposed_operand_digests_its_stored_shape(void **state)
{
    /* op(A) = A^T is 2 x 3, so A is stored 3 x 2 column-major, ld 4. */
    double a[8];
    fill(a, 8, 0);
    double logical[6] = { a[0], a[1], a[2], a[4], a[5], a[6] };
    struct blas_digest t = blas_digest_general('C', 'T', 2, 3, a, 4, 8);
    struct blas_digest c = blas_digest_general('C', 'C', 2, 3, a, 4, 8);
    assert_true(same(t.digest, packed(logical, 6)));
    assert_true(same(c.digest, t.digest));
    assert_int_equal(t.count, 6);
}

static void test_digest_general_row_major_equals_col_major_transpose_of_same_buffer(void **state)
{
    /* A row-major 2 x 3 A and a column-major A^T whose op is 2 x 3 (so A is
     * stored 3 x 2) are both two runs of three: same elements, same order.
     * The column-major 2 x 3 read last spans three runs of ld 4: 10 elements. */
    double a[10];
    fill(a, 10, 0);
    assert_true(same(blas_digest_general('R', 'N', 2, 3, a, 4, 8).digest,
                     blas_digest_general('C', 'T', 2, 3, a, 4, 8).digest));
    assert_false(same(blas_digest_general('R', 'N', 2, 3, a, 4, 8).digest,
                      blas_digest_general('C', 'N', 2, 3, a, 4, 8).digest));
}

static void test_digest_general_never_reads_past_the_last_element(void **state)
{
    void *map;
    size_t maplen;
    /* Column-major 3 x 4, ld 5: the last column ends at element 3*5+2, and
     * the two padding rows after it lie in the inaccessible page. */
    double *a = at_guard_page(18, &map, &maplen);
    fill(a, 18, 0);
    struct blas_digest d = blas_digest_general('C', 'N', 3, 4, a, 5, 8);
    assert_int_equal(d.count, 12);
    d = blas_digest_general('R', 'N', 4, 3, a, 5, 8);
    assert_int_equal(d.count, 12);
    d = blas_digest_general('C', 'T', 4, 3, a, 5, 8);
    assert_int_equal(d.count, 12);
    munmap(map, maplen);
}

static void test_digest_general_empty_dimension_digests_nothing_and_counts_zero(void **state)
{
    /* NULL is never read: an empty shape touches no memory. */
    struct blas_digest d = blas_digest_general('C', 'N', 0, 5, NULL, 1, 8);
    assert_int_equal(d.count, 0);
    assert_true(same(d.digest, nothing()));
    d = blas_digest_general('R', 'T', 4, -1, NULL, 4, 4);
    assert_int_equal(d.count, 0);
    assert_int_equal(d.elem_size, 4);
}

static void test_digest_general_ld_shorter_than_a_run_digests_nothing(void **state)
{
    /* The BLAS rejects lda < rows (column-major) before reading; so do we. */
    assert_int_equal(blas_digest_general('C', 'N', 3, 2, NULL, 2, 8).count, 0);
    assert_int_equal(blas_digest_general('R', 'N', 2, 3, NULL, 2, 8).count, 0);
    assert_int_equal(blas_digest_general('C', 'T', 2, 3, NULL, 2, 8).count, 0);
    assert_int_equal(blas_digest_general('C', 'N', 3, 2, NULL, 0, 8).count, 0);
}

static void test_digest_general_invalid_layout_or_trans_digests_nothing(void **state)
{
    assert_int_equal(blas_digest_general('?', 'N', 2, 2, NULL, 2, 8).count, 0);
    assert_int_equal(blas_digest_general('C', '?', 2, 2, NULL, 2, 8).count, 0);
}

static void test_digest_vec_skips_elements_between_strides(void **state)
{
    double x[7];
    fill(x, 7, 0);
    double logical[3] = { x[0], x[3], x[6] };
    struct blas_digest d = blas_digest_vec(x, 3, 3, 8);
    assert_true(same(d.digest, packed(logical, 3)));
    assert_int_equal(d.count, 3);
}

static void test_digest_vec_negative_increment_starts_from_the_last_element(void **state)
{
    double x[5];
    fill(x, 5, 0);
    double logical[3] = { x[4], x[2], x[0] };
    assert_true(same(blas_digest_vec(x, 3, -2, 8).digest, packed(logical, 3)));
}

static void test_digest_vec_never_reads_past_the_last_element(void **state)
{
    void *map;
    size_t maplen;
    double *x = at_guard_page(7, &map, &maplen);
    fill(x, 7, 0);
    assert_int_equal(blas_digest_vec(x, 4, 2, 8).count, 4);
    assert_int_equal(blas_digest_vec(x, 4, -2, 8).count, 4);
    munmap(map, maplen);
}

static void test_digest_vec_zero_or_negative_length_digests_nothing(void **state)
{
    struct blas_digest d = blas_digest_vec(NULL, 0, 1, 16);
    assert_int_equal(d.count, 0);
    assert_true(same(d.digest, nothing()));
    assert_int_equal(blas_digest_vec(NULL, -3, 1, 16).count, 0);
}

static void test_digest_tri_upper_col_major_ignores_the_lower_triangle(void **state)
{
    /* 3 x 3 column-major, ld 4: the upper triangle is a[j*4 + 0..j]. */
    double a[12], b[12];
    fill(a, 12, 0);
    fill(b, 12, 50);
    for (int j = 0; j < 3; j++)
        for (int i = 0; i <= j; i++)
            b[j * 4 + i] = a[j * 4 + i];
    double logical[6] = { a[0], a[4], a[5], a[8], a[9], a[10] };
    struct blas_digest d = blas_digest_tri('C', 'U', 'N', 3, a, 4, 8);
    assert_true(same(d.digest, packed(logical, 6)));
    assert_true(same(d.digest, blas_digest_tri('C', 'U', 'N', 3, b, 4, 8).digest));
    assert_int_equal(d.count, 6);
}

static void test_digest_tri_lower_col_major_reads_from_the_diagonal_down(void **state)
{
    double a[9];
    fill(a, 9, 0);
    double logical[6] = { a[0], a[1], a[2], a[4], a[5], a[8] };
    assert_true(same(blas_digest_tri('C', 'L', 'N', 3, a, 3, 8).digest, packed(logical, 6)));
}

static void test_digest_tri_unit_diag_leaves_the_diagonal_out(void **state)
{
    double a[9], b[9];
    fill(a, 9, 0);
    memcpy(b, a, sizeof b);
    b[0] = b[4] = b[8] = -1;
    double logical[3] = { a[3], a[6], a[7] };
    struct blas_digest d = blas_digest_tri('C', 'U', 'U', 3, a, 3, 8);
    assert_true(same(d.digest, packed(logical, 3)));
    assert_true(same(d.digest, blas_digest_tri('C', 'U', 'U', 3, b, 3, 8).digest));
    assert_int_equal(d.count, 3);
}

static void test_digest_tri_row_major_lower_matches_col_major_upper_of_same_buffer(void **state)
{
    /* Row i of a row-major lower triangle holds columns 0..i, exactly like
     * column j of a column-major upper one. */
    double a[16];
    fill(a, 16, 0);
    assert_true(same(blas_digest_tri('R', 'L', 'N', 4, a, 4, 8).digest,
                     blas_digest_tri('C', 'U', 'N', 4, a, 4, 8).digest));
    assert_true(same(blas_digest_tri('R', 'U', 'U', 4, a, 4, 8).digest,
                     blas_digest_tri('C', 'L', 'U', 4, a, 4, 8).digest));
    assert_false(same(blas_digest_tri('R', 'L', 'N', 4, a, 4, 8).digest,
                      blas_digest_tri('R', 'U', 'N', 4, a, 4, 8).digest));
}

static void test_digest_tri_never_reads_past_the_last_element(void **state)
{
    void *map;
    size_t maplen;
    /* Column-major lower 3 x 3, ld 5: the last referenced element is the
     * diagonal a[2*5+2]; whatever follows it is in the inaccessible page. */
    double *a = at_guard_page(13, &map, &maplen);
    fill(a, 13, 0);
    assert_int_equal(blas_digest_tri('C', 'L', 'N', 3, a, 5, 8).count, 6);
    assert_int_equal(blas_digest_tri('R', 'U', 'N', 3, a, 5, 8).count, 6);
    munmap(map, maplen);
}

static void test_digest_tri_invalid_shape_digests_nothing(void **state)
{
    assert_int_equal(blas_digest_tri('C', 'U', 'N', 0, NULL, 1, 8).count, 0);
    assert_int_equal(blas_digest_tri('C', 'U', 'N', 3, NULL, 2, 8).count, 0);
    assert_int_equal(blas_digest_tri('C', '?', 'N', 3, NULL, 3, 8).count, 0);
    assert_int_equal(blas_digest_tri('C', 'U', '?', 3, NULL, 3, 8).count, 0);
    assert_int_equal(blas_digest_tri('?', 'U', 'N', 3, NULL, 3, 8).count, 0);
}

static void test_digest_value_is_one_element_of_its_size(void **state)
{
    double v = 0.25;
    struct blas_digest d = blas_digest_value(&v, sizeof v);
    assert_true(same(d.digest, packed(&v, 1)));
    assert_int_equal(d.count, 1);
    assert_int_equal(d.elem_size, 8);
}

static void test_rec_operand_records_digest_count_and_element_size(void **state)
{
    double x[3] = { 1, 2, 3 };
    struct blas_digest d = blas_digest_vec(x, 3, 1, 8);
    struct trace_rec r;
    trace_rec_begin(&r, "cblas_ddot");
    blas_rec_operand(&r, "x", 1, TRACE_ROLE_IN, d);
    assert_int_equal(r.noperands, 1);
    assert_string_equal(r.operands[0].name, "x");
    assert_int_equal(r.operands[0].name_len, 1);
    assert_int_equal(r.operands[0].role, TRACE_ROLE_IN);
    assert_int_equal(r.operands[0].count, 3);
    assert_int_equal(r.operands[0].elem_size, 8);
    assert_true(same(r.operands[0].digest, d.digest));
}

static void test_packed_upper_col_major_is_every_element_in_order(void **state)
{
    double ap[6];
    fill(ap, 6, 0);
    struct blas_digest d = blas_digest_packed('C', 'U', 'N', 3, ap, 8, 0);
    assert_int_equal(d.count, 6);
    assert_true(same(d.digest, packed(ap, 6)));
}

static void test_packed_digests_as_the_same_triangle_stored_full(void **state)
{
    /* Packing keeps a triangle's elements in storage order: packed and full
     * forms digest alike, unit diagonal or not. A row-major upper triangle
     * packs as the column-major lower one of the same buffer. */
    double a[9], ap[6];
    fill(a, 9, 0);
    for (int lower = 0; lower < 2; lower++) {
        int k = 0;
        for (int j = 0; j < 3; j++)
            for (int i = lower ? j : 0; i <= (lower ? 2 : j); i++)
                ap[k++] = a[i + 3 * j];
        char uplo = lower ? 'L' : 'U', row_uplo = lower ? 'U' : 'L';
        for (int unit = 0; unit < 2; unit++) {
            char diag = unit ? 'U' : 'N';
            struct blas_digest p = blas_digest_packed('C', uplo, diag, 3, ap, 8, 0);
            struct blas_digest f = blas_digest_tri('C', uplo, diag, 3, a, 3, 8);
            assert_true(same(p.digest, f.digest));
            assert_int_equal(p.count, unit ? 3 : 6);
            assert_true(same(blas_digest_packed('R', row_uplo, diag, 3, ap, 8, 0).digest,
                             blas_digest_tri('R', row_uplo, diag, 3, a, 3, 8).digest));
        }
    }
}

static void test_hermitian_diagonal_imaginary_parts_are_not_read(void **state)
{
    /* A 2 x 2 complex (double[2] per element) upper triangle, ld 2. */
    double a[8], b[8];
    fill(a, 8, 1);
    memcpy(b, a, sizeof b);
    b[1] = 99, b[7] = -99; /* imaginary parts of a(0,0) and a(1,1) */
    struct blas_digest da = blas_digest_tri_herm('C', 'U', 2, a, 2, 16);
    assert_int_equal(da.count, 3);
    assert_true(same(da.digest, blas_digest_tri_herm('C', 'U', 2, b, 2, 16).digest));
    b[2] = 5; /* a(1,0) is in the lower triangle: not read either */
    assert_true(same(da.digest, blas_digest_tri_herm('C', 'U', 2, b, 2, 16).digest));
    b[4] = -5; /* a(0,1)'s real part is read */
    assert_false(same(da.digest, blas_digest_tri_herm('C', 'U', 2, b, 2, 16).digest));
    double ap[6], bp[6];
    fill(ap, 6, 1);
    memcpy(bp, ap, sizeof bp);
    bp[1] = 42;
    assert_true(same(blas_digest_packed('C', 'L', 'N', 2, ap, 16, 1).digest,
                     blas_digest_packed('C', 'L', 'N', 2, bp, 16, 1).digest));
    assert_false(same(blas_digest_packed('C', 'L', 'N', 2, ap, 16, 0).digest,
                      blas_digest_packed('C', 'L', 'N', 2, bp, 16, 0).digest));
}

static void test_band_reads_only_the_band_inside_the_matrix(void **state)
{
    /* 3 x 3, kl 1, ku 1, ld 3: band row r of column j is a[r + 3j]; row 0
     * of column 0 and row 2 of column 2 lie outside the matrix. */
    double a[9];
    fill(a, 9, 0);
    double logical[7] = { a[1], a[2], a[3], a[4], a[5], a[6], a[7] };
    struct blas_digest d = blas_digest_band('C', 3, 3, 1, 1, a, 3, 8);
    assert_int_equal(d.count, 7);
    assert_true(same(d.digest, packed(logical, 7)));
    assert_int_equal(blas_digest_band('C', 3, 3, 1, 1, a, 2, 8).count, 0);
}

static void test_band_row_major_is_the_band_of_the_transpose(void **state)
{
    double a[12];
    fill(a, 12, 0);
    assert_true(same(blas_digest_band('R', 2, 4, 0, 2, a, 3, 8).digest,
                     blas_digest_band('C', 4, 2, 2, 0, a, 3, 8).digest));
}

static void test_band_triangle_upper_and_lower_with_unit_diag(void **state)
{
    /* n 3, k 1, ld 2. Upper: column j holds rows j-1..j at band rows 0..1. */
    double a[6];
    fill(a, 6, 0);
    double upper[5] = { a[1], a[2], a[3], a[4], a[5] };
    assert_true(same(blas_digest_band_tri('C', 'U', 'N', 3, 1, a, 2, 8, 0).digest,
                     packed(upper, 5)));
    double upper_unit[2] = { a[2], a[4] };
    assert_true(same(blas_digest_band_tri('C', 'U', 'U', 3, 1, a, 2, 8, 0).digest,
                     packed(upper_unit, 2)));
    /* Lower: column j holds rows j..j+1 at band rows 0..1; a[5] is outside. */
    double lower[5] = { a[0], a[1], a[2], a[3], a[4] };
    assert_true(same(blas_digest_band_tri('C', 'L', 'N', 3, 1, a, 2, 8, 0).digest,
                     packed(lower, 5)));
    assert_true(same(blas_digest_band_tri('R', 'U', 'N', 3, 1, a, 2, 8, 0).digest,
                     packed(lower, 5)));
}

static void test_rotm_param_digests_the_entries_its_flag_uses(void **state)
{
    double p[5] = { -2, 11, 21, 12, 22 };
    assert_int_equal(blas_digest_rotm_param(p, 8).count, 1);
    p[0] = -1;
    assert_int_equal(blas_digest_rotm_param(p, 8).count, 5);
    p[0] = 0;
    double zero[3] = { 0, 21, 12 };
    assert_true(same(blas_digest_rotm_param(p, 8).digest, packed(zero, 3)));
    p[0] = 1;
    double one[3] = { 1, 11, 22 };
    assert_true(same(blas_digest_rotm_param(p, 8).digest, packed(one, 3)));
    float f[5] = { 1, 11, 21, 12, 22 }, fone[3] = { 1, 11, 22 };
    assert_true(same(blas_digest_rotm_param(f, 4).digest, digest_bytes(fone, sizeof fone)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cblas_enums_map_to_the_fortran_chars),
        cmocka_unit_test(test_cblas_enum_values_outside_the_standard_map_to_question_mark),
        cmocka_unit_test(test_fortran_chars_are_upper_cased_and_others_kept),
        cmocka_unit_test(test_complex_scalar_is_zero_only_when_both_parts_are_zero),
        cmocka_unit_test(test_digest_general_ignores_padding_beyond_rows),
        cmocka_unit_test(test_digest_general_same_elements_any_leading_dimension_digest_alike),
        cmocka_unit_test(test_digest_general_row_major_digests_rows_of_cols),
        cmocka_unit_test(test_digest_general_transposed_operand_digests_its_stored_shape),
        cmocka_unit_test(test_digest_general_row_major_equals_col_major_transpose_of_same_buffer),
        cmocka_unit_test(test_digest_general_never_reads_past_the_last_element),
        cmocka_unit_test(test_digest_general_empty_dimension_digests_nothing_and_counts_zero),
        cmocka_unit_test(test_digest_general_ld_shorter_than_a_run_digests_nothing),
        cmocka_unit_test(test_digest_general_invalid_layout_or_trans_digests_nothing),
        cmocka_unit_test(test_digest_vec_skips_elements_between_strides),
        cmocka_unit_test(test_digest_vec_negative_increment_starts_from_the_last_element),
        cmocka_unit_test(test_digest_vec_never_reads_past_the_last_element),
        cmocka_unit_test(test_digest_vec_zero_or_negative_length_digests_nothing),
        cmocka_unit_test(test_digest_tri_upper_col_major_ignores_the_lower_triangle),
        cmocka_unit_test(test_digest_tri_lower_col_major_reads_from_the_diagonal_down),
        cmocka_unit_test(test_digest_tri_unit_diag_leaves_the_diagonal_out),
        cmocka_unit_test(test_digest_tri_row_major_lower_matches_col_major_upper_of_same_buffer),
        cmocka_unit_test(test_digest_tri_never_reads_past_the_last_element),
        cmocka_unit_test(test_digest_tri_invalid_shape_digests_nothing),
        cmocka_unit_test(test_digest_value_is_one_element_of_its_size),
        cmocka_unit_test(test_rec_operand_records_digest_count_and_element_size),
        cmocka_unit_test(test_packed_upper_col_major_is_every_element_in_order),
        cmocka_unit_test(test_packed_digests_as_the_same_triangle_stored_full),
        cmocka_unit_test(test_hermitian_diagonal_imaginary_parts_are_not_read),
        cmocka_unit_test(test_band_reads_only_the_band_inside_the_matrix),
        cmocka_unit_test(test_band_row_major_is_the_band_of_the_transpose),
        cmocka_unit_test(test_band_triangle_upper_and_lower_with_unit_diag),
        cmocka_unit_test(test_rotm_param_digests_the_entries_its_flag_uses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
