/* The trace directory (DETSHIM_TRACE), opened once at start-up and kept:
 * trace files are created under its descriptor, never by path, so a path
 * re-pointed during the run (a symlink swapped, a parent renamed) cannot
 * send a trace elsewhere. The directory must be the user's own and not
 * writable by anyone else: the header holds the command line, and in a
 * shared directory another user could plant or replace a trace file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "trace/trace_internal.h"

static int dir_fd = -1;
static dev_t dir_dev;
static ino_t dir_ino;

/* The shim's own descriptors (the directory's, its trace files') never
 * take 0, 1 or 2: a program started with one of them closed (joblib's
 * loky workers, daemons) would find its stdin or stdout to be the trace
 * directory (Python stops: "<stdin> is a directory") or write its output
 * into the trace. They start at OWN_FD_FLOOR where the descriptor limit
 * allows, above the low numbers shells and programs dup2 onto (`exec
 * 3>log`), else at 3. Returns the new descriptor (fd closed), fd itself
 * when it is already above 2 and cannot move, or -1 with errno set (fd
 * closed) when one of 0-2 cannot move. */
enum { OWN_FD_FLOOR = 100 };
static int own_fd(int fd)
{
    if (fd < 0)
        return fd;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, OWN_FD_FLOOR);
    if (moved < 0 && fd <= STDERR_FILENO)
        moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    if (moved < 0 && fd > STDERR_FILENO)
        return fd;
    int e = errno;
    close(fd);
    errno = e;
    return moved;
}

int trace_dir_open(const char *path, char *err, size_t errlen)
{
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
        snprintf(err, errlen, "DETSHIM_TRACE=%s is a symbolic link, which could be re-pointed "
                 "during the run; point DETSHIM_TRACE at the directory itself", path);
        return -1;
    }
    int fd = own_fd(open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd < 0 || fstat(fd, &sb) != 0) {
        snprintf(err, errlen, "DETSHIM_TRACE=%s: cannot open that directory (%s); choose a "
                 "writable directory", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (sb.st_uid != geteuid()) {
        snprintf(err, errlen, "DETSHIM_TRACE=%s belongs to uid %u, not to this user (uid %u), "
                 "who could replace the trace; use a directory of your own", path,
                 (unsigned)sb.st_uid, (unsigned)geteuid());
    } else if (sb.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(err, errlen, "DETSHIM_TRACE=%s is writable by %s (mode %04o); run chmod go-w "
                 "on it, or give a new path (the shim creates it 0700)", path,
                 sb.st_mode & S_IWOTH ? "others" : "its group", (unsigned)(sb.st_mode & 07777));
    } else if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) != 0) {
        snprintf(err, errlen, "DETSHIM_TRACE=%s: cannot create or write that directory (%s); "
                 "choose a writable directory", path, strerror(errno));
    } else {
        dir_fd = fd;
        dir_dev = sb.st_dev;
        dir_ino = sb.st_ino;
        return 0;
    }
    close(fd);
    return -1;
}

/* The kept descriptor, reopened (by path, and only if it is still the
 * same directory) when the program closed it or reused its number.
 * Returns -1 with errno set when neither is the directory opened first. */
static int dir_current(void)
{
    struct stat sb;
    if (dir_fd >= 0 && fstat(dir_fd, &sb) == 0 && sb.st_dev == dir_dev && sb.st_ino == dir_ino)
        return dir_fd;
    int fd = own_fd(open(core_cfg.trace_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd >= 0 && fstat(fd, &sb) == 0 && sb.st_dev == dir_dev && sb.st_ino == dir_ino)
        return dir_fd = fd;
    if (fd >= 0)
        close(fd);
    errno = ESTALE;
    return -1;
}

int trace_write_all(int fd, const void *data, size_t len)
{
    const unsigned char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Creates name with O_EXCL|O_NOFOLLOW and writes head into it. */
/* 0600, or 0640 with [trace] readable_by = group (the umask may take more). */
static mode_t file_mode(void)
{
    return core_cfg.trace_group_readable ? 0640 : 0600;
}

static int create_by_name(int dir, const char *name, const void *head, size_t len)
{
    int fd = own_fd(openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                           file_mode()));
    if (fd >= 0 && trace_write_all(fd, head, len) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int trace_dir_create(const char *name, const void *head, size_t len)
{
    int dir = dir_current();
    if (dir < 0)
        return -1;
    /* Written unnamed, then linked under its name (which never replaces
     * anything, a link included): a process killed meanwhile leaves no
     * empty or half-headed file for detdiff to stumble on. */
    int fd = own_fd(openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, file_mode()));
    if (fd < 0)
        return errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL
                   ? create_by_name(dir, name, head, len)
                   : -1;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    if (trace_write_all(fd, head, len) == 0 &&
        linkat(AT_FDCWD, self, dir, name, AT_SYMLINK_FOLLOW) == 0)
        return fd;
    int e = errno;
    close(fd);
    errno = e;
    /* Without /proc the unnamed file cannot be linked: by name, then. */
    return e == ENOENT ? create_by_name(dir, name, head, len) : -1;
}

DIR *trace_dir_list(void)
{
    int dir = dir_current();
    int fd = dir < 0 ? -1 : openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d && fd >= 0)
        close(fd);
    return d;
}
