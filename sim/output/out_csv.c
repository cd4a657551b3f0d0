/* out_csv.c -- the text formats of dtsim's outputs: the columns of
 * metrics.csv, nodes.csv and trace.csv (one header line, units in the
 * names) and a minimal streaming JSON writer for run.json.  Numbers are printed with
 * %.10g so that equal runs give equal bytes.  It does not open files.
 */
#include "out.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

void out_fmt_double(FILE *f, double v)
{
    if (isnan(v))
        fputs("nan", f);
    else if (isinf(v))
        fputs(v > 0 ? "inf" : "-inf", f);
    else
        fprintf(f, "%.10g", v);
}

void out_csv_field(FILE *f, const char *t)
{
    if (!t[strcspn(t, ",\"\r\n")]) {
        fputs(t, f);
        return;
    }
    fputc('"', f);
    for (; *t; t++) {
        if (*t == '"')
            fputc('"', f);
        fputc(*t, f);
    }
    fputc('"', f);
}

void out_metrics_header(FILE *f)
{
    fputs("time_s,steps,epochs,train_loss,test_loss,test_accuracy,"
          "consensus_distance,bytes_sent\n", f);
}

void out_metrics_write(FILE *f, const out_metrics_row *r)
{
    out_fmt_double(f, r->time_s);
    fprintf(f, ",%" PRIu64 ",", r->steps);
    out_fmt_double(f, r->epochs);
    fputc(',', f);
    out_fmt_double(f, r->train_loss);
    fputc(',', f);
    out_fmt_double(f, r->test_loss);
    fputc(',', f);
    out_fmt_double(f, r->test_accuracy);
    fputc(',', f);
    out_fmt_double(f, r->consensus_distance);
    fputc(',', f);
    out_fmt_double(f, r->bytes_sent);
    fputc('\n', f);
}

void out_nodes_header(FILE *f)
{
    fputs("node,slowdown,steps,compute_s,idle_s,uplink_busy_s,bytes_sent,"
          "bytes_received,msgs_sent,msgs_received,network_s,down_s,msgs_lost,"
          "steps_lost\n", f);
}

void out_nodes_write(FILE *f, const out_node_row *r)
{
    fprintf(f, "%d,", r->node);
    out_fmt_double(f, r->slowdown);
    fprintf(f, ",%" PRIu64 ",", r->steps);
    out_fmt_double(f, r->compute_s);
    fputc(',', f);
    out_fmt_double(f, r->idle_s);
    fputc(',', f);
    out_fmt_double(f, r->uplink_busy_s);
    fputc(',', f);
    out_fmt_double(f, r->bytes_sent);
    fputc(',', f);
    out_fmt_double(f, r->bytes_received);
    fprintf(f, ",%" PRIu64 ",%" PRIu64 ",", r->msgs_sent, r->msgs_received);
    out_fmt_double(f, r->network_s);
    fputc(',', f);
    out_fmt_double(f, r->down_s);
    fprintf(f, ",%" PRIu64 ",%" PRIu64 "\n", r->msgs_lost, r->steps_lost);
}

void out_trace_header(FILE *f)
{
    fputs("node,kind,start_s,end_s,peer,bytes\n", f);
}

void out_trace_write(FILE *f, const out_trace_row *r)
{
    fprintf(f, "%d,%s,", r->node, r->kind);
    out_fmt_double(f, r->start_s);
    fputc(',', f);
    out_fmt_double(f, r->end_s);
    fputc(',', f);
    if (r->peer >= 0)
        fprintf(f, "%d", r->peer);
    fputc(',', f);
    out_fmt_double(f, r->bytes);
    fputc('\n', f);
}

/* ---- JSON ---- */

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':  fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\t': fputs("\\t", f); break;
        case '\r': fputs("\\r", f); break;
        default:
            if (*p < 0x20)
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
    if (j->depth > 0) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    if (key) {
        put_string(j->f, key);
        fputs(": ", j->f);
    }
}

void out_json_init(out_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    for (int i = 0; i < 32; i++)
        j->need_comma[i] = 0;
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
    if (had) {
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
