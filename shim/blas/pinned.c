/* Pinned mode: the vendor BLAS made run-to-run deterministic through its
 * own controls. A vendor's kernels are deterministic for a fixed thread
 * count (they split work the same way every time); what varies is the
 * count, which OpenBLAS, BLIS and MKL pick from the machine and the load.
 * Before the first call in pinned or canonical mode the policy's count is
 * applied through every control a loaded library offers, and every record
 * carries it as a decision. The BLAS is usually loaded after our start-up
 * (PyTorch loads it on import), so this happens before vendor calls, not in
 * the constructor.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "blas/blas.h"
#include "blas/canonical.h"
#include "core/core.h"
#include "core/policy.h"
#include "trace/trace.h"

/* Thread-count setters by library; BLIS takes its 64-bit dim_t, the
 * others an int. */
static const struct {
    const char *name;
    int takes_int64;
} thread_setters[] = {
    { "openblas_set_num_threads", 0 },          /* OpenBLAS */
    { "openblas_set_num_threads64_", 0 },       /* OpenBLAS ILP64, suffixed */
    { "scipy_openblas_set_num_threads64_", 0 }, /* numpy 2.x's bundled OpenBLAS */
    { "scipy_openblas_set_num_threads", 0 },    /* scipy's bundled OpenBLAS (LP64) */
    { "goto_set_num_threads", 0 },              /* OpenBLAS, GotoBLAS name */
    { "bli_thread_set_num_threads", 1 },        /* BLIS */
    { "MKL_Set_Num_Threads", 0 },               /* MKL */
};

static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned long long pinned_generation; /* loads+unloads seen, 0: never */
static char threads_note[16] = "1";
static char applied_note[256] = "none found";
static pthread_once_t canon_once = PTHREAD_ONCE_INIT;

/* Applies the count through every control found; caller holds pin_lock. */
static void apply_thread_count(void)
{
    int n = core_vendor_threads();
    snprintf(threads_note, sizeof threads_note, "%d", n);
    size_t used = 0;
    applied_note[0] = 0;
    for (size_t i = 0; i < sizeof thread_setters / sizeof *thread_setters; i++) {
        void *fn = resolve_real(thread_setters[i].name);
        if (!fn)
            continue;
        if (thread_setters[i].takes_int64)
            ((void (*)(int64_t))(uintptr_t)fn)(n);
        else
            ((void (*)(int))(uintptr_t)fn)(n);
        used += (size_t)snprintf(applied_note + used, sizeof applied_note - used, "%s%s",
                                 used ? "," : "", thread_setters[i].name);
        if (used >= sizeof applied_note)
            break;
    }
    /* MKL also adapts its count to the load unless told not to. */
    void *dyn = resolve_real("MKL_Set_Dynamic");
    if (dyn)
        ((void (*)(int))(uintptr_t)dyn)(0);
    if (!applied_note[0])
        snprintf(applied_note, sizeof applied_note, "none found");
    core_log(DS_LOG_INFO, "BLAS pinned to %d thread%s via %s", n, n == 1 ? "" : "s", applied_note);
}

void blas_pin_vendor(void)
{
    /* A process may load a second BLAS after the first call (numpy's, then
     * PyTorch's): apply again whenever libraries were loaded since. */
    unsigned long long gen = resolve_loaded_generation();
    if (atomic_load_explicit(&pinned_generation, memory_order_acquire) == gen)
        return;
    pthread_mutex_lock(&pin_lock);
    if (atomic_load_explicit(&pinned_generation, memory_order_relaxed) != gen) {
        apply_thread_count();
        atomic_store_explicit(&pinned_generation, gen, memory_order_release);
    }
    pthread_mutex_unlock(&pin_lock);
}

static void canon_prepare_once(void)
{
    /* The count and the ISA path change no bit; DETSHIM_ISA exists to prove
     * the latter. */
    canon_set_threads(core_canonical_threads());
    digest_lend_threads(canon_digest_bytes, canon_digest_runs); /* its pool for long digests */
    if (core_cfg.isa[0] && (canon_set_isa(core_cfg.isa) != 0 || canon_blas_set_isa(core_cfg.isa) != 0))
        core_fail("DETSHIM_ISA (the best path the CPU has is used)",
                  "DETSHIM_ISA=%s: this CPU or build has no such path; use scalar, avx2, "
                  "avx512 or auto", core_cfg.isa);
}

void blas_canon_prepare(void)
{
    pthread_once(&canon_once, canon_prepare_once);
}

const char *blas_threads_note(void)
{
    return threads_note;
}

void blas_note_run(struct trace_rec *r, int mode, int how)
{
    /* With their lengths, which the note's builder cannot see in a table. */
#define RAN(s) { s, sizeof s - 1 }
    static const struct { const char *s; uint8_t len; } ran[3][4] = {
        [BLAS_MODE_PASSTHROUGH] = { RAN("passthrough"), RAN("passthrough"), RAN("passthrough"),
                                    RAN("passthrough") },
        [BLAS_MODE_PINNED] = { RAN("pinned"), RAN("pinned"), RAN("pinned"), RAN("pinned") },
        [BLAS_MODE_CANONICAL] = { RAN("canonical"), RAN("pinned (no canonical kernel)"),
                                  RAN("pinned (canonical kernel declined the arguments)"),
                                  RAN("exact (vendor kernel, no arithmetic)") },
    };
#undef RAN
    trace_rec_note(r, "blas.mode", ran[mode][how].s);
    r->notes[r->nnotes - 1].value_len = ran[mode][how].len;
    if (mode == BLAS_MODE_PINNED || (mode == BLAS_MODE_CANONICAL && how != BLAS_RAN_AS_MODE))
        trace_rec_note(r, "blas.threads", blas_threads_note());
}
