/* test_batching.c -- speed-proportional batches for synchronous SGD
 * (ps-sync's `batching: "speed"`, alg_batchplan.c; issue 18 item 6): the
 * integer split sums to the total by largest remainders, at least one
 * sample each, caps water-filled; every step lasts total batch / sum of
 * per-sample speeds (closed form, no noise), for step times and for FLOPs;
 * measured speeds reach the same plan after one uniform iteration; the
 * server applies the batch-weighted mean of the gradients; a batch above
 * the model's bound is the mean over all its samples; bad parameters are
 * located errors; uniform batching is the old path.  The same for the
 * all-reduce protocol (`allreduce`): steps of total / sum of speeds, one
 * round every 2 s plus the ring's closed form, every node on the
 * batch-weighted mean (one collective and bucketed), measured speeds, and
 * the plan over the live members after a crash.
 */
#include "exact_util.h"
#include "alg_batchplan.h"
#include "trn.h"

/* ---- the split ---- */

static void split_ok(const double *w, const size_t *cap, int n, size_t total, size_t *out)
{
    ck_assert_int_eq(alg_bp_split(w, cap, n, total, out), 0);
}

START_TEST(test_split_hand_cases)
{
    size_t big[4] = { 1000, 1000, 1000, 1000 }, b[4];
    /* 10 / 3 each: floors 3, 3, 3 and the extra sample to the lowest index */
    split_ok((double[]){ 1, 1, 1 }, big, 3, 10, b);
    ck_assert(b[0] == 4 && b[1] == 3 && b[2] == 3);
    /* quotas 3.5, 2.33, 1.17: floors 6, the largest remainder (0.5) takes one */
    split_ok((double[]){ 3, 2, 1 }, big, 3, 7, b);
    ck_assert(b[0] == 4 && b[1] == 2 && b[2] == 1);
    /* 2/3 and 1/3 of 32 samples x 4 speeds 8, 4, 2, 2: 16, 8, 4, 4 exactly */
    split_ok((double[]){ 8, 4, 2, 2 }, big, 4, 32, b);
    ck_assert(b[0] == 16 && b[1] == 8 && b[2] == 4 && b[3] == 4);
    /* at least one each: quotas 2.994, 0.001, 0.001 give 1, 1, 1 */
    split_ok((double[]){ 1000, 1, 1 }, big, 3, 3, b);
    ck_assert(b[0] == 1 && b[1] == 1 && b[2] == 1);
    split_ok((double[]){ 1000, 1, 1 }, big, 3, 5, b);
    ck_assert(b[0] == 3 && b[1] == 1 && b[2] == 1);
    /* a cap that binds: worker 0 wants 10 of 12, holds 5; 7 left for two */
    split_ok((double[]){ 10, 1, 1 }, (size_t[]){ 5, 100, 100 }, 3, 12, b);
    ck_assert(b[0] == 5 && b[1] == 4 && b[2] == 3);
    /* the rest after a binding cap is split in proportion again: 9 of
     * weights 2 and 1 is 6 and 3 (not the 5 and 4 of one more each) */
    split_ok((double[]){ 10, 2, 1 }, (size_t[]){ 5, 100, 100 }, 3, 14, b);
    ck_assert(b[0] == 5 && b[1] == 6 && b[2] == 3);
    /* a worker of weight 0 is left out and left alone */
    b[1] = 77;
    split_ok((double[]){ 1, 0, 3 }, big, 3, 8, b);
    ck_assert(b[0] == 2 && b[1] == 77 && b[2] == 6);
    /* impossible: fewer samples than workers, more than they hold */
    ck_assert_int_eq(alg_bp_split((double[]){ 1, 1, 1 }, big, 3, 2, b), -1);
    ck_assert_int_eq(alg_bp_split((double[]){ 1, 1 }, (size_t[]){ 3, 4 }, 2, 8, b), -1);
}
END_TEST

/* Random weights, caps and totals: the batches sum to the total, lie in
 * [1, cap], and without a binding cap or minimum are floor or ceil of the
 * quota. */
START_TEST(test_split_sums_to_total)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5);
    enum { N = 37 };
    double w[N];
    size_t cap[N], b[N];
    for (int trial = 0; trial < 2000; trial++) {
        int n = 1 + (int)gsl_rng_uniform_int(r, N);
        size_t capsum = 0;
        int capped = trial % 2;
        for (int i = 0; i < n; i++) {
            w[i] = 0.01 + gsl_rng_uniform(r) * (trial % 3 == 0 ? 100 : 2);
            cap[i] = capped ? 1 + gsl_rng_uniform_int(r, 40) : 1000000;
            capsum += cap[i];
        }
        size_t total = (size_t)n + gsl_rng_uniform_int(r, (unsigned long)(capsum - (size_t)n + 1 > 5000 ? 5000 : capsum - (size_t)n + 1));
        split_ok(w, cap, n, total, b);
        size_t sum = 0;
        double S = 0;
        for (int i = 0; i < n; i++)
            S += w[i];
        int minimum_bound = 0;
        for (int i = 0; i < n; i++) {
            ck_assert(b[i] >= 1 && b[i] <= cap[i]);
            sum += b[i];
            minimum_bound |= (double)total * w[i] / S < 1;
        }
        ck_assert_uint_eq(sum, total);
        if (!capped && !minimum_bound)
            for (int i = 0; i < n; i++) {
                double q = (double)total * w[i] / S;
                ck_assert_msg(fabs((double)b[i] - q) < 1, "trial %d: %zu for quota %g", trial,
                              b[i], q);
            }
    }
    gsl_rng_free(r);
}
END_TEST

/* ---- step times: total batch / sum of per-sample speeds ---- */

/* 4 workers of step times 1, 2, 4, 4 s for batch 8: per-sample speeds 8,
 * 4, 2, 2 (sum 16); speed batches of a total of 32 are 16, 8, 4, 4, and
 * every step lasts 32 / 16 = 2 s.  Links of 0.1 ms at 1 GB/s. */
#define HETN(name, compute, alg, extra) \
    "{\"seed\": 2, \"nodes\": 4, \"model\": {\"kind\": \"logistic\"}," \
    " \"data\": {\"train\": 480, \"test\": 60, \"features\": 3}," \
    " \"compute\": " compute "," \
    " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9}," extra \
    " \"algorithm\": {\"name\": \"" name "\", \"lr\": 0.1, \"batch\": 8" alg "}," \
    " \"stop\": {\"time_s\": 9.5}, \"output\": {\"trace\": true}}"
#define HET(compute, alg) HETN("ps-sync", compute, alg, "")
#define HETA(compute, alg) HETN("allreduce", compute, alg, "")
#define STEPS_S "{\"step_time_s\": 1, \"groups\": [{\"nodes\": [1], \"step_time_s\": 2}," \
    " {\"nodes\": [\"2-3\"], \"step_time_s\": 4}]}"
/* the logistic model on 3 features costs 4 x 3 = 12 FLOPs a sample (its
 * forward and backward products): 96 a step of 8, so 96, 48 and 24 FLOP/s
 * give 1, 2 and 4 s */
#define FLOPS "{\"flops_per_s\": 96, \"groups\": [{\"nodes\": [1], \"flops_per_s\": 48}," \
    " {\"nodes\": [\"2-3\"], \"flops_per_s\": 24}]}"

static trace_row rows[4096];

/* Runs json and returns the step rows of trace.csv. */
static int step_rows(const char *json, run_result *res)
{
    char dir[] = "/tmp/dtsim-test-batching-XXXXXX", path[600];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    run_options opt = { .out_dir = dir };
    run_json(json, &opt, res);
    ck_assert_int_eq(res->status, RUN_OK);
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    int n = read_trace(path, rows, 4096), k = 0;
    for (int j = 0; j < n; j++)
        if (strcmp(rows[j].kind, "step") == 0)
            rows[k++] = rows[j];
    rm_run_dir(dir);
    return k;
}

static void expect_durations(int k, const double *want, int first_iter)
{
    int seen[4] = { 0 };
    for (int j = 0; j < k; j++) {
        int i = rows[j].node;
        double d = rows[j].end - rows[j].start, w = seen[i] < first_iter ? want[4 + i] : want[i];
        ck_assert_msg(fabs(d - w) < 1e-9, "node %d step %d lasts %.12g s, want %.12g", i,
                      seen[i], d, w);
        seen[i]++;
    }
}

START_TEST(test_steps_last_total_over_speed_sum)
{
    const char *cases[] = { HET(STEPS_S, ", \"batching\": \"speed\""),
                            HET(FLOPS, ", \"batching\": \"speed\"") };
    for (int c = 0; c < 2; c++) {
        run_result res;
        int k = step_rows(cases[c], &res);
        /* each iteration: 2 s of compute + push and model (2 x 0.1 ms and
         * 4 x 32 B at 1 GB/s on the server's NIC): 4 iterations by 9.5 s */
        ck_assert_int_ge(k, 16);
        expect_durations(k, (const double[]){ 2, 2, 2, 2, 2, 2, 2, 2 }, 0);
        ck_assert_double_eq(stat_of(&res, "batch_min"), 4);
        ck_assert_double_eq(stat_of(&res, "batch_max"), 16);
    }
    /* uniform batches: the step times as configured, one iteration per 4 s */
    run_result res;
    int k = step_rows(HET(STEPS_S, ""), &res);
    expect_durations(k, (const double[]){ 1, 2, 4, 4, 1, 2, 4, 4 }, 0);
}
END_TEST

/* Measured speeds: the first iteration is uniform (1, 2, 4, 4 s); its
 * observed per-sample times are exact without noise, so from the second
 * on the plan is the configured one and steps last 2 s. */
START_TEST(test_measured_speeds_converge_to_the_plan)
{
    run_result res;
    int k = step_rows(HET(STEPS_S, ", \"batching\": \"speed\", \"batch_source\": \"measured\""),
                      &res);
    ck_assert_int_ge(k, 12);
    expect_durations(k, (const double[]){ 2, 2, 2, 2, 1, 2, 4, 4 }, 1);
    ck_assert_double_ge(stat_of(&res, "batch_rebalances"), 2);
    /* rebalance_every 2: iteration 2 still uniform; from iteration 3, 2 s */
    k = step_rows(HET(STEPS_S, ", \"batching\": \"speed\", \"batch_source\": \"measured\","
                  " \"rebalance_every\": 2"), &res);
    expect_durations(k, (const double[]){ 2, 2, 2, 2, 1, 2, 4, 4 }, 2);
}
END_TEST

/* The EWMA by hand: two workers of 1 s per 8 samples, total 16, speed_ewma
 * 0.25; worker 1 is 2x slower until 2.0001 s, i.e. during its first step
 * only.  Iteration 1 (uniform 8, 8): 1 s and 2 s, estimates 1/8 and 1/4 s
 * a sample (the first taken as it is), speeds 8 and 4: quotas 10.67 and
 * 5.33 -> 11, 5.  Iteration 2: 1.375 s and 0.625 s, both 1/8 s a sample;
 * worker 1's estimate 0.25/8 + 0.75/4 = 0.21875, speed 4.571: quotas 10.18
 * and 5.82 -> 10, 6, so iteration 3 lasts 1.25 s and 0.75 s.  (Weights
 * swapped, 0.75 on the newest, would give 9, 7.) */
START_TEST(test_measured_ewma_by_hand)
{
    run_result res;
    int k = step_rows("{\"seed\": 2, \"nodes\": 2, \"model\": {\"kind\": \"logistic\"},"
        " \"data\": {\"train\": 480, \"test\": 60, \"features\": 3},"
        " \"compute\": {\"step_time_s\": 1, \"slowdowns\": [{\"kind\": \"window\","
        " \"nodes\": [1], \"start_s\": 0, \"end_s\": 2.0001, \"factor\": 2}]},"
        " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9},"
        " \"algorithm\": {\"name\": \"ps-sync\", \"lr\": 0.1, \"batch\": 8,"
        " \"batching\": \"speed\", \"batch_source\": \"measured\", \"speed_ewma\": 0.25},"
        " \"stop\": {\"time_s\": 5.2}, \"output\": {\"trace\": true}}", &res);
    const double want[2][3] = { { 1, 1.375, 1.25 }, { 2, 0.625, 0.75 } };
    int seen[2] = { 0 };
    for (int j = 0; j < k; j++) {
        int i = rows[j].node;
        if (seen[i] < 3)
            ck_assert_msg(fabs(rows[j].end - rows[j].start - want[i][seen[i]]) < 1e-9,
                          "node %d step %d lasts %.12g s", i, seen[i], rows[j].end - rows[j].start);
        seen[i]++;
    }
    ck_assert_int_ge(seen[0], 3);
    ck_assert_int_ge(seen[1], 3);
}
END_TEST

/* ---- the weighted mean ---- */

/* Each worker's gradient points at its own target: with batches 16, 8, 4,
 * 4 the server lands on (16 t0 + 8 t1 + 4 t2 + 4 t3) / 32; the plain mean
 * of the targets (an unweighted average) lands elsewhere. */
START_TEST(test_server_applies_the_batch_weighted_mean)
{
    set_targets(4, MAXP);
    run_result res;
    run_wrapped(HET(STEPS_S, ", \"batching\": \"speed\""),
                wrap_p("ps-sync", G_TARGET, 0.1, "batching=speed"), zero_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    const double b[4] = { 16, 8, 4, 4 };
    for (size_t k = 0; k < cap_P; k++) {
        double want = 0;
        for (int i = 0; i < 4; i++)
            want += b[i] * target[i][k];
        want /= 32;
        ck_assert_msg(fabs(cap_x[cap_server][k] - want) < 1e-12, "parameter %zu: %.17g, want %.17g",
                      k, cap_x[cap_server][k], want);
    }
}
END_TEST

/* A node's batch above the model's own bound (8) is taken in chunks whose
 * gradients are averaged by size: the mean over all its samples, as one
 * model of a large enough bound computes it.  The node's first batch of
 * its whole partition (100 samples: 12 chunks of 8 and one of 4) is its
 * partition in some order. */
START_TEST(test_large_batch_is_the_mean_over_its_samples)
{
    mdl_dataset train, test;
    mdl_partition part;
    mdl_synth_spec sp = { .n_train = 400, .n_test = 10, .d = 15, .n_classes = 4, .separation = 1 };
    ck_assert_int_eq(mdl_synth_generate(&sp, 3, &train, &test), 0);
    ck_assert_int_eq(mdl_partition_iid(train.n, 4, 5, &part), 0);
    mdl_model *m = mdl_create(&mdl_softmax, 15, 4, 0.01, 8);
    mdl_model *big = mdl_create(&mdl_softmax, 15, 4, 0.01, 100);
    trn_config tc = { .n_nodes = 4, .seed = 9, .model = m, .train = &train, .part = &part,
                      .batch = 8 };
    trn_trainer *t = trn_create(&tc);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(trn_init_params(t), 0);
    size_t P = trn_n_params(t), n1 = part.off[2] - part.off[1];
    ck_assert_uint_eq(n1, 100);
    ck_assert_int_eq(trn_set_batch(t, 1, 101), -1);
    ck_assert_int_eq(trn_set_batch(t, 1, 0), -1);
    ck_assert_int_eq(trn_set_batch(t, 1, n1), 0);
    ck_assert_uint_eq(trn_node_batch(t, 1), 100);
    ck_assert_uint_eq(trn_node_batch(t, 0), 8);
    double *x = trn_params(t, 1);
    for (size_t k = 0; k < P; k++)
        x[k] = 0.01 * (double)(k % 7) - 0.02;
    trn_step_begin(t, 1, 1, 0);
    double want[64];
    ck_assert_uint_le(P, 64);
    mdl_loss_grad(big, trn_params_const(t, 1), &train, part.idx + part.off[1], n1, want);
    const double *g = trn_grad(t, 1);
    for (size_t k = 0; k < P; k++)
        ck_assert_msg(fabs(g[k] - want[k]) < 1e-13, "gradient %zu: %.17g, want %.17g", k, g[k],
                      want[k]);
    trn_destroy(t);
    mdl_destroy(m);
    mdl_destroy(big);
    mdl_partition_fini(&part);
    mdl_dataset_fini(&train);
    mdl_dataset_fini(&test);
}
END_TEST

/* ---- errors and the default path ---- */

START_TEST(test_bad_parameters_are_located)
{
    expect_prepare_error(HET(STEPS_S, ", \"batching\": \"speedy\""),
        "test.json: /algorithm/batching: error: unknown value \"speedy\" (expected one of: uniform, speed)");
    expect_prepare_error(HET(STEPS_S, ", \"batching\": \"speed\", \"total_batch\": 33"),
        "test.json: /algorithm/name: error: total_batch must be 0 (batch x workers) or between "
        "the 4 workers and batch x workers = 32 (what every partition holds), got 33");
    expect_prepare_error(HET(STEPS_S, ", \"batching\": \"speed\", \"total_batch\": 3"),
        "test.json: /algorithm/name: error: total_batch must be 0 (batch x workers) or between "
        "the 4 workers and batch x workers = 32 (what every partition holds), got 3");
}
END_TEST

/* A smaller total: 20 of speeds 8, 4, 2, 2 gives quotas 10, 5, 2.5, 2.5:
 * 10, 5, 3, 2 (the tie to the lower index); steps of 1.25, 1.25, 1.5, 1 s. */
START_TEST(test_total_batch_set)
{
    run_result res;
    int k = step_rows(HET(STEPS_S, ", \"batching\": \"speed\", \"total_batch\": 20"), &res);
    ck_assert_int_ge(k, 8);
    expect_durations(k, (const double[]){ 1.25, 1.25, 1.5, 1, 1.25, 1.25, 1.5, 1 }, 0);
    ck_assert_double_eq(stat_of(&res, "batch_min"), 2);
    ck_assert_double_eq(stat_of(&res, "batch_max"), 10);
}
END_TEST

/* ---- the all-reduce protocol ---- */

/* The ring all-reduce of the 4 parameters (16 B at 4 B each) over 4
 * nodes: 2 (n - 1) a + 2 (n - 1) / n M / B. */
#define RING4 (6 * 0.0001 + 1.5 * 16 / 1e9)

/* Batches 16, 8, 4, 4: every step lasts 2 s, and step j of every node
 * starts at j (2 + RING4): all finish together, so the whole ring runs
 * after the steps; uniform batches: steps of 1, 2, 4, 4 s. */
START_TEST(test_allreduce_steps_and_rounds)
{
    const char *cases[] = { HETA(STEPS_S, ", \"batching\": \"speed\""),
                            HETA(FLOPS, ", \"batching\": \"speed\""),
                            HETA(STEPS_S, "") };
    for (int c = 0; c < 3; c++) {
        run_result res;
        int k = step_rows(cases[c], &res);
        double period = 2 + RING4;
        ck_assert_int_ge(k, c < 2 ? 16 : 8);
        if (c < 2)
            expect_durations(k, (const double[]){ 2, 2, 2, 2, 2, 2, 2, 2 }, 0);
        else
            expect_durations(k, (const double[]){ 1, 2, 4, 4, 1, 2, 4, 4 }, 0);
        int seen[4] = { 0 };
        for (int j = 0; j < k && c < 2; j++) {
            int i = rows[j].node;
            ck_assert_msg(fabs(rows[j].start - seen[i] * period) < 1e-9,
                          "case %d node %d step %d starts at %.12g, want %.12g", c, i, seen[i],
                          rows[j].start, seen[i] * period);
            seen[i]++;
        }
        if (c < 2) {
            ck_assert_double_eq(stat_of(&res, "batch_min"), 4);
            ck_assert_double_eq(stat_of(&res, "batch_max"), 16);
        } else {
            ck_assert_int_eq(res.n_stats, 0);
        }
    }
}
END_TEST

/* Measured speeds: a uniform first round (1, 2, 4, 4 s), then 2 s. */
START_TEST(test_allreduce_measured_speeds)
{
    run_result res;
    int k = step_rows(HETA(STEPS_S, ", \"batching\": \"speed\", \"batch_source\": \"measured\""),
                      &res);
    ck_assert_int_ge(k, 12);
    expect_durations(k, (const double[]){ 2, 2, 2, 2, 1, 2, 4, 4 }, 1);
}
END_TEST

/* Every node lands on (16 t0 + 8 t1 + 4 t2 + 4 t3) / 32: the sum of
 * b_i g_i over the sum of the batches. */
START_TEST(test_allreduce_applies_the_batch_weighted_mean)
{
    set_targets(4, MAXP);
    run_result res;
    run_wrapped(HETA(STEPS_S, ", \"batching\": \"speed\""),
                wrap_p("allreduce", G_TARGET, 0.1, "batching=speed"), zero_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    const double b[4] = { 16, 8, 4, 4 };
    for (int i = 0; i < 4; i++)
        for (size_t q = 0; q < cap_P; q++) {
            double want = 0;
            for (int j = 0; j < 4; j++)
                want += b[j] * target[j][q];
            want /= 32;
            ck_assert_msg(fabs(cap_x[i][q] - want) < 1e-12, "node %d parameter %zu: %.17g, want %.17g",
                          i, q, cap_x[i][q], want);
        }
}
END_TEST

/* The bucketed path (DDP's overlap; two buckets of two parameters, the
 * first released by a step mark, which the target wrapper does not see)
 * weighs the real gradients as the one collective does: after the same
 * four rounds every node holds the same parameters to rounding. */
START_TEST(test_allreduce_buckets_weigh_as_one_collective)
{
    double one[4][MAXP];
    const char *spec[] = { "batching=speed,overlap=off", "batching=speed,bucket_bytes=8" };
    for (int c = 0; c < 2; c++) {
        run_result res;
        run_wrapped(HETA(STEPS_S, ", \"batching\": \"speed\""),
                    wrap_p("allreduce", G_REAL, 0.1, spec[c]), NULL, &res);
        ck_assert_int_eq(res.status, RUN_OK);
        for (int i = 0; i < 4; i++)
            ck_assert_int_eq(steps_of[i], 4);
        for (int i = 0; i < 4; i++)
            for (size_t q = 0; q < cap_P; q++) {
                if (c == 0) {
                    one[i][q] = cap_x[i][q];
                    continue;
                }
                ck_assert_msg(fabs(cap_x[i][q] - one[i][q]) < 1e-12,
                              "node %d parameter %zu: %.17g bucketed, %.17g in one", i, q,
                              cap_x[i][q], one[i][q]);
            }
    }
}
END_TEST

/* Node 3 crashes at 1 s for good, declared failed at 1.5 s: round 0
 * re-forms among nodes 0-2 (which finished their 2 s steps by then), and
 * the plan is re-made over them: 24 samples (32 x 3 / 4) for speeds 8, 4,
 * 2, quotas 13.71, 6.86, 3.43, floors 13, 6, 3 and the two missing to the
 * largest remainders, 14, 7, 3: steps of 1.75, 1.75 and 1.5 s from round 1
 * on, and every survivor steps on sum b_i g_i / 24 after that. */
START_TEST(test_allreduce_replans_after_a_crash)
{
    run_result res;
    int k = step_rows(HETN("allreduce", STEPS_S, ", \"batching\": \"speed\"",
                           " \"faults\": {\"detect_s\": 0.5, \"events\": [{\"kind\": \"schedule\","
                           " \"nodes\": [3], \"down_s\": 1}]},"), &res);
    int seen[4] = { 0 };
    const double later[3] = { 1.75, 1.75, 1.5 };
    for (int j = 0; j < k; j++) {
        int i = rows[j].node;
        double d = rows[j].end - rows[j].start;
        if (i < 3 && seen[i] > 0)
            ck_assert_msg(fabs(d - later[i]) < 1e-9, "node %d step %d lasts %.12g s", i, seen[i], d);
        seen[i]++;
    }
    ck_assert_int_ge(seen[0], 4);
    ck_assert_double_eq(stat_of(&res, "batch_min"), 3);
    ck_assert_double_eq(stat_of(&res, "batch_max"), 14);
    ck_assert_double_eq(stat_of(&res, "batch_rebalances"), 1);
    /* the target gradients: the survivors land on (14 t0 + 7 t1 + 3 t2) / 24 */
    set_targets(4, MAXP);
    run_wrapped(HETN("allreduce", STEPS_S, ", \"batching\": \"speed\"",
                     " \"faults\": {\"detect_s\": 0.5, \"events\": [{\"kind\": \"schedule\","
                     " \"nodes\": [3], \"down_s\": 1}]},"),
                wrap_p("allreduce", G_TARGET, 0.1, "batching=speed"), zero_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    for (int i = 0; i < 3; i++)
        for (size_t q = 0; q < cap_P; q++) {
            double want = (14 * target[0][q] + 7 * target[1][q] + 3 * target[2][q]) / 24;
            ck_assert_msg(fabs(cap_x[i][q] - want) < 1e-12, "node %d parameter %zu: %.17g, want %.17g",
                          i, q, cap_x[i][q], want);
        }
}
END_TEST

START_TEST(test_allreduce_bad_total_is_located)
{
    expect_prepare_error(HETA(STEPS_S, ", \"batching\": \"speed\", \"total_batch\": 33"),
        "test.json: /algorithm/name: error: total_batch must be 0 (batch x workers) or between "
        "the 4 workers and batch x workers = 32 (what every partition holds), got 33");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("batching");
    TCase *tc = tcase_create("batching");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_split_hand_cases);
    tcase_add_test(tc, test_split_sums_to_total);
    tcase_add_test(tc, test_steps_last_total_over_speed_sum);
    tcase_add_test(tc, test_measured_speeds_converge_to_the_plan);
    tcase_add_test(tc, test_measured_ewma_by_hand);
    tcase_add_test(tc, test_server_applies_the_batch_weighted_mean);
    tcase_add_test(tc, test_large_batch_is_the_mean_over_its_samples);
    tcase_add_test(tc, test_bad_parameters_are_located);
    tcase_add_test(tc, test_total_batch_set);
    tcase_add_test(tc, test_allreduce_steps_and_rounds);
    tcase_add_test(tc, test_allreduce_measured_speeds);
    tcase_add_test(tc, test_allreduce_applies_the_batch_weighted_mean);
    tcase_add_test(tc, test_allreduce_buckets_weigh_as_one_collective);
    tcase_add_test(tc, test_allreduce_replans_after_a_crash);
    tcase_add_test(tc, test_allreduce_bad_total_is_located);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
