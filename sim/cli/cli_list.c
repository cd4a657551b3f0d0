/* cli_list.c -- `dtsim list`, `dtsim explain` and `dtsim keys`: the
 * vocabulary of scenarios printed from the tables the loader and the
 * registry use (the protocols' alg_type and alg_param_spec tables,
 * scn_keys.h's key table and name families), so the listings cannot say
 * anything the loader does not do.  It holds no name, default or range of
 * its own and checks no scenario.
 */
#include "alg_host.h"
#include "cli.h"
#include "scn_keys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define NAME_COL 22

static void print_row(const char *name, const char *text)
{
    int w = printf("  %s", name);
    if (w >= NAME_COL)
        printf("\n%*s", NAME_COL, "");
    else
        printf("%*s", NAME_COL - w, "");
    cli_print_filled(stdout, text, NAME_COL, NAME_COL);
}

/* The first word of a family's title ("noise" of "noise laws"). */
static int title_is(const char *title, const char *word)
{
    size_t n = strcspn(title, " ");
    return strlen(word) == n && strncmp(title, word, n) == 0;
}

int cli_list(int argc, char **argv)
{
    const char *only = NULL;
    for (int i = 0; i < argc; i++) {
        if (cli_std_option("list", argv[i]) == 0)
            return 0;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_usage_error("list", "unknown option '%s'", argv[i]);
        if (only)
            return cli_usage_error("list", "one family at a time");
        only = argv[i];
    }
    size_t nv;
    const scn_vocab *v = scn_vocabs(&nv);
    if (only && strcmp(only, "protocols") != 0) {
        size_t k = 0;
        while (k < nv && !title_is(v[k].title, only))
            k++;
        if (k == nv) {
            fprintf(stderr, "dtsim list: error: unknown family '%s' (expected one of: "
                    "protocols", only);
            for (size_t j = 0; j < nv; j++)
                fprintf(stderr, ", %.*s", (int)strcspn(v[j].title, " "), v[j].title);
            fputs(")\n", stderr);
            return 2;
        }
    }
    int first = 1;
    if (!only || strcmp(only, "protocols") == 0) {
        printf("protocols (algorithm.name; dtsim explain algorithm.NAME):\n");
        for (size_t i = 0; i < alg_count(); i++)
            print_row(alg_at(i)->name, alg_at(i)->summary);
        first = 0;
    }
    for (size_t k = 0; k < nv; k++) {
        if (only && !title_is(v[k].title, only))
            continue;
        printf("%s%s (%s):\n", first ? "" : "\n", v[k].title, v[k].key);
        for (int j = 0; v[k].names[j]; j++)
            print_row(v[k].names[j], v[k].help[j]);
        first = 0;
    }
    return 0;
}

/* A number of a parameter table as the scenario would write it. */
static void fmt_num(char *buf, size_t size, double x)
{
    snprintf(buf, size, "%.15g", x);
}

/* "  NAME", its line of help and "type: ...; default: ...; allowed: ..."
 * filled under it. */
static void print_entry(const char *name, const char *help, const char *spec)
{
    printf("  %s\n      ", name);
    cli_print_filled(stdout, help, 6, 6);
    fputs("      ", stdout);
    cli_print_filled(stdout, spec, 6, 8);
}

static void explain_param(const alg_param_spec *sp)
{
    char name[128], spec[1024], a[64], b[64];
    size_t len = 0;
    snprintf(name, sizeof name, "algorithm.%s", sp->key);
    switch (sp->kind) {
    case ALG_PARAM_INT:
    case ALG_PARAM_REAL:
        fmt_num(a, sizeof a, sp->def);
        len = (size_t)snprintf(spec, sizeof spec, "type: %s; default: %s; allowed: ",
                               sp->kind == ALG_PARAM_INT ? "integer" : "number", a);
        fmt_num(a, sizeof a, sp->min);
        fmt_num(b, sizeof b, sp->max);
        if (sp->max >= 1e300 || isinf(sp->max))
            snprintf(spec + len, sizeof spec - len, ">= %s", a);
        else if (sp->kind == ALG_PARAM_INT)
            snprintf(spec + len, sizeof spec - len, "%s .. %s", a, b);
        else
            snprintf(spec + len, sizeof spec - len, "in [%s, %s]", a, b);
        break;
    case ALG_PARAM_CHOICE:
        len = (size_t)snprintf(spec, sizeof spec, "type: string; default: \"%s\"; allowed:",
                               sp->choices[(int)sp->def]);
        for (int k = 0; sp->choices[k] && len < sizeof spec; k++)
            len += (size_t)snprintf(spec + len, sizeof spec - len, "%s %s", k ? "," : "",
                                    sp->choices[k]);
        break;
    case ALG_PARAM_PATH:
        snprintf(spec, sizeof spec, "type: string; default: absent; allowed: a file, "
                 "relative to the scenario's directory");
        break;
    }
    print_entry(name, sp->help, spec);
}

static void explain_key(const scn_key *k);

static int explain_algorithm(const char *name)
{
    const alg_type *t = alg_find(name);
    if (!t) {
        fprintf(stderr, "dtsim explain: error: unknown algorithm \"%s\" (expected one of: "
                "%s)\n", name, alg_names());
        return 2;
    }
    int w = printf("algorithm.name \"%s\": ", t->name);
    cli_print_filled(stdout, t->summary, w, 2);
    putchar('\n');
    printf("common keys (dtsim keys algorithm):\n");
    size_t n;
    const scn_key *keys = scn_keys(&n);
    for (size_t i = 0; i < n; i++)
        if (strncmp(keys[i].path, "algorithm.", 10) == 0 && strcmp(keys[i].path,
                                                                   "algorithm.name") != 0)
            explain_key(&keys[i]);
    printf("\nparameters of %s (its parameter table):\n", t->name);
    if (!t->params || !t->params[0].key)
        printf("  none\n");
    for (int i = 0; t->params && t->params[i].key; i++)
        explain_param(&t->params[i]);
    return 0;
}

/* A key as `dtsim keys` shows it. */
static void explain_key(const scn_key *k)
{
    char spec[2048];
    size_t len = (size_t)snprintf(spec, sizeof spec, "type: %s%s%s; default: %s", k->type,
                                  k->unit[0] ? "; unit: " : "", k->unit, k->def);
    if (k->names || k->allowed[0])
        len += (size_t)snprintf(spec + len, sizeof spec - len, "; allowed:");
    for (int j = 0; k->names && k->names[j] && len < sizeof spec; j++)
        len += (size_t)snprintf(spec + len, sizeof spec - len, "%s %s", j ? "," : "",
                                k->names[j]);
    if (k->allowed[0] && len < sizeof spec)
        snprintf(spec + len, sizeof spec - len, "%s %s", k->names ? ";" : "", k->allowed);
    print_entry(k->path, k->help, spec);
}

/* Whether path lies under prefix, component by component ("compute"
 * covers "compute.noise" and "compute.groups[].nodes", not "computex"). */
static int under(const char *path, const char *prefix)
{
    size_t n = strlen(prefix);
    if (n && prefix[n - 1] == '.')
        n--;
    return n == 0 || (strncmp(path, prefix, n) == 0 &&
                      (path[n] == '\0' || path[n] == '.' || path[n] == '['));
}

int cli_keys(int argc, char **argv)
{
    const char *prefix = "";
    int given = 0;
    for (int i = 0; i < argc; i++) {
        if (cli_std_option("keys", argv[i]) == 0)
            return 0;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_usage_error("keys", "unknown option '%s'", argv[i]);
        if (given)
            return cli_usage_error("keys", "one prefix at a time");
        prefix = argv[i];
        given = 1;
    }
    size_t n, shown = 0;
    const scn_key *keys = scn_keys(&n);
    for (size_t i = 0; i < n; i++)
        if (under(keys[i].path, prefix)) {
            explain_key(&keys[i]);
            shown++;
        }
    if (!shown) {
        fprintf(stderr, "dtsim keys: error: no scenario key '%s' (dtsim keys lists them all)\n",
                prefix);
        return 2;
    }
    if (under("algorithm.name", prefix))
        print_entry("algorithm.PARAM", "the protocol's own parameters",
                    "dtsim explain algorithm.NAME lists them");
    return 0;
}

int cli_explain(int argc, char **argv)
{
    const char *what = NULL;
    for (int i = 0; i < argc; i++) {
        if (cli_std_option("explain", argv[i]) == 0)
            return 0;
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_usage_error("explain", "unknown option '%s'", argv[i]);
        if (what)
            return cli_usage_error("explain", "one key at a time");
        what = argv[i];
    }
    if (!what)
        return cli_usage_error("explain", "no key given");
    if (strncmp(what, "algorithm.", 10) == 0 && strcmp(what, "algorithm.name") != 0 &&
        strcmp(what, "algorithm.lr") != 0 && strcmp(what, "algorithm.batch") != 0)
        return explain_algorithm(what + 10);
    size_t n;
    const scn_key *keys = scn_keys(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(keys[i].path, what) == 0) {
            explain_key(&keys[i]);
            size_t nv;
            const scn_vocab *v = scn_vocabs(&nv);
            for (size_t k = 0; k < nv; k++)
                if (keys[i].names == v[k].names)   /* compute.groups[].noise.dist too */
                    for (int j = 0; v[k].names[j]; j++)
                        print_row(v[k].names[j], v[k].help[j]);
            if (strcmp(what, "algorithm.name") == 0)
                for (size_t j = 0; j < alg_count(); j++)
                    print_row(alg_at(j)->name, alg_at(j)->summary);
            return 0;
        }
    if (alg_find(what))
        return explain_algorithm(what);
    fprintf(stderr, "dtsim explain: error: no scenario key '%s' (dtsim keys lists them, dtsim "
            "list the protocols)\n", what);
    return 2;
}
