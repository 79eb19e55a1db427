/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * example_util.h - what the homa-rpc examples share: the server's address
 * from the command line, and waiting for SIGINT or SIGTERM.
 */
#ifndef EXAMPLE_UTIL_H
#define EXAMPLE_UTIL_H

#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <homa-rpc.h>

/* example_addr - 127.0.0.1 (or INADDR_ANY when @any) and the port in
 * @arg (1..32767); exits with a message on a bad port. */
static inline union sockaddr_in_union example_addr(const char *arg, int any)
{
	union sockaddr_in_union a;
	char *end;
	long port = strtol(arg, &end, 10);

	if (*arg == '\0' || *end != '\0' || port < 1 || port > 32767) {
		fprintf(stderr, "bad port '%s' (want 1..32767)\n", arg);
		exit(2);
	}
	memset(&a, 0, sizeof(a));
	a.in4.sin_family = AF_INET;
	a.in4.sin_port = htons((uint16_t)port);
	a.in4.sin_addr.s_addr = htonl(any ? INADDR_ANY : INADDR_LOOPBACK);
	return a;
}

/* example_block_signals - block SIGINT and SIGTERM in this thread and
 * the threads it starts afterwards (call before starting a server). */
static inline void example_block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

/* example_wait_signal - wait for one of the signals of @set. */
static inline void example_wait_signal(const sigset_t *set)
{
	int sig;

	sigwait(set, &sig);
}

#endif /* EXAMPLE_UTIL_H */
