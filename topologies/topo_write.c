/* topo_write.c -- writes a built topology for plotting: an edge list as CSV
 * ("source,target,weight", one line per undirected edge) or Graphviz DOT
 * (an undirected graph whose edges carry the mixing weight as a label, 4
 * digits).
 * A learned W that is not symmetric gets a fourth CSV column,
 * reverse_weight = W[target][source], since the two directions differ.
 * CSV weights print with 17 significant digits so a reader gets the same
 * doubles back.  It does not open or rename files; the caller does.
 */
#include "topo.h"

/* W[j][i] for an edge i -- j (j's list is sorted). */
static double reverse_weight(const topo_graph *g, int i, int j)
{
    size_t lo = g->off[j], hi = g->off[j + 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->nbr[mid] < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return g->w[lo];
}

int topo_write_csv(const topo_graph *g, FILE *f)
{
    const int both = g->learned && !g->symmetric;
    if (fprintf(f, "source,target,weight%s\n", both ? ",reverse_weight" : "") < 0)
        return -1;
    for (int i = 0; i < g->n; i++)
        for (size_t k = g->off[i]; k < g->off[i + 1]; k++) {
            if (g->nbr[k] < i)
                continue;
            if (fprintf(f, "%d,%d,%.17g", i, g->nbr[k], g->w[k]) < 0
                || (both && fprintf(f, ",%.17g", reverse_weight(g, i, g->nbr[k])) < 0)
                || fputc('\n', f) == EOF)
                return -1;
        }
    return ferror(f) ? -1 : 0;
}

/* Node names are the indices; the graph name is quoted, so any text goes
 * once quotes and backslashes are escaped. */
int topo_write_dot(const topo_graph *g, const char *name, FILE *f)
{
    if (fputs("graph \"", f) < 0)
        return -1;
    for (const char *c = name ? name : "dtsim"; *c; c++)
        if ((*c == '"' || *c == '\\') ? fprintf(f, "\\%c", *c) < 0 : fputc(*c, f) == EOF)
            return -1;
    if (fprintf(f, "\" {\n  node [shape=circle];\n") < 0)
        return -1;
    for (int i = 0; i < g->n; i++)
        if (fprintf(f, "  %d;\n", i) < 0)
            return -1;
    for (int i = 0; i < g->n; i++)
        for (size_t k = g->off[i]; k < g->off[i + 1]; k++)
            if (g->nbr[k] > i &&
                fprintf(f, "  %d -- %d [label=\"%.4g\"];\n", i, g->nbr[k], g->w[k]) < 0)
                return -1;
    if (fprintf(f, "}\n") < 0)
        return -1;
    return ferror(f) ? -1 : 0;
}
