/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_endpoint - the sans-IO protocol engine of one Homa socket, and the
 * seam between it and the runtime that drives it.
 *
 * The endpoint never opens a socket, reads a clock or starts a thread, and
 * it is not thread-safe: the caller serialises every call on one endpoint
 * (the socket layer holds a mutex).  It never calls back into its caller
 * (but for the payload copier given at creation, which only copies).
 * Times are nanoseconds on any monotonic clock the caller chooses.
 *
 * The seam is 17 calls, each for one thing the runtime must do:
 *   life       homa_ep_create, homa_ep_destroy, homa_ep_set_port (the
 *              socket was bound: a server now), homa_ep_shutdown
 *   packets    homa_ep_input (a batch in, with the datagrams' places),
 *              homa_ep_output (the next packet or run out)
 *   time       homa_ep_timer (a tick), homa_ep_next_timer (the expiry:
 *              when to call it and pull the output again)
 *   sending    homa_ep_send_request, homa_ep_send_reply
 *   receiving  homa_ep_receive (a message or error to the application),
 *              homa_ep_return_bpages (its buffers back)
 *   errors     homa_ep_abort (the application ends RPCs),
 *              homa_ep_peer_unreachable (the network says a peer is gone)
 *   state      homa_ep_info (port, sizes, readiness, wmem, counters, ...)
 *   lent       homa_ep_lent_places, homa_ep_lent_settle (homa_lent.h:
 *              memory lent across the seam for the zero-copy paths)
 */
#ifndef HOMA_ENDPOINT_H
#define HOMA_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "homa.h"
#include "homa_config.h"
#include "homa_lent.h"
#include "homa_pool.h"
#include "homa_stats.h"

struct homa_ep;

/* A payload copy into the buffer region. */
struct homa_ep_copy {
	void *dst;
	const void *src;
	size_t len;
};

/*
 * homa_copier - makes payload copies into the buffer region for the
 * endpoint (homa_ep_params.copier): c[0..n) in order.  Returns n when all
 * are made, else the index of the first whose destination could not be
 * written (memory the application unmapped or made read-only); the copies
 * after it are not made.
 */
typedef uint32_t (*homa_copier)(void *ctx, const struct homa_ep_copy *c,
				uint32_t n);

/* The most encapsulation bytes an endpoint accepts (homa_ep_params). */
#define HOMA_EP_MAX_ENCAP 64

struct homa_ep_params {
	const struct homa_config *cfg;   /* copied */
	int family;                      /* AF_INET or AF_INET6 */
	uint16_t port;                   /* local Homa port */
	bool is_server;                  /* accepts requests */
	uint64_t first_client_id;        /* even; ids of new requests
					  * count up from it by 2 */
	int num_cores;                   /* for the buffer pool */
	uint32_t encap_bytes;            /* header bytes the datapath puts
					  * between the IP header and each
					  * Homa packet (8 over UDP, 0 over
					  * raw IP); they count against the
					  * mtu setting */
	homa_copier copier;              /* payload copies into the buffer
					  * region go through copier(
					  * copier_ctx, ...) (NULL: memcpy,
					  * which assumes the region stays
					  * writable).  An RPC whose copy
					  * could not be made (counted as
					  * copy_faults) stores no more bytes
					  * and fails with EFAULT: a client
					  * RPC is reported with error EFAULT,
					  * a server RPC's request too
					  * (homa_ep_receive) or, before it is
					  * complete, it is dropped at the
					  * next tick. */
	void *copier_ctx;
};

/*
 * homa_ep_create - a new endpoint.  Returns it (the caller owns it; free with
 * homa_ep_destroy) or NULL when out of memory or the parameters are invalid.
 */
struct homa_ep *homa_ep_create(const struct homa_ep_params *params);

/* homa_ep_destroy - free the endpoint and every RPC in it.  NULL ignored. */
void homa_ep_destroy(struct homa_ep *ep);

/* homa_ep_set_port - change the local port and whether requests are
 * accepted (after the socket layer bound its datapath). */
void homa_ep_set_port(struct homa_ep *ep, uint16_t port, bool is_server);

/* One received datagram of a batch (homa_ep_input). */
struct homa_rx_pkt {
	const uint8_t *buf;             /* its bytes (with place -1 or placed
					 * false), or only its first hdr_len
					 * bytes (placed true) */
	size_t len;                     /* its length, with the payload */
	union sockaddr_in_union src;    /* sender's address and port */
	int place;                      /* -1, or the index of the lent place
					 * it was tried against (one packet
					 * that filled it exactly) */
	bool placed;                    /* it matched that place: its payload
					 * is there, nothing to copy */
};

/*
 * A batch of received datagrams: pkts[0..n), in the order they came, and
 * places, the lent places of the kernel read they came from
 * (homa_ep_lent_places; NULL when none).  fault: the read failed because the places could not be written
 * (the application took the region away; n is then 0).  behind: the
 * caller knows more datagrams wait that it has not read (a full read).
 * defer_copies: the caller keeps every pkts[i].buf unchanged until its
 * next homa_ep_input or homa_ep_lent_places (which make the copies first),
 * so that the GRANTs the batch earns can leave (homa_ep_output) before its
 * payload is copied; the endpoint makes them earlier where it needs them
 * (a receive, buffer space released, an RPC freed).  A batch may be empty
 * (n 0): it only says behind (and makes the copies earlier batches
 * deferred).
 */
struct homa_rx_batch {
	const struct homa_rx_pkt *pkts;
	int n;
	const struct homa_lent_places *places;
	bool fault;
	bool behind;
	bool defer_copies;
};

/* Payload copies a batch with defer_copies holds at most (a packet's
 * payload takes one, or two where it crosses a bpage boundary; more are
 * made at once): a batch of eight coalesced 64 KB datagrams is about 370
 * packets. */
#define HOMA_EP_DEFERRED_COPIES 512

/*
 * homa_ep_input - a batch of received datagrams.
 * Takes: the batch (any content: malformed packets are counted and
 * dropped), the core number of the caller, the time (not read for an empty
 * batch).  First makes the copies earlier batches deferred, in order.  May
 * queue packets for homa_ep_output and complete messages.  Calls nothing
 * of the caller's but the copier (homa_ep_params).
 * The lent places of the batch come back to the endpoint: a placed packet
 * is counted as rx_placed, one tried against a place but not placed as
 * rx_misplaced (and a packet of the place's message at another offset
 * ends the places offered for that message: every wrong guess costs a
 * copy); a packet marked placed that is not its place's packet, or names
 * no place of the batch, is dropped as malformed (its payload is nowhere
 * the endpoint knows); with fault, the RPCs of the places fail as after a
 * copy fault.
 * behind: while the endpoint is behind its own input, the silence it sees
 * may be its own queue rather than its peers: a timer tick in whose
 * interval it never caught up (no batch with behind false) counts no
 * silent tick for any RPC, so its backlog causes no RESEND, NEED_ACK or
 * timeout (which would only add to the backlog).  A caller that never sets
 * it should set resend_tail_probe, or a slow receiver's RESENDs ask again
 * for packets that only wait in its own input (docs/scheduling.md, "Loss
 * recovery").
 */
void homa_ep_input(struct homa_ep *ep, const struct homa_rx_batch *batch,
		   int core, uint64_t now);

/*
 * One packet to send, or a run of DATA packets of one message.  With
 * max_segs 0 every packet comes whole in buf[0..len) (segs 0).  With
 * max_segs n >= 1 DATA may come as a run instead: segs (1..n) whole packets
 * to the same destination at the same priority, back to back at frames
 * (len bytes in all): packet i starts at frames + i * (HOMA_DATA_HDR_LEN +
 * seg) and holds its header and the payload bytes [i * seg, min((i + 1) *
 * seg, payload_len)) of the run.  frames points into the engine's copy of
 * the message (laid out so, with the headers written in place) and stays
 * valid until the next call into the endpoint.  When payload is not NULL
 * (a lent message, homa_lent.h), the frames hold only the headers and the
 * run's payload is payload[0..payload_len), packet i's from payload + i *
 * seg, in the caller's memory until homa_ep_lent_settle.
 */
struct homa_out {
	uint8_t *buf;                    /* in: homa_ep_info.max_packet bytes */
	uint32_t max_segs;               /* in: see above */
	size_t len;                      /* out: bytes of the packet(s) */
	union sockaddr_in_union dest;    /* out: address and port */
	uint8_t priority;                /* out: 0..7 */
	uint32_t segs;                   /* out: 0, or packets of a run */
	const uint8_t *frames;           /* out (segs > 0): the packets */
	uint32_t payload_len;            /* out (segs > 0): payload bytes */
	uint32_t seg;                    /* out (segs > 0): payload bytes per
					  * packet (the last may have fewer) */
	const uint8_t *payload;          /* out (segs > 0): NULL, or the
					  * run's payload (see above) */
};

/*
 * homa_ep_output - the next packet to send, if any.
 * Returns true and fills out, or false when nothing is to be sent now.
 * Control packets come first, then DATA of the message with the fewest
 * bytes left to send.  The pacer (link_mbps, max_nic_queue_ns) holds DATA
 * of messages of throttle_min_bytes or more while the estimated link
 * backlog is max_nic_queue_ns or more: pull again at homa_ep_next_timer.
 * A fraction (pacer_fifo_fraction) of paced packets goes to the oldest
 * message instead of the shortest.  A gathered run counts as one unit for
 * the pacer (as a segmentation-offload packet does in the kernel): it may
 * leave while the backlog is under max_nic_queue_ns, and a paced run holds
 * at most the bytes the link carries in HOMA_RUN_QUEUE_FACTOR times
 * max_nic_queue_ns (at least one packet).
 */
bool homa_ep_output(struct homa_ep *ep, uint64_t now, struct homa_out *out);

/* A paced run holds at most the link's bytes of this many times
 * max_nic_queue_ns: the queue a run leaves behind stays within a few times
 * the pacer's allowance, while each release of the pacer moves enough
 * bytes to keep a fast link busy between wake-ups of a user-space thread
 * (25 Gbit/s and 5 us: 62,500 bytes, 43 packets of 1500). */
#define HOMA_RUN_QUEUE_FACTOR 4

/* homa_ep_next_timer - when homa_ep_timer should next run, and the output
 * be pulled again (absolute ns): the next tick, or earlier when the pacer
 * holds DATA back until then.  0 before the endpoint has seen a time. */
uint64_t homa_ep_next_timer(const struct homa_ep *ep);

/*
 * homa_ep_timer - run the timer if a tick is due at now: RESENDs for silent
 * RPCs, timeouts, NEED_ACKs.  Calling it early does nothing.
 */
void homa_ep_timer(struct homa_ep *ep, uint64_t now);

/*
 * homa_ep_send_request - start a client RPC.
 * Takes: destination (family must match the endpoint's), the message as an
 * iovec (1..HOMA_MAX_MESSAGE_LENGTH bytes; copied, or lent: see
 * HOMA_EP_SEND_LENT), the cookie, flags (HOMA_EP_SEND_*).
 * Returns 0 and sets *id (even); -EINVAL for a bad address, length or iovec;
 * -ESHUTDOWN after homa_ep_shutdown; -ENOMEM.
 */
int homa_ep_send_request(struct homa_ep *ep,
			 const union sockaddr_in_union *dest,
			 const struct iovec *iov, int iovcnt,
			 uint64_t cookie, int flags, uint64_t *id,
			 uint64_t now);

/* Flags of homa_ep_send_request and homa_ep_send_reply. */
enum {
	/* Lend the message (homa_lent.h) when it is one piece (a single
	 * nonempty iovec) of at least HOMA_EP_LEND_MIN bytes: the packets
	 * homa_ep_output hands out until homa_ep_lent_settle carry the
	 * caller's bytes, which stay valid and unchanged until then.  One
	 * message is lent at a time: one still lent from an earlier send is
	 * copied first. */
	HOMA_EP_SEND_LENT = 1,
	/* Requests only: the RPC is private (the kernel uAPI's
	 * HOMA_SENDMSG_PRIVATE): its response or failure is handed only to
	 * a homa_ep_receive naming its id, never to one with id 0, and does
	 * not make the endpoint readable. */
	HOMA_EP_SEND_PRIVATE = 2,
};

/*
 * homa_ep_send_reply - send the response of the server RPC id (odd) whose
 * request came from dest.
 * Returns 0 (also when no such RPC exists any more: it was aborted or timed
 * out, and the response is dropped); -EINVAL for an even id, a bad address,
 * length or iovec, or an RPC whose request is not yet delivered or that
 * already has a response; -ESHUTDOWN; -ENOMEM.  flags: HOMA_EP_SEND_LENT
 * or 0.
 */
int homa_ep_send_reply(struct homa_ep *ep, const union sockaddr_in_union *dest,
		       uint64_t id, const struct iovec *iov, int iovcnt,
		       int flags, uint64_t now);

/* A message (or a client RPC's failure) handed to the application. */
struct homa_msg_ready {
	uint64_t id;            /* odd: request; even: response */
	uint64_t cookie;        /* responses: the request's cookie */
	union sockaddr_in_union peer;
	int error;              /* 0, or the positive errno of a failed RPC */
	uint32_t length;        /* message bytes (0 on error) */
	uint32_t num_bpages;
	uint32_t bpage_offsets[HOMA_MAX_BPAGES];
};

/*
 * homa_ep_return_bpages - the application hands back bpages of earlier
 * messages.  Returns 0, or -EINVAL when any offset is not one it owns (none
 * is taken).  Freed space may let messages waiting for buffers proceed.
 */
int homa_ep_return_bpages(struct homa_ep *ep, const uint32_t *offsets,
			  uint32_t num, int core, uint64_t now);

/*
 * homa_ep_receive - take a ready message.
 * Takes: id 0 for any message selected by flags (HOMA_RECVMSG_REQUEST and/or
 * HOMA_RECVMSG_RESPONSE), or the id of one client RPC; an output.  With id
 * 0, failures come first, then the shortest of the oldest few ready
 * messages, except that every few takes the oldest one goes (no message
 * waits for ever behind shorter ones).
 * Returns 0 and fills out (the application now owns its bpages; on
 * out->error != 0 the RPC has failed and there are none: ENOMEM when the
 * response's bpages could not be recorded as the application's); -EAGAIN
 * when no such message is ready yet (a request whose bpages could not be
 * recorded is dropped, counted as drop_no_memory, and its client sends it
 * again); -EINVAL when id names no client RPC of this endpoint; -ESHUTDOWN
 * after shutdown when nothing is left.
 */
int homa_ep_receive(struct homa_ep *ep, uint64_t id, int flags,
		    struct homa_msg_ready *out);

/*
 * homa_ep_abort - end client RPC id, or all client RPCs when id is 0.
 * error 0 discards them silently; otherwise each completes with that errno.
 * Returns 0, or -EINVAL when id names no client RPC.
 */
int homa_ep_abort(struct homa_ep *ep, uint64_t id, int error);

/*
 * homa_ep_peer_unreachable - the host of addr said that nothing listens on
 * addr's port (an ICMP port unreachable, or protocol unreachable, whose
 * offending packet the caller has checked was one of ours to addr), and the
 * packet it quotes carried RPC id: client RPC id fails with ENOTCONN if it
 * is to that address and port and still waits for its response.  Only the
 * quoted RPC ends: client ids are never reused, so a late error cannot end
 * an RPC that started after its packet was sent (one to a port bound again
 * meanwhile).  Other RPCs, server RPCs (an odd id), an id no RPC holds any
 * more and responses already complete are left alone.
 * Takes: addr (family of the endpoint, nonzero port; anything else does
 * nothing), the quoted sender id (0: unknown, does nothing), the time.
 * Returns the number of RPCs failed (0 or 1).
 */
int homa_ep_peer_unreachable(struct homa_ep *ep,
			     const union sockaddr_in_union *addr, uint64_t id,
			     uint64_t now);

/* homa_ep_shutdown - fail every client RPC with ESHUTDOWN, drop server RPCs,
 * refuse new sends and requests. */
void homa_ep_shutdown(struct homa_ep *ep);

/* What the runtime reads of an endpoint (homa_ep_info). */
struct homa_ep_info {
	uint16_t port;             /* the local port */
	struct homa_pool *pool;    /* the buffer pool (owned by the endpoint) */
	size_t max_packet;         /* the largest packet homa_ep_output writes
				    * to a peer across a link (bytes, from
				    * mtu) */
	size_t max_output;         /* ... to any peer: max_packet, or more to
				    * a loopback address (loopback_mtu) */
	bool readable;             /* a request, response or RPC error that a
				    * receive with id 0 would take waits
				    * (private RPCs do not count; after
				    * shutdown: always true, homa_ep_receive
				    * then fails at once) */
	uint64_t completions;      /* grows whenever a message or error
				    * becomes ready (for wake-ups) */
	uint64_t wmem;             /* bytes of outgoing messages held: each
				    * message counts its length from its send
				    * until its RPC is freed (a request: its
				    * response or error handed over by
				    * homa_ep_receive, or homa_ep_abort with
				    * error 0; a response: the client's ACK,
				    * or the RPC dropped; every one at
				    * homa_ep_shutdown).  A failed RPC counts
				    * until its error is handed over. */
	bool writable;             /* wmem is below the wmem_max setting: a
				    * send is then admitted (it may take the
				    * total past the limit, as the kernel
				    * admits the message that crosses it).
				    * The endpoint itself never refuses a
				    * send: the caller waits, or fails with
				    * EAGAIN, while this is false. */
	uint64_t pacer_wake;       /* when the pacer lets held-back DATA go
				    * (absolute ns), or 0 when no DATA waits
				    * for it */
	uint32_t num_rpcs;         /* RPCs alive (for tests and leaks) */
	const uint64_t *stats;     /* the counters (HOMA_STAT_COUNT entries),
				    * valid while the endpoint lives */
};

/* homa_ep_info - fill out with the endpoint's state now. */
void homa_ep_info(const struct homa_ep *ep, struct homa_ep_info *out);

#endif /* HOMA_ENDPOINT_H */
