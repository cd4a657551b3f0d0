/* scn_canon.c -- JSON text in canonical compact form: object keys sorted,
 * no spaces, strings escaped as Jansson reads them, reals in the shortest
 * form that reads back exactly (integers as integers), so that the resolved
 * scenario is the same bytes for the same scenario.  It writes text only;
 * which keys the resolved scenario holds is scn_resolved.c's business.
 */
#include "scn_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
    char  *p;
    size_t len, cap;
    int    oom;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *p;
        while (b->len + n + 1 > cap)
            cap *= 2;
        if (!(p = realloc(b->p, cap))) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void put_string(buf *b, const char *s)
{
    puts_(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        const char *se = scn_i_short_escape(ch);
        char e[8];
        if (se) {
            put(b, se, 2);
        } else if (ch < 0x20) {
            snprintf(e, sizeof e, "\\u%04x", ch);
            puts_(b, e);
        } else {
            put(b, s, 1);
        }
    }
    puts_(b, "\"");
}

/* Shortest text that reads back as exactly x (so 0.1 prints as 0.1, not
 * 0.10000000000000001), in Jansson's style: always a '.' or an exponent,
 * exponent without '+' or leading zeros.  Plain notation from 1e-4 up to
 * below 1e7, exponent notation outside. */
static void put_real(buf *b, double x)
{
    char t[40], out[40], *e;
    size_t k = 0;
    int prec = 1;

    for (; prec < 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, x);
        if (strtod(t, NULL) == x)
            break;
    }
    snprintf(t, sizeof t, "%.*g", prec, x);
    e = strchr(t, 'e');
    if (e && atoi(e + 1) >= 0 && atoi(e + 1) < 7) {
        /* 10 as "10.0", not "1e1": plain notation below 10^7 */
        snprintf(t, sizeof t, "%.*g", atoi(e + 1) + 1, x);
        e = strchr(t, 'e');
    }
    if (!e) {
        puts_(b, t);
        if (!strchr(t, '.'))
            puts_(b, ".0");
        return;
    }
    memcpy(out, t, (size_t)(e - t));
    k = (size_t)(e - t);
    out[k++] = 'e';
    e++;
    if (*e == '+' || *e == '-') {
        if (*e == '-')
            out[k++] = '-';
        e++;
    }
    while (*e == '0' && e[1])
        e++;
    strcpy(out + k, e);
    puts_(b, out);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Compact JSON with keys sorted bytewise (like JSON_SORT_KEYS). */
static void dump(buf *b, json_t *v)
{
    char t[32];

    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v), i = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        const char *k;
        json_t *x;
        if (!keys) {
            b->oom = 1;
            return;
        }
        json_object_foreach(v, k, x)
            keys[i++] = k;
        qsort(keys, n, sizeof *keys, cmp_str);
        puts_(b, "{");
        for (i = 0; i < n; i++) {
            if (i)
                puts_(b, ",");
            put_string(b, keys[i]);
            puts_(b, ":");
            dump(b, json_object_get(v, keys[i]));
        }
        puts_(b, "}");
        free(keys);
        break;
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *x;
        puts_(b, "[");
        json_array_foreach(v, i, x) {
            if (i)
                puts_(b, ",");
            dump(b, x);
        }
        puts_(b, "]");
        break;
    }
    case JSON_STRING:
        put_string(b, json_string_value(v));
        break;
    case JSON_INTEGER:
        snprintf(t, sizeof t, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        puts_(b, t);
        break;
    case JSON_REAL:
        put_real(b, json_real_value(v));
        break;
    case JSON_TRUE:
        puts_(b, "true");
        break;
    case JSON_FALSE:
        puts_(b, "false");
        break;
    default:
        puts_(b, "null");
        break;
    }
}

char *scn_i_canonical(json_t *v)
{
    buf b = {0};

    dump(&b, v);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
