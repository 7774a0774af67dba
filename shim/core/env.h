/* Environment pinning (core/env.c): applies a policy's environment
 * variables at start-up and remembers, per variable, the value the process
 * runs with and who decided it, for the trace header and --explain.
 */
#ifndef DETSHIM_ENV_H
#define DETSHIM_ENV_H

#include <stddef.h>

#include "core/policy.h"

enum env_origin {
    ENV_BY_POLICY = 0,        /* the user had no value, or the same one */
    ENV_POLICY_OVER_USER = 1, /* NAME = v replaced the user's value */
    ENV_BY_USER = 2,          /* NAME ?= v gave way to the user's value */
    ENV_POLICY_WITH_USER = 3, /* NAME += v (or the hook's PYTHONPATH) joined it */
    ENV_POLICY_LOWERED = 4,   /* the CPU lacks the ISA the value names: "default" */
    ENV_USER_UNPINNED = 5,    /* a variable that changes results, set by the
                               * user, which the policy does not pin */
};

struct env_setting {
    char name[64];
    char value[2048];  /* what the process runs with */
    char user[1024];   /* the user's own value, if had_user */
    int had_user;
    char where[160];   /* the policy line that set it */
    int origin;        /* enum env_origin */
    int is_hook;       /* the start-up hook's PYTHONPATH entry */
    int unsafe;        /* set under the policy's unsafe = yes */
};

/* Sets every variable of p with setenv: its [env] lines and family keys,
 * and, for every policy, the Python start-up hook (PYTHONPATH,
 * found beside libdir) and what it reads (TensorFlow's seed is `seed`).
 * Then notes the variables known to change results that the user set and
 * the policy leaves alone. Call once, before other threads exist. */
void env_apply(const struct policy *p, const char *libdir, unsigned long long seed);

int env_count(void);
/* The i-th setting applied, in policy order, or NULL. */
const struct env_setting *env_get(int i);
/* Prints shell assignments (`NAME='value'; export NAME`) of every value
 * the policy decided, and DETSHIM_USER_ENV holding the user's own values
 * of those variables ("NAME=value" lines, "NAME" where the user had none), for `detrun` to set before the program starts: a
 * library's constructor that reads a variable (libgomp reads OMP_*) may
 * otherwise run before the shim's. env_apply reads DETSHIM_USER_ENV back
 * so that who won is still known. */
void env_print_exports(void);
/* "the policy", "the user (...)", "the policy, over the user's 2": fills buf. */
const char *env_origin_text(const struct env_setting *s, char *buf, size_t len);

#endif
