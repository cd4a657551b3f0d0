/* cli_signal.c -- Ctrl-C and SIGTERM for long commands: the first SIGINT
 * or SIGTERM sets a flag (to the signal's number) that the run loop and the
 * sweep's worker pool read, so they stop cleanly and keep what was
 * measured; a second one kills as usual.  Nothing else is done inside the
 * handler.
 */
#include "cli.h"

#include <string.h>

volatile sig_atomic_t cli_interrupted = 0;

static void on_sigint(int sig)
{
    cli_interrupted = sig;
}

void cli_interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    /* no SA_RESTART: waitpid returns EINTR so the sweep notices at once */
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int cli_exit_interrupted(void)
{
    return 128 + (cli_interrupted ? (int)cli_interrupted : SIGINT);
}
