/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of the UDP datapath (src/io/homa_udp.c and the dispatch in
 * src/io/homa_datapath.c), in code order, named <function>__<case>.
 *
 * The test links the datapath (homa_io); the datapath's state, which
 * some tests look at or change, is in homa_udp.h.  The tests use real UDP
 * sockets on loopback (127.0.0.1 and ::1).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "dp_test_util.h"
#include "homa_addr.h"
#include "homa_datapath.h"
#include "homa_dpshared.h"
#include "homa_udp.h"

/* open_exact - a UDP datapath on a free exact port near dp_dp_test_port(k). */
static struct homa_dp *open_exact(int family, int k)
{
	return dp_open_exact(homa_udp_open, family, k);
}

/* ---- homa_dp_open ---- */

static void homa_dp_open__udp(void **state)
{
	struct homa_dp *dp = NULL;

	(void)state;
	assert_int_equal(homa_dp_open(HOMA_DP_UDP, AF_INET, 0, NULL, &dp), 0);
	assert_non_null(dp);
	assert_string_equal(dp->ops->name, "udp");
	homa_dp_close(dp);
}

static void homa_dp_open__unknown_kind(void **state)
{
	struct homa_dp *dp = (struct homa_dp *)1;

	(void)state;
	assert_int_equal(homa_dp_open((enum homa_dp_kind)7, AF_INET, 0, NULL, &dp),
			 -EPROTONOSUPPORT);
	assert_null(dp);
}

static void homa_udp_open__bad_family(void **state)
{
	struct homa_dp *dp = (struct homa_dp *)1;

	(void)state;
	assert_int_equal(homa_udp_open(AF_UNIX, 0, &dp), -EAFNOSUPPORT);
	assert_null(dp);
}

static void homa_udp_open__client_port_in_range(void **state)
{
	struct homa_dp *dps[20];

	(void)state;
	for (int i = 0; i < 20; i++) {
		assert_int_equal(homa_udp_open(AF_INET, 0, &dps[i]), 0);
		assert_true(homa_dp_port(dps[i]) >= HOMA_DP_CLIENT_PORT_MIN);
		assert_int_equal(dp_fd_port(homa_dp_fd(dps[i])),
				 homa_dp_port(dps[i]));
		assert_int_equal(dps[i]->family, AF_INET);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(homa_dp_port(dps[i]),
					     homa_dp_port(dps[j]));
	}
	for (int i = 0; i < 20; i++)
		homa_dp_close(dps[i]);
}

static void homa_udp_open__exact_port(void **state)
{
	struct homa_dp *dp = open_exact(AF_INET, 0);

	(void)state;
	assert_true(homa_dp_port(dp) >= 20000 && homa_dp_port(dp) < 32768);
	assert_int_equal(dp_fd_port(homa_dp_fd(dp)), homa_dp_port(dp));
	homa_dp_close(dp);
}

static void homa_udp_open__port_in_use(void **state)
{
	struct homa_dp *dp = open_exact(AF_INET, 1), *dp2 = NULL;

	(void)state;
	assert_int_equal(homa_udp_open(AF_INET, homa_dp_port(dp), &dp2),
			 -EADDRINUSE);
	assert_null(dp2);
	/* After close the port is free again. */
	uint16_t port = homa_dp_port(dp);

	homa_dp_close(dp);
	assert_int_equal(homa_udp_open(AF_INET, port, &dp2), 0);
	homa_dp_close(dp2);
}

static void homa_udp_open__nonblocking_cloexec_buffers(void **state)
{
	struct homa_dp *dp;
	int size = 0;
	socklen_t len = sizeof(size);

	(void)state;
	assert_int_equal(homa_udp_open(AF_INET, 0, &dp), 0);
	assert_true(fcntl(homa_dp_fd(dp), F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(homa_dp_fd(dp), F_GETFD) & FD_CLOEXEC);
	assert_int_equal(getsockopt(homa_dp_fd(dp), SOL_SOCKET, SO_RCVBUF,
				    &size, &len), 0);
	assert_true(size > 0);
	homa_dp_close(dp);
}

static void homa_udp_open__ipv6_is_v6only(void **state)
{
	struct homa_dp *dp6 = open_exact(AF_INET6, 2), *dp4 = NULL;
	int on = 0;
	socklen_t len = sizeof(on);

	(void)state;
	assert_int_equal(getsockopt(homa_dp_fd(dp6), IPPROTO_IPV6,
				    IPV6_V6ONLY, &on, &len), 0);
	assert_int_equal(on, 1);
	/* V6ONLY: an IPv4 datapath can take the same port number. */
	assert_int_equal(homa_udp_open(AF_INET, homa_dp_port(dp6), &dp4), 0);
	homa_dp_close(dp4);
	homa_dp_close(dp6);
}

/* ---- udp_send / udp_recv ---- */

static void homa_udp_recv__nothing_waiting(void **state)
{
	struct homa_dp *dp;
	uint8_t buf[64];
	struct homa_dp_pkt p = { .buf = buf, .len = sizeof(buf) };

	(void)state;
	assert_int_equal(homa_udp_open(AF_INET, 0, &dp), 0);
	assert_int_equal(homa_dp_recv(dp, &p, 1), 0);
	homa_dp_close(dp);
}

/*
 * send_batch_case - send n packets (each with its own bytes and priority
 * i % 8) from a client datapath to a server datapath of family and check
 * each arrives whole, from the client's port, with its priority.
 */
static void send_batch_case(int family, int n)
{
	struct homa_dp *srv = open_exact(family, 3), *cli;
	struct homa_dp_pkt *out = calloc((size_t)n, sizeof(*out));
	struct homa_dp_pkt *in = calloc((size_t)n, sizeof(*in));
	const size_t cap = 2048;
	uint8_t *tx = malloc((size_t)n * cap), *rx = malloc((size_t)n * cap);
	int seen[8] = { 0 };

	assert_int_equal(homa_udp_open(family, 0, &cli), 0);
	for (int i = 0; i < n; i++) {
		out[i].buf = tx + (size_t)i * cap;
		out[i].len = 100 + (size_t)i * 13;
		memset(out[i].buf, i, out[i].len);
		out[i].addr = homa_dp_addr_loopback(family, homa_dp_port(srv));
		out[i].priority = (uint8_t)(i % 8);
	}
	assert_int_equal(homa_dp_send(cli, out, n), n);
	assert_int_equal(cli->counters.packets_sent, n);
	assert_int_equal(dp_recv_all(srv, in, n, rx, cap), n);
	for (int i = 0; i < n; i++) {
		int k = in[i].buf[0];

		assert_true(k < n);
		assert_int_equal(in[i].len, out[k].len);
		assert_memory_equal(in[i].buf, out[k].buf, in[i].len);
		assert_int_equal(in[i].addr.sa.sa_family, family);
		assert_int_equal(family == AF_INET6
				 ? ntohs(in[i].addr.in6.sin6_port)
				 : ntohs(in[i].addr.in4.sin_port),
				 homa_dp_port(cli));
		assert_int_equal(in[i].priority, k % 8);
		seen[k % 8]++;
	}
	for (int p = 0; p < 8 && p < n; p++)
		assert_true(seen[p] > 0);
	assert_int_equal(srv->counters.packets_received, n);
	homa_dp_close(cli);
	homa_dp_close(srv);
	free(out);
	free(in);
	free(tx);
	free(rx);
}

static void homa_udp_send__batch_ipv4_priorities(void **state)
{
	(void)state;
	send_batch_case(AF_INET, 8);
}

static void homa_udp_send__more_than_one_batch(void **state)
{
	(void)state;
	send_batch_case(AF_INET, HOMA_DP_BATCH * 2 + 5);
}

static void homa_udp_send__batch_ipv6_priorities(void **state)
{
	(void)state;
	send_batch_case(AF_INET6, 40);
}

static void homa_udp_send__refused_packet_dropped(void **state)
{
	struct homa_dp *srv = open_exact(AF_INET, 4), *cli;
	uint8_t a[10] = "first", b[10] = "bad", c[10] = "third";
	uint8_t rx[2][64];
	struct homa_dp_pkt out[3] = {
		{ .buf = a, .len = 6 }, { .buf = b, .len = 4 },
		{ .buf = c, .len = 6 } };
	struct homa_dp_pkt in[2];

	(void)state;
	assert_int_equal(homa_udp_open(AF_INET, 0, &cli), 0);
	out[0].addr = homa_dp_addr_loopback(AF_INET, homa_dp_port(srv));
	/* the wrong family */
	out[1].addr = homa_dp_addr_loopback(AF_INET6, homa_dp_port(srv));
	out[2].addr = out[0].addr;
	assert_int_equal(homa_dp_send(cli, out, 3), 2);
	assert_int_equal(cli->counters.send_dropped, 1);
	assert_int_equal(dp_recv_all(srv, in, 2, &rx[0][0], 64), 2);
	assert_string_equal((char *)in[0].buf, "first");
	assert_string_equal((char *)in[1].buf, "third");
	homa_dp_close(cli);
	homa_dp_close(srv);
}

/* homa_header - the first 28 bytes of a Homa packet from sport to dport
 * with sender id (the rest zero) in buf. */
static void homa_header(uint8_t *buf, uint16_t sport, uint16_t dport,
			uint64_t id)
{
	memset(buf, 0, 28);
	buf[0] = (uint8_t)(sport >> 8);
	buf[1] = (uint8_t)sport;
	buf[2] = (uint8_t)(dport >> 8);
	buf[3] = (uint8_t)dport;
	buf[13] = 0x10;
	for (int i = 0; i < 8; i++)
		buf[20 + i] = (uint8_t)(id >> (56 - 8 * i));
}

/* wait_err - wait up to 1 s for POLLERR on dp's descriptor. */
static void wait_err(struct homa_dp *dp)
{
	struct pollfd p = { .fd = homa_dp_fd(dp), .events = POLLIN };

	assert_int_equal(poll(&p, 1, 1000), 1);
	assert_true(p.revents & POLLERR);
}

/* take_one - take the next report of dp and check it is (dest, id). */
static void take_one(struct homa_dp *dp, const union sockaddr_in_union *dest,
		     uint64_t id)
{
	union sockaddr_in_union got;
	uint64_t got_id = 0;

	assert_true(homa_dp_take_unreachable(dp, &got, &got_id));
	assert_true(homa_addr_equal(&got, dest));
	assert_int_equal(got_id, id);
}

/* unreachable_case - packets to a port where nothing listens draw ICMP
 * port unreachable: homa_dp_errors records the destination (address and
 * port) with the sender id the quoted Homa header carries, once for the two
 * packets of one RPC and once for the other RPC's, ignores the one whose
 * Homa header names another source port (not ours: a forged or foreign
 * quote), counts and drops the one too short to carry a sender id, and
 * leaves the descriptor without POLLERR. */
static void unreachable_case(int family)
{
	static const uint64_t ids[5] = { 0x1234567890abcd10ull, 7, 12,
					 0x1234567890abcd10ull, 14 };
	struct homa_dp *gone = open_exact(family, 9), *cli;
	uint16_t dead = homa_dp_port(gone);
	uint8_t pkt[5][28];
	struct homa_dp_pkt out[5];
	union sockaddr_in_union got;
	uint64_t id;
	struct pollfd p;

	homa_dp_close(gone);
	assert_int_equal(homa_udp_open(family, 0, &cli), 0);
	memset(out, 0, sizeof(out));
	for (int i = 0; i < 5; i++) {
		homa_header(pkt[i], i == 1 ? 4242 : homa_dp_port(cli), dead,
			    ids[i]);
		out[i].buf = pkt[i];
		out[i].len = i == 4 ? 27 : 28; /* the last ends inside its id */
		out[i].addr = homa_dp_addr_loopback(family, dead);
	}
	/* One by one: each draws its own ICMP error. */
	for (int i = 0; i < 5; i++) {
		assert_int_equal(homa_dp_send(cli, &out[i], 1), 1);
		wait_err(cli);
		assert_false(homa_dp_errors(cli));
	}
	assert_int_equal(cli->counters.icmp_errors, 5);
	assert_int_equal(cli->counters.icmp_unreachable, 2);
	assert_int_equal(cli->counters.unreach_no_id, 1);
	take_one(cli, &out[0].addr, ids[0]);
	take_one(cli, &out[0].addr, ids[2]);
	assert_false(homa_dp_take_unreachable(cli, &got, &id));
	p = (struct pollfd){ .fd = homa_dp_fd(cli), .events = POLLIN };
	assert_int_equal(poll(&p, 1, 0), 0);
	homa_dp_close(cli);
}

static void homa_dp_errors__port_unreachable_ipv4(void **state)
{
	(void)state;
	unreachable_case(AF_INET);
}

static void homa_dp_errors__port_unreachable_ipv6(void **state)
{
	(void)state;
	unreachable_case(AF_INET6);
}

/* More errors than the list of reports holds: homa_dp_errors stops when
 * the list is full and says so, the rest waits in the error queue (POLLERR
 * stays up), and after the reports are taken the next call reads on:
 * every RPC's report arrives, once, none is lost. */
static void homa_dp_errors__full_list_reads_on(void **state)
{
	enum { N = HOMA_DP_UNREACH_MAX + 4 };
	struct homa_dp *gone = open_exact(AF_INET, 13), *cli;
	uint16_t dead = homa_dp_port(gone);
	uint8_t pkt[28];
	struct homa_dp_pkt out = { .buf = pkt, .len = 28 };
	union sockaddr_in_union got;
	bool seen[N] = { false };
	uint64_t id;
	int taken = 0;

	(void)state;
	homa_dp_close(gone);
	assert_int_equal(homa_udp_open(AF_INET, 0, &cli), 0);
	out.addr = homa_dp_addr_loopback(AF_INET, dead);
	for (int i = 0; i < N; i++) {
		homa_header(pkt, homa_dp_port(cli), dead, 2 * (uint64_t)i + 2);
		assert_int_equal(homa_dp_send(cli, &out, 1), 1);
	}
	/* Read without taking until the list is full. */
	for (;;) {
		wait_err(cli);
		if (homa_dp_errors(cli))
			break;
	}
	assert_int_equal(cli->num_unreach, HOMA_DP_UNREACH_MAX);
	wait_err(cli); /* the rest is still queued */
	while (taken < N) {
		while (homa_dp_take_unreachable(cli, &got, &id)) {
			assert_true(homa_addr_equal(&got, &out.addr));
			assert_true(id >= 2 && id <= 2 * N && id % 2 == 0);
			assert_false(seen[id / 2 - 1]);
			seen[id / 2 - 1] = true;
			taken++;
		}
		if (taken < N) {
			wait_err(cli);
			(void)homa_dp_errors(cli);
		}
	}
	assert_int_equal(cli->counters.icmp_unreachable, N);
	homa_dp_close(cli);
}

/* A receive that finds the socket's pending error (an ICMP error) reads
 * the error queue itself and reports the destination and the RPC id. */
static void homa_udp_recv__reads_icmp_errors(void **state)
{
	struct homa_dp *gone = open_exact(AF_INET, 11), *cli;
	uint16_t dead = homa_dp_port(gone);
	uint8_t pkt[28], rx[64];
	struct homa_dp_pkt out = { .buf = pkt, .len = 28 };
	struct homa_dp_pkt in = { .buf = rx, .len = sizeof(rx) };

	(void)state;
	homa_dp_close(gone);
	assert_int_equal(homa_udp_open(AF_INET, 0, &cli), 0);
	homa_header(pkt, homa_dp_port(cli), dead, 40);
	out.addr = homa_dp_addr_loopback(AF_INET, dead);
	assert_int_equal(homa_dp_send(cli, &out, 1), 1);
	wait_err(cli);
	assert_int_equal(homa_dp_recv(cli, &in, 1), 0);
	take_one(cli, &out.addr, 40);
	homa_dp_close(cli);
}

static void homa_udp_recv__truncated_dropped(void **state)
{
	struct homa_dp *srv = open_exact(AF_INET, 5), *cli;
	uint8_t big[2000], small[50], rx[2][100];
	struct homa_dp_pkt out[2] = { { .buf = big, .len = sizeof(big) },
				      { .buf = small, .len = sizeof(small) } };
	struct homa_dp_pkt in[2];

	(void)state;
	/* Truncation concerns the caller's buffers: receive without
	 * coalescing (which uses the datapath's own 64 KiB buffers). */
	{
		int off = 0;

		assert_int_equal(setsockopt(homa_dp_fd(srv), SOL_UDP, UDP_GRO,
					    &off, sizeof(off)), 0);
		((struct udp_dp *)srv)->gro_on = false;
	}
	memset(big, 'B', sizeof(big));
	memset(small, 'S', sizeof(small));
	assert_int_equal(homa_udp_open(AF_INET, 0, &cli), 0);
	out[0].addr = homa_dp_addr_loopback(AF_INET, homa_dp_port(srv));
	out[1].addr = out[0].addr;
	assert_int_equal(homa_dp_send(cli, out, 2), 2);
	assert_int_equal(dp_recv_all(srv, in, 1, &rx[0][0], 100), 1);
	assert_int_equal(in[0].len, sizeof(small));
	assert_int_equal(in[0].buf[0], 'S');
	assert_int_equal(srv->counters.recv_truncated, 1);
	homa_dp_close(cli);
	homa_dp_close(srv);
}

/*
 * gso_case - send a run of n packets of seg bytes and a last one of
 * last bytes, same destination and priority (one GSO send), and check they
 * arrive as n + 1 separate packets with their exact bytes, in order.
 */
static void gso_case(int family, int n, size_t seg, size_t last)
{
	struct homa_dp *srv = open_exact(family, 6), *cli;
	const int total = n + 1;
	struct homa_dp_pkt out[HOMA_DP_BATCH] = { 0 }, in[HOMA_DP_BATCH];
	uint8_t *tx = malloc((size_t)total * seg);
	uint8_t *rx = malloc((size_t)total * 2048);

	assert_true(total <= HOMA_DP_BATCH);
	assert_int_equal(homa_udp_open(family, 0, &cli), 0);
	for (int i = 0; i < total; i++) {
		out[i].buf = tx + (size_t)i * seg;
		out[i].len = i < n ? seg : last;
		for (size_t b = 0; b < out[i].len; b++)
			out[i].buf[b] = (uint8_t)(i * 31 + b);
		out[i].addr = homa_dp_addr_loopback(family, homa_dp_port(srv));
		out[i].priority = 3;
	}
	assert_int_equal(homa_dp_send(cli, out, total), total);
	assert_int_equal(cli->counters.packets_sent, total);
	assert_true(((struct udp_dp *)cli)->gso);
	assert_int_equal(dp_recv_all(srv, in, total, rx, 2048), total);
	for (int i = 0; i < total; i++) {
		assert_int_equal(in[i].len, out[i].len);
		assert_memory_equal(in[i].buf, out[i].buf, in[i].len);
		assert_int_equal(in[i].priority, 3);
	}
	assert_int_equal(srv->counters.packets_received, total);
	homa_dp_close(cli);
	homa_dp_close(srv);
	free(tx);
	free(rx);
}

static void homa_udp_send__gso_run_ipv4(void **state)
{
	(void)state;
	gso_case(AF_INET, 20, 1480, 700);
}

static void homa_udp_send__gso_run_ipv6(void **state)
{
	(void)state;
	gso_case(AF_INET6, 30, 1460, 1460);
}

/*
 * run_build - a run of segs packets back to back: packet i is a 16-byte
 * header of bytes i, then the payload slice [i * seg, min((i + 1) * seg,
 * payload_len)) of bytes b * 7 + b / 251.  Returns the buffer (free it).
 */
static uint8_t *run_build(uint32_t segs, uint32_t seg, uint32_t payload_len)
{
	uint8_t *run = malloc((size_t)segs * 16 + payload_len), *p = run;

	for (uint32_t i = 0; i < segs; i++) {
		uint32_t off = i * seg;
		uint32_t len = payload_len - off < seg ? payload_len - off : seg;

		memset(p, (int)(uint8_t)i, 16);
		for (uint32_t b = off; b < off + len; b++)
			p[16 + b - off] = (uint8_t)(b * 7 + b / 251);
		p += 16 + len;
	}
	return run;
}

/*
 * gather_case - send one run of segs packets (16-byte headers, payload
 * slices of seg bytes, payload_len in all) and, after it, one whole packet;
 * check every packet arrives whole, in order, then the whole one.
 */
static void gather_case(int family, uint32_t segs, uint32_t seg,
			uint32_t payload_len)
{
	struct homa_dp *srv = open_exact(family, 7), *cli;
	const int total = (int)segs + 1;
	struct homa_dp_pkt out[2] = { 0 };
	struct homa_dp_pkt *in = calloc((size_t)total, sizeof(*in));
	uint8_t *run = run_build(segs, seg, payload_len);
	uint8_t *rx = malloc((size_t)total * 2048), whole[40];

	assert_int_equal(homa_udp_open(family, 0, &cli), 0);
	assert_true(cli->gather);
	memset(whole, 0xee, sizeof(whole));
	out[0] = (struct homa_dp_pkt){ .buf = run, .segs = segs,
		.len = (size_t)segs * 16 + payload_len,
		.hdr_len = 16, .seg = seg, .payload_len = payload_len,
		.priority = 5,
		.addr = homa_dp_addr_loopback(family, homa_dp_port(srv)) };
	out[1] = (struct homa_dp_pkt){ .buf = whole, .len = sizeof(whole),
		.priority = 5,
		.addr = homa_dp_addr_loopback(family, homa_dp_port(srv)) };
	assert_int_equal(homa_dp_send(cli, out, 2), total);
	assert_int_equal(cli->counters.packets_sent, total);
	assert_int_equal(dp_recv_all(srv, in, total, rx, 2048), total);
	for (uint32_t i = 0; i < segs; i++) {
		uint32_t off = i * seg;
		uint32_t len = payload_len - off < seg ? payload_len - off : seg;

		assert_int_equal(in[i].len, 16 + len);
		assert_memory_equal(in[i].buf, run + (size_t)i * (16 + seg),
				    16 + len);
		assert_int_equal(in[i].buf[0], (uint8_t)i);
		assert_int_equal(in[i].buf[16], (uint8_t)(off * 7 + off / 251));
		assert_int_equal(in[i].priority, 5);
	}
	assert_int_equal(in[segs].len, sizeof(whole));
	assert_memory_equal(in[segs].buf, whole, sizeof(whole));
	homa_dp_close(cli);
	homa_dp_close(srv);
	free(in);
	free(run);
	free(rx);
}

/* A run within one GSO send, the last packet short. */
static void homa_udp_send__gathered_run_ipv4(void **state)
{
	(void)state;
	gather_case(AF_INET, 10, 1400, 9 * 1400 + 333);
}

/* A run larger than one GSO send (bytes and segments): cut into several. */
static void homa_udp_send__gathered_run_split_ipv6(void **state)
{
	(void)state;
	gather_case(AF_INET6, 150, 1000, 150 * 1000);
}

/* A run with GSO off goes packet by packet, each cut from the run. */
static void homa_udp_send__gathered_run_without_gso(void **state)
{
	struct homa_dp *srv = open_exact(AF_INET, 8), *cli;
	uint8_t *run = run_build(3, 100, 250), rx[3 * 512];
	struct homa_dp_pkt out = { .buf = run, .len = 3 * 16 + 250,
				   .segs = 3, .hdr_len = 16, .seg = 100,
				   .payload_len = 250 };
	struct homa_dp_pkt in[3];

	(void)state;
	assert_int_equal(homa_udp_open(AF_INET, 0, &cli), 0);
	((struct udp_dp *)cli)->gso = false;
	out.addr = homa_dp_addr_loopback(AF_INET, homa_dp_port(srv));
	assert_int_equal(homa_dp_send(cli, &out, 1), 3);
	assert_int_equal(dp_recv_all(srv, in, 3, rx, 512), 3);
	assert_int_equal(in[0].len, 116);
	assert_int_equal(in[1].len, 116);
	assert_int_equal(in[2].len, 66);
	assert_int_equal(in[0].buf[0], 0);
	assert_int_equal(in[2].buf[0], 2);
	assert_memory_equal(in[2].buf, run + 2 * 116, 66);
	homa_dp_close(cli);
	homa_dp_close(srv);
	free(run);
}

/*
 * split_case - send one run of segs packets whose headers (16 bytes of i
 * for packet i, in frames of 16 + seg bytes) and payload (payload_len
 * bytes of run_build's pattern) lie apart (homa_dp_pkt.payload), with GSO
 * on or off, or refused by the kernel (no_check: a socket without UDP
 * checksums may not segment); check every packet arrives whole, in order.
 */
static void split_case(int family, uint32_t segs, uint32_t seg,
		       uint32_t payload_len, bool gso, bool no_check)
{
	struct homa_dp *srv = open_exact(family, 10), *cli;
	struct homa_dp_pkt out = { 0 };
	struct homa_dp_pkt *in = calloc(segs, sizeof(*in));
	uint8_t *frames = malloc((size_t)segs * (16 + seg));
	uint8_t *payload = malloc(payload_len), *rx = malloc(segs * 2048);
	int one = 1;

	assert_non_null(in);
	assert_non_null(frames);
	assert_non_null(payload);
	assert_non_null(rx);
	for (uint32_t b = 0; b < payload_len; b++)
		payload[b] = (uint8_t)(b * 7 + b / 251);
	memset(frames, 0xee, (size_t)segs * (16 + seg));
	for (uint32_t i = 0; i < segs; i++)
		memset(frames + (size_t)i * (16 + seg), (int)(uint8_t)i, 16);
	assert_int_equal(homa_udp_open(family, 0, &cli), 0);
	((struct udp_dp *)cli)->gso = gso;
	if (no_check)
		assert_int_equal(setsockopt(homa_dp_fd(cli), SOL_SOCKET,
					    SO_NO_CHECK, &one, sizeof(one)), 0);
	out = (struct homa_dp_pkt){ .buf = frames, .segs = segs,
		.len = (size_t)segs * 16 + payload_len, .hdr_len = 16,
		.seg = seg, .payload_len = payload_len, .payload = payload,
		.priority = 3,
		.addr = homa_dp_addr_loopback(family, homa_dp_port(srv)) };
	assert_int_equal(homa_dp_send(cli, &out, 1), (int)segs);
	assert_int_equal(dp_recv_all(srv, in, (int)segs, rx, 2048), (int)segs);
	for (uint32_t i = 0; i < segs; i++) {
		uint32_t off = i * seg;
		uint32_t len = payload_len - off < seg ? payload_len - off : seg;

		assert_int_equal(in[i].len, 16 + len);
		assert_int_equal(in[i].buf[0], (uint8_t)i);
		assert_int_equal(in[i].buf[15], (uint8_t)i);
		assert_memory_equal(in[i].buf + 16, payload + off, len);
	}
	if (no_check)
		assert_false(((struct udp_dp *)cli)->gso);
	homa_dp_close(cli);
	homa_dp_close(srv);
	free(in);
	free(frames);
	free(payload);
	free(rx);
}

/* Headers and payload apart: one GSO send, the last packet short. */
static void homa_udp_send__split_run_ipv4(void **state)
{
	(void)state;
	split_case(AF_INET, 10, 1400, 9 * 1400 + 333, true, false);
}

/* Larger than one GSO send: cut into several, two iovecs a packet. */
static void homa_udp_send__split_run_cut_ipv6(void **state)
{
	(void)state;
	split_case(AF_INET6, 150, 1000, 150 * 1000 - 1, true, false);
}

/* Without GSO: a sendmsg per packet, each of two pieces. */
static void homa_udp_send__split_run_without_gso(void **state)
{
	(void)state;
	split_case(AF_INET, 5, 100, 450, false, false);
}

/* GSO refused by the kernel: GSO goes off and the packets leave one by
 * one, each put together from its header and its payload. */
static void homa_udp_send__split_run_gso_refused(void **state)
{
	(void)state;
	split_case(AF_INET, 7, 1000, 6500, true, true);
}

/*
 * single_runs_case - send six single-packet runs (a small message each) of
 * one size, to one address at one priority; check each arrives with its
 * own bytes, and that they came as one coalesced datagram when GSO is on
 * (one GSO send), as separate datagrams when it is off.
 */
static void single_runs_case(bool gso)
{
	enum { N = 6, HDR = 16, PAYLOAD = 84 };
	struct homa_dp *srv = open_exact(AF_INET, 9), *cli;
	struct homa_dp_pkt out[N], in[N];
	uint8_t frames[N][HDR + PAYLOAD], rx[N * 512];
	struct udp_dp *su = (struct udp_dp *)srv;

	assert_int_equal(homa_udp_open(AF_INET, 0, &cli), 0);
	((struct udp_dp *)cli)->gso = gso;
	for (int i = 0; i < N; i++) {
		memset(frames[i], 0x40 + i, sizeof(frames[i]));
		out[i] = (struct homa_dp_pkt){ .buf = frames[i], .segs = 1,
			.len = sizeof(frames[i]), .hdr_len = HDR, .seg = 1424,
			.payload_len = PAYLOAD, .priority = 2,
			.addr = homa_dp_addr_loopback(AF_INET,
						      homa_dp_port(srv)) };
	}
	assert_int_equal(homa_dp_send(cli, out, N), N);
	assert_int_equal(out[0].segs, 1); /* the caller's array untouched */
	assert_int_equal(dp_recv_all(srv, in, N, rx, 512), N);
	for (int i = 0; i < N; i++) {
		assert_int_equal(in[i].len, HDR + PAYLOAD);
		assert_memory_equal(in[i].buf, frames[i], HDR + PAYLOAD);
		assert_int_equal(in[i].priority, 2);
	}
	if (gso) {
		assert_int_equal(su->gro_count, 1);
		assert_int_equal(su->gro[0].len, N * (HDR + PAYLOAD));
		assert_int_equal(su->gro[0].seg, HDR + PAYLOAD);
	} else {
		assert_int_equal(su->gro[0].len, HDR + PAYLOAD);
	}
	homa_dp_close(cli);
	homa_dp_close(srv);
}

/* Small messages batched together share one GSO send. */
static void homa_udp_send__single_runs_share_one_gso_send(void **state)
{
	(void)state;
	single_runs_case(true);
}

/* With GSO off they leave one datagram each. */
static void homa_udp_send__single_runs_without_gso(void **state)
{
	(void)state;
	single_runs_case(false);
}

/* ---- udp_recv_placed ---- */

/* expect_tag - place p expects a datagram from src whose first byte is
 * tag (the other header bytes may hold anything). */
static void expect_tag(struct homa_dp_place *p,
		       const union sockaddr_in_union *src, uint8_t tag)
{
	p->src = *src;
	memset(p->want, 0, sizeof(p->want));
	memset(p->mask, 0, sizeof(p->mask));
	p->want[0] = tag;
	p->mask[0] = 0xff;
}

/* send_one - one datagram of len bytes from cli to srv's port, byte b
 * holding (tag + b) mod 251 except the first, which is tag. */
static void send_one(struct homa_dp *cli, struct homa_dp *srv, int family,
		     uint8_t *buf, size_t len, uint8_t tag)
{
	struct homa_dp_pkt out = { 0 };

	for (size_t b = 0; b < len; b++)
		buf[b] = (uint8_t)((tag + b) % 251);
	buf[0] = tag;
	out.buf = buf;
	out.len = len;
	out.addr = homa_dp_addr_loopback(family, homa_dp_port(srv));
	assert_int_equal(homa_dp_send(cli, &out, 1), 1);
}

/*
 * Datagrams whose bytes after the header fill their place exactly are
 * tried against it (place i), and stay there when they are the expected
 * ones (placed, the header in buf, len counting all); another one (here:
 * a wrong first byte), and one shorter than its place (not even tried),
 * come back whole in buf; a place of two pieces is filled in order.
 */
static void homa_udp_recv_placed__kept_or_moved_back(void **state)
{
	enum { HDR = 56, PAY = 20000, N = 4 };
	struct homa_dp *srv = open_exact(AF_INET, 8), *cli;
	static uint8_t tx[N][HDR + PAY], dst[N][PAY], buf[HOMA_DP_BATCH][64];
	struct homa_dp_place places[N];
	struct homa_dp_pkt in[HOMA_DP_BATCH];
	struct homa_dp_placement pl = { places, N };
	size_t lens[N] = { HDR + PAY, HDR + PAY, HDR + PAY, HDR + PAY - 7 };
	union sockaddr_in_union from;
	int n;

	(void)state;
	assert_true(((struct udp_dp *)srv)->gro_on);
	assert_int_equal(homa_udp_open(AF_INET, 0, &cli), 0);
	from = homa_dp_addr_loopback(AF_INET, homa_dp_port(cli));
	for (int i = 0; i < N; i++) {
		memset(&places[i], 0, sizeof(places[i]));
		places[i].hdr_len = HDR;
		places[i].len = PAY;
		places[i].iovcnt = 1;
		places[i].iov[0].iov_base = dst[i];
		places[i].iov[0].iov_len = PAY;
		/* Place 1 expects another datagram than the one it gets. */
		expect_tag(&places[i], &from, (uint8_t)(i == 1 ? 99 : i));
		send_one(cli, srv, AF_INET, tx[i], lens[i], (uint8_t)i);
	}
	places[2].iovcnt = 2; /* two pieces: 5000 and 15000 bytes */
	places[2].iov[0].iov_len = 5000;
	places[2].iov[1].iov_base = dst[2] + 5000;
	places[2].iov[1].iov_len = PAY - 5000;
	for (int i = 0; i < HOMA_DP_BATCH; i++) {
		in[i].buf = buf[i];
		in[i].len = sizeof(buf[i]);
		in[i].placed = false;
	}
	n = homa_dp_recv_placed(srv, in, HOMA_DP_BATCH, &pl);
	assert_int_equal(n, N);
	for (int i = 0; i < N; i++) {
		bool kept = i == 0 || i == 2;

		/* Not the short datagram: it was not tried. */
		assert_int_equal(in[i].place, i < 3 ? i : -1);
		assert_int_equal(in[i].len, lens[i]);
		assert_int_equal(in[i].placed, kept);
		assert_memory_equal(in[i].buf, tx[i], HDR);
		if (kept)
			assert_memory_equal(dst[i], tx[i] + HDR, PAY);
		else
			assert_memory_equal(in[i].buf, tx[i], lens[i]);
	}
	homa_dp_close(cli);
	homa_dp_close(srv);
}

/* A datagram the kernel coalesced from several packets (one GSO send)
 * never stays in a place, even when its header is the expected one: its
 * bytes move back and its packets come out whole, not tried against the
 * place. */
static void homa_udp_recv_placed__coalesced_moved_back(void **state)
{
	enum { SEG = 1000, SEGS = 5 };
	struct homa_dp *srv = open_exact(AF_INET, 9), *cli;
	static uint8_t tx[SEGS][SEG], dst[SEGS * SEG];
	struct homa_dp_pkt out[SEGS] = { 0 }, in[HOMA_DP_BATCH];
	/* The place is exactly as long as the coalesced datagram's bytes
	 * after a header: only the coalescing keeps them from staying. */
	struct homa_dp_place place = {
		.hdr_len = 56, .iov = { { dst, SEGS * SEG - 56 } },
		.iovcnt = 1, .len = SEGS * SEG - 56 };
	struct homa_dp_placement pl = { &place, 1 };
	int n;

	(void)state;
	assert_int_equal(homa_udp_open(AF_INET, 0, &cli), 0);
	place.src = homa_dp_addr_loopback(AF_INET, homa_dp_port(cli));
	for (int i = 0; i < SEGS; i++) {
		for (int b = 0; b < SEG; b++)
			tx[i][b] = (uint8_t)(i * 17 + b);
		out[i].buf = tx[i];
		out[i].len = SEG;
		out[i].addr = homa_dp_addr_loopback(AF_INET, homa_dp_port(srv));
	}
	assert_int_equal(homa_dp_send(cli, out, SEGS), SEGS);
	for (int i = 0; i < HOMA_DP_BATCH; i++)
		in[i].placed = false;
	n = homa_dp_recv_placed(srv, in, HOMA_DP_BATCH, &pl);
	assert_int_equal(n, SEGS);
	for (int i = 0; i < SEGS; i++) {
		assert_int_equal(in[i].place, -1);
		assert_false(in[i].placed);
		assert_int_equal(in[i].len, SEG);
		assert_memory_equal(in[i].buf, tx[i], SEG);
	}
	homa_dp_close(cli);
	homa_dp_close(srv);
}

/* A receive of n packets takes no more than n datagrams from the kernel
 * (the endpoint reads the first packet of a large message alone): the
 * rest stay queued there, not in the datapath, for the next call. */
static void homa_udp_recv__no_more_datagrams_than_asked(void **state)
{
	enum { LEN = 3000, N = 3 };
	struct homa_dp *srv = open_exact(AF_INET, 10), *cli;
	static uint8_t tx[N][LEN], buf[HOMA_DP_BATCH][LEN];
	struct homa_dp_pkt in[HOMA_DP_BATCH];

	(void)state;
	assert_true(((struct udp_dp *)srv)->gro_on);
	assert_int_equal(homa_udp_open(AF_INET, 0, &cli), 0);
	for (int i = 0; i < N; i++)
		send_one(cli, srv, AF_INET, tx[i], LEN, (uint8_t)i);
	for (int i = 0; i < HOMA_DP_BATCH; i++) {
		in[i].buf = buf[i];
		in[i].len = sizeof(buf[i]);
	}
	assert_int_equal(homa_dp_recv(srv, in, 1), 1);
	assert_false(srv->rx_buffered);
	assert_memory_equal(in[0].buf, tx[0], LEN);
	assert_int_equal(homa_dp_recv(srv, in, HOMA_DP_BATCH), N - 1);
	for (int i = 1; i < N; i++)
		assert_memory_equal(in[i - 1].buf, tx[i], LEN);
	homa_dp_close(cli);
	homa_dp_close(srv);
}

/* ---- receive bands ---- */

/* open_bands - a datapath with two receive bands (high band from
 * priority 6) on a free exact port near dp_test_port(k) (0: a client port);
 * asserts that it has both sockets. */
static struct homa_dp *open_bands(int family, int k)
{
	const struct homa_dp_bands b = { .n = 2, .high_prio = 6 };
	struct homa_dp *dp = NULL;

	for (int i = 0; i < 50; i++) {
		uint16_t port = k ? dp_test_port(k + i * 131) : 0;
		int err = homa_udp_open_bands(family, port, &b, &dp);

		if (err == 0) {
			assert_int_equal(dp->nsocks, 2);
			assert_int_not_equal(dp->fd, dp->socks[0]);
			assert_int_equal(dp_fd_port(dp->socks[0]),
					 homa_dp_port(dp));
			assert_int_equal(dp_fd_port(dp->socks[1]),
					 homa_dp_port(dp));
			return dp;
		}
		assert_int_equal(err, -EADDRINUSE);
	}
	fail_msg("no free port");
	return NULL;
}

/* send_prios - send from cli to srv one DATA packet per priority of
 * prios[0..n) (as separate sends, so that none is coalesced with another),
 * its first byte the priority and its second its index. */
static void send_prios(struct homa_dp *cli, struct homa_dp *srv, int family,
		       const uint8_t *prios, int n)
{
	for (int i = 0; i < n; i++) {
		uint8_t buf[100];
		struct homa_dp_pkt out = { .buf = buf, .len = sizeof(buf) };

		memset(buf, 0, sizeof(buf));
		buf[0] = prios[i];
		buf[1] = (uint8_t)i;
		buf[11] = 0x10; /* DATA */
		out.addr = homa_dp_addr_loopback(family, homa_dp_port(srv));
		out.priority = prios[i];
		assert_int_equal(homa_dp_send(cli, &out, 1), 1);
	}
}

/* read_socket - read the datagrams waiting on fd (nonblocking) and
 * return a bit mask of the priorities (their first byte) seen; *count
 * gets how many. */
static unsigned read_socket(int fd, int *count)
{
	uint8_t buf[65536];
	unsigned seen = 0;
	ssize_t r;

	*count = 0;
	while ((r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		seen |= 1u << (buf[0] & 7);
		(*count)++;
	}
	return seen;
}

/* wait_readable - wait up to 1 s until fd is readable. */
static void wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	assert_int_equal(poll(&p, 1, 1000), 1);
}

/* steer_case - the band filter puts priorities 6 and 7 on the high-band
 * socket and 0..5 on the low-band socket, for family. */
static void steer_case(int family)
{
	struct homa_dp *srv = open_bands(family, 12), *cli;
	const uint8_t prios[16] = { 0, 1, 2, 3, 4, 5, 6, 7,
				    7, 6, 5, 4, 3, 2, 1, 0 };
	int n_hi, n_lo;
	unsigned hi, lo;

	assert_int_equal(homa_udp_open(family, 0, &cli), 0);
	send_prios(cli, srv, family, prios, 16);
	wait_readable(srv->socks[0]);
	wait_readable(srv->socks[1]);
	hi = read_socket(srv->socks[0], &n_hi);
	lo = read_socket(srv->socks[1], &n_lo);
	assert_int_equal(hi, 0xc0u);
	assert_int_equal(lo, 0x3fu);
	assert_int_equal(n_hi, 4);
	assert_int_equal(n_lo, 12);
	homa_dp_close(cli);
	homa_dp_close(srv);
}

static void homa_udp_open_bands__steers_by_tos_ipv4(void **state)
{
	(void)state;
	steer_case(AF_INET);
}

static void homa_udp_open_bands__steers_by_traffic_class_ipv6(void **state)
{
	(void)state;
	steer_case(AF_INET6);
}

/* Of the control packets only GRANTs go to the high band: a RESEND (or an
 * ACK) at priority 7 goes to the low band, behind the DATA it concerns. */
static void resend_case(int family)
{
	struct homa_dp *srv = open_bands(family, 19), *cli;
	uint8_t resend[40], grant[40], ack[80];
	struct homa_dp_pkt out[3] = { { .buf = resend, .len = sizeof(resend) },
				      { .buf = grant, .len = sizeof(grant) },
				      { .buf = ack, .len = sizeof(ack) } };
	int n_hi, n_lo;

	assert_int_equal(homa_udp_open(family, 0, &cli), 0);
	memset(resend, 0, sizeof(resend));
	memset(grant, 0, sizeof(grant));
	memset(ack, 0, sizeof(ack));
	resend[0] = 1; /* the bit read_socket reports */
	resend[11] = 0x12;
	grant[0] = 2;
	grant[11] = 0x11;
	ack[0] = 3;
	ack[11] = 0x18;
	for (int i = 0; i < 3; i++) {
		out[i].addr = homa_dp_addr_loopback(family, homa_dp_port(srv));
		out[i].priority = 7;
		assert_int_equal(homa_dp_send(cli, &out[i], 1), 1);
	}
	wait_readable(srv->socks[0]);
	wait_readable(srv->socks[1]);
	assert_int_equal(read_socket(srv->socks[1], &n_lo), 1u << 1 | 1u << 3);
	assert_int_equal(read_socket(srv->socks[0], &n_hi), 1u << 2);
	assert_int_equal(n_lo, 2);
	assert_int_equal(n_hi, 1);
	homa_dp_close(cli);
	homa_dp_close(srv);
}

static void homa_udp_open_bands__control_but_grant_to_low_band_ipv4(void **state)
{
	(void)state;
	resend_case(AF_INET);
}

static void homa_udp_open_bands__control_but_grant_to_low_band_ipv6(void **state)
{
	(void)state;
	resend_case(AF_INET6);
}

/* The first socket is bound before it allows sharing: a port someone
 * holds is refused, and the group's port is refused to a socket that does
 * not ask to share it and to another datapath. */
static void homa_udp_open_bands__port_exclusive(void **state)
{
	const struct homa_dp_bands b = { .n = 2, .high_prio = 6 };
	struct homa_dp *dp = open_exact(AF_INET, 13), *dp2 = NULL, *bands;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	(void)state;
	assert_int_equal(homa_udp_open_bands(AF_INET, homa_dp_port(dp), &b,
					     &dp2), -EADDRINUSE);
	assert_null(dp2);
	bands = open_bands(AF_INET, 14);
	assert_int_equal(homa_udp_open(AF_INET, homa_dp_port(bands), &dp2),
			 -EADDRINUSE);
	assert_int_equal(homa_udp_open_bands(AF_INET, homa_dp_port(bands), &b,
					     &dp2), -EADDRINUSE);
	assert_int_equal(homa_dp_bind_port(fd, AF_INET, homa_dp_port(bands)),
			 -EADDRINUSE);
	close(fd);
	homa_dp_close(bands);
	homa_dp_close(dp);
}

static void homa_udp_open_bands__client_port(void **state)
{
	struct homa_dp *dp;

	(void)state;
	dp = open_bands(AF_INET6, 0);
	assert_true(homa_dp_port(dp) >= HOMA_DP_CLIENT_PORT_MIN);
	assert_true(((struct udp_dp *)dp)->gro_on);
	homa_dp_close(dp);
}

/* hi_first_case - low-priority packets wait, then high-priority ones come:
 * a read of a few packets hands out the high band's first, and the rest
 * follow; with gro false, without coalescing. */
static void hi_first_case(bool gro)
{
	enum { LOW = 20, HIGH = 3 };
	struct homa_dp *srv = open_bands(AF_INET, 15), *cli;
	uint8_t prios[LOW + HIGH];
	static uint8_t rx[LOW + HIGH][2048];
	struct homa_dp_pkt in[LOW + HIGH];
	int n;

	if (!gro) {
		int off = 0;

		for (int b = 0; b < 2; b++)
			assert_int_equal(setsockopt(srv->socks[b], SOL_UDP,
						    UDP_GRO, &off,
						    sizeof(off)), 0);
		((struct udp_dp *)srv)->gro_on = false;
	}
	for (int i = 0; i < LOW + HIGH; i++)
		prios[i] = i < LOW ? 1 : 7;
	assert_int_equal(homa_udp_open(AF_INET, 0, &cli), 0);
	send_prios(cli, srv, AF_INET, prios, LOW + HIGH);
	wait_readable(srv->socks[0]);
	wait_readable(srv->socks[1]);
	for (int i = 0; i < LOW + HIGH; i++) {
		in[i].buf = rx[i];
		in[i].len = sizeof(rx[i]);
	}
	n = homa_dp_recv(srv, in, HIGH + 1);
	assert_int_equal(n, HIGH + 1);
	for (int i = 0; i < HIGH; i++) {
		assert_int_equal(in[i].priority, 7);
		assert_int_equal(in[i].buf[1], LOW + i);
	}
	assert_int_equal(in[HIGH].priority, 1);
	assert_int_equal(in[HIGH].buf[1], 0);
	n = dp_recv_all(srv, in, LOW - 1, &rx[0][0], sizeof(rx[0]));
	assert_int_equal(n, LOW - 1);
	for (int i = 0; i < n; i++)
		assert_int_equal(in[i].buf[1], i + 1);
	assert_int_equal(srv->counters.packets_received, LOW + HIGH);
	homa_dp_close(cli);
	homa_dp_close(srv);
}

/* While both bands hold packets, one read in UDP_LOW_BAND_TURN takes the
 * low band's first: a flood of high-band packets does not starve it. */
static void homa_udp_recv__low_band_gets_its_turn(void **state)
{
	enum { N = 12 };
	struct homa_dp *srv = open_bands(AF_INET, 18), *cli;
	uint8_t prios[2 * N];
	uint8_t rx[2048];

	(void)state;
	for (int i = 0; i < 2 * N; i++)
		prios[i] = i < N ? 1 : 7;
	assert_int_equal(homa_udp_open(AF_INET, 0, &cli), 0);
	send_prios(cli, srv, AF_INET, prios, 2 * N);
	wait_readable(srv->socks[0]);
	wait_readable(srv->socks[1]);
	for (int i = 0; i < 2 * UDP_LOW_BAND_TURN; i++) {
		struct homa_dp_pkt in = { .buf = rx, .len = sizeof(rx) };
		bool low_turn = i % UDP_LOW_BAND_TURN == UDP_LOW_BAND_TURN - 1;

		assert_int_equal(homa_dp_recv(srv, &in, 1), 1);
		assert_int_equal(in.priority, low_turn ? 1 : 7);
	}
	homa_dp_close(cli);
	homa_dp_close(srv);
}

static void homa_udp_recv__high_band_first(void **state)
{
	(void)state;
	hi_first_case(true);
}

static void homa_udp_recv__high_band_first_without_gro(void **state)
{
	(void)state;
	hi_first_case(false);
}

/* Over the epoll descriptor of the bands, an ICMP error shows as
 * readiness; the read that finds no packet reads the error queue. */
static void homa_udp_recv__bands_read_icmp_errors(void **state)
{
	struct homa_dp *gone = open_exact(AF_INET, 16), *cli;
	uint16_t dead = homa_dp_port(gone);
	uint8_t pkt[28], rx[64];
	struct homa_dp_pkt out = { .buf = pkt, .len = 28 };
	struct homa_dp_pkt in = { .buf = rx, .len = sizeof(rx) };
	struct pollfd p;

	(void)state;
	homa_dp_close(gone);
	cli = open_bands(AF_INET, 0);
	homa_header(pkt, homa_dp_port(cli), dead, 40);
	out.addr = homa_dp_addr_loopback(AF_INET, dead);
	assert_int_equal(homa_dp_send(cli, &out, 1), 1);
	wait_readable(homa_dp_fd(cli));
	assert_int_equal(homa_dp_recv(cli, &in, 1), 0);
	take_one(cli, &out.addr, 40);
	p.fd = homa_dp_fd(cli);
	p.events = POLLIN;
	assert_int_equal(poll(&p, 1, 0), 0);
	homa_dp_close(cli);
}

static void homa_udp_send__batch_to_bands(void **state)
{
	struct homa_dp *srv, *cli;
	uint8_t prios[40];
	static uint8_t rx[40][2048];
	struct homa_dp_pkt in[40];
	unsigned seen = 0;

	(void)state;
	srv = open_bands(AF_INET6, 17);
	cli = open_bands(AF_INET6, 0);
	for (int i = 0; i < 40; i++)
		prios[i] = (uint8_t)(i % 8);
	send_prios(cli, srv, AF_INET6, prios, 40);
	assert_int_equal(dp_recv_all(srv, in, 40, &rx[0][0], sizeof(rx[0])), 40);
	for (int i = 0; i < 40; i++) {
		assert_int_equal(in[i].priority, in[i].buf[0]);
		assert_int_equal(ntohs(in[i].addr.in6.sin6_port),
				 homa_dp_port(cli));
		seen |= 1u << in[i].buf[1] % 32;
	}
	assert_int_equal(seen, 0xffffffffu);
	homa_dp_close(cli);
	homa_dp_close(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_dp_open__udp),
		cmocka_unit_test(homa_dp_open__unknown_kind),
		cmocka_unit_test(homa_udp_open__bad_family),
		cmocka_unit_test(homa_udp_open__client_port_in_range),
		cmocka_unit_test(homa_udp_open__exact_port),
		cmocka_unit_test(homa_udp_open__port_in_use),
		cmocka_unit_test(homa_udp_open__nonblocking_cloexec_buffers),
		cmocka_unit_test(homa_udp_open__ipv6_is_v6only),
		cmocka_unit_test(homa_udp_recv__nothing_waiting),
		cmocka_unit_test(homa_udp_send__batch_ipv4_priorities),
		cmocka_unit_test(homa_udp_send__more_than_one_batch),
		cmocka_unit_test(homa_udp_send__batch_ipv6_priorities),
		cmocka_unit_test(homa_udp_send__refused_packet_dropped),
		cmocka_unit_test(homa_udp_send__split_run_ipv4),
		cmocka_unit_test(homa_udp_send__split_run_cut_ipv6),
		cmocka_unit_test(homa_udp_send__split_run_without_gso),
		cmocka_unit_test(homa_udp_send__split_run_gso_refused),
		cmocka_unit_test(homa_udp_recv__truncated_dropped),
		cmocka_unit_test(homa_dp_errors__port_unreachable_ipv4),
		cmocka_unit_test(homa_dp_errors__port_unreachable_ipv6),
		cmocka_unit_test(homa_dp_errors__full_list_reads_on),
		cmocka_unit_test(homa_udp_recv__reads_icmp_errors),
		cmocka_unit_test(homa_udp_send__gso_run_ipv4),
		cmocka_unit_test(homa_udp_send__gso_run_ipv6),
		cmocka_unit_test(homa_udp_send__gathered_run_ipv4),
		cmocka_unit_test(homa_udp_send__gathered_run_split_ipv6),
		cmocka_unit_test(homa_udp_send__gathered_run_without_gso),
		cmocka_unit_test(homa_udp_send__single_runs_share_one_gso_send),
		cmocka_unit_test(homa_udp_send__single_runs_without_gso),
		cmocka_unit_test(homa_udp_recv_placed__kept_or_moved_back),
		cmocka_unit_test(homa_udp_recv_placed__coalesced_moved_back),
		cmocka_unit_test(homa_udp_recv__no_more_datagrams_than_asked),
		cmocka_unit_test(homa_udp_open_bands__steers_by_tos_ipv4),
		cmocka_unit_test(
			homa_udp_open_bands__steers_by_traffic_class_ipv6),
		cmocka_unit_test(homa_udp_open_bands__control_but_grant_to_low_band_ipv4),
		cmocka_unit_test(homa_udp_open_bands__control_but_grant_to_low_band_ipv6),
		cmocka_unit_test(homa_udp_open_bands__port_exclusive),
		cmocka_unit_test(homa_udp_open_bands__client_port),
		cmocka_unit_test(homa_udp_recv__high_band_first),
		cmocka_unit_test(homa_udp_recv__high_band_first_without_gro),
		cmocka_unit_test(homa_udp_recv__low_band_gets_its_turn),
		cmocka_unit_test(homa_udp_recv__bands_read_icmp_errors),
		cmocka_unit_test(homa_udp_send__batch_to_bands),
	};

	return cmocka_run_group_tests_name("homa_udp", tests, NULL, NULL);
}
