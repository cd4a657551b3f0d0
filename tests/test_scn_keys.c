/* test_scn_keys.c -- the key table of `dtsim keys` (scn_keys.h) against the
 * loader itself, so the listing cannot drift: for every object of the
 * table, an unknown key planted there makes the loader list the keys it
 * accepts ("expected one of: ..."), and that list must be exactly the
 * table's children of the object; every object the loader checks keys of
 * is probed (a probe list that misses one fails the count); every default
 * the table gives as JSON is the resolved scenario's, and every key of the
 * resolved scenario is in the table.  Also: every name of `dtsim list` has
 * its line, every protocol its summary and every parameter its help.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alg_host.h"
#include "scn.h"
#include "scn_keys.h"

static const char *BASE = "{\"nodes\": 4, \"algorithm\": {\"name\": \"dpsgd\"}, "
                          "\"stop\": {\"time_s\": 1}}";

/* Each object of the table (as its dotted path, "" the root) and the
 * overrides that plant the unknown key "zz_probe" inside it, on a scenario
 * otherwise valid up to that object.  "algorithm" is the runner's (the
 * protocol's keys join name, lr and batch), checked below through
 * alg_params_keys. */
static const struct probe {
    const char *object;
    const char *sets[2];
} probes[] = {
    { "", { "zz_probe=1" } },
    { "compute", { "compute.zz_probe=1" } },
    { "compute.noise", { "compute.noise={\"zz_probe\": 1}" } },
    { "compute.groups[]", { "compute.groups=[{\"zz_probe\": 1}]" } },
    { "compute.groups[].noise",
      { "compute.groups=[{\"nodes\": [0], \"noise\": {\"zz_probe\": 1}}]" } },
    { "compute.slowdowns[]", { "compute.slowdowns=[{\"zz_probe\": 1}]" } },
    { "faults", { "faults.zz_probe=1" } },
    { "faults.events[]", { "faults.events=[{\"zz_probe\": 1}]" } },
    { "network", { "network.zz_probe=1" } },
    { "network.jitter", { "network.jitter={\"zz_probe\": 1}" } },
    { "network.outages[]", { "network.outages=[{\"zz_probe\": 1}]" } },
    { "network.nics[]", { "network.nics=[{\"zz_probe\": 1}]" } },
    { "network.links[]", { "network.links=[{\"zz_probe\": 1}]" } },
    { "network.links[].jitter", { "network.links=[{\"jitter\": {\"zz_probe\": 1}}]" } },
    { "network.links[].outages[]", { "network.links=[{\"outages\": [{\"zz_probe\": 1}]}]" } },
    { "network.retransmit", { "network.retransmit={\"zz_probe\": 1}" } },
    { "metrics.targets[]", { "metrics.targets=[{\"zz_probe\": 1}]" } },
    { "topology", { "topology.zz_probe=1" } },
    { "model", { "model.zz_probe=1" } },
    { "data", { "data.zz_probe=1" } },
    { "optimizer", { "optimizer.zz_probe=1" } },
    { "stop", { "stop.zz_probe=1" } },
    { "metrics", { "metrics.zz_probe=1" } },
    { "output", { "output.zz_probe=1" } },
    { "limits", { "limits.zz_probe=1" } },
    { "freeze", { "freeze.zz_probe=1" } },
};
#define N_PROBES (sizeof probes / sizeof probes[0])

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The table's direct children of object, sorted, comma-joined. */
static void table_children(const char *object, char *out, size_t size)
{
    size_t n, m = 0, len = 0;
    const scn_key *k = scn_keys(&n);
    const char *names[256];
    size_t ol = strlen(object);
    for (size_t i = 0; i < n; i++) {
        const char *p = k[i].path;
        if (ol && (strncmp(p, object, ol) != 0 || p[ol] != '.'))
            continue;
        const char *rest = ol ? p + ol + 1 : p;
        if (strpbrk(rest, ".["))
            continue;
        ck_assert_uint_lt(m, 256);
        names[m++] = rest;
    }
    qsort(names, m, sizeof names[0], cmp_str);
    out[0] = '\0';
    for (size_t i = 0; i < m; i++)
        len += (size_t)snprintf(out + len, size - len, "%s%s", i ? ", " : "", names[i]);
}

/* "a, b, c" sorted. */
static void sort_list(const char *list, char *out, size_t size)
{
    char buf[2048];
    char *names[256];
    size_t m = 0, len = 0;
    snprintf(buf, sizeof buf, "%s", list);
    for (char *t = strtok(buf, ", "); t; t = strtok(NULL, ", "))
        names[m++] = t;
    qsort(names, m, sizeof names[0], cmp_str);
    out[0] = '\0';
    for (size_t i = 0; i < m; i++)
        len += (size_t)snprintf(out + len, size - len, "%s%s", i ? ", " : "", names[i]);
}

START_TEST(every_object_lists_the_loaders_keys)
{
    const struct probe *pr = &probes[_i];
    size_t n_sets = pr->sets[1] ? 2 : 1;
    scn_scenario s;
    scn_error err;
    ck_assert_int_eq(scn_load_string(BASE, "t.json", pr->sets, n_sets, &s, &err), -1);
    const char *e = strstr(err.msg, "unknown key \"zz_probe\" (expected one of: ");
    ck_assert_msg(e != NULL, "%s: not an unknown-key error: %s", pr->object, err.msg);
    e += strlen("unknown key \"zz_probe\" (expected one of: ");
    char loader[2048], sorted[2048], table[2048];
    snprintf(loader, sizeof loader, "%.*s", (int)strcspn(e, ")"), e);
    sort_list(loader, sorted, sizeof sorted);
    table_children(pr->object, table, sizeof table);
    ck_assert_msg(strcmp(sorted, table) == 0, "%s: the loader takes {%s}, the table has {%s}",
                  pr->object, sorted, table);
}
END_TEST

/* Every object (or array of objects) of the table has its probe. */
START_TEST(every_object_of_the_table_is_probed)
{
    size_t n;
    const scn_key *k = scn_keys(&n);
    for (size_t i = 0; i < n; i++) {
        char obj[256];
        if (strcmp(k[i].type, "object") != 0 && strcmp(k[i].type, "array of objects") != 0 &&
            strcmp(k[i].type, "false or object") != 0)
            continue;
        snprintf(obj, sizeof obj, "%s%s", k[i].path,
                 strcmp(k[i].type, "array of objects") == 0 ? "[]" : "");
        int found = strcmp(obj, "algorithm") == 0;
        for (size_t j = 0; j < N_PROBES && !found; j++)
            found = strcmp(probes[j].object, obj) == 0;
        ck_assert_msg(found, "no probe for %s", obj);
    }
    /* and no probe names an object the table lacks */
    for (size_t j = 1; j < N_PROBES; j++) {
        char obj[256];
        snprintf(obj, sizeof obj, "%s", probes[j].object);
        size_t l = strlen(obj);
        if (l > 2 && strcmp(obj + l - 2, "[]") == 0)
            obj[l - 2] = '\0';
        int found = 0;
        for (size_t i = 0; i < n && !found; i++)
            found = strcmp(k[i].path, obj) == 0;
        ck_assert_msg(found, "probe %s: not in the table", probes[j].object);
    }
}
END_TEST

/* The runner's algorithm keys: name, lr and batch, then the protocol's. */
START_TEST(algorithm_keys_are_name_lr_batch)
{
    char buf[1024], table[1024];
    alg_params_keys(alg_find("ps-async"), buf, sizeof buf);   /* no parameters */
    char sorted[1024];
    sort_list(buf, sorted, sizeof sorted);
    table_children("algorithm", table, sizeof table);
    ck_assert_str_eq(sorted, table);
}
END_TEST

/* Walks the resolved scenario: every leaf is a key of the table, and a
 * default the table gives as one JSON value is the resolved one. */
static int checked;
static void walk(json_t *v, const char *path, const scn_key *k, size_t n)
{
    if (json_is_object(v)) {
        const char *key;
        json_t *x;
        json_object_foreach(v, key, x) {
            char p[512];
            snprintf(p, sizeof p, "%s%s%s", path, path[0] ? "." : "", key);
            walk(x, p, k, n);
        }
        return;
    }
    size_t i = 0;
    while (i < n && strcmp(k[i].path, path) != 0)
        i++;
    ck_assert_msg(i < n, "resolved key %s is not in the table", path);
    /* set by the base scenario, or derived from it */
    static const char *const set[] = { "nodes", "algorithm.name", "stop.time_s",
                                       "metrics.every_s", NULL };
    for (int s = 0; set[s]; s++)
        if (strcmp(set[s], path) == 0)
            return;
    json_t *def = json_loads(k[i].def, JSON_DECODE_ANY, NULL);
    if (!def)
        return;   /* a default in words ("16 generated, 0 libsvm") */
    int same = json_is_number(def) && json_is_number(v)
                   ? json_number_value(def) == json_number_value(v)
                   : json_equal(def, v);
    char *text = json_dumps(v, JSON_ENCODE_ANY);
    ck_assert_msg(same, "%s: the table's default is %s, the loader's %s", path, k[i].def, text);
    free(text);
    json_decref(def);
    checked++;
}

START_TEST(defaults_are_the_loaders)
{
    scn_scenario s;
    scn_error err;
    ck_assert_int_eq(scn_load_string(BASE, "t.json", NULL, 0, &s, &err), 0);
    json_t *root = json_loads(s.resolved_json, 0, NULL);
    ck_assert_ptr_nonnull(root);
    size_t n;
    const scn_key *k = scn_keys(&n);
    checked = 0;
    walk(root, "", k, n);
    ck_assert_int_ge(checked, 25);
    json_decref(root);
    scn_fini(&s);
}
END_TEST

START_TEST(every_name_has_its_line)
{
    size_t nv;
    const scn_vocab *v = scn_vocabs(&nv);
    ck_assert_uint_eq(nv, 8);
    for (size_t i = 0; i < nv; i++) {
        int j = 0;
        for (; v[i].names[j]; j++)
            ck_assert_msg(v[i].help[j] && v[i].help[j][0], "%s %s: no line", v[i].title,
                          v[i].names[j]);
        ck_assert_msg(v[i].help[j] == NULL, "%s: more lines than names", v[i].title);
        /* the family's key takes exactly these names */
        size_t n;
        const scn_key *k = scn_keys(&n);
        size_t m = 0;
        while (m < n && strcmp(k[m].path, v[i].key) != 0)
            m++;
        ck_assert_msg(m < n && k[m].names == v[i].names, "%s: key %s", v[i].title, v[i].key);
    }
    ck_assert_uint_ge(alg_count(), 19);
    for (size_t i = 0; i < alg_count(); i++) {
        const alg_type *t = alg_at(i);
        ck_assert_msg(t->summary && t->summary[0], "%s: no summary", t->name);
        for (int p = 0; t->params && t->params[p].key; p++)
            ck_assert_msg(t->params[p].help && t->params[p].help[0], "%s.%s: no help",
                          t->name, t->params[p].key);
    }
    ck_assert_ptr_null(alg_at(alg_count()));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scn_keys");
    TCase *tc = tcase_create("table");
    tcase_add_loop_test(tc, every_object_lists_the_loaders_keys, 0, (int)N_PROBES);
    tcase_add_test(tc, every_object_of_the_table_is_probed);
    tcase_add_test(tc, algorithm_keys_are_name_lr_batch);
    tcase_add_test(tc, defaults_are_the_loaders);
    tcase_add_test(tc, every_name_has_its_line);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
