/* scn_network.c -- the network keys of a scenario beyond the default
 * latency and bandwidth: compression, NIC discipline and capacities (with
 * per-node NIC entries), jitter, loss, reordering, outages and link entries
 * between node sets; NIC and link entries may name the protocol's servers
 * ("server", "server:K", "servers"), which the runner checks against the
 * protocol.  It validates and fills plain structs; the runner
 * turns them into the cluster's link classes.
 */
#include "scn_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int scn_i_v_network_nics(scn_ctx *c, json_t *o, const char *p, scn_scenario *s)
{
    static const char *const nic_keys[] = {"nodes", "fraction", "up_Bps", "down_Bps", NULL};
    const char *disc = "fifo";
    char kp[PTR_MAX], ep[PTR_MAX];
    json_t *arr;
    int k;

    s->compression_ratio = 1;
    s->up_Bps = s->down_Bps = s->bandwidth_Bps;
    if (scn_i_opt_num(c, o, p, "compression_ratio", GT0, &s->compression_ratio, NULL) ||
        scn_i_opt_str(c, o, p, "discipline", &disc, NULL) ||
        scn_i_opt_num(c, o, p, "up_Bps", GT0, &s->up_Bps, NULL) ||
        scn_i_opt_num(c, o, p, "down_Bps", GT0, &s->down_Bps, NULL))
        return -1;
    if (s->compression_ratio < 1) {
        scn_i_ptr_key(kp, p, "compression_ratio");
        return scn_i_fail(c, kp, "must be >= 1, got %g", s->compression_ratio);
    }
    scn_i_ptr_key(kp, p, "discipline");
    if ((k = scn_i_lookup(c, kp, "discipline", disc, scn_i_discipline_names)) < 0)
        return -1;
    s->discipline = (cl_discipline)k;
    arr = o ? json_object_get(o, "nics") : NULL;
    if (!arr)
        return 0;
    scn_i_ptr_key(kp, p, "nics");
    if (!json_is_array(arr))
        return scn_i_fail(c, kp, "must be an array, got %s", scn_i_type_name(arr));
    size_t n = json_array_size(arr);
    if (n == 0)
        return 0;
    if (!(s->nics = calloc(n, sizeof *s->nics)))
        return scn_i_fail_oom(c);
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(arr, i);
        scn_nic *q = &s->nics[i];
        int hu, hd;
        scn_i_ptr_idx(ep, kp, i);
        s->n_nics = i + 1;
        if (!json_is_object(e))
            return scn_i_fail(c, ep, "must be an object, got %s", scn_i_type_name(e));
        if (scn_i_check_keys(c, e, ep, nic_keys) ||
            scn_i_v_select_sv(c, e, ep, s, 0, &q->nodes, &q->n_nodes, &q->fraction,
                              &q->servers) ||
            scn_i_opt_num(c, e, ep, "up_Bps", GT0, &q->up_Bps, &hu) ||
            scn_i_opt_num(c, e, ep, "down_Bps", GT0, &q->down_Bps, &hd))
            return -1;
        if (!hu && !hd)
            return scn_i_fail(c, ep, "sets nothing (give \"up_Bps\" or \"down_Bps\")");
    }
    return 0;
}

static int v_jitter(scn_ctx *c, json_t *parent, const char *pptr, scn_link_props *out)
{
    static const char *const keys[] = {"dist", "low_s", "high_s", "mean_s", NULL};
    const char *const *dists = scn_i_jitter_names;
    static const char *const per_dist[][4] = {
        {"dist", NULL}, {"dist", "low_s", "high_s", NULL}, {"dist", "mean_s", NULL},
    };
    char p[PTR_MAX], dp[PTR_MAX], why[64];
    const char *dist = "none";
    json_t *n;
    int k;

    if (scn_i_opt_obj(c, parent, pptr, "jitter", &n, p) || scn_i_check_keys(c, n, p, keys) ||
        scn_i_opt_str(c, n, p, "dist", &dist, NULL))
        return -1;
    scn_i_ptr_key(dp, p, "dist");
    if ((k = scn_i_lookup(c, dp, "jitter dist", dist, dists)) < 0 ||
        scn_i_kind_keys(c, n, p, per_dist[k], "dist", dist))
        return -1;
    out->jitter = (cl_jitter)k;
    out->jitter_a = out->jitter_b = 0;
    snprintf(why, sizeof why, "for dist \"%s\"", dist);
    if (k == CL_JITTER_UNIFORM) {
        if (scn_i_need_key(c, n, p, "low_s", why) || scn_i_need_key(c, n, p, "high_s", why) ||
            scn_i_opt_num(c, n, p, "low_s", GE0, &out->jitter_a, NULL) ||
            scn_i_opt_num(c, n, p, "high_s", GE0, &out->jitter_b, NULL))
            return -1;
        if (out->jitter_a > out->jitter_b) {
            scn_i_ptr_key(dp, p, "low_s");
            return scn_i_fail(c, dp, "must be <= high_s (%g), got %g", out->jitter_b,
                              out->jitter_a);
        }
    } else if (k == CL_JITTER_EXPONENTIAL) {
        if (scn_i_need_key(c, n, p, "mean_s", why) ||
            scn_i_opt_num(c, n, p, "mean_s", GT0, &out->jitter_a, NULL))
            return -1;
    }
    return 0;
}

/* loss, jitter and outages of a link (class); absent keys keep *out
 * (whose outages must then be NULL or owned: they are replaced). */
static int v_link_props(scn_ctx *c, json_t *o, const char *ptr, scn_link_props *out,
                        int *has_loss, int *has_jitter, int *has_outages)
{
    char kp[PTR_MAX], ep[PTR_MAX];
    json_t *arr, *w;
    size_t j;

    if (scn_i_opt_num(c, o, ptr, "loss", GE0, &out->loss, has_loss))
        return -1;
    if (out->loss >= 1) {
        scn_i_ptr_key(kp, ptr, "loss");
        return scn_i_fail(c, kp, "must be < 1, got %g", out->loss);
    }
    *has_jitter = o && json_object_get(o, "jitter");
    if (*has_jitter && v_jitter(c, o, ptr, out))
        return -1;
    arr = o ? json_object_get(o, "outages") : NULL;
    *has_outages = arr != NULL;
    if (!arr)
        return 0;
    scn_i_ptr_key(kp, ptr, "outages");
    if (!json_is_array(arr))
        return scn_i_fail(c, kp, "must be an array, got %s", scn_i_type_name(arr));
    free(out->outages);
    out->outages = NULL;
    out->n_outages = 0;
    if (json_array_size(arr) == 0)
        return 0;
    if (!(out->outages = calloc(2 * json_array_size(arr), sizeof(double))))
        return scn_i_fail_oom(c);
    json_array_foreach(arr, j, w) {
        static const char *const wkeys[] = {"start_s", "end_s", NULL};
        double a = 0, b = INFINITY;
        scn_i_ptr_idx(ep, kp, j);
        if (!json_is_object(w))
            return scn_i_fail(c, ep, "must be an object, got %s", scn_i_type_name(w));
        if (scn_i_check_keys(c, w, ep, wkeys) || scn_i_need_key(c, w, ep, "start_s", NULL) ||
            scn_i_need_key(c, w, ep, "end_s", NULL) ||
            scn_i_opt_num(c, w, ep, "start_s", GE0, &a, NULL) ||
            scn_i_opt_num(c, w, ep, "end_s", GT0, &b, NULL))
            return -1;
        if (b <= a) {
            char bp[PTR_MAX];
            scn_i_ptr_key(bp, ep, "end_s");
            return scn_i_fail(c, bp, "must be > start_s (%g), got %g", a, b);
        }
        out->outages[2 * j] = a;
        out->outages[2 * j + 1] = b;
        out->n_outages = j + 1;
    }
    return 0;
}

static int v_link(scn_ctx *c, json_t *o, const char *ptr, scn_scenario *s, scn_link *out)
{
    static const char *const keys[] = {"from", "to", "directed", "latency_s", "bandwidth_Bps",
                                       "jitter", "loss", "outages", NULL};
    char kp[PTR_MAX];
    json_t *v;

    if (!json_is_object(o))
        return scn_i_fail(c, ptr, "must be an object, got %s", scn_i_type_name(o));
    if (scn_i_check_keys(c, o, ptr, keys))
        return -1;
    if ((v = json_object_get(o, "from"))) {
        scn_i_ptr_key(kp, ptr, "from");
        if (scn_i_v_node_list_sv(c, v, kp, s->n_nodes, &out->from, &out->n_from,
                                 &out->from_servers))
            return -1;
    }
    if ((v = json_object_get(o, "to"))) {
        scn_i_ptr_key(kp, ptr, "to");
        if (scn_i_v_node_list_sv(c, v, kp, s->n_nodes, &out->to, &out->n_to,
                                 &out->to_servers))
            return -1;
    }
    if ((v = json_object_get(o, "directed"))) {
        scn_i_ptr_key(kp, ptr, "directed");
        if (!json_is_boolean(v))
            return scn_i_fail(c, kp, "must be true or false, got %s", scn_i_type_name(v));
        out->directed = json_is_true(v);
    }
    /* what the entry does not give, it takes from the network's default */
    out->props = s->link;
    out->props.outages = NULL;
    out->props.n_outages = 0;
    if (scn_i_opt_num(c, o, ptr, "latency_s", GE0, &out->props.latency_s, &out->has_latency) ||
        scn_i_opt_num(c, o, ptr, "bandwidth_Bps", GT0, &out->props.bandwidth_Bps,
                      &out->has_bandwidth) ||
        v_link_props(c, o, ptr, &out->props, &out->has_loss, &out->has_jitter,
                     &out->has_outages))
        return -1;
    if (!out->has_outages && s->link.n_outages) {
        size_t n = s->link.n_outages;
        if (!(out->props.outages = malloc(2 * n * sizeof(double))))
            return scn_i_fail_oom(c);
        memcpy(out->props.outages, s->link.outages, 2 * n * sizeof(double));
        out->props.n_outages = n;
    }
    return 0;
}

int scn_i_v_network_links(scn_ctx *c, json_t *o, const char *p, scn_scenario *s)
{
    char kp[PTR_MAX], ep[PTR_MAX];
    json_t *arr, *v;
    int hl, hj, ho;

    s->link.latency_s = s->latency_s;
    s->link.bandwidth_Bps = s->bandwidth_Bps;
    if (v_link_props(c, o, p, &s->link, &hl, &hj, &ho))
        return -1;
    if ((v = o ? json_object_get(o, "reorder") : NULL)) {
        scn_i_ptr_key(kp, p, "reorder");
        if (!json_is_boolean(v))
            return scn_i_fail(c, kp, "must be true or false, got %s", scn_i_type_name(v));
        s->reorder = json_is_true(v);
    }
    arr = o ? json_object_get(o, "links") : NULL;
    if (!arr)
        return 0;
    scn_i_ptr_key(kp, p, "links");
    if (!json_is_array(arr))
        return scn_i_fail(c, kp, "must be an array, got %s", scn_i_type_name(arr));
    size_t n = json_array_size(arr);
    if (n == 0)
        return 0;
    if (!(s->links = calloc(n, sizeof *s->links)))
        return scn_i_fail_oom(c);
    for (size_t i = 0; i < n; i++) {
        scn_i_ptr_idx(ep, kp, i);
        s->n_links = i + 1;
        if (v_link(c, json_array_get(arr, i), ep, s, &s->links[i]))
            return -1;
    }
    return 0;
}

/* Reliable transport by default, as TCP gives real systems: Linux's
 * minimum RTO (200 ms) and tcp_retries2 (15). */
int scn_i_v_network_retransmit(scn_ctx *c, json_t *o, const char *p, scn_scenario *s)
{
    static const char *const keys[] = {"timeout_s", "max_retries", NULL};
    char kp[PTR_MAX];
    json_t *v = o ? json_object_get(o, "retransmit") : NULL;
    long long max = 15;

    s->retransmit_timeout_s = 0.2;
    s->retransmit_max = 15;
    if (!v)
        return 0;
    scn_i_ptr_key(kp, p, "retransmit");
    if (json_is_false(v)) {
        s->retransmit_timeout_s = 0;
        s->retransmit_max = 0;
        return 0;
    }
    if (!json_is_object(v))
        return scn_i_fail(c, kp, "must be false or an object with timeout_s and max_retries, "
                          "got %s", scn_i_type_name(v));
    if (scn_i_check_keys(c, v, kp, keys) ||
        scn_i_opt_num(c, v, kp, "timeout_s", GT0, &s->retransmit_timeout_s, NULL) ||
        scn_i_opt_int(c, v, kp, "max_retries", 0, 1000, &max, NULL))
        return -1;
    s->retransmit_max = (int)max;
    return 0;
}
