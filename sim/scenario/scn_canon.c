/* scn_canon.c -- JSON text in canonical compact form: object keys sorted,
 * no spaces, strings escaped as Jansson reads them, reals in the shortest
 * form that reads back exactly (integers as integers), so that the resolved
 * scenario is the same bytes for the same scenario.  The text is written by
 * sim/output's JSON writer (out_json, compact mode); this file only walks
 * the tree in sorted-key order.  Which keys the resolved scenario holds is
 * scn_resolved.c's business.
 */
#include "scn_internal.h"
#include "out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Compact JSON with keys sorted bytewise (like JSON_SORT_KEYS). */
static void dump(out_json *j, const char *key, json_t *v, int *oom)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v), i = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        const char *k;
        json_t *x;
        if (!keys) {
            *oom = 1;
            return;
        }
        json_object_foreach(v, k, x)
            keys[i++] = k;
        qsort(keys, n, sizeof *keys, cmp_str);
        out_json_begin_object(j, key);
        for (i = 0; i < n; i++)
            dump(j, keys[i], json_object_get(v, keys[i]), oom);
        out_json_end_object(j);
        free(keys);
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *x;
        out_json_begin_array(j, key);
        json_array_foreach(v, i, x)
            dump(j, NULL, x, oom);
        out_json_end_array(j);
        break;
    }
    case JSON_STRING:
        out_json_string(j, key, json_string_value(v));
        break;
    case JSON_INTEGER:
        out_json_int(j, key, (int64_t)json_integer_value(v));
        break;
    case JSON_REAL:
        out_json_real(j, key, json_real_value(v));
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        out_json_bool(j, key, json_is_true(v));
        break;
    default:
        out_json_raw(j, key, "null");
        break;
    }
}

char *scn_i_canonical(json_t *v)
{
    char *text = NULL;
    size_t len = 0;
    int oom = 0;
    FILE *f = open_memstream(&text, &len);

    if (!f)
        return NULL;
    out_json j;
    out_json_init_compact(&j, f);
    dump(&j, NULL, v, &oom);
    if (ferror(f))
        oom = 1;
    if (fclose(f) != 0)
        oom = 1;
    if (oom) {
        free(text);
        return NULL;
    }
    return text;
}
