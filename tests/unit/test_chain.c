/* The chain's SHA-256 on SHA-NI (shim/trace/sha256.c) gives OpenSSL's
 * digest for every length and every way of splitting the input (skipped,
 * saying so, on a CPU without SHA-NI, where the chain runs on OpenSSL
 * alone), and a window digest is SHA-256 of its seed and record hashes
 * on either path, across batch and block boundaries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <openssl/evp.h>

#include "detshim/trace_format.h"
#include "trace/chain.h"
#include "trace/sha256.h"

#define MAX_LEN 1100

static uint8_t data[MAX_LEN];

static int setup(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < sizeof data; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        data[i] = (uint8_t)x;
    }
    return 0;
}

static void openssl_sha256(const void *p, size_t n, uint8_t out[32])
{
    unsigned len = 0;
    assert_true(EVP_Digest(p, n, out, &len, EVP_sha256(), NULL));
    assert_int_equal(len, 32);
}

static void require_sha_ni(void)
{
    if (!sha256_fast_available()) {
        print_message("SKIP: this CPU has no SHA-NI; the chain uses OpenSSL only\n");
        skip();
    }
}

static void test_sha_ni_digest_equals_openssl_for_every_length_to_1100(void **state)
{
    (void)state;
    require_sha_ni();
    for (size_t n = 0; n <= MAX_LEN; n++) {
        uint8_t want[32], got[32];
        openssl_sha256(data, n, want);
        struct sha256_ctx c;
        sha256_init(&c);
        sha256_update(&c, data, n);
        sha256_final(&c, got);
        assert_memory_equal(got, want, 32);
    }
}

static void test_sha_ni_digest_is_the_same_however_the_input_is_split(void **state)
{
    (void)state;
    require_sha_ni();
    static const size_t lens[] = { 0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 250, 300, 1100 };
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
        size_t n = lens[l];
        uint8_t want[32];
        openssl_sha256(data, n, want);
        for (size_t step = 1; step <= 70; step++) {
            struct sha256_ctx c;
            uint8_t got[32];
            sha256_init(&c);
            for (size_t off = 0; off < n; off += step)
                sha256_update(&c, data + off, n - off < step ? n - off : step);
            sha256_final(&c, got);
            assert_memory_equal(got, want, 32);
        }
    }
}

/* The length of the test's record hash i: 16 (an XXH3-128), and every
 * third one 32 (a SHA-256, as an identity stream's are). */
static uint32_t hash_len(size_t i)
{
    return i % 3 == 2 ? 32 : 16;
}

/* SHA-256 of TRACE_CHAIN_SEED and n record hashes (taken from data one
 * after the other), by OpenSSL in one call: what a window digest must be. */
static void window_digest_by_definition(size_t n, uint8_t out[32])
{
    static uint8_t msg[sizeof TRACE_CHAIN_SEED + MAX_LEN];
    size_t seed = strlen(TRACE_CHAIN_SEED), len = 0;
    for (size_t i = 0; i < n; i++)
        len += hash_len(i);
    memcpy(msg, TRACE_CHAIN_SEED, seed);
    memcpy(msg + seed, data, len);
    openssl_sha256(msg, seed + len, out);
}

static void test_window_digest_is_sha256_of_seed_and_hashes_on_sha_ni_and_on_openssl(void **state)
{
    (void)state;
    /* Counts around a block and the batch (CHAIN_BATCH bytes: 24 of the
     * test's hashes), and a hash that does not fit the batch's end. */
    static const size_t counts[] = { 0, 1, 3, 4, 5, 23, 24, 25, 31, 32, 33, 48, 49 };
    _Static_assert(33 * 16 + 16 * 32 <= MAX_LEN, "49 hashes come from data");
    int had_fast = chain_set_fast(1);
    for (int on = 1; on >= 0; on--) {
        if (on && !had_fast)
            continue; /* no SHA-NI: OpenSSL only */
        chain_set_fast(on);
        struct chain_window w;
        memset(&w, 0, sizeof w);
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            uint8_t want[32], got[32];
            assert_int_equal(chain_window_begin(&w), 0); /* reused, as the writer does */
            for (size_t i = 0, off = 0; i < counts[c]; off += hash_len(i++))
                chain_window_add(&w, data + off, hash_len(i));
            assert_int_equal(chain_window_end(&w, got), 0);
            window_digest_by_definition(counts[c], want);
            assert_memory_equal(got, want, 32);
        }
        chain_window_free(&w);
    }
    chain_set_fast(1);
}

static void test_one_shot_is_sha256_of_the_concatenation_on_either_path(void **state)
{
    (void)state;
    uint8_t want[32], got[32];
    openssl_sha256(data, 533, want);
    for (int on = 1; on >= 0; on--) {
        chain_set_fast(on);
        assert_int_equal(chain_sha256(data, 33, data + 33, 500, got), 0);
        assert_memory_equal(got, want, 32);
    }
    chain_set_fast(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha_ni_digest_equals_openssl_for_every_length_to_1100),
        cmocka_unit_test(test_sha_ni_digest_is_the_same_however_the_input_is_split),
        cmocka_unit_test(test_window_digest_is_sha256_of_seed_and_hashes_on_sha_ni_and_on_openssl),
        cmocka_unit_test(test_one_shot_is_sha256_of_the_concatenation_on_either_path),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
