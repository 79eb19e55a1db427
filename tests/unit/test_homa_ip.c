/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of the raw IP datapath (src/io/homa_ip.c and its dispatch in
 * src/io/homa_datapath.c), in code order, named <function>__<case>.
 *
 * The test links the datapath (homa_io); what it sees of homa_ip.c's
 * inside is in homa_ip.h.  The tests use real raw sockets of protocol 146
 * on loopback (127.0.0.1 and ::1), which needs CAP_NET_RAW: without it
 * those tests are skipped with a printed reason (the program then exits
 * 77, a skip for CTest; a failure with HOMA_TEST_REQUIRE_RAW=1), and the
 * EPERM test runs as it is.  As root the EPERM test drops its
 * privileges in a child process.
 *
 * Other programs on the host may be sending protocol 146 at the same time:
 * the observers (unfiltered raw sockets) count only the packets of the
 * test's own ports.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "dp_test_util.h"
#include "homa_addr.h"
#include "homa_datapath.h"
#include "homa_dpshared.h"
#include "homa_ip.h"

/* Space for one received packet in most tests. */
#define CAP 2048

/* raw_allowed - whether this process may create a raw protocol 146 socket. */
static bool raw_allowed(void)
{
	int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPDP_PROTO);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Tests skipped in this run: main then exits 77 (CTest: skipped). */
static int skipped;

/* Skips the calling test (with the reason) when raw sockets are denied;
 * fails it instead when HOMA_TEST_REQUIRE_RAW=1 (CI sets it). */
#define REQUIRE_RAW() do {                                                \
		if (!raw_allowed()) {                                     \
			const char *r_ = getenv("HOMA_TEST_REQUIRE_RAW"); \
			if (r_ && strcmp(r_, "1") == 0)                   \
				fail_msg("raw IP sockets need CAP_NET_RAW"\
					 " (HOMA_TEST_REQUIRE_RAW=1)");   \
			print_message("skipped: raw IP sockets need "     \
				      "CAP_NET_RAW (run as root)\n");     \
			skipped++;                                        \
			skip();                                           \
		}                                                         \
	} while (0)

/* open_exact - a raw IP datapath on a free exact port near
 * dp_dp_test_port(k). */
static struct homa_dp *open_exact(int family, int k)
{
	return dp_open_exact(homa_ip_open, family, k);
}

/* open_client - a raw IP datapath on a client port; asserts success. */
static struct homa_dp *open_client(int family)
{
	struct homa_dp *dp = NULL;

	assert_int_equal(homa_ip_open(family, 0, &dp), 0);
	assert_non_null(dp);
	return dp;
}

/* udp_bind_try - bind a fresh UDP socket of family to port (0: any).
 * Returns the socket, or -errno of bind. */
static int udp_bind_try(int family, uint16_t port)
{
	union sockaddr_in_union a;
	int on = 1;
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	if (family == AF_INET6)
		assert_int_equal(setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY,
					    &on, sizeof(on)), 0);
	a = homa_dp_addr_any(family, port);
	if (bind(fd, &a.sa, homa_dp_addr_len(family)) != 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/*
 * fill_pkt - write a Homa-like packet of len (>= 4) bytes: sport, dport,
 * then a pattern that depends on seed and the position.
 */
static void fill_pkt(uint8_t *buf, size_t len, uint16_t sport, uint16_t dport,
		     uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)((seed * 2654435761u + i * 97) >> 7);
	buf[0] = (uint8_t)(sport >> 8);
	buf[1] = (uint8_t)sport;
	buf[2] = (uint8_t)(dport >> 8);
	buf[3] = (uint8_t)dport;
}

/* queued_packets - read and count, without the datapath, what the kernel
 * queued on dp's socket, after waiting ms for late arrivals. */
static int queued_packets(struct homa_dp *dp, int ms)
{
	uint8_t buf[CAP];
	int n = 0;

	usleep((useconds_t)ms * 1000);
	while (recv(homa_dp_fd(dp), buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		n++;
	return n;
}

/* An unfiltered raw socket of protocol 146: sees every such packet. */
static int observer(int family)
{
	int on = 1, big = 16 << 20;
	int fd = socket(family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
			IPDP_PROTO);

	assert_true(fd >= 0);
	/* Room for what other programs send meanwhile (root may force). */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	if (family == AF_INET6)
		assert_int_equal(setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS,
					    &on, sizeof(on)), 0);
	return fd;
}

/* One packet as an observer saw it. */
struct seen {
	uint8_t payload[CAP];   /* the IP payload (the Homa packet) */
	size_t len;             /* its bytes */
	uint8_t tos;            /* IPv4 TOS byte or IPv6 traffic class */
	uint8_t ihl;            /* IPv4 header bytes (0 for IPv6) */
	uint8_t proto;          /* IPv4 protocol field (0 for IPv6) */
};

/*
 * observe - read from observer fd (of family) the next packet whose Homa
 * ports are sport -> dport, waiting up to 2 s.  Returns true when found.
 */
static bool observe(int fd, int family, uint16_t sport, uint16_t dport,
		    struct seen *s)
{
	for (int spins = 0; spins < 200; spins++) {
		uint8_t buf[CAP + 60];
		char cbuf[CMSG_SPACE(sizeof(int))]
			__attribute__((aligned(sizeof(size_t))));
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
				    .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf) };
		ssize_t r = recvmsg(fd, &m, MSG_DONTWAIT);
		size_t off = 0;

		if (r < 0) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			(void)poll(&p, 1, 10);
			continue;
		}
		memset(s, 0, sizeof(*s));
		if (family == AF_INET) {
			off = (size_t)(buf[0] & 15) * 4;
			s->ihl = (uint8_t)off;
			s->tos = buf[1];
			s->proto = buf[9];
		} else {
			struct cmsghdr *c = CMSG_FIRSTHDR(&m);

			if (c && c->cmsg_level == IPPROTO_IPV6 &&
			    c->cmsg_type == IPV6_TCLASS) {
				int tc;

				memcpy(&tc, CMSG_DATA(c), sizeof(tc));
				s->tos = (uint8_t)tc;
			}
		}
		if ((size_t)r < off + 4 ||
		    (buf[off] << 8 | buf[off + 1]) != sport ||
		    (buf[off + 2] << 8 | buf[off + 3]) != dport)
			continue;
		s->len = (size_t)r - off;
		memcpy(s->payload, buf + off, s->len);
		return true;
	}
	return false;
}

/* ---- homa_dp_open ---- */

static void homa_dp_open__ip(void **state)
{
	struct homa_dp *dp = (struct homa_dp *)1;

	(void)state;
	REQUIRE_RAW();
	assert_int_equal(homa_dp_open(HOMA_DP_IP, AF_INET6, 0, NULL, &dp), 0);
	assert_non_null(dp);
	assert_string_equal(dp->ops->name, "ip");
	assert_int_equal(dp->family, AF_INET6);
	assert_true(homa_dp_port(dp) >= HOMA_DP_CLIENT_PORT_MIN);
	homa_dp_close(dp);
}

/* ---- homa_ip_open ---- */

static void homa_ip_open__bad_family(void **state)
{
	struct homa_dp *dp = (struct homa_dp *)1;

	(void)state;
	assert_int_equal(homa_ip_open(AF_UNIX, 0, &dp), -EAFNOSUPPORT);
	assert_null(dp);
}

/*
 * drop_privileges - in a child of a root process: become nobody, which
 * clears every capability (nothing to do when CAP_NET_RAW is already
 * missing).  Returns false when it did not work.
 */
static bool drop_privileges(void)
{
	if (geteuid() != 0 || !raw_allowed())
		return true;
	if (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
	    setuid(65534) != 0)
		return false;
	return !raw_allowed();
}

/*
 * eperm_child - the body of the EPERM test, in a child whose stderr is
 * the pipe: both families fail with -EPERM, directly and through
 * homa_dp_open.  Returns the exit status (0 = as expected).
 */
static int eperm_child(void)
{
	struct homa_dp *dp = (struct homa_dp *)1;

	if (!drop_privileges())
		return 10;
	homa_ip_forget_warning(); /* as in a fresh process */
	if (homa_ip_open(AF_INET, 0, &dp) != -EPERM || dp != NULL)
		return 11;
	if (homa_ip_open(AF_INET6, 4000, &dp) != -EPERM || dp != NULL)
		return 12;
	if (homa_dp_open(HOMA_DP_IP, AF_INET, 0, NULL, &dp) != -EPERM || dp)
		return 13;
	/* Nothing was reserved on the way: the port is still free. */
	if (homa_udp_open(AF_INET6, 0, &dp) != 0)
		return 14;
	homa_dp_close(dp);
	return 0;
}

static void homa_ip_open__eperm_without_cap_net_raw(void **state)
{
	int fds[2], status = -1;
	char out[1024];
	size_t len = 0;
	const char *p;
	int count = 0;
	pid_t pid;

	(void)state;
	if (raw_allowed() && geteuid() != 0) {
		print_message("skipped: CAP_NET_RAW without root (file "
			      "capabilities?): cannot drop it here\n");
		skip();
	}
	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], STDERR_FILENO);
		_exit(eperm_child());
	}
	close(fds[1]);
	for (;;) {
		ssize_t r = read(fds[0], out + len, sizeof(out) - 1 - len);

		if (r <= 0)
			break;
		len += (size_t)r;
	}
	out[len] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* One message (three failures), saying what is needed. */
	for (p = out; (p = strstr(p, "libhoma:")) != NULL; p++)
		count++;
	assert_int_equal(count, 1);
	assert_non_null(strstr(out, "HOMA_TRANSPORT=ip"));
	assert_non_null(strstr(out, "CAP_NET_RAW"));
}

static void homa_ip_open__nonblocking_cloexec(void **state)
{
	struct homa_dp *dp;

	(void)state;
	REQUIRE_RAW();
	dp = open_client(AF_INET);
	assert_true(fcntl(homa_dp_fd(dp), F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(homa_dp_fd(dp), F_GETFD) & FD_CLOEXEC);
	homa_dp_close(dp);
}

static void homa_ip_open__client_ports_distinct_and_reserved(void **state)
{
	struct homa_dp *dps[20];
	uint16_t ports[20];

	(void)state;
	REQUIRE_RAW();
	for (int i = 0; i < 20; i++) {
		int family = i % 4 == 3 ? AF_INET6 : AF_INET;

		dps[i] = open_client(family);
		ports[i] = homa_dp_port(dps[i]);
		assert_int_equal(dps[i]->family, family);
		assert_true(ports[i] >= HOMA_DP_CLIENT_PORT_MIN);
		for (int j = 0; j < i; j++)
			if (dps[j]->family == family)
				assert_int_not_equal(ports[i], ports[j]);
		/* The kernel holds the port for the datapath. */
		assert_int_equal(udp_bind_try(family, ports[i]),
				 -EADDRINUSE);
	}
	for (int i = 0; i < 20; i++) {
		int family = dps[i]->family, fd;

		homa_dp_close(dps[i]);
		/* ... and frees it when the datapath closes. */
		fd = udp_bind_try(family, ports[i]);
		assert_true(fd >= 0);
		close(fd);
	}
}

/* port_in_use_case - exact ports of family: taken ports are refused by
 * both transports, freed ports can be taken again. */
static void port_in_use_case(int family, int k)
{
	struct homa_dp *dp = open_exact(family, k), *dp2 = (void *)1;
	uint16_t port = homa_dp_port(dp);
	int fd;

	assert_true(port >= 20000 && port < 32768);
	assert_int_equal(homa_ip_open(family, port, &dp2), -EADDRINUSE);
	assert_null(dp2);
	assert_int_equal(homa_udp_open(family, port, &dp2), -EADDRINUSE);
	homa_dp_close(dp);
	assert_int_equal(homa_ip_open(family, port, &dp), 0);
	homa_dp_close(dp);

	/* A port held by the UDP datapath, or any UDP socket, is taken. */
	assert_int_equal(homa_udp_open(family, port, &dp2), 0);
	assert_int_equal(homa_ip_open(family, port, &dp), -EADDRINUSE);
	homa_dp_close(dp2);
	fd = udp_bind_try(family, 0);
	assert_true(fd >= 0);
	assert_int_equal(homa_ip_open(family, dp_fd_port(fd), &dp),
			 -EADDRINUSE);
	close(fd);
}

static void homa_ip_open__port_in_use_ipv4(void **state)
{
	(void)state;
	REQUIRE_RAW();
	port_in_use_case(AF_INET, 10);
}

static void homa_ip_open__port_in_use_ipv6(void **state)
{
	(void)state;
	REQUIRE_RAW();
	port_in_use_case(AF_INET6, 20);
}

/* ---- ICMP errors ---- */

/*
 * unreachable_case - a client's RESEND (sender id id) to a Homa port of
 * family that nobody holds: a datapath of the host answers it with ICMP
 * port unreachable quoting the packet, and the client's datapath reads
 * from that real quote the destination (address and Homa port) and the
 * sender id.  The answering datapath drops the error, which quotes
 * another source port than its own.
 */
static void unreachable_case(int family, uint64_t id)
{
	struct homa_dp *gone = open_exact(family, 60), *cli, *answerer;
	uint16_t dead = homa_dp_port(gone);
	uint8_t pkt[37], rx[CAP]; /* pkt: a RESEND's length */
	struct homa_dp_pkt out = { .buf = pkt, .len = sizeof(pkt) };
	union sockaddr_in_union got;
	uint64_t got_id = 0;
	bool taken = false;

	homa_dp_close(gone);
	cli = open_client(family);
	answerer = open_client(family);
	memset(pkt, 0, sizeof(pkt));
	fill_pkt(pkt, 4, homa_dp_port(cli), dead, 0);
	pkt[IPDP_TYPE_OFFSET] = IPDP_TYPE_RESEND;
	pkt[12] = 0x50;
	for (int i = 0; i < 8; i++)
		pkt[20 + i] = (uint8_t)(id >> (56 - 8 * i));
	out.addr = homa_dp_addr_loopback(family, dead);
	assert_int_equal(homa_dp_send(cli, &out, 1), 1);
	/* Each round has progress to wait for: the RESEND to read (and
	 * answer), or the error. */
	for (int rounds = 0; !taken && rounds < 50; rounds++) {
		struct pollfd p[2] = {
			{ .fd = homa_dp_fd(answerer), .events = POLLIN },
			{ .fd = homa_dp_fd(cli), .events = POLLIN } };
		struct homa_dp_pkt in = { .buf = rx, .len = sizeof(rx) };

		assert_int_equal(poll(p, 2, 2000) > 0, 1);
		if (p[0].revents) {
			assert_int_equal(homa_dp_recv(answerer, &in, 1), 0);
			homa_dp_errors(answerer);
		}
		if (p[1].revents) {
			in.len = sizeof(rx);
			assert_int_equal(homa_dp_recv(cli, &in, 1), 0);
			homa_dp_errors(cli);
		}
		taken = homa_dp_take_unreachable(cli, &got, &got_id);
	}
	assert_true(taken);
	assert_true(homa_addr_equal(&got, &out.addr));
	assert_int_equal(got_id, id);
	assert_int_equal(cli->counters.unreach_no_id, 0);
	assert_false(homa_dp_take_unreachable(answerer, &got, &got_id));
	homa_dp_close(answerer);
	homa_dp_close(cli);
}

static void homa_dp_errors__port_unreachable_quotes_id_ipv4(void **state)
{
	(void)state;
	REQUIRE_RAW();
	unreachable_case(AF_INET, 0x0123456789abcdeeull);
}

static void homa_dp_errors__port_unreachable_quotes_id_ipv6(void **state)
{
	(void)state;
	REQUIRE_RAW();
	unreachable_case(AF_INET6, 0xfedcba9876543210ull);
}

/* ee_of - an ICMP (ICMPv6 when v6) error of type and code. */
static struct sock_extended_err ee_of(bool v6, uint8_t type, uint8_t code)
{
	struct sock_extended_err ee;

	memset(&ee, 0, sizeof(ee));
	ee.ee_errno = v6 ? EACCES : ECONNREFUSED;
	ee.ee_origin = v6 ? SO_EE_ORIGIN_ICMP6 : SO_EE_ORIGIN_ICMP;
	ee.ee_type = type;
	ee.ee_code = code;
	return ee;
}

/*
 * Over raw IP only a port unreachable (the answer of the host's libhoma
 * datapaths for a port nobody holds) says that nobody listens: Linux
 * answers protocol unreachable (ICMPv6: unrecognized next header) also
 * when the one raw socket of protocol 146 on the host has a full receive
 * buffer (a live server behind its input; the raw IP soak's clients of a
 * server that never went away failed 110 RPCs each with ENOTCONN).  The
 * UDP datapath keeps both kinds.
 */
static void homa_dp_unreach_kind__protocol_unreachable_not_over_ip(
	void **state)
{
	struct homa_dp ip, udp;
	struct sock_extended_err port4 = ee_of(false, 3, 3),
				 prot4 = ee_of(false, 3, 2),
				 port6 = ee_of(true, 1, 4),
				 prot6 = ee_of(true, 4, 1),
				 host4 = ee_of(false, 3, 1);

	(void)state;
	memset(&ip, 0, sizeof(ip));
	memset(&udp, 0, sizeof(udp));
	REQUIRE_RAW();
	{
		struct homa_dp *dp = open_client(AF_INET);

		ip.port_unreach_only = dp->port_unreach_only;
		homa_dp_close(dp);
	}
	assert_true(homa_dp_unreach_kind(&ip, &port4));
	assert_true(homa_dp_unreach_kind(&ip, &port6));
	assert_false(homa_dp_unreach_kind(&ip, &prot4));
	assert_false(homa_dp_unreach_kind(&ip, &prot6));
	assert_false(homa_dp_unreach_kind(&ip, &host4));
	assert_true(homa_dp_unreach_kind(&udp, &port4));
	assert_true(homa_dp_unreach_kind(&udp, &prot4));
	assert_true(homa_dp_unreach_kind(&udp, &port6));
	assert_true(homa_dp_unreach_kind(&udp, &prot6));
	assert_false(homa_dp_unreach_kind(&udp, &host4));
}

/* ---- ipdp_send / ipdp_recv ---- */

static void homa_ip_recv__nothing_waiting(void **state)
{
	struct homa_dp *dp;
	uint8_t buf[64];
	struct homa_dp_pkt p = { .buf = buf, .len = sizeof(buf) };

	(void)state;
	REQUIRE_RAW();
	dp = open_client(AF_INET);
	assert_int_equal(homa_dp_recv(dp, &p, 1), 0);
	homa_dp_close(dp);
}

/*
 * send_batch_case - send n packets (sizes 28.., priority i % 8) from a
 * client datapath to a server datapath of family; check that each arrives
 * whole, in order, from the client's address and port, with its priority;
 * that on the wire (seen by an observer) each is exactly the IP payload of
 * a protocol 146 packet with TOS / traffic class priority << 5; and that
 * the sender does not get its own packets back.
 */
static void send_batch_case(int family, int n)
{
	struct homa_dp *srv = open_exact(family, 30), *cli = open_client(family);
	struct homa_dp_pkt *out = calloc((size_t)n, sizeof(*out));
	struct homa_dp_pkt *in = calloc((size_t)n, sizeof(*in));
	uint8_t *tx = malloc((size_t)n * CAP), *rx = malloc((size_t)n * CAP);
	union sockaddr_in_union lo = homa_dp_addr_loopback(family, 0);
	struct seen *w = malloc(sizeof(*w));
	int obs = observer(family);

	for (int i = 0; i < n; i++) {
		out[i].buf = tx + (size_t)i * CAP;
		out[i].len = 28 + ((size_t)i * 37) % 1473; /* 28..1500 */
		fill_pkt(out[i].buf, out[i].len, homa_dp_port(cli),
			 homa_dp_port(srv), (uint32_t)i);
		out[i].addr = homa_dp_addr_loopback(family, homa_dp_port(srv));
		out[i].priority = (uint8_t)(i % 8);
	}
	out[n - 1].len = 1500;
	fill_pkt(out[n - 1].buf, 1500, homa_dp_port(cli), homa_dp_port(srv),
		 (uint32_t)(n - 1));
	assert_int_equal(homa_dp_send(cli, out, n), n);
	assert_int_equal(cli->counters.packets_sent, n);
	assert_int_equal(cli->counters.send_dropped, 0);
	assert_int_equal(dp_recv_all(srv, in, n, rx, CAP), n);
	for (int i = 0; i < n; i++) {
		assert_int_equal(in[i].len, out[i].len);
		assert_memory_equal(in[i].buf, out[i].buf, in[i].len);
		assert_int_equal(in[i].addr.sa.sa_family, family);
		assert_int_equal(homa_addr_port(&in[i].addr),
				 homa_dp_port(cli));
		if (family == AF_INET6)
			assert_memory_equal(&in[i].addr.in6.sin6_addr,
					    &lo.in6.sin6_addr, 16);
		else
			assert_int_equal(in[i].addr.in4.sin_addr.s_addr,
					 lo.in4.sin_addr.s_addr);
		assert_int_equal(in[i].priority, i % 8);
	}
	assert_int_equal(srv->counters.packets_received, n);
	assert_int_equal(srv->counters.recv_truncated, 0);
	/* The wire: the bare Homa packet over IP protocol 146. */
	for (int i = 0; i < n; i++) {
		assert_true(observe(obs, family, homa_dp_port(cli),
				    homa_dp_port(srv), w));
		assert_int_equal(w->len, out[i].len);
		assert_memory_equal(w->payload, out[i].buf, w->len);
		assert_int_equal(w->tos, (i % 8) << 5);
		if (family == AF_INET) {
			assert_int_equal(w->proto, IPDP_PROTO);
			assert_int_equal(w->ihl, 20);
		}
	}
	/* Loopback brought the packets in again: not to the sender. */
	assert_int_equal(queued_packets(cli, 50), 0);
	close(obs);
	homa_dp_close(cli);
	homa_dp_close(srv);
	free(w);
	free(out);
	free(in);
	free(tx);
	free(rx);
}

static void homa_ip_send__batch_ipv4_priorities(void **state)
{
	(void)state;
	REQUIRE_RAW();
	send_batch_case(AF_INET, HOMA_DP_BATCH + 8);
}

static void homa_ip_send__batch_ipv6_priorities(void **state)
{
	(void)state;
	REQUIRE_RAW();
	send_batch_case(AF_INET6, HOMA_DP_BATCH + 8);
}

static void homa_ip_send__refused_packet_dropped(void **state)
{
	struct homa_dp *srv, *cli;
	uint8_t a[40], b[40], c[40], rx[2][64];
	struct homa_dp_pkt out[3] = {
		{ .buf = a, .len = 40 }, { .buf = b, .len = 40 },
		{ .buf = c, .len = 40 } };
	struct homa_dp_pkt in[2];

	(void)state;
	REQUIRE_RAW();
	srv = open_exact(AF_INET, 40);
	cli = open_client(AF_INET);
	fill_pkt(a, 40, homa_dp_port(cli), homa_dp_port(srv), 1);
	fill_pkt(b, 40, homa_dp_port(cli), homa_dp_port(srv), 2);
	fill_pkt(c, 40, homa_dp_port(cli), homa_dp_port(srv), 3);
	out[0].addr = homa_dp_addr_loopback(AF_INET, homa_dp_port(srv));
	/* the wrong family */
	out[1].addr = homa_dp_addr_loopback(AF_INET6, homa_dp_port(srv));
	out[2].addr = out[0].addr;
	assert_int_equal(homa_dp_send(cli, out, 3), 2);
	assert_int_equal(cli->counters.send_dropped, 1);
	assert_int_equal(dp_recv_all(srv, in, 2, &rx[0][0], 64), 2);
	assert_memory_equal(in[0].buf, a, 40);
	assert_memory_equal(in[1].buf, c, 40);
	homa_dp_close(cli);
	homa_dp_close(srv);
}

/*
 * raw_send_with_options - send the len bytes at buf to 127.0.0.1 over
 * protocol 146 from a plain raw socket whose packets carry 4 bytes of IP
 * options (an IPv4 header of 24 bytes).
 */
static void raw_send_with_options(const uint8_t *buf, size_t len)
{
	const uint8_t opts[4] = { 1, 1, 1, 0 }; /* NOP NOP NOP END */
	union sockaddr_in_union to = homa_dp_addr_loopback(AF_INET, 0);
	int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPDP_PROTO);

	assert_true(fd >= 0);
	assert_int_equal(setsockopt(fd, IPPROTO_IP, IP_OPTIONS, opts,
				    sizeof(opts)), 0);
	assert_int_equal(sendto(fd, buf, len, 0, &to.sa, sizeof(to.in4)),
			 (ssize_t)len);
	close(fd);
}

static void homa_ip_recv__ipv4_options_stripped(void **state)
{
	struct homa_dp *srv;
	const size_t cap = 600;
	uint8_t full[601], small[100], rx[2][600];
	struct homa_dp_pkt in[2];
	struct seen *w = malloc(sizeof(*w));
	int obs;

	(void)state;
	REQUIRE_RAW();
	srv = open_exact(AF_INET, 50);
	obs = observer(AF_INET);
	/* Exactly the space: the last bytes come through the tail. */
	fill_pkt(full, cap, 7, homa_dp_port(srv), 11);
	raw_send_with_options(full, cap);
	assert_true(observe(obs, AF_INET, 7, homa_dp_port(srv), w));
	assert_int_equal(w->ihl, 24); /* the options were really sent */
	fill_pkt(small, sizeof(small), 7, homa_dp_port(srv), 12);
	raw_send_with_options(small, sizeof(small));
	assert_int_equal(dp_recv_all(srv, in, 2, &rx[0][0], cap), 2);
	assert_int_equal(in[0].len, cap);
	assert_memory_equal(in[0].buf, full, cap);
	assert_int_equal(homa_addr_port(&in[0].addr), 7);
	assert_int_equal(in[1].len, sizeof(small));
	assert_memory_equal(in[1].buf, small, sizeof(small));
	/* One byte more than the space: dropped and counted. */
	fill_pkt(full, cap + 1, 7, homa_dp_port(srv), 13);
	raw_send_with_options(full, cap + 1);
	raw_send_with_options(small, sizeof(small));
	assert_int_equal(dp_recv_all(srv, in, 1, &rx[0][0], cap), 1);
	assert_int_equal(in[0].len, sizeof(small));
	assert_int_equal(srv->counters.recv_truncated, 1);
	close(obs);
	homa_dp_close(srv);
	free(w);
}

/* truncated_case - packets larger than the space are dropped and counted,
 * with (big) or without (cap + 1) MSG_TRUNC. */
static void truncated_case(int family)
{
	struct homa_dp *srv = open_exact(family, 60), *cli = open_client(family);
	uint8_t big[2000], mid[101], small[50], rx[2][100];
	struct homa_dp_pkt out[3] = { { .buf = big, .len = sizeof(big) },
				      { .buf = mid, .len = sizeof(mid) },
				      { .buf = small, .len = sizeof(small) } };
	struct homa_dp_pkt in[2];

	fill_pkt(big, sizeof(big), homa_dp_port(cli), homa_dp_port(srv), 1);
	fill_pkt(mid, sizeof(mid), homa_dp_port(cli), homa_dp_port(srv), 2);
	fill_pkt(small, sizeof(small), homa_dp_port(cli), homa_dp_port(srv),
		 3);
	out[0].addr = out[1].addr = out[2].addr =
		homa_dp_addr_loopback(family, homa_dp_port(srv));
	assert_int_equal(homa_dp_send(cli, out, 3), 3);
	assert_int_equal(dp_recv_all(srv, in, 1, &rx[0][0], 100), 1);
	assert_int_equal(in[0].len, sizeof(small));
	assert_memory_equal(in[0].buf, small, sizeof(small));
	assert_int_equal(srv->counters.recv_truncated, 2);
	assert_int_equal(srv->counters.packets_received, 1);
	homa_dp_close(cli);
	homa_dp_close(srv);
}

static void homa_ip_recv__truncated_dropped_ipv4(void **state)
{
	(void)state;
	REQUIRE_RAW();
	truncated_case(AF_INET);
}

static void homa_ip_recv__truncated_dropped_ipv6(void **state)
{
	(void)state;
	REQUIRE_RAW();
	truncated_case(AF_INET6);
}

/* ---- ipdp_filter_port: what reaches each socket ---- */

/* Packets of the isolation tests. */
#define ISO_MINE 30     /* to the first receiver */
#define ISO_OTHER 20    /* to the second receiver */
#define ISO_NOBODY 10   /* to a port nobody has */
#define ISO_SHORT 5     /* to the first receiver, under 28 bytes */

/* Kinds of packet the isolation tests send. */
enum iso_kind { ISO_TO_MINE, ISO_TO_OTHER, ISO_TO_NOBODY, ISO_TO_MINE_SHORT };

/* Packets sent in all. */
#define ISO_TOTAL (ISO_MINE + ISO_OTHER + ISO_NOBODY + ISO_SHORT)

/* iso_kind_of - the kind of the i-th packet in order of kinds. */
static enum iso_kind iso_kind_of(int i)
{
	if (i < ISO_MINE)
		return ISO_TO_MINE;
	if (i < ISO_MINE + ISO_OTHER)
		return ISO_TO_OTHER;
	if (i < ISO_MINE + ISO_OTHER + ISO_NOBODY)
		return ISO_TO_NOBODY;
	return ISO_TO_MINE_SHORT;
}

/*
 * iso_send - from sender, ISO_MINE 100-byte packets to port dports[0],
 * ISO_OTHER to dports[1], ISO_NOBODY to dports[2] and ISO_SHORT 20-byte
 * packets to dports[0], interleaved (packet i is the (7i mod ISO_TOTAL)-th
 * in order of kinds; 7 and ISO_TOTAL are coprime).
 */
static void iso_send(struct homa_dp *sender, int family,
		     const uint16_t dports[3])
{
	struct homa_dp_pkt out[ISO_TOTAL];
	static uint8_t tx[ISO_TOTAL][100];

	for (int i = 0; i < ISO_TOTAL; i++) {
		enum iso_kind kind = iso_kind_of((i * 7) % ISO_TOTAL);
		uint16_t dport = dports[kind == ISO_TO_MINE_SHORT ? 0 : kind];

		out[i].buf = tx[i];
		out[i].len = kind == ISO_TO_MINE_SHORT ? 20 : 100;
		fill_pkt(tx[i], out[i].len, homa_dp_port(sender), dport,
			 (uint32_t)i);
		out[i].addr = homa_dp_addr_loopback(family, dport);
		out[i].priority = 0;
	}
	assert_int_equal(homa_dp_send(sender, out, ISO_TOTAL), ISO_TOTAL);
}

/*
 * iso_observe - count the packets from sport that unfiltered observer obs
 * (of family) sees: counts[0] 100-byte ones to dports[0], counts[1] to
 * dports[1], counts[2] to dports[2], counts[3] short ones to dports[0];
 * until ISO_TOTAL came or 2 s passed without one.
 */
static void iso_observe(int obs, int family, uint16_t sport,
			const uint16_t dports[3], int counts[4])
{
	int n = 0;

	memset(counts, 0, 4 * sizeof(counts[0]));
	for (int spins = 0; n < ISO_TOTAL && spins < 200; spins++) {
		uint8_t buf[CAP + 60];
		ssize_t r = recv(obs, buf, sizeof(buf), MSG_DONTWAIT);
		size_t off;
		uint16_t sp, dp;

		if (r < 0) {
			struct pollfd p = { .fd = obs, .events = POLLIN };

			(void)poll(&p, 1, 10);
			continue;
		}
		off = family == AF_INET ? (size_t)(buf[0] & 15) * 4 : 0;
		if ((size_t)r < off + 4)
			continue;
		sp = (uint16_t)(buf[off] << 8 | buf[off + 1]);
		dp = (uint16_t)(buf[off + 2] << 8 | buf[off + 3]);
		if (sp != sport)
			continue;
		for (int d = 0; d < 3; d++) {
			if (dp != dports[d])
				continue;
			if (d == 0 && (size_t)r - off == 20)
				counts[3]++;
			else
				counts[d]++;
			n++;
			spins = 0;
		}
	}
}

/*
 * iso_receive - receive on dp (port mine, from sender port sport) until
 * want packets came, then wait for stragglers.  Returns 0 when exactly
 * want packets came, all to mine from sport and none dropped in user
 * space, else a nonzero code.  Never asserts (runs in a child too).
 */
static int iso_receive(struct homa_dp *dp, uint16_t sport, int want)
{
	static uint8_t space[HOMA_DP_BATCH][CAP];
	int got = 0;

	for (int spins = 0; spins < 300; spins++) {
		struct homa_dp_pkt b[HOMA_DP_BATCH];
		int n;

		for (int i = 0; i < HOMA_DP_BATCH; i++) {
			b[i].buf = space[i];
			b[i].len = CAP;
		}
		n = homa_dp_recv(dp, b, HOMA_DP_BATCH);
		if (n < 0)
			return 1;
		for (int i = 0; i < n; i++) {
			if (b[i].len != 100 ||
			    homa_addr_port(&b[i].addr) != sport ||
			    (b[i].buf[2] << 8 | b[i].buf[3]) != dp->port)
				return 2;
		}
		got += n;
		if (got >= want && spins >= 20)
			break; /* 200 ms after the last expected one */
		if (n == 0)
			usleep(10000);
	}
	if (got != want)
		return 3;
	/* The user-space path did not filter anything out: every packet
	 * the kernel queued was handed over. */
	if (dp->counters.recv_truncated != 0 || dp->counters.recv_errors)
		return 4;
	if ((int)dp->counters.packets_received != want)
		return 5;
	return 0;
}

/*
 * isolation_case - two receivers on ports mine and other, the second in a
 * child process when fork_other; a sender sends them, a port nobody has,
 * and too-short packets to mine, interleaved.  Each receiver gets exactly
 * its own packets, while an unfiltered observer sees every one of them
 * arrive at the host: the datapath's recv does no port check (and counts
 * no drop), so the kernel filter is what kept the others out.  The sender
 * gets none of its own packets back.
 */
static void isolation_case(int family, bool fork_other)
{
	struct homa_dp *mine = open_exact(family, 70), *other = NULL;
	struct homa_dp *sender = open_client(family);
	int nobody_fd = udp_bind_try(family, 0); /* no Homa socket can
						  * take this port */
	int obs = observer(family), status = -1, counts[4];
	uint16_t dports[3];
	int ready[2];
	pid_t pid = -1;

	assert_true(nobody_fd >= 0);
	dports[0] = homa_dp_port(mine);
	dports[2] = dp_fd_port(nobody_fd);
	if (fork_other) {
		assert_int_equal(pipe(ready), 0);
		fflush(NULL);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct homa_dp *dp = NULL;
			uint16_t p = 0, sport = homa_dp_port(sender);
			int rc;

			/* The parent's datapaths are the parent's: close
			 * this process's copies (their descriptors and
			 * memory), so that the child holds only its own
			 * (and a leak checker finds nothing at _exit). */
			homa_dp_close(mine);
			homa_dp_close(sender);
			close(ready[0]);
			for (int i = 0; i < 50 && !dp; i++)
				if (homa_ip_open(family,
						 dp_test_port(80 + i * 131),
						 &dp) != 0)
					dp = NULL;
			if (dp)
				p = homa_dp_port(dp);
			if (write(ready[1], &p, sizeof(p)) != sizeof(p) || !dp) {
				homa_dp_close(dp);
				_exit(9);
			}
			rc = iso_receive(dp, sport, ISO_OTHER);
			homa_dp_close(dp);
			_exit(rc);
		}
		close(ready[1]);
		assert_int_equal(read(ready[0], &dports[1],
				      sizeof(dports[1])),
				 sizeof(dports[1]));
		close(ready[0]);
		assert_int_not_equal(dports[1], 0);
	} else {
		other = open_exact(family, 80);
		dports[1] = homa_dp_port(other);
	}
	iso_send(sender, family, dports);

	assert_int_equal(iso_receive(mine, homa_dp_port(sender), ISO_MINE),
			 0);
	assert_int_equal(queued_packets(mine, 0), 0);
	if (fork_other) {
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	} else {
		assert_int_equal(iso_receive(other, homa_dp_port(sender),
					     ISO_OTHER), 0);
	}
	assert_int_equal(queued_packets(sender, 0), 0);
	/* Every packet was on the wire and reached this host. */
	iso_observe(obs, family, homa_dp_port(sender), dports, counts);
	assert_int_equal(counts[0], ISO_MINE);
	assert_int_equal(counts[1], ISO_OTHER);
	assert_int_equal(counts[2], ISO_NOBODY);
	assert_int_equal(counts[3], ISO_SHORT);
	close(obs);
	close(nobody_fd);
	homa_dp_close(other);
	homa_dp_close(sender);
	homa_dp_close(mine);
}

static void homa_ip_filter__isolates_processes_ipv4(void **state)
{
	(void)state;
	REQUIRE_RAW();
	isolation_case(AF_INET, true);
}

static void homa_ip_filter__isolates_sockets_ipv6(void **state)
{
	(void)state;
	REQUIRE_RAW();
	isolation_case(AF_INET6, false);
}

static void homa_ip_filter__isolates_processes_ipv6(void **state)
{
	(void)state;
	REQUIRE_RAW();
	isolation_case(AF_INET6, true);
}

/* strip_case - scatter an IPv4 datagram with ihl_words header words and
 * homa_len bytes after the header over (20-byte header, cap-byte buffer,
 * 40-byte tail) as recvmsg does, decode it, and check the result. */
static void strip_case(size_t ihl_words, size_t homa_len, size_t cap,
		       bool want_ok)
{
	uint8_t d[IPDP_IP4_HDR_MAX + CAP], hdr[IPDP_IP4_HDR_MIN];
	uint8_t tail[IPDP_IP4_HDR_MAX - IPDP_IP4_HDR_MIN];
	size_t n = ihl_words * 4 + homa_len, at, k, len = 0;
	uint8_t *buf = malloc(cap), tos = 0;

	assert_non_null(buf);
	assert_true(n <= sizeof(d));
	for (size_t i = 0; i < n; i++)
		d[i] = (uint8_t)(i * 13 + 5);
	d[0] = (uint8_t)(0x40 | ihl_words);
	d[1] = 0xa0;
	memcpy(hdr, d, IPDP_IP4_HDR_MIN);
	at = IPDP_IP4_HDR_MIN;
	k = n - at < cap ? n - at : cap;
	memcpy(buf, d + at, k);
	at += k;
	assert_true(n - at <= sizeof(tail));
	memcpy(tail, d + at, n - at);
	assert_int_equal(homa_ip_strip_ip4(hdr, buf, cap, tail, n, &len, &tos),
			 want_ok);
	if (want_ok) {
		assert_int_equal(len, homa_len);
		assert_memory_equal(buf, d + ihl_words * 4, homa_len);
		assert_int_equal(tos, 0xa0);
	}
	free(buf);
}

/* The IPv4 header goes, options and all, wherever the kernel's scatter
 * put the Homa bytes: all in the buffer, partly in the tail, or (a buffer
 * shorter than the options) all in the tail.  A malformed header or a
 * packet larger than the buffer is refused. */
static void homa_ip_strip_ip4__layouts(void **state)
{
	(void)state;
	strip_case(5, 600, CAP, true);        /* no options */
	strip_case(6, 700, CAP, true);        /* 4 bytes of options */
	strip_case(15, 1000, CAP, true);      /* 40 bytes of options */
	strip_case(15, 70, 81, true);         /* 41 in buf, 29 in tail */
	strip_case(15, 81, 81, true);         /* the buffer's size exactly */
	strip_case(5, 82, 81, false);         /* one byte too long */
	strip_case(7, 1, 1, true);            /* options longer than buf */
	strip_case(15, 8, 10, true);          /* all in the tail */
	strip_case(5, 0, 16, true);           /* an empty Homa part */
}

static void homa_ip_strip_ip4__malformed(void **state)
{
	uint8_t hdr[IPDP_IP4_HDR_MIN] = { 0x45 }, buf[64] = { 0 };
	uint8_t tail[40] = { 0 };
	size_t len;
	uint8_t tos;

	(void)state;
	/* Shorter than a header. */
	assert_false(homa_ip_strip_ip4(hdr, buf, sizeof(buf), tail, 19,
				       &len, &tos));
	/* Not version 4. */
	hdr[0] = 0x65;
	assert_false(homa_ip_strip_ip4(hdr, buf, sizeof(buf), tail, 40,
				       &len, &tos));
	/* Header length under 20. */
	hdr[0] = 0x44;
	assert_false(homa_ip_strip_ip4(hdr, buf, sizeof(buf), tail, 40,
				       &len, &tos));
	/* Header length past the datagram's end. */
	hdr[0] = 0x4f;
	assert_false(homa_ip_strip_ip4(hdr, buf, sizeof(buf), tail, 59,
				       &len, &tos));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_dp_open__ip),
		cmocka_unit_test(homa_ip_open__bad_family),
		cmocka_unit_test(homa_ip_open__eperm_without_cap_net_raw),
		cmocka_unit_test(homa_ip_open__nonblocking_cloexec),
		cmocka_unit_test(
			homa_ip_open__client_ports_distinct_and_reserved),
		cmocka_unit_test(homa_ip_open__port_in_use_ipv4),
		cmocka_unit_test(homa_ip_open__port_in_use_ipv6),
		cmocka_unit_test(homa_ip_recv__nothing_waiting),
		cmocka_unit_test(homa_ip_send__batch_ipv4_priorities),
		cmocka_unit_test(homa_ip_send__batch_ipv6_priorities),
		cmocka_unit_test(homa_ip_send__refused_packet_dropped),
		cmocka_unit_test(homa_ip_strip_ip4__layouts),
		cmocka_unit_test(homa_ip_strip_ip4__malformed),
		cmocka_unit_test(homa_ip_recv__ipv4_options_stripped),
		cmocka_unit_test(homa_ip_recv__truncated_dropped_ipv4),
		cmocka_unit_test(homa_ip_recv__truncated_dropped_ipv6),
		cmocka_unit_test(homa_ip_filter__isolates_processes_ipv4),
		cmocka_unit_test(homa_ip_filter__isolates_sockets_ipv6),
		cmocka_unit_test(homa_ip_filter__isolates_processes_ipv6),
		cmocka_unit_test(
			homa_dp_errors__port_unreachable_quotes_id_ipv4),
		cmocka_unit_test(
			homa_dp_errors__port_unreachable_quotes_id_ipv6),
		cmocka_unit_test(
		homa_dp_unreach_kind__protocol_unreachable_not_over_ip),
	};

	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	if (failed == 0 && skipped > 0) {
		printf("%d test(s) skipped: exit status 77 (skipped)\n",
		       skipped);
		return 77;
	}
	return failed;
}
