// SPDX-License-Identifier: BSD-2-Clause
/*
 * Packet input of the endpoint: decoding, dispatch by type, DATA (new
 * requests within the limits on incomplete ones, reassembly) and the
 * effect of each control packet.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "homa_addr.h"
#include "homa_ep_internal.h"

/* Counter of each decode error, indexed by enum homa_wire_error. */
static const enum homa_stat decode_drop[] = {
	[HOMA_WIRE_SHORT] = HOMA_STAT_drop_short,
	[HOMA_WIRE_BAD_TYPE] = HOMA_STAT_drop_bad_type,
	[HOMA_WIRE_SHORT_TYPE] = HOMA_STAT_drop_short_type,
	[HOMA_WIRE_BAD_LENGTH] = HOMA_STAT_drop_bad_length,
	[HOMA_WIRE_BAD_OFFSET] = HOMA_STAT_drop_bad_offset,
};

/* note_progress - rpc's sender shows it is alive and sending (new bytes,
 * or a client asking after a request that waits for our buffer space):
 * keep the half-open list in order of last progress, so that a flood
 * evicts stalled requests, not active ones. */
static void note_progress(struct homa_ep *ep, struct homa_rpc *rpc)
{
	rpc->progress_tick = ep->tick;
	rpc->grant_stalled = false;
	if (!homa_list_empty(&rpc->half_links)) {
		homa_list_del(&rpc->half_links);
		homa_list_add_tail(&ep->half_open, &rpc->half_links);
	}
}

/* ---- DATA ---- */

/* handle_ack - a client acknowledged RPC client_id on our port: end our
 * server RPC for it (src's address and port name the client). */
static void handle_ack(struct homa_ep *ep, const struct homa_ack *ack,
		       const union sockaddr_in_union *src)
{
	struct homa_rpc *rpc;

	if (ack->client_id == 0 || ack->server_port != ep->port)
		return;
	rpc = homa_rpc_find_server(&ep->rpcs, ack->client_id ^ 1, src);
	if (!rpc)
		return;
	ep_count(ep, HOMA_STAT_server_rpcs_acked);
	ep_rpc_free(ep, rpc);
}

/* maybe_send_cutoffs - a DATA from peer used a cutoff version other than
 * ours: send it our cutoffs, at most once per cutoffs_interval ticks. */
static void maybe_send_cutoffs(struct homa_ep *ep, struct homa_peer *peer,
			       const union sockaddr_in_union *src,
			       const struct homa_pkt *data)
{
	struct homa_pkt pkt;
	int i;

	if (data->cutoff_version == ep->cfg.cutoff_version ||
	    !homa_peer_cutoffs_due(peer, ep->tick,
				   (uint64_t)ep->cfg.cutoffs_interval))
		return;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HOMA_PKT_CUTOFFS;
	pkt.sender_id = data->sender_id ^ 1;
	for (i = 0; i < HOMA_NUM_PRIORITIES; i++)
		pkt.unsched_cutoffs[i] = (uint32_t)ep->cfg.unsched_cutoffs[i];
	pkt.cutoff_version = (uint16_t)ep->cfg.cutoff_version;
	ep_queue_ctrl(ep, &pkt, src);
}

/* may_evict_proven - whether a request whose client showed life may be
 * dropped for a new request from host from: only for another host's, and
 * only once it has made no progress for resend_ticks ticks (when its
 * receiver would ask after it). */
static bool may_evict_proven(const struct homa_ep *ep,
			     const struct homa_rpc *rpc,
			     const struct homa_peer *from)
{
	return rpc->peer != from &&
	       rpc->progress_tick + (uint64_t)ep->cfg.resend_ticks < ep->tick;
}

/*
 * evict_oldest - make room for a new request from host from: drop one
 * incomplete request (of peer, or of anyone when peer is NULL), the oldest
 * of those whose client never showed life after its first packet, else the
 * one that made progress least recently (the half-open list is in that
 * order) among those may_evict_proven allows.  Requests that move are left
 * to finish: evicting them let more concurrent requests than the limits
 * evict each other forever (each victim's restart evicted the next, and a
 * client sending its requests shortest first starved the one holding the
 * room while its newer request's packets were refused).  Returns false
 * when nothing is dropped (counted as drop_half_open_busy).  The walk only
 * chooses; the RPC is freed after it.
 */
static bool evict_oldest(struct homa_ep *ep, const struct homa_peer *peer,
			 const struct homa_peer *from)
{
	struct homa_rpc *victim = NULL;
	struct homa_list *pos;

	for (pos = ep->half_open.next; pos != &ep->half_open; pos = pos->next) {
		struct homa_rpc *rpc = homa_container(pos, struct homa_rpc,
						      half_links);

		if (peer && rpc->peer != peer)
			continue;
		if (!rpc->proven) {
			victim = rpc;
			break;
		}
		if (!victim && may_evict_proven(ep, rpc, from))
			victim = rpc;
	}
	if (!victim) {
		ep_count(ep, HOMA_STAT_drop_half_open_busy);
		return false;
	}
	ep_count(ep, HOMA_STAT_evicted_half_open);
	ep_rpc_free(ep, victim);
	return true;
}

/*
 * make_room - before a new request from src is accepted: enforce the
 * limits on incomplete requests (per peer host and in total) by dropping
 * the oldest ones (see evict_oldest), and on peer records.  Returns false
 * (counted) when the request must be dropped: its client asks again
 * (RESEND, answered with RPC_UNKNOWN) and starts over once there is room.
 */
static bool make_room(struct homa_ep *ep, const union sockaddr_in_union *src)
{
	struct homa_peer *peer = homa_peer_get(&ep->peers, src);

	if (!peer) {
		ep_count(ep, HOMA_STAT_drop_too_many_peers);
		return false;
	}
	if (peer->half_open >= (uint64_t)ep->cfg.max_peer_rpcs &&
	    !evict_oldest(ep, peer, peer))
		return false;
	if (ep->num_half_open >= (uint64_t)ep->cfg.max_half_open &&
	    !evict_oldest(ep, NULL, peer))
		return false;
	return true;
}

/* data_rpc - the RPC a DATA packet belongs to, creating a server RPC for a
 * new request.  NULL (counted) when the packet must be dropped. */
static struct homa_rpc *data_rpc(struct homa_ep *ep,
				 const struct homa_pkt *pkt,
				 const union sockaddr_in_union *src)
{
	struct homa_rpc *rpc;
	bool wrong_peer;

	rpc = ep_find_rpc(ep, pkt->sender_id, src, &wrong_peer);
	if (rpc)
		return rpc;
	if (wrong_peer) {
		ep_count(ep, HOMA_STAT_drop_wrong_peer);
		return NULL;
	}
	if ((pkt->sender_id & 1) != 0) {
		ep_count(ep, HOMA_STAT_drop_unknown_rpc);
		return NULL;
	}
	if (!ep->is_server || ep->shutdown) {
		ep_count(ep, HOMA_STAT_drop_not_server);
		return NULL;
	}
	if (!make_room(ep, src))
		return NULL;
	rpc = ep_new_rpc(ep, pkt->sender_id ^ 1, false, src);
	if (!rpc)
		ep_count(ep, HOMA_STAT_drop_no_memory);
	else
		rpc->state = HOMA_RPC_INCOMING;
	return rpc;
}

/* start_in - first DATA of a message: set up reassembly and buffers.
 * Returns false when the packet must be dropped (counted; a client RPC
 * may have failed). */
static bool start_in(struct homa_ep *ep, struct homa_rpc *rpc,
		     const struct homa_pkt *pkt, int core, uint64_t now)
{
	uint32_t unsched = ep_peer_unsched(ep, rpc->peer);
	int err;

	/* The sender's word on how much it sends unasked counts only up to
	 * our own unscheduled bytes for its host: a larger claim must not
	 * hold grants.  A retransmitted first packet carries the end of what
	 * was asked for; the sender had sent the unscheduled bytes. */
	rpc->progress_tick = ep->tick;
	rpc->first_offset = pkt->offset;
	rpc->tail_probing = false;
	homa_msgin_init(&rpc->in, pkt->message_length,
			pkt->incoming < unsched && !pkt->retransmit ?
			pkt->incoming : unsched,
			(int)ep->cfg.max_gaps);
	rpc->has_in = true;
	if (rpc->is_client) {
		/* How long this server host takes to answer (first_probe in
		 * homa_timer.c). */
		homa_peer_note_wait(rpc->peer, rpc->quiet_ticks);
		ep_window_answered(ep, rpc);
		/* The server answers: it no longer holds the request, and
		 * a silence now is a stalled response (timeout_ticks). */
		rpc->busy_heard = false;
		if (rpc->state == HOMA_RPC_OUTGOING)
			rpc->state = HOMA_RPC_INCOMING;
	}
	homa_list_add_tail(&ep->grantable, &rpc->grant_links);
	err = ep_alloc_buffers(ep, rpc, core, now);
	if (err == 0)
		return true;
	ep_count(ep, HOMA_STAT_drop_no_buffer);
	if (err == -ENOMEM) {
		if (rpc->is_client)
			ep_rpc_fail(ep, rpc, ENOMEM);
		else
			ep_rpc_free(ep, rpc);
	}
	return false;
}

/* message_done - rpc's incoming message is complete. */
static void message_done(struct homa_ep *ep, struct homa_rpc *rpc)
{
	if (rpc->is_client) {
		ep_count(ep, HOMA_STAT_responses_received);
		ep_window_forget(ep, rpc);
		if (rpc->has_out) {
			homa_list_del(&rpc->send_links);
			homa_msgout_free(&rpc->out);
			rpc->has_out = false;
		}
		if (homa_peer_add_ack(rpc->peer, rpc->id,
				      homa_addr_port(&rpc->dest)) >=
		    HOMA_MAX_ACKS)
			ep_flush_acks(ep, rpc->peer);
		else if (homa_list_empty(&rpc->peer->ack_links))
			homa_list_add_tail(&ep->ack_peers,
					   &rpc->peer->ack_links);
	} else {
		ep_count(ep, HOMA_STAT_requests_received);
		ep_request_done(ep, rpc);
	}
	ep_rpc_ready(ep, rpc);
	/* Its grants are free for others: recomputed once per batch of
	 * input, before the next output, not once per completed message
	 * (under a backlog a recompute walks thousands of messages). */
	ep->grants_due = true;
}

/* note_more_data - a DATA packet for rpc other than the one that started
 * its message: its sender is more than a one-packet flood. */
static void note_more_data(struct homa_rpc *rpc, const struct homa_pkt *pkt)
{
	if (pkt->offset != rpc->first_offset)
		rpc->proven = true;
}

/* accept_data - a DATA packet for rpc: record and store its bytes. */
static void accept_data(struct homa_ep *ep, struct homa_rpc *rpc,
			const struct homa_pkt *pkt, int core, uint64_t now)
{
	enum homa_msgin_result res;
	bool at_tail;

	if (!rpc->has_in) {
		if (rpc->state == HOMA_RPC_READY ||
		    rpc->state == HOMA_RPC_IN_SERVICE ||
		    (!rpc->is_client && rpc->has_out))
			goto duplicate;
		if (!start_in(ep, rpc, pkt, core, now))
			return;
	} else if (pkt->message_length != rpc->in.length) {
		ep_count(ep, HOMA_STAT_drop_length_mismatch);
		return;
	} else if (!rpc->has_buffers) {
		note_more_data(rpc, pkt);
		ep_count(ep, HOMA_STAT_drop_no_buffer);
		return;
	}
	if (rpc->state != HOMA_RPC_INCOMING)
		goto duplicate;
	at_tail = pkt->offset >= rpc->in.recv_end;
	res = homa_msgin_add(&rpc->in, pkt->offset, pkt->payload_len);
	if (res == HOMA_MSGIN_NO_GAP_ROOM) {
		ep_count(ep, HOMA_STAT_drop_too_many_gaps);
		return;
	}
	if (res != HOMA_MSGIN_NEW)
		goto duplicate;
	/* Only new bytes are progress: duplicates must not keep an RPC that
	 * cannot complete alive. */
	rpc->silent_ticks = 0;
	ep_rpc_progress(rpc);
	ep_heard(ep, rpc);
	homa_peer_note_rx(rpc->peer, pkt->payload_len, ep->tick);
	note_more_data(rpc, pkt);
	note_progress(ep, rpc);
	ep_store_payload(ep, rpc, pkt);
	ep_note_placement(ep, rpc, pkt);
	if (homa_msgin_complete(&rpc->in)) {
		message_done(ep, rpc);
		return;
	}
	ep_tail_probe_answered(ep, rpc, pkt, at_tail);
	ep_resend_part_answered(ep, rpc, pkt);
	if (rpc->in.granted < rpc->in.length)
		ep->grants_due = true;
	return;
duplicate:
	ep_count(ep, HOMA_STAT_drop_duplicate_data);
}

/* handle_data - a DATA packet from src. */
static void handle_data(struct homa_ep *ep, const struct homa_pkt *pkt,
			const union sockaddr_in_union *src, int core,
			uint64_t now)
{
	struct homa_peer *peer;
	struct homa_rpc *rpc;

	if (pkt->num_acks > 0)
		handle_ack(ep, &pkt->acks[0], src);
	rpc = data_rpc(ep, pkt, src);
	if (!rpc)
		return;
	peer = rpc->peer;
	maybe_send_cutoffs(ep, peer, src, pkt);
	accept_data(ep, rpc, pkt, core, now);
}

/* ---- control packets ---- */

/* lookup_rpc - the RPC a control packet refers to; NULL (counted as
 * wrong peer or unknown RPC) when there is none. */
static struct homa_rpc *lookup_rpc(struct homa_ep *ep,
				   const struct homa_pkt *pkt,
				   const union sockaddr_in_union *src)
{
	bool wrong_peer;
	struct homa_rpc *rpc = ep_find_rpc(ep, pkt->sender_id, src,
					   &wrong_peer);

	if (!rpc)
		ep_count(ep, wrong_peer ? HOMA_STAT_drop_wrong_peer
					: HOMA_STAT_drop_unknown_rpc);
	return rpc;
}

/* handle_busy - the peer is alive but has nothing to send: a sign of life
 * for an RPC waiting on it, except for a request this server is still
 * receiving (a client that answers BUSY will not complete it).  Only a
 * BUSY before the response begins says that the server holds the request
 * (busy_heard: a longer silence allowed); once the response arrives, a
 * silence is that of a stalled response whatever was said before. */
static void handle_busy(struct homa_ep *ep, const struct homa_pkt *pkt,
			const union sockaddr_in_union *src)
{
	struct homa_rpc *rpc = lookup_rpc(ep, pkt, src);

	if (!rpc)
		return;
	/* Our probe was answered: the next one waits longer. */
	rpc->probe_answered = true;
	if (rpc->is_client) {
		if (!rpc->has_in)
			rpc->busy_heard = true;
		ep_heard(ep, rpc);      /* the server works on it */
		ep_window_heard(ep, rpc);
	}
	if (rpc->is_client || rpc->state != HOMA_RPC_INCOMING)
		rpc->silent_ticks = 0;
}

/* handle_grant - the receiver of our message allows more bytes.  Only a
 * larger grant is a sign of life: a peer repeating an old one (or a forged
 * one) must not keep an RPC that never moves alive. */
static void handle_grant(struct homa_ep *ep, const struct homa_pkt *pkt,
			 const union sockaddr_in_union *src)
{
	struct homa_rpc *rpc = lookup_rpc(ep, pkt, src);

	if (!rpc || !rpc->has_out)
		return;
	if (pkt->offset > rpc->out.granted) {
		rpc->silent_ticks = 0;
		ep_rpc_progress(rpc);
		ep_heard(ep, rpc);
	}
	if (rpc->is_client)
		ep_window_answered(ep, rpc);
	homa_msgout_grant(&rpc->out, pkt->offset);
	rpc->out.sched_priority = pkt->priority < HOMA_NUM_PRIORITIES ?
				  pkt->priority : HOMA_NUM_PRIORITIES - 1;
	ep_update_sendable(ep, rpc);
}

/* resend_out - queue the part of rpc's outgoing message a RESEND asks for;
 * a range ending beyond the grant also acts as a grant.  Returns false when
 * there was nothing to send. */
static bool resend_out(struct homa_ep *ep, struct homa_rpc *rpc,
		       const struct homa_pkt *pkt)
{
	struct homa_msgout *m = &rpc->out;
	uint32_t queued;

	if (pkt->length != HOMA_RESEND_ALL && pkt->offset < m->length) {
		uint32_t len = pkt->length < m->length - pkt->offset ?
			       pkt->length : m->length - pkt->offset;

		homa_msgout_grant(m, pkt->offset + len);
	}
	rpc->resend_priority = pkt->priority < HOMA_NUM_PRIORITIES ?
			       pkt->priority : HOMA_NUM_PRIORITIES - 1;
	queued = homa_msgout_request_resend(m, pkt->offset, pkt->length);
	ep_update_sendable(ep, rpc);
	return queued > 0 || homa_msgout_has_work(m);
}

/* restart_client - the server lost our RPC: send the request again. */
static void restart_client(struct homa_ep *ep, struct homa_rpc *rpc)
{
	if (rpc->state == HOMA_RPC_READY || !rpc->has_out)
		return;
	homa_list_del(&rpc->grant_links);
	homa_list_del(&rpc->wait_links);
	ep_release_in_buffers(ep, rpc, 0, ep->next_tick_ns);
	rpc->has_in = false;
	rpc->resend_cut = 0;
	homa_msgout_restart(&rpc->out);
	rpc->state = HOMA_RPC_OUTGOING;
	rpc->busy_heard = false;        /* a new incarnation holds nothing */
	/* A restart is a sign of life, but only a few times: a peer that
	 * keeps forgetting the RPC must not keep it alive forever. */
	if (++rpc->restarts <= HOMA_MAX_RESTARTS)
		rpc->silent_ticks = 0;
	ep_update_sendable(ep, rpc);
	ep_count(ep, HOMA_STAT_rpc_restarts);
}

/* handle_resend - the peer asks for bytes again. */
static void handle_resend(struct homa_ep *ep, const struct homa_pkt *pkt,
			  const union sockaddr_in_union *src)
{
	bool wrong_peer;
	struct homa_rpc *rpc = ep_find_rpc(ep, pkt->sender_id, src,
					   &wrong_peer);

	if (!rpc) {
		if (wrong_peer) {
			ep_count(ep, HOMA_STAT_drop_wrong_peer);
		} else if ((pkt->sender_id & 1) == 0 &&
			   (!ep->is_server || ep->shutdown)) {
			/* A client asks a socket that takes no requests:
			 * stay silent so that its RPC times out. */
			ep_count(ep, HOMA_STAT_drop_not_server);
		} else {
			ep_queue_simple(ep, HOMA_PKT_RPC_UNKNOWN,
					pkt->sender_id ^ 1, src);
		}
		return;
	}
	/* The peer is alive; but a client asking after its response is no
	 * progress for a request this server is still receiving (unless the
	 * request only waits for our buffer space). */
	if (rpc->is_client || rpc->state != HOMA_RPC_INCOMING ||
	    !rpc->has_buffers)
		rpc->silent_ticks = 0;
	if (!rpc->is_client && rpc->has_in && !rpc->has_buffers) {
		rpc->proven = true;
		note_progress(ep, rpc);
	}
	if (!rpc->has_out || pkt->length == 0) {
		/* A server holding the request, or an empty probe: alive,
		 * nothing to resend. */
		ep_queue_simple(ep, HOMA_PKT_BUSY, rpc->id, src);
		return;
	}
	if (rpc->is_client && rpc->has_in) {
		/* The server asks for request bytes while its response is
		 * arriving: it has lost the RPC and a new incarnation holds
		 * part of the request (or this RESEND is a stale one).  The
		 * response so far may come from an execution the new server
		 * knows nothing of: start over, as on RPC_UNKNOWN, so that no
		 * response mixes two executions. */
		ep_count(ep, HOMA_STAT_resend_during_response);
		restart_client(ep, rpc);
		return;
	}
	if (pkt->offset >= rpc->out.length) {
		/* The peer believes in a longer message than ours (a
		 * forged first packet?): no answer, let its RPC time out. */
		ep_count(ep, HOMA_STAT_drop_length_mismatch);
		return;
	}
	if (rpc->is_client)
		ep_window_answered(ep, rpc);
	if (!resend_out(ep, rpc, pkt))
		ep_queue_simple(ep, HOMA_PKT_BUSY, rpc->id, src);
}

/* handle_rpc_unknown - the peer has no state for the RPC. */
static void handle_rpc_unknown(struct homa_ep *ep, const struct homa_pkt *pkt,
			       const union sockaddr_in_union *src)
{
	struct homa_rpc *rpc = lookup_rpc(ep, pkt, src);

	if (!rpc)
		return;
	if (rpc->is_client)
		restart_client(ep, rpc);
	else
		ep_rpc_free(ep, rpc);
}

/* handle_cutoffs - the peer tells which priorities to use towards it. */
static void handle_cutoffs(struct homa_ep *ep, const struct homa_pkt *pkt,
			   const union sockaddr_in_union *src)
{
	struct homa_peer *peer = homa_peer_get(&ep->peers, src);
	uint32_t cutoffs[HOMA_NUM_PRIORITIES];

	if (!peer) {
		ep_count(ep, HOMA_STAT_drop_no_memory);
		return;
	}
	memcpy(cutoffs, pkt->unsched_cutoffs, sizeof(cutoffs));
	cutoffs[0] = HOMA_MAX_MESSAGE_LENGTH;
	homa_peer_set_cutoffs(peer, cutoffs, pkt->cutoff_version);
	ep_count(ep, HOMA_STAT_cutoffs_updates);
}

/* send_ack - answer a NEED_ACK for client RPC id with an ACK that also
 * carries other acks queued for the same server port. */
static void send_ack(struct homa_ep *ep, uint64_t id,
		     const union sockaddr_in_union *src)
{
	struct homa_peer *peer = homa_peer_get(&ep->peers, src);
	uint16_t port = homa_addr_port(src);
	struct homa_pkt pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = HOMA_PKT_ACK;
	pkt.sender_id = id;
	while (peer && pkt.num_acks < HOMA_MAX_ACKS) {
		struct homa_ack a = homa_peer_pop_ack(peer, port);

		if (a.client_id == 0)
			break;
		pkt.acks[pkt.num_acks++] = a;
	}
	ep_queue_ctrl(ep, &pkt, src);
}

/* handle_need_ack - a server asks whether our response arrived. */
static void handle_need_ack(struct homa_ep *ep, const struct homa_pkt *pkt,
			    const union sockaddr_in_union *src)
{
	bool wrong_peer;
	struct homa_rpc *rpc;

	if ((pkt->sender_id & 1) == 0)
		return;
	rpc = ep_find_rpc(ep, pkt->sender_id, src, &wrong_peer);
	if (wrong_peer) {
		ep_count(ep, HOMA_STAT_drop_wrong_peer);
		return;
	}
	if (!rpc || rpc->state == HOMA_RPC_READY) {
		send_ack(ep, pkt->sender_id ^ 1, src);
		return;
	}
	/* No reset of the silence count: the server asks because it thinks
	 * it is done, which is no progress for this RPC. */
	if (rpc->has_in && !rpc->has_buffers)
		ep_queue_simple(ep, HOMA_PKT_BUSY, rpc->id, src);
	else
		ep_request_missing(ep, rpc);
}

/* handle_ack_pkt - a client says which responses it has. */
static void handle_ack_pkt(struct homa_ep *ep, const struct homa_pkt *pkt,
			   const union sockaddr_in_union *src)
{
	struct homa_ack head = { pkt->sender_id, pkt->dport };
	int i;

	if ((pkt->sender_id & 1) == 0)
		handle_ack(ep, &head, src);
	for (i = 0; i < pkt->num_acks; i++)
		handle_ack(ep, &pkt->acks[i], src);
}

/* dispatch - act on a decoded packet. */
static void dispatch(struct homa_ep *ep, const struct homa_pkt *pkt,
		     const union sockaddr_in_union *src, int core,
		     uint64_t now)
{
	switch (pkt->type) {
	case HOMA_PKT_DATA:
		handle_data(ep, pkt, src, core, now);
		break;
	case HOMA_PKT_GRANT:
		handle_grant(ep, pkt, src);
		break;
	case HOMA_PKT_RESEND:
		handle_resend(ep, pkt, src);
		break;
	case HOMA_PKT_RPC_UNKNOWN:
		handle_rpc_unknown(ep, pkt, src);
		break;
	case HOMA_PKT_BUSY:
		handle_busy(ep, pkt, src);
		break;
	case HOMA_PKT_CUTOFFS:
		handle_cutoffs(ep, pkt, src);
		break;
	case HOMA_PKT_NEED_ACK:
		handle_need_ack(ep, pkt, src);
		break;
	case HOMA_PKT_ACK:
		handle_ack_pkt(ep, pkt, src);
		break;
	default:
		/* FREEZE is a debugging aid of the kernel: never act on it
		 * from the network. */
		break;
	}
}

/* input_one - one datagram of a batch: decoded, checked against the lent
 * place it was tried against (if any: a placed DATA payload is then taken
 * as already in place) and dispatched. */
static void input_one(struct homa_ep *ep, const struct homa_rx_pkt *rx,
		      const struct homa_lent_places *places, int core,
		      uint64_t now)
{
	enum homa_wire_error err;
	struct homa_pkt pkt;
	bool placed = false;

	/* Only a packet that completes a message of large packets leaves
	 * the probe on (homa_lent_places.read_one). */
	ep->place_probe = false;
	err = homa_wire_decode(rx->buf, rx->len, &pkt);
	if (err == HOMA_WIRE_OK && places && rx->place >= 0 &&
	    rx->place < places->n) {
		placed = ep_lent_placed(ep, &places->place[rx->place], &pkt,
					rx->placed);
		if (rx->placed && !placed)
			err = HOMA_WIRE_BAD_TYPE; /* its payload is not here */
	} else if (err == HOMA_WIRE_OK && rx->placed) {
		/* Placed, but not in a place of this batch: its payload is
		 * nowhere the endpoint knows. */
		ep_count(ep, HOMA_STAT_rx_misplaced);
		err = HOMA_WIRE_BAD_TYPE;
	}
	if (err != HOMA_WIRE_OK) {
		ep_count(ep, decode_drop[err]);
		return;
	}
	if (placed) {
		pkt.payload = NULL;
		pkt.payload_placed = true;
	}
	ep->stats[HOMA_STAT_packets_rcvd_DATA + (pkt.type - HOMA_PKT_DATA)]++;
	/* A source port of 0 names no socket to answer (over raw IP the
	 * port is the header's alone): a request from it could never get
	 * its reply (homa_ep_send_reply refuses port 0 with EINVAL). */
	if (pkt.dport != ep->port || rx->src.sa.sa_family != ep->family ||
	    homa_addr_port(&rx->src) != pkt.sport || pkt.sport == 0) {
		ep_count(ep, HOMA_STAT_drop_wrong_port);
		return;
	}
	dispatch(ep, &pkt, &rx->src, core, now);
}

void homa_ep_input(struct homa_ep *ep, const struct homa_rx_batch *batch,
		   int core, uint64_t now)
{
	/* Copies an earlier batch left are made first, in order (their
	 * buffers are the caller's until then). */
	ep_finish_copies(ep);
	if (batch->n > 0) {
		ep_see_time(ep, now);
		ep->defer_copies = batch->defer_copies;
	}
	if (batch->fault && batch->places)
		ep_lent_fault(ep, batch->places);
	for (int i = 0; i < batch->n; i++)
		input_one(ep, &batch->pkts[i], batch->places, core, now);
	ep->input_behind = batch->behind;
	if (!batch->behind)
		ep->caught_up = true;
}
