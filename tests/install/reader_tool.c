/* A third-party tool written against the installed reader API alone, as
 * include/detshim.h documents it: prints a run's process count, record
 * count and root. test-install.sh builds it with `pkg-config --cflags
 * --libs detshim` against a staged `make install`. */
#include <detshim.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    detshim_run *run;
    char err[512] = "", hex[65];
    if (argc != 2 || detshim_run_load(argv[1], &run, err, sizeof err) != 0) {
        fprintf(stderr, "reader_tool: %s\n", argc == 2 ? err : "usage: reader_tool RUN");
        return 2;
    }
    size_t records = 0;
    for (int i = 0; i < run->nprocesses; i++)
        for (int t = 0; t < run->processes[i].nthreads; t++)
            records += run->processes[i].threads[t].nrecords;
    detshim_hex32(run->root, hex);
    printf("%d %zu %s\n", run->nprocesses, records, hex);
    detshim_run_free(run);
    return 0;
}
