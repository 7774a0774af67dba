/* What every interceptor of the cuda family shares: entering and leaving
 * (the re-entry guard, the policy's mode, whether to record), vendor
 * symbols we call without intercepting, element sizes of cudaDataType,
 * and recording device operands and scalars through devdigest.c. Sits
 * between the per-library interceptors (left) and the trace writer.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "trace/digest.h"
#include "core/policy.h"

int cuda_enter(struct cuda_call *c)
{
    if (guard_held())
        return 0;
    cuda_reach_count();
    trace_start(); /* a no-op after start-up; the CUDA libraries load late */
    if (!guard_enter())
        return 0;
    c->pinned = core_cfg.cuda_mode == CUDA_MODE_PINNED;
    c->traced = trace_active();
    return 1;
}

void cuda_leave(void)
{
    cuda_digest_seal();
    guard_leave();
}

void cuda_commit(struct trace_rec *r)
{
    cuda_digest_seal();
    trace_rec_commit(r);
}

void *cuda_sym(void **cache, const char *name)
{
    void *p = atomic_load_explicit((_Atomic(void *) *)cache, memory_order_acquire);
    if (!p) {
        p = resolve_real_preferring(name, cuda_is_vendor_file);
        if (p)
            atomic_store_explicit((_Atomic(void *) *)cache, p, memory_order_release);
    }
    return p;
}

int cuda_type_size(int type)
{
    switch (type) {
    case CUDA_R_8I: case CUDA_R_8U: case CUDA_R_8F_E4M3: case CUDA_R_8F_E5M2:
        return 1;
    case CUDA_R_16F: case CUDA_R_16BF: case CUDA_C_8I:
        return 2;
    case CUDA_R_32F: case CUDA_R_32I: case CUDA_R_32U: case CUDA_C_16F: case CUDA_C_16BF:
        return 4;
    case CUDA_R_64F: case CUDA_C_32F: case CUDA_C_32I:
        return 8;
    case CUDA_C_64F:
        return 16;
    default:
        return 0;
    }
}

int cuda_scalar_is_zero(const void *v, int type)
{
    /* Zero whatever the sign: the sign bit of each part is masked. */
    uint64_t a[2] = { 0, 0 };
    switch (type) {
    case CUDA_R_16F: case CUDA_R_16BF: {
        uint16_t h;
        memcpy(&h, v, 2);
        return (h & 0x7fffu) == 0;
    }
    case CUDA_R_32F: case CUDA_C_32F: {
        uint32_t f[2] = { 0, 0 };
        memcpy(f, v, type == CUDA_R_32F ? 4 : 8);
        return (f[0] & 0x7fffffffu) == 0 && (f[1] & 0x7fffffffu) == 0;
    }
    case CUDA_R_64F: case CUDA_C_64F:
        memcpy(a, v, type == CUDA_R_64F ? 8 : 16);
        return (a[0] << 1) == 0 && (a[1] << 1) == 0;
    case CUDA_R_32I: {
        int32_t i;
        memcpy(&i, v, 4);
        return i == 0;
    }
    default:
        return 0;
    }
}

void cuda_note_no_digest(struct trace_rec *r)
{
    for (int i = 0; i < r->nnotes; i++)
        if (strcmp(r->notes[i].key, "cuda.digest") == 0)
            return;
    trace_rec_note(r, "cuda.digest", CUDA_NO_DIGEST_NOTE);
}

/* The stored extent of op(X): len elements per column, `lines` columns. */
static int stored_shape(int trans, int64_t rows, int64_t cols, int64_t ld, int64_t *len,
                        int64_t *lines)
{
    if (rows <= 0 || cols <= 0)
        return -1;
    *len = trans == CUBLAS_OP_N ? rows : cols;
    *lines = trans == CUBLAS_OP_N ? cols : rows;
    return ld < *len ? -1 : 0;
}

/* Digests the direct spans one by one, waiting for each, into parts[].
 * Returns 0, or -1 if any copy failed. */
static int digest_spans_sync(CUstream stream, const struct cuda_span *spans, int64_t n,
                             detshim_digest *parts)
{
    int failed = 0;
    for (int64_t b = 0; b < n && !failed; b++)
        failed = cuda_digest_span(stream, &spans[b], &parts[b]) != 0;
    return failed ? -1 : 0;
}

/* Makes indirect spans[0..n), the entries of one pointer array in order,
 * direct: the array is read to the host, waiting for the stream. Returns
 * 0, or -1 when it cannot be read. */
static int read_pointer_array(CUstream stream, struct cuda_span *spans, int64_t n)
{
    const void **ptrs = malloc((size_t)n * sizeof *ptrs);
    int rc = ptrs && cuda_read(stream, ptrs, spans[0].p, (size_t)n * sizeof *ptrs) == 0 ? 0 : -1;
    for (int64_t b = 0; rc == 0 && b < n; b++)
        spans[b] = (struct cuda_span){ ptrs[b], spans[b].shape, 0 };
    free(ptrs);
    return rc;
}

/* Records the spans' digest as operand `name`: queued on the device when
 * it can be (the record then waits in the trace's FIFO), else taken now.
 * Indirect spans the device cannot digest are made direct first. Returns
 * 0, or -1 when it could not be taken (nothing recorded). */
static int rec_spans(struct trace_rec *r, const char *name, int role, CUstream stream,
                     struct cuda_span *spans, int64_t n, uint64_t count, int elem)
{
    struct trace_deferred later;
    int queued = cuda_digest_start(stream, spans, n, &later) == 0;
    if (!queued && spans[0].indirect) {
        if (read_pointer_array(stream, spans, n) != 0)
            return -1;
        queued = cuda_digest_start(stream, spans, n, &later) == 0;
    }
    if (queued) {
        trace_rec_operand_deferred(r, name, role, later, count, elem);
        return 0;
    }
    detshim_digest *parts = malloc((size_t)n * sizeof *parts);
    int rc = parts && digest_spans_sync(stream, spans, n, parts) == 0 ? 0 : -1;
    if (rc == 0)
        trace_rec_operand(r, name, role, cuda_digest_combine(parts, n), count, elem);
    free(parts);
    return rc;
}

int cuda_rec_bytes(struct trace_rec *r, const char *name, int role, CUstream stream,
                   const void *p, size_t n, uint64_t count, int elem)
{
    if (n == 0) {
        trace_rec_operand(r, name, role, digest_bytes(NULL, 0), count, elem);
        return 0;
    }
    struct cuda_span s = { p, digest_matrix_shape((int64_t)n, 1, (int64_t)n, 1), 0 };
    return rec_spans(r, name, role, stream, &s, 1, count, elem);
}

int cuda_rec_strided(struct trace_rec *r, const char *name, int role, CUstream stream,
                     const void *p, const struct digest_shape *shape)
{
    if (shape->ndims < 1 || shape->ndims > DIGEST_MAX_DIMS)
        return -1;
    uint64_t count = 1;
    for (int k = 0; k < shape->ndims; k++) {
        if (shape->strides[k] < 0)
            return -1;
        count *= shape->dims[k] > 0 ? (uint64_t)shape->dims[k] : 0;
    }
    if (count == 0) {
        trace_rec_operand(r, name, role, digest_bytes(NULL, 0), 0, (int)shape->elem);
        return 0;
    }
    struct cuda_span s = { p, *shape, 0 };
    return rec_spans(r, name, role, stream, &s, 1, count, (int)shape->elem);
}

/* Records the batch: one matrix's digest, or the combination of all.
 * Matrix b is at x + b*stride elements, or, `indirect`, at the pointer
 * x[b] of an array in device memory. */
static void rec_batch(struct trace_rec *r, const char *name, int role, CUstream stream,
                      int trans, int64_t rows, int64_t cols, int64_t ld, int elem,
                      int64_t batch, const void *x, int64_t stride, int indirect)
{
    int64_t len, lines;
    if (batch > 0 && stored_shape(trans, rows, cols, ld, &len, &lines) == 0) {
        /* One matrix, the usual case, needs no allocation. */
        struct cuda_span one;
        struct cuda_span *spans = batch == 1 ? &one : malloc((size_t)batch * sizeof *spans);
        for (int64_t b = 0; spans && b < batch; b++)
            spans[b] = (struct cuda_span){
                indirect ? (const void *)((const void *const *)x + b)
                         : (const void *)((const char *)x + (size_t)(b * stride) * (size_t)elem),
                digest_matrix_shape(len, lines, ld, (size_t)elem), indirect };
        int rc = spans ? rec_spans(r, name, role, stream, spans, batch,
                                   (uint64_t)rows * (uint64_t)cols * (uint64_t)batch, elem)
                       : -1;
        if (spans != &one)
            free(spans);
        if (rc == 0)
            return;
        cuda_note_no_digest(r);
    }
    trace_rec_operand(r, name, role, digest_bytes(NULL, 0), 0, elem);
}

void cuda_rec_matrix(struct trace_rec *r, const char *name, int role, CUstream stream,
                     const void *x, int trans, int64_t rows, int64_t cols, int64_t ld,
                     int elem, int64_t batch, int64_t stride)
{
    rec_batch(r, name, role, stream, trans, rows, cols, ld, elem, batch, x, stride, 0);
}

void cuda_rec_matrix_array(struct trace_rec *r, const char *name, int role, CUstream stream,
                           const void *const *array, int trans, int64_t rows, int64_t cols,
                           int64_t ld, int elem, int64_t batch)
{
    rec_batch(r, name, role, stream, trans, rows, cols, ld, elem, batch, array, 0, 1);
}

int cuda_rec_scalar(struct trace_rec *r, const char *name, CUstream stream, const void *v,
                    int on_device, int type)
{
    unsigned char bytes[16] = { 0 };
    int size = cuda_type_size(type);
    int ok = v && size > 0 && size <= 16;
    if (ok && on_device)
        ok = cuda_read(stream, bytes, v, (size_t)size) == 0;
    else if (ok)
        memcpy(bytes, v, (size_t)size);
    if (!ok) {
        cuda_note_no_digest(r);
        trace_rec_operand(r, name, TRACE_ROLE_IN, digest_bytes(NULL, 0), 0, size);
        return 0;
    }
    trace_rec_operand(r, name, TRACE_ROLE_IN, digest_bytes(bytes, (size_t)size), 1, size);
    return cuda_scalar_is_zero(bytes, type);
}

void cuda_note_mode(struct trace_rec *r, const struct cuda_call *c)
{
    trace_rec_note(r, "cuda.mode", c->pinned ? "pinned" : "passthrough");
}
