/* What a lab published, loaded for checking: the attestation (its exact
 * bytes, for the signature), the trace directory beside it when there is
 * one, and the folder the published files lie in (the one that holds the
 * trace directory: pub/weights.pt beside pub/trace/).
 */
#ifndef DETVERIFY_PUBLISHED_H
#define DETVERIFY_PUBLISHED_H

#include "attest.h"
#include "compare.h"
#include "detshim.h"

struct published {
    char *att_path;  /* the attestation file */
    char *trace_dir; /* the trace directory, NULL if none lies beside it */
    char *files_dir; /* the folder holding trace_dir (or the attestation) */
    char *bytes;     /* the attestation as read */
    size_t len;
    struct attest att; /* from the trace when there is one, else the file */
    detshim_run *run;  /* the published trace, or NULL */
};

/* Loads PUBLISHED (an attestation file, or a directory holding
 * attestation.json). With pubkey, the signature file beside it must match
 * first: a bad or missing signature is a failing finding in r and nothing
 * else is read. Checks the attestation against its own policy digest and,
 * when the trace is present, against the trace's root (a mismatch fails).
 * Returns 0 (check r for failures), or -1 with err set when it cannot be
 * read at all (missing, malformed, truncated): the caller exits 2. */
int published_load(const char *path, const char *pubkey, struct published *p,
                   struct verify_report *r, char *err, size_t errlen);
void published_free(struct published *p);

#endif
