/* Unit tests of the canonical level-1 BLAS (dot, nrm2, asum, axpy, scal, rot, rotm;
 * shim/blas/canonical_l1.c, canonical_chunks.c):
 * every routine's result equals, bit for bit, a slow obvious reference
 * written here, on canonical_ref.h's helpers, from the contract in
 * shim/blas/canonical.h (logical elements, the documented formulas, one
 * operation at a time), over a grid
 * of shapes, both layouts, every trans/uplo/side/diag, strides (negative
 * and zero where the BLAS allows them), padded leading dimensions and
 * alpha/beta in {0, 1, -1, other}; on every ISA path this CPU has, so the
 * paths also equal one another. Whole buffers are compared, padding
 * included, so a write outside the logical elements fails too. NaN results
 * compare equal to any NaN (the contract does not fix NaN payloads).
 */
#include "canonical_ref.h"

/* ---- level 1 ---------------------------------------------------------------- */

static const int64_t l1_sizes[] = {0,    1,    2,    7,    15,   16,   17,    31,    33,
                                   100,  257,  1000, 4500, 32767, 32768, 32769, 98305};
#define N_L1 (sizeof l1_sizes / sizeof l1_sizes[0])
static const int64_t l1_incs[] = {1, 2, -1, -3, 0};
#define N_INC (sizeof l1_incs / sizeof l1_incs[0])


static cx ref_dot(int t, int64_t n, const void *x, int64_t incx, const void *y, int64_t incy,
                  int conj)
{
    cx *lanes = ref_chunks(n);
    for (int64_t i = 0; i < n; i++) {
        cx xi = ld(t, x, vidx(n, incx, i));
        if (conj)
            xi = conj_(xi);
        *ref_lane(lanes, i) = cmac(t, *ref_lane(lanes, i), xi, ld(t, y, vidx(n, incy, i)));
    }
    return ref_finish(t, lanes, n);
}

static void lib_dot(int t, int conj, int64_t n, const void *x, int64_t incx, const void *y,
                    int64_t incy, void *r)
{
    int rc;
    switch (t) {
    case TS: rc = canon_sdot(n, x, incx, y, incy, r); break;
    case TD: rc = canon_ddot(n, x, incx, y, incy, r); break;
    case TC:
        rc = conj ? canon_cdotc(n, x, incx, y, incy, r) : canon_cdotu(n, x, incx, y, incy, r);
        break;
    default:
        rc = conj ? canon_zdotc(n, x, incx, y, incy, r) : canon_zdotu(n, x, incx, y, incy, r);
        break;
    }
    assert_int_equal(rc, 0);
}

static void dot_grid(void)
{
    for (int t = 0; t < NTYPES; t++)
        for (int conj = 0; conj <= cplx(t); conj++)
            for (size_t a = 0; a < N_L1; a++)
                for (size_t ix = 0; ix < N_INC; ix++)
                    for (size_t iy = 0; iy < N_INC; iy += 2) {
                        const int64_t n = l1_sizes[a], incx = l1_incs[ix], incy = l1_incs[iy];
                        void *x = rand_buf(t, vlen(n, incx)), *y = rand_buf(t, vlen(n, incy));
                        union result got = {{0, 0}}, want;
                        describe("%cdot%s n=%lld incx=%lld incy=%lld", tname[t], conj ? "c" : "",
                                 (long long)n, (long long)incx, (long long)incy);
                        lib_dot(t, conj, n, x, incx, y, incy, &got);
                        st(t, &want, 0, ref_dot(t, n, x, incx, y, incy, conj));
                        assert_same(t, &got, &want, 1);
                        free(x);
                        free(y);
                    }
}

static void test_dot_equals_the_lanes_and_tree_order(void **state)
{
    (void)state;
    on_every_isa(dot_grid);
}

/* The real type of t, for nrm2 and asum results. */
static int real_of(int t)
{
    return t == TC ? TS : t == TZ ? TD : t;
}

/* Real element r of the 2n (complex) or n reals of the vector. */
static double real_at(int t, int64_t n, const void *x, int64_t inc, int64_t r)
{
    const cx v = ld(t, x, vidx(n, inc, r / width(t)));
    return r % width(t) ? v.im : v.re;
}

static double ref_nrm2(int t, int64_t n, const void *x, int64_t inc)
{
    const int rt = real_of(t);
    const int64_t nr = n * width(t);
    double m = 0;
    int k = 0;
    if (n <= 0 || inc <= 0)
        return 0;
    cx *lane = ref_chunks(nr);
    if (isf(t)) { /* squares summed in double lanes, no scaling */
        for (int64_t r = 0; r < nr; r++) {
            const double v = real_at(t, n, x, inc, r);
            ref_lane(lane, r)->re = fma(v, v, ref_lane(lane, r)->re);
        }
        return (double)(float)sqrt(ref_finish(TD, lane, nr).re);
    }
    for (int64_t r = 0; r < nr; r++) {
        const double a = fabs(real_at(t, n, x, inc, r));
        if (a > m)
            m = a;
    }
    if (m != 0 && !isinf(m))
        frexp(m, &k);
    for (int64_t r = 0; r < nr; r++) {
        const double v = real_at(t, n, x, inc, r);
        const double s = isf(t) ? (double)ldexpf((float)v, -k) : ldexp(v, -k);
        ref_lane(lane, r)->re = rfma(rt, s, s, ref_lane(lane, r)->re);
    }
    const double sum = ref_finish(rt, lane, nr).re;
    return isf(t) ? (double)ldexpf(sqrtf((float)sum), k) : ldexp(sqrt(sum), k);
}

static double ref_asum(int t, int64_t n, const void *x, int64_t inc)
{
    const int rt = real_of(t);
    if (n <= 0 || inc <= 0)
        return 0;
    cx *lane = ref_chunks(n * width(t));
    for (int64_t r = 0; r < n * width(t); r++)
        ref_lane(lane, r)->re = radd(rt, ref_lane(lane, r)->re, fabs(real_at(t, n, x, inc, r)));
    return ref_finish(rt, lane, n * width(t)).re;
}

static void lib_nrm2(int t, int64_t n, const void *x, int64_t inc, void *r)
{
    int rc;
    switch (t) {
    case TS: rc = canon_snrm2(n, x, inc, r); break;
    case TD: rc = canon_dnrm2(n, x, inc, r); break;
    case TC: rc = canon_scnrm2(n, x, inc, r); break;
    default: rc = canon_dznrm2(n, x, inc, r); break;
    }
    assert_int_equal(rc, 0);
}

static void lib_asum(int t, int64_t n, const void *x, int64_t inc, void *r)
{
    int rc;
    switch (t) {
    case TS: rc = canon_sasum(n, x, inc, r); break;
    case TD: rc = canon_dasum(n, x, inc, r); break;
    case TC: rc = canon_scasum(n, x, inc, r); break;
    default: rc = canon_dzasum(n, x, inc, r); break;
    }
    assert_int_equal(rc, 0);
}

/* Scales the base elements of a buffer by 2^e (exactly: powers of two,
 * rounding only where the result is subnormal); variant 3 plants an Inf,
 * variant 4 a NaN, variant 5 mixes huge and tiny. */
static void shape_values(int t, void *x, int64_t n, int variant)
{
    const int64_t nb = n * width(t);
    /* huge reaches the scales whose 2^-k is subnormal, tiny the ones whose
     * 2^-k is not representable */
    const int huge = isf(t) ? 127 : 1023, tiny = isf(t) ? -135 : -1060;
    for (int64_t i = 0; i < nb; i++) {
        int e = variant == 1 ? huge : variant == 2 ? tiny : 0;
        if (variant == 5)
            e = i % 3 ? tiny : huge;
        if (isf(t))
            ((float *)x)[i] = ldexpf(((float *)x)[i], e);
        else
            ((double *)x)[i] = ldexp(((double *)x)[i], e);
    }
    if ((variant == 3 || variant == 4) && nb > 0) {
        const double v = variant == 3 ? INFINITY : NAN;
        if (isf(t))
            ((float *)x)[nb / 2] = (float)v;
        else
            ((double *)x)[nb / 2] = v;
    }
}

static void nrm2_asum_grid(void)
{
    for (int t = 0; t < NTYPES; t++)
        for (size_t a = 0; a < N_L1; a++)
            for (size_t ix = 0; ix < N_INC; ix++)
                for (int variant = 0; variant < 6; variant++) {
                    const int64_t n = l1_sizes[a], inc = l1_incs[ix];
                    const int rt = real_of(t);
                    void *x = rand_buf(t, vlen(n, inc));
                    union result got = {{0, 0}}, want = {{0, 0}};
                    shape_values(t, x, vlen(n, inc), variant);
                    describe("%c nrm2 n=%lld inc=%lld values=%d", tname[t], (long long)n,
                             (long long)inc, variant);
                    lib_nrm2(t, n, x, inc, &got);
                    st(rt, &want, 0, (cx){ref_nrm2(t, n, x, inc), 0});
                    assert_same(rt, &got, &want, 1);
                    describe("%c asum n=%lld inc=%lld values=%d", tname[t], (long long)n,
                             (long long)inc, variant);
                    lib_asum(t, n, x, inc, &got);
                    st(rt, &want, 0, (cx){ref_asum(t, n, x, inc), 0});
                    assert_same(rt, &got, &want, 1);
                    free(x);
                }
}

static void test_nrm2_and_asum_equal_the_scaled_lanes_order(void **state)
{
    (void)state;
    on_every_isa(nrm2_asum_grid);
}

/* Long reductions split their chunks among threads: every type, n at and
 * around the threshold (2^17 terms) and chunk boundaries, contiguous and
 * strided (a positive and a negative step), vectors on and off a
 * cache-line start, at 1 .. 8 threads. */
static void chunks_threads_grid(void)
{
    static const int64_t sizes[] = {131072, 262149, 300007};
    for (int t = 0; t < NTYPES; t++)
        for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++)
            for (int shape = 0; shape < 3; shape++) {
                const int rt = real_of(t), nconj = cplx(t) ? 2 : 1;
                const int64_t n = sizes[a], inc = shape == 2 ? 2 : 1, off = shape == 1;
                const int64_t incy = shape == 2 ? -1 : 1;
                const size_t es = tsize[t];
                char *bx = rand_buf(t, vlen(n, inc) + 1), *by = rand_buf(t, vlen(n, inc) + 1);
                const void *x = bx + off * es, *y = by + off * es;
                union result want[4] = {{{0, 0}}}, got;
                for (int conj = 0; conj < nconj; conj++)
                    st(t, &want[conj], 0, ref_dot(t, n, x, inc, y, incy, conj));
                st(rt, &want[2], 0, (cx){ref_asum(t, n, x, inc), 0});
                st(rt, &want[3], 0, (cx){ref_nrm2(t, n, x, inc), 0});
                for (int threads = 1; threads <= 8; threads++) {
                    canon_set_threads(threads);
                    for (int conj = 0; conj < nconj; conj++) {
                        describe("%cdot%s n=%lld inc=%lld offset=%lld threads=%d", tname[t],
                                 conj ? "c" : "", (long long)n, (long long)inc, (long long)off,
                                 threads);
                        lib_dot(t, conj, n, x, inc, y, incy, &got);
                        assert_same(t, &got, &want[conj], 1);
                    }
                    describe("%c asum/nrm2 n=%lld inc=%lld offset=%lld threads=%d", tname[t],
                             (long long)n, (long long)inc, (long long)off, threads);
                    lib_asum(t, n, x, inc, &got);
                    assert_same(rt, &got, &want[2], 1);
                    lib_nrm2(t, n, x, inc, &got);
                    assert_same(rt, &got, &want[3], 1);
                }
                canon_set_threads(1);
                free(bx);
                free(by);
            }
}

static void test_dot_nrm2_and_asum_same_bits_any_thread_count(void **state)
{
    (void)state;
    const uint64_t worker_parts = canon_pool_worker_parts();
    on_every_isa(chunks_threads_grid);
    /* the test proves something only if workers computed chunks */
    assert_true(canon_pool_worker_parts() > worker_parts);
}

static void lib_axpy(int t, int64_t n, cx alpha, const void *x, int64_t incx, void *y, int64_t incy)
{
    const struct sc a = sc_of(alpha);
    int rc;
    switch (t) {
    case TS: rc = canon_saxpy(n, a.f[0], x, incx, y, incy); break;
    case TD: rc = canon_daxpy(n, a.d[0], x, incx, y, incy); break;
    case TC: rc = canon_caxpy(n, a.f, x, incx, y, incy); break;
    default: rc = canon_zaxpy(n, a.d, x, incx, y, incy); break;
    }
    assert_int_equal(rc, 0);
}

static void axpy_grid(void)
{
    for (int t = 0; t < NTYPES; t++)
        for (size_t a = 0; a < N_L1; a++)
            for (size_t ix = 0; ix < N_INC; ix++)
                for (size_t iy = 0; iy < N_INC; iy++)
                    for (int w = 0; w < 5; w++) {
                        const int64_t n = l1_sizes[a], incx = l1_incs[ix], incy = l1_incs[iy];
                        const cx alpha = scalar(t, w);
                        if (n > 300 && (ix > 1 || iy > 1 || w > 1))
                            continue; /* long vectors: the unit and stride-2 cases */
                        void *x = rand_buf(t, vlen(n, incx)), *y = rand_buf(t, vlen(n, incy));
                        void *want = dup_buf(t, y, vlen(n, incy));
                        describe("%caxpy n=%lld incx=%lld incy=%lld alpha=%g%+gi", tname[t],
                                 (long long)n, (long long)incx, (long long)incy, alpha.re,
                                 alpha.im);
                        lib_axpy(t, n, alpha, x, incx, y, incy);
                        if (!is_zero(alpha))
                            for (int64_t i = 0; i < n; i++) {
                                const int64_t yi = vidx(n, incy, i);
                                st(t, want, yi,
                                   cmac(t, ld(t, want, yi), alpha, ld(t, x, vidx(n, incx, i))));
                            }
                        assert_same(t, y, want, vlen(n, incy));
                        free(x);
                        free(y);
                        free(want);
                    }
}

static void test_axpy_equals_one_fma_per_element(void **state)
{
    (void)state;
    on_every_isa(axpy_grid);
}

/* scal of type t; real_alpha: csscal/zdscal. */
static void lib_scal(int t, int real_alpha, int64_t n, cx alpha, void *x, int64_t inc)
{
    const struct sc a = sc_of(alpha);
    int rc;
    switch (t) {
    case TS: rc = canon_sscal(n, a.f[0], x, inc); break;
    case TD: rc = canon_dscal(n, a.d[0], x, inc); break;
    case TC: rc = real_alpha ? canon_csscal(n, a.f[0], x, inc) : canon_cscal(n, a.f, x, inc); break;
    default: rc = real_alpha ? canon_zdscal(n, a.d[0], x, inc) : canon_zscal(n, a.d, x, inc); break;
    }
    assert_int_equal(rc, 0);
}

static void scal_grid(void)
{
    for (int t = 0; t < NTYPES; t++)
        for (int real_alpha = 0; real_alpha <= cplx(t); real_alpha++)
            for (size_t a = 0; a < N_L1; a++)
                for (size_t ix = 0; ix < N_INC; ix++)
                    for (int w = 0; w < 5; w++) {
                        const int64_t n = l1_sizes[a], inc = l1_incs[ix];
                        cx alpha = scalar(t, w);
                        if (real_alpha)
                            alpha.im = 0;
                        void *x = rand_buf(t, vlen(n, inc)), *want = dup_buf(t, x, vlen(n, inc));
                        describe("%cscal%s n=%lld inc=%lld alpha=%g%+gi", tname[t],
                                 real_alpha ? " (real alpha)" : "", (long long)n, (long long)inc,
                                 alpha.re, alpha.im);
                        lib_scal(t, real_alpha, n, alpha, x, inc);
                        for (int64_t i = 0; inc > 0 && i < n; i++) {
                            cx v = ld(t, want, i * inc);
                            if (real_alpha) {
                                v.re = rmul(t, alpha.re, v.re);
                                v.im = rmul(t, alpha.re, v.im);
                            } else {
                                v = cmul(t, alpha, v);
                            }
                            st(t, want, i * inc, v);
                        }
                        assert_same(t, x, want, vlen(n, inc));
                        free(x);
                        free(want);
                    }
}

static void test_scal_equals_one_product_per_element(void **state)
{
    (void)state;
    on_every_isa(scal_grid);
}

/* Both vectors a rotation wrote equal what the reference made of their
 * copies; then all four are freed. */
static void same_pair_and_free(int t, void *x, void *wx, int64_t lx, void *y, void *wy,
                               int64_t ly)
{
    assert_same(t, x, wx, lx);
    assert_same(t, y, wy, ly);
    free(x);
    free(y);
    free(wx);
    free(wy);
}

/* rot of type t (complex: csrot, zdrot, a real c and s). */
static void lib_rot(int t, int64_t n, void *x, int64_t incx, void *y, int64_t incy, cx c, cx s)
{
    const struct sc cs = sc_of(c), ss = sc_of(s);
    int rc;
    switch (t) {
    case TS: rc = canon_srot(n, x, incx, y, incy, cs.f[0], ss.f[0]); break;
    case TD: rc = canon_drot(n, x, incx, y, incy, cs.d[0], ss.d[0]); break;
    case TC: rc = canon_csrot(n, x, incx, y, incy, cs.f[0], ss.f[0]); break;
    default: rc = canon_zdrot(n, x, incx, y, incy, cs.d[0], ss.d[0]); break;
    }
    assert_int_equal(rc, 0);
}

/* One real of the rotation, the contract's formula: products rounded,
 * then the sum or difference. */
static void ref_rot1(int t, double c, double s, double *x, double *y)
{
    const double xn = radd(t, rmul(t, c, *x), rmul(t, s, *y));
    *y = radd(t, rmul(t, c, *y), -rmul(t, s, *x));
    *x = xn;
}

static void rot_grid(void)
{
    for (int t = 0; t < NTYPES; t++)
        for (size_t a = 0; a < N_L1; a++)
            for (size_t ix = 0; ix < N_INC; ix++)
                for (size_t iy = 0; iy < N_INC; iy += 2)
                    for (int w = 0; w < 5; w++) {
                        const int64_t n = l1_sizes[a], incx = l1_incs[ix], incy = l1_incs[iy];
                        cx c = scalar(t, w), s = scalar(t, 4 - w);
                        c.im = s.im = 0;
                        const int64_t lx = vlen(n, incx), ly = vlen(n, incy);
                        void *x = rand_buf(t, lx), *y = rand_buf(t, ly);
                        void *wx = dup_buf(t, x, lx), *wy = dup_buf(t, y, ly);
                        describe("%crot n=%lld incx=%lld incy=%lld c=%g s=%g", tname[t],
                                 (long long)n, (long long)incx, (long long)incy, c.re, s.re);
                        lib_rot(t, n, x, incx, y, incy, c, s);
                        for (int64_t i = 0; i < n; i++) {
                            cx u = ld(t, wx, vidx(n, incx, i)), v = ld(t, wy, vidx(n, incy, i));
                            ref_rot1(t, c.re, s.re, &u.re, &v.re);
                            if (cplx(t))
                                ref_rot1(t, c.re, s.re, &u.im, &v.im);
                            st(t, wx, vidx(n, incx, i), u);
                            st(t, wy, vidx(n, incy, i), v);
                        }
                        same_pair_and_free(t, x, wx, lx, y, wy, ly);
                    }
}

static void test_rot_equals_the_reference_formula_unfused(void **state)
{
    (void)state;
    on_every_isa(rot_grid);
}

/* One element of rotm, the contract's formulas (param as the BLAS's). */
static void ref_rotm1(int t, const double *h, double *x, double *y)
{
    const double w = *x, z = *y;
    if (h[0] < 0) {
        *x = radd(t, rmul(t, w, h[1]), rmul(t, z, h[3]));
        *y = radd(t, rmul(t, w, h[2]), rmul(t, z, h[4]));
    } else if (h[0] == 0) {
        *x = radd(t, w, rmul(t, z, h[3]));
        *y = radd(t, rmul(t, w, h[2]), z);
    } else {
        *x = radd(t, rmul(t, w, h[1]), z);
        *y = radd(t, -w, rmul(t, h[4], z));
    }
}

static void rotm_grid(void)
{
    const double flags[] = { -2, -1, 0, 1, NAN };
    for (int t = TS; t <= TD; t++)
        for (size_t a = 0; a < N_L1; a++)
            for (size_t ix = 0; ix < N_INC; ix++)
                for (size_t iy = 0; iy < N_INC; iy += 2)
                    for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
                        const int64_t n = l1_sizes[a], incx = l1_incs[ix], incy = l1_incs[iy];
                        double h[5] = { flags[f] };
                        for (int k = 1; k < 5; k++)
                            h[k] = isf(t) ? (double)(float)uniform() : uniform();
                        float hf[5];
                        for (int k = 0; k < 5; k++)
                            hf[k] = (float)h[k];
                        const int64_t lx = vlen(n, incx), ly = vlen(n, incy);
                        void *x = rand_buf(t, lx), *y = rand_buf(t, ly);
                        void *wx = dup_buf(t, x, lx), *wy = dup_buf(t, y, ly);
                        describe("%crotm n=%lld incx=%lld incy=%lld flag=%g", tname[t],
                                 (long long)n, (long long)incx, (long long)incy, h[0]);
                        assert_int_equal(t == TS ? canon_srotm(n, x, incx, y, incy, hf)
                                                 : canon_drotm(n, x, incx, y, incy, h),
                                         0);
                        for (int64_t i = 0; h[0] != -2 && i < n; i++) {
                            cx u = ld(t, wx, vidx(n, incx, i)), v = ld(t, wy, vidx(n, incy, i));
                            ref_rotm1(t, h, &u.re, &v.re);
                            st(t, wx, vidx(n, incx, i), u);
                            st(t, wy, vidx(n, incy, i), v);
                        }
                        same_pair_and_free(t, x, wx, lx, y, wy, ly);
                    }
}

static void test_rotm_equals_the_reference_formulas_unfused(void **state)
{
    (void)state;
    on_every_isa(rotm_grid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dot_equals_the_lanes_and_tree_order),
        cmocka_unit_test(test_nrm2_and_asum_equal_the_scaled_lanes_order),
        cmocka_unit_test(test_dot_nrm2_and_asum_same_bits_any_thread_count),
        cmocka_unit_test(test_axpy_equals_one_fma_per_element),
        cmocka_unit_test(test_scal_equals_one_product_per_element),
        cmocka_unit_test(test_rot_equals_the_reference_formula_unfused),
        cmocka_unit_test(test_rotm_equals_the_reference_formulas_unfused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
