/* The verdict as text or JSON (output.h). Finding texts may quote what a
 * stranger's trace or attestation holds, so text output passes them
 * through put_text (no terminal escapes) and JSON through verify_json_put.
 */
#include <string.h>

#include "json.h"
#include "output.h"
#include "util.h"

/* Printable ASCII and valid UTF-8 as they are, anything else as \xNN. */
static void put_text(FILE *f, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        int n = u[i] >= 0x80 ? verify_utf8_len(u + i, len - i) : 1;
        if (u[i] >= 0x80 && n > 0) {
            fwrite(u + i, 1, (size_t)n, f);
            i += (size_t)n;
            continue;
        }
        if (u[i] >= 0x20 && u[i] < 0x7f)
            fputc(u[i], f);
        else
            fprintf(f, "\\x%02x", u[i]);
        i++;
    }
}

/* The verdict's JSON id for an exit status. */
static const char *verdict_id(int status)
{
    return status == VERIFY_OK ? "verified" : status == VERIFY_NOT ? "not_verified" : "cannot_tell";
}

/* Text: one block per step that has findings, or that ran and found
 * nothing (`ran`: environment, inputs and outputs were compared). */
static void text_findings(FILE *f, const struct verify_report *r, int ran, const char *indent)
{
    for (int s = 0; s < VERIFY_STEP_COUNT; s++) {
        size_t fails = 0, notes = 0;
        for (size_t i = 0; i < r->n; i++)
            if ((int)r->items[i].step == s)
                r->items[i].fails ? fails++ : notes++;
        int always = s == VERIFY_STEP_ENV || s == VERIFY_STEP_INPUTS || s == VERIFY_STEP_OUTPUTS;
        if (!fails && !notes && !(always && ran))
            continue;
        fprintf(f, "%s%s: ", indent, verify_step_name((enum verify_step)s));
        if (fails)
            fprintf(f, "%zu difference%s that fail%s the verdict", fails, fails == 1 ? "" : "s",
                    fails == 1 ? "s" : "");
        else
            fputs("same", f);
        if (notes)
            fprintf(f, ", %zu note%s", notes, notes == 1 ? "" : "s");
        fputc('\n', f);
        /* What fails first, then the notes. */
        for (int pass = 0; pass < 2; pass++)
            for (size_t i = 0; i < r->n; i++)
                if ((int)r->items[i].step == s && r->items[i].fails == !pass) {
                    fprintf(f, "%s  %s: ", indent, pass ? "note" : "differs");
                    put_text(f, r->items[i].text);
                    fputc('\n', f);
                }
    }
}

/* The findings as a JSON array. */
static void json_findings(FILE *f, const struct verify_report *r)
{
    fputc('[', f);
    for (size_t i = 0; i < r->n; i++) {
        fprintf(f, "%s{\"step\":\"%s\",\"fails\":%s,\"kind\":\"%s\",\"text\":", i ? "," : "",
                verify_step_name(r->items[i].step), r->items[i].fails ? "true" : "false",
                r->items[i].kind);
        verify_json_put(f, r->items[i].text);
        fputc('}', f);
    }
    fputc(']', f);
}

/* The verdict's reason: the first failure, the trouble, or what matched. */
static void reason(const struct verify_outcome *out, int status, char *buf, size_t len)
{
    const struct verify_finding *first = verify_first_failure(&out->report);
    if (status == VERIFY_TROUBLE)
        snprintf(buf, len, "%s", out->trouble);
    else if (first)
        snprintf(buf, len, "%s", first->text);
    else
        snprintf(buf, len, "re-running the published command under the published policy gives "
                 "the published run (root %s) and its outputs", out->re_root);
}

/* One verification as a JSON object (no newline). */
static void json_outcome(FILE *f, const char *published, const struct verify_outcome *out,
                         int status)
{
    char why[4200];
    reason(out, status, why, sizeof why);
    fprintf(f, "{\"verdict\":\"%s\",\"reason\":", verdict_id(status));
    verify_json_put(f, why);
    fputs(",\"published\":", f);
    verify_json_put(f, published);
    fputs(",\"root_published\":", f);
    verify_json_put(f, out->pub_root[0] ? out->pub_root : NULL);
    fputs(",\"root_rerun\":", f);
    verify_json_put(f, out->re_root[0] ? out->re_root : NULL);
    fputs(",\"rerun_trace\":", f);
    verify_json_put(f, out->rerun_dir);
    fputs(",\"policy\":", f);
    verify_json_put(f, out->policy_arg);
    fprintf(f, ",\"rerun_exit\":%d,\"rerun_seconds\":%.3f,\"findings\":", out->rerun_status,
            out->rerun_seconds);
    json_findings(f, &out->report);
    fputc('}', f);
}

/* One verification as text, each line prefixed by indent; nothing when
 * nothing was compared (the error is on stderr). */
static void text_outcome(FILE *f, const char *indent, const char *published,
                         const struct verify_outcome *out, int status)
{
    char why[4200];
    if (status == VERIFY_TROUBLE && out->report.n == 0)
        return; /* nothing was compared: the error line on stderr says why */
    fprintf(f, "%spublished: ", indent);
    put_text(f, published);
    if (out->pub_root[0])
        fprintf(f, " (root %s)", out->pub_root);
    fputc('\n', f);
    if (out->rerun_dir && out->re_root[0]) {
        fprintf(f, "%sre-run: trace in ", indent);
        put_text(f, out->rerun_dir);
        if (out->policy_arg) {
            fputs(", under policy ", f);
            put_text(f, out->policy_arg);
        }
        if (out->rerun_status >= 0)
            fprintf(f, ", command exit status %d, %.2f s", out->rerun_status, out->rerun_seconds);
        fprintf(f, " (root %s)\n", out->re_root);
    }
    text_findings(f, &out->report, out->re_root[0] != 0, indent);
    if (status == VERIFY_TROUBLE)
        return; /* the error line on stderr says it */
    reason(out, status, why, sizeof why);
    fprintf(f, "%s%s: ", indent, status == VERIFY_OK ? "verified" : "not verified");
    put_text(f, why);
    fputc('\n', f);
}

void output_verdict(FILE *f, const char *published, const struct verify_outcome *out,
                    int status, int json)
{
    if (json) {
        json_outcome(f, published, out, status);
        fputc('\n', f);
    } else {
        text_outcome(f, "", published, out, status);
    }
}

void output_chain(FILE *f, const struct verify_report *r, int n, int status, int json)
{
    const struct verify_finding *first = verify_first_failure(r);
    if (json) {
        fprintf(f, "{\"verdict\":\"%s\",\"reason\":", verdict_id(status));
        verify_json_put(f, first ? first->text
                              : "every segment resumed from the previous one's output");
        fprintf(f, ",\"segments\":%d,\"findings\":", n);
        json_findings(f, r);
        fputs("}\n", f);
        return;
    }
    text_findings(f, r, 0, "");
    if (first) {
        fputs("not verified: ", f);
        put_text(f, first->text);
        fputc('\n', f);
    } else {
        fprintf(f, "verified: the %d segments chain: each resumed from a checkpoint the one "
                "before wrote (their re-runs are not checked by --chain; use --segment)\n", n);
    }
}

void output_segments_begin(FILE *f, const struct verify_report *chain, int n, int json)
{
    if (json) {
        fputs("{\"chain\":", f);
        json_findings(f, chain);
        fputs(",\"segments\":[", f);
        return;
    }
    fprintf(f, "chain of %d segments:\n", n);
    text_findings(f, chain, 0, "  ");
}

void output_segment(FILE *f, int k, const char *published, const struct verify_outcome *out,
                    int status, int json)
{
    if (json) {
        fprintf(f, "%s{\"segment\":%d,\"result\":", k > 1 ? "," : "", k);
        json_outcome(f, published, out, status);
        fputc('}', f);
        return;
    }
    fprintf(f, "segment %d:\n", k);
    text_outcome(f, "  ", published, out, status);
}

void output_segments_end(FILE *f, int n, int done, int status, int json)
{
    if (json) {
        fprintf(f, "],\"verdict\":\"%s\",\"segments_checked\":%d,\"segment_count\":%d}\n",
                verdict_id(status), done, n);
        return;
    }
    if (status == VERIFY_OK)
        fprintf(f, "verified: all %d segments, each re-run and each resumed from the one "
                "before\n", n);
    else if (status == VERIFY_NOT && done == 0)
        fputs("not verified: the segments do not chain (above); nothing was re-run\n", f);
    else if (status == VERIFY_NOT)
        fprintf(f, "not verified: segment %d (above); later segments were not re-run\n", done);
}
