// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests of the simulator's random numbers (src/sim/sim_rng.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim_rng.h"

/* The generator is xoshiro256**: the published algorithm's outputs from
 * the state {1, 2, 3, 4}. */
static void sim_rng_next__xoshiro256starstar_reference(void **state)
{
	struct sim_rng r = { { 1, 2, 3, 4 } };

	(void)state;
	assert_true(sim_rng_next(&r) == 11520);
	assert_true(sim_rng_next(&r) == 0);
	assert_true(sim_rng_next(&r) == 1509978240);
	assert_true(sim_rng_next(&r) == 1215971899390074240ull);
}

static void sim_rng_seed__same_seed_same_sequence(void **state)
{
	struct sim_rng a, b;
	int i;

	(void)state;
	sim_rng_seed(&a, 12345, 7);
	sim_rng_seed(&b, 12345, 7);
	for (i = 0; i < 1000; i++)
		assert_true(sim_rng_next(&a) == sim_rng_next(&b));
}

static void sim_rng_seed__streams_and_seeds_differ(void **state)
{
	struct sim_rng a, b, c;
	int i, same_ab = 0, same_ac = 0;

	(void)state;
	sim_rng_seed(&a, 1, 0);
	sim_rng_seed(&b, 1, 1);
	sim_rng_seed(&c, 2, 0);
	for (i = 0; i < 100; i++) {
		uint64_t x = sim_rng_next(&a);

		same_ab += x == sim_rng_next(&b);
		same_ac += x == sim_rng_next(&c);
	}
	assert_int_equal(same_ab, 0);
	assert_int_equal(same_ac, 0);
}

static void sim_rng_uniform__range_and_mean(void **state)
{
	struct sim_rng r;
	double sum = 0.0;
	int i;

	(void)state;
	sim_rng_seed(&r, 3, 0);
	for (i = 0; i < 100000; i++) {
		double u = sim_rng_uniform(&r);

		assert_true(u >= 0.0 && u < 1.0);
		sum += u;
	}
	assert_true(sum / 100000 > 0.49 && sum / 100000 < 0.51);
}

static void sim_rng_below__every_value_in_range(void **state)
{
	struct sim_rng r;
	int seen[7] = { 0 }, i;

	(void)state;
	sim_rng_seed(&r, 4, 0);
	assert_true(sim_rng_below(&r, 1) == 0);
	assert_true(sim_rng_below(&r, 0) == 0);
	for (i = 0; i < 7000; i++) {
		uint64_t v = sim_rng_below(&r, 7);

		assert_true(v < 7);
		seen[v]++;
	}
	for (i = 0; i < 7; i++)
		assert_true(seen[i] > 800 && seen[i] < 1200);
}

static void sim_rng_exponential__mean(void **state)
{
	struct sim_rng r;
	double sum = 0.0;
	int i;

	(void)state;
	sim_rng_seed(&r, 5, 0);
	for (i = 0; i < 200000; i++) {
		double x = sim_rng_exponential(&r, 1000.0);

		assert_true(x >= 0.0);
		sum += x;
	}
	assert_true(sum / 200000 > 980.0 && sum / 200000 < 1020.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_rng_next__xoshiro256starstar_reference),
		cmocka_unit_test(sim_rng_seed__same_seed_same_sequence),
		cmocka_unit_test(sim_rng_seed__streams_and_seeds_differ),
		cmocka_unit_test(sim_rng_uniform__range_and_mean),
		cmocka_unit_test(sim_rng_below__every_value_in_range),
		cmocka_unit_test(sim_rng_exponential__mean),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
