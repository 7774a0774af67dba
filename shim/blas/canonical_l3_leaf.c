/* The diagonal-block kernels of the canonical trmm and trsm
 * (canonical_l3_tri.c is their driver): the part of each element's chain
 * that lies inside a block of at most CANON_LEAF_NB positions, on a tile
 * of CANON_LEAF_BYTES of lanes per position. The plain-C kernels of
 * canonical_l3_leaf.inc are built three times, for baseline x86-64 (fma()
 * from libm), for AVX2 + FMA and for AVX-512 (target attributes; the file
 * is built for baseline x86-64 like every other), and the table of the
 * canonical GEMM's instruction-set path is used (canon_isa(), so
 * DETSHIM_ISA reaches it too). Every build performs the same operations
 * in the same order on each lane, so they give the same bits.
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

struct leaf_table {
    void (*solve[CANON_NTYPES])(const struct canon_leaf *L, void *t);
    void (*mul[CANON_NTYPES])(const struct canon_leaf *L, const void *t, void *o);
};

#define LEAF_CAT2(a, b) a##b
#define LEAF_CAT(a, b) LEAF_CAT2(a, b)
#define LEAF_TABLE2(pre)                                                                      \
    static const struct leaf_table pre##_table = {                                            \
        {pre##_s_solve, pre##_d_solve, pre##_s_csolve, pre##_d_csolve},                       \
        {pre##_s_mul, pre##_d_mul, pre##_s_cmul, pre##_d_cmul},                               \
    };
#define LEAF_TABLE(pre) LEAF_TABLE2(pre)

/* Baseline x86-64. */
#define LEAF_FN
#define LEAF_PRE base
#define LEAF_AVX 0
#include "canonical_l3_leaf_set.inc"
#undef LEAF_FN
#undef LEAF_PRE
#undef LEAF_AVX

/* AVX2 + FMA. */
#define LEAF_FN __attribute__((target("avx2,fma")))
#define LEAF_PRE avx2
#define LEAF_AVX 1
#include "canonical_l3_leaf_set.inc"
#undef LEAF_FN
#undef LEAF_PRE
#undef LEAF_AVX

/* AVX-512. */
#define LEAF_FN __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")))
#define LEAF_PRE avx512
#define LEAF_AVX 1
#include "canonical_l3_leaf_set.inc"
#undef LEAF_FN
#undef LEAF_PRE
#undef LEAF_AVX

/* The table of the GEMM family's path. */
static const struct leaf_table *table(void)
{
    const char *isa = canon_isa();
    return strcmp(isa, "avx512") == 0 ? &avx512_table
           : strcmp(isa, "avx2") == 0 ? &avx2_table
                                      : &base_table;
}

void canon_leaf_solve(const struct canon_leaf *L, void *t)
{
    table()->solve[L->t](L, t);
}

void canon_leaf_mul(const struct canon_leaf *L, const void *t, void *o)
{
    table()->mul[L->t](L, t, o);
}

/* ---- moving a real tile across B's rows (side 'L') ------------------------
 * Moves only, no arithmetic: any instruction set gives the same bits, so
 * these use AVX2 wherever the CPU has it, whatever the path. Blocks of 8
 * positions x 8 lanes (float) or 4 x 4 (double) are transposed in
 * registers; the edges go one element at a time. */

/* 8 x 8 floats: r[i] holds row i; afterwards r[i] holds column i. */
__attribute__((target("avx2"))) static inline void tr8(__m256 r[8])
{
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int q = 0; q < 4; q++) {
        r[q] = _mm256_permute2f128_ps(u[q], u[q + 4], 0x20);
        r[q + 4] = _mm256_permute2f128_ps(u[q], u[q + 4], 0x31);
    }
}

__attribute__((target("avx2"))) static inline void tr4(__m256d r[4])
{
    const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

#define TILE_T(name, T, V, W, LOAD, STORE, TR, REV)                                             \
    __attribute__((target("avx2"))) static void name(int nb, int64_t nl, T *m, int64_t ps,     \
                                                     int64_t ls, T *tile, int in)               \
    {                                                                                           \
        const int64_t nlt = CANON_LEAF_BYTES / (int64_t)sizeof(T);                              \
        const int cb = nb / W * W;                                                              \
        const int64_t lb = nl / W * W;                                                          \
        for (int64_t l0 = 0; l0 < lb; l0 += W)                                                  \
            for (int c0 = 0; c0 < cb; c0 += W) {                                                \
                /* the W positions c0.. of lane l0+i start at m0 + i*ls */                      \
                T *m0 = m + (ps < 0 ? (c0 + W - 1) * ps : c0 * ps) + l0 * ls;                   \
                V r[W];                                                                         \
                if (in) {                                                                       \
                    for (int i = 0; i < W; i++)                                                 \
                        r[i] = ps < 0 ? REV(LOAD(m0 + i * ls)) : LOAD(m0 + i * ls);             \
                    TR(r);                                                                      \
                    for (int i = 0; i < W; i++)                                                 \
                        STORE(tile + (c0 + i) * nlt + l0, r[i]);                                \
                } else {                                                                        \
                    for (int i = 0; i < W; i++)                                                 \
                        r[i] = LOAD(tile + (c0 + i) * nlt + l0);                                \
                    TR(r);                                                                      \
                    for (int i = 0; i < W; i++)                                                 \
                        STORE(m0 + i * ls, ps < 0 ? REV(r[i]) : r[i]);                          \
                }                                                                               \
            }                                                                                   \
        for (int64_t l = 0; l < nl; l++)                                                        \
            for (int c = l < lb ? cb : 0; c < nb; c++) {                                        \
                T *e = m + c * ps + l * ls, *x = tile + c * nlt + l;                            \
                if (in)                                                                         \
                    *x = *e;                                                                    \
                else                                                                            \
                    *e = *x;                                                                    \
            }                                                                                   \
    }

#define REV8(v) _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0))
#define REV4(v) _mm256_permute4x64_pd(v, 0x1B)
TILE_T(tile_s, float, __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, tr8, REV8)
TILE_T(tile_d, double, __m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd, tr4, REV4)

int canon_leaf_tile_rows(enum canon_type t, int nb, int64_t nl, void *m, int64_t ps, int64_t ls,
                         void *tile, int in)
{
    if ((t != CANON_S && t != CANON_D) || (ps != 1 && ps != -1) ||
        !__builtin_cpu_supports("avx2"))
        return -1;
    if (t == CANON_S)
        tile_s(nb, nl, m, ps, ls, tile, in);
    else
        tile_d(nb, nl, m, ps, ls, tile, in);
    return 0;
}
