// SPDX-License-Identifier: BSD-2-Clause
/* The datapath tests' shared helpers: see dp_test_util.h. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "dp_test_util.h"
#include "homa_addr.h"

uint16_t dp_test_port(int k)
{
	return (uint16_t)(20000 + (getpid() * 7 + k) % 12000);
}

struct homa_dp *dp_open_exact(dp_open_fn open, int family, int k)
{
	struct homa_dp *dp = NULL;

	for (int i = 0; i < 50; i++) {
		int err = open(family, dp_test_port(k + i * 131), &dp);

		if (err == 0)
			return dp;
		assert_int_equal(err, -EADDRINUSE);
	}
	fail_msg("no free port");
	return NULL;
}

uint16_t dp_fd_port(int fd)
{
	union sockaddr_in_union a;
	socklen_t len = sizeof(a);

	assert_int_equal(getsockname(fd, &a.sa, &len), 0);
	return homa_addr_port(&a);
}

int dp_recv_all(struct homa_dp *dp, struct homa_dp_pkt *pkts, int want,
		uint8_t *space, size_t cap)
{
	int got = 0;

	for (int spins = 0; got < want && spins < 200; spins++) {
		struct pollfd p = { .fd = homa_dp_fd(dp), .events = POLLIN };
		struct homa_dp_pkt batch[HOMA_DP_BATCH];
		int n;

		n = want - got < HOMA_DP_BATCH ? want - got : HOMA_DP_BATCH;
		for (int i = 0; i < n; i++) {
			batch[i].buf = space + (size_t)(got + i) * cap;
			batch[i].len = cap;
		}
		n = homa_dp_recv(dp, batch, n);
		assert_true(n >= 0);
		/* A datapath may hand out its own buffers, valid until the
		 * next receive: keep a copy in the caller's space. */
		for (int i = 0; i < n; i++) {
			uint8_t *mine = space + (size_t)(got + i) * cap;

			assert_true(batch[i].len <= cap);
			memmove(mine, batch[i].buf, batch[i].len);
			pkts[got + i] = batch[i];
			pkts[got + i].buf = mine;
		}
		got += n;
		if (n == 0)
			(void)poll(&p, 1, 10);
	}
	return got;
}
