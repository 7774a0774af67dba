/* Loading what a lab published (published.h). The attestation is read
 * strictly; where the trace lies beside it, the trace is the authority
 * (the root commits it) and the attestation must agree with it, so an
 * edited attestation cannot list other outputs than the run wrote.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_files.h"
#include "published.h"
#include "sign.h"
#include "util.h"

#define ATTEST_MAX_BYTES (64u << 20)

/* 1 if dir holds a file ending in .dtrace. */
static int holds_trace(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d && !found && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        found = n > 7 && !strcmp(e->d_name + n - 7, ".dtrace");
    }
    if (d)
        closedir(d);
    return found;
}

/* Checks the signature file beside the attestation; adds a failing
 * finding when it is missing or wrong. Returns 0 if good, 1 if not, -1
 * when the key itself is unusable (err set). */
static int check_signature(const struct published *p, const char *pubkey,
                           struct verify_report *r, char *err, size_t errlen)
{
    char sigpath[4096], why[512];
    size_t siglen;
    snprintf(sigpath, sizeof sigpath, "%s%s", p->att_path, ATTEST_SIG_SUFFIX);
    char *sig = verify_read_file(sigpath, 4096, &siglen, why, sizeof why);
    if (!sig) {
        verify_add(r, VERIFY_STEP_SIGNATURE, 1, "no_signature",
                   "no usable signature: %s (it was given --pubkey, so it must be signed)", why);
        return 1;
    }
    int rc = attest_check_sig(pubkey, p->bytes, p->len, sig, siglen, why, sizeof why);
    free(sig);
    if (rc < 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (rc > 0)
        verify_add(r, VERIFY_STEP_SIGNATURE, 1, "bad_signature", "%s", why);
    else
        verify_add(r, VERIFY_STEP_SIGNATURE, 0, "signature", "the signature is good for %s",
                   pubkey);
    return rc;
}

/* Replaces p->att with the attestation of the published trace, keeping
 * what only the file holds (policy text, working directory, command); a
 * root that disagrees fails. */
static int adopt_trace(struct published *p, struct verify_report *r, char *err, size_t errlen)
{
    struct attest t;
    char why[512];
    if (detshim_run_open(p->trace_dir, &p->run, why, sizeof why) != 0 || !p->run) {
        snprintf(err, errlen, "the published trace %s cannot be read: %s", p->trace_dir, why);
        return -1;
    }
    if (attest_from_run(p->run, p->att.cwd, &t, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    if (strcmp(t.root, p->att.root) != 0) {
        verify_add(r, VERIFY_STEP_SIGNATURE, 1, "attestation_root",
                   "the published trace %s has root %s, but its attestation says %s: one of "
                   "them was changed", p->trace_dir, t.root, p->att.root);
        attest_free(&t);
        return 0;
    }
    memcpy(t.policy_files, p->att.policy_files, sizeof t.policy_files);
    t.npolicy_files = p->att.npolicy_files;
    p->att.npolicy_files = 0;
    free(t.command);
    t.command = p->att.command;
    p->att.command = NULL;
    attest_free(&p->att);
    p->att = t;
    return 0;
}

int published_load(const char *path, const char *pubkey, struct published *p,
                   struct verify_report *r, char *err, size_t errlen)
{
    char why[512];
    memset(p, 0, sizeof *p);
    if (verify_is_dir(path)) {
        size_t n = strlen(path) + sizeof ATTEST_FILE + 2;
        if ((p->att_path = malloc(n)))
            snprintf(p->att_path, n, "%s/%s", path, ATTEST_FILE);
    } else {
        p->att_path = strdup(path);
    }
    if (!p->att_path) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p->bytes = verify_read_file(p->att_path, ATTEST_MAX_BYTES, &p->len, why, sizeof why);
    if (!p->bytes) {
        snprintf(err, errlen, "%s; give the published trace directory (holding %s) or the "
                 "attestation file itself", why, ATTEST_FILE);
        return -1;
    }
    if (pubkey) {
        int rc = check_signature(p, pubkey, r, err, errlen);
        if (rc)
            return rc < 0 ? -1 : 0; /* an unsigned or forged file is not read further */
    }
    if (attest_read(p->bytes, p->len, &p->att, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s is not a usable attestation: %s", p->att_path, why);
        return -1;
    }
    char digest[65];
    if (p->att.npolicy_files &&
        (attest_policy_digest(&p->att, digest) != 0 || strcmp(digest, p->att.policy_digest))) {
        verify_add(r, VERIFY_STEP_POLICY, 1, "policy_files",
                   "the attestation's policy files do not make up its policy %s (sha256 %s): "
                   "the files were changed", p->att.policy_name, p->att.policy_digest);
        return 0;
    }
    char *dir = verify_dirname(p->att_path);
    if (!dir) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (holds_trace(dir)) {
        p->trace_dir = dir;
        p->files_dir = verify_dirname(dir);
        return adopt_trace(p, r, err, errlen);
    }
    p->files_dir = dir;
    return 0;
}

void published_free(struct published *p)
{
    free(p->att_path);
    free(p->trace_dir);
    free(p->files_dir);
    free(p->bytes);
    attest_free(&p->att);
    if (p->run)
        detshim_run_free(p->run);
    memset(p, 0, sizeof *p);
}
