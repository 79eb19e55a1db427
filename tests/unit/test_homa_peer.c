/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of homa_peer (src/core/homa_peer.c), in code order, named
 * <function>__<case>.
 *
 * Build: cc -std=c11 -D_GNU_SOURCE -Iinclude -Isrc/core \
 *        src/core/homa_peer.c tests/unit/test_homa_peer.c -lcmocka
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "homa.h"
#include "homa_addr.h"
#include "homa_config.h"
#include "homa_peer.h"

/* v4 - the IPv4 address host (host byte order), port. */
static union sockaddr_in_union v4(uint32_t host, uint16_t port)
{
	union sockaddr_in_union a;

	memset(&a, 0, sizeof(a));
	a.in4.sin_family = AF_INET;
	a.in4.sin_addr.s_addr = htonl(host);
	a.in4.sin_port = htons(port);
	return a;
}

/* v6 - the IPv6 address first00::host (host in the last four bytes,
 * first in the first byte), port. */
static union sockaddr_in_union v6(uint8_t first, uint32_t host,
				  uint16_t port)
{
	union sockaddr_in_union a;
	uint32_t be = htonl(host);

	memset(&a, 0, sizeof(a));
	a.in6.sin6_family = AF_INET6;
	a.in6.sin6_addr.s6_addr[0] = first;
	memcpy(&a.in6.sin6_addr.s6_addr[12], &be, 4);
	a.in6.sin6_port = htons(port);
	return a;
}

/* The CUTOFFS entries of docs/protocol.md section 4.4 (entry 0: unlimited). */
static const uint32_t default_cutoffs[HOMA_NUM_PRIORITIES] = {
	HOMA_MAX_MESSAGE_LENGTH, HOMA_MAX_MESSAGE_LENGTH,
	HOMA_MAX_MESSAGE_LENGTH, HOMA_MAX_MESSAGE_LENGTH,
	HOMA_MAX_MESSAGE_LENGTH, 15000, 2800, 200,
};

/* setup - an empty table in *state. */
static int setup(void **state)
{
	struct homa_peer_table *t = calloc(1, sizeof(*t));

	if (!t || homa_peer_table_init(t) != 0) {
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

/* teardown - destroy the table of *state. */
static int teardown(void **state)
{
	struct homa_peer_table *t = *state;

	homa_peer_table_destroy(t);
	free(t);
	return 0;
}

/* a_peer - a fresh peer of table *state. */
static struct homa_peer *a_peer(void **state)
{
	union sockaddr_in_union a = v4(0x0a000001, 40000);
	struct homa_peer *p = homa_peer_get(*state, &a);

	assert_non_null(p);
	return p;
}

/* ptr_cmp - qsort order of peer pointers. */
static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(struct homa_peer *const *)a;
	uintptr_t y = (uintptr_t)*(struct homa_peer *const *)b;

	return x < y ? -1 : x > y;
}

/* ---- homa_peer_table_init ---- */

static void homa_peer_table_init__empty(void **state)
{
	struct homa_peer_table *t = *state;
	uint32_t i;

	assert_non_null(t->hash.buckets);
	assert_int_equal(t->hash.count, 0);
	assert_true(t->hash.num_buckets > 0);
	assert_int_equal(t->hash.num_buckets & (t->hash.num_buckets - 1), 0);
	for (i = 0; i < t->hash.num_buckets; i++)
		assert_null(t->hash.buckets[i]);
}

/* ---- homa_peer_table_destroy ---- */

static void homa_peer_table_destroy__twice(void **state)
{
	struct homa_peer_table *t = *state;
	union sockaddr_in_union a = v4(0x0a000001, 1);

	assert_non_null(homa_peer_get(t, &a));
	homa_peer_table_destroy(t);
	assert_null(t->hash.buckets);
	assert_int_equal(t->hash.count, 0);
	homa_peer_table_destroy(t);         /* harmless */
	assert_int_equal(homa_peer_table_init(t), 0);  /* for teardown */
}

/* ---- homa_peer_get ---- */

static void homa_peer_get__creates(void **state)
{
	struct homa_peer_table *t = *state;
	union sockaddr_in_union a = v4(0xc0a80001, 5555);
	struct homa_peer *p = homa_peer_get(t, &a);

	assert_non_null(p);
	assert_int_equal(t->hash.count, 1);
	assert_int_equal(p->addr.in4.sin_family, AF_INET);
	assert_int_equal(p->addr.in4.sin_addr.s_addr, htonl(0xc0a80001));
	assert_int_equal(homa_addr_port(&p->addr), 0);
	assert_int_equal(p->cutoff_version, 0);
	assert_int_equal(p->cutoffs_sent_tick, 0);
	assert_int_equal(p->num_acks, 0);
}

static void homa_peer_get__same_host_any_port(void **state)
{
	struct homa_peer_table *t = *state;
	union sockaddr_in_union a = v4(0x0a000005, 99);
	union sockaddr_in_union b = v4(0x0a000005, 32768);
	union sockaddr_in_union c = v4(0x0a000005, 0);
	struct homa_peer *p = homa_peer_get(t, &a);

	assert_non_null(p);
	assert_ptr_equal(homa_peer_get(t, &b), p);
	assert_ptr_equal(homa_peer_get(t, &c), p);
	assert_ptr_equal(homa_peer_get(t, &a), p);
	assert_int_equal(t->hash.count, 1);
}

static void homa_peer_get__distinct_hosts(void **state)
{
	struct homa_peer_table *t = *state;
	union sockaddr_in_union a = v4(0x0a000001, 99);
	union sockaddr_in_union b = v4(0x0a000002, 99);
	struct homa_peer *pa = homa_peer_get(t, &a);
	struct homa_peer *pb = homa_peer_get(t, &b);

	assert_non_null(pa);
	assert_non_null(pb);
	assert_ptr_not_equal(pa, pb);
	assert_int_equal(t->hash.count, 2);
}

/* Peers on loopback addresses are marked (the pacer lets their DATA go
 * unthrottled); others are not. */
static void homa_peer_get__marks_loopback(void **state)
{
	struct homa_peer_table *t = *state;
	union sockaddr_in_union lo4 = v4(0x7f000001, 99);
	union sockaddr_in_union lo4b = v4(0x7f0a0b0c, 99);
	union sockaddr_in_union lo6 = v6(0, 1, 99);          /* ::1 */
	union sockaddr_in_union m6 = v6(0, 0x7f000001, 99);  /* ::ffff:127.0.0.1 */
	union sockaddr_in_union n6 = v6(0, 2, 99);           /* ::2 */
	union sockaddr_in_union far4 = v4(0x0a000001, 99);
	union sockaddr_in_union near4 = v4(0x80000001, 99);  /* 128.0.0.1 */

	m6.in6.sin6_addr.s6_addr[10] = 0xff;
	m6.in6.sin6_addr.s6_addr[11] = 0xff;
	assert_true(homa_peer_get(t, &lo4)->loopback);
	assert_true(homa_peer_get(t, &lo4b)->loopback);
	assert_true(homa_peer_get(t, &lo6)->loopback);
	assert_true(homa_peer_get(t, &m6)->loopback);
	assert_false(homa_peer_get(t, &n6)->loopback);
	assert_false(homa_peer_get(t, &far4)->loopback);
	assert_false(homa_peer_get(t, &near4)->loopback);
}

static void homa_peer_get__ipv4_ipv6_distinct(void **state)
{
	struct homa_peer_table *t = *state;
	union sockaddr_in_union a4 = v4(0x0a000001, 99);
	union sockaddr_in_union a6 = v6(0, 0x0a000001, 99);   /* ::10.0.0.1 */
	union sockaddr_in_union m6 = v6(0, 0x0a000001, 99);
	union sockaddr_in_union o6 = v6(0xfd, 0x0a000001, 99);
	struct homa_peer *p4, *p6, *pm, *po;

	/* ::ffff:10.0.0.1 is still a different family. */
	m6.in6.sin6_addr.s6_addr[10] = 0xff;
	m6.in6.sin6_addr.s6_addr[11] = 0xff;
	p4 = homa_peer_get(t, &a4);
	p6 = homa_peer_get(t, &a6);
	pm = homa_peer_get(t, &m6);
	po = homa_peer_get(t, &o6);
	assert_non_null(p4);
	assert_non_null(p6);
	assert_non_null(pm);
	assert_non_null(po);
	assert_ptr_not_equal(p4, p6);
	assert_ptr_not_equal(p4, pm);
	assert_ptr_not_equal(p6, pm);
	assert_ptr_not_equal(p6, po);
	assert_ptr_not_equal(pm, po);
	assert_int_equal(t->hash.count, 4);
	assert_int_equal(p6->addr.in6.sin6_family, AF_INET6);
	assert_int_equal(homa_addr_port(&p6->addr), 0);
	assert_memory_equal(&p6->addr.in6.sin6_addr, &a6.in6.sin6_addr, 16);
	/* Found again, with another port. */
	a6.in6.sin6_port = htons(7);
	assert_ptr_equal(homa_peer_get(t, &a6), p6);
	assert_ptr_equal(homa_peer_get(t, &a4), p4);
	assert_int_equal(t->hash.count, 4);
}

static void homa_peer_get__many_peers(void **state)
{
	enum { N4 = 6000, N6 = 2000 };
	struct homa_peer_table *t = *state;
	struct homa_peer **p = calloc(N4 + N6, sizeof(*p));
	uint32_t first_buckets = t->hash.num_buckets;
	int i;

	assert_non_null(p);
	for (i = 0; i < N4; i++) {
		union sockaddr_in_union a = v4(0x0a000000 + (uint32_t)i * 7,
					       (uint16_t)i);

		p[i] = homa_peer_get(t, &a);
		assert_non_null(p[i]);
	}
	for (i = 0; i < N6; i++) {
		union sockaddr_in_union a = v6(0xfd, (uint32_t)i * 13, 1);

		p[N4 + i] = homa_peer_get(t, &a);
		assert_non_null(p[N4 + i]);
	}
	assert_int_equal(t->hash.count, N4 + N6);
	assert_true(t->hash.num_buckets > first_buckets);
	/* Everything is still found (with other ports), nothing new made. */
	for (i = 0; i < N4; i++) {
		union sockaddr_in_union a = v4(0x0a000000 + (uint32_t)i * 7,
					       9);

		assert_ptr_equal(homa_peer_get(t, &a), p[i]);
	}
	for (i = 0; i < N6; i++) {
		union sockaddr_in_union a = v6(0xfd, (uint32_t)i * 13, 2);

		assert_ptr_equal(homa_peer_get(t, &a), p[N4 + i]);
	}
	assert_int_equal(t->hash.count, N4 + N6);
	/* All distinct. */
	qsort(p, N4 + N6, sizeof(*p), ptr_cmp);
	for (i = 1; i < N4 + N6; i++)
		assert_ptr_not_equal(p[i], p[i - 1]);
	free(p);
}

static void homa_peer_get__state_survives_growth(void **state)
{
	struct homa_peer_table *t = *state;
	union sockaddr_in_union a = v4(0x0a0a0a0a, 1);
	struct homa_peer *p = homa_peer_get(t, &a);
	int i;

	assert_non_null(p);
	homa_peer_set_cutoffs(p, default_cutoffs, 3);
	assert_int_equal(homa_peer_add_ack(p, 42, 99), 1);
	for (i = 0; i < 1000; i++) {
		union sockaddr_in_union b = v4(0x0b000000 + (uint32_t)i, 1);

		assert_non_null(homa_peer_get(t, &b));
	}
	assert_ptr_equal(homa_peer_get(t, &a), p);
	assert_int_equal(p->cutoff_version, 3);
	assert_int_equal(p->num_acks, 1);
	assert_int_equal(p->acks[0].client_id, 42);
}

/* At max_peers, a new host first forgets a peer without RPCs (its
 * queued acks and all); when every peer has RPCs there is no room. */
static void homa_peer_get__forgets_idle_at_max_peers(void **state)
{
	struct homa_peer_table *t = *state;
	struct homa_peer *p[4], *q;
	union sockaddr_in_union a;
	int i;

	t->max_peers = 4;
	for (i = 0; i < 4; i++) {
		a = v4(0x0a000001 + (uint32_t)i, 1);
		p[i] = homa_peer_get(t, &a);
		assert_non_null(p[i]);
		p[i]->rpcs = 1;
	}
	a = v4(0x0b000001, 1);
	assert_null(homa_peer_get(t, &a));
	assert_int_equal(t->hash.count, 4);
	p[2]->rpcs = 0;
	assert_int_equal(homa_peer_add_ack(p[2], 8, 99), 1);
	q = homa_peer_get(t, &a);
	assert_non_null(q);
	assert_int_equal(t->hash.count, 4);
	assert_int_equal(q->num_acks, 0);
	q->rpcs = 1;
	/* The other three are still there; the forgotten host cannot come
	 * back while no peer is idle. */
	for (i = 0; i < 4; i++) {
		a = v4(0x0a000001 + (uint32_t)i, 1);
		if (i != 2)
			assert_ptr_equal(homa_peer_get(t, &a), p[i]);
	}
	a = v4(0x0a000003, 1);
	assert_null(homa_peer_get(t, &a));
	t->max_peers = 0;
}

/* ---- homa_peer_unsched_priority ---- */

static void homa_peer_unsched_priority__fallback_before_cutoffs(void **state)
{
	struct homa_peer *p = a_peer(state);

	assert_int_equal(homa_peer_unsched_priority(p, 100, 8, 6), 6);
	assert_int_equal(homa_peer_unsched_priority(p, 1000000, 8, 6), 6);
	assert_int_equal(homa_peer_unsched_priority(p, 100, 8, 0), 0);
	assert_int_equal(homa_peer_unsched_priority(p, 100, 8, 7), 7);
	/* Even if cutoffs are filled in, version 0 means none arrived. */
	homa_peer_set_cutoffs(p, default_cutoffs, 0);
	assert_int_equal(homa_peer_unsched_priority(p, 100, 8, 6), 6);
}

static void homa_peer_unsched_priority__fallback_limited(void **state)
{
	struct homa_peer *p = a_peer(state);

	assert_int_equal(homa_peer_unsched_priority(p, 100, 4, 6), 3);
	assert_int_equal(homa_peer_unsched_priority(p, 100, 7, 6), 6);
	assert_int_equal(homa_peer_unsched_priority(p, 100, 6, 6), 5);
	assert_int_equal(homa_peer_unsched_priority(p, 100, 1, 6), 0);
	assert_int_equal(homa_peer_unsched_priority(p, 100, 0, 6), 0);
	assert_int_equal(homa_peer_unsched_priority(p, 100, -3, 6), 0);
}

static void homa_peer_unsched_priority__unknown_peer_setting(void **state)
{
	struct homa_peer *p = a_peer(state);
	struct homa_config cfg;
	uint8_t fallback;

	/* What the endpoint passes: the unknown_peer_priority setting
	 * within the levels in use (homa_config_level). */
	homa_config_defaults(&cfg);
	fallback = homa_config_level(&cfg, cfg.unknown_peer_priority);
	assert_int_equal(homa_peer_unsched_priority(p, 100, 8, fallback), 6);
	assert_int_equal(homa_config_set_value(&cfg, "unknown_peer_priority",
					       2), 0);
	fallback = homa_config_level(&cfg, cfg.unknown_peer_priority);
	assert_int_equal(homa_peer_unsched_priority(p, 100, 8, fallback), 2);
	assert_int_equal(homa_peer_unsched_priority(p, 1000000, 8, fallback),
			 2);
	/* Once the peer's CUTOFFS arrive, they decide. */
	homa_peer_set_cutoffs(p, default_cutoffs, 1);
	assert_int_equal(homa_peer_unsched_priority(p, 100, 8, fallback), 7);
	/* Above the levels in use it is the highest in use. */
	p->cutoff_version = 0;
	cfg.unknown_peer_priority = 7;
	cfg.num_priorities = 3;
	fallback = homa_config_level(&cfg, cfg.unknown_peer_priority);
	assert_int_equal(homa_peer_unsched_priority(p, 100, 3, fallback), 2);
}

static void homa_peer_unsched_priority__default_cutoffs(void **state)
{
	struct homa_peer *p = a_peer(state);

	homa_peer_set_cutoffs(p, default_cutoffs, 1);
	assert_int_equal(homa_peer_unsched_priority(p, 1, 8, 6), 7);
	assert_int_equal(homa_peer_unsched_priority(p, 200, 8, 6), 7);
	assert_int_equal(homa_peer_unsched_priority(p, 201, 8, 6), 6);
	assert_int_equal(homa_peer_unsched_priority(p, 2800, 8, 6), 6);
	assert_int_equal(homa_peer_unsched_priority(p, 2801, 8, 6), 5);
	assert_int_equal(homa_peer_unsched_priority(p, 15000, 8, 6), 5);
	assert_int_equal(homa_peer_unsched_priority(p, 15001, 8, 6), 4);
	assert_int_equal(homa_peer_unsched_priority(p, 1000000, 8, 6), 4);
}

static void homa_peer_unsched_priority__num_priorities_limits(void **state)
{
	struct homa_peer *p = a_peer(state);

	homa_peer_set_cutoffs(p, default_cutoffs, 1);
	/* Levels 0..5: entry 5 (15000) is the highest considered. */
	assert_int_equal(homa_peer_unsched_priority(p, 100, 6, 6), 5);
	assert_int_equal(homa_peer_unsched_priority(p, 15000, 6, 6), 5);
	assert_int_equal(homa_peer_unsched_priority(p, 15001, 6, 6), 4);
	/* Levels 0..3: everything fits entry 3. */
	assert_int_equal(homa_peer_unsched_priority(p, 100, 4, 6), 3);
	assert_int_equal(homa_peer_unsched_priority(p, 1000000, 4, 6), 3);
	/* One level. */
	assert_int_equal(homa_peer_unsched_priority(p, 100, 1, 6), 0);
	assert_int_equal(homa_peer_unsched_priority(p, 100, 0, 6), 0);
}

static void homa_peer_unsched_priority__num_priorities_above_levels(
	void **state)
{
	struct homa_peer *p = a_peer(state);

	/* More levels than exist are just the 8 levels: the result comes
	 * from the 8 cutoffs (nothing beyond them is consulted) and never
	 * exceeds 7. */
	homa_peer_set_cutoffs(p, default_cutoffs, 1);
	p->cutoffs_sent_tick = UINT64_MAX;
	assert_int_equal(homa_peer_unsched_priority(p, 100, 16, 6), 7);
	assert_int_equal(homa_peer_unsched_priority(p, 1000000, 16, 6), 4);
	assert_int_equal(homa_peer_unsched_priority(p, 15001, 9, 6), 4);
	p->cutoff_version = 0;
	assert_int_equal(homa_peer_unsched_priority(p, 100, 16, 6), 6);
}

static void homa_peer_unsched_priority__above_every_cutoff(void **state)
{
	static const uint32_t small[HOMA_NUM_PRIORITIES] = {
		0, 5000, 4000, 3000, 2000, 1000, 500, 100,
	};
	struct homa_peer *p = a_peer(state);

	homa_peer_set_cutoffs(p, small, 9);
	/* Entry 0 admits everything, whatever it says. */
	assert_int_equal(homa_peer_unsched_priority(p, 5001, 8, 6), 0);
	assert_int_equal(homa_peer_unsched_priority(p, 1000000, 8, 6), 0);
	assert_int_equal(homa_peer_unsched_priority(p, 5000, 8, 6), 1);
	assert_int_equal(homa_peer_unsched_priority(p, 1001, 8, 6), 4);
	assert_int_equal(homa_peer_unsched_priority(p, 100, 8, 6), 7);
	assert_int_equal(homa_peer_unsched_priority(p, 101, 8, 6), 6);
}

/* ---- homa_peer_set_cutoffs ---- */

static void homa_peer_set_cutoffs__copies(void **state)
{
	uint32_t cut[HOMA_NUM_PRIORITIES];
	struct homa_peer *p = a_peer(state);
	int i;

	for (i = 0; i < HOMA_NUM_PRIORITIES; i++)
		cut[i] = 80000 - (uint32_t)i * 10000;
	homa_peer_set_cutoffs(p, cut, 77);
	cut[3] = 1;                        /* the peer kept its own copy */
	assert_int_equal(p->cutoff_version, 77);
	for (i = 0; i < HOMA_NUM_PRIORITIES; i++)
		assert_int_equal(p->cutoffs[i], 80000 - (uint32_t)i * 10000);
	homa_peer_set_cutoffs(p, default_cutoffs, 78);
	assert_int_equal(p->cutoff_version, 78);
	assert_memory_equal(p->cutoffs, default_cutoffs,
			    sizeof(default_cutoffs));
}

/* ---- homa_peer_cutoffs_due ---- */

static void homa_peer_cutoffs_due__once_per_tick(void **state)
{
	struct homa_peer *p = a_peer(state);

	/* The default cutoffs_interval, 1: once per tick. */
	assert_true(homa_peer_cutoffs_due(p, 0, 1));
	assert_false(homa_peer_cutoffs_due(p, 0, 1));
	assert_true(homa_peer_cutoffs_due(p, 1, 1));
	assert_false(homa_peer_cutoffs_due(p, 1, 1));
	assert_true(homa_peer_cutoffs_due(p, 7, 1));
	/* 0 counts as 1. */
	assert_false(homa_peer_cutoffs_due(p, 7, 0));
	assert_true(homa_peer_cutoffs_due(p, 8, 0));
}

static void homa_peer_cutoffs_due__interval(void **state)
{
	struct homa_peer *p = a_peer(state);

	/* Sent at tick 10: not again before tick 15. */
	assert_true(homa_peer_cutoffs_due(p, 10, 5));
	assert_int_equal(p->cutoffs_sent_tick, 11);
	assert_false(homa_peer_cutoffs_due(p, 10, 5));
	assert_false(homa_peer_cutoffs_due(p, 14, 5));
	assert_int_equal(p->cutoffs_sent_tick, 11);    /* refusals: no change */
	assert_true(homa_peer_cutoffs_due(p, 15, 5));
	assert_false(homa_peer_cutoffs_due(p, 19, 5));
	assert_true(homa_peer_cutoffs_due(p, 1000, 5));
}

static void homa_peer_cutoffs_due__first_time(void **state)
{
	struct homa_peer *p = a_peer(state);

	/* A peer never sent CUTOFFS gets them at once, at any tick, however
	 * long the interval. */
	assert_true(homa_peer_cutoffs_due(p, 0, 1000000));
	assert_false(homa_peer_cutoffs_due(p, 999999, 1000000));
	assert_true(homa_peer_cutoffs_due(p, 1000000, 1000000));
}

/* ---- homa_peer_add_ack ---- */

static void homa_peer_add_ack__up_to_max(void **state)
{
	struct homa_peer *p = a_peer(state);
	int i;

	for (i = 0; i < HOMA_MAX_ACKS; i++)
		assert_int_equal(homa_peer_add_ack(p, 100 + (uint64_t)i * 2,
						   (uint16_t)(10 + i)), i + 1);
	/* Full: the sixth is not queued. */
	assert_int_equal(homa_peer_add_ack(p, 999, 1), HOMA_MAX_ACKS);
	assert_int_equal(p->num_acks, HOMA_MAX_ACKS);
	for (i = 0; i < HOMA_MAX_ACKS; i++) {
		assert_int_equal(p->acks[i].client_id, 100 + (uint64_t)i * 2);
		assert_int_equal(p->acks[i].server_port, 10 + i);
	}
}

/* ---- homa_peer_pop_ack ---- */

static void homa_peer_pop_ack__by_port_fifo(void **state)
{
	struct homa_peer *p = a_peer(state);
	struct homa_ack a;

	homa_peer_add_ack(p, 2, 80);
	homa_peer_add_ack(p, 4, 90);
	homa_peer_add_ack(p, 6, 80);
	homa_peer_add_ack(p, 8, 90);
	a = homa_peer_pop_ack(p, 90);
	assert_int_equal(a.client_id, 4);
	assert_int_equal(a.server_port, 90);
	a = homa_peer_pop_ack(p, 90);
	assert_int_equal(a.client_id, 8);
	a = homa_peer_pop_ack(p, 90);
	assert_int_equal(a.client_id, 0);
	/* Port 80's acks untouched, in order. */
	assert_int_equal(p->num_acks, 2);
	assert_int_equal(p->acks[0].client_id, 2);
	assert_int_equal(p->acks[1].client_id, 6);
	a = homa_peer_pop_ack(p, 80);
	assert_int_equal(a.client_id, 2);
	assert_int_equal(a.server_port, 80);
	a = homa_peer_pop_ack(p, 80);
	assert_int_equal(a.client_id, 6);
	assert_int_equal(p->num_acks, 0);
}

static void homa_peer_pop_ack__none(void **state)
{
	struct homa_peer *p = a_peer(state);
	struct homa_ack a;

	a = homa_peer_pop_ack(p, 80);
	assert_int_equal(a.client_id, 0);
	homa_peer_add_ack(p, 2, 80);
	a = homa_peer_pop_ack(p, 81);
	assert_int_equal(a.client_id, 0);
	assert_int_equal(p->num_acks, 1);
}

static void homa_peer_pop_ack__frees_room(void **state)
{
	struct homa_peer *p = a_peer(state);
	int i;

	for (i = 0; i < HOMA_MAX_ACKS; i++)
		homa_peer_add_ack(p, 10 + (uint64_t)i, 5);
	assert_int_equal(homa_peer_pop_ack(p, 5).client_id, 10);
	assert_int_equal(homa_peer_add_ack(p, 99, 5), HOMA_MAX_ACKS);
	assert_int_equal(p->acks[HOMA_MAX_ACKS - 1].client_id, 99);
	assert_int_equal(p->acks[0].client_id, 11);
}

/* ---- homa_peer_take_acks ---- */

static void homa_peer_take_acks__groups_by_first_port(void **state)
{
	struct homa_peer *p = a_peer(state);
	struct homa_ack out[HOMA_MAX_ACKS];

	homa_peer_add_ack(p, 2, 90);
	homa_peer_add_ack(p, 4, 80);
	homa_peer_add_ack(p, 6, 90);
	homa_peer_add_ack(p, 8, 70);
	homa_peer_add_ack(p, 10, 90);
	memset(out, 0, sizeof(out));
	assert_int_equal(homa_peer_take_acks(p, out), 3);
	assert_int_equal(out[0].client_id, 2);
	assert_int_equal(out[1].client_id, 6);
	assert_int_equal(out[2].client_id, 10);
	assert_int_equal(out[0].server_port, 90);
	assert_int_equal(out[1].server_port, 90);
	assert_int_equal(out[2].server_port, 90);
	/* The rest stay, in order. */
	assert_int_equal(p->num_acks, 2);
	assert_int_equal(p->acks[0].client_id, 4);
	assert_int_equal(p->acks[1].client_id, 8);
	assert_int_equal(homa_peer_take_acks(p, out), 1);
	assert_int_equal(out[0].client_id, 4);
	assert_int_equal(out[0].server_port, 80);
	assert_int_equal(homa_peer_take_acks(p, out), 1);
	assert_int_equal(out[0].client_id, 8);
	assert_int_equal(homa_peer_take_acks(p, out), 0);
	assert_int_equal(p->num_acks, 0);
}

static void homa_peer_take_acks__all_same_port(void **state)
{
	struct homa_peer *p = a_peer(state);
	struct homa_ack out[HOMA_MAX_ACKS];
	int i;

	for (i = 0; i < HOMA_MAX_ACKS; i++)
		homa_peer_add_ack(p, 100 + (uint64_t)i, 7);
	assert_int_equal(homa_peer_take_acks(p, out), HOMA_MAX_ACKS);
	for (i = 0; i < HOMA_MAX_ACKS; i++) {
		assert_int_equal(out[i].client_id, 100 + (uint64_t)i);
		assert_int_equal(out[i].server_port, 7);
	}
	assert_int_equal(p->num_acks, 0);
}

static void homa_peer_take_acks__empty(void **state)
{
	struct homa_peer *p = a_peer(state);
	struct homa_ack out[HOMA_MAX_ACKS];

	memset(out, 0xab, sizeof(out));
	assert_int_equal(homa_peer_take_acks(p, out), 0);
	assert_int_equal(out[0].client_id, 0xababababababababull);
}

/* ---- homa_peer_heard, homa_peer_heard_within, homa_peer_heard_since ---- */

static void homa_peer_heard__never_heard(void **state)
{
	struct homa_peer *p = a_peer(state);

	assert_false(homa_peer_heard_within(p, 80, 0, 100));
	assert_false(homa_peer_heard_within(p, 80, 1000, 100));
	assert_false(homa_peer_heard_since(p, 80, 0));
}

static void homa_peer_heard_within__window(void **state)
{
	struct homa_peer *p = a_peer(state);

	/* Heard at tick 0 (the endpoint's first): within 100 ticks until
	 * tick 99, not at tick 100. */
	homa_peer_heard(p, 80, 0);
	assert_true(homa_peer_heard_within(p, 80, 0, 100));
	assert_true(homa_peer_heard_within(p, 80, 99, 100));
	assert_false(homa_peer_heard_within(p, 80, 100, 100));
	homa_peer_heard(p, 80, 500);
	assert_true(homa_peer_heard_within(p, 80, 599, 100));
	assert_false(homa_peer_heard_within(p, 80, 600, 100));
	/* Another port of the same host is its own socket. */
	assert_false(homa_peer_heard_within(p, 81, 500, 100));
}

static void homa_peer_heard_since__at_or_after(void **state)
{
	struct homa_peer *p = a_peer(state);

	homa_peer_heard(p, 80, 7);
	assert_true(homa_peer_heard_since(p, 80, 0));
	assert_true(homa_peer_heard_since(p, 80, 7));
	assert_false(homa_peer_heard_since(p, 80, 8));
	assert_false(homa_peer_heard_since(p, 81, 0));
}

static void homa_peer_heard__replaces_least_recent_port(void **state)
{
	struct homa_peer *p = a_peer(state);
	uint16_t port;

	/* Ports 1..4 fill the entries (port 1 heard first, then again last
	 * but one: port 2 is then the least recent). */
	for (port = 1; port <= HOMA_PEER_HEARD_PORTS; port++)
		homa_peer_heard(p, port, port);
	homa_peer_heard(p, 1, 10);
	homa_peer_heard(p, 99, 11);
	assert_true(homa_peer_heard_since(p, 99, 11));
	assert_true(homa_peer_heard_since(p, 1, 10));
	assert_false(homa_peer_heard_within(p, 2, 11, 1000));
	for (port = 3; port <= HOMA_PEER_HEARD_PORTS; port++)
		assert_true(homa_peer_heard_within(p, port, 11, 1000));
	/* A port heard again takes no second entry. */
	homa_peer_heard(p, 99, 12);
	for (port = 3; port <= HOMA_PEER_HEARD_PORTS; port++)
		assert_true(homa_peer_heard_within(p, port, 12, 1000));
}

/* ---- homa_peer_note_wait, homa_peer_wait_bound ---- */

static void homa_peer_wait_bound__none_noted(void **state)
{
	struct homa_peer *p = a_peer(state);

	assert_int_equal(homa_peer_wait_bound(p), 0);
}

static void homa_peer_note_wait__first_sample(void **state)
{
	struct homa_peer *p = a_peer(state);

	/* The wait, plus four deviations of half the wait each. */
	homa_peer_note_wait(p, 4);
	assert_int_equal(homa_peer_wait_bound(p), 4 + 4 * 2);
}

static void homa_peer_note_wait__steady_samples_converge(void **state)
{
	struct homa_peer *p = a_peer(state);
	int i;

	/* A host that always answers after 3 ticks: the bound comes down
	 * to exactly 3. */
	for (i = 0; i < 60; i++)
		homa_peer_note_wait(p, 3);
	assert_int_equal(homa_peer_wait_bound(p), 3);
	/* Then it takes 20 ticks, steadily: the bound rises above 20 at
	 * once, and settles at 20. */
	homa_peer_note_wait(p, 20);
	assert_true(homa_peer_wait_bound(p) > 20);
	for (i = 0; i < 80; i++)
		homa_peer_note_wait(p, 20);
	assert_int_equal(homa_peer_wait_bound(p), 20);
	/* Quick again: back to 0 ticks, exactly. */
	for (i = 0; i < 120; i++)
		homa_peer_note_wait(p, 0);
	assert_int_equal(homa_peer_wait_bound(p), 0);
}

static void homa_peer_note_wait__one_late_answer_shifts_little(void **state)
{
	struct homa_peer *p = a_peer(state);
	int i;

	for (i = 0; i < 60; i++)
		homa_peer_note_wait(p, 1);
	/* One answer after 40 ticks (a lost packet, retransmitted): the
	 * smoothed wait takes an eighth of the difference (1 + 39 / 8,
	 * rounded up: 6), the deviation all of it (39). */
	homa_peer_note_wait(p, 40);
	assert_int_equal(homa_peer_wait_bound(p), 6 + 39);
	for (i = 0; i < 30; i++)
		homa_peer_note_wait(p, 1);
	assert_true(homa_peer_wait_bound(p) <= 2);
}

static void homa_peer_note_wait__capped(void **state)
{
	struct homa_peer *p = a_peer(state);
	int i;

	for (i = 0; i < 200; i++)
		homa_peer_note_wait(p, UINT32_MAX);
	assert_int_equal(homa_peer_wait_bound(p), HOMA_PEER_WAIT_MAX);
}

/* The first round of all has the floor, whatever arrived before it. */
static void homa_peer_resend_take__floor_first(void **state)
{
	struct homa_peer *p = a_peer(state);

	homa_peer_note_rx(p, 50000, 4);
	assert_int_equal(homa_peer_resend_take(p, 5, 3000, 10000), 3000);
	assert_int_equal(homa_peer_resend_take(p, 5, 3000, 10000), 0);
}

/* A round's budget is what arrived since the previous round began (more
 * than the floor here), shared by the takes of its tick; the next tick
 * starts a new round from what arrived meanwhile. */
static void homa_peer_resend_take__round_is_arrivals_since_last(
	void **state)
{
	struct homa_peer *p = a_peer(state);

	assert_int_equal(homa_peer_resend_take(p, 0, 3000, 1000), 1000);
	homa_peer_note_rx(p, 20000, 1);
	homa_peer_note_rx(p, 5000, 2);
	assert_int_equal(homa_peer_resend_take(p, 3, 3000, 10000), 10000);
	assert_int_equal(homa_peer_resend_take(p, 3, 3000, 10000), 10000);
	assert_int_equal(homa_peer_resend_take(p, 3, 3000, 10000), 5000);
	assert_int_equal(homa_peer_resend_take(p, 3, 3000, 10000), 0);
	/* Arrivals during the round count for the next one. */
	homa_peer_note_rx(p, 7000, 3);
	assert_int_equal(homa_peer_resend_take(p, 4, 3000, 10000), 7000);
	/* Nothing arrived: back to the floor. */
	assert_int_equal(homa_peer_resend_take(p, 9, 3000, 10000), 3000);
}

/* A round begun again within its tick (what was asked arrived) has what
 * arrived since the previous one began. */
static void homa_peer_resend_round__again_in_tick(void **state)
{
	struct homa_peer *p = a_peer(state);

	assert_int_equal(homa_peer_resend_take(p, 2, 3000, 10000), 3000);
	homa_peer_note_rx(p, 4000, 2);
	homa_peer_resend_round(p, 2, 3000);
	assert_int_equal(homa_peer_resend_take(p, 2, 3000, 10000), 4000);
	homa_peer_resend_round(p, 2, 3000);
	assert_int_equal(homa_peer_resend_take(p, 2, 3000, 10000), 3000);
}

/* The rate is the larger of the arrivals in this tick and the one
 * before; older ticks count for nothing. */
static void homa_peer_rx_rate__last_two_ticks(void **state)
{
	struct homa_peer *p = a_peer(state);

	assert_int_equal(homa_peer_rx_rate(p, 1), 0);
	homa_peer_note_rx(p, 4000, 1);
	homa_peer_note_rx(p, 1000, 1);
	assert_int_equal(homa_peer_rx_rate(p, 1), 5000);
	assert_int_equal(homa_peer_rx_rate(p, 2), 5000);
	homa_peer_note_rx(p, 2000, 2);
	assert_int_equal(homa_peer_rx_rate(p, 2), 5000);
	homa_peer_note_rx(p, 6000, 2);
	assert_int_equal(homa_peer_rx_rate(p, 2), 8000);
	assert_int_equal(homa_peer_rx_rate(p, 3), 8000);
	assert_int_equal(homa_peer_rx_rate(p, 4), 0);
	homa_peer_note_rx(p, 100, 7);
	assert_int_equal(homa_peer_rx_rate(p, 7), 100);
}

/* The peak is the most of one tick over the last HOMA_PEER_PEAK_TICKS
 * ticks (the tick so far included): a silence does not lower it, an old
 * peak no longer counts (one peak is kept: ticks below it while it
 * counts are forgotten). */
static void homa_peer_rx_peak__windowed_max(void **state)
{
	struct homa_peer *p = a_peer(state);

	assert_int_equal(homa_peer_rx_peak(p, 1), 0);
	homa_peer_note_rx(p, 9000, 1);
	assert_int_equal(homa_peer_rx_peak(p, 1), 9000);
	homa_peer_note_rx(p, 2000, 2);
	assert_int_equal(homa_peer_rx_peak(p, 2), 9000);
	/* Silent ticks: still 9,000. */
	assert_int_equal(homa_peer_rx_peak(p, 50), 9000);
	homa_peer_note_rx(p, 12000, 50);
	assert_int_equal(homa_peer_rx_peak(p, 50), 12000);
	homa_peer_note_rx(p, 1000, 60);
	assert_int_equal(homa_peer_rx_peak(p, 60), 12000);
	/* 12,000 (tick 50) is too old at tick 150; one peak is kept, so
	 * tick 60's 1,000, below it, was not: the tick so far counts. */
	homa_peer_note_rx(p, 500, 150);
	assert_int_equal(homa_peer_rx_peak(p, 150), 500);
	assert_int_equal(homa_peer_rx_peak(p, 300), 0);
}

/* T - a test run with a fresh table. */
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_peer_table_init__empty),
		T(homa_peer_table_destroy__twice),
		T(homa_peer_get__creates),
		T(homa_peer_get__same_host_any_port),
		T(homa_peer_get__distinct_hosts),
		T(homa_peer_get__marks_loopback),
		T(homa_peer_get__ipv4_ipv6_distinct),
		T(homa_peer_get__many_peers),
		T(homa_peer_get__state_survives_growth),
		T(homa_peer_get__forgets_idle_at_max_peers),
		T(homa_peer_unsched_priority__fallback_before_cutoffs),
		T(homa_peer_unsched_priority__fallback_limited),
		T(homa_peer_unsched_priority__unknown_peer_setting),
		T(homa_peer_unsched_priority__default_cutoffs),
		T(homa_peer_unsched_priority__num_priorities_limits),
		T(homa_peer_unsched_priority__num_priorities_above_levels),
		T(homa_peer_unsched_priority__above_every_cutoff),
		T(homa_peer_set_cutoffs__copies),
		T(homa_peer_cutoffs_due__once_per_tick),
		T(homa_peer_cutoffs_due__interval),
		T(homa_peer_cutoffs_due__first_time),
		T(homa_peer_add_ack__up_to_max),
		T(homa_peer_pop_ack__by_port_fifo),
		T(homa_peer_pop_ack__none),
		T(homa_peer_pop_ack__frees_room),
		T(homa_peer_take_acks__groups_by_first_port),
		T(homa_peer_take_acks__all_same_port),
		T(homa_peer_take_acks__empty),
		T(homa_peer_heard__never_heard),
		T(homa_peer_heard_within__window),
		T(homa_peer_heard_since__at_or_after),
		T(homa_peer_heard__replaces_least_recent_port),
		T(homa_peer_wait_bound__none_noted),
		T(homa_peer_note_wait__first_sample),
		T(homa_peer_note_wait__steady_samples_converge),
		T(homa_peer_note_wait__one_late_answer_shifts_little),
		T(homa_peer_note_wait__capped),
		T(homa_peer_resend_take__floor_first),
		T(homa_peer_resend_take__round_is_arrivals_since_last),
		T(homa_peer_resend_round__again_in_tick),
		T(homa_peer_rx_rate__last_two_ticks),
		T(homa_peer_rx_peak__windowed_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
