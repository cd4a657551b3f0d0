/* test_target.c -- time to target placed between evaluations: on one node
 * doing full-batch gradient descent on a linear model (the training loss
 * falls at every step end, k x 0.125 s exactly: dyadic times), each
 * target's crossing instant is the step end a dense evaluation (every
 * 0.0625 s, between step ends) finds, pinned also by value; several
 * targets at once; a stop target ends the run at the evaluation that finds
 * it and reports the step end; a step end at an evaluation's instant but
 * after it; a small buffer gives a bracket that holds the crossing and
 * says how many instants it skipped; bad targets are located errors; the
 * sweep's summary.csv has the columns and values of run.json.
 */
#include "test_util.h"
#include "test_shell.h"

#include <math.h>
#include <stdlib.h>

#define STEP 0.125
/* loss after 29 steps 0.0958 (after 28: 0.1052); test loss after 30
 * steps 0.0993 (after 29: 0.1081); after 8 steps 0.7834 (after 7: 0.8703) */
#define GD(extra_stop, metrics) \
    "{\"seed\": 3, \"nodes\": 1, \"compute\": {\"step_time_s\": 0.125}," \
    " \"topology\": {\"kind\": \"complete\"}, \"model\": {\"kind\": \"linear\"}," \
    " \"data\": {\"kind\": \"synthetic-regression\", \"train\": 64, \"test\": 64," \
    "   \"features\": 2, \"noise\": 0.1}," \
    " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.05, \"batch\": 64}," \
    " \"stop\": {\"time_s\": 8" extra_stop "}, \"metrics\": " metrics "}"

#define TARGETS "\"targets\": [{\"metric\": \"train_loss\", \"value\": 0.1}," \
    " {\"metric\": \"test_loss\", \"value\": 0.1}, {\"metric\": \"train_loss\", \"value\": 0.8}," \
    " {\"metric\": \"train_loss\", \"value\": 5}, {\"metric\": \"train_loss\", \"value\": 1e-6}]"

/* The oracle: losses after each step from evaluations between step ends. */
typedef struct dense { double train[70], test[70]; int n; } dense;

static void on_row(void *ctx, const out_metrics_row *row)
{
    dense *d = ctx;
    if (row->steps < 70) {
        d->train[row->steps] = row->train_loss;
        d->test[row->steps] = row->test_loss;
        if ((int)row->steps + 1 > d->n)
            d->n = (int)row->steps + 1;
    }
}

/* The first step after which the loss is <= v, times the step time. */
static double first_step_end(const double *loss, int n, double v)
{
    for (int k = 0; k < n; k++)
        if (loss[k] <= v)
            return k * STEP;
    return INFINITY;
}

static void check_exact(const run_target *t, double expect)
{
    ck_assert_msg(t->time_s == expect, "time %.17g, expected %.17g", t->time_s, expect);
    ck_assert_uint_eq(t->unchecked, 0);
    ck_assert(t->err_s == 0);
}

START_TEST(test_exact_several_targets)
{
    dense d = { .n = 0 };
    run_options o = { .on_metrics = on_row, .hook_ctx = &d };
    run_result res;
    run_json(GD("", "{\"every_s\": 0.0625}"), &o, &res);
    ck_assert_int_eq(d.n, 65);
    run_json(GD("", "{\"every_s\": 1, " TARGETS "}"), NULL, &res);
    ck_assert_int_eq(res.n_targets, 5);
    /* the oracle and the hand-read values agree */
    ck_assert(first_step_end(d.train, d.n, 0.1) == 29 * STEP);
    ck_assert(first_step_end(d.test, d.n, 0.1) == 30 * STEP);
    ck_assert(first_step_end(d.train, d.n, 0.8) == 8 * STEP);
    check_exact(&res.targets[0], 29 * STEP);
    ck_assert(res.targets[0].lo_s == 28 * STEP);
    check_exact(&res.targets[1], 30 * STEP);
    /* step 8 ends at t = 1 after the evaluation at t = 1 (scheduled
     * before it), which still saw 7 steps: the crossing is at 1, found by
     * the next evaluation */
    check_exact(&res.targets[2], 8 * STEP);
    ck_assert(res.targets[2].lo_s == 8 * STEP);
    /* reached at the first evaluation */
    check_exact(&res.targets[3], 0);
    ck_assert(isinf(res.targets[3].lo_s) && res.targets[3].lo_s < 0);
    ck_assert(isinf(res.targets[4].time_s));
    ck_assert(isnan(res.targets[4].err_s));
    /* measuring never stops the run, and bisection is cheap */
    ck_assert_str_eq(res.stop_reason, "time");
    ck_assert_double_eq(res.sim_time_s, 8);
    ck_assert_int_le(res.targets[0].evaluations, 4);
}
END_TEST

/* stop.target_loss ends the run at the evaluation that finds it (t = 4),
 * its time to target is the step end (3.625). */
START_TEST(test_stop_target_at_evaluation)
{
    run_result res;
    run_json(GD(", \"target_loss\": 0.1", "{\"every_s\": 1}"), NULL, &res);
    ck_assert_str_eq(res.stop_reason, "target_loss");
    ck_assert_double_eq(res.sim_time_s, 4);
    ck_assert_int_eq(res.n_targets, 1);
    ck_assert(res.targets[0].stop);
    check_exact(&res.targets[0], 29 * STEP);
}
END_TEST

/* Evaluations every 0.0625 s: the step ending at 3.625 is handled before
 * the evaluation at 3.625 (scheduled earlier), which finds the target;
 * the crossing is that instant, and the previous evaluation's state the
 * last not reached. */
START_TEST(test_crossing_before_evaluation_same_instant)
{
    run_result res;
    run_json(GD("", "{\"every_s\": 0.0625, \"targets\": [{\"metric\": \"train_loss\", "
                "\"value\": 0.1}]}"), NULL, &res);
    check_exact(&res.targets[0], 29 * STEP);
    ck_assert(res.targets[0].lo_s == 29 * STEP - 0.0625);
}
END_TEST

/* Two models kept over one 8 s period of 63 change instants: every 32nd
 * is kept, and the bracket (0, 4] holds the crossing at 3.625. */
START_TEST(test_bracket_when_thinned)
{
    run_result res;
    run_json(GD("", "{\"every_s\": 8, \"target_snapshots\": 2, "
                "\"targets\": [{\"metric\": \"train_loss\", \"value\": 0.1}]}"), NULL, &res);
    const run_target *t = &res.targets[0];
    ck_assert(t->time_s == 32 * STEP);
    ck_assert(t->lo_s == 0);
    ck_assert_uint_eq(t->unchecked, 31);
    ck_assert(t->err_s == 4);
    /* for every buffer size: the crossing lies in (lo, time], time is a
     * step end and `unchecked` counts the step ends strictly between */
    for (int k = 2; k <= 80; k += 3) {
        char json[4096];
        snprintf(json, sizeof json, GD("", "{\"every_s\": 8, \"target_snapshots\": %d, "
                 "\"targets\": [{\"metric\": \"train_loss\", \"value\": 0.1}]}"), k);
        run_json(json, NULL, &res);
        t = &res.targets[0];
        ck_assert_msg(t->lo_s < 29 * STEP && 29 * STEP <= t->time_s, "K %d: (%g, %g]", k,
                      t->lo_s, t->time_s);
        ck_assert(t->time_s == round(t->time_s / STEP) * STEP);
        ck_assert_uint_eq(t->unchecked, (uint64_t)round((t->time_s - t->lo_s) / STEP) - 1);
        ck_assert(t->err_s == (t->unchecked ? t->time_s - t->lo_s : 0));
        if (k >= 63)
            check_exact(t, 29 * STEP);
    }
}
END_TEST

/* The stride follows the rate of change instants: 7 step ends in (0, 1]
 * with 2 models kept need one in 4; from t = 1 steps take 0.5 s (a 4x
 * window), so (1, 2] keeps none of its 2 (the bracket of loss 0.85, whose
 * step ends at 1: (1, 1.5], one instant unchecked) and (2, 3] goes back to
 * keeping every one (loss 0.6 crosses at 2.5 exactly). */
START_TEST(test_stride_follows_rate)
{
    run_result res;
    run_json("{\"seed\": 3, \"nodes\": 1, \"compute\": {\"step_time_s\": 0.125,"
             " \"slowdowns\": [{\"kind\": \"window\", \"start_s\": 1, \"factor\": 4}]},"
             " \"topology\": {\"kind\": \"complete\"}, \"model\": {\"kind\": \"linear\"},"
             " \"data\": {\"kind\": \"synthetic-regression\", \"train\": 64, \"test\": 64,"
             " \"features\": 2, \"noise\": 0.1}, \"algorithm\": {\"name\": \"dpsgd\","
             " \"lr\": 0.05, \"batch\": 64}, \"stop\": {\"time_s\": 8},"
             " \"metrics\": {\"every_s\": 1, \"target_snapshots\": 2, \"targets\": ["
             "{\"metric\": \"train_loss\", \"value\": 0.85},"
             " {\"metric\": \"train_loss\", \"value\": 0.6}]}}", NULL, &res);
    ck_assert(res.targets[0].time_s == 1.5 && res.targets[0].lo_s == 1);
    ck_assert_uint_eq(res.targets[0].unchecked, 1);
    ck_assert(res.targets[0].err_s == 0.5);
    check_exact(&res.targets[1], 2.5);
}
END_TEST

/* Several nodes mixing (message deliveries change models too): with every
 * change instant kept, the time found lies between the last evaluation
 * that had not reached the target and the first that had, in a run
 * evaluating every 1/4096 s (no targets: an independent oracle). */
typedef struct first_row { double v, before, at; } first_row;

static void on_first(void *ctx, const out_metrics_row *row)
{
    first_row *f = ctx;
    if (isinf(f->at) && row->train_loss <= f->v)
        f->at = row->time_s;
    else if (isinf(f->at))
        f->before = row->time_s;
}

#define MIX(metrics) \
    "{\"seed\": 5, \"nodes\": 4, \"compute\": {\"step_time_s\": 0.01, \"noise\": " \
    "{\"dist\": \"lognormal\", \"sigma\": 0.3}}, \"network\": {\"latency_s\": 0.001," \
    " \"bandwidth_Bps\": 1e7}, \"topology\": {\"kind\": \"ring\"}," \
    " \"model\": {\"kind\": \"softmax\"}, \"data\": {\"train\": 512, \"test\": 256," \
    " \"features\": 4, \"classes\": 3, \"separation\": 1}," \
    " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.05, \"batch\": 16}," \
    " \"stop\": {\"time_s\": 0.5}, \"metrics\": " metrics "}"

START_TEST(test_exact_with_messages)
{
    run_result res;
    run_json(MIX("{\"every_s\": 0.25, \"targets\": [{\"metric\": \"train_loss\", "
                 "\"value\": 0.9}]}"), NULL, &res);
    const run_target *t = &res.targets[0];
    ck_assert(isfinite(t->time_s) && t->unchecked == 0 && t->err_s == 0);
    ck_assert(t->time_s > 0 && t->time_s < 0.25);
    first_row f = { 0.9, -1, INFINITY };
    run_options o = { .on_metrics = on_first, .hook_ctx = &f };
    char json[4096];
    run_result dense_res;
    snprintf(json, sizeof json, MIX("{\"every_s\": %.17g}"), 1.0 / 4096);
    run_json(json, &o, &dense_res);
    ck_assert_msg(f.before < t->time_s && t->time_s <= f.at, "%.17g not in (%.17g, %.17g]",
                  t->time_s, f.before, f.at);
}
END_TEST

START_TEST(test_bad_targets)
{
    static const struct { const char *metrics, *msg; } bad[] = {
        {"{\"targets\": [{\"metric\": \"accuracy\", \"value\": 0.5}]}",
         "test.json: /metrics/targets/0/metric: error: unknown metric \"accuracy\" (expected "
         "one of: train_loss, test_loss, test_accuracy)"},
        {"{\"targets\": [{\"metric\": \"train_loss\", \"value\": 0.5}, {\"metric\": "
         "\"test_accuracy\", \"value\": 0.5}]}",
         "test.json: /metrics/targets/1/metric: error: \"test_accuracy\" has no meaning for "
         "model \"linear\" (regression); use train_loss or test_loss"},
        {"{\"targets\": [{\"metric\": \"train_loss\", \"value\": -1}]}",
         "test.json: /metrics/targets/0/value: error: must be > 0, got -1"},
        {"{\"targets\": [{\"metric\": \"train_loss\"}]}",
         "test.json: /metrics/targets/0: error: missing required key \"value\""},
        {"{\"targets\": [{\"metric\": \"train_loss\", \"value\": 1, \"stop\": true}]}",
         "test.json: /metrics/targets/0: error: unknown key \"stop\" (expected one of: "
         "metric, value)"},
        {"{\"targets\": {\"metric\": \"train_loss\", \"value\": 1}}",
         "test.json: /metrics/targets: error: must be an array of {\"metric\", \"value\"} "
         "objects, got an object"},
        {"{\"target_snapshots\": 1}",
         "test.json: /metrics/target_snapshots: error: must be >= 2, got 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char json[4096];
        snprintf(json, sizeof json, GD("", "%s"), bad[i].metrics);
        expect_prepare_error(json, bad[i].msg);
    }
    expect_prepare_error("{\"nodes\": 2, \"model\": {\"kind\": \"none\", \"message_bytes\": 1000}, \"stop\": "
                         "{\"steps\": 5}, \"algorithm\": {\"name\": \"dpsgd\"},"
                         " \"metrics\": {\"targets\": [{\"metric\": \"test_accuracy\","
                         " \"value\": 0.5}]}}",
                         "test.json: /metrics/targets/0/metric: error: has no meaning for "
                         "model \"none\" (timing only: nothing is evaluated)");
    expect_prepare_error("{\"nodes\": 2, \"stop\": {\"steps\": 5}, \"algorithm\": {\"name\": "
                         "\"dpsgd\"}, \"metrics\": {\"targets\": [{\"metric\": \"test_accuracy\","
                         " \"value\": 1.5}]}}",
                         "test.json: /metrics/targets/0/value: error: must be in (0, 1], got 1.5");
}
END_TEST

/* summary.csv: the stop target's time in the old column, metrics.targets
 * in four columns each after wall_s; and `dtsim run` without targets
 * writes no "targets" into run.json. */
START_TEST(test_sweep_summary_columns)
{
    make_tmp();
    FILE *f;
    char path[512];
    snprintf(path, sizeof path, "%s/gd.json", tmpdir);
    ck_assert((f = fopen(path, "w")) != NULL);
    fputs(GD(", \"target_loss\": 0.1", "{\"every_s\": 1, \"targets\": [{\"metric\": "
             "\"test_loss\", \"value\": 0.1}, {\"metric\": \"train_loss\", \"value\": 0.8}]}"),
          f);
    fclose(f);
    ck_assert_int_eq(sh("%s sweep %s --grid seed=3 --quiet -o %s/sw", DTSIM_BINARY, path,
                        tmpdir), 0);
    char *sum = slurpf("%s/sw/summary.csv", tmpdir);
    ck_assert_ptr_nonnull(sum);
    ck_assert_ptr_nonnull(strstr(sum, ",time_to_target_accuracy_s,steps_per_s,events,wall_s,"
                                 "target_1_metric,target_1_value,time_to_target_1_s,"
                                 "time_to_target_1_error_s,target_2_metric,target_2_value,"
                                 "time_to_target_2_s,time_to_target_2_error_s\n"));
    /* stop at 4 (the evaluation), target loss 0.1 at 3.625; test loss 0.1
     * at 3.75, found by that same evaluation; train loss 0.8 at 1 */
    ck_assert_ptr_nonnull(strstr(sum, ",ok,target_loss,4,"));
    ck_assert_ptr_nonnull(strstr(sum, ",0.1,3.625,nan,nan,"));
    ck_assert_ptr_nonnull(strstr(sum, ",test_loss,0.1,3.75,0,train_loss,0.8,1,0\n"));
    free(sum);
    ck_assert((f = fopen(path, "w")) != NULL);
    fputs(GD("", "{\"every_s\": 1}"), f);
    fclose(f);
    ck_assert_int_eq(sh("%s run %s --quiet -o %s/r", DTSIM_BINARY, path, tmpdir), 0);
    char *json = slurpf("%s/r/run.json", tmpdir);
    ck_assert_ptr_nonnull(json);
    ck_assert_ptr_null(strstr(json, "\"targets\""));
    free(json);
    remove_tmp();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("target");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_exact_several_targets);
    tcase_add_test(tc, test_stop_target_at_evaluation);
    tcase_add_test(tc, test_crossing_before_evaluation_same_instant);
    tcase_add_test(tc, test_bracket_when_thinned);
    tcase_add_test(tc, test_stride_follows_rate);
    tcase_add_test(tc, test_exact_with_messages);
    tcase_add_test(tc, test_bad_targets);
    tcase_add_test(tc, test_sweep_summary_columns);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
