/* Canonical level-1 BLAS (dot, nrm2, asum, axpy, scal) and what the
 * level-1/2/3 drivers share: the kernel table of the ISA path (chosen by
 * canonical_isa.c) and the one-element arithmetic of the contract
 * (shim/blas/canonical.h). The long loops
 * are the active path's kernels (canonical_kernels.h); this file walks
 * strides, gathering strided vectors into small contiguous chunks, and
 * adds the 16 lanes of a reduction with the contract's fixed tree. A
 * long contiguous ddot, zdotu/zdotc or dasum/dzasum splits its LANES among
 * threads of the canonical GEMM's pool (shim/blas/canonical_pool.c): each
 * thread runs whole lanes over the whole vector, so every lane is still
 * one chain in increasing i and the thread count changes no bit.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* Bytes of one gathered chunk: 2048 floats .. 512 double complex, each a
 * multiple of the lane count, so lanes line up across chunks. */
#define CHUNK_BYTES 8192
/* A reduction of fewer elements than this runs on the calling thread:
 * waking a worker would cost more than it saves. */
#define LANES_PAR_MIN ((int64_t)1 << 18)
/* Threads take lanes in whole cache lines of each 16-element block, so
 * no two read the same line: at most 16 / (64 / size) lane groups. */
#define LINE_BYTES 64
#define LANES_MAX_PARTS 4

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

/* The contract's tree over 16 lanes at s[0], s[w], .. s[15w] (w = 2 for
 * the parts of complex lanes). */
static void tree_s(float *s, int w)
{
    for (int h = CANON_LANES / 2; h >= 1; h /= 2)
        for (int l = 0; l < h; l++)
            s[l * w] = s[l * w] + s[(l + h) * w];
}

static void tree_d(double *s, int w)
{
    for (int h = CANON_LANES / 2; h >= 1; h /= 2)
        for (int l = 0; l < h; l++)
            s[l * w] = s[l * w] + s[(l + h) * w];
}

/* The 16 running lane sums of a reduction, of any type. */
union lanes {
    float s[2 * CANON_LANES];
    double d[2 * CANON_LANES];
};

/* Adds the lanes and stores the result (one element of type t). */
static void finish_lanes(enum canon_type t, union lanes *acc, void *result)
{
    switch (t) {
    case CANON_S:
        tree_s(acc->s, 1);
        *(float *)result = acc->s[0];
        break;
    case CANON_D:
        tree_d(acc->d, 1);
        *(double *)result = acc->d[0];
        break;
    case CANON_C:
        tree_s(acc->s, 2);
        tree_s(acc->s + 1, 2);
        memcpy(result, acc->s, 2 * sizeof(float));
        break;
    default:
        tree_d(acc->d, 2);
        tree_d(acc->d + 1, 2);
        memcpy(result, acc->d, 2 * sizeof(double));
        break;
    }
}

/* Copies logical elements i .. i+len-1 of x (element 0 at x0, step inc)
 * to buf. A memcpy of constant size per element size, so each copy is a
 * move or two, whatever the element's type. */
#define GATHER(SIZE)                                                                               \
    for (int64_t e = 0; e < len; e++)                                                              \
        memcpy(dst + e * (SIZE), src + e * inc * (SIZE), (SIZE))

static void gather(size_t size, const void *x0, int64_t inc, int64_t i, int64_t len, void *buf)
{
    const char *src = (const char *)x0 + i * inc * (int64_t)size;
    char *dst = buf;
    switch (size) {
    case 4: GATHER(4); break;
    case 8: GATHER(8); break;
    default: GATHER(16); break;
    }
}

/* A reduction whose lanes are split among threads: part p runs lanes
 * p*nl .. p*nl+nl-1 of dot_lanes (y != NULL) or asum_lanes into its own
 * lane sums, which the caller then gathers. */
struct lanes_job {
    const struct canon_blas_kern *k;
    int64_t n;
    const void *x, *y;
    int conj, nl;
    _Alignas(64) union lanes part[LANES_MAX_PARTS];
};

static void lanes_part(void *arg, int part, int nparts, void *ws)
{
    struct lanes_job *J = arg;
    (void)nparts;
    (void)ws;
    if (J->y)
        J->k->dot_lanes(J->n, J->x, J->y, J->conj, part * J->nl, J->nl, &J->part[part]);
    else
        J->k->asum_lanes(J->n, J->x, part * J->nl, J->nl, &J->part[part]);
}

/* Runs a LANES reduction of n contiguous elements of `size` bytes on
 * several threads when it is long, canon_threads() > 1 and the kernel
 * exists; adds into acc (zero on entry). Returns 1 when it did, 0 when
 * the caller must run the one-thread kernel. */
static int lanes_threaded(const struct canon_blas_kern *k, size_t size, int64_t n, const void *x,
                          const void *y, int conj, union lanes *acc)
{
    const int threads = canon_threads();
    const int line_lanes = (int)(LINE_BYTES / size);
    int parts = CANON_LANES / line_lanes;
    if ((y ? !k->dot_lanes : !k->asum_lanes) || threads <= 1 || n < LANES_PAR_MIN || parts < 2)
        return 0;
    while (parts > threads) /* a power of two that divides the 16 lanes */
        parts /= 2;
    struct lanes_job J = {.k = k, .n = n, .x = x, .y = y, .conj = conj,
                          .nl = CANON_LANES / parts};
    /* The pool fails only when it cannot allocate, before running any
     * part; the caller then runs the reduction itself. */
    if (canon_pool_run(lanes_part, &J, parts, 0) != 0)
        return 0;
    for (int p = 0; p < parts; p++) {
        const size_t at = (size_t)(p * J.nl) * size;
        memcpy((char *)acc + at, (const char *)&J.part[p] + at, (size_t)J.nl * size);
    }
    return 1;
}

/* Lanes of sum x_i*y_i (conj: conj(x_i)) over n >= 0 elements. */
static void dot(enum canon_type t, int64_t n, const void *x, int64_t incx, const void *y,
                int64_t incy, int conj, void *result)
{
    _Alignas(64) union lanes acc = {{0}};
    const struct canon_blas_kern *k = &canon_blas_kernels()->t[t];
    const size_t size = canon_blas_size(t);
    if (n > 0 && incx == 1 && incy == 1) {
        if (!lanes_threaded(k, size, n, x, y, conj, &acc))
            k->dot(n, x, y, conj, &acc);
    } else if (n > 0) {
        _Alignas(64) unsigned char bx[CHUNK_BYTES], by[CHUNK_BYTES];
        const int64_t chunk = CHUNK_BYTES / (int64_t)size;
        const void *x0 = canon_blas_vec0(x, n, incx, size);
        const void *y0 = canon_blas_vec0(y, n, incy, size);
        for (int64_t i = 0; i < n; i += chunk) {
            const int64_t len = n - i < chunk ? n - i : chunk;
            gather(size, x0, incx, i, len, bx);
            gather(size, y0, incy, i, len, by);
            k->dot(len, bx, by, conj, &acc);
        }
    }
    finish_lanes(t, &acc, result);
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

/* The reals of a vector of n elements of type t, handed to fn in chunks of
 * contiguous reals that start at multiples of the lane count. */
struct reals {
    enum canon_type t;
    int64_t n, inc;
    const void *x;
};

static void for_each_chunk(const struct reals *v, void (*fn)(const void *r, int64_t nr, void *arg),
                           void *arg)
{
    const size_t size = canon_blas_size(v->t);
    const int64_t w = canon_blas_complex(v->t) ? 2 : 1;
    if (v->inc == 1) {
        fn(v->x, v->n * w, arg);
        return;
    }
    _Alignas(64) unsigned char buf[CHUNK_BYTES];
    const int64_t chunk = CHUNK_BYTES / (int64_t)size;
    for (int64_t i = 0; i < v->n; i += chunk) {
        const int64_t len = v->n - i < chunk ? v->n - i : chunk;
        gather(size, v->x, v->inc, i, len, buf);
        fn(buf, len * w, arg);
    }
}

struct red {
    enum canon_type rt;         /* the real type */
    const struct canon_blas_kern *k; /* its kernels */
    const void *scale;
    void *acc;
};

/* max is exact, so chunks may meet in any order */
static void amax_chunk(const void *r, int64_t nr, void *arg)
{
    struct red *red = arg;
    if (red->rt == CANON_S) {
        float m, *acc = red->acc;
        red->k->amax(nr, r, &m);
        *acc = m > *acc ? m : *acc;
    } else {
        double m, *acc = red->acc;
        red->k->amax(nr, r, &m);
        *acc = m > *acc ? m : *acc;
    }
}

static void sumsq_chunk(const void *r, int64_t nr, void *arg)
{
    struct red *red = arg;
    red->k->sumsq(nr, r, red->scale, red->acc);
}

static void asum_chunk(const void *r, int64_t nr, void *arg)
{
    struct red *red = arg;
    red->k->asum(nr, r, red->acc);
}

/* Single-precision nrm2 (snrm2, scnrm2) sums its squares in double, in
 * the contract's 16 lanes: a float's square is exact in double and no sum
 * of them can overflow or underflow there, so it needs no scaling pass, and
 * a long vector keeps the small terms a float accumulator drops (scipy's
 * TestVectorNorms::test_stable: one 10^4 and 10^4 ones gave 10000.469
 * with float lanes; the BLAS says 10000.5). */
static void sumsq_wide_chunk(const void *r, int64_t nr, void *arg)
{
    const float *x = r;
    double *s = arg;
    for (int64_t i = 0; i < nr; i++) {
        const double t = x[i];
        s[i % CANON_LANES] = fma(t, t, s[i % CANON_LANES]);
    }
}

/* nrm2 of the contract, for any type; result is of the real type. */
static void nrm2(enum canon_type t, int64_t n, const void *x, int64_t incx, void *result)
{
    const enum canon_type rt = canon_blas_real(t);
    const struct reals v = {t, n, incx, x};
    _Alignas(64) union lanes acc = {{0}};
    struct red red = {rt, &canon_blas_kernels()->t[rt], NULL, &acc};
    if (n <= 0 || incx <= 0) {
        memset(result, 0, canon_blas_size(rt));
        return;
    }
    if (rt == CANON_S) {
        _Alignas(64) double wide[CANON_LANES] = {0};
        for_each_chunk(&v, sumsq_wide_chunk, wide);
        tree_d(wide, 1);
        *(float *)result = (float)sqrt(wide[0]);
    } else {
        double m = 0, scale[2] = {1, 1};
        int k = 0;
        red.acc = &m;
        for_each_chunk(&v, amax_chunk, &red);
        if (m != 0 && !isinf(m)) {
            frexp(m, &k);
            if (-k <= 1023) {
                scale[0] = ldexp(1.0, -k);
            } else {
                scale[0] = 0x1p64;
                scale[1] = ldexp(1.0, -k - 64);
            }
        }
        red.acc = &acc;
        red.scale = scale;
        for_each_chunk(&v, sumsq_chunk, &red);
        tree_d(acc.d, 1);
        *(double *)result = ldexp(sqrt(acc.d[0]), k);
    }
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
    const struct reals v = {t, n, incx, x};
    _Alignas(64) union lanes acc = {{0}};
    struct red red = {rt, &canon_blas_kernels()->t[rt], NULL, &acc};
    const int64_t nr = canon_blas_complex(t) ? 2 * n : n;
    if (n > 0 && incx > 0 &&
        !(incx == 1 && lanes_threaded(red.k, canon_blas_size(rt), nr, x, NULL, 0, &acc)))
        for_each_chunk(&v, asum_chunk, &red);
    finish_lanes(rt, &acc, result);
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
