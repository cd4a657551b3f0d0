/* cli_plot.c -- `dtsim plot DIR...`: checks its arguments and hands the
 * directories to the gnuplot driver plots/plot.sh (from $DTSIM_PLOTS, else
 * the source tree this binary was built from, else the installed copy),
 * which draws the standard figures of a run or a sweep.  It draws nothing
 * itself.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_plot(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (cli_std_option("plot", argv[i]) == 0)
            return 0;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_usage_error("plot", "unknown option '%s'", argv[i]);
    }
    if (argc == 0)
        return cli_usage_error("plot", "no directory given");
    const char *dir = getenv("DTSIM_PLOTS");
    char script[4096];
    if (dir && *dir) {
        snprintf(script, sizeof script, "%s/plot.sh", dir);
    } else {
        snprintf(script, sizeof script, "%s/plot.sh", DTSIM_PLOTS_DIR);
        if (access(script, R_OK) != 0)
            snprintf(script, sizeof script, "%s/plot.sh", DTSIM_PLOTS_INSTALL_DIR);
    }
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
