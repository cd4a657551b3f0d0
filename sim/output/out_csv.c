/* out_csv.c -- the text formats of dtsim's outputs: the columns of
 * metrics.csv, nodes.csv and trace.csv (one header line, units in the
 * names) and RFC 4180 fields.  Numbers are printed with %.10g so that equal
 * runs give equal bytes.  It does not open files or write JSON (out_json.c).
 */
#include "out.h"

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
