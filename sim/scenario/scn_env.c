/* scn_env.c -- the time-varying environment of a scenario: slowdown
 * processes (compute.slowdowns: window, markov, periodic, trace) and faults
 * (faults: policies and events: schedule, exponential, trace), into the
 * structs of scn.h with the cluster's kinds.  It reads trace files through
 * scn_trace.c and node selections through scn_select.c; it simulates
 * nothing.
 */
#include "scn_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The start every kinded entry shares: an object with only known keys and
 * a required "kind" among kinds.  Returns the kind's index, or -1 with the
 * error reported; *kind is the name as written. */
static int kind_prologue(scn_ctx *c, json_t *o, const char *ptr, const char *const *keys,
                         const char *what, const char *const *kinds, const char **kind)
{
    char kp[PTR_MAX];

    if (!json_is_object(o))
        return scn_i_fail(c, ptr, "must be an object, got %s", scn_i_type_name(o));
    if (scn_i_check_keys(c, o, ptr, keys) || scn_i_need_key(c, o, ptr, "kind", NULL) ||
        scn_i_opt_str(c, o, ptr, "kind", kind, NULL))
        return -1;
    scn_i_ptr_key(kp, ptr, "kind");
    return scn_i_lookup(c, kp, what, *kind, kinds);
}

/* A "trace" entry: its required file, read now (up_down: availability
 * states instead of slowdown factors). */
static int trace_entry(scn_ctx *c, json_t *o, const char *ptr, const char *why, int up_down,
                       int n_nodes, char **file_out, scn_point **points, size_t *n_points)
{
    char kp[PTR_MAX];
    const char *file = NULL;

    if (scn_i_need_key(c, o, ptr, "file", why) || scn_i_opt_str(c, o, ptr, "file", &file, NULL) ||
        scn_i_set_str(c, file_out, file))
        return -1;
    scn_i_ptr_key(kp, ptr, "file");
    return scn_i_read_trace(c, kp, file, up_down, n_nodes, points, n_points);
}

/* A required start and an optional end after it (INFINITY when absent). */
static int interval(scn_ctx *c, json_t *o, const char *ptr, const char *why, const char *lo_key,
                    const char *hi_key, double *lo, double *hi)
{
    char kp[PTR_MAX];

    if (scn_i_need_key(c, o, ptr, lo_key, why) ||
        scn_i_opt_num(c, o, ptr, lo_key, GE0, lo, NULL) ||
        scn_i_opt_num(c, o, ptr, hi_key, GT0, hi, NULL))
        return -1;
    if (*hi <= *lo) {
        scn_i_ptr_key(kp, ptr, hi_key);
        return scn_i_fail(c, kp, "must be > %s (%g), got %g", lo_key, *lo, *hi);
    }
    return 0;
}

static int v_slowdown(scn_ctx *c, json_t *o, const char *ptr, scn_scenario *s, scn_slowdown *out)
{
    static const char *const keys[] = {"kind", "nodes", "fraction", "factor", "start_s",
                                       "end_s", "mean_slow_s", "mean_normal_s", "period_s",
                                       "duration_s", "phase_s", "file", NULL};
    const char *const *kinds = scn_i_slow_kind_names;
    static const char *const per_kind[][8] = {
        {"kind", "nodes", "fraction", "factor", "start_s", "end_s", NULL},
        {"kind", "nodes", "fraction", "factor", "mean_slow_s", "mean_normal_s", NULL},
        {"kind", "nodes", "fraction", "factor", "period_s", "duration_s", "phase_s", NULL},
        {"kind", "file", NULL},
    };
    char kp[PTR_MAX], why[64];
    const char *kind = NULL;
    int k;

    if ((k = kind_prologue(c, o, ptr, keys, "slowdown kind", kinds, &kind)) < 0 ||
        scn_i_kind_keys(c, o, ptr, per_kind[k], "kind", kind))
        return -1;
    out->kind = (cl_slow_kind)k;
    out->end_s = INFINITY;
    snprintf(why, sizeof why, "for kind \"%s\"", kind);
    if (out->kind == CL_SLOW_TRACE)
        return trace_entry(c, o, ptr, why, 0, s->n_nodes, &out->file, &out->points,
                           &out->n_points);
    if (scn_i_v_select(c, o, ptr, s, 1, &out->nodes, &out->n_nodes, &out->fraction) ||
        scn_i_need_key(c, o, ptr, "factor", why) ||
        scn_i_opt_num(c, o, ptr, "factor", GT0, &out->factor, NULL))
        return -1;
    switch (out->kind) {
    case CL_SLOW_WINDOW:
        if (interval(c, o, ptr, why, "start_s", "end_s", &out->start_s, &out->end_s))
            return -1;
        break;
    case CL_SLOW_MARKOV:
        if (scn_i_need_key(c, o, ptr, "mean_slow_s", why) ||
            scn_i_need_key(c, o, ptr, "mean_normal_s", why) ||
            scn_i_opt_num(c, o, ptr, "mean_slow_s", GT0, &out->mean_slow_s, NULL) ||
            scn_i_opt_num(c, o, ptr, "mean_normal_s", GT0, &out->mean_normal_s, NULL))
            return -1;
        break;
    case CL_SLOW_PERIODIC:
        if (scn_i_need_key(c, o, ptr, "period_s", why) ||
            scn_i_need_key(c, o, ptr, "duration_s", why) ||
            scn_i_opt_num(c, o, ptr, "period_s", GT0, &out->period_s, NULL) ||
            scn_i_opt_num(c, o, ptr, "duration_s", GT0, &out->duration_s, NULL) ||
            scn_i_opt_num(c, o, ptr, "phase_s", GE0, &out->phase_s, NULL))
            return -1;
        if (out->duration_s >= out->period_s) {
            scn_i_ptr_key(kp, ptr, "duration_s");
            return scn_i_fail(c, kp, "must be < period_s (%g), got %g", out->period_s,
                              out->duration_s);
        }
        if (out->phase_s >= out->period_s) {
            scn_i_ptr_key(kp, ptr, "phase_s");
            return scn_i_fail(c, kp, "must be < period_s (%g), got %g", out->period_s,
                              out->phase_s);
        }
        break;
    default:
        break;
    }
    return 0;
}

int scn_i_v_slowdowns(scn_ctx *c, json_t *compute, const char *cptr, scn_scenario *s)
{
    json_t *arr = compute ? json_object_get(compute, "slowdowns") : NULL;
    char p[PTR_MAX], ep[PTR_MAX];
    size_t n;

    if (!arr)
        return 0;
    scn_i_ptr_key(p, cptr, "slowdowns");
    if (!json_is_array(arr))
        return scn_i_fail(c, p, "must be an array, got %s", scn_i_type_name(arr));
    if ((n = json_array_size(arr)) == 0)
        return 0;
    if (!(s->slowdowns = calloc(n, sizeof *s->slowdowns)))
        return scn_i_fail_oom(c);
    for (size_t i = 0; i < n; i++) {
        scn_i_ptr_idx(ep, p, i);
        s->n_slowdowns = i + 1;
        if (v_slowdown(c, json_array_get(arr, i), ep, s, &s->slowdowns[i]))
            return -1;
    }
    return 0;
}

/* ---- faults --------------------------------------------------------------- */

static int v_fault(scn_ctx *c, json_t *o, const char *ptr, scn_scenario *s, scn_fault *out)
{
    static const char *const keys[] = {"kind", "nodes", "fraction", "down_s", "up_s",
                                       "mtbf_s", "mttr_s", "file", NULL};
    const char *const *kinds = scn_i_fault_kind_names;
    static const char *const per_kind[][6] = {
        {"kind", "nodes", "fraction", "down_s", "up_s", NULL},
        {"kind", "nodes", "fraction", "mtbf_s", "mttr_s", NULL},
        {"kind", "file", NULL},
    };
    char why[64];
    const char *kind = NULL;
    int k;

    if ((k = kind_prologue(c, o, ptr, keys, "fault kind", kinds, &kind)) < 0 ||
        scn_i_kind_keys(c, o, ptr, per_kind[k], "kind", kind))
        return -1;
    out->kind = (cl_fault_kind)k;
    out->up_s = INFINITY;
    snprintf(why, sizeof why, "for kind \"%s\"", kind);
    if (out->kind == CL_FAULT_TRACE)
        return trace_entry(c, o, ptr, why, 1, s->n_nodes, &out->file, &out->points,
                           &out->n_points);
    if (scn_i_v_select(c, o, ptr, s, 1, &out->nodes, &out->n_nodes, &out->fraction))
        return -1;
    if (out->kind == CL_FAULT_SCHEDULE) {
        if (interval(c, o, ptr, why, "down_s", "up_s", &out->down_s, &out->up_s))
            return -1;
    } else {
        if (scn_i_need_key(c, o, ptr, "mtbf_s", why) || scn_i_need_key(c, o, ptr, "mttr_s", why) ||
            scn_i_opt_num(c, o, ptr, "mtbf_s", GT0, &out->mtbf_s, NULL) ||
            scn_i_opt_num(c, o, ptr, "mttr_s", GT0, &out->mttr_s, NULL))
            return -1;
    }
    return 0;
}

int scn_i_v_faults(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"step", "messages", "rejoin", "detect_s", "events", NULL};
    const char *step = "restart", *messages = "drop", *rejoin = "keep";
    char p[PTR_MAX], kp[PTR_MAX], ep[PTR_MAX];
    json_t *o, *arr;
    int a, b, d;

    if (scn_i_opt_obj(c, root, "", "faults", &o, p) || scn_i_check_keys(c, o, p, keys) ||
        scn_i_opt_str(c, o, p, "step", &step, NULL) ||
        scn_i_opt_str(c, o, p, "messages", &messages, NULL) ||
        scn_i_opt_str(c, o, p, "rejoin", &rejoin, NULL) ||
        scn_i_opt_num(c, o, p, "detect_s", GT0, &s->fault_detect_s, NULL))
        return -1;
    scn_i_ptr_key(kp, p, "step");
    if ((a = scn_i_lookup(c, kp, "step policy", step, scn_i_step_policy_names)) < 0)
        return -1;
    scn_i_ptr_key(kp, p, "messages");
    if ((b = scn_i_lookup(c, kp, "message policy", messages, scn_i_msg_policy_names)) < 0)
        return -1;
    scn_i_ptr_key(kp, p, "rejoin");
    if ((d = scn_i_lookup(c, kp, "rejoin policy", rejoin, scn_i_rejoin_names)) < 0)
        return -1;
    s->fault_step = (cl_step_policy)a;
    s->fault_messages = (cl_msg_policy)b;
    s->fault_rejoin = (scn_rejoin)d;
    arr = o ? json_object_get(o, "events") : NULL;
    if (!arr)
        return 0;
    scn_i_ptr_key(kp, p, "events");
    if (!json_is_array(arr))
        return scn_i_fail(c, kp, "must be an array, got %s", scn_i_type_name(arr));
    size_t n = json_array_size(arr);
    if (n == 0)
        return 0;
    if (!(s->faults = calloc(n, sizeof *s->faults)))
        return scn_i_fail_oom(c);
    for (size_t i = 0; i < n; i++) {
        scn_i_ptr_idx(ep, kp, i);
        s->n_faults = i + 1;
        if (v_fault(c, json_array_get(arr, i), ep, s, &s->faults[i]))
            return -1;
    }
    return 0;
}
