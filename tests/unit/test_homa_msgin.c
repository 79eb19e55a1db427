/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of homa_msgin (src/core/homa_msgin.c and the inline helpers of
 * homa_msgin.h), in code order, named <function>__<case>.
 *
 * Build: cc -std=c11 -Iinclude -Isrc/core src/core/homa_msgin.c \
 *        tests/unit/test_homa_msgin.c -lcmocka
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "homa_msgin.h"

/* assert_gap - gap i of m is [start, end). */
static void assert_gap(const struct homa_msgin *m, int i, uint32_t start,
		       uint32_t end)
{
	assert_true(i < m->num_gaps);
	assert_int_equal(m->gaps[i].start, start);
	assert_int_equal(m->gaps[i].end, end);
}

/* add_new - add [offset, offset + len) and insist it is new. */
static void add_new(struct homa_msgin *m, uint32_t offset, uint32_t len)
{
	assert_int_equal(homa_msgin_add(m, offset, len), HOMA_MSGIN_NEW);
}

/*
 * with_gap - a 10000-byte message (all granted) where [0, 1000) and
 * [3000, 4000) arrived: one gap [1000, 3000), recv_end 4000.
 */
static void with_gap(struct homa_msgin *m, int max_gaps)
{
	homa_msgin_init(m, 10000, 10000, max_gaps);
	add_new(m, 0, 1000);
	add_new(m, 3000, 1000);
	assert_int_equal(m->num_gaps, 1);
	assert_gap(m, 0, 1000, 3000);
	assert_int_equal(m->recv_end, 4000);
	assert_int_equal(m->received, 2000);
}

/* ---- homa_msgin_init ---- */

static void homa_msgin_init__basic(void **state)
{
	struct homa_msgin m;

	(void)state;
	memset(&m, 0xa5, sizeof(m));
	homa_msgin_init(&m, 5000, 3000, 8);
	assert_int_equal(m.length, 5000);
	assert_int_equal(m.granted, 3000);
	assert_int_equal(m.recv_end, 0);
	assert_int_equal(m.received, 0);
	assert_int_equal(m.num_gaps, 0);
	assert_int_equal(m.max_gaps, 8);
}

static void homa_msgin_init__incoming_clamped_to_length(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 1000, 40000, 8);
	assert_int_equal(m.granted, 1000);
	homa_msgin_init(&m, 1000, 1000, 8);
	assert_int_equal(m.granted, 1000);
	homa_msgin_init(&m, 1000, UINT32_MAX, 8);
	assert_int_equal(m.granted, 1000);
}

static void homa_msgin_init__incoming_zero(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 1000, 0, 8);
	assert_int_equal(m.granted, 0);
}

static void homa_msgin_init__max_gaps_clamped(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 1000, 1000, 0);
	assert_int_equal(m.max_gaps, 1);
	homa_msgin_init(&m, 1000, 1000, -5);
	assert_int_equal(m.max_gaps, 1);
	homa_msgin_init(&m, 1000, 1000, 1);
	assert_int_equal(m.max_gaps, 1);
	homa_msgin_init(&m, 1000, 1000, HOMA_MSGIN_GAPS_CAP);
	assert_int_equal(m.max_gaps, HOMA_MSGIN_GAPS_CAP);
	homa_msgin_init(&m, 1000, 1000, HOMA_MSGIN_GAPS_CAP + 1);
	assert_int_equal(m.max_gaps, HOMA_MSGIN_GAPS_CAP);
	homa_msgin_init(&m, 1000, 1000, 1000000);
	assert_int_equal(m.max_gaps, HOMA_MSGIN_GAPS_CAP);
}

static void homa_msgin_init__resets_previous_state(void **state)
{
	struct homa_msgin m;

	(void)state;
	with_gap(&m, 4);
	homa_msgin_init(&m, 2000, 500, 4);
	assert_int_equal(m.num_gaps, 0);
	assert_int_equal(m.recv_end, 0);
	assert_int_equal(m.received, 0);
	assert_int_equal(m.length, 2000);
	assert_int_equal(m.granted, 500);
}

/* ---- homa_msgin_add ---- */

static void homa_msgin_add__in_order(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 3000, 3000, 4);
	add_new(&m, 0, 1424);
	assert_int_equal(m.recv_end, 1424);
	assert_int_equal(m.received, 1424);
	add_new(&m, 1424, 1424);
	assert_int_equal(m.recv_end, 2848);
	add_new(&m, 2848, 152);
	assert_int_equal(m.recv_end, 3000);
	assert_int_equal(m.received, 3000);
	assert_int_equal(m.num_gaps, 0);
}

static void homa_msgin_add__out_of_order_creates_gap(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 10000, 10000, 4);
	add_new(&m, 2000, 1000);
	assert_int_equal(m.num_gaps, 1);
	assert_gap(&m, 0, 0, 2000);
	assert_int_equal(m.recv_end, 3000);
	assert_int_equal(m.received, 1000);
}

static void homa_msgin_add__several_gaps_in_order(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 10000, 10000, 4);
	add_new(&m, 1000, 1000);
	add_new(&m, 3000, 1000);
	add_new(&m, 6000, 1000);
	assert_int_equal(m.num_gaps, 3);
	assert_gap(&m, 0, 0, 1000);
	assert_gap(&m, 1, 2000, 3000);
	assert_gap(&m, 2, 4000, 6000);
	assert_int_equal(m.recv_end, 7000);
	assert_int_equal(m.received, 3000);
}

static void homa_msgin_add__fills_gap_exactly(void **state)
{
	struct homa_msgin m;

	(void)state;
	with_gap(&m, 4);
	add_new(&m, 1000, 2000);
	assert_int_equal(m.num_gaps, 0);
	assert_int_equal(m.received, 4000);
	assert_int_equal(m.recv_end, 4000);
}

static void homa_msgin_add__fills_middle_gap_exactly(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 10000, 10000, 4);
	add_new(&m, 1000, 1000);
	add_new(&m, 3000, 1000);
	add_new(&m, 6000, 1000);
	add_new(&m, 2000, 1000);
	assert_int_equal(m.num_gaps, 2);
	assert_gap(&m, 0, 0, 1000);
	assert_gap(&m, 1, 4000, 6000);
	assert_int_equal(m.received, 4000);
}

static void homa_msgin_add__fills_gap_head(void **state)
{
	struct homa_msgin m;

	(void)state;
	with_gap(&m, 4);
	add_new(&m, 1000, 500);
	assert_int_equal(m.num_gaps, 1);
	assert_gap(&m, 0, 1500, 3000);
	assert_int_equal(m.received, 2500);
}

static void homa_msgin_add__fills_gap_tail(void **state)
{
	struct homa_msgin m;

	(void)state;
	with_gap(&m, 4);
	add_new(&m, 2500, 500);
	assert_int_equal(m.num_gaps, 1);
	assert_gap(&m, 0, 1000, 2500);
	assert_int_equal(m.received, 2500);
}

static void homa_msgin_add__fills_gap_middle_splits(void **state)
{
	struct homa_msgin m;

	(void)state;
	with_gap(&m, 4);
	add_new(&m, 1500, 500);
	assert_int_equal(m.num_gaps, 2);
	assert_gap(&m, 0, 1000, 1500);
	assert_gap(&m, 1, 2000, 3000);
	assert_int_equal(m.received, 2500);
	assert_int_equal(m.recv_end, 4000);
}

static void homa_msgin_add__split_keeps_later_gaps_in_order(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 10000, 10000, 4);
	add_new(&m, 1000, 1000);          /* gap [0, 1000) */
	add_new(&m, 3000, 1000);          /* gap [2000, 3000) */
	add_new(&m, 400, 200);            /* split the first */
	assert_int_equal(m.num_gaps, 3);
	assert_gap(&m, 0, 0, 400);
	assert_gap(&m, 1, 600, 1000);
	assert_gap(&m, 2, 2000, 3000);
	assert_int_equal(m.received, 2200);
}

static void homa_msgin_add__gap_filled_piece_by_piece(void **state)
{
	struct homa_msgin m;

	(void)state;
	with_gap(&m, 4);
	add_new(&m, 2000, 500);   /* split: [1000,2000) [2500,3000) */
	add_new(&m, 1000, 1000);  /* first gap exactly */
	add_new(&m, 2500, 500);   /* second gap exactly */
	assert_int_equal(m.num_gaps, 0);
	assert_int_equal(m.received, 4000);
	add_new(&m, 4000, 6000);
	assert_true(homa_msgin_complete(&m));
}

static void homa_msgin_add__partial_overlap_gap_start(void **state)
{
	struct homa_msgin m;

	(void)state;
	with_gap(&m, 4);
	/* Begins in received data [0, 1000), ends in the gap. */
	assert_int_equal(homa_msgin_add(&m, 500, 1000), HOMA_MSGIN_DUPLICATE);
	assert_int_equal(m.num_gaps, 1);
	assert_gap(&m, 0, 1000, 3000);
	assert_int_equal(m.received, 2000);
}

static void homa_msgin_add__partial_overlap_gap_end(void **state)
{
	struct homa_msgin m;

	(void)state;
	with_gap(&m, 4);
	/* Begins in the gap, ends in received data [3000, 4000). */
	assert_int_equal(homa_msgin_add(&m, 2500, 1000), HOMA_MSGIN_DUPLICATE);
	assert_gap(&m, 0, 1000, 3000);
	assert_int_equal(m.received, 2000);
}

static void homa_msgin_add__covers_whole_gap_and_more(void **state)
{
	struct homa_msgin m;

	(void)state;
	with_gap(&m, 4);
	assert_int_equal(homa_msgin_add(&m, 500, 3000), HOMA_MSGIN_DUPLICATE);
	assert_gap(&m, 0, 1000, 3000);
	assert_int_equal(m.received, 2000);
}

static void homa_msgin_add__spans_two_gaps(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 10000, 10000, 4);
	add_new(&m, 1000, 1000);
	add_new(&m, 3000, 1000);          /* gaps [0,1000) [2000,3000) */
	assert_int_equal(homa_msgin_add(&m, 500, 2000), HOMA_MSGIN_DUPLICATE);
	assert_int_equal(m.num_gaps, 2);
	assert_gap(&m, 0, 0, 1000);
	assert_gap(&m, 1, 2000, 3000);
	assert_int_equal(m.received, 2000);
}

static void homa_msgin_add__inside_received_data(void **state)
{
	struct homa_msgin m;

	(void)state;
	with_gap(&m, 4);
	assert_int_equal(homa_msgin_add(&m, 0, 1000), HOMA_MSGIN_DUPLICATE);
	assert_int_equal(homa_msgin_add(&m, 200, 100), HOMA_MSGIN_DUPLICATE);
	assert_int_equal(homa_msgin_add(&m, 3000, 1000), HOMA_MSGIN_DUPLICATE);
	assert_int_equal(homa_msgin_add(&m, 3999, 1), HOMA_MSGIN_DUPLICATE);
	assert_int_equal(m.received, 2000);
	assert_int_equal(m.recv_end, 4000);
	assert_int_equal(m.num_gaps, 1);
}

static void homa_msgin_add__straddles_recv_end(void **state)
{
	struct homa_msgin m;

	(void)state;
	with_gap(&m, 4);
	/* [3500, 4500): half received, half new - still a duplicate. */
	assert_int_equal(homa_msgin_add(&m, 3500, 1000), HOMA_MSGIN_DUPLICATE);
	assert_int_equal(m.recv_end, 4000);
	assert_int_equal(m.received, 2000);
}

static void homa_msgin_add__duplicate_without_gaps(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 3000, 3000, 4);
	add_new(&m, 0, 1000);
	assert_int_equal(homa_msgin_add(&m, 0, 1000), HOMA_MSGIN_DUPLICATE);
	assert_int_equal(homa_msgin_add(&m, 500, 1000), HOMA_MSGIN_DUPLICATE);
	assert_int_equal(m.received, 1000);
	assert_int_equal(m.recv_end, 1000);
}

static void homa_msgin_add__no_gap_room_new_gap(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 10000, 10000, 2);
	add_new(&m, 1000, 1000);          /* gap 1 */
	add_new(&m, 3000, 1000);          /* gap 2 */
	assert_int_equal(homa_msgin_add(&m, 5000, 1000),
			 HOMA_MSGIN_NO_GAP_ROOM);
	assert_int_equal(m.num_gaps, 2);
	assert_int_equal(m.recv_end, 4000);
	assert_int_equal(m.received, 2000);
	/* In-order data still fits: it needs no new gap. */
	add_new(&m, 4000, 1000);
	assert_int_equal(m.recv_end, 5000);
	/* Filling a gap exactly frees a record for the next one. */
	add_new(&m, 0, 1000);
	add_new(&m, 6000, 1000);
	assert_int_equal(m.num_gaps, 2);
	assert_gap(&m, 0, 2000, 3000);
	assert_gap(&m, 1, 5000, 6000);
}

static void homa_msgin_add__no_gap_room_split(void **state)
{
	struct homa_msgin m;

	(void)state;
	with_gap(&m, 1);
	assert_int_equal(homa_msgin_add(&m, 1500, 500),
			 HOMA_MSGIN_NO_GAP_ROOM);
	assert_int_equal(m.num_gaps, 1);
	assert_gap(&m, 0, 1000, 3000);
	assert_int_equal(m.received, 2000);
	/* Head and tail fills need no extra record. */
	add_new(&m, 1000, 500);
	add_new(&m, 2500, 500);
	assert_gap(&m, 0, 1500, 2500);
	assert_int_equal(m.received, 3000);
}

static void homa_msgin_add__max_gaps_cap(void **state)
{
	struct homa_msgin m;
	uint32_t i;

	(void)state;
	homa_msgin_init(&m, 1000000, 1000000, HOMA_MSGIN_GAPS_CAP);
	for (i = 0; i < HOMA_MSGIN_GAPS_CAP; i++)
		add_new(&m, i * 200 + 100, 100);
	assert_int_equal(m.num_gaps, HOMA_MSGIN_GAPS_CAP);
	assert_int_equal(homa_msgin_add(&m, 200000, 100),
			 HOMA_MSGIN_NO_GAP_ROOM);
	assert_int_equal(homa_msgin_add(&m, 20, 10), HOMA_MSGIN_NO_GAP_ROOM);
	for (i = 0; i < HOMA_MSGIN_GAPS_CAP; i++)
		assert_gap(&m, (int)i, i * 200, i * 200 + 100);
}

static void homa_msgin_add__offset_at_or_past_length(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 1000, 1000, 4);
	assert_int_equal(homa_msgin_add(&m, 1000, 1), HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(homa_msgin_add(&m, 1001, 1), HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(homa_msgin_add(&m, 5000, 100),
			 HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(m.received, 0);
	assert_int_equal(m.recv_end, 0);
	assert_int_equal(m.num_gaps, 0);
}

static void homa_msgin_add__len_past_end(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 1000, 1000, 4);
	assert_int_equal(homa_msgin_add(&m, 0, 1001), HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(homa_msgin_add(&m, 999, 2), HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(homa_msgin_add(&m, 500, 501), HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(m.received, 0);
	/* Exactly to the end is fine. */
	add_new(&m, 999, 1);
	assert_int_equal(m.recv_end, 1000);
	assert_int_equal(m.num_gaps, 1);
	assert_gap(&m, 0, 0, 999);
}

static void homa_msgin_add__len_zero(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 1000, 1000, 4);
	assert_int_equal(homa_msgin_add(&m, 0, 0), HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(homa_msgin_add(&m, 500, 0), HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(m.recv_end, 0);
	assert_int_equal(m.num_gaps, 0);
}

static void homa_msgin_add__overflow_values(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 1000, 1000, 4);
	/* offset + len would wrap to a small number inside the message. */
	assert_int_equal(homa_msgin_add(&m, 100, UINT32_MAX),
			 HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(homa_msgin_add(&m, 100, UINT32_MAX - 99),
			 HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(homa_msgin_add(&m, UINT32_MAX, 1),
			 HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(homa_msgin_add(&m, UINT32_MAX - 10, 20),
			 HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(homa_msgin_add(&m, UINT32_MAX, UINT32_MAX),
			 HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(homa_msgin_add(&m, 0, UINT32_MAX),
			 HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(m.received, 0);
	assert_int_equal(m.recv_end, 0);
	assert_int_equal(m.num_gaps, 0);
}

static void homa_msgin_add__max_length_message(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, UINT32_MAX, UINT32_MAX, 4);
	add_new(&m, UINT32_MAX - 1, 1);
	assert_int_equal(m.recv_end, UINT32_MAX);
	assert_gap(&m, 0, 0, UINT32_MAX - 1);
	assert_int_equal(homa_msgin_add(&m, UINT32_MAX - 1, 2),
			 HOMA_MSGIN_OUT_OF_RANGE);
}

/* ---- homa_msgin_complete / homa_msgin_remaining ---- */

static void homa_msgin_complete__in_order(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 2000, 2000, 4);
	assert_false(homa_msgin_complete(&m));
	assert_int_equal(homa_msgin_remaining(&m), 2000);
	add_new(&m, 0, 1500);
	assert_false(homa_msgin_complete(&m));
	assert_int_equal(homa_msgin_remaining(&m), 500);
	add_new(&m, 1500, 500);
	assert_true(homa_msgin_complete(&m));
	assert_int_equal(homa_msgin_remaining(&m), 0);
}

static void homa_msgin_complete__not_while_gap(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 3000, 3000, 4);
	add_new(&m, 1000, 2000);
	assert_int_equal(m.recv_end, 3000);
	assert_false(homa_msgin_complete(&m));
	assert_int_equal(homa_msgin_remaining(&m), 1000);
	add_new(&m, 0, 1000);
	assert_true(homa_msgin_complete(&m));
	assert_int_equal(homa_msgin_remaining(&m), 0);
}

static void homa_msgin_complete__one_byte_message(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 1, 40000, 4);
	assert_int_equal(m.granted, 1);
	assert_false(homa_msgin_complete(&m));
	add_new(&m, 0, 1);
	assert_true(homa_msgin_complete(&m));
}

static void homa_msgin_remaining__duplicates_not_counted(void **state)
{
	struct homa_msgin m;

	(void)state;
	with_gap(&m, 4);
	assert_int_equal(homa_msgin_remaining(&m), 8000);
	assert_int_equal(homa_msgin_add(&m, 0, 1000), HOMA_MSGIN_DUPLICATE);
	assert_int_equal(homa_msgin_add(&m, 20000, 10),
			 HOMA_MSGIN_OUT_OF_RANGE);
	assert_int_equal(homa_msgin_remaining(&m), 8000);
}

/* ---- homa_msgin_grant ---- */

static void homa_msgin_grant__grows(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 100000, 40000, 4);
	assert_true(homa_msgin_grant(&m, 50000));
	assert_int_equal(m.granted, 50000);
	assert_true(homa_msgin_grant(&m, 50001));
	assert_int_equal(m.granted, 50001);
}

static void homa_msgin_grant__clamped_to_length(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 100000, 40000, 4);
	assert_true(homa_msgin_grant(&m, 200000));
	assert_int_equal(m.granted, 100000);
	assert_false(homa_msgin_grant(&m, 300000));
	assert_false(homa_msgin_grant(&m, UINT32_MAX));
	assert_int_equal(m.granted, 100000);
}

static void homa_msgin_grant__not_above(void **state)
{
	struct homa_msgin m;

	(void)state;
	homa_msgin_init(&m, 100000, 40000, 4);
	assert_false(homa_msgin_grant(&m, 40000));
	assert_false(homa_msgin_grant(&m, 10000));
	assert_false(homa_msgin_grant(&m, 0));
	assert_int_equal(m.granted, 40000);
}

/* ---- homa_msgin_missing ---- */

static void homa_msgin_missing__nothing_missing(void **state)
{
	struct homa_msgin m;
	struct homa_gap out[4];

	(void)state;
	homa_msgin_init(&m, 5000, 2000, 4);
	add_new(&m, 0, 2000);
	assert_int_equal(homa_msgin_missing(&m, out, 4), 0);
	add_new(&m, 2000, 3000);      /* beyond the grant, still accepted */
	assert_int_equal(homa_msgin_missing(&m, out, 4), 0);
}

static void homa_msgin_missing__nothing_arrived(void **state)
{
	struct homa_msgin m;
	struct homa_gap out[4];

	(void)state;
	homa_msgin_init(&m, 100000, 40000, 4);
	assert_int_equal(homa_msgin_missing(&m, out, 4), 1);
	assert_int_equal(out[0].start, 0);
	assert_int_equal(out[0].end, 40000);
}

static void homa_msgin_missing__gaps_then_tail(void **state)
{
	struct homa_msgin m;
	struct homa_gap out[8];

	(void)state;
	homa_msgin_init(&m, 100000, 40000, 8);
	add_new(&m, 1000, 1000);
	add_new(&m, 3000, 1000);      /* gaps [0,1000) [2000,3000) */
	assert_true(homa_msgin_grant(&m, 60000));
	assert_int_equal(homa_msgin_missing(&m, out, 8), 3);
	assert_int_equal(out[0].start, 0);
	assert_int_equal(out[0].end, 1000);
	assert_int_equal(out[1].start, 2000);
	assert_int_equal(out[1].end, 3000);
	assert_int_equal(out[2].start, 4000);
	assert_int_equal(out[2].end, 60000);
}

static void homa_msgin_missing__no_tail_when_all_granted_arrived(void **state)
{
	struct homa_msgin m;
	struct homa_gap out[8];

	(void)state;
	homa_msgin_init(&m, 100000, 4000, 8);
	add_new(&m, 3000, 1000);      /* gap [0, 3000), recv_end == granted */
	assert_int_equal(homa_msgin_missing(&m, out, 8), 1);
	assert_int_equal(out[0].start, 0);
	assert_int_equal(out[0].end, 3000);
}

static void homa_msgin_missing__max_respected(void **state)
{
	struct homa_msgin m;
	struct homa_gap out[4];

	(void)state;
	homa_msgin_init(&m, 100000, 40000, 8);
	add_new(&m, 1000, 1000);
	add_new(&m, 3000, 1000);
	add_new(&m, 5000, 1000);      /* 3 gaps + tail [6000, 40000) */
	memset(out, 0xee, sizeof(out));
	assert_int_equal(homa_msgin_missing(&m, out, 2), 2);
	assert_int_equal(out[0].start, 0);
	assert_int_equal(out[1].start, 2000);
	assert_int_equal(out[2].start, 0xeeeeeeeeu);  /* untouched */
	assert_int_equal(homa_msgin_missing(&m, out, 3), 3);
	assert_int_equal(out[2].start, 4000);
	assert_int_equal(out[2].end, 5000);
	assert_int_equal(out[3].start, 0xeeeeeeeeu);
	assert_int_equal(homa_msgin_missing(&m, out, 4), 4);
	assert_int_equal(out[3].start, 6000);
	assert_int_equal(out[3].end, 40000);
}

static void homa_msgin_missing__max_zero(void **state)
{
	struct homa_msgin m;
	struct homa_gap out[1];

	(void)state;
	homa_msgin_init(&m, 100000, 40000, 8);
	add_new(&m, 1000, 1000);
	memset(out, 0xee, sizeof(out));
	assert_int_equal(homa_msgin_missing(&m, out, 0), 0);
	assert_int_equal(out[0].start, 0xeeeeeeeeu);
}

static void homa_msgin_missing__tail_only_after_grant(void **state)
{
	struct homa_msgin m;
	struct homa_gap out[2];

	(void)state;
	homa_msgin_init(&m, 100000, 40000, 8);
	add_new(&m, 0, 40000);
	assert_int_equal(homa_msgin_missing(&m, out, 2), 0);
	assert_true(homa_msgin_grant(&m, 50000));
	assert_int_equal(homa_msgin_missing(&m, out, 2), 1);
	assert_int_equal(out[0].start, 40000);
	assert_int_equal(out[0].end, 50000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_msgin_init__basic),
		cmocka_unit_test(homa_msgin_init__incoming_clamped_to_length),
		cmocka_unit_test(homa_msgin_init__incoming_zero),
		cmocka_unit_test(homa_msgin_init__max_gaps_clamped),
		cmocka_unit_test(homa_msgin_init__resets_previous_state),
		cmocka_unit_test(homa_msgin_add__in_order),
		cmocka_unit_test(homa_msgin_add__out_of_order_creates_gap),
		cmocka_unit_test(homa_msgin_add__several_gaps_in_order),
		cmocka_unit_test(homa_msgin_add__fills_gap_exactly),
		cmocka_unit_test(homa_msgin_add__fills_middle_gap_exactly),
		cmocka_unit_test(homa_msgin_add__fills_gap_head),
		cmocka_unit_test(homa_msgin_add__fills_gap_tail),
		cmocka_unit_test(homa_msgin_add__fills_gap_middle_splits),
		cmocka_unit_test(
			homa_msgin_add__split_keeps_later_gaps_in_order),
		cmocka_unit_test(homa_msgin_add__gap_filled_piece_by_piece),
		cmocka_unit_test(homa_msgin_add__partial_overlap_gap_start),
		cmocka_unit_test(homa_msgin_add__partial_overlap_gap_end),
		cmocka_unit_test(homa_msgin_add__covers_whole_gap_and_more),
		cmocka_unit_test(homa_msgin_add__spans_two_gaps),
		cmocka_unit_test(homa_msgin_add__inside_received_data),
		cmocka_unit_test(homa_msgin_add__straddles_recv_end),
		cmocka_unit_test(homa_msgin_add__duplicate_without_gaps),
		cmocka_unit_test(homa_msgin_add__no_gap_room_new_gap),
		cmocka_unit_test(homa_msgin_add__no_gap_room_split),
		cmocka_unit_test(homa_msgin_add__max_gaps_cap),
		cmocka_unit_test(homa_msgin_add__offset_at_or_past_length),
		cmocka_unit_test(homa_msgin_add__len_past_end),
		cmocka_unit_test(homa_msgin_add__len_zero),
		cmocka_unit_test(homa_msgin_add__overflow_values),
		cmocka_unit_test(homa_msgin_add__max_length_message),
		cmocka_unit_test(homa_msgin_complete__in_order),
		cmocka_unit_test(homa_msgin_complete__not_while_gap),
		cmocka_unit_test(homa_msgin_complete__one_byte_message),
		cmocka_unit_test(homa_msgin_remaining__duplicates_not_counted),
		cmocka_unit_test(homa_msgin_grant__grows),
		cmocka_unit_test(homa_msgin_grant__clamped_to_length),
		cmocka_unit_test(homa_msgin_grant__not_above),
		cmocka_unit_test(homa_msgin_missing__nothing_missing),
		cmocka_unit_test(homa_msgin_missing__nothing_arrived),
		cmocka_unit_test(homa_msgin_missing__gaps_then_tail),
		cmocka_unit_test(
			homa_msgin_missing__no_tail_when_all_granted_arrived),
		cmocka_unit_test(homa_msgin_missing__max_respected),
		cmocka_unit_test(homa_msgin_missing__max_zero),
		cmocka_unit_test(homa_msgin_missing__tail_only_after_grant),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
