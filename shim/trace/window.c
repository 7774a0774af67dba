/* The writer's side of windows (window.h): which windows of a stream are
 * written record by record and which as one WINDOW frame, and the fold of
 * each closed window's digest into the stream head. The definitions are
 * in trace_format.h; the reader recomputes the same heads from either
 * form (reader_scan.c), so the level never changes a root.
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "trace/chain.h"
#include "trace/trace_internal.h"
#include "trace/window.h"

/* Set once by window_configure, read-only afterwards. */
static uint64_t window_size = TRACE_WINDOW_DEFAULT;
static int summary;
static int full_set;          /* DETSHIM_TRACE_FULL_WINDOW given */
static int full_any_stream;   /* ... without a stream: every stream */
static uint32_t full_stream;  /* ... else this frame thread index */
static uint64_t full_index;   /* ... and this window */
static char size_text[24], level_text[96];

static int parse_u64(const char *s, const char *end, uint64_t max, uint64_t *out)
{
    if (s == end || end - s > 20)
        return -1;
    uint64_t v = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9' || v > (max - (uint64_t)(*p - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *out = v;
    return 0;
}

int window_configure(char *err, size_t errlen)
{
    window_size = core_cfg.trace_window ? core_cfg.trace_window : TRACE_WINDOW_DEFAULT;
    summary = core_cfg.trace_summary;
    full_set = 0;
    /* The level from the environment: the policy file is hashed into the
     * root, so a run traced at both levels under one policy needs this. */
    const char *l = core_getenv("DETSHIM_TRACE_LEVEL");
    if (l && *l) {
        if (strcmp(l, "full") != 0 && strcmp(l, "summary") != 0) {
            snprintf(err, errlen, "DETSHIM_TRACE_LEVEL=%.80s: expected full or summary", l);
            return -1;
        }
        summary = l[0] == 's';
    }
    const char *v = core_getenv("DETSHIM_TRACE_FULL_WINDOW");
    if (v && *v) {
        const char *colon = strchr(v, ':'), *end = v + strlen(v);
        uint64_t s = 0;
        if ((colon && parse_u64(v, colon, UINT32_MAX, &s) != 0) ||
            parse_u64(colon ? colon + 1 : v, end, UINT64_MAX, &full_index) != 0) {
            snprintf(err, errlen, "DETSHIM_TRACE_FULL_WINDOW=%.80s is not a window: expected K "
                     "or S:K (window K of every stream, or of stream S), as detdiff names it",
                     v);
            return -1;
        }
        full_set = 1;
        full_any_stream = !colon;
        full_stream = (uint32_t)s;
        summary = 1; /* full records in that window only */
    }
    snprintf(size_text, sizeof size_text, "%llu", (unsigned long long)window_size);
    if (!full_set)
        snprintf(level_text, sizeof level_text, "%s", summary ? "summary" : "full");
    else if (full_any_stream)
        snprintf(level_text, sizeof level_text, "summary, full in window %llu",
                 (unsigned long long)full_index);
    else
        snprintf(level_text, sizeof level_text, "summary, full in window %u:%llu", full_stream,
                 (unsigned long long)full_index);
    return 0;
}

const char *window_size_text(void)
{
    return size_text[0] ? size_text : "4096";
}

const char *window_level_text(void)
{
    return level_text[0] ? level_text : "full";
}

int window_start(struct thread_buf *tb)
{
    chain_stream_start(tb->win.stream_head);
    tb->win.in_window = 0;
    return chain_window_begin(&tb->win.chain);
}

void window_free(struct thread_buf *tb)
{
    chain_window_free(&tb->win.chain);
}

/* Whether window k of tb is written record by record. The identity and
 * real-entropy streams always are: they are few records, and the files
 * and code they name are what a verdict quotes. */
static int window_full(const struct thread_buf *tb, uint64_t k)
{
    if (!summary || (tb->index & (TRACE_THREAD_IDENTITY | TRACE_THREAD_REAL)))
        return 1;
    return full_set && k == full_index && (full_any_stream || tb->index == full_stream);
}

int window_keeps_record(const struct thread_buf *tb)
{
    return window_full(tb, tb->seq / window_size);
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Closes the open window (in_window records, ending at tb->seq), folds
 * its digest into the stream head and starts the next. Returns 1 with
 * frame filled when it was a summarized window. */
static int close_window(struct thread_buf *tb, uint8_t frame[TRACE_WINDOW_FRAME_LEN])
{
    uint64_t first = tb->seq - tb->win.in_window;
    int written = !window_full(tb, first / window_size);
    uint8_t digest[32];
    chain_window_end(&tb->win.chain, digest);
    if (written) {
        put_le(frame, first, 8);
        put_le(frame + 8, tb->win.in_window, 4);
        memcpy(frame + 12, digest, 32);
    }
    chain_stream_fold(tb->win.stream_head, digest);
    /* Its OpenSSL state, where one is used, was made by window_start and
     * is reused: begin fails only when it must allocate. */
    chain_window_begin(&tb->win.chain);
    tb->win.in_window = 0;
    return written;
}

int window_after_record(struct thread_buf *tb, const uint8_t *hash, uint32_t hlen,
                        uint8_t frame[TRACE_WINDOW_FRAME_LEN])
{
    chain_window_add(&tb->win.chain, hash, hlen);
    if (++tb->win.in_window < window_size)
        return 0;
    return close_window(tb, frame);
}

int window_finish(struct thread_buf *tb, uint8_t frame[TRACE_WINDOW_FRAME_LEN])
{
    int written = tb->win.in_window ? close_window(tb, frame) : 0;
    memcpy(tb->head, tb->win.stream_head, 32);
    return written;
}
