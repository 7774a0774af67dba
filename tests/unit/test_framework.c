/* Framework records (shim/framework): what the Python start-up hook hands
 * over ctypes comes back from the reader as step and op records, with
 * tensors digested over their logical elements; a step too big for one
 * record continues in parts, an op record refuses what does not fit;
 * many tensors in one call give what one call each gives, and a whole
 * step in one call what its calls one by one give; a step of tensors in
 * device memory (on the fake driver, whose device memory is host memory)
 * gives the record of the same step on the host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "detshim.h"
#include "trace/digest.h"
#include "trace/trace.h"
#include "same_record.h"

int detshim_framework_begin(const char *kind);
void detshim_framework_int(const char *name, int64_t v);
void detshim_framework_str(const char *name, const char *v);
int detshim_framework_tensor(const char *name, int role, const void *data, int64_t elem_size,
                             int ndims, const int64_t *shape, const int64_t *strides);
int detshim_framework_tensors(int n, const char *const *names, const int *roles,
                              const void *const *data, const int64_t *elem_sizes, const int *ndims,
                              const int64_t *shapes, const int64_t *strides);
int detshim_framework_end(void);
int detshim_framework_step(const char *framework, const char *optimizer, int64_t step, int n,
                           const char *const *names, const int *roles, const void *const *data,
                           const int64_t *elem_sizes, const int *ndims, const int64_t *shapes,
                           const int64_t *strides);
int detshim_framework_step_cuda(const char *framework, const char *optimizer, int64_t step, int n,
                                const char *const *names, const int *roles,
                                const void *const *data, const int64_t *elem_sizes,
                                const int *ndims, const int64_t *shapes, const int64_t *strides,
                                const int *on_device, uintptr_t stream);

static char dir[] = "/tmp/detshim-test-framework-XXXXXX";
static detshim_run *run;
static float m[3][4]; /* a 3x4 matrix; its transpose is a strided view */
static int refused_17th, refused_kind, batch_taken, whole_taken, device_taken, parts_taken;
static int bad_taken[2];
/* A tensor long enough for the canonical pool to share its digest. */
enum { BIG = (3 << 20) + 100 };
static unsigned char *big;

/* The exported functions start the shim as a preloaded one would, which
 * reads its settings from the environment the process started with: so
 * the test runs itself again with DETSHIM_TRACE and DETSHIM_POLICY set. */
static void start_traced(char **argv)
{
    if (getenv("DETSHIM_TRACE")) {
        snprintf(dir, sizeof dir, "%s", getenv("DETSHIM_TRACE"));
        return;
    }
    char exe[4096], policy[4200];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || !mkdtemp(dir))
        exit(1);
    exe[n] = 0;
    *strrchr(exe, '/') = 0; /* build/tests */
    snprintf(policy, sizeof policy, "%s/../../policies/default.policy", exe);
    setenv("DETSHIM_POLICY", policy, 1);
    setenv("DETSHIM_TRACE", dir, 1);
    unsetenv("DETSHIM_LINEAGE");
    unsetenv("RANK");
    execv("/proc/self/exe", argv);
    exit(1);
}

static int setup(void **state)
{
    (void)state;
    char err[512];
    for (int i = 0; i < 12; i++)
        m[i / 4][i % 4] = (float)i;
    int64_t one[1] = { 12 }, unit[1] = { 1 }, tshape[2] = { 4, 3 }, tstrides[2] = { 1, 4 };
    /* A step of 20 tensors: the transposed view first, then 19 packed. */
    detshim_framework_begin("step");
    detshim_framework_str("framework", "torch");
    detshim_framework_int("step", 7);
    detshim_framework_tensor("layer1.weight.T", TRACE_ROLE_OUT, m, 4, 2, tshape, tstrides);
    for (int i = 1; i < 20; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d", i);
        detshim_framework_tensor(name, TRACE_ROLE_OUT, m, 4, 1, one, unit);
    }
    detshim_framework_end();
    /* An op: 16 operands fit, the 17th does not. */
    detshim_framework_begin("op");
    detshim_framework_str("op", "aten.sum.default");
    for (int i = 0; i < 17; i++)
        refused_17th = detshim_framework_tensor("in", TRACE_ROLE_IN, m, 4, 0, NULL, NULL);
    detshim_framework_end();
    /* The same step as one call of 20 tensors (8 shape slots each); the
     * op's count of what it left out, given after its tensors. */
    const char *names[20];
    const void *data[20];
    int roles[20], ndims[20];
    int64_t elems[20], shapes[160] = { 0 }, strides[160] = { 0 };
    static char labels[20][32];
    for (int i = 0; i < 20; i++) {
        snprintf(labels[i], sizeof labels[i], i ? "t%d" : "layer1.weight.T", i);
        names[i] = labels[i];
        data[i] = m;
        roles[i] = TRACE_ROLE_OUT;
        elems[i] = 4;
        ndims[i] = i ? 1 : 2;
        shapes[8 * i] = i ? 12 : 4;
        strides[8 * i] = 1;
    }
    shapes[1] = 3;
    strides[1] = 4;
    detshim_framework_begin("step");
    detshim_framework_str("framework", "torch");
    detshim_framework_int("step", 7);
    batch_taken = detshim_framework_tensors(20, names, roles, data, elems, ndims, shapes, strides);
    detshim_framework_end();
    detshim_framework_begin("op");
    detshim_framework_str("op", "aten.cat.default");
    detshim_framework_tensors(1, names + 1, roles, data, elems, ndims + 1, shapes + 8, strides + 8);
    detshim_framework_int("dropped_out", 3);
    detshim_framework_end();
    refused_kind = detshim_framework_begin("layer");
    detshim_framework_end();
    /* A step of a long tensor and the matrix, made call by call and then
     * in one detshim_framework_step call. */
    big = malloc(BIG);
    if (!big)
        return -1;
    for (size_t i = 0; i < BIG; i++)
        big[i] = (unsigned char)(i * 2654435761u >> 13);
    const char *two_names[2] = { "big", "m" };
    const void *two_data[2] = { big, m };
    int two_roles[2] = { TRACE_ROLE_OUT, TRACE_ROLE_OUT }, two_ndims[2] = { 1, 1 };
    int64_t two_elems[2] = { 1, 4 }, two_shapes[16] = { BIG }, two_strides[16] = { 1 };
    two_shapes[8] = 12;
    two_strides[8] = 1;
    detshim_framework_begin("step");
    detshim_framework_str("framework", "torch");
    detshim_framework_str("optimizer", "SGD");
    detshim_framework_int("step", 8);
    detshim_framework_tensors(2, two_names, two_roles, two_data, two_elems, two_ndims, two_shapes,
                              two_strides);
    detshim_framework_end();
    whole_taken = detshim_framework_step("torch", "SGD", 8, 2, two_names, two_roles, two_data,
                                         two_elems, two_ndims, two_shapes, two_strides);
    /* The same step with both tensors on the device (record 8), and the
     * 20 tensors as one step on the host (9, 10) and, every other one on
     * the device, through the device call (11, 12). */
    int both[2] = { 1, 1 }, every_other[20];
    device_taken = detshim_framework_step_cuda("torch", "SGD", 8, 2, two_names, two_roles,
                                               two_data, two_elems, two_ndims, two_shapes,
                                               two_strides, both, 0);
    for (int i = 0; i < 20; i++)
        every_other[i] = i % 2;
    detshim_framework_step("torch", "Adam", 9, 20, names, roles, data, elems, ndims, shapes,
                           strides);
    parts_taken = detshim_framework_step_cuda("torch", "Adam", 9, 20, names, roles, data, elems,
                                              ndims, shapes, strides, every_other, 0);
    /* Bad arguments record nothing. */
    bad_taken[0] = detshim_framework_step_cuda("torch", "Adam", 9, -1, names, roles, data, elems,
                                               ndims, shapes, strides, every_other, 0);
    bad_taken[1] = detshim_framework_step_cuda("torch", "Adam", 9, 20, names, roles, data, elems,
                                               ndims, shapes, strides, NULL, 0);
    trace_process_flush_all();
    char path[600];
    snprintf(path, sizeof path, "%s/main.dtrace", dir);
    return detshim_run_load(path, &run, err, sizeof err) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    detshim_run_free(run);
    free(big);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const detshim_record *record(int i)
{
    assert_int_equal(run->nprocesses, 1);
    assert_true(run->processes[0].nthreads >= 1);
    const detshim_thread *t = &run->processes[0].threads[0];
    assert_true((size_t)i < t->nrecords);
    return &t->records[i];
}

static void test_a_step_is_recorded_with_its_params_and_tensors_by_name(void **state)
{
    (void)state;
    const detshim_record *r = record(0);
    assert_string_equal(r->api, "framework.step");
    assert_int_equal(r->nparams, 2);
    assert_string_equal(r->params[0].v.s, "torch");
    assert_int_equal(r->params[1].v.i, 7);
    assert_int_equal(r->noperands, 16);
    assert_string_equal(r->operands[0].name, "layer1.weight.T");
    assert_int_equal(r->operands[0].role, TRACE_ROLE_OUT);
    assert_int_equal(r->operands[0].count, 12);
}

static void test_a_strided_tensor_digests_as_its_packed_elements(void **state)
{
    (void)state;
    float packed[12];
    for (int i = 0; i < 12; i++)
        packed[i] = m[i % 3][i / 3]; /* the transpose, row by row */
    detshim_digest want = digest_bytes(packed, sizeof packed);
    const detshim_operand *o = &record(0)->operands[0];
    assert_true(o->digest.lo == want.lo && o->digest.hi == want.hi);
    detshim_digest plain = digest_bytes(m, sizeof m);
    o = &record(0)->operands[1];
    assert_true(o->digest.lo == plain.lo && o->digest.hi == plain.hi);
}

static void test_a_step_past_one_record_continues_in_parts(void **state)
{
    (void)state;
    const detshim_record *r = record(1);
    assert_string_equal(r->api, "framework.step");
    assert_int_equal(r->nparams, 3);
    assert_int_equal(r->params[1].v.i, 7);
    assert_string_equal(r->params[2].name, "part");
    assert_int_equal(r->params[2].v.i, 1);
    assert_int_equal(r->noperands, 4);
    assert_string_equal(r->operands[3].name, "t19");
}

static void test_an_op_takes_sixteen_operands_and_refuses_more(void **state)
{
    (void)state;
    const detshim_record *r = record(2);
    assert_string_equal(r->api, "framework.op");
    assert_int_equal(r->noperands, 16);
    assert_int_equal(r->operands[0].count, 1); /* a scalar: one element */
    assert_int_equal(refused_17th, -1);
}

static void test_an_unknown_kind_records_nothing(void **state)
{
    (void)state;
    assert_int_equal(refused_kind, -1);
    assert_int_equal(run->processes[0].threads[0].nrecords, 13);
}

static void test_many_tensors_in_one_call_give_the_records_of_one_call_each(void **state)
{
    (void)state;
    assert_int_equal(batch_taken, 20);
    for (int part = 0; part < 2; part++) {
        const detshim_record *a = record(part), *b = record(3 + part);
        assert_int_equal(a->nparams, b->nparams);
        assert_int_equal(a->noperands, b->noperands);
        for (int i = 0; i < a->noperands; i++) {
            assert_string_equal(a->operands[i].name, b->operands[i].name);
            assert_int_equal(a->operands[i].count, b->operands[i].count);
            assert_true(a->operands[i].digest.lo == b->operands[i].digest.lo &&
                        a->operands[i].digest.hi == b->operands[i].digest.hi);
        }
    }
}

/* detshim_framework_step makes the record the calls one by one make; a
 * long tensor (digested in parts on the canonical pool) digests as
 * digest_bytes does. */
static void test_a_whole_step_in_one_call_is_the_step_of_many_calls(void **state)
{
    (void)state;
    assert_int_equal(whole_taken, 2);
    const detshim_record *a = record(6), *b = record(7);
    assert_string_equal(b->api, "framework.step");
    assert_int_equal(b->nparams, 3);
    assert_int_equal(a->nparams, b->nparams);
    for (int i = 0; i < 3; i++)
        assert_string_equal(a->params[i].name, b->params[i].name);
    assert_string_equal(b->params[1].v.s, "SGD");
    assert_int_equal(b->params[2].v.i, 8);
    assert_int_equal(b->noperands, 2);
    for (int i = 0; i < 2; i++) {
        assert_string_equal(a->operands[i].name, b->operands[i].name);
        assert_true(a->operands[i].digest.lo == b->operands[i].digest.lo &&
                    a->operands[i].digest.hi == b->operands[i].digest.hi);
    }
    detshim_digest want = digest_bytes(big, BIG);
    assert_int_equal(b->operands[0].count, BIG);
    assert_true(b->operands[0].digest.lo == want.lo && b->operands[0].digest.hi == want.hi);
}

/* A step of device tensors, digested by the device digest kernels, is
 * the record of the same values on the host, parts included. */
static void test_a_step_on_the_device_is_the_record_of_the_same_step_on_the_host(void **state)
{
    (void)state;
    assert_int_equal(device_taken, 2);
    assert_same_record(record(7), record(8), ANY_SITE);
    assert_int_equal(parts_taken, 20);
    assert_same_record(record(9), record(11), ANY_SITE);
    assert_same_record(record(10), record(12), ANY_SITE);
    assert_int_equal(record(12)->params[3].v.i, 1); /* part 1 */
    assert_int_equal(bad_taken[0], -1); /* n < 0 */
    assert_int_equal(bad_taken[1], -1); /* no on_device array */
}

static void test_an_op_takes_a_param_after_its_tensors(void **state)
{
    (void)state;
    const detshim_record *r = record(5);
    assert_int_equal(r->noperands, 1);
    assert_int_equal(r->nparams, 2);
    assert_string_equal(r->params[1].name, "dropped_out");
    assert_int_equal(r->params[1].v.i, 3);
}

int main(int argc, char **argv)
{
    (void)argc;
    start_traced(argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_step_is_recorded_with_its_params_and_tensors_by_name),
        cmocka_unit_test(test_a_strided_tensor_digests_as_its_packed_elements),
        cmocka_unit_test(test_a_step_past_one_record_continues_in_parts),
        cmocka_unit_test(test_an_op_takes_sixteen_operands_and_refuses_more),
        cmocka_unit_test(test_an_unknown_kind_records_nothing),
        cmocka_unit_test(test_many_tensors_in_one_call_give_the_records_of_one_call_each),
        cmocka_unit_test(test_an_op_takes_a_param_after_its_tensors),
        cmocka_unit_test(test_a_whole_step_in_one_call_is_the_step_of_many_calls),
        cmocka_unit_test(test_a_step_on_the_device_is_the_record_of_the_same_step_on_the_host),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
