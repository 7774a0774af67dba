/* Device digests (shim/cuda/devdigest.c) equal host digests of the same
 * bytes: the same algorithm over the same logical elements, whatever the
 * leading dimension, transposition or batching, by copy-and-hash and by
 * the device kernel alike, waiting for the stream or collected
 * asynchronously. Run against the fake driver (tests/fakes/cuda/cuda.c,
 * linked in), whose device memory is host memory, which runs the
 * kernels' logic on the host, so the host digest of a buffer is the
 * reference, and which delivers asynchronous copies only when their
 * event is waited for or queried complete.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cuda/cuda.h"
#include "trace/digest.h"

unsigned long long fake_cuda_kernel_launches(void); /* the fake driver's counts */
unsigned long long fake_cuda_count(const char *name);
void fake_cuda_env_changed(void); /* after a setenv of its FAKE_CUDA_* */

static float buf[64 * 40];

static int setup(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof buf / sizeof *buf; i++)
        buf[i] = (float)i * 0.25f - 100.0f;
    return 0;
}

static void assert_same(detshim_digest a, detshim_digest b)
{
    assert_true(a.lo == b.lo && a.hi == b.hi);
}

static void test_device_digest_equals_host_digest_of_the_same_elements(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = { { 7, 5, 7 }, { 7, 5, 9 }, { 64, 40, 64 },
                                         { 1, 30, 64 }, { 33, 1, 33 }, { 0, 4, 4 } };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        detshim_digest dev;
        assert_int_equal(cuda_digest_matrix(NULL, buf, shapes[i][0], shapes[i][1], shapes[i][2],
                                            sizeof(float), &dev), 0);
        assert_same(dev, digest_matrix(buf, shapes[i][0], shapes[i][1], shapes[i][2],
                                       sizeof(float)));
    }
    detshim_digest bytes;
    assert_int_equal(cuda_digest_bytes(NULL, buf, 100, &bytes), 0);
    assert_same(bytes, digest_bytes(buf, 100));
}

static void test_kernel_digest_equals_host_digest_for_large_and_odd_layouts(void **state)
{
    (void)state;
    if (!cuda_digest_ptx[0])
        skip(); /* a build without nvcc has no kernel: copy-and-hash only */
    enum { BYTES = 3 << 20 };
    unsigned char *big = malloc(BYTES);
    assert_non_null(big);
    for (size_t i = 0; i < BYTES; i++)
        big[i] = (unsigned char)((i * 2654435761u) >> 11);
    /* { run length, runs, leading dimension, element size }: dense, padded,
     * runs that split 8-byte words, one byte elements, just over 4 KiB,
     * several MiB. */
    static const int64_t shapes[][4] = { { 1024, 64, 1024, 4 }, { 1000, 70, 1003, 4 },
                                         { 1001, 9, 1013, 1 },  { 4097, 1, 4097, 1 },
                                         { 37, 300, 41, 8 },    { 512, 1400, 520, 4 } };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        unsigned long long before = fake_cuda_kernel_launches();
        detshim_digest dev;
        assert_int_equal(cuda_digest_matrix(NULL, big, shapes[i][0], shapes[i][1], shapes[i][2],
                                            (size_t)shapes[i][3], &dev), 0);
        assert_true(fake_cuda_kernel_launches() > before); /* the kernel ran */
        assert_same(dev, digest_matrix(big, shapes[i][0], shapes[i][1], shapes[i][2],
                                       (size_t)shapes[i][3]));
    }
    free(big);
}

static void test_kernel_digest_over_several_chunks_equals_host_digest(void **state)
{
    (void)state;
    if (!cuda_digest_ptx[0])
        skip();
    /* Over 64 MiB: the block sums come in two chunks, the first scan
     * starting the lanes and the second finishing them, four launches. */
    enum { BYTES = (65 << 20) + 333 };
    unsigned char *big = malloc(BYTES);
    assert_non_null(big);
    for (size_t i = 0; i < BYTES; i++)
        big[i] = (unsigned char)((i * 2654435761u) >> 13);
    unsigned long long before = fake_cuda_kernel_launches();
    detshim_digest dev;
    assert_int_equal(cuda_digest_bytes(NULL, big, BYTES, &dev), 0);
    assert_int_equal(fake_cuda_kernel_launches() - before, 4);
    assert_same(dev, digest_bytes(big, BYTES));
    free(big);
}

static void test_a_stream_in_graph_capture_is_never_waited_for(void **state)
{
    (void)state;
    setenv("FAKE_CUDA_CAPTURING", "1", 1);
    fake_cuda_env_changed();
    unsigned long long before = fake_cuda_kernel_launches();
    detshim_digest d;
    float x;
    int big = cuda_digest_matrix(NULL, buf, 64, 40, 64, sizeof(float), &d);
    int small = cuda_read(NULL, &x, buf, sizeof x);
    unsetenv("FAKE_CUDA_CAPTURING");
    fake_cuda_env_changed();
    assert_int_equal(big, -1);
    assert_int_equal(small, -1);
    assert_true(fake_cuda_kernel_launches() == before); /* nothing joined the graph */
    assert_same(d, digest_bytes(NULL, 0));
}

static void test_padding_between_columns_never_changes_a_device_digest(void **state)
{
    (void)state;
    float padded[10 * 4];
    memcpy(padded, buf, sizeof padded);
    detshim_digest before, after;
    assert_int_equal(cuda_digest_matrix(NULL, padded, 8, 4, 10, sizeof(float), &before), 0);
    for (int j = 0; j < 4; j++)
        padded[j * 10 + 8] = padded[j * 10 + 9] = 12345.0f;
    assert_int_equal(cuda_digest_matrix(NULL, padded, 8, 4, 10, sizeof(float), &after), 0);
    assert_same(before, after);
}

/* The fake driver's synchronisations of streams and contexts so far. */
static unsigned long long stream_syncs(void)
{
    return fake_cuda_count("cuStreamSynchronize") + fake_cuda_count("cuCtxSynchronize") +
           fake_cuda_count("cuMemcpyDtoH");
}

/* The operand's digest, waiting for it if it is deferred, as the trace
 * writer does at a drain point. */
static detshim_digest operand(struct trace_rec *r, const char *name)
{
    for (int i = 0; i < r->noperands; i++)
        if (strcmp(r->operands[i].name, name) == 0) {
            struct trace_deferred *later = &r->operands[i].later;
            if (later->complete) {
                assert_int_equal(later->complete(later->arg, 1, &r->operands[i].digest), 1);
                later->complete = NULL;
            }
            return r->operands[i].digest;
        }
    fail_msg("no operand %s", name);
    return (detshim_digest){ 0, 0 };
}

static void test_transposed_operand_digests_its_stored_columns(void **state)
{
    (void)state;
    /* op(A) = A^T is 5 x 7 with A stored 7 x 5, ld 9: seven-element runs. */
    struct trace_rec r;
    trace_rec_begin(&r, "test");
    cuda_rec_matrix(&r, "A", TRACE_ROLE_IN, NULL, buf, CUBLAS_OP_T, 5, 7, 9, 4, 1, 0);
    assert_same(operand(&r, "A"), digest_matrix(buf, 7, 5, 9, sizeof(float)));
    assert_int_equal(r.operands[0].count, 35);
    /* ld shorter than a run: cuBLAS rejects the call, nothing is digested. */
    cuda_rec_matrix(&r, "bad", TRACE_ROLE_IN, NULL, buf, CUBLAS_OP_N, 8, 2, 7, 4, 1, 0);
    assert_same(operand(&r, "bad"), digest_bytes(NULL, 0));
    assert_int_equal(r.operands[1].count, 0);
}

static void test_batch_digest_combines_the_matrices_in_order(void **state)
{
    (void)state;
    struct trace_rec r;
    trace_rec_begin(&r, "test");
    /* Three 6 x 4 matrices (ld 8), 40 elements apart. */
    cuda_rec_matrix(&r, "C", TRACE_ROLE_OUT, NULL, buf, CUBLAS_OP_N, 6, 4, 8, 4, 3, 40);
    detshim_digest parts[3];
    for (int b = 0; b < 3; b++)
        parts[b] = digest_matrix(buf + 40 * b, 6, 4, 8, sizeof(float));
    assert_same(operand(&r, "C"), cuda_digest_combine(parts, 3));
    assert_int_equal(r.operands[0].count, 72);
    /* The same matrices through a pointer array digest alike, the array
     * read on the device: nothing waits for the stream. */
    unsigned long long syncs = stream_syncs();
    const void *ptrs[3] = { buf, buf + 40, buf + 80 };
    cuda_rec_matrix_array(&r, "Carray", TRACE_ROLE_OUT, NULL, ptrs, CUBLAS_OP_N, 6, 4, 8, 4, 3);
    if (cuda_digest_ptx[0])
        assert_true(stream_syncs() == syncs);
    assert_same(operand(&r, "Carray"), operand(&r, "C"));
    /* A batch of one is that matrix's own digest. */
    cuda_rec_matrix(&r, "one", TRACE_ROLE_OUT, NULL, buf, CUBLAS_OP_N, 6, 4, 8, 4, 1, 0);
    assert_same(operand(&r, "one"), parts[0]);
    /* Order matters. */
    detshim_digest swapped[3] = { parts[1], parts[0], parts[2] };
    assert_true(cuda_digest_combine(swapped, 3).lo != cuda_digest_combine(parts, 3).lo);
}

/* Marks in mark[] the offsets of s's elements from dim k on, at off. */
static void mark_elements(unsigned char *mark, const struct digest_shape *s, int k, int64_t off)
{
    if (k == s->ndims) {
        mark[off] = 1;
        return;
    }
    for (int64_t i = 0; i < s->dims[k]; i++)
        mark_elements(mark, s, k + 1, off + i * s->strides[k]);
}

static void test_strided_tensor_digests_its_logical_elements_on_the_device(void **state)
{
    (void)state;
    /* { dims, strides } over floats: a padded 4-d NCHW tensor large
     * enough for the kernel (each row padded by 3, each channel by 5, each
     * image by 7), a small one (copy-and-hash), an NHWC-stored tensor seen
     * as NCHW, and a row broadcast down a matrix (stride 0). */
    static const struct digest_shape shapes[] = {
        { 4, { 2, 3, 20, 30 }, { 3 * (20 * 33 + 5) + 7, 20 * 33 + 5, 33, 1 }, sizeof(float) },
        { 4, { 2, 3, 5, 7 }, { 150, 49, 9, 1 }, sizeof(float) },
        { 4, { 2, 3, 12, 16 }, { 3 * 12 * 16, 1, 3 * 16, 3 }, sizeof(float) },
        { 2, { 64, 40 }, { 0, 1 }, sizeof(float) },
    };
    enum { FLOATS = 3 * (20 * 33 + 5) * 2 + 7 };
    float *t = malloc(FLOATS * sizeof *t);
    unsigned char *logical = malloc(FLOATS);
    assert_non_null(t);
    assert_non_null(logical);
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        const struct digest_shape *sh = &shapes[i];
        for (int v = 0; v < FLOATS; v++)
            t[v] = (float)v * 0.5f;
        memset(logical, 0, FLOATS);
        mark_elements(logical, sh, 0, 0);
        int64_t total = 1;
        for (int k = 0; k < sh->ndims; k++)
            total *= sh->dims[k];
        /* The host digest of the same logical elements (test_digest checks
         * it against the packed tensor). */
        detshim_digest host = digest_strided(t, sh), dev;
        struct cuda_span span = { t, *sh, 0 };
        unsigned long long launches = fake_cuda_kernel_launches();
        assert_int_equal(cuda_digest_span(NULL, &span, &dev), 0);
        assert_same(dev, host);
        if (cuda_digest_ptx[0] && total * 4 >= 4096)
            assert_true(fake_cuda_kernel_launches() > launches);
        /* Recorded (queued), the same, and a count of elements. */
        struct trace_rec r;
        trace_rec_begin(&r, "test");
        assert_int_equal(cuda_rec_strided(&r, "x", TRACE_ROLE_IN, NULL, t, sh), 0);
        assert_same(operand(&r, "x"), host);
        assert_int_equal(r.operands[0].count, total);
        assert_int_equal(r.operands[0].elem_size, 4);
        /* Bytes outside the logical elements never count. */
        for (int v = 0; v < FLOATS; v++)
            if (!logical[v])
                t[v] = -12345.0f;
        assert_int_equal(cuda_digest_span(NULL, &span, &dev), 0);
        assert_same(dev, host);
    }
    free(t);
    free(logical);
}

static void test_a_traced_device_operand_is_queued_without_waiting_for_the_stream(void **state)
{
    (void)state;
    unsigned long long syncs = stream_syncs(), events = fake_cuda_count("cuEventSynchronize");
    struct trace_rec r;
    trace_rec_begin(&r, "test");
    /* Small (copy-and-hash) and large (a kernel where there is PTX). */
    cuda_rec_matrix(&r, "small", TRACE_ROLE_IN, NULL, buf, CUBLAS_OP_N, 7, 5, 9, 4, 1, 0);
    cuda_rec_matrix(&r, "large", TRACE_ROLE_IN, NULL, buf, CUBLAS_OP_N, 64, 40, 64, 4, 1, 0);
    cuda_rec_matrix(&r, "batch", TRACE_ROLE_IN, NULL, buf, CUBLAS_OP_N, 6, 4, 8, 4, 3, 40);
    assert_true(stream_syncs() == syncs);
    assert_true(fake_cuda_count("cuEventSynchronize") == events);
    for (int i = 0; i < r.noperands; i++)
        assert_non_null(r.operands[i].later.complete); /* all deferred */
    assert_same(operand(&r, "small"), digest_matrix(buf, 7, 5, 9, sizeof(float)));
    assert_same(operand(&r, "large"), digest_matrix(buf, 64, 40, 64, sizeof(float)));
    detshim_digest parts[3];
    for (int b = 0; b < 3; b++)
        parts[b] = digest_matrix(buf + 40 * b, 6, 4, 8, sizeof(float));
    assert_same(operand(&r, "batch"), cuda_digest_combine(parts, 3));
    assert_true(stream_syncs() == syncs); /* completed by events, not the stream */
}

static void test_a_queued_digest_is_complete_only_when_its_event_is(void **state)
{
    (void)state;
    setenv("FAKE_CUDA_EVENT_QUERIES", "3", 1);
    fake_cuda_env_changed();
    unsigned long long events = fake_cuda_count("cuEventSynchronize");
    struct trace_rec r;
    trace_rec_begin(&r, "test");
    cuda_rec_matrix(&r, "A", TRACE_ROLE_IN, NULL, buf, CUBLAS_OP_N, 64, 40, 64, 4, 1, 0);
    struct trace_deferred later = r.operands[0].later;
    detshim_digest d;
    assert_int_equal(later.complete(later.arg, 0, &d), 0); /* never blocks */
    assert_int_equal(later.complete(later.arg, 0, &d), 0);
    assert_int_equal(later.complete(later.arg, 0, &d), 1); /* the third query: done */
    assert_same(d, digest_matrix(buf, 64, 40, 64, sizeof(float)));
    assert_true(fake_cuda_count("cuEventSynchronize") == events);
    unsetenv("FAKE_CUDA_EVENT_QUERIES");
    fake_cuda_env_changed();
}

static void test_a_job_never_completed_does_not_make_every_later_digest_a_new_job(void **state)
{
    (void)state;
    /* One digest left pending for good (a record still in the FIFO, or a
     * job stuck after a driver error), then many digests in turn: they
     * reuse one job, not one new event and pinned buffer each. */
    struct trace_rec stuck;
    trace_rec_begin(&stuck, "stuck");
    cuda_rec_matrix(&stuck, "A", TRACE_ROLE_IN, NULL, buf, CUBLAS_OP_N, 8, 4, 8, 4, 1, 0);
    unsigned long long created = fake_cuda_count("cuEventCreate");
    for (int i = 0; i < 50; i++) {
        struct trace_rec r;
        trace_rec_begin(&r, "test");
        cuda_rec_matrix(&r, "B", TRACE_ROLE_IN, NULL, buf, CUBLAS_OP_N, 8, 4, 8, 4, 1, 0);
        struct trace_deferred later = r.operands[0].later;
        detshim_digest d;
        assert_int_equal(later.complete(later.arg, 1, &d), 1);
    }
    assert_true(fake_cuda_count("cuEventCreate") - created <= 1);
    struct trace_deferred later = stuck.operands[0].later;
    detshim_digest d;
    assert_int_equal(later.complete(later.arg, 1, &d), 1);
}

/* A thread's work for the test below: a copy-and-hash digest (the
 * staging buffer), two queued ones, the first completed, the second left
 * pending for the caller, as a record still in the trace's FIFO. */
static void *digest_then_exit(void *arg)
{
    detshim_digest d;
    struct cuda_span span = { buf, digest_matrix_shape(7, 5, 9, sizeof(float)), 0 };
    assert_int_equal(cuda_digest_span(NULL, &span, &d), 0);
    struct trace_rec done, pending;
    trace_rec_begin(&done, "done");
    trace_rec_begin(&pending, "pending");
    cuda_rec_matrix(&done, "A", TRACE_ROLE_IN, NULL, buf, CUBLAS_OP_N, 8, 4, 8, 4, 1, 0);
    cuda_digest_seal(); /* the end of a call, as cuda_commit does: the next is a new job */
    cuda_rec_matrix(&pending, "B", TRACE_ROLE_IN, NULL, buf, CUBLAS_OP_N, 7, 5, 9, 4, 1, 0);
    struct trace_deferred later = done.operands[0].later;
    assert_int_equal(later.complete(later.arg, 1, &d), 1);
    *(struct trace_deferred *)arg = pending.operands[0].later;
    return NULL;
}

static void test_a_thread_that_exits_frees_its_jobs_and_hands_over_a_pending_one(void **state)
{
    (void)state;
    struct trace_deferred later;
    unsigned long long destroyed = fake_cuda_count("cuEventDestroy_v2");
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, digest_then_exit, &later), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    /* The free job went with its thread; the pending one is still usable
     * (LeakSanitizer, under make sanitize, checks the staging buffer). */
    assert_true(fake_cuda_count("cuEventDestroy_v2") == destroyed + 1);
    assert_non_null(later.complete);
    detshim_digest d;
    assert_int_equal(later.complete(later.arg, 1, &d), 1);
    assert_same(d, digest_matrix(buf, 7, 5, 9, sizeof(float)));
    /* Completed, it is freed by its completer. */
    assert_true(fake_cuda_count("cuEventDestroy_v2") == destroyed + 2);
}

static void test_a_queued_input_digest_sees_the_bytes_before_later_work(void **state)
{
    (void)state;
    /* Digests are stream-ordered: bytes changed after the digest was
     * queued (the call's own output, say) are not the input's. */
    float x[8 * 4];
    memcpy(x, buf, sizeof x);
    detshim_digest before = digest_matrix(x, 8, 4, 8, sizeof(float));
    struct trace_rec r;
    trace_rec_begin(&r, "test");
    cuda_rec_matrix(&r, "C", TRACE_ROLE_IN, NULL, x, CUBLAS_OP_N, 8, 4, 8, 4, 1, 0);
    for (size_t i = 0; i < sizeof x / sizeof *x; i++)
        x[i] = -x[i];
    assert_same(operand(&r, "C"), before);
}

static void test_the_operands_of_one_call_complete_through_one_event(void **state)
{
    (void)state;
    /* A GEMM's A and B before the kernel and C after it, on one stream:
     * one event, recorded when the call is sealed, after all three. */
    float c[8 * 8];
    memcpy(c, buf, sizeof c);
    unsigned long long records = fake_cuda_count("cuEventRecord");
    struct trace_rec r;
    trace_rec_begin(&r, "gemm");
    cuda_rec_matrix(&r, "A", TRACE_ROLE_IN, NULL, buf, CUBLAS_OP_N, 8, 8, 8, 4, 1, 0);
    cuda_rec_matrix(&r, "B", TRACE_ROLE_IN, NULL, buf + 64, CUBLAS_OP_N, 8, 8, 8, 4, 1, 0);
    detshim_digest before = digest_matrix(c, 8, 8, 8, sizeof(float));
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        c[i] = 2 * c[i]; /* the "kernel" */
    cuda_rec_matrix(&r, "C", TRACE_ROLE_OUT, NULL, c, CUBLAS_OP_N, 8, 8, 8, 4, 1, 0);
    assert_true(fake_cuda_count("cuEventRecord") == records); /* none yet */
    cuda_digest_seal();
    assert_true(fake_cuda_count("cuEventRecord") == records + 1);
    assert_same(operand(&r, "A"), digest_matrix(buf, 8, 8, 8, sizeof(float)));
    assert_same(operand(&r, "B"), digest_matrix(buf + 64, 8, 8, 8, sizeof(float)));
    detshim_digest after = operand(&r, "C");
    assert_same(after, digest_matrix(c, 8, 8, 8, sizeof(float)));
    assert_false(after.lo == before.lo && after.hi == before.hi);
}

static void test_an_event_the_driver_refuses_waits_for_the_stream_instead(void **state)
{
    (void)state;
    setenv("FAKE_CUDA_FAIL", "cuEventRecord", 1);
    fake_cuda_env_changed();
    unsigned long long syncs = stream_syncs();
    struct trace_rec r;
    trace_rec_begin(&r, "test");
    cuda_rec_matrix(&r, "A", TRACE_ROLE_IN, NULL, buf, CUBLAS_OP_N, 8, 4, 8, 4, 1, 0);
    cuda_digest_seal();
    unsetenv("FAKE_CUDA_FAIL");
    fake_cuda_env_changed();
    assert_true(stream_syncs() == syncs + 1);
    assert_same(operand(&r, "A"), digest_matrix(buf, 8, 4, 8, sizeof(float)));
}

static void test_a_discarded_digest_never_lends_its_memory_to_a_later_one(void **state)
{
    (void)state;
    /* A forked child drops its parent's pending records: their copies
     * may still land, so their job's pinned memory is never reused. */
    struct trace_rec dropped;
    trace_rec_begin(&dropped, "dropped");
    cuda_rec_matrix(&dropped, "A", TRACE_ROLE_IN, NULL, buf, CUBLAS_OP_N, 8, 4, 8, 4, 1, 0);
    cuda_digest_seal();
    struct trace_deferred gone = dropped.operands[0].later;
    gone.discard(gone.arg);
    /* Each digest frees its job, and the next scans the pool's ring from
     * after it: over many, every free job is taken in turn. A ticket is
     * its job's: the dropped job's first ticket never comes back. */
    for (int i = 0; i < 1000; i++) {
        struct trace_rec r;
        trace_rec_begin(&r, "test");
        cuda_rec_matrix(&r, "B", TRACE_ROLE_IN, NULL, buf, CUBLAS_OP_N, 8, 4, 8, 4, 1, 0);
        cuda_digest_seal();
        assert_ptr_not_equal(r.operands[0].later.arg, gone.arg);
        assert_same(operand(&r, "B"), digest_matrix(buf, 8, 4, 8, sizeof(float)));
    }
}

static void test_a_pointer_array_batch_is_read_on_the_device_without_waiting(void **state)
{
    (void)state;
    if (!cuda_digest_ptx[0])
        skip(); /* without a kernel the array is read on the host */
    /* Large matrices (the digest kernels) and small ones (dk_gather),
     * reversed through the array, against their host digests in batch
     * order. */
    static const int64_t shapes[][3] = { { 64, 20, 64 }, { 6, 4, 8 } };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        int64_t len = shapes[i][0], lines = shapes[i][1], ld = shapes[i][2];
        const void *ptrs[2] = { buf + ld * lines, buf };
        detshim_digest parts[2] = { digest_matrix(ptrs[0], len, lines, ld, sizeof(float)),
                                    digest_matrix(ptrs[1], len, lines, ld, sizeof(float)) };
        unsigned long long syncs = stream_syncs(), launches = fake_cuda_kernel_launches();
        struct trace_rec r;
        trace_rec_begin(&r, "test");
        cuda_rec_matrix_array(&r, "A", TRACE_ROLE_IN, NULL, ptrs, CUBLAS_OP_N, len, lines, ld, 4,
                              2);
        assert_non_null(r.operands[0].later.complete);
        assert_true(fake_cuda_kernel_launches() > launches);
        assert_same(operand(&r, "A"), cuda_digest_combine(parts, 2));
        assert_true(stream_syncs() == syncs);
    }
}

static void test_zero_scalars_are_zero_whatever_their_sign(void **state)
{
    (void)state;
    float f = -0.0f, c[2] = { 0.0f, -0.0f }, c1[2] = { 0.0f, 1.0f };
    double d = -0.0, one = 1.0;
    uint16_t h = 0x8000, h1 = 0x3c00;
    assert_true(cuda_scalar_is_zero(&f, CUDA_R_32F));
    assert_true(cuda_scalar_is_zero(&d, CUDA_R_64F));
    assert_true(cuda_scalar_is_zero(&h, CUDA_R_16F));
    assert_true(cuda_scalar_is_zero(c, CUDA_C_32F));
    assert_false(cuda_scalar_is_zero(c1, CUDA_C_32F));
    assert_false(cuda_scalar_is_zero(&one, CUDA_R_64F));
    assert_false(cuda_scalar_is_zero(&h1, CUDA_R_16F));
    assert_false(cuda_scalar_is_zero(&f, 99)); /* unknown type: never zero */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_digest_equals_host_digest_of_the_same_elements),
        cmocka_unit_test(test_kernel_digest_equals_host_digest_for_large_and_odd_layouts),
        cmocka_unit_test(test_kernel_digest_over_several_chunks_equals_host_digest),
        cmocka_unit_test(test_a_stream_in_graph_capture_is_never_waited_for),
        cmocka_unit_test(test_padding_between_columns_never_changes_a_device_digest),
        cmocka_unit_test(test_transposed_operand_digests_its_stored_columns),
        cmocka_unit_test(test_batch_digest_combines_the_matrices_in_order),
        cmocka_unit_test(test_zero_scalars_are_zero_whatever_their_sign),
        cmocka_unit_test(test_strided_tensor_digests_its_logical_elements_on_the_device),
        cmocka_unit_test(test_a_pointer_array_batch_is_read_on_the_device_without_waiting),
        cmocka_unit_test(test_a_traced_device_operand_is_queued_without_waiting_for_the_stream),
        cmocka_unit_test(test_a_queued_digest_is_complete_only_when_its_event_is),
        cmocka_unit_test(test_a_job_never_completed_does_not_make_every_later_digest_a_new_job),
        cmocka_unit_test(test_a_queued_input_digest_sees_the_bytes_before_later_work),
        cmocka_unit_test(test_a_thread_that_exits_frees_its_jobs_and_hands_over_a_pending_one),
        cmocka_unit_test(test_the_operands_of_one_call_complete_through_one_event),
        cmocka_unit_test(test_an_event_the_driver_refuses_waits_for_the_stream_instead),
        cmocka_unit_test(test_a_discarded_digest_never_lends_its_memory_to_a_later_one),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
