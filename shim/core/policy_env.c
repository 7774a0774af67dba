/* Which environment variables a policy's [env] may set. A policy handed to
 * a verifier must not be able to run code: a variable that loads a library
 * (LD_*), finds programs (PATH), or makes an interpreter or shell run code
 * at start-up (PYTHONPATH, BASH_ENV, NODE_OPTIONS...) is refused outright.
 * Everything else must be a documented determinism switch from the list
 * below, or be marked by the policy with `unsafe = yes` (then `detrun
 * --explain` shows it in a warning line). Flag-list variables (XLA_FLAGS)
 * are checked flag by flag the same way. docs/security.md explains why.
 */
#include <stdio.h>
#include <string.h>

#include "core/policy.h"

/* Determinism switches: thread counts, CPU dispatch, reproducibility
 * modes and algorithm choices of the libraries detshim pins. */
static const char *const switches[] = {
    "PYTHONHASHSEED", "OMP_NUM_THREADS", "OMP_DYNAMIC", "OMP_PROC_BIND", "OMP_PLACES",
    "OMP_THREAD_LIMIT", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "GOTO_NUM_THREADS",
    "MKL_NUM_THREADS", "MKL_CBWR", "MKL_DYNAMIC", "MKL_ENABLE_INSTRUCTIONS",
    "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA",
    "ONEDNN_DEFAULT_FPMATH_MODE", "CUBLAS_WORKSPACE_CONFIG", "NVIDIA_TF32_OVERRIDE",
    "PYTORCH_TUNABLEOP_ENABLED", "NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE",
    "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_COLLNET_ENABLE",
    "TF_DETERMINISTIC_OPS", "TF_CUDNN_DETERMINISTIC", "TF_ENABLE_ONEDNN_OPTS",
    "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "TF_XLA_FLAGS", "KERAS_BACKEND",
    "XLA_FLAGS", "PJRT_NPROC", "NPROC", "JAX_ENABLE_X64", "JAX_DEFAULT_MATMUL_PRECISION",
    "JAX_DEFAULT_PRNG_IMPL", "JAX_THREEFRY_PARTITIONABLE", "JOBLIB_MULTIPROCESSING", NULL,
};

/* Flags a flag-list variable may carry (the name, without "--" and "=v"). */
static const char *const xla_flags[] = {
    "xla_cpu_max_isa", "xla_cpu_enable_platform_dependent_math", "xla_cpu_enable_fast_math",
    "xla_cpu_fast_math_honor_nans", "xla_cpu_fast_math_honor_infs",
    "xla_cpu_fast_math_honor_division", "xla_cpu_fast_math_honor_functions",
    "xla_cpu_enable_fast_min_max", "xla_cpu_multi_thread_eigen",
    "xla_force_host_platform_device_count", "xla_gpu_deterministic_ops",
    "xla_gpu_exclude_nondeterministic_ops", "xla_gpu_autotune_level",
    "xla_gpu_enable_fast_min_max", "xla_gpu_enable_triton_gemm", "intra_op_parallelism_threads",
    "inter_op_parallelism_threads", NULL,
};

static int listed(const char *name, size_t len, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (strlen(list[i]) == len && memcmp(list[i], name, len) == 0)
            return 1;
    return 0;
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The reason `name` can never be set by a policy, or NULL. */
static const char *refused_class(const char *name)
{
    static const char *const exact[] = {
        "PATH", "GLIBC_TUNABLES", "GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES",
        "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "IFS", "PS4", "PROMPT_COMMAND", "CDPATH",
        "PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB", "NODE_OPTIONS",
        "NODE_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
        "TCLLIBPATH", "R_PROFILE", "R_PROFILE_USER", NULL,
    };
    if (starts(name, "LD_"))
        return "it tells the dynamic loader what code to load";
    if (starts(name, "DETSHIM_"))
        return "the shim's own settings come from detrun or the environment";
    if (starts(name, "PYTHON") && strcmp(name, "PYTHONHASHSEED") != 0)
        return "it changes what code the Python interpreter runs";
    if (starts(name, "BASH_FUNC_") || starts(name, "LUA_"))
        return "it makes an interpreter or shell run code";
    if (listed(name, strlen(name), exact))
        return "it chooses programs, loader behaviour or code an interpreter or shell runs";
    return NULL;
}

/* 1 for variables whose value is a list of --flags checked one by one. */
static int is_flag_list(const char *name)
{
    return strcmp(name, "XLA_FLAGS") == 0 || strcmp(name, "TF_XLA_FLAGS") == 0;
}

/* Checks each whitespace-separated flag of a flag-list value. */
static int check_flags(const char *name, const char *value, char *msg, size_t msglen)
{
    for (const char *s = value; *s;) {
        s += strspn(s, " \t");
        size_t n = strcspn(s, " \t");
        if (!n)
            break;
        const char *flag = s + strspn(s, "-");
        size_t dashes = (size_t)(flag - s);
        size_t flen = strcspn(flag, "= \t");
        if (dashes != 2 || !flen || !listed(flag, flen, xla_flags)) {
            snprintf(msg, msglen, "[env] %s: flag '%.*s' is not a known determinism switch "
                     "(see docs/security.md for the list); put 'unsafe = yes' before it in "
                     "[env] to set it anyway",
                     name, (int)(n > 80 ? 80 : n), s);
            return -1;
        }
        s += n;
    }
    return 0;
}

int policy_env_check(const char *name, const char *value, int unsafe, char *msg, size_t msglen)
{
    const char *why = refused_class(name);
    if (why) {
        snprintf(msg, msglen, "[env] cannot set %s: %s; a policy may only set determinism "
                 "switches (docs/security.md)", name, why);
        return -1;
    }
    if (!listed(name, strlen(name), switches)) {
        if (unsafe)
            return 1;
        snprintf(msg, msglen, "[env] %s is not a known determinism switch (see "
                 "docs/security.md for the list); put 'unsafe = yes' before it in [env] "
                 "to set it anyway", name);
        return -1;
    }
    if (is_flag_list(name) && check_flags(name, value, msg, msglen) != 0)
        return unsafe ? 1 : -1;
    return 0;
}
