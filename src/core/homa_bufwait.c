// SPDX-License-Identifier: BSD-2-Clause
/*
 * Buffer space of incoming messages: a message gets its bpages from the
 * pool at its first packet, or waits for them in the endpoint's waiting
 * queue (shortest first, one host's incomplete requests held to their
 * share of the pool); space given back goes to the waiting messages, and
 * requests whose clients stopped sending are named for eviction
 * (ep_buffer_victim; homa_rpc.c evicts them) so that their space goes to
 * the waiting ones.
 */

#include <errno.h>

#include "homa_ep_internal.h"

/* add_waiting - queue rpc for buffer space, shortest message first. */
static void add_waiting(struct homa_ep *ep, struct homa_rpc *rpc)
{
	struct homa_list *pos;

	for (pos = ep->waiting.next; pos != &ep->waiting; pos = pos->next) {
		struct homa_rpc *other = homa_container(pos, struct homa_rpc,
							wait_links);

		if (other->in.length > rpc->in.length)
			break;
	}
	homa_list_insert_before(pos, &rpc->wait_links);
	ep_count(ep, HOMA_STAT_buffer_waits);
}

/* note_buffers - rpc's message now has pool space: count it against its
 * peer while the request is incomplete. */
static void note_buffers(struct homa_rpc *rpc)
{
	rpc->has_buffers = true;
	if (!homa_list_empty(&rpc->half_links)) {
		rpc->peer_bytes = rpc->in.length;
		rpc->peer->buffer_bytes += rpc->in.length;
	}
}

/* over_peer_share - true when a new request of length bytes from rpc's
 * peer would take that peer's incomplete requests past its share of the
 * pool (a peer holding nothing may always start one). */
static bool over_peer_share(const struct homa_ep *ep,
			    const struct homa_rpc *rpc, uint32_t length)
{
	uint64_t share = (uint64_t)homa_pool_num_bpages(ep->pool) *
			 HOMA_BPAGE_SIZE *
			 (uint64_t)ep->cfg.peer_buffer_percent / 100;

	if (rpc->is_client || rpc->peer->buffer_bytes == 0)
		return false;
	return rpc->peer->buffer_bytes + length > share;
}

/* waiting_stale - true when a request waiting for buffer space has heard
 * nothing from its client for longer than a client's probes take (two of
 * them, at the longest gap of their backoff). */
static bool waiting_stale(const struct homa_ep *ep, const struct homa_rpc *rpc)
{
	return !rpc->is_client &&
	       ep->tick > rpc->progress_tick +
			  (uint64_t)ep->cfg.resend_ticks +
			  2 * (uint64_t)ep_backoff_cap(ep);
}

/* waiting_ahead - true when a message no longer than rpc's waits for
 * space and could take it (not held back by its host's share): rpc must
 * queue behind it. */
static bool waiting_ahead(const struct homa_ep *ep, const struct homa_rpc *rpc)
{
	const struct homa_list *pos;

	for (pos = ep->waiting.next; pos != &ep->waiting; pos = pos->next) {
		const struct homa_rpc *w = homa_container(pos, struct homa_rpc,
							  wait_links);

		if (w->in.length > rpc->in.length)
			return false;
		if (!over_peer_share(ep, w, w->in.length) &&
		    !waiting_stale(ep, w))
			return true;
	}
	return false;
}

int ep_alloc_buffers(struct homa_ep *ep, struct homa_rpc *rpc, int core,
		     uint64_t now)
{
	int err;

	if (homa_pool_bpages_needed(rpc->in.length) >
	    homa_pool_num_bpages(ep->pool))
		return -ENOMEM;        /* can never fit: fail, do not wait */
	if (over_peer_share(ep, rpc, rpc->in.length)) {
		ep_count(ep, HOMA_STAT_drop_peer_limit);
		if (homa_list_empty(&rpc->wait_links))
			add_waiting(ep, rpc);
		return -ENOSPC;
	}
	if (homa_list_empty(&rpc->wait_links) && waiting_ahead(ep, rpc)) {
		add_waiting(ep, rpc);
		return -ENOSPC;
	}
	err = homa_pool_alloc_msg(ep->pool, rpc->in.length, core, now,
				  rpc->bpages, &rpc->num_bpages);
	if (err == 0) {
		note_buffers(rpc);
		homa_list_del(&rpc->wait_links);
		return 0;
	}
	if (err == -ENOSPC && homa_list_empty(&rpc->wait_links))
		add_waiting(ep, rpc);
	return err;
}

void ep_release_in_buffers(struct homa_ep *ep, struct homa_rpc *rpc,
			   int core, uint64_t now)
{
	if (!rpc->has_buffers)
		return;
	ep_finish_copies(ep);
	homa_pool_release(ep->pool, rpc->bpages, rpc->num_bpages);
	rpc->has_buffers = false;
	rpc->num_bpages = 0;
	ep_check_waiting(ep, core, now);
}

void ep_check_waiting(struct homa_ep *ep, int core, uint64_t now)
{
	struct homa_list *pos, *tmp;

	homa_list_for_each_safe(pos, tmp, &ep->waiting) {
		struct homa_rpc *rpc = homa_container(pos, struct homa_rpc,
						      wait_links);

		/* A request over its host's share waits for that host's
		 * other requests; one whose client has shown no life for a
		 * while (no probe: a flood) lets live ones go first. */
		if (over_peer_share(ep, rpc, rpc->in.length) ||
		    waiting_stale(ep, rpc))
			continue;
		if (homa_pool_alloc_msg(ep->pool, rpc->in.length, core, now,
					rpc->bpages, &rpc->num_bpages) != 0)
			return;
		note_buffers(rpc);
		homa_list_del(&rpc->wait_links);
		rpc->silent_ticks = 0;
		/* Its client gets a fresh start to send (the eviction of
		 * stalled requests waits that long: no ping-pong). */
		rpc->progress_tick = ep->tick;
		ep_ask_again(ep, rpc);
		if (rpc->in.granted < rpc->in.length)
			ep_grant_update(ep);
	}
}

/* first_live_waiter - the first message waiting for buffer space that
 * would take space if there were any (not over its host's share, not
 * stale), or NULL. */
static struct homa_rpc *first_live_waiter(const struct homa_ep *ep)
{
	struct homa_list *pos;

	for (pos = ep->waiting.next; pos != &ep->waiting; pos = pos->next) {
		struct homa_rpc *w = homa_container(pos, struct homa_rpc,
						    wait_links);

		if (!over_peer_share(ep, w, w->in.length) &&
		    !waiting_stale(ep, w))
			return w;
	}
	return NULL;
}

/* stalled_holder - an incomplete request holding buffer space whose client
 * owes bytes and has sent none for resend_ticks + 2 * resend_interval ticks
 * (two of our RESENDs unanswered): unproven ones first (oldest first),
 * else the one that progressed least recently.  NULL when none. */
static struct homa_rpc *stalled_holder(const struct homa_ep *ep)
{
	uint64_t limit = (uint64_t)ep->cfg.resend_ticks +
			 2 * (uint64_t)ep->cfg.resend_interval;
	struct homa_rpc *victim = NULL;
	struct homa_list *pos;

	for (pos = ep->half_open.next; pos != &ep->half_open; pos = pos->next) {
		struct homa_rpc *rpc = homa_container(pos, struct homa_rpc,
						      half_links);

		if (!ep_owed_silent(ep, rpc, limit))
			continue;
		if (!rpc->proven)
			return rpc;
		if (!victim || rpc->progress_tick < victim->progress_tick)
			victim = rpc;
	}
	return victim;
}

struct homa_rpc *ep_buffer_victim(const struct homa_ep *ep)
{
	if (homa_list_empty(&ep->waiting) || !first_live_waiter(ep))
		return NULL;
	return stalled_holder(ep);
}
