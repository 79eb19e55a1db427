// SPDX-License-Identifier: BSD-2-Clause
/* homa-perf: the TCP server: a thread per connection, requests answered
 * in order (see perf.h). */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "perf.h"
#include "tool_addr.h"
#include "tool_frame.h"
#include "tool_tcp.h"

/* tcp_conn_main - thread: answer the frames of one connection until it
 * ends (or is shut down). */
static void *tcp_conn_main(void *arg)
{
	struct tcp_conn_thread *c = arg;
	uint8_t *buf = malloc(MAX_MSG);
	uint32_t resp;
	long len;
	int rc;

	if (!buf) {
		atomic_fetch_add(&c->s->errors, 1);
		return NULL;
	}
	for (;;) {
		len = tool_frame_read(c->fd, buf, MAX_MSG);
		if (len < 0) {
			if (errno != 0 && errno != ECONNRESET)
				atomic_fetch_add(&c->s->errors, 1);
			break;
		}
		resp = request_answer(NULL, buf, (size_t)len, (size_t)len);
		if (resp == TOOL_ANSWER_ECHO)
			rc = tool_frame_write(c->fd, buf, (size_t)len);
		else
			rc = tool_frame_write(c->fd, perf_pattern, resp);
		if (rc < 0) {
			if (errno != EPIPE && errno != ECONNRESET)
				atomic_fetch_add(&c->s->errors, 1);
			break;
		}
		atomic_fetch_add(&c->s->served, 1);
	}
	free(buf);
	return NULL;
}

/* tcp_acceptor_main - thread: accept connections, a thread each, until
 * the listener is shut down. */
static void *tcp_acceptor_main(void *arg)
{
	struct tcp_server *s = arg;
	struct tcp_conn_thread *c;
	int fd;

	for (;;) {
		fd = accept(s->lfd, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break;          /* shut down (EINVAL) or fatal */
		}
		c = calloc(1, sizeof(*c));
		pthread_mutex_lock(&s->lock);
		if (!c || s->stopping || s->nconns == MAX_TCP_CONNS ||
		    tool_tcp_nodelay(fd) < 0) {
			pthread_mutex_unlock(&s->lock);
			atomic_fetch_add(&s->errors, !s->stopping);
			free(c);
			close(fd);
			continue;
		}
		c->s = s;
		c->fd = fd;
		if (pthread_create(&c->thread, NULL, tcp_conn_main, c) != 0) {
			pthread_mutex_unlock(&s->lock);
			atomic_fetch_add(&s->errors, 1);
			free(c);
			close(fd);
			continue;
		}
		(void)pthread_setname_np(c->thread, "tcp-server");
		s->conns[s->nconns++] = c;
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

int tcp_server_start(struct tcp_server *s, int family, int port)
{
	union sockaddr_in_union a = tool_addr_any(family, port);
	int err;

	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	atomic_init(&s->served, 0);
	atomic_init(&s->errors, 0);
	s->lfd = tool_tcp_listen(&a, 128);
	if (s->lfd < 0) {
		fprintf(stderr, PROG ": TCP port %d: %s%s\n", port,
			strerror(errno), errno == EADDRINUSE ?
			" (choose another --tcp-port)" : "");
		return -1;
	}
	err = pthread_create(&s->acceptor, NULL, tcp_acceptor_main, s);
	if (err != 0) {
		fprintf(stderr, PROG ": pthread_create: %s\n", strerror(err));
		close(s->lfd);
		return -1;
	}
	return 0;
}

void tcp_server_stop(struct tcp_server *s)
{
	int i;

	pthread_mutex_lock(&s->lock);
	s->stopping = 1;
	pthread_mutex_unlock(&s->lock);
	shutdown(s->lfd, SHUT_RDWR);
	pthread_join(s->acceptor, NULL);
	close(s->lfd);
	for (i = 0; i < s->nconns; i++)
		shutdown(s->conns[i]->fd, SHUT_RDWR);
	for (i = 0; i < s->nconns; i++) {
		pthread_join(s->conns[i]->thread, NULL);
		close(s->conns[i]->fd);
		free(s->conns[i]);
	}
	s->nconns = 0;
	pthread_mutex_destroy(&s->lock);
}
