/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_lent - lent memory: bytes that cross the seam between the runtime
 * and the endpoint where they are, without a copy, because one side lends
 * its memory to the other for a while.  One rule in both directions: the
 * lender keeps the memory valid (and the borrower's bytes unchanged) until
 * the borrower gives it back.
 *
 *  - A lent message (sending).  A send with HOMA_EP_SEND_LENT lends the
 *    application's message to the endpoint: homa_ep_output hands out its
 *    packets with the payload still in the application's memory
 *    (homa_out.payload), so the first of them leave before any copy.
 *    homa_ep_lent_settle copies the rest into the endpoint and gives the
 *    memory back.
 *  - Lent places (receiving).  The endpoint lends buffer pool space of an
 *    incoming message (homa_ep_lent_places) for the payload of the packets
 *    it expects next; the caller's datapath lets the kernel write there, and
 *    the packets come back in homa_ep_input's batch marked placed: nothing
 *    is copied.  The places are given back by that homa_ep_input.
 *
 * Both pay only for large messages (a loopback sender's 64 KB packets):
 * HOMA_EP_LEND_MIN and the endpoint's PLACEMENT_MIN_PAYLOAD bound them.
 * The calls are part of the endpoint's seam (homa_endpoint.h).
 */
#ifndef HOMA_LENT_H
#define HOMA_LENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "homa.h"

struct homa_ep;

/* The smallest message a send with HOMA_EP_SEND_LENT lends: below it,
 * copying first costs less than sending each packet's header and payload
 * from two places. */
#define HOMA_EP_LEND_MIN 65536

/*
 * homa_ep_lent_settle - copy about max_bytes more of the lent message (the
 * last send with HOMA_EP_SEND_LENT that lent one) into the endpoint, so
 * that the caller can read its input between steps (UINT32_MAX: all of
 * it).  A request whose response is complete (read in between) is not
 * copied further: the server had all of it (counted by
 * tx_copies_skipped).  Returns true when the endpoint no longer reads the
 * caller's memory (also when nothing is lent), false when more is to be
 * copied.
 */
bool homa_ep_lent_settle(struct homa_ep *ep, uint32_t max_bytes);

/* Most places one homa_ep_lent_places offers, the memory pieces of each,
 * and the header bytes a place describes (a DATA header). */
#define HOMA_LENT_PLACES 8
#define HOMA_LENT_PLACE_IOVS 2
#define HOMA_LENT_MATCH_LEN 56

/*
 * A lent place: buffer space for the payload of one expected DATA packet.
 * A datagram of exactly hdr_len + payload_len bytes (one packet) from src
 * whose first hdr_len bytes b satisfy (b[k] & mask[k]) == want[k] is that
 * packet (same type, RPC, message length and offset); its payload may
 * stay in iov[0..iovcnt).  The last three fields are the endpoint's.
 */
struct homa_lent_place {
	union sockaddr_in_union src;
	struct iovec iov[HOMA_LENT_PLACE_IOVS];
	int iovcnt;
	uint32_t hdr_len;
	uint32_t payload_len;
	uint8_t want[HOMA_LENT_MATCH_LEN];
	uint8_t mask[HOMA_LENT_MATCH_LEN];
	uint64_t sender_id;
	uint32_t message_length;
	uint32_t offset;
};

/* The places for one kernel read (homa_ep_lent_places). */
struct homa_lent_places {
	struct homa_lent_place place[HOMA_LENT_PLACES];
	int n;              /* places offered (0: no guess) */
	bool read_one;      /* read one packet only: see homa_ep_lent_places */
};

/*
 * homa_ep_lent_places - lend places for the payload of the packets most
 * likely to come next: the next packets, in order, of the incoming message
 * whose last DATA was large (16 KB of payload or more).  Fills out (n 0:
 * no guess).  Every place is buffer space of that message for bytes that
 * have not arrived, and no two overlap, so the caller may let the kernel
 * write any datagram there, provided that it moves out again the bytes of
 * any datagram that is not the place's packet (see struct
 * homa_lent_place) before its next call on the endpoint, which must be
 * the homa_ep_input that passes the datagrams read (with this out as the
 * batch's places).
 * First makes the payload copies that earlier input batches deferred
 * (homa_rx_batch.defer_copies): the caller is about to read into its
 * buffers again.
 * With n 0, out->read_one says whether the caller's next kernel read
 * should take one packet only: the last packet in completed a message of
 * large packets and no other such message is under way, so the next
 * packet may well begin one more; once the endpoint has it, the next call
 * offers places for the rest (read in one batch with it, they would all
 * be copied).  Any other packet passed in ends this: at most one read per
 * large message is cut short.
 */
void homa_ep_lent_places(struct homa_ep *ep, struct homa_lent_places *out);

#endif /* HOMA_LENT_H */
