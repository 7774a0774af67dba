/* Ed25519 signatures over an attestation's exact bytes (OpenSSL
 * EVP_DigestSign, no pre-hash), stored beside it as one line of base64 in
 * attestation.json.sig. A signature says who published the attestation;
 * the verdict still comes from re-running.
 */
#ifndef DETVERIFY_SIGN_H
#define DETVERIFY_SIGN_H

#include <stddef.h>

/* Signs len bytes with the Ed25519 private key in the PEM file keypath.
 * Returns a malloc'd base64 line with "\n", or NULL with err set (no such
 * file, not PEM, not an Ed25519 key). */
char *attest_sign(const char *keypath, const void *msg, size_t len, char *err, size_t errlen);

/* Checks sig (base64, whitespace around it ignored) over msg with the
 * Ed25519 public key in the PEM file pubpath. Returns 0 when it is good,
 * 1 when it is not (err says why: malformed or wrong), -1 when the key
 * cannot be used (err says why). */
int attest_check_sig(const char *pubpath, const void *msg, size_t len, const char *sig,
                     size_t siglen, char *err, size_t errlen);

#endif
