/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_wire - encoding and decoding of Homa packets (docs/protocol.md
 * sections 2-4).  Every multi-byte field is big-endian; headers are packed and always
 * sent full-size.  Fields are read and written one byte at a time, so the
 * code does not depend on host byte order or on buffer alignment.
 */
#include <string.h>

#include "homa.h"
#include "homa_wire.h"

/* Common header: field offsets (docs/protocol.md section 2). */
#define OFF_SPORT 0
#define OFF_DPORT 2
#define OFF_SEQUENCE 4
#define OFF_TYPE 11
#define OFF_DOFF 12
#define OFF_FLAGS 13
#define OFF_WINDOW 14
#define OFF_CHECKSUM 16
#define OFF_URGENT 18
#define OFF_SENDER_ID 20

/* Values written into the common header (receivers ignore all but type). */
#define DOFF_CTRL 0x50     /* 5 32-bit words */
#define DOFF_DATA 0xE0     /* 14 32-bit words = the 56-byte DATA header */
#define FLAGS_SENT 6       /* what the kernel module sends */
#define URGENT_SENT 0xb97d /* what the kernel module sends */

/* DATA header (section 3). */
#define OFF_DATA_MESSAGE_LENGTH 28
#define OFF_DATA_INCOMING 32
#define OFF_DATA_ACK_ID 36
#define OFF_DATA_ACK_PORT 44
#define OFF_DATA_CUTOFF_VERSION 46
#define OFF_DATA_RETRANSMIT 48
#define OFF_DATA_SEG_OFFSET 52

/* GRANT (section 4). */
#define OFF_GRANT_OFFSET 28
#define OFF_GRANT_PRIORITY 32

/* RESEND. */
#define OFF_RESEND_OFFSET 28
#define OFF_RESEND_LENGTH 32
#define OFF_RESEND_PRIORITY 36

/* CUTOFFS. */
#define OFF_CUTOFFS_CUTOFFS 28
#define OFF_CUTOFFS_VERSION 60

/* ACK: num_acks, then HOMA_MAX_ACKS entries of client_id u64, port u16. */
#define OFF_ACK_NUM_ACKS 28
#define OFF_ACK_ENTRIES 30
#define ACK_ENTRY_LEN 10

/* get16/get32/get64 - read a big-endian field at p (caller checked bounds). */
static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(((unsigned)p[0] << 8) | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	       ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return ((uint64_t)get32(p) << 32) | get32(p + 4);
}

/* put16/put32/put64 - write v big-endian at p (caller checked bounds). */
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

/*
 * header_len - full header length of a packet type.
 * Takes: a type code.  Returns the length of that type's header in bytes
 * (for DATA, the header without payload), or 0 for an unknown type.
 */
static size_t header_len(uint8_t type)
{
	switch (type) {
	case HOMA_PKT_DATA:
		return HOMA_DATA_HDR_LEN;
	case HOMA_PKT_GRANT:
		return HOMA_GRANT_HDR_LEN;
	case HOMA_PKT_RESEND:
		return HOMA_RESEND_HDR_LEN;
	case HOMA_PKT_RPC_UNKNOWN:
	case HOMA_PKT_BUSY:
	case HOMA_PKT_FREEZE:
	case HOMA_PKT_NEED_ACK:
		return HOMA_COMMON_HDR_LEN;
	case HOMA_PKT_CUTOFFS:
		return HOMA_CUTOFFS_HDR_LEN;
	case HOMA_PKT_ACK:
		return HOMA_ACK_HDR_LEN;
	default:
		return 0;
	}
}

/*
 * homa_wire_error_name - printable name of a decode error.
 * Takes: any value.  Returns a static string ("UNKNOWN" for values outside
 * the enum); never NULL.
 */
const char *homa_wire_error_name(enum homa_wire_error err)
{
	switch (err) {
	case HOMA_WIRE_OK:
		return "OK";
	case HOMA_WIRE_SHORT:
		return "SHORT";
	case HOMA_WIRE_BAD_TYPE:
		return "BAD_TYPE";
	case HOMA_WIRE_SHORT_TYPE:
		return "SHORT_TYPE";
	case HOMA_WIRE_BAD_LENGTH:
		return "BAD_LENGTH";
	case HOMA_WIRE_BAD_OFFSET:
		return "BAD_OFFSET";
	}
	return "UNKNOWN";
}

/*
 * homa_wire_type_name - printable name of a packet type.
 * Takes: any byte.  Returns a static string: "DATA", "GRANT", ... for the
 * nine types of docs/protocol.md, "UNKNOWN" for anything else; never NULL.
 */
const char *homa_wire_type_name(uint8_t type)
{
	switch (type) {
	case HOMA_PKT_DATA:
		return "DATA";
	case HOMA_PKT_GRANT:
		return "GRANT";
	case HOMA_PKT_RESEND:
		return "RESEND";
	case HOMA_PKT_RPC_UNKNOWN:
		return "RPC_UNKNOWN";
	case HOMA_PKT_BUSY:
		return "BUSY";
	case HOMA_PKT_CUTOFFS:
		return "CUTOFFS";
	case HOMA_PKT_FREEZE:
		return "FREEZE";
	case HOMA_PKT_NEED_ACK:
		return "NEED_ACK";
	case HOMA_PKT_ACK:
		return "ACK";
	default:
		return "UNKNOWN";
	}
}

/*
 * decode_data - the DATA-specific part of homa_wire_decode.
 * Takes: buf of len bytes, len >= HOMA_DATA_HDR_LEN (checked by the caller),
 * pkt already zeroed with its common fields set.  Returns HOMA_WIRE_OK,
 * HOMA_WIRE_BAD_LENGTH or HOMA_WIRE_BAD_OFFSET.  On success pkt->payload
 * points at buf + HOMA_DATA_HDR_LEN.
 */
static enum homa_wire_error decode_data(const uint8_t *buf, size_t len,
					struct homa_pkt *pkt)
{
	uint32_t seg_offset;
	size_t payload_len;
	uint64_t ack_id;

	pkt->message_length = get32(buf + OFF_DATA_MESSAGE_LENGTH);
	if (pkt->message_length == 0 ||
	    pkt->message_length > HOMA_MAX_MESSAGE_LENGTH)
		return HOMA_WIRE_BAD_LENGTH;

	/* Offset rule: kernel senders leave seg.offset at -1 and put the
	 * real offset in sequence. */
	seg_offset = get32(buf + OFF_DATA_SEG_OFFSET);
	if (seg_offset == HOMA_SEG_OFFSET_UNSET)
		pkt->offset = get32(buf + OFF_SEQUENCE);
	else
		pkt->offset = seg_offset;

	/* Written with subtraction only: message_length - offset cannot
	 * wrap once offset < message_length is known. */
	payload_len = len - HOMA_DATA_HDR_LEN;
	if (payload_len == 0 || pkt->offset >= pkt->message_length ||
	    payload_len > (size_t)(pkt->message_length - pkt->offset))
		return HOMA_WIRE_BAD_OFFSET;
	pkt->payload = buf + HOMA_DATA_HDR_LEN;
	pkt->payload_len = (uint32_t)payload_len;

	pkt->incoming = get32(buf + OFF_DATA_INCOMING);
	ack_id = get64(buf + OFF_DATA_ACK_ID);
	if (ack_id != 0) {
		pkt->num_acks = 1;
		pkt->acks[0].client_id = ack_id;
		pkt->acks[0].server_port = get16(buf + OFF_DATA_ACK_PORT);
	}
	pkt->cutoff_version = get16(buf + OFF_DATA_CUTOFF_VERSION);
	pkt->retransmit = buf[OFF_DATA_RETRANSMIT];
	return HOMA_WIRE_OK;
}

/*
 * homa_wire_decode - parse buf[0..len) into *pkt (contract in homa_wire.h).
 * Checks, in order: len >= 28 (HOMA_WIRE_SHORT), type 0x10..0x18
 * (HOMA_WIRE_BAD_TYPE), len >= the type's header (HOMA_WIRE_SHORT_TYPE), then
 * for DATA the message length (HOMA_WIRE_BAD_LENGTH) and the offset and
 * payload bounds (HOMA_WIRE_BAD_OFFSET).  Reads no byte at or past buf + len.
 * The doff, flags, window, checksum, urgent, unused and pad bytes are ignored,
 * as are bytes after a control packet's header.  On success every field the
 * type does not use is zero; a DATA packet whose ack.client_id is 0 decodes
 * with num_acks 0; an ACK fills only its first num_acks (clamped) entries.
 */
enum homa_wire_error homa_wire_decode(const uint8_t *buf, size_t len,
				      struct homa_pkt *pkt)
{
	size_t need;
	uint16_t n;
	int i;

	memset(pkt, 0, sizeof(*pkt));
	if (len < HOMA_COMMON_HDR_LEN)
		return HOMA_WIRE_SHORT;
	pkt->type = buf[OFF_TYPE];
	need = header_len(pkt->type);
	if (need == 0)
		return HOMA_WIRE_BAD_TYPE;
	if (len < need)
		return HOMA_WIRE_SHORT_TYPE;

	pkt->sport = get16(buf + OFF_SPORT);
	pkt->dport = get16(buf + OFF_DPORT);
	pkt->sender_id = get64(buf + OFF_SENDER_ID);

	switch (pkt->type) {
	case HOMA_PKT_DATA:
		return decode_data(buf, len, pkt);
	case HOMA_PKT_GRANT:
		pkt->offset = get32(buf + OFF_GRANT_OFFSET);
		pkt->priority = buf[OFF_GRANT_PRIORITY];
		break;
	case HOMA_PKT_RESEND:
		pkt->offset = get32(buf + OFF_RESEND_OFFSET);
		pkt->length = get32(buf + OFF_RESEND_LENGTH);
		pkt->priority = buf[OFF_RESEND_PRIORITY];
		break;
	case HOMA_PKT_CUTOFFS:
		for (i = 0; i < HOMA_NUM_PRIORITIES; i++)
			pkt->unsched_cutoffs[i] =
				get32(buf + OFF_CUTOFFS_CUTOFFS + 4 * i);
		pkt->cutoff_version = get16(buf + OFF_CUTOFFS_VERSION);
		break;
	case HOMA_PKT_ACK:
		n = get16(buf + OFF_ACK_NUM_ACKS);
		if (n > HOMA_MAX_ACKS)
			n = HOMA_MAX_ACKS;
		pkt->num_acks = n;
		for (i = 0; i < n; i++) {
			const uint8_t *e = buf + OFF_ACK_ENTRIES +
					   ACK_ENTRY_LEN * i;

			pkt->acks[i].client_id = get64(e);
			pkt->acks[i].server_port = get16(e + 8);
		}
		break;
	default:
		/* RPC_UNKNOWN, BUSY, FREEZE, NEED_ACK: common header only. */
		break;
	}
	return HOMA_WIRE_OK;
}

/*
 * encode_common - write the 28-byte common header.
 * Takes: pkt (sport, dport, sender_id), the type, sequence and doff values,
 * buf holding at least HOMA_COMMON_HDR_LEN bytes.  Writes every byte of the
 * common header: unused 0, flags 6, window 0, checksum 0, urgent 0xb97d.
 */
static void encode_common(const struct homa_pkt *pkt, uint8_t type,
			  uint32_t sequence, uint8_t doff, uint8_t *buf)
{
	put16(buf + OFF_SPORT, pkt->sport);
	put16(buf + OFF_DPORT, pkt->dport);
	put32(buf + OFF_SEQUENCE, sequence);
	buf[8] = 0;
	buf[9] = 0;
	buf[10] = 0;
	buf[OFF_TYPE] = type;
	buf[OFF_DOFF] = doff;
	buf[OFF_FLAGS] = FLAGS_SENT;
	put16(buf + OFF_WINDOW, 0);
	put16(buf + OFF_CHECKSUM, 0);
	put16(buf + OFF_URGENT, URGENT_SENT);
	put64(buf + OFF_SENDER_ID, pkt->sender_id);
}

/*
 * homa_wire_encode_ctrl - write a control packet (contract in homa_wire.h).
 * Writes exactly the type's full header length and returns it, or returns 0
 * without touching buf when the type is DATA or unknown or cap is smaller
 * than the header.  The sequence field is 0.  An ACK always has 80 bytes:
 * num_acks is written as min(pkt->num_acks, HOMA_MAX_ACKS), those entries are
 * written and the remaining entries are zero.
 */
size_t homa_wire_encode_ctrl(const struct homa_pkt *pkt, uint8_t *buf,
			     size_t cap)
{
	size_t need;
	uint16_t n;
	int i;

	if (pkt->type == HOMA_PKT_DATA)
		return 0;
	need = header_len(pkt->type);
	if (need == 0 || cap < need)
		return 0;

	memset(buf, 0, need);
	encode_common(pkt, pkt->type, 0, DOFF_CTRL, buf);
	switch (pkt->type) {
	case HOMA_PKT_GRANT:
		put32(buf + OFF_GRANT_OFFSET, pkt->offset);
		buf[OFF_GRANT_PRIORITY] = pkt->priority;
		break;
	case HOMA_PKT_RESEND:
		put32(buf + OFF_RESEND_OFFSET, pkt->offset);
		put32(buf + OFF_RESEND_LENGTH, pkt->length);
		buf[OFF_RESEND_PRIORITY] = pkt->priority;
		break;
	case HOMA_PKT_CUTOFFS:
		for (i = 0; i < HOMA_NUM_PRIORITIES; i++)
			put32(buf + OFF_CUTOFFS_CUTOFFS + 4 * i,
			      pkt->unsched_cutoffs[i]);
		put16(buf + OFF_CUTOFFS_VERSION, pkt->cutoff_version);
		break;
	case HOMA_PKT_ACK:
		n = pkt->num_acks;
		if (n > HOMA_MAX_ACKS)
			n = HOMA_MAX_ACKS;
		put16(buf + OFF_ACK_NUM_ACKS, n);
		for (i = 0; i < n; i++) {
			uint8_t *e = buf + OFF_ACK_ENTRIES + ACK_ENTRY_LEN * i;

			put64(e, pkt->acks[i].client_id);
			put16(e + 8, pkt->acks[i].server_port);
		}
		break;
	default:
		/* RPC_UNKNOWN, BUSY, FREEZE, NEED_ACK: common header only. */
		break;
	}
	return need;
}

/*
 * homa_wire_encode_data_hdr - write the 56-byte DATA header (contract in
 * homa_wire.h).  The type byte is always DATA, whatever pkt->type says.
 * The ack fields are zero when pkt->num_acks is 0; the pad bytes are zero.
 */
void homa_wire_encode_data_hdr(const struct homa_pkt *pkt, uint8_t *buf)
{
	encode_common(pkt, HOMA_PKT_DATA, pkt->offset, DOFF_DATA, buf);
	put32(buf + OFF_DATA_MESSAGE_LENGTH, pkt->message_length);
	put32(buf + OFF_DATA_INCOMING, pkt->incoming);
	if (pkt->num_acks > 0) {
		put64(buf + OFF_DATA_ACK_ID, pkt->acks[0].client_id);
		put16(buf + OFF_DATA_ACK_PORT, pkt->acks[0].server_port);
	} else {
		put64(buf + OFF_DATA_ACK_ID, 0);
		put16(buf + OFF_DATA_ACK_PORT, 0);
	}
	put16(buf + OFF_DATA_CUTOFF_VERSION, pkt->cutoff_version);
	buf[OFF_DATA_RETRANSMIT] = pkt->retransmit;
	buf[49] = 0;
	buf[50] = 0;
	buf[51] = 0;
	put32(buf + OFF_DATA_SEG_OFFSET, pkt->offset);
}

/* homa_wire_data_match - contract in homa_wire.h. */
void homa_wire_data_match(uint64_t sender_id, uint32_t message_length,
			  uint32_t offset, uint8_t *want, uint8_t *mask)
{
	memset(want, 0, HOMA_DATA_HDR_LEN);
	memset(mask, 0, HOMA_DATA_HDR_LEN);
	want[OFF_TYPE] = HOMA_PKT_DATA;
	mask[OFF_TYPE] = 0xff;
	put64(want + OFF_SENDER_ID, sender_id);
	put64(mask + OFF_SENDER_ID, UINT64_MAX);
	put32(want + OFF_DATA_MESSAGE_LENGTH, message_length);
	put32(mask + OFF_DATA_MESSAGE_LENGTH, UINT32_MAX);
	put32(want + OFF_DATA_SEG_OFFSET, offset);
	put32(mask + OFF_DATA_SEG_OFFSET, UINT32_MAX);
}

/* homa_wire_set_data_offset - contract in homa_wire.h. */
void homa_wire_set_data_offset(uint8_t *hdr, uint32_t offset)
{
	put32(hdr + OFF_SEQUENCE, offset);
	put32(hdr + OFF_DATA_SEG_OFFSET, offset);
}
