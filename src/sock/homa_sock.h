/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_sock - internals of the socket layer: the socket object, the table
 * from descriptors to sockets, the helpers that drive one endpoint through
 * its datapath, and the process-wide progress thread.
 *
 * Locking: each socket has a mutex (lock) around its endpoint, its datapath
 * and its I/O scratch space; whoever runs the engine also reads and sends
 * the packets, holding that lock.  The table has its own mutex, never held
 * together with a socket lock.  Sockets are reference counted: the table
 * holds one reference, and every thread using a socket holds one from
 * homa_sock_get until homa_sock_put, so homa_close cannot free a socket
 * another thread is in; it marks the socket closing, wakes its waiters and
 * waits until it holds the only reference.
 *
 * Who serves a socket's packets (docs/threads.md has the transitions and
 * why each constant has its value):
 *   watched  nobody: the progress thread's one-shot epoll event is armed
 *   led      one thread waiting in homa_recvmsg reads them (pollers = 1);
 *            it spins (host not contended, homa_cpuload), reads, or
 *            sleeps in ppoll; other waiters sleep on cond
 *   sending  a thread inside a send holds the lock (senders > 0) and
 *            reads what was left to it when the send ends
 *   parked   a leader left less than HOMA_SOCK_PARK_NS ago (rearm_at): the
 *            progress thread re-arms the event at its first pass after
 * The progress thread leaves packets to a leader, a sender or a leader of
 * less than HOMA_SOCK_RECENT_NS ago (marking the socket skipped), and the
 * timer to an awake leader seen less than HOMA_SOCK_LEAD_STALE_NS ago.
 */
#ifndef HOMA_SOCK_H
#define HOMA_SOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "homa.h"
#include "homa_config.h"
#include "homa_datapath.h"
#include "homa_endpoint.h"

/* Receive slot: room for the largest IP datagram, whatever packet size
 * the peer chose (a loopback peer sends up to loopback_mtu, a peer on a
 * jumbo link 9000 bytes).  Slots the kernel does not write stay
 * untouched pages. */
#define HOMA_SOCK_RX_SLOT 65536

/* Most DATA packets of one message gathered into one send slot (when the
 * datapath takes runs). */
#define HOMA_SOCK_TX_SEGS 64

struct homa_sock {
	atomic_int refs;
	int fd;                 /* the application's descriptor: one end of
				 * an AF_UNIX stream pair (homa_sockready.c) */
	int readyfd;            /* the other end, internal */
	uint32_t gen;           /* tells reuses of one fd apart */
	int family;             /* AF_INET or AF_INET6 */
	bool nonblock;          /* created with SOCK_NONBLOCK */
	uint64_t poll_ns;       /* busy-poll budget of recvmsg */
	uint32_t wake_slice_us; /* slice of the threads that wait on s
				 * (homa_cpuload_wake_slice) */
	int transport;          /* enum homa_dp_kind */
	struct homa_dp_bands bands; /* receive bands of its datapaths */

	int wakefd;             /* eventfd that wakes the leader out of its
				 * wait on the datapath (internal) */
	atomic_bool closing;    /* homa_close has begun */
	atomic_int pollers;     /* application threads serving the datapath
				 * now (the leader: 0 or 1) */
	atomic_bool lead_busy;  /* the leader is awake (not asleep in
				 * block_once): it runs s's timer, and the
				 * progress thread passes s by ... */
	atomic_ullong lead_seen; /* ... while the leader was last seen at
				 * work (ns) less than HOMA_SOCK_LEAD_STALE_NS
				 * ago (a descheduled leader is not waited
				 * for) */
	atomic_int senders;     /* application threads inside a send, holding
				 * s->lock (homa_sock_send_begin): the
				 * progress thread passes s by rather than
				 * wait for the lock */
	atomic_int skipped;     /* the progress thread left packets to them */
	atomic_bool dp_err;     /* poll or epoll saw POLLERR on the
				 * datapath: the next read first empties its
				 * error queue (homa_dp_errors) */
	atomic_ullong lead_ended; /* when the last leader stopped (ns) */
	uint64_t rearm_at;      /* under lock: parked (the datapath's one-shot
				 * event spent while an application thread
				 * serves the socket itself); the progress
				 * thread takes over at this time, 0 = not
				 * parked */

	pthread_mutex_t lock;   /* guards everything below */
	pthread_cond_t cond;    /* broadcast: completions, shutdown, close */
	struct homa_ep *ep;
	struct homa_pool *pool;  /* ep's buffer pool (homa_ep_info) */
	const uint64_t *stats;   /* ep's counters (homa_ep_info) */
	struct homa_dp *dp;
	bool is_server;
	bool efd_set;           /* the descriptor is readable (POLLIN) */
	bool out_off;           /* the descriptor is not writable (POLLOUT
				 * withdrawn: wmem_max reached) */
	int send_waiters;       /* threads waiting in a send for memory
				 * (also counted in sleepers) */
	uint32_t deferred;      /* messages handed over since the last flush
				 * and not yet sent (homa_sock_send_or_defer) */
	bool was_readable;
	uint64_t completions_seen;
	int sleepers;           /* threads waiting on cond */
	bool leader;            /* an application thread waiting in recvmsg
				 * serves the datapath itself (the others
				 * wait on cond) */
	bool leader_waiting;    /* ... and is now outside the lock, waiting
				 * for the datapath or wakefd */
	bool wake_pending;      /* wakefd was written and not yet read */
	bool rx_more;           /* the last read filled a batch: more packets
				 * may wait, some in the datapath's own
				 * buffers (coalesced datagrams), where the
				 * descriptor does not show them */

	/* Scratch space of the I/O helpers (under lock). */
	size_t rx_size, tx_size;
	uint8_t *rx_space, *tx_space;
	struct homa_dp_pkt rx[HOMA_DP_BATCH];
	struct homa_dp_pkt tx[HOMA_DP_BATCH];
};

/* ---- homa_sockfd.c: the descriptor table ---- */

/*
 * homa_sock_table_insert - make s reachable through s->fd; the table takes
 * over the caller's reference.  A stale entry left by a descriptor closed
 * with close(2) is detached and freed.  Returns 0 or -ENOMEM.
 */
int homa_sock_table_insert(struct homa_sock *s);

/*
 * homa_sock_table_remove - unlink the socket of fd and return it with the
 * table's reference (now the caller's), or NULL when fd is no socket.
 */
struct homa_sock *homa_sock_table_remove(int fd);

/* homa_sock_get - the socket of fd with a new reference, or NULL (the
 * caller reports EBADF).  Release with homa_sock_put. */
struct homa_sock *homa_sock_get(int fd);

/* homa_sock_get_key - like homa_sock_get for a key of homa_sock_key, NULL
 * when that socket is gone (its fd may name a newer one). */
struct homa_sock *homa_sock_get_key(uint64_t key);

/* homa_sock_key - a value naming s and no later socket on the same fd. */
static inline uint64_t homa_sock_key(const struct homa_sock *s)
{
	return ((uint64_t)s->gen << 32) | (uint32_t)s->fd;
}

/* homa_sock_put - drop a reference from homa_sock_get (wakes a closer
 * waiting for the last user). */
void homa_sock_put(struct homa_sock *s);

/*
 * homa_sock_snapshot - every socket in the table, each with a reference
 * (the caller puts each), into the caller's array *buf of *cap entries,
 * grown with realloc as needed (the caller keeps it for the next call, so
 * that no allocation is in flight at a fork).  Returns the count; 0 when
 * none or out of memory.
 */
int homa_sock_snapshot(struct homa_sock ***buf, int *cap);

/* ---- homa_sockio.c: driving one endpoint ---- */

/* homa_sock_now - CLOCK_MONOTONIC in nanoseconds (the engine's clock). */
uint64_t homa_sock_now(void);

/* homa_sock_core - the caller's CPU number (0 when unknown). */
int homa_sock_core(void);

/*
 * homa_sock_create - a new socket (refs 1) with its endpoint, a datapath on
 * a client port and its application descriptor, from a copy of cfg.
 * Returns 0 and sets *out; -EINVAL for an inconsistent cfg;
 * -EPROTONOSUPPORT for a transport that is not built; -ENOMEM, -EMFILE,
 * -EADDRINUSE and other errors of socket creation.
 */
int homa_sock_create(const struct homa_config *cfg, int family,
		     bool nonblock, struct homa_sock **out);

/* homa_sock_destroy - free s and close its descriptors (refs must be 0
 * or s never published). */
void homa_sock_destroy(struct homa_sock *s);

/*
 * homa_sock_rebind - give s a datapath on server port (1..32767).  Caller
 * holds s->lock.  Returns 0 (also when s already has that port);
 * -EADDRINUSE; other datapath errors.  The old datapath is closed.
 */
int homa_sock_rebind(struct homa_sock *s, uint16_t port);

/*
 * homa_sock_pace_inline - after a send: while the pacer lets the next DATA
 * of s go within HOMA_SOCK_PACE_GAP_NS, wait for it here (spinning) and
 * send it, for at most HOMA_SOCK_PACE_INLINE_NS after start; what is left
 * goes to the leader or the progress thread as before.  A packet or two
 * behind a slow link then leaves without waking another thread, which
 * takes longer than the wait on these machines.  Not on a contended host
 * (homa_cpuload_spin_ok), where the spin would take a core from another
 * thread.  Caller holds s->lock.
 */
void homa_sock_pace_inline(struct homa_sock *s, uint64_t start);

/* homa_sock_flush - send everything the endpoint has to send now, from the
 * calling thread.  Caller holds s->lock. */
void homa_sock_flush(struct homa_sock *s, uint64_t now);

/*
 * homa_sock_copy - the socket's payload copier (homa_copier): makes
 * c[0..n) by memcpy; a copy into memory of the buffer region that the
 * application unmapped or made read-only stops there (returns its index)
 * instead of killing the process: the first call installs a SIGSEGV and
 * SIGBUS handler for the process that catches faults inside these copies
 * and passes every other fault on to the handler installed before it
 * (and puts it back on top, within a millisecond, when the application
 * installs its own).
 */
uint32_t homa_sock_copy(void *ctx, const struct homa_ep_copy *c, uint32_t n);

/*
 * homa_sock_rx_batch - read one batch of packets from the datapath without
 * blocking (one kernel read, and every packet the datapath kept from it)
 * and feed them to the endpoint.  Caller holds s->lock; should flush and
 * sync afterwards.  Returns the packets read plus the client RPCs failed
 * because their destination's host said nothing listens there (ICMP, see
 * homa_sock_unreachable); s->rx_more tells whether more packets may wait.
 */
int homa_sock_rx_batch(struct homa_sock *s, uint64_t now);

/*
 * homa_sock_unreachable - empty the datapath's error queue first when
 * s->dp_err says poll saw POLLERR, then hand each report the datapath
 * took from it (homa_dp_take_unreachable: a destination and the RPC id its
 * quoted packet carried) to the endpoint (homa_ep_peer_unreachable: that
 * client RPC fails with ENOTCONN); reads again while the reports filled the
 * datapath's list.  Caller holds s->lock; should sync afterwards.  Returns
 * the RPCs failed.
 */
int homa_sock_unreachable(struct homa_sock *s, uint64_t now);

/* homa_sock_pacer_wake - when s's pacer lets held-back DATA go (absolute
 * ns, homa_ep_info.pacer_wake), or 0 when no DATA waits for it.  Caller
 * holds s->lock. */
uint64_t homa_sock_pacer_wake(const struct homa_sock *s);

/* homa_sock_next_timer - when the progress thread must next serve s: the
 * engine's timer (the end of parking waits for the progress thread's next
 * tick).  Caller holds s->lock. */
uint64_t homa_sock_next_timer(const struct homa_sock *s);

/*
 * homa_sock_sync - after engine calls: make the application's descriptor
 * readable exactly when the endpoint is and writable exactly when a send
 * would be admitted (homa_sock_sync_wmem), wake sleepers if a message or
 * error became ready or memory fell below wmem_max, tell the progress
 * thread about an earlier timer.  Caller holds s->lock.
 */
void homa_sock_sync(struct homa_sock *s);

/*
 * homa_sock_sync_taken - homa_sock_sync after the caller took, with
 * homa_ep_receive, a message that became ready since the last sync (taken):
 * other waiters are then woken only if something is left for them (a
 * thread serving its own socket does not wake the sleeping threads of a
 * server for every request it takes itself).  Caller holds s->lock.
 */
void homa_sock_sync_taken(struct homa_sock *s, bool taken);

/*
 * homa_sock_wake - wake every thread waiting in homa_recvmsg on s (the
 * sleepers on cond and the leader waiting on the datapath), to look again
 * at the endpoint and at closing.  Caller holds s->lock.
 */
void homa_sock_wake(struct homa_sock *s);

/*
 * homa_sock_drain_locked - read the waiting packets of s in batches,
 * flushing output and syncing after each, until a read finds nothing or
 * after HOMA_SOCK_DRAIN_BATCHES batches (packets that keep coming must
 * not keep the caller, and the lock, for ever).  Caller holds s->lock.
 * Returns the packets read.
 */
int homa_sock_drain_locked(struct homa_sock *s);

/*
 * homa_sock_send_begin - the calling thread, holding s->lock, starts a
 * send (homa_sendmsg, the shim's sends), which holds the lock while it
 * copies and sends the message (a 1 MB message: about 100 us here): until
 * homa_sock_send_end, the progress thread leaves s alone (its packets, its
 * timer) instead of waiting for the lock and being woken when the send
 * ends.  Not across a wait that releases the lock (homa_sock_wait_wmem
 * comes first).  Caller holds s->lock.
 */
void homa_sock_send_begin(struct homa_sock *s);

/*
 * homa_sock_send_end - the end of homa_sock_send_begin: when the progress
 * thread left packets meanwhile and no leader polls s, read them now and
 * let the progress thread watch s again (unless s is parked); run s's
 * timer if it came due, after reading s's waiting packets when no leader
 * polls s (a tick counts silence only over input that was read, even if
 * the progress thread has not run for a while).  Caller holds s->lock.
 */
void homa_sock_send_end(struct homa_sock *s);

/*
 * homa_sock_settle - end the lending of a send (HOMA_EP_SEND_LENT,
 * homa_lent.h): copy the
 * message into the engine in steps of HOMA_SOCK_SETTLE_STEP bytes, reading
 * s's waiting packets between them.  A request's response that arrives
 * meanwhile (loopback: often while the copy runs) is taken at once, and
 * the rest of the request need not be copied.  Caller holds s->lock,
 * inside homa_sock_send_begin.
 */
void homa_sock_settle(struct homa_sock *s);

/*
 * homa_sock_drain - for the progress thread: read every waiting packet of s
 * in batches (taking and releasing s->lock around each), flushing output
 * and syncing after each; stop as soon as an application thread polls s
 * (leaving it the skipped mark).  Returns the packets read.
 */
int homa_sock_drain(struct homa_sock *s);

/* ---- homa_sockready.c: the application's descriptor ---- */

/*
 * homa_sock_ready_open - the application's descriptor (*app) and the
 * socket's internal end of it (*peer): readable and writable flags that
 * poll, select and epoll report (see homa_sockready.c).  Both nonblocking
 * and close-on-exec; *app starts neither readable nor unwritable.
 * Returns 0 or a negative errno of socketpair (-EMFILE, -ENFILE, -ENOMEM).
 */
int homa_sock_ready_open(int *app, int *peer);

/* homa_sock_ready_in - make s->fd readable (POLLIN) or not; on when it is
 * already on wakes its pollers again (a new edge for EPOLLET).  Caller
 * holds s->lock and keeps efd_set; a descriptor detached by close(2)
 * (fd < 0) is left alone. */
void homa_sock_ready_in(struct homa_sock *s, bool on);

/* homa_sock_ready_out - make s->fd writable (POLLOUT) or not, and set
 * s->out_off to match.  Caller holds s->lock. */
void homa_sock_ready_out(struct homa_sock *s, bool on);

/* ---- homa_sockwmem.c: the send-memory limit ---- */

/*
 * homa_sock_sync_wmem - bring POLLOUT in line with writable (the
 * endpoint's homa_ep_info.writable now), and wake the senders waiting for
 * memory when it became writable (part of homa_sock_sync).  Caller holds
 * s->lock.
 */
void homa_sock_sync_wmem(struct homa_sock *s, bool writable);

/*
 * homa_sock_wait_wmem - before a send: wait until the endpoint holds fewer
 * outgoing bytes than wmem_max.  Caller holds s->lock (released while
 * waiting; the wait serves the datapath between sleeps).  Returns 0 when
 * the send may go; -EAGAIN when nonblock and at the limit; -EBADF when
 * the socket is closed meanwhile.  After homa_shutdown it returns 0 (the
 * shutdown freed every message) and the send itself fails with ESHUTDOWN.
 */
int homa_sock_wait_wmem(struct homa_sock *s, bool nonblock);

/* ---- homa_cpuload.c: whether busy-polling pays ---- */

/* homa_cpuload_spin_ok - false while the host's CPUs are contended (the
 * library's threads then sleep instead of busy-polling).  Any thread. */
bool homa_cpuload_spin_ok(uint64_t now);

/* homa_cpuload_thread_ns - the calling thread's CPU time in ns (0 when
 * the clock cannot be read). */
uint64_t homa_cpuload_thread_ns(void);

/* homa_cpuload_spin_report - a spin of the calling thread lasted wall_ns
 * and got cpu_ns of CPU time: add it to the window's account (spins
 * shorter than 20 us are left out).  Any thread. */
void homa_cpuload_spin_report(uint64_t wall_ns, uint64_t cpu_ns);

/* homa_cpuload_account_spins - end the window's spin account at now:
 * where spins lasted a tenth of a window or more in all and got less than
 * half of that as CPU time, mark the host contended.  The evidence where
 * PSI is off; the progress thread (and tests). */
void homa_cpuload_account_spins(uint64_t now);

/* homa_cpuload_sample - the progress thread, at each tick: once per
 * window, read the host's CPU pressure (homa_cpuload_psi_total of
 * /proc/pressure/cpu) and account it (homa_cpuload_account), or where PSI
 * is off account the window's spins (homa_cpuload_account_spins).  The
 * progress thread only. */
void homa_cpuload_sample(uint64_t now);

/* homa_cpuload_psi_total - parse the "some" line's total (us) of a PSI
 * file's text into *out.  Returns false when text is not such a file. */
bool homa_cpuload_psi_total(const char *text, uint64_t *out);

/* homa_cpuload_account - the PSI total read at now is stall_us: end the
 * current window there, marking the host contended when runnable threads
 * waited for a CPU during more than half of it (a total that went back
 * proves nothing), and start the next.  The progress thread (and
 * tests). */
void homa_cpuload_account(uint64_t now, uint64_t stall_us);

/* homa_cpuload_reset - forget every piece of evidence and the window
 * (tests). */
void homa_cpuload_reset(void);

/* homa_cpuload_wake_slice - ask the kernel for a scheduler slice of usecs
 * microseconds for the calling thread (sched_setattr, Linux 6.12 and
 * later; older kernels ignore it): a thread with a short slice that wakes
 * preempts a CPU-bound thread at once.  0, or the value the thread asked
 * for last, does nothing; so does a thread whose policy is not
 * SCHED_OTHER.  Best effort: errors are ignored. */
void homa_cpuload_wake_slice(uint32_t usecs);

/* ---- homa_progress.c: the background thread ---- */

/* homa_progress_start - start the thread once per process.  Returns 0 or
 * a negative errno (-EAGAIN, -ENOMEM, -EMFILE). */
int homa_progress_start(void);

/* homa_progress_watch - watch dp's descriptor for s (replacing old_fd when
 * it is >= 0).  Returns 0 or a negative errno from epoll_ctl. */
int homa_progress_watch(struct homa_sock *s, int old_fd);

/* How long a socket stays parked after an application thread served it:
 * while the application keeps calling in, the progress thread is not woken
 * by its packets; after this long without a leader it takes over again, at
 * its next pass (every tick at least), so within a tick more. */
#define HOMA_SOCK_PARK_NS 500000ull

/* An application thread that stopped polling a socket less than this long
 * ago is taken to be coming back: the progress thread leaves the socket's
 * packets to it (and the socket gets parked) rather than take them. */
#define HOMA_SOCK_RECENT_NS 100000ull

/* A leader not seen at work for this long (descheduled, say) no longer
 * keeps the progress thread from running its socket's timer. */
#define HOMA_SOCK_LEAD_STALE_NS 2000000ull

/* homa_sock_pace_inline waits for a pacer release only when it is due
 * within HOMA_SOCK_PACE_GAP_NS, and for at most HOMA_SOCK_PACE_INLINE_NS
 * after the send in all. */
#define HOMA_SOCK_PACE_GAP_NS 15000ull
#define HOMA_SOCK_PACE_INLINE_NS 60000ull

/* Most messages homa_sock_send_or_defer holds back before sending them all. */
#define HOMA_SOCK_DEFER_MAX 16

/* Bytes homa_sock_settle copies between two reads of the socket: a read
 * that finds nothing costs about a microsecond, a 1 MB copy 20-30 us. */
#define HOMA_SOCK_SETTLE_STEP 262144u

/*
 * homa_sock_send_or_defer - after a message was handed to the engine: send
 * what is due now, unless a message is ready for the application, which is
 * then likely to take it and hand over another message at once: the
 * packets then go out together (one system call) when it has to wait in
 * homa_recvmsg, after HOMA_SOCK_DEFER_MAX messages, or at the progress
 * thread's next pass (within a tick).  Caller holds s->lock.
 */
void homa_sock_send_or_defer(struct homa_sock *s, uint64_t now);

/* homa_progress_rearm - watch s's datapath again after its one-shot event
 * (called by whoever last drained it while nobody polls it). */
void homa_progress_rearm(struct homa_sock *s);

/* homa_progress_unwatch - stop watching s's datapath. */
void homa_progress_unwatch(struct homa_sock *s);

/* homa_progress_timer_changed - the endpoint of some socket wants its timer
 * at t (absolute ns): wake the thread if it planned to sleep past t. */
void homa_progress_timer_changed(uint64_t t);

#endif /* HOMA_SOCK_H */
