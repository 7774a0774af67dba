/* libzstd for compressed traces ([trace] compress = zstd), loaded with
 * dlopen when first needed, so neither the shim nor the reader links it
 * and a machine without it runs everything else. Shared by the writer
 * (shim/trace/compress.c) and the reader (libdetshim-reader). Only the
 * one-shot frame API is used: each compressed trace frame holds one
 * complete zstd frame with its content size written in it.
 */
#ifndef DETSHIM_ZSTD_LIB_H
#define DETSHIM_ZSTD_LIB_H

#include <stddef.h>
#include <stdint.h>

/* Loads libzstd.so.1 once. Returns 0, or -1 with the reason in why. */
int zstd_load(char *why, size_t whylen);
/* Compresses src at level `level` with this thread's context into dst
 * (cap bytes). Returns the compressed size, or 0 when it failed or would
 * not fit. */
size_t zstd_compress(void *dst, size_t cap, const void *src, size_t n, int level);
/* The content size a zstd frame says it has, or -1 when it says none or
 * is not a frame. */
int64_t zstd_content_size(const void *src, size_t n);
/* Decompresses the one frame in src into dst (cap bytes). Returns the
 * size, or -1 on a damaged frame or one that does not fit. */
int64_t zstd_decompress(void *dst, size_t cap, const void *src, size_t n);
/* The load address (link map l_addr) of libzstd when this library's
 * dlopen was the one that loaded it into the process, else 0: the
 * loaded-code records leave out a library only the shim brought in. */
uintptr_t zstd_loaded_by_us(void);

#endif
