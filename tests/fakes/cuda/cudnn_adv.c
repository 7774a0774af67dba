/* A fake of a cuDNN 9 sub-library (libcudnn_adv.so.9): cuDNN's libraries
 * fetch each other's functions with dlopen and dlsym, and those lookups
 * must keep reaching the real functions when the audit module
 * (shim/audit/audit.c) redirects the program's own lookups to the shim.
 * tests/programs/gpu_dlsym.c asks it for one.
 */
#include <dlfcn.h>

#include "fake.h"

FAKE_EXPORT const void *fake_vendor_lookup(const char *lib, const char *name)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return NULL;
    /* Not a tail call: the loader knows who asks by the return address. */
    const void *p = dlsym(h, name);
    dlclose(h);
    return p;
}
