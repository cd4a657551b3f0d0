/* topo_names.c -- the names of the topology kinds and mixing rules as the
 * scenario spells them, one NULL-terminated list per enum of topo.h,
 * indexed by value.  It is data only: it builds no graph and needs no
 * igraph, so the scenario loader links it (library dtsim_topo_names)
 * without the rest of the module.
 */
#include "topo.h"

#include <stddef.h>

const char *const topo_kind_name_list[] = {
    [TOPO_RING]            = "ring",
    [TOPO_COMPLETE]        = "complete",
    [TOPO_TORUS2D]         = "torus2d",
    [TOPO_ERDOS_RENYI]     = "erdos_renyi",
    [TOPO_RANDOM_REGULAR]  = "random_regular",
    [TOPO_RING_LATTICE]    = "ring_lattice",
    [TOPO_TORUS3D]         = "torus3d",
    [TOPO_HYPERCUBE]       = "hypercube",
    [TOPO_STAR]            = "star",
    [TOPO_BINARY_TREE]     = "binary_tree",
    [TOPO_WATTS_STROGATZ]  = "watts_strogatz",
    [TOPO_BARABASI_ALBERT] = "barabasi_albert",
    [TOPO_EXPONENTIAL]     = "exponential",
    [TOPO_EDGE_LIST]       = "edge_list",
    [TOPO_EDGE_LIST + 1]   = NULL,
};

const char *const topo_mixing_name_list[] = {
    [TOPO_MIX_METROPOLIS]  = "metropolis_hastings",
    [TOPO_MIX_MAX_DEGREE]  = "max_degree",
    [TOPO_MIX_UNIFORM]     = "uniform",
    [TOPO_MIX_UNIFORM + 1] = NULL,
};
