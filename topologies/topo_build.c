/* topo_build.c -- turns a topo_spec into a topo_graph: generates the graph
 * (topo_gen.c), checks that it is a connected simple graph, and converts it
 * into sorted neighbour lists (CSR) with mixing weights (topo_mixing.c) and
 * a bipartition when one exists; a learned kind's graph is the support of
 * the W that topo_learn.c learns, with W's own weights.  It does not know
 * what a kind means, and
 * it is not thread-safe, because igraph's RNG and error handler are
 * process-wide.
 */
#include "topo.h"
#include "topo_igraph.h"
#include "topo_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

static void fail_igraph(char *err, size_t err_size, const char *name, const char *params,
                        igraph_error_t code)
{
    topo_i_set_error(err, err_size, "%s graph with %s: %s%s", name, params,
                     code == IGRAPH_ENOMEM ? "" : "igraph: ", topo_i_igraph_error_text(code));
}

/* ---- conversion -------------------------------------------------------- */

/* Sides 0/1 with node 0 on side 0; a connected bipartite graph has exactly
 * two such colourings, so the result does not depend on igraph's search. */
static igraph_error_t fill_bipartition(topo_graph *g, const igraph_t *graph)
{
    igraph_vector_bool_t types;
    igraph_bool_t is_bip = false;
    igraph_error_t rc = igraph_vector_bool_init(&types, 0);
    if (rc != IGRAPH_SUCCESS)
        return rc;
    rc = igraph_is_bipartite(graph, &is_bip, &types);
    if (rc != IGRAPH_SUCCESS)
        goto out_free_types;
    g->bipartite = is_bip ? 1 : 0;
    if (is_bip) {
        g->side = malloc((size_t)g->n * sizeof *g->side);
        if (g->side == NULL) {
            rc = IGRAPH_ENOMEM;
            goto out_free_types;
        }
        int flip = VECTOR(types)[0] ? 1 : 0;
        for (int i = 0; i < g->n; i++)
            g->side[i] = (VECTOR(types)[i] ? 1 : 0) ^ flip;
    }
out_free_types:
    igraph_vector_bool_destroy(&types);
    return rc;
}

/* The first node (in index order) outside node 0's component. */
static int first_unreached(const igraph_vector_int_t *membership)
{
    igraph_integer_t n = igraph_vector_int_size(membership);
    for (igraph_integer_t i = 1; i < n; i++)
        if (VECTOR(*membership)[i] != VECTOR(*membership)[0])
            return (int)i;
    return 0;
}

topo_graph *topo_build(const topo_spec *spec, uint64_t seed, char *err, size_t err_size)
{
    assert(spec != NULL);
    if (err != NULL && err_size > 0)
        err[0] = '\0';
    if (topo_i_check_spec(spec, err, err_size) != 0)
        return NULL;

    const char *name = topo_kind_name(spec->kind);
    char params[4200];
    topo_i_describe(spec, params, sizeof params);

    topo_graph *result = NULL;
    topo_graph *g = calloc(1, sizeof *g);
    if (g == NULL) {
        topo_i_set_error(err, err_size, "%s graph with %s: out of memory", name, params);
        return NULL;
    }
    g->n = spec->n;
    g->mixing = spec->mixing;
    g->lazy_alpha = spec->lazy_alpha;
    g->gen_kind = (int)spec->kind + 1;
    g->gen_dims[0] = spec->kind == TOPO_TORUS2D || spec->kind == TOPO_TORUS3D ? spec->rows : spec->n;
    g->gen_dims[1] = spec->cols;
    g->gen_dims[2] = spec->layers;
    if (spec->kind == TOPO_HYPERCUBE)
        for (g->gen_dims[0] = 0; (1 << g->gen_dims[0]) < spec->n; g->gen_dims[0]++)
            ;

    topo_i_igraph_state previous = topo_i_enter_igraph();
    igraph_t graph;
    igraph_vector_int_t edges, membership;
    igraph_integer_t n_comp = 0;
    int file_error = 0;
    topo_learn learned = { 0 };
    igraph_error_t rc;
    if (spec->kind == TOPO_LEARNED) {
        int *pairs = NULL;
        size_t m = 0;
        if (topo_learn_stlfw(spec->label_props, spec->n, spec->n_labels, spec->lambda,
                             spec->degree, TOPO_LEARN_MAX_ITER, &learned, err, err_size) != 0)
            goto out_free_g;
        if (topo_i_learned_edges(&learned, &pairs, &m) != 0) {
            fail_igraph(err, err_size, name, params, IGRAPH_ENOMEM);
            goto out_free_g;
        }
        rc = topo_i_graph_from_pairs(&graph, spec->n, pairs, m);
        free(pairs);
    } else {
        rc = topo_i_generate(&graph, spec, seed, &file_error, err, err_size);
    }
    if (rc != IGRAPH_SUCCESS) {
        if (!file_error)
            fail_igraph(err, err_size, name, params, rc);
        goto out_free_g;
    }
    rc = igraph_vector_int_init(&membership, 0);
    if (rc != IGRAPH_SUCCESS) {
        fail_igraph(err, err_size, name, params, rc);
        goto out_free_graph;
    }
    rc = igraph_connected_components(&graph, &membership, NULL, &n_comp, IGRAPH_WEAK);
    int unreached = rc == IGRAPH_SUCCESS ? first_unreached(&membership) : 0;
    igraph_vector_int_destroy(&membership);
    if (rc != IGRAPH_SUCCESS) {
        fail_igraph(err, err_size, name, params, rc);
        goto out_free_graph;
    }
    if (n_comp > 1) {
        char advice[64] = "";
        if (spec->kind == TOPO_ERDOS_RENYI)
            snprintf(advice, sizeof advice, "; raise p");
        else if (spec->kind == TOPO_RANDOM_REGULAR)
            snprintf(advice, sizeof advice, "; raise degree");
        else if (spec->kind == TOPO_WATTS_STROGATZ)
            snprintf(advice, sizeof advice, "; lower beta or raise k");
        else if (spec->kind == TOPO_EDGE_LIST)
            snprintf(advice, sizeof advice, "; node %d cannot reach node 0", unreached);
        else if (spec->kind == TOPO_LEARNED)
            snprintf(advice, sizeof advice, "; raise degree");
        topo_i_set_error(err, err_size, "%s graph with %s is disconnected (%lld components)%s",
                         name, params, (long long)n_comp, advice);
        goto out_free_graph;
    }
    rc = igraph_vector_int_init(&edges, 0);
    if (rc != IGRAPH_SUCCESS) {
        fail_igraph(err, err_size, name, params, rc);
        goto out_free_graph;
    }
    rc = igraph_get_edgelist(&graph, &edges, false);
    if (rc != IGRAPH_SUCCESS) {
        igraph_vector_int_destroy(&edges);
        fail_igraph(err, err_size, name, params, rc);
        goto out_free_graph;
    }
    int *uv = malloc(((size_t)igraph_vector_int_size(&edges) + 1) * sizeof *uv);
    int csr = -1;
    if (uv != NULL) {
        for (igraph_integer_t e = 0; e < igraph_vector_int_size(&edges); e++)
            uv[e] = (int)VECTOR(edges)[e];
        csr = topo_i_fill_csr(g, uv, (size_t)igraph_vector_int_size(&edges) / 2);
        free(uv);
    }
    igraph_vector_int_destroy(&edges);
    if (csr == -2) {
        topo_i_set_error(err, err_size, "%s graph with %s has a self-loop or multiple edge",
                         name, params);
        goto out_free_graph;
    }
    if (csr != 0 || (spec->kind == TOPO_LEARNED ? topo_i_learned_weights(g, &learned)
                                                : topo_i_fill_weights(g)) != 0) {
        topo_i_set_error(err, err_size, "%s graph with %s: out of memory", name, params);
        goto out_free_graph;
    }
    rc = fill_bipartition(g, &graph);
    if (rc != IGRAPH_SUCCESS) {
        fail_igraph(err, err_size, name, params, rc);
        goto out_free_graph;
    }
    if (topo_i_oscillates(g)) {
        topo_i_set_error(err, err_size,
                         "%s mixing on the %s graph with %s oscillates: the graph is bipartite "
                         "and no node keeps weight on itself, so the mixing matrix has "
                         "eigenvalue -1 and consensus never converges; set lazy_alpha > 0 or "
                         "use metropolis_hastings", topo_mixing_name(g->mixing), name, params);
        goto out_free_graph;
    }
    result = g;
    g = NULL;

out_free_graph:
    igraph_destroy(&graph);
out_free_g:
    topo_i_leave_igraph(previous);
    topo_learn_fini(&learned);
    topo_destroy(g);
    return result;
}

void topo_destroy(topo_graph *g)
{
    if (g == NULL)
        return;
    free(g->side);
    free(g->learn_objective);
    free(g->self_w);
    free(g->w);
    free(g->nbr);
    free(g->off);
    free(g);
}
