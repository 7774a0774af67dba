/* The comparisons behind detverify's verdict, in the order it reports
 * them: environment, inputs, outputs, the trace, and (for resumed runs)
 * the chain of segments. Each adds findings to a report; a finding either
 * fails the verdict (it can change bits, or it shows the weights are not
 * the workflow's) or is a note (a fact that cannot change bits). Side A is
 * always the published run, side B the re-run.
 */
#ifndef DETVERIFY_COMPARE_H
#define DETVERIFY_COMPARE_H

#include <stddef.h>

#include "attest.h"
#include "detshim.h"

enum verify_step { VERIFY_STEP_SIGNATURE, VERIFY_STEP_POLICY, VERIFY_STEP_ENV,
                   VERIFY_STEP_INPUTS, VERIFY_STEP_OUTPUTS, VERIFY_STEP_TRACE,
                   VERIFY_STEP_CHAIN, VERIFY_STEP_COUNT };

struct verify_finding {
    enum verify_step step;
    int fails;        /* 1: not verified; 0: a note */
    const char *kind; /* stable id for --json ("object_id", "input_differs", ...) */
    char *text;       /* one sentence, owned */
};

struct verify_report {
    size_t n, cap;
    struct verify_finding *items;
    int nomem; /* a finding could not be stored: the verdict is "cannot tell" */
};

/* Appends a finding (text formatted like printf). On out of memory sets
 * r->nomem instead. */
void verify_add(struct verify_report *r, enum verify_step step, int fails, const char *kind,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void verify_report_free(struct verify_report *r);
/* The first failing finding, in step order, or NULL. */
const struct verify_finding *verify_first_failure(const struct verify_report *r);
/* Name of a step as printed ("environment", "inputs", ...). */
const char *verify_step_name(enum verify_step s);

/* Environment: versions, policy digest, settings, seeds, entropy rules,
 * loaded objects, Python packages, ISA flags (failures); CPU model, core
 * count, host, working directory, command line (notes). */
void verify_compare_env(const struct attest *pub, const struct attest *re,
                        struct verify_report *r);

/* Inputs by path (a file read under another path with the same digest is
 * a note). */
void verify_compare_inputs(const struct attest *pub, const struct attest *re,
                           struct verify_report *r);

/* The published files at the published outputs' recorded paths, hashed
 * before the re-run: a verifier working in the published folder itself
 * has them overwritten by the re-run's outputs. */
struct verify_file {
    char *path;      /* as recorded */
    char *where;     /* where it was looked for */
    char sha256[65]; /* "" if absent */
    char *error;     /* why it could not be read, or NULL */
};
struct verify_files {
    size_t n;
    struct verify_file *v;
};

/* Hashes dir/PATH for the last write of each relative output path of pub
 * (absolute paths and paths with ".." are not looked up). Returns 0, or -1
 * out of memory. Free with verify_files_free. */
int verify_hash_published(const struct attest *pub, const char *dir, struct verify_files *out);
void verify_files_free(struct verify_files *f);

/* Outputs by recorded path, against the published attestation and, where
 * files is not NULL, against the published files (verify_hash_published).
 * Returns 1 if a published file on disk differs from what the published
 * record says (so it was made outside the published run). */
int verify_compare_outputs(const struct attest *pub, const struct attest *re,
                           const struct verify_files *files, struct verify_report *r);

/* Settles an instruction-set difference once everything is compared: it
 * fails the verdict, named first, when anything else fails too, and is a
 * note when the re-run gave the published trace and outputs anyway (the
 * workflow did produce them on this CPU). Sets r->nomem when out of
 * memory. */
void verify_settle_isa(struct verify_report *r);

/* The trace: detdiff's comparison of the two runs, first divergence named;
 * without a published trace (pub_run NULL), the roots alone. `outside`:
 * a published output on disk differs from the published record, to be
 * explained when the traces agree. Returns 0, or -1 out of memory. */
int verify_compare_trace(const detshim_run *pub_run, const struct attest *pub,
                         const detshim_run *re_run, const struct attest *re, int outside,
                         struct verify_report *r);

/* Segments in order: each one's checkpoint input must be an output of the
 * one before, by sha256. */
void verify_chain(const struct attest *segs, int n, struct verify_report *r);

#endif
