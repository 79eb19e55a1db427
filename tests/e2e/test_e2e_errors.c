/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_e2e_errors.c - end-to-end error behaviour of the native API: every
 * documented EINVAL (and EADDRINUSE, ENOPROTOOPT, EFAULT, EBADF), each
 * followed by a normal RPC on the same socket; RPCs to a port where nobody
 * listens; homa_abort (one RPC, all RPCs, silently or with an errno);
 * homa_shutdown.
 */
#include "e2e_util.h"
#include "e2e_blocked.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* A one-thread echo server of @family (fails the test if it cannot). */
static struct e2e_server *start_server(int family)
{
	return e2e_must_server(family, E2E_REGION_DEFAULT, 0, 1);
}

/* A client socket of @family with the default region. */
static struct e2e_sock *client(int family)
{
	return e2e_must_socket(family, E2E_REGION_DEFAULT);
}

/* Asserts that a normal RPC (2,000-byte request, 70,000-byte response)
 * from @c to @srv succeeds: the socket still works. */
static void still_works(struct e2e_sock *c, struct e2e_server *srv,
			uint64_t k)
{
	union sockaddr_in_union dest = e2e_server_addr(srv);
	char why[256];

	if (e2e_rpc(c, &dest, 2000, 70000, 0, e2e_seed(k), 0, why,
		    sizeof why) != 0)
		fail_msg("the socket no longer works: %s", why);
}

/* homa_sendmsg on @fd with the given msghdr parts. */
static ssize_t raw_send(int fd, void *name, socklen_t namelen,
			struct iovec *iov, size_t iovlen, void *control,
			size_t controllen)
{
	struct msghdr h;

	memset(&h, 0, sizeof h);
	h.msg_name = name;
	h.msg_namelen = namelen;
	h.msg_iov = iov;
	h.msg_iovlen = iovlen;
	h.msg_control = control;
	h.msg_controllen = controllen;
	return homa_sendmsg(fd, &h, 0);
}

/* homa_recvmsg on @fd with control block @a and recvmsg flags @flags. */
static ssize_t raw_recv(int fd, struct homa_recvmsg_args *a, int flags)
{
	union sockaddr_in_union peer;
	struct msghdr h;

	memset(&h, 0, sizeof h);
	h.msg_name = &peer;
	h.msg_namelen = sizeof peer;
	h.msg_control = a;
	h.msg_controllen = sizeof *a;
	return homa_recvmsg(fd, &h, flags);
}

/* Asserts that @e is one of the two errnos @a, @b. */
static void assert_errno_in2(int e, int a, int b, const char *what)
{
	if (e != a && e != b)
		fail_msg("%s: errno %d (%s), want %s or %s", what, e,
			 strerror(e), strerror(a), strerror(b));
}

/* --- socket, bind, options ----------------------------------------- */

/* homa_socket rejects a foreign domain, type or protocol; protocol 0 and
 * IPPROTO_HOMA are accepted. */
static void errors__socket_bad_arguments(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	int fd, e;

	(void)state;
	errno = 0;
	fd = homa_socket(AF_UNIX, SOCK_DGRAM, IPPROTO_HOMA);
	e = errno;
	assert_int_equal(fd, -1);
	assert_errno_in2(e, EAFNOSUPPORT, EINVAL, "socket(AF_UNIX)");

	errno = 0;
	fd = homa_socket(AF_INET, SOCK_STREAM, IPPROTO_HOMA);
	e = errno;
	assert_int_equal(fd, -1);
	if (e != EINVAL && e != ESOCKTNOSUPPORT && e != EPROTONOSUPPORT &&
	    e != EPROTOTYPE)
		fail_msg("socket(SOCK_STREAM): errno %d (%s)", e, strerror(e));

	errno = 0;
	fd = homa_socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
	e = errno;
	assert_int_equal(fd, -1);
	assert_errno_in2(e, EPROTONOSUPPORT, EINVAL, "socket(IPPROTO_UDP)");

	fd = homa_socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(homa_close(fd), 0);
	fd = homa_socket(AF_INET6, SOCK_DGRAM, IPPROTO_HOMA);
	assert_true(fd >= 0);
	assert_int_equal(homa_close(fd), 0);
	still_works(client(AF_INET), srv, 1);
}

/* Ports from 32768 up are not server ports, and a short address is no
 * address: EINVAL; an address of the other family: EAFNOSUPPORT; the socket
 * can then bind a server port and serve. */
static void errors__bind_client_port_range(void **state)
{
	struct e2e_sock *s = e2e_socket(AF_INET, E2E_REGION_DEFAULT);
	struct e2e_sock *c = client(AF_INET);
	union sockaddr_in_union a;
	struct e2e_msg m;
	char why[256];
	struct e2e_req r = { .seed = e2e_seed(11), .cookie = 3,
			     .req_len = 3000, .resp_len = 0 };

	(void)state;
	assert_non_null(s);
	E2E_ASSERT_ERRNO(e2e_bind_port(s->fd, AF_INET, 32768), EINVAL);
	E2E_ASSERT_ERRNO(e2e_bind_port(s->fd, AF_INET, 40000), EINVAL);
	E2E_ASSERT_ERRNO(e2e_bind_port(s->fd, AF_INET, 65535), EINVAL);
	/* Short address. */
	memset(&a, 0, sizeof a);
	a.in4.sin_family = AF_INET;
	a.in4.sin_port = htons(e2e_next_port());
	E2E_ASSERT_ERRNO(homa_bind(s->fd, &a.sa, 4), EINVAL);
	e2e_addr(AF_INET6, e2e_next_port(), &a);
	E2E_ASSERT_ERRNO(homa_bind(s->fd, &a.sa, sizeof a.in6), EAFNOSUPPORT);

	for (int tries = 0; ; tries++) {
		uint16_t p = e2e_next_port();

		if (e2e_bind_port(s->fd, AF_INET, p) == 0) {
			s->port = p;
			break;
		}
		assert_int_equal(errno, EADDRINUSE);
		assert_true(tries < 500);
	}
	/* Serve one request by hand. */
	a = e2e_sock_addr(s);
	assert_int_equal(e2e_req_send(c, &a, &r), 0);
	assert_int_equal(e2e_recv(s, 0, HOMA_RECVMSG_REQUEST, 0, &m), 3000);
	E2E_ASSERT_OK(e2e_collect(s, &m, e2e_scratch(2), why, sizeof why),
		      why);
	assert_int_equal(e2e_reply(s, &m.peer, m.id, e2e_scratch(2), 3000), 0);
	e2e_release(s, &m);
	e2e_recv(c, r.id, HOMA_RECVMSG_RESPONSE, 0, &m);
	E2E_ASSERT_OK(e2e_resp_check(c, &r, &m, why, sizeof why), why);
	e2e_release(c, &m);
}

/* A port in use: EADDRINUSE; the first owner keeps serving; once it is
 * closed the port can be bound again. */
static void errors__bind_port_in_use(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *b = e2e_socket(AF_INET, E2E_REGION_DEFAULT);
	struct e2e_sock *c = client(AF_INET);
	uint16_t port = srv->sock->port;
	int fd;

	(void)state;
	assert_non_null(b);
	E2E_ASSERT_ERRNO(e2e_bind_port(b->fd, AF_INET, port), EADDRINUSE);
	still_works(c, srv, 21);
	/* b is still usable as a client. */
	still_works(b, srv, 22);
	assert_int_equal(e2e_server_stop(srv), 0);
	fd = homa_socket(AF_INET, SOCK_DGRAM, IPPROTO_HOMA);
	assert_true(fd >= 0);
	assert_int_equal(e2e_bind_port(fd, AF_INET, port), 0);
	assert_int_equal(homa_close(fd), 0);
}

/* --- buffer regions: SO_HOMA_SET_BUF, HOMA_SO_RCVBUF ------------------ */

/* map_rw - a fresh private anonymous read-write mapping of @len bytes;
 * fails the test if mmap fails.  The caller owns it. */
static uint8_t *map_rw(size_t len)
{
	void *r = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(r != MAP_FAILED);
	return r;
}

/*
 * try_set_buf - SO_HOMA_SET_BUF on @fd with @start and @length (an optlen
 * of sizeof(struct homa_set_buf_args)).
 * Returns homa_setsockopt's result (errno set on failure).
 */
static int try_set_buf(int fd, void *start, size_t length)
{
	struct homa_set_buf_args args = { start, length };

	return homa_setsockopt(fd, IPPROTO_HOMA, SO_HOMA_SET_BUF, &args,
			       sizeof args);
}

/* The set-up of the tests of a socket that has no buffer region yet. */
struct bare {
	struct e2e_server *srv; /* one-thread echo server (start_server) */
	struct e2e_sock *c;     /* AF_INET client socket without a region */
	uint8_t *r;             /* a fresh mapping, not yet given to c */
	size_t len;             /* its length in bytes */
};

/*
 * bare_start - fill @b: start the server, make the client socket with no
 * region (e2e_socket(AF_INET, 0)) and map @len bytes (map_rw); fails the
 * test if any of them cannot be had.  The mapping is the test's until
 * bare_give hands it to the socket.
 */
static void bare_start(struct bare *b, size_t len)
{
	b->srv = start_server(AF_INET);
	b->c = e2e_socket(AF_INET, 0);
	b->len = len;
	assert_non_null(b->c);
	b->r = map_rw(len);
}

/*
 * bare_give - give @b's mapping to its socket with SO_HOMA_SET_BUF (start
 * b->r, length b->len), asserting that the call succeeds, and record it as
 * the socket's region (unmapped with the socket at the end of the test).
 */
static void bare_give(struct bare *b)
{
	assert_int_equal(try_set_buf(b->c->fd, b->r, b->len), 0);
	b->c->region = b->r;
	b->c->region_len = b->len;
}

/* setsockopt and getsockopt with a level other than IPPROTO_HOMA or an
 * unknown option: ENOPROTOOPT, and nothing is set. */
static void errors__sockopt_wrong_level_or_option(void **state)
{
	struct bare b;
	struct homa_set_buf_args args;
	struct homa_rcvbuf_args out;
	socklen_t olen = sizeof out;

	(void)state;
	bare_start(&b, 4 * HOMA_BPAGE_SIZE);
	args.start = b.r;
	args.length = b.len;
	E2E_ASSERT_ERRNO(homa_setsockopt(b.c->fd, IPPROTO_TCP, SO_HOMA_SET_BUF,
					 &args, sizeof args), ENOPROTOOPT);
	E2E_ASSERT_ERRNO(homa_setsockopt(b.c->fd, IPPROTO_HOMA, 99, &args,
					 sizeof args), ENOPROTOOPT);
	E2E_ASSERT_ERRNO(homa_getsockopt(b.c->fd, IPPROTO_TCP, HOMA_SO_RCVBUF,
					 &out, &olen), ENOPROTOOPT);
	olen = sizeof out;
	E2E_ASSERT_ERRNO(homa_getsockopt(b.c->fd, IPPROTO_HOMA, 99, &out,
					 &olen), ENOPROTOOPT);
	/* Nothing was set: the region can still be given. */
	bare_give(&b);
	still_works(b.c, b.srv, 31);
}

/* SO_HOMA_SET_BUF with a region that is not page-aligned: EINVAL. */
static void errors__set_buf_misaligned(void **state)
{
	struct bare b;

	(void)state;
	bare_start(&b, 8 * HOMA_BPAGE_SIZE);
	E2E_ASSERT_ERRNO(try_set_buf(b.c->fd, b.r + 64,
				     b.len - HOMA_BPAGE_SIZE), EINVAL);
	E2E_ASSERT_ERRNO(try_set_buf(b.c->fd, b.r + 1,
				     b.len - HOMA_BPAGE_SIZE), EINVAL);
	bare_give(&b);
	still_works(b.c, b.srv, 41);
}

/* SO_HOMA_SET_BUF with fewer than two bpages: EINVAL; exactly two work. */
static void errors__set_buf_too_small(void **state)
{
	static const size_t bad[] = { 0, 4096, HOMA_BPAGE_SIZE,
				      2 * HOMA_BPAGE_SIZE - 1 };
	struct bare b;

	(void)state;
	bare_start(&b, 2 * HOMA_BPAGE_SIZE);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		errno = 0;
		if (try_set_buf(b.c->fd, b.r, bad[i]) != -1 || errno != EINVAL)
			fail_msg("region of %zu bytes: errno %d (%s), want "
				 "EINVAL", bad[i], errno, strerror(errno));
	}
	bare_give(&b);
	still_works(b.c, b.srv, 51);
}

/* A second SO_HOMA_SET_BUF: EINVAL, the first region stays in force. */
static void errors__set_buf_twice(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	size_t len = 4 * HOMA_BPAGE_SIZE;
	uint8_t *r = map_rw(len);
	struct homa_rcvbuf_args out;
	socklen_t olen = sizeof out;

	(void)state;
	E2E_ASSERT_ERRNO(try_set_buf(c->fd, r, len), EINVAL);
	assert_int_equal(homa_getsockopt(c->fd, IPPROTO_HOMA, HOMA_SO_RCVBUF,
					 &out, &olen), 0);
	assert_int_equal(out.start, (uint64_t)(uintptr_t)c->region);
	assert_int_equal(out.length, c->region_len);
	still_works(c, srv, 61);
	munmap(r, len);
}

/* SO_HOMA_SET_BUF with an optlen other than sizeof(struct
 * homa_set_buf_args): EINVAL. */
static void errors__set_buf_wrong_optlen(void **state)
{
	struct bare b;
	struct {
		struct homa_set_buf_args a;
		uint64_t extra;
	} args;

	(void)state;
	bare_start(&b, 4 * HOMA_BPAGE_SIZE);
	args.a.start = b.r;
	args.a.length = b.len;
	args.extra = 0;
	E2E_ASSERT_ERRNO(homa_setsockopt(b.c->fd, IPPROTO_HOMA, SO_HOMA_SET_BUF,
					 &args, 0), EINVAL);
	E2E_ASSERT_ERRNO(homa_setsockopt(b.c->fd, IPPROTO_HOMA, SO_HOMA_SET_BUF,
					 &args, sizeof args.a - 1), EINVAL);
	E2E_ASSERT_ERRNO(homa_setsockopt(b.c->fd, IPPROTO_HOMA, SO_HOMA_SET_BUF,
					 &args, sizeof args), EINVAL);
	bare_give(&b);
	still_works(b.c, b.srv, 71);
}

/* Asserts that getsockopt HOMA_SO_RCVBUF on @fd reports no region (0/0). */
static void assert_no_region(int fd)
{
	struct homa_rcvbuf_args out;
	socklen_t olen = sizeof out;

	memset(&out, 0xff, sizeof out);
	assert_int_equal(homa_getsockopt(fd, IPPROTO_HOMA, HOMA_SO_RCVBUF,
					 &out, &olen), 0);
	assert_int_equal(out.start, 0);
	assert_int_equal(out.length, 0);
}

/* getsockopt HOMA_SO_RCVBUF: 0/0 before a region is set; then its start and
 * the bytes usable as bpages (whole bpages only); too small optlen: EINVAL. */
static void errors__getsockopt_rcvbuf(void **state)
{
	struct bare b;
	struct homa_rcvbuf_args out;
	socklen_t olen;

	(void)state;
	bare_start(&b, 4 * HOMA_BPAGE_SIZE + HOMA_BPAGE_SIZE / 2);
	assert_no_region(b.c->fd);
	bare_give(&b);
	olen = sizeof out;
	assert_int_equal(homa_getsockopt(b.c->fd, IPPROTO_HOMA, HOMA_SO_RCVBUF,
					 &out, &olen), 0);
	assert_int_equal(olen, sizeof out);
	assert_int_equal(out.start, (uint64_t)(uintptr_t)b.r);
	assert_int_equal(out.length, 4 * HOMA_BPAGE_SIZE);
	olen = sizeof out - 1;
	E2E_ASSERT_ERRNO(homa_getsockopt(b.c->fd, IPPROTO_HOMA, HOMA_SO_RCVBUF,
					 &out, &olen), EINVAL);
	still_works(b.c, b.srv, 81);
}

/* setsockopt SO_HOMA_SET_BUF with a NULL optval, getsockopt HOMA_SO_RCVBUF
 * with a NULL optval or optlen: EFAULT (what the kernel gives for a bad
 * user pointer), and nothing is set: the region can still be given. */
static void errors__sockopt_null_pointers(void **state)
{
	struct bare b;
	struct homa_rcvbuf_args out;
	socklen_t olen = sizeof out;

	(void)state;
	bare_start(&b, 4 * HOMA_BPAGE_SIZE);
	E2E_ASSERT_ERRNO(homa_setsockopt(b.c->fd, IPPROTO_HOMA, SO_HOMA_SET_BUF,
					 NULL, sizeof(struct homa_set_buf_args)),
			 EFAULT);
	E2E_ASSERT_ERRNO(homa_getsockopt(b.c->fd, IPPROTO_HOMA, HOMA_SO_RCVBUF,
					 NULL, &olen), EFAULT);
	E2E_ASSERT_ERRNO(homa_getsockopt(b.c->fd, IPPROTO_HOMA, HOMA_SO_RCVBUF,
					 &out, NULL), EFAULT);
	assert_no_region(b.c->fd);
	bare_give(&b);
	still_works(b.c, b.srv, 401);
}

/* Bytes of address space reserved (PROT_NONE, nothing committed) for the
 * regions of 2^32 bytes and more below. */
#define HUGE_REGION (((size_t)1 << 32) + 2 * HOMA_BPAGE_SIZE)

/* SO_HOMA_SET_BUF with a NULL start, or with more than 2^32 bytes of
 * bpages: EINVAL, and the socket then takes a normal region and works; a
 * region of exactly 2^32 bytes is accepted (on another socket; the region
 * is only address space, never touched). */
static void errors__set_buf_null_or_over_4gib(void **state)
{
	const size_t four_g = (size_t)1 << 32;
	struct bare b;
	struct e2e_sock *d = e2e_socket(AF_INET, 0);
	uint8_t *huge = mmap(NULL, HUGE_REGION, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			     0);
	struct homa_rcvbuf_args out;
	socklen_t olen = sizeof out;

	(void)state;
	bare_start(&b, 4 * HOMA_BPAGE_SIZE);
	assert_non_null(d);
	E2E_ASSERT_ERRNO(try_set_buf(b.c->fd, NULL, b.len), EINVAL);
	E2E_ASSERT_ERRNO(try_set_buf(b.c->fd, NULL, 2 * HOMA_BPAGE_SIZE),
			 EINVAL);
	/* Lengths alone are refused, whatever the start maps. */
	E2E_ASSERT_ERRNO(try_set_buf(b.c->fd, b.r, four_g + HOMA_BPAGE_SIZE),
			 EINVAL);
	E2E_ASSERT_ERRNO(try_set_buf(b.c->fd, b.r, (size_t)1 << 40), EINVAL);
	E2E_ASSERT_ERRNO(try_set_buf(b.c->fd, b.r,
				     SIZE_MAX & ~(size_t)0xFFFF), EINVAL);
	if ((void *)huge == MAP_FAILED) {
		e2e_log("cannot reserve %zu bytes of address space: the "
			"2^32-byte region is not tried", HUGE_REGION);
	} else {
		E2E_ASSERT_ERRNO(try_set_buf(b.c->fd, huge,
					     four_g + HOMA_BPAGE_SIZE),
				 EINVAL);
		E2E_ASSERT_ERRNO(try_set_buf(b.c->fd, huge, HUGE_REGION),
				 EINVAL);
		assert_int_equal(try_set_buf(d->fd, huge, four_g), 0);
		assert_int_equal(homa_getsockopt(d->fd, IPPROTO_HOMA,
						 HOMA_SO_RCVBUF, &out, &olen),
				 0);
		assert_int_equal(out.start, (uint64_t)(uintptr_t)huge);
		assert_int_equal(out.length, four_g);
		assert_int_equal(e2e_sock_close(d), 0);
		munmap(huge, HUGE_REGION);
	}
	bare_give(&b);
	still_works(b.c, b.srv, 411);
}

/* --- sendmsg ------------------------------------------------------- */

/* homa_sendmsg without msg_control, or with msg_controllen neither 0 nor
 * sizeof(struct homa_sendmsg_args): EINVAL. */
static void errors__sendmsg_bad_control(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	union sockaddr_in_union dest = e2e_server_addr(srv);
	uint8_t buf[100];
	struct iovec iov = { buf, sizeof buf };
	struct {
		struct homa_sendmsg_args a;
		uint64_t extra;
	} args;
	static const size_t bad_len[] = { 8, 15, 17, 24 };

	(void)state;
	memset(&args, 0, sizeof args);
	e2e_fill(buf, sizeof buf, e2e_seed(91), 0, 0);
	E2E_ASSERT_ERRNO(raw_send(c->fd, &dest, sizeof dest.in4, &iov, 1,
				  NULL, 0), EINVAL);
	E2E_ASSERT_ERRNO(raw_send(c->fd, &dest, sizeof dest.in4, &iov, 1,
				  NULL, sizeof args.a), EINVAL);
	for (size_t i = 0; i < sizeof bad_len / sizeof bad_len[0]; i++) {
		errno = 0;
		if (raw_send(c->fd, &dest, sizeof dest.in4, &iov, 1, &args,
			     bad_len[i]) != -1 || errno != EINVAL)
			fail_msg("msg_controllen %zu: errno %d (%s), want "
				 "EINVAL", bad_len[i], errno, strerror(errno));
	}
	still_works(c, srv, 92);
}

/* homa_sendmsg without a destination, with a foreign address family, or
 * with a short address: EINVAL; with a foreign address family:
 * EAFNOSUPPORT, as the kernel module gives. */
static void errors__sendmsg_bad_destination(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	union sockaddr_in_union dest = e2e_server_addr(srv), bad;
	uint8_t buf[100];
	struct iovec iov = { buf, sizeof buf };
	struct homa_sendmsg_args args = { 0, 0 };
	int e;

	(void)state;
	e2e_fill(buf, sizeof buf, e2e_seed(101), 0, 0);
	E2E_ASSERT_ERRNO(raw_send(c->fd, NULL, 0, &iov, 1, &args,
				  sizeof args), EINVAL);
	E2E_ASSERT_ERRNO(raw_send(c->fd, NULL, sizeof dest.in4, &iov, 1,
				  &args, sizeof args), EINVAL);
	bad = dest;
	bad.sa.sa_family = AF_UNIX;
	errno = 0;
	assert_int_equal(raw_send(c->fd, &bad, sizeof bad.in4, &iov, 1, &args,
				  sizeof args), -1);
	e = errno;
	assert_int_equal(e, EAFNOSUPPORT);
	e2e_addr(AF_INET6, srv->sock->port, &bad);
	errno = 0;
	assert_int_equal(raw_send(c->fd, &bad, sizeof bad.in6, &iov, 1, &args,
				  sizeof args), -1);
	e = errno;
	assert_int_equal(e, EAFNOSUPPORT);
	E2E_ASSERT_ERRNO(raw_send(c->fd, &dest, 4, &iov, 1, &args,
				  sizeof args), EINVAL);
	still_works(c, srv, 102);
}

/* Messages of 0 bytes and of more than 1,000,000 bytes: EINVAL. */
static void errors__sendmsg_bad_length(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	union sockaddr_in_union dest = e2e_server_addr(srv);
	uint8_t *buf = e2e_alloc(HOMA_MAX_MESSAGE_LENGTH + 1);
	struct iovec iov[2];
	struct homa_sendmsg_args args = { 0, 0 };

	(void)state;
	assert_non_null(buf);
	iov[0].iov_base = buf;
	iov[0].iov_len = 0;
	E2E_ASSERT_ERRNO(raw_send(c->fd, &dest, sizeof dest.in4, iov, 1,
				  &args, sizeof args), EINVAL);
	E2E_ASSERT_ERRNO(raw_send(c->fd, &dest, sizeof dest.in4, NULL, 0,
				  &args, sizeof args), EINVAL);
	iov[0].iov_len = HOMA_MAX_MESSAGE_LENGTH + 1;
	E2E_ASSERT_ERRNO(raw_send(c->fd, &dest, sizeof dest.in4, iov, 1,
				  &args, sizeof args), EINVAL);
	iov[0].iov_len = 500000;
	iov[1].iov_base = buf + 500000;
	iov[1].iov_len = 500001;
	E2E_ASSERT_ERRNO(raw_send(c->fd, &dest, sizeof dest.in4, iov, 2,
				  &args, sizeof args), EINVAL);
	E2E_ASSERT_ERRNO(homa_send(c->fd, buf, 0, &dest, &args.id, 0),
			 EINVAL);
	E2E_ASSERT_ERRNO(homa_send(c->fd, buf, HOMA_MAX_MESSAGE_LENGTH + 1,
				   &dest, &args.id, 0), EINVAL);
	still_works(c, srv, 112);
}

/* A reply with an even id (a client id): EINVAL, on a client socket and on
 * a server socket. */
static void errors__reply_with_even_id(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	struct e2e_sock *s = e2e_server_socket(AF_INET, E2E_REGION_DEFAULT);
	union sockaddr_in_union dest = e2e_server_addr(srv);
	uint8_t buf[100];

	(void)state;
	assert_non_null(s);
	e2e_fill(buf, sizeof buf, e2e_seed(121), 0, 0);
	E2E_ASSERT_ERRNO(e2e_reply(c, &dest, 2, buf, sizeof buf), EINVAL);
	E2E_ASSERT_ERRNO(e2e_reply(s, &dest, 4, buf, sizeof buf), EINVAL);
	E2E_ASSERT_ERRNO(e2e_reply(c, &dest, 0x100000000ull, buf, sizeof buf),
			 EINVAL);
	still_works(c, srv, 122);
	still_works(s, srv, 123);
}

/* homa_send, homa_sendv, homa_reply and homa_replyv without a destination:
 * EINVAL; with one of another family than the socket: EAFNOSUPPORT; a NULL message
 * buffer, iovec array or piece: EFAULT (as homa_sendmsg with a NULL
 * msg_iov). */
static void errors__send_wrappers_bad_pointers(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	union sockaddr_in_union dest = e2e_server_addr(srv), six;
	struct homa_sendmsg_args args = { 0, 0 };
	uint8_t buf[100];
	struct iovec iov[2] = { { buf, 60 }, { NULL, 40 } };
	uint64_t id = 0;

	(void)state;
	e2e_fill(buf, sizeof buf, e2e_seed(421), 0, 0);
	e2e_addr(AF_INET6, srv->sock->port, &six);
	E2E_ASSERT_ERRNO(homa_send(c->fd, buf, sizeof buf, NULL, &id, 1),
			 EINVAL);
	E2E_ASSERT_ERRNO(homa_sendv(c->fd, iov, 1, NULL, &id, 1), EINVAL);
	E2E_ASSERT_ERRNO(homa_reply(c->fd, buf, sizeof buf, NULL, 1), EINVAL);
	E2E_ASSERT_ERRNO(homa_replyv(c->fd, iov, 1, NULL, 1), EINVAL);
	E2E_ASSERT_ERRNO(homa_send(c->fd, buf, sizeof buf, &six, &id, 1),
			 EAFNOSUPPORT);
	E2E_ASSERT_ERRNO(homa_sendv(c->fd, iov, 1, &six, &id, 1),
			 EAFNOSUPPORT);
	assert_int_equal(id, 0);
	E2E_ASSERT_ERRNO(homa_send(c->fd, NULL, sizeof buf, &dest, &id, 1),
			 EFAULT);
	E2E_ASSERT_ERRNO(homa_sendv(c->fd, NULL, 1, &dest, &id, 1), EFAULT);
	E2E_ASSERT_ERRNO(homa_sendv(c->fd, iov, 2, &dest, &id, 1), EFAULT);
	E2E_ASSERT_ERRNO(homa_reply(c->fd, NULL, sizeof buf, &dest, 1),
			 EFAULT);
	E2E_ASSERT_ERRNO(homa_replyv(c->fd, iov, 2, &dest, 1), EFAULT);
	E2E_ASSERT_ERRNO(raw_send(c->fd, &dest, sizeof dest.in4, NULL, 1,
				  &args, sizeof args), EFAULT);
	assert_int_equal(id, 0);
	assert_int_equal(args.id, 0);
	still_works(c, srv, 422);
	E2E_ASSERT_SERVER_OK(srv);
}

/* homa_sendv and homa_replyv with a negative iovcnt, or with more than
 * IOV_MAX pieces: EINVAL; IOV_MAX pieces of one byte are a valid request. */
static void errors__sendv_bad_iovcnt(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	union sockaddr_in_union dest = e2e_server_addr(srv);
	struct iovec *iov = e2e_alloc((IOV_MAX + 1) * sizeof *iov);
	uint8_t *buf = e2e_alloc(IOV_MAX + 1);
	struct e2e_req r = { .seed = e2e_seed(426), .cookie = 0x426,
			     .req_len = IOV_MAX, .resp_len = E2E_RESP_ECHO };
	struct e2e_msg m;
	char why[256];
	uint64_t id = 0;

	(void)state;
	e2e_fill(buf, IOV_MAX, r.seed, r.resp_len, 0);
	for (int i = 0; i <= IOV_MAX; i++) {
		iov[i].iov_base = buf + i;
		iov[i].iov_len = 1;
	}
	E2E_ASSERT_ERRNO(homa_sendv(c->fd, iov, -1, &dest, &id, 1), EINVAL);
	E2E_ASSERT_ERRNO(homa_sendv(c->fd, iov, INT_MIN, &dest, &id, 1),
			 EINVAL);
	E2E_ASSERT_ERRNO(homa_sendv(c->fd, iov, IOV_MAX + 1, &dest, &id, 1),
			 EINVAL);
	E2E_ASSERT_ERRNO(homa_replyv(c->fd, iov, -1, &dest, 1), EINVAL);
	E2E_ASSERT_ERRNO(homa_replyv(c->fd, iov, IOV_MAX + 1, &dest, 1),
			 EINVAL);
	assert_int_equal(id, 0);
	assert_int_equal(homa_sendv(c->fd, iov, IOV_MAX, &dest, &r.id,
				    r.cookie), 0);
	e2e_recv(c, r.id, HOMA_RECVMSG_RESPONSE, 0, &m);
	E2E_ASSERT_OK(e2e_resp_check(c, &r, &m, why, sizeof why), why);
	e2e_release(c, &m);
	still_works(c, srv, 427);
	E2E_ASSERT_SERVER_OK(srv);
}

/* Receives the next request on server socket @s (@len bytes expected) into
 * @req and makes its response (as the helper servers do) in @resp; returns
 * the response's length and leaves the request's id and peer in @m. */
static size_t take_request(struct e2e_sock *s, size_t len, uint8_t *req,
			   uint8_t *resp, struct e2e_msg *m)
{
	char why[256];
	ssize_t rlen;

	assert_int_equal(e2e_recv(s, 0, HOMA_RECVMSG_REQUEST, 0, m),
			 (ssize_t)len);
	rlen = e2e_take_request(s, m, req, 0, resp, why, sizeof why);
	if (rlen < 0)
		fail_msg("request of %zu bytes: %s", len, why);
	return (size_t)rlen;
}

/* wait_acked - wait until server socket @s has ended @n RPCs on its
 * clients' ACKs (its counter server_rpcs_acked): a client ACKs a response
 * it took and, asked with NEED_ACK, one of an RPC it no longer knows (an
 * aborted one), after every packet of it that was not lost has been read
 * and dropped.  So once both RPCs of an abort test are acked, nothing of
 * the aborted RPC can still surface, whether or not its response (one
 * packet on loopback) was lost on the way.  A guard of 20 s only ends a
 * hang. */
static void wait_acked(struct e2e_sock *s, uint64_t n)
{
	for (int i = 0; e2e_stat(s->fd, "server_rpcs_acked") < n; i++) {
		if (i == 20000) {
			e2e_log_stats(s->fd, "server");
			fail_msg("the server ended %llu of %llu RPCs on ACKs",
				 (unsigned long long)e2e_stat(
					 s->fd, "server_rpcs_acked"),
				 (unsigned long long)n);
		}
		e2e_sleep_ms(1);
	}
}

/* A response to an RPC that has ended (its response delivered and
 * acknowledged by the client, so the server socket has forgotten it) is
 * dropped and the call returns 0, through homa_reply and homa_sendmsg, as
 * with the kernel module; until the acknowledgment arrives the RPC still
 * has a response and a second one is EINVAL.  The socket serves on. */
static void errors__reply_to_ended_rpc(void **state)
{
	struct e2e_req a = { .seed = e2e_seed(441), .cookie = 0x441,
			     .req_len = 200, .resp_len = 3000 };
	struct e2e_hand h;
	union sockaddr_in_union peer;
	struct e2e_msg m;
	uint64_t acked, id;
	char why[256];
	size_t rlen;

	(void)state;
	assert_int_equal(e2e_hand_open(&h, AF_INET), 0);
	acked = e2e_stat(h.s->fd, "server_rpcs_acked");
	assert_int_equal(e2e_req_send(h.c, &h.dest, &a), 0);
	rlen = take_request(h.s, a.req_len, h.req, h.resp, &m);
	id = m.id;
	peer = m.peer;
	assert_int_equal(homa_reply(h.s->fd, h.resp, rlen, &peer, id), 0);
	/* The client has not taken the response, so it cannot have acked
	 * it: the RPC has a response already. */
	errno = 0;
	assert_int_equal(homa_reply(h.s->fd, h.resp, 100, &peer, id), -1);
	assert_int_equal(errno, EINVAL);
	e2e_recv(h.c, a.id, HOMA_RECVMSG_RESPONSE, 0, &m);
	E2E_ASSERT_OK(e2e_resp_check(h.c, &a, &m, why, sizeof why), why);
	e2e_release(h.c, &m);
	/* The client's ACK ends the server's RPC (server_rpcs_acked). */
	wait_acked(h.s, acked + 1);
	assert_int_equal(homa_reply(h.s->fd, h.resp, 100, &peer, id), 0);
	assert_int_equal(e2e_reply(h.s, &peer, id, h.resp, 100), 0);
	a.seed = e2e_seed(442);
	a.cookie = 0x442;
	assert_int_equal(e2e_req_send(h.c, &h.dest, &a), 0);
	rlen = take_request(h.s, a.req_len, h.req, h.resp, &m);
	assert_int_equal(homa_reply(h.s->fd, h.resp, rlen, &m.peer, m.id), 0);
	e2e_recv(h.c, a.id, HOMA_RECVMSG_RESPONSE, 0, &m);
	E2E_ASSERT_OK(e2e_resp_check(h.c, &a, &m, why, sizeof why), why);
	e2e_release(h.c, &m);
}

/* A response to a request the application has not received yet (complete
 * and waiting in the socket), and a second response to a request (the
 * first still on its way): EINVAL, through homa_reply and homa_sendmsg.
 * The requests are then served normally and the responses arrive intact;
 * a response to an RPC the socket does not know is dropped (success).
 * The client's region (20 bpages) holds one 1,000,000-byte response
 * (x, kept unreleased) but not two: a's response of that size waits for
 * buffers, so it cannot be complete and acknowledged (which would end the
 * server's RPC) when it is answered again. */
static void errors__reply_before_receive_or_twice(void **state)
{
	struct e2e_req x = { .seed = e2e_seed(430), .cookie = 0x430,
			     .req_len = 100, .resp_len = 1000000 };
	struct e2e_req a = { .seed = e2e_seed(431), .cookie = 0x431,
			     .req_len = 100, .resp_len = 1000000 };
	struct e2e_req b = { .seed = e2e_seed(432), .cookie = 0x432,
			     .req_len = 5000, .resp_len = 3000 };
	struct e2e_hand h;
	union sockaddr_in_union peer;
	struct e2e_msg m, mx;
	char why[256];
	size_t rlen;

	(void)state;
	assert_int_equal(e2e_hand_open(&h, AF_INET), 0);
	assert_int_equal(e2e_sock_close(h.c), 0);
	h.c = e2e_socket(AF_INET, 20 * HOMA_BPAGE_SIZE);
	assert_non_null(h.c);
	/* x: answered and received, its bpages kept. */
	assert_int_equal(e2e_req_send(h.c, &h.dest, &x), 0);
	rlen = take_request(h.s, x.req_len, h.req, h.resp, &m);
	assert_int_equal(homa_reply(h.s->fd, h.resp, rlen, &m.peer, m.id), 0);
	e2e_recv(h.c, x.id, HOMA_RECVMSG_RESPONSE, 0, &mx);
	E2E_ASSERT_OK(e2e_resp_check(h.c, &x, &mx, why, sizeof why), why);
	/* a: received, answered, then answered again while its
	 * 1,000,000-byte response is still on its way. */
	assert_int_equal(e2e_req_send(h.c, &h.dest, &a), 0);
	rlen = take_request(h.s, a.req_len, h.req, h.resp, &m);
	assert_int_equal(m.id, a.id ^ 1);
	peer = m.peer;
	assert_int_equal(homa_reply(h.s->fd, h.resp, rlen, &peer, m.id), 0);
	E2E_ASSERT_ERRNO(homa_reply(h.s->fd, h.resp, 100, &peer, m.id),
			 EINVAL);
	E2E_ASSERT_ERRNO(e2e_reply(h.s, &peer, m.id, h.resp, rlen), EINVAL);
	/* x's bpages back: a's response gets buffers and arrives. */
	e2e_release(h.c, &mx);
	e2e_recv(h.c, a.id, HOMA_RECVMSG_RESPONSE, 0, &m);
	E2E_ASSERT_OK(e2e_resp_check(h.c, &a, &m, why, sizeof why), why);
	e2e_release(h.c, &m);

	/* b: complete in the server socket, not yet received. */
	assert_int_equal(e2e_req_send(h.c, &h.dest, &b), 0);
	if (!e2e_wait_readable(h.s->fd, 5000)) {
		e2e_log_stats(h.s->fd, "server");
		fail_msg("request b not ready within 5 s");
	}
	E2E_ASSERT_ERRNO(homa_reply(h.s->fd, h.resp, 100, &peer, b.id ^ 1),
			 EINVAL);
	E2E_ASSERT_ERRNO(e2e_reply(h.s, &peer, b.id ^ 1, h.resp, 100),
			 EINVAL);
	/* An id the server socket never saw: dropped, the call succeeds. */
	assert_int_equal(homa_reply(h.s->fd, h.resp, 100, &peer,
				    (b.id ^ 1) + 0x100000000ull), 0);
	rlen = take_request(h.s, b.req_len, h.req, h.resp, &m);
	assert_int_equal(m.id, b.id ^ 1);
	assert_int_equal(homa_reply(h.s->fd, h.resp, rlen, &m.peer, m.id), 0);
	e2e_recv(h.c, b.id, HOMA_RECVMSG_RESPONSE, 0, &m);
	E2E_ASSERT_OK(e2e_resp_check(h.c, &b, &m, why, sizeof why), why);
	e2e_release(h.c, &m);
}

/* --- recvmsg ------------------------------------------------------- */

/* args.flags without REQUEST or RESPONSE, or with bits outside
 * HOMA_RECVMSG_VALID_FLAGS: EINVAL. */
static void errors__recvmsg_bad_flags(void **state)
{
	static const int bad[] = {
		0, HOMA_RECVMSG_NONBLOCKING,
		HOMA_RECVMSG_RESPONSE | 0x08,
		HOMA_RECVMSG_REQUEST | HOMA_RECVMSG_RESPONSE | 0x100,
		HOMA_RECVMSG_RESPONSE | HOMA_RECVMSG_NONBLOCKING |
			(int)0x80000000u,
	};
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	struct homa_recvmsg_args a;

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&a, 0, sizeof a);
		a.flags = bad[i];
		errno = 0;
		if (raw_recv(c->fd, &a, 0) != -1 || errno != EINVAL)
			fail_msg("flags 0x%x: errno %d (%s), want EINVAL",
				 (unsigned)bad[i], errno, strerror(errno));
	}
	still_works(c, srv, 132);
}

/* num_bpages above HOMA_MAX_BPAGES: EINVAL. */
static void errors__recvmsg_too_many_bpages(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	struct homa_recvmsg_args a;

	(void)state;
	memset(&a, 0, sizeof a);
	a.flags = HOMA_RECVMSG_RESPONSE | HOMA_RECVMSG_NONBLOCKING;
	a.num_bpages = HOMA_MAX_BPAGES + 1;
	E2E_ASSERT_ERRNO(raw_recv(c->fd, &a, 0), EINVAL);
	a.num_bpages = 1000;
	E2E_ASSERT_ERRNO(raw_recv(c->fd, &a, 0), EINVAL);
	still_works(c, srv, 142);
}

/* Receives the response of a fresh RPC of @resp_len bytes on @c into @m
 * (the test then owns its bpages); fails the test on error. */
static void get_response(struct e2e_sock *c, struct e2e_server *srv,
			 uint32_t resp_len, uint64_t k, struct e2e_msg *m)
{
	union sockaddr_in_union dest = e2e_server_addr(srv);
	struct e2e_req r = { .seed = e2e_seed(k), .cookie = k,
			     .req_len = 20, .resp_len = resp_len };
	char why[256];

	assert_int_equal(e2e_req_send(c, &dest, &r), 0);
	e2e_recv(c, r.id, HOMA_RECVMSG_RESPONSE, 0, m);
	E2E_ASSERT_OK(e2e_resp_check(c, &r, m, why, sizeof why), why);
}

/* Hands back the @n offsets @offs on @c with a nonblocking recvmsg;
 * returns its result with errno, and the num_bpages it returned. */
static ssize_t hand_back(struct e2e_sock *c, const uint32_t *offs, uint32_t n,
			 uint32_t *num_out)
{
	struct homa_recvmsg_args a;
	ssize_t r;
	int e;

	memset(&a, 0, sizeof a);
	a.flags = HOMA_RECVMSG_RESPONSE | HOMA_RECVMSG_NONBLOCKING;
	a.num_bpages = n;
	memcpy(a.bpage_offsets, offs, n * sizeof *offs);
	r = raw_recv(c->fd, &a, 0);
	e = errno;
	if (num_out)
		*num_out = a.num_bpages;
	errno = e;
	return r;
}

/* Offsets the application does not own (outside the region, or a bpage
 * never given out): EINVAL and none of the offsets of that call is taken. */
static void errors__recvmsg_offset_not_owned(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	struct e2e_msg m;
	uint32_t offs[3], n;

	(void)state;
	get_response(c, srv, 70000, 151, &m);
	assert_int_equal(m.num_bpages, 2);
	offs[0] = m.offs[0];
	offs[1] = m.offs[1];

	offs[2] = (uint32_t)c->region_len;            /* past the end */
	E2E_ASSERT_ERRNO(hand_back(c, offs, 3, NULL), EINVAL);
	offs[2] = (uint32_t)c->region_len + HOMA_BPAGE_SIZE;
	E2E_ASSERT_ERRNO(hand_back(c, offs, 3, NULL), EINVAL);
	offs[2] = (uint32_t)c->region_len - HOMA_BPAGE_SIZE; /* never used */
	E2E_ASSERT_ERRNO(hand_back(c, offs, 3, NULL), EINVAL);
	offs[2] = 0xFFFFFFFFu;
	E2E_ASSERT_ERRNO(hand_back(c, offs, 3, NULL), EINVAL);

	/* None was taken: the two real ones are accepted now. */
	errno = 0;
	assert_int_equal(hand_back(c, offs, 2, &n), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(n, 0);
	still_works(c, srv, 152);
}

/* A bpage handed back twice (in one call, or again in a later call):
 * EINVAL. */
static void errors__recvmsg_offset_returned_twice(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	struct e2e_msg m;
	uint32_t offs[3], n;

	(void)state;
	get_response(c, srv, 70000, 161, &m);
	assert_int_equal(m.num_bpages, 2);
	offs[0] = m.offs[0];
	offs[1] = m.offs[1];
	offs[2] = m.offs[0];
	E2E_ASSERT_ERRNO(hand_back(c, offs, 3, NULL), EINVAL);
	errno = 0;
	assert_int_equal(hand_back(c, offs, 2, &n), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(n, 0);
	E2E_ASSERT_ERRNO(hand_back(c, offs, 1, NULL), EINVAL);
	E2E_ASSERT_ERRNO(hand_back(c, offs + 1, 1, NULL), EINVAL);
	still_works(c, srv, 162);
}

/* The fragment of a small message handed back twice is refused even while
 * another message still uses the same bpage; that message's own fragment
 * is then accepted and its contents were intact. */
static void errors__recvmsg_fragment_returned_twice(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	struct e2e_msg m1, m2;
	uint32_t n;

	(void)state;
	get_response(c, srv, 1000, 171, &m1);
	get_response(c, srv, 1000, 172, &m2);
	assert_int_equal(m1.num_bpages, 1);
	assert_int_equal(m2.num_bpages, 1);
	errno = 0;
	assert_int_equal(hand_back(c, m1.offs, 1, &n), -1);
	assert_int_equal(errno, EAGAIN);
	E2E_ASSERT_ERRNO(hand_back(c, m1.offs, 1, NULL), EINVAL);
	errno = 0;
	assert_int_equal(hand_back(c, m2.offs, 1, &n), -1);
	assert_int_equal(errno, EAGAIN);
	still_works(c, srv, 173);
}

/* recvmsg for an id that names no RPC (never sent, or already received):
 * EINVAL at once. */
static void errors__recvmsg_id_of_no_rpc(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	struct homa_recvmsg_args a;
	struct e2e_msg m;

	(void)state;
	memset(&a, 0, sizeof a);
	a.flags = HOMA_RECVMSG_RESPONSE;
	a.id = 123456;
	E2E_ASSERT_ERRNO(raw_recv(c->fd, &a, 0), EINVAL);
	get_response(c, srv, 100, 181, &m);
	e2e_release(c, &m);
	memset(&a, 0, sizeof a);
	a.flags = HOMA_RECVMSG_RESPONSE;
	a.id = m.id;
	E2E_ASSERT_ERRNO(raw_recv(c->fd, &a, 0), EINVAL);
	still_works(c, srv, 182);
}

/* recvmsg on a socket without a buffer region: EINVAL; once a region is
 * given the socket works. */
static void errors__recvmsg_without_region(void **state)
{
	struct bare b;
	struct homa_recvmsg_args a;

	(void)state;
	bare_start(&b, 8 * HOMA_BPAGE_SIZE);
	memset(&a, 0, sizeof a);
	a.flags = HOMA_RECVMSG_RESPONSE | HOMA_RECVMSG_NONBLOCKING;
	E2E_ASSERT_ERRNO(raw_recv(b.c->fd, &a, 0), EINVAL);
	memset(&a, 0, sizeof a);
	a.flags = HOMA_RECVMSG_RESPONSE;
	E2E_ASSERT_ERRNO(raw_recv(b.c->fd, &a, 0), EINVAL);
	bare_give(&b);
	still_works(b.c, b.srv, 191);
}

/* recvmsg with msg_controllen other than sizeof(struct homa_recvmsg_args)
 * (0, too small, too large) or with no msg_control: EINVAL at once. */
static void errors__recvmsg_control_wrong_size(void **state)
{
	const size_t good = sizeof(struct homa_recvmsg_args);
	const size_t bad[] = { 0, 1, 8, good - 8, good - 1, good + 1,
			       good + 8 };
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	union sockaddr_in_union peer;
	struct {
		struct homa_recvmsg_args a;
		uint64_t extra;
	} args;
	struct msghdr h;

	(void)state;
	for (size_t i = 0; i <= sizeof bad / sizeof bad[0]; i++) {
		memset(&args, 0, sizeof args);
		args.a.flags = HOMA_RECVMSG_RESPONSE | HOMA_RECVMSG_REQUEST |
			       HOMA_RECVMSG_NONBLOCKING;
		memset(&h, 0, sizeof h);
		h.msg_name = &peer;
		h.msg_namelen = sizeof peer;
		/* The last round: the right size, no control block. */
		h.msg_control = i < sizeof bad / sizeof bad[0] ? &args : NULL;
		h.msg_controllen = i < sizeof bad / sizeof bad[0] ? bad[i]
								 : good;
		errno = 0;
		if (homa_recvmsg(c->fd, &h, 0) != -1 || errno != EINVAL)
			fail_msg("msg_controllen %zu%s: errno %d (%s), want "
				 "EINVAL", (size_t)h.msg_controllen,
				 h.msg_control ? "" : ", msg_control NULL",
				 errno, strerror(errno));
	}
	still_works(c, srv, 436);
}

/* Every call on a descriptor that is not an open Homa socket: EBADF. */
static void errors__bad_descriptor(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	union sockaddr_in_union dest = e2e_server_addr(srv);
	struct homa_sendmsg_args sa = { 0, 0 };
	struct homa_recvmsg_args ra;
	struct homa_rcvbuf_args out;
	socklen_t olen = sizeof out;
	uint8_t buf[16] = { 0 };
	struct iovec iov = { buf, sizeof buf };
	const char *names[4];
	uint64_t values[4];
	int closed, pfd[2], fds[2];
	uint64_t id;

	(void)state;
	closed = homa_socket(AF_INET, SOCK_DGRAM, IPPROTO_HOMA);
	assert_true(closed >= 0);
	assert_int_equal(homa_close(closed), 0);
	fds[0] = -1;
	fds[1] = closed;
	for (int i = 0; i < 2; i++) {
		int fd = fds[i];

		memset(&ra, 0, sizeof ra);
		ra.flags = HOMA_RECVMSG_RESPONSE | HOMA_RECVMSG_NONBLOCKING;
		E2E_ASSERT_ERRNO(e2e_bind_port(fd, AF_INET, e2e_next_port()),
				 EBADF);
		E2E_ASSERT_ERRNO(homa_setsockopt(fd, IPPROTO_HOMA,
						 SO_HOMA_SET_BUF, buf,
						 sizeof(struct homa_set_buf_args)),
				 EBADF);
		olen = sizeof out;
		E2E_ASSERT_ERRNO(homa_getsockopt(fd, IPPROTO_HOMA,
						 HOMA_SO_RCVBUF, &out, &olen),
				 EBADF);
		E2E_ASSERT_ERRNO(raw_send(fd, &dest, sizeof dest.in4, &iov, 1,
					  &sa, sizeof sa), EBADF);
		E2E_ASSERT_ERRNO(raw_recv(fd, &ra, 0), EBADF);
		E2E_ASSERT_ERRNO(homa_send(fd, buf, sizeof buf, &dest, &id, 0),
				 EBADF);
		E2E_ASSERT_ERRNO(homa_reply(fd, buf, sizeof buf, &dest, 1),
				 EBADF);
		E2E_ASSERT_ERRNO(homa_abort(fd, 0, 0), EBADF);
		E2E_ASSERT_ERRNO(homa_shutdown(fd, SHUT_RDWR), EBADF);
		E2E_ASSERT_ERRNO(homa_stats_get(fd, names, values, 4), EBADF);
		E2E_ASSERT_ERRNO(homa_close(fd), EBADF);
	}
	/* A kernel descriptor that is not a Homa socket. */
	assert_int_equal(pipe(pfd), 0);
	memset(&ra, 0, sizeof ra);
	ra.flags = HOMA_RECVMSG_RESPONSE | HOMA_RECVMSG_NONBLOCKING;
	errno = 0;
	assert_int_equal(raw_recv(pfd[0], &ra, 0), -1);
	assert_errno_in2(errno, EBADF, ENOTSOCK, "recvmsg on a pipe");
	errno = 0;
	assert_int_equal(raw_send(pfd[1], &dest, sizeof dest.in4, &iov, 1,
				  &sa, sizeof sa), -1);
	assert_errno_in2(errno, EBADF, ENOTSOCK, "sendmsg on a pipe");
	close(pfd[0]);
	close(pfd[1]);
	still_works(client(AF_INET), srv, 201);
}

/* --- unreachable servers ------------------------------------------- */

/* Longest wait for an RPC's outcome where the library's own timeouts
 * (timeout_ticks, alive_timeout_ticks: 1 s at most) must end it: a guard
 * against a hang only, not a bound on the library's speed. */
#define OUTCOME_GUARD_MS 30000

/* Sends a request from @c to @dest and waits for its outcome; asserts that
 * it fails with ENOTCONN or ETIMEDOUT, naming the RPC. */
static void expect_unreachable(struct e2e_sock *c,
			       const union sockaddr_in_union *dest,
			       uint64_t k)
{
	struct e2e_req r = { .seed = e2e_seed(k), .cookie = 0xDEAD0000 + k,
			     .req_len = 5000, .resp_len = 0 };
	struct e2e_msg m;

	assert_int_equal(e2e_req_send(c, dest, &r), 0);
	if (!e2e_wait_readable(c->fd, OUTCOME_GUARD_MS)) {
		e2e_log_stats(c->fd, "client");
		fail_msg("RPC to port %u: no outcome (want ENOTCONN or "
			 "ETIMEDOUT)", e2e_addr_port(dest));
	}
	e2e_recv(c, 0, HOMA_RECVMSG_RESPONSE, 0, &m);
	if (m.len != -1 || (m.err != ENOTCONN && m.err != ETIMEDOUT))
		fail_msg("RPC to port %u: got %zd errno %d (%s), want "
			 "ENOTCONN or ETIMEDOUT", e2e_addr_port(dest), m.len,
			 m.err, strerror(m.err));
	assert_int_equal(m.id, r.id);
	assert_int_equal(m.cookie, r.cookie);
	assert_int_equal(m.num_bpages, 0);
}

/* Sends three requests from @c to @dest, where nothing listens (a closed
 * server's port), and a fourth to @srv (when not NULL) while they are out;
 * asserts that the three fail with ENOTCONN (the host's ICMP port
 * unreachable, as the kernel module reports it: not ETIMEDOUT), each named
 * by its id and cookie, and that the fourth succeeds. */
static void expect_enotconn_fast(struct e2e_sock *c,
				 const union sockaddr_in_union *dest,
				 struct e2e_server *srv, uint64_t k)
{
	struct e2e_req r[3];
	struct e2e_msg m;
	uint64_t t0 = e2e_now_ms();
	int seen = 0;

	for (int i = 0; i < 3; i++) {
		r[i] = (struct e2e_req){ .seed = e2e_seed(k + (uint64_t)i),
					 .cookie = 0xC0DE0000 + k + (uint64_t)i,
					 .req_len = i == 1 ? 30000 : 500 };
		assert_int_equal(e2e_req_send(c, dest, &r[i]), 0);
	}
	if (srv)
		still_works(c, srv, k + 3);
	while (seen < 3) {
		uint64_t dt;

		if (!e2e_wait_readable(c->fd, OUTCOME_GUARD_MS)) {
			e2e_log_stats(c->fd, "client");
			fail_msg("no outcome for %d of 3 RPCs to port %u",
				 3 - seen, e2e_addr_port(dest));
		}
		e2e_recv(c, 0, HOMA_RECVMSG_RESPONSE, 0, &m);
		dt = e2e_now_ms() - t0;
		if (m.len != -1 || m.err != ENOTCONN)
			fail_msg("RPC to port %u: got %zd errno %d (%s) after "
				 "%llu ms, want ENOTCONN", e2e_addr_port(dest),
				 m.len, m.err, strerror(m.err),
				 (unsigned long long)dt);
		for (int i = 0; i < 3; i++)
			if (m.id == r[i].id) {
				assert_int_equal(m.cookie, r[i].cookie);
				assert_int_equal(r[i].done, 0);
				r[i].done = 1;
				seen++;
			}
		assert_int_equal(m.num_bpages, 0);
	}
}

/* Requests to a port where nobody listens fail with ENOTCONN well before
 * the timeout (the receiving host's ICMP port unreachable, over UDP; over
 * raw IP, libhoma's answer for the port); an RPC to a live server at the
 * same time, and the socket afterwards, work. */
static void errors__unbound_port_enotconn(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	struct e2e_sock *gone = e2e_server_socket(AF_INET, 0);
	union sockaddr_in_union dest;

	(void)state;
	assert_non_null(gone);
	dest = e2e_sock_addr(gone);
	assert_int_equal(e2e_sock_close(gone), 0);
	expect_enotconn_fast(c, &dest, srv, 241);
	still_works(c, srv, 245);
}

/* The same over IPv6 (ICMPv6 port unreachable). */
static void errors__unbound_port_enotconn_ipv6(void **state)
{
	struct e2e_sock *c = client(AF_INET6);
	struct e2e_sock *gone = e2e_server_socket(AF_INET6, 0);
	union sockaddr_in_union dest;

	(void)state;
	assert_non_null(gone);
	dest = e2e_sock_addr(gone);
	assert_int_equal(e2e_sock_close(gone), 0);
	expect_enotconn_fast(c, &dest, NULL, 251);
}

/* A request to a client socket's port (not a server) fails the same way. */
static void errors__rpc_to_client_port(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	struct e2e_sock *other = client(AF_INET);
	union sockaddr_in_union dest;

	(void)state;
	still_works(other, srv, 231);
	pthread_mutex_lock(&srv->lock);
	dest = srv->last_peer;
	pthread_mutex_unlock(&srv->lock);
	assert_true(e2e_addr_port(&dest) >= HOMA_MIN_DEFAULT_PORT);
	expect_unreachable(c, &dest, 232);
	still_works(other, srv, 233);
}

/* A server socket closed while it holds a request (no reply sent): the
 * client's RPC fails with ENOTCONN or ETIMEDOUT. */
static void errors__server_closed_before_reply(void **state)
{
	struct e2e_sock *s = e2e_server_socket(AF_INET, E2E_REGION_DEFAULT);
	struct e2e_sock *c = client(AF_INET);
	union sockaddr_in_union dest;
	struct e2e_req r = { .seed = e2e_seed(236), .cookie = 0x236,
			     .req_len = 3000, .resp_len = 0 };
	struct e2e_msg m;

	(void)state;
	assert_non_null(s);
	dest = e2e_sock_addr(s);
	assert_int_equal(e2e_req_send(c, &dest, &r), 0);
	assert_int_equal(e2e_recv(s, 0, HOMA_RECVMSG_REQUEST, 0, &m), 3000);
	assert_int_equal(e2e_sock_close(s), 0);
	if (!e2e_wait_readable(c->fd, OUTCOME_GUARD_MS)) {
		e2e_log_stats(c->fd, "client");
		fail_msg("no outcome after the server's close");
	}
	e2e_recv(c, 0, HOMA_RECVMSG_RESPONSE, 0, &m);
	if (m.len != -1 || (m.err != ENOTCONN && m.err != ETIMEDOUT))
		fail_msg("got %zd errno %d (%s), want ENOTCONN or ETIMEDOUT",
			 m.len, m.err, strerror(m.err));
	assert_int_equal(m.id, r.id);
	assert_int_equal(m.cookie, r.cookie);
}

/* homa_close of a client with RPCs outstanding succeeds; the server answers
 * them without trouble and serves other clients. */
static void errors__close_with_outstanding_rpcs(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	union sockaddr_in_union dest = e2e_server_addr(srv);

	(void)state;
	for (int i = 0; i < 5; i++) {
		struct e2e_req r = { .seed = e2e_seed(237 + (uint64_t)i),
				     .cookie = 1, .req_len = 30000,
				     .resp_len = 80000, .delay_ms = 30 };

		assert_int_equal(e2e_req_send(c, &dest, &r), 0);
	}
	assert_int_equal(e2e_sock_close(c), 0);
	/* The server's one thread takes this request after theirs. */
	still_works(client(AF_INET), srv, 238);
	E2E_ASSERT_SERVER_OK(srv);
}

/* --- settings ------------------------------------------------------ */

/* homa_config_get/set with an unknown name or an out-of-range value:
 * EINVAL, and the setting keeps its value. */
static void errors__config_bad_name_or_value(void **state)
{
	int64_t v = -1, mtu = 0;

	(void)state;
	E2E_ASSERT_ERRNO(homa_config_get("no_such_setting", &v), EINVAL);
	E2E_ASSERT_ERRNO(homa_config_set("no_such_setting", 1), EINVAL);
	E2E_ASSERT_ERRNO(homa_config_get("", &v), EINVAL);
	assert_int_equal(homa_config_get("mtu", &mtu), 0);
	E2E_ASSERT_ERRNO(homa_config_set("mtu", 100), EINVAL);
	E2E_ASSERT_ERRNO(homa_config_set("mtu", -1), EINVAL);
	assert_int_equal(homa_config_get("mtu", &v), 0);
	assert_int_equal(v, mtu);
	if (!getenv("HOMA_UNSCHED_BYTES")) {
		assert_int_equal(homa_config_get("unsched_bytes", &v), 0);
		assert_int_equal(v, 40000);
	}
	if (!getenv("HOMA_TIMEOUT_TICKS")) {
		assert_int_equal(homa_config_get("timeout_ticks", &v), 0);
		assert_int_equal(v, 100);
	}
}

/* homa_config_get and homa_config_set with a NULL name, homa_config_get
 * with a NULL value pointer: EINVAL, nothing changes, and new sockets
 * work. */
static void errors__config_null_arguments(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	int64_t v = 12345, mtu = 0;

	(void)state;
	E2E_ASSERT_ERRNO(homa_config_get(NULL, &v), EINVAL);
	assert_int_equal(v, 12345);
	E2E_ASSERT_ERRNO(homa_config_get("mtu", NULL), EINVAL);
	E2E_ASSERT_ERRNO(homa_config_get(NULL, NULL), EINVAL);
	assert_int_equal(homa_config_get("mtu", &mtu), 0);
	E2E_ASSERT_ERRNO(homa_config_set(NULL, mtu), EINVAL);
	E2E_ASSERT_ERRNO(homa_config_set(NULL, 0), EINVAL);
	assert_int_equal(homa_config_get("mtu", &v), 0);
	assert_int_equal(v, mtu);
	still_works(client(AF_INET), srv, 456);
}

/* Sets @name to @value, which would make the settings inconsistent:
 * asserts EINVAL and that the setting kept its value (restoring it before
 * failing, so that later tests get consistent settings). */
static void expect_inconsistent(const char *name, int64_t value)
{
	int64_t before = 0, after = 0;
	int r, e;

	assert_int_equal(homa_config_get(name, &before), 0);
	errno = 0;
	r = homa_config_set(name, value);
	e = errno;
	if (r == 0)
		homa_config_set(name, before);
	if (r != -1 || e != EINVAL)
		fail_msg("%s = %lld: returned %d errno %d (%s), want EINVAL",
			 name, (long long)value, r, e, strerror(e));
	assert_int_equal(homa_config_get(name, &after), 0);
	assert_int_equal(after, before);
}

/* homa_config_set of a value in range that would make the settings
 * inconsistent (a cutoff above the one of the level below it; no more
 * priority levels than max_sched_prio): EINVAL, the setting keeps its
 * value, and new sockets work (settings are never left inconsistent, so
 * homa_socket has no EINVAL). */
static void errors__config_inconsistent_value(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	int64_t cut[8], np = 0, msp = 0;
	char name[32];
	int tried = 0;

	(void)state;
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof name, "unsched_cutoff%d", i);
		assert_int_equal(homa_config_get(name, &cut[i]), 0);
	}
	for (int i = 1; i < 8; i++) {
		if (cut[i - 1] >= HOMA_MAX_MESSAGE_LENGTH)
			continue;
		snprintf(name, sizeof name, "unsched_cutoff%d", i);
		expect_inconsistent(name, cut[i - 1] + 1);
		tried++;
	}
	assert_int_equal(homa_config_get("num_priorities", &np), 0);
	assert_int_equal(homa_config_get("max_sched_prio", &msp), 0);
	if (msp >= 2) {
		expect_inconsistent("num_priorities", msp);
		tried++;
	}
	if (np >= 2 && np <= 7) {
		expect_inconsistent("max_sched_prio", np);
		tried++;
	}
	assert_true(tried > 0);
	still_works(client(AF_INET), srv, 457);
}

/* --- abort --------------------------------------------------------- */

/* hold_two - send @a and @b from h->c and take both requests on h->s
 * (held: not answered); their responses are made into h->resp (@a's) and
 * @resp_b, their ids and peer left in @ma and @mb, their lengths in
 * @len_a and @len_b. */
static void hold_two(struct e2e_hand *h, struct e2e_req *a, struct e2e_req *b,
		     uint8_t *resp_b, struct e2e_msg *ma, struct e2e_msg *mb,
		     size_t *len_a, size_t *len_b)
{
	struct e2e_msg m;
	char why[256];
	ssize_t len;

	assert_int_equal(e2e_req_send(h->c, &h->dest, a), 0);
	assert_int_equal(e2e_req_send(h->c, &h->dest, b), 0);
	for (int i = 0; i < 2; i++) {
		bool is_a;

		assert_true(e2e_recv(h->s, 0, HOMA_RECVMSG_REQUEST, 0, &m) > 0);
		is_a = m.id == (a->id ^ 1);
		if (!is_a)
			assert_int_equal(m.id, b->id ^ 1);
		len = e2e_take_request(h->s, &m, h->req, 0,
				       is_a ? h->resp : resp_b, why,
				       sizeof why);
		if (len < 0)
			fail_msg("request %c: %s", is_a ? 'a' : 'b', why);
		*(is_a ? ma : mb) = m;
		*(is_a ? len_a : len_b) = (size_t)len;
	}
}

/* hand_works - one more RPC over h, served by hand: the client socket
 * still works. */
static void hand_works(struct e2e_hand *h, uint64_t k)
{
	struct e2e_req r = { .seed = e2e_seed(k), .cookie = k,
			     .req_len = 2000, .resp_len = 70000 };
	struct e2e_msg m;
	char why[256];
	size_t len;

	assert_int_equal(e2e_req_send(h->c, &h->dest, &r), 0);
	len = take_request(h->s, r.req_len, h->req, h->resp, &m);
	assert_int_equal(e2e_reply(h->s, &m.peer, m.id, h->resp, len), 0);
	e2e_recv(h->c, r.id, HOMA_RECVMSG_RESPONSE, 0, &m);
	E2E_ASSERT_OK(e2e_resp_check(h->c, &r, &m, why, sizeof why), why);
	e2e_release(h->c, &m);
}

/* homa_abort(fd, id, 0): the RPC vanishes silently (EINVAL for its id, its
 * response never surfaces) while another RPC completes normally.  The
 * server holds both requests until the abort is done, then answers a
 * first; both server RPCs are seen acked before the final check. */
static void errors__abort_one_silently(void **state)
{
	struct e2e_req a = { .seed = e2e_seed(241), .cookie = 0xA,
			     .req_len = 100, .resp_len = 5000 };
	struct e2e_req b = { .seed = e2e_seed(242), .cookie = 0xB,
			     .req_len = 100, .resp_len = 6000 };
	struct homa_recvmsg_args ra;
	struct e2e_msg m, ma, mb;
	struct e2e_hand h;
	uint8_t *resp_b;
	size_t len_a = 0, len_b = 0;
	uint64_t acked;
	char why[256];

	(void)state;
	assert_int_equal(e2e_hand_open(&h, AF_INET), 0);
	resp_b = e2e_alloc(HOMA_MAX_MESSAGE_LENGTH);
	hold_two(&h, &a, &b, resp_b, &ma, &mb, &len_a, &len_b);
	acked = e2e_stat(h.s->fd, "server_rpcs_acked");
	assert_int_equal(homa_abort(h.c->fd, a.id, 0), 0);
	memset(&ra, 0, sizeof ra);
	ra.flags = HOMA_RECVMSG_RESPONSE;
	ra.id = a.id;
	E2E_ASSERT_ERRNO(raw_recv(h.c->fd, &ra, 0), EINVAL);
	assert_int_equal(e2e_reply(h.s, &ma.peer, ma.id, h.resp, len_a), 0);
	assert_int_equal(e2e_reply(h.s, &mb.peer, mb.id, resp_b, len_b), 0);
	e2e_recv(h.c, 0, HOMA_RECVMSG_RESPONSE, 0, &m);
	E2E_ASSERT_OK(e2e_resp_check(h.c, &b, &m, why, sizeof why), why);
	e2e_release(h.c, &m);
	wait_acked(h.s, acked + 2);
	e2e_recv(h.c, 0, HOMA_RECVMSG_RESPONSE | HOMA_RECVMSG_NONBLOCKING, 0,
		 &m);
	assert_int_equal(m.len, -1);
	assert_int_equal(m.err, EAGAIN);
	hand_works(&h, 243);
}

/* homa_abort(fd, id, ECANCELED): recvmsg returns -1 ECANCELED naming the
 * RPC (id and cookie) once; afterwards the id is unknown; another RPC is
 * unaffected.  The server holds both requests until the abort is done (so
 * the error is the first outcome: b cannot have completed before it), then
 * answers both; both server RPCs are seen acked before the final check. */
static void errors__abort_one_with_error(void **state)
{
	struct e2e_req a = { .seed = e2e_seed(251), .cookie = 0xAAAA,
			     .req_len = 100, .resp_len = 5000 };
	struct e2e_req b = { .seed = e2e_seed(252), .cookie = 0xBBBB,
			     .req_len = 50000, .resp_len = 300 };
	struct homa_recvmsg_args ra;
	struct e2e_msg m, ma, mb;
	struct e2e_hand h;
	uint8_t *resp_b;
	size_t len_a = 0, len_b = 0;
	uint64_t acked;
	char why[256];

	(void)state;
	assert_int_equal(e2e_hand_open(&h, AF_INET), 0);
	resp_b = e2e_alloc(HOMA_MAX_MESSAGE_LENGTH);
	hold_two(&h, &a, &b, resp_b, &ma, &mb, &len_a, &len_b);
	acked = e2e_stat(h.s->fd, "server_rpcs_acked");
	assert_int_equal(homa_abort(h.c->fd, a.id, ECANCELED), 0);
	e2e_recv(h.c, 0, HOMA_RECVMSG_RESPONSE, 0, &m);
	assert_int_equal(m.len, -1);
	assert_int_equal(m.err, ECANCELED);
	assert_int_equal(m.id, a.id);
	assert_int_equal(m.cookie, a.cookie);
	assert_int_equal(m.num_bpages, 0);
	memset(&ra, 0, sizeof ra);
	ra.flags = HOMA_RECVMSG_RESPONSE;
	ra.id = a.id;
	E2E_ASSERT_ERRNO(raw_recv(h.c->fd, &ra, 0), EINVAL);
	assert_int_equal(e2e_reply(h.s, &ma.peer, ma.id, h.resp, len_a), 0);
	assert_int_equal(e2e_reply(h.s, &mb.peer, mb.id, resp_b, len_b), 0);
	e2e_recv(h.c, b.id, HOMA_RECVMSG_RESPONSE, 0, &m);
	E2E_ASSERT_OK(e2e_resp_check(h.c, &b, &m, why, sizeof why), why);
	e2e_release(h.c, &m);
	wait_acked(h.s, acked + 2);
	e2e_recv(h.c, 0, HOMA_RECVMSG_RESPONSE | HOMA_RECVMSG_NONBLOCKING, 0,
		 &m);
	assert_int_equal(m.err, EAGAIN);
	hand_works(&h, 253);
}

/* An error abort is reported to a recvmsg waiting for that id. */
static void errors__abort_with_error_to_id_waiter(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	union sockaddr_in_union dest = e2e_server_addr(srv);
	struct e2e_req a = { .seed = e2e_seed(261), .cookie = 0x261,
			     .req_len = 100, .resp_len = 100,
			     .delay_ms = 300 };
	struct e2e_msg m;

	(void)state;
	assert_int_equal(e2e_req_send(c, &dest, &a), 0);
	assert_int_equal(homa_abort(c->fd, a.id, ETIMEDOUT), 0);
	e2e_recv(c, a.id, HOMA_RECVMSG_RESPONSE, 0, &m);
	assert_int_equal(m.len, -1);
	assert_int_equal(m.err, ETIMEDOUT);
	assert_int_equal(m.id, a.id);
	assert_int_equal(m.cookie, a.cookie);
	still_works(c, srv, 262);
	E2E_ASSERT_SERVER_OK(srv);
}

#define NABORT 6

/* Sends NABORT slow RPCs from @c to @srv into @r. */
static void send_slow(struct e2e_sock *c, struct e2e_server *srv,
		      struct e2e_req *r, uint64_t k)
{
	union sockaddr_in_union dest = e2e_server_addr(srv);

	for (int i = 0; i < NABORT; i++) {
		memset(&r[i], 0, sizeof r[i]);
		r[i].seed = e2e_seed(k + (uint64_t)i);
		r[i].cookie = 0xC0000 + k + (uint64_t)i;
		r[i].req_len = (size_t)(i % 2 ? 100 : 60000);
		r[i].resp_len = 3000;
		r[i].delay_ms = 40;
		assert_int_equal(e2e_req_send(c, &dest, &r[i]), 0);
	}
}

/* homa_abort(fd, 0, 0): every client RPC of the socket vanishes. */
static void errors__abort_all_silently(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	struct e2e_req r[NABORT];
	struct homa_recvmsg_args ra;
	struct e2e_msg m;

	(void)state;
	send_slow(c, srv, r, 271);
	assert_int_equal(homa_abort(c->fd, 0, 0), 0);
	for (int i = 0; i < NABORT; i++) {
		memset(&ra, 0, sizeof ra);
		ra.flags = HOMA_RECVMSG_RESPONSE;
		ra.id = r[i].id;
		E2E_ASSERT_ERRNO(raw_recv(c->fd, &ra, 0), EINVAL);
	}
	/* The server's one thread answers this RPC after every aborted
	 * request it received: their responses have been sent by then. */
	still_works(c, srv, 279);
	e2e_recv(c, 0, HOMA_RECVMSG_RESPONSE | HOMA_RECVMSG_NONBLOCKING, 0,
		 &m);
	assert_int_equal(m.len, -1);
	assert_int_equal(m.err, EAGAIN);
	E2E_ASSERT_SERVER_OK(srv);
}

/* homa_abort(fd, 0, ECANCELED): every client RPC fails with ECANCELED, each
 * reported once with its own id and cookie. */
static void errors__abort_all_with_error(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	struct e2e_req r[NABORT];
	struct e2e_msg m;

	(void)state;
	send_slow(c, srv, r, 281);
	assert_int_equal(homa_abort(c->fd, 0, ECANCELED), 0);
	for (int k = 0; k < NABORT; k++) {
		int hit = -1;

		e2e_recv(c, 0, HOMA_RECVMSG_RESPONSE, 0, &m);
		assert_int_equal(m.len, -1);
		assert_int_equal(m.err, ECANCELED);
		for (int i = 0; i < NABORT; i++)
			if (r[i].id == m.id)
				hit = i;
		if (hit < 0)
			fail_msg("error for unknown id %llu",
				 (unsigned long long)m.id);
		assert_false(r[hit].done);
		assert_int_equal(m.cookie, r[hit].cookie);
		r[hit].done = 1;
	}
	/* As in errors__abort_all_silently: after the server's answers. */
	still_works(c, srv, 289);
	e2e_recv(c, 0, HOMA_RECVMSG_RESPONSE | HOMA_RECVMSG_NONBLOCKING, 0,
		 &m);
	assert_int_equal(m.err, EAGAIN);
	E2E_ASSERT_SERVER_OK(srv);
}

/* homa_abort with an id that names no client RPC of the socket (never
 * sent, odd, or an RPC whose response was received already) or with a
 * negative error: EINVAL, and no RPC is touched. */
static void errors__abort_bad_arguments(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	union sockaddr_in_union dest = e2e_server_addr(srv);
	struct e2e_req a = { .seed = e2e_seed(461), .cookie = 0x461,
			     .req_len = 100, .resp_len = 3000,
			     .delay_ms = 100 };
	struct e2e_msg m;
	char why[256];

	(void)state;
	assert_int_equal(e2e_req_send(c, &dest, &a), 0);
	E2E_ASSERT_ERRNO(homa_abort(c->fd, a.id + 2, 0), EINVAL);
	E2E_ASSERT_ERRNO(homa_abort(c->fd, a.id + 0x100000000ull,
				    ECANCELED), EINVAL);
	E2E_ASSERT_ERRNO(homa_abort(c->fd, a.id ^ 1, ECANCELED), EINVAL);
	E2E_ASSERT_ERRNO(homa_abort(c->fd, a.id, -1), EINVAL);
	E2E_ASSERT_ERRNO(homa_abort(c->fd, a.id, INT_MIN), EINVAL);
	E2E_ASSERT_ERRNO(homa_abort(c->fd, 0, -ECANCELED), EINVAL);
	/* a goes on: its response arrives. */
	e2e_recv(c, a.id, HOMA_RECVMSG_RESPONSE, 0, &m);
	E2E_ASSERT_OK(e2e_resp_check(c, &a, &m, why, sizeof why), why);
	e2e_release(c, &m);
	E2E_ASSERT_ERRNO(homa_abort(c->fd, a.id, ECANCELED), EINVAL);
	E2E_ASSERT_ERRNO(homa_abort(c->fd, a.id, 0), EINVAL);
	still_works(c, srv, 462);
	E2E_ASSERT_SERVER_OK(srv);
}

/* --- shutdown ------------------------------------------------------ */

/* A thread blocked in homa_recvmsg, and what it got. */
struct waiter {
	struct e2e_sock *s;
	uint64_t id;
	int flags;
	struct e2e_bpages ret;
	struct e2e_msg m;
	atomic_int tid;           /* its thread, once it is about to call */
	uint64_t returned_ms;     /* e2e_now_ms() when the call returned */
	atomic_int done;
	pthread_t t;
};

/* Thread body: one blocking receive (see struct waiter).  Nothing but
 * homa_recvmsg can block the thread once its tid is published. */
static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	atomic_store(&w->tid, (int)e2e_gettid());
	e2e_recv_r(w->s, &w->ret, w->id, w->flags, 0, &w->m);
	w->returned_ms = e2e_now_ms();
	atomic_store(&w->done, 1);
	return NULL;
}

/* Waits up to @ms for @w to finish; returns 1 if it did (and joins it). */
static int waiter_join(struct waiter *w, unsigned ms)
{
	uint64_t end = e2e_now_ms() + ms;

	while (!atomic_load(&w->done) && e2e_now_ms() < end)
		e2e_sleep_ms(5);
	if (!atomic_load(&w->done))
		return 0;
	pthread_join(w->t, NULL);
	return 1;
}

/* A blocked homa_recvmsg also wakes by itself at least this often (ms) and
 * then sees a shutdown anyway (RECV_SLEEP_NS in src/sock/homa_sockrecv.c):
 * a waiter that returns sooner after its sleep began was woken. */
#define SELF_WAKE_MS 100

/* Room (ms) for the rounding of the times compared with SELF_WAKE_MS. */
#define WAKE_MARGIN_MS 5

/*
 * waiters_caught_asleep - wait until the n waiters w[] are all blocked in
 * homa_recvmsg, each just after it began a sleep (e2e_catch_fresh_sleep);
 * fails the test when that is not seen within 3 s.  Returns when they
 * were caught.
 */
static struct e2e_fresh_sleep waiters_caught_asleep(struct waiter *w, int n)
{
	struct e2e_fresh_sleep caught;
	pid_t tids[2];
	uint64_t end = e2e_now_ms() + 1000;

	assert_true(n <= 2);
	for (int i = 0; i < n; i++) {
		while (atomic_load(&w[i].tid) == 0 && e2e_now_ms() < end)
			e2e_sleep_ms(1);
		tids[i] = (pid_t)atomic_load(&w[i].tid);
		if (tids[i] == 0)
			fail_msg("waiter %d never started", i);
	}
	if (e2e_catch_fresh_sleep(tids, n, 2000, &caught) != 0)
		fail_msg("the waiters were never seen blocked in homa_recvmsg "
			 "(ppoll or futex) at once");
	for (int i = 0; i < n; i++)
		assert_false(atomic_load(&w[i].done));
	return caught;
}

/*
 * assert_woken - waiter i of w, caught asleep at caught and sent a
 * homa_shutdown right then, returns within 2 s and before its own
 * wake-up could have come (SELF_WAKE_MS after its sleep began), with
 * ESHUTDOWN.
 */
static void assert_woken(struct waiter *w, int i,
			 const struct e2e_fresh_sleep *caught)
{
	uint64_t limit = SELF_WAKE_MS - caught->age_ms - WAKE_MARGIN_MS;
	uint64_t took;

	if (!waiter_join(&w[i], 2000))
		fail_msg("waiter %d still blocked 2 s after homa_shutdown", i);
	took = w[i].returned_ms - caught->at_ms;
	if (took > limit)
		fail_msg("waiter %d (asleep for at most %u ms) returned %llu ms "
			 "after homa_shutdown: not woken (limit %llu ms)", i,
			 caught->age_ms, (unsigned long long)took,
			 (unsigned long long)limit);
	assert_int_equal(w[i].m.len, -1);
	assert_int_equal(w[i].m.err, ESHUTDOWN);
}

/* homa_shutdown wakes pending homa_recvmsg calls (any id, and a given id;
 * both seen blocked first) with ESHUTDOWN at once; later sends and
 * receives fail with ESHUTDOWN; the descriptor still closes normally. */
static void errors__shutdown_fails_pending_and_later_calls(void **state)
{
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	union sockaddr_in_union dest = e2e_server_addr(srv);
	struct e2e_req r = { .seed = e2e_seed(291), .cookie = 0x291,
			     .req_len = 100, .resp_len = 100,
			     .delay_ms = 2000 };
	/* Freed only on success: after a failure a waiter may still run. */
	struct waiter *w = calloc(2, sizeof *w);
	struct e2e_fresh_sleep caught;
	struct e2e_msg m;
	uint8_t buf[100];

	(void)state;
	assert_non_null(w);
	assert_int_equal(e2e_req_send(c, &dest, &r), 0);
	w[0].s = c;
	w[0].flags = HOMA_RECVMSG_RESPONSE | HOMA_RECVMSG_REQUEST;
	w[1].s = c;
	w[1].id = r.id;
	w[1].flags = HOMA_RECVMSG_RESPONSE;
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&w[i].t, NULL, waiter_main,
						&w[i]), 0);
	caught = waiters_caught_asleep(w, 2);
	assert_int_equal(homa_shutdown(c->fd, SHUT_RDWR), 0);
	for (int i = 0; i < 2; i++)
		assert_woken(w, i, &caught);
	e2e_fill(buf, sizeof buf, e2e_seed(292), 0, 0);
	E2E_ASSERT_ERRNO(e2e_send(c, &dest, buf, sizeof buf, 1, NULL),
			 ESHUTDOWN);
	e2e_recv(c, 0, HOMA_RECVMSG_RESPONSE, 0, &m);
	assert_int_equal(m.len, -1);
	assert_int_equal(m.err, ESHUTDOWN);
	e2e_recv(c, 0, HOMA_RECVMSG_RESPONSE | HOMA_RECVMSG_NONBLOCKING, 0,
		 &m);
	assert_int_equal(m.err, ESHUTDOWN);
	assert_int_equal(e2e_sock_close(c), 0);
	free(w);
	/* Other sockets are unaffected. */
	still_works(client(AF_INET), srv, 293);
}

/* homa_shutdown of a server socket wakes its receiver (seen blocked
 * first) with ESHUTDOWN at once; clients' RPCs to it then fail within
 * 5 s. */
static void errors__shutdown_server_socket(void **state)
{
	struct e2e_sock *s = e2e_server_socket(AF_INET, E2E_REGION_DEFAULT);
	struct e2e_sock *c = client(AF_INET);
	/* Freed only on success: after a failure the waiter may still run. */
	struct waiter *w = calloc(1, sizeof *w);
	struct e2e_fresh_sleep caught;
	union sockaddr_in_union dest;

	(void)state;
	assert_non_null(s);
	assert_non_null(w);
	dest = e2e_sock_addr(s);
	w->s = s;
	w->flags = HOMA_RECVMSG_REQUEST;
	assert_int_equal(pthread_create(&w->t, NULL, waiter_main, w), 0);
	caught = waiters_caught_asleep(w, 1);
	assert_int_equal(homa_shutdown(s->fd, SHUT_RDWR), 0);
	assert_woken(w, 0, &caught);
	free(w);
	expect_unreachable(c, &dest, 301);
}

/* homa_shutdown with how other than SHUT_RD, SHUT_WR and SHUT_RDWR:
 * EINVAL, and the socket is not shut down; SHUT_RD and SHUT_WR each shut
 * the whole socket down (sends and receives fail with ESHUTDOWN). */
static void errors__shutdown_bad_how(void **state)
{
	static const int bad[] = { -1, 3, 4, 42, INT_MAX, INT_MIN };
	static const int good[] = { SHUT_RD, SHUT_WR };
	struct e2e_server *srv = start_server(AF_INET);
	struct e2e_sock *c = client(AF_INET);
	union sockaddr_in_union dest = e2e_server_addr(srv);
	uint8_t buf[100];
	struct e2e_msg m;

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		errno = 0;
		if (homa_shutdown(c->fd, bad[i]) != -1 || errno != EINVAL)
			fail_msg("how %d: errno %d (%s), want EINVAL", bad[i],
				 errno, strerror(errno));
	}
	still_works(c, srv, 471);
	e2e_fill(buf, sizeof buf, e2e_seed(472), 0, 0);
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		struct e2e_sock *d = client(AF_INET);

		assert_int_equal(homa_shutdown(d->fd, good[i]), 0);
		E2E_ASSERT_ERRNO(e2e_send(d, &dest, buf, sizeof buf, 1, NULL),
				 ESHUTDOWN);
		e2e_recv(d, 0, HOMA_RECVMSG_RESPONSE |
			 HOMA_RECVMSG_NONBLOCKING, 0, &m);
		assert_int_equal(m.len, -1);
		assert_int_equal(m.err, ESHUTDOWN);
	}
	still_works(c, srv, 473);
}

static const struct e2e_test tests[] = {
	E2E_TEST(errors__socket_bad_arguments, 10),
	E2E_TEST(errors__bind_client_port_range, 10),
	E2E_TEST(errors__bind_port_in_use, 10),
	E2E_TEST(errors__sockopt_wrong_level_or_option, 10),
	E2E_TEST(errors__set_buf_misaligned, 10),
	E2E_TEST(errors__set_buf_too_small, 10),
	E2E_TEST(errors__set_buf_twice, 10),
	E2E_TEST(errors__set_buf_wrong_optlen, 10),
	E2E_TEST(errors__getsockopt_rcvbuf, 10),
	E2E_TEST(errors__sockopt_null_pointers, 10),
	E2E_TEST(errors__set_buf_null_or_over_4gib, 10),
	E2E_TEST(errors__sendmsg_bad_control, 10),
	E2E_TEST(errors__sendmsg_bad_destination, 10),
	E2E_TEST(errors__sendmsg_bad_length, 10),
	E2E_TEST(errors__reply_with_even_id, 10),
	E2E_TEST(errors__send_wrappers_bad_pointers, 10),
	E2E_TEST(errors__sendv_bad_iovcnt, 10),
	E2E_TEST(errors__reply_before_receive_or_twice, 15),
	E2E_TEST(errors__reply_to_ended_rpc, 15),
	E2E_TEST(errors__recvmsg_bad_flags, 10),
	E2E_TEST(errors__recvmsg_too_many_bpages, 10),
	E2E_TEST(errors__recvmsg_offset_not_owned, 10),
	E2E_TEST(errors__recvmsg_offset_returned_twice, 10),
	E2E_TEST(errors__recvmsg_fragment_returned_twice, 10),
	E2E_TEST(errors__recvmsg_id_of_no_rpc, 10),
	E2E_TEST(errors__recvmsg_without_region, 10),
	E2E_TEST(errors__recvmsg_control_wrong_size, 10),
	E2E_TEST(errors__bad_descriptor, 10),
	E2E_TEST(errors__rpc_to_client_port, 15),
	E2E_TEST(errors__unbound_port_enotconn, 15),
	E2E_TEST(errors__unbound_port_enotconn_ipv6, 15),
	E2E_TEST(errors__server_closed_before_reply, 15),
	E2E_TEST(errors__close_with_outstanding_rpcs, 10),
	E2E_TEST(errors__config_bad_name_or_value, 10),
	E2E_TEST(errors__config_null_arguments, 10),
	E2E_TEST(errors__config_inconsistent_value, 10),
	E2E_TEST(errors__abort_one_silently, 10),
	E2E_TEST(errors__abort_one_with_error, 10),
	E2E_TEST(errors__abort_with_error_to_id_waiter, 10),
	E2E_TEST(errors__abort_all_silently, 10),
	E2E_TEST(errors__abort_all_with_error, 10),
	E2E_TEST(errors__abort_bad_arguments, 10),
	E2E_TEST(errors__shutdown_fails_pending_and_later_calls, 15),
	E2E_TEST(errors__shutdown_server_socket, 15),
	E2E_TEST(errors__shutdown_bad_how, 15),
};

int main(int argc, char **argv)
{
	return e2e_main(argc, argv, "e2e_errors", tests,
			sizeof tests / sizeof tests[0]);
}
