/* The frame check (trace_format.h), in its own file because both the writer
 * inside the shim and the reader inside detdiff need exactly this function.
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "trace/trace.h"

uint32_t trace_frame_check(const uint8_t *payload, uint32_t len, uint16_t type, uint32_t thread)
{
    return (uint32_t)XXH3_64bits_withSeed(payload, len, ((uint64_t)type << 32) | thread);
}
