/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa-demo - Homa, TCP and UDP side by side on loopback, in one run.
 *
 * 1. Round-trip time of small RPCs (closed loop, one outstanding):
 *    Homa (server thread, client socket in the main thread), TCP
 *    (TCP_NODELAY, one persistent connection, length-prefixed messages,
 *    blocking) and UDP ping-pong (blocking recv, and a client that spins
 *    with MSG_DONTWAIT: the floor).  p50/p99/p999 in microseconds.
 * 2. Goodput of 1,000,000-byte requests with 100-byte responses, with 1 and
 *    with 4 RPCs outstanding, and of 1,000,000-byte echoes: Homa (all RPCs on
 *    one socket) against TCP (one connection per outstanding RPC, driven by
 *    one client thread with poll).
 * Every measurement runs in R rounds, systems interleaved within a round;
 * the table shows the median over rounds, and every round's value follows.
 *
 * Only the public API (homa.h) is used, plus the core's histogram.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "homa.h"
#include "../src/core/homa_histogram.h"

#define BIG_SIZE        1000000L          /* bytes of a large message */
#define BIG_RESP        100L              /* response to a large request */
#define ECHO            (-1L)             /* resp_len: echo the request */
#define MAX_OUT         4                 /* most RPCs outstanding */
#define MAX_ROUNDS      100
#define REGION_BYTES    ((size_t)HOMA_BPAGE_SIZE * 1024)   /* 64 MiB */
#define UDP_MAX         65507L            /* largest UDP payload */
#define TCP_HDR         4                 /* length prefix of a frame */
#define TCP_CAP         ((size_t)(TCP_HDR + BIG_SIZE))
#define WATCHDOG_S      60                /* no stage may take longer */
#define PHASE_BUDGET_NS (20ull * 1000000000ull) /* then stop early */
#define UDP_WAIT_NS     1000000000ull     /* a datagram lost after this */
#define NS_PER_US       1000.0

/* ---------------------------------------------------------------- */
/* Systems, tests and results                                        */

enum sys { SYS_HOMA, SYS_TCP, SYS_UDP, SYS_UDP_SPIN, NSYS };

static const char *const sys_name[NSYS] = {
	"homa", "tcp", "udp(blocking)", "udp(spin)"
};
static const char *const sys_json[NSYS] = {
	"homa", "tcp", "udp_blocking", "udp_spin"
};

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

static const struct test_def tests[NTESTS] = {
	[T_RTT]  = { "rtt", "RTT", 1, 0, 0, 1, ALL_SYS },
	[T_BIG1] = { "goodput_1mb_req_1_out",
		     "1 MB req, 1 out (Gbit/s)", 0, BIG_SIZE, BIG_RESP, 1,
		     HOMA_TCP },
	[T_BIG4] = { "goodput_1mb_req_4_out",
		     "1 MB req, 4 out (Gbit/s)", 0, BIG_SIZE, BIG_RESP,
		     MAX_OUT, HOMA_TCP },
	[T_ECHO] = { "goodput_1mb_echo_1_out",
		     "1 MB echo, 1 out (Gbit/s)", 0, BIG_SIZE, ECHO, 1,
		     HOMA_TCP },
};

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
/* Small utilities                                                    */

/* now_ns - monotonic time in nanoseconds. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* fail - record a formatted failure in res->why; returns -1. */
static int fail(struct run_result *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->why, sizeof(res->why), fmt, ap);
	va_end(ap);
	return -1;
}

/* resp_bytes - the response length a spec implies. */
static long resp_bytes(const struct run_spec *s)
{
	return s->resp_len == ECHO ? s->req_len : s->resp_len;
}

/* fill_pattern - bytes that differ from their neighbours and from a
 * shifted copy, so a misplaced chunk is noticed. */
static void fill_pattern(uint8_t *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 131u + (i >> 8) * 7u + 1u);
}

/* loopback - 127.0.0.1:port. */
static struct sockaddr_in loopback(int port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/* ---------------------------------------------------------------- */
/* Watchdog: SIGALRM aborts the run when one stage hangs.             */

static char stage_name[128] = "start-up";

/* watchdog_fire - signal handler: name the stuck stage and abort. */
static void watchdog_fire(int sig)
{
	static const char msg[] = "homa-demo: watchdog: no progress for "
				  "60 s, stuck in: ";
	ssize_t ignored;

	(void)sig;
	ignored = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	ignored = write(STDERR_FILENO, stage_name, strlen(stage_name));
	ignored = write(STDERR_FILENO, "\n", 1);
	(void)ignored;
	abort();
}

/* watchdog_kick - a new stage starts: it has WATCHDOG_S seconds. */
static void watchdog_kick(const char *fmt, ...)
{
	va_list ap;

	alarm(0);
	va_start(ap, fmt);
	vsnprintf(stage_name, sizeof(stage_name), fmt, ap);
	va_end(ap);
	alarm(WATCHDOG_S);
}

/* watchdog_start - install the handler and arm the first stage. */
static void watchdog_start(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watchdog_fire;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	alarm(WATCHDOG_S);
}

/* ---------------------------------------------------------------- */
/* Homa: one socket with its buffer region.                           */

struct homa_side {
	int fd;
	uint8_t *region;
	size_t region_len;
	struct homa_recvmsg_args args;  /* also carries bpages to return */
	struct msghdr msg;              /* msg_control = &args */
};

/*
 * homa_side_open - a Homa socket (bound to 127.0.0.1:port when port != 0)
 * with a REGION_BYTES buffer region from mmap.
 * Returns 0, or -1 after printing which call failed.
 */
static int homa_side_open(struct homa_side *h, int port)
{
	struct homa_set_buf_args buf;
	struct sockaddr_in a = loopback(port);

	memset(h, 0, sizeof(*h));
	h->fd = homa_socket(AF_INET, SOCK_DGRAM, IPPROTO_HOMA);
	if (h->fd < 0) {
		perror("homa-demo: homa_socket");
		return -1;
	}
	if (port != 0 && homa_bind(h->fd, (struct sockaddr *)&a,
				   sizeof(a)) < 0) {
		fprintf(stderr, "homa-demo: homa_bind port %d: %s%s\n", port,
			strerror(errno), errno == EADDRINUSE ?
			" (choose another with --port)" : "");
		homa_close(h->fd);
		return -1;
	}
	h->region_len = REGION_BYTES;
	h->region = mmap(NULL, h->region_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h->region == MAP_FAILED) {
		perror("homa-demo: mmap");
		homa_close(h->fd);
		return -1;
	}
	buf.start = h->region;
	buf.length = h->region_len;
	if (homa_setsockopt(h->fd, IPPROTO_HOMA, SO_HOMA_SET_BUF, &buf,
			    sizeof(buf)) < 0) {
		perror("homa-demo: setsockopt SO_HOMA_SET_BUF");
		munmap(h->region, h->region_len);
		homa_close(h->fd);
		return -1;
	}
	h->msg.msg_control = &h->args;
	h->msg.msg_controllen = sizeof(h->args);
	return 0;
}

/* homa_side_close - close the socket, then unmap its region. */
static void homa_side_close(struct homa_side *h)
{
	if (homa_close(h->fd) < 0)
		perror("homa-demo: homa_close");
	munmap(h->region, h->region_len);
}

/*
 * homa_side_recv - one homa_recvmsg for a message of the kinds in flags
 * (HOMA_RECVMSG_*), for RPC id (0: any).  Hands back the bpages of the
 * previous message (h->args still lists them).  Returns the length, with
 * h->args describing the message; or -1 with errno, h->args.id naming a
 * failed RPC.  EINTR is retried.
 */
static ssize_t homa_side_recv(struct homa_side *h, int flags, uint64_t id)
{
	ssize_t n;

	do {
		h->args.id = id;
		h->args.flags = flags;
		n = homa_recvmsg(h->fd, &h->msg, 0);
	} while (n < 0 && errno == EINTR);
	return n;
}

/*
 * homa_msg_iov - iovecs over the message of length len that h->args
 * describes (at most HOMA_MAX_BPAGES).  Returns their count, or -1 when the
 * bpages do not fit the message or the region (a library fault).
 */
static int homa_msg_iov(const struct homa_side *h, size_t len,
			struct iovec *iov)
{
	size_t off = 0, chunk;
	uint32_t i, n = h->args.num_bpages;

	if (n > HOMA_MAX_BPAGES ||
	    n != (len + HOMA_BPAGE_SIZE - 1) / HOMA_BPAGE_SIZE)
		return -1;
	for (i = 0; i < n; i++) {
		chunk = len - off < HOMA_BPAGE_SIZE ? len - off
						    : HOMA_BPAGE_SIZE;
		if (h->args.bpage_offsets[i] > h->region_len - chunk)
			return -1;
		iov[i].iov_base = h->region + h->args.bpage_offsets[i];
		iov[i].iov_len = chunk;
		off += chunk;
	}
	return (int)n;
}

/* homa_msg_equals - true when the received message (length len) holds
 * exactly want[0..len). */
static int homa_msg_equals(const struct homa_side *h, size_t len,
			   const uint8_t *want)
{
	struct iovec iov[HOMA_MAX_BPAGES];
	int i, n = homa_msg_iov(h, len, iov);

	if (n < 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (memcmp(iov[i].iov_base, want, iov[i].iov_len) != 0)
			return 0;
		want += iov[i].iov_len;
	}
	return 1;
}

/* ---------------------------------------------------------------- */
/* Homa server thread                                                  */

struct homa_server {
	struct homa_side side;
	pthread_t thread;
	atomic_int stop;        /* exit after the next request */
	atomic_long resp_len;   /* reply bytes, or ECHO */
	const uint8_t *pattern; /* reply contents */
	long errors;
	char why[160];          /* first error */
};

/*
 * homa_server_reply - answer the request h->args describes (length len):
 * an echo straight from the bpages (homa_replyv), or resp_len bytes of the
 * pattern.  Returns 0 or -1 with errno.
 */
static int homa_server_reply(struct homa_server *s, size_t len)
{
	struct homa_side *h = &s->side;
	long resp = atomic_load(&s->resp_len);
	struct iovec iov[HOMA_MAX_BPAGES];
	int n;

	if (resp != ECHO)
		return homa_reply(h->fd, s->pattern, (size_t)resp,
				  &h->args.peer_addr, h->args.id) < 0 ? -1 : 0;
	n = homa_msg_iov(h, len, iov);
	if (n < 0) {
		errno = EFAULT;
		return -1;
	}
	return homa_replyv(h->fd, iov, n, &h->args.peer_addr,
			   h->args.id) < 0 ? -1 : 0;
}

/* homa_server_note - count an error; keep the first one's text. */
static void homa_server_note(struct homa_server *s, const char *what)
{
	if (s->errors++ == 0)
		snprintf(s->why, sizeof(s->why), "%s: %s", what,
			 strerror(errno));
}

/*
 * homa_server_main - thread: receive requests, reply, return bpages on the
 * next receive.  Leaves after answering a request that finds stop set, or
 * after 1000 errors.
 */
static void *homa_server_main(void *arg)
{
	struct homa_server *s = arg;
	ssize_t n;

	while (s->errors < 1000) {
		n = homa_side_recv(&s->side, HOMA_RECVMSG_REQUEST, 0);
		if (n < 0) {
			homa_server_note(s, "server homa_recvmsg");
			if (atomic_load(&s->stop))
				break;
			continue;
		}
		if (homa_server_reply(s, (size_t)n) < 0)
			homa_server_note(s, "server homa_reply");
		if (atomic_load(&s->stop))
			break;
	}
	return NULL;
}

/* homa_server_start - open the server socket on port and start its
 * thread.  Returns 0 or -1 (printed). */
static int homa_server_start(struct homa_server *s, int port,
			     const uint8_t *pattern)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->pattern = pattern;
	atomic_init(&s->stop, 0);
	atomic_init(&s->resp_len, 0);
	if (homa_side_open(&s->side, port) < 0)
		return -1;
	err = pthread_create(&s->thread, NULL, homa_server_main, s);
	if (err != 0) {
		fprintf(stderr, "homa-demo: pthread_create: %s\n",
			strerror(err));
		homa_side_close(&s->side);
		return -1;
	}
	return 0;
}

/*
 * homa_server_stop - set stop, wake the thread with one last request from
 * client c, join it (2 s at most) and close the socket.  Returns 0, or -1
 * when the thread would not stop (printed; the socket is then left open).
 */
static int homa_server_stop(struct homa_server *s, struct homa_side *c,
			    const struct sockaddr_in *addr)
{
	union sockaddr_in_union dest;
	struct timespec until;
	uint64_t id = 0;
	int err;

	atomic_store(&s->stop, 1);
	atomic_store(&s->resp_len, 1);
	memset(&dest, 0, sizeof(dest));
	dest.in4 = *addr;
	if (homa_send(c->fd, "x", 1, &dest, &id, 0) < 0)
		perror("homa-demo: homa_send (stop request)");
	else if (homa_side_recv(c, HOMA_RECVMSG_RESPONSE, id) < 0)
		perror("homa-demo: homa_recvmsg (stop response)");
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	err = pthread_timedjoin_np(s->thread, NULL, &until);
	if (err != 0) {
		fprintf(stderr, "homa-demo: Homa server thread did not "
			"stop: %s\n", strerror(err));
		return -1;
	}
	homa_side_close(&s->side);
	return 0;
}

/* ---------------------------------------------------------------- */
/* Homa client phase                                                  */

/* One RPC in flight. */
struct slot {
	uint64_t id;
	uint64_t cookie;
	uint64_t t0;
};

/* homa_abort_all - discard the RPCs still in flight (a phase ended
 * early), so that their responses do not reach the next phase. */
static void homa_abort_all(struct homa_side *c, struct slot *fl, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (homa_abort(c->fd, fl[i].id, 0) < 0)
			perror("homa-demo: homa_abort");
}

/*
 * homa_check_response - find the slot of the response h->args names and
 * check its length (and bytes, if asked).  Returns the slot index, or -1
 * with res->why set.
 */
static int homa_check_response(const struct homa_side *c, struct slot *fl,
			       int nfl, ssize_t len, const struct run_spec *s,
			       const uint8_t *want, struct run_result *res)
{
	int j;

	for (j = 0; j < nfl; j++)
		if (fl[j].id == c->args.id)
			break;
	if (j == nfl)
		return fail(res, "Homa response with unknown id %llu",
			    (unsigned long long)c->args.id);
	if (c->args.completion_cookie != fl[j].cookie)
		return fail(res, "Homa response id %llu: cookie %llu, "
			    "expected %llu", (unsigned long long)c->args.id,
			    (unsigned long long)c->args.completion_cookie,
			    (unsigned long long)fl[j].cookie);
	if (len != resp_bytes(s))
		return fail(res, "Homa response id %llu: %zd bytes, "
			    "expected %ld", (unsigned long long)c->args.id,
			    len, resp_bytes(s));
	if (s->verify && !homa_msg_equals(c, (size_t)len, want))
		return fail(res, "Homa response id %llu: bytes differ",
			    (unsigned long long)c->args.id);
	return j;
}

/*
 * homa_phase - s->rpcs RPCs from client c to dest, s->outstanding at a
 * time on the one socket.  Each RTT (send to response) goes into s->hist.
 * Returns 0 with res filled, or -1 with res->why (in-flight RPCs aborted).
 */
static int homa_phase(struct homa_side *c, const union sockaddr_in_union *dest,
		      const struct run_spec *s, const uint8_t *pattern,
		      const uint8_t *echo_want, struct run_result *res)
{
	struct slot fl[MAX_OUT];
	int nfl = 0, j;
	long sent = 0;
	uint64_t start = now_ns(), t1;
	ssize_t len;

	while (res->done < s->rpcs) {
		while (nfl < s->outstanding && sent < s->rpcs) {
			fl[nfl].id = 0;
			fl[nfl].cookie = (uint64_t)sent + 1;
			fl[nfl].t0 = now_ns();
			if (homa_send(c->fd, pattern, (size_t)s->req_len, dest,
				      &fl[nfl].id, fl[nfl].cookie) < 0) {
				fail(res, "homa_send: %s", strerror(errno));
				goto out_abort;
			}
			nfl++;
			sent++;
		}
		len = homa_side_recv(c, HOMA_RECVMSG_RESPONSE,
				     s->outstanding == 1 ? fl[0].id : 0);
		t1 = now_ns();
		if (len < 0) {
			fail(res, "homa_recvmsg: RPC id %llu failed: %s",
			     (unsigned long long)c->args.id, strerror(errno));
			goto out_abort;
		}
		j = homa_check_response(c, fl, nfl, len, s, echo_want, res);
		if (j < 0)
			goto out_abort;
		if (s->hist)
			homa_histogram_record(s->hist, t1 - fl[j].t0);
		fl[j] = fl[--nfl];
		res->done++;
		if (t1 - start > PHASE_BUDGET_NS && res->done < s->rpcs) {
			res->truncated = 1;
			homa_abort_all(c, fl, nfl);
			break;
		}
	}
	res->elapsed_ns = now_ns() - start;
	return 0;

out_abort:
	homa_abort_all(c, fl, nfl);
	return -1;
}

/* ---------------------------------------------------------------- */
/* TCP: frames are a 4-byte big-endian length and the payload.        */

/*
 * tcp_frame_len - when buf[0..have) holds a whole frame, its payload
 * length.  Returns the length (>= 0), -1 while incomplete, -2 when the
 * frame would not fit cap bytes.
 */
static long tcp_frame_len(const uint8_t *buf, size_t have, size_t cap)
{
	uint32_t len;

	if (have < TCP_HDR)
		return -1;
	memcpy(&len, buf, sizeof(len));
	len = ntohl(len);
	if (len > cap - TCP_HDR)
		return -2;
	return have - TCP_HDR >= len ? (long)len : -1;
}

/*
 * tcp_recv_part - one recv into buf[*have..cap) (the connection carries at
 * most one frame at a time, so this never reads past it).  Returns the
 * payload length when the frame is complete, -1 when not yet (or
 * EAGAIN/EINTR), -2 on error or end of stream (errno 0 then).
 */
static long tcp_recv_part(int fd, uint8_t *buf, size_t cap, size_t *have)
{
	ssize_t r = recv(fd, buf + *have, cap - *have, 0);
	long len;

	if (r == 0) {
		errno = 0;
		return -2;
	}
	if (r < 0)
		return (errno == EAGAIN || errno == EINTR) ? -1 : -2;
	*have += (size_t)r;
	len = tcp_frame_len(buf, *have, cap);
	if (len == -2)
		errno = EMSGSIZE;
	return len;
}

/* tcp_read_frame - blocking: read one whole frame into buf.  Returns the
 * payload length (payload at buf + TCP_HDR) or -1 (errno 0 at EOF). */
static long tcp_read_frame(int fd, uint8_t *buf, size_t cap)
{
	size_t have = 0;
	long len;

	do
		len = tcp_recv_part(fd, buf, cap, &have);
	while (len == -1);
	return len < 0 ? -1 : len;
}

/*
 * tcp_send_part - send more of the frame hdr[TCP_HDR] + payload[len] from
 * byte *sent on, one sendmsg.  Returns 0 (progress, EAGAIN or EINTR) or -1.
 */
static int tcp_send_part(int fd, const uint8_t *hdr, const uint8_t *payload,
			 size_t len, size_t *sent)
{
	struct iovec iov[2];
	struct msghdr m;
	ssize_t r;

	memset(&m, 0, sizeof(m));
	m.msg_iov = iov;
	if (*sent < TCP_HDR) {
		iov[0].iov_base = (void *)(hdr + *sent);
		iov[0].iov_len = TCP_HDR - *sent;
		iov[1].iov_base = (void *)payload;
		iov[1].iov_len = len;
		m.msg_iovlen = 2;
	} else {
		iov[0].iov_base = (void *)(payload + (*sent - TCP_HDR));
		iov[0].iov_len = len - (*sent - TCP_HDR);
		m.msg_iovlen = 1;
	}
	r = sendmsg(fd, &m, MSG_NOSIGNAL);
	if (r < 0)
		return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
	*sent += (size_t)r;
	return 0;
}

/* tcp_put_hdr - the length prefix of a payload of len bytes. */
static void tcp_put_hdr(uint8_t *hdr, size_t len)
{
	uint32_t n = htonl((uint32_t)len);

	memcpy(hdr, &n, sizeof(n));
}

/* tcp_write_frame - blocking: send a whole frame.  Returns 0 or -1. */
static int tcp_write_frame(int fd, const uint8_t *payload, size_t len)
{
	uint8_t hdr[TCP_HDR];
	size_t sent = 0;

	tcp_put_hdr(hdr, len);
	while (sent < TCP_HDR + len)
		if (tcp_send_part(fd, hdr, payload, len, &sent) < 0)
			return -1;
	return 0;
}

/* One server end of a TCP connection, with its thread. */
struct tcp_server {
	int fd;
	long resp_len;          /* or ECHO */
	const uint8_t *pattern;
	uint8_t *buf;           /* TCP_CAP bytes */
	pthread_t thread;
};

/* tcp_server_main - thread: answer frames until the client closes. */
static void *tcp_server_main(void *arg)
{
	struct tcp_server *t = arg;
	long len;
	int rc;

	for (;;) {
		len = tcp_read_frame(t->fd, t->buf, TCP_CAP);
		if (len < 0)
			break;
		if (t->resp_len == ECHO)
			rc = tcp_write_frame(t->fd, t->buf + TCP_HDR,
					     (size_t)len);
		else
			rc = tcp_write_frame(t->fd, t->pattern,
					     (size_t)t->resp_len);
		if (rc < 0)
			break;
	}
	if (errno != 0 && errno != ECONNRESET && errno != EPIPE)
		perror("homa-demo: TCP server");
	return NULL;
}

/* set_nonblocking - O_NONBLOCK on fd; returns 0 or -1. */
static int set_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* tcp_nodelay - set TCP_NODELAY; returns 0 or -1. */
static int tcp_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* tcp_listen - a listening socket on 127.0.0.1:port, or -1 (printed). */
static int tcp_listen(int port)
{
	struct sockaddr_in a = loopback(port);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0) {
		perror("homa-demo: socket (TCP)");
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 16) < 0) {
		fprintf(stderr, "homa-demo: TCP port %d: %s\n", port,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* tcp_close_conns - close the k client ends, then join the server
 * threads (which see end of stream) and free their buffers. */
static void tcp_close_conns(int k, int *cfd, struct tcp_server *srv)
{
	int i;

	for (i = 0; i < k; i++)
		close(cfd[i]);
	for (i = 0; i < k; i++) {
		pthread_join(srv[i].thread, NULL);
		close(srv[i].fd);
		free(srv[i].buf);
	}
}

/*
 * tcp_open_conns - k connections to the listener lfd at port, each with
 * a server thread answering resp_len (or ECHO) bytes.  Fills cfd[k] (the
 * client ends) and srv[k].  Returns 0 or -1 with res->why (nothing left
 * open).
 */
static int tcp_open_conns(int lfd, int port, int k, long resp_len,
			  const uint8_t *pattern, int *cfd,
			  struct tcp_server *srv, struct run_result *res)
{
	struct sockaddr_in a = loopback(port);
	int i, err;

	for (i = 0; i < k; i++) {
		srv[i].resp_len = resp_len;
		srv[i].pattern = pattern;
		srv[i].buf = malloc(TCP_CAP);
		cfd[i] = socket(AF_INET, SOCK_STREAM, 0);
		srv[i].fd = -1;
		if (srv[i].buf == NULL || cfd[i] < 0 ||
		    connect(cfd[i], (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    (srv[i].fd = accept(lfd, NULL, NULL)) < 0 ||
		    tcp_nodelay(cfd[i]) < 0 || tcp_nodelay(srv[i].fd) < 0) {
			fail(res, "TCP connection: %s", strerror(errno));
			goto undo;
		}
		err = pthread_create(&srv[i].thread, NULL, tcp_server_main,
				     &srv[i]);
		if (err != 0) {
			fail(res, "pthread_create: %s", strerror(err));
			goto undo;
		}
	}
	return 0;

undo:
	if (cfd[i] >= 0)
		close(cfd[i]);
	if (srv[i].fd >= 0)
		close(srv[i].fd);
	free(srv[i].buf);
	tcp_close_conns(i, cfd, srv);
	return -1;
}

/* tcp_check - check a response of len bytes at payload. Returns 0, or -1
 * with res->why. */
static int tcp_check(long len, const uint8_t *payload,
		     const struct run_spec *s, const uint8_t *want,
		     struct run_result *res)
{
	if (len < 0)
		return fail(res, "TCP receive: %s",
			    errno ? strerror(errno) : "connection closed");
	if (len != resp_bytes(s))
		return fail(res, "TCP response of %ld bytes, expected %ld",
			    len, resp_bytes(s));
	if (s->verify && memcmp(payload, want, (size_t)len) != 0)
		return fail(res, "TCP response bytes differ");
	return 0;
}

/*
 * tcp_phase_blocking - s->rpcs RPCs on one blocking connection, one at a
 * time.  RTTs into s->hist.  Returns 0 or -1 with res->why.
 */
static int tcp_phase_blocking(int fd, uint8_t *rbuf, const struct run_spec *s,
			      const uint8_t *pattern, const uint8_t *want,
			      struct run_result *res)
{
	uint64_t start = now_ns(), t0, t1;
	long len;

	while (res->done < s->rpcs) {
		t0 = now_ns();
		if (tcp_write_frame(fd, pattern, (size_t)s->req_len) < 0)
			return fail(res, "TCP send: %s", strerror(errno));
		len = tcp_read_frame(fd, rbuf, TCP_CAP);
		t1 = now_ns();
		if (tcp_check(len, rbuf + TCP_HDR, s, want, res) < 0)
			return -1;
		if (s->hist)
			homa_histogram_record(s->hist, t1 - t0);
		res->done++;
		if (t1 - start > PHASE_BUDGET_NS && res->done < s->rpcs) {
			res->truncated = 1;
			break;
		}
	}
	res->elapsed_ns = now_ns() - start;
	return 0;
}

/* The client end of one connection in the poll-driven phase. */
struct tcp_flow {
	size_t sent;            /* frame bytes sent */
	size_t have;            /* response bytes received */
	int receiving;          /* request sent, awaiting the response */
	int busy;               /* an RPC is in progress */
	uint64_t t0;
	uint8_t *rbuf;          /* TCP_CAP bytes */
};

/*
 * tcp_flow_step - advance flow f on fd after poll said it is ready.
 * Returns 1 when its response is complete (checked), 0 when not yet, -1 on
 * failure (res->why).
 */
static int tcp_flow_step(int fd, struct tcp_flow *f, const uint8_t *hdr,
			 const struct run_spec *s, const uint8_t *pattern,
			 const uint8_t *want, struct run_result *res)
{
	long len;

	if (!f->receiving) {
		if (tcp_send_part(fd, hdr, pattern, (size_t)s->req_len,
				  &f->sent) < 0)
			return fail(res, "TCP send: %s", strerror(errno));
		f->receiving = f->sent == TCP_HDR + (size_t)s->req_len;
		return 0;
	}
	len = tcp_recv_part(fd, f->rbuf, TCP_CAP, &f->have);
	if (len == -1)
		return 0;
	if (tcp_check(len, f->rbuf + TCP_HDR, s, want, res) < 0)
		return -1;
	return 1;
}

/* tcp_flow_start - begin a new RPC on flow f. */
static void tcp_flow_start(struct tcp_flow *f)
{
	f->sent = 0;
	f->have = 0;
	f->receiving = 0;
	f->busy = 1;
	f->t0 = now_ns();
}

/*
 * tcp_phase_poll - s->rpcs RPCs over k non-blocking connections cfd[k]
 * (one RPC per connection at a time), one thread, poll.  rbuf[k] are
 * receive buffers.  Returns 0 or -1 with res->why.
 */
static int tcp_phase_poll(const int *cfd, uint8_t **rbuf, int k,
			  const struct run_spec *s, const uint8_t *pattern,
			  const uint8_t *want, struct run_result *res)
{
	struct tcp_flow f[MAX_OUT];
	struct pollfd p[MAX_OUT];
	uint8_t hdr[TCP_HDR];
	long started = 0;
	uint64_t start = now_ns(), t1;
	int i, r;

	tcp_put_hdr(hdr, (size_t)s->req_len);
	for (i = 0; i < k; i++) {
		memset(&f[i], 0, sizeof(f[i]));
		f[i].rbuf = rbuf[i];
		if (started < s->rpcs) {
			tcp_flow_start(&f[i]);
			started++;
		}
	}
	while (res->done < s->rpcs) {
		for (i = 0; i < k; i++) {
			p[i].fd = f[i].busy ? cfd[i] : -1;
			p[i].events = f[i].receiving ? POLLIN : POLLOUT;
			p[i].revents = 0;
		}
		if (poll(p, (nfds_t)k, 1000) < 0 && errno != EINTR)
			return fail(res, "poll: %s", strerror(errno));
		for (i = 0; i < k; i++) {
			if (p[i].revents == 0)
				continue;
			r = tcp_flow_step(cfd[i], &f[i], hdr, s, pattern,
					  want, res);
			if (r < 0)
				return -1;
			if (r == 0)
				continue;
			t1 = now_ns();
			if (s->hist)
				homa_histogram_record(s->hist, t1 - f[i].t0);
			res->done++;
			f[i].busy = 0;
			if (started < s->rpcs) {
				tcp_flow_start(&f[i]);
				started++;
			}
		}
		if (now_ns() - start > PHASE_BUDGET_NS &&
		    res->done < s->rpcs) {
			res->truncated = 1;
			break;
		}
	}
	res->elapsed_ns = now_ns() - start;
	return 0;
}

/* ---------------------------------------------------------------- */
/* UDP ping-pong                                                      */

struct udp_server {
	int fd;
	pthread_t thread;
	atomic_int stop;
	uint8_t buf[UDP_MAX];
};

/* udp_server_main - thread: echo every datagram until stop is set (the
 * socket's 100 ms receive timeout lets it look). */
static void *udp_server_main(void *arg)
{
	struct udp_server *u = arg;
	struct sockaddr_in from;
	socklen_t flen;
	ssize_t n;

	while (!atomic_load(&u->stop)) {
		flen = sizeof(from);
		n = recvfrom(u->fd, u->buf, sizeof(u->buf), 0,
			     (struct sockaddr *)&from, &flen);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			perror("homa-demo: UDP server recvfrom");
			break;
		}
		if (sendto(u->fd, u->buf, (size_t)n, 0,
			   (struct sockaddr *)&from, flen) < 0)
			perror("homa-demo: UDP server sendto");
	}
	return NULL;
}

/* set_rcvtimeo - SO_RCVTIMEO of ns nanoseconds; returns 0 or -1. */
static int set_rcvtimeo(int fd, uint64_t ns)
{
	struct timeval tv;

	tv.tv_sec = (time_t)(ns / 1000000000ull);
	tv.tv_usec = (suseconds_t)(ns % 1000000000ull / 1000);
	return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* udp_socket - a UDP socket bound to 127.0.0.1:port (any port when 0)
 * with a receive timeout; -1 (printed) on failure. */
static int udp_socket(int port, uint64_t timeout_ns)
{
	struct sockaddr_in a = loopback(port);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0) {
		perror("homa-demo: socket (UDP)");
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    set_rcvtimeo(fd, timeout_ns) < 0) {
		fprintf(stderr, "homa-demo: UDP port %d: %s\n", port,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* udp_server_start - bind port and start the echo thread; 0 or -1. */
static int udp_server_start(struct udp_server *u, int port)
{
	int err;

	atomic_init(&u->stop, 0);
	u->fd = udp_socket(port, 100000000ull);
	if (u->fd < 0)
		return -1;
	err = pthread_create(&u->thread, NULL, udp_server_main, u);
	if (err != 0) {
		fprintf(stderr, "homa-demo: pthread_create: %s\n",
			strerror(err));
		close(u->fd);
		return -1;
	}
	return 0;
}

/* udp_server_stop - stop and join the thread, close the socket. */
static void udp_server_stop(struct udp_server *u)
{
	atomic_store(&u->stop, 1);
	pthread_join(u->thread, NULL);
	close(u->fd);
}

/*
 * udp_wait - receive the echo of datagram seq on the connected fd, either
 * blocking (the socket's 1 s timeout) or spinning with MSG_DONTWAIT for at
 * most UDP_WAIT_NS.  Stale echoes (another seq) are skipped.  Returns the
 * length, 0 when given up (lost), -1 on error.
 */
static ssize_t udp_wait(int fd, int spin, uint8_t *buf, size_t cap,
			uint64_t seq, size_t len)
{
	uint64_t deadline = now_ns() + UDP_WAIT_NS, got;
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, cap, spin ? MSG_DONTWAIT : 0);
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				return -1;
			if (now_ns() > deadline)
				return 0;
			continue;
		}
		if (len < sizeof(seq))
			return n;
		memcpy(&got, buf, sizeof(got));
		if (got == seq)
			return n;
	}
}

/*
 * udp_phase - s->rpcs ping-pongs of s->req_len bytes on the connected fd.
 * A lost datagram counts in res->lost and gives no sample; more than 1% of
 * them fails the phase.  Returns 0 or -1 with res->why.
 */
static int udp_phase(int fd, int spin, const struct run_spec *s,
		     uint8_t *sbuf, uint8_t *rbuf, struct run_result *res)
{
	static uint64_t next_seq;       /* over every phase: main thread */
	size_t len = (size_t)s->req_len;
	uint64_t start = now_ns(), t0, t1, seq;
	long i;
	ssize_t n;

	for (i = 0; i < s->rpcs; i++) {
		seq = ++next_seq;
		if (len >= sizeof(seq))
			memcpy(sbuf, &seq, sizeof(seq));
		t0 = now_ns();
		if (send(fd, sbuf, len, 0) < 0)
			return fail(res, "UDP send: %s", strerror(errno));
		n = udp_wait(fd, spin, rbuf, UDP_MAX, seq, len);
		t1 = now_ns();
		if (n < 0)
			return fail(res, "UDP recv: %s", strerror(errno));
		if (n == 0) {
			if (++res->lost * 100 > s->rpcs)
				return fail(res, "UDP: %ld datagrams lost",
					    res->lost);
			continue;
		}
		if ((size_t)n != len)
			return fail(res, "UDP echo of %zd bytes, expected %zu",
				    n, len);
		if (s->hist)
			homa_histogram_record(s->hist, t1 - t0);
		res->done++;
		if (t1 - start > PHASE_BUDGET_NS && i + 1 < s->rpcs) {
			res->truncated = 1;
			break;
		}
	}
	res->elapsed_ns = now_ns() - start;
	return 0;
}

/* ---------------------------------------------------------------- */
/* The demo: all the sockets and every result                          */

struct demo {
	struct options opt;
	struct homa_side hc;            /* Homa client, main thread */
	struct homa_server hs;
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
static int homa_port(const struct demo *d) { return d->opt.port; }
static int tcp_port(const struct demo *d) { return d->opt.port + 1; }
static int udp_port(const struct demo *d) { return d->opt.port + 2; }

/* warm_spec - the warm-up before a measured phase like s: a tenth of its
 * RPCs (1..1000), every response's bytes checked, nothing recorded. */
static struct run_spec warm_spec(const struct run_spec *s)
{
	struct run_spec w = *s;

	w.rpcs = s->rpcs / 10 + 1 < 1000 ? s->rpcs / 10 + 1 : 1000;
	w.verify = 1;
	w.hist = NULL;
	return w;
}

/* run_homa - warm up, then measure Homa for spec s.  0 or -1. */
static int run_homa(struct demo *d, const struct run_spec *s,
		    struct run_result *res)
{
	struct run_spec w = warm_spec(s);

	atomic_store(&d->hs.resp_len, s->resp_len);
	if (homa_phase(&d->hc, &d->homa_dest, &w, d->pattern, d->pattern,
		       res) < 0)
		return -1;
	memset(res, 0, sizeof(*res));
	return homa_phase(&d->hc, &d->homa_dest, s, d->pattern, d->pattern,
			  res);
}

/* tcp_phase - one phase on the connections cfd[s->outstanding]: blocking
 * on one connection when s->blocking, else poll-driven. 0 or -1. */
static int tcp_phase(struct demo *d, const int *cfd,
		     const struct run_spec *s, struct run_result *res)
{
	if (s->blocking)
		return tcp_phase_blocking(cfd[0], d->tcp_rbuf[0], s,
					  d->pattern, d->pattern, res);
	return tcp_phase_poll(cfd, d->tcp_rbuf, s->outstanding, s,
			      d->pattern, d->pattern, res);
}

/* run_tcp - connect, warm up, measure and close TCP for spec s (the
 * connections are persistent across warm-up and measurement).  0 or -1. */
static int run_tcp(struct demo *d, const struct run_spec *s,
		   struct run_result *res)
{
	struct tcp_server srv[MAX_OUT];
	struct run_spec w = warm_spec(s);
	int cfd[MAX_OUT], k = s->outstanding, rc = 0, i;

	for (i = 0; i < MAX_OUT; i++)
		cfd[i] = -1; /* gcc -O3 cannot see tcp_open_conns fill them */
	if (tcp_open_conns(d->tcp_lfd, tcp_port(d), k, s->resp_len,
			   d->pattern, cfd, srv, res) < 0)
		return -1;
	for (i = 0; i < k && !s->blocking; i++)
		if (set_nonblocking(cfd[i]) < 0)
			rc = fail(res, "fcntl O_NONBLOCK: %s",
				  strerror(errno));
	if (rc == 0)
		rc = tcp_phase(d, cfd, &w, res);
	if (rc == 0) {
		memset(res, 0, sizeof(*res));
		rc = tcp_phase(d, cfd, s, res);
	}
	tcp_close_conns(k, cfd, srv);
	return rc;
}

/* run_udp - warm up, then measure UDP ping-pong (spinning or blocking
 * client) for spec s.  0 or -1. */
static int run_udp(struct demo *d, int spin, const struct run_spec *s,
		   struct run_result *res)
{
	struct run_spec w = warm_spec(s);

	if (udp_phase(d->udp_fd, spin, &w, d->sbuf, d->rbuf, res) < 0)
		return -1;
	memset(res, 0, sizeof(*res));
	return udp_phase(d->udp_fd, spin, s, d->sbuf, d->rbuf, res);
}

/* spec_for - the run_spec of test t with the options of d. */
static struct run_spec spec_for(const struct demo *d, enum test t)
{
	const struct test_def *td = &tests[t];
	struct run_spec s;

	memset(&s, 0, sizeof(s));
	s.req_len = td->req_len ? td->req_len : d->opt.size;
	s.resp_len = td->resp_len ? td->resp_len : d->opt.size;
	s.outstanding = td->outstanding;
	s.rpcs = td->is_rtt ? d->opt.rpcs : d->opt.big_rpcs;
	s.blocking = td->is_rtt;
	s.hist = d->hist;
	return s;
}

/* sys_applies - whether system y takes part in test t (UDP only for RTT
 * with a size that fits a datagram; only RTT with --rtt-only). */
static int sys_applies(const struct demo *d, enum test t, enum sys y)
{
	if (!(tests[t].systems & (1u << y)))
		return 0;
	if (d->opt.rtt_only && !tests[t].is_rtt)
		return 0;
	return !((y == SYS_UDP || y == SYS_UDP_SPIN) && d->opt.size > UDP_MAX);
}

/* test_label - the row label of test t, value index vi. */
static void test_label(const struct demo *d, enum test t, int vi, char *buf,
		       size_t len)
{
	static const char *const pct[3] = { "p50", "p99", "p999" };

	if (tests[t].is_rtt)
		snprintf(buf, len, "%ld B RTT %s (us)", d->opt.size, pct[vi]);
	else
		snprintf(buf, len, "%s", tests[t].label);
}

/* fill_cell - turn a finished run into cell c (percentiles in us from
 * d->hist, or goodput of request + response payload in Gbit/s). */
static void fill_cell(const struct demo *d, const struct run_spec *s,
		      int rc, const struct run_result *res, struct cell *c)
{
	c->ran = 1;
	c->ok = rc == 0 && res->done > 0;
	c->done = res->done;
	c->lost = res->lost;
	c->truncated = res->truncated;
	snprintf(c->why, sizeof(c->why), "%s",
		 rc == 0 && res->done == 0 ? "no RPC completed" : res->why);
	if (!c->ok)
		return;
	if (s->blocking) {
		c->v[0] = homa_histogram_percentile(d->hist, 50.0) / NS_PER_US;
		c->v[1] = homa_histogram_percentile(d->hist, 99.0) / NS_PER_US;
		c->v[2] = homa_histogram_percentile(d->hist, 99.9) / NS_PER_US;
	} else {
		c->v[0] = (double)res->done * (double)(s->req_len +
			  resp_bytes(s)) * 8.0 / (double)res->elapsed_ns;
	}
}

/* measure - one measurement: test t, system y, round r, into d->cells. */
static void measure(struct demo *d, enum test t, enum sys y, int r)
{
	struct run_spec s = spec_for(d, t);
	struct run_result res;
	struct cell *c = &d->cells[t][y][r];
	char label[64];
	int rc;

	memset(&res, 0, sizeof(res));
	homa_histogram_reset(d->hist);
	test_label(d, t, 0, label, sizeof(label));
	watchdog_kick("%s, %s, round %d", label, sys_name[y], r + 1);
	if (y == SYS_HOMA)
		rc = run_homa(d, &s, &res);
	else if (y == SYS_TCP)
		rc = run_tcp(d, &s, &res);
	else
		rc = run_udp(d, y == SYS_UDP_SPIN, &s, &res);
	fill_cell(d, &s, rc, &res, c);
	if (d->opt.verbose)
		fprintf(stderr, "homa-demo: %s, %s, round %d: %s %.2f "
			"(%ld RPCs)\n", label, sys_name[y], r + 1,
			c->ok ? "ok" : c->why, c->v[0], c->done);
}

/* run_all - every test, R rounds, systems interleaved within a round. */
static void run_all(struct demo *d)
{
	int t, r, y;

	for (t = 0; t < NTESTS; t++)
		for (r = 0; r < d->opt.rounds; r++)
			for (y = 0; y < NSYS; y++)
				if (sys_applies(d, (enum test)t, (enum sys)y))
					measure(d, (enum test)t, (enum sys)y,
						r);
}

/* ---------------------------------------------------------------- */
/* Summaries                                                          */

/* cmp_double - qsort order of doubles. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * summary - the median over rounds of value vi of test t, system y.
 * Returns NAN when the system did not take part or any round failed.
 */
static double summary(const struct demo *d, enum test t, enum sys y, int vi)
{
	double v[MAX_ROUNDS];
	int r, n = d->opt.rounds;

	for (r = 0; r < n; r++) {
		const struct cell *c = &d->cells[t][y][r];

		if (!c->ran || !c->ok)
			return NAN;
		v[r] = c->v[vi];
	}
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* cell_text - a table entry: the value, "n/a" or "FAIL". */
static void cell_text(const struct demo *d, enum test t, enum sys y, int vi,
		      char *buf, size_t len)
{
	double v = summary(d, t, y, vi);

	if (!sys_applies(d, t, y))
		snprintf(buf, len, "n/a");
	else if (isnan(v))
		snprintf(buf, len, "FAIL");
	else
		snprintf(buf, len, tests[t].is_rtt ? "%.1f" : "%.2f", v);
}

/* ratio - a / b, NAN when either is missing. */
static double ratio(double a, double b)
{
	return isnan(a) || isnan(b) || b == 0.0 ? NAN : a / b;
}

/* Rows of the table: (test, value index). */
static const struct { enum test t; int vi; } rows[] = {
	{ T_RTT, 0 }, { T_RTT, 1 }, { T_RTT, 2 },
	{ T_BIG1, 0 }, { T_BIG4, 0 }, { T_ECHO, 0 },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* Ratio lines: Homa against another system for one row. */
static const struct {
	enum test t;
	int vi;
	enum sys other;
	const char *hint;
} ratios[] = {
	{ T_RTT, 0, SYS_TCP, "below 1: Homa faster" },
	{ T_RTT, 1, SYS_TCP, "below 1: Homa faster" },
	{ T_RTT, 0, SYS_UDP_SPIN, "Homa's distance from the UDP floor" },
	{ T_BIG1, 0, SYS_TCP, "above 1: Homa faster" },
	{ T_BIG4, 0, SYS_TCP, "above 1: Homa faster" },
	{ T_ECHO, 0, SYS_TCP, "above 1: Homa faster" },
};
#define NRATIOS (sizeof(ratios) / sizeof(ratios[0]))

/* print_table - the medians, one row per measurement, one column per
 * system. */
static void print_table(const struct demo *d)
{
	char label[64], v[32];
	size_t i;
	int y;

	printf("%-34s", "test");
	for (y = 0; y < NSYS; y++)
		printf("%14s", sys_name[y]);
	printf("\n");
	for (i = 0; i < NROWS; i++) {
		test_label(d, rows[i].t, rows[i].vi, label, sizeof(label));
		printf("%-34s", label);
		for (y = 0; y < NSYS; y++) {
			cell_text(d, rows[i].t, (enum sys)y, rows[i].vi, v,
				  sizeof(v));
			printf("%14s", v);
		}
		printf("\n");
	}
}

/* print_ratios - Homa over the other system, from the medians. */
static void print_ratios(const struct demo *d)
{
	char label[64];
	double q;
	size_t i;

	printf("\n");
	for (i = 0; i < NRATIOS; i++) {
		test_label(d, ratios[i].t, ratios[i].vi, label, sizeof(label));
		q = ratio(summary(d, ratios[i].t, SYS_HOMA, ratios[i].vi),
			  summary(d, ratios[i].t, ratios[i].other,
				  ratios[i].vi));
		if (isnan(q))
			printf("ratio homa/%-13s %-34s    n/a\n",
			       sys_name[ratios[i].other], label);
		else
			printf("ratio homa/%-13s %-34s %6.2f  (%s)\n",
			       sys_name[ratios[i].other], label, q,
			       ratios[i].hint);
	}
}

/* print_rounds - every round's value, and every failure's reason. */
static void print_rounds(const struct demo *d)
{
	char label[64];
	size_t i;
	int y, r;

	printf("\nevery round, in run order:\n");
	for (i = 0; i < NROWS; i++) {
		test_label(d, rows[i].t, rows[i].vi, label, sizeof(label));
		for (y = 0; y < NSYS; y++) {
			if (!sys_applies(d, rows[i].t, (enum sys)y))
				continue;
			printf("  %-34s %-13s", label, sys_name[y]);
			for (r = 0; r < d->opt.rounds; r++) {
				const struct cell *c =
					&d->cells[rows[i].t][y][r];

				if (c->ok)
					printf(rows[i].t == T_RTT ? " %7.1f%s"
					       : " %7.2f%s", c->v[rows[i].vi],
					       c->truncated ? "*" : "");
				else
					printf(" %7s", "FAIL");
			}
			printf("\n");
		}
	}
}

/* print_problems - failures, truncations, UDP losses and Homa server
 * errors, if any. */
static void print_problems(const struct demo *d)
{
	char label[64];
	int t, y, r;

	if (d->hs.errors)
		printf("note: the Homa server thread met %ld error(s); the "
		       "first: %s\n", d->hs.errors, d->hs.why);

	for (t = 0; t < NTESTS; t++)
		for (y = 0; y < NSYS; y++)
			for (r = 0; r < d->opt.rounds; r++) {
				const struct cell *c = &d->cells[t][y][r];

				if (!c->ran || (c->ok && !c->truncated &&
						!c->lost))
					continue;
				test_label(d, (enum test)t, 0, label,
					   sizeof(label));
				printf("%s: %s, %s, round %d: ",
				       c->ok ? "note" : "FAILED", label,
				       sys_name[y], r + 1);
				if (!c->ok)
					printf("%s\n", c->why);
				else
					printf("%ld RPCs measured%s, %ld UDP "
					       "datagrams lost\n", c->done,
					       c->truncated ? " (*: stopped "
					       "by the 20 s budget)" : "",
					       c->lost);
			}
}

/* Engine counters of one Homa socket, read before it closes. */
struct homa_counters {
	int n;
	const char *names[256];
	uint64_t values[256];
};

/* read_counters - homa_stats_get of fd into k (n = 0 on failure). */
static void read_counters(int fd, struct homa_counters *k)
{
	k->n = homa_stats_get(fd, k->names, k->values, 256);
	if (k->n < 0) {
		perror("homa-demo: homa_stats_get");
		k->n = 0;
	}
	if (k->n > 256)
		k->n = 256;
}

/* print_counters - the nonzero counters of k, on one line. */
static void print_counters(const char *who, const struct homa_counters *k)
{
	int i;

	printf("homa %s counters:", who);
	for (i = 0; i < k->n; i++)
		if (k->values[i] != 0)
			printf(" %s=%llu", k->names[i],
			       (unsigned long long)k->values[i]);
	printf("\n");
}

/* print_text - the whole report for people. */
static void print_text(const struct demo *d, const struct homa_counters *kc,
		       const struct homa_counters *ks)
{
	printf("homa-demo: loopback 127.0.0.1, %d round%s (table: median of "
	       "the rounds), %ld RPCs of %ld B and %ld RPCs of 1 MB per "
	       "round\n\n", d->opt.rounds, d->opt.rounds == 1 ? "" : "s",
	       d->opt.rpcs, d->opt.size, d->opt.big_rpcs);
	print_table(d);
	print_ratios(d);
	print_rounds(d);
	printf("\nHoma: one client socket, 4 out = 4 RPCs in flight on it; "
	       "one server thread.\nTCP: TCP_NODELAY, 4-byte length prefix; "
	       "RTT on one blocking connection;\n     goodput on one "
	       "connection per outstanding RPC (4 out = 4 connections,\n"
	       "     one client thread with poll, one server thread each).\n"
	       "UDP: one datagram each way; spin = client polls with "
	       "MSG_DONTWAIT.\nGoodput counts request + response payload "
	       "bytes over the measured time.\n");
	print_problems(d);
	if (d->opt.stats) {
		print_counters("client", kc);
		print_counters("server", ks);
	}
}

/* json_num - a JSON number, or null for NAN. */
static void json_num(double v)
{
	if (isnan(v))
		printf("null");
	else
		printf("%.3f", v);
}

/* json_system - the object of system y in test t: medians, rounds. */
static void json_system(const struct demo *d, enum test t, enum sys y)
{
	static const char *const key[3] = { "p50_us", "p99_us", "p999_us" };
	int nv = tests[t].is_rtt ? 3 : 1, vi, r;

	printf("\"%s\":{", sys_json[y]);
	for (vi = 0; vi < nv; vi++) {
		printf("\"%s\":", tests[t].is_rtt ? key[vi] : "gbps");
		json_num(summary(d, t, y, vi));
		printf(",");
	}
	printf("\"rounds\":[");
	for (r = 0; r < d->opt.rounds; r++) {
		const struct cell *c = &d->cells[t][y][r];

		printf("%s{\"ok\":%s,\"rpcs\":%ld,\"lost\":%ld,"
		       "\"truncated\":%s", r ? "," : "",
		       c->ok ? "true" : "false", c->done, c->lost,
		       c->truncated ? "true" : "false");
		for (vi = 0; vi < nv; vi++) {
			printf(",\"%s\":", tests[t].is_rtt ? key[vi] : "gbps");
			json_num(c->ok ? c->v[vi] : NAN);
		}
		if (!c->ok)
			printf(",\"error\":\"%s\"", c->why);
		printf("}");
	}
	printf("]}");
}

/* json_counters - {"name":value,...} of the nonzero counters of k. */
static void json_counters(const struct homa_counters *k)
{
	int i, first = 1;

	printf("{");
	for (i = 0; i < k->n; i++)
		if (k->values[i] != 0) {
			printf("%s\"%s\":%llu", first ? "" : ",", k->names[i],
			       (unsigned long long)k->values[i]);
			first = 0;
		}
	printf("}");
}

/* print_json - the whole report as one JSON object on one line. */
static void print_json(const struct demo *d, const struct homa_counters *kc,
		       const struct homa_counters *ks)
{
	char label[64];
	size_t i;
	int t, y;

	printf("{\"tool\":\"homa-demo\",\"host\":\"127.0.0.1\",\"rounds\":%d,"
	       "\"rpcs\":%ld,\"big_rpcs\":%ld,\"size\":%ld,\"big_size\":%ld,"
	       "\"tests\":{", d->opt.rounds, d->opt.rpcs, d->opt.big_rpcs,
	       d->opt.size, BIG_SIZE);
	for (t = 0; t < NTESTS; t++) {
		printf("%s\"%s\":{\"outstanding\":%d,", t ? "," : "",
		       tests[t].json, tests[t].outstanding);
		for (y = 0; y < NSYS; y++)
			if (sys_applies(d, (enum test)t, (enum sys)y)) {
				json_system(d, (enum test)t, (enum sys)y);
				printf("%s", y + 1 < NSYS &&
				       sys_applies(d, (enum test)t,
						   (enum sys)(y + 1)) ? "," : "");
			}
		printf("}");
	}
	printf("},\"ratios\":[");
	for (i = 0; i < NRATIOS; i++) {
		test_label(d, ratios[i].t, ratios[i].vi, label, sizeof(label));
		printf("%s{\"what\":\"homa/%s %s\",\"value\":", i ? "," : "",
		       sys_json[ratios[i].other], label);
		json_num(ratio(summary(d, ratios[i].t, SYS_HOMA, ratios[i].vi),
			       summary(d, ratios[i].t, ratios[i].other,
				       ratios[i].vi)));
		printf("}");
	}
	printf("],\"homa_server_errors\":%ld", d->hs.errors);
	if (d->hs.errors)
		printf(",\"homa_server_first_error\":\"%s\"", d->hs.why);
	if (d->opt.stats) {
		printf(",\"homa_counters\":{\"client\":");
		json_counters(kc);
		printf(",\"server\":");
		json_counters(ks);
		printf("}");
	}
	printf("}\n");
}

/* all_ok - every measurement that ran completed. */
static int all_ok(const struct demo *d)
{
	int t, y, r;

	for (t = 0; t < NTESTS; t++)
		for (y = 0; y < NSYS; y++)
			for (r = 0; r < d->opt.rounds; r++)
				if (d->cells[t][y][r].ran &&
				    !d->cells[t][y][r].ok)
					return 0;
	return 1;
}

/* ---------------------------------------------------------------- */
/* Options                                                            */

/* usage - the --help text to f. */
static void usage(FILE *f)
{
	fprintf(f,
"usage: homa-demo [options]\n"
"Homa, TCP and UDP side by side on loopback (127.0.0.1), in one run:\n"
"  - RTT of small RPCs, one outstanding: Homa, TCP (TCP_NODELAY, one\n"
"    persistent connection), UDP ping-pong (blocking, and a spinning\n"
"    client: the floor); p50/p99/p999 in microseconds;\n"
"  - goodput of 1,000,000-byte requests (100-byte responses) with 1 and\n"
"    4 outstanding, and of 1,000,000-byte echoes: Homa vs TCP in Gbit/s.\n"
"Each measurement runs in R rounds, the systems interleaved; the table\n"
"shows the median of the rounds, and every round's value follows.\n"
"\n"
"options:\n"
"  --rounds R     rounds of every measurement (1..%d; default 3)\n"
"  --rpcs N       RPCs per round of the RTT test (default 20000); unless\n"
"                 --big-rpcs is given, also sets the 1 MB tests to N/100\n"
"  --big-rpcs N   RPCs per round of each 1 MB test (default 200)\n"
"  --size B       request and response bytes of the RTT test (1..%ld;\n"
"                 default 100; UDP is skipped above %ld)\n"
"  --port P       Homa server port (1..32767; default 4100); TCP uses\n"
"                 P+1 and UDP P+2\n"
"  --quick        a short smoke run: 1 round, 300 and 8 RPCs\n"
"  --json         print one JSON object with every number instead\n"
"  --stats        also print the Homa sockets' nonzero engine counters\n"
"  --verbose      report each measurement on stderr as it ends\n"
"  --rtt-only     only the RTT test (no 1 MB goodput tests)\n"
"  --help         this text\n"
"\n"
"Every stage is watched: no progress for %d s aborts the run.\n"
"Exit status: 0 all measurements completed, 1 one failed or set-up\n"
"failed, 2 bad options.\n", MAX_ROUNDS, (long)HOMA_MAX_MESSAGE_LENGTH,
		UDP_MAX, WATCHDOG_S);
}

/* bad_option - print a complaint about an option and exit 2. */
static void bad_option(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "homa-demo: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'homa-demo --help'.\n");
	exit(2);
}

/* parse_long - the integer value of option name in lo..hi, or exit 2. */
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

/* parse_options - fill o from argv; exits 0 for --help, 2 on errors. */
static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "rpcs", required_argument, NULL, 'n' },
		{ "big-rpcs", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 's' },
		{ "port", required_argument, NULL, 'p' },
		{ "quick", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'j' },
		{ "stats", no_argument, NULL, 'S' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "rtt-only", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, k, idx = 0, rounds = 0;
	long rpcs = 0, big = 0;

	memset(o, 0, sizeof(*o));
	o->size = 100;
	o->port = 4100;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longs, &idx)) != -1) {
		if (c != '?' && optarg && strncmp(optarg, "--", 2) == 0)
			bad_option("option --%s needs a value (not '%s')",
				   longs[idx].name, optarg);
		switch (c) {
		case 'r': rounds = (int)parse_long("rounds", optarg, 1,
						    MAX_ROUNDS); break;
		case 'n': rpcs = parse_long("rpcs", optarg, 1, 10000000);
			  break;
		case 'b': big = parse_long("big-rpcs", optarg, 1, 100000);
			  break;
		case 's': o->size = parse_long("size", optarg, 1,
					       HOMA_MAX_MESSAGE_LENGTH); break;
		case 'p': o->port = (int)parse_long("port", optarg, 1,
						     HOMA_MIN_DEFAULT_PORT - 1);
			  break;
		case 'q': o->quick = 1; break;
		case 'j': o->json = 1; break;
		case 'S': o->stats = 1; break;
		case 'v': o->verbose = 1; break;
		case 'R': o->rtt_only = 1; break;
		case 'h': usage(stdout); exit(0);
		default:        /* optopt: a known option, value wrong */
			for (k = 0; optopt && longs[k].name; k++)
				if (longs[k].val == optopt)
					bad_option("option --%s %s",
						   longs[k].name,
						   longs[k].has_arg ?
						   "needs a value" :
						   "takes no value");
			bad_option("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		bad_option("unexpected argument '%s'", argv[optind]);
	o->rounds = rounds ? rounds : o->quick ? 1 : 3;
	o->rpcs = rpcs ? rpcs : o->quick ? 300 : 20000;
	o->big_rpcs = big ? big : rpcs ? (rpcs / 100 ? rpcs / 100 : 1)
					: o->quick ? 8 : 200;
}

/* ---------------------------------------------------------------- */
/* Set-up and tear-down                                               */

/* alloc_buffers - payload pattern, histogram and client buffers.
 * Returns 0 or -1 (printed). */
static int alloc_buffers(struct demo *d)
{
	int i;

	d->pattern = malloc(BIG_SIZE);
	d->sbuf = malloc(UDP_MAX);
	d->rbuf = malloc(UDP_MAX);
	d->hist = malloc(sizeof(*d->hist));
	d->us = malloc(sizeof(*d->us));
	for (i = 0; i < MAX_OUT; i++)
		d->tcp_rbuf[i] = malloc(TCP_CAP);
	for (i = 0; i < MAX_OUT; i++)
		if (d->tcp_rbuf[i] == NULL)
			break;
	if (!d->pattern || !d->sbuf || !d->rbuf || !d->hist || !d->us ||
	    i < MAX_OUT) {
		fprintf(stderr, "homa-demo: out of memory\n");
		return -1;
	}
	fill_pattern(d->pattern, BIG_SIZE);
	memcpy(d->sbuf, d->pattern, UDP_MAX);
	return 0;
}

/* free_buffers - undo alloc_buffers (also after it failed half-way). */
static void free_buffers(struct demo *d)
{
	int i;

	free(d->pattern);
	free(d->sbuf);
	free(d->rbuf);
	free(d->hist);
	free(d->us);
	for (i = 0; i < MAX_OUT; i++)
		free(d->tcp_rbuf[i]);
}

/* udp_client - a UDP socket connected to the UDP server, 1 s receive
 * timeout; -1 (printed) on failure. */
static int udp_client(int port)
{
	struct sockaddr_in a = loopback(port);
	int fd = udp_socket(0, UDP_WAIT_NS);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("homa-demo: connect (UDP)");
		close(fd);
		return -1;
	}
	return fd;
}

/* open_all - the three servers and the clients.  Returns 0, or -1 with
 * whatever was opened closed again. */
static int open_all(struct demo *d)
{
	struct sockaddr_in a = loopback(homa_port(d));

	memset(&d->homa_dest, 0, sizeof(d->homa_dest));
	d->homa_dest.in4 = a;
	watchdog_kick("set-up");
	if (homa_server_start(&d->hs, homa_port(d), d->pattern) < 0)
		return -1;
	if (homa_side_open(&d->hc, 0) < 0)
		return -1;      /* nothing can wake the server: exit ends it */
	d->tcp_lfd = tcp_listen(tcp_port(d));
	if (d->tcp_lfd < 0)
		goto stop_homa;
	if (udp_server_start(d->us, udp_port(d)) < 0)
		goto close_tcp;
	d->udp_fd = udp_client(udp_port(d));
	if (d->udp_fd < 0)
		goto stop_udp;
	return 0;

stop_udp:
	udp_server_stop(d->us);
close_tcp:
	close(d->tcp_lfd);
stop_homa:
	homa_server_stop(&d->hs, &d->hc, &a);
	homa_side_close(&d->hc);
	return -1;
}

/* close_all - stop the servers (threads joined) and close every socket.
 * Returns 0, or -1 when a thread would not stop. */
static int close_all(struct demo *d)
{
	struct sockaddr_in a = loopback(homa_port(d));
	int rc = 0;

	watchdog_kick("shut-down");
	if (homa_server_stop(&d->hs, &d->hc, &a) < 0)
		rc = -1;
	homa_side_close(&d->hc);
	udp_server_stop(d->us);
	close(d->udp_fd);
	close(d->tcp_lfd);
	return rc;
}

int main(int argc, char **argv)
{
	static struct demo d;   /* big: keep it off the stack */
	struct homa_counters *kc, *ks;
	int rc = 1;

	parse_options(argc, argv, &d.opt);
	watchdog_start();
	kc = calloc(1, sizeof(*kc));
	ks = calloc(1, sizeof(*ks));
	if (kc == NULL || ks == NULL || alloc_buffers(&d) < 0 ||
	    open_all(&d) < 0)
		goto out;
	run_all(&d);
	if (d.opt.stats) {
		read_counters(d.hc.fd, kc);
		read_counters(d.hs.side.fd, ks);
	}
	rc = close_all(&d) < 0 || !all_ok(&d);
	alarm(0);
	if (d.opt.json)
		print_json(&d, kc, ks);
	else
		print_text(&d, kc, ks);
out:
	alarm(0);
	free_buffers(&d);
	free(kc);
	free(ks);
	return rc;
}
