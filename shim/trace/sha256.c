/* SHA-256 on the CPU's SHA extensions (SHA-NI), for the hash chain's hot
 * path (chain.c): a traced call hashes some 250 bytes, and OpenSSL 3's EVP
 * layer (context re-initialisation, an allocation and a cleanse per
 * message) cost as much as the compression itself there. Only used where
 * the CPU has SHA-NI (sha256_fast_available); chain.c falls back to
 * OpenSSL elsewhere. The output is FIPS 180-4 SHA-256, bit for bit
 * (tests/unit/test_trace.c compares it with OpenSSL on many lengths).
 */
#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>
#include <string.h>

#include "trace/sha256.h"

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

int sha256_fast_available(void)
{
    static atomic_int known = -1; /* racing threads store the same value */
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (k < 0) {
        unsigned a, b, c, d;
        k = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSSE3) && (c & bit_SSE4_1);
        k = k && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k;
}

/* The compression of nblocks 64-byte blocks into state (a..h). The state
 * is kept as the instructions want it: ABEF and CDGH. */
__attribute__((target("sha,sse4.1,ssse3"))) static void compress(uint32_t state[8],
                                                                 const uint8_t *data,
                                                                 size_t nblocks)
{
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i tmp = _mm_loadu_si128((const __m128i *)&state[0]);
    __m128i s1 = _mm_loadu_si128((const __m128i *)&state[4]);
    tmp = _mm_shuffle_epi32(tmp, 0xB1);     /* CDAB */
    s1 = _mm_shuffle_epi32(s1, 0x1B);       /* EFGH */
    __m128i s0 = _mm_alignr_epi8(tmp, s1, 8); /* ABEF */
    s1 = _mm_blend_epi16(s1, tmp, 0xF0);    /* CDGH */
    for (; nblocks; nblocks--, data += 64) {
        __m128i abef = s0, cdgh = s1, m[4];
#pragma GCC unroll 16
        for (int i = 0; i < 16; i++) {
            __m128i w;
            if (i < 4) {
                w = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * i)), bswap);
            } else {
                /* W[t] from W[t-16..t-1], four at a time. */
                w = _mm_sha256msg1_epu32(m[i & 3], m[(i - 3) & 3]);
                w = _mm_add_epi32(w, _mm_alignr_epi8(m[(i - 1) & 3], m[(i - 2) & 3], 4));
                w = _mm_sha256msg2_epu32(w, m[(i - 1) & 3]);
            }
            m[i & 3] = w;
            __m128i wk = _mm_add_epi32(w, _mm_loadu_si128((const __m128i *)&sha256_k[4 * i]));
            s1 = _mm_sha256rnds2_epu32(s1, s0, wk);
            s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(wk, 0x0E));
        }
        s0 = _mm_add_epi32(s0, abef);
        s1 = _mm_add_epi32(s1, cdgh);
    }
    tmp = _mm_shuffle_epi32(s0, 0x1B);      /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xB1);       /* DCHG */
    s0 = _mm_blend_epi16(tmp, s1, 0xF0);    /* DCBA */
    s1 = _mm_alignr_epi8(s1, tmp, 8);       /* ABEF */
    _mm_storeu_si128((__m128i *)&state[0], s0);
    _mm_storeu_si128((__m128i *)&state[4], s1);
}

void sha256_init(struct sha256_ctx *c)
{
    static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    memcpy(c->state, iv, sizeof iv);
    c->total = 0;
    c->fill = 0;
}

void sha256_update(struct sha256_ctx *c, const void *data, size_t len)
{
    const uint8_t *p = data;
    if (!len)
        return; /* data may be NULL: memcpy must not see it */
    c->total += len;
    if (c->fill) {
        size_t take = 64 - c->fill < len ? 64 - c->fill : len;
        memcpy(c->block + c->fill, p, take);
        c->fill += take;
        p += take;
        len -= take;
        if (c->fill < 64)
            return;
        compress(c->state, c->block, 1);
        c->fill = 0;
    }
    if (len >= 64) {
        compress(c->state, p, len / 64);
        p += len & ~(size_t)63;
        len &= 63;
    }
    memcpy(c->block, p, len);
    c->fill = len;
}

void sha256_final(struct sha256_ctx *c, uint8_t out[32])
{
    uint64_t bits = c->total * 8;
    c->block[c->fill++] = 0x80;
    if (c->fill > 56) {
        memset(c->block + c->fill, 0, 64 - c->fill);
        compress(c->state, c->block, 1);
        c->fill = 0;
    }
    memset(c->block + c->fill, 0, 56 - c->fill);
    for (int i = 0; i < 8; i++)
        c->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
    compress(c->state, c->block, 1);
    for (int i = 0; i < 8; i++) {
        uint32_t v = c->state[i];
        out[4 * i] = (uint8_t)(v >> 24);
        out[4 * i + 1] = (uint8_t)(v >> 16);
        out[4 * i + 2] = (uint8_t)(v >> 8);
        out[4 * i + 3] = (uint8_t)v;
    }
}
