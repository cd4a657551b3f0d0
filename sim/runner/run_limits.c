/* run_limits.c -- refuses runs too large for the machine before they are
 * built: a memory estimate (nodes, topology, data, model copies, the
 * protocol's own structures such as a schedule file's rounds) against
 * limits.memory_bytes or half the physical memory, and a bound on the
 * total number of steps.  It only estimates and reports (exit 2 through
 * the caller); it allocates nothing of the run.
 */
#include "run_internal.h"

/* The default limit: half the machine's physical memory.  The estimate
 * leaves out what protocols keep per neighbour, and the machine is rarely
 * ours alone; limits.memory_bytes or --force go further. */
static double default_memory_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? 0.5 * (double)pages * (double)size : INFINITY;
}

static void fmt_bytes(char *buf, size_t n, double b)
{
    static const char *const unit[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
    int k = 0;
    while (b >= 1000 && k < 6) {
        b /= 1000;
        k++;
    }
    snprintf(buf, n, "%.3g %s", b, unit[k]);
}

/* Edges of the topology as the scenario describes it (an upper bound for
 * the random kinds), before it is built. */
static double edges_estimate(const scn_scenario *s)
{
    double n = s->n_nodes;
    switch (s->topo_kind) {
    case TOPO_COMPLETE:
        return n * (n - 1) / 2;
    case TOPO_ERDOS_RENYI:
        return s->topo_p * n * (n - 1) / 2;
    case TOPO_RANDOM_REGULAR:
        return n * s->topo_degree / 2;
    default:
        return 2 * n;
    }
}

/* Refuses (exit 2, see docs/reliability.md) a run whose estimate exceeds
 * the limit.  Before anything is built (P == 0) only the nodes, the
 * topology and generated data are counted; once the data and model exist,
 * the whole run: P doubles x RUN_MEM_COPIES (+1 with momentum) per node
 * (servers included), the data held, RUN_MEM_PER_NODE bytes of per-node
 * state (RNG streams, queues, statistics), 64 bytes per edge and what the
 * protocol says it holds itself (alg_type.memory_bytes: the round graphs
 * of a schedule file, counted before the file's rounds are built). */
#define RUN_MEM_COPIES   4        /* parameters, gradient, two in flight or kept */
#define RUN_MEM_PER_NODE 24576.0  /* four mt19937 streams and the node records */
int run_i_check_memory(const run_sim *r, size_t P, double data_bytes, scn_error *err)
{
    const scn_scenario *s = r->s;
    if (!s->limit_check_memory)
        return 0;
    double data = 0;
    if (P == 0) {
        double rows = (double)s->data_train + (double)s->data_test;
        data = scn_data_generated(s->data_source)
             ? rows * ((double)s->data_features + 2) * 8 : 0;
    }
    if (r->train.x)   /* loaded or generated: what it really holds */
        data = ((double)r->train.n * ((double)r->train.d + 3)
                + (double)r->test.n * ((double)r->test.d + 2)) * 8;
    if (data_bytes > 0)
        data = data_bytes;
    int copies = RUN_MEM_COPIES + (s->opt_momentum > 0);
    double model = (double)r->n_all * (double)P * copies * 8;
    double nodes = (double)r->n_all * RUN_MEM_PER_NODE;
    double edges = edges_estimate(s) * 64;
    double total = model + data + nodes + edges + r->alg_bytes;
    double limit = s->limit_memory_bytes > 0 ? s->limit_memory_bytes : default_memory_limit();
    if (total <= limit)
        return 0;
    char t[32], l[32], m[32], d[32], n[32], e[32], a[96] = "";
    fmt_bytes(t, sizeof t, total);
    fmt_bytes(l, sizeof l, limit);
    fmt_bytes(m, sizeof m, model);
    fmt_bytes(d, sizeof d, data);
    fmt_bytes(n, sizeof n, nodes);
    fmt_bytes(e, sizeof e, edges);
    if (r->alg_bytes > 0) {   /* e.g. sgp's round graphs of a schedule file */
        char b[32];
        fmt_bytes(b, sizeof b, r->alg_bytes);
        snprintf(a, sizeof a, ", %s's own %s", r->alg->name, b);
    }
    char models[160];
    if (P > 0)
        snprintf(models, sizeof models, "models %d nodes x %zu parameters x %d copies = %s, ",
                 r->n_all, P, copies, m);
    else
        models[0] = '\0';   /* before the model exists */
    snprintf(err->msg, sizeof err->msg,
             "%s: error: this run needs about %s of memory (%sdata %s, per-node state %s, "
             "topology %s%s), more than the limit of %s (%s); lower the size, set "
             "limits.memory_bytes, or run with --force", s->path, t, models, d, n, e, a, l,
             s->limit_memory_bytes > 0 ? "limits.memory_bytes" : "half this machine's memory");
    return -1;
}

/* Refuses a run that would take more than RUN_MAX_STEPS steps in all (at
 * a million steps per second, eleven days): a stop time far beyond the
 * step time (e.g. step_time_s 1e-300) or an absurd stop.steps would
 * otherwise look like a hang.  The bound counts steps at each worker's
 * base step time, as if nothing ever waited. */
int run_i_check_work(const run_sim *r, scn_error *err)
{
    const scn_scenario *s = r->s;
    double fastest = INFINITY, steps;
    int who = 0;
    for (int i = 0; i < s->n_nodes; i++)
        if (r->step_times[i] < fastest) {
            fastest = r->step_times[i];
            who = i;
        }
    char m[512];
    if (s->stop_steps > 0 && (double)s->stop_steps * s->n_nodes > RUN_MAX_STEPS) {
        snprintf(m, sizeof m, "%ld steps per node on %d nodes is more than %.0e steps in all; "
                 "lower stop.steps", s->stop_steps, s->n_nodes, RUN_MAX_STEPS);
        run_i_value_error(err, s, "/stop/steps", m);
        return -1;
    }
    steps = s->stop_time_s / fastest * s->n_nodes;
    if (s->stop_steps == 0 && !(steps <= RUN_MAX_STEPS)) {
        snprintf(m, sizeof m, "reaching %g s takes about %.3g steps at node %d's step time of "
                 "%g s (%d nodes), more than %.0e in all; lower stop.time_s or set "
                 "stop.steps", s->stop_time_s, steps, who, fastest, s->n_nodes, RUN_MAX_STEPS);
        run_i_value_error(err, s, "/stop/time_s", m);
        return -1;
    }
    return 0;
}
