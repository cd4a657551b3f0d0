/* out_csv.c -- the text formats of dtsim's outputs: the columns of
 * metrics.csv, nodes.csv and trace.csv (one header line, units in the
 * names) and RFC 4180 fields.  Numbers are printed with %.10g so that equal
 * runs give equal bytes, without printf where the digits can be had exactly;
 * a run's trace rows go through a writer with a block and a memo of
 * formatted numbers (out_trace_writer).  It does not open files or write
 * JSON (out_json.c).
 */
#include "out.h"

#include <assert.h>
#include <inttypes.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

/* Powers of ten that a double holds exactly (10^0 .. 10^22). */
static const double pow10_exact[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

/* Unsigned decimal digits of u into buf; returns the length. */
static size_t put_u64(char *buf, uint64_t u)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

/* The ten digits of 10^9 <= m < 10^10, as two halves of five in 32-bit
 * arithmetic. */
static void put_10_digits(char *dig, uint64_t m)
{
    uint32_t hi = (uint32_t)(m / 100000u), lo = (uint32_t)(m % 100000u);
    for (int i = 4; i >= 0; i--) {
        dig[i] = (char)('0' + hi % 10);
        hi /= 10;
        dig[5 + i] = (char)('0' + lo % 10);
        lo /= 10;
    }
}

/* %.10g without printf for the numbers of a trace and most of a metrics
 * file: finite, 1e-4 <= |v| < 1e10, so that %g prints them without an
 * exponent.  v x 10^(9 - e) (e the decimal exponent of v; the power exact,
 * so one rounding: an error under 1e-6 below 1e10) rounded to an integer
 * m of 10 digits is the correctly rounded significand unless the product
 * lies within 1e-5 of a half (then printf decides, as it does for every
 * other number).  The digits of m are then laid out as %g does: the point
 * after e + 1 digits, trailing zeros and a bare point dropped.
 * tests/test_setup_costs.c compares it with snprintf on a million values. */
static size_t fast_g10(char *buf, double v)
{
    double a = fabs(v);
    if (!(a >= 1e-4 && a < 1e10))
        return 0;
    if (a >= 1 && a == (double)(uint64_t)a) {   /* an integer: its digits, exactly */
        size_t n = 0;
        if (signbit(v))
            buf[n++] = '-';
        return n + put_u64(buf + n, (uint64_t)a);
    }
    int e = 0;   /* 10^e <= a < 10^(e+1), -4 <= e <= 9, up to rounding */
    if (a >= 1) {
        while (e < 9 && a >= pow10_exact[e + 1])
            e++;
    } else {
        e = -1;
        while (e > -4 && a * pow10_exact[-e] < 1)
            e--;
    }
    /* the scaled value: 10^9 <= s < 10^10 when e is right */
    double s = a * pow10_exact[9 - e];
    double fl = floor(s), frac = s - fl;
    if (fabs(frac - 0.5) < 1e-5)
        return 0;
    uint64_t m = (uint64_t)fl + (frac > 0.5);
    if (m < 1000000000u || m > 10000000000u)
        return 0;   /* e was off by one (a next to a power of ten) */
    if (m == 10000000000u) {   /* rounded up to the next power of ten */
        m = 1000000000u;
        if (++e > 9)
            return 0;   /* %g turns to an exponent */
    }
    char dig[16];
    put_10_digits(dig, m);
    int nd = 10;
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    size_t n = 0;
    if (signbit(v))
        buf[n++] = '-';
    if (e >= 0) {
        for (int i = 0; i <= e; i++)
            buf[n++] = i < nd ? dig[i] : '0';
        if (nd > e + 1) {
            buf[n++] = '.';
            for (int i = e + 1; i < nd; i++)
                buf[n++] = dig[i];
        }
    } else {
        buf[n++] = '0';
        buf[n++] = '.';
        for (int i = 0; i < -e - 1; i++)
            buf[n++] = '0';
        for (int i = 0; i < nd; i++)
            buf[n++] = dig[i];
    }
    return n;
}

size_t out_fmt_g10(char *buf, double v)
{
    if (isnan(v)) {
        memcpy(buf, "nan", 3);
        return 3;
    }
    if (isinf(v)) {
        memcpy(buf, v > 0 ? "inf" : "-inf", v > 0 ? 3 : 4);
        return v > 0 ? 3 : 4;
    }
    if (v == 0) {
        if (signbit(v)) {
            memcpy(buf, "-0", 2);
            return 2;
        }
        buf[0] = '0';
        return 1;
    }
    size_t n = fast_g10(buf, v);
    if (n > 0)
        return n;
    int k = snprintf(buf, OUT_G10_MAX, "%.10g", v);
    return k > 0 && k < OUT_G10_MAX ? (size_t)k : 0;
}

/* out_fmt_g10 through the memo: a slot holds the bits and the text of the
 * last number that hashed to it (Fibonacci hashing of the bits). */
static size_t fmt_g10_memo(out_g10_memo *m, char *buf, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    size_t k = (size_t)((bits * UINT64_C(0x9E3779B97F4A7C15)) >> 58);
    if (m->len[k] && m->bits[k] == bits) {
        memcpy(buf, m->txt[k], OUT_G10_MAX);   /* buf has OUT_G10_MAX bytes of room */
        return m->len[k];
    }
    size_t n = out_fmt_g10(m->txt[k], v);
    m->bits[k] = bits;
    m->len[k] = (uint8_t)n;
    memcpy(buf, m->txt[k], OUT_G10_MAX);
    return n;
}

void out_fmt_double(FILE *f, double v)
{
    char buf[OUT_G10_MAX];
    fwrite(buf, 1, out_fmt_g10(buf, v), f);
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

void out_nodes_header_mem(FILE *f)
{
    fputs("node,slowdown,steps,compute_s,idle_s,uplink_busy_s,bytes_sent,"
          "bytes_received,msgs_sent,msgs_received,network_s,down_s,msgs_lost,"
          "steps_lost,frozen_layers,mem_params_bytes,mem_grads_bytes,mem_optim_bytes,"
          "mem_acts_bytes,mem_bytes,mem_peak_bytes,mem_capacity_bytes,mem_exceeded\n", f);
}

/* A row laid out in a buffer, one column after the other, and written at
 * once: fprintf costs about 2,000 instructions a call (glibc parses the
 * format and takes its positional path), which made nodes.csv 7,800
 * instructions a node, most of a 10^5-node run's teardown.  The bytes are
 * those of the printf version ("%d", "%" PRIu64, out_fmt_double).  A
 * column never exceeds OUT_G10_MAX bytes with its separator. */
typedef struct csv_row {
    char   b[32 * OUT_G10_MAX];
    size_t n;
} csv_row;

static void row_sep(csv_row *w)
{
    assert(w->n + OUT_G10_MAX + 2 <= sizeof w->b);   /* room for one more column */
    if (w->n > 0)
        w->b[w->n++] = ',';
}

static void row_int(csv_row *w, int64_t v)
{
    row_sep(w);
    if (v < 0)
        w->b[w->n++] = '-';
    w->n += put_u64(w->b + w->n, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

static void row_u64(csv_row *w, uint64_t v)
{
    row_sep(w);
    w->n += put_u64(w->b + w->n, v);
}

static void row_g(csv_row *w, double v)
{
    row_sep(w);
    w->n += out_fmt_g10(w->b + w->n, v);
}

static void row_end(FILE *f, csv_row *w)
{
    w->b[w->n++] = '\n';
    fwrite(w->b, 1, w->n, f);
}

void out_nodes_write(FILE *f, const out_node_row *r)
{
    csv_row w = { .n = 0 };
    row_int(&w, r->node);
    row_g(&w, r->slowdown);
    row_u64(&w, r->steps);
    row_g(&w, r->compute_s);
    row_g(&w, r->idle_s);
    row_g(&w, r->uplink_busy_s);
    row_g(&w, r->bytes_sent);
    row_g(&w, r->bytes_received);
    row_u64(&w, r->msgs_sent);
    row_u64(&w, r->msgs_received);
    row_g(&w, r->network_s);
    row_g(&w, r->down_s);
    row_u64(&w, r->msgs_lost);
    row_u64(&w, r->steps_lost);
    if (r->has_mem) {
        row_int(&w, r->frozen_layers);
        row_g(&w, r->mem_params);
        row_g(&w, r->mem_grads);
        row_g(&w, r->mem_optim);
        row_g(&w, r->mem_acts);
        row_g(&w, r->mem_total);
        row_g(&w, r->mem_peak);
        row_g(&w, r->mem_capacity);
        row_int(&w, r->mem_exceeded);
    }
    row_end(f, &w);
}

void out_trace_header(FILE *f)
{
    fputs("node,kind,start_s,end_s,peer,bytes\n", f);
}

/* Lays a row out in row (room for OUT_TRACE_ROW_MAX bytes); returns its
 * length, or 0 for a kind too long for the layout (the caller writes that
 * row through stdio).  Numbers through memo when there is one. */
#define OUT_TRACE_ROW_MAX (4 * OUT_G10_MAX + 64)
static size_t trace_num(out_g10_memo *memo, char *buf, double v)
{
    return memo ? fmt_g10_memo(memo, buf, v) : out_fmt_g10(buf, v);
}

static size_t trace_row(char *row, const out_trace_row *r, out_g10_memo *memo)
{
    size_t n = 0, kl = strlen(r->kind);
    if (kl > 32)   /* kinds are short names */
        return 0;
    if (r->node < 0)
        row[n++] = '-';
    n += put_u64(row + n, r->node < 0 ? -(uint64_t)r->node : (uint64_t)r->node);
    row[n++] = ',';
    memcpy(row + n, r->kind, kl);
    n += kl;
    row[n++] = ',';
    n += trace_num(memo, row + n, r->start_s);
    row[n++] = ',';
    n += trace_num(memo, row + n, r->end_s);
    row[n++] = ',';
    if (r->peer >= 0)
        n += put_u64(row + n, (uint64_t)r->peer);
    row[n++] = ',';
    n += trace_num(memo, row + n, r->bytes);
    row[n++] = '\n';
    return n;
}

/* A kind longer than the layout allows, through stdio (the same bytes). */
static void trace_row_stdio(FILE *f, const out_trace_row *r)
{
    char num[OUT_G10_MAX];
    fprintf(f, "%d,%s,", r->node, r->kind);
    fwrite(num, 1, out_fmt_g10(num, r->start_s), f);
    fputc(',', f);
    fwrite(num, 1, out_fmt_g10(num, r->end_s), f);
    fputc(',', f);
    if (r->peer >= 0)
        fprintf(f, "%d", r->peer);
    fputc(',', f);
    fwrite(num, 1, out_fmt_g10(num, r->bytes), f);
    fputc('\n', f);
}

/* A row is laid out in a buffer and written at once (one fwrite, not
 * eight stdio calls with two printf parses); the bytes are those of the
 * printf version. */
void out_trace_write(FILE *f, const out_trace_row *r)
{
    char row[OUT_TRACE_ROW_MAX];
    size_t n = trace_row(row, r, NULL);
    if (n == 0)
        trace_row_stdio(f, r);
    else
        fwrite(row, 1, n, f);
}

void out_trace_begin(out_trace_writer *w, FILE *f)
{
    w->f = f;
    w->n = 0;
    memset(&w->memo, 0, sizeof w->memo);
    out_trace_header(f);
}

void out_trace_flush(out_trace_writer *w)
{
    if (w->n > 0)
        fwrite(w->block, 1, w->n, w->f);
    w->n = 0;
}

void out_trace_add(out_trace_writer *w, const out_trace_row *r)
{
    if (w->n > sizeof w->block - OUT_TRACE_ROW_MAX)
        out_trace_flush(w);
    size_t n = trace_row(w->block + w->n, r, &w->memo);
    if (n == 0) {   /* the long kind's row after what is buffered, in order */
        out_trace_flush(w);
        trace_row_stdio(w->f, r);
    }
    w->n += n;
}
