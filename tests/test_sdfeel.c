/* test_sdfeel.c -- SD-FEEL's server graph and its gossip rounds, exactly
 * (issue 18 item 7; sim/algos/alg_sdgraph.c): with the zero gradient the
 * models change only by averaging, so after one global round of alpha
 * gossip rounds the edge models are P^alpha y0, y0 the clusters'
 * data-weighted averages.  Two servers with data weights have P = [[1 -
 * S/pi1, S/pi1], [S/pi2, 1 - S/pi2]], S = min(pi1, pi2) / 2: every model
 * tends to pi1 y1 + pi2 y2 (the global data-weighted average) and the
 * deviation shrinks by exactly lambda2 = 1 - S/pi1 - S/pi2 per round.  A
 * star of 5 servers with the graph's weights gives W^alpha y0 (W worked
 * by hand); with data weights, alpha = 750 reaches the global
 * data-weighted average.  Bad server graphs are located errors.
 */
#include "exact_util.h"

/* One global round: steps of 10 ms, then the aggregation and alpha gossip
 * rounds of 0.1 ms links; the run stops before the second round's steps
 * end.  extra: more algorithm keys. */
static void run_sd(int n, int C, int alpha, const char *extra, run_result *res)
{
    /* rounds of 0.1 ms + 32 B at 1 GB/s; the next steps end 10 ms later */
    double stop_s = 0.0102 + alpha * 0.000101 + 0.005;
    char json[2048], spec[256];
    snprintf(json, sizeof json, BASE(%d, ", \"partition\": \"quantity\"")
             " \"algorithm\": {\"name\": \"sdfeel\", \"lr\": 0.1, \"batch\": 4, \"clusters\": %d,"
             " \"local_steps\": 1, \"gossip_rounds\": %d%s}, \"stop\": {\"time_s\": %g}}",
             n, C, alpha, extra, stop_s);
    snprintf(spec, sizeof spec, "clusters=%d,local_steps=1,gossip_rounds=%d", C, alpha);
    const alg_type *a = wrap_p("sdfeel", G_ZERO, 0.1, spec);
    run_wrapped(json, a, spread_init, res);
    ck_assert_int_eq(res->status, RUN_OK);
}

/* Cluster c's data-weighted average of its clients' initial models
 * (workers [c n / C, (c + 1) n / C)), and the clusters' data sizes. */
static void cluster_models(int n, int C, double y[][MAXP], double *m)
{
    for (int c = 0; c < C; c++) {
        m[c] = 0;
        for (size_t k = 0; k < cap_P; k++)
            y[c][k] = 0;
        for (int i = c * n / C; i < (c + 1) * n / C; i++) {
            m[c] += (double)cap_samples[i];
            for (size_t k = 0; k < cap_P; k++)
                y[c][k] += (double)cap_samples[i] * spread_of(i, k);
        }
        for (size_t k = 0; k < cap_P; k++)
            y[c][k] /= m[c];
    }
}

static void expect_server(int n, int c, const double *want, const char *what)
{
    for (size_t k = 0; k < cap_P; k++)
        ck_assert_msg(fabs(cap_x[n + c][k] - want[k]) < 1e-12,
                      "%s: server %d parameter %zu is %.17g, want %.17g", what, c, k,
                      cap_x[n + c][k], want[k]);
}

/* Two servers, data weights: y_c(alpha) = ybar + lambda2^alpha (y_c - ybar). */
START_TEST(test_two_servers_contract_by_lambda2)
{
    const int alphas[] = { 1, 2, 5, 60 };
    for (int a = 0; a < 4; a++) {
        run_result res;
        run_sd(6, 2, alphas[a], ", \"server_weights\": \"data\"", &res);
        ck_assert_double_eq(stat_of(&res, "gossip_rounds_min"), alphas[a]);
        ck_assert_double_eq(stat_of(&res, "gossip_rounds_max"), alphas[a]);
        ck_assert_double_eq(stat_of(&res, "aggregations_min"), 1);
        double y[2][MAXP], m[2];
        cluster_models(6, 2, y, m);
        ck_assert_msg(fabs(m[0] - m[1]) > 20, "clusters of %g and %g samples", m[0], m[1]);
        double p1 = m[0] / (m[0] + m[1]), p2 = m[1] / (m[0] + m[1]);
        double S = (p1 < p2 ? p1 : p2) / 2, l2 = 1 - S / p1 - S / p2, f = pow(l2, alphas[a]);
        for (int c = 0; c < 2; c++) {
            double want[MAXP];
            for (size_t k = 0; k < cap_P; k++) {
                double ybar = p1 * y[0][k] + p2 * y[1][k];
                want[k] = ybar + f * (y[c][k] - ybar);
            }
            expect_server(6, c, want, "two servers, data weights");
        }
    }
}
END_TEST

/* Two servers, the graph's weights (1/2 each): the plain average at once. */
START_TEST(test_two_servers_graph_weights)
{
    run_result res;
    run_sd(6, 2, 1, "", &res);
    double y[2][MAXP], m[2], want[MAXP];
    cluster_models(6, 2, y, m);
    for (size_t k = 0; k < cap_P; k++)
        want[k] = (y[0][k] + y[1][k]) / 2;
    expect_server(6, 0, want, "graph weights");
    expect_server(6, 1, want, "graph weights");
}
END_TEST

/* A star of 5 servers (centre 0), the graph's Metropolis-Hastings
 * weights: centre 1/5 to each, a leaf 1/5 to the centre and 4/5 its own;
 * after alpha rounds W^alpha y0. */
START_TEST(test_star_of_servers)
{
    const int alpha = 4;
    run_result res;
    run_sd(10, 5, alpha, ", \"server_topology\": \"star\"", &res);
    ck_assert_double_eq(stat_of(&res, "gossip_rounds_min"), alpha);
    double y[5][MAXP], m[5], W[5][5] = { { 0 } };
    cluster_models(10, 5, y, m);
    for (int j = 0; j < 5; j++) {
        W[0][j] = 0.2;
        W[j][0] = 0.2;
        if (j)
            W[j][j] = 0.8;
    }
    for (int r = 0; r < alpha; r++) {
        double z[5][MAXP];
        for (int c = 0; c < 5; c++)
            for (size_t k = 0; k < cap_P; k++) {
                z[c][k] = 0;
                for (int d = 0; d < 5; d++)
                    z[c][k] += W[c][d] * y[d][k];
            }
        memcpy(y, z, sizeof z);
    }
    for (int c = 0; c < 5; c++)
        expect_server(10, c, y[c], "star");
}
END_TEST

/* Data weights on a star and on an Erdos-Renyi graph, alpha 750: every
 * edge model is the global data-weighted average sum n_i x_i / sum n_i. */
START_TEST(test_data_weights_reach_the_global_average)
{
    const char *graphs[] = { ", \"server_topology\": \"star\"",
                             ", \"server_topology\": \"erdos_renyi\", \"server_p\": 0.8" };
    for (int q = 0; q < 2; q++) {
        char extra[256];
        snprintf(extra, sizeof extra, "%s, \"server_weights\": \"data\"", graphs[q]);
        run_result res;
        run_sd(10, 5, 750, extra, &res);
        ck_assert_double_eq(stat_of(&res, "gossip_rounds_min"), 750);
        double want[MAXP] = { 0 }, tot = 0;
        for (int i = 0; i < 10; i++) {
            tot += (double)cap_samples[i];
            for (size_t k = 0; k < cap_P; k++)
                want[k] += (double)cap_samples[i] * spread_of(i, k);
        }
        for (size_t k = 0; k < cap_P; k++)
            want[k] /= tot;
        for (int c = 0; c < 5; c++)
            expect_server(10, c, want, graphs[q]);
    }
}
END_TEST

START_TEST(test_bad_server_graphs_are_located)
{
    expect_prepare_error(BASE(6, "") " \"algorithm\": {\"name\": \"sdfeel\", \"clusters\": 6,"
        " \"server_topology\": \"erdos_renyi\", \"server_p\": 0.01}, \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/name: error: the server graph (6 servers): erdos_renyi graph "
        "with n=6, p=0.01 is disconnected (6 components); raise p");
    expect_prepare_error(BASE(4, "") " \"algorithm\": {\"name\": \"sdfeel\", \"clusters\": 4,"
        " \"server_topology\": \"torus2d\"}, \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/name: error: server_topology \"torus2d\" is not available for "
        "the server graph (no rows and cols): use another kind or an edge_list");
    expect_prepare_error(BASE(4, "") " \"algorithm\": {\"name\": \"sdfeel\", \"clusters\": 4,"
        " \"server_topology\": \"edge_list\"}, \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/name: error: server_topology \"edge_list\" needs server_edges "
        "(a file of server pairs)");
    expect_prepare_error(BASE(4, "") " \"algorithm\": {\"name\": \"sdfeel\", \"gossip_rounds\": 0}, \"stop\": {\"time_s\": 1}}",
        "test.json: /algorithm/gossip_rounds: error: must be in [1, 1e+06], got 0");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sdfeel");
    TCase *tc = tcase_create("sdfeel");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_two_servers_contract_by_lambda2);
    tcase_add_test(tc, test_two_servers_graph_weights);
    tcase_add_test(tc, test_star_of_servers);
    tcase_add_test(tc, test_data_weights_reach_the_global_average);
    tcase_add_test(tc, test_bad_server_graphs_are_located);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
