/* Long digests on the canonical pool: digest_bytes() of a run of 2 MiB
 * or more, shared by the pool's threads (trace/digest.h, digest_split_*).
 * One part reads the first blocks of the run as XXH3 does, the others
 * take the block sums of the rest, and the caller chains those sums on;
 * a run longer than SEGMENT goes through in segments of it, so the sums
 * never need more than SEGMENT / 16 bytes. The bits are digest_bytes()'s
 * at any thread count. Lent to the trace (digest_lend_threads,
 * shim/blas/pinned.c) for digests that hold up the program while the
 * pool is idle: step records (shim/framework) digest every parameter
 * after each optimizer step. A record's many shorter tensors go the
 * other way: one thread each (canon_digest_runs), since two cores read
 * memory faster than one. */
#include <stdint.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"
#include "trace/digest.h"

/* Below SPLIT_FROM, one thread reads the run from the caches sooner than
 * the pool takes a job; each part reads at least PART_MIN bytes. */
#define SPLIT_FROM ((size_t)2 << 20)
#define PART_MIN ((size_t)256 << 10)
#define SEGMENT ((size_t)64 << 20)

struct digest_job {
    const unsigned char *p;
    size_t first, count, head; /* this segment's blocks; part 0 reads `head` of them */
    struct digest_split st;
    uint64_t *sums; /* of blocks first + head .. first + count - 1 */
};

static void digest_part(void *arg, int part, int nparts, void *ws)
{
    (void)ws;
    struct digest_job *j = arg;
    if (part == 0) {
        digest_split_run(&j->st, j->p, j->head);
        return;
    }
    size_t rest = j->count - j->head;
    size_t lo = rest * (size_t)(part - 1) / (size_t)(nparts - 1);
    size_t hi = rest * (size_t)part / (size_t)(nparts - 1);
    digest_split_sums(j->p, j->first + j->head + lo, hi - lo, j->sums + 8 * lo);
}

detshim_digest canon_digest_bytes(const void *p, size_t len)
{
    int threads = canon_threads();
    size_t nblocks = digest_split_blocks(len);
    if (threads < 2 || len < SPLIT_FROM || nblocks == 0)
        return digest_bytes(p, len);
    size_t most = len / PART_MIN;
    int nparts = most < (size_t)threads ? (int)most : threads;
    const size_t per = SEGMENT / DIGEST_SPLIT_BLOCK;
    struct digest_job j = { .p = p };
    j.sums = canon_scratch((nblocks < per ? nblocks : per) * 8 * sizeof(uint64_t));
    if (!j.sums)
        return digest_bytes(p, len);
    digest_split_begin(&j.st);
    for (j.first = 0; j.first < nblocks; j.first += j.count) {
        j.count = nblocks - j.first < per ? nblocks - j.first : per;
        /* The part that reads in place does no chaining after: it takes
         * a larger share than the parts whose sums are chained on. */
        j.head = j.count * 5 / (size_t)(4 * nparts + 1);
        if (canon_pool_run(digest_part, &j, nparts, 0) != 0)
            return digest_bytes(p, len);
        digest_split_chain(&j.st, j.sums, j.count - j.head);
    }
    return digest_split_end(&j.st, p, len);
}

/* canon_digest_runs: the short runs of a batch, one pool part each, the
 * longest first (the pool's threads claim parts one at a time, so the
 * short ones at the end even out the threads' shares). Below RUNS_FROM
 * bytes in all the caller reads them alone (a guess, not measured). */
#define RUNS_BATCH 64
#define RUNS_FROM ((size_t)512 << 10)

struct runs_job {
    const void *const *p;
    const size_t *len;
    detshim_digest *out;
    int order[RUNS_BATCH]; /* indices into p, len and out */
};

static void runs_part(void *arg, int part, int nparts, void *ws)
{
    (void)nparts;
    (void)ws;
    struct runs_job *j = arg;
    int i = j->order[part];
    j->out[i] = digest_bytes(j->p[i], j->len[i]);
}

static void digest_batch(int n, const void *const *p, const size_t *len, detshim_digest *out,
                         int threads)
{
    struct runs_job j = { .p = p, .len = len, .out = out };
    int m = 0;
    size_t bytes = 0;
    for (int i = 0; i < n; i++) {
        if (len[i] >= SPLIT_FROM) {
            out[i] = canon_digest_bytes(p[i], len[i]);
            continue;
        }
        int k = m++;
        for (; k > 0 && len[j.order[k - 1]] < len[i]; k--)
            j.order[k] = j.order[k - 1];
        j.order[k] = i;
        bytes += len[i];
    }
    if (threads >= 2 && m >= 2 && bytes >= RUNS_FROM &&
        canon_pool_run_on(runs_part, &j, m, threads < m ? threads : m, 0) == 0)
        return;
    for (int k = 0; k < m; k++)
        runs_part(&j, k, m, NULL);
}

void canon_digest_runs(size_t n, const void *const *p, const size_t *len, detshim_digest *out)
{
    int threads = canon_threads();
    for (size_t at = 0; at < n; at += RUNS_BATCH) {
        int m = n - at < RUNS_BATCH ? (int)(n - at) : RUNS_BATCH;
        digest_batch(m, p + at, len + at, out + at, threads);
    }
}
