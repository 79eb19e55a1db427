/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_pacer - the sender's estimate of its link queue.  Every packet handed
 * to the link adds its transmission time at link_mbps to the time the link
 * will be idle; a throttled packet may go only while that backlog is under
 * max_queue_ns.  It also decides when a throttled packet goes to the oldest
 * message instead of the shortest (fifo_fraction per mille of packets).
 * Pure bookkeeping: the caller passes the time.
 */
#ifndef HOMA_PACER_H
#define HOMA_PACER_H

#include <stdbool.h>
#include <stdint.h>

struct homa_pacer {
	uint64_t link_idle_ns;     /* the estimated queue drains at this time */
	uint64_t link_mbps;        /* >= 1 */
	uint64_t max_queue_ns;
	uint32_t fifo_fraction;    /* per mille */
	uint32_t fifo_credit;      /* per mille accumulated since last fifo */
};

/* homa_pacer_init - an idle link of link_mbps (>= 1) Mbit/s. */
void homa_pacer_init(struct homa_pacer *p, uint64_t link_mbps,
		     uint64_t max_queue_ns, uint32_t fifo_fraction);

/* homa_pacer_can_send - true when the estimated backlog at now is at most
 * max_queue_ns. */
bool homa_pacer_can_send(const struct homa_pacer *p, uint64_t now);

/* homa_pacer_sent - a packet of wire_bytes went to the link at now. */
void homa_pacer_sent(struct homa_pacer *p, uint64_t now, uint32_t wire_bytes);

/* homa_pacer_wake - the earliest time homa_pacer_can_send turns true. */
uint64_t homa_pacer_wake(const struct homa_pacer *p);

/* homa_pacer_fifo_turn - called once per throttled packet: true when this
 * packet should go to the oldest message. */
bool homa_pacer_fifo_turn(struct homa_pacer *p);

#endif /* HOMA_PACER_H */
