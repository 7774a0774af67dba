/* detverify's helpers (util.h): errors, files, SHA-256. */
#include <errno.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

void verify_error(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    fprintf(stderr, "detverify: %s\n", msg);
}

int verify_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int verify_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char *verify_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

char *verify_read_file(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
    struct stat st;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s is not a regular file", path);
        fclose(f);
        return NULL;
    }
    if ((uint64_t)st.st_size > max) {
        snprintf(err, errlen, "%s is larger than %zu bytes; is it the right file?", path, max);
        fclose(f);
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t n = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
    if (!buf || ferror(f)) {
        snprintf(err, errlen, "cannot read %s: %s", path, buf ? strerror(errno) : "out of memory");
        free(buf);
        fclose(f);
        return NULL;
    }
    fclose(f);
    buf[n] = 0;
    *len = n;
    return buf;
}

int verify_write_file(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
        snprintf(err, errlen, "path too long: %.200s", path);
        return -1;
    }
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0 || rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        if (f)
            remove(tmp);
        return -1;
    }
    return 0;
}

/* Writes a 32-byte digest as 64 hex digits and a NUL. */
static void hex(const unsigned char *md, char out[65])
{
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

int verify_sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char md[32];
    unsigned int n = 0;
    if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32)
        return -1;
    hex(md, out);
    return 0;
}

int verify_sha256_file(const char *path, char out[65], int64_t *size, char *err, size_t errlen)
{
    static unsigned char buf[1 << 16];
    unsigned char md[32];
    unsigned int n = 0;
    FILE *f = fopen(path, "rb");
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int rc = -1;
    *size = 0;
    if (!f || !ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
        snprintf(err, errlen, "cannot hash %s: %s", path,
                 f ? "OpenSSL has no SHA-256" : strerror(errno));
        goto out;
    }
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        EVP_DigestUpdate(ctx, buf, got);
        *size += (int64_t)got;
    }
    if (ferror(f) || !EVP_DigestFinal_ex(ctx, md, &n) || n != 32) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        goto out;
    }
    hex(md, out);
    rc = 0;
out:
    if (f)
        fclose(f);
    EVP_MD_CTX_free(ctx);
    return rc;
}
