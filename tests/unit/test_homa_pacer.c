// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests of the sender's link-queue estimate (homa_pacer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "homa_pacer.h"

static void homa_pacer_init__idle_link(void **state)
{
	struct homa_pacer p;

	(void)state;
	homa_pacer_init(&p, 0, 5000, 2000);
	assert_int_equal(p.link_mbps, 1);
	assert_int_equal(p.fifo_fraction, 1000);
	assert_true(homa_pacer_can_send(&p, 0));
	assert_int_equal(homa_pacer_wake(&p), 0);
}

static void homa_pacer_can_send__backlog_bound(void **state)
{
	struct homa_pacer p;

	(void)state;
	/* 10 Gbit/s: 1250 bytes take 1000 ns. */
	homa_pacer_init(&p, 10000, 5000, 50);
	homa_pacer_sent(&p, 1000, 1250 * 5);
	assert_int_equal(p.link_idle_ns, 6000);
	assert_true(homa_pacer_can_send(&p, 1000));   /* backlog 5 us */
	homa_pacer_sent(&p, 1000, 1250);
	assert_false(homa_pacer_can_send(&p, 1000));  /* backlog 6 us */
	assert_int_equal(homa_pacer_wake(&p), 2000);
	assert_false(homa_pacer_can_send(&p, 1999));
	assert_true(homa_pacer_can_send(&p, 2000));
}

static void homa_pacer_sent__idle_link_starts_now(void **state)
{
	struct homa_pacer p;

	(void)state;
	homa_pacer_init(&p, 8000, 5000, 50);
	homa_pacer_sent(&p, 100, 1000);        /* 1000 bytes: 1 us */
	assert_int_equal(p.link_idle_ns, 1100);
	homa_pacer_sent(&p, 50000, 1000);      /* link was idle meanwhile */
	assert_int_equal(p.link_idle_ns, 51000);
}

static void homa_pacer_fifo_turn__fraction(void **state)
{
	struct homa_pacer p;
	int i, turns = 0;

	(void)state;
	homa_pacer_init(&p, 1000, 5000, 50);
	for (i = 0; i < 1000; i++)
		turns += homa_pacer_fifo_turn(&p);
	assert_int_equal(turns, 50);
	homa_pacer_init(&p, 1000, 5000, 0);
	for (i = 0; i < 100; i++)
		assert_false(homa_pacer_fifo_turn(&p));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_pacer_init__idle_link),
		cmocka_unit_test(homa_pacer_can_send__backlog_bound),
		cmocka_unit_test(homa_pacer_sent__idle_link_starts_now),
		cmocka_unit_test(homa_pacer_fifo_turn__fraction),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
