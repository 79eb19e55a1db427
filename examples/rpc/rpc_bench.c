/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_bench - homa-rpc against the raw library, in one process on
 * loopback ('make rpc-demo' runs it).  Three servers answer the same
 * work: a raw Homa server (homa_recvmsg/homa_reply, one thread), and the
 * echo.Echo service of echo.proto on homa-rpc with the receiving thread
 * running the calls (workers -1) and with 4 workers.  For each, in rounds
 * that alternate between them:
 *   - 100 B round trips, one at a time: p50, p99, p999 (microseconds);
 *   - 100 B calls with 32 in flight: calls per second;
 *   - 999,000-byte requests with small responses, one at a time: goodput
 *     of the requests (Gbit/s).
 * With --grpc PATH, each round also runs PATH (grpc_bench: gRPC C++ over
 * TCP, the same service and measurements) as a fourth system.
 * Then, once per round: how long a call with a 5 ms deadline to a server
 * that never answers takes to end DEADLINE_EXCEEDED, and a call to a port
 * nobody binds to end UNAVAILABLE.
 * The medians over the rounds are printed as a table, with homa-rpc's
 * ratios to the raw library (and to gRPC).  The 100 B and 999,000 B are
 * the application's bytes: homa-rpc's messages carry its header and
 * protobuf framing too.
 *
 *   rpc_bench [--rounds N] [--seconds S] [--port P] [--busy N]
 *             [--grpc PATH]
 *
 * --busy N runs N CPU-bound processes beside the benchmark.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "echo.pb-c.h"
#include "example_util.h"

#define SMALL 100
#define LARGE 999000
#define IN_FLIGHT 32
#define MAX_SAMPLES 4000000
#define SYSTEMS 4          /* the last, gRPC, only with --grpc */

static const char *const system_names[SYSTEMS] = {
	"raw libhoma", "homa-rpc (inline)", "homa-rpc (4 workers)",
	"gRPC C++ (TCP)",
};

/* One round's numbers of one system. */
struct numbers {
	double p50, p99, p999;   /* us */
	double rate;             /* calls/s */
	double gbps;             /* request goodput */
	double failed;           /* calls that failed (a busy host's
				  * timeouts), in all three tests */
};

/* now_ns - CLOCK_MONOTONIC in nanoseconds. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* die - print @what with errno's text and exit 1. */
static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* ------------------------------------------------------------------ */
/* The raw server and client                                           */
/* ------------------------------------------------------------------ */

/* A Homa socket with a buffer region. */
struct sock {
	int fd;
	uint8_t *region;
};

/* open_sock - a socket with a region of @bytes, bound to @addr unless
 * NULL. */
static struct sock open_sock(const union sockaddr_in_union *addr,
			     size_t bytes)
{
	struct homa_set_buf_args buf = { .length = bytes };
	struct sock s;

	s.fd = homa_socket(AF_INET, SOCK_DGRAM, IPPROTO_HOMA);
	if (s.fd < 0)
		die("homa_socket");
	buf.start = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf.start == MAP_FAILED)
		die("mmap");
	if (homa_setsockopt(s.fd, IPPROTO_HOMA, SO_HOMA_SET_BUF, &buf,
			    sizeof(buf)) < 0)
		die("SO_HOMA_SET_BUF");
	if (addr && homa_bind(s.fd, &addr->sa, sizeof(addr->in4)) < 0)
		die("homa_bind");
	s.region = buf.start;
	return s;
}

/* raw_recv - one homa_recvmsg on @fd with @args (its bpages handed back),
 * for RPC @id (0: any) of kind @flags.  Returns its result. */
static ssize_t raw_recv(int fd, struct homa_recvmsg_args *args, uint64_t id,
			int flags)
{
	struct msghdr msg = { .msg_control = args,
			      .msg_controllen = sizeof(*args) };

	args->id = id;
	args->flags = flags;
	return homa_recvmsg(fd, &msg, 0);
}

/* raw_server_main - answer each request: an echo up to SMALL bytes, else
 * 8 bytes.  Ends when the socket is shut down. */
static void *raw_server_main(void *arg)
{
	struct sock *s = arg;
	struct homa_recvmsg_args args = { 0 };

	for (;;) {
		ssize_t len = raw_recv(s->fd, &args, 0, HOMA_RECVMSG_REQUEST);

		if (len < 0) {
			if (errno == ESHUTDOWN || errno == EBADF)
				break;
			continue;
		}
		homa_reply(s->fd, s->region + args.bpage_offsets[0],
			   len <= SMALL ? (size_t)len : 8, &args.peer_addr,
			   args.id);
	}
	return NULL;
}

/* raw_call - one RPC of @len bytes from @buf on @c; waits for it.
 * Returns whether it succeeded. */
static bool raw_call(struct sock *c, const union sockaddr_in_union *dest,
		     const uint8_t *buf, size_t len,
		     struct homa_recvmsg_args *args)
{
	uint64_t id;

	if (homa_send(c->fd, buf, len, dest, &id, 0) < 0)
		die("homa_send");
	return raw_recv(c->fd, args, id, HOMA_RECVMSG_RESPONSE) >= 0;
}

/* ------------------------------------------------------------------ */
/* The homa-rpc service                                                */
/* ------------------------------------------------------------------ */

/* bench_say - echo text and payload. */
static void bench_say(Echo__Echo_Service *service,
		      const Echo__EchoRequest *in,
		      Echo__EchoReply_Closure closure, void *call)
{
	Echo__EchoReply reply = ECHO__ECHO_REPLY__INIT;

	(void)service;
	reply.text = in->text;
	reply.payload = in->payload;
	closure(&reply, call);
}

/* bench_sink - the text back, the payload dropped. */
static void bench_sink(Echo__Echo_Service *service,
		       const Echo__EchoRequest *in,
		       Echo__EchoReply_Closure closure, void *call)
{
	Echo__EchoReply reply = ECHO__ECHO_REPLY__INIT;

	(void)service;
	reply.text = in->text;
	closure(&reply, call);
}

static Echo__Echo_Service bench_service = ECHO__ECHO__INIT(bench_);

/* rpc_server - a homa-rpc server of the echo service at @addr with
 * @workers. */
static struct homa_rpc_server *rpc_server(const union sockaddr_in_union *addr,
					  int workers)
{
	struct homa_rpc_server_config cfg = { .workers = workers };
	struct homa_rpc_server *s = homa_rpc_server_new(addr, &cfg);

	if (!s || homa_rpc_server_add(s, &bench_service.base) < 0 ||
	    homa_rpc_server_start(s) < 0)
		die("homa_rpc_server");
	return s;
}

/* rpc_call - one call of @method with @payload on @c.  Returns whether
 * it ended OK. */
static bool rpc_call(struct homa_rpc_client *c, unsigned method,
		     const uint8_t *payload, size_t len)
{
	Echo__EchoRequest req = ECHO__ECHO_REQUEST__INIT;
	struct homa_rpc_result r;
	int code;

	req.payload.data = (uint8_t *)payload;
	req.payload.len = len;
	code = homa_rpc_call(c, method, &req.base, NULL, &r);
	homa_rpc_result_clear(&r);
	return code == HOMA_RPC_OK;
}

/* ------------------------------------------------------------------ */
/* The measurements                                                    */
/* ------------------------------------------------------------------ */

/* A system under test: the raw client, or a homa-rpc client. */
struct target {
	struct sock *raw;                 /* raw client, or NULL */
	union sockaddr_in_union dest;     /* raw server */
	struct homa_rpc_client *rpc;      /* homa-rpc client, or NULL */
};

/* one_call - one call of @len bytes (@large: the Sink method / a small
 * response) on @t.  Returns whether it succeeded. */
static bool one_call(struct target *t, const uint8_t *buf, size_t len,
		     bool large, struct homa_recvmsg_args *args)
{
	if (t->raw)
		return raw_call(t->raw, &t->dest, buf, len, args);
	return rpc_call(t->rpc, large ? 1 : 0, buf, len);
}

/* cmp_u64 - qsort order of uint64_t. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* latency - SMALL-byte round trips for @secs: fills p50/p99/p999. */
static void latency(struct target *t, double secs, uint64_t *samples,
		    struct numbers *n)
{
	static uint8_t buf[SMALL];
	struct homa_recvmsg_args args = { 0 };
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	size_t k = 0;

	while (k < MAX_SAMPLES && now_ns() < end) {
		uint64_t t0 = now_ns();

		if (one_call(t, buf, SMALL, false, &args))
			samples[k++] = now_ns() - t0;
		else
			n->failed++;
	}
	if (k == 0)
		samples[k++] = 0;
	qsort(samples, k, sizeof(samples[0]), cmp_u64);
	n->p50 = samples[k / 2] / 1e3;
	n->p99 = samples[k * 99 / 100] / 1e3;
	n->p999 = samples[k * 999 / 1000] / 1e3;
}

/* raw_rate - calls/s of SMALL bytes with IN_FLIGHT outstanding, raw
 * (failed calls counted in *@failed, not in the rate). */
static double raw_rate(struct target *t, double secs, double *failed)
{
	static uint8_t buf[SMALL];
	struct homa_recvmsg_args args = { 0 };
	uint64_t end, done = 0, t0 = now_ns(), id;

	end = t0 + (uint64_t)(secs * 1e9);
	for (int i = 0; i < IN_FLIGHT; i++)
		if (homa_send(t->raw->fd, buf, SMALL, &t->dest, &id, 0) < 0)
			die("homa_send");
	while (now_ns() < end) {
		if (raw_recv(t->raw->fd, &args, 0, HOMA_RECVMSG_RESPONSE) < 0)
			(*failed)++;
		else
			done++;
		if (homa_send(t->raw->fd, buf, SMALL, &t->dest, &id, 0) < 0)
			die("homa_send");
	}
	for (int i = 0; i < IN_FLIGHT; i++)
		if (raw_recv(t->raw->fd, &args, 0, HOMA_RECVMSG_RESPONSE) < 0)
			(*failed)++;
	return done / ((now_ns() - t0) / 1e9);
}

/* rpc_start - start one SMALL Say call on @c. */
static void rpc_start(struct homa_rpc_client *c)
{
	static uint8_t buf[SMALL];
	Echo__EchoRequest req = ECHO__ECHO_REQUEST__INIT;
	uint64_t id;

	req.payload.data = buf;
	req.payload.len = SMALL;
	if (homa_rpc_start(c, 0, &req.base, NULL, &id) != HOMA_RPC_OK)
		die("homa_rpc_start");
}

/* rpc_take - wait for and take one completed call of @c.  Returns
 * whether it ended OK. */
static bool rpc_take(struct homa_rpc_client *c)
{
	struct homa_rpc_result r;
	struct pollfd p = { .fd = homa_rpc_client_fd(c), .events = POLLIN };
	bool ok;

	while (homa_rpc_next(c, &r) != 1)
		poll(&p, 1, 1000);
	ok = r.code == HOMA_RPC_OK;
	homa_rpc_result_clear(&r);
	return ok;
}

/* rpc_rate - calls/s of SMALL bytes with IN_FLIGHT outstanding, homa-rpc
 * (asynchronous calls completed through the descriptor; failed ones
 * counted in *@failed). */
static double rpc_rate(struct target *t, double secs, double *failed)
{
	uint64_t done = 0, t0 = now_ns();
	uint64_t end = t0 + (uint64_t)(secs * 1e9);

	for (int i = 0; i < IN_FLIGHT; i++)
		rpc_start(t->rpc);
	while (now_ns() < end) {
		if (rpc_take(t->rpc))
			done++;
		else
			(*failed)++;
		rpc_start(t->rpc);
	}
	for (int i = 0; i < IN_FLIGHT; i++)
		if (!rpc_take(t->rpc))
			(*failed)++;
	return done / ((now_ns() - t0) / 1e9);
}

/* goodput - LARGE-byte requests, one at a time, for @secs: Gbit/s of
 * the requests that succeeded (failed ones counted in *@failed). */
static double goodput(struct target *t, double secs, const uint8_t *large,
		      double *failed)
{
	struct homa_recvmsg_args args = { 0 };
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(secs * 1e9), n = 0;

	while (now_ns() < end) {
		if (one_call(t, large, LARGE, true, &args))
			n++;
		else
			(*failed)++;
	}
	return n * (double)LARGE * 8 / ((now_ns() - t0) / 1e9) / 1e9;
}

/* measure - one round of every measurement on @t. */
static void measure(struct target *t, double secs, uint64_t *samples,
		    const uint8_t *large, struct numbers *n)
{
	n->failed = 0;
	latency(t, secs, samples, n);
	n->rate = t->raw ? raw_rate(t, secs, &n->failed)
			 : rpc_rate(t, secs, &n->failed);
	n->gbps = goodput(t, secs, large, &n->failed);
}

static int cmp_double(const void *a, const void *b);

/* timed_call - one Say call on a new client of @dest with @timeout_us
 * (0: none); returns its code, and its time in ms in *@ms. */
static int timed_call(const union sockaddr_in_union *dest, int64_t timeout_us,
		      double *ms)
{
	struct homa_rpc_client *c = homa_rpc_client_new(
		&echo__echo__descriptor, dest, NULL);
	struct homa_rpc_opts opts = { .timeout_us = timeout_us };
	Echo__EchoRequest req = ECHO__ECHO_REQUEST__INIT;
	struct homa_rpc_result r;
	uint64_t t0;
	int code;

	if (!c)
		die("homa_rpc_client_new");
	t0 = now_ns();
	code = homa_rpc_call(c, 0, &req.base, &opts, &r);
	*ms = (now_ns() - t0) / 1e6;
	homa_rpc_result_clear(&r);
	homa_rpc_client_free(c);
	return code;
}

/*
 * failure_times - how long homa-rpc takes to report a 5 ms deadline (a
 * bound socket at @silent takes the request and never answers) and a
 * server that is gone (nothing bound at @dead): prints the median of
 * @rounds tries of each, with the codes seen.
 */
static void failure_times(const union sockaddr_in_union *silent,
			  const union sockaddr_in_union *dead, int rounds)
{
	double dl[64], gone[64];
	int dl_ok = 0, gone_ok = 0;

	for (int i = 0; i < rounds; i++) {
		dl_ok += timed_call(silent, 5000, &dl[i]) ==
			 HOMA_RPC_DEADLINE_EXCEEDED;
		gone_ok += timed_call(dead, 0, &gone[i]) ==
			   HOMA_RPC_UNAVAILABLE;
	}
	qsort(dl, (size_t)rounds, sizeof(dl[0]), cmp_double);
	qsort(gone, (size_t)rounds, sizeof(gone[0]), cmp_double);
	printf("\nhoma-rpc, 5 ms deadline, server silent: DEADLINE_EXCEEDED "
	       "in %d of %d calls, after %.2f ms (median)\n", dl_ok, rounds,
	       dl[rounds / 2]);
	printf("homa-rpc, no server bound: UNAVAILABLE in %d of %d calls, "
	       "after %.2f ms (median)\n", gone_ok, rounds,
	       gone[rounds / 2]);
}

/* grpc_round - one round of grpc_bench (@path) for @secs on @port. */
static void grpc_round(const char *path, double secs, int port,
		       struct numbers *n)
{
	char cmd[4096];
	FILE *f;
	int got;

	snprintf(cmd, sizeof(cmd), "%s --seconds %g --port %d", path, secs,
		 port);
	f = popen(cmd, "r");
	if (!f)
		die("popen");
	got = fscanf(f, "%lf %lf %lf %lf %lf", &n->p50, &n->p99, &n->p999,
		     &n->rate, &n->gbps);
	if (pclose(f) != 0 || got != 5) {
		fprintf(stderr, "rpc_bench: %s failed\n", cmd);
		exit(1);
	}
}

/* ------------------------------------------------------------------ */
/* Report                                                              */
/* ------------------------------------------------------------------ */

/* cmp_double - qsort order of doubles. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* median - the median of field @off of @rounds numbers. */
static double median(const struct numbers *n, int rounds, size_t off)
{
	double v[64];

	for (int i = 0; i < rounds; i++)
		v[i] = *(const double *)((const char *)&n[i] + off);
	qsort(v, (size_t)rounds, sizeof(v[0]), cmp_double);
	return v[rounds / 2];
}

/* The rows of the table. */
static const struct {
	const char *name;
	size_t off;
} rows[] = {
	{ "100 B RTT p50 (us)", offsetof(struct numbers, p50) },
	{ "100 B RTT p99 (us)", offsetof(struct numbers, p99) },
	{ "100 B RTT p999 (us)", offsetof(struct numbers, p999) },
	{ "100 B calls/s, 32 in flight", offsetof(struct numbers, rate) },
	{ "999,000 B request goodput (Gbit/s)",
	  offsetof(struct numbers, gbps) },
	{ "failed calls (median of rounds)", offsetof(struct numbers, failed) },
};

/* report - the table of medians of the @nsys systems, with the ratios of
 * homa-rpc (inline, 4 workers) to the raw library and to gRPC. */
static void report(struct numbers n[SYSTEMS][64], int rounds, int nsys)
{
	printf("| test |");
	for (int i = 0; i < nsys; i++)
		printf(" %s |", system_names[i]);
	printf(" inline/raw | workers/raw |%s\n|---|",
	       nsys > 3 ? " inline/gRPC | workers/gRPC |" : "");
	for (int i = 0; i < nsys + (nsys > 3 ? 4 : 2); i++)
		printf("---|");
	printf("\n");
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		double m[SYSTEMS];

		printf("| %s |", rows[r].name);
		for (int i = 0; i < nsys; i++) {
			m[i] = median(n[i], rounds, rows[r].off);
			printf(" %.1f |", m[i]);
		}
		if (rows[r].off == offsetof(struct numbers, failed)) {
			printf("%s\n", nsys > 3 ? " | | | |" : " | |");
			continue;
		}
		printf(" %.2f | %.2f |", m[1] / m[0], m[2] / m[0]);
		if (nsys > 3)
			printf(" %.2f | %.2f |", m[1] / m[3], m[2] / m[3]);
		printf("\n");
	}
}

/* busy - start @n processes that spin; returns their pids in @pids. */
static void busy(int n, pid_t *pids)
{
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			volatile uint64_t x = 0;

			for (;;)
				x++;
		}
	}
}

/* The command line. */
struct options {
	int rounds, nbusy, port;
	double secs;
	const char *grpc;       /* grpc_bench, or NULL */
};

/* parse_options - @o from the command line; exits 2 with the usage on a
 * bad one. */
static void parse_options(int argc, char **argv, struct options *o)
{
	*o = (struct options){ .rounds = 3, .port = 23000, .secs = 1.0 };
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--rounds") == 0)
			o->rounds = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--seconds") == 0)
			o->secs = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--port") == 0)
			o->port = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--busy") == 0)
			o->nbusy = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--grpc") == 0)
			o->grpc = argv[i + 1];
		else
			o->rounds = 0;  /* unknown option: usage */
	}
	if (o->rounds < 1 || o->rounds > 63 || o->secs <= 0 ||
	    o->nbusy < 0 || o->nbusy > 16 || o->port < 1 ||
	    o->port > 32762 || argc % 2 == 0) {
		fprintf(stderr, "usage: %s [--rounds 1..63] [--seconds S] "
			"[--port 1..32762] [--busy 0..16] [--grpc PATH]\n",
			argv[0]);
		exit(2);
	}
}

/* What the benchmark runs: the servers, the clients, their addresses
 * (ports port..port+2; port+4 a silent socket, port+5 nothing). */
struct bench {
	union sockaddr_in_union a[3], a_silent, a_dead;
	struct sock raw_srv, raw_cli, silent;
	pthread_t raw_thread;
	struct homa_rpc_server *srv[2];
	struct target t[3];
};

/* port_addr - the loopback address of Homa port @port. */
static union sockaddr_in_union port_addr(int port)
{
	char s[16];

	snprintf(s, sizeof(s), "%d", port);
	return example_addr(s, 0);
}

/* bench_open - start the servers and make the clients. */
static void bench_open(struct bench *b, int port)
{
	for (int i = 0; i < 3; i++)
		b->a[i] = port_addr(port + i);
	b->a_silent = port_addr(port + 4);
	b->a_dead = port_addr(port + 5);
	b->silent = open_sock(&b->a_silent, 4u << 20);
	b->raw_srv = open_sock(&b->a[0], 64u << 20);
	b->raw_cli = open_sock(NULL, 64u << 20);
	if (pthread_create(&b->raw_thread, NULL, raw_server_main,
			   &b->raw_srv))
		die("pthread_create");
	b->srv[0] = rpc_server(&b->a[1], -1);
	b->srv[1] = rpc_server(&b->a[2], 4);
	b->t[0] = (struct target){ .raw = &b->raw_cli, .dest = b->a[0] };
	for (int i = 1; i < 3; i++) {
		b->t[i] = (struct target){ .rpc = homa_rpc_client_new(
			&echo__echo__descriptor, &b->a[i], NULL) };
		if (!b->t[i].rpc)
			die("homa_rpc_client_new");
	}
}

/* bench_close - stop the servers, free the clients. */
static void bench_close(struct bench *b)
{
	for (int i = 1; i < 3; i++)
		homa_rpc_client_free(b->t[i].rpc);
	homa_rpc_server_stop(b->srv[0], 1000);
	homa_rpc_server_stop(b->srv[1], 1000);
	homa_shutdown(b->raw_srv.fd, SHUT_RDWR);
	pthread_join(b->raw_thread, NULL);
	homa_close(b->raw_srv.fd);
	homa_close(b->raw_cli.fd);
	homa_close(b->silent.fd);
}

/* run_rounds - @o->rounds rounds of every system into @n, beside
 * @o->nbusy CPU-bound processes. */
static void run_rounds(struct bench *b, const struct options *o,
		       struct numbers n[SYSTEMS][64])
{
	uint64_t *samples = malloc(MAX_SAMPLES * sizeof(uint64_t));
	uint8_t *large = calloc(1, LARGE);
	pid_t pids[16];

	if (!samples || !large)
		die("malloc");
	busy(o->nbusy, pids);
	for (int r = 0; r < o->rounds; r++) {
		for (int i = 0; i < 3; i++)
			measure(&b->t[i], o->secs, samples, large, &n[i][r]);
		if (o->grpc)
			grpc_round(o->grpc, o->secs, o->port + 3, &n[3][r]);
	}
	for (int i = 0; i < o->nbusy; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	free(samples);
	free(large);
}

int main(int argc, char **argv)
{
	static struct numbers n[SYSTEMS][64];
	struct options o;
	struct bench b;

	parse_options(argc, argv, &o);
	bench_open(&b, o.port);
	printf("rpc_bench: %d rounds of %.1f s per test, %d CPU-bound "
	       "processes beside it\n\n", o.rounds, o.secs, o.nbusy);
	fflush(stdout);
	run_rounds(&b, &o, n);
	report(n, o.rounds, o.grpc ? SYSTEMS : 3);
	failure_times(&b.a_silent, &b.a_dead, o.rounds);
	bench_close(&b);
	return 0;
}
