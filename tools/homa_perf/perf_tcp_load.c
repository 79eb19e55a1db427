// SPDX-License-Identifier: BSD-2-Clause
/* homa-perf: the TCP load worker of a closed loop: pipelined connections,
 * one thread, ppoll (see perf.h). */

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "perf.h"
#include "tool_clock.h"
#include "tool_frame.h"
#include "tool_tcp.h"

struct tcp_req {
	uint64_t t0;
	uint32_t size;
	int bucket;
	uint8_t hdr[TOOL_FRAME_HDR];
};

/* The client end of one connection.  Requests [head, unsent) are written
 * and await their responses in order; [unsent, tail) are queued, the
 * first of them with 'wrote' bytes of its frame written.  The indexes only
 * grow; an entry lives at index % cap. */
struct tconn {
	int fd;                 /* -1 once failed */
	struct tcp_req *ring;
	uint64_t cap;
	uint64_t head, unsent, tail;
	size_t wrote;
	uint8_t rhdr[TOOL_FRAME_HDR];
	size_t rhave;           /* header bytes of the current response */
	size_t rleft;           /* payload bytes still to come */
	uint32_t rlen;
	int in_payload;
};

/* tconn_outstanding - requests of c not yet answered. */
static uint64_t tconn_outstanding(const struct tconn *c)
{
	return c->tail - c->head;
}

/* tconn_fail - the connection broke: every RPC on it fails with err. */
static void tconn_fail(struct worker *w, struct tconn *c, int err,
		       const char *what)
{
	const struct phase *ph = w->ph;
	struct tcp_req *r;

	for (; c->head < c->tail; c->head++) {
		r = &c->ring[c->head % c->cap];
		stats_note_error(w->st, r->t0 >= ph->measure_from, err,
				 "TCP %s: %s", what,
				 err ? strerror(err) : "connection closed");
	}
	c->unsent = c->tail;
	close(c->fd);
	c->fd = -1;
}

/* tconn_flush - write queued frames until done or the socket is full.
 * Returns 0, or -1 with errno (connection broken). */
static int tconn_flush(struct tconn *c, const uint8_t *req)
{
	struct iovec iov[2 * TCP_BATCH];
	struct msghdr m;
	struct tcp_req *r;
	uint64_t i;
	size_t skip, left;
	ssize_t sent;
	int k;

	while (c->unsent < c->tail) {
		k = 0;
		skip = c->wrote;
		for (i = c->unsent; i < c->tail && k + 2 <= 2 * TCP_BATCH;
		     i++) {
			r = &c->ring[i % c->cap];
			k += tool_frame_iov(iov + k, r->hdr, req, r->size,
					    skip);
			skip = 0;
		}
		memset(&m, 0, sizeof(m));
		m.msg_iov = iov;
		m.msg_iovlen = (size_t)k;
		sent = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (sent < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		left = (size_t)sent;
		while (left > 0) {
			r = &c->ring[c->unsent % c->cap];
			size_t rest = TOOL_FRAME_HDR + r->size - c->wrote;

			if (left < rest) {
				c->wrote += left;
				break;
			}
			left -= rest;
			c->wrote = 0;
			c->unsent++;
		}
	}
	return 0;
}

/* tconn_frame_done - the response to the oldest request is complete. */
static void tconn_frame_done(struct worker *w, struct tconn *c)
{
	const struct phase *ph = w->ph;
	struct tcp_req *r = &c->ring[c->head % c->cap];

	worker_record(w, r->t0, rel_now(ph), r->size, r->bucket, c->rlen,
		      expected_response(ph->o, r->size));
	c->head++;
	c->in_payload = 0;
	c->rhave = 0;
}

/*
 * tconn_read - read what has arrived and complete the responses it ends.
 * Returns 0, or -1 with errno (0: closed by the peer; EPROTO: a response
 * nobody asked for or over the largest message).
 */
static int tconn_read(struct worker *w, struct tconn *c, uint8_t *scratch)
{
	ssize_t got;
	size_t off, take;

	for (;;) {
		got = recv(c->fd, scratch, TCP_RX_CHUNK, MSG_DONTWAIT);
		if (got == 0) {
			errno = 0;
			return -1;
		}
		if (got < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		for (off = 0; off < (size_t)got; off += take) {
			if (!c->in_payload) {
				take = TOOL_FRAME_HDR - c->rhave;
				if (take > (size_t)got - off)
					take = (size_t)got - off;
				memcpy(c->rhdr + c->rhave, scratch + off, take);
				c->rhave += take;
				if (c->rhave < TOOL_FRAME_HDR)
					continue;
				c->rlen = tool_get_be32(c->rhdr);
				if (c->rlen > MAX_MSG || c->head >= c->unsent) {
					errno = EPROTO;
					return -1;
				}
				c->rleft = c->rlen;
				c->in_payload = 1;
			} else {
				take = (size_t)got - off < c->rleft
				       ? (size_t)got - off : c->rleft;
				c->rleft -= take;
			}
			if (c->in_payload && c->rleft == 0)
				tconn_frame_done(w, c);
		}
		if ((size_t)got < TCP_RX_CHUNK)
			return 0;
	}
}

/* tcp_pick - the live connection with the fewest outstanding requests,
 * or NULL when none is left. */
static struct tconn *tcp_pick(struct tconn *c, int n)
{
	struct tconn *best = NULL;
	int i;

	for (i = 0; i < n; i++)
		if (c[i].fd >= 0 && (!best || tconn_outstanding(&c[i]) <
					      tconn_outstanding(best)))
			best = &c[i];
	return best;
}

/* tcp_enqueue - queue a new request drawn from the workload at t0 on the
 * best connection and try to write it.  Returns 0, or -1 when no
 * connection is left. */
static int tcp_enqueue(struct worker *w, struct tconn *conns, int n,
		       uint64_t t0)
{
	struct tconn *c = tcp_pick(conns, n);
	struct tcp_req *r;

	if (!c)
		return -1;
	r = &c->ring[c->tail % c->cap];
	workload_draw(w->ph->wl, &w->rng, &r->size, &r->bucket);
	r->t0 = t0;
	tool_put_be32(r->hdr, r->size);
	worker_count_sent(w, t0, r->size);
	c->tail++;
	if (c->tail - c->unsent == 1 && tconn_flush(c, w->req) < 0)
		tconn_fail(w, c, errno, "send");
	return 0;
}

/* tcp_open_conns - n connections to ph->tcp_dest with rings of cap
 * entries.  Returns 0, or -1 with w->setup_error (nothing left open). */
static int tcp_open_conns(struct worker *w, struct tconn *c, int n,
			  uint64_t cap)
{
	int i, j;

	for (i = 0; i < n; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].cap = cap;
		c[i].ring = calloc(cap, sizeof(*c[i].ring));
		c[i].fd = c[i].ring ? tool_tcp_connect(&w->ph->tcp_dest) : -1;
		if (c[i].fd < 0 || tool_fd_nonblocking(c[i].fd) < 0) {
			snprintf(w->setup_error, sizeof(w->setup_error),
				 "TCP connection: %s", c[i].ring ?
				 strerror(errno) : "out of memory");
			if (c[i].fd >= 0)
				close(c[i].fd);
			free(c[i].ring);
			for (j = 0; j < i; j++) {
				close(c[j].fd);
				free(c[j].ring);
			}
			return -1;
		}
	}
	return 0;
}

/* tcp_issue_due - issue what is due at now: fill up to w->outstanding.
 * Returns 0, or -1 when no connection is left. */
static int tcp_issue_due(struct worker *w, struct tconn *c, int n,
			 uint64_t now)
{
	uint64_t inflight = 0;
	int i;

	for (i = 0; i < n; i++)
		inflight += tconn_outstanding(&c[i]);
	for (; inflight < (uint64_t)w->outstanding && now < w->ph->end;
	     inflight++)
		if (tcp_enqueue(w, c, n, now) < 0)
			return -1;
	return 0;
}

/* tcp_done - whether the worker is through at now: no connection is left,
 * the phase is over with nothing in flight, or the drain time has passed. */
static int tcp_done(const struct phase *ph, const struct tconn *c, int n,
		    uint64_t now)
{
	uint64_t inflight = 0;
	int i, live = 0;

	for (i = 0; i < n; i++) {
		inflight += tconn_outstanding(&c[i]);
		live += c[i].fd >= 0;
	}
	return live == 0 || (inflight == 0 && now >= ph->end) ||
	       now >= ph->drain_end;
}

/* tcp_poll - wait up to wait ns until a connection of c[n] is readable,
 * or writable while it has frames to write (pf[n]: the poll set).
 * Returns 0, or -1 with errno when ppoll fails (EINTR is no failure). */
static int tcp_poll(const struct tconn *c, struct pollfd *pf, int n,
		    uint64_t wait)
{
	struct timespec ts;
	int i;

	for (i = 0; i < n; i++) {
		pf[i].fd = c[i].fd;
		pf[i].events = POLLIN;
		if (c[i].fd >= 0 && c[i].unsent < c[i].tail)
			pf[i].events |= POLLOUT;
		pf[i].revents = 0;
	}
	ts.tv_sec = (time_t)(wait / TOOL_NS_PER_S);
	ts.tv_nsec = (long)(wait % TOOL_NS_PER_S);
	if (ppoll(pf, (nfds_t)n, &ts, NULL) < 0 && errno != EINTR)
		return -1;
	return 0;
}

/* tcp_serve_ready - write and read on the connections of c[n] that pf[n]
 * found ready; a connection that breaks fails its RPCs. */
static void tcp_serve_ready(struct worker *w, struct tconn *c,
			    const struct pollfd *pf, int n, uint8_t *scratch)
{
	int i;

	for (i = 0; i < n; i++) {
		if (c[i].fd < 0 || pf[i].revents == 0)
			continue;
		if ((pf[i].revents & POLLOUT) &&
		    tconn_flush(&c[i], w->req) < 0) {
			tconn_fail(w, &c[i], errno, "send");
			continue;
		}
		if ((pf[i].revents & (POLLIN | POLLERR | POLLHUP)) &&
		    tconn_read(w, &c[i], scratch) < 0)
			tconn_fail(w, &c[i], errno, "receive");
	}
}

/* tcp_close_conns - close the connections c[n], counting the RPCs still
 * open on them as unfinished. */
static void tcp_close_conns(struct worker *w, struct tconn *c, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		w->st->unfinished += tconn_outstanding(&c[i]);
		if (c[i].fd >= 0)
			close(c[i].fd);
		free(c[i].ring);
	}
}

void *tcp_closed_main(void *arg)
{
	struct worker *w = arg;
	const struct phase *ph = w->ph;
	int n = ph->o->tcp_conns;
	struct tconn *c = calloc((size_t)n, sizeof(*c));
	struct pollfd *pf = calloc((size_t)n, sizeof(*pf));
	uint8_t *scratch = malloc(TCP_RX_CHUNK);
	uint64_t now;

	if (!c || !pf || !scratch) {
		snprintf(w->setup_error, sizeof(w->setup_error),
			 "out of memory");
		goto out_free;
	}
	if (tcp_open_conns(w, c, n, (uint64_t)w->outstanding + 1) < 0)
		goto out_free;
	prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	tool_sleep_until(ph->epoch);
	for (;;) {
		now = rel_now(ph);
		if (now < ph->end && tcp_issue_due(w, c, n, now) < 0)
			break;
		if (tcp_done(ph, c, n, now))
			break;
		if (tcp_poll(c, pf, n, phase_wait_ns(ph, now, 0)) < 0) {
			stats_note_error(w->st, 0, errno, "ppoll: %s",
					 strerror(errno));
			break;
		}
		tcp_serve_ready(w, c, pf, n, scratch);
	}
	tcp_close_conns(w, c, n);
out_free:
	free(c);
	free(pf);
	free(scratch);
	return NULL;
}
