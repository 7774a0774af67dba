/* Small helpers every part of detverify uses: its one-line errors, whole
 * files in and out, and SHA-256 of files and buffers (OpenSSL, as the
 * writer's artifact hashing uses).
 */
#ifndef DETVERIFY_UTIL_H
#define DETVERIFY_UTIL_H

#include <stddef.h>
#include <stdint.h>

enum { VERIFY_OK = 0, VERIFY_NOT = 1, VERIFY_TROUBLE = 2 };

/* Prints "detverify: MSG" on stderr, newlines flattened, so every error is
 * one line. */
void verify_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reads a whole regular file of at most `max` bytes. Returns a malloc'd
 * buffer (NUL-terminated, *len without it) or NULL with err set: the path
 * and why (missing, not a regular file, too large, unreadable). */
char *verify_read_file(const char *path, size_t max, size_t *len, char *err, size_t errlen);

/* Writes len bytes to path through path.tmp and a rename, so a reader
 * never sees half a file. Returns 0, or -1 with err set. */
int verify_write_file(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* SHA-256 of a buffer / a file (streamed, any size), as 64 hex digits.
 * Return 0, or -1 (file: with err set; *size gets the byte count). */
int verify_sha256_hex(const void *data, size_t len, char out[65]);
int verify_sha256_file(const char *path, char out[65], int64_t *size, char *err, size_t errlen);

/* 1 if path names a directory / a regular file. */
int verify_is_dir(const char *path);
int verify_is_file(const char *path);

/* The directory part of path ("." if none), malloc'd; NULL if out of memory. */
char *verify_dirname(const char *path);

#endif
