/* The SHA-256 hash chain over records and the process and run roots built
 * from it (see trace_format.h for the exact definitions). Shared by the
 * writer, which stores them in closing frames, and the reader, which
 * recomputes them from the records and never trusts the stored copy.
 */
#ifndef DETSHIM_CHAIN_H
#define DETSHIM_CHAIN_H

#include <stddef.h>
#include <stdint.h>

struct chain_field {
    uint16_t key;
    uint32_t len;
    const void *value;
};

struct chain_thread {
    uint64_t count;
    uint8_t head[32];
};

/* One-shot SHA-256 of a || b (b may be NULL when blen is 0). Returns 0, or
 * -1 if OpenSSL fails. */
int chain_sha256(const void *a, size_t alen, const void *b, size_t blen, uint8_t out[32]);
/* d0 of every window's digest (TRACE_CHAIN_SEED). */
void chain_start(uint8_t head[32]);
/* s0 of every stream head, and s = SHA256(s || window digest): a stream's
 * head is over its windows' digests (trace_format.h). */
void chain_stream_start(uint8_t head[32]);
int chain_stream_fold(uint8_t head[32], const uint8_t window_digest[32]);
/* head = SHA256(head || payload). ctx is an EVP_MD_CTX the caller keeps
 * across calls (NULL: use a temporary one). */
int chain_step(void *ctx, uint8_t head[32], const void *payload, size_t len);
/* Tests: on = 0 makes chain_sha256 and chain_step use OpenSSL even where
 * SHA-NI is present; on = 1 restores SHA-NI where present. Returns whether
 * SHA-NI was in use. Not thread-safe: call before any trace starts. */
int chain_set_fast(int on);
/* Sorts threads in place (by head, then count) and writes the process root. */
void chain_process_root(const struct chain_field *fields, int nfields,
                        struct chain_thread *threads, int nthreads, uint8_t out[32]);
/* names[i]/roots[i] sorted by name by the caller. */
void chain_run_root(const char *const *names, const uint8_t (*roots)[32], int n,
                    uint8_t out[32]);

#endif
