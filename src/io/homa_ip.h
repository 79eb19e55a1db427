/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_ip.h - what the raw IP datapath (homa_ip.c) shows of its inside to
 * its unit test (tests/unit/test_homa_ip.c) and its fuzzer
 * (fuzz/fuzz_ip4.c): the numbers of the protocol it reads and writes, the
 * IPv4 decoder, and a hook that makes the process forget its one warning.
 * The datapath itself is opened through homa_datapath.h (homa_ip_open).
 */
#ifndef HOMA_IP_H
#define HOMA_IP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The IANA protocol number of Homa. */
#define IPDP_PROTO 146

/* The Homa RESEND type code, and where a packet's type byte is. */
#define IPDP_TYPE_RESEND 0x12
#define IPDP_TYPE_OFFSET 11

/* Smallest and largest IPv4 header (IHL 5 and 15 words). */
#define IPDP_IP4_HDR_MIN 20
#define IPDP_IP4_HDR_MAX 60

/*
 * homa_ip_strip_ip4 - turn the IPv4 datagram of got bytes, read as hdr
 * (its first IPDP_IP4_HDR_MIN bytes), then buf (cap bytes), then tail
 * (IPDP_IP4_HDR_MAX - IPDP_IP4_HDR_MIN bytes), into the bare Homa packet
 * at buf.  Sets *len to its length and *tos to the IP TOS byte.  Returns
 * false when it does not fit in cap bytes (or the header is malformed:
 * not version 4, a header length below 20 or beyond got): the packet must
 * be dropped.  Reads only hdr, buf and tail; writes only buf, *len, *tos.
 */
bool homa_ip_strip_ip4(const uint8_t *hdr, uint8_t *buf, size_t cap,
		       const uint8_t *tail, size_t got, size_t *len,
		       uint8_t *tos);

/*
 * homa_ip_forget_warning - make the process forget that it printed why a
 * raw socket could not be opened, so that the next failure prints it again
 * (tests: the message as a fresh process shows it).
 */
void homa_ip_forget_warning(void);

#endif /* HOMA_IP_H */
