/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_sockrecv - homa_recvmsg: take back the application's bpages, then
 * wait for a message.  One waiting thread per socket, the leader, serves
 * the datapath itself: it waits for the datapath's descriptor outside the
 * socket lock (busy-polling for up to poll_usecs, then sleeping in the
 * kernel; a wake-up that moves a scheduled transfer starts a new poll),
 * reads the packets and runs the engine, so the common path of an RPC
 * needs no hand-off to another thread.  Other waiters sleep on the socket's
 * condition variable until a message is ready or the leader leaves; the
 * leader's wait is broken by the socket's wake eventfd.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "homa_sock.h"
#include "homa_trace.h"

/* A pacer release closer than this is awaited busy-polling: a sleep in
 * the kernel takes longer (timer slack: 50 us). */
#define RECV_PACER_SPIN_NS 50000ull

/* Longest single wait; the waiter re-checks after it (wake-ups are
 * explicit, this only bounds the damage of a lost one). */
#define RECV_SLEEP_NS 100000000ull

/* Threads of the process busy-polling now, and the most allowed: one per
 * core (none on a single core, where a spinner only delays the thread it
 * waits for); other leaders sleep in the kernel at once. */
static atomic_int spinners;
static int max_spinners;
static pthread_once_t spin_init_once = PTHREAD_ONCE_INIT;

/* spin_init - max_spinners from the cores online (once). */
static void spin_init(void)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	max_spinners = cores > 1 ? (int)cores : 0;
}

/*
 * spin_take - a token to busy-poll, if fewer than max_spinners threads of
 * the process hold one.  Returns true when taken (give it back with
 * spin_give).
 */
static bool spin_take(void)
{
	int n;

	pthread_once(&spin_init_once, spin_init);
	n = atomic_load_explicit(&spinners, memory_order_relaxed);
	while (n < max_spinners)
		if (atomic_compare_exchange_weak(&spinners, &n, n + 1))
			return true;
	return false;
}

/* spin_give - return a token of spin_take. */
static void spin_give(void)
{
	atomic_fetch_sub(&spinners, 1);
}

/* The state of one waiting homa_recvmsg. */
struct recv_wait {
	uint64_t id;         /* 0 or the client RPC wanted */
	int select;          /* HOMA_RECVMSG_REQUEST and/or _RESPONSE */
	bool nonblock;
	bool leading;        /* this thread is s's leader */
	bool drained;        /* a nonblocking call read the datapath once */
	bool spinning;       /* holds a spin token */
	uint64_t spin_wall;  /* when the spin began (ns) ... */
	uint64_t spin_cpu;   /* ... and the thread's CPU time then */
	bool unsynced;       /* engine ran; homa_sock_sync not yet called */
	uint64_t spin_end;   /* the leader busy-polls until then */
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
 * spin_begin - w takes a spin token, if the host is not contended and
 * fewer than max_spinners threads spin; the spin's start is noted for
 * spin_release's account.  Returns true when w may spin.
 */
static bool spin_begin(struct recv_wait *w, uint64_t now)
{
	if (w->spinning)
		return true;
	if (!homa_cpuload_spin_ok(now) || !spin_take())
		return false;
	w->spinning = true;
	w->spin_wall = now;
	w->spin_cpu = homa_cpuload_thread_ns();
	return true;
}

/* spin_release - give back w's spin token, if it holds one, and report
 * the CPU time the spin got (homa_cpuload_spin_report). */
static void spin_release(struct recv_wait *w)
{
	uint64_t now, cpu;

	if (!w->spinning)
		return;
	w->spinning = false;
	spin_give();
	now = homa_sock_now();
	cpu = homa_cpuload_thread_ns();
	homa_cpuload_spin_report(now - w->spin_wall, cpu - w->spin_cpu);
}

/*
 * start_leading - make the calling thread s's leader: from now on it reads
 * s's datapath itself and the progress thread leaves s's packets to it.
 * Caller holds s->lock and s has no leader.
 */
static void start_leading(struct homa_sock *s, struct recv_wait *w,
			  uint64_t now)
{
	s->leader = true;
	atomic_store(&s->lead_seen, now);
	atomic_store(&s->lead_busy, true);
	w->leading = true;
	w->spin_end = now + s->poll_ns;
	atomic_fetch_add(&s->pollers, 1);
}

/*
 * stop_leading - leave leadership (and the spin token).  If the progress
 * thread left packets to the leader meanwhile (its one-shot event is then
 * spent), or the datapath may hold packets its descriptor does not show
 * (rx_more), drain them now.  The socket stays parked: the thread is likely to
 * call again soon and lead once more, so its packets do not wake the
 * progress thread (which re-arms it after HOMA_SOCK_PARK_NS without a
 * leader).  Sleeping waiters are not woken to lead: a hand-off per message
 * between two server threads cost more than it saved (a wake-up each way;
 * 1 outstanding 100 B RPC with 2 server threads, p50 70 us with the
 * hand-off, 31 without); they wake when a message is ready.  Caller holds
 * s->lock.
 */
static void stop_leading(struct homa_sock *s, struct recv_wait *w)
{
	bool skipped;

	spin_release(w);
	w->leading = false;
	s->leader = false;
	atomic_store(&s->lead_busy, false);
	atomic_fetch_sub(&s->pollers, 1);
	skipped = atomic_exchange(&s->skipped, 0);
	if (skipped || s->rx_more)
		homa_sock_drain_locked(s);
	if (skipped || s->rearm_at)
		s->rearm_at = homa_sock_now() + HOMA_SOCK_PARK_NS;
	atomic_store(&s->lead_ended, homa_sock_now());
}

/*
 * sleep_once - wait on s->cond for a wake-up (or RECV_SLEEP_NS).  Caller
 * holds s->lock, which is released while sleeping.
 */
static void sleep_once(struct homa_sock *s)
{
	uint64_t t = homa_sock_now() + RECV_SLEEP_NS;
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000u),
			       .tv_nsec = (long)(t % 1000000000u) };

	s->sleepers++;
	homa_trace(HOMA_TRACE_WAIT_SLEEP, 0);
	pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	homa_trace(HOMA_TRACE_WAIT_WAKE, 0);
	s->sleepers--;
}

/*
 * wait_fds - sleep until dp_fd or wake_fd is readable, dp_fd reports an
 * error (POLLERR: its error queue holds ICMP errors, and s->dp_err is set
 * so that the next read empties it) or deadline (absolute ns) passes.
 * Called without any lock.  Returns true when dp_fd is readable or in
 * error.
 */
static bool wait_fds(struct homa_sock *s, int dp_fd, int wake_fd,
		     uint64_t deadline)
{
	struct pollfd p[2] = { { .fd = dp_fd, .events = POLLIN },
			       { .fd = wake_fd, .events = POLLIN } };

	for (;;) {
		uint64_t now = homa_sock_now();
		uint64_t d = deadline > now ? deadline - now : 0;
		struct timespec ts = { .tv_sec = (time_t)(d / 1000000000u),
				       .tv_nsec = (long)(d % 1000000000u) };
		int n = ppoll(p, 2, &ts, NULL);

		if (n > 0 && (p[0].revents & POLLERR))
			atomic_store(&s->dp_err, true);
		if (n > 0)
			return (p[0].revents & (POLLIN | POLLERR)) != 0;
		if (n == 0 || d == 0)
			return false;
	}
}

/*
 * lead_timer - run s's timer when it is due.  While the leader is awake
 * (lead_busy) the progress thread leaves s alone rather than wait for its
 * lock, so the leader keeps s's RESENDs, timeouts and NEED_ACKs on time.
 * Called right after a read of the datapath: the timer counts silence only
 * over input that was read (a leader descheduled for a while would
 * otherwise take the packets waiting in its socket for silence and ask
 * its peers to send them again).  Caller holds s->lock.
 */
static void lead_timer(struct homa_sock *s, uint64_t now)
{
	atomic_store_explicit(&s->lead_seen, now, memory_order_relaxed);
	if (homa_sock_next_timer(s) <= now) {
		homa_ep_timer(s->ep, now);
		homa_sock_flush(s, now);
	}
}

/*
 * spin_once - one busy-poll step of the leader: read a batch, run the
 * engine and flush (also what the pacer released).  When nothing came, let
 * other threads in: the lock, and the core (the thread this one waits for,
 * the peer of a loopback RPC, is often woken on the spinner's core, and
 * the scheduler does not preempt a spinner for it: without the yield, a
 * round trip took the whole spin, 75 us instead of 20 on this project's
 * 2-core machines).  Packets extend the spin.  Caller holds s->lock.
 */
static void spin_once(struct homa_sock *s, struct recv_wait *w, uint64_t now)
{
	int n = homa_sock_rx_batch(s, now);

	lead_timer(s, now);
	if (n > 0) {
		homa_sock_flush(s, now);
		/* Traffic flows: keep on, counting from the end of the work. */
		w->spin_end = homa_sock_now() + s->poll_ns;
		w->unsynced = true;
		return;
	}
	homa_sock_flush(s, now);
	pthread_mutex_unlock(&s->lock);
	sched_yield();
	pthread_mutex_lock(&s->lock);
}

/*
 * grants_seen - the GRANTs s has sent and received so far.  When a batch
 * moves this count, a scheduled transfer (a chain of GRANT and DATA steps)
 * is under way.  Caller holds s->lock.
 */
static uint64_t grants_seen(const struct homa_sock *s)
{
	const uint64_t *st = s->stats;

	return st[HOMA_STAT_packets_sent_GRANT] +
	       st[HOMA_STAT_packets_rcvd_GRANT];
}

/*
 * block_once - one sleeping step of the leader: wait outside the lock
 * until packets come, another thread wakes it (wakefd), the pacer lets DATA
 * go or RECV_SLEEP_NS pass; then read a batch, run the engine and flush.
 * When that moved a scheduled transfer (GRANTs went or came), busy-poll
 * again rather than sleep through its every step.  Caller holds s->lock.
 */
static void block_once(struct homa_sock *s, struct recv_wait *w, uint64_t now)
{
	uint64_t deadline = now + RECV_SLEEP_NS;
	uint64_t pacer = homa_sock_pacer_wake(s);
	int dp_fd = homa_dp_fd(s->dp);
	uint64_t v, grants;
	bool ready;

	if (pacer && pacer < deadline)
		deadline = pacer;
	/* Asleep, the leader leaves the timer to the progress thread; awake
	 * again, it runs the timer after its read. */
	atomic_store(&s->lead_busy, false);
	s->leader_waiting = true;
	pthread_mutex_unlock(&s->lock);
	homa_trace(HOMA_TRACE_LEAD_SLEEP, 0);
	ready = wait_fds(s, dp_fd, s->wakefd, deadline);
	homa_trace(HOMA_TRACE_LEAD_WAKE, ready);
	pthread_mutex_lock(&s->lock);
	s->leader_waiting = false;
	atomic_store(&s->lead_seen, homa_sock_now());
	atomic_store(&s->lead_busy, true);
	if (s->wake_pending) {
		s->wake_pending = false;
		(void)!read(s->wakefd, &v, sizeof(v));
	}
	now = homa_sock_now();
	grants = grants_seen(s);
	if (ready) {
		homa_sock_rx_batch(s, now);
		lead_timer(s, now);
	}
	homa_sock_flush(s, now);
	if (grants_seen(s) != grants)
		w->spin_end = homa_sock_now() + s->poll_ns;
	w->unsynced = true;
}

/*
 * lead_once - one step of the leader: busy-poll while the spin lasts, a
 * spin token is free and the host is not contended (homa_cpuload), else
 * sleep on the descriptors.  The readiness of the
 * descriptor is brought up to date only after the waiter has tried to take
 * its message (two eventfd system calls spared per message when it does).
 * Caller holds s->lock.
 */
static void lead_once(struct homa_sock *s, struct recv_wait *w)
{
	uint64_t now = homa_sock_now();
	uint64_t pacer = homa_sock_pacer_wake(s);

	if (now < w->spin_end && spin_begin(w, now)) {
		spin_once(s, w, now);
		return;
	}
	if (s->rx_more || (pacer && pacer < now + RECV_PACER_SPIN_NS &&
			   homa_cpuload_spin_ok(now))) {
		/* A full batch came (more may wait in the datapath, where
		 * the descriptor does not show them), or the pacer lets
		 * DATA go sooner than a sleep would end. */
		spin_once(s, w, now);
		return;
	}
	spin_release(w);
	block_once(s, w, now);
}

/*
 * wait_step - nothing is ready yet: do the next thing a waiter does (read
 * the datapath once if nonblocking; else serve the datapath as the leader,
 * or sleep while another thread leads).  Caller holds s->lock.  Returns 0
 * to try again or -EAGAIN for a nonblocking call that found nothing.
 */
static int wait_step(struct homa_sock *s, struct recv_wait *w)
{
	if (s->deferred)
		homa_sock_flush(s, homa_sock_now());
	if (w->nonblock) {
		if (w->drained)
			return -EAGAIN;
		w->drained = true;
		homa_sock_drain_locked(s);
		return 0;
	}
	if (!w->leading && s->leader) {
		sleep_once(s);
		return 0;
	}
	if (!w->leading)
		start_leading(s, w, homa_sock_now());
	lead_once(s, w);
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
	bool taken;
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
	/* A message taken right after this thread's own reading became
	 * ready since the last sync (the previous try found nothing). */
	taken = r == 0 && w->unsynced;
	if (w->leading)
		stop_leading(s, w);
	homa_sock_sync_taken(s, taken);
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
		homa_sock_send_or_defer(s, homa_sock_now());
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
	if (!err && !homa_pool_has_region(s->pool))
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
	homa_trace(HOMA_TRACE_RECV_ENTER, 0);
	homa_cpuload_wake_slice(s->wake_slice_us);
	pthread_mutex_lock(&s->lock);
	err = recv_locked(s, args, flags, &m);
	pthread_mutex_unlock(&s->lock);
	homa_sock_put(s);
	if (err) {
		args->num_bpages = 0;
		homa_trace(HOMA_TRACE_RECV_LEAVE, -err);
		errno = err;
		return -1;
	}
	ret = deliver(msg, args, &m);
	homa_trace(HOMA_TRACE_RECV_LEAVE, ret);
	return ret;
}
