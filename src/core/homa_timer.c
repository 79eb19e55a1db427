// SPDX-License-Identifier: BSD-2-Clause
/*
 * The endpoint's timer: once a tick, every RPC that waits on its peer and
 * has heard nothing counts a silent tick; silent RPCs ask for what they
 * miss (RESEND) and, after timeout_ticks (alive_timeout_ticks while the
 * peer's socket makes progress on other RPCs, or after the server answered
 * the request with BUSY), fail (client) or are
 * dropped (server).  Servers whose response is sent ask for an ACK
 * (NEED_ACK).  A tick in which the endpoint never caught up with its input
 * (homa_rx_batch.behind) counts for none of this.
 */

#include <errno.h>
#include <string.h>

#include "homa_addr.h"
#include "homa_ep_internal.h"

/* waits_on_peer - true when rpc can progress only through its peer (so a
 * silent tick counts against it). */
static bool waits_on_peer(const struct homa_rpc *rpc)
{
	if (rpc->state == HOMA_RPC_READY || rpc->state == HOMA_RPC_IN_SERVICE)
		return false;
	if (rpc->has_in && rpc->state == HOMA_RPC_INCOMING) {
		/* Waiting for our own buffers: a client keeps its response
		 * for as long as it takes; a server keeps a request only
		 * while the client shows it is alive (its RESENDs). */
		if (!rpc->has_buffers)
			return !rpc->is_client;
		if (rpc->in.received >= rpc->in.granted &&
		    rpc->in.granted < rpc->in.length)
			return false;      /* our turn to grant */
		return true;
	}
	if (rpc->has_out && homa_msgout_has_work(&rpc->out))
		return false;              /* we are sending */
	return true;
}

/* server_response_sent - a server RPC whose response has gone out. */
static bool server_response_sent(const struct homa_rpc *rpc)
{
	return !rpc->is_client && rpc->has_out &&
	       homa_msgout_fully_sent(&rpc->out);
}

/* probe - a silent RPC asks its peer for what it misses: the receiver of a
 * message RESENDs its gaps (ep_resend_due, ep_request_missing: within its
 * host's loss-recovery budget; a client with no response yet RESENDs its
 * first bytes, which a server still holding the request answers with
 * BUSY);
 * a server whose response waits for grants sends an empty RESEND, answered
 * by BUSY or RPC_UNKNOWN. */
static void probe(struct homa_ep *ep, struct homa_rpc *rpc)
{
	struct homa_pkt pkt;

	if ((rpc->has_in && rpc->state == HOMA_RPC_INCOMING) ||
	    rpc->is_client) {
		ep_resend_due(ep, rpc);
		return;
	}
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HOMA_PKT_RESEND;
	pkt.sender_id = rpc->id;
	pkt.priority = ep_ctrl_priority(ep);
	ep_queue_ctrl(ep, &pkt, &rpc->dest);
}

/* may_probe - false when a probe of rpc would send nothing: its message has
 * no buffers to store data in yet, or it is a server whose response is
 * sent (NEED_ACK asks after those). */
static bool may_probe(const struct homa_rpc *rpc)
{
	return !(rpc->has_in && !rpc->has_buffers) &&
	       !server_response_sent(rpc);
}

/* time_out - rpc has been silent too long. */
static void time_out(struct homa_ep *ep, struct homa_rpc *rpc)
{
	ep_count(ep, HOMA_STAT_rpc_timeouts);
	if (rpc->is_client) {
		ep_rpc_fail(ep, rpc, ETIMEDOUT);
	} else {
		ep_count(ep, HOMA_STAT_server_rpcs_timed_out);
		ep_rpc_free(ep, rpc);
	}
}

/* need_ack_due - true when a server whose response is sent should ask for
 * an ACK now: request_ack_ticks after the response, then after 2, 4,
 * 8, ... ticks up to ep_backoff_cap (a client too busy to answer is not
 * asked every tick; the RPC times out as before). */
static bool need_ack_due(const struct homa_ep *ep, struct homa_rpc *rpc)
{
	return homa_backoff_due(&rpc->need_ack_backoff, rpc->done_ticks,
				(uint32_t)ep->cfg.request_ack_ticks, 1,
				ep_backoff_cap(ep), true);
}

/* Probes of an RPC after which the gap stays at the base interval even
 * though its peer makes progress on other RPCs (the first three probes
 * come resend_interval apart): ordinary loss recovery (a lost packet,
 * then a lost RESEND or answer) stays as quick as with a quiet peer. */
#define PROBES_BEFORE_ALIVE_BACKOFF 2

/* probe_answered - true when rpc's last probe was followed by a sign of
 * life: a BUSY for it, or, after PROBES_BEFORE_ALIVE_BACKOFF probes,
 * progress of any RPC with the peer's socket (ep_heard: the peer is alive,
 * only slow to get to this one, as an overloaded server is). */
static bool probe_answered(const struct homa_rpc *rpc)
{
	if (rpc->probe_answered)
		return true;
	return rpc->probes >= PROBES_BEFORE_ALIVE_BACKOFF &&
	       homa_peer_heard_since(rpc->peer, homa_addr_port(&rpc->dest),
				     rpc->probe_tick);
}

/* drain_ticks - for a peer in recovery (ep_peer_in_recovery) whose path
 * has delivered (homa_peer_rx_peak: the most in one tick lately), the
 * ticks the bytes granted to it and not received need at that pace
 * (peer->grant_out, as of the last grant update), at most ep_backoff_cap:
 * a message silent for less waits in the path's queue behind them rather
 * than being lost; else 0. */
static uint32_t drain_ticks(const struct homa_ep *ep,
			    const struct homa_peer *peer)
{
	uint64_t rate, ticks;

	if (!ep_peer_in_recovery(ep, peer))
		return 0;
	rate = homa_peer_rx_peak(peer, ep->tick);
	if (rate == 0)
		return 0;
	ticks = peer->grant_out / rate;
	return ticks < ep_backoff_cap(ep) ? (uint32_t)ticks :
	       ep_backoff_cap(ep);
}

/* first_probe - the quiet ticks before rpc's first probe: resend_ticks
 * (plus drain_ticks for an incoming message from a peer in recovery),
 * and for a client with no response yet (probe_after_wait) at least its
 * server host's usual response wait (homa_peer_wait_bound), up to
 * ep_backoff_cap: a server that is slow but alive is not asked after
 * requests it is still working on (each such probe costs it a BUSY, or a
 * second copy of a response already on its way). */
static uint32_t first_probe(const struct homa_ep *ep,
			    const struct homa_rpc *rpc)
{
	uint32_t first = (uint32_t)ep->cfg.resend_ticks;
	uint32_t bound, cap;

	if (rpc->has_in)
		return first + drain_ticks(ep, rpc->peer);
	if (!ep->cfg.probe_after_wait || !rpc->is_client)
		return first;
	bound = homa_peer_wait_bound(rpc->peer);
	cap = ep_backoff_cap(ep);
	if (bound > cap)
		bound = cap;
	return bound > first ? bound : first;
}

/* probe_due - true when a quiet RPC should probe now: first_probe ticks
 * after its last progress, then every resend_interval ticks while nothing is
 * heard from the peer (loss: ask as before); each probe followed by a sign
 * of life (probe_answered: alive but slow) doubles the gap, up to
 * ep_backoff_cap (short enough that the BUSYs answering an RPC's own
 * probes keep it alive).  Neither BUSY nor other packets restart this
 * schedule: a slow peer is asked less and less often. */
static bool probe_due(const struct homa_ep *ep, struct homa_rpc *rpc)
{
	bool due = homa_backoff_due(&rpc->probe_backoff, rpc->quiet_ticks,
				    first_probe(ep, rpc),
				    (uint32_t)ep->cfg.resend_interval,
				    ep_backoff_cap(ep),
				    probe_answered(rpc));

	if (due) {
		rpc->probe_answered = false;
		rpc->probe_tick = ep->tick;
		rpc->probes++;
	}
	return due;
}

/* timed_out - rpc has been silent long enough to fail: timeout_ticks, or
 * alive_timeout_ticks while its peer is known to be alive: its socket was
 * heard from lately (ep_peer_alive: other RPCs with it progress, so the
 * peer is overloaded, not gone), or the server answered this request with
 * BUSY (busy_heard: it holds the request, and a silence after that is a
 * stall of a live server, such as one whose threads all compute, rather
 * than a lost RPC). */
static bool timed_out(const struct homa_ep *ep, const struct homa_rpc *rpc)
{
	if (rpc->silent_ticks < (uint32_t)ep->cfg.timeout_ticks)
		return false;
	if (rpc->silent_ticks >= (uint64_t)ep->cfg.alive_timeout_ticks)
		return true;
	return !rpc->busy_heard && !ep_peer_alive(ep, rpc);
}

/* The timer's pass over the RPCs of one tick: where RPCs whose probe is
 * due but found no room in their host's budget are moved to. */
struct tick_pass {
	struct homa_list *kept_waiting; /* the last one moved, or the head;
					 * never an RPC freed in the pass */
};

/* keep_waiting - rpc's probe is due but max_peer_probes went to its host
 * this tick: it stays due for the next ticks, and moves to the front of
 * the endpoint's RPCs, after those already kept waiting in this pass, so
 * that the next ticks serve the RPCs kept waiting longest first and no
 * RPC is passed over for ever by others of the same host. */
static void keep_waiting(struct homa_rpc *rpc, struct tick_pass *pass)
{
	if (pass->kept_waiting->next != &rpc->all_links) {
		homa_list_del(&rpc->all_links);
		homa_list_insert_before(pass->kept_waiting->next,
					&rpc->all_links);
	}
	pass->kept_waiting = &rpc->all_links;
}

/* held_by_budget - false when room says the host's budget of this tick
 * has room; else true, and rpc, if its schedule (b, count, first) says it
 * is due, is kept waiting (keep_waiting) for the next ticks. */
static bool held_by_budget(bool room, const struct homa_backoff *b,
			   uint32_t count, uint32_t first,
			   struct homa_rpc *rpc, struct tick_pass *pass)
{
	if (room)
		return false;
	if (homa_backoff_peek(b, count, first))
		keep_waiting(rpc, pass);
	return true;
}

/* maybe_probe - count a quiet tick of rpc, and probe it if its schedule
 * says so and there is room: in the control queue (half full: a due probe
 * waits for a later tick, leaving room for answers) and in its host's
 * budget of max_peer_probes per tick (an overloaded server with thousands
 * of waiting RPCs is not asked after each of them every few ticks; RPCs
 * kept waiting go first later). */
static void maybe_probe(struct homa_ep *ep, struct homa_rpc *rpc,
			struct tick_pass *pass)
{
	rpc->quiet_ticks++;
	if (!may_probe(rpc) || !ep_ctrl_room_for_timer(ep))
		return;
	if (held_by_budget(homa_peer_probe_room(rpc->peer, ep->tick,
				(uint32_t)ep->cfg.max_peer_probes),
			   &rpc->probe_backoff, rpc->quiet_ticks,
			   first_probe(ep, rpc), rpc, pass))
		return;
	if (probe_due(ep, rpc)) {
		probe(ep, rpc);
		homa_peer_probe_taken(rpc->peer, ep->tick);
	}
}

/* maybe_need_ack - a server whose response is sent asks for an ACK when
 * need_ack_due says so and there is room: in the control queue, and in
 * its host's budget of max_peer_need_acks per tick (a client too busy to
 * read its responses soon is not asked after each of them; its ACK
 * carries the acks of every response it has read; RPCs kept waiting go
 * first later). */
static void maybe_need_ack(struct homa_ep *ep, struct homa_rpc *rpc,
			   struct tick_pass *pass)
{
	if (!ep_ctrl_room_for_timer(ep))
		return;
	if (held_by_budget(homa_peer_need_ack_room(rpc->peer, ep->tick,
				(uint32_t)ep->cfg.max_peer_need_acks),
			   &rpc->need_ack_backoff, rpc->done_ticks,
			   (uint32_t)ep->cfg.request_ack_ticks, rpc, pass))
		return;
	if (need_ack_due(ep, rpc)) {
		ep_queue_simple(ep, HOMA_PKT_NEED_ACK, rpc->id, &rpc->dest);
		homa_peer_need_ack_taken(rpc->peer, ep->tick);
	}
}

/* tick_rpc - the timer's work for one RPC. */
static void tick_rpc(struct homa_ep *ep, struct homa_rpc *rpc,
		     struct tick_pass *pass)
{
	bool response_sent = server_response_sent(rpc);

	if (rpc->copy_fault && rpc->state == HOMA_RPC_INCOMING) {
		/* Its region is gone (homa_ep_params.copier). */
		if (rpc->is_client)
			ep_rpc_fail(ep, rpc, EFAULT);
		else
			ep_rpc_free(ep, rpc);
		return;
	}

	if (!response_sent && !waits_on_peer(rpc)) {
		rpc->silent_ticks = 0;
		ep_rpc_progress(rpc);
		return;
	}
	if (response_sent)
		rpc->done_ticks++;
	rpc->silent_ticks++;
	if (timed_out(ep, rpc)) {
		time_out(ep, rpc);         /* before it may be kept waiting */
		return;
	}
	if (response_sent)
		maybe_need_ack(ep, rpc, pass);
	else
		maybe_probe(ep, rpc, pass);
}

/* timer_tick - one tick of the timer at now. */
static void timer_tick(struct homa_ep *ep, uint64_t now)
{
	struct homa_list *pos, *tmp;
	struct tick_pass pass;
	bool counts = ep->caught_up;

	/* A tick in which the input was never read up does not count: the
	 * endpoint's clock of ticks (silence, stalls, liveness) stands still
	 * while its own backlog may hide what its peers sent. */
	ep->caught_up = !ep->input_behind;
	if (counts) {
		ep->tick++;
		if (ep->overload_ticks > 0)
			ep->overload_ticks--;
	} else {
		ep->overload_ticks = HOMA_OVERLOAD_TICKS;
		ep_count(ep, HOMA_STAT_ticks_behind);
	}
	/* Acks that no DATA carried out within a tick go in ACK packets, so
	 * that servers free their RPCs before they ask with NEED_ACK. */
	while (!homa_list_empty(&ep->ack_peers))
		ep_flush_acks(ep, homa_container(ep->ack_peers.next,
						 struct homa_peer, ack_links));
	/* Leases of partly used bpages expire with time alone: let waiting
	 * messages try again. */
	if (!homa_list_empty(&ep->waiting))
		ep_check_waiting(ep, 0, now);
	if (counts) {
		/* Space held by requests whose clients went quiet goes to
		 * live waiting messages (outside every list walk). */
		ep_reclaim_buffers(ep);
		pass.kept_waiting = &ep->all;
		/* The RPCs that time out in this walk (thousands, after a
		 * flood) leave the grants to the one recompute below. */
		ep->in_tick = true;
		homa_list_for_each_safe(pos, tmp, &ep->all)
			tick_rpc(ep, homa_container(pos, struct homa_rpc,
						    all_links), &pass);
		ep->in_tick = false;
		/* The RESENDs found due, each host's shortest first. */
		ep_resend_flush(ep);
	}
	/* Grants held back (by max_incoming or the overcommit) are
	 * reconsidered even when no packet arrives. */
	ep_grant_update(ep);
}

uint64_t homa_ep_next_timer(const struct homa_ep *ep)
{
	uint64_t wake = ep_pacer_wake(ep);

	if (wake == 0)
		return ep->next_tick_ns;
	return wake < ep->next_tick_ns ? wake : ep->next_tick_ns;
}

void homa_ep_timer(struct homa_ep *ep, uint64_t now)
{
	if (ep->next_tick_ns == 0) {
		ep_see_time(ep, now);
		return;
	}
	if (now < ep->next_tick_ns)
		return;
	ep->next_tick_ns = now + ep->tick_ns;
	timer_tick(ep, now);
}
