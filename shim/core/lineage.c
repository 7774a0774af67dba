/* Process lineage (see lineage.h). A process learns its parent from
 * DETSHIM_LINEAGE = "<name>:<how>:<rank>", which each process publishes for
 * its children with <how> empty, so what a child inherits is the same in
 * every run (no pid: a program that prints or hashes its environment must
 * not differ run to run). Only an exec through the shim's wrapper hands the
 * new image <how> = "e<pid>", and that image republishes before its main.
 *   main | rank<N>   the first process (no parent under the shim), or the
 *                    first of a rank whose parent had another rank
 *   <parent>.f<k>    the k-th fork (pthread_atfork renames the child)
 *   <name>           the image a process exec'd into keeps the process's
 *                    name (an exec replaces the image, not the process: a
 *                    train.sh that ends in `exec python3 train.py` names
 *                    and keys python3 as launching it directly would), and
 *                    its fork numbering goes on where the old image's
 *                    stopped; only when the old image already wrote a
 *                    trace file under that name is the new one <name>.e
 *   <parent>.s<k>    a child spawned by vfork or posix_spawn, or by a
 *                    program that hands children its own copy of the
 *                    environment (shells, Python's os.environ): a new
 *                    process with a parent's name. k starts at 1 and is
 *                    provisional until the trace settles it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "core/lineage.h"

static struct {
    char name[256];
    char parent[256];
    char rank[16];
    unsigned forks;        /* forks made so far, for the children's names */
    unsigned spawn_number; /* nonzero while provisional */
    int first;
    int has_file;          /* this image wrote a trace file under name */
    pid_t pid; /* the process lin describes: a vfork child is another */
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
    snprintf(v, sizeof v, "%s::%s", lin.name, lin.rank);
    core_setenv("DETSHIM_LINEAGE", v);
}

void lineage_fork_prepare(void)
{
    lin.forks++;
}

void lineage_fork_child(void)
{
    char parent[256];
    snprintf(parent, sizeof parent, "%s", lin.name);
    snprintf(lin.name, sizeof lin.name, "%.240s.f%u", parent, lin.forks);
    lin.forks = 0;
    lin.spawn_number = 0;
    lin.first = 0;
    lin.has_file = 0;
    lin.pid = getpid();
    publish();
}

void lineage_start(void)
{
    snprintf(lin.rank, sizeof lin.rank, "%s", env_rank());
    const char *v = core_getenv("DETSHIM_LINEAGE");
    char parent[256] = "", parent_rank[16] = "";
    long exec_pid = -1; /* "e<pid>.<forks>.<file>": the image before this one's exec */
    unsigned exec_forks = 0, exec_file = 0;
    const char *c1 = v ? strchr(v, ':') : NULL;
    const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c1 && c2 && (size_t)(c1 - v) < sizeof parent) { /* malformed: as absent */
        memcpy(parent, v, (size_t)(c1 - v));
        parent[c1 - v] = 0;
        if (c1[1] == 'e') {
            char *end;
            exec_pid = strtol(c1 + 2, &end, 10);
            if (*end == '.')
                exec_forks = (unsigned)strtoul(end + 1, &end, 10);
            if (*end == '.')
                exec_file = end[1] == '1';
        }
        snprintf(parent_rank, sizeof parent_rank, "%s", c2 + 1);
    }
    if (!parent[0] || (lin.rank[0] && strcmp(lin.rank, parent_rank) != 0)) {
        lin.first = 1;
        if (lin.rank[0])
            snprintf(lin.name, sizeof lin.name, "rank%s", lin.rank);
        else
            snprintf(lin.name, sizeof lin.name, "main");
    } else if (exec_pid == (long)getpid()) {
        snprintf(lin.name, sizeof lin.name, exec_file ? "%.250s.e" : "%.250s", parent);
        lin.forks = exec_file ? 0 : exec_forks;
    } else {
        snprintf(lin.parent, sizeof lin.parent, "%s", parent);
        lin.spawn_number = 1;
        snprintf(lin.name, sizeof lin.name, "%.240s.s1", parent);
    }
    lin.pid = getpid();
    publish();
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

void lineage_note_file(void)
{
    lin.has_file = 1;
}

void lineage_settle(void)
{
    lin.spawn_number = 0;
    publish();
}

/* Index of DETSHIM_LINEAGE in envp, or -1. */
static int find_lineage(char *const envp[])
{
    static const char key[] = "DETSHIM_LINEAGE=";
    for (int i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], key, sizeof key - 1) == 0)
            return i;
    return -1;
}

char *const *lineage_exec_env(char *const envp[])
{
    /* A vfork child shares its parent's memory and must not allocate; its
     * image is a new process, a spawn, as the unchanged variable says. */
    if (lin.pid != getpid())
        return envp;
    int at = find_lineage(envp);
    char own[320];
    snprintf(own, sizeof own, "%s::%s", lin.name, lin.rank);
    /* Only the environment this process published names it: a copy made
     * earlier (Python's os.environ in a forked child) names the parent,
     * and the new image is then that parent's spawn. */
    if (at < 0 || strcmp(envp[at] + strlen("DETSHIM_LINEAGE="), own) != 0)
        return envp;
    int n = 0;
    while (envp[n])
        n++;
    char **copy = malloc(((size_t)n + 1) * sizeof *copy);
    char *marked = malloc(sizeof own + 64);
    if (!copy || !marked) {
        free(copy);
        free(marked);
        return envp;
    }
    snprintf(marked, sizeof own + 64, "DETSHIM_LINEAGE=%s:e%ld.%u.%d:%s", lin.name,
             (long)lin.pid, lin.forks, lin.has_file, lin.rank);
    memcpy(copy, envp, ((size_t)n + 1) * sizeof *copy);
    copy[at] = marked;
    return copy;
}

void lineage_exec_env_free(char *const *env, char *const envp[])
{
    if (env == envp)
        return;
    free(env[find_lineage(env)]);
    free((void *)env);
}
