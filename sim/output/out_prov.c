/* out_prov.c -- the provenance of an output: the commit, version and CBLAS
 * of the binary and the command line, --set list, start time and host of
 * the invocation, as one JSON object (run.json's "provenance", a line of a
 * sweep's provenance.jsonl).  It decides nothing about where provenance
 * may go: time of day and host must stay out of every CSV and out of
 * sweep.json (shards compare it byte for byte), which is the callers'
 * rule (docs/outputs.md).
 */
#define _POSIX_C_SOURCE 200809L  /* gethostname, gmtime_r */
#include "out.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

void out_provenance_init(out_provenance *p)
{
    time_t now = time(NULL);
    struct tm tm;
    if (now == (time_t)-1 || !gmtime_r(&now, &tm) ||
        strftime(p->start_time, sizeof p->start_time, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(p->start_time, sizeof p->start_time, "unknown");
    if (gethostname(p->host, sizeof p->host) != 0 || !p->host[0])
        snprintf(p->host, sizeof p->host, "unknown");
    p->host[sizeof p->host - 1] = '\0';   /* gethostname may not end a long name */
}

const char *out_provenance_commit(const out_provenance *p)
{
    return p && p->git_commit && p->git_commit[0] ? p->git_commit : "unknown";
}

void out_provenance_json(out_json *j, const char *key, const out_provenance *p)
{
    out_json_begin_object(j, key);
    out_json_string(j, "command", p->command ? p->command : "");
    out_json_string(j, "git_commit", out_provenance_commit(p));
    out_json_string(j, "dtsim_version", DTSIM_VERSION);
    out_json_string(j, "cblas", DTSIM_CBLAS);
    out_json_begin_array(j, "command_line");
    for (int i = 0; i < p->argc; i++)
        out_json_string(j, NULL, p->argv[i]);
    out_json_end_array(j);
    out_json_begin_array(j, "sets");
    for (size_t i = 0; i < p->n_sets; i++)
        out_json_string(j, NULL, p->sets[i]);
    out_json_end_array(j);
    out_json_string(j, "start_time", p->start_time);
    out_json_string(j, "host", p->host);
    out_json_end_object(j);
}
