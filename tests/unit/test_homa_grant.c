/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of homa_grant (src/core/homa_grant.c): the receiver's grant
 * policy, named <function>__<case>.
 *
 * Build: cc -std=c11 -Iinclude -Isrc/core src/core/homa_grant.c \
 *        tests/unit/test_homa_grant.c -lcmocka
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "homa_grant.h"

/* Kernel defaults, with the fifo grants off unless a test turns them on. */
static struct homa_grant_params params(void)
{
	struct homa_grant_params p = {
		.max_overcommit = 8,
		.max_per_peer = 1,
		.max_incoming = 400000,
		.max_sched_prio = 3,
		.fifo_fraction = 0,
		.fifo_increment = 50000,
	};

	return p;
}

/* Distinct owners so tests can follow candidates through the sort. */
static int owners[200];

/* cand - candidate number i (owner &owners[i]) with nothing received and
 * nothing granted beyond what arrived. */
static struct homa_grant_cand cand(int i, uint64_t peer, uint64_t birth,
				   uint32_t length, uint32_t received)
{
	struct homa_grant_cand c;

	memset(&c, 0, sizeof(c));
	c.owner = &owners[i];
	c.peer = peer;
	c.birth = birth;
	c.length = length;
	c.received = received;
	c.granted = received;
	c.priority = 0;
	return c;
}

/* idx - the owner number of candidate c. */
static int idx(const struct homa_grant_cand *c)
{
	return (int)((int *)c->owner - owners);
}

/* find - the candidate with owner number i in c[0..n). */
static struct homa_grant_cand *find(struct homa_grant_cand *c, int n, int i)
{
	int k;

	for (k = 0; k < n; k++)
		if (idx(&c[k]) == i)
			return &c[k];
	fail_msg("candidate %d missing", i);
	return NULL;
}

/* adopt - what the caller does after sending the grants. */
static void adopt(struct homa_grant_cand *c, int n)
{
	int i;

	for (i = 0; i < n; i++)
		c[i].granted = c[i].new_grant;
}

/* outstanding - sum of granted - received over c[0..n). */
static uint64_t outstanding(const struct homa_grant_cand *c, int n)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += c[i].granted - c[i].received;
	return sum;
}

/* rng - a small deterministic generator for the randomized tests. */
static uint32_t rng(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

/* ---- homa_grant_compute: ranking and selection ---- */

static void homa_grant_compute__no_candidates(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[1];

	(void)state;
	assert_int_equal(homa_grant_compute(&p, &st, c, 0, 0), 0);
	assert_int_equal(homa_grant_compute(&p, &st, c, -1, 0), 0);
	assert_int_equal(st.bytes_since_fifo, 0);
}

static void homa_grant_compute__single(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[1];

	(void)state;
	c[0] = cand(0, 1, 1, 1000000, 40000);
	assert_int_equal(homa_grant_compute(&p, &st, c, 1, 0), 1);
	/* window = 400000 / 2 beyond received. */
	assert_int_equal(c[0].new_grant, 240000);
	assert_true(c[0].send);
	assert_int_equal(c[0].priority, 0);
	assert_ptr_equal(c[0].owner, &owners[0]);
	assert_int_equal(c[0].granted, 40000);    /* input untouched */
}

static void homa_grant_compute__ranks_by_remaining(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[4];

	(void)state;
	c[0] = cand(0, 1, 1, 500000, 0);         /* remaining 500000 */
	c[1] = cand(1, 2, 2, 900000, 800000);    /* remaining 100000 */
	c[2] = cand(2, 3, 3, 300000, 0);         /* remaining 300000 */
	c[3] = cand(3, 4, 4, 200000, 0);         /* remaining 200000 */
	assert_int_equal(homa_grant_compute(&p, &st, c, 4, 0), 4);
	assert_int_equal(idx(&c[0]), 1);
	assert_int_equal(idx(&c[1]), 3);
	assert_int_equal(idx(&c[2]), 2);
	assert_int_equal(idx(&c[3]), 0);
	/* The inputs travelled with their owners. */
	assert_int_equal(c[0].length, 900000);
	assert_int_equal(c[0].received, 800000);
	assert_int_equal(c[3].length, 500000);
}

static void homa_grant_compute__ties_by_birth(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[3];

	(void)state;
	c[0] = cand(0, 1, 50, 100000, 0);
	c[1] = cand(1, 2, 10, 100000, 0);
	c[2] = cand(2, 3, 30, 150000, 50000);    /* same remaining */
	homa_grant_compute(&p, &st, c, 3, 0);
	assert_int_equal(idx(&c[0]), 1);
	assert_int_equal(idx(&c[1]), 2);
	assert_int_equal(idx(&c[2]), 0);
}

static void homa_grant_compute__max_overcommit(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[10];
	int i;

	(void)state;
	p.max_overcommit = 3;
	for (i = 0; i < 10; i++)
		c[i] = cand(i, (uint64_t)i + 1, (uint64_t)i,
			    1000000 - (uint32_t)i * 10000, 0);
	assert_int_equal(homa_grant_compute(&p, &st, c, 10, 0), 3);
	/* The three shortest are 9, 8, 7. */
	for (i = 0; i < 3; i++) {
		assert_int_equal(idx(&c[i]), 9 - i);
		assert_true(c[i].send);
		assert_int_equal(c[i].new_grant, 100000);   /* 400000 / 4 */
	}
	for (i = 3; i < 10; i++) {
		assert_false(c[i].send);
		assert_int_equal(c[i].new_grant, c[i].granted);
	}
}

static void homa_grant_compute__max_overcommit_default(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[12];
	int i, granted = 0;

	(void)state;
	for (i = 0; i < 12; i++)
		c[i] = cand(i, (uint64_t)i + 1, (uint64_t)i, 500000, 0);
	assert_int_equal(homa_grant_compute(&p, &st, c, 12, 0), 8);
	for (i = 0; i < 12; i++)
		if (c[i].new_grant > c[i].granted)
			granted++;
	assert_int_equal(granted, 8);
	/* Equal remaining: the oldest eight. */
	for (i = 0; i < 8; i++)
		assert_int_equal(idx(&c[i]), i);
}

static void homa_grant_compute__one_per_peer_first(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[4];

	(void)state;
	p.max_overcommit = 2;
	c[0] = cand(0, 7, 0, 10000, 0);    /* peer 7, shortest */
	c[1] = cand(1, 7, 1, 20000, 0);    /* peer 7, second */
	c[2] = cand(2, 7, 2, 30000, 0);    /* peer 7, third */
	c[3] = cand(3, 9, 3, 900000, 0);   /* peer 9, longest */
	assert_int_equal(homa_grant_compute(&p, &st, c, 4, 0), 2);
	assert_true(find(c, 4, 0)->send);
	assert_true(find(c, 4, 3)->send);
	assert_true(find(c, 4, 3)->new_grant > 0);
	assert_false(find(c, 4, 1)->send);
	assert_int_equal(find(c, 4, 1)->new_grant, 0);
	assert_false(find(c, 4, 2)->send);
}

/* More than 64 granted at once (the peers tallied in an allocated array):
 * one per peer in rank order until max_overcommit, the 120 peers of the
 * 150 candidates (peer i % 120) leave the last 50 out. */
static void homa_grant_compute__overcommit_beyond_64(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[150];
	int i;

	(void)state;
	p.max_overcommit = 100;
	p.max_incoming = 100000000;
	for (i = 0; i < 150; i++)
		c[i] = cand(i, (uint64_t)(i % 120), (uint64_t)i,
			    10000 + (uint32_t)i, 0);
	assert_int_equal(homa_grant_compute(&p, &st, c, 150, 0), 100);
	for (i = 0; i < 150; i++)
		assert_int_equal(find(c, 150, i)->send, i < 100);
}

/* Many candidates of one peer and a longer one of another: the first of
 * the one peer and the other's get their grants first, then the rest of
 * max_overcommit in rank order. */
static void homa_grant_compute__many_of_one_peer(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[200];
	int i;

	(void)state;
	for (i = 0; i < 199; i++)
		c[i] = cand(i, 7, (uint64_t)i, 10000 + (uint32_t)i, 0);
	c[199] = cand(199, 9, 199, 900000, 0);
	assert_int_equal(homa_grant_compute(&p, &st, c, 200, 0), 8);
	assert_true(find(c, 200, 199)->send);
	for (i = 0; i < 199; i++)
		assert_int_equal(find(c, 200, i)->send, i < 7);
}

static void homa_grant_compute__second_from_peer_when_room(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[5];
	int i;

	(void)state;
	p.max_overcommit = 4;
	c[0] = cand(0, 7, 0, 10000, 0);
	c[1] = cand(1, 7, 1, 20000, 0);
	c[2] = cand(2, 7, 2, 30000, 0);
	c[3] = cand(3, 9, 3, 900000, 0);
	c[4] = cand(4, 9, 4, 950000, 0);
	/* Peers 7 and 9 get one each, then the two best remaining ranks
	 * (1 and 2 of peer 7) rather than the second of peer 9. */
	assert_int_equal(homa_grant_compute(&p, &st, c, 5, 0), 4);
	for (i = 0; i < 4; i++)
		assert_true(find(c, 5, i)->new_grant > 0);
	assert_int_equal(find(c, 5, 4)->new_grant, 0);
	assert_false(find(c, 5, 4)->send);
}

static void homa_grant_compute__one_per_peer_keeps_rank_order(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[4];

	(void)state;
	p.max_overcommit = 3;
	c[0] = cand(0, 1, 0, 10000, 0);
	c[1] = cand(1, 1, 1, 20000, 0);
	c[2] = cand(2, 2, 2, 30000, 0);
	c[3] = cand(3, 3, 3, 40000, 0);
	assert_int_equal(homa_grant_compute(&p, &st, c, 4, 0), 3);
	/* Active: 0, 2, 3 (one per peer); priorities follow their ranks. */
	assert_int_equal(find(c, 4, 0)->priority, 2);
	assert_int_equal(find(c, 4, 2)->priority, 1);
	assert_int_equal(find(c, 4, 3)->priority, 0);
	assert_int_equal(find(c, 4, 1)->new_grant, 0);
}

/* per_peer_setup - peer 7 has the three shortest messages, peers 8 and
 * 9 one longer message each; max_overcommit 3. */
static void per_peer_setup(struct homa_grant_params *p,
			   struct homa_grant_cand *c)
{
	*p = params();
	p->max_overcommit = 3;
	c[0] = cand(0, 7, 0, 10000, 0);
	c[1] = cand(1, 7, 1, 20000, 0);
	c[2] = cand(2, 7, 2, 30000, 0);
	c[3] = cand(3, 8, 3, 40000, 0);
	c[4] = cand(4, 9, 4, 50000, 0);
}

/* active_set - bit i set when candidate i was granted bytes. */
static unsigned active_set(struct homa_grant_cand *c, int n)
{
	unsigned bits = 0;
	int i;

	for (i = 0; i < n; i++)
		if (find(c, n, i)->new_grant > 0)
			bits |= 1u << i;
	return bits;
}

static void homa_grant_compute__max_per_peer_two(void **state)
{
	struct homa_grant_params p;
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[5];

	(void)state;
	/* Default 1: one of peer 7, then peers 8 and 9. */
	per_peer_setup(&p, c);
	assert_int_equal(homa_grant_compute(&p, &st, c, 5, 0), 3);
	assert_int_equal(active_set(c, 5), 0x19u);    /* 0, 3, 4 */
	/* 2: the two shortest of peer 7, then peer 8; peer 9 waits. */
	per_peer_setup(&p, c);
	p.max_per_peer = 2;
	assert_int_equal(homa_grant_compute(&p, &st, c, 5, 0), 3);
	assert_int_equal(active_set(c, 5), 0x0bu);    /* 0, 1, 3 */
	/* Priorities follow the ranks of the active ones. */
	assert_int_equal(find(c, 5, 0)->priority, 2);
	assert_int_equal(find(c, 5, 1)->priority, 1);
	assert_int_equal(find(c, 5, 3)->priority, 0);
}

static void homa_grant_compute__max_per_peer_pure_srpt(void **state)
{
	struct homa_grant_params p;
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[5];

	(void)state;
	/* At least max_overcommit: plain shortest-first, one host may take
	 * every slot. */
	per_peer_setup(&p, c);
	p.max_per_peer = 3;
	assert_int_equal(homa_grant_compute(&p, &st, c, 5, 0), 3);
	assert_int_equal(active_set(c, 5), 0x07u);    /* 0, 1, 2 */
	per_peer_setup(&p, c);
	p.max_per_peer = 64;
	assert_int_equal(homa_grant_compute(&p, &st, c, 5, 0), 3);
	assert_int_equal(active_set(c, 5), 0x07u);
}

static void homa_grant_compute__max_per_peer_fills_rest(void **state)
{
	struct homa_grant_params p;
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[5];

	(void)state;
	/* 2 per host leaves room (overcommit 5) for peer 7's third. */
	per_peer_setup(&p, c);
	p.max_per_peer = 2;
	p.max_overcommit = 5;
	assert_int_equal(homa_grant_compute(&p, &st, c, 5, 0), 5);
	assert_int_equal(active_set(c, 5), 0x1fu);
	/* Overcommit 4: peers 7 (two), 8 and 9 before peer 7's third. */
	per_peer_setup(&p, c);
	p.max_per_peer = 2;
	p.max_overcommit = 4;
	assert_int_equal(homa_grant_compute(&p, &st, c, 5, 0), 4);
	assert_int_equal(active_set(c, 5), 0x1bu);    /* 0, 1, 3, 4 */
}

static void homa_grant_compute__max_per_peer_zero_is_one(void **state)
{
	struct homa_grant_params p;
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[5];

	(void)state;
	per_peer_setup(&p, c);
	p.max_per_peer = 0;
	assert_int_equal(homa_grant_compute(&p, &st, c, 5, 0), 3);
	assert_int_equal(active_set(c, 5), 0x19u);
}

/* ---- homa_grant_compute: grant sizes ---- */

static void homa_grant_compute__window_per_active(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[3];
	int i;

	(void)state;
	c[0] = cand(0, 1, 0, 900000, 100000);
	c[1] = cand(1, 2, 1, 950000, 100000);
	c[2] = cand(2, 3, 2, 990000, 100000);
	assert_int_equal(homa_grant_compute(&p, &st, c, 3, 0), 3);
	/* window = 400000 / 4 = 100000 beyond received. */
	for (i = 0; i < 3; i++)
		assert_int_equal(c[i].new_grant, 200000);
}

static void homa_grant_compute__window_clamped_to_length(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[2];

	(void)state;
	c[0] = cand(0, 1, 0, 50000, 40000);
	c[1] = cand(1, 2, 1, 1000000, 40000);
	assert_int_equal(homa_grant_compute(&p, &st, c, 2, 0), 2);
	assert_int_equal(idx(&c[0]), 0);
	assert_int_equal(c[0].new_grant, 50000);
	assert_int_equal(c[1].new_grant, 40000 + 400000 / 3);
}

static void homa_grant_compute__window_from_received(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[1];

	(void)state;
	/* Granted well ahead of what arrived: the target is received +
	 * window, which is below the grant, so nothing changes. */
	c[0] = cand(0, 1, 0, 1000000, 10000);
	c[0].granted = 300000;
	assert_int_equal(homa_grant_compute(&p, &st, c, 1, 290000), 1);
	assert_int_equal(c[0].new_grant, 300000);
	assert_false(c[0].send);
}

static void homa_grant_compute__min_step_holds_small_growth(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[1];

	(void)state;
	/* window 200000 beyond received: the grant would grow by 5000 only,
	 * under min_step 10000, so it waits. */
	p.min_step = 10000;
	c[0] = cand(0, 1, 0, 1000000, 95000);
	c[0].granted = 290000;
	assert_int_equal(homa_grant_compute(&p, &st, c, 1, 195000), 1);
	assert_int_equal(c[0].new_grant, 290000);
	assert_false(c[0].send);
	/* 10000 more arrived: growth 15000, granted. */
	c[0].received = 105000;
	assert_int_equal(homa_grant_compute(&p, &st, c, 1, 185000), 1);
	assert_int_equal(c[0].new_grant, 305000);
	assert_true(c[0].send);
}

static void homa_grant_compute__min_step_over_window(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[4];
	int i;

	(void)state;
	/* min_step above the window (400000 / 5 = 80000 with 4 active): a
	 * sender that has used up its grant still gets the window, or no
	 * grant would ever come again. */
	p.min_step = 100000;
	for (i = 0; i < 4; i++)
		c[i] = cand(i, (uint64_t)i + 1, (uint64_t)i, 1000000, 40000);
	assert_int_equal(homa_grant_compute(&p, &st, c, 4, 0), 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(c[i].new_grant, 120000);
		assert_true(c[i].send);
	}
	/* Part of each grant arrived: growth below the window waits. */
	adopt(c, 4);
	for (i = 0; i < 4; i++)
		c[i].received = 100000;
	assert_int_equal(homa_grant_compute(&p, &st, c, 4,
					    outstanding(c, 4)), 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(c[i].new_grant, 120000);
	/* All of it arrived: the window again. */
	for (i = 0; i < 4; i++)
		c[i].received = 120000;
	assert_int_equal(homa_grant_compute(&p, &st, c, 4, 0), 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(c[i].new_grant, 200000);
}

static void homa_grant_compute__already_fully_granted(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[1];

	(void)state;
	c[0] = cand(0, 1, 0, 60000, 20000);
	c[0].granted = 60000;
	homa_grant_compute(&p, &st, c, 1, 40000);
	assert_int_equal(c[0].new_grant, 60000);
	assert_false(c[0].send);
}

static void homa_grant_compute__outstanding_caps_grants(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[3];

	(void)state;
	c[0] = cand(0, 1, 0, 500000, 0);
	c[1] = cand(1, 2, 1, 600000, 0);
	c[2] = cand(2, 3, 2, 700000, 0);
	/* Other messages already hold 330000: only 70000 are left, and they
	 * go in rank order. */
	assert_int_equal(homa_grant_compute(&p, &st, c, 3, 330000), 3);
	assert_int_equal(c[0].new_grant, 70000);
	assert_int_equal(c[1].new_grant, 0);
	assert_int_equal(c[2].new_grant, 0);
	assert_true(c[0].send);
}

static void homa_grant_compute__outstanding_at_cap(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[2];

	(void)state;
	c[0] = cand(0, 1, 0, 500000, 0);
	c[1] = cand(1, 2, 1, 600000, 0);
	homa_grant_compute(&p, &st, c, 2, 400000);
	assert_int_equal(c[0].new_grant, 0);
	assert_int_equal(c[1].new_grant, 0);
	c[0] = cand(0, 1, 0, 500000, 0);
	c[1] = cand(1, 2, 1, 600000, 0);
	homa_grant_compute(&p, &st, c, 2, 5000000);   /* above the cap */
	assert_int_equal(c[0].new_grant, 0);
	assert_int_equal(c[1].new_grant, 0);
}

/*
 * random_rounds - many rounds of arrivals, grants and departures with
 * random messages from 6 peers; checks after every round that no grant
 * goes backwards or past the length, that at most max_overcommit are
 * granted, and that the granted-but-unreceived total stays within
 * max_incoming (plus one fifo increment when fifo grants are on).
 */
static void random_rounds(uint32_t fifo_fraction, uint64_t seed)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[40];
	uint64_t slack = fifo_fraction ? 50000 : 0, total = 0;
	int n = 0, round, i, fifo_resets = 0;

	p.fifo_fraction = fifo_fraction;
	p.max_overcommit = 5;
	p.max_incoming = 250000;
	for (round = 0; round < 3000; round++) {
		uint64_t before, after, since;
		int active;

		/* New messages arrive now and then, with their unscheduled
		 * bytes already granted. */
		while (n < 40 && rng(&seed) % 3 == 0) {
			uint32_t len = 1 + rng(&seed) % 1000000;
			uint32_t unsched = len < 10000 ? len : 10000;

			c[n] = cand(n, rng(&seed) % 6, (uint64_t)round, len, 0);
			c[n].granted = unsched;
			n++;
		}
		before = outstanding(c, n);
		since = st.bytes_since_fifo;
		active = homa_grant_compute(&p, &st, c, n, before);
		if (st.bytes_since_fifo < since)
			fifo_resets++;
		assert_true(active <= 5);
		assert_true(active <= n);
		for (i = 0; i < n; i++) {
			assert_true(c[i].new_grant >= c[i].granted);
			assert_true(c[i].new_grant <= c[i].length);
			if (c[i].new_grant > c[i].granted)
				assert_true(c[i].send);
		}
		for (i = 0; i < n; i++)
			total += c[i].new_grant - c[i].granted;
		adopt(c, n);
		after = outstanding(c, n);
		/* Grants never push the total above the cap (it may only
		 * start above it from unscheduled bytes). */
		assert_true(after <= (before > p.max_incoming ? before :
				      p.max_incoming) + slack);
		/* Some of the granted bytes arrive; finished ones leave. */
		for (i = 0; i < n; i++) {
			uint32_t owed = c[i].granted - c[i].received;

			if (owed)
				c[i].received += rng(&seed) % (owed + 1);
		}
		for (i = 0; i < n; i++) {
			if (c[i].received == c[i].length) {
				c[i] = c[n - 1];
				c[i].owner = &owners[i];
				n--;
				i--;
			}
		}
	}
	/* The rounds really granted a lot (and fifo grants happened). */
	assert_true(total > 10000000);
	if (fifo_fraction)
		assert_true(fifo_resets > 5);
	else
		assert_int_equal(fifo_resets, 0);
}

static void homa_grant_compute__total_never_exceeds_max_incoming(void **state)
{
	(void)state;
	random_rounds(0, 12345);
	random_rounds(0, 999);
}

static void homa_grant_compute__total_with_fifo_grants(void **state)
{
	(void)state;
	random_rounds(50, 12345);
	random_rounds(300, 4242);
}

/* ---- homa_grant_compute: priorities and send ---- */

/* prio_check - n active candidates of distinct peers with ranks 0..n-1
 * must get the priorities want[0..n). */
static void prio_check(uint32_t max_sched_prio, int n, const uint8_t *want)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[8];
	int i;

	p.max_sched_prio = max_sched_prio;
	for (i = 0; i < n; i++) {
		c[i] = cand(i, (uint64_t)i, (uint64_t)i,
			    100000 + (uint32_t)i * 1000, 0);
		c[i].priority = 99;
	}
	assert_int_equal(homa_grant_compute(&p, &st, c, n, 0), n);
	for (i = 0; i < n; i++) {
		assert_int_equal(idx(&c[i]), i);
		assert_int_equal(c[i].priority, want[i]);
		assert_true(c[i].send);
	}
}

static void homa_grant_compute__priorities(void **state)
{
	static const uint8_t one[] = { 0 };
	static const uint8_t two[] = { 1, 0 };
	static const uint8_t four[] = { 3, 2, 1, 0 };
	static const uint8_t five[] = { 3, 2, 1, 0, 0 };
	static const uint8_t eight[] = { 3, 2, 1, 0, 0, 0, 0, 0 };
	static const uint8_t eight_hi[] = { 7, 6, 5, 4, 3, 2, 1, 0 };
	static const uint8_t three_hi[] = { 2, 1, 0 };
	static const uint8_t four_zero[] = { 0, 0, 0, 0 };

	(void)state;
	prio_check(3, 1, one);
	prio_check(3, 2, two);
	prio_check(3, 4, four);
	prio_check(3, 5, five);
	prio_check(3, 8, eight);
	prio_check(7, 8, eight_hi);
	prio_check(7, 3, three_hi);
	prio_check(0, 4, four_zero);
}

static void homa_grant_compute__inactive_priority_untouched(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[3];

	(void)state;
	p.max_overcommit = 2;
	c[0] = cand(0, 1, 0, 100000, 0);
	c[1] = cand(1, 2, 1, 200000, 0);
	c[2] = cand(2, 3, 2, 300000, 0);
	c[2].priority = 5;
	homa_grant_compute(&p, &st, c, 3, 0);
	assert_int_equal(idx(&c[2]), 2);
	assert_int_equal(c[2].priority, 5);
	assert_false(c[2].send);
}

static void homa_grant_compute__send_only_on_change(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[3];
	int i;

	(void)state;
	c[0] = cand(0, 1, 0, 500000, 0);
	c[1] = cand(1, 2, 1, 600000, 0);
	homa_grant_compute(&p, &st, c, 2, 0);
	assert_true(c[0].send);
	assert_true(c[1].send);
	adopt(c, 2);
	/* Nothing arrived: same grants, same priorities, nothing to send. */
	homa_grant_compute(&p, &st, c, 2, outstanding(c, 2));
	assert_false(c[0].send);
	assert_false(c[1].send);
	assert_int_equal(c[0].new_grant, c[0].granted);
	/* Bytes arrive for the first: only its grant grows. */
	c[0].received = 10000;
	homa_grant_compute(&p, &st, c, 2, outstanding(c, 2));
	assert_int_equal(idx(&c[0]), 0);
	assert_true(c[0].send);
	assert_int_equal(c[0].new_grant, c[0].granted + 10000);
	assert_false(c[1].send);
	adopt(c, 2);
	/* A third, longest message: the window shrinks to 400000/4, below
	 * what the first two already hold, so their grants stay; but with
	 * three active their priorities rise (1,0 -> 2,1), which alone must
	 * make them send. */
	c[2] = cand(2, 3, 2, 900000, 0);
	homa_grant_compute(&p, &st, c, 3, outstanding(c, 3));
	for (i = 0; i < 3; i++)
		assert_int_equal(idx(&c[i]), i);
	for (i = 0; i < 2; i++) {
		assert_int_equal(c[i].new_grant, c[i].granted);
		assert_int_equal(c[i].priority, 2 - i);
		assert_true(c[i].send);
	}
	assert_int_equal(c[2].new_grant, 100000);
	assert_int_equal(c[2].priority, 0);
	assert_true(c[2].send);
	adopt(c, 3);
	homa_grant_compute(&p, &st, c, 3, outstanding(c, 3));
	for (i = 0; i < 3; i++) {
		assert_false(c[i].send);
		assert_int_equal(c[i].new_grant, c[i].granted);
	}
}

/* ---- homa_grant_compute: fifo grants ---- */

/* fifo_setup - max_overcommit 1: a short active message (owner 0) and an
 * old long one that is not active (owner 1). */
static void fifo_setup(struct homa_grant_params *p,
		       struct homa_grant_cand *c)
{
	*p = params();
	p->max_overcommit = 1;
	p->fifo_fraction = 50;          /* due after 950000 SRPT bytes */
	p->fifo_increment = 50000;
	c[0] = cand(0, 1, 20, 500000, 0);
	c[1] = cand(1, 2, 10, 900000, 0);
	c[1].granted = 40000;
}

static void homa_grant_compute__fifo_not_due(void **state)
{
	struct homa_grant_params p;
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[2];

	(void)state;
	fifo_setup(&p, c);
	st.bytes_since_fifo = 500000;
	homa_grant_compute(&p, &st, c, 2, 40000);
	/* 200000 SRPT bytes to the short one, none to the old one. */
	assert_int_equal(find(c, 2, 0)->new_grant, 200000);
	assert_int_equal(find(c, 2, 1)->new_grant, 40000);
	assert_false(find(c, 2, 1)->send);
	assert_int_equal(st.bytes_since_fifo, 700000);
}

static void homa_grant_compute__fifo_to_oldest_inactive(void **state)
{
	struct homa_grant_params p;
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[2];
	struct homa_grant_cand *old;

	(void)state;
	fifo_setup(&p, c);
	st.bytes_since_fifo = 750000;    /* + 200000 = exactly due */
	homa_grant_compute(&p, &st, c, 2, 40000);
	assert_int_equal(find(c, 2, 0)->new_grant, 200000);
	old = find(c, 2, 1);
	assert_true(old->send);
	assert_int_equal(old->new_grant, 40000 + 50000);
	assert_int_equal(st.bytes_since_fifo, 0);
}

static void homa_grant_compute__fifo_to_oldest_active(void **state)
{
	struct homa_grant_params p;
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[2];
	struct homa_grant_cand *old;

	(void)state;
	fifo_setup(&p, c);
	p.max_overcommit = 2;            /* now the old one is active too */
	st.bytes_since_fifo = 950000;
	homa_grant_compute(&p, &st, c, 2, 40000);
	old = find(c, 2, 1);
	/* window 400000/3 = 133333: 0 -> 133333, then the old one's SRPT
	 * grant to 133333 (93333 more, within the cap), then +50000. */
	assert_int_equal(find(c, 2, 0)->new_grant, 133333);
	assert_int_equal(old->new_grant, 133333 + 50000);
	assert_true(old->send);
	assert_int_equal(st.bytes_since_fifo, 0);
}

static void homa_grant_compute__fifo_clamped_to_length(void **state)
{
	struct homa_grant_params p;
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[2];

	(void)state;
	fifo_setup(&p, c);
	/* Owner 1 (remaining 60000) ranks first and is the active one, but
	 * it is fully granted; owner 0 is now the oldest still needing
	 * bytes, and only 10000 of them. */
	c[1].length = 60000;
	c[1].granted = 60000;
	c[0].birth = 5;
	c[0].length = 80000;
	c[0].granted = 70000;
	st.bytes_since_fifo = 2000000;
	homa_grant_compute(&p, &st, c, 2, 130000);
	assert_int_equal(find(c, 2, 1)->new_grant, 60000);
	assert_false(find(c, 2, 1)->send);
	assert_int_equal(find(c, 2, 0)->new_grant, 80000);
	assert_true(find(c, 2, 0)->send);
	assert_int_equal(st.bytes_since_fifo, 0);
}

static void homa_grant_compute__fifo_nobody_needs_bytes(void **state)
{
	struct homa_grant_params p;
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[2];

	(void)state;
	fifo_setup(&p, c);
	c[0] = cand(0, 1, 0, 30000, 0);
	c[0].granted = 30000;
	st.bytes_since_fifo = 2000000;
	homa_grant_compute(&p, &st, c, 1, 30000);
	assert_false(c[0].send);
	assert_int_equal(c[0].new_grant, 30000);
	/* Still due: the next chance takes it. */
	assert_int_equal(st.bytes_since_fifo, 2000000);
}

static void homa_grant_compute__fifo_after_enough_srpt_bytes(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[2];
	uint64_t srpt = 0;
	int round, fifo_rounds = 0;

	(void)state;
	p.max_overcommit = 1;
	p.fifo_fraction = 100;           /* due after 450000 SRPT bytes */
	p.fifo_increment = 50000;
	/* One peer: the young short message is the only active one; the
	 * old long one only ever gets fifo grants. */
	c[0] = cand(0, 1, 20, 4000000, 0);
	c[1] = cand(1, 1, 10, 5000000, 0);
	for (round = 0; round < 20; round++) {
		struct homa_grant_cand *young, *old;
		uint32_t old_before = find(c, 2, 1)->granted;
		bool fired;

		homa_grant_compute(&p, &st, c, 2, outstanding(c, 2));
		young = find(c, 2, 0);
		old = find(c, 2, 1);
		assert_int_equal(young->new_grant - young->granted, 200000);
		srpt += young->new_grant - young->granted;
		fired = old->new_grant > old_before;
		assert_int_equal(fired, srpt >= 450000);
		if (fired) {
			assert_int_equal(old->new_grant - old_before, 50000);
			assert_true(old->send);
			assert_int_equal(st.bytes_since_fifo, 0);
			srpt = 0;
			fifo_rounds++;
		} else {
			assert_false(old->send);
			assert_int_equal(st.bytes_since_fifo, srpt);
		}
		adopt(c, 2);
		/* Everything granted arrives. */
		young->received = young->granted;
		old->received = old->granted;
	}
	/* 200000 per round: a fifo grant every third round. */
	assert_int_equal(fifo_rounds, 6);
}

static void homa_grant_compute__fifo_disabled(void **state)
{
	struct homa_grant_params p;
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[2];

	(void)state;
	fifo_setup(&p, c);
	p.fifo_fraction = 0;
	st.bytes_since_fifo = 10000000;
	homa_grant_compute(&p, &st, c, 2, 40000);
	assert_int_equal(find(c, 2, 1)->new_grant, 40000);
	assert_false(find(c, 2, 1)->send);
}

/* ---- homa_grant_compute: many candidates ---- */

static void homa_grant_compute__more_than_64(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[150];
	int i, granted = 0;

	(void)state;
	/* Shuffled lengths; peer i % 100 so some peers have two. */
	for (i = 0; i < 150; i++)
		c[i] = cand(i, (uint64_t)(i % 100), (uint64_t)i,
			    100000 + (uint32_t)((i * 37) % 150) * 1000, 0);
	assert_int_equal(homa_grant_compute(&p, &st, c, 150, 0), 8);
	for (i = 1; i < 150; i++)
		assert_true(c[i - 1].length <= c[i].length);
	for (i = 0; i < 150; i++) {
		if (c[i].new_grant > 0) {
			granted++;
			assert_true(i < 8);
			assert_int_equal(c[i].new_grant, 400000 / 9);
			assert_int_equal(c[i].priority,
					 i < 3 ? 3 - i : 0);
		} else {
			assert_false(c[i].send);
		}
	}
	assert_int_equal(granted, 8);
}

static void homa_grant_compute__more_than_64_one_peer_rule(void **state)
{
	struct homa_grant_params p = params();
	struct homa_grant_state st = { 0 };
	struct homa_grant_cand c[100];
	int i, active = 0;

	(void)state;
	p.max_overcommit = 4;
	/* The 96 shortest all come from peer 0; peers 1..4 have one each,
	 * the longest. */
	for (i = 0; i < 96; i++)
		c[i] = cand(i, 0, (uint64_t)i, 10000 + (uint32_t)i, 0);
	for (i = 96; i < 100; i++)
		c[i] = cand(i, (uint64_t)(i - 95), (uint64_t)i, 900000, 0);
	assert_int_equal(homa_grant_compute(&p, &st, c, 100, 0), 4);
	assert_true(find(c, 100, 0)->new_grant > 0);
	assert_true(find(c, 100, 96)->new_grant > 0);
	assert_true(find(c, 100, 97)->new_grant > 0);
	assert_true(find(c, 100, 98)->new_grant > 0);
	assert_int_equal(find(c, 100, 99)->new_grant, 0);
	for (i = 0; i < 100; i++)
		if (c[i].new_grant > 0)
			active++;
	assert_int_equal(active, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_grant_compute__no_candidates),
		cmocka_unit_test(homa_grant_compute__single),
		cmocka_unit_test(homa_grant_compute__ranks_by_remaining),
		cmocka_unit_test(homa_grant_compute__ties_by_birth),
		cmocka_unit_test(homa_grant_compute__max_overcommit),
		cmocka_unit_test(homa_grant_compute__max_overcommit_default),
		cmocka_unit_test(homa_grant_compute__one_per_peer_first),
		cmocka_unit_test(
			homa_grant_compute__second_from_peer_when_room),
		cmocka_unit_test(
			homa_grant_compute__one_per_peer_keeps_rank_order),
		cmocka_unit_test(homa_grant_compute__max_per_peer_two),
		cmocka_unit_test(homa_grant_compute__max_per_peer_pure_srpt),
		cmocka_unit_test(homa_grant_compute__max_per_peer_fills_rest),
		cmocka_unit_test(homa_grant_compute__max_per_peer_zero_is_one),
		cmocka_unit_test(homa_grant_compute__window_per_active),
		cmocka_unit_test(homa_grant_compute__window_clamped_to_length),
		cmocka_unit_test(homa_grant_compute__window_from_received),
		cmocka_unit_test(
			homa_grant_compute__min_step_holds_small_growth),
		cmocka_unit_test(homa_grant_compute__min_step_over_window),
		cmocka_unit_test(homa_grant_compute__already_fully_granted),
		cmocka_unit_test(homa_grant_compute__outstanding_caps_grants),
		cmocka_unit_test(homa_grant_compute__outstanding_at_cap),
		cmocka_unit_test(
			homa_grant_compute__total_never_exceeds_max_incoming),
		cmocka_unit_test(homa_grant_compute__total_with_fifo_grants),
		cmocka_unit_test(homa_grant_compute__priorities),
		cmocka_unit_test(
			homa_grant_compute__inactive_priority_untouched),
		cmocka_unit_test(homa_grant_compute__send_only_on_change),
		cmocka_unit_test(homa_grant_compute__fifo_not_due),
		cmocka_unit_test(homa_grant_compute__fifo_to_oldest_inactive),
		cmocka_unit_test(homa_grant_compute__fifo_to_oldest_active),
		cmocka_unit_test(homa_grant_compute__fifo_clamped_to_length),
		cmocka_unit_test(homa_grant_compute__fifo_nobody_needs_bytes),
		cmocka_unit_test(
			homa_grant_compute__fifo_after_enough_srpt_bytes),
		cmocka_unit_test(homa_grant_compute__fifo_disabled),
		cmocka_unit_test(homa_grant_compute__more_than_64),
		cmocka_unit_test(homa_grant_compute__overcommit_beyond_64),
		cmocka_unit_test(homa_grant_compute__many_of_one_peer),
		cmocka_unit_test(
			homa_grant_compute__more_than_64_one_peer_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
