/* swp_mpi.c -- a sweep across the ranks of `mpirun -n P dtsim sweep ...`,
 * built only when CMake finds MPI.  Rank 0 prepares the folder and hands
 * out runs one at a time to whichever rank asks (dynamic load balancing:
 * a rank that drew short runs simply asks more often); ranks 1..P-1 run
 * them in their own process, exactly as a forked worker would, into the
 * same folder, so everything that holds for a sweep (atomic run folders,
 * resume, shards, byte-identical sweep.csv) holds here too.  Rank 0 only
 * dispatches.  It does not gather the tables (rank 0's caller does).
 */
#include "swp.h"
#include "swp_internal.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_ASK = 1, TAG_RUN = 2 };

int swp_mpi_begin(int *rank, int *size)
{
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return -1;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}

void swp_mpi_end(void) { MPI_Finalize(); }

/* Rank 0: answers every request with the next run (an index) or -1; a
 * request carries the outcome of the asker's previous run. */
static void dispatch(const swp_plan *pl, const size_t *todo, size_t n_todo, int size,
                     const swp_exec_options *opt, swp_exec_result *res)
{
    out_progress pg;
    out_progress_init(&pg, stderr, opt->progress_s);
    size_t next = 0, running = 0;
    int workers = size - 1;
    swp_i_draw(&pg, res, running, 1);
    while (workers > 0) {
        int msg[2];
        MPI_Status st;
        MPI_Recv(msg, 2, MPI_INT, MPI_ANY_SOURCE, TAG_ASK, MPI_COMM_WORLD, &st);
        if (msg[0] >= 0) {
            running--;
            if (msg[1] == 0) {
                res->done++;
            } else {
                res->failed++;
                out_progress_end(&pg);
                fprintf(stderr, "dtsim sweep: error: run %s failed on rank %d (status %d)\n",
                        pl->runs[msg[0]].name, st.MPI_SOURCE, msg[1]);
            }
        }
        int stop = opt->interrupt && *opt->interrupt;
        if (stop)
            res->interrupted = 1;
        int run = -1;
        if (!stop && next < n_todo) {
            run = (int)todo[next++];
            running++;
        } else {
            workers--;
        }
        MPI_Send(&run, 1, MPI_INT, st.MPI_SOURCE, TAG_RUN, MPI_COMM_WORLD);
        swp_i_draw(&pg, res, running, msg[0] >= 0);
    }
    out_progress_end(&pg);
}

static void work(const swp_spec *spec, const swp_plan *pl, const char *dir, const char *host,
                 int threads)
{
    int msg[2] = { -1, 0 };
    for (;;) {
        int run;
        MPI_Send(msg, 2, MPI_INT, 0, TAG_ASK, MPI_COMM_WORLD);
        MPI_Recv(&run, 1, MPI_INT, 0, TAG_RUN, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (run < 0)
            return;
        msg[0] = run;
        msg[1] = swp_i_run_one(spec, pl, &pl->runs[run], dir, host, threads);
    }
}

int swp_execute_mpi(const swp_spec *spec, const swp_plan *pl, const swp_exec_options *opt,
                    int rank, int size, swp_exec_result *res, char *err, size_t es)
{
    const char *dir = opt->out_dir;
    char host[256];
    int ok = 1;
    memset(res, 0, sizeof *res);
    if (rank == 0 && swp_i_prepare_dir(spec, pl, dir, opt->force, host, sizeof host, err, es) != 0)
        ok = 0;
    /* the folder exists (or is refused) before any rank writes into it */
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
        if (rank != 0)
            snprintf(err, es, "dtsim sweep: rank %d: rank 0 refused the folder", rank);
        return -1;
    }
    if (rank != 0) {
        swp_i_host_name(host, sizeof host);
        work(spec, pl, dir, host, opt->threads);
        return 0;
    }
    int k = opt->shard_n > 0 ? opt->shard_k : 1, n = opt->shard_n > 0 ? opt->shard_n : 1;
    size_t *todo = malloc((pl->n_runs ? pl->n_runs : 1) * sizeof *todo);
    if (!todo) {
        snprintf(err, es, "dtsim sweep: error: out of memory");
        ok = 0;
    }
    size_t n_todo = todo ? swp_i_todo(pl, dir, k, n, todo, res) : 0;
    dispatch(pl, todo, n_todo, size, opt, res);  /* also stops the workers */
    free(todo);
    return ok ? 0 : -1;
}
