/* Canonical GEMM: detshim's own matrix multiply with one documented
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

#include <stdint.h>

/* The four BLAS precisions, one enum for the whole family: the canonical
 * kernels' tables (one set per type) and the interceptors' routine
 * descriptions (shim/blas/blas.h) index by it. */
enum canon_type { CANON_S, CANON_D, CANON_C, CANON_Z, CANON_NTYPES };

/* The instruction-set paths both kernel families have (canonical_isa.c):
 * each keeps one kernel table per path, indexed by this. */
enum canon_isa_path { CANON_ISA_SCALAR, CANON_ISA_AVX2, CANON_ISA_NPATHS };
/* The best path the CPU can run. */
int canon_isa_best(void);
/* The path a name asks for: "scalar", "avx2", or NULL / "auto" for the
 * best; -1 when the name is unknown, the CPU lacks the instructions, or
 * this build has no kernel for them ("avx512"). */
int canon_isa_parse(const char *isa);

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

/* The instruction-set path: "scalar" (plain C with fma(), any x86-64),
 * "avx2" (AVX2 + FMA) or "avx512" (AVX-512F). NULL or "auto" picks the
 * best the CPU has, which is also the default. Returns 0, or -1 when the
 * name is unknown, the CPU lacks the instructions, or this build has no
 * kernel for them (the path is then unchanged). Changes no result bit. */
int canon_set_isa(const char *isa);
/* The path in use: "scalar", "avx2" or "avx512". */
const char *canon_isa(void);

#endif
