/* cli.h -- what the files of the dtsim command line share: the SIGINT flag
 * and the subcommands that live outside main.c.  Each subcommand returns
 * the process's exit status.
 */
#ifndef CLI_H
#define CLI_H

#include <signal.h>

/* Set to the signal's number by the SIGINT and SIGTERM handler
 * cli_interrupt_install puts in place.  The handler is installed once
 * (SA_RESETHAND): a second Ctrl-C or SIGTERM kills. */
extern volatile sig_atomic_t cli_interrupted;
void cli_interrupt_install(void);

/* Exit status of a command ended by a signal, as shells report it: 130
 * after SIGINT, 143 after SIGTERM. */
int cli_exit_interrupted(void);

int cli_sweep(int argc, char **argv);
int cli_merge(int argc, char **argv);
int cli_plot(int argc, char **argv);

#endif
