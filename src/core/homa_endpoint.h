/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_endpoint - the sans-IO protocol engine of one Homa socket.
 *
 * Packets and the time go in (homa_ep_input, homa_ep_timer); packets with
 * their destination and priority come out (homa_ep_output, pulled by the
 * caller until it returns false); the application's requests go in through
 * homa_ep_send_request/homa_ep_send_reply and complete messages come out
 * through homa_ep_receive.  The endpoint never opens a socket, reads a clock
 * or starts a thread, and it is not thread-safe: the caller serialises every
 * call on one endpoint (the socket layer holds a mutex).
 *
 * Times are nanoseconds on any monotonic clock the caller chooses.
 */
#ifndef HOMA_ENDPOINT_H
#define HOMA_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "homa.h"
#include "homa_config.h"
#include "homa_pool.h"
#include "homa_stats.h"

struct homa_ep;

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

/* homa_ep_port - the local port. */
uint16_t homa_ep_port(const struct homa_ep *ep);

/* homa_ep_pool - the endpoint's buffer pool (owned by the endpoint). */
struct homa_pool *homa_ep_pool(struct homa_ep *ep);

/* homa_ep_max_packet - the largest packet homa_ep_output writes to a
 * peer across a link (bytes, from mtu). */
size_t homa_ep_max_packet(const struct homa_ep *ep);

/* homa_ep_max_output - the largest packet homa_ep_output writes to any
 * peer (bytes): homa_ep_max_packet, or more to a loopback address
 * (loopback_mtu). */
size_t homa_ep_max_output(const struct homa_ep *ep);

/*
 * homa_ep_input - one received packet.
 * Takes: the bytes (any content: malformed packets are counted and
 * dropped), the sender's address and port, the core number of the caller,
 * the time.  May queue packets for homa_ep_output and complete messages.
 */
void homa_ep_input(struct homa_ep *ep, const uint8_t *buf, size_t len,
		   const union sockaddr_in_union *src, int core, uint64_t now);

/*
 * Where the payload of an expected DATA packet belongs (homa_ep_rx_hints):
 * the packet, by its sender's address and port, sender_id, message length,
 * offset and payload length; and the memory of the buffer pool its
 * payload goes to, in iovcnt pieces.
 */
#define HOMA_EP_HINT_IOVS 2
struct homa_rx_hint {
	union sockaddr_in_union src;
	uint64_t sender_id;
	uint32_t message_length;
	uint32_t offset;
	uint32_t payload_len;
	struct iovec iov[HOMA_EP_HINT_IOVS];
	int iovcnt;
};

/*
 * homa_ep_rx_hints - places for the payload of the packets most likely to
 * come next: the next packets, in order, of the incoming message whose
 * last DATA was large (16 KB of payload or more, as from a loopback
 * sender).  Writes at most max hints to out and returns how many (0: no
 * guess).  Every place named is buffer space of that message for bytes
 * that have not arrived, so a caller may let the kernel write any
 * datagram there, provided that (a) it calls homa_ep_hint_matches for the
 * datagram and, when that says no, moves the bytes out before it passes
 * any packet to the endpoint, (b) it does so before any other call on
 * the endpoint, and (c) the hints of one call name no place twice (they
 * do not).
 */
int homa_ep_rx_hints(struct homa_ep *ep, struct homa_rx_hint *out, int max);

/*
 * homa_ep_rx_probe - whether the caller's next kernel read should take one
 * packet only: the last packet passed in completed a message that came in
 * large packets and no other message of such packets is under way (no
 * hints), so the next packet may well begin one more.  Once the endpoint
 * has that first packet, homa_ep_rx_hints offers places for the rest;
 * read in one batch with it, they would all be copied.  Any other packet
 * passed in ends the probe: at most one read per large message is cut
 * short.
 */
bool homa_ep_rx_probe(struct homa_ep *ep);

/*
 * homa_ep_hint_matches - whether a datagram whose header is in buf[0..
 * HOMA_DATA_HDR_LEN), len bytes in all, from src, is exactly the packet
 * hint h expected (DATA, same sender, RPC, message length, offset and
 * payload length), so that its payload, written where h says, is in
 * place: pass it with homa_ep_input_placed.  Counts rx_placed or
 * rx_misplaced; a packet of h's message at another offset stops the
 * guesses for that message for good.
 */
bool homa_ep_hint_matches(struct homa_ep *ep, const struct homa_rx_hint *h,
			  const uint8_t *buf, size_t len,
			  const union sockaddr_in_union *src);

/*
 * homa_ep_input_placed - homa_ep_input for a DATA packet that
 * homa_ep_hint_matches accepted: buf holds its header, len is its length
 * with the payload, which is already in place (nothing is copied).  A
 * packet of another type is dropped as malformed.
 */
void homa_ep_input_placed(struct homa_ep *ep, const uint8_t *buf, size_t len,
			  const union sockaddr_in_union *src, int core,
			  uint64_t now);

/*
 * homa_ep_input_backlog - the caller tells whether packets the network
 * delivered wait that it has not passed to homa_ep_input yet (behind
 * true), or it has read all there was (false).  While the endpoint is
 * behind its own input, the silence it sees may be its own queue rather
 * than its peers: a timer tick in whose interval it never caught up counts
 * no silent tick for any RPC, so its backlog causes no RESEND, NEED_ACK or
 * timeout (which would only add to the backlog).  A caller that never
 * calls it is taken as always caught up; it should set resend_tail_probe,
 * or a slow receiver's RESENDs ask again for packets that only wait in its
 * own input (the loss-recovery budget bounds them to what arrived, the
 * probe to one packet per silent tail: docs/scheduling.md, "Loss
 * recovery").
 */
void homa_ep_input_backlog(struct homa_ep *ep, bool behind);

/*
 * homa_ep_defer_copies - from now until homa_ep_finish_copies, homa_ep_input
 * records where DATA payload goes instead of copying it into the buffer
 * pool, so that the GRANTs a batch of packets earns can leave (through
 * homa_ep_output) before its bytes are copied.  The caller keeps the bytes
 * of every packet it passes in the meantime unchanged until
 * homa_ep_finish_copies returns.  Nothing can read or reuse a deferred
 * destination first: the endpoint copies everything deferred before it
 * hands out a message (homa_ep_receive), releases buffer space or frees an
 * RPC, and when HOMA_EP_DEFERRED_COPIES copies wait.
 */
void homa_ep_defer_copies(struct homa_ep *ep);

/*
 * homa_ep_finish_copies - make every deferred copy, in the order the
 * packets came, and stop deferring.  Without deferred copies, does nothing.
 */
void homa_ep_finish_copies(struct homa_ep *ep);

/* A payload copy into the buffer region. */
struct homa_ep_copy {
	void *dst;
	const void *src;
	size_t len;
};

/*
 * homa_copier - makes payload copies into the buffer region for the
 * endpoint (homa_ep_set_copier): c[0..n) in order.  Returns n when all
 * are made, else the index of the first whose destination could not be
 * written (memory the application unmapped or made read-only); the copies
 * after it are not made.
 */
typedef uint32_t (*homa_copier)(void *ctx, const struct homa_ep_copy *c,
				uint32_t n);

/*
 * homa_ep_set_copier - payload copies go through fn(ctx, ...) from now on
 * (NULL: memcpy, the default, which assumes the region stays writable).
 * An RPC whose copy could not be made (counted as copy_faults) stores no
 * more bytes and fails with EFAULT: a client RPC is reported with error
 * EFAULT, a server RPC's request too (homa_ep_receive) or, before it is
 * complete, it is dropped at the next tick.
 */
void homa_ep_set_copier(struct homa_ep *ep, homa_copier fn, void *ctx);

/*
 * homa_ep_rx_fault - the caller's read into the places of hints[0..n)
 * (homa_ep_rx_hints) failed because the region could not be written: the
 * RPCs they name fail as after a copy fault (homa_ep_set_copier).
 */
void homa_ep_rx_fault(struct homa_ep *ep, const struct homa_rx_hint *hints,
		      int n);

/* Payload copies homa_ep_defer_copies holds at most (a packet's payload
 * takes one, or two where it crosses a bpage boundary): a batch of eight
 * coalesced 64 KB datagrams is about 370 packets. */
#define HOMA_EP_DEFERRED_COPIES 512

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
 * (a message lent by homa_ep_lend), the frames hold only the headers and
 * the run's payload is payload[0..payload_len), packet i's from payload +
 * i * seg, in the caller's memory until homa_ep_settle.
 */
struct homa_out {
	uint8_t *buf;                    /* in: homa_ep_max_packet bytes */
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

/* homa_ep_pacer_wake - when the pacer lets held-back DATA go (absolute
 * ns), or 0 when no DATA waits for it. */
uint64_t homa_ep_pacer_wake(const struct homa_ep *ep);

/*
 * homa_ep_timer - run the timer if a tick is due at now: RESENDs for silent
 * RPCs, timeouts, NEED_ACKs.  Calling it early does nothing.
 */
void homa_ep_timer(struct homa_ep *ep, uint64_t now);

/*
 * homa_ep_lend - let the next homa_ep_send_request or homa_ep_send_reply
 * read its message in the caller's memory instead of copying it first,
 * when the message is one piece (a single nonempty iovec) of at least
 * HOMA_EP_LEND_MIN bytes: the packets homa_ep_output hands out before
 * homa_ep_settle then carry the caller's bytes (homa_out.payload), so the
 * first of them leave without waiting for the copy.  The caller keeps that
 * memory valid and unchanged until homa_ep_settle returns.
 */
void homa_ep_lend(struct homa_ep *ep);

/*
 * homa_ep_settle - copy the message homa_ep_lend let the endpoint read in
 * the caller's memory (if any) into the endpoint's own buffer, and end the
 * lending: the caller's memory is free again.  Without lending, does
 * nothing.
 */
void homa_ep_settle(struct homa_ep *ep);

/*
 * homa_ep_settle_part - homa_ep_settle in steps, so that the caller can
 * read its input between them: copy about max_bytes more of the lent
 * message.  A request whose response is complete (read in between) is not
 * copied further: the server had all of it (counted by tx_copies_skipped).
 * Returns true when the endpoint no longer reads the caller's memory,
 * false when more is to be copied.
 */
bool homa_ep_settle_part(struct homa_ep *ep, uint32_t max_bytes);

/* The smallest message homa_ep_lend applies to: below it, copying first
 * costs less than sending each packet's header and payload from two
 * places. */
#define HOMA_EP_LEND_MIN 65536

/*
 * homa_ep_send_request - start a client RPC.
 * Takes: destination (family must match the endpoint's), the message as an
 * iovec (copied, or read in place until homa_ep_settle after homa_ep_lend;
 * 1..HOMA_MAX_MESSAGE_LENGTH bytes), the cookie.
 * Returns 0 and sets *id (even); -EINVAL for a bad address, length or iovec;
 * -ESHUTDOWN after homa_ep_shutdown; -ENOMEM.
 */
int homa_ep_send_request(struct homa_ep *ep,
			 const union sockaddr_in_union *dest,
			 const struct iovec *iov, int iovcnt,
			 uint64_t cookie, uint64_t *id, uint64_t now);

/*
 * homa_ep_send_reply - send the response of the server RPC id (odd) whose
 * request came from dest.
 * Returns 0 (also when no such RPC exists any more: it was aborted or timed
 * out, and the response is dropped); -EINVAL for an even id, a bad address,
 * length or iovec, or an RPC whose request is not yet delivered or that
 * already has a response; -ESHUTDOWN; -ENOMEM.
 */
int homa_ep_send_reply(struct homa_ep *ep, const union sockaddr_in_union *dest,
		       uint64_t id, const struct iovec *iov, int iovcnt,
		       uint64_t now);

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
 * homa_ep_set_private - make client RPC id private (the kernel uAPI's
 * HOMA_SENDMSG_PRIVATE): its response or failure is handed only to a
 * homa_ep_receive naming id, never to one with id 0, and does not make the
 * endpoint readable.  Call it right after homa_ep_send_request, in the same
 * critical section.  Returns 0, or -EINVAL when id names no client RPC.
 */
int homa_ep_set_private(struct homa_ep *ep, uint64_t id);

/* homa_ep_readable - true when a request, response or RPC error that a
 * receive with id 0 would take is waiting (private RPCs do not count;
 * after shutdown: always true, homa_ep_receive then fails at once). */
bool homa_ep_readable(const struct homa_ep *ep);

/*
 * homa_ep_wmem - bytes of outgoing messages the endpoint holds: each
 * message counts its length from homa_ep_send_request/_reply until its RPC
 * is freed (a request: its response or error handed over by
 * homa_ep_receive, or homa_ep_abort with error 0; a response: the client's
 * ACK, or the RPC dropped; every one at homa_ep_shutdown).  A failed RPC
 * counts until its error is handed over.
 */
uint64_t homa_ep_wmem(const struct homa_ep *ep);

/* homa_ep_writable - true while homa_ep_wmem is below the wmem_max
 * setting: a send is then admitted (it may take the total past the limit,
 * as the kernel admits the message that crosses it).  The endpoint itself
 * never refuses a send: the caller waits, or fails with EAGAIN, while this
 * is false. */
bool homa_ep_writable(const struct homa_ep *ep);

/* homa_ep_completions - a counter that grows whenever a message or error
 * becomes ready, for the caller's wake-ups. */
uint64_t homa_ep_completions(const struct homa_ep *ep);

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

/* homa_ep_stats - the endpoint's counters (HOMA_STAT_COUNT entries). */
const uint64_t *homa_ep_stats(const struct homa_ep *ep);

/* homa_ep_num_rpcs - RPCs alive in the endpoint (for tests and leaks). */
uint32_t homa_ep_num_rpcs(const struct homa_ep *ep);

#endif /* HOMA_ENDPOINT_H */
