/* libFuzzer harness for detdiff's comparison and printers (shim/detdiff/,
 * all but main.c): each input, its frame checks repaired (fuzz_common.h),
 * is loaded as run A against a fixed run B ($DETSHIM_FUZZ_REF, else
 * build/fuzz/seeds/ref: written by tests/fuzz/mkcorpus.sh), and the other
 * way round; each comparison is
 * rendered as text and as JSON, and the fuzzed run through --show and
 * --root. Output goes to /dev/null: what is checked is that no printer
 * reads or writes out of bounds, leaks or hits undefined behaviour.
 * Input length chooses the options, so both are reached and a crash
 * reproduces from its input alone: bit 0 pairs single files (as detdiff
 * does for two files given by hand) or compares directories, bit 1 is
 * --all. Run with -close_fd_mask=2: --root warns on stderr per file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "detdiff.h"
#include "fuzz_common.h"

static FILE *devnull;
static detshim_run *ref_file, *ref_dir;
static char ref_file_path[4200], ref_dir_path[4200];

/* The fixed run, loaded once; without it the harness would compare
 * nothing, so it stops with the reason. */
static void load_ref(void)
{
    char err[512] = "";
    const char *dir = getenv("DETSHIM_FUZZ_REF"), *exe = fuzz_exe_dir();
    if (dir && *dir)
        snprintf(ref_dir_path, sizeof ref_dir_path, "%s", dir);
    else
        snprintf(ref_dir_path, sizeof ref_dir_path, "%s/seeds/ref", exe ? exe : ".");
    snprintf(ref_file_path, sizeof ref_file_path, "%s/ref.dtrace", ref_dir_path);
    if (detshim_run_load(ref_file_path, &ref_file, err, sizeof err) != 0 ||
        detshim_run_load(ref_dir_path, &ref_dir, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_detdiff: no reference run: %s; run tests/fuzz/mkcorpus.sh\n", err);
        exit(2);
    }
    devnull = fopen("/dev/null", "w");
    /* root_print writes to stdout. */
    if (!devnull || !freopen("/dev/null", "w", stdout)) {
        perror("/dev/null");
        exit(2);
    }
}

static void compare(const char *pa, const char *pb, const detshim_run *a, const detshim_run *b,
                    const struct diff_options *opt)
{
    struct diff_result r = {0};
    int rc = diff_runs(a, b, opt, &r);
    if (rc != 0 && rc != DETSHIM_ERR_NOMEM)
        abort();
    text_result(devnull, a, b, &r);
    json_result(devnull, pa, pb, a, b, &r);
    diff_result_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char file[4200], dir[4200], dirfile[4300];
    if (!devnull) {
        load_ref();
        snprintf(file, sizeof file, "%s/a.dtrace", fuzz_scratch());
        snprintf(dir, sizeof dir, "%s/run", fuzz_scratch());
        snprintf(dirfile, sizeof dirfile, "%s/a.dtrace", dir);
        mkdir(dir, 0700);
    }
    struct diff_options opt = {.pair_single = !(size & 1), .all = (size >> 1) & 1};
    const char *path = opt.pair_single ? file : dir;
    const char *ref_path = opt.pair_single ? ref_file_path : ref_dir_path;
    const detshim_run *ref = opt.pair_single ? ref_file : ref_dir;
    uint8_t *fixed = fuzz_fix_checks(data, size);
    fuzz_write(opt.pair_single ? file : dirfile, fixed, size);
    free(fixed);

    detshim_run *run = NULL;
    char err[512] = "";
    if (detshim_run_load(path, &run, err, sizeof err) != 0)
        return 0; /* the reader's own harness covers refusals */
    compare(path, ref_path, run, ref, &opt);
    compare(ref_path, path, ref, run, &opt);
    show_run(devnull, path, run);
    root_print(run, 0);
    root_print(run, 1);
    detshim_run_free(run);
    return 0;
}
