// SPDX-License-Identifier: BSD-2-Clause
/*
 * Payload copies of incoming DATA into the buffer pool, made at once or
 * deferred (homa_ep_defer_copies) until homa_ep_finish_copies.  See
 * homa_endpoint.h.
 */

#include <string.h>

#include "homa_ep_internal.h"

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

void ep_store_payload(struct homa_ep *ep, struct homa_rpc *rpc,
		      const struct homa_pkt *pkt)
{
	uint32_t done = 0;

	if (pkt->payload_placed)
		return;
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
