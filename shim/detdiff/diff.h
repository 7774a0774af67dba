/* detdiff's comparison logic: given two runs read by the reader API
 * (detshim.h), loaded or only opened, pair their processes by name and
 * their threads by content (pair.c), walk the paired record streams
 * through cursors and classify every difference found. It knows nothing
 * about options or output formats, so the unit tests drive it with runs
 * built in memory. Items point into the two runs (records an item names
 * are kept there), which must outlive the result. Memory: per thread, and
 * per item, never per record compared.
 */
#ifndef DETSHIM_DIFF_H
#define DETSHIM_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include "detshim.h"

enum diff_kind {
    DIFF_NONE = 0,
    DIFF_MISSING_PROCESS, /* a process present in one run only */
    DIFF_HEADER,          /* a compared header field differs */
    DIFF_MISSING_THREAD,  /* a thread with no partner in the other process */
    DIFF_NONDETERMINISTIC, /* same api, params, inputs; different outputs */
    DIFF_INPUTS,          /* same api and params, different inputs */
    DIFF_CONTROL_FLOW,    /* different api, params, operand layout or site */
    DIFF_DECISION,        /* same call, different notes (decisions) */
    DIFF_TRUNCATED,       /* a stream ends early in a truncated file */
    DIFF_EXTRA_CALLS,     /* a stream ends early in a complete file */
    DIFF_DAMAGED,         /* a file is cut short or inconsistent */
    DIFF_ROOT,            /* records agree but the recomputed roots do not */
    DIFF_UNREADABLE,      /* a file named like a trace is not a readable one */
    DIFF_WINDOW,          /* summary traces: a window's digests differ (windows.c) */
};

/* Which run an item speaks about, where it speaks about one side. */
enum diff_side { DIFF_SIDE_A = 0, DIFF_SIDE_B = 1 };

struct diff_item {
    enum diff_kind kind;
    enum diff_side side; /* MISSING_* and UNREADABLE: the run that has it;
                          * TRUNCATED and EXTRA_CALLS: the run whose stream
                          * is shorter; DAMAGED: the run whose file is
                          * damaged */
    const detshim_process *pa, *pb; /* NULL for the side that lacks it */
    const detshim_thread *ta, *tb;  /* NULL for process-level items */
    size_t index;                   /* record index in both streams */
    const detshim_record *ra, *rb;  /* records at `index`, NULL past an end */
    const detshim_record *last_match; /* A's last equal record before
                                       * `index`, NULL if none */
    size_t extra;   /* EXTRA_CALLS/TRUNCATED: records the longer stream has
                     * from `index` on */
    uint16_t field; /* HEADER: the field key */
    const detshim_unreadable *file; /* UNREADABLE: the file; pa or pb is the
                                     * other run's process of its name */
    int compared;   /* UNREADABLE: the other run has a process or a file of
                     * that name, so the runs cannot be compared without it */
    size_t window;  /* WINDOW: the window's number in its stream; `index`
                     * is its first record, `extra` its record count (the
                     * larger side's); side: the run that has it, where
                     * only one does */
    int window_one_side; /* WINDOW: only `side` has this window */
};

struct diff_result {
    size_t nitems, cap;
    struct diff_item *items;
    size_t nprocesses; /* processes compared (pairs and loners) */
    size_t nrecords;   /* records in run A */
};

struct diff_options {
    int all;         /* report every differing record, not the first */
    int pair_single; /* two one-process runs pair whatever their names */
};

/* Compares run `a` with run `b` and appends one item per difference to
 * `out`, which must be zeroed; items are grouped by process, in name order,
 * then one UNREADABLE item per unreadable file (A's, then B's). A file that
 * is not a readable trace is a difference: it may stand for a process of
 * that run whose trace was cut before its header, so the runs are never
 * called identical with it. A process whose partner's file is unreadable
 * is reported by that file's item, not as a missing process.
 * Returns 0 (identical iff out->nitems == 0), DETSHIM_ERR_NOMEM, or
 * DETSHIM_ERR_IO / DETSHIM_ERR_FORMAT when a file of an opened run no
 * longer reads as it did when opened; on error `out` holds what was found
 * so far. Free with diff_result_free. */
int diff_runs(const detshim_run *a, const detshim_run *b,
              const struct diff_options *opt, struct diff_result *out);
void diff_result_free(struct diff_result *r);
/* Appends a zeroed item of `kind` for the pair; NULL when out of memory. */
struct diff_item *diff_add_item(struct diff_result *r, enum diff_kind kind,
                                const detshim_process *pa, const detshim_process *pb);
/* Summary traces (windows.c): 1 if either thread holds a window as its
 * digest only, when the pair is compared window by window. */
int diff_windows_apply(const detshim_thread *ta, const detshim_thread *tb);
/* Compares the pair window by window: the first window whose digests
 * differ is a WINDOW item, or, where both sides hold that window's
 * records (a re-run with DETSHIM_TRACE_FULL_WINDOW), the first differing
 * record in it, classified as diff_classify does. Returns 0 or an error
 * code as diff_runs does. */
int diff_windows_pair(const detshim_process *pa, const detshim_process *pb,
                      const detshim_thread *ta, const detshim_thread *tb,
                      const struct diff_options *opt, struct diff_result *r);

/* 1 if two records are the same call with the same results: equal digests
 * when both carry one, and equal fields in any case. */
int diff_records_equal(const detshim_record *a, const detshim_record *b);

/* Classifies two records that are not equal (NONDETERMINISTIC, INPUTS,
 * CONTROL_FLOW or DECISION). Priority: a different call (api, params,
 * operand layout) is control flow; then different inputs; then different
 * notes; then different outputs; a call that differs only in its call site
 * is control flow. */
enum diff_kind diff_classify(const detshim_record *a, const detshim_record *b);

/* Per-part comparisons that diff_classify is made of; each returns 1 when
 * the part is equal. Params compare by name, type and value bits. */
int diff_param_equal(const detshim_param *a, const detshim_param *b);
int diff_params_equal(const detshim_record *a, const detshim_record *b);
int diff_operand_layout_equal(const detshim_operand *a, const detshim_operand *b);
int diff_notes_equal(const detshim_record *a, const detshim_record *b);
int diff_sites_equal(const detshim_record *a, const detshim_record *b);

/* A record's counts, 0 where the count is negative or its array is NULL,
 * so that a half-built record never indexes a missing array. */
int diff_nparams(const detshim_record *r);
int diff_noperands(const detshim_record *r);
int diff_nframes(const detshim_record *r);
int diff_nnotes(const detshim_record *r);

/* Thread pairing for one process pair: main with main; then equal chain
 * heads; then equal first records (longest common prefix wins); then
 * what is left in index order. Writes up to na + nb pairs to `pairs`
 * (either side NULL for a thread without partner) and returns their
 * number, or an error code as diff_runs does. Each rule is a sorted-table
 * lookup; records are read only to compare threads whose first records
 * agree. */
struct diff_thread_pair {
    const detshim_thread *ta, *tb;
};
int diff_pair_threads(const detshim_process *a, const detshim_process *b,
                      struct diff_thread_pair *pairs);

/* Children whose names swapped between runs, as siblings spawned at once
 * may: for processes pa (run A) and pb (run B) of one fork or spawn name
 * (<parent>.f<k>, <parent>.s<k>), a sibling qa of A and its namesake qb
 * of B such that pa looks more like qb than like pb, and qa more like pb
 * than like qb (same program; then the same command line and the longer
 * common start of the main thread's calls). Returns 1 with *qa and *qb
 * set, or 0 (none, or a record could not be read); at most 64 siblings
 * are looked at. */
int diff_swapped_names(const detshim_run *a, const detshim_run *b, const detshim_process *pa,
                       const detshim_process *pb, const detshim_process **qa,
                       const detshim_process **qb);

/* Short stable identifier of a kind ("nondeterministic", "inputs", ...) for
 * JSON, and the phrase detdiff prints for it. */
const char *diff_kind_id(enum diff_kind k);
const char *diff_kind_text(enum diff_kind k);

/* Name of a header field key ("program"), or NULL for an unknown key. */
const char *diff_field_name(uint16_t key);

/* The first field of `p` with `key` that is compared (not
 * TRACE_FIELD_INFO), or NULL. */
const detshim_field *diff_compared_field(const detshim_process *p, uint16_t key);

/* 1 if p's trace says the audit module (LD_AUDIT) was loaded, 0 if it
 * says it was not, -1 if it does not say (a trace from before the field
 * existed, or p NULL). */
int diff_ran_audited(const detshim_process *p);

/* Number of records in a process (all threads). */
size_t diff_process_records(const detshim_process *p);

#endif
