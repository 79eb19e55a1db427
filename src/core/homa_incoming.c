// SPDX-License-Identifier: BSD-2-Clause
/*
 * Packet input of the endpoint: decoding, dispatch by type, reassembly into
 * the buffer pool, grants, and the buffer-space waiting queue.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "homa_addr.h"
#include "homa_ep_internal.h"

/* Counter of each decode error, indexed by enum homa_wire_error. */
static const enum homa_stat decode_drop[] = {
	[HOMA_WIRE_SHORT] = HOMA_STAT_drop_short,
	[HOMA_WIRE_BAD_TYPE] = HOMA_STAT_drop_bad_type,
	[HOMA_WIRE_SHORT_TYPE] = HOMA_STAT_drop_short_type,
	[HOMA_WIRE_BAD_LENGTH] = HOMA_STAT_drop_bad_length,
	[HOMA_WIRE_BAD_OFFSET] = HOMA_STAT_drop_bad_offset,
};

/* note_progress - rpc's sender shows it is alive and sending (new bytes,
 * or a client asking after a request that waits for our buffer space):
 * keep the half-open list in order of last progress, so that a flood
 * evicts stalled requests, not active ones. */
static void note_progress(struct homa_ep *ep, struct homa_rpc *rpc)
{
	rpc->progress_tick = ep->tick;
	rpc->grant_stalled = false;
	if (!homa_list_empty(&rpc->half_links)) {
		homa_list_del(&rpc->half_links);
		homa_list_add_tail(&ep->half_open, &rpc->half_links);
	}
}

/* ---- buffers ---- */

/* owed_silent - true when rpc's incoming message is owed bytes (granted,
 * not received) and none has arrived for more than ticks ticks. */
static bool owed_silent(const struct homa_ep *ep, const struct homa_rpc *rpc,
			uint64_t ticks)
{
	return rpc->has_buffers && rpc->in.received < rpc->in.granted &&
	       ep->tick > rpc->progress_tick + ticks;
}

/* add_waiting - queue rpc for buffer space, shortest message first. */
static void add_waiting(struct homa_ep *ep, struct homa_rpc *rpc)
{
	struct homa_list *pos;

	for (pos = ep->waiting.next; pos != &ep->waiting; pos = pos->next) {
		struct homa_rpc *other = homa_container(pos, struct homa_rpc,
							wait_links);

		if (other->in.length > rpc->in.length)
			break;
	}
	homa_list_insert_before(pos, &rpc->wait_links);
	ep_count(ep, HOMA_STAT_buffer_waits);
}

/* note_buffers - rpc's message now has pool space: count it against its
 * peer while the request is incomplete. */
static void note_buffers(struct homa_rpc *rpc)
{
	rpc->has_buffers = true;
	if (!homa_list_empty(&rpc->half_links)) {
		rpc->peer_bytes = rpc->in.length;
		rpc->peer->buffer_bytes += rpc->in.length;
	}
}

/* over_peer_share - true when a new request of length bytes from rpc's
 * peer would take that peer's incomplete requests past its share of the
 * pool (a peer holding nothing may always start one). */
static bool over_peer_share(const struct homa_ep *ep,
			    const struct homa_rpc *rpc, uint32_t length)
{
	uint64_t share = (uint64_t)homa_pool_num_bpages(ep->pool) *
			 HOMA_BPAGE_SIZE *
			 (uint64_t)ep->cfg.peer_buffer_percent / 100;

	if (rpc->is_client || rpc->peer->buffer_bytes == 0)
		return false;
	return rpc->peer->buffer_bytes + length > share;
}

/* waiting_stale - true when a request waiting for buffer space has heard
 * nothing from its client for longer than a client's probes take (two of
 * them, at the longest gap of their backoff). */
static bool waiting_stale(const struct homa_ep *ep, const struct homa_rpc *rpc)
{
	return !rpc->is_client &&
	       ep->tick > rpc->progress_tick +
			  (uint64_t)ep->cfg.resend_ticks +
			  2 * (uint64_t)ep_backoff_cap(ep);
}

/* waiting_ahead - true when a message no longer than rpc's waits for
 * space and could take it (not held back by its host's share): rpc must
 * queue behind it. */
static bool waiting_ahead(const struct homa_ep *ep, const struct homa_rpc *rpc)
{
	const struct homa_list *pos;

	for (pos = ep->waiting.next; pos != &ep->waiting; pos = pos->next) {
		const struct homa_rpc *w = homa_container(pos, struct homa_rpc,
							  wait_links);

		if (w->in.length > rpc->in.length)
			return false;
		if (!over_peer_share(ep, w, w->in.length) &&
		    !waiting_stale(ep, w))
			return true;
	}
	return false;
}

/*
 * alloc_buffers - give rpc's incoming message space in the pool.
 * Returns 0 (allocated), -ENOSPC (queued to wait), or -ENOMEM (no region).
 */
static int alloc_buffers(struct homa_ep *ep, struct homa_rpc *rpc, int core,
			 uint64_t now)
{
	int err;

	if (homa_pool_bpages_needed(rpc->in.length) >
	    homa_pool_num_bpages(ep->pool))
		return -ENOMEM;        /* can never fit: fail, do not wait */
	if (over_peer_share(ep, rpc, rpc->in.length)) {
		ep_count(ep, HOMA_STAT_drop_peer_limit);
		if (homa_list_empty(&rpc->wait_links))
			add_waiting(ep, rpc);
		return -ENOSPC;
	}
	if (homa_list_empty(&rpc->wait_links) && waiting_ahead(ep, rpc)) {
		add_waiting(ep, rpc);
		return -ENOSPC;
	}
	err = homa_pool_alloc_msg(ep->pool, rpc->in.length, core, now,
				  rpc->bpages, &rpc->num_bpages);
	if (err == 0) {
		note_buffers(rpc);
		homa_list_del(&rpc->wait_links);
		return 0;
	}
	if (err == -ENOSPC && homa_list_empty(&rpc->wait_links))
		add_waiting(ep, rpc);
	return err;
}

/*
 * resend_priority - the level at which the retransmissions of rpc's
 * incoming message are asked for.  The highest level in use
 * (ep_ctrl_priority), as the kernel module asks: a retransmission repairs
 * a message that is late already, and a kernel sender answers at the level
 * the RESEND names, so a low one puts the repair behind every queue on its
 * way (docs/scheduling.md, "Loss recovery", measures both).  The ablation
 * resend_low_priority asks at the last grant's level (first: the message's
 * first packet, at unknown_peer_priority, as unscheduled bytes go).
 */
static uint8_t resend_priority(const struct homa_ep *ep,
			       const struct homa_rpc *rpc, bool first)
{
	if (!ep->cfg.resend_low_priority)
		return ep_ctrl_priority(ep);
	return first ? ep_unknown_peer_priority(ep) : rpc->grant_priority;
}

/* queue_resend - queue a RESEND of rpc for length bytes from start (length
 * HOMA_RESEND_ALL: everything sent so far) at priority prio and count
 * it. */
static void queue_resend(struct homa_ep *ep, struct homa_rpc *rpc,
			 uint32_t start, uint32_t length, uint8_t prio)
{
	struct homa_pkt pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HOMA_PKT_RESEND;
	pkt.sender_id = rpc->id;
	pkt.offset = start;
	pkt.length = length;
	pkt.priority = prio;
	ep_queue_ctrl(ep, &pkt, &rpc->dest);
	ep_count(ep, HOMA_STAT_resend_requests);
}

/* ask_again - rpc, whose data was dropped while it waited for buffer
 * space, has space now: ask its sender for all of it again. */
static void ask_again(struct homa_ep *ep, struct homa_rpc *rpc)
{
	queue_resend(ep, rpc, 0, HOMA_RESEND_ALL,
		     resend_priority(ep, rpc, true));
}

void ep_check_waiting(struct homa_ep *ep, int core, uint64_t now)
{
	struct homa_list *pos, *tmp;

	homa_list_for_each_safe(pos, tmp, &ep->waiting) {
		struct homa_rpc *rpc = homa_container(pos, struct homa_rpc,
						      wait_links);

		/* A request over its host's share waits for that host's
		 * other requests; one whose client has shown no life for a
		 * while (no probe: a flood) lets live ones go first. */
		if (over_peer_share(ep, rpc, rpc->in.length) ||
		    waiting_stale(ep, rpc))
			continue;
		if (homa_pool_alloc_msg(ep->pool, rpc->in.length, core, now,
					rpc->bpages, &rpc->num_bpages) != 0)
			return;
		note_buffers(rpc);
		homa_list_del(&rpc->wait_links);
		rpc->silent_ticks = 0;
		/* Its client gets a fresh start to send (the eviction of
		 * stalled requests waits that long: no ping-pong). */
		rpc->progress_tick = ep->tick;
		ask_again(ep, rpc);
		if (rpc->in.granted < rpc->in.length)
			ep_grant_update(ep);
	}
}

/* first_live_waiter - the first message waiting for buffer space that
 * would take space if there were any (not over its host's share, not
 * stale), or NULL. */
static struct homa_rpc *first_live_waiter(const struct homa_ep *ep)
{
	struct homa_list *pos;

	for (pos = ep->waiting.next; pos != &ep->waiting; pos = pos->next) {
		struct homa_rpc *w = homa_container(pos, struct homa_rpc,
						    wait_links);

		if (!over_peer_share(ep, w, w->in.length) &&
		    !waiting_stale(ep, w))
			return w;
	}
	return NULL;
}

/* stalled_holder - an incomplete request holding buffer space whose client
 * owes bytes and has sent none for resend_ticks + 2 * resend_interval ticks
 * (two of our RESENDs unanswered): unproven ones first (oldest first),
 * else the one that progressed least recently.  NULL when none. */
static struct homa_rpc *stalled_holder(const struct homa_ep *ep)
{
	uint64_t limit = (uint64_t)ep->cfg.resend_ticks +
			 2 * (uint64_t)ep->cfg.resend_interval;
	struct homa_rpc *victim = NULL;
	struct homa_list *pos;

	for (pos = ep->half_open.next; pos != &ep->half_open; pos = pos->next) {
		struct homa_rpc *rpc = homa_container(pos, struct homa_rpc,
						      half_links);

		if (!owed_silent(ep, rpc, limit))
			continue;
		if (!rpc->proven)
			return rpc;
		if (!victim || rpc->progress_tick < victim->progress_tick)
			victim = rpc;
	}
	return victim;
}

void ep_reclaim_buffers(struct homa_ep *ep)
{
	struct homa_rpc *victim;

	if (homa_list_empty(&ep->waiting) || !first_live_waiter(ep))
		return;
	victim = stalled_holder(ep);
	if (!victim)
		return;
	ep_count(ep, HOMA_STAT_evicted_stalled);
	ep_rpc_free(ep, victim);      /* gives the space to the waiters */
}

void homa_ep_defer_copies(struct homa_ep *ep)
{
	ep->defer_copies = true;
}

void homa_ep_finish_copies(struct homa_ep *ep)
{
	for (uint32_t i = 0; i < ep->num_copies; i++)
		memcpy(ep->copies[i].dst, ep->copies[i].src,
		       ep->copies[i].len);
	ep->num_copies = 0;
	ep->defer_copies = false;
}

/* copy_payload - copy n bytes to dst now, or record the copy while
 * homa_ep_defer_copies is on (making the ones recorded first when the
 * record is full, and going on deferring). */
static void copy_payload(struct homa_ep *ep, void *dst, const uint8_t *src,
			 uint32_t n)
{
	struct homa_copy *c;

	if (!ep->defer_copies) {
		memcpy(dst, src, n);
		return;
	}
	if (ep->num_copies == HOMA_EP_DEFERRED_COPIES) {
		homa_ep_finish_copies(ep);
		ep->defer_copies = true;
	}
	c = &ep->copies[ep->num_copies++];
	c->dst = dst;
	c->src = src;
	c->len = n;
}

/* store_payload - copy a DATA packet's bytes into rpc's buffers (or
 * record the copies: copy_payload). */
static void store_payload(struct homa_ep *ep, struct homa_rpc *rpc,
			  const struct homa_pkt *pkt)
{
	uint32_t done = 0;

	while (done < pkt->payload_len) {
		uint32_t avail, n;
		void *dst = homa_pool_buffer(ep->pool, rpc->bpages,
					     rpc->num_bpages, rpc->in.length,
					     pkt->offset + done, &avail);

		if (!dst || avail == 0)
			return;
		n = pkt->payload_len - done < avail ? pkt->payload_len - done
						    : avail;
		copy_payload(ep, dst, pkt->payload + done, n);
		done += n;
	}
}

/* ---- grants ---- */

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
 * grant_stall_check - true when rpc's sender has stopped sending what it
 * was granted (silent for more than resend_ticks ticks, when the timer's
 * RESENDs start): the message gives up its grant slot and its granted but
 * unreceived bytes go back to the budget, so that senders that went quiet
 * (or half-open requests that never meant to send) cannot hold the grants
 * of live messages.  New bytes end the stall (note_progress) and the
 * message competes again; the RESENDs ask for what it was granted.
 */
static bool grant_stall_check(struct homa_ep *ep, struct homa_rpc *rpc)
{
	if (!owed_silent(ep, rpc, (uint64_t)ep->cfg.resend_ticks))
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

/* collect_candidates - fill ep->cands from the grantable list; returns the
 * count and the outstanding granted-but-unreceived bytes, or -1 when out
 * of memory.  *all_loopback says whether every message counted (granted
 * bytes on their way, or a candidate) comes from a loopback peer. */
static int collect_candidates(struct homa_ep *ep, uint64_t *outstanding,
			      bool *all_loopback)
{
	bool closed = admission_closed(ep);
	struct homa_list *pos;
	int n = 0;

	*outstanding = 0;
	*all_loopback = true;
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
		if (rpc->in.granted > rpc->in.received)
			*outstanding += rpc->in.granted - rpc->in.received;
		if (rpc->in.granted >= rpc->in.length)
			continue;
		if (closed && !rpc->admitted) {
			tell_waiting(ep, rpc);
			continue;
		}
		if (n == ep->cands_cap) {
			int cap = ep->cands_cap ? ep->cands_cap * 2 : 16;
			void *p = realloc(ep->cands, (size_t)cap *
					  sizeof(*ep->cands));

			if (!p)
				return -1;
			ep->cands = p;
			ep->cands_cap = cap;
		}
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
	if (all_loopback && ep->cfg.loopback_max_incoming != 0)
		params.max_incoming = (uint32_t)ep->cfg.loopback_max_incoming;
	homa_grant_compute(&params, &ep->grant_state, ep->cands, n,
			   outstanding);
	for (i = 0; i < n; i++) {
		struct homa_grant_cand *c = &ep->cands[i];
		struct homa_rpc *rpc = c->owner;
		struct homa_pkt pkt;

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

/*
 * request_nothing_yet - nothing of rpc's incoming message has arrived: ask
 * for all of it that was sent (a server still holding the request answers
 * BUSY).  A slow receiver asking for everything of every silent RPC once
 * flooded itself with retransmissions of packets that sat unread in its own
 * socket buffer; ticks behind its input now count no silence
 * (homa_ep_input_backlog), so such RPCs do not ask.  The ablation
 * resend_low_priority asks for the first packet only.
 */
static void request_nothing_yet(struct homa_ep *ep, struct homa_rpc *rpc)
{
	if (ep->cfg.resend_low_priority)
		queue_resend(ep, rpc, 0, ep_peer_seg(ep, rpc->peer),
			     resend_priority(ep, rpc, true));
	else
		queue_resend(ep, rpc, 0, HOMA_RESEND_ALL,
			     resend_priority(ep, rpc, true));
}

void ep_request_missing(struct homa_ep *ep, struct homa_rpc *rpc)
{
	struct homa_gap ranges[HOMA_MSGIN_GAPS_CAP + 1];
	uint8_t prio = resend_priority(ep, rpc, false);
	int n, i;

	if (!rpc->has_in) {
		request_nothing_yet(ep, rpc);
		return;
	}
	n = homa_msgin_missing(&rpc->in, ranges, HOMA_MSGIN_GAPS_CAP + 1);
	rpc->tail_probing = false;
	for (i = 0; i < n; i++) {
		uint32_t end = ranges[i].end;

		if (ep->cfg.resend_tail_probe &&
		    ranges[i].start == rpc->in.recv_end &&
		    end - ranges[i].start > ep_peer_seg(ep, rpc->peer)) {
			/* The tail: one packet (tail_probe_answered). */
			end = ranges[i].start + ep_peer_seg(ep, rpc->peer);
			rpc->tail_probing = true;
			rpc->tail_probe = ranges[i].start;
		}
		queue_resend(ep, rpc, ranges[i].start, end - ranges[i].start,
			     prio);
	}
}

/*
 * tail_probe_answered - pkt, new bytes for rpc, extended its message past
 * what had arrived (at_tail).  With the ablation resend_tail_probe the
 * tail of a message, the granted bytes past the last arrival, is asked for
 * one packet first (ep_request_missing).  That was the rule while a slow
 * receiver counted ticks behind its own input as silence: asking for the
 * whole tail then drew duplicates of packets that waited unread in its
 * socket buffer (three concurrent 1 MB echoes under valgrind: 70% of the
 * DATA read were duplicates, and no RPC ended).  Such ticks count no
 * silence now (homa_ep_input_backlog), and the probe delays every lost
 * tail by at least one more resend interval (docs/scheduling.md, "Loss
 * recovery": after the faults of 150 seeded runs on 16 hosts end, every
 * RPC is done 29 ms later at the median with it, 5.5 ms without).  When
 * the probed packet comes back as the retransmission of bytes that had not
 * arrived, the packets sent after it did not arrive either (they would have
 * come before it): the rest of the tail is asked for at once.  The probed
 * packet found already there means the rest is on its way: nothing more
 * is asked.
 */
static void tail_probe_answered(struct homa_ep *ep, struct homa_rpc *rpc,
				const struct homa_pkt *pkt, bool at_tail)
{
	if (!rpc->tail_probing || !at_tail || !pkt->retransmit ||
	    pkt->offset != rpc->tail_probe)
		return;
	rpc->tail_probing = false;
	if (rpc->in.recv_end < rpc->in.granted)
		queue_resend(ep, rpc, rpc->in.recv_end,
			     rpc->in.granted - rpc->in.recv_end,
			     resend_priority(ep, rpc, false));
}

/* ---- DATA ---- */

/* handle_ack - a client acknowledged RPC client_id on our port: end our
 * server RPC for it (src's address and port name the client). */
static void handle_ack(struct homa_ep *ep, const struct homa_ack *ack,
		       const union sockaddr_in_union *src)
{
	struct homa_rpc *rpc;

	if (ack->client_id == 0 || ack->server_port != ep->port)
		return;
	rpc = homa_rpc_find_server(&ep->rpcs, ack->client_id ^ 1, src);
	if (!rpc)
		return;
	ep_count(ep, HOMA_STAT_server_rpcs_acked);
	ep_rpc_free(ep, rpc);
}

/* maybe_send_cutoffs - a DATA from peer used a cutoff version other than
 * ours: send it our cutoffs, at most once per cutoffs_interval ticks. */
static void maybe_send_cutoffs(struct homa_ep *ep, struct homa_peer *peer,
			       const union sockaddr_in_union *src,
			       const struct homa_pkt *data)
{
	struct homa_pkt pkt;
	int i;

	if (data->cutoff_version == ep->cfg.cutoff_version ||
	    !homa_peer_cutoffs_due(peer, ep->tick,
				   (uint64_t)ep->cfg.cutoffs_interval))
		return;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HOMA_PKT_CUTOFFS;
	pkt.sender_id = data->sender_id ^ 1;
	for (i = 0; i < HOMA_NUM_PRIORITIES; i++)
		pkt.unsched_cutoffs[i] = (uint32_t)ep->cfg.unsched_cutoffs[i];
	pkt.cutoff_version = (uint16_t)ep->cfg.cutoff_version;
	ep_queue_ctrl(ep, &pkt, src);
}

/* may_evict_proven - whether a request whose client showed life may be
 * dropped for a new request from host from: only for another host's, and
 * only once it has made no progress for resend_ticks ticks (when its
 * receiver would ask after it). */
static bool may_evict_proven(const struct homa_ep *ep,
			     const struct homa_rpc *rpc,
			     const struct homa_peer *from)
{
	return rpc->peer != from &&
	       rpc->progress_tick + (uint64_t)ep->cfg.resend_ticks < ep->tick;
}

/*
 * evict_oldest - make room for a new request from host from: drop one
 * incomplete request (of peer, or of anyone when peer is NULL), the oldest
 * of those whose client never showed life after its first packet, else the
 * one that made progress least recently (the half-open list is in that
 * order) among those may_evict_proven allows.  Requests that move are left
 * to finish: evicting them let more concurrent requests than the limits
 * evict each other forever (each victim's restart evicted the next, and a
 * client sending its requests shortest first starved the one holding the
 * room while its newer request's packets were refused).  Returns false
 * when nothing is dropped (counted as drop_half_open_busy).  The walk only
 * chooses; the RPC is freed after it.
 */
static bool evict_oldest(struct homa_ep *ep, const struct homa_peer *peer,
			 const struct homa_peer *from)
{
	struct homa_rpc *victim = NULL;
	struct homa_list *pos;

	for (pos = ep->half_open.next; pos != &ep->half_open; pos = pos->next) {
		struct homa_rpc *rpc = homa_container(pos, struct homa_rpc,
						      half_links);

		if (peer && rpc->peer != peer)
			continue;
		if (!rpc->proven) {
			victim = rpc;
			break;
		}
		if (!victim && may_evict_proven(ep, rpc, from))
			victim = rpc;
	}
	if (!victim) {
		ep_count(ep, HOMA_STAT_drop_half_open_busy);
		return false;
	}
	ep_count(ep, HOMA_STAT_evicted_half_open);
	ep_rpc_free(ep, victim);
	return true;
}

/*
 * make_room - before a new request from src is accepted: enforce the
 * limits on incomplete requests (per peer host and in total) by dropping
 * the oldest ones (see evict_oldest), and on peer records.  Returns false
 * (counted) when the request must be dropped: its client asks again
 * (RESEND, answered with RPC_UNKNOWN) and starts over once there is room.
 */
static bool make_room(struct homa_ep *ep, const union sockaddr_in_union *src)
{
	struct homa_peer *peer = homa_peer_get(&ep->peers, src);

	if (!peer) {
		ep_count(ep, HOMA_STAT_drop_too_many_peers);
		return false;
	}
	if (peer->half_open >= (uint64_t)ep->cfg.max_peer_rpcs &&
	    !evict_oldest(ep, peer, peer))
		return false;
	if (ep->num_half_open >= (uint64_t)ep->cfg.max_half_open &&
	    !evict_oldest(ep, NULL, peer))
		return false;
	return true;
}

/* data_rpc - the RPC a DATA packet belongs to, creating a server RPC for a
 * new request.  NULL (counted) when the packet must be dropped. */
static struct homa_rpc *data_rpc(struct homa_ep *ep,
				 const struct homa_pkt *pkt,
				 const union sockaddr_in_union *src)
{
	struct homa_rpc *rpc;
	bool wrong_peer;

	rpc = ep_find_rpc(ep, pkt->sender_id, src, &wrong_peer);
	if (rpc)
		return rpc;
	if (wrong_peer) {
		ep_count(ep, HOMA_STAT_drop_wrong_peer);
		return NULL;
	}
	if ((pkt->sender_id & 1) != 0) {
		ep_count(ep, HOMA_STAT_drop_unknown_rpc);
		return NULL;
	}
	if (!ep->is_server || ep->shutdown) {
		ep_count(ep, HOMA_STAT_drop_not_server);
		return NULL;
	}
	if (!make_room(ep, src))
		return NULL;
	rpc = ep_new_rpc(ep, pkt->sender_id ^ 1, false, src);
	if (!rpc)
		ep_count(ep, HOMA_STAT_drop_no_memory);
	else
		rpc->state = HOMA_RPC_INCOMING;
	return rpc;
}

/* start_in - first DATA of a message: set up reassembly and buffers.
 * Returns false when the packet must be dropped (counted; a client RPC
 * may have failed). */
static bool start_in(struct homa_ep *ep, struct homa_rpc *rpc,
		     const struct homa_pkt *pkt, int core, uint64_t now)
{
	int err;

	/* The sender's word on how much it sends unasked counts only up to
	 * our own unscheduled bytes: a larger claim must not hold grants.  A
	 * retransmitted first packet carries the end of what was asked for;
	 * the sender had sent the unscheduled bytes. */
	rpc->progress_tick = ep->tick;
	rpc->first_offset = pkt->offset;
	rpc->tail_probing = false;
	homa_msgin_init(&rpc->in, pkt->message_length,
			pkt->incoming < (uint64_t)ep->cfg.unsched_bytes &&
			!pkt->retransmit ? pkt->incoming :
			(uint32_t)ep->cfg.unsched_bytes,
			(int)ep->cfg.max_gaps);
	rpc->has_in = true;
	if (rpc->is_client) {
		ep_window_answered(ep, rpc);
		if (rpc->state == HOMA_RPC_OUTGOING)
			rpc->state = HOMA_RPC_INCOMING;
	}
	homa_list_add_tail(&ep->grantable, &rpc->grant_links);
	err = alloc_buffers(ep, rpc, core, now);
	if (err == 0)
		return true;
	ep_count(ep, HOMA_STAT_drop_no_buffer);
	if (err == -ENOMEM) {
		if (rpc->is_client)
			ep_rpc_fail(ep, rpc, ENOMEM);
		else
			ep_rpc_free(ep, rpc);
	}
	return false;
}

/* message_done - rpc's incoming message is complete. */
static void message_done(struct homa_ep *ep, struct homa_rpc *rpc)
{
	if (rpc->is_client) {
		ep_count(ep, HOMA_STAT_responses_received);
		ep_window_forget(ep, rpc);
		if (rpc->has_out) {
			homa_list_del(&rpc->send_links);
			homa_msgout_free(&rpc->out);
			rpc->has_out = false;
		}
		if (homa_peer_add_ack(rpc->peer, rpc->id,
				      homa_addr_port(&rpc->dest)) >=
		    HOMA_MAX_ACKS)
			ep_flush_acks(ep, rpc->peer);
		else if (homa_list_empty(&rpc->peer->ack_links))
			homa_list_add_tail(&ep->ack_peers,
					   &rpc->peer->ack_links);
	} else {
		ep_count(ep, HOMA_STAT_requests_received);
		ep_request_done(ep, rpc);
	}
	ep_rpc_ready(ep, rpc);
	ep_grant_update(ep);
}

/* note_more_data - a DATA packet for rpc other than the one that started
 * its message: its sender is more than a one-packet flood. */
static void note_more_data(struct homa_rpc *rpc, const struct homa_pkt *pkt)
{
	if (pkt->offset != rpc->first_offset)
		rpc->proven = true;
}

/* accept_data - a DATA packet for rpc: record and store its bytes. */
static void accept_data(struct homa_ep *ep, struct homa_rpc *rpc,
			const struct homa_pkt *pkt, int core, uint64_t now)
{
	enum homa_msgin_result res;
	bool at_tail;

	if (!rpc->has_in) {
		if (rpc->state == HOMA_RPC_READY ||
		    rpc->state == HOMA_RPC_IN_SERVICE ||
		    (!rpc->is_client && rpc->has_out))
			goto duplicate;
		if (!start_in(ep, rpc, pkt, core, now))
			return;
	} else if (pkt->message_length != rpc->in.length) {
		ep_count(ep, HOMA_STAT_drop_length_mismatch);
		return;
	} else if (!rpc->has_buffers) {
		note_more_data(rpc, pkt);
		ep_count(ep, HOMA_STAT_drop_no_buffer);
		return;
	}
	if (rpc->state != HOMA_RPC_INCOMING)
		goto duplicate;
	at_tail = pkt->offset >= rpc->in.recv_end;
	res = homa_msgin_add(&rpc->in, pkt->offset, pkt->payload_len);
	if (res == HOMA_MSGIN_NO_GAP_ROOM) {
		ep_count(ep, HOMA_STAT_drop_too_many_gaps);
		return;
	}
	if (res != HOMA_MSGIN_NEW)
		goto duplicate;
	/* Only new bytes are progress: duplicates must not keep an RPC that
	 * cannot complete alive. */
	rpc->silent_ticks = 0;
	ep_rpc_progress(rpc);
	ep_heard(ep, rpc);
	note_more_data(rpc, pkt);
	note_progress(ep, rpc);
	store_payload(ep, rpc, pkt);
	if (homa_msgin_complete(&rpc->in)) {
		message_done(ep, rpc);
		return;
	}
	tail_probe_answered(ep, rpc, pkt, at_tail);
	if (rpc->in.granted < rpc->in.length)
		ep->grants_due = true;
	return;
duplicate:
	ep_count(ep, HOMA_STAT_drop_duplicate_data);
}

/* handle_data - a DATA packet from src. */
static void handle_data(struct homa_ep *ep, const struct homa_pkt *pkt,
			const union sockaddr_in_union *src, int core,
			uint64_t now)
{
	struct homa_peer *peer;
	struct homa_rpc *rpc;

	if (pkt->num_acks > 0)
		handle_ack(ep, &pkt->acks[0], src);
	rpc = data_rpc(ep, pkt, src);
	if (!rpc)
		return;
	peer = rpc->peer;
	maybe_send_cutoffs(ep, peer, src, pkt);
	accept_data(ep, rpc, pkt, core, now);
}

/* ---- control packets ---- */

/* lookup_rpc - the RPC a control packet refers to; NULL (counted as
 * wrong peer or unknown RPC) when there is none. */
static struct homa_rpc *lookup_rpc(struct homa_ep *ep,
				   const struct homa_pkt *pkt,
				   const union sockaddr_in_union *src)
{
	bool wrong_peer;
	struct homa_rpc *rpc = ep_find_rpc(ep, pkt->sender_id, src,
					   &wrong_peer);

	if (!rpc)
		ep_count(ep, wrong_peer ? HOMA_STAT_drop_wrong_peer
					: HOMA_STAT_drop_unknown_rpc);
	return rpc;
}

/* control_rpc - lookup_rpc, and the packet counts as a sign of life. */
static struct homa_rpc *control_rpc(struct homa_ep *ep,
				    const struct homa_pkt *pkt,
				    const union sockaddr_in_union *src)
{
	struct homa_rpc *rpc = lookup_rpc(ep, pkt, src);

	if (rpc)
		rpc->silent_ticks = 0;
	return rpc;
}

/* handle_busy - the peer is alive but has nothing to send: a sign of life
 * for an RPC waiting on it, except for a request this server is still
 * receiving (a client that answers BUSY will not complete it). */
static void handle_busy(struct homa_ep *ep, const struct homa_pkt *pkt,
			const union sockaddr_in_union *src)
{
	struct homa_rpc *rpc = lookup_rpc(ep, pkt, src);

	if (!rpc)
		return;
	/* Our probe was answered: the next one waits longer. */
	rpc->probe_answered = true;
	if (rpc->is_client) {
		ep_heard(ep, rpc);      /* the server works on it */
		ep_window_heard(ep, rpc);
	}
	if (rpc->is_client || rpc->state != HOMA_RPC_INCOMING)
		rpc->silent_ticks = 0;
}

/* handle_grant - the receiver of our message allows more bytes. */
static void handle_grant(struct homa_ep *ep, const struct homa_pkt *pkt,
			 const union sockaddr_in_union *src)
{
	struct homa_rpc *rpc = control_rpc(ep, pkt, src);

	if (!rpc || !rpc->has_out)
		return;
	if (pkt->offset > rpc->out.granted) {
		ep_rpc_progress(rpc);
		ep_heard(ep, rpc);
	}
	if (rpc->is_client)
		ep_window_answered(ep, rpc);
	homa_msgout_grant(&rpc->out, pkt->offset);
	rpc->out.sched_priority = pkt->priority < HOMA_NUM_PRIORITIES ?
				  pkt->priority : HOMA_NUM_PRIORITIES - 1;
	ep_update_sendable(ep, rpc);
}

/* resend_out - queue the part of rpc's outgoing message a RESEND asks for;
 * a range ending beyond the grant also acts as a grant.  Returns false when
 * there was nothing to send. */
static bool resend_out(struct homa_ep *ep, struct homa_rpc *rpc,
		       const struct homa_pkt *pkt)
{
	struct homa_msgout *m = &rpc->out;
	uint32_t queued;

	if (pkt->length != HOMA_RESEND_ALL && pkt->offset < m->length) {
		uint32_t len = pkt->length < m->length - pkt->offset ?
			       pkt->length : m->length - pkt->offset;

		homa_msgout_grant(m, pkt->offset + len);
	}
	rpc->resend_priority = pkt->priority < HOMA_NUM_PRIORITIES ?
			       pkt->priority : HOMA_NUM_PRIORITIES - 1;
	queued = homa_msgout_request_resend(m, pkt->offset, pkt->length);
	ep_update_sendable(ep, rpc);
	return queued > 0 || homa_msgout_has_work(m);
}

/* restart_client - the server lost our RPC: send the request again. */
static void restart_client(struct homa_ep *ep, struct homa_rpc *rpc)
{
	if (rpc->state == HOMA_RPC_READY || !rpc->has_out)
		return;
	homa_list_del(&rpc->grant_links);
	homa_list_del(&rpc->wait_links);
	ep_release_in_buffers(ep, rpc, 0, ep->next_tick_ns);
	rpc->has_in = false;
	homa_msgout_restart(&rpc->out);
	rpc->state = HOMA_RPC_OUTGOING;
	/* A restart is a sign of life, but only a few times: a peer that
	 * keeps forgetting the RPC must not keep it alive forever. */
	if (++rpc->restarts <= HOMA_MAX_RESTARTS)
		rpc->silent_ticks = 0;
	ep_update_sendable(ep, rpc);
	ep_count(ep, HOMA_STAT_rpc_restarts);
}

/* handle_resend - the peer asks for bytes again. */
static void handle_resend(struct homa_ep *ep, const struct homa_pkt *pkt,
			  const union sockaddr_in_union *src)
{
	bool wrong_peer;
	struct homa_rpc *rpc = ep_find_rpc(ep, pkt->sender_id, src,
					   &wrong_peer);

	if (!rpc) {
		if (wrong_peer) {
			ep_count(ep, HOMA_STAT_drop_wrong_peer);
		} else if ((pkt->sender_id & 1) == 0 &&
			   (!ep->is_server || ep->shutdown)) {
			/* A client asks a socket that takes no requests:
			 * stay silent so that its RPC times out. */
			ep_count(ep, HOMA_STAT_drop_not_server);
		} else {
			ep_queue_simple(ep, HOMA_PKT_RPC_UNKNOWN,
					pkt->sender_id ^ 1, src);
		}
		return;
	}
	/* The peer is alive; but a client asking after its response is no
	 * progress for a request this server is still receiving (unless the
	 * request only waits for our buffer space). */
	if (rpc->is_client || rpc->state != HOMA_RPC_INCOMING ||
	    !rpc->has_buffers)
		rpc->silent_ticks = 0;
	if (!rpc->is_client && rpc->has_in && !rpc->has_buffers) {
		rpc->proven = true;
		note_progress(ep, rpc);
	}
	if (!rpc->has_out || pkt->length == 0) {
		/* A server holding the request, or an empty probe: alive,
		 * nothing to resend. */
		ep_queue_simple(ep, HOMA_PKT_BUSY, rpc->id, src);
		return;
	}
	if (rpc->is_client && rpc->has_in) {
		/* The server asks for request bytes while its response is
		 * arriving: it has lost the RPC and a new incarnation holds
		 * part of the request (or this RESEND is a stale one).  The
		 * response so far may come from an execution the new server
		 * knows nothing of: start over, as on RPC_UNKNOWN, so that no
		 * response mixes two executions. */
		ep_count(ep, HOMA_STAT_resend_during_response);
		restart_client(ep, rpc);
		return;
	}
	if (pkt->offset >= rpc->out.length) {
		/* The peer believes in a longer message than ours (a
		 * forged first packet?): no answer, let its RPC time out. */
		ep_count(ep, HOMA_STAT_drop_length_mismatch);
		return;
	}
	if (rpc->is_client)
		ep_window_answered(ep, rpc);
	if (!resend_out(ep, rpc, pkt))
		ep_queue_simple(ep, HOMA_PKT_BUSY, rpc->id, src);
}

/* handle_rpc_unknown - the peer has no state for the RPC. */
static void handle_rpc_unknown(struct homa_ep *ep, const struct homa_pkt *pkt,
			       const union sockaddr_in_union *src)
{
	struct homa_rpc *rpc = lookup_rpc(ep, pkt, src);

	if (!rpc)
		return;
	if (rpc->is_client)
		restart_client(ep, rpc);
	else
		ep_rpc_free(ep, rpc);
}

/* handle_cutoffs - the peer tells which priorities to use towards it. */
static void handle_cutoffs(struct homa_ep *ep, const struct homa_pkt *pkt,
			   const union sockaddr_in_union *src)
{
	struct homa_peer *peer = homa_peer_get(&ep->peers, src);
	uint32_t cutoffs[HOMA_NUM_PRIORITIES];

	if (!peer) {
		ep_count(ep, HOMA_STAT_drop_no_memory);
		return;
	}
	memcpy(cutoffs, pkt->unsched_cutoffs, sizeof(cutoffs));
	cutoffs[0] = HOMA_MAX_MESSAGE_LENGTH;
	homa_peer_set_cutoffs(peer, cutoffs, pkt->cutoff_version);
	ep_count(ep, HOMA_STAT_cutoffs_updates);
}

/* send_ack - answer a NEED_ACK for client RPC id with an ACK that also
 * carries other acks queued for the same server port. */
static void send_ack(struct homa_ep *ep, uint64_t id,
		     const union sockaddr_in_union *src)
{
	struct homa_peer *peer = homa_peer_get(&ep->peers, src);
	uint16_t port = homa_addr_port(src);
	struct homa_pkt pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HOMA_PKT_ACK;
	pkt.sender_id = id;
	while (peer && pkt.num_acks < HOMA_MAX_ACKS) {
		struct homa_ack a = homa_peer_pop_ack(peer, port);

		if (a.client_id == 0)
			break;
		pkt.acks[pkt.num_acks++] = a;
	}
	ep_queue_ctrl(ep, &pkt, src);
}

/* handle_need_ack - a server asks whether our response arrived. */
static void handle_need_ack(struct homa_ep *ep, const struct homa_pkt *pkt,
			    const union sockaddr_in_union *src)
{
	bool wrong_peer;
	struct homa_rpc *rpc;

	if ((pkt->sender_id & 1) == 0)
		return;
	rpc = ep_find_rpc(ep, pkt->sender_id, src, &wrong_peer);
	if (wrong_peer) {
		ep_count(ep, HOMA_STAT_drop_wrong_peer);
		return;
	}
	if (!rpc || rpc->state == HOMA_RPC_READY) {
		send_ack(ep, pkt->sender_id ^ 1, src);
		return;
	}
	/* No reset of the silence count: the server asks because it thinks
	 * it is done, which is no progress for this RPC. */
	if (rpc->has_in && !rpc->has_buffers)
		ep_queue_simple(ep, HOMA_PKT_BUSY, rpc->id, src);
	else
		ep_request_missing(ep, rpc);
}

/* handle_ack_pkt - a client says which responses it has. */
static void handle_ack_pkt(struct homa_ep *ep, const struct homa_pkt *pkt,
			   const union sockaddr_in_union *src)
{
	struct homa_ack head = { pkt->sender_id, pkt->dport };
	int i;

	if ((pkt->sender_id & 1) == 0)
		handle_ack(ep, &head, src);
	for (i = 0; i < pkt->num_acks; i++)
		handle_ack(ep, &pkt->acks[i], src);
}

/* dispatch - act on a decoded packet. */
static void dispatch(struct homa_ep *ep, const struct homa_pkt *pkt,
		     const union sockaddr_in_union *src, int core,
		     uint64_t now)
{
	switch (pkt->type) {
	case HOMA_PKT_DATA:
		handle_data(ep, pkt, src, core, now);
		break;
	case HOMA_PKT_GRANT:
		handle_grant(ep, pkt, src);
		break;
	case HOMA_PKT_RESEND:
		handle_resend(ep, pkt, src);
		break;
	case HOMA_PKT_RPC_UNKNOWN:
		handle_rpc_unknown(ep, pkt, src);
		break;
	case HOMA_PKT_BUSY:
		handle_busy(ep, pkt, src);
		break;
	case HOMA_PKT_CUTOFFS:
		handle_cutoffs(ep, pkt, src);
		break;
	case HOMA_PKT_NEED_ACK:
		handle_need_ack(ep, pkt, src);
		break;
	case HOMA_PKT_ACK:
		handle_ack_pkt(ep, pkt, src);
		break;
	default:
		/* FREEZE is a debugging aid of the kernel: never act on it
		 * from the network. */
		break;
	}
}

void homa_ep_input(struct homa_ep *ep, const uint8_t *buf, size_t len,
		   const union sockaddr_in_union *src, int core, uint64_t now)
{
	enum homa_wire_error err;
	struct homa_pkt pkt;

	ep_see_time(ep, now);
	err = homa_wire_decode(buf, len, &pkt);
	if (err != HOMA_WIRE_OK) {
		ep_count(ep, decode_drop[err]);
		return;
	}
	ep->stats[HOMA_STAT_packets_rcvd_DATA + (pkt.type - HOMA_PKT_DATA)]++;
	if (pkt.dport != ep->port || !src || src->sa.sa_family != ep->family ||
	    homa_addr_port(src) != pkt.sport) {
		ep_count(ep, HOMA_STAT_drop_wrong_port);
		return;
	}
	dispatch(ep, &pkt, src, core, now);
}
