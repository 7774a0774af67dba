/* detdiff, the command line: parses options, loads runs through the reader
 * library (detshim.h), and hands them to the comparison (diff.c) and its
 * text or JSON output, to --show or to --root (see detdiff.h for the map).
 * Exit status: 0 identical, 1 diverged, 2 trouble; every error is one line
 * on stderr starting with "detdiff: " (and, with --json, one JSON object on
 * stdout).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "detdiff.h"

static const char usage_line[] =
    "usage: detdiff [--json] [--all] [--chrome-trace OUT.json] RUN_A RUN_B | "
    "detdiff --show TRACE | "
    "detdiff [--json] --root RUN";

static const char help_text[] =
    "detdiff: compare two detshim runs and explain the first divergence\n"
    "\n"
    "  detdiff [--json] [--all] RUN_A RUN_B\n"
    "      RUN_A, RUN_B: trace directories (DETSHIM_TRACE) or single .dtrace files.\n"
    "      Exit 0: identical; 1: diverged (explained on stdout); 2: trouble.\n"
    "      --all   list every differing record, not only the first per thread\n"
    "      --json  print the result as one JSON object\n"
    "  detdiff --show TRACE     print a trace (directory or file) readably\n"
    "  detdiff [--json] --root RUN\n"
    "      print the run's root (SHA-256, hex). Exit 1, with a warning on\n"
    "      stderr, if a file of the run is truncated, damaged or not a trace:\n"
    "      that root may cover part of the run only.\n"
    "  detdiff --help | --version\n"
    "See detdiff(1).\n";

static int json_errors; /* errors are also printed as JSON on stdout */

/* ---- errors -------------------------------------------------------- */

static void fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    fprintf(stderr, "detdiff: %s\n", msg);
    if (json_errors) {
        fputs("{\"result\":\"error\",\"error\":", stdout);
        json_put(stdout, msg);
        fputs("}\n", stdout);
    }
}

/* What to do about a load error; NULL where the reader's own message
 * already says it (a version mismatch, an empty directory). */
static const char *load_advice(int rc)
{
    switch (rc) {
    case DETSHIM_ERR_IO:
        return "check the path and its permissions";
    case DETSHIM_ERR_FORMAT:
        return "give a directory written with DETSHIM_TRACE=DIR or one of its .dtrace files";
    case DETSHIM_ERR_NOMEM:
        return "free some memory and try again";
    }
    return NULL;
}

/* Opens a run, its records then read through cursors (--show, a diff,
 * --root: memory per thread, not per record, so a trace of any size can
 * be read); on failure prints the error line and returns NULL. The
 * reader's message names the file at fault. */
static detshim_run *load(const char *path)
{
    char err[512] = "";
    detshim_run *run = NULL;
    int rc = detshim_run_open(path, &run, err, sizeof err);
    if (rc == 0 && run)
        return run;
    if (rc == 0)
        rc = DETSHIM_ERR_FORMAT;
    const char *advice = load_advice(rc);
    if (!err[0])
        snprintf(err, sizeof err, "%s: cannot load (error %d)", path, rc);
    if (advice)
        fail("%s; %s", err, advice);
    else
        fail("%s", err);
    return NULL;
}

/* ---- commands ------------------------------------------------------ */

static int is_regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmd_diff(const char *pa, const char *pb, int json, int all, const char *chrome)
{
    detshim_run *a = load(pa), *b = a ? load(pb) : NULL;
    struct diff_result r = {0};
    struct diff_options opt = {.all = all};
    int status = DETDIFF_TROUBLE;
    if (!a || !b)
        goto out;
    /* Two single files given by hand pair whatever their process names;
     * a name that differs then shows as a header difference. */
    opt.pair_single = is_regular_file(pa) && is_regular_file(pb);
    int rc = diff_runs(a, b, &opt, &r);
    if (rc == DETSHIM_ERR_NOMEM) {
        fail("%s vs %s: out of memory while comparing; free some memory and try again", pa,
             pb);
        goto out;
    }
    if (rc != 0) {
        fail("%s vs %s: a trace file no longer reads as it did when opened (changed or "
             "removed while comparing?); compare copies that nothing writes to", pa, pb);
        goto out;
    }
    /* A file that stands for a process of the other run must be compared,
     * and cannot be: trouble, not a verdict. */
    for (size_t i = 0; i < r.nitems; i++) {
        const struct diff_item *it = &r.items[i];
        if (it->kind == DIFF_UNREADABLE && it->compared) {
            /* Another format version says what to do in its reason. */
            int version = it->file->error == DETSHIM_ERR_VERSION;
            fail("%s; run %s has a %s %s too, so the runs cannot be compared%s%s%s",
                 it->file->reason, it->side == DIFF_SIDE_A ? "B" : "A",
                 it->pa || it->pb ? "process" : "file for", it->file->name,
                 version ? "" : ": remove the file if it was planted, or trace run ",
                 version ? "" : side_name(it->side), version ? "" : " again into a new directory");
            goto out;
        }
    }
    char err[8192];
    if (chrome && chrome_write(chrome, a, b, &r, err, sizeof err) != 0) {
        fail("%s", err);
        goto out;
    }
    if (json)
        json_result(stdout, pa, pb, a, b, &r);
    else
        text_result(stdout, a, b, &r);
    status = r.nitems ? DETDIFF_DIVERGED : DETDIFF_IDENTICAL;
out:
    diff_result_free(&r);
    if (a)
        detshim_run_free(a);
    if (b)
        detshim_run_free(b);
    return status;
}


static int cmd_root(const char *path, int json)
{
    detshim_run *run = load(path);
    if (!run)
        return DETDIFF_TROUBLE;
    int status = root_print(run, json);
    detshim_run_free(run);
    return status;
}

static int cmd_show(const char *path)
{
    detshim_run *run = load(path);
    if (!run)
        return DETDIFF_TROUBLE;
    int bad = show_run(stdout, path, run) != 0;
    detshim_run_free(run);
    return bad ? DETDIFF_TROUBLE : DETDIFF_IDENTICAL;
}

/* ---- arguments ----------------------------------------------------- */

/* Keeps the first two paths and counts them all, so the error can say how
 * many were given. */
static void add_path(const char **paths, int *npaths, const char *p)
{
    if (*npaths < 2)
        paths[*npaths] = p;
    (*npaths)++;
}

int main(int argc, char **argv)
{
    int json = 0, all = 0, show = 0, root = 0, npaths = 0, status;
    const char *paths[2] = {NULL, NULL}, *chrome = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            while (++i < argc)
                add_path(paths, &npaths, argv[i]);
            break;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(help_text, stdout);
            return DETDIFF_IDENTICAL;
        }
        if (strcmp(a, "--version") == 0) {
            printf("detdiff %s (trace format %u)\n", DETSHIM_VERSION, TRACE_VERSION);
            return DETDIFF_IDENTICAL;
        }
        if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--all") == 0) {
            all = 1;
        } else if (strcmp(a, "--chrome-trace") == 0 || strncmp(a, "--chrome-trace=", 15) == 0) {
            chrome = a[14] == '=' ? a + 15 : i + 1 < argc ? argv[++i] : NULL;
            if (!chrome || !*chrome) {
                fail("--chrome-trace needs the path of the file to write, e.g. "
                     "--chrome-trace diff.json; %s", usage_line);
                return DETDIFF_TROUBLE;
            }
        } else if (strcmp(a, "--show") == 0) {
            show = 1;
        } else if (strncmp(a, "--show=", 7) == 0) {
            show = 1;
            add_path(paths, &npaths, a + 7);
        } else if (strcmp(a, "--root") == 0) {
            root = 1;
        } else if (strncmp(a, "--root=", 7) == 0) {
            root = 1;
            add_path(paths, &npaths, a + 7);
        } else if (a[0] == '-' && a[1] != '\0') {
            fail("unknown option '%s'; %s", a, usage_line);
            return DETDIFF_TROUBLE;
        } else {
            add_path(paths, &npaths, a);
        }
    }
    json_errors = json;
    if (show && root) {
        fail("--show and --root cannot be combined; %s", usage_line);
        return DETDIFF_TROUBLE;
    }
    if (show && json) {
        fail("--show prints text only; drop --json (--json works with a diff and with "
             "--root)");
        return DETDIFF_TROUBLE;
    }
    if ((show || root) && chrome) {
        fail("--chrome-trace applies to a diff of two runs only; %s", usage_line);
        return DETDIFF_TROUBLE;
    }
    if ((show || root) && all) {
        fail("--all applies to a diff of two runs only; %s", usage_line);
        return DETDIFF_TROUBLE;
    }
    if ((show || root) && npaths != 1) {
        fail("%s takes exactly one trace directory or file (got %d); %s",
             show ? "--show" : "--root", npaths, usage_line);
        return DETDIFF_TROUBLE;
    }
    if (!show && !root && npaths != 2) {
        fail("expected two runs to compare (got %d); %s", npaths, usage_line);
        return DETDIFF_TROUBLE;
    }
    if (show)
        status = cmd_show(paths[0]);
    else if (root)
        status = cmd_root(paths[0], json);
    else
        status = cmd_diff(paths[0], paths[1], json, all, chrome);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        json_errors = 0;
        fail("cannot write the result to standard output; check the disk or pipe it "
             "somewhere that reads it all");
        return DETDIFF_TROUBLE;
    }
    return status;
}