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
 * Only the public API (homa.h) is used, plus the tools' library
 * (tools/common, with the histogram).  This file holds the measurements and
 * main; homa_demo/demo.h lists the files that hold the rest.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo.h"
#include "tool_addr.h"
#include "tool_watchdog.h"


const char *const sys_name[NSYS] = {
	"homa", "tcp", "udp(blocking)", "udp(spin)"
};
const char *const sys_json[NSYS] = {
	"homa", "tcp", "udp_blocking", "udp_spin"
};

const struct test_def tests[NTESTS] = {
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

int fail(struct run_result *res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->why, sizeof(res->why), fmt, ap);
	va_end(ap);
	return -1;
}

long resp_bytes(const struct run_spec *s)
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

struct run_spec warm_spec(const struct run_spec *s)
{
	struct run_spec w = *s;

	w.rpcs = s->rpcs / 10 + 1 < 1000 ? s->rpcs / 10 + 1 : 1000;
	w.verify = 1;
	w.hist = NULL;
	return w;
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

int sys_applies(const struct demo *d, enum test t, enum sys y)
{
	if (!(tests[t].systems & (1u << y)))
		return 0;
	if (d->opt.rtt_only && !tests[t].is_rtt)
		return 0;
	return !((y == SYS_UDP || y == SYS_UDP_SPIN) && d->opt.size > UDP_MAX);
}

void test_label(const struct demo *d, enum test t, int vi, char *buf,
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
	tool_watchdog_stage(WATCHDOG_S, "%s, %s, round %d", label, sys_name[y],
			    r + 1);
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

/* open_all - the three servers and the clients.  Returns 0, or -1 with
 * whatever was opened closed again. */
static int open_all(struct demo *d)
{
	d->homa_dest = tool_addr_loopback(AF_INET, homa_port(d));
	tool_watchdog_stage(WATCHDOG_S, "set-up");
	if (homa_server_begin(d) < 0)
		return -1;
	if (homa_client_open(d) < 0)
		goto stop_homa;
	d->tcp_lfd = tcp_listener(tcp_port(d));
	if (d->tcp_lfd < 0)
		goto close_client;
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
close_client:
	homa_client_close(d);
stop_homa:
	homa_server_end(d);
	return -1;
}

/* close_all - stop the servers (threads joined) and close every socket.
 * Returns 0, or -1 when a thread would not stop. */
static int close_all(struct demo *d)
{
	int rc = 0;

	tool_watchdog_stage(WATCHDOG_S, "shut-down");
	if (homa_server_end(d) < 0)
		rc = -1;
	homa_client_close(d);
	udp_server_stop(d->us);
	close(d->udp_fd);
	close(d->tcp_lfd);
	return rc;
}

int main(int argc, char **argv)
{
	static struct demo d;   /* big: keep it off the stack */
	struct tool_counters *kc, *ks;
	int rc = 1;

	parse_options(argc, argv, &d.opt);
	tool_watchdog_install(PROG ": watchdog: no progress for 60 s, stuck "
			      "in: ");
	tool_watchdog_stage(WATCHDOG_S, "start-up");
	kc = calloc(1, sizeof(*kc));
	ks = calloc(1, sizeof(*ks));
	if (kc == NULL || ks == NULL || alloc_buffers(&d) < 0 ||
	    open_all(&d) < 0)
		goto out;
	run_all(&d);
	if (d.opt.stats) {
		read_counters(d.hc.fd, kc);
		read_counters(d.hs.sock.fd, ks);
	}
	rc = close_all(&d) < 0 || !all_ok(&d);
	tool_watchdog_stage(0, "report");
	if (d.opt.json)
		print_json(&d, kc, ks);
	else
		print_text(&d, kc, ks);
out:
	tool_watchdog_stage(0, "exit");
	free_buffers(&d);
	free(kc);
	free(ks);
	return rc;
}
