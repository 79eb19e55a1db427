// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of the simulator's checking helpers (src/sim/sim_check.c):
 * the id map, message contents, the Internet checksum, the violation log.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim_check.h"

/* Keys are (host, id); the same id on two hosts is two keys; a later put
 * replaces the value; the table grows past its first size. */
static void sim_idmap__put_get_grow(void **state)
{
	struct sim_idmap m;
	uint64_t i;

	(void)state;
	sim_idmap_init(&m);
	assert_int_equal(sim_idmap_get(&m, 0, 2), UINT32_MAX);
	assert_int_equal(sim_idmap_put(&m, 0, 2, 7), 0);
	assert_int_equal(sim_idmap_put(&m, 1, 2, 8), 0);
	assert_int_equal(sim_idmap_get(&m, 0, 2), 7);
	assert_int_equal(sim_idmap_get(&m, 1, 2), 8);
	assert_int_equal(sim_idmap_get(&m, 2, 2), UINT32_MAX);
	assert_int_equal(sim_idmap_put(&m, 0, 2, 9), 0);
	assert_int_equal(sim_idmap_get(&m, 0, 2), 9);
	assert_true(sim_idmap_put(&m, 0, 0, 1) != 0);
	for (i = 1; i <= 5000; i++)
		assert_int_equal(sim_idmap_put(&m, 3, i * 2, (uint32_t)i), 0);
	for (i = 1; i <= 5000; i++)
		assert_int_equal(sim_idmap_get(&m, 3, i * 2), (uint32_t)i);
	assert_int_equal(sim_idmap_get(&m, 3, 10002), UINT32_MAX);
	assert_true(m.count == 5002);
	sim_idmap_free(&m);
	assert_int_equal(sim_idmap_get(&m, 0, 2), UINT32_MAX);
}

/* The content at an offset does not depend on where filling started;
 * different keys and different offsets give different bytes. */
static void sim_pattern__offsets_and_keys(void **state)
{
	uint8_t a[4096], b[4096], c[4096];

	(void)state;
	sim_pattern(42, 0, a, sizeof(a));
	sim_pattern(42, 1000, b, 3000);
	assert_memory_equal(a + 1000, b, 3000);
	sim_pattern(43, 0, c, sizeof(c));
	assert_memory_not_equal(a, c, 64);
	/* A packet's worth put one packet further on does not match. */
	assert_memory_not_equal(a, a + 1424, 1424);
	/* Odd lengths end in the middle of a word. */
	sim_pattern(42, 8, b, 13);
	assert_memory_equal(a + 8, b, 13);
}

/* The check finds the first differing byte, also past its first 4096
 * bytes; a matching range gives -1. */
static void sim_pattern_check__first_difference(void **state)
{
	uint8_t *buf = malloc(10000), scratch[4096];

	(void)state;
	assert_non_null(buf);
	sim_pattern(7, 64, buf, 10000);
	assert_true(sim_pattern_check(7, 64, buf, 10000, scratch) == -1);
	buf[5000] ^= 1;
	assert_true(sim_pattern_check(7, 64, buf, 10000, scratch) ==
		    64 + 5000);
	buf[3] ^= 0x80;
	assert_true(sim_pattern_check(7, 64, buf, 10000, scratch) == 64 + 3);
	assert_true(sim_pattern_check(8, 64, buf + 8, 8, scratch) >= 64);
	free(buf);
}

/* Requests and responses of one message have different keys; so do
 * different messages and seeds. */
static void sim_msg_key__distinct(void **state)
{
	(void)state;
	assert_true(sim_msg_key(1, 5, false) != sim_msg_key(1, 5, true));
	assert_true(sim_msg_key(1, 5, false) != sim_msg_key(1, 6, false));
	assert_true(sim_msg_key(1, 5, false) != sim_msg_key(2, 5, false));
	assert_true(sim_msg_key(1, 5, true) == sim_msg_key(1, 5, true));
}

/* RFC 1071's example: the words 0001 f203 f4f5 f6f7 sum to ddf2, so the
 * checksum is its complement; an odd byte counts as a high byte.  Any
 * one changed byte changes the checksum. */
static void sim_inet_csum__rfc1071(void **state)
{
	uint8_t v[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	uint8_t odd[] = { 0x12 };
	uint16_t sum;
	size_t i;

	(void)state;
	assert_int_equal(sim_inet_csum(v, sizeof(v)), (uint16_t)~0xddf2);
	assert_int_equal(sim_inet_csum(odd, 1), (uint16_t)~0x1200);
	sum = sim_inet_csum(v, sizeof(v));
	for (i = 0; i < sizeof(v); i++) {
		v[i] ^= 0x5a;
		assert_int_not_equal(sim_inet_csum(v, sizeof(v)), sum);
		v[i] ^= 0x5a;
	}
}

/* Every violation counts; only the first few are kept, with the time. */
static void sim_violation_add__counts_and_keeps(void **state)
{
	struct sim_violations v;
	int i;

	(void)state;
	memset(&v, 0, sizeof(v));
	for (i = 0; i < SIM_VIOLATIONS_KEPT + 3; i++)
		sim_violation_add(&v, 1500000, "number %d", i);
	assert_true(v.count == SIM_VIOLATIONS_KEPT + 3);
	assert_int_equal(v.kept, SIM_VIOLATIONS_KEPT);
	assert_string_equal(v.text[0], "t=1.500 ms: number 0");
	assert_string_equal(v.text[SIM_VIOLATIONS_KEPT - 1] + 12,
			    "number 7");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_idmap__put_get_grow),
		cmocka_unit_test(sim_pattern__offsets_and_keys),
		cmocka_unit_test(sim_pattern_check__first_difference),
		cmocka_unit_test(sim_msg_key__distinct),
		cmocka_unit_test(sim_inet_csum__rfc1071),
		cmocka_unit_test(sim_violation_add__counts_and_keeps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
