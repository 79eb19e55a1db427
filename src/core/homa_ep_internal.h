/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_ep_internal - the endpoint's state, and what its files share.
 *
 * The engine's entry points (homa_endpoint.h, homa_lent.h) are
 * homa_endpoint.c (the endpoint's lifecycle, the application's calls and
 * homa_ep_info), homa_incoming.c (the input batch), homa_output.c (packet
 * output and the sendable list), homa_timer.c (the timer) and homa_lent.c
 * (lent memory: places for the next DATA, the end of a lent message).
 * They call the modules below, one concept each:
 *   homa_copies.c     payload copies into the pool, made or deferred
 *   homa_rpc.c        RPCs: created, found, completed, failed, evicted,
 *                     freed
 *   homa_bufwait.c    buffer space of incoming messages and its waiting
 *                     queue
 *   homa_grant_ep.c   grants: candidates, admission, GRANT packets (the
 *                     policy itself: homa_grant.c)
 *   homa_resend.c     the RESENDs a receiver asks with
 *   homa_window.c     a client's request windows towards each host
 *   homa_ctrl.c       the control-packet queue
 * Calls between files go one way: no two files call each other, and
 * nothing calls back into homa_endpoint.c (scripts/check_core_cycles.sh,
 * the test unit.core_cycles, checks the first).
 * Not part of the engine's interface: use homa_endpoint.h.
 */
#ifndef HOMA_EP_INTERNAL_H
#define HOMA_EP_INTERNAL_H

#include "homa_addr.h"
#include "homa_endpoint.h"
#include "homa_grant.h"
#include "homa_list.h"
#include "homa_pacer.h"
#include "homa_peer.h"
#include "homa_rpc.h"
#include "homa_wire.h"

/* A control packet waiting for homa_ep_output. */
struct homa_ctrl_entry {
	uint8_t buf[HOMA_MAX_CTRL_LEN];
	uint8_t len;
	uint8_t priority;
	union sockaddr_in_union dest;
};

/* Control packets the ring holds at first; it doubles when full, up to
 * the max_ctrl_queue setting. */
#define HOMA_CTRL_QUEUE_INIT 2048

/* Grant candidates the endpoint has room for from its start; beyond them
 * the array grows (homa_grant_ep.c). */
#define HOMA_GRANT_CANDS_INIT 16

/* RPC_UNKNOWN restarts of one client RPC that count as signs of life. */
#define HOMA_MAX_RESTARTS 3

/* Counted ticks after the last tick spent behind the input during which
 * the endpoint still counts as overloaded (admission, homa_grant_ep.c). */
#define HOMA_OVERLOAD_TICKS 10

struct homa_ep {
	struct homa_config cfg;
	int family;
	uint16_t port;
	bool is_server;
	bool shutdown;
	uint64_t next_client_id;
	uint32_t seg;                 /* DATA payload bytes per packet */
	uint32_t loopback_seg;        /* ... to a loopback peer (from
				       * loopback_mtu, or seg) */
	uint32_t encap;               /* datapath header bytes per packet
				       * (homa_ep_params.encap_bytes) */
	struct homa_pool *pool;
	struct homa_rpc_table rpcs;
	struct homa_peer_table peers;
	struct homa_list all;         /* every RPC */
	struct homa_list ready;       /* complete messages and errors */
	uint64_t ready_taken;         /* homa_ep_receive takes with id 0 */
	struct homa_list sendable;    /* RPCs with DATA to send */
	struct homa_list grantable;   /* incomplete incoming messages */
	struct homa_list waiting;     /* waiting for buffers, shortest first */
	struct homa_list half_open;   /* incomplete requests, least recently
				       * progressing first */
	struct homa_list ack_peers;   /* peers with acks to send */
	struct homa_list due_peers;   /* peers with RESENDs due in this
				       * timer tick (homa_resend.c) */
	uint64_t resends_due;         /* RPCs on their lists */
	uint32_t num_half_open;
	uint32_t num_rpcs;
	uint64_t birth_seq;
	uint64_t completions;
	uint64_t tick;                /* ticks run so far */
	uint64_t next_tick_ns;        /* 0 until the first call */
	uint64_t tick_ns;
	bool input_behind;            /* homa_rx_batch.behind: packets wait */
	bool caught_up;               /* the input was read up at some time
				       * since the last tick */
	uint32_t overload_ticks;      /* counted ticks left until a tick
				       * spent behind the input is
				       * forgotten (HOMA_OVERLOAD_TICKS) */
	struct homa_ctrl_entry *ctrl; /* ring of ctrl_cap entries */
	uint32_t ctrl_head, ctrl_count, ctrl_cap;
	struct homa_grant_state grant_state;
	struct homa_pacer pacer;
	struct homa_msgout_cache out_cache; /* freed message buffers */
	bool pacer_blocked;           /* DATA waits for the pacer */
	bool in_tick;                 /* the timer walks the RPCs: an RPC
				       * that ends leaves the grants to the
				       * recompute at the tick's end */
	bool grants_due;              /* DATA arrived or a message
				       * completed: recompute grants before
				       * the next output */
	struct homa_grant_cand *cands;
	int cands_cap;
	uint64_t hint_id;             /* homa_ep_lent_places: the local id of the
				       * RPC whose large DATA came last (0:
				       * none) */
	union sockaddr_in_union hint_src; /* ... and its peer's address */
	bool place_probe;             /* homa_lent_places.read_one: the last packet
				       * in completed a message of large
				       * DATA packets */
	struct homa_rpc *lent;        /* the RPC whose message is still in
				       * the caller's memory (or NULL) */
	bool defer_copies;            /* the batch in defers its copies */
	uint32_t num_copies;          /* entries of copies in use */
	struct homa_ep_copy *copies;  /* HOMA_EP_DEFERRED_COPIES */
	struct homa_rpc **copy_rpcs;  /* ... the RPC of each */
	homa_copier copier;           /* homa_ep_params.copier (NULL: memcpy) */
	void *copier_ctx;
	uint64_t stats[HOMA_STAT_COUNT];
	uint64_t wmem;                /* bytes of the outgoing messages of
				       * live RPCs (homa_ep_info.wmem) */
};

/* ---- lent memory (homa_lent.c) ---- */

/* ep_note_placement - rpc accepted a DATA packet: when it is large (a
 * loopback sender's), rpc's next packets are the ones homa_ep_lent_places
 * lends places for. */
void ep_note_placement(struct homa_ep *ep, struct homa_rpc *rpc,
		       const struct homa_pkt *pkt);

/* ep_lent_placed - the word on a packet pkt (decoded) that the caller
 * tried against lent place p: true when placed (its payload is in p) and
 * it is p's packet, counted as rx_placed; else false, counted as
 * rx_misplaced (a packet of p's message at another offset ends the places
 * for that message).  With placed true and false returned, the payload is
 * lost (the caller's datapath broke its word). */
bool ep_lent_placed(struct homa_ep *ep, const struct homa_lent_place *p,
		    const struct homa_pkt *pkt, bool placed);

/* ep_lent_fault - the kernel could not write into places: their RPCs
 * fail as after a copy fault. */
void ep_lent_fault(struct homa_ep *ep, const struct homa_lent_places *places);

/* ep_ctrl_priority - the priority of control packets: the
 * control_priority setting, within the levels in use. */
static inline uint8_t ep_ctrl_priority(const struct homa_ep *ep)
{
	return homa_config_level(&ep->cfg, ep->cfg.control_priority);
}

/* ep_peer_seg - DATA payload bytes per packet of messages to peer, and
 * the size of one packet asked of it: loopback_seg for a loopback
 * address (packets never cross a link), else seg. */
static inline uint32_t ep_peer_seg(const struct homa_ep *ep,
				   const struct homa_peer *peer)
{
	return peer->loopback ? ep->loopback_seg : ep->seg;
}

/* ep_loopback_setting - the value of a setting that has a loopback_*
 * twin: the twin's for a loopback peer (loopback true) unless the twin is
 * 0, which means "as for a network peer"; else the setting's own. */
static inline int64_t ep_loopback_setting(bool loopback, int64_t twin,
					  int64_t value)
{
	return loopback && twin != 0 ? twin : value;
}

/* ep_peer_unsched - unscheduled bytes of messages to and from peer:
 * loopback_unsched_bytes for a loopback address (unless 0), else
 * unsched_bytes. */
static inline uint32_t ep_peer_unsched(const struct homa_ep *ep,
				       const struct homa_peer *peer)
{
	return (uint32_t)ep_loopback_setting(peer->loopback,
					     ep->cfg.loopback_unsched_bytes,
					     ep->cfg.unsched_bytes);
}

/* ep_unknown_peer_priority - the priority of unscheduled bytes to a peer
 * whose CUTOFFS have not arrived (and, with resend_priority=message, of
 * RESENDs for a message of which nothing has arrived): the
 * unknown_peer_priority setting, within the levels in use. */
static inline uint8_t ep_unknown_peer_priority(const struct homa_ep *ep)
{
	return homa_config_level(&ep->cfg, ep->cfg.unknown_peer_priority);
}

/* ep_see_time - start the tick clock at the first time the endpoint
 * sees. */
static inline void ep_see_time(struct homa_ep *ep, uint64_t now)
{
	if (ep->next_tick_ns == 0)
		ep->next_tick_ns = now + ep->tick_ns;
}

/* ep_count - bump a counter. */
static inline void ep_count(struct homa_ep *ep, enum homa_stat s)
{
	ep->stats[s]++;
}

/* ---- liveness and silence of RPCs ---- */

/* ep_backoff_cap - the longest gap between two RESENDs or two NEED_ACKs
 * of one RPC: resend_max_interval, but at most a third of timeout_ticks,
 * so that a peer answering each probe (BUSY) keeps the RPC alive even
 * when one answer is lost. */
static inline uint32_t ep_backoff_cap(const struct homa_ep *ep)
{
	uint64_t cap = (uint64_t)ep->cfg.resend_max_interval;
	uint64_t third = (uint64_t)ep->cfg.timeout_ticks / 3;

	if (cap > third)
		cap = third;
	return cap < 1 ? 1 : (uint32_t)cap;
}

/* ep_heard - a packet from rpc's peer socket moved rpc forward now (new
 * bytes, a larger grant, or BUSY for a client): the socket is alive and
 * working (homa_peer_heard).  Packets that move nothing (duplicates,
 * RESENDs) do not count: they must not keep stuck RPCs of the peer
 * alive. */
static inline void ep_heard(struct homa_ep *ep, struct homa_rpc *rpc)
{
	homa_peer_heard(rpc->peer, homa_addr_port(&rpc->dest), ep->tick);
}

/* ep_peer_alive - rpc's peer socket was heard from in the last
 * timeout_ticks: an RPC of it that is silent waits behind the peer's
 * other work (overload) rather than on a dead host. */
static inline bool ep_peer_alive(const struct homa_ep *ep,
				 const struct homa_rpc *rpc)
{
	return homa_peer_heard_within(rpc->peer, homa_addr_port(&rpc->dest),
				      ep->tick,
				      (uint64_t)ep->cfg.timeout_ticks);
}

/* ep_rpc_progress - rpc moved forward (new bytes, a larger grant, or the
 * next move is ours): its RESENDs start again from resend_ticks. */
static inline void ep_rpc_progress(struct homa_rpc *rpc)
{
	rpc->quiet_ticks = 0;
	rpc->probe_backoff.next = 0;
	rpc->probe_backoff.sent = 0;
	rpc->probe_answered = false;
	rpc->probe_tick = 0;
	rpc->probes = 0;
}

/* ep_budget_on - true when the loss-recovery budget bounds the RESENDs to
 * peer: resend_floor_packets > 0 and peer is not a loopback address
 * (packets to and from it cross no network queue that the budget could
 * keep short; a receiver behind its own input counts no silence,
 * homa_rx_batch.behind). */
static inline bool ep_budget_on(const struct homa_ep *ep,
				const struct homa_peer *peer)
{
	return ep->cfg.resend_floor_packets > 0 && !peer->loopback;
}

/*
 * ep_peer_in_recovery - true when a RESEND asked peer within the last
 * timeout_ticks ticks for bytes of a message that had begun to arrive
 * (ep_request_missing: loss, or a queue on the path longer than
 * resend_ticks) and the loss-recovery budget is on: then its grants
 * follow what its path delivers (homa_grant_ep.c, peer_grant_cap) and its
 * messages wait for the bytes granted before them to drain before they
 * count as silent (homa_timer.c, first_probe), however fast link_mbps
 * says the link is.
 */
static inline bool ep_peer_in_recovery(const struct homa_ep *ep,
				       const struct homa_peer *peer)
{
	return ep_budget_on(ep, peer) && peer->loss_tick != 0 &&
	       ep->tick + 1 < peer->loss_tick +
			      (uint64_t)ep->cfg.timeout_ticks;
}

/* ep_owed_silent - true when rpc's incoming message is owed bytes (granted,
 * not received) and none has arrived for more than ticks ticks. */
static inline bool ep_owed_silent(const struct homa_ep *ep,
				  const struct homa_rpc *rpc, uint64_t ticks)
{
	return rpc->has_buffers && rpc->in.received < rpc->in.granted &&
	       ep->tick > rpc->progress_tick + ticks;
}

/* ---- RPCs (homa_rpc.c) ---- */

/* ep_new_rpc - allocate and register an RPC with local id for dest (peer
 * address and port).  Returns it (owned by ep) or NULL when out of memory
 * or at the max_rpcs limit. */
struct homa_rpc *ep_new_rpc(struct homa_ep *ep, uint64_t id, bool is_client,
			    const union sockaddr_in_union *dest);

/* ep_find_rpc - the RPC a packet from src with sender_id refers to: ours is
 * sender_id XOR 1; client RPCs must also come from their server's address
 * and port.  Returns NULL when there is none (wrong_peer set when an RPC
 * with that id exists but belongs to another peer). */
struct homa_rpc *ep_find_rpc(struct homa_ep *ep, uint64_t sender_id,
			     const union sockaddr_in_union *src,
			     bool *wrong_peer);

/* ep_request_done - a server RPC's request is no longer incomplete
 * (complete, or the RPC ends): leave the half-open accounting. */
void ep_request_done(struct homa_ep *ep, struct homa_rpc *rpc);

/* ep_rpc_ready - rpc's incoming message is complete (or it failed): queue
 * it for the application. */
void ep_rpc_ready(struct homa_ep *ep, struct homa_rpc *rpc);

/* ep_rpc_fail - a client RPC ends with error err (> 0): its state is
 * dropped and it waits in the ready queue for the application. */
void ep_rpc_fail(struct homa_ep *ep, struct homa_rpc *rpc, int err);

/* ep_rpc_free - unlink rpc from everything, give back its buffers if the
 * application never got them, free it. */
void ep_rpc_free(struct homa_ep *ep, struct homa_rpc *rpc);

/*
 * ep_reclaim_buffers - when a live message waits for buffer space that
 * stays taken, drop one incomplete request that holds space while its
 * client has stopped sending (ep_buffer_victim; counted as
 * evicted_stalled) as an RPC's life ends (ep_rpc_free); its space goes
 * to the waiting messages.  At most one per call.  Frees an RPC: call it
 * only outside walks of the endpoint's lists (the timer does, once a
 * tick).  A request that just got space is never stalled yet (its grace
 * is as long as the silence needed), so two requests cannot take the
 * space from each other back and forth while their clients send.
 */
void ep_reclaim_buffers(struct homa_ep *ep);

/* ---- control packets (homa_ctrl.c) ---- */

/*
 * ep_queue_ctrl - encode a control packet (pkt->sport is filled in) for
 * dest and queue it for output at ep_ctrl_priority.  A full ring doubles, up to
 * max_ctrl_queue entries; beyond that (or out of memory) the packet is
 * dropped and counted (the timer will ask again).
 */
void ep_queue_ctrl(struct homa_ep *ep, struct homa_pkt *pkt,
		   const union sockaddr_in_union *dest);

/* ep_ctrl_room_for_timer - true when the timer may queue its RESENDs and
 * NEED_ACKs: the control queue is less than half of max_ctrl_queue, so the
 * answers to packets that arrive (BUSY, GRANT, RPC_UNKNOWN) always find
 * room; RPCs whose RESENDs wait for ep_resend_flush count as queued.  A
 * probe that finds no room waits for a later tick. */
static inline bool ep_ctrl_room_for_timer(const struct homa_ep *ep)
{
	return ep->ctrl_count + ep->resends_due <
	       (uint64_t)ep->cfg.max_ctrl_queue / 2;
}

/* ep_queue_simple - queue a control packet with only a common header
 * (BUSY, RPC_UNKNOWN, NEED_ACK) naming sender_id. */
void ep_queue_simple(struct homa_ep *ep, uint8_t type, uint64_t sender_id,
		     const union sockaddr_in_union *dest);

/* ep_flush_acks - send the acks queued for peer in ACK packets. */
void ep_flush_acks(struct homa_ep *ep, struct homa_peer *peer);

/* ep_ctrl_pending - true when a control packet waits for output (for
 * homa_ep_output to test at every call without a function call). */
static inline bool ep_ctrl_pending(const struct homa_ep *ep)
{
	return ep->ctrl_count > 0;
}

/* ep_ctrl_next - take the oldest queued control packet into out (whole:
 * segs 0).  Returns false, out untouched, when none is queued. */
bool ep_ctrl_next(struct homa_ep *ep, struct homa_out *out);

/* ---- output (homa_output.c) ---- */

/* ep_pacer_wake - when the pacer lets held-back DATA go (absolute ns), or
 * 0 when no DATA waits for it (homa_output.c). */
uint64_t ep_pacer_wake(const struct homa_ep *ep);

/* ep_update_sendable - put rpc on, or take it off, the sendable list. */
void ep_update_sendable(struct homa_ep *ep, struct homa_rpc *rpc);

/* ---- payload copies (homa_copies.c) ---- */

/* ep_store_payload - copy a DATA packet's bytes into rpc's buffers (or
 * record the copies while the batch in defers them). */
void ep_store_payload(struct homa_ep *ep, struct homa_rpc *rpc,
		      const struct homa_pkt *pkt);

/* ep_copy_fault - rpc's bytes could not be stored (its memory is gone): it
 * stores no more, and fails when its message would be handed over (or at
 * the timer's next tick).  Counted once per RPC as copy_faults. */
void ep_copy_fault(struct homa_ep *ep, struct homa_rpc *rpc);

/* ep_finish_copies - make every deferred copy, in the order the packets
 * came, and stop deferring.  Without deferred copies, does nothing. */
void ep_finish_copies(struct homa_ep *ep);

/* ---- buffer space (homa_bufwait.c) ---- */

/*
 * ep_alloc_buffers - give rpc's incoming message space in the pool.
 * Returns 0 (allocated), -ENOSPC (queued to wait), or -ENOMEM (no region).
 */
int ep_alloc_buffers(struct homa_ep *ep, struct homa_rpc *rpc, int core,
		     uint64_t now);

/* ep_release_in_buffers - give rpc's bpages back to the pool (if held) and
 * let waiting messages take the space. */
void ep_release_in_buffers(struct homa_ep *ep, struct homa_rpc *rpc,
			   int core, uint64_t now);

/* ep_check_waiting - give buffer space to waiting messages, shortest first,
 * and ask their senders to send again. */
void ep_check_waiting(struct homa_ep *ep, int core, uint64_t now);

/*
 * ep_buffer_victim - when a live message waits for buffer space that stays
 * taken, the incomplete request to evict for it (ep_reclaim_buffers): one
 * that holds space while its client has stopped sending, unproven ones
 * first.  NULL when no live message waits or no holder has stalled.
 * Changes nothing.
 */
struct homa_rpc *ep_buffer_victim(const struct homa_ep *ep);

/* ---- grants (homa_grant_ep.c) ---- */

/* ep_grant_update - recompute grants over the grantable list and queue
 * GRANT packets. */
void ep_grant_update(struct homa_ep *ep);

/* ---- RESENDs (homa_resend.c) ---- */

/* ep_request_missing - queue RESENDs for what rpc's incoming message
 * lacks: each gap, then the granted tail past the last arrival (with the
 * ablation resend_tail_probe its first packet only, the rest once that
 * packet proves it lost; see tail_probe_answered); when nothing has
 * arrived, all of it (offset 0, HOMA_RESEND_ALL).  With the loss-recovery
 * budget (resend_floor_packets > 0) the ranges, in that order, take from
 * the budget of rpc's host in this tick (homa_peer_resend_take) and stop
 * where it is spent, the last one asked for in part; a message of which
 * nothing arrived asks for at most its unscheduled bytes; an RPC that
 * gets no bytes sends a RESEND for none (answered by BUSY: the RPC stays
 * known alive).  Each RESEND names the level of resend_priority
 * (homa_resend.c, resend_level). */
void ep_request_missing(struct homa_ep *ep, struct homa_rpc *rpc);

/* ep_resend_part_answered - pkt, new bytes for rpc, is a retransmission
 * that ends the part of a RESEND cut short by the budget (rpc->resend_cut):
 * the path has delivered what was asked, so a new round of the budget
 * begins (the bytes that arrived since the last) and the rest is asked for
 * at once (ep_request_missing), rather than after resend_ticks more of
 * silence: recovery runs at the pace the path delivers. */
void ep_resend_part_answered(struct homa_ep *ep, struct homa_rpc *rpc,
			     const struct homa_pkt *pkt);

/* ep_resend_due - the timer found rpc's probe due: with the budget, rpc
 * joins its host's due RPCs of this tick, shortest remaining first, and
 * its RESENDs wait for ep_resend_flush; without, ep_request_missing at
 * once. */
void ep_resend_due(struct homa_ep *ep, struct homa_rpc *rpc);

/* ep_resend_flush - ep_request_missing for every due RPC (ep_resend_due),
 * host by host in the order the hosts became due, each host's RPCs
 * shortest remaining first, so that the budget of a host repairs its
 * short messages first.  Leaves no RPC or host due.  Call it before any
 * due RPC can be freed (the timer does, at the end of its pass). */
void ep_resend_flush(struct homa_ep *ep);

/* ep_ask_again - rpc, whose data was dropped while it waited for buffer
 * space, has space now: ask its sender for all of it again. */
void ep_ask_again(struct homa_ep *ep, struct homa_rpc *rpc);

/*
 * ep_tail_probe_answered - pkt, new bytes for rpc, extended its message past
 * what had arrived (at_tail).  With the ablation resend_tail_probe the
 * tail of a message, the granted bytes past the last arrival, is asked for
 * one packet first (ep_request_missing).  That was the rule while a slow
 * receiver counted ticks behind its own input as silence: asking for the
 * whole tail then drew duplicates of packets that waited unread in its
 * socket buffer (three concurrent 1 MB echoes under valgrind: 70% of the
 * DATA read were duplicates, and no RPC ended).  Such ticks count no
 * silence now (homa_rx_batch.behind), and the probe delays every lost
 * tail by at least one more resend interval (docs/scheduling.md, "Loss
 * recovery": after the faults of 150 seeded runs on 16 hosts end, every
 * RPC is done 29 ms later at the median with it, 5.5 ms without).  When
 * the probed packet comes back as the retransmission of bytes that had not
 * arrived, the packets sent after it did not arrive either (they would have
 * come before it): the rest of the tail is asked for at once.  The probed
 * packet found already there means the rest is on its way: nothing more
 * is asked.
 */
void ep_tail_probe_answered(struct homa_ep *ep, struct homa_rpc *rpc,
			    const struct homa_pkt *pkt, bool at_tail);

/* ---- request windows (homa_window.c) ---- */

/*
 * ep_window_admit - a new client request rpc (its message attached) starts
 * now when its host's request windows have room for it and no other
 * request to that host waits; else it joins the host's held queue
 * (rpc->held), from which requests start, shortest first, as soon as
 * they fit: at once when the others wait only for room this one does not
 * need, else when answers make room (homa_window.c).
 */
void ep_window_admit(struct homa_ep *ep, struct homa_rpc *rpc);

/* ep_window_answered - the server answered client rpc (a GRANT, its
 * response's first packet, a RESEND of request bytes): it leaves both
 * windows and held requests may start.  Does nothing for a held request
 * (a forged answer) or one answered before. */
void ep_window_answered(struct homa_ep *ep, struct homa_rpc *rpc);

/* ep_window_heard - the server has read client rpc's packets (a BUSY): it
 * leaves the packet window (not the buffer window). */
void ep_window_heard(struct homa_ep *ep, struct homa_rpc *rpc);

/* ep_window_forget - client rpc ends (response, failure, abort): it
 * leaves the held queue, or its bytes leave the window. */
void ep_window_forget(struct homa_ep *ep, struct homa_rpc *rpc);

#endif /* HOMA_EP_INTERNAL_H */
