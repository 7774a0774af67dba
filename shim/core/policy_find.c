/* Where policy files and the Python start-up hook are: a policy named by
 * DETSHIM_POLICY (a name, or a path) looked up beside the library, in the
 * build tree and then in an installed prefix; the hook's folder the same
 * way. Parsing is policy.c's.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/policy.h"

int policy_regular_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Where shipped files live beside the library: the build tree, then an
 * installed prefix. */
static const char *const places[] = { "%s/../policies/%s", "%s/../share/detshim/policies/%s" };

int policy_find(const char *name, const char *libdir, char *path, size_t pathlen,
                char *err, size_t errlen)
{
    size_t len = strlen(name);
    if (!len) {
        snprintf(err, errlen, "DETSHIM_POLICY is empty; give a policy name (e.g. default) or a path");
        return -1;
    }
    if (strchr(name, '/') || (len > 7 && strcmp(name + len - 7, ".policy") == 0)) {
        if (!policy_regular_file(name)) {
            snprintf(err, errlen, "DETSHIM_POLICY=%s: no such policy file", name);
            return -1;
        }
        snprintf(path, pathlen, "%s", name);
        return 0;
    }
    char file[300];
    snprintf(file, sizeof file, "%.250s.policy", name);
    for (size_t i = 0; i < sizeof places / sizeof *places; i++) {
        snprintf(path, pathlen, places[i], libdir, file);
        char *real = policy_regular_file(path) ? realpath(path, NULL) : NULL;
        if (real) {
            snprintf(path, pathlen, "%s", real);
            free(real);
            return 0;
        }
    }
    /* The library's parent, without "..", so the folders named are ones a
     * user can paste. */
    char up[PATH_MAX + 4];
    snprintf(up, sizeof up, "%s/..", libdir);
    char *real = realpath(up, NULL);
    snprintf(err, errlen,
             "DETSHIM_POLICY=%s: no policy of that name in %s/policies or "
             "%s/share/detshim/policies; use a name listed there or a path",
             name, real ? real : up, real ? real : up);
    free(real);
    return -1;
}

int policy_hook_dir(const char *libdir, char *dir, size_t dirlen)
{
    char probe[PATH_MAX + 32];
    for (size_t i = 0; i < sizeof places / sizeof *places; i++) {
        snprintf(dir, dirlen, places[i], libdir, "python");
        snprintf(probe, sizeof probe, "%s/sitecustomize.py", dir);
        if (policy_regular_file(probe)) {
            char *real = realpath(dir, NULL);
            if (real) {
                snprintf(dir, dirlen, "%s", real);
                free(real);
            }
            return 0;
        }
    }
    return -1;
}
