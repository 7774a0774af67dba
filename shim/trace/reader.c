/* The trace reader behind include/detshim.h: loads one file or a run
 * directory, checks every frame, and recomputes chains and roots from the
 * records rather than trusting stored copies. Hostile input is expected:
 * every length is bounds-checked, and a file that stops making sense is
 * read up to its last whole frame and marked truncated.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "detshim.h"
#include "trace/chain.h"
#include "trace/trace.h"
#include "detshim/trace_format.h"

#define MAX_THREADS 65536

/* Bump allocator owning every string and array of one process. */
struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    unsigned char data[];
};

struct site {
    detshim_frame frame;
    const char *module, *symbol;
};

/* Per-process reader state, reached through detshim_process.internal. */
struct proc_private {
    detshim_process pub; /* loaded here, then copied to the public array */
    struct arena_chunk *arena;
    struct site *sites;
    size_t nsites, capsites;
    unsigned char *file;
};

static void *arena_alloc(struct proc_private *pp, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    struct arena_chunk *c = pp->arena;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 1 << 20 ? n : 1 << 20;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = pp->arena;
        c->used = 0;
        c->cap = cap;
        pp->arena = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
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

static uint64_t get_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t take_u(struct cur *c, int n)
{
    const unsigned char *p = take(c, (size_t)n);
    return p ? get_le(p, n) : 0;
}

static const char *take_str(struct cur *c, struct proc_private *pp)
{
    size_t n = (size_t)take_u(c, 1);
    const unsigned char *p = take(c, n);
    char *s = arena_alloc(pp, n + 1);
    if (!p || !s) {
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

static int parse_params(struct cur *c, struct proc_private *pp, detshim_record *r)
{
    r->nparams = (int)take_u(c, 1);
    r->params = arena_alloc(pp, sizeof *r->params * (size_t)(r->nparams + 1));
    if (!r->params || r->nparams > TRACE_MAX_PARAMS)
        return -1;
    for (int i = 0; i < r->nparams && !c->bad; i++) {
        detshim_param *p = &r->params[i];
        p->name = take_str(c, pp);
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
        case TRACE_PARAM_STR: p->v.s = take_str(c, pp); break;
        default: return -1;
        }
    }
    return c->bad ? -1 : 0;
}

static int parse_record(const unsigned char *payload, size_t len, struct proc_private *pp,
                        detshim_record *r)
{
    struct cur c = { payload, len, 0, 0 };
    memset(r, 0, sizeof *r);
    r->seq = take_u(&c, 8);
    r->api = take_str(&c, pp);
    if (c.bad || parse_params(&c, pp, r) != 0)
        return -1;
    r->noperands = (int)take_u(&c, 1);
    r->operands = arena_alloc(pp, sizeof *r->operands * (size_t)(r->noperands + 1));
    if (!r->operands || r->noperands > TRACE_MAX_OPERANDS)
        return -1;
    for (int i = 0; i < r->noperands && !c.bad; i++) {
        detshim_operand *o = &r->operands[i];
        o->name = take_str(&c, pp);
        o->role = (uint8_t)take_u(&c, 1);
        o->elem_size = (uint8_t)take_u(&c, 1);
        o->count = take_u(&c, 8);
        o->digest.lo = take_u(&c, 8);
        o->digest.hi = take_u(&c, 8);
    }
    r->nframes = (int)take_u(&c, 1);
    r->frames = arena_alloc(pp, sizeof *r->frames * (size_t)(r->nframes + 1));
    if (!r->frames || r->nframes > TRACE_MAX_FRAMES)
        return -1;
    for (int i = 0; i < r->nframes && !c.bad; i++) {
        r->frames[i].module = take_u(&c, 8);
        r->frames[i].offset = take_u(&c, 8);
    }
    r->nnotes = (int)take_u(&c, 1);
    r->notes = arena_alloc(pp, sizeof *r->notes * (size_t)(r->nnotes + 1));
    if (!r->notes || r->nnotes > TRACE_MAX_NOTES)
        return -1;
    for (int i = 0; i < r->nnotes && !c.bad; i++) {
        r->notes[i].key = take_str(&c, pp);
        r->notes[i].value = take_str(&c, pp);
    }
    if (c.bad || c.off != len)
        return -1;
    return chain_sha256(payload, len, NULL, 0, r->digest);
}

static detshim_thread *thread_for(struct proc_private *pp, uint32_t index)
{
    detshim_process *p = &pp->pub;
    for (int i = 0; i < p->nthreads; i++)
        if (p->threads[i].index == index)
            return &p->threads[i];
    if (p->nthreads >= MAX_THREADS)
        return NULL;
    detshim_thread *t = realloc(p->threads, sizeof *t * (size_t)(p->nthreads + 1));
    if (!t)
        return NULL;
    p->threads = t;
    t = &p->threads[p->nthreads++];
    memset(t, 0, sizeof *t);
    t->index = index;
    chain_start(t->head);
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

static void add_site(struct proc_private *pp, const unsigned char *payload, size_t len)
{
    struct cur c = { payload, len, 0, 0 };
    struct site s;
    s.frame.module = take_u(&c, 8);
    s.frame.offset = take_u(&c, 8);
    s.module = take_str(&c, pp);
    s.symbol = take_str(&c, pp);
    if (c.bad)
        return;
    if (pp->nsites == pp->capsites) {
        size_t cap = pp->capsites ? 2 * pp->capsites : 64;
        struct site *n = realloc(pp->sites, sizeof *n * cap);
        if (!n)
            return;
        pp->sites = n;
        pp->capsites = cap;
    }
    pp->sites[pp->nsites++] = s;
}

int detshim_site_lookup(const detshim_process *p, const detshim_frame *f, const char **module,
                        const char **symbol)
{
    const struct proc_private *pp = p->internal;
    if (!pp)
        return -1;
    for (size_t i = 0; i < pp->nsites; i++) {
        if (pp->sites[i].frame.module == f->module && pp->sites[i].frame.offset == f->offset) {
            *module = pp->sites[i].module;
            *symbol = pp->sites[i].symbol;
            return 0;
        }
    }
    return -1;
}

/* Reads a whole regular file. O_NONBLOCK: a FIFO planted under a trace
 * file's name must not hang the reader before fstat can refuse it. */
static int read_file(const char *path, unsigned char **data, size_t *len, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s: cannot read: %s", path,
                 fd >= 0 ? "not a regular file" : strerror(errno));
        if (fd >= 0)
            close(fd);
        return DETSHIM_ERR_IO;
    }
    *len = (size_t)sb.st_size;
    *data = malloc(*len + 1);
    if (!*data) {
        close(fd);
        snprintf(err, errlen, "%s: out of memory reading %zu bytes", path, *len);
        return DETSHIM_ERR_NOMEM;
    }
    size_t got = 0;
    while (got < *len) {
        ssize_t n = read(fd, *data + got, *len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (got != *len) {
        snprintf(err, errlen, "%s: short read", path);
        free(*data);
        *data = NULL;
        return DETSHIM_ERR_IO;
    }
    return 0;
}

static int parse_header(struct proc_private *pp, const unsigned char *d, size_t len,
                        size_t *body, char *err, size_t errlen)
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
    uint32_t version = (uint32_t)get_le(d + 8, 4), hlen = (uint32_t)get_le(d + 12, 4);
    if (version != TRACE_VERSION) {
        snprintf(err, errlen, "%s: trace format version %u, this detdiff reads version %u; "
                 "use the detdiff of the detshim that wrote it", p->path, version, TRACE_VERSION);
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
        char *s = v ? arena_alloc(pp, f->len + 1) : NULL;
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
    *body = TRACE_FILE_HEADER_LEN + hlen;
    return 0;
}

const char *detshim_field_get(const detshim_process *p, uint16_t key)
{
    for (int i = 0; i < p->nfields; i++)
        if (p->fields[i].key == key)
            return p->fields[i].value;
    return NULL;
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

/* Reads frames from `off`; stops at the first one that is incomplete or
 * fails its check. Returns 0, or an error code for allocation failure. */
static int parse_frames(struct proc_private *pp, const unsigned char *d, size_t len, size_t off)
{
    detshim_process *p = &pp->pub;
    int closed = 0;
    uint8_t stored_root[32];
    while (off < len) {
        if (len - off < TRACE_FRAME_HEADER_LEN) {
            mark(p, "file ends inside a frame header at byte %llu (cut short)", (unsigned long long)off);
            break;
        }
        const unsigned char *h = d + off;
        uint32_t flen = (uint32_t)get_le(h, 4), thread = (uint32_t)get_le(h + 8, 4);
        uint16_t type = (uint16_t)get_le(h + 4, 2);
        if (flen > TRACE_MAX_FRAME) {
            mark(p, "corrupt frame length at byte %llu", (unsigned long long)off);
            break;
        }
        if (len - off - TRACE_FRAME_HEADER_LEN < flen) {
            mark(p, "file ends inside a frame at byte %llu (cut short)", (unsigned long long)off);
            break;
        }
        const unsigned char *payload = h + TRACE_FRAME_HEADER_LEN;
        if ((uint32_t)get_le(h + 12, 4) != trace_frame_check(payload, flen, type, thread)) {
            mark(p, "damaged frame at byte %llu (check does not match)", (unsigned long long)off);
            break;
        }
        if (closed) {
            mark(p, "frames after the closing frame at byte %llu", (unsigned long long)off);
            break;
        }
        detshim_thread *t = NULL;
        if (type == TRACE_FRAME_RECORD || type == TRACE_FRAME_THREAD_END) {
            t = thread_for(pp, thread);
            if (!t)
                return DETSHIM_ERR_NOMEM;
        }
        if (type == TRACE_FRAME_RECORD) {
            detshim_record r;
            if (parse_record(payload, flen, pp, &r) != 0 || t->end_seen) {
                mark(p, "malformed record at byte %llu", (unsigned long long)off);
                break;
            }
            r.file_offset = off;
            chain_step(NULL, t->head, payload, flen);
            if (add_record(t, &r) != 0)
                return DETSHIM_ERR_NOMEM;
        } else if (type == TRACE_FRAME_SITE) {
            add_site(pp, payload, flen);
        } else if (type == TRACE_FRAME_THREAD_END && flen == 40) {
            t->end_seen = 1;
            t->end_matches = get_le(payload, 8) == t->nrecords && !memcmp(payload + 8, t->head, 32);
        } else if (type == TRACE_FRAME_INCOMPLETE && flen > 0 && payload[0] < flen) {
            mark(p, "the writer marked it incomplete: %.*s", payload[0], (const char *)payload + 1);
        } else if (type == TRACE_FRAME_PROCESS_END && flen == 36) {
            closed = 1;
            memcpy(stored_root, payload + 4, 32);
        }
        /* Unknown frame types are skipped: they carry no records. */
        off += TRACE_FRAME_HEADER_LEN + flen;
    }
    p->valid_bytes = off;
    if (!closed)
        mark(p, "no closing frame: the process was killed or crashed before exit "
                "(trace ends at byte %llu)", (unsigned long long)off);

    struct chain_field *fields = calloc((size_t)p->nfields + 1, sizeof *fields);
    if (!fields)
        return DETSHIM_ERR_NOMEM;
    int nf = 0;
    for (int i = 0; i < p->nfields; i++) {
        if (p->fields[i].flags & TRACE_FIELD_INFO)
            continue;
        fields[nf].key = p->fields[i].key;
        fields[nf].len = p->fields[i].len;
        fields[nf].value = p->fields[i].value;
        nf++;
    }
    struct chain_thread *heads = calloc((size_t)p->nthreads + 1, sizeof *heads);
    if (!heads) {
        free(fields);
        return DETSHIM_ERR_NOMEM;
    }
    int nheads = 0;
    for (int i = 0; i < p->nthreads; i++) {
        if (p->threads[i].index & TRACE_THREAD_REAL)
            continue; /* real entropy by design: in no root */
        heads[nheads].count = p->threads[i].nrecords;
        memcpy(heads[nheads++].head, p->threads[i].head, 32);
    }
    chain_process_root(fields, nf, heads, nheads, p->root);
    free(heads);
    free(fields);
    if (closed && memcmp(stored_root, p->root, 32) != 0)
        mark(p, "closing root does not match the records (file altered after writing?)");
    for (int i = 0; closed && i < p->nthreads; i++)
        if (p->threads[i].end_seen && !p->threads[i].end_matches)
            mark(p, "a thread's closing head does not match its records");
    return 0;
}

static int cmp_thread_index(const void *a, const void *b)
{
    const detshim_thread *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

static int load_process(const char *path, struct proc_private *pp, char *err, size_t errlen)
{
    detshim_process *p = &pp->pub;
    p->path = strdup(path);
    if (!p->path)
        return DETSHIM_ERR_NOMEM;
    size_t len, body;
    int rc = read_file(path, &pp->file, &len, err, errlen);
    if (rc != 0)
        return rc;
    p->file_bytes = len;
    rc = parse_header(pp, pp->file, len, &body, err, errlen);
    if (rc == 0)
        rc = parse_frames(pp, pp->file, len, body);
    if (rc == DETSHIM_ERR_NOMEM)
        snprintf(err, errlen, "%s: out of memory", path);
    free(pp->file);
    pp->file = NULL;
    if (rc != 0)
        return rc;
    if (p->nthreads)
        qsort(p->threads, (size_t)p->nthreads, sizeof *p->threads, cmp_thread_index);
    p->name = detshim_field_get(p, TRACE_FIELD_PROCESS);
    p->program = detshim_field_get(p, TRACE_FIELD_PROGRAM);
    if (!p->name) {
        const char *b = strrchr(path, '/');
        char *n = arena_alloc(pp, strlen(b ? b + 1 : path) + 1);
        if (!n)
            return DETSHIM_ERR_NOMEM;
        strcpy(n, b ? b + 1 : path);
        p->name = n;
    }
    if (!p->program)
        p->program = "?";
    return 0;
}

static void free_procs(struct proc_private *procs, int n);
static void free_proc(struct proc_private *pp);
static void free_unreadable(detshim_unreadable *u, int n);

static int cmp_process_name(const void *a, const void *b)
{
    const struct proc_private *x = a, *y = b;
    return strcmp(x->pub.name, y->pub.name);
}

static int has_trace_suffix(const char *name)
{
    size_t n = strlen(name), m = strlen(TRACE_FILE_SUFFIX);
    return n > m && strcmp(name + n - m, TRACE_FILE_SUFFIX) == 0;
}

static int list_dir(const char *dir, char ***names, int *n, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: cannot open directory: %s", dir, strerror(errno));
        return DETSHIM_ERR_IO;
    }
    struct dirent *e;
    int cap = 0;
    *n = 0;
    *names = NULL;
    while ((e = readdir(d))) {
        if (!has_trace_suffix(e->d_name))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = realloc(*names, sizeof *nn * (size_t)cap);
            if (!nn) {
                closedir(d);
                return DETSHIM_ERR_NOMEM;
            }
            *names = nn;
        }
        if (asprintf(&(*names)[*n], "%s/%s", dir, e->d_name) < 0) {
            closedir(d);
            return DETSHIM_ERR_NOMEM;
        }
        (*n)++;
    }
    closedir(d);
    if (!*n) {
        snprintf(err, errlen, "%s: no trace files (*%s) here; is this a DETSHIM_TRACE directory?",
                 dir, TRACE_FILE_SUFFIX);
        return DETSHIM_ERR_EMPTY;
    }
    return 0;
}

static int cmp_unreadable_name(const void *a, const void *b)
{
    return strcmp(((const detshim_unreadable *)a)->name, ((const detshim_unreadable *)b)->name);
}

/* Notes a file of a directory that is not a readable trace: its path, the
 * process name its file name implies, and why (`why`, naming the path). */
static int add_unreadable(detshim_unreadable *u, const char *path, int error, const char *why)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    u->path = strdup(path);
    u->name = strndup(base, strlen(base) - strlen(TRACE_FILE_SUFFIX));
    u->error = error;
    if (why[0])
        snprintf(u->reason, sizeof u->reason, "%s", why);
    else
        snprintf(u->reason, sizeof u->reason, "%s: cannot load (error %d)", path, error);
    return u->path && u->name ? 0 : DETSHIM_ERR_NOMEM;
}

int detshim_run_load(const char *path, detshim_run **out, char *err, size_t errlen)
{
    struct stat sb;
    *out = NULL;
    if (stat(path, &sb) != 0) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return DETSHIM_ERR_IO;
    }
    char **files = NULL;
    int nfiles = 0, rc = 0, is_dir = S_ISDIR(sb.st_mode);
    if (is_dir) {
        rc = list_dir(path, &files, &nfiles, err, errlen);
    } else {
        files = malloc(sizeof *files);
        if (files && (files[0] = strdup(path)))
            nfiles = 1;
        else
            rc = DETSHIM_ERR_NOMEM;
    }
    detshim_run *run = calloc(1, sizeof *run);
    struct proc_private *procs = calloc((size_t)nfiles + 1, sizeof *procs);
    detshim_unreadable *bad = calloc((size_t)nfiles + 1, sizeof *bad);
    int nbad = 0;
    if (!run || !procs || !bad)
        rc = rc ? rc : DETSHIM_ERR_NOMEM;
    for (int i = 0; rc == 0 && i < nfiles; i++) {
        char why[512] = "";
        struct proc_private *pp = &procs[run->nprocesses];
        int lrc = load_process(files[i], pp, why, sizeof why);
        if (lrc == 0) {
            run->nprocesses++;
            continue;
        }
        free_proc(pp);
        /* One bad file of a directory does not hide the others: it is
         * listed for the caller to report. A file asked for by name, or
         * memory running out, fails the load. */
        if (is_dir && lrc != DETSHIM_ERR_NOMEM) {
            rc = add_unreadable(&bad[nbad++], files[i], lrc, why);
        } else {
            snprintf(err, errlen, "%s", why);
            rc = lrc;
        }
    }
    for (int i = 0; i < nfiles; i++)
        free(files[i]);
    free(files);
    if (rc == 0 && run->nprocesses == 0) {
        /* Nothing to read at all: the run itself is not usable. */
        snprintf(err, errlen, "%s (no file of %s is a readable trace)", bad[0].reason, path);
        rc = bad[0].error;
    }
    if (rc == 0) {
        qsort(bad, (size_t)nbad, sizeof *bad, cmp_unreadable_name);
        run->unreadable = bad;
        run->nunreadable = nbad;
        bad = NULL;
        /* The private states stay where they are (their addresses are the
         * `internal` pointers); the public array holds copies. */
        qsort(procs, (size_t)run->nprocesses, sizeof *procs, cmp_process_name);
        run->processes = calloc((size_t)run->nprocesses + 1, sizeof *run->processes);
        for (int i = 0; run->processes && i < run->nprocesses; i++) {
            run->processes[i] = procs[i].pub;
            run->processes[i].internal = &procs[i];
        }
        if (!run->processes)
            rc = DETSHIM_ERR_NOMEM;
    }
    if (rc != 0) {
        if (rc == DETSHIM_ERR_NOMEM && !err[0])
            snprintf(err, errlen, "%s: out of memory", path);
        free_procs(procs, nfiles);
        free_unreadable(bad, nbad);
        if (run) {
            free(run->processes);
            free_unreadable(run->unreadable, run->nunreadable);
        }
        free(run);
        return rc;
    }
    const char **names = calloc((size_t)run->nprocesses + 1, sizeof *names);
    uint8_t(*roots)[32] = calloc((size_t)run->nprocesses + 1, 32);
    if (!names || !roots) {
        free(names);
        free(roots);
        detshim_run_free(run);
        snprintf(err, errlen, "%s: out of memory", path);
        return DETSHIM_ERR_NOMEM;
    }
    for (int i = 0; i < run->nprocesses; i++) {
        names[i] = procs[i].pub.name;
        memcpy(roots[i], procs[i].pub.root, 32);
    }
    chain_run_root(names, (const uint8_t(*)[32])roots, run->nprocesses, run->root);
    free(names);
    free(roots);
    *out = run;
    return 0;
}

/* Frees what one process state owns and zeroes it, for reuse. */
static void free_proc(struct proc_private *pp)
{
    for (int t = 0; t < pp->pub.nthreads; t++)
        free(pp->pub.threads[t].records);
    free(pp->pub.threads);
    free(pp->pub.fields);
    free(pp->pub.path);
    free(pp->sites);
    free(pp->file);
    while (pp->arena) {
        struct arena_chunk *next = pp->arena->next;
        free(pp->arena);
        pp->arena = next;
    }
    memset(pp, 0, sizeof *pp);
}

static void free_procs(struct proc_private *procs, int n)
{
    for (int i = 0; procs && i < n; i++)
        free_proc(&procs[i]);
    free(procs);
}

static void free_unreadable(detshim_unreadable *u, int n)
{
    for (int i = 0; u && i < n; i++) {
        free(u[i].path);
        free(u[i].name);
    }
    free(u);
}

void detshim_run_free(detshim_run *run)
{
    if (!run)
        return;
    /* All processes' private states are one array: the first one's. */
    free_procs(run->nprocesses ? run->processes[0].internal : NULL, run->nprocesses);
    free(run->processes);
    free_unreadable(run->unreadable, run->nunreadable);
    free(run);
}

void detshim_hex32(const uint8_t d[32], char out[65])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[64] = 0;
}
