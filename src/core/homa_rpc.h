/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_rpc - the state of one RPC at one end, and the table that finds RPCs
 * by key: client RPCs by id (the local id is even), server RPCs by (peer
 * address, peer port, id) (the local id is odd, the client's id XOR 1).
 * An RPC's lifecycle in its endpoint (homa_rpc.c too) is declared in
 * homa_ep_internal.h.
 */
#ifndef HOMA_RPC_H
#define HOMA_RPC_H

#include <stdbool.h>
#include <stdint.h>

#include "homa.h"
#include "homa_hash.h"
#include "homa_list.h"
#include "homa_msgin.h"
#include "homa_msgout.h"
#include "homa_peer.h"

enum homa_rpc_state {
	/* Sending our message (client: request; server: response). */
	HOMA_RPC_OUTGOING = 1,
	/* Receiving the other side's message (or waiting for it). */
	HOMA_RPC_INCOMING = 2,
	/* A complete message (or a client error) waits in the ready queue. */
	HOMA_RPC_READY = 3,
	/* Server only: the application has the request. */
	HOMA_RPC_IN_SERVICE = 4,
};

/* When the next of a series of retries is due: retries back off
 * exponentially (see homa_backoff_due). */
struct homa_backoff {
	uint32_t next;                 /* count at which one is due; 0: the
					* first one, not yet computed */
	uint32_t sent;                 /* times the gap doubled */
};

/*
 * homa_backoff_due - a series of retries whose first is due when count
 * reaches first, each next one gap later: gap = base << (the number of
 * due retries in a row, up to this one, that were told to grow), capped
 * at cap (>= 1); a retry not told to grow (its predecessor got no answer:
 * loss, not a slow peer) returns the gap to base, so a lost exchange is
 * retried soon.  Returns true when one is due at count (and then
 * schedules the next); count must not decrease between calls unless b is
 * reset (zeroed) with it.
 */
bool homa_backoff_due(struct homa_backoff *b, uint32_t count, uint32_t first,
		      uint32_t base, uint32_t cap, bool grow);

/* homa_backoff_peek - true when homa_backoff_due(b, count, first, ...)
 * would return true, without scheduling anything. */
bool homa_backoff_peek(const struct homa_backoff *b, uint32_t count,
		       uint32_t first);

struct homa_rpc {
	uint64_t id;                   /* local id */
	bool is_client;
	enum homa_rpc_state state;
	union sockaddr_in_union dest;  /* peer address and port */
	struct homa_peer *peer;
	uint64_t cookie;
	uint64_t birth;                /* creation order */
	int error;                     /* client: positive errno once failed */

	struct homa_msgout out;        /* valid when has_out */
	bool has_out;
	uint8_t resend_priority;       /* priority of retransmitted DATA */

	struct homa_msgin in;          /* valid when has_in */
	bool has_in;
	bool has_buffers;              /* bpages allocated for in */
	uint32_t num_bpages;
	uint32_t bpages[HOMA_MAX_BPAGES];
	uint8_t grant_priority;        /* last priority we granted */
	bool admitted;                 /* in: we granted it at least once */
	bool told_waiting;             /* in: a BUSY told its sender that its
					* unscheduled bytes were read while it
					* waits for its first grant */

	uint32_t silent_ticks;         /* ticks without a packet for it */
	uint32_t quiet_ticks;          /* ticks waiting on the peer without
					* progress (BUSY does not reset it) */
	struct homa_backoff probe_backoff;    /* RESENDs (quiet_ticks) */
	bool busy_heard;               /* client: a BUSY said the server
					* holds this request, so a silence
					* after it may last up to
					* alive_timeout_ticks (a stall of a
					* live server); cleared on a restart */
	bool probe_answered;           /* a BUSY came since the last probe:
					* the peer is alive but slow, so the
					* next gap doubles (a probe nobody
					* answered, loss, does not) */
	uint64_t probe_tick;           /* tick of the last probe; 0: none
					* since the last progress */
	uint32_t probes;               /* probes since the last progress */
	uint32_t tail_probe;           /* in: offset of the one packet past
					* the last arrival a RESEND asked
					* for (valid while tail_probing) */
	bool tail_probing;             /* in: that packet not yet come */
	uint32_t resend_cut;           /* in: end of the part a RESEND cut
					* short by the budget asked for, the
					* rest still to ask; 0 = none */
	struct homa_backoff need_ack_backoff; /* NEED_ACKs (done_ticks) */
	uint32_t done_ticks;           /* server: ticks since response sent */
	uint32_t restarts;             /* client: RPC_UNKNOWN restarts */
	uint64_t progress_tick;        /* tick of the last new incoming bytes */
	uint32_t first_offset;         /* offset of the DATA that started in */
	uint32_t in_seg;               /* in: payload bytes of the sender's
					* full packets, when large enough for
					* placement (homa_ep_lent_places); 0 */
	bool no_placement;             /* in: a packet came where another
					* was expected: no more guesses */
	bool proven;                   /* server: the client showed life after
					* its first packet (more DATA, or a
					* RESEND): evicted after unproven ones */
	bool grant_stalled;            /* in: granted bytes stopped coming;
					* out of the grant budget and slots
					* until data resumes */
	bool is_private;               /* client: only a receive naming the
					* id gets the response */
	bool copy_fault;               /* in: a payload copy into the region
					* failed: the RPC fails with EFAULT */

	struct homa_hash_link hash_links; /* in the endpoint's table */
	struct homa_list all_links;    /* every RPC of the endpoint */
	struct homa_list ready_links;  /* ready queue */
	struct homa_list send_links;   /* has DATA to send */
	struct homa_list grant_links;  /* incoming, not complete */
	struct homa_list wait_links;   /* waiting for buffer space */
	struct homa_list half_links;   /* server: request incomplete */
	struct homa_list due_links;    /* on its peer's RPCs whose RESEND is
					* due in this tick (homa_resend.c) */
	uint32_t peer_bytes;           /* bytes counted in peer->buffer_bytes */
	uint32_t window_bytes;         /* client: bytes counted in
					* peer->unanswered */
	uint32_t window_len;           /* client: bytes counted in
					* peer->unanswered_len */
	bool held;                     /* client: the request waits for room
					* in its host's request windows */
	struct homa_list held_links;   /* a length class of peer->held */
	uint32_t wmem_bytes;           /* bytes counted in the endpoint's
					* wmem: the outgoing message's length
					* from its send until the RPC is
					* freed */
};

struct homa_rpc_table {
	struct homa_hash hash;         /* the RPCs, by key */
};

/* homa_rpc_table_init - an empty table; returns 0 or -ENOMEM. */
int homa_rpc_table_init(struct homa_rpc_table *t);

/* homa_rpc_table_destroy - free the buckets (not the RPCs). */
void homa_rpc_table_destroy(struct homa_rpc_table *t);

/* homa_rpc_table_insert - add rpc (not yet in the table). */
void homa_rpc_table_insert(struct homa_rpc_table *t, struct homa_rpc *rpc);

/* homa_rpc_table_remove - remove rpc if present. */
void homa_rpc_table_remove(struct homa_rpc_table *t, struct homa_rpc *rpc);

/* homa_rpc_find_client - the client RPC with local id (even), or NULL. */
struct homa_rpc *homa_rpc_find_client(const struct homa_rpc_table *t,
				      uint64_t id);

/* homa_rpc_find_server - the server RPC with local id (odd) from peer
 * address and port src, or NULL. */
struct homa_rpc *homa_rpc_find_server(const struct homa_rpc_table *t,
				      uint64_t id,
				      const union sockaddr_in_union *src);

/*
 * homa_rpc_alloc - a new zeroed RPC with its lists unlinked (not in any
 * table).  Returns it (caller owns it) or NULL when out of memory.
 */
struct homa_rpc *homa_rpc_alloc(void);

#endif /* HOMA_RPC_H */
