/* A framework's stub of cuBLAS (libtfstub.so, not a vendor library's
 * name), as TensorFlow's and XLA's are built: it exports cublasCreate_v2
 * itself and forwards to whatever dlsym answers in the cuBLAS it dlopens,
 * which under the audit module is libdetshim's wrapper. The wrapper must
 * then call cuBLAS's own function, not this stub again, or the two would
 * call each other until the stack runs out (tests/programs/gpu_dlsym.c,
 * mode "stub").
 */
#include <dlfcn.h>

#include "fake.h"

FAKE_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    static cublasCreate_v2_fn *forward;
    if (!forward) {
        void *lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
        forward = lib ? (cublasCreate_v2_fn *)(uintptr_t)dlsym(lib, "cublasCreate_v2") : NULL;
    }
    return forward ? forward(h) : CUBLAS_STATUS_NOT_INITIALIZED;
}
