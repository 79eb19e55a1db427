// SPDX-License-Identifier: BSD-2-Clause
/* The tools' Homa server: see tool_homa_server.h. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "tool_clock.h"
#include "tool_homa_server.h"

/* A thread leaves after this many failed receives in a row. */
#define MAX_BAD_IN_ROW 1000

/* note_error - count an error (errno says which); keep the first one's
 * text as "what: strerror". */
static void note_error(struct tool_homa_server *s, const char *what)
{
	int err = errno;

	if (atomic_fetch_add(&s->errors, 1) == 0) {
		pthread_mutex_lock(&s->lock);
		snprintf(s->first_error, sizeof(s->first_error), "%s: %s",
			 what, strerror(err));
		pthread_mutex_unlock(&s->lock);
	}
}

/* epoll_watch - an epoll instance watching fd for input, or -1 (errno
 * set). */
static int epoll_watch(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		return -1;
	ev.data.fd = fd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(ep);
		return -1;
	}
	return ep;
}

/* epoll_wait_input - wait until the socket ep watches is readable, or 100
 * ms pass.  Returns 0, or -1 with errno when epoll_wait fails for a reason
 * other than EINTR. */
static int epoll_wait_input(int ep)
{
	struct epoll_event ev;

	if (epoll_wait(ep, &ev, 1, 100) < 0 && errno != EINTR)
		return -1;
	return 0;
}

/* answer_request - answer the request of len bytes that h->args describes,
 * as the server's answer callback says. */
static void answer_request(struct tool_homa_server *s, struct tool_hsock *h,
			   size_t len)
{
	struct iovec iov[HOMA_MAX_BPAGES];
	int n = tool_hsock_iov(h, len, iov), rc;
	uint32_t resp;

	if (n < 0) {
		errno = EFAULT;
		note_error(s, "server bpages");
		return;
	}
	resp = s->cfg.answer(s->cfg.answer_ctx,
			     n > 0 ? iov[0].iov_base : NULL,
			     n > 0 ? iov[0].iov_len : 0, len);
	if (resp == TOOL_ANSWER_ECHO)
		rc = homa_replyv(h->fd, iov, n, &h->args.peer_addr,
				 h->args.id);
	else
		rc = homa_reply(h->fd, s->cfg.pattern, resp,
				&h->args.peer_addr, h->args.id);
	if (rc < 0)
		note_error(s, "server homa_reply");
	else
		atomic_fetch_add(&s->served, 1);
}

/* serve - the receive loop of thread t (flags HOMA_RECVMSG_*; ep >= 0:
 * wait in epoll_wait on ep when nothing is there). */
static void serve(struct tool_homa_server_thread *t, int flags, int ep)
{
	struct tool_homa_server *s = t->server;
	int bad_in_row = 0;
	ssize_t len;

	while (bad_in_row < MAX_BAD_IN_ROW) {
		len = tool_hsock_recv(&t->view, flags, 0);
		if (len < 0 && ep >= 0 &&
		    (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (epoll_wait_input(ep) < 0) {
				note_error(s, "server epoll_wait");
				bad_in_row++;
			}
			continue;
		}
		if (len < 0) {
			if (errno == ESHUTDOWN || errno == EBADF)
				break;
			note_error(s, "server homa_recvmsg");
			bad_in_row++;
			continue;
		}
		bad_in_row = 0;
		answer_request(s, &t->view, (size_t)len);
	}
}

/* server_thread_main - thread: blocks in homa_recvmsg, or with cfg.epoll
 * in epoll_wait and then reads without blocking until nothing is left. */
static void *server_thread_main(void *arg)
{
	struct tool_homa_server_thread *t = arg;
	int ep = -1;

	if (!t->server->cfg.epoll) {
		serve(t, HOMA_RECVMSG_REQUEST, -1);
		return NULL;
	}
	ep = epoll_watch(t->view.fd);
	if (ep < 0) {
		note_error(t->server, "server epoll");
		return NULL;
	}
	serve(t, HOMA_RECVMSG_REQUEST | HOMA_RECVMSG_NONBLOCKING, ep);
	close(ep);
	return NULL;
}

/* join_within - join thread, waiting timeout_ms at most (0: no limit).
 * Returns 0 or the error number of the join. */
static int join_within(pthread_t thread, unsigned int timeout_ms)
{
	struct timespec until;

	if (timeout_ms == 0)
		return pthread_join(thread, NULL);
	until = tool_realtime_deadline(timeout_ms);
	return pthread_timedjoin_np(thread, NULL, &until);
}

int tool_homa_server_start(struct tool_homa_server *s,
			   const struct tool_homa_server_config *cfg,
			   char *why, size_t whycap)
{
	struct tool_homa_server_thread *t;
	int i, err;

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	pthread_mutex_init(&s->lock, NULL);
	atomic_init(&s->served, 0);
	atomic_init(&s->errors, 0);
	if (tool_hsock_open(&s->sock, cfg->addr.sa.sa_family, &cfg->addr,
			    cfg->region_len, why, whycap) < 0) {
		pthread_mutex_destroy(&s->lock);
		return -1;
	}
	for (i = 0; i < cfg->nthreads; i++) {
		t = &s->threads[i];
		t->server = s;
		tool_hsock_share(&t->view, &s->sock);
		err = pthread_create(&t->thread, NULL, server_thread_main, t);
		if (err != 0) {
			snprintf(why, whycap, "pthread_create: %s",
				 strerror(err));
			tool_homa_server_stop(s, 0);
			tool_homa_server_close(s);
			errno = err;
			return -1;
		}
		(void)pthread_setname_np(t->thread, "homa-server");
		s->nthreads++;
	}
	return 0;
}

int tool_homa_server_stop(struct tool_homa_server *s, unsigned int timeout_ms)
{
	int i, err, rc = 0;

	homa_shutdown(s->sock.fd, SHUT_RDWR);
	for (i = 0; i < s->nthreads; i++) {
		err = join_within(s->threads[i].thread, timeout_ms);
		if (err != 0) {
			errno = err;
			rc = -1;
		}
	}
	return rc;
}

void tool_homa_server_close(struct tool_homa_server *s)
{
	tool_hsock_close(&s->sock);
	pthread_mutex_destroy(&s->lock);
}
