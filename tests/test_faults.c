/* test_faults.c -- heterogeneity and faults through the scenario loader
 * and the runner: a synchronous barrier runs at one step per max(tau_i)
 * and an asynchronous protocol at sum(1/tau_i) with free communication;
 * base step times from FLOP/s; the three protocols survive random faults
 * (finishing or reporting a stall that names the waiting and the down
 * nodes); a node down for good stalls all-reduce with a report; trace.csv
 * holds one row per step; trace files report their errors as FILE:LINE.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alg.h"
#include "alg_host.h"
#include "run.h"
#include "scn.h"

#define DATA_DIR DTSIM_SOURCE_DIR "/tests/data/"

static const char *small =
    "\"data\": {\"train\": 512, \"test\": 64, \"features\": 4, \"classes\": 2},"
    " \"model\": {\"kind\": \"logistic\"}";

static void run_json(const char *json, const char *path, const run_options *opt,
                     run_result *res)
{
    scn_scenario s;
    scn_error err;
    ck_assert_msg(scn_load_string(json, path, NULL, 0, &s, &err) == 0, "%s", err.msg);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    char msg[1024];
    ck_assert_msg(run_execute(r, opt, res, msg, sizeof msg) == 0, "%s", msg);
    run_destroy(r);
    scn_fini(&s);
}

/* tau = 1, 2, 3, 5 s; barrier: one round per max = 5 s */
START_TEST(test_barrier_runs_at_max_tau)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 4, %s,"
        " \"compute\": {\"step_time_s\": 1, \"groups\": [{\"nodes\": [1], \"step_time_s\": 2},"
        "   {\"nodes\": [2], \"step_time_s\": 3}, {\"nodes\": [3], \"step_time_s\": 5}]},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e300},"
        " \"algorithm\": {\"name\": \"allreduce\", \"batch\": 8},"
        " \"stop\": {\"steps\": 20}, \"metrics\": {\"every_s\": 1000}}", small);
    run_result res;
    run_json(json, "test.json", NULL, &res);
    ck_assert_str_eq(res.stop_reason, "steps");
    ck_assert_double_eq_tol(res.sim_time_s, 20 * 5.0, 1e-9);
}
END_TEST

/* AD-PSGD on a ring of 4 with tau = 1, 2, 3, 4 s and free communication:
 * every node steps back to back, so by 12.5 s there are
 * 12 + 6 + 4 + 3 = 25 steps (rate sum 1/tau_i = 2.083/s). */
START_TEST(test_async_runs_at_sum_of_rates)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 4, %s,"
        " \"compute\": {\"step_time_s\": 1, \"groups\": [{\"nodes\": [1], \"slowdown\": 2},"
        "   {\"nodes\": [2], \"slowdown\": 3}, {\"nodes\": [3], \"slowdown\": 4}]},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e300},"
        " \"algorithm\": {\"name\": \"adpsgd\", \"batch\": 8},"
        " \"stop\": {\"time_s\": 12.5}, \"metrics\": {\"every_s\": 100}}", small);
    run_result res;
    run_json(json, "test.json", NULL, &res);
    ck_assert_str_eq(res.stop_reason, "time");
    ck_assert_uint_eq(res.last.steps, 25);
}
END_TEST

/* Base step time = the model's FLOPs per sample * batch / FLOP/s: nodes
 * 0-1 at 1 GFLOP/s, 2-3 at a quarter of it; the barrier waits for the slow
 * half. */
START_TEST(test_flops_step_time)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 4, %s,"
        " \"compute\": {\"flops_per_s\": 1e9, \"groups\": [{\"nodes\": [\"2-3\"],"
        "   \"flops_per_s\": 2.5e8}]},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e300},"
        " \"algorithm\": {\"name\": \"allreduce\", \"batch\": 8},"
        " \"stop\": {\"steps\": 10}, \"metrics\": {\"every_s\": 1}}", small);
    run_result res;
    run_json(json, "test.json", NULL, &res);
    /* logistic on 4 features: 2 FLOPs per weight forward, 2 for its
     * gradient (mdl_logistic.flops = 4 d), batch 8, the slow half */
    double step = 4.0 * 4 * 8 / 2.5e8;
    ck_assert_uint_eq(res.n_params, 5);   /* logistic, 4 features + bias */
    ck_assert_double_eq_tol(res.sim_time_s, 10 * step, 1e-15);
    /* timing only: the scenario gives the FLOPs of a sample */
    snprintf(json, sizeof json,
        "{\"nodes\": 4, \"model\": {\"kind\": \"none\", \"message_bytes\": 1000,"
        "   \"flops_per_sample\": 1e6},"
        " \"compute\": {\"flops_per_s\": 1e9, \"groups\": [{\"nodes\": [\"2-3\"],"
        "   \"flops_per_s\": 2.5e8}]},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e300},"
        " \"algorithm\": {\"name\": \"allreduce\", \"batch\": 8},"
        " \"stop\": {\"steps\": 10}, \"metrics\": {\"every_s\": 1}}");
    run_json(json, "test.json", NULL, &res);
    ck_assert_double_eq_tol(res.sim_time_s, 10 * (1e6 * 8 / 2.5e8), 1e-15);
}
END_TEST

/* Two nodes, ring all-reduce: 2 stages per round, compute 0.01 s, free
 * default links.  A 0.25 s link between 0 and 1 in both directions costs
 * 2 x 0.25 per round; only from 0 to 1 (directed), the stages overlap and
 * a round costs 0.25. */
static double two_node_round(const char *links)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 2, %s, \"compute\": {\"step_time_s\": 0.01},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e300, \"links\": [%s]},"
        " \"algorithm\": {\"name\": \"allreduce\", \"batch\": 8},"
        " \"stop\": {\"steps\": 10}, \"metrics\": {\"every_s\": 100}}", small, links);
    run_result res;
    run_json(json, "test.json", NULL, &res);
    /* the run ends when the 10th round's steps end: 9 rounds and a step */
    return (res.sim_time_s - 0.01) / 9;
}

START_TEST(test_link_entries)
{
    ck_assert_double_eq_tol(two_node_round("{\"from\": [0], \"to\": [1], \"latency_s\": 0.25}"),
                            0.51, 1e-12);
    ck_assert_double_eq_tol(two_node_round("{\"from\": [0], \"to\": [1], \"directed\": true,"
                                           " \"latency_s\": 0.25}"), 0.26, 1e-12);
    /* the later entry wins for the pairs it covers */
    ck_assert_double_eq_tol(two_node_round("{\"latency_s\": 0.25}, {\"from\": [1], \"to\": [0],"
                                           " \"latency_s\": 0}"), 0.01, 1e-12);

    scn_scenario sc;
    scn_error err;
    ck_assert_msg(scn_load_string("{\"nodes\": 4, \"network\": {\"jitter\": {\"dist\": "
        "\"exponential\", \"mean_s\": 0.001}, \"links\": [{\"from\": [\"0-1\"], \"to\": "
        "[\"2-3\"], \"latency_s\": 0.01, \"loss\": 0.1, \"outages\": [{\"start_s\": 1, "
        "\"end_s\": 2}]}]}, \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 1}}",
        "t.json", NULL, 0, &sc, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(sc.n_links, 1);
    double up, down;
    scn_node_nic(&sc, 2, &up, &down);
    ck_assert_double_eq(up, 1.25e9);
    ck_assert_double_eq(sc.links[0].props.bandwidth_Bps, 1.25e9);   /* inherited */
    ck_assert_int_eq(sc.links[0].props.jitter, CL_JITTER_EXPONENTIAL);   /* inherited */
    ck_assert_msg(strstr(sc.resolved_json, "\"jitter\":{\"dist\":\"exponential\",\"mean_s\":"
        "0.001},\"latency_s\":0.0001,\"links\":[{\"from\":[0,1],\"latency_s\":0.01,\"loss\":"
        "0.1,\"outages\":[{\"end_s\":2.0,\"start_s\":1.0}],\"to\":[2,3]}]") != NULL, "%s",
        sc.resolved_json);
    scn_fini(&sc);
}
END_TEST

/* compression_ratio divides the bytes of every message */
START_TEST(test_compression_ratio)
{
    double bytes[2];
    for (int k = 0; k < 2; k++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 4, %s, \"network\": {\"compression_ratio\": %s, "
            "\"nics\": [{\"fraction\": 0.5, \"up_Bps\": 1e6}]},"
            " \"algorithm\": {\"name\": \"dpsgd\", \"batch\": 8},"
            " \"stop\": {\"steps\": 5}}", small, k ? "4" : "1");
        run_result res;
        run_json(json, "test.json", NULL, &res);
        bytes[k] = res.last.bytes_sent;
    }
    ck_assert(bytes[0] > 0);
    ck_assert_double_eq(bytes[1], bytes[0] / 4);
}
END_TEST

static void random_faults(const char *alg, const char *topo, const char *policy)
{
    char json[4096];
    snprintf(json, sizeof json,
        "{\"seed\": 4, \"nodes\": 6, %s, \"topology\": %s,"
        " \"compute\": {\"step_time_s\": 0.01, \"noise\": {\"dist\": \"gamma\", \"shape\": 4},"
        "   \"slowdowns\": [{\"kind\": \"markov\", \"fraction\": 0.5, \"factor\": 4,"
        "     \"mean_slow_s\": 0.05, \"mean_normal_s\": 0.2}]},"
        " \"faults\": {%s \"events\": [{\"kind\": \"exponential\", \"mtbf_s\": 0.3,"
        "   \"mttr_s\": 0.05}]},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e6, \"discipline\": \"fair\"},"
        " \"algorithm\": {\"name\": \"%s\", \"batch\": 8},"
        " \"stop\": {\"time_s\": 3}, \"metrics\": {\"every_s\": 0.5}}", small, topo, policy, alg);
    run_result a, b;
    run_json(json, "test.json", NULL, &a);
    run_json(json, "test.json", NULL, &b);
    if (a.status == RUN_STALLED) {
        ck_assert_str_eq(a.stop_reason, "stalled");
        ck_assert_msg(strstr(a.message, "waiting: node ") != NULL, "%s", a.message);
    } else {
        ck_assert_str_eq(a.stop_reason, "time");
    }
    /* deterministic with faults too */
    ck_assert_str_eq(a.message, b.message);
    ck_assert_double_eq(a.sim_time_s, b.sim_time_s);
    ck_assert_uint_eq(a.last.steps, b.last.steps);
    ck_assert_double_eq(a.last.train_loss, b.last.train_loss);
}

static const char *ring = "{\"kind\": \"ring\"}";

START_TEST(test_faults_allreduce) { random_faults("allreduce", ring, ""); }
END_TEST
START_TEST(test_faults_dpsgd)
{
    random_faults("dpsgd", ring, "\"step\": \"resume\", \"messages\": \"keep_sent\",");
}
END_TEST
START_TEST(test_faults_adpsgd)
{
    random_faults("adpsgd", ring, "\"rejoin\": \"neighbour\",");
}
END_TEST

/* Node 2 leaves at 0.05 s for good and the failure detector is off
 * (detect_s beyond the run's time stop): local SGD's gossip synchronisation, which
 * waits for a down neighbour until it is declared failed (test_fail_coll),
 * cannot finish the round and the report names the down node.  The run
 * ends when no step has completed for longer than the bound 10 x (0.01 +
 * 4 x 20 B / 1.25e9 B/s + 1e-4 s) = 0.10100064 s, at the first event past
 * it: without retransmission the messages to node 2 are lost and the next
 * event is the metrics row at 1 s (the declaration still to come keeps
 * the queue from emptying, so the bound ends the run, not an empty queue);
 * with it (the default) the senders keep retrying. */
START_TEST(test_down_for_good_stalls)
{
    char json[2048];
    const char *fmt =
        "{\"nodes\": 4, %s, \"network\": {\"retransmit\": %s},"
        " \"faults\": {\"detect_s\": 1000,"
        "   \"events\": [{\"kind\": \"schedule\", \"nodes\": [2], \"down_s\": 0.05}]},"
        " \"algorithm\": {\"name\": \"local-sgd\", \"batch\": 8, \"sync\": \"gossip\","
        "   \"local_steps\": 1},"
        " \"stop\": {\"steps\": 1000, \"time_s\": 5}}";
    snprintf(json, sizeof json, fmt, small, "false");
    run_result res;
    run_json(json, "test.json", NULL, &res);
    ck_assert_int_eq(res.status, RUN_STALLED);
    ck_assert_msg(strstr(res.message, "; node 2 (down)") != NULL, "%s", res.message);
    ck_assert_msg(strstr(res.message, "waiting: node ") != NULL, "%s", res.message);
    ck_assert_msg(strstr(res.message, ", longer than the bound of 0.101001 s; waiting: node ")
                  != NULL, "%s", res.message);
    ck_assert_msg(res.sim_time_s > 0.05 + 0.101 && res.sim_time_s <= 1, "%g", res.sim_time_s);
    snprintf(json, sizeof json, fmt, small, "{\"timeout_s\": 0.2}");
    run_json(json, "test.json", NULL, &res);
    ck_assert_int_eq(res.status, RUN_STALLED);
    ck_assert_msg(strstr(res.message, ", longer than the bound of 0.101001 s; waiting: node ")
                  != NULL, "%s", res.message);
    ck_assert_msg(strstr(res.message, "; node 2 (down)") != NULL, "%s", res.message);
    /* the first event past the bound: a retry, 0.2 s after the last step */
    ck_assert(res.sim_time_s > 0.05 + 0.101 && res.sim_time_s < 0.08 + 0.2);
}
END_TEST

/* A detector slower than the frozen bound: node 2 leaves at 0.05 s for
 * good and is declared at 0.05 + 0.5 s, five bounds (0.10100064 s) later.
 * Gossip local SGD waits for it until then; the declaration is a known
 * event before the stop, so the run is not reported stalled while it is
 * pending: the three others re-form and finish their steps.  Without a
 * time stop the same holds (the declaration is before any stop).  Beyond
 * the time stop (detect_s 1000 with time_s 5) it stalls as above. */
START_TEST(test_slow_detector_not_stalled)
{
    char json[2048];
    const char *fmt =
        "{\"nodes\": 4, %s,"
        " \"faults\": {\"detect_s\": 0.5,"
        "   \"events\": [{\"kind\": \"schedule\", \"nodes\": [2], \"down_s\": 0.05}]},"
        " \"algorithm\": {\"name\": \"local-sgd\", \"batch\": 8, \"sync\": \"gossip\","
        "   \"local_steps\": 1},"
        " \"stop\": {\"steps\": 300%s}}";
    for (int with_time = 0; with_time < 2; with_time++) {
        snprintf(json, sizeof json, fmt, small, with_time ? ", \"time_s\": 100" : "");
        run_result res;
        run_json(json, "test.json", NULL, &res);
        ck_assert_msg(res.status == RUN_OK, "%s", res.message);
        ck_assert_str_eq(res.stop_reason, "steps");
        /* 4 x 300 node steps, node 2's few before 0.05 s: the others ran
         * past the declaration at 0.55 s */
        ck_assert_msg(res.sim_time_s > 0.55, "%g", res.sim_time_s);
    }
}
END_TEST

/* The same through a slow re-formation (the case that first showed it):
 * 8 workers, all-reduce in 4 sequential buckets over links of 10 ms, node
 * 3 down on [2.994, 4.99) and declared at 3.494; the 7 others re-run the
 * round, 4 x 2 x 6 ring stages of 10 ms, done at about 3.97 s, after the
 * bound (1.35 s) counted from the last step (2.615 s) but before it
 * counted from the declaration.  The run ends by time. */
START_TEST(test_slow_reformation_not_stalled)
{
    const char *json =
        "{\"seed\": 5, \"nodes\": 8, \"compute\": {\"step_time_s\": 0.125},"
        " \"network\": {\"latency_s\": 0.01, \"bandwidth_Bps\": 1e9},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
        " \"faults\": {\"detect_s\": 0.5, \"events\": [{\"kind\": \"schedule\","
        "   \"nodes\": [3], \"down_s\": 2.994, \"up_s\": 4.99}]},"
        " \"algorithm\": {\"name\": \"allreduce\", \"bucket_bytes\": 250,"
        "   \"bucket_collectives\": \"sequential\"},"
        " \"stop\": {\"time_s\": 9.98}, \"metrics\": {\"every_s\": 1}}";
    run_result res;
    run_json(json, "test.json", NULL, &res);
    ck_assert_msg(res.status == RUN_OK, "%s", res.message);
    ck_assert_str_eq(res.stop_reason, "time");
}
END_TEST

/* The availability trace takes node 2 down on [0.05, 0.15) and node 3 for
 * good at 0.1: with a trace from a file (and the detector off) the run
 * stalls the same way. */
START_TEST(test_availability_trace)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 4, %s,"
        " \"faults\": {\"detect_s\": 1000,"
        "   \"events\": [{\"kind\": \"trace\", \"file\": \"traces/avail.csv\"}]},"
        " \"algorithm\": {\"name\": \"local-sgd\", \"batch\": 8, \"sync\": \"gossip\","
        "   \"local_steps\": 1},"
        " \"stop\": {\"steps\": 1000, \"time_s\": 5}}", small);
    run_result res;
    run_json(json, DATA_DIR "x.json", NULL, &res);
    ck_assert_int_eq(res.status, RUN_STALLED);
    ck_assert_msg(strstr(res.message, "node 3 (down)") != NULL, "%s", res.message);
    ck_assert_msg(strstr(res.message, "node 2 (down)") == NULL, "%s", res.message);
    ck_assert(res.sim_time_s >= 0.15);
}
END_TEST

static long count_lines(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    char line[512];
    long n = 0;
    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof line, f))
        if (strstr(line, needle))
            n++;
    fclose(f);
    return n;
}

START_TEST(test_trace_csv)
{
    char dir[] = "/tmp/dtsim-test-faults-XXXXXX", path[512], json[2048];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(json, sizeof json,
        "{\"nodes\": 4, %s,"
        " \"algorithm\": {\"name\": \"dpsgd\", \"batch\": 8},"
        " \"stop\": {\"steps\": 5}, \"output\": {\"trace\": true}}", small);
    run_options opt = { .out_dir = dir };
    run_result res;
    run_json(json, "test.json", &opt, &res);
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    ck_assert_int_eq(count_lines(path, "node,kind,start_s,end_s,peer,bytes"), 1);
    ck_assert_int_eq(count_lines(path, ",step,"), (long)res.last.steps);
    /* a delivered message has a recv row after its send row; the run may
     * end with messages in flight */
    ck_assert(count_lines(path, ",recv,") <= count_lines(path, ",send,"));
    ck_assert(count_lines(path, ",recv,") > 0);
    const char *files[] = { "trace.csv", "metrics.csv", "nodes.csv", "run.json" };
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        ck_assert_int_eq(unlink(path), 0);
    }
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static void bad_trace(const char *section, const char *file, const char *want_tail)
{
    char json[1024], want[1024];
    scn_scenario s;
    scn_error err;
    snprintf(json, sizeof json, "{\"nodes\": 4, %s, \"algorithm\": {\"name\": \"dpsgd\"},"
             " \"stop\": {\"time_s\": 1}}", section);
    ck_assert_int_eq(scn_load_string(json, DATA_DIR "x.json", NULL, 0, &s, &err), -1);
    snprintf(want, sizeof want, DATA_DIR "traces/%s%s", file, want_tail);
    ck_assert_str_eq(err.msg, want);
}

START_TEST(test_trace_file_errors)
{
    bad_trace("\"compute\": {\"slowdowns\": [{\"kind\": \"trace\", "
              "\"file\": \"traces/bad_factor.csv\"}]}",
              "bad_factor.csv", ":3: error: factor must be a number > 0, got \"-2\"");
    bad_trace("\"compute\": {\"slowdowns\": [{\"kind\": \"trace\", "
              "\"file\": \"traces/backwards.csv\"}]}",
              "backwards.csv", ":4: error: time_s goes backwards for node 0 (2 after 3 on line 2)");
    bad_trace("\"compute\": {\"slowdowns\": [{\"kind\": \"trace\", "
              "\"file\": \"traces/bad_header.csv\"}]}",
              "bad_header.csv", ":1: error: header must be \"node,time_s,factor\", got "
              "\"node,time,factor\"");
    bad_trace("\"faults\": {\"events\": [{\"kind\": \"trace\", "
              "\"file\": \"traces/bad_state.csv\"}]}",
              "bad_state.csv", ":4: error: state must be up or down, got \"sleeping\"");
    /* a slowdown trace is not an availability trace */
    bad_trace("\"faults\": {\"events\": [{\"kind\": \"trace\", "
              "\"file\": \"traces/slow.csv\"}]}",
              "slow.csv", ":1: error: header must be \"node,time_s,state\", got "
              "\"node,time_s,factor\"");

    scn_scenario s;
    scn_error err;
    ck_assert_int_eq(scn_load_string("{\"nodes\": 4, \"compute\": {\"slowdowns\": [{\"kind\": "
                                     "\"trace\", \"file\": \"nope.csv\"}]}, \"algorithm\": "
                                     "{\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 1}}",
                                     DATA_DIR "x.json", NULL, 0, &s, &err), -1);
    ck_assert_str_eq(err.msg, DATA_DIR "x.json: /compute/slowdowns/0/file: error: cannot "
                     "open \"" DATA_DIR "nope.csv\": No such file or directory");
}
END_TEST

/* A good trace is read sorted by node, each node's points in file order. */
START_TEST(test_trace_file_read)
{
    scn_scenario s;
    scn_error err;
    ck_assert_msg(scn_load_string("{\"nodes\": 2, \"compute\": {\"slowdowns\": [{\"kind\": "
                                  "\"trace\", \"file\": \"traces/slow.csv\"}]}, \"algorithm\": "
                                  "{\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 1}}",
                                  DATA_DIR "x.json", NULL, 0, &s, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(s.n_slowdowns, 1);
    const scn_slowdown *d = &s.slowdowns[0];
    ck_assert_uint_eq(d->n_points, 4);
    ck_assert_int_eq(d->points[0].node, 0);
    ck_assert_double_eq(d->points[0].time_s, 1.5);
    ck_assert_double_eq(d->points[0].value, 3);
    ck_assert_int_eq(d->points[1].node, 0);
    ck_assert_double_eq(d->points[1].time_s, 4);
    ck_assert_int_eq(d->points[2].node, 1);
    ck_assert_double_eq(d->points[2].value, 2);
    ck_assert_msg(strstr(s.resolved_json, "\"slowdowns\":[{\"file\":\"traces/slow.csv\","
                         "\"kind\":\"trace\"}]") != NULL, "%s", s.resolved_json);
    scn_fini(&s);
}
END_TEST

/* A fraction picks round(f n) distinct nodes by seed: the same for the
 * same seed, another set for another seed (this pair is pinned). */
START_TEST(test_fraction_groups)
{
    const char *fmt = "{\"seed\": %d, \"nodes\": 16, \"compute\": {\"groups\": [{\"fraction\": "
                      "0.25, \"slowdown\": 4}]}, \"algorithm\": {\"name\": \"dpsgd\"}, "
                      "\"stop\": {\"time_s\": 1}}";
    char json[512];
    scn_scenario a, b, c;
    scn_error err;
    snprintf(json, sizeof json, fmt, 1);
    ck_assert(scn_load_string(json, "t.json", NULL, 0, &a, &err) == 0);
    ck_assert(scn_load_string(json, "t.json", NULL, 0, &b, &err) == 0);
    snprintf(json, sizeof json, fmt, 2);
    ck_assert(scn_load_string(json, "t.json", NULL, 0, &c, &err) == 0);
    ck_assert_uint_eq(a.groups[0].n_nodes, 4);
    ck_assert_int_eq(memcmp(a.groups[0].nodes, b.groups[0].nodes, 4 * sizeof(int)), 0);
    ck_assert_int_ne(memcmp(a.groups[0].nodes, c.groups[0].nodes, 4 * sizeof(int)), 0);
    int slow = 0;
    for (int i = 0; i < 16; i++)
        slow += scn_node_slowdown(&a, i) == 4;
    ck_assert_int_eq(slow, 4);
    scn_fini(&a);
    scn_fini(&b);
    scn_fini(&c);
}
END_TEST

/* The example scenario loads (its trace relative to its own directory,
 * whatever the working directory) and runs. */
START_TEST(test_example_scenario)
{
    const char *ov[] = { "stop.time_s=1" };
    scn_scenario sc;
    scn_error err;
    ck_assert_msg(scn_load(DTSIM_SOURCE_DIR "/scenarios/hetero-racks.json", ov, 1, &sc, &err)
                  == 0, "%s", err.msg);
    run_sim *r = run_prepare(&sc, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    run_result res;
    char msg[1024];
    ck_assert_msg(run_execute(r, NULL, &res, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_str_eq(res.stop_reason, "time");
    ck_assert(res.last.steps > 1000);
    run_destroy(r);
    /* its resolved text is a scenario that resolves to itself */
    scn_scenario again;
    ck_assert_msg(scn_load_string(sc.resolved_json, DTSIM_SOURCE_DIR "/scenarios/x.json", NULL,
                                  0, &again, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(again.resolved_json, sc.resolved_json);
    ck_assert_uint_eq(again.groups[1].n_nodes, 2);
    ck_assert_int_eq(memcmp(again.groups[1].nodes, sc.groups[1].nodes, 2 * sizeof(int)), 0);
    scn_fini(&again);
    scn_fini(&sc);
}
END_TEST

/* D-PSGD on a ring of 4 whose node 2 leaves for good at t = 1 s: every node
 * soon waits for a model that never comes, yet the down node's return (far
 * beyond the stop) keeps an event pending.  No step completes for longer
 * than the bound 10 x (0.01 s step + 4 x 20 B / 1e6 B/s + 0.001 s) =
 * 0.1108 s, so the run ends as stalled, not ok, long before its stop time.
 * One node down for 0.08 s (bound 10 x (0.01 + 20e-6 + 0.001) = 0.1102 s)
 * costs time, not the run; down for 0.2 s it is a stall. */
START_TEST(test_frozen_training_is_a_stall)
{
    char json[2048];
    const char *fmt =
        "{\"nodes\": %d, %s, \"compute\": {\"step_time_s\": 0.01},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e6},"
        " \"faults\": {\"events\": [{\"kind\": \"schedule\", \"nodes\": [%d], \"down_s\": 1,"
        "   \"up_s\": %s}]},"
        " \"algorithm\": {\"name\": \"%s\", \"batch\": 8}, \"stop\": {\"time_s\": 4}}";
    snprintf(json, sizeof json, fmt, 4, small, 2, "1000", "dpsgd");
    run_result res;
    /* dpsgd without its failure hooks waits for the node that is down (with
     * them it goes on without it: test_fail_sgp) */
    alg_type waiting = alg_dpsgd;
    waiting.on_failure = NULL;
    waiting.on_return = NULL;
    run_options opt = { .algorithm = &waiting };
    run_json(json, "test.json", &opt, &res);
    ck_assert_int_eq(res.status, RUN_STALLED);
    ck_assert_str_eq(res.stop_reason, "stalled");
    ck_assert_msg(strstr(res.message, ", longer than the bound of 0.1108 s; waiting: ") != NULL,
                  "%s", res.message);
    ck_assert_msg(strstr(res.message, "node 2 (down)") != NULL, "%s", res.message);
    ck_assert(res.sim_time_s > 1.1108 && res.sim_time_s < 1.2);
    snprintf(json, sizeof json, fmt, 1, small, 0, "1.08", "allreduce");
    run_json(json, "test.json", NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_str_eq(res.stop_reason, "time");
    snprintf(json, sizeof json, fmt, 1, small, 0, "1.2", "allreduce");
    run_json(json, "test.json", NULL, &res);
    ck_assert_int_eq(res.status, RUN_STALLED);
    ck_assert_msg(strstr(res.message, ", longer than the bound of 0.1102 s; waiting: node 0 "
                         "(down)") != NULL, "%s", res.message);
}
END_TEST

/* ---- the failure detector ---- */

static int fd_n;
static double fd_time[8];
static int fd_peer[8], fd_failed[8], fd_view[8];
static void fd_step(alg_ctx *c, void *s, int n, const double *g)
{
    (void)s; (void)g;
    alg_start_step(c, n);
}
static void fd_msg(alg_ctx *c, void *s, int n, const cl_msg *m) { (void)c; (void)s; (void)n; (void)m; }
static void fd_failure(alg_ctx *c, int peer, int failed)
{
    if (fd_n < 8) {
        fd_time[fd_n] = alg_now(c);
        fd_peer[fd_n] = peer;
        fd_failed[fd_n] = failed;
        fd_view[fd_n] = alg_is_failed(c, peer);
        fd_n++;
    }
}
static int fr_n, fr_node[8];
static double fr_time[8];
static void fd_return(alg_ctx *c, void *s, int n)
{
    (void)s;
    if (fr_n < 8) {
        fr_time[fr_n] = alg_now(c);
        fr_node[fr_n++] = n;
    }
}
static const alg_type detecting = {
    .name = "detecting", .state_size = 1, .on_step_done = fd_step, .on_message = fd_msg,
    .on_failure = fd_failure, .on_return = fd_return,
};

/* Node 2 is down on [1, 3) and node 1 on [1, 1.2); with detect_s 0.5 node
 * 2 is declared failed at exactly 1.5 and back at 3, node 1 never; both
 * are told they returned (node 1 at 1.2, node 2 at 3). */
START_TEST(test_failure_detector)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": 4, %s, \"compute\": {\"step_time_s\": 0.1},"
        " \"faults\": {\"detect_s\": 0.5, \"events\": ["
        "   {\"kind\": \"schedule\", \"nodes\": [2], \"down_s\": 1, \"up_s\": 3},"
        "   {\"kind\": \"schedule\", \"nodes\": [1], \"down_s\": 1, \"up_s\": 1.2}]},"
        " \"algorithm\": {\"name\": \"dpsgd\", \"batch\": 8}, \"stop\": {\"time_s\": 4}}", small);
    run_options opt = { .algorithm = &detecting };
    run_result res;
    fd_n = fr_n = 0;
    run_json(json, "test.json", &opt, &res);
    ck_assert_int_eq(fr_n, 2);
    ck_assert_int_eq(fr_node[0], 1);
    ck_assert_double_eq_tol(fr_time[0], 1.2, 1e-12);
    ck_assert_int_eq(fr_node[1], 2);
    ck_assert_double_eq_tol(fr_time[1], 3.0, 1e-12);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_int_eq(fd_n, 2);
    ck_assert_int_eq(fd_peer[0], 2);
    ck_assert_int_eq(fd_failed[0], 1);
    ck_assert_int_eq(fd_view[0], 1);
    ck_assert_double_eq_tol(fd_time[0], 1.5, 1e-12);
    ck_assert_int_eq(fd_peer[1], 2);
    ck_assert_int_eq(fd_failed[1], 0);
    ck_assert_int_eq(fd_view[1], 0);
    ck_assert_double_eq_tol(fd_time[1], 3.0, 1e-12);
    /* a node down from time 0 is declared too, detect_s after the start */
    snprintf(json, sizeof json,
        "{\"nodes\": 4, %s, \"compute\": {\"step_time_s\": 0.1},"
        " \"faults\": {\"detect_s\": 0.5, \"events\": ["
        "   {\"kind\": \"schedule\", \"nodes\": [3], \"down_s\": 0, \"up_s\": 2}]},"
        " \"algorithm\": {\"name\": \"dpsgd\", \"batch\": 8}, \"stop\": {\"time_s\": 4}}", small);
    fd_n = fr_n = 0;
    run_json(json, "test.json", &opt, &res);
    ck_assert_int_eq(fd_n, 2);
    ck_assert_int_eq(fd_peer[0], 3);
    ck_assert_int_eq(fd_failed[0], 1);
    ck_assert_double_eq_tol(fd_time[0], 0.5, 1e-12);
    ck_assert_int_eq(fd_failed[1], 0);
    ck_assert_double_eq_tol(fd_time[1], 2.0, 1e-12);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("faults");
    TCase *tc = tcase_create("faults");
    tcase_add_test(tc, test_barrier_runs_at_max_tau);
    tcase_add_test(tc, test_async_runs_at_sum_of_rates);
    tcase_add_test(tc, test_flops_step_time);
    tcase_add_test(tc, test_frozen_training_is_a_stall);
    tcase_add_test(tc, test_failure_detector);
    tcase_add_test(tc, test_link_entries);
    tcase_add_test(tc, test_compression_ratio);
    tcase_add_test(tc, test_faults_allreduce);
    tcase_add_test(tc, test_faults_dpsgd);
    tcase_add_test(tc, test_faults_adpsgd);
    tcase_add_test(tc, test_down_for_good_stalls);
    tcase_add_test(tc, test_slow_detector_not_stalled);
    tcase_add_test(tc, test_slow_reformation_not_stalled);
    tcase_add_test(tc, test_availability_trace);
    tcase_add_test(tc, test_trace_csv);
    tcase_add_test(tc, test_trace_file_errors);
    tcase_add_test(tc, test_trace_file_read);
    tcase_add_test(tc, test_fraction_groups);
    tcase_add_test(tc, test_example_scenario);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
