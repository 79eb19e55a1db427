/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sim_rng - the simulator's seeded random numbers: xoshiro256** seeded
 * through splitmix64.  Every random choice of a simulation comes from a
 * stream derived from the one seed, so the same seed gives the same run.
 * No rand(), no clock.
 */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stdint.h>

struct sim_rng {
	uint64_t s[4];
};

/* sim_rng_seed - start the stream of (seed, stream): distinct stream
 * numbers give independent-looking sequences from the same seed. */
void sim_rng_seed(struct sim_rng *r, uint64_t seed, uint64_t stream);

/* sim_rng_next - the next 64 random bits. */
uint64_t sim_rng_next(struct sim_rng *r);

/* sim_rng_uniform - a double in [0, 1) with 53 random bits. */
double sim_rng_uniform(struct sim_rng *r);

/* sim_rng_below - an integer in [0, n) (n >= 1), without modulo bias. */
uint64_t sim_rng_below(struct sim_rng *r, uint64_t n);

/* sim_rng_exponential - a sample of the exponential distribution with the
 * given mean (> 0). */
double sim_rng_exponential(struct sim_rng *r, double mean);

#endif /* SIM_RNG_H */
