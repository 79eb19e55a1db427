/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Smoke test of the socket layer through <homa.h> only: two sockets in one
 * process over 127.0.0.1, one RPC of 100 bytes each way and one of
 * 1,000,000 bytes each way, poll() readiness of the descriptor, and a
 * handful of argument errors.  Plain C (no framework): prints one line per
 * check group and exits nonzero on the first failure.  A watchdog (alarm)
 * ends a hung run.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <unistd.h>

#include "e2e_blocked.h"
#include "homa.h"

#define REGION_BYTES (64u * HOMA_BPAGE_SIZE)
#define BIG 1000000

static int checks;

/* die - report a failed check and exit. */
static void die(int line, const char *what, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL line %d: %s", line, what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (errno %d %s)\n", errno, strerror(errno));
	exit(1);
}

#define CHECK(cond) do { checks++; if (!(cond)) die(__LINE__, #cond, ""); \
	} while (0)
#define CHECK_ERR(expr, err) do {                                        \
		errno = 0;                                               \
		long r_ = (long)(expr);                                  \
		checks++;                                                \
		if (r_ != -1 || errno != (err))                          \
			die(__LINE__, #expr, ": got %ld, want errno %d", \
			    r_, (err));                                  \
	} while (0)

/* A socket with its buffer region. */
struct sock {
	int fd;
	uint8_t *region;
	uint32_t ret[HOMA_MAX_BPAGES];   /* bpages to hand back */
	uint32_t nret;
};

/* region_new - a fresh mapped region of REGION_BYTES. */
static uint8_t *region_new(void)
{
	void *p = mmap(NULL, REGION_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED);
	return p;
}

/* sock_open - a socket with a region; bound to a server port when
 * server is set (returns the port in *port). */
static void sock_open(struct sock *s, bool server, uint16_t *port)
{
	struct homa_set_buf_args a;

	memset(s, 0, sizeof(*s));
	s->fd = homa_socket(AF_INET, SOCK_DGRAM, IPPROTO_HOMA);
	CHECK(s->fd >= 0);
	s->region = region_new();
	a.start = s->region;
	a.length = REGION_BYTES;
	CHECK(homa_setsockopt(s->fd, IPPROTO_HOMA, SO_HOMA_SET_BUF, &a,
			      sizeof(a)) == 0);
	if (!server)
		return;
	for (int i = 0; i < 200; i++) {
		struct sockaddr_in in = { .sin_family = AF_INET };

		*port = (uint16_t)(20000 + (getpid() + i * 97) % 12000);
		in.sin_port = htons(*port);
		if (homa_bind(s->fd, (struct sockaddr *)&in, sizeof(in)) == 0)
			return;
		CHECK(errno == EADDRINUSE);
	}
	CHECK(!"no free server port");
}

/* addr_of - 127.0.0.1:port. */
static union sockaddr_in_union addr_of(uint16_t port)
{
	union sockaddr_in_union a;

	memset(&a, 0, sizeof(a));
	a.in4.sin_family = AF_INET;
	a.in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.in4.sin_port = htons(port);
	return a;
}

/* fill - the test pattern of message seed at byte i. */
static uint8_t pattern(uint32_t seed, size_t i)
{
	return (uint8_t)((i * 2654435761u + seed) >> 7);
}

static void fill(uint8_t *buf, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(seed, i);
}

/* Outcome of one recv. */
struct got {
	ssize_t len;
	struct homa_recvmsg_args args;
	union sockaddr_in_union name;
	socklen_t namelen;
};

/* recv_one - homa_recvmsg on s for id (0 = any) with flags, handing back
 * the bpages of the previous message. */
static ssize_t recv_one(struct sock *s, uint64_t id, int flags,
			struct got *g)
{
	struct msghdr m;

	memset(g, 0, sizeof(*g));
	memset(&m, 0, sizeof(m));
	g->args.id = id;
	g->args.flags = flags;
	g->args.num_bpages = s->nret;
	memcpy(g->args.bpage_offsets, s->ret, s->nret * sizeof(s->ret[0]));
	m.msg_name = &g->name;
	m.msg_namelen = sizeof(g->name);
	m.msg_control = &g->args;
	m.msg_controllen = sizeof(g->args);
	g->len = homa_recvmsg(s->fd, &m, 0);
	g->namelen = m.msg_namelen;
	s->nret = g->args.num_bpages;
	memcpy(s->ret, g->args.bpage_offsets, s->nret * sizeof(s->ret[0]));
	return g->len;
}

/* check_data - the message of g in s's region carries pattern seed. */
static void check_data(const struct sock *s, const struct got *g,
		       uint32_t seed)
{
	size_t done = 0;

	CHECK(g->args.num_bpages ==
	      (g->len + HOMA_BPAGE_SIZE - 1) / HOMA_BPAGE_SIZE);
	for (uint32_t b = 0; b < g->args.num_bpages; b++) {
		uint32_t off = g->args.bpage_offsets[b];
		size_t n = (size_t)g->len - done;

		if (n > HOMA_BPAGE_SIZE)
			n = HOMA_BPAGE_SIZE;
		if (b + 1 < g->args.num_bpages)
			CHECK(off % HOMA_BPAGE_SIZE == 0);
		CHECK(off + n <= REGION_BYTES);
		for (size_t i = 0; i < n; i++)
			if (s->region[off + i] != pattern(seed, done + i))
				die(__LINE__, "data", " byte %zu",
				    done + i);
		done += n;
	}
}

/* readable - poll the descriptor for up to ms; true when readable. */
static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* rpc - one request/response of len bytes each way, checking ids,
 * cookie, addresses, data and readiness. */
static void rpc(struct sock *cli, struct sock *srv, uint16_t port,
		size_t len, uint32_t seed)
{
	union sockaddr_in_union dest = addr_of(port);
	uint8_t *buf = malloc(len);
	uint64_t id = 0;
	struct got g;

	CHECK(buf);
	fill(buf, len, seed);
	CHECK(!readable(srv->fd, 0));
	CHECK(homa_send(cli->fd, buf, len, &dest, &id, 0xC00C1E + seed) == 0);
	CHECK(id != 0 && (id & 1) == 0);
	CHECK(readable(srv->fd, 10000));
	CHECK(recv_one(srv, 0, HOMA_RECVMSG_REQUEST, &g) == (ssize_t)len);
	CHECK(g.args.id == (id | 1));
	CHECK(g.args.completion_cookie == 0);
	CHECK(g.namelen == sizeof(struct sockaddr_in));
	CHECK(g.name.in4.sin_addr.s_addr == htonl(INADDR_LOOPBACK));
	CHECK(g.args.peer_addr.in4.sin_port == g.name.in4.sin_port);
	check_data(srv, &g, seed);
	CHECK(!readable(srv->fd, 0));

	fill(buf, len, seed + 1);
	CHECK(homa_reply(srv->fd, buf, len, &g.args.peer_addr, g.args.id) == 0);
	CHECK(recv_one(cli, id, HOMA_RECVMSG_RESPONSE, &g) == (ssize_t)len);
	CHECK(g.args.id == id);
	CHECK(g.args.completion_cookie == 0xC00C1E + seed);
	CHECK(ntohs(g.args.peer_addr.in4.sin_port) == port);
	check_data(cli, &g, seed + 1);
	CHECK(!readable(cli->fd, 0));
	free(buf);
	printf("ok: rpc of %zu bytes\n", len);
}

/* socket_errors - homa_socket and homa_bind argument errors. */
static void socket_errors(struct sock *srv, uint16_t port)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	int fd;

	CHECK_ERR(homa_socket(AF_UNIX, SOCK_DGRAM, IPPROTO_HOMA), EAFNOSUPPORT);
	CHECK_ERR(homa_socket(AF_INET, SOCK_STREAM, IPPROTO_HOMA),
		  EPROTONOSUPPORT);
	CHECK_ERR(homa_socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP),
		  EPROTONOSUPPORT);
	fd = homa_socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(fd >= 0);
	in.sin_port = htons(40000);
	CHECK_ERR(homa_bind(fd, (struct sockaddr *)&in, sizeof(in)), EINVAL);
	in.sin_port = htons(port);
	CHECK_ERR(homa_bind(fd, (struct sockaddr *)&in, sizeof(in)),
		  EADDRINUSE);
	CHECK_ERR(homa_bind(fd, (struct sockaddr *)&in, sizeof(in) - 1),
		  EINVAL);
	CHECK(homa_close(fd) == 0);
	CHECK_ERR(homa_close(fd), EBADF);
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
	CHECK_ERR(homa_bind(srv->fd, NULL, 0), EINVAL);
	printf("ok: socket/bind errors\n");
}

/* opt_errors - setsockopt/getsockopt argument errors. */
static void opt_errors(struct sock *s)
{
	struct homa_set_buf_args a = { .start = s->region,
				       .length = REGION_BYTES };
	struct homa_rcvbuf_args rb;
	socklen_t len = sizeof(rb);
	int fd;

	CHECK_ERR(homa_setsockopt(s->fd, SOL_SOCKET, SO_HOMA_SET_BUF, &a,
				  sizeof(a)), ENOPROTOOPT);
	CHECK_ERR(homa_setsockopt(s->fd, IPPROTO_HOMA, 99, &a, sizeof(a)),
		  ENOPROTOOPT);
	CHECK_ERR(homa_setsockopt(s->fd, IPPROTO_HOMA, SO_HOMA_SET_BUF, &a,
				  sizeof(a) - 1), EINVAL);
	CHECK_ERR(homa_setsockopt(s->fd, IPPROTO_HOMA, SO_HOMA_SET_BUF, &a,
				  sizeof(a)), EINVAL); /* set twice */
	fd = homa_socket(AF_INET, SOCK_DGRAM, IPPROTO_HOMA);
	CHECK(fd >= 0);
	a.start = s->region + 8;
	CHECK_ERR(homa_setsockopt(fd, IPPROTO_HOMA, SO_HOMA_SET_BUF, &a,
				  sizeof(a)), EINVAL); /* misaligned */
	a.start = s->region;
	a.length = HOMA_BPAGE_SIZE;
	CHECK_ERR(homa_setsockopt(fd, IPPROTO_HOMA, SO_HOMA_SET_BUF, &a,
				  sizeof(a)), EINVAL); /* one bpage */
	CHECK(homa_close(fd) == 0);
	CHECK(homa_getsockopt(s->fd, IPPROTO_HOMA, HOMA_SO_RCVBUF, &rb,
			      &len) == 0);
	CHECK(len == sizeof(rb));
	CHECK(rb.start == (uint64_t)(uintptr_t)s->region);
	CHECK(rb.length == REGION_BYTES);
	printf("ok: socket option errors\n");
}

/* send_errors - homa_sendmsg argument errors. */
static void send_errors(struct sock *s, uint16_t port)
{
	union sockaddr_in_union dest = addr_of(port);
	struct homa_sendmsg_args args = { 0, 0 };
	static uint8_t big[HOMA_MAX_MESSAGE_LENGTH + 1];
	struct iovec v = { .iov_base = big, .iov_len = 10 };
	struct msghdr m = { .msg_name = &dest, .msg_namelen = sizeof(dest.in4),
			    .msg_iov = &v, .msg_iovlen = 1,
			    .msg_control = &args, .msg_controllen = 0 };
	struct sockaddr_in6 six = { .sin6_family = AF_INET6 };

	m.msg_control = NULL;
	CHECK_ERR(homa_sendmsg(s->fd, &m, 0), EINVAL);
	m.msg_control = &args;
	m.msg_controllen = 3;
	CHECK_ERR(homa_sendmsg(s->fd, &m, 0), EINVAL);
	m.msg_controllen = sizeof(args);
	m.msg_name = NULL;
	CHECK_ERR(homa_sendmsg(s->fd, &m, 0), EINVAL);
	m.msg_name = &six;
	m.msg_namelen = sizeof(six);
	CHECK_ERR(homa_sendmsg(s->fd, &m, 0), EAFNOSUPPORT);
	m.msg_name = &dest;
	m.msg_namelen = sizeof(dest.in4);
	v.iov_len = 0;
	CHECK_ERR(homa_sendmsg(s->fd, &m, 0), EINVAL);
	v.iov_len = sizeof(big);
	CHECK_ERR(homa_sendmsg(s->fd, &m, 0), EINVAL);
	CHECK_ERR(homa_sendmsg(9999, &m, 0), EBADF);
	CHECK(args.id == 0);
	printf("ok: sendmsg errors\n");
}

/* recv_errors - homa_recvmsg argument errors and EAGAIN. */
static void recv_errors(struct sock *s)
{
	struct homa_recvmsg_args args;
	struct msghdr m;
	int fd;

	memset(&args, 0, sizeof(args));
	memset(&m, 0, sizeof(m));
	m.msg_control = &args;
	m.msg_controllen = sizeof(args);
	args.flags = HOMA_RECVMSG_REQUEST | HOMA_RECVMSG_NONBLOCKING;
	CHECK_ERR(homa_recvmsg(s->fd, &m, 0), EAGAIN);
	args.flags = HOMA_RECVMSG_RESPONSE;
	CHECK_ERR(homa_recvmsg(s->fd, &m, MSG_DONTWAIT), EAGAIN);
	args.flags = HOMA_RECVMSG_NONBLOCKING;
	CHECK_ERR(homa_recvmsg(s->fd, &m, 0), EINVAL);
	args.flags = HOMA_RECVMSG_REQUEST | 0x100;
	CHECK_ERR(homa_recvmsg(s->fd, &m, 0), EINVAL);
	args.flags = HOMA_RECVMSG_REQUEST | HOMA_RECVMSG_NONBLOCKING;
	args.num_bpages = 1;
	args.bpage_offsets[0] = 3 * HOMA_BPAGE_SIZE; /* not ours */
	CHECK_ERR(homa_recvmsg(s->fd, &m, 0), EINVAL);
	CHECK(args.num_bpages == 0);
	args.num_bpages = HOMA_MAX_BPAGES + 1;
	CHECK_ERR(homa_recvmsg(s->fd, &m, 0), EINVAL);
	CHECK(args.num_bpages == 0);
	m.msg_control = NULL;
	CHECK_ERR(homa_recvmsg(s->fd, &m, 0), EINVAL);
	m.msg_control = &args;
	CHECK_ERR(homa_recvmsg(-1, &m, 0), EBADF);
	fd = homa_socket(AF_INET, SOCK_DGRAM, IPPROTO_HOMA);
	CHECK(fd >= 0);
	CHECK_ERR(homa_recvmsg(fd, &m, 0), EINVAL); /* no region */
	CHECK(homa_close(fd) == 0);
	printf("ok: recvmsg errors\n");
}

/* progress_thread_named - the library's background thread, started by
 * the first socket, is named homa-progress in /proc (top -H, ps -L). */
static void progress_thread_named(void)
{
	CHECK(e2e_threads_named("homa-progress", NULL) == 1);
	printf("ok: progress thread named\n");
}

int main(void)
{
	struct sock srv, cli;
	uint16_t port = 0;

	alarm(120);
	sock_open(&srv, true, &port);
	sock_open(&cli, false, NULL);
	rpc(&cli, &srv, port, 100, 7);
	progress_thread_named();
	rpc(&cli, &srv, port, BIG, 11);
	rpc(&cli, &srv, port, 100, 13); /* bpages handed back meanwhile */
	socket_errors(&srv, port);
	opt_errors(&cli);
	send_errors(&cli, port);
	recv_errors(&srv);
	rpc(&cli, &srv, port, 5000, 17); /* still usable after errors */
	CHECK(homa_close(cli.fd) == 0);
	CHECK(homa_close(srv.fd) == 0);
	printf("PASS: %d checks\n", checks);
	return 0;
}
