/* detdiff --show: one run (a trace directory or file) printed readably,
 * process by process and record by record, with every header field, for a
 * person looking at what was recorded. Strings are escaped as in text.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "detdiff.h"

static void show_record(FILE *f, const detshim_process *p, const detshim_record *r)
{
    fprintf(f, "    %" PRIu64 " ", r->seq);
    text_put(f, r->api);
    text_params(f, r);
    fputs(" |", f);
    if (diff_noperands(r) == 0)
        fputs(" (no operands)", f);
    for (int i = 0; i < diff_noperands(r); i++) {
        const detshim_operand *o = &r->operands[i];
        char hex[33];
        digest_hex(o->digest, hex);
        fputc(' ', f);
        text_put(f, o->name);
        fprintf(f, ":%s:%" PRIu64 "x%u:%.8s", role_name(o->role), o->count, o->elem_size, hex);
    }
    fputs(" |", f);
    if (diff_nnotes(r) == 0)
        fputs(" (no notes)", f);
    for (int i = 0; i < diff_nnotes(r); i++) {
        fputc(' ', f);
        text_put(f, r->notes[i].key);
        fputc('=', f);
        text_put(f, r->notes[i].value);
    }
    fputs(" | ", f);
    if (diff_nframes(r) == 0)
        fputs("(no call site)", f);
    else
        text_frame(f, p, &r->frames[0]);
    int py = diff_python_frame(r); /* the Python frame beside the native one */
    if (py > 0) {
        fputs(" | ", f);
        text_frame(f, p, &r->frames[py]);
    }
    fputc('\n', f);
}

/* Prints thread t's records through a cursor (a run opened, not loaded:
 * memory stays flat whatever the trace's size). Returns 0, or the
 * reader's error, said on a line of its own, when the file cannot be
 * read again. */
static int show_records(FILE *f, const detshim_process *p, const detshim_thread *t)
{
    detshim_cursor *c;
    const detshim_record *r;
    int rc = detshim_cursor_open(p, t, &c);
    if (rc == 0) {
        while ((rc = detshim_cursor_next(c, &r)) == 1)
            show_record(f, p, r);
        detshim_cursor_close(c);
    }
    if (rc != 0)
        fprintf(f, "    (the records past this point cannot be read: the file changed or went "
                   "away while it was read, error %d)\n", rc);
    return rc;
}

/* Returns 0, or a reader's error (the records shown up to it). */
static int show_process(FILE *f, const detshim_process *p)
{
    int status = 0;
    char hex[65];
    fputs("process ", f);
    text_put(f, pname(p));
    fputs(" (", f);
    text_put(f, p->path);
    struct stat sb;
    if (detshim_field_get(p, TRACE_FIELD_COMPRESSION) && stat(p->path, &sb) == 0)
        /* Offsets and sizes below are of the expanded stream. */
        fprintf(f, ", %lld bytes compressed, %" PRIu64 " expanded)\n", (long long)sb.st_size,
                p->file_bytes);
    else
        fprintf(f, ", %" PRIu64 " bytes)\n", p->file_bytes);
    for (int i = 0; i < p->nfields; i++) {
        const detshim_field *fd = &p->fields[i];
        fputs("  ", f);
        if (diff_field_name(fd->key))
            fputs(diff_field_name(fd->key), f);
        else
            fprintf(f, "field %u", fd->key);
        fputs(" = ", f);
        text_put_n(f, fd->value, fd->value ? fd->len : 0, SIZE_MAX);
        fputs(fd->flags & TRACE_FIELD_INFO ? " (informational)\n" : "\n", f);
    }
    detshim_hex32(p->root, hex);
    fprintf(f, "  root %s\n", hex);
    if (p->truncated) {
        fprintf(f, "  truncated: %" PRIu64 " of %" PRIu64 " bytes are whole frames", p->valid_bytes,
                p->file_bytes);
        if (p->trouble[0]) {
            fputs(" (", f);
            text_put_n(f, p->trouble, strnlen(p->trouble, sizeof p->trouble), sizeof p->trouble);
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
        if (th->nsummary) /* a summary stream (windows.c): most calls are digests only */
            fprintf(f, "    summary: %" PRIu64 " call%s in %zu window%s of %" PRIu64
                       ", %zu held as digests only\n",
                    th->count, plural(th->count), th->nwindows, plural(th->nwindows), p->window,
                    th->nsummary);
        if (show_records(f, p, th) != 0)
            status = -1;
    }
    return status;
}

int show_run(FILE *f, const char *path, const detshim_run *run)
{
    int status = 0;
    char hex[65];
    detshim_hex32(run->root, hex);
    fputs("run ", f);
    text_put(f, path);
    fprintf(f, ": %d process%s, root %s\n", run->nprocesses, run->nprocesses == 1 ? "" : "es",
            hex);
    for (int i = 0; i < run->nprocesses; i++)
        if (show_process(f, &run->processes[i]) != 0)
            status = -1;
    for (int i = 0; i < run->nunreadable; i++) {
        fputs("not read: ", f);
        text_put(f, run->unreadable[i].reason);
        fputc('\n', f);
    }
    return status;
}

