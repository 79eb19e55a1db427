/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_tool_bytes.c - unit tests of tool_bytes (cmocka), in code order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tool_bytes.h"

/* Each writer puts the most significant byte first and touches only its
 * own bytes, at any alignment. */
static void tool_put_be16__big_endian_unaligned(void **state)
{
	uint8_t b[4];
	const uint8_t want[4] = { 0xee, 0x12, 0x34, 0xee };

	(void)state;
	memset(b, 0xee, sizeof(b));
	tool_put_be16(b + 1, 0x1234);
	assert_memory_equal(b, want, sizeof(b));
}

static void tool_put_be32__big_endian_unaligned(void **state)
{
	uint8_t b[6];
	const uint8_t want[6] = { 0xee, 0x89, 0xab, 0xcd, 0xef, 0xee };

	(void)state;
	memset(b, 0xee, sizeof(b));
	tool_put_be32(b + 1, 0x89abcdefu);
	assert_memory_equal(b, want, sizeof(b));
}

static void tool_put_be64__big_endian_unaligned(void **state)
{
	uint8_t b[10];
	const uint8_t want[10] = { 0xee, 0x01, 0x23, 0x45, 0x67,
				   0x89, 0xab, 0xcd, 0xef, 0xee };

	(void)state;
	memset(b, 0xee, sizeof(b));
	tool_put_be64(b + 1, 0x0123456789abcdefull);
	assert_memory_equal(b, want, sizeof(b));
}

/* The reader takes back what the writer wrote, the top bit included. */
static void tool_get_be32__reads_what_put_wrote(void **state)
{
	const uint32_t vals[] = { 0, 1, 0x80000000u, 0xffffffffu, 0x12345678u };
	uint8_t b[5];

	(void)state;
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		tool_put_be32(b + 1, vals[i]);
		assert_int_equal(tool_get_be32(b + 1), vals[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tool_put_be16__big_endian_unaligned),
		cmocka_unit_test(tool_put_be32__big_endian_unaligned),
		cmocka_unit_test(tool_put_be64__big_endian_unaligned),
		cmocka_unit_test(tool_get_be32__reads_what_put_wrote),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
