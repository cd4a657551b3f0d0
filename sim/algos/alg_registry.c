/* alg_registry.c -- the table of known protocols and the checking of
 * their parameter tables against the scenario's values.  Adding a
 * protocol means adding its file and one line here.  The calls protocols
 * make are alg_host.c's.
 */
#include "alg_host.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const alg_type *const all[] = {
    &alg_adpsgd, &alg_allreduce, &alg_backup, &alg_comdml,
    &alg_ps_adaptive,   /* "delay-adaptive" */
    &alg_divshare, &alg_dpsgd, &alg_eager, &alg_easgd, &alg_epidemic, &alg_fedavg, &alg_fednova,
    &alg_gossip, &alg_hogwild, &alg_hop, &alg_localsgd, &alg_lsgd, &alg_pipeline, &alg_prague, &alg_ps_async, &alg_ps_sync, &alg_rennala,
    &alg_ringmaster,
    &alg_sdfeel, &alg_sdfeel_async, &alg_sgp, &alg_ssp, &alg_symsgd,
};

const alg_type *alg_find(const char *name)
{
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

size_t alg_count(void)
{
    return sizeof all / sizeof all[0];
}

const alg_type *alg_at(size_t i)
{
    return i < alg_count() ? all[i] : NULL;
}

const char *alg_names(void)
{
    static char names[512];
    if (!names[0]) {
        size_t len = 0;
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
                                    all[i]->name);
    }
    return names;
}

void alg_params_defaults(const alg_type *t, alg_ctx *ctx)
{
    for (int i = 0; t->params && t->params[i].key; i++) {
        ctx->param[i] = t->params[i].def;
        ctx->path[i] = NULL;
    }
}

static void join_choices(const char *const *c, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; c[i] && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", c[i]);
}

int alg_params_index(const alg_type *t, const char *key)
{
    for (int i = 0; t->params && t->params[i].key; i++)
        if (strcmp(t->params[i].key, key) == 0)
            return i;
    return -1;
}

int alg_params_set(const alg_type *t, alg_ctx *ctx, const char *key, int is_string,
                   double num, const char *str, char *err, size_t size)
{
    const alg_param_spec *sp = NULL;
    int i;
    for (i = 0; t->params && t->params[i].key; i++)
        if (strcmp(t->params[i].key, key) == 0) {
            sp = &t->params[i];
            break;
        }
    if (!sp)
        return 1;
    if (sp->kind == ALG_PARAM_PATH) {   /* the caller resolves and keeps the text */
        if (!is_string || !str[0]) {
            snprintf(err, size, "must be a file name, got %s", is_string ? "\"\"" : "a number");
            return -1;
        }
        return 0;
    }
    if (sp->kind == ALG_PARAM_CHOICE) {
        char list[256];
        join_choices(sp->choices, list, sizeof list);
        if (is_string)
            for (int k = 0; sp->choices[k]; k++)
                if (strcmp(sp->choices[k], str) == 0) {
                    ctx->param[i] = k;
                    return 0;
                }
        if (is_string)
            snprintf(err, size, "unknown value \"%s\" (expected one of: %s)", str, list);
        else
            snprintf(err, size, "must be one of: %s; got a number", list);
        return -1;
    }
    if (is_string) {
        snprintf(err, size, "must be a number, got string");
        return -1;
    }
    if (sp->kind == ALG_PARAM_INT && num != floor(num)) {
        snprintf(err, size, "must be an integer, got %g", num);
        return -1;
    }
    if (!(num >= sp->min && num <= sp->max)) {
        if (isinf(sp->max))
            snprintf(err, size, "must be >= %g, got %g", sp->min, num);
        else
            snprintf(err, size, "must be in [%g, %g], got %g", sp->min, sp->max, num);
        return -1;
    }
    ctx->param[i] = num;
    return 0;
}

void alg_params_keys(const alg_type *t, char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "name, lr, batch");
    for (int i = 0; t->params && t->params[i].key && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, ", %s", t->params[i].key);
}
