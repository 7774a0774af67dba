/* Digest throughput of the shim's operand fingerprints (XXH3-128 through
 * digest_bytes, digest_matrix and digest_vector) on a 64 MiB buffer, next to
 * SHA-256 through OpenSSL's EVP interface, which the design rejects for the
 * hot path as too slow. Two rows put the numbers in context: a plain read
 * of the same buffer (what this machine's memory delivers to one core, the
 * bound for any digest of data that is not in a cache), and digest_bytes
 * on 4 MiB already in the caches (the kernel's own speed). GB/s counts the
 * logical bytes (10^9 bytes per GB), best of several runs. Linked against
 * the shim's object files so the exact code the shim runs is what is
 * timed. Run by scripts/bench.sh.
 * Usage: bench_digest [repetitions]   (default 7)
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trace/digest.h"

#define BUF_BYTES ((size_t)64 << 20)

/* A strided matrix: column-major doubles, 1024 rows used out of a leading
 * dimension of 1032 (padding never read), as many columns as fit. */
#define MAT_LEN 1024
#define MAT_LD 1032

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Folds every digest into one value that is printed, so no call can be
 * dropped as unused. */
static uint64_t sink;

enum kind { READ, BYTES, CACHED, MATRIX, VECTOR2, SHA256 };

/* The in-cache row: this many bytes, digested this many times a run. */
#define CACHED_BYTES ((size_t)4 << 20)
#define CACHED_TIMES 16

/* Digests buf once as `kind` describes; returns the logical bytes read. */
static size_t digest_once(enum kind kind, const unsigned char *buf)
{
    detshim_digest d = { 0, 0 };
    size_t logical = 0;
    switch (kind) {
    case READ: { /* four sums, so that the adds never wait on each other */
        uint64_t w[4] = { 0, 0, 0, 0 }, x[4];
        for (size_t i = 0; i < BUF_BYTES; i += sizeof x) {
            memcpy(x, buf + i, sizeof x);
            for (int j = 0; j < 4; j++)
                w[j] += x[j];
        }
        d.lo = w[0] ^ w[1] ^ w[2] ^ w[3];
        logical = BUF_BYTES;
        break;
    }
    case CACHED:
        for (int t = 0; t < CACHED_TIMES; t++) {
            detshim_digest c = digest_bytes(buf, CACHED_BYTES);
            d.lo ^= c.lo;
            d.hi ^= c.hi;
        }
        logical = CACHED_BYTES * CACHED_TIMES;
        break;
    case BYTES:
        d = digest_bytes(buf, BUF_BYTES);
        logical = BUF_BYTES;
        break;
    case MATRIX: {
        int64_t lines = (int64_t)(BUF_BYTES / sizeof(double)) / MAT_LD;
        d = digest_matrix(buf, MAT_LEN, lines, MAT_LD, sizeof(double));
        logical = (size_t)(MAT_LEN * lines) * sizeof(double);
        break;
    }
    case VECTOR2: {
        int64_t n = (int64_t)(BUF_BYTES / sizeof(double)) / 2;
        d = digest_vector(buf, n, 2, sizeof(double));
        logical = (size_t)n * sizeof(double);
        break;
    }
    case SHA256: {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int mdlen = 0;
        if (!EVP_Digest(buf, BUF_BYTES, md, &mdlen, EVP_sha256(), NULL)) {
            fprintf(stderr, "bench_digest: EVP_Digest(SHA-256) failed\n");
            exit(2);
        }
        memcpy(&d.lo, md, sizeof d.lo);
        logical = BUF_BYTES;
        break;
    }
    }
    sink ^= d.lo ^ d.hi;
    return logical;
}

/* Best throughput in GB/s over reps runs. */
static double best_gbps(enum kind kind, const unsigned char *buf, int reps)
{
    double best = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        size_t bytes = digest_once(kind, buf);
        double gbps = (double)bytes / (now_s() - t0) / 1e9;
        if (gbps > best)
            best = gbps;
    }
    return best;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    if (reps <= 0) {
        fprintf(stderr, "bench_digest: repetitions must be a positive integer, got '%s'\n",
                argv[1]);
        return 2;
    }
    unsigned char *buf = malloc(BUF_BYTES);
    if (!buf) {
        fprintf(stderr, "bench_digest: cannot allocate %zu bytes\n", BUF_BYTES);
        return 2;
    }
    /* Non-trivial contents, and every page touched before timing starts. */
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < BUF_BYTES; i += sizeof s) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        memcpy(buf + i, &s, sizeof s);
    }

    static const struct {
        enum kind kind;
        const char *label;
    } cases[] = {
        { READ, "memory read, no digest (the bound)" },
        { BYTES, "xxh3-128 digest_bytes, contiguous" },
        { CACHED, "xxh3-128 digest_bytes, 4 MiB in the caches" },
        { MATRIX, "xxh3-128 digest_matrix, 1024 of ld 1032 doubles" },
        { VECTOR2, "xxh3-128 digest_vector, doubles at inc=2" },
        { SHA256, "sha-256 (OpenSSL EVP), contiguous" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        printf("%-48s %7.2f GB/s\n", cases[i].label, best_gbps(cases[i].kind, buf, reps));
    printf("(best of %d runs each; GB = 1e9 bytes of logical elements; sink %016llx)\n", reps,
           (unsigned long long)sink);
    free(buf);
    return 0;
}
