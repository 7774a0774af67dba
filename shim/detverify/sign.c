/* Ed25519 signing and checking (sign.h). */
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sign.h"

/* Loads a PEM key (private if `priv`); returns it or NULL with err set. */
static EVP_PKEY *load_key(const char *path, int priv, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open key %s: %s", path, strerror(errno));
        return NULL;
    }
    EVP_PKEY *k = priv ? PEM_read_PrivateKey(f, NULL, NULL, NULL)
                       : PEM_read_PUBKEY(f, NULL, NULL, NULL);
    fclose(f);
    if (!k) {
        snprintf(err, errlen, "%s is not a PEM %s key; make one with openssl genpkey -algorithm "
                 "ed25519%s", path, priv ? "private" : "public",
                 priv ? "" : " and openssl pkey -pubout");
        return NULL;
    }
    if (EVP_PKEY_id(k) != EVP_PKEY_ED25519) {
        snprintf(err, errlen, "%s is not an Ed25519 key; detshim signs with Ed25519 only", path);
        EVP_PKEY_free(k);
        return NULL;
    }
    return k;
}

char *attest_sign(const char *keypath, const void *msg, size_t len, char *err, size_t errlen)
{
    unsigned char sig[64];
    size_t siglen = sizeof sig;
    char *out = NULL;
    EVP_PKEY *k = load_key(keypath, 1, err, errlen);
    EVP_MD_CTX *ctx = k ? EVP_MD_CTX_new() : NULL;
    if (!ctx)
        goto done;
    if (EVP_DigestSignInit(ctx, NULL, NULL, NULL, k) != 1 ||
        EVP_DigestSign(ctx, sig, &siglen, msg, len) != 1 || siglen != 64) {
        snprintf(err, errlen, "OpenSSL could not sign with %s", keypath);
        goto done;
    }
    out = malloc(4 * ((64 + 2) / 3) + 2);
    if (out) {
        int n = EVP_EncodeBlock((unsigned char *)out, sig, 64);
        out[n] = '\n';
        out[n + 1] = 0;
    }
done:
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(k);
    return out;
}

int attest_check_sig(const char *pubpath, const void *msg, size_t len, const char *sig,
                     size_t siglen, char *err, size_t errlen)
{
    unsigned char raw[72];
    while (siglen && (sig[siglen - 1] == '\n' || sig[siglen - 1] == ' ' || sig[siglen - 1] == '\r'))
        siglen--;
    while (siglen && (*sig == ' ' || *sig == '\n')) {
        sig++;
        siglen--;
    }
    /* 64 bytes are 88 base64 characters with "==" padding. */
    if (siglen != 88 || EVP_DecodeBlock(raw, (const unsigned char *)sig, 88) != 66) {
        snprintf(err, errlen, "the signature is not 88 characters of base64 (an Ed25519 "
                 "signature)");
        return 1;
    }
    EVP_PKEY *k = load_key(pubpath, 0, err, errlen);
    if (!k)
        return -1;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int rc = -1;
    if (ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k) == 1) {
        rc = EVP_DigestVerify(ctx, raw, 64, msg, len) == 1 ? 0 : 1;
        if (rc)
            snprintf(err, errlen, "the signature does not match the attestation and %s: the "
                     "file was changed after signing, or signed with another key", pubpath);
    } else {
        snprintf(err, errlen, "OpenSSL cannot check Ed25519 signatures with %s", pubpath);
    }
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(k);
    return rc;
}
