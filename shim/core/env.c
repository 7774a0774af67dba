/* Environment pinning: sets the variables a policy lists ([env] and the
 * family sections that become variables) in the process's environment at
 * start-up, before the interpreter or any framework reads them, and keeps
 * what it did (the value, and who won: the policy or the user) for the
 * trace header and `detrun --explain`.
 *
 * Runs once, inside core_init, before any other thread exists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/env.h"

/* Variables that change the numbers a framework computes (thread counts,
 * CPU dispatch, TF32, determinism switches, XLA's flags), recorded when the
 * user set them even where the policy does not pin them: a framework whose
 * maths never reaches an intercepted call (TensorFlow, JAX on the CPU) can
 * then still be told apart by its trace. Logging switches are not here. */
static const char *const watched[] = {
    "PYTHONHASHSEED", "OMP_NUM_THREADS", "OMP_DYNAMIC", "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS", "MKL_CBWR", "MKL_DYNAMIC", "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA",
    "DNNL_MAX_CPU_ISA", "CUBLAS_WORKSPACE_CONFIG", "NVIDIA_TF32_OVERRIDE", "NCCL_ALGO",
    "NCCL_PROTO", "NCCL_NVLS_ENABLE", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS",
    "NCCL_COLLNET_ENABLE", "TF_DETERMINISTIC_OPS", "TF_CUDNN_DETERMINISTIC",
    "TF_ENABLE_ONEDNN_OPTS", "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS",
    "KERAS_BACKEND", "XLA_FLAGS", "PJRT_NPROC", "NPROC", "JAX_ENABLE_X64",
    "JAX_DEFAULT_MATMUL_PRECISION", "JAX_DEFAULT_PRNG_IMPL", "JAX_THREEFRY_PARTITIONABLE",
};
#define NWATCHED (sizeof watched / sizeof *watched)

static struct env_setting settings[POLICY_MAX_ENV + 3 + NWATCHED];
static int nsettings;

int env_count(void)
{
    return nsettings;
}

const struct env_setting *env_get(int i)
{
    return i >= 0 && i < nsettings ? &settings[i] : NULL;
}

/* 1 if `list` (separated by `sep`) already holds `part` as whole items,
 * e.g. because a parent process under the shim added it. */
static int holds(const char *list, const char *part, char sep)
{
    size_t n = strlen(part);
    for (const char *s = list; (s = strstr(s, part)) != NULL; s++) {
        int starts = s == list || s[-1] == sep;
        int ends = s[n] == 0 || s[n] == sep;
        if (starts && ends)
            return 1;
    }
    return 0;
}

/* 1 if this CPU runs code built for `isa` (enum policy_isa). */
static int cpu_has(int isa)
{
    __builtin_cpu_init();
    if (isa == ISA_AVX2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (isa == ISA_AVX512)
        return core_cpu_has_avx512();
    return 1;
}

/* dst = a sep b; the caller checked that it fits. */
static void join(char *dst, const char *a, char sep, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    memcpy(dst, a, la);
    dst[la] = sep;
    memcpy(dst + la + 1, b, lb + 1);
}

/* The user's own value of `name`: what detrun recorded in
 * DETSHIM_USER_ENV before it exported the policy's values ("NAME=value"
 * lines, or "NAME" alone where the user had none), else the environment.
 * NULL if the user set none. */
static const char *user_value(const char *name, char *buf, size_t len)
{
    const char *list = core_getenv("DETSHIM_USER_ENV");
    size_t n = strlen(name);
    for (const char *s = list ? list : ""; *s;) {
        const char *nl = strchr(s, '\n');
        size_t l = nl ? (size_t)(nl - s) : strlen(s);
        if (l >= n && memcmp(s, name, n) == 0 && (l == n || s[n] == '=')) {
            if (l == n)
                return NULL;
            snprintf(buf, len, "%.*s", (int)(l - n - 1), s + n + 1);
            return buf;
        }
        s += l + (nl != NULL);
    }
    return core_getenv(name);
}

/* Sets e and records it; returns its setting, or NULL if it was left
 * unset (a user's value too long to add to). */
static struct env_setting *apply_one(const struct policy_env *e)
{
    struct env_setting *s = &settings[nsettings++];
    char ubuf[sizeof s->user];
    const char *user = user_value(e->name, ubuf, sizeof ubuf);
    snprintf(s->name, sizeof s->name, "%s", e->name);
    snprintf(s->where, sizeof s->where, "%s", e->where);
    s->origin = ENV_BY_POLICY;
    s->is_hook = 0;
    s->unsafe = e->unsafe;
    s->user[0] = 0;
    s->had_user = user != NULL;
    if (user)
        snprintf(s->user, sizeof s->user, "%s", user);
    switch (e->op) {
    case ENV_SET:
        snprintf(s->value, sizeof s->value, "%s", e->value);
        if (user && strcmp(user, e->value) != 0)
            s->origin = ENV_POLICY_OVER_USER;
        if (!cpu_has(e->cpu_isa)) {
            snprintf(s->value, sizeof s->value, "default");
            s->origin = ENV_POLICY_LOWERED;
        }
        break;
    case ENV_DEFAULT:
        snprintf(s->value, sizeof s->value, "%s", user ? user : e->value);
        if (user && strcmp(user, e->value) != 0)
            s->origin = ENV_BY_USER;
        break;
    case ENV_APPEND:
    case ENV_PREPEND: {
        char sep = e->op == ENV_APPEND ? ' ' : ':';
        if (user && strlen(user) + 1 + strlen(e->value) >= sizeof s->value) {
            /* A cut value would be a different value: leave it alone. */
            core_fail("the policy's addition to it",
                      "%s is %zu bytes long, too long to add the policy's %s to; shorten it",
                      e->name, strlen(user), e->value);
            nsettings--;
            return NULL;
        }
        if (!user || !*user || strcmp(user, e->value) == 0)
            snprintf(s->value, sizeof s->value, "%s", e->value);
        else if (holds(user, e->value, sep))
            snprintf(s->value, sizeof s->value, "%s", user);
        else if (e->op == ENV_APPEND)
            join(s->value, user, sep, e->value);
        else
            join(s->value, e->value, sep, user);
        if (user && *user && strcmp(s->value, e->value) != 0)
            s->origin = ENV_POLICY_WITH_USER;
        break;
    }
    }
    if (s->origin == ENV_POLICY_OVER_USER)
        core_log(DS_LOG_INFO, "%s=%s overridden by the policy (%s): %s", e->name, user, e->where,
                 s->value);
    else if (s->origin == ENV_BY_USER)
        core_log(DS_LOG_INFO, "%s=%s kept: the user's value wins (%s)", e->name, user, e->where);
    else if (s->origin == ENV_POLICY_LOWERED)
        core_log(DS_LOG_INFO, "%s=default: this CPU cannot run the policy's %s (%s)", e->name,
                 e->value, e->where);
    core_setenv(e->name, s->value);
    return s;
}

/* The variables the user set that change results and that the policy
 * did not pin: recorded as they are. */
static void note_watched(void)
{
    for (size_t i = 0; i < NWATCHED; i++) {
        const char *v = core_getenv(watched[i]);
        int pinned = 0;
        for (int j = 0; j < nsettings; j++)
            pinned |= strcmp(settings[j].name, watched[i]) == 0;
        if (!v || pinned)
            continue;
        struct env_setting *s = &settings[nsettings++];
        memset(s, 0, sizeof *s);
        snprintf(s->name, sizeof s->name, "%s", watched[i]);
        snprintf(s->value, sizeof s->value, "%s", v);
        snprintf(s->user, sizeof s->user, "%s", v);
        s->had_user = 1;
        snprintf(s->where, sizeof s->where, "not in the policy");
        s->origin = ENV_USER_UNPINNED;
    }
}

void env_apply(const struct policy *p, const char *libdir, unsigned long long seed)
{
    nsettings = 0;
    for (int i = 0; i < p->nenv; i++)
        apply_one(&p->env[i]);
    {
        /* Every Python program gets the start-up hook, under every policy:
         * it keeps Python's secrets (secrets, uuid4, multiprocessing
         * authkeys, tempfile names) on real entropy (docs/security.md), and
         * makes the switches that are Python calls, not variables, when the
         * framework is imported (DETSHIM_TORCH_DETERMINISTIC,
         * DETSHIM_TF_SEED). */
        struct policy_env hook = { .name = "PYTHONPATH", .op = ENV_PREPEND };
        const char *why = p->torch != TORCH_UNTOUCHED ? "[pytorch] deterministic"
                          : p->tf_seed_hook           ? "[tensorflow] deterministic"
                                                      : "the entropy rule";
        int needed = p->torch != TORCH_UNTOUCHED || p->tf_seed_hook;
        if (policy_hook_dir(libdir, hook.value, sizeof hook.value) != 0) {
            /* For the entropy rule alone, a Python without the hook keeps
             * all its entropy real (core/entropy_rule.c) and says so. */
            if (needed)
                core_fail("the framework's deterministic switches",
                          "the policy sets %s but the start-up hook "
                          "policies/python/sitecustomize.py is not beside %s; reinstall detshim",
                          why, libdir);
        } else {
            snprintf(hook.where, sizeof hook.where, "%s (its start-up hook)", why);
            struct env_setting *set = apply_one(&hook);
            if (set)
                set->is_hook = 1;
        }
    }
    if (p->torch != TORCH_UNTOUCHED) {
        struct policy_env mode = { .name = "DETSHIM_TORCH_DETERMINISTIC", .op = ENV_SET };
        const char *how = p->torch == TORCH_WARN_ONLY ? "warn_only" : "on";
        snprintf(mode.value, sizeof mode.value, "%s", how);
        snprintf(mode.where, sizeof mode.where, "[pytorch] deterministic = %s", how);
        apply_one(&mode);
    }
    if (p->tf_seed_hook) {
        struct policy_env tf = { .name = "DETSHIM_TF_SEED", .op = ENV_SET };
        snprintf(tf.value, sizeof tf.value, "%llu", seed);
        snprintf(tf.where, sizeof tf.where, "[tensorflow] deterministic = on (the seed)");
        apply_one(&tf);
    }
    note_watched();
}

static void print_quoted(const char *v)
{
    putchar('\'');
    for (; *v; v++) {
        if (*v == '\'')
            fputs("'\\''", stdout);
        else
            putchar(*v);
    }
    putchar('\'');
}

void env_print_exports(void)
{
    char users[8192];
    size_t nu = 0;
    users[0] = 0;
    for (int i = 0; i < nsettings; i++) {
        const struct env_setting *s = &settings[i];
        if (s->origin == ENV_USER_UNPINNED)
            continue;
        printf("%s=", s->name);
        print_quoted(s->value);
        printf("; export %s\n", s->name);
        if (!strchr(s->user, '\n')) {
            int n = snprintf(users + nu, sizeof users - nu, "%s%s%s\n", s->name,
                             s->had_user ? "=" : "", s->had_user ? s->user : "");
            if (n > 0 && (size_t)n < sizeof users - nu)
                nu += (size_t)n;
        }
    }
    fputs("DETSHIM_USER_ENV=", stdout);
    print_quoted(users);
    fputs("; export DETSHIM_USER_ENV\n", stdout);
}

const char *env_origin_text(const struct env_setting *s, char *buf, size_t len)
{
    switch (s->origin) {
    case ENV_POLICY_OVER_USER:
        snprintf(buf, len, "the policy, over the user's %s", s->user);
        break;
    case ENV_BY_USER:
        snprintf(buf, len, "the user (the policy's ?= gives way)");
        break;
    case ENV_POLICY_WITH_USER:
        snprintf(buf, len, "the policy, added to the user's %s", s->user);
        break;
    case ENV_POLICY_LOWERED:
        snprintf(buf, len, "the policy, lowered to default: this CPU lacks what it names");
        break;
    case ENV_USER_UNPINNED:
        snprintf(buf, len, "the user (the policy does not pin it)");
        break;
    default:
        snprintf(buf, len, "the policy");
    }
    return buf;
}
