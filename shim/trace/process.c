/* The process side of tracing: the trace file of this process, named after
 * its lineage (lineage.h), created in the trace directory (dir.c) on the
 * first write, so a program that calls nothing we intercept leaves no file;
 * fork handling; closing the trace at exit; and stopping early without
 * taking the program down (a full disk), saying so in the file itself.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "trace/chain.h"
#include "core/core.h"
#include "core/env.h"
#include "core/lineage.h"
#include "trace/trace.h"
#include "trace/trace_internal.h"

struct trace_process trace_proc = { .fd = -1, .next_index = 1, .lock = PTHREAD_MUTEX_INITIALIZER };
_Thread_local int trace_in_vfork_child __attribute__((tls_model("initial-exec")));

/* The compared header fields as written, kept for the process root. */
static uint8_t header_buf[TRACE_MAX_HEADER];
static size_t header_len;
static struct chain_field header_fields[16];
static int header_nfields;

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The first process of a run refuses a directory that already holds a
 * trace (of its rank, if it has one): mixing two runs' files would make
 * detdiff compare the wrong things. */
static int check_fresh_dir(const char *rank, char *err, size_t errlen)
{
    DIR *d = trace_dir_list();
    if (!d) {
        snprintf(err, errlen, "DETSHIM_TRACE=%s: cannot list: %s", core_cfg.trace_dir,
                 strerror(errno));
        return -1;
    }
    char prefix[64];
    snprintf(prefix, sizeof prefix, "rank%s.", rank);
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d))) {
        if (!has_suffix(e->d_name, TRACE_FILE_SUFFIX))
            continue;
        found = !*rank || strncmp(e->d_name, prefix, strlen(prefix)) == 0;
        if (found)
            snprintf(err, errlen,
                     "DETSHIM_TRACE=%s already holds a trace (%s) from an earlier run; "
                     "use a new directory or remove that one",
                     core_cfg.trace_dir, e->d_name);
    }
    closedir(d);
    return found ? -1 : 0;
}

static void add_field(uint16_t key, uint16_t flags, const char *value)
{
    size_t len = strlen(value);
    if (header_len + 8 + len > sizeof header_buf)
        return;
    uint8_t *p = header_buf + header_len;
    p[0] = (uint8_t)key;
    p[1] = (uint8_t)(key >> 8);
    p[2] = (uint8_t)flags;
    p[3] = (uint8_t)(flags >> 8);
    for (int i = 0; i < 4; i++)
        p[4 + i] = (uint8_t)(len >> (8 * i));
    memcpy(p + 8, value, len);
    if (!(flags & TRACE_FIELD_INFO)) {
        header_fields[header_nfields].key = key;
        header_fields[header_nfields].len = (uint32_t)len;
        header_fields[header_nfields].value = p + 8;
        header_nfields++;
    }
    header_len += 8 + len;
}

static void read_cmdline(char *out, size_t cap)
{
    out[0] = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, out, cap - 1);
    close(fd);
    if (n <= 0)
        return;
    for (ssize_t i = 0; i < n - 1; i++)
        if (!out[i])
            out[i] = ' ';
    out[n] = 0;
}

/* The pinned environment: values compared, who won informational, so a
 * user's value the policy overrode never makes two runs differ. */
static void add_settings(void)
{
    static char values[32768], origins[32768];
    size_t nv = 0, no = 0;
    for (int i = 0; i < env_count(); i++) {
        const struct env_setting *s = env_get(i);
        char origin[700];
        int n = snprintf(values + nv, sizeof values - nv, "%s=%s\n", s->name,
                         s->is_hook ? "(detshim hook)" : s->value);
        if (n > 0 && (size_t)n < sizeof values - nv)
            nv += (size_t)n;
        n = snprintf(origins + no, sizeof origins - no, "%s: %s\n", s->name,
                     env_origin_text(s, origin, sizeof origin));
        if (n > 0 && (size_t)n < sizeof origins - no)
            no += (size_t)n;
    }
    values[nv] = 0;
    origins[no] = 0;
    add_field(TRACE_FIELD_SETTINGS, 0, values);
    add_field(TRACE_FIELD_SETTINGS_ORIGIN, TRACE_FIELD_INFO, origins);
}

static void build_header(void)
{
    char exe[PATH_MAX] = "", text[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    header_len = 0;
    header_nfields = 0;
    add_field(TRACE_FIELD_DIGEST_ALGS, 0, TRACE_DIGEST_ALGS);
    add_field(TRACE_FIELD_PROGRAM, 0, basename(exe));
    add_field(TRACE_FIELD_PROCESS, 0, lineage_name());
    add_field(TRACE_FIELD_POLICY_NAME, 0, core_cfg.policy_name);
    add_field(TRACE_FIELD_POLICY_DIGEST, 0, core_cfg.policy_digest);
    add_field(TRACE_FIELD_SHIM_VERSION, 0, DETSHIM_VERSION);
    if (core_cfg.blas_mode == BLAS_MODE_CANONICAL)
        add_field(TRACE_FIELD_CANONICAL_ORDERS, 0, TRACE_CANONICAL_ORDERS);
    snprintf(text, sizeof text, "%llu", core_cfg.seed);
    add_field(TRACE_FIELD_SEED, 0, text);
    add_settings();
    if (core_cfg.entropy_rule_text[0])
        add_field(TRACE_FIELD_ENTROPY_RULE, 0, core_cfg.entropy_rule_text);
    read_cmdline(text, sizeof text);
    add_field(TRACE_FIELD_ARGS, TRACE_FIELD_INFO, text);
    snprintf(text, sizeof text, "%ld", (long)getpid());
    add_field(TRACE_FIELD_PID, TRACE_FIELD_INFO, text);
    if (gethostname(text, 256) != 0)
        text[0] = 0;
    text[255] = 0;
    add_field(TRACE_FIELD_HOST, TRACE_FIELD_INFO, text);
    snprintf(text, sizeof text, "%lld", (long long)time(NULL));
    add_field(TRACE_FIELD_START_TIME, TRACE_FIELD_INFO, text);
    add_field(TRACE_FIELD_DEVICE_DIGEST, TRACE_FIELD_INFO, TRACE_DEVICE_DIGEST);
    add_field(TRACE_FIELD_INTERPOSITION, TRACE_FIELD_INFO,
              resolve_audit_active() ? TRACE_INTERPOSITION_AUDIT TRACE_INTERPOSITION_VENDOR
                                     : TRACE_INTERPOSITION_PRELOAD TRACE_INTERPOSITION_VENDOR);
    core_machine_describe(text, sizeof text);
    add_field(TRACE_FIELD_CPU, TRACE_FIELD_INFO, text);
    /* Hook (window.c): the window size the roots are over (compared), and
     * the level, which never changes a root (informational). */
    add_field(TRACE_FIELD_WINDOW, 0, window_size_text());
    add_field(TRACE_FIELD_LEVEL, TRACE_FIELD_INFO, window_level_text());
    const char *zstd = compress_header_text(); /* hook (compress.c) */
    if (zstd)
        add_field(TRACE_FIELD_COMPRESSION, TRACE_FIELD_INFO, zstd);
    const char *py = pysite_header(text, sizeof text);
    if (py)
        add_field(TRACE_FIELD_PYTHON_SITES, TRACE_FIELD_INFO, py);
}

/* The file's identity, so a descriptor the program closed (and perhaps
 * reused for a file of its own) is never written to. Written before
 * trace_proc.fd is published (release), read after it is seen (acquire). */
static dev_t trace_dev;
static ino_t trace_ino;
static off_t spare_off;        /* where the SPARE frame lies */
static atomic_int stopped;     /* tracing stopped early: later writes are dropped */
static atomic_int marked;      /* the INCOMPLETE frame is written (or was tried) */
static atomic_int lock_owner;  /* tid holding trace_proc.lock, 0 if none */
static atomic_int closer;      /* tid that closed the trace at exit, 0 if none */
static atomic_int closed_by_exec;

static int fd_is_ours(int fd)
{
    struct stat sb;
    return fd >= 0 && fstat(fd, &sb) == 0 && sb.st_dev == trace_dev && sb.st_ino == trace_ino;
}

static int self_tid(void)
{
    return (int)syscall(SYS_gettid);
}

int trace_proc_lock(void)
{
    int me = self_tid();
    if (!atomic_load(&trace_proc.closing)) {
        pthread_mutex_lock(&trace_proc.lock);
    } else {
        /* At exit the holder may be this thread, interrupted by the signal
         * whose handler is exiting: it will never let go. */
        if (atomic_load(&lock_owner) == me)
            return -1;
        struct timespec pause = { 0, 1000000 };
        int tries = 0;
        while (pthread_mutex_trylock(&trace_proc.lock) != 0) {
            if (++tries == TRACE_EXIT_WAIT_MS)
                return -1;
            nanosleep(&pause, NULL);
        }
    }
    atomic_store(&lock_owner, me);
    return 0;
}

void trace_proc_unlock(void)
{
    atomic_store(&lock_owner, 0);
    pthread_mutex_unlock(&trace_proc.lock);
}

static void write_incomplete_frame(int fd, const char *why)
{
    uint8_t frame[TRACE_FRAME_HEADER_LEN + TRACE_SPARE_LEN] = { 0 };
    uint8_t *payload = frame + TRACE_FRAME_HEADER_LEN;
    size_t n = strlen(why);
    if (n > TRACE_SPARE_LEN - 1)
        n = TRACE_SPARE_LEN - 1;
    payload[0] = (uint8_t)n;
    memcpy(payload + 1, why, n);
    trace_frame_header(frame, TRACE_FRAME_INCOMPLETE, 0, payload, TRACE_SPARE_LEN);
    /* Over bytes already on disk: this needs no new space. */
    ssize_t w = pwrite(fd, frame, sizeof frame, spare_off);
    (void)w;
}

/* Set once the INCOMPLETE frame is in the file. */
static _Atomic int mark_written;

void trace_incomplete(const char *why)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&marked, &expected, 1)) {
        /* Another thread is writing the mark. Its caller's call goes on
         * untraced only once the mark is in the file: were that thread
         * ended first (the process exiting), a trace missing those calls
         * would read as complete. Waited for at most TRACE_EXIT_WAIT_MS:
         * the writer may be this thread, interrupted by a signal. */
        struct timespec pause = { 0, 1000000 };
        for (int i = 0; i < TRACE_EXIT_WAIT_MS && !atomic_load(&mark_written); i++)
            nanosleep(&pause, NULL);
        return;
    }
    int fd = atomic_load_explicit(&trace_proc.fd, memory_order_acquire);
    if (fd_is_ours(fd))
        write_incomplete_frame(fd, why);
    atomic_store(&mark_written, 1);
    core_log(DS_LOG_QUIET, "the trace of process %s in %s is incomplete: %s", lineage_name(),
             core_cfg.trace_dir, why);
}

/* Stops tracing for good after a write failed; the program goes on. */
static void stop_tracing(const char *why)
{
    atomic_store(&stopped, 1);
    atomic_store(&trace_proc.on, 0);
    trace_incomplete(why);
}

void trace_late_record(void)
{
    if (atomic_load(&closed_by_exec))
        trace_incomplete("a call was made after a failed exec; it and later ones are not in "
                         "the trace");
    else if (atomic_load(&closer) != self_tid())
        trace_incomplete("a thread still made calls after the trace closed at exit; those "
                         "calls are not in the trace");
}

/* The file header and the SPARE frame, for lineage_name() as it is now;
 * sets spare_off. Returns the length, in a static buffer at *out. */
static size_t file_start(const uint8_t **out)
{
    static uint8_t start[TRACE_FILE_HEADER_LEN + TRACE_MAX_HEADER + TRACE_FRAME_HEADER_LEN +
                         TRACE_SPARE_LEN];
    build_header();
    memcpy(start, TRACE_MAGIC, TRACE_MAGIC_LEN);
    for (int i = 0; i < 4; i++) {
        start[8 + i] = (uint8_t)(TRACE_VERSION >> (8 * i));
        start[12 + i] = (uint8_t)(header_len >> (8 * i));
    }
    memcpy(start + TRACE_FILE_HEADER_LEN, header_buf, header_len);
    size_t len = TRACE_FILE_HEADER_LEN + header_len;
    uint8_t *spare = start + len;
    memset(spare, 0, TRACE_FRAME_HEADER_LEN + TRACE_SPARE_LEN);
    trace_frame_header(spare, TRACE_FRAME_SPARE, 0, spare + TRACE_FRAME_HEADER_LEN,
                       TRACE_SPARE_LEN);
    spare_off = (off_t)len;
    *out = start;
    return len + TRACE_FRAME_HEADER_LEN + TRACE_SPARE_LEN;
}

/* Creates the file with its header and SPARE frame, and publishes it.
 * Returns the fd, or -1 (tracing stopped or the program stopped). Caller
 * holds trace_proc.lock. */
static int open_file(void)
{
    char name[300];
    int fd;
    for (;;) {
        snprintf(name, sizeof name, "%s%s", lineage_name(), TRACE_FILE_SUFFIX);
        const uint8_t *start;
        size_t len = file_start(&start);
        fd = trace_dir_create(name, start, len);
        if (fd >= 0 || errno != EEXIST || !lineage_provisional())
            break;
        lineage_next_spawn_number(); /* a sibling took this number */
    }
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) != 0) {
        close(fd);
        fd = -1;
    }
    if (fd < 0 && errno == EEXIST) {
        atomic_store(&trace_proc.on, 0);
        core_fail("the trace", "cannot create trace file %s/%s: a file of that name is already "
                  "there, not made by this run; use a new DETSHIM_TRACE directory",
                  core_cfg.trace_dir, name);
        return -1;
    }
    if (fd < 0 && (errno == ENOSPC || errno == EDQUOT || errno == EFBIG || errno == EIO)) {
        char why[640];
        snprintf(why, sizeof why, "cannot create %s: %s (%s); not traced", name, strerror(errno),
                 strerrorname_np(errno));
        stop_tracing(why);
        return -1;
    }
    if (fd < 0) {
        atomic_store(&trace_proc.on, 0);
        core_fail("the trace",
                  "cannot create trace file %s/%s: %s; point DETSHIM_TRACE at a new, writable "
                  "directory",
                  core_cfg.trace_dir, name, strerror(errno));
        return -1;
    }
    trace_dev = sb.st_dev;
    trace_ino = sb.st_ino;
    atomic_store_explicit(&trace_proc.fd, fd, memory_order_release);
    lineage_settle(); /* the name is final now */
    lineage_note_file();
    core_log(DS_LOG_INFO, "tracing process %s to %s/%s", lineage_name(), core_cfg.trace_dir, name);
    return fd;
}

/* Bytes this process wrote to its trace file, against [trace] max_bytes. */
static _Atomic unsigned long long written_bytes;

int trace_file_write(const void *data, size_t len)
{
    if (atomic_load(&stopped))
        return -1;
    unsigned long long max = core_cfg.trace_max_bytes;
    if (max && atomic_fetch_add(&written_bytes, len) + len > max) {
        char why[300];
        snprintf(why, sizeof why, "the trace reached [trace] max_bytes (%llu bytes); later "
                 "calls are not in it: raise max_bytes in the policy, trace a shorter run, or "
                 "set [trace] level = summary",
                 max);
        stop_tracing(why);
        return -1;
    }
    int fd = atomic_load_explicit(&trace_proc.fd, memory_order_acquire);
    if (fd < 0) {
        if (trace_proc_lock() != 0) {
            /* At exit, the file's opener may be this thread, interrupted:
             * these bytes are lost, and the trace must say so. */
            trace_incomplete("a thread's records could not be written: the trace file was "
                             "being opened when the process exited");
            return -1;
        }
        fd = atomic_load_explicit(&trace_proc.fd, memory_order_acquire);
        if (fd < 0 && !atomic_load(&stopped))
            fd = open_file();
        trace_proc_unlock();
        if (fd < 0)
            return -1;
    }
    if (!fd_is_ours(fd)) {
        atomic_store(&stopped, 1);
        atomic_store(&trace_proc.on, 0);
        core_fail("the trace", "the program closed the trace file of process %s in %s; "
                  "its trace stops here", lineage_name(), core_cfg.trace_dir);
        return -1;
    }
    if (trace_write_all(fd, data, len) != 0) {
        char why[300];
        snprintf(why, sizeof why, "cannot write: %s (%s); tracing stopped there and the "
                 "program goes on", strerror(errno), strerrorname_np(errno));
        stop_tracing(why);
        return -1;
    }
    return 0;
}

/* Through trace_proc_lock, so that a signal landing inside fork() whose
 * handler exits finds this thread named as the holder and waits not. */
static int fork_locked; /* prepare got the lock (it may not, once closing) */

void trace_fork_prepare(void)
{
    fork_locked = trace_proc_lock() == 0;
}

void trace_fork_parent(void)
{
    if (fork_locked)
        trace_proc_unlock();
}

void trace_fork_child(void)
{
    atomic_store(&written_bytes, 0);
    pthread_mutex_init(&trace_proc.lock, NULL);
    atomic_store(&lock_owner, 0);
    /* The parent's file stays the parent's: nothing here may mark it. */
    int fd = atomic_load(&trace_proc.fd);
    if (fd_is_ours(fd))
        close(fd);
    atomic_store(&trace_proc.fd, -1);
    atomic_store(&trace_proc.closing, 0);
    atomic_store(&marked, 0);
    atomic_store(&mark_written, 0);
    atomic_store(&closer, 0);
    if (!atomic_load(&trace_proc.on))
        return; /* a parent not tracing (stopped, or closed) has an untraced child */
    trace_proc.pid = getpid();
    atomic_store(&stopped, 0);
    trace_threads_reset_after_fork();
}

int trace_process_start(char *err, size_t errlen)
{
    if (trace_dir_open(core_cfg.trace_dir, err, errlen) != 0)
        return -1;
    if (lineage_is_first() && check_fresh_dir(lineage_rank(), err, errlen) != 0)
        return -1;
    trace_proc.pid = getpid();
    atomic_store(&trace_proc.on, 1);
    return 0;
}

int trace_recorded_any(void)
{
    if (atomic_load_explicit(&trace_proc.fd, memory_order_acquire) >= 0)
        return 1;
    int any = 0;
    for (struct thread_buf *tb = atomic_load(&trace_proc.threads); tb && !any; tb = tb->next)
        any = tb->seq > 0;
    return any;
}

static void (*exit_hooks[8])(void);
static _Atomic int nexit_hooks, exit_hooks_ran;

void trace_on_exit(void (*fn)(void))
{
    int i = atomic_fetch_add(&nexit_hooks, 1);
    if (i < 8)
        exit_hooks[i] = fn;
}

/* Closes every thread's stream and writes the PROCESS_END frame. Runs at
 * exit (the destructor, or _exit), perhaps from a signal handler that
 * interrupted this thread inside the shim, while other threads may still
 * be calling: it waits for no lock longer than TRACE_EXIT_WAIT_MS, and a
 * stream it cannot close, or a call that comes later, marks the trace
 * incomplete. The file stays open, for that mark; exit or exec closes it. */
static void close_process(int by_exec)
{
    if (!atomic_load(&trace_proc.on) || trace_proc.pid != getpid())
        return;
    /* The modules' last records (artifacts, loaded code), once, while the
     * streams are still open; not from a signal handler that interrupted
     * this thread inside the shim, which may hold what recording needs. */
    int hooks_skipped = 0;
    if (!atomic_exchange(&exit_hooks_ran, 1)) {
        hooks_skipped = guard_held() || atomic_load(&lock_owner) == self_tid();
        for (int i = 0; i < nexit_hooks && i < 8 && !hooks_skipped; i++)
            if (exit_hooks[i])
                exit_hooks[i]();
    }
    int expected = 0;
    if (!atomic_compare_exchange_strong(&trace_proc.closing, &expected, 1))
        return; /* closing already, on this thread or another */
    atomic_store(&closer, self_tid());
    atomic_store(&closed_by_exec, by_exec);
    /* Once we hold the lock, every thread that registered before closing
     * is in the list, and later ones are refused as late. */
    int locked = trace_proc_lock() == 0;
    struct thread_buf *list = atomic_load(&trace_proc.threads);
    if (locked)
        trace_proc_unlock();
    else
        trace_incomplete("a thread was starting its stream or opening the file when the "
                         "process exited; its records may be missing");
    int n = 0;
    for (struct thread_buf *tb = list; tb; tb = tb->next)
        n++;
    struct chain_thread *heads = calloc((size_t)n + 1, sizeof *heads);
    int busy = 0;
    n = 0;
    for (struct thread_buf *tb = list; tb; tb = tb->next) {
        if (trace_thread_finish(tb) != 0) {
            busy++;
            continue;
        }
        if (heads && tb->seq && !(tb->index & TRACE_THREAD_REAL)) { /* in no root */
            heads[n].count = tb->seq;
            memcpy(heads[n].head, tb->head, 32);
            n++;
        }
    }
    atomic_store(&trace_proc.on, 0);
    if (busy) {
        char why[200];
        snprintf(why, sizeof why, "%d thread%s inside the shim when the process exited (a "
                 "signal handler that exits, or a thread still running); %s last records are "
                 "missing", busy, busy == 1 ? " was" : "s were", busy == 1 ? "its" : "their");
        trace_incomplete(why);
    }
    if (hooks_skipped) /* said after the reasons above, which come first */
        trace_incomplete("the process exited from inside the shim (a signal handler); "
                         "its artifacts and loaded code are not recorded");
    if (!heads || atomic_load_explicit(&trace_proc.fd, memory_order_acquire) < 0) {
        free(heads);
        return; /* nothing was ever written: no file */
    }
    uint8_t frame[TRACE_FRAME_HEADER_LEN + 36];
    uint8_t *payload = frame + TRACE_FRAME_HEADER_LEN;
    for (int i = 0; i < 4; i++)
        payload[i] = (uint8_t)((uint32_t)n >> (8 * i));
    chain_process_root(header_fields, header_nfields, heads, n, payload + 4);
    free(heads);
    trace_frame_header(frame, TRACE_FRAME_PROCESS_END, 0, payload, 36);
    trace_file_write(frame, sizeof frame);
}

void trace_process_flush_all(void)
{
    close_process(0);
}

void trace_process_flush_for_exec(void)
{
    close_process(1);
}

static struct core_once trace_start_once;

static void start_once(void)
{
    core_init();
    if (!core_cfg.trace_on)
        return;
    char err[1024];
    if (window_configure(err, sizeof err) != 0) { /* hook (window.c) */
        core_fail("the trace", "%s", err);
    } else {
        /* Hook (compress.c); in warn mode the trace goes on uncompressed. */
        if (compress_configure(err, sizeof err) != 0)
            core_fail("compression", "%s", err);
        if (trace_process_start(err, sizeof err) != 0)
            core_fail("the trace", "%s", err);
    }
    pysite_configure();
}

void trace_start(void)
{
    core_once(&trace_start_once, start_once);
}

int trace_active(void)
{
    if (__builtin_expect(atomic_load_explicit(&trace_start_once.state, memory_order_acquire) != 2, 0))
        trace_start();
    if (!atomic_load_explicit(&trace_proc.on, memory_order_relaxed)) {
        if (atomic_load_explicit(&trace_proc.closing, memory_order_relaxed) &&
            trace_proc.pid == getpid())
            trace_late_record();
        return 0;
    }
    /* A vfork child shares our memory until it execs: it must not record. */
#ifdef TRACE_VFORK_MARKED
    return !trace_in_vfork_child;
#else
    return trace_proc.pid == getpid();
#endif
}
