/* The verdict, as text for a person or one JSON object for a script. Text
 * lists each step with its findings ("differs:" or "note:") and ends with
 * one line: "verified: ...", "not verified: <the first reason>", or
 * nothing on stdout when it cannot tell (the error is on stderr).
 */
#ifndef DETVERIFY_OUTPUT_H
#define DETVERIFY_OUTPUT_H

#include <stdio.h>

#include "compare.h"
#include "rerun.h"

/* One verification (status from verify_run). */
void output_verdict(FILE *f, const char *published, const struct verify_outcome *out,
                    int status, int json);

/* --chain: the chain's findings and verdict over n segments. */
void output_chain(FILE *f, const struct verify_report *r, int n, int status, int json);

/* --segment: the chain first, then one block per segment verified, then
 * the verdict over `done` of n segments. */
void output_segments_begin(FILE *f, const struct verify_report *chain, int n, int json);
void output_segment(FILE *f, int k, const char *published, const struct verify_outcome *out,
                    int status, int json);
void output_segments_end(FILE *f, int n, int done, int status, int json);

#endif
