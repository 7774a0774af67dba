/* Compressed traces, for the reader: a process file whose header says its
 * records are compressed (TRACE_FIELD_COMPRESSION, shim/trace/compress.c)
 * is expanded once, before the scan, into an unnamed temporary file under
 * TMPDIR (else /tmp): the header and every plain frame copied, every ZSTD
 * frame replaced by the frames it holds. The scan and every cursor then
 * read that file, so byte offsets and sizes the reader reports for such a
 * trace are those of the expanded stream. Expansion stops at the first
 * frame that is cut short, fails its check or does not expand, and copies
 * the rest as it is: the scan then reports the damage there, as it would
 * in an uncompressed file. The temporary file has no name, so nothing is
 * left behind when the reader ends, however it ends. A hostile file can
 * claim 1 MiB of content for a few bytes of frame, so the expansion also
 * stops, with one line, before it would leave less than 5% of TMPDIR's
 * file system (and at least 256 MiB) free.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "detshim/trace_format.h"
#include "reader_internal.h"
#include "trace/trace.h"
#include "trace/zstd_lib.h"

struct out {
    int fd;
    unsigned char *buf;
    size_t len;
    uint64_t total;
    int error; /* errno of a failed write */
    int reserve; /* stopped to keep the file system's reserve free */
    uint64_t checked; /* total when the free space was last looked at */
};

#define EXPAND_CHECK_EVERY ((uint64_t)64 << 20)
#define EXPAND_RESERVE_MIN ((uint64_t)256 << 20)

/* 1 if writing `more` bytes would leave the file system under o->fd with
 * less than its reserve free. */
static int past_reserve(const struct out *o, uint64_t more)
{
    struct statvfs sv;
    if (fstatvfs(o->fd, &sv) != 0)
        return 0; /* cannot tell: the write itself will say */
    uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;
    uint64_t reserve = (uint64_t)sv.f_blocks * sv.f_frsize / 20;
    if (reserve < EXPAND_RESERVE_MIN)
        reserve = EXPAND_RESERVE_MIN;
    return avail < reserve + more;
}

static void out_flush(struct out *o)
{
    if (!o->error && o->total - o->checked >= EXPAND_CHECK_EVERY) {
        o->checked = o->total;
        if (past_reserve(o, EXPAND_CHECK_EVERY))
            o->error = o->reserve = ENOSPC;
    }
    size_t done = 0;
    while (!o->error && done < o->len) {
        ssize_t w = write(o->fd, o->buf + done, o->len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            o->error = w < 0 ? errno : ENOSPC;
        else
            done += (size_t)w;
    }
    o->len = 0;
}

static void out_put(struct out *o, const void *p, size_t n)
{
    if (o->len + n > READER_WINDOW)
        out_flush(o);
    if (n > READER_WINDOW) { /* never: no frame is this large */
        o->error = o->error ? o->error : EFBIG;
        return;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    o->total += n;
}

/* Copies [off, end) of src as it is. */
static void copy_rest(struct reader_src *src, uint64_t off, uint64_t end, struct out *o)
{
    while (off < end && !o->error) {
        size_t n = end - off > READER_WINDOW ? READER_WINDOW : (size_t)(end - off);
        const unsigned char *p = reader_src_at(src, off, n);
        if (!p) {
            o->error = errno ? errno : EIO;
            return;
        }
        out_put(o, p, n);
        off += n;
    }
}

static int temp_file(const char **dir)
{
    const char *d = getenv("TMPDIR");
    *dir = d && *d ? d : "/tmp";
    int fd = open(*dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
        return fd;
    char path[4096];
    snprintf(path, sizeof path, "%s/detshim-expand-XXXXXX", *dir);
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
        unlink(path);
    return fd;
}

int reader_expand(struct proc_private *pp, struct reader_src *src, char *err, size_t errlen)
{
    const char *path = pp->pub.path, *dir;
    char why[200];
    if (zstd_load(why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: its records are compressed (zstd) and %s", path, why);
        return DETSHIM_ERR_IO;
    }
    struct out o = { .fd = temp_file(&dir), .buf = malloc(READER_WINDOW) };
    unsigned char *content = malloc(TRACE_MAX_ZSTD_CONTENT);
    if (o.fd < 0 || !o.buf || !content) {
        int e = o.fd < 0 ? errno : ENOMEM;
        snprintf(err, errlen, "%s: cannot expand its compressed records into %s: %s; point "
                 "TMPDIR at a writable directory with room for them", path, dir, strerror(e));
        if (o.fd >= 0)
            close(o.fd);
        free(o.buf);
        free(content);
        return e == ENOMEM ? DETSHIM_ERR_NOMEM : DETSHIM_ERR_IO;
    }
    uint64_t off = pp->body, end = src->limit;
    copy_rest(src, 0, off, &o); /* the file header */
    while (off < end && !o.error) {
        const unsigned char *h = reader_src_at(src, off, TRACE_FRAME_HEADER_LEN);
        if (!h)
            break;
        uint32_t flen = (uint32_t)reader_le(h, 4), thread = (uint32_t)reader_le(h + 8, 4);
        uint16_t type = (uint16_t)reader_le(h + 4, 2);
        uint32_t check = (uint32_t)reader_le(h + 12, 4);
        uint32_t max = type == TRACE_FRAME_ZSTD ? TRACE_MAX_ZSTD_CONTENT - TRACE_FRAME_HEADER_LEN
                                                : TRACE_MAX_FRAME;
        if (flen > max || end - off - TRACE_FRAME_HEADER_LEN < flen)
            break;
        const unsigned char *f = reader_src_at(src, off, TRACE_FRAME_HEADER_LEN + flen);
        if (!f)
            break;
        if (type != TRACE_FRAME_ZSTD) {
            out_put(&o, f, TRACE_FRAME_HEADER_LEN + flen);
            off += TRACE_FRAME_HEADER_LEN + flen;
            continue;
        }
        const unsigned char *payload = f + TRACE_FRAME_HEADER_LEN;
        uint8_t hash[16];
        trace_frame_hash(payload, flen, hash);
        int64_t size = zstd_content_size(payload, flen);
        if (check != trace_frame_check_of(hash, type, thread) || size < 0 ||
            size > TRACE_MAX_ZSTD_CONTENT ||
            zstd_decompress(content, TRACE_MAX_ZSTD_CONTENT, payload, flen) != size)
            break; /* copied as it is below: the scan names it */
        out_put(&o, content, (size_t)size);
        off += TRACE_FRAME_HEADER_LEN + flen;
    }
    copy_rest(src, off, end, &o);
    out_flush(&o);
    free(o.buf);
    free(content);
    if (o.error) {
        snprintf(err, errlen, "%s: cannot expand its compressed records into %s: %s; point "
                 "TMPDIR at a directory with room for them (%llu bytes or more)", path, dir,
                 o.reserve ? "that would leave less than 5% of its file system free"
                           : strerror(o.error),
                 (unsigned long long)o.total);
        close(o.fd);
        return DETSHIM_ERR_IO;
    }
    pp->expanded_fd = o.fd;
    pp->expanded = 1;
    /* From here the scan reads the expanded bytes. */
    reader_src_close(src);
    src->fd = reader_file_open(pp);
    src->limit = o.total;
    if (src->fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return DETSHIM_ERR_IO;
    }
    return 0;
}

int reader_file_open(const struct proc_private *pp)
{
    if (pp->expanded)
        return fcntl(pp->expanded_fd, F_DUPFD_CLOEXEC, 0);
    return open(pp->pub.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}
