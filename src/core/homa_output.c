// SPDX-License-Identifier: BSD-2-Clause
/*
 * Packet output of the endpoint: the list of RPCs with DATA to send, and
 * homa_ep_output, which hands out control packets first (the queue of
 * homa_ctrl.c), then DATA of the message the pacer chooses, whole or as a
 * gathered run.  See homa_endpoint.h (homa_ep_output, homa_ep_info.pacer_wake)
 * and homa_pacer.h (the link-queue estimate and the choice).
 */

#include <stdlib.h>
#include <string.h>

#include "homa_addr.h"
#include "homa_ep_internal.h"

/* ---- the sendable list ---- */

void ep_update_sendable(struct homa_ep *ep, struct homa_rpc *rpc)
{
	bool work = rpc->has_out && !rpc->held &&
		    homa_msgout_has_work(&rpc->out);

	if (work && homa_list_empty(&rpc->send_links))
		homa_list_add_tail(&ep->sendable, &rpc->send_links);
	else if (!work)
		homa_list_del(&rpc->send_links);
}

/* ---- DATA under the pacer ---- */

/* pacer_cand - rpc as the pacer's choice sees it: exempt without a pacer
 * or towards a loopback peer (no NIC queue to keep short). */
static struct homa_pacer_cand pacer_cand(const struct homa_ep *ep,
					 const struct homa_rpc *rpc)
{
	struct homa_pacer_cand c = {
		.length = rpc->out.length,
		.remaining = homa_msgout_remaining(&rpc->out),
		.birth = rpc->birth,
		.exempt = (ep->cfg.flags & HOMA_FLAG_DONT_THROTTLE) ||
			  rpc->peer->loopback,
	};

	return c;
}

/* unpaced - true when rpc's DATA bypasses the pacer: no pacer at all, a
 * message under throttle_min_bytes, or a loopback peer. */
static bool unpaced(const struct homa_ep *ep, const struct homa_rpc *rpc)
{
	struct homa_pacer_cand c = pacer_cand(ep, rpc);

	return homa_pacer_bypass(&ep->pacer, &c);
}

/* next_data_rpc - the RPC whose DATA goes next, as the pacer chooses among
 * the sendable ones (homa_pacer_choice_start), or NULL (ep->pacer_blocked
 * tells whether the pacer held data back). */
static struct homa_rpc *next_data_rpc(struct homa_ep *ep, uint64_t now)
{
	struct homa_pacer_choice ch;
	struct homa_rpc *best = NULL;
	struct homa_list *pos;

	ep->pacer_blocked = false;
	if (homa_list_empty(&ep->sendable))
		return NULL;
	homa_pacer_choice_start(&ep->pacer, now,
				!(ep->cfg.flags & HOMA_FLAG_DONT_THROTTLE),
				&ch);
	for (pos = ep->sendable.next; pos != &ep->sendable; pos = pos->next) {
		struct homa_rpc *rpc = homa_container(pos, struct homa_rpc,
						      send_links);
		struct homa_pacer_cand c = pacer_cand(ep, rpc);

		if (homa_pacer_choice_offer(&ch, &c))
			best = rpc;
	}
	ep->pacer_blocked = homa_pacer_choice_blocked(&ch);
	return best;
}

/* data_priority - the priority of a DATA packet of rpc. */
static uint8_t data_priority(struct homa_ep *ep, struct homa_rpc *rpc,
			     const struct homa_segment *s)
{
	if (s->retransmit)
		return rpc->resend_priority;
	if (s->offset < rpc->out.unscheduled)
		return homa_peer_unsched_priority(
			rpc->peer, rpc->out.length, (int)ep->cfg.num_priorities,
			ep_unknown_peer_priority(ep));
	return rpc->out.sched_priority;
}

/* after_data - state changes once rpc's DATA packet has gone out. */
static void after_data(struct homa_ep *ep, struct homa_rpc *rpc)
{
	ep_update_sendable(ep, rpc);
	if (!homa_msgout_fully_sent(&rpc->out))
		return;
	if (rpc->is_client && rpc->state == HOMA_RPC_OUTGOING)
		rpc->state = HOMA_RPC_INCOMING;
}

/* Ethernet bytes around an IP packet: header 14, FCS 4, preamble 8,
 * inter-frame gap 12; an IP packet shorter than 46 bytes is padded. */
#define ETH_OVERHEAD 38
#define ETH_MIN_PAYLOAD 46

/* wire_bytes - bytes a packet of len occupies on the link (IP header, the
 * datapath's encapsulation and Ethernet framing included). */
static uint32_t wire_bytes(const struct homa_ep *ep, size_t len)
{
	uint32_t ip = (uint32_t)len + ep->encap +
		      (ep->family == AF_INET6 ? 40 : 20);

	return (ip < ETH_MIN_PAYLOAD ? ETH_MIN_PAYLOAD : ip) + ETH_OVERHEAD;
}

/* run_limit - most packets of rpc the next output may gather: out's
 * max_segs, and for a paced message the bytes of HOMA_RUN_QUEUE_FACTOR
 * times max_nic_queue_ns at link_mbps (at least 1). */
static uint32_t run_limit(const struct homa_ep *ep, const struct homa_rpc *rpc,
			  const struct homa_out *out)
{
	uint64_t bytes, segs;

	if (out->max_segs <= 1)
		return 1;
	if (unpaced(ep, rpc))
		return out->max_segs;
	/* Mbit/s times ns / 8000 = bytes. */
	bytes = (uint64_t)ep->cfg.link_mbps * HOMA_RUN_QUEUE_FACTOR *
		(uint64_t)ep->cfg.max_nic_queue_ns / 8000;
	segs = bytes / wire_bytes(ep, HOMA_DATA_HDR_LEN + rpc->out.seg);
	if (segs < 1)
		return 1;
	return segs < out->max_segs ? (uint32_t)segs : out->max_segs;
}

/* fill_data_hdrs - the header of each packet of run s of rpc, packet i's
 * at buf + i * stride; an ack waiting for the peer rides on the first.
 * The third and later headers are copies of the second with their offset
 * rewritten. */
static void fill_data_hdrs(struct homa_ep *ep, struct homa_rpc *rpc,
			   const struct homa_segment *s, uint8_t *buf,
			   size_t stride)
{
	struct homa_pkt pkt;
	struct homa_ack ack;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HOMA_PKT_DATA;
	pkt.sport = ep->port;
	pkt.dport = homa_addr_port(&rpc->dest);
	pkt.sender_id = rpc->id;
	pkt.message_length = rpc->out.length;
	pkt.incoming = s->retransmit ? s->offset + s->len : rpc->out.granted;
	pkt.cutoff_version = rpc->peer->cutoff_version;
	pkt.retransmit = s->retransmit;
	ack = homa_peer_pop_ack(rpc->peer, pkt.dport);
	if (ack.client_id) {
		pkt.num_acks = 1;
		pkt.acks[0] = ack;
		ep_count(ep, HOMA_STAT_acks_piggybacked);
	}
	for (uint32_t i = 0; i < s->count && i < 2; i++) {
		pkt.offset = s->offset + i * rpc->out.seg;
		homa_wire_encode_data_hdr(&pkt, buf + i * stride);
		pkt.num_acks = 0;
	}
	for (uint32_t i = 2; i < s->count; i++) {
		uint8_t *hdr = buf + i * stride;

		memcpy(hdr, buf + stride, HOMA_DATA_HDR_LEN);
		homa_wire_set_data_offset(hdr, s->offset + i * rpc->out.seg);
	}
}

/* build_data - write rpc's next DATA packet, or run of packets when out
 * allows gathering, into out.  Returns false when rpc had none. */
static bool build_data(struct homa_ep *ep, struct homa_rpc *rpc,
		       struct homa_out *out)
{
	struct homa_segment s;

	if (!homa_msgout_next_run(&rpc->out, run_limit(ep, rpc, out), &s)) {
		ep_update_sendable(ep, rpc);
		return false;
	}
	if (out->max_segs == 0) {
		fill_data_hdrs(ep, rpc, &s, out->buf, HOMA_DATA_HDR_LEN);
		memcpy(out->buf + HOMA_DATA_HDR_LEN,
		       homa_msgout_payload(&rpc->out, s.offset), s.len);
		out->len = HOMA_DATA_HDR_LEN + s.len;
		out->segs = 0;
	} else {
		/* The headers go into the frames of the message's copy:
		 * the run is then one buffer of whole packets. */
		uint8_t *frames = homa_msgout_frame(&rpc->out, s.offset);

		fill_data_hdrs(ep, rpc, &s, frames,
			       HOMA_DATA_HDR_LEN + rpc->out.seg);
		out->len = (size_t)s.count * HOMA_DATA_HDR_LEN + s.len;
		out->segs = s.count;
		out->frames = frames;
		out->payload_len = s.len;
		out->seg = rpc->out.seg;
		out->payload = rpc->out.lent ? rpc->out.lent + s.offset : NULL;
	}
	homa_addr_copy(&out->dest, &rpc->dest);
	out->priority = data_priority(ep, rpc, &s);
	ep->stats[HOMA_STAT_packets_sent_DATA] += s.count;
	if (s.retransmit)
		ep_count(ep, HOMA_STAT_resent_packets);
	after_data(ep, rpc);
	return true;
}

/* out_wire_bytes - link bytes of everything in out. */
static uint32_t out_wire_bytes(const struct homa_ep *ep,
			       const struct homa_out *out)
{
	if (out->segs == 0)
		return wire_bytes(ep, out->len);
	return (wire_bytes(ep, HOMA_DATA_HDR_LEN) - HOMA_DATA_HDR_LEN) *
	       out->segs + (uint32_t)out->len;
}

bool homa_ep_output(struct homa_ep *ep, uint64_t now, struct homa_out *out)
{
	struct homa_rpc *rpc;

	ep_see_time(ep, now);
	if (ep->grants_due) {
		/* Once per batch of arrivals, not once per packet. */
		ep->grants_due = false;
		ep_grant_update(ep);
	}
	if (ep_ctrl_pending(ep) && ep_ctrl_next(ep, out)) {
		if (!homa_addr_is_loopback(&out->dest))
			homa_pacer_sent(&ep->pacer, now,
					wire_bytes(ep, out->len));
		return true;
	}
	while ((rpc = next_data_rpc(ep, now)) != NULL) {
		if (build_data(ep, rpc, out)) {
			if (!rpc->peer->loopback)
				homa_pacer_sent(&ep->pacer, now,
						out_wire_bytes(ep, out));
			return true;
		}
	}
	return false;
}

uint64_t ep_pacer_wake(const struct homa_ep *ep)
{
	if (!ep->pacer_blocked || homa_list_empty(&ep->sendable))
		return 0;
	return homa_pacer_wake(&ep->pacer);
}
