/* Unit tests of detdiff's comparison logic (shim/detdiff/diff.c), on runs
 * built in memory: no files, no reader. Each run is made of small records
 * described by a `spec` (api, a shape, an input tag, an output tag, a
 * note), so a test states in one line what differs between two runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "detshim.h"
#include "diff.h"
#include "detshim/trace_format.h"

/* ---- building runs in memory --------------------------------------- */

static unsigned char arena[1 << 20];
static size_t arena_used;

static void *take(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    assert_true(arena_used + n <= sizeof arena);
    void *p = arena + arena_used;
    arena_used += n;
    memset(p, 0, n);
    return p;
}

static int reset_arena(void **state)
{
    (void)state;
    arena_used = 0;
    return 0;
}

struct spec {
    const char *api;
    int64_t m;
    uint64_t in, out;
    const char *note; /* value of "blas.mode" */
    uint64_t site;    /* offset of the innermost frame */
};

#define CALL(in_, out_) { "dgemm_", 4, (in_), (out_), "passthrough", 0x100 }

static detshim_record make_record(uint64_t seq, const struct spec *s)
{
    detshim_record r;
    memset(&r, 0, sizeof r);
    r.seq = seq;
    r.api = s->api;
    r.nparams = 1;
    r.params = take(sizeof *r.params);
    r.params[0].name = "m";
    r.params[0].type = TRACE_PARAM_INT;
    r.params[0].v.i = s->m;
    r.noperands = 2;
    r.operands = take(2 * sizeof *r.operands);
    r.operands[0] = (detshim_operand){ "a", TRACE_ROLE_IN, 8, 16, { s->in, 0 } };
    r.operands[1] = (detshim_operand){ "c", TRACE_ROLE_OUT, 8, 16, { s->out, 0 } };
    r.nframes = 1;
    r.frames = take(sizeof *r.frames);
    r.frames[0] = (detshim_frame){ 7, s->site ? s->site : 0x100 };
    r.nnotes = 1;
    r.notes = take(sizeof *r.notes);
    r.notes[0] = (detshim_note){ "blas.mode", s->note ? s->note : "passthrough" };
    return r;
}

/* A stand-in chain head: FNV-1a over what the record specs say, spread over
 * 32 bytes. Equal streams get equal heads, as with SHA-256. */
static void fake_head(const detshim_thread *t, uint8_t head[32])
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < t->nrecords; i++) {
        const detshim_record *r = &t->records[i];
        uint64_t v[5] = { r->seq, (uint64_t)r->params[0].v.i, r->operands[0].digest.lo,
                          r->operands[1].digest.lo, r->frames[0].offset };
        for (int k = 0; k < 5; k++)
            h = (h ^ v[k]) * 1099511628211ull;
        for (const char *c = r->api; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
        for (const char *c = r->notes[0].value; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
    }
    for (int i = 0; i < 32; i++)
        head[i] = (uint8_t)(h >> (8 * (i % 8))) ^ (uint8_t)i;
}

static detshim_thread make_thread(uint32_t index, const struct spec *specs, size_t n)
{
    detshim_thread t;
    memset(&t, 0, sizeof t);
    t.index = index;
    t.nrecords = n;
    t.records = take((n ? n : 1) * sizeof *t.records);
    for (size_t i = 0; i < n; i++)
        t.records[i] = make_record(i, &specs[i]);
    fake_head(&t, t.head);
    t.end_seen = t.end_matches = 1;
    return t;
}

static detshim_process make_process(const char *name, const detshim_thread *threads, int n)
{
    detshim_process p;
    memset(&p, 0, sizeof p);
    p.path = (char *)name;
    p.name = name;
    p.program = "train";
    p.nfields = 3;
    p.fields = take(3 * sizeof *p.fields);
    p.fields[0] = (detshim_field){ TRACE_FIELD_PROGRAM, 0, 5, "train" };
    p.fields[1] = (detshim_field){ TRACE_FIELD_PROCESS, 0, (uint32_t)strlen(name), name };
    p.fields[2] = (detshim_field){ TRACE_FIELD_PID, TRACE_FIELD_INFO, 3, "123" };
    p.nthreads = n;
    p.threads = take((n ? (size_t)n : 1) * sizeof *p.threads);
    if (n)
        memcpy(p.threads, threads, (size_t)n * sizeof *threads);
    p.valid_bytes = p.file_bytes = 1000;
    return p;
}

static detshim_run make_run(const detshim_process *procs, int n)
{
    detshim_run r;
    memset(&r, 0, sizeof r);
    r.nprocesses = n;
    r.processes = take((n ? (size_t)n : 1) * sizeof *r.processes);
    if (n)
        memcpy(r.processes, procs, (size_t)n * sizeof *procs);
    return r;
}

/* A run of one process "main" with one thread 0 made of `specs`. */
static detshim_run one_thread_run(const struct spec *specs, size_t n)
{
    detshim_thread t = make_thread(0, specs, n);
    detshim_process p = make_process("main", &t, 1);
    return make_run(&p, 1);
}

static struct diff_result compare(const detshim_run *a, const detshim_run *b, int all)
{
    struct diff_result r;
    struct diff_options opt = { .all = all };
    memset(&r, 0, sizeof r);
    assert_int_equal(diff_runs(a, b, &opt, &r), 0);
    return r;
}

static const struct spec base[] = { CALL(1, 11), CALL(2, 12), CALL(3, 13), CALL(4, 14) };

/* ---- classification of one differing record ------------------------ */

static void test_same_inputs_different_outputs_is_nondeterministic(void **state)
{
    (void)state;
    struct spec b[4];
    memcpy(b, base, sizeof b);
    b[2].out = 99;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(b, 4);
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_NONDETERMINISTIC);
    assert_int_equal(r.items[0].index, 2);
    assert_int_equal(r.items[0].ra->seq, 2);
    assert_ptr_equal(r.items[0].last_match, &ra.processes[0].threads[0].records[1]);
    diff_result_free(&r);
}

static void test_different_inputs_point_at_last_matching_record(void **state)
{
    (void)state;
    struct spec b[4];
    memcpy(b, base, sizeof b);
    b[3].in = 77;
    b[3].out = 78;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(b, 4);
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_INPUTS);
    assert_int_equal(r.items[0].index, 3);
    assert_non_null(r.items[0].last_match);
    assert_int_equal(r.items[0].last_match->seq, 2);
    diff_result_free(&r);
}

static void test_inputs_differing_at_first_record_have_no_last_match(void **state)
{
    (void)state;
    struct spec b[4];
    memcpy(b, base, sizeof b);
    b[0].in = 77;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(b, 4);
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_INPUTS);
    assert_null(r.items[0].last_match);
    diff_result_free(&r);
}

static void test_different_shape_is_control_flow(void **state)
{
    (void)state;
    struct spec b[4];
    memcpy(b, base, sizeof b);
    b[1].m = 8;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(b, 4);
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_CONTROL_FLOW);
    assert_int_equal(r.items[0].index, 1);
    diff_result_free(&r);
}

static void test_different_api_is_control_flow_even_with_other_data(void **state)
{
    (void)state;
    struct spec a = CALL(1, 11), b = { "sgemm_", 4, 2, 12, "passthrough", 0x100 };
    detshim_record ra = make_record(0, &a), rb = make_record(0, &b);
    assert_int_equal(diff_classify(&ra, &rb), DIFF_CONTROL_FLOW);
}

static void test_only_notes_differ_is_decision(void **state)
{
    (void)state;
    struct spec a = CALL(1, 11), b = CALL(1, 11), c = CALL(1, 12);
    b.note = "canonical";
    c.note = "canonical";
    detshim_record ra = make_record(0, &a), rb = make_record(0, &b), rc = make_record(0, &c);
    assert_false(diff_records_equal(&ra, &rb));
    assert_int_equal(diff_classify(&ra, &rb), DIFF_DECISION);
    /* A different decision explains different outputs: still a decision. */
    assert_int_equal(diff_classify(&ra, &rc), DIFF_DECISION);
}

static void test_inputs_differ_outranks_a_decision(void **state)
{
    (void)state;
    struct spec a = CALL(1, 11), b = CALL(2, 11);
    b.note = "canonical";
    detshim_record ra = make_record(0, &a), rb = make_record(0, &b);
    assert_int_equal(diff_classify(&ra, &rb), DIFF_INPUTS);
}

static void test_same_call_from_another_site_is_control_flow(void **state)
{
    (void)state;
    struct spec a = CALL(1, 11), b = CALL(1, 11);
    b.site = 0x200;
    detshim_record ra = make_record(0, &a), rb = make_record(0, &b);
    assert_false(diff_sites_equal(&ra, &rb));
    assert_false(diff_records_equal(&ra, &rb));
    assert_int_equal(diff_classify(&ra, &rb), DIFF_CONTROL_FLOW);
}

static void test_float_params_compare_by_bits(void **state)
{
    (void)state;
    detshim_param p = { "alpha", TRACE_PARAM_F64, { .f = 0.0 } };
    detshim_param q = { "alpha", TRACE_PARAM_F64, { .f = -0.0 } };
    detshim_param n1 = { "alpha", TRACE_PARAM_F64, { .f = __builtin_nan("") } };
    detshim_param n2 = n1;
    assert_false(diff_param_equal(&p, &q));
    assert_true(diff_param_equal(&n1, &n2));
    detshim_param s1 = { "uplo", TRACE_PARAM_STR, { .s = "U" } };
    detshim_param s2 = { "uplo", TRACE_PARAM_STR, { .s = NULL } };
    assert_false(diff_param_equal(&s1, &s2));
    detshim_param i1 = { "m", TRACE_PARAM_INT, { .i = 4 } };
    detshim_param i2 = { "m", TRACE_PARAM_CHAR, { .c = 4 } };
    assert_false(diff_param_equal(&i1, &i2));
}

static void test_record_digest_decides_when_both_have_one(void **state)
{
    (void)state;
    struct spec s = CALL(1, 11);
    detshim_record a = make_record(0, &s), b = make_record(0, &s);
    assert_true(diff_records_equal(&a, &b));
    a.digest[0] = 1;
    b.digest[0] = 2;
    assert_false(diff_records_equal(&a, &b));
    b.digest[0] = 1;
    b.operands[1].digest.lo = 5; /* fields are not looked at then */
    assert_true(diff_records_equal(&a, &b));
}

static void test_bad_counts_and_missing_arrays_read_as_empty(void **state)
{
    (void)state;
    struct spec s = CALL(1, 11);
    detshim_record a = make_record(0, &s), b = make_record(0, &s);
    a.nparams = -3;
    a.noperands = 5;
    a.operands = NULL;
    a.nframes = 2;
    a.frames = NULL;
    a.nnotes = -1;
    assert_int_equal(diff_nparams(&a), 0);
    assert_int_equal(diff_noperands(&a), 0);
    assert_int_equal(diff_nframes(&a), 0);
    assert_int_equal(diff_nnotes(&a), 0);
    assert_false(diff_records_equal(&a, &b));
    assert_int_equal(diff_classify(&a, &b), DIFF_CONTROL_FLOW);
    a.api = NULL;
    assert_int_equal(diff_classify(&a, &b), DIFF_CONTROL_FLOW);
}

/* ---- runs, processes, threads --------------------------------------- */

static void test_identical_runs_have_no_items_and_count_records(void **state)
{
    (void)state;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(base, 4);
    struct diff_result r = compare(&ra, &rb, 1);
    assert_int_equal(r.nitems, 0);
    assert_int_equal(r.nprocesses, 1);
    assert_int_equal(r.nrecords, 4);
    diff_result_free(&r);
}

static void test_informational_fields_are_not_compared(void **state)
{
    (void)state;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(base, 4);
    rb.processes[0].fields[2].value = "999";
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 0);
    diff_result_free(&r);
}

static const struct spec w1[] = { { "ddot_", 16, 21, 31, "passthrough", 0x300 },
                                  { "ddot_", 16, 22, 32, "passthrough", 0x300 },
                                  { "ddot_", 16, 23, 33, "passthrough", 0x300 } };
static const struct spec w2[] = { { "saxpy_", 8, 41, 51, "passthrough", 0x400 },
                                  { "saxpy_", 8, 42, 52, "passthrough", 0x400 },
                                  { "saxpy_", 8, 43, 53, "passthrough", 0x400 } };

/* main + two workers; `swap` starts the workers in the other order. */
static detshim_run workers_run(int swap, const struct spec *first_worker)
{
    detshim_thread t[3] = {
        make_thread(0, base, 4),
        make_thread(swap ? 2 : 1, first_worker ? first_worker : w1, 3),
        make_thread(swap ? 1 : 2, w2, 3),
    };
    detshim_process p = make_process("main", t, 3);
    /* The reader gives threads sorted by index. */
    if (swap) {
        detshim_thread tmp = p.threads[1];
        p.threads[1] = p.threads[2];
        p.threads[2] = tmp;
    }
    return make_run(&p, 1);
}

static void test_thread_start_order_never_shows(void **state)
{
    (void)state;
    detshim_run ra = workers_run(0, NULL), rb = workers_run(1, NULL);
    struct diff_result r = compare(&ra, &rb, 1);
    assert_int_equal(r.nitems, 0);
    diff_result_free(&r);
}

static void test_diverging_worker_pairs_by_its_first_record(void **state)
{
    (void)state;
    struct spec changed[3];
    memcpy(changed, w1, sizeof changed);
    changed[2].out = 999;
    detshim_run ra = workers_run(0, NULL), rb = workers_run(1, changed);
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_NONDETERMINISTIC);
    assert_int_equal(r.items[0].ta->index, 1);
    assert_int_equal(r.items[0].tb->index, 2); /* the ddot_ worker in run B */
    assert_int_equal(r.items[0].index, 2);
    diff_result_free(&r);
}

static void test_main_thread_pairs_with_main_thread(void **state)
{
    (void)state;
    /* B's worker 1 makes exactly A's main-thread calls; main must still
     * pair with main. */
    struct spec m[4];
    memcpy(m, base, sizeof m);
    m[3].out = 444;
    detshim_thread ta[2] = { make_thread(0, base, 4), make_thread(1, w1, 3) };
    detshim_thread tb[2] = { make_thread(0, m, 4), make_thread(1, base, 4) };
    detshim_process pa = make_process("main", ta, 2), pb = make_process("main", tb, 2);
    struct diff_thread_pair pairs[4];
    int n = diff_pair_threads(&pa, &pb, pairs);
    assert_int_equal(n, 2);
    assert_int_equal(pairs[0].ta->index, 0);
    assert_int_equal(pairs[0].tb->index, 0);
    assert_int_equal(pairs[1].ta->index, 1);
    assert_int_equal(pairs[1].tb->index, 1);
}

static void test_threads_starting_alike_pair_by_longest_common_prefix(void **state)
{
    (void)state;
    /* All four workers start with the same call; A's thread 1 shares three
     * calls with B's thread 2 and only one with B's thread 1. */
    const struct spec a1[] = { CALL(1, 1), CALL(2, 2), CALL(3, 3), CALL(4, 4) };
    const struct spec a2[] = { CALL(1, 1), CALL(7, 7), CALL(7, 7), CALL(7, 7) };
    const struct spec b1[] = { CALL(1, 1), CALL(8, 8), CALL(8, 8), CALL(8, 8) };
    const struct spec b2[] = { CALL(1, 1), CALL(2, 2), CALL(3, 3), CALL(5, 5) };
    detshim_thread ta[3] = { make_thread(0, base, 4), make_thread(1, a1, 4), make_thread(2, a2, 4) };
    detshim_thread tb[3] = { make_thread(0, base, 4), make_thread(1, b1, 4), make_thread(2, b2, 4) };
    detshim_process pa = make_process("main", ta, 3), pb = make_process("main", tb, 3);
    struct diff_thread_pair pairs[6];
    assert_int_equal(diff_pair_threads(&pa, &pb, pairs), 3);
    assert_int_equal(pairs[1].ta->index, 1);
    assert_int_equal(pairs[1].tb->index, 2);
    assert_int_equal(pairs[2].ta->index, 2);
    assert_int_equal(pairs[2].tb->index, 1);
}

static void test_500_threads_started_in_reverse_pair_by_content(void **state)
{
    (void)state;
    enum { N = 500 };
    static detshim_thread ta[N], tb[N];
    static struct diff_thread_pair pairs[2 * N];
    for (uint32_t i = 0; i < N; i++) {
        const struct spec a[] = { CALL(i, i), CALL(i, 2 * i) };
        const struct spec b[] = { CALL(N - 1 - i, N - 1 - i), CALL(N - 1 - i, 2 * (N - 1 - i)) };
        ta[i] = make_thread(i + 1, a, 2);
        tb[i] = make_thread(i + 1, b, 2);
    }
    tb[0].records[1].operands[1].digest.lo = 12345; /* A's last worker: same start only */
    fake_head(&tb[0], tb[0].head);
    detshim_process pa = make_process("main", ta, N), pb = make_process("main", tb, N);
    assert_int_equal(diff_pair_threads(&pa, &pb, pairs), N);
    for (uint32_t i = 0; i < N; i++) {
        assert_int_equal(pairs[i].ta->index, i + 1);
        assert_int_equal(pairs[i].tb->index, N - i);
    }
}

static void test_unpaired_thread_is_missing_thread(void **state)
{
    (void)state;
    detshim_thread ta[2] = { make_thread(0, base, 4), make_thread(1, w1, 3) };
    detshim_process pa = make_process("main", ta, 2), pb = make_process("main", ta, 1);
    detshim_run ra = make_run(&pa, 1), rb = make_run(&pb, 1);
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_MISSING_THREAD);
    assert_int_equal(r.items[0].side, DIFF_SIDE_A);
    assert_int_equal(r.items[0].ta->index, 1);
    assert_null(r.items[0].tb);
    assert_int_equal(r.items[0].extra, 3);
    diff_result_free(&r);
}

static void test_longer_stream_in_complete_file_is_extra_calls(void **state)
{
    (void)state;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(base, 2);
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_EXTRA_CALLS);
    assert_int_equal(r.items[0].side, DIFF_SIDE_B); /* B's stream is shorter */
    assert_int_equal(r.items[0].index, 2);
    assert_int_equal(r.items[0].extra, 2);
    assert_non_null(r.items[0].ra); /* where A continues */
    assert_int_equal(r.items[0].ra->seq, 2);
    assert_null(r.items[0].rb);
    assert_int_equal(r.items[0].last_match->seq, 1);
    diff_result_free(&r);
}

static void test_shorter_stream_in_truncated_file_is_truncated(void **state)
{
    (void)state;
    detshim_run ra = one_thread_run(base, 1), rb = one_thread_run(base, 4);
    ra.processes[0].truncated = 1;
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 2);
    /* First the file, then where its stream stops. */
    assert_int_equal(r.items[0].kind, DIFF_TRUNCATED);
    assert_null(r.items[0].ta);
    assert_int_equal(r.items[0].side, DIFF_SIDE_A);
    assert_int_equal(r.items[1].kind, DIFF_TRUNCATED);
    assert_int_equal(r.items[1].side, DIFF_SIDE_A);
    assert_int_equal(r.items[1].index, 1);
    assert_int_equal(r.items[1].rb->seq, 1);
    assert_int_equal(r.items[1].extra, 3);
    diff_result_free(&r);
}

static void test_truncated_file_with_equal_records_still_diverges(void **state)
{
    (void)state;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(base, 4);
    rb.processes[0].truncated = 1;
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_TRUNCATED);
    assert_int_equal(r.items[0].side, DIFF_SIDE_B);
    diff_result_free(&r);
}

static void test_process_in_one_run_only_is_missing_process(void **state)
{
    (void)state;
    detshim_thread t = make_thread(0, base, 4);
    detshim_process p[2] = { make_process("main", &t, 1), make_process("main.f1", &t, 1) };
    detshim_run ra = make_run(p, 2), rb = make_run(p, 1);
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_MISSING_PROCESS);
    assert_int_equal(r.items[0].side, DIFF_SIDE_A);
    assert_string_equal(r.items[0].pa->name, "main.f1");
    assert_null(r.items[0].pb);
    assert_int_equal(r.nprocesses, 2);
    diff_result_free(&r);
}

static detshim_unreadable planted = { "runB/main.f3.dtrace", "main.f3", DETSHIM_ERR_FORMAT,
                                       "runB/main.f3.dtrace: empty file" };

static void test_unreadable_file_with_no_partner_is_a_difference(void **state)
{
    (void)state;
    detshim_thread t = make_thread(0, base, 4);
    detshim_process p = make_process("main", &t, 1);
    detshim_run ra = make_run(&p, 1), rb = make_run(&p, 1);
    rb.nunreadable = 1;
    rb.unreadable = &planted;
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_UNREADABLE);
    assert_int_equal(r.items[0].side, DIFF_SIDE_B);
    assert_ptr_equal(r.items[0].file, &planted);
    assert_false(r.items[0].compared);
    assert_null(r.items[0].pa);
    assert_int_equal(r.nprocesses, 1);
    diff_result_free(&r);
}

static void test_unreadable_file_standing_for_a_process_of_the_other_run_must_be_compared(
    void **state)
{
    (void)state;
    detshim_thread t = make_thread(0, base, 4);
    detshim_process p[2] = { make_process("main", &t, 1), make_process("main.f3", &t, 1) };
    detshim_run ra = make_run(p, 2), rb = make_run(p, 1);
    rb.nunreadable = 1;
    rb.unreadable = &planted;
    struct diff_result r = compare(&ra, &rb, 0);
    /* One item, the file's: main.f3 is not also a missing process. */
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_UNREADABLE);
    assert_true(r.items[0].compared);
    assert_string_equal(r.items[0].pa->name, "main.f3");
    diff_result_free(&r);
}

static void test_unreadable_files_of_one_name_in_both_runs_must_be_compared(void **state)
{
    (void)state;
    detshim_run ra = make_run(NULL, 0), rb = make_run(NULL, 0);
    ra.nunreadable = rb.nunreadable = 1;
    ra.unreadable = rb.unreadable = &planted;
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 2);
    assert_true(r.items[0].compared && r.items[1].compared);
    assert_int_equal(r.items[0].side, DIFF_SIDE_A);
    assert_int_equal(r.items[1].side, DIFF_SIDE_B);
    diff_result_free(&r);
}

static void test_processes_pair_by_name_not_position(void **state)
{
    (void)state;
    detshim_thread t = make_thread(0, base, 4), u = make_thread(0, w1, 3);
    detshim_process pa[2] = { make_process("a", &t, 1), make_process("b", &u, 1) };
    detshim_process pb[2] = { make_process("b", &u, 1), make_process("a", &t, 1) };
    detshim_run ra = make_run(pa, 2), rb = make_run(pb, 2);
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 0);
    diff_result_free(&r);
}

/* diff_swapped_names for A's children n1 (doing base) and n2 (doing
 * `other`), and a run B in which each does the other's work. */
static int swapped(const char *n1, const char *n2, const struct spec *other, size_t nother,
                   const detshim_process **qa, const detshim_process **qb)
{
    detshim_thread t = make_thread(0, base, 4), u = make_thread(0, other, nother);
    detshim_process pa[2] = { make_process(n1, &t, 1), make_process(n2, &u, 1) };
    detshim_process pb[2] = { make_process(n1, &u, 1), make_process(n2, &t, 1) };
    detshim_run ra = make_run(pa, 2), rb = make_run(pb, 2);
    return diff_swapped_names(&ra, &rb, &ra.processes[0], &rb.processes[0], qa, qb);
}

static void test_children_that_swapped_names_are_found(void **state)
{
    (void)state;
    const detshim_process *qa = NULL, *qb = NULL;
    assert_int_equal(swapped("main.f1", "main.f2", w1, 3, &qa, &qb), 1);
    assert_string_equal(qa->name, "main.f2");
    assert_string_equal(qb->name, "main.f2");
    assert_int_equal(swapped("main.s1.s3", "main.s1.s10", w1, 3, &qa, &qb), 1);
    assert_string_equal(qa->name, "main.s1.s10");
    /* Not siblings of one kind, or not a fork's or spawn's name. */
    assert_int_equal(swapped("main.f1", "main.s2", w1, 3, &qa, &qb), 0);
    assert_int_equal(swapped("rank0", "rank1", w1, 3, &qa, &qb), 0);
    assert_int_equal(swapped("main.f1", "main.f1x", w1, 3, &qa, &qb), 0);
    /* Children alike from the start: swapping explains nothing. */
    assert_int_equal(swapped("main.f1", "main.f2", base, 4, &qa, &qb), 0);
}

static void test_header_difference_comes_before_records(void **state)
{
    (void)state;
    struct spec b[4];
    memcpy(b, base, sizeof b);
    b[1].out = 5;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(b, 4);
    rb.processes[0].fields[0].value = "other";
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 2);
    assert_int_equal(r.items[0].kind, DIFF_HEADER);
    assert_int_equal(r.items[0].field, TRACE_FIELD_PROGRAM);
    assert_int_equal(r.items[1].kind, DIFF_NONDETERMINISTIC);
    diff_result_free(&r);
}

static void test_header_field_missing_on_one_side(void **state)
{
    (void)state;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(base, 4);
    rb.processes[0].fields[0].flags = TRACE_FIELD_INFO; /* B: program not compared */
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_HEADER);
    assert_int_equal(r.items[0].field, TRACE_FIELD_PROGRAM);
    assert_non_null(diff_compared_field(ra.processes, TRACE_FIELD_PROGRAM));
    assert_null(diff_compared_field(rb.processes, TRACE_FIELD_PROGRAM));
    diff_result_free(&r);
}

static void test_header_fields_in_another_order_differ(void **state)
{
    (void)state;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(base, 4);
    detshim_field tmp = rb.processes[0].fields[0];
    rb.processes[0].fields[0] = rb.processes[0].fields[1];
    rb.processes[0].fields[1] = tmp;
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_HEADER);
    assert_int_equal(r.items[0].field, 0);
    diff_result_free(&r);
}

static void test_all_reports_every_differing_record(void **state)
{
    (void)state;
    struct spec b[4];
    memcpy(b, base, sizeof b);
    b[1].out = 5;
    b[3].in = 6;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(b, 3);
    struct diff_result first = compare(&ra, &rb, 0), all = compare(&ra, &rb, 1);
    assert_int_equal(first.nitems, 1);
    assert_int_equal(first.items[0].index, 1);
    assert_int_equal(all.nitems, 2); /* record 1, then A's extra record 3 */
    assert_int_equal(all.items[0].kind, DIFF_NONDETERMINISTIC);
    assert_int_equal(all.items[1].kind, DIFF_EXTRA_CALLS);
    assert_int_equal(all.items[1].index, 3);
    assert_int_equal(all.items[1].last_match->seq, 2);
    diff_result_free(&first);
    diff_result_free(&all);
}

static void test_all_gives_last_match_before_each_difference(void **state)
{
    (void)state;
    struct spec b[4];
    memcpy(b, base, sizeof b);
    b[1].out = 5;
    b[2].in = 6;
    b[3].m = 9;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(b, 4);
    struct diff_result r = compare(&ra, &rb, 1);
    assert_int_equal(r.nitems, 3);
    assert_int_equal(r.items[0].kind, DIFF_NONDETERMINISTIC);
    assert_int_equal(r.items[1].kind, DIFF_INPUTS);
    assert_int_equal(r.items[2].kind, DIFF_CONTROL_FLOW);
    for (int i = 0; i < 3; i++)
        assert_int_equal(r.items[i].last_match->seq, 0);
    diff_result_free(&r);
}

static void test_damaged_thread_end_is_reported(void **state)
{
    (void)state;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(base, 4);
    rb.processes[0].threads[0].end_matches = 0;
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_DAMAGED);
    assert_int_equal(r.items[0].side, DIFF_SIDE_B);
    assert_ptr_equal(r.items[0].tb, &rb.processes[0].threads[0]);
    diff_result_free(&r);
}

static void test_equal_records_with_different_roots_are_not_identical(void **state)
{
    (void)state;
    detshim_run ra = one_thread_run(base, 4), rb = one_thread_run(base, 4);
    rb.processes[0].root[0] = 1;
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_ROOT);
    diff_result_free(&r);
    rb.processes[0].root[0] = 0;
    rb.root[5] = 1;
    r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_ROOT);
    assert_null(r.items[0].pa);
    diff_result_free(&r);
}

static void test_two_single_files_pair_whatever_their_names(void **state)
{
    (void)state;
    detshim_thread t = make_thread(0, base, 4);
    detshim_process pa = make_process("main", &t, 1), pb = make_process("main.f1", &t, 1);
    detshim_run ra = make_run(&pa, 1), rb = make_run(&pb, 1);
    struct diff_options opt = { .pair_single = 1 };
    struct diff_result r;
    memset(&r, 0, sizeof r);
    assert_int_equal(diff_runs(&ra, &rb, &opt, &r), 0);
    /* Paired: the name shows as the one header difference. */
    assert_int_equal(r.nitems, 1);
    assert_int_equal(r.items[0].kind, DIFF_HEADER);
    assert_int_equal(r.items[0].field, TRACE_FIELD_PROCESS);
    diff_result_free(&r);
    r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 2); /* unpaired: one missing on each side */
    assert_int_equal(r.items[0].kind, DIFF_MISSING_PROCESS);
    assert_int_equal(r.items[1].kind, DIFF_MISSING_PROCESS);
    diff_result_free(&r);
}

static void test_empty_runs_are_identical(void **state)
{
    (void)state;
    detshim_run ra = make_run(NULL, 0), rb = make_run(NULL, 0);
    struct diff_result r = compare(&ra, &rb, 0);
    assert_int_equal(r.nitems, 0);
    assert_int_equal(r.nprocesses, 0);
    diff_result_free(&r);
}

static void test_kinds_have_ids_and_texts(void **state)
{
    (void)state;
    assert_string_equal(diff_kind_id(DIFF_NONDETERMINISTIC), "nondeterministic");
    assert_non_null(strstr(diff_kind_text(DIFF_NONDETERMINISTIC), "nondeterministic operation"));
    assert_non_null(strstr(diff_kind_text(DIFF_INPUTS), "inputs differ"));
    assert_string_equal(diff_kind_text(DIFF_CONTROL_FLOW), "control flow diverged");
    assert_string_equal(diff_field_name(TRACE_FIELD_POLICY_DIGEST), "policy_digest");
    assert_null(diff_field_name(999));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup(f, reset_arena)
    const struct CMUnitTest tests[] = {
        T(test_same_inputs_different_outputs_is_nondeterministic),
        T(test_different_inputs_point_at_last_matching_record),
        T(test_inputs_differing_at_first_record_have_no_last_match),
        T(test_different_shape_is_control_flow),
        T(test_different_api_is_control_flow_even_with_other_data),
        T(test_only_notes_differ_is_decision),
        T(test_inputs_differ_outranks_a_decision),
        T(test_same_call_from_another_site_is_control_flow),
        T(test_float_params_compare_by_bits),
        T(test_record_digest_decides_when_both_have_one),
        T(test_bad_counts_and_missing_arrays_read_as_empty),
        T(test_identical_runs_have_no_items_and_count_records),
        T(test_informational_fields_are_not_compared),
        T(test_thread_start_order_never_shows),
        T(test_diverging_worker_pairs_by_its_first_record),
        T(test_main_thread_pairs_with_main_thread),
        T(test_threads_starting_alike_pair_by_longest_common_prefix),
        T(test_500_threads_started_in_reverse_pair_by_content),
        T(test_unpaired_thread_is_missing_thread),
        T(test_longer_stream_in_complete_file_is_extra_calls),
        T(test_shorter_stream_in_truncated_file_is_truncated),
        T(test_truncated_file_with_equal_records_still_diverges),
        T(test_process_in_one_run_only_is_missing_process),
        T(test_unreadable_file_with_no_partner_is_a_difference),
        T(test_unreadable_file_standing_for_a_process_of_the_other_run_must_be_compared),
        T(test_unreadable_files_of_one_name_in_both_runs_must_be_compared),
        T(test_processes_pair_by_name_not_position),
        T(test_children_that_swapped_names_are_found),
        T(test_header_difference_comes_before_records),
        T(test_header_field_missing_on_one_side),
        T(test_header_fields_in_another_order_differ),
        T(test_all_reports_every_differing_record),
        T(test_all_gives_last_match_before_each_difference),
        T(test_damaged_thread_end_is_reported),
        T(test_equal_records_with_different_roots_are_not_identical),
        T(test_two_single_files_pair_whatever_their_names),
        T(test_empty_runs_are_identical),
        T(test_kinds_have_ids_and_texts),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
