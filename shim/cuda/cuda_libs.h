/* The vendor libraries whose functions the cuda family wraps, by file
 * name prefix (any soname version; "libcudnn" covers cuDNN 9's
 * sub-libraries too). Shared by the audit module (shim/audit/audit.c),
 * which redirects dlsym lookups into them, and shim/cuda/reach.c, which
 * warns when one is loaded and none of its calls reached the shim.
 */
#ifndef DETSHIM_CUDA_LIBS_H
#define DETSHIM_CUDA_LIBS_H

#include <stddef.h>
#include <string.h>

#define CUDA_VENDOR_PREFIXES "libcublas.so", "libcublasLt.so", "libcudnn", "libcurand.so"

/* 1 if `file`, a file name without its directory, is a vendor library's. */
static inline int cuda_is_vendor_file(const char *file)
{
    static const char *const prefixes[] = { CUDA_VENDOR_PREFIXES };
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(file, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

/* The audit module's file name, as LD_AUDIT names it. */
#define CUDA_AUDIT_LIB "libdetshim-audit.so"

#endif
