/* swp_exec.c -- runs a sweep's plan: one forked worker process per run, at
 * most `jobs` at a time.  A worker writes its run into a hidden folder
 * runs/.part.PID.NAME@HOST and renames it to runs/NAME when every file is
 * complete, so a folder under its final name is a complete run, a killed
 * worker leaves only a hidden folder (removed by the next execution on the
 * same host), and two processes racing for one run cannot both publish it.
 * Runs already complete are skipped.  It does not gather the CSV (see
 * swp_collect.c) and draws the progress line only through sim/output.
 */
#define _GNU_SOURCE  /* nftw, gethostname, strdup */
#include "swp.h"
#include "swp_internal.h"
#include "out.h"
#include "run.h"
#include "scn.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PART_PREFIX ".part."

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void rm_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void swp_i_host_name(char *buf, size_t size)
{
    if (gethostname(buf, size) != 0)
        snprintf(buf, size, "localhost");
    buf[size - 1] = '\0';
    for (char *p = buf; *p; p++)
        if (*p == '/' || *p == '@')
            *p = '_';
}

static void part_path(char *buf, size_t size, const char *dir, long pid, const char *name,
                      const char *host)
{
    snprintf(buf, size, "%s/runs/" PART_PREFIX "%ld.%s@%s", dir, pid, name, host);
}

/* A run folder is complete when it exists under its final name with the
 * files the worker writes before the rename. */
int swp_i_complete(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/runs/%s/run.json", dir, name);
    if (!exists(p))
        return 0;
    snprintf(p, sizeof p, "%s/runs/%s/summary.csv", dir, name);
    return exists(p);
}

/* Whether process pid is gone: no such process, or a zombie (a killed
 * sweep's workers wait as zombies until init reaps them).  The zombie test
 * reads /proc and is skipped where there is none. */
static int process_gone(long pid)
{
    if (kill((pid_t)pid, 0) != 0)
        return errno == ESRCH;
    char p[64], buf[512];
    snprintf(p, sizeof p, "/proc/%ld/stat", pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');   /* the name may hold spaces */
    return rp && rp[1] == ' ' && rp[2] == 'Z';
}

/* Removes the hidden folders of this host's workers that are gone (a
 * killed sweep).  Folders of other hosts may belong to live shards on a
 * shared file system and are left alone. */
static void remove_stale_parts(const char *dir, const char *host)
{
    char runs[4096];
    snprintf(runs, sizeof runs, "%s/runs", dir);
    DIR *d = opendir(runs);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, PART_PREFIX, strlen(PART_PREFIX)) != 0)
            continue;
        const char *at = strrchr(e->d_name, '@');
        char *end;
        long pid = strtol(e->d_name + strlen(PART_PREFIX), &end, 10);
        if (!at || *end != '.' || strcmp(at + 1, host) != 0 || pid <= 0)
            continue;
        if (!process_gone(pid))
            continue;
        char p[4096 + 256];
        snprintf(p, sizeof p, "%s/%s", runs, e->d_name);
        rm_tree(p);
    }
    closedir(d);
}

/* The text of a file (NULL when absent or unreadable); the caller frees. */
char *swp_i_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&buf, &size);
    int c;
    if (m) {
        while ((c = fgetc(f)) != EOF)
            fputc(c, m);
        if (fclose(m) != 0) {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    return buf;
}

/* The text of DIR/NAME (NULL when absent or unreadable). */
static char *read_text(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return swp_i_read_file(p);
}

static int write_text(const char *dir, const char *name, const char *text, char *err, size_t es)
{
    out_file *o = out_file_open(dir, name, err, es);
    if (!o)
        return -1;
    fputs(text, out_file_stream(o));
    return out_file_commit(o, err, es);
}

/* ---- one run, inside the worker ---- */

/* The crossing instant of the stop target on metric m (NAN when the
 * scenario sets none): the runner's, placed between evaluations. */
static double stop_time(const run_result *res, scn_target_metric m)
{
    for (int i = 0; i < res->n_targets; i++)
        if (res->targets[i].stop && res->targets[i].metric == m)
            return res->targets[i].time_s;
    return NAN;
}

static int write_summary(const char *dir, const scn_scenario *s, const run_result *res,
                         char *err, size_t es)
{
    out_file *o = out_file_open(dir, "summary.csv", err, es);
    if (!o)
        return -1;
    FILE *f = out_file_stream(o);
    fputs("status,stop_reason,sim_time_s,steps,epochs,train_loss,test_loss,test_accuracy,"
          "consensus_distance,bytes_sent,target_loss,time_to_target_loss_s,target_accuracy,"
          "time_to_target_accuracy_s,steps_per_s,events,wall_s", f);
    /* metrics.targets: four columns each, numbered from 1 in the
     * scenario's order (absent without targets: the table is as before) */
    for (size_t k = 1; k <= s->metrics_n_targets; k++)
        fprintf(f, ",target_%zu_metric,target_%zu_value,time_to_target_%zu_s,"
                "time_to_target_%zu_error_s", k, k, k, k);
    fputc('\n', f);
    fprintf(f, "%s,%s,", run_status_name(res->status), res->stop_reason);
    const double v[] = {
        res->sim_time_s, (double)res->last.steps, res->last.epochs, res->last.train_loss,
        res->last.test_loss, res->last.test_accuracy, res->last.consensus_distance,
        res->last.bytes_sent, s->stop_target_loss, stop_time(res, SCN_TARGET_TRAIN_LOSS),
        s->stop_target_accuracy, stop_time(res, SCN_TARGET_TEST_ACCURACY),
        res->sim_time_s > 0 ? (double)res->last.steps / res->sim_time_s : NAN,
        (double)res->events, res->wall_s,
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        if (i)
            fputc(',', f);
        out_fmt_double(f, v[i]);
    }
    for (int i = 0; i < res->n_targets; i++) {
        const run_target *t = &res->targets[i];
        if (t->stop)
            continue;
        fprintf(f, ",%s,", scn_target_metric_names[t->metric]);
        out_fmt_double(f, t->value);
        fputc(',', f);
        out_fmt_double(f, t->time_s);
        fputc(',', f);
        out_fmt_double(f, t->err_s);
    }
    fputc('\n', f);
    return out_file_commit(o, err, es);
}

/* One run into runs/NAME, in the calling process: 0 when the folder is
 * complete (by this call or by a racing process), 1 when the run failed,
 * 2 when its scenario did not load (the plan was checked, so only a file
 * changed under the sweep does this).  Messages go to stderr. */
int swp_i_run_one(const swp_spec *spec, const swp_plan *pl, const swp_run *run,
                  const char *dir, const char *host, int spec_threads)
{
    size_t n_ov = spec->n_sets + pl->n_params + 1;
    const char **ov = calloc(n_ov, sizeof *ov);
    char **kv = calloc(pl->n_params + 1, sizeof *kv);
    char seed[64], err[4096], part[4096], final[4096];
    int rc = 1;
    scn_scenario s;
    run_sim *r = NULL;
    int loaded = 0;
    if (!ov || !kv)
        goto out_oom;
    size_t n = 0;
    for (size_t i = 0; i < spec->n_sets; i++)
        ov[n++] = spec->sets[i];
    for (size_t k = 0; k < pl->n_params; k++) {
        size_t len = strlen(pl->param_path[k]) + strlen(pl->point_value[run->point][k]) + 2;
        if (!(kv[k] = malloc(len)))
            goto out_oom;
        snprintf(kv[k], len, "%s=%s", pl->param_path[k], pl->point_value[run->point][k]);
        ov[n++] = kv[k];
    }
    snprintf(seed, sizeof seed, "seed=%llu", (unsigned long long)run->seed);
    ov[n++] = seed;

    scn_error se;
    if (scn_load(spec->scenario, ov, n, &s, &se) != 0) {
        fprintf(stderr, "%s\n", se.msg);
        rc = 2;
        goto out_free;
    }
    loaded = 1;
    if (!(r = run_prepare_cached(&s, pl->data, &se))) {
        fprintf(stderr, "%s\n", se.msg);
        rc = 2;
        goto out_free;
    }
    part_path(part, sizeof part, dir, (long)getpid(), run->name, host);
    snprintf(final, sizeof final, "%s/runs/%s", dir, run->name);
    char cache[4096];
    snprintf(cache, sizeof cache, "%s/.topo-cache", dir);
    run_options opt = { .out_dir = part, .provenance = spec->provenance,
                        .threads = spec_threads, .topo_cache_dir = cache };
    run_result res;
    if (run_execute(r, &opt, &res, err, sizeof err) != 0
        || write_summary(part, &s, &res, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        rm_tree(part);
        goto out_free;
    }
    if (rename(part, final) != 0) {
        int e = errno;
        rm_tree(part);
        /* another process (a second sweep on a shared folder) won */
        if ((e == EEXIST || e == ENOTEMPTY) && swp_i_complete(dir, run->name))
            rc = 0;
        else
            fprintf(stderr, "%s: error: cannot rename to %s: %s\n", part, final, strerror(e));
        goto out_free;
    }
    rc = 0;
    goto out_free;

out_oom:
    fputs("dtsim sweep: error: out of memory\n", stderr);
out_free:
    run_destroy(r);
    if (loaded)
        scn_fini(&s);
    for (size_t k = 0; kv && k < pl->n_params; k++)
        free(kv[k]);
    free(kv);
    free(ov);
    return rc;
}

int swp_i_prepare_dir(const swp_spec *spec, const swp_plan *pl, const char *dir, int force,
                      char *host, size_t host_size, char *err, size_t es)
{
    char runs[4096];
    snprintf(runs, sizeof runs, "%s/runs", dir);
    if (out_mkdirs(runs, err, es) != 0)
        return -1;
    char *old = read_text(dir, "sweep.json"), *old_runs = old ? read_text(dir, "runs.csv") : NULL;
    int rc;
    if (!old) {
        /* a new folder: runs.csv first, so that sweep.json marks a plan
         * whose files are all there */
        rc = write_text(dir, "runs.csv", pl->runs_csv, err, es) != 0
             || write_text(dir, "sweep.json", pl->manifest, err, es) != 0 ? -1 : 0;
    } else if (strcmp(old, pl->manifest) == 0 && old_runs && strcmp(old_runs, pl->runs_csv) == 0) {
        swp_i_finish_adopt(pl, dir);   /* the same sweep: a resume */
        rc = 0;
    } else {
        /* another plan (a larger grid, more replicates), another binary,
         * or a runs.csv naming runs of other binaries (a forced resume) */
        rc = swp_i_adopt(spec, pl, dir, old, force, err, es);
    }
    free(old);
    free(old_runs);
    if (rc != 0)
        return -1;
    swp_i_host_name(host, host_size);
    remove_stale_parts(dir, host);
    return 0;
}

/* The runs of shard k of n not complete in dir, in plan order, into todo
 * (room for pl->n_runs); counts into res.  Returns how many. */
size_t swp_i_todo(const swp_plan *pl, const char *dir, int k, int n, size_t *todo,
                  swp_exec_result *res)
{
    size_t n_todo = 0;
    for (size_t i = 0; i < pl->n_runs; i++) {
        if (i % (size_t)n != (size_t)(k - 1))
            continue;
        res->in_shard++;
        if (swp_i_complete(dir, pl->runs[i].name))
            res->skipped++;
        else
            todo[n_todo++] = i;
    }
    return n_todo;
}

void swp_i_remove_part(const char *dir, long pid, const char *name, const char *host)
{
    char part[4096];
    part_path(part, sizeof part, dir, pid, name, host);
    rm_tree(part);
}

/* ---- the pool ---- */

typedef struct slot {
    pid_t  pid;
    size_t run;
} slot;

void swp_i_draw(out_progress *pg, const swp_exec_result *res, size_t running, int force)
{
    size_t finished = res->skipped + res->done + res->failed;
    double el = out_progress_elapsed(pg);
    double left = res->done > 0
                  ? el / (double)res->done * (double)(res->in_shard - finished) : NAN;
    char e[32], l[32];
    out_fmt_duration(e, sizeof e, el);
    out_fmt_duration(l, sizeof l, left);
    out_progress_draw(pg, force, "sweep: %zu/%zu runs done, %zu running%s, %s elapsed, ~%s left",
                      finished, res->in_shard, running, res->failed ? ", some failed" : "", e, l);
}

int swp_execute(const swp_spec *spec, const swp_plan *pl, const swp_exec_options *opt,
                swp_exec_result *res, char *err, size_t es)
{
    const char *dir = opt->out_dir;
    char host[256];
    memset(res, 0, sizeof *res);
    if (swp_i_prepare_dir(spec, pl, dir, opt->force, host, sizeof host, err, es) != 0)
        return -1;

    int jobs = opt->jobs < 1 ? 1 : opt->jobs;
    int k = opt->shard_n > 0 ? opt->shard_k : 1, nshard = opt->shard_n > 0 ? opt->shard_n : 1;
    size_t *todo = malloc((pl->n_runs ? pl->n_runs : 1) * sizeof *todo);
    slot *slots = calloc((size_t)jobs, sizeof *slots);
    if (!todo || !slots) {
        free(todo);
        free(slots);
        snprintf(err, es, "dtsim sweep: error: out of memory");
        return -1;
    }
    size_t n_todo = swp_i_todo(pl, dir, k, nshard, todo, res);

    out_progress pg;
    out_progress_init(&pg, stderr, opt->progress_s);
    size_t next = 0, running = 0;
    swp_i_draw(&pg, res, running, 1);
    fflush(NULL);  /* nothing buffered may be written twice by a worker */
    while (next < n_todo || running > 0) {
        int stop = opt->interrupt && *opt->interrupt;
        while (!stop && running < (size_t)jobs && next < n_todo) {
            size_t ri = todo[next];
            pid_t pid = fork();
            if (pid < 0) {
                if (running == 0) {
                    snprintf(err, es, "dtsim sweep: error: cannot start a worker: %s",
                             strerror(errno));
                    free(todo);
                    free(slots);
                    return -1;
                }
                break;  /* retry when a worker ends */
            }
            if (pid == 0) {
                signal(SIGINT, SIG_DFL);
                signal(SIGTERM, SIG_DFL);
                _exit(swp_i_run_one(spec, pl, &pl->runs[ri], dir, host, opt->threads));
            }
            for (int j = 0; j < jobs; j++)
                if (slots[j].pid == 0) {
                    slots[j].pid = pid;
                    slots[j].run = ri;
                    break;
                }
            running++;
            next++;
        }
        if (stop) {
            res->interrupted = 1;
            for (int j = 0; j < jobs; j++)
                if (slots[j].pid)
                    kill(slots[j].pid, SIGINT);
            next = n_todo;
        }
        if (running == 0)
            break;
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int j = 0; j < jobs; j++) {
            if (slots[j].pid != pid)
                continue;
            const swp_run *run = &pl->runs[slots[j].run];
            if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
                res->done++;
            } else {
                swp_i_remove_part(dir, (long)pid, run->name, host);
                if (!(WIFSIGNALED(st) && (WTERMSIG(st) == SIGINT || WTERMSIG(st) == SIGTERM)
                      && res->interrupted)) {
                    res->failed++;
                    out_progress_end(&pg);
                    if (WIFSIGNALED(st))
                        fprintf(stderr, "dtsim sweep: error: run %s killed by signal %d\n",
                                run->name, WTERMSIG(st));
                    else
                        fprintf(stderr, "dtsim sweep: error: run %s failed (exit status %d)\n",
                                run->name, WEXITSTATUS(st));
                }
            }
            slots[j].pid = 0;
            running--;
            break;
        }
        swp_i_draw(&pg, res, running, 1);
    }
    out_progress_end(&pg);
    free(todo);
    free(slots);
    return 0;
}
