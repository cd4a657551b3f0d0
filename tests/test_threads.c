/* test_threads.c -- the model math on several threads changes no byte:
 * whole runs (softmax and MLP, synchronous and asynchronous protocols, a
 * collective released by step marks, failures with restarted and aborted
 * steps, per-node evaluations, a run that diverges and is replayed) are
 * done with 1, 2 and 3 threads and their metrics.csv, nodes.csv,
 * node_metrics.csv and trace.csv compared byte for byte, with the status
 * and message of the run.  The worker pool itself is checked on its own:
 * every task runs once, joined in the caller's order, whatever thread
 * took it, and a caller waiting for a worker runs the queued tasks (a
 * task the running one waits for would otherwise never run).  No timing is measured here (speed belongs in bench/).
 */
#include <check.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"
#include "scn.h"
#include "sim_pool.h"

#if DTSIM_OPENBLAS
void openblas_set_num_threads(int n);   /* as dtsim's main does */
#endif

#define SCN DTSIM_SOURCE_DIR "/scenarios/"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

typedef struct outcome {
    uint64_t hash;     /* of every metrics row's bits: the CSV rounds to 10 digits */
    uint64_t rows;
    run_status status;
    char stop_reason[64], message[8192];
    char *files[4];
} outcome;

static const char *const names[4] = { "metrics.csv", "nodes.csv", "node_metrics.csv",
                                      "trace.csv" };

static void hash_row(void *vo, const out_metrics_row *row)
{
    outcome *o = vo;
    const double v[] = { row->time_s, row->epochs, row->train_loss, row->test_loss,
                         row->test_accuracy, row->consensus_distance, row->bytes_sent,
                         (double)row->steps };
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < sizeof v; i++)
        o->hash = (o->hash ^ b[i]) * 1099511628211u;   /* FNV-1a */
    o->rows++;
}

static void run_with(const char *path, const char *const *ov, size_t n_ov, int threads,
                     outcome *o)
{
    char tmpl[] = "/tmp/dtsim-threads-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    char dir[256];
    snprintf(dir, sizeof dir, "%s/out", tmpl);
    scn_scenario s;
    scn_error err;
    ck_assert_msg(scn_load(path, ov, n_ov, &s, &err) == 0, "%s", err.msg);
    run_sim *r = run_prepare(&s, &err);
    ck_assert_msg(r != NULL, "%s", err.msg);
    o->hash = 14695981039346656037u;
    o->rows = 0;
    run_options opt = { .out_dir = dir, .threads = threads, .on_metrics = hash_row,
                        .hook_ctx = o };
    run_result res;
    char msg[1024];
    ck_assert_msg(run_execute(r, &opt, &res, msg, sizeof msg) == 0, "%s", msg);
    o->status = res.status;
    snprintf(o->stop_reason, sizeof o->stop_reason, "%s", res.stop_reason);
    snprintf(o->message, sizeof o->message, "%s", res.message);
    for (int k = 0; k < 4; k++) {
        char f[512];
        snprintf(f, sizeof f, "%s/%s", dir, names[k]);
        o->files[k] = slurp(f);
        unlink(f);
    }
    char f[512];
    snprintf(f, sizeof f, "%s/run.json", dir);
    unlink(f);
    rmdir(dir);
    rmdir(tmpl);
    run_destroy(r);
    scn_fini(&s);
}

static void outcome_fini(outcome *o)
{
    for (int k = 0; k < 4; k++)
        free(o->files[k]);
}

/* Runs the scenario on 1, 2 and 3 threads; returns the one-thread
 * status so a case can check it reached what it meant to test. */
static run_status same_for_every_thread_count(const char *path, const char *const *ov,
                                              size_t n_ov)
{
    outcome one;
    run_with(path, ov, n_ov, 1, &one);
    ck_assert_ptr_nonnull(one.files[0]);
    ck_assert_ptr_nonnull(one.files[1]);
    for (int t = 2; t <= 3; t++) {
        outcome o;
        run_with(path, ov, n_ov, t, &o);
        ck_assert_int_eq(o.status, one.status);
        /* a run replayed on one thread has shown its first rows twice */
        if (o.rows == one.rows)
            ck_assert_msg(o.hash == one.hash, "metrics differ in their last bits with %d "
                          "threads", t);
        ck_assert_str_eq(o.stop_reason, one.stop_reason);
        ck_assert_str_eq(o.message, one.message);
        for (int k = 0; k < 4; k++) {
            ck_assert_msg((o.files[k] == NULL) == (one.files[k] == NULL), "%s", names[k]);
            if (one.files[k])
                ck_assert_msg(strcmp(o.files[k], one.files[k]) == 0,
                              "%s differs with %d threads", names[k], t);
        }
        outcome_fini(&o);
    }
    run_status st = one.status;
    outcome_fini(&one);
    return st;
}

/* ---- the pool on its own ---- */

typedef struct counts { int runs[64]; int thread_of[64]; double out[64]; } counts;

static void square(void *vc, int k, int thread)
{
    counts *c = vc;
    double x = 1.0 + k;
    for (int i = 0; i < 2000; i++)   /* enough work for a worker to take some */
        x = x * 1.0000001 + 1e-9;
    c->out[k] = x;
    c->runs[k]++;
    c->thread_of[k] = thread;
}

START_TEST(pool_runs_each_task_once)
{
    counts c = { { 0 }, { 0 }, { 0 } };
    sim_pool *p = sim_pool_create(3, 64, square, &c);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(sim_pool_threads(p), 3);
    for (int round = 0; round < 50; round++) {
        for (int k = 0; k < 64; k++)
            sim_pool_submit(p, k);
        for (int k = 63; k >= 0; k--) {   /* joined in another order than submitted */
            const int rc = sim_pool_join(p, k);   /* 2: it waited for a worker */
            ck_assert_msg(rc == 1 || rc == 2, "join of pending task %d gave %d", k, rc);
        }
        ck_assert_int_eq(sim_pool_join(p, 5), 0);   /* not pending any more */
        for (int k = 0; k < 64; k++) {
            ck_assert_int_eq(c.runs[k], round + 1);
            ck_assert(c.thread_of[k] >= 0 && c.thread_of[k] < 3);
            double x = 1.0 + k;
            for (int i = 0; i < 2000; i++)
                x = x * 1.0000001 + 1e-9;
            ck_assert(c.out[k] == x);
        }
    }
    /* tasks left pending are waited for or dropped, never run twice */
    for (int k = 0; k < 64; k++)
        sim_pool_submit(p, k);
    sim_pool_destroy(p);
    for (int k = 0; k < 64; k++)
        ck_assert(c.runs[k] == 50 || c.runs[k] == 51);
    sim_pool_destroy(NULL);
}
END_TEST

/* Task 0 runs until task 1 has run; the caller waits for task 0 only
 * once the worker has it, so only a caller that runs queued tasks while
 * it waits gets past the join (else: a deadlock, caught by the timeout). */
typedef struct relay {
    atomic_int started, released;
    int        ran[2], thread_of[2];
} relay;

static void relay_task(void *vr, int k, int thread)
{
    relay *r = vr;
    r->ran[k]++;
    r->thread_of[k] = thread;
    if (k == 0) {
        atomic_store(&r->started, 1);
        while (!atomic_load(&r->released))
            ;
    } else {
        atomic_store(&r->released, 1);
    }
}

static void relay_round(sim_pool *p, relay *r, int part)
{
    atomic_store(&r->started, 0);
    atomic_store(&r->released, 0);
    sim_pool_submit(p, 0);
    while (!atomic_load(&r->started))   /* the worker has task 0 */
        ;
    sim_pool_submit(p, 1);
    if (part)
        ck_assert_int_eq(sim_pool_wait_part(p, 0), 2);
    else
        ck_assert_int_eq(sim_pool_join(p, 0), 2);
    ck_assert_int_eq(r->thread_of[0], 1);
    ck_assert_int_eq(r->thread_of[1], 0);   /* run by the waiting caller */
    ck_assert_int_eq(sim_pool_join(p, 1), 1);
    ck_assert_int_eq(sim_pool_join(p, 0), part ? 1 : 0);
}

START_TEST(pool_caller_helps_while_waiting)
{
    relay r = { 0 };
    sim_pool *p = sim_pool_create(2, 2, relay_task, &r);
    ck_assert_ptr_nonnull(p);
    relay_round(p, &r, 0);
    relay_round(p, &r, 1);
    ck_assert_int_eq(r.ran[0], 2);
    ck_assert_int_eq(r.ran[1], 2);
    sim_pool_stats st = sim_pool_stats_get(p);
    ck_assert_int_eq(st.submitted, 4);
    ck_assert_int_eq(st.waited, 2);
    ck_assert_int_eq(st.helped, 2);
    ck_assert_int_eq(st.ran_here, 0);
    sim_pool_destroy(p);
}
END_TEST

/* ---- whole runs ---- */

static const char *const traced[] = { "output.trace=true" };

START_TEST(softmax_dpsgd)
{
    const char *ov[] = { "output.trace=true", "metrics.per_node=true" };
    ck_assert_int_eq(same_for_every_thread_count(SCN "ring16-dpsgd.json", ov, 2), RUN_OK);
}
END_TEST

/* Asynchronous: neighbours average into a node's parameters while its
 * step is computing, so the job must use the copy taken at step start. */
START_TEST(mlp_adpsgd)
{
    const char *ov[] = { "output.trace=true",
                         "model={\"kind\": \"mlp\", \"hidden\": [24, 12], \"activation\": \"relu\"}",
                         "stop.time_s=3" };
    ck_assert_int_eq(same_for_every_thread_count(SCN "ring16-adpsgd.json", ov, 3), RUN_OK);
}
END_TEST

START_TEST(mlp_dpsgd_momentum)
{
    const char *ov[] = { "output.trace=true",
                         "model={\"kind\": \"mlp\", \"hidden\": [32], \"activation\": \"tanh\"}",
                         "optimizer.momentum=0.9", "stop.time_s=3" };
    ck_assert_int_eq(same_for_every_thread_count(SCN "ring16-dpsgd.json", ov, 4), RUN_OK);
}
END_TEST

/* Models of at least 16,384 parameters (21,004 here, not a multiple of
 * the 64-element blocks): the optimizer update and D-PSGD's averaging
 * (the neighbours' adds, the mix into the parameters) are cut into
 * blocks spread over the threads; D-PSGD's steps read the parameters in
 * place (no copy), AD-PSGD's switch to the copy at its first mid-step
 * write.  Plain SGD (daxpy) and momentum (the fused loop) both. */
START_TEST(large_model_split_passes)
{
    const char *plain[] = { "output.trace=true", "metrics.per_node=true",
                            "model={\"kind\": \"mlp\", \"hidden\": [1000]}",
                            "stop.time_s=1" };
    ck_assert_int_eq(same_for_every_thread_count(SCN "ring16-dpsgd.json", plain, 4), RUN_OK);
    const char *mom[] = { "output.trace=true", "optimizer.momentum=0.9",
                          "optimizer.weight_decay=0.001", "optimizer.warmup_steps=50",
                          "model={\"kind\": \"mlp\", \"hidden\": [1000]}",
                          "stop.time_s=1" };
    ck_assert_int_eq(same_for_every_thread_count(SCN "ring16-dpsgd.json", mom, 6), RUN_OK);
    ck_assert_int_eq(same_for_every_thread_count(SCN "ring16-allreduce.json", mom, 6), RUN_OK);
    ck_assert_int_eq(same_for_every_thread_count(SCN "ring16-adpsgd.json", mom, 6), RUN_OK);
}
END_TEST

/* D-PSGD's mix runs in the next step's job and reads the neighbours'
 * snapshots, which their own jobs write: with a time-varying schedule
 * (nodes rounds apart, slots ahead), failures and rejoins that copy a
 * neighbour's parameters into a node mid-round, and per-node evaluations
 * reading every node's parameters. */
START_TEST(dpsgd_deferred_mix)
{
    const char *ov[] = { "output.trace=true", "metrics.per_node=true",
                         "model={\"kind\": \"mlp\", \"hidden\": [24], \"activation\": \"relu\"}",
                         "optimizer.momentum=0.9", "faults.rejoin=neighbour",
                         "faults.events=[{\"kind\": \"exponential\", \"mtbf_s\": 0.5,"
                         " \"mttr_s\": 0.05}]", "stop.time_s=4" };
    ck_assert_int_eq(same_for_every_thread_count(SCN "ring16-dpsgd.json", ov, 7), RUN_OK);
    const char *sched[] = { "output.trace=true", "algorithm.schedule=random_matching",
                            "faults.events=[{\"kind\": \"exponential\", \"mtbf_s\": 0.5,"
                            " \"mttr_s\": 0.05}]", "stop.time_s=4" };
    ck_assert_int_eq(same_for_every_thread_count(SCN "ring16-dpsgd.json", sched, 4), RUN_OK);
}
END_TEST

/* Buckets released at step marks read the gradient during the step. */
START_TEST(allreduce_buckets)
{
    const char *ov[] = { "output.trace=true", "algorithm.bucket_bytes=64",
                         "stop.time_s=3" };
    ck_assert_int_eq(same_for_every_thread_count(SCN "ring16-allreduce.json", ov, 3), RUN_OK);
}
END_TEST

START_TEST(eager_marks)
{
    ck_assert_int_eq(same_for_every_thread_count(SCN "ring16-eager.json", traced, 1), RUN_OK);
}
END_TEST

/* Steps restarted when a node returns, and steps a protocol aborts. */
START_TEST(failures_restart)
{
    const char *ov[] = { "output.trace=true", "faults.step=restart",
                         "faults.events=[{\"kind\": \"exponential\", \"mtbf_s\": 0.5,"
                         " \"mttr_s\": 0.05}]", "stop.time_s=4" };
    same_for_every_thread_count(SCN "ring16-dpsgd.json", ov, 4);
    same_for_every_thread_count(SCN "ps16-backup.json", ov, 4);
    same_for_every_thread_count(SCN "ring16-adpsgd.json", ov, 4);
}
END_TEST

START_TEST(fedavg_aborts)
{
    ck_assert_int_eq(same_for_every_thread_count(SCN "ps16-fedavg.json", traced, 1), RUN_OK);
}
END_TEST

/* fednova reads each round's first minibatch loss (alg_step_loss joins
 * the step's job) for AdaComm's schedule, and a time budget's step counts
 * under noise; a node failing mid-round is renormalized away. */
START_TEST(fednova_losses)
{
    const char *ada[] = { "output.trace=true",
                          "algorithm={\"name\": \"fednova\", \"lr\": 0.05, \"batch\": 32,"
                          " \"local_steps\": \"adaptive\", \"tau\": 6}", "stop.time_s=4" };
    ck_assert_int_eq(same_for_every_thread_count(SCN "ps16-fedavg.json", ada, 3), RUN_OK);
    const char *tb[] = { "output.trace=true", "faults.step=restart",
                         "faults.events=[{\"kind\": \"exponential\", \"mtbf_s\": 1,"
                         " \"mttr_s\": 0.1}]",
                         "algorithm={\"name\": \"fednova\", \"lr\": 0.05, \"batch\": 32,"
                         " \"round_time_s\": 0.1}", "stop.time_s=4" };
    ck_assert_int_eq(same_for_every_thread_count(SCN "ps16-fedavg.json", tb, 5), RUN_OK);
}
END_TEST

/* A step's loss overflows: one thread stops after the event in which it
 * began; more threads learn it later and replay the run on one. */
START_TEST(divergence_replayed)
{
    const char *ov[] = { "output.trace=true", "algorithm.lr=1e12", "metrics.every_s=0.01" };
    ck_assert_int_eq(same_for_every_thread_count(SCN "ring16-adpsgd.json", ov, 3),
                     RUN_DIVERGED);
}
END_TEST

int main(void)
{
#if DTSIM_OPENBLAS
    openblas_set_num_threads(1);
#endif
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, pool_runs_each_task_once);
    tcase_add_test(tc, softmax_dpsgd);
    tcase_add_test(tc, mlp_adpsgd);
    tcase_add_test(tc, mlp_dpsgd_momentum);
    tcase_add_test(tc, allreduce_buckets);
    tcase_add_test(tc, large_model_split_passes);
    tcase_add_test(tc, dpsgd_deferred_mix);
    tcase_add_test(tc, eager_marks);
    tcase_add_test(tc, failures_restart);
    tcase_add_test(tc, fedavg_aborts);
    tcase_add_test(tc, fednova_losses);
    tcase_add_test(tc, divergence_replayed);
    suite_add_tcase(s, tc);
    TCase *tp = tcase_create("pool");   /* a deadlock fails in seconds, not minutes */
    tcase_set_timeout(tp, 30);
    tcase_add_test(tp, pool_caller_helps_while_waiting);
    suite_add_tcase(s, tp);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
