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
 * requests are pipelined on a connection and answered in order.  In open
 * loop a generator thread per client thread only sleeps until each
 * arrival and hands the request over: to a sending thread of its Homa
 * socket, or to the least-loaded connection of a TCP pool whose
 * connections each have a writing and a reading thread.  A protocol whose
 * generators handed more than 1% of their arrivals over more than 1 ms
 * late is reported invalid.
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
 * histograms (tools/common/homa_histogram.h) that do not keep samples.
 *
 * Only the public API (homa.h) is used, plus the workload library
 * (src/workload: sizes, random numbers) and the tools' library
 * (tools/common: the histogram among others).  This file holds the modes (server, client,
 * loopback); homa_perf/perf.h lists the files that hold the rest.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perf.h"
#include "tool_addr.h"
#include "tool_clock.h"
#include "tool_json.h"
#include "tool_sampler.h"
#include "tool_watchdog.h"

const char *const proto_name[NPROTO] = { "homa", "tcp" };

/* print_server_report - what a server did in secs (cpu_s of CPU time), as
 * text or JSON; ts is NULL without TCP, c its Homa socket's counters. */
static void print_server_report(const struct options *o,
				struct tool_homa_server *hs,
				struct tcp_server *ts, double secs,
				double cpu_s, const struct tool_counters *c)
{
	unsigned long hn = atomic_load(&hs->served);
	unsigned long tn = ts ? atomic_load(&ts->served) : 0;
	unsigned long he = atomic_load(&hs->errors);
	unsigned long te = ts ? atomic_load(&ts->errors) : 0;

	if (o->json) {
		printf("{\"tool\":\"homa-perf\",\"mode\":\"server\",\"port\":"
		       "%d,\"tcp_port\":%d,\"threads\":%d,\"seconds\":",
		       o->port, ts ? o->tcp_port : 0, o->threads);
		tool_json_num(stdout, secs);
		printf(",\"cpu_s\":");
		tool_json_num(stdout, cpu_s);
		printf(",\"homa_served\":%lu,\"tcp_served\":%lu,"
		       "\"homa_errors\":%lu,\"tcp_errors\":%lu,"
		       "\"homa_first_error\":", hn, tn, he, te);
		tool_json_string(stdout, hs->first_error);
		printf(",\"settings\":");
		json_settings(stdout);
		printf(",\"counters\":");
		tool_json_counters(stdout, c, 0);
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

/* print_ready - the server's "ready" line on stderr. */
static void print_ready(const struct options *o)
{
	fprintf(stderr, PROG " server: ready: Homa port %d, ", o->port);
	if (o->no_tcp_server)
		fprintf(stderr, "no TCP, ");
	else
		fprintf(stderr, "TCP port %d, ", o->tcp_port);
	fprintf(stderr, "%d Homa thread%s\n", o->threads,
		o->threads == 1 ? "" : "s");
}

/* wait_for_signal - wait for a signal of set (blocked in every thread),
 * or o->duration seconds when nonzero. */
static void wait_for_signal(const struct options *o, const sigset_t *set)
{
	struct timespec wait;
	int sig;

	if (o->duration > 0) {
		wait.tv_sec = (time_t)o->duration;
		wait.tv_nsec = (long)((o->duration - (double)wait.tv_sec) *
				      1e9);
		do
			sig = sigtimedwait(set, NULL, &wait);
		while (sig < 0 && errno == EINTR);
	} else {
		while (sigwait(set, &sig) != 0)
			;
	}
}

/*
 * run_server - serve Homa (and TCP) until SIGINT, SIGTERM or SIGHUP, or
 * o->duration seconds when nonzero; then report.  Returns the exit status.
 */
static int run_server(const struct options *o)
{
	struct tool_homa_server hs;
	struct tcp_server ts;
	struct tool_counters c;
	sigset_t set;
	uint64_t t0, cpu0;

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
		tool_homa_server_stop(&hs, 0);
		tool_homa_server_close(&hs);
		return 1;
	}
	print_ready(o);
	t0 = tool_now_ns();
	cpu0 = tool_cpu_ns();
	wait_for_signal(o, &set);
	tool_watchdog_stage(STAGE_SLACK_S, "server shut-down");
	tool_homa_server_stop(&hs, 0);
	tool_counters_read(&c, hs.sock.fd);
	if (!o->no_tcp_server)
		tcp_server_stop(&ts);
	print_server_report(o, &hs, o->no_tcp_server ? NULL : &ts,
			    (double)(tool_now_ns() - t0) / 1e9,
			    (double)(tool_cpu_ns() - cpu0) / 1e9, &c);
	tool_homa_server_close(&hs);
	tool_watchdog_stage(0, "exit");
	return 0;
}

/* loopback_start - the servers of loopback mode on 127.0.0.1 (Homa on
 * o->port, TCP on o->tcp_port); o->server becomes the Homa server's
 * address.  Returns 0, or -1 after printing why (nothing left running). */
static int loopback_start(struct options *o, struct tool_homa_server *hs,
			  struct tcp_server *ts)
{
	o->server = tool_addr_loopback(AF_INET, o->port);
	tool_watchdog_stage(STAGE_SLACK_S, "server start-up");
	if (homa_server_start(hs, AF_INET, o->port, o->server_threads,
			      o->server_epoll) < 0)
		return -1;
	if (tcp_server_start(ts, AF_INET, o->tcp_port) < 0) {
		tool_homa_server_stop(hs, 0);
		tool_homa_server_close(hs);
		return -1;
	}
	return 0;
}

/* loopback_stop - stop the servers loopback_start started and keep what
 * they did (requests, errors, the Homa socket's counters) in r. */
static void loopback_stop(struct tool_homa_server *hs, struct tcp_server *ts,
			  struct report *r)
{
	tool_watchdog_stage(STAGE_SLACK_S, "server shut-down");
	tool_homa_server_stop(hs, 0);
	tool_counters_read(&r->server_ctr, hs->sock.fd);
	tcp_server_stop(ts);
	r->have_server = 1;
	r->served[P_HOMA] = atomic_load(&hs->served);
	r->served[P_TCP] = atomic_load(&ts->served);
	r->server_errors[P_HOMA] = atomic_load(&hs->errors);
	r->server_errors[P_TCP] = atomic_load(&ts->errors);
	tool_homa_server_close(hs);
	tool_watchdog_stage(0, "report");
}

/* get_baseline - the unloaded RTTs into b: read from --baseline, else
 * measured now for every protocol asked for; saved to --baseline-out when
 * asked.  Returns 0, or -1 after printing why. */
static int get_baseline(const struct options *o, const struct workload *wl,
			const struct report *r, struct baseline *b)
{
	uint32_t sizes[MAX_CAL];
	int nsizes, p;

	if (o->baseline_in) {
		if (baseline_read(b, o->baseline_in) < 0)
			return -1;
	} else {
		nsizes = cal_sizes(wl, sizes);
		for (p = 0; p < NPROTO; p++) {
			if (!(o->protos & (1u << p)))
				continue;
			tool_watchdog_stage((unsigned int)nsizes * 3 +
					    STAGE_SLACK_S, "%s calibration",
					    proto_name[p]);
			if (calibrate(o, (enum proto)p, &r->homa_dest,
				      &r->tcp_dest, sizes, nsizes, b) < 0)
				return -1;
		}
	}
	if (o->baseline_out && baseline_write(b, o->baseline_out) < 0)
		return -1;
	return 0;
}

/* run_phases - a load phase for every protocol asked for, into r->res.
 * Returns 0, or 1 when a phase could not run fully or an RPC failed or
 * was left unfinished (printed). */
static int run_phases(const struct options *o, const struct workload *wl,
		      const struct baseline *b, struct report *r)
{
	const struct stats *st;
	int p, rc = 0;

	for (p = 0; p < NPROTO; p++) {
		if (!(o->protos & (1u << p)))
			continue;
		if (run_phase(o, (enum proto)p, wl, b, &r->homa_dest,
			      &r->tcp_dest, &r->res[p]) < 0 ||
		    r->res[p].setup_error[0])
			rc = 1;
		st = r->res[p].st;
		if (st->failed || st->unfinished) {
			fprintf(stderr, PROG ": %s: %llu RPCs failed, %llu "
				"unfinished%s%s\n", proto_name[p],
				(unsigned long long)st->failed,
				(unsigned long long)st->unfinished,
				st->first_error[0] ? "; first error: " : "",
				st->first_error);
			rc = 1;
		}
	}
	return rc;
}

/*
 * run_client - client and loopback modes: workload, servers (loopback),
 * baseline, one load phase per protocol, report.  Returns the exit status.
 */
static int run_client(struct options *o)
{
	static struct tool_homa_server hs;
	static struct tcp_server ts;
	static struct baseline base;
	static struct report r;
	struct workload wl;
	int p, rc = 1, servers = 0;

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
		if (loopback_start(o, &hs, &ts) < 0)
			goto out;
		servers = 1;
	}
	r.homa_dest = o->server;
	r.tcp_dest = tool_addr_with_port(&o->server, o->tcp_port);
	if (get_baseline(o, &wl, &r, &base) < 0)
		goto out;
	rc = o->duration > 0 ? run_phases(o, &wl, &base, &r) : 0;
out:
	if (servers)
		loopback_stop(&hs, &ts, &r);
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
	tool_watchdog_install(PROG ": watchdog: stage over its time budget: ");
	if (pattern_init() < 0) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	if (o.sample_every > 0 && tool_sampler_start(stderr,
						     o.sample_every) < 0) {
		fprintf(stderr, PROG ": sampler: %s\n", strerror(errno));
		free(perf_pattern);
		return 1;
	}
	rc = o.mode == M_SERVER ? run_server(&o) : run_client(&o);
	fflush(stdout);
	free(perf_pattern);
	return rc;
}
