/* Operand fingerprints: XXH3-128 over the logical elements of a buffer only,
 * in storage order, never reading padding. A strided vector, a matrix with a
 * leading dimension and a triangle all digest as the concatenation of the
 * elements they contain, so two buffers with the same elements and
 * different padding digest alike.
 */
#ifndef DETSHIM_DIGEST_H
#define DETSHIM_DIGEST_H

#include <stddef.h>
#include <stdint.h>
#include "detshim.h"

/* digest_vector and digest_matrix take a contiguous operand of 2 MiB or
 * more on the threads lent to digests (digest_bytes_shared, below): a
 * BLAS call waits on its operands' digests while the canonical pool is
 * idle, before and after its kernel. */

/* n elements of `elem` bytes, `inc` elements apart. A negative inc follows
 * the BLAS rule: x points at the lowest address and logical element i is at
 * x + (n-1-i)*|inc|. n <= 0 digests nothing. */
detshim_digest digest_vector(const void *x, int64_t n, int64_t inc, size_t elem);

/* `lines` runs of `len` contiguous elements, run j starting at a + j*ld
 * elements (a column of a column-major matrix, a row of a row-major one). */
detshim_digest digest_matrix(const void *a, int64_t len, int64_t lines, int64_t ld,
                             size_t elem);

/* The referenced triangle of an n x n matrix stored as n runs ld apart.
 * head = 1: run j holds elements 0..j (col-major upper, row-major lower);
 * head = 0: run j holds elements j..n-1. unit_diag = 1 leaves the diagonal
 * out (BLAS never reads it then). */
detshim_digest digest_triangle(const void *a, int64_t n, int64_t ld, size_t elem,
                               int head, int unit_diag);

/* An N-d strided array: dims[0..ndims) (the last varying fastest) and
 * each dim's stride in elements, 0 (broadcast) and overlaps allowed,
 * never negative; element (i_0, ..., i_{n-1}) of `elem` bytes is at
 * base + sum i_k * strides[k] elements. ndims is 1..DIGEST_MAX_DIMS. */
enum { DIGEST_MAX_DIMS = 8 };
struct digest_shape {
    int ndims;
    int64_t dims[DIGEST_MAX_DIMS], strides[DIGEST_MAX_DIMS];
    size_t elem;
};

/* The logical elements of s at base in row-major order of its dims: the
 * digest_bytes() of the array packed in that order, padding never read.
 * A dim <= 0 digests nothing. */
detshim_digest digest_strided(const void *base, const struct digest_shape *s);

/* s as runs, the form both digest_strided and the device kernels walk:
 * *run_bytes contiguous bytes per run; the runs over the returned number
 * of outer dims (1..DIGEST_MAX_DIMS), count[k] of them stride_bytes[k]
 * apart, the last varying fastest. Dims of 1 are dropped and dims that
 * continue one another merged, so a packed array is one run. Every dim
 * of s must be >= 1. */
int digest_runs(const struct digest_shape *s, int64_t *run_bytes, int64_t count[],
                int64_t stride_bytes[]);

/* digest_matrix()'s layout as a shape: `lines` runs of `len` elements,
 * ld apart. len, lines >= 1. */
struct digest_shape digest_matrix_shape(int64_t len, int64_t lines, int64_t ld, size_t elem);

/* Bytes from base to the end of s's last element: what a copy of the
 * array must hold. Every dim of s must be >= 1. */
size_t digest_extent(const struct digest_shape *s);

/* Plain XXH3-128 of a contiguous byte range. */
detshim_digest digest_bytes(const void *p, size_t len);

/* digest_bytes() of a long run computed in parts, so that threads may
 * share it; the bits are digest_bytes()'s. XXH3 reads a long input in
 * blocks of DIGEST_SPLIT_BLOCK bytes, each ended by a scramble of its
 * accumulators, and only adds what a block reads before that scramble,
 * so a block's sums may be taken on any thread and chained in order
 * after. For a run of len bytes at p, with n = digest_split_blocks(len)
 * (0: too short to split, use digest_bytes):
 *
 *   digest_split_begin(&st);
 *   digest_split_run(&st, p, h);            blocks 0..h-1 read here, while
 *   digest_split_sums(p, first, count, sums + 8 * first)
 *                                           other threads take the sums of
 *                                           blocks h..n-1, in parts;
 *   digest_split_chain(&st, sums + 8 * h, n - h);
 *   d = digest_split_end(&st, p, len);
 *
 * run and chain continue from st.blocks; sums hold 8 uint64_t a block. */
enum { DIGEST_SPLIT_BLOCK = 1024, DIGEST_SPLIT_MIN = 64 * 1024 };
struct digest_split {
    uint64_t acc[8];
    size_t blocks; /* blocks chained so far */
};
size_t digest_split_blocks(size_t len);
void digest_split_begin(struct digest_split *st);
void digest_split_run(struct digest_split *st, const void *p, size_t count);
void digest_split_sums(const void *p, size_t first, size_t count, uint64_t *sums);
void digest_split_chain(struct digest_split *st, const uint64_t *sums, size_t count);
/* The digest, once st has chained all digest_split_blocks(len) blocks. */
detshim_digest digest_split_end(const struct digest_split *st, const void *p, size_t len);

/* digest_bytes(p, len), shared among threads when a module has lent
 * some: the BLAS family lends its canonical pool's (canon_digest_bytes,
 * canon_digest_runs) once it has started it. For digests the program
 * waits on while those threads are idle (a step record, shim/framework,
 * and a BLAS call's contiguous operands, digest_vector/digest_matrix);
 * the bits are digest_bytes()'s either way. digest_runs_shared gives
 * out[i] = digest_bytes(p[i], len[i]) for i < n, the runs spread over
 * the threads (each short run read by one, a long one by all). */
typedef detshim_digest (*digest_bytes_fn)(const void *p, size_t len);
typedef void (*digest_runs_fn)(size_t n, const void *const *p, const size_t *len,
                               detshim_digest *out);
void digest_lend_threads(digest_bytes_fn shared, digest_runs_fn runs);
detshim_digest digest_bytes_shared(const void *p, size_t len);
void digest_runs_shared(size_t n, const void *const *p, const size_t *len, detshim_digest *out);

#endif
