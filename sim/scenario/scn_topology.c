/* scn_topology.c -- the topology section of a scenario: the kind (the
 * names of topologies/topo.h), each kind's own keys and their range rules
 * against the node count, the mixing rule and laziness, an edge-list
 * file resolved relative to the scenario, and the learned kind's budget and
 * lambda (its need for labelled data is checked once the model and data
 * are read: scn_i_v_topology_data).  It checks that a graph can
 * exist; it builds none (topologies/ does, for the runner).
 */
#include "scn_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A file named in the scenario is relative to the scenario's directory
 * (like an include), unless absolute or the scenario came from a string. */
static int scenario_relative(scn_ctx *c, char **dst, const char *scenario, const char *file)
{
    const char *slash = strrchr(scenario, '/');
    if (file[0] == '/' || slash == NULL || scenario[0] == '<')
        return scn_i_set_str(c, dst, file);
    size_t dir = (size_t)(slash - scenario) + 1, len = strlen(file);
    char *p = malloc(dir + len + 1);
    if (!p)
        return scn_i_fail_oom(c);
    memcpy(p, scenario, dir);
    memcpy(p + dir, file, len + 1);
    free(*dst);
    *dst = p;
    return 0;
}

/* A number at obj[key] in [0, 1) (upper_open) or [0, 1]. */
static int opt_fraction(scn_ctx *c, json_t *o, const char *p, const char *key, int upper_open,
                        double *out)
{
    char kp[PTR_MAX];
    if (scn_i_opt_num(c, o, p, key, GE0, out, NULL))
        return -1;
    scn_i_ptr_key(kp, p, key);
    if (upper_open ? !(*out < 1.0) : !(*out <= 1.0))
        return scn_i_fail(c, kp, "must be in [0, 1%s, got %g", upper_open ? ")" : "]", *out);
    return 0;
}

int scn_i_v_topology(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"kind", "rows", "cols", "layers", "p", "degree", "k",
                                       "beta", "m", "file", "mixing", "lazy_alpha", "lambda",
                                       NULL};
    const char *const *kinds = topo_kind_name_list, *const *mixings = topo_mixing_name_list;
#define MIX "mixing", "lazy_alpha"
    static const char *const per_kind[][7] = {
        [TOPO_RING] = {"kind", MIX, NULL},
        [TOPO_COMPLETE] = {"kind", MIX, NULL},
        [TOPO_TORUS2D] = {"kind", "rows", "cols", MIX, NULL},
        [TOPO_ERDOS_RENYI] = {"kind", "p", MIX, NULL},
        [TOPO_RANDOM_REGULAR] = {"kind", "degree", MIX, NULL},
        [TOPO_RING_LATTICE] = {"kind", "k", MIX, NULL},
        [TOPO_TORUS3D] = {"kind", "rows", "cols", "layers", MIX, NULL},
        [TOPO_HYPERCUBE] = {"kind", MIX, NULL},
        [TOPO_STAR] = {"kind", MIX, NULL},
        [TOPO_BINARY_TREE] = {"kind", MIX, NULL},
        [TOPO_WATTS_STROGATZ] = {"kind", "k", "beta", MIX, NULL},
        [TOPO_BARABASI_ALBERT] = {"kind", "m", MIX, NULL},
        [TOPO_EXPONENTIAL] = {"kind", MIX, NULL},
        [TOPO_EDGE_LIST] = {"kind", "file", MIX, NULL},
        [TOPO_LEARNED] = {"kind", "degree", "lambda", NULL},   /* W is learned */
    };
#undef MIX
    char p[PTR_MAX], kp[PTR_MAX], why[64];
    const char *kind = "ring", *mixing = "metropolis_hastings", *file = NULL;
    long long rows = 0, cols = 0, layers = 0, degree = 0, k = 0, m = 0, n = s->n_nodes;
    json_t *o;
    int ki, mi;

    s->topo_lazy_alpha = 0.0;
    s->topo_beta = 0.0;
    s->topo_lambda = TOPO_LEARN_LAMBDA;
    if (scn_i_opt_obj(c, root, "", "topology", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_str(c, o, p, "kind", &kind, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "kind");
    if ((ki = scn_i_lookup(c, kp, "topology", kind, kinds)) < 0 ||
        scn_i_kind_keys(c, o, p, per_kind[ki], "kind", kind))
        return -1;
    if (scn_i_opt_str(c, o, p, "mixing", &mixing, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "mixing");
    if ((mi = scn_i_lookup(c, kp, "mixing", mixing, mixings)) < 0 ||
        opt_fraction(c, o, p, "lazy_alpha", 1, &s->topo_lazy_alpha))
        return -1;
    snprintf(why, sizeof why, "for kind \"%s\"", kind);
    switch (ki) {
    case TOPO_TORUS2D:
        if (scn_i_need_key(c, o, p, "rows", why) || scn_i_need_key(c, o, p, "cols", why) ||
            scn_i_opt_int(c, o, p, "rows", 1, INT_MAX, &rows, NULL) ||
            scn_i_opt_int(c, o, p, "cols", 1, INT_MAX, &cols, NULL))
            return -1;
        if (rows * cols != n)
            return scn_i_fail(c, p, "rows * cols must equal nodes (%lld), got %lld * %lld = %lld",
                        n, rows, cols, rows * cols);
        break;
    case TOPO_TORUS3D:
        if (scn_i_need_key(c, o, p, "rows", why) || scn_i_need_key(c, o, p, "cols", why) ||
            scn_i_need_key(c, o, p, "layers", why) ||
            scn_i_opt_int(c, o, p, "rows", 1, INT_MAX, &rows, NULL) ||
            scn_i_opt_int(c, o, p, "cols", 1, INT_MAX, &cols, NULL) ||
            scn_i_opt_int(c, o, p, "layers", 1, INT_MAX, &layers, NULL))
            return -1;
        if (rows * cols > n || rows * cols * layers != n)
            return scn_i_fail(c, p, "rows * cols * layers must equal nodes (%lld), got %lld * "
                              "%lld * %lld", n, rows, cols, layers);
        break;
    case TOPO_ERDOS_RENYI:
        if (scn_i_need_key(c, o, p, "p", why) || scn_i_opt_num(c, o, p, "p", UNIT, &s->topo_p, NULL))
            return -1;
        break;
    case TOPO_LEARNED:
        if (n > TOPO_LEARN_MAX_NODES) {
            scn_i_ptr_key(kp, "", "nodes");
            return scn_i_fail(c, kp, "must be <= %d for kind \"learned\" (Frank-Wolfe on the "
                              "dense n x n matrix), got %lld", TOPO_LEARN_MAX_NODES, n);
        }
        if (scn_i_need_key(c, o, p, "degree", why) ||
            scn_i_opt_int(c, o, p, "degree", 1, INT_MAX, &degree, NULL) ||
            scn_i_opt_num(c, o, p, "lambda", GT0, &s->topo_lambda, NULL))
            return -1;
        scn_i_ptr_key(kp, p, "degree");
        if (degree > n - 1)
            return scn_i_fail(c, kp, "must be <= nodes - 1 (%lld), got %lld", n - 1, degree);
        break;
    case TOPO_RANDOM_REGULAR:
        if (scn_i_need_key(c, o, p, "degree", why) ||
            scn_i_opt_int(c, o, p, "degree", 1, INT_MAX, &degree, NULL))
            return -1;
        scn_i_ptr_key(kp, p, "degree");
        /* no such simple graph exists otherwise */
        if (degree > n - 1)
            return scn_i_fail(c, kp, "must be <= nodes - 1 (%lld), got %lld", n - 1, degree);
        if ((n * degree) % 2 != 0)
            return scn_i_fail(c, kp, "nodes * degree must be even, got %lld * %lld", n, degree);
        break;
    case TOPO_RING_LATTICE:
    case TOPO_WATTS_STROGATZ:
        if (scn_i_need_key(c, o, p, "k", why) ||
            scn_i_opt_int(c, o, p, "k", 1, INT_MAX, &k, NULL))
            return -1;
        scn_i_ptr_key(kp, p, "k");
        /* 2k < nodes: otherwise i + k and i - k meet and the lattice is not simple */
        if (2 * k > n - 1)
            return scn_i_fail(c, kp, "must be <= (nodes - 1) / 2 (%lld), got %lld", (n - 1) / 2,
                              k);
        if (ki == TOPO_WATTS_STROGATZ &&
            (scn_i_need_key(c, o, p, "beta", why) ||
             opt_fraction(c, o, p, "beta", 0, &s->topo_beta)))
            return -1;
        break;
    case TOPO_HYPERCUBE:
        if ((n & (n - 1)) != 0) {
            scn_i_ptr_key(kp, "", "nodes");
            return scn_i_fail(c, kp, "must be a power of two for kind \"hypercube\", got %lld",
                              n);
        }
        break;
    case TOPO_BARABASI_ALBERT:
        if (scn_i_need_key(c, o, p, "m", why) ||
            scn_i_opt_int(c, o, p, "m", 1, INT_MAX, &m, NULL))
            return -1;
        scn_i_ptr_key(kp, p, "m");
        if (n > 1 && m > n - 1)
            return scn_i_fail(c, kp, "must be <= nodes - 1 (%lld), got %lld", n - 1, m);
        break;
    case TOPO_EDGE_LIST:
        if (scn_i_need_key(c, o, p, "file", why) || scn_i_opt_str(c, o, p, "file", &file, NULL))
            return -1;
        if (file[0] == '\0') {
            scn_i_ptr_key(kp, p, "file");
            return scn_i_fail(c, kp, "must not be empty");
        }
        if (scenario_relative(c, &s->topo_file, c->path, file))
            return -1;
        break;
    default:
        break;
    }
    s->topo_rows = (int)rows;
    s->topo_cols = (int)cols;
    s->topo_layers = (int)layers;
    s->topo_degree = (int)degree;
    s->topo_k = (int)k;
    s->topo_m = (int)m;
    s->topo_mixing = (topo_mixing)mi;
    s->topo_kind = (topo_kind)ki;
    s->topology = kinds[ki];
    return 0;
}

/* The learned kind learns W from the label proportions of the partition:
 * a timing-only run (no model, no data) or a regression (no labels) has
 * none.  Called once the model and data sections are read. */
int scn_i_v_topology_data(scn_ctx *c, const scn_scenario *s)
{
    if (s->topo_kind != TOPO_LEARNED)
        return 0;
    if (s->model_type == NULL)
        return scn_i_fail(c, "/topology/kind", "\"learned\" needs the data's label proportions, "
                          "and this scenario has no model (timing only); set model.kind and "
                          "data, or use another kind");
    if (s->data_source == SCN_DATA_SYNTH_REGRESSION)
        return scn_i_fail(c, "/topology/kind", "\"learned\" needs class labels, and data.kind "
                          "\"synthetic-regression\" has none; use another kind");
    return 0;
}
