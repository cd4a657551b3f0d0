/* swp_collect.c -- gathers a sweep's run folders into its tables: sweep.csv
 * (every metrics row of every run, in plan order, prefixed by the run's
 * parameters, replicate and seed) and summary.csv (each run's one-row
 * summary with the same prefix).  The folders may sit in one directory or
 * be spread over the directories of shards; the plan (runs.csv) and the
 * identity (sweep.json) must then be byte-identical in all of them.  The
 * tables depend only on the plan and the runs' files, never on the order in
 * which runs finished, so they are the same whatever -j or sharding.
 * Nothing corrupt passes into them: a NUL byte, a row whose field count
 * differs from its header, a runs.csv line out of order or naming a run
 * that no sweep names (such as "../..") is an error naming FILE:LINE, and
 * then nothing is written.  It also keeps provenance.jsonl, the sweep's
 * history of invocations (one line each, the shards' lines first at a
 * merge).  It runs nothing.
 */
#define _GNU_SOURCE  /* getline, strdup */
#include "swp.h"
#include "out.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *slurp(const char *path, char *err, size_t es)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, es, "%s: error: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&buf, &size);
    int c;
    if (m) {
        while ((c = fgetc(f)) != EOF)
            fputc(c, m);
        fclose(m);
    }
    int bad = ferror(f);
    fclose(f);
    if (!m || bad) {
        free(buf);
        snprintf(err, es, "%s: error: cannot read", path);
        return NULL;
    }
    if (strlen(buf) != size) {   /* the text would end at the NUL byte */
        size_t line = 1;
        for (size_t i = 0; buf[i]; i++)
            line += buf[i] == '\n';
        snprintf(err, es, "%s:%zu: error: holds a NUL byte (a corrupt file)", path, line);
        free(buf);
        return NULL;
    }
    return buf;
}

/* Fields of one CSV line (len bytes, newline excluded), commas inside
 * double quotes not counting; -1 when a quote is left open. */
static long csv_fields(const char *line, size_t len)
{
    long n = 1;
    int q = 0;
    for (size_t i = 0; i < len; i++) {
        if (line[i] == '"')
            q = !q;
        else if (line[i] == ',' && !q)
            n++;
    }
    return q ? -1 : n;
}

/* A run name as the plan writes them (swp_plan.c): a digit first, then
 * letters, digits and . + - = _ only, so that it is one folder under runs/
 * and never a path such as "../..". */
static int plan_name(const char *s, size_t len)
{
    if (len == 0 || len > 255 || s[0] < '0' || s[0] > '9')
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
              || c == '.' || c == '+' || c == '-' || c == '=' || c == '_'))
            return 0;
    }
    return 1;
}

static int complete_in(const char *dir, const char *name)
{
    char p[4096];
    struct stat sb;
    snprintf(p, sizeof p, "%s/runs/%s/run.json", dir, name);
    if (stat(p, &sb) != 0)
        return 0;
    snprintf(p, sizeof p, "%s/runs/%s/summary.csv", dir, name);
    return stat(p, &sb) == 0;
}

/* Copies the data lines of DIR/runs/NAME/FILE to out, each after prefix;
 * the header line goes to *header the first time, and must be the same
 * every time.  status (may be NULL) receives the first field of the first
 * data line. */
static int append_rows(FILE *out, const char *dir, const char *name, const char *file,
                       const char *prefix, char **header, char *status, size_t ss,
                       char *err, size_t es)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/runs/%s/%s", dir, name, file);
    FILE *f = fopen(p, "rb");
    if (!f) {
        snprintf(err, es, "%s: error: cannot open: %s", p, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0, first = 1;
    long fields = 0, lineno = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[len - 1] != '\n') {
            snprintf(err, es, "%s: error: last line is not terminated", p);
            rc = -1;
            break;
        }
        if (memchr(line, '\0', (size_t)len)) {
            snprintf(err, es, "%s:%ld: error: holds a NUL byte (a corrupt file; remove the "
                     "run's folder to run it again)", p, lineno);
            rc = -1;
            break;
        }
        long nf = csv_fields(line, (size_t)len - 1);
        if (first)
            fields = nf;
        else if (nf != fields) {
            snprintf(err, es, "%s:%ld: error: has %ld fields, the header has %ld (a corrupt "
                     "file; remove the run's folder to run it again)", p, lineno, nf, fields);
            rc = -1;
            break;
        }
        if (first) {
            first = 0;
            if (!*header) {
                if (!(*header = strdup(line))) {
                    snprintf(err, es, "%s: error: out of memory", p);
                    rc = -1;
                    break;
                }
            } else if (strcmp(*header, line) != 0) {
                snprintf(err, es, "%s: error: columns differ from the sweep's other runs", p);
                rc = -1;
                break;
            }
            continue;
        }
        if (status && !status[0])
            snprintf(status, ss, "%.*s", (int)strcspn(line, ",\n"), line);
        fputs(prefix, out);
        fputc(',', out);
        fputs(line, out);
    }
    if (rc == 0 && (ferror(f) || first)) {
        snprintf(err, es, "%s: error: cannot read, or empty", p);
        rc = -1;
    }
    free(line);
    fclose(f);
    return rc;
}

/* The header line of DIR/runs/NAME/FILE, newline included. */
static char *first_line(const char *dir, const char *name, const char *file, char *err,
                        size_t es)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/runs/%s/%s", dir, name, file);
    FILE *f = fopen(p, "rb");
    if (!f) {
        snprintf(err, es, "%s: error: cannot open: %s", p, strerror(errno));
        return NULL;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len = getline(&line, &cap, f);
    fclose(f);
    if (len <= 0 || line[len - 1] != '\n') {
        free(line);
        snprintf(err, es, "%s: error: no header line", p);
        return NULL;
    }
    return line;
}

int swp_collect(const char *const *dirs, size_t n_dirs, const char *out_dir,
                swp_collect_result *res, char *err, size_t es)
{
    char *manifest = NULL, *plan = NULL, *mh = NULL, *sh = NULL;
    out_file *sw = NULL, *su = NULL;
    int rc = -1;
    memset(res, 0, sizeof *res);
    for (size_t d = 0; d < n_dirs; d++) {
        char p[4096], q[4096];
        snprintf(p, sizeof p, "%s/sweep.json", dirs[d]);
        snprintf(q, sizeof q, "%s/runs.csv", dirs[d]);
        char *m = slurp(p, err, es), *r = m ? slurp(q, err, es) : NULL;
        if (!m || !r) {
            free(m);
            res->bad_input = 1;
            goto out_free;
        }
        if (d == 0) {
            manifest = m;
            plan = r;
            continue;
        }
        int same = strcmp(m, manifest) == 0 && strcmp(r, plan) == 0;
        free(m);
        free(r);
        if (!same) {
            snprintf(err, es, "%s: error: not a shard of the same sweep as %s (sweep.json or "
                     "runs.csv differ)", dirs[d], dirs[0]);
            res->bad_input = 1;
            goto out_free;
        }
    }

    /* runs.csv: run,name,<rest>; the tables' prefix is run,<rest> */
    char *line = plan, *nl = strchr(line, '\n');
    if (!nl) {
        snprintf(err, es, "%s/runs.csv: error: no header line", dirs[0]);
        res->bad_input = 1;
        goto out_free;
    }
    char *first_comma = strchr(line, ','), *second = first_comma ? strchr(first_comma + 1, ',') : NULL;
    if (!second || second > nl || strncmp(line, "run,name,", 9) != 0) {
        snprintf(err, es, "%s/runs.csv:1: error: bad header line (expected run,name,...)",
                 dirs[0]);
        res->bad_input = 1;
        goto out_free;
    }
    if (plan[strlen(plan) - 1] != '\n') {
        snprintf(err, es, "%s/runs.csv: error: last line is not terminated", dirs[0]);
        res->bad_input = 1;
        goto out_free;
    }
    /* check the plan and that every run is somewhere before writing
     * anything: each line has the header's fields, its index and a name
     * the plan could have written (never a path) */
    long head_fields = csv_fields(line, (size_t)(nl - line)), lineno = 1;
    for (char *l = nl + 1; *l; l = strchr(l, '\n') + 1) {
        char *a = strchr(l, ','), *b = a ? strchr(a + 1, ',') : NULL, *e = strchr(l, '\n');
        lineno++;
        if (!b || !e || b > e || csv_fields(l, (size_t)(e - l)) != head_fields) {
            snprintf(err, es, "%s/runs.csv:%ld: error: expected %ld fields as in the header "
                     "line", dirs[0], lineno, head_fields);
            res->bad_input = 1;
            goto out_free;
        }
        char *end;
        if (strtoul(l, &end, 10) != res->n_runs || end != a || l[0] < '0' || l[0] > '9') {
            snprintf(err, es, "%s/runs.csv:%ld: error: run index %.*s, expected %zu", dirs[0],
                     lineno, (int)(a - l), l, res->n_runs);
            res->bad_input = 1;
            goto out_free;
        }
        if (!plan_name(a + 1, (size_t)(b - a - 1))) {
            snprintf(err, es, "%s/runs.csv:%ld: error: run name \"%.*s\" is not one a sweep "
                     "writes (a digit, then letters, digits and . + - = _)", dirs[0], lineno,
                     (int)(b - a - 1 > 100 ? 100 : b - a - 1), a + 1);
            res->bad_input = 1;
            goto out_free;
        }
        res->n_runs++;
        char name[1024];
        snprintf(name, sizeof name, "%.*s", (int)(b - a - 1), a + 1);
        size_t d = 0;
        while (d < n_dirs && !complete_in(dirs[d], name))
            d++;
        if (d == n_dirs && res->missing++ == 0)
            snprintf(err, es, "the first is runs/%s", name);
    }
    if (res->missing) {
        rc = 0;
        goto out_free;
    }

    /* the column names come from the first run; every other run must
     * have the same (append_rows checks) */
    char name0[1024];
    {
        char *a = strchr(nl + 1, ','), *b = strchr(a + 1, ',');
        snprintf(name0, sizeof name0, "%.*s", (int)(b - a - 1), a + 1);
    }
    size_t d0 = 0;
    while (!complete_in(dirs[d0], name0))
        d0++;
    if (!(mh = first_line(dirs[d0], name0, "metrics.csv", err, es))
        || !(sh = first_line(dirs[d0], name0, "summary.csv", err, es)))
        goto out_free;

    if (out_mkdirs(out_dir, err, es) != 0)
        goto out_free;
    out_file *fm = out_file_open(out_dir, "sweep.json", err, es);
    if (!fm)
        goto out_free;
    fputs(manifest, out_file_stream(fm));
    if (out_file_commit(fm, err, es) != 0 || !(fm = out_file_open(out_dir, "runs.csv", err, es)))
        goto out_free;
    fputs(plan, out_file_stream(fm));
    if (out_file_commit(fm, err, es) != 0)
        goto out_free;
    if (!(sw = out_file_open(out_dir, "sweep.csv", err, es))
        || !(su = out_file_open(out_dir, "summary.csv", err, es)))
        goto out_free;
    FILE *fw = out_file_stream(sw), *fs = out_file_stream(su);
    FILE *both[2] = { fw, fs };
    const char *heads[2] = { mh, sh };
    for (int t = 0; t < 2; t++)
        fprintf(both[t], "%.*s%.*s,%s", (int)(first_comma - plan), plan,
                (int)(nl - second), second, heads[t]);
    char *prefix = NULL;
    size_t pcap = 0;
    for (char *l = nl + 1; *l; l = strchr(l, '\n') + 1) {
        char *a = strchr(l, ','), *b = strchr(a + 1, ','), *e = strchr(l, '\n');
        size_t need = (size_t)(a - l) + (size_t)(e - b) + 1;
        if (need > pcap) {
            char *np = realloc(prefix, need);
            if (!np) {
                snprintf(err, es, "dtsim: error: out of memory");
                free(prefix);
                goto out_free;
            }
            prefix = np;
            pcap = need;
        }
        snprintf(prefix, need, "%.*s%.*s", (int)(a - l), l, (int)(e - b), b);
        char name[1024], status[64] = "";
        snprintf(name, sizeof name, "%.*s", (int)(b - a - 1), a + 1);
        size_t d = 0;
        while (!complete_in(dirs[d], name))
            d++;
        if (append_rows(fw, dirs[d], name, "metrics.csv", prefix, &mh, NULL, 0, err, es) != 0
            || append_rows(fs, dirs[d], name, "summary.csv", prefix, &sh, status, sizeof status,
                           err, es) != 0) {
            free(prefix);
            res->bad_input = 1;
            goto out_free;
        }
        if (strcmp(status, "ok") != 0)
            res->not_ok++;
    }
    free(prefix);
    if (out_file_commit(sw, err, es) != 0) {
        sw = NULL;
        goto out_free;
    }
    sw = NULL;
    rc = out_file_commit(su, err, es);
    su = NULL;

out_free:
    out_file_abort(sw);
    out_file_abort(su);
    free(mh);
    free(sh);
    free(manifest);
    free(plan);
    return rc;
}

int swp_provenance_append(const char *dir, const char *const *from, size_t n_from,
                          const out_provenance *p, char *err, size_t es)
{
    char *old[64] = { 0 };
    int rc = -1;
    if (n_from > 64)
        n_from = 64;
    for (size_t k = 0; k < n_from; k++) {
        char path[4096];
        struct stat sb;
        snprintf(path, sizeof path, "%s/provenance.jsonl", from[k]);
        if (stat(path, &sb) != 0)
            continue;
        if (!(old[k] = slurp(path, err, es)))
            goto out_free;
    }
    out_file *f = out_file_open(dir, "provenance.jsonl", err, es);
    if (!f)
        goto out_free;
    FILE *fp = out_file_stream(f);
    for (size_t k = 0; k < n_from; k++)
        if (old[k] && old[k][0]) {
            fputs(old[k], fp);
            if (old[k][strlen(old[k]) - 1] != '\n')
                fputc('\n', fp);
        }
    out_json j;
    out_json_init_compact(&j, fp);
    out_provenance_json(&j, NULL, p);
    out_json_finish(&j);
    rc = out_file_commit(f, err, es);
out_free:
    for (size_t k = 0; k < n_from; k++)
        free(old[k]);
    return rc;
}
