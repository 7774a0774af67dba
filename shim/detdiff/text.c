/* detdiff's text output: a comparison's result as the lines a person
 * reads (text_result), and the pieces --show prints records with. Every
 * string from a trace goes through text_put, which escapes anything but
 * printable ASCII, so a hostile trace cannot send escape sequences to a
 * terminal. Where it sits: after diff.c has classified the differences.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "detdiff.h"
#include "steps.h"

#define SITE_FRAMES 4   /* call-site frames printed per record in a diff */
#define TEXT_MAX 200    /* bytes of a header value printed in a diff */

/* Text: printable ASCII as is, anything else as \xNN, so a hostile trace
 * cannot send escape sequences to a terminal; at most `max` bytes. */
void text_put_n(FILE *f, const char *s, size_t len, size_t max)
{
    if (!s) {
        fputs("(none)", f);
        return;
    }
    for (size_t i = 0; i < len && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '\\')
            fputc(c, f);
        else if (c == '\\')
            fputs("\\\\", f);
        else
            fprintf(f, "\\x%02x", c);
    }
    if (len > max)
        fputs("...", f);
}

void text_put(FILE *f, const char *s)
{
    text_put_n(f, s, s ? strlen(s) : 0, SIZE_MAX);
}


static void text_param_value(FILE *f, const detshim_param *p)
{
    switch (p->type) {
    case TRACE_PARAM_INT:
        fprintf(f, "%" PRId64, p->v.i);
        break;
    case TRACE_PARAM_CHAR:
        text_put_n(f, &p->v.c, 1, 1);
        break;
    case TRACE_PARAM_F32:
        fprintf(f, "%.9g", p->v.f);
        break;
    case TRACE_PARAM_F64:
        fprintf(f, "%.17g", p->v.f);
        break;
    case TRACE_PARAM_C64:
        fprintf(f, "(%.9g,%.9g)", p->v.z[0], p->v.z[1]);
        break;
    case TRACE_PARAM_C128:
        fprintf(f, "(%.17g,%.17g)", p->v.z[0], p->v.z[1]);
        break;
    case TRACE_PARAM_STR:
        text_put(f, p->v.s);
        break;
    default:
        fprintf(f, "?type%u", p->type);
    }
}

void text_params(FILE *f, const detshim_record *r)
{
    int n = diff_nparams(r);
    if (n == 0)
        fputs(" (no params)", f);
    for (int i = 0; i < n; i++) {
        fputc(' ', f);
        text_put(f, r->params[i].name);
        fputc('=', f);
        text_param_value(f, &r->params[i]);
    }
}

void text_frame(FILE *f, const detshim_process *p, const detshim_frame *fr)
{
    const char *module = NULL, *symbol = NULL;
    if (fr->module == TRACE_PYTHON_MODULE && detshim_site_lookup(p, fr, &module, &symbol) == 0) {
        fputs("python ", f); /* "FILE:LINE in FUNCTION" */
        text_put(f, module && *module ? module : "?");
        fputs(" in ", f);
        text_put(f, symbol && *symbol ? symbol : "?");
    } else if (detshim_site_lookup(p, fr, &module, &symbol) == 0) {
        text_put(f, module && *module ? module : "?");
        fprintf(f, "+0x%" PRIx64 " ", fr->offset);
        text_put(f, symbol && *symbol ? symbol : "?");
    } else {
        fprintf(f, "module %016" PRIx64 "+0x%" PRIx64 " (not described in the trace)",
                fr->module, fr->offset);
    }
}

/* The call site, innermost first, one frame per line. */
static void text_site(FILE *f, const detshim_process *p, const detshim_record *r,
                      const char *indent)
{
    int n = diff_nframes(r);
    if (n == 0)
        fprintf(f, "%s(no call site recorded)\n", indent);
    int py = diff_python_frame(r) >= 0; /* last, and always shown */
    for (int i = 0; i < n - py && i < SITE_FRAMES; i++) {
        fprintf(f, "%s#%d ", indent, i);
        text_frame(f, p, &r->frames[i]);
        fputc('\n', f);
    }
    if (n - py > SITE_FRAMES)
        fprintf(f, "%s... %d more frames\n", indent, n - py - SITE_FRAMES);
    if (py) {
        fprintf(f, "%s#%d ", indent, n - 1);
        text_frame(f, p, &r->frames[n - 1]);
        fputc('\n', f);
    }
}

int diff_python_frame(const detshim_record *r)
{
    int n = diff_nframes(r);
    return n > 0 && r->frames[n - 1].module == TRACE_PYTHON_MODULE ? n - 1 : -1;
}

/* "seq S API params at innermost-frame" */
static void text_record_line(FILE *f, const detshim_process *p, const detshim_record *r)
{
    fprintf(f, "seq %" PRIu64 " ", r->seq);
    text_put(f, r->api);
    text_params(f, r);
    if (diff_nframes(r) > 0) {
        fputs(" at ", f);
        text_frame(f, p, &r->frames[0]);
    }
    int py = diff_python_frame(r);
    if (py > 0) {
        fputs(", ", f);
        text_frame(f, p, &r->frames[py]);
    }
    fputc('\n', f);
}

static void text_where(FILE *f, const struct diff_item *it)
{
    fprintf(f, "    where: thread " THREAD_FMT, THREAD_ARGS(it->ta->index));
    if (it->tb->index != it->ta->index)
        fprintf(f, " in run A, thread " THREAD_FMT " in run B", THREAD_ARGS(it->tb->index));
    fprintf(f, ", record %zu", it->index);
    if (it->ra->seq == it->rb->seq)
        fprintf(f, " (seq %" PRIu64 "), ", it->ra->seq);
    else
        fprintf(f, " (seq %" PRIu64 " in run A, %" PRIu64 " in run B), ", it->ra->seq,
                it->rb->seq);
    text_put(f, it->ra->api);
    if (!(it->ra->api && it->rb->api && strcmp(it->ra->api, it->rb->api) == 0)) {
        fputs(" in run A, ", f);
        text_put(f, it->rb->api);
        fputs(" in run B", f);
    }
    fputc('\n', f);
}

static void text_operand_layout(FILE *f, const detshim_operand *o)
{
    fprintf(f, "(%s, %" PRIu64 " x %u bytes)", role_name(o->role), o->count, o->elem_size);
}

static void text_record_diff(FILE *f, const struct diff_item *it)
{
    const detshim_record *a = it->ra, *b = it->rb;
    text_where(f, it);
    if (diff_params_equal(a, b)) {
        fputs("    shapes:", f);
        text_params(f, a);
        fputc('\n', f);
    } else {
        fputs("    shapes in run A:", f);
        text_params(f, a);
        fputs("\n    shapes in run B:", f);
        text_params(f, b);
        fputc('\n', f);
    }
    int na = diff_noperands(a), nb = diff_noperands(b);
    int header = 0;
    for (int i = 0; i < na || i < nb; i++) {
        const detshim_operand *oa = i < na ? &a->operands[i] : NULL;
        const detshim_operand *ob = i < nb ? &b->operands[i] : NULL;
        char ha[33], hb[33];
        if (oa && ob && diff_operand_layout_equal(oa, ob) && oa->digest.lo == ob->digest.lo &&
            oa->digest.hi == ob->digest.hi)
            continue;
        if (!header++)
            fputs("    operands that differ:\n", f);
        fputs("      ", f);
        if (oa && ob && diff_operand_layout_equal(oa, ob)) {
            text_put(f, oa->name);
            fputc(' ', f);
            text_operand_layout(f, oa);
            digest_hex(oa->digest, ha);
            digest_hex(ob->digest, hb);
            fprintf(f, ": run A %s, run B %s\n", ha, hb);
            continue;
        }
        for (int s = 0; s < 2; s++) {
            const detshim_operand *o = s ? ob : oa;
            fprintf(f, "%srun %s ", s ? "; " : "", s ? "B" : "A");
            if (!o) {
                fputs("has no such operand", f);
                continue;
            }
            text_put(f, o->name);
            fputc(' ', f);
            text_operand_layout(f, o);
            digest_hex(o->digest, ha);
            fprintf(f, " %s", ha);
        }
        fputc('\n', f);
    }
    if (!diff_notes_equal(a, b)) {
        for (int s = 0; s < 2; s++) {
            const detshim_record *r = s ? b : a;
            fprintf(f, "    notes in run %s:", s ? "B" : "A");
            if (diff_nnotes(r) == 0)
                fputs(" (none)", f);
            for (int i = 0; i < diff_nnotes(r); i++) {
                fputc(' ', f);
                text_put(f, r->notes[i].key);
                fputc('=', f);
                text_put(f, r->notes[i].value);
            }
            fputc('\n', f);
        }
    }
    fputs(diff_sites_equal(a, b) ? "    call site (innermost first):\n"
                                 : "    call site in run A (innermost first):\n",
          f);
    text_site(f, it->pa, a, "      ");
    if (!diff_sites_equal(a, b)) {
        fputs("    call site in run B:\n", f);
        text_site(f, it->pb, b, "      ");
    }
}

static void text_last_match(FILE *f, const struct diff_item *it)
{
    if (it->last_match) {
        fputs("    last matching record: ", f);
        text_record_line(f, it->pa, it->last_match);
    } else if (it->kind == DIFF_INPUTS) {
        fputs("    last matching record: none; no earlier call of this thread matches, so the "
              "difference entered before its first intercepted call\n",
              f);
    } else {
        fputs("    last matching record: none (no earlier record of this thread matches)\n", f);
    }
}

static void text_header_value(FILE *f, const detshim_field *fd)
{
    if (!fd) {
        fputs("(absent)", f);
        return;
    }
    fputc('"', f);
    text_put_n(f, fd->value, fd->value ? fd->len : 0, TEXT_MAX);
    fputc('"', f);
}

/* The line of a "NAME=...\n" or "NAME: ...\n" field block that names
 * `name` (len bytes), without its newline; NULL if none. */
static const char *setting_line(const detshim_field *fd, const char *name, size_t len,
                                size_t *linelen)
{
    const char *s = fd ? fd->value : NULL, *end = s ? s + fd->len : NULL;
    while (s && s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
        if (n > len && memcmp(s, name, len) == 0 && (s[len] == '=' || s[len] == ':')) {
            *linelen = n;
            return s;
        }
        s += n + 1;
    }
    return NULL;
}

static void text_setting_side(FILE *f, const detshim_process *p, const char *name, size_t len)
{
    size_t n;
    const char *line = setting_line(diff_compared_field(p, TRACE_FIELD_SETTINGS), name, len, &n);
    if (!line) {
        fputs("not set", f);
        return;
    }
    fputc('"', f);
    text_put_n(f, line + len + 1, n - len - 1, TEXT_MAX);
    fputc('"', f);
    const detshim_field *origins = NULL;
    for (int i = 0; i < p->nfields; i++)
        if (p->fields[i].key == TRACE_FIELD_SETTINGS_ORIGIN)
            origins = &p->fields[i];
    line = setting_line(origins, name, len, &n);
    if (line && n > len + 2) {
        fputs(" set by ", f);
        text_put_n(f, line + len + 2, n - len - 2, TEXT_MAX);
    }
}

/* One line per pinned variable whose value differs: the difference a user
 * most needs to see first ("run B had OMP_NUM_THREADS=2 from the user"). */
static void text_settings_diff(FILE *f, const struct diff_item *it)
{
    for (int side = 0; side < 2; side++) {
        const detshim_process *p = side ? it->pb : it->pa, *q = side ? it->pa : it->pb;
        const detshim_field *fd = diff_compared_field(p, TRACE_FIELD_SETTINGS);
        const char *s = fd ? fd->value : NULL, *end = s ? s + fd->len : NULL;
        while (s && s < end) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
            const char *eq = memchr(s, '=', n);
            size_t len = eq ? (size_t)(eq - s) : n, qn = 0;
            const char *other =
                setting_line(diff_compared_field(q, TRACE_FIELD_SETTINGS), s, len, &qn);
            int differs = !other || qn != n || memcmp(other, s, n) != 0;
            if (differs && !(side && other)) {
                fputs("  environment differs: ", f);
                text_put_n(f, s, len, TEXT_MAX);
                fputs(": run A ", f);
                text_setting_side(f, it->pa, s, len);
                fputs("; run B ", f);
                text_setting_side(f, it->pb, s, len);
                fputc('\n', f);
            }
            s += n + 1;
        }
    }
}

/* A run with the audit module traces CUDA calls that one without it never
 * sees; when the two differ in that, the records will too, so say why
 * first. */
static void text_interposition_note(FILE *f, const struct diff_item *it)
{
    int a = diff_ran_audited(it->pa), b = diff_ran_audited(it->pb);
    if (a < 0 || b < 0 || a == b)
        return;
    fprintf(f, "  note: run %c had the audit module (LD_AUDIT), run %c only LD_PRELOAD: "
               "CUDA calls looked up with dlsym (TensorFlow, JAX) are traced in run %c only; "
               "run both under detrun\n",
            a ? 'A' : 'B', a ? 'B' : 'A', a ? 'A' : 'B');
}

/* A window two summary traces disagree on: which, and how to name the
 * call in it. */
static void text_window(FILE *f, const struct diff_item *it)
{
    const detshim_thread *t = it->ta ? it->ta : it->tb;
    size_t last = it->index + (it->extra ? it->extra - 1 : 0);
    if (it->window_one_side)
        fprintf(f, "  window differs: thread " THREAD_FMT " window %zu (records %zu..%zu) is in "
                   "run %s only; run %s's stream ends before it\n",
                THREAD_ARGS(t->index), it->window, it->index, last, side_name(it->side),
                it->side == DIFF_SIDE_A ? "B" : "A");
    else
        fprintf(f, "  window differs: thread " THREAD_FMT " window %zu (records %zu..%zu): the "
                   "window digests differ, every earlier window matches\n",
                THREAD_ARGS(t->index), it->window, it->index, last);
    fprintf(f, "    a summary trace keeps only each window's digest, so the call is not named: "
               "re-run with full records in this window (detcheck --bisect RUN -- CMD, or "
               "DETSHIM_TRACE_FULL_WINDOW=%" PRIu32 ":%zu)\n",
            t->index, it->window);
}

static void text_item(FILE *f, const struct diff_item *it)
{
    const detshim_process *ps = it->side == DIFF_SIDE_A ? it->pa : it->pb;
    const detshim_thread *ts = it->side == DIFF_SIDE_A ? it->ta : it->tb;
    const char *other = it->side == DIFF_SIDE_A ? "B" : "A";
    switch (it->kind) {
    case DIFF_NONE:
        break;
    case DIFF_MISSING_PROCESS:
        fputs("  process ", f);
        text_put(f, pname(ps));
        fprintf(f, ": run %s's file ", side_name(it->side));
        text_put(f, ps->path);
        fprintf(f, ", %zu record%s in %d thread%s\n", diff_process_records(ps),
                plural(diff_process_records(ps)), ps->nthreads, plural((size_t)ps->nthreads));
        break;
    case DIFF_HEADER:
        if (it->field == TRACE_FIELD_SETTINGS) {
            text_settings_diff(f, it);
            break;
        }
        if (it->field == 0) {
            fputs("  header differs: the compared fields are equal but in a different order "
                  "or repeated\n",
                  f);
            break;
        }
        fputs("  header differs: ", f);
        if (diff_field_name(it->field))
            fputs(diff_field_name(it->field), f);
        else
            fprintf(f, "field %u", it->field);
        fputs(": run A ", f);
        text_header_value(f, diff_compared_field(it->pa, it->field));
        fputs(", run B ", f);
        text_header_value(f, diff_compared_field(it->pb, it->field));
        fputc('\n', f);
        break;
    case DIFF_TRUNCATED:
        if (!it->ta && !it->tb) {
            fprintf(f, "  truncated: run %s's file ", side_name(it->side));
            text_put(f, ps->path);
            fputs(" is incomplete: ", f);
            if (ps->trouble[0])
                text_put_n(f, ps->trouble, strnlen(ps->trouble, sizeof ps->trouble),
                           sizeof ps->trouble);
            else
                fputs("the reader marked it truncated", f);
            fprintf(f, "; read up to byte %" PRIu64 " of %" PRIu64 "\n", ps->valid_bytes,
                    ps->file_bytes);
            break;
        }
        if (!ts) {
            const detshim_thread *tl = it->ta ? it->ta : it->tb;
            fprintf(f, "  truncated: run %s's file ", side_name(it->side));
            text_put(f, ps->path);
            fprintf(f, " is incomplete and has no thread matching run %s's thread " THREAD_FMT
                       " (%zu record%s)\n",
                    other, THREAD_ARGS(tl->index), it->extra, plural(it->extra));
            break;
        }
        /* a stream that stops early in a truncated file */
        __attribute__((fallthrough));
    case DIFF_EXTRA_CALLS: {
        const detshim_thread *tl = it->side == DIFF_SIDE_A ? it->tb : it->ta;
        const detshim_record *next = it->side == DIFF_SIDE_A ? it->rb : it->ra;
        const detshim_process *pl = it->side == DIFF_SIDE_A ? it->pb : it->pa;
        if (it->kind == DIFF_TRUNCATED) {
            fprintf(f, "  truncated: run %s's thread " THREAD_FMT " stops after %zu record%s "
                       "because its file ",
                    side_name(it->side), THREAD_ARGS(ts->index), it->index, plural(it->index));
            text_put(f, ps->path);
            fprintf(f, " is incomplete; run %s's thread " THREAD_FMT " continues with %zu more\n",
                    other, THREAD_ARGS(tl->index), it->extra);
        } else if (it->index > 0) {
            /* Said of the run that did more, at the last record both have. */
            fprintf(f, "  extra calls: run %s made %zu more call%s after record %zu (thread "
                       THREAD_FMT "); run %s's thread " THREAD_FMT " ends there (its file is "
                       "complete)\n",
                    other, it->extra, plural(it->extra), it->index - 1, THREAD_ARGS(tl->index),
                    side_name(it->side), THREAD_ARGS(ts->index));
        } else {
            fprintf(f, "  extra calls: run %s made %zu call%s (thread " THREAD_FMT "); run %s's "
                       "thread " THREAD_FMT " made none (its file is complete)\n",
                    other, it->extra, plural(it->extra), THREAD_ARGS(tl->index),
                    side_name(it->side), THREAD_ARGS(ts->index));
        }
        fprintf(f, "    run %s continues with: ", other);
        text_record_line(f, pl, next);
        fputs("    its call site (innermost first):\n", f);
        text_site(f, pl, next, "      ");
        text_last_match(f, it);
        break;
    }
    case DIFF_MISSING_THREAD: {
        const detshim_thread *t = it->ta ? it->ta : it->tb;
        const detshim_record *first = it->ta ? it->ra : it->rb;
        fprintf(f, "  missing thread: run %s's thread " THREAD_FMT " (%zu record%s) has no "
                   "partner in run %s\n",
                side_name(it->side), THREAD_ARGS(t->index), t->nrecords, plural(t->nrecords), other);
        if (first) {
            fputs("    its first record: ", f);
            text_record_line(f, ps, first);
        }
        break;
    }
    case DIFF_DAMAGED:
        fprintf(f, "  damaged trace: in run %s's file ", side_name(it->side));
        text_put(f, ps->path);
        fprintf(f, ", thread " THREAD_FMT "'s end frame disagrees with its %zu record%s; the "
                   "file was altered or the writer lost records\n",
                THREAD_ARGS(ts->index), ts->nrecords, plural(ts->nrecords));
        break;
    case DIFF_ROOT: {
        char ha[65], hb[65];
        const uint8_t *ra = it->pa ? it->pa->root : NULL, *rb = it->pb ? it->pb->root : NULL;
        if (ra && rb) {
            detshim_hex32(ra, ha);
            detshim_hex32(rb, hb);
            fprintf(f, "  roots differ although every record matches: run A %s, run B %s "
                       "(a reader bug: please report it with both traces)\n",
                    ha, hb);
        } else {
            fputs("  roots differ although every process matches (a reader bug: please "
                  "report it with both traces)\n",
                  f);
        }
        break;
    }
    case DIFF_UNREADABLE:
        fputs("  ", f);
        text_put_n(f, it->file->reason, strnlen(it->file->reason, sizeof it->file->reason),
                   sizeof it->file->reason);
        fprintf(f, "; run %s ", other);
        if (it->compared) {
            fputs(it->pa || it->pb ? "has a process " : "has an unreadable file for ", f);
            text_put(f, it->file->name);
            fputs(" too\n", f);
        } else {
            fputs("has no process ", f);
            text_put(f, it->file->name);
            fputs(" to compare it with\n", f);
        }
        break;
    case DIFF_WINDOW: /* summary traces (windows.c) */
        text_window(f, it);
        break;
    case DIFF_NONDETERMINISTIC:
    case DIFF_INPUTS:
    case DIFF_CONTROL_FLOW:
    case DIFF_DECISION:
        fprintf(f, "  %s\n", diff_kind_text(it->kind));
        text_record_diff(f, it);
        text_last_match(f, it);
        break;
    }
}

/* Items come grouped by process pair; a group is printed under one line. */
static int same_group(const struct diff_item *x, const struct diff_item *y)
{
    return x->pa == y->pa && x->pb == y->pb;
}

/* Processes one run started and the other did not, under one line that
 * says which run started them: "run B started 6 more processes (main.f21
 * ... main.f26)". Returns their number. */
static size_t text_missing_processes(FILE *f, const struct diff_result *r, enum diff_side side)
{
    const detshim_process *first = NULL, *last = NULL;
    size_t n = 0, n_other = 0;
    for (size_t i = 0; i < r->nitems; i++) {
        const struct diff_item *it = &r->items[i];
        if (it->kind != DIFF_MISSING_PROCESS)
            continue;
        if (it->side != side) {
            n_other++;
            continue;
        }
        last = side == DIFF_SIDE_A ? it->pa : it->pb;
        if (!n++)
            first = last;
    }
    if (n == 0)
        return 0;
    fprintf(f, "run %s started %zu %sprocess%s", side_name(side), n, n_other ? "" : "more ",
            n == 1 ? "" : "es");
    if (n_other)
        fprintf(f, " that run %s did not", side == DIFF_SIDE_A ? "B" : "A");
    fputs(" (", f);
    text_put(f, pname(first));
    if (n > 1) {
        fputs(n == 2 ? ", " : " ... ", f);
        text_put(f, pname(last));
    }
    fputs(")\n", f);
    for (size_t i = 0; i < r->nitems; i++)
        if (r->items[i].kind == DIFF_MISSING_PROCESS && r->items[i].side == side)
            text_item(f, &r->items[i]);
    return n;
}

/* The files of one run that are not readable traces, under one line that
 * says what they may be. Returns their number. */
static size_t text_unreadable(FILE *f, const struct diff_result *r, enum diff_side side)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nitems; i++)
        n += r->items[i].kind == DIFF_UNREADABLE && r->items[i].side == side;
    if (n == 0)
        return 0;
    fprintf(f, "run %s holds %zu file%s named like a trace that %s not one (planted, or a "
               "process's trace cut before its header?):\n",
            side_name(side), n, plural(n), n == 1 ? "is" : "are");
    for (size_t i = 0; i < r->nitems; i++)
        if (r->items[i].kind == DIFF_UNREADABLE && r->items[i].side == side)
            text_item(f, &r->items[i]);
    return n;
}

/* Under a diverged pair of children: a line when they look swapped with
 * a sibling pair (diff_swapped_names), said once, under the first. */
static void text_swap_hint(FILE *f, const detshim_run *a, const detshim_run *b,
                           const struct diff_item *it)
{
    const detshim_process *qa, *qb;
    if (!a || !b || !it->pa || !it->pb || !diff_swapped_names(a, b, it->pa, it->pb, &qa, &qb) ||
        strcmp(pname(qa), pname(it->pa)) < 0)
        return;
    const char *p = pname(it->pa), *q = pname(qa);
    fputs("  hint: run A's ", f);
    text_put(f, p);
    fputs(" looks like run B's ", f);
    text_put(f, q);
    fputs(" and run A's ", f);
    text_put(f, q);
    fputs(" like run B's ", f);
    text_put(f, p);
    fputs(": the children were probably spawned concurrently and swapped names\n", f);
}

void text_result(FILE *f, const detshim_run *a, const detshim_run *b, const struct diff_result *r)
{
    const struct diff_item *prev = NULL;
    size_t groups = 0;
    if (r->nitems == 0) {
        char hex[65];
        detshim_hex32(a->root, hex);
        fprintf(f, "identical: %zu process%s, %zu record%s, root %s\n", r->nprocesses,
                r->nprocesses == 1 ? "" : "es", r->nrecords, plural(r->nrecords), hex);
        return;
    }
    steps_text(f, r);
    for (size_t i = 0; i < r->nitems; i++) {
        const struct diff_item *it = &r->items[i];
        if (it->kind == DIFF_MISSING_PROCESS || it->kind == DIFF_UNREADABLE)
            continue; /* listed together below */
        if (!prev || !same_group(it, prev)) {
            groups++;
            if (!it->pa && !it->pb) {
                fputs("run:\n", f);
            } else {
                fputs("process ", f);
                text_put(f, pname(it->pa ? it->pa : it->pb));
                fputs(": diverged (", f);
                text_put(f, it->pa ? it->pa->path : "absent");
                fputs(" vs ", f);
                text_put(f, it->pb ? it->pb->path : "absent");
                fputs(")\n", f);
                text_interposition_note(f, it);
                text_swap_hint(f, a, b, it);
            }
        }
        text_item(f, it);
        prev = it;
    }
    groups += text_missing_processes(f, r, DIFF_SIDE_A);
    groups += text_missing_processes(f, r, DIFF_SIDE_B);
    size_t unreadable = text_unreadable(f, r, DIFF_SIDE_A) + text_unreadable(f, r, DIFF_SIDE_B);
    fprintf(f, "diverged: %zu of %zu process%s differ%s, ", groups, r->nprocesses,
            r->nprocesses == 1 ? "" : "es", groups == 1 ? "s" : "");
    if (unreadable)
        fprintf(f, "%zu unreadable file%s, ", unreadable, plural(unreadable));
    fprintf(f, "%zu difference%s\n", r->nitems, plural(r->nitems));
    ranks_report(f, r);
}

