/* Artifacts: the files a run is about. Files the program writes that match
 * the policy's [trace] artifacts globs (weights, checkpoints) and files it
 * reads that match [trace] inputs (data shards, checkpoints, tokenizers)
 * are hashed with SHA-256 and recorded in the trace, so the root commits
 * them and detverify can say which output or input differs (docs/verify.md).
 * The libc interposers (shim/libc/files.c) tell this module what happens;
 * it never changes what the program reads or writes. Module prefix
 * `artifact_`.
 *
 * Records (identity stream of the thread that recorded them, chained):
 *   artifact.read   path, size, sha256: when first opened for reading
 *   artifact.write  path, size, sha256: at process exit, hashed then, one
 *                   per file written, under its final name (after
 *                   renames), sorted
 * path is relative to the working directory when under it, else absolute.
 */
#ifndef DETSHIM_ARTIFACT_H
#define DETSHIM_ARTIFACT_H

#include <stdio.h>

/* After a successful open/openat/creat of path (relative to dirfd) as fd. */
void artifact_opened(int dirfd, const char *path, int flags, int fd);
/* After a successful fopen of path with mode as f. */
void artifact_fopened(const char *path, const char *mode, FILE *f);
/* Before the real close(fd) / fclose(f): the descriptor is forgotten (its
 * file is hashed at exit, by name). */
void artifact_closing(int fd);
void artifact_fclosing(FILE *f);
/* After a successful rename of old (relative to olddir) to new. */
void artifact_renamed(int olddir, const char *old, int newdir, const char *new);
/* At process exit, before the trace closes: hashes written files still
 * open and records every written artifact. */
void artifact_at_exit(void);

/* At process exit, after artifact_at_exit: records the loaded objects
 * (env.object, shim/artifact/objects.c) if the process recorded anything. */
void artifact_record_objects(void);
/* Called by the Python start-up hook at exit, through ctypes: records one
 * imported package's version (env.python). */
void detshim_record_python_package(const char *package, const char *version);

/* Fork handler (the lifecycle calls it): the child forgets the parent's
 * files, which are the parent's to record. */
void artifact_fork_child(void);

/* 1 if `key` (a recorded path) matches one of the comma-separated globs:
 * a glob without '/' is matched against the base name. */
int artifact_glob_match(const char *globs, const char *key);

#endif
