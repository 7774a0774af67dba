/* The BLAS call protocol: every generated interceptor (build/gen/
 * blas_wrappers.c, from scripts/gen-blas-wrappers.py) is one blas_enter /
 * blas_start / real call / blas_leave, and this file is all of it behind
 * the inline straight-through test (shim/blas/blas.h). In order:
 * decode the parameters from the routine's description; validate them as the
 * reference BLAS's XERBLA checks do; decide how the call runs
 * (passthrough, pinned vendor, or canonical kernel); digest the operands
 * the routine reads by its specification; call; digest what it wrote;
 * record. A rejected call is recorded with its parameters only, and goes
 * to the vendor so that its XERBLA reports it as without the shim. The
 * shim's own work runs with the caller's FP environment held aside, so a
 * traced call leaves the FP status flags an untraced one leaves. Sits
 * between the generated wrappers (left) and the operand helpers, the
 * canonical kernels and the trace writer (right). Rules: docs/blas.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "blas/blas.h"
#include "core/core.h"
#include "core/policy.h"
#include "trace/trace.h"

static const int elem_size[] = { [CANON_S] = 4, [CANON_D] = 8, [CANON_C] = 8, [CANON_Z] = 16 };

static int is_complex(int prec)
{
    return prec == CANON_C || prec == CANON_Z;
}

static int is_enum(int kind)
{
    return kind <= BLAS_K_DIAG;
}

/* A CBLAS enum (an int) as the Fortran char of its kind. */
static char cblas_char(int kind, int value)
{
    switch (kind) {
    case BLAS_K_ORDER:
        return blas_order_char(value);
    case BLAS_K_TRANS:
    case BLAS_K_TRANS_SYM:
    case BLAS_K_TRANS_HERM:
        return blas_trans_char(value);
    case BLAS_K_UPLO:
        return blas_uplo_char(value);
    case BLAS_K_SIDE:
        return blas_side_char(value);
    default:
        return blas_diag_char(value);
    }
}

/* Fills c->v from argv: the Fortran interface has no order (it is 'C'). */
static void decode(struct blas_call *c, const void *const *argv)
{
    const struct blas_form *f = c->site->routine->form;
    int f77 = c->site->flags & BLAS_SITE_F77, wide = c->site->flags & BLAS_SITE_INT64;
    int skip = f77 && f->has_order;
    if (skip)
        c->v[0].ch = 'C';
    for (int i = skip; i < f->nparams; i++) {
        const void *p = argv[i - skip];
        int kind = f->kinds[i];
        if (is_enum(kind)) {
            int e;
            if (!f77)
                memcpy(&e, p, sizeof e);
            c->v[i].ch = f77 ? blas_fchar(p) : cblas_char(kind, e);
        } else if (kind == BLAS_K_DIM || kind == BLAS_K_LD || kind == BLAS_K_INC) {
            int32_t i32;
            if (wide)
                memcpy(&c->v[i].i, p, sizeof c->v[i].i);
            else
                c->v[i].i = (memcpy(&i32, p, sizeof i32), i32);
        } else {
            c->v[i].p = (void *)(uintptr_t)p;
        }
    }
}

int64_t blas_dim_value(const struct blas_dim *d, const union blas_val *v)
{
    return v[d->sel >= 0 && v[d->sel].ch != d->ch ? d->b : d->a].i;
}

/* The layout: 'C' (column-major) unless a cblas order says 'R'. */
static char order_of(const struct blas_form *f, const union blas_val *v)
{
    return f->has_order ? v[0].ch : 'C';
}

/* The length of one stored run (a column for 'C', a row for 'R') of
 * operand o: what its leading dimension must cover. */
static int64_t run_length(char order, const struct blas_operand *o, const union blas_val *v)
{
    int64_t rows = blas_dim_value(&o->rows, v);
    if (o->shape == BLAS_TRIANGLE)
        return rows;
    if (o->shape == BLAS_BAND)
        return v[o->kl].i + v[o->ku].i + 1;
    if (o->shape == BLAS_BAND_TRI)
        return v[o->ku].i + 1;
    int64_t cols = blas_dim_value(&o->cols, v);
    int trans = o->trans >= 0 && v[o->trans].ch != 'N';
    int64_t stored_rows = trans ? cols : rows, stored_cols = trans ? rows : cols;
    return order == 'R' ? stored_cols : stored_rows;
}

static int valid_char(int kind, int complex, char ch)
{
    switch (kind) {
    case BLAS_K_ORDER:
        return ch == 'C' || ch == 'R';
    case BLAS_K_TRANS:
        return ch == 'N' || ch == 'T' || ch == 'C';
    case BLAS_K_TRANS_SYM:
        return ch == 'N' || ch == 'T' || (ch == 'C' && !complex);
    case BLAS_K_TRANS_HERM:
        return ch == 'N' || ch == 'C' || (ch == 'T' && !complex);
    case BLAS_K_UPLO:
        return ch == 'U' || ch == 'L';
    case BLAS_K_SIDE:
        return ch == 'L' || ch == 'R';
    default:
        return ch == 'N' || ch == 'U';
    }
}

int blas_validate(const struct blas_form *f, int complex, const union blas_val *v)
{
    /* Level-1 routines have no XERBLA: any n and increment is legal. */
    if (f->level < 2)
        return 0;
    for (int i = 0; i < f->nparams; i++) {
        int kind = f->kinds[i], bad = 0;
        if (is_enum(kind))
            bad = !valid_char(kind, complex, v[i].ch);
        else if (kind == BLAS_K_DIM)
            bad = v[i].i < 0;
        else if (kind == BLAS_K_INC)
            bad = f->level == 2 && v[i].i == 0;
        else if (kind == BLAS_K_LD)
            for (int j = 0; j < f->noperands; j++)
                if (f->operands[j].ld == i && f->operands[j].shape != BLAS_VECTOR &&
                    f->operands[j].shape != BLAS_ELEMENT) {
                    int64_t run = run_length(order_of(f, v), &f->operands[j], v);
                    bad |= v[i].i < (run > 1 ? run : 1);
                }
        if (bad)
            return i + 1;
    }
    return 0;
}

/* 1 if the scalar parameter i equals `want` (0 or 1); a complex one is
 * compared in both parts, a BLAS_K_REAL one as a real. */
static int scalar_is(const struct blas_call *c, int i, double want)
{
    int prec = c->site->routine->prec;
    const void *p = c->v[i].p;
    int complex = is_complex(prec) && c->site->routine->form->kinds[i] != BLAS_K_REAL;
    if (prec == CANON_S || prec == CANON_C) {
        float z[2] = { 0, 0 };
        memcpy(z, p, complex ? sizeof z : sizeof *z);
        return z[0] == (float)want && z[1] == 0;
    }
    double z[2] = { 0, 0 };
    memcpy(z, p, complex ? sizeof z : sizeof *z);
    return z[0] == want && z[1] == 0;
}

/* Which operands the routine references (bit j: operand j) on input and
 * on output, by its quick returns, its alpha/beta rules and its
 * increments. */
static void referenced(const struct blas_call *c, unsigned *in, unsigned *out)
{
    const struct blas_form *f = c->site->routine->form;
    int alpha0 = f->alpha >= 0 && scalar_is(c, f->alpha, 0);
    int beta0 = f->beta >= 0 && scalar_is(c, f->beta, 0);
    int k0 = f->k >= 0 && c->v[f->k].i == 0;
    int rotm_none = 0;
    *in = *out = 0;
    if ((f->quick & BLAS_QUICK_AB) && alpha0 && scalar_is(c, f->beta, 1))
        return;
    if ((f->quick & BLAS_QUICK_ABK) && (alpha0 || k0) && scalar_is(c, f->beta, 1))
        return;
    if ((f->quick & BLAS_QUICK_ALPHA) && alpha0)
        return;
    for (int j = 0; j < f->noperands; j++)
        if ((f->quick & BLAS_QUICK_ROTM) && f->operands[j].shape == BLAS_ROTM_PARAM)
            rotm_none = blas_digest_rotm_param(c->v[f->operands[j].ptr].p,
                                               elem_size[c->site->routine->prec]).count == 1;
    for (int j = 0; j < f->noperands; j++) {
        int fl = f->operands[j].flags;
        if (rotm_none && f->operands[j].shape != BLAS_ROTM_PARAM)
            continue;
        if ((fl & BLAS_POS_INC) && c->v[f->operands[j].ld].i <= 0)
            continue;
        if ((fl & BLAS_READ) && !((fl & BLAS_IF_ALPHA) && alpha0) && !((fl & BLAS_IF_BETA) && beta0))
            *in |= 1u << j;
        if (fl & BLAS_WRITE)
            *out |= 1u << j;
    }
}

/* The digest of operand o, read (role IN) or written (OUT). */
static struct blas_digest digest_operand(const struct blas_call *c, const struct blas_operand *o,
                                         int role)
{
    const union blas_val *v = c->v;
    char order = order_of(c->site->routine->form, v);
    int prec = c->site->routine->prec;
    int elem = elem_size[(o->flags & BLAS_REAL_ELEM) && prec >= CANON_C ? prec - CANON_C : prec];
    /* A Hermitian routine never reads the diagonal's imaginary parts, and
     * writes them as zero: the output digest covers them. */
    int herm = (o->flags & BLAS_HERM) && role == TRACE_ROLE_IN;
    char uplo = o->uplo >= 0 ? v[o->uplo].ch : 'U', diag = o->diag >= 0 ? v[o->diag].ch : 'N';
    int64_t rows = blas_dim_value(&o->rows, v);
    switch (o->shape) {
    case BLAS_GENERAL:
        return blas_digest_general(order, o->trans >= 0 ? v[o->trans].ch : 'N', rows,
                                   blas_dim_value(&o->cols, v), v[o->ptr].p, v[o->ld].i, elem);
    case BLAS_VECTOR:
        return blas_digest_vec(v[o->ptr].p, rows, v[o->ld].i, elem);
    case BLAS_TRIANGLE:
        if (herm)
            return blas_digest_tri_herm(order, uplo, rows, v[o->ptr].p, v[o->ld].i, elem);
        return blas_digest_tri(order, uplo, diag, rows, v[o->ptr].p, v[o->ld].i, elem);
    case BLAS_PACKED:
        return blas_digest_packed(order, uplo, diag, rows, v[o->ptr].p, elem, herm);
    case BLAS_BAND:
        return blas_digest_band(order, rows, blas_dim_value(&o->cols, v), v[o->kl].i, v[o->ku].i,
                                v[o->ptr].p, v[o->ld].i, elem);
    case BLAS_BAND_TRI:
        return blas_digest_band_tri(order, uplo, diag, rows, v[o->ku].i, v[o->ptr].p, v[o->ld].i,
                                    elem, herm);
    case BLAS_ELEMENT:
        return blas_digest_value(v[o->ptr].p, elem);
    default:
        return blas_digest_rotm_param(v[o->ptr].p, elem);
    }
}

static void digest_operands(struct blas_call *c, unsigned which, int role)
{
    const struct blas_form *f = c->site->routine->form;
    for (int j = 0; j < f->noperands; j++)
        if (which & (1u << j))
            blas_rec_operand(&c->r, f->operands[j].name, f->operands[j].name_len, role,
                             digest_operand(c, &f->operands[j], role));
}

/* The parameters as the generated wrappers recorded them: names and
 * values in the symbol's order; arrays are operands, not parameters. */
static void record_params(struct blas_call *c)
{
    const struct blas_form *f = c->site->routine->form;
    int prec = c->site->routine->prec;
    int start = (c->site->flags & BLAS_SITE_F77) && f->has_order;
    for (int i = start; i < f->nparams; i++) {
        const char *name = f->names[i];
        const void *p = c->v[i].p;
        int kind = f->kinds[i], recorded = c->r.nparams;
        if (is_enum(kind)) {
            trace_rec_char(&c->r, name, c->v[i].ch);
        } else if (kind == BLAS_K_DIM || kind == BLAS_K_LD || kind == BLAS_K_INC) {
            trace_rec_int(&c->r, name, c->v[i].i);
        } else if (kind == BLAS_K_SCALAR && prec == CANON_C) {
            trace_rec_c64(&c->r, name, p);
        } else if (kind == BLAS_K_SCALAR && prec == CANON_Z) {
            trace_rec_c128(&c->r, name, p);
        } else if ((kind == BLAS_K_SCALAR || kind == BLAS_K_REAL) &&
                   (prec == CANON_S || prec == CANON_C)) {
            float x;
            memcpy(&x, p, sizeof x);
            trace_rec_f32(&c->r, name, x);
        } else if (kind == BLAS_K_SCALAR || kind == BLAS_K_REAL) {
            double x;
            memcpy(&x, p, sizeof x);
            trace_rec_f64(&c->r, name, x);
        }
        if (c->r.nparams > recorded) /* the generator's length: not measured again */
            c->r.params[recorded].name_len = f->name_lens[i];
    }
}

/* Records a rejected call at once: the vendor's (or the program's) XERBLA
 * may end the process, and nothing of the call is digested anyway. */
static void commit_rejected(struct blas_call *c, int bad)
{
    const struct blas_form *f = c->site->routine->form;
    /* Numbered as the symbol's own parameters, as XERBLA numbers them. */
    int pos = bad - ((c->site->flags & BLAS_SITE_F77) && f->has_order);
    snprintf(c->why, sizeof c->why, "parameter %d (%s)", pos, f->names[bad - 1]);
    trace_rec_note(&c->r, "blas.rejected", c->why);
    blas_note_run(&c->r, c->mode, c->how);
    trace_rec_commit_at(&c->r, &c->where);
    c->done = 1;
}

int blas_start(struct blas_call *c, const void *const *argv, void *result)
{
    struct blas_site *s = c->site;
    int traced = c->traced, mode = core_cfg.blas_mode;
    if (!guard_enter())
        return 1;
    /* Held and cleared for our own work: a comparison of a subnormal
     * alpha must not raise the program's denormal flag, nor trap. */
    if (traced)
        blas_fp_hold(&c->fp);
    c->active = 1;
    c->mode = mode;
    c->result = result;
    c->done = 0;
    c->how = BLAS_RAN_AS_MODE;
    c->out = 0;
    decode(c, argv);
    const struct blas_routine *r = s->routine;
    /* Pinned and untraced, the vendor alone needs the arguments. */
    int bad = traced || mode == BLAS_MODE_CANONICAL
                  ? blas_validate(r->form, is_complex(r->prec), c->v) : 0;
    if (traced) {
        trace_rec_begin(&c->r, s->symbol);
        c->r.api_len = s->symbol_len;
        record_params(c);
    }
    int canonical = mode == BLAS_MODE_CANONICAL && !bad && r->canon;
    if (mode == BLAS_MODE_CANONICAL)
        c->how = bad        ? BLAS_RAN_DECLINED
                 : r->canon ? BLAS_RAN_AS_MODE
                 : r->exact ? BLAS_RAN_EXACT
                            : BLAS_RAN_NO_KERNEL;
    if (traced && bad) {
        commit_rejected(c, bad);
    } else if (traced) {
        unsigned in;
        referenced(c, &in, &c->out);
        digest_operands(c, in, TRACE_ROLE_IN);
    }
    if (mode == BLAS_MODE_CANONICAL)
        blas_canon_prepare();
    if (canonical) {
        if (traced)
            blas_fp_set(&c->fp);
        if (r->canon(c->v, result) == 0)
            return 0;
        /* Declined before computing anything: the vendor reports it. */
        c->how = BLAS_RAN_DECLINED;
        if (traced)
            blas_fp_hold(&c->fp);
    }
    if (mode != BLAS_MODE_PASSTHROUGH)
        blas_pin_vendor();
    if (traced)
        blas_fp_set(&c->fp);
    return 1;
}

void blas_call_finish(struct blas_call *c)
{
    if (c->traced && !c->done) {
        /* What the computation left is kept, whatever our digests raise. */
        blas_fp_hold(&c->fp);
        digest_operands(c, c->out, TRACE_ROLE_OUT);
        if (c->result && c->site->result_size)
            blas_rec_operand(&c->r, "result", sizeof "result" - 1, TRACE_ROLE_OUT,
                             blas_digest_value(c->result, c->site->result_size));
        blas_note_run(&c->r, c->mode, c->how);
        trace_rec_commit_at(&c->r, &c->where);
        blas_fp_set(&c->fp);
    }
    guard_leave();
}
