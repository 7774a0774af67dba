/* /dev/urandom and /dev/random, however a program opens and reads them:
 * the libc interposers (shim/libc/files.c, reads.c) tell this module about
 * every open and close, and ask it, for each read, whether the descriptor
 * or stream is the random device and whether to serve the derived stream.
 * Descriptors are tracked in a bitmap, so every other read costs one bit
 * test. Before serving, the descriptor is checked to still be the random
 * device: a program that dup2()s another file onto a marked number must
 * read its own file, never ours.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/core.h"
#include "rng/rng.h"

#define MAX_TRACKED_FD 65536
#define MAX_TRACKED_FILES 64

/* Two bits per descriptor: marked urandom, marked random. */
static _Atomic uint64_t fd_urandom[MAX_TRACKED_FD / 64], fd_random[MAX_TRACKED_FD / 64];
static FILE *_Atomic tracked_files[MAX_TRACKED_FILES];

static int source_of_path(const char *path)
{
    if (!path || path[0] != '/' || path[1] != 'd')
        return -1; /* the common case, decided in two compares */
    if (strcmp(path, "/dev/urandom") == 0)
        return RNG_DEV_URANDOM;
    if (strcmp(path, "/dev/random") == 0)
        return RNG_DEV_RANDOM;
    return -1;
}

static void mark_fd(int fd, int source)
{
    if (fd < 0 || fd >= MAX_TRACKED_FD || source < 0)
        return;
    _Atomic uint64_t *set = source == RNG_DEV_URANDOM ? fd_urandom : fd_random;
    atomic_fetch_or(&set[fd / 64], 1ull << (fd % 64));
}

static int fd_source(int fd);

static void unmark_fd(int fd)
{
    if (fd_source(fd) < 0)
        return; /* the common case: a plain load, no atomic write */
    atomic_fetch_and(&fd_urandom[fd / 64], ~(1ull << (fd % 64)));
    atomic_fetch_and(&fd_random[fd / 64], ~(1ull << (fd % 64)));
}

/* The source a descriptor was opened as, or -1. */
static int fd_source(int fd)
{
    if (fd < 0 || fd >= MAX_TRACKED_FD)
        return -1;
    uint64_t bit = 1ull << (fd % 64);
    if (atomic_load_explicit(&fd_urandom[fd / 64], memory_order_relaxed) & bit)
        return RNG_DEV_URANDOM;
    if (atomic_load_explicit(&fd_random[fd / 64], memory_order_relaxed) & bit)
        return RNG_DEV_RANDOM;
    return -1;
}

/* Still the kernel's random device (char 1:8 or 1:9)? */
static int fd_is_random_device(int fd)
{
    struct stat sb;
    return fstat(fd, &sb) == 0 && S_ISCHR(sb.st_mode) && major(sb.st_rdev) == 1 &&
           (minor(sb.st_rdev) == 8 || minor(sb.st_rdev) == 9);
}

static void track_file(FILE *f, int source)
{
    if (!f || source < 0)
        return;
    mark_fd(fileno(f), source);
    for (int i = 0; i < MAX_TRACKED_FILES; i++) {
        FILE *empty = NULL;
        if (atomic_compare_exchange_strong(&tracked_files[i], &empty, f))
            return;
    }
}

static int file_source(FILE *f)
{
    for (int i = 0; i < MAX_TRACKED_FILES; i++)
        if (atomic_load_explicit(&tracked_files[i], memory_order_relaxed) == f)
            return fd_source(fileno(f));
    return -1;
}

static void untrack_file(FILE *f)
{
    for (int i = 0; i < MAX_TRACKED_FILES; i++) {
        FILE *want = f;
        atomic_compare_exchange_strong(&tracked_files[i], &want, NULL);
    }
}

int rng_dev_serve(const char *api, int fd, int source, void *buf, size_t len, const void *caller,
                  enum rng_action *act)
{
    *act = rng_decide(caller);
    if (*act != RNG_PINNED || !fd_is_random_device(fd))
        return 0;
    if (rng_fill(source, buf, len) != 0)
        return 0;
    rng_record(api, source, RNG_PINNED, buf, len);
    return 1;
}

void rng_dev_opened(int fd, const char *path)
{
    mark_fd(fd, source_of_path(path));
}

void rng_dev_fopened(FILE *f, const char *path)
{
    track_file(f, source_of_path(path));
}

void rng_dev_closing(int fd)
{
    unmark_fd(fd);
}

void rng_dev_fclosing(FILE *f)
{
    if (f && file_source(f) >= 0) {
        unmark_fd(fileno(f));
        untrack_file(f);
    }
}

int rng_dev_fd_source(int fd)
{
    return fd_source(fd);
}

int rng_dev_file_source(FILE *f)
{
    return f ? file_source(f) : -1;
}
