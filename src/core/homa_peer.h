/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_peer - what an endpoint knows about each remote host: the
 * unscheduled-priority cutoffs that host asked for, when CUTOFFS were last
 * sent to it, acknowledgements of finished client RPCs waiting to be sent
 * to it, and when its busiest sockets were last heard from.
 */
#ifndef HOMA_PEER_H
#define HOMA_PEER_H

#include <stdint.h>

#include "homa.h"
#include "homa_hash.h"
#include "homa_list.h"
#include "homa_wire.h"

/* Requests waiting for a peer's request windows (homa_window.c). */
struct homa_held;

/* Sockets (ports) of one host whose last packet time is kept. */
#define HOMA_PEER_HEARD_PORTS 4

/* When a packet from one port of the host last moved an RPC forward. */
struct homa_peer_heard {
	uint16_t port;
	uint64_t tick;                 /* the endpoint's tick + 1; 0 = never */
};

struct homa_peer {
	struct homa_hash_link hash_links; /* in the table, by host */
	union sockaddr_in_union addr;  /* port 0 */
	uint32_t cutoffs[HOMA_NUM_PRIORITIES]; /* from the peer's CUTOFFS */
	uint16_t cutoff_version;       /* 0 = none received yet */
	uint64_t cutoffs_sent_tick;    /* tick we last sent it CUTOFFS + 1 */
	uint16_t num_acks;
	struct homa_ack acks[HOMA_MAX_ACKS]; /* finished RPCs to ack */
	struct homa_list ack_links;    /* on the endpoint's list of peers
					* with acks to send */
	uint32_t rpcs;                 /* RPCs of the endpoint with this peer */
	uint32_t half_open;            /* its incomplete incoming requests */
	uint64_t buffer_bytes;         /* pool bytes those requests hold */
	bool loopback;                 /* a loopback address: packets to it
					* pass no NIC queue, so the pacer
					* lets them go unthrottled */
	struct homa_peer_heard heard[HOMA_PEER_HEARD_PORTS];
	uint64_t probe_tick;           /* tick of probes_in_tick + 1 */
	uint32_t probes_in_tick;       /* timer probes sent to it then */
	uint64_t need_ack_tick;        /* tick of need_acks_in_tick + 1 */
	uint32_t need_acks_in_tick;    /* NEED_ACKs sent to it then */
	uint64_t unanswered;           /* unscheduled bytes of our requests
					* it has not answered yet (see
					* homa_window.c) */
	uint64_t unanswered_len;       /* their message bytes */
	struct homa_held *held;        /* our requests waiting for room in
					* the windows (homa_window.c; NULL
					* until one waits; freed with the
					* peer) */
	uint32_t wait_smooth8;         /* quiet ticks before its responses
					* began, smoothed (x 8; see
					* homa_peer_note_wait) */
	uint32_t wait_dev4;            /* their mean deviation (x 4) */
	bool wait_known;               /* a response wait was noted */
	/* The loss-recovery budget of our RESENDs to it (a congestion
	 * window of repairs: the path is per host). */
	uint64_t rx_bytes;             /* DATA payload bytes from it since
					* the last round began */
	uint64_t rx_tick;              /* tick of rx_cur */
	uint64_t rx_cur;               /* DATA payload bytes from it in that
					* tick */
	uint64_t rx_prev;              /* ... and in the tick before */
	uint64_t rx_peak;              /* the most in one earlier tick ... */
	uint64_t rx_peak_tick;         /* ... that tick (see
					* homa_peer_rx_peak) */
	uint64_t loss_tick;            /* tick + 1 when a RESEND last asked
					* it for bytes of a message that had
					* begun to arrive; 0 = never */
	uint64_t grant_out;            /* scratch of ep_grant_update: bytes
					* granted to it, not received */
	uint64_t round_tick;           /* tick of the last round + 1; 0 =
					* none yet */
	uint64_t round_left;           /* bytes the RESENDs of that round
					* may still ask for */
	struct homa_list due;          /* our RPCs with it whose RESEND is
					* due in this timer tick, shortest
					* remaining first (homa_resend.c) */
	struct homa_list due_links;    /* on the endpoint's list of peers
					* with RESENDs due */
};

struct homa_peer_table {
	struct homa_hash hash;         /* the peers, by host address */
	uint32_t max_peers;            /* 0 = unlimited */
};

/* homa_peer_table_init - an empty table; returns 0 or -ENOMEM. */
int homa_peer_table_init(struct homa_peer_table *t);

/* homa_peer_table_destroy - free every peer and the table. */
void homa_peer_table_destroy(struct homa_peer_table *t);

/*
 * homa_peer_get - the peer for addr's host (ports ignored), created when
 * absent.  At max_peers, creating one first forgets a peer without RPCs
 * (its queued acks are lost: NEED_ACK recovers them).  Returns it (owned by
 * the table) or NULL when out of memory or when every peer has RPCs.
 */
struct homa_peer *homa_peer_get(struct homa_peer_table *t,
				const union sockaddr_in_union *addr);

/*
 * homa_peer_unsched_priority - priority for the unscheduled bytes of a
 * message of length bytes sent to peer: the highest i whose cutoff admits
 * the length (entry 0 admits all); `fallback` until the peer's CUTOFFS
 * arrived; never above num_priorities - 1.
 */
uint8_t homa_peer_unsched_priority(const struct homa_peer *peer,
				   uint32_t length, int num_priorities,
				   uint8_t fallback);

/* homa_peer_set_cutoffs - adopt the cutoffs of a CUTOFFS packet. */
void homa_peer_set_cutoffs(struct homa_peer *peer, const uint32_t *cutoffs,
			   uint16_t version);

/*
 * homa_peer_cutoffs_due - true when our CUTOFFS may go to peer at the
 * endpoint's tick: none went to it in the last interval ticks (interval
 * >= 1; 0 counts as 1, once per tick).  When true, the send is recorded:
 * the caller must send them.
 */
bool homa_peer_cutoffs_due(struct homa_peer *peer, uint64_t tick,
			   uint64_t interval);

/*
 * homa_peer_add_ack - queue an ack of client RPC id sent to server_port.
 * Returns the number queued afterwards (HOMA_MAX_ACKS means full: the
 * caller should flush them in ACK packets).
 */
int homa_peer_add_ack(struct homa_peer *peer, uint64_t id,
		      uint16_t server_port);

/*
 * homa_peer_pop_ack - remove and return one queued ack for server_port
 * (client_id 0 when there is none).
 */
struct homa_ack homa_peer_pop_ack(struct homa_peer *peer,
				  uint16_t server_port);

/*
 * homa_peer_take_acks - remove up to HOMA_MAX_ACKS queued acks for the same
 * server port as the first queued one into out; returns how many (0 when
 * none are queued).
 */
int homa_peer_take_acks(struct homa_peer *peer, struct homa_ack *out);

/*
 * homa_peer_heard - a packet from port of peer moved an RPC forward at the
 * endpoint's tick (see ep_heard): remember it, replacing the port heard
 * from longest ago when all HOMA_PEER_HEARD_PORTS entries are taken by
 * other ports.
 */
void homa_peer_heard(struct homa_peer *peer, uint16_t port, uint64_t tick);

/*
 * homa_peer_heard_within - true when port of peer was heard from (see
 * homa_peer_heard) at a tick after now_tick - ticks, i.e. less than ticks
 * ticks ago.  A port not remembered (never heard, or pushed out by busier
 * ports) was not heard.
 */
bool homa_peer_heard_within(const struct homa_peer *peer, uint16_t port,
			    uint64_t now_tick, uint64_t ticks);

/*
 * homa_peer_heard_since - true when port of peer was heard from at or
 * after tick.
 */
bool homa_peer_heard_since(const struct homa_peer *peer, uint16_t port,
			   uint64_t tick);

/*
 * homa_peer_probe_room - true when fewer than max timer probes (RESENDs)
 * went to peer in the endpoint's tick (see homa_peer_probe_taken).
 */
bool homa_peer_probe_room(const struct homa_peer *peer, uint64_t tick,
			  uint32_t max);

/* homa_peer_probe_taken - count one timer probe sent to peer in tick. */
void homa_peer_probe_taken(struct homa_peer *peer, uint64_t tick);

/* homa_peer_need_ack_room, homa_peer_need_ack_taken - the same for the
 * NEED_ACKs the timer sends to peer. */
bool homa_peer_need_ack_room(const struct homa_peer *peer, uint64_t tick,
			     uint32_t max);
void homa_peer_need_ack_taken(struct homa_peer *peer, uint64_t tick);

/*
 * homa_peer_note_wait - a response from peer began after ticks quiet ticks
 * of its RPC (ticks waited since the request's last progress): fold the
 * sample into the smoothed wait and its mean deviation (gains 1/8 and 1/4,
 * as TCP estimates its round trip; samples above HOMA_PEER_WAIT_MAX count
 * as that).
 */
void homa_peer_note_wait(struct homa_peer *peer, uint32_t ticks);

/* The largest response wait homa_peer_note_wait takes in, in ticks. */
#define HOMA_PEER_WAIT_MAX 100000u

/*
 * homa_peer_wait_bound - the quiet ticks beyond which a response from peer
 * is late: its smoothed wait plus four mean deviations, rounded up; 0 while
 * no wait was noted.
 */
uint32_t homa_peer_wait_bound(const struct homa_peer *peer);

/* homa_peer_note_rx - a DATA packet with bytes of payload arrived from
 * peer (new or not: what the path delivered) in the endpoint's tick. */
void homa_peer_note_rx(struct homa_peer *peer, uint32_t bytes,
		       uint64_t tick);

/* homa_peer_rx_rate - the DATA payload bytes that arrived from peer in
 * the endpoint's tick or the one before, whichever is more (what the
 * path delivers per tick now). */
uint64_t homa_peer_rx_rate(const struct homa_peer *peer, uint64_t tick);

/* Ticks over which homa_peer_rx_peak remembers a tick's arrivals. */
#define HOMA_PEER_PEAK_TICKS 100

/* homa_peer_rx_peak - the most new DATA payload bytes that arrived from
 * peer in one tick of the last HOMA_PEER_PEAK_TICKS ticks before the
 * endpoint's tick, or in that tick so far (what its path can deliver per
 * tick: a silence, such as a partition, does not lower it at once).  One
 * peak is kept: a tick below it while it counts is forgotten, so once it
 * expires only the last tick and the current one count. */
uint64_t homa_peer_rx_peak(const struct homa_peer *peer, uint64_t tick);

/*
 * homa_peer_resend_take - up to want bytes of the loss-recovery budget of
 * peer in the endpoint's tick.  The first call in a tick begins a round:
 * its budget is the bytes that arrived from peer since the previous
 * round began (homa_peer_note_rx), but at least floor (the first round
 * of all has floor: recovery starts small); later calls in the same tick
 * take what the round has left.  Returns the bytes taken (0
 * when the round's budget is spent); they are the caller's to ask for.
 */
uint32_t homa_peer_resend_take(struct homa_peer *peer, uint64_t tick,
			       uint64_t floor, uint32_t want);

/* homa_peer_resend_round - begin a round of peer's budget now, in the
 * endpoint's tick, even if one began in this tick already (what a RESEND
 * cut short asked for has arrived: the next part may be asked at once). */
void homa_peer_resend_round(struct homa_peer *peer, uint64_t tick,
			    uint64_t floor);

#endif /* HOMA_PEER_H */
