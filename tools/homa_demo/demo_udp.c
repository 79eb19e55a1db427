// SPDX-License-Identifier: BSD-2-Clause
/* homa-demo: UDP ping-pong: the echo server, the client's phases (see
 * demo.h). */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "demo.h"
#include "tool_addr.h"
#include "tool_clock.h"

/* udp_server_main - thread: echo every datagram until stop is set (the
 * socket's 100 ms receive timeout lets it look). */
static void *udp_server_main(void *arg)
{
	struct udp_server *u = arg;
	struct sockaddr_in from;
	socklen_t flen;
	ssize_t n;

	while (!atomic_load(&u->stop)) {
		flen = sizeof(from);
		n = recvfrom(u->fd, u->buf, sizeof(u->buf), 0,
			     (struct sockaddr *)&from, &flen);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			perror("homa-demo: UDP server recvfrom");
			break;
		}
		if (sendto(u->fd, u->buf, (size_t)n, 0,
			   (struct sockaddr *)&from, flen) < 0)
			perror("homa-demo: UDP server sendto");
	}
	return NULL;
}

/* set_rcvtimeo - SO_RCVTIMEO of ns nanoseconds; returns 0 or -1. */
static int set_rcvtimeo(int fd, uint64_t ns)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(ns / 1000000000ull);
	tv.tv_usec = (suseconds_t)(ns % 1000000000ull / 1000);
	return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* udp_socket - a UDP socket bound to 127.0.0.1:port (any port when 0)
 * with a receive timeout; -1 (printed) on failure. */
static int udp_socket(int port, uint64_t timeout_ns)
{
	union sockaddr_in_union a = tool_addr_loopback(AF_INET, port);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0) {
		perror("homa-demo: socket (UDP)");
		return -1;
	}
	if (bind(fd, &a.sa, tool_addr_len(&a)) < 0 ||
	    set_rcvtimeo(fd, timeout_ns) < 0) {
		fprintf(stderr, "homa-demo: UDP port %d: %s\n", port,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int udp_server_start(struct udp_server *u, int port)
{
	int err;

	atomic_init(&u->stop, 0);
	u->fd = udp_socket(port, 100000000ull);
	if (u->fd < 0)
		return -1;
	err = pthread_create(&u->thread, NULL, udp_server_main, u);
	if (err != 0) {
		fprintf(stderr, "homa-demo: pthread_create: %s\n",
			strerror(err));
		close(u->fd);
		return -1;
	}
	return 0;
}

void udp_server_stop(struct udp_server *u)
{
	atomic_store(&u->stop, 1);
	pthread_join(u->thread, NULL);
	close(u->fd);
}

int udp_client(int port)
{
	union sockaddr_in_union a = tool_addr_loopback(AF_INET, port);
	int fd = udp_socket(0, UDP_WAIT_NS);

	if (fd >= 0 && connect(fd, &a.sa, tool_addr_len(&a)) < 0) {
		perror("homa-demo: connect (UDP)");
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * udp_wait - receive the echo of datagram seq on the connected fd, either
 * blocking (the socket's 1 s timeout) or spinning with MSG_DONTWAIT for at
 * most UDP_WAIT_NS.  Stale echoes (another seq) are skipped.  Returns the
 * length, 0 when given up (lost), -1 on error.
 */
static ssize_t udp_wait(int fd, int spin, uint8_t *buf, size_t cap,
			uint64_t seq, size_t len)
{
	uint64_t deadline = tool_now_ns() + UDP_WAIT_NS, got;
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, cap, spin ? MSG_DONTWAIT : 0);
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				return -1;
			if (tool_now_ns() > deadline)
				return 0;
			continue;
		}
		if (len < sizeof(seq))
			return n;
		memcpy(&got, buf, sizeof(got));
		if (got == seq)
			return n;
	}
}

/*
 * udp_phase - s->rpcs ping-pongs of s->req_len bytes on the connected fd.
 * A lost datagram counts in res->lost and gives no sample; more than 1% of
 * them fails the phase.  Returns 0 or -1 with res->why.
 */
static int udp_phase(int fd, int spin, const struct run_spec *s,
		     uint8_t *sbuf, uint8_t *rbuf, struct run_result *res)
{
	static uint64_t next_seq;       /* over every phase: main thread */
	size_t len = (size_t)s->req_len;
	uint64_t start = tool_now_ns(), t0, t1, seq;
	long i;
	ssize_t n;

	for (i = 0; i < s->rpcs; i++) {
		seq = ++next_seq;
		if (len >= sizeof(seq))
			memcpy(sbuf, &seq, sizeof(seq));
		t0 = tool_now_ns();
		if (send(fd, sbuf, len, 0) < 0)
			return fail(res, "UDP send: %s", strerror(errno));
		n = udp_wait(fd, spin, rbuf, UDP_MAX, seq, len);
		t1 = tool_now_ns();
		if (n < 0)
			return fail(res, "UDP recv: %s", strerror(errno));
		if (n == 0) {
			if (++res->lost * 100 > s->rpcs)
				return fail(res, "UDP: %ld datagrams lost",
					    res->lost);
			continue;
		}
		if ((size_t)n != len)
			return fail(res, "UDP echo of %zd bytes, expected %zu",
				    n, len);
		if (s->hist)
			homa_histogram_record(s->hist, t1 - t0);
		res->done++;
		if (t1 - start > PHASE_BUDGET_NS && i + 1 < s->rpcs) {
			res->truncated = 1;
			break;
		}
	}
	res->elapsed_ns = tool_now_ns() - start;
	return 0;
}

int run_udp(struct demo *d, int spin, const struct run_spec *s,
	    struct run_result *res)
{
	struct run_spec w = warm_spec(s);

	if (udp_phase(d->udp_fd, spin, &w, d->sbuf, d->rbuf, res) < 0)
		return -1;
	memset(res, 0, sizeof(*res));
	return udp_phase(d->udp_fd, spin, s, d->sbuf, d->rbuf, res);
}
