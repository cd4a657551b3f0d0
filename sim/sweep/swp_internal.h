/* swp_internal.h -- what the files of the sweep module share and nobody
 * else sees: preparing the sweep folder, the list of runs still to do, one
 * run in the calling process, and the progress line.  Used by the
 * fork-based pool (swp_exec.c) and the MPI one (swp_mpi.c).
 */
#ifndef SWP_INTERNAL_H
#define SWP_INTERNAL_H

#include "swp.h"
#include "out.h"

int    swp_i_prepare_dir(const swp_plan *pl, const char *dir, char *host, size_t host_size,
                         char *err, size_t err_size);
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
