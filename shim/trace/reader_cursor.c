/* Cursors: one thread's records, read in order, one at a time. Over a run
 * from detshim_run_load they walk the thread's array; over one from
 * detshim_run_open they read the thread's frames from its file again,
 * skipping other threads', from the first to the last frame the scan
 * (reader_scan.c) found for it, so a cursor holds one record however long
 * the stream. Records a caller wants past the next step are kept: copied
 * into the process, freed with the run. Call-site names (SITE frames) of
 * an opened run are read on the first lookup.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "detshim.h"
#include "trace/trace.h"
#include "detshim/trace_format.h"
#include "reader_internal.h"

struct detshim_cursor {
    const detshim_thread *t;
    struct proc_private *pp;  /* NULL: the thread's records are an array */
    size_t next;              /* records returned so far */
    size_t mark;              /* 1 + index of the marked record, 0: none */
    uint64_t mark_off;        /* its frame's offset (file cursors) */
    /* File cursors only: */
    struct reader_src src;
    uint64_t off;             /* where the next frame starts */
    struct arena arena;       /* the current record's strings */
    detshim_record cur;
};

/* The extent of t in its process, or NULL when t is not one of its
 * threads or the process was loaded whole. */
static const struct reader_extent *extent_of(const detshim_process *p, const detshim_thread *t)
{
    const struct proc_private *pp = p->internal;
    if (!pp || !pp->extents || t < p->threads || t >= p->threads + p->nthreads)
        return NULL;
    return &pp->extents[t - p->threads];
}

int detshim_cursor_open(const detshim_process *p, const detshim_thread *t, detshim_cursor **out)
{
    *out = NULL;
    const struct reader_extent *e = extent_of(p, t);
    if (!e && !t->records && t->nrecords)
        return DETSHIM_ERR_FORMAT;
    detshim_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return DETSHIM_ERR_NOMEM;
    c->t = t;
    c->src.fd = -1;
    if (e && !t->records && t->nrecords) {
        c->pp = p->internal;
        c->off = e->first;
        c->src.limit = e->end;
        c->src.fd = reader_file_open(c->pp);
        if (c->src.fd < 0) {
            free(c);
            return DETSHIM_ERR_IO;
        }
    }
    *out = c;
    return 0;
}

/* Reads and checks the frame at `off` of c's thread into (*payload,
 * *flen, *type, hash: its frame hash), the payload valid until src moves.
 * Returns 0, or -1 when it cannot be read or fails its check. */
static int frame_at(struct reader_src *src, uint64_t off, const unsigned char **payload,
                    uint32_t *flen, uint16_t *type, uint32_t *thread, uint8_t hash[16])
{
    const unsigned char *h = reader_src_at(src, off, TRACE_FRAME_HEADER_LEN);
    if (!h)
        return -1;
    *flen = (uint32_t)reader_le(h, 4);
    *type = (uint16_t)reader_le(h + 4, 2);
    *thread = (uint32_t)reader_le(h + 8, 4);
    uint32_t check = (uint32_t)reader_le(h + 12, 4);
    if (*flen > TRACE_MAX_FRAME)
        return -1;
    h = reader_src_at(src, off, TRACE_FRAME_HEADER_LEN + *flen);
    if (!h)
        return -1;
    *payload = h + TRACE_FRAME_HEADER_LEN;
    trace_frame_hash(*payload, *flen, hash);
    return check == trace_frame_check_of(hash, *type, *thread) ? 0 : -1;
}

/* Gives a parsed record of frame thread `thread` its record hash (from
 * its frame hash) and offset. Returns 0, or -1 when OpenSSL failed. */
static int finish_record(detshim_record *r, uint32_t thread, const unsigned char *payload,
                         uint32_t flen, const uint8_t hash[16], uint64_t off)
{
    uint8_t rhash[32];
    uint32_t rlen = chain_record_hash(thread, payload, flen, hash, rhash);
    if (!rlen)
        return -1;
    reader_finish_record(r, rhash, rlen, off);
    return 0;
}

int detshim_cursor_next(detshim_cursor *c, const detshim_record **r)
{
    *r = NULL;
    if (c->next >= c->t->nrecords)
        return 0;
    if (!c->pp) {
        *r = &c->t->records[c->next++];
        return 1;
    }
    for (;;) {
        const unsigned char *payload;
        uint32_t flen, thread;
        uint16_t type;
        uint8_t hash[16];
        /* The scan checked these frames; failing now, the file changed. */
        if (frame_at(&c->src, c->off, &payload, &flen, &type, &thread, hash) != 0)
            return DETSHIM_ERR_IO;
        uint64_t off = c->off;
        c->off += TRACE_FRAME_HEADER_LEN + flen;
        if (type != TRACE_FRAME_RECORD || thread != c->t->index)
            continue;
        arena_reset(&c->arena);
        if (reader_parse_record(payload, flen, &c->arena, &c->cur) != 0)
            return DETSHIM_ERR_FORMAT;
        if (finish_record(&c->cur, thread, payload, flen, hash, off) != 0)
            return DETSHIM_ERR_NOMEM;
        c->next++;
        *r = &c->cur;
        return 1;
    }
}

void detshim_cursor_mark(detshim_cursor *c)
{
    c->mark = c->next;
    c->mark_off = c->pp ? c->cur.file_offset : 0;
}

/* A copy of the record whose frame is at `off`, owned by pp. */
static int keep_at(struct proc_private *pp, uint32_t index, uint64_t off, const detshim_record **out)
{
    struct reader_src src = { .fd = reader_file_open(pp),
                              .limit = pp->pub.valid_bytes };
    const unsigned char *payload;
    uint32_t flen, thread;
    uint16_t type;
    uint8_t hash[16];
    detshim_record *r = arena_alloc(&pp->arena, sizeof *r);
    int rc = DETSHIM_ERR_NOMEM;
    if (src.fd < 0)
        rc = DETSHIM_ERR_IO;
    else if (frame_at(&src, off, &payload, &flen, &type, &thread, hash) != 0 ||
             type != TRACE_FRAME_RECORD || thread != index)
        rc = DETSHIM_ERR_IO;
    else if (r && reader_parse_record(payload, flen, &pp->arena, r) == 0 &&
             finish_record(r, thread, payload, flen, hash, off) == 0)
        rc = 0;
    reader_src_close(&src);
    *out = rc ? NULL : r;
    return rc;
}

int detshim_cursor_keep(detshim_cursor *c, int marked, const detshim_record **out)
{
    size_t n = marked ? c->mark : c->next;
    *out = NULL;
    if (n == 0)
        return 0;
    if (!c->pp) {
        *out = &c->t->records[n - 1];
        return 0;
    }
    return keep_at(c->pp, c->t->index, marked ? c->mark_off : c->cur.file_offset, out);
}

void detshim_cursor_close(detshim_cursor *c)
{
    if (!c)
        return;
    reader_src_close(&c->src);
    arena_free(&c->arena);
    free(c);
}

int reader_read_sites(struct proc_private *pp)
{
    if (pp->sites_read)
        return 0;
    struct reader_src src = { .fd = reader_file_open(pp),
                              .limit = pp->pub.valid_bytes };
    int rc = src.fd < 0 ? DETSHIM_ERR_IO : 0;
    for (uint64_t off = pp->body; rc == 0 && off < src.limit;) {
        const unsigned char *payload;
        uint32_t flen, thread;
        uint16_t type;
        uint8_t hash[16];
        if (frame_at(&src, off, &payload, &flen, &type, &thread, hash) != 0) {
            rc = DETSHIM_ERR_IO;
            break;
        }
        struct reader_site s;
        if (type == TRACE_FRAME_SITE && reader_parse_site(payload, flen, &pp->arena, &s) == 0)
            rc = reader_add_site(pp, &s);
        off += TRACE_FRAME_HEADER_LEN + flen;
    }
    reader_src_close(&src);
    pp->sites_read = 1;
    return rc;
}

int detshim_site_lookup(const detshim_process *p, const detshim_frame *f, const char **module,
                        const char **symbol)
{
    struct proc_private *pp = p->internal;
    if (!pp)
        return -1;
    reader_read_sites(pp);
    for (size_t i = 0; i < pp->nsites; i++) {
        if (pp->sites[i].frame.module == f->module && pp->sites[i].frame.offset == f->offset) {
            *module = pp->sites[i].module;
            *symbol = pp->sites[i].symbol;
            return 0;
        }
    }
    return -1;
}
