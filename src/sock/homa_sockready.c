/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_sockready - the application's descriptor of a socket and the
 * readiness it reports to poll, select and epoll.
 *
 * The descriptor is one end of a connected AF_UNIX stream pair; the socket
 * keeps the other end (readyfd) to itself.  Neither carries data the
 * application reads: the two directions are used as two flags.
 *   POLLIN:  a byte sent from readyfd waits in the descriptor's receive
 *            queue (readable); reading the bytes back clears the flag.
 *            Each new message that becomes ready while the flag is on
 *            sends one more byte: the kernel wakes the descriptor's
 *            pollers on every byte, so edge-triggered epoll (EPOLLET)
 *            reports each arrival, as for the kernel's sockets.
 *   POLLOUT: the descriptor is writable while the bytes it has sent and
 *            readyfd has not read take at most a quarter of its send
 *            buffer (the kernel's rule for AF_UNIX stream sockets).  To
 *            clear the flag the descriptor sends filler until its (minimal)
 *            send buffer is full; readyfd reading the filler sets it again,
 *            and the kernel wakes the descriptor's pollers.
 * Every call here uses MSG_DONTWAIT, so an application that turned
 * O_NONBLOCK off on its descriptor cannot make the engine block.  An eventfd,
 * used before, cannot report "not readable and not writable" at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "homa_sock.h"

/* Filler bytes per send that clears POLLOUT, and the most sends (a bound
 * that the minimal send buffer never reaches). */
#define READY_FILL_CHUNK 512
#define READY_FILL_MAX_SENDS 256

/* drain - read and drop everything waiting at fd (nonblocking): the
 * filler that took POLLOUT away. */
static void drain(int fd)
{
	char buf[1024];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

/* See homa_sock.h. */
int homa_sock_ready_open(int *app, int *peer)
{
	int pair[2], one = 1;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0, pair) != 0)
		return -errno;
	/* The smallest send buffer the kernel allows: a few sends fill it. */
	(void)setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &one, sizeof(one));
	*app = pair[0];
	*peer = pair[1];
	return 0;
}

/* See homa_sock.h. */
void homa_sock_ready_in(struct homa_sock *s, bool on)
{
	char b[64] = { 'r' };

	if (s->fd < 0)
		return;
	/* One system call each way in the common case (one byte). */
	if (on) {
		(void)!send(s->readyfd, b, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		return;
	}
	while (recv(s->fd, b, sizeof(b), MSG_DONTWAIT) == (ssize_t)sizeof(b))
		;
}

/* See homa_sock.h. */
void homa_sock_ready_out(struct homa_sock *s, bool on)
{
	static const char filler[READY_FILL_CHUNK];
	int i;

	s->out_off = !on;
	if (s->fd < 0)
		return;
	if (on) {
		drain(s->readyfd);
		return;
	}
	for (i = 0; i < READY_FILL_MAX_SENDS; i++)
		if (send(s->fd, filler, sizeof(filler),
			 MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
			break;
}
