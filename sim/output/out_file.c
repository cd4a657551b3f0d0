/* out_file.c -- files that appear complete or not at all: everything is
 * written to a hidden temporary name in the target directory and renamed
 * over the final name once flushed and synced, so a crash or a kill leaves
 * either the old file or the new one, never half of one.  It does not
 * decide what is written.
 */
#include "out.h"

#include <errno.h>
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
    int bad = ferror(o->f) || fflush(o->f) != 0 || fsync(fileno(o->f)) != 0;
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
