/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kapi_poll - readiness of Homa sockets next to ordinary descriptors, with
 * the Linux kernel Homa API and nothing but libc (on libhoma: under
 * LD_PRELOAD=libhoma_preload.so).
 *
 *   usage: kapi_poll PORT
 *
 * One process holds a Homa server socket (bound to PORT), a Homa client
 * socket, a pipe and a UDP socket, all in one epoll set (EPOLLIN).  It
 * checks that:
 *   - nothing is reported while nothing is waiting;
 *   - bytes written to the pipe, and a UDP datagram sent to itself, make
 *     exactly that descriptor readable and arrive intact;
 *   - a request makes exactly the server socket readable; once recvmsg has
 *     taken it the socket is no longer readable; the response makes exactly
 *     the client socket readable; poll, ppoll, select, pselect and
 *     epoll_pwait agree with epoll_wait at every step;
 *   - a private RPC (HOMA_SENDMSG_PRIVATE) never makes the client socket
 *     readable: while its response arrives, poll with a 200 ms timeout
 *     returns 0 and no other mechanism reports it; recvmsg with its id
 *     then returns it; a shared response arriving next to a private one
 *     makes the socket readable, recvmsg with id 0 returns the shared one
 *     only, after which the socket is no longer readable although the
 *     private response still waits;
 *   - a Homa socket below its send-memory limit is writable (POLLOUT /
 *     EPOLLOUT; kapi_wmem checks the limit);
 *   - recvmsg with MSG_DONTWAIT on an empty socket fails with EAGAIN, and
 *     so does recvmsg without it on a socket made with SOCK_NONBLOCK;
 *   - edge-triggered epoll, EPOLLIN|EPOLLET and EPOLLIN|EPOLLOUT|EPOLLET
 *     (as gRPC registers descriptors): a response makes one edge, and no
 *     other comes while nothing new arrives although it waits unread; a
 *     second response arriving while the first waits unread makes a new
 *     edge; responses the server sends one by one while the client reads
 *     the earlier ones (MSG_DONTWAIT until EAGAIN) are all read, each
 *     found either in that reading or after a new edge (no lost
 *     wake-up; an edge that never comes fails after 30 s).
 * Prints "kapi_poll: PASS" and exits 0, else "FAIL ..." and exits 1.
 */
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "kapi_util.h"

enum { SRV, CLI, PIPE_R, UDP, NFDS };
static const char *const names[NFDS] = { "homa server", "homa client",
					 "pipe", "udp" };
static int fds[NFDS];
static int ep;

/* ready_epoll - bit i set when fds[i] is readable by epoll_wait (pwait:
 * epoll_pwait) within timeout_ms. */
static unsigned ready_epoll(int timeout_ms, bool pwait)
{
	struct epoll_event ev[NFDS];
	sigset_t none;
	unsigned mask = 0;
	int n;

	sigemptyset(&none);
	n = pwait ? epoll_pwait(ep, ev, NFDS, timeout_ms, &none)
		  : epoll_wait(ep, ev, NFDS, timeout_ms);
	CHECK(n >= 0, "epoll_wait: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		CHECK(ev[i].events & EPOLLIN, "event without EPOLLIN: %x",
		      ev[i].events);
		mask |= 1u << ev[i].data.u32;
	}
	return mask;
}

/* ready_poll - the same from poll (p: ppoll), timeout 0. */
static unsigned ready_poll(bool p)
{
	struct pollfd pf[NFDS];
	struct timespec zero = { 0, 0 };
	unsigned mask = 0;
	int n;

	for (int i = 0; i < NFDS; i++)
		pf[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	n = p ? ppoll(pf, NFDS, &zero, NULL) : poll(pf, NFDS, 0);
	CHECK(n >= 0, "poll: %s", strerror(errno));
	for (int i = 0; i < NFDS; i++) {
		CHECK(!(pf[i].revents & (POLLERR | POLLNVAL)),
		      "poll: %s revents %x", names[i], pf[i].revents);
		if (pf[i].revents & POLLIN)
			mask |= 1u << i;
	}
	return mask;
}

/* ready_select - the same from select (p: pselect), timeout 0. */
static unsigned ready_select(bool p)
{
	struct timespec zero_ts = { 0, 0 };
	struct timeval zero = { 0, 0 };
	unsigned mask = 0;
	fd_set rd;
	int max = 0, n;

	FD_ZERO(&rd);
	for (int i = 0; i < NFDS; i++) {
		CHECK(fds[i] < FD_SETSIZE, "descriptor too large for select");
		FD_SET(fds[i], &rd);
		if (fds[i] > max)
			max = fds[i];
	}
	n = p ? pselect(max + 1, &rd, NULL, NULL, &zero_ts, NULL)
	      : select(max + 1, &rd, NULL, NULL, &zero);
	CHECK(n >= 0, "select: %s", strerror(errno));
	for (int i = 0; i < NFDS; i++)
		if (FD_ISSET(fds[i], &rd))
			mask |= 1u << i;
	return mask;
}

/* expect_ready - wait (epoll, up to 5 s) until something is ready, then
 * every mechanism must report exactly want. */
static void expect_ready(unsigned want, const char *step)
{
	unsigned got = want ? ready_epoll(5000, false) : ready_epoll(0, false);
	const unsigned all[5] = { got, ready_epoll(0, true), ready_poll(false),
				  ready_poll(true), ready_select(false) };

	for (int i = 0; i < 5; i++)
		CHECK(all[i] == want, "%s: mechanism %d reports %x, want %x",
		      step, i, all[i], want);
	CHECK(ready_select(true) == want, "%s: pselect disagrees", step);
}

/* serve_one - the server takes the next request (a string) and answers
 * it with "re " and the string. */
static void serve_one(const struct kapi_sock *srv)
{
	struct homa_recvmsg_args a;
	struct sockaddr_storage peer;
	socklen_t plen;
	char reply[64];
	ssize_t n;

	memset(&a, 0, sizeof(a));
	n = kapi_recv(srv->fd, &a, 0, &peer, &plen);
	CHECK(n > 0 && n < 60 && (a.id & 1), "server recvmsg: %zd, %s", n,
	      strerror(errno));
	snprintf(reply, sizeof(reply), "re %s", srv->region +
		 a.bpage_offsets[0]);
	CHECK(kapi_send(srv->fd, (struct sockaddr *)&peer, plen, reply,
			strlen(reply) + 1, a.id, 0, 0) == a.id,
	      "sendmsg response: %s", strerror(errno));
}

/*
 * take_private - recvmsg(id) on the client (MSG_DONTWAIT when dontwait).
 * Returns false when dontwait and it is not there yet (EAGAIN); else checks
 * that it is the response reply of RPC id with cookie, that asking again
 * is EINVAL (that call hands the response's bpage back), and returns true.
 */
static bool take_private(const struct kapi_sock *cli, uint64_t id,
			 uint64_t cookie, const char *reply, bool dontwait)
{
	struct homa_recvmsg_args a;
	ssize_t n;

	memset(&a, 0, sizeof(a));
	a.id = id;
	n = kapi_recv(cli->fd, &a, dontwait ? MSG_DONTWAIT : 0, NULL, NULL);
	if (n < 0 && dontwait && errno == EAGAIN)
		return false;
	CHECK(n == (ssize_t)strlen(reply) + 1 && a.id == id &&
	      a.completion_cookie == cookie &&
	      strcmp(cli->region + a.bpage_offsets[0], reply) == 0,
	      "recvmsg(private id %llu): %zd, RPC %llu cookie %llu, %s",
	      (unsigned long long)id, n, (unsigned long long)a.id,
	      (unsigned long long)a.completion_cookie, strerror(errno));
	a.id = id;
	EXPECT_ERR(kapi_recv(cli->fd, &a, MSG_DONTWAIT, NULL, NULL), EINVAL,
		   "recvmsg of a private RPC already received");
	return true;
}

/* Edge-triggered epoll: the requests, the longest wait for an edge (a
 * guard against a lost wake-up, not a bound on the library's speed). */
#define EDGE_RPCS 8
#define EDGE_GUARD_MS 30000

/* A request the server has taken and not answered yet. */
struct held {
	uint64_t id;
	struct sockaddr_storage peer;
	socklen_t plen;
};

/* take_held - the server takes the next request into *h. */
static void take_held(const struct kapi_sock *srv, struct held *h)
{
	struct homa_recvmsg_args a;

	memset(&a, 0, sizeof(a));
	CHECK(kapi_recv(srv->fd, &a, 0, &h->peer, &h->plen) > 0 && (a.id & 1),
	      "server recvmsg: %s", strerror(errno));
	h->id = a.id;
}

/* answer - the server answers the request h. */
static void answer(const struct kapi_sock *srv, const struct held *h)
{
	CHECK(kapi_send(srv->fd, (const struct sockaddr *)&h->peer, h->plen,
			"edge", 5, h->id, 0, 0) == h->id,
	      "sendmsg response: %s", strerror(errno));
}

/* edge - wait for the next edge on epoll set e (the client only): it must
 * say EPOLLIN. */
static void edge(int e, const char *step)
{
	struct epoll_event out = { 0 };
	int n = epoll_wait(e, &out, 1, EDGE_GUARD_MS);

	CHECK(n == 1 && (out.events & EPOLLIN), "%s: epoll_wait %d, events "
	      "%x, want an EPOLLIN edge (a lost wake-up?)", step, n,
	      out.events);
}

/* edge_in - wait for the next edge on epoll set e that says EPOLLIN:
 * edges without it (left over from a response that came while the
 * reading went on and was read in it; the kernel module reports them
 * with the mask of the moment, EPOLLOUT alone) are passed over. */
static void edge_in(int e, const char *step)
{
	struct epoll_event out = { 0 };
	int n;

	do {
		memset(&out, 0, sizeof(out));
		n = epoll_wait(e, &out, 1, EDGE_GUARD_MS);
	} while (n == 1 && !(out.events & EPOLLIN) &&
		 (out.events & EPOLLOUT));
	CHECK(n == 1 && (out.events & EPOLLIN), "%s: epoll_wait %d, events "
	      "%x, want an EPOLLIN edge (a lost wake-up?)", step, n,
	      out.events);
}

/* no_edge - no edge waits on epoll set e. */
static void no_edge(int e, const char *step)
{
	struct epoll_event out = { 0 };

	CHECK(epoll_wait(e, &out, 1, 0) == 0, "%s: an edge (events %x), "
	      "want none", step, out.events);
}

/*
 * take_all - recvmsg with MSG_DONTWAIT on the client until EAGAIN, with
 * *args (which keeps the bpages to hand back); after each response taken
 * the server answers the next request of h[*next..n), which arrives while
 * the client reads on.  Returns the responses taken.
 */
static int take_all(const struct kapi_sock *srv, const struct kapi_sock *cli,
		    struct homa_recvmsg_args *args, const struct held *h,
		    int *next, int n)
{
	int got = 0;

	for (;;) {
		ssize_t r;

		args->id = 0;
		r = kapi_recv(cli->fd, args, MSG_DONTWAIT, NULL, NULL);
		if (r < 0 && errno == EAGAIN)
			return got;
		CHECK(r == 5 && strcmp(cli->region + args->bpage_offsets[0],
				       "edge") == 0,
		      "client recvmsg: %zd, %s", r, strerror(errno));
		got++;
		if (*next < n)
			answer(srv, &h[(*next)++]);
	}
}

/* edge_triggered - the client socket in an epoll set of its own with
 * events (EPOLLET and EPOLLIN, maybe EPOLLOUT): see the head comment. */
static void edge_triggered(const struct kapi_sock *srv,
			   const struct kapi_sock *cli,
			   const struct sockaddr_storage *dest, socklen_t dlen,
			   uint32_t events)
{
	struct epoll_event ev = { .events = events }, out = { 0 };
	struct homa_recvmsg_args args;
	struct held h[EDGE_RPCS];
	int e = epoll_create1(EPOLL_CLOEXEC), next = 2, got;

	CHECK(e >= 0, "epoll_create1: %s", strerror(errno));
	CHECK(epoll_ctl(e, EPOLL_CTL_ADD, cli->fd, &ev) == 0,
	      "epoll_ctl ADD: %s", strerror(errno));
	if (events & EPOLLOUT)
		CHECK(epoll_wait(e, &out, 1, 0) == 1 &&
		      out.events == EPOLLOUT, "registration: events %x, want "
		      "EPOLLOUT alone", out.events);
	no_edge(e, "idle");
	for (int i = 0; i < EDGE_RPCS; i++)
		CHECK(kapi_send(cli->fd, (const struct sockaddr *)dest, dlen,
				"edge?", 6, 0, 500 + (uint64_t)i, 0) != 0,
		      "sendmsg request: %s", strerror(errno));
	for (int i = 0; i < EDGE_RPCS; i++)
		take_held(srv, &h[i]);
	no_edge(e, "requests held");
	answer(srv, &h[0]);
	edge(e, "a response");
	no_edge(e, "the response waits unread");
	answer(srv, &h[1]);
	edge(e, "a second response while the first waits unread");
	no_edge(e, "two responses wait unread");
	memset(&args, 0, sizeof(args));
	got = take_all(srv, cli, &args, h, &next, EDGE_RPCS);
	while (got < EDGE_RPCS) {
		edge_in(e, "a response that came while the others were "
			"read");
		got += take_all(srv, cli, &args, h, &next, EDGE_RPCS);
	}
	/* An edge left over (a response that came while the reading went
	 * on and was read in it) finds nothing: EAGAIN. */
	if (epoll_wait(e, &out, 1, 0) == 1)
		CHECK(take_all(srv, cli, &args, h, &next, EDGE_RPCS) == 0,
		      "a response too many");
	CHECK(close(e) == 0, "close epoll: %s", strerror(errno));
}

/* private_rpcs - private responses never make the client readable. */
static void private_rpcs(const struct kapi_sock *srv,
			 const struct kapi_sock *cli,
			 const struct sockaddr_storage *dest, socklen_t dlen)
{
	struct homa_recvmsg_args a;
	uint64_t pid, sid;
	bool got = false;

	/* One private RPC alone: its response arrives while the client
	 * polls (each poll lasts 200 ms and must return 0); a nonblocking
	 * recvmsg(id) after a poll then finds it. */
	pid = kapi_send(cli->fd, (const struct sockaddr *)dest, dlen,
			"private", 8, 0, 50, HOMA_SENDMSG_PRIVATE);
	CHECK(pid != 0, "sendmsg private request: %s", strerror(errno));
	expect_ready(1u << SRV, "private request sent");
	serve_one(srv);
	for (int tries = 0; tries < 25 && !got; tries++) {
		struct pollfd pf = { .fd = cli->fd, .events = POLLIN };

		CHECK(poll(&pf, 1, 200) == 0,
		      "a private response made the client readable (revents "
		      "%x)", pf.revents);
		expect_ready(0, "private response sent");
		memset(&a, 0, sizeof(a));
		EXPECT_ERR(kapi_recv(cli->fd, &a, MSG_DONTWAIT, NULL, NULL),
			   EAGAIN, "recvmsg(id 0) with only a private RPC");
		got = take_private(cli, pid, 50, "re private", true);
	}
	CHECK(got, "the private response never arrived");
	expect_ready(0, "private response taken");

	/* A private and a shared RPC on the same socket: the shared
	 * response makes it readable, and recvmsg(0) takes only that. */
	pid = kapi_send(cli->fd, (const struct sockaddr *)dest, dlen,
			"private", 8, 0, 51, HOMA_SENDMSG_PRIVATE);
	CHECK(pid != 0, "sendmsg private request: %s", strerror(errno));
	sid = kapi_send(cli->fd, (const struct sockaddr *)dest, dlen,
			"shared", 7, 0, 52, 0);
	CHECK(sid != 0, "sendmsg shared request: %s", strerror(errno));
	serve_one(srv);
	serve_one(srv);
	expect_ready(1u << CLI, "private and shared responses sent");
	memset(&a, 0, sizeof(a));
	CHECK(kapi_recv(cli->fd, &a, 0, NULL, NULL) == 10 && a.id == sid &&
	      a.completion_cookie == 52 &&
	      strcmp(cli->region + a.bpage_offsets[0], "re shared") == 0,
	      "recvmsg(id 0) next to a private RPC: RPC %llu cookie %llu, %s",
	      (unsigned long long)a.id,
	      (unsigned long long)a.completion_cookie, strerror(errno));
	/* Give the private response time to arrive, if it has not: it must
	 * not make the socket readable either way. */
	{
		struct pollfd pf = { .fd = cli->fd, .events = POLLIN };

		CHECK(poll(&pf, 1, 200) == 0, "the private response waiting "
		      "made the client readable (revents %x)", pf.revents);
	}
	expect_ready(0, "shared response taken, private one waiting");
	a.id = 0;   /* (hands the shared response's bpage back) */
	EXPECT_ERR(kapi_recv(cli->fd, &a, MSG_DONTWAIT, NULL, NULL), EAGAIN,
		   "recvmsg(id 0) with only a private response waiting");
	take_private(cli, pid, 51, "re private", false);
	expect_ready(0, "both responses taken");
}

int main(int argc, char **argv)
{
	int port = kapi_port(argc, argv, 1, 4100);
	struct homa_recvmsg_args sargs, cargs;
	struct kapi_sock srv, cli;
	struct sockaddr_storage dest, peer;
	struct sockaddr_in uaddr;
	socklen_t dlen, plen, ulen = sizeof(uaddr);
	int pfd[2], udp;
	char buf[64];
	uint64_t id;

	srv = kapi_open(AF_INET, port, 0);
	cli = kapi_open(AF_INET, 0, 0);
	CHECK(pipe(pfd) == 0, "pipe: %s", strerror(errno));
	udp = socket(AF_INET, SOCK_DGRAM, 0);
	CHECK(udp >= 0, "udp socket: %s", strerror(errno));
	memset(&uaddr, 0, sizeof(uaddr));
	uaddr.sin_family = AF_INET;
	uaddr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(bind(udp, (struct sockaddr *)&uaddr, sizeof(uaddr)) == 0 &&
	      getsockname(udp, (struct sockaddr *)&uaddr, &ulen) == 0,
	      "udp bind: %s", strerror(errno));
	fds[SRV] = srv.fd;
	fds[CLI] = cli.fd;
	fds[PIPE_R] = pfd[0];
	fds[UDP] = udp;
	ep = epoll_create1(EPOLL_CLOEXEC);
	CHECK(ep >= 0, "epoll_create1: %s", strerror(errno));
	for (int i = 0; i < NFDS; i++) {
		struct epoll_event ev = { .events = EPOLLIN,
					  .data.u32 = (uint32_t)i };

		CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) == 0,
		      "epoll_ctl ADD %s: %s", names[i], strerror(errno));
	}
	expect_ready(0, "idle");

	/* The pipe. */
	CHECK(write(pfd[1], "through the pipe", 17) == 17, "pipe write: %s",
	      strerror(errno));
	expect_ready(1u << PIPE_R, "pipe written");
	CHECK(read(pfd[0], buf, sizeof(buf)) == 17 &&
	      strcmp(buf, "through the pipe") == 0, "pipe read");
	expect_ready(0, "pipe drained");

	/* The UDP socket. */
	CHECK(sendto(udp, "datagram", 9, 0, (struct sockaddr *)&uaddr,
		     sizeof(uaddr)) == 9, "udp sendto: %s", strerror(errno));
	expect_ready(1u << UDP, "udp datagram sent");
	CHECK(recvfrom(udp, buf, sizeof(buf), 0, NULL, NULL) == 9 &&
	      strcmp(buf, "datagram") == 0, "udp recvfrom");
	expect_ready(0, "udp drained");

	/* A request: the server only. */
	memset(&sargs, 0, sizeof(sargs));
	memset(&cargs, 0, sizeof(cargs));
	EXPECT_ERR(kapi_recv(srv.fd, &sargs, MSG_DONTWAIT, NULL, NULL), EAGAIN,
		   "recvmsg on an empty server socket");
	dlen = kapi_addr(AF_INET, port, &dest);
	id = kapi_send(cli.fd, (struct sockaddr *)&dest, dlen, "ping", 5, 0,
		       42, 0);
	CHECK(id != 0, "sendmsg request: %s", strerror(errno));
	expect_ready(1u << SRV, "request sent");
	CHECK(kapi_recv(srv.fd, &sargs, MSG_DONTWAIT, &peer, &plen) == 5 &&
	      (sargs.id & 1) && strcmp(srv.region + sargs.bpage_offsets[0],
				       "ping") == 0, "server recvmsg: %s",
	      strerror(errno));
	expect_ready(0, "request taken");

	/* Writable, always. */
	{
		struct pollfd pf[2] = { { .fd = srv.fd, .events = POLLOUT },
					{ .fd = cli.fd, .events = POLLOUT } };

		CHECK(poll(pf, 2, 0) == 2 && (pf[0].revents & POLLOUT) &&
		      (pf[1].revents & POLLOUT), "Homa sockets not writable");
	}

	/* The response: the client only. */
	CHECK(kapi_send(srv.fd, (struct sockaddr *)&peer, plen, "pong", 5,
			sargs.id, 0, 0) == sargs.id, "sendmsg response: %s",
	      strerror(errno));
	expect_ready(1u << CLI, "response sent");
	CHECK(kapi_recv(cli.fd, &cargs, 0, NULL, NULL) == 5 &&
	      cargs.id == id && cargs.completion_cookie == 42 &&
	      strcmp(cli.region + cargs.bpage_offsets[0], "pong") == 0,
	      "client recvmsg: %s", strerror(errno));
	expect_ready(0, "response taken");

	/* Private RPCs. */
	private_rpcs(&srv, &cli, &dest, dlen);

	/* Edge-triggered epoll, alone and as gRPC registers. */
	edge_triggered(&srv, &cli, &dest, dlen, EPOLLIN | EPOLLET);
	edge_triggered(&srv, &cli, &dest, dlen, EPOLLIN | EPOLLOUT | EPOLLET);

	/* Everything at once. */
	CHECK(write(pfd[1], "x", 1) == 1, "pipe write");
	CHECK(kapi_send(cli.fd, (struct sockaddr *)&dest, dlen, "again", 6,
			0, 43, 0) != 0, "sendmsg: %s", strerror(errno));
	for (int tries = 0; tries < 500 && ready_poll(false) !=
	     ((1u << PIPE_R) | (1u << SRV)); tries++)
		usleep(10000);
	expect_ready((1u << PIPE_R) | (1u << SRV), "pipe and request");

	/* A nonblocking Homa socket. */
	{
		struct kapi_sock nb = kapi_open(AF_INET, 0, SOCK_NONBLOCK);
		struct homa_recvmsg_args a;

		memset(&a, 0, sizeof(a));
		EXPECT_ERR(kapi_recv(nb.fd, &a, 0, NULL, NULL), EAGAIN,
			   "recvmsg on an empty SOCK_NONBLOCK socket");
		kapi_close(&nb);
	}

	close(ep);
	close(udp);
	close(pfd[0]);
	close(pfd[1]);
	kapi_close(&cli);
	kapi_close(&srv);
	printf("kapi_poll: PASS (epoll, poll, ppoll, select, pselect, "
	       "epoll_pwait over Homa, pipe and UDP descriptors)\n");
	return 0;
}
