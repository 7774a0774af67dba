/* Private state shared by the trace writer's files (writer.c: records and
 * buffers; process.c: naming, the file, fork and exit; dir.c: the trace
 * directory; callsite.c: stacks; pysite.c: Python frames).
 */
#ifndef DETSHIM_TRACE_INTERNAL_H
#define DETSHIM_TRACE_INTERNAL_H

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "detshim.h"
#include "trace/trace.h"
#include "trace/window.h"

/* A stream's buffer starts at TRACE_BUF_CAP; one written out
 * TRACE_BUF_GROW_AFTER times (a busy stream) grows to TRACE_BUF_MAX, so
 * that it is written in fewer, larger writes (writer.c). */
#define TRACE_BUF_CAP (64u * 1024u)
#define TRACE_BUF_MAX (1024u * 1024u)
#define TRACE_BUF_GROW_AFTER 4
#define SITE_CACHE_BITS 9
#define SITE_CACHE_SIZE (1u << SITE_CACHE_BITS) /* per thread */
/* How long the exit flush waits for a lock another thread holds. */
#define TRACE_EXIT_WAIT_MS 1000

struct pending_rec; /* writer.c */

#define PYSITE_CACHE_SIZE 256 /* per thread, power of two */

/* A Python frame this thread described (pysite.c): code object, the
 * instruction, and what tells a reused address apart. */
struct pysite_entry {
    const void *code; /* NULL: empty */
    const void *filename, *qualname, *linetable;
    int lasti;
    uint64_t id; /* the frame's offset under TRACE_PYTHON_MODULE */
};

struct site_entry {
    uintptr_t addr; /* 0: empty */
    uint64_t module, offset;
    int ours;
    int undescribed; /* found by a first walk that was redone (callsite.c) */
};

/* The thread's last stack walk that needed no second one (callsite.c): its
 * return addresses, and the frames they gave, taken again for the same
 * walk while every site they name is still in the site cache. */
#define CALLSITE_FIRST_ALLOW 4 /* our own frames above the commit's it allows for */
_Static_assert(CALLSITE_FIRST_ALLOW >= TRACE_SITE_ALLOW, "a kept walk holds either");
struct callsite_walk {
    int depth, max; /* max 0: none */
    int allow, n;
    void *stack[TRACE_MAX_FRAMES + CALLSITE_FIRST_ALLOW];
    detshim_frame frames[TRACE_MAX_FRAMES];
};

/* One per recording thread; lives until process exit (its head and count
 * are part of the process root even after the thread is gone). */
struct thread_buf {
    uint32_t index;
    uint64_t seq;
    uint8_t head[32];          /* at the end, the stream head */
    struct trace_window win;   /* window.c: the open window, the head over closed ones */
    uint8_t *buf;
    size_t cap;       /* TRACE_BUF_CAP, or TRACE_BUF_MAX once grown */
    unsigned flushes; /* times buf was written out, until it grows */
    size_t len;
    atomic_flag busy; /* owner while appending; the exit flusher */
    int finished;     /* closed: records after this are late (under busy) */
    int gone;         /* its thread has exited (under busy) */
    /* FIFO of records waiting for deferred digests: npending from
     * pending_head, in a ring of TRACE_PENDING_MAX; NULL until needed. */
    struct pending_rec **pending;
    unsigned pending_head, npending;
    struct site_entry sites[SITE_CACHE_SIZE];
    struct callsite_walk last_walk;
    struct pysite_entry pysites[PYSITE_CACHE_SIZE];
    struct thread_buf *next;
};

struct trace_process {
    atomic_int on;      /* records are being taken */
    pid_t pid;          /* the process the state belongs to */
    atomic_int fd;      /* -1 until open; published after its identity */
    atomic_int closing; /* the exit (or exec) flush has begun */
    uint32_t next_index;
    pthread_mutex_t lock; /* registry and file open; never on the hot path */
    _Atomic(struct thread_buf *) threads; /* read without the lock at exit */
};

extern struct trace_process trace_proc;

/* process.c */
int trace_file_write(const void *data, size_t len); /* opens on first use */
/* compress.c: reads [trace] compress and DETSHIM_TRACE_COMPRESS and loads
 * libzstd (0, or -1 and one line in err); the header's
 * TRACE_FIELD_COMPRESSION value (NULL: uncompressed); writes a buffer of
 * whole frames, as one ZSTD frame where that is smaller (trace_file_write's
 * result). */
int compress_configure(char *err, size_t errlen);
const char *compress_header_text(void);
int compress_write(const uint8_t *frames, size_t len);
/* trace_proc.lock, taken without waiting forever once closing: returns 0
 * holding it, or -1 (the holder is this very thread, interrupted by a
 * signal whose handler exits, or it did not let go in time). */
int trace_proc_lock(void);
void trace_proc_unlock(void);
/* Marks the trace incomplete (once: the first reason is kept) by writing
 * an INCOMPLETE frame over the SPARE one, and says so in one line. */
void trace_incomplete(const char *why);
/* A record arrived after the trace closed: incomplete, unless it comes
 * from the thread that closed it at exit (other libraries' destructors,
 * after the program's own work). */
void trace_late_record(void);
/* dir.c: opens and checks the trace directory (0, or -1 and err); creates
 * trace file `name` in it, 0600, holding `head` from the moment it has its
 * name (the fd, or -1 and errno: EEXIST when the name is taken); lists it
 * (NULL on error); writes all of data (0, or -1 and errno, EIO for a write
 * that wrote nothing). */
int trace_dir_open(const char *path, char *err, size_t errlen);
int trace_dir_create(const char *name, const void *head, size_t len);
DIR *trace_dir_list(void);
int trace_write_all(int fd, const void *data, size_t len);
/* callsite.c: fills frames (innermost first, our own skipped, at most
 * max) from stack, depth return addresses walked (callsite_walk) by the
 * commit or the interceptor, allowing for max + allow of them (allow: the
 * frames of ours above where the walk began, and a spare), walking again
 * deeper when that was short; emits SITE frames for addresses this thread
 * has not described yet. */
int callsite_capture(struct thread_buf *tb, void *const *stack, int depth, int allow,
                     detshim_frame *frames, int max);
/* Forgets the thread's last walk (its site cache was cleared). */
void callsite_forget(struct thread_buf *tb);
/* Writes a SITE frame describing (module, offset); strings cut at 255. */
void callsite_emit(struct thread_buf *tb, uint64_t module, uint64_t offset, const char *name,
                   const char *symbol);
/* pysite.c: sets *out to the innermost Python frame of the calling thread
 * and returns 1 (its SITE frame written the first time), or returns 0:
 * not Python, an unsupported version, no Python frame on this thread. */
int pysite_capture(struct thread_buf *tb, detshim_frame *out);
/* Reads DETSHIM_PYTHON_SITES at start-up; a bad value fails there. */
void pysite_configure(void);
/* The trace header's line on Python call sites (buf may hold it), or NULL
 * in a process without a Python interpreter. */
const char *pysite_header(char *buf, size_t cap);
/* Pieces, for the unit tests: `in` with "//", "." and ".." folded (paths
 * not starting with '/' copied as they are), returning its length; the
 * part of a normalized path after its sys.path entry (detshim's hook
 * folder, site-packages, the script's folder, the standard library); the
 * line of code unit `lasti` in a 3.11 location table (-1: none); a
 * compact str object as UTF-8 (its length, or -1). */
size_t pysite_normalize(const char *in, char *out, size_t cap);
const char *pysite_relative(const char *path, const char *hook_dir, const char *script_dir);
int pysite_line_at(const uint8_t *table, size_t len, int firstlineno, int lasti);
int pysite_read_str(const void *obj, char *out, size_t cap);
/* writer.c */
void trace_buf_append(struct thread_buf *tb, uint16_t type, const void *payload, uint32_t len);
void trace_buf_flush(struct thread_buf *tb);
void trace_thread_close(struct thread_buf *tb); /* by its thread, at its exit */
/* Closes tb at process exit without freeing it; -1 if its buffer could not
 * be had in time (its thread is inside the shim: interrupted by the
 * exiting signal handler, or still running), when its records are left
 * out. */
int trace_thread_finish(struct thread_buf *tb);
void trace_threads_reset_after_fork(void);

#endif
