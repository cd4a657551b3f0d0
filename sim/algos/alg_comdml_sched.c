/* alg_comdml_sched.c -- ComDML's pairing scheduler (see
 * alg_comdml_sched.h): the pipelined makespan of a slow/helper pair on
 * idle FIFO links and the greedy slowest-with-fastest pairing with the
 * best cut.  It knows the links only through alg_link_time and the agents
 * only through their profiles; what a pair then does is alg_comdml.c's.
 */
#include "alg_comdml_sched.h"

double comdml_pair_makespan(int H, double Tj, double Tk, double front, double back,
                            double lat_a, double ser_a, double t_w)
{
    const double tf = Tj * front, tb = Tk * back;
    double up = 0.0, be = H * Tk;
    for (int i = 1; i <= H; i++) {
        double ss = i * tf > up ? i * tf : up;
        up = ss + ser_a;
        double arr = up + lat_a;
        be = (be > arr ? be : arr) + tb;
    }
    be += t_w;
    return H * tf > be ? H * tf : be;
}

static double pair_time(const alg_ctx *ctx, int H, const double *est, int j, int k,
                        const comdml_cut *c)
{
    const double lat = alg_link_time(ctx, j, k, 0);
    const double ser = alg_link_time(ctx, j, k, c->act_bytes) - lat;
    return comdml_pair_makespan(H, est[j], est[k], c->front, c->back, lat, ser,
                                alg_link_time(ctx, k, j, c->w_bytes));
}

static int slower(const double *est, int a, int b)
{
    return est[a] > est[b] || (est[a] == est[b] && a < b);
}

double comdml_schedule(const alg_ctx *ctx, int H, const double *est, int *order, int m,
                       const comdml_cut *cut, int n_cuts, int *partner, int *cut_of,
                       double *pairs)
{
    for (int a = 1; a < m; a++)   /* insertion sort, slowest first */
        for (int b = a; b > 0 && slower(est, order[b], order[b - 1]); b--) {
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    double worst = 0.0;
    int lo = 0, hi = m - 1;
    for (; lo < hi; lo++, hi--) {
        int j = order[lo], k = order[hi], best = 0;
        double bt = H * est[j];
        for (int s = 1; s <= n_cuts; s++) {
            double t = pair_time(ctx, H, est, j, k, &cut[s]);
            if (t < bt) {
                bt = t;
                best = s;
            }
        }
        if (!best)
            break;
        partner[j] = k;
        partner[k] = j;
        cut_of[j] = cut_of[k] = best;
        ++*pairs;
        if (bt > worst)
            worst = bt;
    }
    for (int q = lo; q <= hi; q++)
        if (H * est[order[q]] > worst)
            worst = H * est[order[q]];
    return worst;
}
