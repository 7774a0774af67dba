/* What devdigest.c (the CUDA driver, the digest kernels, synchronous
 * digests) shares with devdigest_jobs.c (asynchronous digests): private
 * to shim/cuda's device digests. cuda.h has their public contracts.
 */
#ifndef DETSHIM_CUDA_DEVDIGEST_H
#define DETSHIM_CUDA_DEVDIGEST_H

#include <pthread.h>
#include <stdatomic.h>

#include "cuda/cuda.h"
#include "cuda/cuda_digest_kernel.h"

/* The driver calls, looked up once (cuda_drv_open, under cuda_drv_once);
 * `ok` when the synchronous ones are there and cuInit succeeded. */
struct cuda_drv {
    cuMemcpyDtoH_v2_fn *memcpy_dtoh;
    cuStreamSynchronize_fn *stream_sync;
    cuStreamIsCapturing_fn *is_capturing; /* NULL in drivers before CUDA 10 */
    int ok;
    /* the kernel path; all NULL if the driver lacks one */
    cuCtxGetCurrent_fn *ctx_current;
    cuModuleLoadData_fn *module_load;
    cuModuleGetFunction_fn *module_function;
    cuLaunchKernel_fn *launch;
    cuMemAlloc_v2_fn *mem_alloc;
    cuMemcpyDtoHAsync_v2_fn *memcpy_dtoh_async;
    /* the asynchronous path; async is 0 if the driver lacks one of these
     * or DETSHIM_CUDA_DIGEST=sync */
    cuMemHostAlloc_fn *host_alloc;
    cuMemFreeHost_fn *host_free;
    cuEventCreate_fn *event_create;
    cuEventRecord_fn *event_record;
    cuEventQuery_fn *event_query;
    cuEventSynchronize_fn *event_sync;
    cuEventDestroy_v2_fn *event_destroy; /* NULL: a freed job's event is kept */
    int async;
};
extern struct cuda_drv cuda_drv;
extern pthread_once_t cuda_drv_once;
void cuda_drv_open(void);

/* Operands of this many logical bytes or more are digested by the kernels
 * where they run; smaller ones are copied and hashed. */
enum { KERNEL_MIN_BYTES = 4096 };

/* 1 if work queued on `stream` is being captured into a CUDA graph. */
int cuda_stream_capturing(CUstream stream);
/* Arms the calling thread's exit destructor, which frees its staging
 * buffer and calls cuda_jobs_thread_exit. */
void cuda_thread_arm(void);
/* The exiting thread's pool of jobs: its open job sealed, free ones
 * freed, busy ones handed to whoever completes them, stuck ones kept. */
void cuda_jobs_thread_exit(void);

/* The digest kernels of one context (opaque), held under
 * cuda_kernel_lock: those of the current context (NULL when none load),
 * a stream's scratch memory there (0 when none can be had), and the
 * queueing of a digest, or of a packed gather under KERNEL_MIN_BYTES, of
 * layout l with its result at host address out (0, or -1). */
struct kernels;
extern pthread_mutex_t cuda_kernel_lock;
struct kernels *cuda_kernels_get(void);
CUdeviceptr cuda_stream_scratch(struct kernels *k, CUstream stream);
int cuda_kernel_enqueue(struct kernels *k, CUstream stream, struct dk_layout l, void *out);
int cuda_gather_enqueue(struct kernels *k, CUstream stream, struct dk_layout l, void *out);
/* The kernels' layout of span s: digest_runs' runs. */
struct dk_layout cuda_layout_of(const struct cuda_span *s);

/* Logs, once per process for each reason (one flag each), that a device
 * digest was taken synchronously. */
void cuda_log_sync_once(atomic_flag *once, const char *why);

#endif
