/* test_exact_mix.c -- the decentralized protocols' averaging in closed
 * form: D-PSGD and gossip local SGD give X = W^k X0 on an irregular graph,
 * AD-PSGD, Prague and Hop keep the mean of the models, SGP's push-sum
 * de-bias on weights that drift, gossip learning's 1/2 merge (issue 14;
 * each test names the mutants of tests/mutants.tsv it kills; the wrapper is
 * exact_util.h's).
 */
#include "exact_util.h"
#include "alg_nbr.h"

/* ---- mixing: X = W^k X0 on an irregular graph ---- */

static void mix_rounds(int n, int rounds, double x[][MAXP])
{
    double y[MAXN][MAXP];
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++)
            for (size_t k = 0; k < cap_P; k++) {
                double v = cap_self[i] * x[i][k];
                for (size_t e = cap_off[i]; e < cap_off[i + 1]; e++)
                    v += cap_w[e] * x[cap_nbr[e]][k];
                y[i][k] = v;
            }
        memcpy(x, y, sizeof(double) * MAXP * (size_t)n);
    }
}

/* The graph has a node whose neighbours carry different weights. */
static void assert_irregular(int n)
{
    int found = 0;
    for (int i = 0; i < n && !found; i++)
        for (size_t e = cap_off[i] + 1; e < cap_off[i + 1]; e++)
            if (cap_w[e] != cap_w[cap_off[i]])
                found = 1;
    ck_assert_msg(found, "every node's neighbours have equal weights: the test cannot tell");
}

/* Which k in 0..20 gives the captured models; -1 when none. */
static int rounds_matching(int n)
{
    double x[MAXN][MAXP];
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < cap_P; k++)
            x[i][k] = spread_of(i, k);
    for (int r = 0; r <= 20; r++) {
        int same = 1;
        for (int i = 0; i < n && same; i++)
            for (size_t k = 0; k < cap_P && same; k++)
                same = fabs(x[i][k] - cap_x[i][k]) < 1e-12;
        if (same)
            return r;
        mix_rounds(n, 1, x);
    }
    return -1;
}

static const char *const irregular =
    "\"topology\": {\"kind\": \"erdos_renyi\", \"p\": 0.4},";

START_TEST(test_dpsgd_mixing_closed_form)
{
    char json[2048];
    snprintf(json, sizeof json, BASE(8, "") " %s \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1},"
             " \"stop\": {\"time_s\": 0.035}}", irregular);
    run_result res;
    run_wrapped(json, wrap("dpsgd", G_ZERO, 0.1), spread_init, &res);
    assert_irregular(8);
    /* rounds end at 0.01, 0.02, 0.03 s */
    ck_assert_int_eq(rounds_matching(8), 3);
}
END_TEST

/* Degrees above the mailbox's ALG_MBOX_INLINE (2) senders: the sender
 * lists and, with two threads (the mix deferred into the next step's job,
 * reading the kept payloads), the kept buffers and weights move to their
 * own arrays mid-round; X = W^3 X0 either way (mutants mbox-from-copy,
 * mbox-keep-w). */
START_TEST(test_dpsgd_mixing_closed_form_high_degree)
{
    char json[2048];
    snprintf(json, sizeof json, BASE(8, "") " \"topology\": {\"kind\": \"erdos_renyi\", \"p\": 0.8},"
             " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1}, \"stop\": {\"time_s\": 0.035}}");
    for (int threads = 1; threads <= 2; threads++) {
        run_result res;
        run_options opt = { .algorithm = wrap("dpsgd", G_ZERO, 0.1), .init_params = spread_init,
                            .threads = threads };
        run_json(json, &opt, &res);
        ck_assert_int_eq(res.status, RUN_OK);
        assert_irregular(8);
        size_t max_deg = 0;
        for (int i = 0; i < 8; i++)
            if (cap_off[i + 1] - cap_off[i] > max_deg)
                max_deg = cap_off[i + 1] - cap_off[i];
        ck_assert_msg(max_deg > 4, "degree %zu: the test cannot tell", max_deg);
        ck_assert_int_eq(rounds_matching(8), 3);
    }
}
END_TEST

/* A neighbour down from the start and declared failed: its weight moves
 * to each live node's own (alg_nbr_self_weight asks the mailbox which
 * senders came), so with lr 0 the live nodes keep the mean of their
 * initial models; degrees above the mailbox's two inline senders
 * (mutant mbox-from-copy). */
START_TEST(test_dpsgd_failed_neighbour_keeps_live_mean_high_degree)
{
    char json[2048];
    snprintf(json, sizeof json, BASE(8, "") " \"topology\": {\"kind\": \"erdos_renyi\", \"p\": 0.8},"
             " \"faults\": {\"detect_s\": 0.004, \"events\": [{\"kind\": \"schedule\","
             " \"nodes\": [3], \"down_s\": 0}]},"
             " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1}, \"stop\": {\"time_s\": 0.05}}");
    run_result res;
    run_wrapped(json, wrap("dpsgd", G_ZERO, 0.1), spread_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    size_t live_deg = 0;   /* the most live neighbours a live node has */
    for (int i = 0; i < 8; i++) {
        size_t d = 0;
        for (size_t e = cap_off[i]; e < cap_off[i + 1]; e++)
            d += cap_nbr[e] != 3;
        if (i != 3 && d > live_deg)
            live_deg = d;
    }
    ck_assert_msg(live_deg > 4, "%zu live neighbours at most: the test cannot tell", live_deg);
    for (size_t k = 0; k < cap_P; k++) {
        double m0 = 0, m1 = 0;
        for (int i = 0; i < 8; i++)
            if (i != 3) {
                m0 += spread_of(i, k);
                m1 += cap_x[i][k];
            }
        ck_assert_msg(fabs(m0 - m1) < 1e-12 * 7, "live sum of parameter %zu went from %.17g to %.17g",
                      k, m0, m1);
    }
    ck_assert_msg(fabs(cap_x[0][0] - spread_of(0, 0)) > 1e-6, "node 0 never mixed");
}
END_TEST

/* A learned topology (STL-FW): D-PSGD mixes with the learned W itself,
 * doubly stochastic and not Metropolis-Hastings on its support. */
START_TEST(test_dpsgd_learned_mixing_closed_form)
{
    char json[2048];
    snprintf(json, sizeof json, BASE(8, ", \"partition\": \"shards\"")
             " \"topology\": {\"kind\": \"learned\", \"degree\": 4},"
             " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1},"
             " \"stop\": {\"time_s\": 0.035}}");
    run_result res;
    run_wrapped(json, wrap("dpsgd", G_ZERO, 0.1), spread_init, &res);
    int metropolis = 1;
    double col[8] = { 0 };
    for (int i = 0; i < 8; i++) {
        double row = cap_self[i];
        col[i] += cap_self[i];
        size_t di = cap_off[i + 1] - cap_off[i];
        for (size_t e = cap_off[i]; e < cap_off[i + 1]; e++) {
            int j = cap_nbr[e];
            size_t dj = cap_off[j + 1] - cap_off[j];
            row += cap_w[e];
            col[j] += cap_w[e];
            if (cap_w[e] != 1.0 / (1.0 + (double)(di > dj ? di : dj)))
                metropolis = 0;
        }
        ck_assert_double_eq_tol(row, 1.0, 1e-12);
    }
    for (int j = 0; j < 8; j++)
        ck_assert_double_eq_tol(col[j], 1.0, 1e-12);
    ck_assert_msg(!metropolis, "the weights are Metropolis-Hastings: the test cannot tell");
    ck_assert_int_eq(rounds_matching(8), 3);
}
END_TEST

START_TEST(test_localsgd_gossip_mixing_closed_form)
{
    char json[2048];
    snprintf(json, sizeof json, BASE(8, "") " %s \"algorithm\": {\"name\": \"local-sgd\","
             " \"lr\": 0.1, \"sync\": \"gossip\"}, \"stop\": {\"time_s\": 0.035}}", irregular);
    run_result res;
    run_wrapped(json, wrap_p("local-sgd", G_ZERO, 0.1, "local_steps=1,sync=gossip"), spread_init, &res);
    assert_irregular(8);
    ck_assert_int_eq(rounds_matching(8), 3);
}
END_TEST

/* ---- averaging protocols keep the mean of the models (lr 0) ---- */

static void mean_of(int n, double *m, int captured)
{
    for (size_t k = 0; k < cap_P; k++) {
        m[k] = 0;
        for (int i = 0; i < n; i++)
            m[k] += captured ? cap_x[i][k] : spread_of(i, k);
        m[k] /= n;
    }
}

static void expect_mean_kept(const char *alg, const char *json, int n)
{
    run_result res;
    run_wrapped(json, wrap(alg, G_ZERO, 0.1), spread_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    double m0[MAXP], m1[MAXP];
    mean_of(n, m0, 0);
    mean_of(n, m1, 1);
    for (size_t k = 0; k < cap_P; k++)
        ck_assert_msg(fabs(m0[k] - m1[k]) < 1e-12, "%s: mean parameter %zu went from %.17g to %.17g",
                      alg, k, m0[k], m1[k]);
    /* and they mixed: the models are no longer the initial ones */
    ck_assert_msg(fabs(cap_x[0][0] - spread_of(0, 0)) > 1e-6, "%s: node 0 never mixed", alg);
}

START_TEST(test_adpsgd_keeps_mean)
{
    expect_mean_kept("adpsgd", BASE(6, "") " \"topology\": {\"kind\": \"ring\"},"
                     " \"algorithm\": {\"name\": \"adpsgd\", \"lr\": 0.1}, \"stop\": {\"time_s\": 0.3}}", 6);
}
END_TEST

START_TEST(test_prague_keeps_mean)
{
    expect_mean_kept("prague", BASE(6, "") " \"algorithm\": {\"name\": \"prague\", \"lr\": 0.1},"
                     " \"stop\": {\"time_s\": 0.3}}", 6);
}
END_TEST

START_TEST(test_hop_keeps_mean_on_regular)
{
    /* Hop averages its own model with the neighbours' updates, 1 / (1 +
     * count): on a complete graph of 4 without backups or staleness every
     * node averages the same 4 models, so all hold the mean */
    run_result res;
    run_wrapped(BASE(4, "") " \"topology\": {\"kind\": \"complete\"},"
                " \"algorithm\": {\"name\": \"hop\", \"lr\": 0.1, \"staleness\": 0},"
                " \"stop\": {\"time_s\": 0.015}}", wrap_p("hop", G_ZERO, 0.1, "staleness=0"), spread_init, &res);
    double m0[MAXP];
    mean_of(4, m0, 0);
    for (int i = 0; i < 4; i++)
        for (size_t k = 0; k < cap_P; k++)
            ck_assert_msg(fabs(cap_x[i][k] - m0[k]) < 1e-12, "node %d parameter %zu: %.17g, want %.17g",
                          i, k, cap_x[i][k], m0[k]);
}
END_TEST

/* ---- push-sum de-bias on weights that drift (sgp-debias, sgp-share, sgp-weight) ---- */

/* Equal models and lr 0: the de-biased z_i = x_i / w_i stay equal to the
 * common model whatever the weights do; without the de-bias they spread
 * with the weights.  With spread models they converge to the exact mean. */
START_TEST(test_sgp_debias_on_irregular_graph)
{
    char json[2048];
    snprintf(json, sizeof json, BASE(8, "") " %s \"algorithm\": {\"name\": \"sgp\", \"lr\": 0.1,"
             " \"graph\": \"topology\"}, \"stop\": {\"time_s\": 0.05}}", irregular);
    run_result res;
    run_wrapped(json, wrap_p("sgp", G_ZERO, 0.1, "graph=topology"), NULL, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    for (int i = 1; i < 8; i++)
        for (size_t k = 0; k < cap_P; k++)
            ck_assert_msg(fabs(cap_x[i][k] - cap_x[0][k]) < 1e-12 * (1 + fabs(cap_x[0][k])),
                          "node %d parameter %zu: %.17g, node 0 %.17g", i, k, cap_x[i][k], cap_x[0][k]);
    snprintf(json, sizeof json, BASE(8, "") " %s \"algorithm\": {\"name\": \"sgp\", \"lr\": 0.1,"
             " \"graph\": \"topology\"}, \"stop\": {\"time_s\": 1.5}}", irregular);
    run_wrapped(json, wrap_p("sgp", G_ZERO, 0.1, "graph=topology"), spread_init, &res);
    double m0[MAXP];
    mean_of(8, m0, 0);
    for (int i = 0; i < 8; i++)
        for (size_t k = 0; k < cap_P; k++)
            ck_assert_msg(fabs(cap_x[i][k] - m0[k]) < 1e-9, "node %d parameter %zu: %.17g, mean %.17g",
                          i, k, cap_x[i][k], m0[k]);
}
END_TEST

/* ---- gossip learning merges by halves (gossip-merge, gossip-period) ---- */

/* Two nodes send each other their models every period_s: each merge is
 * (x + x_received) / 2, so after the first exchange both hold (a + b) / 2
 * exactly and never change again (lr 0). */
START_TEST(test_gossip_merge_half)
{
    run_result res;
    run_wrapped(BASE(2, "") " \"topology\": {\"kind\": \"complete\"},"
                " \"algorithm\": {\"name\": \"gossip\", \"lr\": 0.1, \"period_s\": 0.025},"
                " \"stop\": {\"time_s\": 0.2}}", wrap_p("gossip", G_ZERO, 0.1, "period_s=0.025"), spread_init, &res);
    for (int i = 0; i < 2; i++)
        for (size_t k = 0; k < cap_P; k++)
            ck_assert_double_eq(cap_x[i][k], (spread_of(0, k) + spread_of(1, k)) / 2);
    /* sends at 0.025 k for k = 1..7 (0.2 is the stop, the 8th may go or not) */
    ck_assert_double_ge(stat_of(&res, "sent_min"), 7);
    ck_assert_double_le(stat_of(&res, "sent_max"), 8);
}
END_TEST

/* Whether a D-PSGD node's mailbox keeps references (alg_mbox.ctx set),
 * as seen after every message (the mailbox is dp_state's first member,
 * alg_dpsgd.c).  The timing-only model (P 0) has nothing to keep: its
 * mailbox only counts senders (no block of references and weights written
 * at each arrival), on one thread and with the mix deferred on two; a real
 * model with two threads keeps, so the test can tell (mutant
 * dpsgd-keep-timing). */
static long msgs_seen, msgs_kept;
static void probe_message(alg_ctx *ctx, void *st, int i, const cl_msg *m)
{
    inner->on_message(ctx, st, i, m);
    msgs_seen++;
    msgs_kept += ((const alg_mbox *)st)->ctx != NULL;
}

START_TEST(test_dpsgd_timing_only_mailbox_keeps_nothing)
{
    const char *timing = "{\"seed\": 2, \"nodes\": 8, \"model\": {\"kind\": \"none\","
                         " \"message_bytes\": 1e4}, \"compute\": {\"step_time_s\": 0.01},"
                         " \"network\": {\"latency_s\": 0.0001, \"bandwidth_Bps\": 1e9},"
                         " \"topology\": {\"kind\": \"ring\"}, \"algorithm\": {\"name\": \"dpsgd\"},"
                         " \"stop\": {\"steps\": 3}}";
    char real[2048];
    snprintf(real, sizeof real, BASE(8, "") " \"topology\": {\"kind\": \"ring\"},"
             " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1}, \"stop\": {\"steps\": 3}}");
    inner = alg_find("dpsgd");
    ck_assert_ptr_nonnull(inner);
    wrapped = *inner;
    wrapped.on_message = probe_message;
    for (int run = 0; run < 3; run++) {
        msgs_seen = msgs_kept = 0;
        run_result res;
        run_options opt = { .algorithm = &wrapped, .threads = run == 0 ? 1 : 2 };
        run_json(run < 2 ? timing : real, &opt, &res);
        ck_assert_int_eq(res.status, RUN_OK);
        ck_assert_int_ge(msgs_seen, 16);
        if (run < 2)
            ck_assert_msg(msgs_kept == 0, "threads %d: a timing-only mailbox kept %ld of %ld",
                          opt.threads, msgs_kept, msgs_seen);
        else
            ck_assert_msg(msgs_kept == msgs_seen, "a deferred real mix kept %ld of %ld", msgs_kept,
                          msgs_seen);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exact_mix");
    TCase *tc = tcase_create("exact_mix");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_dpsgd_mixing_closed_form);
    tcase_add_test(tc, test_dpsgd_mixing_closed_form_high_degree);
    tcase_add_test(tc, test_dpsgd_failed_neighbour_keeps_live_mean_high_degree);
    tcase_add_test(tc, test_dpsgd_learned_mixing_closed_form);
    tcase_add_test(tc, test_dpsgd_timing_only_mailbox_keeps_nothing);
    tcase_add_test(tc, test_localsgd_gossip_mixing_closed_form);
    tcase_add_test(tc, test_adpsgd_keeps_mean);
    tcase_add_test(tc, test_prague_keeps_mean);
    tcase_add_test(tc, test_hop_keeps_mean_on_regular);
    tcase_add_test(tc, test_sgp_debias_on_irregular_graph);
    tcase_add_test(tc, test_gossip_merge_half);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
