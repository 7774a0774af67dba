/* Policy files: found by name or path, parsed strictly with libinih,
 * includes followed, and digested (SHA-256 over every file read) for the
 * trace header, so two runs under different policies can never look alike.
 * Family sections ([cuda], [nccl], [blas]) name their switches the
 * family's way; the ones that are environment variables become entries of
 * the same list as [env], so core/env.c applies and records them all alike.
 */
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/policy.h"

/* libinih reads a line into INI_MAX_LINE bytes, newline and NUL included;
 * a longer line would be split and misread. */
#define POLICY_MAX_LINE (INI_MAX_LINE - 2)

struct parse_state {
    struct policy *p;
    const char *libdir;         /* where shipped policies are, or NULL */
    const char *file;           /* the file being parsed */
    int depth;                  /* 0: the top file */
    char *stack[POLICY_MAX_FILES]; /* real paths of the files being parsed */
    EVP_MD_CTX *md;
    int env_unsafe; /* this file's [env] said unsafe = yes */
    char msg[512];  /* first error, without the file:line prefix */
    char full[1024]; /* or an included file's error, already whole */
};

static int parse_file(struct parse_state *st, const char *path, char *err, size_t errlen);

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
    if (!*s || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end || v > max)
        return -1;
    *out = v;
    return 0;
}

static int set_error(struct parse_state *st, const char *fmt, const char *a, const char *b)
{
    if (!st->msg[0])
        snprintf(st->msg, sizeof st->msg, fmt, a, b);
    return 0; /* tells inih this line is an error */
}

/* Index of `value` in the NULL-terminated `names`, or -1. */
static int pick(const char *value, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(value, names[i]) == 0)
            return i;
    return -1;
}

const struct policy_env *policy_env_get(const struct policy *p, const char *name)
{
    for (int i = 0; i < p->nenv; i++)
        if (strcmp(p->env[i].name, name) == 0)
            return &p->env[i];
    return NULL;
}

static void env_remove(struct policy *p, const char *name)
{
    struct policy_env *e = (struct policy_env *)policy_env_get(p, name);
    if (!e)
        return;
    size_t i = (size_t)(e - p->env);
    memmove(e, e + 1, (size_t)(p->nenv - 1 - (int)i) * sizeof *e);
    p->nenv--;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Records NAME op value, later lines winning over earlier ones (and an
 * including file over the file it includes): set and ?= replace, += adds
 * to what the policy already appends or sets. */
static int env_put(struct parse_state *st, const char *name, int op, const char *value,
                   const char *where)
{
    struct policy *p = st->p;
    struct policy_env *e = (struct policy_env *)policy_env_get(p, name);
    if (!e) {
        if (p->nenv == POLICY_MAX_ENV)
            return set_error(st, "too many environment variables (at most %s)%s", "64", "");
        e = &p->env[p->nenv++];
        memset(e, 0, sizeof *e);
        snprintf(e->name, sizeof e->name, "%s", name);
        e->op = op;
    } else if (op == ENV_APPEND && e->value[0]) {
        size_t len = strlen(e->value);
        if (len + 1 + strlen(value) >= sizeof e->value)
            return set_error(st, "the value of %s grows too long (at most %s bytes)", name, "767");
        snprintf(e->value + len, sizeof e->value - len, " %s", value);
        snprintf(e->where, sizeof e->where, "%s", where);
        return 1;
    } else {
        e->op = op;
    }
    e->cpu_isa = ISA_ANY;
    if (strlen(value) >= sizeof e->value)
        return set_error(st, "the value of %s is too long (at most %s bytes)", name, "767");
    snprintf(e->value, sizeof e->value, "%s", value);
    snprintf(e->where, sizeof e->where, "%s", where);
    return 1;
}

static int on_blas(struct parse_state *st, const char *key, const char *value)
{
    if (strcmp(key, "mode") == 0) {
        static const char *const modes[] = { [BLAS_MODE_PASSTHROUGH] = "passthrough",
                                             [BLAS_MODE_PINNED] = "pinned",
                                             [BLAS_MODE_CANONICAL] = "canonical", NULL };
        int m = pick(value, modes);
        if (m < 0)
            return set_error(st, "bad value '%s' for [blas] mode (expected: %s)", value,
                             "passthrough, pinned or canonical");
        st->p->blas_mode = m;
        return 1;
    }
    if (strcmp(key, "threads") == 0) {
        unsigned long long v;
        if (strcmp(value, "auto") == 0) {
            st->p->blas_threads = POLICY_THREADS_AUTO;
            return 1;
        }
        if (parse_uint(value, 256, &v) != 0 || v == 0)
            return set_error(st, "bad value '%s' for [blas] threads (%s)", value,
                             "expected auto or a whole number from 1 to 256");
        st->p->blas_threads = (int)v;
        return 1;
    }
    return set_error(st, "unknown key '%s' in [blas] (known: %s)", key, "mode, threads");
}

/* Weights, checkpoints and exports of torch, safetensors, numpy,
 * Keras/HDF5, flax/orbax, joblib/pickle and ONNX. */
const char policy_default_artifacts[] =
    "*.pt, *.pth, *.bin, *.safetensors, *.npy, *.npz, *.h5, *.hdf5, *.keras, *.weights.h5, "
    "*.msgpack, *.ckpt, *.joblib, *.pkl, *.pickle, *.onnx, *.params, *.tflite, *.pb, "
    "*.ocdbt, _METADATA, _CHECKPOINT_METADATA, checkpoint";
/* Data shards, checkpoints to resume from, tokenizer files. */
const char policy_default_inputs[] =
    "*.csv, *.tsv, *.jsonl, *.parquet, *.arrow, *.tfrecord, *.tfrecords, *.npy, *.npz, "
    "*.pt, *.pth, *.bin, *.safetensors, *.ckpt, *.h5, *.hdf5, *.keras, *.msgpack, *.ocdbt, "
    "*.joblib, *.pkl, *.pickle, *-ubyte, *-ubyte.gz, *.idx, *.tar, *.zip, *.gz, "
    "tokenizer.json, tokenizer_config.json, vocab.json, vocab.txt, merges.txt, *.model, "
    "*.spm";

/* A comma-separated list of globs: no control or quoting characters. */
static int set_globs(struct parse_state *st, const char *key, const char *value, char *dst,
                     size_t len)
{
    if (strlen(value) >= len || strpbrk(value, "\"'`$;|&<>"))
        return set_error(st, "bad value '%s' for [trace] %s (expected globs, comma-separated)",
                         value, key);
    snprintf(dst, len, "%s", value);
    return 1;
}

static void where_key(char *where, size_t len, const char *section, const char *key,
                      const char *op, const char *value, const struct parse_state *st);

static int on_trace(struct parse_state *st, const char *key, const char *value)
{
    unsigned long long v;
    if (strcmp(key, "artifacts") == 0)
        return set_globs(st, key, value, st->p->artifacts, sizeof st->p->artifacts);
    if (strcmp(key, "inputs") == 0)
        return set_globs(st, key, value, st->p->inputs, sizeof st->p->inputs);
    if (strcmp(key, "readable_by") == 0) {
        static const char *const who[] = { "owner", "group", NULL };
        int w = pick(value, who);
        if (w < 0)
            return set_error(st, "bad value '%s' for [trace] readable_by (expected: %s)", value,
                             "owner or group");
        st->p->trace_group_readable = w;
        return 1;
    }
    if (strcmp(key, "max_bytes") == 0) {
        /* a size with an optional K, M, G or T (powers of 1024), or unlimited */
        if (strcmp(value, "unlimited") == 0) {
            st->p->trace_max_bytes = 0;
            return 1;
        }
        char num[32];
        size_t n = strlen(value);
        int shift = 0;
        const char *units = "KMGT", *u = n ? strchr(units, value[n - 1]) : NULL;
        if (u && value[n - 1]) {
            shift = 10 * (int)(u - units + 1);
            n--;
        }
        snprintf(num, sizeof num, "%.*s", (int)(n < sizeof num ? n : sizeof num - 1), value);
        if (parse_uint(num, (1ULL << 50) >> shift, &v) != 0 || v == 0)
            return set_error(st, "bad value '%s' for [trace] max_bytes (%s)", value,
                             "expected a size such as 8G, 500M or 1048576, or unlimited");
        st->p->trace_max_bytes = v << shift;
        return 1;
    }
    if (strcmp(key, "level") == 0) { /* window digests only, or every record */
        static const char *const levels[] = { "full", "summary", NULL };
        int l = pick(value, levels);
        if (l < 0)
            return set_error(st, "bad value '%s' for [trace] level (expected: %s)", value,
                             "full or summary");
        st->p->trace_summary = l;
        return 1;
    }
    if (strcmp(key, "compress") == 0) { /* records written in zstd frames */
        static const char *const kinds[] = { "off", "zstd", NULL };
        int c = pick(value, kinds);
        if (c < 0)
            return set_error(st, "bad value '%s' for [trace] compress (expected: %s)", value,
                             "off or zstd");
        st->p->trace_compress = c;
        return 1;
    }
    if (strcmp(key, "window") == 0) { /* records per window digest */
        if (parse_uint(value, POLICY_MAX_WINDOW, &v) != 0 || v == 0)
            return set_error(st, "bad value '%s' for [trace] window (%s)", value,
                             "expected a whole number of records from 1 to 1048576");
        st->p->trace_window = (unsigned)v;
        return 1;
    }
    if (strcmp(key, "steps") == 0 || strcmp(key, "ops") == 0) {
        /* Records the Python start-up hook makes (docs/frameworks.md); it
         * reads them as DETSHIM_TRACE_STEPS / DETSHIM_TRACE_OPS, and a
         * user's own value of those wins (?=) for one run. */
        static const char *const onoff[] = { "off", "on", NULL };
        const char *var = key[0] == 's' ? "DETSHIM_TRACE_STEPS" : "DETSHIM_TRACE_OPS";
        int on = pick(value, onoff);
        if (on < 0)
            return set_error(st, "bad value '%s' for [trace] %s (expected: on or off)", value,
                             key);
        if (!on) {
            env_remove(st->p, var);
            return 1;
        }
        char where[160];
        where_key(where, sizeof where, "trace", key, "=", value, st);
        return env_put(st, var, ENV_DEFAULT, "on", where);
    }
    if (strcmp(key, "frames") != 0)
        return set_error(st, "unknown key '%s' in [trace] (known: %s)", key,
                         "frames, artifacts, inputs, max_bytes, readable_by, level, window, "
                         "compress, steps, ops");
    if (parse_uint(value, 16, &v) != 0)
        return set_error(st, "bad value '%s' for [trace] frames (%s)", value,
                         "expected a whole number from 0 to 16");
    st->p->trace_frames = (int)v;
    return 1;
}

/* Only the characters of `allowed` (a whole, non-empty value). */
static int only_chars(const char *v, const char *allowed)
{
    return *v && strspn(v, allowed) == strlen(v);
}

#define ALNUM "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

static int on_rng(struct parse_state *st, const char *key, const char *value)
{
    if (strcmp(key, "seed") == 0) {
        if (parse_uint(value, ~0ULL, &st->p->seed) != 0)
            return set_error(st, "bad value '%s' for [rng] seed (%s)", value,
                             "expected a non-negative whole number");
        return 1;
    }
    if (strcmp(key, "pin") == 0) {
        static const char *const pins[] = { [RNG_PIN_ALL] = "all", [RNG_PIN_NONE] = "none", NULL };
        int v = pick(value, pins);
        if (v < 0)
            return set_error(st, "bad value '%s' for [rng] pin (expected: %s)", value, "all or none");
        st->p->rng_pin = v;
        return 1;
    }
    /* File names, e.g. "libfoo, libbar" (module prefixes) or "vault"
     * (executables): a list the rng module matches item by item. */
    char *list = strcmp(key, "exempt_modules") == 0       ? st->p->rng_exempt
                 : strcmp(key, "never_pin_programs") == 0 ? st->p->rng_never_pin
                                                          : NULL;
    if (list) {
        if ((*value && !only_chars(value, ALNUM "_+-., ")) ||
            strlen(value) >= sizeof st->p->rng_exempt)
            return set_error(st, "bad value '%s' for [rng] %s (expected file names, "
                             "comma-separated)", value, key);
        snprintf(list, sizeof st->p->rng_exempt, "%s", value);
        return 1;
    }
    return set_error(st, "unknown key '%s' in [rng] (known: %s)", key,
                     "seed, pin, exempt_modules, never_pin_programs");
}

/* "file [section] key = value", the line as written, for --explain. */
static void where_key(char *where, size_t len, const char *section, const char *key,
                      const char *op, const char *value, const struct parse_state *st)
{
    snprintf(where, len, "%s [%s] %s %s %.60s%s", base_name(st->file), section, key, op, value,
             strlen(value) > 60 ? "..." : "");
}

/* [cuda]: the mode of the cuda family (shim/cuda), and TF32 and cuBLAS's
 * workspace, both also read by the CUDA libraries from the environment at
 * their own start. */
static int on_cuda(struct parse_state *st, const char *key, const char *value)
{
    char where[160];
    where_key(where, sizeof where, "cuda", key, "=", value, st);
    if (strcmp(key, "mode") == 0) {
        static const char *const modes[] = { [CUDA_MODE_PASSTHROUGH] = "passthrough",
                                             [CUDA_MODE_PINNED] = "pinned", NULL };
        int m = pick(value, modes);
        if (m < 0)
            return set_error(st, "bad value '%s' for [cuda] mode (expected: %s)", value,
                             "passthrough or pinned");
        st->p->cuda_mode = m;
        return 1;
    }
    if (strcmp(key, "tf32") == 0) {
        if (strcmp(value, "deny") == 0) {
            st->p->cuda_tf32 = TF32_DENY;
            return env_put(st, "NVIDIA_TF32_OVERRIDE", ENV_SET, "0", where);
        }
        if (strcmp(value, "allow") != 0)
            return set_error(st, "bad value '%s' for [cuda] tf32 (expected: %s)", value,
                             "allow or deny");
        st->p->cuda_tf32 = TF32_ALLOW;
        env_remove(st->p, "NVIDIA_TF32_OVERRIDE");
        return 1;
    }
    if (strcmp(key, "cublas_workspace") == 0) {
        /* one or more ":SIZE_KiB:COUNT" pairs, as cuBLAS documents */
        int pairs = 0;
        const char *s = value;
        while (*s == ':') {
            size_t a = strspn(s + 1, "0123456789");
            if (!a || s[1 + a] != ':')
                break;
            size_t b = strspn(s + 2 + a, "0123456789");
            if (!b)
                break;
            s += 2 + a + b;
            pairs++;
        }
        if (!pairs || *s || strlen(value) > 64)
            return set_error(st, "bad value '%s' for [cuda] cublas_workspace (%s)", value,
                             "expected :SIZE:COUNT pairs, e.g. :4096:8");
        return env_put(st, "CUBLAS_WORKSPACE_CONFIG", ENV_SET, value, where);
    }
    return set_error(st, "unknown key '%s' in [cuda] (known: %s)", key,
                     "mode, tf32, cublas_workspace");
}

/* [nccl]: the collective algorithm, protocol and channel count fix the
 * reduction order; NVLS and CollNet reduce in the switch or the network,
 * in no fixed order. mode and conflict are read by shim/nccl. */
static int on_nccl(struct parse_state *st, const char *key, const char *value)
{
    static const char *const onoff[] = { "off", "on", NULL };
    static const char *const modes[] = { "passthrough", "pinned", "canonical", NULL };
    static const char *const conflicts[] = { "override", "refuse", NULL };
    char where[160];
    where_key(where, sizeof where, "nccl", key, "=", value, st);
    int is_mode = strcmp(key, "mode") == 0, is_conflict = strcmp(key, "conflict") == 0;
    int v = pick(value, is_mode ? modes : is_conflict ? conflicts : onoff);
    if (strcmp(key, "algo") == 0 || strcmp(key, "proto") == 0) {
        if (!only_chars(value, ALNUM ",^") || strlen(value) > 64)
            return set_error(st, "bad value '%s' for [nccl] %s (expected NCCL's names, "
                             "comma-separated, e.g. Ring or Simple)", value, key);
        return env_put(st, key[0] == 'a' ? "NCCL_ALGO" : "NCCL_PROTO", ENV_SET, value, where);
    }
    if (strcmp(key, "channels") == 0) {
        unsigned long long n;
        if (strcmp(value, "auto") == 0) {
            env_remove(st->p, "NCCL_MIN_NCHANNELS");
            env_remove(st->p, "NCCL_MAX_NCHANNELS");
            return 1;
        }
        if (parse_uint(value, 64, &n) != 0 || n == 0)
            return set_error(st, "bad value '%s' for [nccl] %s (expected 1..64 or auto)", value, key);
        return env_put(st, "NCCL_MIN_NCHANNELS", ENV_SET, value, where) &&
               env_put(st, "NCCL_MAX_NCHANNELS", ENV_SET, value, where);
    }
    if (!is_mode && !is_conflict && strcmp(key, "nvls") != 0 && strcmp(key, "collnet") != 0)
        return set_error(st, "unknown key '%s' in [nccl] (known: %s)", key,
                         "mode, conflict, algo, proto, channels, nvls, collnet");
    if (v < 0)
        return set_error(st, "bad value '%s' for [nccl] %s", value,
                         is_mode ? "mode (expected: passthrough, pinned or canonical)"
                         : is_conflict ? "conflict (expected: override or refuse)"
                                       : "nvls or collnet (expected: on or off)");
    if (is_mode || is_conflict) {
        *(is_mode ? &st->p->nccl_mode : &st->p->nccl_conflict) = v;
        return 1;
    }
    return env_put(st, key[0] == 'n' ? "NCCL_NVLS_ENABLE" : "NCCL_COLLNET_ENABLE", ENV_SET,
                   v ? "1" : "0", where);
}

static int on_pytorch(struct parse_state *st, const char *key, const char *value)
{
    if (strcmp(key, "cpu_capability") == 0) {
        static const char *const isas[] = { [ISA_ANY] = "default", [ISA_AVX2] = "avx2",
                                            [ISA_AVX512] = "avx512", NULL };
        int v = pick(value, isas);
        if (v < 0)
            return set_error(st, "bad value '%s' for [pytorch] cpu_capability (expected: %s)",
                             value, "default, avx2 or avx512");
        char where[160];
        where_key(where, sizeof where, "pytorch", key, "=", value, st);
        if (!env_put(st, "ATEN_CPU_CAPABILITY", ENV_SET, value, where))
            return 0;
        ((struct policy_env *)policy_env_get(st->p, "ATEN_CPU_CAPABILITY"))->cpu_isa = v;
        return 1;
    }
    if (strcmp(key, "deterministic") != 0)
        return set_error(st, "unknown key '%s' in [pytorch] (known: %s)", key,
                         "deterministic, cpu_capability");
    static const char *const modes[] = { [TORCH_UNTOUCHED] = "off",
                                         [TORCH_DETERMINISTIC] = "on",
                                         [TORCH_WARN_ONLY] = "warn_only", NULL };
    int v = pick(value, modes);
    if (v < 0)
        return set_error(st, "bad value '%s' for [pytorch] deterministic (expected: %s)", value,
                         "on, warn_only or off");
    st->p->torch = v;
    return 1;
}

/* [tensorflow] deterministic = on: TensorFlow's own switches, and a seed
 * for its random ops, without which those switches make them raise. */
static int on_tensorflow(struct parse_state *st, const char *key, const char *value)
{
    if (strcmp(key, "deterministic") != 0)
        return set_error(st, "unknown key '%s' in [tensorflow] (known: %s)", key, "deterministic");
    static const char *const onoff[] = { "off", "on", NULL };
    int v = pick(value, onoff);
    if (v < 0)
        return set_error(st, "bad value '%s' for [tensorflow] deterministic (expected: %s)", value,
                         "on or off");
    st->p->tf_seed_hook = v;
    if (!v) {
        env_remove(st->p, "TF_DETERMINISTIC_OPS");
        env_remove(st->p, "TF_CUDNN_DETERMINISTIC");
        return 1;
    }
    char where[160];
    where_key(where, sizeof where, "tensorflow", key, "=", value, st);
    return env_put(st, "TF_DETERMINISTIC_OPS", ENV_SET, "1", where) &&
           env_put(st, "TF_CUDNN_DETERMINISTIC", ENV_SET, "1", where);
}

/* [env] NAME = v, NAME ?= v, NAME += v. libinih splits at the first '=',
 * so the operator's first character ends the key. */
static int on_env(struct parse_state *st, const char *key, const char *value)
{
    char name[64];
    size_t len = strlen(key);
    int op = ENV_SET;
    if (len && (key[len - 1] == '+' || key[len - 1] == '?')) {
        op = key[len - 1] == '+' ? ENV_APPEND : ENV_DEFAULT;
        len--;
        while (len && (key[len - 1] == ' ' || key[len - 1] == '\t'))
            len--;
    }
    if (!len || len >= sizeof name || (key[0] >= '0' && key[0] <= '9'))
        return set_error(st, "bad variable name '%s' in [env]%s", key,
                         " (expected NAME = value, NAME ?= value or NAME += value)");
    memcpy(name, key, len);
    name[len] = 0;
    if (!only_chars(name, ALNUM "_"))
        return set_error(st, "bad variable name '%s' in [env]%s", name,
                         " (letters, digits and _ only)");
    if (strcmp(name, "unsafe") == 0 && op == ENV_SET) {
        static const char *const yesno[] = { "no", "yes", NULL };
        int v = pick(value, yesno);
        if (v < 0)
            return set_error(st, "bad value '%s' for [env] unsafe (expected: %s)", value,
                             "yes or no");
        st->env_unsafe = v;
        return 1;
    }
    char why[400];
    int unsafe = policy_env_check(name, value, st->env_unsafe, why, sizeof why);
    if (unsafe < 0)
        return set_error(st, "%s%s", why, "");
    char where[160];
    static const char *const ops[] = { [ENV_SET] = "=", [ENV_DEFAULT] = "?=", [ENV_APPEND] = "+=" };
    where_key(where, sizeof where, "env", name, ops[op], value, st);
    if (!env_put(st, name, op, value, where))
        return 0;
    ((struct policy_env *)policy_env_get(st->p, name))->unsafe |= unsafe;
    return 1;
}

static const char *const known_sections[] = { "blas",    "trace",      "rng", "cuda",
                                               "nccl",    "pytorch",    "tensorflow", "env" };
#define KNOWN_SECTIONS "blas, trace, rng, cuda, nccl, pytorch, tensorflow, env"

/* `include = NAME` before the first section, looked for in this order:
 * an absolute path as it is; NAME.policy, then NAME, beside this file; a
 * shipped policy of that name (as DETSHIM_POLICY finds them). */
static int on_include(struct parse_state *st, const char *value)
{
    char path[PATH_MAX + 16], dir[PATH_MAX], err[64];
    const char *slash = strrchr(st->file, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - st->file) : 1, slash ? st->file : ".");
    if (!*value)
        return set_error(st, "include needs a policy name or path%s%s", "", "");
    int found = 0;
    if (value[0] == '/') {
        snprintf(path, sizeof path, "%s", value);
        found = policy_regular_file(path);
    } else {
        snprintf(path, sizeof path, "%s/%s.policy", dir, value);
        found = policy_regular_file(path);
        if (!found) {
            snprintf(path, sizeof path, "%s/%s", dir, value);
            found = policy_regular_file(path);
        }
        if (!found && st->libdir && !strchr(value, '/') && !strstr(value, ".policy"))
            found = policy_find(value, st->libdir, path, sizeof path, err, sizeof err) == 0;
    }
    if (!found)
        return set_error(st, "cannot include '%s': no %s.policy beside this policy or among "
                         "detshim's policies, and no file of that name", value, value);
    char *real = realpath(path, NULL);
    if (!real)
        return set_error(st, "cannot include '%s': %s", value, strerror(errno));
    int seen = 0;
    for (int i = 0; i < st->depth; i++)
        seen |= strcmp(st->stack[i], real) == 0;
    free(real);
    if (seen)
        return set_error(st, "include cycle: '%s' is %s being read; remove one of the includes",
                         value, "already");
    if (st->depth == POLICY_MAX_FILES)
        return set_error(st, "cannot include '%s': includes nest deeper than %s files", value, "8");
    if (parse_file(st, path, st->full, sizeof st->full) != 0)
        return 0; /* st->full says what and where */
    return 1;
}

static int on_entry(void *user, const char *section, const char *key, const char *value)
{
    struct parse_state *st = user;
    if (st->msg[0] || st->full[0])
        return 1; /* inih reports the first error's line; ignore the rest */
    if (strcmp(key, "include") == 0) {
        if (section[0])
            return set_error(st, "include in [%s]: put include lines before the first "
                             "[section]%s", section, "");
        return on_include(st, value);
    }
    if (!section[0])
        return set_error(st, "key '%s' is outside any section%s", key,
                         " (start with a [section] line)");
    static int (*const handlers[])(struct parse_state *, const char *, const char *) = {
        on_blas, on_trace, on_rng, on_cuda, on_nccl, on_pytorch, on_tensorflow, on_env,
    };
    for (size_t i = 0; i < sizeof handlers / sizeof *handlers; i++)
        if (strcmp(section, known_sections[i]) == 0)
            return handlers[i](st, key, value);
    /* check_lines reports these first, at the section's own line. */
    return set_error(st, "unknown section [%s] (known: %s)", section, KNOWN_SECTIONS);
}

/* A policy larger than this is not a policy. */
#define POLICY_MAX_BYTES (256 * 1024)

/* The section name of a "[name]" line (s at the '['), checked against the
 * known ones. Returns 0, or -1 with err filled. */
static int check_section_line(const char *s, size_t len, struct parse_state *st, int lineno,
                              char *err, size_t errlen)
{
    const char *end = memchr(s, ']', len);
    if (!end)
        return 0;
    size_t n = (size_t)(end - s - 1);
    for (size_t i = 0; i < sizeof known_sections / sizeof *known_sections; i++)
        if (strlen(known_sections[i]) == n && memcmp(s + 1, known_sections[i], n) == 0)
            return 0;
    snprintf(err, errlen, "%s:%d: unknown section [%.*s] (known: %s)", st->file, lineno,
             (int)(n > 64 ? 64 : n), s + 1, KNOWN_SECTIONS);
    return -1;
}

/* Checks what libinih cannot see or would misread, over the file's raw
 * bytes: a NUL or other control character (libinih would stop reading the
 * line at a NUL, hiding the rest of it from every check), an unknown but
 * empty section (inih reports a section only through its keys) and an
 * overlong line. Also feeds the file's bytes to the digest. */
static int check_lines(FILE *f, struct parse_state *st, char *err, size_t errlen)
{
    static char buf[POLICY_MAX_BYTES + 1]; /* start-up is single-threaded */
    size_t total = fread(buf, 1, sizeof buf, f);
    if (ferror(f)) {
        snprintf(err, errlen, "cannot read policy %s: %s", st->file, strerror(errno));
        return -1;
    }
    if (total > POLICY_MAX_BYTES) {
        snprintf(err, errlen, "policy %s is larger than %d KiB; is it a policy file?", st->file,
                 POLICY_MAX_BYTES / 1024);
        return -1;
    }
    buf[total] = 0;
    int lineno = 1;
    for (size_t start = 0; start < total; lineno++) {
        const char *nl = memchr(buf + start, '\n', total - start);
        size_t len = nl ? (size_t)(nl - (buf + start)) : total - start;
        const char *line = buf + start;
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)line[i];
            if ((c < 0x20 && c != '\t') || c == 0x7f) {
                snprintf(err, errlen, "%s:%d: control character 0x%02x at column %zu; a "
                         "policy is plain text (tabs allowed, LF line ends): remove it",
                         st->file, lineno, c, i + 1);
                return -1;
            }
        }
        if (len > POLICY_MAX_LINE) {
            snprintf(err, errlen, "%s:%d: line longer than %d characters; split a long value "
                     "over several NAME += value lines", st->file, lineno, POLICY_MAX_LINE);
            return -1;
        }
        size_t lead = strspn(line, " \t");
        if (lead < len && line[lead] == '[' &&
            check_section_line(line + lead, len - lead, st, lineno, err, errlen) != 0)
            return -1;
        start += len + 1;
    }
    /* Each file's bytes enter the digest with their length, so the split
     * between an including and an included file is part of it. */
    unsigned char lenbuf[8];
    for (int i = 0; i < 8; i++)
        lenbuf[i] = (unsigned char)((uint64_t)total >> (8 * i));
    EVP_DigestUpdate(st->md, lenbuf, sizeof lenbuf);
    EVP_DigestUpdate(st->md, buf, total);
    rewind(f);
    return 0;
}

static void note_file(struct policy *p, const char *path)
{
    size_t len = strlen(p->files);
    snprintf(p->files + len, sizeof p->files - len, "%s%s", len ? " <- " : "", path);
}

/* Parses one file (the top one, or an included one) into st->p. On error
 * fills err: "file:line: what", with "(included from file:line)" for each
 * include the error sits under. */
static int parse_file(struct parse_state *st, const char *path, char *err, size_t errlen)
{
    char *real = realpath(path, NULL);
    FILE *f = real ? fopen(path, "r") : NULL;
    if (!f) {
        snprintf(err, errlen, "cannot read policy %s: %s", path, strerror(errno));
        free(real);
        return -1;
    }
    const char *outer = st->file;
    int outer_unsafe = st->env_unsafe;
    st->env_unsafe = 0; /* unsafe = yes covers the lines after it in its own file */
    char outer_msg[sizeof st->msg];
    memcpy(outer_msg, st->msg, sizeof outer_msg);
    st->msg[0] = 0;
    st->file = path;
    st->stack[st->depth++] = real;
    note_file(st->p, path);
    int rc = check_lines(f, st, err, errlen);
    if (rc == 0) {
        int line = ini_parse_file(f, on_entry, st);
        if (line != 0) {
            char whole[1024];
            if (st->full[0])
                snprintf(whole, sizeof whole, "%.900s (included from %s:%d)", st->full,
                         base_name(path), line);
            else
                snprintf(whole, sizeof whole, "%s:%d: %s", path, line,
                         st->msg[0] ? st->msg : "syntax error (expected [section] or key = value)");
            snprintf(err, errlen, "%s", whole);
            rc = -1;
        }
    }
    fclose(f);
    st->depth--;
    free(real);
    st->file = outer;
    st->env_unsafe = outer_unsafe;
    memcpy(st->msg, outer_msg, sizeof outer_msg);
    return rc;
}

/* Pinned and canonical BLAS: vendor libraries that read their determinism
 * switches from the environment read them at their own start, before any
 * call reaches us: MKL's conditional numerical reproducibility, and no
 * dynamic thread counts (MKL's and OpenMP's), which vary the split with
 * the load. An [env] line for the same variable wins. */
static void add_blas_env(struct parse_state *st)
{
    static const char *const vars[][2] = {
        { "MKL_CBWR", "AUTO" }, { "MKL_DYNAMIC", "FALSE" }, { "OMP_DYNAMIC", "FALSE" },
    };
    static const char *const modes[] = { "passthrough", "pinned", "canonical" };
    if (st->p->blas_mode == BLAS_MODE_PASSTHROUGH)
        return;
    char where[160];
    snprintf(where, sizeof where, "[blas] mode = %s", modes[st->p->blas_mode]);
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (!policy_env_get(st->p, vars[i][0]))
            env_put(st, vars[i][0], ENV_SET, vars[i][1], where);
}

int policy_load(const char *path, const char *libdir, struct policy *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->blas_mode = BLAS_MODE_PASSTHROUGH;
    p->blas_threads = POLICY_THREADS_AUTO;
    p->trace_frames = 4;
    p->trace_max_bytes = POLICY_DEFAULT_MAX_BYTES;
    p->trace_window = POLICY_DEFAULT_WINDOW;
    snprintf(p->artifacts, sizeof p->artifacts, "%s", policy_default_artifacts);
    snprintf(p->inputs, sizeof p->inputs, "%s", policy_default_inputs);
    snprintf(p->path, sizeof p->path, "%s", path);
    snprintf(p->digest, sizeof p->digest, "none");

    struct parse_state st = { .p = p, .file = path, .libdir = libdir };
    st.md = EVP_MD_CTX_new();
    if (!st.md || !EVP_DigestInit_ex(st.md, EVP_sha256(), NULL)) {
        EVP_MD_CTX_free(st.md);
        snprintf(err, errlen, "cannot digest policy %s: OpenSSL has no SHA-256", path);
        return -1;
    }
    int rc = parse_file(&st, path, err, errlen);
    unsigned char md[32];
    unsigned int mdlen = 0;
    if (rc == 0 && (!EVP_DigestFinal_ex(st.md, md, &mdlen) || mdlen != 32)) {
        snprintf(err, errlen, "cannot digest policy %s", path);
        rc = -1;
    }
    EVP_MD_CTX_free(st.md);
    if (rc != 0)
        return -1;
    for (int i = 0; i < 32; i++)
        snprintf(p->digest + 2 * i, 3, "%02x", md[i]);
    add_blas_env(&st);
    return 0;
}
