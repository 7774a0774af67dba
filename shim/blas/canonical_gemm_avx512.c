/* The AVX-512 path of the canonical GEMM: register tiles of 8 x 32
 * floats and 8 x 16 doubles (16 zmm accumulators, one lane per output
 * element), and 8 x 16 / 8 x 8 complex tiles. As on the AVX2 path
 * (canonical_gemm_avx2.c), each step broadcasts one element of A and
 * multiply-adds it into a row of accumulators with vfmadd (a*b + acc,
 * rounded once, the same as fma() per lane), so every output element sees
 * its products in increasing p exactly as the contract in
 * shim/blas/canonical.h says: the wider registers only hold more output
 * elements at once, never a second accumulator of one element, and the
 * bits are those of the scalar and AVX2 paths. Edge tiles use masked
 * loads and stores (masked-out lanes are never touched). Functions carry
 * target attributes (the file is built for baseline x86-64); the driver
 * calls them only where canon_cpu_has_avx512() (canonical_isa.c).
 */
#include <immintrin.h>
#include <string.h>

#include "blas/canonical_kernels.h"

#define AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")))
#define INLINE512                                                                         \
    static inline __attribute__((always_inline,                                           \
                                 target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")))

/* ---- packing -------------------------------------------------------------
 * The layout of canonical_kernels.h for strips of 8, 16 or 32 rows whose
 * rows or columns are contiguous; anything else goes to the generic
 * packers. Packing moves data, never arithmetic: no bit can change. */

/* Lanes 0 .. n-1 of a 16-lane (8-lane) mask, n clamped to 0 .. 16 (8). */
INLINE512 __mmask16 m16(int64_t n)
{
    return n <= 0 ? 0 : n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
}

INLINE512 __mmask8 m8(int64_t n)
{
    return n <= 0 ? 0 : n >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << n) - 1);
}

/* Columns contiguous (rs == 1): each group is h contiguous values. */
AVX512 static void s_pack_cols(int r, int h, int64_t kb, const float *x, int64_t cs, float *dst)
{
    for (int64_t p = 0; p < kb; p++, dst += r)
        for (int q = 0; q < r; q += 16)
            _mm512_mask_storeu_ps(dst + q, m16(r - q),
                                  _mm512_maskz_loadu_ps(m16(h - q), x + p * cs + q));
}

AVX512 static void d_pack_cols(int r, int h, int64_t kb, const double *x, int64_t cs, double *dst)
{
    for (int64_t p = 0; p < kb; p++, dst += r)
        for (int q = 0; q < r; q += 8)
            _mm512_storeu_pd(dst + q, _mm512_maskz_loadu_pd(m8(h - q), x + p * cs + q));
}

/* Rows contiguous (cs == 1): 8 rows x 8 columns at a time are loaded
 * (padding rows as zero) and transposed in registers. */
AVX512 static void s_pack_rows(int r, int h, int64_t kb, const float *x, int64_t rs, float *dst)
{
    int64_t p = 0;
    for (; p + 8 <= kb; p += 8) {
        for (int g = 0; g < r; g += 8) {
            __m256 v[8];
            for (int i = 0; i < 8; i++)
                v[i] = g + i < h ? _mm256_loadu_ps(x + (g + i) * rs + p) : _mm256_setzero_ps();
            __m256 t[8], u[8];
            for (int i = 0; i < 8; i += 2) {
                t[i] = _mm256_unpacklo_ps(v[i], v[i + 1]);
                t[i + 1] = _mm256_unpackhi_ps(v[i], v[i + 1]);
            }
            for (int i = 0; i < 8; i += 4) {
                u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
                u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
                u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
                u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
            }
            float *d = dst + p * r + g;
            for (int q = 0; q < 4; q++) {
                _mm256_storeu_ps(d + q * r, _mm256_permute2f128_ps(u[q], u[q + 4], 0x20));
                _mm256_storeu_ps(d + (q + 4) * r, _mm256_permute2f128_ps(u[q], u[q + 4], 0x31));
            }
        }
    }
    for (; p < kb; p++)
        for (int i = 0; i < r; i++)
            dst[p * r + i] = i < h ? x[i * rs + p] : 0.0f;
}

AVX512 static void d_pack_rows(int r, int h, int64_t kb, const double *x, int64_t rs, double *dst)
{
    int64_t p = 0;
    for (; p + 4 <= kb; p += 4) {
        for (int g = 0; g < r; g += 4) {
            __m256d v[4];
            for (int i = 0; i < 4; i++)
                v[i] = g + i < h ? _mm256_loadu_pd(x + (g + i) * rs + p) : _mm256_setzero_pd();
            __m256d t0 = _mm256_unpacklo_pd(v[0], v[1]), t1 = _mm256_unpackhi_pd(v[0], v[1]);
            __m256d t2 = _mm256_unpacklo_pd(v[2], v[3]), t3 = _mm256_unpackhi_pd(v[2], v[3]);
            double *d = dst + p * r + g;
            _mm256_storeu_pd(d, _mm256_permute2f128_pd(t0, t2, 0x20));
            _mm256_storeu_pd(d + r, _mm256_permute2f128_pd(t1, t3, 0x20));
            _mm256_storeu_pd(d + 2 * r, _mm256_permute2f128_pd(t0, t2, 0x31));
            _mm256_storeu_pd(d + 3 * r, _mm256_permute2f128_pd(t1, t3, 0x31));
        }
    }
    for (; p < kb; p++)
        for (int i = 0; i < r; i++)
            dst[p * r + i] = i < h ? x[i * rs + p] : 0.0;
}

#define DEFINE_PACK(name, T, rows_fn, cols_fn, generic)                                   \
    AVX512 static void name(int r, int64_t rows, int64_t kb, const void *xv, int64_t rs,  \
                            int64_t cs, int flags, void *dstv)                            \
    {                                                                                     \
        const T *x = xv;                                                                  \
        T *dst = dstv;                                                                    \
        if ((r != 8 && r != 16 && r != 32) || (rs != 1 && cs != 1)) {                     \
            generic(r, rows, kb, x, rs, cs, flags, dst);                                  \
            return;                                                                       \
        }                                                                                 \
        for (int64_t i0 = 0; i0 < rows; i0 += r, dst += kb * r) {                         \
            int h = rows - i0 < r ? (int)(rows - i0) : r;                                 \
            if (cs == 1)                                                                  \
                rows_fn(r, h, kb, x + i0 * rs, rs, dst);                                  \
            else                                                                          \
                cols_fn(r, h, kb, x + i0, cs, dst);                                       \
        }                                                                                 \
    }

DEFINE_PACK(s_pack, float, s_pack_rows, s_pack_cols, canon_pack_f32)
DEFINE_PACK(d_pack, double, d_pack_rows, d_pack_cols, canon_pack_f64)

/* ---- the tiles -------------------------------------------------------------
 * Every tile is 8 rows of two zmm accumulators, c<i>0 and c<i>1. */

#define MR 8
/* The intrinsic _mm512_<op>_<P> of the vector type in use. */
#define CAT3_(a, b, c) a##b##c
#define CAT3(a, b, c) CAT3_(a, b, c)
#define I(op) CAT3(_mm512_, op, CAT3(_, P, ))
#define ALL8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define DECL(V) V c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71

/* Real types: V the vector type, P the intrinsic suffix (ps/pd), L the
 * lanes per vector, NR = 2L. */
#define R_ZERO(i) c##i##0 = I(setzero)(); c##i##1 = I(setzero)();
#define R_LOAD(i)                                                                         \
    c##i##0 = I(load)(acc + (i) * 2 * L);                                         \
    c##i##1 = I(load)(acc + (i) * 2 * L + L);
#define R_STORE(i)                                                                        \
    I(store)(out + (i) * 2 * L, c##i##0);                                         \
    I(store)(out + (i) * 2 * L + L, c##i##1);
#define R_ROW(i)                                                                          \
    t = I(set1)(a[i]);                                                            \
    c##i##0 = I(fmadd)(t, b0, c##i##0);                                           \
    c##i##1 = I(fmadd)(t, b1, c##i##1);
#define R_STEP()                                                                          \
    do {                                                                                  \
        V t, b0 = I(load)(b), b1 = I(load)(b + L);                        \
        ALL8(R_ROW)                                                                       \
        a += MR;                                                                          \
        b += 2 * L;                                                                       \
    } while (0)
/* The accumulators, from acc (a tile) or zero; a and b walk the strips. */
#define ACC_INIT()                                                                        \
    const T *a = apv, *b = bpv;                                                           \
    DECL(V);                                                                              \
    if (accv) {                                                                           \
        const T *acc = accv;                                                              \
        ALL8(R_LOAD)                                                                      \
    } else {                                                                              \
        ALL8(R_ZERO)                                                                      \
    }

#define R_ACCUMULATE()                                                                    \
    ACC_INIT()                                                                            \
    for (; kb >= 4; kb -= 4) {                                                            \
        R_STEP();                                                                         \
        R_STEP();                                                                         \
        R_STEP();                                                                         \
        R_STEP();                                                                         \
    }                                                                                     \
    for (; kb > 0; kb--)                                                                  \
        R_STEP();

/* The contract's alpha/beta step on the first lanes of mask k:
 * beta == 0: C = alpha*s (C not read); else C = fma(alpha, s, beta*C). */
INLINE512 void s_apply(__m512 v, float *c, __mmask16 k, __m512 va, __m512 vb, int beta0)
{
    __m512 r = beta0 ? _mm512_mul_ps(va, v)
                     : _mm512_fmadd_ps(va, v, _mm512_mul_ps(vb, _mm512_maskz_loadu_ps(k, c)));
    _mm512_mask_storeu_ps(c, k, r);
}

INLINE512 void d_apply(__m512d v, double *c, __mmask8 k, __m512d va, __m512d vb, int beta0)
{
    __m512d r = beta0 ? _mm512_mul_pd(va, v)
                      : _mm512_fmadd_pd(va, v, _mm512_mul_pd(vb, _mm512_maskz_loadu_pd(k, c)));
    _mm512_mask_storeu_pd(c, k, r);
}

#define R_OUT(i)                                                                          \
    APPLY(c##i##0, c + (i) * ldc, FULL, va, vb, beta0);                                   \
    APPLY(c##i##1, c + (i) * ldc + L, FULL, va, vb, beta0);
#define PREFETCH_ROW(i) _mm_prefetch((const char *)(c + (i) * ldc), _MM_HINT_T0);

#define DEFINE_REAL(pre, MASK, SET1)                       \
    AVX512 static void pre##_tile(int64_t kb, const void *apv, const void *bpv,           \
                                  const void *accv, void *outv)                           \
    {                                                                                     \
        R_ACCUMULATE()                                                                    \
        T *out = outv;                                                                    \
        ALL8(R_STORE)                                                                     \
    }                                                                                     \
                                                                                          \
    AVX512 static void pre##_tile_c(int64_t kb, const void *apv, const void *bpv,         \
                                    const void *accv, void *cv, int64_t ldc,              \
                                    const void *alphav, const void *betav)                \
    {                                                                                     \
        T *c = cv;                                                                        \
        ALL8(PREFETCH_ROW)                                                                \
        R_ACCUMULATE()                                                                    \
        const T beta = *(const T *)betav;                                                 \
        const V va = SET1(*(const T *)alphav), vb = SET1(beta);                           \
        const int beta0 = beta == 0;                                                      \
        ALL8(R_OUT)                                                                       \
    }                                                                                     \
                                                                                          \
    AVX512 static void pre##_finish(int64_t rows, int64_t cols, const void *sv, void *cv, \
                                    int64_t ldc, const void *alphav, const void *betav)   \
    {                                                                                     \
        const T *s = sv;                                                                  \
        T *c = cv;                                                                        \
        const T beta = *(const T *)betav;                                                 \
        const V va = SET1(*(const T *)alphav), vb = SET1(beta);                           \
        for (int64_t i = 0; i < rows; i++, s += 2 * L, c += ldc) {                        \
            APPLY(I(load)(s), c, MASK(cols), va, vb, beta == 0);                  \
            APPLY(I(load)(s + L), c + L, MASK(cols - L), va, vb, beta == 0);      \
        }                                                                                 \
    }

#define T float
#define V __m512
#define P ps
#define L 16
#define FULL ((__mmask16)0xFFFF)
#define APPLY s_apply
DEFINE_REAL(s, m16, _mm512_set1_ps)
#undef T
#undef V
#undef P
#undef L
#undef FULL
#undef APPLY

#define T double
#define V __m512d
#define P pd
#define L 8
#define FULL ((__mmask8)0xFF)
#define APPLY d_apply
DEFINE_REAL(d, m8, _mm512_set1_pd)
#undef T
#undef V
#undef P
#undef L
#undef FULL
#undef APPLY

/* ---- complex ---------------------------------------------------------------
 * Accumulators hold interleaved {re, im} lanes (L/2 elements per vector,
 * NR = L elements per row); one p is two vfmadd per accumulator,
 * s = fma(P1, Q1, s) then s = fma(P2, Q2, s), with P1 and P2 broadcast
 * pairs from packed A and Q1, Q2 rows of pairs from packed B (the layout
 * of canonical_kernels.h, which puts the contract's terms, in its order,
 * into each lane). */

#define X_ROW1(i)                                                                         \
    t = BCAST(a + 4 * (i));                                                               \
    c##i##0 = I(fmadd)(t, b0, c##i##0);                                           \
    c##i##1 = I(fmadd)(t, b1, c##i##1);
#define X_ROW2(i)                                                                         \
    t = BCAST(a + 4 * (i) + 2);                                                           \
    c##i##0 = I(fmadd)(t, w0, c##i##0);                                           \
    c##i##1 = I(fmadd)(t, w1, c##i##1);
#define X_STEP()                                                                          \
    do {                                                                                  \
        V t, b0 = I(load)(b), b1 = I(load)(b + L);                        \
        V w0 = I(load)(b + 2 * L), w1 = I(load)(b + 3 * L);               \
        ALL8(X_ROW1)                                                                      \
        ALL8(X_ROW2)                                                                      \
        a += 4 * MR;                                                                      \
        b += 4 * L;                                                                       \
    } while (0)
#define X_ACCUMULATE()                                                                    \
    ACC_INIT()                                                                            \
    for (; kb >= 2; kb -= 2) {                                                            \
        X_STEP();                                                                         \
        X_STEP();                                                                         \
    }                                                                                     \
    if (kb > 0)                                                                           \
        X_STEP();

/* The contract's complex alpha/beta step on interleaved lanes, as the
 * AVX2 path's: ar = alpha.re everywhere, ax = {-alpha.im, alpha.im}
 * pairs (br, bx for beta), {x.im, x.re} from an in-lane swap. */
INLINE512 void c_apply(__m512 v, float *c, __mmask16 k, const __m512 *s4, int beta0)
{
    const __m512 ar = s4[0], ax = s4[1], br = s4[2], bx = s4[3];
    __m512 r;
    if (beta0) {
        r = _mm512_mul_ps(ar, v);
    } else {
        __m512 old = _mm512_maskz_loadu_ps(k, c);
        __m512 t = _mm512_mul_ps(br, old);
        t = _mm512_fmadd_ps(bx, _mm512_permute_ps(old, 0xB1), t);
        r = _mm512_fmadd_ps(ar, v, t);
    }
    r = _mm512_fmadd_ps(ax, _mm512_permute_ps(v, 0xB1), r);
    _mm512_mask_storeu_ps(c, k, r);
}

INLINE512 void z_apply(__m512d v, double *c, __mmask8 k, const __m512d *s4, int beta0)
{
    const __m512d ar = s4[0], ax = s4[1], br = s4[2], bx = s4[3];
    __m512d r;
    if (beta0) {
        r = _mm512_mul_pd(ar, v);
    } else {
        __m512d old = _mm512_maskz_loadu_pd(k, c);
        __m512d t = _mm512_mul_pd(br, old);
        t = _mm512_fmadd_pd(bx, _mm512_permute_pd(old, 0x55), t);
        r = _mm512_fmadd_pd(ar, v, t);
    }
    r = _mm512_fmadd_pd(ax, _mm512_permute_pd(v, 0x55), r);
    _mm512_mask_storeu_pd(c, k, r);
}

/* {alpha.re, {-alpha.im, alpha.im}, beta.re, {-beta.im, beta.im}}. */
INLINE512 void c_scalars(const float *al, const float *be, __m512 s4[4])
{
    const __m512 sign = _mm512_setr_ps(-1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1);
    s4[0] = _mm512_set1_ps(al[0]);
    s4[1] = _mm512_mul_ps(sign, _mm512_set1_ps(al[1]));
    s4[2] = _mm512_set1_ps(be[0]);
    s4[3] = _mm512_mul_ps(sign, _mm512_set1_ps(be[1]));
}

INLINE512 void z_scalars(const double *al, const double *be, __m512d s4[4])
{
    const __m512d sign = _mm512_setr_pd(-1, 1, -1, 1, -1, 1, -1, 1);
    s4[0] = _mm512_set1_pd(al[0]);
    s4[1] = _mm512_mul_pd(sign, _mm512_set1_pd(al[1]));
    s4[2] = _mm512_set1_pd(be[0]);
    s4[3] = _mm512_mul_pd(sign, _mm512_set1_pd(be[1]));
}

#define X_OUT(i)                                                                          \
    APPLY(c##i##0, c + 2 * (i) * ldc, FULL, s4, beta0);                                   \
    APPLY(c##i##1, c + 2 * (i) * ldc + L, FULL, s4, beta0);

#define DEFINE_COMPLEX(pre, MASK, SCALARS)                                                \
    AVX512 static void pre##_tile(int64_t kb, const void *apv, const void *bpv,           \
                                  const void *accv, void *outv)                           \
    {                                                                                     \
        X_ACCUMULATE()                                                                    \
        T *out = outv;                                                                    \
        ALL8(R_STORE)                                                                     \
    }                                                                                     \
                                                                                          \
    AVX512 static void pre##_tile_c(int64_t kb, const void *apv, const void *bpv,         \
                                    const void *accv, void *cv, int64_t ldc,              \
                                    const void *alphav, const void *betav)                \
    {                                                                                     \
        X_ACCUMULATE()                                                                    \
        T *c = cv;                                                                        \
        const T *be = betav;                                                              \
        V s4[4];                                                                          \
        SCALARS(alphav, be, s4);                                                          \
        const int beta0 = be[0] == 0 && be[1] == 0;                                       \
        ALL8(X_OUT)                                                                       \
    }                                                                                     \
                                                                                          \
    AVX512 static void pre##_finish(int64_t rows, int64_t cols, const void *sv, void *cv, \
                                    int64_t ldc, const void *alphav, const void *betav)   \
    {                                                                                     \
        const T *s = sv, *be = betav;                                                     \
        T *c = cv;                                                                        \
        V s4[4];                                                                          \
        SCALARS(alphav, be, s4);                                                          \
        const int beta0 = be[0] == 0 && be[1] == 0;                                       \
        for (int64_t i = 0; i < rows; i++, s += 2 * L, c += 2 * ldc) {                    \
            APPLY(I(load)(s), c, MASK(2 * cols), s4, beta0);                      \
            APPLY(I(load)(s + L), c + L, MASK(2 * cols - L), s4, beta0);          \
        }                                                                                 \
    }

#define T float
#define V __m512
#define P ps
#define L 16
#define FULL ((__mmask16)0xFFFF)
#define APPLY c_apply
#define BCAST(p) _mm512_castpd_ps(_mm512_set1_pd(*(const double *)(const void *)(p)))
DEFINE_COMPLEX(c, m16, c_scalars)
#undef T
#undef V
#undef P
#undef L
#undef FULL
#undef APPLY
#undef BCAST

#define T double
#define V __m512d
#define P pd
#define L 8
#define FULL ((__mmask8)0xFF)
#define APPLY z_apply
#define BCAST(p) _mm512_broadcast_f64x2(_mm_loadu_pd(p))
DEFINE_COMPLEX(z, m8, z_scalars)
#undef T
#undef V
#undef P
#undef L
#undef FULL
#undef APPLY
#undef BCAST

#define KERNEL(pre, NR, MC, KC, NC, ELEM, PACKED, PACK_A, PACK_B)                         \
    {                                                                                     \
        .mr = MR, .nr = NR, .mc = MC, .kc = KC, .nc = NC, .elem = ELEM, .packed = PACKED, \
        .pack_a = PACK_A, .pack_b = PACK_B, .tile = pre##_tile, .tile_c = pre##_tile_c,   \
        .finish = pre##_finish,                                                           \
    }

/* Blocking: a kc x nr strip of packed B (32 KiB for s and d) stays in the
 * 48 KiB L1 of this machine's cores, the mc x kc block of packed A in L2;
 * measured on AMD EPYC (Zen 5), docs/benchmarks.md. z takes a short kc
 * (a strip of A and one of B, 8 KiB each, where kc 128 overflowed L1 with
 * 32 + 32 KiB) and mc 256, so that the packed B panel, far larger than
 * L2, is streamed a quarter as often (zgemm n = 1024 +10 to +18%). */
const struct canon_isa_kernels canon_avx512_kernels = {
    .name = "avx512",
    .k = {
        [CANON_S] = KERNEL(s, 32, 144, 256, 512, 4, 4, s_pack, s_pack),
        [CANON_D] = KERNEL(d, 16, 144, 256, 512, 8, 8, d_pack, d_pack),
        [CANON_C] = KERNEL(c, 16, 64, 128, 512, 8, 16, canon_pack_c64_a, canon_pack_c64_b),
        [CANON_Z] = KERNEL(z, 8, 256, 32, 512, 16, 32, canon_pack_c128_a, canon_pack_c128_b),
    },
};
