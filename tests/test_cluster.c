/* test_cluster.c -- the cluster's timing and payload semantics in
 * isolation, with the trainer wired to its step callbacks as the runner
 * wires them: uplink FIFO serialisation (k transfers cost k times one),
 * downlink FIFO with cut-through in arrival order (a later message
 * overtaking one held in its sender's uplink), FIFO order on one link,
 * payload snapshots
 * that later parameter changes do not touch, gradients taken on the
 * parameters at step start, and step-time noise with the right mean.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cl_cluster.h"
#include "sim_engine.h"
#include "trn.h"

typedef struct rec {
    int    n_msgs, n_steps;
    double msg_time[64];
    int    msg_from[64], msg_to[64];
    uint64_t msg_round[64];
    double first_value[64];
    double grad0[64];
    int    n_lost, lost_from[64];   /* trace rows "lost", in order */
} rec;

static trn_trainer *g_trn;

static void on_step_start(void *ctx, int node)
{
    (void)ctx;
    trn_step_begin(g_trn, node, 1, 0);
}

static void on_step(void *ctx, int node)
{
    rec *r = ctx;
    if (r->n_steps == 0)
        memcpy(r->grad0, trn_grad(g_trn, node), sizeof r->grad0);
    r->n_steps++;
}

static sim_engine *g_eng;

static void on_msg(void *ctx, int node, const cl_msg *m)
{
    (void)node;
    rec *r = ctx;
    int k = r->n_msgs++;
    r->msg_time[k] = sim_engine_now(g_eng);
    r->msg_from[k] = m->from;
    r->msg_to[k] = m->to;
    r->msg_round[k] = m->round;
    r->first_value[k] = m->payload ? m->payload->data[0] : NAN;
}

static void on_trace(void *ctx, const cl_trace_rec *t)
{
    rec *r = ctx;
    if (strcmp(t->kind, "lost") == 0 && r->n_lost < 64)
        r->lost_from[r->n_lost++] = t->node;
}

typedef struct fixture {
    mdl_dataset train, test;
    mdl_partition part;
    mdl_model *model;
    double step[4];
    cl_cluster *cl;
    trn_trainer *trn;
    rec r;
} fixture;

/* 64 parameters of 4 bytes */
#define MODEL_BYTES 256.0

static double *params(fixture *f, int node) { return trn_params(f->trn, node); }

static cl_buf *snapshot(fixture *f, int node)
{
    cl_buf *b = cl_buf_get(f->cl);
    memcpy(b->data, params(f, node), 64 * sizeof(double));
    return b;
}

static void setup_faults(fixture *f, cl_noise noise, double bw, double lat, uint64_t seed,
                         const cl_fault *faults, size_t n_faults);

static void setup(fixture *f, cl_noise noise, double bw, double lat, uint64_t seed)
{
    setup_faults(f, noise, bw, lat, seed, NULL, 0);
}

static void setup_faults(fixture *f, cl_noise noise, double bw, double lat, uint64_t seed,
                         const cl_fault *faults, size_t n_faults)
{
    memset(f, 0, sizeof *f);
    mdl_synth_spec sp = { .n_train = 400, .n_test = 10, .d = 15, .n_classes = 4, .separation = 1 };
    ck_assert_int_eq(mdl_synth_generate(&sp, 3, &f->train, &f->test), 0);
    ck_assert_int_eq(mdl_partition_iid(f->train.n, 4, 5, &f->part), 0);
    f->model = mdl_create(&mdl_softmax, 15, 4, 0.0, 8);
    ck_assert_ptr_nonnull(f->model);
    ck_assert_uint_eq(mdl_n_params(f->model), 64);
    for (int i = 0; i < 4; i++)
        f->step[i] = 1.0 + i;
    g_eng = sim_engine_create(5, 16);
    cl_config cfg = { .n_nodes = 4, .seed = seed, .step_time_s = f->step, .noise = noise,
                      .latency_s = lat, .bandwidth_Bps = bw, .payload_doubles = 65,
                      .faults = faults, .n_faults = n_faults };
    cl_callbacks cb = { .ctx = &f->r, .on_step_start = on_step_start, .on_step_done = on_step,
                        .on_message = on_msg, .on_trace = on_trace };
    f->cl = cl_create(&cfg, g_eng, cb);
    ck_assert_ptr_nonnull(f->cl);
    trn_config tc = { .n_nodes = 4, .seed = seed, .model = f->model, .train = &f->train,
                      .part = &f->part, .batch = 8 };
    g_trn = f->trn = trn_create(&tc);
    ck_assert_ptr_nonnull(f->trn);
}

static void drain(fixture *f)
{
    sim_event ev;
    while (sim_engine_pop(g_eng, &ev))
        cl_handle_event(f->cl, &ev);
    ck_assert_uint_eq(cl_pending(f->cl), 0);
    ck_assert_uint_eq(cl_in_flight(f->cl), 0);
}

static void teardown(fixture *f)
{
    cl_destroy(f->cl);
    trn_destroy(f->trn);
    sim_engine_destroy(g_eng);
    mdl_destroy(f->model);
    mdl_partition_fini(&f->part);
    mdl_dataset_fini(&f->train);
    mdl_dataset_fini(&f->test);
}

/* 256 bytes at 1000 B/s = 0.256 s per transfer, 0.5 s latency */
START_TEST(test_uplink_serialises)
{
    fixture f;
    setup(&f, CL_NOISE_CONSTANT, 1000, 0.5, 1);
    cl_buf *b = snapshot(&f, 0);
    for (int j = 1; j < 4; j++)
        cl_send(f.cl, 0, j, 0, 0, b, MODEL_BYTES);
    cl_buf_put(f.cl, b);
    drain(&f);
    ck_assert_int_eq(f.r.n_msgs, 3);
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(f.r.msg_to[k], k + 1);
        ck_assert_double_eq_tol(f.r.msg_time[k], 0.5 + 0.256 * (k + 1), 1e-12);
    }
    ck_assert_double_eq_tol(cl_stats(f.cl, 0)->uplink_busy_s, 3 * 0.256, 1e-12);
    ck_assert_double_eq(cl_stats(f.cl, 0)->bytes_sent, 768);
    ck_assert_double_eq(cl_stats(f.cl, 2)->bytes_received, 256);
    teardown(&f);
}
END_TEST

START_TEST(test_downlink_serialises)
{
    fixture f;
    setup(&f, CL_NOISE_CONSTANT, 1000, 0.5, 1);
    for (int i = 1; i < 4; i++) {
        cl_buf *b = snapshot(&f, i);
        cl_send(f.cl, i, 0, 0, (uint64_t)i, b, MODEL_BYTES);
        cl_buf_put(f.cl, b);
    }
    drain(&f);
    ck_assert_int_eq(f.r.n_msgs, 3);
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(f.r.msg_from[k], k + 1);   /* arrival order */
        ck_assert_double_eq_tol(f.r.msg_time[k], 0.5 + 0.256 * (k + 1), 1e-12);
    }
    teardown(&f);
}
END_TEST

/* A message whose first bit arrives first is received first, though sent
 * last: 0 -> 2 waits 0.256 s in node 0's uplink behind 0 -> 1 (first bit at
 * 2 at 0.756 s), 3 -> 2 of 512 bytes, sent after both, arrives at 0.5 s and
 * holds 2's downlink until 1.012 s, so 0 -> 2 is received from 1.012 to
 * 1.268 s (booked at 1.012 s when sent, moved when 3 -> 2 was sent).  One
 * event per message. */
START_TEST(test_overtaking_moves_delivery)
{
    fixture f;
    setup(&f, CL_NOISE_CONSTANT, 1000, 0.5, 1);
    cl_buf *b = snapshot(&f, 0);
    cl_send(f.cl, 0, 1, 0, 1, b, MODEL_BYTES);
    cl_send(f.cl, 0, 2, 0, 2, b, MODEL_BYTES);
    cl_send(f.cl, 3, 2, 0, 3, b, 2 * MODEL_BYTES);
    cl_buf_put(f.cl, b);
    drain(&f);
    ck_assert_int_eq(f.r.n_msgs, 3);
    static const int from[] = { 0, 3, 0 }, to[] = { 1, 2, 2 };
    static const double at[] = { 0.756, 1.012, 1.268 };
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(f.r.msg_from[k], from[k]);
        ck_assert_int_eq(f.r.msg_to[k], to[k]);
        ck_assert_double_eq_tol(f.r.msg_time[k], at[k], 1e-12);
    }
    ck_assert_uint_eq(sim_engine_events_processed(g_eng), 3);
    teardown(&f);
}
END_TEST

/* A message whose sender goes down before its first bit arrives never
 * holds the receiver's downlink: 0 -> 2 and 3 -> 2 both wait 0.256 s in
 * their uplinks (behind copies to 1) and reach 2 at 0.756 s, 0's first;
 * node 0 goes down at 0.6 s (drop policy: 0 -> 2 is lost, and 0 -> 1 in
 * reception), so 3 -> 2 is
 * received from 0.756 s to 1.012 s, not after a dead 0 -> 2. */
START_TEST(test_sender_down_before_arrival)
{
    static const int down[] = { 0 };
    cl_fault fl = { .kind = CL_FAULT_SCHEDULE, .nodes = down, .n_nodes = 1,
                    .down_s = 0.6, .up_s = INFINITY };
    fixture f;
    setup_faults(&f, CL_NOISE_CONSTANT, 1000, 0.5, 1, &fl, 1);
    cl_buf *b = snapshot(&f, 0);
    cl_send(f.cl, 0, 1, 0, 1, b, MODEL_BYTES);
    cl_send(f.cl, 0, 2, 0, 2, b, MODEL_BYTES);
    cl_send(f.cl, 3, 1, 0, 3, b, MODEL_BYTES);
    cl_send(f.cl, 3, 2, 0, 4, b, MODEL_BYTES);
    cl_buf_put(f.cl, b);
    sim_event ev;
    while (sim_engine_pop(g_eng, &ev) && ev.time < 10)
        cl_handle_event(f.cl, &ev);
    ck_assert_uint_eq(cl_in_flight(f.cl), 0);
    int got = 0;
    for (int k = 0; k < f.r.n_msgs; k++)
        if (f.r.msg_to[k] == 2) {
            got++;
            ck_assert_int_eq(f.r.msg_from[k], 3);
            ck_assert_double_eq_tol(f.r.msg_time[k], 1.012, 1e-12);
        }
    ck_assert_int_eq(got, 1);
    ck_assert_uint_eq(cl_stats(f.cl, 0)->msgs_lost, 2);   /* 0 -> 1 too, undelivered */
    teardown(&f);
}
END_TEST

/* Messages lost at one instant are reported in the order of their slots,
 * which a fresh cluster hands out in the order messages are sent (the
 * free-slot stack, cl_net.c): 1, 2 and 3 send to 0, whose downlink is
 * receiving all three (first bits at 0.5 s) when it goes down at 0.6 s.
 * trace.csv's rows at one instant depend on this order (mutant
 * slot-stack-order). */
START_TEST(test_lost_together_in_send_order)
{
    static const int down[] = { 0 };
    cl_fault fl = { .kind = CL_FAULT_SCHEDULE, .nodes = down, .n_nodes = 1,
                    .down_s = 0.6, .up_s = INFINITY };
    fixture f;
    setup_faults(&f, CL_NOISE_CONSTANT, 1000, 0.5, 1, &fl, 1);
    cl_buf *b = snapshot(&f, 1);
    cl_send(f.cl, 1, 0, 0, 1, b, MODEL_BYTES);
    cl_send(f.cl, 2, 0, 0, 2, b, MODEL_BYTES);
    cl_send(f.cl, 3, 0, 0, 3, b, MODEL_BYTES);
    cl_buf_put(f.cl, b);
    sim_event ev;
    while (sim_engine_pop(g_eng, &ev) && ev.time < 10)
        cl_handle_event(f.cl, &ev);
    ck_assert_int_eq(f.r.n_msgs, 0);
    ck_assert_int_eq(f.r.n_lost, 3);
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(f.r.lost_from[k], k + 1);
    teardown(&f);
}
END_TEST

/* The uplink backlog counts the messages whose last bit has not left:
 * five 256-byte messages at 1000 B/s from node 0 at time 0 leave at
 * 0.256 s, 0.512 s, ...; the ring of their last-bit times outgrows its
 * two inline entries at the third (mutant upq-inline-copy). */
START_TEST(test_uplink_backlog_count)
{
    fixture f;
    setup(&f, CL_NOISE_CONSTANT, 1000, 0.5, 1);
    cl_buf *b = snapshot(&f, 0);
    for (int k = 1; k <= 5; k++)
        cl_send(f.cl, 0, 1 + k % 3, 0, (uint64_t)k, b, MODEL_BYTES);
    cl_buf_put(f.cl, b);
    ck_assert_uint_eq(cl_uplink_queued(f.cl, 0), 5);
    sim_event ev;
    int events = 0;
    while (sim_engine_pop(g_eng, &ev)) {   /* the deliveries, from 0.756 s */
        cl_handle_event(f.cl, &ev);
        uint64_t left = 0;
        for (int k = 1; k <= 5; k++)
            left += 0.256 * k > ev.time;
        ck_assert_uint_eq(cl_uplink_queued(f.cl, 0), left);
        events++;
    }
    ck_assert_int_eq(events, 5);
    ck_assert_int_eq(f.r.n_msgs, 5);
    ck_assert_uint_eq(cl_uplink_queued(f.cl, 0), 0);
    teardown(&f);
}
END_TEST

/* A small message behind a large one on the same link keeps its place, and
 * a zero-byte control message costs only the latency. */
START_TEST(test_link_fifo_and_control)
{
    fixture f;
    setup(&f, CL_NOISE_CONSTANT, 1000, 0.5, 1);
    cl_buf *b = snapshot(&f, 0);
    cl_send(f.cl, 0, 1, 0, 1, b, 1000);
    cl_send(f.cl, 0, 1, 0, 2, b, 10);
    cl_buf_put(f.cl, b);
    cl_send(f.cl, 2, 3, 7, 9, NULL, 0);
    drain(&f);
    ck_assert_int_eq(f.r.n_msgs, 3);
    ck_assert_uint_eq(f.r.msg_round[0], 9);
    ck_assert_double_eq_tol(f.r.msg_time[0], 0.5, 1e-15);
    ck_assert_uint_eq(f.r.msg_round[1], 1);
    ck_assert_double_eq_tol(f.r.msg_time[1], 1.5, 1e-12);
    ck_assert_uint_eq(f.r.msg_round[2], 2);
    ck_assert_double_eq_tol(f.r.msg_time[2], 1.51, 1e-12);
    teardown(&f);
}
END_TEST

START_TEST(test_payload_is_a_snapshot)
{
    fixture f;
    setup(&f, CL_NOISE_CONSTANT, 1000, 0.5, 1);
    params(&f, 0)[0] = 42.0;
    cl_buf *b = snapshot(&f, 0);
    cl_send(f.cl, 0, 1, 0, 0, b, 4);
    cl_send(f.cl, 0, 2, 0, 0, b, 4);
    cl_buf_put(f.cl, b);
    params(&f, 0)[0] = -1.0;   /* after the send: must not show */
    drain(&f);
    ck_assert_double_eq(f.r.first_value[0], 42.0);
    ck_assert_double_eq(f.r.first_value[1], 42.0);
    teardown(&f);
}
END_TEST

/* Two identical clusters; in one the parameters change during the step.
 * The gradients handed over must be equal: taken at step start. */
START_TEST(test_gradient_at_step_start)
{
    fixture a, b;
    setup(&a, CL_NOISE_CONSTANT, 1000, 0.5, 1);
    sim_engine *ea = g_eng;
    for (int k = 0; k < 64; k++)
        params(&a, 0)[k] = 0.01 * k;
    cl_start_step(a.cl, 0);
    for (int k = 0; k < 64; k++)
        params(&a, 0)[k] = 5.0;
    drain(&a);
    trn_trainer *ta = g_trn;
    setup(&b, CL_NOISE_CONSTANT, 1000, 0.5, 1);
    for (int k = 0; k < 64; k++)
        params(&b, 0)[k] = 0.01 * k;
    cl_start_step(b.cl, 0);
    drain(&b);
    ck_assert_int_eq(a.r.n_steps, 1);
    ck_assert_int_eq(memcmp(a.r.grad0, b.r.grad0, sizeof a.r.grad0), 0);
    ck_assert_double_eq(sim_engine_now(ea), 1.0);  /* node 0's base step time */
    teardown(&b);
    g_eng = ea;
    g_trn = ta;
    teardown(&a);
}
END_TEST

/* Exp(1) noise: the mean of 4000 step times of node 3 (base 4 s) is 4
 * within 3 standard errors (sd of Exp is its mean). */
START_TEST(test_exponential_step_mean)
{
    fixture f;
    setup(&f, CL_NOISE_EXPONENTIAL, 1000, 0.5, 9);
    const int K = 4000;
    double t = 0;
    for (int k = 0; k < K; k++) {
        cl_start_step(f.cl, 3);
        sim_event ev;
        ck_assert(sim_engine_pop(g_eng, &ev));
        cl_handle_event(f.cl, &ev);
        ck_assert_int_eq(cl_is_computing(f.cl, 3), 0);
        t = sim_engine_now(g_eng);
    }
    double mean = t / K, se = 4.0 / sqrt(K);
    ck_assert_msg(fabs(mean - 4.0) < 3 * se, "mean step %.5g", mean);
    ck_assert_uint_eq(cl_stats(f.cl, 3)->steps, K);
    ck_assert_double_eq_tol(cl_stats(f.cl, 3)->compute_s, t, 1e-9);
    ck_assert_uint_eq(cl_total_steps(f.cl) * trn_batch(f.trn), (uint64_t)K * 8);
    teardown(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cluster");
    TCase *tc = tcase_create("cluster");
    tcase_add_test(tc, test_uplink_serialises);
    tcase_add_test(tc, test_downlink_serialises);
    tcase_add_test(tc, test_link_fifo_and_control);
    tcase_add_test(tc, test_overtaking_moves_delivery);
    tcase_add_test(tc, test_sender_down_before_arrival);
    tcase_add_test(tc, test_lost_together_in_send_order);
    tcase_add_test(tc, test_uplink_backlog_count);
    tcase_add_test(tc, test_payload_is_a_snapshot);
    tcase_add_test(tc, test_gradient_at_step_start);
    tcase_add_test(tc, test_exponential_step_mean);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
