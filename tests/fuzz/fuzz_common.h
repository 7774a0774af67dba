/* What the libFuzzer harnesses of tests/fuzz/ share: a private scratch
 * folder for the files the readers under test must be given by path, and
 * the frame-check repair that lets mutated traces reach the record parser.
 *   fuzz_reader.c   detshim_run_load (include/detshim.h) on one input
 *   fuzz_detdiff.c  detdiff's comparison and printers, input vs a fixed run
 *   fuzz_policy.c   policy_load (include/detshim/policy.h) on one input
 * scripts/run-fuzz.sh builds the seed corpora and runs them (docs/fuzzing.md).
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* The scratch folder, made once per process under $DETSHIM_FUZZ_TMP (the
 * scripts point it into build/) or else under $TMPDIR or /tmp, and removed
 * with its files at exit. Returns its path; aborts if it cannot be made,
 * since a harness without it would test nothing. */
const char *fuzz_scratch(void);

/* Writes n bytes to `path` (created or truncated). Returns 0, or aborts:
 * a harness that cannot write its input is broken, not the code under test. */
int fuzz_write(const char *path, const uint8_t *data, size_t n);

/* Copies `data` into a fresh buffer (owned by the caller, free()) and, in
 * the copy, recomputes the check of every frame the reader would reach, so
 * that a mutation inside a payload is parsed rather than stopped at the
 * check. A frame whose reserved field has bit 15 set keeps its check as
 * given: that way the fuzzer can still reach the damaged-frame path. */
uint8_t *fuzz_fix_checks(const uint8_t *data, size_t n);

/* The directory the harness binary sits in (build/fuzz), for files built
 * beside it; NULL if /proc/self/exe cannot be read. */
const char *fuzz_exe_dir(void);

#endif
