/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_wire - encoding and decoding of Homa packets, byte for byte as in
 * docs/protocol.md (big-endian, packed, full-size headers).  Pure functions: no
 * allocation, no I/O.
 */
#ifndef HOMA_WIRE_H
#define HOMA_WIRE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/* Packet type codes. */
enum homa_pkt_type {
	HOMA_PKT_DATA = 0x10,
	HOMA_PKT_GRANT = 0x11,
	HOMA_PKT_RESEND = 0x12,
	HOMA_PKT_RPC_UNKNOWN = 0x13,
	HOMA_PKT_BUSY = 0x14,
	HOMA_PKT_CUTOFFS = 0x15,
	HOMA_PKT_FREEZE = 0x16,
	HOMA_PKT_NEED_ACK = 0x17,
	HOMA_PKT_ACK = 0x18,
};

/* Header sizes in bytes. */
#define HOMA_COMMON_HDR_LEN 28
#define HOMA_DATA_HDR_LEN 56
#define HOMA_GRANT_HDR_LEN 33
#define HOMA_RESEND_HDR_LEN 37
#define HOMA_CUTOFFS_HDR_LEN 62
#define HOMA_ACK_HDR_LEN 80
/* Largest control packet (an ACK). */
#define HOMA_MAX_CTRL_LEN HOMA_ACK_HDR_LEN

#define HOMA_NUM_PRIORITIES 8
#define HOMA_MAX_ACKS 5
/* seg.offset value meaning "use the sequence field". */
#define HOMA_SEG_OFFSET_UNSET 0xFFFFFFFFu
/* RESEND length meaning "everything sent so far". */
#define HOMA_RESEND_ALL 0xFFFFFFFFu

/* One acknowledged client RPC (in DATA and ACK packets). */
struct homa_ack {
	uint64_t client_id; /* 0 = none */
	uint16_t server_port;
};

/* A decoded packet.  Fields not used by a type are zero. */
struct homa_pkt {
	uint8_t type;
	uint16_t sport;
	uint16_t dport;
	uint64_t sender_id;

	/* DATA */
	uint32_t message_length;
	uint32_t incoming;
	uint16_t cutoff_version;   /* also CUTOFFS */
	uint8_t retransmit;
	uint32_t offset;           /* DATA (resolved per the offset rule),
				    * GRANT, RESEND */
	const uint8_t *payload;    /* DATA: points into the decoded buffer */
	uint32_t payload_len;
	bool payload_placed;       /* DATA: the payload is not in the buffer
				    * but already where it belongs
				    * (a placed packet, homa_lent.h;
				    * decode sets false) */

	/* GRANT, RESEND */
	uint8_t priority;
	uint32_t length;           /* RESEND */

	/* CUTOFFS */
	uint32_t unsched_cutoffs[HOMA_NUM_PRIORITIES];

	/* DATA carries at most one ack, ACK up to HOMA_MAX_ACKS. */
	uint16_t num_acks;
	struct homa_ack acks[HOMA_MAX_ACKS];
};

/* Reasons a packet is rejected by homa_wire_decode (counted by callers). */
enum homa_wire_error {
	HOMA_WIRE_OK = 0,
	HOMA_WIRE_SHORT = 1,         /* shorter than the common header */
	HOMA_WIRE_BAD_TYPE = 2,      /* type outside 0x10..0x18 */
	HOMA_WIRE_SHORT_TYPE = 3,    /* shorter than its type's header */
	HOMA_WIRE_BAD_LENGTH = 4,    /* DATA message_length 0 or > max */
	HOMA_WIRE_BAD_OFFSET = 5,    /* DATA offset >= length, or payload
				      * running past the message end, or an
				      * empty payload */
};

/* Printable name of a decode error (static string). */
const char *homa_wire_error_name(enum homa_wire_error err);

/* Printable name of a packet type ("DATA", ...; "UNKNOWN" otherwise). */
const char *homa_wire_type_name(uint8_t type);

/*
 * homa_wire_decode - parse buf[0..len) into *pkt.
 * Takes: a buffer (any content; never read past len), a packet to fill.
 * Returns HOMA_WIRE_OK, or the reason the packet must be dropped; *pkt is
 * unspecified on error.  On success pkt->payload points into buf.  ACK
 * num_acks is clamped to HOMA_MAX_ACKS.  DATA: the offset rule of docs/protocol.md
 * is applied (seg.offset 0xFFFFFFFF means use sequence); the payload is
 * everything after the 56-byte header and must satisfy
 * offset < message_length and payload_len <= message_length - offset;
 * message_length must be 1..1,000,000.
 */
enum homa_wire_error homa_wire_decode(const uint8_t *buf, size_t len,
				      struct homa_pkt *pkt);

/*
 * homa_wire_encode_ctrl - write a control packet (every type but DATA) with
 * its full-size header.
 * Takes: pkt (type, ports, sender_id and the type's fields), an output buffer
 * of cap bytes.  Returns the number of bytes written, or 0 when cap is too
 * small or the type is DATA or unknown.
 */
size_t homa_wire_encode_ctrl(const struct homa_pkt *pkt, uint8_t *buf,
			     size_t cap);

/*
 * homa_wire_encode_data_hdr - write the 56-byte DATA header for pkt (ports,
 * sender_id, message_length, incoming, acks[0] if num_acks > 0,
 * cutoff_version, retransmit, offset written into both sequence and
 * seg.offset).  The payload is not copied: the caller places payload_len
 * bytes right after the header.  buf must hold HOMA_DATA_HDR_LEN bytes.
 */
void homa_wire_encode_data_hdr(const struct homa_pkt *pkt, uint8_t *buf);

/*
 * homa_wire_data_match - want and mask (HOMA_DATA_HDR_LEN bytes each) that
 * pick out the DATA header of one packet: a header b is of type DATA, from
 * sender_id, of a message of message_length bytes, at offset, when (b[k] &
 * mask[k]) == want[k] for every k (the other fields may hold anything).
 */
void homa_wire_data_match(uint64_t sender_id, uint32_t message_length,
			  uint32_t offset, uint8_t *want, uint8_t *mask);

/*
 * homa_wire_set_data_offset - rewrite the offset (sequence and seg.offset)
 * of the DATA header at hdr, written by homa_wire_encode_data_hdr; nothing
 * else changes.  A copy of one packet's header so patched equals the header
 * encoded for the other offset: the packets of a run share all other
 * fields but the ack, which only the first carries.
 */
void homa_wire_set_data_offset(uint8_t *hdr, uint32_t offset);

#endif /* HOMA_WIRE_H */
