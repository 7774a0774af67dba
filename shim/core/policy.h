/* Policy files: INI files (libinih) naming what to pin per family. This
 * module finds a policy by name or path, parses it strictly (unknown
 * sections or keys and bad values are errors naming file:line), follows
 * `include` lines, and digests the bytes of every file it read for the
 * trace header. It decides nothing about the process: core/env.c applies
 * the environment variables a policy lists.
 */
#ifndef DETSHIM_POLICY_H
#define DETSHIM_POLICY_H

#include <stddef.h>

enum policy_blas_mode { BLAS_MODE_PASSTHROUGH = 0, BLAS_MODE_PINNED = 1, BLAS_MODE_CANONICAL = 2 };
/* [trace] max_bytes when a policy says nothing: 8 GiB per process file,
 * about 30 million records, so a runaway loop cannot fill the disk. */
#define POLICY_DEFAULT_MAX_BYTES (8ULL << 30)

/* [trace] window when a policy says nothing: records per window digest
 * (docs/tracing.md#long-runs-summary-traces); the largest allowed. */
#define POLICY_DEFAULT_WINDOW 4096u
#define POLICY_MAX_WINDOW (1u << 20)

/* [blas] threads = auto. */
#define POLICY_THREADS_AUTO 0

enum policy_rng_pin { RNG_PIN_ALL = 0, RNG_PIN_NONE = 1 };
enum policy_torch { TORCH_UNTOUCHED = 0, TORCH_DETERMINISTIC = 1, TORCH_WARN_ONLY = 2 };
/* [cuda] mode: passthrough traces only; pinned makes cuBLAS, cuBLASLt,
 * cuDNN and cuRAND deterministic through their own controls. */
enum policy_cuda_mode { CUDA_MODE_PASSTHROUGH = 0, CUDA_MODE_PINNED = 1 };
enum policy_tf32 { TF32_ALLOW = 0, TF32_DENY = 1 };
/* [nccl] mode: passthrough traces only; pinned applies the policy's NCCL
 * environment at communicator creation; canonical also sums floating-point
 * reductions in ascending rank order (docs/collectives.md). conflict: a
 * program's own NCCL_* value that differs from the policy's is overridden
 * (recorded) or refused. */
enum policy_nccl_mode { NCCL_MODE_PASSTHROUGH = 0, NCCL_MODE_PINNED = 1, NCCL_MODE_CANONICAL = 2 };
enum policy_nccl_conflict { NCCL_CONFLICT_OVERRIDE = 0, NCCL_CONFLICT_REFUSE = 1 };

/* How a policy sets one environment variable:
 *   SET      NAME = v   the policy's value, even over the user's own
 *   DEFAULT  NAME ?= v  the policy's value unless the user set one
 *   APPEND   NAME += v  the user's value, then " v" (XLA_FLAGS-style
 *                       lists, where a later flag wins)
 *   PREPEND  (PYTHONPATH, from [pytorch]) "v:" before the user's value */
enum policy_env_op { ENV_SET = 0, ENV_DEFAULT = 1, ENV_APPEND = 2, ENV_PREPEND = 3 };

#define POLICY_MAX_ENV 64
#define POLICY_MAX_FILES 8 /* include depth, the top file counted */

struct policy_env {
    char name[64];
    char value[768];
    int op;             /* enum policy_env_op */
    char where[160];    /* "file:line" or "[section] key" that set it last */
    int cpu_isa;        /* an ISA level the value needs (enum policy_isa) */
    int unsafe;         /* not a known determinism switch: set under unsafe = yes */
};

/* ATen takes ATEN_CPU_CAPABILITY on trust and dies of an illegal
 * instruction on a CPU without it, so that value is checked here. */
enum policy_isa { ISA_ANY = 0, ISA_AVX2 = 1, ISA_AVX512 = 2 };

struct policy {
    int blas_mode;
    int blas_threads; /* pinned: the vendor's thread count; canonical: ours;
                       * POLICY_THREADS_AUTO: see core_canonical_threads */
    int trace_frames;
    unsigned long long trace_max_bytes; /* [trace] max_bytes per trace file; 0: unlimited */
    int trace_group_readable; /* [trace] readable_by = group: 0750/0640, else 0700/0600 */
    int trace_summary;         /* [trace] level = summary: window digests only */
    int trace_compress;        /* [trace] compress = zstd: records in zstd frames */
    unsigned trace_window;     /* [trace] window: records per window */
    char artifacts[2048]; /* [trace] artifacts globs, comma-separated */
    char inputs[2048];    /* [trace] inputs globs */
    unsigned long long seed;
    int rng_pin;
    char rng_exempt[1024]; /* extra exempt module prefixes, comma-separated */
    char rng_never_pin[1024]; /* extra never-pin program names, comma-separated */
    int torch;             /* enum policy_torch, from [pytorch] deterministic */
    int tf_seed_hook;      /* [tensorflow] deterministic = on: seed TensorFlow */
    int cuda_mode;         /* enum policy_cuda_mode, from [cuda] mode */
    int cuda_tf32;         /* enum policy_tf32, from [cuda] tf32 */
    int nccl_mode;         /* enum policy_nccl_mode, from [nccl] mode */
    int nccl_conflict;     /* enum policy_nccl_conflict, from [nccl] conflict */
    int nenv;
    struct policy_env env[POLICY_MAX_ENV]; /* in the order first set */
    char path[4096];       /* the top file */
    char files[2048];      /* every file read, in order, " <- " between */
    char digest[65];       /* SHA-256 over every file read, hex */
};

/* The built-in [trace] artifacts and inputs globs (docs/verify.md). */
extern const char policy_default_artifacts[];
extern const char policy_default_inputs[];

/* Finds the policy file for `name`: a path if it contains '/' or ends in
 * ".policy", else <name>.policy in the policies folder beside the library
 * (build tree: <dir>/../policies, installed: <dir>/../share/detshim/policies).
 * Returns 0 and fills `path`, or -1 with a one-line reason in err. */
int policy_find(const char *name, const char *libdir, char *path, size_t pathlen,
                char *err, size_t errlen);

/* Parses the policy at `path` into *p (defaults first), following its
 * includes: `include = NAME` finds NAME.policy beside the including file,
 * then among the shipped policies beside `libdir` (NULL: nowhere else),
 * then a file NAME relative to the including file. Returns 0, or -1 with
 * "file:line: what is wrong" in err. */
int policy_load(const char *path, const char *libdir, struct policy *p, char *err, size_t errlen);

/* The folder holding the Python start-up hook shipped with the policies
 * (policies/python beside the library, as for policy_find). Returns 0 and
 * fills dir, or -1 if neither place has it. */
int policy_hook_dir(const char *libdir, char *dir, size_t dirlen);

/* 1 if `path` names a regular file (stat follows links). */
int policy_regular_file(const char *path);

/* Whether [env] may set `name` to `value` (core/policy_env.c): 0 if it is
 * a known determinism switch; 1 if it is not but `unsafe` (the policy said
 * unsafe = yes) lets it through; -1 with a one-line reason in msg if it is
 * refused (loader, PATH, interpreter and shell variables always are). */
int policy_env_check(const char *name, const char *value, int unsafe, char *msg, size_t msglen);

/* The entry for `name`, or NULL. */
const struct policy_env *policy_env_get(const struct policy *p, const char *name);

#endif
