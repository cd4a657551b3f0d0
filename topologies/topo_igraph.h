/* topo_igraph.h -- igraph's error handler for the files of topologies/ that
 * call igraph (topo_gen.c, topo_spectrum.c): record the first reason, turn
 * it into GNU style text, seed igraph's RNG.  Never included elsewhere.
 */
#ifndef TOPO_IGRAPH_H
#define TOPO_IGRAPH_H

#include <stdint.h>
#include <igraph.h>

/* Installs the recording handler (and silences warnings); returns what to
 * restore with topo_i_leave_igraph. */
typedef struct topo_i_igraph_state {
    igraph_error_handler_t   *error;
    igraph_warning_handler_t *warning;
} topo_i_igraph_state;

topo_i_igraph_state topo_i_enter_igraph(void);
void                topo_i_leave_igraph(topo_i_igraph_state previous);

/* The recorded reason of the last failure, lowercase, no full stop
 * (a static buffer). */
const char *topo_i_igraph_error_text(igraph_error_t code);

igraph_error_t topo_i_seed_igraph(uint64_t seed);

#endif
