/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of homa_hash (src/core/homa_hash.c, homa_hash.h), the core's
 * intrusive hash table, in code order, named <function>__<case>.  The
 * table's users have their own tests: test_homa_peer.c (peers by host),
 * test_homa_rpc.c (RPCs by key).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>

#include <cmocka.h>

#include "homa_alloc.h"
#include "homa_hash.h"
#include "homa_list.h"

/* A test object: a key (any number of them may be equal), the hash it is
 * filed under, and how often homa_hash_destroy released it. */
struct item {
	uint64_t key;
	struct homa_hash_link link;
	int released;
};

/* Calls of key_eq so far (to see which entries lookups compared). */
static int eq_calls;

/* item_of - the item of link l. */
static struct item *item_of(const struct homa_hash_link *l)
{
	return homa_container(l, struct item, link);
}

/* key_eq - true when l's item has the key *key (a uint64_t). */
static bool key_eq(const struct homa_hash_link *l, const void *key)
{
	eq_calls++;
	return item_of(l)->key == *(const uint64_t *)key;
}

/* key_odd - true when l's item has an odd key (ctx unused). */
static bool key_odd(const struct homa_hash_link *l, const void *ctx)
{
	(void)ctx;
	return item_of(l)->key & 1;
}

/* release_item - homa_hash_destroy's callback: count the release. */
static void release_item(struct homa_hash_link *l)
{
	item_of(l)->released++;
}

/* find - the item with key filed under hash in h, or NULL. */
static struct item *find(const struct homa_hash *h, uint64_t hash,
			 uint64_t key)
{
	struct homa_hash_link *l = homa_hash_find(h, hash, key_eq, &key);

	return l ? item_of(l) : NULL;
}

/* items - n zeroed items with keys 0..n-1 (freed by the caller). */
static struct item *items(size_t n)
{
	struct item *it = calloc(n, sizeof(*it));
	size_t i;

	assert_non_null(it);
	for (i = 0; i < n; i++)
		it[i].key = i;
	return it;
}

/* chain_length - the entries in bucket b of h. */
static uint32_t chain_length(const struct homa_hash *h, uint32_t b)
{
	const struct homa_hash_link *l;
	uint32_t n = 0;

	for (l = h->buckets[b]; l; l = l->next)
		n++;
	return n;
}

/* ---- homa_hash_init ---- */

static void homa_hash_init__empty(void **state)
{
	struct homa_hash h;
	uint32_t i;

	(void)state;
	assert_int_equal(homa_hash_init(&h, 16), 0);
	assert_non_null(h.buckets);
	assert_int_equal(h.num_buckets, 16);
	assert_int_equal(h.count, 0);
	for (i = 0; i < h.num_buckets; i++)
		assert_null(h.buckets[i]);
	homa_hash_destroy(&h, NULL);
}

/* A bucket count that is not a power of two (or 0) is refused; the table
 * is left empty and destroying it is harmless. */
static void homa_hash_init__bad_bucket_count(void **state)
{
	static const uint32_t bad[] = { 0, 3, 100, 0x80000001u, 0x80000000u };
	struct homa_hash h;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(homa_hash_init(&h, bad[i]), -EINVAL);
		assert_null(h.buckets);
		assert_int_equal(h.num_buckets, 0);
		assert_int_equal(h.count, 0);
		homa_hash_destroy(&h, release_item);
	}
	assert_int_equal(homa_hash_init(&h, 1), 0);
	homa_hash_destroy(&h, NULL);
}

/* The buckets come from homa_alloc, class HOMA_ALLOC_TABLE: refused,
 * init fails with -ENOMEM and leaves nothing to free. */
static void homa_hash_init__out_of_memory(void **state)
{
	struct homa_alloc_faults f = {
		.fail_classes = 1u << HOMA_ALLOC_TABLE,
	};
	struct homa_hash h;

	(void)state;
	homa_alloc_set_faults(&f);
	assert_int_equal(homa_hash_init(&h, 64), -ENOMEM);
	homa_alloc_set_faults(NULL);
	assert_int_equal(f.failed, 1);
	assert_int_equal(f.seen_classes, 1u << HOMA_ALLOC_TABLE);
	assert_null(h.buckets);
	assert_int_equal(h.num_buckets, 0);
	homa_hash_destroy(&h, NULL);
}

/* ---- homa_hash_destroy ---- */

/* With a release callback every entry is released exactly once (also
 * after growth); without, entries are left alone; twice is harmless. */
static void homa_hash_destroy__releases_each_once(void **state)
{
	enum { N = 300 };
	struct item *it = items(N);
	struct homa_hash h;
	int i;

	(void)state;
	assert_int_equal(homa_hash_init(&h, 4), 0);
	for (i = 0; i < N; i++)
		homa_hash_insert(&h, &it[i].link, it[i].key);
	assert_true(h.num_buckets > 4);
	homa_hash_destroy(&h, release_item);
	assert_null(h.buckets);
	assert_int_equal(h.num_buckets, 0);
	assert_int_equal(h.count, 0);
	for (i = 0; i < N; i++)
		assert_int_equal(it[i].released, 1);
	homa_hash_destroy(&h, release_item);
	for (i = 0; i < N; i++)
		assert_int_equal(it[i].released, 1);

	assert_int_equal(homa_hash_init(&h, 4), 0);
	for (i = 0; i < N; i++)
		homa_hash_insert(&h, &it[i].link, it[i].key);
	homa_hash_destroy(&h, NULL);
	for (i = 0; i < N; i++)
		assert_int_equal(it[i].released, 1);
	free(it);
}

/* ---- homa_hash_insert ---- */

static void homa_hash_insert__found_by_hash_and_key(void **state)
{
	struct item *it = items(3);
	struct homa_hash h;

	(void)state;
	assert_int_equal(homa_hash_init(&h, 8), 0);
	homa_hash_insert(&h, &it[0].link, 100);
	homa_hash_insert(&h, &it[1].link, 200);
	homa_hash_insert(&h, &it[2].link, 300);
	assert_int_equal(h.count, 3);
	assert_int_equal(it[1].link.hash, 200);
	assert_ptr_equal(find(&h, 100, 0), &it[0]);
	assert_ptr_equal(find(&h, 200, 1), &it[1]);
	assert_ptr_equal(find(&h, 300, 2), &it[2]);
	/* The right key under another hash, or another key under the
	 * right hash: not found. */
	assert_null(find(&h, 200, 0));
	assert_null(find(&h, 100, 1));
	assert_null(find(&h, 400, 3));
	homa_hash_destroy(&h, NULL);
	free(it);
}

/* More than two entries per bucket doubles the buckets, and every entry
 * is still found; so on through many doublings. */
static void homa_hash_insert__grows_past_two_per_bucket(void **state)
{
	enum { N = 5000 };
	struct item *it = items(N);
	struct homa_hash h;
	int i;

	(void)state;
	assert_int_equal(homa_hash_init(&h, 4), 0);
	for (i = 0; i < 8; i++)
		homa_hash_insert(&h, &it[i].link, it[i].key);
	assert_int_equal(h.num_buckets, 4);
	homa_hash_insert(&h, &it[8].link, it[8].key);
	assert_int_equal(h.num_buckets, 8);
	for (i = 9; i < N; i++)
		homa_hash_insert(&h, &it[i].link, it[i].key * 2 + 1);
	assert_int_equal(h.count, N);
	assert_true(2 * (uint64_t)h.num_buckets >= h.count);
	assert_true(h.num_buckets < h.count);
	for (i = 0; i < N; i++) {
		uint64_t hash = i < 9 ? it[i].key : it[i].key * 2 + 1;

		assert_ptr_equal(find(&h, hash, it[i].key), &it[i]);
	}
	homa_hash_destroy(&h, NULL);
	free(it);
}

/* When the buckets cannot grow (out of memory) the entries still go in
 * and are found; the table grows once memory is back. */
static void homa_hash_insert__growth_failure_harmless(void **state)
{
	enum { N = 100 };
	struct homa_alloc_faults f = {
		.fail_classes = 1u << HOMA_ALLOC_TABLE,
	};
	struct item *it = items(N + 1);
	struct homa_hash h;
	int i;

	(void)state;
	assert_int_equal(homa_hash_init(&h, 4), 0);
	homa_alloc_set_faults(&f);
	for (i = 0; i < N; i++)
		homa_hash_insert(&h, &it[i].link, it[i].key);
	homa_alloc_set_faults(NULL);
	assert_true(f.failed > 0);
	assert_int_equal(h.num_buckets, 4);
	assert_int_equal(h.count, N);
	for (i = 0; i < N; i++)
		assert_ptr_equal(find(&h, it[i].key, it[i].key), &it[i]);
	homa_hash_insert(&h, &it[N].link, it[N].key);
	assert_int_equal(h.num_buckets, 8);
	for (i = 0; i <= N; i++)
		assert_ptr_equal(find(&h, it[i].key, it[i].key), &it[i]);
	homa_hash_destroy(&h, NULL);
	free(it);
}

/* Entries under the same hash (colliding keys) are told apart by the
 * equality check. */
static void homa_hash_insert__same_hash_distinct_keys(void **state)
{
	enum { N = 50 };
	struct item *it = items(N);
	struct homa_hash h;
	int i;

	(void)state;
	assert_int_equal(homa_hash_init(&h, 64), 0);
	for (i = 0; i < N; i++)
		homa_hash_insert(&h, &it[i].link, 42);
	for (i = 0; i < N; i++)
		assert_ptr_equal(find(&h, 42, it[i].key), &it[i]);
	assert_null(find(&h, 42, N));
	homa_hash_destroy(&h, NULL);
	free(it);
}

/* Entries with equal keys are all kept: each removal leaves the others
 * to be found. */
static void homa_hash_insert__equal_keys_all_kept(void **state)
{
	struct item it[3] = { { .key = 7 }, { .key = 7 }, { .key = 7 } };
	struct homa_hash h;
	struct item *found;
	int i, left = 3;

	(void)state;
	assert_int_equal(homa_hash_init(&h, 2), 0);
	for (i = 0; i < 3; i++)
		homa_hash_insert(&h, &it[i].link, 7);
	while (left > 0) {
		found = find(&h, 7, 7);
		assert_non_null(found);
		assert_true(homa_hash_remove(&h, &found->link));
		left--;
		assert_int_equal(h.count, left);
	}
	assert_null(find(&h, 7, 7));
	homa_hash_destroy(&h, NULL);
}

/* ---- homa_hash_remove ---- */

static void homa_hash_remove__middle_of_chain(void **state)
{
	struct item *it = items(3);
	struct homa_hash h;
	uint32_t b;

	(void)state;
	/* One hash: all three share one chain. */
	assert_int_equal(homa_hash_init(&h, 4), 0);
	b = homa_hash_bucket(9, h.num_buckets);
	homa_hash_insert(&h, &it[0].link, 9);
	homa_hash_insert(&h, &it[1].link, 9);
	homa_hash_insert(&h, &it[2].link, 9);
	assert_int_equal(chain_length(&h, b), 3);
	assert_true(homa_hash_remove(&h, &it[1].link));
	assert_null(it[1].link.next);
	assert_int_equal(h.count, 2);
	assert_int_equal(chain_length(&h, b), 2);
	assert_null(find(&h, 9, 1));
	assert_ptr_equal(find(&h, 9, 0), &it[0]);
	assert_ptr_equal(find(&h, 9, 2), &it[2]);
	/* And it can go back in. */
	homa_hash_insert(&h, &it[1].link, 9);
	assert_ptr_equal(find(&h, 9, 1), &it[1]);
	assert_int_equal(h.count, 3);
	homa_hash_destroy(&h, NULL);
	free(it);
}

/* Removing what is not in the table changes nothing and says so: never
 * inserted, removed already, or after destroy. */
static void homa_hash_remove__absent(void **state)
{
	struct item *it = items(2);
	struct homa_hash h;

	(void)state;
	assert_int_equal(homa_hash_init(&h, 1), 0);
	homa_hash_insert(&h, &it[0].link, 5);
	it[1].link.hash = 5;              /* same bucket, never inserted */
	assert_false(homa_hash_remove(&h, &it[1].link));
	assert_int_equal(h.count, 1);
	assert_true(homa_hash_remove(&h, &it[0].link));
	assert_false(homa_hash_remove(&h, &it[0].link));
	assert_int_equal(h.count, 0);
	homa_hash_insert(&h, &it[0].link, 5);
	homa_hash_destroy(&h, NULL);
	assert_false(homa_hash_remove(&h, &it[0].link));
	free(it);
}

/* ---- homa_hash_find_any ---- */

static void homa_hash_find_any__first_match_or_null(void **state)
{
	struct item *it = items(10);
	struct homa_hash h;
	struct homa_hash_link *l;
	int i;

	(void)state;
	assert_int_equal(homa_hash_init(&h, 8), 0);
	assert_null(homa_hash_find_any(&h, key_odd, NULL));
	for (i = 0; i < 10; i += 2)
		homa_hash_insert(&h, &it[i].link, it[i].key);
	assert_null(homa_hash_find_any(&h, key_odd, NULL));
	homa_hash_insert(&h, &it[7].link, it[7].key);
	l = homa_hash_find_any(&h, key_odd, NULL);
	assert_ptr_equal(l, &it[7].link);
	homa_hash_insert(&h, &it[3].link, it[3].key);
	l = homa_hash_find_any(&h, key_odd, NULL);
	assert_true(l == &it[3].link || l == &it[7].link);
	homa_hash_destroy(&h, NULL);
	free(it);
}

/* ---- homa_hash_bucket ---- */

/* Keys that differ only in their high bits, or sequential even ids,
 * spread over the buckets: no bucket gets more than four times its
 * share. */
static void homa_hash_bucket__spreads_regular_keys(void **state)
{
	enum { B = 256, N = 4096 };
	uint32_t load_hi[B] = { 0 }, load_even[B] = { 0 };
	uint64_t i;
	int b;

	(void)state;
	for (i = 0; i < N; i++) {
		uint32_t hi = homa_hash_bucket(i << 40, B);
		uint32_t even = homa_hash_bucket(2 * i + 2, B);

		assert_true(hi < B);
		assert_true(even < B);
		load_hi[hi]++;
		load_even[even]++;
	}
	for (b = 0; b < B; b++) {
		assert_true(load_hi[b] <= 4 * N / B);
		assert_true(load_even[b] <= 4 * N / B);
	}
}

/* ---- homa_hash_find ---- */

/* Only entries filed under the hash asked for reach the equality
 * check. */
static void homa_hash_find__compares_hash_first(void **state)
{
	struct item *it = items(2);
	struct homa_hash h;

	(void)state;
	assert_int_equal(homa_hash_init(&h, 1), 0);
	homa_hash_insert(&h, &it[0].link, 10);
	homa_hash_insert(&h, &it[1].link, 11);
	eq_calls = 0;
	assert_null(find(&h, 12, 0));
	assert_int_equal(eq_calls, 0);
	assert_ptr_equal(find(&h, 11, 1), &it[1]);
	assert_int_equal(eq_calls, 1);
	homa_hash_destroy(&h, NULL);
	free(it);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_hash_init__empty),
		cmocka_unit_test(homa_hash_init__bad_bucket_count),
		cmocka_unit_test(homa_hash_init__out_of_memory),
		cmocka_unit_test(homa_hash_destroy__releases_each_once),
		cmocka_unit_test(homa_hash_insert__found_by_hash_and_key),
		cmocka_unit_test(homa_hash_insert__grows_past_two_per_bucket),
		cmocka_unit_test(homa_hash_insert__growth_failure_harmless),
		cmocka_unit_test(homa_hash_insert__same_hash_distinct_keys),
		cmocka_unit_test(homa_hash_insert__equal_keys_all_kept),
		cmocka_unit_test(homa_hash_remove__middle_of_chain),
		cmocka_unit_test(homa_hash_remove__absent),
		cmocka_unit_test(homa_hash_find_any__first_match_or_null),
		cmocka_unit_test(homa_hash_bucket__spreads_regular_keys),
		cmocka_unit_test(homa_hash_find__compares_hash_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
