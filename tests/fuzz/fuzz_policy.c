/* libFuzzer harness for the policy parser (shim/core/policy.h): each
 * input is a policy file, parsed by policy_load with the shipped policies
 * reachable by `include = NAME`, as the shim parses DETSHIM_POLICY at
 * start-up. Whatever the bytes, it must return 0 or -1 with a one-line
 * "file:line: what" reason, and never read or write out of bounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/policy.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[4200];
    static const char *libdir;
    static struct policy p; /* 60 KB: not on the stack */
    if (!path[0]) {
        snprintf(path, sizeof path, "%s/fuzz.policy", fuzz_scratch());
        /* The harness sits in build/fuzz; shipped policies are found from
         * the library's folder (build) as <libdir>/../policies. */
        static char lib[4200];
        const char *exe = fuzz_exe_dir();
        if (exe) {
            snprintf(lib, sizeof lib, "%s/..", exe);
            libdir = lib;
        }
    }
    fuzz_write(path, data, size);
    char err[512] = "";
    int rc = policy_load(path, libdir, &p, err, sizeof err);
    if (rc != 0 && rc != -1) {
        fprintf(stderr, "fuzz_policy: policy_load returned %d\n", rc);
        abort();
    }
    if (rc == -1 && (!err[0] || strchr(err, '\n'))) {
        fprintf(stderr, "fuzz_policy: error is not one line: '%s'\n", err);
        abort();
    }
    if (rc == 0) {
        /* Every entry must be a terminated string within its array. */
        size_t sum = strlen(p.digest) + strlen(p.files) + strlen(p.artifacts);
        for (int i = 0; i < p.nenv; i++)
            sum += strlen(p.env[i].name) + strlen(p.env[i].value) + strlen(p.env[i].where);
        if (p.nenv < 0 || p.nenv > POLICY_MAX_ENV || sum == 0)
            abort();
    }
    return 0;
}
