/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa-perf - load generator and latency meter for Homa, with TCP measured
 * by the same workload in the same run.
 *
 *   homa-perf server   --port P [--tcp-port Q] [--threads T] [--duration S]
 *   homa-perf client   --server ADDR:P (--workload W | --size B) [load] ...
 *   homa-perf loopback (--workload W | --size B) [load] ...
 *
 * The client draws request sizes from a workload (W1..W5 of the Homa papers
 * or any CDF file, capped at 1,000,000 bytes) or uses one fixed size, and
 * issues RPCs either open loop (Poisson arrivals at --rate RPCs/s or
 * --load-gbps of request payload) or closed loop (--outstanding N).  TCP
 * (--proto tcp|both) carries the same RPCs over persistent connections with
 * TCP_NODELAY as frames of a 4-byte big-endian length and the payload;
 * requests are pipelined on a connection and answered in order.
 *
 * The first 4 bytes of every request (big-endian) tell the server what to
 * answer: a response of that many bytes, or 0xffffffff for an echo.
 * Requests shorter than 4 bytes are echoed.
 *
 * Slowdown = RTT / unloaded RTT of a message of that size.  Before the
 * load phases the client measures the unloaded RTT (median of up to
 * --calib-rpcs RPCs sent one at a time, after 2 discarded ones) at a set
 * of sizes spanning the workload, per protocol; an RPC's unloaded RTT is
 * interpolated linearly in size between them.  By default the baseline of
 * a size is the lower of the protocols' unloaded RTTs (the best this
 * host pair achieves; --slowdown-base own divides by each protocol's own).
 *
 * Every protocol gets the same random streams (seed, thread), so the same
 * request sizes and arrival gaps.
 *
 * Results are kept per size bucket: with a workload, bucket i holds the
 * messages whose inverse-CDF draw u fell in [i/N, (i+1)/N), i.e. the
 * i-th N-quantile of messages by size (so bucket 1 of 10 is exactly "the
 * shortest 10% of messages").  RTTs and slowdowns go into log-linear
 * histograms (src/core/homa_histogram.h) that do not keep samples.
 *
 * Only the public API (homa.h) is used, plus the core's histogram and the
 * simulator's workload reader and random numbers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "homa.h"
#include "../src/core/homa_config.h"
#include "../src/core/homa_histogram.h"
#include "workload_rng.h"
#include "workload_dist.h"
#include "homa_workloads.h"

#define PROG            "homa-perf"
#define MAX_MSG         ((uint32_t)HOMA_MAX_MESSAGE_LENGTH)
#define MAX_BUCKETS     16              /* fits the cookie's 4 bits */
#define MAX_THREADS     32
#define MAX_CAL         32              /* calibration sizes per protocol */
#define SPEC_ECHO       0xffffffffu     /* request header: echo me */
#define SPEC_BYTES      4               /* request header length */
#define FRAME_HDR       4               /* TCP frame length prefix */
#define REGION_BYTES    ((size_t)256 << 20)     /* Homa buffer region */
#define NS              1000000000ull
#define CAL_WARM        2               /* calibration RPCs discarded */
#define CAL_BUDGET_NS   (1 * NS)        /* calibration time per size */
#define SLOW_SCALE      1000.0          /* slowdowns kept in thousandths */
#define STAGE_SLACK_S   30              /* watchdog margin of a stage */
#define TCP_RX_CHUNK    (256 * 1024)
#define TCP_BATCH       32              /* frames per sendmsg */
#define MAX_TCP_CONNS   1024            /* server connections */
#define MAX_COUNTERS    256

/* Sizes the unloaded RTT is measured at (those inside the workload's
 * range, plus its smallest and largest size). */
static const uint32_t cal_grid[] = {
	1, 100, 200, 500, 1000, 1400, 2000, 3000, 5000, 10000, 20000,
	50000, 100000, 200000, 500000, 1000000
};

enum proto { P_HOMA, P_TCP, NPROTO };
static const char *const proto_name[NPROTO] = { "homa", "tcp" };

enum mode { M_NONE, M_SERVER, M_CLIENT, M_LOOPBACK };

/* ---------------------------------------------------------------- */
/* Options                                                            */

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
	int tcp_conns;                  /* TCP connections per thread */
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
};

/* bad_option - complain about the command line and exit 2. */
_Noreturn static void bad_option(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

_Noreturn static void bad_option(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '" PROG " --help'.\n");
	exit(2);
}

/* ---------------------------------------------------------------- */
/* Time, watchdog, small helpers                                      */

/* now_ns - CLOCK_MONOTONIC in nanoseconds. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* sleep_until - sleep until CLOCK_MONOTONIC reaches t (ns); returns at
 * once when t has passed. */
static void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / NS),
			       .tv_nsec = (long)(t % NS) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)
	       == EINTR)
		;
}

/* cpu_ns - user + system CPU time of the whole process, in ns. */
static uint64_t cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec)
	       * NS + ((uint64_t)ru.ru_utime.tv_usec +
		       (uint64_t)ru.ru_stime.tv_usec) * 1000u;
}

static char stage[160] = "start-up";

/* watchdog_fire - SIGALRM: a stage overran its budget; name it and exit 1
 * (only async-signal-safe calls). */
static void watchdog_fire(int sig)
{
	static const char msg[] = PROG ": watchdog: stage over its time "
				  "budget: ";
	ssize_t ignored;

	(void)sig;
	ignored = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	ignored = write(STDERR_FILENO, stage, strnlen(stage, sizeof(stage)));
	ignored = write(STDERR_FILENO, "\n", 1);
	(void)ignored;
	_exit(1);
}

/* watchdog_stage - a stage named by fmt starts; it must end within
 * seconds (0: no limit). */
static void watchdog_stage(unsigned int seconds, const char *fmt, ...)
{
	va_list ap;

	alarm(0);
	va_start(ap, fmt);
	vsnprintf(stage, sizeof(stage), fmt, ap);
	va_end(ap);
	alarm(seconds);
}

/* watchdog_install - route SIGALRM to watchdog_fire; ignore SIGPIPE. */
static void watchdog_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watchdog_fire;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* put_be32 / get_be32 - 32-bit big-endian at p. */
static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* response_len - bytes a server answers to a request of len bytes whose
 * first bytes are head (SPEC_BYTES of them when len >= SPEC_BYTES); a
 * larger spec than the largest message is cut to it. */
static uint32_t response_len(const uint8_t *head, size_t len)
{
	uint32_t spec;

	if (len < SPEC_BYTES)
		return (uint32_t)len;
	spec = get_be32(head);
	if (spec == SPEC_ECHO)
		return (uint32_t)len;
	return spec > MAX_MSG ? MAX_MSG : spec;
}

/* expected_response - what the client expects back for size bytes. */
static uint32_t expected_response(const struct options *o, uint32_t size)
{
	if (size < SPEC_BYTES || o->resp_size == SPEC_ECHO)
		return size;
	return o->resp_size;
}

/* The payload every request and response is cut from: MAX_MSG bytes of a
 * pattern; requests carry the spec in their first bytes (per thread copy). */
static uint8_t *pattern;

/* pattern_init - fill the shared pattern.  Returns 0 or -1 (no memory). */
static int pattern_init(void)
{
	uint32_t i;

	pattern = malloc(MAX_MSG);
	if (!pattern)
		return -1;
	for (i = 0; i < MAX_MSG; i++)
		pattern[i] = (uint8_t)(i * 7u + (i >> 10));
	return 0;
}

/* request_buffer - a private copy of the pattern whose first bytes ask for
 * o's response; NULL when out of memory.  Free with free(). */
static uint8_t *request_buffer(const struct options *o)
{
	uint8_t *b = malloc(MAX_MSG);

	if (b) {
		memcpy(b, pattern, MAX_MSG);
		put_be32(b, o->resp_size);
	}
	return b;
}

/* addr_port_set - a copy of a with its port replaced. */
static union sockaddr_in_union addr_with_port(const union sockaddr_in_union *a,
					      int port)
{
	union sockaddr_in_union r = *a;

	if (r.sa.sa_family == AF_INET6)
		r.in6.sin6_port = htons((uint16_t)port);
	else
		r.in4.sin_port = htons((uint16_t)port);
	return r;
}

/* addr_len - the sockaddr length of a's family. */
static socklen_t addr_len(const union sockaddr_in_union *a)
{
	return a->sa.sa_family == AF_INET6 ? sizeof(a->in6) : sizeof(a->in4);
}

/* addr_text - "ADDR:PORT" (or "[ADDR]:PORT") of a into buf. */
static const char *addr_text(const union sockaddr_in_union *a, char *buf,
			     size_t cap)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (a->sa.sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &a->in6.sin6_addr, host, sizeof(host));
		snprintf(buf, cap, "[%s]:%u", host, ntohs(a->in6.sin6_port));
	} else {
		inet_ntop(AF_INET, &a->in4.sin_addr, host, sizeof(host));
		snprintf(buf, cap, "%s:%u", host, ntohs(a->in4.sin_port));
	}
	return buf;
}

/* ---------------------------------------------------------------- */
/* Workload and buckets                                               */

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

/* file_readable - 1 when path names a readable regular file. */
static int file_readable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, R_OK) == 0;
}

/*
 * workload_dir_for - the folder to read "wN.cdf" of a builtin name from:
 * --workload-dir, else $HOMA_WORKLOAD_DIR, else NULL (the copy built into
 * the program, homa_workloads.h).
 */
static const char *workload_dir_for(const struct options *o)
{
	const char *env = getenv("HOMA_WORKLOAD_DIR");

	if (o->workload_dir)
		return o->workload_dir;
	return env && *env ? env : NULL;
}

/* workload_quantile - the size drawn for a uniform u in [0, 1). */
static uint32_t workload_quantile(const struct workload *wl, double u)
{
	return wl->fixed ? wl->size : workload_dist_sample(&wl->w, u);
}

/*
 * workload_open - set wl up from the options: a fixed size (one bucket)
 * or a distribution (o->buckets buckets).  Returns 0, or -1 after printing
 * why (unreadable or malformed file).
 */
static int workload_open(struct workload *wl, const struct options *o)
{
	char err[256];
	const char *dir = NULL;
	int i, rc;

	memset(wl, 0, sizeof(*wl));
	if (!o->workload) {
		wl->fixed = 1;
		wl->size = o->size;
		wl->mean = o->size;
		wl->min = wl->max = o->size;
		wl->nbuckets = 1;
		wl->lo[0] = wl->hi[0] = o->size;
		snprintf(wl->name, sizeof(wl->name), "%u B", o->size);
		return 0;
	}
	if (homa_workload_builtin(o->workload))
		dir = workload_dir_for(o);
	rc = homa_workload_read(&wl->w, o->workload, dir, MAX_MSG, err,
				sizeof(err));
	if (rc < 0) {
		fprintf(stderr, PROG ": workload %s: %s%s\n", o->workload, err,
			dir ? " (set --workload-dir or HOMA_WORKLOAD_DIR)"
			    : "");
		return -1;
	}
	snprintf(wl->name, sizeof(wl->name), "%s", wl->w.name);
	wl->mean = wl->w.mean;
	wl->min = wl->w.sizes[0];
	wl->max = wl->w.sizes[wl->w.n - 1];
	wl->nbuckets = o->buckets;
	for (i = 0; i < wl->nbuckets; i++) {
		double u0 = (double)i / wl->nbuckets;
		double u1 = (double)(i + 1) / wl->nbuckets;

		wl->lo[i] = workload_quantile(wl, u0);
		wl->hi[i] = workload_quantile(wl, nextafter(u1, 0.0));
	}
	return 0;
}

/* workload_close - free what workload_open allocated. */
static void workload_close(struct workload *wl)
{
	if (!wl->fixed)
		workload_dist_free(&wl->w);
}

/* workload_draw - a request size and its bucket, from r. */
static void workload_draw(const struct workload *wl, struct workload_rng *r,
			  uint32_t *size, int *bucket)
{
	double u;
	int b;

	if (wl->fixed) {
		*size = wl->size;
		*bucket = 0;
		return;
	}
	u = workload_rng_uniform(r);
	*size = workload_dist_sample(&wl->w, u);
	b = (int)(u * wl->nbuckets);
	*bucket = b < wl->nbuckets ? b : wl->nbuckets - 1;
}

/* ---------------------------------------------------------------- */
/* Unloaded RTTs (the baseline of slowdowns)                          */

struct baseline {
	int n[NPROTO];                  /* points per protocol */
	uint32_t size[NPROTO][MAX_CAL]; /* increasing */
	double rtt_ns[NPROTO][MAX_CAL];
	long rpcs[NPROTO][MAX_CAL];     /* RPCs behind each median */
	int from_file;
	int own;                        /* --slowdown-base own */
};

/* baseline_add - add (size, rtt) to protocol p, kept sorted by size; a
 * size already present is replaced.  Returns 0, -1 when full. */
static int baseline_add(struct baseline *b, enum proto p, uint32_t size,
			double rtt_ns, long rpcs)
{
	int i, j;

	for (i = 0; i < b->n[p] && b->size[p][i] < size; i++)
		;
	if (i < b->n[p] && b->size[p][i] == size) {
		b->rtt_ns[p][i] = rtt_ns;
		b->rpcs[p][i] = rpcs;
		return 0;
	}
	if (b->n[p] == MAX_CAL)
		return -1;
	for (j = b->n[p]; j > i; j--) {
		b->size[p][j] = b->size[p][j - 1];
		b->rtt_ns[p][j] = b->rtt_ns[p][j - 1];
		b->rpcs[p][j] = b->rpcs[p][j - 1];
	}
	b->size[p][i] = size;
	b->rtt_ns[p][i] = rtt_ns;
	b->rpcs[p][i] = rpcs;
	b->n[p]++;
	return 0;
}

/*
 * baseline_proto_rtt - the unloaded RTT of size bytes under protocol p:
 * linear in size between the two nearest points; the first point's value
 * below them; above them the last segment's slope (never decreasing).
 * Returns 0 when p has no points.
 */
static double baseline_proto_rtt(const struct baseline *b, enum proto p,
				 uint32_t size)
{
	const uint32_t *s = b->size[p];
	const double *r = b->rtt_ns[p];
	int n = b->n[p], i;
	double slope;

	if (n == 0)
		return 0;
	if (size <= s[0] || n == 1)
		return size <= s[0] ? r[0] : r[n - 1];
	for (i = 1; i < n && s[i] < size; i++)
		;
	if (i == n) {
		slope = (r[n - 1] - r[n - 2]) / (double)(s[n - 1] - s[n - 2]);
		if (slope < 0)
			slope = 0;
		return r[n - 1] + slope * (double)(size - s[n - 1]);
	}
	return r[i - 1] + (r[i] - r[i - 1]) * (double)(size - s[i - 1]) /
			  (double)(s[i] - s[i - 1]);
}

/* baseline_rtt - the divisor of a slowdown of size bytes under p: p's own
 * unloaded RTT, or (default) the lowest over the protocols measured.
 * Returns 0 when nothing is known. */
static double baseline_rtt(const struct baseline *b, enum proto p,
			   uint32_t size)
{
	double best = 0, v;
	int q;

	if (b->own)
		return baseline_proto_rtt(b, p, size);
	for (q = 0; q < NPROTO; q++) {
		v = baseline_proto_rtt(b, (enum proto)q, size);
		if (v > 0 && (best == 0 || v < best))
			best = v;
	}
	return best;
}

/* baseline_write - save b to path ("proto size rtt_ns rpcs" lines).
 * Returns 0, or -1 after printing why. */
static int baseline_write(const struct baseline *b, const char *path)
{
	FILE *f = fopen(path, "w");
	int p, i;

	if (!f) {
		fprintf(stderr, PROG ": --baseline-out %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	fprintf(f, "# homa-perf unloaded RTTs: protocol size_bytes rtt_ns "
		"rpcs (median of rpcs RPCs sent one at a time)\n");
	for (p = 0; p < NPROTO; p++)
		for (i = 0; i < b->n[p]; i++)
			fprintf(f, "%s %u %.0f %ld\n", proto_name[p],
				b->size[p][i], b->rtt_ns[p][i],
				b->rpcs[p][i]);
	if (fclose(f) != 0) {
		fprintf(stderr, PROG ": --baseline-out %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* baseline_read - load path written by baseline_write into b.  Returns 0,
 * or -1 after printing which line is wrong. */
static int baseline_read(struct baseline *b, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256], name[16];
	unsigned int size;
	double rtt;
	long rpcs;
	int lineno = 0, p, ok = 1;

	if (!f) {
		fprintf(stderr, PROG ": --baseline %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while (ok && fgets(line, sizeof(line), f)) {
		lineno++;
		if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
			continue;
		ok = sscanf(line, "%15s %u %lf %ld", name, &size, &rtt,
			    &rpcs) == 4 && size >= 1 && size <= MAX_MSG &&
		     rtt > 0;
		for (p = 0; ok && p < NPROTO; p++)
			if (strcmp(name, proto_name[p]) == 0)
				break;
		ok = ok && p < NPROTO &&
		     baseline_add(b, (enum proto)p, size, rtt, rpcs) == 0;
	}
	fclose(f);
	if (!ok) {
		fprintf(stderr, PROG ": --baseline %s line %d: expected "
			"'homa|tcp SIZE RTT_NS RPCS' (at most %d sizes "
			"each)\n", path, lineno, MAX_CAL);
		return -1;
	}
	b->from_file = 1;
	return 0;
}

/* cal_sizes - the sizes to calibrate for wl into out (MAX_CAL at most);
 * returns their count. */
static int cal_sizes(const struct workload *wl, uint32_t *out)
{
	size_t i;
	int n = 0;

	out[n++] = wl->min;
	for (i = 0; i < sizeof(cal_grid) / sizeof(cal_grid[0]); i++)
		if (cal_grid[i] > wl->min && cal_grid[i] < wl->max &&
		    n < MAX_CAL - 1)
			out[n++] = cal_grid[i];
	if (wl->max != wl->min)
		out[n++] = wl->max;
	return n;
}

/* ---------------------------------------------------------------- */
/* Results of one load phase                                          */

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
	uint64_t skipped;       /* arrivals dropped: max outstanding */
	uint64_t late;          /* arrivals issued > 1 ms after their time */
	uint64_t warm;          /* RPCs completed in the warm-up */
	int first_errno;
	char first_error[160];
};

/* stats_note_error - count a failed measured RPC; keep the first reason. */
static void stats_note_error(struct stats *st, int measured, int err,
			     const char *fmt, ...)
{
	va_list ap;

	if (measured)
		st->failed++;
	if (st->first_error[0] != '\0')
		return;
	st->first_errno = err;
	va_start(ap, fmt);
	vsnprintf(st->first_error, sizeof(st->first_error), fmt, ap);
	va_end(ap);
}

/* stats_new - zeroed stats with empty histograms, or NULL. */
static struct stats *stats_new(void)
{
	struct stats *st = calloc(1, sizeof(*st));
	int i;

	if (!st)
		return NULL;
	for (i = 0; i < MAX_BUCKETS; i++) {
		homa_histogram_reset(&st->b[i].rtt);
		homa_histogram_reset(&st->b[i].slow);
	}
	return st;
}

/* stats_merge - add src into dst. */
static void stats_merge(struct stats *dst, const struct stats *src)
{
	int i;

	for (i = 0; i < MAX_BUCKETS; i++) {
		homa_histogram_merge(&dst->b[i].rtt, &src->b[i].rtt);
		homa_histogram_merge(&dst->b[i].slow, &src->b[i].slow);
		dst->b[i].req_bytes += src->b[i].req_bytes;
		dst->b[i].resp_bytes += src->b[i].resp_bytes;
	}
	dst->sent += src->sent;
	dst->sent_bytes += src->sent_bytes;
	dst->completed += src->completed;
	dst->failed += src->failed;
	dst->unfinished += src->unfinished;
	dst->skipped += src->skipped;
	dst->late += src->late;
	dst->warm += src->warm;
	if (dst->first_error[0] == '\0' && src->first_error[0] != '\0') {
		dst->first_errno = src->first_errno;
		memcpy(dst->first_error, src->first_error,
		       sizeof(dst->first_error));
	}
}

/* ---------------------------------------------------------------- */
/* One load phase: what every worker shares                           */

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
	/* Homa: engine counters of the worker's socket, read before close */
	int ncounters;
	const char *cnames[MAX_COUNTERS];
	uint64_t cvalues[MAX_COUNTERS];
	char setup_error[160];  /* set when the worker could not start */
};

/* worker_record - an RPC issued at t0 (ns after epoch) of size bytes in
 * bucket finished at t1 with resp response bytes (expected: want).
 * Counts it when it was issued inside the measured window. */
static void worker_record(struct worker *w, uint64_t t0, uint64_t t1,
			  uint32_t size, int bucket, uint64_t resp,
			  uint32_t want)
{
	const struct phase *ph = w->ph;
	struct bucket_stats *b = &w->st->b[bucket];
	double base;
	uint64_t rtt = t1 > t0 ? t1 - t0 : 0;

	if (t0 < ph->measure_from) {
		w->st->warm++;
		return;
	}
	if (resp != want) {
		stats_note_error(w->st, 1, EPROTO, "%s response of %llu bytes "
				 "to a %u-byte request, expected %u",
				 proto_name[ph->proto],
				 (unsigned long long)resp, size, want);
		return;
	}
	w->st->completed++;
	homa_histogram_record(&b->rtt, rtt);
	base = baseline_rtt(ph->base, ph->proto, size);
	if (base > 0)
		homa_histogram_record(&b->slow, (uint64_t)llround(
			(double)rtt / base * SLOW_SCALE));
	b->req_bytes += size;
	b->resp_bytes += resp;
}

/* worker_count_sent - an RPC of size bytes was issued at t0. */
static void worker_count_sent(struct worker *w, uint64_t t0, uint32_t size)
{
	if (t0 >= w->ph->measure_from) {
		w->st->sent++;
		w->st->sent_bytes += size;
	}
}

/* rel_now - ns since the phase epoch. */
static uint64_t rel_now(const struct phase *ph)
{
	return now_ns() - ph->epoch;
}

/* ---------------------------------------------------------------- */
/* Homa sockets                                                       */

struct hsock {
	int fd;
	uint8_t *region;
	size_t region_len;
	struct homa_recvmsg_args args;  /* keeps the bpages to hand back */
	struct msghdr msg;
};

/*
 * hsock_open - a Homa socket of family with a REGION_BYTES buffer region,
 * bound to port when port != 0.  Returns 0, or -1 with why[] set.
 */
static int hsock_open(struct hsock *h, int family, int port, char *why,
		      size_t whycap)
{
	struct homa_set_buf_args buf;
	union sockaddr_in_union a;

	memset(h, 0, sizeof(*h));
	h->fd = homa_socket(family, SOCK_DGRAM, IPPROTO_HOMA);
	if (h->fd < 0) {
		snprintf(why, whycap, "homa_socket: %s", strerror(errno));
		return -1;
	}
	memset(&a, 0, sizeof(a));
	if (family == AF_INET6) {
		a.in6.sin6_family = AF_INET6;
		a.in6.sin6_addr = in6addr_any;
		a.in6.sin6_port = htons((uint16_t)port);
	} else {
		a.in4.sin_family = AF_INET;
		a.in4.sin_addr.s_addr = htonl(INADDR_ANY);
		a.in4.sin_port = htons((uint16_t)port);
	}
	if (port != 0 && homa_bind(h->fd, &a.sa, addr_len(&a)) < 0) {
		snprintf(why, whycap, "homa_bind port %d: %s", port,
			 strerror(errno));
		homa_close(h->fd);
		return -1;
	}
	h->region_len = REGION_BYTES;
	h->region = mmap(NULL, h->region_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (h->region == MAP_FAILED) {
		snprintf(why, whycap, "mmap: %s", strerror(errno));
		homa_close(h->fd);
		return -1;
	}
	buf.start = h->region;
	buf.length = h->region_len;
	if (homa_setsockopt(h->fd, IPPROTO_HOMA, SO_HOMA_SET_BUF, &buf,
			    sizeof(buf)) < 0) {
		snprintf(why, whycap, "SO_HOMA_SET_BUF: %s", strerror(errno));
		munmap(h->region, h->region_len);
		homa_close(h->fd);
		return -1;
	}
	h->msg.msg_control = &h->args;
	h->msg.msg_controllen = sizeof(h->args);
	return 0;
}

/* hsock_close - close the socket, then unmap its region. */
static void hsock_close(struct hsock *h)
{
	homa_close(h->fd);
	munmap(h->region, h->region_len);
}

/* hsock_recv - homa_recvmsg for flags (HOMA_RECVMSG_*) and RPC id (0:
 * any), handing back the previous message's bpages.  Returns the length
 * with h->args filled, or -1 with errno (h->args.id names a failed RPC,
 * 0 otherwise).  EINTR is retried. */
static ssize_t hsock_recv(struct hsock *h, int flags, uint64_t id)
{
	ssize_t n;

	do {
		h->args.id = id;
		h->args.flags = flags;
		n = homa_recvmsg(h->fd, &h->msg, 0);
	} while (n < 0 && errno == EINTR);
	return n;
}

/* hsock_iov - iovecs over the message of len bytes in h->args's bpages.
 * Returns their count, or -1 when they do not fit the region. */
static int hsock_iov(const struct hsock *h, size_t len, struct iovec *iov)
{
	uint32_t i, n = h->args.num_bpages;
	size_t off = 0, chunk;

	if (n > HOMA_MAX_BPAGES)
		return -1;
	for (i = 0; i < n && off < len; i++) {
		chunk = len - off < HOMA_BPAGE_SIZE ? len - off
						    : HOMA_BPAGE_SIZE;
		if (h->args.bpage_offsets[i] > h->region_len - chunk)
			return -1;
		iov[i].iov_base = h->region + h->args.bpage_offsets[i];
		iov[i].iov_len = chunk;
		off += chunk;
	}
	return off == len ? (int)i : -1;
}

/* read_counters - homa_stats_get of fd into names/values (max entries);
 * returns how many were read (0 on failure). */
static int read_counters(int fd, const char **names, uint64_t *values,
			 int max)
{
	int n = homa_stats_get(fd, names, values, max);

	if (n < 0)
		return 0;
	return n > max ? max : n;
}

/* ---------------------------------------------------------------- */
/* Homa server                                                        */

struct homa_server {
	struct hsock h;
	int nthreads;
	int epoll;              /* threads wait in epoll_wait, then read
				 * without blocking (--server-epoll) */
	pthread_t thread[MAX_THREADS];
	atomic_ulong served;
	atomic_ulong errors;
	char first_error[160];
	pthread_mutex_t lock;   /* guards first_error */
};

/* Per server thread: its own receive state over the shared socket. */
struct homa_server_thread {
	struct homa_server *s;
	struct hsock view;      /* fd and region of s->h, own args */
};

static struct homa_server_thread hs_threads[MAX_THREADS];

/* homa_server_error - count an error; keep the first one's text. */
static void homa_server_error(struct homa_server *s, const char *what)
{
	if (atomic_fetch_add(&s->errors, 1) == 0) {
		pthread_mutex_lock(&s->lock);
		snprintf(s->first_error, sizeof(s->first_error), "%s: %s",
			 what, strerror(errno));
		pthread_mutex_unlock(&s->lock);
	}
}

/*
 * server_wait_epoll - wait until the socket epoll instance ep watches
 * (server_epoll_open) is readable, or 100 ms pass.  Returns 0, or -1 with
 * errno when epoll_wait fails for a reason other than EINTR.
 */
static int server_wait_epoll(int ep)
{
	struct epoll_event ev;

	if (epoll_wait(ep, &ev, 1, 100) < 0 && errno != EINTR)
		return -1;
	return 0;
}

/*
 * server_epoll_open - an epoll instance watching fd for input, or -1
 * (errno set).
 */
static int server_epoll_open(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		return -1;
	ev.data.fd = fd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(ep);
		return -1;
	}
	return ep;
}

/*
 * homa_server_main - thread: take requests and answer each as its first
 * bytes ask (response_len).  Blocks in homa_recvmsg, or with --server-epoll
 * in epoll_wait, reading without blocking until nothing is left.  Leaves
 * when the socket is shut down or closed, or after 1000 consecutive
 * receive errors.
 */
static void *homa_server_main(void *arg)
{
	struct homa_server_thread *t = arg;
	struct hsock *h = &t->view;
	struct iovec iov[HOMA_MAX_BPAGES];
	int bad_in_row = 0, n, ep = -1;
	int flags = HOMA_RECVMSG_REQUEST;
	uint32_t resp;
	ssize_t len;

	if (t->s->epoll) {
		ep = server_epoll_open(h->fd);
		if (ep < 0) {
			homa_server_error(t->s, "server epoll");
			return NULL;
		}
		flags |= HOMA_RECVMSG_NONBLOCKING;
	}
	while (bad_in_row < 1000) {
		len = hsock_recv(h, flags, 0);
		if (len < 0 && ep >= 0 &&
		    (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (server_wait_epoll(ep) < 0) {
				homa_server_error(t->s, "server epoll_wait");
				bad_in_row++;
			}
			continue;
		}
		if (len < 0) {
			if (errno == ESHUTDOWN || errno == EBADF)
				break;
			homa_server_error(t->s, "server homa_recvmsg");
			bad_in_row++;
			continue;
		}
		bad_in_row = 0;
		n = hsock_iov(h, (size_t)len, iov);
		if (n < 0) {
			errno = EFAULT;
			homa_server_error(t->s, "server bpages");
			continue;
		}
		resp = response_len(n > 0 ? iov[0].iov_base : NULL,
				    (size_t)len);
		if (resp == (uint32_t)len && (len < SPEC_BYTES ||
		    get_be32(iov[0].iov_base) == SPEC_ECHO))
			n = (int)homa_replyv(h->fd, iov, n, &h->args.peer_addr,
					     h->args.id);
		else
			n = (int)homa_reply(h->fd, pattern, resp,
					    &h->args.peer_addr, h->args.id);
		if (n < 0)
			homa_server_error(t->s, "server homa_reply");
		else
			atomic_fetch_add(&t->s->served, 1);
	}
	if (ep >= 0)
		close(ep);
	return NULL;
}

/*
 * homa_server_start - bind a Homa socket of family to port and start
 * nthreads threads serving it (waiting in epoll_wait when epoll is set).
 * Returns 0, or -1 after printing why (nothing left open).
 */
static int homa_server_start(struct homa_server *s, int family, int port,
			     int nthreads, int epoll)
{
	char why[160];
	int i, err;

	memset(s, 0, sizeof(*s));
	s->epoll = epoll;
	pthread_mutex_init(&s->lock, NULL);
	atomic_init(&s->served, 0);
	atomic_init(&s->errors, 0);
	if (hsock_open(&s->h, family, port, why, sizeof(why)) < 0) {
		fprintf(stderr, PROG ": Homa server: %s%s\n", why,
			errno == EADDRINUSE ? " (choose another --port)" : "");
		return -1;
	}
	for (i = 0; i < nthreads; i++) {
		hs_threads[i].s = s;
		hs_threads[i].view = s->h;
		hs_threads[i].view.msg.msg_control = &hs_threads[i].view.args;
		err = pthread_create(&s->thread[i], NULL, homa_server_main,
				     &hs_threads[i]);
		if (err != 0) {
			fprintf(stderr, PROG ": pthread_create: %s\n",
				strerror(err));
			break;
		}
	}
	s->nthreads = i;
	if (i < nthreads) {
		homa_shutdown(s->h.fd, SHUT_RDWR);
		for (i = 0; i < s->nthreads; i++)
			pthread_join(s->thread[i], NULL);
		hsock_close(&s->h);
		return -1;
	}
	return 0;
}

/* homa_server_stop - shut the socket down (its threads leave), join the
 * threads; the socket stays open for homa_server_close. */
static void homa_server_stop(struct homa_server *s)
{
	int i;

	homa_shutdown(s->h.fd, SHUT_RDWR);
	for (i = 0; i < s->nthreads; i++)
		pthread_join(s->thread[i], NULL);
}

/* homa_server_close - close the socket of a stopped server. */
static void homa_server_close(struct homa_server *s)
{
	hsock_close(&s->h);
	pthread_mutex_destroy(&s->lock);
}

/* ---------------------------------------------------------------- */
/* TCP: frames of a 4-byte big-endian length and the payload          */

/* tcp_setup - TCP_NODELAY on fd (and O_NONBLOCK when nonblock).
 * Returns 0 or -1 with errno. */
static int tcp_setup(int fd, int nonblock)
{
	int one = 1, fl;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		return -1;
	if (!nonblock)
		return 0;
	fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* tcp_connect - a blocking TCP connection to a with TCP_NODELAY, or -1
 * with errno. */
static int tcp_connect(const union sockaddr_in_union *a)
{
	int fd = socket(a->sa.sa_family, SOCK_STREAM, 0), e;

	if (fd < 0)
		return -1;
	if (connect(fd, &a->sa, addr_len(a)) < 0 || tcp_setup(fd, 0) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* read_full - blocking: read exactly len bytes.  Returns 0, or -1 with
 * errno (0 at end of stream). */
static int read_full(int fd, uint8_t *buf, size_t len)
{
	ssize_t r;

	while (len > 0) {
		r = recv(fd, buf, len, 0);
		if (r == 0) {
			errno = 0;
			return -1;
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += r;
		len -= (size_t)r;
	}
	return 0;
}

/* write_frame - blocking: one frame with payload[len].  Returns 0 or -1
 * with errno. */
static int write_frame(int fd, const uint8_t *payload, uint32_t len)
{
	uint8_t hdr[FRAME_HDR];
	struct iovec iov[2];
	struct msghdr m;
	size_t done = 0, total = FRAME_HDR + (size_t)len;
	ssize_t r;

	put_be32(hdr, len);
	while (done < total) {
		memset(&m, 0, sizeof(m));
		m.msg_iov = iov;
		if (done < FRAME_HDR) {
			iov[0].iov_base = hdr + done;
			iov[0].iov_len = FRAME_HDR - done;
			iov[1].iov_base = (void *)payload;
			iov[1].iov_len = len;
			m.msg_iovlen = 2;
		} else {
			iov[0].iov_base = (void *)(payload + done - FRAME_HDR);
			iov[0].iov_len = total - done;
			m.msg_iovlen = 1;
		}
		r = sendmsg(fd, &m, MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)r;
	}
	return 0;
}

/* read_frame - blocking: one frame into buf (MAX_MSG bytes).  Returns the
 * payload length, or -1 with errno (0 at end of stream, EMSGSIZE for a
 * frame over MAX_MSG). */
static long read_frame(int fd, uint8_t *buf)
{
	uint8_t hdr[FRAME_HDR];
	uint32_t len;

	if (read_full(fd, hdr, FRAME_HDR) < 0)
		return -1;
	len = get_be32(hdr);
	if (len > MAX_MSG) {
		errno = EMSGSIZE;
		return -1;
	}
	if (read_full(fd, buf, len) < 0)
		return -1;
	return (long)len;
}

/* ---------------------------------------------------------------- */
/* TCP server: one thread per connection, requests answered in order  */

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

/* tcp_conn_main - thread: answer the frames of one connection until it
 * ends (or is shut down). */
static void *tcp_conn_main(void *arg)
{
	struct tcp_conn_thread *c = arg;
	uint8_t *buf = malloc(MAX_MSG);
	uint32_t resp;
	long len;
	int rc;

	if (!buf) {
		atomic_fetch_add(&c->s->errors, 1);
		return NULL;
	}
	for (;;) {
		len = read_frame(c->fd, buf);
		if (len < 0) {
			if (errno != 0 && errno != ECONNRESET)
				atomic_fetch_add(&c->s->errors, 1);
			break;
		}
		resp = response_len(buf, (size_t)len);
		if (resp == (uint32_t)len &&
		    (len < SPEC_BYTES || get_be32(buf) == SPEC_ECHO))
			rc = write_frame(c->fd, buf, resp);
		else
			rc = write_frame(c->fd, pattern, resp);
		if (rc < 0) {
			if (errno != EPIPE && errno != ECONNRESET)
				atomic_fetch_add(&c->s->errors, 1);
			break;
		}
		atomic_fetch_add(&c->s->served, 1);
	}
	free(buf);
	return NULL;
}

/* tcp_acceptor_main - thread: accept connections, a thread each, until
 * the listener is shut down. */
static void *tcp_acceptor_main(void *arg)
{
	struct tcp_server *s = arg;
	struct tcp_conn_thread *c;
	int fd;

	for (;;) {
		fd = accept(s->lfd, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break;          /* shut down (EINVAL) or fatal */
		}
		c = calloc(1, sizeof(*c));
		pthread_mutex_lock(&s->lock);
		if (!c || s->stopping || s->nconns == MAX_TCP_CONNS ||
		    tcp_setup(fd, 0) < 0) {
			pthread_mutex_unlock(&s->lock);
			atomic_fetch_add(&s->errors, !s->stopping);
			free(c);
			close(fd);
			continue;
		}
		c->s = s;
		c->fd = fd;
		if (pthread_create(&c->thread, NULL, tcp_conn_main, c) != 0) {
			pthread_mutex_unlock(&s->lock);
			atomic_fetch_add(&s->errors, 1);
			free(c);
			close(fd);
			continue;
		}
		s->conns[s->nconns++] = c;
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

/* tcp_server_start - listen on port (family) and start accepting.
 * Returns 0, or -1 after printing why. */
static int tcp_server_start(struct tcp_server *s, int family, int port)
{
	union sockaddr_in_union a;
	int one = 1, err;

	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	atomic_init(&s->served, 0);
	atomic_init(&s->errors, 0);
	memset(&a, 0, sizeof(a));
	a.sa.sa_family = (sa_family_t)family;
	if (family == AF_INET6)
		a.in6.sin6_addr = in6addr_any;
	else
		a.in4.sin_addr.s_addr = htonl(INADDR_ANY);
	a = addr_with_port(&a, port);
	s->lfd = socket(family, SOCK_STREAM, 0);
	if (s->lfd < 0) {
		perror(PROG ": TCP socket");
		return -1;
	}
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->lfd, &a.sa, addr_len(&a)) < 0 || listen(s->lfd, 128) < 0) {
		fprintf(stderr, PROG ": TCP port %d: %s%s\n", port,
			strerror(errno), errno == EADDRINUSE ?
			" (choose another --tcp-port)" : "");
		close(s->lfd);
		return -1;
	}
	err = pthread_create(&s->acceptor, NULL, tcp_acceptor_main, s);
	if (err != 0) {
		fprintf(stderr, PROG ": pthread_create: %s\n", strerror(err));
		close(s->lfd);
		return -1;
	}
	return 0;
}

/* tcp_server_stop - stop accepting, end every connection, join every
 * thread, close everything. */
static void tcp_server_stop(struct tcp_server *s)
{
	int i;

	pthread_mutex_lock(&s->lock);
	s->stopping = 1;
	pthread_mutex_unlock(&s->lock);
	shutdown(s->lfd, SHUT_RDWR);
	pthread_join(s->acceptor, NULL);
	close(s->lfd);
	for (i = 0; i < s->nconns; i++)
		shutdown(s->conns[i]->fd, SHUT_RDWR);
	for (i = 0; i < s->nconns; i++) {
		pthread_join(s->conns[i]->thread, NULL);
		close(s->conns[i]->fd);
		free(s->conns[i]);
	}
	s->nconns = 0;
	pthread_mutex_destroy(&s->lock);
}

/* ---------------------------------------------------------------- */
/* Calibration: unloaded RTTs, one RPC at a time                      */

/* cal_rpc_homa - one Homa RPC of size bytes from h to dest, waiting for
 * its response.  Returns the response length, or -1 with why set. */
static long cal_rpc_homa(struct hsock *h, const union sockaddr_in_union *dest,
			 const uint8_t *req, uint32_t size, char *why,
			 size_t whycap)
{
	uint64_t id = 0;
	ssize_t n;

	if (homa_send(h->fd, req, size, dest, &id, 0) < 0) {
		snprintf(why, whycap, "homa_send: %s", strerror(errno));
		return -1;
	}
	n = hsock_recv(h, HOMA_RECVMSG_RESPONSE, id);
	if (n < 0) {
		snprintf(why, whycap, "Homa RPC of %u bytes: %s", size,
			 strerror(errno));
		return -1;
	}
	return (long)n;
}

/* cal_rpc_tcp - one request of size bytes on connection fd and its
 * response (read into rbuf).  Returns the response length, or -1 with
 * why set. */
static long cal_rpc_tcp(int fd, uint8_t *rbuf, const uint8_t *req,
			uint32_t size, char *why, size_t whycap)
{
	long n;

	if (write_frame(fd, req, size) < 0) {
		snprintf(why, whycap, "TCP send: %s", strerror(errno));
		return -1;
	}
	n = read_frame(fd, rbuf);
	if (n < 0)
		snprintf(why, whycap, "TCP receive: %s",
			 errno ? strerror(errno) : "connection closed");
	return n;
}

/*
 * calibrate - measure protocol p's unloaded RTT at every size of sizes[n]
 * (one RPC at a time over one socket or connection; CAL_WARM discarded,
 * then up to o->calib_rpcs or CAL_BUDGET_NS per size, at least 3) and add
 * the medians to b.  Returns 0, or -1 after printing why.
 */
static int calibrate(const struct options *o, enum proto p,
		     const union sockaddr_in_union *homa_dest,
		     const union sockaddr_in_union *tcp_dest,
		     const uint32_t *sizes, int n, struct baseline *b)
{
	struct homa_histogram *hist = malloc(sizeof(*hist));
	uint8_t *req = request_buffer(o), *rbuf = malloc(MAX_MSG);
	struct hsock h;
	char why[200] = "";
	uint64_t t0, t1, start;
	long got, k, kept;
	int i, fd = -1, rc = -1;

	memset(&h, 0, sizeof(h));
	if (!hist || !req || !rbuf) {
		snprintf(why, sizeof(why), "out of memory");
		goto out_free;
	}
	if (p == P_HOMA) {
		if (hsock_open(&h, homa_dest->sa.sa_family, 0, why,
			       sizeof(why)) < 0)
			goto out_free;
	} else {
		fd = tcp_connect(tcp_dest);
		if (fd < 0) {
			snprintf(why, sizeof(why), "TCP connect: %s",
				 strerror(errno));
			goto out_free;
		}
	}
	for (i = 0; i < n; i++) {
		uint32_t want = expected_response(o, sizes[i]);

		homa_histogram_reset(hist);
		start = now_ns();
		for (k = 0, kept = 0; k < CAL_WARM + o->calib_rpcs; k++) {
			if (kept >= 3 && now_ns() - start > CAL_BUDGET_NS)
				break;
			t0 = now_ns();
			got = p == P_HOMA
			      ? cal_rpc_homa(&h, homa_dest, req, sizes[i], why,
					     sizeof(why))
			      : cal_rpc_tcp(fd, rbuf, req, sizes[i], why,
					    sizeof(why));
			t1 = now_ns();
			if (got < 0)
				goto out_close;
			if ((uint32_t)got != want) {
				snprintf(why, sizeof(why), "response of %ld "
					 "bytes to %u, expected %u", got,
					 sizes[i], want);
				goto out_close;
			}
			if (k >= CAL_WARM) {
				homa_histogram_record(hist, t1 - t0);
				kept++;
			}
		}
		if (baseline_add(b, p, sizes[i],
				 (double)homa_histogram_percentile(hist, 50),
				 kept) < 0) {
			snprintf(why, sizeof(why), "too many sizes");
			goto out_close;
		}
	}
	rc = 0;
out_close:
	if (p == P_HOMA)
		hsock_close(&h);
	else
		close(fd);
out_free:
	if (rc < 0)
		fprintf(stderr, PROG ": %s calibration: %s\n", proto_name[p],
			why);
	free(hist);
	free(req);
	free(rbuf);
	return rc;
}

/* ---------------------------------------------------------------- */
/* Homa load workers                                                  */

/* An RPC's completion cookie carries when it was issued (ns after the
 * phase epoch, 40 bits: 1099 s), its size (20 bits) and bucket (4 bits),
 * so the thread that receives its response needs no shared table. */
#define CK_TIME_SHIFT   24
#define CK_SIZE_SHIFT   4
#define CK_SIZE_MASK    0xfffffu
#define CK_BUCKET_MASK  0xfu

static uint64_t cookie_pack(uint64_t t0, uint32_t size, int bucket)
{
	return t0 << CK_TIME_SHIFT | (uint64_t)size << CK_SIZE_SHIFT |
	       (uint64_t)bucket;
}

static void cookie_unpack(uint64_t c, uint64_t *t0, uint32_t *size,
			  int *bucket)
{
	*t0 = c >> CK_TIME_SHIFT;
	*size = (uint32_t)(c >> CK_SIZE_SHIFT) & CK_SIZE_MASK;
	*bucket = (int)(c & CK_BUCKET_MASK);
}

/* worker_take_counters - keep the engine counters of Homa socket fd. */
static void worker_take_counters(struct worker *w, int fd)
{
	w->ncounters = read_counters(fd, w->cnames, w->cvalues,
				     MAX_COUNTERS);
}

/*
 * homa_take_response - receive one response on h (blocking) and account
 * it to w.  Returns 1 when an RPC ended (answered or failed), 0 when the
 * socket was shut down, -1 on any other error that names no RPC.
 */
static int homa_take_response(struct worker *w, struct hsock *h)
{
	const struct phase *ph = w->ph;
	uint64_t t0, t1;
	uint32_t size;
	int bucket;
	ssize_t n;

	n = hsock_recv(h, HOMA_RECVMSG_RESPONSE, 0);
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
static int homa_issue(struct worker *w, struct hsock *h, uint64_t t0)
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

/*
 * homa_closed_main - worker thread, closed loop: keep w->outstanding
 * RPCs in flight on one socket until ph->end, then collect the rest until
 * ph->drain_end (RPCs that fail end too, so every wait is bounded by the
 * engine's RPC timeout).
 */
static void *homa_closed_main(void *arg)
{
	struct worker *w = arg;
	const struct phase *ph = w->ph;
	struct hsock h;
	uint64_t now;
	int inflight = 0, r;

	if (hsock_open(&h, ph->homa_dest.sa.sa_family, 0, w->setup_error,
		       sizeof(w->setup_error)) < 0)
		return NULL;
	sleep_until(ph->epoch);
	for (;;) {
		now = rel_now(ph);
		while (inflight < w->outstanding && now < ph->end) {
			if (homa_issue(w, &h, now) < 0) {
				sleep_until(ph->epoch + now + 1000000);
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
	worker_take_counters(w, h.fd);
	hsock_close(&h);
	return NULL;
}

/* State an open-loop sender shares with its receiver thread. */
struct homa_open {
	struct worker rx;       /* the receiver's view: own stats */
	struct hsock *h;
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

/*
 * homa_open_main - worker thread, open loop: issue RPCs at Poisson
 * arrival times (mean gap ph->gap_ns) until ph->end, while a second thread
 * takes the responses; then wait for the RPCs in flight until
 * ph->drain_end, shut the socket down and join the receiver.
 */
static void *homa_open_main(void *arg)
{
	struct worker *w = arg;
	const struct phase *ph = w->ph;
	struct homa_open *ho = calloc(1, sizeof(*ho));
	struct hsock h;
	double next = 0;
	uint64_t now;
	int err;

	if (!ho || !(ho->rx.st = stats_new())) {
		snprintf(w->setup_error, sizeof(w->setup_error),
			 "out of memory");
		goto out_free;
	}
	if (hsock_open(&h, ph->homa_dest.sa.sa_family, 0, w->setup_error,
		       sizeof(w->setup_error)) < 0)
		goto out_free;
	ho->rx.ph = ph;
	ho->h = &h;
	atomic_init(&ho->inflight, 0);
	err = pthread_create(&ho->rx.thread, NULL, homa_open_rx_main, ho);
	if (err != 0) {
		snprintf(w->setup_error, sizeof(w->setup_error),
			 "pthread_create: %s", strerror(err));
		hsock_close(&h);
		goto out_free;
	}
	prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	for (;;) {
		next += workload_rng_exponential(&w->rng, ph->gap_ns);
		if (next >= (double)ph->end)
			break;
		sleep_until(ph->epoch + (uint64_t)next);
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
		sleep_until(now_ns() + 1000000);
	w->st->unfinished += (uint64_t)atomic_load(&ho->inflight);
	homa_shutdown(h.fd, SHUT_RDWR);
	pthread_join(ho->rx.thread, NULL);
	stats_merge(w->st, ho->rx.st);
	worker_take_counters(w, h.fd);
	hsock_close(&h);
out_free:
	if (ho)
		free(ho->rx.st);
	free(ho);
	return NULL;
}

/* ---------------------------------------------------------------- */
/* TCP load worker: K pipelined connections, one thread, ppoll        */

struct tcp_req {
	uint64_t t0;
	uint32_t size;
	int bucket;
	uint8_t hdr[FRAME_HDR];
};

/* The client end of one connection.  Requests [head, unsent) are written
 * and await their responses in order; [unsent, tail) are queued, the
 * first of them with 'wrote' bytes of its frame written.  The indexes only
 * grow; an entry lives at index % cap. */
struct tconn {
	int fd;                 /* -1 once failed */
	struct tcp_req *ring;
	uint64_t cap;
	uint64_t head, unsent, tail;
	size_t wrote;
	uint8_t rhdr[FRAME_HDR];
	size_t rhave;           /* header bytes of the current response */
	size_t rleft;           /* payload bytes still to come */
	uint32_t rlen;
	int in_payload;
};

/* tconn_outstanding - requests of c not yet answered. */
static uint64_t tconn_outstanding(const struct tconn *c)
{
	return c->tail - c->head;
}

/* tconn_fail - the connection broke: every RPC on it fails with err. */
static void tconn_fail(struct worker *w, struct tconn *c, int err,
		       const char *what)
{
	const struct phase *ph = w->ph;
	struct tcp_req *r;

	for (; c->head < c->tail; c->head++) {
		r = &c->ring[c->head % c->cap];
		stats_note_error(w->st, r->t0 >= ph->measure_from, err,
				 "TCP %s: %s", what,
				 err ? strerror(err) : "connection closed");
	}
	c->unsent = c->tail;
	close(c->fd);
	c->fd = -1;
}

/* tconn_flush - write queued frames until done or the socket is full.
 * Returns 0, or -1 with errno (connection broken). */
static int tconn_flush(struct tconn *c, const uint8_t *req)
{
	struct iovec iov[2 * TCP_BATCH];
	struct msghdr m;
	struct tcp_req *r;
	uint64_t i;
	size_t skip, left;
	ssize_t sent;
	int k;

	while (c->unsent < c->tail) {
		k = 0;
		skip = c->wrote;
		for (i = c->unsent; i < c->tail && k + 2 <= 2 * TCP_BATCH;
		     i++) {
			r = &c->ring[i % c->cap];
			if (skip < FRAME_HDR) {
				iov[k].iov_base = r->hdr + skip;
				iov[k++].iov_len = FRAME_HDR - skip;
				skip = 0;
			} else {
				skip -= FRAME_HDR;
			}
			iov[k].iov_base = (void *)(req + skip);
			iov[k++].iov_len = r->size - skip;
			skip = 0;
		}
		memset(&m, 0, sizeof(m));
		m.msg_iov = iov;
		m.msg_iovlen = (size_t)k;
		sent = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (sent < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		left = (size_t)sent;
		while (left > 0) {
			r = &c->ring[c->unsent % c->cap];
			size_t rest = FRAME_HDR + r->size - c->wrote;

			if (left < rest) {
				c->wrote += left;
				break;
			}
			left -= rest;
			c->wrote = 0;
			c->unsent++;
		}
	}
	return 0;
}

/* tconn_frame_done - the response to the oldest request is complete. */
static void tconn_frame_done(struct worker *w, struct tconn *c)
{
	const struct phase *ph = w->ph;
	struct tcp_req *r = &c->ring[c->head % c->cap];

	worker_record(w, r->t0, rel_now(ph), r->size, r->bucket, c->rlen,
		      expected_response(ph->o, r->size));
	c->head++;
	c->in_payload = 0;
	c->rhave = 0;
}

/*
 * tconn_read - read what has arrived and complete the responses it ends.
 * Returns 0, or -1 with errno (0: closed by the peer; EPROTO: a response
 * nobody asked for or over the largest message).
 */
static int tconn_read(struct worker *w, struct tconn *c, uint8_t *scratch)
{
	ssize_t got;
	size_t off, take;

	for (;;) {
		got = recv(c->fd, scratch, TCP_RX_CHUNK, MSG_DONTWAIT);
		if (got == 0) {
			errno = 0;
			return -1;
		}
		if (got < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		for (off = 0; off < (size_t)got; off += take) {
			if (!c->in_payload) {
				take = FRAME_HDR - c->rhave;
				if (take > (size_t)got - off)
					take = (size_t)got - off;
				memcpy(c->rhdr + c->rhave, scratch + off, take);
				c->rhave += take;
				if (c->rhave < FRAME_HDR)
					continue;
				c->rlen = get_be32(c->rhdr);
				if (c->rlen > MAX_MSG || c->head >= c->unsent) {
					errno = EPROTO;
					return -1;
				}
				c->rleft = c->rlen;
				c->in_payload = 1;
			} else {
				take = (size_t)got - off < c->rleft
				       ? (size_t)got - off : c->rleft;
				c->rleft -= take;
			}
			if (c->in_payload && c->rleft == 0)
				tconn_frame_done(w, c);
		}
		if ((size_t)got < TCP_RX_CHUNK)
			return 0;
	}
}

/* tcp_pick - the live connection with the fewest outstanding requests,
 * or NULL when none is left. */
static struct tconn *tcp_pick(struct tconn *c, int n)
{
	struct tconn *best = NULL;
	int i;

	for (i = 0; i < n; i++)
		if (c[i].fd >= 0 && (!best || tconn_outstanding(&c[i]) <
					      tconn_outstanding(best)))
			best = &c[i];
	return best;
}

/* tcp_enqueue - queue a new request drawn from the workload at t0 on the
 * best connection and try to write it.  Returns 0, or -1 when no
 * connection is left. */
static int tcp_enqueue(struct worker *w, struct tconn *conns, int n,
		       uint64_t t0)
{
	struct tconn *c = tcp_pick(conns, n);
	struct tcp_req *r;

	if (!c)
		return -1;
	r = &c->ring[c->tail % c->cap];
	workload_draw(w->ph->wl, &w->rng, &r->size, &r->bucket);
	r->t0 = t0;
	put_be32(r->hdr, r->size);
	worker_count_sent(w, t0, r->size);
	c->tail++;
	if (c->tail - c->unsent == 1 && tconn_flush(c, w->req) < 0)
		tconn_fail(w, c, errno, "send");
	return 0;
}

/* tcp_open_conns - n connections to ph->tcp_dest with rings of cap
 * entries.  Returns 0, or -1 with w->setup_error (nothing left open). */
static int tcp_open_conns(struct worker *w, struct tconn *c, int n,
			  uint64_t cap)
{
	int i, j;

	for (i = 0; i < n; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].cap = cap;
		c[i].ring = calloc(cap, sizeof(*c[i].ring));
		c[i].fd = c[i].ring ? tcp_connect(&w->ph->tcp_dest) : -1;
		if (c[i].fd < 0 || tcp_setup(c[i].fd, 1) < 0) {
			snprintf(w->setup_error, sizeof(w->setup_error),
				 "TCP connection: %s", c[i].ring ?
				 strerror(errno) : "out of memory");
			if (c[i].fd >= 0)
				close(c[i].fd);
			free(c[i].ring);
			for (j = 0; j < i; j++) {
				close(c[j].fd);
				free(c[j].ring);
			}
			return -1;
		}
	}
	return 0;
}

/* tcp_issue_due - issue what is due at now: closed loop, fill up to
 * w->outstanding; open loop, every arrival up to now (the next one is
 * kept in *next).  Returns 0, or -1 when no connection is left. */
static int tcp_issue_due(struct worker *w, struct tconn *c, int n,
			 uint64_t now, double *next)
{
	const struct phase *ph = w->ph;
	uint64_t inflight = 0;
	int i;

	for (i = 0; i < n; i++)
		inflight += tconn_outstanding(&c[i]);
	if (!ph->o->open_loop) {
		for (; inflight < (uint64_t)w->outstanding && now < ph->end;
		     inflight++)
			if (tcp_enqueue(w, c, n, now) < 0)
				return -1;
		return 0;
	}
	while (*next <= (double)now && *next < (double)ph->end) {
		if (now >= ph->measure_from && now - (uint64_t)*next > 1000000)
			w->st->late++;
		if (inflight >= (uint64_t)ph->o->max_outstanding) {
			if (now >= ph->measure_from)
				w->st->skipped++;
		} else {
			if (tcp_enqueue(w, c, n, now) < 0)
				return -1;
			inflight++;
		}
		*next += workload_rng_exponential(&w->rng, ph->gap_ns);
	}
	return 0;
}

/*
 * tcp_main - worker thread: o->tcp_conns connections; RPCs issued open or
 * closed loop until ph->end; responses collected until ph->drain_end.
 */
static void *tcp_main(void *arg)
{
	struct worker *w = arg;
	const struct phase *ph = w->ph;
	int n = ph->o->tcp_conns, i, live;
	struct tconn *c = calloc((size_t)n, sizeof(*c));
	struct pollfd *pf = calloc((size_t)n, sizeof(*pf));
	uint8_t *scratch = malloc(TCP_RX_CHUNK);
	uint64_t cap, now, inflight, wait;
	double next = 0, deadline;
	struct timespec ts;

	if (!c || !pf || !scratch) {
		snprintf(w->setup_error, sizeof(w->setup_error),
			 "out of memory");
		goto out_free;
	}
	cap = (uint64_t)(ph->o->open_loop ? ph->o->max_outstanding
					  : w->outstanding) + 1;
	if (tcp_open_conns(w, c, n, cap) < 0)
		goto out_free;
	prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
	if (ph->o->open_loop)
		next = workload_rng_exponential(&w->rng, ph->gap_ns);
	sleep_until(ph->epoch);
	for (;;) {
		now = rel_now(ph);
		if (now < ph->end && tcp_issue_due(w, c, n, now, &next) < 0)
			break;
		inflight = 0;
		live = 0;
		for (i = 0; i < n; i++) {
			inflight += tconn_outstanding(&c[i]);
			live += c[i].fd >= 0;
		}
		if (live == 0 || (inflight == 0 && now >= ph->end) ||
		    now >= ph->drain_end)
			break;
		/* Sleep until the next arrival (open loop), else until
		 * something arrives; at most 100 ms, never past drain_end. */
		deadline = (double)ph->drain_end;
		if (ph->o->open_loop && next < (double)ph->end &&
		    next < deadline)
			deadline = next;
		wait = deadline > (double)now
		       ? (uint64_t)ceil(deadline - (double)now) : 0;
		if (wait > 100000000)
			wait = 100000000;
		for (i = 0; i < n; i++) {
			pf[i].fd = c[i].fd;
			pf[i].events = POLLIN;
			if (c[i].fd >= 0 && c[i].unsent < c[i].tail)
				pf[i].events |= POLLOUT;
			pf[i].revents = 0;
		}
		ts.tv_sec = (time_t)(wait / NS);
		ts.tv_nsec = (long)(wait % NS);
		if (ppoll(pf, (nfds_t)n, &ts, NULL) < 0 && errno != EINTR) {
			stats_note_error(w->st, 0, errno, "ppoll: %s",
					 strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			if (c[i].fd < 0 || pf[i].revents == 0)
				continue;
			if ((pf[i].revents & POLLOUT) &&
			    tconn_flush(&c[i], w->req) < 0) {
				tconn_fail(w, &c[i], errno, "send");
				continue;
			}
			if ((pf[i].revents & (POLLIN | POLLERR | POLLHUP)) &&
			    tconn_read(w, &c[i], scratch) < 0)
				tconn_fail(w, &c[i], errno, "receive");
		}
	}
	for (i = 0; i < n; i++) {
		w->st->unfinished += tconn_outstanding(&c[i]);
		if (c[i].fd >= 0)
			close(c[i].fd);
		free(c[i].ring);
	}
out_free:
	free(c);
	free(pf);
	free(scratch);
	return NULL;
}

/* ---------------------------------------------------------------- */
/* Running a load phase                                               */

/* Engine counters summed over sockets, by name. */
struct counters {
	int n;
	const char *names[MAX_COUNTERS];
	uint64_t values[MAX_COUNTERS];
};

/* counters_add - add n named values into c (new names appended). */
static void counters_add(struct counters *c, const char *const *names,
			 const uint64_t *values, int n)
{
	int i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < c->n; j++)
			if (strcmp(c->names[j], names[i]) == 0)
				break;
		if (j == c->n) {
			if (c->n == MAX_COUNTERS)
				continue;
			c->names[c->n] = names[i];
			c->values[c->n++] = 0;
		}
		c->values[j] += values[i];
	}
}

/* What one protocol's load phase produced. */
struct result {
	int ran;
	struct stats *st;       /* merged over workers */
	double window_s;        /* length of the measured window */
	double cpu_s;           /* process CPU time during the window */
	struct counters ctr;    /* Homa: the client sockets, summed */
	char setup_error[200];  /* a worker could not start */
};

/* worker_main_for - the thread function of a worker of protocol p. */
static void *(*worker_main_for(enum proto p, int open_loop))(void *)
{
	if (p == P_TCP)
		return tcp_main;
	return open_loop ? homa_open_main : homa_closed_main;
}

/*
 * run_phase - one load phase of protocol p: o->threads workers for
 * warm-up + duration, then up to drain seconds for the RPCs in flight.
 * Fills res (res->st owned by the caller afterwards).  Returns 0, or -1
 * when nothing could run (printed).
 */
static int run_phase(const struct options *o, enum proto p,
		     const struct workload *wl, const struct baseline *b,
		     const union sockaddr_in_union *homa_dest,
		     const union sockaddr_in_union *tcp_dest,
		     struct result *res)
{
	struct phase ph;
	struct worker *w = calloc((size_t)o->threads, sizeof(*w));
	uint64_t cpu0, cpu1;
	unsigned int budget;
	int i, started = 0, err, rc = -1;

	memset(res, 0, sizeof(*res));
	res->st = stats_new();
	if (!w || !res->st) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	memset(&ph, 0, sizeof(ph));
	ph.proto = p;
	ph.o = o;
	ph.wl = wl;
	ph.base = b;
	ph.homa_dest = *homa_dest;
	ph.tcp_dest = *tcp_dest;
	ph.measure_from = (uint64_t)(o->warmup * 1e9);
	ph.end = ph.measure_from + (uint64_t)(o->duration * 1e9);
	ph.drain_end = ph.end + (uint64_t)(o->drain * 1e9);
	if (o->open_loop)
		ph.gap_ns = 1e9 * o->threads / o->rate;
	for (i = 0; i < o->threads; i++) {
		w[i].ph = &ph;
		w[i].index = i;
		w[i].outstanding = o->outstanding / o->threads +
				   (i < o->outstanding % o->threads);
		w[i].st = stats_new();
		w[i].req = request_buffer(o);
		/* The same stream for every protocol: each sees the same
		 * sizes and arrival gaps. */
		workload_rng_seed(&w[i].rng, o->seed, (uint64_t)i + 1u);
		if (!w[i].st || !w[i].req) {
			fprintf(stderr, PROG ": out of memory\n");
			goto out;
		}
	}
	budget = (unsigned int)(o->warmup + o->duration + o->drain) +
		 STAGE_SLACK_S;
	watchdog_stage(budget, "%s load phase", proto_name[p]);
	ph.epoch = now_ns() + 100000000ull;     /* workers set up first */
	for (i = 0; i < o->threads; i++) {
		err = pthread_create(&w[i].thread, NULL,
				     worker_main_for(p, o->open_loop), &w[i]);
		if (err != 0) {
			fprintf(stderr, PROG ": pthread_create: %s\n",
				strerror(err));
			break;
		}
		started++;
	}
	sleep_until(ph.epoch + ph.measure_from);
	cpu0 = cpu_ns();
	sleep_until(ph.epoch + ph.end);
	cpu1 = cpu_ns();
	for (i = 0; i < started; i++) {
		pthread_join(w[i].thread, NULL);
		stats_merge(res->st, w[i].st);
		counters_add(&res->ctr, w[i].cnames, w[i].cvalues,
			     w[i].ncounters);
		if (w[i].setup_error[0] && !res->setup_error[0])
			snprintf(res->setup_error, sizeof(res->setup_error),
				 "worker %d: %s", i, w[i].setup_error);
	}
	watchdog_stage(0, "after the %s load phase", proto_name[p]);
	res->ran = started == o->threads;
	res->window_s = o->duration;
	res->cpu_s = (double)(cpu1 - cpu0) / 1e9;
	if (res->setup_error[0])
		fprintf(stderr, PROG ": %s: %s\n", proto_name[p],
			res->setup_error);
	rc = res->ran ? 0 : -1;
out:
	for (i = 0; w && i < o->threads; i++) {
		free(w[i].st);
		free(w[i].req);
	}
	free(w);
	return rc;
}

/* ---------------------------------------------------------------- */
/* Reports                                                            */

/* Everything a client (or loopback) run reports. */
struct report {
	const struct options *o;
	const struct workload *wl;
	const struct baseline *b;
	union sockaddr_in_union homa_dest;
	union sockaddr_in_union tcp_dest;
	struct result res[NPROTO];
	int have_server;                /* loopback: server side below */
	struct counters server_ctr;
	unsigned long served[NPROTO];
	unsigned long server_errors[NPROTO];
};

/* us_at - percentile q of h (ns) in microseconds. */
static double us_at(const struct homa_histogram *h, double q)
{
	return (double)homa_histogram_percentile(h, q) / 1000.0;
}

/* sd_at - percentile q of a slowdown histogram. */
static double sd_at(const struct homa_histogram *h, double q)
{
	return (double)homa_histogram_percentile(h, q) / SLOW_SCALE;
}

/* merged_all - the histograms of every bucket of st merged into out. */
static void merged_all(const struct stats *st, int nb, struct bucket_stats *out)
{
	int i;

	homa_histogram_reset(&out->rtt);
	homa_histogram_reset(&out->slow);
	out->req_bytes = out->resp_bytes = 0;
	for (i = 0; i < nb; i++) {
		homa_histogram_merge(&out->rtt, &st->b[i].rtt);
		homa_histogram_merge(&out->slow, &st->b[i].slow);
		out->req_bytes += st->b[i].req_bytes;
		out->resp_bytes += st->b[i].resp_bytes;
	}
}

/* load_text - the offered load of o, for people, into buf. */
static const char *load_text(const struct options *o,
			     const struct workload *wl, char *buf, size_t cap)
{
	if (o->open_loop)
		snprintf(buf, cap, "open loop, Poisson arrivals at %.1f RPC/s "
			 "(%.3f Gbit/s of requests)", o->rate,
			 o->rate * wl->mean * 8 / 1e9);
	else
		snprintf(buf, cap, "closed loop, %d RPC%s outstanding",
			 o->outstanding, o->outstanding == 1 ? "" : "s");
	return buf;
}

/* print_counter_group - the nonzero counters of c whose names start with
 * prefix (NULL: those no other group takes), prefix cut off. */
static void print_counter_group(FILE *f, const struct counters *c,
				const char *label, const char *prefix)
{
	static const char *const groups[] = { "packets_sent_",
					      "packets_rcvd_", "drop_" };
	int i, g, any = 0, mine;

	fprintf(f, "  %-18s", label);
	for (i = 0; i < c->n; i++) {
		if (prefix) {
			mine = strncmp(c->names[i], prefix,
				       strlen(prefix)) == 0;
		} else {
			mine = 1;
			for (g = 0; g < 3; g++)
				if (strncmp(c->names[i], groups[g],
					    strlen(groups[g])) == 0)
					mine = 0;
		}
		if (!mine || c->values[i] == 0)
			continue;
		fprintf(f, " %s=%llu", c->names[i] + (prefix ? strlen(prefix)
							    : 0),
			(unsigned long long)c->values[i]);
		any = 1;
	}
	fprintf(f, "%s\n", any ? "" : " (none)");
}

/* print_counters - c grouped: packets by type, drops by reason, the rest
 * (resends, timeouts, RPCs, ...). */
static void print_counters(FILE *f, const char *who, const struct counters *c)
{
	fprintf(f, "Homa engine counters, %s (nonzero; names as the kernel "
		"module's metrics):\n", who);
	print_counter_group(f, c, "packets sent:", "packets_sent_");
	print_counter_group(f, c, "packets received:", "packets_rcvd_");
	print_counter_group(f, c, "drops:", "drop_");
	print_counter_group(f, c, "other:", NULL);
}

/* print_baseline - the unloaded RTT table. */
static void print_baseline(FILE *f, const struct report *r)
{
	const struct baseline *b = r->b;
	uint32_t sizes[2 * MAX_CAL];
	int n = 0, p, i, j;

	for (p = 0; p < NPROTO; p++)
		for (i = 0; i < b->n[p]; i++) {
			for (j = 0; j < n && sizes[j] != b->size[p][i]; j++)
				;
			if (j == n)
				sizes[n++] = b->size[p][i];
		}
	for (i = 1; i < n; i++)         /* insertion sort: n is small */
		for (j = i; j > 0 && sizes[j - 1] > sizes[j]; j--) {
			uint32_t t = sizes[j];

			sizes[j] = sizes[j - 1];
			sizes[j - 1] = t;
		}
	fprintf(f, "unloaded RTT, us (%s; median of up to %d RPCs sent one "
		"at a time):\n  %9s %9s %9s\n", b->from_file ?
		r->o->baseline_in : "measured now", r->o->calib_rpcs,
		"size (B)", "homa", "tcp");
	for (i = 0; i < n; i++) {
		fprintf(f, "  %9u", sizes[i]);
		for (p = 0; p < NPROTO; p++) {
			for (j = 0; j < b->n[p] && b->size[p][j] != sizes[i];
			     j++)
				;
			if (j < b->n[p])
				fprintf(f, " %9.1f", b->rtt_ns[p][j] / 1000);
			else
				fprintf(f, " %9s", "-");
		}
		fprintf(f, "\n");
	}
	fprintf(f, "slowdown = RTT / %s unloaded RTT of the message's size "
		"(linear between the sizes above)\n\n", b->own ?
		"the protocol's own" : "the lowest");
}

/* print_bucket_row - one line of a result table. */
static void print_bucket_row(FILE *f, const char *label, uint32_t lo,
			     uint32_t hi, const struct bucket_stats *bs)
{
	char range[40];

	snprintf(range, sizeof(range), lo == hi ? "%u" : "%u-%u", lo, hi);
	fprintf(f, "  %-6s %-16s %9llu", label, range,
		(unsigned long long)bs->rtt.count);
	if (bs->rtt.count == 0) {
		fprintf(f, "\n");
		return;
	}
	fprintf(f, " %9.1f %9.1f %9.1f", us_at(&bs->rtt, 50),
		us_at(&bs->rtt, 99), us_at(&bs->rtt, 99.9));
	if (bs->slow.count)
		fprintf(f, " %7.2f %7.2f %7.2f\n", sd_at(&bs->slow, 50),
			sd_at(&bs->slow, 99), sd_at(&bs->slow, 99.9));
	else
		fprintf(f, " %7s %7s %7s\n", "-", "-", "-");
}

/* print_result - one protocol's summary line and table. */
static void print_result(FILE *f, const struct report *r, enum proto p)
{
	const struct result *res = &r->res[p];
	const struct stats *st = res->st;
	const struct workload *wl = r->wl;
	struct bucket_stats *all = malloc(sizeof(*all));
	char label[16];
	double w = res->window_s;
	int i;

	if (!all)
		return;
	merged_all(st, wl->nbuckets, all);
	fprintf(f, "%s: %llu RPCs in %.1f s measured: %.1f RPC/s, %.3f "
		"Gbit/s of requests, %.3f Gbit/s requests+responses, CPU "
		"%.1f us/RPC (process)\n", proto_name[p],
		(unsigned long long)st->completed, w, st->completed / w,
		all->req_bytes * 8 / w / 1e9,
		(all->req_bytes + all->resp_bytes) * 8 / w / 1e9,
		st->completed ? res->cpu_s * 1e6 / st->completed : 0.0);
	fprintf(f, "  issued %llu (%.3f Gbit/s), failed %llu, unfinished "
		"%llu, skipped %llu (at --max-outstanding), late %llu "
		"(> 1 ms behind), warm-up %llu\n",
		(unsigned long long)st->sent, st->sent_bytes * 8 / w / 1e9,
		(unsigned long long)st->failed,
		(unsigned long long)st->unfinished,
		(unsigned long long)st->skipped,
		(unsigned long long)st->late, (unsigned long long)st->warm);
	if (st->first_error[0])
		fprintf(f, "  first error: %s\n", st->first_error);
	fprintf(f, "  %-6s %-16s %9s %9s %9s %9s %7s %7s %7s\n", "bucket",
		"sizes (B)", "RPCs", "p50 us", "p99 us", "p999 us", "sd p50",
		"sd p99", "sd p999");
	for (i = 0; i < wl->nbuckets; i++) {
		snprintf(label, sizeof(label), "%d", i + 1);
		print_bucket_row(f, label, wl->lo[i], wl->hi[i], &st->b[i]);
	}
	if (wl->nbuckets > 1)
		print_bucket_row(f, "all", wl->min, wl->max, all);
	fprintf(f, "\n");
	free(all);
}

/*
 * print_settings - one line naming the engine settings not at their
 * defaults (from HOMA_<NAME> variables), so that a result says what it
 * was measured with.
 */
static void print_settings(FILE *f)
{
	const struct homa_config_info *t;
	int n, shown = 0;
	int64_t v;

	t = homa_config_table(&n);
	for (int i = 0; i < n; i++) {
		if (homa_config_get(t[i].name, &v) < 0 || v == t[i].def)
			continue;
		fprintf(f, "%s%s=%lld (default %lld)",
			shown++ ? ", " : "engine settings not at their defaults: ",
			t[i].name, (long long)v, (long long)t[i].def);
	}
	fprintf(f, shown ? "\n\n" : "engine settings: all at their defaults\n\n");
}

/* print_text - the whole client report for people. */
static void print_text(FILE *f, const struct report *r)
{
	const struct options *o = r->o;
	char a[64], t[64], load[128], resp[32];
	int p, i;

	if (o->resp_size == SPEC_ECHO)
		snprintf(resp, sizeof(resp), "echoed");
	else
		snprintf(resp, sizeof(resp), "%u B", o->resp_size);
	fprintf(f, PROG " %s: server %s (TCP %s), workload %s (mean %.0f B, "
		"%d bucket%s), %s,\n  %d thread%s, responses %s, %.1f s "
		"warm-up + %.1f s measured per protocol\n\n",
		o->mode == M_LOOPBACK ? "loopback" : "client",
		addr_text(&r->homa_dest, a, sizeof(a)),
		addr_text(&r->tcp_dest, t, sizeof(t)), r->wl->name,
		r->wl->mean, r->wl->nbuckets, r->wl->nbuckets == 1 ? "" : "s",
		load_text(o, r->wl, load, sizeof(load)), o->threads,
		o->threads == 1 ? "" : "s", resp, o->warmup, o->duration);
	print_settings(f);
	print_baseline(f, r);
	for (p = 0; p < NPROTO; p++)
		if (r->res[p].ran)
			print_result(f, r, (enum proto)p);
	if (r->res[P_HOMA].ran && r->res[P_TCP].ran) {
		fprintf(f, "P99 slowdown, tcp / homa, per bucket:");
		for (i = 0; i < r->wl->nbuckets; i++) {
			const struct homa_histogram *h =
				&r->res[P_HOMA].st->b[i].slow;
			const struct homa_histogram *c =
				&r->res[P_TCP].st->b[i].slow;

			if (h->count && c->count)
				fprintf(f, " %d:%.3g", i + 1,
					sd_at(c, 99) / sd_at(h, 99));
			else
				fprintf(f, " %d:-", i + 1);
		}
		fprintf(f, "\n\n");
	}
	if (r->res[P_HOMA].ran)
		print_counters(f, "client sockets", &r->res[P_HOMA].ctr);
	if (r->have_server) {
		fprintf(f, "server: %lu Homa and %lu TCP requests answered, "
			"%lu and %lu errors\n", r->served[P_HOMA],
			r->served[P_TCP], r->server_errors[P_HOMA],
			r->server_errors[P_TCP]);
		print_counters(f, "server socket", &r->server_ctr);
	}
}

/* json_num - v with 3 decimals. */
static void json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fprintf(f, "null");
	else
		fprintf(f, "%.3f", v);
}

/* json_string - s quoted, with quotes, backslashes and controls escaped. */
static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* json_hist - {"count","min","max","p50","p99","p999","b":[[low,width,
 * count],...]} of h, values divided by scale. */
static void json_hist(FILE *f, const struct homa_histogram *h, double scale)
{
	size_t i;
	int first = 1;

	fprintf(f, "{\"count\":%llu,\"scale\":%g", (unsigned long long)h->count,
		scale);
	if (h->count) {
		fprintf(f, ",\"min\":%llu,\"max\":%llu,\"p50\":",
			(unsigned long long)h->min,
			(unsigned long long)h->max);
		json_num(f, (double)homa_histogram_percentile(h, 50) / scale);
		fprintf(f, ",\"p99\":");
		json_num(f, (double)homa_histogram_percentile(h, 99) / scale);
		fprintf(f, ",\"p999\":");
		json_num(f, (double)homa_histogram_percentile(h, 99.9) /
			    scale);
	}
	fprintf(f, ",\"b\":[");
	for (i = 0; i < HOMA_HIST_BUCKETS; i++) {
		if (!h->buckets[i])
			continue;
		fprintf(f, "%s[%llu,%llu,%llu]", first ? "" : ",",
			(unsigned long long)homa_histogram_bucket_low(i),
			(unsigned long long)homa_histogram_bucket_width(i),
			(unsigned long long)h->buckets[i]);
		first = 0;
	}
	fprintf(f, "]}");
}

/* json_counters - {"name":value,...} of every counter of c. */
static void json_counters(FILE *f, const struct counters *c)
{
	int i;

	fprintf(f, "{");
	for (i = 0; i < c->n; i++) {
		fprintf(f, "%s", i ? "," : "");
		json_string(f, c->names[i]);
		fprintf(f, ":%llu", (unsigned long long)c->values[i]);
	}
	fprintf(f, "}");
}

/* json_bucket - one bucket object. */
static void json_bucket(FILE *f, const char *label, uint32_t lo, uint32_t hi,
			const struct bucket_stats *bs)
{
	fprintf(f, "{\"bucket\":\"%s\",\"lo\":%u,\"hi\":%u,\"rpcs\":%llu,"
		"\"req_bytes\":%llu,\"resp_bytes\":%llu,\"rtt_us\":", label,
		lo, hi, (unsigned long long)bs->rtt.count,
		(unsigned long long)bs->req_bytes,
		(unsigned long long)bs->resp_bytes);
	json_hist(f, &bs->rtt, 1000.0);
	fprintf(f, ",\"slowdown\":");
	json_hist(f, &bs->slow, SLOW_SCALE);
	fprintf(f, "}");
}

/* json_result - one protocol's result object. */
static void json_result(FILE *f, const struct report *r, enum proto p)
{
	const struct result *res = &r->res[p];
	const struct stats *st = res->st;
	struct bucket_stats *all = malloc(sizeof(*all));
	double w = res->window_s;
	char label[16];
	int i;

	if (!all)
		return;
	merged_all(st, r->wl->nbuckets, all);
	fprintf(f, "{\"window_s\":");
	json_num(f, w);
	fprintf(f, ",\"issued\":%llu,\"completed\":%llu,\"failed\":%llu,"
		"\"unfinished\":%llu,\"skipped\":%llu,\"late\":%llu,"
		"\"warmup_rpcs\":%llu,\"rpcs_per_s\":",
		(unsigned long long)st->sent,
		(unsigned long long)st->completed,
		(unsigned long long)st->failed,
		(unsigned long long)st->unfinished,
		(unsigned long long)st->skipped,
		(unsigned long long)st->late, (unsigned long long)st->warm);
	json_num(f, st->completed / w);
	fprintf(f, ",\"issued_gbps\":");
	json_num(f, st->sent_bytes * 8 / w / 1e9);
	fprintf(f, ",\"req_gbps\":");
	json_num(f, all->req_bytes * 8 / w / 1e9);
	fprintf(f, ",\"total_gbps\":");
	json_num(f, (all->req_bytes + all->resp_bytes) * 8 / w / 1e9);
	fprintf(f, ",\"cpu_s\":");
	json_num(f, res->cpu_s);
	fprintf(f, ",\"cpu_us_per_rpc\":");
	json_num(f, st->completed ? res->cpu_s * 1e6 / st->completed : NAN);
	fprintf(f, ",\"first_error\":");
	json_string(f, st->first_error);
	fprintf(f, ",\"setup_error\":");
	json_string(f, res->setup_error);
	fprintf(f, ",\"buckets\":[");
	for (i = 0; i < r->wl->nbuckets; i++) {
		snprintf(label, sizeof(label), "%d", i + 1);
		fprintf(f, "%s", i ? "," : "");
		json_bucket(f, label, r->wl->lo[i], r->wl->hi[i], &st->b[i]);
	}
	fprintf(f, "],\"all\":");
	json_bucket(f, "all", r->wl->min, r->wl->max, all);
	if (p == P_HOMA) {
		fprintf(f, ",\"counters\":");
		json_counters(f, &res->ctr);
	}
	fprintf(f, "}");
	free(all);
}

/* json_settings - the engine settings in effect that shape results. */
static void json_settings(FILE *f)
{
	static const char *const names[] = {
		"link_mbps", "unsched_bytes", "mtu", "poll_usecs",
		"max_overcommit", "max_incoming", "num_priorities",
		"transport", "flags",
	};
	int64_t v;
	size_t i;

	fprintf(f, "{");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (homa_config_get(names[i], &v) < 0)
			continue;
		fprintf(f, "%s\"%s\":%lld", i ? "," : "", names[i],
			(long long)v);
	}
	fprintf(f, "}");
}

/* json_host - facts about this machine. */
static void json_host(FILE *f)
{
	struct utsname u;

	fprintf(f, "{\"nproc\":%ld,\"kernel\":", sysconf(_SC_NPROCESSORS_ONLN));
	json_string(f, uname(&u) == 0 ? u.release : "");
	fprintf(f, "}");
}

/* print_json - the whole client report as one JSON object on one line. */
static void print_json(FILE *f, const struct report *r)
{
	const struct options *o = r->o;
	const struct baseline *b = r->b;
	char a[64], t[64];
	int p, i, first = 1;

	fprintf(f, "{\"tool\":\"homa-perf\",\"mode\":\"%s\",\"server\":",
		o->mode == M_LOOPBACK ? "loopback" : "client");
	json_string(f, addr_text(&r->homa_dest, a, sizeof(a)));
	fprintf(f, ",\"tcp_server\":");
	json_string(f, addr_text(&r->tcp_dest, t, sizeof(t)));
	fprintf(f, ",\"workload\":");
	json_string(f, r->wl->name);
	fprintf(f, ",\"mean_size\":");
	json_num(f, r->wl->mean);
	fprintf(f, ",\"loop\":\"%s\",\"rate\":", o->open_loop ? "open"
							   : "closed");
	json_num(f, o->open_loop ? o->rate : NAN);
	fprintf(f, ",\"offered_gbps\":");
	json_num(f, o->open_loop ? o->rate * r->wl->mean * 8 / 1e9 : NAN);
	fprintf(f, ",\"outstanding\":%d,\"threads\":%d,\"tcp_conns\":%d,"
		"\"echo\":%s,\"response_bytes\":%u,\"duration_s\":",
		o->open_loop ? 0 : o->outstanding, o->threads, o->tcp_conns,
		o->resp_size == SPEC_ECHO ? "true" : "false",
		o->resp_size == SPEC_ECHO ? 0 : o->resp_size);
	json_num(f, o->duration);
	fprintf(f, ",\"warmup_s\":");
	json_num(f, o->warmup);
	fprintf(f, ",\"seed\":%llu,\"slowdown_base\":\"%s\",\"settings\":",
		(unsigned long long)o->seed, b->own ? "own" : "best");
	json_settings(f);
	fprintf(f, ",\"host\":");
	json_host(f);
	fprintf(f, ",\"baseline\":{");
	for (p = 0; p < NPROTO; p++) {
		if (b->n[p] == 0)
			continue;
		fprintf(f, "%s\"%s\":[", first ? "" : ",", proto_name[p]);
		first = 0;
		for (i = 0; i < b->n[p]; i++)
			fprintf(f, "%s[%u,%.0f,%ld]", i ? "," : "",
				b->size[p][i], b->rtt_ns[p][i], b->rpcs[p][i]);
		fprintf(f, "]");
	}
	fprintf(f, "},\"results\":{");
	first = 1;
	for (p = 0; p < NPROTO; p++) {
		if (!r->res[p].ran)
			continue;
		fprintf(f, "%s\"%s\":", first ? "" : ",", proto_name[p]);
		json_result(f, r, (enum proto)p);
		first = 0;
	}
	fprintf(f, "}");
	if (r->have_server) {
		fprintf(f, ",\"server_side\":{\"homa_served\":%lu,\"tcp_served\":"
			"%lu,\"homa_errors\":%lu,\"tcp_errors\":%lu,"
			"\"counters\":", r->served[P_HOMA], r->served[P_TCP],
			r->server_errors[P_HOMA], r->server_errors[P_TCP]);
		json_counters(f, &r->server_ctr);
		fprintf(f, "}");
	}
	fprintf(f, "}\n");
}

/* ---------------------------------------------------------------- */
/* Options                                                            */

/* usage - the --help text. */
static void usage(FILE *f)
{
	fprintf(f,
"usage: homa-perf server   --port P [--tcp-port Q | --no-tcp] [--threads T]\n"
"                          [--server-epoll] [--duration S] [--json]\n"
"       homa-perf client   --server ADDR:P (--workload W | --size B) [load]\n"
"                          [options]\n"
"       homa-perf loopback (--workload W | --size B) [load] [options]\n"
"\n"
"Homa RPCs under a workload, with TCP measured by the same workload in the\n"
"same run: p50/p99/p999 RTT and slowdown per message-size bucket, RPCs/s,\n"
"Gbit/s, CPU time per RPC, and the Homa engine's counters.\n"
"\n"
"server: answers Homa requests on port P (T threads, default 2) and TCP on\n"
"  Q (default P; one thread per connection) until SIGINT/SIGTERM or S\n"
"  seconds (default 0: no limit); prints \"ready\" on stderr when serving.\n"
"client: loads a server (IPv4 ADDR).  loopback: starts a server in this\n"
"  process on 127.0.0.1:P (--port, default 4000; --server-threads T) and\n"
"  loads it.\n"
"--server-epoll (server, loopback): the Homa server threads wait in\n"
"  epoll_wait on the socket and then read it without blocking until it is\n"
"  empty, as an event-driven server does (default: blocking homa_recvmsg).\n"
"\n"
"What to send:\n"
"  --workload W       w1..w5 (the Homa papers' workloads, built in) or a CDF\n"
"                     file (\"size cum\" lines); sizes over 1,000,000 bytes\n"
"                     are cut to it\n"
"  --workload-dir D   read w1..w5 from D/wN.cdf instead (default\n"
"                     $HOMA_WORKLOAD_DIR, else the built-in copies)\n"
"  --size B           every request B bytes (1..1000000)\n"
"  --buckets N        size buckets of a workload: N quantiles of messages\n"
"                     by size (1..%d; default 10: bucket 1 = shortest 10%%)\n"
"  --resp-size B      response bytes (1..1000000; default 100)\n"
"  --echo             responses echo the request\n"
"Load (one of):\n"
"  --outstanding N    closed loop, N RPCs in flight in total (default 1)\n"
"  --rate R           open loop, Poisson arrivals of R RPCs/s in total\n"
"  --load-gbps G      open loop, R = G Gbit/s of request payload / mean size\n"
"  --max-outstanding M  open loop: at most M RPCs in flight per thread;\n"
"                     arrivals beyond are skipped and counted (default 1000)\n"
"Run:\n"
"  --proto homa|tcp|both  protocols, measured one after the other (default\n"
"                     both)\n"
"  --threads T        client threads (1..%d; default 1), each with its own\n"
"                     Homa socket or TCP connections; load split evenly\n"
"  --tcp-conns K      TCP connections per thread (default 1); requests are\n"
"                     pipelined, each on the connection with fewest pending\n"
"  --tcp-port Q       the server's TCP port (default: the Homa port)\n"
"  --duration S       measured seconds per protocol (up to 600; default 5;\n"
"                     0: only calibrate)\n"
"  --warmup S         seconds before that, not measured (default: duration/5,\n"
"                     at most 1)\n"
"  --drain S          seconds allowed afterwards for RPCs in flight (default\n"
"                     5); those still open are counted as unfinished\n"
"  --seed N           random seed (default 1)\n"
"Slowdown:\n"
"  Before loading, the unloaded RTT is measured per protocol at sizes\n"
"  spanning the workload (median of up to --calib-rpcs RPCs one at a time,\n"
"  default 100, at most 1 s per size); an RPC's slowdown is its RTT over\n"
"  the unloaded RTT of its size, interpolated linearly between those sizes.\n"
"  --slowdown-base best|own  divide by the lowest unloaded RTT of the\n"
"                     protocols measured (default) or the protocol's own\n"
"  --baseline FILE    read the unloaded RTTs from FILE instead\n"
"  --baseline-out FILE  write them to FILE\n"
"Output:\n"
"  --json             one JSON object (with the histograms) instead of tables\n"
"  --help             this text\n"
"\n"
"Requests carry in their first 4 bytes the response length the server\n"
"sends (0xffffffff: echo).  Homa settings come from HOMA_* variables (for\n"
"example HOMA_LINK_MBPS); the report names those not at their defaults.\n"
"Every stage has a time budget (watchdog).\n"
"Exit status: 0 every measured RPC completed; 1 an RPC failed or was left\n"
"unfinished, or set-up failed; 2 bad options.\n", MAX_BUCKETS, MAX_THREADS);
}

/* Which option may be given in which mode (bit per mode). */
#define IN_SERVER   (1u << M_SERVER)
#define IN_CLIENT   (1u << M_CLIENT)
#define IN_LOOP     (1u << M_LOOPBACK)
#define IN_LOAD     (IN_CLIENT | IN_LOOP)
#define IN_ANY      (IN_SERVER | IN_LOAD)

enum opt_id {
	O_SERVER = 256, O_PORT, O_TCP_PORT, O_NO_TCP, O_THREADS,
	O_SERVER_THREADS, O_SERVER_EPOLL, O_WORKLOAD, O_WORKLOAD_DIR, O_SIZE,
	O_BUCKETS, O_RESP_SIZE, O_ECHO, O_RATE, O_LOAD_GBPS, O_OUTSTANDING,
	O_MAX_OUTSTANDING, O_TCP_CONNS, O_DURATION, O_WARMUP, O_DRAIN,
	O_PROTO, O_BASELINE, O_BASELINE_OUT, O_CALIB_RPCS, O_SLOWDOWN_BASE,
	O_SEED, O_JSON, O_HELP, O_END
};

/* In the order of enum opt_id (long_opts[id - O_SERVER] is id's). */
static const struct option long_opts[] = {
	{ "server", required_argument, NULL, O_SERVER },
	{ "port", required_argument, NULL, O_PORT },
	{ "tcp-port", required_argument, NULL, O_TCP_PORT },
	{ "no-tcp", no_argument, NULL, O_NO_TCP },
	{ "threads", required_argument, NULL, O_THREADS },
	{ "server-threads", required_argument, NULL, O_SERVER_THREADS },
	{ "server-epoll", no_argument, NULL, O_SERVER_EPOLL },
	{ "workload", required_argument, NULL, O_WORKLOAD },
	{ "workload-dir", required_argument, NULL, O_WORKLOAD_DIR },
	{ "size", required_argument, NULL, O_SIZE },
	{ "buckets", required_argument, NULL, O_BUCKETS },
	{ "resp-size", required_argument, NULL, O_RESP_SIZE },
	{ "echo", no_argument, NULL, O_ECHO },
	{ "rate", required_argument, NULL, O_RATE },
	{ "load-gbps", required_argument, NULL, O_LOAD_GBPS },
	{ "outstanding", required_argument, NULL, O_OUTSTANDING },
	{ "max-outstanding", required_argument, NULL, O_MAX_OUTSTANDING },
	{ "tcp-conns", required_argument, NULL, O_TCP_CONNS },
	{ "duration", required_argument, NULL, O_DURATION },
	{ "warmup", required_argument, NULL, O_WARMUP },
	{ "drain", required_argument, NULL, O_DRAIN },
	{ "proto", required_argument, NULL, O_PROTO },
	{ "baseline", required_argument, NULL, O_BASELINE },
	{ "baseline-out", required_argument, NULL, O_BASELINE_OUT },
	{ "calib-rpcs", required_argument, NULL, O_CALIB_RPCS },
	{ "slowdown-base", required_argument, NULL, O_SLOWDOWN_BASE },
	{ "seed", required_argument, NULL, O_SEED },
	{ "json", no_argument, NULL, O_JSON },
	{ "help", no_argument, NULL, O_HELP },
	{ NULL, 0, NULL, 0 },
};

/* opt_modes - the modes option id is valid in. */
static unsigned int opt_modes(int id)
{
	switch (id) {
	case O_SERVER: return IN_CLIENT;
	case O_PORT: return IN_SERVER | IN_LOOP;
	case O_NO_TCP: return IN_SERVER;
	case O_SERVER_THREADS: return IN_LOOP;
	case O_SERVER_EPOLL: return IN_SERVER | IN_LOOP;
	case O_TCP_PORT: case O_THREADS: case O_DURATION: case O_JSON:
	case O_HELP:
		return IN_ANY;
	default: return IN_LOAD;
	}
}

/* parse_long - option name's integer value in lo..hi, or exit 2. */
static long parse_long(const char *name, const char *arg, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || v < lo || v > hi)
		bad_option("--%s: expected an integer in %ld..%ld, got '%s'",
			   name, lo, hi, arg);
	return v;
}

/* parse_double - option name's value in [lo, hi] (> lo when open), or
 * exit 2. */
static double parse_double(const char *name, const char *arg, double lo,
			   double hi, int open)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || isnan(v) || v < lo ||
	    v > hi || (open && v == lo))
		bad_option("--%s: expected a number %s %g and at most %g, "
			   "got '%s'", name, open ? "above" : "of at least",
			   lo, hi, arg);
	return v;
}

/* parse_server - "IPV4:PORT" into o->server, or exit 2. */
static void parse_server(struct options *o, const char *arg)
{
	char host[64];
	const char *colon = strrchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : 0;

	if (n == 0 || n >= sizeof(host))
		bad_option("--server: expected IPV4:PORT, got '%s'", arg);
	memcpy(host, arg, n);
	host[n] = '\0';
	memset(&o->server, 0, sizeof(o->server));
	o->server.in4.sin_family = AF_INET;
	if (inet_pton(AF_INET, host, &o->server.in4.sin_addr) != 1)
		bad_option("--server: '%s' is not an IPv4 address", host);
	o->server.in4.sin_port = htons((uint16_t)parse_long("server port",
		colon + 1, 1, HOMA_MIN_DEFAULT_PORT - 1));
}

/* mode_of - the mode a subcommand names, or M_NONE. */
static enum mode mode_of(const char *s)
{
	if (strcmp(s, "server") == 0)
		return M_SERVER;
	if (strcmp(s, "client") == 0)
		return M_CLIENT;
	if (strcmp(s, "loopback") == 0)
		return M_LOOPBACK;
	return M_NONE;
}

/* parse_one - apply option id with argument arg to o. */
static void parse_one(struct options *o, int id, const char *arg)
{
	switch (id) {
	case O_SERVER: parse_server(o, arg); break;
	case O_PORT:
		o->port = (int)parse_long("port", arg, 1,
					  HOMA_MIN_DEFAULT_PORT - 1);
		break;
	case O_TCP_PORT:
		o->tcp_port = (int)parse_long("tcp-port", arg, 1, 65535);
		break;
	case O_NO_TCP: o->no_tcp_server = 1; break;
	case O_THREADS:
		o->threads = (int)parse_long("threads", arg, 1, MAX_THREADS);
		break;
	case O_SERVER_THREADS:
		o->server_threads = (int)parse_long("server-threads", arg, 1,
						    MAX_THREADS);
		break;
	case O_SERVER_EPOLL: o->server_epoll = 1; break;
	case O_WORKLOAD: o->workload = arg; break;
	case O_WORKLOAD_DIR: o->workload_dir = arg; break;
	case O_SIZE:
		o->size = (uint32_t)parse_long("size", arg, 1, MAX_MSG);
		break;
	case O_BUCKETS:
		o->buckets = (int)parse_long("buckets", arg, 1, MAX_BUCKETS);
		break;
	case O_RESP_SIZE:
		o->resp_size = (uint32_t)parse_long("resp-size", arg, 1,
						    MAX_MSG);
		break;
	case O_ECHO: o->resp_size = SPEC_ECHO; break;
	case O_RATE:
		o->rate = parse_double("rate", arg, 0, 1e8, 1);
		break;
	case O_LOAD_GBPS:
		o->load_gbps = parse_double("load-gbps", arg, 0, 1000, 1);
		break;
	case O_OUTSTANDING:
		o->outstanding = (int)parse_long("outstanding", arg, 1,
						 100000);
		break;
	case O_MAX_OUTSTANDING:
		o->max_outstanding = (int)parse_long("max-outstanding", arg,
						     1, 100000);
		break;
	case O_TCP_CONNS:
		o->tcp_conns = (int)parse_long("tcp-conns", arg, 1, 256);
		break;
	case O_DURATION:
		o->duration = parse_double("duration", arg, 0, 86400, 0);
		break;
	case O_WARMUP:
		o->warmup = parse_double("warmup", arg, 0, 60, 0);
		break;
	case O_DRAIN:
		o->drain = parse_double("drain", arg, 0, 60, 0);
		break;
	case O_PROTO:
		if (strcmp(arg, "homa") == 0)
			o->protos = 1u << P_HOMA;
		else if (strcmp(arg, "tcp") == 0)
			o->protos = 1u << P_TCP;
		else if (strcmp(arg, "both") == 0)
			o->protos = (1u << P_HOMA) | (1u << P_TCP);
		else
			bad_option("--proto: expected homa, tcp or both, "
				   "got '%s'", arg);
		break;
	case O_BASELINE: o->baseline_in = arg; break;
	case O_BASELINE_OUT: o->baseline_out = arg; break;
	case O_CALIB_RPCS:
		o->calib_rpcs = (int)parse_long("calib-rpcs", arg, 3, 100000);
		break;
	case O_SLOWDOWN_BASE:
		if (strcmp(arg, "best") == 0)
			o->slowdown_own = 0;
		else if (strcmp(arg, "own") == 0)
			o->slowdown_own = 1;
		else
			bad_option("--slowdown-base: expected best or own, "
				   "got '%s'", arg);
		break;
	case O_SEED:
		o->seed = (uint64_t)parse_long("seed", arg, 0, LONG_MAX);
		break;
	case O_JSON: o->json = 1; break;
	default: break;
	}
}

/*
 * parse_options - fill o from the command line (argv[1] is the mode).
 * Prints --help and exits 0 when asked; exits 2 on any mistake.
 */
static void parse_options(int argc, char **argv, struct options *o)
{
	static const char *const mode_name[] = {
		"", "server", "client", "loopback"
	};
	int seen[O_END - O_SERVER] = { 0 };
	int c;

	memset(o, 0, sizeof(*o));
	if (argc < 2) {
		usage(stderr);
		exit(2);
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		exit(0);
	}
	o->mode = mode_of(argv[1]);
	if (o->mode == M_NONE)
		bad_option("the first argument must be server, client or "
			   "loopback, not '%s'", argv[1]);
	o->port = 4000;
	o->buckets = 10;
	o->resp_size = 100;
	o->outstanding = 1;
	o->max_outstanding = 1000;
	o->tcp_conns = 1;
	o->warmup = -1;
	o->drain = 5;
	o->protos = (1u << P_HOMA) | (1u << P_TCP);
	o->calib_rpcs = 100;
	o->seed = 1;
	opterr = 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		if (c == 'h')
			c = O_HELP;
		if (c == '?' && optopt >= O_SERVER && optopt < O_END)
			bad_option("option --%s %s",
				   long_opts[optopt - O_SERVER].name,
				   long_opts[optopt - O_SERVER].has_arg ?
				   "needs a value" : "takes no value");
		if (c < O_SERVER || c >= O_END)
			bad_option("unknown option '%s'", argv[optind - 1]);
		if (optarg && strncmp(optarg, "--", 2) == 0)
			bad_option("option --%s needs a value (not '%s')",
				   long_opts[c - O_SERVER].name, optarg);
		if (c == O_HELP) {
			usage(stdout);
			exit(0);
		}
		if (!(opt_modes(c) & (1u << o->mode)))
			bad_option("--%s is not an option of '%s'",
				   long_opts[c - O_SERVER].name,
				   mode_name[o->mode]);
		if (seen[c - O_SERVER]++)
			bad_option("--%s given twice",
				   long_opts[c - O_SERVER].name);
		parse_one(o, c, optarg);
	}
	if (optind < argc)
		bad_option("unexpected argument '%s'", argv[optind]);
#define SEEN(id) (seen[(id) - O_SERVER] > 0)
	if (o->mode == M_SERVER) {
		if (!SEEN(O_PORT))
			bad_option("server needs --port");
		if (SEEN(O_TCP_PORT) && o->no_tcp_server)
			bad_option("--tcp-port and --no-tcp exclude each "
				   "other");
		if (!SEEN(O_THREADS))
			o->threads = 2;
		if (!o->tcp_port)
			o->tcp_port = o->port;
		return;
	}
	if (o->duration > 600)
		bad_option("--duration: at most 600 seconds per protocol in "
			   "client and loopback modes");
	if (o->mode == M_CLIENT && !SEEN(O_SERVER))
		bad_option("client needs --server ADDR:PORT");
	if (SEEN(O_WORKLOAD) == SEEN(O_SIZE))
		bad_option("give exactly one of --workload and --size");
	if (o->workload && !homa_workload_builtin(o->workload) &&
	    !file_readable(o->workload))
		bad_option("--workload: '%s' is neither w1..w5 nor a readable "
			   "CDF file", o->workload);
	if (SEEN(O_ECHO) && SEEN(O_RESP_SIZE))
		bad_option("--echo and --resp-size exclude each other");
	if (SEEN(O_RATE) + SEEN(O_LOAD_GBPS) + SEEN(O_OUTSTANDING) > 1)
		bad_option("give at most one of --rate, --load-gbps and "
			   "--outstanding");
	if (SEEN(O_MAX_OUTSTANDING) && !SEEN(O_RATE) && !SEEN(O_LOAD_GBPS))
		bad_option("--max-outstanding applies to open loop only "
			   "(--rate or --load-gbps)");
	if (SEEN(O_BUCKETS) && !o->workload)
		bad_option("--buckets applies to --workload only");
	if (SEEN(O_BASELINE) && (SEEN(O_CALIB_RPCS)))
		bad_option("--calib-rpcs has no use with --baseline");
	o->open_loop = SEEN(O_RATE) || SEEN(O_LOAD_GBPS);
	if (!SEEN(O_THREADS))
		o->threads = 1;
	if (!o->open_loop && o->outstanding < o->threads)
		bad_option("--outstanding %d is fewer than --threads %d: "
			   "every thread needs one", o->outstanding,
			   o->threads);
	if (o->mode == M_LOOPBACK && !SEEN(O_SERVER_THREADS))
		o->server_threads = 2;
	if (!SEEN(O_DURATION))
		o->duration = 5;
	if (o->warmup < 0)
		o->warmup = o->duration / 5 < 1 ? o->duration / 5 : 1;
	if (o->mode == M_CLIENT) {
		if (!o->tcp_port)
			o->tcp_port = ntohs(o->server.in4.sin_port);
	} else if (!o->tcp_port) {
		o->tcp_port = o->port;
	}
#undef SEEN
}

/* ---------------------------------------------------------------- */
/* Modes                                                              */

/* print_server_report - what a server did, as text or JSON. */
static void print_server_report(const struct options *o,
				struct homa_server *hs,
				struct tcp_server *ts, double secs,
				double cpu_s, const struct counters *c)
{
	unsigned long hn = atomic_load(&hs->served);
	unsigned long tn = ts ? atomic_load(&ts->served) : 0;
	unsigned long he = atomic_load(&hs->errors);
	unsigned long te = ts ? atomic_load(&ts->errors) : 0;

	if (o->json) {
		printf("{\"tool\":\"homa-perf\",\"mode\":\"server\",\"port\":"
		       "%d,\"tcp_port\":%d,\"threads\":%d,\"seconds\":",
		       o->port, ts ? o->tcp_port : 0, o->threads);
		json_num(stdout, secs);
		printf(",\"cpu_s\":");
		json_num(stdout, cpu_s);
		printf(",\"homa_served\":%lu,\"tcp_served\":%lu,"
		       "\"homa_errors\":%lu,\"tcp_errors\":%lu,"
		       "\"homa_first_error\":", hn, tn, he, te);
		json_string(stdout, hs->first_error);
		printf(",\"settings\":");
		json_settings(stdout);
		printf(",\"counters\":");
		json_counters(stdout, c);
		printf("}\n");
		return;
	}
	printf(PROG " server: %.1f s, answered %lu Homa and %lu TCP "
	       "requests; CPU %.2f s (%.1f us per request); errors: %lu Homa, "
	       "%lu TCP\n", secs, hn, tn, cpu_s,
	       hn + tn ? cpu_s * 1e6 / (double)(hn + tn) : 0.0, he, te);
	if (hs->first_error[0])
		printf("first Homa error: %s\n", hs->first_error);
	print_counters(stdout, "server socket", c);
}

/*
 * run_server - serve Homa (and TCP) until SIGINT, SIGTERM or SIGHUP, or
 * o->duration seconds when nonzero; then report.  Returns the exit status.
 */
static int run_server(const struct options *o)
{
	struct homa_server hs;
	struct tcp_server ts;
	struct counters c;
	struct timespec wait;
	sigset_t set;
	uint64_t t0, cpu0;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);     /* threads inherit it */
	if (homa_server_start(&hs, AF_INET, o->port, o->threads,
			      o->server_epoll) < 0)
		return 1;
	if (!o->no_tcp_server &&
	    tcp_server_start(&ts, AF_INET, o->tcp_port) < 0) {
		homa_server_stop(&hs);
		homa_server_close(&hs);
		return 1;
	}
	fprintf(stderr, PROG " server: ready: Homa port %d, ", o->port);
	if (o->no_tcp_server)
		fprintf(stderr, "no TCP, ");
	else
		fprintf(stderr, "TCP port %d, ", o->tcp_port);
	fprintf(stderr, "%d Homa thread%s\n", o->threads,
		o->threads == 1 ? "" : "s");
	t0 = now_ns();
	cpu0 = cpu_ns();
	if (o->duration > 0) {
		wait.tv_sec = (time_t)o->duration;
		wait.tv_nsec = (long)((o->duration - (double)wait.tv_sec) *
				      1e9);
		do
			sig = sigtimedwait(&set, NULL, &wait);
		while (sig < 0 && errno == EINTR);
	} else {
		while (sigwait(&set, &sig) != 0)
			;
	}
	watchdog_stage(STAGE_SLACK_S, "server shut-down");
	homa_server_stop(&hs);
	memset(&c, 0, sizeof(c));
	c.n = read_counters(hs.h.fd, c.names, c.values, MAX_COUNTERS);
	if (!o->no_tcp_server)
		tcp_server_stop(&ts);
	print_server_report(o, &hs, o->no_tcp_server ? NULL : &ts,
			    (double)(now_ns() - t0) / 1e9,
			    (double)(cpu_ns() - cpu0) / 1e9, &c);
	homa_server_close(&hs);
	alarm(0);
	return 0;
}

/*
 * run_client - client and loopback modes: workload, servers (loopback),
 * baseline, one load phase per protocol, report.  Returns the exit status.
 */
static int run_client(struct options *o)
{
	static struct homa_server hs;
	static struct tcp_server ts;
	static struct baseline base;
	static struct report r;
	struct workload wl;
	uint32_t sizes[MAX_CAL];
	int nsizes, p, rc = 1, servers = 0;

	if (workload_open(&wl, o) < 0)
		return 1;
	if (o->load_gbps > 0)
		o->rate = o->load_gbps * 1e9 / 8 / wl.mean;
	memset(&r, 0, sizeof(r));
	r.o = o;
	r.wl = &wl;
	r.b = &base;
	base.own = o->slowdown_own;
	if (o->mode == M_LOOPBACK) {
		memset(&o->server, 0, sizeof(o->server));
		o->server.in4.sin_family = AF_INET;
		o->server.in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		o->server.in4.sin_port = htons((uint16_t)o->port);
		watchdog_stage(STAGE_SLACK_S, "server start-up");
		if (homa_server_start(&hs, AF_INET, o->port,
				      o->server_threads, o->server_epoll) < 0)
			goto out;
		if (tcp_server_start(&ts, AF_INET, o->tcp_port) < 0) {
			homa_server_stop(&hs);
			homa_server_close(&hs);
			goto out;
		}
		servers = 1;
	}
	r.homa_dest = o->server;
	r.tcp_dest = addr_with_port(&o->server, o->tcp_port);
	if (o->baseline_in) {
		if (baseline_read(&base, o->baseline_in) < 0)
			goto out;
	} else {
		nsizes = cal_sizes(&wl, sizes);
		for (p = 0; p < NPROTO; p++) {
			if (!(o->protos & (1u << p)))
				continue;
			watchdog_stage((unsigned int)nsizes * 3 + STAGE_SLACK_S,
				       "%s calibration", proto_name[p]);
			if (calibrate(o, (enum proto)p, &r.homa_dest,
				      &r.tcp_dest, sizes, nsizes, &base) < 0)
				goto out;
		}
	}
	if (o->baseline_out && baseline_write(&base, o->baseline_out) < 0)
		goto out;
	rc = 0;
	if (o->duration > 0) {
		for (p = 0; p < NPROTO; p++) {
			if (!(o->protos & (1u << p)))
				continue;
			if (run_phase(o, (enum proto)p, &wl, &base,
				      &r.homa_dest, &r.tcp_dest,
				      &r.res[p]) < 0 ||
			    r.res[p].setup_error[0])
				rc = 1;
			if (r.res[p].st->failed || r.res[p].st->unfinished) {
				fprintf(stderr, PROG ": %s: %llu RPCs failed, "
					"%llu unfinished%s%s\n", proto_name[p],
					(unsigned long long)r.res[p].st->failed,
					(unsigned long long)
					r.res[p].st->unfinished,
					r.res[p].st->first_error[0]
					? "; first error: " : "",
					r.res[p].st->first_error);
				rc = 1;
			}
		}
	}
out:
	if (servers) {
		watchdog_stage(STAGE_SLACK_S, "server shut-down");
		homa_server_stop(&hs);
		r.server_ctr.n = read_counters(hs.h.fd, r.server_ctr.names,
					       r.server_ctr.values,
					       MAX_COUNTERS);
		tcp_server_stop(&ts);
		r.have_server = 1;
		r.served[P_HOMA] = atomic_load(&hs.served);
		r.served[P_TCP] = atomic_load(&ts.served);
		r.server_errors[P_HOMA] = atomic_load(&hs.errors);
		r.server_errors[P_TCP] = atomic_load(&ts.errors);
		homa_server_close(&hs);
		alarm(0);
	}
	if (rc == 0 || r.res[P_HOMA].ran || r.res[P_TCP].ran) {
		if (o->json)
			print_json(stdout, &r);
		else
			print_text(stdout, &r);
	}
	for (p = 0; p < NPROTO; p++)
		free(r.res[p].st);
	workload_close(&wl);
	return rc;
}

int main(int argc, char **argv)
{
	struct options o;
	int rc;

	parse_options(argc, argv, &o);
	watchdog_install();
	if (pattern_init() < 0) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	rc = o.mode == M_SERVER ? run_server(&o) : run_client(&o);
	fflush(stdout);
	free(pattern);
	return rc;
}
