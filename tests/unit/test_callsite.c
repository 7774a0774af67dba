/* Call sites (shim/trace/callsite.c) as a loop of calls meets them: the
 * thread's last walk is taken again for the same stack, and never for
 * another; a site walked by the caller (trace_site_walk, as the BLAS
 * wrappers do) gives the frames the commit's own walk gives. Records are committed from comparison callbacks of libc's
 * lfind and tfind, whose frames are not the test's (linked in, the test's
 * own frames count as the shim's and are skipped): two places as deep as
 * each other, with different innermost frames.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <search.h>
#include <string.h>
#include <cmocka.h>

#include "detshim.h"
#include "trace/trace.h"
#include "unit_trace.h"

static char dir[] = "/tmp/detshim-test-callsite-XXXXXX";

static void record(void)
{
    struct trace_rec r;
    trace_rec_begin(&r, "site");
    trace_rec_commit(&r);
}

static int record_and_compare(const void *a, const void *b)
{
    record();
    return memcmp(a, b, 1);
}

/* The same record, its call site walked here (as a BLAS wrapper walks). */
static int record_at_and_compare(const void *a, const void *b)
{
    struct trace_site site;
    trace_site_walk(&site);
    struct trace_rec r;
    trace_rec_begin(&r, "site");
    trace_rec_commit_at(&r, &site);
    return memcmp(a, b, 1);
}

/* One record from inside lfind (one element: one comparison). */
static void from_lfind(void)
{
    char key = 1, v[1] = { 1 };
    size_t n = 1;
    assert_non_null(lfind(&key, v, &n, 1, record_and_compare));
}

/* The same, the call site walked by the callback itself. */
static void from_lfind_walked_there(void)
{
    char key = 1, v[1] = { 1 };
    size_t n = 1;
    assert_non_null(lfind(&key, v, &n, 1, record_at_and_compare));
}

/* One record from inside tfind (a tree of one node: one comparison). */
static void from_tfind(void)
{
    static char node = 1;
    static void *root;
    char key = 1;
    if (!root) /* the first node is placed without a comparison */
        assert_non_null(tsearch(&node, &root, record_and_compare));
    assert_non_null(tfind(&key, &root, record_and_compare));
}

static int same_frame(const detshim_frame *a, const detshim_frame *b)
{
    return a->module == b->module && a->offset == b->offset;
}

static void test_calls_from_alternating_places_keep_their_own_frames(void **state)
{
    (void)state;
    /* One frame: the first walk reaches it, past the shim's and the test's own. */
    assert_int_equal(unit_trace_start(dir, 1), 0);
    void (*order[])(void) = { from_lfind, from_lfind, from_tfind, from_tfind, from_lfind,
                              from_tfind, from_lfind_walked_there, from_lfind_walked_there };
    enum { N = sizeof order / sizeof order[0] };
    for (int i = 0; i < N; i++)
        order[i]();
    trace_process_flush_all();

    detshim_run *run;
    char err[512] = "";
    assert_int_equal(detshim_run_load(dir, &run, err, sizeof err), 0);
    detshim_thread *t = &run->processes[0].threads[0];
    assert_int_equal(t->nrecords, N);
    const detshim_record *lf = &t->records[0], *tf = &t->records[2];
    assert_true(lf->nframes >= 1 && tf->nframes >= 1);
    assert_false(same_frame(&lf->frames[0], &tf->frames[0]));
    for (int i = 0; i < N; i++) {
        const detshim_record *want = order[i] == from_tfind ? tf : lf;
        assert_int_equal(t->records[i].nframes, want->nframes);
        for (int f = 0; f < want->nframes; f++)
            assert_true(same_frame(&t->records[i].frames[f], &want->frames[f]));
    }
    const char *module, *symbol;
    assert_int_equal(detshim_site_lookup(&run->processes[0], &lf->frames[0], &module, &symbol), 0);
    assert_string_equal(module, "libc.so.6");
    detshim_run_free(run);
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calls_from_alternating_places_keep_their_own_frames),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
