/* Process lineage: the deterministic name of this process within a run
 * (main, rank<N>, <parent>.f<k>, <name>.e, <parent>.s<k>), used to name
 * trace files and to key the streams of pinned randomness, so that two
 * runs' processes pair up and forked children get streams of their own.
 */
#ifndef DETSHIM_LINEAGE_H
#define DETSHIM_LINEAGE_H

/* Decides this process's name from DETSHIM_LINEAGE and the rank variables,
 * publishes it for children and registers the fork handler. Once, from
 * core_init. */
void lineage_start(void);
/* Fork handlers, called by the lifecycle (shim/life/lifecycle.c): the
 * parent counts its forks; the child takes the next name. */
void lineage_fork_prepare(void);
void lineage_fork_child(void);
const char *lineage_name(void);
/* 1 for the first process of a run (or of a rank): no parent under the shim. */
int lineage_is_first(void);
/* The rank from RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID, or "". */
const char *lineage_rank(void);
/* A spawned child's number is provisional until it is settled: the trace
 * moves to the next number when a sibling already took this one. */
int lineage_provisional(void);
void lineage_next_spawn_number(void);
void lineage_settle(void);
/* The trace wrote this image's file under lineage_name(): an image it
 * execs into must take another name. */
void lineage_note_file(void);
/* The environment to hand an exec'd image: envp itself, or, when envp
 * holds this process's own DETSHIM_LINEAGE, a malloc'd copy marking the
 * exec so the new image (same pid) is named <name>.e. A vfork child always
 * gets envp. Release it with lineage_exec_env_free(env, envp) if exec
 * returns. */
char *const *lineage_exec_env(char *const envp[]);
void lineage_exec_env_free(char *const *env, char *const envp[]);

#endif
