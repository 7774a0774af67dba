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

/* Overrides the cache blocking of every kernel, and the bytes up to which
 * a panel of B is packed once for all of K (0 keeps a default), so tests
 * can force many K blocks, edge tiles and per-slice packing on small
 * shapes. mc and nc are rounded up to multiples of the register tile. Not
 * thread-safe against running calls; for tests only. */
void canon_set_blocking(int64_t mc, int64_t kc, int64_t nc, int64_t b_budget);

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

/* Parts the pool's workers (not callers) have run since start-up, so tests
 * can tell that a multi-threaded run really used more than one thread. */
uint64_t canon_pool_worker_parts(void);
/* Fork handler (the lifecycle calls it): a child has none of the parent's
 * workers and no lock they held; its pool starts afresh. */
void canon_pool_fork_child(void);

#endif
