/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of homa_wire (src/core/homa_wire.c), in code order, named
 * <function>__<case>.
 *
 * The golden vectors below were written by hand, byte by byte, from the
 * offsets of docs/protocol.md sections 2-4 (not produced by the encoder).  Each is
 * checked in both directions: the encoder must produce exactly these bytes,
 * and decoding them must yield the fields of the matching golden_*_pkt.
 *
 * Decode tests run on malloc'd copies of exactly the packet's length, so a
 * build with -fsanitize=address reports any read past len.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "homa_wire.h"

/* ---------------------------------------------------------------------- */
/* Golden vectors.                                                         */
/* ---------------------------------------------------------------------- */

/* DATA: client port 32769 -> server port 99, 4 payload bytes at offset 1424
 * of a 3000-byte message, carrying one ack. */
static const uint8_t golden_data[] = {
	0x80, 0x01,                                     /*  0 sport 32769 */
	0x00, 0x63,                                     /*  2 dport 99 */
	0x00, 0x00, 0x05, 0x90,                         /*  4 sequence 1424 */
	0x00, 0x00, 0x00,                               /*  8 unused */
	0x10,                                           /* 11 type DATA */
	0xE0,                                           /* 12 doff 14 words */
	0x06,                                           /* 13 flags */
	0x00, 0x00,                                     /* 14 window */
	0x00, 0x00,                                     /* 16 checksum */
	0xB9, 0x7D,                                     /* 18 urgent */
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* 20 sender_id */
	0x00, 0x00, 0x0B, 0xB8,                         /* 28 message_length 3000 */
	0x00, 0x00, 0x0B, 0x20,                         /* 32 incoming 2848 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0xD2, /* 36 ack.client_id 1234 */
	0x00, 0x63,                                     /* 44 ack.server_port 99 */
	0x00, 0x07,                                     /* 46 cutoff_version 7 */
	0x01,                                           /* 48 retransmit */
	0x00, 0x00, 0x00,                               /* 49 pad */
	0x00, 0x00, 0x05, 0x90,                         /* 52 seg.offset 1424 */
	'w', 'x', 'y', 'z',                             /* 56 payload */
};

static const struct homa_pkt golden_data_pkt = {
	.type = HOMA_PKT_DATA,
	.sport = 32769,
	.dport = 99,
	.sender_id = 0x1122334455667788u,
	.message_length = 3000,
	.incoming = 2848,
	.cutoff_version = 7,
	.retransmit = 1,
	.offset = 1424,
	.payload = (const uint8_t *)"wxyz",
	.payload_len = 4,
	.num_acks = 1,
	.acks = {{.client_id = 1234, .server_port = 99}},
};

/* GRANT: server port 99 -> client port 32769. */
static const uint8_t golden_grant[] = {
	0x00, 0x63,                                     /*  0 sport 99 */
	0x80, 0x01,                                     /*  2 dport 32769 */
	0x00, 0x00, 0x00, 0x00,                         /*  4 sequence */
	0x00, 0x00, 0x00,                               /*  8 unused */
	0x11,                                           /* 11 type GRANT */
	0x50,                                           /* 12 doff */
	0x06,                                           /* 13 flags */
	0x00, 0x00,                                     /* 14 window */
	0x00, 0x00,                                     /* 16 checksum */
	0xB9, 0x7D,                                     /* 18 urgent */
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x89, /* 20 sender_id */
	0x00, 0x01, 0x38, 0x80,                         /* 28 offset 80000 */
	0x03,                                           /* 32 priority 3 */
};

static const struct homa_pkt golden_grant_pkt = {
	.type = HOMA_PKT_GRANT,
	.sport = 99,
	.dport = 32769,
	.sender_id = 0x1122334455667789u,
	.offset = 80000,
	.priority = 3,
};

/* RESEND. */
static const uint8_t golden_resend[] = {
	0x00, 0x63,                                     /*  0 sport 99 */
	0x80, 0x01,                                     /*  2 dport 32769 */
	0x00, 0x00, 0x00, 0x00,                         /*  4 sequence */
	0x00, 0x00, 0x00,                               /*  8 unused */
	0x12,                                           /* 11 type RESEND */
	0x50,                                           /* 12 doff */
	0x06,                                           /* 13 flags */
	0x00, 0x00,                                     /* 14 window */
	0x00, 0x00,                                     /* 16 checksum */
	0xB9, 0x7D,                                     /* 18 urgent */
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x89, /* 20 sender_id */
	0x00, 0x00, 0x27, 0x10,                         /* 28 offset 10000 */
	0x00, 0x00, 0x13, 0x88,                         /* 32 length 5000 */
	0x06,                                           /* 36 priority 6 */
};

static const struct homa_pkt golden_resend_pkt = {
	.type = HOMA_PKT_RESEND,
	.sport = 99,
	.dport = 32769,
	.sender_id = 0x1122334455667789u,
	.offset = 10000,
	.length = 5000,
	.priority = 6,
};

/* RPC_UNKNOWN: common header only. */
static const uint8_t golden_rpc_unknown[] = {
	0x80, 0x01,                                     /*  0 sport 32769 */
	0x00, 0x63,                                     /*  2 dport 99 */
	0x00, 0x00, 0x00, 0x00,                         /*  4 sequence */
	0x00, 0x00, 0x00,                               /*  8 unused */
	0x13,                                           /* 11 type RPC_UNKNOWN */
	0x50,                                           /* 12 doff */
	0x06,                                           /* 13 flags */
	0x00, 0x00,                                     /* 14 window */
	0x00, 0x00,                                     /* 16 checksum */
	0xB9, 0x7D,                                     /* 18 urgent */
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* 20 sender_id */
};

static const struct homa_pkt golden_rpc_unknown_pkt = {
	.type = HOMA_PKT_RPC_UNKNOWN,
	.sport = 32769,
	.dport = 99,
	.sender_id = 0x1122334455667788u,
};

/* BUSY: common header only. */
static const uint8_t golden_busy[] = {
	0x00, 0x63,                                     /*  0 sport 99 */
	0x80, 0x01,                                     /*  2 dport 32769 */
	0x00, 0x00, 0x00, 0x00,                         /*  4 sequence */
	0x00, 0x00, 0x00,                               /*  8 unused */
	0x14,                                           /* 11 type BUSY */
	0x50,                                           /* 12 doff */
	0x06,                                           /* 13 flags */
	0x00, 0x00,                                     /* 14 window */
	0x00, 0x00,                                     /* 16 checksum */
	0xB9, 0x7D,                                     /* 18 urgent */
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x89, /* 20 sender_id */
};

static const struct homa_pkt golden_busy_pkt = {
	.type = HOMA_PKT_BUSY,
	.sport = 99,
	.dport = 32769,
	.sender_id = 0x1122334455667789u,
};

/* CUTOFFS: the eight cutoffs are distinct so a swapped entry shows. */
static const uint8_t golden_cutoffs[] = {
	0x00, 0x63,                                     /*  0 sport 99 */
	0x80, 0x01,                                     /*  2 dport 32769 */
	0x00, 0x00, 0x00, 0x00,                         /*  4 sequence */
	0x00, 0x00, 0x00,                               /*  8 unused */
	0x15,                                           /* 11 type CUTOFFS */
	0x50,                                           /* 12 doff */
	0x06,                                           /* 13 flags */
	0x00, 0x00,                                     /* 14 window */
	0x00, 0x00,                                     /* 16 checksum */
	0xB9, 0x7D,                                     /* 18 urgent */
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x89, /* 20 sender_id */
	0x7F, 0xFF, 0xFF, 0xFF,                         /* 28 cutoff[0] */
	0x00, 0xF4, 0x24, 0x00,                         /* 32 cutoff[1] 16000000 */
	0x00, 0x0F, 0x42, 0x40,                         /* 36 cutoff[2] 1000000 */
	0x00, 0x01, 0x86, 0xA0,                         /* 40 cutoff[3] 100000 */
	0x00, 0x00, 0xC3, 0x50,                         /* 44 cutoff[4] 50000 */
	0x00, 0x00, 0x3A, 0x98,                         /* 48 cutoff[5] 15000 */
	0x00, 0x00, 0x0A, 0xF0,                         /* 52 cutoff[6] 2800 */
	0x00, 0x00, 0x00, 0xC8,                         /* 56 cutoff[7] 200 */
	0x01, 0x05,                                     /* 60 cutoff_version 261 */
};

static const struct homa_pkt golden_cutoffs_pkt = {
	.type = HOMA_PKT_CUTOFFS,
	.sport = 99,
	.dport = 32769,
	.sender_id = 0x1122334455667789u,
	.unsched_cutoffs = {0x7FFFFFFF, 16000000, 1000000, 100000, 50000,
			    15000, 2800, 200},
	.cutoff_version = 261,
};

/* FREEZE: common header only. */
static const uint8_t golden_freeze[] = {
	0x80, 0x01,                                     /*  0 sport 32769 */
	0x00, 0x63,                                     /*  2 dport 99 */
	0x00, 0x00, 0x00, 0x00,                         /*  4 sequence */
	0x00, 0x00, 0x00,                               /*  8 unused */
	0x16,                                           /* 11 type FREEZE */
	0x50,                                           /* 12 doff */
	0x06,                                           /* 13 flags */
	0x00, 0x00,                                     /* 14 window */
	0x00, 0x00,                                     /* 16 checksum */
	0xB9, 0x7D,                                     /* 18 urgent */
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* 20 sender_id */
};

static const struct homa_pkt golden_freeze_pkt = {
	.type = HOMA_PKT_FREEZE,
	.sport = 32769,
	.dport = 99,
	.sender_id = 0x1122334455667788u,
};

/* NEED_ACK: common header only. */
static const uint8_t golden_need_ack[] = {
	0x00, 0x63,                                     /*  0 sport 99 */
	0x80, 0x01,                                     /*  2 dport 32769 */
	0x00, 0x00, 0x00, 0x00,                         /*  4 sequence */
	0x00, 0x00, 0x00,                               /*  8 unused */
	0x17,                                           /* 11 type NEED_ACK */
	0x50,                                           /* 12 doff */
	0x06,                                           /* 13 flags */
	0x00, 0x00,                                     /* 14 window */
	0x00, 0x00,                                     /* 16 checksum */
	0xB9, 0x7D,                                     /* 18 urgent */
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x89, /* 20 sender_id */
};

static const struct homa_pkt golden_need_ack_pkt = {
	.type = HOMA_PKT_NEED_ACK,
	.sport = 99,
	.dport = 32769,
	.sender_id = 0x1122334455667789u,
};

/* ACK: three acks, the last two entries zero; 80 bytes. */
static const uint8_t golden_ack[] = {
	0x80, 0x01,                                     /*  0 sport 32769 */
	0x00, 0x63,                                     /*  2 dport 99 */
	0x00, 0x00, 0x00, 0x00,                         /*  4 sequence */
	0x00, 0x00, 0x00,                               /*  8 unused */
	0x18,                                           /* 11 type ACK */
	0x50,                                           /* 12 doff */
	0x06,                                           /* 13 flags */
	0x00, 0x00,                                     /* 14 window */
	0x00, 0x00,                                     /* 16 checksum */
	0xB9, 0x7D,                                     /* 18 urgent */
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* 20 sender_id */
	0x00, 0x03,                                     /* 28 num_acks 3 */
	0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x12, /* 30 acks[0].client_id */
	0x13, 0x14,                                     /* 38 acks[0].server_port */
	0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, /* 40 acks[1].client_id */
	0x29, 0x2A,                                     /* 48 acks[1].server_port */
	0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, /* 50 acks[2].client_id */
	0x39, 0x3A,                                     /* 58 acks[2].server_port */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 60 acks[3].client_id */
	0x00, 0x00,                                     /* 68 acks[3].server_port */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 70 acks[4].client_id */
	0x00, 0x00,                                     /* 78 acks[4].server_port */
};

static const struct homa_pkt golden_ack_pkt = {
	.type = HOMA_PKT_ACK,
	.sport = 32769,
	.dport = 99,
	.sender_id = 0x1122334455667788u,
	.num_acks = 3,
	.acks = {
		{.client_id = 0x0A0B0C0D0E0F1012u, .server_port = 0x1314},
		{.client_id = 0x2122232425262728u, .server_port = 0x292A},
		{.client_id = 0x3132333435363738u, .server_port = 0x393A},
	},
};

/* One golden vector per type, in type-code order. */
struct golden {
	const uint8_t *bytes;
	size_t len;     /* whole packet */
	size_t hdr_len; /* the type's header */
	const struct homa_pkt *pkt;
};

#define GOLDEN(name, hdr) \
	{golden_##name, sizeof(golden_##name), hdr, &golden_##name##_pkt}

static const struct golden goldens[] = {
	GOLDEN(data, HOMA_DATA_HDR_LEN),
	GOLDEN(grant, HOMA_GRANT_HDR_LEN),
	GOLDEN(resend, HOMA_RESEND_HDR_LEN),
	GOLDEN(rpc_unknown, HOMA_COMMON_HDR_LEN),
	GOLDEN(busy, HOMA_COMMON_HDR_LEN),
	GOLDEN(cutoffs, HOMA_CUTOFFS_HDR_LEN),
	GOLDEN(freeze, HOMA_COMMON_HDR_LEN),
	GOLDEN(need_ack, HOMA_COMMON_HDR_LEN),
	GOLDEN(ack, HOMA_ACK_HDR_LEN),
};

#define NUM_GOLDENS (sizeof(goldens) / sizeof(goldens[0]))

/* ---------------------------------------------------------------------- */
/* Helpers.                                                                */
/* ---------------------------------------------------------------------- */

/* dup_bytes - a malloc'd copy of exactly len bytes (ASan bounds). */
static uint8_t *dup_bytes(const uint8_t *bytes, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	assert_non_null(p);
	if (len)
		memcpy(p, bytes, len);
	return p;
}

/* decode_copy - decode an exact-length copy of bytes[0..len); the copy is
 * returned in *copy (caller frees) so pkt->payload stays valid. */
static enum homa_wire_error decode_copy(const uint8_t *bytes, size_t len,
					struct homa_pkt *pkt, uint8_t **copy)
{
	*copy = dup_bytes(bytes, len);
	return homa_wire_decode(*copy, len, pkt);
}

/* decode_status - the status of decoding an exact-length copy. */
static enum homa_wire_error decode_status(const uint8_t *bytes, size_t len)
{
	struct homa_pkt pkt;
	uint8_t *copy;
	enum homa_wire_error err = decode_copy(bytes, len, &pkt, &copy);

	free(copy);
	return err;
}

/* assert_pkt_equal - every field equal; payloads compared by content. */
static void assert_pkt_equal(const struct homa_pkt *want,
			     const struct homa_pkt *got)
{
	int i;

	assert_int_equal(want->type, got->type);
	assert_int_equal(want->sport, got->sport);
	assert_int_equal(want->dport, got->dport);
	assert_int_equal(want->sender_id, got->sender_id);
	assert_int_equal(want->message_length, got->message_length);
	assert_int_equal(want->incoming, got->incoming);
	assert_int_equal(want->cutoff_version, got->cutoff_version);
	assert_int_equal(want->retransmit, got->retransmit);
	assert_int_equal(want->offset, got->offset);
	assert_int_equal(want->payload_len, got->payload_len);
	if (want->payload == NULL) {
		assert_null(got->payload);
	} else {
		assert_non_null(got->payload);
		assert_memory_equal(want->payload, got->payload,
				    want->payload_len);
	}
	assert_int_equal(want->priority, got->priority);
	assert_int_equal(want->length, got->length);
	for (i = 0; i < HOMA_NUM_PRIORITIES; i++)
		assert_int_equal(want->unsched_cutoffs[i],
				 got->unsched_cutoffs[i]);
	assert_int_equal(want->num_acks, got->num_acks);
	for (i = 0; i < HOMA_MAX_ACKS; i++) {
		assert_int_equal(want->acks[i].client_id,
				 got->acks[i].client_id);
		assert_int_equal(want->acks[i].server_port,
				 got->acks[i].server_port);
	}
}

/* check_golden_decode - decoding golden g yields exactly g->pkt. */
static void check_golden_decode(const struct golden *g)
{
	struct homa_pkt pkt;
	uint8_t *copy;

	assert_int_equal(decode_copy(g->bytes, g->len, &pkt, &copy),
			 HOMA_WIRE_OK);
	assert_pkt_equal(g->pkt, &pkt);
	if (g->pkt->payload != NULL)
		assert_ptr_equal(pkt.payload, copy + HOMA_DATA_HDR_LEN);
	free(copy);
}

/* check_golden_encode_ctrl - encoding g->pkt yields exactly g's bytes and
 * writes nothing past them. */
static void check_golden_encode_ctrl(const struct golden *g)
{
	uint8_t buf[HOMA_MAX_CTRL_LEN + 16];

	memset(buf, 0xA5, sizeof(buf));
	assert_int_equal(homa_wire_encode_ctrl(g->pkt, buf, sizeof(buf)),
			 g->len);
	assert_memory_equal(buf, g->bytes, g->len);
	assert_int_equal(buf[g->len], 0xA5);
}

/* data_packet - a DATA packet built on golden_data, with the given
 * message_length, sequence, seg.offset and payload length (payload bytes
 * 0x5A).  Returns a malloc'd buffer of HOMA_DATA_HDR_LEN + payload_len. */
static uint8_t *data_packet(uint32_t message_length, uint32_t sequence,
			    uint32_t seg_offset, size_t payload_len)
{
	uint8_t *p = malloc(HOMA_DATA_HDR_LEN + payload_len);

	assert_non_null(p);
	memcpy(p, golden_data, HOMA_DATA_HDR_LEN);
	p[28] = (uint8_t)(message_length >> 24);
	p[29] = (uint8_t)(message_length >> 16);
	p[30] = (uint8_t)(message_length >> 8);
	p[31] = (uint8_t)message_length;
	p[4] = (uint8_t)(sequence >> 24);
	p[5] = (uint8_t)(sequence >> 16);
	p[6] = (uint8_t)(sequence >> 8);
	p[7] = (uint8_t)sequence;
	p[52] = (uint8_t)(seg_offset >> 24);
	p[53] = (uint8_t)(seg_offset >> 16);
	p[54] = (uint8_t)(seg_offset >> 8);
	p[55] = (uint8_t)seg_offset;
	memset(p + HOMA_DATA_HDR_LEN, 0x5A, payload_len);
	return p;
}

/* ---------------------------------------------------------------------- */
/* homa_wire_error_name                                                    */
/* ---------------------------------------------------------------------- */

static void homa_wire_error_name__every_value(void **state)
{
	(void)state;
	assert_string_equal(homa_wire_error_name(HOMA_WIRE_OK), "OK");
	assert_string_equal(homa_wire_error_name(HOMA_WIRE_SHORT), "SHORT");
	assert_string_equal(homa_wire_error_name(HOMA_WIRE_BAD_TYPE),
			    "BAD_TYPE");
	assert_string_equal(homa_wire_error_name(HOMA_WIRE_SHORT_TYPE),
			    "SHORT_TYPE");
	assert_string_equal(homa_wire_error_name(HOMA_WIRE_BAD_LENGTH),
			    "BAD_LENGTH");
	assert_string_equal(homa_wire_error_name(HOMA_WIRE_BAD_OFFSET),
			    "BAD_OFFSET");
}

static void homa_wire_error_name__out_of_range(void **state)
{
	(void)state;
	assert_string_equal(homa_wire_error_name((enum homa_wire_error)99),
			    "UNKNOWN");
}

/* ---------------------------------------------------------------------- */
/* homa_wire_type_name                                                     */
/* ---------------------------------------------------------------------- */

static void homa_wire_type_name__every_type(void **state)
{
	(void)state;
	assert_string_equal(homa_wire_type_name(0x10), "DATA");
	assert_string_equal(homa_wire_type_name(0x11), "GRANT");
	assert_string_equal(homa_wire_type_name(0x12), "RESEND");
	assert_string_equal(homa_wire_type_name(0x13), "RPC_UNKNOWN");
	assert_string_equal(homa_wire_type_name(0x14), "BUSY");
	assert_string_equal(homa_wire_type_name(0x15), "CUTOFFS");
	assert_string_equal(homa_wire_type_name(0x16), "FREEZE");
	assert_string_equal(homa_wire_type_name(0x17), "NEED_ACK");
	assert_string_equal(homa_wire_type_name(0x18), "ACK");
}

static void homa_wire_type_name__unknown(void **state)
{
	(void)state;
	assert_string_equal(homa_wire_type_name(0x00), "UNKNOWN");
	assert_string_equal(homa_wire_type_name(0x0F), "UNKNOWN");
	assert_string_equal(homa_wire_type_name(0x19), "UNKNOWN");
	assert_string_equal(homa_wire_type_name(0xFF), "UNKNOWN");
}

/* ---------------------------------------------------------------------- */
/* homa_wire_decode                                                        */
/* ---------------------------------------------------------------------- */

static void homa_wire_decode__shorter_than_common_header(void **state)
{
	size_t g, len;

	(void)state;
	assert_int_equal(homa_wire_decode(NULL, 0, &(struct homa_pkt){0}),
			 HOMA_WIRE_SHORT);
	for (g = 0; g < NUM_GOLDENS; g++)
		for (len = 0; len < HOMA_COMMON_HDR_LEN; len++)
			assert_int_equal(decode_status(goldens[g].bytes, len),
					 HOMA_WIRE_SHORT);
}

static void homa_wire_decode__bad_type(void **state)
{
	static const uint8_t bad[] = {0x00, 0x0F, 0x19, 0x20, 0xFF};
	uint8_t buf[HOMA_MAX_CTRL_LEN];
	size_t i;

	(void)state;
	/* A full ACK-sized buffer: the type alone is the reason. */
	memcpy(buf, golden_ack, sizeof(buf));
	for (i = 0; i < sizeof(bad); i++) {
		buf[11] = bad[i];
		assert_int_equal(decode_status(buf, sizeof(buf)),
				 HOMA_WIRE_BAD_TYPE);
		/* Type is checked before the type's length. */
		assert_int_equal(decode_status(buf, HOMA_COMMON_HDR_LEN),
				 HOMA_WIRE_BAD_TYPE);
	}
}

static void homa_wire_decode__truncated_every_type(void **state)
{
	size_t g, len;

	(void)state;
	for (g = 0; g < NUM_GOLDENS; g++)
		for (len = HOMA_COMMON_HDR_LEN; len < goldens[g].hdr_len;
		     len++)
			assert_int_equal(decode_status(goldens[g].bytes, len),
					 HOMA_WIRE_SHORT_TYPE);
}

static void homa_wire_decode__exact_header_every_ctrl_type(void **state)
{
	size_t g;

	(void)state;
	for (g = 0; g < NUM_GOLDENS; g++) {
		if (goldens[g].pkt->type == HOMA_PKT_DATA)
			continue;
		assert_int_equal(goldens[g].len, goldens[g].hdr_len);
		assert_int_equal(decode_status(goldens[g].bytes,
					       goldens[g].hdr_len),
				 HOMA_WIRE_OK);
	}
}

static void homa_wire_decode__golden_data(void **state)
{
	(void)state;
	check_golden_decode(&goldens[0]);
}

static void homa_wire_decode__golden_grant(void **state)
{
	(void)state;
	check_golden_decode(&goldens[1]);
}

static void homa_wire_decode__golden_resend(void **state)
{
	(void)state;
	check_golden_decode(&goldens[2]);
}

static void homa_wire_decode__golden_rpc_unknown(void **state)
{
	(void)state;
	check_golden_decode(&goldens[3]);
}

static void homa_wire_decode__golden_busy(void **state)
{
	(void)state;
	check_golden_decode(&goldens[4]);
}

static void homa_wire_decode__golden_cutoffs(void **state)
{
	(void)state;
	check_golden_decode(&goldens[5]);
}

static void homa_wire_decode__golden_freeze(void **state)
{
	(void)state;
	check_golden_decode(&goldens[6]);
}

static void homa_wire_decode__golden_need_ack(void **state)
{
	(void)state;
	check_golden_decode(&goldens[7]);
}

static void homa_wire_decode__golden_ack(void **state)
{
	(void)state;
	check_golden_decode(&goldens[8]);
}

static void homa_wire_decode__ignores_doff_flags_window_checksum(void **state)
{
	uint8_t buf[sizeof(golden_data)];
	struct homa_pkt pkt;
	uint8_t *copy;

	(void)state;
	memcpy(buf, golden_data, sizeof(buf));
	buf[8] = buf[9] = buf[10] = 0xEE;  /* unused */
	buf[12] = 0x50;                    /* doff */
	buf[13] = 0;                       /* flags */
	buf[14] = buf[15] = 0xEE;          /* window */
	buf[16] = 0x12;                    /* checksum */
	buf[17] = 0x34;
	buf[18] = buf[19] = 0;             /* urgent */
	buf[49] = buf[50] = buf[51] = 0xEE; /* pad */
	assert_int_equal(decode_copy(buf, sizeof(buf), &pkt, &copy),
			 HOMA_WIRE_OK);
	assert_pkt_equal(&golden_data_pkt, &pkt);
	free(copy);
}

static void homa_wire_decode__zeroes_fields_type_does_not_use(void **state)
{
	struct homa_pkt pkt;
	uint8_t *copy;

	(void)state;
	memset(&pkt, 0xAA, sizeof(pkt));
	assert_int_equal(decode_copy(golden_grant, sizeof(golden_grant), &pkt,
				     &copy),
			 HOMA_WIRE_OK);
	assert_pkt_equal(&golden_grant_pkt, &pkt);
	free(copy);
}

static void homa_wire_decode__ctrl_trailing_bytes_ignored(void **state)
{
	uint8_t buf[sizeof(golden_resend) + 7];
	struct homa_pkt pkt;
	uint8_t *copy;

	(void)state;
	memcpy(buf, golden_resend, sizeof(golden_resend));
	memset(buf + sizeof(golden_resend), 0xEE, 7);
	assert_int_equal(decode_copy(buf, sizeof(buf), &pkt, &copy),
			 HOMA_WIRE_OK);
	assert_pkt_equal(&golden_resend_pkt, &pkt);
	free(copy);
}

static void homa_wire_decode__resend_all(void **state)
{
	uint8_t buf[sizeof(golden_resend)];
	struct homa_pkt pkt;
	uint8_t *copy;

	(void)state;
	memcpy(buf, golden_resend, sizeof(buf));
	memset(buf + 28, 0, 4);      /* offset 0 */
	memset(buf + 32, 0xFF, 4);   /* length: everything */
	assert_int_equal(decode_copy(buf, sizeof(buf), &pkt, &copy),
			 HOMA_WIRE_OK);
	assert_int_equal(pkt.offset, 0);
	assert_int_equal(pkt.length, HOMA_RESEND_ALL);
	free(copy);
}

static void homa_wire_decode__data_message_length_zero(void **state)
{
	uint8_t *p = data_packet(0, 0, 0, 1);

	(void)state;
	assert_int_equal(decode_status(p, HOMA_DATA_HDR_LEN + 1),
			 HOMA_WIRE_BAD_LENGTH);
	free(p);
}

static void homa_wire_decode__data_message_length_too_big(void **state)
{
	uint8_t *p = data_packet(1000001, 0, 0, 1);

	(void)state;
	assert_int_equal(decode_status(p, HOMA_DATA_HDR_LEN + 1),
			 HOMA_WIRE_BAD_LENGTH);
	free(p);
}

static void homa_wire_decode__data_message_length_max(void **state)
{
	uint8_t *p = data_packet(1000000, 999996, 999996, 4);
	struct homa_pkt pkt;

	(void)state;
	assert_int_equal(homa_wire_decode(p, HOMA_DATA_HDR_LEN + 4, &pkt),
			 HOMA_WIRE_OK);
	assert_int_equal(pkt.message_length, 1000000);
	assert_int_equal(pkt.offset, 999996);
	assert_int_equal(pkt.payload_len, 4);
	free(p);
}

static void homa_wire_decode__data_seg_offset_unset_uses_sequence(void **state)
{
	uint8_t *p = data_packet(3000, 1424, HOMA_SEG_OFFSET_UNSET, 100);
	struct homa_pkt pkt;

	(void)state;
	assert_int_equal(homa_wire_decode(p, HOMA_DATA_HDR_LEN + 100, &pkt),
			 HOMA_WIRE_OK);
	assert_int_equal(pkt.offset, 1424);
	assert_int_equal(pkt.payload_len, 100);
	assert_ptr_equal(pkt.payload, p + HOMA_DATA_HDR_LEN);
	free(p);
}

static void homa_wire_decode__data_seg_offset_wins_over_sequence(void **state)
{
	uint8_t *p = data_packet(3000, 9999, 1424, 100);
	struct homa_pkt pkt;

	(void)state;
	assert_int_equal(homa_wire_decode(p, HOMA_DATA_HDR_LEN + 100, &pkt),
			 HOMA_WIRE_OK);
	assert_int_equal(pkt.offset, 1424);
	free(p);
}

static void homa_wire_decode__data_offset_at_length(void **state)
{
	uint8_t *p = data_packet(3000, 3000, 3000, 1);

	(void)state;
	assert_int_equal(decode_status(p, HOMA_DATA_HDR_LEN + 1),
			 HOMA_WIRE_BAD_OFFSET);
	free(p);
}

static void homa_wire_decode__data_offset_past_length(void **state)
{
	uint8_t *p = data_packet(3000, 0, 0xFFFFFFFEu, 1);

	(void)state;
	assert_int_equal(decode_status(p, HOMA_DATA_HDR_LEN + 1),
			 HOMA_WIRE_BAD_OFFSET);
	free(p);
}

static void homa_wire_decode__data_sequence_past_length(void **state)
{
	/* seg.offset unset: the bad offset comes from sequence. */
	uint8_t *p = data_packet(3000, 0xFFFFFFF0u, HOMA_SEG_OFFSET_UNSET, 1);

	(void)state;
	assert_int_equal(decode_status(p, HOMA_DATA_HDR_LEN + 1),
			 HOMA_WIRE_BAD_OFFSET);
	free(p);
}

static void homa_wire_decode__data_payload_past_end(void **state)
{
	uint8_t *p = data_packet(3000, 2997, 2997, 4);

	(void)state;
	assert_int_equal(decode_status(p, HOMA_DATA_HDR_LEN + 4),
			 HOMA_WIRE_BAD_OFFSET);
	free(p);
}

static void homa_wire_decode__data_payload_to_end(void **state)
{
	uint8_t *p = data_packet(3000, 2996, 2996, 4);

	(void)state;
	assert_int_equal(decode_status(p, HOMA_DATA_HDR_LEN + 4),
			 HOMA_WIRE_OK);
	free(p);
}

static void homa_wire_decode__data_empty_payload(void **state)
{
	(void)state;
	assert_int_equal(decode_status(golden_data, HOMA_DATA_HDR_LEN),
			 HOMA_WIRE_BAD_OFFSET);
}

static void homa_wire_decode__data_no_ack(void **state)
{
	uint8_t buf[sizeof(golden_data)];
	struct homa_pkt pkt;
	uint8_t *copy;

	(void)state;
	memcpy(buf, golden_data, sizeof(buf));
	memset(buf + 36, 0, 8); /* ack.client_id 0 = none; port left at 99 */
	assert_int_equal(decode_copy(buf, sizeof(buf), &pkt, &copy),
			 HOMA_WIRE_OK);
	assert_int_equal(pkt.num_acks, 0);
	assert_int_equal(pkt.acks[0].client_id, 0);
	assert_int_equal(pkt.acks[0].server_port, 0);
	free(copy);
}

static void homa_wire_decode__ack_num_acks_clamped(void **state)
{
	static const uint16_t counts[] = {HOMA_MAX_ACKS + 1, 65535};
	uint8_t buf[sizeof(golden_ack)];
	struct homa_pkt pkt;
	uint8_t *copy;
	size_t c;
	int i;

	(void)state;
	memcpy(buf, golden_ack, sizeof(buf));
	for (i = 3; i < HOMA_MAX_ACKS; i++) {
		memset(buf + 30 + 10 * i, 0x40 + i, 8);
		buf[30 + 10 * i + 8] = 0x50;
		buf[30 + 10 * i + 9] = (uint8_t)i;
	}
	for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		buf[28] = (uint8_t)(counts[c] >> 8); /* num_acks */
		buf[29] = (uint8_t)counts[c];
		assert_int_equal(decode_copy(buf, sizeof(buf), &pkt, &copy),
				 HOMA_WIRE_OK);
		assert_int_equal(pkt.num_acks, HOMA_MAX_ACKS);
		assert_int_equal(pkt.acks[0].client_id, 0x0A0B0C0D0E0F1012u);
		assert_int_equal(pkt.acks[2].server_port, 0x393A);
		assert_int_equal(pkt.acks[3].client_id, 0x4343434343434343u);
		assert_int_equal(pkt.acks[3].server_port, 0x5003);
		assert_int_equal(pkt.acks[4].client_id, 0x4444444444444444u);
		assert_int_equal(pkt.acks[4].server_port, 0x5004);
		free(copy);
	}
}

static void homa_wire_decode__ack_entries_past_num_acks_ignored(void **state)
{
	uint8_t buf[sizeof(golden_ack)];
	struct homa_pkt pkt;
	uint8_t *copy;

	(void)state;
	memcpy(buf, golden_ack, sizeof(buf));
	buf[29] = 1; /* num_acks 1: entries 1..4 are not acks */
	assert_int_equal(decode_copy(buf, sizeof(buf), &pkt, &copy),
			 HOMA_WIRE_OK);
	assert_int_equal(pkt.num_acks, 1);
	assert_int_equal(pkt.acks[0].client_id, 0x0A0B0C0D0E0F1012u);
	assert_int_equal(pkt.acks[1].client_id, 0);
	assert_int_equal(pkt.acks[1].server_port, 0);
	free(copy);
}

/* ---------------------------------------------------------------------- */
/* homa_wire_encode_ctrl                                                   */
/* ---------------------------------------------------------------------- */

static void homa_wire_encode_ctrl__golden_grant(void **state)
{
	(void)state;
	check_golden_encode_ctrl(&goldens[1]);
}

static void homa_wire_encode_ctrl__golden_resend(void **state)
{
	(void)state;
	check_golden_encode_ctrl(&goldens[2]);
}

static void homa_wire_encode_ctrl__golden_rpc_unknown(void **state)
{
	(void)state;
	check_golden_encode_ctrl(&goldens[3]);
}

static void homa_wire_encode_ctrl__golden_busy(void **state)
{
	(void)state;
	check_golden_encode_ctrl(&goldens[4]);
}

static void homa_wire_encode_ctrl__golden_cutoffs(void **state)
{
	(void)state;
	check_golden_encode_ctrl(&goldens[5]);
}

static void homa_wire_encode_ctrl__golden_freeze(void **state)
{
	(void)state;
	check_golden_encode_ctrl(&goldens[6]);
}

static void homa_wire_encode_ctrl__golden_need_ack(void **state)
{
	(void)state;
	check_golden_encode_ctrl(&goldens[7]);
}

static void homa_wire_encode_ctrl__golden_ack(void **state)
{
	(void)state;
	check_golden_encode_ctrl(&goldens[8]);
}

static void homa_wire_encode_ctrl__cap_too_small(void **state)
{
	uint8_t buf[HOMA_MAX_CTRL_LEN];
	size_t g, i;

	(void)state;
	assert_int_equal(homa_wire_encode_ctrl(&golden_busy_pkt, NULL, 0), 0);
	for (g = 0; g < NUM_GOLDENS; g++) {
		if (goldens[g].pkt->type == HOMA_PKT_DATA)
			continue;
		memset(buf, 0xA5, sizeof(buf));
		assert_int_equal(homa_wire_encode_ctrl(goldens[g].pkt, buf,
						       goldens[g].hdr_len - 1),
				 0);
		for (i = 0; i < sizeof(buf); i++)
			assert_int_equal(buf[i], 0xA5);
		/* Exactly the header's size is enough. */
		assert_int_equal(homa_wire_encode_ctrl(goldens[g].pkt, buf,
						       goldens[g].hdr_len),
				 goldens[g].hdr_len);
	}
}

static void homa_wire_encode_ctrl__data_rejected(void **state)
{
	uint8_t buf[HOMA_MAX_CTRL_LEN];

	(void)state;
	assert_int_equal(homa_wire_encode_ctrl(&golden_data_pkt, buf,
					       sizeof(buf)),
			 0);
}

static void homa_wire_encode_ctrl__unknown_type_rejected(void **state)
{
	struct homa_pkt pkt = golden_busy_pkt;
	uint8_t buf[HOMA_MAX_CTRL_LEN];

	(void)state;
	pkt.type = 0x0F;
	assert_int_equal(homa_wire_encode_ctrl(&pkt, buf, sizeof(buf)), 0);
	pkt.type = 0x19;
	assert_int_equal(homa_wire_encode_ctrl(&pkt, buf, sizeof(buf)), 0);
}

static void homa_wire_encode_ctrl__ack_without_acks_full_size(void **state)
{
	struct homa_pkt pkt = golden_ack_pkt;
	uint8_t buf[HOMA_MAX_CTRL_LEN];
	size_t i;

	(void)state;
	pkt.num_acks = 0; /* the acks[] contents must not be written */
	memset(buf, 0xA5, sizeof(buf));
	assert_int_equal(homa_wire_encode_ctrl(&pkt, buf, sizeof(buf)),
			 HOMA_ACK_HDR_LEN);
	assert_memory_equal(buf, golden_ack, HOMA_COMMON_HDR_LEN);
	for (i = HOMA_COMMON_HDR_LEN; i < HOMA_ACK_HDR_LEN; i++)
		assert_int_equal(buf[i], 0);
}

static void homa_wire_encode_ctrl__ack_num_acks_clamped(void **state)
{
	struct homa_pkt pkt = golden_ack_pkt;
	struct homa_pkt back;
	uint8_t buf[HOMA_MAX_CTRL_LEN];
	int i;

	(void)state;
	pkt.num_acks = 9;
	for (i = 0; i < HOMA_MAX_ACKS; i++) {
		pkt.acks[i].client_id = 100 + 2 * (uint64_t)i;
		pkt.acks[i].server_port = (uint16_t)(1 + i);
	}
	assert_int_equal(homa_wire_encode_ctrl(&pkt, buf, sizeof(buf)),
			 HOMA_ACK_HDR_LEN);
	assert_int_equal(buf[28], 0);
	assert_int_equal(buf[29], HOMA_MAX_ACKS);
	assert_int_equal(homa_wire_decode(buf, HOMA_ACK_HDR_LEN, &back),
			 HOMA_WIRE_OK);
	pkt.num_acks = HOMA_MAX_ACKS;
	assert_pkt_equal(&pkt, &back);
}

/* ---------------------------------------------------------------------- */
/* homa_wire_encode_data_hdr                                               */
/* ---------------------------------------------------------------------- */

static void homa_wire_encode_data_hdr__golden(void **state)
{
	uint8_t buf[sizeof(golden_data) + 8];

	(void)state;
	memset(buf, 0xA5, sizeof(buf));
	homa_wire_encode_data_hdr(&golden_data_pkt, buf);
	assert_memory_equal(buf, golden_data, HOMA_DATA_HDR_LEN);
	/* The payload is the caller's: nothing written past the header. */
	assert_int_equal(buf[HOMA_DATA_HDR_LEN], 0xA5);
}

static void homa_wire_encode_data_hdr__no_ack_written_as_zero(void **state)
{
	struct homa_pkt pkt = golden_data_pkt;
	uint8_t buf[HOMA_DATA_HDR_LEN];
	size_t i;

	(void)state;
	pkt.num_acks = 0; /* acks[0] still holds 1234/99: must not appear */
	homa_wire_encode_data_hdr(&pkt, buf);
	for (i = 36; i < 46; i++)
		assert_int_equal(buf[i], 0);
	assert_memory_equal(buf, golden_data, 36);
	assert_memory_equal(buf + 46, golden_data + 46, 10);
}

static void homa_wire_encode_data_hdr__type_always_data(void **state)
{
	struct homa_pkt pkt = golden_data_pkt;
	uint8_t buf[HOMA_DATA_HDR_LEN];

	(void)state;
	pkt.type = HOMA_PKT_GRANT;
	homa_wire_encode_data_hdr(&pkt, buf);
	assert_memory_equal(buf, golden_data, HOMA_DATA_HDR_LEN);
}

static void homa_wire_set_data_offset__equals_encoding(void **state)
{
	struct homa_pkt pkt = golden_data_pkt;
	uint8_t patched[HOMA_DATA_HDR_LEN], encoded[HOMA_DATA_HDR_LEN];

	(void)state;
	homa_wire_encode_data_hdr(&pkt, patched);
	homa_wire_set_data_offset(patched, 0xFEDCBA98u);
	pkt.offset = 0xFEDCBA98u;
	homa_wire_encode_data_hdr(&pkt, encoded);
	assert_memory_equal(patched, encoded, HOMA_DATA_HDR_LEN);
	assert_memory_not_equal(patched, golden_data, HOMA_DATA_HDR_LEN);
}

static void homa_wire_encode_data_hdr__round_trip(void **state)
{
	static const uint8_t payload[] = {1, 2, 3, 4, 5, 6, 7};
	struct homa_pkt pkt = {
		.type = HOMA_PKT_DATA,
		.sport = 40000,
		.dport = 7,
		.sender_id = 0xFFFFFFFFFFFFFFFEu,
		.message_length = 1000000,
		.incoming = 40000,
		.cutoff_version = 0xFFFF,
		.retransmit = 0,
		.offset = 1000000 - sizeof(payload),
		.payload = payload,
		.payload_len = sizeof(payload),
		.num_acks = 1,
		.acks = {{.client_id = 0xFFFFFFFFFFFFFFFEu,
			  .server_port = 0xFFFF}},
	};
	uint8_t buf[HOMA_DATA_HDR_LEN + sizeof(payload)];
	struct homa_pkt back;

	(void)state;
	homa_wire_encode_data_hdr(&pkt, buf);
	memcpy(buf + HOMA_DATA_HDR_LEN, payload, sizeof(payload));
	assert_int_equal(homa_wire_decode(buf, sizeof(buf), &back),
			 HOMA_WIRE_OK);
	assert_pkt_equal(&pkt, &back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_wire_error_name__every_value),
		cmocka_unit_test(homa_wire_error_name__out_of_range),
		cmocka_unit_test(homa_wire_type_name__every_type),
		cmocka_unit_test(homa_wire_type_name__unknown),
		cmocka_unit_test(homa_wire_decode__shorter_than_common_header),
		cmocka_unit_test(homa_wire_decode__bad_type),
		cmocka_unit_test(homa_wire_decode__truncated_every_type),
		cmocka_unit_test(homa_wire_decode__exact_header_every_ctrl_type),
		cmocka_unit_test(homa_wire_decode__golden_data),
		cmocka_unit_test(homa_wire_decode__golden_grant),
		cmocka_unit_test(homa_wire_decode__golden_resend),
		cmocka_unit_test(homa_wire_decode__golden_rpc_unknown),
		cmocka_unit_test(homa_wire_decode__golden_busy),
		cmocka_unit_test(homa_wire_decode__golden_cutoffs),
		cmocka_unit_test(homa_wire_decode__golden_freeze),
		cmocka_unit_test(homa_wire_decode__golden_need_ack),
		cmocka_unit_test(homa_wire_decode__golden_ack),
		cmocka_unit_test(
			homa_wire_decode__ignores_doff_flags_window_checksum),
		cmocka_unit_test(
			homa_wire_decode__zeroes_fields_type_does_not_use),
		cmocka_unit_test(homa_wire_decode__ctrl_trailing_bytes_ignored),
		cmocka_unit_test(homa_wire_decode__resend_all),
		cmocka_unit_test(homa_wire_decode__data_message_length_zero),
		cmocka_unit_test(homa_wire_decode__data_message_length_too_big),
		cmocka_unit_test(homa_wire_decode__data_message_length_max),
		cmocka_unit_test(
			homa_wire_decode__data_seg_offset_unset_uses_sequence),
		cmocka_unit_test(
			homa_wire_decode__data_seg_offset_wins_over_sequence),
		cmocka_unit_test(homa_wire_decode__data_offset_at_length),
		cmocka_unit_test(homa_wire_decode__data_offset_past_length),
		cmocka_unit_test(homa_wire_decode__data_sequence_past_length),
		cmocka_unit_test(homa_wire_decode__data_payload_past_end),
		cmocka_unit_test(homa_wire_decode__data_payload_to_end),
		cmocka_unit_test(homa_wire_decode__data_empty_payload),
		cmocka_unit_test(homa_wire_decode__data_no_ack),
		cmocka_unit_test(homa_wire_decode__ack_num_acks_clamped),
		cmocka_unit_test(
			homa_wire_decode__ack_entries_past_num_acks_ignored),
		cmocka_unit_test(homa_wire_encode_ctrl__golden_grant),
		cmocka_unit_test(homa_wire_encode_ctrl__golden_resend),
		cmocka_unit_test(homa_wire_encode_ctrl__golden_rpc_unknown),
		cmocka_unit_test(homa_wire_encode_ctrl__golden_busy),
		cmocka_unit_test(homa_wire_encode_ctrl__golden_cutoffs),
		cmocka_unit_test(homa_wire_encode_ctrl__golden_freeze),
		cmocka_unit_test(homa_wire_encode_ctrl__golden_need_ack),
		cmocka_unit_test(homa_wire_encode_ctrl__golden_ack),
		cmocka_unit_test(homa_wire_encode_ctrl__cap_too_small),
		cmocka_unit_test(homa_wire_encode_ctrl__data_rejected),
		cmocka_unit_test(homa_wire_encode_ctrl__unknown_type_rejected),
		cmocka_unit_test(
			homa_wire_encode_ctrl__ack_without_acks_full_size),
		cmocka_unit_test(homa_wire_encode_ctrl__ack_num_acks_clamped),
		cmocka_unit_test(homa_wire_encode_data_hdr__golden),
		cmocka_unit_test(
			homa_wire_encode_data_hdr__no_ack_written_as_zero),
		cmocka_unit_test(homa_wire_encode_data_hdr__type_always_data),
		cmocka_unit_test(homa_wire_encode_data_hdr__round_trip),
		cmocka_unit_test(homa_wire_set_data_offset__equals_encoding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
