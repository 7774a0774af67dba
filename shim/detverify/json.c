/* A strict JSON reader and the string writer (json.h). An attestation is
 * downloaded from whoever published a model, so the reader bounds depth and
 * size, checks UTF-8, and never reads past `len`; it is the only code that
 * sees the raw bytes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

struct parser {
    const char *s;
    size_t len, pos;
    char *err;
    size_t errlen;
};

/* Records the first error at the current offset; returns NULL so callers
 * can `return perr(...)`. */
static struct verify_json *perr(struct parser *p, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    if (p->err[0])
        return NULL;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(p->err, p->errlen, "%s at byte %zu", msg, p->pos);
    return NULL;
}

void verify_json_free(struct verify_json *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->n; i++) {
        if (j->keys)
            free(j->keys[i]);
        verify_json_free(j->items[i]);
    }
    free(j->keys);
    free(j->items);
    free(j->str);
    free(j);
}

/* Advances past JSON whitespace. */
static void skip_ws(struct parser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                               p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

/* A zeroed node of type t, or NULL with the error set. */
static struct verify_json *new_node(struct parser *p, enum verify_json_type t)
{
    struct verify_json *j = calloc(1, sizeof *j);
    if (!j)
        return perr(p, "out of memory");
    j->type = t;
    return j;
}

int verify_utf8_len(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    int n;
    unsigned lo = 0x80, hi = 0xbf;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0;
        if (c == 0xed)
            hi = 0x9f; /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90;
        if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if ((size_t)n > left)
        return 0;
    for (int i = 1; i < n; i++) {
        unsigned b = s[i];
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xbf))
            return 0;
    }
    return n;
}

/* Reads four hex digits at p->pos into *out. Returns 0, or -1 when they
 * are not there (never reads past p->len). */
static int hex4(struct parser *p, unsigned *out)
{
    unsigned v = 0;
    if (p->len - p->pos < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        char c = p->s[p->pos++];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

/* Writes code point cp (at most U+10FFFF) as UTF-8 at o; returns its
 * length, 1 to 4. */
static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A string at p->pos (the opening quote). Returns a malloc'd copy with
 * escapes decoded and sets *len, or NULL with the error set. The decoded
 * text is never longer than the source, so one allocation suffices. */
static char *parse_string(struct parser *p, size_t *len)
{
    size_t start = ++p->pos, end = start;
    while (end < p->len && p->s[end] != '"')
        end += p->s[end] == '\\' ? 2 : 1;
    if (end >= p->len)
        return (char *)perr(p, "unterminated string");
    char *out = malloc(end - start + 1), *o = out;
    if (!out)
        return (char *)perr(p, "out of memory");
    while (p->pos < end) {
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c < 0x20) {
            free(out);
            return (char *)perr(p, "control character 0x%02x in a string", c);
        }
        if (c != '\\') {
            int n = verify_utf8_len((const unsigned char *)p->s + p->pos, end - p->pos);
            if (n == 0) {
                free(out);
                return (char *)perr(p, "invalid UTF-8 in a string");
            }
            memcpy(o, p->s + p->pos, (size_t)n);
            o += n;
            p->pos += (size_t)n;
            continue;
        }
        char e = p->s[++p->pos];
        p->pos++;
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            static const char map[] = "\"\\/\b\f\n\r\t";
            *o++ = map[simple - "\"\\/bfnrt"];
            continue;
        }
        unsigned cp, lo;
        if (e != 'u' || hex4(p, &cp) != 0) {
            free(out);
            return (char *)perr(p, "bad escape in a string");
        }
        if (cp >= 0xd800 && cp <= 0xdbff) {
            if (p->pos + 2 > end || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u' ||
                (p->pos += 2, hex4(p, &lo) != 0) || lo < 0xdc00 || lo > 0xdfff) {
                free(out);
                return (char *)perr(p, "unpaired surrogate in a string");
            }
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if ((cp >= 0xdc00 && cp <= 0xdfff) || cp == 0) {
            free(out);
            return (char *)perr(p, cp ? "unpaired surrogate in a string" : "\\u0000 in a string");
        }
        o += put_utf8(o, cp);
    }
    p->pos = end + 1;
    *o = 0;
    *len = (size_t)(o - out);
    return out;
}

/* A number at p->pos, kept as written (RFC 8259 grammar), or NULL with
 * the error set. */
static struct verify_json *parse_number(struct parser *p)
{
    size_t start = p->pos;
    const char *s = p->s;
    if (p->pos < p->len && s[p->pos] == '-')
        p->pos++;
    if (p->pos < p->len && s[p->pos] == '0')
        p->pos++;
    else if (p->pos < p->len && s[p->pos] >= '1' && s[p->pos] <= '9')
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9')
            p->pos++;
    else
        return perr(p, "bad number");
    if (p->pos < p->len && s[p->pos] == '.') {
        size_t d = ++p->pos;
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9')
            p->pos++;
        if (p->pos == d)
            return perr(p, "bad number");
    }
    if (p->pos < p->len && (s[p->pos] == 'e' || s[p->pos] == 'E')) {
        p->pos++;
        if (p->pos < p->len && (s[p->pos] == '+' || s[p->pos] == '-'))
            p->pos++;
        size_t d = p->pos;
        while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9')
            p->pos++;
        if (p->pos == d)
            return perr(p, "bad number");
    }
    struct verify_json *j = new_node(p, VERIFY_JSON_NUMBER);
    if (j && !(j->str = strndup(s + start, p->pos - start))) {
        free(j);
        return perr(p, "out of memory");
    }
    return j;
}

static struct verify_json *parse_value(struct parser *p, int depth);

/* Appends a member; key NULL for arrays. Returns 0, or -1 (error set). */
static int add_member(struct parser *p, struct verify_json *j, char *key, struct verify_json *v)
{
    if ((j->n & (j->n - 1)) == 0) { /* grow at powers of two */
        size_t cap = j->n ? j->n * 2 : 1;
        struct verify_json **items = realloc(j->items, cap * sizeof *items);
        if (items)
            j->items = items;
        char **keys = key && items ? realloc(j->keys, cap * sizeof *keys) : NULL;
        if (keys)
            j->keys = keys;
        if (!items || (key && !keys)) {
            perr(p, "out of memory");
            return -1;
        }
    }
    if (key)
        j->keys[j->n] = key;
    j->items[j->n++] = v;
    return 0;
}

/* An object or array at p->pos (its opening bracket). Returns the node
 * (owned by the caller), or NULL with the error set and nothing leaked. */
static struct verify_json *parse_container(struct parser *p, int depth, int object)
{
    struct verify_json *j = new_node(p, object ? VERIFY_JSON_OBJECT : VERIFY_JSON_ARRAY);
    char close = object ? '}' : ']';
    if (!j)
        return NULL;
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return j;
    }
    for (;;) {
        char *key = NULL;
        size_t klen;
        skip_ws(p);
        if (object) {
            if (p->pos >= p->len || p->s[p->pos] != '"') {
                perr(p, "expected a key");
                break;
            }
            if (!(key = parse_string(p, &klen)))
                break;
            if (verify_json_get(j, key)) {
                perr(p, "duplicate key \"%.40s\"", key);
                free(key);
                break;
            }
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                perr(p, "expected ':'");
                free(key);
                break;
            }
            p->pos++;
        }
        struct verify_json *v = parse_value(p, depth + 1);
        if (!v || add_member(p, j, key, v) != 0) {
            free(key);
            verify_json_free(v);
            break;
        }
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == close) {
            p->pos++;
            return j;
        }
        perr(p, "expected ',' or '%c'", close);
        break;
    }
    verify_json_free(j);
    return NULL;
}

/* true, false or null at p->pos, or NULL with the error set. */
static struct verify_json *parse_literal(struct parser *p, const char *word,
                                         enum verify_json_type t)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
        return perr(p, "unexpected character");
    p->pos += n;
    return new_node(p, t);
}

/* Any value at p->pos, `depth` levels deep. Returns the node, or NULL
 * with the error set. */
static struct verify_json *parse_value(struct parser *p, int depth)
{
    if (depth > VERIFY_JSON_MAX_DEPTH)
        return perr(p, "nested deeper than %d levels", VERIFY_JSON_MAX_DEPTH);
    skip_ws(p);
    if (p->pos >= p->len)
        return perr(p, "unexpected end of input");
    switch (p->s[p->pos]) {
    case '{':
        return parse_container(p, depth, 1);
    case '[':
        return parse_container(p, depth, 0);
    case '"': {
        struct verify_json *j = new_node(p, VERIFY_JSON_STRING);
        if (j && !(j->str = parse_string(p, &j->len))) {
            free(j);
            return NULL;
        }
        return j;
    }
    case 't':
        return parse_literal(p, "true", VERIFY_JSON_TRUE);
    case 'f':
        return parse_literal(p, "false", VERIFY_JSON_FALSE);
    case 'n':
        return parse_literal(p, "null", VERIFY_JSON_NULL);
    default:
        return parse_number(p);
    }
}

struct verify_json *verify_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
    struct parser p = {.s = text, .len = len, .err = err, .errlen = errlen};
    err[0] = 0;
    if (len > VERIFY_JSON_MAX_BYTES) {
        snprintf(err, errlen, "larger than %u MiB", VERIFY_JSON_MAX_BYTES >> 20);
        return NULL;
    }
    struct verify_json *j = parse_value(&p, 0);
    if (!j)
        return NULL;
    skip_ws(&p);
    if (p.pos != len) {
        perr(&p, "text after the JSON value");
        verify_json_free(j);
        return NULL;
    }
    return j;
}

const struct verify_json *verify_json_get(const struct verify_json *j, const char *key)
{
    if (!j || j->type != VERIFY_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < j->n; i++)
        if (strcmp(j->keys[i], key) == 0)
            return j->items[i];
    return NULL;
}

int verify_json_get_int(const struct verify_json *j, const char *key, int64_t *out)
{
    const struct verify_json *v = verify_json_get(j, key);
    char *end;
    if (!v || v->type != VERIFY_JSON_NUMBER)
        return -1;
    errno = 0;
    long long x = strtoll(v->str, &end, 10);
    if (errno || *end)
        return -1;
    *out = x;
    return 0;
}

void verify_json_put_n(FILE *f, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', f);
    for (size_t i = 0; i < len;) {
        unsigned char c = u[i];
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc(c, f);
            i++;
        } else if (c == '\n') {
            fputs("\\n", f);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c);
            i++;
        } else {
            int n = verify_utf8_len(u + i, len - i);
            if (n == 0) {
                fputs("\\ufffd", f);
                i++;
            } else {
                fwrite(u + i, 1, (size_t)n, f);
                i += (size_t)n;
            }
        }
    }
    fputc('"', f);
}

void verify_json_put(FILE *f, const char *s)
{
    if (!s)
        fputs("null", f);
    else
        verify_json_put_n(f, s, strlen(s));
}
