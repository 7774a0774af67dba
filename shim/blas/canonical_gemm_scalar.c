/* The scalar path of the canonical GEMM: register tiles in plain C with
 * fma() from libm (a hardware FMA where the CPU has one, glibc's exact
 * software fma elsewhere), for any x86-64. It also holds the generic
 * packers every path uses. Its tiles are smaller than the vector paths'
 * on purpose: equal bits across paths then also show that the blocking
 * does not matter. The order is the contract of shim/blas/canonical.h.
 */
#include <emmintrin.h>
#include <math.h>
#include <string.h>

#include "blas/canonical_kernels.h"

/* ---- packing --------------------------------------------------------- */

/* One packer per element type: strips of r rows, kb columns each, rows
 * past `rows` zero (see canonical_kernels.h). The two common strides get
 * their own loops (rs == 1: the r values of a column are contiguous; cs ==
 * 1: a row is contiguous) so the compiler can keep them simple. */
#define DEFINE_PACK(name, T)                                                              \
    void name(int r, int64_t rows, int64_t kb, const void *xv, int64_t rs, int64_t cs,    \
              int flags, void *dstv)                                                      \
    {                                                                                     \
        const T *x = xv;                                                                  \
        T *dst = dstv;                                                                    \
        (void)flags;                                                                      \
        for (int64_t i0 = 0; i0 < rows; i0 += r) {                                        \
            int64_t h = rows - i0 < r ? rows - i0 : r;                                    \
            const T *xs = x + i0 * rs;                                                    \
            if (h < r)                                                                    \
                memset(dst, 0, (size_t)(kb * r) * sizeof(T));                             \
            if (rs == 1) {                                                                \
                for (int64_t p = 0; p < kb; p++)                                          \
                    memcpy(dst + p * r, xs + p * cs, (size_t)h * sizeof(T));              \
            } else if (cs == 1) {                                                         \
                for (int64_t i = 0; i < h; i++) {                                         \
                    const T *row = xs + i * rs;                                           \
                    for (int64_t p = 0; p < kb; p++)                                      \
                        dst[p * r + i] = row[p];                                          \
                }                                                                         \
            } else {                                                                      \
                for (int64_t p = 0; p < kb; p++)                                          \
                    for (int64_t i = 0; i < h; i++)                                       \
                        dst[p * r + i] = xs[i * rs + p * cs];                             \
            }                                                                             \
            dst += kb * r;                                                                \
        }                                                                                 \
    }

DEFINE_PACK(canon_pack_f32, float)
DEFINE_PACK(canon_pack_f64, double)

/* Complex (see canonical_kernels.h for the {P1, P2} / {Q1, Q2} layout):
 * strides count whole {re, im} elements. One element is one SSE2 load
 * and a shuffle or two (SSE2 is baseline x86-64); conjugation and the
 * negated part of P2 flip sign bits, as the unary minus does, so the
 * bits are those of the element-by-element copy these replaced, which
 * took 23% of a complex trmm (side 'R') in its per-element branches.
 * Each function is instantiated for the four (swap, conj) pairs. */
static inline __attribute__((always_inline)) void z_el_a(const double *e, double *d, int swap,
                                                         int conj)
{
    __m128d v = _mm_loadu_pd(e);
    if (conj)
        v = _mm_xor_pd(v, _mm_set_pd(-0.0, 0.0));
    /* P1 {re, re} or {re, im}; P2 {-im, im} or {-im, re} */
    const __m128d p1 = swap ? v : _mm_unpacklo_pd(v, v);
    const __m128d p2 = _mm_xor_pd(swap ? _mm_shuffle_pd(v, v, 1) : _mm_unpackhi_pd(v, v),
                                  _mm_set_pd(0.0, -0.0));
    _mm_storeu_pd(d, p1);
    _mm_storeu_pd(d + 2, p2);
}

static inline __attribute__((always_inline)) void z_el_b(const double *e, double *q1, double *q2,
                                                         int swap, int conj)
{
    __m128d v = _mm_loadu_pd(e);
    if (conj)
        v = _mm_xor_pd(v, _mm_set_pd(-0.0, 0.0));
    /* Q1 {re, im} or {re, re}; Q2 {im, re} or {im, im} */
    _mm_storeu_pd(q1, swap ? _mm_unpacklo_pd(v, v) : v);
    _mm_storeu_pd(q2, swap ? _mm_unpackhi_pd(v, v) : _mm_shuffle_pd(v, v, 1));
}

static inline __attribute__((always_inline)) void c_el_a(const float *e, float *d, int swap,
                                                         int conj)
{
    __m128 v = _mm_castpd_ps(_mm_load_sd((const double *)(const void *)e)); /* re, im, 0, 0 */
    if (conj)
        v = _mm_xor_ps(v, _mm_set_ps(0.0f, 0.0f, -0.0f, 0.0f));
    /* {re, re, -im, im} or {re, im, -im, re} */
    const __m128 w = swap ? _mm_shuffle_ps(v, v, _MM_SHUFFLE(0, 1, 1, 0))
                          : _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 1, 0, 0));
    _mm_storeu_ps(d, _mm_xor_ps(w, _mm_set_ps(0.0f, -0.0f, 0.0f, 0.0f)));
}

static inline __attribute__((always_inline)) void c_el_b(const float *e, float *q1, float *q2,
                                                         int swap, int conj)
{
    __m128 v = _mm_castpd_ps(_mm_load_sd((const double *)(const void *)e));
    if (conj)
        v = _mm_xor_ps(v, _mm_set_ps(0.0f, 0.0f, -0.0f, 0.0f));
    /* Q1 in the low half, Q2 in the high: {re, im, im, re} or {re, re, im, im} */
    const __m128 w = swap ? _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 1, 0, 0))
                          : _mm_shuffle_ps(v, v, _MM_SHUFFLE(0, 1, 1, 0));
    _mm_storel_pi((__m64 *)(void *)q1, w);
    _mm_storeh_pi((__m64 *)(void *)q2, w);
}

/* pack(..., is_b, swap, conj, dst) with the three flags as constants. */
#define BY_FLAGS(pack, is_b, flags, r, rows, kb, x, rs, cs, dst)                           \
    do {                                                                                   \
        const int swap_ = !!((flags) & CANON_SWAP), conj_ = !!((flags) & CANON_CONJ);      \
        if (swap_ && conj_)                                                                \
            pack(r, rows, kb, x, rs, cs, is_b, 1, 1, dst);                                 \
        else if (swap_)                                                                    \
            pack(r, rows, kb, x, rs, cs, is_b, 1, 0, dst);                                 \
        else if (conj_)                                                                    \
            pack(r, rows, kb, x, rs, cs, is_b, 0, 1, dst);                                 \
        else                                                                               \
            pack(r, rows, kb, x, rs, cs, is_b, 0, 0, dst);                                 \
    } while (0)

/* Strips of r rows (A's layout, or B's: Q1 then Q2 per p), rows past
 * `rows` zero. */
#define DEFINE_PACK_COMPLEX(name_a, name_b, T, pre)                                        \
    static inline __attribute__((always_inline)) void pre##_pack(                          \
        int r, int64_t rows, int64_t kb, const T *x, int64_t rs, int64_t cs, int is_b,     \
        int swap, int conj, T *dst)                                                        \
    {                                                                                      \
        for (int64_t i0 = 0; i0 < rows; i0 += r, dst += 4 * kb * r) {                      \
            int64_t h = rows - i0 < r ? rows - i0 : r;                                     \
            if (h < r)                                                                     \
                memset(dst, 0, (size_t)(4 * kb * r) * sizeof(T));                          \
            for (int64_t p = 0; p < kb; p++)                                               \
                for (int64_t i = 0; i < h; i++) {                                          \
                    const T *e = x + 2 * ((i0 + i) * rs + p * cs);                         \
                    T *q1 = dst + 4 * p * r + 2 * i;                                       \
                    if (is_b)                                                              \
                        pre##_el_b(e, q1, q1 + 2 * r, swap, conj);                         \
                    else                                                                   \
                        pre##_el_a(e, dst + 4 * (p * r + i), swap, conj);                  \
                }                                                                          \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    void name_a(int r, int64_t rows, int64_t kb, const void *xv, int64_t rs, int64_t cs,   \
                int flags, void *dstv)                                                     \
    {                                                                                      \
        BY_FLAGS(pre##_pack, 0, flags, r, rows, kb, xv, rs, cs, dstv);                     \
    }                                                                                      \
                                                                                           \
    void name_b(int r, int64_t rows, int64_t kb, const void *xv, int64_t rs, int64_t cs,   \
                int flags, void *dstv)                                                     \
    {                                                                                      \
        BY_FLAGS(pre##_pack, 1, flags, r, rows, kb, xv, rs, cs, dstv);                     \
    }

DEFINE_PACK_COMPLEX(canon_pack_c64_a, canon_pack_c64_b, float, c)
DEFINE_PACK_COMPLEX(canon_pack_c128_a, canon_pack_c128_b, double, z)

/* ---- real tiles ------------------------------------------------------ */

#define R_MR 4
#define R_NR 4

/* Tile and finish functions for a real type T with fma function FMA. */
#define DEFINE_REAL(pre, T, FMA)                                                          \
    static void pre##_tile(int64_t kb, const void *apv, const void *bpv, const void *acc, \
                           void *out)                                                     \
    {                                                                                     \
        const T *ap = apv, *bp = bpv;                                                     \
        T s[R_MR * R_NR];                                                                 \
        if (acc)                                                                          \
            memcpy(s, acc, sizeof s);                                                     \
        else                                                                              \
            for (int e = 0; e < R_MR * R_NR; e++)                                         \
                s[e] = 0;                                                                 \
        for (int64_t p = 0; p < kb; p++, ap += R_MR, bp += R_NR)                          \
            for (int i = 0; i < R_MR; i++)                                                \
                for (int j = 0; j < R_NR; j++)                                            \
                    s[i * R_NR + j] = FMA(ap[i], bp[j], s[i * R_NR + j]);                 \
        memcpy(out, s, sizeof s);                                                         \
    }                                                                                     \
                                                                                          \
    static void pre##_finish(int64_t rows, int64_t cols, const void *sv, void *cv,        \
                             int64_t ldc, const void *alphav, const void *betav)          \
    {                                                                                     \
        const T *s = sv;                                                                  \
        T *c = cv;                                                                        \
        T alpha = *(const T *)alphav, beta = *(const T *)betav;                           \
        for (int64_t i = 0; i < rows; i++)                                                \
            for (int64_t j = 0; j < cols; j++) {                                          \
                T *cij = c + i * ldc + j;                                                 \
                if (beta == 0) {                                                          \
                    *cij = alpha * s[i * R_NR + j];                                       \
                } else {                                                                  \
                    T t = beta * *cij;                                                    \
                    *cij = FMA(alpha, s[i * R_NR + j], t);                                \
                }                                                                         \
            }                                                                             \
    }                                                                                     \
                                                                                          \
    static void pre##_tile_c(int64_t kb, const void *ap, const void *bp, const void *acc, \
                             void *c, int64_t ldc, const void *alpha, const void *beta)   \
    {                                                                                     \
        T s[R_MR * R_NR];                                                                 \
        pre##_tile(kb, ap, bp, acc, s);                                                   \
        pre##_finish(R_MR, R_NR, s, c, ldc, alpha, beta);                                 \
    }

DEFINE_REAL(s, float, fmaf)
DEFINE_REAL(d, double, fma)

/* ---- complex tiles --------------------------------------------------- */

#define Z_MR 2
#define Z_NR 2

/* Complex tiles keep s as interleaved {re, im}: per p, each part takes
 * fma(P1, Q1) and then fma(P2, Q2) from the packed pairs. */
#define DEFINE_COMPLEX(pre, T, FMA)                                                       \
    static void pre##_tile(int64_t kb, const void *apv, const void *bpv, const void *acc, \
                           void *out)                                                     \
    {                                                                                     \
        const T *ap = apv, *bp = bpv;                                                     \
        T s[2 * Z_MR * Z_NR];                                                             \
        if (acc)                                                                          \
            memcpy(s, acc, sizeof s);                                                     \
        else                                                                              \
            for (int e = 0; e < 2 * Z_MR * Z_NR; e++)                                     \
                s[e] = 0;                                                                 \
        for (int64_t p = 0; p < kb; p++, ap += 4 * Z_MR, bp += 4 * Z_NR)                  \
            for (int i = 0; i < Z_MR; i++)                                                \
                for (int j = 0; j < Z_NR; j++) {                                          \
                    const T *pa = ap + 4 * i, *q1 = bp + 2 * j, *q2 = q1 + 2 * Z_NR;      \
                    T *e = s + 2 * (i * Z_NR + j);                                        \
                    e[0] = FMA(pa[0], q1[0], e[0]);                                       \
                    e[0] = FMA(pa[2], q2[0], e[0]);                                       \
                    e[1] = FMA(pa[1], q1[1], e[1]);                                       \
                    e[1] = FMA(pa[3], q2[1], e[1]);                                       \
                }                                                                         \
        memcpy(out, s, sizeof s);                                                         \
    }                                                                                     \
                                                                                          \
    static void pre##_finish(int64_t rows, int64_t cols, const void *sv, void *cv,        \
                             int64_t ldc, const void *alphav, const void *betav)          \
    {                                                                                     \
        const T *s = sv, *al = alphav, *be = betav;                                       \
        T *c = cv;                                                                        \
        int beta0 = be[0] == 0 && be[1] == 0;                                             \
        for (int64_t i = 0; i < rows; i++)                                                \
            for (int64_t j = 0; j < cols; j++) {                                          \
                const T *e = s + 2 * (i * Z_NR + j);                                      \
                T *cij = c + 2 * (i * ldc + j);                                           \
                T rr, ri;                                                                 \
                if (beta0) {                                                              \
                    rr = al[0] * e[0];                                                    \
                    ri = al[0] * e[1];                                                    \
                } else {                                                                  \
                    T tr = be[0] * cij[0];                                                \
                    T ti = be[0] * cij[1];                                                \
                    tr = FMA(-be[1], cij[1], tr);                                         \
                    ti = FMA(be[1], cij[0], ti);                                          \
                    rr = FMA(al[0], e[0], tr);                                            \
                    ri = FMA(al[0], e[1], ti);                                            \
                }                                                                         \
                cij[0] = FMA(-al[1], e[1], rr);                                           \
                cij[1] = FMA(al[1], e[0], ri);                                            \
            }                                                                             \
    }                                                                                     \
                                                                                          \
    static void pre##_tile_c(int64_t kb, const void *ap, const void *bp, const void *acc, \
                             void *c, int64_t ldc, const void *alpha, const void *beta)   \
    {                                                                                     \
        T s[2 * Z_MR * Z_NR];                                                             \
        pre##_tile(kb, ap, bp, acc, s);                                                   \
        pre##_finish(Z_MR, Z_NR, s, c, ldc, alpha, beta);                                 \
    }

DEFINE_COMPLEX(c, float, fmaf)
DEFINE_COMPLEX(z, double, fma)

#define KERNEL(pre, MR, NR, MC, KC, NC, T, PACKED, PACK_A, PACK_B)                        \
    {                                                                                     \
        .mr = MR, .nr = NR, .mc = MC, .kc = KC, .nc = NC, .elem = sizeof(T),              \
        .packed = PACKED * sizeof(T), .pack_a = PACK_A, .pack_b = PACK_B,                 \
        .tile = pre##_tile, .tile_c = pre##_tile_c, .finish = pre##_finish,               \
    }

typedef float complex_float[2];
typedef double complex_double[2];

const struct canon_isa_kernels canon_scalar_kernels = {
    .name = "scalar",
    .k = {
        [CANON_S] = KERNEL(s, R_MR, R_NR, 64, 256, 512, float, 1, canon_pack_f32,
                           canon_pack_f32),
        [CANON_D] = KERNEL(d, R_MR, R_NR, 64, 256, 512, double, 1, canon_pack_f64,
                           canon_pack_f64),
        [CANON_C] = KERNEL(c, Z_MR, Z_NR, 64, 256, 256, complex_float, 2, canon_pack_c64_a,
                           canon_pack_c64_b),
        [CANON_Z] = KERNEL(z, Z_MR, Z_NR, 64, 256, 256, complex_double, 2, canon_pack_c128_a,
                           canon_pack_c128_b),
    },
};
