/* Private state shared by the trace writer's files (writer.c: records and
 * buffers; process.c: naming, the file, fork and exit; callsite.c: stacks).
 */
#ifndef DETSHIM_TRACE_INTERNAL_H
#define DETSHIM_TRACE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "detshim.h"

#define TRACE_BUF_CAP (64u * 1024u)
#define SITE_CACHE_SIZE 512 /* per thread, power of two */

struct pending_rec; /* writer.c */

struct site_entry {
    uintptr_t addr; /* 0: empty */
    uint64_t module, offset;
    int ours;
};

/* One per recording thread; lives until process exit (its head and count
 * are part of the process root even after the thread is gone). */
struct thread_buf {
    uint32_t index;
    uint64_t seq;
    uint8_t head[32];
    void *md; /* EVP_MD_CTX */
    uint8_t *buf;
    size_t len;
    atomic_flag busy; /* owner while appending; the exit flusher */
    int finished;
    /* FIFO of records waiting for deferred digests: npending from
     * pending_head, in a ring of TRACE_PENDING_MAX; NULL until needed. */
    struct pending_rec **pending;
    unsigned pending_head, npending;
    struct site_entry sites[SITE_CACHE_SIZE];
    struct thread_buf *next;
};

struct trace_process {
    int on;             /* records are being taken */
    pid_t pid;          /* the process the state belongs to */
    int fd;             /* -1 until the first write */
    uint32_t next_index;
    pthread_mutex_t lock; /* registry and file open; never on the hot path */
    struct thread_buf *threads;
};

extern struct trace_process trace_proc;

/* process.c */
int trace_file_write(const void *data, size_t len); /* opens on first use */
/* callsite.c: fills frames (innermost first, our own skipped) and emits
 * SITE frames for addresses this thread has not described yet. */
int callsite_capture(struct thread_buf *tb, detshim_frame *frames, int max);
/* writer.c */
void trace_buf_append(struct thread_buf *tb, uint16_t type, const void *payload, uint32_t len);
void trace_buf_flush(struct thread_buf *tb);
void trace_thread_close(struct thread_buf *tb);
void trace_threads_reset_after_fork(void);

#endif
