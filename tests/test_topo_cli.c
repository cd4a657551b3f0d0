/* test_topo_cli.c -- `dtsim topo` and the topology keys as a user meets
 * them: statistics on stdout, the edge list and DOT to stdout or to a file,
 * an edge-list file named relative to the scenario, a bad line of that file
 * reported as FILE:LINE, an oscillating mixing matrix rejected with exit 2,
 * and run.json carrying the mixing actually used.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_shell.h"

static const double PI = 3.14159265358979323846;
#define EDGE_LIST DTSIM_SOURCE_DIR "/tests/data/topo-edge-list.json"
#define BAD_EDGES DTSIM_SOURCE_DIR "/tests/data/topo-bad-edges.json"
#define RING6 DTSIM_SOURCE_DIR "/tests/data/golden-dpsgd.json"
#define SIX_PURE DTSIM_SOURCE_DIR "/tests/data/learned/six-pure.json"

static double field(const char *text, const char *name)
{
    const char *p = strstr(text, name);
    ck_assert_msg(p != NULL, "no %s in:\n%s", name, text);
    return strtod(p + strlen(name), NULL);
}

static const char ring5_csv[] = "source,target,weight\n"
                                "0,1,0.33333333333333331\n"
                                "0,4,0.33333333333333331\n"
                                "1,2,0.33333333333333331\n"
                                "2,3,0.33333333333333331\n"
                                "3,4,0.33333333333333331\n";

START_TEST(test_stats_and_edges)
{
    make_tmp();
    ck_assert_int_eq(sh("%s topo %s >%s/out", DTSIM_BINARY, EDGE_LIST, tmpdir), 0);
    char *t = slurpf("%s/out", tmpdir);
    static const char head[] = "topology: edge_list\nnodes: 5\nedges: 5\ndegree: 2..2\n"
                               "diameter: 2\nbipartite: no\nmixing: metropolis_hastings\n"
                               "lazy_alpha: 0\nsymmetric: yes\nlambda2: ";
    ck_assert_msg(strncmp(t, head, strlen(head)) == 0, "%s", t);
    ck_assert_double_eq_tol(field(t, "lambda2: "), 1.0 / 3.0 + 2.0 / 3.0 * cos(2 * PI / 5),
                            1e-12);
    ck_assert_ptr_nonnull(strstr(t, "solver: dense\n"));
    free(t);

    ck_assert_int_eq(sh("%s topo %s --edges >%s/edges.csv", DTSIM_BINARY, EDGE_LIST, tmpdir), 0);
    t = slurpf("%s/edges.csv", tmpdir);
    ck_assert_str_eq(t, ring5_csv);
    free(t);

    /* to files: the format from --dot or the extension; stats on stdout */
    ck_assert_int_eq(sh("%s topo %s -o %s/g.csv >%s/out2", DTSIM_BINARY, EDGE_LIST, tmpdir,
                        tmpdir), 0);
    t = slurpf("%s/g.csv", tmpdir);
    ck_assert_str_eq(t, ring5_csv);
    free(t);
    t = slurpf("%s/out2", tmpdir);
    ck_assert_ptr_nonnull(strstr(t, "nodes: 5\n"));
    free(t);
    ck_assert_int_eq(sh("%s topo %s -o %s/g.gv >/dev/null", DTSIM_BINARY, EDGE_LIST, tmpdir), 0);
    ck_assert_int_eq(sh("%s topo %s --dot -o %s/g.txt >/dev/null", DTSIM_BINARY, EDGE_LIST,
                        tmpdir), 0);
    ck_assert_int_eq(sh("%s topo %s --dot >%s/g.stdout", DTSIM_BINARY, EDGE_LIST, tmpdir), 0);
    char *a = slurpf("%s/g.gv", tmpdir), *b = slurpf("%s/g.txt", tmpdir);
    char *c = slurpf("%s/g.stdout", tmpdir);
    ck_assert_str_eq(a, b);
    ck_assert_str_eq(a, c);
    ck_assert_ptr_nonnull(strstr(a, "  0 -- 4 [label=\"0.3333\"];\n"));
    ck_assert_int_eq(strncmp(a, "graph \"", 7), 0);
    free(a);
    free(b);
    free(c);
    ck_assert_int_eq(sh("ls -a %s | grep -c tmp >/dev/null", tmpdir), 1);   /* no leftovers */

    ck_assert_int_eq(sh("%s topo %s --edges --dot 2>/dev/null", DTSIM_BINARY, EDGE_LIST), 2);
    ck_assert_int_eq(sh("%s topo %s -o 2>/dev/null", DTSIM_BINARY, EDGE_LIST), 2);
    remove_tmp();
}
END_TEST

START_TEST(test_errors)
{
    make_tmp();
    ck_assert_int_eq(sh("%s topo %s >/dev/null 2>%s/err", DTSIM_BINARY, BAD_EDGES, tmpdir), 2);
    char *t = slurpf("%s/err", tmpdir);
    ck_assert_str_eq(t, DTSIM_SOURCE_DIR "/tests/data/topo/bad_range.txt:2: error: node 5 out "
                        "of range (nodes are 0..3)\n");
    free(t);
    ck_assert_int_eq(sh("%s run %s -o %s/run --quiet 2>/dev/null", DTSIM_BINARY, BAD_EDGES,
                        tmpdir), 2);
    ck_assert_int_eq(sh("test -e %s/run/run.json", tmpdir), 1);

    ck_assert_int_eq(sh("%s topo %s --set topology.mixing=uniform >/dev/null 2>%s/err",
                        DTSIM_BINARY, RING6, tmpdir), 2);
    t = slurpf("%s/err", tmpdir);
    ck_assert_str_eq(t, RING6 ": /topology: error: uniform mixing on the ring graph with n=6 "
                        "oscillates: the graph is bipartite and no node keeps weight on itself, "
                        "so the mixing matrix has eigenvalue -1 and consensus never converges; "
                        "set lazy_alpha > 0 or use metropolis_hastings\n"
                        "dtsim topo: note: --set topology.mixing=uniform changed /topology\n");
    free(t);
    /* lazy: 1/2 + cos(2 pi k/6)/2, SLEM 3/4 */
    ck_assert_int_eq(sh("%s topo %s --set topology.mixing=uniform --set topology.lazy_alpha=0.5 "
                        ">%s/out", DTSIM_BINARY, RING6, tmpdir), 0);
    t = slurpf("%s/out", tmpdir);
    ck_assert_double_eq_tol(field(t, "lambda2: "), 0.75, 1e-12);
    free(t);
    remove_tmp();
}
END_TEST

START_TEST(test_run_json_mixing)
{
    make_tmp();
    ck_assert_int_eq(sh("%s run %s -o %s/run --quiet --set topology.mixing=max_degree "
                        "--set topology.lazy_alpha=0.25", DTSIM_BINARY, EDGE_LIST, tmpdir), 0);
    char *t = slurpf("%s/run/run.json", tmpdir);
    ck_assert_ptr_nonnull(strstr(t, "\"mixing\": \"max_degree\",\n"));
    ck_assert_ptr_nonnull(strstr(t, "\"lazy_alpha\": 0.25,\n"));
    ck_assert_ptr_nonnull(strstr(t, "\"spectral_solver\": \"dense\",\n"));
    ck_assert_ptr_nonnull(strstr(t, "\"file\":\"" DTSIM_SOURCE_DIR "/tests/data/topo/ring5.txt\""));
    /* lazy max-degree on the 5-ring: 1/4 + 3/4 (1/3 + 2/3 cos(2 pi/5)) */
    ck_assert_double_eq_tol(field(t, "\"lambda2\": "),
                            0.25 + 0.75 * (1.0 / 3.0 + 2.0 / 3.0 * cos(2 * PI / 5)), 1e-12);
    free(t);
    remove_tmp();
}
END_TEST

/* The learned kind (STL-FW) as a user meets it: `dtsim topo` prints every
 * step's objective, strictly decreasing, and the spectral gap 1 - lambda2;
 * the edge list carries both directions of a nonsymmetric W; a run learns
 * the same W (run.json: the same lambda2 and objective to the last digit),
 * and a timing-only scenario is refused where the kind is given. */
START_TEST(test_learned)
{
    const char *set = "--set model.kind=softmax --set data.classes=3 "
                      "--set data.partition=shards --set data.shards_per_node=1 "
                      "--set 'topology={\"kind\":\"learned\",\"degree\":3}'";
    make_tmp();
    ck_assert_int_eq(sh("%s topo %s %s >%s/out", DTSIM_BINARY, RING6, set, tmpdir), 0);
    char *t = slurpf("%s/out", tmpdir);
    ck_assert_ptr_nonnull(strstr(t, "topology: learned\nnodes: 6\n"));
    ck_assert_ptr_nonnull(strstr(t, "mixing: learned\nlambda: 0.10000000000000001\n"));
    const char *p = strstr(t, "frank_wolfe_steps: ");
    ck_assert_ptr_nonnull(p);
    int steps = atoi(p + strlen("frank_wolfe_steps: "));
    ck_assert_int_ge(steps, 1);
    double prev = INFINITY, last = 0.0;
    for (int l = 0; l <= steps; l++) {
        char name[32];
        snprintf(name, sizeof name, "objective[%d]: ", l);
        last = field(t, name);
        ck_assert_msg(last < prev, "%s%.17g after %.17g", name, last, prev);
        prev = last;
    }
    double l2 = field(t, "lambda2: ");
    ck_assert_double_eq(field(t, "spectral_gap: "), 1.0 - l2);
    free(t);
    /* the proportions come from the partition: six nodes holding one class
     * each of three (a CSV file of 4 samples per class, 6 shards of 2), so
     * g(I) = (1/6) 6 (2/3) + (0.1/6) 5 = 3/4, and after two steps every
     * node averages itself and one node of each other class: lambda/6 */
    ck_assert_int_eq(sh("%s topo %s >%s/six", DTSIM_BINARY, SIX_PURE, tmpdir), 0);
    t = slurpf("%s/six", tmpdir);
    ck_assert_double_eq_tol(field(t, "objective[0]: "), 0.75, 1e-15);
    ck_assert_double_eq_tol(field(t, "objective[1]: "), 0.2, 1e-15);
    ck_assert_double_eq_tol(field(t, "objective[2]: "), 0.1 / 6, 1e-15);
    free(t);
    ck_assert_int_eq(sh("%s topo %s %s --edges >%s/e.csv", DTSIM_BINARY, RING6, set, tmpdir), 0);
    t = slurpf("%s/e.csv", tmpdir);
    ck_assert_int_eq(strncmp(t, "source,target,weight,reverse_weight\n", 36), 0);
    free(t);
    ck_assert_int_eq(sh("%s run %s %s -o %s/run --quiet", DTSIM_BINARY, RING6, set, tmpdir), 0);
    t = slurpf("%s/run/run.json", tmpdir);
    ck_assert_ptr_nonnull(strstr(t, "\"mixing\": \"learned\",\n"));
    ck_assert_double_eq(field(t, "\"lambda2\": "), l2);
    ck_assert_double_eq(field(t, "\"objective\": "), last);
    free(t);
    ck_assert_int_eq(sh("%s topo %s %s --set 'model={\"kind\":\"none\",\"message_bytes\":100}' "
                        "--set 'data={}' 2>%s/err", DTSIM_BINARY, RING6, set, tmpdir), 2);
    t = slurpf("%s/err", tmpdir);
    ck_assert_ptr_nonnull(strstr(t, "golden-dpsgd.json: /topology/kind: error: \"learned\" needs "
                                    "the data's label proportions"));
    free(t);
    remove_tmp();
}
END_TEST

/* Every kind through the scenario keys, the runner and the command: the
 * parameters reach the generator (counts and closed forms). */
START_TEST(test_every_kind)
{
    static const struct {
        const char *sets;
        const char *lines;   /* expected in the output */
        double      lambda2; /* < 0: not checked */
    } cases[] = {
        { "nodes=27 --set topology.kind=torus3d --set topology.rows=3 --set topology.cols=3 "
          "--set topology.layers=3", "edges: 81\ndegree: 6..6\ndiameter: 3\n", 4.0 / 7.0 },
        { "nodes=16 --set topology.kind=hypercube", "edges: 32\ndegree: 4..4\n", 0.6 },
        { "nodes=10 --set topology.kind=ring_lattice --set topology.k=2",
          "edges: 20\ndegree: 4..4\n", -1 },
        { "nodes=20 --set topology.kind=watts_strogatz --set topology.k=2 "
          "--set topology.beta=0", "edges: 40\ndegree: 4..4\n", -1 },
        { "nodes=20 --set topology.kind=barabasi_albert --set topology.m=2",
          "edges: 37\n", -1 },
        { "nodes=8 --set topology.kind=exponential", "edges: 20\ndegree: 5..5\n", -1 },
        { "nodes=5 --set topology.kind=star", "edges: 4\ndegree: 1..4\ndiameter: 2\n", 0.8 },
        { "nodes=7 --set topology.kind=binary_tree", "edges: 6\ndegree: 1..3\ndiameter: 4\n",
          -1 },
        { "nodes=9 --set topology.kind=ring --set topology.mixing=max_degree",
          "mixing: max_degree\n", -1 },
    };
    make_tmp();
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        ck_assert_msg(sh("%s topo %s --set %s >%s/out 2>&1", DTSIM_BINARY, RING6, cases[t].sets,
                         tmpdir) == 0, "%s", cases[t].sets);
        char *out = slurpf("%s/out", tmpdir);
        ck_assert_msg(strstr(out, cases[t].lines) != NULL, "%s:\n%s", cases[t].sets, out);
        if (cases[t].lambda2 >= 0)
            ck_assert_double_eq_tol(field(out, "lambda2: "), cases[t].lambda2, 1e-12);
        free(out);
    }
    /* rewiring happens with beta > 0 */
    ck_assert_int_eq(sh("%s topo %s --set nodes=40 --set topology.kind=watts_strogatz "
                        "--set topology.k=2 --set topology.beta=0.5 | grep -q 'degree: 4..4'",
                        DTSIM_BINARY, RING6), 1);
    remove_tmp();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("topo_cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_stats_and_edges);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_run_json_mixing);
    tcase_add_test(tc, test_every_kind);
    tcase_add_test(tc, test_learned);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
