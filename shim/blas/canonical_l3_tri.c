/* trmm and trsm on the canonical GEMM core, in the contract's order
 * (shim/blas/canonical.h): every element's chain runs in pieces, each
 * piece either one GEMM that continues the sums (canon_gemm_ops: its
 * tiles, ISA paths and threads) or a diagonal-block kernel
 * (canonical_l3_leaf.c) on blocks of at most CANON_LEAF_NB positions.
 * A position is a row of B (side 'L') or a column (side 'R'); the other
 * dimension's elements, the lanes, are independent of one another.
 *
 * trsm works on positions in solving order (forward, or from the end for
 * a backward solve), which is also each chain's order: S(p0, p1) solves
 * the first half, adds the half's products to the second half's sums in
 * B with one GEMM, then solves the second half. trmm keeps B's own order:
 * where the diagonal term comes first in each chain (side 'L' upper,
 * side 'R' lower) D(p0, p1) does its first half, continues that half's
 * sums with the second half's old values, then does the second half,
 * all in B; where it comes last (side 'L' lower, side 'R' upper), B is
 * done in blocks of NBL positions from the end, whose sums start in a
 * workspace W from one GEMM over the old positions before the block and
 * go on by the same halving. With threads, the lanes are split among
 * them and each runs the whole call on its own (canon_l3_tri_gemm). The
 * halving points, NBL, the GEMM calls' sizes and the lane split change no
 * bit: every chain is continued exactly, in its order, on one thread.
 */
#include <stdatomic.h>
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* Out and in positions of one GEMM call, and trmm's block of sums in W. */
#define MCH 1024
#define KCH 512
#define NBL 512
/* trmm, diagonal last: lanes done at a time, so W stays bounded. */
#define LCH 1024
/* The most workspace a call split by lanes takes, all parts together. */
#define SPLIT_BYTES ((size_t)64 << 20)
/* A leaf's copy of op(A): nb x nb coefficients and nb diagonal elements
 * of up to 16 bytes. In the call's workspace, not on the stack: 66 KiB at
 * CANON_LEAF_NB = 64, too much for a caller's thread of a small stack. */
#define LEAF_A_BYTES ((size_t)(CANON_LEAF_NB * CANON_LEAF_NB + CANON_LEAF_NB) * 16)
/* A leaf kernel's work (products) from which its lanes go to the pool. */
#define LEAF_PAR_MIN ((int64_t)1 << 17)

struct tri_job {
    enum canon_type t;
    size_t size;
    int cplx, solve, left, rev;
    int last;   /* trmm with the diagonal term last in each chain */
    int serial; /* the call is one part of a lane split: no threads inside */
    const struct canon_blas_tri *tri;
    int64_t dim, other;
    int64_t xc, xq; /* op(A) steps of an output's and an input's index (side) */
    const char *a;
    char *b0;       /* B at position 0, lane 0 */
    int64_t ps, ls; /* B's steps of a position and of a lane */
    const void *alpha;
    char *w;        /* trmm: NBL positions x other lanes of sums */
    unsigned char *leaf_a; /* LEAF_A_BYTES: a leaf's copy of op(A), coef then diag */
    int64_t wps, wls, w0; /* W's steps; W's first position */
};

static char *el(const void *x, int64_t i, size_t size)
{
    return (char *)x + i * (int64_t)size;
}

/* The index in B and op(A) of position p. */
static int64_t orig(const struct tri_job *J, int64_t p)
{
    return J->rev ? J->dim - 1 - p : p;
}

/* dst(c, q) = op(A) element of output index oc0 + c*dc and input index
 * oq0 + q*dq (original indices), conjugated as op says and negated for
 * trsm, at dst + c*sc + q*sq elements, for q in [qlo(c), qhi(c)):
 * qlo = q0 + c*lo_step ... (a rectangle when both steps are 0). */
struct copy_shape {
    int64_t oc0, dc, oq0, dq, nc;
    int64_t sc, sq;
    int64_t q0, q1;   /* q range of row c: [q0 + c*lo, q1 + c*hi) */
    int lo, hi;
};

/* Elements c (rows), q0 .. q1-1 of one run: walks source and destination
 * by their steps. */
#define COPY_RUN(T, NEG_RE, NEG_IM, c, q0, q1)                                                  \
    do {                                                                                        \
        const T *e = src + w * ((S->oc0 + (c) * S->dc) * J->xc + (S->oq0 + (q0) * S->dq) * J->xq); \
        T *o = d + w * ((c) * S->sc + (q0) * S->sq);                                            \
        const int64_t es = w * S->dq * J->xq, os = w * S->sq;                                   \
        for (int64_t q = (q0); q < (q1); q++, e += es, o += os) {                               \
            o[0] = NEG_RE ? -e[0] : e[0];                                                       \
            if (w == 2)                                                                         \
                o[1] = NEG_IM ? -e[1] : e[1];                                                   \
        }                                                                                       \
    } while (0)

/* The same along c for one q. */
#define COPY_COL(T, NEG_RE, NEG_IM, q, c0, c1)                                                  \
    do {                                                                                        \
        const T *e = src + w * ((S->oc0 + (c0) * S->dc) * J->xc + (S->oq0 + (q) * S->dq) * J->xq); \
        T *o = d + w * ((c0) * S->sc + (q) * S->sq);                                            \
        const int64_t es = w * S->dc * J->xc, os = w * S->sc;                                   \
        for (int64_t c = (c0); c < (c1); c++, e += es, o += os) {                               \
            o[0] = NEG_RE ? -e[0] : e[0];                                                       \
            if (w == 2)                                                                         \
                o[1] = NEG_IM ? -e[1] : e[1];                                                   \
        }                                                                                       \
    } while (0)

/* A rectangle's copy (update() lays it out with its runs along op(A)'s
 * contiguous dimension) is one sequential read and one sequential write
 * per run. (Blocks of 16 x 16 into a fixed layout, a transpose for side
 * 'R', walked op(A) a page apart per element there: the copy was 17-27%
 * of a strsm side 'R', n = 1024, and 8% after.) */
#define COPY_LOOP(T, NEG_RE, NEG_IM)                                                            \
    do {                                                                                        \
        T *d = dst;                                                                             \
        const T *src = (const T *)J->a;                                                         \
        const int64_t w = J->cplx ? 2 : 1;                                                      \
        if (!S->lo && !S->hi) {                                                                 \
            if (J->xc == 1 || J->xc == -1)                                                      \
                for (int64_t q = S->q0; q < S->q1; q++)                                         \
                    COPY_COL(T, NEG_RE, NEG_IM, q, 0, S->nc);                                   \
            else                                                                                \
                for (int64_t c = 0; c < S->nc; c++)                                             \
                    COPY_RUN(T, NEG_RE, NEG_IM, c, S->q0, S->q1);                               \
            break;                                                                              \
        }                                                                                       \
        for (int64_t c = 0; c < S->nc; c++)                                                     \
            COPY_RUN(T, NEG_RE, NEG_IM, c, S->q0 + c * S->lo, S->q1 + c * S->hi);               \
    } while (0)

static void copy_a(const struct tri_job *J, const struct copy_shape *S, void *dst)
{
    const int nr = J->solve, ni = J->solve != J->tri->conj;
    const int single = J->t == CANON_S || J->t == CANON_C;
    if (single && nr && ni)
        COPY_LOOP(float, 1, 1);
    else if (single && nr)
        COPY_LOOP(float, 1, 0);
    else if (single && ni)
        COPY_LOOP(float, 0, 1);
    else if (single)
        COPY_LOOP(float, 0, 0);
    else if (nr && ni)
        COPY_LOOP(double, 1, 1);
    else if (nr)
        COPY_LOOP(double, 1, 0);
    else if (ni)
        COPY_LOOP(double, 0, 1);
    else
        COPY_LOOP(double, 0, 0);
}

/* The sums of out positions [o0, o0+no) += their products with the
 * values of in positions [i0, i0+ni) in increasing position, as GEMM
 * calls: C is where the lowest original index of the out positions has
 * its lane 0 (ld ldc), the inputs are B's. alpha: the last call stores
 * CMUL(alpha, s). Returns 0 or -2. */
static int update(const struct tri_job *J, int64_t o0, int64_t no, int64_t i0, int64_t ni,
                  char *c, int64_t ldc, int c_rows, const void *alpha)
{
    /* out rows in original order: row r is original index lo + r */
    const int64_t lo = orig(J, J->rev ? o0 + no - 1 : o0), d = J->rev ? -1 : 1;
    const int flags = (c_rows ? CANON_OPS_ROWS : 0) | (J->serial ? CANON_OPS_SERIAL : 0);
    for (int64_t r0 = 0; r0 < no; r0 += MCH) {
        const int64_t nr = no - r0 < MCH ? no - r0 : MCH;
        char *cr = el(c, r0 * (J->left != c_rows ? 1 : ldc), J->size);
        for (int64_t k0 = 0; k0 < ni; k0 += KCH) {
            const int64_t nk = ni - k0 < KCH ? ni - k0 : KCH;
            /* op(A) block (r, k), the A operand (side 'L') or the B
             * operand (side 'R'), straight from A: the GEMM's packers
             * conjugate it and, for trsm, whose products subtract,
             * negate it (a negated copy first was 8% of a strsm). */
            struct canon_gemm_opnd ac = {el(J->a, (lo + r0) * J->xc + orig(J, i0 + k0) * J->xq,
                                            J->size),
                                         J->xc, d * J->xq, J->tri->conj, J->solve, 0};
            if (!J->left) { /* the B operand: (k, r) */
                const int64_t rs = ac.rs;
                ac.rs = ac.cs;
                ac.cs = rs;
            }
            /* the inputs: (k, lane) (side 'L') or (lane, k) (side 'R') */
            const char *x = el(J->b0, (i0 + k0) * J->ps, J->size);
            const struct canon_gemm_opnd xo =
                J->left ? (struct canon_gemm_opnd){x, J->ps, J->ls, 0, 0, 0}
                        : (struct canon_gemm_opnd){x, J->ls, J->ps, 0, 0, 0};
            const void *al = k0 + nk == ni ? alpha : NULL;
            const int rc =
                J->left ? canon_gemm_ops(J->t, nr, J->other, nk, &ac, &xo, al, cr, ldc, flags)
                        : canon_gemm_ops(J->t, J->other, nr, nk, &xo, &ac, al, cr, ldc, flags);
            if (rc != 0)
                return -2;
        }
    }
    return 0;
}

/* Where position p's sums live when the target is B, or W. */
static char *b_at(const struct tri_job *J, int64_t o0, int64_t no)
{
    return el(J->b0, (J->rev ? o0 + no - 1 : o0) * J->ps, J->size);
}

static char *w_at(const struct tri_job *J, int64_t p)
{
    return el(J->w, (p - J->w0) * J->wps, J->size);
}

static int64_t b_ld(const struct tri_job *J)
{
    return J->left ? J->ls : J->ps < 0 ? -J->ps : J->ps;
}

/* ---- the leaves ---------------------------------------------------- */

/* Moves nb positions x nl lanes between a matrix (position step ps, lane
 * step ls elements) and a tile (in = 1: into the tile, lanes past nl
 * zero), the loop along the matrix's contiguous dimension innermost. */
#define TILE_MOVE(T, W, DST, SRC)                                                               \
    do {                                                                                        \
        (DST)[0] = (SRC)[0];                                                                    \
        if (W == 2)                                                                             \
            (DST)[W == 2 ? (in ? nlt : 1) : 0] = (SRC)[W == 2 ? (in ? 1 : nlt) : 0];            \
    } while (0)
#define TILE_LOOP(T, W)                                                                         \
    do {                                                                                        \
        const int64_t nlt = CANON_LEAF_BYTES / (W * (int64_t)sizeof(T));                        \
        T *tl = (T *)tile, *mm = (T *)m;                                                        \
        if (ls == 1 && in)                                                                      \
            for (int64_t c = 0; c < nb; c++)                                                    \
                for (int64_t l = 0; l < nl; l++)                                                \
                    TILE_MOVE(T, W, tl + c * W * nlt + l, mm + W * (c * ps + l));               \
        else if (ls == 1)                                                                       \
            for (int64_t c = 0; c < nb; c++)                                                    \
                for (int64_t l = 0; l < nl; l++)                                                \
                    TILE_MOVE(T, W, mm + W * (c * ps + l), tl + c * W * nlt + l);               \
        else if (in)                                                                            \
            for (int64_t l = 0; l < nl; l++)                                                    \
                for (int64_t c = 0; c < nb; c++)                                                \
                    TILE_MOVE(T, W, tl + c * W * nlt + l, mm + W * (c * ps + l * ls));          \
        else                                                                                    \
            for (int64_t l = 0; l < nl; l++)                                                    \
                for (int64_t c = 0; c < nb; c++)                                                \
                    TILE_MOVE(T, W, mm + W * (c * ps + l * ls), tl + c * W * nlt + l);          \
    } while (0)

static void tile_io(const struct tri_job *J, int nb, int64_t nl, char *m, int64_t ps, int64_t ls,
                    unsigned char *tile, int in)
{
    if (in && nl * (int64_t)J->size < CANON_LEAF_BYTES)
        memset(tile, 0, (size_t)nb * CANON_LEAF_BYTES);
    if (ls != 1 && canon_leaf_tile_rows(J->t, nb, nl, m, ps, ls, tile, in) == 0)
        return;
    if (ls == 1 && !J->cplx) { /* a position's lanes are one run both sides */
        for (int c = 0; c < nb; c++) {
            char *mc = el(m, c * ps, J->size);
            unsigned char *tc = tile + (size_t)c * CANON_LEAF_BYTES;
            memcpy(in ? (void *)tc : mc, in ? (void *)mc : tc, (size_t)nl * J->size);
        }
        return;
    }
    switch (J->t) {
    case CANON_S: TILE_LOOP(float, 1); break;
    case CANON_D: TILE_LOOP(double, 1); break;
    case CANON_C: TILE_LOOP(float, 2); break;
    default: TILE_LOOP(double, 2); break;
    }
}

/* One leaf: positions p0 .. p0+nb-1, its coefficients and diagonal. */
struct leaf_run {
    const struct tri_job *J;
    struct canon_leaf L;
    int64_t p0;
    int nb;
    char *init; /* trmm: the sums' starting values (W), or NULL: +0 */
    int64_t lanes_per;
};

static void leaf_part(void *arg, int part, int nparts, void *ws)
{
    const struct leaf_run *R = arg;
    const struct tri_job *J = R->J;
    const int64_t chunks = (J->other + R->lanes_per - 1) / R->lanes_per;
    unsigned char *t = ws, *o = t + (size_t)CANON_LEAF_NB * CANON_LEAF_BYTES;
    char *b = b_at(J, R->p0, 1); /* position p0 (B's step ps walks the positions) */
    for (int64_t ch = chunks * part / nparts; ch < chunks * (part + 1) / nparts; ch++) {
        const int64_t e0 = ch * R->lanes_per;
        const int64_t nl = J->other - e0 < R->lanes_per ? J->other - e0 : R->lanes_per;
        char *bc = el(b, e0 * J->ls, J->size);
        tile_io(J, R->nb, nl, bc, J->ps, J->ls, t, 1);
        if (J->solve) {
            canon_leaf_solve(&R->L, t);
            tile_io(J, R->nb, nl, bc, J->ps, J->ls, t, 0);
            continue;
        }
        if (R->init)
            tile_io(J, R->nb, nl, el(R->init, e0 * J->wls, J->size), J->wps, J->wls, o, 1);
        else
            memset(o, 0, (size_t)R->nb * CANON_LEAF_BYTES);
        canon_leaf_mul(&R->L, t, o);
        tile_io(J, R->nb, nl, bc, J->ps, J->ls, o, 0);
    }
}

/* The leaf of positions p0 .. p0+nb-1: kind CANON_LEAF_*, trmm's sums
 * from init (NULL: +0), final: CMUL(alpha, s) stored. */
static int leaf(const struct tri_job *J, int64_t p0, int nb, int kind, char *init, int final)
{
    unsigned char *coef = J->leaf_a, *diag = coef + CANON_LEAF_NB * CANON_LEAF_NB * 16;
    const int64_t d = J->rev ? -1 : 1;
    /* coef(c, q) of the triangle the kind reads: trsm and lower q < c,
     * upper q > c */
    const int upper = kind == CANON_LEAF_UPPER;
    const struct copy_shape S = {
        .oc0 = orig(J, p0), .dc = d, .oq0 = orig(J, p0), .dq = d, .nc = nb, .sc = nb, .sq = 1,
        .q0 = upper ? 1 : 0, .q1 = upper ? nb : 0, .lo = upper, .hi = !upper,
    };
    copy_a(J, &S, coef);
    if (!J->tri->unit) { /* the diagonal, conjugated as op says, never negated */
        struct tri_job D = *J;
        D.solve = 0;
        const struct copy_shape S2 = {.oc0 = orig(J, p0), .dc = d, .oq0 = orig(J, p0), .dq = d,
                                      .nc = nb, .sc = 1, .sq = 0, .q0 = 0, .q1 = 1, .lo = 1,
                                      .hi = 1};
        copy_a(&D, &S2, diag);
    }
    struct leaf_run R = {
        .J = J, .p0 = p0, .nb = nb, .init = init,
        .lanes_per = CANON_LEAF_BYTES / (int64_t)J->size,
        .L = {.t = J->t, .kind = kind, .swap = !J->left, .nb = nb, .coef = coef,
              .diag = J->tri->unit ? NULL : diag, .alpha = final ? J->alpha : NULL},
    };
    const int64_t chunks = (J->other + R.lanes_per - 1) / R.lanes_per;
    int nparts = J->serial ? 1 : canon_threads();
    if ((int64_t)nb * nb * J->other / 2 < LEAF_PAR_MIN)
        nparts = 1;
    if (nparts > chunks)
        nparts = (int)chunks;
    return canon_pool_run(leaf_part, &R, nparts, 2 * (size_t)CANON_LEAF_NB * CANON_LEAF_BYTES) ==
                   0
               ? 0
               : -2;
}

/* The halving point of positions p0 .. p1-1: whole leaves on each side. */
static int64_t half(int64_t p0, int64_t p1)
{
    const int64_t leaves = (p1 - p0 + CANON_LEAF_NB - 1) / CANON_LEAF_NB;
    return p0 + leaves / 2 * CANON_LEAF_NB;
}

/* trsm: positions p0 .. p1-1, whose sums in B hold every term of the
 * positions before p0. */
static int solve(const struct tri_job *J, int64_t p0, int64_t p1)
{
    if (p1 - p0 <= CANON_LEAF_NB)
        return leaf(J, p0, (int)(p1 - p0), CANON_LEAF_SOLVE, NULL, 0);
    const int64_t h = half(p0, p1);
    if (solve(J, p0, h) ||
        update(J, h, p1 - h, p0, h - p0, b_at(J, h, p1 - h), b_ld(J), 0, NULL))
        return -2;
    return solve(J, h, p1);
}

/* trmm, diagonal first: positions p0 .. p1-1 from their old values and
 * those after p1 (still old); final: nothing after p1. */
static int diag_first(const struct tri_job *J, int64_t p0, int64_t p1, int final)
{
    if (p1 - p0 <= CANON_LEAF_NB)
        return leaf(J, p0, (int)(p1 - p0), CANON_LEAF_UPPER, NULL, final);
    const int64_t h = half(p0, p1);
    if (diag_first(J, p0, h, 0) ||
        update(J, p0, h - p0, h, p1 - h, b_at(J, p0, h - p0), b_ld(J), 0,
               final ? J->alpha : NULL))
        return -2;
    return diag_first(J, h, p1, final);
}

/* trmm, diagonal last: positions p0 .. p1-1, whose sums in W hold the
 * terms of the positions before p0, from the old values (the positions
 * before p1 are still old). */
static int diag_last(const struct tri_job *J, int64_t p0, int64_t p1)
{
    if (p1 - p0 <= CANON_LEAF_NB)
        return leaf(J, p0, (int)(p1 - p0), CANON_LEAF_LOWER, w_at(J, p0), 1);
    const int64_t h = half(p0, p1);
    if (update(J, h, p1 - h, p0, h - p0, w_at(J, h), J->other, J->left, NULL) || diag_last(J, h, p1))
        return -2;
    return diag_last(J, p0, h);
}

/* trmm, diagonal last, lanes e0 .. e0+ne-1 (independent of the others). */
static int trmm_last_lanes(const struct tri_job *J0, int64_t e0, int64_t ne)
{
    struct tri_job L = *J0, *J = &L;
    J->b0 = el(J0->b0, e0 * J0->ls, J->size);
    J->other = ne;
    const int64_t nbl = J->dim < NBL ? J->dim : NBL;
    J->wps = J->other; /* a position's lanes contiguous, for the leaves */
    J->wls = 1;
    for (int64_t p1 = J->dim; p1 > 0; p1 -= NBL) {
        const int64_t p0 = p1 - NBL > 0 ? p1 - NBL : 0;
        J->w0 = p0;
        memset(J->w, 0, (size_t)(nbl * J->other) * J->size);
        if (update(J, p0, p1 - p0, 0, p0, J->w, J->other, J->left, NULL) || diag_last(J, p0, p1))
            return -2;
    }
    return 0;
}

static int trmm_last(const struct tri_job *J)
{
    for (int64_t e0 = 0; e0 < J->other; e0 += LCH)
        if (trmm_last_lanes(J, e0, J->other - e0 < LCH ? J->other - e0 : LCH))
            return -2;
    return 0;
}

/* trsm's starting sums, s = CMUL(alpha, B_ij), for J's lanes. */
static void scale_lanes(const struct tri_job *J)
{
    const struct canon_blas_kern *kern = &canon_blas_kernels()->t[J->t];
    if (J->left) /* a lane is a column: its lowest address first */
        for (int64_t e = 0; e < J->other; e++)
            kern->scal(J->dim, J->alpha,
                       el(J->b0, e * J->ls + (J->ps < 0 ? (J->dim - 1) * J->ps : 0), J->size), 1);
    else
        for (int64_t p = 0; p < J->dim; p++)
            kern->scal(J->other, J->alpha, el(J->b0, p * J->ps, J->size), 1);
}

/* Bytes of trmm's W for a run over ne lanes (trsm takes none). */
static size_t w_bytes(const struct tri_job *J, int64_t ne)
{
    const size_t w = J->last ? (size_t)((J->dim < NBL ? J->dim : NBL) * (ne < LCH ? ne : LCH)) *
                                   J->size
                             : 0;
    return (w + 63) & ~(size_t)63;
}

/* Workspace bytes of a run over ne lanes: W, then the leaves' op(A). */
static size_t run_bytes(const struct tri_job *J, int64_t ne)
{
    return w_bytes(J, ne) + LEAF_A_BYTES;
}

/* The whole call for lanes e0 .. e0+ne-1, independent of the others,
 * with workspace ws of run_bytes(J, ne). Returns 0 or -2. */
static int run_lanes(const struct tri_job *J0, int64_t e0, int64_t ne, char *ws)
{
    struct tri_job L = *J0;
    L.b0 = el(J0->b0, e0 * J0->ls, L.size);
    L.other = ne;
    L.w = L.last ? ws : NULL;
    L.leaf_a = (unsigned char *)ws + w_bytes(J0, ne);
    if (L.solve) {
        if (!canon_blas_is_one(L.t, L.alpha))
            scale_lanes(&L);
        return solve(&L, 0, L.dim);
    }
    return L.last ? trmm_last(&L) : diag_first(&L, 0, L.dim, 1);
}

/* Parts of a call split by lanes: part i takes whole leaf tiles of lanes
 * and the i-th slice of the workspace. A part whose thread cannot reserve
 * its GEMM workspace touches nothing and is left for the caller
 * (undone[part]), so that B is never left half-computed. */
struct lanes_job {
    const struct tri_job *J;
    int64_t unit, per, maxdim;
    size_t part_bytes;
    char *ws;
    atomic_int rc;
    atomic_char undone[CANON_MAX_THREADS];
};

static int run_part_lanes(struct lanes_job *P, int part)
{
    const int64_t e0 = part * P->per, e1 = e0 + P->per < P->J->other ? e0 + P->per : P->J->other;
    return e0 < e1 ? run_lanes(P->J, e0, e1 - e0, P->ws + (size_t)part * P->part_bytes) : 0;
}

static void lanes_part(void *arg, int part, int nparts, void *ws)
{
    struct lanes_job *P = arg;
    (void)ws;
    (void)nparts;
    if (canon_gemm_reserve(P->J->t, P->maxdim) != 0)
        atomic_store(&P->undone[part], 1);
    else if (run_part_lanes(P, part) != 0)
        atomic_store(&P->rc, -2);
}

int canon_l3_tri_gemm(enum canon_type t, int solve_, char side, const struct canon_blas_tri *tri,
                      int64_t m, int64_t n, const void *alpha, const void *a, int64_t lda,
                      void *b, int64_t ldb)
{
    if (!canon_l3_gemm_on())
        return 1;
    const int left = side == 'L';
    const int64_t ri = canon_blas_tri_ri(tri, lda), rj = canon_blas_tri_rj(tri, lda);
    /* trsm solves forward for side 'L' lower and side 'R' upper op(A);
     * trmm's diagonal term comes first for side 'L' upper and 'R' lower */
    const int forward = left != tri->upper;
    struct tri_job J = {
        .t = t, .size = canon_blas_size(t), .cplx = canon_blas_complex(t), .solve = solve_,
        .left = left, .rev = solve_ && !forward, .last = !solve_ && forward, .tri = tri,
        .dim = left ? m : n, .other = left ? n : m, .xc = left ? ri : rj, .xq = left ? rj : ri,
        .a = a, .ls = left ? ldb : 1, .alpha = alpha,
    };
    const int64_t ps = left ? 1 : ldb;
    J.ps = J.rev ? -ps : ps;
    J.b0 = el(b, J.rev ? (J.dim - 1) * ps : 0, J.size);
    /* Every GEMM piece of this call has m, n and k at most maxdim. B is
     * overwritten piece by piece, so the memory those pieces need is
     * reserved first: a failure later would leave B half-done, and the
     * caller's fallback would then start from wrong values. */
    const int64_t maxdim = J.dim > J.other ? J.dim : J.other;
    if (canon_gemm_reserve(t, maxdim) != 0)
        return -2;
    /* With threads, the lanes are split among them, each part the whole
     * call for its lanes on one thread (at least two leaf tiles of lanes
     * a part); else the GEMM calls and the leaves use the threads. */
    const int64_t unit = CANON_LEAF_BYTES / (int64_t)J.size;
    int64_t nparts = canon_threads();
    if (nparts > J.other / (2 * unit))
        nparts = J.other / (2 * unit);
    if ((double)J.dim * (double)J.dim * (double)J.other < (double)(2 * LEAF_PAR_MIN))
        nparts = 1;
    if (nparts <= 1) {
        char *ws = canon_scratch(run_bytes(&J, J.other));
        return ws ? run_lanes(&J, 0, J.other, ws) : -2;
    }
    J.serial = 1;
    struct lanes_job P = {.J = &J, .unit = unit, .maxdim = maxdim};
    P.per = (J.other + unit * nparts - 1) / (unit * nparts) * unit;
    P.part_bytes = run_bytes(&J, P.per);
    if ((size_t)nparts * P.part_bytes > SPLIT_BYTES) { /* fewer, wider parts */
        nparts = (int64_t)(SPLIT_BYTES / P.part_bytes) > 1 ? (int64_t)(SPLIT_BYTES / P.part_bytes)
                                                          : 1;
        P.per = (J.other + unit * nparts - 1) / (unit * nparts) * unit;
        P.part_bytes = run_bytes(&J, P.per);
        nparts = (J.other + P.per - 1) / P.per;
    }
    P.ws = canon_scratch((size_t)nparts * P.part_bytes);
    atomic_init(&P.rc, 0);
    for (int i = 0; i < CANON_MAX_THREADS; i++)
        atomic_init(&P.undone[i], 0);
    if (!P.ws || canon_pool_run(lanes_part, &P, (int)nparts, 0) != 0)
        return -2;
    /* The parts a worker could not take, here, where the memory is
     * reserved: the same operations, so the same bits. */
    for (int i = 0; i < (int)nparts; i++)
        if (atomic_load(&P.undone[i]) && run_part_lanes(&P, i) != 0)
            atomic_store(&P.rc, -2);
    return atomic_load(&P.rc);
}
