/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_rpc_wire - libFuzzer target for rpcw_decode, the homa-rpc header
 * parser (src/rpc/rpc_wire.c).
 *
 * Decodes arbitrary bytes as a whole message.  When decoding succeeds, the
 * header must describe the input exactly (header and body lengths add up,
 * every pointer inside it), encoding it again must give the input's header
 * bytes, and decoding those (with the body) must give the same fields.  Any
 * disagreement calls abort(); ASan/UBSan catch reads past the input.
 *
 * Build and run (from the repository root):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Isrc/rpc \
 *       fuzz/fuzz_rpc_wire.c src/rpc/rpc_wire.c -o fuzz_rpc_wire
 *   ./fuzz_rpc_wire -max_total_time=60 fuzz/corpus/rpc_wire
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "rpc_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* inside - whether [p, p + n) lies in [data, data + size). */
static int inside(const uint8_t *p, size_t n, const uint8_t *data,
		  size_t size)
{
	if (n == 0)
		return 1;
	return p >= data && p + n <= data + size;
}

/* check_bounds - every part of @h lies in the header of the input. */
static void check_bounds(const struct rpcw_hdr *h, const uint8_t *data)
{
	check(inside(h->path, h->path_len, data, h->hdr_len));
	check(inside(h->status_msg, h->status_msg_len, data, h->hdr_len));
	check(h->n_md <= RPCW_MAX_MD);
	for (unsigned i = 0; i < h->n_md; i++) {
		check(inside(h->md[i].key, h->md[i].key_len, data,
			     h->hdr_len));
		check(inside(h->md[i].value, h->md[i].value_len, data,
			     h->hdr_len));
		check(rpcw_md_key_ok(h->md[i].key, h->md[i].key_len));
	}
}

/* check_same - the fields of @a and @b agree (strings by content). */
static void check_same(const struct rpcw_hdr *a, const struct rpcw_hdr *b)
{
	check(a->kind == b->kind && a->flags == b->flags);
	check(a->status == b->status && a->deadline_us == b->deadline_us);
	check(a->hdr_len == b->hdr_len && a->body_len == b->body_len);
	check(a->path_len == b->path_len);
	check(a->path_len == 0 ||
	      memcmp(a->path, b->path, a->path_len) == 0);
	check(a->status_msg_len == b->status_msg_len);
	check(a->status_msg_len == 0 ||
	      memcmp(a->status_msg, b->status_msg, a->status_msg_len) == 0);
	check(a->n_md == b->n_md);
	for (unsigned i = 0; i < a->n_md; i++) {
		check(a->md[i].key_len == b->md[i].key_len);
		check(a->md[i].value_len == b->md[i].value_len);
		check(memcmp(a->md[i].key, b->md[i].key,
			     a->md[i].key_len) == 0);
		check(a->md[i].value_len == 0 ||
		      memcmp(a->md[i].value, b->md[i].value,
			     a->md[i].value_len) == 0);
	}
}

/* LLVMFuzzerTestOneInput - one fuzz input; always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcw_hdr first, second;
	uint8_t *enc;
	size_t len;

	if (rpcw_decode(data, size, &first) != RPCW_OK)
		return 0;
	check((size_t)first.hdr_len + first.body_len == size);
	check(rpcw_check(&first) == RPCW_OK);
	check_bounds(&first, data);

	enc = malloc(size);
	check(enc != NULL);
	len = rpcw_encode(&first, enc, size);
	check(len == first.hdr_len);
	check(memcmp(enc, data, len) == 0);
	check(rpcw_encode(&first, enc, len - 1) == 0);
	memcpy(enc + len, data + len, size - len);
	check(rpcw_decode(enc, size, &second) == RPCW_OK);
	check_same(&first, &second);
	free(enc);
	return 0;
}
