/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_udp.h - the state of one UDP datapath (homa_udp.c), for homa_udp.c
 * and its unit test (tests/unit/test_homa_udp.c), which looks at the
 * offloads in use and at the coalescing buffers, and turns the offloads
 * off to take the paths of a kernel without them.  Everyone else opens
 * and drives the datapath through homa_datapath.h.
 */
#ifndef HOMA_UDP_H
#define HOMA_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "homa_datapath.h"

/* Space for the control messages of one sendmmsg/recvmmsg entry: the TOS
 * (an int) and the GSO/GRO segment size (a uint16_t or an int). */
#define UDP_CMSG_SPACE (CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(int)))

/* Most datagrams in one GSO send, and most bytes (the UDP limit). */
#define UDP_GSO_MAX_SEGS 64
#define UDP_GSO_MAX_BYTES 65000

/* Receive buffers for coalesced (GRO) datagrams: count and size. */
#define UDP_GRO_BUFS 8
#define UDP_GRO_BUF_BYTES 65536

/* One coalesced datagram being cut into packets. */
struct udp_gro_buf {
	uint8_t *data;                 /* UDP_GRO_BUF_BYTES */
	size_t len;                    /* bytes received */
	size_t off;                    /* next packet starts here */
	size_t seg;                    /* segment size (len when none) */
	union sockaddr_in_union addr;
	uint8_t priority;
	int place;                     /* -1, or the caller's place that
					* one packet filled exactly */
	bool placed;                   /* ... and matched: its bytes after
					* the header are there */
};

/* Entries and iovecs of one sendmmsg batch. */
#define UDP_TX_MSGS 64
#define UDP_TX_IOVS 1024

/* The send batch being built (entries msgs[0..nmsgs), their iovecs
 * iovs[0..niovs)). */
struct udp_tx {
	struct mmsghdr msgs[UDP_TX_MSGS];
	struct iovec iovs[UDP_TX_IOVS];
	char cbufs[UDP_TX_MSGS][UDP_CMSG_SPACE]
		__attribute__((aligned(sizeof(size_t))));
	uint32_t segs[UDP_TX_MSGS];   /* packets of each entry */
	uint32_t gso[UDP_TX_MSGS];    /* bytes per packet of each entry (the
				       * last may be shorter) */
	int nmsgs, niovs;
	int sent;                     /* packets sent by this udp_send */
};

/* The UDP datapath: the common part first. */
struct udp_dp {
	struct homa_dp dp;
	struct udp_tx tx;
	bool gso;                      /* UDP_SEGMENT accepted so far */
	bool gro_on;                   /* UDP_GRO enabled */
	int gro_count;                 /* datagrams in gro[] */
	int gro_next;                  /* first with packets left */
	int low_waited;                /* reads in a row that found both
					* bands ready and read the high band
					* first */
	struct udp_gro_buf gro[UDP_GRO_BUFS];
};

/* With both bands ready, one read in this many reads the low band first,
 * so that a flood of high-band packets does not starve the low band. */
#define UDP_LOW_BAND_TURN 4

#endif /* HOMA_UDP_H */
