/* The SHA-256 chain over record hashes (window digests, stream heads) and
 * the process and run roots built from it (trace_format.h has the exact
 * definitions). Shared by the writer, which stores them in closing frames,
 * and the reader, which recomputes them from the records and never trusts
 * the stored copy.
 */
#ifndef DETSHIM_CHAIN_H
#define DETSHIM_CHAIN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "detshim/trace_format.h"
#include "trace/sha256.h"

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

/* A window's digest, streamed: SHA-256 over TRACE_CHAIN_SEED and the
 * window's record hashes (16 bytes each, trace_format.h), finalized once
 * when the window closes. Hashes are kept in `batch` and handed to SHA-256
 * CHAIN_BATCH bytes at a time, on SHA-NI where the CPU has it, else through
 * OpenSSL (one EVP update per batch, not per record). Zeroed memory is a
 * valid unused state; chain_window_free releases it. */
enum { CHAIN_BATCH = 512 };
struct chain_window {
    struct sha256_ctx fast; /* when !evp_on */
    void *evp;              /* EVP_MD_CTX, owned; made when first needed */
    int evp_on;             /* this window runs on OpenSSL */
    int failed;             /* an OpenSSL call failed in this window */
    uint32_t fill;          /* bytes in batch */
    uint8_t batch[CHAIN_BATCH];
};
/* Starts a window (after a previous one ended, or on zeroed memory).
 * Returns 0, or -1 when OpenSSL is needed and fails (no memory). */
int chain_window_begin(struct chain_window *w);
/* Hands the batch to SHA-256; chain_window_add calls it when full. */
void chain_window_flush(struct chain_window *w);
/* Appends one record hash (len 16 or 32: chain_record_hash) to the open
 * window. */
static inline void chain_window_add(struct chain_window *w, const uint8_t *hash, uint32_t len)
{
    if (w->fill + len > CHAIN_BATCH)
        chain_window_flush(w);
    memcpy(w->batch + w->fill, hash, len);
    w->fill += len;
}
/* The record hash of a RECORD payload of frame thread index `thread`
 * (trace_format.h), into out: its frame hash (16 bytes, the rest of out
 * zeroed) in a calls or entropy stream; SHA-256 of the payload (32) in an
 * identity stream. Returns its length, or 0 if OpenSSL failed. */
static inline uint32_t chain_record_hash(uint32_t thread, const uint8_t *payload, uint32_t len,
                                         const uint8_t frame_hash[16], uint8_t out[32])
{
    if (thread & TRACE_THREAD_IDENTITY)
        return chain_sha256(payload, len, NULL, 0, out) == 0 ? 32 : 0;
    memcpy(out, frame_hash, 16);
    memset(out + 16, 0, 16);
    return 16;
}
/* Writes the window's digest; begin again before the next add. Returns
 * 0, or -1 if OpenSSL failed somewhere in the window (digest unusable). */
int chain_window_end(struct chain_window *w, uint8_t digest[32]);
void chain_window_free(struct chain_window *w);

/* s0 of every stream head, and s = SHA256(s || window digest): a stream's
 * head is over its windows' digests (trace_format.h). */
void chain_stream_start(uint8_t head[32]);
int chain_stream_fold(uint8_t head[32], const uint8_t window_digest[32]);
/* Tests: on = 0 makes chain_sha256 and the windows begun afterwards use
 * OpenSSL even where SHA-NI is present; on = 1 restores SHA-NI where
 * present. Returns whether SHA-NI was in use. Not thread-safe: call before
 * any trace starts. */
int chain_set_fast(int on);
/* Sorts threads in place (by head, then count) and writes the process root. */
void chain_process_root(const struct chain_field *fields, int nfields,
                        struct chain_thread *threads, int nthreads, uint8_t out[32]);
/* names[i]/roots[i] sorted by name by the caller. */
void chain_run_root(const char *const *names, const uint8_t (*roots)[32], int n,
                    uint8_t out[32]);

#endif
