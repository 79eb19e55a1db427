// SPDX-License-Identifier: BSD-2-Clause
/* homa-perf: the TCP load worker of an open loop: a pool of connections,
 * each with a writing and a reading thread, fed by the generator (see
 * perf.h). */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "perf.h"
#include "tool_clock.h"
#include "tool_frame.h"
#include "tool_tcp.h"

struct tcp_pool;

/*
 * One connection.  Its queue holds the requests the generator gave it:
 * the writer sends them in order ([0, written) are on the wire), the
 * reader matches the responses to them in order ([0, answered) are
 * answered).  An entry is reused once both are past it.
 */
struct pconn {
	struct tcp_pool *pool;
	int index;
	int fd;
	struct handoff q;
	_Atomic uint64_t written;       /* writer: requests fully sent */
	_Atomic uint64_t answered;      /* reader: responses taken */
	atomic_int dead;                /* broke (not at the pool's close) */
	int err;                        /* why: errno (0: closed by the peer) */
	const char *what;               /* "send" or "receive" */
	pthread_t writer, reader;
	struct worker rx;               /* the reader's view: own stats */
	/* the reader's frame in progress */
	uint8_t rhdr[TOOL_FRAME_HDR];
	size_t rhave;                   /* header bytes of it */
	uint32_t rlen;                  /* its payload length */
	size_t rleft;                   /* payload bytes still to come */
	int in_payload;
	long mismatch;                  /* first differing byte, or -1 */
};

struct tcp_pool {
	struct worker *w;               /* the generator */
	struct pconn *c;
	int n;
	int turn;                       /* where the next pick starts */
	atomic_int closing;             /* the generator is closing all */
};

/* conn_outstanding - requests given to c and not answered. */
static uint64_t conn_outstanding(struct pconn *c)
{
	return atomic_load(&c->q.tail) - atomic_load(&c->answered);
}

/* conn_release - free the entries of c both threads are done with. */
static void conn_release(struct pconn *c)
{
	uint64_t a = atomic_load(&c->answered);
	uint64_t wr = atomic_load(&c->written);

	handoff_release(&c->q, a < wr ? a : wr);
}

/* conn_break - c failed in its what ("send" or "receive") with err:
 * unless the pool is closing, mark it dead (the first reason is kept) and
 * shut the socket down so that its other thread stops too. */
static void conn_break(struct pconn *c, int err, const char *what)
{
	int expected = 0;

	if (atomic_load(&c->pool->closing))
		return;
	if (atomic_compare_exchange_strong(&c->dead, &expected, 1)) {
		c->err = err;
		c->what = what;
	}
	shutdown(c->fd, SHUT_RDWR);
}

/* frames_iov - the iovec (at most 2 * TCP_BATCH entries) of requests
 * [from, to) of c, the first with skip bytes already sent; their frame
 * lengths go to len[].  Returns the iovec entries used; *frames is set to
 * the requests they cover. */
static int frames_iov(struct pconn *c, uint64_t from, uint64_t to,
		      size_t skip, struct iovec *iov, size_t *len, int *frames)
{
	const uint8_t *req = c->pool->w->req;
	struct perf_req *r;
	int k = 0, f = 0;

	for (; from < to && k + 2 <= 2 * TCP_BATCH; from++, f++) {
		r = handoff_at(&c->q, from);
		len[f] = TOOL_FRAME_HDR + r->size;
		k += tool_frame_iov(iov + k, r->hdr, req, r->size, skip);
		skip = 0;
	}
	*frames = f;
	return k;
}

/* conn_write - send requests [from, to) of c, blocking until the socket
 * took them all.  Returns 0, or -1 with errno. */
static int conn_write(struct pconn *c, uint64_t from, uint64_t to)
{
	struct iovec iov[2 * TCP_BATCH];
	size_t len[TCP_BATCH], skip = 0, left;
	struct msghdr m;
	ssize_t sent;
	int f, frames;

	while (from < to) {
		memset(&m, 0, sizeof(m));
		m.msg_iov = iov;
		m.msg_iovlen = (size_t)frames_iov(c, from, to, skip, iov, len,
						  &frames);
		sent = sendmsg(c->fd, &m, MSG_NOSIGNAL);
		if (sent < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		left = (size_t)sent + skip;
		for (f = 0; f < frames && left >= len[f]; f++)
			left -= len[f];
		from += (uint64_t)f;
		skip = left;
		atomic_store(&c->written, from);
		conn_release(c);
	}
	return 0;
}

/* conn_writer_main - writing thread of a connection: send what the
 * generator queues, in order, until the queue is closed or the
 * connection breaks. */
static void *conn_writer_main(void *arg)
{
	struct pconn *c = arg;
	uint64_t i = 0, end;

	while ((end = handoff_wait(&c->q, i)) != i) {
		if (conn_write(c, i, end) < 0) {
			conn_break(c, errno, "send");
			break;
		}
		i = end;
	}
	return NULL;
}

/* conn_frame_done - the response to the oldest open request of c is in:
 * record it (or its failure: bytes other than asked for). */
static void conn_frame_done(struct pconn *c)
{
	const struct phase *ph = c->rx.ph;
	uint64_t i = atomic_load(&c->answered);
	struct perf_req *r = handoff_at(&c->q, i);

	if (c->mismatch >= 0)
		stats_note_error(c->rx.st, r->t0 >= ph->measure_from, EPROTO,
				 "TCP response to a %u-byte request differs "
				 "from the bytes asked for at byte %ld",
				 r->size, c->mismatch);
	else
		worker_record(&c->rx, r->t0, rel_now(ph), r->size, r->bucket,
			      c->rlen, expected_response(ph->o, r->size));
	atomic_store(&c->answered, i + 1);
	conn_release(c);
	c->in_payload = 0;
	c->rhave = 0;
}

/* conn_check_bytes - compare n payload bytes p of c's frame in progress,
 * starting at byte off of it, with what the server was asked to send:
 * the request itself (an echo) or the shared pattern. */
static void conn_check_bytes(struct pconn *c, const uint8_t *p, size_t n,
			     size_t off)
{
	const struct options *o = c->rx.ph->o;
	const struct perf_req *r = handoff_at(&c->q,
					      atomic_load(&c->answered));
	const uint8_t *want = o->resp_size == SPEC_ECHO ||
			      r->size < SPEC_BYTES ? c->pool->w->req
						   : perf_pattern;
	size_t i;

	if (c->mismatch >= 0 || memcmp(p, want + off, n) == 0)
		return;
	for (i = 0; p[i] == want[off + i]; i++)
		;
	c->mismatch = (long)(off + i);
}

/* conn_header_done - c's frame header is complete: start its payload.
 * Returns 0, or -1 (EPROTO: a response nobody asked for or over the
 * largest message). */
static int conn_header_done(struct pconn *c)
{
	c->rlen = tool_get_be32(c->rhdr);
	if (c->rlen > MAX_MSG ||
	    atomic_load(&c->answered) >= atomic_load(&c->q.tail))
		return -1;
	c->rleft = c->rlen;
	c->in_payload = 1;
	c->mismatch = -1;
	return 0;
}

/* conn_parse - the got bytes of buf that arrived on c: complete the
 * responses they end.  Returns 0, or -1 on a protocol error. */
static int conn_parse(struct pconn *c, const uint8_t *buf, size_t got)
{
	size_t off, take;

	for (off = 0; off < got; off += take) {
		if (!c->in_payload) {
			take = TOOL_FRAME_HDR - c->rhave;
			if (take > got - off)
				take = got - off;
			memcpy(c->rhdr + c->rhave, buf + off, take);
			c->rhave += take;
			if (c->rhave < TOOL_FRAME_HDR)
				continue;
			if (conn_header_done(c) < 0)
				return -1;
		} else {
			take = got - off < c->rleft ? got - off : c->rleft;
			conn_check_bytes(c, buf + off, take,
					 c->rlen - c->rleft);
			c->rleft -= take;
		}
		if (c->in_payload && c->rleft == 0)
			conn_frame_done(c);
	}
	return 0;
}

/* conn_reader_main - reading thread of a connection: take responses until
 * the socket is shut down or breaks. */
static void *conn_reader_main(void *arg)
{
	struct pconn *c = arg;
	uint8_t *buf = malloc(TCP_RX_CHUNK);
	ssize_t got;
	int err = ENOMEM;

	while (buf) {
		got = recv(c->fd, buf, TCP_RX_CHUNK, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			err = got == 0 ? 0 : errno;
			break;
		}
		if (conn_parse(c, buf, (size_t)got) < 0) {
			err = EPROTO;
			break;
		}
	}
	conn_break(c, err, "receive");
	free(buf);
	return NULL;
}

/* conn_open - connection i of pool p: its queue of cap requests, the
 * socket, its reader's stats, its two threads.  Returns 0, or -1 with
 * p->w->setup_error set (nothing left open or running). */
static int conn_open(struct tcp_pool *p, int i, uint64_t cap)
{
	struct pconn *c = &p->c[i];
	struct worker *w = p->w;
	int err;

	c->pool = p;
	c->index = i;
	c->rx.ph = w->ph;
	c->rx.st = stats_new();
	c->fd = -1;
	if (!c->rx.st || handoff_init(&c->q, cap) < 0) {
		snprintf(w->setup_error, sizeof(w->setup_error),
			 "out of memory");
		free(c->rx.st);
		return -1;
	}
	c->fd = tool_tcp_connect(&w->ph->tcp_dest);
	if (c->fd < 0) {
		snprintf(w->setup_error, sizeof(w->setup_error),
			 "TCP connection: %s", strerror(errno));
		goto out_queue;
	}
	err = pthread_create(&c->reader, NULL, conn_reader_main, c);
	if (err == 0) {
		(void)pthread_setname_np(c->reader, "tcp-client-rd");
		err = pthread_create(&c->writer, NULL, conn_writer_main, c);
		if (err == 0) {
			(void)pthread_setname_np(c->writer, "tcp-client-wr");
			return 0;
		}
		shutdown(c->fd, SHUT_RDWR);
		pthread_join(c->reader, NULL);
	}
	snprintf(w->setup_error, sizeof(w->setup_error), "pthread_create: %s",
		 strerror(err));
	close(c->fd);
out_queue:
	handoff_destroy(&c->q);
	free(c->rx.st);
	return -1;
}

/* conn_stop - the pool is closing: wake and join c's threads, merge its
 * stats into st, count its open requests as failed (c broke) or
 * unfinished, and free it. */
static void conn_stop(struct pconn *c, struct stats *st)
{
	const struct phase *ph = c->rx.ph;
	uint64_t i, tail;
	struct perf_req *r;

	handoff_close(&c->q);
	shutdown(c->fd, SHUT_RDWR);
	pthread_join(c->writer, NULL);
	pthread_join(c->reader, NULL);
	stats_merge(st, c->rx.st);
	tail = atomic_load(&c->q.tail);
	for (i = atomic_load(&c->answered); i < tail; i++) {
		r = handoff_at(&c->q, i);
		if (atomic_load(&c->dead))
			stats_note_error(st, r->t0 >= ph->measure_from, c->err,
					 "TCP %s: %s", c->what, c->err ?
					 strerror(c->err) :
					 "connection closed");
		else
			st->unfinished++;
	}
	close(c->fd);
	handoff_destroy(&c->q);
	free(c->rx.st);
}

/* pool_open - the o->tcp_conns connections of generator w into p.
 * Returns 0, or -1 with w->setup_error (nothing left open or running). */
static int pool_open(struct worker *w, struct tcp_pool *p)
{
	const struct options *o = w->ph->o;
	uint64_t cap = (uint64_t)o->max_outstanding + TCP_BATCH + 1;
	int i;

	memset(p, 0, sizeof(*p));
	p->w = w;
	atomic_init(&p->closing, 0);
	p->c = calloc((size_t)o->tcp_conns, sizeof(*p->c));
	if (!p->c) {
		snprintf(w->setup_error, sizeof(w->setup_error),
			 "out of memory");
		return -1;
	}
	for (i = 0; i < o->tcp_conns; i++)
		if (conn_open(p, i, cap) < 0)
			break;
	p->n = i;
	if (i == o->tcp_conns)
		return 0;
	atomic_store(&p->closing, 1);
	for (i = 0; i < p->n; i++)
		conn_stop(&p->c[i], w->st);
	free(p->c);
	return -1;
}

/* pool_close - stop every connection of p and free it. */
static void pool_close(struct tcp_pool *p)
{
	int i;

	atomic_store(&p->closing, 1);
	for (i = 0; i < p->n; i++)
		conn_stop(&p->c[i], p->w->st);
	free(p->c);
}

/* pool_outstanding - requests given to p's live connections and not yet
 * answered. */
static uint64_t pool_outstanding(struct tcp_pool *p)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < p->n; i++)
		if (!atomic_load(&p->c[i].dead))
			sum += conn_outstanding(&p->c[i]);
	return sum;
}

/* pool_pick - the live connection of p with the fewest outstanding
 * requests, ties taken in turn; NULL when none is left. */
static struct pconn *pool_pick(struct tcp_pool *p)
{
	struct pconn *best = NULL, *c;
	uint64_t best_n = 0, n;
	int i;

	for (i = 0; i < p->n; i++) {
		c = &p->c[(p->turn + i) % p->n];
		if (atomic_load(&c->dead))
			continue;
		n = conn_outstanding(c);
		if (!best || n < best_n) {
			best = c;
			best_n = n;
		}
	}
	if (best)
		p->turn = (best->index + 1) % p->n;
	return best;
}

/* pool_hand_over - the generator w queues a request drawn from the
 * workload at now on p's best connection.  Returns 0, or -1 when no
 * connection is left. */
static int pool_hand_over(struct worker *w, struct tcp_pool *p,
			  uint64_t now)
{
	struct pconn *c = pool_pick(p);
	struct perf_req *r;

	if (!c)
		return -1;
	r = handoff_slot(&c->q);
	if (!r) {       /* cannot happen: cap > --max-outstanding */
		if (now >= w->ph->measure_from)
			w->st->skipped++;
		return 0;
	}
	workload_draw(w->ph->wl, &w->rng, &r->size, &r->bucket);
	r->t0 = now;
	tool_put_be32(r->hdr, r->size);
	worker_count_sent(w, now, r->size);
	if (now >= w->ph->measure_from)
		w->st->conn_sent[c->index]++;
	handoff_push(&c->q);
	return 0;
}

void *tcp_pool_main(void *arg)
{
	struct worker *w = arg;
	const struct phase *ph = w->ph;
	struct tcp_pool pool;
	double next = 0;
	uint64_t now;

	if (pool_open(w, &pool) < 0)
		return NULL;
	prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	phase_generator_priority(w);    /* after its threads: not theirs */
	for (;;) {
		next += workload_rng_exponential(&w->rng, ph->gap_ns);
		if (next >= (double)ph->end)
			break;
		tool_sleep_until(ph->epoch + (uint64_t)next);
		now = phase_stall(w, rel_now(ph));
		if (now >= ph->end)
			break;          /* too far behind: the phase is over */
		if (phase_arrival_admit(w, now, next, pool_outstanding(&pool)) &&
		    pool_hand_over(w, &pool, now) < 0)
			break;          /* every connection broke */
	}
	while (pool_outstanding(&pool) > 0 && rel_now(ph) < ph->drain_end)
		tool_sleep_until(tool_now_ns() + 1000000);
	pool_close(&pool);
	return NULL;
}
