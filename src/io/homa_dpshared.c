/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_dpshared - the socket helpers the datapath implementations share:
 * see homa_dpshared.h.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "homa_dpshared.h"

/* See homa_dpshared.h. */
socklen_t homa_dp_addr_len(int family)
{
	if (family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return 0;
}

/*
 * dp_set_buf - ask for bytes of buffer on fd with option force_opt,
 * falling back to opt (failures ignored).
 */
static void dp_set_buf(int fd, int force_opt, int opt, int bytes)
{
	if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)) == 0)
		return;
	(void)setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes));
}

/* See homa_dpshared.h. */
void homa_dp_set_bufs(int fd, int bytes)
{
	dp_set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, bytes);
	dp_set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF, bytes);
}

/* See homa_dpshared.h. */
union sockaddr_in_union homa_dp_addr_any(int family, uint16_t port)
{
	union sockaddr_in_union a;

	memset(&a, 0, sizeof(a));
	if (family == AF_INET6) {
		a.in6.sin6_family = AF_INET6;
		a.in6.sin6_addr = in6addr_any;
		a.in6.sin6_port = htons(port);
	} else {
		a.in4.sin_family = AF_INET;
		a.in4.sin_addr.s_addr = htonl(INADDR_ANY);
		a.in4.sin_port = htons(port);
	}
	return a;
}

/* See homa_dpshared.h. */
union sockaddr_in_union homa_dp_addr_loopback(int family, uint16_t port)
{
	union sockaddr_in_union a = homa_dp_addr_any(family, port);

	if (family == AF_INET6)
		a.in6.sin6_addr = in6addr_loopback;
	else
		a.in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* See homa_dpshared.h. */
int homa_dp_bind_port(int fd, int family, uint16_t port)
{
	union sockaddr_in_union a = homa_dp_addr_any(family, port);

	if (bind(fd, &a.sa, homa_dp_addr_len(family)) != 0)
		return -errno;
	return 0;
}

/* See homa_dpshared.h. */
uint32_t homa_dp_random(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	return (uint32_t)rand() ^ ((uint32_t)getpid() << 16);
}

/* See homa_dpshared.h. */
int homa_dp_client_port(homa_dp_port_try_fn try_port, void *ctx,
			uint16_t *port)
{
	const uint32_t range = HOMA_DP_CLIENT_PORT_MAX -
			       HOMA_DP_CLIENT_PORT_MIN + 1;
	const uint32_t start = homa_dp_random() % range;

	for (uint32_t i = 0; i < HOMA_DP_RANDOM_TRIES + range; i++) {
		uint32_t k = i < HOMA_DP_RANDOM_TRIES
				     ? homa_dp_random() % range
				     : (start + i - HOMA_DP_RANDOM_TRIES) % range;
		uint16_t p = (uint16_t)(HOMA_DP_CLIENT_PORT_MIN + k);
		int r = try_port(ctx, p);

		if (r >= 0) {
			*port = p;
			return r;
		}
		if (r != -EADDRINUSE)
			return r;
	}
	return -EADDRINUSE;
}

/* See homa_dpshared.h. */
int homa_dp_recv_retry(struct homa_dp *dp, homa_dp_read_fn read, void *ctx,
		       int n)
{
	int got = 0;

	for (int tries = 0; got < n && tries < HOMA_DP_RECV_RETRIES;) {
		int k = n - got < HOMA_DP_BATCH ? n - got : HOMA_DP_BATCH;
		int kept = 0;
		int r = read(ctx, got, k, &kept);

		if (r == -EINTR || (r < 0 && homa_dp_icmp_errno(-r))) {
			if (r != -EINTR)
				homa_dp_errors(dp);
			tries++; /* read on */
			continue;
		}
		if (r < 0) {
			dp->counters.recv_errors++;
			return got ? got : r;
		}
		got += kept;
		if (r < k)
			break; /* the socket is empty */
	}
	return got;
}
