/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tool_homa_server - a Homa server of the tools: threads that take the
 * requests of one bound socket and answer each one, either with an echo of
 * the request (straight from its bpages) or with the first bytes of a
 * pattern, as a callback of the tool decides.  Stopped by shutting the
 * socket down.
 */
#ifndef TOOL_HOMA_SERVER_H
#define TOOL_HOMA_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tool_hsock.h"

#define TOOL_HOMA_SERVER_MAX_THREADS 32

/* What tool_homa_answer_fn returns for "echo the request". */
#define TOOL_ANSWER_ECHO UINT32_MAX

/*
 * tool_homa_answer_fn - how to answer a request of len bytes whose first
 * head_len bytes are at head (head is NULL when len is 0): TOOL_ANSWER_ECHO,
 * or the length of the response, sent from the server's pattern (at most
 * its length).  Called by every server thread at once.
 */
typedef uint32_t (*tool_homa_answer_fn)(void *ctx, const uint8_t *head,
					size_t head_len, size_t len);

/* What a server is started with. */
struct tool_homa_server_config {
	union sockaddr_in_union addr;   /* bound to this */
	size_t region_len;              /* bytes of the buffer region */
	int nthreads;                   /* 1..TOOL_HOMA_SERVER_MAX_THREADS */
	int epoll;                      /* threads wait in epoll_wait, then
					 * read without blocking */
	tool_homa_answer_fn answer;
	void *answer_ctx;
	const uint8_t *pattern;         /* the bytes of every non-echo
					 * response */
};

/* One server thread: its receive state over the shared socket. */
struct tool_homa_server_thread {
	struct tool_homa_server *server;
	struct tool_hsock view;
	pthread_t thread;
};

/* A running server. */
struct tool_homa_server {
	struct tool_homa_server_config cfg;
	struct tool_hsock sock;
	int nthreads;                   /* threads running */
	struct tool_homa_server_thread threads[TOOL_HOMA_SERVER_MAX_THREADS];
	atomic_ulong served;            /* requests answered */
	atomic_ulong errors;            /* failed calls */
	pthread_mutex_t lock;           /* guards first_error */
	char first_error[160];          /* "what: strerror" of the first
					 * error; read it once stopped */
};

/*
 * tool_homa_server_start - open the socket of cfg (bound to cfg->addr)
 * and start cfg->nthreads threads answering its requests.  A thread leaves
 * when the socket is shut down or closed, or after 1000 failed receives in
 * a row.  Returns 0, or -1 with errno set and the reason in why (errno
 * EADDRINUSE: the port is taken); nothing is left open then.
 */
int tool_homa_server_start(struct tool_homa_server *s,
			   const struct tool_homa_server_config *cfg,
			   char *why, size_t whycap);

/*
 * tool_homa_server_stop - shut the socket down and join the threads,
 * waiting timeout_ms for each at most (0: as long as it takes).  The
 * socket stays open (its counters readable) for tool_homa_server_close.
 * Returns 0, or -1 with errno (ETIMEDOUT) when a thread did not leave;
 * the server must then not be closed.
 */
int tool_homa_server_stop(struct tool_homa_server *s, unsigned int timeout_ms);

/* tool_homa_server_close - close the socket of a stopped server. */
void tool_homa_server_close(struct tool_homa_server *s);

#endif /* TOOL_HOMA_SERVER_H */
