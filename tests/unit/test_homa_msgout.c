/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of homa_msgout (src/core/homa_msgout.c and the inline helper of
 * homa_msgout.h), in code order, named <function>__<case>.
 *
 * Build: cc -std=c11 -Iinclude -Isrc/core src/core/homa_msgout.c \
 *        tests/unit/test_homa_msgout.c -lcmocka
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <cmocka.h>

#include "homa_msgout.h"
#include "homa_wire.h"

/* A message of len bytes whose byte i is (uint8_t)(i * 7 + 3). */
static uint8_t *pattern(uint32_t len)
{
	uint8_t *p = malloc(len);
	uint32_t i;

	assert_non_null(p);
	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + 3);
	return p;
}

/* make - init m as a length-byte message (one iovec element) with packets of
 * seg bytes and unsched unscheduled bytes. */
static void make(struct homa_msgout *m, uint32_t length, uint32_t seg,
		 uint32_t unsched)
{
	uint8_t *buf = pattern(length);
	struct iovec iov = { .iov_base = buf, .iov_len = length };

	assert_int_equal(homa_msgout_init(m, &iov, 1, length, seg, unsched), 0);
	free(buf);
}

/* expect_next - the next packet is [offset, offset + len), retransmit or
 * not. */
static void expect_next(struct homa_msgout *m, uint32_t offset, uint32_t len,
			bool retransmit)
{
	struct homa_segment s;

	memset(&s, 0xcc, sizeof(s));
	assert_true(homa_msgout_next(m, &s));
	assert_int_equal(s.offset, offset);
	assert_int_equal(s.len, len);
	assert_int_equal(s.retransmit, retransmit);
}

/* expect_none - homa_msgout_next has nothing to send. */
static void expect_none(struct homa_msgout *m)
{
	struct homa_segment s;

	assert_false(homa_msgout_next(m, &s));
}

/* send_new - send n new packets of seg bytes starting at next_offset. */
static void send_new(struct homa_msgout *m, int n)
{
	int i;

	for (i = 0; i < n; i++)
		expect_next(m, m->next_offset, m->seg, false);
}

/* setup - a zeroed message for the test in *state. */
static int setup(void **state)
{
	struct homa_msgout *m = calloc(1, sizeof(*m));

	if (!m)
		return -1;
	*state = m;
	return 0;
}

/* teardown - free the test's message (also when the test failed). */
static int teardown(void **state)
{
	struct homa_msgout *m = *state;

	homa_msgout_free(m);
	free(m);
	return 0;
}

/* ---- homa_msgout_init ---- */

/* Framed: each packet's payload sits after frame bytes of room, so the
 * frames of consecutive packets are one buffer of whole packets; iovec
 * pieces that cross packet boundaries are cut at them. */
static void homa_msgout_init_framed__layout(void **state)
{
	uint8_t *src = pattern(2500);
	struct iovec iov[3] = {
		{ .iov_base = src, .iov_len = 700 },
		{ .iov_base = src + 700, .iov_len = 0 },
		{ .iov_base = src + 700, .iov_len = 1800 },
	};
	struct homa_msgout_cache cache = { 0 };
	struct homa_msgout *m = *state;

	assert_int_equal(homa_msgout_init_framed(m, &cache, iov, 3, 2500,
						 1000, 40000, 16), 0);
	assert_int_equal(m->frame, 16);
	assert_int_equal(m->length, 2500);
	assert_ptr_equal(homa_msgout_frame(m, 0), m->data);
	assert_ptr_equal(homa_msgout_frame(m, 1000), m->data + 1016);
	assert_ptr_equal(homa_msgout_frame(m, 2000), m->data + 2032);
	assert_ptr_equal(homa_msgout_payload(m, 1000), m->data + 1032);
	assert_memory_equal(homa_msgout_payload(m, 0), src, 1000);
	assert_memory_equal(homa_msgout_payload(m, 1000), src + 1000, 1000);
	assert_memory_equal(homa_msgout_payload(m, 2000), src + 2000, 500);
	assert_true(m->cap >= 2500 + 3 * 16);
	homa_msgout_free(m);
	homa_msgout_cache_drain(&cache);
	free(src);
}

/* Lent: packets read the sender's memory and the frames stay unwritten
 * until homa_msgout_settle copies the bytes into them. */
static void homa_msgout_init_lent__reads_in_place_until_settle(void **state)
{
	uint8_t *src = pattern(2500);
	struct homa_msgout_cache cache = { 0 };
	struct homa_msgout *m = *state;

	assert_int_equal(homa_msgout_init_lent(m, &cache, src, 2500, 1000,
					       40000, 16), 0);
	assert_ptr_equal(m->lent, src);
	assert_int_equal(m->length, 2500);
	assert_int_equal(m->granted, 2500);
	assert_ptr_equal(homa_msgout_payload(m, 1000), src + 1000);
	assert_ptr_equal(homa_msgout_frame(m, 1000), m->data + 1016);
	memset(m->data, 0xee, m->cap);
	homa_msgout_settle(m);
	assert_null(m->lent);
	assert_ptr_equal(homa_msgout_payload(m, 1000), m->data + 1032);
	assert_memory_equal(homa_msgout_payload(m, 0), src, 1000);
	assert_memory_equal(homa_msgout_payload(m, 1000), src + 1000, 1000);
	assert_memory_equal(homa_msgout_payload(m, 2000), src + 2000, 500);
	/* The headers' room is left alone; a second settle does nothing. */
	assert_int_equal(m->data[1016], 0xee);
	memset(src, 0, 2500);
	homa_msgout_settle(m);
	assert_int_not_equal(homa_msgout_payload(m, 0)[1], 0);
	homa_msgout_free(m);
	homa_msgout_cache_drain(&cache);
	free(src);
}

/* Settling in steps copies whole packets, at least the bytes asked for;
 * the packets not yet copied still read the sender's memory. */
static void homa_msgout_settle_part__whole_packets_in_steps(void **state)
{
	uint8_t *src = pattern(2500);
	struct homa_msgout_cache cache = { 0 };
	struct homa_msgout *m = *state;

	assert_int_equal(homa_msgout_init_lent(m, &cache, src, 2500, 1000,
					       40000, 16), 0);
	assert_false(homa_msgout_settle_part(m, 1));
	assert_ptr_equal(m->lent, src);
	assert_int_equal(m->settled, 1000);
	assert_memory_equal(m->data + 16, src, 1000);
	assert_ptr_equal(homa_msgout_payload(m, 2000), src + 2000);
	assert_true(homa_msgout_settle_part(m, 1001));
	assert_null(m->lent);
	assert_memory_equal(homa_msgout_payload(m, 1000), src + 1000, 1000);
	assert_memory_equal(homa_msgout_payload(m, 2000), src + 2000, 500);
	/* Nothing is lent any more: another step does nothing. */
	memset(src, 0, 2500);
	assert_true(homa_msgout_settle_part(m, 1));
	assert_int_not_equal(homa_msgout_payload(m, 0)[1], 0);
	homa_msgout_free(m);
	homa_msgout_cache_drain(&cache);
	free(src);
}

/* A forgotten message keeps no bytes and never sends again: not its
 * unsent part, not what a RESEND asks for, not after a restart. */
static void homa_msgout_forget_lent__sends_nothing_again(void **state)
{
	uint8_t *src = pattern(5000);
	struct homa_msgout_cache cache = { 0 };
	struct homa_msgout *m = *state;
	struct homa_segment seg;

	assert_int_equal(homa_msgout_init_lent(m, &cache, src, 5000, 1000,
					       2000, 16), 0);
	assert_true(homa_msgout_next(m, &seg));
	assert_false(homa_msgout_settle_part(m, 1000));
	homa_msgout_forget_lent(m);
	assert_null(m->lent);
	assert_true(m->forgotten);
	assert_false(homa_msgout_has_work(m));
	assert_true(homa_msgout_fully_sent(m));
	assert_int_equal(homa_msgout_request_resend(m, 0, HOMA_RESEND_ALL),
			 0);
	assert_false(homa_msgout_next(m, &seg));
	homa_msgout_restart(m);
	assert_false(homa_msgout_has_work(m));
	assert_false(homa_msgout_next(m, &seg));
	homa_msgout_free(m);
	homa_msgout_cache_drain(&cache);
	free(src);
}

/* Without frames the payload is the message in order. */
static void homa_msgout_payload__plain(void **state)
{
	uint8_t *src = pattern(3000);
	struct iovec iov = { .iov_base = src, .iov_len = 3000 };
	struct homa_msgout *m = *state;

	assert_int_equal(homa_msgout_init(m, &iov, 1, 3000, 1000, 40000), 0);
	assert_int_equal(m->frame, 0);
	assert_ptr_equal(homa_msgout_payload(m, 2000), m->data + 2000);
	assert_ptr_equal(homa_msgout_frame(m, 2000), m->data + 2000);
	homa_msgout_free(m);
	free(src);
}

static void homa_msgout_init__copies_iovec(void **state)
{
	uint8_t *src = pattern(5000);
	uint8_t empty = 0x5a;
	struct iovec iov[6] = {
		{ .iov_base = NULL, .iov_len = 0 },
		{ .iov_base = src, .iov_len = 1 },
		{ .iov_base = &empty, .iov_len = 0 },
		{ .iov_base = src + 1, .iov_len = 2999 },
		{ .iov_base = src + 3000, .iov_len = 0 },
		{ .iov_base = src + 3000, .iov_len = 2000 },
	};
	struct homa_msgout *m = *state;

	assert_int_equal(homa_msgout_init(m, iov, 6, 5000, 1000, 40000), 0);
	assert_non_null(m->data);
	assert_memory_equal(m->data, src, 5000);
	assert_int_equal(m->length, 5000);
	/* The copy is private. */
	memset(src, 0, 5000);
	assert_int_equal(m->data[0], 3);
	assert_int_equal(m->data[4999], (uint8_t)(4999 * 7 + 3));
	homa_msgout_free(m);
	free(src);
}

static void homa_msgout_init__iovec_order(void **state)
{
	const char *a = "hello, ", *b = "", *c = "world";
	struct iovec iov[3] = {
		{ .iov_base = (void *)a, .iov_len = 7 },
		{ .iov_base = (void *)b, .iov_len = 0 },
		{ .iov_base = (void *)c, .iov_len = 5 },
	};
	struct homa_msgout *m = *state;

	assert_int_equal(homa_msgout_init(m, iov, 3, 12, 1000, 40000), 0);
	assert_memory_equal(m->data, "hello, world", 12);
	homa_msgout_free(m);
}

static void homa_msgout_init__initial_values(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 100000, 1424, 40000);
	assert_int_equal(m->length, 100000);
	assert_int_equal(m->seg, 1424);
	assert_int_equal(m->next_offset, 0);
	assert_int_equal(m->unscheduled, 40000);
	assert_int_equal(m->granted, 40000);
	assert_int_equal(m->num_resends, 0);
	homa_msgout_free(m);
}

static void homa_msgout_init__unscheduled_clamped_to_length(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 3000, 1424, 40000);
	assert_int_equal(m->unscheduled, 3000);
	assert_int_equal(m->granted, 3000);
	homa_msgout_free(m);
	make(m, 3000, 1424, 3000);
	assert_int_equal(m->unscheduled, 3000);
	assert_int_equal(m->granted, 3000);
	homa_msgout_free(m);
}

/* ---- homa_msgout_free ---- */

static void homa_msgout_free__then_reinit(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 3000, 1000, 1000);
	send_new(m, 1);
	homa_msgout_free(m);
	assert_null(m->data);
	assert_int_equal(m->length, 0);
	assert_int_equal(m->next_offset, 0);
	make(m, 10, 1000, 1000);
	assert_int_equal(m->length, 10);
	assert_int_equal(m->granted, 10);
	expect_next(m, 0, 10, false);
	homa_msgout_free(m);
}

/* ---- homa_msgout_grant ---- */

static void homa_msgout_grant__grows(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 100000, 1000, 40000);
	assert_true(homa_msgout_grant(m, 50000));
	assert_int_equal(m->granted, 50000);
	assert_true(homa_msgout_grant(m, 50001));
	assert_int_equal(m->granted, 50001);
	homa_msgout_free(m);
}

static void homa_msgout_grant__clamped_to_length(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 100000, 1000, 40000);
	assert_true(homa_msgout_grant(m, 150000));
	assert_int_equal(m->granted, 100000);
	assert_false(homa_msgout_grant(m, UINT32_MAX));
	assert_int_equal(m->granted, 100000);
	homa_msgout_free(m);
}

static void homa_msgout_grant__not_above(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 100000, 1000, 40000);
	assert_false(homa_msgout_grant(m, 40000));
	assert_false(homa_msgout_grant(m, 100));
	assert_int_equal(m->granted, 40000);
	homa_msgout_free(m);
}

/* ---- homa_msgout_request_resend ---- */

static void homa_msgout_request_resend__nothing_sent(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 5000);
	assert_int_equal(homa_msgout_request_resend(m, 0, 1000), 0);
	assert_int_equal(homa_msgout_request_resend(m, 0, HOMA_RESEND_ALL),
			 0);
	assert_int_equal(m->num_resends, 0);
	assert_true(homa_msgout_has_work(m));   /* new data is left */
	homa_msgout_free(m);
}

static void homa_msgout_request_resend__only_sent_bytes(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 3000);
	send_new(m, 3);
	/* [2000, 6000): only [2000, 3000) was sent. */
	assert_int_equal(homa_msgout_request_resend(m, 2000, 4000), 1000);
	assert_int_equal(m->num_resends, 1);
	assert_int_equal(m->resends[0].start, 2000);
	assert_int_equal(m->resends[0].end, 3000);
	/* Entirely beyond what was sent: nothing. */
	assert_int_equal(homa_msgout_request_resend(m, 3000, 1000), 0);
	assert_int_equal(homa_msgout_request_resend(m, 9000, 1000), 0);
	assert_int_equal(m->num_resends, 1);
	homa_msgout_free(m);
}

static void homa_msgout_request_resend__widened_to_packets(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 5000);
	send_new(m, 5);
	assert_int_equal(homa_msgout_request_resend(m, 1500, 100), 1000);
	assert_int_equal(m->resends[0].start, 1000);
	assert_int_equal(m->resends[0].end, 2000);
	/* Across a boundary: two packets. */
	assert_int_equal(homa_msgout_request_resend(m, 3999, 2), 2000);
	assert_int_equal(m->num_resends, 2);
	assert_int_equal(m->resends[1].start, 3000);
	assert_int_equal(m->resends[1].end, 5000);
	homa_msgout_free(m);
}

static void homa_msgout_request_resend__already_aligned(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 5000);
	send_new(m, 5);
	assert_int_equal(homa_msgout_request_resend(m, 2000, 1000), 1000);
	assert_int_equal(m->resends[0].start, 2000);
	assert_int_equal(m->resends[0].end, 3000);
	homa_msgout_free(m);
}

static void homa_msgout_request_resend__last_short_packet(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 2500, 1000, 40000);
	send_new(m, 2);
	expect_next(m, 2000, 500, false);
	/* The last packet is [2000, 2500): a range inside it is widened to
	 * the whole packet. */
	assert_int_equal(homa_msgout_request_resend(m, 2100, 100), 500);
	assert_int_equal(m->num_resends, 1);
	assert_int_equal(m->resends[0].start, 2000);
	assert_int_equal(m->resends[0].end, 2500);
	expect_next(m, 2000, 500, true);
	expect_none(m);
	homa_msgout_free(m);
}

static void homa_msgout_request_resend__all(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 3500);
	send_new(m, 4);                      /* 4000 sent (last one past
					       * the 3500 grant) */
	assert_int_equal(homa_msgout_request_resend(m, 0, HOMA_RESEND_ALL),
			 4000);
	assert_int_equal(m->num_resends, 1);
	assert_int_equal(m->resends[0].start, 0);
	assert_int_equal(m->resends[0].end, 4000);
	homa_msgout_free(m);
}

static void homa_msgout_request_resend__all_from_offset(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 4000);
	send_new(m, 4);
	assert_int_equal(homa_msgout_request_resend(m, 1500, HOMA_RESEND_ALL),
			 3000);
	assert_int_equal(m->resends[0].start, 1000);
	assert_int_equal(m->resends[0].end, 4000);
	homa_msgout_free(m);
}

static void homa_msgout_request_resend__len_zero(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 4000);
	send_new(m, 4);
	assert_int_equal(homa_msgout_request_resend(m, 1000, 0), 0);
	assert_int_equal(m->num_resends, 0);
	homa_msgout_free(m);
}

static void homa_msgout_request_resend__huge_values(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 4000);
	send_new(m, 4);
	/* offset + len would wrap: clipped to what was sent. */
	assert_int_equal(homa_msgout_request_resend(m, 2000, UINT32_MAX - 1),
			 2000);
	assert_int_equal(m->resends[0].start, 2000);
	assert_int_equal(m->resends[0].end, 4000);
	assert_int_equal(homa_msgout_request_resend(m, UINT32_MAX, 10), 0);
	assert_int_equal(homa_msgout_request_resend(m, UINT32_MAX - 5,
						    HOMA_RESEND_ALL), 0);
	assert_int_equal(m->num_resends, 1);
	homa_msgout_free(m);
}

static void homa_msgout_request_resend__merges_overlapping(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 6000);
	send_new(m, 6);
	homa_msgout_request_resend(m, 1000, 1000);    /* [1000, 2000) */
	homa_msgout_request_resend(m, 1500, 1000);    /* [1000, 3000) */
	assert_int_equal(m->num_resends, 1);
	assert_int_equal(m->resends[0].start, 1000);
	assert_int_equal(m->resends[0].end, 3000);
	homa_msgout_request_resend(m, 0, 500);        /* [0, 1000): adjacent */
	assert_int_equal(m->num_resends, 1);
	assert_int_equal(m->resends[0].start, 0);
	assert_int_equal(m->resends[0].end, 3000);
	homa_msgout_request_resend(m, 3000, 1000);    /* adjacent above */
	assert_int_equal(m->num_resends, 1);
	assert_int_equal(m->resends[0].end, 4000);
	homa_msgout_request_resend(m, 1000, 1000);    /* inside */
	assert_int_equal(m->num_resends, 1);
	assert_int_equal(m->resends[0].start, 0);
	assert_int_equal(m->resends[0].end, 4000);
	homa_msgout_free(m);
}

static void homa_msgout_request_resend__separate_ranges(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 6000);
	send_new(m, 6);
	homa_msgout_request_resend(m, 4000, 1000);
	homa_msgout_request_resend(m, 1000, 1000);
	assert_int_equal(m->num_resends, 2);
	/* Served in the order asked. */
	expect_next(m, 4000, 1000, true);
	expect_next(m, 1000, 1000, true);
	expect_none(m);
	homa_msgout_free(m);
}

static void homa_msgout_request_resend__bridging_range(void **state)
{
	struct homa_msgout *m = *state;
	uint32_t seen[10] = { 0 };
	struct homa_segment s;
	int i;

	make(m, 10000, 1000, 6000);
	send_new(m, 6);
	homa_msgout_request_resend(m, 0, 1000);       /* [0, 1000) */
	homa_msgout_request_resend(m, 3000, 1000);    /* [3000, 4000) */
	homa_msgout_request_resend(m, 500, 3000);     /* bridges both */
	/* Each of packets 0..3 goes out exactly once. */
	while (homa_msgout_next(m, &s)) {
		assert_true(s.retransmit);
		assert_int_equal(s.offset % 1000, 0);
		assert_int_equal(s.len, 1000);
		seen[s.offset / 1000]++;
	}
	for (i = 0; i < 4; i++)
		assert_int_equal(seen[i], 1);
	for (i = 4; i < 10; i++)
		assert_int_equal(seen[i], 0);
	homa_msgout_free(m);
}

static void homa_msgout_request_resend__slots_overflow(void **state)
{
	struct homa_msgout *m = *state;
	const int r = HOMA_MSGOUT_RESENDS, n = HOMA_MSGOUT_RESENDS + 2;
	int i;

	make(m, (uint32_t)n * 2000, 1000, (uint32_t)n * 2000);
	send_new(m, 2 * n);
	/* Every other packet: 0, 2, ..., 2(n-1) (n ranges, r slots). */
	for (i = 0; i < n; i++)
		assert_int_equal(homa_msgout_request_resend(m,
				 (uint32_t)i * 2000, 1000), 1000);
	assert_int_equal(m->num_resends, r);
	for (i = 0; i < r - 1; i++) {
		assert_int_equal(m->resends[i].start, (uint32_t)i * 2000);
		assert_int_equal(m->resends[i].end, (uint32_t)i * 2000 + 1000);
	}
	/* The last slot absorbed the overflow. */
	assert_int_equal(m->resends[r - 1].start, (uint32_t)(r - 1) * 2000);
	assert_int_equal(m->resends[r - 1].end, (uint32_t)(n - 1) * 2000 + 1000);
	for (i = 0; i < r - 1; i++)
		expect_next(m, (uint32_t)i * 2000, 1000, true);
	for (i = 2 * (r - 1); i <= 2 * (n - 1); i++)
		expect_next(m, (uint32_t)i * 1000, 1000, true);
	expect_none(m);
	homa_msgout_free(m);
}

static void homa_msgout_request_resend__overflow_below_last(void **state)
{
	struct homa_msgout *m = *state;
	const uint32_t len = 20000 + 2000 * HOMA_MSGOUT_RESENDS + 1000;
	int i;

	make(m, len, 1000, len);
	send_new(m, (int)(len / 1000));
	for (i = 0; i < HOMA_MSGOUT_RESENDS; i++)
		homa_msgout_request_resend(m, 20000 + (uint32_t)i * 2000, 1);
	/* One range more, below the last one, still gets retransmitted. */
	assert_int_equal(homa_msgout_request_resend(m, 5000, 1), 1000);
	assert_int_equal(m->num_resends, HOMA_MSGOUT_RESENDS);
	assert_true(m->resends[HOMA_MSGOUT_RESENDS - 1].start <= 5000);
	assert_true(m->resends[HOMA_MSGOUT_RESENDS - 1].end >= 6000);
	homa_msgout_free(m);
}

/* ---- homa_msgout_restart ---- */

static void homa_msgout_restart__from_start(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 2000);
	send_new(m, 2);
	assert_true(homa_msgout_grant(m, 6000));
	send_new(m, 4);
	homa_msgout_request_resend(m, 1000, 1000);
	homa_msgout_restart(m);
	assert_int_equal(m->next_offset, 0);
	assert_int_equal(m->num_resends, 0);
	assert_int_equal(m->granted, 2000);
	assert_int_equal(homa_msgout_remaining(m), 10000);
	expect_next(m, 0, 1000, false);
	expect_next(m, 1000, 1000, false);
	expect_none(m);
	/* Grants work again after the restart. */
	assert_true(homa_msgout_grant(m, 3000));
	expect_next(m, 2000, 1000, false);
	expect_none(m);
	homa_msgout_free(m);
}

static void homa_msgout_restart__keeps_data(void **state)
{
	struct homa_msgout *m = *state;
	uint8_t *expect = pattern(3000);

	make(m, 3000, 1000, 40000);
	send_new(m, 3);
	assert_true(homa_msgout_fully_sent(m));
	homa_msgout_restart(m);
	assert_false(homa_msgout_fully_sent(m));
	assert_int_equal(m->length, 3000);
	assert_int_equal(m->granted, 3000);
	assert_memory_equal(m->data, expect, 3000);
	free(expect);
	homa_msgout_free(m);
}

/* ---- homa_msgout_has_work ---- */

static void homa_msgout_has_work__new_data(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 2000);
	assert_true(homa_msgout_has_work(m));
	send_new(m, 2);
	assert_false(homa_msgout_has_work(m));
	assert_true(homa_msgout_grant(m, 2001));
	assert_true(homa_msgout_has_work(m));
	expect_next(m, 2000, 1000, false);   /* goes past the grant */
	assert_false(homa_msgout_has_work(m));
	homa_msgout_free(m);
}

static void homa_msgout_has_work__resend_pending(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 2000);
	send_new(m, 2);
	assert_false(homa_msgout_has_work(m));
	homa_msgout_request_resend(m, 0, 1);
	assert_true(homa_msgout_has_work(m));
	expect_next(m, 0, 1000, true);
	assert_false(homa_msgout_has_work(m));
	homa_msgout_free(m);
}

static void homa_msgout_has_work__all_sent(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 1500, 1000, 40000);
	send_new(m, 1);
	expect_next(m, 1000, 500, false);
	assert_false(homa_msgout_has_work(m));
	homa_msgout_free(m);
}

/* ---- homa_msgout_fully_sent ---- */

static void homa_msgout_fully_sent__progress(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 2500, 1000, 1000);
	assert_false(homa_msgout_fully_sent(m));
	send_new(m, 1);
	assert_false(homa_msgout_fully_sent(m));
	assert_true(homa_msgout_grant(m, 2500));
	send_new(m, 1);
	expect_next(m, 2000, 500, false);
	assert_true(homa_msgout_fully_sent(m));
	homa_msgout_free(m);
}

static void homa_msgout_fully_sent__not_with_resend(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 2000, 1000, 2000);
	send_new(m, 2);
	assert_true(homa_msgout_fully_sent(m));
	homa_msgout_request_resend(m, 1000, 1000);
	assert_false(homa_msgout_fully_sent(m));
	expect_next(m, 1000, 1000, true);
	assert_true(homa_msgout_fully_sent(m));
	homa_msgout_free(m);
}

/* ---- homa_msgout_remaining ---- */

static void homa_msgout_remaining__counts_unsent(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 2500, 1000, 40000);
	assert_int_equal(homa_msgout_remaining(m), 2500);
	send_new(m, 1);
	assert_int_equal(homa_msgout_remaining(m), 1500);
	homa_msgout_request_resend(m, 0, 1000);
	expect_next(m, 0, 1000, true);          /* retransmit: no change */
	assert_int_equal(homa_msgout_remaining(m), 1500);
	send_new(m, 1);
	expect_next(m, 2000, 500, false);
	assert_int_equal(homa_msgout_remaining(m), 0);
	homa_msgout_free(m);
}

/* ---- homa_msgout_next_run ---- */

/* expect_run - the next run is count packets covering [offset, offset +
 * len), retransmit or not. */
static void expect_run(struct homa_msgout *m, uint32_t max, uint32_t offset,
		       uint32_t len, uint32_t count, bool retransmit)
{
	struct homa_segment s;

	memset(&s, 0xcc, sizeof(s));
	assert_true(homa_msgout_next_run(m, max, &s));
	assert_int_equal(s.offset, offset);
	assert_int_equal(s.len, len);
	assert_int_equal(s.count, count);
	assert_int_equal(s.retransmit, retransmit);
}

/* A run stops at max_segs, at the unscheduled boundary (a packet starting
 * below it belongs to the unscheduled side), at the grant and at the end. */
static void homa_msgout_next_run__limits(void **state)
{
	struct homa_msgout *m = *state;
	struct homa_segment s;

	make(m, 10500, 1000, 2500);
	expect_run(m, 2, 0, 2000, 2, false);
	expect_run(m, 8, 2000, 1000, 1, false);   /* unscheduled side */
	assert_false(homa_msgout_next_run(m, 8, &s));
	assert_true(homa_msgout_grant(m, 6200));
	expect_run(m, 8, 3000, 4000, 4, false);   /* up to the grant */
	assert_true(homa_msgout_grant(m, 20000));
	expect_run(m, 64, 7000, 3500, 4, false);  /* short last packet */
	assert_false(homa_msgout_next_run(m, 64, &s));
	assert_true(homa_msgout_fully_sent(m));
	homa_msgout_free(m);
}

/* Retransmissions come first, one packet at a time. */
static void homa_msgout_next_run__resend_single(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 10000);
	expect_run(m, 5, 0, 5000, 5, false);
	assert_int_equal(homa_msgout_request_resend(m, 1000, 2000), 2000);
	expect_run(m, 5, 1000, 1000, 1, true);
	expect_run(m, 5, 2000, 1000, 1, true);
	expect_run(m, 5, 5000, 5000, 5, false);
	homa_msgout_free(m);
}

/* A large buffer freed goes back to the cache and serves the next message
 * that fits; small ones are not kept; drain frees what is kept. */
static void homa_msgout_cache__reuse(void **state)
{
	struct homa_msgout_cache cache = { 0 };
	struct homa_msgout *m = *state, m2;
	uint8_t *buf = pattern(200000), *first;
	struct iovec iov = { .iov_base = buf, .iov_len = 200000 };

	assert_int_equal(homa_msgout_init_cached(m, &cache, &iov, 1, 200000,
						 1000, 1000), 0);
	assert_int_equal(m->cap, 262144);
	first = m->data;
	homa_msgout_free(m);
	assert_int_equal(cache.n, 1);
	iov.iov_len = 150000;
	assert_int_equal(homa_msgout_init_cached(m, &cache, &iov, 1, 150000,
						 1000, 1000), 0);
	assert_ptr_equal(m->data, first);
	assert_int_equal(cache.n, 0);
	assert_memory_equal(m->data, buf, 150000);
	iov.iov_len = 100;
	assert_int_equal(homa_msgout_init_cached(&m2, &cache, &iov, 1, 100,
						 1000, 1000), 0);
	homa_msgout_free(&m2);
	assert_int_equal(cache.n, 0);
	homa_msgout_free(m);
	assert_int_equal(cache.n, 1);
	homa_msgout_cache_drain(&cache);
	assert_int_equal(cache.n, 0);
	free(buf);
}

/* ---- homa_msgout_next ---- */

static void homa_msgout_next__up_to_grant(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 2500);
	expect_next(m, 0, 1000, false);
	expect_next(m, 1000, 1000, false);
	/* Starts below the grant, so the whole packet goes. */
	expect_next(m, 2000, 1000, false);
	assert_int_equal(m->next_offset, 3000);
	expect_none(m);
	expect_none(m);
	homa_msgout_free(m);
}

static void homa_msgout_next__stops_at_grant_boundary(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 2000);
	send_new(m, 2);
	expect_none(m);
	assert_int_equal(m->next_offset, 2000);
	homa_msgout_free(m);
}

static void homa_msgout_next__continues_after_grant(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10500, 1000, 2000);
	send_new(m, 2);
	expect_none(m);
	assert_true(homa_msgout_grant(m, 4000));
	expect_next(m, 2000, 1000, false);
	expect_next(m, 3000, 1000, false);
	expect_none(m);
	assert_true(homa_msgout_grant(m, 20000));   /* clamped to 10500 */
	send_new(m, 6);
	expect_next(m, 10000, 500, false);          /* short last packet */
	expect_none(m);
	assert_int_equal(m->next_offset, 10500);
	homa_msgout_free(m);
}

static void homa_msgout_next__grant_inside_sent_packet(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 1500);
	send_new(m, 2);                 /* [0, 2000) */
	/* A grant below what was already sent adds nothing. */
	assert_true(homa_msgout_grant(m, 1800));
	expect_none(m);
	homa_msgout_free(m);
}

static void homa_msgout_next__single_short_message(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 1, 1424, 40000);
	expect_next(m, 0, 1, false);
	expect_none(m);
	homa_msgout_free(m);
}

static void homa_msgout_next__retransmit_first(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 5000);
	send_new(m, 3);
	homa_msgout_request_resend(m, 500, 1);
	expect_next(m, 0, 1000, true);
	expect_next(m, 3000, 1000, false);
	homa_msgout_free(m);
}

static void homa_msgout_next__retransmit_reuses_boundaries(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 5500, 1000, 40000);
	send_new(m, 5);
	expect_next(m, 5000, 500, false);
	assert_int_equal(homa_msgout_request_resend(m, 1234, 3000), 4000);
	expect_next(m, 1000, 1000, true);
	expect_next(m, 2000, 1000, true);
	expect_next(m, 3000, 1000, true);
	expect_next(m, 4000, 1000, true);
	expect_none(m);
	assert_int_equal(homa_msgout_request_resend(m, 0, HOMA_RESEND_ALL),
			 5500);
	expect_next(m, 0, 1000, true);
	expect_next(m, 1000, 1000, true);
	expect_next(m, 2000, 1000, true);
	expect_next(m, 3000, 1000, true);
	expect_next(m, 4000, 1000, true);
	expect_next(m, 5000, 500, true);
	expect_none(m);
	homa_msgout_free(m);
}

static void homa_msgout_next__retransmit_beyond_grant_exhausted(void **state)
{
	struct homa_msgout *m = *state;

	make(m, 10000, 1000, 2000);
	send_new(m, 2);
	expect_none(m);
	/* Already-sent bytes go again even though no new grant arrived. */
	homa_msgout_request_resend(m, 1000, 1000);
	expect_next(m, 1000, 1000, true);
	expect_none(m);
	assert_int_equal(m->next_offset, 2000);
	homa_msgout_free(m);
}

/* Every test runs with a fresh message from setup. */
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_msgout_init_framed__layout),
		T(homa_msgout_init_lent__reads_in_place_until_settle),
		T(homa_msgout_settle_part__whole_packets_in_steps),
		T(homa_msgout_forget_lent__sends_nothing_again),
		T(homa_msgout_payload__plain),
		T(homa_msgout_init__copies_iovec),
		T(homa_msgout_init__iovec_order),
		T(homa_msgout_init__initial_values),
		T(homa_msgout_init__unscheduled_clamped_to_length),
		T(homa_msgout_free__then_reinit),
		T(homa_msgout_grant__grows),
		T(homa_msgout_grant__clamped_to_length),
		T(homa_msgout_grant__not_above),
		T(homa_msgout_request_resend__nothing_sent),
		T(homa_msgout_request_resend__only_sent_bytes),
		T(homa_msgout_request_resend__widened_to_packets),
		T(homa_msgout_request_resend__already_aligned),
		T(homa_msgout_request_resend__last_short_packet),
		T(homa_msgout_request_resend__all),
		T(homa_msgout_request_resend__all_from_offset),
		T(homa_msgout_request_resend__len_zero),
		T(homa_msgout_request_resend__huge_values),
		T(homa_msgout_request_resend__merges_overlapping),
		T(homa_msgout_request_resend__separate_ranges),
		T(homa_msgout_request_resend__bridging_range),
		T(homa_msgout_request_resend__slots_overflow),
		T(homa_msgout_request_resend__overflow_below_last),
		T(homa_msgout_restart__from_start),
		T(homa_msgout_restart__keeps_data),
		T(homa_msgout_has_work__new_data),
		T(homa_msgout_has_work__resend_pending),
		T(homa_msgout_has_work__all_sent),
		T(homa_msgout_fully_sent__progress),
		T(homa_msgout_fully_sent__not_with_resend),
		T(homa_msgout_remaining__counts_unsent),
		T(homa_msgout_cache__reuse),
		T(homa_msgout_next_run__limits),
		T(homa_msgout_next_run__resend_single),
		T(homa_msgout_next__up_to_grant),
		T(homa_msgout_next__stops_at_grant_boundary),
		T(homa_msgout_next__continues_after_grant),
		T(homa_msgout_next__grant_inside_sent_packet),
		T(homa_msgout_next__single_short_message),
		T(homa_msgout_next__retransmit_first),
		T(homa_msgout_next__retransmit_reuses_boundaries),
		T(homa_msgout_next__retransmit_beyond_grant_exhausted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
