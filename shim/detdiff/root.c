/* detdiff --root: a run's root, the commitment a lab publishes beside its
 * weights. A root read from a truncated or damaged file, or beside a file
 * that is not a readable trace, is still printed, so scripts see what was
 * read, but with a warning per file on stderr and exit 1: such a root may
 * commit to part of a run only and must not be published.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "detdiff.h"

/* 1 if any file of the run is cut short, damaged or unreadable; warns per
 * file. */
static int warn_incomplete(const detshim_run *run)
{
    int bad = 0;
    for (int i = 0; i < run->nprocesses; i++) {
        const detshim_process *p = &run->processes[i];
        if (p->truncated) {
            bad = 1;
            fprintf(stderr, "detdiff: warning: ");
            text_put(stderr, p->path);
            fprintf(stderr, " is truncated (%" PRIu64 " of %" PRIu64 " bytes whole",
                    p->valid_bytes, p->file_bytes);
            if (p->trouble[0]) {
                fputs(": ", stderr);
                text_put_n(stderr, p->trouble, strnlen(p->trouble, sizeof p->trouble),
                           sizeof p->trouble);
            }
            fputs("); this root covers part of the run only: do not publish it\n", stderr);
        }
        for (int t = 0; t < p->nthreads; t++)
            if (p->threads[t].end_seen && !p->threads[t].end_matches) {
                bad = 1;
                fprintf(stderr, "detdiff: warning: ");
                text_put(stderr, p->path);
                fprintf(stderr, ": thread " THREAD_FMT "'s end frame disagrees with its records; "
                                "this root does not describe the run the writer saw\n",
                        THREAD_ARGS(p->threads[t].index));
            }
    }
    for (int i = 0; i < run->nunreadable; i++) {
        bad = 1;
        fputs("detdiff: warning: ", stderr);
        text_put(stderr, run->unreadable[i].reason);
        fputs("; this root does not cover it: do not publish it\n", stderr);
    }
    return bad;
}

int root_print(const detshim_run *run, int json)
{
    char hex[65];
    detshim_hex32(run->root, hex);
    int bad = warn_incomplete(run);
    if (json) {
        size_t records = 0;
        for (int i = 0; i < run->nprocesses; i++)
            records += diff_process_records(&run->processes[i]);
        fprintf(stdout, "{\"root\":\"%s\",\"processes\":%d,\"records\":%zu,\"complete\":%s}\n",
                hex, run->nprocesses, records, bad ? "false" : "true");
    } else {
        printf("%s\n", hex);
    }
    return bad ? DETDIFF_DIVERGED : DETDIFF_IDENTICAL;
}

