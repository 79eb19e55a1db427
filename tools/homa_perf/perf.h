/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perf.h - what the files of homa-perf share (tools/homa_perf.c is the
 * program's main file and says what it does):
 *   perf_options.c     the command line
 *   perf_workload.c    the request format, request sizes and buckets
 *   perf_baseline.c    unloaded RTTs: calibration, files, interpolation
 *   perf_phase.c       a load phase: workers, their statistics
 *   perf_homa.c        the Homa side: server, load workers
 *   perf_handoff.c     the queue from a generator to its sending thread
 *   perf_tcp_server.c  the TCP server
 *   perf_tcp_load.c    the TCP load worker, closed loop
 *   perf_tcp_pool.c    the TCP load worker, open loop: a connection pool
 *   perf_report.c      the report as text
 *   perf_json.c        the report as JSON
 */
#ifndef PERF_H
#define PERF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "homa.h"
#include "homa_histogram.h"
#include "tool_clock.h"
#include "tool_counters.h"
#include "tool_frame.h"
#include "tool_homa_server.h"
#include "workload_dist.h"
#include "workload_rng.h"

#define PROG            "homa-perf"
#define MAX_MSG         ((uint32_t)HOMA_MAX_MESSAGE_LENGTH)
#define MAX_BUCKETS     16              /* fits the cookie's 4 bits */
#define MAX_THREADS     32
#define MAX_CAL         32              /* calibration sizes per protocol */
#define SPEC_ECHO       0xffffffffu     /* request header: echo me */
#define SPEC_BYTES      4               /* request header length */
#define REGION_BYTES    ((size_t)256 << 20)     /* Homa buffer region */
#define CAL_WARM        2               /* calibration RPCs discarded */
#define CAL_BUDGET_NS   (1 * TOOL_NS_PER_S) /* calibration time per size */
#define SLOW_SCALE      1000.0          /* slowdowns kept in thousandths */
#define STAGE_SLACK_S   30              /* watchdog margin of a stage */
#define TCP_RX_CHUNK    (256 * 1024)
#define TCP_BATCH       32              /* frames per sendmsg */
#define MAX_TCP_CONNS   1024            /* server connections */
#define MAX_POOL_CONNS  256             /* client connections per thread */
#define OPEN_TCP_CONNS  8               /* default pool, open loop */
#define LATE_NS         1000000         /* an arrival this late is late */
#define LATE_LIMIT      0.01            /* more late arrivals: invalid */
#define STALL_EVERY     10              /* --test-stall: every 10th ... */
#define STALL_NS        2000000         /* ... arrival waits 2 ms */
#define MAX_ERRNO       256             /* failures counted by errno */
#define MAX_CLIENT_S    3600            /* client: --duration at most */

/* ---------------------------------------------------------------- */
/* Options (perf_options.c)                                           */

enum proto { P_HOMA, P_TCP, NPROTO };
/* proto_name - "homa", "tcp". */
extern const char *const proto_name[NPROTO];

enum mode { M_NONE, M_SERVER, M_CLIENT, M_LOOPBACK };

struct options {
	enum mode mode;
	/* where */
	union sockaddr_in_union server; /* client: Homa address of server */
	int port;                       /* server, loopback: Homa port */
	int tcp_port;                   /* TCP port (0: same as Homa's) */
	int no_tcp_server;              /* server: no TCP listener */
	/* what */
	const char *workload;           /* name or file; NULL: fixed size */
	const char *workload_dir;
	uint32_t size;                  /* fixed request size */
	int buckets;
	uint32_t resp_size;             /* response bytes, or SPEC_ECHO */
	/* how much */
	int open_loop;                  /* 1: Poisson; 0: closed loop */
	double rate;                    /* open loop: RPCs/s in total */
	double load_gbps;               /* open loop: request Gbit/s */
	int outstanding;                /* closed loop: RPCs in flight */
	int max_outstanding;            /* open loop: per thread */
	int threads;                    /* client (or server) threads */
	int server_threads;             /* loopback: Homa server threads */
	int server_epoll;               /* Homa server threads use epoll */
	int client_poll;                /* open loop: one Homa thread per
					 * worker, waiting in ppoll */
	int tcp_conns;                  /* TCP connections per thread */
	int test_stall;                 /* --test-stall: a proto, or -1 */
	double duration;                /* seconds of each load phase */
	double warmup;                  /* seconds not measured (< 0: auto) */
	double drain;                   /* seconds allowed to finish */
	unsigned int protos;            /* bit per enum proto */
	/* baseline */
	const char *baseline_in;
	const char *baseline_out;
	int calib_rpcs;
	int slowdown_own;
	/* misc */
	uint64_t seed;
	int json;
	int quiet;
	double sample_every;            /* --sample-every (0: none) */
};

/*
 * parse_options - fill o from the command line (argv[1] is the mode).
 * Prints --help and exits 0 when asked; exits 2 on any mistake.
 */
void parse_options(int argc, char **argv, struct options *o);

/* ---------------------------------------------------------------- */
/* Requests, workload and buckets (perf_workload.c)                   */

/* The payload every request and response is cut from: MAX_MSG bytes of a
 * pattern; requests carry the spec in their first bytes (per thread copy). */
extern uint8_t *perf_pattern;

/* pattern_init - fill the shared pattern.  Returns 0 or -1 (no memory). */
int pattern_init(void);

/* request_buffer - a private copy of the pattern whose first bytes ask for
 * o's response; NULL when out of memory.  Free with free(). */
uint8_t *request_buffer(const struct options *o);

/* expected_response - what the client expects back for size bytes. */
uint32_t expected_response(const struct options *o, uint32_t size);

/*
 * request_answer - a tool_homa_answer_fn (ctx unused): the answer to a
 * request of len bytes whose first bytes are head: TOOL_ANSWER_ECHO when
 * it asks for an echo or is shorter than SPEC_BYTES, else the response
 * length it asks for (cut to MAX_MSG).
 */
uint32_t request_answer(void *ctx, const uint8_t *head, size_t head_len,
			size_t len);

struct workload {
	char name[64];
	int fixed;                      /* 1: every request is size bytes */
	uint32_t size;
	struct workload_dist w;          /* when !fixed */
	double mean;                    /* mean request bytes */
	uint32_t min, max;              /* smallest and largest size */
	int nbuckets;
	uint32_t lo[MAX_BUCKETS];       /* sizes bucket i can hold */
	uint32_t hi[MAX_BUCKETS];
};

/*
 * workload_open - set wl up from the options: a fixed size (one bucket)
 * or a distribution (o->buckets buckets).  Returns 0, or -1 after printing
 * why (unreadable or malformed file).
 */
int workload_open(struct workload *wl, const struct options *o);

/* workload_close - free what workload_open allocated. */
void workload_close(struct workload *wl);

/* workload_draw - a request size and its bucket, from r. */
void workload_draw(const struct workload *wl, struct workload_rng *r,
		   uint32_t *size, int *bucket);

/* ---------------------------------------------------------------- */
/* Unloaded RTTs, the baseline of slowdowns (perf_baseline.c)         */

struct baseline {
	int n[NPROTO];                  /* points per protocol */
	uint32_t size[NPROTO][MAX_CAL]; /* increasing */
	double rtt_ns[NPROTO][MAX_CAL];
	long rpcs[NPROTO][MAX_CAL];     /* RPCs behind each median */
	int from_file;
	int own;                        /* --slowdown-base own */
};

/* baseline_rtt - the divisor of a slowdown of size bytes under p: p's own
 * unloaded RTT, or (default) the lowest over the protocols measured.
 * Returns 0 when nothing is known. */
double baseline_rtt(const struct baseline *b, enum proto p, uint32_t size);

/* baseline_write - save b to path ("proto size rtt_ns rpcs" lines).
 * Returns 0, or -1 after printing why. */
int baseline_write(const struct baseline *b, const char *path);

/* baseline_read - load path written by baseline_write into b.  Returns 0,
 * or -1 after printing which line is wrong. */
int baseline_read(struct baseline *b, const char *path);

/* cal_sizes - the sizes to calibrate for wl into out (MAX_CAL at most);
 * returns their count. */
int cal_sizes(const struct workload *wl, uint32_t *out);

/*
 * calibrate - measure protocol p's unloaded RTT at every size of sizes[n]
 * (one RPC at a time over one socket or connection; CAL_WARM discarded,
 * then up to o->calib_rpcs or CAL_BUDGET_NS per size, at least 3) and add
 * the medians to b.  Returns 0, or -1 after printing why.
 */
int calibrate(const struct options *o, enum proto p,
	      const union sockaddr_in_union *homa_dest,
	      const union sockaddr_in_union *tcp_dest,
	      const uint32_t *sizes, int n, struct baseline *b);

/* ---------------------------------------------------------------- */
/* A load phase (perf_phase.c)                                        */

struct bucket_stats {
	struct homa_histogram rtt;      /* ns */
	struct homa_histogram slow;     /* slowdown * SLOW_SCALE */
	uint64_t req_bytes;
	uint64_t resp_bytes;
};

/* What one worker (and, merged, one phase) measured. */
struct stats {
	struct bucket_stats b[MAX_BUCKETS];
	uint64_t sent;          /* RPCs issued in the measured window */
	uint64_t sent_bytes;    /* their request bytes */
	uint64_t completed;     /* of those, answered */
	uint64_t failed;        /* of those, failed (error, bad length) */
	uint64_t unfinished;    /* any RPC still open at the end */
	uint64_t arrivals;      /* open loop: arrivals in the window */
	uint64_t skipped;       /* arrivals dropped: max outstanding */
	uint64_t late;          /* arrivals issued > 1 ms after their time */
	uint64_t conn_sent[MAX_POOL_CONNS]; /* TCP pool: RPCs issued on
					     * connection i of a thread */
	uint64_t warm;          /* RPCs completed in the warm-up */
	uint64_t by_errno[MAX_ERRNO]; /* measured failures by errno (the
				       * last slot: any errno past it) */
	int first_errno;
	char first_error[160];
};

/* stats_note_error - count a failed measured RPC (also by err); keep the
 * first reason. */
void stats_note_error(struct stats *st, int measured, int err,
		      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* stats_new - zeroed stats with empty histograms, or NULL. */
struct stats *stats_new(void);

/* stats_merge - add src into dst. */
void stats_merge(struct stats *dst, const struct stats *src);

/* stats_late_fraction - the share of st's arrivals that were late (0
 * without arrivals: closed loop). */
double stats_late_fraction(const struct stats *st);

/* stats_valid - whether st's generator kept to its schedule: at most
 * LATE_LIMIT of its arrivals late. */
bool stats_valid(const struct stats *st);

/* merged_all - the histograms and bytes of buckets 0..nb-1 of st merged
 * into out. */
void merged_all(const struct stats *st, int nb, struct bucket_stats *out);

struct phase {
	enum proto proto;
	const struct options *o;
	const struct workload *wl;
	const struct baseline *base;
	union sockaddr_in_union homa_dest;
	union sockaddr_in_union tcp_dest;
	uint64_t epoch;         /* CLOCK_MONOTONIC ns: time 0 of the phase */
	uint64_t measure_from;  /* ns after epoch: RPCs issued from here ... */
	uint64_t end;           /* ... until here are measured; none after */
	uint64_t drain_end;     /* ns after epoch: give up waiting */
	double gap_ns;          /* open loop: mean gap per worker */
};

/* Per worker thread. */
struct worker {
	const struct phase *ph;
	int index;
	struct stats *st;
	pthread_t thread;
	struct workload_rng rng;
	int outstanding;        /* closed loop: RPCs this worker keeps out */
	uint8_t *req;           /* request bytes (request_buffer) */
	uint64_t stall_count;   /* arrivals seen by phase_stall */
	bool generator_rt;      /* open loop: generator at SCHED_FIFO */
	/* Homa: engine counters of the worker's socket, read before close */
	struct tool_counters ctr;
	char setup_error[160];  /* set when the worker could not start */
};

/* worker_record - an RPC issued at t0 (ns after epoch) of size bytes in
 * bucket finished at t1 with resp response bytes (expected: want).
 * Counts it when it was issued inside the measured window. */
void worker_record(struct worker *w, uint64_t t0, uint64_t t1, uint32_t size,
		   int bucket, uint64_t resp, uint32_t want);

/* worker_count_sent - an RPC of size bytes was issued at t0. */
void worker_count_sent(struct worker *w, uint64_t t0, uint32_t size);

/* rel_now - ns since the phase epoch. */
uint64_t rel_now(const struct phase *ph);

/* phase_wait_ns - how long a worker of ph may sleep at now: until the
 * next arrival (open loop, next, while before ph->end), else until
 * something arrives; at most 100 ms, never past ph->drain_end. */
uint64_t phase_wait_ns(const struct phase *ph, uint64_t now, double next);

/* phase_generator_priority - put the calling generator thread of w at
 * real-time priority (SCHED_FIFO 1) when the process may (root, or
 * RLIMIT_RTPRIO), so that busy threads of either protocol cannot delay
 * its arrivals; it only sleeps and hands requests over.  Sets
 * w->generator_rt to whether it did. */
void phase_generator_priority(struct worker *w);

/* phase_stall - the --test-stall hook of an open-loop generator of w,
 * called before it takes an arrival at now: every STALL_EVERY-th arrival of
 * the protocol named by --test-stall first sleeps STALL_NS (so that it is
 * late).  Returns now, or the time after the sleep. */
uint64_t phase_stall(struct worker *w, uint64_t now);

/* phase_arrival_admit - an open-loop arrival of w due at due (ns since the
 * epoch), handled at now with inflight RPCs of w out: counts it late when
 * more than 1 ms behind, and returns whether it may be issued (below
 * --max-outstanding; otherwise it is counted skipped).  Only arrivals in
 * the measured part of the phase are counted. */
bool phase_arrival_admit(struct worker *w, uint64_t now, double due,
			 uint64_t inflight);

/* What one protocol's load phase produced. */
struct result {
	int ran;
	struct stats *st;       /* merged over workers */
	double window_s;        /* length of the measured window */
	double cpu_s;           /* process CPU time during the window */
	struct tool_counters ctr;   /* Homa: the client sockets, summed */
	int generators_rt;      /* workers whose generator ran at SCHED_FIFO */
	char setup_error[200];  /* a worker could not start */
};

/*
 * run_phase - one load phase of protocol p: o->threads workers for
 * warm-up + duration, then up to drain seconds for the RPCs in flight.
 * Fills res (res->st owned by the caller afterwards).  Returns 0, or -1
 * when nothing could run (printed).
 */
int run_phase(const struct options *o, enum proto p,
	      const struct workload *wl, const struct baseline *b,
	      const union sockaddr_in_union *homa_dest,
	      const union sockaddr_in_union *tcp_dest, struct result *res);

/* ---------------------------------------------------------------- */
/* From a generator to its sending thread (perf_handoff.c)            */

/* A request an open-loop generator issued. */
struct perf_req {
	uint64_t t0;            /* ns after the epoch */
	uint32_t size;
	int bucket;
	uint8_t hdr[TOOL_FRAME_HDR];    /* TCP: its frame header */
};

/*
 * A ring of requests from one producer (the generator) to a consumer that
 * sends them and may keep them until answered: entries [released, tail)
 * are in use.  The generator fills handoff_slot() and publishes it with
 * handoff_push(), never waiting on a socket; the consumer sleeps in
 * handoff_wait() until there is more.
 */
struct handoff {
	struct perf_req *ring;
	uint64_t cap;
	_Atomic uint64_t tail;          /* pushed */
	_Atomic uint64_t released;      /* freed by the consumer */
	pthread_mutex_t lock;           /* guards waiting, closing, the wait */
	pthread_cond_t cond;
	int waiting;
	int closing;
};

/* handoff_init - q empty with room for cap requests.  Returns 0, or -1
 * when out of memory (nothing to destroy). */
int handoff_init(struct handoff *q, uint64_t cap);

/* handoff_destroy - free what handoff_init allocated (no user left). */
void handoff_destroy(struct handoff *q);

/* handoff_slot - producer: the entry to fill next, or NULL when all cap
 * are in use. */
struct perf_req *handoff_slot(struct handoff *q);

/* handoff_push - producer: publish the entry handoff_slot gave and wake
 * the consumer if it waits. */
void handoff_push(struct handoff *q);

/* handoff_wait - consumer: wait until requests past index from were
 * pushed or q is closed; returns the index after the last pushed (from
 * itself: closed, nothing more). */
uint64_t handoff_wait(struct handoff *q, uint64_t from);

/* handoff_at - the request of index i (pushed, not released). */
struct perf_req *handoff_at(struct handoff *q, uint64_t i);

/* handoff_release - consumer: the requests before index upto are done
 * with, their entries free again (a lower upto than before changes
 * nothing, so two consumer threads may each say what they are done
 * with). */
void handoff_release(struct handoff *q, uint64_t upto);

/* handoff_pending - requests pushed and not released. */
uint64_t handoff_pending(struct handoff *q);

/* handoff_close - wake the consumer for good: handoff_wait returns at
 * once from now on. */
void handoff_close(struct handoff *q);

/* ---------------------------------------------------------------- */
/* Homa (perf_homa.c)                                                 */

/*
 * homa_server_start - bind a Homa socket of family to port and start
 * nthreads threads serving it, each request answered as request_answer
 * says (waiting in epoll_wait when epoll is set).  Returns 0, or -1 after
 * printing why (nothing left open).
 */
int homa_server_start(struct tool_homa_server *s, int family, int port,
		      int nthreads, int epoll);

/*
 * homa_closed_main - worker thread, closed loop: keep w->outstanding
 * RPCs in flight on one socket until ph->end, then collect the rest until
 * ph->drain_end (RPCs that fail end too, so every wait is bounded by the
 * engine's RPC timeout).
 */
void *homa_closed_main(void *arg);

/*
 * homa_open_main - worker thread, open loop: the generator.  At Poisson
 * arrival times (mean gap ph->gap_ns) until ph->end it hands each request
 * to a sending thread (which waits in homa_send as long as it must) while
 * a receiving thread takes the responses; then it waits for the RPCs in
 * flight until ph->drain_end, shuts the socket down and joins both.
 */
void *homa_open_main(void *arg);

/*
 * homa_open_poll_main - worker thread, open loop (--client-poll), in one
 * thread as an event-driven client runs: issue what is due (a send that
 * finds the socket's send memory full is skipped, not waited for), wait in
 * ppoll on the socket until a response is ready or the next arrival is
 * due, take every ready response without blocking; after ph->end, the
 * same until nothing is in flight or ph->drain_end.
 */
void *homa_open_poll_main(void *arg);

/* ---------------------------------------------------------------- */
/* TCP (perf_tcp_server.c, perf_tcp_load.c)                           */

struct tcp_server;

struct tcp_conn_thread {
	struct tcp_server *s;
	int fd;
	pthread_t thread;
};

struct tcp_server {
	int lfd;
	pthread_t acceptor;
	pthread_mutex_t lock;           /* guards conns, nconns, stopping */
	struct tcp_conn_thread *conns[MAX_TCP_CONNS];
	int nconns;
	int stopping;
	atomic_ulong served;
	atomic_ulong errors;
};

/* tcp_server_start - listen on port (family) and start accepting.
 * Returns 0, or -1 after printing why. */
int tcp_server_start(struct tcp_server *s, int family, int port);

/* tcp_server_stop - stop accepting, end every connection, join every
 * thread, close everything. */
void tcp_server_stop(struct tcp_server *s);

/*
 * tcp_closed_main - worker thread, closed loop: o->tcp_conns connections
 * served by this one thread in ppoll; w->outstanding RPCs kept in flight
 * until ph->end, responses collected until ph->drain_end.
 */
void *tcp_closed_main(void *arg);

/*
 * tcp_pool_main - worker thread, open loop: the generator of a pool of
 * o->tcp_conns connections, each with a writing and a reading thread.  At
 * each Poisson arrival until ph->end it queues the request on the live
 * connection with the fewest requests outstanding (ties in turn), never
 * writing to a socket itself; the reader checks every response's length
 * and bytes.  Then it waits for the RPCs in flight until ph->drain_end and
 * closes the pool (requests of a broken connection count as failed, the
 * others still open as unfinished).
 */
void *tcp_pool_main(void *arg);

/* ---------------------------------------------------------------- */
/* Reports (perf_report.c, perf_json.c)                               */

/* Everything a client (or loopback) run reports. */
struct report {
	const struct options *o;
	const struct workload *wl;
	const struct baseline *b;
	union sockaddr_in_union homa_dest;
	union sockaddr_in_union tcp_dest;
	struct result res[NPROTO];
	int have_server;                /* loopback: server side below */
	struct tool_counters server_ctr;
	unsigned long served[NPROTO];
	unsigned long server_errors[NPROTO];
};

/* report_valid - whether every protocol of r that ran kept to its
 * schedule (stats_valid); when not, why ("homa 9.4% late, tcp 2.0%
 * late") goes to why[cap]. */
bool report_valid(const struct report *r, char *why, size_t cap);

/* print_text - the whole client report for people. */
void print_text(FILE *f, const struct report *r);

/* print_counters - c grouped: packets by type, drops by reason, the rest
 * (resends, timeouts, RPCs, ...). */
void print_counters(FILE *f, const char *who, const struct tool_counters *c);

/* errno_label - the name of errno slot i of stats.by_errno ("ETIMEDOUT";
 * "E123" when it has none; "other" for the last slot) into buf[cap]. */
const char *errno_label(int i, char *buf, size_t cap);

/* print_json - the whole client report as one JSON object on one line. */
void print_json(FILE *f, const struct report *r);

/* json_settings - the engine settings in effect that shape results. */
void json_settings(FILE *f);

#endif /* PERF_H */
