/* The trace reader behind include/detshim.h, at the level of runs: a run
 * is one trace file or a directory of them, each read by reader_scan.c
 * (chains and roots recomputed from the records, never trusted from stored
 * copies), files that are not readable traces listed rather than fatal,
 * and the run root computed over the processes. See reader_internal.h for
 * the map of the reader's files.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "detshim.h"
#include "trace/chain.h"
#include "trace/trace.h"
#include "detshim/trace_format.h"
#include "reader_internal.h"

static void free_procs(struct proc_private *procs, int n);
static void free_unreadable(detshim_unreadable *u, int n);

static int cmp_process_name(const void *a, const void *b)
{
    const struct proc_private *x = a, *y = b;
    return strcmp(x->pub.name, y->pub.name);
}

static int has_trace_suffix(const char *name)
{
    size_t n = strlen(name), m = strlen(TRACE_FILE_SUFFIX);
    return n > m && strcmp(name + n - m, TRACE_FILE_SUFFIX) == 0;
}

static int list_dir(const char *dir, char ***names, int *n, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: cannot open directory: %s", dir, strerror(errno));
        return DETSHIM_ERR_IO;
    }
    struct dirent *e;
    int cap = 0;
    *n = 0;
    *names = NULL;
    while ((e = readdir(d))) {
        if (!has_trace_suffix(e->d_name))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = realloc(*names, sizeof *nn * (size_t)cap);
            if (!nn) {
                closedir(d);
                return DETSHIM_ERR_NOMEM;
            }
            *names = nn;
        }
        if (asprintf(&(*names)[*n], "%s/%s", dir, e->d_name) < 0) {
            closedir(d);
            return DETSHIM_ERR_NOMEM;
        }
        (*n)++;
    }
    closedir(d);
    if (!*n) {
        snprintf(err, errlen,
                 "%s: no trace files (*%s) here: not a DETSHIM_TRACE directory, or a run that "
                 "made no call detshim intercepts (such a process writes no file)",
                 dir, TRACE_FILE_SUFFIX);
        return DETSHIM_ERR_EMPTY;
    }
    return 0;
}

static int cmp_unreadable_name(const void *a, const void *b)
{
    return strcmp(((const detshim_unreadable *)a)->name, ((const detshim_unreadable *)b)->name);
}

/* Notes a file of a directory that is not a readable trace: its path, the
 * process name its file name implies, and why (`why`, naming the path). */
static int add_unreadable(detshim_unreadable *u, const char *path, int error, const char *why)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    u->path = strdup(path);
    u->name = strndup(base, strlen(base) - strlen(TRACE_FILE_SUFFIX));
    u->error = error;
    if (why[0])
        snprintf(u->reason, sizeof u->reason, "%s", why);
    else
        snprintf(u->reason, sizeof u->reason, "%s: cannot load (error %d)", path, error);
    return u->path && u->name ? 0 : DETSHIM_ERR_NOMEM;
}

const char *detshim_field_get(const detshim_process *p, uint16_t key)
{
    for (int i = 0; i < p->nfields; i++)
        if (p->fields[i].key == key)
            return p->fields[i].value;
    return NULL;
}

/* detshim_run_load and detshim_run_open: keep_records says which. */
static int run_read(const char *path, int keep_records, detshim_run **out, char *err,
                    size_t errlen)
{
    struct stat sb;
    *out = NULL;
    if (stat(path, &sb) != 0) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return DETSHIM_ERR_IO;
    }
    char **files = NULL;
    int nfiles = 0, rc = 0, is_dir = S_ISDIR(sb.st_mode);
    if (is_dir) {
        rc = list_dir(path, &files, &nfiles, err, errlen);
    } else {
        files = malloc(sizeof *files);
        if (files && (files[0] = strdup(path)))
            nfiles = 1;
        else
            rc = DETSHIM_ERR_NOMEM;
    }
    detshim_run *run = calloc(1, sizeof *run);
    struct proc_private *procs = calloc((size_t)nfiles + 1, sizeof *procs);
    detshim_unreadable *bad = calloc((size_t)nfiles + 1, sizeof *bad);
    int nbad = 0;
    if (!run || !procs || !bad)
        rc = rc ? rc : DETSHIM_ERR_NOMEM;
    for (int i = 0; rc == 0 && i < nfiles; i++) {
        char why[512] = "";
        struct proc_private *pp = &procs[run->nprocesses];
        int lrc = reader_scan_process(files[i], pp, keep_records, why, sizeof why);
        if (lrc == 0) {
            run->nprocesses++;
            continue;
        }
        reader_proc_free(pp);
        /* One bad file of a directory does not hide the others: it is
         * listed for the caller to report. A file asked for by name, or
         * memory running out, fails the load. */
        if (is_dir && lrc != DETSHIM_ERR_NOMEM) {
            rc = add_unreadable(&bad[nbad++], files[i], lrc, why);
        } else {
            snprintf(err, errlen, "%s", why);
            rc = lrc;
        }
    }
    for (int i = 0; i < nfiles; i++)
        free(files[i]);
    free(files);
    if (rc == 0 && run->nprocesses == 0) {
        /* Nothing to read at all: the run itself is not usable. */
        snprintf(err, errlen, "%s (no file of %s is a readable trace)", bad[0].reason, path);
        rc = bad[0].error;
    }
    if (rc == 0) {
        qsort(bad, (size_t)nbad, sizeof *bad, cmp_unreadable_name);
        run->unreadable = bad;
        run->nunreadable = nbad;
        bad = NULL;
        /* The private states stay where they are (their addresses are the
         * `internal` pointers); the public array holds copies. */
        qsort(procs, (size_t)run->nprocesses, sizeof *procs, cmp_process_name);
        run->processes = calloc((size_t)run->nprocesses + 1, sizeof *run->processes);
        for (int i = 0; run->processes && i < run->nprocesses; i++) {
            run->processes[i] = procs[i].pub;
            run->processes[i].internal = &procs[i];
        }
        if (!run->processes)
            rc = DETSHIM_ERR_NOMEM;
    }
    if (rc != 0) {
        if (rc == DETSHIM_ERR_NOMEM && !err[0])
            snprintf(err, errlen, "%s: out of memory", path);
        free_procs(procs, nfiles);
        free_unreadable(bad, nbad);
        if (run) {
            free(run->processes);
            free_unreadable(run->unreadable, run->nunreadable);
        }
        free(run);
        return rc;
    }
    const char **names = calloc((size_t)run->nprocesses + 1, sizeof *names);
    uint8_t(*roots)[32] = calloc((size_t)run->nprocesses + 1, 32);
    if (!names || !roots) {
        free(names);
        free(roots);
        detshim_run_free(run);
        snprintf(err, errlen, "%s: out of memory", path);
        return DETSHIM_ERR_NOMEM;
    }
    for (int i = 0; i < run->nprocesses; i++) {
        names[i] = procs[i].pub.name;
        memcpy(roots[i], procs[i].pub.root, 32);
    }
    chain_run_root(names, (const uint8_t(*)[32])roots, run->nprocesses, run->root);
    free(names);
    free(roots);
    *out = run;
    return 0;
}

int detshim_run_load(const char *path, detshim_run **out, char *err, size_t errlen)
{
    return run_read(path, 1, out, err, errlen);
}

int detshim_run_open(const char *path, detshim_run **out, char *err, size_t errlen)
{
    return run_read(path, 0, out, err, errlen);
}

void reader_proc_free(struct proc_private *pp)
{
    for (int t = 0; t < pp->pub.nthreads; t++) {
        free(pp->pub.threads[t].records);
        free(pp->pub.threads[t].windows);
    }
    free(pp->pub.threads);
    free(pp->pub.fields);
    free(pp->pub.path);
    free(pp->extents);
    free(pp->sites);
    if (pp->expanded)
        close(pp->expanded_fd);
    arena_free(&pp->arena);
    memset(pp, 0, sizeof *pp);
}

static void free_procs(struct proc_private *procs, int n)
{
    for (int i = 0; procs && i < n; i++)
        reader_proc_free(&procs[i]);
    free(procs);
}

static void free_unreadable(detshim_unreadable *u, int n)
{
    for (int i = 0; u && i < n; i++) {
        free(u[i].path);
        free(u[i].name);
    }
    free(u);
}

void detshim_run_free(detshim_run *run)
{
    if (!run)
        return;
    /* All processes' private states are one array: the first one's. */
    free_procs(run->nprocesses ? run->processes[0].internal : NULL, run->nprocesses);
    free(run->processes);
    free_unreadable(run->unreadable, run->nunreadable);
    free(run);
}

void detshim_hex32(const uint8_t d[32], char out[65])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[64] = 0;
}
