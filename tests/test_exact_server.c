/* test_exact_server.c -- the server and collective protocols (ps-sync,
 * all-reduce with each collective, rennala, backup, local SGD by
 * all-reduce, FedAvg on a skewed partition) apply exactly the mean (or the
 * sample-weighted mean) of their workers' gradients, and the optimizers
 * follow trajectories worked by hand (issue 14; each test names the mutants
 * of tests/mutants.tsv it kills; the wrapper is exact_util.h's).
 */
#include "exact_util.h"

/* ---- servers: the mean of the gradients (ps-sync-sum, allreduce-mean, backup-count, ...) ---- */

/* Every worker's gradient points at its own target: a server applying the
 * mean lands on mean(t) after one round and stays there; the sum (or a
 * divisor off by one) lands elsewhere. */
static void expect_mean_of_targets(const char *alg, int node_to_check, int n_targets)
{
    double want[MAXP];
    for (size_t k = 0; k < cap_P; k++) {
        want[k] = 0;
        for (int i = 0; i < n_targets; i++)
            want[k] += target[i][k];
        want[k] /= n_targets;
    }
    for (size_t k = 0; k < cap_P; k++)
        ck_assert_msg(fabs(cap_x[node_to_check][k] - want[k]) < 1e-12,
                      "%s: parameter %zu is %.17g, the mean of the targets %.17g", alg, k,
                      cap_x[node_to_check][k], want[k]);
}

START_TEST(test_ps_sync_applies_the_mean)
{
    set_targets(4, MAXP);
    run_result res;
    run_wrapped(BASE(4, "") " \"algorithm\": {\"name\": \"ps-sync\", \"lr\": 0.1},"
                " \"stop\": {\"time_s\": 0.2}}", wrap("ps-sync", G_TARGET, 0.1), zero_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    ck_assert_double_ge(stat_of(&res, "gradients_applied"), 8);
    expect_mean_of_targets("ps-sync", cap_server, 4);
}
END_TEST

START_TEST(test_allreduce_applies_the_mean)
{
    static const char *colls[] = { "ring", "recursive_doubling", "tree" };
    for (int c = 0; c < 3; c++) {
        char json[2048];
        snprintf(json, sizeof json, BASE(5, "") " \"algorithm\": {\"name\": \"allreduce\","
                 " \"lr\": 0.1, \"collective\": \"%s\"}, \"stop\": {\"time_s\": 0.2}}", colls[c]);
        set_targets(5, MAXP);
        run_result res;
        run_wrapped(json, wrap("allreduce", G_TARGET, 0.1), zero_init, &res);
        for (int i = 0; i < 5; i++)
            expect_mean_of_targets(colls[c], i, 5);
    }
}
END_TEST

/* Rennala with batch_gradients = n and backup with 0 backup workers are
 * synchronous SGD: the mean again.  Backup with equal targets: the mean of
 * any n - b of them is t. */
START_TEST(test_rennala_backup_apply_the_mean)
{
    set_targets(4, MAXP);
    run_result res;
    run_wrapped(BASE(4, "") " \"algorithm\": {\"name\": \"rennala\", \"lr\": 0.1},"
                " \"stop\": {\"time_s\": 0.2}}", wrap("rennala", G_TARGET, 0.1), zero_init, &res);
    expect_mean_of_targets("rennala", cap_server, 4);
    run_wrapped(BASE(4, "") " \"algorithm\": {\"name\": \"backup\", \"lr\": 0.1, \"backup\": 0},"
                " \"stop\": {\"time_s\": 0.2}}", wrap_p("backup", G_TARGET, 0.1, "backup=0"), zero_init, &res);
    expect_mean_of_targets("backup 0", cap_server, 4);
    for (int i = 1; i < 4; i++)
        memcpy(target[i], target[0], sizeof target[0]);
    run_wrapped(BASE(4, "") " \"algorithm\": {\"name\": \"backup\", \"lr\": 0.1, \"backup\": 1},"
                " \"stop\": {\"time_s\": 0.2}}", wrap("backup", G_TARGET, 0.1), zero_init, &res);
    expect_mean_of_targets("backup 1", cap_server, 1);
    /* each round applied n - b = 3 gradients */
    double applied = stat_of(&res, "gradients_applied");
    ck_assert_double_eq(fmod(applied, 3.0), 0.0);
    ck_assert_double_ge(applied, 9);
}
END_TEST

/* Local SGD synchronised by all-reduce: after a round every node holds the
 * exact average of the models its local steps reached, mean(t). */
START_TEST(test_localsgd_allreduce_mean)
{
    set_targets(5, MAXP);
    run_result res;
    run_wrapped(BASE(5, "") " \"algorithm\": {\"name\": \"local-sgd\", \"lr\": 0.1,"
                " \"local_steps\": 2}, \"stop\": {\"time_s\": 0.035}}",
                wrap_p("local-sgd", G_TARGET, 0.1, "local_steps=2"), zero_init, &res);
    /* at 0.035 s: synchronised at 0.02 (+ the collective), then one local
     * step ends at 0.03 + ..., moving every node to its own target */
    ck_assert_int_eq(res.status, RUN_OK);
    for (int i = 0; i < 5; i++)
        ck_assert_double_eq_tol(cap_x[i][0], target[i][0], 1e-12);
    run_wrapped(BASE(5, "") " \"algorithm\": {\"name\": \"local-sgd\", \"lr\": 0.1,"
                " \"local_steps\": 2}, \"stop\": {\"time_s\": 0.025}}",
                wrap_p("local-sgd", G_TARGET, 0.1, "local_steps=2"), zero_init, &res);
    for (int i = 0; i < 5; i++)
        expect_mean_of_targets("local-sgd", i, 5);
}
END_TEST

/* ---- FedAvg weights by samples (fedavg-unweighted) ---- */

START_TEST(test_fedavg_weighted_by_samples)
{
    set_targets(5, MAXP);
    run_result res;
    run_wrapped(BASE(5, ", \"partition\": \"quantity\"") " \"algorithm\": {\"name\": \"fedavg\","
                " \"lr\": 0.1, \"batch\": 4, \"fraction\": 1}, \"stop\": {\"time_s\": 2}}",
                wrap_p("fedavg", G_TARGET, 0.1, "fraction=1"), zero_init, &res);
    ck_assert_int_eq(res.status, RUN_OK);
    /* the partition is skewed, else the test could not tell */
    size_t lo = cap_samples[0], hi = cap_samples[0], tot = 0;
    for (int i = 0; i < 5; i++) {
        lo = cap_samples[i] < lo ? cap_samples[i] : lo;
        hi = cap_samples[i] > hi ? cap_samples[i] : hi;
        tot += cap_samples[i];
    }
    ck_assert_uint_eq(tot, 480);
    ck_assert_msg(hi > 2 * lo, "samples %zu .. %zu", lo, hi);
    for (size_t k = 0; k < cap_P; k++) {
        double want = 0;
        for (int i = 0; i < 5; i++)
            want += (double)cap_samples[i] * target[i][k];
        want /= (double)tot;
        ck_assert_msg(fabs(cap_x[cap_server][k] - want) < 1e-12, "parameter %zu: %.17g, want %.17g",
                      k, cap_x[cap_server][k], want);
    }
}
END_TEST

/* ---- optimizers against a hand-computed trajectory (opt-*) ---- */

/* f(x) = x^2 / 4 + x / 5, g = x / 2 + 1 / 5, x0 = 1, lr 0.1; the values
 * were worked by hand: e.g. momentum 0.9 with weight decay 0.01, step 1:
 * d = 0.5 + 0.2 + 0.01 = 0.71, b = 0.71, x = 1 - 0.071 = 0.929. */
static void trajectory(mdl_optim_spec sp, const double want[3])
{
    mdl_optim *o = mdl_optim_create(&sp, 2, 1);
    ck_assert_ptr_nonnull(o);
    double x[2] = { 1.0, 1.0 };
    for (int k = 0; k < 3; k++) {
        double g = 0.5 * x[1] + 0.2;
        mdl_optim_step(o, 1, &x[1], &g, 1.0);
        ck_assert_msg(fabs(x[1] - want[k]) < 1e-15, "step %d: %.17g, want %.17g", k + 1, x[1], want[k]);
    }
    /* node 0 untouched, its momentum buffer too */
    double g0 = 0.7, x0 = x[0];
    mdl_optim_step(o, 0, &x0, &g0, 2.0);
    ck_assert_uint_eq(mdl_optim_updates(o, 0), 1);
    ck_assert_uint_eq(mdl_optim_updates(o, 1), 3);
    mdl_optim_destroy(o);
}

START_TEST(test_optimizer_trajectories)
{
    mdl_optim_spec sp = { .lr = 0.1, .schedule = MDL_SCHED_CONSTANT, .step_every = 1, .gamma = 1,
                          .total_steps = 1 };
    mdl_optim_spec m = sp;
    m.momentum = 0.9;
    m.weight_decay = 0.01;
    trajectory(m, (const double[3]){ 0.929, 0.797721, 0.618886129 });
    m.nesterov = 1;
    trajectory(m, (const double[3]){ 0.8651, 0.68576181, 0.477615209611 });
    mdl_optim_spec w = sp;
    w.weight_decay = 0.01;
    trajectory(w, (const double[3]){ 0.929, 0.861621, 0.797678329 });
    mdl_optim_spec h = sp;
    h.momentum = 0.9;
    trajectory(h, (const double[3]){ 0.93, 0.8005, 0.623925 });
    mdl_optim_spec u = sp;
    u.warmup_steps = 2;   /* lr 0.05, 0.1, 0.1 */
    trajectory(u, (const double[3]){ 0.965, 0.89675, 0.8319125 });
    /* the divisor of a summed gradient: lr * g / 4 */
    mdl_optim *o = mdl_optim_create(&sp, 1, 1);
    double x = 1, g = 2;
    mdl_optim_step(o, 0, &x, &g, 4.0);
    ck_assert_double_eq_tol(x, 0.95, 1e-15);
    mdl_optim_destroy(o);
    /* cosine: lr_min + (lr - lr_min) (1 + cos(pi k / T)) / 2 */
    mdl_optim_spec c = sp;
    c.schedule = MDL_SCHED_COSINE;
    c.total_steps = 4;
    c.lr_min = 0.02;
    ck_assert_double_eq_tol(mdl_optim_lr(&c, 0), 0.1, 1e-15);
    ck_assert_double_eq_tol(mdl_optim_lr(&c, 2), 0.06, 1e-15);
    ck_assert_double_eq_tol(mdl_optim_lr(&c, 4), 0.02, 1e-15);
    ck_assert_double_eq_tol(mdl_optim_lr(&c, 9), 0.02, 1e-15);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("exact_server");
    TCase *tc = tcase_create("exact_server");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_ps_sync_applies_the_mean);
    tcase_add_test(tc, test_allreduce_applies_the_mean);
    tcase_add_test(tc, test_rennala_backup_apply_the_mean);
    tcase_add_test(tc, test_localsgd_allreduce_mean);
    tcase_add_test(tc, test_fedavg_weighted_by_samples);
    tcase_add_test(tc, test_optimizer_trajectories);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
