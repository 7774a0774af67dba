/* Policy files: INI files (libinih) naming what to pin per family. This
 * module finds a policy by name or path, parses it strictly (unknown
 * sections or keys and bad values are errors naming file:line) and digests
 * its bytes for the trace header.
 */
#ifndef DETSHIM_POLICY_H
#define DETSHIM_POLICY_H

#include <stddef.h>

enum policy_blas_mode { BLAS_MODE_PASSTHROUGH = 0, BLAS_MODE_PINNED = 1, BLAS_MODE_CANONICAL = 2 };
enum policy_rng_pin { RNG_PIN_ALL = 0, RNG_PIN_NONE = 1 };

struct policy {
    int blas_mode;
    int blas_threads; /* pinned: the vendor's thread count; canonical: ours */
    int trace_frames;
    unsigned long long seed;
    int rng_pin;
    char rng_exempt[1024]; /* extra exempt module prefixes, comma-separated */
    char path[4096];
    char digest[65];
};

/* Finds the policy file for `name`: a path if it contains '/' or ends in
 * ".policy", else <name>.policy in the policies folder beside the library
 * (build tree: <dir>/../policies, installed: <dir>/../share/detshim/policies).
 * Returns 0 and fills `path`, or -1 with a one-line reason in err. */
int policy_find(const char *name, const char *libdir, char *path, size_t pathlen,
                char *err, size_t errlen);

/* Parses the policy at `path` into *p (defaults first). Returns 0, or -1
 * with "file:line: what is wrong" in err. */
int policy_load(const char *path, struct policy *p, char *err, size_t errlen);

#endif
