/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_homa_histogram.c - unit tests of homa_histogram (cmocka), in code
 * order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "homa_histogram.h"

/* fresh - a heap histogram, reset (the struct is too big for some stacks). */
static struct homa_histogram *fresh(void)
{
	struct homa_histogram *h = malloc(sizeof(*h));

	assert_non_null(h);
	homa_histogram_reset(h);
	return h;
}

/* filled - a fresh histogram holding value recorded n times (the caller
 * frees it). */
static struct homa_histogram *filled(uint64_t value, unsigned int n)
{
	struct homa_histogram *h = fresh();

	for (unsigned int k = 0; k < n; k++)
		homa_histogram_record(h, value);
	return h;
}

/* within - true when got is within `permille` thousandths of want. */
static int within(uint64_t got, uint64_t want, unsigned int permille)
{
	uint64_t diff = got > want ? got - want : want - got;

	return diff * 1000 <= want * permille;
}

static void test_homa_histogram_reset__empty(void **state)
{
	struct homa_histogram *h = fresh();

	(void)state;
	homa_histogram_record(h, 42);
	homa_histogram_reset(h);
	assert_int_equal(h->count, 0);
	assert_int_equal(h->max, 0);
	assert_true(h->min == UINT64_MAX);
	assert_int_equal(homa_histogram_percentile(h, 50.0), 0);
	assert_true(homa_histogram_mean(h) == 0.0);
	free(h);
}

static void test_homa_histogram_bucket_index__small_values_exact(void **state)
{
	uint64_t v;

	(void)state;
	for (v = 0; v < 2 * HOMA_HIST_SUB_COUNT; v++) {
		size_t i = homa_histogram_bucket_index(v);

		assert_int_equal(i, v);
		assert_int_equal(homa_histogram_bucket_low(i), v);
		assert_int_equal(homa_histogram_bucket_width(i), 1);
	}
}

/* check_bucket_holds - v lies in its bucket, and the bucket is at most
 * 1/SUB_COUNT of its lower bound wide. */
static void check_bucket_holds(uint64_t v)
{
	size_t i = homa_histogram_bucket_index(v);
	uint64_t low = homa_histogram_bucket_low(i);
	uint64_t width = homa_histogram_bucket_width(i);

	assert_true(i < HOMA_HIST_BUCKETS);
	assert_true(low <= v);
	assert_true(v - low < width);
	if (i >= HOMA_HIST_SUB_COUNT)
		assert_true(width <= low / HOMA_HIST_SUB_COUNT);
}

static void test_homa_histogram_bucket_index__contains_value(void **state)
{
	uint64_t v;
	unsigned int bit;

	(void)state;
	for (v = 0; v < 100000; v += 7)
		check_bucket_holds(v);
	for (bit = 8; bit < 64; bit++) {
		uint64_t p = (uint64_t)1 << bit;

		check_bucket_holds(p - 1);
		check_bucket_holds(p);
		check_bucket_holds(p + 1);
		check_bucket_holds(p + p / 3);
	}
	check_bucket_holds(UINT64_MAX);
}

static void test_homa_histogram_bucket_index__monotonic(void **state)
{
	size_t prev = 0, i;
	uint64_t v;

	(void)state;
	for (v = 1; v < ((uint64_t)1 << 62); v += v / 37 + 1) {
		i = homa_histogram_bucket_index(v);
		assert_true(i >= prev);
		prev = i;
	}
}

static void test_homa_histogram_bucket_index__last_bucket(void **state)
{
	(void)state;
	assert_int_equal(homa_histogram_bucket_index(UINT64_MAX),
			 HOMA_HIST_BUCKETS - 1);
}

static void test_homa_histogram_bucket_low__buckets_adjacent(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i + 1 < HOMA_HIST_BUCKETS; i++)
		assert_true(homa_histogram_bucket_low(i)
			    + homa_histogram_bucket_width(i)
			    == homa_histogram_bucket_low(i + 1));
	i = HOMA_HIST_BUCKETS - 1;
	assert_true(homa_histogram_bucket_low(i)
		    + (homa_histogram_bucket_width(i) - 1) == UINT64_MAX);
}

static void test_homa_histogram_record__count_min_max_mean(void **state)
{
	struct homa_histogram *h = fresh();

	(void)state;
	homa_histogram_record(h, 300);
	homa_histogram_record(h, 100);
	homa_histogram_record(h, 200);
	assert_int_equal(h->count, 3);
	assert_int_equal(h->min, 100);
	assert_int_equal(h->max, 300);
	assert_true(homa_histogram_mean(h) == 200.0);
	free(h);
}

static void test_homa_histogram_record__sum_saturates(void **state)
{
	struct homa_histogram *h = fresh();

	(void)state;
	homa_histogram_record(h, UINT64_MAX - 1);
	homa_histogram_record(h, 5);
	assert_true(h->sum == UINT64_MAX);
	assert_int_equal(h->count, 2);
	free(h);
}

static void test_homa_histogram_merge__adds_everything(void **state)
{
	struct homa_histogram *a = fresh(), *b = fresh();
	uint64_t v;

	(void)state;
	for (v = 1; v <= 500; v++)
		homa_histogram_record(a, v);
	for (v = 501; v <= 1000; v++)
		homa_histogram_record(b, v);
	homa_histogram_merge(a, b);
	assert_int_equal(a->count, 1000);
	assert_int_equal(a->min, 1);
	assert_int_equal(a->max, 1000);
	assert_true(within(homa_histogram_percentile(a, 50.0), 500, 5));
	assert_int_equal(b->count, 500);
	free(a);
	free(b);
}

static void test_homa_histogram_merge__empty_source(void **state)
{
	struct homa_histogram *a = fresh(), *b = fresh();

	(void)state;
	homa_histogram_record(a, 7);
	homa_histogram_merge(a, b);
	assert_int_equal(a->count, 1);
	assert_int_equal(a->min, 7);
	assert_int_equal(a->max, 7);
	free(a);
	free(b);
}

static void test_homa_histogram_percentile__single_value(void **state)
{
	struct homa_histogram *h = fresh();

	(void)state;
	homa_histogram_record(h, 123456789);
	assert_int_equal(homa_histogram_percentile(h, 0.0), 123456789);
	assert_int_equal(homa_histogram_percentile(h, 50.0), 123456789);
	assert_int_equal(homa_histogram_percentile(h, 100.0), 123456789);
	free(h);
}

static void test_homa_histogram_percentile__extremes_exact(void **state)
{
	struct homa_histogram *h = fresh();
	uint64_t v;

	(void)state;
	for (v = 1000003; v < 2000000; v += 997)
		homa_histogram_record(h, v);
	assert_int_equal(homa_histogram_percentile(h, 0.0), 1000003);
	assert_int_equal(homa_histogram_percentile(h, -5.0), 1000003);
	assert_int_equal(homa_histogram_percentile(h, 100.0), h->max);
	assert_int_equal(homa_histogram_percentile(h, 250.0), h->max);
	free(h);
}

static void test_homa_histogram_percentile__uniform(void **state)
{
	struct homa_histogram *h = fresh();
	uint64_t v;

	(void)state;
	for (v = 1; v <= 100000; v++)
		homa_histogram_record(h, v);
	assert_true(within(homa_histogram_percentile(h, 50.0), 50000, 5));
	assert_true(within(homa_histogram_percentile(h, 99.0), 99000, 5));
	assert_true(within(homa_histogram_percentile(h, 99.9), 99900, 5));
	assert_true(within(homa_histogram_percentile(h, 1.0), 1000, 5));
	free(h);
}

static void test_homa_histogram_percentile__rank_rounding(void **state)
{
	/* 999 small values and one large: p99.9 is rank 999 (small). */
	struct homa_histogram *h = filled(10, 999);

	(void)state;
	homa_histogram_record(h, 1000000);
	assert_int_equal(homa_histogram_percentile(h, 99.9), 10);
	assert_int_equal(homa_histogram_percentile(h, 99.95), 1000000);
	free(h);
}

static void test_homa_histogram_percentile__latency_range(void **state)
{
	/* 0.1 us .. 10 s in ns: every value read back within 1%. */
	static const uint64_t values[] = {
		100, 150, 999, 1234, 23000, 7400, 1000000, 33333333,
		1000000000ull, 9999999999ull, 10000000000ull,
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		struct homa_histogram *h = fresh();

		/* min and max elsewhere so the median comes from its bucket */
		homa_histogram_record(h, 1);
		homa_histogram_record(h, values[i]);
		homa_histogram_record(h, UINT64_MAX / 2);
		assert_true(within(homa_histogram_percentile(h, 50.0),
				   values[i], 10));
		free(h);
	}
}

static void test_homa_histogram_percentile__clamped_to_min_max(void **state)
{
	/* all values at the bottom of one wide bucket */
	struct homa_histogram *h = filled((uint64_t)1 << 40, 10);

	(void)state;
	assert_int_equal(homa_histogram_percentile(h, 50.0),
			 (uint64_t)1 << 40);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_homa_histogram_reset__empty),
		cmocka_unit_test(
			test_homa_histogram_bucket_index__small_values_exact),
		cmocka_unit_test(
			test_homa_histogram_bucket_index__contains_value),
		cmocka_unit_test(test_homa_histogram_bucket_index__monotonic),
		cmocka_unit_test(test_homa_histogram_bucket_index__last_bucket),
		cmocka_unit_test(
			test_homa_histogram_bucket_low__buckets_adjacent),
		cmocka_unit_test(
			test_homa_histogram_record__count_min_max_mean),
		cmocka_unit_test(test_homa_histogram_record__sum_saturates),
		cmocka_unit_test(test_homa_histogram_merge__adds_everything),
		cmocka_unit_test(test_homa_histogram_merge__empty_source),
		cmocka_unit_test(test_homa_histogram_percentile__single_value),
		cmocka_unit_test(test_homa_histogram_percentile__extremes_exact),
		cmocka_unit_test(test_homa_histogram_percentile__uniform),
		cmocka_unit_test(test_homa_histogram_percentile__rank_rounding),
		cmocka_unit_test(test_homa_histogram_percentile__latency_range),
		cmocka_unit_test(
			test_homa_histogram_percentile__clamped_to_min_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
