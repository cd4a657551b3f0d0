/* test_fail_catchup.c -- the catching up of the all-reduce protocols
 * (alg_coll_catch.c: allreduce, local-sgd, eager) when the model sent to a
 * returning worker is lost: the member that served it fails while the
 * model is on the wire, and the re-formation that follows its declaration
 * must serve the worker again, from the first live member at the most
 * advanced round.  Full runs of the dtsim binary; the model messages to
 * worker 3 (trace.csv) and every node's steps (nodes.csv) are pinned.
 * Without the second serving the run stalls (mutant catch-keep-wait).
 *
 * Eight workers on a ring, steps of exactly 1/8 s, links of 0.01 s and
 * 1e9 B/s, the timing-only model's 1000-byte messages, detect_s 0.5.
 * Worker 3 is down from 2.994 to 4.99 s (declared failed at 3.494, back
 * at 4.99): it waits for the model of the round after the live members'
 * current one.  The first of them to enter that round sends it; that
 * member goes down for good 0.006 s later, before the model arrives (0.01
 * s of latency), so the model is lost with it; it is declared at its
 * failure + 0.5 s, the collective re-forms among the live members, and the
 * first of them at the most advanced round (the one worker 3 waits for)
 * sends the model again: it arrives 0.01 s later, after what that
 * member's uplink still held of the ring (143 ns).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct expect {
    const char *alg;        /* the algorithm object's keys */
    int    server, fail_at_ms10;   /* the member that serves first; its failure, 1e-4 s */
    double lost_at;         /* its model send, lost */
    int    again;           /* the member that serves again */
    double again_at;        /* its send; delivered 0.01 s later */
    int    steps[8];        /* nodes.csv */
} expect;

static void run_case(const expect *e)
{
    char dir[] = "/tmp/dtsim-test-catchup-XXXXXX", path[600], cmd[2048];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s.json", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
        "{\"seed\": 5, \"nodes\": 8, \"compute\": {\"step_time_s\": 0.125},"
        " \"network\": {\"latency_s\": 0.01, \"bandwidth_Bps\": 1e9},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
        " \"faults\": {\"detect_s\": 0.5, \"events\": ["
        "   {\"kind\": \"schedule\", \"nodes\": [3], \"down_s\": 2.994, \"up_s\": 4.99},"
        "   {\"kind\": \"schedule\", \"nodes\": [%d], \"down_s\": %.4f}]},"
        " \"algorithm\": {%s},"
        " \"stop\": {\"time_s\": 9.98}, \"metrics\": {\"every_s\": 1},"
        " \"output\": {\"trace\": true}}",
        e->server, e->fail_at_ms10 / 1e4, e->alg);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s run %s -o %s/out --quiet 2>%s/err", DTSIM_BINARY, path, dir,
             dir);
    int st = system(cmd);
    snprintf(path, sizeof path, "%s/err", dir);
    char err[4096] = "";
    f = fopen(path, "r");
    if (f) {
        size_t n = fread(err, 1, sizeof err - 1, f);
        err[n] = '\0';
        fclose(f);
    }
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %d: %s", e->alg, st, err);

    /* the model messages to worker 3 after its return: not from its ring
     * predecessor (2), not empty (eager's activations) */
    snprintf(path, sizeof path, "%s/out/trace.csv", dir);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[256], kind[16];
    int node, peer, n_send = 0, n_recv = 0;
    double t0, t1, bytes, send_at[4] = { 0 }, recv_at[4] = { 0 };
    int send_from[4] = { 0 }, recv_from[4] = { 0 };
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%d,%15[a-z],%lf,%lf,%d,%lf", &node, kind, &t0, &t1, &peer, &bytes) != 6
            || t0 < 4.99 || bytes == 0 || peer == 2 || node == 2)
            continue;
        if (!strcmp(kind, "send") && peer == 3 && n_send < 4) {
            send_from[n_send] = node;
            send_at[n_send++] = t0;
        } else if (!strcmp(kind, "recv") && node == 3 && n_recv < 4) {
            recv_from[n_recv] = peer;
            recv_at[n_recv++] = t0;
        }
    }
    fclose(f);
    ck_assert_msg(n_send == 2, "%s: %d model sends to worker 3", e->alg, n_send);
    ck_assert_int_eq(send_from[0], e->server);
    ck_assert_double_eq_tol(send_at[0], e->lost_at, 1e-9);
    ck_assert_int_eq(send_from[1], e->again);
    ck_assert_double_eq_tol(send_at[1], e->again_at, 1e-9);
    ck_assert_double_eq_tol(send_at[1], e->fail_at_ms10 / 1e4 + 0.5 + 143e-9, 1e-9);
    ck_assert_msg(n_recv == 1, "%s: worker 3 received %d models", e->alg, n_recv);
    ck_assert_int_eq(recv_from[0], e->again);
    ck_assert_double_eq_tol(recv_at[0], e->again_at + 0.01, 1e-9);

    snprintf(path, sizeof path, "%s/out/nodes.csv", dir);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));   /* node,slowdown,steps,... */
    ck_assert_msg(strncmp(line, "node,slowdown,steps,", 20) == 0, "%s", line);
    for (int i = 0; i < 8; i++) {
        int id, steps;
        double slow;
        ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
        ck_assert_int_eq(sscanf(line, "%d,%lf,%d", &id, &slow, &steps), 3);
        ck_assert_int_eq(id, i);
        ck_assert_msg(steps == e->steps[i], "%s: node %d stepped %d times, expected %d", e->alg,
                      i, steps, e->steps[i]);
    }
    fclose(f);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* The served member and the one serving again are node 0 and node 1 (the
 * first live member at the round), 5.09 + 0.5 + 143 ns = 5.590000143 s. */
START_TEST(test_allreduce_serves_again)
{
    const expect e = { "\"name\": \"allreduce\"", 0, 50900, 5.084012, 1, 5.590000143,
                       { 18, 36, 36, 29, 36, 36, 36, 36 } };
    run_case(&e);
}
END_TEST

/* Local SGD of 2 steps: node 5 is the first to enter the round (its
 * sends are staggered by the ring); node 0 serves again. */
START_TEST(test_localsgd_serves_again)
{
    const expect e = { "\"name\": \"local-sgd\", \"local_steps\": 2", 5, 51000, 5.094008571, 0,
                       5.600000143, { 48, 48, 48, 40, 48, 24, 48, 48 } };
    run_case(&e);
}
END_TEST

START_TEST(test_eager_serves_again)
{
    const expect e = { "\"name\": \"eager\"", 0, 50900, 5.084012, 1, 5.590000143,
                       { 18, 53, 36, 46, 36, 36, 36, 36 } };
    run_case(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fail_catchup");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_allreduce_serves_again);
    tcase_add_test(tc, test_localsgd_serves_again);
    tcase_add_test(tc, test_eager_serves_again);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
