/* detdiff --json: a comparison's result as one JSON object on one line,
 * for scripts (detcheck, detverify, CI). Strings from a trace are escaped
 * and bytes that are not valid UTF-8 become U+FFFD, so every output parses.
 * Where it sits: beside text.c, after diff.c has classified the differences.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "detdiff.h"
#include "steps.h"

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid. */
static int utf8_len(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    int n;
    unsigned lo = 0x80, hi = 0xbf;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0;
        if (c == 0xed)
            hi = 0x9f; /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90;
        if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if ((size_t)n > left)
        return 0;
    for (int i = 1; i < n; i++) {
        unsigned b = s[i];
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xbf))
            return 0;
    }
    return n;
}

/* A JSON string; bytes that are not valid UTF-8 become U+FFFD. */
void json_put_n(FILE *f, const char *s, size_t len)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', f);
    for (size_t i = 0; i < len;) {
        unsigned char c = u[i];
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc(c, f);
            i++;
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
            i++;
        } else {
            int n = utf8_len(u + i, len - i);
            if (n == 0) {
                fputs("\\ufffd", f);
                i++;
            } else {
                fwrite(u + i, 1, (size_t)n, f);
                i += (size_t)n;
            }
        }
    }
    fputc('"', f);
}

void json_put(FILE *f, const char *s)
{
    json_put_n(f, s, s ? strlen(s) : 0);
}


static void json_double(FILE *f, double d, int f32)
{
    if (isnan(d))
        fputs("\"nan\"", f);
    else if (isinf(d))
        fputs(d > 0 ? "\"inf\"" : "\"-inf\"", f);
    else
        fprintf(f, f32 ? "%.9g" : "%.17g", d);
}

void json_param_value(FILE *f, const detshim_param *p)
{
    switch (p->type) {
    case TRACE_PARAM_INT:
        fprintf(f, "%" PRId64, p->v.i);
        break;
    case TRACE_PARAM_CHAR:
        json_put_n(f, &p->v.c, 1);
        break;
    case TRACE_PARAM_F32:
    case TRACE_PARAM_F64:
        json_double(f, p->v.f, p->type == TRACE_PARAM_F32);
        break;
    case TRACE_PARAM_C64:
    case TRACE_PARAM_C128:
        fputc('[', f);
        json_double(f, p->v.z[0], p->type == TRACE_PARAM_C64);
        fputc(',', f);
        json_double(f, p->v.z[1], p->type == TRACE_PARAM_C64);
        fputc(']', f);
        break;
    case TRACE_PARAM_STR:
        json_put(f, p->v.s);
        break;
    default:
        fputs("null", f);
    }
}

static void json_site(FILE *f, const detshim_process *p, const detshim_record *r)
{
    fputc('[', f);
    for (int i = 0; i < diff_nframes(r); i++) {
        const char *module = NULL, *symbol = NULL;
        int known = p && detshim_site_lookup(p, &r->frames[i], &module, &symbol) == 0;
        fprintf(f, "%s{\"module_id\":\"%016" PRIx64 "\",\"offset\":%" PRIu64 ",\"module\":",
                i ? "," : "", r->frames[i].module, r->frames[i].offset);
        json_put(f, known ? module : NULL);
        fputs(",\"symbol\":", f);
        json_put(f, known ? symbol : NULL);
        fputc('}', f);
    }
    fputc(']', f);
}

static void json_record(FILE *f, const detshim_process *p, const detshim_record *r)
{
    if (!r) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"seq\":%" PRIu64 ",\"api\":", r->seq);
    json_put(f, r->api);
    fputs(",\"params\":{", f);
    for (int i = 0; i < diff_nparams(r); i++) {
        if (i)
            fputc(',', f);
        json_put(f, r->params[i].name ? r->params[i].name : "");
        fputc(':', f);
        json_param_value(f, &r->params[i]);
    }
    fputs("},\"operands\":[", f);
    for (int i = 0; i < diff_noperands(r); i++) {
        const detshim_operand *o = &r->operands[i];
        char hex[33];
        digest_hex(o->digest, hex);
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        json_put(f, o->name);
        fprintf(f, ",\"role\":\"%s\",\"elem_size\":%u,\"count\":%" PRIu64 ",\"digest\":\"%s\"}",
                role_name(o->role), o->elem_size, o->count, hex);
    }
    fputs("],\"notes\":{", f);
    for (int i = 0; i < diff_nnotes(r); i++) {
        if (i)
            fputc(',', f);
        json_put(f, r->notes[i].key ? r->notes[i].key : "");
        fputc(':', f);
        json_put(f, r->notes[i].value);
    }
    fputs("},\"site\":", f);
    json_site(f, p, r);
    fputc('}', f);
}

static void json_field_value(FILE *f, const detshim_field *fd)
{
    if (!fd)
        fputs("null", f);
    else
        json_put_n(f, fd->value, fd->value ? fd->len : 0);
}

/* a and b are the runs when this is the first item of its process (the
 * swapped-names hint is looked for once per process), else NULL. */
static void json_item(FILE *f, const detshim_run *a, const detshim_run *b,
                      const struct diff_item *it)
{
    const detshim_process *ps = it->side == DIFF_SIDE_A ? it->pa : it->pb;
    /* An unreadable file stands where its side's process would. */
    const char *unreadable = it->kind == DIFF_UNREADABLE ? it->file->path : NULL;
    fputs("{\"process\":", f);
    json_put(f, unreadable ? it->file->name : pname(it->pa ? it->pa : it->pb));
    fprintf(f, ",\"kind\":\"%s\",\"text\":", diff_kind_id(it->kind));
    json_put(f, diff_kind_text(it->kind));
    fputs(",\"file_a\":", f);
    json_put(f, unreadable && it->side == DIFF_SIDE_A ? unreadable : it->pa ? it->pa->path : NULL);
    fputs(",\"file_b\":", f);
    json_put(f, unreadable && it->side == DIFF_SIDE_B ? unreadable : it->pb ? it->pb->path : NULL);
    /* What `side` means depends on the kind; JSON says it by name. */
    const char *side = it->side == DIFF_SIDE_A ? "a" : "b";
    switch (it->kind) {
    case DIFF_MISSING_PROCESS:
    case DIFF_MISSING_THREAD:
        fprintf(f, ",\"present_in\":\"%s\"", side);
        break;
    case DIFF_UNREADABLE:
        /* One that had to be compared never gets here: detdiff stops. */
        fprintf(f, ",\"present_in\":\"%s\",\"reason\":", side);
        json_put_n(f, it->file->reason, strnlen(it->file->reason, sizeof it->file->reason));
        break;
    case DIFF_TRUNCATED:
        fprintf(f, ",\"truncated_run\":\"%s\"", side);
        break;
    case DIFF_EXTRA_CALLS:
        fprintf(f, ",\"ends_early\":\"%s\"", side);
        break;
    case DIFF_DAMAGED:
        fprintf(f, ",\"damaged_run\":\"%s\"", side);
        break;
    default:
        break;
    }
    switch (it->kind) {
    case DIFF_HEADER:
        fputs(",\"field\":", f);
        if (it->field == 0)
            fputs("null", f); /* same fields, different order */
        else if (diff_field_name(it->field))
            json_put(f, diff_field_name(it->field));
        else
            fprintf(f, "%u", it->field);
        fputs(",\"value_a\":", f);
        json_field_value(f, it->field ? diff_compared_field(it->pa, it->field) : NULL);
        fputs(",\"value_b\":", f);
        json_field_value(f, it->field ? diff_compared_field(it->pb, it->field) : NULL);
        break;
    case DIFF_WINDOW: /* index and extra: its first record and count */
        fprintf(f, ",\"window\":%zu", it->window);
        if (it->window_one_side)
            fprintf(f, ",\"window_only_in\":\"%s\"", it->side == DIFF_SIDE_A ? "a" : "b");
        break;
    case DIFF_ROOT:
        if (it->pa && it->pb) {
            char ha[65], hb[65];
            detshim_hex32(it->pa->root, ha);
            detshim_hex32(it->pb->root, hb);
            fprintf(f, ",\"root_a\":\"%s\",\"root_b\":\"%s\"", ha, hb);
        }
        break;
    default:
        break;
    }
    const detshim_process *qa, *qb;
    if (a && b && it->pa && it->pb && diff_swapped_names(a, b, it->pa, it->pb, &qa, &qb)) {
        fputs(",\"swapped_with\":", f); /* run A's process looks like run B's of this name */
        json_put(f, pname(qa));
    }
    int audited_a = diff_ran_audited(it->pa), audited_b = diff_ran_audited(it->pb);
    if (audited_a >= 0 && audited_b >= 0 && audited_a != audited_b)
        fprintf(f, ",\"audit_module_only_in\":\"%s\"", audited_a ? "a" : "b");
    if (it->kind == DIFF_TRUNCATED && ps) {
        fprintf(f, ",\"valid_bytes\":%" PRIu64 ",\"file_bytes\":%" PRIu64 ",\"trouble\":",
                ps->valid_bytes, ps->file_bytes);
        json_put_n(f, ps->trouble, strnlen(ps->trouble, sizeof ps->trouble));
    }
    if (it->ta || it->tb) {
        fputs(",\"thread_a\":", f);
        if (it->ta)
            fprintf(f, "%" PRIu32, it->ta->index);
        else
            fputs("null", f);
        fputs(",\"thread_b\":", f);
        if (it->tb)
            fprintf(f, "%" PRIu32, it->tb->index);
        else
            fputs("null", f);
        fprintf(f, ",\"index\":%zu,\"extra\":%zu,\"record_a\":", it->index, it->extra);
        json_record(f, it->pa, it->ra);
        fputs(",\"record_b\":", f);
        json_record(f, it->pb, it->rb);
        fputs(",\"last_match\":", f);
        json_record(f, it->pa, it->last_match);
    }
    fputc('}', f);
}

void json_result(FILE *f, const char *pa, const char *pb, const detshim_run *a,
                        const detshim_run *b, const struct diff_result *r)
{
    char ha[65], hb[65];
    detshim_hex32(a->root, ha);
    detshim_hex32(b->root, hb);
    fprintf(f, "{\"result\":\"%s\",\"processes\":%zu,\"records\":%zu,\"root\":",
            r->nitems ? "diverged" : "identical", r->nprocesses, r->nrecords);
    if (r->nitems)
        fputs("null", f);
    else
        fprintf(f, "\"%s\"", ha);
    fputs(",\"run_a\":", f);
    json_put(f, pa);
    fputs(",\"run_b\":", f);
    json_put(f, pb);
    fprintf(f, ",\"root_a\":\"%s\",\"root_b\":\"%s\"", ha, hb);
    steps_json(f, r);
    fputs(",\"divergences\":[", f);
    for (size_t i = 0; i < r->nitems; i++) {
        if (i)
            fputc(',', f);
        const struct diff_item *it = &r->items[i];
        int first = i == 0 || it->pa != r->items[i - 1].pa || it->pb != r->items[i - 1].pb;
        json_item(f, first ? a : NULL, first ? b : NULL, it);
    }
    fputc(']', f);
    ranks_json(f, r);
    fputs("}\n", f);
}

