// SPDX-License-Identifier: BSD-2-Clause
/* Seeded random numbers: see workload_rng.h. */

#include <math.h>

#include "workload_rng.h"

/* splitmix64 - advance *x and return the next output of splitmix64. */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* rotl - rotate x left by k (0 < k < 64). */
static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void workload_rng_seed(struct workload_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ull);
	int i;

	/* Mix the stream in twice so nearby (seed, stream) pairs differ. */
	x = splitmix64(&x) ^ stream;
	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
	if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0)
		r->s[0] = 1;
}

uint64_t workload_rng_next(struct workload_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double workload_rng_uniform(struct workload_rng *r)
{
	return (double)(workload_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t workload_rng_below(struct workload_rng *r, uint64_t n)
{
	uint64_t limit, x;

	if (n <= 1)
		return 0;
	/* Reject the top partial copy of [0, n) so every value is equally
	 * likely. */
	limit = UINT64_MAX - UINT64_MAX % n;
	do {
		x = workload_rng_next(r);
	} while (x >= limit);
	return x % n;
}

double workload_rng_exponential(struct workload_rng *r, double mean)
{
	/* 1 - u is in (0, 1], so the log is finite. */
	return -mean * log(1.0 - workload_rng_uniform(r));
}
