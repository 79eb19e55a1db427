// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests of the message-size distributions (src/workload/workload_dist.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "homa.h"
#include "workload_dist.h"
#include "workload_rng.h"

/* The folder of w1..w5.cdf: the repository's workloads/ (the test runs
 * from the top of the source tree). */
#define HOMA_WORKLOAD_TEST_DIR "workloads"

static const char tiny[] =
	"# a tiny CDF\n"
	"10 0.25\n"
	"\n"
	"  100 0.75   # three quarters\n"
	"1000 1.0\n";

static void workload_dist_parse__tiny_cdf(void **state)
{
	struct workload_dist w;
	char err[128];

	(void)state;
	assert_int_equal(workload_dist_parse(&w, tiny, 1000000, "tiny", err,
					     sizeof(err)), 0);
	assert_int_equal(w.n, 3);
	assert_true(w.mean > 302.499 && w.mean < 302.501);
	assert_string_equal(w.name, "tiny");
	workload_dist_free(&w);
}

static void workload_dist_sample__inverse_cdf(void **state)
{
	struct workload_dist w;
	char err[128];

	(void)state;
	assert_int_equal(workload_dist_parse(&w, tiny, 1000000, "tiny", err,
					     sizeof(err)), 0);
	assert_int_equal(workload_dist_sample(&w, 0.0), 10);
	assert_int_equal(workload_dist_sample(&w, 0.2499), 10);
	assert_int_equal(workload_dist_sample(&w, 0.25), 100);
	assert_int_equal(workload_dist_sample(&w, 0.7499), 100);
	assert_int_equal(workload_dist_sample(&w, 0.75), 1000);
	assert_int_equal(workload_dist_sample(&w, 0.999999), 1000);
	workload_dist_free(&w);
}

/* Sampled frequencies follow the distribution. */
static void workload_dist_sample__frequencies(void **state)
{
	struct workload_dist w;
	struct workload_rng r;
	int n10 = 0, n100 = 0, n1000 = 0, i;
	char err[128];

	(void)state;
	assert_int_equal(workload_dist_parse(&w, tiny, 1000000, "tiny", err,
					     sizeof(err)), 0);
	workload_rng_seed(&r, 9, 0);
	for (i = 0; i < 100000; i++) {
		uint32_t s = workload_dist_sample(&w, workload_rng_uniform(&r));

		n10 += s == 10;
		n100 += s == 100;
		n1000 += s == 1000;
	}
	assert_int_equal(n10 + n100 + n1000, 100000);
	assert_true(n10 > 24000 && n10 < 26000);
	assert_true(n100 > 49000 && n100 < 51000);
	assert_true(n1000 > 24000 && n1000 < 26000);
	workload_dist_free(&w);
}

/* Sizes above the cap become the cap; fractions are normalised. */
static void workload_dist_parse__cap_and_normalise(void **state)
{
	struct workload_dist w;
	char err[128];

	(void)state;
	assert_int_equal(workload_dist_parse(&w, "10 0.25\n2000000 0.4\n"
					     "3000000 0.5\n", 1000000, "c",
					     err, sizeof(err)), 0);
	assert_int_equal(w.n, 2);
	assert_int_equal(w.sizes[1], 1000000);
	assert_true(w.cum[0] > 0.4999 && w.cum[0] < 0.5001);
	assert_true(w.cum[1] == 1.0);
	assert_int_equal(workload_dist_sample(&w, 0.6), 1000000);
	workload_dist_free(&w);
}

static void workload_dist_parse__errors(void **state)
{
	static const char *const bad[] = {
		"", "# nothing\n", "10 0.5\n5 1\n", "10 0.5\n20 0.4\n",
		"0 1\n", "10 1.5\n", "10\n", "ten 1\n", "10 0.5 x\n",
		"10 0\n",
	};
	struct workload_dist w;
	char err[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(workload_dist_parse(&w, bad[i], 1000000, "b",
						     err, sizeof(err)),
				 -EINVAL);
		assert_true(strlen(err) > 0);
	}
	assert_int_equal(workload_dist_parse(&w, "10 0.5\n5 1\n", 1000000,
					     "b", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "b:2:"));
}

static void workload_dist_load__builtin_names(void **state)
{
	struct workload_dist w;
	const char *dir = HOMA_WORKLOAD_TEST_DIR;
	char err[256];
	int i;

	(void)state;
	assert_non_null(dir);
	for (i = 1; i <= 5; i++) {
		char name[4] = { 'W', (char)('0' + i), 0, 0 };

		assert_int_equal(workload_dist_load(&w, name, dir,
						    HOMA_MAX_MESSAGE_LENGTH,
						    err, sizeof(err)), 0);
		assert_true(w.n > 10);
		assert_true(w.sizes[w.n - 1] <= HOMA_MAX_MESSAGE_LENGTH);
		assert_true(w.cum[w.n - 1] == 1.0);
		assert_int_equal(w.name[0], 'w');
		workload_dist_free(&w);
	}
	assert_int_equal(workload_dist_load(&w, "/nonexistent/x.cdf", dir,
					    HOMA_MAX_MESSAGE_LENGTH, err,
					    sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/x.cdf"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(workload_dist_parse__tiny_cdf),
		cmocka_unit_test(workload_dist_sample__inverse_cdf),
		cmocka_unit_test(workload_dist_sample__frequencies),
		cmocka_unit_test(workload_dist_parse__cap_and_normalise),
		cmocka_unit_test(workload_dist_parse__errors),
		cmocka_unit_test(workload_dist_load__builtin_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
