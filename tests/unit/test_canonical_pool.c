/* White-box tests of the canonical kernels' thread pool
 * (shim/blas/canonical_pool.c), included here so that a test can put the
 * pool in the state of one moment of a race and run a worker's claim
 * loop from there, deterministically. The pool's public functions are
 * renamed on the way in, so they do not clash with the copy in the
 * shim's objects this program is linked with. The timing-driven checks
 * (same bits for any thread count, concurrent callers, fork) are in
 * test_canonical_gemm.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#define canon_pool_run test_pool_run
#define canon_pool_run_on test_pool_run_on
#define canon_pool_worker_parts test_pool_worker_parts
#define canon_pool_fork_child test_pool_fork_child
#define canon_scratch test_scratch
#define canon_pool_reserve test_pool_reserve
#include "blas/canonical_pool.c"

/* Per part: how often it ran, and the part count it was given. */
static int runs[CANON_MAX_THREADS], counts_seen[CANON_MAX_THREADS];

static void count_part(void *arg, int part, int nparts, void *ws)
{
    (void)arg;
    (void)ws;
    runs[part]++;
    counts_seen[part] = nparts;
}

/* The caller has finished a 2-part job (its claim word used up) and is
 * writing the next job, of 3 parts, not yet published. A worker that read
 * the old job's generation must claim nothing: before, it paired the old
 * word with the new part count, ran part 2 of the new job, and counted it
 * in the new job's `done`, which then reached 3 while a part still ran. */
static void test_a_used_up_claim_word_yields_no_part_while_the_next_job_is_written(void **state)
{
    (void)state;
    memset(runs, 0, sizeof runs);
    atomic_store(&pool.claim, CLAIM(5, 2, 2));
    pool.fn = count_part;
    pool.arg = NULL;
    atomic_store(&pool.helpers, 2);
    atomic_store(&pool.mxcsr, _mm_getcsr());
    atomic_store(&pool.done, 0);
    run_claimed(5, 1, NULL);
    for (int p = 0; p < CANON_MAX_THREADS; p++)
        assert_int_equal(runs[p], 0);
    assert_int_equal(atomic_load(&pool.done), 0);
}

/* Published, the job's parts are each claimed once, with its own count. */
static void test_each_part_of_a_published_job_runs_once_with_its_count(void **state)
{
    (void)state;
    memset(runs, 0, sizeof runs);
    pool.fn = count_part;
    atomic_store(&pool.helpers, 2);
    atomic_store(&pool.mxcsr, _mm_getcsr()); /* a worker takes it on */
    atomic_store(&pool.done, 0);
    atomic_store(&pool.claim, CLAIM(6, 3, 0));
    run_claimed(6, 1, NULL);
    run_claimed(6, 2, NULL); /* nothing left for a second worker */
    for (int p = 0; p < 3; p++)
        assert_int_equal(runs[p], 1);
    assert_int_equal(runs[3], 0);
    assert_int_equal(counts_seen[2], 3);
    assert_int_equal(atomic_load(&pool.done), 3);
    /* A worker past the job's helpers takes no part. */
    atomic_store(&pool.claim, CLAIM(7, 3, 0));
    run_claimed(7, 3, NULL);
    assert_int_equal(runs[0], 1);
}

/* Through the pool itself, with workers: every part once, many times. */
static void test_jobs_of_changing_part_counts_run_each_part_once(void **state)
{
    (void)state;
    static const int counts[] = { 2, 3, 8, 5, 8, 2 };
    for (int rep = 0; rep < 200; rep++)
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
            memset(runs, 0, sizeof runs);
            assert_int_equal(test_pool_run(count_part, NULL, counts[c], 64), 0);
            for (int p = 0; p < CANON_MAX_THREADS; p++)
                assert_int_equal(runs[p], p < counts[c]);
            assert_int_equal(counts_seen[counts[c] - 1], counts[c]);
        }
}

/* Per part of a job with more parts than threads: the thread that ran it. */
static pthread_t ran_on[CANON_MAX_THREADS];

static void note_thread(void *arg, int part, int nparts, void *ws)
{
    (void)arg;
    (void)ws;
    runs[part]++;
    counts_seen[part] = nparts;
    ran_on[part] = pthread_self();
}

/* canon_pool_run_on: every part once, with its count, on no more threads
 * than asked (the caller's included), the claim word carrying the count. */
static void test_more_parts_than_threads_run_once_each_on_at_most_those_threads(void **state)
{
    (void)state;
    static const int jobs[][2] = { { 32, 2 }, { 9, 3 }, { 64, 2 }, { 5, 8 }, { 17, 1 } };
    for (int rep = 0; rep < 100; rep++)
        for (size_t j = 0; j < sizeof jobs / sizeof *jobs; j++) {
            const int nparts = jobs[j][0], threads = jobs[j][1];
            memset(runs, 0, sizeof runs);
            assert_int_equal(test_pool_run_on(note_thread, NULL, nparts, threads, 64), 0);
            int distinct = 0;
            for (int p = 0; p < CANON_MAX_THREADS; p++) {
                assert_int_equal(runs[p], p < nparts);
                if (p >= nparts)
                    continue;
                assert_int_equal(counts_seen[p], nparts);
                int seen = 0;
                for (int q = 0; q < p; q++)
                    seen |= pthread_equal(ran_on[q], ran_on[p]);
                distinct += !seen;
            }
            assert_true(distinct <= threads);
            assert_true(atomic_load(&pool.helpers) <= threads - 1 || threads == 1);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_used_up_claim_word_yields_no_part_while_the_next_job_is_written),
        cmocka_unit_test(test_each_part_of_a_published_job_runs_once_with_its_count),
        cmocka_unit_test(test_jobs_of_changing_part_counts_run_each_part_once),
        cmocka_unit_test(test_more_parts_than_threads_run_once_each_on_at_most_those_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
