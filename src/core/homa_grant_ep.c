// SPDX-License-Identifier: BSD-2-Clause
/*
 * Grants of the endpoint: the incoming messages that still need grants
 * become the candidates of the grant policy (homa_grant.h), admission
 * under overload (max_admitted) holds back messages never granted, and
 * the policy's decisions go out as GRANT packets.
 */

#include <stdlib.h>
#include <string.h>

#include "homa_alloc.h"
#include "homa_ep_internal.h"

/* grant_params - the grant policy's parameters from the settings. */
static void grant_params(const struct homa_ep *ep,
			 struct homa_grant_params *p)
{
	p->max_overcommit = (uint32_t)ep->cfg.max_overcommit;
	p->max_per_peer = (uint32_t)ep->cfg.max_rpcs_per_peer;
	p->max_incoming = (uint32_t)ep->cfg.max_incoming;
	p->max_sched_prio = homa_config_level(&ep->cfg,
					      ep->cfg.max_sched_prio);
	p->fifo_fraction = (uint32_t)ep->cfg.grant_fifo_fraction;
	p->fifo_increment = (uint32_t)ep->cfg.grant_increment;
	p->min_step = (uint32_t)ep->cfg.grant_min_bytes;
}

/*
 * peer_grant_cap - the most bytes a peer in recovery may have been granted
 * and not yet delivered: what its path delivers now in resend_ticks / 2
 * ticks (homa_peer_rx_rate), so that granted bytes arrive well before
 * their silence would ask for them again; at least its unscheduled bytes.
 */
static uint64_t peer_grant_cap(const struct homa_ep *ep,
			       const struct homa_peer *peer)
{
	uint64_t cap = homa_peer_rx_rate(peer, ep->tick) *
		       (uint64_t)ep->cfg.resend_ticks / 2;
	uint64_t floor = ep_peer_unsched(ep, peer);

	return cap > floor ? cap : floor;
}

/*
 * grant_stall_check - true when rpc's sender has stopped sending what it
 * was granted (silent for more than resend_ticks ticks, when the timer's
 * RESENDs start): the message gives up its grant slot and its granted but
 * unreceived bytes go back to the budget, so that senders that went quiet
 * (or half-open requests that never meant to send) cannot hold the grants
 * of live messages.  New bytes end the stall (note_progress) and the
 * message competes again; the RESENDs ask for what it was granted.  Not
 * while its host is in recovery and its socket delivered other data
 * within resend_ticks: the bytes wait in a queue on a slow path, and
 * granting them again elsewhere would only lengthen the queue.
 */
static bool grant_stall_check(struct homa_ep *ep, struct homa_rpc *rpc)
{
	if (!ep_owed_silent(ep, rpc, (uint64_t)ep->cfg.resend_ticks))
		return false;
	if (ep_peer_in_recovery(ep, rpc->peer) &&
	    homa_peer_heard_within(rpc->peer, homa_addr_port(&rpc->dest),
				   ep->tick, (uint64_t)ep->cfg.resend_ticks))
		return false;
	if (!rpc->grant_stalled) {
		rpc->grant_stalled = true;
		ep_count(ep, HOMA_STAT_grant_stalls);
	}
	return true;
}

/* admitted_backlog - bytes still to come of the incoming messages that
 * were granted at least once (see max_admitted). */
static uint64_t admitted_backlog(const struct homa_ep *ep)
{
	const struct homa_list *pos;
	uint64_t bytes = 0;

	for (pos = ep->grantable.next; pos != &ep->grantable; pos = pos->next) {
		const struct homa_rpc *rpc = homa_container(pos, struct homa_rpc,
							    grant_links);

		if (rpc->admitted)
			bytes += rpc->in.length - rpc->in.received;
	}
	return bytes;
}

/* overloaded - true when the endpoint takes in less than it is sent: it
 * is behind its input now or was within the last HOMA_OVERLOAD_TICKS
 * ticks, or messages wait for buffer space. */
static bool overloaded(const struct homa_ep *ep)
{
	return ep->input_behind || ep->overload_ticks > 0 ||
	       !homa_list_empty(&ep->waiting);
}

/* admission_closed - true when messages never granted must wait: the
 * endpoint is overloaded and the messages it admitted still have
 * max_admitted bytes or more to come (it finishes what it took on before
 * it takes more, and the unanswered senders hold their further requests:
 * homa_window.c).  A receiver that keeps up admits in SRPT order alone. */
static bool admission_closed(const struct homa_ep *ep)
{
	return ep->cfg.max_admitted != 0 && overloaded(ep) &&
	       admitted_backlog(ep) >= (uint64_t)ep->cfg.max_admitted;
}

/* tell_waiting - rpc's message waits for its first grant (admission, or
 * its turn among the shortest) with all its unscheduled bytes here: tell
 * its sender once (BUSY) that they were read, so that its request window
 * lets other requests through meanwhile. */
static void tell_waiting(struct homa_ep *ep, struct homa_rpc *rpc)
{
	if (rpc->told_waiting || rpc->in.received < rpc->in.granted)
		return;
	rpc->told_waiting = true;
	ep_queue_simple(ep, HOMA_PKT_BUSY, rpc->id, &rpc->dest);
}

/* grow_cands - double ep->cands; false (counted as grant_no_memory) when
 * out of memory, the array unchanged. */
static bool grow_cands(struct homa_ep *ep)
{
	int cap = ep->cands_cap * 2;
	void *p = homa_realloc(HOMA_ALLOC_GRANT, ep->cands,
			       (size_t)cap * sizeof(*ep->cands));

	if (!p) {
		ep_count(ep, HOMA_STAT_grant_no_memory);
		return false;
	}
	ep->cands = p;
	ep->cands_cap = cap;
	return true;
}

/* collect_candidates - fill ep->cands from the grantable list; returns the
 * count and the outstanding granted-but-unreceived bytes.  When the array
 * cannot grow (out of memory) the messages past it are left out of this
 * round (counted as grant_no_memory; the next round tries again).
 * *all_loopback says whether every message counted (granted bytes on
 * their way, or a candidate) comes from a loopback peer. */
static int collect_candidates(struct homa_ep *ep, uint64_t *outstanding,
			      bool *all_loopback)
{
	bool closed = admission_closed(ep);
	struct homa_list *pos;
	int n = 0;

	*outstanding = 0;
	*all_loopback = true;
	for (pos = ep->grantable.next; pos != &ep->grantable; pos = pos->next)
		homa_container(pos, struct homa_rpc,
			       grant_links)->peer->grant_out = 0;
	for (pos = ep->grantable.next; pos != &ep->grantable; pos = pos->next) {
		struct homa_rpc *rpc = homa_container(pos, struct homa_rpc,
						      grant_links);
		struct homa_grant_cand *c;

		/* A message waiting for buffer space has its data dropped:
		 * what it was granted is not on its way. */
		if (!rpc->has_buffers || grant_stall_check(ep, rpc))
			continue;
		if (!rpc->peer->loopback)
			*all_loopback = false;
		if (rpc->in.granted > rpc->in.received) {
			*outstanding += rpc->in.granted - rpc->in.received;
			rpc->peer->grant_out += rpc->in.granted -
						rpc->in.received;
		}
		if (rpc->in.granted >= rpc->in.length)
			continue;
		if (closed && !rpc->admitted) {
			tell_waiting(ep, rpc);
			continue;
		}
		if (n == ep->cands_cap && !grow_cands(ep))
			continue;
		c = &ep->cands[n++];
		c->owner = rpc;
		c->peer = (uint64_t)(uintptr_t)rpc->peer;
		c->birth = rpc->birth;
		c->length = rpc->in.length;
		c->received = rpc->in.received;
		c->granted = rpc->in.granted;
		c->priority = rpc->grant_priority;
	}
	return n;
}

/*
 * clip_to_path - c's new grant cut so that its host, when in recovery,
 * has at most peer_grant_cap bytes granted and not delivered (the policy's
 * grants count in the order of the candidates); returns false when
 * nothing is left to grant.  Uses and updates peer->grant_out
 * (collect_candidates).
 */
static bool clip_to_path(const struct homa_ep *ep, struct homa_grant_cand *c)
{
	struct homa_rpc *rpc = c->owner;
	struct homa_peer *peer = rpc->peer;
	uint64_t cap, room;

	if (ep_peer_in_recovery(ep, peer)) {
		cap = peer_grant_cap(ep, peer);
		room = cap > peer->grant_out ? cap - peer->grant_out : 0;
		if (c->new_grant > rpc->in.granted + room)
			c->new_grant = (uint32_t)(rpc->in.granted + room);
		if (c->new_grant <= rpc->in.granted)
			return false;
	}
	peer->grant_out += c->new_grant - rpc->in.granted;
	return true;
}

void ep_grant_update(struct homa_ep *ep)
{
	struct homa_grant_params params;
	uint64_t outstanding;
	bool all_loopback;
	int n, i;

	n = collect_candidates(ep, &outstanding, &all_loopback);
	if (n <= 0)
		return;
	grant_params(ep, &params);
	/* Bytes from a loopback peer queue in no network, only in this
	 * host's socket buffer: a larger window saves GRANT round trips. */
	params.max_incoming = (uint32_t)ep_loopback_setting(
		all_loopback, ep->cfg.loopback_max_incoming,
		params.max_incoming);
	homa_grant_compute(&params, &ep->grant_state, ep->cands, n,
			   outstanding);
	for (i = 0; i < n; i++) {
		struct homa_grant_cand *c = &ep->cands[i];
		struct homa_rpc *rpc = c->owner;
		struct homa_pkt pkt;

		if (c->send && !clip_to_path(ep, c))
			c->send = false;
		if (!c->send) {
			if (!rpc->admitted)
				tell_waiting(ep, rpc);
			continue;
		}
		ep->stats[HOMA_STAT_grants_sent_bytes] +=
			c->new_grant - rpc->in.granted;
		homa_msgin_grant(&rpc->in, c->new_grant);
		rpc->grant_priority = c->priority;
		rpc->admitted = true;
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = HOMA_PKT_GRANT;
		pkt.sender_id = rpc->id;
		pkt.offset = rpc->in.granted;
		pkt.priority = c->priority;
		ep_queue_ctrl(ep, &pkt, &rpc->dest);
	}
}
