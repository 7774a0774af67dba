/* Start-up: read DETSHIM_* from the environment and the policy, once per
 * process, whoever calls first. Fail closed: a user who asked for
 * determinism or a trace must not silently get neither, so a bad setting
 * stops the program here with one line and exit status 2, unless
 * DETSHIM_ON_ERROR=warn.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "core/env.h"
#include "core/lineage.h"
#include "core/policy.h"

struct core_config core_cfg = { .trace_frames = 4, .blas_threads = POLICY_THREADS_AUTO,
                                .trace_max_bytes = POLICY_DEFAULT_MAX_BYTES,
                                .trace_window = POLICY_DEFAULT_WINDOW };

/* The onces this thread is running, innermost first: a caller that finds
 * its once running asks whether it is inside it (fn reached an
 * intercepted call) without reading another thread's state. */
struct once_frame {
    const struct core_once *o;
    const struct once_frame *outer;
};
static _Thread_local const struct once_frame *running_here
    __attribute__((tls_model("initial-exec")));

int core_once(struct core_once *o, void (*fn)(void))
{
    if (atomic_load_explicit(&o->state, memory_order_acquire) == 2)
        return 1;
    int expected = 0;
    if (atomic_compare_exchange_strong(&o->state, &expected, 1)) {
        struct once_frame frame = { o, running_here };
        running_here = &frame;
        fn();
        running_here = frame.outer;
        atomic_store_explicit(&o->state, 2, memory_order_release);
        return 1;
    }
    for (const struct once_frame *f = running_here; f; f = f->outer)
        if (f->o == o)
            return 0; /* fn itself reached an intercepted call */
    while (atomic_load_explicit(&o->state, memory_order_acquire) != 2)
        sched_yield();
    return 1;
}

static void read_on_error(void)
{
    const char *v = core_getenv("DETSHIM_ON_ERROR");
    if (!v || !*v || strcmp(v, "fail") == 0) {
        core_cfg.on_error = ON_ERROR_FAIL;
    } else if (strcmp(v, "warn") == 0) {
        core_cfg.on_error = ON_ERROR_WARN;
    } else {
        core_cfg.on_error = ON_ERROR_FAIL;
        core_fail("", "DETSHIM_ON_ERROR=%s is not fail or warn; set one of those", v);
    }
}

static void read_log_level(void)
{
    const char *v = core_getenv("DETSHIM_LOG");
    core_cfg.log_level = DS_LOG_QUIET;
    if (!v || !*v || strcmp(v, "quiet") == 0)
        return;
    if (strcmp(v, "info") == 0)
        core_cfg.log_level = DS_LOG_INFO;
    else if (strcmp(v, "debug") == 0)
        core_cfg.log_level = DS_LOG_DEBUG;
    else
        core_fail("DETSHIM_LOG", "DETSHIM_LOG=%s is not quiet, info or debug; set one of those", v);
}

/* DETSHIM_TRACE_STEPS and DETSHIM_TRACE_OPS: read by the Python start-up
 * hook ([trace] steps and ops set them with ?=), checked here so that a
 * user's mistyped value stops the program instead of turning the records
 * off without a word. */
static void read_framework_switches(void)
{
    static const char *const names[] = { "DETSHIM_TRACE_STEPS", "DETSHIM_TRACE_OPS" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *v = core_getenv(names[i]);
        if (v && *v && strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
            core_fail(names[i], "%s=%s is not on or off; set one of those", names[i], v);
    }
}

/* The policy read, for env_apply once DETSHIM_SEED has been read too;
 * NULL when there is none (a bad policy under DETSHIM_ON_ERROR=warn). */
static const struct policy *loaded_policy;

static void read_policy(void)
{
    const char *name = core_getenv("DETSHIM_POLICY");
    if (!name)
        name = "default";
    static struct policy p; /* large; start-up runs once */
    char path[4096], err[1024];
    snprintf(core_cfg.policy_name, sizeof core_cfg.policy_name, "%s", name);
    snprintf(core_cfg.policy_digest, sizeof core_cfg.policy_digest, "none");
    if (policy_find(name, resolve_self_dir(), path, sizeof path, err, sizeof err) != 0 ||
        policy_load(path, resolve_self_dir(), &p, err, sizeof err) != 0) {
        core_fail("the policy (built-in defaults apply)", "%s", err);
        return;
    }
    snprintf(core_cfg.policy_path, sizeof core_cfg.policy_path, "%s", p.path);
    snprintf(core_cfg.policy_files, sizeof core_cfg.policy_files, "%s", p.files);
    snprintf(core_cfg.policy_digest, sizeof core_cfg.policy_digest, "%s", p.digest);
    core_cfg.blas_mode = p.blas_mode;
    core_cfg.blas_threads = p.blas_threads;
    core_cfg.cuda_mode = p.cuda_mode;
    core_cfg.cuda_tf32 = p.cuda_tf32;
    core_cfg.nccl_mode = p.nccl_mode;
    core_cfg.nccl_conflict = p.nccl_conflict;
    core_cfg.trace_frames = p.trace_frames;
    core_cfg.trace_max_bytes = p.trace_max_bytes;
    core_cfg.trace_group_readable = p.trace_group_readable;
    core_cfg.trace_summary = p.trace_summary;
    core_cfg.trace_compress = p.trace_compress;
    core_cfg.trace_window = p.trace_window;
    snprintf(core_cfg.artifacts, sizeof core_cfg.artifacts, "%s", p.artifacts);
    snprintf(core_cfg.inputs, sizeof core_cfg.inputs, "%s", p.inputs);
    core_cfg.seed = p.seed;
    core_cfg.rng_pin = p.rng_pin;
    snprintf(core_cfg.rng_exempt, sizeof core_cfg.rng_exempt, "%s", p.rng_exempt);
    snprintf(core_cfg.rng_never_pin, sizeof core_cfg.rng_never_pin, "%s", p.rng_never_pin);
    core_log(DS_LOG_DEBUG, "policy %s from %s (sha256 %s)", name, p.files, p.digest);
    loaded_policy = &p;
}

static void read_isa(void)
{
    const char *v = core_getenv("DETSHIM_ISA");
    if (!v || !*v || strcmp(v, "auto") == 0)
        return;
    if (strcmp(v, "scalar") != 0 && strcmp(v, "avx2") != 0 && strcmp(v, "avx512") != 0) {
        core_fail("DETSHIM_ISA (the best path the CPU has is used)",
                  "DETSHIM_ISA=%s is not scalar, avx2, avx512 or auto", v);
        return;
    }
    snprintf(core_cfg.isa, sizeof core_cfg.isa, "%s", v);
}

static void read_seed(void)
{
    const char *v = core_getenv("DETSHIM_SEED");
    if (!v || !*v)
        return;
    char *end;
    errno = 0;
    unsigned long long s = strtoull(v, &end, 0);
    if (errno || *end || *v == '-')
        core_fail("DETSHIM_SEED (the policy's seed applies)",
                  "DETSHIM_SEED=%s is not a non-negative whole number", v);
    else
        core_cfg.seed = s;
}

/* Creates path and its missing parents. The trace directory itself is
 * made 0700 (0750 with [trace] readable_by = group): its files' headers
 * hold the command line, and no one else may add or replace a file in it
 * (an existing one is checked in trace/dir.c). */
static int mkdir_p(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        int rc = mkdir(path, 0755);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(path, core_cfg.trace_group_readable ? 0750 : 0700) != 0 && errno != EEXIST ? -1
                                                                                         : 0;
}

static void read_trace_dir(void)
{
    const char *v = core_getenv("DETSHIM_TRACE");
    if (!v || !*v)
        return;
    char cwd[PATH_MAX] = "";
    if (v[0] != '/' && !getcwd(cwd, sizeof cwd)) {
        core_fail("the trace", "DETSHIM_TRACE=%s is relative and the current directory is "
                  "unknown; give an absolute path", v);
        return;
    }
    size_t need = strlen(cwd) + 1 + strlen(v) + 1;
    if (need > sizeof core_cfg.trace_dir - 300) { /* room for file names */
        core_fail("the trace", "DETSHIM_TRACE=%.80s... is too long; choose a shorter path", v);
        return;
    }
    if (v[0] == '/')
        memcpy(core_cfg.trace_dir, v, strlen(v) + 1);
    else
        snprintf(core_cfg.trace_dir, sizeof core_cfg.trace_dir, "%.3000s/%.1000s", cwd, v);
    struct stat sb = { 0 };
    errno = 0;
    if (mkdir_p(core_cfg.trace_dir) != 0 ||
        (lstat(core_cfg.trace_dir, &sb) == 0 && !S_ISLNK(sb.st_mode) &&
         (!S_ISDIR(sb.st_mode) || access(core_cfg.trace_dir, W_OK | X_OK) != 0))) {
        core_fail("the trace", "DETSHIM_TRACE=%s: cannot create or write that directory (%s); "
                  "choose a writable directory", v,
                  strerror(S_ISDIR(sb.st_mode) || errno != EEXIST ? errno : ENOTDIR));
        return;
    }
    /* Children that chdir before exec must find the same directory. A
     * link, another user's directory or one others may write is refused
     * when the trace starts (trace_dir_open). */
    core_setenv("DETSHIM_TRACE", core_cfg.trace_dir);
    core_cfg.trace_on = 1;
}

static void init_once(void)
{
    lineage_start();
    read_on_error();
    read_log_level();
    read_framework_switches();
    read_policy();
    read_seed();
    read_isa();
    read_trace_dir();
    core_entropy_rule_read(core_cfg.rng_never_pin);
    if (loaded_policy)
        env_apply(loaded_policy, resolve_self_dir(), core_cfg.seed);
}

/* DETSHIM_EXPLAIN=1: print the effective configuration, as the parser and
 * the environment made it, and exit. Used by `detrun --explain`, so the
 * explanation can never disagree with what a run would do. */
static void explain_and_exit(void)
{
    static const char *const modes[] = { "passthrough", "pinned", "canonical" };
    printf("policy          %s\n", core_cfg.policy_name);
    printf("policy files    %s\n", core_cfg.policy_files[0] ? core_cfg.policy_files : "(none)");
    printf("policy sha256   %s\n", core_cfg.policy_digest);
    printf("[blas] mode     %s\n", modes[core_cfg.blas_mode]);
    if (core_cfg.blas_threads == POLICY_THREADS_AUTO)
        printf("[blas] threads  auto: canonical kernels %d (the CPUs this process may run on), "
               "vendor BLAS %d\n", core_canonical_threads(), core_vendor_threads());
    else
        printf("[blas] threads  %d\n", core_cfg.blas_threads);
    printf("[cuda] mode     %s\n", core_cfg.cuda_mode == CUDA_MODE_PINNED ? "pinned" : "passthrough");
    printf("[cuda] tf32     %s\n", core_cfg.cuda_tf32 == TF32_DENY ? "deny" : "allow");
    printf("[nccl] mode     %s, conflict %s\n", modes[core_cfg.nccl_mode],
           core_cfg.nccl_conflict == NCCL_CONFLICT_REFUSE ? "refuse" : "override");
    printf("[trace] frames  %d\n", core_cfg.trace_frames);
    if (core_cfg.trace_max_bytes)
        printf("[trace] max_bytes %llu per process file\n", core_cfg.trace_max_bytes);
    else
        printf("[trace] max_bytes unlimited\n");
    if (core_cfg.trace_summary || core_cfg.trace_window != POLICY_DEFAULT_WINDOW)
        printf("[trace] level   %s, window %u records\n",
               core_cfg.trace_summary ? "summary" : "full", core_cfg.trace_window);
    if (core_cfg.trace_compress)
        printf("[trace] compress zstd (DETSHIM_TRACE_COMPRESS overrides it for one run)\n");
    printf("[trace] artifacts %s\n", core_cfg.artifacts);
    printf("[trace] inputs  %s\n", core_cfg.inputs);
    printf("[rng] seed      %llu%s\n", core_cfg.seed, core_getenv("DETSHIM_SEED") ? " (DETSHIM_SEED)" : "");
    printf("[rng] pin       %s\n", core_cfg.rng_pin == RNG_PIN_ALL ? "all" : "none");
    printf("[rng] exempt    libssl, libcrypto, libgnutls, libsodium%s%s\n",
           core_cfg.rng_exempt[0] ? ", " : "", core_cfg.rng_exempt);
    printf("[rng] never pin %s%s%s\n", core_never_pin_builtin, core_cfg.rng_never_pin[0] ? ", " : "",
           core_cfg.rng_never_pin);
    printf("isa             %s\n", core_cfg.isa[0] ? core_cfg.isa : "auto");
    printf("trace           %s\n", core_cfg.trace_on ? core_cfg.trace_dir : "off");
    printf("environment     %d variable%s\n", env_count(), env_count() == 1 ? "" : "s");
    for (int i = 0; i < env_count(); i++) {
        const struct env_setting *s = env_get(i);
        char origin[700];
        printf("  %s=%s\n      by %s: %s\n", s->name, s->value,
               env_origin_text(s, origin, sizeof origin), s->where);
    }
    for (int i = 0; i < env_count(); i++)
        if (env_get(i)->unsafe)
            printf("warning: %s is not a known determinism switch; the policy sets it under "
                   "unsafe = yes (%s): trust the policy as you would its code\n",
                   env_get(i)->name, env_get(i)->where);
    fflush(stdout);
    _exit(0);
}

static struct core_once core_init_once;

void core_init(void)
{
    core_once(&core_init_once, init_once);
    const char *explain = core_getenv("DETSHIM_EXPLAIN");
    if (explain && strcmp(explain, "exports") == 0) {
        env_print_exports();
        fflush(stdout);
        _exit(0);
    }
    if (explain && *explain && strcmp(explain, "0") != 0)
        explain_and_exit();
}

int core_ready(void)
{
    return atomic_load_explicit(&core_init_once.state, memory_order_acquire) == 2;
}
