/* detdiff's comparison of summary streams ([trace] level = summary,
 * docs/tracing.md#long-runs-summary-traces): where either side holds a
 * window as its digest only, the pair is compared window by window, and
 * the first window whose digests differ is named by stream, number and
 * record range. Where both sides hold that window's records (a re-run with
 * DETSHIM_TRACE_FULL_WINDOW, as detcheck --bisect makes), its records are
 * compared as diff.c compares full streams, so the call is named.
 */
#include <string.h>

#include "diff.h"

int diff_windows_apply(const detshim_thread *ta, const detshim_thread *tb)
{
    return (ta && ta->nsummary) || (tb && tb->nsummary);
}

/* Records of t held in the file before window k (full windows only). */
static size_t records_before(const detshim_thread *t, size_t k)
{
    size_t n = 0;
    for (size_t j = 0; j < k && j < t->nwindows; j++)
        if (!t->windows[j].summary)
            n += t->windows[j].count;
    return n;
}

/* Opens a cursor on t positioned at the first record of window k. */
static int cursor_at(const detshim_process *p, const detshim_thread *t, size_t k,
                     detshim_cursor **c)
{
    int rc = detshim_cursor_open(p, t, c);
    const detshim_record *r;
    for (size_t i = records_before(t, k); !rc && i > 0; i--)
        if ((rc = detshim_cursor_next(*c, &r)) == 1)
            rc = 0;
        else if (rc == 0)
            rc = DETSHIM_ERR_FORMAT;
    return rc;
}

/* Walks window k, held in full on both sides, record by record. Sets
 * *found when an item was added. Returns 0 or an error code. */
static int walk_window(const detshim_process *pa, const detshim_process *pb,
                       const detshim_thread *ta, const detshim_thread *tb, size_t k,
                       struct diff_result *r, int *found)
{
    const detshim_window *wa = &ta->windows[k], *wb = &tb->windows[k];
    detshim_cursor *ca = NULL, *cb = NULL;
    int rc = cursor_at(pa, ta, k, &ca);
    if (!rc)
        rc = cursor_at(pb, tb, k, &cb);
    uint32_t n = wa->count < wb->count ? wa->count : wb->count;
    for (uint32_t i = 0; !rc && i < n; i++) {
        const detshim_record *ra, *rb;
        int ka = detshim_cursor_next(ca, &ra), kb = detshim_cursor_next(cb, &rb);
        if (ka != 1 || kb != 1) {
            rc = ka < 0 ? ka : kb < 0 ? kb : DETSHIM_ERR_FORMAT;
            break;
        }
        if (diff_records_equal(ra, rb)) {
            detshim_cursor_mark(ca);
            continue;
        }
        struct diff_item *it = diff_add_item(r, diff_classify(ra, rb), pa, pb);
        if (!it) {
            rc = DETSHIM_ERR_NOMEM;
            break;
        }
        it->ta = ta;
        it->tb = tb;
        it->index = (size_t)wa->first + i;
        it->window = k;
        rc = detshim_cursor_keep(ca, 0, &it->ra);
        if (!rc)
            rc = detshim_cursor_keep(cb, 0, &it->rb);
        if (!rc)
            rc = detshim_cursor_keep(ca, 1, &it->last_match);
        *found = 1;
        break;
    }
    detshim_cursor_close(ca);
    detshim_cursor_close(cb);
    return rc;
}

static int window_item(const detshim_process *pa, const detshim_process *pb,
                       const detshim_thread *ta, const detshim_thread *tb, size_t k,
                       struct diff_result *r)
{
    const detshim_window *wa = k < ta->nwindows ? &ta->windows[k] : NULL;
    const detshim_window *wb = k < tb->nwindows ? &tb->windows[k] : NULL;
    struct diff_item *it = diff_add_item(r, DIFF_WINDOW, pa, pb);
    if (!it)
        return DETSHIM_ERR_NOMEM;
    const detshim_window *w = wa ? wa : wb;
    it->ta = ta;
    it->tb = tb;
    it->window = k;
    it->index = (size_t)w->first;
    it->extra = wa && wb && wb->count > wa->count ? wb->count : w->count;
    it->window_one_side = !wa || !wb;
    it->side = wa ? DIFF_SIDE_A : DIFF_SIDE_B;
    return 0;
}

int diff_windows_pair(const detshim_process *pa, const detshim_process *pb,
                      const detshim_thread *ta, const detshim_thread *tb,
                      const struct diff_options *opt, struct diff_result *r)
{
    size_t n = ta->nwindows > tb->nwindows ? ta->nwindows : tb->nwindows;
    for (size_t k = 0; k < n; k++) {
        if (k < ta->nwindows && k < tb->nwindows) {
            const detshim_window *wa = &ta->windows[k], *wb = &tb->windows[k];
            if (wa->count == wb->count && !memcmp(wa->digest, wb->digest, 32))
                continue;
            int found = 0, rc = 0;
            if (!wa->summary && !wb->summary)
                rc = walk_window(pa, pb, ta, tb, k, r, &found);
            if (!rc && !found)
                rc = window_item(pa, pb, ta, tb, k, r);
            if (rc || !opt->all)
                return rc;
            continue;
        }
        /* One stream has more windows: it made more calls. */
        return window_item(pa, pb, ta, tb, k, r);
    }
    return 0;
}
