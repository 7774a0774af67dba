/* Long digests on the canonical pool: digest_bytes() of a run of a
 * megabyte or more, shared by the pool's threads (trace/digest.h,
 * digest_split_*): one part reads the first half of the run's blocks as
 * XXH3 does, the others take the block sums of the rest, and the caller
 * chains those sums on. The bits are digest_bytes()'s at any thread
 * count. Lent to the trace (digest_lend_threads, shim/blas/pinned.c)
 * for digests that hold up the program while the pool is idle: step
 * records (shim/framework) digest every parameter after each optimizer
 * step. */
#include <stdint.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"
#include "trace/digest.h"

/* Below this, one thread reads the run from the caches sooner than the
 * pool takes a job; each part reads at least PART_MIN bytes. */
#define SPLIT_FROM ((size_t)2 << 20)
#define PART_MIN ((size_t)256 << 10)

struct digest_job {
    const unsigned char *p;
    size_t head, nblocks; /* blocks 0..head-1 are read by part 0 */
    struct digest_split st;
    uint64_t *sums;
};

static void digest_part(void *arg, int part, int nparts, void *ws)
{
    (void)ws;
    struct digest_job *j = arg;
    if (part == 0) {
        digest_split_run(&j->st, j->p, j->head);
        return;
    }
    size_t rest = j->nblocks - j->head;
    size_t first = j->head + rest * (size_t)(part - 1) / (size_t)(nparts - 1);
    size_t end = j->head + rest * (size_t)part / (size_t)(nparts - 1);
    digest_split_sums(j->p, first, end - first, j->sums + 8 * first);
}

detshim_digest canon_digest_bytes(const void *p, size_t len)
{
    int threads = canon_threads();
    size_t nblocks = digest_split_blocks(len);
    if (threads < 2 || len < SPLIT_FROM || nblocks == 0)
        return digest_bytes(p, len);
    size_t most = len / PART_MIN;
    int nparts = most < (size_t)threads ? (int)most : threads;
    /* The part that reads in place does no chaining after: it gets a
     * larger share than the parts whose sums are chained on. */
    struct digest_job j = { .p = p, .nblocks = nblocks };
    j.head = nblocks * 5 / (size_t)(4 * nparts + 1);
    j.sums = canon_scratch(nblocks * 8 * sizeof(uint64_t));
    if (!j.sums)
        return digest_bytes(p, len);
    digest_split_begin(&j.st);
    if (canon_pool_run(digest_part, &j, nparts, 0) != 0)
        return digest_bytes(p, len);
    digest_split_chain(&j.st, j.sums + 8 * j.head, nblocks - j.head);
    return digest_split_end(&j.st, p, len);
}
