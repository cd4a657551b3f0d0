/* scn_util.c -- the scenario loader's shared helpers: GNU-form error
 * messages with JSON pointers, quoting, type names, and readers of optional
 * keys (objects, numbers with range rules, integers, strings) that report
 * what was found and what is allowed.  It validates no particular key.
 */
#include "scn_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int scn_i_fail(scn_ctx *c, const char *ptr, const char *fmt, ...)
{
    char msg[sizeof c->err->msg];
    va_list ap;

    va_start(ap, fmt);
    if (vsnprintf(msg, sizeof msg, fmt, ap) < 0)
        msg[0] = '\0';
    va_end(ap);
    if (snprintf(c->err->msg, sizeof c->err->msg, "%s: %s: error: %s", c->path,
                 ptr[0] ? ptr : "/", msg) < 0)
        c->err->msg[0] = '\0';
    return -1;
}

int scn_i_fail_oom(scn_ctx *c)
{
    if (snprintf(c->err->msg, sizeof c->err->msg, "%s: error: out of memory", c->path) < 0)
        c->err->msg[0] = '\0';
    return -1;
}

/* JSON's two-character escape of ch, or NULL. */
const char *scn_i_short_escape(unsigned char ch)
{
    switch (ch) {
    case '"':  return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default:   return NULL;
    }
}

/* s as a JSON string literal (quotes, escapes), truncated to fit out. */
const char *scn_i_quoted(char *out, size_t n, const char *s)
{
    size_t k = 0;

    out[k++] = '"';
    for (; *s && k + 8 < n; s++) {
        unsigned char ch = (unsigned char)*s;
        const char *e = scn_i_short_escape(ch);
        if (e) {
            out[k++] = e[0];
            out[k++] = e[1];
        } else if (ch < 0x20) {
            k += (size_t)snprintf(out + k, n - k, "\\u%04x", ch);
        } else {
            out[k++] = (char)ch;
        }
    }
    out[k++] = '"';
    out[k] = '\0';
    return out;
}

void scn_i_ptr_key(char *out, const char *base, const char *key)
{
    size_t k = strlen(base);

    memmove(out, base, k);   /* out may be base */
    if (k + 1 < PTR_MAX)
        out[k++] = '/';
    for (; *key && k + 2 < PTR_MAX; key++) {
        if (*key == '~' || *key == '/') {
            out[k++] = '~';
            out[k++] = *key == '~' ? '0' : '1';
        } else {
            out[k++] = *key;
        }
    }
    out[k] = '\0';
}

void scn_i_ptr_idx(char *out, const char *base, size_t i)
{
    if (snprintf(out, PTR_MAX, "%s/%zu", base, i) < 0)
        out[0] = '\0';
}

const char *scn_i_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:  return "object";
    case JSON_ARRAY:   return "array";
    case JSON_STRING:  return "string";
    case JSON_INTEGER:
    case JSON_REAL:    return "number";
    case JSON_TRUE:
    case JSON_FALSE:   return "boolean";
    default:           return "null";
    }
}

const char *scn_i_type_with_article(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:  return "an object";
    case JSON_ARRAY:   return "an array";
    case JSON_STRING:  return "a string";
    case JSON_INTEGER:
    case JSON_REAL:    return "a number";
    case JSON_TRUE:
    case JSON_FALSE:   return "a boolean";
    default:           return "null";
    }
}

int scn_i_in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(s, *list) == 0)
            return 1;
    return 0;
}

void scn_i_join(char *out, size_t n, const char *const *list)
{
    size_t k = 0;

    out[0] = '\0';
    for (; *list && k < n; list++) {
        int w = snprintf(out + k, n - k, "%s%s", k ? ", " : "", *list);
        if (w < 0)
            break;
        k += (size_t)w;
    }
}

/* Rejects keys of obj (NULL: absent, nothing to check) not in keys. */
int scn_i_check_keys(scn_ctx *c, json_t *obj, const char *ptr, const char *const *keys)
{
    const char *k;
    json_t *v;

    if (!obj)
        return 0;
    json_object_foreach(obj, k, v) {
        if (!scn_i_in_list(k, keys)) {
            char q[256], list[512];
            scn_i_join(list, sizeof list, keys);
            return scn_i_fail(c, ptr, "unknown key %s (expected one of: %s)",
                        scn_i_quoted(q, sizeof q, k), list);
        }
    }
    return 0;
}

/* Keys valid in the object but not with this kind (field "kind" or "dist"). */
int scn_i_kind_keys(scn_ctx *c, json_t *obj, const char *ptr, const char *const *allowed,
                     const char *field, const char *kind)
{
    const char *k;
    json_t *v;

    if (!obj)
        return 0;
    json_object_foreach(obj, k, v) {
        if (!scn_i_in_list(k, allowed)) {
            char q[256];
            return scn_i_fail(c, ptr, "key \"%s\" is not allowed with %s %s", k, field,
                        scn_i_quoted(q, sizeof q, kind));
        }
    }
    return 0;
}

/* why: NULL, or what makes the key required ("for kind \"torus2d\""). */
int scn_i_need_key(scn_ctx *c, json_t *obj, const char *ptr, const char *key, const char *why)
{
    if (obj && json_object_get(obj, key))
        return 0;
    return scn_i_fail(c, ptr, "missing required key \"%s\"%s%s", key, why ? " " : "", why ? why : "");
}

/* Index of name in names, or -1 with "unknown WHAT ..." reported at ptr. */
int scn_i_lookup(scn_ctx *c, const char *ptr, const char *what, const char *name,
                  const char *const *names)
{
    char q[256], list[512];

    for (int i = 0; names[i]; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    scn_i_join(list, sizeof list, names);
    scn_i_fail(c, ptr, "unknown %s %s (expected one of: %s)", what, scn_i_quoted(q, sizeof q, name), list);
    return -1;
}

/* Child object obj[key]; *out NULL when obj or the key is absent.  cptr
 * receives the child's pointer either way. */
int scn_i_opt_obj(scn_ctx *c, json_t *obj, const char *optr, const char *key,
                   json_t **out, char *cptr)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;

    scn_i_ptr_key(cptr, optr, key);
    *out = NULL;
    if (!v)
        return 0;
    if (!json_is_object(v))
        return scn_i_fail(c, cptr, "must be an object, got %s", scn_i_type_name(v));
    *out = v;
    return 0;
}


int scn_i_check_rule(scn_ctx *c, const char *ptr, double x, enum scn_i_rule r)
{
    switch (r) {
    case GT0:
        if (!(x > 0))
            return scn_i_fail(c, ptr, "must be > 0, got %g", x);
        break;
    case GE0:
        if (!(x >= 0))
            return scn_i_fail(c, ptr, "must be >= 0, got %g", x);
        break;
    case UNIT:
        if (!(x > 0 && x <= 1))
            return scn_i_fail(c, ptr, "must be in (0, 1], got %g", x);
        break;
    }
    return 0;
}

/* obj[key] or NULL when obj or the key is absent; sets *present (may be
 * NULL) and the key's pointer p. */
static json_t *optional(json_t *obj, const char *optr, const char *key, int *present, char *p)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;

    if (present)
        *present = v != NULL;
    scn_i_ptr_key(p, optr, key);
    return v;
}

/* Number at obj[key]; *out keeps its default when absent.  present may
 * be NULL. */
int scn_i_opt_num(scn_ctx *c, json_t *obj, const char *optr, const char *key, enum scn_i_rule r,
                   double *out, int *present)
{
    char p[PTR_MAX];
    json_t *v = optional(obj, optr, key, present, p);

    if (!v)
        return 0;
    if (!json_is_number(v))
        return scn_i_fail(c, p, "must be a number, got %s", scn_i_type_name(v));
    if (scn_i_check_rule(c, p, json_number_value(v), r))
        return -1;
    *out = json_number_value(v);
    return 0;
}

/* An integer in [min, max] from v.  A real with an integral value (1e4)
 * is accepted: JSON does not distinguish them and people write 1e4. */
int scn_i_int_value(scn_ctx *c, const char *ptr, json_t *v, long long min, long long max,
                     long long *out)
{
    if (json_is_integer(v)) {
        long long x = json_integer_value(v);
        if (x < min)
            return scn_i_fail(c, ptr, "must be >= %lld, got %lld", min, x);
        if (x > max)
            return scn_i_fail(c, ptr, "must be <= %lld, got %lld", max, x);
        *out = x;
        return 0;
    }
    if (json_is_real(v)) {
        double x = json_real_value(v);
        if (x != floor(x))
            return scn_i_fail(c, ptr, "must be an integer, got %g", x);
        if (x < (double)min)
            return scn_i_fail(c, ptr, "must be >= %lld, got %g", min, x);
        /* (double)LLONG_MAX rounds up to 2^63, which does not fit */
        if (x > (double)max || x >= 0x1p63)
            return scn_i_fail(c, ptr, "must be <= %lld, got %g", max, x);
        *out = (long long)x;
        return 0;
    }
    return scn_i_fail(c, ptr, "must be an integer, got %s", scn_i_type_name(v));
}

int scn_i_opt_int(scn_ctx *c, json_t *obj, const char *optr, const char *key,
                   long long min, long long max, long long *out, int *present)
{
    char p[PTR_MAX];
    json_t *v = optional(obj, optr, key, present, p);

    if (!v)
        return 0;
    return scn_i_int_value(c, p, v, min, max, out);
}

int scn_i_opt_str(scn_ctx *c, json_t *obj, const char *optr, const char *key,
                   const char **out, int *present)
{
    char p[PTR_MAX];
    json_t *v = optional(obj, optr, key, present, p);

    if (!v)
        return 0;
    if (!json_is_string(v))
        return scn_i_fail(c, p, "must be a string, got %s", scn_i_type_name(v));
    *out = json_string_value(v);
    return 0;
}

int scn_i_set_str(scn_ctx *c, char **dst, const char *src)
{
    *dst = strdup(src);
    return *dst ? 0 : scn_i_fail_oom(c);
}

const char *scn_i_dflt(int present)
{
    return present ? "" : " (the default)";
}

/* A boolean key; *out untouched when absent. */
int scn_i_opt_bool(scn_ctx *c, json_t *obj, const char *optr, const char *key, int *out)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    char p[PTR_MAX];

    if (!v)
        return 0;
    scn_i_ptr_key(p, optr, key);
    if (!json_is_boolean(v))
        return scn_i_fail(c, p, "must be true or false, got %s", scn_i_type_name(v));
    *out = json_is_true(v);
    return 0;
}
