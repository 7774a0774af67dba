/* The process side of tracing: the trace file of this process, named after
 * its lineage (lineage.h) and opened on the first write, so a program that
 * calls nothing we intercept leaves no file; fork handling; and closing
 * the trace at exit.
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
#include <time.h>
#include <unistd.h>

#include "detshim/chain.h"
#include "detshim/core.h"
#include "detshim/env.h"
#include "detshim/lineage.h"
#include "detshim/trace.h"
#include "detshim/trace_internal.h"

struct trace_process trace_proc = { .fd = -1, .next_index = 1, .lock = PTHREAD_MUTEX_INITIALIZER };

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
    DIR *d = opendir(core_cfg.trace_dir);
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
              resolve_audit_active() ? TRACE_INTERPOSITION_AUDIT : TRACE_INTERPOSITION_PRELOAD);
    core_machine_describe(text, sizeof text);
    add_field(TRACE_FIELD_CPU, TRACE_FIELD_INFO, text);
}

/* The file's identity, so a descriptor the program closed (and perhaps
 * reused for a file of its own) is never written to. */
static dev_t trace_dev;
static ino_t trace_ino;
static int trace_closed;

static int fd_is_ours(int fd)
{
    struct stat sb;
    return fstat(fd, &sb) == 0 && sb.st_dev == trace_dev && sb.st_ino == trace_ino;
}

static int write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Caller holds trace_proc.lock. */
static int open_file(void)
{
    char path[PATH_MAX + 300];
    int fd;
    if (trace_closed)
        return -1; /* a thread still recording after the trace was closed */
    for (;;) {
        snprintf(path, sizeof path, "%s/%s%s", core_cfg.trace_dir, lineage_name(),
                 TRACE_FILE_SUFFIX);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST || !lineage_provisional())
            break;
        lineage_next_spawn_number(); /* a sibling took this number */
    }
    if (fd < 0) {
        trace_proc.on = 0;
        core_fail("the trace",
                  "cannot create trace file %s: %s; point DETSHIM_TRACE at a new, writable "
                  "directory",
                  path, strerror(errno));
        return -1;
    }
    build_header();
    uint8_t fixed[TRACE_FILE_HEADER_LEN];
    memcpy(fixed, TRACE_MAGIC, TRACE_MAGIC_LEN);
    for (int i = 0; i < 4; i++) {
        fixed[8 + i] = (uint8_t)(TRACE_VERSION >> (8 * i));
        fixed[12 + i] = (uint8_t)(header_len >> (8 * i));
    }
    if (write_all(fd, fixed, sizeof fixed) != 0 || write_all(fd, header_buf, header_len) != 0) {
        close(fd);
        trace_proc.on = 0;
        core_fail("the trace", "cannot write trace file %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat sb;
    fstat(fd, &sb);
    trace_dev = sb.st_dev;
    trace_ino = sb.st_ino;
    trace_proc.fd = fd;
    lineage_settle(); /* the name is final now */
    core_log(LOG_INFO, "tracing process %s to %s", lineage_name(), path);
    return 0;
}

int trace_file_write(const void *data, size_t len)
{
    if (trace_proc.fd < 0) {
        pthread_mutex_lock(&trace_proc.lock);
        int rc = trace_proc.fd < 0 ? open_file() : 0;
        pthread_mutex_unlock(&trace_proc.lock);
        if (rc != 0)
            return -1;
    }
    if (!fd_is_ours(trace_proc.fd)) {
        trace_proc.on = 0;
        trace_proc.fd = -1;
        trace_closed = 1;
        core_fail("the trace", "the program closed the trace file of process %s in %s; "
                  "its trace stops here", lineage_name(), core_cfg.trace_dir);
        return -1;
    }
    if (write_all(trace_proc.fd, data, len) != 0) {
        trace_proc.on = 0;
        core_fail("the trace", "cannot write the trace of process %s in %s: %s",
                  lineage_name(), core_cfg.trace_dir, strerror(errno));
        return -1;
    }
    return 0;
}

static void atfork_prepare(void)
{
    pthread_mutex_lock(&trace_proc.lock);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&trace_proc.lock);
}

static void atfork_child(void)
{
    pthread_mutex_init(&trace_proc.lock, NULL);
    if (!trace_proc.on)
        return;
    trace_proc.pid = getpid();
    if (trace_proc.fd >= 0 && fd_is_ours(trace_proc.fd))
        close(trace_proc.fd); /* the parent's file stays the parent's */
    trace_proc.fd = -1;
    trace_closed = 0;
    trace_threads_reset_after_fork();
}

int trace_process_start(char *err, size_t errlen)
{
    if (lineage_is_first() && check_fresh_dir(lineage_rank(), err, errlen) != 0)
        return -1;
    trace_proc.pid = getpid();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    trace_proc.on = 1;
    return 0;
}

int trace_recorded_any(void)
{
    if (trace_proc.fd >= 0)
        return 1;
    pthread_mutex_lock(&trace_proc.lock);
    int any = 0;
    for (struct thread_buf *tb = trace_proc.threads; tb && !any; tb = tb->next)
        any = tb->seq > 0;
    pthread_mutex_unlock(&trace_proc.lock);
    return any;
}

static void (*exit_hooks[8])(void);
static _Atomic int nexit_hooks;

void trace_on_exit(void (*fn)(void))
{
    int i = atomic_fetch_add(&nexit_hooks, 1);
    if (i < 8)
        exit_hooks[i] = fn;
}

void trace_process_flush_all(void)
{
    if (!trace_proc.on || trace_proc.pid != getpid())
        return;
    for (int i = 0; i < nexit_hooks && i < 8; i++)
        if (exit_hooks[i])
            exit_hooks[i]();
    pthread_mutex_lock(&trace_proc.lock);
    struct thread_buf *list = trace_proc.threads;
    pthread_mutex_unlock(&trace_proc.lock);
    int n = 0;
    for (struct thread_buf *tb = list; tb; tb = tb->next)
        n++;
    struct chain_thread *heads = calloc((size_t)n + 1, sizeof *heads);
    n = 0;
    for (struct thread_buf *tb = list; tb; tb = tb->next) {
        trace_thread_close(tb);
        if (heads && tb->seq) {
            heads[n].count = tb->seq;
            memcpy(heads[n].head, tb->head, 32);
            n++;
        }
    }
    trace_proc.on = 0;
    trace_closed = 1;
    if (trace_proc.fd < 0 || !heads || !fd_is_ours(trace_proc.fd)) {
        free(heads);
        return; /* nothing was ever recorded: no file */
    }
    uint8_t payload[36];
    for (int i = 0; i < 4; i++)
        payload[i] = (uint8_t)((uint32_t)n >> (8 * i));
    chain_process_root(header_fields, header_nfields, heads, n, payload + 4);
    free(heads);
    uint8_t frame[TRACE_FRAME_HEADER_LEN + sizeof payload];
    memcpy(frame + TRACE_FRAME_HEADER_LEN, payload, sizeof payload);
    trace_frame_header(frame, TRACE_FRAME_PROCESS_END, 0, frame + TRACE_FRAME_HEADER_LEN,
                       sizeof payload);
    write_all(trace_proc.fd, frame, sizeof frame);
    close(trace_proc.fd);
    trace_proc.fd = -1;
}

static struct core_once trace_start_once;

static void start_once(void)
{
    trace_exit_prepare();
    trace_exec_prepare();
    core_init();
    if (!core_cfg.trace_on)
        return;
    char err[1024];
    if (trace_process_start(err, sizeof err) != 0)
        core_fail("the trace", "%s", err);
}

void trace_start(void)
{
    core_once(&trace_start_once, start_once);
}

int trace_active(void)
{
    if (__builtin_expect(atomic_load_explicit(&trace_start_once.state, memory_order_acquire) != 2, 0))
        trace_start();
    /* A vfork child shares our memory until it execs: it must not record. */
    return trace_proc.on && trace_proc.pid == getpid();
}
