/* sim_rng.c -- derivation of every random stream's seed from the scenario
 * seed, the node and the purpose (splitmix64), and creation of the GSL
 * mt19937 stream that seed starts.  It does not draw numbers itself, keeps
 * no global state and never reads the environment (no gsl_rng_env_setup),
 * so a stream depends on (seed, node, purpose) and nothing else.
 */
#include "sim_rng.h"

#include <gsl/gsl_rng.h>
#include <stdint.h>

/* splitmix64's increment, 2^64 / golden ratio. */
#define GOLDEN_GAMMA UINT64_C(0x9e3779b97f4a7c15)

/* What a derived seed folding to 0 becomes instead.  Any nonzero constant
 * does; this one is the 32-bit golden ratio so it is not a "round" seed
 * someone might also pick by hand. */
#define FOLD_ZERO_REPLACEMENT UINT32_C(0x9e3779b9)

uint64_t
sim_rng_mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* Every step is a bijection of 64-bit words (adding a constant, xoring a
 * constant, mix64), and (node, purpose) packs into one word without loss.
 * So under one scenario seed, two different (node, purpose) pairs can never
 * share a 64-bit seed, and one stream gets a different seed under every
 * scenario seed.  Only the fold to 32 bits can make two streams meet. */
uint64_t
sim_rng_derive(uint64_t scenario_seed, uint32_t node, uint32_t purpose)
{
    uint64_t base = sim_rng_mix64(scenario_seed + GOLDEN_GAMMA);
    uint64_t key = ((uint64_t)node << 32) | purpose;
    return sim_rng_mix64(base ^ (key + GOLDEN_GAMMA));
}

uint32_t
sim_rng_fold32(uint64_t derived)
{
    uint32_t s = (uint32_t)(derived ^ (derived >> 32));
    return s != 0 ? s : FOLD_ZERO_REPLACEMENT;
}

gsl_rng *
sim_rng_stream_create(uint64_t scenario_seed, uint32_t node, uint32_t purpose)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (r == NULL)
        return NULL;
    gsl_rng_set(r, sim_rng_fold32(sim_rng_derive(scenario_seed, node, purpose)));
    return r;
}
