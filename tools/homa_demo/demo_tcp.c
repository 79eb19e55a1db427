// SPDX-License-Identifier: BSD-2-Clause
/* homa-demo: TCP: connections with their server threads, the client's
 * phases (see demo.h). */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "demo.h"
#include "tool_addr.h"
#include "tool_clock.h"
#include "tool_tcp.h"

/* One server end of a TCP connection, with its thread. */
struct tcp_server {
	int fd;
	long resp_len;          /* or ECHO */
	const uint8_t *pattern;
	uint8_t *buf;           /* TCP_CAP bytes */
	pthread_t thread;
};

/* tcp_server_main - thread: answer frames until the client closes. */
static void *tcp_server_main(void *arg)
{
	struct tcp_server *t = arg;
	long len;
	int rc;

	for (;;) {
		len = tool_frame_read_whole(t->fd, t->buf, TCP_CAP);
		if (len < 0)
			break;
		if (t->resp_len == ECHO)
			rc = tool_frame_write(t->fd, t->buf + TOOL_FRAME_HDR,
					      (size_t)len);
		else
			rc = tool_frame_write(t->fd, t->pattern,
					      (size_t)t->resp_len);
		if (rc < 0)
			break;
	}
	if (errno != 0 && errno != ECONNRESET && errno != EPIPE)
		perror("homa-demo: TCP server");
	return NULL;
}

int tcp_listener(int port)
{
	union sockaddr_in_union a = tool_addr_loopback(AF_INET, port);
	int fd = tool_tcp_listen(&a, 16);

	if (fd < 0)
		fprintf(stderr, PROG ": TCP port %d: %s\n", port,
			strerror(errno));
	return fd;
}

/* tcp_close_conns - close the k client ends, then join the server
 * threads (which see end of stream) and free their buffers. */
static void tcp_close_conns(int k, int *cfd, struct tcp_server *srv)
{
	int i;

	for (i = 0; i < k; i++)
		close(cfd[i]);
	for (i = 0; i < k; i++) {
		pthread_join(srv[i].thread, NULL);
		close(srv[i].fd);
		free(srv[i].buf);
	}
}

/*
 * tcp_open_conns - k connections to the listener lfd at port, each with
 * a server thread answering resp_len (or ECHO) bytes.  Fills cfd[k] (the
 * client ends) and srv[k].  Returns 0 or -1 with res->why (nothing left
 * open).
 */
static int tcp_open_conns(int lfd, int port, int k, long resp_len,
			  const uint8_t *pattern, int *cfd,
			  struct tcp_server *srv, struct run_result *res)
{
	union sockaddr_in_union a = tool_addr_loopback(AF_INET, port);
	int i, err;

	for (i = 0; i < k; i++) {
		srv[i].resp_len = resp_len;
		srv[i].pattern = pattern;
		srv[i].buf = malloc(TCP_CAP);
		srv[i].fd = -1;
		cfd[i] = srv[i].buf ? tool_tcp_connect(&a) : -1;
		if (cfd[i] < 0 || (srv[i].fd = accept(lfd, NULL, NULL)) < 0 ||
		    tool_tcp_nodelay(srv[i].fd) < 0) {
			fail(res, "TCP connection: %s", strerror(errno));
			goto undo;
		}
		err = pthread_create(&srv[i].thread, NULL, tcp_server_main,
				     &srv[i]);
		if (err != 0) {
			fail(res, "pthread_create: %s", strerror(err));
			goto undo;
		}
	}
	return 0;

undo:
	if (cfd[i] >= 0)
		close(cfd[i]);
	if (srv[i].fd >= 0)
		close(srv[i].fd);
	free(srv[i].buf);
	tcp_close_conns(i, cfd, srv);
	return -1;
}

/* tcp_check - check a response of len bytes at payload. Returns 0, or -1
 * with res->why. */
static int tcp_check(long len, const uint8_t *payload,
		     const struct run_spec *s, const uint8_t *want,
		     struct run_result *res)
{
	if (len < 0)
		return fail(res, "TCP receive: %s",
			    errno ? strerror(errno) : "connection closed");
	if (len != resp_bytes(s))
		return fail(res, "TCP response of %ld bytes, expected %ld",
			    len, resp_bytes(s));
	if (s->verify && memcmp(payload, want, (size_t)len) != 0)
		return fail(res, "TCP response bytes differ");
	return 0;
}

/*
 * tcp_phase_blocking - s->rpcs RPCs on one blocking connection, one at a
 * time.  RTTs into s->hist.  Returns 0 or -1 with res->why.
 */
static int tcp_phase_blocking(int fd, uint8_t *rbuf, const struct run_spec *s,
			      const uint8_t *pattern, const uint8_t *want,
			      struct run_result *res)
{
	uint64_t start = tool_now_ns(), t0, t1;
	long len;

	while (res->done < s->rpcs) {
		t0 = tool_now_ns();
		if (tool_frame_write(fd, pattern, (size_t)s->req_len) < 0)
			return fail(res, "TCP send: %s", strerror(errno));
		len = tool_frame_read_whole(fd, rbuf, TCP_CAP);
		t1 = tool_now_ns();
		if (tcp_check(len, rbuf + TOOL_FRAME_HDR, s, want, res) < 0)
			return -1;
		if (s->hist)
			homa_histogram_record(s->hist, t1 - t0);
		res->done++;
		if (t1 - start > PHASE_BUDGET_NS && res->done < s->rpcs) {
			res->truncated = 1;
			break;
		}
	}
	res->elapsed_ns = tool_now_ns() - start;
	return 0;
}

/* The client end of one connection in the poll-driven phase. */
struct tcp_flow {
	size_t sent;            /* frame bytes sent */
	size_t have;            /* response bytes received */
	int receiving;          /* request sent, awaiting the response */
	int busy;               /* an RPC is in progress */
	uint64_t t0;
	uint8_t *rbuf;          /* TCP_CAP bytes */
};

/*
 * tcp_flow_step - advance flow f on fd after poll said it is ready.
 * Returns 1 when its response is complete (checked), 0 when not yet, -1 on
 * failure (res->why).
 */
static int tcp_flow_step(int fd, struct tcp_flow *f, const uint8_t *hdr,
			 const struct run_spec *s, const uint8_t *pattern,
			 const uint8_t *want, struct run_result *res)
{
	long len;

	if (!f->receiving) {
		if (tool_frame_send_part(fd, hdr, pattern, (size_t)s->req_len,
					 &f->sent) < 0)
			return fail(res, "TCP send: %s", strerror(errno));
		f->receiving = f->sent == TOOL_FRAME_HDR + (size_t)s->req_len;
		return 0;
	}
	len = tool_frame_recv_part(fd, f->rbuf, TCP_CAP, &f->have);
	if (len == -1)
		return 0;
	if (tcp_check(len, f->rbuf + TOOL_FRAME_HDR, s, want, res) < 0)
		return -1;
	return 1;
}

/* tcp_flow_start - begin a new RPC on flow f. */
static void tcp_flow_start(struct tcp_flow *f)
{
	f->sent = 0;
	f->have = 0;
	f->receiving = 0;
	f->busy = 1;
	f->t0 = tool_now_ns();
}

/*
 * tcp_phase_poll - s->rpcs RPCs over k non-blocking connections cfd[k]
 * (one RPC per connection at a time), one thread, poll.  rbuf[k] are
 * receive buffers.  Returns 0 or -1 with res->why.
 */
static int tcp_phase_poll(const int *cfd, uint8_t **rbuf, int k,
			  const struct run_spec *s, const uint8_t *pattern,
			  const uint8_t *want, struct run_result *res)
{
	struct tcp_flow f[MAX_OUT];
	struct pollfd p[MAX_OUT];
	uint8_t hdr[TOOL_FRAME_HDR];
	long started = 0;
	uint64_t start = tool_now_ns(), t1;
	int i, r;

	tool_put_be32(hdr, (uint32_t)s->req_len);
	for (i = 0; i < k; i++) {
		memset(&f[i], 0, sizeof(f[i]));
		f[i].rbuf = rbuf[i];
		if (started < s->rpcs) {
			tcp_flow_start(&f[i]);
			started++;
		}
	}
	while (res->done < s->rpcs) {
		for (i = 0; i < k; i++) {
			p[i].fd = f[i].busy ? cfd[i] : -1;
			p[i].events = f[i].receiving ? POLLIN : POLLOUT;
			p[i].revents = 0;
		}
		if (poll(p, (nfds_t)k, 1000) < 0 && errno != EINTR)
			return fail(res, "poll: %s", strerror(errno));
		for (i = 0; i < k; i++) {
			if (p[i].revents == 0)
				continue;
			r = tcp_flow_step(cfd[i], &f[i], hdr, s, pattern,
					  want, res);
			if (r < 0)
				return -1;
			if (r == 0)
				continue;
			t1 = tool_now_ns();
			if (s->hist)
				homa_histogram_record(s->hist, t1 - f[i].t0);
			res->done++;
			f[i].busy = 0;
			if (started < s->rpcs) {
				tcp_flow_start(&f[i]);
				started++;
			}
		}
		if (tool_now_ns() - start > PHASE_BUDGET_NS &&
		    res->done < s->rpcs) {
			res->truncated = 1;
			break;
		}
	}
	res->elapsed_ns = tool_now_ns() - start;
	return 0;
}

/* tcp_phase - one phase on the connections cfd[s->outstanding]: blocking
 * on one connection when s->blocking, else poll-driven. 0 or -1. */
static int tcp_phase(struct demo *d, const int *cfd,
		     const struct run_spec *s, struct run_result *res)
{
	if (s->blocking)
		return tcp_phase_blocking(cfd[0], d->tcp_rbuf[0], s,
					  d->pattern, d->pattern, res);
	return tcp_phase_poll(cfd, d->tcp_rbuf, s->outstanding, s,
			      d->pattern, d->pattern, res);
}

int run_tcp(struct demo *d, const struct run_spec *s,
	    struct run_result *res)
{
	struct tcp_server srv[MAX_OUT];
	struct run_spec w = warm_spec(s);
	int cfd[MAX_OUT], k = s->outstanding, rc = 0, i;

	for (i = 0; i < MAX_OUT; i++)
		cfd[i] = -1; /* gcc -O3 cannot see tcp_open_conns fill them */
	if (tcp_open_conns(d->tcp_lfd, tcp_port(d), k, s->resp_len,
			   d->pattern, cfd, srv, res) < 0)
		return -1;
	for (i = 0; i < k && !s->blocking; i++)
		if (tool_fd_nonblocking(cfd[i]) < 0)
			rc = fail(res, "fcntl O_NONBLOCK: %s",
				  strerror(errno));
	if (rc == 0)
		rc = tcp_phase(d, cfd, &w, res);
	if (rc == 0) {
		memset(res, 0, sizeof(*res));
		rc = tcp_phase(d, cfd, s, res);
	}
	tcp_close_conns(k, cfd, srv);
	return rc;
}
