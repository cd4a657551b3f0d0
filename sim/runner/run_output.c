/* run_output.c -- what a finished run leaves besides metrics.csv (which
 * the event loop streams): nodes.csv with every node's totals, the
 * protocol's per-node figures (algorithm_nodes.csv, when it has any), run.json
 * with the status, the figures of the run, the topology statistics, the
 * algorithm's parameters and figures, and the resolved scenario.  It
 * formats through sim/output and computes nothing.
 */
#include "run_internal.h"

/* ---- output ---- */

int run_i_write_nodes(run_sim *r, const char *dir, double end, char *err, size_t es)
{
    out_file *f = out_file_open(dir, "nodes.csv", err, es);
    if (!f)
        return -1;
    FILE *fp = out_file_stream(f);
    if (r->mem_peak)
        out_nodes_header_mem(fp);
    else
        out_nodes_header(fp);
    cl_stats_settle(r->cl);
    for (int i = 0; i < r->n_all; i++) {
        const cl_node_stats *st = cl_stats(r->cl, i);
        double busy = cl_compute_time(r->cl, i);
        out_node_row row = {
            .node = i, .slowdown = scn_node_slowdown(r->s, i), .steps = st->steps,
            .compute_s = busy, .idle_s = end - busy - st->network_s - st->down_s,
            .uplink_busy_s = st->uplink_busy_s,
            .bytes_sent = st->bytes_sent, .bytes_received = st->bytes_received,
            .msgs_sent = st->msgs_sent, .msgs_received = st->msgs_received,
            .network_s = st->network_s, .down_s = st->down_s,
            .msgs_lost = st->msgs_lost, .steps_lost = st->steps_lost,
        };
        run_i_memory_row(r, i, &row);
        out_nodes_write(fp, &row);
    }
    return out_file_commit(f, err, es);
}

int run_i_write_alg_nodes(run_sim *r, const char *dir, char *err, size_t es)
{
    const char *const *cols = r->alg->node_columns;
    if (!cols || !r->alg->node_figures)
        return 0;
    out_file *f = out_file_open(dir, "algorithm_nodes.csv", err, es);
    if (!f)
        return -1;
    FILE *fp = out_file_stream(f);
    int nc = 0;
    fputs("node", fp);
    for (; cols[nc] && nc < ALG_MAX_NODE_COLUMNS; nc++)
        fprintf(fp, ",%s", cols[nc]);
    fputc('\n', fp);
    for (int i = 0; i < r->ctx.n; i++) {
        double v[ALG_MAX_NODE_COLUMNS];
        r->alg->node_figures(&r->ctx, i, v);
        fprintf(fp, "%d", i);
        for (int k = 0; k < nc; k++)
            fprintf(fp, ",%.17g", v[k]);
        fputc('\n', fp);
    }
    return out_file_commit(f, err, es);
}

void run_algorithm_params_json(const run_sim *r, out_json *j)
{
    out_json_begin_object(j, "algorithm_params");
    for (int i = 0; r->alg->params && r->alg->params[i].key; i++) {
        const alg_param_spec *sp = &r->alg->params[i];
        if (sp->kind == ALG_PARAM_CHOICE)
            out_json_string(j, sp->key, sp->choices[(int)r->ctx.param[i]]);
        else if (sp->kind == ALG_PARAM_PATH)
            out_json_string(j, sp->key, r->ctx.path[i]);
        else
            out_json_number(j, sp->key, r->ctx.param[i]);
    }
    out_json_end_object(j);
}

int run_i_write_run_json(run_sim *r, const char *dir, const run_result *res,
                          char *err, size_t es)
{
    out_file *f = out_file_open(dir, "run.json", err, es);
    if (!f)
        return -1;
    out_json j;
    out_json_init(&j, out_file_stream(f));
    out_json_begin_object(&j, NULL);
    out_json_string(&j, "dtsim_version", DTSIM_VERSION);
    out_json_string(&j, "cblas", DTSIM_CBLAS);
    out_json_string(&j, "git_commit", out_provenance_commit(r->opt->provenance));
    if (r->opt->provenance)
        out_provenance_json(&j, "provenance", r->opt->provenance);
    else
        out_json_raw(&j, "provenance", "null");
    out_json_string(&j, "scenario_file", r->s->path);
    out_json_int(&j, "seed", (int64_t)r->s->seed);
    out_json_string(&j, "status", run_status_name(res->status));
    out_json_string(&j, "stop_reason", res->stop_reason);
    if (res->message[0])
        out_json_string(&j, "message", res->message);
    out_json_number(&j, "sim_time_s", res->sim_time_s);
    out_json_int(&j, "events", (int64_t)res->events);
    uint64_t retx = 0;
    for (int i = 0; i < r->n_all; i++)
        retx += cl_stats(r->cl, i)->msgs_retransmitted;
    out_json_int(&j, "messages_retransmitted", (int64_t)retx);
    out_json_number(&j, "wall_s", res->wall_s);
    out_json_number(&j, "cpu_s", res->cpu_s);
    out_json_number(&j, "events_per_cpu_s", res->cpu_s > 0 ? (double)res->events / res->cpu_s : NAN);
    out_json_int(&j, "threads", res->threads);
    out_json_number(&j, "math_cpu_s", res->math_cpu_s);
    out_json_int(&j, "n_params", (int64_t)res->n_params);
    /* alg_type.one_model: every worker holds one model (or a server's is
     * evaluated), so the consensus distance says nothing of the protocol */
    out_json_bool(&j, "consensus_meaningful", !(r->alg->one_model || r->alg->eval_params));
    out_json_number(&j, "memory_estimate_bytes", run_i_memory_estimate(r));
    out_json_begin_object(&j, "topology");
    out_json_string(&j, "kind", r->s->topology);
    out_json_int(&j, "nodes", res->topo.n);
    out_json_int(&j, "edges", (int64_t)res->topo.n_edges);
    out_json_int(&j, "degree_min", res->topo.degree_min);
    out_json_int(&j, "degree_max", res->topo.degree_max);
    if (res->topo.diameter_ok)
        out_json_int(&j, "diameter", res->topo.diameter);
    else
        out_json_raw(&j, "diameter", "null");
    out_json_bool(&j, "bipartite", r->g->bipartite);
    out_json_string(&j, "mixing", r->g->learned ? "learned" : topo_mixing_name(r->g->mixing));
    out_json_number(&j, "lazy_alpha", r->g->learned ? 0.0 : r->g->lazy_alpha);
    out_json_bool(&j, "symmetric", r->g->symmetric);
    if (r->g->learned) {   /* STL-FW: its steps and final objective */
        out_json_int(&j, "frank_wolfe_steps", r->g->learn_iters);
        out_json_string(&j, "frank_wolfe_stop", r->g->learn_stop);
        out_json_number(&j, "objective", r->g->learn_objective[r->g->learn_iters]);
    }
    out_json_string(&j, "statistics", res->topo.bounded ? "bounded" : "full");
    out_json_string(&j, "spectral_solver", res->topo.solver ? res->topo.solver : "dense");
    if (res->topo.spectral_ok) {
        out_json_number(&j, "lambda2", res->topo.lambda2);
        out_json_number(&j, "spectral_gap", res->topo.spectral_gap);
    } else {
        out_json_raw(&j, "lambda2", "null");
        out_json_raw(&j, "spectral_gap", "null");
    }
    out_json_end_object(&j);
    if (r->timing_only) {
        out_json_raw(&j, "data", "null");
        out_json_raw(&j, "partition", "null");
    } else {
        out_json_begin_object(&j, "data");
        out_json_string(&j, "kind", r->s->data_kind);
        out_json_int(&j, "train", (int64_t)r->train.n);
        out_json_int(&j, "test", (int64_t)r->test.n);
        out_json_int(&j, "features", (int64_t)r->train.d);
        out_json_int(&j, "classes", r->train.n_classes);
        out_json_int(&j, "test_evaluated", (int64_t)(r->test_idx ? r->n_test_eval : r->test.n));
        out_json_end_object(&j);
        out_json_begin_object(&j, "partition");
        out_json_string(&j, "kind", r->s->partition);
        out_json_int(&j, "samples_min", (int64_t)r->pstats.samples_min);
        out_json_number(&j, "samples_mean", r->pstats.samples_mean);
        out_json_int(&j, "samples_max", (int64_t)r->pstats.samples_max);
        out_json_int(&j, "classes_min", r->pstats.classes_min);
        out_json_number(&j, "classes_mean", r->pstats.classes_mean);
        out_json_int(&j, "classes_max", r->pstats.classes_max);
        out_json_end_object(&j);
    }
    out_json_begin_object(&j, "final");
    out_json_number(&j, "time_s", res->last.time_s);
    out_json_int(&j, "steps", (int64_t)res->last.steps);
    out_json_number(&j, "epochs", res->last.epochs);
    out_json_number(&j, "train_loss", res->last.train_loss);
    out_json_number(&j, "test_loss", res->last.test_loss);
    out_json_number(&j, "test_accuracy", res->last.test_accuracy);
    out_json_number(&j, "consensus_distance", res->last.consensus_distance);
    out_json_number(&j, "bytes_sent", res->last.bytes_sent);
    out_json_end_object(&j);
    if (res->n_targets > 0) {
        out_json_int(&j, "target_snapshots", (int64_t)r->snap_cap);
        out_json_begin_array(&j, "targets");
        for (int i = 0; i < res->n_targets; i++) {
            const run_target *t = &res->targets[i];
            out_json_begin_object(&j, NULL);
            out_json_string(&j, "metric", scn_target_metric_names[t->metric]);
            out_json_number(&j, "value", t->value);
            out_json_bool(&j, "stop", t->stop);
            out_json_bool(&j, "reached", !isinf(t->time_s));
            if (isinf(t->time_s)) {
                out_json_raw(&j, "time_s", "null");
            } else {
                out_json_number(&j, "time_s", t->time_s);
                if (isinf(t->lo_s))
                    out_json_raw(&j, "not_reached_s", "null");
                else
                    out_json_number(&j, "not_reached_s", t->lo_s);
                out_json_bool(&j, "exact", t->unchecked == 0);
                out_json_number(&j, "error_s", t->err_s);
                out_json_int(&j, "unchecked_instants", (int64_t)t->unchecked);
                out_json_int(&j, "evaluations", t->evaluations);
            }
            out_json_end_object(&j);
        }
        out_json_end_array(&j);
    }
    run_algorithm_params_json(r, &j);
    if (res->n_stats > 0) {
        out_json_begin_object(&j, "algorithm_stats");
        for (int i = 0; i < res->n_stats; i++)
            out_json_number(&j, res->stat_keys[i], res->stat_values[i]);
        out_json_end_object(&j);
    }
    out_json_raw(&j, "scenario", r->s->resolved_json);
    out_json_end_object(&j);
    out_json_finish(&j);
    return out_file_commit(f, err, es);
}

