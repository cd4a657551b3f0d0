/* trn_fuse.c -- a decentralized round's mix (trn_mix) as one loop over the
 * elements: the weighted sum of the terms (or the sum built as the models
 * arrived), the node's own term, the optimizer update and the snapshot
 * copy, reading each model once and writing the parameters, the momentum
 * and the snapshot once, where run_mix's BLAS passes read and write the sum
 * and the parameters up to four times.  It gives the bits of those passes
 * only where the optimizer's element is the one mdl_optim_terms describes
 * and cblas_daxpy's element is one this kernel knows: a fused multiply-add
 * for the first len & -B elements of a call of length len and a rounded
 * product added for the rest (B = 1: every element fused, OpenBLAS's
 * SkylakeX kernel; B = 16: its Haswell kernel, which it also runs on AMD
 * Zen 4 and 5).  trn_fuse_probe finds B on this machine (AVX2 + FMA,
 * daxpy and mdl_optim_step_range against this kernel on a few lengths and
 * offsets, for every optimizer form) and the trainer fuses only when one
 * B passes.  It does not decide when or on which thread a mix runs
 * (trn.c).
 */
#include "trn_internal.h"

#include <string.h>
#include <gsl/gsl_cblas.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TGT __attribute__((target("avx2,fma")))

/* cblas_daxpy's element y + a x: fused (fm) or with the product rounded
 * first (a daxpy's tail, see the top of the file). */
#define AXPY(a, x, y, fm) ((fm) ? _mm256_fmadd_pd(a, x, y) : _mm256_add_pd(y, _mm256_mul_pd(a, x)))

/* Lanes lo .. lo + n - 1 (n < 4) of a 4-double vector. */
TGT static __m256i tail_mask(size_t n)
{
    return _mm256_setr_epi64x(n > 0 ? -1 : 0, n > 1 ? -1 : 0, n > 2 ? -1 : 0, 0);
}

/* The update of 4 elements at s (the mixed parameters), as
 * mdl_optim_step_range does each: the same operations in the same order. */
TGT static inline __m256d update(const mdl_optim_terms *e, __m256d s, __m256d g, double *b,
                                 __m256i mask, int full, int fm)
{
    const __m256d lr = _mm256_set1_pd(e->lr), inv = _mm256_set1_pd(e->inv);
    const __m256d wd = _mm256_set1_pd(e->wd), mu = _mm256_set1_pd(e->mu);
    switch (e->kind) {
    case MDL_OPTIM_PLAIN:
        return AXPY(_mm256_set1_pd(e->a), g, s, fm);
    case MDL_OPTIM_DECAY: {
        __m256d d = _mm256_add_pd(_mm256_mul_pd(g, inv), _mm256_mul_pd(wd, s));
        return _mm256_sub_pd(s, _mm256_mul_pd(lr, d));
    }
    case MDL_OPTIM_MOMENTUM: {
        __m256d bb = full ? _mm256_loadu_pd(b) : _mm256_maskload_pd(b, mask);
        bb = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(mu, bb), _mm256_mul_pd(g, inv)),
                           _mm256_mul_pd(wd, s));
        if (full)
            _mm256_storeu_pd(b, bb);
        else
            _mm256_maskstore_pd(b, mask, bb);
        return _mm256_sub_pd(s, _mm256_mul_pd(lr, bb));
    }
    default: {   /* MDL_OPTIM_NESTEROV */
        __m256d d = _mm256_add_pd(_mm256_mul_pd(g, inv), _mm256_mul_pd(wd, s));
        __m256d bb = full ? _mm256_loadu_pd(b) : _mm256_maskload_pd(b, mask);
        bb = _mm256_add_pd(_mm256_mul_pd(mu, bb), d);
        if (full)
            _mm256_storeu_pd(b, bb);
        else
            _mm256_maskstore_pd(b, mask, bb);
        return _mm256_sub_pd(s, _mm256_mul_pd(lr, _mm256_add_pd(d, _mm256_mul_pd(mu, bb))));
    }
    }
}

/* Elements [i, i + 4) (full) or the n < 4 left from i (mask); fm: in
 * the daxpys' fused part. */
TGT static inline void mix4(const trn_mix_terms *m, double *x, const mdl_optim_terms *e,
                            size_t i, __m256i mask, int full, int fm)
{
#define LD(p) (full ? _mm256_loadu_pd(p) : _mm256_maskload_pd(p, mask))
#define ST(p, v) (full ? _mm256_storeu_pd(p, v) : _mm256_maskstore_pd(p, mask, v))
    const __m256d zero = _mm256_setzero_pd();
    __m256d s;
    if (m->clear) {   /* the sum from a zero, as it arrived; cleared once read */
        s = LD(m->clear + i);
        ST(m->clear + i, zero);
    } else {          /* a zeroed accumulator, one daxpy per term in order */
        s = zero;
        for (int j = 0; j < m->n; j++)
            s = AXPY(_mm256_set1_pd(m->w[j]), LD(m->x[j] + i), s, fm);
    }
    s = AXPY(_mm256_set1_pd(m->own_w), LD(m->own + i), s, fm);
    if (m->g)
        s = update(e, s, LD(m->g + i), e->b ? e->b + i : NULL, mask, full, fm);
    ST(x + i, s);
    if (m->out)
        ST(m->out + i, s);
#undef LD
#undef ST
}

/* [lo, hi) as daxpys of that range whose block is B (1 or a multiple of
 * 4: the fused part ends on a group of 4). */
TGT static void fused(const trn_mix_terms *m, double *x, const mdl_optim_terms *e, size_t lo,
                      size_t hi, size_t B)
{
    const __m256i all = _mm256_set1_epi64x(-1);
    const size_t f = lo + ((hi - lo) & ~(B - 1));   /* the daxpys' tails start here */
    size_t i = lo;
    for (; i + 4 <= f; i += 4)
        mix4(m, x, e, i, all, 1, 1);
    for (; i + 4 <= hi; i += 4)
        mix4(m, x, e, i, all, 1, 0);
    if (i < hi)
        mix4(m, x, e, i, tail_mask(hi - i), 0, i < f);
}

static int cpu_ok(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#else
static int cpu_ok(void) { return 0; }
static void fused(const trn_mix_terms *m, double *x, const mdl_optim_terms *e, size_t lo,
                  size_t hi, size_t B)
{
    (void)m, (void)x, (void)e, (void)lo, (void)hi, (void)B;
}
#endif

void trn_fuse_mix(trn_trainer *t, int node, const trn_mix_terms *m, double *x, size_t lo,
                  size_t hi)
{
    mdl_optim_terms e = { 0 };
    if (m->g)
        e = mdl_optim_terms_get(t->opt, node, m->g_div);
    if (x == m->out) {   /* moved: the mix is written once, to out */
        trn_mix_terms one = *m;
        one.out = NULL;
        fused(&one, x, &e, lo, hi, (size_t)t->fuse);
        return;
    }
    fused(m, x, &e, lo, hi, (size_t)t->fuse);
}

/* ---- the probe: this kernel against the BLAS passes, bit for bit ---- */

enum { PROBE_N = 203 };   /* three blocks of 64 and a tail, several offsets */

static double probe_val(unsigned *s, size_t k)
{
    *s = *s * 1103515245u + 12345u;
    double v = (double)(*s >> 8) / (double)(1u << 24) * 2.0 - 1.0;
    return k % 11 == 0 ? (k % 22 ? 0.0 : -0.0) : v;
}

/* One mix with the optimizer of spec over [lo, hi), fused and by passes
 * (memset, daxpy per term, daxpy own, memcpy, the update, memcpy out),
 * with and without a sum to clear; 1 when every output is the same bits. */
static int probe_spec(const mdl_optim_spec *sp, size_t lo, size_t hi, size_t B)
{
    enum { T = 3 };
    double xs[T][PROBE_N], own[PROBE_N], g[PROBE_N], acc[2][PROBE_N], x[2][PROBE_N],
        out[2][PROBE_N];
    mdl_optim *o[2] = { mdl_optim_create(sp, 1, PROBE_N), mdl_optim_create(sp, 1, PROBE_N) };
    int same = o[0] && o[1];
    unsigned s = 7;
    for (size_t k = 0; k < PROBE_N; k++) {
        for (int j = 0; j < T; j++)
            xs[j][k] = probe_val(&s, k);
        own[k] = probe_val(&s, k);
        g[k] = probe_val(&s, k + 3);
        acc[0][k] = acc[1][k] = probe_val(&s, k + 5);
    }
    const double w[T] = { 0.3125, -0.21, 1.0 / 3.0 };
    const double *xp[T] = { xs[0], xs[1], xs[2] };
    for (int clear = 0; same && clear < 2; clear++) {
        for (int r = 0; r < 2; r++) {   /* two updates: the momentum is read back */
            const size_t len = hi - lo;
            /* by passes */
            double *a = acc[0];
            double buf[PROBE_N];
            if (!clear) {
                a = buf;
                memset(a + lo, 0, len * sizeof(double));
                for (int j = 0; j < T; j++)
                    cblas_daxpy((int)len, w[j], xs[j] + lo, 1, a + lo, 1);
            }
            cblas_daxpy((int)len, -0.75, own + lo, 1, a + lo, 1);
            memcpy(x[0] + lo, a + lo, len * sizeof(double));
            if (clear)
                memset(a + lo, 0, len * sizeof(double));
            mdl_optim_step_range(o[0], 0, x[0], g, 2.0, lo, hi);
            memcpy(out[0] + lo, x[0] + lo, len * sizeof(double));
            /* fused */
            trn_mix_terms m = { .n = clear ? 1 : T, .x = xp, .w = w, .own_w = -0.75,
                                .own = own, .g = g, .g_div = 2.0, .out = out[1],
                                .clear = clear ? acc[1] : NULL };
            mdl_optim_terms e = mdl_optim_terms_get(o[1], 0, 2.0);
            fused(&m, x[1], &e, lo, hi, B);
            mdl_optim_count(o[0], 0);
            mdl_optim_count(o[1], 0);
            same = same && !memcmp(x[0] + lo, x[1] + lo, len * sizeof(double))
                   && !memcmp(out[0] + lo, out[1] + lo, len * sizeof(double))
                   && !memcmp(acc[0] + lo, acc[1] + lo, len * sizeof(double));
        }
    }
    mdl_optim_destroy(o[0]);
    mdl_optim_destroy(o[1]);
    return same;
}

/* B = 1 first (every element fused), then the blocks of OpenBLAS's
 * kernels whose tail is plain C; the cuts tell 8, 16 and 32 apart (their
 * fused parts differ on lengths 203 and 180). */
int trn_fuse_probe(void)
{
    if (!cpu_ok())
        return 0;
    static const mdl_optim_spec specs[] = {
        { .lr = 0.1 },                                             /* plain: daxpy */
        { .lr = 0.1, .weight_decay = 1e-3, .warmup_steps = 3 },    /* decay */
        { .lr = 0.1, .momentum = 0.9, .weight_decay = 1e-3 },      /* momentum */
        { .lr = 0.1, .momentum = 0.9, .nesterov = 1, .weight_decay = 1e-3 },
    };
    static const size_t cuts[][2] = { { 0, PROBE_N }, { 1, 70 }, { 2, 5 }, { 3, 4 },
                                      { 64, 203 }, { 5, 185 } };
    static const size_t blocks[] = { 1, 16, 8, 32 };
    for (size_t b = 0; b < sizeof blocks / sizeof *blocks; b++) {
        int ok = 1;
        for (size_t k = 0; ok && k < sizeof specs / sizeof *specs; k++)
            for (size_t c = 0; ok && c < sizeof cuts / sizeof *cuts; c++)
                ok = probe_spec(&specs[k], cuts[c][0], cuts[c][1], blocks[b]);
        if (ok)
            return (int)blocks[b];
    }
    return 0;
}
