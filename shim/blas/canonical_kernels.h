/* The per-ISA pieces of the canonical GEMM (shim/blas/canonical_gemm.c is
 * the driver): packing routines and register-tile kernels, one table per
 * instruction set and element type. Exposed so the driver can choose at
 * run time and tests can force a path or a blocking.
 *
 * Every kernel keeps the contract of shim/blas/canonical.h: one accumulator
 * per output element, products added with fma in increasing p.
 */
#ifndef DETSHIM_CANONICAL_KERNELS_H
#define DETSHIM_CANONICAL_KERNELS_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>

#include "blas/canonical.h"

/* The contract needs IEEE arithmetic exactly as written: -ffast-math would
 * reassociate and flush, x87 excess precision would round twice. */
#if defined(__FAST_MATH__)
#error "the canonical kernels must not be built with -ffast-math"
#endif
#if FLT_EVAL_METHOD != 0
#error "the canonical kernels need FLT_EVAL_METHOD == 0 (SSE arithmetic)"
#endif

/* Packed layouts (real types). A block of `rows` x kb elements (row i,
 * column p at x[i*rs + p*cs]) is packed into ceil(rows / r) strips; strip t
 * holds rows t*r .. t*r+r-1 as kb groups of r elements (group p = column
 * p), rows past `rows` zero. A (mr strips) and B^T (nr strips) are packed
 * alike.
 *
 * Complex types: every product term is a lane-wise fma of a pair from A
 * and a pair from B, two steps per p:
 *   s = fma(P1, Q1, s);  s = fma(P2, Q2, s)     (pairs {re, im}, per part)
 * Packed A holds {P1, P2} (4 parts) per element, packed B holds per p the
 * r pairs Q1 and then the r pairs Q2. Straight (op(A) packed as A):
 *   P1 = {a.re, a.re}, P2 = {-a.im, a.im}, Q1 = {b.re, b.im}, Q2 = {b.im, b.re}
 * which is the contract's order. When the driver has swapped the operands
 * (a column-major C computed as C^T = op(B)^T op(A)^T, so the packed "A"
 * holds b and the packed "B" holds a), the contract's order for the
 * imaginary part is not symmetric, and the packers are told (CANON_SWAP):
 *   P1 = {a.re, a.im}, P2 = {-a.im, a.re}, Q1 = {b.re, b.re}, Q2 = {b.im, b.im}
 * which with a = op(B) and b = op(A) gives s.re: a.re*b.re then -a.im*b.im,
 * s.im: a.im*b.re then a.re*b.im, exactly the contract's terms and order.
 * Conjugation (CANON_CONJ) negates the imaginary part first (exact).
 *
 * Accumulator tiles: mr x nr elements, row-major, contiguous (the partial
 * sums s between K blocks, or a tile kept apart for an edge of C).
 */
enum { CANON_CONJ = 1, CANON_SWAP = 2 };

struct canon_kernel {
    int mr, nr;            /* register tile */
    int64_t mc, kc, nc;    /* default cache blocking */
    size_t elem;           /* bytes per element */
    size_t packed;         /* bytes per element in a packed strip */
    /* Pack a rows x kb block of op(A) into strips of mr rows, and of
     * op(B)^T into strips of nr rows (called with r = mr or nr); flags:
     * CANON_CONJ, CANON_SWAP (complex only). */
    void (*pack_a)(int r, int64_t rows, int64_t kb, const void *x, int64_t rs, int64_t cs,
                   int flags, void *dst);
    void (*pack_b)(int r, int64_t rows, int64_t kb, const void *x, int64_t rs, int64_t cs,
                   int flags, void *dst);
    /* Accumulates kb products into a tile: starts from acc (a tile) or from
     * zero when acc is NULL, stores the sums to out (a tile; may be acc). */
    void (*tile)(int64_t kb, const void *ap, const void *bp, const void *acc, void *out);
    /* The same, then applies alpha/beta and stores the full mr x nr tile
     * into C (row stride ldc elements, columns contiguous). */
    void (*tile_c)(int64_t kb, const void *ap, const void *bp, const void *acc, void *c,
                   int64_t ldc, const void *alpha, const void *beta);
    /* Applies alpha/beta to the top-left rows x cols of a tile of sums s
     * and stores them into C. */
    void (*finish)(int64_t rows, int64_t cols, const void *s, void *c, int64_t ldc,
                   const void *alpha, const void *beta);
};


struct canon_isa_kernels {
    const char *name;
    struct canon_kernel k[CANON_NTYPES];
};

extern const struct canon_isa_kernels canon_scalar_kernels;
extern const struct canon_isa_kernels canon_avx2_kernels;
extern const struct canon_isa_kernels canon_avx512_kernels;

/* Overrides the cache blocking of every kernel, and the bytes up to which
 * a panel of B is packed once for all of K (0 keeps a default), so tests
 * can force many K blocks, edge tiles and per-slice packing on small
 * shapes. mc and nc are rounded up to multiples of the register tile. Not
 * thread-safe against running calls; for tests only. */
void canon_set_blocking(int64_t mc, int64_t kc, int64_t nc, int64_t b_budget);

/* The GEMM's sums continued from given ones (canonical_gemm.c): for the
 * column-major m x n S (ld lds), S_ij = the contract's sum over p of
 * op(A)_ip*op(B)_pj started from S_ij instead of +0, stored raw (no
 * alpha or beta), in any type; k == 0 leaves S as it is. The level-3
 * drivers use it to run one element's chain through several calls.
 * Returns as canon_sgemm. */
int canon_gemm_acc(enum canon_type t, char transa, char transb, int64_t m, int64_t n, int64_t k,
                   const void *a, int64_t lda, const void *b, int64_t ldb, void *s, int64_t lds);

/* An operand of canon_gemm_ops: element (i, p) at x + i*rs + p*cs
 * elements (op(B)'s (p, j) at x + p*rs + j*cs), conjugated when conj,
 * then negated when neg (exact: trsm's products subtract). The stride of
 * p may be negative: k then runs backward in memory. */
struct canon_gemm_opnd {
    const void *x;
    int64_t rs, cs;
    int conj, neg;
    /* CANON_SYM_LOWER / _UPPER: the operand is a symmetric S whose
     * element (u, v) is at x + u*rs + v*cs only in the stored triangle
     * (u >= v / u <= v), elsewhere read as S(v, u) (symm); with
     * CANON_SYM_HERM too, Hermitian: conj(S(v, u)) there, and the
     * diagonal's imaginary parts read as +0 (hemm); 0: as above. */
    int sym;
};
enum { CANON_SYM_LOWER = 1, CANON_SYM_UPPER = 2, CANON_SYM_HERM = 4 };
/* canon_gemm_acc on operands given by their strides, for the drivers of
 * trmm and trsm (canonical_l3_tri.c): S_ij (column-major, ld lds; flag
 * CANON_OPS_ROWS: row-major) gets the contract's sum over p of
 * op(A)_ip*op(B)_pj started from S_ij, and stored raw (alpha NULL) or as
 * CMUL(alpha, s); CANON_OPS_SERIAL: on the calling thread only. m, n or
 * k <= 0 does nothing. Returns 0 or -2 (workspace), as canon_sgemm. */
enum { CANON_OPS_ROWS = 1, CANON_OPS_SERIAL = 2 };
int canon_gemm_ops(enum canon_type t, int64_t m, int64_t n, int64_t k,
                   const struct canon_gemm_opnd *a, const struct canon_gemm_opnd *b,
                   const void *alpha, void *s, int64_t lds, int flags);
/* C = alpha*op(A)*op(B) + beta*C (column-major, ld ldc) on operands
 * given by their strides (a symmetric one included), every element the
 * GEMM's, as canon_sgemm computes it; over all of C (uplo 0), or only
 * its lower ('L') or upper ('U') triangle, the other never written and
 * its values never used (syrk). alpha != 0 and k > 0, else -2 (nothing
 * done). Returns 0, or -2 (workspace) with nothing written. */
int canon_gemm_opnds(enum canon_type t, char uplo, int64_t m, int64_t n, int64_t k,
                     const struct canon_gemm_opnd *a, const struct canon_gemm_opnd *b,
                     const void *alpha, const void *beta, void *c, int64_t ldc);

/* Grows the calling thread's GEMM workspace (the one canon_pool_run
 * gives a part it runs on this thread) to the most any canon_gemm_ops or
 * canon_gemm_acc call of type t with m, n and k at most maxdim can ask
 * for, so that such calls on this thread cannot fail for memory
 * afterwards: a driver that overwrites its operand in pieces (trmm, trsm)
 * reserves before the first piece. Returns 0, or -1 when memory is
 * short. */
int canon_gemm_reserve(enum canon_type t, int64_t maxdim);

/* A packer of struct canon_kernel. */
typedef void (*canon_pack_fn)(int r, int64_t rows, int64_t kb, const void *x, int64_t rs,
                              int64_t cs, int flags, void *dst);
/* Packs rows row0 .. row0+rows-1 x p = p0 .. p0+kb-1 of a symmetric
 * (herm: Hermitian) matrix M stored in one triangle (lower: row >= p) at
 * x + row*rs + p*cs, through the packer fn as it packs any operand into
 * strips of r rows (canonical_gemm_shape.c). */
void canon_pack_sym(canon_pack_fn fn, int r, int64_t row0, int64_t rows, int64_t p0, int64_t kb,
                    const char *x, int64_t rs, int64_t cs, int lower, int herm, int flags,
                    size_t es, size_t ps, char *dst);
/* A Hermitian matrix's complex element e (es bytes) read across the
 * diagonal: conjugated; or on it (diag), its imaginary part +0. */
void canon_herm_fix(void *e, size_t es, int diag);
/* A triangle of a GEMM's C in its row-major frame: the elements with
 * column <= row (CANON_TRI_LOWER) or column >= row (CANON_TRI_UPPER).
 * canon_tri_cover: whether rows i .. i+h-1 x columns j .. j+w-1 hold
 * none of it (0), only it (1) or some (2); 1 for tri 0. canon_tri_run:
 * the columns lo .. hi-1 of row r of a tile (row i, column j at its top
 * left, cols wide) that are in it. */
enum { CANON_TRI_LOWER = 1, CANON_TRI_UPPER = 2 };
int canon_tri_cover(int tri, int64_t i, int64_t h, int64_t j, int64_t w);
void canon_tri_run(int tri, int64_t i, int64_t j, int64_t r, int64_t cols, int64_t *lo,
                   int64_t *hi);

/* Generic packers, shared by the kernel tables. */
void canon_pack_f32(int r, int64_t rows, int64_t kb, const void *x, int64_t rs, int64_t cs,
                    int flags, void *dst);
void canon_pack_f64(int r, int64_t rows, int64_t kb, const void *x, int64_t rs, int64_t cs,
                    int flags, void *dst);
void canon_pack_c64_a(int r, int64_t rows, int64_t kb, const void *x, int64_t rs, int64_t cs,
                      int flags, void *dst);
void canon_pack_c64_b(int r, int64_t rows, int64_t kb, const void *x, int64_t rs, int64_t cs,
                      int flags, void *dst);
void canon_pack_c128_a(int r, int64_t rows, int64_t kb, const void *x, int64_t rs, int64_t cs,
                       int flags, void *dst);
void canon_pack_c128_b(int r, int64_t rows, int64_t kb, const void *x, int64_t rs, int64_t cs,
                       int flags, void *dst);

/* Runs fn(arg, part, nparts, ws) for part = 0 .. nparts-1 and returns when
 * all are done (shim/blas/canonical_pool.c). The calling thread and the
 * pool's workers claim parts one at a time, so a worker that wakes late
 * leaves more to the caller; workers run with the caller's MXCSR
 * (rounding mode, flush-to-zero). Each running part has a workspace of
 * ws_bytes (64-byte aligned) to itself. When the pool is busy with another
 * caller or cannot start workers, every part runs on the calling thread.
 * Returns 0, or -1 with nothing run when workspace cannot be allocated.
 * nparts is at most CANON_MAX_THREADS. */
int canon_pool_run(void (*fn)(void *arg, int part, int nparts, void *ws), void *arg,
                   int nparts, size_t ws_bytes);
/* The same with more parts than threads: at most `threads` threads (the
 * caller's included) claim the nparts parts, so a thread that is late or
 * descheduled leaves its share to the others, whose parts are small.
 * nparts is at most CANON_MAX_PARTS. */
#define CANON_MAX_PARTS 1024
int canon_pool_run_on(void (*fn)(void *arg, int part, int nparts, void *ws), void *arg,
                      int nparts, int threads, size_t ws_bytes);

/* Parts the pool's workers (not callers) have run since start-up, so tests
 * can tell that a multi-threaded run really used more than one thread. */
uint64_t canon_pool_worker_parts(void);
/* The calling thread's scratch memory of at least `bytes` (64-byte
 * aligned, contents not kept from call to call), apart from the pool's
 * workspaces, so a driver may hold it across canon_pool_run calls. Kept
 * for later calls (no fresh pages to fault in each time) and freed when
 * the thread exits; NULL if memory is short. */
void *canon_scratch(size_t bytes);
/* Grows the calling thread's workspace for the parts canon_pool_run runs
 * on it to at least `bytes` (canon_gemm_reserve); 0, or -1 when memory is
 * short. */
int canon_pool_reserve(size_t bytes);
/* Fork handler (the lifecycle calls it): a child has none of the parent's
 * workers and no lock they held; its pool starts afresh. */
void canon_pool_fork_child(void);


/* ---- the other routines' kernels ------------------------------------ */

/* The per-ISA inner loops of the canonical level-1/2/3 BLAS (the drivers
 * in shim/blas/canonical_l1.c, l2.c and l3.c check arguments, map layouts,
 * walk strides and apply alpha/beta; these do the long loops). One table
 * per instruction set: shim/blas/canonical_blas_scalar.c (plain C with
 * fma()) and canonical_blas_avx2.c (the same C built for AVX2 + FMA, with
 * hand-written vector loops for the hot kernels). Every entry does
 * exactly the operations of the contract in shim/blas/canonical.h, so
 * the tables are interchangeable bit for bit.
 *
 * Conventions: vectors are passed as a pointer to logical element 0 and a
 * signed step (element i at p + i*inc, any sign); complex arrays are
 * interleaved {re, im} of the base type and steps count complex elements.
 */

/* The lane count of every LANES reduction, for every type and path. */
#define CANON_LANES 16
/* Terms per chunk of a LANES reduction (the contract's C): chunks start
 * at multiples of it, so at multiples of the lane count. */
#define CANON_CHUNK 32768
/* A reduction of fewer terms than this runs on the calling thread:
 * waking a worker would cost more than it saves (4 chunks). */
#define CANON_CHUNKS_PAR_MIN ((int64_t)1 << 17)

/* The running sums of a LANES reduction of any type: 16 lanes (complex:
 * 16 {re, im} pairs). */
union canon_lanes {
    float s[2 * CANON_LANES];
    double d[2 * CANON_LANES];
};

/* How two nodes of the chunk tree join: lane-wise float or double sums,
 * or the maximum held in d[0] (amax, exact in any order). */
enum canon_join { CANON_JOIN_ADD_F, CANON_JOIN_ADD_D, CANON_JOIN_MAX_D };

/* A reduction of n terms in chunks (canonical_chunks.c): chunk(arg, lo,
 * len, acc) adds terms lo .. lo+len-1 (lo a multiple of CANON_CHUNK,
 * len <= CANON_CHUNK) into acc, which is +0 on entry. It may run on any
 * thread of the pool, several at once, and must only read shared data. */
struct canon_chunked {
    int64_t n;
    enum canon_join how;
    void (*chunk)(void *arg, int64_t lo, int64_t len, union canon_lanes *acc);
    void *arg;
};

/* *out = the chunks of R joined by the contract's fixed tree over the
 * chunk index (+0 lanes when n <= 0). Runs on up to canon_threads()
 * threads when n is long; same bits on any number. */
void canon_chunked_sum(const struct canon_chunked *R, union canon_lanes *out);
/* Joins two nodes of the tree: a = a + b lane by lane, or the larger of
 * two maxima. */
void canon_lanes_join(enum canon_join how, union canon_lanes *a, const union canon_lanes *b);
/* Where the tree splits leaves lo .. lo+count-1 (count >= 2): after the
 * largest power of two below count. */
int64_t canon_chunk_split(int64_t count);
/* The contract's tree over the 16 lanes of acc (complex: re and im
 * alike), stored as one element of type t at result. */
void canon_blas_lanes_result(enum canon_type t, union canon_lanes *acc, void *result);

/* Columns per dot_cols call: gemv 'T' runs this many column dots side
 * by side, sharing the loads of x. */
#define CANON_COLS 4

/* A table holds one set of kernels per element type (enum canon_type,
 * shim/blas/canonical.h). */

/* Flags of the sequential dot: conjugate u, conjugate v (complex only),
 * negate u (after any conjugation). */
#define CANON_CONJ_U 1
#define CANON_CONJ_V 2
#define CANON_NEG_U 4

/* One type's kernels. Pointers are to that type's elements (complex: to
 * {re, im} pairs of the base type); scalars are passed by pointer to one
 * element. `conj` conjugates the matrix or x elements (ignored for real
 * types). Entries marked "real" are NULL for complex types: the drivers
 * run them on the 2n reals of a contiguous complex vector. */
struct canon_blas_kern {
    /* LANES accumulation over n contiguous elements (conj: of x): element
     * e of the call goes to lane e mod 16 (the driver starts every call at
     * a multiple of 16), acc holds the 16 running lane sums (complex: lane
     * l at acc[l] as a pair). No tree; the driver adds the lanes. */
    void (*dot)(int64_t n, const void *x, const void *y, int conj, void *acc);
    /* dot of each of ncols <= CANON_COLS columns with one vector x:
     * column c is a + c*lda (n contiguous elements, conjugated when
     * conj), and its products go to acc[c] as dot's would. */
    void (*dot_cols)(int64_t n, int ncols, const void *a, int64_t lda, const void *x, int conj,
                     union canon_lanes *acc);
    /* Real: LANES update s = s + |x_e|. */
    void (*asum)(int64_t n, const void *x, void *acc);
    /* Real: LANES update s = fma(t, t, s), t = (x_e * scale[0]) * scale[1]. */
    void (*sumsq)(int64_t n, const void *x, const void *scale, void *acc);
    /* Real: *m = the largest |x_e| that is not NaN, +0 if none. */
    void (*amax)(int64_t n, const void *x, void *m);

    /* y_i = CMAC(y_i, alpha, x_i) for i = 0 .. n-1 in this order. */
    void (*axpy)(int64_t n, const void *alpha, const void *x, int64_t incx, void *y, int64_t incy);
    /* x_i = CMUL(alpha, x_i). */
    void (*scal)(int64_t n, const void *alpha, void *x, int64_t incx);

    /* Column sweep: for j = 0 .. n-1, for every i < m:
     * s_i = CMAC(s_i, A_ij, x_j) with A_ij = a[i + j*lda]; s is m
     * contiguous sums, carried in and out. */
    void (*gemv_n)(int64_t m, int64_t n, const void *a, int64_t lda, int conj, const void *x,
                   int64_t incx, void *s);
    /* Column dots: for every j < n, for i = 0 .. m-1:
     * s_j = CMAC(s_j, A_ij, x_i); s is n sums, carried in and out. */
    void (*gemv_t)(int64_t m, int64_t n, const void *a, int64_t lda, int conj, const void *x,
                   int64_t incx, void *s);
    /* One column of a rank-1 update: a_i = CMAC(a_i, x_i, *t) (conj: of
     * x_i), i = 0 .. m-1, a contiguous. */
    void (*ger_col)(int64_t m, const void *x, int64_t incx, int conj, const void *t, void *a);
    /* *s = CMAC(*s, u_p, v_p) for p = 0 .. n-1 in order (flags CANON_*). */
    void (*dot_seq)(int64_t n, const void *u, int64_t incu, const void *v, int64_t incv, int flags,
                    void *s);
};

struct canon_blas_isa {
    const char *name;
    struct canon_blas_kern t[CANON_NTYPES];
};

extern const struct canon_blas_isa canon_blas_scalar_kernels;
extern const struct canon_blas_isa canon_blas_avx2_kernels;
/* Built on first use from the AVX2 table (canonical_blas_avx512.c); the
 * _auto table is the one "auto" picks: the same, with the loops that
 * measured faster on AVX2 taken from there (same bits either way). */
const struct canon_blas_isa *canon_blas_avx512_kernels(void);
const struct canon_blas_isa *canon_blas_avx512_auto_kernels(void);

/* The table in use (canonical_l1.c), chosen by canon_blas_set_isa. */
const struct canon_blas_isa *canon_blas_kernels(void);

/* ---- shared by the drivers (canonical_l1.c) ------------------------------
 * Scalars of the contract's formulas, one element at a time, for any type:
 * pointers to one element (complex: a {re, im} pair). */

/* Bytes per element; whether the type is complex; the real type of its
 * parts (S for C, D for Z, itself for real types). */
size_t canon_blas_size(enum canon_type t);
int canon_blas_complex(enum canon_type t);
enum canon_type canon_blas_real(enum canon_type t);
/* The contract's zero and one tests (+0 and -0 alike; complex: both parts). */
int canon_blas_is_zero(enum canon_type t, const void *v);
int canon_blas_is_one(enum canon_type t, const void *v);
/* *out = CMUL(u, v); out may be v. */
void canon_blas_mul(enum canon_type t, const void *u, const void *v, void *out);
/* AB for a sum s, alpha != 0: beta == 0: *c = CMUL(alpha, s), else
 * *c = CMUL(beta, *c) + alpha*s by CMAC. */
void canon_blas_ab(enum canon_type t, const void *alpha, const void *beta, const void *s,
                   void *c);
/* AB with alpha == 0 on n elements c_i = c[i*inc]: beta == 0 stores
 * zero, beta == 1 does nothing, else c_i = CMUL(beta, c_i). */
void canon_blas_scale(enum canon_type t, int64_t n, const void *beta, void *c, int64_t inc);
/* Copies logical elements i .. i+len-1 of x (element 0 at x0, step inc,
 * elements of `size` bytes) to buf. */
void canon_blas_gather(size_t size, const void *x0, int64_t inc, int64_t i, int64_t len, void *buf);
/* *s = *s + *v (each part), the unit-diagonal term. */
void canon_blas_add(enum canon_type t, void *s, const void *v);
/* *q = CDIV(s, d) (conj_d: by conj(d)); real: s / d. q may be s. */
void canon_blas_div(enum canon_type t, void *q, const void *s, const void *d, int conj_d);

/* How the x values of a sweep enter the products (canonical_l3.c). */
#define X_NEG 1  /* negated (s -= ...) */
#define X_CONJ 2 /* conjugated */

/* Column sweep: for p = 0 .. cnt-1 in order, for every i < rows:
 * s_i = CMAC(s_i, M_ip, x_p), M column-major (ldm), x_p = x[p*incx]
 * negated and conjugated as how says (canonical_l3.c). */
void canon_blas_sweep(const struct canon_blas_kern *kern, enum canon_type t, int64_t rows,
                      int64_t cnt, const void *mat, int64_t ldm, const void *x, int64_t incx,
                      int how, void *s);

/* An update of the uplo triangle of the n x n column-major C by the
 * canonical GEMM (canonical_l3_gemm.c): C = alpha*op(A)*op(B) + beta*C
 * there, op by ta and tb ('N', 'T', 'C'), k the inner dimension; herm
 * reads the diagonal's imaginary part as 0 and stores it as 0 (her2k).
 * One GEMM call on the triangle (canon_gemm_opnds). Returns 0, or -2
 * when its workspace cannot be allocated: nothing is then written but,
 * for herm, the zeros in the diagonal's imaginary parts, which the
 * sequential kernel the caller then runs reads as zero anyway (the same
 * bits). */
struct canon_tri_update {
    enum canon_type t;
    int upper, herm;
    int64_t n, k;
    char ta, tb;
    const void *alpha, *a;
    int64_t lda;
    const void *b;
    int64_t ldb;
    const void *beta;
};
int canon_l3_tri_update(const struct canon_tri_update *u, void *c, int64_t ldc);
/* symm (herm: hemm) on the canonical GEMM, column-major after the
 * mapping: left: C = alpha*A*B + beta*C (A m x m), else alpha*B*A +
 * beta*C (A n x n), A's lower or upper triangle stored; alpha != 0.
 * Returns as above. */
int canon_l3_symm_gemm(enum canon_type t, int herm, int left, int lower, int64_t m, int64_t n,
                       const void *alpha, const void *a, int64_t lda, const void *b, int64_t ldb,
                       const void *beta, void *c, int64_t ldc);

/* Column dots: for every j < cols, for p = 0 .. cnt-1 in order:
 * s_j = CMAC(s_j, M_pj, x_p), x as how says (canonical_l3.c). */
void canon_blas_dots(const struct canon_blas_kern *kern, enum canon_type t, int64_t cnt,
                     int64_t cols, const void *mat, int64_t ldm, const void *x, int64_t incx,
                     int how, void *s);

/* Whether syrk, syr2k, her2k, symm, trmm and trsm may run on the GEMM
 * core (default 1); 0 makes them run their sequential kernels, so tests
 * can compare the two. Not thread-safe against running calls; for tests
 * only. */
void canon_l3_use_gemm(int on);
int canon_l3_gemm_on(void);

struct canon_blas_tri;
/* trmm (solve = 0) or trsm (1) on the canonical GEMM core
 * (canonical_l3_tri.c), column-major after trm_args, alpha != 0, in the
 * contract's order, every side, uplo, trans and diag. Returns 0 when
 * done, 1 when canon_l3_use_gemm(0) turned the core off, -2 when
 * workspace cannot be allocated; for 1 and for -2 before B is touched
 * (the usual case) the caller runs its own kernel, with the same bits. */
int canon_l3_tri_gemm(enum canon_type t, int solve, char side, const struct canon_blas_tri *tri,
                      int64_t m, int64_t n, const void *alpha, const void *a, int64_t lda,
                      void *b, int64_t ldb);

/* The diagonal-block kernels of trmm and trsm (canonical_l3_leaf.c), on
 * the canonical GEMM's instruction-set path. A tile holds nb <= 
 * CANON_LEAF_NB positions (rows of B for side 'L', columns for 'R', in
 * the order the chains take them) of CANON_LEAF_BYTES each: the lanes,
 * independent elements of the other dimension (real: bytes / size values;
 * complex: that many bytes as a plane of real parts, then one of
 * imaginary parts). coef is nb x nb, (c, q) at c*nb + q: what input
 * position q is multiplied by in output c's chain (only the triangle the
 * kind reads); diag holds the diagonal's nb elements (NULL: a unit
 * diagonal, no product). swap (complex): the lane value is the product's
 * first factor (side 'R'), else coef's. Each lane of output c:
 *   CANON_LEAF_SOLVE (trsm, t in place): s = t_c, s = CMAC(s, coef_cq,
 *     t_q) for q = 0 .. c-1 (the solved ones), t_c = CDIV(s, diag_c);
 *   CANON_LEAF_LOWER (trmm): s = o_c, the terms q = 0 .. c-1, then the
 *     diagonal's (CMAC with diag_c, or s + t_c), o_c = s;
 *   CANON_LEAF_UPPER (trmm): s = o_c, the diagonal's term, then q = c+1
 *     .. nb-1, o_c = s;
 * trmm then stores CMUL(alpha, s) when alpha is not NULL. */
/* 64 since 2026-12-03 (32 before): with the kernels' sums in registers a
 * wider leaf beat more GEMM calls of a short k, strmm and dtrmm n = 1024
 * 2-5% faster on an AVX2 Zen 3. The leaf size changes no bit. */
#define CANON_LEAF_NB 64
#define CANON_LEAF_BYTES 512
enum { CANON_LEAF_SOLVE, CANON_LEAF_LOWER, CANON_LEAF_UPPER };
struct canon_leaf {
    enum canon_type t;
    int kind, swap, nb;
    const void *coef, *diag, *alpha;
};
void canon_leaf_solve(const struct canon_leaf *L, void *t);
void canon_leaf_mul(const struct canon_leaf *L, const void *t, void *o);
/* Moves nb positions x nl lanes of a real type between B (a position
 * steps ps = 1 or -1, a lane ls elements: side 'L') and a tile (in = 1:
 * into it), with vector transposes. Returns 0, or -1 where it does not
 * apply (complex, another ps, no AVX2): the caller moves them itself. */
int canon_leaf_tile_rows(enum canon_type t, int nb, int64_t nl, void *m, int64_t ps, int64_t ls,
                         void *tile, int in);

/* Upper-cases a BLAS character argument (the BLAS accepts either case). */
static inline char canon_blas_upper(char c)
{
    return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* A triangular operand of trmv, trsv, trmm or trsm after argument checks
 * and any row-major mapping. op(A)_ij is a[j + i*lda] when transposed,
 * else a[i + j*lda], conjugated when conj. */
struct canon_blas_tri {
    int transposed, conj, unit;
    int upper; /* op(A) is upper triangular */
};

/* op(A)_ij (before conjugation) is element i*ri + j*rj of a: the steps of
 * op(A)'s row index (ri) and column index (rj) for leading dimension lda. */
static inline int64_t canon_blas_tri_ri(const struct canon_blas_tri *tri, int64_t lda)
{
    return tri->transposed ? lda : 1;
}

static inline int64_t canon_blas_tri_rj(const struct canon_blas_tri *tri, int64_t lda)
{
    return tri->transposed ? 1 : lda;
}

/* Parses uplo ('U'/'L'), trans ('N'/'T'/'C') and diag ('N'/'U') of type t.
 * flip_uplo swaps U and L; map_trans then also maps trans as the row-major
 * gemv does ('N' <-> 'T', 'C' -> conjugate without transpose). Returns 0,
 * or -1 for a bad character. */
int canon_blas_tri(enum canon_type t, char uplo, char trans, char diag, int flip_uplo,
                   int map_trans, struct canon_blas_tri *out);

/* The address of logical element 0 of an n-element vector with step inc
 * (n >= 1): the BLAS passes the lowest address, element 0 is at the top
 * when inc < 0. */
static inline const void *canon_blas_vec0(const void *x, int64_t n, int64_t inc, size_t size)
{
    return inc < 0 ? (const char *)x + (size_t)((n - 1) * -inc) * size : x;
}

/* The i-th element of an array of `size`-byte elements (i may be < 0). */
static inline const void *canon_blas_at(const void *x, int64_t i, size_t size)
{
    return (const char *)x + i * (int64_t)size;
}

#endif
