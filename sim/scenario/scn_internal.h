/* scn_internal.h -- what the files of the scenario module share and
 * nobody else sees: the error context, JSON pointer helpers, typed readers
 * of optional keys that report in GNU form, and the three stages of a load
 * (overrides, validation, resolved text).  Includes <jansson.h>: only
 * sim/scenario/ may include this header.
 */
#ifndef SCN_INTERNAL_H
#define SCN_INTERNAL_H

#include <stddef.h>
#include <jansson.h>
#include "scn.h"

#define PTR_MAX 512
#define LOAD_FLAGS (JSON_REJECT_DUPLICATES | JSON_DECODE_ANY)

/* Where messages go; root pointer is "" internally and "/" when shown. */
typedef struct scn_ctx {
    const char *path;
    scn_error  *err;
} scn_ctx;

/* Range rules of numbers: > 0, >= 0, in (0, 1]. */
enum scn_i_rule { GT0, GE0, UNIT };

int scn_i_fail(scn_ctx *c, const char *ptr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int scn_i_fail_oom(scn_ctx *c);
const char *scn_i_short_escape(unsigned char ch);
const char *scn_i_quoted(char *out, size_t n, const char *s);
void scn_i_ptr_key(char *out, const char *base, const char *key);
void scn_i_ptr_idx(char *out, const char *base, size_t i);
const char *scn_i_type_name(const json_t *v);
const char *scn_i_type_with_article(const json_t *v);
int scn_i_in_list(const char *s, const char *const *list);
void scn_i_join(char *out, size_t n, const char *const *list);
int scn_i_check_keys(scn_ctx *c, json_t *obj, const char *ptr, const char *const *keys);
int scn_i_kind_keys(scn_ctx *c, json_t *obj, const char *ptr, const char *const *allowed, const char *field, const char *kind);
int scn_i_need_key(scn_ctx *c, json_t *obj, const char *ptr, const char *key, const char *why);
int scn_i_lookup(scn_ctx *c, const char *ptr, const char *what, const char *name, const char *const *names);
int scn_i_opt_obj(scn_ctx *c, json_t *obj, const char *optr, const char *key, json_t **out, char *cptr);
int scn_i_check_rule(scn_ctx *c, const char *ptr, double x, enum scn_i_rule r);
int scn_i_opt_num(scn_ctx *c, json_t *obj, const char *optr, const char *key, enum scn_i_rule r, double *out, int *present);
int scn_i_int_value(scn_ctx *c, const char *ptr, json_t *v, long long min, long long max, long long *out);
int scn_i_opt_int(scn_ctx *c, json_t *obj, const char *optr, const char *key, long long min, long long max, long long *out, int *present);
int scn_i_opt_str(scn_ctx *c, json_t *obj, const char *optr, const char *key, const char **out, int *present);
int scn_i_set_str(scn_ctx *c, char **dst, const char *src);
const char *scn_i_dflt(int present);
int scn_i_opt_bool(scn_ctx *c, json_t *obj, const char *optr, const char *key, int *out);

/* scn_topology.c, scn_model.c: the topology, model and data sections */
int scn_i_v_topology(scn_ctx *c, json_t *root, scn_scenario *s);
int scn_i_v_topology_data(scn_ctx *c, const scn_scenario *s);
int scn_i_v_model(scn_ctx *c, json_t *root, scn_scenario *s);
int scn_i_v_data(scn_ctx *c, json_t *root, scn_scenario *s);

/* scn_names.c: names of the enums the owners keep no list for, indexed by
 * value, NULL-terminated */
extern const char *const scn_i_noise_names[], *const scn_i_slow_kind_names[],
    *const scn_i_fault_kind_names[], *const scn_i_jitter_names[],
    *const scn_i_discipline_names[], *const scn_i_step_policy_names[],
    *const scn_i_msg_policy_names[], *const scn_i_rejoin_names[],
    *const scn_i_data_kind_names[], *const scn_i_model_names[],
    *const scn_i_profile_names[];
/* one line per name, indexed alike (`dtsim list`, scn_keys.c) */
extern const char *const scn_i_noise_help[], *const scn_i_discipline_help[],
    *const scn_i_data_kind_help[], *const scn_i_model_help[], *const scn_i_profile_help[];

/* scn_select.c: "nodes" (numbers and ranges "a-b") or a seeded "fraction"
 * of obj at ptr into a sorted list (*nodes NULL: every node, when
 * allow_all); the list at np alone; membership (nodes NULL: every node). */
int scn_i_v_select(scn_ctx *c, json_t *o, const char *ptr, const scn_scenario *s,
                   int allow_all, int **nodes, size_t *n_out, double *fraction);
int scn_i_v_node_list(scn_ctx *c, json_t *list, const char *np, int n_nodes, int **nodes,
                      size_t *n_out);
/* The same, also taking the protocol's server names into *sv (network.nics
 * and network.links); sv NULL: none allowed. */
int scn_i_v_select_sv(scn_ctx *c, json_t *o, const char *ptr, const scn_scenario *s,
                      int allow_all, int **nodes, size_t *n_out, double *fraction,
                      scn_servers *sv);
int scn_i_v_node_list_sv(scn_ctx *c, json_t *list, const char *np, int n_nodes, int **nodes,
                         size_t *n_out, scn_servers *sv);
/* Appends the server names of sv to a JSON node list, as they were given. */
void scn_i_add_servers(json_t *arr, const scn_servers *sv, int *oom);
int scn_i_has_node(const int *nodes, size_t n, int node);

/* scn_trace.c: reads the trace file (relative to the scenario's directory)
 * named at ptr: factors, or up/down states when availability. */
int scn_i_read_trace(scn_ctx *c, const char *ptr, const char *file, int availability,
                     int n_nodes, scn_point **out, size_t *n_out);

/* scn_compute.c: noise (of compute or a group) and groups (see
 * docs/heterogeneity.md) */
int scn_i_v_noise(scn_ctx *c, json_t *parent, const char *pptr, cl_noise_spec *out);
int scn_i_v_groups(scn_ctx *c, json_t *compute, const char *cptr, scn_scenario *s);
/* scn_env.c: compute.slowdowns and the faults section */
int scn_i_v_slowdowns(scn_ctx *c, json_t *compute, const char *cptr, scn_scenario *s);
int scn_i_v_faults(scn_ctx *c, json_t *root, scn_scenario *s);
/* scn_freeze.c: the freeze section (its checks against the model and the
 * protocol are the runner's, which knows both). */
int scn_i_v_freeze(scn_ctx *c, json_t *root, scn_scenario *s);
void scn_i_resolved_freeze(json_t *root, const scn_scenario *s, int *oom);
/* scn_network.c: compression_ratio, discipline, up_Bps, down_Bps, nics
 * (after bandwidth_Bps, their default) */
int scn_i_v_network_nics(scn_ctx *c, json_t *network, const char *nptr, scn_scenario *s);
/* scn_network.c: jitter, loss, reorder, outages, links (after latency_s and
 * bandwidth_Bps) */
int scn_i_v_network_links(scn_ctx *c, json_t *network, const char *nptr, scn_scenario *s);
/* network.retransmit: false, or {"timeout_s", "max_retries"} (scn_network.c) */
int scn_i_v_network_retransmit(scn_ctx *c, json_t *o, const char *p, scn_scenario *s);
/* scn_resolved.c: obj[key] = v (a NULL v, out of memory, sets *oom); a new
 * object at root[key] or appended to arr (NULL and *oom on failure); a
 * node selection as "nodes" or "fraction" (nothing for every node). */
void    scn_i_add(json_t *obj, const char *key, json_t *v, int *oom);
json_t *scn_i_section(json_t *root, const char *key, int *oom);
json_t *scn_i_append_obj(json_t *arr, int *oom);
void    scn_i_add_nodes(json_t *o, const int *nodes, size_t n, double fraction, int *oom);
/* scn_resolved_hetero.c: the resolved heterogeneity keys */
json_t *scn_i_resolved_noise(const cl_noise_spec *ns);
void    scn_i_resolved_slowdowns(json_t *compute, const scn_scenario *s, int *oom);
void    scn_i_resolved_faults(json_t *root, const scn_scenario *s, int *oom);
void    scn_i_resolved_nics(json_t *network, const scn_scenario *s, int *oom);
void    scn_i_resolved_links(json_t *network, const scn_scenario *s, int *oom);
/* scn_canon.c: v as canonical compact JSON text (malloc'd), or NULL when
 * out of memory. */
char   *scn_i_canonical(json_t *v);

/* Applies one "path=value" override to the tree (see scn.h). */
int scn_i_apply_override(scn_ctx *c, json_t *root, const char *arg);
/* Validates the tree into *s, filling defaults, in the documented order. */
int scn_i_validate(scn_ctx *c, json_t *root, scn_scenario *s);
/* Renders the validated *s as canonical compact JSON in s->resolved_json. */
int scn_i_resolve(scn_ctx *c, scn_scenario *s);

#endif
