// SPDX-License-Identifier: BSD-2-Clause
/*
 * Overload in the simulator (docs/overload.md): a server
 * whose application is slower than the requests that reach it must make
 * its clients wait, not time them out, and the control packets that keep
 * them waiting (RESEND and its BUSY answers, NEED_ACK) must back off
 * rather than repeat every few ticks.
 *
 * Host 0 of 8 (one switch, 10 Gbit/s, W1 requests, 1-byte responses) has
 * a slow application (service_ns per request, sim_params.service_ns);
 * every host sends requests to the others with mean gaps of 50 us, so
 * host 0 gets about twice what it can serve and a backlog of hundreds of
 * requests builds up, each waiting far longer than timeout_ticks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "homa.h"
#include "homa_wire.h"
#include "sim_test_util.h"

static struct workload_dist w1, w4;

static int load_w1(void **state)
{
	(void)state;
	sim_test_load(&w1, "w1");
	sim_test_load(&w4, "w4");
	return 0;
}

static int free_w1(void **state)
{
	(void)state;
	workload_dist_free(&w1);
	workload_dist_free(&w4);
	return 0;
}

/* overloaded_on - the run described above with workload w, regions of
 * region_mb MiB and mean gaps of gap_ns, host 0 taking service_ns per
 * request; returns its counters. */
static void overloaded_on(const struct workload_dist *w, size_t region_mb,
			  uint64_t gap_ns, uint64_t service_ns,
			  uint64_t messages, struct sim_counters *c)
{
	struct sim_params p;
	struct sim_report r;

	sim_params_defaults(&p);
	p.workload = w;
	p.region_bytes = region_mb << 20;
	p.hosts = 8;
	p.messages = messages;
	p.mean_gap_ns = gap_ns;
	p.service_ns = service_ns;
	p.service_hosts = 1;
	p.wait_responses = true;
	p.seed = 4;
	sim_test_run(&p, &r, NULL, 0, c);
}

/* overloaded - overloaded_on with W1, 64 MiB regions, 50 us gaps. */
static void overloaded(uint64_t service_ns, uint64_t messages,
		       struct sim_counters *c)
{
	overloaded_on(&w1, 64, 50000, service_ns, messages, c);
}

/* ctrl_per_rpc - control packets of the kind that keep waiting RPCs
 * alive (RESEND, BUSY, NEED_ACK), per request. */
static double ctrl_per_rpc(const struct sim_counters *c)
{
	return (double)(c->core[HOMA_STAT_packets_sent_RESEND] +
			c->core[HOMA_STAT_packets_sent_BUSY] +
			c->core[HOMA_STAT_packets_sent_NEED_ACK]) /
	       (double)c->generated;
}

/* print - the counters the finding is about. */
static void print(const char *what, const struct sim_counters *c)
{
	print_message("%s: %llu requests, %llu responses, %llu errors, "
		      "%llu timeouts; sent RESEND %llu, BUSY %llu, NEED_ACK "
		      "%llu, RPC_UNKNOWN %llu (%.2f per request); %.1f ms\n",
		      what, (unsigned long long)c->generated,
		      (unsigned long long)c->responses,
		      (unsigned long long)c->client_errors,
		      (unsigned long long)c->core[HOMA_STAT_rpc_timeouts],
		      (unsigned long long)c->core[HOMA_STAT_packets_sent_RESEND],
		      (unsigned long long)c->core[HOMA_STAT_packets_sent_BUSY],
		      (unsigned long long)
		      c->core[HOMA_STAT_packets_sent_NEED_ACK],
		      (unsigned long long)
		      c->core[HOMA_STAT_packets_sent_RPC_UNKNOWN],
		      ctrl_per_rpc(c), c->end_ns / 1e6);
}

/* A server twice slower than its load (100 us per request, 50 us between
 * requests): every RPC completes (a backlog of hundreds, each waiting up
 * to ~50 ms), none fails, and the control packets stay below 0.9 per
 * request (seed 4: 0.65; 1.20 when every quiet RPC probed every 5
 * ticks). */
static void slow_server__clients_wait(void **state)
{
	struct sim_counters c;

	(void)state;
	overloaded(100000, 8000, &c);
	print("service 100 us", &c);
	assert_int_equal(c.violations, 0);
	assert_int_equal(c.client_errors, 0);
	assert_int_equal(c.responses, c.generated);
	assert_true(ctrl_per_rpc(&c) < 0.9);
}

/* A server twenty times slower than its load (1 ms per request):
 * requests wait up to ~250 ms, more than two timeouts; BUSY keeps every
 * client waiting, and the probes back off to one per resend_max_interval
 * (seed 4: 1.62 control packets per request; 6.82 when every quiet RPC
 * probed every 5 ticks). */
static void very_slow_server__clients_wait(void **state)
{
	struct sim_counters c;

	(void)state;
	overloaded(1000000, 2400, &c);
	print("service 1 ms", &c);
	assert_int_equal(c.violations, 0);
	assert_int_equal(c.client_errors, 0);
	assert_int_equal(c.responses, c.generated);
	assert_true(ctrl_per_rpc(&c) < 3.0);
}

/* W4 requests (up to 1 MB, 100 us gaps) to a server that takes 2 ms per
 * request, with 2 MiB receive regions: its queued requests hold their
 * bpages, so new ones wait for buffer space (hundreds of waits) for a long
 * time.  Their clients probe less and less often (BUSY), yet neither the
 * waiting requests nor the clients time out, and the control packets stay
 * below 6 per request (seed 4: 3.18; 14.58 before the backoff: RESEND
 * 8003, BUSY 11478, NEED_ACK 3849 for 1600 requests). */
static void slow_server_full_pool__clients_wait(void **state)
{
	struct sim_counters c;

	(void)state;
	overloaded_on(&w4, 2, 100000, 2000000, 1600, &c);
	print("W4, 2 MiB, service 2 ms", &c);
	print_message("buffer waits %llu, drop_no_buffer %llu, server "
		      "timeouts %llu\n",
		      (unsigned long long)c.core[HOMA_STAT_buffer_waits],
		      (unsigned long long)c.core[HOMA_STAT_drop_no_buffer],
		      (unsigned long long)
		      c.core[HOMA_STAT_server_rpcs_timed_out]);
	assert_int_equal(c.violations, 0);
	assert_int_equal(c.client_errors, 0);
	assert_int_equal(c.responses, c.generated);
	assert_true(c.core[HOMA_STAT_buffer_waits] > 100);
	assert_true(ctrl_per_rpc(&c) < 6.0);
}

/* slow_receiver - 8 hosts, W1, mean gaps of 50 us, host 0's receiver
 * taking rx_ns per packet with a FIFO of queue_bytes, the core settings
 * core (start from those of sim_params_defaults, as homa-sim does);
 * returns the counters. */
static void slow_receiver(const struct homa_config *core, uint64_t rx_ns,
			  uint64_t queue_bytes, uint64_t messages,
			  struct sim_counters *c)
{
	struct sim_params p;
	struct sim_report r;

	sim_params_defaults(&p);
	p.core = *core;
	p.workload = &w1;
	p.hosts = 8;
	p.messages = messages;
	p.mean_gap_ns = 50000;
	p.rx_ns = rx_ns;
	p.rx_hosts = 1;
	p.rx_queue_bytes = queue_bytes;
	p.wait_responses = true;
	p.seed = 4;
	sim_test_run(&p, &r, NULL, 0, c);
}

/* A host whose CPU reads packets slower than they come (30 us per packet,
 * while about twice as many reach it: the testbed's collapse): its FIFO
 * (1 MiB, a socket buffer) fills, so what reaches its endpoint is hundreds
 * of ms old, and many packets are dropped.  Its peers hear nothing about
 * many of their RPCs for longer than timeout_ticks, yet it keeps answering
 * others.  With the rules before (a silent RPC fails after timeout_ticks
 * whatever its peer does: alive_timeout_ticks = timeout_ticks, no RESEND
 * budget) seed 4 failed 8,867 of 40,000 RPCs; with peer liveness and the
 * budget 898 (RPCs still silent after alive_timeout_ticks, or when their
 * peer went quiet).  The test asks for at least 4 times fewer failures,
 * and no violation. */
static void slow_receiver__no_collapse(void **state)
{
	struct homa_config before, now;
	struct sim_counters c0, c1;
	struct sim_params d;

	(void)state;
	sim_params_defaults(&d);
	now = d.core;
	before = now;
	before.alive_timeout_ticks = before.timeout_ticks;
	before.max_peer_probes = 1000000;
	slow_receiver(&before, 30000, 1 << 20, 40000, &c0);
	print("slow receiver, rules before", &c0);
	print_message("  receiver FIFO drops %llu, most queued %llu bytes\n",
		      (unsigned long long)c0.rx_drops,
		      (unsigned long long)c0.max_rx_queue_bytes);
	slow_receiver(&now, 30000, 1 << 20, 40000, &c1);
	print("slow receiver, peer liveness", &c1);
	print_message("  receiver FIFO drops %llu, most queued %llu bytes\n",
		      (unsigned long long)c1.rx_drops,
		      (unsigned long long)c1.max_rx_queue_bytes);
	assert_true(c0.client_errors > 1000);
	assert_int_equal(c1.violations, 0);
	assert_true(c1.client_errors * 4 < c0.client_errors);
	assert_int_equal(c1.responses + c1.client_errors, c1.generated);
}

/* Every host's receiver slower than its link (130 us per packet, about
 * what valgrind leaves of a loopback receiver) behind a 32 MiB FIFO (a
 * socket buffer of the UDP datapath), three 1 MB requests with 1 MB
 * responses each way at once (test_e2e_threads' concurrent_1mb_messages).
 * When ticks behind the FIFO counted as silence and a silent message's
 * RESENDs asked for all of its granted tail, bytes only waiting in the
 * FIFO were sent again at each probe, the duplicates filled the FIFO and
 * the RPCs timed out (all 9 failed, 77% of the DATA read were duplicates).
 * With the backlog reported (homa_rx_batch.behind) the tail is asked for
 * within the host's budget and all complete, with few duplicates (351 of
 * 13,034 DATA; 14 with the ablation resend_tail_probe). */
static void slow_receivers__1mb_messages_complete(void **state)
{
	struct workload_dist w;
	struct sim_params p;
	struct sim_report r;
	struct sim_counters c;
	char err[256];

	(void)state;
	assert_int_equal(workload_dist_parse(&w, "1000000 1\n", 1000000,
					     "1 MB", err, sizeof(err)), 0);
	sim_params_defaults(&p);
	p.workload = &w;
	p.hosts = 4;
	p.messages = 9;
	p.mean_gap_ns = 1000000;
	p.reply_bytes = 1000000;
	p.rx_ns = 130000;
	p.rx_queue_bytes = 32u << 20;
	p.wait_responses = true;
	p.until_ns = 60000000000ull;
	p.seed = 1;
	sim_test_run(&p, &r, NULL, 0, &c);
	print("slow receivers, 1 MB messages", &c);
	print_message("  duplicates %llu of %llu DATA\n",
		      (unsigned long long)c.core[HOMA_STAT_drop_duplicate_data],
		      (unsigned long long)c.core[HOMA_STAT_packets_rcvd_DATA]);
	assert_int_equal(c.violations, 0);
	assert_int_equal(c.client_errors, 0);
	assert_int_equal(c.responses, c.generated);
	assert_true(c.core[HOMA_STAT_drop_duplicate_data] * 10 <
		    c.core[HOMA_STAT_packets_rcvd_DATA]);
	workload_dist_free(&w);
}


/* ---- a server host whose CPU is the bottleneck (incast) ---- */

/* Payload bytes of a simulated DATA packet (mtu 1500, IPv4, no
 * encapsulation). */
#define SIM_SEG (1500 - 20 - HOMA_DATA_HDR_LEN)

/* packets_of - DATA packets of a message of size bytes. */
static double packets_of(uint32_t size, const void *ctx)
{
	(void)ctx;
	return (double)((size + SIM_SEG - 1) / SIM_SEG);
}

/* What a CPU-limited server run measured. */
struct incast_result {
	struct sim_counters c;
	double goodput;          /* share of the server CPU's time spent on
				  * the DATA packets of the requests it took,
				  * each read once, while requests kept
				  * coming (1 = all of it) */
	double short_p99_ms;     /* P99 completion time, shortest 10% */
	double long_p99_ms;      /* P99 completion time, longest 10% */
};

/* cmp_double - qsort order of doubles. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* p99_ms - P99 of the completion times (ms) of the messages of size in
 * [lo, hi]. */
static double p99_ms(const struct sim_msg *m, size_t n, uint32_t lo,
		     uint32_t hi)
{
	double *v = calloc(n, sizeof(*v));
	size_t k = 0;
	double p;

	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		if (m[i].done_ns && m[i].size >= lo && m[i].size <= hi)
			v[k++] = (double)(m[i].done_ns - m[i].start_ns) / 1e6;
	assert_true(k > 0);
	qsort(v, k, sizeof(*v), cmp_double);
	p = sim_percentile(v, k, 990);
	free(v);
	return p;
}

/* goodput_share - packets_of the requests the server took between the
 * first fifth and the end of the arrivals (the server is backlogged all
 * that time), times rx_ns, over that interval. */
static double goodput_share(const struct sim_msg *m, size_t n,
			    uint64_t rx_ns)
{
	uint64_t last = 0, from;
	double packets = 0.0;

	for (size_t i = 0; i < n; i++)
		if (m[i].start_ns > last)
			last = m[i].start_ns;
	from = last / 5;
	for (size_t i = 0; i < n; i++)
		if (m[i].done_ns > from && m[i].done_ns <= last)
			packets += packets_of(m[i].size, NULL);
	return packets * (double)rx_ns / (double)(last - from);
}

/* incast - 16 hosts on one 10 Gbit/s switch; hosts 1..15 send W4
 * requests (100-byte responses) to host 0, whose CPU reads a packet in
 * 5 us (a 32 MiB FIFO before it, as a socket buffer), with Poisson
 * arrivals offering `overload` times what that CPU can take (in DATA
 * packets; well below the link's rate). */
static void incast(const struct homa_config *core, double overload,
		   uint64_t messages, struct incast_result *res)
{
	const uint64_t rx_ns = 5000;
	const struct sim_msg *m;
	struct sim_params p;
	double per_request, capacity;
	char err[256];
	struct sim *s;
	size_t n;

	sim_params_defaults(&p);
	p.core = *core;
	p.workload = &w4;
	p.hosts = 16;
	p.server_hosts = 1;
	p.rx_hosts = 1;
	p.rx_ns = rx_ns;
	p.messages = messages;
	p.wait_responses = true;
	p.seed = 7;
	per_request = workload_dist_expect(&w4, packets_of, NULL);
	capacity = 1e9 / ((double)rx_ns * per_request);   /* requests/s */
	p.mean_gap_ns = (uint64_t)(15e9 / (capacity * overload));
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), 0);
	s = sim_create(&p, err, sizeof(err));
	assert_non_null(s);
	assert_int_equal(sim_run(s), 0);
	m = sim_messages(s, &n);
	res->c = *sim_get_counters(s);
	res->goodput = goodput_share(m, n, rx_ns);
	res->short_p99_ms = p99_ms(m, n, 0, workload_dist_sample(&w4, 0.1));
	res->long_p99_ms = p99_ms(m, n, workload_dist_sample(&w4, 0.9),
				  UINT32_MAX);
	sim_destroy(s);
	print_message("incast %.0fx: %llu requests, %llu responses, %llu "
		      "errors; goodput %.3f of the server CPU; P99 %.1f ms "
		      "(shortest 10%%) vs %.1f ms (longest 10%%); held %llu, "
		      "resent %llu, FIFO drops %llu, switch drops %llu, "
		      "ticks behind %llu, %.1f ms\n", overload,
		      (unsigned long long)res->c.generated,
		      (unsigned long long)res->c.responses,
		      (unsigned long long)res->c.client_errors, res->goodput,
		      res->short_p99_ms, res->long_p99_ms,
		      (unsigned long long)res->c.core[HOMA_STAT_requests_held],
		      (unsigned long long)res->c.core[HOMA_STAT_resent_packets],
		      (unsigned long long)res->c.rx_drops,
		      (unsigned long long)res->c.switch_drops,
		      (unsigned long long)res->c.core[HOMA_STAT_ticks_behind],
		      res->c.end_ns / 1e6);
}

/* check_graceful - what graceful overload means: every RPC completes, at
 * least 90% of the server CPU goes to first reads of request DATA, and
 * the shortest requests' P99 stays far below the longest ones'. */
static void check_graceful(const struct incast_result *r)
{
	assert_int_equal(r->c.violations, 0);
	assert_int_equal(r->c.client_errors, 0);
	assert_int_equal(r->c.responses, r->c.generated);
	assert_true(r->goodput >= 0.9);
	assert_true(r->short_p99_ms * 4 < r->long_p99_ms);
}

/* A server CPU offered twice what it can read: clients hold the requests
 * the server has not answered beyond their request window, shortest
 * first; the server's own backlog causes no RESENDs or timeouts. */
static void cpu_limited_server__2x_overload(void **state)
{
	struct sim_params d;
	struct incast_result r;

	(void)state;
	sim_params_defaults(&d);
	incast(&d.core, 2.0, 5000, &r);
	check_graceful(&r);
	assert_true(r.c.core[HOMA_STAT_requests_held] > 0);
}

/* The same at four times the server's capacity. */
static void cpu_limited_server__4x_overload(void **state)
{
	struct sim_params d;
	struct incast_result r;

	(void)state;
	sim_params_defaults(&d);
	incast(&d.core, 4.0, 5000, &r);
	check_graceful(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slow_server__clients_wait),
		cmocka_unit_test(very_slow_server__clients_wait),
		cmocka_unit_test(slow_server_full_pool__clients_wait),
		cmocka_unit_test(slow_receiver__no_collapse),
		cmocka_unit_test(slow_receivers__1mb_messages_complete),
		cmocka_unit_test(cpu_limited_server__2x_overload),
		cmocka_unit_test(cpu_limited_server__4x_overload),
	};

	return cmocka_run_group_tests(tests, load_w1, free_w1);
}
