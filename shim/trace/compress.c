/* Compressed traces ([trace] compress = zstd, or DETSHIM_TRACE_COMPRESS=
 * zstd|off for one run): each buffer of frames a stream writes out goes to
 * the file as one ZSTD frame holding a zstd frame of those bytes, made by
 * the writing thread at level 1. The records, their hashes and every root
 * are those of the uncompressed trace: only the file's bytes change, and
 * the reader expands ZSTD frames before it reads any record
 * (reader_expand.c). A buffer that would not shrink, any write at exit
 * (it may run inside a signal handler, where zstd's allocations could
 * deadlock), and a stream whose thread cannot get memory for it are
 * written as they are; files mix both kinds of frame freely.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "detshim/trace_format.h"
#include "trace/trace.h"
#include "trace/trace_internal.h"
#include "trace/zstd_lib.h"

static int compress_on;

int compress_configure(char *err, size_t errlen)
{
    compress_on = core_cfg.trace_compress;
    const char *v = core_getenv("DETSHIM_TRACE_COMPRESS");
    if (v && *v) {
        if (strcmp(v, "zstd") != 0 && strcmp(v, "off") != 0) {
            snprintf(err, errlen, "DETSHIM_TRACE_COMPRESS=%.80s: expected zstd or off", v);
            return -1;
        }
        compress_on = v[0] == 'z';
    }
    char why[200];
    if (compress_on && zstd_load(why, sizeof why) != 0) {
        compress_on = 0;
        snprintf(err, errlen, "[trace] compress = zstd: %s; or trace uncompressed "
                 "(DETSHIM_TRACE_COMPRESS=off)", why);
        return -1;
    }
    return 0;
}

const char *compress_header_text(void)
{
    return compress_on ? "zstd" : NULL;
}

/* This thread's output buffer, as large as the largest buffer of frames it
 * has compressed (64 KiB, or 1 MiB for a busy stream): only a frame
 * smaller than the bytes it holds is written, so zstd is given no more
 * room than that and fails (the bytes go out plain) past it. Made on the
 * first compressed write, freed with the thread. */
struct out {
    size_t cap;
    uint8_t bytes[];
};
static pthread_key_t out_key;
static pthread_once_t out_once = PTHREAD_ONCE_INIT;
static int out_ok;

static void make_out_key(void)
{
    out_ok = pthread_key_create(&out_key, free) == 0;
}

static struct out *out_buffer(size_t len)
{
    pthread_once(&out_once, make_out_key);
    if (!out_ok)
        return NULL;
    struct out *o = pthread_getspecific(out_key);
    if (o && o->cap >= len)
        return o;
    /* A new one (what the old one held is not needed); the old one stays
     * this thread's until the new one is. */
    struct out *bigger = malloc(sizeof *o + len);
    if (!bigger || pthread_setspecific(out_key, bigger) != 0) {
        free(bigger);
        return NULL;
    }
    free(o);
    bigger->cap = len;
    return bigger;
}

int compress_write(const uint8_t *frames, size_t len)
{
    struct out *o = NULL;
    size_t n = 0;
    if (compress_on && len > TRACE_FRAME_HEADER_LEN && len <= TRACE_MAX_ZSTD_CONTENT &&
        !atomic_load(&trace_proc.closing) && (o = out_buffer(len)) != NULL)
        n = zstd_compress(o->bytes + TRACE_FRAME_HEADER_LEN, len - TRACE_FRAME_HEADER_LEN - 1,
                          frames, len, 1);
    if (!n || TRACE_FRAME_HEADER_LEN + n >= len)
        return trace_file_write(frames, len);
    trace_frame_header(o->bytes, TRACE_FRAME_ZSTD, 0, o->bytes + TRACE_FRAME_HEADER_LEN,
                       (uint32_t)n);
    return trace_file_write(o->bytes, TRACE_FRAME_HEADER_LEN + n);
}
