/* cli_signal.c -- Ctrl-C for long commands: the first SIGINT sets a flag
 * that the run loop and the sweep's worker pool read, so they stop cleanly
 * and keep what was measured; the second one kills as usual.  Nothing
 * else is done inside the handler.
 */
#include "cli.h"

#include <string.h>

volatile sig_atomic_t cli_interrupted = 0;

static void on_sigint(int sig)
{
    (void)sig;
    cli_interrupted = 1;
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
}
