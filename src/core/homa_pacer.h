/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_pacer - the sender's estimate of its link queue.  Every packet handed
 * to the link adds its transmission time at link_mbps to the time the link
 * will be idle; a throttled packet may go only while that backlog is under
 * max_queue_ns.  It also chooses which message's packet goes next
 * (homa_pacer_choice_*): the shortest remaining first, fifo_fraction per
 * mille of paced packets to the oldest instead, and while the link is
 * busy only messages that bypass the pacer (under min_bytes, or exempt).
 * Pure bookkeeping: the caller passes the time and the candidates.
 */
#ifndef HOMA_PACER_H
#define HOMA_PACER_H

#include <stdbool.h>
#include <stdint.h>

struct homa_pacer {
	uint64_t link_idle_ns;     /* the estimated queue drains at this time */
	uint64_t idle_rem;         /* and this many ns / link_mbps later */
	uint64_t link_mbps;        /* >= 1 */
	uint64_t max_queue_ns;
	uint32_t fifo_fraction;    /* per mille */
	uint32_t fifo_credit;      /* per mille accumulated since last fifo */
	uint64_t min_bytes;        /* shorter messages bypass the pacer */
};

/* A message with bytes to send, as the choice of the next packet sees it. */
struct homa_pacer_cand {
	uint64_t length;           /* message length */
	uint64_t remaining;        /* bytes still to send */
	uint64_t birth;            /* smaller = older */
	bool exempt;               /* bypasses the pacer whatever its length
				    * (a loopback peer, no NIC queue) */
};

/* One choice in progress (homa_pacer_choice_start fills it). */
struct homa_pacer_choice {
	const struct homa_pacer *pacer;
	bool link_free;            /* any message may go */
	bool oldest;               /* this packet goes to the oldest */
	bool offered;              /* some candidate was offered */
	bool chosen;               /* best holds the choice */
	struct homa_pacer_cand best;
};

/* homa_pacer_init - an idle link of link_mbps (>= 1; 0 counts as 1)
 * Mbit/s; messages shorter than min_bytes bypass the pacer. */
void homa_pacer_init(struct homa_pacer *p, uint64_t link_mbps,
		     uint64_t max_queue_ns, uint32_t fifo_fraction,
		     uint64_t min_bytes);

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

/* homa_pacer_bypass - true when c's packets go without regard to the
 * link's backlog: c is exempt, or shorter than min_bytes. */
bool homa_pacer_bypass(const struct homa_pacer *p,
		       const struct homa_pacer_cand *c);

/*
 * homa_pacer_choice_start - begin choosing the message whose packet goes
 * next at now.  With throttle false (no pacer) or a backlog of at most
 * max_queue_ns, every candidate may go: the one with the fewest bytes
 * remaining, or the oldest when homa_pacer_fifo_turn says so (called once
 * here).  Otherwise only candidates that bypass the pacer may go, fewest
 * bytes remaining first.  Offer every candidate, then read the result;
 * ch refers to p until then.
 */
void homa_pacer_choice_start(struct homa_pacer *p, uint64_t now,
			     bool throttle, struct homa_pacer_choice *ch);

/*
 * homa_pacer_choice_offer - consider c; true when c is now the choice (the
 * caller remembers which message it stands for).  A tie keeps the earlier
 * candidate.  c is copied: it need not outlive the call.
 */
bool homa_pacer_choice_offer(struct homa_pacer_choice *ch,
			     const struct homa_pacer_cand *c);

/* homa_pacer_choice_blocked - true when candidates were offered and the
 * pacer held them all back (the caller waits for homa_pacer_wake). */
bool homa_pacer_choice_blocked(const struct homa_pacer_choice *ch);

#endif /* HOMA_PACER_H */
