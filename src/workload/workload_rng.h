/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * workload_rng - seeded random numbers: xoshiro256** seeded through
 * splitmix64.  Every random choice of a simulation (src/sim) or of a load
 * generator's workload (homa-perf) comes from a stream derived from one
 * seed, so the same seed gives the same choices.  No rand(), no clock.
 */
#ifndef WORKLOAD_RNG_H
#define WORKLOAD_RNG_H

#include <stdint.h>

struct workload_rng {
	uint64_t s[4];
};

/* workload_rng_seed - start the stream of (seed, stream): distinct stream
 * numbers give independent-looking sequences from the same seed. */
void workload_rng_seed(struct workload_rng *r, uint64_t seed, uint64_t stream);

/* workload_rng_next - the next 64 random bits. */
uint64_t workload_rng_next(struct workload_rng *r);

/* workload_rng_uniform - a double in [0, 1) with 53 random bits. */
double workload_rng_uniform(struct workload_rng *r);

/* workload_rng_below - an integer in [0, n) (n >= 1), without modulo bias. */
uint64_t workload_rng_below(struct workload_rng *r, uint64_t n);

/* workload_rng_exponential - a sample of the exponential distribution with the
 * given mean (> 0). */
double workload_rng_exponential(struct workload_rng *r, double mean);

#endif /* WORKLOAD_RNG_H */
