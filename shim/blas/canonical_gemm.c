/* The canonical GEMM driver: argument checks, the alpha == 0 / k == 0
 * cases, and the blocked loops around the per-ISA kernels
 * (canonical_gemm_scalar.c, canonical_gemm_avx2.c). It computes exactly the
 * order stated in shim/blas/canonical.h; see there for the contract. The
 * BLAS interceptors call it in canonical mode.
 *
 * Every problem is first turned into one shape: C row-major (columns
 * contiguous), op(A) and op(B) addressed through a row and a column
 * stride. A column-major C is the row-major C^T = op(B)^T op(A)^T, which
 * has the same products in the same order (x*y == y*x exactly; for complex
 * types the packers are told, CANON_SWAP, since the contract orders the
 * two terms of an imaginary part by operand, not by position). The loops
 * are GotoBLAS/BLIS-style: a panel of nc columns of B is packed for all of
 * K (for a very long K, slice by slice), then for each block of mc rows and
 * each kc slice of K the A block is packed and the mr x nr register tiles
 * run over it. Between K slices a
 * tile's partial sums are stored, in the output precision, to a workspace
 * and reloaded: exact, so K blocking changes nothing. For the level-3
 * routines (canonical_l3_gemm.c) a call may compute only a triangle of
 * C, skipping the tiles outside it, and read an operand as symmetric
 * from one stored triangle: neither changes an element's sum.
 */
#include <assert.h>
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* A panel of B is packed once for all of K when that takes at most this
 * many bytes; beyond it (a very long K), one kc slice at a time, again for
 * each block of rows, so the workspace stays bounded. */
#define BPACK_BUDGET ((int64_t)16 << 20)
/* Products of fewer multiply-adds than this run on one thread: below it
 * waking a worker costs more than it saves. */
#define PAR_MIN_WORK ((int64_t)1 << 18)
/* Bytes of the largest register tile of any kernel. */
#define MAX_TILE_BYTES 2048

static atomic_int nthreads = 1;
static _Atomic(const struct canon_isa_kernels *) active;
static int64_t force_mc, force_kc, force_nc, force_budget;

/* ---- configuration ---------------------------------------------------- */

void canon_set_threads(int n)
{
    atomic_store(&nthreads, n < 1 ? 1 : n > CANON_MAX_THREADS ? CANON_MAX_THREADS : n);
}

int canon_threads(void)
{
    return atomic_load(&nthreads);
}

static const struct canon_isa_kernels *const paths[CANON_ISA_NPATHS] = {
    [CANON_ISA_SCALAR] = &canon_scalar_kernels,
    [CANON_ISA_AVX2] = &canon_avx2_kernels,
    [CANON_ISA_AVX512] = &canon_avx512_kernels,
};

static const struct canon_isa_kernels *isa_current(void)
{
    const struct canon_isa_kernels *k = atomic_load(&active);
    if (!k) {
        k = paths[canon_isa_auto(CANON_FAMILY_GEMM)];
        atomic_store(&active, k);
    }
    return k;
}

int canon_set_isa(const char *isa)
{
    int p = canon_isa_parse(isa, CANON_FAMILY_GEMM);
    if (p < 0)
        return -1;
    atomic_store(&active, paths[p]);
    return 0;
}

const char *canon_isa(void)
{
    return isa_current()->name;
}

void canon_set_blocking(int64_t mc, int64_t kc, int64_t nc, int64_t b_budget)
{
    force_mc = mc > 0 ? mc : 0;
    force_kc = kc > 0 ? kc : 0;
    force_nc = nc > 0 ? nc : 0;
    force_budget = b_budget > 0 ? b_budget : 0;
}

/* ---- the blocked product ------------------------------------------------ */

/* One call, already in the row-major shape: C (m x n, row stride ldc)
 * gets op(A) (element i,p at a + (i*rsa + p*csa)*elem) times op(B)
 * (element p,j at b + (p*rsb + j*csb)*elem). */
struct job {
    const struct canon_kernel *kern;
    int64_t m, n, k;
    const char *a;
    int64_t rsa, csa;
    const char *b;
    int64_t rsb, csb;
    int flags_a, flags_b; /* CANON_CONJ, CANON_SWAP for the packers */
    uint64_t neg_a, neg_b; /* sign bits to flip in each packed word, or 0 */
    char *c;
    int64_t ldc;
    const void *alpha, *beta;
    int64_t mc, kc, nc; /* effective blocking: multiples of mr, -, nr */
    int b_once;         /* B panels packed once for all of K (else per slice) */
    int split_n;        /* parts take column ranges (else row ranges) */
    int acc;            /* C holds starting sums: 1 gets the raw sums back, 2 alpha*s
                         * (beta is then 0) */
    int sym_a, sym_b;   /* CANON_SYM_*: op(A) (op(B)^T) is symmetric, its stored
                         * triangle in the packers' (row, p) frame (pack_op) */
    int tri;            /* CANON_TRI_LOWER / CANON_TRI_UPPER: only elements with column <=
                         * row / >= row are computed and stored; 0: all */
    int64_t units;      /* register tiles along the split dimension */
};

static int64_t round_up(int64_t x, int64_t to)
{
    return (x + to - 1) / to * to;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static size_t align64(size_t x)
{
    return (x + 63) & ~(size_t)63;
}

/* Rows of packed B a part keeps: all of K, or one slice. */
static int64_t b_rows(const struct job *J)
{
    return J->b_once ? J->k : J->kc;
}

/* Workspace of one part: packed B (k or kc x nc), packed A (mc x kc), and
 * the partial-sum tiles of an mc x nc block when K takes more than one
 * slice. */
static size_t ws_bytes(const struct job *J)
{
    size_t es = J->kern->elem, ps = J->kern->packed;
    size_t bytes = align64((size_t)(b_rows(J) * J->nc) * ps) +
                   align64((size_t)(J->mc * J->kc) * ps);
    if (J->k > J->kc)
        bytes += (size_t)(J->mc * J->nc) * es;
    return bytes;
}

/* memcpy of one tile row: the sizes of whole rows are constants, so
 * that the copy is a few vector moves, not a call. */
static inline void copy_row(void *d, const void *s, size_t n)
{
    switch (n) {
    case 32: memcpy(d, s, 32); break;
    case 64: memcpy(d, s, 64); break;
    case 128: memcpy(d, s, 128); break;
    case 256: memcpy(d, s, 256); break;
    default: memcpy(d, s, n); break;
    }
}

/* Moves the top-left rows x cols of a tile (row stride nr) from C (in =
 * 1, the rest of the tile zeroed) or to C. Copies only: exact. */
static void tile_io(const struct canon_kernel *K, int64_t rows, int64_t cols, unsigned char *tile,
                    char *c, int64_t ldc, int in)
{
    const size_t es = K->elem, row = (size_t)K->nr * es;
    if (in && (rows < K->mr || cols < K->nr))
        memset(tile, 0, (size_t)K->mr * row);
    for (int64_t i = 0; i < rows; i++) {
        char *ci = c + i * ldc * (int64_t)es;
        if (in)
            copy_row(tile + i * row, ci, (size_t)cols * es);
        else
            copy_row(ci, tile + i * row, (size_t)cols * es);
    }
}

/* Asks for the mr rows of a C tile (cols elements each) ahead of
 * tile_io's reads: a tile whose sums start from C waits on each of its
 * rows otherwise (78% of the driver's own time in a dtrmm at n = 1024,
 * which the products then wait on too). A hint only: it never faults. */
static inline __attribute__((always_inline)) void prefetch_tile(const struct canon_kernel *K,
                                                               const char *c, int64_t ldc,
                                 int64_t cols)
{
    const size_t last = (size_t)cols * K->elem - 1;
    for (int i = 0; i < K->mr; i++) {
        const char *ci = c + i * ldc * (int64_t)K->elem;
        __builtin_prefetch(ci);
        __builtin_prefetch(ci + last);
    }
}

/* Exchanges two groups of `bytes` bytes, 8 at a time where the size
 * allows (every kernel's r x packed is a multiple of 8): a loop the
 * compiler turns into vector moves. memcpy through a buffer, 3 calls per
 * pair of groups of 24 to 192 bytes, took 13% of a backward strsm
 * (side 'L' upper, n = 512) against 3% forward. */
static void swap_groups(char *x, char *y, size_t bytes)
{
    if (bytes % 8 != 0) {
        for (size_t i = 0; i < bytes; i++) {
            const char t = x[i];
            x[i] = y[i];
            y[i] = t;
        }
        return;
    }
    for (size_t i = 0; i < bytes; i += 8) {
        uint64_t u, v;
        memcpy(&u, x + i, 8);
        memcpy(&v, y + i, 8);
        memcpy(x + i, &v, 8);
        memcpy(y + i, &u, 8);
    }
}

/* Negates the `bytes` of a packed block in place by flipping the sign
 * bits in `mask` (each float's or each double's) of every word: exact,
 * and cheaper than a negated copy of the operand before packing. A
 * padding row becomes -0, whose products land in outputs never stored. */
static void negate_packed(char *p, size_t bytes, uint64_t mask)
{
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        w ^= mask;
        memcpy(p + i, &w, 8);
    }
    if (i < bytes) { /* a last float */
        uint32_t w;
        memcpy(&w, p + i, 4);
        w ^= (uint32_t)mask;
        memcpy(p + i, &w, 4);
    }
}

/* Packs through fn, as the packers' contract says, also when cs, the
 * stride of p, is negative (the operand's k runs backward in memory): the
 * same elements are packed from the other end and the kb groups of each
 * strip (r elements of ps bytes each) put back in p order; then negated
 * when neg is a sign mask (negate_packed). Copies and sign flips only. */
static void pack(void (*fn)(int, int64_t, int64_t, const void *, int64_t, int64_t, int, void *),
                 int r, int64_t rows, int64_t kb, const char *x, int64_t rs, int64_t cs, int flags,
                 uint64_t neg, size_t es, size_t ps, char *dst)
{
    const size_t group = (size_t)r * ps;
    const int64_t strips = (rows + r - 1) / r;
    if (cs >= 0) {
        fn(r, rows, kb, x, rs, cs, flags, dst);
    } else {
        fn(r, rows, kb, x + (kb - 1) * cs * (int64_t)es, rs, -cs, flags, dst);
        assert(group <= MAX_TILE_BYTES);
        for (int64_t s = 0; s < strips; s++) {
            char *strip = dst + (size_t)(s * kb) * group;
            for (int64_t lo = 0, hi = kb - 1; lo < hi; lo++, hi--)
                swap_groups(strip + (size_t)lo * group, strip + (size_t)hi * group, group);
        }
    }
    if (neg)
        negate_packed(dst, (size_t)(strips * kb) * group, neg);
}

/* Packs op(A) rows row0.. (isb = 0) or op(B)^T rows, that is op(B)
 * columns, row0.. (isb = 1), for p = p0 .. p0+kb-1, as the job says. */
static void pack_op(const struct job *J, int isb, int64_t row0, int64_t rows, int64_t p0,
                    int64_t kb, char *dst)
{
    const struct canon_kernel *K = J->kern;
    const size_t es = K->elem, ps = K->packed;
    const char *x = isb ? J->b : J->a;
    const int64_t rs = isb ? J->csb : J->rsa, cs = isb ? J->rsb : J->csa;
    const int sym = isb ? J->sym_b : J->sym_a, r = isb ? K->nr : K->mr;
    const int flags = isb ? J->flags_b : J->flags_a;
    const uint64_t neg = isb ? J->neg_b : J->neg_a;
    void (*fn)(int, int64_t, int64_t, const void *, int64_t, int64_t, int, void *) =
        isb ? K->pack_b : K->pack_a;
    if (!sym) {
        pack(fn, r, rows, kb, x + (row0 * rs + p0 * cs) * (int64_t)es, rs, cs, flags, neg, es,
             ps, dst);
        return;
    }
    canon_pack_sym(fn, r, row0, rows, p0, kb, x, rs, cs, (sym & CANON_SYM_LOWER) != 0,
                   (sym & CANON_SYM_HERM) != 0, flags, es, ps, dst);
    if (neg)
        negate_packed(dst, (size_t)((rows + r - 1) / r * kb) * (size_t)r * ps, neg);
}

/* Stores the elements of the triangle among a tile's top-left rows x
 * cols sums to C: finish applies alpha and beta to the whole tile in a
 * copy holding C's elements of the triangle (zeros elsewhere), and only
 * those are copied back, so that every stored element is what finish
 * stores without a triangle and C's other triangle is neither read nor
 * written. */
static void tri_finish(const struct job *J, int64_t i, int64_t j, int64_t rows, int64_t cols,
                       const unsigned char *sums, char *ct)
{
    const struct canon_kernel *K = J->kern;
    const size_t es = K->elem, row = (size_t)K->nr * es;
    _Alignas(64) unsigned char out[MAX_TILE_BYTES];
    int64_t lo[64], hi[64];
    assert(rows <= 64);
    memset(out, 0, (size_t)K->mr * row);
    for (int64_t r = 0; r < rows; r++) {
        canon_tri_run(J->tri, i, j, r, cols, &lo[r], &hi[r]);
        if (lo[r] < hi[r])
            memcpy(out + (size_t)r * row + (size_t)lo[r] * es,
                   ct + (r * J->ldc + lo[r]) * (int64_t)es, (size_t)(hi[r] - lo[r]) * es);
    }
    K->finish(rows, cols, sums, out, K->nr, J->alpha, J->beta);
    for (int64_t r = 0; r < rows; r++)
        if (lo[r] < hi[r])
            memcpy(ct + (r * J->ldc + lo[r]) * (int64_t)es,
                   out + (size_t)r * row + (size_t)lo[r] * es, (size_t)(hi[r] - lo[r]) * es);
}

/* C[i0 .. i0+m) x [j0 .. j0+n) of the job, on one thread. */
static void gemm_block(const struct job *J, int64_t i0, int64_t m, int64_t j0, int64_t n,
                       char *ws)
{
    const struct canon_kernel *K = J->kern;
    const int64_t mr = K->mr, nr = K->nr, k = J->k, kc = J->kc;
    const size_t es = K->elem, ps = K->packed, tile_bytes = (size_t)(mr * nr) * es;
    assert(tile_bytes <= MAX_TILE_BYTES);
    char *bp = ws;
    char *ap = bp + align64((size_t)(b_rows(J) * J->nc) * ps);
    char *w = ap + align64((size_t)(J->mc * kc) * ps);
    _Alignas(64) unsigned char edge[MAX_TILE_BYTES];

    for (int64_t jc = 0; jc < n; jc += J->nc) {
        const int64_t nb = min64(J->nc, n - jc), nbp = round_up(nb, nr);
        for (int64_t pc = 0; J->b_once && pc < k; pc += kc)
            pack_op(J, 1, j0 + jc, nb, pc, min64(kc, k - pc), bp + (size_t)(pc * nbp) * ps);
        for (int64_t ic = 0; ic < m; ic += J->mc) {
            const int64_t mb = min64(J->mc, m - ic), mstrips = (mb + mr - 1) / mr;
            if (!canon_tri_cover(J->tri, i0 + ic, mb, j0 + jc, nb))
                continue;
            for (int64_t pc = 0; pc < k; pc += kc) {
                const int64_t kb = min64(kc, k - pc);
                const int first = pc == 0, last = pc + kb == k;
                const int64_t boff = J->b_once ? pc * nbp : 0;
                if (!J->b_once)
                    pack_op(J, 1, j0 + jc, nb, pc, kb, bp);
                pack_op(J, 0, i0 + ic, mb, pc, kb, ap);
                for (int64_t js = 0; js * nr < nb; js++) {
                    const char *bs = bp + (size_t)(boff + js * kb * nr) * ps;
                    const int64_t cols = min64(nr, nb - js * nr);
                    for (int64_t is = 0; is < mstrips; is++) {
                        const char *as = ap + (size_t)(is * kb * mr) * ps;
                        const int64_t rows = min64(mr, mb - is * mr);
                        const int64_t ti = i0 + ic + is * mr, tj = j0 + jc + js * nr;
                        const int cover = canon_tri_cover(J->tri, ti, rows, tj, cols);
                        if (!cover)
                            continue;
                        char *wt = w + (size_t)(js * mstrips + is) * tile_bytes;
                        const void *acc = first ? NULL : wt;
                        char *ct = J->c + (ti * J->ldc + tj) * (int64_t)es;
                        if (first && J->acc) { /* the sums start from C */
                            tile_io(K, rows, cols, edge, ct, J->ldc, 1);
                            acc = edge;
                            if (is + 1 < mstrips) /* the next tile's, read after this one */
                                prefetch_tile(K, ct + mr * J->ldc * (int64_t)es, J->ldc,
                                              cols);
                            else if ((js + 1) * nr < nb)
                                prefetch_tile(K, J->c + ((i0 + ic) * J->ldc + j0 + jc +
                                                         (js + 1) * nr) * (int64_t)es,
                                              J->ldc, min64(nr, nb - (js + 1) * nr));
                        }
                        if (!last) {
                            K->tile(kb, as, bs, acc, wt);
                            continue;
                        }
                        if (J->acc == 1) {
                            K->tile(kb, as, bs, acc, edge);
                            tile_io(K, rows, cols, edge, ct, J->ldc, 0);
                        } else if (cover == 2) {
                            K->tile(kb, as, bs, acc, edge);
                            tri_finish(J, ti, tj, rows, cols, edge, ct);
                        } else if (rows == mr && cols == nr) {
                            K->tile_c(kb, as, bs, acc, ct, J->ldc, J->alpha, J->beta);
                        } else {
                            K->tile(kb, as, bs, acc, edge);
                            K->finish(rows, cols, edge, ct, J->ldc, J->alpha, J->beta);
                        }
                    }
                }
            }
        }
    }
}

/* The elements of the triangle in register-tile unit u of the split
 * dimension, counted at its middle. */
static double tri_weight(const struct job *J, int64_t u)
{
    if (J->split_n) { /* column j: rows >= j (lower) or <= j (upper) */
        const int64_t j = u * J->kern->nr + J->kern->nr / 2;
        return (double)(J->tri == CANON_TRI_LOWER ? (J->m > j ? J->m - j : 0) : min64(j + 1, J->m));
    }
    const int64_t i = u * J->kern->mr + J->kern->mr / 2; /* row i */
    return (double)(J->tri == CANON_TRI_LOWER ? min64(i + 1, J->n) : (J->n > i ? J->n - i : 0));
}

/* The first unit of a part: parts of equal units, or with a triangle,
 * of about equal elements of it. Which thread computes an element
 * changes none of its bits. */
static int64_t part_start(const struct job *J, int part, int nparts)
{
    if (!J->tri || part == 0 || part == nparts)
        return J->units * part / nparts;
    double total = 0, sum = 0;
    for (int64_t u = 0; u < J->units; u++)
        total += tri_weight(J, u);
    int64_t u = 0;
    for (; u < J->units && sum < total * part / nparts; u++)
        sum += tri_weight(J, u);
    return u;
}

static void run_part(void *arg, int part, int nparts, void *ws)
{
    const struct job *J = arg;
    int64_t u0 = part_start(J, part, nparts), u1 = part_start(J, part + 1, nparts);
    if (J->split_n) {
        int64_t j0 = u0 * J->kern->nr, j1 = min64(u1 * J->kern->nr, J->n);
        if (j0 < j1)
            gemm_block(J, 0, J->m, j0, j1 - j0, ws);
    } else {
        int64_t i0 = u0 * J->kern->mr, i1 = min64(u1 * J->kern->mr, J->m);
        if (i0 < i1)
            gemm_block(J, i0, i1 - i0, 0, J->n, ws);
    }
}

/* ---- C = beta*C, for alpha == 0 or k == 0 ------------------------------ */

/* `lines` runs of `len` elements, ld apart. */
static void scale_c(enum canon_type t, int64_t lines, int64_t len, const void *beta, void *c,
                    int64_t ld)
{
    for (int64_t l = 0; l < lines; l++) {
        switch (t) {
        case CANON_S: {
            float b = *(const float *)beta, *x = (float *)c + l * ld;
            for (int64_t e = 0; e < len; e++)
                x[e] = b == 0 ? 0.0f : b * x[e];
            break;
        }
        case CANON_D: {
            double b = *(const double *)beta, *x = (double *)c + l * ld;
            for (int64_t e = 0; e < len; e++)
                x[e] = b == 0 ? 0.0 : b * x[e];
            break;
        }
        case CANON_C: {
            const float *b = beta;
            float *x = (float *)c + 2 * l * ld;
            for (int64_t e = 0; e < 2 * len; e += 2) {
                if (b[0] == 0 && b[1] == 0) {
                    x[e] = x[e + 1] = 0.0f;
                    continue;
                }
                float tr = b[0] * x[e], ti = b[0] * x[e + 1];
                tr = fmaf(-b[1], x[e + 1], tr);
                ti = fmaf(b[1], x[e], ti);
                x[e] = tr;
                x[e + 1] = ti;
            }
            break;
        }
        default: {
            const double *b = beta;
            double *x = (double *)c + 2 * l * ld;
            for (int64_t e = 0; e < 2 * len; e += 2) {
                if (b[0] == 0 && b[1] == 0) {
                    x[e] = x[e + 1] = 0.0;
                    continue;
                }
                double tr = b[0] * x[e], ti = b[0] * x[e + 1];
                tr = fma(-b[1], x[e + 1], tr);
                ti = fma(b[1], x[e], ti);
                x[e] = tr;
                x[e + 1] = ti;
            }
            break;
        }
        }
    }
}

/* 1 if the scalar is zero (+0 or -0; complex: both parts), 2 if it is one. */
static int scalar_class(enum canon_type t, const void *v)
{
    double re, im = 0;
    switch (t) {
    case CANON_S: re = *(const float *)v; break;
    case CANON_D: re = *(const double *)v; break;
    case CANON_C: re = ((const float *)v)[0], im = ((const float *)v)[1]; break;
    default: re = ((const double *)v)[0], im = ((const double *)v)[1]; break;
    }
    if (re == 0 && im == 0)
        return 1;
    return re == 1 && im == 0 ? 2 : 0;
}

/* ---- entry ------------------------------------------------------------- */

static char upper(char ch)
{
    return ch >= 'a' && ch <= 'z' ? (char)(ch - 'a' + 'A') : ch;
}

static int is_trans(char ch)
{
    return ch == 'N' || ch == 'T' || ch == 'C';
}

static int run(enum canon_type t, int col, int64_t m, int64_t n, int64_t k,
               const struct canon_gemm_opnd *oa, const struct canon_gemm_opnd *ob,
               const void *alpha, const void *beta, void *c, int64_t ldc, int acc, int tri);

/* ws_bytes() of the largest job run() can make for type t with m, n and
 * k at most maxdim: mc x kc and nc blocks, B packed once up to the
 * budget. */
int canon_gemm_reserve(enum canon_type t, int64_t maxdim)
{
    const struct canon_kernel *K = &isa_current()->k[t];
    if (maxdim < 1)
        maxdim = 1;
    const int64_t mc = round_up(min64(force_mc ? force_mc : K->mc, maxdim), K->mr);
    const int64_t nc = round_up(min64(force_nc ? force_nc : K->nc, maxdim), K->nr);
    const int64_t kc = min64(force_kc ? force_kc : K->kc, maxdim);
    const double once = (double)maxdim * (double)nc * (double)K->packed;
    const double budget = (double)(force_budget ? force_budget : BPACK_BUDGET);
    size_t b_bytes = (size_t)(kc * nc) * K->packed;
    if (once <= budget)
        b_bytes = (size_t)once;
    else if ((double)b_bytes < budget)
        b_bytes = (size_t)budget;
    size_t bytes = align64(b_bytes) + align64((size_t)(mc * kc) * K->packed) +
                   (size_t)(mc * nc) * K->elem;
    return canon_pool_reserve(bytes);
}

/* With acc: the call runs on the calling thread only. */
#define ACC_SERIAL 8

static int gemm(enum canon_type t, char order, char transa, char transb, int64_t m, int64_t n,
                int64_t k, const void *alpha, const void *a, int64_t lda, const void *b,
                int64_t ldb, const void *beta, void *c, int64_t ldc, int acc)
{
    order = upper(order), transa = upper(transa), transb = upper(transb);
    if ((order != 'R' && order != 'C') || !is_trans(transa) || !is_trans(transb) || m < 0 ||
        n < 0 || k < 0)
        return -1;
    const int ta = transa != 'N', tb = transb != 'N', col = order == 'C';
    /* Stored rows x columns of A and B, and the minimum leading dimensions
     * (the BLAS checks lda against the stored run length). */
    const int64_t a_run = col ? (ta ? k : m) : (ta ? m : k);
    const int64_t b_run = col ? (tb ? n : k) : (tb ? k : n);
    const int64_t c_run = col ? m : n;
    if (lda < (a_run > 1 ? a_run : 1) || ldb < (b_run > 1 ? b_run : 1) ||
        ldc < (c_run > 1 ? c_run : 1))
        return -1;
    if (m == 0 || n == 0 || (acc && k == 0))
        return 0;

    if (!acc && (scalar_class(t, alpha) == 1 || k == 0)) {
        if (scalar_class(t, beta) != 2)
            scale_c(t, col ? n : m, col ? m : n, beta, c, ldc);
        return 0;
    }

    /* op(A)[i][p] at a + i*rsa + p*csa, op(B)[p][j] at b + p*rsb + j*csb. */
    const struct canon_gemm_opnd oa = {a, (ta ^ col) ? 1 : lda, (ta ^ col) ? lda : 1,
                                       transa == 'C', 0, 0};
    const struct canon_gemm_opnd ob = {b, (tb ^ col) ? 1 : ldb, (tb ^ col) ? ldb : 1,
                                       transb == 'C', 0, 0};
    return run(t, col, m, n, k, &oa, &ob, alpha, beta, c, ldc, acc, 0);
}

/* The checked call: C (column-major when col, else row-major) from the
 * operands' strides, as gemm() says; acc and tri (in C's own frame) as
 * struct job's, tri only without acc. */
static int run(enum canon_type t, int col, int64_t m, int64_t n, int64_t k,
               const struct canon_gemm_opnd *oa, const struct canon_gemm_opnd *ob,
               const void *alpha, const void *beta, void *c, int64_t ldc, int acc, int tri)
{
    const void *a = oa->x, *b = ob->x;
    const int64_t rsa = oa->rs, csa = oa->cs, rsb = ob->rs, csb = ob->cs;
    const int serial = acc & ACC_SERIAL;
    acc &= ~ACC_SERIAL;
    const struct canon_isa_kernels *isa = isa_current();
    struct job J = {
        .kern = &isa->k[t], .k = k, .c = c, .ldc = ldc, .alpha = alpha, .beta = beta,
        .acc = acc,
    };
    assert(!tri || !acc);
    /* A packer reads op(A) as given and op(B) transposed: a symmetric
     * op(B)'s stored triangle is the other one in the packer's frame. */
    const int sym_oa = oa->sym;
    const int sym_ob = ob->sym ? ob->sym ^ (CANON_SYM_LOWER | CANON_SYM_UPPER) : 0;
    const int conja = oa->conj ? CANON_CONJ : 0, conjb = ob->conj ? CANON_CONJ : 0;
    /* The sign bit of each float (s, c) or double (d, z) of a packed word. */
    const uint64_t sign = t == CANON_S || t == CANON_C ? 0x8000000080000000ull
                                                       : 0x8000000000000000ull;
    const uint64_t nega = oa->neg ? sign : 0, negb = ob->neg ? sign : 0;
    if (!col) {
        J.m = m, J.n = n, J.tri = tri;
        J.a = a, J.rsa = rsa, J.csa = csa, J.flags_a = conja, J.neg_a = nega, J.sym_a = sym_oa;
        J.b = b, J.rsb = rsb, J.csb = csb, J.flags_b = conjb, J.neg_b = negb, J.sym_b = sym_ob;
    } else { /* C^T = op(B)^T op(A)^T; C's lower triangle is C^T's upper */
        J.m = n, J.n = m, J.tri = tri ? CANON_TRI_LOWER + CANON_TRI_UPPER - tri : 0;
        J.a = b, J.rsa = csb, J.csa = rsb, J.flags_a = CANON_SWAP | conjb, J.neg_a = negb;
        J.b = a, J.rsb = csa, J.csb = rsa, J.flags_b = CANON_SWAP | conja, J.neg_b = nega;
        J.sym_a = sym_ob, J.sym_b = sym_oa;
    }

    const struct canon_kernel *K = J.kern;
    const int64_t mr = K->mr, nr = K->nr;
    int nparts = 1;
    const double work = (double)J.m * (double)J.n * (double)k;
    const int threads = serial ? 1 : canon_threads();
    J.split_n = J.n >= J.m;
    J.units = J.split_n ? (J.n + nr - 1) / nr : (J.m + mr - 1) / mr;
    if (threads > 1 && work >= (double)PAR_MIN_WORK) {
        /* Each part at least half the threshold's work. */
        double by_work = work / (double)(PAR_MIN_WORK / 2);
        nparts = (int)min64(threads, J.units);
        if (by_work < nparts)
            nparts = (int)by_work;
    }
    int64_t part_m = J.split_n ? J.m : (J.units + nparts - 1) / nparts * mr;
    int64_t part_n = J.split_n ? (J.units + nparts - 1) / nparts * nr : J.n;

    J.mc = round_up(min64(force_mc ? force_mc : K->mc, part_m), mr);
    J.kc = min64(force_kc ? force_kc : K->kc, k);
    J.nc = round_up(min64(force_nc ? force_nc : K->nc, part_n), nr);
    J.b_once = k * J.nc * (int64_t)K->packed <= (force_budget ? force_budget : BPACK_BUDGET);
    return canon_pool_run(run_part, &J, nparts, ws_bytes(&J)) == 0 ? 0 : -2;
}

int canon_sgemm(char order, char transa, char transb, int64_t m, int64_t n, int64_t k,
                float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                float beta, float *c, int64_t ldc)
{
    return gemm(CANON_S, order, transa, transb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc,
                0);
}

int canon_dgemm(char order, char transa, char transb, int64_t m, int64_t n, int64_t k,
                double alpha, const double *a, int64_t lda, const double *b, int64_t ldb,
                double beta, double *c, int64_t ldc)
{
    return gemm(CANON_D, order, transa, transb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc,
                0);
}

int canon_cgemm(char order, char transa, char transb, int64_t m, int64_t n, int64_t k,
                const void *alpha, const void *a, int64_t lda, const void *b, int64_t ldb,
                const void *beta, void *c, int64_t ldc)
{
    return gemm(CANON_C, order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                0);
}

int canon_zgemm(char order, char transa, char transb, int64_t m, int64_t n, int64_t k,
                const void *alpha, const void *a, int64_t lda, const void *b, int64_t ldb,
                const void *beta, void *c, int64_t ldc)
{
    return gemm(CANON_Z, order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                0);
}

int canon_gemm_acc(enum canon_type t, char transa, char transb, int64_t m, int64_t n, int64_t k,
                   const void *a, int64_t lda, const void *b, int64_t ldb, void *s, int64_t lds)
{
    static const double one[2] = {1, 0};
    return gemm(t, 'C', transa, transb, m, n, k, one, a, lda, b, ldb, one, s, lds, 1);
}

int canon_gemm_ops(enum canon_type t, int64_t m, int64_t n, int64_t k,
                   const struct canon_gemm_opnd *a, const struct canon_gemm_opnd *b,
                   const void *alpha, void *s, int64_t lds, int flags)
{
    static const double zero[2] = {0, 0};
    if (m <= 0 || n <= 0 || k <= 0)
        return 0;
    return run(t, !(flags & CANON_OPS_ROWS), m, n, k, a, b, alpha, zero, s, lds,
               (alpha ? 2 : 1) | (flags & CANON_OPS_SERIAL ? ACC_SERIAL : 0), 0);
}

int canon_gemm_opnds(enum canon_type t, char uplo, int64_t m, int64_t n, int64_t k,
                     const struct canon_gemm_opnd *a, const struct canon_gemm_opnd *b,
                     const void *alpha, const void *beta, void *c, int64_t ldc)
{
    if (m <= 0 || n <= 0)
        return 0;
    if (k <= 0 || scalar_class(t, alpha) == 1)
        return -2;
    const int tri = uplo == 'L' ? CANON_TRI_LOWER : uplo == 'U' ? CANON_TRI_UPPER : 0;
    return run(t, 1, m, n, k, a, b, alpha, beta, c, ldc, 0, tri);
}
