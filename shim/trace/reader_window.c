/* The reader's side of windows (trace_format.h): while reader_scan.c
 * reads a process file, each stream's record hashes are streamed into
 * their window's digest, and a summary trace's WINDOW frames stand for the windows whose
 * records it left out; either way every closed window's digest is kept
 * in thread->windows and folded into the stream head, so a full and a
 * summary trace of the same run have the same heads and roots, and detdiff
 * names the first window two runs disagree on (shim/detdiff/windows.c).
 */
#include <stdlib.h>
#include <string.h>

#include "detshim.h"
#include "trace/chain.h"
#include "detshim/trace_format.h"
#include "reader_internal.h"

int reader_window_size(detshim_process *p)
{
    const char *v = detshim_field_get(p, TRACE_FIELD_WINDOW);
    uint64_t n = 0;
    if (!v || !*v || strlen(v) > 7)
        return -1;
    for (const char *c = v; *c; c++) {
        if (*c < '0' || *c > '9')
            return -1;
        n = n * 10 + (uint64_t)(*c - '0');
    }
    if (n == 0 || n > (1u << 20))
        return -1;
    p->window = n;
    return 0;
}

/* Appends a closed window to t and folds it into t's head. */
static int push_window(detshim_thread *t, struct reader_wstate *w, uint64_t first,
                       uint32_t count, const uint8_t digest[32], int summary)
{
    if (t->nwindows == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 4;
        detshim_window *n = realloc(t->windows, cap * sizeof *n);
        if (!n)
            return DETSHIM_ERR_NOMEM;
        t->windows = n;
        w->cap = cap;
    }
    detshim_window *win = &t->windows[t->nwindows++];
    win->first = first;
    win->count = count;
    win->summary = summary;
    memcpy(win->digest, digest, 32);
    t->nsummary += summary != 0;
    chain_stream_fold(t->head, digest);
    return 0;
}

/* Closes w's open window of n records, ending at t->count. */
static int close_window(detshim_thread *t, struct reader_wstate *w, uint32_t n)
{
    uint8_t digest[32];
    w->in_window = 0;
    if (chain_window_end(&w->chain, digest) != 0)
        return DETSHIM_ERR_NOMEM; /* OpenSSL failed: it could not allocate */
    return push_window(t, w, t->count - n, n, digest, 0);
}

int reader_window_record(const detshim_process *p, detshim_thread *t, struct reader_wstate *w,
                         const uint8_t *rhash, uint32_t rlen)
{
    if (w->last)
        return 1;
    if (!w->in_window && chain_window_begin(&w->chain) != 0)
        return DETSHIM_ERR_NOMEM;
    chain_window_add(&w->chain, rhash, rlen);
    w->in_window++;
    t->count++;
    if (w->in_window < p->window)
        return 0;
    return close_window(t, w, (uint32_t)p->window);
}

int reader_window_frame(const detshim_process *p, detshim_thread *t, struct reader_wstate *w,
                        const unsigned char *payload, uint32_t len)
{
    if (len != TRACE_WINDOW_FRAME_LEN || w->last || w->in_window)
        return 1;
    uint64_t first = reader_le(payload, 8);
    uint32_t count = (uint32_t)reader_le(payload + 8, 4);
    if (first != t->count || count == 0 || count > p->window)
        return 1;
    w->last = count < p->window;
    t->count += count;
    return push_window(t, w, first, count, payload + 12, 1);
}

int reader_window_end(detshim_thread *t, struct reader_wstate *w)
{
    if (!w->in_window)
        return 0;
    w->last = 1;
    return close_window(t, w, w->in_window);
}

void reader_window_free(struct reader_wstate *w)
{
    chain_window_free(&w->chain);
}
