/* topo_write.c -- writes a built topology for plotting: an edge list as CSV
 * ("source,target,weight", one line per undirected edge) or Graphviz DOT
 * (an undirected graph whose edges carry the mixing weight as a label, 4
 * digits).
 * CSV weights print with 17 significant digits so a reader gets the same
 * doubles back.  It does not open or rename files; the caller does.
 */
#include "topo.h"

int topo_write_csv(const topo_graph *g, FILE *f)
{
    if (fprintf(f, "source,target,weight\n") < 0)
        return -1;
    for (int i = 0; i < g->n; i++)
        for (size_t k = g->off[i]; k < g->off[i + 1]; k++)
            if (g->nbr[k] > i && fprintf(f, "%d,%d,%.17g\n", i, g->nbr[k], g->w[k]) < 0)
                return -1;
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
