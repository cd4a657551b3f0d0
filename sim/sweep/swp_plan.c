/* swp_plan.c -- the plan of a sweep: parses --grid and --zip axes, expands
 * them into grid points (cartesian product, zip axes paired), names the
 * runs, derives the replicate seeds, validates every grid point through the
 * scenario loader and the runner's preparation before anything runs, and
 * renders the sweep's identity (sweep.json) and plan (runs.csv).  It runs
 * nothing and touches no file.
 */
#define _GNU_SOURCE  /* open_memstream is POSIX 2008; strdup, strndup */
#include "swp.h"
#include "swp_internal.h"
#include "out.h"
#include "run.h"
#include "scn.h"
#include "sim_rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A run's folder name keeps at most this many characters of parameter
 * text; the index in front keeps names unique. */
#define NAME_MAX_TEXT 120

typedef struct axis {
    char   *path;
    char  **values;
    size_t  n_values;
    int     zip;
} axis;

static void axes_free(axis *ax, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < ax[i].n_values; k++)
            free(ax[i].values[k]);
        free(ax[i].values);
        free(ax[i].path);
    }
    free(ax);
}

/* Splits "path=v1,v2,..." at top-level commas: commas inside [], {} or a
 * JSON string belong to the value, so `--grid x=[1,2],[3,4]` has two
 * values. */
static int parse_axis(const swp_axis_arg *a, axis *out, char *err, size_t es)
{
    const char *opt = a->zip ? "--zip" : "--grid";
    const char *eq = strchr(a->text, '=');
    memset(out, 0, sizeof *out);
    out->zip = a->zip;
    if (!eq || eq == a->text) {
        snprintf(err, es, "dtsim sweep: error: %s %s: expected PATH=V1,V2,...", opt, a->text);
        return -1;
    }
    if (!(out->path = strndup(a->text, (size_t)(eq - a->text))))
        goto out_oom;
    const char *p = eq + 1, *start = p;
    int depth = 0, in_str = 0;
    for (;; p++) {
        if (in_str) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_str = 0;
            else if (!*p)
                break;
            continue;
        }
        if (*p == '"')
            in_str = 1;
        else if (*p == '[' || *p == '{')
            depth++;
        else if ((*p == ']' || *p == '}') && depth > 0)
            depth--;
        else if ((*p == ',' && depth == 0) || !*p) {
            if (p == start) {
                snprintf(err, es, "dtsim sweep: error: %s %s: empty value", opt, a->text);
                return -1;
            }
            /* a value is one CSV field of runs.csv and one line's worth of
             * text: a newline or another control character would split it */
            for (const char *q = start; q < p; q++)
                if ((unsigned char)*q < 0x20 || *q == 0x7f) {
                    snprintf(err, es, "dtsim sweep: error: %s %s: value %zu holds a control "
                             "character (byte 0x%02x); values are single-line text", opt,
                             out->path, out->n_values + 1, (unsigned)(unsigned char)*q);
                    return -1;
                }
            char **v = realloc(out->values, (out->n_values + 1) * sizeof *v);
            if (!v)
                goto out_oom;
            out->values = v;
            if (!(v[out->n_values] = strndup(start, (size_t)(p - start))))
                goto out_oom;
            out->n_values++;
            start = p + 1;
            if (!*p)
                break;
        }
    }
    if (in_str || depth) {
        snprintf(err, es, "dtsim sweep: error: %s %s: unbalanced quote or bracket", opt, a->text);
        return -1;
    }
    return 0;

out_oom:
    snprintf(err, es, "dtsim sweep: error: out of memory");
    return -1;
}

uint64_t swp_replicate_seed(uint64_t seed, int replicate)
{
    if (replicate == 0)
        return seed;
    return sim_rng_derive(seed, (uint32_t)replicate, SIM_RNG_REPLICATE)
           & ((UINT64_C(1) << 53) - 1);
}

/* Folder-safe copy of text: letters, digits and . + - = stay, the rest
 * becomes _. */
static void append_safe(char *dst, size_t size, const char *text)
{
    size_t len = strlen(dst);
    for (; *text && len + 1 < size; text++) {
        char c = *text;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                 || c == '.' || c == '+' || c == '-' || c == '=';
        dst[len++] = ok ? c : '_';
    }
    dst[len] = '\0';
}

static const char *leaf(const char *path)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    const char *p = dot > slash ? dot : slash;
    return p ? p + 1 : path;
}

static int digits(size_t n)
{
    int d = 1;
    while (n >= 10) {
        n /= 10;
        d++;
    }
    return d;
}

/* The bytes of data sets a plan keeps for its runs beyond the one in use:
 * a sweep over data.seed of generated data holds several. */
#define SWP_DATA_CACHE_BYTES (1024.0 * 1024 * 1024)

/* The overrides of grid point p: spec's sets, then path=value per
 * parameter.  strs holds the path=value texts (caller frees them). */
static int point_overrides(const swp_spec *spec, const swp_plan *pl, size_t p,
                           const char **ov, char **strs)
{
    size_t n = 0;
    for (size_t i = 0; i < spec->n_sets; i++)
        ov[n++] = spec->sets[i];
    for (size_t k = 0; k < pl->n_params; k++) {
        size_t len = strlen(pl->param_path[k]) + strlen(pl->point_value[p][k]) + 2;
        if (!(strs[k] = malloc(len)))
            return -1;
        snprintf(strs[k], len, "%s=%s", pl->param_path[k], pl->point_value[p][k]);
        ov[n++] = strs[k];
    }
    return 0;
}

/* Loads and prepares grid point p; on a bad point err receives the
 * scenario's message, with "--set P=V" said as the option the user typed,
 * and a note naming the point. */
static int check_point(const swp_spec *spec, swp_plan *pl, const axis *ax, size_t p,
                       uint64_t *seed, char *err, size_t es)
{
    size_t n_ov = spec->n_sets + pl->n_params;
    const char **ov = calloc(n_ov ? n_ov : 1, sizeof *ov);
    char **strs = calloc(pl->n_params ? pl->n_params : 1, sizeof *strs);
    int rc = -1;
    if (!ov || !strs || point_overrides(spec, pl, p, ov, strs) != 0) {
        snprintf(err, es, "dtsim sweep: error: out of memory");
        goto out_free;
    }
    scn_scenario s;
    scn_error se;
    run_sim *r = NULL;
    if (scn_load(spec->scenario, ov, n_ov, &s, &se) == 0) {
        if ((r = run_prepare_cached(&s, pl->data, &se)) != NULL) {
            *seed = s.seed;
            rc = 0;
        }
        run_destroy(r);
        scn_fini(&s);
    }
    if (rc != 0) {
        const char *msg = se.msg;
        const char *opt = "";
        for (size_t k = 0; k < pl->n_params; k++) {
            size_t len = strlen(strs[k]);
            if (strncmp(msg, "--set ", 6) == 0 && strncmp(msg + 6, strs[k], len) == 0
                && msg[6 + len] == ':') {
                opt = ax[k].zip ? "--zip " : "--grid ";
                msg += 6;
                break;
            }
        }
        size_t len = (size_t)snprintf(err, es, "%s%s\ndtsim sweep: note: at grid point", opt, msg);
        for (size_t k = 0; k < pl->n_params && len < es; k++)
            len += (size_t)snprintf(err + len, es - len, "%s %s %s", k ? "," : "",
                                    ax[k].zip ? "--zip" : "--grid", strs[k]);
    }

out_free:
    for (size_t k = 0; strs && k < pl->n_params; k++)
        free(strs[k]);
    free(strs);
    free(ov);
    return rc;
}

static int render(const swp_spec *spec, swp_plan *pl, const axis *ax, const char *base_json,
                  const char *const *bad)
{
    size_t size;
    FILE *f = open_memstream(&pl->manifest, &size);
    if (!f)
        return -1;
    out_json j;
    out_json_init(&j, f);
    out_json_begin_object(&j, NULL);
    out_json_string(&j, "dtsim_version", DTSIM_VERSION);
    out_json_string(&j, "git_commit", out_provenance_commit(spec->provenance));
    out_json_string(&j, "cblas", DTSIM_CBLAS);
    out_json_raw(&j, "scenario", base_json);
    out_json_begin_array(&j, "sets");
    for (size_t i = 0; i < spec->n_sets; i++)
        out_json_string(&j, NULL, spec->sets[i]);
    out_json_end_array(&j);
    out_json_begin_array(&j, "parameters");
    for (size_t k = 0; k < pl->n_params; k++) {
        out_json_begin_object(&j, NULL);
        out_json_string(&j, "path", ax[k].path);
        out_json_string(&j, "axis", ax[k].zip ? "zip" : "grid");
        out_json_begin_array(&j, "values");
        for (size_t v = 0; v < ax[k].n_values; v++)
            out_json_string(&j, NULL, ax[k].values[v]);
        out_json_end_array(&j);
        out_json_end_object(&j);
    }
    out_json_end_array(&j);
    out_json_int(&j, "replicates", spec->replicates);
    out_json_int(&j, "runs", (int64_t)pl->n_runs);
    if (pl->n_skipped) {
        /* --keep-going: the points left out, with the first line of their
         * error (absent without any, so that sweep.json is as before) */
        out_json_begin_array(&j, "skipped");
        for (size_t p = 0; p < pl->n_points; p++) {
            if (!bad[p])
                continue;
            out_json_begin_object(&j, NULL);
            out_json_begin_object(&j, "point");
            for (size_t k = 0; k < pl->n_params; k++)
                out_json_string(&j, pl->param_path[k], pl->point_value[p][k]);
            out_json_end_object(&j);
            char line[1024];
            snprintf(line, sizeof line, "%.*s", (int)strcspn(bad[p], "\n"), bad[p]);
            out_json_string(&j, "error", line);
            out_json_end_object(&j);
        }
        out_json_end_array(&j);
    }
    out_json_end_object(&j);
    out_json_finish(&j);
    if (fclose(f) != 0)
        return -1;

    return (pl->runs_csv = swp_i_render_runs(pl, NULL, out_provenance_commit(spec->provenance)))
           ? 0 : -1;
}

char *swp_i_render_runs(const swp_plan *pl, const char *const *commits, const char *commit)
{
    char *text = NULL;
    size_t size;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return NULL;
    fputs("run,name", f);
    for (size_t k = 0; k < pl->n_params; k++) {
        fputc(',', f);
        out_csv_field(f, pl->param_path[k]);
    }
    fputs(",replicate,seed,git_commit\n", f);
    for (size_t i = 0; i < pl->n_runs; i++) {
        const swp_run *r = &pl->runs[i];
        fprintf(f, "%zu,%s", r->index, r->name);
        for (size_t k = 0; k < pl->n_params; k++) {
            fputc(',', f);
            out_csv_field(f, pl->point_value[r->point][k]);
        }
        fprintf(f, ",%d,%llu,", r->replicate, (unsigned long long)r->seed);
        out_csv_field(f, commits && commits[i] ? commits[i] : commit);
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

int swp_plan_build(const swp_spec *spec, swp_plan *pl, char *err, size_t es)
{
    memset(pl, 0, sizeof *pl);
    axis *ax = calloc(spec->n_axes ? spec->n_axes : 1, sizeof *ax);
    uint64_t *seeds = NULL;
    char **bad = NULL;       /* keep_going: each bad point's message */
    size_t *good = NULL;     /* the points planned, in grid order */
    scn_scenario base;
    scn_error se;
    int rc = -1, have_base = 0;
    /* the data sets of the points, loaded once per distinct data
     * (docs/sweeps.md, "Planning"); NULL (out of memory) loads per point */
    pl->data = run_data_cache_create(SWP_DATA_CACHE_BYTES);
    if (!ax)
        goto out_oom;
    if (spec->replicates < 1) {
        snprintf(err, es, "dtsim sweep: error: --replicates must be >= 1, got %d",
                 spec->replicates);
        goto out_free;
    }
    /* Column order: the axes as given, the zip axes together at the
     * place of the first --zip. */
    size_t n = 0, zip_at = SIZE_MAX, zip_len = 0;
    for (size_t i = 0; i < spec->n_axes; i++)
        if (spec->axes[i].zip && zip_at == SIZE_MAX)
            zip_at = i;
    for (size_t i = 0; i < spec->n_axes; i++) {
        if (spec->axes[i].zip && i != zip_at)
            continue;
        for (size_t z = i; z < spec->n_axes; z++) {
            if (z != i && !(i == zip_at && spec->axes[z].zip))
                continue;
            if (parse_axis(&spec->axes[z], &ax[n++], err, es) != 0)
                goto out_free;
            if (i != zip_at)
                break;
        }
    }
    for (size_t a = 0; a < n; a++) {
        for (size_t b = 0; b < a; b++)
            if (strcmp(ax[a].path, ax[b].path) == 0) {
                snprintf(err, es, "dtsim sweep: error: parameter %s is swept twice", ax[a].path);
                goto out_free;
            }
        if (ax[a].zip) {
            if (zip_len && ax[a].n_values != zip_len) {
                snprintf(err, es, "dtsim sweep: error: --zip %s has %zu values, the first "
                         "--zip has %zu (paired lists must have the same length)",
                         ax[a].path, ax[a].n_values, zip_len);
                goto out_free;
            }
            zip_len = ax[a].n_values;
        }
    }

    /* grid points: mixed radix over the non-zip axes and the zip group */
    pl->n_params = n;
    pl->n_points = 1;
    for (size_t a = 0; a < n; a++) {
        if (ax[a].zip && a > 0 && ax[a - 1].zip)
            continue;
        if (pl->n_points > SIZE_MAX / 16 / ax[a].n_values) {
            snprintf(err, es, "dtsim sweep: error: the grid is too large");
            goto out_free;
        }
        pl->n_points *= ax[a].n_values;
    }
    if (pl->n_points > (size_t)1 << 24 || pl->n_points * (size_t)spec->replicates > (size_t)1 << 24) {
        snprintf(err, es, "dtsim sweep: error: the grid has more than 2^24 runs");
        goto out_free;
    }
    pl->param_path = calloc(n ? n : 1, sizeof *pl->param_path);
    pl->point_value = calloc(pl->n_points, sizeof *pl->point_value);
    if (!pl->param_path || !pl->point_value)
        goto out_oom;
    for (size_t a = 0; a < n; a++)
        if (!(pl->param_path[a] = strdup(ax[a].path)))
            goto out_oom;
    for (size_t p = 0; p < pl->n_points; p++) {
        if (!(pl->point_value[p] = calloc(n ? n : 1, sizeof(char *))))
            goto out_oom;
        size_t rest = p;
        /* last axis fastest: walk from the end */
        for (size_t a = n; a-- > 0;) {
            if (ax[a].zip && a > 0 && ax[a - 1].zip)
                continue;  /* taken with the first zip axis below */
            size_t v = rest % ax[a].n_values;
            rest /= ax[a].n_values;
            for (size_t z = a; z < n && (z == a || (ax[a].zip && ax[z].zip)); z++)
                if (!(pl->point_value[p][z] = strdup(ax[z].values[v])))
                    goto out_oom;
        }
    }

    /* every point checked before anything runs */
    if (scn_load(spec->scenario, spec->sets, spec->n_sets, &base, &se) != 0) {
        snprintf(err, es, "%s", se.msg);
        goto out_free;
    }
    have_base = 1;
    if (!(seeds = malloc(pl->n_points * sizeof *seeds))
        || !(bad = calloc(pl->n_points, sizeof *bad))
        || !(good = malloc(pl->n_points * sizeof *good)))
        goto out_oom;
    size_t n_good = 0;
    for (size_t p = 0; p < pl->n_points; p++) {
        if (check_point(spec, pl, ax, p, &seeds[p], err, es) == 0) {
            good[n_good++] = p;
            continue;
        }
        if (!spec->keep_going)
            goto out_free;
        if (!(bad[p] = strdup(err)))
            goto out_oom;
        pl->n_skipped++;
    }
    if (pl->n_skipped) {
        size_t size;
        FILE *m = open_memstream(&pl->skipped, &size);
        if (!m)
            goto out_oom;
        for (size_t p = 0; p < pl->n_points; p++)
            if (bad[p])
                fprintf(m, "%s\ndtsim sweep: note: --keep-going: this grid point is "
                        "skipped\n", bad[p]);
        if (fclose(m) != 0)
            goto out_oom;
    }
    if (n_good == 0) {
        snprintf(err, es, "%sdtsim sweep: error: every grid point failed validation "
                 "(%zu of %zu)", pl->skipped ? pl->skipped : "", pl->n_skipped, pl->n_points);
        goto out_free;
    }

    pl->n_runs = n_good * (size_t)spec->replicates;
    if (!(pl->runs = calloc(pl->n_runs, sizeof *pl->runs)))
        goto out_oom;
    int width = digits(pl->n_runs - 1) < 3 ? 3 : digits(pl->n_runs - 1);
    for (size_t i = 0; i < pl->n_runs; i++) {
        swp_run *r = &pl->runs[i];
        r->index = i;
        r->point = good[i / (size_t)spec->replicates];
        r->replicate = (int)(i % (size_t)spec->replicates);
        r->seed = swp_replicate_seed(seeds[r->point], r->replicate);
        char name[NAME_MAX_TEXT + 64], text[NAME_MAX_TEXT + 1] = "";
        for (size_t k = 0; k < n; k++) {
            char kv[NAME_MAX_TEXT + 1];
            snprintf(kv, sizeof kv, "_%s=%s", leaf(pl->param_path[k]), pl->point_value[r->point][k]);
            append_safe(text, sizeof text, kv);
        }
        int w = spec->replicates > 1
                ? snprintf(name, sizeof name, "%0*zu%s_r%d", width, i, text, r->replicate)
                : snprintf(name, sizeof name, "%0*zu%s", width, i, text);
        if (w < 0 || (size_t)w >= sizeof name)
            goto out_oom;  /* cannot happen: index and text are bounded */
        if (!(r->name = strdup(name)))
            goto out_oom;
    }
    if (render(spec, pl, ax, base.resolved_json, (const char *const *)bad) != 0)
        goto out_oom;
    rc = 0;
    goto out_free;

out_oom:
    snprintf(err, es, "dtsim sweep: error: out of memory");
out_free:
    if (have_base)
        scn_fini(&base);
    free(seeds);
    for (size_t p = 0; bad && p < pl->n_points; p++)
        free(bad[p]);
    free(bad);
    free(good);
    axes_free(ax, spec->n_axes);
    if (rc != 0)
        swp_plan_fini(pl);
    return rc;
}

void swp_plan_fini(swp_plan *pl)
{
    for (size_t i = 0; pl->runs && i < pl->n_runs; i++)
        free(pl->runs[i].name);
    free(pl->runs);
    for (size_t p = 0; pl->point_value && p < pl->n_points; p++) {
        for (size_t k = 0; pl->point_value[p] && k < pl->n_params; k++)
            free(pl->point_value[p][k]);
        free(pl->point_value[p]);
    }
    free(pl->point_value);
    for (size_t k = 0; pl->param_path && k < pl->n_params; k++)
        free(pl->param_path[k]);
    free(pl->param_path);
    free(pl->manifest);
    free(pl->runs_csv);
    free(pl->skipped);
    run_data_cache_destroy(pl->data);
    memset(pl, 0, sizeof *pl);
}
