/* The attestation: what a run must match to reproduce, gathered from a
 * trace (attest_from_run), written as stable JSON (attest_write) and read
 * back from a stranger's file (attest_read). detverify compares two of
 * these (compare.c), so a published attestation and a re-run's trace meet
 * in one shape. The schema is docs/attestation.md; this header is its
 * in-memory form.
 */
#ifndef DETVERIFY_ATTEST_H
#define DETVERIFY_ATTEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "detshim.h"

#define ATTEST_SCHEMA "detshim-attestation/1"
#define ATTEST_FILE "attestation.json"
#define ATTEST_SIG_SUFFIX ".sig"
#define ATTEST_MAX_POLICY_FILES 8 /* the loader's include depth */

struct attest_policy_file {
    char *name;   /* base name, as the include lines name it */
    char *sha256; /* hex of the file's bytes */
    char *text;   /* the whole file */
    size_t len;
};

struct attest_setting {
    char *name, *value;
    char *origin;  /* who decided it (header field 12), "" if unknown */
    char *process; /* the first process (by name) that had it */
};

/* A loaded object (env.object) or a Python package (env.python). */
struct attest_ident {
    char *name; /* file base name, or top-level package */
    char *id;   /* "build-id:HEX", "sha256:HEX", or the version */
};

struct attest_artifact {
    char *path, *sha256, *process;
    int64_t size;
    int last; /* 1: the process's last write of this path (outputs only) */
};

struct attest_process {
    char *name, *program, *args, *seed, *entropy_rule; /* NULL where absent */
    char root[65];
    uint64_t records;
    int complete; /* no truncation, every end frame agrees */
    char *incomplete; /* why not complete (not in the JSON); NULL if complete */
};

struct attest_cpu {
    char *raw; /* header field 17 as written, NULL if absent */
    char *model, *isa;
    int64_t cores; /* -1 if unknown */
};

struct attest {
    char *shim_version;
    int64_t trace_format;
    char root[65];
    int complete;
    char *policy_name, *policy_digest;
    int npolicy_files;
    struct attest_policy_file policy_files[ATTEST_MAX_POLICY_FILES];
    char *command, *host, *cwd;
    struct attest_cpu cpu;
    size_t nsettings, nobjects, npython, ninputs, noutputs, nprocesses;
    struct attest_setting *settings;   /* sorted by name, then value */
    struct attest_ident *objects;      /* sorted by name, then id */
    struct attest_ident *python;       /* sorted by name, then version */
    struct attest_artifact *inputs;    /* sorted by path, process, sha256 */
    struct attest_artifact *outputs;   /* sorted by path, process, sha256 */
    struct attest_process *processes;  /* sorted by name */
};

/* Fills *a from a loaded run; `cwd` (may be NULL) is recorded as the
 * working directory. Returns 0, or -1 with a one-line reason in err (a
 * malformed artifact or environment record names its process and record).
 * *a owns copies of everything; free with attest_free. Policy files are
 * not filled here: see policy_files.c. */
int attest_from_run(const detshim_run *run, const char *cwd, struct attest *a, char *err,
                    size_t errlen);

/* Writes *a as JSON: keys in the documented order, two-space indentation,
 * a final newline; the same attestation always gives the same bytes.
 * Returns 0, or -1 if the stream reports an error. */
int attest_write(FILE *f, const struct attest *a);

/* Reads an attestation from `len` bytes of JSON. Returns 0, or -1 with a
 * one-line reason in err (which key is missing or of the wrong type, or
 * where the JSON is broken). *a is zeroed first and owns its strings. */
int attest_read(const char *text, size_t len, struct attest *a, char *err, size_t errlen);

void attest_free(struct attest *a);

/* The last write of each path in a's outputs with that path, or NULL. */
const struct attest_artifact *attest_output(const struct attest *a, const char *path);

#endif
