/* libFuzzer harness for the trace reader (include/detshim.h): each input,
 * its frame checks repaired (fuzz_common.h), is loaded as a single trace
 * file and as the one file of a run directory, and everything the reader
 * hands back is walked, so that a pointer or count it gets wrong is read
 * and caught by ASan rather than left for detdiff to trip over. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "detshim.h"
#include "detshim/trace_format.h"
#include "fuzz_common.h"

/* Reads every string and array the run points at; returns a value that
 * depends on all of it, so none of the reads is optimised away. */
static size_t walk_run(const detshim_run *run)
{
    size_t sum = 0;
    char hex[65];
    detshim_hex32(run->root, hex);
    sum += strlen(hex);
    for (int i = 0; i < run->nunreadable; i++)
        sum += strlen(run->unreadable[i].path) + strlen(run->unreadable[i].name) +
               strlen(run->unreadable[i].reason);
    for (int i = 0; i < run->nprocesses; i++) {
        const detshim_process *p = &run->processes[i];
        sum += strlen(p->path) + strlen(p->name) + strlen(p->program) + strlen(p->trouble);
        for (int f = 0; f < p->nfields; f++)
            sum += strlen(p->fields[f].value) + p->fields[f].len;
        sum += detshim_field_get(p, TRACE_FIELD_PROCESS) != NULL;
        for (int t = 0; t < p->nthreads; t++) {
            const detshim_thread *th = &p->threads[t];
            for (size_t r = 0; r < th->nrecords; r++) {
                const detshim_record *rec = &th->records[r];
                sum += strlen(rec->api);
                for (int k = 0; k < rec->nparams; k++) {
                    sum += strlen(rec->params[k].name);
                    if (rec->params[k].type == TRACE_PARAM_STR)
                        sum += strlen(rec->params[k].v.s);
                }
                for (int k = 0; k < rec->noperands; k++)
                    sum += strlen(rec->operands[k].name) + rec->operands[k].count;
                for (int k = 0; k < rec->nframes; k++) {
                    const char *m, *s;
                    if (detshim_site_lookup(p, &rec->frames[k], &m, &s) == 0)
                        sum += strlen(m) + strlen(s);
                }
                for (int k = 0; k < rec->nnotes; k++)
                    sum += strlen(rec->notes[k].key) + strlen(rec->notes[k].value);
            }
        }
    }
    return sum;
}

static void load_and_walk(const char *path)
{
    detshim_run *run = NULL;
    char err[512] = "";
    int rc = detshim_run_load(path, &run, err, sizeof err);
    /* The contract: 0 and a run, or an error code and no run. */
    if ((rc == 0) != (run != NULL)) {
        fprintf(stderr, "fuzz_reader: detshim_run_load returned %d with run %p\n", rc,
                (void *)run);
        abort();
    }
    if (run) {
        volatile size_t sink = walk_run(run);
        (void)sink;
        detshim_run_free(run);
    } else if (!err[0]) {
        fprintf(stderr, "fuzz_reader: error %d without a reason\n", rc);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char file[4200], dir[4200], dirfile[4300];
    if (!file[0]) {
        snprintf(file, sizeof file, "%s/one.dtrace", fuzz_scratch());
        snprintf(dir, sizeof dir, "%s/run", fuzz_scratch());
        snprintf(dirfile, sizeof dirfile, "%s/p.dtrace", dir);
        mkdir(dir, 0700);
    }
    uint8_t *fixed = fuzz_fix_checks(data, size);
    fuzz_write(file, fixed, size);
    fuzz_write(dirfile, fixed, size);
    free(fixed);
    load_and_walk(file);
    load_and_walk(dir);
    return 0;
}
