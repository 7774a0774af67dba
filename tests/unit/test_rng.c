/* Pinned entropy is exactly the documented derivation, and exemption goes
 * by module file-name prefix. */
#include <openssl/evp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "trace/chain.h"
#include "core/core.h"
#include "core/lineage.h"
#include "rng/rng.h"

/* ChaCha20 keystream under SHA256("detshim.rng.v1" || seed || lineage || 0
 * || source || 0 || ordinal), written out independently of stream.c. */
static void expected(uint64_t seed, const char *lineage, const char *source, uint64_t ordinal,
                     unsigned char *out, int len)
{
    unsigned char m[512], key[32], iv[16] = { 0 };
    size_t n = 0;
    memcpy(m, "detshim.rng.v1", 14);
    n = 14;
    for (int i = 0; i < 8; i++)
        m[n++] = (unsigned char)(seed >> (8 * i));
    memcpy(m + n, lineage, strlen(lineage) + 1);
    n += strlen(lineage) + 1;
    memcpy(m + n, source, strlen(source) + 1);
    n += strlen(source) + 1;
    for (int i = 0; i < 8; i++)
        m[n++] = (unsigned char)(ordinal >> (8 * i));
    assert_int_equal(chain_sha256(m, n, NULL, 0, key), 0);
    memset(out, 0, (size_t)len);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int got = 0;
    assert_true(EVP_EncryptInit_ex(ctx, EVP_chacha20(), NULL, key, iv));
    assert_true(EVP_EncryptUpdate(ctx, out, &got, out, len));
    EVP_CIPHER_CTX_free(ctx);
}

static void test_stream_is_the_documented_keyed_chacha20(void **state)
{
    (void)state;
    lineage_start(); /* "main": no DETSHIM_LINEAGE in the test's environment */
    core_cfg.seed = 42;
    unsigned char got[100], want[100];
    for (uint64_t ordinal = 0; ordinal < 3; ordinal++) {
        assert_int_equal(rng_fill(RNG_DEV_URANDOM, got, sizeof got), 0);
        expected(42, "main", "/dev/urandom", ordinal, want, sizeof want);
        assert_memory_equal(got, want, sizeof got);
    }
}

static void test_stream_differs_by_source_and_seed(void **state)
{
    (void)state;
    unsigned char a[32], b[32];
    core_cfg.seed = 7;
    assert_int_equal(rng_fill(RNG_GETRANDOM, a, sizeof a), 0);
    assert_int_equal(rng_fill(RNG_GETENTROPY, b, sizeof b), 0); /* both ordinal 0 */
    assert_memory_not_equal(a, b, sizeof a);
    unsigned char want[32];
    expected(7, "main", "getrandom", 0, want, sizeof want);
    assert_memory_equal(a, want, sizeof a);
    expected(8, "main", "getrandom", 0, want, sizeof want);
    assert_memory_not_equal(a, want, sizeof a);
}

static void test_crypto_libraries_and_policy_prefixes_are_exempt(void **state)
{
    (void)state;
    assert_true(rng_module_exempt("libcrypto.so.3", ""));
    assert_true(rng_module_exempt("libssl.so.3", NULL));
    assert_true(rng_module_exempt("libgnutls.so.30", ""));
    assert_true(rng_module_exempt("libsodium.so.23", ""));
    assert_false(rng_module_exempt("libpython3.11.so.1.0", ""));
    assert_false(rng_module_exempt("python3.11", "libfoo, libbar"));
    assert_true(rng_module_exempt("libbar.so.2", "libfoo, libbar"));
    assert_true(rng_module_exempt("libfoo.so", "libfoo,libbar"));
    assert_false(rng_module_exempt("libfo.so", "libfoo"));
    assert_false(rng_module_exempt("anything", " , ,"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_is_the_documented_keyed_chacha20),
        cmocka_unit_test(test_stream_differs_by_source_and_seed),
        cmocka_unit_test(test_crypto_libraries_and_policy_prefixes_are_exempt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
