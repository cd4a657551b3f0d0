/* out_json.c -- the one JSON writer of dtsim: a streaming writer of
 * objects, arrays, strings, numbers and raw text onto a FILE, indented
 * (run.json, sweep.json) or compact (the canonical resolved scenario).  It
 * neither parses JSON nor sorts keys: values come out in the order given.
 */
#include "out.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* JSON's two-character escapes for '"', '\\', '\b', '\f', '\n', '\r' and
 * '\t' (as Jansson writes them), \u00XX for the other control characters;
 * everything else, UTF-8 included, as is. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':  fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p == '\b')
                fputs("\\b", f);
            else if (*p == '\f')
                fputs("\\f", f);
            else if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void begin_value(out_json *j, const char *key)
{
    if (j->need_comma[j->depth])
        fputc(',', j->f);
    j->need_comma[j->depth] = 1;
    if (j->depth > 0 && !j->compact) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    if (key) {
        put_string(j->f, key);
        fputs(j->compact ? ":" : ": ", j->f);
    }
}

void out_json_init(out_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->compact = 0;
    for (int i = 0; i < 32; i++)
        j->need_comma[i] = 0;
}

void out_json_init_compact(out_json *j, FILE *f)
{
    out_json_init(j, f);
    j->compact = 1;
}

static void open_container(out_json *j, const char *key, char c)
{
    begin_value(j, key);
    fputc(c, j->f);
    assert(j->depth < 31);
    j->depth++;
    j->need_comma[j->depth] = 0;
}

static void close_container(out_json *j, char c)
{
    int had = j->need_comma[j->depth];
    j->depth--;
    if (had && !j->compact) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    fputc(c, j->f);
}

void out_json_begin_object(out_json *j, const char *key) { open_container(j, key, '{'); }
void out_json_end_object(out_json *j) { close_container(j, '}'); }
void out_json_begin_array(out_json *j, const char *key) { open_container(j, key, '['); }
void out_json_end_array(out_json *j) { close_container(j, ']'); }

void out_json_string(out_json *j, const char *key, const char *v)
{
    begin_value(j, key);
    if (v)
        put_string(j->f, v);
    else
        fputs("null", j->f);
}

void out_json_number(out_json *j, const char *key, double v)
{
    begin_value(j, key);
    if (isfinite(v))
        fprintf(j->f, "%.17g", v);
    else
        fputs("null", j->f);
}

/* Shortest text that reads back as exactly x (so 0.1 prints as 0.1, not
 * 0.10000000000000001), in Jansson's style: always a '.' or an exponent,
 * exponent without '+' or leading zeros.  Plain notation from 1e-4 up to
 * below 1e7, exponent notation outside. */
static void put_real(FILE *f, double x)
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
        fputs(t, f);
        if (!strchr(t, '.'))
            fputs(".0", f);
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
    fputs(out, f);
}

void out_json_real(out_json *j, const char *key, double v)
{
    begin_value(j, key);
    if (isfinite(v))
        put_real(j->f, v);
    else
        fputs("null", j->f);
}

void out_json_int(out_json *j, const char *key, int64_t v)
{
    begin_value(j, key);
    fprintf(j->f, "%" PRId64, v);
}

void out_json_bool(out_json *j, const char *key, int v)
{
    begin_value(j, key);
    fputs(v ? "true" : "false", j->f);
}

void out_json_raw(out_json *j, const char *key, const char *text)
{
    begin_value(j, key);
    fputs(text ? text : "null", j->f);
}

void out_json_finish(out_json *j) { fputc('\n', j->f); }
