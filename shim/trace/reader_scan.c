/* One sequential pass over one process's trace file, the reader's only
 * full read of it: every frame's check verified, each thread's records
 * counted and chained, THREAD_END and PROCESS_END frames checked against
 * them, the process root recomputed. detshim_run_load keeps every record
 * (the whole trace in memory); detshim_run_open keeps per thread only its
 * count, head and the extent of its frames, which cursors (reader_cursor.c)
 * read again, so memory is bounded by the thread count, not the records.
 * A file that stops making sense is read up to its last whole frame and
 * marked truncated.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/chain.h"
#include "trace/trace.h"
#include "detshim/trace_format.h"
#include "reader_internal.h"

#define MAX_THREADS 65536

const unsigned char *reader_src_at(struct reader_src *s, uint64_t off, size_t n)
{
    errno = 0;
    if (off > s->limit || s->limit - off < n)
        return NULL;
    if (s->buf && off >= s->buf_off && off - s->buf_off <= s->len &&
        s->len - (off - s->buf_off) >= n)
        return s->buf + (off - s->buf_off);
    uint64_t want = s->limit - off;
    if (want > READER_WINDOW)
        want = READER_WINDOW;
    if (!s->buf || s->cap < want) {
        unsigned char *b = realloc(s->buf, want ? want : 1);
        if (!b)
            return NULL;
        s->buf = b;
        s->cap = want;
    }
    size_t got = 0;
    while (got < want) {
        ssize_t r = pread(s->fd, s->buf + got, want - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    s->buf_off = off;
    s->len = got;
    return got >= n ? s->buf : NULL;
}

void reader_src_close(struct reader_src *s)
{
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    s->fd = -1;
    s->buf = NULL;
}

/* The threads met so far, found by index through an open-addressed table,
 * so a file of 65,536 threads is read in one linear pass. */
struct scan_thread {
    detshim_thread t;
    struct reader_extent e;
    struct reader_wstate w; /* reader_window.c: the open window */
};
struct scan {
    struct proc_private *pp;
    int keep;                  /* keep every record */
    struct scan_thread *threads;
    int n, cap;
    int32_t *slots;            /* -1 or a position in threads */
    size_t nslots;             /* a power of two, over twice n */
    struct arena scratch;      /* one record at a time, when not kept */
};

static size_t slot_of(uint32_t index, size_t nslots)
{
    return (size_t)((index * 0x9e3779b97f4a7c15ull) >> 17) & (nslots - 1);
}

static int rehash(struct scan *s, size_t nslots)
{
    int32_t *slots = malloc(nslots * sizeof *slots);
    if (!slots)
        return -1;
    memset(slots, 0xff, nslots * sizeof *slots);
    for (int i = 0; i < s->n; i++) {
        size_t k = slot_of(s->threads[i].t.index, nslots);
        while (slots[k] >= 0)
            k = (k + 1) & (nslots - 1);
        slots[k] = i;
    }
    free(s->slots);
    s->slots = slots;
    s->nslots = nslots;
    return 0;
}

/* The thread of `index`, created on first sight; NULL when out of memory
 * or past MAX_THREADS. */
static struct scan_thread *thread_for(struct scan *s, uint32_t index)
{
    size_t k = s->nslots ? slot_of(index, s->nslots) : 0;
    while (s->nslots && s->slots[k] >= 0) {
        if (s->threads[s->slots[k]].t.index == index)
            return &s->threads[s->slots[k]];
        k = (k + 1) & (s->nslots - 1);
    }
    if (s->n >= MAX_THREADS)
        return NULL;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        struct scan_thread *t = realloc(s->threads, sizeof *t * (size_t)cap);
        if (!t)
            return NULL;
        s->threads = t;
        s->cap = cap;
    }
    if ((size_t)(s->n + 1) * 2 > s->nslots) {
        if (rehash(s, s->nslots ? 2 * s->nslots : 64) != 0)
            return NULL;
        k = slot_of(index, s->nslots);
        while (s->slots[k] >= 0)
            k = (k + 1) & (s->nslots - 1);
    }
    struct scan_thread *t = &s->threads[s->n];
    memset(t, 0, sizeof *t);
    t->t.index = index;
    chain_stream_start(t->t.head); /* the head is over windows (reader_window.c) */
    s->slots[k] = s->n++;
    return t;
}

static int add_record(detshim_thread *t, const detshim_record *r)
{
    if ((t->nrecords & (t->nrecords - 1)) == 0) { /* grow at powers of two */
        size_t cap = t->nrecords ? 2 * t->nrecords : 1;
        detshim_record *n = realloc(t->records, sizeof *n * cap);
        if (!n)
            return -1;
        t->records = n;
    }
    t->records[t->nrecords++] = *r;
    return 0;
}

int reader_add_site(struct proc_private *pp, const struct reader_site *s)
{
    if (pp->nsites == pp->capsites) {
        size_t cap = pp->capsites ? 2 * pp->capsites : 64;
        struct reader_site *n = realloc(pp->sites, sizeof *n * cap);
        if (!n)
            return DETSHIM_ERR_NOMEM;
        pp->sites = n;
        pp->capsites = cap;
    }
    pp->sites[pp->nsites++] = *s;
    return 0;
}

/* Marks the process truncated, keeping the first reason found. */
__attribute__((format(printf, 2, 3))) static void mark(detshim_process *p, const char *fmt, ...)
{
    p->truncated = 1;
    if (p->trouble[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->trouble, sizeof p->trouble, fmt, ap);
    va_end(ap);
}

/* One RECORD frame of thread t at `off`, of frame hash `hash`: parsed
 * (kept, or only checked), its record hash added to its window. Returns 0, 1 if it is malformed, or DETSHIM_ERR_NOMEM. */
static int scan_record(struct scan *s, struct scan_thread *t, const unsigned char *payload,
                       uint32_t flen, const uint8_t hash[16], uint64_t off)
{
    detshim_record r;
    struct arena *a = s->keep ? &s->pp->arena : &s->scratch;
    if (!s->keep)
        arena_reset(a);
    if (reader_parse_record(payload, flen, a, &r) != 0 || t->t.end_seen)
        return 1;
    if (!t->t.nrecords)
        t->e.first = off;
    t->e.end = off + TRACE_FRAME_HEADER_LEN + flen;
    uint8_t rhash[32];
    uint32_t rlen = chain_record_hash(t->t.index, payload, flen, hash, rhash);
    if (!rlen)
        return DETSHIM_ERR_NOMEM; /* OpenSSL failed: it could not allocate */
    int rc = reader_window_record(&s->pp->pub, &t->t, &t->w, rhash, rlen); /* hook */
    if (rc)
        return rc;
    if (!s->keep) {
        t->t.nrecords++;
        return 0;
    }
    reader_finish_record(&r, rhash, rlen, off);
    if (add_record(&t->t, &r) != 0)
        return DETSHIM_ERR_NOMEM;
    return 0;
}

/* Reads frames from `off` to the end of the file; stops at the first one
 * that is incomplete or fails its check. Returns 0, or DETSHIM_ERR_NOMEM.
 * *closed and stored_root: the PROCESS_END frame, where one was read. */
static int scan_frames(struct scan *s, struct reader_src *src, uint64_t off, int *closed,
                       uint8_t stored_root[32])
{
    detshim_process *p = &s->pp->pub;
    uint64_t len = src->limit;
    while (off < len) {
        const unsigned char *h = reader_src_at(src, off, TRACE_FRAME_HEADER_LEN);
        if (!h) {
            mark(p, "file ends inside a frame header at byte %llu (cut short)",
                 (unsigned long long)off);
            break;
        }
        uint32_t flen = (uint32_t)reader_le(h, 4), thread = (uint32_t)reader_le(h + 8, 4);
        uint16_t type = (uint16_t)reader_le(h + 4, 2);
        uint32_t check = (uint32_t)reader_le(h + 12, 4);
        if (flen > TRACE_MAX_FRAME) {
            mark(p, "corrupt frame length at byte %llu", (unsigned long long)off);
            break;
        }
        const unsigned char *payload = len - off - TRACE_FRAME_HEADER_LEN < flen
                                           ? NULL
                                           : reader_src_at(src, off, TRACE_FRAME_HEADER_LEN + flen);
        if (!payload) {
            mark(p, "file ends inside a frame at byte %llu (cut short)", (unsigned long long)off);
            break;
        }
        payload += TRACE_FRAME_HEADER_LEN;
        uint8_t hash[16]; /* a RECORD's record hash too */
        trace_frame_hash(payload, flen, hash);
        if (check != trace_frame_check_of(hash, type, thread)) {
            mark(p, "damaged frame at byte %llu (check does not match)", (unsigned long long)off);
            break;
        }
        if (*closed) {
            mark(p, "frames after the closing frame at byte %llu", (unsigned long long)off);
            break;
        }
        struct scan_thread *t = NULL;
        if (type == TRACE_FRAME_RECORD || type == TRACE_FRAME_THREAD_END ||
            type == TRACE_FRAME_WINDOW) {
            t = thread_for(s, thread);
            if (!t)
                return DETSHIM_ERR_NOMEM;
        }
        if (type == TRACE_FRAME_RECORD) {
            int rc = scan_record(s, t, payload, flen, hash, off);
            if (rc < 0)
                return rc;
            if (rc) {
                mark(p, "malformed record at byte %llu", (unsigned long long)off);
                break;
            }
        } else if (type == TRACE_FRAME_WINDOW) { /* hook: a summarized window */
            int rc = t->t.end_seen ? 1 : reader_window_frame(p, &t->t, &t->w, payload, flen);
            if (rc < 0)
                return rc;
            if (rc) {
                mark(p, "malformed window at byte %llu", (unsigned long long)off);
                break;
            }
        } else if (type == TRACE_FRAME_SITE && s->keep) {
            struct reader_site site;
            if (reader_parse_site(payload, flen, &s->pp->arena, &site) == 0 &&
                reader_add_site(s->pp, &site) != 0)
                return DETSHIM_ERR_NOMEM;
        } else if (type == TRACE_FRAME_THREAD_END && flen == 40) {
            if (!t->t.end_seen && reader_window_end(&t->t, &t->w) != 0) /* the last window */
                return DETSHIM_ERR_NOMEM;
            t->t.end_seen = 1;
            t->t.end_matches =
                reader_le(payload, 8) == t->t.count && !memcmp(payload + 8, t->t.head, 32);
        } else if (type == TRACE_FRAME_INCOMPLETE && flen > 0 && payload[0] < flen) {
            mark(p, "the writer marked it incomplete: %.*s", payload[0], (const char *)payload + 1);
        } else if (type == TRACE_FRAME_PROCESS_END && flen == 36) {
            *closed = 1;
            memcpy(stored_root, payload + 4, 32);
        } else if (type == TRACE_FRAME_ZSTD) {
            /* Left by reader_expand: it would not expand, or the header
             * does not say the file is compressed. Its records are not
             * readable, so nothing after it can be trusted either. */
            mark(p, "compressed frame at byte %llu could not be expanded (damaged, or the "
                    "file's header does not say it is compressed)", (unsigned long long)off);
            break;
        }
        /* Unknown frame types are skipped: they carry no records. */
        off += TRACE_FRAME_HEADER_LEN + flen;
    }
    p->valid_bytes = off;
    if (!*closed)
        mark(p, "no closing frame: the process was killed or crashed before exit "
                "(trace ends at byte %llu)", (unsigned long long)off);
    return 0;
}

/* The process root from its compared fields and its threads' heads. */
static int process_root(detshim_process *p)
{
    struct chain_field *fields = calloc((size_t)p->nfields + 1, sizeof *fields);
    struct chain_thread *heads = calloc((size_t)p->nthreads + 1, sizeof *heads);
    if (!fields || !heads) {
        free(fields);
        free(heads);
        return DETSHIM_ERR_NOMEM;
    }
    int nf = 0, nheads = 0;
    for (int i = 0; i < p->nfields; i++) {
        if (p->fields[i].flags & TRACE_FIELD_INFO)
            continue;
        fields[nf].key = p->fields[i].key;
        fields[nf].len = p->fields[i].len;
        fields[nf].value = p->fields[i].value;
        nf++;
    }
    for (int i = 0; i < p->nthreads; i++) {
        if (p->threads[i].index & TRACE_THREAD_REAL)
            continue; /* real entropy by design: in no root */
        heads[nheads].count = p->threads[i].count; /* summarized records included */
        memcpy(heads[nheads++].head, p->threads[i].head, 32);
    }
    chain_process_root(fields, nf, heads, nheads, p->root);
    free(heads);
    free(fields);
    return 0;
}

static int cmp_thread_index(const void *a, const void *b)
{
    const struct scan_thread *x = a, *y = b;
    return (x->t.index > y->t.index) - (x->t.index < y->t.index);
}

/* Moves the scan's threads, sorted by index, into pp. */
static int take_threads(struct scan *s)
{
    struct proc_private *pp = s->pp;
    size_t n = (size_t)s->n;
    if (n)
        qsort(s->threads, n, sizeof *s->threads, cmp_thread_index);
    pp->pub.threads = calloc(n + 1, sizeof *pp->pub.threads);
    pp->extents = s->keep ? NULL : calloc(n + 1, sizeof *pp->extents);
    if (!pp->pub.threads || (!s->keep && !pp->extents))
        return DETSHIM_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        /* A stream cut short ends with its open window (reader_window.c). */
        if (reader_window_end(&s->threads[i].t, &s->threads[i].w) != 0)
            return DETSHIM_ERR_NOMEM;
        pp->pub.threads[i] = s->threads[i].t;
        s->threads[i].t.records = NULL; /* now owned by pp */
        s->threads[i].t.windows = NULL;
        if (pp->extents)
            pp->extents[i] = s->threads[i].e;
    }
    pp->pub.nthreads = s->n;
    return 0;
}

static void scan_free(struct scan *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->threads[i].t.records);
        free(s->threads[i].t.windows);
        reader_window_free(&s->threads[i].w);
    }
    free(s->threads);
    free(s->slots);
    arena_free(&s->scratch);
}

/* Opens a regular file for reading. O_NONBLOCK: a FIFO planted under a
 * trace file's name must not hang the reader before fstat can refuse it. */
static int open_regular(const char *path, uint64_t *size, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s: cannot read: %s", path,
                 fd >= 0 ? "not a regular file" : strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *size = (uint64_t)sb.st_size;
    return fd;
}

int reader_scan_process(const char *path, struct proc_private *pp, int keep_records, char *err,
                        size_t errlen)
{
    detshim_process *p = &pp->pub;
    p->path = strdup(path);
    if (!p->path)
        return DETSHIM_ERR_NOMEM;
    struct reader_src src = { .fd = -1 };
    src.fd = open_regular(path, &src.limit, err, errlen);
    if (src.fd < 0)
        return DETSHIM_ERR_IO;
    p->file_bytes = src.limit;
    size_t hwant = TRACE_FILE_HEADER_LEN + TRACE_MAX_HEADER;
    size_t hlen = src.limit < hwant ? (size_t)src.limit : hwant;
    const unsigned char *h = reader_src_at(&src, 0, hlen);
    int rc = h ? reader_parse_header(pp, h, hlen, &pp->body, err, errlen) : DETSHIM_ERR_IO;
    if (!h)
        snprintf(err, errlen, "%s: short read", path);
    if (rc == 0 && detshim_field_get(p, TRACE_FIELD_COMPRESSION)) {
        rc = reader_expand(pp, &src, err, errlen);
        p->file_bytes = src.limit; /* sizes and offsets of the expanded stream */
    }
    struct scan s = { .pp = pp, .keep = keep_records };
    int closed = 0;
    uint8_t stored_root[32];
    if (rc == 0)
        rc = scan_frames(&s, &src, pp->body, &closed, stored_root);
    reader_src_close(&src);
    if (rc == 0)
        rc = take_threads(&s);
    scan_free(&s);
    pp->sites_read = keep_records;
    if (rc == 0)
        rc = process_root(p);
    if (rc == DETSHIM_ERR_NOMEM)
        snprintf(err, errlen, "%s: out of memory", path);
    if (rc != 0)
        return rc;
    if (closed && memcmp(stored_root, p->root, 32) != 0)
        mark(p, "closing root does not match the records (file altered after writing?)");
    for (int i = 0; closed && i < p->nthreads; i++)
        if (p->threads[i].end_seen && !p->threads[i].end_matches)
            mark(p, "a thread's closing head does not match its records");
    p->name = detshim_field_get(p, TRACE_FIELD_PROCESS);
    p->program = detshim_field_get(p, TRACE_FIELD_PROGRAM);
    if (!p->name) {
        const char *b = strrchr(path, '/');
        char *n = arena_alloc(&pp->arena, strlen(b ? b + 1 : path) + 1);
        if (!n)
            return DETSHIM_ERR_NOMEM;
        strcpy(n, b ? b + 1 : path);
        p->name = n;
    }
    if (!p->program)
        p->program = "?";
    return 0;
}
