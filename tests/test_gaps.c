/* test_gaps.c -- smaller gaps of the protocol catalogue (issue 13, part 4):
 * D-PSGD and local SGD's gossip on time-varying undirected graphs (with
 * lr = 0 the models after k rounds are the product of the rounds' mixing
 * matrices, built here by hand, applied to the initial models; exact
 * messages and bytes per round; a schedule file naming a node that does not
 * exist is refused at its line), and the protocol's servers named in
 * network.nics and network.links (a ps-sync round whose time is set by the
 * server's capped downlink, to the closed form; located errors when the
 * protocol has no such server).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_host.h"   /* the registry's protocol tables */
#include "test_util.h"

#define N 8          /* nodes at most */
#define R 12         /* rounds recorded at most */
#define PMAX 64      /* parameters at most */

/* ---- recording what a wrapped protocol sees -------------------------- */

typedef struct recorder {
    const alg_type *inner;
    int    steps[N];                 /* steps done per node */
    double x[N][R + 1][PMAX];        /* params at the end of each step, before the protocol */
    int    recv[N][R + 1];           /* messages delivered per node and round */
    double recv_bytes[N][R + 1];
    int    from[N][R + 1];           /* the last sender of each round */
    size_t P;
} recorder;

static recorder rec;

static void rec_step_done(alg_ctx *ctx, void *state, int i, const double *grad)
{
    int s = rec.steps[i]++;
    rec.P = ctx->P;
    if (s <= R && ctx->P <= PMAX)
        memcpy(rec.x[i][s], alg_params_const(ctx, i), ctx->P * sizeof(double));
    rec.inner->on_step_done(ctx, state, i, grad);
}

static void rec_message(alg_ctx *ctx, void *state, int i, const cl_msg *m)
{
    if (m->round <= R) {
        rec.recv[i][m->round]++;
        rec.recv_bytes[i][m->round] += m->bytes;
        rec.from[i][m->round] = m->from;
    }
    rec.inner->on_message(ctx, state, i, m);
}

/* The runner gives a protocol passed in run_options its defaults, so the
 * wrapper sets the scenario's keys again (the scenario's own copy of them
 * has been checked by run_prepare: the file is read, the values valid). */
typedef struct kv {
    const char *key, *str;   /* str NULL: num */
    double      num;
} kv;

static alg_type wrapped;
static const kv *wrapped_keys;

static int rec_shared_init(alg_ctx *ctx)
{
    for (const kv *q = wrapped_keys; q && q->key; q++) {
        int k = alg_params_index(rec.inner, q->key);
        char err[256];
        ck_assert_int_ge(k, 0);
        if (rec.inner->params[k].kind == ALG_PARAM_PATH)
            ctx->path[k] = q->str;
        else
            ck_assert_int_eq(alg_params_set(rec.inner, ctx, q->key, q->str != NULL, q->num,
                                            q->str, err, sizeof err), 0);
    }
    return rec.inner->shared_init ? rec.inner->shared_init(ctx) : 0;
}

static const alg_type *wrap(const alg_type *inner, const kv *keys)
{
    memset(&rec, 0, sizeof rec);
    rec.inner = inner;
    wrapped = *inner;
    wrapped_keys = keys;
    wrapped.on_step_done = rec_step_done;
    wrapped.on_message = rec_message;
    wrapped.shared_init = rec_shared_init;
    return &wrapped;
}

/* The keys as the scenario's algorithm object spells them. */
static void keys_json(const kv *keys, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (const kv *q = keys; q && q->key && len < size; q++) {
        if (q->str)
            len += (size_t)snprintf(buf + len, size - len, ", \"%s\": \"%s\"", q->key, q->str);
        else
            len += (size_t)snprintf(buf + len, size - len, ", \"%s\": %g", q->key, q->num);
    }
}

/* Distinct, non-dyadic starting models. */
static double x0(int node, size_t k) { return (node + 1) * 1.7 + (double)(k % 5) * (node * node - 2.3); }

static void init_x0(void *ctx, int node, double *x, size_t P)
{
    (void)ctx;
    for (size_t k = 0; k < P; k++)
        x[k] = x0(node, k);
}

/* ---- hand-built mixing matrices ------------------------------------- */

typedef void (*round_matrix)(int n, int r, double W[N][N]);

static void zero(double W[N][N])
{
    memset(W, 0, sizeof(double) * N * N);
}

/* match2.txt: {0-1, 2-3}, then {1-2}; pairs average, a node that sits out
 * keeps its model. */
static void w_match2(int n, int r, double W[N][N])
{
    (void)n;
    zero(W);
    if (r % 2 == 0) {
        W[0][0] = W[0][1] = W[1][0] = W[1][1] = 0.5;
        W[2][2] = W[2][3] = W[3][2] = W[3][3] = 0.5;
    } else {
        W[0][0] = W[3][3] = 1;
        W[1][1] = W[1][2] = W[2][1] = W[2][2] = 0.5;
    }
}

/* path_match.txt: the path 0-1-2-3 (degrees 1, 2, 2, 1; Metropolis-Hastings
 * 1/(1 + max degree) = 1/3 on every edge, the rest on the diagonal), then
 * {0-3}. */
static void w_path_match(int n, int r, double W[N][N])
{
    (void)n;
    zero(W);
    if (r % 2 == 0) {
        W[0][1] = W[1][0] = W[1][2] = W[2][1] = W[2][3] = W[3][2] = 1.0 / 3;
        W[0][0] = W[3][3] = 2.0 / 3;
        W[1][1] = W[2][2] = 1.0 / 3;
    } else {
        W[1][1] = W[2][2] = 1;
        W[0][0] = W[0][3] = W[3][0] = W[3][3] = 0.5;
    }
}

/* The undirected one-peer exponential graph on 8 nodes: round r links i
 * and i +- 2^(r mod 3); for hops 1 and 2 every node has two neighbours
 * (weights 1/3), for hop 4 one (1/2). */
static void w_one_peer8(int n, int r, double W[N][N])
{
    zero(W);
    int h = 1 << (r % 3);
    double w = h == 4 ? 0.5 : 1.0 / 3;
    for (int i = 0; i < n; i++) {
        W[i][i] = w;
        W[i][(i + h) % n] = w;
        if ((i - h + n) % n != (i + h) % n)
            W[i][(i - h + n) % n] = w;
    }
}

/* Edges of round r's graph (off-diagonal nonzeros / 2) and node i's
 * degree. */
static int degree_of(double W[N][N], int n, int i)
{
    int d = 0;
    for (int j = 0; j < n; j++)
        d += j != i && W[i][j] != 0;
    return d;
}

/* The models of round r+1 from those of round r: y = W_r x. */
static void mix(int n, double W[N][N], double x[N][PMAX], size_t P)
{
    double y[N][PMAX];
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < P; k++) {
            y[i][k] = 0;
            for (int j = 0; j < n; j++)
                y[i][k] += W[i][j] * x[j][k];
        }
    memcpy(x, y, sizeof y);
}

static const char *const small =
    "\"compute\": {\"step_time_s\": 1},"
    " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e9},"
    " \"data\": {\"train\": 256, \"test\": 16, \"features\": 3, \"classes\": 3}";

/* Runs alg (with its extra keys) on n nodes for `rounds` synchronisation
 * rounds (local_steps steps each) with lr = 0, recording every step, and
 * checks every node's model at every step against the product of the
 * hand-built matrices, and each round's deliveries against the degrees. */
static void check_product(const alg_type *alg, const kv *kvs, int n, int local_steps,
                          int rounds, round_matrix wm)
{
    char json[2048], keys[1024];
    keys_json(kvs, keys, sizeof keys);
    snprintf(json, sizeof json,
        "{\"nodes\": %d, %s, \"algorithm\": {\"name\": \"%s\", \"lr\": 0, \"batch\": 4%s},"
        " \"stop\": {\"steps\": %d}}", n, small, alg->name, keys, rounds * local_steps + 1);
    run_options opt = { .algorithm = wrap(alg, kvs), .init_params = init_x0 };
    run_result res;
    run_json(json, &opt, &res);
    size_t P = rec.P;
    ck_assert(P > 0 && P <= PMAX);
    double x[N][PMAX], W[N][N];
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < P; k++)
            x[i][k] = x0(i, k);
    for (int r = 0; r <= rounds; r++) {
        for (int i = 0; i < n; i++) {
            ck_assert_int_ge(rec.steps[i], rounds * local_steps);
            for (int s = r * local_steps; s < (r + 1) * local_steps && s < rounds * local_steps;
                 s++)
                for (size_t k = 0; k < P; k++)
                    ck_assert_msg(fabs(rec.x[i][s][k] - x[i][k]) <= 1e-12,
                                  "%s%s: node %d step %d (round %d) param %zu: %.17g, expected "
                                  "%.17g", alg->name, keys, i, s, r, k, rec.x[i][s][k], x[i][k]);
        }
        wm(n, r, W);
        if (r < rounds) {   /* round r is finished everywhere: exact deliveries */
            for (int i = 0; i < n; i++) {
                ck_assert_int_eq(rec.recv[i][r], degree_of(W, n, i));
                ck_assert_double_eq(rec.recv_bytes[i][r], degree_of(W, n, i) * (double)P * 4);
            }
        }
        mix(n, W, x, P);
    }
}

#define DATA DTSIM_SOURCE_DIR "/tests/data/gaps/"

START_TEST(test_dpsgd_file_schedules_are_matrix_products)
{
    const kv match2[] = { { "schedule", "file", 0 }, { "schedule_file", DATA "match2.txt", 0 },
                          { NULL, NULL, 0 } };
    const kv path[] = { { "schedule", "file", 0 }, { "schedule_file", DATA "path_match.txt", 0 },
                        { NULL, NULL, 0 } };
    check_product(&alg_dpsgd, match2, 4, 1, 7, w_match2);
    check_product(&alg_dpsgd, path, 4, 1, 7, w_path_match);
}
END_TEST

START_TEST(test_dpsgd_one_peer_undirected)
{
    const kv one[] = { { "schedule", "one_peer_exponential", 0 }, { NULL, NULL, 0 } };
    check_product(&alg_dpsgd, one, 8, 1, 7, w_one_peer8);
}
END_TEST

START_TEST(test_localsgd_gossip_schedules)
{
    const kv path[] = { { "sync", "gossip", 0 }, { "local_steps", NULL, 2 },
                        { "schedule", "file", 0 }, { "schedule_file", DATA "path_match.txt", 0 },
                        { NULL, NULL, 0 } };
    const kv one[] = { { "sync", "gossip", 0 }, { "local_steps", NULL, 3 },
                       { "schedule", "one_peer_exponential", 0 }, { NULL, NULL, 0 } };
    check_product(&alg_localsgd, path, 4, 2, 5, w_path_match);
    check_product(&alg_localsgd, one, 8, 3, 4, w_one_peer8);
}
END_TEST

/* Random matchings: each round every node averages with exactly one other
 * node whose partner it is (a perfect matching on 8 nodes), one message
 * each way; the matchings change from round to round; and bytes_sent at
 * t = k + 1/2 (rounds last exactly one step of 1 s) is (k + 1) rounds of
 * 8 models. */
START_TEST(test_dpsgd_random_matching)
{
    const int n = 8, rounds = 6;
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": %d, %s, \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0, \"batch\": 4,"
        " \"schedule\": \"random_matching\"}, \"stop\": {\"time_s\": %g}}", n, small,
        rounds + 0.5);
    const kv keys[] = { { "schedule", "random_matching", 0 }, { NULL, NULL, 0 } };
    run_options opt = { .algorithm = wrap(&alg_dpsgd, keys), .init_params = init_x0 };
    run_result res;
    run_json(json, &opt, &res);
    size_t P = rec.P;
    ck_assert_double_eq(res.last.bytes_sent, (rounds + 1) * n * (double)P * 4);
    int changed = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++) {
            int j = rec.from[i][r];
            ck_assert_int_eq(rec.recv[i][r], 1);
            ck_assert_int_eq(rec.from[j][r], i);   /* a matching */
            for (size_t k = 0; r + 1 < rounds && k < P; k++)   /* steps end at 1 .. rounds s */
                ck_assert_double_eq_tol(rec.x[i][r + 1][k],
                                        0.5 * (rec.x[i][r][k] + rec.x[j][r][k]), 1e-12);
            changed += r > 0 && rec.from[i][r] != rec.from[i][r - 1];
        }
    }
    ck_assert_int_gt(changed, 0);
}
END_TEST

/* Bad schedules are scenario errors: a node the scenario does not have, at
 * its line; a missing or stray schedule_file; a directed schedule; a
 * schedule local SGD's all-reduce cannot use. */
START_TEST(test_schedule_errors)
{
    const char *bad = DATA "bad_node.txt";
    const char *algs[] = { "dpsgd", "local-sgd\", \"sync\": \"gossip" };
    for (int a = 0; a < 2; a++) {
        char json[2048];
        snprintf(json, sizeof json,
            "{\"nodes\": 4, \"algorithm\": {\"name\": \"%s\", \"schedule\": \"file\","
            " \"schedule_file\": \"%s\"}, \"stop\": {\"steps\": 5}}", algs[a], bad);
        char want[1024];
        snprintf(want, sizeof want, "%s:4: error: node 4 out of range (nodes are 0..3)", bad);
        expect_prepare_error(json, want);
    }
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"dpsgd\", \"schedule\":"
                         " \"file\"}, \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/name: error: dpsgd with schedule \"file\" needs "
                         "schedule_file");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"dpsgd\", \"schedule_file\":"
                         " \"x.txt\"}, \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/name: error: dpsgd: schedule_file needs schedule "
                         "\"file\", got \"static\"");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"dpsgd\", \"schedule\":"
                         " \"random_k_out\"}, \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/schedule: error: unknown value \"random_k_out\" "
                         "(expected one of: static, random_matching, one_peer_exponential, "
                         "file)");
    expect_prepare_error("{\"nodes\": 4, \"algorithm\": {\"name\": \"local-sgd\", \"schedule\":"
                         " \"random_matching\"}, \"stop\": {\"steps\": 5}}",
                         "test.json: /algorithm/name: error: local-sgd schedule "
                         "\"random_matching\" needs sync \"gossip\" (an all-reduce uses no "
                         "graph)");
}
END_TEST

/* ---- servers in network.nics and network.links ------------------------ */

/* ps-sync, n equal workers finishing together at T, M bytes per message,
 * latency a, every NIC at B except the server's as the entry sets it: the
 * n gradients pass the server's downlink one after another (n M / down),
 * then its uplink sends the n models one after another (n M / up), so the
 * first iteration lasts T + 2a + n M / down + n M / up for the last worker
 * served, and the run (2 steps) ends T later. */
static double ps_sync_time(int n, const char *network_extra)
{
    char json[2048];
    snprintf(json, sizeof json,
        "{\"nodes\": %d, \"compute\": {\"step_time_s\": 1},"
        " \"network\": {\"latency_s\": 0.001, \"bandwidth_Bps\": 1e5%s},"
        " \"data\": {\"train\": 512, \"test\": 16, \"features\": 15, \"classes\": 4},"
        " \"algorithm\": {\"name\": \"ps-sync\", \"batch\": 4}, \"stop\": {\"steps\": 2}}",
        n, network_extra);
    run_result res;
    run_json(json, NULL, &res);
    ck_assert_int_eq(res.n_params, 64);   /* M = 256 bytes */
    return res.sim_time_s;
}

START_TEST(test_server_nic_capped)
{
    const double T = 1, a = 1e-3, B = 1e5, M = 256, cap = 1e4;
    for (int n = 1; n <= 7; n += 3) {
        double t = ps_sync_time(n, "");
        ck_assert_double_eq_tol(t, 2 * T + 2 * a + 2 * n * M / B, 1e-12);
        t = ps_sync_time(n, ", \"nics\": [{\"nodes\": [\"server\"], \"down_Bps\": 1e4}]");
        ck_assert_msg(fabs(t - (2 * T + 2 * a + n * M / cap + n * M / B)) < 1e-12,
                      "n=%d down capped: %.17g", n, t);
        t = ps_sync_time(n, ", \"nics\": [{\"nodes\": [\"server:0\"], \"up_Bps\": 1e4}]");
        ck_assert_msg(fabs(t - (2 * T + 2 * a + n * M / B + n * M / cap)) < 1e-12,
                      "n=%d up capped: %.17g", n, t);
        /* both ways, and a later entry that names only workers leaves the
         * server's NIC alone */
        t = ps_sync_time(n, ", \"nics\": [{\"nodes\": [\"servers\"], \"up_Bps\": 1e4,"
                            " \"down_Bps\": 1e4}, {\"nodes\": [0], \"up_Bps\": 1e6}]");
        ck_assert_msg(fabs(t - (2 * T + 2 * a + 2 * n * M / cap)) < 1e-12,
                      "n=%d both capped: %.17g", n, t);
        /* the server's links only: latency 0.01 both ways */
        t = ps_sync_time(n, ", \"links\": [{\"from\": [\"servers\"], \"latency_s\": 0.01}]");
        ck_assert_msg(fabs(t - (2 * T + 2 * 0.01 + 2 * n * M / B)) < 1e-12,
                      "n=%d server links: %.17g", n, t);
        /* a directed link from the server to the workers at 1e4 B/s: the
         * models go at 1e4, the gradients at B */
        char links[256];
        snprintf(links, sizeof links, ", \"links\": [{\"from\": [\"server\"], \"to\": [\"0-%d\"],"
                 " \"directed\": true, \"bandwidth_Bps\": 1e4}]", n - 1);
        t = ps_sync_time(n, links);
        ck_assert_msg(fabs(t - (2 * T + 2 * a + n * M / B + n * M / cap)) < 1e-12,
                      "n=%d directed server link: %.17g", n, t);
    }
}
END_TEST

/* Server names are checked against the protocol where it is known, at the
 * entry that names them; elsewhere they are not node numbers. */
START_TEST(test_server_names_checked)
{
    expect_prepare_error("{\"nodes\": 4, \"network\": {\"nics\": [{\"nodes\": [1, \"server\"],"
                         " \"down_Bps\": 1e6}]}, \"algorithm\": {\"name\": \"dpsgd\"},"
                         " \"stop\": {\"steps\": 5}}",
                         "test.json: /network/nics/0/nodes/1: error: names a server, but "
                         "algorithm \"dpsgd\" has none (only the nodes 0..3 exist)");
    expect_prepare_error("{\"nodes\": 4, \"network\": {\"nics\": [{\"nodes\": [\"server:0\","
                         " \"server:1\"], \"down_Bps\": 1e6}]}, \"algorithm\": {\"name\":"
                         " \"ps-sync\"}, \"stop\": {\"steps\": 5}}",
                         "test.json: /network/nics/0/nodes/1: error: server 1 does not exist: "
                         "algorithm \"ps-sync\" has 1 server (server:0)");
    expect_prepare_error("{\"nodes\": 4, \"network\": {\"links\": [{\"from\": [0],"
                         " \"to\": [\"server:2\"], \"latency_s\": 1}]}, \"algorithm\":"
                         " {\"name\": \"sdfeel\", \"clusters\": 2}, \"stop\": {\"steps\": 5}}",
                         "test.json: /network/links/0/to/0: error: server 2 does not exist: "
                         "algorithm \"sdfeel\" has 2 servers (server:0 .. server:1)");
    expect_prepare_error("{\"nodes\": 4, \"network\": {\"links\": [{\"from\": [\"0-3\","
                         " \"server\"], \"latency_s\": 1}]}, \"algorithm\": {\"name\": \"sdfeel\","
                         " \"clusters\": 2}, \"stop\": {\"steps\": 5}}",
                         "test.json: /network/links/0/from/1: error: \"server\" is ambiguous: "
                         "algorithm \"sdfeel\" has 2 servers (name one as \"server:K\", K in "
                         "0..1, or all as \"servers\")");
    /* the loader's own checks */
    scn_scenario sc;
    scn_error err;
    static const struct { const char *network, *msg; } bad[] = {
        { "\"nics\": [{\"nodes\": [\"server\", \"server:0\"], \"up_Bps\": 1}]",
          "test.json: /network/nics/0/nodes/1: error: server 0 is already in this list" },
        { "\"nics\": [{\"nodes\": [\"server:1\", \"servers\"], \"up_Bps\": 1}]",
          "test.json: /network/nics/0/nodes/1: error: \"servers\" names every server; this "
          "list already names one" },
        { "\"links\": [{\"from\": [\"server:x\"]}]",
          "test.json: /network/links/0/from/0: error: must be \"server:K\" with K a server "
          "number >= 0, got \"server:x\"" },
        { "\"links\": [{\"to\": [\"srv\"]}]",
          "test.json: /network/links/0/to/0: error: must be a node number, a range \"a-b\", "
          "\"server\", \"server:K\" or \"servers\", got \"srv\"" },
    };
    for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
        char json[1024];
        snprintf(json, sizeof json, "{\"nodes\": 4, \"network\": {%s}}", bad[t].network);
        ck_assert_int_eq(scn_load_string(json, "test.json", NULL, 0, &sc, &err), -1);
        ck_assert_str_eq(err.msg, bad[t].msg);
    }
    ck_assert_int_eq(scn_load_string("{\"nodes\": 4, \"compute\": {\"groups\": [{\"nodes\":"
                                     " [\"server\"], \"slowdown\": 2}]}}", "test.json", NULL, 0,
                                     &sc, &err), -1);
    ck_assert_str_eq(err.msg, "test.json: /compute/groups/0/nodes/0: error: must be a node "
                              "number or a range \"a-b\", got \"server\"");
}
END_TEST

/* The resolved scenario keeps the names as given, and loads back to the
 * same resolved text. */
START_TEST(test_server_names_resolved)
{
    const char *json =
        "{\"nodes\": 4, \"network\": {\"nics\": [{\"nodes\": [\"server\", 2], \"up_Bps\": 1e6}],"
        " \"links\": [{\"from\": [\"servers\"], \"to\": [1, \"server:0\"], \"latency_s\": 0.5}]},"
        " \"algorithm\": {\"name\": \"ps-sync\"}, \"stop\": {\"steps\": 5}}";
    scn_scenario a, b;
    scn_error err;
    ck_assert_msg(scn_load_string(json, "test.json", NULL, 0, &a, &err) == 0, "%s", err.msg);
    ck_assert_ptr_nonnull(strstr(a.resolved_json, "\"server\""));
    ck_assert_ptr_nonnull(strstr(a.resolved_json, "\"servers\""));
    ck_assert_ptr_nonnull(strstr(a.resolved_json, "\"server:0\""));
    ck_assert_msg(scn_load_string(a.resolved_json, "test.json", NULL, 0, &b, &err) == 0, "%s",
                  err.msg);
    ck_assert_str_eq(a.resolved_json, b.resolved_json);
    scn_fini(&a);
    scn_fini(&b);
}
END_TEST

Suite *gaps_suite(void)
{
    Suite *s = suite_create("gaps");
    TCase *tc = tcase_create("schedules");
    tcase_add_test(tc, test_dpsgd_file_schedules_are_matrix_products);
    tcase_add_test(tc, test_dpsgd_one_peer_undirected);
    tcase_add_test(tc, test_localsgd_gossip_schedules);
    tcase_add_test(tc, test_dpsgd_random_matching);
    tcase_add_test(tc, test_schedule_errors);
    suite_add_tcase(s, tc);
    tc = tcase_create("servers");
    tcase_add_test(tc, test_server_nic_capped);
    tcase_add_test(tc, test_server_names_checked);
    tcase_add_test(tc, test_server_names_resolved);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(gaps_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
