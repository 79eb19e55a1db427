// SPDX-License-Identifier: BSD-2-Clause
/* The sender's link-queue estimate: see homa_pacer.h. */

#include "homa_pacer.h"

void homa_pacer_init(struct homa_pacer *p, uint64_t link_mbps,
		     uint64_t max_queue_ns, uint32_t fifo_fraction,
		     uint64_t min_bytes)
{
	p->link_idle_ns = 0;
	p->idle_rem = 0;
	p->link_mbps = link_mbps ? link_mbps : 1;
	p->max_queue_ns = max_queue_ns;
	p->fifo_fraction = fifo_fraction > 1000 ? 1000 : fifo_fraction;
	p->fifo_credit = 0;
	p->min_bytes = min_bytes;
}

bool homa_pacer_can_send(const struct homa_pacer *p, uint64_t now)
{
	return p->link_idle_ns <= now + p->max_queue_ns;
}

void homa_pacer_sent(struct homa_pacer *p, uint64_t now, uint32_t wire_bytes)
{
	uint64_t start = p->link_idle_ns, units;

	if (start < now) {
		start = now;
		p->idle_rem = 0;
	}
	/* bits / (Mbit/s) = microseconds; times 1000 for ns.  The fraction
	 * of a ns carries over, so that back-to-back packets never add up
	 * to less time than the link takes. */
	units = (uint64_t)wire_bytes * 8000 + p->idle_rem;
	p->link_idle_ns = start + units / p->link_mbps;
	p->idle_rem = units % p->link_mbps;
}

uint64_t homa_pacer_wake(const struct homa_pacer *p)
{
	return p->link_idle_ns > p->max_queue_ns ?
	       p->link_idle_ns - p->max_queue_ns : 0;
}

bool homa_pacer_fifo_turn(struct homa_pacer *p)
{
	if (p->fifo_fraction == 0)
		return false;
	p->fifo_credit += p->fifo_fraction;
	if (p->fifo_credit < 1000)
		return false;
	p->fifo_credit -= 1000;
	return true;
}

bool homa_pacer_bypass(const struct homa_pacer *p,
		       const struct homa_pacer_cand *c)
{
	return c->exempt || c->length < p->min_bytes;
}

void homa_pacer_choice_start(struct homa_pacer *p, uint64_t now,
			     bool throttle, struct homa_pacer_choice *ch)
{
	ch->pacer = p;
	ch->link_free = !throttle || homa_pacer_can_send(p, now);
	ch->oldest = ch->link_free && homa_pacer_fifo_turn(p);
	ch->offered = false;
	ch->chosen = false;
}

/* better - true when a should go before b under ch's rule. */
static bool better(const struct homa_pacer_choice *ch,
		   const struct homa_pacer_cand *a,
		   const struct homa_pacer_cand *b)
{
	if (ch->oldest)
		return a->birth < b->birth;
	return a->remaining < b->remaining;
}

bool homa_pacer_choice_offer(struct homa_pacer_choice *ch,
			     const struct homa_pacer_cand *c)
{
	ch->offered = true;
	if (!ch->link_free && !homa_pacer_bypass(ch->pacer, c))
		return false;
	if (ch->chosen && !better(ch, c, &ch->best))
		return false;
	ch->best = *c;
	ch->chosen = true;
	return true;
}

bool homa_pacer_choice_blocked(const struct homa_pacer_choice *ch)
{
	return ch->offered && !ch->chosen;
}
