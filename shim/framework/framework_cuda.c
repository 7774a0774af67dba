/* Step records of tensors in GPU memory. The host path (framework.c)
 * needs the tensors' bytes on the host: for a model on the GPU the hook
 * copied every parameter and optimizer-state tensor to the host after
 * every step, each copy waiting for the GPU. On an H200 that was 2.0 ms
 * of a 1.9 ms PyTorch step (docs/frameworks.md, Costs). Here a device
 * tensor is digested by the device digest kernels on the stream the step
 * ran on (cuda_rec_strided), queued behind the step's own work, and the
 * record waits in its thread's FIFO until the digests are back, as an
 * intercepted cuBLAS call's does; nothing waits for the GPU. The record
 * is the one the host path writes for the same values: the same params,
 * parts and operands, each digest the XXH3-128 of the same logical
 * elements. A tensor the device could not digest (no driver, a failed
 * launch) is recorded as the digest of nothing with a cuda.digest note,
 * as a cuBLAS operand is.
 */
#include <stdint.h>
#include <stdio.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "framework/framework.h"
#include "trace/digest.h"
#include "trace/trace.h"

static void step_part(struct trace_rec *r, const char *framework, const char *optimizer,
                      int64_t step, int part)
{
    trace_rec_begin(r, "framework.step");
    trace_rec_str(r, "framework", framework ? framework : "");
    trace_rec_str(r, "optimizer", optimizer ? optimizer : "");
    trace_rec_int(r, "step", step);
    if (part > 0)
        trace_rec_int(r, "part", part);
}

/* detshim_framework_step's record, where tensor i lies in the memory of
 * the current CUDA context when on_device[i] is nonzero (else on the
 * host), digested on `stream` (a cudaStream_t; 0 the legacy default
 * stream) after the work queued there so far. Returns how many tensors
 * were taken, or -1 when nothing was recorded (no trace, inside the shim,
 * bad arguments). */
DETSHIM_EXPORT int detshim_framework_step_cuda(
    const char *framework, const char *optimizer, int64_t step, int n, const char *const *names,
    const int *roles, const void *const *data, const int64_t *elem_sizes, const int *ndims,
    const int64_t *shapes, const int64_t *strides, const int *on_device, uintptr_t stream)
{
    if (n < 0 || (n && (!names || !roles || !data || !elem_sizes || !ndims || !shapes ||
                        !strides || !on_device)))
        return -1;
    if (!fw_enter())
        return -1;
    struct trace_rec r;
    /* The record holds its operands' names until it is committed. */
    char name[TRACE_MAX_OPERANDS][FW_NAME_MAX + 1];
    int part = 0, operands = 0, taken = 0;
    step_part(&r, framework, optimizer, step, part);
    for (int i = 0; i < n; i++) {
        struct fw_job j;
        const size_t at = (size_t)i * DIGEST_MAX_DIMS;
        if (!names[i] || (roles[i] != TRACE_ROLE_IN && roles[i] != TRACE_ROLE_OUT) ||
            fw_describe(&j, data[i], elem_sizes[i], ndims[i], shapes + at, strides + at) != 0)
            continue; /* as framework.c: a tensor it cannot walk is left out */
        if (operands == TRACE_MAX_OPERANDS) {
            cuda_commit(&r);
            step_part(&r, framework, optimizer, step, ++part);
            operands = 0;
        }
        char *nm = name[operands];
        snprintf(nm, sizeof name[0], "%s", names[i]);
        int elem = (int)elem_sizes[i];
        if (!on_device[i] || !j.count) {
            trace_rec_operand(&r, nm, roles[i],
                              j.count ? fw_digest(data[i], &j.shape) : digest_bytes(NULL, 0),
                              j.count, elem);
        } else if (cuda_rec_strided(&r, nm, roles[i], (CUstream)stream, data[i], &j.shape) != 0) {
            trace_rec_operand(&r, nm, roles[i], digest_bytes(NULL, 0), j.count, elem);
            cuda_note_no_digest(&r);
        }
        operands++;
        taken++;
    }
    cuda_commit(&r);
    guard_leave();
    return taken;
}
