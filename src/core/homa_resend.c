// SPDX-License-Identifier: BSD-2-Clause
/*
 * RESENDs the receiver of a message asks with: for what a silent sender
 * still owes (its gaps and the granted tail), for all of a message whose
 * data was dropped while it waited for buffer space, and for the rest of
 * a tail once its probe comes back retransmitted.
 */

#include <string.h>

#include "homa_ep_internal.h"

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

void ep_ask_again(struct homa_ep *ep, struct homa_rpc *rpc)
{
	queue_resend(ep, rpc, 0, HOMA_RESEND_ALL,
		     resend_priority(ep, rpc, true));
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
			/* The tail: one packet (ep_tail_probe_answered). */
			end = ranges[i].start + ep_peer_seg(ep, rpc->peer);
			rpc->tail_probing = true;
			rpc->tail_probe = ranges[i].start;
		}
		queue_resend(ep, rpc, ranges[i].start, end - ranges[i].start,
			     prio);
	}
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
			     resend_priority(ep, rpc, false));
}
