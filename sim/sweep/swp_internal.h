/* swp_internal.h -- what the files of the sweep module share and nobody
 * else sees: preparing the sweep folder, the list of runs still to do, one
 * run in the calling process, and the progress line.  Used by the
 * fork-based pool (swp_exec.c) and the MPI one (swp_mpi.c).
 */
#ifndef SWP_INTERNAL_H
#define SWP_INTERNAL_H

#include "swp.h"
#include "out.h"

/* Creates DIR/runs and writes sweep.json and runs.csv, or checks them: a
 * folder of the same sweep resumes; one of another plan or another binary
 * is adopted by swp_i_adopt or refused.  host receives this host's name. */
int    swp_i_prepare_dir(const swp_spec *spec, const swp_plan *pl, const char *dir, int force,
                         char *host, size_t host_size, char *err, size_t err_size);
/* The folder dir holds another sweep.json (old, its text) or runs.csv than
 * pl's: adopts it when every completed run in it is a run of pl (the same
 * resolved scenario and seed) and the binary is the same or force is set;
 * renames those runs to their names in pl and writes pl's sweep.json and
 * runs.csv (each run's git_commit the commit of the binary that made it).
 * 0, or -1 with err set (exit status 2). */
int    swp_i_adopt(const swp_spec *spec, const swp_plan *pl, const char *dir, const char *old,
                   int force, char *err, size_t err_size);
/* Moves runs/.keep.NAME (an adoption cut short) to runs/NAME for every NAME
 * of pl not complete under its own name. */
void   swp_i_finish_adopt(const swp_plan *pl, const char *dir);
/* runs.csv's text for pl with commits[i] (NULL: commit) as run i's
 * git_commit; NULL when out of memory.  The caller frees it. */
char  *swp_i_render_runs(const swp_plan *pl, const char *const *commits, const char *commit);
/* The whole text of the file at path, NUL-terminated (NULL when absent,
 * unreadable or out of memory); the caller frees it (swp_exec.c). */
char  *swp_i_read_file(const char *path);
/* Whether runs/NAME under dir holds a complete run (run.json and summary.csv). */
int    swp_i_complete(const char *dir, const char *name);
size_t swp_i_todo(const swp_plan *pl, const char *dir, int shard_k, int shard_n, size_t *todo,
                  swp_exec_result *res);
/* threads: the run's run_options.threads */
int    swp_i_run_one(const swp_spec *spec, const swp_plan *pl, const swp_run *run,
                     const char *dir, const char *host, int threads);
void   swp_i_remove_part(const char *dir, long pid, const char *name, const char *host);
/* gethostname with / and @ replaced: part of the hidden folders' names */
void   swp_i_host_name(char *buf, size_t size);
void   swp_i_draw(out_progress *pg, const swp_exec_result *res, size_t running, int force);

#endif
