// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of the sender's link-queue estimate and its choice of the
 * next message (homa_pacer), in code order, named <function>__<case>.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "homa_pacer.h"

static void homa_pacer_init__idle_link(void **state)
{
	struct homa_pacer p;

	(void)state;
	homa_pacer_init(&p, 0, 5000, 2000, 1000);
	assert_int_equal(p.link_mbps, 1);
	assert_int_equal(p.fifo_fraction, 1000);
	assert_int_equal(p.min_bytes, 1000);
	assert_true(homa_pacer_can_send(&p, 0));
	assert_int_equal(homa_pacer_wake(&p), 0);
}

static void homa_pacer_can_send__backlog_bound(void **state)
{
	struct homa_pacer p;

	(void)state;
	/* 10 Gbit/s: 1250 bytes take 1000 ns. */
	homa_pacer_init(&p, 10000, 5000, 50, 1000);
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
	homa_pacer_init(&p, 8000, 5000, 50, 1000);
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
	homa_pacer_init(&p, 1000, 5000, 50, 1000);
	for (i = 0; i < 1000; i++)
		turns += homa_pacer_fifo_turn(&p);
	assert_int_equal(turns, 50);
	homa_pacer_init(&p, 1000, 5000, 0, 1000);
	for (i = 0; i < 100; i++)
		assert_false(homa_pacer_fifo_turn(&p));
}

/* cand - a candidate message. */
static struct homa_pacer_cand cand(uint64_t length, uint64_t remaining,
				   uint64_t birth, bool exempt)
{
	struct homa_pacer_cand c = {
		.length = length, .remaining = remaining, .birth = birth,
		.exempt = exempt,
	};

	return c;
}

/* pick - one whole choice over c[0..n) at now: the index chosen, or -1;
 * *blocked tells whether the pacer held every candidate back. */
static int pick(struct homa_pacer *p, uint64_t now, bool throttle,
		const struct homa_pacer_cand *c, int n, bool *blocked)
{
	struct homa_pacer_choice ch;
	int i, best = -1;

	homa_pacer_choice_start(p, now, throttle, &ch);
	for (i = 0; i < n; i++)
		if (homa_pacer_choice_offer(&ch, &c[i]))
			best = i;
	*blocked = homa_pacer_choice_blocked(&ch);
	return best;
}

/* busy - make p's link backlog exceed max_queue_ns at time 0. */
static void busy(struct homa_pacer *p)
{
	homa_pacer_sent(p, 0, 1000000);
	assert_false(homa_pacer_can_send(p, 0));
}

static void homa_pacer_bypass__short_or_exempt(void **state)
{
	struct homa_pacer p;
	struct homa_pacer_cand c;

	(void)state;
	homa_pacer_init(&p, 10000, 5000, 50, 1000);
	c = cand(999, 999, 0, false);
	assert_true(homa_pacer_bypass(&p, &c));      /* under min_bytes */
	c = cand(1000, 10, 0, false);
	assert_false(homa_pacer_bypass(&p, &c));     /* length decides */
	c = cand(500000, 500000, 0, true);
	assert_true(homa_pacer_bypass(&p, &c));      /* exempt */
	homa_pacer_init(&p, 10000, 5000, 50, 0);
	c = cand(1, 1, 0, false);
	assert_false(homa_pacer_bypass(&p, &c));     /* nothing bypasses */
}

static void homa_pacer_choice__shortest_remaining_first(void **state)
{
	struct homa_pacer_cand c[4] = {
		cand(500000, 400000, 1, false),
		cand(800000, 30000, 2, false),    /* fewest left, not shortest */
		cand(40000, 40000, 3, false),
		cand(90000, 35000, 0, false),     /* oldest */
	};
	struct homa_pacer p;
	bool blocked;

	(void)state;
	homa_pacer_init(&p, 10000, 5000, 0, 1000);
	assert_int_equal(pick(&p, 0, true, c, 4, &blocked), 1);
	assert_false(blocked);
	/* A tie keeps the candidate offered first. */
	c[3].remaining = 30000;
	assert_int_equal(pick(&p, 0, true, c, 4, &blocked), 1);
}

static void homa_pacer_choice__fifo_share_to_oldest(void **state)
{
	struct homa_pacer_cand c[3] = {
		cand(500000, 400000, 7, false),
		cand(100000, 20000, 9, false),
		cand(900000, 800000, 3, false),   /* oldest, most left */
	};
	struct homa_pacer p;
	int i, oldest = 0, shortest = 0, first_oldest = -1;
	bool blocked;

	(void)state;
	/* pacer_fifo_fraction 50 per mille: 50 of 1000 picks, evenly. */
	homa_pacer_init(&p, 10000, 5000, 50, 1000);
	for (i = 0; i < 1000; i++) {
		int k = pick(&p, 0, true, c, 3, &blocked);

		if (k == 2) {
			oldest++;
			if (first_oldest < 0)
				first_oldest = i;
		} else if (k == 1) {
			shortest++;
		}
	}
	assert_int_equal(oldest, 50);
	assert_int_equal(shortest, 950);
	assert_int_equal(first_oldest, 19);      /* the 20th pick */
	/* 0: never the oldest. */
	homa_pacer_init(&p, 10000, 5000, 0, 1000);
	for (i = 0; i < 1000; i++)
		assert_int_equal(pick(&p, 0, true, c, 3, &blocked), 1);
}

static void homa_pacer_choice__busy_link_only_bypass(void **state)
{
	struct homa_pacer_cand c[4] = {
		cand(900, 900, 1, false),        /* under throttle_min_bytes */
		cand(50000, 100, 2, false),      /* fewest left, but paced */
		cand(600, 600, 3, false),        /* under, fewer left */
		cand(90000, 90000, 0, true),     /* exempt (loopback) */
	};
	struct homa_pacer p;
	bool blocked;

	(void)state;
	homa_pacer_init(&p, 10000, 5000, 0, 1000);
	busy(&p);
	assert_int_equal(pick(&p, 0, true, c, 4, &blocked), 2);
	assert_false(blocked);
	/* Only paced candidates: held back, the caller waits. */
	assert_int_equal(pick(&p, 0, true, &c[1], 1, &blocked), -1);
	assert_true(blocked);
	/* Once the backlog drains below max_queue_ns, they may go. */
	assert_int_equal(pick(&p, homa_pacer_wake(&p), true, &c[1], 1,
			      &blocked), 0);
	assert_false(blocked);
	/* Without the pacer (throttle false), the busy link is ignored. */
	assert_int_equal(pick(&p, 0, false, c, 4, &blocked), 1);
	assert_false(blocked);
}

static void homa_pacer_choice__busy_link_keeps_fifo_credit(void **state)
{
	struct homa_pacer_cand c[2] = {
		cand(900, 900, 5, false),
		cand(500, 500, 1, false),        /* oldest and fewest left */
	};
	struct homa_pacer p;
	bool blocked;
	int i;

	(void)state;
	/* Picks while the link is busy are not paced picks: they neither
	 * use nor earn a turn of the oldest. */
	homa_pacer_init(&p, 10000, 5000, 500, 1000);
	busy(&p);
	for (i = 0; i < 10; i++)
		assert_int_equal(pick(&p, 0, true, c, 2, &blocked), 1);
	assert_int_equal(p.fifo_credit, 0);
}

static void homa_pacer_choice__nothing_offered(void **state)
{
	struct homa_pacer p;
	bool blocked;

	(void)state;
	homa_pacer_init(&p, 10000, 5000, 0, 1000);
	busy(&p);
	assert_int_equal(pick(&p, 0, true, NULL, 0, &blocked), -1);
	assert_false(blocked);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_pacer_init__idle_link),
		cmocka_unit_test(homa_pacer_can_send__backlog_bound),
		cmocka_unit_test(homa_pacer_sent__idle_link_starts_now),
		cmocka_unit_test(homa_pacer_fifo_turn__fraction),
		cmocka_unit_test(homa_pacer_bypass__short_or_exempt),
		cmocka_unit_test(homa_pacer_choice__shortest_remaining_first),
		cmocka_unit_test(homa_pacer_choice__fifo_share_to_oldest),
		cmocka_unit_test(homa_pacer_choice__busy_link_only_bypass),
		cmocka_unit_test(
			homa_pacer_choice__busy_link_keeps_fifo_credit),
		cmocka_unit_test(homa_pacer_choice__nothing_offered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
