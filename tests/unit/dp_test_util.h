/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dp_test_util - what the unit tests of the datapaths (test_homa_udp.c,
 * test_homa_ip.c) and of their shared helpers (test_homa_dpshared.c)
 * share: server ports of their own, a datapath opened on a free exact
 * port, the port a socket is bound to, and receiving a number of packets.
 * Addresses come from homa_dpshared.h (homa_dp_addr_loopback,
 * homa_dp_addr_len).
 *
 * Every helper fails the running cmocka test when an expectation breaks.
 * Include <cmocka.h> (with its prerequisites) before this header.
 */
#ifndef DP_TEST_UTIL_H
#define DP_TEST_UTIL_H

#include <stdint.h>

#include "homa_datapath.h"

/* dp_test_port - server port number k for tests: 20000..32767, different
 * per process, so that parallel test programs rarely meet. */
uint16_t dp_test_port(int k);

/* A datapath's open call: homa_udp_open or homa_ip_open. */
typedef int (*dp_open_fn)(int family, uint16_t port, struct homa_dp **out);

/*
 * dp_open_exact - a datapath opened with open on some free exact port
 * near dp_test_port(k) (up to 50 ports tried, each taken port skipped);
 * the caller owns it (homa_dp_close).  Fails the test on any other error
 * or when every port tried was taken.
 */
struct homa_dp *dp_open_exact(dp_open_fn open, int family, int k);

/* dp_fd_port - the port (host order) the kernel says fd is bound to;
 * fails the test when getsockname does. */
uint16_t dp_fd_port(int fd);

/*
 * dp_recv_all - receive up to want packets on dp into pkts, waiting up to
 * 2 s: each packet's bytes are copied into its slot of cap bytes at space
 * (slot i at space + i * cap; a datapath may hand out its own buffers,
 * valid only until its next receive) and pkts[i].buf points there.
 * Returns how many arrived; fails the test on a receive error or a packet
 * longer than cap.
 */
int dp_recv_all(struct homa_dp *dp, struct homa_dp_pkt *pkts, int want,
		uint8_t *space, size_t cap);

#endif /* DP_TEST_UTIL_H */
