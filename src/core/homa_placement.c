// SPDX-License-Identifier: BSD-2-Clause
/*
 * Placement of incoming payload: the places in the buffer pool where the
 * next DATA packets of the message that arrives in large packets (a
 * loopback sender's) belong, so that the caller can have the kernel write
 * their payload there and the endpoint copies nothing
 * (homa_ep_rx_hints, homa_ep_hint_matches, homa_ep_input_placed), and
 * what follows when the kernel could not write there (homa_ep_rx_fault).
 * See homa_endpoint.h.
 */

#include <string.h>

#include "homa_addr.h"
#include "homa_ep_internal.h"

/* Payloads smaller than this are copied as always: placement pays only
 * for packets far larger than a network's MTU. */
#define PLACEMENT_MIN_PAYLOAD 16384

void ep_note_placement(struct homa_ep *ep, struct homa_rpc *rpc,
		       const struct homa_pkt *pkt)
{
	if (pkt->payload_len < PLACEMENT_MIN_PAYLOAD || rpc->no_placement ||
	    rpc->copy_fault)
		return;
	if (pkt->offset + pkt->payload_len < rpc->in.length)
		rpc->in_seg = pkt->payload_len; /* not the last: a full one */
	if (rpc->in_seg == 0 || homa_msgin_complete(&rpc->in)) {
		if (ep->hint_id == rpc->id)
			ep->hint_id = 0;
		/* A message of large packets ended: the next large packet
		 * likely begins another (homa_ep_rx_probe). */
		ep->place_probe = rpc->in_seg != 0;
		return;
	}
	ep->hint_id = rpc->id;
	ep->hint_src = rpc->dest;
}

/* hint_rpc - the RPC whose large DATA came last, if it still waits for
 * bytes into buffers it holds; else NULL. */
static struct homa_rpc *hint_rpc(struct homa_ep *ep)
{
	struct homa_rpc *rpc;

	if (ep->hint_id == 0)
		return NULL;
	if ((ep->hint_id & 1) == 0)
		rpc = homa_rpc_find_client(&ep->rpcs, ep->hint_id);
	else
		rpc = homa_rpc_find_server(&ep->rpcs, ep->hint_id,
					   &ep->hint_src);
	if (!rpc || rpc->state != HOMA_RPC_INCOMING || !rpc->has_in ||
	    !rpc->has_buffers || rpc->in_seg == 0 || rpc->copy_fault) {
		ep->hint_id = 0;
		return NULL;
	}
	return rpc;
}

/* fill_hint - h describes the packet of rpc carrying [offset, offset +
 * len) and the pool memory those bytes go to.  Returns false when they do
 * not fit in HOMA_EP_HINT_IOVS pieces (h is then unusable). */
static bool fill_hint(const struct homa_ep *ep, const struct homa_rpc *rpc,
		      uint32_t offset, uint32_t len, struct homa_rx_hint *h)
{
	uint32_t done = 0;

	memset(h, 0, sizeof(*h));
	h->src = rpc->dest;
	h->sender_id = rpc->id ^ 1;
	h->message_length = rpc->in.length;
	h->offset = offset;
	h->payload_len = len;
	while (done < len) {
		uint32_t avail;
		void *dst = homa_pool_buffer(ep->pool, rpc->bpages,
					     rpc->num_bpages, rpc->in.length,
					     offset + done, &avail);

		if (!dst || avail == 0 || h->iovcnt == HOMA_EP_HINT_IOVS)
			return false;
		if (avail > len - done)
			avail = len - done;
		h->iov[h->iovcnt].iov_base = dst;
		h->iov[h->iovcnt].iov_len = avail;
		h->iovcnt++;
		done += avail;
	}
	return true;
}

int homa_ep_rx_hints(struct homa_ep *ep, struct homa_rx_hint *out, int max)
{
	struct homa_rpc *rpc = hint_rpc(ep);
	uint32_t offset, end;
	int n = 0;

	if (!rpc)
		return 0;
	/* Every byte from recv_end on is still to come, so nothing a hint
	 * names holds data yet; the sender sends no further than granted. */
	offset = rpc->in.recv_end;
	end = rpc->in.granted < rpc->in.length ? rpc->in.granted
					       : rpc->in.length;
	if (offset % rpc->in_seg != 0)
		return 0;
	while (n < max && offset < end) {
		uint32_t len = rpc->in.length - offset < rpc->in_seg ?
			       rpc->in.length - offset : rpc->in_seg;

		if (!fill_hint(ep, rpc, offset, len, &out[n]))
			break;
		offset += len;
		n++;
	}
	return n;
}

bool homa_ep_rx_probe(struct homa_ep *ep)
{
	return ep->place_probe && !hint_rpc(ep);
}

bool homa_ep_hint_matches(struct homa_ep *ep, const struct homa_rx_hint *h,
			  const uint8_t *buf, size_t len,
			  const union sockaddr_in_union *src)
{
	struct homa_pkt pkt;
	struct homa_rpc *rpc;

	if (len < HOMA_DATA_HDR_LEN ||
	    homa_wire_decode(buf, len, &pkt) != HOMA_WIRE_OK ||
	    pkt.type != HOMA_PKT_DATA || pkt.sender_id != h->sender_id ||
	    !src || !homa_addr_equal(src, &h->src)) {
		ep_count(ep, HOMA_STAT_rx_misplaced);
		return false;
	}
	if (pkt.message_length == h->message_length &&
	    pkt.offset == h->offset && pkt.payload_len == h->payload_len) {
		ep_count(ep, HOMA_STAT_rx_placed);
		return true;
	}
	/* A packet of the same message, not the one expected: its sender's
	 * packets do not line up with the guesses (or one was lost); guess
	 * no more for it, as every wrong guess costs a copy. */
	ep_count(ep, HOMA_STAT_rx_misplaced);
	rpc = (h->sender_id & 1) == 0
		      ? homa_rpc_find_server(&ep->rpcs, h->sender_id ^ 1, src)
		      : homa_rpc_find_client(&ep->rpcs, h->sender_id ^ 1);
	if (rpc) {
		rpc->in_seg = 0;
		rpc->no_placement = true;
	}
	return false;
}

void homa_ep_rx_fault(struct homa_ep *ep, const struct homa_rx_hint *hints,
		      int n)
{
	for (int i = 0; i < n; i++) {
		bool wrong_peer;
		struct homa_rpc *rpc = ep_find_rpc(ep, hints[i].sender_id,
						   &hints[i].src, &wrong_peer);

		if (rpc && rpc->has_buffers)
			ep_copy_fault(ep, rpc);
	}
}
