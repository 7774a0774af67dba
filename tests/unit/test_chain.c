/* The chain's SHA-256 on SHA-NI (shim/trace/sha256.c) gives OpenSSL's
 * digest for every length and every way of splitting the input, and the
 * chain heads are the same on either path. Skipped, saying so, on a CPU
 * without SHA-NI, where the chain runs on OpenSSL alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <openssl/evp.h>

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

static void test_chain_heads_are_equal_on_sha_ni_and_on_openssl(void **state)
{
    (void)state;
    require_sha_ni();
    uint8_t fast_head[32], slow_head[32], fast_root[32], slow_root[32];
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    assert_non_null(md);
    for (int on = 1; on >= 0; on--) {
        chain_set_fast(on);
        uint8_t *head = on ? fast_head : slow_head;
        chain_start(head);
        for (size_t n = 0; n <= 400; n += 7)
            assert_int_equal(chain_step(md, head, data + n, n), 0);
        uint8_t *root = on ? fast_root : slow_root;
        assert_int_equal(chain_sha256(data, 33, data + 33, 500, root), 0);
    }
    chain_set_fast(1);
    EVP_MD_CTX_free(md);
    assert_memory_equal(fast_head, slow_head, 32);
    assert_memory_equal(fast_root, slow_root, 32);
    /* The one-shot is SHA-256 of the concatenation. */
    uint8_t want[32];
    openssl_sha256(data, 533, want);
    assert_memory_equal(fast_root, want, 32);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha_ni_digest_equals_openssl_for_every_length_to_1100),
        cmocka_unit_test(test_sha_ni_digest_is_the_same_however_the_input_is_split),
        cmocka_unit_test(test_chain_heads_are_equal_on_sha_ni_and_on_openssl),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
