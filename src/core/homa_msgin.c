// SPDX-License-Identifier: BSD-2-Clause
/* Reassembly bookkeeping of incoming messages: see homa_msgin.h. */

#include <string.h>

#include "homa_msgin.h"

void homa_msgin_init(struct homa_msgin *m, uint32_t length, uint32_t incoming,
		     int max_gaps)
{
	memset(m, 0, sizeof(*m));
	m->length = length;
	m->granted = incoming < length ? incoming : length;
	if (max_gaps < 1)
		max_gaps = 1;
	if (max_gaps > HOMA_MSGIN_GAPS_CAP)
		max_gaps = HOMA_MSGIN_GAPS_CAP;
	m->max_gaps = (uint16_t)max_gaps;
}

/* remove_gap - delete gap i, keeping the others in order. */
static void remove_gap(struct homa_msgin *m, int i)
{
	memmove(&m->gaps[i], &m->gaps[i + 1],
		(size_t)(m->num_gaps - i - 1) * sizeof(m->gaps[0]));
	m->num_gaps--;
}

/* fill_gap - record [start, end) arriving inside gap i (the caller checked
 * containment).  Returns NEW, or NO_GAP_ROOM when a split needs a record
 * that is not available. */
static enum homa_msgin_result fill_gap(struct homa_msgin *m, int i,
				       uint32_t start, uint32_t end)
{
	struct homa_gap *g = &m->gaps[i];

	if (start == g->start && end == g->end) {
		remove_gap(m, i);
	} else if (start == g->start) {
		g->start = end;
	} else if (end == g->end) {
		g->end = start;
	} else {
		if (m->num_gaps >= m->max_gaps)
			return HOMA_MSGIN_NO_GAP_ROOM;
		memmove(&m->gaps[i + 1], &m->gaps[i],
			(size_t)(m->num_gaps - i) * sizeof(m->gaps[0]));
		m->num_gaps++;
		m->gaps[i].end = start;
		m->gaps[i + 1].start = end;
	}
	return HOMA_MSGIN_NEW;
}

enum homa_msgin_result homa_msgin_add(struct homa_msgin *m, uint32_t offset,
				      uint32_t len)
{
	uint32_t end;
	int i;

	if (len == 0 || offset >= m->length || len > m->length - offset)
		return HOMA_MSGIN_OUT_OF_RANGE;
	end = offset + len;
	if (offset >= m->recv_end) {
		if (offset > m->recv_end) {
			if (m->num_gaps >= m->max_gaps)
				return HOMA_MSGIN_NO_GAP_ROOM;
			m->gaps[m->num_gaps].start = m->recv_end;
			m->gaps[m->num_gaps].end = offset;
			m->num_gaps++;
		}
		m->recv_end = end;
		m->received += len;
		return HOMA_MSGIN_NEW;
	}
	for (i = 0; i < m->num_gaps; i++) {
		const struct homa_gap *g = &m->gaps[i];

		if (offset >= g->end)
			continue;
		if (offset < g->start || end > g->end)
			return HOMA_MSGIN_DUPLICATE;
		if (fill_gap(m, i, offset, end) != HOMA_MSGIN_NEW)
			return HOMA_MSGIN_NO_GAP_ROOM;
		m->received += len;
		return HOMA_MSGIN_NEW;
	}
	return HOMA_MSGIN_DUPLICATE;
}

bool homa_msgin_grant(struct homa_msgin *m, uint32_t offset)
{
	if (offset > m->length)
		offset = m->length;
	if (offset <= m->granted)
		return false;
	m->granted = offset;
	return true;
}

int homa_msgin_missing(const struct homa_msgin *m, struct homa_gap *out,
		       int max)
{
	int n = 0, i;

	for (i = 0; i < m->num_gaps && n < max; i++)
		out[n++] = m->gaps[i];
	if (n < max && m->recv_end < m->granted) {
		out[n].start = m->recv_end;
		out[n].end = m->granted;
		n++;
	}
	return n;
}
