/* cli_plot.c -- `dtsim plot DIR...`: hands the directories to the gnuplot
 * driver plots/plot.sh (from $DTSIM_PLOTS, else the source tree this binary
 * was built from), which draws the standard figures of a run or a sweep.
 * It draws nothing itself.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_plot(int argc, char **argv)
{
    if (argc == 0 || argv[0][0] == '-') {
        fprintf(stderr, "dtsim plot: error: %s\nusage: dtsim plot RUN_OR_SWEEP_DIR...\n",
                argc ? "unknown option" : "no directory given");
        return 2;
    }
    const char *dir = getenv("DTSIM_PLOTS");
    if (!dir || !*dir)
        dir = DTSIM_PLOTS_DIR;
    char script[4096];
    snprintf(script, sizeof script, "%s/plot.sh", dir);
    if (access(script, R_OK) != 0) {
        fprintf(stderr, "dtsim plot: error: %s: %s (set DTSIM_PLOTS to the plots/ directory)\n",
                script, strerror(errno));
        return 2;
    }
    char **av = calloc((size_t)argc + 3, sizeof *av);
    if (!av)
        return 1;
    av[0] = "sh";
    av[1] = script;
    for (int i = 0; i < argc; i++)
        av[i + 2] = argv[i];
    fflush(NULL);
    execvp("sh", av);
    fprintf(stderr, "dtsim plot: error: cannot run sh: %s\n", strerror(errno));
    free(av);
    return 1;
}
