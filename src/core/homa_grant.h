/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_grant - the receiver's grant policy as a pure function over the
 * incoming messages that still need grants: shortest remaining first (ties:
 * oldest), at most max_overcommit granted at once with max_per_peer per
 * peer (kernel max_rpcs_per_peer, default 1) before any peer gets one more,
 * each granted up to max_incoming/(active+1) bytes
 * beyond what has arrived, the total of granted-but-unreceived bytes capped
 * at max_incoming, and a fraction of grants given to the oldest message so
 * long messages cannot starve.  Scheduled priorities: with n active messages
 * the levels min(n-1, max_sched_prio)..0 are used, the shortest highest.
 */
#ifndef HOMA_GRANT_H
#define HOMA_GRANT_H

#include <stdbool.h>
#include <stdint.h>

struct homa_grant_params {
	uint32_t max_overcommit;      /* >= 1 */
	uint32_t max_per_peer;        /* messages of one peer granted before
				       * any peer gets one more (0 counts
				       * as 1) */
	uint32_t max_incoming;        /* bytes */
	uint32_t max_sched_prio;      /* highest scheduled priority */
	uint32_t fifo_fraction;       /* per mille of grants to the oldest */
	uint32_t fifo_increment;      /* bytes of one fifo grant */
	uint32_t min_step;            /* a grant grows by at least this
				       * much (or reaches the end, or by the
				       * whole window when that is smaller),
				       * so that not every packet draws a
				       * GRANT */
};

/* A message that may need grants.  The caller fills the inputs. */
struct homa_grant_cand {
	void *owner;            /* in: the caller's RPC, untouched */
	uint64_t peer;          /* in: identifies the sending host */
	uint64_t birth;         /* in: smaller = older */
	uint32_t length;        /* in: message length */
	uint32_t received;      /* in: bytes arrived */
	uint32_t granted;       /* in: current grant (>= unscheduled) */
	uint8_t priority;       /* in: priority last granted;
				 * out: priority to grant */
	uint32_t new_grant;     /* out: the grant to send, or == granted */
	bool send;              /* out: a GRANT must be sent */
};

/* State carried between calls (zero-initialise). */
struct homa_grant_state {
	uint64_t bytes_since_fifo;  /* SRPT grant bytes since the last fifo
				     * grant */
};

/*
 * homa_grant_compute - decide new grants for c[0..n).  Reorders c (sorted by
 * rank).  Returns the number of messages granted (active).  outstanding is
 * the sum of granted - received over ALL incoming messages of the caller
 * (those in c and any others); grants never take it above max_incoming,
 * except that the fifo grant may use one increment of its own.  More than
 * 64 candidates need scratch memory: without it, only c[0..64) are
 * considered and the others keep their grants (send false).
 */
int homa_grant_compute(const struct homa_grant_params *p,
		       struct homa_grant_state *st,
		       struct homa_grant_cand *c, int n,
		       uint64_t outstanding);

#endif /* HOMA_GRANT_H */
