// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_alloc.c, the core's allocator with failure injection,
 * and of what the endpoint does when an allocation fails: a walk over
 * every allocation of RPCs' whole lives (client and server, with loss and
 * BUSY) that fails each in turn.  Each failure must end in a clean error
 * (a call returning -ENOMEM, an RPC failing with ENOMEM or ETIMEDOUT) or
 * a dropped packet that loss recovery repairs; every message delivered
 * must carry exactly the bytes sent; every RPC must end; the endpoints
 * must work again once allocations do; and nothing may leak (run under
 * LeakSanitizer: make asan).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ep_test_util.h"
#include "homa_alloc.h"

/* ---- the allocator ---- */

/* With no faults installed, allocations succeed and nothing is counted. */
static void homa_malloc__no_faults_plain(void **state)
{
	void *p, *q;

	(void)state;
	assert_null(homa_alloc_set_faults(NULL));
	p = homa_malloc(HOMA_ALLOC_RPC, 100);
	assert_non_null(p);
	q = homa_realloc(HOMA_ALLOC_RPC, p, 200000);
	assert_non_null(q);
	homa_free(q);
	homa_free(NULL);
}

/* fail_nth: exactly the n-th allocation asked for (of any class, by any
 * of the three calls) fails; every one is counted. */
static void homa_malloc__fails_nth(void **state)
{
	struct homa_alloc_faults f = { .fail_nth = 3 };
	void *a, *b, *c, *d;

	(void)state;
	homa_alloc_set_faults(&f);
	a = homa_malloc(HOMA_ALLOC_RPC, 10);
	b = homa_calloc(HOMA_ALLOC_PEER, 2, 10);
	c = homa_realloc(HOMA_ALLOC_TABLE, NULL, 10);
	d = homa_malloc(HOMA_ALLOC_RPC, 10);
	assert_ptr_equal(homa_alloc_set_faults(NULL), &f);
	assert_non_null(a);
	assert_non_null(b);
	assert_null(c);
	assert_non_null(d);
	assert_int_equal(f.count, 4);
	assert_int_equal(f.failed, 1);
	assert_int_equal(f.seen_classes, (1u << HOMA_ALLOC_RPC) |
			 (1u << HOMA_ALLOC_PEER) | (1u << HOMA_ALLOC_TABLE));
	homa_free(a);
	homa_free(b);
	homa_free(d);
}

/* fail_classes: every allocation of the classes named fails, others do
 * not; a refused realloc leaves the old block to its owner. */
static void homa_realloc__fails_class_keeps_block(void **state)
{
	struct homa_alloc_faults f = {
		.fail_classes = 1u << HOMA_ALLOC_GRANT,
	};
	uint8_t *p = homa_malloc(HOMA_ALLOC_GRANT, 16);
	void *q;

	(void)state;
	assert_non_null(p);
	memset(p, 7, 16);
	homa_alloc_set_faults(&f);
	assert_null(homa_realloc(HOMA_ALLOC_GRANT, p, 64));
	assert_null(homa_calloc(HOMA_ALLOC_GRANT, 1, 8));
	q = homa_malloc(HOMA_ALLOC_MESSAGE, 8);
	homa_alloc_set_faults(NULL);
	assert_non_null(q);
	assert_int_equal(p[15], 7);
	assert_int_equal(f.failed, 2);
	homa_free(p);
	homa_free(q);
}

/* ---- the endpoint when allocations fail ---- */

/* The RPCs of one life: request and response sizes, and how long the
 * server's application holds the request before it answers (its client
 * probes meanwhile and is answered with BUSY). */
struct life_rpc {
	uint32_t req, resp, hold_ticks;
};

static const struct life_rpc plan[] = {
	{ 100, 2000, 30 },          /* held: BUSY */
	{ 150000, 100, 0 },         /* granted request */
	{ 1000, 300000, 0 },        /* granted response */
	{ 3000, 3000, 0 },
};
#define PLAN_N ((int)(sizeof(plan) / sizeof(plan[0])))

/* A life's progress. */
struct life {
	struct net *net;
	int c, s;
	uint64_t ids[PLAN_N];       /* 0: not sent (or ended) */
	int ended;                  /* client RPCs ended */
	int ok;                     /* ... with their response */
	struct homa_msg_ready held[PLAN_N]; /* requests the server holds */
	uint32_t held_since[PLAN_N];
	int num_held;
	uint32_t tick;
};

/* plan_of - the entry of plan whose request is len bytes long. */
static int plan_of(uint32_t len)
{
	for (int k = 0; k < PLAN_N; k++)
		if (plan[k].req == len)
			return k;
	fail_msg("no request of %u bytes was sent", len);
	return -1;
}

/* check_bytes - message m of endpoint i is len bytes of seed's pattern;
 * its bpages go back. */
static void check_bytes(struct life *l, int i, const struct homa_msg_ready *m,
			uint32_t len, uint32_t seed)
{
	uint8_t *want = malloc(len), *got;

	assert_non_null(want);
	assert_int_equal(m->length, len);
	got = gather(l->net, i, m);
	fill(want, len, seed);
	assert_memory_equal(got, want, len);
	free(got);
	free(want);
	assert_int_equal(homa_ep_return_bpages(l->net->ep[i], m->bpage_offsets,
					       m->num_bpages, 0,
					       l->net->now), 0);
}

/* send_all - the client sends each request of the plan; a send may fail
 * with -ENOMEM only. */
static void send_all(struct life *l, const struct homa_alloc_faults *f)
{
	uint8_t *buf = malloc(plan[2].resp);

	assert_non_null(buf);
	for (int k = 0; k < PLAN_N; k++) {
		struct iovec iov = { buf, plan[k].req };
		uint64_t failed = f->failed;
		int err;

		fill(buf, plan[k].req, 10 + k);
		err = homa_ep_send_request(l->net->ep[l->c], &l->net->addr[l->s],
					   &iov, 1, 10 + k, 0, &l->ids[k],
					   l->net->now);
		if (err == -ENOMEM) {
			assert_true(f->failed > failed);
			l->ids[k] = 0;
			l->ended++;
		} else {
			assert_int_equal(err, 0);
		}
	}
	free(buf);
}

/* reply - the server answers held request h with plan k's response;
 * true when it is gone (sent, or the RPC ended), false to try again
 * (-ENOMEM). */
static bool reply(struct life *l, const struct homa_msg_ready *h, int k)
{
	uint8_t *buf = malloc(plan[k].resp);
	struct iovec iov = { buf, plan[k].resp };
	int err;

	assert_non_null(buf);
	fill(buf, plan[k].resp, 20 + k);
	err = homa_ep_send_reply(l->net->ep[l->s], &h->peer, h->id, &iov, 1, 0,
				 l->net->now);
	free(buf);
	assert_true(err == 0 || err == -ENOMEM);
	return err == 0;
}

/* serve_some - the server takes the requests that are ready (checking
 * their bytes) and answers those held long enough. */
static void serve_some(struct life *l)
{
	struct homa_msg_ready m;

	while (homa_ep_receive(l->net->ep[l->s], 0, HOMA_RECVMSG_REQUEST,
			       &m) == 0) {
		int k = plan_of(m.length);

		assert_int_equal(m.error, 0);
		check_bytes(l, l->s, &m, plan[k].req, 10 + k);
		l->held[l->num_held] = m;
		l->held_since[l->num_held++] = l->tick;
	}
	for (int h = 0; h < l->num_held; h++) {
		int k = plan_of(l->held[h].length);

		if (l->tick - l->held_since[h] < plan[k].hold_ticks ||
		    !reply(l, &l->held[h], k))
			continue;
		l->held[h] = l->held[--l->num_held];
		l->held_since[h] = l->held_since[l->num_held];
		h--;
	}
}

/* collect - the client takes its ready responses: the bytes its server
 * sent, or an error that an allocation failure explains (ENOMEM, or
 * ETIMEDOUT when a refused allocation cost a packet that a restart could
 * not repair). */
static void collect(struct life *l)
{
	struct homa_msg_ready m;

	while (homa_ep_receive(l->net->ep[l->c], 0, HOMA_RECVMSG_RESPONSE,
			       &m) == 0) {
		int k;

		for (k = 0; k < PLAN_N && l->ids[k] != m.id; k++)
			;
		assert_true(k < PLAN_N);
		l->ids[k] = 0;
		l->ended++;
		if (m.error != 0) {
			assert_true(m.error == ENOMEM || m.error == ETIMEDOUT);
			continue;
		}
		assert_int_equal(m.cookie, 10 + k);
		check_bytes(l, l->c, &m, plan[k].resp, 20 + k);
		l->ok++;
	}
}

/* live_one - one life with the faults f installed (after the endpoints
 * are made) for its first fault_ticks ticks: the plan's RPCs over a
 * network losing one packet in seven, until every RPC of both endpoints
 * has ended.  Then, with allocations working, a fresh RPC must
 * complete. */
static void live_one(struct homa_alloc_faults *f, uint32_t fault_ticks)
{
	struct life l;
	uint32_t limit = 3000;

	memset(&l, 0, sizeof(l));
	l.net = net_pair(&cfg, 48, &l.c, &l.s);
	l.net->filter = drop_every_7th;
	homa_alloc_set_faults(f);
	send_all(&l, f);
	for (; l.tick < limit; l.tick++) {
		if (l.tick == fault_ticks)
			homa_alloc_set_faults(NULL);
		serve_some(&l);
		collect(&l);
		if (l.ended == PLAN_N && l.num_held == 0 &&
		    epi(l.net->ep[l.c]).num_rpcs == 0 &&
		    epi(l.net->ep[l.s]).num_rpcs == 0)
			break;
		advance(l.net, 1000);
	}
	homa_alloc_set_faults(NULL);
	assert_true(l.tick < limit);
	if (f->failed == 0)
		assert_int_equal(l.ok, PLAN_N);
	l.net->filter = NULL;
	check_rpc(l.net, l.c, l.s, 3000, 70000, 99);
	net_free(l.net);
}

/* The walk: the allocations of a whole life (the RPCs' records, messages,
 * peers and their held requests, tables, grant scratch space, the pool's
 * records of application-owned bpages) fail one at a time, the n-th in
 * run n, until a run asks for fewer than n: each failure ends cleanly
 * (live_one) and nothing leaks. */
static void homa_alloc_set_faults__nth_fails_in_rpc_lives(void **state)
{
	struct homa_alloc_faults f = { 0 };
	uint32_t seen;
	uint64_t n, total;

	(void)state;
	cfg.alive_timeout_ticks = 300;
	live_one(&f, UINT32_MAX);
	total = f.count;
	seen = f.seen_classes;
	assert_true(total >= 10);
	assert_true(seen & (1u << HOMA_ALLOC_RPC));
	assert_true(seen & (1u << HOMA_ALLOC_MESSAGE));
	assert_true(seen & (1u << HOMA_ALLOC_PEER));
	assert_true(seen & (1u << HOMA_ALLOC_POOL));
	for (n = 1; n <= total; n++) {
		f = (struct homa_alloc_faults){ .fail_nth = n };
		live_one(&f, UINT32_MAX);
		assert_int_equal(f.failed, 1);
	}
}

/* Every allocation of one class fails for the first 500 ticks of a life
 * (RPC records, messages, peers, tables, the control queue's growth,
 * grant scratch space, the pool's records): calls fail with -ENOMEM and
 * RPCs with ENOMEM or ETIMEDOUT, or go on once memory is back (a server
 * that cannot hand requests to its application drops them, and their
 * clients send them again for as long as that lasts); every RPC ends and
 * the endpoints work as before once allocations succeed. */
static void homa_alloc_set_faults__class_fails_in_rpc_lives(void **state)
{
	static const enum homa_alloc_class classes[] = {
		HOMA_ALLOC_RPC, HOMA_ALLOC_MESSAGE, HOMA_ALLOC_PEER,
		HOMA_ALLOC_TABLE, HOMA_ALLOC_CTRL, HOMA_ALLOC_GRANT,
		HOMA_ALLOC_POOL,
	};

	(void)state;
	cfg.alive_timeout_ticks = 300;
	for (size_t k = 0; k < sizeof(classes) / sizeof(classes[0]); k++) {
		struct homa_alloc_faults f = {
			.fail_classes = 1u << classes[k],
		};

		live_one(&f, 500);
		assert_true(f.failed > 0 ||
			    classes[k] == HOMA_ALLOC_TABLE ||
			    classes[k] == HOMA_ALLOC_CTRL ||
			    classes[k] == HOMA_ALLOC_GRANT);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_malloc__no_faults_plain),
		cmocka_unit_test(homa_malloc__fails_nth),
		cmocka_unit_test(homa_realloc__fails_class_keeps_block),
		T(homa_alloc_set_faults__nth_fails_in_rpc_lives),
		T(homa_alloc_set_faults__class_fails_in_rpc_lives),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
