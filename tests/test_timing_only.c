/* test_timing_only.c -- the timing-only model "none" end to end: it must
 * give exactly the timeline of a real model whose messages have the same
 * size (same simulated time, events, bytes and steps, so skipping the
 * math changes nothing but the math), ring all-reduce of a message far
 * larger than any test model against its closed form, every registered
 * protocol running to its stop condition with nan losses, the events of
 * a D-PSGD step (one per FIFO message), and the heap a timing-only node
 * costs.
 */
#include <check.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_host.h"
#include "scn_keys.h"
#include "test_util.h"

/* 15 features and 4 classes: a 64-parameter softmax, 256 bytes a message
 * at 4 bytes per parameter. */
static void run_pair(const char *alg, int n, run_result *real, run_result *none)
{
    const char *common =
        "\"seed\": 5, \"nodes\": %d,"
        " \"compute\": {\"step_time_s\": 0.01, \"noise\": {\"dist\": \"lognormal\","
        "   \"sigma\": 0.4}, \"groups\": [{\"nodes\": [1], \"slowdown\": 3}]},"
        " \"network\": {\"latency_s\": 0.002, \"bandwidth_Bps\": 1e5, \"bytes_per_param\": 4},"
        " \"topology\": {\"kind\": \"ring\"},"
        " \"algorithm\": {\"name\": \"%s\", \"lr\": 0.05, \"batch\": 8},"
        " \"stop\": {\"steps\": 40}, \"metrics\": {\"every_s\": 0.05}";
    char head[1024], json[2048];
    snprintf(head, sizeof head, common, n, alg);
    snprintf(json, sizeof json, "{%s, \"model\": {\"kind\": \"softmax\"}, \"data\": "
             "{\"train\": 512, \"test\": 64, \"features\": 15, \"classes\": 4}}", head);
    run_json(json, NULL, real);
    snprintf(json, sizeof json, "{%s, \"model\": {\"kind\": \"none\", \"message_bytes\": 256}}",
             head);
    run_json(json, NULL, none);
}

START_TEST(test_none_same_timeline_as_real_model)
{
    static const char *const algs[] = { "dpsgd", "adpsgd", "allreduce", "gossip", "ps-async",
                                        "local-sgd" };
    for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++) {
        run_result real, none;
        run_pair(algs[a], 8, &real, &none);
        ck_assert_uint_eq(real.n_params, 64);
        ck_assert_uint_eq(none.n_params, 0);
        ck_assert_str_eq(none.stop_reason, "steps");
        ck_assert_msg(real.sim_time_s == none.sim_time_s, "%s: %.17g s with softmax, %.17g s "
                      "with none", algs[a], real.sim_time_s, none.sim_time_s);
        ck_assert_uint_eq(real.events, none.events);
        ck_assert_uint_eq(real.last.steps, none.last.steps);
        ck_assert_double_eq(real.last.bytes_sent, none.last.bytes_sent);
        ck_assert(real.last.bytes_sent > 0);
        ck_assert(isfinite(real.last.train_loss));
        ck_assert(isnan(none.last.train_loss) && isnan(none.last.test_loss) &&
                  isnan(none.last.test_accuracy) && isnan(none.last.epochs));
        ck_assert_double_eq(none.last.consensus_distance, 0);
    }
}
END_TEST

/* Two steps of T with one ring all-reduce of M = 10^7 bytes between them:
 * 2(n-1)a + 2(n-1)/n M/B.  Bytes: 2(n-1) chunks of M/n per node for the
 * all-reduce, plus the first chunk of the next one, which every node sends
 * as its second step ends (the last of those ends the run): (2n-1) M. */
START_TEST(test_none_ring_allreduce_closed_form)
{
    static const int sizes[] = { 2, 3, 4, 8, 16 };
    const double a = 1e-3, B = 1e9, T = 1.0, M = 1e7;
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        int n = sizes[t];
        char json[1024];
        snprintf(json, sizeof json,
            "{\"nodes\": %d, \"compute\": {\"step_time_s\": %.17g},"
            " \"network\": {\"latency_s\": %.17g, \"bandwidth_Bps\": %.17g},"
            " \"model\": {\"kind\": \"none\", \"message_bytes\": %.17g},"
            " \"algorithm\": {\"name\": \"allreduce\", \"collective\": \"ring\"},"
            " \"stop\": {\"steps\": 2}}", n, T, a, B, M);
        run_result res;
        run_json(json, NULL, &res);
        double ring = 2 * (n - 1) * a + 2.0 * (n - 1) / n * M / B;
        double got = res.sim_time_s - 2 * T;
        ck_assert_msg(fabs(got - ring) < 1e-12, "n=%d: %.17g s, closed form %.17g s", n, got,
                      ring);
        ck_assert_double_eq_tol(res.last.bytes_sent, (2.0 * n - 1) * M, 1e-6);
    }
}
END_TEST

/* model.profile: the profile's parameter count times bytes_per_param is
 * the message M and batch x 3 x its forward FLOPs / flops_per_s the step
 * time T, exactly: the ring all-reduce closed form above holds with them
 * (one all-reduce after the step: no DDP buckets, which models past 25 MB
 * would otherwise cut);
 * model.params gives the same size; the resolved scenario keeps the
 * profile (or params) and loads back to itself; `dtsim list` prints each
 * profile's own numbers. */
START_TEST(test_none_profiles)
{
    const int n = 4, batch = 16;
    const double a = 1e-3, B = 1e10, F = 1e13, bpp = 2;
    size_t nv;
    const scn_vocab *v = scn_vocabs(&nv), *fam = NULL;
    for (size_t i = 0; i < nv; i++)
        if (strcmp(v[i].key, "model.profile") == 0)
            fam = &v[i];
    ck_assert_ptr_nonnull(fam);
    for (int k = 0; k < SCN_N_PROFILES; k++) {
        const scn_model_profile *pr = &scn_model_profiles[k];
        char want[64], flops[32];
        ck_assert_str_eq(fam->names[k], pr->name);
        snprintf(want, sizeof want, ": %.0f parameters, ", pr->params);
        ck_assert_msg(strstr(fam->help[k], want), "%s: %s", fam->help[k], want);
        /* "2.454e10 FLOPs per sample": 4 significant digits of 3 x forward */
        snprintf(flops, sizeof flops, "%.3e", 3 * pr->forward_flops);
        char *e = strchr(flops, 'e');
        snprintf(want, sizeof want, "%.*se%d FLOPs per sample", (int)(e - flops), flops,
                 atoi(e + 1));
        ck_assert_msg(strstr(fam->help[k], want), "%s: %s", fam->help[k], want);
        for (int form = 0; form < 2; form++) {
            char model[256], json[1024];
            if (form == 0)
                snprintf(model, sizeof model, "{\"kind\": \"none\", \"profile\": \"%s\"}",
                         pr->name);
            else
                snprintf(model, sizeof model, "{\"kind\": \"none\", \"params\": %.0f, "
                         "\"flops_per_sample\": %.17g}", pr->params, 3 * pr->forward_flops);
            snprintf(json, sizeof json,
                "{\"nodes\": %d, \"compute\": {\"flops_per_s\": %.17g},"
                " \"network\": {\"latency_s\": %.17g, \"bandwidth_Bps\": %.17g,"
                " \"bytes_per_param\": %.17g}, \"model\": %s,"
                " \"algorithm\": {\"name\": \"allreduce\", \"collective\": \"ring\","
                " \"overlap\": \"off\", \"batch\": %d}, \"stop\": {\"steps\": 2}}", n, F, a, B, bpp, model, batch);
            scn_scenario s, t;
            scn_error err;
            ck_assert_msg(scn_load_string(json, "p.json", NULL, 0, &s, &err) == 0, "%s", err.msg);
            ck_assert_double_eq(s.model_message_bytes, pr->params * bpp);
            ck_assert_double_eq(s.model_flops_per_sample, 3 * pr->forward_flops);
            ck_assert(strstr(s.resolved_json, form == 0 ? "\"profile\":" : "\"params\":"));
            ck_assert(!strstr(s.resolved_json, "\"message_bytes\""));
            ck_assert_msg(scn_load_string(s.resolved_json, "p.json", NULL, 0, &t, &err) == 0,
                          "%s", err.msg);
            ck_assert_str_eq(t.resolved_json, s.resolved_json);
            scn_fini(&t);
            scn_fini(&s);
            run_result res;
            run_json(json, NULL, &res);
            double M = pr->params * bpp, T = batch * 3 * pr->forward_flops / F;
            double ring = 2 * (n - 1) * a + 2.0 * (n - 1) / n * M / B;
            double got = res.sim_time_s - 2 * T;
            ck_assert_msg(fabs(got - ring) < 1e-9 * res.sim_time_s, "%s: %.17g s, closed form "
                          "%.17g s", pr->name, got, ring);
            ck_assert_double_eq_tol(res.last.bytes_sent, (2.0 * n - 1) * M, 1e-6 * M);
        }
    }
}
END_TEST

/* Every protocol in the registry runs on the none model to its stop
 * condition and communicates (but hogwild and symsgd, whose cores share
 * memory). */
START_TEST(test_none_every_algorithm)
{
    char names[512];
    snprintf(names, sizeof names, "%s", alg_names());
    int count = 0;
    for (char *save = NULL, *name = strtok_r(names, ", ", &save); name;
         name = strtok_r(NULL, ", ", &save)) {
        char json[1024];
        snprintf(json, sizeof json,
            "{\"seed\": 2, \"nodes\": 8,"
            " \"compute\": {\"step_time_s\": 0.01, \"noise\": {\"dist\": \"exponential\"}},"
            " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e8},"
            " \"topology\": {\"kind\": \"ring\"},"
            " \"model\": {\"kind\": \"none\", \"message_bytes\": 1e5},"
            " \"algorithm\": {\"name\": \"%s\"}, \"stop\": {\"steps\": 20}}", name);
        run_result res;
        run_json(json, NULL, &res);
        ck_assert_msg(strcmp(res.stop_reason, "steps") == 0, "%s: stopped by %s (%s)", name,
                      res.stop_reason, res.message);
        ck_assert_msg(res.last.steps >= 160, "%s: %llu steps", name,
                      (unsigned long long)res.last.steps);
        /* the shared-memory protocols have no network to use */
        if (strcmp(name, "hogwild") == 0 || strcmp(name, "symsgd") == 0)
            ck_assert_double_eq(res.last.bytes_sent, 0);
        else
            ck_assert_msg(res.last.bytes_sent >= 1e5, "%s: %g bytes", name, res.last.bytes_sent);
        ck_assert(isnan(res.last.train_loss));
        count++;
    }
    ck_assert_int_ge(count, 15);
}
END_TEST

/* The events of a FIFO message: one, its delivery (booked when it is
 * sent; no event at its first bit's arrival).  A timing-only D-PSGD round
 * of a node with d neighbours is then 1 + d events, its step's end and d
 * deliveries, plus one for the evaluation at t = 0: on a ring of 16
 * (1 MB at 1.25 GB/s, 0.8 ms a copy, so each node's second copy waits in
 * its uplink while a neighbour's first overtakes it at the receiver) and
 * on a 4 x 4 torus, 100 steps per node.  Three and five events per step
 * before were five and nine (an arrival and a delivery per message). */
START_TEST(test_none_events_per_dpsgd_step)
{
    static const struct { const char *topo; int deg; } g[] = {
        { "{\"kind\": \"ring\"}", 2 },
        { "{\"kind\": \"torus2d\", \"rows\": 4, \"cols\": 4}", 4 },
    };
    for (size_t t = 0; t < sizeof g / sizeof g[0]; t++) {
        char json[1024];
        snprintf(json, sizeof json,
            "{\"nodes\": 16, \"compute\": {\"step_time_s\": 0.01},"
            " \"network\": {\"latency_s\": 0.0005, \"bandwidth_Bps\": 1.25e9},"
            " \"topology\": %s, \"model\": {\"kind\": \"none\", \"message_bytes\": 1e6},"
            " \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"steps\": 100},"
            " \"metrics\": {\"every_s\": 1000}}", g[t].topo);
        run_result res;
        run_json(json, NULL, &res);
        ck_assert_str_eq(res.stop_reason, "steps");
        ck_assert_uint_eq(res.last.steps, 1600);
        ck_assert_uint_eq(res.events, 16 * 100 * (1 + (uint64_t)g[t].deg) + 1);
    }
}
END_TEST

#if !defined(__SANITIZE_ADDRESS__)
/* Heap in use (small chunks and mmapped ones). */
static size_t heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

typedef struct heap_probe {
    size_t base, at_start;
} heap_probe;

static void probe_row(void *ctx, const out_metrics_row *row)
{
    heap_probe *p = ctx;
    if (row->time_s == 0)
        p->at_start = heap_bytes();
}

/* A timing-only D-PSGD or all-reduce node on a ring with constant step
 * times costs less than 2 KiB of heap once the run has started (1.3 KiB
 * when written: node record, engine and topology entries, protocol state,
 * messages in flight; no generator that is never drawn from is created,
 * and all-reduce members share one list instead of n copies of it).  The
 * bound is what keeps 10^5 nodes far below 4 GiB. */
START_TEST(test_none_heap_per_node)
{
    /* the tree all-reduce: log n levels keep the run short */
    static const char *const algs[] = { "dpsgd", "allreduce\", \"collective\": \"tree" };
    const int n = 4000;
    for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++) {
        char json[1024];
        snprintf(json, sizeof json,
            "{\"nodes\": %d, \"compute\": {\"step_time_s\": 0.01},"
            " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e9},"
            " \"topology\": {\"kind\": \"ring\"},"
            " \"model\": {\"kind\": \"none\", \"message_bytes\": 1e6},"
            " \"algorithm\": {\"name\": \"%s\"}, \"stop\": {\"steps\": 2}}", n, algs[a]);
        heap_probe p = { .base = heap_bytes() };
        run_options opt = { .on_metrics = probe_row, .hook_ctx = &p };
        run_result res;
        run_json(json, &opt, &res);
        ck_assert(p.at_start > p.base);
        double per_node = (double)(p.at_start - p.base) / n;
        ck_assert_msg(per_node < 2048, "%s: %.0f bytes of heap per node", algs[a], per_node);
    }
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("timing_only");
    TCase *tc = tcase_create("timing_only");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_none_same_timeline_as_real_model);
    tcase_add_test(tc, test_none_ring_allreduce_closed_form);
    tcase_add_test(tc, test_none_profiles);
    tcase_add_test(tc, test_none_every_algorithm);
    tcase_add_test(tc, test_none_events_per_dpsgd_step);
#if !defined(__SANITIZE_ADDRESS__)
    tcase_add_test(tc, test_none_heap_per_node);
#endif
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
