/* The framework's view of a divergence, said before any record-level
 * detail: "first differing step: 12, parameter layer3.weight" from the
 * step records the Python start-up hook writes (framework.step), and the
 * first differing framework op with its Python file:line (framework.op).
 * Both are found in the thread pairs whose records differ, by walking
 * each side's step (or op) records alone, n-th against n-th: a BLAS call
 * that differs earlier does not hide the step it led to. Where it sits:
 * after diff.c has found the items, before text.c and json.c print them
 * (docs/frameworks.md).
 */
#include <inttypes.h>
#include <string.h>

#include "detdiff.h"
#include "steps.h"

#define STEP_API "framework.step"
#define OP_API "framework.op"

static int is_api(const detshim_record *r, const char *api)
{
    return r->api && strcmp(r->api, api) == 0;
}

/* The next record of `api` from c: 1 with *r set (kept, owned by the
 * process), 0 past the end, or an error code. */
static int next_of(detshim_cursor *c, const char *api, const detshim_record **r)
{
    const detshim_record *x;
    int rc;
    while ((rc = detshim_cursor_next(c, &x)) == 1)
        if (is_api(x, api))
            return detshim_cursor_keep(c, 0, r) == 0 ? 1 : DETSHIM_ERR_IO;
    return rc;
}

/* The first operand of a whose digest or size differs from b's, or -1. */
static int differing_operand(const detshim_record *a, const detshim_record *b)
{
    int n = diff_noperands(a) < diff_noperands(b) ? diff_noperands(a) : diff_noperands(b);
    for (int i = 0; i < n; i++) {
        const detshim_operand *x = &a->operands[i], *y = &b->operands[i];
        if (x->count != y->count || x->digest.lo != y->digest.lo || x->digest.hi != y->digest.hi)
            return i;
    }
    return diff_noperands(a) != diff_noperands(b) ? n : -1;
}

/* Walks thread pair (ta, tb) for the first pair of `api` records that
 * differ, or the first one side has and the other not. Returns 1 with
 * *out filled, 0 when they agree, or an error code. */
static int first_in_pair(const struct diff_item *it, const char *api, struct steps_found *out)
{
    detshim_cursor *ca = NULL, *cb = NULL;
    int rc = detshim_cursor_open(it->pa, it->ta, &ca);
    if (rc == 0)
        rc = detshim_cursor_open(it->pb, it->tb, &cb);
    for (size_t n = 0; rc == 0; n++) {
        const detshim_record *ra = NULL, *rb = NULL;
        int ka = next_of(ca, api, &ra), kb = next_of(cb, api, &rb);
        if (ka < 0 || kb < 0) {
            rc = ka < 0 ? ka : kb;
            break;
        }
        if (!ka && !kb)
            break;
        if (ka && kb && diff_records_equal(ra, rb))
            continue;
        *out = (struct steps_found){ .found = 1, .item = it, .ra = ra, .rb = rb, .index = n,
                                     .operand = ra && rb ? differing_operand(ra, rb) : -1 };
        rc = 1;
    }
    detshim_cursor_close(ca);
    detshim_cursor_close(cb);
    return rc;
}

/* The first item's thread pair, in item order, where `api` records part. */
static int first_of(const struct diff_result *r, const char *api, struct steps_found *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < r->nitems; i++) {
        const struct diff_item *it = &r->items[i], *seen = NULL;
        if (!it->pa || !it->pb || !it->ta || !it->tb)
            continue;
        for (size_t j = 0; j < i && !seen; j++)
            if (r->items[j].ta == it->ta && r->items[j].tb == it->tb)
                seen = &r->items[j];
        if (seen)
            continue;
        int rc = first_in_pair(it, api, out);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int steps_first_step(const struct diff_result *r, struct steps_found *out)
{
    return first_of(r, STEP_API, out);
}

int steps_first_op(const struct diff_result *r, struct steps_found *out)
{
    return first_of(r, OP_API, out);
}

const detshim_param *steps_param(const detshim_record *r, const char *name)
{
    for (int i = 0; r && i < diff_nparams(r); i++)
        if (r->params[i].name && strcmp(r->params[i].name, name) == 0)
            return &r->params[i];
    return NULL;
}

const char *steps_operand_name(const struct steps_found *s)
{
    const detshim_record *r = s->ra;
    if (!r || s->operand < 0)
        return NULL;
    if (s->operand >= diff_noperands(r))
        r = s->rb && s->operand < diff_noperands(s->rb) ? s->rb : NULL;
    return r ? r->operands[s->operand].name : NULL;
}

/* The step number of the record found, or its place when it has none. */
static void text_step_number(FILE *f, const struct steps_found *s)
{
    const detshim_record *r = s->ra ? s->ra : s->rb;
    const detshim_param *step = steps_param(r, "step");
    if (step && step->type == TRACE_PARAM_INT)
        fprintf(f, "%" PRId64, step->v.i);
    else
        fprintf(f, "step record %zu of the thread (no step number)", s->index + 1);
}

/* One line: where the first differing step, then op, is. */
void steps_text(FILE *f, const struct diff_result *r)
{
    struct steps_found s;
    if (steps_first_step(r, &s) == 1) {
        fputs("first differing step: ", f);
        text_step_number(f, &s);
        const char *name = steps_operand_name(&s);
        if (!s.ra || !s.rb) {
            fprintf(f, ", made by run %s only", s.ra ? "A" : "B");
        } else if (name) {
            fputs(", parameter ", f);
            text_put(f, name);
        } else {
            fputs(", its record differs (", f);
            fputs(diff_kind_text(diff_classify(s.ra, s.rb)), f);
            fputc(')', f);
        }
        fputc('\n', f);
    }
    if (steps_first_op(r, &s) == 1) {
        const detshim_record *o = s.ra ? s.ra : s.rb;
        const detshim_param *op = steps_param(o, "op"), *site = steps_param(o, "site");
        fputs("first differing op: ", f);
        text_put(f, op && op->type == TRACE_PARAM_STR ? op->v.s : "?");
        fputs(" at ", f);
        text_put(f, site && site->type == TRACE_PARAM_STR ? site->v.s : "?");
        if (s.ra && s.rb) {
            const char *name = steps_operand_name(&s);
            fputs(" (", f);
            fputs(diff_kind_text(diff_classify(s.ra, s.rb)), f);
            if (name) {
                fputs(", ", f);
                text_put(f, name);
                fputs(" differs", f);
            }
            fputc(')', f);
        } else {
            fprintf(f, " (made by run %s only)", s.ra ? "A" : "B");
        }
        fputc('\n', f);
    }
}

static void json_str_param(FILE *f, const char *key, const detshim_record *r, const char *name)
{
    const detshim_param *p = steps_param(r, name);
    fprintf(f, ",\"%s\":", key);
    if (p && p->type == TRACE_PARAM_STR)
        json_put(f, p->v.s);
    else if (p && p->type == TRACE_PARAM_INT)
        fprintf(f, "%" PRId64, p->v.i);
    else
        fputs("null", f);
}

static void json_found(FILE *f, const char *key, const struct steps_found *s, int is_step)
{
    fprintf(f, ",\"%s\":", key);
    if (!s->found) {
        fputs("null", f);
        return;
    }
    const detshim_record *r = s->ra ? s->ra : s->rb;
    fputs("{\"process\":", f);
    json_put(f, pname(s->item->pa));
    fprintf(f, ",\"thread_a\":%" PRIu32 ",\"thread_b\":%" PRIu32, s->item->ta->index,
            s->item->tb->index);
    if (is_step) {
        json_str_param(f, "step", r, "step");
        json_str_param(f, "framework", r, "framework");
        fputs(",\"parameter\":", f);
    } else {
        json_str_param(f, "op", r, "op");
        json_str_param(f, "site", r, "site");
        fputs(",\"operand\":", f);
    }
    json_put(f, steps_operand_name(s));
    fputs(",\"only_in\":", f);
    fputs(s->ra && s->rb ? "null" : s->ra ? "\"a\"" : "\"b\"", f);
    fputs(",\"kind\":", f);
    if (s->ra && s->rb)
        fprintf(f, "\"%s\"", diff_kind_id(diff_classify(s->ra, s->rb)));
    else
        fputs("null", f);
    fputc('}', f);
}

void steps_json(FILE *f, const struct diff_result *r)
{
    struct steps_found s;
    if (steps_first_step(r, &s) != 1)
        s.found = 0;
    json_found(f, "first_step", &s, 1);
    if (steps_first_op(r, &s) != 1)
        s.found = 0;
    json_found(f, "first_op", &s, 0);
}
