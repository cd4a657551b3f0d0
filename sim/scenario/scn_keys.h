/* scn_keys.h -- the documented vocabulary of scenario files: one table of
 * every key the loader accepts (path, type, unit, default, allowed values,
 * one line of description), and the named choices (topologies, models,
 * data kinds, partitions, noise laws, disciplines, mixing rules) with one
 * line each.  `dtsim keys` and `dtsim list` print them; the enumerated
 * values are the loader's own name lists, and tests/test_scn_keys.c checks
 * the table against the loader's key lists and resolved defaults, so the
 * listings cannot drift from what the loader does.  Data only: loading is
 * scn.h's.
 */
#ifndef SCN_KEYS_H
#define SCN_KEYS_H

#include <stddef.h>

typedef struct scn_key {
    /* dotted, "[]" for the elements of an array: "compute.groups[].nodes" */
    const char *path;
    const char *type;      /* "number", "integer", "string", "boolean", "object", ... */
    const char *unit;      /* "s", "B/s", "bytes", ...; "" when none */
    /* the default as JSON when it is one value ("0.01", "\"ring\"",
     * "false"), else what it is in words ("required", "absent", ...) */
    const char *def;
    const char *allowed;   /* the range or rule in words; "" when names says it all */
    const char *const *names;   /* the loader's list of allowed strings, or NULL */
    const char *help;      /* one line: what the key sets */
} scn_key;

/* The table, in the order of docs/scenario.md; *n gets its length. */
const scn_key *scn_keys(size_t *n);

/* One family of named choices for `dtsim list`. */
typedef struct scn_vocab {
    const char *title;          /* "topologies" */
    const char *key;            /* the key that takes them: "topology.kind" */
    const char *const *names;   /* the loader's list, NULL-terminated */
    const char *const *help;    /* one line per name, indexed alike */
} scn_vocab;

const scn_vocab *scn_vocabs(size_t *n);

#endif
