/* alg_comdml_sched.h -- ComDML's pairing scheduler (alg_comdml.c): the
 * predicted makespan of a slow agent offloading its back layers to a
 * helper, and the greedy pairing of the slowest with the fastest agents
 * with the best cut for each pair.  Pure arithmetic on profiles and link
 * times (alg.h only); it starts nothing and sends nothing.
 */
#ifndef ALG_COMDML_SCHED_H
#define ALG_COMDML_SCHED_H

#include "alg.h"

/* What a cut costs: work shares of a whole step, message bytes. */
typedef struct comdml_cut {
    double front, back;
    double act_bytes, w_bytes;
} comdml_cut;

/* Predicted makespan of H front steps of Tj * front seconds, each followed
 * by an activation message (ser_a seconds in the sender's FIFO uplink,
 * then lat_a), and of the helper's H own steps of Tk then one back step of
 * Tk * back per batch once it is in, then t_w for the back part's return:
 * max(H Tj front, last back step's end + t_w).  O(H). */
double comdml_pair_makespan(int H, double Tj, double Tk, double front, double back,
                            double lat_a, double ser_a, double t_w);

/* Pairs the m agents of order (node numbers; reordered, slowest first by
 * est[node], ties by node number): the slowest unpaired j with the
 * fastest unpaired k at the cut s in 1 .. n_cuts of least predicted
 * makespan, kept when below H est[j]; inward until a pair does not gain.
 * Writes partner[] and cut_of[] of the paired agents (others untouched),
 * adds the pairs to *pairs and returns the round's predicted makespan
 * (its slowest pair or lone agent).  O(m^2 + pairs n_cuts H). */
double comdml_schedule(const alg_ctx *ctx, int H, const double *est, int *order, int m,
                       const comdml_cut *cut, int n_cuts, int *partner, int *cut_of,
                       double *pairs);

#endif
