// SPDX-License-Identifier: BSD-2-Clause
/* The sender's link-queue estimate: see homa_pacer.h. */

#include "homa_pacer.h"

void homa_pacer_init(struct homa_pacer *p, uint64_t link_mbps,
		     uint64_t max_queue_ns, uint32_t fifo_fraction)
{
	p->link_idle_ns = 0;
	p->link_mbps = link_mbps ? link_mbps : 1;
	p->max_queue_ns = max_queue_ns;
	p->fifo_fraction = fifo_fraction > 1000 ? 1000 : fifo_fraction;
	p->fifo_credit = 0;
}

bool homa_pacer_can_send(const struct homa_pacer *p, uint64_t now)
{
	return p->link_idle_ns <= now + p->max_queue_ns;
}

void homa_pacer_sent(struct homa_pacer *p, uint64_t now, uint32_t wire_bytes)
{
	uint64_t start = p->link_idle_ns > now ? p->link_idle_ns : now;

	/* bits / (Mbit/s) = microseconds; times 1000 for ns. */
	p->link_idle_ns = start + (uint64_t)wire_bytes * 8000 / p->link_mbps;
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
