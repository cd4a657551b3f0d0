/* topo_igraph.c -- the error plumbing of topologies/: formatting into a
 * caller's error buffer, igraph's error and warning handlers (the first
 * reason recorded, turned into GNU style text), and seeding igraph's RNG.
 * It builds no graph, and it is not thread-safe: igraph's RNG and error
 * handler are process-wide.
 */
#include "topo_igraph.h"
#include "topo_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void topo_i_set_error(char *err, size_t err_size, const char *fmt, ...)
{
    if (err == NULL || err_size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
}

/* igraph calls its error handler once at the failing site with the real
 * reason, then once per unwinding level with an empty one; keep the first
 * non-empty reason.  The handler must free igraph's temporaries and return
 * (igraph's rule); we then see the error code returned by the call. */
static char recorded_reason[256];

static void record_igraph_error(const char *reason, const char *file, int line,
                                igraph_error_t code)
{
    (void)file;
    (void)line;
    (void)code;
    if (recorded_reason[0] == '\0' && reason != NULL && reason[0] != '\0')
        snprintf(recorded_reason, sizeof recorded_reason, "%s", reason);
    IGRAPH_FINALLY_FREE();
}

/* ARPACK reports slow convergence as a warning; the caller sees the
 * result's info instead, and nothing is printed behind the user's back. */
static void ignore_warning(const char *reason, const char *file, int line)
{
    (void)reason;
    (void)file;
    (void)line;
}

topo_i_igraph_state topo_i_enter_igraph(void)
{
    recorded_reason[0] = '\0';
    topo_i_igraph_state st = { igraph_set_error_handler(record_igraph_error),
                               igraph_set_warning_handler(ignore_warning) };
    return st;
}

void topo_i_leave_igraph(topo_i_igraph_state previous)
{
    igraph_set_error_handler(previous.error);
    igraph_set_warning_handler(previous.warning);
}

/* igraph's reasons read like sentences ("Invalid number of vertices.");
 * ours are GNU style: lowercase first letter, no trailing full stop. */
const char *topo_i_igraph_error_text(igraph_error_t code)
{
    static char msg[sizeof recorded_reason];
    if (code == IGRAPH_ENOMEM)
        return "out of memory";
    snprintf(msg, sizeof msg, "%s",
             recorded_reason[0] != '\0' ? recorded_reason : igraph_strerror(code));
    size_t len = strlen(msg);
    while (len > 0 && (msg[len - 1] == '.' || isspace((unsigned char)msg[len - 1])))
        msg[--len] = '\0';
    if (len > 1 && isupper((unsigned char)msg[0]) && !isupper((unsigned char)msg[1]))
        msg[0] = (char)tolower((unsigned char)msg[0]);
    return msg;
}

/* igraph_uint_t is 64 bits on this build and PCG32, igraph 0.10's default,
 * uses all of them; on a 32-bit igraph fold the halves together. */
igraph_error_t topo_i_seed_igraph(uint64_t seed)
{
    igraph_uint_t s = (igraph_uint_t)seed;
    if (sizeof(igraph_uint_t) < sizeof(uint64_t))
        s = (igraph_uint_t)(seed ^ (seed >> 32));
    return igraph_rng_seed(igraph_rng_default(), s);
}
