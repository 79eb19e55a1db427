/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_sockrecv - homa_recvmsg: take back the application's bpages, then
 * wait for a message.  Waiting first busy-polls (the calling thread reads
 * the datapath itself and runs the engine, for up to poll_usecs), then
 * sleeps on the socket's condition variable until the progress thread or
 * another application thread completes a message.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "homa_sock.h"

/* Busy-polling that has found nothing for this long yields the core at
 * every step. */
#define RECV_YIELD_AFTER_NS 10000ull

/* Longest single sleep; the waiter re-checks after it (wake-ups are
 * broadcast, this only bounds the damage of a lost one). */
#define RECV_SLEEP_NS 100000000ull

/* The state of one waiting homa_recvmsg. */
struct recv_wait {
	uint64_t id;         /* 0 or the client RPC wanted */
	int select;          /* HOMA_RECVMSG_REQUEST and/or _RESPONSE */
	bool nonblock;
	bool polling;        /* counted in s->pollers */
	bool drained;        /* a nonblocking call read the datapath once */
	bool unsynced;       /* engine ran; homa_sock_sync not yet called */
	uint64_t poll_end;   /* 0: not started */
};

/*
 * check_control - the homa_recvmsg_args of msg.  Returns it, or NULL when
 * msg, msg_control or msg_controllen is wrong (EINVAL).
 */
static struct homa_recvmsg_args *check_control(struct msghdr *msg)
{
	if (!msg || !msg->msg_control ||
	    msg->msg_controllen != sizeof(struct homa_recvmsg_args))
		return NULL;
	return msg->msg_control;
}

/*
 * check_flags - homa_recvmsg_args.flags selects requests and/or responses
 * and has no unknown bit.  Returns 0 or EINVAL.
 */
static int check_flags(int flags)
{
	if (flags & ~HOMA_RECVMSG_VALID_FLAGS)
		return EINVAL;
	if (!(flags & (HOMA_RECVMSG_REQUEST | HOMA_RECVMSG_RESPONSE)))
		return EINVAL;
	return 0;
}

/*
 * poll_once - one busy-poll step: read a batch from the datapath, run the
 * engine, flush (also what the pacer releases).  Packets extend the poll
 * budget (traffic is flowing: the waiter keeps serving its socket rather
 * than hand it to the progress thread).  The descriptor's readiness is
 * brought up to date only after the waiter has tried to take its message,
 * which spares the eventfd two system calls per message when it does.
 * Caller holds s->lock.
 */
static void poll_once(struct homa_sock *s, struct recv_wait *w)
{
	uint64_t now = homa_sock_now();

	if (homa_sock_rx_batch(s, now) > 0)
		w->poll_end = now + s->poll_ns;
	homa_sock_flush(s, now);
	w->unsynced = true;
}

/*
 * stop_polling - leave the pollers; if the progress thread left packets to
 * the pollers meanwhile (its one-shot event is then spent), drain them now.
 * A thread about to sleep re-arms the event so none is stranded; a thread
 * returning a message parks the socket instead (the progress thread
 * re-arms it if no thread calls in for HOMA_SOCK_PARK_NS).  Caller holds
 * s->lock.
 */
static void stop_polling(struct homa_sock *s, struct recv_wait *w,
			 bool to_sleep)
{
	w->polling = false;
	atomic_fetch_sub(&s->pollers, 1);
	if (atomic_exchange(&s->skipped, 0) || s->rearm_at) {
		homa_sock_drain_locked(s);
		if (to_sleep) {
			s->rearm_at = 0;
			homa_progress_rearm(s);
		} else {
			/* The application is likely to call again soon:
			 * keep its packets away from the progress thread
			 * for a while (no wake-up per message). */
			s->rearm_at = homa_sock_now() + HOMA_SOCK_PARK_NS;
		}
	}
}

/*
 * sleep_once - wait on s->cond for a broadcast (or RECV_SLEEP_NS).  Caller
 * holds s->lock, which is released while sleeping.
 */
static void sleep_once(struct homa_sock *s)
{
	uint64_t t = homa_sock_now() + RECV_SLEEP_NS;
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000u),
			       .tv_nsec = (long)(t % 1000000000u) };

	s->sleepers++;
	pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	s->sleepers--;
}

/*
 * wait_step - nothing is ready yet: do the next thing a waiter does
 * (read the datapath once if nonblocking, busy-poll while the budget lasts,
 * stop polling, or sleep).  Caller holds s->lock.  Returns 0 to try again or
 * -EAGAIN for a nonblocking call that found nothing.
 */
static int wait_step(struct homa_sock *s, struct recv_wait *w)
{
	uint64_t now;

	if (w->nonblock) {
		if (w->drained)
			return -EAGAIN;
		w->drained = true;
		homa_sock_drain_locked(s);
		return 0;
	}
	now = homa_sock_now();
	if (w->poll_end == 0 && s->poll_ns > 0) {
		w->poll_end = now + s->poll_ns;
		w->polling = true;
		atomic_fetch_add(&s->pollers, 1);
	}
	if (w->polling && now < w->poll_end) {
		poll_once(s, w);
		/* Let other threads of this socket in between steps.  Once
		 * the poll has found nothing for a while, also give the core
		 * away at every step: another thread (the peer, the kernel's
		 * packet processing) may be waiting for it on a machine with
		 * few cores.  Yielding from the first step would double the
		 * round trip of a small RPC on an idle machine. */
		pthread_mutex_unlock(&s->lock);
		if (now + s->poll_ns - w->poll_end > RECV_YIELD_AFTER_NS)
			sched_yield();
		pthread_mutex_lock(&s->lock);
		return 0;
	}
	if (w->polling) {
		stop_polling(s, w, true);
		return 0;
	}
	sleep_once(s);
	return 0;
}

/*
 * wait_message - take a message for w, waiting as needed.  Caller holds
 * s->lock.  Returns 0 with *out filled, or a negative errno: -EAGAIN,
 * -EINVAL (id names no client RPC), -ESHUTDOWN, -EBADF (closed meanwhile).
 */
static int wait_message(struct homa_sock *s, struct recv_wait *w,
			struct homa_msg_ready *out)
{
	int r;

	for (;;) {
		if (atomic_load(&s->closing)) {
			r = -EBADF;
			break;
		}
		r = homa_ep_receive(s->ep, w->id, w->select, out);
		if (r != -EAGAIN)
			break;
		if (w->unsynced) {
			w->unsynced = false;
			homa_sock_sync(s);
		}
		r = wait_step(s, w);
		if (r)
			break;
	}
	if (w->polling)
		stop_polling(s, w, false);
	homa_sock_sync(s);
	return r;
}

/*
 * take_bpages - hand the bpages of args back to the engine.  Caller holds
 * s->lock.  Returns 0 or EINVAL (too many, or one not owned: none taken).
 */
static int take_bpages(struct homa_sock *s, struct homa_recvmsg_args *args)
{
	uint32_t n = args->num_bpages;
	int err;

	args->num_bpages = 0;
	if (n == 0)
		return 0;
	if (n > HOMA_MAX_BPAGES)
		return EINVAL;
	err = homa_ep_return_bpages(s->ep, args->bpage_offsets, n,
				    homa_sock_core(), homa_sock_now());
	if (err == 0) {
		homa_sock_flush(s, homa_sock_now());
		homa_sock_sync(s);
	}
	return err ? EINVAL : 0;
}

/*
 * fill_name - copy peer into msg_name (up to msg_namelen bytes) and set
 * msg_namelen to the address's full length, as recvmsg(2) does.
 */
static void fill_name(struct msghdr *msg, const union sockaddr_in_union *peer)
{
	socklen_t len = peer->sa.sa_family == AF_INET6
			? sizeof(struct sockaddr_in6)
			: sizeof(struct sockaddr_in);

	if (!msg->msg_name)
		return;
	memcpy(msg->msg_name, peer, msg->msg_namelen < len ? msg->msg_namelen
							    : len);
	msg->msg_namelen = len;
}

/*
 * deliver - report the message m to the application through msg/args.
 * Returns its length, or -1 with errno = the RPC's error.
 */
static ssize_t deliver(struct msghdr *msg, struct homa_recvmsg_args *args,
		       const struct homa_msg_ready *m)
{
	args->id = m->id;
	args->completion_cookie = m->cookie;
	args->peer_addr = m->peer;
	msg->msg_flags = 0;
	if (m->error) {
		args->num_bpages = 0;
		errno = m->error;
		return -1;
	}
	args->num_bpages = m->num_bpages;
	memcpy(args->bpage_offsets, m->bpage_offsets,
	       m->num_bpages * sizeof(m->bpage_offsets[0]));
	fill_name(msg, &m->peer);
	return (ssize_t)m->length;
}

/*
 * recv_locked - the body of homa_recvmsg under s->lock.  Returns 0 with *m
 * filled, or a positive errno.
 */
static int recv_locked(struct homa_sock *s, struct homa_recvmsg_args *args,
		       int flags, struct homa_msg_ready *m)
{
	struct recv_wait w;
	int err;

	err = take_bpages(s, args);
	if (!err)
		err = check_flags(args->flags);
	if (!err && !homa_pool_has_region(homa_ep_pool(s->ep)))
		err = EINVAL;
	if (err)
		return err;
	memset(&w, 0, sizeof(w));
	w.id = args->id;
	w.select = args->flags & (HOMA_RECVMSG_REQUEST |
				  HOMA_RECVMSG_RESPONSE);
	w.nonblock = (flags & MSG_DONTWAIT) ||
		     (args->flags & HOMA_RECVMSG_NONBLOCKING) || s->nonblock;
	return -wait_message(s, &w, m);
}

/* See homa.h. */
ssize_t homa_recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct homa_sock *s = homa_sock_get(fd);
	struct homa_recvmsg_args *args;
	struct homa_msg_ready m;
	ssize_t ret;
	int err;

	if (!s) {
		errno = EBADF;
		return -1;
	}
	args = check_control(msg);
	if (!args) {
		homa_sock_put(s);
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&s->lock);
	err = recv_locked(s, args, flags, &m);
	pthread_mutex_unlock(&s->lock);
	homa_sock_put(s);
	if (err) {
		args->num_bpages = 0;
		errno = err;
		return -1;
	}
	ret = deliver(msg, args, &m);
	return ret;
}
