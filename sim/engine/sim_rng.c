/* sim_rng.c -- derivation of every random stream's seed from the scenario
 * seed, the node and the purpose (splitmix64 of sim_mix.h), and creation of the GSL
 * mt19937 stream that seed starts.  It does not draw numbers itself, keeps
 * no global state and never reads the environment (no gsl_rng_env_setup),
 * so a stream depends on (seed, node, purpose) and nothing else.
 */
#include "sim_rng.h"

#include <gsl/gsl_rng.h>
#include <stdint.h>

/* Every step is a bijection of 64-bit words (adding a constant, xoring a
 * constant, mix64), and (node, purpose) packs into one word without loss.
 * So under one scenario seed, two different (node, purpose) pairs can never
 * share a 64-bit seed, and one stream gets a different seed under every
 * scenario seed.  Only the fold to 32 bits can make two streams meet. */
uint64_t
sim_rng_derive(uint64_t scenario_seed, uint32_t node, uint32_t purpose)
{
    uint64_t base = sim_rng_splitmix64(scenario_seed);
    uint64_t key = ((uint64_t)node << 32) | purpose;
    return sim_rng_mix64(base ^ (key + SIM_RNG_GOLDEN_GAMMA));
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
