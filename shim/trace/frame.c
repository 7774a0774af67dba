/* The frame hash and check (trace_format.h), in their own file because both
 * the writer inside the shim and the reader inside detdiff need exactly
 * these functions. A RECORD frame's hash is also its record hash, the one
 * its window's digest is over, so a payload is hashed once for both.
 */
#define XXH_INLINE_ALL
#include <string.h>
#include <xxhash.h>

#include "trace/trace.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the frame hash is stored as two little-endian u64 with plain moves"
#endif

void trace_frame_hash(const uint8_t *payload, uint32_t len, uint8_t hash[16])
{
    XXH128_hash_t h = XXH3_128bits(payload, len);
    memcpy(hash, &h.low64, 8);
    memcpy(hash + 8, &h.high64, 8);
}

uint32_t trace_frame_check_of(const uint8_t hash[16], uint16_t type, uint32_t thread)
{
    return (uint32_t)XXH3_64bits_withSeed(hash, 16, ((uint64_t)type << 32) | thread);
}

uint32_t trace_frame_check(const uint8_t *payload, uint32_t len, uint16_t type, uint32_t thread)
{
    uint8_t hash[16];
    trace_frame_hash(payload, len, hash);
    return trace_frame_check_of(hash, type, thread);
}
