/* One verification (rerun.h): published → policy shown and checked →
 * re-run under detrun → attested → compared. A custom policy is code the
 * verifier is about to run with, so what it sets beyond the shipped
 * policies is shown before anything runs, and the policy loader itself
 * (detrun --explain) decides whether it is acceptable.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy_files.h"
#include "published.h"
#include "rerun.h"
#include "util.h"

int verify_spawn(char *const *argv, char **capture)
{
    int pfd[2] = {-1, -1};
    if (capture && pipe(pfd) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        if (capture) {
            close(pfd[0]);
            close(pfd[1]);
        }
        return -1;
    }
    if (pid == 0) {
        if (capture) {
            dup2(pfd[1], 1);
            dup2(pfd[1], 2);
            close(pfd[0]);
            close(pfd[1]);
        } else {
            dup2(2, 1);
        }
        execv(argv[0], argv);
        fprintf(stderr, "detverify: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    if (capture) {
        size_t len = 0, cap = 4096;
        char *buf = malloc(cap);
        ssize_t got;
        close(pfd[1]);
        while (buf && (got = read(pfd[0], buf + len, cap - len - 1)) != 0) {
            if (got < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            len += (size_t)got;
            if (cap - len < 2) {
                char *more = realloc(buf, cap * 2);
                if (!more)
                    break;
                buf = more;
                cap *= 2;
            }
        }
        close(pfd[0]);
        if (buf)
            buf[len] = 0;
        *capture = buf;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* detrun beside detverify: the build tree's scripts/, or bin/ when
 * installed. Returns a malloc'd path or NULL. */
static char *find_detrun(const char *exe_dir)
{
    static const char *const places[] = {"%s/../scripts/detrun", "%s/detrun"};
    char path[4096];
    for (size_t i = 0; i < sizeof places / sizeof *places; i++) {
        snprintf(path, sizeof path, places[i], exe_dir);
        if (access(path, X_OK) == 0)
            return realpath(path, NULL);
    }
    return NULL;
}

/* 1 if the policy name is a plain shipped-style name (no path). */
static int plain_name(const char *name)
{
    return name && *name && !strchr(name, '/') && !strstr(name, ".policy");
}

/* Prints a custom file's settings: every line that is not blank or a
 * comment, under its section. */
static void show_custom_file(const struct attest_policy_file *pf)
{
    char section[128] = "";
    printf("  %s (sha256 %s, not shipped) sets:\n", pf->name, pf->sha256);
    for (const char *s = pf->text; *s;) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        size_t lead = strspn(s, " \t");
        if (lead < n && s[lead] == '[') {
            snprintf(section, sizeof section, "%.*s", (int)(n - lead), s + lead);
        } else if (lead < n && s[lead] != '#' && s[lead] != ';') {
            printf("    %s%s%.*s\n", section, section[0] ? " " : "", (int)(n - lead), s + lead);
        }
        s += n + (nl ? 1 : 0);
    }
}

/* From detrun --explain: the variables a non-shipped file set and every
 * warning line. */
static void show_explain(const char *explain, const struct attest *a, const char *shipped)
{
    const char *prev = NULL;
    size_t prevlen = 0;
    for (const char *s = explain; s && *s;) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        if (!strncmp(s, "warning:", 8)) {
            printf("  %.*s\n", (int)n, s);
        } else if (prev && strstr(s, "by the policy: ") && strstr(s, "by the policy: ") < s + n) {
            const char *who = strstr(s, "by the policy: ") + 15;
            for (int i = 0; i < a->npolicy_files; i++) {
                size_t fl = strlen(a->policy_files[i].name);
                if (!attest_policy_file_shipped(a, i, shipped) &&
                    !strncmp(who, a->policy_files[i].name, fl) && who[fl] == ' ')
                    printf("  environment: %.*s  (%.*s)\n", (int)prevlen, prev,
                           (int)(s + n - who), who);
            }
        }
        prev = s + strspn(s, " ");
        prevlen = n - (size_t)(prev - s);
        s += n + (nl ? 1 : 0);
    }
}

/* Chooses what detrun gets as -p: the shipped name when every file is the
 * shipped one, else the files written under workdir, which the loader must
 * accept. Returns 0, or VERIFY_TROUBLE with out->trouble set. */
static int prepare_policy(const char *detrun, const struct published *pub, const char *workdir,
                          const char *shipped, int quiet, struct verify_outcome *out)
{
    const struct attest *a = &pub->att;
    int all_shipped = plain_name(a->policy_name);
    char want[300], err[1024], dir[4096];
    snprintf(want, sizeof want, "%s.policy", a->policy_name ? a->policy_name : "");
    for (int i = 0; i < a->npolicy_files && all_shipped; i++)
        all_shipped = attest_policy_file_shipped(a, i, shipped);
    if (all_shipped && (a->npolicy_files == 0 || !strcmp(a->policy_files[0].name, want))) {
        out->policy_arg = strdup(a->policy_name);
        verify_add(&out->report, VERIFY_STEP_POLICY, 0, "shipped",
                   "the policy is the shipped %s (sha256 %s)", a->policy_name, a->policy_digest);
        return out->policy_arg ? 0 : VERIFY_TROUBLE;
    }
    snprintf(dir, sizeof dir, "%s/policy", workdir);
    out->policy_arg = attest_policy_extract(a, dir, err, sizeof err);
    if (!out->policy_arg) {
        snprintf(out->trouble, sizeof out->trouble, "cannot lay out the published policy: %s", err);
        return VERIFY_TROUBLE;
    }
    char *argv[] = {(char *)detrun, "-p", out->policy_arg, "--explain", NULL};
    char *explain = NULL;
    int rc = verify_spawn(argv, &explain);
    if (rc != 0) {
        const char *line = explain ? explain : "";
        snprintf(out->trouble, sizeof out->trouble, "the policy loader refuses the published "
                 "policy, so nothing was run: %.*s", (int)strcspn(line, "\n"), line);
        free(explain);
        return VERIFY_TROUBLE;
    }
    if (!quiet) {
        printf("policy: the published policy %s is not a shipped one; before running anything, "
               "what it sets beyond the shipped policies:\n", a->policy_name);
        for (int i = 0; i < a->npolicy_files; i++)
            if (!attest_policy_file_shipped(a, i, shipped))
                show_custom_file(&a->policy_files[i]);
        show_explain(explain, a, shipped);
    }
    verify_add(&out->report, VERIFY_STEP_POLICY, 0, "custom",
               "the policy %s (sha256 %s) is not a shipped one; it was written to %s and the "
               "policy loader accepts it", a->policy_name, a->policy_digest, out->policy_arg);
    free(explain);
    return 0;
}

/* Seconds on the monotonic clock. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs the command under detrun into out->rerun_dir. Returns 0 or
 * VERIFY_TROUBLE. */
static int rerun(const char *detrun, const struct verify_opts *o, struct verify_outcome *out)
{
    size_t n = 0;
    while (o->cmd[n])
        n++;
    char **argv = calloc(n + 7, sizeof *argv);
    if (!argv)
        return VERIFY_TROUBLE;
    argv[0] = (char *)detrun;
    argv[1] = "-p";
    argv[2] = out->policy_arg;
    argv[3] = "-t";
    argv[4] = out->rerun_dir;
    argv[5] = "--";
    memcpy(argv + 6, o->cmd, n * sizeof *argv);
    if (o->segment) {
        char seg[16];
        snprintf(seg, sizeof seg, "%d", o->segment);
        setenv("DETVERIFY_SEGMENT", seg, 1);
    }
    double t0 = now();
    out->rerun_status = verify_spawn(argv, NULL);
    out->rerun_seconds = now() - t0;
    free(argv);
    if (out->rerun_status < 0) {
        snprintf(out->trouble, sizeof out->trouble, "cannot start %s: %s", detrun, strerror(errno));
        return VERIFY_TROUBLE;
    }
    if (out->rerun_status != 0)
        verify_add(&out->report, VERIFY_STEP_TRACE, 0, "exit_status",
                   "the re-run's command exited with status %d", out->rerun_status);
    return 0;
}

/* Writes the re-run's attestation beside its trace, with the published
 * policy's files (the ones it ran under, borrowed: the caller clears them
 * before freeing re), unless one is there already (detrun may have
 * written it). A failure to write it is a note: the verdict does not
 * depend on the file. */
static void write_rerun_attestation(struct attest *re, const struct attest *pub,
                                    const char *dir, struct verify_report *r)
{
    char path[4096], err[512];
    char *buf = NULL;
    size_t len = 0;
    memcpy(re->policy_files, pub->policy_files, sizeof re->policy_files);
    re->npolicy_files = pub->npolicy_files;
    snprintf(path, sizeof path, "%s/%s", dir, ATTEST_FILE);
    if (verify_is_file(path))
        return;
    FILE *f = open_memstream(&buf, &len);
    int rc = !f || attest_write(f, re) != 0;
    if (f)
        rc |= fclose(f) != 0;
    if (rc || verify_write_file(path, buf, len, err, sizeof err) != 0)
        verify_add(r, VERIFY_STEP_TRACE, 0, "attestation_unwritten",
                   "the re-run's attestation was not written: %s", rc ? "out of memory" : err);
    free(buf);
}

int verify_run(const struct verify_opts *o, const char *published, int quiet,
               struct verify_outcome *out)
{
    struct published pub;
    struct attest re = {0};
    struct verify_files files = {0};
    detshim_run *run = NULL;
    char err[1024], cwd[4096];
    char *detrun = NULL, *shipped = NULL, *workdir = NULL;
    int status = VERIFY_TROUBLE;
    memset(out, 0, sizeof *out);
    out->rerun_status = -1;
    if (published_load(published, o->pubkey, &pub, &out->report, err, sizeof err) != 0) {
        snprintf(out->trouble, sizeof out->trouble, "%s", err);
        goto done;
    }
    memcpy(out->pub_root, pub.att.root, sizeof out->pub_root);
    if (verify_first_failure(&out->report)) {
        status = VERIFY_NOT; /* a bad signature or edited files: run nothing */
        goto done;
    }
    if (!o->skip_files && verify_hash_published(&pub.att, pub.files_dir, &files) != 0) {
        snprintf(out->trouble, sizeof out->trouble, "out of memory while hashing the published "
                 "files");
        goto done;
    }
    if (o->rerun_trace) {
        out->rerun_dir = strdup(o->rerun_trace);
    } else {
        const char *tmp = getenv("TMPDIR");
        char tmpl[4096];
        snprintf(tmpl, sizeof tmpl, "%s/detverify.XXXXXX", tmp && *tmp ? tmp : "/tmp");
        detrun = find_detrun(o->exe_dir);
        shipped = attest_policy_shipped_dir(o->exe_dir);
        if (!detrun) {
            snprintf(out->trouble, sizeof out->trouble, "detrun not found beside %s (../scripts "
                     "or the same bin/); reinstall detshim", o->exe_dir);
            goto done;
        }
        if (!mkdtemp(tmpl)) {
            snprintf(out->trouble, sizeof out->trouble,
                     "cannot create %.3000s: %s; set TMPDIR to a writable folder", tmpl,
                     strerror(errno));
            goto done;
        }
        workdir = strdup(tmpl);
        size_t n = strlen(tmpl) + 8;
        if (workdir && (out->rerun_dir = malloc(n)))
            snprintf(out->rerun_dir, n, "%s/trace", tmpl);
        if (!out->rerun_dir || prepare_policy(detrun, &pub, workdir, shipped, quiet, out) != 0 ||
            rerun(detrun, o, out) != 0)
            goto done;
    }
    if (detshim_run_open(out->rerun_dir, &run, err, sizeof err) != 0 || !run) {
        snprintf(out->trouble, sizeof out->trouble, "the re-run left no readable trace in %s "
                 "(%s); see the command's messages above", out->rerun_dir, err);
        goto done;
    }
    if (attest_from_run(run, o->rerun_trace ? NULL : getcwd(cwd, sizeof cwd), &re, err,
                        sizeof err) != 0) {
        snprintf(out->trouble, sizeof out->trouble, "%s", err);
        goto done;
    }
    memcpy(out->re_root, re.root, sizeof out->re_root);
    if (!o->rerun_trace)
        write_rerun_attestation(&re, &pub.att, out->rerun_dir, &out->report);
    verify_compare_env(&pub.att, &re, &out->report);
    verify_compare_inputs(&pub.att, &re, &out->report);
    int outside = verify_compare_outputs(&pub.att, &re, o->skip_files ? NULL : &files,
                                         &out->report);
    if (verify_compare_trace(pub.run, &pub.att, run, &re, outside, &out->report) != 0 ||
        out->report.nomem) {
        snprintf(out->trouble, sizeof out->trouble, "out of memory while comparing");
        goto done;
    }
    verify_settle_isa(&out->report);
    if (out->report.nomem) {
        snprintf(out->trouble, sizeof out->trouble, "out of memory while comparing");
        goto done;
    }
    status = verify_first_failure(&out->report) ? VERIFY_NOT : VERIFY_OK;
done:
    re.npolicy_files = 0; /* borrowed from pub */
    attest_free(&re);
    if (run)
        detshim_run_free(run);
    published_free(&pub);
    verify_files_free(&files);
    free(detrun);
    free(shipped);
    free(workdir);
    return status;
}

void verify_outcome_free(struct verify_outcome *out)
{
    verify_report_free(&out->report);
    free(out->policy_arg);
    free(out->rerun_dir);
    memset(out, 0, sizeof *out);
}
