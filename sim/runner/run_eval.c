/* run_eval.c -- what the runner measures at each evaluation instant: the
 * average model's loss and accuracy, the consensus distance, steps, epochs
 * and bytes (a metrics.csv row), every node's own model when asked
 * (node_metrics.csv), and whether an evaluation is no longer finite.  It
 * schedules nothing and decides no stop (run.c does).
 */
#include "run_internal.h"

void run_i_average(run_sim *r)
{
    int n = r->ctx.n;
    size_t P = r->ctx.P;
    /* The mean is taken as x_0 + mean_i (x_i - x_0), in node order: exactly
     * x_0 when every node holds the same model, so a consensus distance of
     * zero means identical models, not a rounding coincidence. */
    const double *x0 = trn_params_const(r->trn, 0);
    memset(r->avg, 0, P * sizeof(double));
    for (int i = 1; i < n; i++) {
        const double *x = trn_params_const(r->trn, i);
        for (size_t k = 0; k < P; k++)
            r->avg[k] += x[k] - x0[k];
    }
    for (size_t k = 0; k < P; k++)
        r->avg[k] = x0[k] + r->avg[k] / n;
}

size_t run_i_eval_stage(const run_sim *r)
{
    size_t f = 0;
    if (r->trn)
        for (int i = 0; i < r->n_all; i++)
            if (trn_frozen(r->trn, i) > f)
                f = trn_frozen(r->trn, i);
    return f;
}

void run_i_evaluate(run_sim *r, out_metrics_row *row)
{
    int n = r->ctx.n;
    size_t P = r->ctx.P;
    run_i_average(r);
    double cd = 0;
    for (int i = 0; i < n; i++) {
        const double *x = trn_params_const(r->trn, i);
        for (size_t k = 0; k < P; k++) {
            double d = x[k] - r->avg[k];
            cd += d * d;
        }
    }
    double acc;
    const double *model = r->alg->eval_params ? r->alg->eval_params(&r->ctx) : r->avg;
    row->time_s = sim_engine_now(r->eng);
    row->steps = cl_total_steps(r->cl);
    if (r->timing_only) {
        /* no model to evaluate and no data to count epochs over */
        row->epochs = row->train_loss = row->test_loss = row->test_accuracy = NAN;
    } else {
        row->epochs = r->alg->samples_done
                    ? r->alg->samples_done(&r->ctx) / (double)r->train.n
                    : (double)(cl_total_steps(r->cl) * (uint64_t)trn_batch(r->trn))
                      / (double)r->train.n;
        const size_t f = run_i_eval_stage(r);
        if (trn_evaluate_at(r->trn, f, model, &r->train, r->eval_idx, r->n_eval,
                            &row->train_loss, &acc) != 0
            || trn_evaluate_at(r->trn, f, model, &r->test, r->test_idx, r->n_test_eval,
                               &row->test_loss, &row->test_accuracy) != 0)
            sim_die_oom();
    }
    row->consensus_distance = sqrt(cd / n);
    row->bytes_sent = cl_total_bytes_sent(r->cl);
}

/* node_metrics.csv: every node's own model on the same test samples as
 * the average model, one row per node per evaluation instant. */
static void record_nodes(run_sim *r, double time_s)
{
    for (int i = 0; i < r->ctx.n; i++) {
        double loss = NAN, acc = NAN;
        if (!r->timing_only)
            if (trn_evaluate_at(r->trn, trn_frozen(r->trn, i), trn_params_const(r->trn, i),
                                &r->test, r->test_idx, r->n_test_eval, &loss, &acc) != 0)
                sim_die_oom();
        out_fmt_double(r->nmf, time_s);
        fprintf(r->nmf, ",%d,%" PRIu64 ",", i, cl_stats(r->cl, i)->steps);
        out_fmt_double(r->nmf, loss);
        fputc(',', r->nmf);
        out_fmt_double(r->nmf, acc);
        fputc('\n', r->nmf);
    }
}

void run_i_record(run_sim *r, const out_metrics_row *row)
{
    r->mf_last = r->mf ? ftell(r->mf) : -1;
    r->nmf_last = r->nmf ? ftell(r->nmf) : -1;
    if (r->mf)
        out_metrics_write(r->mf, row);
    if (r->nmf)
        record_nodes(r, row->time_s);
    r->rows_metrics++;
    r->eval_events += run_i_eval_events(r);
    r->rows_nodes += r->s->metrics_per_node ? (uint64_t)r->s->n_nodes : 0;
    if (r->opt->on_metrics)
        r->opt->on_metrics(r->opt->hook_ctx, row);
    r->last = *row;
    r->have_last = 1;
}

/* Cuts f (a regular temporary file) back to offset at. */
static void cut_back(FILE *f, long at)
{
    if (!f || at < 0)
        return;
    fflush(f);
    if (ftruncate(fileno(f), (off_t)at) == 0)
        fseek(f, at, SEEK_SET);
}

void run_i_record_again(run_sim *r, const out_metrics_row *row)
{
    cut_back(r->mf, r->mf_last);
    cut_back(r->nmf, r->nmf_last);
    run_i_record(r, row);
}

/* An evaluation whose loss is NaN or infinite ends the run as diverged
 * before the row is written, so metrics.csv holds only finite rows.  It
 * names the first node (in node order) holding a parameter that is not
 * finite, or the average model when every node's parameters are finite
 * but the loss overflowed.  O(n P), only on this path. */
int run_i_metrics_diverged(run_sim *r, const out_metrics_row *row)
{
    /* timing only: there is no loss (nan by design) */
    if (r->timing_only || (isfinite(row->train_loss) && isfinite(row->test_loss)))
        return 0;
    const char *what = isfinite(row->train_loss) ? "test loss" : "train loss";
    double v = isfinite(row->train_loss) ? row->test_loss : row->train_loss;
    for (int i = 0; i < r->n_all; i++) {
        const double *x = trn_params_const(r->trn, i);
        for (size_t k = 0; k < r->ctx.P; k++) {
            if (!isfinite(x[k])) {
                snprintf(r->diverged, sizeof r->diverged,
                         "diverged at t=%.10g s: the evaluated %s is %s; node %d (after %"
                         PRIu64 " steps) holds parameter %zu = %s", row->time_s, what,
                         isnan(v) ? "nan" : "inf", i, cl_stats(r->cl, i)->steps, k,
                         isnan(x[k]) ? "nan" : x[k] > 0 ? "inf" : "-inf");
                return 1;
            }
        }
    }
    snprintf(r->diverged, sizeof r->diverged,
             "diverged at t=%.10g s: the evaluated %s of the average model is %s "
             "(every parameter finite; the loss overflowed)", row->time_s, what,
             isnan(v) ? "nan" : "inf");
    return 1;
}
