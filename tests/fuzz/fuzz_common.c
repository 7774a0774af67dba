/* Shared by the harnesses (fuzz_common.h): scratch folder, input files and
 * frame-check repair. The frame walk mirrors shim/trace/reader.c's
 * parse_frames on purpose: it must stop exactly where the reader stops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>

#include "trace/trace.h"
#include "detshim/trace_format.h"
#include "fuzz_common.h"

static char scratch[PATH_MAX];

static void scratch_remove(void)
{
    DIR *d = opendir(scratch);
    if (!d)
        return;
    struct dirent *e;
    char path[PATH_MAX + 256];
    /* Harnesses make at most one level of folders: files, and folders of
     * files (run directories). */
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", scratch, e->d_name);
        if (unlink(path) == 0)
            continue;
        DIR *sub = opendir(path);
        struct dirent *f;
        char inner[PATH_MAX + 512];
        while (sub && (f = readdir(sub))) {
            snprintf(inner, sizeof inner, "%s/%s", path, f->d_name);
            unlink(inner);
        }
        if (sub)
            closedir(sub);
        rmdir(path);
    }
    closedir(d);
    rmdir(scratch);
}

const char *fuzz_scratch(void)
{
    if (scratch[0])
        return scratch;
    const char *base = getenv("DETSHIM_FUZZ_TMP");
    if (!base || !*base)
        base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    mkdir(base, 0700); /* the scripts remove it after a run; EEXIST is fine */
    snprintf(scratch, sizeof scratch, "%s/detshim-fuzz.XXXXXX", base);
    if (!mkdtemp(scratch)) {
        fprintf(stderr, "fuzz: cannot make a scratch folder under %s; set DETSHIM_FUZZ_TMP\n", base);
        abort();
    }
    atexit(scratch_remove);
    return scratch;
}

int fuzz_write(const char *path, const uint8_t *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    size_t done = 0;
    while (fd >= 0 && done < n) {
        ssize_t w = write(fd, data + done, n - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    if (fd < 0 || done != n) {
        perror(path);
        abort();
    }
    close(fd);
    return 0;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint8_t *fuzz_fix_checks(const uint8_t *data, size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    if (!d)
        abort();
    memcpy(d, data, n);
    if (n < TRACE_FILE_HEADER_LEN)
        return d;
    size_t off = TRACE_FILE_HEADER_LEN + (size_t)le32(d + 12);
    if (le32(d + 12) > TRACE_MAX_HEADER || off > n)
        return d;
    while (n - off >= TRACE_FRAME_HEADER_LEN) {
        uint8_t *h = d + off;
        uint32_t len = le32(h), thread = le32(h + 8);
        uint16_t type = (uint16_t)(h[4] | h[5] << 8);
        if (len > TRACE_MAX_FRAME || n - off - TRACE_FRAME_HEADER_LEN < len)
            break;
        if (!(h[7] & 0x80)) {
            uint32_t c = trace_frame_check(h + TRACE_FRAME_HEADER_LEN, len, type, thread);
            for (int i = 0; i < 4; i++)
                h[12 + i] = (uint8_t)(c >> (8 * i));
        }
        off += TRACE_FRAME_HEADER_LEN + len;
    }
    return d;
}

const char *fuzz_exe_dir(void)
{
    static char dir[PATH_MAX];
    if (dir[0])
        return dir;
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0)
        return NULL;
    dir[n] = 0;
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    return dir;
}
