/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_msgin - libFuzzer target for the reassembly bookkeeping of
 * homa_msgin (homa_msgin_init, homa_msgin_add, homa_msgin_grant,
 * homa_msgin_missing).
 *
 * Input format (all integers little-endian; a short input is read as if
 * padded with zeros, and the operations stop where the input ends):
 *   byte 0      flags: bit 0 = use the length field as is (any u32 but 0,
 *               to reach offsets near 2^32); otherwise length is
 *               1 + field % 1,000,000 (the wire's range)
 *   bytes 1-4   length field
 *   bytes 5-8   incoming (unscheduled bytes)
 *   byte 9      max_gaps as a signed byte (the clamp to 1..64 is tested)
 *   then operations, each an opcode byte and its arguments:
 *     op % 8 == 0  add(offset u32, len u32)            raw range
 *               1  add(offset u16, len u16)            near the start
 *               2  add inside (or just around) gap idx u8, with delta u16
 *                  and len u16 taken modulo the gap's size (+2, +1)
 *               3  add at recv_end + delta u16, len 1 + u16
 *               4  add packet k u16 of segment size 1 + u16 % 9000
 *               5  grant(offset u32)
 *               6  missing(max u8 % 72)
 *               7  add at length - 1 - delta u32 % length, len u16
 *
 * After every operation the invariants of struct homa_msgin are checked:
 * received <= length, recv_end <= length, granted <= length, gaps sorted,
 * non-empty, disjoint (received bytes between them) and inside
 * [0, recv_end), the sum of gap sizes == recv_end - received, num_gaps <=
 * max_gaps <= HOMA_MSGIN_GAPS_CAP.  For lengths up to 2^21 a bitmap model
 * of the received bytes predicts the result of every add (OUT_OF_RANGE,
 * DUPLICATE, NO_GAP_ROOM or NEW, as homa_msgin.h defines them) and is
 * compared with the gaps at the end.  grant and missing are checked
 * against their contracts.  Any violation calls abort().
 *
 * Build and run (from the repository root):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc/core \
 *       fuzz/fuzz_msgin.c src/core/homa_msgin.c -o fuzz_msgin
 *   cp -R fuzz/corpus/msgin /tmp/msgin && ./fuzz_msgin /tmp/msgin
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "homa_msgin.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Largest length the bitmap model follows. */
#define MODEL_MAX_LEN (1u << 21)

/* The model: one bit per byte of the message, set when it has arrived. */
struct model {
	bool on;               /* false when the length is too large */
	uint64_t *bits;
	uint32_t count;        /* bits set */
};

static bool bit_get(const struct model *mo, uint32_t i)
{
	return (mo->bits[i / 64] >> (i % 64)) & 1;
}

/* set_range - set the bits of [start, end). */
static void set_range(struct model *mo, uint32_t start, uint32_t end)
{
	uint32_t i = start;

	while (i < end && i % 64 != 0) {
		mo->bits[i / 64] |= 1ull << (i % 64);
		i++;
	}
	while (end - i >= 64) {
		mo->bits[i / 64] = ~0ull;
		i += 64;
	}
	while (i < end) {
		mo->bits[i / 64] |= 1ull << (i % 64);
		i++;
	}
}

/* any_set - true when a bit of [start, end) is set. */
static bool any_set(const struct model *mo, uint32_t start, uint32_t end)
{
	uint32_t i = start;

	while (i < end && i % 64 != 0)
		if (bit_get(mo, i++))
			return true;
	while (end - i >= 64) {
		if (mo->bits[i / 64] != 0)
			return true;
		i += 64;
	}
	while (i < end)
		if (bit_get(mo, i++))
			return true;
	return false;
}

/* all_set - true when every bit of [start, end) is set. */
static bool all_set(const struct model *mo, uint32_t start, uint32_t end)
{
	uint32_t i = start;

	while (i < end && i % 64 != 0)
		if (!bit_get(mo, i++))
			return false;
	while (end - i >= 64) {
		if (mo->bits[i / 64] != ~0ull)
			return false;
		i += 64;
	}
	while (i < end)
		if (!bit_get(mo, i++))
			return false;
	return true;
}

/* check_invariants - the structural rules of a homa_msgin. */
static void check_invariants(const struct homa_msgin *m)
{
	uint64_t gap_bytes = 0;
	int i;

	check(m->length >= 1);
	check(m->received <= m->length);
	check(m->recv_end <= m->length);
	check(m->received <= m->recv_end);
	check(m->granted <= m->length);
	check(m->max_gaps >= 1 && m->max_gaps <= HOMA_MSGIN_GAPS_CAP);
	check(m->num_gaps <= m->max_gaps);
	for (i = 0; i < m->num_gaps; i++) {
		const struct homa_gap *g = &m->gaps[i];

		check(g->start < g->end);         /* non-empty */
		check(g->end < m->recv_end);      /* received data follows */
		if (i > 0)                        /* sorted, disjoint, apart */
			check(m->gaps[i - 1].end < g->start);
		gap_bytes += g->end - g->start;
	}
	check(gap_bytes == (uint64_t)m->recv_end - m->received);
	check(homa_msgin_complete(m) == (m->received == m->length));
	check(homa_msgin_remaining(m) == m->length - m->received);
}

/* needs_new_gap - whether recording the all-new range [offset, end)
 * creates a gap record: a range beyond recv_end, or one strictly inside a
 * gap. */
static bool needs_new_gap(const struct homa_msgin *m, uint32_t offset,
			  uint32_t end)
{
	int i;

	if (offset >= m->recv_end)
		return offset > m->recv_end;
	for (i = 0; i < m->num_gaps; i++)
		if (offset >= m->gaps[i].start && end <= m->gaps[i].end)
			return offset > m->gaps[i].start &&
			       end < m->gaps[i].end;
	check(0);  /* all-new bytes below recv_end must lie in a gap */
	return false;
}

/* do_add - one homa_msgin_add, checked against the model. */
static void do_add(struct homa_msgin *m, struct model *mo, uint32_t offset,
		   uint32_t len)
{
	struct homa_msgin before = *m;
	enum homa_msgin_result res = homa_msgin_add(m, offset, len);
	bool in_range = len > 0 && offset < before.length &&
			len <= before.length - offset;

	check(res == HOMA_MSGIN_NEW || res == HOMA_MSGIN_DUPLICATE ||
	      res == HOMA_MSGIN_NO_GAP_ROOM || res == HOMA_MSGIN_OUT_OF_RANGE);
	check((res == HOMA_MSGIN_OUT_OF_RANGE) == !in_range);
	if (res != HOMA_MSGIN_NEW) {
		/* Nothing is recorded. */
		check(memcmp(&before, m, sizeof(before)) == 0);
	} else {
		check(m->received == before.received + len);
		check(m->length == before.length &&
		      m->granted == before.granted);
	}
	if (mo->on && in_range) {
		uint32_t end = offset + len;
		bool dup = any_set(mo, offset, end);
		enum homa_msgin_result want = HOMA_MSGIN_NEW;

		if (dup)
			want = HOMA_MSGIN_DUPLICATE;
		else if (needs_new_gap(&before, offset, end) &&
			 before.num_gaps >= before.max_gaps)
			want = HOMA_MSGIN_NO_GAP_ROOM;
		check(res == want);
		if (res == HOMA_MSGIN_NEW) {
			set_range(mo, offset, end);
			mo->count += len;
		}
		check(mo->count == m->received);
	}
	check_invariants(m);
}

/* do_grant - one homa_msgin_grant, checked against its contract. */
static void do_grant(struct homa_msgin *m, uint32_t offset)
{
	uint32_t before = m->granted;
	uint32_t want = offset > m->length ? m->length : offset;
	bool grew = homa_msgin_grant(m, offset);

	check(grew == (want > before));
	check(m->granted == (grew ? want : before));
	check_invariants(m);
}

/* do_missing - homa_msgin_missing returns the gaps in order, then the tail
 * [recv_end, granted) when it is not empty, cut at max. */
static void do_missing(const struct homa_msgin *m, int max)
{
	struct homa_gap out[HOMA_MSGIN_GAPS_CAP + 8];
	int n, want, i;

	memset(out, 0xa5, sizeof(out));
	n = homa_msgin_missing(m, out, max);
	want = m->num_gaps + (m->recv_end < m->granted ? 1 : 0);
	if (want > max)
		want = max;
	check(n == want);
	for (i = 0; i < n; i++) {
		if (i < m->num_gaps) {
			check(out[i].start == m->gaps[i].start &&
			      out[i].end == m->gaps[i].end);
		} else {
			check(out[i].start == m->recv_end &&
			      out[i].end == m->granted);
		}
	}
	/* Nothing is written past what was returned. */
	for (i = n; i < (int)(sizeof(out) / sizeof(out[0])); i++)
		check(out[i].start == 0xa5a5a5a5u && out[i].end == 0xa5a5a5a5u);
}

/* check_model - the received bytes the gaps describe are exactly the
 * model's: [0, recv_end) minus the gaps is set, the rest is clear. */
static void check_model(const struct homa_msgin *m, const struct model *mo)
{
	uint32_t pos = 0;
	int i;

	if (!mo->on)
		return;
	for (i = 0; i < m->num_gaps; i++) {
		check(all_set(mo, pos, m->gaps[i].start));
		check(!any_set(mo, m->gaps[i].start, m->gaps[i].end));
		pos = m->gaps[i].end;
	}
	check(all_set(mo, pos, m->recv_end));
	check(!any_set(mo, m->recv_end, m->length));
}

/* one_op - read and run one operation. */
static void one_op(struct homa_msgin *m, struct model *mo, struct reader *r)
{
	uint8_t op = rd_u8(r);
	uint32_t offset, len;

	switch (op % 8) {
	case 0:
		offset = rd_u32(r);
		len = rd_u32(r);
		break;
	case 1:
		offset = rd_u16(r);
		len = rd_u16(r);
		break;
	case 2:
		if (m->num_gaps > 0) {
			const struct homa_gap *g =
				&m->gaps[rd_u8(r) % m->num_gaps];
			uint64_t glen = g->end - g->start;

			offset = g->start - 1 +
				 (uint32_t)(rd_u16(r) % (glen + 2));
			len = 1 + (uint32_t)(rd_u16(r) % (glen + 1));
			break;
		}
		/* fall through: no gap to aim at */
	case 3:
		offset = m->recv_end + rd_u16(r);
		len = 1u + rd_u16(r);
		break;
	case 4: {
		uint32_t seg = 1u + rd_u16(r) % 9000u;
		uint64_t start = (uint64_t)rd_u16(r) * seg;

		offset = start > UINT32_MAX ? UINT32_MAX : (uint32_t)start;
		len = offset < m->length && seg > m->length - offset ?
		      m->length - offset : seg;
		break;
	}
	case 5:
		do_grant(m, rd_u32(r));
		return;
	case 6:
		do_missing(m, rd_u8(r) % 72);
		return;
	default:
		offset = m->length - 1 - rd_u32(r) % m->length;
		len = rd_u16(r);
		break;
	}
	do_add(m, mo, offset, len);
}

/* LLVMFuzzerTestOneInput - one fuzz input; always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reader r = { data, size };
	struct homa_msgin m;
	struct model mo = { false, NULL, 0 };
	uint32_t length, incoming;
	uint8_t flags;
	int max_gaps, want_gaps;

	flags = rd_u8(&r);
	length = rd_u32(&r);
	incoming = rd_u32(&r);
	max_gaps = (int8_t)rd_u8(&r);
	if (flags & 1)
		length = length ? length : 1;
	else
		length = 1 + length % 1000000u;

	memset(&m, 0x5a, sizeof(m));
	homa_msgin_init(&m, length, incoming, max_gaps);
	want_gaps = max_gaps < 1 ? 1 : max_gaps > HOMA_MSGIN_GAPS_CAP ?
		    HOMA_MSGIN_GAPS_CAP : max_gaps;
	check(m.length == length && m.recv_end == 0 && m.received == 0 &&
	      m.num_gaps == 0 && m.max_gaps == want_gaps);
	check(m.granted == (incoming < length ? incoming : length));
	check_invariants(&m);

	if (length <= MODEL_MAX_LEN) {
		mo.bits = calloc((length + 63) / 64, sizeof(uint64_t));
		check(mo.bits != NULL);
		mo.on = true;
	}
	while (r.left > 0)
		one_op(&m, &mo, &r);
	check_model(&m, &mo);
	free(mo.bits);
	return 0;
}
