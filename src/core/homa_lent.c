// SPDX-License-Identifier: BSD-2-Clause
/*
 * Lent memory (homa_lent.h): the places in the buffer pool lent to the
 * caller for the payload of the next DATA packets of the message that
 * arrives in large packets (a loopback sender's), so that the kernel
 * writes it there and the endpoint copies nothing, what the input batch
 * says of them (placed, misplaced, or the kernel could not write there);
 * and the end of a lent message (homa_ep_lent_settle).
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
		 * likely begins another (read_one). */
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

/* fill_place - p describes the packet of rpc carrying [offset, offset +
 * len) and the pool memory those bytes go to.  Returns false when they do
 * not fit in HOMA_LENT_PLACE_IOVS pieces (p is then unusable). */
static bool fill_place(const struct homa_ep *ep, const struct homa_rpc *rpc,
		       uint32_t offset, uint32_t len, struct homa_lent_place *p)
{
	uint32_t done = 0;

	_Static_assert(HOMA_LENT_MATCH_LEN == HOMA_DATA_HDR_LEN,
		       "a place matches a DATA header");
	p->iovcnt = 0;
	while (done < len) {
		uint32_t avail;
		void *dst = homa_pool_buffer(ep->pool, rpc->bpages,
					     rpc->num_bpages, rpc->in.length,
					     offset + done, &avail);

		if (!dst || avail == 0 || p->iovcnt == HOMA_LENT_PLACE_IOVS)
			return false;
		if (avail > len - done)
			avail = len - done;
		p->iov[p->iovcnt].iov_base = dst;
		p->iov[p->iovcnt].iov_len = avail;
		p->iovcnt++;
		done += avail;
	}
	p->src = rpc->dest;
	p->hdr_len = HOMA_DATA_HDR_LEN;
	p->payload_len = len;
	p->sender_id = rpc->id ^ 1;
	p->message_length = rpc->in.length;
	p->offset = offset;
	homa_wire_data_match(p->sender_id, p->message_length, offset, p->want,
			     p->mask);
	return true;
}

void homa_ep_lent_places(struct homa_ep *ep, struct homa_lent_places *out)
{
	struct homa_rpc *rpc;

	/* The caller reads into its buffers next: the copies out of them
	 * that earlier batches deferred are made now. */
	ep_finish_copies(ep);
	rpc = hint_rpc(ep);
	uint32_t offset, end;

	out->n = 0;
	out->read_one = ep->place_probe && !rpc;
	if (!rpc)
		return;
	/* Every byte from recv_end on is still to come, so nothing a place
	 * names holds data yet; the sender sends no further than granted. */
	offset = rpc->in.recv_end;
	end = rpc->in.granted < rpc->in.length ? rpc->in.granted
					       : rpc->in.length;
	if (offset % rpc->in_seg != 0)
		return;
	while (out->n < HOMA_LENT_PLACES && offset < end) {
		uint32_t len = rpc->in.length - offset < rpc->in_seg ?
			       rpc->in.length - offset : rpc->in_seg;

		if (!fill_place(ep, rpc, offset, len, &out->place[out->n]))
			break;
		offset += len;
		out->n++;
	}
}

/* place_rpc - the RPC place p was lent for, if it still exists. */
static struct homa_rpc *place_rpc(struct homa_ep *ep,
				  const struct homa_lent_place *p)
{
	bool wrong_peer;

	return ep_find_rpc(ep, p->sender_id, &p->src, &wrong_peer);
}

bool ep_lent_placed(struct homa_ep *ep, const struct homa_lent_place *p,
		    const struct homa_pkt *pkt, bool placed)
{
	struct homa_rpc *rpc;

	if (placed && pkt->type == HOMA_PKT_DATA &&
	    pkt->sender_id == p->sender_id &&
	    pkt->message_length == p->message_length &&
	    pkt->offset == p->offset && pkt->payload_len == p->payload_len) {
		ep_count(ep, HOMA_STAT_rx_placed);
		return true;
	}
	ep_count(ep, HOMA_STAT_rx_misplaced);
	if (pkt->type != HOMA_PKT_DATA || pkt->sender_id != p->sender_id ||
	    pkt->offset == p->offset)
		return false;
	/* A packet of the same message, not the one expected: its sender's
	 * packets do not line up with the guesses (or one was lost); guess
	 * no more for it, as every wrong guess costs a copy. */
	rpc = place_rpc(ep, p);
	if (rpc) {
		rpc->in_seg = 0;
		rpc->no_placement = true;
	}
	return false;
}

void ep_lent_fault(struct homa_ep *ep, const struct homa_lent_places *places)
{
	for (int i = 0; i < places->n; i++) {
		struct homa_rpc *rpc = place_rpc(ep, &places->place[i]);

		if (rpc && rpc->has_buffers)
			ep_copy_fault(ep, rpc);
	}
}

bool homa_ep_lent_settle(struct homa_ep *ep, uint32_t max_bytes)
{
	struct homa_rpc *rpc = ep->lent;

	if (!rpc)
		return true;
	if (rpc->is_client && rpc->state == HOMA_RPC_READY) {
		/* The response is complete: the server had the whole
		 * request, which will never be sent again. */
		if (rpc->has_out)
			homa_msgout_forget_lent(&rpc->out);
		ep_count(ep, HOMA_STAT_tx_copies_skipped);
		ep->lent = NULL;
		return true;
	}
	if (!homa_msgout_settle_part(&rpc->out, max_bytes))
		return false;
	ep->lent = NULL;
	return true;
}
