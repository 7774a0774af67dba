/* Policy files in the attestation (policy_files.h). The trace header holds
 * only the policy's digest; a verifier needs its text to re-run under it,
 * and needs to see what a custom policy sets. Includes are read here only
 * to find the shipped files a shipped policy includes: the loader itself
 * (run through detrun) is the authority on what a policy means.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy_files.h"
#include "util.h"

#define POLICY_FILE_MAX (64u << 10) /* the loader's POLICY_MAX_BYTES */

char *attest_policy_shipped_dir(const char *exe_dir)
{
    static const char *const places[] = {"%s/../policies", "%s/../share/detshim/policies"};
    char probe[4096];
    for (size_t i = 0; i < sizeof places / sizeof *places; i++) {
        snprintf(probe, sizeof probe, places[i], exe_dir);
        size_t len = strlen(probe);
        snprintf(probe + len, sizeof probe - len, "/default.policy");
        if (verify_is_file(probe)) {
            probe[len] = 0;
            return realpath(probe, NULL);
        }
    }
    return NULL;
}

/* Copies the value of the first `include` line before any section into
 * out (trimmed); returns 1 if found, 0 if none. */
static int include_of(const char *text, size_t skip_count, char *out, size_t outlen)
{
    for (const char *s = text; *s;) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        size_t lead = strspn(s, " \t");
        const char *l = s + lead;
        if (lead < n && *l == '[')
            return 0;
        if (n - lead > 7 && !strncmp(l, "include", 7)) {
            const char *v = l + 7 + strspn(l + 7, " \t");
            if (*v == '=' || *v == ':') {
                v++;
                v += strspn(v, " \t");
                size_t vl = (size_t)(s + n - v);
                while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t' || v[vl - 1] == '\r'))
                    vl--;
                if (skip_count-- == 0) {
                    snprintf(out, outlen, "%.*s", (int)vl, v);
                    return 1;
                }
            }
        }
        s += n + (nl ? 1 : 0);
    }
    return 0;
}

/* The part of p after its last slash (points into p). */
static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* Appends the file at path to a's policy files. Returns 0 or -1. */
static int add_file(struct attest *a, const char *path, char *err, size_t errlen)
{
    struct attest_policy_file *pf;
    if (a->npolicy_files == ATTEST_MAX_POLICY_FILES) {
        snprintf(err, errlen, "more than %d policy files; a policy nests at most that deep",
                 ATTEST_MAX_POLICY_FILES);
        return -1;
    }
    pf = &a->policy_files[a->npolicy_files];
    pf->text = verify_read_file(path, POLICY_FILE_MAX, &pf->len, err, errlen);
    if (!pf->text)
        return -1;
    pf->name = strdup(base_name(path));
    pf->sha256 = malloc(65);
    a->npolicy_files++;
    if (!pf->name || !pf->sha256 || verify_sha256_hex(pf->text, pf->len, pf->sha256) != 0) {
        snprintf(err, errlen, "out of memory or no SHA-256 while reading %s", path);
        return -1;
    }
    return 0;
}

/* Adds the shipped policy `name` and, depth first as the loader reads
 * them, the shipped policies it includes. */
static int add_shipped(struct attest *a, const char *dir, const char *name, char *err,
                       size_t errlen)
{
    char path[4096], inc[256];
    snprintf(path, sizeof path, "%s/%s.policy", dir, name);
    if (add_file(a, path, err, errlen) != 0)
        return -1;
    const struct attest_policy_file *pf = &a->policy_files[a->npolicy_files - 1];
    for (size_t k = 0; include_of(pf->text, k, inc, sizeof inc); k++) {
        if (!inc[0] || strchr(inc, '/') || strstr(inc, ".policy")) {
            snprintf(err, errlen, "%s includes '%s', not a shipped policy name", path, inc);
            return -1;
        }
        /* pf stays valid: policy_files is a fixed array. */
        if (add_shipped(a, dir, inc, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int attest_policy_digest(const struct attest *a, char out[65])
{
    size_t total = 0, off = 0;
    for (int i = 0; i < a->npolicy_files; i++)
        total += 8 + a->policy_files[i].len;
    unsigned char *buf = malloc(total + 1);
    if (!buf)
        return -1;
    for (int i = 0; i < a->npolicy_files; i++) {
        uint64_t len = a->policy_files[i].len;
        for (int b = 0; b < 8; b++)
            buf[off++] = (unsigned char)(len >> (8 * b));
        memcpy(buf + off, a->policy_files[i].text, a->policy_files[i].len);
        off += a->policy_files[i].len;
    }
    int rc = verify_sha256_hex(buf, total, out);
    free(buf);
    return rc;
}

int attest_policy_gather(struct attest *a, const char *const *paths, int n,
                         const char *shipped_dir, char *err, size_t errlen)
{
    const char *name = a->policy_name ? a->policy_name : "";
    int rc = 0;
    if (n > 0) {
        for (int i = 0; i < n && rc == 0; i++)
            rc = add_file(a, paths[i], err, errlen);
    } else if (!*name || strchr(name, '/') || strstr(name, ".policy") || !shipped_dir) {
        snprintf(err, errlen, "the trace's policy '%.200s' is not a shipped policy name, so its "
                 "text is not known here; pass each of its files with --policy-file, top file "
                 "first, as detrun does", name);
        return -1;
    } else {
        rc = add_shipped(a, shipped_dir, name, err, errlen);
    }
    if (rc != 0)
        return -1;
    char digest[65];
    if (attest_policy_digest(a, digest) != 0) {
        snprintf(err, errlen, "out of memory while digesting the policy files");
        return -1;
    }
    if (!a->policy_digest || strcmp(digest, a->policy_digest) != 0) {
        snprintf(err, errlen, "the policy files (%s%s) digest to %.16s..., but the trace ran under "
                 "policy %.200s with digest %.16s...; pass the files the run used with "
                 "--policy-file, top file first, then each include in the order read",
                 a->policy_files[0].name, a->npolicy_files > 1 ? " and its includes" : "",
                 digest, name, a->policy_digest ? a->policy_digest : "(none)");
        return -1;
    }
    return 0;
}

int attest_policy_file_shipped(const struct attest *a, int i, const char *shipped_dir)
{
    char path[4096], err[256], sha[65];
    size_t len;
    if (!shipped_dir || strchr(a->policy_files[i].name, '/'))
        return 0;
    snprintf(path, sizeof path, "%s/%s", shipped_dir, a->policy_files[i].name);
    char *text = verify_read_file(path, POLICY_FILE_MAX, &len, err, sizeof err);
    int same = text && verify_sha256_hex(text, len, sha) == 0 &&
               strcmp(sha, a->policy_files[i].sha256) == 0;
    free(text);
    return same;
}

char *attest_policy_extract(const struct attest *a, const char *dir, char *err, size_t errlen)
{
    char path[4096], inc[256];
    if (a->npolicy_files == 0) {
        snprintf(err, errlen, "the attestation holds no policy files, so there is nothing to "
                 "re-run under; ask the publisher for an attestation written by detrun");
        return NULL;
    }
    for (int i = 0; i < a->npolicy_files; i++) {
        const struct attest_policy_file *pf = &a->policy_files[i];
        if (!pf->name[0] || strchr(pf->name, '/') || !strcmp(pf->name, ".") ||
            !strcmp(pf->name, "..")) {
            snprintf(err, errlen, "policy file name '%.100s' is not a plain file name", pf->name);
            return NULL;
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(pf->name, a->policy_files[j].name) &&
                strcmp(pf->sha256, a->policy_files[j].sha256)) {
                snprintf(err, errlen, "two different policy files are both named %.100s; "
                         "they cannot be laid out beside each other", pf->name);
                return NULL;
            }
        for (size_t k = 0; include_of(pf->text, k, inc, sizeof inc); k++)
            if (strchr(inc, '/')) {
                snprintf(err, errlen, "policy file %.100s includes '%.100s' by path; detverify "
                         "can only lay out includes by name", pf->name, inc);
                return NULL;
            }
    }
    if (mkdir(dir, 0700) != 0) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return NULL;
    }
    for (int i = 0; i < a->npolicy_files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, a->policy_files[i].name);
        if (verify_write_file(path, a->policy_files[i].text, a->policy_files[i].len, err,
                              errlen) != 0)
            return NULL;
    }
    snprintf(path, sizeof path, "%s/%s", dir, a->policy_files[0].name);
    return strdup(path);
}
