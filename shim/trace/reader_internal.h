/* What the files of the trace reader (libdetshim-reader) share; private,
 * never installed. The reader is four files, in the order data flows:
 *   reader_parse.c   arenas, and the parsing of one header, record or site
 *   reader_scan.c    one sequential pass over a process file: frames
 *                    checked, threads counted and chained, roots recomputed,
 *                    records kept (detshim_run_load) or only indexed
 *                    (detshim_run_open)
 *   reader_cursor.c  cursors over one thread's records, records kept for
 *                    the caller, call-site names read when first asked for
 *   reader.c         runs: directories, unreadable files, the run root
 *   reader_window.c  windows: each stream's window digests and head, from
 *                    its records or its WINDOW frames (summary traces)
 *   reader_expand.c  compressed traces, expanded before the scan
 */
#ifndef DETSHIM_READER_INTERNAL_H
#define DETSHIM_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "detshim.h"
#include "trace/chain.h"

/* Bump allocator: everything allocated from it is freed at once. */
struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    unsigned char data[];
};
struct arena {
    struct arena_chunk *head;
};

/* n bytes, 16-aligned, owned by the arena; NULL when out of memory. */
void *arena_alloc(struct arena *a, size_t n);
/* Frees all but the newest chunk and empties it, for reuse per record. */
void arena_reset(struct arena *a);
void arena_free(struct arena *a);

/* Little-endian unsigned integer of n bytes. */
uint64_t reader_le(const unsigned char *p, int n);

/* Parses a RECORD payload into *r, its strings and arrays from `a`.
 * Returns 0, or -1 if the payload is malformed or memory ran out (r is
 * then unusable). r->digest and r->file_offset are left 0: the caller
 * that needs them sets them (reader_finish_record). */
int reader_parse_record(const unsigned char *payload, size_t len, struct arena *a,
                        detshim_record *r);

/* Sets r->digest (its record hash, rlen bytes: chain_record_hash) and
 * r->file_offset (of its frame). */
void reader_finish_record(detshim_record *r, const uint8_t *rhash, uint32_t rlen,
                          uint64_t frame_offset);

struct reader_site {
    detshim_frame frame;
    const char *module, *symbol;
};
/* Parses a SITE payload, strings from `a`. Returns 0, or -1. */
int reader_parse_site(const unsigned char *payload, size_t len, struct arena *a,
                      struct reader_site *s);

struct proc_private;
/* Parses the file header at d (len bytes: the whole file, or at least
 * TRACE_FILE_HEADER_LEN + TRACE_MAX_HEADER of it) into pp->pub.fields, and
 * sets *body to the offset of the first frame. Returns 0, or a
 * DETSHIM_ERR_* code with a one-line reason naming pp->pub.path in err. */
int reader_parse_header(struct proc_private *pp, const unsigned char *d, size_t len,
                        uint64_t *body, char *err, size_t errlen);

/* A window over a file read with pread: the scan and every cursor own one,
 * so several read the same file independently. */
struct reader_src {
    int fd;
    uint64_t limit;  /* bytes past this offset are never read */
    unsigned char *buf;
    size_t cap, len; /* buf holds len bytes of the file from buf_off */
    uint64_t buf_off;
};
/* Points at bytes [off, off + n) of the file, valid until the next call;
 * NULL when they lie past src->limit, cannot be read (errno set, or 0 for
 * a file shorter than its limit), or memory ran out. n must not exceed
 * READER_WINDOW. */
const unsigned char *reader_src_at(struct reader_src *s, uint64_t off, size_t n);
void reader_src_close(struct reader_src *s);
#define READER_WINDOW ((size_t)1 << 20)

/* A stream's open window while scanning (reader_window.c). */
struct reader_wstate {
    struct chain_window chain; /* the open window's digest, streamed */
    uint32_t in_window; /* its records so far */
    int last;           /* a short window was closed: nothing may follow */
    size_t cap;         /* of thread->windows */
};
/* Sets p->window from its TRACE_FIELD_WINDOW field: 0, or -1 if absent or
 * not a number from 1 to 2^20. */
int reader_window_size(detshim_process *p);
/* A RECORD of thread t, at its position t->count, by its record hash
 * (rlen bytes): added to the open window, closed when full. A WINDOW payload: one summarized
 * window at t->count. The end of t's stream (its THREAD_END, or the end
 * of a cut file): the open window closed. Each returns 0, 1 when the
 * frame does not fit the stream (malformed), or DETSHIM_ERR_NOMEM. */
int reader_window_record(const detshim_process *p, detshim_thread *t, struct reader_wstate *w,
                         const uint8_t *rhash, uint32_t rlen);
int reader_window_frame(const detshim_process *p, detshim_thread *t, struct reader_wstate *w,
                        const unsigned char *payload, uint32_t len);
int reader_window_end(detshim_thread *t, struct reader_wstate *w);
/* Releases w's SHA-256 state. */
void reader_window_free(struct reader_wstate *w);

/* Per thread, what a cursor needs to find its frames again. */
struct reader_extent {
    uint64_t first, end; /* offset of its first RECORD frame, and the end
                          * of its last one */
};

/* Per-process reader state, reached through detshim_process.internal. */
struct proc_private {
    detshim_process pub;     /* filled here, then copied to the run */
    struct arena arena;      /* strings, kept records, sites */
    struct reader_extent *extents; /* parallel to pub.threads; NULL when
                                    * the records are loaded */
    uint64_t body;           /* offset of the first frame */
    struct reader_site *sites;
    size_t nsites, capsites;
    int sites_read;          /* the SITE frames have been read */
    int expanded;            /* compressed: read from expanded_fd */
    int expanded_fd;         /* the expanded file (reader_expand.c) */
};

/* reader_expand.c: expands the compressed file src reads (its header
 * parsed, pp->body set) into an unnamed temporary file and points src at
 * it. Returns 0, or a DETSHIM_ERR_* code with a one-line reason in err. */
int reader_expand(struct proc_private *pp, struct reader_src *src, char *err, size_t errlen);
/* A new descriptor for pp's bytes (the expanded file, or the file at its
 * path), for a cursor; -1 and errno on failure. */
int reader_file_open(const struct proc_private *pp);

/* Reads the process file at `path` into pp in one pass; keep_records: also
 * every record (detshim_run_load), else only per-thread counts, heads and
 * extents (detshim_run_open). Returns 0 or a DETSHIM_ERR_* code with a
 * one-line reason in err; a cut-short file is not an error (pp->pub is
 * marked truncated). On error the caller frees pp with reader_proc_free. */
int reader_scan_process(const char *path, struct proc_private *pp, int keep_records, char *err,
                        size_t errlen);
/* Reads every SITE frame of pp's file up to its last valid frame, once.
 * Returns 0, or a DETSHIM_ERR_* code. */
int reader_read_sites(struct proc_private *pp);
/* Appends one site to pp's table. Returns 0, or DETSHIM_ERR_NOMEM. */
int reader_add_site(struct proc_private *pp, const struct reader_site *s);
/* Frees what pp owns and zeroes it. */
void reader_proc_free(struct proc_private *pp);

#endif
