// SPDX-License-Identifier: BSD-2-Clause
/* homa-perf: the Homa side: the server and the load workers (see perf.h). */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "perf.h"
#include "tool_addr.h"
#include "tool_clock.h"
#include "tool_hsock.h"

int homa_server_start(struct tool_homa_server *s, int family, int port,
		      int nthreads, int epoll)
{
	struct tool_homa_server_config cfg = {
		.addr = tool_addr_any(family, port),
		.region_len = REGION_BYTES,
		.nthreads = nthreads,
		.epoll = epoll,
		.answer = request_answer,
		.pattern = perf_pattern,
	};
	char why[160];

	if (tool_homa_server_start(s, &cfg, why, sizeof(why)) == 0)
		return 0;
	fprintf(stderr, PROG ": Homa server: %s%s\n", why,
		errno == EADDRINUSE ? " (choose another --port)" : "");
	return -1;
}

/* An RPC's completion cookie carries when it was issued (in units of
 * CK_TIME_UNIT ns after the phase epoch, 40 bits: 4398 s, more than the
 * longest phase), its size (20 bits) and bucket (4 bits), so the thread
 * that receives its response needs no shared table. */
#define CK_TIME_SHIFT   24
#define CK_TIME_UNIT    4u
#define CK_SIZE_SHIFT   4
#define CK_SIZE_MASK    0xfffffu
#define CK_BUCKET_MASK  0xfu

/* cookie_pack - the cookie of an RPC issued at t0 of size bytes in
 * bucket (t0 rounded down to CK_TIME_UNIT; phase_init makes the measured
 * window start on a multiple of it, so the rounding moves no RPC in or
 * out of it). */
static uint64_t cookie_pack(uint64_t t0, uint32_t size, int bucket)
{
	return t0 / CK_TIME_UNIT << CK_TIME_SHIFT |
	       (uint64_t)size << CK_SIZE_SHIFT |
	       (uint64_t)bucket;
}

/* cookie_unpack - what cookie_pack packed into c. */
static void cookie_unpack(uint64_t c, uint64_t *t0, uint32_t *size,
			  int *bucket)
{
	*t0 = (c >> CK_TIME_SHIFT) * CK_TIME_UNIT;
	*size = (uint32_t)(c >> CK_SIZE_SHIFT) & CK_SIZE_MASK;
	*bucket = (int)(c & CK_BUCKET_MASK);
}

/*
 * homa_take_response - receive one response on h (blocking, or with
 * HOMA_RECVMSG_NONBLOCKING in flags not) and account it to w.  Returns 1
 * when an RPC ended (answered or failed), 0 when the socket was shut down
 * or (nonblocking) no response was ready, -1 on any other error that names
 * no RPC.
 */
static int homa_take_response(struct worker *w, struct tool_hsock *h,
			      int flags)
{
	const struct phase *ph = w->ph;
	uint64_t t0, t1;
	uint32_t size;
	int bucket;
	ssize_t n;

	n = tool_hsock_recv(h, HOMA_RECVMSG_RESPONSE | flags, 0);
	t1 = rel_now(ph);
	if (n < 0 && h->args.id == 0) {
		if (errno == ESHUTDOWN || errno == EBADF || errno == EAGAIN)
			return 0;
		stats_note_error(w->st, 0, errno, "homa_recvmsg: %s",
				 strerror(errno));
		return -1;
	}
	cookie_unpack(h->args.completion_cookie, &t0, &size, &bucket);
	if (bucket >= MAX_BUCKETS)
		bucket = 0;
	if (n < 0)
		stats_note_error(w->st, t0 >= ph->measure_from, errno,
				 "Homa RPC of %u bytes failed: %s", size,
				 strerror(errno));
	else
		worker_record(w, t0, t1, size, bucket, (uint64_t)n,
			      expected_response(ph->o, size));
	return 1;
}

/* homa_send_req - send request r on h for w, with flags as
 * tool_homa_sendmsg.  Returns 0; 1 when MSG_DONTWAIT found the socket's
 * send memory full (nothing sent; counted as skipped); -1 (counted as a
 * failure); or -2 when the socket was shut down (not counted: the caller
 * counts the RPC as unfinished). */
static int homa_send_req(struct worker *w, struct tool_hsock *h,
			 const struct perf_req *r, int flags)
{
	const struct phase *ph = w->ph;
	uint64_t id = 0;

	if (tool_homa_sendmsg(h->fd, &ph->homa_dest, w->req, r->size,
			      cookie_pack(r->t0, r->size, r->bucket), flags,
			      &id) == 0) {
		worker_count_sent(w, r->t0, r->size);
		return 0;
	}
	if (errno == EAGAIN && (flags & MSG_DONTWAIT)) {
		if (r->t0 >= ph->measure_from)
			w->st->skipped++;
		return 1;
	}
	if (errno == ESHUTDOWN)
		return -2;
	worker_count_sent(w, r->t0, r->size);
	stats_note_error(w->st, r->t0 >= ph->measure_from, errno,
			 "homa_send of %u bytes: %s", r->size, strerror(errno));
	return -1;
}

/* homa_issue - send one new request drawn from the workload at t0, as
 * homa_send_req (same flags and results). */
static int homa_issue(struct worker *w, struct tool_hsock *h, uint64_t t0,
		      int flags)
{
	struct perf_req r = { .t0 = t0 };

	workload_draw(w->ph->wl, &w->rng, &r.size, &r.bucket);
	return homa_send_req(w, h, &r, flags);
}

/* worker_open - open w's Homa socket into h and wait for the phase's
 * epoch.  Returns 0, or -1 with w->setup_error set. */
static int worker_open(struct worker *w, struct tool_hsock *h)
{
	const struct phase *ph = w->ph;

	if (tool_hsock_open(h, ph->homa_dest.sa.sa_family, NULL, REGION_BYTES,
			    w->setup_error, sizeof(w->setup_error)) < 0)
		return -1;
	tool_sleep_until(ph->epoch);
	return 0;
}

void *homa_closed_main(void *arg)
{
	struct worker *w = arg;
	const struct phase *ph = w->ph;
	struct tool_hsock h;
	uint64_t now;
	int inflight = 0, r;

	if (worker_open(w, &h) < 0)
		return NULL;
	for (;;) {
		now = rel_now(ph);
		while (inflight < w->outstanding && now < ph->end) {
			if (homa_issue(w, &h, now, 0) < 0) {
				tool_sleep_until(ph->epoch + now + 1000000);
				break;
			}
			inflight++;
			now = rel_now(ph);
		}
		if (inflight == 0) {
			if (now >= ph->end)
				break;
			continue;
		}
		if (now >= ph->drain_end)
			break;
		r = homa_take_response(w, &h, 0);
		if (r <= 0)
			break;
		inflight--;
	}
	w->st->unfinished += (uint64_t)inflight;
	tool_counters_read(&w->ctr, h.fd);
	tool_hsock_close(&h);
	return NULL;
}

/* What an open-loop generator shares with its sending and receiving
 * threads. */
struct homa_open {
	struct worker rx;       /* the receiver's view: own stats */
	struct worker tx;       /* the sender's view: own stats */
	struct tool_hsock *h;
	struct handoff q;       /* generator -> sender */
	atomic_int inflight;    /* handed over and not yet answered */
	atomic_int stopping;    /* the generator is closing the socket */
	pthread_t sender;
};

/* homa_open_rx_main - receiver thread of an open-loop worker: account
 * every response until the socket is shut down. */
static void *homa_open_rx_main(void *arg)
{
	struct homa_open *ho = arg;

	while (homa_take_response(&ho->rx, ho->h, 0) > 0)
		atomic_fetch_sub(&ho->inflight, 1);
	return NULL;
}

/* homa_open_tx_main - sending thread of an open-loop worker: send what
 * the generator hands over, in order, waiting in homa_send as long as it
 * takes, until the queue is closed or the generator stops. */
static void *homa_open_tx_main(void *arg)
{
	struct homa_open *ho = arg;
	struct perf_req r;
	uint64_t i = 0, end;

	while ((end = handoff_wait(&ho->q, i)) != i) {
		for (; i < end && !atomic_load(&ho->stopping); i++) {
			r = *handoff_at(&ho->q, i);
			handoff_release(&ho->q, i + 1);
			if (homa_send_req(&ho->tx, ho->h, &r, 0) == -1)
				atomic_fetch_sub(&ho->inflight, 1);
		}
		if (atomic_load(&ho->stopping))
			break;
	}
	return NULL;
}

/* homa_open_hand_over - the generator of w queues a request drawn from
 * the workload at now for the sending thread of ho. */
static void homa_open_hand_over(struct worker *w, struct homa_open *ho,
				uint64_t now)
{
	struct perf_req *r = handoff_slot(&ho->q);

	if (!r) {               /* cannot happen: cap > --max-outstanding */
		if (now >= w->ph->measure_from)
			w->st->skipped++;
		return;
	}
	workload_draw(w->ph->wl, &w->rng, &r->size, &r->bucket);
	r->t0 = now;
	atomic_fetch_add(&ho->inflight, 1);
	handoff_push(&ho->q);
}

/* open_issue_due - issue every arrival of w due by now (the next one is
 * kept in *next), counting late and skipped arrivals; *inflight counts
 * the RPCs out. */
static void open_issue_due(struct worker *w, struct tool_hsock *h,
			   uint64_t now, double *next, int *inflight)
{
	const struct phase *ph = w->ph;

	while (*next <= (double)now && *next < (double)ph->end) {
		now = phase_stall(w, now);
		if (phase_arrival_admit(w, now, *next, (uint64_t)*inflight) &&
		    homa_issue(w, h, now, MSG_DONTWAIT) == 0)
			(*inflight)++;
		*next += workload_rng_exponential(&w->rng, ph->gap_ns);
	}
}

void *homa_open_poll_main(void *arg)
{
	struct worker *w = arg;
	const struct phase *ph = w->ph;
	struct tool_hsock h;
	double next;
	int inflight = 0, r;

	prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	if (worker_open(w, &h) < 0)
		return NULL;
	next = workload_rng_exponential(&w->rng, ph->gap_ns);
	for (;;) {
		uint64_t now = rel_now(ph), wait;
		struct pollfd pf = { .fd = h.fd, .events = POLLIN };
		struct timespec ts;

		open_issue_due(w, &h, now, &next, &inflight);
		if ((inflight == 0 && (next >= (double)ph->end ||
				       now >= ph->end)) ||
		    now >= ph->drain_end)
			break;
		while ((r = homa_take_response(w, &h,
					       HOMA_RECVMSG_NONBLOCKING)) > 0)
			inflight--;
		if (r < 0)
			break;
		wait = phase_wait_ns(ph, rel_now(ph), next);
		if (wait == 0)
			continue;
		ts.tv_sec = (time_t)(wait / 1000000000u);
		ts.tv_nsec = (long)(wait % 1000000000u);
		(void)ppoll(&pf, 1, &ts, NULL);
	}
	w->st->unfinished += (uint64_t)inflight;
	tool_counters_read(&w->ctr, h.fd);
	tool_hsock_close(&h);
	return NULL;
}

/* homa_open_start - ho for the generator w: the queue, the socket h and
 * the sending and receiving threads.  Returns 0, or -1 with
 * w->setup_error set (nothing left running or open). */
static int homa_open_start(struct worker *w, struct homa_open *ho,
			   struct tool_hsock *h)
{
	const struct phase *ph = w->ph;
	int err;

	if (handoff_init(&ho->q, (uint64_t)ph->o->max_outstanding + 1) < 0) {
		snprintf(w->setup_error, sizeof(w->setup_error),
			 "out of memory");
		return -1;
	}
	if (tool_hsock_open(h, ph->homa_dest.sa.sa_family, NULL, REGION_BYTES,
			    w->setup_error, sizeof(w->setup_error)) < 0)
		goto out_queue;
	ho->rx.ph = ho->tx.ph = ph;
	ho->tx.req = w->req;
	ho->h = h;
	atomic_init(&ho->inflight, 0);
	atomic_init(&ho->stopping, 0);
	err = pthread_create(&ho->rx.thread, NULL, homa_open_rx_main, ho);
	if (err != 0)
		goto out_sock;
	(void)pthread_setname_np(ho->rx.thread, "homa-client-rx");
	err = pthread_create(&ho->sender, NULL, homa_open_tx_main, ho);
	if (err == 0) {
		(void)pthread_setname_np(ho->sender, "homa-client-tx");
		return 0;
	}
	homa_shutdown(h->fd, SHUT_RDWR);
	pthread_join(ho->rx.thread, NULL);
out_sock:
	snprintf(w->setup_error, sizeof(w->setup_error),
		 "pthread_create: %s", strerror(err));
	tool_hsock_close(h);
out_queue:
	handoff_destroy(&ho->q);
	return -1;
}

/* homa_open_stop - after the generator w's last arrival: wait for the RPCs
 * in flight until ph->drain_end (those left are unfinished), stop the
 * sender and the receiver, merge their stats into w's, read the socket's
 * counters and close it. */
static void homa_open_stop(struct worker *w, struct homa_open *ho)
{
	const struct phase *ph = w->ph;

	while (atomic_load(&ho->inflight) > 0 &&
	       rel_now(ph) < ph->drain_end)
		tool_sleep_until(tool_now_ns() + 1000000);
	w->st->unfinished += (uint64_t)atomic_load(&ho->inflight);
	atomic_store(&ho->stopping, 1);
	handoff_close(&ho->q);
	homa_shutdown(ho->h->fd, SHUT_RDWR);
	pthread_join(ho->sender, NULL);
	pthread_join(ho->rx.thread, NULL);
	stats_merge(w->st, ho->tx.st);
	stats_merge(w->st, ho->rx.st);
	tool_counters_read(&w->ctr, ho->h->fd);
	tool_hsock_close(ho->h);
	handoff_destroy(&ho->q);
}

void *homa_open_main(void *arg)
{
	struct worker *w = arg;
	const struct phase *ph = w->ph;
	struct homa_open *ho = calloc(1, sizeof(*ho));
	struct tool_hsock h;
	double next = 0;
	uint64_t now;

	if (!ho || !(ho->rx.st = stats_new()) || !(ho->tx.st = stats_new())) {
		snprintf(w->setup_error, sizeof(w->setup_error),
			 "out of memory");
		goto out_free;
	}
	if (homa_open_start(w, ho, &h) < 0)
		goto out_free;
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
		if (phase_arrival_admit(w, now, next, (uint64_t)atomic_load(
						&ho->inflight)))
			homa_open_hand_over(w, ho, now);
	}
	homa_open_stop(w, ho);
out_free:
	if (ho) {
		free(ho->rx.st);
		free(ho->tx.st);
	}
	free(ho);
	return NULL;
}
