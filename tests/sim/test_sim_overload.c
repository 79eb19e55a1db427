// SPDX-License-Identifier: BSD-2-Clause
/*
 * Overload in the simulator (docs/performance.md, finding 3): a server
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
#include <string.h>
#include <cmocka.h>

#include "homa.h"
#include "sim_test_util.h"

static struct sim_workload w1;

static int load_w1(void **state)
{
	(void)state;
	sim_test_load(&w1, "w1");
	return 0;
}

static int free_w1(void **state)
{
	(void)state;
	sim_workload_free(&w1);
	return 0;
}

/* overloaded - the run described above, with host 0 taking service_ns
 * per request; returns its counters. */
static void overloaded(uint64_t service_ns, uint64_t messages,
		       struct sim_counters *c)
{
	struct sim_params p;
	struct sim_report r;

	sim_params_defaults(&p);
	p.workload = &w1;
	p.hosts = 8;
	p.messages = messages;
	p.mean_gap_ns = 50000;
	p.service_ns = service_ns;
	p.service_hosts = 1;
	p.wait_responses = true;
	p.seed = 4;
	sim_test_run(&p, &r, NULL, 0, c);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(slow_server__clients_wait),
		cmocka_unit_test(very_slow_server__clients_wait),
	};

	return cmocka_run_group_tests(tests, load_w1, free_w1);
}
