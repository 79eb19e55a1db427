/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * demo.h - what the files of homa-demo share (tools/homa_demo.c is the
 * program's main file and says what it does):
 *   demo_options.c   the command line
 *   demo_homa.c      Homa: the server, the client's phases
 *   demo_tcp.c       TCP: connections with their server threads, phases
 *   demo_udp.c       UDP ping-pong: the echo server, the client's phases
 *   demo_report.c    the table, every round, the problems; JSON
 */
#ifndef DEMO_H
#define DEMO_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "homa.h"
#include "homa_histogram.h"
#include "tool_counters.h"
#include "tool_frame.h"
#include "tool_homa_server.h"
#include "tool_hsock.h"

#define PROG            "homa-demo"
#define BIG_SIZE        1000000L          /* bytes of a large message */
#define BIG_RESP        100L              /* response to a large request */
#define ECHO            (-1L)             /* resp_len: echo the request */
#define MAX_OUT         4                 /* most RPCs outstanding */
#define MAX_ROUNDS      100
#define REGION_BYTES    ((size_t)HOMA_BPAGE_SIZE * 1024)   /* 64 MiB */
#define UDP_MAX         65507L            /* largest UDP payload */
#define TCP_CAP         ((size_t)(TOOL_FRAME_HDR + BIG_SIZE))
#define WATCHDOG_S      60                /* no stage may take longer */
#define PHASE_BUDGET_NS (20ull * 1000000000ull) /* then stop early */
#define UDP_WAIT_NS     1000000000ull     /* a datagram lost after this */
#define NS_PER_US       1000.0

/* ---------------------------------------------------------------- */
/* Systems, tests and results                                        */

enum sys { SYS_HOMA, SYS_TCP, SYS_UDP, SYS_UDP_SPIN, NSYS };

/* sys_name, sys_json - a system's name in the table and in JSON. */
extern const char *const sys_name[NSYS];
extern const char *const sys_json[NSYS];

enum test { T_RTT, T_BIG1, T_BIG4, T_ECHO, NTESTS };

struct test_def {
	const char *json;       /* key in --json output */
	const char *label;      /* row label (RTT rows add the percentile) */
	int is_rtt;             /* 1: latency percentiles; 0: goodput */
	long req_len;           /* 0: the --size option */
	long resp_len;          /* 0: the --size option; ECHO: same as req */
	int outstanding;
	unsigned int systems;   /* bit per enum sys */
};

#define ALL_SYS ((1u << NSYS) - 1)
#define HOMA_TCP ((1u << SYS_HOMA) | (1u << SYS_TCP))

/* tests - every test, by enum test. */
extern const struct test_def tests[NTESTS];

/* One measurement: one test, one system, one round. */
struct cell {
	int ran;                /* measured at all */
	int ok;                 /* completed without error */
	double v[3];            /* p50, p99, p999 (us), or v[0] Gbit/s */
	long done;              /* RPCs measured */
	long lost;              /* UDP datagrams given up */
	int truncated;          /* stopped early by the time budget */
	char why[160];          /* the failure, when !ok */
};

struct options {
	int rounds;
	long rpcs;
	long big_rpcs;
	long size;
	int port;
	int json;
	int quick;
	int stats;
	int verbose;
	int rtt_only;           /* skip the goodput tests */
};

/* What one phase of RPCs does. */
struct run_spec {
	long req_len;
	long resp_len;          /* ECHO: same as req_len */
	int outstanding;
	long rpcs;
	int verify;             /* compare every response's bytes */
	int blocking;           /* TCP: one blocking connection */
	struct homa_histogram *hist;    /* RTTs go here (NULL: none) */
};

/* What one phase achieved. */
struct run_result {
	long done;
	long lost;
	uint64_t elapsed_ns;
	int truncated;
	char why[160];          /* set on failure */
};

/* ---------------------------------------------------------------- */
/* The demo: all the sockets and every result                        */

/* The UDP echo server (demo_udp.c). */
struct udp_server {
	int fd;
	pthread_t thread;
	atomic_int stop;
	uint8_t buf[UDP_MAX];
};

struct demo {
	struct options opt;
	struct tool_hsock hc;           /* Homa client, main thread */
	struct tool_homa_server hs;
	atomic_long homa_resp_len;      /* what hs answers: bytes, or ECHO */
	union sockaddr_in_union homa_dest;
	int tcp_lfd;
	int udp_fd;                     /* client, connected */
	struct udp_server *us;
	uint8_t *pattern;               /* BIG_SIZE bytes: every payload */
	uint8_t *sbuf, *rbuf;           /* UDP client buffers */
	uint8_t *tcp_rbuf[MAX_OUT];     /* TCP client buffers */
	struct homa_histogram *hist;
	struct cell cells[NTESTS][NSYS][MAX_ROUNDS];
};

/* homa_port, tcp_port, udp_port - the ports of the three servers. */
static inline int homa_port(const struct demo *d) { return d->opt.port; }
static inline int tcp_port(const struct demo *d) { return d->opt.port + 1; }
static inline int udp_port(const struct demo *d) { return d->opt.port + 2; }

/* ---------------------------------------------------------------- */
/* Measurements (homa_demo.c)                                        */

/* fail - record a formatted failure in res->why; returns -1. */
int fail(struct run_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* resp_bytes - the response length a spec implies. */
long resp_bytes(const struct run_spec *s);

/* warm_spec - the warm-up before a measured phase like s: a tenth of its
 * RPCs (1..1000), every response's bytes checked, nothing recorded. */
struct run_spec warm_spec(const struct run_spec *s);

/* sys_applies - whether system y takes part in test t (UDP only for RTT
 * with a size that fits a datagram; only RTT with --rtt-only). */
int sys_applies(const struct demo *d, enum test t, enum sys y);

/* test_label - the row label of test t, value index vi. */
void test_label(const struct demo *d, enum test t, int vi, char *buf,
		size_t len);

/* ---------------------------------------------------------------- */
/* Options (demo_options.c)                                          */

/* parse_options - fill o from argv; exits 0 for --help, 2 on errors. */
void parse_options(int argc, char **argv, struct options *o);

/* ---------------------------------------------------------------- */
/* Homa (demo_homa.c)                                                */

/*
 * homa_server_begin - the Homa server thread on 127.0.0.1:homa_port(d),
 * answering as d->homa_resp_len says with d->pattern.  Returns 0, or -1
 * after printing why (nothing left open).
 */
int homa_server_begin(struct demo *d);

/* homa_server_end - stop the server thread (2 s at most) and close its
 * socket.  Returns 0, or -1 when the thread would not stop (printed; the
 * socket is then left open). */
int homa_server_end(struct demo *d);

/* homa_client_open - the client's Homa socket d->hc (unbound, with its
 * region).  Returns 0, or -1 after printing why. */
int homa_client_open(struct demo *d);

/* homa_client_close - close d->hc (a failure is printed). */
void homa_client_close(struct demo *d);

/* run_homa - warm up, then measure Homa for spec s.  0 or -1. */
int run_homa(struct demo *d, const struct run_spec *s,
	     struct run_result *res);

/* ---------------------------------------------------------------- */
/* TCP (demo_tcp.c)                                                  */

/* tcp_listener - a listening socket on 127.0.0.1:port, or -1 (printed). */
int tcp_listener(int port);

/* run_tcp - connect, warm up, measure and close TCP for spec s (the
 * connections are persistent across warm-up and measurement).  0 or -1. */
int run_tcp(struct demo *d, const struct run_spec *s, struct run_result *res);

/* ---------------------------------------------------------------- */
/* UDP (demo_udp.c)                                                  */

/* udp_server_start - bind port and start the echo thread; 0 or -1. */
int udp_server_start(struct udp_server *u, int port);

/* udp_server_stop - stop and join the thread, close the socket. */
void udp_server_stop(struct udp_server *u);

/* udp_client - a UDP socket connected to the UDP server, 1 s receive
 * timeout; -1 (printed) on failure. */
int udp_client(int port);

/* run_udp - warm up, then measure UDP ping-pong (spinning or blocking
 * client) for spec s.  0 or -1. */
int run_udp(struct demo *d, int spin, const struct run_spec *s,
	    struct run_result *res);

/* ---------------------------------------------------------------- */
/* Reports (demo_report.c)                                           */

/* read_counters - the counters of Homa socket fd into k (none, printed,
 * on failure). */
void read_counters(int fd, struct tool_counters *k);

/* print_text - the whole report for people. */
void print_text(const struct demo *d, const struct tool_counters *kc,
		const struct tool_counters *ks);

/* print_json - the whole report as one JSON object on one line. */
void print_json(const struct demo *d, const struct tool_counters *kc,
		const struct tool_counters *ks);

/* all_ok - every measurement that ran completed. */
int all_ok(const struct demo *d);

#endif /* DEMO_H */
