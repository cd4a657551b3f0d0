/* sim_mix.h -- the one splitmix64 mixer of dtsim and the fold of a 64-bit
 * seed to mt19937's 32 bits, header-only so that modules which must not
 * link the engine (models/, topologies/) share the very function the
 * engine derives its streams with.  It holds no state and creates no
 * generator (sim_rng.h does).
 */
#ifndef SIM_MIX_H
#define SIM_MIX_H

#include <stdint.h>

/* splitmix64's increment, 2^64 / golden ratio. */
#define SIM_RNG_GOLDEN_GAMMA UINT64_C(0x9e3779b97f4a7c15)

/* What a derived seed folding to 0 becomes instead.  Any nonzero constant
 * does; this one is the 32-bit golden ratio so it is not a "round" seed
 * someone might also pick by hand. */
#define SIM_RNG_FOLD_ZERO UINT32_C(0x9e3779b9)

/* splitmix64 finaliser of one 64-bit word (a bijection). */
static inline uint64_t sim_rng_mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* splitmix64's output for state x: the finaliser of x + the golden gamma. */
static inline uint64_t sim_rng_splitmix64(uint64_t x)
{
    return sim_rng_mix64(x + SIM_RNG_GOLDEN_GAMMA);
}

/* The 32-bit mt19937 seed of a derived 64-bit seed: the two halves xored,
 * never 0 (mt19937 would silently replace 0 by 4357, aliasing two streams). */
static inline uint32_t sim_rng_fold32(uint64_t derived)
{
    uint32_t s = (uint32_t)(derived ^ (derived >> 32));
    return s != 0 ? s : SIM_RNG_FOLD_ZERO;
}

#endif
