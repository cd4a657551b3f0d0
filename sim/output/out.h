/* out.h -- what a run leaves on disk: files written under a temporary name
 * and renamed when complete, tidy CSV (metrics.csv, nodes.csv) and the one
 * JSON writer (run.json, sweep.json, the resolved scenario); and the
 * progress line on a terminal.  It formats and writes; it computes nothing
 * and knows nothing of the simulator's structures.
 */
#ifndef OUT_H
#define OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- atomic files ---- */

typedef struct out_file out_file;

/* Creates directory dir and its parents (like mkdir -p).  Returns 0, or -1
 * with "DIR: error: cannot create directory: REASON" in err. */
int out_mkdirs(const char *dir, char *err, size_t err_size);

/* Opens DIR/.NAME.tmp.PID for writing; out_file_commit renames it to
 * DIR/NAME.  NULL with a message in err on failure. */
out_file *out_file_open(const char *dir, const char *name, char *err, size_t err_size);
FILE     *out_file_stream(out_file *f);
/* Flushes, syncs, closes and renames; frees f.  -1 with err set when any
 * write failed (the temporary file is removed). */
int  out_file_commit(out_file *f, char *err, size_t err_size);
/* Closes and removes the temporary file; frees f.  NULL is fine. */
void out_file_abort(out_file *f);

/* A run folder being written (out_file.c): locked against other writers
 * and committed as a whole. */
typedef struct out_rundir out_rundir;

/* Creates dir (and its parents) when absent, locks it (flock, exclusive,
 * without waiting) and returns where the run's files are to be written:
 * dir itself when this call created it, else a hidden sibling
 * ".NAME.tmp.PID" that out_rundir_commit swaps in.  NULL with "DIR: error:
 * ..." in err when dir cannot be created, is locked by another run
 * ("another dtsim run is writing into this folder"), is ".", "..", "/" or
 * the current directory, or holds a file dtsim did not write (anything but
 * the run files, summary.csv, plots/ and hidden names). */
out_rundir *out_rundir_begin(const char *dir, char *err, size_t err_size);
const char *out_rundir_path(const out_rundir *d);
/* Whether dir holds files of a previous run (the run files, summary.csv or
 * plots/): 1 with their names, comma-separated, in what (cut to size); 0
 * when dir is absent or holds none of them. */
int         out_rundir_previous(const char *dir, char *what, size_t size);
/* Puts the written folder in place (the old one is removed) and unlocks;
 * frees d.  -1 with err set when the swap failed. */
int         out_rundir_commit(out_rundir *d, char *err, size_t err_size);
/* Removes what was written (the sibling, or the folder this run created)
 * and unlocks; frees d.  NULL is fine. */
void        out_rundir_abort(out_rundir *d);

/* ---- CSV ---- */

/* One row of metrics.csv: an evaluation of the average model. */
typedef struct out_metrics_row {
    double   time_s;
    uint64_t steps;          /* all nodes together */
    double   epochs;         /* samples processed / training set size */
    double   train_loss, test_loss, test_accuracy;
    double   consensus_distance;  /* sqrt(mean_i ||x_i - mean||^2) */
    double   bytes_sent;     /* all nodes together */
} out_metrics_row;

void out_metrics_header(FILE *f);
void out_metrics_write(FILE *f, const out_metrics_row *r);

/* One row of nodes.csv: a node's totals at the end of the run. */
typedef struct out_node_row {
    int      node;
    double   slowdown;
    uint64_t steps;
    double   compute_s, idle_s, uplink_busy_s;
    double   bytes_sent, bytes_received;
    uint64_t msgs_sent, msgs_received;
    double   network_s, down_s;   /* compute + network + idle + down = run time */
    uint64_t msgs_lost, steps_lost;
    /* the memory model's columns (docs/outputs.md), written only when
     * has_mem: the parts at the node's last stage, its peak, capacity */
    int      has_mem;
    int      frozen_layers, mem_exceeded;
    double   mem_params, mem_grads, mem_optim, mem_acts, mem_total, mem_peak, mem_capacity;
} out_node_row;

void out_nodes_header(FILE *f);
/* The header with the memory model's columns after the others. */
void out_nodes_header_mem(FILE *f);
void out_nodes_write(FILE *f, const out_node_row *r);

/* One CSV field: as is, or in double quotes (quotes doubled) when it holds
 * a comma, a quote or a line break (RFC 4180). */
void out_csv_field(FILE *f, const char *text);

/* One row of trace.csv: an interval of the timeline.  peer -1 is written
 * as an empty field. */
typedef struct out_trace_row {
    int         node;
    const char *kind;
    double      start_s, end_s;
    int         peer;
    double      bytes;
} out_trace_row;

/* The text of recently formatted numbers, keyed by their bits: a trace
 * repeats its instants (a send ends where the next begins; nodes in
 * lockstep share them) and its sizes, and a hit is a 32-byte copy where a
 * format is about 20 ns.  64 slots, direct-mapped, overwritten on a miss;
 * what it holds never changes a byte written.  Zero-initialise it (an empty
 * slot has len 0). */
#define OUT_G10_MAX 32   /* the longest %.10g text with its room (out_fmt_g10) */
#define OUT_G10_MEMO_SLOTS 64
typedef struct out_g10_memo {
    uint64_t bits[OUT_G10_MEMO_SLOTS];
    uint8_t  len[OUT_G10_MEMO_SLOTS];
    char     txt[OUT_G10_MEMO_SLOTS][OUT_G10_MAX];
} out_g10_memo;

void out_trace_header(FILE *f);
/* One row, written to f at once (no cache, no buffer of its own). */
void out_trace_write(FILE *f, const out_trace_row *r);

/* trace.csv's writer for a run: rows laid out in a block of its own and
 * handed to the stream a block at a time (a stdio call a row was a tenth
 * of a timing-only run), numbers through the memo.  The bytes are those of
 * out_trace_write row after row.  out_trace_flush before the stream is
 * closed, or the last block is lost. */
#define OUT_TRACE_BLOCK (1 << 16)
typedef struct out_trace_writer {
    FILE        *f;
    size_t       n;                     /* bytes in block */
    out_g10_memo memo;
    char         block[OUT_TRACE_BLOCK];
} out_trace_writer;

/* Starts w on f (empty memo and block) and writes the header line. */
void out_trace_begin(out_trace_writer *w, FILE *f);
void out_trace_add(out_trace_writer *w, const out_trace_row *r);
void out_trace_flush(out_trace_writer *w);

/* Numbers in CSV and JSON: %.10g, with nan/inf spelled as such in CSV and
 * null in JSON. */
void out_fmt_double(FILE *f, double v);

/* The bytes of out_fmt_double written into buf (at least OUT_G10_MAX
 * bytes), without printf where it can (out_csv.c); returns the length,
 * no terminating NUL. */
size_t out_fmt_g10(char *buf, double v);

/* ---- progress line ---- */

/* Progress on a stream (stderr): on a terminal one line redrawn in place;
 * elsewhere (a log file, a pipe, a Slurm log) one whole line every period
 * seconds of wall time; or, in the "each" mode, one whole line at every
 * event the caller reports, whatever the stream (for tests: no wall time
 * decides what is printed). */
#define OUT_PROGRESS_EACH (-1.0)
#define OUT_PROGRESS_DEFAULT_S 60.0
typedef struct out_progress {
    FILE  *f;
    int    active;
    int    mode;       /* 0 redraw (a terminal), 1 a line per period, 2 each */
    double period;     /* mode 1: wall seconds between lines */
    double t0, last;   /* wall seconds: start, last line or redraw (-1: none) */
    size_t width;      /* characters of the line on screen */
} out_progress;

/* period_s: 0 off (every call does nothing); > 0 on a terminal redrawn at
 * most five times a second, elsewhere a line every period_s; OUT_PROGRESS_EACH
 * a line per event, whatever f is. */
void   out_progress_init(out_progress *p, FILE *f, double period_s);
/* The printf-formatted text (at most 255 characters).  event: the caller
 * reached a point worth a line (an evaluation, a finished run): redrawn on
 * a terminal at once, printed in the "each" mode; a call without one is
 * redrawn when the last redraw was 0.2 s ago or more, or printed as a line
 * when the last line (or the start) was period seconds ago or more. */
void   out_progress_draw(out_progress *p, int event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Whether a call of out_progress_draw now would print (so callers can
 * skip the formatting). */
int    out_progress_due(const out_progress *p, int event);
/* Clears the line, so what is printed next starts on a clean line. */
void   out_progress_end(out_progress *p);
/* Wall seconds since out_progress_init. */
double out_progress_elapsed(const out_progress *p);
/* "42s", "3m07s", "2h05m"; "?" for a negative, NaN or infinite time. */
void   out_fmt_duration(char *buf, size_t size, double seconds);

/* ---- JSON (run.json, sweep.json, the resolved scenario) ---- */

/* Values are written in the order of the calls, at most 31 containers
 * deep.  Indented: one value per line, two spaces per level, "key": value.
 * Compact: no whitespace at all. */
typedef struct out_json {
    FILE *f;
    int   depth;
    int   compact;
    int   need_comma[32];
} out_json;

void out_json_init(out_json *j, FILE *f);
void out_json_init_compact(out_json *j, FILE *f);
void out_json_begin_object(out_json *j, const char *key);  /* key NULL at top / in arrays */
void out_json_end_object(out_json *j);
void out_json_begin_array(out_json *j, const char *key);
void out_json_end_array(out_json *j);
/* A string with JSON's escapes, as Jansson writes them; v NULL is written
 * as null. */
void out_json_string(out_json *j, const char *key, const char *v);
/* %.17g; NaN and infinities as null. */
void out_json_number(out_json *j, const char *key, double v);
/* The shortest text that reads back as exactly v, always with a '.' or an
 * exponent (Jansson's style); NaN and infinities as null. */
void out_json_real(out_json *j, const char *key, double v);
void out_json_int(out_json *j, const char *key, int64_t v);
void out_json_bool(out_json *j, const char *key, int v);
/* Inserts already-serialised JSON text (e.g. the resolved scenario). */
void out_json_raw(out_json *j, const char *key, const char *json_text);
/* Ends the document with a newline. */
void out_json_finish(out_json *j);

/* Where an output came from (docs/outputs.md, "Provenance"): what built
 * the binary and what invoked it.  The caller (the CLI) fills git_commit
 * and the command line; out_provenance_init takes the start time and the
 * host.  All strings are borrowed. */
typedef struct out_provenance {
    const char *command;            /* "run", "sweep", "merge" */
    const char *git_commit;         /* "e816810-dirty"; NULL: "unknown" */
    int          argc;              /* the whole command line, argv[0] included */
    const char *const *argv;
    const char *const *sets;        /* the --set overrides in order */
    size_t       n_sets;
    char         start_time[32];    /* UTC, ISO 8601: "2025-01-31T12:00:00Z" */
    char         host[256];         /* gethostname; "unknown" when it fails */
} out_provenance;

/* Sets start_time to now and host to this machine's name. */
void out_provenance_init(out_provenance *p);
/* p's commit, or "unknown" for NULL or no commit. */
const char *out_provenance_commit(const out_provenance *p);
/* Writes key (NULL in an array) as the object {"command", "git_commit",
 * "dtsim_version", "cblas", "command_line", "sets", "start_time", "host"}:
 * the provenance object of run.json and one line of a sweep's
 * provenance.jsonl. */
void out_provenance_json(out_json *j, const char *key, const out_provenance *p);

#endif
