/* run_target.c -- time to target between evaluation instants.  The
 * evaluated model (the workers' average, or the protocol's eval_params)
 * changes only at instants where an event can change parameters; while a
 * target (stop.target_*, metrics.targets) is not yet reached, the model is
 * copied at those instants into a bounded buffer, thinned by halving (every
 * stride-th instant is kept, stride doubling when the buffer is full, and
 * each period starting at the stride the previous one needed).  At
 * the evaluation that first finds a target reached, a bisection over
 * [previous evaluation, kept models..., this evaluation] places the
 * crossing between two adjacent checked states: exact (to the event
 * instant) when every parameter-change instant of the period was kept.
 * It decides no stop and writes no file; run.c asks it and stops, the
 * writers report run_target records (docs/outputs.md, "Time to target").
 */
#include "run_internal.h"
#include "mdl_freeze.h"

/* The buffer's default: as many models as fit in RUN_TARGET_SNAP_BYTES,
 * within [RUN_TARGET_SNAP_MIN, RUN_TARGET_SNAP_MAX]. */
#define RUN_TARGET_SNAP_BYTES (32.0 * 1024 * 1024)
#define RUN_TARGET_SNAP_MIN   16
#define RUN_TARGET_SNAP_MAX   4096

size_t run_i_target_snapshots(const run_sim *r, size_t P)
{
    const scn_scenario *s = r->s;
    int any = s->metrics_n_targets > 0 || !isnan(s->stop_target_loss)
              || !isnan(s->stop_target_accuracy);
    if (!any || P == 0)
        return 0;
    if (s->metrics_target_snapshots > 0)
        return (size_t)s->metrics_target_snapshots;
    double k = floor(RUN_TARGET_SNAP_BYTES / (8.0 * (double)P));
    return k < RUN_TARGET_SNAP_MIN ? RUN_TARGET_SNAP_MIN
         : k > RUN_TARGET_SNAP_MAX ? RUN_TARGET_SNAP_MAX : (size_t)k;
}

static void add_target(run_sim *r, scn_target_metric m, double value, int stop)
{
    run_target *t = &r->tg[r->n_tg++];
    *t = (run_target){ .metric = m, .value = value, .stop = stop, .time_s = INFINITY,
                       .lo_s = NAN, .err_s = NAN };
}

int run_i_targets_begin(run_sim *r)
{
    const scn_scenario *s = r->s;
    r->n_tg = 0;
    if (!isnan(s->stop_target_loss))
        add_target(r, SCN_TARGET_TRAIN_LOSS, s->stop_target_loss, 1);
    if (!isnan(s->stop_target_accuracy))
        add_target(r, SCN_TARGET_TEST_ACCURACY, s->stop_target_accuracy, 1);
    for (size_t i = 0; i < s->metrics_n_targets; i++)
        add_target(r, s->metrics_targets[i].metric, s->metrics_targets[i].value, 0);
    r->tg_pending = r->timing_only ? 0 : r->n_tg;
    r->snap_cap = r->tg_pending ? run_i_target_snapshots(r, r->ctx.P) : 0;
    r->snap_n = 0;
    r->snap_stride = 1;
    r->snap_count = 0;
    r->snap_dirty = 0;
    r->snap_now = 0;
    r->snap_last_t = 0;
    r->tg_have_prev = 0;
    r->tg_prev_s = 0;
    r->snap = NULL;
    r->snap_t = NULL;
    r->snap_f = NULL;
    if (r->snap_cap == 0)
        return 0;
    r->snap = malloc(r->snap_cap * r->ctx.P * sizeof(double));
    r->snap_t = malloc(r->snap_cap * sizeof(double));
    r->snap_f = malloc(r->snap_cap * sizeof *r->snap_f);
    return r->snap && r->snap_t && r->snap_f ? 0 : -1;
}

void run_i_targets_end(run_sim *r)
{
    free(r->snap);
    free(r->snap_t);
    free(r->snap_f);
    r->snap = NULL;
    r->snap_t = NULL;
    r->snap_f = NULL;
}

/* The evaluated model as it stands now (the buffer r->avg, or the
 * protocol's own). */
static const double *model_now(run_sim *r)
{
    if (r->alg->eval_params)
        return r->alg->eval_params(&r->ctx);
    run_i_average(r);
    return r->avg;
}

/* Keeps the model of instant t (the state after all its events), one
 * parameter-change instant in every snap_stride. */
static void keep(run_sim *r, double t)
{
    size_t P = r->ctx.P;
    r->snap_last_t = t;
    if (++r->snap_count % r->snap_stride != 0)
        return;
    if (r->snap_n == r->snap_cap) {
        /* entry j holds instant (j + 1) x stride: keep those at multiples
         * of twice the stride, the odd j */
        size_t m = 0;
        for (size_t j = 1; j < r->snap_n; j += 2, m++) {
            memcpy(r->snap + m * P, r->snap + j * P, P * sizeof(double));
            r->snap_t[m] = r->snap_t[j];
            r->snap_f[m] = r->snap_f[j];
        }
        r->snap_n = m;
        r->snap_stride *= 2;
        if (r->snap_count % r->snap_stride != 0)
            return;
    }
    memcpy(r->snap + r->snap_n * P, model_now(r), P * sizeof(double));
    r->snap_t[r->snap_n] = t;
    r->snap_f[r->snap_n++] = run_i_eval_stage(r);
}

void run_i_targets_event(run_sim *r, const sim_event *ev)
{
    if (!r->tg_pending)
        return;
    if (ev->time > r->snap_now) {
        if (r->snap_dirty)
            keep(r, r->snap_now);
        r->snap_now = ev->time;
        r->snap_dirty = 0;
    }
    /* only the metrics clock and, with FIFO links, a first bit reaching a
     * downlink (it schedules the delivery and calls no one) leave every
     * parameter as it was */
    if (ev->kind != EV_METRICS
        && !(ev->kind == CL_EV_ARRIVE && r->s->discipline == CL_NIC_FIFO))
        r->snap_dirty = 1;
}

static double row_metric(const out_metrics_row *row, scn_target_metric m)
{
    return m == SCN_TARGET_TRAIN_LOSS ? row->train_loss
         : m == SCN_TARGET_TEST_LOSS ? row->test_loss : row->test_accuracy;
}

static int reached(const run_target *t, double v)
{
    return t->metric == SCN_TARGET_TEST_ACCURACY ? v >= t->value : v <= t->value;
}

/* The target's metric of the model x of stage f (the network it is
 * evaluated as: run_i_eval_stage when it was kept), on the evaluation's
 * samples. */
static double metric_of(run_sim *r, const double *x, size_t f, scn_target_metric m)
{
    double loss, acc;
    mdl_set_frozen(r->model, f);
    if (m == SCN_TARGET_TRAIN_LOSS)
        mdl_evaluate(r->model, x, &r->train, r->eval_idx, r->n_eval, &loss, &acc);
    else
        mdl_evaluate(r->model, x, &r->test, r->test_idx, r->n_test_eval, &loss, &acc);
    return m == SCN_TARGET_TEST_ACCURACY ? acc : loss;
}

/* The parameter-change instant (counted from 1 in this period) that
 * state j of bisect holds, and its time. */
static uint64_t state_instant(const run_sim *r, size_t j)
{
    return j == 0 ? 0 : j <= r->snap_n ? (uint64_t)j * r->snap_stride : r->snap_count;
}

static double state_time(const run_sim *r, size_t j)
{
    return j == 0 ? r->tg_prev_s : j <= r->snap_n ? r->snap_t[j - 1] : r->snap_last_t;
}

/* States 0 .. snap_n + 1: the previous evaluation (not reached), the kept
 * models, this evaluation (reached; it holds the period's last change
 * instant).  Bisection keeps lo not reached and hi reached until they are
 * adjacent, O(log snap_n) evaluations: the metric crossed the target at
 * one of the change instants after lo's up to hi's, and at hi's exactly
 * when none lies strictly between. */
static void bisect(run_sim *r, run_target *t)
{
    size_t lo = 0, hi = r->snap_n + 1;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        t->evaluations++;
        if (reached(t, metric_of(r, r->snap + (mid - 1) * r->ctx.P, r->snap_f[mid - 1],
                                 t->metric)))
            hi = mid;
        else
            lo = mid;
    }
    t->time_s = state_time(r, hi);
    t->lo_s = state_time(r, lo);
    uint64_t a = state_instant(r, lo), b = state_instant(r, hi);
    t->unchecked = b > a + 1 ? b - a - 1 : 0;
    t->err_s = t->unchecked == 0 ? 0 : t->time_s - t->lo_s;
}

int run_i_targets_eval(run_sim *r, const out_metrics_row *row)
{
    int stop = 0;
    if (!r->tg_pending)
        return 0;
    /* the period's last change instant (possibly this one, by events
     * handled before the evaluation) */
    if (r->snap_dirty)
        keep(r, r->snap_now);
    for (int i = 0; i < r->n_tg; i++) {
        run_target *t = &r->tg[i];
        if (!isinf(t->time_s) || !reached(t, row_metric(row, t->metric)))
            continue;
        if (!r->tg_have_prev) {   /* reached at the start */
            t->time_s = row->time_s;
            t->lo_s = -INFINITY;
            t->err_s = 0;
        } else {
            bisect(r, t);
        }
        r->tg_pending--;
        if (t->stop && !stop)
            stop = t->metric == SCN_TARGET_TRAIN_LOSS ? STOP_TARGET_LOSS
                                                     : STOP_TARGET_ACCURACY;
    }
    /* the next period starts at the stride this one would have needed:
     * models that would be thinned away are never computed (a period
     * with fewer change instants than the last gets a smaller one) */
    uint64_t stride = 1;
    while (r->snap_count > stride * r->snap_cap)
        stride *= 2;
    r->snap_n = 0;
    r->snap_stride = stride;
    r->snap_count = 0;
    r->snap_dirty = 0;
    r->snap_now = row->time_s;
    r->tg_have_prev = 1;
    r->tg_prev_s = row->time_s;
    return stop;
}
