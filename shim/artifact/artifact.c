/* Artifacts (artifact.h): which files a run wrote and read, by name, size
 * and SHA-256, recorded in the trace so the root commits them.
 *
 * Written files are followed by name from open and through renames, and
 * hashed at exit, by path, under their final names: what the run left is
 * its output. Hashing at close would be wrong for programs that dup2 the
 * file onto another descriptor and close the first (dd does), and a
 * checkpoint rewritten every epoch is then hashed once. Records are
 * written at exit, sorted by name; a temporary name never reaches the
 * trace, and a file deleted before exit is no output. Read files are
 * hashed and recorded when first opened. Hashing reads through a new open
 * file description: the program's own offsets and buffers are untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "core/core.h"
#include "trace/digest.h"
#include "trace/trace.h"

#define MAX_TRACKED_FD 65536
#define MAX_WRITTEN 4096 /* remembered written files; the oldest unmatched go first */
#define MAX_INPUTS 65536 /* distinct inputs recorded per process */

struct written {
    char *key;   /* as recorded: relative to the working directory when under it */
    char *abs;   /* absolute, to hash it after a chdir */
    int fd;      /* -1 once closed */
    FILE *fp;    /* the stream over fd, if opened with fopen */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct written *written;
static int nwritten;
static _Atomic uint64_t fd_written[MAX_TRACKED_FD / 64];
static uint64_t *inputs_seen; /* xxh3 of each recorded input's key */
static int ninputs;

void artifact_fork_child(void)
{
    /* The parent's open files and names are the parent's to record. */
    pthread_mutex_init(&lock, NULL);
    for (int i = 0; i < nwritten; i++) {
        free(written[i].key);
        free(written[i].abs);
    }
    nwritten = 0;
    ninputs = 0;
    for (size_t i = 0; i < MAX_TRACKED_FD / 64; i++)
        atomic_store(&fd_written[i], 0);
}

int artifact_glob_match(const char *globs, const char *key)
{
    const char *base = strrchr(key, '/');
    base = base ? base + 1 : key;
    char pat[256];
    size_t n;
    for (const char *p = globs, *s; (s = core_list_next(&p, ",", &n));) {
        if (n && n < sizeof pat) {
            memcpy(pat, s, n);
            pat[n] = 0;
            if (fnmatch(pat, memchr(pat, '/', n) ? key : base, 0) == 0)
                return 1;
        }
    }
    return 0;
}

/* Lexically normalised absolute path of path (relative to dirfd) into
 * abs, and the recorded key into key. Returns 0, or -1 if unknown. */
static int make_names(int dirfd, const char *path, char *abs, char *key)
{
    char cwd[PATH_MAX], raw[2 * PATH_MAX + 2];
    if (!getcwd(cwd, sizeof cwd))
        return -1;
    if (path[0] == '/') {
        snprintf(raw, sizeof raw, "%s", path);
    } else if (dirfd == AT_FDCWD) {
        snprintf(raw, sizeof raw, "%s/%s", cwd, path);
    } else {
        char link[64], dir[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        ssize_t n = readlink(link, dir, sizeof dir - 1);
        if (n <= 0)
            return -1;
        dir[n] = 0;
        snprintf(raw, sizeof raw, "%s/%s", dir, path);
    }
    /* Collapse "//", "/./" and "/x/../" without touching the file system. */
    size_t out = 0;
    for (const char *s = raw; *s;) {
        while (*s == '/')
            s++;
        size_t n = strcspn(s, "/");
        if (n == 0)
            break;
        if (n == 1 && s[0] == '.') {
        } else if (n == 2 && s[0] == '.' && s[1] == '.') {
            while (out > 0 && abs[--out] != '/')
                ;
        } else {
            if (out + 1 + n >= PATH_MAX)
                return -1;
            abs[out++] = '/';
            memcpy(abs + out, s, n);
            out += n;
        }
        s += n;
    }
    if (out == 0)
        abs[out++] = '/';
    abs[out] = 0;
    size_t c = strlen(cwd);
    if (strncmp(abs, cwd, c) == 0 && abs[c] == '/')
        snprintf(key, PATH_MAX, "%s", abs + c + 1);
    else
        snprintf(key, PATH_MAX, "%s", abs);
    return 0;
}

/* SHA-256 and size of what fd_path opens to. Returns 0, or -1. */
static int hash_file(const char *fd_path, uint64_t *size, char hex[65])
{
    int fd = open(fd_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL);
    static _Thread_local uint8_t *buf;
    if (!buf)
        buf = malloc(1 << 20);
    ok = ok && buf;
    uint64_t total = 0;
    for (ssize_t n; ok && (n = read(fd, buf, 1 << 20)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        ok = n > 0 && EVP_DigestUpdate(md, buf, (size_t)n);
        total += n > 0 ? (uint64_t)n : 0;
    }
    uint8_t d[32];
    unsigned int dlen = 0;
    ok = ok && EVP_DigestFinal_ex(md, d, &dlen) && dlen == 32;
    EVP_MD_CTX_free(md);
    close(fd);
    if (!ok)
        return -1;
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    *size = total;
    return 0;
}

static void record(const char *api, const char *key, uint64_t size, const char *sha256)
{
    struct trace_rec r;
    trace_rec_begin(&r, api);
    trace_rec_stream(&r, TRACE_STREAM_IDENTITY);
    trace_rec_str(&r, "path", key);
    trace_rec_int(&r, "size", (int64_t)size);
    trace_rec_str(&r, "sha256", sha256);
    trace_rec_commit(&r);
}

/* Paths no training run's data lives in: the system, the interpreter's
 * own packages, and the kernel's files. */
static int system_path(const char *abs)
{
    static const char *const prefixes[] = { "/usr/", "/lib", "/etc/", "/proc/", "/sys/",
                                            "/dev/", "/opt/conda/pkgs/" };
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(abs, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return strstr(abs, "/site-packages/") || strstr(abs, "/dist-packages/");
}

/* 1 if there is anything to do for this call: tracing on, not re-entered
 * (our own hashing opens files too); takes the guard. */
static int enter(void)
{
    if (guard_held() || !trace_active())
        return 0;
    if (!guard_enter())
        return 0;
    return 1;
}

static void input_opened(int fd, const char *abs, const char *key)
{
    if (system_path(abs) || !artifact_glob_match(core_cfg.inputs, key))
        return;
    uint64_t id = digest_bytes(key, strlen(key)).lo;
    pthread_mutex_lock(&lock);
    int seen = 0;
    for (int i = 0; i < ninputs && !seen; i++)
        seen = inputs_seen[i] == id;
    if (!seen && ninputs < MAX_INPUTS) {
        if (!inputs_seen)
            inputs_seen = malloc(MAX_INPUTS * sizeof *inputs_seen);
        if (inputs_seen)
            inputs_seen[ninputs++] = id;
    }
    pthread_mutex_unlock(&lock);
    if (seen)
        return;
    char fd_path[64], hex[65];
    uint64_t size;
    snprintf(fd_path, sizeof fd_path, "/proc/self/fd/%d", fd);
    if (hash_file(fd_path, &size, hex) == 0)
        record("artifact.read", key, size, hex);
}

/* Caller holds lock. Makes room by forgetting the oldest closed entry
 * that no glob matched; returns its slot, or -1 when all are needed. */
static int new_slot(void)
{
    if (!written && !(written = calloc(MAX_WRITTEN, sizeof *written)))
        return -1;
    for (int i = 0; i < nwritten; i++)
        if (!written[i].abs && written[i].fd < 0)
            return i; /* forgotten by a rename over it */
    if (nwritten < MAX_WRITTEN)
        return nwritten++;
    for (int i = 0; i < nwritten; i++) {
        if (written[i].fd < 0 &&
            (!written[i].key || !artifact_glob_match(core_cfg.artifacts, written[i].key))) {
            free(written[i].key);
            free(written[i].abs);
            memmove(written + i, written + i + 1, (size_t)(nwritten - 1 - i) * sizeof *written);
            return nwritten - 1;
        }
    }
    return -1;
}

static void written_opened(int fd, FILE *fp, const char *abs, const char *key)
{
    if (fd >= MAX_TRACKED_FD || strncmp(abs, "/proc/", 6) == 0 || strncmp(abs, "/dev/", 5) == 0)
        return;
    pthread_mutex_lock(&lock);
    /* Written again (a checkpoint every epoch under one name): one entry,
     * its last contents. */
    int slot = -1;
    for (int i = 0; i < nwritten && slot < 0; i++)
        if (written[i].abs && strcmp(written[i].abs, abs) == 0)
            slot = i;
    if (slot >= 0) {
        free(written[slot].key);
        free(written[slot].abs);
    } else {
        slot = new_slot();
    }
    if (slot >= 0) {
        written[slot] = (struct written){ .key = strdup(key), .abs = strdup(abs), .fd = fd,
                                          .fp = fp };
        atomic_fetch_or(&fd_written[fd / 64], 1ull << (fd % 64));
    }
    pthread_mutex_unlock(&lock);
}

static void opened(int dirfd, const char *path, int flags, int fd, FILE *fp)
{
    int writes = (flags & (O_WRONLY | O_RDWR)) != 0;
    /* A read whose base name no input glob matches is the common case (an
     * interpreter imports hundreds of files): decided before the path is
     * made absolute, when no glob names a folder. */
    if (!writes && !strchr(core_cfg.inputs, '/') && path &&
        !artifact_glob_match(core_cfg.inputs, path))
        return;
    if (!path || !enter())
        return;
    char abs[PATH_MAX], key[PATH_MAX];
    if (make_names(dirfd, path, abs, key) == 0) {
        if (writes)
            written_opened(fd, fp, abs, key);
        else
            input_opened(fd, abs, key);
    }
    guard_leave();
}

void artifact_opened(int dirfd, const char *path, int flags, int fd)
{
    opened(dirfd, path, flags, fd, NULL);
}

void artifact_fopened(const char *path, const char *mode, FILE *f)
{
    int writes = mode && (strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+'));
    opened(AT_FDCWD, path, writes ? O_WRONLY : O_RDONLY, fileno(f), f);
}

void artifact_closing(int fd)
{
    if (fd < 0 || fd >= MAX_TRACKED_FD ||
        !(atomic_load_explicit(&fd_written[fd / 64], memory_order_relaxed) & (1ull << (fd % 64))))
        return; /* the common case: one bit test */
    if (!guard_enter())
        return;
    atomic_fetch_and(&fd_written[fd / 64], ~(1ull << (fd % 64)));
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nwritten; i++) {
        if (written[i].fd == fd) {
            written[i].fd = -1;
            written[i].fp = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
    guard_leave();
}

void artifact_fclosing(FILE *f)
{
    if (!f)
        return;
    int fd = fileno(f);
    if (fd >= 0 && fd < MAX_TRACKED_FD &&
        (atomic_load_explicit(&fd_written[fd / 64], memory_order_relaxed) & (1ull << (fd % 64))))
        fflush(f); /* the bytes still in the stream's buffer are part of the file */
    artifact_closing(fd);
}

/* Caller holds lock: e's name becomes new_key (new_abs) + the rest of it
 * after the old prefix of length old_len. */
static void rename_entry(struct written *e, size_t old_key_len, size_t old_abs_len,
                         const char *new_key, const char *new_abs)
{
    char key[PATH_MAX], abs[PATH_MAX];
    snprintf(key, sizeof key, "%s%s", new_key, e->key + old_key_len);
    snprintf(abs, sizeof abs, "%s%s", new_abs, e->abs + old_abs_len);
    free(e->key);
    free(e->abs);
    e->key = strdup(key);
    e->abs = strdup(abs);
}

void artifact_renamed(int olddir, const char *old, int newdir, const char *new)
{
    if (!old || !new || !enter())
        return;
    char oabs[PATH_MAX], okey[PATH_MAX], nabs[PATH_MAX], nkey[PATH_MAX];
    if (make_names(olddir, old, oabs, okey) != 0 || make_names(newdir, new, nabs, nkey) != 0) {
        guard_leave();
        return;
    }
    size_t ol = strlen(oabs), okl = strlen(okey);
    int found = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nwritten; i++) {
        struct written *e = &written[i];
        if (!e->key || !e->abs)
            continue;
        if (strcmp(e->abs, nabs) == 0 && strcmp(e->abs, oabs) != 0) {
            /* Replaced by the renamed file: forgotten, its slot free. */
            free(e->key);
            free(e->abs);
            e->key = e->abs = NULL;
            continue;
        }
        if (strncmp(e->abs, oabs, ol) == 0 && (e->abs[ol] == 0 || e->abs[ol] == '/')) {
            rename_entry(e, okl, ol, nkey, nabs);
            found = 1;
        }
    }
    /* A file this process did not write (a child did) renamed into place. */
    struct stat sb;
    if (!found && artifact_glob_match(core_cfg.artifacts, nkey) && stat(nabs, &sb) == 0 &&
        S_ISREG(sb.st_mode)) {
        int slot = new_slot();
        if (slot >= 0)
            written[slot] = (struct written){ .key = strdup(nkey), .abs = strdup(nabs), .fd = -1 };
    }
    pthread_mutex_unlock(&lock);
    guard_leave();
}

static int by_key(const void *a, const void *b)
{
    const struct written *x = a, *y = b;
    return strcmp(x->key ? x->key : "", y->key ? y->key : "");
}

void artifact_at_exit(void)
{
    if (!trace_active() || pthread_mutex_trylock(&lock) != 0)
        return; /* a signal handler exiting while this thread hashes: nothing to add */
    int owned = guard_enter();
    if (nwritten > 1) /* qsort(NULL, 0, ...) is undefined (UBSan: make sanitize) */
        qsort(written, (size_t)nwritten, sizeof *written, by_key);
    for (int i = 0; i < nwritten; i++) {
        const struct written *e = &written[i];
        if (!e->key || !e->abs || !artifact_glob_match(core_cfg.artifacts, e->key))
            continue;
        /* exit flushes streams only after the destructors: flush first */
        if (e->fp)
            fflush(e->fp);
        uint64_t size;
        char hex[65];
        if (hash_file(e->abs, &size, hex) == 0) /* gone before exit: no output */
            record("artifact.write", e->key, size, hex);
    }
    if (owned)
        guard_leave();
    pthread_mutex_unlock(&lock);
}
