/* topo_igraph.h -- igraph's error handler for the files of topologies/ that
 * call igraph (topo_gen.c, topo_build.c, topo_spectrum.c): record the first
 * reason, turn it into GNU style text, seed igraph's RNG (topo_igraph.c);
 * and the generator of a spec's graph (topo_gen.c).  Never included
 * elsewhere.
 */
#ifndef TOPO_IGRAPH_H
#define TOPO_IGRAPH_H

#include "topo.h"

#include <stddef.h>
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

/* The graph of a spec that passed topo_i_check_spec, seeded with seed when
 * the kind is random; the caller destroys *graph on success.  Returns an
 * igraph code; a bad edge-list file is reported through err and
 * IGRAPH_EINVAL with *file_error set. */
igraph_error_t topo_i_generate(igraph_t *graph, const topo_spec *spec, uint64_t seed,
                               int *file_error, char *err, size_t err_size);

/* An undirected graph of n nodes from m pairs uv[2e], uv[2e + 1]. */
igraph_error_t topo_i_graph_from_pairs(igraph_t *graph, int n, const int *uv, size_t m);

#endif
