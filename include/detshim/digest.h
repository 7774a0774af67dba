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

/* Plain XXH3-128 of a contiguous byte range. */
detshim_digest digest_bytes(const void *p, size_t len);

#endif
