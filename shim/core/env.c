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

#include "detshim/core.h"
#include "detshim/env.h"

static struct env_setting settings[POLICY_MAX_ENV + 2];
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

static void apply_one(const struct policy_env *e)
{
    struct env_setting *s = &settings[nsettings++];
    const char *user = getenv(e->name);
    snprintf(s->name, sizeof s->name, "%s", e->name);
    snprintf(s->where, sizeof s->where, "%s", e->where);
    s->origin = ENV_BY_POLICY;
    s->is_hook = 0;
    s->user[0] = 0;
    if (user)
        snprintf(s->user, sizeof s->user, "%s", user);
    switch (e->op) {
    case ENV_SET:
        snprintf(s->value, sizeof s->value, "%s", e->value);
        if (user && strcmp(user, e->value) != 0)
            s->origin = ENV_POLICY_OVER_USER;
        break;
    case ENV_DEFAULT:
        snprintf(s->value, sizeof s->value, "%s", user ? user : e->value);
        if (user && strcmp(user, e->value) != 0)
            s->origin = ENV_BY_USER;
        break;
    case ENV_APPEND:
    case ENV_PREPEND: {
        char sep = e->op == ENV_APPEND ? ' ' : ':';
        if (!user || !*user || strcmp(user, e->value) == 0)
            snprintf(s->value, sizeof s->value, "%s", e->value);
        else if (holds(user, e->value, sep))
            snprintf(s->value, sizeof s->value, "%s", user);
        else if (e->op == ENV_APPEND)
            snprintf(s->value, sizeof s->value, "%s %s", user, e->value);
        else
            snprintf(s->value, sizeof s->value, "%s:%s", e->value, user);
        if (user && *user && strcmp(s->value, e->value) != 0)
            s->origin = ENV_POLICY_WITH_USER;
        break;
    }
    }
    if (s->origin == ENV_POLICY_OVER_USER)
        core_log(LOG_INFO, "%s=%s overridden by the policy (%s): %s", e->name, user, e->where,
                 s->value);
    else if (s->origin == ENV_BY_USER)
        core_log(LOG_INFO, "%s=%s kept: the user's value wins (%s)", e->name, user, e->where);
    setenv(e->name, s->value, 1);
}

void env_apply(const struct policy *p, const char *libdir)
{
    nsettings = 0;
    for (int i = 0; i < p->nenv; i++)
        apply_one(&p->env[i]);
    if (p->torch == TORCH_UNTOUCHED)
        return;
    /* PyTorch has no environment switch for deterministic algorithms: a
     * Python start-up hook shipped beside the policies turns them on when
     * torch is imported. It finds its mode in DETSHIM_TORCH_DETERMINISTIC. */
    struct policy_env hook = { .name = "PYTHONPATH", .op = ENV_PREPEND };
    if (policy_hook_dir(libdir, hook.value, sizeof hook.value) != 0) {
        core_fail("PyTorch's deterministic algorithms",
                  "the policy sets [pytorch] deterministic = %s but the start-up hook "
                  "policies/python/sitecustomize.py is not beside %s; reinstall detshim",
                  p->torch == TORCH_WARN_ONLY ? "warn_only" : "on", libdir);
        return;
    }
    struct policy_env mode = { .name = "DETSHIM_TORCH_DETERMINISTIC", .op = ENV_SET };
    const char *how = p->torch == TORCH_WARN_ONLY ? "warn_only" : "on";
    snprintf(mode.value, sizeof mode.value, "%s", how);
    snprintf(mode.where, sizeof mode.where, "[pytorch] deterministic = %s", how);
    snprintf(hook.where, sizeof hook.where, "[pytorch] deterministic = %s (its start-up hook)", how);
    apply_one(&mode);
    apply_one(&hook);
    settings[nsettings - 1].is_hook = 1;
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
    default:
        snprintf(buf, len, "the policy");
    }
    return buf;
}
