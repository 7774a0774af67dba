/* Policy files: found by name or path, parsed strictly with libinih, and
 * digested (SHA-256 of the file's bytes) for the trace header, so two runs
 * under different policies can never look alike.
 */
#include <errno.h>
#include <ini.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "detshim/policy.h"

struct parse_state {
    struct policy *p;
    char msg[512]; /* first error, without the file:line prefix */
};

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

static int on_blas(struct parse_state *st, const char *key, const char *value)
{
    if (strcmp(key, "mode") == 0) {
        static const char *const modes[] = { [BLAS_MODE_PASSTHROUGH] = "passthrough",
                                             [BLAS_MODE_PINNED] = "pinned",
                                             [BLAS_MODE_CANONICAL] = "canonical" };
        for (int m = 0; m < 3; m++) {
            if (strcmp(value, modes[m]) == 0) {
                st->p->blas_mode = m;
                return 1;
            }
        }
        return set_error(st, "bad value '%s' for [blas] mode (expected: %s)", value,
                         "passthrough, pinned or canonical");
    }
    if (strcmp(key, "threads") == 0) {
        unsigned long long v;
        if (parse_uint(value, 256, &v) != 0 || v == 0)
            return set_error(st, "bad value '%s' for [blas] threads (%s)", value,
                             "expected a whole number from 1 to 256");
        st->p->blas_threads = (int)v;
        return 1;
    }
    return set_error(st, "unknown key '%s' in [blas] (known: %s)", key, "mode, threads");
}

static int on_trace(struct parse_state *st, const char *key, const char *value)
{
    unsigned long long v;
    if (strcmp(key, "frames") != 0)
        return set_error(st, "unknown key '%s' in [trace] (known: %s)", key, "frames");
    if (parse_uint(value, 16, &v) != 0)
        return set_error(st, "bad value '%s' for [trace] frames (%s)", value,
                         "expected a whole number from 0 to 16");
    st->p->trace_frames = (int)v;
    return 1;
}

/* A comma-separated list of module file-name prefixes, e.g. "libfoo, libbar". */
static int valid_module_list(const char *v)
{
    return strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-., ") ==
           strlen(v);
}

static int on_rng(struct parse_state *st, const char *key, const char *value)
{
    if (strcmp(key, "seed") == 0) {
        if (parse_uint(value, ~0ULL, &st->p->seed) != 0)
            return set_error(st, "bad value '%s' for [rng] seed (%s)", value,
                             "expected a non-negative whole number");
        return 1;
    }
    if (strcmp(key, "pin") == 0) {
        if (strcmp(value, "all") == 0)
            st->p->rng_pin = RNG_PIN_ALL;
        else if (strcmp(value, "none") == 0)
            st->p->rng_pin = RNG_PIN_NONE;
        else
            return set_error(st, "bad value '%s' for [rng] pin (expected: %s)", value, "all or none");
        return 1;
    }
    if (strcmp(key, "exempt_modules") == 0) {
        if (!valid_module_list(value) || strlen(value) >= sizeof st->p->rng_exempt)
            return set_error(st, "bad value '%s' for [rng] exempt_modules (%s)", value,
                             "expected module file names or prefixes, comma-separated");
        snprintf(st->p->rng_exempt, sizeof st->p->rng_exempt, "%s", value);
        return 1;
    }
    return set_error(st, "unknown key '%s' in [rng] (known: %s)", key, "seed, pin, exempt_modules");
}

static const char *const known_sections[] = { "blas", "trace", "rng" };

/* inih reports a section only through its keys, so an unknown but empty
 * section would pass silently; section lines are checked here first. */
static int check_sections(FILE *f, const char *path, char *err, size_t errlen)
{
    char line[1024];
    for (int lineno = 1; fgets(line, sizeof line, f); lineno++) {
        char *s = line + strspn(line, " \t");
        if (*s != '[')
            continue;
        char *end = strchr(s, ']');
        if (!end)
            continue; /* inih reports the syntax error */
        *end = 0;
        int known = 0;
        for (size_t i = 0; i < sizeof known_sections / sizeof *known_sections; i++)
            known |= strcmp(s + 1, known_sections[i]) == 0;
        if (!known) {
            snprintf(err, errlen, "%s:%d: unknown section [%s] (known: blas, trace, rng)", path,
                     lineno, s + 1);
            return -1;
        }
    }
    rewind(f);
    return 0;
}

static int on_entry(void *user, const char *section, const char *key, const char *value)
{
    struct parse_state *st = user;
    if (!section[0])
        return set_error(st, "key '%s' is outside any section%s", key,
                         " (start with a [section] line)");
    if (strcmp(section, "blas") == 0)
        return on_blas(st, key, value);
    if (strcmp(section, "trace") == 0)
        return on_trace(st, key, value);
    if (strcmp(section, "rng") == 0)
        return on_rng(st, key, value);
    /* check_sections reports these first, at the section's own line. */
    return set_error(st, "unknown section [%s]%s", section, " (known: blas, trace, rng)");
}

static int digest_file(FILE *f, char hex[65])
{
    unsigned char buf[8192], md[32];
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    size_t n;
    rewind(f);
    while (ok && (n = fread(buf, 1, sizeof buf, f)) > 0)
        ok = EVP_DigestUpdate(ctx, buf, n);
    ok = ok && !ferror(f) && EVP_DigestFinal_ex(ctx, md, &mdlen) && mdlen == 32;
    EVP_MD_CTX_free(ctx);
    for (int i = 0; ok && i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return ok ? 0 : -1;
}

int policy_load(const char *path, struct policy *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->blas_mode = BLAS_MODE_PASSTHROUGH;
    p->blas_threads = 1;
    p->trace_frames = 4;
    snprintf(p->path, sizeof p->path, "%s", path);

    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read policy %s: %s", path, strerror(errno));
        return -1;
    }
    if (check_sections(f, path, err, errlen) != 0) {
        fclose(f);
        return -1;
    }
    struct parse_state st = { .p = p };
    int line = ini_parse_file(f, on_entry, &st);
    if (line != 0) {
        snprintf(err, errlen, "%s:%d: %s", path, line,
                 st.msg[0] ? st.msg : "syntax error (expected [section] or key = value)");
        fclose(f);
        return -1;
    }
    if (digest_file(f, p->digest) != 0) {
        snprintf(err, errlen, "cannot read policy %s to digest it", path);
        fclose(f);
        return -1;
    }
    fclose(f);
    return 0;
}

static int is_regular_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

int policy_find(const char *name, const char *libdir, char *path, size_t pathlen,
                char *err, size_t errlen)
{
    size_t len = strlen(name);
    if (!len) {
        snprintf(err, errlen, "DETSHIM_POLICY is empty; give a policy name (e.g. default) or a path");
        return -1;
    }
    if (strchr(name, '/') || (len > 7 && strcmp(name + len - 7, ".policy") == 0)) {
        if (!is_regular_file(name)) {
            snprintf(err, errlen, "DETSHIM_POLICY=%s: no such policy file", name);
            return -1;
        }
        snprintf(path, pathlen, "%s", name);
        return 0;
    }
    static const char *const places[] = { "%s/../policies/%s.policy",
                                          "%s/../share/detshim/policies/%s.policy" };
    for (size_t i = 0; i < sizeof places / sizeof *places; i++) {
        snprintf(path, pathlen, places[i], libdir, name);
        if (is_regular_file(path))
            return 0;
    }
    snprintf(err, errlen,
             "DETSHIM_POLICY=%s: no policy of that name in %s/../policies or "
             "%s/../share/detshim/policies; use a name listed there or a path",
             name, libdir, libdir);
    return -1;
}
