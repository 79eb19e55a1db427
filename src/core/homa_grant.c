// SPDX-License-Identifier: BSD-2-Clause
/* The receiver's grant policy: see homa_grant.h. */

#include <stdlib.h>

#include "homa_alloc.h"
#include "homa_grant.h"

/* rank_cmp - order candidates by bytes remaining, then age. */
static int rank_cmp(const void *a, const void *b)
{
	const struct homa_grant_cand *x = a, *y = b;
	uint32_t rx = x->length - x->received, ry = y->length - y->received;

	if (rx != ry)
		return rx < ry ? -1 : 1;
	if (x->birth != y->birth)
		return x->birth < y->birth ? -1 : 1;
	return 0;
}

/* Active messages of one peer, while select_active picks them. */
struct peer_tally {
	uint64_t peer;
	uint32_t count;
};

/* tally_find - the entry of peer among t[0..*used), added (count 0) when
 * missing.  select_active chooses a new entry's message at once (count 0
 * is below per_peer), so t never holds more entries than messages were
 * chosen: fewer than max while it looks for more, room enough. */
static struct peer_tally *tally_find(struct peer_tally *t, uint32_t *used,
				     uint64_t peer)
{
	uint32_t i;

	for (i = 0; i < *used; i++)
		if (t[i].peer == peer)
			return &t[i];
	t[i].peer = peer;
	t[i].count = 0;
	(*used)++;
	return &t[i];
}

/* select_active - mark up to max candidates active: in rank order those
 * whose peer has fewer than per_peer active (0 counts as 1), then the
 * rest in rank order.  The active peers are tallied as they are chosen
 * (at most max of them), so that a candidate costs O(max), not O(n).
 * When max exceeds 64 and the tally cannot be allocated, at most 64 are
 * marked.  Returns the count. */
static int select_active(const struct homa_grant_cand *c, int n, bool *active,
			 uint32_t max, uint32_t per_peer)
{
	struct peer_tally tally_buf[64], *tally = tally_buf;
	uint32_t count = 0, used = 0;
	int i;

	if (per_peer == 0)
		per_peer = 1;
	if (max > 64) {
		tally = homa_calloc(HOMA_ALLOC_GRANT, max, sizeof(*tally));
		if (!tally) {
			tally = tally_buf;
			max = 64;
		}
	}
	for (i = 0; i < n && count < max; i++) {
		struct peer_tally *t = tally_find(tally, &used, c[i].peer);

		if (t->count < per_peer) {
			t->count++;
			active[i] = true;
			count++;
		}
	}
	for (i = 0; i < n && count < max; i++) {
		if (!active[i]) {
			active[i] = true;
			count++;
		}
	}
	if (tally != tally_buf)
		homa_free(tally);
	return (int)count;
}

/* sched_priority - priority of the message ranked r among n active. */
static uint8_t sched_priority(const struct homa_grant_params *p, int r, int n)
{
	int top = n - 1;

	if (top > (int)p->max_sched_prio)
		top = (int)p->max_sched_prio;
	return (uint8_t)(r >= top ? 0 : top - r);
}

/* grant_oldest - give the oldest candidate that still needs bytes one fifo
 * increment; returns the bytes granted. */
static uint32_t grant_oldest(const struct homa_grant_params *p,
			     struct homa_grant_cand *c, int n)
{
	struct homa_grant_cand *old = NULL;
	uint32_t base, target;
	int i;

	for (i = 0; i < n; i++) {
		uint32_t g = c[i].send ? c[i].new_grant : c[i].granted;

		if (g < c[i].length && (!old || c[i].birth < old->birth))
			old = &c[i];
	}
	if (!old)
		return 0;
	base = old->send ? old->new_grant : old->granted;
	target = old->length - base < p->fifo_increment ?
		 old->length : base + p->fifo_increment;
	old->new_grant = target;
	old->send = true;
	return target - base;
}

int homa_grant_compute(const struct homa_grant_params *p,
		       struct homa_grant_state *st,
		       struct homa_grant_cand *c, int n,
		       uint64_t outstanding)
{
	bool active_buf[64], *active = active_buf;
	uint64_t granted_now = 0;
	uint32_t window, step;
	int i, r = 0, num_active;

	if (n <= 0)
		return 0;
	if (n > 64)
		active = homa_calloc(HOMA_ALLOC_GRANT, (size_t)n,
				     sizeof(*active));
	if (!active) {
		/* Out of memory: this round grants among the first 64 only
		 * (the others are left as they are). */
		for (i = 64; i < n; i++) {
			c[i].new_grant = c[i].granted;
			c[i].send = false;
		}
		n = 64;
		active = active_buf;
	}
	if (active == active_buf)
		for (i = 0; i < n; i++)
			active[i] = false;
	qsort(c, (size_t)n, sizeof(*c), rank_cmp);
	for (i = 0; i < n; i++) {
		c[i].new_grant = c[i].granted;
		c[i].send = false;
	}
	num_active = select_active(c, n, active, p->max_overcommit,
				   p->max_per_peer);
	window = p->max_incoming / (uint32_t)(num_active + 1);
	/* A grant waits to grow by min_step, but never by more than the
	 * window: a sender that has used up its grant gets the window. */
	step = p->min_step < window ? p->min_step : window;
	for (i = 0; i < n; i++) {
		uint32_t target, add;
		uint8_t prio;

		if (!active[i])
			continue;
		prio = sched_priority(p, r++, num_active);
		target = c[i].length - c[i].received < window ?
			 c[i].length : c[i].received + window;
		if (target > c[i].granted &&
		    (target - c[i].granted >= step ||
		     target == c[i].length)) {
			add = target - c[i].granted;
			if (outstanding + add > p->max_incoming)
				add = outstanding >= p->max_incoming ? 0 :
				      (uint32_t)(p->max_incoming - outstanding);
			c[i].new_grant = c[i].granted + add;
			outstanding += add;
			granted_now += add;
		}
		if (c[i].new_grant > c[i].granted || prio != c[i].priority)
			c[i].send = true;
		c[i].priority = prio;
	}
	if (p->fifo_fraction > 0 && p->fifo_fraction < 1000) {
		uint64_t due = (uint64_t)p->fifo_increment *
			       (1000 - p->fifo_fraction) / p->fifo_fraction;

		st->bytes_since_fifo += granted_now;
		if (st->bytes_since_fifo >= due && grant_oldest(p, c, n) > 0)
			st->bytes_since_fifo = 0;
	}
	if (active != active_buf)
		homa_free(active);
	return num_active;
}
