/* Canonical level-2 BLAS (gemv, ger, trmv, trsv) in the order of the
 * contract (shim/blas/canonical.h). These drivers check arguments as
 * the BLAS does, map row-major calls to column-major ones as CBLAS does,
 * and leave the long loops to the active path's kernels: gemv runs the
 * outputs in blocks whose sums live in a small buffer, so a block's sums
 * are finished (alpha/beta) as soon as its columns or rows are done; a
 * transposed gemv's sums are LANES dots of its columns, four at a time,
 * in the chunks and tree of canonical_chunks.c. A large gemv splits its
 * outputs among up to canon_threads() threads of the canonical GEMM's
 * pool (shim/blas/canonical_pool.c); each output's sum is still computed
 * whole on one thread, so the thread count changes no bit.
 */
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* Bytes of gemv's block of sums: 2048 floats .. 512 double complex; fits
 * L1 beside the streams of A. */
#define SUMS_BYTES 8192
/* A gemv of fewer products than this runs on the calling thread: waking a
 * worker would cost more than it saves (the GEMM's threshold). */
#define GEMV_PAR_MIN ((int64_t)1 << 18)
/* Threads split gemv's outputs in whole units of this many elements (a
 * cache line of floats), so two threads rarely write one line of y. */
#define GEMV_UNIT 16

/* One element of any type, for sums and scalars. */
union elem {
    float s[2];
    double d[2];
};

static int64_t max1(int64_t v)
{
    return v > 1 ? v : 1;
}

/* One gemv call after argument checks: outputs y_0 .. y_{leny-1} (at y0,
 * step incy), op(A) as the kernels see it, and the kernel table chosen
 * by the caller, so every part of a threaded call runs the same path. */
struct gemv_job {
    enum canon_type t;
    const struct canon_blas_kern *k;
    int transposed, conj;
    int64_t m, n, lda, incx, incy, leny;
    const void *a, *x0, *alpha, *beta;
    void *y0;
};

/* Bytes of one gathered piece of a strided x for the column dots (a
 * divisor of a chunk, as canonical_l1.c's). */
#define PIECE_BYTES 8192

/* Columns c0 .. c0+nc-1 of op(A)^T times x over rows lo .. lo+len-1 (one
 * chunk) into acc (+0 on entry); a strided x is gathered in pieces. */
static void cols_chunk(const struct gemv_job *J, int64_t c0, int nc, int64_t lo, int64_t len,
                       union canon_lanes *acc)
{
    const size_t size = canon_blas_size(J->t);
    const void *a = canon_blas_at(J->a, c0 * J->lda + lo, size);
    if (J->incx == 1) {
        J->k->dot_cols(len, nc, a, J->lda, canon_blas_at(J->x0, lo, size), J->conj, acc);
        return;
    }
    _Alignas(64) unsigned char buf[PIECE_BYTES];
    const int64_t piece = PIECE_BYTES / (int64_t)size;
    for (int64_t i = 0; i < len; i += piece) {
        const int64_t pl = len - i < piece ? len - i : piece;
        canon_blas_gather(size, J->x0, J->incx, lo + i, pl, buf);
        J->k->dot_cols(pl, nc, canon_blas_at(a, i, size), J->lda, buf, J->conj, acc);
    }
}

/* The contract's chunk tree of those column dots over chunks lo .. hi-1
 * of the rows, for every column at once. */
static void cols_tree(const struct gemv_job *J, int64_t c0, int nc, int64_t lo, int64_t hi,
                      union canon_lanes *acc)
{
    if (hi - lo == 1) {
        const int64_t at = lo * CANON_CHUNK;
        memset(acc, 0, (size_t)nc * sizeof *acc);
        cols_chunk(J, c0, nc, at, J->m - at < CANON_CHUNK ? J->m - at : CANON_CHUNK, acc);
        return;
    }
    _Alignas(64) union canon_lanes right[CANON_COLS];
    const int64_t mid = lo + canon_chunk_split(hi - lo);
    const enum canon_join how =
        canon_blas_real(J->t) == CANON_S ? CANON_JOIN_ADD_F : CANON_JOIN_ADD_D;
    cols_tree(J, c0, nc, lo, mid, acc);
    cols_tree(J, c0, nc, mid, hi, right);
    for (int c = 0; c < nc; c++)
        canon_lanes_join(how, &acc[c], &right[c]);
}

/* The sums of outputs (columns) i0 .. i0+nb-1 of a transposed gemv: each
 * the LANES dot of its column with x. */
static void cols_sums(const struct gemv_job *J, int64_t i0, int64_t nb, void *sums)
{
    const size_t size = canon_blas_size(J->t);
    const int64_t nchunks = (J->m + CANON_CHUNK - 1) / CANON_CHUNK;
    for (int64_t c = 0; c < nb; c += CANON_COLS) {
        _Alignas(64) union canon_lanes acc[CANON_COLS];
        const int nc = nb - c < CANON_COLS ? (int)(nb - c) : CANON_COLS;
        cols_tree(J, i0 + c, nc, 0, nchunks, acc);
        for (int q = 0; q < nc; q++)
            canon_blas_lanes_result(J->t, &acc[q], (char *)sums + (size_t)(c + q) * size);
    }
}

/* A transposed gemv with too few outputs to give every thread a unit but
 * long columns: each output's LANES sum is the dot of its column with x
 * (conjugated for 'C'), whose chunks the threads share
 * (canonical_chunks.c): the same sum as cols_sums computes. x is the
 * caller's pointer (the lowest address, as the BLAS passes it). */
static void cols_dots(const struct gemv_job *J, const void *x)
{
    const size_t size = canon_blas_size(J->t);
    for (int64_t j = 0; j < J->leny; j++) {
        const void *col = canon_blas_at(J->a, j * J->lda, size);
        union elem s;
        switch (J->t) {
        case CANON_S: canon_sdot(J->m, col, 1, x, J->incx, s.s); break;
        case CANON_D: canon_ddot(J->m, col, 1, x, J->incx, s.d); break;
        case CANON_C:
            (J->conj ? canon_cdotc : canon_cdotu)(J->m, col, 1, x, J->incx, &s);
            break;
        default: (J->conj ? canon_zdotc : canon_zdotu)(J->m, col, 1, x, J->incx, &s); break;
        }
        canon_blas_ab(J->t, J->alpha, J->beta, &s,
                      (void *)canon_blas_at(J->y0, j * J->incy, size));
    }
}

/* Computes outputs lo .. hi-1 of J: blocks of sums in a small buffer, each
 * finished (alpha/beta) as soon as its columns or rows are done. Every
 * output's sum is its own chain, so where the range starts never shows. */
static void gemv_range(const struct gemv_job *J, int64_t lo, int64_t hi)
{
    const size_t size = canon_blas_size(J->t);
    _Alignas(64) union {
        float s[SUMS_BYTES / sizeof(float)];
        double d[SUMS_BYTES / sizeof(double)];
    } sums;
    const int64_t block = SUMS_BYTES / (int64_t)size;
    for (int64_t i0 = lo; i0 < hi; i0 += block) {
        const int64_t nb = hi - i0 < block ? hi - i0 : block;
        memset(&sums, 0, (size_t)nb * size);
        if (J->transposed)
            cols_sums(J, i0, nb, &sums);
        else
            J->k->gemv_n(nb, J->n, canon_blas_at(J->a, i0, size), J->lda, J->conj, J->x0,
                         J->incx, &sums);
        for (int64_t e = 0; e < nb; e++)
            canon_blas_ab(J->t, J->alpha, J->beta, canon_blas_at(&sums, e, size),
                          (void *)canon_blas_at(J->y0, (i0 + e) * J->incy, size));
    }
}

/* Part `part` of nparts: a contiguous run of whole units of y. */
static void gemv_part(void *arg, int part, int nparts, void *ws)
{
    const struct gemv_job *J = arg;
    const int64_t units = (J->leny + GEMV_UNIT - 1) / GEMV_UNIT;
    const int64_t lo = units * part / nparts * GEMV_UNIT;
    int64_t hi = units * (part + 1) / nparts * GEMV_UNIT;
    (void)ws;
    if (hi > J->leny)
        hi = J->leny;
    gemv_range(J, lo, hi);
}

/* Parts for a gemv of `work` products and leny outputs on `threads`
 * threads: one below GEMV_PAR_MIN products, else, for the column dots of
 * a transposed gemv, up to GEMV_PARTS_PER_THREAD per thread (so a
 * descheduled thread leaves its share to the others), each at least
 * GEMV_PART_MIN products and a whole number of units. A column sweep
 * ('N') takes one part per thread: its parts are runs of rows, and
 * shorter runs mean shorter streams down every column. */
#define GEMV_PARTS_PER_THREAD 4
#define GEMV_PART_MIN ((int64_t)1 << 15)

static int gemv_parts(int64_t work, int64_t leny, int threads, int transposed)
{
    if (threads <= 1 || work < GEMV_PAR_MIN)
        return 1;
    const int per_thread = transposed ? GEMV_PARTS_PER_THREAD : 1;
    int64_t parts = work / (transposed ? GEMV_PART_MIN : GEMV_PAR_MIN / 2);
    const int64_t units = (leny + GEMV_UNIT - 1) / GEMV_UNIT;
    if (parts > units)
        parts = units;
    if (parts > (int64_t)threads * per_thread)
        parts = (int64_t)threads * per_thread;
    return parts < CANON_MAX_PARTS ? (int)parts : CANON_MAX_PARTS;
}

static int gemv(enum canon_type t, char order, char trans, int64_t m, int64_t n,
                const void *alpha, const void *a, int64_t lda, const void *x, int64_t incx,
                const void *beta, void *y, int64_t incy)
{
    const char o = canon_blas_upper(order), tr = canon_blas_upper(trans);
    const size_t size = canon_blas_size(t);
    int transposed;
    if ((o != 'R' && o != 'C') || (tr != 'N' && tr != 'T' && tr != 'C') || m < 0 || n < 0)
        return -1;
    if (o == 'R') { /* the column-major call on the transposed storage */
        const int64_t swap = m;
        m = n;
        n = swap;
        transposed = tr == 'N';
    } else {
        transposed = tr != 'N';
    }
    const int conj = tr == 'C' && canon_blas_complex(t);
    if (lda < max1(m) || incx == 0 || incy == 0)
        return -1;
    if (m == 0 || n == 0 || (canon_blas_is_zero(t, alpha) && canon_blas_is_one(t, beta)))
        return 0;

    const int64_t leny = transposed ? n : m, lenx = transposed ? m : n;
    void *y0 = (void *)canon_blas_vec0(y, leny, incy, size);
    if (canon_blas_is_zero(t, alpha)) {
        canon_blas_scale(t, leny, beta, y0, incy);
        return 0;
    }
    struct gemv_job J = {
        .t = t, .k = &canon_blas_kernels()->t[t], .transposed = transposed, .conj = conj,
        .m = m, .n = n, .lda = lda, .incx = incx, .incy = incy, .leny = leny,
        .a = a, .x0 = canon_blas_vec0(x, lenx, incx, size), .alpha = alpha, .beta = beta,
        .y0 = y0,
    };
    const int threads = canon_threads();
    if (transposed && (leny + GEMV_UNIT - 1) / GEMV_UNIT < threads &&
        m >= CANON_CHUNKS_PAR_MIN) {
        cols_dots(&J, x);
        return 0;
    }
    const int nparts = gemv_parts(m * n, leny, threads, transposed);
    /* The pool fails only when it cannot allocate, before running any
     * part; the caller then computes every output itself. */
    if (nparts <= 1 || canon_pool_run_on(gemv_part, &J, nparts, threads, 0) != 0)
        gemv_range(&J, 0, leny);
    return 0;
}

int canon_sgemv(char order, char trans, int64_t m, int64_t n, float alpha, const float *a,
                int64_t lda, const float *x, int64_t incx, float beta, float *y, int64_t incy)
{
    return gemv(CANON_S, order, trans, m, n, &alpha, a, lda, x, incx, &beta, y, incy);
}

int canon_dgemv(char order, char trans, int64_t m, int64_t n, double alpha, const double *a,
                int64_t lda, const double *x, int64_t incx, double beta, double *y, int64_t incy)
{
    return gemv(CANON_D, order, trans, m, n, &alpha, a, lda, x, incx, &beta, y, incy);
}

int canon_cgemv(char order, char trans, int64_t m, int64_t n, const void *alpha, const void *a,
                int64_t lda, const void *x, int64_t incx, const void *beta, void *y, int64_t incy)
{
    return gemv(CANON_C, order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

int canon_zgemv(char order, char trans, int64_t m, int64_t n, const void *alpha, const void *a,
                int64_t lda, const void *x, int64_t incx, const void *beta, void *y, int64_t incy)
{
    return gemv(CANON_Z, order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

/* conjy: gerc. Row-major (as CBLAS): the column-major geru of the swapped
 * problem, with the new x being the old y conjugated for gerc. */
static int ger(enum canon_type t, char order, int64_t m, int64_t n, const void *alpha,
               const void *x, int64_t incx, const void *y, int64_t incy, void *a, int64_t lda,
               int conjy)
{
    const char o = canon_blas_upper(order);
    const size_t size = canon_blas_size(t);
    const struct canon_blas_kern *k = &canon_blas_kernels()->t[t];
    int conjx = 0;
    if ((o != 'R' && o != 'C') || m < 0 || n < 0)
        return -1;
    if (o == 'R') {
        const int64_t sd = m, si = incx;
        const void *sp = x;
        m = n;
        n = sd;
        x = y;
        y = sp;
        incx = incy;
        incy = si;
        conjx = conjy;
        conjy = 0;
    }
    if (lda < max1(m) || incx == 0 || incy == 0)
        return -1;
    if (m == 0 || n == 0 || canon_blas_is_zero(t, alpha))
        return 0;
    const void *x0 = canon_blas_vec0(x, m, incx, size);
    const void *y0 = canon_blas_vec0(y, n, incy, size);
    for (int64_t j = 0; j < n; j++) {
        union elem v, tj;
        memcpy(&v, canon_blas_at(y0, j * incy, size), size);
        if (conjy) {
            if (t == CANON_C)
                v.s[1] = -v.s[1];
            else
                v.d[1] = -v.d[1];
        }
        canon_blas_mul(t, alpha, &v, &tj);
        k->ger_col(m, x0, incx, conjx, &tj, (void *)canon_blas_at(a, j * lda, size));
    }
    return 0;
}

int canon_sger(char order, int64_t m, int64_t n, float alpha, const float *x, int64_t incx,
               const float *y, int64_t incy, float *a, int64_t lda)
{
    return ger(CANON_S, order, m, n, &alpha, x, incx, y, incy, a, lda, 0);
}

int canon_dger(char order, int64_t m, int64_t n, double alpha, const double *x, int64_t incx,
               const double *y, int64_t incy, double *a, int64_t lda)
{
    return ger(CANON_D, order, m, n, &alpha, x, incx, y, incy, a, lda, 0);
}

int canon_cgeru(char order, int64_t m, int64_t n, const void *alpha, const void *x, int64_t incx,
                const void *y, int64_t incy, void *a, int64_t lda)
{
    return ger(CANON_C, order, m, n, alpha, x, incx, y, incy, a, lda, 0);
}

int canon_cgerc(char order, int64_t m, int64_t n, const void *alpha, const void *x, int64_t incx,
                const void *y, int64_t incy, void *a, int64_t lda)
{
    return ger(CANON_C, order, m, n, alpha, x, incx, y, incy, a, lda, 1);
}

int canon_zgeru(char order, int64_t m, int64_t n, const void *alpha, const void *x, int64_t incx,
                const void *y, int64_t incy, void *a, int64_t lda)
{
    return ger(CANON_Z, order, m, n, alpha, x, incx, y, incy, a, lda, 0);
}

int canon_zgerc(char order, int64_t m, int64_t n, const void *alpha, const void *x, int64_t incx,
                const void *y, int64_t incy, void *a, int64_t lda)
{
    return ger(CANON_Z, order, m, n, alpha, x, incx, y, incy, a, lda, 1);
}

/* The checks and mapping shared by trmv and trsv. Returns 0 and fills tri,
 * 1 for a quick return, -1 for bad arguments. */
static int trv_args(enum canon_type t, char order, char uplo, char trans, char diag, int64_t n,
                    int64_t lda, int64_t incx, struct canon_blas_tri *tri)
{
    const char o = canon_blas_upper(order);
    if ((o != 'R' && o != 'C') || canon_blas_tri(t, uplo, trans, diag, o == 'R', o == 'R', tri))
        return -1;
    if (n < 0 || lda < max1(n) || incx == 0)
        return -1;
    return n == 0;
}

/* x = op(A)*x: rows in the order that reads only old x (increasing i for
 * upper op(A), decreasing for lower), each a SEQ sum over its triangle. */
static int trmv(enum canon_type t, char order, char uplo, char trans, char diag, int64_t n,
                const void *a, int64_t lda, void *x, int64_t incx)
{
    struct canon_blas_tri tri;
    const int r = trv_args(t, order, uplo, trans, diag, n, lda, incx, &tri);
    if (r)
        return r < 0 ? -1 : 0;
    const size_t size = canon_blas_size(t);
    const struct canon_blas_kern *k = &canon_blas_kernels()->t[t];
    const int flags = tri.conj ? CANON_CONJ_U : 0;
    const int64_t ri = canon_blas_tri_ri(&tri, lda), rj = canon_blas_tri_rj(&tri, lda);
    const void *x0 = canon_blas_vec0(x, n, incx, size);
    for (int64_t step = 0; step < n; step++) {
        const int64_t i = tri.upper ? step : n - 1 - step;
        const void *row = canon_blas_at(a, i * ri, size); /* op(A)_i0 */
        void *xi = (void *)canon_blas_at(x0, i * incx, size);
        union elem s;
        memset(&s, 0, sizeof s);
        if (!tri.upper)
            k->dot_seq(i, row, rj, x0, incx, flags, &s);
        if (tri.unit)
            canon_blas_add(t, &s, xi);
        else
            k->dot_seq(1, canon_blas_at(row, i * rj, size), rj, xi, incx, flags, &s);
        if (tri.upper)
            k->dot_seq(n - 1 - i, canon_blas_at(row, (i + 1) * rj, size), rj,
                       canon_blas_at(xi, incx, size), incx, flags, &s);
        memcpy(xi, &s, size);
    }
    return 0;
}

/* Solves op(A)*x = b in place: forward for lower op(A), backward for
 * upper; each x_i from b_i minus a SEQ sum of the solved x_j. */
static int trsv(enum canon_type t, char order, char uplo, char trans, char diag, int64_t n,
                const void *a, int64_t lda, void *x, int64_t incx)
{
    struct canon_blas_tri tri;
    const int r = trv_args(t, order, uplo, trans, diag, n, lda, incx, &tri);
    if (r)
        return r < 0 ? -1 : 0;
    const size_t size = canon_blas_size(t);
    const struct canon_blas_kern *k = &canon_blas_kernels()->t[t];
    const int flags = (tri.conj ? CANON_CONJ_U : 0) | CANON_NEG_U;
    const int64_t ri = canon_blas_tri_ri(&tri, lda), rj = canon_blas_tri_rj(&tri, lda);
    const void *x0 = canon_blas_vec0(x, n, incx, size);
    for (int64_t step = 0; step < n; step++) {
        const int64_t i = tri.upper ? n - 1 - step : step;
        const void *row = canon_blas_at(a, i * ri, size);
        void *xi = (void *)canon_blas_at(x0, i * incx, size);
        union elem s;
        memcpy(&s, xi, size);
        if (tri.upper)
            k->dot_seq(n - 1 - i, canon_blas_at(row, (i + 1) * rj, size), rj,
                       canon_blas_at(xi, incx, size), incx, flags, &s);
        else
            k->dot_seq(i, row, rj, x0, incx, flags, &s);
        if (!tri.unit)
            canon_blas_div(t, &s, &s, canon_blas_at(row, i * rj, size), tri.conj);
        memcpy(xi, &s, size);
    }
    return 0;
}

int canon_strmv(char order, char uplo, char trans, char diag, int64_t n, const float *a,
                int64_t lda, float *x, int64_t incx)
{
    return trmv(CANON_S, order, uplo, trans, diag, n, a, lda, x, incx);
}

int canon_dtrmv(char order, char uplo, char trans, char diag, int64_t n, const double *a,
                int64_t lda, double *x, int64_t incx)
{
    return trmv(CANON_D, order, uplo, trans, diag, n, a, lda, x, incx);
}

int canon_ctrmv(char order, char uplo, char trans, char diag, int64_t n, const void *a, int64_t lda,
                void *x, int64_t incx)
{
    return trmv(CANON_C, order, uplo, trans, diag, n, a, lda, x, incx);
}

int canon_ztrmv(char order, char uplo, char trans, char diag, int64_t n, const void *a, int64_t lda,
                void *x, int64_t incx)
{
    return trmv(CANON_Z, order, uplo, trans, diag, n, a, lda, x, incx);
}

int canon_strsv(char order, char uplo, char trans, char diag, int64_t n, const float *a,
                int64_t lda, float *x, int64_t incx)
{
    return trsv(CANON_S, order, uplo, trans, diag, n, a, lda, x, incx);
}

int canon_dtrsv(char order, char uplo, char trans, char diag, int64_t n, const double *a,
                int64_t lda, double *x, int64_t incx)
{
    return trsv(CANON_D, order, uplo, trans, diag, n, a, lda, x, incx);
}

int canon_ctrsv(char order, char uplo, char trans, char diag, int64_t n, const void *a, int64_t lda,
                void *x, int64_t incx)
{
    return trsv(CANON_C, order, uplo, trans, diag, n, a, lda, x, incx);
}

int canon_ztrsv(char order, char uplo, char trans, char diag, int64_t n, const void *a, int64_t lda,
                void *x, int64_t incx)
{
    return trsv(CANON_Z, order, uplo, trans, diag, n, a, lda, x, incx);
}
