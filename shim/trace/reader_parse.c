/* The reader's parsing of single pieces of a trace file: arenas for what
 * they allocate, a bounds-checked cursor over one payload, and the RECORD
 * and SITE payload layouts of detshim/trace_format.h. Hostile input is
 * expected: every length is checked, a payload that overruns is refused.
 * Where it sits: under reader_scan.c and reader_cursor.c (reader_internal.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detshim/trace_format.h"
#include "reader_internal.h"

void *arena_alloc(struct arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    struct arena_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 1 << 16 ? n : 1 << 16;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
}

void arena_reset(struct arena *a)
{
    if (!a->head)
        return;
    struct arena_chunk *keep = a->head, *c = keep->next;
    while (c) {
        struct arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    keep->next = NULL;
    keep->used = 0;
}

void arena_free(struct arena *a)
{
    while (a->head) {
        struct arena_chunk *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}

uint64_t reader_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* A cursor over one payload; any overrun sets bad and yields zeros. */
struct cur {
    const unsigned char *p;
    size_t len, off;
    int bad;
};

static const unsigned char *take(struct cur *c, size_t n)
{
    if (c->bad || c->len - c->off < n) {
        c->bad = 1;
        return NULL;
    }
    const unsigned char *p = c->p + c->off;
    c->off += n;
    return p;
}

static uint64_t take_u(struct cur *c, int n)
{
    const unsigned char *p = take(c, (size_t)n);
    return p ? reader_le(p, n) : 0;
}

static const char *take_str(struct cur *c, struct arena *a)
{
    size_t n = (size_t)take_u(c, 1);
    const unsigned char *p = take(c, n);
    char *s = p ? arena_alloc(a, n + 1) : NULL;
    if (!s) {
        c->bad = 1;
        return "";
    }
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

static double bits_f32(uint64_t b)
{
    float f;
    uint32_t u = (uint32_t)b;
    memcpy(&f, &u, 4);
    return f;
}

static double bits_f64(uint64_t b)
{
    double d;
    memcpy(&d, &b, 8);
    return d;
}

static int parse_params(struct cur *c, struct arena *a, detshim_record *r)
{
    r->nparams = (int)take_u(c, 1);
    r->params = arena_alloc(a, sizeof *r->params * (size_t)(r->nparams + 1));
    if (!r->params || r->nparams > TRACE_MAX_PARAMS)
        return -1;
    for (int i = 0; i < r->nparams && !c->bad; i++) {
        detshim_param *p = &r->params[i];
        p->name = take_str(c, a);
        p->type = (uint8_t)take_u(c, 1);
        switch (p->type) {
        case TRACE_PARAM_INT: p->v.i = (int64_t)take_u(c, 8); break;
        case TRACE_PARAM_CHAR: p->v.c = (char)take_u(c, 1); break;
        case TRACE_PARAM_F32: p->v.f = bits_f32(take_u(c, 4)); break;
        case TRACE_PARAM_F64: p->v.f = bits_f64(take_u(c, 8)); break;
        case TRACE_PARAM_C64:
            p->v.z[0] = bits_f32(take_u(c, 4));
            p->v.z[1] = bits_f32(take_u(c, 4));
            break;
        case TRACE_PARAM_C128:
            p->v.z[0] = bits_f64(take_u(c, 8));
            p->v.z[1] = bits_f64(take_u(c, 8));
            break;
        case TRACE_PARAM_STR: p->v.s = take_str(c, a); break;
        default: return -1;
        }
    }
    return c->bad ? -1 : 0;
}

int reader_parse_record(const unsigned char *payload, size_t len, struct arena *a,
                        detshim_record *r)
{
    struct cur c = { payload, len, 0, 0 };
    memset(r, 0, sizeof *r);
    r->seq = take_u(&c, 8);
    r->api = take_str(&c, a);
    if (c.bad || parse_params(&c, a, r) != 0)
        return -1;
    r->noperands = (int)take_u(&c, 1);
    r->operands = arena_alloc(a, sizeof *r->operands * (size_t)(r->noperands + 1));
    if (!r->operands || r->noperands > TRACE_MAX_OPERANDS)
        return -1;
    for (int i = 0; i < r->noperands && !c.bad; i++) {
        detshim_operand *o = &r->operands[i];
        o->name = take_str(&c, a);
        o->role = (uint8_t)take_u(&c, 1);
        o->elem_size = (uint8_t)take_u(&c, 1);
        o->count = take_u(&c, 8);
        o->digest.lo = take_u(&c, 8);
        o->digest.hi = take_u(&c, 8);
    }
    r->nframes = (int)take_u(&c, 1);
    r->frames = arena_alloc(a, sizeof *r->frames * (size_t)(r->nframes + 1));
    if (!r->frames || r->nframes > TRACE_MAX_FRAMES)
        return -1;
    for (int i = 0; i < r->nframes && !c.bad; i++) {
        r->frames[i].module = take_u(&c, 8);
        r->frames[i].offset = take_u(&c, 8);
    }
    r->nnotes = (int)take_u(&c, 1);
    r->notes = arena_alloc(a, sizeof *r->notes * (size_t)(r->nnotes + 1));
    if (!r->notes || r->nnotes > TRACE_MAX_NOTES)
        return -1;
    for (int i = 0; i < r->nnotes && !c.bad; i++) {
        r->notes[i].key = take_str(&c, a);
        r->notes[i].value = take_str(&c, a);
    }
    return c.bad || c.off != len ? -1 : 0;
}

int reader_parse_site(const unsigned char *payload, size_t len, struct arena *a,
                      struct reader_site *s)
{
    struct cur c = { payload, len, 0, 0 };
    s->frame.module = take_u(&c, 8);
    s->frame.offset = take_u(&c, 8);
    s->module = take_str(&c, a);
    s->symbol = take_str(&c, a);
    return c.bad ? -1 : 0;
}

int reader_parse_header(struct proc_private *pp, const unsigned char *d, size_t len,
                        uint64_t *body, char *err, size_t errlen)
{
    detshim_process *p = &pp->pub;
    if (len == 0) {
        /* The writer creates the file, then writes its header at once. */
        snprintf(err, errlen, "%s: empty file, no detshim header (planted, or its process "
                 "died before writing one?)", p->path);
        return DETSHIM_ERR_FORMAT;
    }
    if (len < TRACE_MAGIC_LEN || memcmp(d, TRACE_MAGIC, TRACE_MAGIC_LEN) != 0) {
        snprintf(err, errlen, "%s: not a detshim trace (no DETSHIMT magic)", p->path);
        return DETSHIM_ERR_FORMAT;
    }
    if (len < TRACE_FILE_HEADER_LEN) {
        snprintf(err, errlen, "%s: detshim trace cut short inside its header", p->path);
        return DETSHIM_ERR_FORMAT;
    }
    uint32_t version = (uint32_t)reader_le(d + 8, 4), hlen = (uint32_t)reader_le(d + 12, 4);
    if (version != TRACE_VERSION) {
        /* Version 1 chained whole streams, version 2 windows over record
         * payloads; version 3 windows are over record hashes, so an old
         * root cannot be compared with a new one. */
        snprintf(err, errlen, "%s: trace format version %u, this detdiff reads version %u%s; "
                 "use the detdiff of the detshim that wrote it, or trace the run again", p->path,
                 version, TRACE_VERSION,
                 version < TRACE_VERSION ? " only (its roots are over record hashes, which "
                                           "an older trace's are not)" : "");
        return DETSHIM_ERR_VERSION;
    }
    if (hlen > TRACE_MAX_HEADER || hlen > len - TRACE_FILE_HEADER_LEN) {
        snprintf(err, errlen, "%s: trace header is cut short or corrupt", p->path);
        return DETSHIM_ERR_FORMAT;
    }
    struct cur c = { d + TRACE_FILE_HEADER_LEN, hlen, 0, 0 };
    p->fields = calloc(hlen / 8 + 1, sizeof *p->fields);
    if (!p->fields)
        return DETSHIM_ERR_NOMEM;
    while (c.off < c.len && !c.bad) {
        detshim_field *f = &p->fields[p->nfields];
        f->key = (uint16_t)take_u(&c, 2);
        f->flags = (uint16_t)take_u(&c, 2);
        f->len = (uint32_t)take_u(&c, 4);
        const unsigned char *v = take(&c, f->len);
        char *s = v ? arena_alloc(&pp->arena, f->len + 1) : NULL;
        if (!s)
            break;
        memcpy(s, v, f->len);
        s[f->len] = 0;
        f->value = s;
        p->nfields++;
    }
    if (c.bad) {
        snprintf(err, errlen, "%s: trace header fields are corrupt", p->path);
        return DETSHIM_ERR_FORMAT;
    }
    /* Hook (reader_window.c): the window size every root is over. */
    if (reader_window_size(p) != 0) {
        snprintf(err, errlen, "%s: trace header has no valid window size (field %d)", p->path,
                 TRACE_FIELD_WINDOW);
        return DETSHIM_ERR_FORMAT;
    }
    *body = TRACE_FILE_HEADER_LEN + hlen;
    return 0;
}

void reader_finish_record(detshim_record *r, const uint8_t *rhash, uint32_t rlen,
                          uint64_t frame_offset)
{
    r->file_offset = frame_offset;
    memset(r->digest, 0, sizeof r->digest);
    memcpy(r->digest, rhash, rlen);
}
