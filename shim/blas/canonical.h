/* The canonical kernels' contracts, one header for the whole family:
 * ?gemm first, then every other routine (levels 1 to 3), with one
 * precision enum (canon_type) and one instruction-set choice. Canonical
 * GEMM: detshim's own matrix multiply with one documented
 * evaluation order, so its results are the same bits for every thread
 * count, every instruction-set path and every cache blocking. The BLAS
 * interceptors call it in canonical mode instead of the vendor kernel
 * (shim/blas/canonical_gemm.c; kernels per ISA in canonical_gemm_*.c).
 *
 * THE CONTRACT (what canonical mode guarantees for ?gemm)
 *
 * Notation: C is m x n, op(A) is m x k, op(B) is k x n, where op(X) is X
 * ('N'), X transposed ('T') or X conjugate-transposed ('C'; the same as
 * 'T' for real types). fma(x, y, z) is x*y + z rounded once, in the output
 * precision (float for s/c, double for d/z). The bits stated are those of
 * the default floating-point environment (round to nearest even, no
 * flush-to-zero). The caller's MXCSR is used as it is, on every thread of
 * the call, so a program that sets another rounding mode or FTZ/DAZ still
 * gets the same bits for any thread count.
 *
 * Real (s, d). For each output element (i, j), independently:
 *   1. If alpha == 0 or k == 0: no product is formed (A and B are not
 *      read) and  C[i][j] = beta * C[i][j],  except that beta == 0 stores
 *      +0 without reading C. If moreover beta == 1, C is left untouched
 *      (the reference BLAS's quick return).
 *   2. Otherwise the dot product is accumulated in order:
 *        s = +0;  for p = 0, 1, ..., k-1:  s = fma(op(A)[i][p], op(B)[p][j], s)
 *   3. and applied:
 *        beta == 0:  C[i][j] = alpha * s            (old C never read:
 *                                                    NaN/Inf in C ignored)
 *        otherwise:  C[i][j] = fma(alpha, s, beta * C[i][j])
 *                    (beta * C[i][j] rounded first, then one fma).
 * A zero test (alpha == 0, beta == 0) is true for +0 and -0 alike. NaN and
 * Inf in A, B, alpha and beta propagate as IEEE arithmetic in this order
 * makes them. m == 0 or n == 0 does nothing. (k == 0 is case 1, as in the
 * reference BLAS, rather than s = 0 in step 3, which would turn beta*C
 * = -0 into +0 and, for alpha = Inf, into NaN.)
 *
 * Complex (c, z). Values are {re, im} pairs; a = op(A)[i][p] after the
 * conjugation of 'C' (which negates a's imaginary part exactly), b =
 * op(B)[p][j]. "alpha == 0" means both parts are zero (+0 or -0).
 *   1. If alpha == 0 or k == 0: C = beta*C by the t formula below, except
 *      that beta == 0 stores (+0, +0) without reading C, and beta == 1
 *      leaves C untouched.
 *   2. s = (+0, +0); for p = 0, 1, ..., k-1, in this order:
 *        s.re = fma( a.re, b.re, s.re);  s.re = fma(-a.im, b.im, s.re);
 *        s.im = fma( a.re, b.im, s.im);  s.im = fma( a.im, b.re, s.im);
 *   3. beta == 0:  r.re = alpha.re * s.re;  r.re = fma(-alpha.im, s.im, r.re);
 *                  r.im = alpha.re * s.im;  r.im = fma( alpha.im, s.re, r.im);
 *      otherwise:  t.re = beta.re * c.re;   t.re = fma(-beta.im, c.im, t.re);
 *                  t.im = beta.re * c.im;   t.im = fma( beta.im, c.re, t.im);
 *                  r.re = fma( alpha.re, s.re, t.re);  r.re = fma(-alpha.im, s.im, r.re);
 *                  r.im = fma( alpha.re, s.im, t.im);  r.im = fma( alpha.im, s.re, r.im);
 *      and C[i][j] = r.
 *
 * How the guarantee is kept (why blocking and threads cannot change bits):
 * every path keeps one accumulator per output element and feeds it the k
 * products in increasing p. Blocking over M and N only reorders which
 * elements are computed when. K is blocked, but the partial s is stored
 * in its own precision and reloaded, which is exact. Threads split C into
 * disjoint blocks, never K. No split-K, no pairwise or tree sums, no
 * reassociation; every multiply-add is an explicit fma (vector FMA lanes
 * round like fma()), and products that are not fused are separate
 * statements, so no compiler contraction can change them.
 */
#ifndef DETSHIM_CANONICAL_H
#define DETSHIM_CANONICAL_H

#include <stddef.h>
#include <stdint.h>

#include "detshim.h"

/* The four BLAS precisions, one enum for the whole family: the canonical
 * kernels' tables (one set per type) and the interceptors' routine
 * descriptions (shim/blas/blas.h) index by it. */
enum canon_type { CANON_S, CANON_D, CANON_C, CANON_Z, CANON_NTYPES };

/* The instruction-set paths both kernel families have (canonical_isa.c):
 * each keeps one kernel table per path, indexed by this. */
enum canon_isa_path { CANON_ISA_SCALAR, CANON_ISA_AVX2, CANON_ISA_AVX512, CANON_ISA_NPATHS };
/* The two kernel families, which may choose their automatic paths apart. */
enum canon_isa_family { CANON_FAMILY_GEMM, CANON_FAMILY_BLAS };
/* The best path the CPU can run (AVX-512 only with the OS's zmm state). */
int canon_isa_best(void);
/* Whether the CPU and OS can run the AVX-512 kernels. */
int canon_cpu_has_avx512(void);
/* The path "auto" gives a family: the fastest this CPU can run, as
 * measured (docs/benchmarks.md); never one it cannot. */
int canon_isa_auto(enum canon_isa_family family);
/* The path a name asks for: "scalar", "avx2", "avx512", or NULL / "auto"
 * for canon_isa_auto(family); -1 when the name is unknown or the CPU
 * lacks the instructions. */
int canon_isa_parse(const char *isa, enum canon_isa_family family);

/* C = alpha*op(A)*op(B) + beta*C in the contract's order. order: 'R'
 * (row-major, as cblas CblasRowMajor) or 'C' (column-major, as Fortran);
 * transa/transb: 'N', 'T' or 'C' (lower case accepted, as the Fortran BLAS
 * does). Leading dimensions are checked as the BLAS checks them: at least
 * max(1, length of a stored row or column), e.g. lda >= max(1, m) for a
 * column-major, untransposed A.
 * Returns 0; -1 for arguments the BLAS would reject (bad character,
 * negative dimension, short leading dimension), with C untouched, so the
 * caller can let the vendor BLAS report the error; -2 with C untouched when
 * workspace cannot be allocated. Thread-safe. Packing workspace (under
 * about 20 MiB a thread, however large the operands) is kept per thread
 * for later calls and freed when the thread exits; the pool's workers keep
 * theirs for the life of the process. */
int canon_sgemm(char order, char transa, char transb, int64_t m, int64_t n, int64_t k,
                float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                float beta, float *c, int64_t ldc);
int canon_dgemm(char order, char transa, char transb, int64_t m, int64_t n, int64_t k,
                double alpha, const double *a, int64_t lda, const double *b, int64_t ldb,
                double beta, double *c, int64_t ldc);

/* Complex versions: matrices of interleaved {re, im} pairs (float[2] for
 * c, double[2] for z), alpha and beta point at one such pair. Same returns
 * as canon_sgemm. */
int canon_cgemm(char order, char transa, char transb, int64_t m, int64_t n, int64_t k,
                const void *alpha, const void *a, int64_t lda, const void *b, int64_t ldb,
                const void *beta, void *c, int64_t ldc);
int canon_zgemm(char order, char transa, char transb, int64_t m, int64_t n, int64_t k,
                const void *alpha, const void *a, int64_t lda, const void *b, int64_t ldb,
                const void *beta, void *c, int64_t ldc);

/* Threads a call may use, the caller's own included (default 1; values
 * below 1 mean 1, above CANON_MAX_THREADS mean that). Workers are started
 * on first need and kept, and compute with the calling thread's SSE
 * control word (rounding mode, flush-to-zero); products of fewer than
 * 2^18 multiply-adds run on the calling thread only. Changes no result
 * bit. */
#define CANON_MAX_THREADS 64
void canon_set_threads(int n);
int canon_threads(void);

/* digest_bytes(p, len) (trace/digest.h), a long run's share of it read by
 * the canon_threads() threads of the pool (shim/blas/canonical_digest.c):
 * the same bits at any thread count. */
detshim_digest canon_digest_bytes(const void *p, size_t len);
/* out[i] = digest_bytes(p[i], len[i]) for i < n (digest_runs_shared):
 * each run shorter than canon_digest_bytes splits read by one thread of
 * the pool, the longest first; the longer ones split as there. */
void canon_digest_runs(size_t n, const void *const *p, const size_t *len, detshim_digest *out);

/* The instruction-set path: "scalar" (plain C with fma(), any x86-64),
 * "avx2" (AVX2 + FMA) or "avx512" (AVX-512F/DQ/VL/BW with the OS's zmm
 * state). NULL or "auto" picks canon_isa_auto(CANON_FAMILY_GEMM), which
 * is also the default. Returns 0, or -1 when the name is unknown or the
 * CPU lacks the instructions (the path is then unchanged). Changes no
 * result bit. */
int canon_set_isa(const char *isa);
/* The path in use: "scalar", "avx2" or "avx512". */
const char *canon_isa(void);


/* ---- the other routines: BLAS levels 1 to 3 beyond ?gemm ---------- */

/* Canonical level-1, level-2 and level-3 BLAS (every routine the shim
 * covers except ?gemm, which is shim/blas/canonical.h): detshim's own kernels
 * with one documented evaluation order each, so their results are the same
 * bits for every instruction-set path and every thread count. The BLAS
 * interceptors call them in canonical mode instead of the vendor routine
 * (shim/blas/canonical_l1.c, canonical_l2.c, canonical_l3.c; per-ISA kernels
 * in canonical_blas_scalar.c and canonical_blas_avx2.c).
 *
 * THE CONTRACT (what canonical mode guarantees for these routines)
 *
 * Arithmetic. Every operation is in the routine's precision (float for s
 * and c, double for d and z), rounded to nearest even; the caller's MXCSR
 * is used as it is (no flush-to-zero is set). fma(x, y, z) is x*y + z
 * rounded once. Only the operations written below are performed: a product
 * that is not inside an fma is rounded on its own, and nothing is
 * reassociated. Negation and |x| are exact. Every path (scalar with fma(),
 * AVX2 + FMA) performs exactly these operations, and every output element
 * is computed whole on one thread (?gemv may split its outputs among
 * threads, a LANES sum its chunks,
 * ?syrk, ?syr2k, ?herk, ?her2k, ?symm and ?hemm run as ?gemm calls,
 * which split C as the GEMM does, and ?trmm and ?trsm run each element's
 * chain in pieces, GEMMs that continue it and diagonal-block kernels, in
 * the same order, giving each thread a run of B's independent columns
 * (side 'L') or rows (side 'R');
 * every other routine runs on the calling thread only), so neither the ISA nor the thread count can change a
 * bit. (AVX-512 too: the paths are scalar, AVX2 + FMA and AVX-512.) A result that
 * is NaN is NaN on every path, but which NaN (sign, payload) is not fixed
 * when several NaNs meet.
 *
 * Vectors. A vector of n logical elements x_0 .. x_{n-1} with increment
 * inc has x_i at x[i*inc] for inc >= 0 and at x[(n-1-i)*(-inc)] for
 * inc < 0 (the BLAS rule: the pointer is the lowest address touched).
 * inc == 0 makes every x_i the element x[0], where a routine accepts it.
 *
 * Matrices. order 'C' (column-major, the Fortran BLAS): A_ij is
 * a[i + j*lda]. order 'R' (row-major, cblas CblasRowMajor) is defined as
 * CBLAS defines it: the column-major call on the transposed storage that
 * each routine's comment names (dimensions swapped, and uplo, side or
 * trans flipped as listed), with the same leading dimension. Characters
 * may be upper or lower case, as the Fortran BLAS accepts.
 *
 * Complex values are {re, im} pairs (float[2] for c, double[2] for z).
 * conj(u) negates u.im; -u negates both parts. Three formulas are used:
 *   CMAC  s += u*v:  s.re = fma( u.re, v.re, s.re);  s.re = fma(-u.im, v.im, s.re);
 *                    s.im = fma( u.re, v.im, s.im);  s.im = fma( u.im, v.re, s.im);
 *         (s -= u*v is CMAC with -u.)
 *   CMUL  t = u*v:   t.re = u.re * v.re;  t.re = fma(-u.im, v.im, t.re);
 *                    t.im = u.re * v.im;  t.im = fma( u.im, v.re, t.im);
 *   CDIV  q = s/d:   if |d.re| >= |d.im|:
 *                        r = d.im / d.re;  e = fma(d.im, r, d.re);
 *                        q.re = fma( s.im, r, s.re) / e;  q.im = fma(-s.re, r, s.im) / e;
 *                    else (also when d has a NaN part):
 *                        r = d.re / d.im;  e = fma(d.re, r, d.im);
 *                        q.re = fma( s.re, r, s.im) / e;  q.im = fma( s.im, r, -s.re) / e;
 * For a real routine read CMAC as s = fma(u, v, s), CMUL as t = u*v and
 * CDIV as q = s/d.
 *
 * Sums. SEQ: s = +0 (or the stated start), then the terms added one at a
 * time with CMAC in increasing index. LANES (reductions of one vector;
 * order version 2, since 2026-12-01): the terms t_0 .. t_{n-1} are cut
 * into chunks of C = 32768 (chunk c holds t_{cC} .. t_{cC+C-1}, the last
 * one shorter). Each chunk has 16 lane sums s_{c,0} .. s_{c,15}, all +0;
 * term i goes to lane i mod 16 of its chunk, each lane taking its terms in
 * increasing i. The chunks then meet lane by lane in the fixed tree
 *   J(lo, hi) = s_lo                      if hi - lo == 1,
 *             = J(lo, mid) + J(mid, hi)   else, mid = lo + the largest
 *                                         power of two below hi - lo,
 * S = J(0, number of chunks); and the 16 lanes of S in the fixed tree
 *   for h = 8, 4, 2, 1:  for l = 0 .. h-1:  S_l = S_l + S_{l+h}
 * whose result is S_0 (complex: re and im parts summed alike). With n <= C
 * (one chunk) this is version 1's order, which every length had before.
 * Threads: with canon_set_threads(n) > 1 (shim/blas/canonical.h), a LANES
 * sum of at least 2^17 terms (any type, any increment) gives the threads
 * of the canonical GEMM's pool whole subtrees of J (runs of 2^b chunks
 * from a multiple of 2^b), and the caller joins their roots by the same
 * J: the same operations for any count, so the same bits.
 *
 * alpha/beta (AB), as canonical.h's GEMM: an output c with sum s becomes
 *   beta == 0:  c = CMUL(alpha, s)          (old c not read: NaN/Inf in it ignored)
 *   otherwise:  t = CMUL(beta, c);  c = t + alpha*s by CMAC (u = alpha, v = s).
 * When alpha == 0 no product is formed, A, B and x are not read, and
 * c = CMUL(beta, c), except that beta == 0 stores zero without reading c
 * and beta == 1 leaves c untouched. A zero or one test is true for +0 and
 * -0 alike (complex: both parts; one means (1, 0)).
 *
 * BLAS semantics. Quick returns are those of the reference BLAS, as each
 * routine lists. Otherwise every product is formed: there is no skipping
 * of zero elements (the reference BLAS skips some, e.g. in ?ger and ?trsm),
 * so NaN and Inf propagate as IEEE arithmetic in these formulas makes them.
 *
 * Returns. Every routine returns 0, or -1 for arguments the BLAS rejects
 * (bad character, negative dimension, short leading dimension, zero
 * increment where it is not allowed); its outputs are then untouched and
 * the caller lets the vendor BLAS report the error. Nothing is allocated
 * (at most about 48 KiB of stack) except by
 * a threaded ?gemv or LANES sum, which may start the canonical GEMM's
 * workers, by the level-3 routines on the GEMM core (its workspace, and
 * their own blocks: ?trmm and ?trsm keep up to 1024 x 512 elements of
 * op(A), and ?trmm up to 512 x 1024 sums, per thread they run on, at
 * most 64 MiB a call, in the calling thread's scratch for later calls);
 * all routines are thread-safe. Outputs
 * must not overlap inputs other than as the BLAS itself allows (in-place
 * trmv, trsv, trmm, trsm), or the paths may differ.
 */

/* ---- Level 1 ------------------------------------------------------------ */

/* *result = sum_i x_i*y_i by LANES (lane update s = CMAC(s, x_i, y_i)).
 * cdotc/zdotc use conj(x_i). n <= 0 gives +0. Any increments (0 and
 * negative too). result is float[2]/double[2] for complex. */
int canon_sdot(int64_t n, const float *x, int64_t incx, const float *y, int64_t incy,
               float *result);
int canon_ddot(int64_t n, const double *x, int64_t incx, const double *y, int64_t incy,
               double *result);
int canon_cdotu(int64_t n, const void *x, int64_t incx, const void *y, int64_t incy, void *result);
int canon_cdotc(int64_t n, const void *x, int64_t incx, const void *y, int64_t incy, void *result);
int canon_zdotu(int64_t n, const void *x, int64_t incx, const void *y, int64_t incy, void *result);
int canon_zdotc(int64_t n, const void *x, int64_t incx, const void *y, int64_t incy, void *result);

/* Euclidean norm, scaled so that no square overflows or underflows
 * needlessly. n <= 0 or incx <= 0 gives +0 (as the BLAS). A complex
 * vector counts as 2n reals: element i gives real elements 2i (re) and
 * 2i+1 (im). Over those reals v_0 .. v_{N-1}:
 *   1. m = the largest |v_i| that is not NaN (+0 if none); exact.
 *   2. k = 0 if m is 0 or Inf, else the integer with 2^(k-1) <= m < 2^k.
 *   3. t_i = v_i * 2^-k rounded once (exact unless t_i is subnormal);
 *      S = the LANES sum with lane update s = fma(t_i, t_i, s).
 *   4. *result = sqrt(S) (correctly rounded) times 2^k, rounded once.
 * So a NaN anywhere gives NaN, an Inf (and no NaN) gives Inf. */
int canon_snrm2(int64_t n, const float *x, int64_t incx, float *result);
int canon_dnrm2(int64_t n, const double *x, int64_t incx, double *result);
int canon_scnrm2(int64_t n, const void *x, int64_t incx, float *result);
int canon_dznrm2(int64_t n, const void *x, int64_t incx, double *result);

/* *result = sum |v_i| by LANES (lane update s = s + |v_i|), over the reals
 * as in nrm2 (complex: |re| and |im| of each element, the BLAS's scasum).
 * n <= 0 or incx <= 0 gives +0. */
int canon_sasum(int64_t n, const float *x, int64_t incx, float *result);
int canon_dasum(int64_t n, const double *x, int64_t incx, double *result);
int canon_scasum(int64_t n, const void *x, int64_t incx, float *result);
int canon_dzasum(int64_t n, const void *x, int64_t incx, double *result);

/* y_i = CMAC(y_i, alpha, x_i), i = 0 .. n-1 in increasing order (which
 * matters only when incy == 0). n <= 0 or alpha == 0 (complex: both parts)
 * does nothing and reads nothing. Any increments. */
int canon_saxpy(int64_t n, float alpha, const float *x, int64_t incx, float *y, int64_t incy);
int canon_daxpy(int64_t n, double alpha, const double *x, int64_t incx, double *y, int64_t incy);
int canon_caxpy(int64_t n, const void *alpha, const void *x, int64_t incx, void *y, int64_t incy);
int canon_zaxpy(int64_t n, const void *alpha, const void *x, int64_t incx, void *y, int64_t incy);

/* x_i = CMUL(alpha, x_i); csscal/zdscal: x_i.re = alpha*x_i.re and
 * x_i.im = alpha*x_i.im. Always multiplies, alpha == 0 included (0 * NaN
 * is NaN, as the reference BLAS). n <= 0 or incx <= 0 does nothing. */
int canon_sscal(int64_t n, float alpha, float *x, int64_t incx);
int canon_dscal(int64_t n, double alpha, double *x, int64_t incx);
int canon_cscal(int64_t n, const void *alpha, void *x, int64_t incx);
int canon_zscal(int64_t n, const void *alpha, void *x, int64_t incx);
int canon_csscal(int64_t n, float alpha, void *x, int64_t incx);
int canon_zdscal(int64_t n, double alpha, void *x, int64_t incx);

/* Plane rotation, for i = 0 .. n-1 in increasing order (which matters only
 * when the vectors overlap or an increment is 0), with x_i and y_i read
 * before either is written:
 *   x_i = (c*x_i) + (s*y_i);   y_i = (c*y_i) - (s*x_i)
 * each product rounded, then the sum or difference: the reference BLAS's
 * formula, no fma. csrot/zdrot apply it to the real parts and to the
 * imaginary parts. n <= 0 does nothing. Any increments, negative ones
 * walking from the far end as the BLAS does. */
int canon_srot(int64_t n, float *x, int64_t incx, float *y, int64_t incy, float c, float s);
int canon_drot(int64_t n, double *x, int64_t incx, double *y, int64_t incy, double c, double s);
int canon_csrot(int64_t n, void *x, int64_t incx, void *y, int64_t incy, float c, float s);
int canon_zdrot(int64_t n, void *x, int64_t incx, void *y, int64_t incy, double c, double s);

/* Modified rotation, the reference BLAS's formulas with each product
 * rounded before its sum, w = x_i and z = y_i, i in increasing order;
 * param = (flag, h11, h21, h12, h22):
 *   flag == -2: nothing (param's H is not read);
 *   flag < 0:   x_i = (w*h11) + (z*h12);  y_i = (w*h21) + (z*h22)
 *   flag == 0:  x_i = w + (z*h12);        y_i = (w*h21) + z
 *   otherwise:  x_i = (w*h11) + z;        y_i = -w + (h22*z)
 * A NaN flag takes the last case, as in the reference. n <= 0 does
 * nothing. Any increments, as rot. */
int canon_srotm(int64_t n, float *x, int64_t incx, float *y, int64_t incy, const float *param);
int canon_drotm(int64_t n, double *x, int64_t incx, double *y, int64_t incy,
                const double *param);

/* ---- Level 2 ------------------------------------------------------------ */

/* y = alpha*op(A)*x + beta*y, A m x n, op by trans 'N', 'T' or 'C'
 * (conjugate transpose; 'T' for real types). y has m elements for 'N',
 * else n. Per y_i a sum s, then AB: for 'N' (row-major: 'T' and 'C'),
 * s = SEQ over j of CMAC(s, op(A)_ij, x_j); for 'T' and 'C' (row-major:
 * 'N'), where the sum runs along A's stored columns, s = the LANES sum
 * (lane update CMAC(s, op(A)_ij, x_j), j = 0 .. n-1 as the terms; order
 * version 2, since 2026-12-01; SEQ before).
 * Quick return (nothing read or written): m == 0, n == 0, or alpha == 0
 * and beta == 1. Rejects lda < max(1, m) ('C') or < max(1, n) ('R'),
 * incx == 0, incy == 0.
 * 'R': column-major on the transposed storage with m and n swapped and
 * trans 'N' -> 'T', 'T' -> 'N', 'C' -> conj(A) without transpose; this is
 * the same formula over the row-major A_ij = a[i*lda + j]. (CBLAS gets
 * row-major 'C' by conjugating x, y, alpha and beta around an 'N' call;
 * that equals this up to the sign of results that are exactly zero.)
 * Threads: with canon_set_threads(n) > 1 (shim/blas/canonical.h) and at
 * least 2^18 products, y is split into contiguous runs of outputs (one per
 * thread for 'N'; up to 4 per thread for 'T' and 'C', so a thread that is
 * descheduled leaves its share to the others), on the canonical GEMM's pool (workers use the caller's MXCSR
 * and kernel path); smaller calls, and calls made while another thread
 * holds the pool or when its workers cannot start, run on the calling
 * thread. Each y_i is still its one sum on one thread: same bits for any
 * count. A 'T' or 'C' call with fewer runs of 16 outputs than threads and
 * columns of at least 2^17 elements instead splits each output's LANES
 * sum by its chunks, as a dot does. */
int canon_sgemv(char order, char trans, int64_t m, int64_t n, float alpha, const float *a,
                int64_t lda, const float *x, int64_t incx, float beta, float *y, int64_t incy);
int canon_dgemv(char order, char trans, int64_t m, int64_t n, double alpha, const double *a,
                int64_t lda, const double *x, int64_t incx, double beta, double *y, int64_t incy);
int canon_cgemv(char order, char trans, int64_t m, int64_t n, const void *alpha, const void *a,
                int64_t lda, const void *x, int64_t incx, const void *beta, void *y, int64_t incy);
int canon_zgemv(char order, char trans, int64_t m, int64_t n, const void *alpha, const void *a,
                int64_t lda, const void *x, int64_t incx, const void *beta, void *y, int64_t incy);

/* A = alpha*x*y^T + A (gerc: y conjugated), A m x n. Per column j:
 * t = CMUL(alpha, y_j) (gerc: conj(y_j)), then A_ij = CMAC(A_ij, x_i, t)
 * for each i. Quick return: m == 0, n == 0 or alpha == 0. Rejects
 * lda < max(1, m) ('C') or < max(1, n) ('R'), incx == 0, incy == 0.
 * 'R': as CBLAS, the column-major geru with m and n swapped and x and y
 * swapped (for gerc the vector that comes first is conj(y)), so alpha
 * rounds with x there: A_ij = CMAC(A_ij, y_j, CMUL(alpha, x_i)), with
 * conj(y_j) for gerc. */
int canon_sger(char order, int64_t m, int64_t n, float alpha, const float *x, int64_t incx,
               const float *y, int64_t incy, float *a, int64_t lda);
int canon_dger(char order, int64_t m, int64_t n, double alpha, const double *x, int64_t incx,
               const double *y, int64_t incy, double *a, int64_t lda);
int canon_cgeru(char order, int64_t m, int64_t n, const void *alpha, const void *x, int64_t incx,
                const void *y, int64_t incy, void *a, int64_t lda);
int canon_cgerc(char order, int64_t m, int64_t n, const void *alpha, const void *x, int64_t incx,
                const void *y, int64_t incy, void *a, int64_t lda);
int canon_zgeru(char order, int64_t m, int64_t n, const void *alpha, const void *x, int64_t incx,
                const void *y, int64_t incy, void *a, int64_t lda);
int canon_zgerc(char order, int64_t m, int64_t n, const void *alpha, const void *x, int64_t incx,
                const void *y, int64_t incy, void *a, int64_t lda);

/* Triangular A (n x n, uplo 'U'/'L' names the triangle read, diag 'U'
 * means A_ii = 1 and is not read). op(A) by trans as for gemv; op(A) is
 * upper triangular when (uplo == 'U') == (trans == 'N'), else lower.
 * Conjugation ('C') applies to diagonal elements too.
 *
 * trmv: x = op(A)*x. Per x_i: s = SEQ over the j with op(A)_ij in the
 * triangle, increasing j, of CMAC(s, op(A)_ij, x_j) with the old x_j;
 * for diag 'U' the j = i term is s = s + x_i (no product). x_i = s.
 *
 * trsv: solves op(A)*x = b (b is x on entry). Forward (i = 0, 1, ..) for
 * lower op(A), backward for upper. Per x_i: s = b_i, then for the
 * off-diagonal j of row i of op(A), in increasing j: s -= op(A)_ij*x_j
 * (CMAC with -op(A)_ij) with the solved x_j; then x_i = CDIV(s, op(A)_ii),
 * or x_i = s for diag 'U'.
 *
 * Quick return: n == 0. Rejects lda < max(1, n), incx == 0.
 * 'R': column-major with uplo flipped and trans mapped as for gemv; the
 * same formula over the row-major A_ij. */
int canon_strmv(char order, char uplo, char trans, char diag, int64_t n, const float *a,
                int64_t lda, float *x, int64_t incx);
int canon_dtrmv(char order, char uplo, char trans, char diag, int64_t n, const double *a,
                int64_t lda, double *x, int64_t incx);
int canon_ctrmv(char order, char uplo, char trans, char diag, int64_t n, const void *a, int64_t lda,
                void *x, int64_t incx);
int canon_ztrmv(char order, char uplo, char trans, char diag, int64_t n, const void *a, int64_t lda,
                void *x, int64_t incx);
int canon_strsv(char order, char uplo, char trans, char diag, int64_t n, const float *a,
                int64_t lda, float *x, int64_t incx);
int canon_dtrsv(char order, char uplo, char trans, char diag, int64_t n, const double *a,
                int64_t lda, double *x, int64_t incx);
int canon_ctrsv(char order, char uplo, char trans, char diag, int64_t n, const void *a, int64_t lda,
                void *x, int64_t incx);
int canon_ztrsv(char order, char uplo, char trans, char diag, int64_t n, const void *a, int64_t lda,
                void *x, int64_t incx);

/* symv (real; order version sym=1, since 2026-12-04): y = alpha*A*x +
 * beta*y, A symmetric n x n, uplo 'U'/'L' naming the triangle read (A_ij
 * of the other one is A_ji). Per y_i, column-major:
 *   'L': s = SEQ over j = 0 .. i of CMAC(s, A_ij, x_j) (the row of the
 *        stored triangle, the diagonal last); then s = s + d, d the LANES
 *        dot of A_{i+1 .. n-1, i} with x_{i+1 .. n-1} (+0 when i = n-1).
 *   'U': s = d, the LANES dot of A_{0 .. i-1, i} with x_{0 .. i-1} (+0 when
 *        i = 0); then SEQ continued from s over j = i .. n-1 of
 *        CMAC(s, A_ij, x_j) (the diagonal first, then the row).
 * y_i from s by AB. Quick return: n == 0, or alpha == 0 and beta == 1.
 * Rejects lda < max(1, n), incx == 0, incy == 0. 'R': the column-major
 * call with uplo flipped (a symmetric matrix stored by rows is the
 * column-major one with the other triangle stored). */
int canon_ssymv(char order, char uplo, int64_t n, float alpha, const float *a, int64_t lda,
                const float *x, int64_t incx, float beta, float *y, int64_t incy);
int canon_dsymv(char order, char uplo, int64_t n, double alpha, const double *a, int64_t lda,
                const double *x, int64_t incx, double beta, double *y, int64_t incy);

/* syr2 (real; sym=1): A = alpha*x*y^T + alpha*y*x^T + A on the uplo
 * triangle of the symmetric A (the other one neither read nor written).
 * Per column j of the column-major view: t1 = alpha*y_j, t2 = alpha*x_j
 * (each rounded); then per stored element i of the column (i <= j for
 * 'U', i >= j for 'L'): a_ij = fma(x_i, t1, a_ij), then a_ij =
 * fma(y_i, t2, a_ij). Quick return: n == 0 or alpha == 0. Rejects
 * lda < max(1, n), incx == 0, incy == 0. 'R': the column-major call with
 * uplo flipped, the same x and y. */
/* syr (real; sym=1): A = alpha*x*x^T + A, as syr2 with only its first
 * update: per column j, t1 = alpha*x_j, then a_ij = fma(x_i, t1, a_ij).
 * The same quick return and checks (no y). */
int canon_ssyr(char order, char uplo, int64_t n, float alpha, const float *x, int64_t incx,
               float *a, int64_t lda);
int canon_dsyr(char order, char uplo, int64_t n, double alpha, const double *x, int64_t incx,
               double *a, int64_t lda);
int canon_ssyr2(char order, char uplo, int64_t n, float alpha, const float *x, int64_t incx,
                const float *y, int64_t incy, float *a, int64_t lda);
int canon_dsyr2(char order, char uplo, int64_t n, double alpha, const double *x, int64_t incx,
                const double *y, int64_t incy, double *a, int64_t lda);

/* hemv, her, her2 (complex; sym=1): symv, syr and syr2 for a Hermitian A
 * (A_ij of the triangle not read is conj(A_ji); the diagonal's imaginary
 * parts are neither read nor, by her and her2, kept: they become +0).
 *   hemv, per y_i as symv's, with CMAC for the products, the diagonal's
 *     term CMAC(s, (re(A_ii), +0), x_i), and d the LANES dot of the
 *     conjugated column part with x (canon_?dotc); s + d part by part.
 *   her2: per column j, t1 = CMUL(alpha, conj(y_j)), t2 =
 *     conj(CMUL(alpha, x_j)); per stored element A_ij = CMAC(A_ij, x_i,
 *     t1), then A_ij = CMAC(A_ij, y_i, t2); then im(A_jj) = +0.
 *   her (alpha real): t1 = (alpha*re(x_j), -(alpha*im(x_j))), each
 *     rounded once; A_ij = CMAC(A_ij, x_i, t1); then im(A_jj) = +0.
 * Quick returns and checks as symv, syr, syr2. 'R' (as CBLAS): the
 * column-major call with uplo flipped on conj(x) and conj(y), with alpha
 * and beta conjugated, hemv's y conjugated before and after. */
int canon_chemv(char order, char uplo, int64_t n, const void *alpha, const void *a, int64_t lda,
                const void *x, int64_t incx, const void *beta, void *y, int64_t incy);
int canon_zhemv(char order, char uplo, int64_t n, const void *alpha, const void *a, int64_t lda,
                const void *x, int64_t incx, const void *beta, void *y, int64_t incy);
int canon_cher(char order, char uplo, int64_t n, float alpha, const void *x, int64_t incx, void *a,
               int64_t lda);
int canon_zher(char order, char uplo, int64_t n, double alpha, const void *x, int64_t incx, void *a,
               int64_t lda);
int canon_cher2(char order, char uplo, int64_t n, const void *alpha, const void *x, int64_t incx,
                const void *y, int64_t incy, void *a, int64_t lda);
int canon_zher2(char order, char uplo, int64_t n, const void *alpha, const void *x, int64_t incx,
                const void *y, int64_t incy, void *a, int64_t lda);

/* ---- Level 3 ------------------------------------------------------------ */

/* C = alpha*op(A)*op(A)^T + beta*C on the uplo triangle of the n x n C
 * (the other triangle is neither read nor written). trans 'N': op(A) = A,
 * n x k; 'T': op(A) = A^T, A k x n; 'C' is 'T' for real types and rejected
 * for complex (as the BLAS's csyrk). Per C_ij in the triangle:
 * s = SEQ over p of CMAC(s, op(A)_ip, op(A)_jp), then AB (alpha == 0 or
 * k == 0: the alpha == 0 rule). Quick return: n == 0. Rejects k < 0,
 * lda < max(1, rows of A), ldc < max(1, n).
 * 'R': column-major with uplo flipped and trans 'N' <-> 'T' ('C' -> 'N'
 * for real), which makes the row-major C_ij use
 * CMAC(s, op(A)_jp, op(A)_ip): the factors swap (no effect on real bits). */
int canon_ssyrk(char order, char uplo, char trans, int64_t n, int64_t k, float alpha,
                const float *a, int64_t lda, float beta, float *c, int64_t ldc);
int canon_dsyrk(char order, char uplo, char trans, int64_t n, int64_t k, double alpha,
                const double *a, int64_t lda, double beta, double *c, int64_t ldc);
int canon_csyrk(char order, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                const void *a, int64_t lda, const void *beta, void *c, int64_t ldc);
int canon_zsyrk(char order, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                const void *a, int64_t lda, const void *beta, void *c, int64_t ldc);

/* Rank-2k updates on the uplo triangle of the n x n C (the other
 * triangle is neither read nor written). trans 'N': op(X) = X, n x k;
 * syr2k 'T' (and 'C' for real types): op(X) = X^T, X k x n; her2k 'C':
 * op(X) = X^H. syr2k: C = alpha*op(A)*op(B)^T + alpha*op(B)*op(A)^T +
 * beta*C; her2k: C = alpha*op(A)*op(B)^H + conj(alpha)*op(B)*op(A)^H +
 * beta*C, beta real, C Hermitian. The order is TWO GEMM UPDATES of the
 * triangle in turn, each by the ?gemm contract above (its sum, in
 * increasing p, and its alpha/beta step):
 *   1. C_ij = GEMM(alpha, op(A), w(op(B))^T, beta) on C_ij:
 *      s = SEQ over p of CMAC(s, op(A)_ip, w(op(B)_jp)), then AB with beta
 *      (her2k: as the complex (beta, 0));
 *   2. C_ij = GEMM(alpha2, op(B), w(op(A))^T, 1) on the result:
 *      s = SEQ over p of CMAC(s, op(B)_ip, w(op(A)_jp)), then AB with 1,
 * where w is conj for her2k (identity for syr2k) and alpha2 is conj(alpha)
 * for her2k (alpha for syr2k). her2k reads a diagonal element's imaginary
 * part as 0 and stores it as +0 after each update (as the reference BLAS,
 * C_ii is real). alpha == 0 or k == 0: syr2k the alpha == 0 rule; her2k
 * c = beta*c per part, diagonal real, beta == 0 stores zero. Quick return:
 * n == 0, or (alpha == 0 or k == 0) and beta == 1. Rejects k < 0, lda or
 * ldb < max(1, rows of A or B), ldc < max(1, n), syr2k 'C' for complex
 * types, her2k 'T'. 'R' order: column-major with uplo flipped and trans
 * 'N' <-> 'T' (syr2k; real 'C' -> 'N') or 'N' <-> 'C' (her2k, which also
 * takes conj(alpha)), as CBLAS defines them. */
int canon_ssyr2k(char order, char uplo, char trans, int64_t n, int64_t k, float alpha,
                 const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                 int64_t ldc);
int canon_dsyr2k(char order, char uplo, char trans, int64_t n, int64_t k, double alpha,
                 const double *a, int64_t lda, const double *b, int64_t ldb, double beta,
                 double *c, int64_t ldc);
int canon_csyr2k(char order, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                 const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta,
                 void *c, int64_t ldc);
int canon_zsyr2k(char order, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                 const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta,
                 void *c, int64_t ldc);
int canon_cher2k(char order, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                 const void *a, int64_t lda, const void *b, int64_t ldb, float beta, void *c,
                 int64_t ldc);
int canon_zher2k(char order, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                 const void *a, int64_t lda, const void *b, int64_t ldb, double beta, void *c,
                 int64_t ldc);

/* C = alpha*op(A)*op(A)^H + beta*C on the uplo triangle of the n x n
 * Hermitian C (the other triangle neither read nor written), alpha and
 * beta real; trans 'N': op(A) = A, n x k; 'C': op(A) = A^H, A k x n ('T'
 * rejected). The order is her2k's first update with B = A: per C_ij in
 * the triangle, s = SEQ over p of CMAC(s, op(A)_ip, conj(op(A)_jp)), then
 * AB with the complex (alpha, 0) and (beta, 0); a diagonal element's
 * imaginary part is read as 0 and stored as +0. alpha == 0 or k == 0,
 * quick return, rejections and 'R' order as her2k (the conjugate of a
 * real alpha is itself). */
int canon_cherk(char order, char uplo, char trans, int64_t n, int64_t k, float alpha,
                const void *a, int64_t lda, float beta, void *c, int64_t ldc);
int canon_zherk(char order, char uplo, char trans, int64_t n, int64_t k, double alpha,
                const void *a, int64_t lda, double beta, void *c, int64_t ldc);

/* C = alpha*A*B + beta*C (side 'L', A m x m) or alpha*B*A + beta*C (side
 * 'R', A n x n); C and B m x n; A symmetric (not Hermitian), read from its
 * uplo triangle only (A_ip = A_pi). Per C_ij: s = SEQ over p of
 * CMAC(s, A_ip, B_pj) for 'L', CMAC(s, B_ip, A_pj) for 'R', then AB.
 * Quick return: m == 0, n == 0, or alpha == 0 and beta == 1. Rejects
 * lda < max(1, rows of A), ldb < max(1, m), ldc < max(1, m).
 * 'R' order: column-major with side and uplo flipped and m and n swapped
 * (the factors of each product swap; no effect on real bits). */
int canon_ssymm(char order, char side, char uplo, int64_t m, int64_t n, float alpha, const float *a,
                int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
int canon_dsymm(char order, char side, char uplo, int64_t m, int64_t n, double alpha,
                const double *a, int64_t lda, const double *b, int64_t ldb, double beta, double *c,
                int64_t ldc);
int canon_csymm(char order, char side, char uplo, int64_t m, int64_t n, const void *alpha,
                const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta, void *c,
                int64_t ldc);
int canon_zsymm(char order, char side, char uplo, int64_t m, int64_t n, const void *alpha,
                const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta, void *c,
                int64_t ldc);

/* hemm: symm with a Hermitian A read from its uplo triangle: A_ip is the
 * stored element, or conj(A_pi) across the diagonal, and the diagonal's
 * imaginary parts are read as +0. The order (CMAC with A's element first
 * for 'L', B's for 'R', SEQ over p, then AB), quick return, rejections and
 * 'R' order are symm's (the mapping reads A^T, Hermitian too). */
int canon_chemm(char order, char side, char uplo, int64_t m, int64_t n, const void *alpha,
                const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta, void *c,
                int64_t ldc);
int canon_zhemm(char order, char side, char uplo, int64_t m, int64_t n, const void *alpha,
                const void *a, int64_t lda, const void *b, int64_t ldb, const void *beta, void *c,
                int64_t ldc);

/* B = alpha*op(A)*B (side 'L', A m x m) or alpha*B*op(A) (side 'R', A
 * n x n), B m x n, A triangular as for trmv. alpha == 0 sets B to zero
 * without reading A or B. Otherwise per B_ij, from the old B:
 * 'L': s = SEQ over the p with op(A)_ip in the triangle, increasing p, of
 *      CMAC(s, op(A)_ip, B_pj);
 * 'R': s = SEQ over the p with op(A)_pj in the triangle of
 *      CMAC(s, B_ip, op(A)_pj);
 * for diag 'U' the diagonal term is s = s + B_ij (no product); then
 * B_ij = CMUL(alpha, s) (AB with beta == 0). Quick return: m == 0 or
 * n == 0. Rejects lda < max(1, rows of A), ldb < max(1, m).
 * 'R' order: column-major with side and uplo flipped and m and n swapped;
 * trans and diag unchanged (the factors swap; no effect on real bits). */
int canon_strmm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                float alpha, const float *a, int64_t lda, float *b, int64_t ldb);
int canon_dtrmm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                double alpha, const double *a, int64_t lda, double *b, int64_t ldb);
int canon_ctrmm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                const void *alpha, const void *a, int64_t lda, void *b, int64_t ldb);
int canon_ztrmm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                const void *alpha, const void *a, int64_t lda, void *b, int64_t ldb);

/* Solves op(A)*X = alpha*B (side 'L') or X*op(A) = alpha*B (side 'R');
 * X overwrites B (m x n); A triangular as for trmv. alpha == 0 sets B to
 * zero without reading A or B. Otherwise each X_ij, in substitution order
 * (side 'L': forward in i for lower op(A), backward for upper; side 'R':
 * forward in j for upper op(A), backward for lower):
 *   s = B_ij if alpha == 1, else CMUL(alpha, B_ij);
 *   'L': for the off-diagonal k of row i of op(A), in substitution order
 *        (increasing k when forward, decreasing when backward):
 *        s -= op(A)_ik * X_kj   (CMAC with -op(A)_ik);
 *   'R': for the off-diagonal k of column j of op(A), in substitution
 *        order: s -= X_ik * op(A)_kj   (CMAC with -X_ik);
 *   X_ij = CDIV(s, diagonal element of op(A)), or s for diag 'U'.
 * Order version 2 (since 2026-12-01): version 1 took k increasing in the
 * backward cases too, which put each chain's not yet solved neighbours
 * first and kept those cases off the GEMM core; the forward cases are
 * unchanged. Quick return: m == 0 or n == 0. Rejects as trmm; 'R' order
 * as trmm. */
int canon_strsm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                float alpha, const float *a, int64_t lda, float *b, int64_t ldb);
int canon_dtrsm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                double alpha, const double *a, int64_t lda, double *b, int64_t ldb);
int canon_ctrsm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                const void *alpha, const void *a, int64_t lda, void *b, int64_t ldb);
int canon_ztrsm(char order, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                const void *alpha, const void *a, int64_t lda, void *b, int64_t ldb);

/* ---- Instruction-set path ----------------------------------------------- */

/* The path these routines use: "scalar" (plain C with fma(), any x86-64)
 * or "avx2" (AVX2 + FMA). NULL or "auto" picks the best the CPU has, the
 * default. Returns 0, or -1 when the name is unknown or the CPU lacks the
 * instructions (the path is then unchanged). Changes no result bit.
 * Separate from canon_set_isa (the GEMM's), so each can be tested alone;
 * the shim sets both from DETSHIM_ISA. */
int canon_blas_set_isa(const char *isa);
/* The path in use: "scalar" or "avx2". */
const char *canon_blas_isa(void);

#endif
