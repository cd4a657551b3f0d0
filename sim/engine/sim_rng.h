/* sim_rng.h -- every random stream of a run derives from the scenario seed,
 * the node and the purpose through one function (splitmix64), so turning one
 * feature on never shifts another feature's draws.  Streams are GSL mt19937
 * generators.  gsl_rng_env_setup() is never called: the environment must not
 * become a hidden input.
 */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include "sim_mix.h"

#include <stdint.h>
#include <gsl/gsl_rng.h>

/* What a stream is used for.  Append new purposes at the end: the numbers
 * are part of the determinism contract. */
typedef enum sim_rng_purpose {
    SIM_RNG_DATA = 1,      /* minibatch sampling */
    SIM_RNG_COMPUTE = 2,   /* step-time noise */
    SIM_RNG_LINK = 3,      /* link jitter */
    SIM_RNG_FAULT = 4,     /* failures */
    SIM_RNG_ALGO = 5,      /* algorithm choices (peer selection) */
    SIM_RNG_INIT = 6,      /* model initialisation */
    SIM_RNG_PARTITION = 7, /* data partitioning */
    SIM_RNG_DATAGEN = 8,   /* synthetic data generation */
    SIM_RNG_TOPOLOGY = 9,  /* random graphs */
    SIM_RNG_EVAL = 10,     /* evaluation subsets */
    SIM_RNG_SLOWDOWN = 11, /* time-varying slowdowns (Markov stragglers) */
    SIM_RNG_GROUPS = 12,   /* node groups chosen as a fraction */
    SIM_RNG_LOSS = 13,     /* message loss (SIM_RNG_LINK: jitter) */
    /* Not a stream of a run: the seeds of a sweep's replicates
     * (sim/sweep/), derived with node = the replicate index.  Far from the
     * stream purposes so that appending those never meets it. */
    SIM_RNG_REPLICATE = 0x100
} sim_rng_purpose;

/* sim_rng_mix64, sim_rng_splitmix64 and sim_rng_fold32: sim_mix.h. */

/* The seed of stream (node, purpose) for a scenario seed.  node is
 * UINT32_MAX for streams that belong to no node. */
uint64_t sim_rng_derive(uint64_t scenario_seed, uint32_t node, uint32_t purpose);

/* A new mt19937 stream seeded from sim_rng_derive folded by sim_rng_fold32
 * (mt19937 uses 32 bits and maps 0 to 4357).  Caller frees
 * with gsl_rng_free.  NULL when out of memory. */
gsl_rng *sim_rng_stream_create(uint64_t scenario_seed, uint32_t node, uint32_t purpose);

#define SIM_RNG_NO_NODE UINT32_MAX

#endif
