/* The BLAS family (shim/blas): the one call protocol every generated
 * interceptor goes through (blas_enter/blas_leave, shim/blas/blas_call.c),
 * the descriptions of routines and operands it reads (emitted by
 * scripts/gen-blas-wrappers.py as data), and the operand helpers that turn
 * a routine's logical operand shapes (layout, transpose, rows, columns,
 * leading dimension, increment, referenced triangle) into digests of
 * exactly the elements the BLAS reads, and map CBLAS enums and Fortran
 * character arguments to the same upper-case chars, so cblas and Fortran
 * records read alike. The rules are in docs/blas.md.
 */
#ifndef DETSHIM_BLAS_H
#define DETSHIM_BLAS_H

#include <fenv.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif
#include <stdint.h>

#include "detshim.h"
#include "blas/canonical.h"
#include "core/core.h"
#include "core/policy.h"
#include "trace/digest.h"
#include "trace/trace.h"

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

/* n elements inc apart (BLAS rule for inc < 0); empty when n <= 0.
 * Inline, as blas_digest_value: the two shapes of most level-1 operands,
 * each digested through one call fewer. */
static inline struct blas_digest blas_digest_vec(const void *x, int64_t n, int64_t inc, int elem)
{
    struct blas_digest d = { digest_vector(x, n, inc, (size_t)elem), n > 0 ? (uint64_t)n : 0,
                             elem };
    return d;
}

/* The triangle uplo ('U'/'L') of the n x n matrix a, diagonal left out when
 * diag is 'U'. Empty when n <= 0, a char is not valid, or ld < n. */
struct blas_digest blas_digest_tri(char order, char uplo, char diag, int64_t n, const void *a,
                                   int64_t ld, int elem);

/* The triangle of blas_digest_tri, packed (n(n+1)/2 elements in ap);
 * herm: Hermitian, the diagonal's imaginary parts read as +0. Empty when
 * n <= 0 or a char is not valid. */
struct blas_digest blas_digest_packed(char order, char uplo, char diag, int64_t n, const void *ap,
                                      int elem, int herm);
/* blas_digest_tri with herm as blas_digest_packed. */
struct blas_digest blas_digest_tri_herm(char order, char uplo, int64_t n, const void *a,
                                        int64_t ld, int elem);
/* The band of an m x n matrix with kl sub- and ku super-diagonals in band
 * storage (ld >= kl + ku + 1), as ?gbmv reads it; empty when a dimension
 * is < 0 or ld is too short. */
struct blas_digest blas_digest_band(char order, int64_t m, int64_t n, int64_t kl, int64_t ku,
                                    const void *a, int64_t ld, int elem);
/* The uplo triangle of an n x n band matrix with k diagonals beside the
 * main one (ld >= k + 1), as ?sbmv, ?hbmv (herm), ?tbmv and ?tbsv read it
 * (the diagonal left out when diag is 'U'). */
struct blas_digest blas_digest_band_tri(char order, char uplo, char diag, int64_t n, int64_t k,
                                        const void *a, int64_t ld, int elem, int herm);
/* rotm's param array: the flag, then the H entries the flag says are used
 * (-2: none; < 0: all four; 0: h21, h12; > 0: h11, h22). */
struct blas_digest blas_digest_rotm_param(const void *param, int elem);

/* One value of `size` bytes (a function result): count 1. */
static inline struct blas_digest blas_digest_value(const void *v, int size)
{
    struct blas_digest d = { digest_bytes(v, (size_t)size), 1, size };
    return d;
}

/* Adds d to r as operand `name` (name_len: strlen(name)) with `role`
 * (TRACE_ROLE_IN/OUT). Inline: called out of line, d went through the
 * stack twice, the first time read whole just after it was written in
 * halves, which the CPU cannot forward. */
static inline void blas_rec_operand(struct trace_rec *r, const char *name, uint8_t name_len,
                                    int role, struct blas_digest d)
{
    trace_rec_operand(r, name, role, d.digest, d.count, d.elem_size);
    r->operands[r->noperands - 1].name_len = name_len;
}

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
 * routines without a canonical kernel and for arguments a kernel declines,
 * and runs the vendor for the routines exact by construction. */
enum blas_ran {
    BLAS_RAN_AS_MODE = 0,
    BLAS_RAN_NO_KERNEL = 1,
    BLAS_RAN_DECLINED = 2,
    BLAS_RAN_EXACT = 3
};
/* Adds the decision notes to a record: blas.mode (passthrough, pinned,
 * canonical, exact, or pinned with the reason canonical did not run) and,
 * when the vendor ran, blas.threads. */
void blas_note_run(struct trace_rec *r, int mode, int how);

/* ---- The call protocol (blas_call.c) ------------------------------------ */

/* One generated interceptor: the symbol `sym` with parameters `decl`,
 * described by `routine`, calling the vendor's `sym` (same type as ours)
 * with `args`; argv lists each parameter's address as blas_enter wants
 * it. BLAS_WRAPPER returns nothing (result: where a _sub form stores its
 * result, or NULL); BLAS_FUNCTION returns a `type`. */
#define BLAS_ARGV(...) ((const void *const[]){ __VA_ARGS__ })
#define BLAS_WRAPPER(sym, routine, flags, size, decl, args, argv, result)                  \
    DETSHIM_EXPORT void sym decl                                                           \
    {                                                                                      \
        static struct blas_site site = { #sym, sizeof #sym - 1, &routine, flags, size,     \
                                         NULL };                                           \
        struct blas_call call;                                                             \
        if (!blas_enter(&call, &site) || blas_start(&call, BLAS_ARGV argv, result))        \
            ((__typeof__(&sym))(uintptr_t)call.real) args;                                 \
        blas_leave(&call);                                                                 \
    }
#define BLAS_FUNCTION(type, sym, routine, flags, size, decl, args, argv)                   \
    DETSHIM_EXPORT type sym decl                                                           \
    {                                                                                      \
        static struct blas_site site = { #sym, sizeof #sym - 1, &routine, flags, size,     \
                                         NULL };                                           \
        struct blas_call call;                                                             \
        type ret = 0;                                                                      \
        if (!blas_enter(&call, &site) || blas_start(&call, BLAS_ARGV argv, &ret))          \
            ret = ((__typeof__(&sym))(uintptr_t)call.real) args;                           \
        blas_leave(&call);                                                                 \
        return ret;                                                                        \
    }

/* What a parameter is; the generator writes one per parameter, in the
 * cblas order (order first, where the routine has one). */
enum blas_kind {
    BLAS_K_ORDER, BLAS_K_TRANS, BLAS_K_TRANS_SYM, BLAS_K_TRANS_HERM, BLAS_K_UPLO, BLAS_K_SIDE,
    BLAS_K_DIAG,
    BLAS_K_DIM,    /* m, n, k, kl, ku: >= 0 in a level-2/3 routine */
    BLAS_K_LD,     /* >= max(1, the run of the operand stored with it) */
    BLAS_K_INC,    /* != 0 in a level-2 routine */
    BLAS_K_SCALAR, /* an element of the routine's precision */
    BLAS_K_REAL,   /* a real scalar even in a complex routine (csscal's alpha, rot's c, s) */
    BLAS_K_ARRAY,
    BLAS_K_RESULT, /* where a cblas _sub function stores its result */
};
/* BLAS_K_TRANS_SYM: a symmetric rank-k update's trans, which a complex
 * routine accepts as 'N' or 'T' only; BLAS_K_TRANS_HERM: a Hermitian
 * one's, 'N' or 'C' only. */

/* A dimension of an operand: v[a], or, when sel >= 0 and the char
 * parameter sel is not `ch`, v[b] (gemv's x has n elements when trans is
 * 'N', else m); the constant a when sel is -2. */
struct blas_dim {
    int8_t a, b, sel;
    char ch;
};
#define BLAS_DIM(a) { (a), (a), -1, 0 }
#define BLAS_DIM_IF(sel, ch, a, b) { (a), (b), (sel), (ch) }
#define BLAS_DIM_NONE { -1, -1, -1, 0 }

/* The operand shapes (docs/blas.md has which routine uses which). */
enum blas_shape {
    BLAS_GENERAL,   /* rows x cols of op(X), trans, ld */
    BLAS_VECTOR,    /* rows elements, ld is the increment */
    BLAS_TRIANGLE,  /* the uplo triangle of rows x rows, diag, ld */
    BLAS_PACKED,    /* the same triangle packed (ap), no ld */
    BLAS_BAND,      /* a rows x cols band matrix, kl sub- and ku super-diagonals, ld */
    BLAS_BAND_TRI,  /* the uplo triangle of a rows x rows band matrix, ku (the k) diagonals */
    BLAS_ELEMENT,   /* one element (rotg's a, b, c, s) */
    BLAS_ROTM_PARAM, /* rotm's param: the flag and the H entries the flag uses */
};
/* Operand flags: what the routine does with it, and when it does not. */
enum {
    BLAS_READ = 1,      /* digested as TRACE_ROLE_IN before the call */
    BLAS_WRITE = 2,     /* digested as TRACE_ROLE_OUT after it */
    BLAS_IF_ALPHA = 4,  /* not read when alpha == 0 */
    BLAS_IF_BETA = 8,   /* not read when beta == 0 (still written) */
    BLAS_POS_INC = 16,  /* not referenced when its increment is <= 0 */
    BLAS_HERM = 32,     /* Hermitian: the diagonal's imaginary parts are not read */
    BLAS_REAL_ELEM = 64, /* real elements in a complex routine (crotg's c) */
};
/* An operand: parameter indexes (-1: none). name_len is strlen(name),
 * written by the generator so that the record's encoder need not measure
 * it (as it cannot for a name that is not a literal where recorded). */
struct blas_operand {
    const char *name;
    uint8_t name_len, shape, flags;
    int8_t ptr, trans, uplo, diag, ld, kl, ku;
    struct blas_dim rows, cols;
};

/* Routine-level quick returns that reference no operand at all. */
enum {
    BLAS_QUICK_AB = 1,    /* alpha == 0 and beta == 1 */
    BLAS_QUICK_ABK = 2,   /* (alpha == 0 or k == 0) and beta == 1 */
    BLAS_QUICK_ALPHA = 4, /* alpha == 0 */
    BLAS_QUICK_ROTM = 8,  /* rotm's flag is -2: only the flag is read */
};

/* One routine without its precision (gemm): shared by its precisions,
 * interfaces and naming variants. */
struct blas_form {
    uint8_t level, nparams, noperands, quick;
    int8_t alpha, beta, k, has_order;
    const uint8_t *kinds;            /* enum blas_kind, per parameter */
    const char *const *names;        /* per parameter */
    const uint8_t *name_lens;        /* strlen of each of names (blas_operand's name_len) */
    const struct blas_operand *operands;
};

/* One parameter's value, decoded: chars upper-cased ('C' for the Fortran
 * interface's order), integers widened, pointers as passed (a scalar is
 * the address of its value; not const, as the arrays a routine writes
 * reach its kernel through them). */
union blas_val {
    int64_t i;
    char ch;
    void *p;
};

/* canon(v, result) runs detshim's kernel: 0, or nonzero when it declines
 * the arguments (the vendor then runs and reports the error). */
struct blas_routine {
    const char *name;
    uint8_t prec;               /* enum canon_type */
    uint8_t exact;              /* no arithmetic: the vendor's bits are exact */
    const struct blas_form *form;
    int (*canon)(const union blas_val *v, void *result);
};

enum { BLAS_SITE_F77 = 1, BLAS_SITE_INT64 = 2 };
/* One exported symbol; `real` caches the vendor's definition;
 * symbol_len is strlen(symbol). */
struct blas_site {
    const char *symbol;
    uint8_t symbol_len;
    const struct blas_routine *routine;
    uint8_t flags, result_size;
    void *real;
};

/* The floating-point state the shim's own work (validation, digests,
 * records) may change, held aside around it. On x86-64 that work computes
 * in SSE, never x87, so MXCSR alone is held: a few ns, where fenv's
 * feholdexcept/fesetenv (x87 state too) cost a tenth of a traced call.
 * blas_fp_hold saves the state, clears its exception flags and masks every
 * exception; blas_fp_set puts a held state back. */
#if defined(__SSE__)
typedef unsigned blas_fpstate;
/* MXCSR is written only when it changes: a write costs some 20 cycles,
 * and mostly the program's state is already the held one (no flag raised,
 * every exception masked). */
static inline void blas_fp_hold(blas_fpstate *s)
{
    unsigned held = (*s = _mm_getcsr(), (*s & ~0x3fu) | 0x1f80u); /* flags 0-5 cleared, masks 7-12 set */
    if (held != *s)
        _mm_setcsr(held);
}
static inline void blas_fp_set(const blas_fpstate *s)
{
    if (_mm_getcsr() != *s)
        _mm_setcsr(*s);
}
#else
typedef fenv_t blas_fpstate;
static inline void blas_fp_hold(blas_fpstate *s)
{
    feholdexcept(s);
}
static inline void blas_fp_set(const blas_fpstate *s)
{
    fesetenv(s);
}
#endif

#define BLAS_MAX_PARAMS 16
/* One call in flight, on the interceptor's stack. */
struct blas_call {
    void *real;                 /* the vendor's function, for the wrapper to call */
    int active, traced, mode, how, done;
    unsigned out;               /* operands written (bit j: operand j) */
    struct blas_site *site;
    void *result;
    blas_fpstate fp;            /* held around the shim's own work */
    char why[48];               /* a rejected call's note */
    union blas_val v[BLAS_MAX_PARAMS];
    struct trace_site where;    /* traced: walked by the wrapper (blas_enter) */
    struct trace_rec r;
};

/* Starts an intercepted call: 0 when it goes straight to the vendor,
 * untouched (re-entered from inside the shim or the vendor, or neither
 * traced nor changed by the policy), else 1, and blas_start follows.
 * Inline, and before the wrapper builds argv, so that a straight call
 * costs these tests only. Sets c->real, the vendor's function, and, when
 * it returns 1, c->traced and, traced, c->where. */
__attribute__((always_inline)) static inline int blas_enter(struct blas_call *c,
                                                            struct blas_site *s)
{
    c->real = resolve_real_cached(&s->real, s->symbol);
    c->active = 0;
    c->site = s;
    if (guard_held())
        return 0;
    /* trace_active() first: the first call starts the shim, policy included.
     * Kept for blas_start, which follows at once. */
    c->traced = trace_active();
    /* The call site, from the wrapper's own frame: the record's commit,
     * three calls down, would walk those too. */
    if (c->traced)
        trace_site_walk(&c->where);
    return c->traced || core_cfg.blas_mode != BLAS_MODE_PASSTHROUGH;
}

/* The protocol for a call blas_enter engaged. argv holds the address of
 * each parameter's value (a Fortran argument itself) in the symbol's own
 * order; result is where the function's result goes (NULL: none).
 * Returns 1 when the wrapper must now call c->real with its arguments
 * (passthrough, pinned, a rejected call, or no canonical kernel), 0 when
 * the canonical kernel has already run. Around its own work the caller's
 * FP environment is saved and restored, so the vendor runs with the
 * flags and modes the program left. */
int blas_start(struct blas_call *c, const void *const *argv, void *result);
void blas_call_finish(struct blas_call *c);

/* Ends every call: for one blas_start engaged, digests what the routine
 * wrote, commits the record, and leaves the FP status as the computation
 * left it (blas_call_finish). */
static inline void blas_leave(struct blas_call *c)
{
    if (c->active)
        blas_call_finish(c);
}

/* The first parameter a call gets wrong, as the reference BLAS's XERBLA
 * checks it (1-based position in v, order counted), or 0 when valid. */
int blas_validate(const struct blas_form *f, int complex, const union blas_val *v);
/* The value of a dimension. */
int64_t blas_dim_value(const struct blas_dim *d, const union blas_val *v);

#endif
