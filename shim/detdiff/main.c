/* detdiff, the command: loads runs through the reader API (detshim.h),
 * compares them with diff.c and explains the result as text or one JSON
 * object. It also prints one trace readably (--show) and a run's root
 * (--root). Exit status: 0 identical, 1 diverged, 2 trouble; every error is
 * one line on stderr starting with "detdiff: ".
 *
 * --root on a run with a truncated or damaged file still prints the root
 * (so scripts see what was read), but warns on stderr and exits 1: such a
 * root commits to part of a run only and must not be published.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "detshim.h"
#include "detshim/diff.h"
#include "detshim/trace_format.h"

/* A thread as printed: its index, and whether it is that thread's entropy
 * stream (bit 31 of the index in the format). */
#define THREAD_FMT "%" PRIu32 "%s"
#define THREAD_ARGS(index) ((index) & ~(TRACE_THREAD_ENTROPY | TRACE_THREAD_IDENTITY)), \
    ((index) & TRACE_THREAD_ENTROPY ? " (entropy)" : (index) & TRACE_THREAD_IDENTITY ? " (identity)" : "")

enum { EXIT_IDENTICAL = 0, EXIT_DIVERGED = 1, EXIT_TROUBLE = 2 };

#define SITE_FRAMES 4   /* call-site frames printed per record in a diff */
#define TEXT_MAX 200    /* bytes of a header value printed in a diff */

static const char usage_line[] =
    "usage: detdiff [--json] [--all] RUN_A RUN_B | detdiff --show TRACE | "
    "detdiff [--json] --root RUN";

static const char help_text[] =
    "detdiff: compare two detshim runs and explain the first divergence\n"
    "\n"
    "  detdiff [--json] [--all] RUN_A RUN_B\n"
    "      RUN_A, RUN_B: trace directories (DETSHIM_TRACE) or single .dtrace files.\n"
    "      Exit 0: identical; 1: diverged (explained on stdout); 2: trouble.\n"
    "      --all   list every differing record, not only the first per thread\n"
    "      --json  print the result as one JSON object\n"
    "  detdiff --show TRACE     print a trace (directory or file) readably\n"
    "  detdiff [--json] --root RUN\n"
    "      print the run's root (SHA-256, hex). Exit 1, with a warning on\n"
    "      stderr, if a file of the run is truncated or damaged: that root\n"
    "      covers part of the run only.\n";

static int json_errors; /* errors are also printed as JSON on stdout */

/* ---- output helpers ------------------------------------------------ */

/* Text: printable ASCII as is, anything else as \xNN, so a hostile trace
 * cannot send escape sequences to a terminal; at most `max` bytes. */
static void put_text_n(FILE *f, const char *s, size_t len, size_t max)
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

static void put_text(FILE *f, const char *s)
{
    put_text_n(f, s, s ? strlen(s) : 0, SIZE_MAX);
}

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
static void put_json_n(FILE *f, const char *s, size_t len)
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

static void put_json(FILE *f, const char *s)
{
    put_json_n(f, s, s ? strlen(s) : 0);
}

/* XXH3-128 in its canonical (big-endian) hex form. */
static void digest_hex(detshim_digest d, char out[33])
{
    snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, d.hi, d.lo);
}

/* "s" when n is not 1, for "3 records" and "1 record". */
static const char *plural(size_t n)
{
    return n == 1 ? "" : "s";
}

static const char *side_name(enum diff_side s)
{
    return s == DIFF_SIDE_A ? "A" : "B";
}

static const char *role_name(uint8_t role)
{
    return role == TRACE_ROLE_IN ? "in" : role == TRACE_ROLE_OUT ? "out" : "role?";
}

static const char *pname(const detshim_process *p)
{
    return p && p->name ? p->name : "(unnamed)";
}

/* ---- errors -------------------------------------------------------- */

static void fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    fprintf(stderr, "detdiff: %s\n", msg);
    if (json_errors) {
        fputs("{\"result\":\"error\",\"error\":", stdout);
        put_json(stdout, msg);
        fputs("}\n", stdout);
    }
}

/* What to do about a load error; NULL where the reader's own message
 * already says it (a version mismatch, an empty directory). */
static const char *load_advice(int rc)
{
    switch (rc) {
    case DETSHIM_ERR_IO:
        return "check the path and its permissions";
    case DETSHIM_ERR_FORMAT:
        return "give a directory written with DETSHIM_TRACE=DIR or one of its .dtrace files";
    case DETSHIM_ERR_NOMEM:
        return "free some memory and try again";
    }
    return NULL;
}

/* Loads a run; on failure prints the error line and returns NULL. The
 * reader's message names the file at fault. */
static detshim_run *load(const char *path)
{
    char err[512] = "";
    detshim_run *run = NULL;
    int rc = detshim_run_load(path, &run, err, sizeof err);
    if (rc == 0 && run)
        return run;
    if (rc == 0)
        rc = DETSHIM_ERR_FORMAT;
    const char *advice = load_advice(rc);
    if (!err[0])
        snprintf(err, sizeof err, "%s: cannot load (error %d)", path, rc);
    if (advice)
        fail("%s; %s", err, advice);
    else
        fail("%s", err);
    return NULL;
}

/* ---- records, as text ---------------------------------------------- */

static void text_param_value(FILE *f, const detshim_param *p)
{
    switch (p->type) {
    case TRACE_PARAM_INT:
        fprintf(f, "%" PRId64, p->v.i);
        break;
    case TRACE_PARAM_CHAR:
        put_text_n(f, &p->v.c, 1, 1);
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
        put_text(f, p->v.s);
        break;
    default:
        fprintf(f, "?type%u", p->type);
    }
}

static void text_params(FILE *f, const detshim_record *r)
{
    int n = diff_nparams(r);
    if (n == 0)
        fputs(" (no params)", f);
    for (int i = 0; i < n; i++) {
        fputc(' ', f);
        put_text(f, r->params[i].name);
        fputc('=', f);
        text_param_value(f, &r->params[i]);
    }
}

static void text_frame(FILE *f, const detshim_process *p, const detshim_frame *fr)
{
    const char *module = NULL, *symbol = NULL;
    if (detshim_site_lookup(p, fr, &module, &symbol) == 0) {
        put_text(f, module && *module ? module : "?");
        fprintf(f, "+0x%" PRIx64 " ", fr->offset);
        put_text(f, symbol && *symbol ? symbol : "?");
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
    for (int i = 0; i < n && i < SITE_FRAMES; i++) {
        fprintf(f, "%s#%d ", indent, i);
        text_frame(f, p, &r->frames[i]);
        fputc('\n', f);
    }
    if (n > SITE_FRAMES)
        fprintf(f, "%s... %d more frames\n", indent, n - SITE_FRAMES);
}

/* "seq S API params at innermost-frame" */
static void text_record_line(FILE *f, const detshim_process *p, const detshim_record *r)
{
    fprintf(f, "seq %" PRIu64 " ", r->seq);
    put_text(f, r->api);
    text_params(f, r);
    if (diff_nframes(r) > 0) {
        fputs(" at ", f);
        text_frame(f, p, &r->frames[0]);
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
    put_text(f, it->ra->api);
    if (!(it->ra->api && it->rb->api && strcmp(it->ra->api, it->rb->api) == 0)) {
        fputs(" in run A, ", f);
        put_text(f, it->rb->api);
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
            put_text(f, oa->name);
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
            put_text(f, o->name);
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
                put_text(f, r->notes[i].key);
                fputc('=', f);
                put_text(f, r->notes[i].value);
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
    put_text_n(f, fd->value, fd->value ? fd->len : 0, TEXT_MAX);
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
    put_text_n(f, line + len + 1, n - len - 1, TEXT_MAX);
    fputc('"', f);
    const detshim_field *origins = NULL;
    for (int i = 0; i < p->nfields; i++)
        if (p->fields[i].key == TRACE_FIELD_SETTINGS_ORIGIN)
            origins = &p->fields[i];
    line = setting_line(origins, name, len, &n);
    if (line && n > len + 2) {
        fputs(" set by ", f);
        put_text_n(f, line + len + 2, n - len - 2, TEXT_MAX);
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
                put_text_n(f, s, len, TEXT_MAX);
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

/* 1 if p's trace says the audit module was loaded, 0 if it says it was
 * not, -1 if it does not say (a trace from before the field existed). */
static int ran_audited(const detshim_process *p)
{
    static const char audited[] = TRACE_INTERPOSITION_AUDIT;
    for (int i = 0; p && i < p->nfields; i++)
        if (p->fields[i].key == TRACE_FIELD_INTERPOSITION)
            return p->fields[i].len == sizeof audited - 1 &&
                   memcmp(p->fields[i].value, audited, sizeof audited - 1) == 0;
    return -1;
}

/* A run with the audit module traces CUDA calls that one without it never
 * sees; when the two differ in that, the records will too, so say why
 * first. */
static void text_interposition_note(FILE *f, const struct diff_item *it)
{
    int a = ran_audited(it->pa), b = ran_audited(it->pb);
    if (a < 0 || b < 0 || a == b)
        return;
    fprintf(f, "  note: run %c had the audit module (LD_AUDIT), run %c only LD_PRELOAD: "
               "CUDA calls looked up with dlsym (TensorFlow, JAX) are traced in run %c only; "
               "run both under detrun\n",
            a ? 'A' : 'B', a ? 'B' : 'A', a ? 'A' : 'B');
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
        fprintf(f, "  missing process: run %s has no process ", other);
        put_text(f, pname(ps));
        fprintf(f, " (run %s's file ", side_name(it->side));
        put_text(f, ps->path);
        fprintf(f, " has %zu record%s in %d thread%s)\n", diff_process_records(ps),
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
            put_text(f, ps->path);
            fputs(" is incomplete: ", f);
            if (ps->trouble[0])
                put_text_n(f, ps->trouble, strnlen(ps->trouble, sizeof ps->trouble),
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
            put_text(f, ps->path);
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
            put_text(f, ps->path);
            fprintf(f, " is incomplete; run %s's thread " THREAD_FMT " continues with %zu more\n",
                    other, THREAD_ARGS(tl->index), it->extra);
        } else {
            fprintf(f, "  extra calls: run %s's thread " THREAD_FMT " makes %zu more call%s after "
                       "%zu record%s; run %s's thread " THREAD_FMT " ends there (its file is "
                       "complete)\n",
                    other, THREAD_ARGS(tl->index), it->extra, plural(it->extra), it->index,
                    plural(it->index), side_name(it->side), THREAD_ARGS(ts->index));
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
        put_text(f, ps->path);
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

static void text_result(FILE *f, const detshim_run *a, const struct diff_result *r)
{
    size_t groups = 0;
    if (r->nitems == 0) {
        char hex[65];
        detshim_hex32(a->root, hex);
        fprintf(f, "identical: %zu process%s, %zu record%s, root %s\n", r->nprocesses,
                r->nprocesses == 1 ? "" : "es", r->nrecords, plural(r->nrecords), hex);
        return;
    }
    for (size_t i = 0; i < r->nitems; i++) {
        const struct diff_item *it = &r->items[i];
        if (i == 0 || !same_group(it, &r->items[i - 1])) {
            groups++;
            if (!it->pa && !it->pb) {
                fputs("run:\n", f);
            } else {
                fputs("process ", f);
                put_text(f, pname(it->pa ? it->pa : it->pb));
                fputs(": diverged (", f);
                put_text(f, it->pa ? it->pa->path : "absent");
                fputs(" vs ", f);
                put_text(f, it->pb ? it->pb->path : "absent");
                fputs(")\n", f);
                text_interposition_note(f, it);
            }
        }
        text_item(f, it);
    }
    fprintf(f, "diverged: %zu of %zu process%s differ%s, %zu difference%s\n", groups,
            r->nprocesses, r->nprocesses == 1 ? "" : "es", groups == 1 ? "s" : "",
            r->nitems, plural(r->nitems));
}

/* ---- JSON ---------------------------------------------------------- */

static void json_double(FILE *f, double d, int f32)
{
    if (isnan(d))
        fputs("\"nan\"", f);
    else if (isinf(d))
        fputs(d > 0 ? "\"inf\"" : "\"-inf\"", f);
    else
        fprintf(f, f32 ? "%.9g" : "%.17g", d);
}

static void json_param_value(FILE *f, const detshim_param *p)
{
    switch (p->type) {
    case TRACE_PARAM_INT:
        fprintf(f, "%" PRId64, p->v.i);
        break;
    case TRACE_PARAM_CHAR:
        put_json_n(f, &p->v.c, 1);
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
        put_json(f, p->v.s);
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
        put_json(f, known ? module : NULL);
        fputs(",\"symbol\":", f);
        put_json(f, known ? symbol : NULL);
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
    put_json(f, r->api);
    fputs(",\"params\":{", f);
    for (int i = 0; i < diff_nparams(r); i++) {
        if (i)
            fputc(',', f);
        put_json(f, r->params[i].name ? r->params[i].name : "");
        fputc(':', f);
        json_param_value(f, &r->params[i]);
    }
    fputs("},\"operands\":[", f);
    for (int i = 0; i < diff_noperands(r); i++) {
        const detshim_operand *o = &r->operands[i];
        char hex[33];
        digest_hex(o->digest, hex);
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        put_json(f, o->name);
        fprintf(f, ",\"role\":\"%s\",\"elem_size\":%u,\"count\":%" PRIu64 ",\"digest\":\"%s\"}",
                role_name(o->role), o->elem_size, o->count, hex);
    }
    fputs("],\"notes\":{", f);
    for (int i = 0; i < diff_nnotes(r); i++) {
        if (i)
            fputc(',', f);
        put_json(f, r->notes[i].key ? r->notes[i].key : "");
        fputc(':', f);
        put_json(f, r->notes[i].value);
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
        put_json_n(f, fd->value, fd->value ? fd->len : 0);
}

static void json_item(FILE *f, const struct diff_item *it)
{
    const detshim_process *ps = it->side == DIFF_SIDE_A ? it->pa : it->pb;
    fputs("{\"process\":", f);
    put_json(f, pname(it->pa ? it->pa : it->pb));
    fprintf(f, ",\"kind\":\"%s\",\"text\":", diff_kind_id(it->kind));
    put_json(f, diff_kind_text(it->kind));
    fputs(",\"file_a\":", f);
    put_json(f, it->pa ? it->pa->path : NULL);
    fputs(",\"file_b\":", f);
    put_json(f, it->pb ? it->pb->path : NULL);
    /* What `side` means depends on the kind; JSON says it by name. */
    const char *side = it->side == DIFF_SIDE_A ? "a" : "b";
    switch (it->kind) {
    case DIFF_MISSING_PROCESS:
    case DIFF_MISSING_THREAD:
        fprintf(f, ",\"present_in\":\"%s\"", side);
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
            put_json(f, diff_field_name(it->field));
        else
            fprintf(f, "%u", it->field);
        fputs(",\"value_a\":", f);
        json_field_value(f, it->field ? diff_compared_field(it->pa, it->field) : NULL);
        fputs(",\"value_b\":", f);
        json_field_value(f, it->field ? diff_compared_field(it->pb, it->field) : NULL);
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
    int audited_a = ran_audited(it->pa), audited_b = ran_audited(it->pb);
    if (audited_a >= 0 && audited_b >= 0 && audited_a != audited_b)
        fprintf(f, ",\"audit_module_only_in\":\"%s\"", audited_a ? "a" : "b");
    if (it->kind == DIFF_TRUNCATED && ps) {
        fprintf(f, ",\"valid_bytes\":%" PRIu64 ",\"file_bytes\":%" PRIu64 ",\"trouble\":",
                ps->valid_bytes, ps->file_bytes);
        put_json_n(f, ps->trouble, strnlen(ps->trouble, sizeof ps->trouble));
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

static void json_result(FILE *f, const char *pa, const char *pb, const detshim_run *a,
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
    put_json(f, pa);
    fputs(",\"run_b\":", f);
    put_json(f, pb);
    fprintf(f, ",\"root_a\":\"%s\",\"root_b\":\"%s\",\"divergences\":[", ha, hb);
    for (size_t i = 0; i < r->nitems; i++) {
        if (i)
            fputc(',', f);
        json_item(f, &r->items[i]);
    }
    fputs("]}\n", f);
}

/* ---- commands ------------------------------------------------------ */

static int is_regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmd_diff(const char *pa, const char *pb, int json, int all)
{
    detshim_run *a = load(pa), *b = a ? load(pb) : NULL;
    struct diff_result r = {0};
    struct diff_options opt = {.all = all};
    int status = EXIT_TROUBLE;
    if (!a || !b)
        goto out;
    /* Two single files given by hand pair whatever their process names;
     * a name that differs then shows as a header difference. */
    opt.pair_single = is_regular_file(pa) && is_regular_file(pb);
    if (diff_runs(a, b, &opt, &r) != 0) {
        fail("%s vs %s: out of memory while comparing; free some memory and try again", pa,
             pb);
        goto out;
    }
    if (json)
        json_result(stdout, pa, pb, a, b, &r);
    else
        text_result(stdout, a, &r);
    status = r.nitems ? EXIT_DIVERGED : EXIT_IDENTICAL;
out:
    diff_result_free(&r);
    if (a)
        detshim_run_free(a);
    if (b)
        detshim_run_free(b);
    return status;
}

/* 1 if any file of the run is cut short or damaged; warns per file. */
static int warn_incomplete(const detshim_run *run)
{
    int bad = 0;
    for (int i = 0; i < run->nprocesses; i++) {
        const detshim_process *p = &run->processes[i];
        if (p->truncated) {
            bad = 1;
            fprintf(stderr, "detdiff: warning: ");
            put_text(stderr, p->path);
            fprintf(stderr, " is truncated (%" PRIu64 " of %" PRIu64 " bytes whole",
                    p->valid_bytes, p->file_bytes);
            if (p->trouble[0]) {
                fputs(": ", stderr);
                put_text_n(stderr, p->trouble, strnlen(p->trouble, sizeof p->trouble),
                           sizeof p->trouble);
            }
            fputs("); this root covers part of the run only: do not publish it\n", stderr);
        }
        for (int t = 0; t < p->nthreads; t++)
            if (p->threads[t].end_seen && !p->threads[t].end_matches) {
                bad = 1;
                fprintf(stderr, "detdiff: warning: ");
                put_text(stderr, p->path);
                fprintf(stderr, ": thread " THREAD_FMT "'s end frame disagrees with its records; "
                                "this root does not describe the run the writer saw\n",
                        THREAD_ARGS(p->threads[t].index));
            }
    }
    return bad;
}

static int cmd_root(const char *path, int json)
{
    detshim_run *run = load(path);
    char hex[65];
    if (!run)
        return EXIT_TROUBLE;
    detshim_hex32(run->root, hex);
    int bad = warn_incomplete(run);
    if (json) {
        size_t records = 0;
        for (int i = 0; i < run->nprocesses; i++)
            records += diff_process_records(&run->processes[i]);
        fprintf(stdout, "{\"root\":\"%s\",\"processes\":%d,\"records\":%zu,\"complete\":%s}\n",
                hex, run->nprocesses, records, bad ? "false" : "true");
    } else {
        printf("%s\n", hex);
    }
    detshim_run_free(run);
    return bad ? EXIT_DIVERGED : EXIT_IDENTICAL;
}

static void show_record(FILE *f, const detshim_process *p, const detshim_record *r)
{
    fprintf(f, "    %" PRIu64 " ", r->seq);
    put_text(f, r->api);
    text_params(f, r);
    fputs(" |", f);
    if (diff_noperands(r) == 0)
        fputs(" (no operands)", f);
    for (int i = 0; i < diff_noperands(r); i++) {
        const detshim_operand *o = &r->operands[i];
        char hex[33];
        digest_hex(o->digest, hex);
        fputc(' ', f);
        put_text(f, o->name);
        fprintf(f, ":%s:%" PRIu64 "x%u:%.8s", role_name(o->role), o->count, o->elem_size, hex);
    }
    fputs(" |", f);
    if (diff_nnotes(r) == 0)
        fputs(" (no notes)", f);
    for (int i = 0; i < diff_nnotes(r); i++) {
        fputc(' ', f);
        put_text(f, r->notes[i].key);
        fputc('=', f);
        put_text(f, r->notes[i].value);
    }
    fputs(" | ", f);
    if (diff_nframes(r) == 0)
        fputs("(no call site)", f);
    else
        text_frame(f, p, &r->frames[0]);
    fputc('\n', f);
}

static void show_process(FILE *f, const detshim_process *p)
{
    char hex[65];
    fputs("process ", f);
    put_text(f, pname(p));
    fputs(" (", f);
    put_text(f, p->path);
    fprintf(f, ", %" PRIu64 " bytes)\n", p->file_bytes);
    for (int i = 0; i < p->nfields; i++) {
        const detshim_field *fd = &p->fields[i];
        fputs("  ", f);
        if (diff_field_name(fd->key))
            fputs(diff_field_name(fd->key), f);
        else
            fprintf(f, "field %u", fd->key);
        fputs(" = ", f);
        put_text_n(f, fd->value, fd->value ? fd->len : 0, SIZE_MAX);
        fputs(fd->flags & TRACE_FIELD_INFO ? " (informational)\n" : "\n", f);
    }
    detshim_hex32(p->root, hex);
    fprintf(f, "  root %s\n", hex);
    if (p->truncated) {
        fprintf(f, "  truncated: %" PRIu64 " of %" PRIu64 " bytes are whole frames", p->valid_bytes,
                p->file_bytes);
        if (p->trouble[0]) {
            fputs(" (", f);
            put_text_n(f, p->trouble, strnlen(p->trouble, sizeof p->trouble), sizeof p->trouble);
            fputc(')', f);
        }
        fputc('\n', f);
    }
    for (int t = 0; t < p->nthreads; t++) {
        const detshim_thread *th = &p->threads[t];
        detshim_hex32(th->head, hex);
        fprintf(f, "  thread " THREAD_FMT ": %zu record%s, head %.16s, end frame: %s\n",
                THREAD_ARGS(th->index), th->nrecords, plural(th->nrecords), hex,
                !th->end_seen ? "none" : th->end_matches ? "matches" : "DOES NOT MATCH");
        for (size_t i = 0; i < th->nrecords; i++)
            show_record(f, p, &th->records[i]);
    }
}

static int cmd_show(const char *path)
{
    detshim_run *run = load(path);
    char hex[65];
    if (!run)
        return EXIT_TROUBLE;
    detshim_hex32(run->root, hex);
    printf("run ");
    put_text(stdout, path);
    printf(": %d process%s, root %s\n", run->nprocesses, run->nprocesses == 1 ? "" : "es", hex);
    for (int i = 0; i < run->nprocesses; i++)
        show_process(stdout, &run->processes[i]);
    detshim_run_free(run);
    return EXIT_IDENTICAL;
}

/* ---- arguments ----------------------------------------------------- */

/* Keeps the first two paths and counts them all, so the error can say how
 * many were given. */
static void add_path(const char **paths, int *npaths, const char *p)
{
    if (*npaths < 2)
        paths[*npaths] = p;
    (*npaths)++;
}

int main(int argc, char **argv)
{
    int json = 0, all = 0, show = 0, root = 0, npaths = 0, status;
    const char *paths[2] = {NULL, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            while (++i < argc)
                add_path(paths, &npaths, argv[i]);
            break;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(help_text, stdout);
            return EXIT_IDENTICAL;
        }
        if (strcmp(a, "--version") == 0) {
            printf("detdiff %s (trace format %u)\n", DETSHIM_VERSION, TRACE_VERSION);
            return EXIT_IDENTICAL;
        }
        if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--all") == 0) {
            all = 1;
        } else if (strcmp(a, "--show") == 0) {
            show = 1;
        } else if (strncmp(a, "--show=", 7) == 0) {
            show = 1;
            add_path(paths, &npaths, a + 7);
        } else if (strcmp(a, "--root") == 0) {
            root = 1;
        } else if (strncmp(a, "--root=", 7) == 0) {
            root = 1;
            add_path(paths, &npaths, a + 7);
        } else if (a[0] == '-' && a[1] != '\0') {
            fail("unknown option '%s'; %s", a, usage_line);
            return EXIT_TROUBLE;
        } else {
            add_path(paths, &npaths, a);
        }
    }
    json_errors = json;
    if (show && root) {
        fail("--show and --root cannot be combined; %s", usage_line);
        return EXIT_TROUBLE;
    }
    if (show && json) {
        fail("--show prints text only; drop --json (--json works with a diff and with "
             "--root)");
        return EXIT_TROUBLE;
    }
    if ((show || root) && all) {
        fail("--all applies to a diff of two runs only; %s", usage_line);
        return EXIT_TROUBLE;
    }
    if ((show || root) && npaths != 1) {
        fail("%s takes exactly one trace directory or file (got %d); %s",
             show ? "--show" : "--root", npaths, usage_line);
        return EXIT_TROUBLE;
    }
    if (!show && !root && npaths != 2) {
        fail("expected two runs to compare (got %d); %s", npaths, usage_line);
        return EXIT_TROUBLE;
    }
    if (show)
        status = cmd_show(paths[0]);
    else if (root)
        status = cmd_root(paths[0], json);
    else
        status = cmd_diff(paths[0], paths[1], json, all);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        json_errors = 0;
        fail("cannot write the result to standard output; check the disk or pipe it "
             "somewhere that reads it all");
        return EXIT_TROUBLE;
    }
    return status;
}
