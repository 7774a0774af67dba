/* BLAS operand helpers: the generated interceptors describe each operand by
 * its logical shape and these functions digest exactly the elements the BLAS
 * reads, through the digest module, so padding, the unreferenced triangle
 * and the skipped stride elements never reach a trace. Sits between the
 * call protocol (blas_call.c, left) and the digest module (right).
 */
#include <stdlib.h>
#include <string.h>

#include "blas/blas.h"
#include "core/core.h"
#include "trace/digest.h"

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

/* ---- Shapes digested by gathering ------------------------------------------
 * Packed, band and Hermitian operands are runs of varying length (or with
 * a part of the diagonal left out), which the digest module has no layout
 * for: their elements are copied, in storage order, into one buffer and
 * digested as it, which is the same digest as over the elements in place. */

/* Run j of a shape in column-major terms: `len` elements from element
 * `off` of the array, the diagonal at index `diag` of the run (-1: none). */
struct blas_run {
    int64_t off, len, diag;
};
typedef struct blas_run (*run_fn)(const int64_t *p, int64_t j);

/* Elements of `runs` runs, the diagonal dropped (unit) or its imaginary
 * half read as +0 (herm). */
static struct blas_digest gather(const void *a, int64_t runs, run_fn run, const int64_t *p, int elem,
                                 int unit, int herm)
{
    uint64_t count = 0;
    for (int64_t j = 0; j < runs; j++) {
        struct blas_run r = run(p, j);
        count += (uint64_t)(r.len - (unit && r.diag >= 0));
    }
    if (count == 0)
        return empty(elem);
    unsigned char *buf = malloc(count * (size_t)elem), *out = buf;
    if (!buf) {
        core_fail("the trace of this call's operands",
                  "no memory to digest a %llu-element BLAS operand",
                  (unsigned long long)count);
        return empty(elem);
    }
    const unsigned char *base = a;
    for (int64_t j = 0; j < runs; j++) {
        struct blas_run r = run(p, j);
        for (int64_t t = 0; t < r.len; t++) {
            if (t == r.diag && unit)
                continue;
            memcpy(out, base + (size_t)(r.off + t) * (size_t)elem, (size_t)elem);
            if (t == r.diag && herm)
                memset(out + elem / 2, 0, (size_t)elem / 2);
            out += elem;
        }
    }
    struct blas_digest d = { digest_bytes(buf, count * (size_t)elem), count, elem };
    free(buf);
    return d;
}

/* p: n, ld, head (run j holds elements 0..j, the diagonal last). */
static struct blas_run tri_run(const int64_t *p, int64_t j)
{
    struct blas_run r = { j * p[1], j + 1, j };
    if (!p[2])
        r = (struct blas_run){ j * p[1] + j, p[0] - j, 0 };
    return r;
}

/* p: n, head; runs follow one another. */
static struct blas_run packed_run(const int64_t *p, int64_t j)
{
    int64_t n = p[0];
    if (p[1])
        return (struct blas_run){ j * (j + 1) / 2, j + 1, j };
    return (struct blas_run){ j * n - j * (j - 1) / 2, n - j, 0 };
}

/* p: m, kl, ku, ld: column j of a band matrix, rows max(0, j-ku) ..
 * min(m-1, j+kl), row i at band row ku + i - j. */
static struct blas_run band_run(const int64_t *p, int64_t j)
{
    int64_t m = p[0], kl = p[1], ku = p[2], ld = p[3];
    int64_t lo = j - ku > 0 ? j - ku : 0, hi = j + kl < m - 1 ? j + kl : m - 1;
    struct blas_run r = { j * ld + ku + lo - j, hi >= lo ? hi - lo + 1 : 0, -1 };
    if (j >= lo && j <= hi)
        r.diag = j - lo;
    return r;
}

static int valid_tri(char order, char uplo, char diag)
{
    return (order == 'C' || order == 'R') && (uplo == 'U' || uplo == 'L') &&
           (diag == 'N' || diag == 'U');
}

struct blas_digest blas_digest_tri_herm(char order, char uplo, int64_t n, const void *a,
                                        int64_t ld, int elem)
{
    if (n <= 0 || ld < n || !valid_tri(order, uplo, 'N'))
        return empty(elem);
    int64_t p[3] = { n, ld, (order == 'C') == (uplo == 'U') };
    return gather(a, n, tri_run, p, elem, 0, 1);
}

struct blas_digest blas_digest_packed(char order, char uplo, char diag, int64_t n, const void *ap,
                                      int elem, int herm)
{
    if (n <= 0 || !valid_tri(order, uplo, diag))
        return empty(elem);
    int64_t p[2] = { n, (order == 'C') == (uplo == 'U') };
    return gather(ap, n, packed_run, p, elem, diag == 'U', herm);
}

struct blas_digest blas_digest_band(char order, int64_t m, int64_t n, int64_t kl, int64_t ku,
                                    const void *a, int64_t ld, int elem)
{
    if (order == 'R') {
        /* CBLAS: the column-major band of the transpose. */
        int64_t t = m;
        m = n, n = t, t = kl, kl = ku, ku = t;
    }
    if (m <= 0 || n <= 0 || kl < 0 || ku < 0 || ld < kl + ku + 1 || (order != 'C' && order != 'R'))
        return empty(elem);
    int64_t p[4] = { m, kl, ku, ld };
    return gather(a, n, band_run, p, elem, 0, 0);
}

struct blas_digest blas_digest_band_tri(char order, char uplo, char diag, int64_t n, int64_t k,
                                        const void *a, int64_t ld, int elem, int herm)
{
    if (n <= 0 || k < 0 || ld < k + 1 || !valid_tri(order, uplo, diag))
        return empty(elem);
    /* Row-major upper is the column-major lower band of the transpose. */
    int upper = (uplo == 'U') == (order == 'C');
    int64_t p[4] = { n, upper ? 0 : k, upper ? k : 0, ld };
    return gather(a, n, band_run, p, elem, diag == 'U', herm);
}

struct blas_digest blas_digest_rotm_param(const void *param, int elem)
{
    double h[5];
    if (elem == 4) {
        float f[5];
        memcpy(f, param, sizeof f);
        for (int i = 0; i < 5; i++)
            h[i] = f[i];
    } else {
        memcpy(h, param, sizeof h);
    }
    static const int used[4][5] = { { 0 }, { 0, 1, 2, 3, 4 }, { 0, 2, 3 }, { 0, 1, 4 } };
    static const int nused[4] = { 1, 5, 3, 3 };
    int which = h[0] == -2 ? 0 : h[0] < 0 ? 1 : h[0] == 0 ? 2 : 3;
    unsigned char buf[5 * sizeof(double)];
    for (int i = 0; i < nused[which]; i++)
        memcpy(buf + i * elem, (const unsigned char *)param + used[which][i] * elem, (size_t)elem);
    struct blas_digest d = { digest_bytes(buf, (size_t)(nused[which] * elem)),
                             (uint64_t)nused[which], elem };
    return d;
}
