// SPDX-License-Identifier: BSD-2-Clause
/* TCP sockets of the tools: see tool_tcp.h. */

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tool_addr.h"
#include "tool_tcp.h"

int tool_tcp_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int tool_fd_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* close_keeping_errno - close fd without changing errno; returns -1. */
static int close_keeping_errno(int fd)
{
	int err = errno;

	close(fd);
	errno = err;
	return -1;
}

int tool_tcp_connect(const union sockaddr_in_union *a)
{
	int fd = socket(a->sa.sa_family, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, &a->sa, tool_addr_len(a)) < 0 ||
	    tool_tcp_nodelay(fd) < 0)
		return close_keeping_errno(fd);
	return fd;
}

int tool_tcp_listen(const union sockaddr_in_union *a, int backlog)
{
	int one = 1, fd = socket(a->sa.sa_family, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, &a->sa, tool_addr_len(a)) < 0 || listen(fd, backlog) < 0)
		return close_keeping_errno(fd);
	return fd;
}
