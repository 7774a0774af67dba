/* detverify's JSON: a small strict reader for attestations (which come from
 * strangers, so every input is hostile until parsed) and the writing
 * helpers the attestation and the --json verdict share. The reader builds
 * a tree; objects keep their keys in file order.
 */
#ifndef DETVERIFY_JSON_H
#define DETVERIFY_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum verify_json_type {
    VERIFY_JSON_NULL, VERIFY_JSON_FALSE, VERIFY_JSON_TRUE, VERIFY_JSON_NUMBER, VERIFY_JSON_STRING,
    VERIFY_JSON_ARRAY, VERIFY_JSON_OBJECT
};

struct verify_json {
    enum verify_json_type type;
    char *str;          /* STRING: the text (UTF-8, no NUL inside); NUMBER: as written */
    size_t len;         /* STRING: bytes in str */
    size_t n;           /* ARRAY, OBJECT: members */
    char **keys;        /* OBJECT: n keys */
    struct verify_json **items; /* ARRAY, OBJECT: n values */
};

#define VERIFY_JSON_MAX_DEPTH 32
#define VERIFY_JSON_MAX_BYTES (64u << 20)

/* Parses `len` bytes. Returns the tree (free with verify_json_free), or
 * NULL with a one-line reason naming the byte offset in err. Rejects what RFC 8259
 * rejects, plus: nesting deeper than VERIFY_JSON_MAX_DEPTH, \u0000 in a
 * string, duplicate keys, and anything after the value. */
struct verify_json *verify_json_parse(const char *text, size_t len, char *err, size_t errlen);
void verify_json_free(struct verify_json *j);

/* The member `key` of an object, or NULL (also when j is not an object). */
const struct verify_json *verify_json_get(const struct verify_json *j, const char *key);
/* Returns 0 and sets *out when `key` holds an integer that fits int64,
 * else -1. */
int verify_json_get_int(const struct verify_json *j, const char *key, int64_t *out);

/* Writes s (len bytes) as a JSON string; bytes that are not UTF-8 become
 * U+FFFD, control characters \u00XX, so any input yields valid JSON. */
void verify_json_put_n(FILE *f, const char *s, size_t len);
/* The same for a NUL-terminated string; NULL writes null. */
void verify_json_put(FILE *f, const char *s);

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if it is not one. */
int verify_utf8_len(const unsigned char *s, size_t left);

#endif
