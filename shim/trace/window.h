/* Windows of a stream (docs/tracing.md#long-runs-summary-traces): a
 * stream's records are grouped by position into windows of [trace] window
 * records; each window's digest is SHA-256 over its record hashes, and the
 * stream's head is over the window digests (trace_format.h). At [trace]
 * level = summary a window of a calls or entropy stream keeps only its
 * digest, one WINDOW frame, unless DETSHIM_TRACE_FULL_WINDOW names it: then
 * its records are written, so that a re-run names the call in a window two
 * summaries disagree on (detcheck --bisect). The writer calls these hooks
 * with the stream's buffer held (tb->busy).
 */
#ifndef DETSHIM_WINDOW_H
#define DETSHIM_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "detshim/trace_format.h"
#include "trace/chain.h"

/* Per stream: the head over the windows closed so far, and the open
 * window's digest being streamed (chain.h). The thread_buf's own `head`
 * becomes the stream head when the stream ends (THREAD_END and the
 * process root read it). */
struct trace_window {
    uint8_t stream_head[32];
    uint32_t in_window; /* records in the open window */
    struct chain_window chain;
};
struct thread_buf;

/* Reads [trace] level and window (core_cfg), DETSHIM_TRACE_LEVEL (full or
 * summary, over the policy's level) and DETSHIM_TRACE_FULL_WINDOW
 * ("K" or "S:K": window K of every stream, or of the stream whose frame
 * thread index is S). Returns 0, or -1 with one line in err for a bad
 * value. Called once at trace start, before any record. */
int window_configure(char *err, size_t errlen);
/* The trace header's TRACE_FIELD_WINDOW and TRACE_FIELD_LEVEL values. */
const char *window_size_text(void);
const char *window_level_text(void);
/* A new (or a forked child's restarted) stream: no window yet. Returns 0,
 * or -1 when the window's SHA-256 state cannot be made (no memory). */
int window_start(struct thread_buf *tb);
/* Releases what window_start made. */
void window_free(struct thread_buf *tb);
/* 1 if the record about to become tb's record tb->seq is written to the
 * file, 0 if only its window's digest will be (a summary window). */
int window_keeps_record(const struct thread_buf *tb);
/* After record tb->seq - 1 (tb->seq already counts it), of record hash
 * `hash` (hlen bytes: chain_record_hash): adds it to the open window and
 * closes the window when it is full. Returns 1 and fills frame (a WINDOW payload) when the window is
 * summarized and the frame must be written, else 0. */
int window_after_record(struct thread_buf *tb, const uint8_t *hash, uint32_t hlen,
                        uint8_t frame[TRACE_WINDOW_FRAME_LEN]);
/* At the stream's end (tb->seq > 0): closes the open, partial window
 * (filling frame as window_after_record does) and leaves the stream head
 * in tb->head. */
int window_finish(struct thread_buf *tb, uint8_t frame[TRACE_WINDOW_FRAME_LEN]);

#endif
