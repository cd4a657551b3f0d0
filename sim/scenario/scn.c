/* scn.c -- the entry points of the scenario module: reads the file with
 * Jansson (duplicate keys rejected), then runs the three stages in order:
 * --set overrides (scn_override.c), validation with defaults
 * (scn_validate.c) and the resolved text (scn_resolved.c).  Every error
 * becomes one line in GNU form in the caller's scn_error; the first error
 * found ends the load.  It builds nothing the scenario describes.
 */
#include "scn_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- entry points ------------------------------------------------------- */

static void syntax_error(scn_error *err, const char *path, const json_error_t *je)
{
    int w;

    if (je->line > 0 && je->column > 0)
        w = snprintf(err->msg, sizeof err->msg, "%s:%d:%d: error: %s", path, je->line,
                     je->column, je->text);
    else if (je->line > 0)
        w = snprintf(err->msg, sizeof err->msg, "%s:%d: error: %s", path, je->line, je->text);
    else
        w = snprintf(err->msg, sizeof err->msg, "%s: error: %s", path, je->text);
    if (w < 0)
        err->msg[0] = '\0';
}

/* Takes ownership of root. */
static int load_tree(json_t *root, const char *path, const char *const *overrides,
                     size_t n_overrides, scn_scenario *s, scn_error *err)
{
    scn_ctx c = {path, err};
    int rc = -1;

    if (!json_is_object(root)) {
        scn_i_fail(&c, "", "must be an object, got %s", scn_i_type_name(root));
        goto out;
    }
    for (size_t i = 0; i < n_overrides; i++)
        if (scn_i_apply_override(&c, root, overrides[i]))
            goto out;
    if (scn_i_set_str(&c, &s->path, path) || scn_i_validate(&c, root, s) || scn_i_resolve(&c, s))
        goto out;
    rc = 0;
out:
    json_decref(root);
    if (rc)
        scn_fini(s);
    return rc;
}

int scn_load_string(const char *text, const char *path, const char *const *overrides,
                    size_t n_overrides, scn_scenario *s, scn_error *err)
{
    json_error_t je;
    json_t *root;

    memset(s, 0, sizeof *s);
    err->msg[0] = '\0';
    if (!path)
        path = "<string>";
    if (!(root = json_loads(text, LOAD_FLAGS, &je))) {
        syntax_error(err, path, &je);
        return -1;
    }
    return load_tree(root, path, overrides, n_overrides, s, err);
}

int scn_load(const char *path, const char *const *overrides, size_t n_overrides,
             scn_scenario *s, scn_error *err)
{
    json_error_t je;
    json_t *root;
    FILE *f;
    int read_err;

    memset(s, 0, sizeof *s);
    err->msg[0] = '\0';
    if (!(f = fopen(path, "rb"))) {
        snprintf(err->msg, sizeof err->msg, "%s: error: cannot open: %s", path, strerror(errno));
        return -1;
    }
    errno = 0;
    root = json_loadf(f, LOAD_FLAGS, &je);
    read_err = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    if (read_err) {
        json_decref(root);
        snprintf(err->msg, sizeof err->msg, "%s: error: cannot read: %s", path,
                 strerror(read_err));
        return -1;
    }
    if (!root) {
        syntax_error(err, path, &je);
        return -1;
    }
    return load_tree(root, path, overrides, n_overrides, s, err);
}

void scn_fini(scn_scenario *s)
{
    for (size_t i = 0; i < s->n_groups; i++)
        free(s->groups[i].nodes);
    free(s->groups);
    for (size_t i = 0; i < s->n_slowdowns; i++) {
        free(s->slowdowns[i].nodes);
        free(s->slowdowns[i].file);
        free(s->slowdowns[i].points);
    }
    free(s->slowdowns);
    for (size_t i = 0; i < s->n_faults; i++) {
        free(s->faults[i].nodes);
        free(s->faults[i].file);
        free(s->faults[i].points);
    }
    free(s->faults);
    free(s->freeze_after);
    for (size_t i = 0; i < s->n_nics; i++) {
        free(s->nics[i].nodes);
        free(s->nics[i].servers.ks);
    }
    free(s->nics);
    for (size_t i = 0; i < s->n_links; i++) {
        free(s->links[i].from);
        free(s->links[i].to);
        free(s->links[i].from_servers.ks);
        free(s->links[i].to_servers.ks);
        free(s->links[i].props.outages);
    }
    free(s->links);
    free(s->link.outages);
    free(s->path);
    free(s->topo_file);
    free(s->data_train_images);
    free(s->data_train_labels);
    free(s->data_test_images);
    free(s->data_test_labels);
    free(s->data_dir);
    free(s->data_train_file);
    free(s->data_test_file);
    free(s->algorithm);
    for (size_t i = 0; i < s->n_alg_params; i++) {
        free(s->alg_params[i].key);
        free(s->alg_params[i].str);
    }
    free(s->alg_params);
    free(s->resolved_json);
    memset(s, 0, sizeof *s);
}
