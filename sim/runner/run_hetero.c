/* run_hetero.c -- the scenario's per-node compute, NIC, slowdown, fault
 * and link settings in the cluster's terms: base step times (from step
 * times or FLOPs), noise, NIC capacities, slowdown and fault processes with
 * their trace points, link classes and the rules assigning them, with the
 * protocol's servers that NIC and link entries name checked against the
 * protocol and resolved to their node numbers.  The arrays belong to the
 * run_sim; it builds no cluster (run.c does).
 */
#include "run_internal.h"

/* FLOPs of one step: the model type's count per sample (mdl_type.flops)
 * or, for the timing-only model, the scenario's model.flops_per_sample,
 * times the batch. */
static double model_flops_per_step(const run_sim *r)
{
    double per_sample = r->model ? mdl_flops_per_sample(r->model) : r->s->model_flops_per_sample;
    return per_sample * (double)r->s->batch;
}

static cl_link_class link_class(const scn_link_props *p, cl_window *w)
{
    for (size_t k = 0; k < p->n_outages; k++)
        w[k] = (cl_window){ p->outages[2 * k], p->outages[2 * k + 1] };
    return (cl_link_class){ .latency_s = p->latency_s, .bandwidth_Bps = p->bandwidth_Bps,
                            .jitter = p->jitter, .jitter_a = p->jitter_a,
                            .jitter_b = p->jitter_b, .loss = p->loss, .outages = w,
                            .n_outages = p->n_outages };
}

/* One server list against the protocol's servers; where names the list
 * ("/network/nics/0/nodes"). */
static int check_list(const run_sim *r, const scn_servers *sv, int servers, const char *where,
                      scn_error *err)
{
    char ptr[300], m[512];
    const char *alg = r->alg->name;
    if (!sv->named)
        return 0;
    if (servers == 0) {
        snprintf(ptr, sizeof ptr, "%s/%d", where, sv->first_at);
        snprintf(m, sizeof m, "names a server, but algorithm \"%s\" has none (only the nodes "
                 "0..%d exist)", alg, r->s->n_nodes - 1);
    } else if (sv->plain && servers > 1) {
        snprintf(ptr, sizeof ptr, "%s/%d", where, sv->plain_at);
        snprintf(m, sizeof m, "\"server\" is ambiguous: algorithm \"%s\" has %d servers "
                 "(name one as \"server:K\", K in 0..%d, or all as \"servers\")", alg, servers,
                 servers - 1);
    } else if (sv->max_k >= servers) {
        snprintf(ptr, sizeof ptr, "%s/%d", where, sv->max_at);
        char names[64];
        if (servers == 1)
            snprintf(names, sizeof names, "server:0");
        else
            snprintf(names, sizeof names, "server:0 .. server:%d", servers - 1);
        snprintf(m, sizeof m, "server %d does not exist: algorithm \"%s\" has %d server%s (%s)",
                 sv->max_k, alg, servers, servers == 1 ? "" : "s", names);
    } else {
        return 0;
    }
    run_i_value_error(err, r->s, ptr, m);
    return -1;
}

int run_i_check_servers(const run_sim *r, int servers, scn_error *err)
{
    const scn_scenario *s = r->s;
    char where[200];
    for (size_t k = 0; k < s->n_nics; k++) {
        snprintf(where, sizeof where, "/network/nics/%zu/nodes", k);
        if (check_list(r, &s->nics[k].servers, servers, where, err) != 0)
            return -1;
    }
    for (size_t k = 0; k < s->n_links; k++) {
        snprintf(where, sizeof where, "/network/links/%zu/from", k);
        if (check_list(r, &s->links[k].from_servers, servers, where, err) != 0)
            return -1;
        snprintf(where, sizeof where, "/network/links/%zu/to", k);
        if (check_list(r, &s->links[k].to_servers, servers, where, err) != 0)
            return -1;
    }
    return 0;
}

/* A rule's node list: the workers as given, or, when the entry names
 * servers, the workers followed by the servers' node numbers (still
 * sorted: servers come after every worker), written at *at. */
static const int *rule_list(const run_sim *r, const int *nodes, size_t n, const scn_servers *sv,
                            int **at, size_t *n_out)
{
    *n_out = n;
    if (!sv->named)
        return nodes;
    int *out = *at;
    memcpy(out, nodes, n * sizeof *out);
    for (int k = 0; k < r->n_all - r->s->n_nodes; k++)
        if (scn_names_server(sv, k))
            out[(*n_out)++] = r->s->n_nodes + k;
    *at += *n_out;
    return out;
}

/* Link classes: class 0 is the network's default link, class k + 1 the
 * k-th entry of network.links, which its rule assigns. */
static int build_links(run_sim *r)
{
    const scn_scenario *s = r->s;
    size_t n_w = s->link.n_outages, used = 0, n_sl = 0;
    int servers = r->n_all - s->n_nodes;
    for (size_t k = 0; k < s->n_links; k++) {
        n_w += s->links[k].props.n_outages;
        if (s->links[k].from_servers.named)
            n_sl += s->links[k].n_from + (size_t)servers;
        if (s->links[k].to_servers.named)
            n_sl += s->links[k].n_to + (size_t)servers;
    }
    r->classes = malloc((s->n_links + 1) * sizeof *r->classes);
    if (!r->classes || (s->n_links && !(r->rules = malloc(s->n_links * sizeof *r->rules))) ||
        (n_w && !(r->windows = malloc(n_w * sizeof *r->windows))) ||
        (n_sl && !(r->server_lists = malloc(n_sl * sizeof *r->server_lists))))
        return -1;
    int *at = r->server_lists;
    r->classes[0] = link_class(&s->link, r->windows);
    used = s->link.n_outages;
    for (size_t k = 0; k < s->n_links; k++) {
        const scn_link *l = &s->links[k];
        r->classes[k + 1] = link_class(&l->props, r->windows + used);
        used += l->props.n_outages;
        size_t nf, nt;
        const int *from = rule_list(r, l->from, l->n_from, &l->from_servers, &at, &nf);
        const int *to = rule_list(r, l->to, l->n_to, &l->to_servers, &at, &nt);
        r->rules[k] = (cl_link_rule){ .from = from, .n_from = nf, .to = to, .n_to = nt,
                                      .directed = l->directed, .cls = (uint32_t)(k + 1) };
    }
    return 0;
}

/* Per-node compute and NIC settings, slowdowns and faults in the
 * cluster's terms. */
int run_i_build_heterogeneity(run_sim *r)
{
    const scn_scenario *s = r->s;
    int n = r->n_all;
    double flops = model_flops_per_step(r);
    size_t n_pts = 0, k = 0;

    r->noise = malloc((size_t)n * sizeof *r->noise);
    r->up_Bps = malloc((size_t)n * sizeof(double));
    r->down_Bps = malloc((size_t)n * sizeof(double));
    if (!r->noise || !r->up_Bps || !r->down_Bps)
        return -1;
    for (int i = 0; i < n; i++) {
        if (i >= s->n_nodes) {   /* a protocol's server: never steps; its NIC is the
                                    default unless network.nics names it */
            r->step_times[i] = 1.0;
            r->noise[i] = (cl_noise_spec){ .dist = CL_NOISE_CONSTANT };
            scn_node_nic(s, i, &r->up_Bps[i], &r->down_Bps[i]);
            continue;
        }
        r->step_times[i] = scn_node_step_time(s, i, flops) * scn_node_slowdown(s, i);
        r->noise[i] = scn_node_noise(s, i);
        scn_node_nic(s, i, &r->up_Bps[i], &r->down_Bps[i]);
    }
    for (size_t j = 0; j < s->n_slowdowns; j++)
        n_pts += s->slowdowns[j].n_points;
    for (size_t j = 0; j < s->n_faults; j++)
        n_pts += s->faults[j].n_points;
    if ((s->n_slowdowns && !(r->slows = calloc(s->n_slowdowns, sizeof *r->slows))) ||
        (s->n_faults && !(r->faults = calloc(s->n_faults, sizeof *r->faults))) ||
        (n_pts && !(r->points = malloc(n_pts * sizeof *r->points))))
        return -1;
    for (size_t j = 0; j < s->n_slowdowns; j++) {
        const scn_slowdown *d = &s->slowdowns[j];
        cl_slowdown *o = &r->slows[j];
        *o = (cl_slowdown){ .kind = d->kind, .nodes = d->nodes,
                            .n_nodes = d->n_nodes, .factor = d->factor, .start_s = d->start_s,
                            .end_s = d->end_s, .mean_slow_s = d->mean_slow_s,
                            .mean_normal_s = d->mean_normal_s, .period_s = d->period_s,
                            .duration_s = d->duration_s, .phase_s = d->phase_s,
                            .points = r->points + k, .n_points = d->n_points };
        for (size_t q = 0; q < d->n_points; q++)
            r->points[k++] = (cl_point){ d->points[q].node, d->points[q].time_s,
                                         d->points[q].value };
    }
    if (build_links(r) != 0)
        return -1;
    for (size_t j = 0; j < s->n_faults; j++) {
        const scn_fault *f = &s->faults[j];
        cl_fault *o = &r->faults[j];
        *o = (cl_fault){ .kind = f->kind, .nodes = f->nodes,
                         .n_nodes = f->n_nodes, .down_s = f->down_s, .up_s = f->up_s,
                         .mtbf_s = f->mtbf_s, .mttr_s = f->mttr_s,
                         .points = r->points + k, .n_points = f->n_points };
        for (size_t q = 0; q < f->n_points; q++)
            r->points[k++] = (cl_point){ f->points[q].node, f->points[q].time_s,
                                         f->points[q].value };
    }
    return 0;
}
