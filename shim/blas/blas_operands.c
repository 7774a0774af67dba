/* BLAS operand helpers: the generated interceptors describe each operand by
 * its logical shape and these functions digest exactly the elements the BLAS
 * reads, through the digest module, so padding, the unreferenced triangle
 * and the skipped stride elements never reach a trace. Sits between the
 * generated wrappers (left) and the trace writer (right).
 */
#include <string.h>

#include "detshim/blas.h"
#include "detshim/digest.h"

char blas_order_char(int order)
{
    return order == BLAS_ROW_MAJOR ? 'R' : order == BLAS_COL_MAJOR ? 'C' : '?';
}

char blas_trans_char(int trans)
{
    switch (trans) {
    case BLAS_NO_TRANS:
        return 'N';
    case BLAS_TRANS:
        return 'T';
    case BLAS_CONJ_TRANS:
        return 'C';
    default:
        return '?';
    }
}

char blas_uplo_char(int uplo)
{
    return uplo == BLAS_UPPER ? 'U' : uplo == BLAS_LOWER ? 'L' : '?';
}

char blas_diag_char(int diag)
{
    return diag == BLAS_NON_UNIT ? 'N' : diag == BLAS_UNIT ? 'U' : '?';
}

char blas_side_char(int side)
{
    return side == BLAS_LEFT ? 'L' : side == BLAS_RIGHT ? 'R' : '?';
}

char blas_fchar(const char *c)
{
    /* Not toupper(): a program's locale must not change what we record. */
    return *c >= 'a' && *c <= 'z' ? (char)(*c - 'a' + 'A') : *c;
}

int blas_c64_is_zero(const void *z)
{
    float v[2];
    memcpy(v, z, sizeof v);
    return v[0] == 0 && v[1] == 0;
}

int blas_c128_is_zero(const void *z)
{
    double v[2];
    memcpy(v, z, sizeof v);
    return v[0] == 0 && v[1] == 0;
}

static struct blas_digest empty(int elem)
{
    struct blas_digest d = { digest_bytes(NULL, 0), 0, elem };
    return d;
}

struct blas_digest blas_digest_general(char order, char trans, int64_t rows, int64_t cols,
                                       const void *a, int64_t ld, int elem)
{
    if (rows <= 0 || cols <= 0 || (order != 'C' && order != 'R') ||
        (trans != 'N' && trans != 'T' && trans != 'C'))
        return empty(elem);
    int64_t stored_rows = trans == 'N' ? rows : cols;
    int64_t stored_cols = trans == 'N' ? cols : rows;
    int64_t run = order == 'C' ? stored_rows : stored_cols;
    int64_t runs = order == 'C' ? stored_cols : stored_rows;
    if (ld < run)
        return empty(elem);
    struct blas_digest d = { digest_matrix(a, run, runs, ld, (size_t)elem),
                             (uint64_t)rows * (uint64_t)cols, elem };
    return d;
}

struct blas_digest blas_digest_vec(const void *x, int64_t n, int64_t inc, int elem)
{
    if (n <= 0)
        return empty(elem);
    struct blas_digest d = { digest_vector(x, n, inc, (size_t)elem), (uint64_t)n, elem };
    return d;
}

struct blas_digest blas_digest_tri(char order, char uplo, char diag, int64_t n, const void *a,
                                   int64_t ld, int elem)
{
    if (n <= 0 || ld < n || (order != 'C' && order != 'R') || (uplo != 'U' && uplo != 'L') ||
        (diag != 'N' && diag != 'U'))
        return empty(elem);
    /* Run j of a column-major upper (or row-major lower) triangle holds
     * elements 0..j: the referenced part sits at the head of each run. */
    int head = (order == 'C') == (uplo == 'U');
    int unit = diag == 'U';
    uint64_t un = (uint64_t)n;
    struct blas_digest d = { digest_triangle(a, n, ld, (size_t)elem, head, unit),
                             unit ? un * (un - 1) / 2 : un * (un + 1) / 2, elem };
    return d;
}

struct blas_digest blas_digest_value(const void *v, int size)
{
    struct blas_digest d = { digest_bytes(v, (size_t)size), 1, size };
    return d;
}

void blas_rec_operand(struct trace_rec *r, const char *name, int role, struct blas_digest d)
{
    trace_rec_operand(r, name, role, d.digest, d.count, d.elem_size);
}
