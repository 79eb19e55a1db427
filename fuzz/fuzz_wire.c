/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_wire - libFuzzer target for homa_wire_decode.
 *
 * Decodes arbitrary bytes.  When decoding succeeds, the packet is encoded
 * again (homa_wire_encode_ctrl, or homa_wire_encode_data_hdr plus the
 * payload), the result is decoded, and every field must agree with the first
 * decode; encoding the second decode must then give the same bytes.  Any
 * disagreement calls abort().  ASan/UBSan catch reads past the input.
 *
 * Build and run (from the repository root):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc/core \
 *       fuzz/fuzz_wire.c src/core/homa_wire.c -o fuzz_wire
 *   ./fuzz_wire -max_total_time=60 fuzz/corpus/wire
 * (copy the corpus to a scratch directory first to keep new inputs out of
 * the tree).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "homa_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* check - abort() unless cond holds. */
static void check(int cond)
{
	if (!cond)
		abort();
}

/* check_same - abort() unless every field of a and b agrees (payloads by
 * length and content, not by address). */
static void check_same(const struct homa_pkt *a, const struct homa_pkt *b)
{
	int i;

	check(a->type == b->type);
	check(a->sport == b->sport);
	check(a->dport == b->dport);
	check(a->sender_id == b->sender_id);
	check(a->message_length == b->message_length);
	check(a->incoming == b->incoming);
	check(a->cutoff_version == b->cutoff_version);
	check(a->retransmit == b->retransmit);
	check(a->offset == b->offset);
	check(a->payload_len == b->payload_len);
	check((a->payload == NULL) == (b->payload == NULL));
	if (a->payload_len > 0)
		check(memcmp(a->payload, b->payload, a->payload_len) == 0);
	check(a->priority == b->priority);
	check(a->length == b->length);
	for (i = 0; i < HOMA_NUM_PRIORITIES; i++)
		check(a->unsched_cutoffs[i] == b->unsched_cutoffs[i]);
	check(a->num_acks == b->num_acks);
	for (i = 0; i < HOMA_MAX_ACKS; i++) {
		check(a->acks[i].client_id == b->acks[i].client_id);
		check(a->acks[i].server_port == b->acks[i].server_port);
	}
}

/*
 * encode - encode pkt into a malloc'd buffer (header and, for DATA, the
 * payload).  Returns the buffer and sets *len; aborts if the encoder refuses
 * a packet the decoder accepted.
 */
static uint8_t *encode(const struct homa_pkt *pkt, size_t *len)
{
	uint8_t *buf;

	if (pkt->type == HOMA_PKT_DATA) {
		*len = HOMA_DATA_HDR_LEN + (size_t)pkt->payload_len;
		buf = malloc(*len);
		check(buf != NULL);
		homa_wire_encode_data_hdr(pkt, buf);
		memcpy(buf + HOMA_DATA_HDR_LEN, pkt->payload,
		       pkt->payload_len);
		return buf;
	}
	buf = malloc(HOMA_MAX_CTRL_LEN);
	check(buf != NULL);
	*len = homa_wire_encode_ctrl(pkt, buf, HOMA_MAX_CTRL_LEN);
	check(*len >= HOMA_COMMON_HDR_LEN && *len <= HOMA_MAX_CTRL_LEN);
	/* Too small a buffer must be refused. */
	check(homa_wire_encode_ctrl(pkt, buf, *len - 1) == 0);
	return buf;
}

/* LLVMFuzzerTestOneInput - one fuzz input; always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct homa_pkt first, second, third;
	uint8_t *enc1, *enc2;
	size_t len1, len2;
	enum homa_wire_error err;

	err = homa_wire_decode(data, size, &first);
	check(homa_wire_error_name(err) != NULL);
	if (err != HOMA_WIRE_OK)
		return 0;
	check(homa_wire_type_name(first.type) != NULL);
	check(first.num_acks <= HOMA_MAX_ACKS);
	if (first.type == HOMA_PKT_DATA) {
		check(first.payload == data + HOMA_DATA_HDR_LEN);
		check(first.payload_len == size - HOMA_DATA_HDR_LEN);
		check(first.message_length >= 1 &&
		      first.message_length <= 1000000);
		check(first.offset < first.message_length);
		check(first.payload_len <=
		      first.message_length - first.offset);
	}

	enc1 = encode(&first, &len1);
	check(homa_wire_decode(enc1, len1, &second) == HOMA_WIRE_OK);
	check_same(&first, &second);

	/* Encoding is a function of the decoded fields only. */
	enc2 = encode(&second, &len2);
	check(len1 == len2 && memcmp(enc1, enc2, len1) == 0);
	check(homa_wire_decode(enc2, len2, &third) == HOMA_WIRE_OK);
	check_same(&first, &third);

	free(enc1);
	free(enc2);
	return 0;
}
