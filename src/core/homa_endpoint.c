// SPDX-License-Identifier: BSD-2-Clause
/*
 * The endpoint: lifecycle, the application's calls, RPC bookkeeping shared
 * by the other endpoint modules, and packet output.  See homa_endpoint.h.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "homa_addr.h"
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
}

struct homa_ep *homa_ep_create(const struct homa_ep_params *params)
{
	struct homa_ep *ep;

	if (!params || !params->cfg ||
	    (params->family != AF_INET && params->family != AF_INET6) ||
	    params->encap_bytes > HOMA_EP_MAX_ENCAP ||
	    homa_config_check(params->cfg) != 0)
		return NULL;
	ep = calloc(1, sizeof(*ep));
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
	ep->ctrl = calloc(ep->ctrl_cap, sizeof(*ep->ctrl));
	ep->copies = calloc(HOMA_EP_DEFERRED_COPIES, sizeof(*ep->copies));
	ep->pool = homa_pool_create(params->num_cores > 0 ?
				    params->num_cores : 1,
				    (uint64_t)ep->cfg.bpage_lease_usecs * 1000);
	if (!ep->ctrl || !ep->copies || !ep->pool ||
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
	if (ep->rpcs.buckets)
		free_all_rpcs(ep);
	homa_rpc_table_destroy(&ep->rpcs);
	homa_peer_table_destroy(&ep->peers);
	homa_pool_destroy(ep->pool);
	homa_msgout_cache_drain(&ep->out_cache);
	free(ep->ctrl);
	free(ep->copies);
	free(ep->cands);
	free(ep);
}

void homa_ep_set_port(struct homa_ep *ep, uint16_t port, bool is_server)
{
	ep->port = port;
	ep->is_server = is_server;
}

uint16_t homa_ep_port(const struct homa_ep *ep)
{
	return ep->port;
}

struct homa_pool *homa_ep_pool(struct homa_ep *ep)
{
	return ep->pool;
}

size_t homa_ep_max_packet(const struct homa_ep *ep)
{
	return HOMA_DATA_HDR_LEN + ep->seg;
}

size_t homa_ep_max_output(const struct homa_ep *ep)
{
	return HOMA_DATA_HDR_LEN +
	       (ep->loopback_seg > ep->seg ? ep->loopback_seg : ep->seg);
}

const uint64_t *homa_ep_stats(const struct homa_ep *ep)
{
	return ep->stats;
}

uint32_t homa_ep_num_rpcs(const struct homa_ep *ep)
{
	return ep->num_rpcs;
}

bool homa_ep_readable(const struct homa_ep *ep)
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

int homa_ep_set_private(struct homa_ep *ep, uint64_t id)
{
	struct homa_rpc *rpc = (id & 1) ? NULL
					: homa_rpc_find_client(&ep->rpcs, id);

	if (!rpc)
		return -EINVAL;
	rpc->is_private = true;
	return 0;
}

uint64_t homa_ep_wmem(const struct homa_ep *ep)
{
	return ep->wmem;
}

bool homa_ep_writable(const struct homa_ep *ep)
{
	return ep->wmem < (uint64_t)ep->cfg.wmem_max;
}

uint64_t homa_ep_completions(const struct homa_ep *ep)
{
	return ep->completions;
}

/* ---- control packets ---- */

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
	ring = malloc(cap * sizeof(*ring));
	if (!ring)
		return false;
	first = ep->ctrl_cap - ep->ctrl_head;
	if (first > ep->ctrl_count)
		first = ep->ctrl_count;
	memcpy(ring, ep->ctrl + ep->ctrl_head, first * sizeof(*ring));
	memcpy(ring + first, ep->ctrl,
	       (ep->ctrl_count - first) * sizeof(*ring));
	free(ep->ctrl);
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

/* ---- RPC bookkeeping ---- */

void ep_release_in_buffers(struct homa_ep *ep, struct homa_rpc *rpc,
			   int core, uint64_t now)
{
	if (!rpc->has_buffers)
		return;
	homa_ep_finish_copies(ep);
	homa_pool_release(ep->pool, rpc->bpages, rpc->num_bpages);
	rpc->has_buffers = false;
	rpc->num_bpages = 0;
	ep_check_waiting(ep, core, now);
}

void ep_request_done(struct homa_ep *ep, struct homa_rpc *rpc)
{
	if (homa_list_empty(&rpc->half_links))
		return;
	homa_list_del(&rpc->half_links);
	ep->num_half_open--;
	rpc->peer->half_open--;
	rpc->peer->buffer_bytes -= rpc->peer_bytes;
	rpc->peer_bytes = 0;
}

void ep_rpc_free(struct homa_ep *ep, struct homa_rpc *rpc)
{
	bool had_buffers = rpc->has_buffers;

	homa_ep_finish_copies(ep);
	ep_request_done(ep, rpc);
	if (rpc->is_client)
		ep_window_forget(ep, rpc);
	rpc->peer->rpcs--;
	homa_rpc_table_remove(&ep->rpcs, rpc);
	homa_list_del(&rpc->all_links);
	homa_list_del(&rpc->ready_links);
	homa_list_del(&rpc->send_links);
	homa_list_del(&rpc->grant_links);
	homa_list_del(&rpc->wait_links);
	if (had_buffers)
		homa_pool_release(ep->pool, rpc->bpages, rpc->num_bpages);
	if (rpc->has_out)
		homa_msgout_free(&rpc->out);
	ep->wmem -= rpc->wmem_bytes;
	ep->num_rpcs--;
	free(rpc);
	if (had_buffers)
		ep_check_waiting(ep, 0, ep->next_tick_ns);
	ep_grant_update(ep);
}

void ep_rpc_ready(struct homa_ep *ep, struct homa_rpc *rpc)
{
	rpc->state = HOMA_RPC_READY;
	homa_list_del(&rpc->grant_links);
	homa_list_del(&rpc->wait_links);
	if (homa_list_empty(&rpc->ready_links))
		homa_list_add_tail(&ep->ready, &rpc->ready_links);
	ep->completions++;
}

void ep_rpc_fail(struct homa_ep *ep, struct homa_rpc *rpc, int err)
{
	rpc->error = err;
	ep_count(ep, HOMA_STAT_client_rpc_errors);
	ep_window_forget(ep, rpc);
	homa_list_del(&rpc->send_links);
	if (rpc->has_out)
		homa_msgout_free(&rpc->out);
	rpc->has_out = false;
	ep_release_in_buffers(ep, rpc, 0, ep->next_tick_ns);
	rpc->has_in = false;
	ep_rpc_ready(ep, rpc);
	ep_grant_update(ep);
}

void ep_update_sendable(struct homa_ep *ep, struct homa_rpc *rpc)
{
	bool work = rpc->has_out && !rpc->held &&
		    homa_msgout_has_work(&rpc->out);

	if (work && homa_list_empty(&rpc->send_links))
		homa_list_add_tail(&ep->sendable, &rpc->send_links);
	else if (!work)
		homa_list_del(&rpc->send_links);
}

struct homa_rpc *ep_find_rpc(struct homa_ep *ep, uint64_t sender_id,
			     const union sockaddr_in_union *src,
			     bool *wrong_peer)
{
	uint64_t id = sender_id ^ 1;
	struct homa_rpc *rpc;

	*wrong_peer = false;
	if (id & 1)
		return homa_rpc_find_server(&ep->rpcs, id, src);
	rpc = homa_rpc_find_client(&ep->rpcs, id);
	if (rpc && !homa_addr_equal(&rpc->dest, src)) {
		*wrong_peer = true;
		return NULL;
	}
	return rpc;
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

struct homa_rpc *ep_new_rpc(struct homa_ep *ep, uint64_t id,
				bool is_client,
				const union sockaddr_in_union *dest)
{
	struct homa_rpc *rpc;
	struct homa_peer *peer;

	if (ep->num_rpcs >= (uint64_t)ep->cfg.max_rpcs)
		return NULL;
	peer = homa_peer_get(&ep->peers, dest);
	if (!peer)
		return NULL;
	rpc = homa_rpc_alloc();
	if (!rpc)
		return NULL;
	rpc->id = id;
	rpc->is_client = is_client;
	homa_addr_copy(&rpc->dest, dest);
	rpc->peer = peer;
	peer->rpcs++;
	rpc->birth = ep->birth_seq++;
	if (!is_client) {
		homa_list_add_tail(&ep->half_open, &rpc->half_links);
		ep->num_half_open++;
		peer->half_open++;
	}
	homa_rpc_table_insert(&ep->rpcs, rpc);
	homa_list_add_tail(&ep->all, &rpc->all_links);
	ep->num_rpcs++;
	return rpc;
}

/* start_out - attach the outgoing message to rpc, count its bytes in the
 * endpoint's wmem (until ep_rpc_free) and make it sendable.  Returns 0 or
 * -ENOMEM. */
static int start_out(struct homa_ep *ep, struct homa_rpc *rpc,
		     const struct iovec *iov, int iovcnt, uint32_t length,
		     uint32_t first)
{
	int err = homa_msgout_init_framed(&rpc->out, &ep->out_cache, iov,
					  iovcnt, length,
					  ep_peer_seg(ep, rpc->peer),
					  (uint32_t)ep->cfg.unsched_bytes,
					  HOMA_DATA_HDR_LEN, first);

	if (err)
		return err;
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
			 uint64_t cookie, uint64_t *id, uint64_t now)
{
	return homa_ep_send_request_part(ep, dest, iov, iovcnt, cookie, id,
					 now, UINT32_MAX);
}

int homa_ep_send_request_part(struct homa_ep *ep,
			      const union sockaddr_in_union *dest,
			      const struct iovec *iov, int iovcnt,
			      uint64_t cookie, uint64_t *id, uint64_t now,
			      uint32_t first)
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
	err = start_out(ep, rpc, iov, iovcnt, (uint32_t)length, first);
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
		       uint64_t now)
{
	return homa_ep_send_reply_part(ep, dest, id, iov, iovcnt, now,
				       UINT32_MAX);
}

int homa_ep_send_reply_part(struct homa_ep *ep,
			    const union sockaddr_in_union *dest, uint64_t id,
			    const struct iovec *iov, int iovcnt, uint64_t now,
			    uint32_t first)
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
	return start_out(ep, rpc, iov, iovcnt, (uint32_t)length, first);
}

int homa_ep_send_fill(struct homa_ep *ep, const union sockaddr_in_union *dest,
		      uint64_t id, const struct iovec *iov, int iovcnt,
		      uint32_t upto)
{
	struct homa_rpc *rpc = (id & 1) ?
			       homa_rpc_find_server(&ep->rpcs, id, dest) :
			       homa_rpc_find_client(&ep->rpcs, id);

	if (!rpc || !rpc->has_out)
		return -ENOENT;
	if (iov_length(iov, iovcnt) != (int64_t)rpc->out.length)
		return -EINVAL;
	homa_msgout_fill(&rpc->out, iov, iovcnt, upto);
	ep_update_sendable(ep, rpc);
	return 0;
}

int homa_ep_return_bpages(struct homa_ep *ep, const uint32_t *offsets,
			  uint32_t num, int core, uint64_t now)
{
	int err;

	homa_ep_finish_copies(ep);
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

/* hand_over - fill out from the ready rpc and end or advance it. */
static int hand_over(struct homa_ep *ep, struct homa_rpc *rpc,
		     struct homa_msg_ready *out)
{
	memset(out, 0, sizeof(*out));
	out->id = rpc->id;
	out->cookie = rpc->is_client ? rpc->cookie : 0;
	homa_addr_copy(&out->peer, &rpc->dest);
	homa_list_del(&rpc->ready_links);
	if (rpc->error) {
		out->error = rpc->error;
		ep_rpc_free(ep, rpc);
		return 0;
	}
	out->length = rpc->in.length;
	if (homa_pool_give_to_app(ep->pool, rpc->bpages,
				  rpc->num_bpages) != 0) {
		ep_count(ep, HOMA_STAT_drop_no_memory);
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

int homa_ep_receive(struct homa_ep *ep, uint64_t id, int flags,
		    struct homa_msg_ready *out)
{
	struct homa_list *pos, *tmp;
	struct homa_rpc *rpc;

	homa_ep_finish_copies(ep);
	if (id != 0) {
		rpc = (id & 1) ? NULL : homa_rpc_find_client(&ep->rpcs, id);
		if (!rpc)
			return ep->shutdown ? -ESHUTDOWN : -EINVAL;
		if (rpc->state != HOMA_RPC_READY)
			return -EAGAIN;
		return hand_over(ep, rpc, out);
	}
	homa_list_for_each_safe(pos, tmp, &ep->ready) {
		rpc = homa_container(pos, struct homa_rpc, ready_links);
		if (wants(rpc, flags))
			return hand_over(ep, rpc, out);
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
			     const union sockaddr_in_union *addr, uint64_t now)
{
	struct homa_list *pos, *tmp;
	int failed = 0;

	ep_see_time(ep, now);
	if (!addr || addr->sa.sa_family != ep->family ||
	    homa_addr_port(addr) == 0)
		return 0;
	homa_list_for_each_safe(pos, tmp, &ep->all) {
		struct homa_rpc *rpc = homa_container(pos, struct homa_rpc,
						      all_links);

		if (!unreachable_match(rpc, addr))
			continue;
		ep_rpc_fail(ep, rpc, ENOTCONN);
		failed++;
	}
	return failed;
}

void homa_ep_shutdown(struct homa_ep *ep)
{
	ep->shutdown = true;
	free_all_rpcs(ep);
	ep->completions++;
}

/* ---- output ---- */

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
	if (ep->ctrl_count > 0) {
		struct homa_ctrl_entry *e = &ep->ctrl[ep->ctrl_head];

		memcpy(out->buf, e->buf, e->len);
		out->len = e->len;
		out->dest = e->dest;
		out->priority = e->priority;
		out->segs = 0;
		ep->ctrl_head = (ep->ctrl_head + 1) % ep->ctrl_cap;
		ep->ctrl_count--;
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
