/* The fixed decomposition of the canonical LANES reductions (dot, nrm2,
 * asum; the contract is shim/blas/canonical.h, "Sums"): a reduction of n
 * terms is cut into chunks of CANON_CHUNK terms, each chunk's 16 lane
 * sums start from +0, and the chunks' lane sums meet in one fixed binary
 * tree over the chunk index. The drivers (canonical_l1.c) say how one
 * chunk is computed; this file runs the chunks and the tree, on the
 * calling thread or, for a long reduction, on the canonical pool
 * (canonical_pool.c). Threads take whole aligned subtrees of the tree
 * (blocks of a power-of-two number of chunks), whose roots the caller
 * then joins by the same tree, so where the work runs never shows in a
 * bit: the thread count and the block size change no operation.
 */
#include <string.h>

#include "blas/canonical.h"
#include "blas/canonical_kernels.h"

/* Blocks handed to the pool per thread, and at most in all: more blocks
 * than threads, so one thread that is descheduled on a busy machine
 * leaves its share to the others. */
#define BLOCKS_PER_THREAD 4
#define MAX_BLOCKS 32

/* All 32 reals are added: unused lanes stay +0. */
void canon_lanes_join(enum canon_join how, union canon_lanes *a, const union canon_lanes *b)
{
    switch (how) {
    case CANON_JOIN_ADD_F:
        for (int l = 0; l < 2 * CANON_LANES; l++)
            a->s[l] = a->s[l] + b->s[l];
        break;
    case CANON_JOIN_ADD_D:
        for (int l = 0; l < 2 * CANON_LANES; l++)
            a->d[l] = a->d[l] + b->d[l];
        break;
    default:
        a->d[0] = b->d[0] > a->d[0] ? b->d[0] : a->d[0];
        break;
    }
}

int64_t canon_chunk_split(int64_t count)
{
    int64_t p = 1;
    while (2 * p < count)
        p *= 2;
    return p;
}

/* The tree over leaves lo .. hi-1 (hi > lo) into *out: one leaf is
 * itself; more split at lo + the largest power of two below their count,
 * left joined with right. leaf(i) is chunk i of R, or root i of a
 * threaded run when roots is not NULL. */
struct tree {
    const struct canon_chunked *R;
    const union canon_lanes *roots;
};

static void tree(const struct tree *T, int64_t lo, int64_t hi, union canon_lanes *out)
{
    if (hi - lo == 1) {
        if (T->roots) {
            *out = T->roots[lo];
        } else {
            const struct canon_chunked *R = T->R;
            const int64_t at = lo * CANON_CHUNK;
            memset(out, 0, sizeof *out);
            R->chunk(R->arg, at, R->n - at < CANON_CHUNK ? R->n - at : CANON_CHUNK, out);
        }
        return;
    }
    _Alignas(64) union canon_lanes right;
    const int64_t mid = lo + canon_chunk_split(hi - lo);
    tree(T, lo, mid, out);
    tree(T, mid, hi, &right);
    canon_lanes_join(T->R->how, out, &right);
}

/* One threaded run: block b is the subtree over chunks b*per ..
 * min((b+1)*per, nchunks) - 1, per a power of two, so every block is a
 * node of the whole tree (or the right spine's last node). */
struct blocks {
    const struct canon_chunked *R;
    int64_t nchunks, per;
    _Alignas(64) union canon_lanes root[MAX_BLOCKS];
};

static void block_part(void *arg, int part, int nparts, void *ws)
{
    struct blocks *B = arg;
    const struct tree T = {B->R, NULL};
    const int64_t lo = part * B->per;
    const int64_t hi = lo + B->per < B->nchunks ? lo + B->per : B->nchunks;
    (void)nparts;
    (void)ws;
    tree(&T, lo, hi, &B->root[part]);
}

void canon_chunked_sum(const struct canon_chunked *R, union canon_lanes *out)
{
    if (R->n <= CANON_CHUNK) { /* one chunk, or none */
        memset(out, 0, sizeof *out);
        if (R->n > 0)
            R->chunk(R->arg, 0, R->n, out);
        return;
    }
    const int64_t nchunks = (R->n + CANON_CHUNK - 1) / CANON_CHUNK;
    const int threads = canon_threads();
    const struct tree T = {R, NULL};
    if (threads > 1 && R->n >= CANON_CHUNKS_PAR_MIN && nchunks >= 2) {
        int want = threads * BLOCKS_PER_THREAD;
        if (want > MAX_BLOCKS)
            want = MAX_BLOCKS;
        /* The smallest power-of-two block that gives at most `want`
         * blocks; every such block is a subtree, whatever its size. */
        struct blocks B = {.R = R, .nchunks = nchunks, .per = 1};
        while ((nchunks + B.per - 1) / B.per > want)
            B.per *= 2;
        const int nblocks = (int)((nchunks + B.per - 1) / B.per);
        /* The pool fails only when it cannot allocate, before running any
         * part; the caller then runs the whole tree itself. */
        if (nblocks >= 2 && canon_pool_run_on(block_part, &B, nblocks, threads, 0) == 0) {
            const struct tree top = {R, B.root};
            tree(&top, 0, nblocks, out);
            return;
        }
    }
    tree(&T, 0, nchunks, out);
}
