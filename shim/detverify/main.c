/* detverify, the command: writes a run's attestation (--attest), verifies
 * a published run by re-running it (rerun.c), checks that resumed
 * segments chain (--chain, --segment), and prints one verdict as text or
 * JSON (output.c). Exit status: 0 verified, 1 not verified, 2 cannot tell;
 * every error is one line on stderr starting with "detverify: ".
 *
 * The shim's files this program reads:
 *   json.c          strict JSON reader, string writer
 *   attest.c        the attestation: from a trace, to and from JSON
 *   policy_files.c  the policy's files: gathered, digested, laid out
 *   sign.c          Ed25519 signatures
 *   published.c     loading what a lab published
 *   compare.c       environment, inputs, outputs, trace, chain
 *   rerun.c         one verification: policy, re-run, compare
 *   output.c        the verdict as text or JSON
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attest.h"
#include "detshim/trace_format.h"
#include "output.h"
#include "policy_files.h"
#include "published.h"
#include "rerun.h"
#include "sign.h"
#include "util.h"

#define MAX_LIST 64 /* --policy-file and --segment arguments */

static const char usage_line[] =
    "usage: detverify [--json] [--pubkey PUB.pem] PUBLISHED -- CMD... | "
    "detverify --attest TRACEDIR [--policy-file F]... [--sign KEY.pem] [--cmd CMD...] | "
    "detverify --chain PUBLISHED... | detverify --segment PUBLISHED... -- CMD...";

static const char help_text[] =
    "detverify: check that published weights are what the published workflow produces\n"
    "\n"
    "  detverify [--json] [--pubkey PUB.pem] PUBLISHED -- CMD...\n"
    "      PUBLISHED: a published trace directory holding attestation.json, or the\n"
    "      attestation file. Re-runs CMD under the published policy (through detrun,\n"
    "      into a fresh directory under $TMPDIR), then compares environment, inputs,\n"
    "      outputs (with the attestation and with the published files beside the trace\n"
    "      directory) and the trace, and prints one verdict.\n"
    "      Exit 0: verified; 1: not verified (the first reason named); 2: cannot tell.\n"
    "      --pubkey PUB.pem  the attestation must carry a good Ed25519 signature\n"
    "      --rerun-trace DIR compare with a re-run already traced in DIR; run nothing\n"
    "      --json            the verdict as one JSON object\n"
    "  detverify --attest TRACEDIR [--policy-file F]... [--sign KEY.pem] [--cmd CMD...]\n"
    "      write TRACEDIR/attestation.json (and .sig with --sign). --policy-file: each\n"
    "      file of a custom policy, top file first; --cmd: the command line as typed.\n"
    "  detverify [--json] [--pubkey PUB.pem] --chain PUBLISHED PUBLISHED...\n"
    "      check that each segment resumed from a checkpoint the one before wrote\n"
    "  detverify [--json] [--pubkey PUB.pem] --segment PUBLISHED... -- CMD...\n"
    "      the chain, then each segment verified in order by re-running CMD in this\n"
    "      folder with DETVERIFY_SEGMENT=1, 2, ... in its environment\n"
    "\n"
    "docs/verify.md walks through a verification; docs/attestation.md is the schema.\n";

/* The folder of this executable (detrun and the policies are found beside
 * it). Returns a malloc'd path, or NULL. */
static char *exe_dir(void)
{
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return NULL;
    buf[n] = 0;
    return verify_dirname(buf);
}

/* argv joined with spaces, each word single-quoted where the shell would
 * need it. Returns a malloc'd string or NULL. */
static char *join_command(char *const *argv)
{
    size_t len = 1;
    for (char *const *a = argv; *a; a++)
        len += 4 * strlen(*a) + 3;
    char *out = malloc(len), *o = out;
    if (!out)
        return NULL;
    for (char *const *a = argv; *a; a++) {
        int quote = !**a || strpbrk(*a, " \t\n'\"\\$`*?[]{}()<>|&;#~!") != NULL;
        if (a != argv)
            *o++ = ' ';
        if (quote)
            *o++ = '\'';
        for (const char *c = *a; *c; c++) {
            if (*c == '\'') {
                memcpy(o, "'\\''", 4);
                o += 4;
            } else {
                *o++ = *c;
            }
        }
        if (quote)
            *o++ = '\'';
    }
    *o = 0;
    return out;
}

/* --attest: writes TRACEDIR/attestation.json (and .sig). Returns the exit
 * status: 0, 1 when the run is incomplete (written, with a warning), 2 on
 * error. */
static int cmd_attest(const char *dir, const char *const *pfiles, int npfiles, const char *key,
                      char *const *cmd, const char *exedir)
{
    detshim_run *run = NULL;
    struct attest a = {0};
    char err[1024], cwd[4096], path[4096];
    char *buf = NULL, *shipped = NULL, *sig = NULL;
    size_t len = 0;
    int status = VERIFY_TROUBLE;
    if (detshim_run_open(dir, &run, err, sizeof err) != 0 || !run) {
        verify_error("%s; give the trace directory the run wrote (DETSHIM_TRACE)", err);
        return VERIFY_TROUBLE;
    }
    if (attest_from_run(run, getcwd(cwd, sizeof cwd), &a, err, sizeof err) != 0) {
        verify_error("%s", err);
        goto out;
    }
    if (cmd) {
        free(a.command);
        a.command = join_command(cmd);
    }
    shipped = attest_policy_shipped_dir(exedir);
    if (attest_policy_gather(&a, pfiles, npfiles, shipped, err, sizeof err) != 0) {
        verify_error("%s", err);
        goto out;
    }
    FILE *f = open_memstream(&buf, &len);
    int bad = !f || attest_write(f, &a) != 0;
    if (f)
        bad |= fclose(f) != 0;
    snprintf(path, sizeof path, "%s/%s", dir, ATTEST_FILE);
    if (bad || verify_write_file(path, buf, len, err, sizeof err) != 0) {
        verify_error("%s", bad ? "out of memory while writing the attestation" : err);
        goto out;
    }
    if (key) {
        if (!(sig = attest_sign(key, buf, len, err, sizeof err))) {
            verify_error("%s", err);
            goto out;
        }
        snprintf(path, sizeof path, "%s/%s%s", dir, ATTEST_FILE, ATTEST_SIG_SUFFIX);
        if (verify_write_file(path, sig, strlen(sig), err, sizeof err) != 0) {
            verify_error("%s", err);
            goto out;
        }
    }
    printf("%s/%s: root %s, %zu input%s, %zu output record%s, %zu loaded object%s%s\n", dir,
           ATTEST_FILE, a.root, a.ninputs, a.ninputs == 1 ? "" : "s", a.noutputs,
           a.noutputs == 1 ? "" : "s", a.nobjects, a.nobjects == 1 ? "" : "s",
           key ? ", signed" : "");
    status = VERIFY_OK;
    if (!a.complete) {
        for (size_t i = 0; i < a.nprocesses; i++)
            if (a.processes[i].incomplete)
                verify_error("warning: the trace of process %s in %s is incomplete: %s",
                             a.processes[i].name, dir, a.processes[i].incomplete);
        verify_error("warning: this attestation of %s covers part of the run only: do not "
                     "publish it", dir);
        status = VERIFY_NOT;
    }
out:
    attest_free(&a);
    detshim_run_free(run);
    free(buf);
    free(shipped);
    free(sig);
    return status;
}

/* --chain and the first step of --segment: loads each published segment
 * and checks the chain into r. Returns 0, or VERIFY_TROUBLE with the error
 * printed. */
static int check_chain(const char *const *pubs, int n, const char *pubkey,
                       struct verify_report *r)
{
    struct published *p = calloc((size_t)n, sizeof *p);
    struct attest *atts = calloc((size_t)n, sizeof *atts);
    char err[1024];
    int rc = 0;
    if (!p || !atts) {
        verify_error("out of memory");
        rc = VERIFY_TROUBLE;
    }
    for (int i = 0; i < n && !rc; i++) {
        if (published_load(pubs[i], pubkey, &p[i], r, err, sizeof err) != 0) {
            verify_error("segment %d: %s", i + 1, err);
            rc = VERIFY_TROUBLE;
        }
        if (p)
            atts[i] = p[i].att;
    }
    if (!rc && !verify_first_failure(r))
        verify_chain(atts, n, r);
    for (int i = 0; p && i < n; i++)
        published_free(&p[i]);
    free(p);
    free(atts);
    return rc;
}

/* --chain: checks n published segments and prints the verdict. Returns
 * the exit status. */
static int cmd_chain(const char *const *pubs, int n, const char *pubkey, int json)
{
    struct verify_report r = {0};
    if (n < 2) {
        verify_error("--chain needs two or more segments in order (got %d); %s", n, usage_line);
        return VERIFY_TROUBLE;
    }
    if (check_chain(pubs, n, pubkey, &r) != 0) {
        verify_report_free(&r);
        return VERIFY_TROUBLE;
    }
    int status = verify_first_failure(&r) ? VERIFY_NOT : VERIFY_OK;
    output_chain(stdout, &r, n, status, json);
    verify_report_free(&r);
    return status;
}

/* --segment: the chain, then each segment verified in order until one
 * is not. Returns the exit status. */
static int cmd_segments(const char *const *pubs, int n, const struct verify_opts *base, int json)
{
    struct verify_report chain = {0};
    if (check_chain(pubs, n, base->pubkey, &chain) != 0) {
        verify_report_free(&chain);
        return VERIFY_TROUBLE;
    }
    int status = verify_first_failure(&chain) ? VERIFY_NOT : VERIFY_OK;
    output_segments_begin(stdout, &chain, n, json);
    verify_report_free(&chain);
    int done = 0;
    for (int k = 0; k < n && status == VERIFY_OK; k++) {
        struct verify_opts o = *base;
        struct verify_outcome out;
        o.segment = k + 1;
        o.skip_files = k + 1 < n; /* the files on disk are the last segment's */
        status = verify_run(&o, pubs[k], json, &out);
        output_segment(stdout, k + 1, pubs[k], &out, status, json);
        if (status == VERIFY_TROUBLE)
            verify_error("segment %d: %s", k + 1, out.trouble);
        verify_outcome_free(&out);
        done++;
    }
    output_segments_end(stdout, n, done, status, json);
    return status;
}

int main(int argc, char **argv)
{
    const char *pfiles[MAX_LIST], *segs[MAX_LIST], *attest = NULL, *key = NULL;
    const char *published = NULL;
    int npfiles = 0, nsegs = 0, chain = 0, json = 0;
    char **cmd = NULL, **attest_cmd = NULL;
    struct verify_opts o = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        /* Options that take a value; the value is argv[i + 1]. */
        const char *const valued[] = {"--attest", "--policy-file", "--sign", "--pubkey",
                                      "--rerun-trace", "--segment"};
        int takes = 0;
        for (size_t k = 0; k < sizeof valued / sizeof *valued; k++)
            takes |= strcmp(a, valued[k]) == 0;
        if (takes && i + 1 >= argc) {
            verify_error("%s needs a value; %s", a, usage_line);
            return VERIFY_TROUBLE;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(help_text, stdout);
            return VERIFY_OK;
        } else if (!strcmp(a, "--version")) {
            printf("detverify %s (trace format %u, attestation schema %s)\n", DETSHIM_VERSION,
                   TRACE_VERSION, ATTEST_SCHEMA);
            return VERIFY_OK;
        } else if (!strcmp(a, "--")) {
            cmd = argv + i + 1;
            break;
        } else if (!strcmp(a, "--cmd")) {
            attest_cmd = argv + i + 1;
            break;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--chain")) {
            chain = 1;
        } else if (!strcmp(a, "--attest")) {
            attest = argv[++i];
        } else if (!strcmp(a, "--sign")) {
            key = argv[++i];
        } else if (!strcmp(a, "--pubkey")) {
            o.pubkey = argv[++i];
        } else if (!strcmp(a, "--rerun-trace")) {
            o.rerun_trace = argv[++i];
        } else if (!strcmp(a, "--policy-file") || !strcmp(a, "--segment")) {
            int seg = a[2] == 's';
            if ((seg ? nsegs : npfiles) == MAX_LIST) {
                verify_error("more than %d %s arguments", MAX_LIST, a);
                return VERIFY_TROUBLE;
            }
            if (seg)
                segs[nsegs++] = argv[++i];
            else
                pfiles[npfiles++] = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            verify_error("unknown option '%s'; %s", a, usage_line);
            return VERIFY_TROUBLE;
        } else if (chain) {
            if (nsegs == MAX_LIST) {
                verify_error("more than %d segments", MAX_LIST);
                return VERIFY_TROUBLE;
            }
            segs[nsegs++] = a;
        } else if (!published) {
            published = a;
        } else {
            verify_error("unexpected argument '%s' (the command goes after --); %s", a,
                         usage_line);
            return VERIFY_TROUBLE;
        }
    }
    char *dir = exe_dir();
    if (!dir) {
        verify_error("cannot find where detverify is installed (/proc/self/exe); run it on Linux");
        return VERIFY_TROUBLE;
    }
    o.exe_dir = dir;
    o.cmd = cmd && *cmd ? cmd : NULL;
    int status;
    if (attest) {
        if (published || nsegs || chain || cmd || o.pubkey || o.rerun_trace || json) {
            verify_error("--attest takes a trace directory, --policy-file, --sign and --cmd "
                         "only; %s", usage_line);
            status = VERIFY_TROUBLE;
        } else {
            status = cmd_attest(attest, pfiles, npfiles, key, attest_cmd && *attest_cmd ?
                                attest_cmd : NULL, dir);
        }
    } else if (key || npfiles || attest_cmd) {
        verify_error("--sign, --policy-file and --cmd go with --attest; %s", usage_line);
        status = VERIFY_TROUBLE;
    } else if (chain) {
        status = published || cmd ? (verify_error("--chain takes segments only; %s", usage_line),
                                     VERIFY_TROUBLE)
                                  : cmd_chain(segs, nsegs, o.pubkey, json);
    } else if (nsegs) {
        if (published || !o.cmd || o.rerun_trace) {
            verify_error("--segment takes segments, then the command after --; %s", usage_line);
            status = VERIFY_TROUBLE;
        } else {
            status = cmd_segments(segs, nsegs, &o, json);
        }
    } else if (!published) {
        verify_error("nothing to verify; %s", usage_line);
        status = VERIFY_TROUBLE;
    } else if (!o.cmd && !o.rerun_trace) {
        verify_error("give the command that produced the published run after --, e.g. "
                     "detverify %s -- python3 train.py", published);
        status = VERIFY_TROUBLE;
    } else {
        struct verify_outcome out;
        status = verify_run(&o, published, json, &out);
        if (status == VERIFY_TROUBLE)
            verify_error("%s", out.trouble);
        output_verdict(stdout, published, &out, status, json);
        verify_outcome_free(&out);
    }
    free(dir);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        verify_error("cannot write the verdict to standard output");
        return VERIFY_TROUBLE;
    }
    return status;
}
