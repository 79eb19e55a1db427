// SPDX-License-Identifier: BSD-2-Clause
/*
 * The request window: a client's backpressure towards each server host.
 *
 * The unscheduled bytes of a request go out before the server has said
 * anything, so a client that starts requests faster than a server host can
 * take them fills that host's receive queue until packets are dropped, and
 * the drops turn into RESENDs that cost more of the server's time.  The
 * windows bound what a client has in flight to one host without an answer.
 * The packet window: a request counts its unscheduled bytes (min(length,
 * unsched_bytes), packet by packet: window_cost) from the moment it starts
 * until the host shows it has read them (any packet for the RPC: a GRANT,
 * the first packet of its response, a RESEND asking for request bytes, or
 * a BUSY) or the RPC ends.  The buffer window: a request that needs grants
 * counts its length (the buffer space the host reserves for it) until the
 * host grants it (or sends its response, or asks for request bytes), which
 * an overloaded host defers (max_admitted).  While a new request does not
 * fit in request_window and request_buffer_window beside the host's
 * counts, it waits in the client (in peer->held, shortest first by
 * classes of length; a grant_fifo_fraction share of releases goes to the
 * oldest, so long requests are not starved) and is not subject to
 * timeouts.  A host with nothing unanswered always takes one request, so
 * a request larger than the window still goes.
 *
 * Nothing changes on the wire: a server (kernel Homa's too) sees a client
 * that starts requests as fast as answers come back, as a TCP sender's
 * window follows its receiver.
 */

#include <stdlib.h>

#include "homa_addr.h"
#include "homa_alloc.h"
#include "homa_ep_internal.h"

/* The least a packet counts in the packet window: what a full packet of a
 * 1500-byte link takes (a receiver's cost, in time and in socket buffer,
 * is mostly per packet: a window of tiny requests must not let thousands
 * of packets through). */
#define WINDOW_MIN_PACKET 1500

/* packet_cost - what one packet of payload bytes counts in the window. */
static uint32_t packet_cost(uint32_t payload)
{
	uint32_t bytes = payload + HOMA_DATA_HDR_LEN;

	return bytes > WINDOW_MIN_PACKET ? bytes : WINDOW_MIN_PACKET;
}

/* window_cost - the bytes rpc's request counts in its host's packet
 * window: its unscheduled packets (of the message's own packet size), each
 * at least WINDOW_MIN_PACKET. */
static uint32_t window_cost(const struct homa_rpc *rpc)
{
	uint32_t seg = rpc->out.seg, unsched = rpc->out.unscheduled;
	uint32_t full = (unsched - 1) / seg;    /* unsched >= 1 */

	return full * packet_cost(seg) + packet_cost(unsched - full * seg);
}

/* room - true when cost more fits beside used in a window of size window
 * (0: no limit); an empty window takes anything. */
static bool room(uint64_t used, uint64_t cost, uint64_t window)
{
	if (window == 0 || used == 0)
		return true;
	return used <= window && cost <= window - used;
}

/* buffer_cost - the bytes rpc's request counts in its host's buffer
 * window: its length when it needs grants (the receiver reserves buffer
 * space for all of it at its first packet, and answers it only when it
 * grants it), else 0 (a request sent whole is bounded by the packet
 * window already, and must not wait behind long ones). */
static uint32_t buffer_cost(const struct homa_rpc *rpc)
{
	return rpc->out.length > rpc->out.unscheduled ? rpc->out.length : 0;
}

/* packet_window - the packet window towards peer's host:
 * loopback_request_window for a loopback address (unless 0), else
 * request_window (0: no limit). */
static uint64_t packet_window(const struct homa_ep *ep,
			      const struct homa_peer *peer)
{
	return (uint64_t)ep_loopback_setting(peer->loopback,
					     ep->cfg.loopback_request_window,
					     ep->cfg.request_window);
}

/* window_fits - true when rpc's request may start towards its host: both
 * windows, of packets and of buffer space, have room for it. */
static bool window_fits(const struct homa_ep *ep, const struct homa_rpc *rpc)
{
	const struct homa_peer *peer = rpc->peer;
	uint32_t len = buffer_cost(rpc);

	return room(peer->unanswered, window_cost(rpc),
		    packet_window(ep, peer)) &&
	       (len == 0 || room(peer->unanswered_len, len,
				 (uint64_t)ep->cfg.request_buffer_window));
}

/* start_request - rpc's request counts in its host's windows and may
 * send. */
static void start_request(struct homa_ep *ep, struct homa_rpc *rpc)
{
	rpc->held = false;
	rpc->window_bytes = window_cost(rpc);
	rpc->peer->unanswered += rpc->window_bytes;
	rpc->window_len = buffer_cost(rpc);
	rpc->peer->unanswered_len += rpc->window_len;
	ep_update_sendable(ep, rpc);
}

/* Classes of held requests: class k holds lengths in [2^k, 2^(k+1)), the
 * last one everything longer. */
#define HELD_CLASSES 20

/* The requests waiting for one peer's windows: by length class, each
 * class in the order the requests came (so the oldest is at a class's
 * head).  Approximately shortest first (within a factor of two), in
 * constant time per request however many wait. */
struct homa_held {
	struct homa_list cls[HELD_CLASSES];
	uint32_t count;
	uint32_t releases;       /* releases, for the share of the oldest */
};

/* held_class - the class of a request of length bytes (>= 1). */
static int held_class(uint32_t length)
{
	int k = 0;

	while (k < HELD_CLASSES - 1 && (length >> (k + 1)) != 0)
		k++;
	return k;
}

/* held_queue - peer's queue of held requests, created when absent.
 * Returns NULL when out of memory. */
static struct homa_held *held_queue(struct homa_peer *peer)
{
	if (!peer->held) {
		peer->held = homa_calloc(HOMA_ALLOC_PEER, 1, sizeof(*peer->held));
		if (!peer->held)
			return NULL;
		for (int k = 0; k < HELD_CLASSES; k++)
			homa_list_init(&peer->held->cls[k]);
	}
	return peer->held;
}

/* hold_request - rpc waits in its peer's queue, after the requests of its
 * class that came before it.  Returns false when out of memory (rpc is
 * not held). */
static bool hold_request(struct homa_rpc *rpc)
{
	struct homa_held *q = held_queue(rpc->peer);

	if (!q)
		return false;
	homa_list_add_tail(&q->cls[held_class(rpc->out.length)],
			   &rpc->held_links);
	q->count++;
	rpc->held = true;
	return true;
}

/* unhold - take held rpc out of its peer's queue. */
static void unhold(struct homa_rpc *rpc)
{
	homa_list_del(&rpc->held_links);
	rpc->peer->held->count--;
	rpc->held = false;
}

/* class_head - the first request of class k of q, or NULL. */
static struct homa_rpc *class_head(struct homa_held *q, int k)
{
	if (homa_list_empty(&q->cls[k]))
		return NULL;
	return homa_container(q->cls[k].next, struct homa_rpc, held_links);
}

/* first_held - the first request of the shortest nonempty class of q
 * (q holds at least one). */
static struct homa_rpc *first_held(struct homa_held *q)
{
	struct homa_rpc *rpc = NULL;

	for (int k = 0; k < HELD_CLASSES && !rpc; k++)
		rpc = class_head(q, k);
	return rpc;
}

/* oldest_held - the request of q created first (each class's head is its
 * oldest). */
static struct homa_rpc *oldest_held(struct homa_held *q)
{
	struct homa_rpc *oldest = NULL;

	for (int k = 0; k < HELD_CLASSES; k++) {
		struct homa_rpc *rpc = class_head(q, k);

		if (rpc && (!oldest || rpc->birth < oldest->birth))
			oldest = rpc;
	}
	return oldest;
}

/* next_held - the held request of q that goes next: first_held, or for a
 * grant_fifo_fraction share of releases the oldest. */
static struct homa_rpc *next_held(struct homa_ep *ep, struct homa_held *q)
{
	uint64_t fraction = (uint64_t)ep->cfg.grant_fifo_fraction;

	q->releases++;
	if (fraction > 0 && q->releases >= 1000 / fraction) {
		q->releases = 0;
		return oldest_held(q);
	}
	return first_held(q);
}

/* release_held - start peer's held requests while the windows have room
 * for the first of the shortest class (both costs grow with the length:
 * when it does not fit, a longer one does not either, and one of its own
 * class would only pass it). */
static void release_held(struct homa_ep *ep, struct homa_peer *peer)
{
	struct homa_held *q = peer->held;

	while (q && q->count > 0) {
		struct homa_rpc *first = first_held(q);
		struct homa_rpc *rpc;

		if (!window_fits(ep, first))
			return;
		rpc = next_held(ep, q);
		if (rpc != first && !window_fits(ep, rpc))
			rpc = first;
		unhold(rpc);
		start_request(ep, rpc);
	}
}

void ep_window_admit(struct homa_ep *ep, struct homa_rpc *rpc)
{
	bool others = rpc->peer->held && rpc->peer->held->count > 0;

	if ((!others && window_fits(ep, rpc)) || !hold_request(rpc)) {
		start_request(ep, rpc);   /* (out of memory: no backpressure) */
		return;
	}
	/* Others wait, maybe only for the buffer window: this one may still
	 * fit before them (the queue is kept shortest first). */
	release_held(ep, rpc->peer);
	if (rpc->held)
		ep_count(ep, HOMA_STAT_requests_held);
}

void ep_window_heard(struct homa_ep *ep, struct homa_rpc *rpc)
{
	if (rpc->held || rpc->window_bytes == 0)
		return;
	rpc->peer->unanswered -= rpc->window_bytes;
	rpc->window_bytes = 0;
	release_held(ep, rpc->peer);
}

void ep_window_answered(struct homa_ep *ep, struct homa_rpc *rpc)
{
	if (rpc->held)
		return;
	if (rpc->window_len != 0) {
		rpc->peer->unanswered_len -= rpc->window_len;
		rpc->window_len = 0;
		if (rpc->window_bytes == 0)
			release_held(ep, rpc->peer);
	}
	ep_window_heard(ep, rpc);
}

void ep_window_forget(struct homa_ep *ep, struct homa_rpc *rpc)
{
	if (rpc->held) {
		unhold(rpc);
		return;
	}
	ep_window_answered(ep, rpc);
}
