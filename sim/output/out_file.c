/* out_file.c -- files and run folders that appear complete or not at all.
 * A file is written to a hidden temporary name in the target directory and
 * renamed over the final name once flushed, so a crash or a kill of dtsim
 * leaves either the old file or the new one, never half of one.  Files are
 * not fsync'd: that would guard only against a power loss or an OS crash
 * (a run is rerun to the same bits) and cost 0.2-0.3 ms of CPU a file,
 * about 5% of a timing-only run of 64 nodes (docs/outputs.md).  A run
 * folder is locked (flock on the folder itself, so a second writer is
 * refused) and, when it already exists, written as a hidden sibling
 * ".NAME.tmp.PID" that replaces it as a whole (an atomic exchange, or two
 * renames where the file system has none), so an old run's files never sit
 * beside a new run's; a folder this run created is written in place and
 * holds no run.json until the run is complete.  It does not decide what is
 * written.
 */
#define _GNU_SOURCE   /* renameat2, strndup, nftw */
#include "out.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/file.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct out_file {
    FILE *f;
    char *tmp, *final;
};

int out_mkdirs(const char *dir, char *err, size_t err_size)
{
    char *p = strdup(dir);
    if (!p) {
        snprintf(err, err_size, "%s: error: out of memory", dir);
        return -1;
    }
    for (char *s = p + 1; ; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                snprintf(err, err_size, "%s: error: cannot create directory: %s", p, strerror(errno));
                free(p);
                return -1;
            }
            *s = c;
            if (c == '\0')
                break;
        }
    }
    free(p);
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        snprintf(err, err_size, "%s: error: not a directory", dir);
        return -1;
    }
    return 0;
}

out_file *out_file_open(const char *dir, const char *name, char *err, size_t err_size)
{
    out_file *o = calloc(1, sizeof *o);
    size_t n = strlen(dir) + strlen(name) + 64;
    if (!o || !(o->tmp = malloc(n)) || !(o->final = malloc(n))) {
        snprintf(err, err_size, "%s/%s: error: out of memory", dir, name);
        goto out_free;
    }
    snprintf(o->final, n, "%s/%s", dir, name);
    snprintf(o->tmp, n, "%s/.%s.tmp.%ld", dir, name, (long)getpid());
    o->f = fopen(o->tmp, "w");
    if (!o->f) {
        snprintf(err, err_size, "%s: error: cannot open for writing: %s", o->tmp, strerror(errno));
        goto out_free;
    }
    /* a trace writes tens of MB: 256 KiB a write(2) instead of 4 KiB
     * (stdio allocates the buffer and frees it at fclose) */
    setvbuf(o->f, NULL, _IOFBF, 1 << 18);
    return o;

out_free:
    if (o) {
        free(o->tmp);
        free(o->final);
        free(o);
    }
    return NULL;
}

FILE *out_file_stream(out_file *f) { return f->f; }

int out_file_commit(out_file *o, char *err, size_t err_size)
{
    int bad = ferror(o->f) || fflush(o->f) != 0;
    int saved = errno;
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    o->f = NULL;
    if (!bad && rename(o->tmp, o->final) != 0) {
        bad = 1;
        saved = errno;
    }
    if (bad) {
        snprintf(err, err_size, "%s: error: cannot write: %s", o->final, strerror(saved));
        unlink(o->tmp);
    }
    free(o->tmp);
    free(o->final);
    free(o);
    return bad ? -1 : 0;
}

void out_file_abort(out_file *o)
{
    if (!o)
        return;
    if (o->f)
        fclose(o->f);
    unlink(o->tmp);
    free(o->tmp);
    free(o->final);
    free(o);
}

/* ---- run folders committed as a whole ---- */

struct out_rundir {
    char *dir;     /* as the caller named it, for messages */
    char *real;    /* the folder replaced (symbolic links resolved) */
    char *work;    /* where the files are written */
    int   lock;    /* descriptor of the folder, flock'ed */
    int   fresh;   /* created by this call: written in place */
};

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

/* What a run folder may hold besides hidden temporaries: the run's files,
 * a sweep run's summary.csv and the figures of `dtsim plot`. */
static int ours(const char *name)
{
    static const char *const names[] = { "metrics.csv", "nodes.csv", "run.json", "trace.csv",
                                         "node_metrics.csv", "algorithm_nodes.csv", "summary.csv", "plots" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return name[0] == '.';
}

int out_rundir_previous(const char *dir, char *what, size_t size)
{
    struct dirent **list;
    int n_list = scandir(dir, &list, NULL, alphasort);   /* sorted: a stable message */
    if (n_list < 0)
        return 0;
    size_t len = 0;
    int found = 0;
    what[0] = '\0';
    for (int i = 0; i < n_list; i++) {
        const char *name = list[i]->d_name;
        if (name[0] != '.' && ours(name)) {
            found = 1;
            int n = len < size ? snprintf(what + len, size - len, "%s%s%s", len ? ", " : "",
                                          name, strcmp(name, "plots") == 0 ? "/" : "") : 0;
            if (n > 0)
                len += (size_t)n;
        }
        free(list[i]);
    }
    free(list);
    return found;
}

/* Checks what the old folder holds and removes the work folders of
 * writers that died (".BASE.tmp.PID" of a process that no longer exists). */
static int inspect(out_rundir *d, const char *parent, const char *base, char *err, size_t es)
{
    DIR *dp = opendir(d->real);
    if (!dp) {
        snprintf(err, es, "%s: error: cannot read directory: %s", d->dir, strerror(errno));
        return -1;
    }
    struct dirent *de;
    while ((de = readdir(dp)) != NULL)
        if (!ours(de->d_name)) {
            snprintf(err, es, "%s: error: holds \"%s\", which dtsim did not write; a run "
                     "replaces its folder as a whole, so choose another -o or move it away",
                     d->dir, de->d_name);
            closedir(dp);
            return -1;
        }
    closedir(dp);
    if (!(dp = opendir(parent)))
        return 0;
    size_t bl = strlen(base);
    while ((de = readdir(dp)) != NULL) {
        const char *n = de->d_name;
        if (n[0] != '.' || strncmp(n + 1, base, bl) != 0 || strncmp(n + 1 + bl, ".tmp.", 5))
            continue;
        char *end;
        long pid = strtol(n + bl + 6, &end, 10);
        if (*end || pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0
            || errno != ESRCH)
            continue;
        size_t len = strlen(parent) + strlen(n) + 2;
        char *p = malloc(len);
        if (p) {
            snprintf(p, len, "%s/%s", parent, n);
            rm_tree(p);
            free(p);
        }
    }
    closedir(dp);
    return 0;
}

static void dir_free(out_rundir *d)
{
    if (d->lock >= 0)
        close(d->lock);   /* releases the lock */
    free(d->dir);
    free(d->real);
    free(d->work);
    free(d);
}

out_rundir *out_rundir_begin(const char *dir, char *err, size_t es)
{
    out_rundir *d = calloc(1, sizeof *d);
    char *parent = NULL;
    if (!d || !(d->dir = strdup(dir))) {
        snprintf(err, es, "%s: error: out of memory", dir);
        free(d);
        return NULL;
    }
    d->lock = -1;
    /* the parents, then the folder itself: created now means ours alone */
    size_t len = strlen(d->dir);
    while (len > 1 && d->dir[len - 1] == '/')
        d->dir[--len] = '\0';
    char *slash = strrchr(d->dir, '/');
    const char *base = slash ? slash + 1 : d->dir;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        snprintf(err, es, "%s: error: a run replaces its folder as a whole: name a folder of "
                 "its own (e.g. -o results/NAME), not \".\", \"..\" or \"/\"", dir);
        goto out_fail;
    }
    if (slash) {
        *slash = '\0';
        int rc = slash == d->dir ? 0 : out_mkdirs(d->dir, err, es);
        *slash = '/';
        if (rc != 0)
            goto out_fail;
    }
    if (mkdir(d->dir, 0777) == 0) {
        d->fresh = 1;
    } else if (errno != EEXIST) {
        snprintf(err, es, "%s: error: cannot create directory: %s", dir, strerror(errno));
        goto out_fail;
    }
    d->lock = open(d->dir, O_RDONLY | O_DIRECTORY);
    if (d->lock < 0) {
        snprintf(err, es, "%s: error: %s", dir, errno == ENOTDIR ? "not a directory"
                 : strerror(errno));
        goto out_fail;
    }
    if (flock(d->lock, LOCK_EX | LOCK_NB) != 0) {
        snprintf(err, es, errno == EWOULDBLOCK
                 ? "%s: error: another dtsim run is writing into this folder (it is locked); "
                   "wait for it to end or choose another -o"
                 : "%s: error: cannot lock the folder: %s", dir, strerror(errno));
        goto out_fail;
    }
    if (d->fresh) {
        if (!(d->work = strdup(d->dir)))
            goto out_oom;
        return d;
    }
    /* an existing folder: write a hidden sibling, swap it in at commit */
    char cwd[4096];
    if (!(d->real = realpath(d->dir, NULL)))
        goto out_oom;
    if (strcmp(d->real, "/") == 0
        || (getcwd(cwd, sizeof cwd) && strcmp(cwd, d->real) == 0)) {
        snprintf(err, es, "%s: error: a run replaces its folder as a whole: name a folder of "
                 "its own, not the current directory", dir);
        goto out_fail;
    }
    slash = strrchr(d->real, '/');
    if (!(parent = slash == d->real ? strdup("/") : strndup(d->real, (size_t)(slash - d->real))))
        goto out_oom;
    if (inspect(d, parent, slash + 1, err, es) != 0)
        goto out_fail;
    len = strlen(d->real) + 32;
    if (!(d->work = malloc(len)))
        goto out_oom;
    snprintf(d->work, len, "%s/.%s.tmp.%ld", parent, slash + 1, (long)getpid());
    rm_tree(d->work);
    if (mkdir(d->work, 0777) != 0) {
        snprintf(err, es, "%s: error: cannot create directory: %s", d->work, strerror(errno));
        goto out_fail;
    }
    free(parent);
    return d;

out_oom:
    snprintf(err, es, "%s: error: %s", dir, errno == ENOMEM || errno == 0 ? "out of memory"
             : strerror(errno));
out_fail:
    free(parent);
    dir_free(d);
    return NULL;
}

const char *out_rundir_path(const out_rundir *d) { return d->work; }

int out_rundir_commit(out_rundir *d, char *err, size_t es)
{
    int rc = 0;
    if (!d->fresh) {
        /* one atomic swap where the file system has it; else two renames
         * (between them the folder is absent, never half of two runs) */
        if (renameat2(AT_FDCWD, d->work, AT_FDCWD, d->real, RENAME_EXCHANGE) != 0) {
            int e = errno;
            size_t len = strlen(d->work) + 8;
            char *old = malloc(len);
            if (!old || (e != EINVAL && e != ENOSYS)) {
                errno = old ? e : ENOMEM;
                rc = -1;
            } else {
                snprintf(old, len, "%s.old", d->work);
                rm_tree(old);
                if (rename(d->real, old) != 0 || rename(d->work, d->real) != 0)
                    rc = -1;
                else
                    rm_tree(old);
            }
            free(old);
            if (rc != 0)
                snprintf(err, es, "%s: error: cannot rename %s into place: %s", d->dir,
                         d->work, strerror(errno));
        }
        rm_tree(d->work);   /* the old run, or what failed to replace it */
    }
    dir_free(d);
    return rc;
}

void out_rundir_abort(out_rundir *d)
{
    if (!d)
        return;
    rm_tree(d->work);   /* the hidden sibling, or the folder this run created */
    dir_free(d);
}
