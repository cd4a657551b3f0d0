/* test_pipeline.c -- the pipeline protocol's exact outcomes on the
 * timing-only model: GPipe's iteration time (m + p - 1)(tf + tb) and
 * bubble fraction (p - 1)/(m + p - 1) on a homogeneous pipeline, with
 * free links and with latency and bandwidth; 1F1B's iteration time and
 * its micro-batches in flight per stage, min(p - s, m), at most p;
 * GPipe's m; PipeDream's steady throughput 1 / (slowest stage's time)
 * with one stage slowed and its weight versions p - s; the partition
 * (the dynamic programme against brute force, and by hand); a crashed
 * stage ending the run at once with its reason; the located errors.
 * Whole runs, with the per-stage state read through a wrapper of the
 * protocol's stats hook.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alg_host.h"
#include "alg_pipeline_int.h"
#include "test_util.h"

#define MAXS 64

/* what the wrapper copies at the end of a run */
static int    cap_p;
static int64_t cap_peak[MAXS];
static int    cap_lo[MAXS + 1];
static alg_type wrapped;

static int capture(const alg_ctx *ctx, const char **keys, double *values, int max)
{
    const pp_shared *sh = ctx->shared;
    cap_p = sh->p;
    ck_assert_int_le(cap_p, MAXS);
    for (int s = 0; s < sh->p; s++)
        cap_peak[s] = ((const pp_stage *)alg_state(ctx, s))->peak_in_flight;
    memcpy(cap_lo, sh->lo, (size_t)(sh->p + 1) * sizeof *cap_lo);
    return alg_pipeline.stats(ctx, keys, values, max);
}

/* p nodes of step 0.3 s (node `slow` slowed by `factor`, none when -1),
 * m micro-batches, the schedule, links, extra algorithm keys. */
static void run_pipe(int p, int m, const char *sched, const char *net, const char *extra_alg,
                     int slow, double factor, double time_s, run_result *res)
{
    char groups[256] = "";
    if (slow >= 0)
        snprintf(groups, sizeof groups, ", \"groups\": [{\"nodes\": [%d], \"slowdown\": %.17g}]",
                 slow, factor);
    char json[2048];
    snprintf(json, sizeof json,
        "{\"seed\": 1, \"nodes\": %d,"
        " \"compute\": {\"step_time_s\": 0.3%s},"
        " \"network\": {%s},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
        " \"algorithm\": {\"name\": \"pipeline\", \"micro_batches\": %d, \"schedule\": \"%s\"%s},"
        " \"stop\": {\"time_s\": %.17g}}", p, groups, net, m, sched, extra_alg, time_s);
    wrapped = alg_pipeline;
    wrapped.stats = capture;
    run_options opt = { .algorithm = &wrapped };
    run_json(json, &opt, res);
}

#define FREE "\"latency_s\": 0, \"bandwidth_Bps\": 1e15"

/* One layer per stage of a third forward, two thirds backward: a stage's
 * forward of one micro-batch is 0.3 / (3 p m), its backward twice that. */
static double tf_of(int p, int m) { return 0.3 / (3.0 * p * m); }

START_TEST(test_gpipe_closed_form)
{
    static const int pm[][2] = { { 4, 8 }, { 3, 1 }, { 5, 16 }, { 8, 3 }, { 1, 4 } };
    for (size_t i = 0; i < sizeof pm / sizeof pm[0]; i++) {
        const int p = pm[i][0], m = pm[i][1];
        const double tf = tf_of(p, m), tb = 2 * tf, T = (m + p - 1) * (tf + tb);
        run_result res;
        run_pipe(p, m, "gpipe", FREE, ", \"act_bytes\": 0", -1, 1, 10 * T + T / 2, &res);
        ck_assert_int_eq(res.status, RUN_OK);
        ck_assert_double_eq(stat_of(&res, "iterations"), 10);
        ck_assert_double_eq_tol(stat_of(&res, "first_iteration_s"), T, 1e-12);
        ck_assert_double_eq_tol(stat_of(&res, "mean_iteration_s"), T, 1e-12);
        ck_assert_double_eq_tol(stat_of(&res, "bubble_fraction"), (p - 1.0) / (m + p - 1.0),
                                1e-12);
        /* GPipe stashes every micro-batch at every stage */
        for (int s = 0; s < p; s++)
            ck_assert_int_eq(cap_peak[s], m);
        ck_assert_double_eq(stat_of(&res, "weight_versions_max"), 1);
    }
}
END_TEST

/* With links of latency a and bandwidth B, messages of A bytes taking
 * less than a forward to send (no queue on a link): each of the p - 1
 * hops adds c = a + A / B once forward and once backward, T = (m + p -
 * 1)(tf + tb) + 2 (p - 1) c; the stashed activations are m A per stage. */
START_TEST(test_gpipe_links)
{
    const int p = 4, m = 8;
    const double tf = tf_of(p, m), c = 0.001 + 1e4 / 1e8;
    const double T = (m + p - 1) * 3 * tf + 2 * (p - 1) * c;
    ck_assert(1e4 / 1e8 < tf);
    run_result res;
    run_pipe(p, m, "gpipe", "\"latency_s\": 0.001, \"bandwidth_Bps\": 1e8",
             ", \"act_bytes\": 1e4", -1, 1, 5 * T + tf / 2, &res);
    ck_assert_double_eq(stat_of(&res, "iterations"), 5);
    ck_assert_double_eq_tol(stat_of(&res, "first_iteration_s"), T, 1e-12);
    ck_assert_double_eq_tol(stat_of(&res, "mean_iteration_s"), T, 1e-12);
    ck_assert_double_eq(stat_of(&res, "stash_bytes_max"), m * 1e4);
    /* stopped before the sixth iteration's first forward is done */
    ck_assert_double_eq(res.last.bytes_sent, 5 * 2 * (p - 1) * m * 1e4);
    /* and just after it: one activation message more (a forward costs tf,
     * a third of a micro-batch's work, not the backward's two thirds) */
    run_pipe(p, m, "gpipe", "\"latency_s\": 0.001, \"bandwidth_Bps\": 1e8",
             ", \"act_bytes\": 1e4", -1, 1, 5 * T + 1.5 * tf, &res);
    ck_assert_double_eq(res.last.bytes_sent, 5 * 2 * (p - 1) * m * 1e4 + 1e4);
}
END_TEST

/* 1F1B with a flush: the same iteration and bubble as GPipe on free
 * links, but stage s holds at most min(p - s, m) micro-batches, so at
 * most p are in flight in the whole pipeline (stage 0's count). */
START_TEST(test_1f1b_in_flight)
{
    static const int pm[][2] = { { 4, 8 }, { 6, 3 }, { 5, 5 }, { 2, 9 } };
    for (size_t i = 0; i < sizeof pm / sizeof pm[0]; i++) {
        const int p = pm[i][0], m = pm[i][1];
        const double tf = tf_of(p, m), T = (m + p - 1) * 3 * tf;
        run_result res;
        run_pipe(p, m, "1f1b", FREE, ", \"act_bytes\": 0", -1, 1, 6 * T + T / 2, &res);
        ck_assert_double_eq(stat_of(&res, "iterations"), 6);
        ck_assert_double_eq_tol(stat_of(&res, "first_iteration_s"), T, 1e-12);
        ck_assert_double_eq_tol(stat_of(&res, "bubble_fraction"), (p - 1.0) / (m + p - 1.0),
                                1e-12);
        for (int s = 0; s < p; s++)
            ck_assert_int_eq(cap_peak[s], p - s < m ? p - s : m);
        ck_assert_double_eq(stat_of(&res, "peak_in_flight_first"), p < m ? p : m);
    }
}
END_TEST

/* PipeDream's asynchronous 1F1B: once full, every stage does one forward
 * and one backward per period of the slowest stage, so the throughput
 * is 1 / (its tf + tb), here a stage 3 times slower than the others;
 * stage s stashes p - s weight versions (one per micro-batch in flight),
 * 2BW two. */
START_TEST(test_pipedream_throughput)
{
    const int p = 4, m = 8;
    const double period = 3 * 3 * tf_of(p, m);
    for (int slow = 0; slow < p; slow++) {
        run_result res;
        run_pipe(p, m, "pipedream", FREE, ", \"act_bytes\": 0", slow, 3, 20, &res);
        ck_assert_double_eq_tol(stat_of(&res, "throughput_mb_per_s"), 1 / period, 1e-9);
        for (int s = 0; s < p; s++)
            ck_assert_int_eq(cap_peak[s], p - s);
        ck_assert_double_eq(stat_of(&res, "weight_versions_max"), p);
        /* the prediction the partition makes: the slowest stage's time */
        ck_assert_double_eq_tol(stat_of(&res, "slowest_stage_s"), period, 1e-15);
    }
    run_result res;
    run_pipe(p, m, "2bw", FREE, ", \"act_bytes\": 0", 1, 3, 20, &res);
    ck_assert_double_eq_tol(stat_of(&res, "throughput_mb_per_s"), 1 / period, 1e-9);
    ck_assert_double_eq(stat_of(&res, "weight_versions_max"), 2);
}
END_TEST

/* The partition of 8 equal layers on 4 stages, stage 2 three times
 * slower: balanced gives it one layer and the others 2, 3 (or 3, 2) and
 * 2: the slowest stage is 3 layers = 3 x 0.3 / 8 / m = the slow one's
 * 1 layer x 3; equal gives every stage 2 layers, the slow one then 6
 * layer times, and PipeDream's throughput follows. */
START_TEST(test_partition_runs)
{
    const int m = 8;
    const double layer = 0.3 / 8 / m;
    run_result res;
    run_pipe(4, m, "pipedream", FREE, ", \"act_bytes\": 0, \"layers\": 8", 2, 3, 20, &res);
    ck_assert_double_eq_tol(stat_of(&res, "slowest_stage_s"), 3 * layer, 1e-15);
    ck_assert_double_eq_tol(stat_of(&res, "throughput_mb_per_s"), 1 / (3 * layer), 1e-9);
    ck_assert_int_eq(cap_lo[3] - cap_lo[2], 1);
    ck_assert_int_eq(cap_lo[1], 3);   /* of the ties, the later boundaries */
    ck_assert_int_eq(cap_lo[2], 6);
    run_pipe(4, m, "pipedream", FREE, ", \"act_bytes\": 0, \"layers\": 8, \"partition\": \"equal\"",
             2, 3, 20, &res);
    ck_assert_double_eq_tol(stat_of(&res, "slowest_stage_s"), 6 * layer, 1e-15);
    ck_assert_double_eq_tol(stat_of(&res, "throughput_mb_per_s"), 1 / (6 * layer), 1e-9);
    for (int s = 0; s <= 4; s++)
        ck_assert_int_eq(cap_lo[s], 2 * s);
}
END_TEST

/* The dynamic programme equals the brute-force minimum over every
 * composition of L layers into p contiguous stages, on random costs and
 * speeds; and two by hand. */
static double slowest(int L, int p, const double *cost, const double *sec, const int *lo)
{
    (void)L;
    double w = 0;
    for (int s = 0; s < p; s++) {
        double sum = 0;
        for (int l = lo[s + 1] - 1; l >= lo[s]; l--)
            sum += cost[l];
        if (sum * sec[s] > w)
            w = sum * sec[s];
    }
    return w;
}

static double brute(int L, int p, const double *cost, const double *sec, int *lo, int s)
{
    if (s == p) {
        return lo[p] == L ? slowest(L, p, cost, sec, lo) : INFINITY;
    }
    double best = INFINITY;
    for (int b = lo[s] + 1; b <= L - (p - 1 - s); b++) {
        lo[s + 1] = b;
        if (s + 1 < p || b == L) {
            double v = brute(L, p, cost, sec, lo, s + 1);
            if (v < best)
                best = v;
        }
    }
    return best;
}

START_TEST(test_partition_dp)
{
    double cost[12], sec[6], wd[13 * 7];
    int lo[7], wi[13 * 7], blo[7];
    unsigned seed = 12345;
    for (int trial = 0; trial < 300; trial++) {
        const int L = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 12;
        int p = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 6;
        if (p > L)
            p = L;
        for (int l = 0; l < L; l++)
            cost[l] = 1 + (double)(((seed = seed * 1103515245u + 12345u) >> 16) % 100);
        for (int s = 0; s < p; s++)
            sec[s] = 0.5 + (double)(((seed = seed * 1103515245u + 12345u) >> 16) % 4);
        const double got = pp_partition(1, L, p, cost, sec, lo, wd, wi);
        blo[0] = 0;
        const double want = brute(L, p, cost, sec, blo, 0);
        ck_assert_double_eq(got, want);
        ck_assert_double_eq(slowest(L, p, cost, sec, lo), got);
        ck_assert_int_eq(lo[0], 0);
        ck_assert_int_eq(lo[p], L);
        for (int s = 0; s < p; s++)
            ck_assert_int_lt(lo[s], lo[s + 1]);
    }
    /* by hand: layers 4 1 1 1 1 on two equal stages: {4} {1 1 1 1} */
    const double c1[] = { 4, 1, 1, 1, 1 }, s1[] = { 1, 1 };
    ck_assert_double_eq(pp_partition(1, 5, 2, c1, s1, lo, wd, wi), 4);
    ck_assert_int_eq(lo[1], 1);
    /* the second node twice as fast: {4 1} {1 1 1} gives max(5, 1.5) = 5,
     * {4} {1 1 1 1} max(4, 2) = 4 */
    const double s2[] = { 1, 0.5 };
    ck_assert_double_eq(pp_partition(1, 5, 2, c1, s2, lo, wd, wi), 4);
    /* equal: floor(s L / p), {4 1} {1 1 1} */
    ck_assert_double_eq(pp_partition(0, 5, 2, c1, s1, lo, wd, wi), 5);
    ck_assert_int_eq(lo[1], 2);
}
END_TEST

/* The order of a stage's operations: each micro-batch's forward once and
 * its backward once per iteration, the forward first; 1F1B's warm-up. */
START_TEST(test_schedule_orders)
{
    for (int sched = 0; sched < 3; sched++)
        for (int p = 1; p <= 6; p++)
            for (int m = 1; m <= 7; m++)
                for (int s = 0; s < p; s++) {
                    int seenf[32] = { 0 }, seenb[32] = { 0 };
                    const int ops = sched == SCHED_PIPEDREAM ? 2 * m + 2 * p : 4 * m;
                    for (int k = 0; k < ops; k++) {
                        pp_op op = pp_op_at(sched, p, m, s, (uint64_t)k);
                        ck_assert_uint_lt(op.mb, 32);
                        if (op.backward) {
                            ck_assert_int_eq(seenf[op.mb], 1);
                            ck_assert_int_eq(seenb[op.mb]++, 0);
                        } else {
                            ck_assert_int_eq(seenf[op.mb]++, 0);
                        }
                        if (sched != SCHED_PIPEDREAM)
                            ck_assert_uint_eq(op.mb / (uint64_t)m, (uint64_t)k / (2u * m));
                    }
                }
    /* 1F1B, p = 4, m = 6, stage 1: F0 F1 then F2 B0 F3 B1 F4 B2 F5 B3, then B4 B5 */
    static const int want[][2] = { { 0, 0 }, { 0, 1 }, { 0, 2 }, { 1, 0 }, { 0, 3 }, { 1, 1 },
                                   { 0, 4 }, { 1, 2 }, { 0, 5 }, { 1, 3 }, { 1, 4 }, { 1, 5 } };
    for (int k = 0; k < 12; k++) {
        pp_op op = pp_op_at(SCHED_1F1B, 4, 6, 1, (uint64_t)k);
        ck_assert_int_eq(op.backward, want[k][0]);
        ck_assert_uint_eq(op.mb, (uint64_t)want[k][1]);
    }
    /* GPipe: backwards in reverse */
    ck_assert_uint_eq(pp_op_at(SCHED_GPIPE, 4, 6, 1, 6).mb, 5);
    ck_assert_uint_eq(pp_op_at(SCHED_GPIPE, 4, 6, 1, 11).mb, 0);
    ck_assert_uint_eq(pp_op_at(SCHED_GPIPE, 4, 6, 1, 12).mb, 6);
}
END_TEST

/* A stage that crashes for good halts the pipeline (1F1B waits for it to
 * restart the mini-batch; PipeDream stops for good): the run ends at the
 * detection instant as stalled, the stage named, in bounded time. */
START_TEST(test_crash_stops)
{
    const char *json =
        "{\"seed\": 1, \"nodes\": 4,"
        " \"compute\": {\"step_time_s\": 0.3},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e15},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
        " \"faults\": {\"detect_s\": 0.25, \"events\": [{\"kind\": \"schedule\", \"nodes\": [2],"
        "   \"down_s\": 0.5}]},"
        " \"algorithm\": {\"name\": \"pipeline\", \"micro_batches\": 8, \"schedule\": \"1f1b\"},"
        " \"stop\": {\"time_s\": 100}}";
    run_result res;
    wrapped = alg_pipeline;
    wrapped.stats = capture;
    run_options opt = { .algorithm = &wrapped };
    run_json(json, &opt, &res);
    ck_assert_int_eq(res.status, RUN_STALLED);
    ck_assert_double_eq(stat_of(&res, "stopped_by_stage"), 2);
    ck_assert_double_eq_tol(res.last.time_s, 0.75, 1e-12);
    ck_assert_msg(strstr(res.message, "the pipeline's restart once every stage is up (stage 2 "
                          "lost at t=0.75 s)") != NULL, "%s", res.message);
    /* down at 0.61, with messages to it in flight: the network retransmits
     * them, so the run ends by the frozen bound (3 s without a step, the
     * last at 0.63125), still stalled and naming the stage */
    char j2[1024];
    const char *at = strstr(json, "\"down_s\": 0.5");
    ck_assert_ptr_nonnull(at);
    snprintf(j2, sizeof j2, "%.*s\"down_s\": 0.61%s", (int)(at - json), json,
             at + strlen("\"down_s\": 0.5"));
    run_json(j2, &opt, &res);
    ck_assert_int_eq(res.status, RUN_STALLED);
    ck_assert_double_eq(stat_of(&res, "stopped_by_stage"), 2);
    ck_assert_double_eq_tol(res.last.time_s, 4, 1e-9);
    ck_assert_msg(strstr(res.message, "(stage 2 lost at t=0.86 s)") != NULL, "%s", res.message);
    /* PipeDream cannot restart (its weight versions): it stops for good */
    const char *sc = strstr(json, "\"1f1b\"");
    ck_assert_ptr_nonnull(sc);
    snprintf(j2, sizeof j2, "%.*s\"pipedream\"%s", (int)(sc - json), json, sc + strlen("\"1f1b\""));
    run_json(j2, &opt, &res);
    ck_assert_int_eq(res.status, RUN_STALLED);
    /* its messages to the down stage retransmit: the frozen bound ends it */
    ck_assert_double_eq_tol(res.last.time_s, 4, 1e-9);
    ck_assert_msg(strstr(res.message, "the pipeline stopped when stage 2 went down (t=0.75 s)")
                  != NULL, "%s", res.message);
}
END_TEST

/* The per-stage file of a run folder: 1F1B, p = 4, m = 8, 2 iterations
 * and a half: stage s held min(p - s, m) micro-batches, each act_bytes. */
START_TEST(test_stage_file)
{
    char dir[] = "/tmp/dtsim_pipeline_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char cmd[4096], path[512];
    snprintf(cmd, sizeof cmd,
             "cat > %s/s.json <<'EOF'\n"
             "{\"seed\": 1, \"nodes\": 4, \"compute\": {\"step_time_s\": 0.3},"
             " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e15},"
             " \"topology\": {\"kind\": \"ring\"},"
             " \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
             " \"algorithm\": {\"name\": \"pipeline\", \"micro_batches\": 8,"
             "   \"schedule\": \"1f1b\", \"act_bytes\": 500},"
             " \"stop\": {\"time_s\": %.17g}}\n"
             "EOF\n"
             "%s run %s/s.json -o %s/out --quiet", dir, 2.5 * 11 * 3 * tf_of(4, 8), DTSIM_BINARY,
             dir, dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/out/algorithm_nodes.csv", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "node,first_layer,last_layer,forwards,backwards,peak_in_flight,"
                           "stash_bytes,weight_versions,busy_s\n");
    for (int s = 0; s < 4; s++) {
        int node, a, b, fw, bw, peak, ver;
        double stash, busy;
        ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
        ck_assert_int_eq(sscanf(line, "%d,%d,%d,%d,%d,%d,%lf,%d,%lf", &node, &a, &b, &fw, &bw,
                                &peak, &stash, &ver, &busy), 9);
        ck_assert_int_eq(node, s);
        ck_assert_int_eq(a, s + 1);
        ck_assert_int_eq(b, s + 1);
        ck_assert_int_eq(peak, 4 - s);
        ck_assert_double_eq(stash, (4 - s) * 500.0);
        ck_assert_int_eq(ver, 1);
        ck_assert_int_ge(bw, 16);
        ck_assert_int_le(bw, 24);
    }
    ck_assert_ptr_null(fgets(line, sizeof line, f));
    fclose(f);
    /* a rerun replaces the folder, algorithm_nodes.csv included */
    snprintf(cmd, sizeof cmd, "%s run %s/s.json -o %s/out --quiet --force", DTSIM_BINARY, dir,
             dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_errors)
{
    expect_prepare_error(
        "{\"nodes\": 4, \"model\": {\"kind\": \"none\", \"message_bytes\": 10},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"algorithm\": {\"name\": \"pipeline\", \"stages\": 3}, \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/name: error: algorithm.stages is 3 but the scenario has 4 nodes (one "
        "stage per node: set nodes to the stages, or stages to 0)");
    expect_prepare_error(
        "{\"nodes\": 4, \"model\": {\"kind\": \"none\", \"message_bytes\": 10},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"algorithm\": {\"name\": \"pipeline\", \"layers\": 3}, \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/name: error: algorithm.layers is 3, fewer than the 4 stages (each stage "
        "needs a layer)");
    expect_prepare_error(
        "{\"nodes\": 64, \"model\": {\"kind\": \"none\", \"message_bytes\": 10},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"algorithm\": {\"name\": \"pipeline\", \"layers\": 4096}, \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/name: error: a balanced partition of 4096 layers on 64 stages costs p "
        "(L - p + 1)^2 = 1.04e+09 steps, more than 1e9 (use fewer layers, or partition \"equal\")");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("exact");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_gpipe_closed_form);
    tcase_add_test(tc, test_gpipe_links);
    tcase_add_test(tc, test_1f1b_in_flight);
    tcase_add_test(tc, test_pipedream_throughput);
    tcase_add_test(tc, test_partition_runs);
    tcase_add_test(tc, test_partition_dp);
    tcase_add_test(tc, test_schedule_orders);
    tcase_add_test(tc, test_crash_stops);
    tcase_add_test(tc, test_stage_file);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
