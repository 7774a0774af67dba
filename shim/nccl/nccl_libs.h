/* The vendor library the nccl family wraps, by file name prefix (any
 * soname version). Shared by the audit module (shim/audit/audit.c), which
 * redirects dlsym lookups into it (JAX's CUDA plugin dlopens libnccl and
 * fetches every function with dlsym), and the family's resolution of the
 * real functions, which prefers a definition there.
 */
#ifndef DETSHIM_NCCL_LIBS_H
#define DETSHIM_NCCL_LIBS_H

#include <string.h>

/* 1 if `file`, a file name without its directory, is libnccl's. */
static inline int nccl_is_vendor_file(const char *file)
{
    return strncmp(file, "libnccl.so", 10) == 0;
}

#endif
