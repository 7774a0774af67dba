/* Process lineage (see lineage.h). A process learns its parent from
 * DETSHIM_LINEAGE = "<name>:<pid>:<rank>", which each process publishes for
 * its children:
 *   main | rank<N>   the first process (no parent under the shim), or the
 *                    first of a rank whose parent had another rank
 *   <parent>.f<k>    the k-th fork (pthread_atfork renames the child)
 *   <name>.e         the image a process exec'd into (same pid)
 *   <parent>.s<k>    a child spawned by vfork or posix_spawn, or by a
 *                    program that hands children its own copy of the
 *                    environment (shells, Python's os.environ): a new pid
 *                    with a parent's name. k starts at 1 and is provisional
 *                    until the trace settles it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "detshim/core.h"
#include "detshim/lineage.h"

static struct {
    char name[256];
    char parent[256];
    char rank[16];
    unsigned forks;        /* forks made so far, for the children's names */
    unsigned spawn_number; /* nonzero while provisional */
    int first;
} lin;

static const char *env_rank(void)
{
    static const char *const vars[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                        "SLURM_PROCID" };
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = core_getenv(vars[i]);
        if (v && *v && strspn(v, "0123456789") == strlen(v) && strlen(v) < 12)
            return v;
    }
    return "";
}

static void publish(void)
{
    char v[320];
    snprintf(v, sizeof v, "%s:%ld:%s", lin.name, (long)getpid(), lin.rank);
    core_setenv("DETSHIM_LINEAGE", v);
}

static void atfork_prepare(void)
{
    lin.forks++;
}

static void atfork_child(void)
{
    char parent[256];
    snprintf(parent, sizeof parent, "%s", lin.name);
    snprintf(lin.name, sizeof lin.name, "%.240s.f%u", parent, lin.forks);
    lin.forks = 0;
    lin.spawn_number = 0;
    lin.first = 0;
    publish();
}

void lineage_start(void)
{
    snprintf(lin.rank, sizeof lin.rank, "%s", env_rank());
    const char *v = core_getenv("DETSHIM_LINEAGE");
    char parent[256] = "", parent_rank[16] = "";
    long parent_pid = -1;
    const char *c1 = v ? strchr(v, ':') : NULL;
    const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c1 && c2 && (size_t)(c1 - v) < sizeof parent) { /* malformed: as absent */
        memcpy(parent, v, (size_t)(c1 - v));
        parent[c1 - v] = 0;
        parent_pid = strtol(c1 + 1, NULL, 10);
        snprintf(parent_rank, sizeof parent_rank, "%s", c2 + 1);
    }
    if (!parent[0] || (lin.rank[0] && strcmp(lin.rank, parent_rank) != 0)) {
        lin.first = 1;
        if (lin.rank[0])
            snprintf(lin.name, sizeof lin.name, "rank%s", lin.rank);
        else
            snprintf(lin.name, sizeof lin.name, "main");
    } else if (parent_pid == (long)getpid()) {
        snprintf(lin.name, sizeof lin.name, "%.250s.e", parent);
    } else {
        snprintf(lin.parent, sizeof lin.parent, "%s", parent);
        lin.spawn_number = 1;
        snprintf(lin.name, sizeof lin.name, "%.240s.s1", parent);
    }
    publish();
    pthread_atfork(atfork_prepare, NULL, atfork_child);
}

const char *lineage_name(void)
{
    return lin.name;
}

int lineage_is_first(void)
{
    return lin.first;
}

const char *lineage_rank(void)
{
    return lin.rank;
}

int lineage_provisional(void)
{
    return lin.spawn_number != 0;
}

void lineage_next_spawn_number(void)
{
    lin.spawn_number++;
    snprintf(lin.name, sizeof lin.name, "%.240s.s%u", lin.parent, lin.spawn_number);
}

void lineage_settle(void)
{
    lin.spawn_number = 0;
    publish();
}
