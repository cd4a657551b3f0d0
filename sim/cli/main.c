/* main.c -- the dtsim executable: sets OpenBLAS to one thread, hands the
 * command line to the subcommand table (cli_help.c) and checks that what
 * went to stdout was written.  Exit status: 0 success, 1 a run that
 * failed (stalled, diverged, stopped by the watchdog, out of memory,
 * output not written, stdout lost), 2 bad usage or a bad scenario, 130
 * (143) a run ended by Ctrl-C (SIGTERM).  The subcommands live in
 * cli_run.c (run, validate, resolve), cli_topo.c, cli_sweep.c (sweep,
 * merge), cli_plot.c and cli_help.c (help, --version).
 */
#include "cli.h"

#include <stdlib.h>

#if DTSIM_OPENBLAS
void openblas_set_num_threads(int n);   /* OpenBLAS's own API (cblas.h) */
int  blas_thread_shutdown_(void);       /* exported by libopenblas, not in cblas.h */

/* OpenBLAS's constructor starts its worker threads (one per core but one)
 * unless OPENBLAS_NUM_THREADS says 1.  In the static executable a
 * constructor with a priority runs before those without, OpenBLAS's among
 * them, so this one sets the variable first when the user has not: no
 * thread is created and none spins (0.0009 against 0.0013 CPU-s for
 * --version; bench/RESULTS.md, "The fair network at 64 nodes, again").
 * main takes it out of the environment again, so what dtsim runs (plot
 * scripts, sweep workers) sees the user's environment.  With the shared
 * library OpenBLAS's constructor runs first: main's shutdown below. */
static int blas_env_set;

__attribute__((constructor(101))) static void blas_one_thread(void)
{
    if (!getenv("OPENBLAS_NUM_THREADS") && setenv("OPENBLAS_NUM_THREADS", "1", 0) == 0)
        blas_env_set = 1;
}
#endif

int main(int argc, char **argv)
{
#if DTSIM_OPENBLAS
    /* A simulation is one thread: the model matrices are small, a second
     * OpenBLAS thread only spins on the other core (measured: the MLP
     * scenario 46 s on one thread, 75 s with the default), and sweeps get
     * their parallelism from worker processes (and a run's from its own
     * pool, --threads).  One thread is not enough: the pthread build
     * starts its workers when the library loads and each spins for about
     * 2^28 cycles (0.1 CPU-s here) before it sleeps, whatever the number
     * of threads set afterwards, in every process, timing-only runs too.
     * Shutting the idle pool down ends the spin; with one thread OpenBLAS
     * never starts it again (bench/RESULTS.md, "Fixed costs"). */
    openblas_set_num_threads(1);
    blas_thread_shutdown_();
    if (blas_env_set)
        unsetenv("OPENBLAS_NUM_THREADS");
#endif
    int rc = cli_dispatch(argc, argv);
    int wrc = cli_close_stdout();
    return rc == 0 ? wrc : rc;
}
