/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kapi_dup - descriptor calls on Homa sockets, with the Linux kernel Homa
 * API and nothing but libc (on libhoma: under LD_PRELOAD=libhoma_preload.so).
 *
 *   usage: kapi_dup PORT
 *
 * Checked:
 *   - dup, dup2, dup3 and fcntl(F_DUPFD_CLOEXEC) of a server socket give
 *     descriptors of the same socket: a request sent to it is received
 *     through any of them, and the response goes out through another;
 *   - closing the descriptor socket() returned leaves the others working;
 *   - dup2 of a pipe onto one of them makes that number the pipe, and the
 *     socket lives on through the rest;
 *   - the socket is closed with its last descriptor: its port can then be
 *     bound again; so it is when close_range closes its last descriptors;
 *   - FD_CLOEXEC follows SOCK_CLOEXEC, dup3(O_CLOEXEC) and F_DUPFD_CLOEXEC;
 *   - O_NONBLOCK set with fcntl(F_SETFL) or ioctl(FIONBIO) makes recvmsg
 *     fail with EAGAIN when nothing waits, and F_GETFL reports it.
 * Prints "kapi_dup: PASS" and exits 0, else "FAIL ..." and exits 1.
 */
#include <fcntl.h>

#include "kapi_util.h"

static struct sockaddr_storage dest;
static socklen_t dlen;

/* echo_via - a request from client cli arrives at server descriptor rfd
 * and is answered through server descriptor sfd. */
static void echo_via(int cli, int rfd, int sfd, const char *region,
		     const char *what)
{
	struct homa_recvmsg_args sa, ca;
	struct sockaddr_storage peer;
	socklen_t plen;
	uint64_t id;

	memset(&sa, 0, sizeof(sa));
	memset(&ca, 0, sizeof(ca));
	id = kapi_send(cli, (struct sockaddr *)&dest, dlen, what,
		       strlen(what) + 1, 0, 9, 0);
	CHECK(id, "%s: sendmsg: %s", what, strerror(errno));
	CHECK(kapi_recv(rfd, &sa, 0, &peer, &plen) ==
	      (ssize_t)strlen(what) + 1 &&
	      strcmp(region + sa.bpage_offsets[0], what) == 0,
	      "%s: server recvmsg: %s", what, strerror(errno));
	CHECK(kapi_send(sfd, (struct sockaddr *)&peer, plen, "ok", 3, sa.id,
			0, 0) == sa.id, "%s: response: %s", what,
	      strerror(errno));
	CHECK(kapi_recv(cli, &ca, 0, NULL, NULL) == 3 && ca.id == id,
	      "%s: client recvmsg: %s", what, strerror(errno));
	/* Hand back both messages' bpages. */
	sa.id = 0;
	EXPECT_ERR(kapi_recv(rfd, &sa, MSG_DONTWAIT, NULL, NULL), EAGAIN,
		   "server: nothing more");
	ca.id = 0;
	EXPECT_ERR(kapi_recv(cli, &ca, MSG_DONTWAIT, NULL, NULL), EAGAIN,
		   "client: nothing more");
}

/* cloexec - whether fd has FD_CLOEXEC. */
static bool cloexec(int fd)
{
	int f = fcntl(fd, F_GETFD);

	CHECK(f >= 0, "F_GETFD: %s", strerror(errno));
	return (f & FD_CLOEXEC) != 0;
}

int main(int argc, char **argv)
{
	int port = kapi_port(argc, argv, 1, 4500);
	struct kapi_sock srv, cli, again;
	struct homa_recvmsg_args a;
	int d1, d2, d3, d4, p[2], fl, on = 1, off = 0;
	char buf[8];

	srv = kapi_open(AF_INET, port, SOCK_CLOEXEC);
	cli = kapi_open(AF_INET, 0, 0);
	dlen = kapi_addr(AF_INET, port, &dest);
	CHECK(cloexec(srv.fd) && !cloexec(cli.fd), "SOCK_CLOEXEC not kept");

	d1 = dup(srv.fd);
	d2 = fcntl(srv.fd, F_DUPFD_CLOEXEC, 50);
	d3 = 60;
	CHECK(dup2(srv.fd, d3) == d3, "dup2: %s", strerror(errno));
	d4 = 61;
	CHECK(dup3(srv.fd, d4, O_CLOEXEC) == d4, "dup3: %s", strerror(errno));
	CHECK(d1 >= 0 && d2 >= 50, "dup/F_DUPFD_CLOEXEC: %s", strerror(errno));
	CHECK(!cloexec(d1) && cloexec(d2) && !cloexec(d3) && cloexec(d4),
	      "FD_CLOEXEC of the copies");

	echo_via(cli.fd, srv.fd, srv.fd, srv.region, "original");
	echo_via(cli.fd, d1, d2, srv.region, "dup in, F_DUPFD out");
	echo_via(cli.fd, d3, d4, srv.region, "dup2 in, dup3 out");

	/* The descriptor socket() gave goes; the copies stay. */
	CHECK(close(srv.fd) == 0, "close original: %s", strerror(errno));
	echo_via(cli.fd, d4, d1, srv.region, "after closing the original");

	/* A pipe over one of the copies. */
	CHECK(pipe(p) == 0, "pipe: %s", strerror(errno));
	CHECK(dup2(p[0], d3) == d3, "dup2 pipe: %s", strerror(errno));
	CHECK(write(p[1], "pipe", 5) == 5 && read(d3, buf, sizeof(buf)) == 5 &&
	      strcmp(buf, "pipe") == 0, "the pipe through %d", d3);
	echo_via(cli.fd, d2, d2, srv.region, "after dup2 over a copy");

	/* Nonblocking. */
	fl = fcntl(d1, F_GETFL);
	CHECK(fl >= 0 && !(fl & O_NONBLOCK), "F_GETFL %#x", fl);
	CHECK(fcntl(d1, F_SETFL, fl | O_NONBLOCK) == 0, "F_SETFL: %s",
	      strerror(errno));
	CHECK(fcntl(d2, F_GETFL) & O_NONBLOCK, "O_NONBLOCK not shared");
	memset(&a, 0, sizeof(a));
	EXPECT_ERR(kapi_recv(d2, &a, 0, NULL, NULL), EAGAIN,
		   "recvmsg on an O_NONBLOCK socket");
	CHECK(fcntl(d1, F_SETFL, fl) == 0 && ioctl(d1, FIONBIO, &on) == 0,
	      "FIONBIO: %s", strerror(errno));
	EXPECT_ERR(kapi_recv(d4, &a, 0, NULL, NULL), EAGAIN,
		   "recvmsg after FIONBIO");
	CHECK(ioctl(d1, FIONBIO, &off) == 0 &&
	      !(fcntl(d1, F_GETFL) & O_NONBLOCK), "FIONBIO off");
	echo_via(cli.fd, d4, d1, srv.region, "blocking again");

	/* The last descriptor closes the socket: its port is free. */
	CHECK(close(d1) == 0 && close(d2) == 0, "close: %s", strerror(errno));
	again = kapi_open(AF_INET, 0, 0);
	{
		struct sockaddr_storage addr;
		socklen_t alen = kapi_addr(AF_INET, port, &addr);

		EXPECT_ERR(bind(again.fd, (struct sockaddr *)&addr, alen),
			   EADDRINUSE, "bind while a copy is open");
		CHECK(close(d4) == 0, "close last: %s", strerror(errno));
		CHECK(bind(again.fd, (struct sockaddr *)&addr, alen) == 0,
		      "bind after the last close: %s", strerror(errno));
	}
	EXPECT_ERR(close(d4), EBADF, "close twice");
	CHECK(close(d3) == 0 && close(p[0]) == 0 && close(p[1]) == 0,
	      "close pipe: %s", strerror(errno));
	kapi_close(&again);

	/* close_range over the last descriptors of a socket closes it. */
	{
		struct kapi_sock y = kapi_open(AF_INET, port, 0);
		struct sockaddr_storage addr;
		socklen_t alen = kapi_addr(AF_INET, port, &addr);
		int h1 = fcntl(y.fd, F_DUPFD, 200), h2 = fcntl(y.fd, F_DUPFD,
								200);

		CHECK(h1 >= 200 && h2 > h1 && close(y.fd) == 0,
		      "F_DUPFD 200: %s", strerror(errno));
		echo_via(cli.fd, h1, h2, y.region, "copies at 200 and up");
		CHECK(close_range((unsigned)h1, (unsigned)h2, 0) == 0,
		      "close_range: %s", strerror(errno));
		EXPECT_ERR(fcntl(h1, F_GETFD), EBADF, "F_GETFD after "
			   "close_range");
		again = kapi_open(AF_INET, 0, 0);
		CHECK(bind(again.fd, (struct sockaddr *)&addr, alen) == 0,
		      "bind after close_range: %s", strerror(errno));
		kapi_close(&again);
		munmap(y.region, y.region_len);
	}
	kapi_close(&cli);
	munmap(srv.region, srv.region_len);
	printf("kapi_dup: PASS\n");
	return 0;
}
