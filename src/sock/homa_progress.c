/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_progress - the background thread of the process.  It waits in epoll
 * on the datapath descriptor of every socket (one-shot: a socket's
 * descriptor is re-armed only once its packets have been read, so the
 * thread is not woken for every packet while an application thread polls
 * that socket itself) plus a kick
 * eventfd, with a timeout at the earliest engine timer and at most one tick
 * (1 ms) away.  It receives packets of sockets no application thread is
 * polling, runs due timers, flushes output and updates readiness, so grants,
 * acks and retransmissions go on while the application computes.  Every
 * tick it also drains every socket not being polled, as a safety net.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "homa_sock.h"
#include "homa_trace.h"

/* The safety-net pass interval and the longest sleep with sockets open. */
#define PROGRESS_TICK_NS 1000000ull

/* Deadlines closer than this are awaited without sleeping. */
#define PROGRESS_SPIN_NS 50000ull

/* Timer slack of the thread: how late the kernel may end its sleeps. */
#define PROGRESS_TIMER_SLACK_NS 1000ul

/* Events taken from one epoll_wait. */
#define PROGRESS_EVENTS 64

/* epoll key of the kick eventfd (no socket key is ever this value: socket
 * generations start at 1). */
#define PROGRESS_KICK_KEY 0ull

static struct {
	pthread_mutex_t lock;      /* guards started and the start-up */
	bool started;
	int epfd;
	int kickfd;
	pthread_t thread;
	/* When the thread means to wake: UINT64_MAX while it computes (any
	 * timer change then kicks), 0 once kicked (no second kick). */
	atomic_ullong planned_wake;
	uint64_t next_tick;          /* the next safety-net pass (thread) */
	uint64_t timers;             /* earliest timer of a socket (thread) */
	uint64_t pacer_wakes;        /* earliest pacer wake of a socket:
				      * awaited without sleeping (thread) */
	struct homa_sock **snap;     /* the sockets of a pass (thread; kept
				      * between passes: an array in flight at
				      * a fork would leak in the child) */
	int snap_cap;
	bool no_pwait2;              /* epoll_pwait2 failed with ENOSYS
				      * (thread) */
} prog = { .lock = PTHREAD_MUTEX_INITIALIZER, .epfd = -1, .kickfd = -1 };

/* True in the progress thread, which needs no kick to see its own work. */
static _Thread_local bool in_progress_thread;

/* See homa_sock.h. */
void homa_progress_timer_changed(uint64_t t)
{
	uint64_t v = 1;

	if (in_progress_thread) {
		if (t < prog.timers)
			prog.timers = t;
		return;
	}
	if (t >= atomic_load(&prog.planned_wake) || prog.kickfd < 0)
		return;
	atomic_store(&prog.planned_wake, 0);
	(void)!write(prog.kickfd, &v, sizeof(v));
}

/* See homa_sock.h. */
int homa_progress_watch(struct homa_sock *s, int old_fd)
{
	struct epoll_event ev;

	if (old_fd >= 0)
		(void)epoll_ctl(prog.epfd, EPOLL_CTL_DEL, old_fd, NULL);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = homa_sock_key(s);
	if (epoll_ctl(prog.epfd, EPOLL_CTL_ADD, homa_dp_fd(s->dp), &ev) != 0)
		return -errno;
	homa_progress_timer_changed(0);
	return 0;
}

/* See homa_sock.h. */
void homa_progress_rearm(struct homa_sock *s)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.u64 = homa_sock_key(s);
	(void)epoll_ctl(prog.epfd, EPOLL_CTL_MOD, homa_dp_fd(s->dp), &ev);
}

/* See homa_sock.h. */
void homa_progress_unwatch(struct homa_sock *s)
{
	pthread_mutex_lock(&s->lock);
	(void)epoll_ctl(prog.epfd, EPOLL_CTL_DEL, homa_dp_fd(s->dp), NULL);
	pthread_mutex_unlock(&s->lock);
}

/*
 * progress_ready - packets (or, with EPOLLERR in events, ICMP errors) wait
 * on the datapath of the socket named by key: receive them unless an
 * application thread polls that socket (it then finds the skipped mark,
 * and s->dp_err, and drains once more when it stops).
 */
static void progress_ready(uint64_t key, uint32_t events)
{
	struct homa_sock *s = homa_sock_get_key(key);

	if (!s)
		return;
	if (events & EPOLLERR)
		atomic_store(&s->dp_err, true);
	homa_sock_drain(s);
	homa_sock_put(s);
}

/*
 * progress_service - one socket's turn in a pass: drain it (safety net,
 * when drain is set and nobody polls it), end its parking when due, run its
 * timer if due, flush and sync.  A socket whose leader is awake and was
 * at work lately is passed by (the leader runs its timer; taking the lock
 * would only stall both).
 * Returns the socket's next timer, and in *pacer_next when its pacer lets
 * DATA go (UINT64_MAX: nothing waits, or a leader serves it).
 */
static uint64_t progress_service(struct homa_sock *s, uint64_t now,
				 bool drain, uint64_t *pacer_next)
{
	uint64_t next;

	*pacer_next = UINT64_MAX;
	/* The thread's slice follows the sockets' setting (the latest seen
	 * wins; one system call when it changes). */
	homa_cpuload_wake_slice(s->wake_slice_us);
	if (atomic_load(&s->lead_busy) &&
	    atomic_load(&s->lead_seen) + HOMA_SOCK_LEAD_STALE_NS > now)
		return UINT64_MAX; /* its leader runs it; looked at next tick */
	if (atomic_load(&s->senders) > 0)
		return UINT64_MAX; /* the sender runs it (homa_sock_send_end) */
	if (drain)
		homa_sock_drain(s);
	pthread_mutex_lock(&s->lock);
	if (atomic_load(&s->closing)) {
		pthread_mutex_unlock(&s->lock);
		return UINT64_MAX;
	}
	now = homa_sock_now();
	if (s->rearm_at && now >= s->rearm_at && !s->leader) {
		/* Parked and no application thread came back: watch its
		 * packets again. */
		s->rearm_at = 0;
		homa_sock_drain_locked(s);
		homa_progress_rearm(s);
	}
	if (homa_ep_next_timer(s->ep) <= now)
		homa_ep_timer(s->ep, now);
	homa_sock_flush(s, now);
	homa_sock_sync(s);
	next = homa_sock_next_timer(s);
	*pacer_next = homa_sock_pacer_wake(s);
	if (*pacer_next == 0)
		*pacer_next = UINT64_MAX;
	pthread_mutex_unlock(&s->lock);
	return next;
}

/*
 * progress_pass - service every socket; returns the earliest next timer
 * among them (UINT64_MAX when there is no socket).  *any tells whether
 * there was a socket at all.
 */
static uint64_t progress_pass(uint64_t now, bool drain, bool *any)
{
	struct homa_sock **socks;
	int n = homa_sock_snapshot(&prog.snap, &prog.snap_cap);
	uint64_t earliest = UINT64_MAX;

	socks = prog.snap;
	*any = n > 0;
	prog.pacer_wakes = UINT64_MAX;
	for (int i = 0; i < n; i++) {
		uint64_t e, t = progress_service(socks[i], now, drain, &e);

		if (t < earliest)
			earliest = t;
		if (e < prog.pacer_wakes)
			prog.pacer_wakes = e;
		homa_sock_put(socks[i]);
	}
	return earliest;
}

/*
 * progress_wait - sleep in epoll until deadline (UINT64_MAX: forever) and
 * handle the events.  The kick eventfd is drained.
 */
static void progress_wait(uint64_t deadline, bool spin)
{
	struct epoll_event evs[PROGRESS_EVENTS];
	struct timespec ts, *tsp = NULL;
	uint64_t now = homa_sock_now();
	uint64_t d = deadline > now ? deadline - now : 0;
	int n;

	if (deadline != UINT64_MAX) {
		/* A deadline closer than a wake-up from sleep takes (a pacer
		 * letting the next packets go): look for events without
		 * sleeping until it comes, like the kernel's pacer thread;
		 * on a contended host it sleeps (homa_cpuload). */
		if (spin && d < PROGRESS_SPIN_NS &&
		    homa_cpuload_spin_ok(now))
			d = 0;
		ts.tv_sec = (time_t)(d / 1000000000u);
		ts.tv_nsec = (long)(d % 1000000000u);
		tsp = &ts;
	}
	/* Before Linux 5.11 (or under a tool that does not know the call),
	 * epoll_pwait2 fails with ENOSYS: remembered, epoll_wait (ms
	 * resolution) is used from then on. */
	if (!prog.no_pwait2) {
		n = epoll_pwait2(prog.epfd, evs, PROGRESS_EVENTS, tsp, NULL);
		prog.no_pwait2 = n < 0 && errno == ENOSYS;
	}
	if (prog.no_pwait2)
		n = epoll_wait(prog.epfd, evs, PROGRESS_EVENTS,
			       tsp ? (int)((d + 999999) / 1000000)
			           : -1);
	for (int i = 0; i < n; i++) {
		uint64_t key = evs[i].data.u64;

		if (key == PROGRESS_KICK_KEY) {
			uint64_t v;

			(void)!read(prog.kickfd, &v, sizeof(v));
			/* Kicked for an earlier timer (a pacer release): the
			 * pass must run even if no tick is due. */
			prog.timers = 0;
			continue;
		}
		progress_ready(key, evs[i].events);
	}
}

/*
 * progress_main - the thread: passes over the sockets when a timer or the
 * tick is due, otherwise sleeps in epoll until then.
 */
static void *progress_main(void *arg)
{
	(void)arg;
	in_progress_thread = true;
	/* Named, so that top -H, perf and /proc tell it from the
	 * application's threads. */
	(void)prctl(PR_SET_NAME, "homa-progress", 0, 0, 0);
	/* Sleep until the deadline itself (a pacer release), not up to
	 * the default 50 us of timer slack later. */
	(void)prctl(PR_SET_TIMERSLACK, PROGRESS_TIMER_SLACK_NS, 0, 0, 0);
	prog.timers = 0;
	for (;;) {
		uint64_t now = homa_sock_now();
		uint64_t wake;
		bool any = true;

		atomic_store(&prog.planned_wake, UINT64_MAX);
		if (now >= prog.next_tick || now >= prog.timers) {
			bool tick = now >= prog.next_tick;

			prog.timers = UINT64_MAX;
			homa_trace(HOMA_TRACE_PASS, tick);
			prog.timers = progress_pass(now, tick, &any);
			homa_trace(HOMA_TRACE_PASS_END, tick);
			if (tick) {
				prog.next_tick = now + PROGRESS_TICK_NS;
				homa_cpuload_sample(now);
			}
		}
		wake = any ? prog.next_tick : UINT64_MAX;
		if (prog.timers < wake)
			wake = prog.timers;
		atomic_store(&prog.planned_wake, wake);
		progress_wait(wake, wake == prog.pacer_wakes);
	}
	return NULL;
}

/*
 * progress_open - the epoll instance and the kick eventfd.  Caller holds
 * prog.lock.  Returns 0 or a negative errno (nothing left open).
 */
static int progress_open(void)
{
	struct epoll_event ev;

	prog.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (prog.epfd < 0)
		return -errno;
	prog.kickfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (prog.kickfd < 0)
		goto fail;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = PROGRESS_KICK_KEY;
	if (epoll_ctl(prog.epfd, EPOLL_CTL_ADD, prog.kickfd, &ev) == 0)
		return 0;
fail:;
	int err = -errno;

	if (prog.kickfd >= 0)
		close(prog.kickfd);
	close(prog.epfd);
	prog.kickfd = prog.epfd = -1;
	return err;
}

/*
 * progress_spawn - start progress_main with every signal blocked (signals
 * belong to the application's threads) but the faults SIGSEGV and SIGBUS:
 * those are its own, and homa_sock_copy catches them when the
 * application took its buffer region away (blocked, they would kill the
 * process).  Returns 0 or a negative errno.
 */
static int progress_spawn(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	int err;

	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&prog.thread, &attr, progress_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

/* See homa_sock.h. */
int homa_progress_start(void)
{
	int err = 0;

	pthread_mutex_lock(&prog.lock);
	if (!prog.started) {
		atomic_store(&prog.planned_wake, 0);
		err = progress_open();
		if (!err)
			err = progress_spawn();
		if (!err) {
			prog.started = true;
		} else if (prog.epfd >= 0) {
			close(prog.kickfd);
			close(prog.epfd);
			prog.kickfd = prog.epfd = -1;
		}
	}
	pthread_mutex_unlock(&prog.lock);
	return err;
}
