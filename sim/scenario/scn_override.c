/* scn_override.c -- `--set PATH=VALUE`: walks a dotted path or a JSON
 * pointer into the scenario tree, creating missing objects, and sets the
 * value (JSON, or a plain string when the text is not JSON).  Applied
 * before validation, so a bad value gets the normal pointer error.
 */
#include "scn_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- --set overrides ---------------------------------------------------- */

static int set_fail(scn_ctx *c, const char *arg, const char *fmt, ...)
{
    char msg[sizeof c->err->msg];
    va_list ap;

    va_start(ap, fmt);
    if (vsnprintf(msg, sizeof msg, fmt, ap) < 0)
        msg[0] = '\0';
    va_end(ap);
    if (snprintf(c->err->msg, sizeof c->err->msg, "--set %s: error: %s", arg, msg) < 0)
        c->err->msg[0] = '\0';
    return -1;
}

/* Splits path in place into segments (dotted, or a JSON pointer with ~0
 * and ~1 escapes).  Returns the count, or -1 with the error set. */
static int split_path(scn_ctx *c, const char *arg, char *path, char **seg, int max)
{
    int pointer = path[0] == '/', n = 0;
    char sep = pointer ? '/' : '.', *q = pointer ? path + 1 : path;

    for (;;) {
        char *end = strchr(q, sep);
        if (end)
            *end = '\0';
        if (*q == '\0')
            return set_fail(c, arg, "empty key in path");
        if (n == max)
            return set_fail(c, arg, "path is deeper than %d keys", max);
        if (pointer) {
            char *r = q, *w = q;
            for (; *r; r++) {
                if (*r != '~') {
                    *w++ = *r;
                } else if (r[1] == '0' || r[1] == '1') {
                    *w++ = r[1] == '0' ? '~' : '/';
                    r++;
                } else {
                    return set_fail(c, arg,
                                    "bad escape in JSON pointer (use ~0 for ~ and ~1 for /)");
                }
            }
            *w = '\0';
        }
        seg[n++] = q;
        if (!end)
            return n;
        q = end + 1;
    }
}

/* Array index per RFC 6901: digits, no leading zero. */
static int parse_index(const char *t, size_t *out)
{
    size_t x = 0;

    if (!*t || (t[0] == '0' && t[1]))
        return -1;
    for (; *t; t++) {
        if (*t < '0' || *t > '9' || x > (SIZE_MAX - 9) / 10)
            return -1;
        x = x * 10 + (size_t)(*t - '0');
    }
    *out = x;
    return 0;
}

/* The value of an override: JSON if it parses; otherwise the text as a
 * string, unless it starts like a JSON object, array or string. */
static json_t *override_value(scn_ctx *c, const char *arg, const char *text)
{
    const char *t = text + strspn(text, " \t\n\r");
    json_error_t je;
    json_t *v = json_loads(text, LOAD_FLAGS, &je);

    if (v)
        return v;
    if (*t == '{' || *t == '[' || *t == '"') {
        set_fail(c, arg, "invalid JSON value: %s", je.text);
        return NULL;
    }
    /* A number JSON cannot hold (1e999, an integer beyond 64 bits) is an
     * error, not a string: "must be a number, got string" would mislead. */
    if ((*t >= '0' && *t <= '9') || *t == '-' || *t == '+' || *t == '.') {
        char *end;
        (void)strtod(t, &end);
        if (end != t && *(end + strspn(end, " \t\n\r")) == '\0') {
            set_fail(c, arg, "invalid JSON value: %s", je.text);
            return NULL;
        }
    }
    v = json_string(text);
    if (!v)
        set_fail(c, arg, "value is not valid UTF-8");
    return v;
}

/* Index seg into array arr (at pointer ptr), which must have it. */
static int array_index(scn_ctx *c, const char *arg, json_t *arr, const char *ptr,
                       const char *seg, size_t *idx)
{
    char q[128];

    if (parse_index(seg, idx))
        return set_fail(c, arg, "%s is an array, and %s is not an index", ptr,
                        scn_i_quoted(q, sizeof q, seg));
    if (*idx >= json_array_size(arr))
        return set_fail(c, arg, "%s has no element %zu (it has %zu)", ptr, *idx,
                        json_array_size(arr));
    return 0;
}

/* The object or array that seg[n - 1] names a slot of: walks seg[0..n-2]
 * from root, creating missing objects; ptr receives its pointer.  NULL
 * with the error set. */
static json_t *walk(scn_ctx *c, const char *arg, json_t *root, char *const *seg, int n,
                    char *ptr)
{
    json_t *cur = root;

    ptr[0] = '\0';
    for (int i = 0;; i++) {
        json_t *next;
        size_t idx;

        if (!json_is_object(cur) && !json_is_array(cur)) {
            set_fail(c, arg, "%s is %s, not an object or array", ptr, scn_i_type_with_article(cur));
            return NULL;
        }
        if (i == n - 1)
            return cur;
        if (json_is_array(cur)) {
            if (array_index(c, arg, cur, ptr, seg[i], &idx))
                return NULL;
            next = json_array_get(cur, idx);
        } else if (!(next = json_object_get(cur, seg[i]))) {
            if (json_object_set_new(cur, seg[i], next = json_object())) {
                scn_i_fail_oom(c);
                return NULL;
            }
        }
        scn_i_ptr_key(ptr, ptr, seg[i]);
        cur = next;
    }
}

int scn_i_apply_override(scn_ctx *c, json_t *root, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char *path, *seg[64], ptr[PTR_MAX];
    json_t *parent, *val;
    int n, rc = -1;
    size_t idx;

    if (!eq)
        return set_fail(c, arg, "expected PATH=VALUE");
    if (eq == arg)
        return set_fail(c, arg, "empty path");
    if (!(path = strndup(arg, (size_t)(eq - arg))))
        return scn_i_fail_oom(c);
    if ((n = split_path(c, arg, path, seg, (int)(sizeof seg / sizeof *seg))) < 0 ||
        !(parent = walk(c, arg, root, seg, n, ptr)) || !(val = override_value(c, arg, eq + 1)))
        goto out_free_path;
    if (json_is_object(parent)) {
        /* the setters take val even when they fail */
        rc = json_object_set_new(parent, seg[n - 1], val) ? scn_i_fail_oom(c) : 0;
    } else if (array_index(c, arg, parent, ptr, seg[n - 1], &idx) == 0) {
        rc = json_array_set_new(parent, idx, val) ? scn_i_fail_oom(c) : 0;
    } else {
        json_decref(val);
    }
out_free_path:
    free(path);
    return rc;
}
