// SPDX-License-Identifier: BSD-2-Clause
/* homa-perf: the Homa side: the server and the load workers (see perf.h). */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

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

/* An RPC's completion cookie carries when it was issued (ns after the
 * phase epoch, 40 bits: 1099 s), its size (20 bits) and bucket (4 bits),
 * so the thread that receives its response needs no shared table. */
#define CK_TIME_SHIFT   24
#define CK_SIZE_SHIFT   4
#define CK_SIZE_MASK    0xfffffu
#define CK_BUCKET_MASK  0xfu

/* cookie_pack - the cookie of an RPC issued at t0 of size bytes in
 * bucket. */
static uint64_t cookie_pack(uint64_t t0, uint32_t size, int bucket)
{
	return t0 << CK_TIME_SHIFT | (uint64_t)size << CK_SIZE_SHIFT |
	       (uint64_t)bucket;
}

/* cookie_unpack - what cookie_pack packed into c. */
static void cookie_unpack(uint64_t c, uint64_t *t0, uint32_t *size,
			  int *bucket)
{
	*t0 = c >> CK_TIME_SHIFT;
	*size = (uint32_t)(c >> CK_SIZE_SHIFT) & CK_SIZE_MASK;
	*bucket = (int)(c & CK_BUCKET_MASK);
}

/*
 * homa_take_response - receive one response on h (blocking) and account
 * it to w.  Returns 1 when an RPC ended (answered or failed), 0 when the
 * socket was shut down, -1 on any other error that names no RPC.
 */
static int homa_take_response(struct worker *w, struct tool_hsock *h)
{
	const struct phase *ph = w->ph;
	uint64_t t0, t1;
	uint32_t size;
	int bucket;
	ssize_t n;

	n = tool_hsock_recv(h, HOMA_RECVMSG_RESPONSE, 0);
	t1 = rel_now(ph);
	if (n < 0 && h->args.id == 0) {
		if (errno == ESHUTDOWN || errno == EBADF)
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

/* homa_issue - send one new request drawn from the workload at t0.
 * Returns 0, or -1 (counted as a failure). */
static int homa_issue(struct worker *w, struct tool_hsock *h, uint64_t t0)
{
	const struct phase *ph = w->ph;
	uint64_t id = 0;
	uint32_t size;
	int bucket;

	workload_draw(ph->wl, &w->rng, &size, &bucket);
	worker_count_sent(w, t0, size);
	if (homa_send(h->fd, w->req, size, &ph->homa_dest, &id,
		      cookie_pack(t0, size, bucket)) < 0) {
		stats_note_error(w->st, t0 >= ph->measure_from, errno,
				 "homa_send of %u bytes: %s", size,
				 strerror(errno));
		return -1;
	}
	return 0;
}

void *homa_closed_main(void *arg)
{
	struct worker *w = arg;
	const struct phase *ph = w->ph;
	struct tool_hsock h;
	uint64_t now;
	int inflight = 0, r;

	if (tool_hsock_open(&h, ph->homa_dest.sa.sa_family, NULL, REGION_BYTES,
			    w->setup_error, sizeof(w->setup_error)) < 0)
		return NULL;
	tool_sleep_until(ph->epoch);
	for (;;) {
		now = rel_now(ph);
		while (inflight < w->outstanding && now < ph->end) {
			if (homa_issue(w, &h, now) < 0) {
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
		r = homa_take_response(w, &h);
		if (r <= 0)
			break;
		inflight--;
	}
	w->st->unfinished += (uint64_t)inflight;
	tool_counters_read(&w->ctr, h.fd);
	tool_hsock_close(&h);
	return NULL;
}

/* State an open-loop sender shares with its receiver thread. */
struct homa_open {
	struct worker rx;       /* the receiver's view: own stats */
	struct tool_hsock *h;
	atomic_int inflight;
};

/* homa_open_rx_main - receiver thread of an open-loop worker: account
 * every response until the socket is shut down. */
static void *homa_open_rx_main(void *arg)
{
	struct homa_open *ho = arg;

	while (homa_take_response(&ho->rx, ho->h) > 0)
		atomic_fetch_sub(&ho->inflight, 1);
	return NULL;
}

void *homa_open_main(void *arg)
{
	struct worker *w = arg;
	const struct phase *ph = w->ph;
	struct homa_open *ho = calloc(1, sizeof(*ho));
	struct tool_hsock h;
	double next = 0;
	uint64_t now;
	int err;

	if (!ho || !(ho->rx.st = stats_new())) {
		snprintf(w->setup_error, sizeof(w->setup_error),
			 "out of memory");
		goto out_free;
	}
	if (tool_hsock_open(&h, ph->homa_dest.sa.sa_family, NULL, REGION_BYTES,
			    w->setup_error, sizeof(w->setup_error)) < 0)
		goto out_free;
	ho->rx.ph = ph;
	ho->h = &h;
	atomic_init(&ho->inflight, 0);
	err = pthread_create(&ho->rx.thread, NULL, homa_open_rx_main, ho);
	if (err != 0) {
		snprintf(w->setup_error, sizeof(w->setup_error),
			 "pthread_create: %s", strerror(err));
		tool_hsock_close(&h);
		goto out_free;
	}
	prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	for (;;) {
		next += workload_rng_exponential(&w->rng, ph->gap_ns);
		if (next >= (double)ph->end)
			break;
		tool_sleep_until(ph->epoch + (uint64_t)next);
		now = rel_now(ph);
		if (now >= ph->end)
			break;          /* too far behind: the phase is over */
		if (now >= ph->measure_from && now - (uint64_t)next > 1000000)
			w->st->late++;
		if (atomic_load(&ho->inflight) >= ph->o->max_outstanding) {
			if (now >= ph->measure_from)
				w->st->skipped++;
			continue;
		}
		atomic_fetch_add(&ho->inflight, 1);
		if (homa_issue(w, &h, now) < 0)
			atomic_fetch_sub(&ho->inflight, 1);
	}
	while (atomic_load(&ho->inflight) > 0 &&
	       rel_now(ph) < ph->drain_end)
		tool_sleep_until(tool_now_ns() + 1000000);
	w->st->unfinished += (uint64_t)atomic_load(&ho->inflight);
	homa_shutdown(h.fd, SHUT_RDWR);
	pthread_join(ho->rx.thread, NULL);
	stats_merge(w->st, ho->rx.st);
	tool_counters_read(&w->ctr, h.fd);
	tool_hsock_close(&h);
out_free:
	if (ho)
		free(ho->rx.st);
	free(ho);
	return NULL;
}
