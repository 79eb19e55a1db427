/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_ip4 - libFuzzer target for the raw IP datapath's IPv4 decoder
 * (homa_ip_strip_ip4 in src/io/homa_ip.c): a datagram of protocol 146 as a
 * raw socket hands it over, IPv4 header and options first, scattered by the
 * kernel over three buffers (the first 20 bytes, the packet buffer, a tail
 * for what options pushed past it).
 *
 * Input: byte 0 picks the packet buffer's size (cap = 1 + byte * 8, so
 * 1..2041 bytes, smaller than any IPv4 header with options up to larger
 * than a 1,500-byte packet); the rest is the datagram.  The datagram is
 * scattered as recvmsg does (a datagram longer than the three buffers is
 * one the kernel reports truncated and the datapath drops before decoding:
 * it is skipped here).  The buffers are allocated to their exact sizes, so
 * ASan sees any access past them.
 *
 * Oracle: the decoder accepts exactly the datagrams whose version is 4,
 * whose header length is 20..60 and within the datagram, and whose Homa
 * part (after the header) fits in cap; when it accepts, the packet buffer
 * holds exactly the datagram's bytes after the header, the length is theirs
 * and the TOS is the header's second byte.  Any disagreement calls abort().
 *
 * The decoder is declared in src/io/homa_ip.h; the target links the
 * datapath compiled for fuzzing (homa_io_fuzz).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "homa_ip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Bytes the tail buffer holds (options push at most this far). */
#define TAIL_LEN (IPDP_IP4_HDR_MAX - IPDP_IP4_HDR_MIN)

/* check - abort() unless cond holds. */
static void check(int cond)
{
	if (!cond)
		abort();
}

/* expect_ok - whether the decoder must accept datagram d of n bytes for a
 * packet buffer of cap bytes. */
static bool expect_ok(const uint8_t *d, size_t n, size_t cap)
{
	size_t ihl;

	if (n < IPDP_IP4_HDR_MIN || (d[0] >> 4) != 4)
		return false;
	ihl = (size_t)(d[0] & 0x0f) * 4;
	return ihl >= IPDP_IP4_HDR_MIN && ihl <= n && n - ihl <= cap;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t hdr[IPDP_IP4_HDR_MIN] = { 0 };
	uint8_t *buf, *tail;
	const uint8_t *d;
	size_t cap, n, at, len = 0, k;
	uint8_t tos = 0;
	bool ok;

	if (size < 1)
		return 0;
	cap = 1 + (size_t)data[0] * 8;
	d = data + 1;
	n = size - 1;
	if (n > IPDP_IP4_HDR_MIN + cap + TAIL_LEN)
		return 0; /* truncated: dropped before decoding */
	buf = malloc(cap);
	tail = malloc(TAIL_LEN);
	check(buf && tail);
	memset(buf, 0xa5, cap);
	memset(tail, 0x5a, TAIL_LEN);
	/* Scatter as recvmsg does: hdr, then buf, then tail. */
	k = n < IPDP_IP4_HDR_MIN ? n : IPDP_IP4_HDR_MIN;
	memcpy(hdr, d, k);
	at = k;
	k = n - at < cap ? n - at : cap;
	memcpy(buf, d + at, k);
	at += k;
	memcpy(tail, d + at, n - at);
	ok = homa_ip_strip_ip4(hdr, buf, cap, tail, n, &len, &tos);
	check(ok == expect_ok(d, n, cap));
	if (ok) {
		size_t ihl = (size_t)(d[0] & 0x0f) * 4;

		check(len == n - ihl);
		check(memcmp(buf, d + ihl, len) == 0);
		check(tos == d[1]);
	}
	free(buf);
	free(tail);
	return 0;
}
