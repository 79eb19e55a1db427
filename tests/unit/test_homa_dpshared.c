/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of the datapaths' shared socket helpers
 * (src/io/homa_dpshared.c, linked from homa_io), in code order, named
 * <function>__<case>.  The helpers that touch sockets are tried on real
 * UDP sockets on loopback; the client-port search and the receive loop
 * are driven by fakes that say what each try or read returns.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "dp_test_util.h"
#include "homa_datapath.h"
#include "homa_dpshared.h"

/* buf_size - fd's buffer size for option opt, as the kernel reports it. */
static int buf_size(int fd, int opt)
{
	int v = 0;
	socklen_t len = sizeof(v);

	assert_int_equal(getsockopt(fd, SOL_SOCKET, opt, &v, &len), 0);
	return v;
}

static void homa_dp_addr_len__families(void **state)
{
	(void)state;
	assert_int_equal(homa_dp_addr_len(AF_INET), sizeof(struct sockaddr_in));
	assert_int_equal(homa_dp_addr_len(AF_INET6),
			 sizeof(struct sockaddr_in6));
	assert_int_equal(homa_dp_addr_len(AF_UNIX), 0);
	assert_int_equal(homa_dp_addr_len(AF_UNSPEC), 0);
}

/* check_addr - a is an address of family with port (host order) and host
 * address host (a struct in_addr or in6_addr), zero elsewhere. */
static void check_addr(const union sockaddr_in_union *a, int family,
		       uint16_t port, const void *host)
{
	union sockaddr_in_union want;

	memset(&want, 0, sizeof(want));
	want.sa.sa_family = (sa_family_t)family;
	if (family == AF_INET6) {
		want.in6.sin6_port = htons(port);
		memcpy(&want.in6.sin6_addr, host, sizeof(want.in6.sin6_addr));
	} else {
		want.in4.sin_port = htons(port);
		memcpy(&want.in4.sin_addr, host, sizeof(want.in4.sin_addr));
	}
	assert_memory_equal(a, &want, sizeof(want));
}

/* The wildcard address of each family carries the family and the port in
 * network order, zeros elsewhere. */
static void homa_dp_addr_any__each_family(void **state)
{
	union sockaddr_in_union a4 = homa_dp_addr_any(AF_INET, 4000);
	union sockaddr_in_union a6 = homa_dp_addr_any(AF_INET6, 4001);
	struct in_addr any4 = { .s_addr = htonl(INADDR_ANY) };

	(void)state;
	check_addr(&a4, AF_INET, 4000, &any4);
	check_addr(&a6, AF_INET6, 4001, &in6addr_any);
}

/* So does the loopback address, with 127.0.0.1 or ::1. */
static void homa_dp_addr_loopback__each_family(void **state)
{
	union sockaddr_in_union a4 = homa_dp_addr_loopback(AF_INET, 1);
	union sockaddr_in_union a6 = homa_dp_addr_loopback(AF_INET6, 65535);
	struct in_addr lo4 = { .s_addr = htonl(INADDR_LOOPBACK) };

	(void)state;
	check_addr(&a4, AF_INET, 1, &lo4);
	check_addr(&a6, AF_INET6, 65535, &in6addr_loopback);
}

/* Both buffers get at least what an unprivileged SO_RCVBUF/SO_SNDBUF of
 * the same size gets on a fresh socket (root may force more). */
static void homa_dp_set_bufs__both_directions(void **state)
{
	const int bytes = 4 * 1024 * 1024;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int ref = socket(AF_INET, SOCK_DGRAM, 0);

	(void)state;
	assert_true(fd >= 0 && ref >= 0);
	assert_int_equal(setsockopt(ref, SOL_SOCKET, SO_RCVBUF, &bytes,
				    sizeof(bytes)), 0);
	assert_int_equal(setsockopt(ref, SOL_SOCKET, SO_SNDBUF, &bytes,
				    sizeof(bytes)), 0);
	homa_dp_set_bufs(fd, bytes);
	assert_true(buf_size(fd, SO_RCVBUF) >= buf_size(ref, SO_RCVBUF));
	assert_true(buf_size(fd, SO_SNDBUF) >= buf_size(ref, SO_SNDBUF));
	close(fd);
	close(ref);
}

/* A port of each family is bound on the wildcard address; the same port
 * again is refused with -EADDRINUSE. */
static void homa_dp_bind_port__wildcard_then_taken(void **state)
{
	const int families[] = { AF_INET, AF_INET6 };

	(void)state;
	for (int i = 0; i < 2; i++) {
		int f = families[i], on = 1;
		int a = socket(f, SOCK_DGRAM, 0), b = socket(f, SOCK_DGRAM, 0);
		union sockaddr_in_union name;
		socklen_t len = sizeof(name);
		uint16_t port;

		assert_true(a >= 0 && b >= 0);
		if (f == AF_INET6)
			assert_int_equal(setsockopt(a, IPPROTO_IPV6,
						    IPV6_V6ONLY, &on,
						    sizeof(on)), 0);
		assert_int_equal(homa_dp_bind_port(a, f, 0), 0);
		port = dp_fd_port(a);
		assert_true(port != 0);
		assert_int_equal(getsockname(a, &name.sa, &len), 0);
		assert_int_equal(name.sa.sa_family, f);
		if (f == AF_INET6)
			assert_memory_equal(&name.in6.sin6_addr, &in6addr_any,
					    sizeof(in6addr_any));
		else
			assert_int_equal(name.in4.sin_addr.s_addr,
					 htonl(INADDR_ANY));
		assert_int_equal(homa_dp_bind_port(b, f, port), -EADDRINUSE);
		close(a);
		close(b);
	}
}

/* Not every call gives the same number. */
static void homa_dp_random__varies(void **state)
{
	uint32_t first = homa_dp_random();
	bool other = false;

	(void)state;
	for (int i = 0; i < 64 && !other; i++)
		other = homa_dp_random() != first;
	assert_true(other);
}

/* A fake port owner for homa_dp_client_port: every port is taken except
 * free_port (0: none); err, when not 0, is returned by the first try. */
struct fake_ports {
	uint16_t free_port;
	int err;
	int tries;
	uint16_t lowest, highest;
};

static int fake_try(void *ctx, uint16_t port)
{
	struct fake_ports *f = ctx;

	if (f->tries++ == 0 || port < f->lowest)
		f->lowest = port;
	if (port > f->highest)
		f->highest = port;
	if (f->err)
		return f->err;
	return port == f->free_port ? 1000 + port : -EADDRINUSE;
}

/* The one free port is found (by the scan, if the random tries miss it)
 * and what its try returned comes back. */
static void homa_dp_client_port__finds_the_free_one(void **state)
{
	const uint16_t frees[] = { HOMA_DP_CLIENT_PORT_MIN, 40000,
				   HOMA_DP_CLIENT_PORT_MAX };

	(void)state;
	for (int i = 0; i < 3; i++) {
		struct fake_ports f = { .free_port = frees[i] };
		uint16_t port = 0;

		assert_int_equal(homa_dp_client_port(fake_try, &f, &port),
				 1000 + frees[i]);
		assert_int_equal(port, frees[i]);
		assert_true(f.tries <= HOMA_DP_RANDOM_TRIES +
				       (HOMA_DP_CLIENT_PORT_MAX -
					HOMA_DP_CLIENT_PORT_MIN + 1));
	}
}

/* With every port taken, each port of the range is tried (after the
 * random tries), none outside it, then -EADDRINUSE. */
static void homa_dp_client_port__all_taken(void **state)
{
	struct fake_ports f = { .free_port = 0 };
	uint16_t port = 7;

	(void)state;
	assert_int_equal(homa_dp_client_port(fake_try, &f, &port),
			 -EADDRINUSE);
	assert_int_equal(port, 7);
	assert_int_equal(f.tries, HOMA_DP_RANDOM_TRIES +
			 (HOMA_DP_CLIENT_PORT_MAX - HOMA_DP_CLIENT_PORT_MIN +
			  1));
	assert_int_equal(f.lowest, HOMA_DP_CLIENT_PORT_MIN);
	assert_int_equal(f.highest, HOMA_DP_CLIENT_PORT_MAX);
}

/* Another error ends the search at once. */
static void homa_dp_client_port__other_error_ends(void **state)
{
	struct fake_ports f = { .err = -EACCES };
	uint16_t port = 7;

	(void)state;
	assert_int_equal(homa_dp_client_port(fake_try, &f, &port), -EACCES);
	assert_int_equal(f.tries, 1);
	assert_int_equal(port, 7);
}

/* A fake kernel for homa_dp_recv_retry: each read returns results[i]
 * (a count: that many datagrams, capped at max, keep[i] of them kept
 * when keep[i] >= 0, else all), or an errno when negative. */
struct fake_reads {
	int results[16];
	int keep[16];
	int n;
	int calls;
	int offs[16], maxes[16];
};

static int fake_read(void *ctx, int off, int max, int *kept)
{
	struct fake_reads *f = ctx;
	int i = f->calls++;
	int r;

	assert_true(i < f->n);
	f->offs[i] = off;
	f->maxes[i] = max;
	r = f->results[i];
	if (r < 0)
		return r;
	if (r > max)
		r = max;
	*kept = f->keep[i] >= 0 && f->keep[i] < r ? f->keep[i] : r;
	return r;
}

/* A datapath without sockets: homa_dp_errors reads nothing. */
static struct homa_dp no_socks(void)
{
	struct homa_dp dp;

	memset(&dp, 0, sizeof(dp));
	dp.nsocks = 0;
	return dp;
}

/* Reads of HOMA_DP_BATCH at most, each after what was kept, until a
 * short read (the socket empty); dropped datagrams are not counted. */
static void homa_dp_recv_retry__batches_until_short(void **state)
{
	struct fake_reads f = { .results = { 1000, 1000, 5 },
				.keep = { -1, 60, -1 }, .n = 3 };
	struct homa_dp dp = no_socks();

	(void)state;
	assert_int_equal(homa_dp_recv_retry(&dp, fake_read, &f, 150),
			 HOMA_DP_BATCH + 60 + 5);
	assert_int_equal(f.calls, 3);
	assert_int_equal(f.offs[0], 0);
	assert_int_equal(f.maxes[0], HOMA_DP_BATCH);
	assert_int_equal(f.offs[1], HOMA_DP_BATCH);
	assert_int_equal(f.maxes[1], HOMA_DP_BATCH);
	assert_int_equal(f.offs[2], HOMA_DP_BATCH + 60);
	assert_int_equal(f.maxes[2], 150 - HOMA_DP_BATCH - 60);
	assert_int_equal(dp.counters.recv_errors, 0);
}

/* Reading stops once n are kept. */
static void homa_dp_recv_retry__stops_at_n(void **state)
{
	struct fake_reads f = { .results = { 1000 }, .keep = { -1 },
				.n = 1 };
	struct homa_dp dp = no_socks();

	(void)state;
	assert_int_equal(homa_dp_recv_retry(&dp, fake_read, &f, 10), 10);
	assert_int_equal(f.calls, 1);
	assert_int_equal(f.maxes[0], 10);
}

/* EINTR and ICMP-reporting errors are read past, HOMA_DP_RECV_RETRIES
 * times in all; they are not errors of the socket. */
static void homa_dp_recv_retry__reads_past_interruptions(void **state)
{
	struct fake_reads f = { .results = { -EINTR, -ECONNREFUSED, 3 },
				.keep = { -1, -1, -1 }, .n = 3 };
	struct fake_reads g = { .n = HOMA_DP_RECV_RETRIES };
	struct homa_dp dp = no_socks();

	(void)state;
	assert_int_equal(homa_dp_recv_retry(&dp, fake_read, &f, 8), 3);
	assert_int_equal(f.calls, 3);
	for (int i = 0; i < HOMA_DP_RECV_RETRIES; i++)
		g.results[i] = i % 2 ? -EHOSTUNREACH : -EINTR;
	assert_int_equal(homa_dp_recv_retry(&dp, fake_read, &g, 8), 0);
	assert_int_equal(g.calls, HOMA_DP_RECV_RETRIES);
	assert_int_equal(dp.counters.recv_errors, 0);
}

/* Another error is counted and ends the loop: its errno when nothing was
 * kept, else what was kept. */
static void homa_dp_recv_retry__error_counted(void **state)
{
	struct fake_reads f = { .results = { -EBADF }, .keep = { -1 },
				.n = 1 };
	struct fake_reads g = { .results = { 1000, -EBADF },
				.keep = { -1, -1 }, .n = 2 };
	struct homa_dp dp = no_socks();

	(void)state;
	assert_int_equal(homa_dp_recv_retry(&dp, fake_read, &f, 8), -EBADF);
	assert_int_equal(dp.counters.recv_errors, 1);
	assert_int_equal(homa_dp_recv_retry(&dp, fake_read, &g, 100),
			 HOMA_DP_BATCH);
	assert_int_equal(g.calls, 2);
	assert_int_equal(dp.counters.recv_errors, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_dp_addr_len__families),
		cmocka_unit_test(homa_dp_addr_any__each_family),
		cmocka_unit_test(homa_dp_addr_loopback__each_family),
		cmocka_unit_test(homa_dp_set_bufs__both_directions),
		cmocka_unit_test(homa_dp_bind_port__wildcard_then_taken),
		cmocka_unit_test(homa_dp_random__varies),
		cmocka_unit_test(homa_dp_client_port__finds_the_free_one),
		cmocka_unit_test(homa_dp_client_port__all_taken),
		cmocka_unit_test(homa_dp_client_port__other_error_ends),
		cmocka_unit_test(homa_dp_recv_retry__batches_until_short),
		cmocka_unit_test(homa_dp_recv_retry__stops_at_n),
		cmocka_unit_test(homa_dp_recv_retry__reads_past_interruptions),
		cmocka_unit_test(homa_dp_recv_retry__error_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
