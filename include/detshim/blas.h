/* BLAS operand helpers, called by the generated interceptors
 * (scripts/gen-blas-wrappers.py): they turn a routine's logical operand
 * shapes (layout, transpose, rows, columns, leading dimension, increment,
 * referenced triangle) into digests of exactly the elements the BLAS reads,
 * and map CBLAS enums and Fortran character arguments to the same
 * upper-case chars, so cblas and Fortran records read alike.
 */
#ifndef DETSHIM_BLAS_H
#define DETSHIM_BLAS_H

#include <stdint.h>

#include "detshim.h"
#include "detshim/trace.h"

/* CBLAS enum values (the reference cblas.h), passed to us as plain ints. */
enum blas_cblas_value {
    BLAS_ROW_MAJOR = 101, BLAS_COL_MAJOR = 102,
    BLAS_NO_TRANS = 111, BLAS_TRANS = 112, BLAS_CONJ_TRANS = 113,
    BLAS_UPPER = 121, BLAS_LOWER = 122,
    BLAS_NON_UNIT = 131, BLAS_UNIT = 132,
    BLAS_LEFT = 141, BLAS_RIGHT = 142,
};

/* An operand's digest and how many logical elements of elem_size bytes it
 * covers. count 0 (with the digest of no bytes) when the shape is empty or
 * invalid: the BLAS then reads nothing either. */
struct blas_digest {
    detshim_digest digest;
    uint64_t count;
    int elem_size;
};

/* CBLAS enum -> 'R'/'C' (order), 'N'/'T'/'C' (trans), 'U'/'L' (uplo),
 * 'N'/'U' (diag), 'L'/'R' (side); '?' for a value CBLAS does not define. */
char blas_order_char(int order);
char blas_trans_char(int trans);
char blas_uplo_char(int uplo);
char blas_diag_char(int diag);
char blas_side_char(int side);
/* A Fortran character argument, upper-cased (ASCII only, whatever the
 * locale), as the BLAS compares it. */
char blas_fchar(const char *c);

/* 1 if both parts of a complex scalar {re, im} are zero (+0 or -0). */
int blas_c64_is_zero(const void *z);
int blas_c128_is_zero(const void *z);

/* The rows x cols matrix op(A) of a routine, A stored in `order` ('C'
 * column-major, 'R' row-major) with leading dimension ld; trans 'T' or 'C'
 * means A itself is stored cols x rows. Digests the stored runs (columns
 * for 'C', rows for 'R'), never the padding between them. Empty when a
 * dimension is <= 0, order/trans are not valid chars, or ld is shorter
 * than a run (the BLAS rejects such calls before reading). */
struct blas_digest blas_digest_general(char order, char trans, int64_t rows, int64_t cols,
                                       const void *a, int64_t ld, int elem);

/* n elements inc apart (BLAS rule for inc < 0); empty when n <= 0. */
struct blas_digest blas_digest_vec(const void *x, int64_t n, int64_t inc, int elem);

/* The triangle uplo ('U'/'L') of the n x n matrix a, diagonal left out when
 * diag is 'U'. Empty when n <= 0, a char is not valid, or ld < n. */
struct blas_digest blas_digest_tri(char order, char uplo, char diag, int64_t n, const void *a,
                                   int64_t ld, int elem);

/* One value of `size` bytes (a function result): count 1. */
struct blas_digest blas_digest_value(const void *v, int size);

/* Adds d to r as operand `name` with `role` (TRACE_ROLE_IN/OUT). */
void blas_rec_operand(struct trace_rec *r, const char *name, int role, struct blas_digest d);

/* Pinned mode (pinned.c): applies the policy's thread count through every
 * vendor control found; again when libraries were loaded since. Called
 * before every vendor call in pinned and canonical mode. */
void blas_pin_vendor(void);
/* Canonical mode: applies [blas] threads and DETSHIM_ISA to our kernels,
 * once. */
void blas_canon_prepare(void);
/* The count applied, as a trace note. */
const char *blas_threads_note(void);

/* How a call ran, beyond its mode: canonical mode falls back to pinned for
 * routines without a canonical kernel and for arguments a kernel declines. */
enum blas_ran { BLAS_RAN_AS_MODE = 0, BLAS_RAN_NO_KERNEL = 1, BLAS_RAN_DECLINED = 2 };
/* Adds the decision notes to a record: blas.mode (passthrough, pinned,
 * canonical, or pinned with the reason canonical did not run) and, when
 * the vendor ran pinned, blas.threads. */
void blas_note_run(struct trace_rec *r, int mode, int how);

#endif
