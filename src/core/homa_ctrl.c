// SPDX-License-Identifier: BSD-2-Clause
/*
 * The endpoint's queue of control packets (every type but DATA): a ring of
 * encoded packets that grows up to max_ctrl_queue entries, filled by the
 * files that decide to send them and emptied by homa_ep_output
 * (homa_output.c) before any DATA.  See homa_ep_internal.h.
 */

#include <string.h>

#include "homa_addr.h"
#include "homa_alloc.h"
#include "homa_ep_internal.h"

/*
 * ctrl_grow - the control ring is full: double it (at most to
 * max_ctrl_queue entries), keeping the queued packets in order.  Returns
 * false when it may not or cannot grow.
 */
static bool ctrl_grow(struct homa_ep *ep)
{
	uint64_t cap = (uint64_t)ep->ctrl_cap * 2;
	struct homa_ctrl_entry *ring;
	uint32_t first;

	if (cap > (uint64_t)ep->cfg.max_ctrl_queue)
		cap = (uint64_t)ep->cfg.max_ctrl_queue;
	if (cap <= ep->ctrl_cap)
		return false;
	ring = homa_malloc(HOMA_ALLOC_CTRL, cap * sizeof(*ring));
	if (!ring)
		return false;
	first = ep->ctrl_cap - ep->ctrl_head;
	if (first > ep->ctrl_count)
		first = ep->ctrl_count;
	memcpy(ring, ep->ctrl + ep->ctrl_head, first * sizeof(*ring));
	memcpy(ring + first, ep->ctrl,
	       (ep->ctrl_count - first) * sizeof(*ring));
	homa_free(ep->ctrl);
	ep->ctrl = ring;
	ep->ctrl_head = 0;
	ep->ctrl_cap = (uint32_t)cap;
	return true;
}

void ep_queue_ctrl(struct homa_ep *ep, struct homa_pkt *pkt,
		   const union sockaddr_in_union *dest)
{
	struct homa_ctrl_entry *e;
	size_t len;

	if (ep->ctrl_count >= ep->ctrl_cap && !ctrl_grow(ep)) {
		ep_count(ep, HOMA_STAT_drop_ctrl_queue_full);
		return;
	}
	e = &ep->ctrl[(ep->ctrl_head + ep->ctrl_count) % ep->ctrl_cap];
	pkt->sport = ep->port;
	pkt->dport = homa_addr_port(dest);
	len = homa_wire_encode_ctrl(pkt, e->buf, sizeof(e->buf));
	if (len == 0)
		return;
	e->len = (uint8_t)len;
	e->priority = ep_ctrl_priority(ep);
	homa_addr_copy(&e->dest, dest);
	ep->ctrl_count++;
	ep->stats[HOMA_STAT_packets_sent_DATA + (pkt->type - HOMA_PKT_DATA)]++;
}

void ep_queue_simple(struct homa_ep *ep, uint8_t type, uint64_t sender_id,
		     const union sockaddr_in_union *dest)
{
	struct homa_pkt pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	pkt.sender_id = sender_id;
	ep_queue_ctrl(ep, &pkt, dest);
}

void ep_flush_acks(struct homa_ep *ep, struct homa_peer *peer)
{
	union sockaddr_in_union dest;
	struct homa_pkt pkt;
	int n;

	homa_list_del(&peer->ack_links);

	while (peer->num_acks > 0) {
		memset(&pkt, 0, sizeof(pkt));
		n = homa_peer_take_acks(peer, pkt.acks);
		pkt.type = HOMA_PKT_ACK;
		pkt.num_acks = (uint16_t)n;
		pkt.sender_id = pkt.acks[0].client_id;
		dest = peer->addr;
		homa_addr_set_port(&dest, pkt.acks[0].server_port);
		ep_queue_ctrl(ep, &pkt, &dest);
	}
}

bool ep_ctrl_next(struct homa_ep *ep, struct homa_out *out)
{
	struct homa_ctrl_entry *e;

	if (ep->ctrl_count == 0)
		return false;
	e = &ep->ctrl[ep->ctrl_head];
	memcpy(out->buf, e->buf, e->len);
	out->len = e->len;
	out->dest = e->dest;
	out->priority = e->priority;
	out->segs = 0;
	ep->ctrl_head = (ep->ctrl_head + 1) % ep->ctrl_cap;
	ep->ctrl_count--;
	return true;
}
