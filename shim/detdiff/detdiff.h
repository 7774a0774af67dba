/* What the files of the detdiff command share. The command reads runs
 * only through the reader library (detshim.h), like any third-party tool.
 *   main.c   the command line: options, loading, errors, exit status
 *   diff.c   comparison of two runs (diff.h; unit-tested alone)
 *   pair.c   which threads of two processes are compared (diff.h)
 *   text.c   a comparison as text, and text escaping
 *   json.c   a comparison as one JSON object, and JSON escaping
 *   show.c   --show: one run printed readably
 *   root.c   --root: a run's root, with warnings when it is partial
 *   steps.c  the first differing training step and framework op (steps.h)
 *   chrome.c --chrome-trace: both runs as a Trace Event file (Perfetto)
 *   ranks.c  a run of several ranks: first divergence per rank, in
 *            collective order
 */
#ifndef DETDIFF_H
#define DETDIFF_H

#include <inttypes.h>
#include <stdio.h>

#include "detshim.h"
#include "detshim/trace_format.h"
#include "diff.h"

enum { DETDIFF_IDENTICAL = 0, DETDIFF_DIVERGED = 1, DETDIFF_TROUBLE = 2 };

/* A thread as printed: its index, and which of its streams it is (bits
 * 31, 30 and 29 of the index in the format: entropy, identity, real). */
#define THREAD_FMT "%" PRIu32 "%s"
#define THREAD_ARGS(index) \
    ((index) & ~(TRACE_THREAD_ENTROPY | TRACE_THREAD_IDENTITY | TRACE_THREAD_REAL)), \
    ((index) & TRACE_THREAD_ENTROPY    ? " (entropy)" \
     : (index) & TRACE_THREAD_IDENTITY ? " (identity)" \
     : (index) & TRACE_THREAD_REAL     ? " (real entropy, in no root)" \
                                       : "")

/* Text: printable ASCII as is, anything else as \xNN; at most `max` bytes
 * of s (len bytes), then "..." if there were more. NULL prints "(none)". */
void text_put_n(FILE *f, const char *s, size_t len, size_t max);
void text_put(FILE *f, const char *s);
/* " name=value" per parameter, or " (no params)". */
void text_params(FILE *f, const detshim_record *r);
/* One call-site frame as "module+0xOFFSET symbol", named from p's SITE
 * frames where the writer described it; a Python frame as "python
 * FILE:LINE in FUNCTION". */
void text_frame(FILE *f, const detshim_process *p, const detshim_frame *fr);
/* The index of r's Python call-site frame (its last), or -1 if none. */
int diff_python_frame(const detshim_record *r);
/* The whole comparison of a with b as text. */
void text_result(FILE *f, const detshim_run *a, const detshim_run *b, const struct diff_result *r);

/* After text_result's per-process report: each rank's first divergence
 * and the first in collective order, explained; prints nothing for a
 * run without collectives among its first divergences (ranks.c). */
void ranks_report(FILE *f, const struct diff_result *r);
/* The same summary as a member of json_result's object, `,"ranks":{...}`;
 * prints nothing where ranks_report prints nothing. */
void ranks_json(FILE *f, const struct diff_result *r);

/* A JSON string (s is len bytes, or NUL-terminated for json_put); NULL
 * prints null. */
void json_put_n(FILE *f, const char *s, size_t len);
void json_put(FILE *f, const char *s);
/* A parameter's value as JSON: a number, a one-character string, [re, im],
 * a string; NaN and infinities as the strings "nan", "inf", "-inf". */
void json_param_value(FILE *f, const detshim_param *p);
/* The whole comparison as one JSON object and a newline. pa and pb are the
 * paths the runs were loaded from. */
void json_result(FILE *f, const char *pa, const char *pb, const detshim_run *a,
                 const detshim_run *b, const struct diff_result *r);

/* --chrome-trace: writes runs a and b, and the differences r found, to
 * `out` as a Trace Event file; returns 0, or -1 with a one-line reason in
 * err (out is then left as it was). */
int chrome_write(const char *out, const detshim_run *a, const detshim_run *b,
                 const struct diff_result *r, char *err, size_t errlen);

/* --show of `run`, loaded from `path`, on f. */
/* Prints the run readably; returns 0, or -1 when a file could not be
 * read again part way (said in the output). */
int show_run(FILE *f, const char *path, const detshim_run *run);

/* --root: prints run's root (hex, or JSON) on stdout and warns on stderr
 * per truncated or damaged file. Returns DETDIFF_IDENTICAL, or
 * DETDIFF_DIVERGED when the root covers part of the run only. */
int root_print(const detshim_run *run, int json);

/* XXH3-128 in its canonical (big-endian) hex form. */
static inline void digest_hex(detshim_digest d, char out[33])
{
    snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, d.hi, d.lo);
}

/* "s" when n is not 1, for "3 records" and "1 record". */
static inline const char *plural(size_t n)
{
    return n == 1 ? "" : "s";
}

static inline const char *side_name(enum diff_side s)
{
    return s == DIFF_SIDE_A ? "A" : "B";
}

static inline const char *role_name(uint8_t role)
{
    return role == TRACE_ROLE_IN ? "in" : role == TRACE_ROLE_OUT ? "out" : "role?";
}

static inline const char *pname(const detshim_process *p)
{
    return p && p->name ? p->name : "(unnamed)";
}

#endif
