/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of rpc_msg (src/rpc/rpc_msg.c), named <function>__<case>:
 * making received messages contiguous, over a region in plain memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rpc_msg.h"

/* A region of 4 bpages, each filled with its own index. */
static uint8_t *region4(void)
{
	uint8_t *r = malloc(4 * (size_t)HOMA_BPAGE_SIZE);

	assert_non_null(r);
	for (int i = 0; i < 4; i++)
		memset(r + (size_t)i * HOMA_BPAGE_SIZE, i,
		       HOMA_BPAGE_SIZE);
	return r;
}

/* rpcm_gather__in_place_when_consecutive - consecutive bpages are used
 * where they lie; nothing is owned. */
static void rpcm_gather__in_place_when_consecutive(void **state)
{
	uint8_t *r = region4();
	uint32_t offs[2] = { HOMA_BPAGE_SIZE, 2 * HOMA_BPAGE_SIZE };
	struct rpcm_in in;

	(void)state;
	assert_int_equal(rpcm_gather(r, offs, 2, HOMA_BPAGE_SIZE + 10, false,
				     &in), 0);
	assert_null(in.owned);
	assert_ptr_equal(in.data, r + HOMA_BPAGE_SIZE);
	rpcm_in_free(&in);
	free(r);
}

/* rpcm_gather__copies_scattered_bpages - bpages out of order are copied
 * in the order given, the last one only as far as the length. */
static void rpcm_gather__copies_scattered_bpages(void **state)
{
	uint8_t *r = region4();
	uint32_t offs[2] = { 3 * HOMA_BPAGE_SIZE, 0 };
	size_t len = HOMA_BPAGE_SIZE + 100;
	struct rpcm_in in;

	(void)state;
	assert_int_equal(rpcm_gather(r, offs, 2, len, false, &in), 0);
	assert_non_null(in.owned);
	assert_int_equal(in.len, len);
	assert_int_equal(in.data[0], 3);
	assert_int_equal(in.data[HOMA_BPAGE_SIZE - 1], 3);
	assert_int_equal(in.data[HOMA_BPAGE_SIZE], 0);
	assert_int_equal(in.data[len - 1], 0);
	rpcm_in_free(&in);
	assert_null(in.owned);
	free(r);
}

/* rpcm_gather__large_copy_reused - the memory of a large copy that was
 * freed serves the next copy that fits in it; a larger one gets new
 * memory, and a small copy is never kept. */
static void rpcm_gather__large_copy_reused(void **state)
{
	uint8_t *r = region4();
	uint32_t offs[3] = { 2 * HOMA_BPAGE_SIZE, 0, HOMA_BPAGE_SIZE };
	struct rpcm_in a, b, c;
	const uint8_t *first;

	(void)state;
	assert_int_equal(rpcm_gather(r, offs, 2, 2 * HOMA_BPAGE_SIZE, true,
				     &a), 0);
	first = a.data;
	rpcm_in_free(&a);
	assert_int_equal(rpcm_gather(r, offs, 2, HOMA_BPAGE_SIZE + 1, true,
				     &b), 0);
	assert_ptr_equal(b.data, first);
	assert_int_equal(b.data[0], 2);
	assert_int_equal(b.data[HOMA_BPAGE_SIZE], 0);
	/* Taken: the next copy cannot have it. */
	assert_int_equal(rpcm_gather(r, offs, 3, 3 * HOMA_BPAGE_SIZE, true,
				     &c), 0);
	assert_ptr_not_equal(c.data, first);
	assert_int_equal(c.data[2 * HOMA_BPAGE_SIZE], 1);
	rpcm_in_free(&b);
	rpcm_in_free(&c);
	/* Small: copied into fresh memory and freed, the spare stays. */
	assert_int_equal(rpcm_gather(r, offs, 1, 100, true, &a), 0);
	assert_int_equal(a.data[99], 2);
	rpcm_in_free(&a);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rpcm_gather__in_place_when_consecutive),
		cmocka_unit_test(rpcm_gather__copies_scattered_bpages),
		cmocka_unit_test(rpcm_gather__large_copy_reused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
