/* The shapes the level-3 routines give the canonical GEMM driver
 * (canonical_gemm.c): an operand packed from one stored triangle of a
 * symmetric or Hermitian matrix (symm, hemm), and a triangle of C
 * (syrk, herk, syr2k, her2k). Copies, sign flips and index arithmetic
 * only: neither changes an element's sum.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "blas/canonical_kernels.h"

/* One column of a strip: r elements of up to 16 bytes. */
#define COL_BYTES 2048

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

void canon_herm_fix(void *ev, size_t es, int diag)
{
    unsigned char *e = ev;
    if (es == 2 * sizeof(float)) {
        float im;
        memcpy(&im, e + sizeof im, sizeof im);
        im = diag ? 0.0f : -im;
        memcpy(e + sizeof im, &im, sizeof im);
    } else {
        double im;
        memcpy(&im, e + sizeof im, sizeof im);
        im = diag ? 0.0 : -im;
        memcpy(e + sizeof im, &im, sizeof im);
    }
}

/* M(row, p) is at x + row*rs + p*cs where (row, p) is in the stored
 * triangle, else it is M(p, row) (herm: conjugated, and the diagonal's
 * imaginary part +0). Each strip of r rows is packed as up to three
 * pieces: the p wholly below its rows, those wholly above (each one
 * packer call, on one orientation), and the r or fewer between, a column
 * at a time. */
void canon_pack_sym(canon_pack_fn fn, int r, int64_t row0, int64_t rows, int64_t p0, int64_t kb,
                    const char *x, int64_t rs, int64_t cs, int lower, int herm, int flags,
                    size_t es, size_t ps, char *dst)
{
    /* herm: the mirrored pieces conjugated, as the packers conjugate */
    const int mflags = herm ? flags ^ CANON_CONJ : flags;
    const size_t group = (size_t)r * ps;
    unsigned char col[COL_BYTES];
    assert((size_t)r * es <= sizeof col);
    for (int64_t s = 0; s * r < rows; s++) {
        const int64_t i0 = row0 + s * r, h = min64(r, rows - s * r);
        char *d = dst + (size_t)(s * kb) * group;
        /* p < i0 lies below every row of the strip, p >= i0 + h above */
        const int64_t lo = min64(kb, i0 > p0 ? i0 - p0 : 0);
        const int64_t hi = min64(kb, i0 + h > p0 ? i0 + h - p0 : 0);
        const char *direct = x + (i0 * rs + p0 * cs) * (int64_t)es;
        const char *mirror = x + (p0 * rs + i0 * cs) * (int64_t)es;
        if (lo > 0)
            fn(r, h, lo, lower ? direct : mirror, lower ? rs : cs, lower ? cs : rs,
               lower ? flags : mflags, d);
        for (int64_t q = lo; q < hi; q++) {
            const int64_t p = p0 + q;
            for (int64_t ii = 0; ii < h; ii++) {
                const int64_t i = i0 + ii;
                const int stored = lower ? i >= p : i <= p;
                unsigned char *e = col + ii * (int64_t)es;
                memcpy(e, x + (stored ? i * rs + p * cs : p * rs + i * cs) * (int64_t)es, es);
                if (herm && (i == p || !stored))
                    canon_herm_fix(e, es, i == p);
            }
            fn(r, h, 1, col, 1, h, flags, d + (size_t)q * group);
        }
        if (hi < kb) {
            const int64_t at = hi * (int64_t)es;
            fn(r, h, kb - hi, lower ? mirror + at * rs : direct + at * cs, lower ? cs : rs,
               lower ? rs : cs, lower ? mflags : flags, d + (size_t)hi * group);
        }
    }
}

int canon_tri_cover(int tri, int64_t i, int64_t h, int64_t j, int64_t w)
{
    if (tri == CANON_TRI_LOWER) /* column <= row */
        return j > i + h - 1 ? 0 : j + w - 1 <= i ? 1 : 2;
    if (tri == CANON_TRI_UPPER) /* column >= row */
        return j + w - 1 < i ? 0 : j >= i + h - 1 ? 1 : 2;
    return 1;
}

void canon_tri_run(int tri, int64_t i, int64_t j, int64_t r, int64_t cols, int64_t *lo,
                   int64_t *hi)
{
    const int64_t d = i + r - j; /* the diagonal's column in this row */
    *lo = tri == CANON_TRI_LOWER ? 0 : d < 0 ? 0 : min64(d, cols);
    *hi = tri == CANON_TRI_LOWER ? (d < 0 ? 0 : min64(cols, d + 1)) : cols;
}
