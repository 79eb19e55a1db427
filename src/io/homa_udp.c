/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_udp - the UDP datapath: one nonblocking UDP socket whose port is the
 * Homa port; the UDP payload is exactly the Homa packet.  Batches go out
 * with sendmmsg, each packet's priority in the DSCP bits (TOS or traffic
 * class = priority << 5), and come in with recvmmsg.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "homa_datapath.h"

/* Socket buffer size asked for in each direction. */
#define UDP_SOCKBUF_BYTES (4 * 1024 * 1024)

/* Random client ports tried before a full scan of the range. */
#define UDP_RANDOM_TRIES 64

/* Space for the one int control message of a packet. */
#define UDP_CMSG_SPACE CMSG_SPACE(sizeof(int))

/* Receive calls retried after errors that only report an earlier ICMP. */
#define UDP_RECV_RETRIES 4

static const struct homa_dp_ops udp_ops;

/*
 * udp_addr_len - the sockaddr length of family (0 for an unknown family).
 */
static socklen_t udp_addr_len(int family)
{
	if (family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return 0;
}

/*
 * udp_set_bufsize - ask for UDP_SOCKBUF_BYTES of socket buffer with option
 * force_opt (allowed to root, beyond the sysctl limit), falling back to opt.
 * Failures are ignored: the defaults still work, only with more drops.
 */
static void udp_set_bufsize(int fd, int force_opt, int opt)
{
	int size = UDP_SOCKBUF_BYTES;

	if (setsockopt(fd, SOL_SOCKET, force_opt, &size, sizeof(size)) == 0)
		return;
	(void)setsockopt(fd, SOL_SOCKET, opt, &size, sizeof(size));
}

/*
 * udp_new_socket - a nonblocking, close-on-exec UDP socket of family with
 * large buffers, V6ONLY for IPv6 and the reception of the sender's TOS on.
 * Returns the descriptor or a negative errno from socket(2).
 */
static int udp_new_socket(int family)
{
	int on = 1;
	int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	udp_set_bufsize(fd, SO_RCVBUFFORCE, SO_RCVBUF);
	udp_set_bufsize(fd, SO_SNDBUFFORCE, SO_SNDBUF);
	if (family == AF_INET6) {
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on,
				 sizeof(on));
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &on,
				 sizeof(on));
	} else {
		(void)setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on));
	}
	return fd;
}

/*
 * udp_bind_port - bind fd (of family) to the wildcard address and port.
 * Returns 0 or a negative errno (-EADDRINUSE when taken).
 */
static int udp_bind_port(int fd, int family, uint16_t port)
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
	if (bind(fd, &a.sa, udp_addr_len(family)) != 0)
		return -errno;
	return 0;
}

/*
 * udp_random - a random 32-bit number (getrandom, else a weak fallback
 * mixing the time and the process id).
 */
static uint32_t udp_random(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	return (uint32_t)rand() ^ ((uint32_t)getpid() << 16);
}

/*
 * udp_bind_client_port - bind fd to a free port in 32768..65535: a few
 * random tries, then a scan of the whole range from a random start.
 * Returns the port, or -EADDRINUSE when all are taken, or another negative
 * errno from bind.
 */
static int udp_bind_client_port(int fd, int family)
{
	const uint32_t range = HOMA_DP_CLIENT_PORT_MAX -
			       HOMA_DP_CLIENT_PORT_MIN + 1;
	uint32_t start;
	int err;

	for (int i = 0; i < UDP_RANDOM_TRIES; i++) {
		uint16_t port = (uint16_t)(HOMA_DP_CLIENT_PORT_MIN +
					   udp_random() % range);

		err = udp_bind_port(fd, family, port);
		if (err == 0)
			return port;
		if (err != -EADDRINUSE)
			return err;
	}
	start = udp_random() % range;
	for (uint32_t i = 0; i < range; i++) {
		uint16_t port = (uint16_t)(HOMA_DP_CLIENT_PORT_MIN +
					   (start + i) % range);

		err = udp_bind_port(fd, family, port);
		if (err == 0)
			return port;
		if (err != -EADDRINUSE)
			return err;
	}
	return -EADDRINUSE;
}

/* See homa_datapath.h. */
int homa_udp_open(int family, uint16_t port, struct homa_dp **out)
{
	struct homa_dp *dp;
	int fd, err;

	*out = NULL;
	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	dp = calloc(1, sizeof(*dp));
	if (!dp)
		return -ENOMEM;
	fd = udp_new_socket(family);
	if (fd < 0) {
		free(dp);
		return fd;
	}
	if (port == 0) {
		err = udp_bind_client_port(fd, family);
		if (err > 0) {
			port = (uint16_t)err;
			err = 0;
		}
	} else {
		err = udp_bind_port(fd, family, port);
	}
	if (err < 0) {
		close(fd);
		free(dp);
		return err;
	}
	dp->ops = &udp_ops;
	dp->fd = fd;
	dp->family = family;
	dp->port = port;
	*out = dp;
	return 0;
}

/*
 * udp_fill_tos - write into cbuf the control message carrying priority for
 * family; returns the bytes used (0 for priority 0, the socket's default).
 */
static size_t udp_fill_tos(int family, uint8_t priority, char *cbuf)
{
	struct msghdr m = { .msg_control = cbuf,
			    .msg_controllen = UDP_CMSG_SPACE };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	int tos = (priority & 7) << 5;

	if (tos == 0)
		return 0;
	memset(cbuf, 0, UDP_CMSG_SPACE);
	c->cmsg_level = family == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP;
	c->cmsg_type = family == AF_INET6 ? IPV6_TCLASS : IP_TOS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &tos, sizeof(tos));
	return UDP_CMSG_SPACE;
}

/*
 * udp_send_chunk - send pkts[0..n) (n <= HOMA_DP_BATCH) with sendmmsg,
 * dropping (and counting) each packet the kernel refuses.  Returns the
 * number sent.
 */
static int udp_send_chunk(struct homa_dp *dp, struct homa_dp_pkt *pkts,
			  int n)
{
	struct mmsghdr msgs[HOMA_DP_BATCH];
	struct iovec iovs[HOMA_DP_BATCH];
	char cbufs[HOMA_DP_BATCH][UDP_CMSG_SPACE]
		__attribute__((aligned(sizeof(size_t))));
	int done = 0, sent = 0;

	memset(msgs, 0, sizeof(msgs[0]) * (size_t)n);
	for (int i = 0; i < n; i++) {
		struct msghdr *m = &msgs[i].msg_hdr;
		size_t clen = udp_fill_tos(dp->family, pkts[i].priority,
					   cbufs[i]);

		iovs[i].iov_base = pkts[i].buf;
		iovs[i].iov_len = pkts[i].len;
		m->msg_name = &pkts[i].addr;
		m->msg_namelen = udp_addr_len(pkts[i].addr.sa.sa_family);
		m->msg_iov = &iovs[i];
		m->msg_iovlen = 1;
		m->msg_control = clen ? cbufs[i] : NULL;
		m->msg_controllen = clen;
	}
	while (done < n) {
		int r = sendmmsg(dp->fd, msgs + done, (unsigned int)(n - done),
				 0);

		if (r > 0) {
			done += r;
			sent += r;
		} else if (r < 0 && errno == EINTR) {
			continue;
		} else {
			/* msgs[done] was refused (ENOBUFS, EAGAIN,
			 * ECONNREFUSED, ...): drop it, Homa resends. */
			dp->counters.send_dropped++;
			done++;
		}
	}
	dp->counters.packets_sent += (uint64_t)sent;
	return sent;
}

/* udp_send - homa_dp_send for UDP (contract in homa_datapath.h). */
static int udp_send(struct homa_dp *dp, struct homa_dp_pkt *pkts, int n)
{
	int sent = 0;

	for (int i = 0; i < n; i += HOMA_DP_BATCH) {
		int k = n - i < HOMA_DP_BATCH ? n - i : HOMA_DP_BATCH;

		sent += udp_send_chunk(dp, pkts + i, k);
	}
	return sent;
}

/*
 * udp_read_tos - the priority carried by the TOS/traffic-class control
 * message of m (0 when there is none).
 */
static uint8_t udp_read_tos(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		int tos = 0;

		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
			tos = *(const uint8_t *)CMSG_DATA(c);
		} else if (c->cmsg_level == IPPROTO_IPV6 &&
			   c->cmsg_type == IPV6_TCLASS &&
			   c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			memcpy(&tos, CMSG_DATA(c), sizeof(tos));
		} else {
			continue;
		}
		return (uint8_t)((tos >> 5) & 7);
	}
	return 0;
}

/*
 * udp_recv_chunk - one recvmmsg of up to n (<= HOMA_DP_BATCH) packets.
 * Returns the number of datagrams the kernel handed over (some may be
 * dropped as truncated: *kept says how many of them are in pkts[0..*kept)),
 * 0 when none waits, or a negative errno.
 */
static int udp_recv_chunk(struct homa_dp *dp, struct homa_dp_pkt *pkts,
			  int n, int *kept)
{
	struct mmsghdr msgs[HOMA_DP_BATCH];
	struct iovec iovs[HOMA_DP_BATCH];
	char cbufs[HOMA_DP_BATCH][UDP_CMSG_SPACE]
		__attribute__((aligned(sizeof(size_t))));
	int r, k = 0;

	*kept = 0;
	memset(msgs, 0, sizeof(msgs[0]) * (size_t)n);
	for (int i = 0; i < n; i++) {
		struct msghdr *m = &msgs[i].msg_hdr;

		iovs[i].iov_base = pkts[i].buf;
		iovs[i].iov_len = pkts[i].len;
		m->msg_name = &pkts[i].addr;
		m->msg_namelen = sizeof(pkts[i].addr);
		m->msg_iov = &iovs[i];
		m->msg_iovlen = 1;
		m->msg_control = cbufs[i];
		m->msg_controllen = UDP_CMSG_SPACE;
	}
	r = recvmmsg(dp->fd, msgs, (unsigned int)n, MSG_DONTWAIT, NULL);
	if (r < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	for (int i = 0; i < r; i++) {
		struct msghdr *m = &msgs[i].msg_hdr;

		if (m->msg_flags & MSG_TRUNC) {
			dp->counters.recv_truncated++;
			continue;
		}
		/* Compact: pkts[k] takes packet i's metadata; the buffers
		 * move with them so that pkts[k].buf holds its bytes. */
		if (k != i) {
			struct homa_dp_pkt t = pkts[k];

			pkts[k] = pkts[i];
			pkts[i] = t;
		}
		pkts[k].len = msgs[i].msg_len;
		pkts[k].priority = udp_read_tos(m);
		k++;
	}
	*kept = k;
	return r;
}

/* udp_recv - homa_dp_recv for UDP (contract in homa_datapath.h). */
static int udp_recv(struct homa_dp *dp, struct homa_dp_pkt *pkts, int n)
{
	int got = 0;

	for (int tries = 0; got < n && tries < UDP_RECV_RETRIES;) {
		int k = n - got < HOMA_DP_BATCH ? n - got : HOMA_DP_BATCH;
		int kept;
		int r = udp_recv_chunk(dp, pkts + got, k, &kept);

		if (r == -EINTR || r == -ECONNREFUSED || r == -EHOSTUNREACH ||
		    r == -ENETUNREACH || r == -EHOSTDOWN) {
			tries++; /* a reported ICMP error: read on */
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
	dp->counters.packets_received += (uint64_t)got;
	return got;
}

/* udp_close - homa_dp_close for UDP. */
static void udp_close(struct homa_dp *dp)
{
	if (dp->fd >= 0)
		close(dp->fd);
	free(dp);
}

static const struct homa_dp_ops udp_ops = {
	.name = "udp",
	.send = udp_send,
	.recv = udp_recv,
	.close = udp_close,
};
