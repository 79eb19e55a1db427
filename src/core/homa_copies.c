// SPDX-License-Identifier: BSD-2-Clause
/*
 * Payload copies of incoming DATA into the buffer pool, made at once or
 * deferred (homa_rx_batch.defer_copies) until ep_finish_copies (the next
 * input batch or lent places, or the endpoint needs them), by memcpy or
 * by the caller's
 * copier (homa_ep_params.copier), which reports copies into memory the
 * application took away: their RPCs fail with EFAULT.  See
 * homa_endpoint.h.
 */

#include <string.h>

#include "homa_ep_internal.h"

/* copy_fault - ep_copy_fault (see homa_ep_internal.h), here for
 * make_copies to inline: it runs at every payload copy. */
static void copy_fault(struct homa_ep *ep, struct homa_rpc *rpc)
{
	if (!rpc->copy_fault)
		ep_count(ep, HOMA_STAT_copy_faults);
	rpc->copy_fault = true;
	if (ep->hint_id == rpc->id)
		ep->hint_id = 0;
}

void ep_copy_fault(struct homa_ep *ep, struct homa_rpc *rpc)
{
	copy_fault(ep, rpc);
}

/* make_copies - make c[0..n) of rpcs[0..n); a copy that faults marks its
 * RPC (copy_fault) and the rest go on, but for that RPC's (its memory is
 * gone). */
static void make_copies(struct homa_ep *ep, const struct homa_ep_copy *c,
			struct homa_rpc *const *rpcs, uint32_t n)
{
	uint32_t i = 0;

	if (!ep->copier) {
		for (; i < n; i++)
			memcpy(c[i].dst, c[i].src, c[i].len);
		return;
	}
	for (;;) {
		while (i < n && rpcs[i]->copy_fault)
			i++;
		if (i == n)
			return;
		i += ep->copier(ep->copier_ctx, c + i, n - i);
		if (i < n)
			copy_fault(ep, rpcs[i++]);
	}
}

void ep_finish_copies(struct homa_ep *ep)
{
	uint32_t n = ep->num_copies;

	/* Emptied first: a copy that faults changes no list here. */
	ep->num_copies = 0;
	ep->defer_copies = false;
	make_copies(ep, ep->copies, ep->copy_rpcs, n);
}

/* copy_payload - copy n bytes of rpc's message to dst now, or record the
 * copy while the batch in defers them (making the ones recorded first
 * when the record is full, and going on deferring). */
static void copy_payload(struct homa_ep *ep, struct homa_rpc *rpc, void *dst,
			 const uint8_t *src, uint32_t n)
{
	struct homa_ep_copy c = { dst, src, n };

	if (!ep->defer_copies) {
		make_copies(ep, &c, &rpc, 1);
		return;
	}
	if (ep->num_copies == HOMA_EP_DEFERRED_COPIES) {
		ep_finish_copies(ep);
		ep->defer_copies = true;
	}
	ep->copy_rpcs[ep->num_copies] = rpc;
	ep->copies[ep->num_copies++] = c;
}

void ep_store_payload(struct homa_ep *ep, struct homa_rpc *rpc,
		      const struct homa_pkt *pkt)
{
	uint32_t done = 0;

	if (pkt->payload_placed || rpc->copy_fault)
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
		copy_payload(ep, rpc, dst, pkt->payload + done, n);
		done += n;
	}
}
