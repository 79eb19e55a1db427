// SPDX-License-Identifier: BSD-2-Clause
/*
 * RESENDs the receiver of a message asks with: for what a silent sender
 * still owes (its gaps and the granted tail), for all of a message whose
 * data was dropped while it waited for buffer space, and for the rest of
 * a tail once its probe comes back retransmitted.
 *
 * What the timer's RESENDs to one host ask for in a tick is bounded by
 * that host's loss-recovery budget (homa_peer_resend_take): the bytes the
 * path delivered from it since the previous round, at least
 * resend_floor_packets packets.  The due RPCs of a host share it shortest
 * remaining message first, each asking for the first part of its first
 * gap first.  A repair therefore never asks a slow path for more than it
 * delivers, however fast link_mbps says the link is.
 */

#include <string.h>

#include "homa_ep_internal.h"

/* unsched_level - the level our cutoffs give the unscheduled bytes of a
 * message of length bytes (a sender that has our CUTOFFS uses it). */
static uint8_t unsched_level(const struct homa_ep *ep, uint32_t length)
{
	int64_t i;

	for (i = ep->cfg.num_priorities - 1; i > 0; i--)
		if (i < HOMA_NUM_PRIORITIES &&
		    (int64_t)length <= ep->cfg.unsched_cutoffs[i])
			return homa_config_level(&ep->cfg, i);
	return 0;
}

/* Probes without progress after which a message's repair is asked for at
 * its unscheduled level rather than its grant level: above every scheduled
 * message, still below shorter messages' unscheduled bytes, so that a
 * repair starved at the lowest levels of a busy switch port gets through
 * before its RPC times out. */
#define RESEND_PROBES_AT_GRANT_LEVEL 2

/*
 * resend_level - the level at which the retransmission of rpc's incoming
 * message from offset start is asked for.  resend_priority=control asks
 * at ep_ctrl_priority, as the kernel module does.  The default, message,
 * asks at the level the bytes had the first time: unscheduled bytes at
 * the level of unscheduled bytes of the message's length, the rest at its
 * last grant's level, and a message of which nothing arrived (length
 * unknown) at unknown_peer_priority.  So a repair of a long message never
 * takes the top level from short messages (a kernel sender, too, answers
 * at the level the RESEND names).
 */
static uint8_t resend_level(const struct homa_ep *ep,
			    const struct homa_rpc *rpc, uint32_t start)
{
	if (ep->cfg.resend_priority == HOMA_RESEND_PRIO_CONTROL)
		return ep_ctrl_priority(ep);
	if (!rpc->has_in)
		return ep_unknown_peer_priority(ep);
	if (start < ep_peer_unsched(ep, rpc->peer) ||
	    rpc->probes > RESEND_PROBES_AT_GRANT_LEVEL)
		return unsched_level(ep, rpc->in.length);
	return rpc->grant_priority;
}

/* queue_resend - queue a RESEND of rpc for length bytes from start (length
 * HOMA_RESEND_ALL: everything sent so far; 0: nothing, a probe a live
 * sender answers with BUSY) at priority prio and count it. */
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

/* min_u32 - the smaller of a and b. */
static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* budget_on - true when the loss-recovery budget bounds the RESENDs of
 * rpc (ep_budget_on). */
static bool budget_on(const struct homa_ep *ep, const struct homa_rpc *rpc)
{
	return ep_budget_on(ep, rpc->peer);
}

/* budget_floor - the least a round of rpc's host's budget holds:
 * resend_floor_packets full packets. */
static uint64_t budget_floor(const struct homa_ep *ep,
			     const struct homa_rpc *rpc)
{
	return (uint64_t)ep->cfg.resend_floor_packets *
	       ep_peer_seg(ep, rpc->peer);
}

/* budget_take - up to want bytes of rpc's host's budget in this tick
 * (homa_peer_resend_take); want itself when there is no budget. */
static uint32_t budget_take(struct homa_ep *ep, struct homa_rpc *rpc,
			    uint32_t want)
{
	if (!budget_on(ep, rpc))
		return want;
	return homa_peer_resend_take(rpc->peer, ep->tick,
				     budget_floor(ep, rpc), want);
}

void ep_ask_again(struct homa_ep *ep, struct homa_rpc *rpc)
{
	queue_resend(ep, rpc, 0, HOMA_RESEND_ALL, resend_level(ep, rpc, 0));
}

/*
 * request_nothing_yet - nothing of rpc's incoming message has arrived: ask
 * for all of it that was sent (a server still holding the request answers
 * BUSY); with the budget, for its first packet only (taken from the
 * budget), the rest asked for once it comes back.  A slow receiver asking for everything of every
 * silent RPC once flooded itself with retransmissions of packets that sat
 * unread in its own socket buffer; ticks behind its input now count no
 * silence (homa_rx_batch.behind), so such RPCs do not ask.
 */
static void request_nothing_yet(struct homa_ep *ep, struct homa_rpc *rpc)
{
	uint32_t len = HOMA_RESEND_ALL;

	if (budget_on(ep, rpc)) {
		/* One packet: the answer (BUSY, RPC_UNKNOWN, or the first
		 * packet back, ep_resend_part_answered) says what more to
		 * ask for; a response merely on its way is not sent twice. */
		len = ep_peer_seg(ep, rpc->peer);
		(void)budget_take(ep, rpc, len);
		rpc->resend_cut = len;
	}
	queue_resend(ep, rpc, 0, len, resend_level(ep, rpc, 0));
}

/* tail_probe - with the ablation resend_tail_probe, the tail range r of
 * rpc (from the last arrival) is cut to one packet, remembered in rpc
 * (ep_tail_probe_answered asks for the rest). */
static void tail_probe(struct homa_ep *ep, struct homa_rpc *rpc,
		       struct homa_gap *r)
{
	uint32_t seg = ep_peer_seg(ep, rpc->peer);

	if (!ep->cfg.resend_tail_probe || r->start != rpc->in.recv_end ||
	    r->end - r->start <= seg)
		return;
	r->end = r->start + seg;
	rpc->tail_probing = true;
	rpc->tail_probe = r->start;
}

/*
 * regrant - the tail of rpc's message past its last arrival was asked for
 * in part only (the budget): its last GRANT may have been lost, and a
 * sender that never heard of it sends nothing more (a RESEND cut short
 * grants only its part, so the message would move on a part per probe).
 * The GRANT goes again: a sender that had it ignores it, one that lost it
 * sends the rest as it was granted.
 */
static void regrant(struct homa_ep *ep, struct homa_rpc *rpc)
{
	struct homa_pkt pkt;

	if (!rpc->admitted || rpc->in.recv_end >= rpc->in.granted)
		return;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HOMA_PKT_GRANT;
	pkt.sender_id = rpc->id;
	pkt.offset = rpc->in.granted;
	pkt.priority = rpc->grant_priority;
	ep_queue_ctrl(ep, &pkt, &rpc->dest);
}

void ep_request_missing(struct homa_ep *ep, struct homa_rpc *rpc)
{
	struct homa_gap ranges[HOMA_MSGIN_GAPS_CAP + 1];
	int n, i;

	if (!rpc->has_in) {
		request_nothing_yet(ep, rpc);
		return;
	}
	n = homa_msgin_missing(&rpc->in, ranges, HOMA_MSGIN_GAPS_CAP + 1);
	rpc->tail_probing = false;
	rpc->resend_cut = 0;
	for (i = 0; i < n; i++) {
		uint32_t want, len;

		tail_probe(ep, rpc, &ranges[i]);
		want = ranges[i].end - ranges[i].start;
		len = budget_take(ep, rpc, want);
		if (len == 0 && i == 0)
			/* Every due RPC asks for at least one packet, so
			 * that long messages are never starved for good. */
			len = min_u32(want, ep_peer_seg(ep, rpc->peer));
		if (len == 0)
			break;
		queue_resend(ep, rpc, ranges[i].start, len,
			     resend_level(ep, rpc, ranges[i].start));
		if (len < want || (i + 1 < n && budget_on(ep, rpc) &&
				   rpc->peer->round_left == 0)) {
			/* The budget is spent: the rest once this part
			 * has come (ep_resend_part_answered). */
			rpc->resend_cut = ranges[i].start + len;
			break;
		}
	}
	if (n > 0)
		rpc->peer->loss_tick = ep->tick + 1;
	if (rpc->resend_cut != 0)
		regrant(ep, rpc);
}

void ep_tail_probe_answered(struct homa_ep *ep, struct homa_rpc *rpc,
			    const struct homa_pkt *pkt, bool at_tail)
{
	if (!rpc->tail_probing || !at_tail || !pkt->retransmit ||
	    pkt->offset != rpc->tail_probe)
		return;
	rpc->tail_probing = false;
	if (rpc->in.recv_end < rpc->in.granted)
		queue_resend(ep, rpc, rpc->in.recv_end,
			     rpc->in.granted - rpc->in.recv_end,
			     resend_level(ep, rpc, rpc->in.recv_end));
}

void ep_resend_part_answered(struct homa_ep *ep, struct homa_rpc *rpc,
			     const struct homa_pkt *pkt)
{
	uint32_t end = pkt->offset + pkt->payload_len;

	if (rpc->resend_cut == 0 || !pkt->retransmit ||
	    end < rpc->resend_cut || pkt->offset >= rpc->resend_cut)
		return;
	rpc->resend_cut = 0;
	homa_peer_resend_round(rpc->peer, ep->tick, budget_floor(ep, rpc));
	ep_request_missing(ep, rpc);
}

/* remaining - the order of rpc among its host's due RPCs: bytes still to
 * arrive of its message (0 when nothing arrived: its length is unknown and
 * its RESEND asks for a first packet, so it goes first). */
static uint32_t remaining(const struct homa_rpc *rpc)
{
	return rpc->has_in ? homa_msgin_remaining(&rpc->in) : 0;
}

void ep_resend_due(struct homa_ep *ep, struct homa_rpc *rpc)
{
	struct homa_peer *peer = rpc->peer;
	struct homa_list *pos;

	if (!budget_on(ep, rpc)) {
		ep_request_missing(ep, rpc);
		return;
	}
	if (!homa_list_empty(&rpc->due_links))
		return;
	for (pos = peer->due.next; pos != &peer->due; pos = pos->next)
		if (remaining(homa_container(pos, struct homa_rpc,
					     due_links)) > remaining(rpc))
			break;
	homa_list_insert_before(pos, &rpc->due_links);
	ep->resends_due++;
	if (homa_list_empty(&peer->due_links))
		homa_list_add_tail(&ep->due_peers, &peer->due_links);
}

void ep_resend_flush(struct homa_ep *ep)
{
	while (!homa_list_empty(&ep->due_peers)) {
		struct homa_peer *peer = homa_container(ep->due_peers.next,
							struct homa_peer,
							due_links);

		while (!homa_list_empty(&peer->due)) {
			struct homa_rpc *rpc = homa_container(
				peer->due.next, struct homa_rpc, due_links);

			homa_list_del(&rpc->due_links);
			ep->resends_due--;
			ep_request_missing(ep, rpc);
		}
		homa_list_del(&peer->due_links);
	}
}
