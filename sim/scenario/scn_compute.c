/* scn_compute.c -- the compute keys of a scenario that vary by node:
 * step-time noise (compute.noise and a group's), node groups with their
 * slowdown, step time, FLOP rate and noise, and the per-node queries that
 * resolve them (the last group naming a node wins).  It does not read the
 * time-varying slowdowns (scn_env.c) or the top-level compute keys
 * (scn_validate.c).
 */
#include "scn_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- noise ---------------------------------------------------------------- */

int scn_i_v_noise(scn_ctx *c, json_t *parent, const char *pptr, cl_noise_spec *out)
{
    static const char *const keys[] = {"dist", "low", "high", "sigma", "floor", "shift",
                                       "shape", "alpha", NULL};
    const char *const *dists = scn_i_noise_names;
    static const char *const per_dist[][4] = {
        {"dist", NULL}, {"dist", "low", "high", NULL}, {"dist", NULL}, {"dist", "sigma", NULL},
        {"dist", "sigma", "floor", NULL}, {"dist", "shift", NULL}, {"dist", "shape", NULL},
        {"dist", "alpha", NULL},
    };
    char p[PTR_MAX], dp[PTR_MAX], why[64];
    const char *dist = "constant";
    json_t *n;
    int k;

    memset(out, 0, sizeof *out);
    out->floor = 0.1;
    if (scn_i_opt_obj(c, parent, pptr, "noise", &n, p) || scn_i_check_keys(c, n, p, keys) ||
        scn_i_opt_str(c, n, p, "dist", &dist, NULL))
        return -1;
    scn_i_ptr_key(dp, p, "dist");
    if ((k = scn_i_lookup(c, dp, "dist", dist, dists)) < 0 ||
        scn_i_kind_keys(c, n, p, per_dist[k], "dist", dist))
        return -1;
    out->dist = (cl_noise)k;
    snprintf(why, sizeof why, "for dist \"%s\"", dist);
    switch (out->dist) {
    case CL_NOISE_UNIFORM:
        if (scn_i_need_key(c, n, p, "low", why) || scn_i_need_key(c, n, p, "high", why) ||
            scn_i_opt_num(c, n, p, "low", GT0, &out->low, NULL) ||
            scn_i_opt_num(c, n, p, "high", GT0, &out->high, NULL))
            return -1;
        if (out->low > out->high) {
            scn_i_ptr_key(dp, p, "low");
            return scn_i_fail(c, dp, "must be <= high (%g), got %g", out->high, out->low);
        }
        break;
    case CL_NOISE_LOGNORMAL:
    case CL_NOISE_NORMAL:
        if (scn_i_need_key(c, n, p, "sigma", why) ||
            scn_i_opt_num(c, n, p, "sigma", GE0, &out->sigma, NULL) ||
            scn_i_opt_num(c, n, p, "floor", GT0, &out->floor, NULL))
            return -1;
        if (out->floor >= 1) {
            scn_i_ptr_key(dp, p, "floor");
            return scn_i_fail(c, dp, "must be < 1, got %g", out->floor);
        }
        /* beyond these, factors leave the range of a double (lognormal:
         * exp(-sigma^2/2) underflows to 0 at sigma 39) or become
         * meaningless; docs/reliability.md */
        if (out->sigma > (out->dist == CL_NOISE_LOGNORMAL ? 10 : 1e3)) {
            scn_i_ptr_key(dp, p, "sigma");
            return scn_i_fail(c, dp, "must be <= %g, got %g",
                              out->dist == CL_NOISE_LOGNORMAL ? 10 : 1e3, out->sigma);
        }
        break;
    case CL_NOISE_SHIFTED_EXPONENTIAL:
        if (scn_i_need_key(c, n, p, "shift", why) ||
            scn_i_opt_num(c, n, p, "shift", GE0, &out->shift, NULL))
            return -1;
        if (out->shift >= 1) {
            scn_i_ptr_key(dp, p, "shift");
            return scn_i_fail(c, dp, "must be < 1, got %g", out->shift);
        }
        break;
    case CL_NOISE_GAMMA:
        if (scn_i_need_key(c, n, p, "shape", why) ||
            scn_i_opt_num(c, n, p, "shape", GT0, &out->shape, NULL))
            return -1;
        break;
    case CL_NOISE_PARETO:
        if (scn_i_need_key(c, n, p, "alpha", why) ||
            scn_i_opt_num(c, n, p, "alpha", GT0, &out->alpha, NULL))
            return -1;
        if (out->alpha <= 1) {
            scn_i_ptr_key(dp, p, "alpha");
            return scn_i_fail(c, dp, "must be > 1 (the mean is infinite otherwise), got %g",
                              out->alpha);
        }
        break;
    default:
        break;
    }
    if (out->dist != CL_NOISE_NORMAL)
        out->floor = 0;
    return 0;
}

/* ---- groups --------------------------------------------------------------- */

static int v_group(scn_ctx *c, json_t *g, const char *gptr, const scn_scenario *s,
                   scn_group *out)
{
    static const char *const keys[] = {"nodes", "fraction", "slowdown", "step_time_s",
                                       "flops_per_s", "noise", "memory_bytes", NULL};
    int has_step, has_flops;

    if (!json_is_object(g))
        return scn_i_fail(c, gptr, "must be an object, got %s", scn_i_type_name(g));
    if (scn_i_check_keys(c, g, gptr, keys) ||
        scn_i_v_select(c, g, gptr, s, 0, &out->nodes, &out->n_nodes, &out->fraction) ||
        scn_i_opt_num(c, g, gptr, "slowdown", GT0, &out->slowdown, NULL) ||
        scn_i_opt_num(c, g, gptr, "step_time_s", GT0, &out->step_time_s, &has_step) ||
        scn_i_opt_num(c, g, gptr, "flops_per_s", GT0, &out->flops_per_s, &has_flops) ||
        scn_i_opt_num(c, g, gptr, "memory_bytes", GT0, &out->memory_bytes, NULL))
        return -1;
    if (has_step && has_flops)
        return scn_i_fail(c, gptr, "give \"step_time_s\" or \"flops_per_s\", not both");
    if (json_object_get(g, "noise")) {
        out->has_noise = 1;
        if (scn_i_v_noise(c, g, gptr, &out->noise))
            return -1;
    }
    if (!out->slowdown && !has_step && !has_flops && !out->has_noise && !out->memory_bytes)
        return scn_i_fail(c, gptr, "sets nothing (give \"slowdown\", \"step_time_s\", "
                          "\"flops_per_s\", \"noise\" or \"memory_bytes\")");
    return 0;
}

int scn_i_v_groups(scn_ctx *c, json_t *compute, const char *cptr, scn_scenario *s)
{
    json_t *arr = compute ? json_object_get(compute, "groups") : NULL;
    char p[PTR_MAX], gp[PTR_MAX];
    size_t i, n;

    if (!arr)
        return 0;
    scn_i_ptr_key(p, cptr, "groups");
    if (!json_is_array(arr))
        return scn_i_fail(c, p, "must be an array, got %s", scn_i_type_name(arr));
    n = json_array_size(arr);
    if (n == 0)
        return 0;
    if (!(s->groups = calloc(n, sizeof *s->groups)))
        return scn_i_fail_oom(c);
    for (i = 0; i < n; i++) {
        scn_i_ptr_idx(gp, p, i);
        s->n_groups = i + 1;   /* so scn_fini frees a half-built group */
        if (v_group(c, json_array_get(arr, i), gp, s, &s->groups[i]))
            return -1;
    }
    return 0;
}

/* ---- per-node queries ----------------------------------------------------- */

double scn_node_slowdown(const scn_scenario *s, int node)
{
    for (size_t i = s->n_groups; i-- > 0;) {
        const scn_group *g = &s->groups[i];
        if (g->slowdown > 0 && scn_i_has_node(g->nodes, g->n_nodes, node))
            return g->slowdown;
    }
    return 1.0;
}

double scn_node_step_time(const scn_scenario *s, int node, double model_flops)
{
    for (size_t i = s->n_groups; i-- > 0;) {
        const scn_group *g = &s->groups[i];
        if (!scn_i_has_node(g->nodes, g->n_nodes, node))
            continue;
        if (g->step_time_s > 0)
            return g->step_time_s;
        if (g->flops_per_s > 0)
            return model_flops / g->flops_per_s;
    }
    return s->flops_per_s > 0 ? model_flops / s->flops_per_s : s->step_time_s;
}

double scn_node_memory(const scn_scenario *s, int node)
{
    for (size_t i = s->n_groups; i-- > 0;) {
        const scn_group *g = &s->groups[i];
        if (g->memory_bytes > 0 && scn_i_has_node(g->nodes, g->n_nodes, node))
            return g->memory_bytes;
    }
    return s->memory_bytes;
}

int scn_node_memory_group(const scn_scenario *s, int node)
{
    for (size_t i = s->n_groups; i-- > 0;) {
        const scn_group *g = &s->groups[i];
        if (g->memory_bytes > 0 && scn_i_has_node(g->nodes, g->n_nodes, node))
            return (int)i;
    }
    return -1;
}

int scn_reports_memory(const scn_scenario *s)
{
    int any = s->has_freeze || s->memory_bytes > 0;
    for (size_t i = 0; i < s->n_groups && !any; i++)
        any = s->groups[i].memory_bytes > 0;
    return any;
}

cl_noise_spec scn_node_noise(const scn_scenario *s, int node)
{
    for (size_t i = s->n_groups; i-- > 0;) {
        const scn_group *g = &s->groups[i];
        if (g->has_noise && scn_i_has_node(g->nodes, g->n_nodes, node))
            return g->noise;
    }
    return (cl_noise_spec){ s->noise, s->noise_low, s->noise_high, s->noise_sigma,
                            s->noise_floor, s->noise_shift, s->noise_shape, s->noise_alpha };
}

void scn_node_nic(const scn_scenario *s, int node, double *up, double *down)
{
    *up = s->up_Bps;
    *down = s->down_Bps;
    for (size_t i = 0; i < s->n_nics; i++) {
        const scn_nic *q = &s->nics[i];
        if (node >= s->n_nodes ? !scn_names_server(&q->servers, node - s->n_nodes)
                               : !scn_i_has_node(q->nodes, q->n_nodes, node))
            continue;
        if (q->up_Bps > 0)
            *up = q->up_Bps;
        if (q->down_Bps > 0)
            *down = q->down_Bps;
    }
}
