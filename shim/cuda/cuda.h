/* The cuda family (shim/cuda): interceptors for cuBLAS, cuBLASLt, cuDNN
 * and cuRAND, and the helpers they share: entering and leaving an
 * interceptor, optional symbols of the vendor libraries, element sizes,
 * and device digests (devdigest.c), which fingerprint device buffers with
 * the same algorithm and logical-element order as the host digests of
 * shim/trace/digest.c, so a device operand's digest equals the host
 * digest of the same bytes.
 */
#ifndef DETSHIM_CUDA_H
#define DETSHIM_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "detshim.h"
#include "cuda/cuda_api.h"
#include "cuda/cuda_libs.h"
#include "trace/digest.h"
#include "trace/trace.h"

/* REAL_FN for the cuda family: a definition in a vendor library
 * (cuda_is_vendor_file, shim/cuda/cuda_libs.h) is preferred to one of the
 * same name elsewhere, such as a framework's own stub that forwards to
 * whatever dlsym answers (under the audit module, our wrapper), which
 * would loop. */
#define CUDA_REAL_FN(type, name)                                                         \
    static void *real_##name##_cache;                                                    \
    type real = (type)(uintptr_t)resolve_real_cached_preferring(&real_##name##_cache,    \
                                                                #name, cuda_is_vendor_file)

/* One intercepted call: `traced` when it is recorded, `pinned` when the
 * policy's [cuda] mode is pinned. */
struct cuda_call {
    int traced, pinned;
};

/* Starts an interceptor: 0 when the call was re-entered from inside the
 * shim or a vendor library (the caller then calls the real function and
 * returns, touching nothing); else 1 with the guard held and *c filled.
 * Every 1 is paired with cuda_leave(). */
int cuda_enter(struct cuda_call *c);
void cuda_leave(void);
/* trace_rec_commit for the family: seals the call's queued digests
 * first (cuda_digest_seal), so that a committed record, which any thread
 * may complete, never waits on a job its own thread has yet to seal. */
void cuda_commit(struct trace_rec *r);

/* A vendor symbol we call but do not intercept, looked up once and cached
 * in *cache; NULL (not fatal) where no loaded library defines it. */
void *cuda_sym(void **cache, const char *name);

/* Whether the family is reached (reach.c): cuda_enter notes each call;
 * cuda_reach_fork_child (a fork handler the lifecycle calls) marks a
 * forked child, which inherits the count; cuda_reach_check,
 * at exit, warns on stderr when a vendor library and the driver are
 * loaded, no call arrived and the audit module is not loaded. */
void cuda_reach_count(void);
void cuda_reach_fork_child(void);
void cuda_reach_check(void);

/* Bytes per element of a cudaDataType; 0 for a type we do not know. */
int cuda_type_size(int type);
/* 1 if the scalar at host address v, of cudaDataType `type`, is zero
 * (+0 or -0; both parts of a complex). Unknown types are never zero. */
int cuda_scalar_is_zero(const void *v, int type);

/* Device digests (devdigest.c). All take `stream`, the stream the call's
 * work runs on, and digest the buffer as the work queued there so far
 * leaves it (the digest of an input is taken before the call, of an
 * output after it): by the device kernel for 4 KiB and more where it
 * loads, else copy-and-hash. cuda_digest_start queues the digest and
 * returns at once; the others wait for the stream. Each returns 0, or -1
 * when there is no CUDA driver or a copy failed; *d is then the digest of
 * no bytes. */

/* The note value of an operand that could not be digested. */
#define CUDA_NO_DIGEST_NOTE \
    "unavailable (no CUDA driver, a copy failed, or the stream is being captured)"

/* A device array: the logical elements of `shape` (digest_strided's
 * layout, every dim >= 1) at p. With `indirect`, p is instead the device
 * address of the pointer to the array, an entry of a pointer array in
 * device memory, which the digest kernels read on the device. */
struct cuda_span {
    const void *p;
    struct digest_shape shape;
    int indirect;
};
/* Queues the digest of n spans on `stream` (n > 1: cuda_digest_combine of
 * theirs) without waiting, and fills *later for trace_rec_operand_
 * deferred. Returns 0, or -1 when it cannot be queued (no driver, the
 * stream is being captured, DETSHIM_CUDA_DIGEST=sync, a driver error, no
 * free job or pinned memory, an indirect span where no digest kernel
 * runs): the caller then digests synchronously. */
int cuda_digest_start(CUstream stream, const struct cuda_span *spans, int64_t n,
                      struct trace_deferred *later);
/* Records, after what the calling thread's current call queued with
 * cuda_digest_start, the one event that completes all of it (one per
 * call and stream, not one per operand). Called by cuda_commit and
 * cuda_leave; does nothing when nothing is queued. */
void cuda_digest_seal(void);

/* The digest of a direct span, waiting for it: digest_strided() of its
 * elements, on the device. A dim <= 0 digests nothing. */
int cuda_digest_span(CUstream stream, const struct cuda_span *s, detshim_digest *d);
/* `lines` runs of `len` elements of `elem` bytes, run j at
 * dptr + j*ld elements: digest_matrix()'s layout, on the device. */
int cuda_digest_matrix(CUstream stream, const void *dptr, int64_t len, int64_t lines, int64_t ld,
                       size_t elem, detshim_digest *d);
/* n contiguous bytes. */
int cuda_digest_bytes(CUstream stream, const void *dptr, size_t n, detshim_digest *d);
/* Copies n bytes from device address dptr into dst, waiting for the
 * stream (scalars passed by device pointer; a pointer array where no
 * digest kernel runs). Returns 0 or -1. */
int cuda_read(CUstream stream, void *dst, const void *dptr, size_t n);
/* The batch's digest: with one matrix, that matrix's digest; with more,
 * digest_bytes over the matrices' digests in batch order (lo, hi each
 * little-endian), so a batch digests alike on the device and the host. */
detshim_digest cuda_digest_combine(const detshim_digest *parts, int64_t n);
/* How device buffers are digested, for the trace header and notes. */
const char *cuda_digest_method(void);
/* The device digest kernels' PTX (build/gen/digest_ptx.c); "" in a build
 * without nvcc. */
extern const char cuda_digest_ptx[];

/* Records the device matrix op(X) of a column-major routine as operand
 * `name`: rows x cols after op, `trans` a cublasOperation_t, leading
 * dimension ld, `batch` matrices `stride` elements apart (batch 1 for a
 * plain call). An empty or invalid shape records the digest of nothing;
 * a failed device copy records the same and notes cuda.digest. The
 * digest is usually deferred (cuda_digest_start): the record then waits
 * in its thread's FIFO of pending records when committed. */
void cuda_rec_matrix(struct trace_rec *r, const char *name, int role, CUstream stream,
                     const void *x, int trans, int64_t rows, int64_t cols, int64_t ld,
                     int elem, int64_t batch, int64_t stride);
/* The same for a batch given as an array of device pointers, itself in
 * device memory (cublasGemmBatchedEx): the digest kernels read it on the
 * device, so nothing waits; where no kernel runs, it is read to the host
 * first, waiting for the stream. */
void cuda_rec_matrix_array(struct trace_rec *r, const char *name, int role, CUstream stream,
                           const void *const *array, int trans, int64_t rows, int64_t cols,
                           int64_t ld, int elem, int64_t batch);
/* A scalar alpha or beta of cudaDataType `type`, at host or device address
 * v, recorded as an IN operand (its bytes digested; the digest of nothing
 * when it cannot be read). One on the device is read now, waiting for the
 * stream: whether it is zero decides which operands are read at all.
 * Returns 1 if it is known to be zero, else 0: an unreadable scalar counts
 * as nonzero, so the operands it scales are still digested. */
int cuda_rec_scalar(struct trace_rec *r, const char *name, CUstream stream, const void *v,
                    int on_device, int type);

/* Records n contiguous device bytes at p as operand `name` with `count`
 * elements of `elem` bytes (queued, or digested now as rec_matrix does).
 * Returns 0, or -1 when they could not be digested: nothing is recorded
 * then, and the caller records the failure. */
int cuda_rec_bytes(struct trace_rec *r, const char *name, int role, CUstream stream,
                   const void *p, size_t n, uint64_t count, int elem);
/* Records the logical elements of the strided device array `shape` at p
 * (digest_strided's order; padding never read) as operand `name`, its
 * count the product of the dims; a dim <= 0 records the digest of
 * nothing. Returns 0, or -1 (nothing recorded) when they could not be
 * digested or the shape is not one (ndims outside 1..DIGEST_MAX_DIMS, a
 * negative stride). */
int cuda_rec_strided(struct trace_rec *r, const char *name, int role, CUstream stream,
                     const void *p, const struct digest_shape *shape);

/* Notes, once per record, that a device operand could not be digested
 * (no driver, a failed copy, or a stream in graph capture). */
void cuda_note_no_digest(struct trace_rec *r);

/* The note "cuda.mode": pinned or passthrough. */
void cuda_note_mode(struct trace_rec *r, const struct cuda_call *c);

/* cuBLAS handles (cublas.c), for every cuBLAS interceptor: the handle's
 * stream (NULL, the legacy default stream, if unknown); 1 if its scalars
 * are passed by device pointer; and the notes cuda.atomics and
 * cuda.math_mode as the handle has them now. */
CUstream cublas_handle_stream(cublasHandle_t h);
int cublas_handle_device_scalars(cublasHandle_t h);
void cublas_note_handle(struct trace_rec *r, cublasHandle_t h);

/* cuDNN tensors (cudnn.c), for every cuDNN interceptor: the handle's
 * stream; the cudaDataType of the scaling factors for a tensor's data
 * (host doubles for double data, host floats otherwise); bytes per
 * element of a cudnnDataType_t (0: unknown or packed below a byte); and
 * the operand `name` digested over the tensor's logical elements, or over
 * its span (a filter, is_filter 1; a tensor cuDNN will not describe),
 * the digest of nothing and a cuda.digest note when neither works. */
CUstream cudnn_handle_stream(cudnnHandle_t h);
int cudnn_scale_type(cudnnTensorDescriptor_t t);
int cudnn_type_size(cudnnDataType_t type);
void cudnn_rec_tensor(struct trace_rec *r, const char *name, int role, CUstream stream,
                      const void *p, const void *desc, int is_filter);

/* Legacy cuDNN convolutions (cudnn_algo.c): a direction, and the
 * descriptors of one convolution by position, each a tensor or a filter
 * as the direction takes it (forward: tensor1 x, filter2 w, tensor4 y;
 * backward data: filter1 w, tensor2 dy, tensor4 dx; backward filter:
 * tensor1 x, tensor2 dy, filter4 dw). */
enum conv_direction { CONV_FORWARD, CONV_BACKWARD_DATA, CONV_BACKWARD_FILTER };
struct conv_descs {
    cudnnTensorDescriptor_t tensor1, tensor2, tensor4;
    cudnnFilterDescriptor_t filter1, filter2, filter4;
    cudnnConvolutionDescriptor_t conv;
};
/* The algorithm to run instead of the program's `algo` in pinned mode:
 * algo itself when cuDNN's heuristic (cudnnGet*Algorithm_v7) marks it
 * deterministic for these descriptors, else the first deterministic one
 * it lists as supported that needs at most `workspace` bytes. Writes to
 * note (len bytes) what it did when it replaced algo or could not pin it,
 * "" otherwise. Never fails: when cuDNN cannot tell, algo is kept and the
 * note says "not pinned". */
int cudnn_pinned_algo(enum conv_direction dir, cudnnHandle_t h, const struct conv_descs *d,
                      int algo, size_t workspace, char *note, size_t len);

#endif
