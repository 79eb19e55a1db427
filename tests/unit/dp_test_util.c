// SPDX-License-Identifier: BSD-2-Clause
/* The datapath tests' shared helpers: see dp_test_util.h. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
