/* scn_freeze.c -- the freeze section of a scenario (progressive freezing
 * of the MLP's front layers, or progressive training block by block with
 * mode "grow", docs/models.md): its mode, a schedule or the
 * criterion's keys, their checks and their resolved form.  Whether the model has that many layers to freeze
 * and whether the protocol can freeze are the runner's checks
 * (run_memory.c), since only it knows both; this file builds nothing.
 */
#include "scn_internal.h"

#include <stdlib.h>

#define FREEZE_MAX_COUNT 2147483647LL   /* a collective's round bound, 2^31 - 1 */

static const char *const criteria[] = { "relative_change", "effective_movement", NULL };
static const char *const modes[] = { "freeze", "grow", NULL };

/* The criterion's keys (threshold given). */
static int v_criterion(scn_ctx *c, json_t *o, const char *p, scn_scenario *s)
{
    long long w = 50, m = 0;
    const char *crit = NULL;
    char cp[PTR_MAX];
    if (scn_i_opt_str(c, o, p, "criterion", &crit, NULL))
        return -1;
    if (crit) {
        scn_i_ptr_key(cp, p, "criterion");
        const int k = scn_i_lookup(c, cp, "criterion", crit, criteria);
        if (k < 0)
            return -1;
        s->freeze_criterion = k;
    }
    if (scn_i_opt_num(c, o, p, "threshold", GT0, &s->freeze_threshold, NULL) ||
        scn_i_opt_int(c, o, p, "window", 1, FREEZE_MAX_COUNT, &w, NULL) ||
        scn_i_opt_int(c, o, p, "max_layers", 1, MDL_MAX_HIDDEN, &m, NULL))
        return -1;
    s->freeze_window = (uint64_t)w;
    s->freeze_max_layers = (size_t)m;
    s->has_freeze = 1;
    return 0;
}

int scn_i_v_freeze(scn_ctx *c, json_t *root, scn_scenario *s)
{
    static const char *const keys[] = {"after_steps", "threshold", "window", "max_layers",
                                       "criterion", "mode", NULL};
    char p[PTR_MAX], ap[PTR_MAX], ep[PTR_MAX];
    json_t *o, *a;
    const char *mode = NULL;

    if (scn_i_opt_obj(c, root, "", "freeze", &o, p) || scn_i_check_keys(c, o, p, keys))
        return -1;
    if (!o)
        return 0;
    if (scn_i_opt_str(c, o, p, "mode", &mode, NULL))
        return -1;
    if (mode) {
        scn_i_ptr_key(ep, p, "mode");
        const int k = scn_i_lookup(c, ep, "mode", mode, modes);
        if (k < 0)
            return -1;
        s->freeze_grow = k;
    }
    a = json_object_get(o, "after_steps");
    const int crit = json_object_get(o, "threshold") != NULL;
    if (a && crit)
        return scn_i_fail(c, p, "give \"after_steps\" (a schedule) or \"threshold\" (the "
                          "criterion), not both");
    if (!a && !crit) {
        const char *k = json_object_get(o, "window") ? "window"
                      : json_object_get(o, "max_layers") ? "max_layers"
                      : json_object_get(o, "criterion") ? "criterion" : NULL;
        if (k) {
            scn_i_ptr_key(ep, p, k);
            return scn_i_fail(c, ep, "is a key of the criterion: give \"threshold\" too");
        }
        return scn_i_fail(c, p, "give \"after_steps\" (a schedule) or \"threshold\" (the "
                          "criterion)");
    }
    if (crit)
        return v_criterion(c, o, p, s);
    if (json_object_get(o, "window") || json_object_get(o, "max_layers") ||
        json_object_get(o, "criterion")) {
        scn_i_ptr_key(ep, p, json_object_get(o, "window") ? "window"
                             : json_object_get(o, "max_layers") ? "max_layers" : "criterion");
        return scn_i_fail(c, ep, "is a key of the criterion, not of a schedule "
                          "(\"after_steps\")");
    }
    scn_i_ptr_key(ap, p, "after_steps");
    if (!json_is_array(a))
        return scn_i_fail(c, ap, "must be an array of step counts, got %s",
                          scn_i_type_name(a));
    const size_t n = json_array_size(a);
    if (n < 1 || n > MDL_MAX_HIDDEN)
        return scn_i_fail(c, ap, "must list 1 to %d step counts (one per frozen layer), "
                          "got %zu", MDL_MAX_HIDDEN, n);
    if (!(s->freeze_after = calloc(n, sizeof *s->freeze_after)))
        return scn_i_fail_oom(c);
    s->n_freeze = n;
    for (size_t k = 0; k < n; k++) {
        long long v;
        scn_i_ptr_idx(ep, ap, k);
        if (scn_i_int_value(c, ep, json_array_get(a, k), 0, FREEZE_MAX_COUNT, &v))
            return -1;
        if (k > 0 && (uint64_t)v <= s->freeze_after[k - 1])
            return scn_i_fail(c, ep, "must be > the previous count (%llu): layers freeze "
                              "front first, one at a time, got %lld",
                              (unsigned long long)s->freeze_after[k - 1], v);
        s->freeze_after[k] = (uint64_t)v;
    }
    s->has_freeze = 1;
    return 0;
}

void scn_i_resolved_freeze(json_t *root, const scn_scenario *s, int *oom)
{
    if (!s->has_freeze || *oom)
        return;
    json_t *o = scn_i_section(root, "freeze", oom), *a;
    if (!o)
        return;
    scn_i_add(o, "mode", json_string(modes[s->freeze_grow]), oom);
    if (s->freeze_threshold > 0) {
        scn_i_add(o, "criterion", json_string(criteria[s->freeze_criterion]), oom);
        scn_i_add(o, "threshold", json_real(s->freeze_threshold), oom);
        scn_i_add(o, "window", json_integer((json_int_t)s->freeze_window), oom);
        if (s->freeze_max_layers)
            scn_i_add(o, "max_layers", json_integer((json_int_t)s->freeze_max_layers), oom);
        return;
    }
    if (!(a = json_array())) {
        *oom = 1;
        return;
    }
    scn_i_add(o, "after_steps", a, oom);
    for (size_t k = 0; k < s->n_freeze && !*oom; k++)
        if (json_array_append_new(a, json_integer((json_int_t)s->freeze_after[k])) != 0)
            *oom = 1;
}
