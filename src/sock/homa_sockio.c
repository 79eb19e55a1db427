/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_sockio - one socket's life and the moves between its endpoint and
 * its datapath: create/destroy, rebind, receive a batch, flush output, and
 * keep the application's descriptor and the waiters in step with the
 * endpoint.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "homa_sock.h"
#include "homa_wire.h"
#include "homa_trace.h"

static atomic_uint sock_gen = 1;

/* See homa_sock.h. */
uint64_t homa_sock_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* See homa_sock.h. */
int homa_sock_core(void)
{
	int cpu = sched_getcpu();

	return cpu < 0 ? 0 : cpu;
}

/*
 * first_client_id - a random even id to number this socket's requests
 * from, far from wrapping, so that a restarted client on a reused port is
 * unlikely to repeat ids a server still remembers.
 */
static uint64_t first_client_id(void)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = homa_sock_now() ^ ((uint64_t)getpid() << 32);
	r &= (1ull << 48) - 1;
	return (r & ~1ull) + 2;
}

/* num_cores - processors configured (at least 1). */
static int num_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n < 1 ? 1 : (int)n;
}

/*
 * sock_init_sync - initialise s's mutex and its condition variable on the
 * monotonic clock.  Returns 0 or -ENOMEM.
 */
static int sock_init_sync(struct homa_sock *s)
{
	pthread_condattr_t ca;
	int err;

	if (pthread_mutex_init(&s->lock, NULL) != 0)
		return -ENOMEM;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	err = pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (err) {
		pthread_mutex_destroy(&s->lock);
		return -ENOMEM;
	}
	return 0;
}

/*
 * sock_alloc_space - the receive and send scratch slots of s: a receive
 * slot holds any datagram (HOMA_SOCK_RX_SLOT); a send slot the largest
 * packet the endpoint writes whole, or, when the datapath takes runs (DATA
 * then stays in the message's copy), a control packet or the headers of a
 * run.  Returns 0 or -ENOMEM.
 */
static int sock_alloc_space(struct homa_sock *s)
{
	struct homa_ep_info info;
	size_t max;

	homa_ep_info(s->ep, &info);
	max = s->dp->gather ? HOMA_SOCK_TX_SEGS * HOMA_DATA_HDR_LEN
			    : info.max_output;

	_Static_assert(HOMA_SOCK_TX_SEGS * HOMA_DATA_HDR_LEN >=
		       HOMA_MAX_CTRL_LEN, "a send slot holds a control packet");
	s->tx_size = (max + 63) & ~(size_t)63;
	s->rx_size = HOMA_SOCK_RX_SLOT;
	s->rx_space = malloc(s->rx_size * HOMA_DP_BATCH);
	s->tx_space = malloc(s->tx_size * HOMA_DP_BATCH);
	if (!s->rx_space || !s->tx_space)
		return -ENOMEM;
	return 0;
}

/*
 * sock_open_engine - the datapath (client port) and endpoint of s.
 * Returns 0 or a negative errno; what was opened is freed by destroy.
 */
static int sock_open_engine(struct homa_sock *s, const struct homa_config *cfg)
{
	struct homa_ep_params p;
	struct homa_ep_info info;
	int err;

	err = homa_dp_open((enum homa_dp_kind)cfg->transport, s->family, 0,
			   &s->bands, &s->dp);
	if (err)
		return err;
	memset(&p, 0, sizeof(p));
	p.cfg = cfg;
	p.family = s->family;
	p.port = homa_dp_port(s->dp);
	p.is_server = false;
	p.first_client_id = first_client_id();
	p.num_cores = num_cores();
	p.encap_bytes = homa_dp_encap_bytes((enum homa_dp_kind)cfg->transport);
	p.copier = homa_sock_copy;
	s->ep = homa_ep_create(&p);
	if (!s->ep)
		return -ENOMEM;
	homa_ep_info(s->ep, &info);
	s->pool = info.pool;
	s->stats = info.stats;
	return 0;
}

/* See homa_sock.h. */
int homa_sock_create(const struct homa_config *cfg, int family,
		     bool nonblock, struct homa_sock **out)
{
	struct homa_sock *s;
	int err;

	*out = NULL;
	if (homa_config_check(cfg) != 0)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fd = -1;
	s->readyfd = -1;
	s->wakefd = -1;
	s->family = family;
	s->nonblock = nonblock;
	s->transport = (int)cfg->transport;
	s->bands.n = (int)cfg->rx_bands;
	s->bands.high_prio = (uint8_t)cfg->rx_band_prio;
	s->poll_ns = cfg->poll_usecs > 0 ? (uint64_t)cfg->poll_usecs * 1000 : 0;
	s->wake_slice_us = (uint32_t)cfg->wake_slice_usecs;
	do /* 0 would make key 0, the progress thread's kick key */
		s->gen = atomic_fetch_add(&sock_gen, 1);
	while (s->gen == 0);
	atomic_init(&s->refs, 1);
	err = sock_init_sync(s);
	if (err) {
		free(s);
		return err;
	}
	err = sock_open_engine(s, cfg);
	if (!err)
		err = sock_alloc_space(s);
	if (!err) {
		s->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (s->wakefd < 0)
			err = -errno;
	}
	if (!err)
		err = homa_sock_ready_open(&s->fd, &s->readyfd);
	if (err) {
		homa_sock_destroy(s);
		return err;
	}
	*out = s;
	return 0;
}

/* See homa_sock.h. */
void homa_sock_destroy(struct homa_sock *s)
{
	if (!s)
		return;
	homa_ep_destroy(s->ep);
	homa_dp_close(s->dp);
	if (s->fd >= 0)
		close(s->fd);
	if (s->readyfd >= 0)
		close(s->readyfd);
	if (s->wakefd >= 0)
		close(s->wakefd);
	free(s->rx_space);
	free(s->tx_space);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* See homa_sock.h. */
int homa_sock_rebind(struct homa_sock *s, uint16_t port)
{
	struct homa_dp *dp, *old = s->dp;
	int err;

	if (s->is_server && homa_dp_port(old) == port)
		return 0;
	err = homa_dp_open((enum homa_dp_kind)s->transport, s->family, port,
			   &s->bands, &dp);
	if (err)
		return err;
	s->dp = dp;
	err = homa_progress_watch(s, homa_dp_fd(old));
	if (err) {
		s->dp = old;
		homa_dp_close(dp);
		return err;
	}
	homa_ep_set_port(s->ep, port, true);
	s->is_server = true;
	homa_sock_wake(s); /* a leader waits on the old descriptor */
	homa_dp_close(old);
	return 0;
}

/* See homa_sock.h. */
void homa_sock_send_or_defer(struct homa_sock *s, uint64_t now)
{
	struct homa_ep_info info;

	homa_ep_info(s->ep, &info);
	if (info.readable && ++s->deferred < HOMA_SOCK_DEFER_MAX)
		return;
	homa_sock_flush(s, now);
}

/* See homa_sock.h. */
uint64_t homa_sock_pacer_wake(const struct homa_sock *s)
{
	struct homa_ep_info info;

	homa_ep_info(s->ep, &info);
	return info.pacer_wake;
}

/* See homa_sock.h. */
void homa_sock_pace_inline(struct homa_sock *s, uint64_t start)
{
	uint64_t end = start + HOMA_SOCK_PACE_INLINE_NS;

	if (!homa_cpuload_spin_ok(start))
		return;
	for (;;) {
		uint64_t now = homa_sock_now(), wake;

		if (s->deferred || now >= end)
			return;
		wake = homa_sock_pacer_wake(s);
		if (wake == 0 || wake > now + HOMA_SOCK_PACE_GAP_NS ||
		    wake > end)
			return;
		while (now < wake)
			now = homa_sock_now();
		homa_sock_flush(s, now);
	}
}

/* See homa_sock.h. */
void homa_sock_flush(struct homa_sock *s, uint64_t now)
{
	int n;

	s->deferred = 0;

	do {
		for (n = 0; n < HOMA_DP_BATCH; n++) {
			struct homa_out o;

			memset(&o, 0, sizeof(o));
			o.buf = s->tx_space + (size_t)n * s->tx_size;
			o.max_segs = s->dp->gather ? HOMA_SOCK_TX_SEGS : 0;
			if (!homa_ep_output(s->ep, now, &o))
				break;
			/* The pacer's estimate follows the real clock while
			 * a batch is built and sent. */
			if ((n & 7) == 7)
				now = homa_sock_now();
			s->tx[n].buf = o.segs ? (uint8_t *)o.frames : o.buf;
			s->tx[n].len = o.len;
			s->tx[n].addr = o.dest;
			s->tx[n].priority = o.priority;
			s->tx[n].segs = o.segs;
			s->tx[n].hdr_len = HOMA_DATA_HDR_LEN;
			s->tx[n].seg = o.seg;
			s->tx[n].payload_len = o.payload_len;
			s->tx[n].payload = o.payload;
		}
		if (n == 0)
			break;
		homa_dp_send(s->dp, s->tx, n);
		now = homa_sock_now();
	} while (n == HOMA_DP_BATCH);
	/* (The copies the last input batch deferred are made by the next
	 * homa_ep_lent_places, before the next kernel read.)  A send may
	 * have read ICMP errors (the socket's pending error failed it); the
	 * caller syncs. */
	homa_sock_unreachable(s, now);
}

/* See homa_sock.h. */
int homa_sock_unreachable(struct homa_sock *s, uint64_t now)
{
	/* Also read on when a datapath call stopped at a full list. */
	bool more = (atomic_load_explicit(&s->dp_err, memory_order_relaxed) &&
		     atomic_exchange(&s->dp_err, false)) ||
		    s->dp->num_unreach == HOMA_DP_UNREACH_MAX;
	union sockaddr_in_union dest;
	int failed = 0;
	uint64_t id;

	do {
		/* A full list stops the reading: take, then read on. */
		if (more)
			more = homa_dp_errors(s->dp);
		while (homa_dp_take_unreachable(s->dp, &dest, &id))
			failed += homa_ep_peer_unreachable(s->ep, &dest, id,
							   now);
	} while (more);
	return failed;
}

/* The places one kernel read offers: the endpoint's lent places, in the
 * datapath's terms. */
struct sock_places {
	struct homa_lent_places lent;
	struct homa_dp_place places[HOMA_DP_MAX_PLACES];
	struct homa_dp_placement pl;
};

_Static_assert(HOMA_LENT_PLACES <= HOMA_DP_MAX_PLACES &&
	       HOMA_LENT_PLACE_IOVS <= HOMA_DP_PLACE_IOVS &&
	       HOMA_LENT_MATCH_LEN <= HOMA_DP_MATCH_LEN,
	       "the datapath takes every lent place");

/* sock_places_make - sp's placement from the places the endpoint lends
 * now (NULL when it lends none; sp->lent.read_one then says whether to
 * read one packet only). */
static const struct homa_dp_placement *sock_places_make(struct homa_sock *s,
							struct sock_places *sp)
{
	homa_ep_lent_places(s->ep, &sp->lent);
	for (int i = 0; i < sp->lent.n; i++) {
		const struct homa_lent_place *lp = &sp->lent.place[i];
		struct homa_dp_place *p = &sp->places[i];

		p->hdr_len = lp->hdr_len;
		p->iovcnt = lp->iovcnt;
		p->len = lp->payload_len;
		for (int j = 0; j < p->iovcnt; j++)
			p->iov[j] = lp->iov[j];
		p->src = lp->src;
		memcpy(p->want, lp->want, HOMA_LENT_MATCH_LEN);
		memcpy(p->mask, lp->mask, HOMA_LENT_MATCH_LEN);
	}
	sp->pl.places = sp->places;
	sp->pl.n = sp->lent.n;
	return sp->lent.n > 0 ? &sp->pl : NULL;
}

/* sock_batch_in - the datagrams s->rx[0..n) of one read (n < 0: none, the
 * read failed with -n) into s's endpoint as one batch, with places sp when
 * the read used them (pl) and whether the read was full (behind); their
 * copies wait until the next read (homa_ep_lent_places) or batch, so that
 * the flush sends the GRANTs first.  Caller holds s->lock. */
static void sock_batch_in(struct homa_sock *s, int n,
			  const struct sock_places *sp,
			  const struct homa_dp_placement *pl, bool behind,
			  int core, uint64_t now)
{
	struct homa_rx_pkt in[HOMA_DP_BATCH];
	struct homa_rx_batch b;

	for (int i = 0; i < n; i++) {
		in[i].buf = s->rx[i].buf;
		in[i].len = s->rx[i].len;
		in[i].src = s->rx[i].addr;
		in[i].place = s->rx[i].place;
		in[i].placed = s->rx[i].placed;
	}
	b.pkts = in;
	b.n = n > 0 ? n : 0;
	b.places = pl ? &sp->lent : NULL;
	/* The kernel could not write into the places: the application
	 * took the region away. */
	b.fault = n == -EFAULT && pl;
	b.behind = behind;
	b.defer_copies = true;
	homa_ep_input(s->ep, &b, core, now);
}

/* See homa_sock.h. */
int homa_sock_rx_batch(struct homa_sock *s, uint64_t now)
{
	const struct homa_dp_placement *pl = NULL;
	struct sock_places sp;
	int n, core = 0, total = 0;
	bool may_probe = true, again = false;

	/* Everything one kernel read brought in goes to the endpoint as one
	 * batch before the caller flushes: the grants it earns leave
	 * together, once, rather than once per HOMA_DP_BATCH packets (8
	 * coalesced datagrams hold up to about 350 packets).  They also
	 * leave before the batch's bytes are copied into the buffer pool
	 * (homa_ep_lent_places makes the copies before the next kernel
	 * read, after the flush): a sender waiting for them waits less.
	 * The packets' buffers are the datapath's until that read. */
	sp.lent.n = 0;
	sp.lent.read_one = false;
	do {
		int want;

		for (int i = 0; i < HOMA_DP_BATCH; i++) {
			s->rx[i].buf = s->rx_space + (size_t)i * s->rx_size;
			s->rx[i].len = s->rx_size;
		}
		/* Payload the kernel writes into its place in the buffer
		 * pool needs no copy (homa_lent.h).  The first read of a
		 * batch may take one packet only, to learn the places of
		 * the rest (read_one).  Packets the datapath still holds
		 * from a kernel read were tried against that read's
		 * places: those stay until the last is handed out. */
		if (!s->dp->rx_buffered)
			pl = sock_places_make(s, &sp);
		want = may_probe && !pl && !s->dp->rx_buffered &&
		       sp.lent.read_one ? 1 : HOMA_DP_BATCH;
		may_probe = false;
		n = homa_dp_recv_placed(s->dp, s->rx, want, pl);
		s->rx_more = n == want || (n == -EFAULT && pl);
		if (n > 0 && total == 0) /* not on the empty reads of a spin */
			core = homa_sock_core();
		/* A full read suggests more waiting in the kernel: the
		 * endpoint is behind its input until a read comes back
		 * short. */
		sock_batch_in(s, n, &sp, pl, n == HOMA_DP_BATCH, core, now);
		if (n <= 0)
			break;
		total += n;
		again = want == 1 && !s->dp->rx_buffered;
	} while (s->dp->rx_buffered || again);
	return total + homa_sock_unreachable(s, now);
}

/*
 * sock_set_readable - make the application's descriptor readable (on) or
 * not (off).  Caller holds s->lock.
 */
static void sock_set_readable(struct homa_sock *s, bool on)
{
	s->efd_set = on;
	homa_sock_ready_in(s, on);
}

/* See homa_sock.h. */
uint64_t homa_sock_next_timer(const struct homa_sock *s)
{
	return homa_ep_next_timer(s->ep);
}

/* See homa_sock.h. */
void homa_sock_wake(struct homa_sock *s)
{
	uint64_t v = 1;

	if (s->sleepers > 0)
		pthread_cond_broadcast(&s->cond);
	if (s->leader_waiting && !s->wake_pending) {
		s->wake_pending = true;
		(void)!write(s->wakefd, &v, sizeof(v));
	}
}

/*
 * sync_timer - tell the progress thread when s's pacer lets DATA go, unless
 * an awake leader runs s's timer itself (lead_busy).  Ticks are not
 * reported: the progress thread passes over every socket each tick anyway
 * (a tick is at most one tick late), and reporting each socket's tick woke
 * it thousands of times a second for nothing.
 */
static void sync_timer(struct homa_sock *s, uint64_t pacer)
{
	if (atomic_load(&s->lead_busy))
		return;
	if (pacer)
		homa_progress_timer_changed(pacer);
}

/* See homa_sock.h. */
void homa_sock_sync(struct homa_sock *s)
{
	homa_sock_sync_taken(s, false);
}

/* See homa_sock.h. */
void homa_sock_sync_taken(struct homa_sock *s, bool taken)
{
	struct homa_ep_info info;
	bool readable, news;
	uint64_t done;

	homa_ep_info(s->ep, &info);
	readable = info.readable;
	done = info.completions;
	/* Completions the caller did not take itself. */
	news = done - s->completions_seen > (taken ? 1 : 0);

	if (readable != s->efd_set)
		sock_set_readable(s, readable);
	else if (readable && news)
		homa_sock_ready_in(s, true); /* a new edge for EPOLLET */
	if (done != s->completions_seen ||
	    (readable && !s->was_readable)) {
		/* Wake the others only for what the caller left them. */
		if (readable || news)
			homa_sock_wake(s);
		s->completions_seen = done;
	}
	s->was_readable = readable;
	homa_sock_sync_wmem(s, info.writable);
	sync_timer(s, info.pacer_wake);
}

/*
 * read_batch_locked - one batch of s's waiting packets into the engine,
 * then (when there was any) its output flushed and readiness synced.
 * Returns the packets read.  Caller holds s->lock.
 */
static int read_batch_locked(struct homa_sock *s)
{
	uint64_t now = homa_sock_now();
	int n = homa_sock_rx_batch(s, now);

	if (n > 0) {
		homa_sock_flush(s, now);
		homa_sock_sync(s);
	}
	return n;
}

/* The most batches one homa_sock_drain_locked reads: while packets come
 * as fast as one thread reads them, a drain "until empty" never ends, and
 * the thread that started it (a sender's homa_sock_send_end, say) keeps
 * the socket's lock from every other thread for minutes (the soak: a
 * server thread inside homa_reply for 21 s of CPU, the other threads and
 * the stats reader waiting for the lock).  What is left waits for the
 * next reader (the leader, or the progress thread, which polls the
 * datapath); the engine knows it is behind its input (a full last batch,
 * homa_rx_batch.behind), so its timer counts no silence meanwhile. */
#define HOMA_SOCK_DRAIN_BATCHES 16

/* See homa_sock.h. */
int homa_sock_drain_locked(struct homa_sock *s)
{
	int total = 0, n, batches = 0;

	do {
		n = read_batch_locked(s);
		total += n;
		/* Until a read finds nothing (a short batch does not prove the
		 * socket empty: homa_dp_recv; UDP with GRO returns at most one
		 * recvmmsg of datagrams per call), or HOMA_SOCK_DRAIN_BATCHES
		 * batches. */
	} while (n > 0 && ++batches < HOMA_SOCK_DRAIN_BATCHES);
	return total;
}

/* See homa_sock.h. */
void homa_sock_settle(struct homa_sock *s)
{
	while (!homa_ep_lent_settle(s->ep, HOMA_SOCK_SETTLE_STEP)) {
		homa_trace(HOMA_TRACE_SETTLE_STEP, 0);
		(void)read_batch_locked(s);
	}
	homa_trace(HOMA_TRACE_SETTLE_STEP, 1);
}

/* See homa_sock.h. */
void homa_sock_send_begin(struct homa_sock *s)
{
	atomic_fetch_add(&s->senders, 1);
}

/* send_end_timer - a sender's run of s's timer at now, and the flush of
 * what it queued.  Caller holds s->lock. */
static void send_end_timer(struct homa_sock *s, uint64_t now)
{
	homa_ep_timer(s->ep, now);
	homa_sock_flush(s, now);
}

/* See homa_sock.h. */
void homa_sock_send_end(struct homa_sock *s)
{
	uint64_t now = homa_sock_now();
	bool due, skipped;

	atomic_fetch_sub(&s->senders, 1);
	due = homa_sock_next_timer(s) <= now;
	if (s->leader) {
		/* The leader reads the packets itself (it polls the
		 * datapath). */
		if (due)
			send_end_timer(s, now);
		return;
	}
	skipped = atomic_exchange(&s->skipped, 0);
	/* The timer counts silence only over input that was read: a
	 * sender that runs it reads s first, whether or not the progress
	 * thread came by (it may not run for a while: a busy machine, or
	 * a tool that runs one thread at a time). */
	if (skipped || due)
		homa_sock_drain_locked(s);
	if (due)
		send_end_timer(s, homa_sock_now());
	if (skipped && !s->rearm_at)
		homa_progress_rearm(s);
}

/*
 * yield_to_poller - true when an application thread polls s now, or
 * stopped polling it less than HOMA_SOCK_RECENT_NS ago (it is likely back in
 * a moment, as a thread alternating between sending and receiving is): the
 * progress thread then leaves the packets to it (the mark makes the poller
 * drain once more, and park the socket, when it next stops).  Packets left
 * so and never picked up are drained by the progress thread's next pass.
 */
static bool yield_to_poller(struct homa_sock *s)
{
	atomic_store(&s->skipped, 1);
	if (atomic_load(&s->pollers) > 0 || atomic_load(&s->senders) > 0 ||
	    atomic_load(&s->lead_ended) + HOMA_SOCK_RECENT_NS >
	    homa_sock_now())
		return true;
	atomic_store(&s->skipped, 0);
	return false;
}

/* See homa_sock.h. */
int homa_sock_drain(struct homa_sock *s)
{
	int total = 0, n;

	do {
		if (yield_to_poller(s))
			return total;
		pthread_mutex_lock(&s->lock);
		if (atomic_load(&s->closing)) {
			pthread_mutex_unlock(&s->lock);
			return total;
		}
		n = read_batch_locked(s);
		if (n == 0 && !s->rearm_at)
			homa_progress_rearm(s);
		pthread_mutex_unlock(&s->lock);
		total += n;
	} while (n > 0);  /* until empty, as homa_sock_drain_locked */
	return total;
}
