/* The policy's files inside an attestation: gathered when it is written
 * (from --policy-file, or from the shipped policies when the trace names
 * one), checked against the trace header's policy digest, compared with
 * the shipped policies, and written back out for a re-run.
 */
#ifndef DETVERIFY_POLICY_FILES_H
#define DETVERIFY_POLICY_FILES_H

#include <stddef.h>

#include "attest.h"

/* The shipped policies beside the program at exe_dir: ../policies (build
 * tree) or ../share/detshim/policies (installed). Returns a malloc'd path,
 * or NULL if neither holds default.policy. */
char *attest_policy_shipped_dir(const char *exe_dir);

/* Fills a->policy_files from `paths` (n files, top file first, then each
 * include in the order the loader reads them), or, with n == 0, from the
 * shipped policy named by a->policy_name and its includes. Checks the
 * files against a->policy_digest (SHA-256 over each file as a u64 length
 * and its bytes, as the loader digests them). Returns 0, or -1 with err
 * saying which file or digest is wrong and to pass --policy-file. */
int attest_policy_gather(struct attest *a, const char *const *paths, int n,
                         const char *shipped_dir, char *err, size_t errlen);

/* Recomputes the digest of a's policy files into out. Returns 0 or -1. */
int attest_policy_digest(const struct attest *a, char out[65]);

/* 1 if file i is byte for byte the shipped file of that name. */
int attest_policy_file_shipped(const struct attest *a, int i, const char *shipped_dir);

/* Writes a's policy files into dir (created, must not exist), each under
 * its name, so that includes by name find each other beside the top file.
 * Returns a malloc'd path of the top file, or NULL with err set (an
 * include by path, two files of one name, an unwritable dir). */
char *attest_policy_extract(const struct attest *a, const char *dir, char *err, size_t errlen);

#endif
