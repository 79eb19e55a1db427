// SPDX-License-Identifier: BSD-2-Clause
/*
 * The endpoint: its lifecycle and the application's calls.  See
 * homa_endpoint.h; packet input, output and the timer have their own
 * files, and the modules these calls use are listed in homa_ep_internal.h.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "homa_addr.h"
#include "homa_alloc.h"
#include "homa_ep_internal.h"

/* payload_per_packet - DATA payload bytes for a family at the given mtu,
 * with encap bytes of datapath header after the IP header (so that the
 * whole IP datagram fits in mtu). */
static uint32_t payload_per_packet(int family, int64_t mtu, uint32_t encap)
{
	int64_t ip = family == AF_INET6 ? 40 : 20;
	int64_t seg = mtu - ip - (int64_t)encap - HOMA_DATA_HDR_LEN;

	return seg < 64 ? 64 : (uint32_t)seg;
}

/* init_lists - make every list head of ep empty. */
static void init_lists(struct homa_ep *ep)
{
	homa_list_init(&ep->all);
	homa_list_init(&ep->ready);
	homa_list_init(&ep->sendable);
	homa_list_init(&ep->grantable);
	homa_list_init(&ep->waiting);
	homa_list_init(&ep->half_open);
	homa_list_init(&ep->ack_peers);
	homa_list_init(&ep->due_peers);
}

struct homa_ep *homa_ep_create(const struct homa_ep_params *params)
{
	struct homa_ep *ep;

	if (!params || !params->cfg ||
	    (params->family != AF_INET && params->family != AF_INET6) ||
	    params->encap_bytes > HOMA_EP_MAX_ENCAP ||
	    homa_config_check(params->cfg) != 0)
		return NULL;
	ep = homa_calloc(HOMA_ALLOC_ENDPOINT, 1, sizeof(*ep));
	if (!ep)
		return NULL;
	ep->cfg = *params->cfg;
	ep->family = params->family;
	ep->port = params->port;
	ep->is_server = params->is_server;
	ep->next_client_id = params->first_client_id & ~1ull;
	if (ep->next_client_id == 0)
		ep->next_client_id = 2;
	ep->encap = params->encap_bytes;
	ep->copier = params->copier;
	ep->copier_ctx = params->copier_ctx;
	ep->seg = payload_per_packet(ep->family, ep->cfg.mtu, ep->encap);
	ep->loopback_seg = ep->cfg.loopback_mtu == 0 ? ep->seg :
			   payload_per_packet(ep->family, ep->cfg.loopback_mtu,
					      ep->encap);
	ep->tick_ns = (uint64_t)ep->cfg.tick_usecs * 1000;
	ep->caught_up = true;
	homa_pacer_init(&ep->pacer, (uint64_t)ep->cfg.link_mbps,
			(uint64_t)ep->cfg.max_nic_queue_ns,
			(uint32_t)ep->cfg.pacer_fifo_fraction,
			(uint64_t)ep->cfg.throttle_min_bytes);
	init_lists(ep);
	ep->ctrl_cap = ep->cfg.max_ctrl_queue < HOMA_CTRL_QUEUE_INIT ?
		       (uint32_t)ep->cfg.max_ctrl_queue : HOMA_CTRL_QUEUE_INIT;
	ep->ctrl = homa_calloc(HOMA_ALLOC_ENDPOINT, ep->ctrl_cap,
			      sizeof(*ep->ctrl));
	ep->copies = homa_calloc(HOMA_ALLOC_ENDPOINT, HOMA_EP_DEFERRED_COPIES,
				sizeof(*ep->copies));
	ep->copy_rpcs = homa_calloc(HOMA_ALLOC_ENDPOINT,
				   HOMA_EP_DEFERRED_COPIES,
				   sizeof(*ep->copy_rpcs));
	/* Grant candidates: the first ones always have room (the array
	 * grows when more are grantable and memory allows). */
	ep->cands_cap = HOMA_GRANT_CANDS_INIT;
	ep->cands = homa_calloc(HOMA_ALLOC_ENDPOINT, (size_t)ep->cands_cap,
			       sizeof(*ep->cands));
	ep->pool = homa_pool_create(params->num_cores > 0 ?
				    params->num_cores : 1,
				    (uint64_t)ep->cfg.bpage_lease_usecs * 1000);
	if (!ep->ctrl || !ep->copies || !ep->copy_rpcs || !ep->cands || !ep->pool ||
	    homa_rpc_table_init(&ep->rpcs) != 0 ||
	    homa_peer_table_init(&ep->peers) != 0) {
		homa_ep_destroy(ep);
		return NULL;
	}
	ep->peers.max_peers = (uint32_t)ep->cfg.max_peers;
	return ep;
}

/* free_all_rpcs - free every RPC of ep. */
static void free_all_rpcs(struct homa_ep *ep)
{
	struct homa_list *pos, *tmp;

	homa_list_for_each_safe(pos, tmp, &ep->all)
		ep_rpc_free(ep, homa_container(pos, struct homa_rpc,
					       all_links));
}

void homa_ep_destroy(struct homa_ep *ep)
{
	if (!ep)
		return;
	/* The packets' buffers may be gone: deferred copies are dropped. */
	ep->num_copies = 0;
	if (ep->rpcs.hash.buckets)
		free_all_rpcs(ep);
	homa_rpc_table_destroy(&ep->rpcs);
	homa_peer_table_destroy(&ep->peers);
	homa_pool_destroy(ep->pool);
	homa_msgout_cache_drain(&ep->out_cache);
	homa_free(ep->ctrl);
	homa_free(ep->copies);
	homa_free(ep->copy_rpcs);
	homa_free(ep->cands);
	homa_free(ep);
}

void homa_ep_set_port(struct homa_ep *ep, uint16_t port, bool is_server)
{
	ep->port = port;
	ep->is_server = is_server;
}

/* readable - homa_ep_info.readable. */
static bool readable(const struct homa_ep *ep)
{
	const struct homa_list *pos;

	if (ep->shutdown)
		return true;
	for (pos = ep->ready.next; pos != &ep->ready; pos = pos->next)
		if (!homa_container(pos, struct homa_rpc,
				    ready_links)->is_private)
			return true;
	return false;
}

void homa_ep_info(const struct homa_ep *ep, struct homa_ep_info *out)
{
	out->port = ep->port;
	out->pool = ep->pool;
	out->max_packet = HOMA_DATA_HDR_LEN + ep->seg;
	out->max_output = HOMA_DATA_HDR_LEN +
			  (ep->loopback_seg > ep->seg ? ep->loopback_seg
						      : ep->seg);
	out->readable = readable(ep);
	out->completions = ep->completions;
	out->wmem = ep->wmem;
	out->writable = ep->wmem < (uint64_t)ep->cfg.wmem_max;
	out->pacer_wake = ep_pacer_wake(ep);
	out->num_rpcs = ep->num_rpcs;
	out->stats = ep->stats;
}

/* ---- application calls ---- */

/* iov_length - total bytes of an iovec; -EINVAL when it is malformed or
 * the total is not 1..HOMA_MAX_MESSAGE_LENGTH. */
static int64_t iov_length(const struct iovec *iov, int iovcnt)
{
	uint64_t total = 0;
	int i;

	if (iovcnt < 0 || (iovcnt > 0 && !iov))
		return -EINVAL;
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > 0 && !iov[i].iov_base)
			return -EINVAL;
		if (iov[i].iov_len > HOMA_MAX_MESSAGE_LENGTH - total)
			return -EINVAL;
		total += iov[i].iov_len;
	}
	if (total == 0)
		return -EINVAL;
	return (int64_t)total;
}

/* dest_ok - true when dest is an address of the endpoint's family with a
 * nonzero port. */
static bool dest_ok(const struct homa_ep *ep,
		    const union sockaddr_in_union *dest)
{
	return dest && dest->sa.sa_family == ep->family &&
	       homa_addr_port(dest) != 0;
}

/* lendable - the message's one nonempty piece when flags lend it
 * (HOMA_EP_SEND_LENT) and it can be read in place (HOMA_EP_LEND_MIN bytes
 * or more), else NULL. */
static const uint8_t *lendable(const struct iovec *iov, int iovcnt,
			       uint32_t length, int flags)
{
	if (!(flags & HOMA_EP_SEND_LENT) || length < HOMA_EP_LEND_MIN)
		return NULL;
	for (int i = 0; i < iovcnt; i++)
		if (iov[i].iov_len > 0)
			return iov[i].iov_len == length ? iov[i].iov_base
							: NULL;
	return NULL;
}

/* start_out - attach the outgoing message to rpc (read in place when
 * flags lend it and it is lendable; a message lent before is settled
 * first), count its bytes in the endpoint's wmem (until ep_rpc_free) and
 * make it sendable.  Returns 0 or -ENOMEM. */
static int start_out(struct homa_ep *ep, struct homa_rpc *rpc,
		     const struct iovec *iov, int iovcnt, uint32_t length,
		     int flags)
{
	const uint8_t *lent = lendable(iov, iovcnt, length, flags);
	uint32_t seg = ep_peer_seg(ep, rpc->peer);
	uint32_t unsched = ep_peer_unsched(ep, rpc->peer);
	int err;

	if (lent) {
		/* One lent message at a time. */
		(void)homa_ep_lent_settle(ep, UINT32_MAX);
		err = homa_msgout_init_lent(&rpc->out, &ep->out_cache, lent,
					    length, seg, unsched,
					    HOMA_DATA_HDR_LEN);
	} else {
		err = homa_msgout_init_framed(&rpc->out, &ep->out_cache, iov,
					      iovcnt, length, seg, unsched,
					      HOMA_DATA_HDR_LEN);
	}
	if (err)
		return err;
	if (lent)
		ep->lent = rpc;
	rpc->has_out = true;
	rpc->wmem_bytes = length;
	ep->wmem += length;
	rpc->state = HOMA_RPC_OUTGOING;
	rpc->resend_priority = ep_unknown_peer_priority(ep);
	if (rpc->is_client)
		ep_window_admit(ep, rpc);
	else
		ep_update_sendable(ep, rpc);
	return 0;
}

int homa_ep_send_request(struct homa_ep *ep,
			 const union sockaddr_in_union *dest,
			 const struct iovec *iov, int iovcnt,
			 uint64_t cookie, int flags, uint64_t *id,
			 uint64_t now)
{
	int64_t length = iov_length(iov, iovcnt);
	struct homa_rpc *rpc;
	int err;

	ep_see_time(ep, now);
	if (!dest_ok(ep, dest) || length < 0 || !id)
		return -EINVAL;
	if (ep->shutdown)
		return -ESHUTDOWN;
	rpc = ep_new_rpc(ep, ep->next_client_id, true, dest);
	if (!rpc)
		return -ENOMEM;
	ep->next_client_id += 2;
	rpc->cookie = cookie;
	rpc->is_private = (flags & HOMA_EP_SEND_PRIVATE) != 0;
	err = start_out(ep, rpc, iov, iovcnt, (uint32_t)length, flags);
	if (err) {
		ep_rpc_free(ep, rpc);
		return err;
	}
	*id = rpc->id;
	ep_count(ep, HOMA_STAT_requests_sent);
	return 0;
}

int homa_ep_send_reply(struct homa_ep *ep, const union sockaddr_in_union *dest,
		       uint64_t id, const struct iovec *iov, int iovcnt,
		       int flags, uint64_t now)
{
	int64_t length = iov_length(iov, iovcnt);
	struct homa_rpc *rpc;

	ep_see_time(ep, now);
	if (!dest_ok(ep, dest) || length < 0 || (id & 1) == 0)
		return -EINVAL;
	if (ep->shutdown)
		return -ESHUTDOWN;
	rpc = homa_rpc_find_server(&ep->rpcs, id, dest);
	if (!rpc)
		return 0;
	if (rpc->state != HOMA_RPC_IN_SERVICE || rpc->has_out)
		return -EINVAL;
	ep_count(ep, HOMA_STAT_responses_sent);
	return start_out(ep, rpc, iov, iovcnt, (uint32_t)length,
			 flags & HOMA_EP_SEND_LENT);
}

int homa_ep_return_bpages(struct homa_ep *ep, const uint32_t *offsets,
			  uint32_t num, int core, uint64_t now)
{
	int err;

	ep_finish_copies(ep);
	if (num == 0)
		return 0;
	if (!offsets || num > HOMA_MAX_BPAGES)
		return -EINVAL;
	err = homa_pool_take_from_app(ep->pool, offsets, num);
	if (err)
		return err;
	ep_check_waiting(ep, core, now);
	return 0;
}

/* wants - true when a ready rpc matches the recvmsg flags of a receive
 * that names no id (private RPCs never do). */
static bool wants(const struct homa_rpc *rpc, int flags)
{
	if (rpc->is_private)
		return false;
	return rpc->is_client ? (flags & HOMA_RECVMSG_RESPONSE) != 0
			      : (flags & HOMA_RECVMSG_REQUEST) != 0;
}

/* hand_over - fill out from the ready rpc and end or advance it.  Returns
 * 0, or -ENOMEM when a request's bpages could not be recorded as the
 * application's: the request is dropped (counted as drop_no_memory; its
 * client asks after it, learns that it is unknown and sends it again) and
 * out holds nothing. */
static int hand_over(struct homa_ep *ep, struct homa_rpc *rpc,
		     struct homa_msg_ready *out)
{
	memset(out, 0, sizeof(*out));
	out->id = rpc->id;
	out->cookie = rpc->is_client ? rpc->cookie : 0;
	homa_addr_copy(&out->peer, &rpc->dest);
	homa_list_del(&rpc->ready_links);
	if (rpc->copy_fault && !rpc->error)
		rpc->error = EFAULT;        /* a server's request too */
	if (rpc->error) {
		out->error = rpc->error;
		ep_rpc_free(ep, rpc);
		return 0;
	}
	out->length = rpc->in.length;
	if (homa_pool_give_to_app(ep->pool, rpc->bpages,
				  rpc->num_bpages) != 0) {
		ep_count(ep, HOMA_STAT_drop_no_memory);
		if (!rpc->is_client) {
			memset(out, 0, sizeof(*out));
			ep_rpc_free(ep, rpc);
			return -ENOMEM;
		}
		out->error = ENOMEM;
		out->length = 0;
	} else {
		out->num_bpages = rpc->num_bpages;
		memcpy(out->bpage_offsets, rpc->bpages,
		       rpc->num_bpages * sizeof(rpc->bpages[0]));
	}
	rpc->has_buffers = false;
	rpc->num_bpages = 0;
	if (rpc->is_client) {
		ep_rpc_free(ep, rpc);
	} else {
		rpc->state = HOMA_RPC_IN_SERVICE;
		rpc->silent_ticks = 0;
	}
	return 0;
}

/* The ready messages a receive with id 0 compares (oldest first), and how
 * often it takes the oldest instead: a backlog of ready messages is served
 * shortest first, as the network serves them, for the cost of a bounded
 * scan, and a long message is passed over at most HOMA_READY_OLDEST_EVERY
 * - 1 times in a row. */
#define HOMA_READY_SCAN 16
#define HOMA_READY_OLDEST_EVERY 8

/* ready_length - the length a ready rpc is ranked by: 0 for a failure
 * (reported first), else its message's. */
static uint32_t ready_length(const struct homa_rpc *rpc)
{
	return rpc->error || rpc->copy_fault ? 0 : rpc->in.length;
}

/* pick_ready - the ready RPC a receive with id 0 and flags takes next:
 * among the first HOMA_READY_SCAN that it wants, the shortest (the oldest
 * of equals); on every HOMA_READY_OLDEST_EVERY-th take the oldest it
 * wants.  NULL when none is wanted. */
static struct homa_rpc *pick_ready(const struct homa_ep *ep, int flags)
{
	bool oldest = ep->ready_taken % HOMA_READY_OLDEST_EVERY ==
		      HOMA_READY_OLDEST_EVERY - 1;
	struct homa_rpc *best = NULL, *rpc;
	struct homa_list *pos;
	int seen = 0;

	for (pos = ep->ready.next; pos != &ep->ready && seen < HOMA_READY_SCAN;
	     pos = pos->next) {
		rpc = homa_container(pos, struct homa_rpc, ready_links);
		if (!wants(rpc, flags))
			continue;
		seen++;
		if (!best || ready_length(rpc) < ready_length(best))
			best = rpc;
		if (oldest || ready_length(best) == 0)
			break;
	}
	return best;
}

int homa_ep_receive(struct homa_ep *ep, uint64_t id, int flags,
		    struct homa_msg_ready *out)
{
	struct homa_rpc *rpc;

	ep_finish_copies(ep);
	if (id != 0) {
		rpc = (id & 1) ? NULL : homa_rpc_find_client(&ep->rpcs, id);
		if (!rpc)
			return ep->shutdown ? -ESHUTDOWN : -EINVAL;
		if (rpc->state != HOMA_RPC_READY)
			return -EAGAIN;
		return hand_over(ep, rpc, out);
	}
	/* A request dropped for want of memory: look further. */
	while ((rpc = pick_ready(ep, flags)) != NULL) {
		ep->ready_taken++;
		if (hand_over(ep, rpc, out) == 0)
			return 0;
	}
	return ep->shutdown ? -ESHUTDOWN : -EAGAIN;
}

/* abort_one - end one client RPC as homa_ep_abort says. */
static void abort_one(struct homa_ep *ep, struct homa_rpc *rpc, int error)
{
	if (error == 0)
		ep_rpc_free(ep, rpc);
	else if (rpc->state != HOMA_RPC_READY || rpc->error == 0)
		ep_rpc_fail(ep, rpc, error);
}

int homa_ep_abort(struct homa_ep *ep, uint64_t id, int error)
{
	struct homa_list *pos, *tmp;
	struct homa_rpc *rpc;

	if (error < 0)
		return -EINVAL;
	if (id != 0) {
		rpc = (id & 1) ? NULL : homa_rpc_find_client(&ep->rpcs, id);
		if (!rpc)
			return -EINVAL;
		abort_one(ep, rpc, error);
		return 0;
	}
	homa_list_for_each_safe(pos, tmp, &ep->all) {
		rpc = homa_container(pos, struct homa_rpc, all_links);
		if (rpc->is_client)
			abort_one(ep, rpc, error);
	}
	return 0;
}

/* unreachable_match - true when rpc is a client RPC to addr (address and
 * port) still waiting for its response (a response already complete, or an
 * error already reported, is left as it is). */
static bool unreachable_match(const struct homa_rpc *rpc,
			      const union sockaddr_in_union *addr)
{
	return rpc->is_client && rpc->state != HOMA_RPC_READY &&
	       homa_addr_equal(&rpc->dest, addr);
}

int homa_ep_peer_unreachable(struct homa_ep *ep,
			     const union sockaddr_in_union *addr, uint64_t id,
			     uint64_t now)
{
	struct homa_rpc *rpc;

	ep_see_time(ep, now);
	if (!addr || addr->sa.sa_family != ep->family ||
	    homa_addr_port(addr) == 0 || id == 0 || (id & 1))
		return 0;
	rpc = homa_rpc_find_client(&ep->rpcs, id);
	if (!rpc || !unreachable_match(rpc, addr))
		return 0;
	ep_rpc_fail(ep, rpc, ENOTCONN);
	return 1;
}

void homa_ep_shutdown(struct homa_ep *ep)
{
	ep->shutdown = true;
	free_all_rpcs(ep);
	ep->completions++;
}

