/* test_scenario.c -- Check suite for the scenario loader (sim/scenario).
 * Pins the exact message of every bad scenario in tests/scenarios_bad/
 * and of bad --set overrides, every default of a minimal scenario, the
 * resolved JSON of a small scenario byte for byte, and group slowdowns.
 * It does not include <jansson.h>: only scn.c may.
 */
#include "scn.h"

#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BAD_DIR DTSIM_SOURCE_DIR "/tests/scenarios_bad/"

/* ---- helpers ------------------------------------------------------------ */

static int all_zero(const scn_scenario *s)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < sizeof *s; i++)
        if (p[i])
            return 0;
    return 1;
}

static void load_ok(const char *text, const char *const *ov, size_t n_ov, scn_scenario *s)
{
    scn_error err;
    int rc = scn_load_string(text, "t.json", ov, n_ov, s, &err);
    ck_assert_msg(rc == 0, "unexpected error: %s", err.msg);
}

/* Loads text with overrides, expects failure with exactly msg. */
static void load_fails(const char *text, const char *const *ov, size_t n_ov, const char *msg)
{
    scn_scenario s;
    scn_error err;

    memset(&s, 0xab, sizeof s);
    ck_assert_int_eq(scn_load_string(text, "base.json", ov, n_ov, &s, &err), -1);
    ck_assert_str_eq(err.msg, msg);
    ck_assert_msg(all_zero(&s), "scenario not zeroed after an error");
}

static const char *const MINIMAL =
    "{\"nodes\": 4, \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 10}}";

/* ---- bad files ---------------------------------------------------------- */

static const struct bad_case {
    const char *name;   /* tests/scenarios_bad/NAME.json */
    const char *msg;    /* what follows the path */
} bad_cases[] = {
    {"syntax_trailing_comma", ":3:33: error: string or '}' expected near '}'"},
    {"duplicate_key", ":6:8: error: duplicate object key near '\"lr\"'"},
    {"empty", ":1: error: unexpected token near end of file"},
    {"does_not_exist", ": error: cannot open: No such file or directory"},
    {"root_array", ": /: error: must be an object, got array"},
    {"missing_nodes", ": /: error: missing required key \"nodes\""},
    {"nodes_zero", ": /nodes: error: must be >= 1, got 0"},
    {"nodes_real", ": /nodes: error: must be an integer, got 2.5"},
    {"nodes_string", ": /nodes: error: must be an integer, got string"},
    {"seed_negative", ": /seed: error: must be >= 0, got -1"},
    {"unknown_top_key", ": /: error: unknown key \"stopp\" (expected one of: seed, nodes, "
                        "compute, faults, network, topology, model, data, algorithm, "
                        "optimizer, stop, metrics, output, limits, freeze)"},
    {"unknown_nested_key", ": /network: error: unknown key \"latncy_s\" "
                           "(expected one of: latency_s, bandwidth_Bps, bytes_per_param, "
                           "compression_ratio, discipline, up_Bps, down_Bps, nics, jitter, "
                           "loss, reorder, outages, links, retransmit)"},
    {"alg_param_object", ": /algorithm/local_steps: error: must be a number or a string, "
                         "got object"},
    {"compute_not_object", ": /compute: error: must be an object, got number"},
    {"lr_string", ": /algorithm/lr: error: must be a number, got string"},
    {"lr_negative", ": /algorithm/lr: error: must be >= 0, got -0.1"},
    {"missing_algorithm_name", ": /algorithm: error: missing required key \"name\""},
    {"noise_bad_dist", ": /compute/noise/dist: error: unknown dist \"gaussian\" "
                       "(expected one of: constant, uniform, exponential, lognormal, normal, "
                       "shifted_exponential, gamma, pareto)"},
    {"uniform_low_gt_high", ": /compute/noise/low: error: must be <= high (1.5), got 2"},
    {"uniform_with_sigma", ": /compute/noise: error: key \"sigma\" is not allowed with "
                           "dist \"uniform\""},
    {"uniform_missing_high", ": /compute/noise: error: missing required key \"high\" "
                             "for dist \"uniform\""},
    {"group_node_out_of_range", ": /compute/groups/0/nodes/2: error: must be in 0..3, got 4"},
    {"group_bad_range", ": /compute/groups/1/nodes/1: error: bad range \"5-2\": "
                        "start is greater than end"},
    {"group_range_garbage", ": /compute/groups/0/nodes/0: error: must be a node number or "
                            "a range \"a-b\", got \"4to7\""},
    {"group_range_outside", ": /compute/groups/0/nodes/0: error: range \"4-8\" is outside "
                            "0..7"},
    {"group_duplicate_node", ": /compute/groups/0/nodes/1: error: node 5 is already in "
                             "this group"},
    {"group_missing_slowdown", ": /compute/groups/0: error: sets nothing (give "
                               "\"slowdown\", \"step_time_s\", \"flops_per_s\", \"noise\" "
                               "or \"memory_bytes\")"},
    {"group_slowdown_zero", ": /compute/groups/0/slowdown: error: must be > 0, got 0"},
    {"noise_pareto_alpha_1", ": /compute/noise/alpha: error: must be > 1 (the mean is "
                             "infinite otherwise), got 1"},
    {"group_nodes_and_fraction", ": /compute/groups/0: error: give \"nodes\" or "
                                 "\"fraction\", not both"},
    {"fraction_selects_none", ": /compute/groups/0/fraction: error: selects no node (0.1 of "
                              "4 nodes rounds to 0)"},
    {"step_time_and_flops", ": /compute: error: give \"step_time_s\" or \"flops_per_s\", "
                            "not both"},
    {"window_end_before_start", ": /compute/slowdowns/0/end_s: error: must be > start_s (5), "
                                "got 2"},
    {"markov_missing_mean", ": /compute/slowdowns/0: error: missing required key "
                            "\"mean_normal_s\" for kind \"markov\""},
    {"periodic_duration_too_long", ": /compute/slowdowns/0/duration_s: error: must be < "
                                   "period_s (10), got 10"},
    {"fault_unknown_kind", ": /faults/events/0/kind: error: unknown fault kind \"weibull\" "
                           "(expected one of: schedule, exponential, trace)"},
    {"fault_rejoin_unknown", ": /faults/rejoin: error: unknown rejoin policy \"average\" "
                             "(expected one of: keep, neighbour)"},
    {"discipline_unknown", ": /network/discipline: error: unknown discipline \"lifo\" "
                           "(expected one of: fifo, fair)"},
    {"loss_one", ": /network/loss: error: must be < 1, got 1"},
    {"link_node_out_of_range", ": /network/links/0/to/0: error: must be in 0..3, got 9"},
    {"jitter_low_gt_high", ": /network/jitter/low_s: error: must be <= high_s (0.1), got 0.2"},
    {"output_trace_string", ": /output/trace: error: must be true or false, got string"},
    {"torus_mismatch", ": /topology: error: rows * cols must equal nodes (16), "
                       "got 3 * 4 = 12"},
    {"erdos_renyi_missing_p", ": /topology: error: missing required key \"p\" for kind "
                              "\"erdos_renyi\""},
    {"erdos_renyi_p_above_1", ": /topology/p: error: must be in (0, 1], got 1.5"},
    {"ring_with_p", ": /topology: error: key \"p\" is not allowed with kind \"ring\""},
    {"topology_unknown", ": /topology/kind: error: unknown topology \"rng\" (expected one "
                         "of: ring, complete, torus2d, erdos_renyi, random_regular, "
                         "ring_lattice, torus3d, hypercube, star, binary_tree, watts_strogatz, "
                         "barabasi_albert, exponential, edge_list, learned)"},
    {"learned_lambda_zero", ": /topology/lambda: error: must be > 0, got 0"},
    {"learned_missing_degree", ": /topology: error: missing required key \"degree\" for kind "
                               "\"learned\""},
    {"learned_regression", ": /topology/kind: error: \"learned\" needs class labels, and "
                           "data.kind \"synthetic-regression\" has none; use another kind"},
    {"learned_timing_only", ": /topology/kind: error: \"learned\" needs the data's label "
                            "proportions, and this scenario has no model (timing only); set "
                            "model.kind and data, or use another kind"},
    {"learned_too_many_nodes", ": /nodes: error: must be <= 256 for kind \"learned\" "
                               "(Frank-Wolfe on the dense n x n matrix), got 300"},
    {"learned_with_mixing", ": /topology: error: key \"mixing\" is not allowed with kind "
                            "\"learned\""},
    {"torus3d_mismatch", ": /topology: error: rows * cols * layers must equal nodes (27), "
                         "got 3 * 3 * 2"},
    {"torus3d_missing_layers", ": /topology: error: missing required key \"layers\" for "
                               "kind \"torus3d\""},
    {"hypercube_not_power", ": /nodes: error: must be a power of two for kind "
                            "\"hypercube\", got 12"},
    {"ring_lattice_k_large", ": /topology/k: error: must be <= (nodes - 1) / 2 (4), got 5"},
    {"watts_strogatz_beta", ": /topology/beta: error: must be in [0, 1], got 1.5"},
    {"watts_strogatz_no_beta", ": /topology: error: missing required key \"beta\" for kind "
                               "\"watts_strogatz\""},
    {"barabasi_m_large", ": /topology/m: error: must be <= nodes - 1 (7), got 8"},
    {"edge_list_no_file", ": /topology: error: missing required key \"file\" for kind "
                          "\"edge_list\""},
    {"edge_list_empty_file", ": /topology/file: error: must not be empty"},
    {"ring_with_file", ": /topology: error: key \"file\" is not allowed with kind \"ring\""},
    {"mixing_unknown", ": /topology/mixing: error: unknown mixing \"metropolis\" (expected "
                       "one of: metropolis_hastings, max_degree, uniform)"},
    {"lazy_alpha_one", ": /topology/lazy_alpha: error: must be in [0, 1), got 1"},
    {"lazy_alpha_negative", ": /topology/lazy_alpha: error: must be >= 0, got -0.5"},
    {"random_regular_odd", ": /topology/degree: error: nodes * degree must be even, "
                           "got 5 * 3"},
    {"model_unknown", ": /model/kind: error: unknown model \"resnet\" (expected one of: "
                      "softmax, logistic, mlp, linear, none)"},
    {"none_without_bytes", ": /model: error: missing required key \"message_bytes\", "
                           "\"params\" or \"profile\" for kind \"none\""},
    {"none_with_l2", ": /model: error: key \"l2\" is not allowed with kind \"none\""},
    {"none_with_flops", ": /compute/groups/0/flops_per_s: error: model \"none\" has no FLOPs; "
                        "give \"step_time_s\" or model.flops_per_sample"},
    {"none_target_loss", ": /stop/target_loss: error: has no meaning for model \"none\" "
                         "(timing only: nothing is evaluated)"},
    {"none_bytes_zero", ": /model/message_bytes: error: must be > 0, got 0"},
    {"linear_with_mixture", ": /data/kind: error: model \"linear\" needs regression data "
                            "(kind \"synthetic-regression\"), got \"synthetic\""},
    {"regression_with_softmax", ": /data/kind: error: regression data needs model "
                                "\"linear\", got \"softmax\""},
    {"regression_dirichlet", ": /data/partition: error: partition \"dirichlet\" needs class "
                             "labels; regression data has none (use iid or quantity)"},
    {"linear_target_accuracy", ": /stop/target_accuracy: error: has no meaning for model "
                               "\"linear\" (regression); use target_loss"},
    {"mlp_hidden_empty", ": /model/hidden: error: must hold 1 to 8 layer widths, got 0"},
    {"mlp_hidden_zero", ": /model/hidden/1: error: must be >= 1, got 0"},
    {"mlp_activation_unknown", ": /model/activation: error: unknown activation \"sigmoid\" "
                               "(expected one of: relu, tanh)"},
    {"softmax_with_hidden", ": /model: error: key \"hidden\" is not allowed with kind "
                            "\"softmax\""},
    {"idx_missing_labels", ": /data: error: missing required key \"train_labels\" for kind "
                           "\"idx\""},
    {"alpha_with_iid", ": /data/alpha: error: is not allowed with partition \"iid\""},
    {"dirichlet_alpha_zero", ": /data/alpha: error: must be > 0, got 0"},
    {"scale_unknown", ": /data/scale: error: unknown scale \"zscore\" (expected one of: "
                      "none, minmax, standard)"},
    {"fmnist_separation", ": /data: error: key \"separation\" is not allowed with kind "
                          "\"fashion-mnist\""},
    {"momentum_one", ": /optimizer/momentum: error: must be < 1, got 1"},
    {"nesterov_without_momentum", ": /optimizer/nesterov: error: needs momentum > 0"},
    {"step_missing_every", ": /optimizer: error: missing required key \"step_every\" for "
                           "schedule \"step\""},
    {"cosine_without_total", ": /optimizer: error: missing required key \"total_steps\" for "
                             "schedule \"cosine\" (or give stop.steps)"},
    {"gamma_with_cosine", ": /optimizer/gamma: error: is not allowed with schedule "
                          "\"cosine\""},
    {"libsvm_missing_train_file", ": /data: error: missing required key \"train_file\" for "
                                  "kind \"libsvm\""},
    {"csv_fraction_with_test_file", ": /data/test_fraction: error: is not allowed with "
                                    "\"test_file\" (the test set is that file)"},
    {"csv_fraction_one", ": /data/test_fraction: error: must be < 1, got 1"},
    {"per_node_string", ": /metrics/per_node: error: must be true or false, got string"},
    {"logistic_classes_3", ": /data/classes: error: must be 2 with model \"logistic\", "
                           "got 3"},
    {"partition_unknown", ": /data/partition: error: unknown partition \"pathological\" "
                          "(expected one of: iid, dirichlet, shards, quantity)"},
    {"train_below_nodes", ": /data/train: error: must be >= nodes (8) so that every node "
                          "holds data, got 6"},
    {"batch_too_large", ": /algorithm/batch: error: must be <= 62 (train 1000 / nodes 16), "
                        "got 64"},
    {"batch_default_too_large", ": /algorithm/batch: error: must be <= 20 (train 4096 / "
                                "nodes 200), got 32 (the default)"},
    {"missing_stop", ": /: error: missing required key \"stop\""},
    {"stop_without_time_or_steps", ": /stop: error: needs \"time_s\" or \"steps\" (or "
                                   "both) so that the run ends"},
    {"target_accuracy_1_5", ": /stop/target_accuracy: error: must be in (0, 1], got 1.5"},
    {"steps_boolean", ": /stop/steps: error: must be an integer, got boolean"},
    {"eval_samples_above_train", ": /metrics/eval_samples: error: must be <= train (100), "
                                 "got 101"},
};
#define N_BAD ((int)(sizeof bad_cases / sizeof *bad_cases))

START_TEST(test_bad_file)
{
    const struct bad_case *bc = &bad_cases[_i];
    char path[512], want[1024];
    scn_scenario s;
    scn_error err;

    snprintf(path, sizeof path, BAD_DIR "%s.json", bc->name);
    snprintf(want, sizeof want, "%s%s", path, bc->msg);
    memset(&s, 0xab, sizeof s);
    ck_assert_int_eq(scn_load(path, NULL, 0, &s, &err), -1);
    ck_assert_str_eq(err.msg, want);
    ck_assert_msg(all_zero(&s), "%s: scenario not zeroed after an error", bc->name);
}
END_TEST

/* Every file in the directory is in the table, so none goes untested. */
START_TEST(test_bad_dir_covered)
{
    DIR *d = opendir(BAD_DIR);
    struct dirent *e;
    int files = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d))) {
        int found = 0;
        if (e->d_name[0] == '.')
            continue;
        for (int i = 0; i < N_BAD; i++) {
            char name[256];
            snprintf(name, sizeof name, "%s.json", bad_cases[i].name);
            found |= strcmp(name, e->d_name) == 0;
        }
        ck_assert_msg(found, "%s has no entry in bad_cases", e->d_name);
        files++;
    }
    closedir(d);
    ck_assert_int_eq(files, N_BAD - 1);   /* does_not_exist has no file */
}
END_TEST

/* ---- good scenarios ----------------------------------------------------- */

START_TEST(test_defaults)
{
    scn_scenario s;

    load_ok(MINIMAL, NULL, 0, &s);
    ck_assert_str_eq(s.path, "t.json");
    ck_assert_uint_eq(s.seed, 1);
    ck_assert_int_eq(s.n_nodes, 4);
    ck_assert_double_eq(s.step_time_s, 0.01);
    ck_assert_int_eq(s.noise, CL_NOISE_CONSTANT);
    ck_assert_double_eq(s.noise_low, 0);
    ck_assert_double_eq(s.noise_high, 0);
    ck_assert_double_eq(s.noise_sigma, 0);
    ck_assert_ptr_null(s.groups);
    ck_assert_uint_eq(s.n_groups, 0);
    ck_assert_double_eq(s.latency_s, 1e-4);
    ck_assert_double_eq(s.bandwidth_Bps, 1.25e9);
    ck_assert_double_eq(s.bytes_per_param, 4);
    ck_assert_str_eq(s.topology, "ring");
    ck_assert_int_eq(s.topo_rows, 0);
    ck_assert_int_eq(s.topo_cols, 0);
    ck_assert_double_eq(s.topo_p, 0);
    ck_assert_int_eq(s.topo_degree, 0);
    ck_assert_str_eq(s.model, "softmax");
    ck_assert_double_eq(s.l2, 1e-4);
    ck_assert_uint_eq(s.data_train, 4096);
    ck_assert_uint_eq(s.data_test, 1024);
    ck_assert_uint_eq(s.data_features, 16);
    ck_assert_int_eq(s.data_classes, 4);
    ck_assert_double_eq(s.data_separation, 2.0);
    ck_assert_str_eq(s.partition, "iid");
    ck_assert_str_eq(s.algorithm, "dpsgd");
    ck_assert_double_eq(s.lr, 0.1);
    ck_assert_uint_eq(s.batch, 32);
    ck_assert_double_eq(s.stop_time_s, 10);
    ck_assert_int_eq(s.stop_steps, 0);
    ck_assert(isnan(s.stop_target_loss));
    ck_assert(isnan(s.stop_target_accuracy));
    ck_assert_double_eq(s.metrics_every_s, 0.1);
    ck_assert_uint_eq(s.metrics_eval_samples, 0);
    ck_assert_ptr_nonnull(s.resolved_json);
    scn_fini(&s);
    ck_assert(all_zero(&s));
}
END_TEST

/* Every key given, read through scn_load from a real file. */
START_TEST(test_full_file)
{
    static const char text[] =
        "{\"seed\": 9000000000, \"nodes\": 8,\n"
        " \"compute\": {\"step_time_s\": 0.5,\n"
        "   \"noise\": {\"dist\": \"uniform\", \"low\": 0.5, \"high\": 2},\n"
        "   \"groups\": [{\"nodes\": [7, \"0-2\"], \"slowdown\": 3}]},\n"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e8, \"bytes_per_param\": 2},\n"
        " \"topology\": {\"kind\": \"torus2d\", \"rows\": 2, \"cols\": 4},\n"
        " \"model\": {\"kind\": \"logistic\", \"l2\": 0},\n"
        " \"data\": {\"kind\": \"synthetic\", \"train\": 8e2, \"test\": 50, \"features\": 3,\n"
        "          \"separation\": 0.5, \"partition\": \"iid\"},\n"
        " \"algorithm\": {\"name\": \"allreduce\", \"lr\": 0, \"batch\": 100},\n"
        " \"stop\": {\"steps\": 1000, \"target_loss\": 0.25, \"target_accuracy\": 1},\n"
        " \"metrics\": {\"eval_samples\": 800}}\n";
    char path[] = "/tmp/test_scenario_XXXXXX";
    int fd = mkstemp(path);
    scn_scenario s;
    scn_error err;
    int rc;

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    rc = scn_load(path, NULL, 0, &s, &err);
    unlink(path);
    ck_assert_msg(rc == 0, "unexpected error: %s", err.msg);
    ck_assert_str_eq(s.path, path);
    ck_assert_uint_eq(s.seed, 9000000000u);
    ck_assert_int_eq(s.noise, CL_NOISE_UNIFORM);
    ck_assert_double_eq(s.noise_low, 0.5);
    ck_assert_double_eq(s.noise_high, 2);
    ck_assert_uint_eq(s.n_groups, 1);
    ck_assert_uint_eq(s.groups[0].n_nodes, 4);
    ck_assert_int_eq(s.groups[0].nodes[0], 0);
    ck_assert_int_eq(s.groups[0].nodes[1], 1);
    ck_assert_int_eq(s.groups[0].nodes[2], 2);
    ck_assert_int_eq(s.groups[0].nodes[3], 7);
    ck_assert_double_eq(s.groups[0].slowdown, 3);
    ck_assert_double_eq(s.latency_s, 0);
    ck_assert_double_eq(s.bandwidth_Bps, 1e8);
    ck_assert_double_eq(s.bytes_per_param, 2);
    ck_assert_str_eq(s.topology, "torus2d");
    ck_assert_int_eq(s.topo_rows, 2);
    ck_assert_int_eq(s.topo_cols, 4);
    ck_assert_str_eq(s.model, "logistic");
    ck_assert_int_eq(s.data_classes, 2);   /* the default with logistic */
    ck_assert_uint_eq(s.data_train, 800);  /* 8e2: an integral real */
    ck_assert_uint_eq(s.data_test, 50);
    ck_assert_uint_eq(s.data_features, 3);
    ck_assert_double_eq(s.data_separation, 0.5);
    ck_assert_str_eq(s.algorithm, "allreduce");
    ck_assert_double_eq(s.lr, 0);
    ck_assert_uint_eq(s.batch, 100);
    ck_assert(isinf(s.stop_time_s));
    ck_assert_int_eq(s.stop_steps, 1000);
    ck_assert_double_eq(s.stop_target_loss, 0.25);
    ck_assert_double_eq(s.stop_target_accuracy, 1);
    ck_assert_double_eq(s.metrics_every_s, 50);   /* 100 step times */
    ck_assert_uint_eq(s.metrics_eval_samples, 800);
    scn_fini(&s);
}
END_TEST

START_TEST(test_other_kinds)
{
    scn_scenario s;
    const char *er[] = {"topology={\"kind\": \"erdos_renyi\", \"p\": 0.25}",
                        "compute.noise={\"dist\": \"lognormal\", \"sigma\": 0}"};
    const char *rr[] = {"topology.kind=random_regular", "topology.degree=3",
                        "compute.noise.dist=exponential"};

    load_ok(MINIMAL, er, 2, &s);
    ck_assert_str_eq(s.topology, "erdos_renyi");
    ck_assert_double_eq(s.topo_p, 0.25);
    ck_assert_int_eq(s.noise, CL_NOISE_LOGNORMAL);
    ck_assert_double_eq(s.noise_sigma, 0);
    scn_fini(&s);
    load_ok(MINIMAL, rr, 3, &s);
    ck_assert_str_eq(s.topology, "random_regular");
    ck_assert_int_eq(s.topo_degree, 3);
    ck_assert_int_eq(s.noise, CL_NOISE_EXPONENTIAL);
    scn_fini(&s);
}
END_TEST

START_TEST(test_resolved_golden)
{
    static const char text[] =
        "{\"seed\": 3, \"nodes\": 4,\n"
        " \"compute\": {\"noise\": {\"dist\": \"uniform\", \"low\": 0.5, \"high\": 1.5},\n"
        "             \"groups\": [{\"nodes\": [\"2-3\", 0], \"slowdown\": 4}]},\n"
        " \"topology\": {\"kind\": \"complete\"},\n"
        " \"algorithm\": {\"name\": \"dpsgd\", \"lr\": 0.1},\n"
        " \"stop\": {\"time_s\": 5, \"target_accuracy\": 0.9}}\n";
    static const char golden[] =
        "{\"algorithm\":{\"batch\":32,\"lr\":0.1,\"name\":\"dpsgd\"},"
        "\"compute\":{\"groups\":[{\"nodes\":[0,2,3],\"slowdown\":4.0}],"
        "\"noise\":{\"dist\":\"uniform\",\"high\":1.5,\"low\":0.5},\"step_time_s\":0.01},"
        "\"data\":{\"classes\":4,\"features\":16,\"kind\":\"synthetic\",\"partition\":\"iid\","
        "\"scale\":\"none\",\"separation\":2.0,\"test\":1024,\"train\":4096},"
        "\"metrics\":{\"eval_samples\":0,\"every_s\":0.05,\"per_node\":false,\"test_samples\":0},"
        "\"model\":{\"kind\":\"softmax\",\"l2\":0.0001},"
        "\"network\":{\"bandwidth_Bps\":1.25e9,\"bytes_per_param\":4.0,\"latency_s\":0.0001},"
        "\"nodes\":4,\"optimizer\":{\"momentum\":0.0,\"nesterov\":false,\"schedule\":\"constant\","
        "\"warmup_steps\":0,\"weight_decay\":0.0},\"seed\":3,\"stop\":{\"target_accuracy\":0.9,\"time_s\":5.0},"
        "\"topology\":{\"kind\":\"complete\",\"lazy_alpha\":0.0,"
        "\"mixing\":\"metropolis_hastings\"}}";
    scn_scenario s, t;

    load_ok(text, NULL, 0, &s);
    ck_assert_str_eq(s.resolved_json, golden);
    /* the resolved scenario is itself a scenario that resolves to itself */
    load_ok(s.resolved_json, NULL, 0, &t);
    ck_assert_str_eq(t.resolved_json, golden);
    scn_fini(&t);
    scn_fini(&s);
}
END_TEST

/* Every data kind, the MLP and a full optimizer resolve to text that loads
 * back to itself, with the values the keys say. */
START_TEST(test_resolved_models_data)
{
    static const char *const texts[] = {
        "{\"nodes\": 2, \"model\": {\"kind\": \"mlp\", \"hidden\": [64, 32], "
        "\"activation\": \"tanh\"}, \"data\": {\"kind\": \"fashion-mnist\", \"train\": 600, "
        "\"partition\": \"dirichlet\", \"alpha\": 0.1}, \"algorithm\": {\"name\": \"dpsgd\"}, "
        "\"optimizer\": {\"momentum\": 0.9, \"nesterov\": true, \"weight_decay\": 5e-4, "
        "\"schedule\": \"step\", \"step_every\": 100, \"warmup_steps\": 10}, "
        "\"stop\": {\"steps\": 10}, \"metrics\": {\"test_samples\": 500, \"per_node\": true}}",
        "{\"nodes\": 2, \"data\": {\"kind\": \"idx\", \"train_images\": \"a\", "
        "\"train_labels\": \"b\", \"test_images\": \"c\", \"test_labels\": \"d\", "
        "\"scale\": \"standard\", \"partition\": \"shards\"}, \"algorithm\": {\"name\": \"x\"}, "
        "\"optimizer\": {\"schedule\": \"cosine\", \"lr_min\": 0.01}, \"stop\": {\"steps\": 5}}",
        "{\"nodes\": 2, \"data\": {\"kind\": \"libsvm\", \"train_file\": \"a.svm\", "
        "\"partition\": \"quantity\", \"exponent\": 0.8}, \"algorithm\": {\"name\": \"x\"}, "
        "\"stop\": {\"time_s\": 1}}",
        "{\"nodes\": 2, \"data\": {\"kind\": \"csv\", \"train_file\": \"a.csv\", "
        "\"test_file\": \"b.csv\", \"label_column\": 3, \"header\": true}, "
        "\"algorithm\": {\"name\": \"x\"}, \"stop\": {\"time_s\": 1}}",
        "{\"nodes\": 2, \"model\": {\"kind\": \"linear\"}, \"data\": {\"kind\": "
        "\"synthetic-regression\", \"noise\": 0.5}, \"algorithm\": {\"name\": \"x\"}, "
        "\"stop\": {\"time_s\": 1}}",
        "{\"nodes\": 2, \"model\": {\"kind\": \"logistic\"}, \"data\": {\"kind\": "
        "\"synthetic-logistic\", \"separation\": 3}, \"algorithm\": {\"name\": \"x\"}, "
        "\"stop\": {\"time_s\": 1}}",
        "{\"nodes\": 100000, \"model\": {\"kind\": \"none\", \"message_bytes\": 4e6}, "
        "\"algorithm\": {\"name\": \"x\", \"batch\": 64}, \"stop\": {\"time_s\": 1}}",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        scn_scenario s, t;
        load_ok(texts[i], NULL, 0, &s);
        load_ok(s.resolved_json, NULL, 0, &t);
        ck_assert_str_eq(t.resolved_json, s.resolved_json);
        if (i == 0) {
            ck_assert_uint_eq(s.model_n_hidden, 2);
            ck_assert_uint_eq(s.model_hidden[1], 32);
            ck_assert_int_eq(s.model_activation, 1);
            ck_assert_str_eq(s.data_dir, "/usr/share/datasets/fashion-mnist");
            ck_assert_int_eq(s.data_scale, 1);
            ck_assert_double_eq(s.partition_alpha, 0.1);
            ck_assert(s.opt_nesterov);
            ck_assert_int_eq(s.opt_step_every, 100);
            ck_assert_double_eq(s.opt_step_gamma, 0.1);
            ck_assert_uint_eq(s.metrics_test_samples, 500);
            ck_assert(s.metrics_per_node);
        } else if (i == 1) {
            ck_assert_int_eq(s.opt_total_steps, 5);   /* from stop.steps */
            ck_assert_int_eq(s.partition_shards, 2);
        } else if (i == 2) {
            ck_assert_double_eq(s.data_test_fraction, 0.2);
            ck_assert_uint_eq(s.data_features, 0);
        } else if (i == 3) {
            ck_assert_str_eq(s.data_test_file, "b.csv");
            ck_assert_int_eq(s.data_label_column, 3);
            ck_assert(s.data_header);
        } else if (i == 4) {
            ck_assert_double_eq(s.data_noise, 0.5);
            ck_assert_int_eq(s.data_classes, 0);
        } else if (i == 6) {
            ck_assert_str_eq(s.model, "none");
            ck_assert_double_eq(s.model_message_bytes, 4e6);
            ck_assert_uint_eq(s.batch, 64);   /* no data: no batch limit */
            ck_assert_ptr_null(strstr(s.resolved_json, "\"data\""));
        } else {
            ck_assert_int_eq(s.data_classes, 2);
        }
        scn_fini(&t);
        scn_fini(&s);
    }
}
END_TEST

/* Reals print in the shortest form that reads back exactly. */
START_TEST(test_resolved_reals)
{
    const char *ov[] = {"network={\"latency_s\": 1e-5, \"bandwidth_Bps\": 12345678,"
                        " \"bytes_per_param\": 0.3333333333333333}",
                        "algorithm.lr=0.30000000000000004", "model.l2=1e-300",
                        "algorithm.name=\"a\\\"b\\n\""};
    scn_scenario s;

    load_ok(MINIMAL, ov, 4, &s);
    ck_assert_ptr_nonnull(strstr(s.resolved_json,
        "\"network\":{\"bandwidth_Bps\":12345678.0,\"bytes_per_param\":0.3333333333333333,"
        "\"latency_s\":1e-5}"));
    ck_assert_ptr_nonnull(strstr(s.resolved_json, "\"lr\":0.30000000000000004,"));
    ck_assert_ptr_nonnull(strstr(s.resolved_json, "\"l2\":1e-300}"));
    ck_assert_ptr_nonnull(strstr(s.resolved_json, "\"name\":\"a\\\"b\\n\"}"));
    scn_fini(&s);
}
END_TEST

START_TEST(test_slowdown_overlap)
{
    static const char text[] =
        "{\"nodes\": 8, \"compute\": {\"groups\": ["
        "{\"nodes\": [\"0-3\"], \"slowdown\": 10},"
        "{\"nodes\": [2, \"5-6\"], \"slowdown\": 2},"
        "{\"nodes\": [6], \"slowdown\": 0.5}]},"
        " \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"steps\": 10}}";
    static const double want[8] = {10, 10, 2, 10, 1, 2, 0.5, 1};
    scn_scenario s;

    load_ok(text, NULL, 0, &s);
    ck_assert_uint_eq(s.n_groups, 3);
    for (int i = 0; i < 8; i++)
        ck_assert_double_eq(scn_node_slowdown(&s, i), want[i]);
    ck_assert_double_eq(scn_node_slowdown(&s, -1), 1);
    ck_assert_double_eq(scn_node_slowdown(&s, 8), 1);
    scn_fini(&s);
}
END_TEST

START_TEST(test_fini_zeroed)
{
    scn_scenario s;

    memset(&s, 0, sizeof s);
    scn_fini(&s);
    ck_assert(all_zero(&s));
    scn_fini(&s);
}
END_TEST

START_TEST(test_string_default_path)
{
    scn_scenario s;
    scn_error err;

    ck_assert_int_eq(scn_load_string("{\"nodes\": -3}", NULL, NULL, 0, &s, &err), -1);
    ck_assert_str_eq(err.msg, "<string>: /nodes: error: must be >= 1, got -3");
}
END_TEST

/* ---- --set overrides ---------------------------------------------------- */

START_TEST(test_set_number_and_word)
{
    const char *ov[] = {"algorithm.lr=0.5", "algorithm.name=adpsgd", "seed=12"};
    scn_scenario s;

    load_ok(MINIMAL, ov, 3, &s);
    ck_assert_double_eq(s.lr, 0.5);
    ck_assert_str_eq(s.algorithm, "adpsgd");
    ck_assert_uint_eq(s.seed, 12);
    scn_fini(&s);
}
END_TEST

START_TEST(test_set_quoted_string)
{
    const char *ov[] = {"algorithm.name=\"123\""};
    scn_scenario s;

    load_ok(MINIMAL, ov, 1, &s);
    ck_assert_str_eq(s.algorithm, "123");
    scn_fini(&s);
}
END_TEST

START_TEST(test_set_dotted_index_and_pointer)
{
    static const char text[] =
        "{\"nodes\": 4, \"compute\": {\"groups\": [{\"nodes\": [1], \"slowdown\": 2}]},"
        " \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 10}}";
    const char *ov[] = {"compute.groups.0.slowdown=3", "/network/latency_s=0.002",
                        "/compute/groups/0/nodes/0=2"};
    scn_scenario s;

    load_ok(text, ov, 3, &s);
    ck_assert_double_eq(scn_node_slowdown(&s, 1), 1);
    ck_assert_double_eq(scn_node_slowdown(&s, 2), 3);
    ck_assert_double_eq(s.latency_s, 0.002);
    scn_fini(&s);
}
END_TEST

START_TEST(test_set_creates_objects)
{
    const char *ov[] = {"model.kind=logistic", "compute.noise.dist=exponential",
                        "/metrics/every_s=2"};
    scn_scenario s;

    load_ok(MINIMAL, ov, 3, &s);
    ck_assert_str_eq(s.model, "logistic");
    ck_assert_int_eq(s.data_classes, 2);
    ck_assert_int_eq(s.noise, CL_NOISE_EXPONENTIAL);
    ck_assert_double_eq(s.metrics_every_s, 2);
    scn_fini(&s);
}
END_TEST

START_TEST(test_set_last_wins)
{
    const char *ov[] = {"algorithm.lr=0.2", "algorithm={\"name\": \"x\", \"lr\": 0.3}",
                        "algorithm.batch=1e1"};
    scn_scenario s;

    load_ok(MINIMAL, ov, 3, &s);
    ck_assert_str_eq(s.algorithm, "x");
    ck_assert_double_eq(s.lr, 0.3);
    ck_assert_uint_eq(s.batch, 10);
    scn_fini(&s);
}
END_TEST

static const struct bad_set {
    const char *set;
    const char *msg;
} bad_sets[] = {
    {"algorithm.lr", "--set algorithm.lr: error: expected PATH=VALUE"},
    {"=0.1", "--set =0.1: error: empty path"},
    {"algorithm..lr=1", "--set algorithm..lr=1: error: empty key in path"},
    {"algorithm.=1", "--set algorithm.=1: error: empty key in path"},
    {"/=1", "--set /=1: error: empty key in path"},
    {"/algorithm/l~2r=1", "--set /algorithm/l~2r=1: error: bad escape in JSON pointer "
                          "(use ~0 for ~ and ~1 for /)"},
    {"compute.groups.1.slowdown=3", "--set compute.groups.1.slowdown=3: error: "
                                    "/compute/groups has no element 1 (it has 1)"},
    {"compute.groups.first.slowdown=3", "--set compute.groups.first.slowdown=3: error: "
                                        "/compute/groups is an array, and \"first\" is not "
                                        "an index"},
    {"compute.groups.1={}", "--set compute.groups.1={}: error: /compute/groups has no "
                            "element 1 (it has 1)"},
    {"compute.groups.-=3", "--set compute.groups.-=3: error: /compute/groups is an array, "
                           "and \"-\" is not an index"},
    {"compute.groups.01=3", "--set compute.groups.01=3: error: /compute/groups is an array, "
                            "and \"01\" is not an index"},
    {"algorithm.name.x=1", "--set algorithm.name.x=1: error: /algorithm/name is a string, "
                           "not an object or array"},
    {"algorithm.name.x.y=1", "--set algorithm.name.x.y=1: error: /algorithm/name is a "
                             "string, not an object or array"},
    {"compute.noise={\"dist\":", "--set compute.noise={\"dist\":: error: invalid JSON value: "
                                 "unexpected token near end of file"},
    {"algorithm.lr=-1", "base.json: /algorithm/lr: error: must be >= 0, got -1"},
    {"algorithm.lr=fast", "base.json: /algorithm/lr: error: must be a number, got string"},
    {"nodes=0", "base.json: /nodes: error: must be >= 1, got 0"},
    {"stop=null", "base.json: /stop: error: must be an object, got null"},
    {"compute.groups.0.nodes.0=9", "base.json: /compute/groups/0/nodes/0: error: must be in "
                                   "0..3, got 9"},
    {"/foo~1bar=1", "base.json: /: error: unknown key \"foo/bar\" (expected one of: seed, "
                    "nodes, compute, faults, network, topology, model, data, algorithm, "
                    "optimizer, stop, metrics, output, limits, freeze)"},
    {"network.latncy=x", "base.json: /network: error: unknown key \"latncy\" (expected one "
                         "of: latency_s, bandwidth_Bps, bytes_per_param, compression_ratio, "
                         "discipline, up_Bps, down_Bps, nics, jitter, loss, reorder, outages, "
                         "links, retransmit)"},
};
#define N_BAD_SET ((int)(sizeof bad_sets / sizeof *bad_sets))

START_TEST(test_bad_set)
{
    static const char text[] =
        "{\"nodes\": 4, \"compute\": {\"groups\": [{\"nodes\": [0], \"slowdown\": 2}]},"
        " \"algorithm\": {\"name\": \"dpsgd\"}, \"stop\": {\"time_s\": 10}}";
    const char *ov[] = {bad_sets[_i].set};

    load_fails(text, ov, 1, bad_sets[_i].msg);
}
END_TEST

START_TEST(test_set_first_error_wins)
{
    const char *ov[] = {"algorithm.lr=2", "=1", "nodes"};

    load_fails(MINIMAL, ov, 3, "--set =1: error: empty path");
}
END_TEST

/* A syntax error in the file comes before any override. */
START_TEST(test_syntax_before_set)
{
    const char *ov[] = {"nodes"};

    load_fails("{\"nodes\": }", ov, 1, "base.json:1:11: error: unexpected token near '}'");
}
END_TEST

/* ---- runner ------------------------------------------------------------- */

static Suite *scenario_suite(void)
{
    Suite *s = suite_create("scenario");
    TCase *tc;

    tc = tcase_create("bad_files");
    tcase_add_loop_test(tc, test_bad_file, 0, N_BAD);
    tcase_add_test(tc, test_bad_dir_covered);
    suite_add_tcase(s, tc);

    tc = tcase_create("good");
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_full_file);
    tcase_add_test(tc, test_other_kinds);
    tcase_add_test(tc, test_resolved_golden);
    tcase_add_test(tc, test_resolved_models_data);
    tcase_add_test(tc, test_resolved_reals);
    tcase_add_test(tc, test_slowdown_overlap);
    tcase_add_test(tc, test_fini_zeroed);
    tcase_add_test(tc, test_string_default_path);
    suite_add_tcase(s, tc);

    tc = tcase_create("set");
    tcase_add_test(tc, test_set_number_and_word);
    tcase_add_test(tc, test_set_quoted_string);
    tcase_add_test(tc, test_set_dotted_index_and_pointer);
    tcase_add_test(tc, test_set_creates_objects);
    tcase_add_test(tc, test_set_last_wins);
    tcase_add_loop_test(tc, test_bad_set, 0, N_BAD_SET);
    tcase_add_test(tc, test_set_first_error_wins);
    tcase_add_test(tc, test_syntax_before_set);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(scenario_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
