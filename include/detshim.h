/* detshim's public reader API: read a trace file or a trace directory (one
 * run), grouped by process and thread, with chains and roots recomputed
 * from the records themselves; either loaded whole (detshim_run_load) or
 * indexed, its records then read through cursors in memory bounded by the
 * thread count (detshim_run_open). detdiff is built on this and
 * nothing else, so the reader and the writer share one format definition
 * (detshim/trace_format.h). Link with libdetshim-reader:
 *     cc tool.c $(pkg-config --cflags --libs detshim)
 */
#ifndef DETSHIM_H
#define DETSHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DETSHIM_VERSION "0.1.0"

/* What libdetshim-reader exports: it is built with -fvisibility=hidden, so
 * these functions are its whole interface. */
#if defined(__GNUC__)
#define DETSHIM_API __attribute__((visibility("default")))
#else
#define DETSHIM_API
#endif

/* Reader error codes: every function returns 0 or one of these. */
enum {
    DETSHIM_ERR_IO = -1,      /* cannot open or read */
    DETSHIM_ERR_FORMAT = -2,  /* not a detshim trace */
    DETSHIM_ERR_VERSION = -3, /* a detshim trace of another format version */
    DETSHIM_ERR_NOMEM = -4,
    DETSHIM_ERR_EMPTY = -5,   /* a directory holding no trace files */
};

typedef struct {
    uint64_t lo, hi;
} detshim_digest;

typedef struct {
    const char *name;
    uint8_t type; /* enum trace_param_type */
    union {
        int64_t i;
        char c;
        double f;    /* F32 widened exactly, F64 */
        double z[2]; /* C64 widened exactly, C128 */
        const char *s;
    } v;
} detshim_param;

typedef struct {
    const char *name;
    uint8_t role;      /* enum trace_operand_role */
    uint8_t elem_size; /* bytes per element */
    uint64_t count;    /* logical elements digested */
    detshim_digest digest;
} detshim_operand;

typedef struct {
    uint64_t module; /* XXH3_64 of the module's file name */
    uint64_t offset;
} detshim_frame;

typedef struct {
    const char *key, *value;
} detshim_note;

typedef struct {
    uint64_t seq;
    const char *api;
    int nparams, noperands, nframes, nnotes;
    /* Arrays of nparams, noperands, ... entries, owned by the run. */
    detshim_param *params;
    detshim_operand *operands;
    detshim_frame *frames;
    detshim_note *notes;
    uint8_t digest[32]; /* its record hash (trace_format.h), its identity:
                         * XXH3-128 of the payload (16 bytes, then 16
                         * zero), SHA-256 in an identity stream */
    uint64_t file_offset;
} detshim_record;

/* One window of a stream (trace_format.h): `count` records from record
 * `first`, and their digest. `summary`: the file holds only the digest
 * (a WINDOW frame), not the records. */
typedef struct {
    uint64_t first;
    uint32_t count;
    int summary;
    uint8_t digest[32];
} detshim_window;
typedef struct {
    uint32_t index; /* writer's thread index: 0 is the main thread */
    size_t nrecords;
    detshim_record *records; /* NULL in a run from detshim_run_open: read
                              * them with a cursor */
    uint8_t head[32]; /* stream head: over the window digests */
    int end_seen;     /* a THREAD_END frame closed this thread */
    int end_matches;  /* ... and its head and count match the records */
    /* Windows (format version 2): every call of the stream, summarized
     * ones included, and its windows in order (a run built in memory may
     * leave them 0 and NULL: count is then nrecords). nsummary: windows
     * held as digests only; a thread with none is a full stream. */
    uint64_t count;
    size_t nwindows, nsummary;
    detshim_window *windows;
} detshim_thread;

typedef struct {
    uint16_t key, flags;
    uint32_t len;
    const char *value; /* NUL-terminated copy */
} detshim_field;

typedef struct {
    char *path;
    const char *name;    /* TRACE_FIELD_PROCESS */
    const char *program; /* TRACE_FIELD_PROGRAM */
    int nfields;
    detshim_field *fields;
    int nthreads;
    detshim_thread *threads; /* sorted by writer index */
    uint8_t root[32];        /* recomputed process root */
    int truncated;           /* no PROCESS_END, or the file was cut short */
    uint64_t valid_bytes;    /* bytes read as whole frames */
    uint64_t file_bytes;
    char trouble[256];       /* why it is truncated, "" if not */
    uint64_t window;         /* records per window (TRACE_FIELD_WINDOW) */
    void *internal;          /* the reader's own: strings, sites */
} detshim_process;

/* A file of a trace directory, named like a trace (*.dtrace), that this
 * reader cannot read as one: empty, not a detshim trace, another format
 * version, not a regular file, unreadable. It may be planted by someone
 * else, or a process's trace cut before its header; a tool must report it,
 * never take the run as complete without it. */
typedef struct {
    char *path;
    char *name;       /* the process name its file name implies */
    int error;        /* DETSHIM_ERR_* */
    char reason[512]; /* one line, "PATH: what is wrong" */
} detshim_unreadable;

typedef struct {
    int nprocesses;
    detshim_process *processes; /* sorted by name */
    uint8_t root[32];           /* over the processes read */
    int nunreadable;
    detshim_unreadable *unreadable; /* sorted by name */
} detshim_run;

/* Loads a run from `path`, a trace directory or a single trace file.
 * Returns 0 and sets *out (free with detshim_run_free), or a DETSHIM_ERR_*
 * code with a one-line reason in err. A cut-short file is not an error: the
 * process is loaded up to its last whole frame and marked truncated. In a
 * directory, a file that is not a readable trace is not an error either:
 * it is listed in run->unreadable, and the others are loaded; a directory
 * without one readable trace is an error, as is a single file given as
 * `path` that cannot be read. */
DETSHIM_API int detshim_run_load(const char *path, detshim_run **out, char *err, size_t errlen);
DETSHIM_API void detshim_run_free(detshim_run *run);

/* Opens a run as detshim_run_load does, with the same checks, roots,
 * errors and unreadable files, but keeps no records: every thread's
 * `records` is NULL, its count, head and end flags are set, and its
 * records are read through a cursor. Each file is read once here; memory
 * is a constant plus per-thread state, whatever the record count. Call
 * sites are read from the files on the first detshim_site_lookup. */
DETSHIM_API int detshim_run_open(const char *path, detshim_run **out, char *err, size_t errlen);

/* A thread's records in order, one at a time: over a loaded run (or one
 * built in memory) it walks thread->records, over an opened run it reads
 * the thread's frames from its file. */
typedef struct detshim_cursor detshim_cursor;

/* Opens a cursor over thread t of process p (t must be one of
 * p->threads, and p must outlive the cursor). Returns 0 and sets *out
 * (close it with detshim_cursor_close), DETSHIM_ERR_IO if the file cannot
 * be opened again, DETSHIM_ERR_FORMAT if t has records and no way to read
 * them, or DETSHIM_ERR_NOMEM. */
DETSHIM_API int detshim_cursor_open(const detshim_process *p, const detshim_thread *t,
                                    detshim_cursor **out);
/* Sets *r to the next record and returns 1, or returns 0 past the last
 * one (*r NULL), or DETSHIM_ERR_IO / DETSHIM_ERR_FORMAT when the file no
 * longer holds what the run was opened from. *r is owned by the cursor
 * and valid until its next call; keep it to hold it longer. */
DETSHIM_API int detshim_cursor_next(detshim_cursor *c, const detshim_record **r);
/* Remembers the record the last detshim_cursor_next returned, at no cost,
 * so that it can be kept later ("last matching record"). */
DETSHIM_API void detshim_cursor_mark(detshim_cursor *c);
/* Sets *out to the current record (marked == 0) or the marked one
 * (marked != 0), owned by the process and valid until detshim_run_free,
 * or NULL if there is none. Returns 0, or a DETSHIM_ERR_* code (*out
 * NULL) when the file cannot be read again. */
DETSHIM_API int detshim_cursor_keep(detshim_cursor *c, int marked, const detshim_record **out);
DETSHIM_API void detshim_cursor_close(detshim_cursor *c);

/* Name and symbol of a call-site frame, as the SITE frames of the process
 * recorded them; returns 0 and points *module and *symbol into the process's
 * memory, or -1 if the writer did not describe that frame. */
DETSHIM_API int detshim_site_lookup(const detshim_process *p, const detshim_frame *f,
                                    const char **module, const char **symbol);

/* Writes the 64 lowercase hex digits of a 32-byte digest and a NUL. */
DETSHIM_API void detshim_hex32(const uint8_t d[32], char out[65]);

/* Value of header field `key` of a process, or NULL. */
DETSHIM_API const char *detshim_field_get(const detshim_process *p, uint16_t key);

#ifdef __cplusplus
}
#endif

#endif
