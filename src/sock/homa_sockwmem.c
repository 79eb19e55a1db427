/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_sockwmem - the send-memory limit of a socket (the wmem_max setting),
 * as the kernel module applies it to every sendmsg, requests and responses
 * alike: a send is admitted while the endpoint holds fewer bytes of
 * outgoing messages than wmem_max (homa_ep_info.writable; the admitted message
 * may take the total past the limit), else it waits until RPCs end and
 * free memory, or fails with EAGAIN when nonblocking.  The descriptor is
 * writable (POLLOUT) exactly while a send would be admitted.
 *
 * Waiting senders sleep on the socket's condition variable and count as
 * sleepers, so that shutdown and close wake them as they wake receivers;
 * homa_sock_sync_wmem, run with every homa_sock_sync, wakes them when
 * memory falls below the limit.  The packets that free memory (ACKs,
 * responses) are read by whoever serves the socket: a receiver leading it,
 * the progress thread, or the waiting sender itself before each sleep.
 */
#include <errno.h>
#include <time.h>

#include "homa_sock.h"

/* Longest single sleep of a waiting sender; it re-checks after it (the
 * wake-ups are explicit: this bounds the cost of a missed one). */
#define WMEM_SLEEP_NS 20000000ull

/* writable - whether s's endpoint admits a send now
 * (homa_ep_info.writable).  Caller holds s->lock. */
static bool writable(const struct homa_sock *s)
{
	struct homa_ep_info info;

	homa_ep_info(s->ep, &info);
	return info.writable;
}

/* See homa_sock.h. */
void homa_sock_sync_wmem(struct homa_sock *s, bool writable)
{
	if (writable != s->out_off)
		return;         /* POLLOUT already says writable */
	homa_sock_ready_out(s, writable);
	if (writable && s->send_waiters > 0)
		pthread_cond_broadcast(&s->cond);
}

/*
 * sleep_for_room - one wait of a blocked sender: send what was deferred,
 * read what waits in the datapath (an ACK or a response may free memory
 * at once), then, if still at the limit, sleep on s->cond until woken or
 * WMEM_SLEEP_NS pass.  Caller holds s->lock (released while sleeping).
 */
static void sleep_for_room(struct homa_sock *s)
{
	uint64_t t;
	struct timespec ts;

	if (s->deferred)
		homa_sock_flush(s, homa_sock_now());
	homa_sock_drain_locked(s);
	homa_sock_sync(s);
	if (writable(s) || atomic_load(&s->closing))
		return;
	t = homa_sock_now() + WMEM_SLEEP_NS;
	ts.tv_sec = (time_t)(t / 1000000000u);
	ts.tv_nsec = (long)(t % 1000000000u);
	s->sleepers++;
	s->send_waiters++;
	pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	s->send_waiters--;
	s->sleepers--;
}

/* See homa_sock.h. */
int homa_sock_wait_wmem(struct homa_sock *s, bool nonblock)
{
	for (;;) {
		if (atomic_load(&s->closing))
			return -EBADF;
		if (writable(s))
			return 0;
		if (nonblock)
			return -EAGAIN;
		sleep_for_room(s);
	}
}
