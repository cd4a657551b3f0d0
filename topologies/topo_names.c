/* topo_names.c -- the names of the topology kinds and mixing rules as the
 * scenario spells them, one NULL-terminated list per enum of topo.h,
 * indexed by value, and the lookups both ways.  It builds no graph and
 * needs no igraph, so the scenario loader links it (library
 * dtsim_topo_names) without the rest of the module.
 */
#include "topo.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

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
    [TOPO_LEARNED]         = "learned",
    [TOPO_LEARNED + 1]     = NULL,
};

const char *const topo_mixing_name_list[] = {
    [TOPO_MIX_METROPOLIS]  = "metropolis_hastings",
    [TOPO_MIX_MAX_DEGREE]  = "max_degree",
    [TOPO_MIX_UNIFORM]     = "uniform",
    [TOPO_MIX_UNIFORM + 1] = NULL,
};

/* One line per name for `dtsim list`, indexed like the names (a test
 * checks that every name has one). */
const char *const topo_kind_help_list[] = {
    [TOPO_RING]            = "cycle i ~ i+1 mod n",
    [TOPO_COMPLETE]        = "every pair of nodes",
    [TOPO_TORUS2D]         = "rows x cols grid wrapping both ways (rows, cols)",
    [TOPO_ERDOS_RENYI]     = "G(n, p): each pair an edge with probability p (p)",
    [TOPO_RANDOM_REGULAR]  = "a random simple degree-regular graph (degree)",
    [TOPO_RING_LATTICE]    = "each node linked to its k nearest on each side (k)",
    [TOPO_TORUS3D]         = "rows x cols x layers grid wrapping every way (rows, cols, layers)",
    [TOPO_HYPERCUBE]       = "i ~ i xor 2^b (n a power of two)",
    [TOPO_STAR]            = "node 0 linked to every other node",
    [TOPO_BINARY_TREE]     = "node i's children are 2i+1 and 2i+2",
    [TOPO_WATTS_STROGATZ]  = "ring lattice with endpoints rewired with probability beta (k, beta)",
    [TOPO_BARABASI_ALBERT] = "preferential attachment, m edges per new node (m)",
    [TOPO_EXPONENTIAL]     = "static exponential graph i ~ i + 2^j mod n",
    [TOPO_EDGE_LIST]       = "the edges of a file of \"u v\" lines (file)",
    [TOPO_LEARNED]         = "STL-FW: sparse W minimising label heterogeneity (degree, lambda)",
    [TOPO_LEARNED + 1]     = NULL,
};

const char *const topo_mixing_help_list[] = {
    [TOPO_MIX_METROPOLIS]  = "W_ij = 1 / (1 + max(d_i, d_j)), the rest on the diagonal",
    [TOPO_MIX_MAX_DEGREE]  = "W_ij = 1 / (1 + d_max), the rest on the diagonal",
    [TOPO_MIX_UNIFORM]     = "W_ij = 1 / d_i (doubly stochastic on regular graphs)",
    [TOPO_MIX_UNIFORM + 1] = NULL,
};

#define N_KINDS ((int)(sizeof topo_kind_name_list / sizeof topo_kind_name_list[0]) - 1)
#define N_MIXINGS ((int)(sizeof topo_mixing_name_list / sizeof topo_mixing_name_list[0]) - 1)

static int find(const char *const *list, int n, const char *name)
{
    if (name == NULL)
        return -1;
    for (int k = 0; k < n; k++)
        if (strcmp(name, list[k]) == 0)
            return k;
    return -1;
}

/* "a, b, c" of a list, built once. */
static const char *join(const char *const *list, int n, char *buf, size_t size)
{
    if (!buf[0]) {
        size_t len = 0;
        for (int k = 0; k < n && len < size; k++)
            len += (size_t)snprintf(buf + len, size - len, "%s%s", k ? ", " : "", list[k]);
    }
    return buf;
}

const char *topo_kind_name(topo_kind k)
{
    return (int)k < 0 || (int)k >= N_KINDS ? "unknown" : topo_kind_name_list[k];
}

int topo_kind_from_name(const char *name) { return find(topo_kind_name_list, N_KINDS, name); }

const char *topo_kind_names(void)
{
    static char buf[256];
    return join(topo_kind_name_list, N_KINDS, buf, sizeof buf);
}

/* "?" for an unknown value, so callers can test the first character. */
const char *topo_mixing_name(topo_mixing m)
{
    return (int)m < 0 || (int)m >= N_MIXINGS ? "?" : topo_mixing_name_list[m];
}

int topo_mixing_from_name(const char *name)
{
    return find(topo_mixing_name_list, N_MIXINGS, name);
}

const char *topo_mixing_names(void)
{
    static char buf[128];
    return join(topo_mixing_name_list, N_MIXINGS, buf, sizeof buf);
}
