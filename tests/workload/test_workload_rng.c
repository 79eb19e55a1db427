// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests of the seeded random numbers (src/workload/workload_rng.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "workload_rng.h"

/* The generator is xoshiro256**: the published algorithm's outputs from
 * the state {1, 2, 3, 4}. */
static void workload_rng_next__xoshiro256starstar_reference(void **state)
{
	struct workload_rng r = { { 1, 2, 3, 4 } };

	(void)state;
	assert_true(workload_rng_next(&r) == 11520);
	assert_true(workload_rng_next(&r) == 0);
	assert_true(workload_rng_next(&r) == 1509978240);
	assert_true(workload_rng_next(&r) == 1215971899390074240ull);
}

static void workload_rng_seed__same_seed_same_sequence(void **state)
{
	struct workload_rng a, b;
	int i;

	(void)state;
	workload_rng_seed(&a, 12345, 7);
	workload_rng_seed(&b, 12345, 7);
	for (i = 0; i < 1000; i++)
		assert_true(workload_rng_next(&a) == workload_rng_next(&b));
}

static void workload_rng_seed__streams_and_seeds_differ(void **state)
{
	struct workload_rng a, b, c;
	int i, same_ab = 0, same_ac = 0;

	(void)state;
	workload_rng_seed(&a, 1, 0);
	workload_rng_seed(&b, 1, 1);
	workload_rng_seed(&c, 2, 0);
	for (i = 0; i < 100; i++) {
		uint64_t x = workload_rng_next(&a);

		same_ab += x == workload_rng_next(&b);
		same_ac += x == workload_rng_next(&c);
	}
	assert_int_equal(same_ab, 0);
	assert_int_equal(same_ac, 0);
}

static void workload_rng_uniform__range_and_mean(void **state)
{
	struct workload_rng r;
	double sum = 0.0;
	int i;

	(void)state;
	workload_rng_seed(&r, 3, 0);
	for (i = 0; i < 100000; i++) {
		double u = workload_rng_uniform(&r);

		assert_true(u >= 0.0 && u < 1.0);
		sum += u;
	}
	assert_true(sum / 100000 > 0.49 && sum / 100000 < 0.51);
}

static void workload_rng_below__every_value_in_range(void **state)
{
	struct workload_rng r;
	int seen[7] = { 0 }, i;

	(void)state;
	workload_rng_seed(&r, 4, 0);
	assert_true(workload_rng_below(&r, 1) == 0);
	assert_true(workload_rng_below(&r, 0) == 0);
	for (i = 0; i < 7000; i++) {
		uint64_t v = workload_rng_below(&r, 7);

		assert_true(v < 7);
		seen[v]++;
	}
	for (i = 0; i < 7; i++)
		assert_true(seen[i] > 800 && seen[i] < 1200);
}

static void workload_rng_exponential__mean(void **state)
{
	struct workload_rng r;
	double sum = 0.0;
	int i;

	(void)state;
	workload_rng_seed(&r, 5, 0);
	for (i = 0; i < 200000; i++) {
		double x = workload_rng_exponential(&r, 1000.0);

		assert_true(x >= 0.0);
		sum += x;
	}
	assert_true(sum / 200000 > 980.0 && sum / 200000 < 1020.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			workload_rng_next__xoshiro256starstar_reference),
		cmocka_unit_test(workload_rng_seed__same_seed_same_sequence),
		cmocka_unit_test(workload_rng_seed__streams_and_seeds_differ),
		cmocka_unit_test(workload_rng_uniform__range_and_mean),
		cmocka_unit_test(workload_rng_below__every_value_in_range),
		cmocka_unit_test(workload_rng_exponential__mean),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
