/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tool_tcp - TCP sockets as the tools compare Homa against them:
 * TCP_NODELAY, optional O_NONBLOCK, a blocking connect, a listener.
 */
#ifndef TOOL_TCP_H
#define TOOL_TCP_H

#include "homa.h"

/* tool_tcp_nodelay - set TCP_NODELAY on fd.  Returns 0 or -1 with errno. */
int tool_tcp_nodelay(int fd);

/* tool_fd_nonblocking - set O_NONBLOCK on fd.  Returns 0 or -1 with
 * errno. */
int tool_fd_nonblocking(int fd);

/* tool_tcp_connect - a blocking TCP connection to a with TCP_NODELAY, or
 * -1 with errno (nothing left open). */
int tool_tcp_connect(const union sockaddr_in_union *a);

/* tool_tcp_listen - a TCP socket listening on a (SO_REUSEADDR, backlog
 * connections waiting at most), or -1 with errno (nothing left open). */
int tool_tcp_listen(const union sockaddr_in_union *a, int backlog);

#endif /* TOOL_TCP_H */
