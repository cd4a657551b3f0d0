/* test_fail_ps.c -- the parameter-server protocols keep training when a
 * worker fails (issue 13, section 3): with worker 3 of 8 down for good from
 * 30% of the run, and down from 30% to 50%, every protocol ends at its stop
 * time with status ok and the live workers step at least half as fast after
 * the failure as before; where the protocol allows a closed form (fixed
 * step times, free communication) the live and rejoined workers' step
 * counts are pinned exactly.  Steps are counted by wrapping the protocol's
 * table (on_step_done, timed by alg_now).  Timing-only model throughout.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alg_host.h"
#include "test_util.h"

enum { N = 8, DEAD = 3 };

/* tau = 1/8 s exactly; the failure falls inside the 24th step, the return
 * inside a step too, and the stop between two steps. */
#define TAU     0.125
#define T_FAIL  2.994
#define T_BACK  4.99
#define T_STOP  9.98

static alg_type wrapped;
static const alg_type *inner;
static int before[N], after[N];

static void count_step(alg_ctx *ctx, void *state, int node, const double *grad)
{
    if (node < N) {
        if (alg_now(ctx) < T_FAIL)
            before[node]++;
        else
            after[node]++;
    }
    inner->on_step_done(ctx, state, node, grad);
}

typedef struct rates {
    double before, after;   /* steps per simulated second per live worker */
} rates;

/* Runs `alg` (its name, then more keys) on 8 equal workers with worker 3
 * down from T_FAIL (for good when transient is 0, until T_BACK when 1);
 * detect is faults.detect_s (0: the default, twice the worst round). */
static rates run_failure(const char *name, const char *alg, int transient, double detect,
                         run_result *res)
{
    char json[2048], up[64] = "", det[64] = "";
    if (transient)
        snprintf(up, sizeof up, ", \"up_s\": %g", T_BACK);
    if (detect > 0)
        snprintf(det, sizeof det, "\"detect_s\": %g, ", detect);
    snprintf(json, sizeof json,
        "{\"seed\": 5, \"nodes\": %d, \"compute\": {\"step_time_s\": %g},"
        " \"network\": {\"latency_s\": 0, \"bandwidth_Bps\": 1e15},"
        " \"model\": {\"kind\": \"none\", \"message_bytes\": 1000},"
        " \"faults\": {%s\"events\": [{\"kind\": \"schedule\", \"nodes\": [%d],"
        "   \"down_s\": %g%s}]},"
        " \"algorithm\": {\"name\": \"%s},"
        " \"stop\": {\"time_s\": %g}, \"metrics\": {\"every_s\": 1}}",
        N, TAU, det, DEAD, T_FAIL, up, alg, T_STOP);
    inner = alg_find(name);
    ck_assert_ptr_nonnull(inner);
    wrapped = *inner;
    wrapped.on_step_done = count_step;
    memset(before, 0, sizeof before);
    memset(after, 0, sizeof after);
    run_options opt = { .algorithm = &wrapped };
    run_json(json, &opt, res);
    ck_assert_msg(res->status == RUN_OK, "%s: %s", alg, res->message);
    ck_assert_str_eq(res->stop_reason, "time");
    rates r = { 0, 0 };
    for (int i = 0; i < N; i++)
        if (i != DEAD) {
            r.before += before[i];
            r.after += after[i];
        }
    r.before /= (N - 1) * T_FAIL;
    r.after /= (N - 1) * (T_STOP - T_FAIL);
    return r;
}

/* Every live worker finished `live_after` steps after the failure (and 23
 * before it); the failed one `dead_after`. */
static void expect_steps(const char *alg, int live_after, int dead_after)
{
    for (int i = 0; i < N; i++) {
        ck_assert_msg(before[i] == 23, "%s: node %d stepped %d times before the failure", alg, i,
                      before[i]);
        int want = i == DEAD ? dead_after : live_after;
        ck_assert_msg(after[i] == want, "%s: node %d stepped %d times after the failure, "
                      "expected %d", alg, i, after[i], want);
    }
}

/* ps-sync, detect_s 0.5, down for good: the 24th iteration's live workers
 * finish at 3.0 and wait; the failure is declared at 2.994 + 0.5 = 3.494,
 * the iteration closes without worker 3, and iterations of tau follow:
 * 1 + floor((9.98 - 3.494) / tau) = 1 + 51 steps per live worker. */
START_TEST(test_ps_sync_closed_form_permanent)
{
    run_result res;
    run_failure("ps-sync", "ps-sync\"", 0, 0.5, &res);
    expect_steps("ps-sync", 52, 0);
}
END_TEST

/* ps-sync, back at 4.99: worker 3 is a member again at once and gets the
 * current model; the iteration in progress (from 3.494 + 11 tau = 4.869,
 * the live workers done at 4.994) waits for its fresh step, 4.99 -> 5.115;
 * then everyone steps from 5.115: live 1 + 12 + floor((9.98 - 5.115) /
 * tau) = 1 + 12 + 38 = 51 steps after the failure, worker 3 1 + 38. */
START_TEST(test_ps_sync_closed_form_transient)
{
    run_result res;
    run_failure("ps-sync", "ps-sync\"", 1, 0.5, &res);
    expect_steps("ps-sync", 51, 39);
}
END_TEST

/* Protocols whose live workers never wait for worker 3 (asynchronous ones,
 * ssp within its bound, backup with b = 1 whose quota stays n - b = 7):
 * each live worker steps every tau to the end, steps 24 .. 79, 56 after
 * the failure.  Back at 4.99 the rejoined worker starts afresh on the
 * current model at once: 4.99 + k tau <= 9.98, 39 steps, and its first
 * gradient is as stale as any other (n - 1 = 7 updates), where one on the
 * model it held before failing would be about a hundred updates old. */
static void expect_undisturbed(const char *name, const char *alg, int dead_after)
{
    run_result res;
    run_failure(name, alg, 0, 0, &res);
    expect_steps(alg, 56, 0);
    run_failure(name, alg, 1, 0, &res);
    expect_steps(alg, 56, dead_after);
    ck_assert_double_le(stat_of(&res, "staleness_max"), N - 1);
    ck_assert_double_eq(stat_of(&res, "gradients_discarded"), 0);
}

START_TEST(test_async_never_wait)
{
    expect_undisturbed("ps-async", "ps-async\"", 39);
    expect_undisturbed("delay-adaptive", "delay-adaptive\"", 39);
    expect_undisturbed("ringmaster", "ringmaster\"", 39);
    expect_undisturbed("ssp", "ssp\"", 39);
}
END_TEST

/* ssp with staleness 0: bulk synchronous, so the live workers wait for
 * worker 3 until it is declared (2.994 + 0.5), then go on without it: as
 * ps-sync, 52 steps after the failure. */
START_TEST(test_ssp_bsp_waits_for_the_declaration)
{
    run_result res;
    run_failure("ssp", "ssp\", \"staleness\": 0", 0, 0.5, &res);
    expect_steps("ssp", 52, 0);
    ck_assert_double_eq(stat_of(&res, "clock_gap_max"), 1);
}
END_TEST

/* backup 1: a dead worker uses up the backup, nothing waits.  backup 0 is
 * ps-sync: the quota falls to the 7 live workers at the declaration. */
START_TEST(test_backup_counts_over_live_workers)
{
    run_result res;
    run_failure("backup", "backup\", \"cancel_late\": \"on\"", 0, 0, &res);
    expect_steps("backup", 56, 0);
    run_failure("backup", "backup\", \"backup\": 0", 0, 0.5, &res);
    expect_steps("backup", 52, 0);
}
END_TEST

/* rennala with S = 8: the 7 live workers fill the batch, two gradients
 * each every other iteration, and never stop computing: 56 steps. */
START_TEST(test_rennala_batch_from_live_workers)
{
    run_result res;
    run_failure("rennala", "rennala\"", 0, 0, &res);
    expect_steps("rennala", 56, 0);
    ck_assert_double_eq(stat_of(&res, "staleness_max"), 0);
}
END_TEST

/* fedavg, fraction 1 (every client every round, one local step each with
 * the timing-only model): round 24 waits for worker 3 until it is declared
 * at 2.994 + 0.5, then rounds of the 7 live clients: 1 + 51 steps.  Back at
 * 4.99, worker 3 is drawn by the next round (from 3.494 + 12 tau = 4.994),
 * abandons its stale step and steps with the others: the live workers
 * still 52, worker 3 floor((9.98 - 4.994) / tau) = 39. */
START_TEST(test_fedavg_round_without_dropout)
{
    run_result res;
    run_failure("fedavg", "fedavg\", \"fraction\": 1", 0, 0.5, &res);
    expect_steps("fedavg", 52, 0);
    run_failure("fedavg", "fedavg\", \"fraction\": 1", 1, 0.5, &res);
    expect_steps("fedavg", 52, 39);
    ck_assert_double_eq(stat_of(&res, "rounds_abandoned"), 0);
}
END_TEST

/* fednova, time budget 1 s = 8 steps of tau: rounds start at 0, 1, 2 (23
 * steps before the failure, the 24th ends at 3.0); round 2 waits for
 * worker 3 until it is declared at 3.494, then rounds of the 7 live
 * clients start at 3.494 + k: 1 + 6 x 8 + 3 steps after the failure (the
 * round of 9.494 has 3 steps done by 9.98, so 9 rounds closed).  Back at 4.99, worker 3 ends
 * its interrupted step (restarted: 4.99 -> 5.115), reports it for the
 * closed round 2 (discarded), and is asked again from the round of 5.494:
 * 1 + 4 x 8 + 3 steps; the live clients keep 52. */
START_TEST(test_fednova_round_without_dropout)
{
    run_result res;
    run_failure("fednova", "fednova\"", 0, 0.5, &res);
    expect_steps("fednova", 52, 0);
    ck_assert_double_eq(stat_of(&res, "rounds"), 9);
    ck_assert_double_eq(stat_of(&res, "gradients_applied"), 2 * 8 + 7 + 6 * 7);
    ck_assert_double_eq(stat_of(&res, "local_steps_min"), 8);
    run_failure("fednova", "fednova\"", 1, 0.5, &res);
    expect_steps("fednova", 52, 36);
    ck_assert_double_eq(stat_of(&res, "gradients_discarded"), 1);
    ck_assert_double_eq(stat_of(&res, "gradients_applied"), 2 * 8 + 7 + 2 * 7 + 4 * 8);
    ck_assert_double_eq(stat_of(&res, "rounds_abandoned"), 0);
}
END_TEST

/* fedavg with Bonawitz et al.'s over-selection: 6 drawn for 4 reports, so
 * a drawn client that drops out costs nothing: one round per tau, 79 by the
 * stop, each on 4 reports. */
START_TEST(test_fedavg_over_selection)
{
    run_result res;
    run_failure("fedavg", "fedavg\", \"fraction\": 0.5, \"over_selection\": 1.5", 0, 0, &res);
    ck_assert_double_eq(stat_of(&res, "rounds"), 79);
    ck_assert_double_eq(stat_of(&res, "gradients_applied"), 4 * 79);
}
END_TEST

/* fedavg, fraction 1, deadline 0.2 s, detect_s 0.5: rounds 24 to 26 close
 * at their deadline on the 7 live reports (3.075, 3.275, 3.475), round 27
 * as soon as its 7 live clients reported once worker 3 is declared (3.6),
 * then rounds of tau: live steps after the failure 4 + floor((9.98 - 3.6) /
 * tau) = 4 + 51; 23 rounds of 8 reports, 55 of 7. */
START_TEST(test_fedavg_deadline)
{
    run_result res;
    run_failure("fedavg", "fedavg\", \"fraction\": 1, \"deadline_s\": 0.2", 0, 0.5, &res);
    expect_steps("fedavg", 55, 0);
    ck_assert_double_eq(stat_of(&res, "rounds"), 78);
    ck_assert_double_eq(stat_of(&res, "gradients_applied"), 23 * 8 + 55 * 7);
    ck_assert_double_eq(stat_of(&res, "rounds_abandoned"), 0);
}
END_TEST

/* The "Done when" of issue 13 for every protocol of this family, with the
 * default detector delay: ok at the stop time and the live workers' rate
 * after the failure at least half of theirs before it. */
static const char *const table[][2] = {
    { "ps-sync", "ps-sync\"" },
    { "ps-async", "ps-async\"" },
    { "ssp", "ssp\"" },
    { "ssp", "ssp\", \"staleness\": 0" },
    { "backup", "backup\"" },
    { "backup", "backup\", \"backup\": 0, \"cancel_late\": \"on\"" },
    { "ringmaster", "ringmaster\", \"stops\": \"on\", \"max_delay\": 2" },
    { "rennala", "rennala\", \"gradients\": 12" },
    { "rennala", "rennala\", \"restart\": \"off\"" },
    { "fedavg", "fedavg\", \"fraction\": 0.5" },
    { "fedavg", "fedavg\", \"fraction\": 0.5, \"over_selection\": 1.5, \"deadline_s\": 0.3" },
    { "delay-adaptive", "delay-adaptive\", \"threshold\": 2" },
    { "easgd", "easgd\"" },
    { "fednova", "fednova\"" },
    { "fednova", "fednova\", \"local_steps\": \"adaptive\", \"tau\": 4" },
    { "easgd", "easgd\", \"period\": 1" },
    { "lsgd", "lsgd\", \"groups\": 2" },
    { "lsgd", "lsgd\", \"groups\": 3, \"period\": 1, \"global_rounds\": 2" },
};

START_TEST(test_rate_after_failure)
{
    for (int transient = 0; transient <= 1; transient++) {
        run_result res;
        rates r = run_failure(table[_i][0], table[_i][1], transient, 0, &res);
        ck_assert_msg(r.after >= 0.5 * r.before, "%s (%s): %.3f steps/s per live worker after "
                      "the failure, %.3f before", table[_i][1], transient ? "transient" : "permanent",
                      r.after, r.before);
        if (transient)
            ck_assert_msg(after[DEAD] > 0, "%s: the returned worker never stepped", table[_i][1]);
        else
            ck_assert_int_eq(after[DEAD], 0);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fail_ps");
    TCase *tc = tcase_create("fail_ps");
    tcase_add_test(tc, test_ps_sync_closed_form_permanent);
    tcase_add_test(tc, test_ps_sync_closed_form_transient);
    tcase_add_test(tc, test_async_never_wait);
    tcase_add_test(tc, test_ssp_bsp_waits_for_the_declaration);
    tcase_add_test(tc, test_backup_counts_over_live_workers);
    tcase_add_test(tc, test_rennala_batch_from_live_workers);
    tcase_add_test(tc, test_fedavg_round_without_dropout);
    tcase_add_test(tc, test_fedavg_over_selection);
    tcase_add_test(tc, test_fednova_round_without_dropout);
    tcase_add_test(tc, test_fedavg_deadline);
    tcase_add_loop_test(tc, test_rate_after_failure, 0, (int)(sizeof table / sizeof table[0]));
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
