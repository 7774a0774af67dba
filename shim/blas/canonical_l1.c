/* Canonical level-1 BLAS (dot, nrm2, asum, axpy, scal) and what the
 * level-1/2/3 drivers share: the kernel table of the ISA path (chosen by
 * canonical_isa.c) and the one-element arithmetic of the contract
 * (shim/blas/canonical.h). The long loops are the active path's kernels
 * (canonical_kernels.h); this file says how one chunk of a reduction is
 * computed (gathering strided vectors into small contiguous pieces) and
 * adds the 16 lanes of the result with the contract's fixed tree. The
 * chunks, their tree and the threads they may run on are
 * canonical_chunks.c's, so the thread count changes no bit.
 */
#include <emmintrin.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* Bytes of one gathered piece of a strided vector: 2048 floats .. 512
 * double complex, each a multiple of the lane count and a divisor of
 * CANON_CHUNK, so pieces line up with lanes and chunks. */
#define PIECE_BYTES 8192
_Static_assert(CANON_CHUNK % (PIECE_BYTES / 4) == 0, "pieces divide a chunk");

/* ---- instruction-set path ------------------------------------------------ */

static _Atomic(const struct canon_blas_isa *) active;

/* The table of path p; chosen automatically (DETSHIM_ISA unset or
 * "auto"), AVX-512 takes the loops that measured faster on AVX2. */
static const struct canon_blas_isa *path(int p, int automatic)
{
    if (p == CANON_ISA_AVX512)
        return automatic ? canon_blas_avx512_auto_kernels() : canon_blas_avx512_kernels();
    return p == CANON_ISA_AVX2 ? &canon_blas_avx2_kernels : &canon_blas_scalar_kernels;
}

const struct canon_blas_isa *canon_blas_kernels(void)
{
    const struct canon_blas_isa *k = atomic_load(&active);
    if (!k) {
        k = path(canon_isa_auto(CANON_FAMILY_BLAS), 1);
        atomic_store(&active, k);
    }
    return k;
}

int canon_blas_set_isa(const char *isa)
{
    int p = canon_isa_parse(isa, CANON_FAMILY_BLAS);
    if (p < 0)
        return -1;
    atomic_store(&active, path(p, !isa || strcmp(isa, "auto") == 0));
    return 0;
}

const char *canon_blas_isa(void)
{
    return canon_blas_kernels()->name;
}

/* ---- one-element arithmetic ------------------------------------------------ */

size_t canon_blas_size(enum canon_type t)
{
    static const size_t size[CANON_NTYPES] = {4, 8, 8, 16};
    return size[t];
}

int canon_blas_complex(enum canon_type t)
{
    return t == CANON_C || t == CANON_Z;
}

enum canon_type canon_blas_real(enum canon_type t)
{
    return t == CANON_C ? CANON_S : t == CANON_Z ? CANON_D : t;
}

int canon_blas_is_zero(enum canon_type t, const void *v)
{
    switch (t) {
    case CANON_S: return *(const float *)v == 0;
    case CANON_D: return *(const double *)v == 0;
    case CANON_C: return ((const float *)v)[0] == 0 && ((const float *)v)[1] == 0;
    default: return ((const double *)v)[0] == 0 && ((const double *)v)[1] == 0;
    }
}

int canon_blas_is_one(enum canon_type t, const void *v)
{
    switch (t) {
    case CANON_S: return *(const float *)v == 1;
    case CANON_D: return *(const double *)v == 1;
    case CANON_C: return ((const float *)v)[0] == 1 && ((const float *)v)[1] == 0;
    default: return ((const double *)v)[0] == 1 && ((const double *)v)[1] == 0;
    }
}

/* The formulas once per base type: CMUL, and "t + alpha*s by CMAC". */
#define DEFINE_CMUL(name, R, FMA)                                                                  \
    static void name(const R *u, const R *v, R *out)                                               \
    {                                                                                              \
        R tr = u[0] * v[0], ti = u[0] * v[1];                                                      \
        tr = FMA(-u[1], v[1], tr);                                                                 \
        ti = FMA(u[1], v[0], ti);                                                                  \
        out[0] = tr;                                                                               \
        out[1] = ti;                                                                               \
    }
#define DEFINE_CMAC(name, R, FMA)                                                                  \
    static void name(R *s, const R *u, const R *v)                                                 \
    {                                                                                              \
        R sr = s[0], si = s[1];                                                                    \
        sr = FMA(u[0], v[0], sr);                                                                  \
        sr = FMA(-u[1], v[1], sr);                                                                 \
        si = FMA(u[0], v[1], si);                                                                  \
        si = FMA(u[1], v[0], si);                                                                  \
        s[0] = sr;                                                                                 \
        s[1] = si;                                                                                 \
    }
DEFINE_CMUL(cmul_c, float, fmaf)
DEFINE_CMUL(cmul_z, double, fma)
DEFINE_CMAC(cmac_c, float, fmaf)
DEFINE_CMAC(cmac_z, double, fma)

void canon_blas_mul(enum canon_type t, const void *u, const void *v, void *out)
{
    switch (t) {
    case CANON_S: *(float *)out = *(const float *)u * *(const float *)v; break;
    case CANON_D: *(double *)out = *(const double *)u * *(const double *)v; break;
    case CANON_C: cmul_c(u, v, out); break;
    default: cmul_z(u, v, out); break;
    }
}

void canon_blas_ab(enum canon_type t, const void *alpha, const void *beta, const void *s,
                   void *c)
{
    if (canon_blas_is_zero(t, beta)) {
        canon_blas_mul(t, alpha, s, c);
        return;
    }
    switch (t) {
    case CANON_S: {
        const float bc = *(const float *)beta * *(float *)c;
        *(float *)c = fmaf(*(const float *)alpha, *(const float *)s, bc);
        break;
    }
    case CANON_D: {
        const double bc = *(const double *)beta * *(double *)c;
        *(double *)c = fma(*(const double *)alpha, *(const double *)s, bc);
        break;
    }
    case CANON_C: {
        float r[2];
        cmul_c(beta, c, r);
        cmac_c(r, alpha, s);
        memcpy(c, r, sizeof r);
        break;
    }
    default: {
        double r[2];
        cmul_z(beta, c, r);
        cmac_z(r, alpha, s);
        memcpy(c, r, sizeof r);
        break;
    }
    }
}

void canon_blas_scale(enum canon_type t, int64_t n, const void *beta, void *c, int64_t inc)
{
    const size_t size = canon_blas_size(t);
    if (canon_blas_is_one(t, beta))
        return;
    if (canon_blas_is_zero(t, beta)) {
        for (int64_t i = 0; i < n; i++)
            memset((char *)c + i * inc * (int64_t)size, 0, size);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        void *e = (char *)c + i * inc * (int64_t)size;
        canon_blas_mul(t, beta, e, e);
    }
}

void canon_blas_add(enum canon_type t, void *s, const void *v)
{
    switch (t) {
    case CANON_S: *(float *)s = *(float *)s + *(const float *)v; break;
    case CANON_D: *(double *)s = *(double *)s + *(const double *)v; break;
    case CANON_C:
        ((float *)s)[0] = ((float *)s)[0] + ((const float *)v)[0];
        ((float *)s)[1] = ((float *)s)[1] + ((const float *)v)[1];
        break;
    default:
        ((double *)s)[0] = ((double *)s)[0] + ((const double *)v)[0];
        ((double *)s)[1] = ((double *)s)[1] + ((const double *)v)[1];
        break;
    }
}

/* CDIV as the contract writes it (Smith's scaling, so that |d| never
 * squares). */
#define DEFINE_CDIV(name, R, FMA, FABS)                                                            \
    static void name(R *q, const R *s, R dr, R di)                                                 \
    {                                                                                              \
        const R sr = s[0], si = s[1];                                                              \
        R r, e, qr, qi;                                                                            \
        if (FABS(dr) >= FABS(di)) {                                                                \
            r = di / dr;                                                                           \
            e = FMA(di, r, dr);                                                                    \
            qr = FMA(si, r, sr) / e;                                                               \
            qi = FMA(-sr, r, si) / e;                                                              \
        } else {                                                                                   \
            r = dr / di;                                                                           \
            e = FMA(dr, r, di);                                                                    \
            qr = FMA(sr, r, si) / e;                                                               \
            qi = FMA(si, r, -sr) / e;                                                              \
        }                                                                                          \
        q[0] = qr;                                                                                 \
        q[1] = qi;                                                                                 \
    }
DEFINE_CDIV(cdiv_c, float, fmaf, fabsf)
DEFINE_CDIV(cdiv_z, double, fma, fabs)

void canon_blas_div(enum canon_type t, void *q, const void *s, const void *d, int conj_d)
{
    switch (t) {
    case CANON_S: *(float *)q = *(const float *)s / *(const float *)d; break;
    case CANON_D: *(double *)q = *(const double *)s / *(const double *)d; break;
    case CANON_C: {
        const float *dd = d;
        cdiv_c(q, s, dd[0], conj_d ? -dd[1] : dd[1]);
        break;
    }
    default: {
        const double *dd = d;
        cdiv_z(q, s, dd[0], conj_d ? -dd[1] : dd[1]);
        break;
    }
    }
}

int canon_blas_tri(enum canon_type t, char uplo, char trans, char diag, int flip_uplo,
                   int map_trans, struct canon_blas_tri *out)
{
    const char u = canon_blas_upper(uplo), tr = canon_blas_upper(trans), d = canon_blas_upper(diag);
    if ((u != 'U' && u != 'L') || (tr != 'N' && tr != 'T' && tr != 'C') || (d != 'N' && d != 'U'))
        return -1;
    out->transposed = map_trans ? tr == 'N' : tr != 'N';
    out->conj = tr == 'C' && canon_blas_complex(t);
    out->unit = d == 'U';
    out->upper = ((u == 'U') != flip_uplo) != out->transposed;
    return 0;
}

/* ---- reductions -------------------------------------------------------------- */

/* The contract's tree over 16 lanes at s[0], s[W], .. s[15W] (W = 2 for
 * the parts of complex lanes): lane l gets lane l + h for h = 8, 4, 2, 1;
 * returns the root. Written with constant bounds into locals, so that the
 * adds stay in registers: done in place in s, each level's loads waited
 * on the stores of the one before, 22 of the 60 ns of a canonical ddot of
 * 16 elements (2026-12-03). The same adds in the same pairs. */
#define TREE(T, name, W)                                                                           \
    static inline T name(const T *s)                                                               \
    {                                                                                              \
        T b[8], c[4];                                                                              \
        for (int l = 0; l < 8; l++)                                                                \
            b[l] = s[l * (W)] + s[(l + 8) * (W)];                                                  \
        for (int l = 0; l < 4; l++)                                                                \
            c[l] = b[l] + b[l + 4];                                                                \
        return (c[0] + c[2]) + (c[1] + c[3]);                                                      \
    }
_Static_assert(CANON_LANES == 16, "the tree below is written for 16 lanes");
TREE(float, tree_s, 1)
TREE(float, tree_s2, 2)
TREE(double, tree_d, 1)
TREE(double, tree_d2, 2)
#undef TREE

void canon_blas_lanes_result(enum canon_type t, union canon_lanes *acc, void *result)
{
    switch (t) {
    case CANON_S: *(float *)result = tree_s(acc->s); break;
    case CANON_D: *(double *)result = tree_d(acc->d); break;
    case CANON_C: {
        const float r[2] = {tree_s2(acc->s), tree_s2(acc->s + 1)};
        memcpy(result, r, sizeof r);
        break;
    }
    default: {
        const double r[2] = {tree_d2(acc->d), tree_d2(acc->d + 1)};
        memcpy(result, r, sizeof r);
        break;
    }
    }
}

/* A memcpy of constant size per element size, so each copy is a move or
 * two, whatever the element's type. */
#define GATHER(SIZE)                                                                               \
    for (int64_t e = 0; e < len; e++)                                                              \
        memcpy(dst + e * (SIZE), src + e * inc * (SIZE), (SIZE))

void canon_blas_gather(size_t size, const void *x0, int64_t inc, int64_t i, int64_t len, void *buf)
{
    const char *src = (const char *)x0 + i * inc * (int64_t)size;
    char *dst = buf;
    switch (size) {
    case 4: GATHER(4); break;
    case 8: GATHER(8); break;
    default: GATHER(16); break;
    }
}

/* A dot product's operands, for its chunks: logical element 0 of x and
 * y and their steps. */
struct dot_job {
    const struct canon_blas_kern *k;
    size_t size;
    const void *x0, *y0;
    int64_t incx, incy;
    int conj;
};

/* Adds elements lo .. lo+len-1 of a dot product into acc; strided
 * vectors are gathered in pieces that start at multiples of the lanes. */
static void dot_chunk(void *arg, int64_t lo, int64_t len, union canon_lanes *acc)
{
    const struct dot_job *D = arg;
    if (D->incx == 1 && D->incy == 1) {
        D->k->dot(len, canon_blas_at(D->x0, lo, D->size), canon_blas_at(D->y0, lo, D->size),
                  D->conj, acc);
        return;
    }
    _Alignas(64) unsigned char bx[PIECE_BYTES], by[PIECE_BYTES];
    const int64_t piece = PIECE_BYTES / (int64_t)D->size;
    for (int64_t i = lo; i < lo + len; i += piece) {
        const int64_t pl = lo + len - i < piece ? lo + len - i : piece;
        canon_blas_gather(D->size, D->x0, D->incx, i, pl, bx);
        canon_blas_gather(D->size, D->y0, D->incy, i, pl, by);
        D->k->dot(pl, bx, by, D->conj, acc);
    }
}

/* How the chunks of a sum in the parts of type t join. */
static enum canon_join join_of(enum canon_type t)
{
    return canon_blas_real(t) == CANON_S ? CANON_JOIN_ADD_F : CANON_JOIN_ADD_D;
}

/* Lanes of sum x_i*y_i (conj: conj(x_i)) over n >= 0 elements. */
static void dot(enum canon_type t, int64_t n, const void *x, int64_t incx, const void *y,
                int64_t incy, int conj, void *result)
{
    _Alignas(64) union canon_lanes acc;
    const size_t size = canon_blas_size(t);
    struct dot_job D = {&canon_blas_kernels()->t[t], size, x, y, incx, incy, conj};
    if (n > 0 && n <= CANON_CHUNK && incx == 1 && incy == 1) { /* one chunk: the kernel alone */
        /* only the lanes type t uses, by 16-byte stores: memset of the
         * union became a rep stos, a third of a 16-element ddot */
        const __m128i zero = _mm_setzero_si128();
        for (size_t b = 0; b < CANON_LANES * size; b += 16)
            _mm_store_si128((__m128i *)((char *)&acc + b), zero);
        D.k->dot(n, x, y, conj, &acc);
        canon_blas_lanes_result(t, &acc, result);
        return;
    }
    if (n > 0) {
        D.x0 = canon_blas_vec0(x, n, incx, size);
        D.y0 = canon_blas_vec0(y, n, incy, size);
    }
    const struct canon_chunked R = {n, join_of(t), dot_chunk, &D};
    canon_chunked_sum(&R, &acc);
    canon_blas_lanes_result(t, &acc, result);
}

int canon_sdot(int64_t n, const float *x, int64_t incx, const float *y, int64_t incy, float *result)
{
    dot(CANON_S, n, x, incx, y, incy, 0, result);
    return 0;
}

int canon_ddot(int64_t n, const double *x, int64_t incx, const double *y, int64_t incy,
               double *result)
{
    dot(CANON_D, n, x, incx, y, incy, 0, result);
    return 0;
}

int canon_cdotu(int64_t n, const void *x, int64_t incx, const void *y, int64_t incy, void *result)
{
    dot(CANON_C, n, x, incx, y, incy, 0, result);
    return 0;
}

int canon_cdotc(int64_t n, const void *x, int64_t incx, const void *y, int64_t incy, void *result)
{
    dot(CANON_C, n, x, incx, y, incy, 1, result);
    return 0;
}

int canon_zdotu(int64_t n, const void *x, int64_t incx, const void *y, int64_t incy, void *result)
{
    dot(CANON_Z, n, x, incx, y, incy, 0, result);
    return 0;
}

int canon_zdotc(int64_t n, const void *x, int64_t incx, const void *y, int64_t incy, void *result)
{
    dot(CANON_Z, n, x, incx, y, incy, 1, result);
    return 0;
}

/* A reduction over the reals of n elements of type t at x (step inc > 0;
 * a complex element gives its re and im), term i being real i: what is
 * done with them (op) and with which kernels (those of the real type). */
enum reals_op { REALS_ASUM, REALS_SUMSQ, REALS_SUMSQ_WIDE, REALS_AMAX };

struct reals {
    enum canon_type t;
    enum reals_op op;
    const void *x;
    int64_t inc;
    const struct canon_blas_kern *k;
    const void *scale; /* REALS_SUMSQ: the two factors */
};

/* Single-precision nrm2 (snrm2, scnrm2) sums its squares in double, in
 * the contract's 16 lanes: a float's square is exact in double and no sum
 * of them can overflow or underflow there, so it needs no scaling pass, and
 * a long vector keeps the small terms a float accumulator drops (scipy's
 * TestVectorNorms::test_stable: one 10^4 and 10^4 ones gave 10000.469
 * with float lanes; the BLAS says 10000.5). */
static void sumsq_wide(const float *x, int64_t nr, double *s)
{
    for (int64_t i = 0; i < nr; i++) {
        const double t = x[i];
        s[i % CANON_LANES] = fma(t, t, s[i % CANON_LANES]);
    }
}

/* Runs V's operation on nr contiguous reals r (a multiple of the lanes
 * from the chunk's start). */
static void reals_run(const struct reals *V, const void *r, int64_t nr, union canon_lanes *acc)
{
    switch (V->op) {
    case REALS_ASUM: V->k->asum(nr, r, acc); break;
    case REALS_SUMSQ: V->k->sumsq(nr, r, V->scale, acc); break;
    case REALS_SUMSQ_WIDE: sumsq_wide(r, nr, acc->d); break;
    default: { /* max is exact, so chunks may meet in any order */
        double m;
        V->k->amax(nr, r, &m);
        acc->d[0] = m > acc->d[0] ? m : acc->d[0];
        break;
    }
    }
}

/* Adds reals lo .. lo+len-1 into acc; strided vectors are gathered in
 * pieces of whole elements that start at multiples of the lanes. */
static void reals_chunk(void *arg, int64_t lo, int64_t len, union canon_lanes *acc)
{
    const struct reals *V = arg;
    const size_t size = canon_blas_size(V->t);
    const int64_t w = canon_blas_complex(V->t) ? 2 : 1;
    if (V->inc == 1) {
        reals_run(V, canon_blas_at(V->x, lo, size / (size_t)w), len, acc);
        return;
    }
    _Alignas(64) unsigned char buf[PIECE_BYTES];
    const int64_t piece = PIECE_BYTES / (int64_t)size, end = (lo + len) / w;
    for (int64_t e = lo / w; e < end; e += piece) {
        const int64_t pl = end - e < piece ? end - e : piece;
        canon_blas_gather(size, V->x, V->inc, e, pl, buf);
        reals_run(V, buf, pl * w, acc);
    }
}

/* The chunk tree of operation op over the 2n (complex) or n reals. */
static void reals_sum(struct reals *V, enum reals_op op, int64_t n, union canon_lanes *acc)
{
    const enum canon_type rt = canon_blas_real(V->t);
    V->op = op;
    const struct canon_chunked R = {
        canon_blas_complex(V->t) ? 2 * n : n,
        op == REALS_AMAX ? CANON_JOIN_MAX_D
                         : op == REALS_SUMSQ_WIDE ? CANON_JOIN_ADD_D : join_of(rt),
        reals_chunk, V,
    };
    canon_chunked_sum(&R, acc);
}

/* nrm2 of the contract, for any type; result is of the real type. */
static void nrm2(enum canon_type t, int64_t n, const void *x, int64_t incx, void *result)
{
    const enum canon_type rt = canon_blas_real(t);
    struct reals V = {t, REALS_ASUM, x, incx, &canon_blas_kernels()->t[rt], NULL};
    _Alignas(64) union canon_lanes acc;
    if (n <= 0 || incx <= 0) {
        memset(result, 0, canon_blas_size(rt));
        return;
    }
    if (rt == CANON_S) {
        reals_sum(&V, REALS_SUMSQ_WIDE, n, &acc);
        *(float *)result = (float)sqrt(tree_d(acc.d));
        return;
    }
    double scale[2] = {1, 1};
    int k = 0;
    reals_sum(&V, REALS_AMAX, n, &acc);
    const double m = acc.d[0];
    if (m != 0 && !isinf(m)) {
        frexp(m, &k);
        if (-k <= 1023) {
            scale[0] = ldexp(1.0, -k);
        } else {
            scale[0] = 0x1p64;
            scale[1] = ldexp(1.0, -k - 64);
        }
    }
    V.scale = scale;
    reals_sum(&V, REALS_SUMSQ, n, &acc);
    *(double *)result = ldexp(sqrt(tree_d(acc.d)), k);
}

int canon_snrm2(int64_t n, const float *x, int64_t incx, float *result)
{
    nrm2(CANON_S, n, x, incx, result);
    return 0;
}

int canon_dnrm2(int64_t n, const double *x, int64_t incx, double *result)
{
    nrm2(CANON_D, n, x, incx, result);
    return 0;
}

int canon_scnrm2(int64_t n, const void *x, int64_t incx, float *result)
{
    nrm2(CANON_C, n, x, incx, result);
    return 0;
}

int canon_dznrm2(int64_t n, const void *x, int64_t incx, double *result)
{
    nrm2(CANON_Z, n, x, incx, result);
    return 0;
}

static void asum(enum canon_type t, int64_t n, const void *x, int64_t incx, void *result)
{
    const enum canon_type rt = canon_blas_real(t);
    struct reals V = {t, REALS_ASUM, x, incx, &canon_blas_kernels()->t[rt], NULL};
    _Alignas(64) union canon_lanes acc;
    reals_sum(&V, REALS_ASUM, n > 0 && incx > 0 ? n : 0, &acc);
    canon_blas_lanes_result(rt, &acc, result);
}

int canon_sasum(int64_t n, const float *x, int64_t incx, float *result)
{
    asum(CANON_S, n, x, incx, result);
    return 0;
}

int canon_dasum(int64_t n, const double *x, int64_t incx, double *result)
{
    asum(CANON_D, n, x, incx, result);
    return 0;
}

int canon_scasum(int64_t n, const void *x, int64_t incx, float *result)
{
    asum(CANON_C, n, x, incx, result);
    return 0;
}

int canon_dzasum(int64_t n, const void *x, int64_t incx, double *result)
{
    asum(CANON_Z, n, x, incx, result);
    return 0;
}

/* ---- elementwise --------------------------------------------------------------- */

static void axpy(enum canon_type t, int64_t n, const void *alpha, const void *x, int64_t incx,
                 void *y, int64_t incy)
{
    const size_t size = canon_blas_size(t);
    if (n <= 0 || canon_blas_is_zero(t, alpha))
        return;
    canon_blas_kernels()->t[t].axpy(n, alpha, canon_blas_vec0(x, n, incx, size), incx,
                                    (void *)canon_blas_vec0(y, n, incy, size), incy);
}

int canon_saxpy(int64_t n, float alpha, const float *x, int64_t incx, float *y, int64_t incy)
{
    axpy(CANON_S, n, &alpha, x, incx, y, incy);
    return 0;
}

int canon_daxpy(int64_t n, double alpha, const double *x, int64_t incx, double *y, int64_t incy)
{
    axpy(CANON_D, n, &alpha, x, incx, y, incy);
    return 0;
}

int canon_caxpy(int64_t n, const void *alpha, const void *x, int64_t incx, void *y, int64_t incy)
{
    axpy(CANON_C, n, alpha, x, incx, y, incy);
    return 0;
}

int canon_zaxpy(int64_t n, const void *alpha, const void *x, int64_t incx, void *y, int64_t incy)
{
    axpy(CANON_Z, n, alpha, x, incx, y, incy);
    return 0;
}

int canon_sscal(int64_t n, float alpha, float *x, int64_t incx)
{
    if (n > 0 && incx > 0)
        canon_blas_kernels()->t[CANON_S].scal(n, &alpha, x, incx);
    return 0;
}

int canon_dscal(int64_t n, double alpha, double *x, int64_t incx)
{
    if (n > 0 && incx > 0)
        canon_blas_kernels()->t[CANON_D].scal(n, &alpha, x, incx);
    return 0;
}

int canon_cscal(int64_t n, const void *alpha, void *x, int64_t incx)
{
    if (n > 0 && incx > 0)
        canon_blas_kernels()->t[CANON_C].scal(n, alpha, x, incx);
    return 0;
}

int canon_zscal(int64_t n, const void *alpha, void *x, int64_t incx)
{
    if (n > 0 && incx > 0)
        canon_blas_kernels()->t[CANON_Z].scal(n, alpha, x, incx);
    return 0;
}

/* A real scale of complex elements scales the 2n reals (or, strided, the
 * real parts and the imaginary parts as two real vectors). */
int canon_csscal(int64_t n, float alpha, void *x, int64_t incx)
{
    const struct canon_blas_kern *k = &canon_blas_kernels()->t[CANON_S];
    if (n <= 0 || incx <= 0)
        return 0;
    if (incx == 1) {
        k->scal(2 * n, &alpha, x, 1);
    } else {
        k->scal(n, &alpha, x, 2 * incx);
        k->scal(n, &alpha, (float *)x + 1, 2 * incx);
    }
    return 0;
}

int canon_zdscal(int64_t n, double alpha, void *x, int64_t incx)
{
    const struct canon_blas_kern *k = &canon_blas_kernels()->t[CANON_D];
    if (n <= 0 || incx <= 0)
        return 0;
    if (incx == 1) {
        k->scal(2 * n, &alpha, x, 1);
    } else {
        k->scal(n, &alpha, x, 2 * incx);
        k->scal(n, &alpha, (double *)x + 1, 2 * incx);
    }
    return 0;
}
