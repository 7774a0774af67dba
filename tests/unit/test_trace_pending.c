/* Records that wait for deferred digests (trace.h, the FIFO of pending
 * records in shim/trace/writer.c): each is written as the record an
 * immediate commit of its final values writes, in commit order; a digest
 * that fails leaves count 0, the digest of no bytes and its note, once per
 * key and only while there is room for notes. Each record here has a twin
 * with the values its pending one must end with: the first queued behind
 * it, the others committed at once, with nothing pending. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "detshim.h"
#include "detshim/trace_format.h"
#include "trace/digest.h"
#include "trace/trace.h"
#include "same_record.h"
#include "unit_trace.h"

static char dir[] = "/tmp/detshim-test-pending-XXXXXX";
static detshim_run *run;
static const detshim_thread *calls;

/* A deferred digest: not ready for `not_ready` non-waiting tries, then
 * `rc` (1 with d, or -1). */
struct later_digest {
    int not_ready, rc;
    detshim_digest d;
};

static int later_complete(void *arg, int wait, detshim_digest *d)
{
    struct later_digest *l = arg;
    if (!wait && l->not_ready > 0) {
        l->not_ready--;
        return 0;
    }
    if (l->rc > 0)
        *d = l->d;
    return l->rc;
}

static void later_discard(void *arg)
{
    (void)arg;
}

static struct trace_deferred deferred(struct later_digest *l)
{
    return (struct trace_deferred){ later_complete, later_discard, l, "test.digest",
                                    "not digested (test)" };
}

static const detshim_digest D = { 0x0123456789abcdefull, 0xfedcba9876543210ull };

/* The records, in commit order: each pending one, then its twin. */
enum { LATE, LATE_TWIN, FAILED, FAILED_TWIN, NOTED, NOTED_TWIN, TWO, TWO_TWIN, FULL, FULL_TWIN,
       NRECORDS };

/* One operand: final (later NULL: digest D), or deferred. */
struct op {
    const char *name;
    int role;
    struct later_digest *later;
    uint64_t count;
};

/* A pending record with nnotes notes of its own (`noted`: the first of
 * them test.digest=already), and what its twin has: the same notes, and,
 * when `fail_note`, the note its failed digests add. */
struct pair {
    const char *api;
    struct op ops[2];
    int nnotes, noted, fail_note;
};

static const char *const keys[TRACE_MAX_NOTES] = { "k", "n1", "n2", "n3", "n4", "n5", "n6", "n7",
                                                    "n8", "n9", "n10", "n11", "n12", "n13",
                                                    "n14", "n15" };

/* Commits pair i's pending record, or its twin with the final values. */
static void commit(const struct pair *c, int i, int twin)
{
    struct trace_rec r;
    trace_rec_begin(&r, c->api);
    trace_rec_int(&r, "id", 2 * i);
    trace_rec_str(&r, "s", "a string parameter");
    for (int k = 0; k < 2 && c->ops[k].name; k++) {
        const struct op *o = &c->ops[k];
        if (o->later && !twin)
            trace_rec_operand_deferred(&r, o->name, o->role, deferred(o->later), o->count, 4);
        else if (o->later && o->later->rc < 0)
            trace_rec_operand(&r, o->name, o->role, digest_bytes(NULL, 0), 0, 4);
        else
            trace_rec_operand(&r, o->name, o->role, D, o->count, 4);
    }
    for (int k = 0; k < c->nnotes; k++)
        trace_rec_note(&r, k == 0 && c->noted ? "test.digest" : keys[k],
                       k == 0 && c->noted ? "already" : "v");
    if (twin && c->fail_note)
        trace_rec_note(&r, "test.digest", "not digested (test)");
    trace_rec_commit(&r);
}

static void commit_records(void)
{
    static struct later_digest late = { 2, 1, { 0, 0 } }, failed = { 1, -1, { 0, 0 } },
                               noted = { 0, -1, { 0, 0 } }, two_a = { 0, -1, { 0, 0 } },
                               two_b = { 0, -1, { 0, 0 } }, full = { 0, -1, { 0, 0 } };
    late.d = D;
    const struct pair pairs[NRECORDS / 2] = {
        /* Completes after two tries, while its twin is queued behind it. */
        [LATE / 2] = { "late", { { "A", TRACE_ROLE_IN, &late, 64 } }, 1, 0, 0 },
        /* Fails: count 0, no bytes, its note after the others. */
        [FAILED / 2] = { "failed", { { "x", TRACE_ROLE_IN, NULL, 3 },
                                     { "C", TRACE_ROLE_OUT, &failed, 64 } }, 1, 0, 1 },
        /* A note of the key is there already: none added. */
        [NOTED / 2] = { "noted", { { "C", TRACE_ROLE_OUT, &noted, 64 } }, 2, 1, 0 },
        /* Two fail: one note. */
        [TWO / 2] = { "two", { { "A", TRACE_ROLE_IN, &two_a, 64 },
                               { "B", TRACE_ROLE_IN, &two_b, 64 } }, 0, 0, 1 },
        /* No room for another note: none added. */
        [FULL / 2] = { "full", { { "A", TRACE_ROLE_IN, &full, 64 } }, TRACE_MAX_NOTES, 0, 0 },
    };
    for (int i = 0; i < NRECORDS / 2; i++) {
        commit(&pairs[i], i, 0);
        if (i != LATE / 2)
            trace_drain_pending(); /* the twin is committed at once */
        commit(&pairs[i], i, 1);
    }
}

/* Writes the trace with the real writer, once, and reads it back. */
static int setup(void **state)
{
    (void)state;
    if (unit_trace_start(dir, 0) != 0) /* no call sites: twins are committed from different lines */
        return -1;
    commit_records();
    trace_process_flush_all();
    char path[600], err[512];
    snprintf(path, sizeof path, "%s/main.dtrace", dir);
    if (detshim_run_load(path, &run, err, sizeof err) != 0 || run->nprocesses != 1)
        return -1;
    for (int t = 0; t < run->processes[0].nthreads; t++)
        if (run->processes[0].threads[t].index == 0)
            calls = &run->processes[0].threads[t];
    return calls ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    detshim_run_free(run);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_pending_records_are_written_in_commit_order(void **state)
{
    (void)state;
    assert_int_equal(calls->nrecords, NRECORDS);
    assert_true(calls->end_seen && calls->end_matches);
    for (size_t i = 0; i < calls->nrecords; i++) {
        assert_true(calls->records[i].seq == i);
        assert_int_equal(calls->records[i].params[0].v.i, (int64_t)(i & ~(size_t)1));
    }
}

static void test_a_digest_that_completes_late_is_written_as_if_taken_at_once(void **state)
{
    (void)state;
    assert_same_record(&calls->records[LATE], &calls->records[LATE_TWIN], SAME_SITE);
    assert_true(calls->records[LATE].operands[0].digest.lo == D.lo);
}

static void test_a_failed_digest_is_written_as_not_digested_with_its_note(void **state)
{
    (void)state;
    assert_same_record(&calls->records[FAILED], &calls->records[FAILED_TWIN], SAME_SITE);
    assert_int_equal(calls->records[FAILED].nnotes, 2);
}

static void test_a_failed_digest_adds_no_note_whose_key_is_there(void **state)
{
    (void)state;
    assert_same_record(&calls->records[NOTED], &calls->records[NOTED_TWIN], SAME_SITE);
    assert_int_equal(calls->records[NOTED].nnotes, 2);
    assert_string_equal(calls->records[NOTED].notes[0].value, "already");
    assert_same_record(&calls->records[TWO], &calls->records[TWO_TWIN], SAME_SITE);
    assert_int_equal(calls->records[TWO].nnotes, 1);
}

static void test_a_failed_digest_adds_no_note_past_the_limit(void **state)
{
    (void)state;
    assert_same_record(&calls->records[FULL], &calls->records[FULL_TWIN], SAME_SITE);
    assert_int_equal(calls->records[FULL].nnotes, TRACE_MAX_NOTES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pending_records_are_written_in_commit_order),
        cmocka_unit_test(test_a_digest_that_completes_late_is_written_as_if_taken_at_once),
        cmocka_unit_test(test_a_failed_digest_is_written_as_not_digested_with_its_note),
        cmocka_unit_test(test_a_failed_digest_adds_no_note_whose_key_is_there),
        cmocka_unit_test(test_a_failed_digest_adds_no_note_past_the_limit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
