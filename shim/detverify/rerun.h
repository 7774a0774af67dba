/* One verification: load what was published, show a custom policy before
 * anything runs, re-run the command under detrun with the published
 * policy, attest the re-run and compare (compare.h). The caller prints
 * the outcome (output.c).
 */
#ifndef DETVERIFY_RERUN_H
#define DETVERIFY_RERUN_H

#include "compare.h"

struct verify_opts {
    const char *exe_dir;     /* where detverify lives: detrun and policies beside it */
    const char *pubkey;      /* --pubkey, or NULL */
    const char *rerun_trace; /* --rerun-trace: compare with this trace, run nothing */
    char *const *cmd;        /* the command to re-run (NULL-terminated), or NULL */
    int segment;             /* 0, or the 1-based segment (exported as DETVERIFY_SEGMENT) */
    int skip_files;          /* do not compare the published files on disk: they are
                              * the last segment's, not this one's */
};

struct verify_outcome {
    struct verify_report report;
    char trouble[4096]; /* non-empty: cannot tell, and why */
    char *policy_arg;   /* what detrun got as -p */
    char *rerun_dir;    /* the re-run's trace directory */
    int rerun_status;   /* the command's exit status, -1 if not run */
    double rerun_seconds;
    char pub_root[65], re_root[65];
};

/* Runs one verification of `published`. Returns VERIFY_OK, VERIFY_NOT or
 * VERIFY_TROUBLE (out->trouble says why); out owns its strings (free with
 * verify_outcome_free). Custom-policy listings go to stdout as they are
 * found, before anything runs, unless `quiet` (--json). */
int verify_run(const struct verify_opts *o, const char *published, int quiet,
               struct verify_outcome *out);
void verify_outcome_free(struct verify_outcome *out);

/* Runs argv (argv[0] a path) and waits; with `capture`, its stdout and
 * stderr are returned in a malloc'd string in *capture, else its stdout
 * goes to our stderr so that ours holds only the verdict. Returns the exit
 * status (128 + signal when killed), or -1 if it cannot start. */
int verify_spawn(char *const *argv, char **capture);

#endif
