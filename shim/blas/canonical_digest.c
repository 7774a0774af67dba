/* Long digests on the canonical pool: digest_bytes() of a run of 2 MiB
 * or more, shared by the pool's threads (trace/digest.h, digest_split_*).
 * One part reads the first blocks of the run as XXH3 does, the others
 * take the block sums of the rest, and the caller chains those sums on;
 * a run longer than SEGMENT goes through in segments of it, so the sums
 * never need more than SEGMENT / 16 bytes. The bits are digest_bytes()'s
 * at any thread count. Lent to the trace (digest_lend_threads,
 * shim/blas/pinned.c) for digests that hold up the program while the
 * pool is idle: step records (shim/framework) digest every parameter
 * after each optimizer step. */
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
