// SPDX-License-Identifier: BSD-2-Clause
/*
 * Tests of whole simulations (src/sim/sim_driver.c, sim_host.c,
 * sim_net.c, sim_stats.c) driving the real core: idle-network times,
 * completion, determinism, and the short-message tail under load.
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
#include "homa_wire.h"
#include "sim_test_util.h"

/*
 * The targets at 80% load on 16 hosts: short-message P99 slowdown
 * of W4 at most 2.5, and P99 of the shortest half of the messages at most
 * 3 for W1-W5, checked with the simulator's defaults.  The simulated NIC
 * is a FIFO that takes every packet the core releases; simulated hosts
 * default to max_nic_queue_ns 0 (their pacer wakes exactly when the link
 * goes idle, so paced data hardly waits there, as with the Homa papers'
 * simulated senders).  The kernel's allowance of 5 us (KERNEL_QUEUE_NS) lets paced
 * data wait at the NIC; at 10 Gbit/s that is about twice the
 * idle-network time of a short message, which waits behind it, and it
 * misses the targets (docs/scheduling.md): it is held to a bound that
 * includes that cost (KERNEL_*_BOUND), so that a change that makes it
 * worse still fails.
 */
#define W4_80_SHORT_P99_BOUND 2.5
#define HALF_P99_BOUND 3.0
#define KERNEL_QUEUE_NS 5000
/* Measured with the kernel's 5 us over seeds 1..3 with the message counts
 * of the tests below: W4 short P99 3.82..3.86; shortest-half P99
 * 3.67..4.14 for W1-W4, 2.59..2.68 for W5. */
#define KERNEL_SHORT_P99_BOUND 5.0
#define KERNEL_HALF_P99_BOUND 5.0

static struct workload_dist w4;

static int load_w4(void **state)
{
	(void)state;
	sim_test_load(&w4, "w4");
	return 0;
}

static int free_w4(void **state)
{
	(void)state;
	workload_dist_free(&w4);
	return 0;
}

/* params - defaults with W4. */
static void params(struct sim_params *p)
{
	sim_params_defaults(p);
	p->workload = &w4;
}

/* One 100-byte message on an idle one-switch network: two links of
 * 1 us and two transmissions of its frame at 10 Gbit/s. */
static void sim_unloaded_ns__one_small_packet(void **state)
{
	struct sim_params p;
	char err[128];
	uint32_t wire = 100 + HOMA_DATA_HDR_LEN + 20 + 38;
	uint64_t tx = ((uint64_t)wire * 8000 + 9999) / 10000;

	(void)state;
	params(&p);
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), 0);
	assert_true(sim_unloaded_ns(&p, 100, true) == 2 * tx + 2 * 1000);
}

/* Bigger messages take longer; crossing racks takes longer than staying
 * in one. */
static void sim_unloaded_ns__sizes_and_paths(void **state)
{
	struct sim_params p;
	char err[128];
	uint64_t a, b, c, d;

	(void)state;
	params(&p);
	p.topology = SIM_TOPO_TWO_TIER;
	p.racks = 2;
	p.hosts_per_rack = 2;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), 0);
	a = sim_unloaded_ns(&p, 1000, true);
	b = sim_unloaded_ns(&p, 1000, false);
	c = sim_unloaded_ns(&p, 1000000, true);
	d = sim_unloaded_ns(&p, 1000000, false);
	assert_true(a > 0 && a < b);
	assert_true(c > b && c < d);
	/* 1 MB at 10 Gbit/s needs at least 800 us. */
	assert_true(c > 800000 && c < 1000000);
}

/* A lone message has slowdown exactly 1. */
static void single_message__slowdown_one(void **state)
{
	struct sim_report r;
	struct sim_params p;
	int topo;

	(void)state;
	for (topo = 0; topo < 2; topo++) {
		params(&p);
		p.messages = 1;
		p.load = 0.01;
		if (topo) {
			p.topology = SIM_TOPO_TWO_TIER;
			p.racks = 3;
			p.hosts_per_rack = 3;
			p.spines = 2;
		}
		sim_test_run(&p, &r, NULL, 0, NULL);
		assert_int_equal(r.completed, 1);
		assert_int_equal(r.measured, 1);
		assert_true(r.p50 == 1.0);
		assert_true(r.p99 == 1.0);
	}
}

/* A seeded small run completes every message, and the same seed gives
 * the same JSON byte for byte; another seed does not. */
static void small_run__completes_and_repeats(void **state)
{
	static char a[16384], b[16384], c[16384];
	struct sim_counters ca;
	struct sim_report r;
	struct sim_params p;

	(void)state;
	params(&p);
	p.hosts = 8;
	p.load = 0.5;
	p.messages = 2000;
	p.seed = 7;
	sim_test_run(&p, &r, a, sizeof(a), &ca);
	assert_int_equal(r.messages, 2000);
	assert_int_equal(r.completed, 2000);
	assert_int_equal(r.failed, 0);
	assert_int_equal(ca.switch_drops, 0);
	assert_true(r.p50 >= 1.0 && r.p99 >= r.p50);
	sim_test_run(&p, &r, b, sizeof(b), NULL);
	assert_string_equal(a, b);
	p.seed = 8;
	sim_test_run(&p, &r, c, sizeof(c), NULL);
	assert_string_not_equal(a, c);
	assert_non_null(strstr(a, "\"short_p99_slowdown\":"));
	assert_non_null(strstr(a, "\"buckets\":[{\"max_bytes\":"));
}

/* w4_80 - p: the defaults with W4 at 80% load on 16 hosts, 4000
 * requests. */
static void w4_80(struct sim_params *p)
{
	params(p);
	p->hosts = 16;
	p->load = 0.8;
	p->messages = 4000;
}

/* nic_bound - the most wire bytes the core's pacer lets wait at a NIC of
 * p behind the packet on the link: max_nic_queue_ns (the value p runs
 * with) at the link rate, plus the full packet the pacer releases just
 * under that limit, plus two full packets' worth of what bypasses the
 * pacer meanwhile (control packets, messages under throttle_min_bytes). */
static uint64_t nic_bound(const struct sim_params *p)
{
	return (uint64_t)p->core.max_nic_queue_ns * p->link_mbps / 8000 +
	       3 * (uint64_t)sim_params_packet_wire_bytes(p);
}

/* W4 at 80% load on 16 hosts: with the defaults short messages keep a
 * low tail with 8 priorities (the target; measured 1.84..1.86 over seeds
 * 1..3), and do at least twice as badly with one FIFO queue. */
static void w4_80__short_tail(void **state)
{
	struct sim_report r8, r1;
	struct sim_params p;

	(void)state;
	w4_80(&p);
	assert_int_equal(p.core.max_nic_queue_ns, 0);
	sim_test_run(&p, &r8, NULL, 0, NULL);
	assert_int_equal(r8.completed, 4000);
	print_message("W4 80%% 16 hosts, 8 priorities: short P99 %.3f, P99 "
		      "%.3f\n", r8.short_p99, r8.p99);
	assert_true(r8.short_p99 <= W4_80_SHORT_P99_BOUND);
	p.priorities = 1;
	sim_test_run(&p, &r1, NULL, 0, NULL);
	assert_int_equal(r1.completed, 4000);
	print_message("W4 80%% 16 hosts, 1 priority: short P99 %.3f, P99 "
		      "%.3f\n", r1.short_p99, r1.p99);
	assert_true(r1.short_p99 >= 2 * r8.short_p99);
}

/* W4 at 80% load on 16 hosts with the kernel's 5 us NIC allowance: the
 * pacer fills the NIC queue beyond what the default allows (so the
 * setting is in effect) but within its own bound (measured 8,794..9,169
 * bytes over seeds 1..3 against 10,924), and the short-message tail,
 * which waits behind that queue, stays under KERNEL_SHORT_P99_BOUND. */
static void w4_80__kernel_allowance(void **state)
{
	struct sim_counters c;
	struct sim_report r;
	struct sim_params p;
	uint64_t bound0;

	(void)state;
	w4_80(&p);
	bound0 = nic_bound(&p);
	p.core.max_nic_queue_ns = KERNEL_QUEUE_NS;
	sim_test_run(&p, &r, NULL, 0, &c);
	assert_int_equal(r.completed, 4000);
	print_message("W4 80%% 16 hosts, 5 us NIC allowance: short P99 %.3f; "
		      "most bytes at a NIC %llu (bound %llu; %llu without "
		      "the allowance)\n", r.short_p99,
		      (unsigned long long)c.max_nic_queue_bytes,
		      (unsigned long long)nic_bound(&p),
		      (unsigned long long)bound0);
	assert_true(r.short_p99 <= KERNEL_SHORT_P99_BOUND);
	assert_true(c.max_nic_queue_bytes > bound0);
	assert_true(c.max_nic_queue_bytes <= nic_bound(&p));
	assert_true(c.violations == 0);
}

/* A workload and the requests its shortest-half check sends: each run
 * takes about a second of CPU time or less. */
struct half_case {
	const char *name;
	uint64_t messages;
};

/* half_p99 - the shortest-half P99 of workload w at 80% load on 16
 * hosts with messages requests and max_nic_queue_ns queue_ns (the
 * default is 0); every request completes. */
static double half_p99(struct workload_dist *w, uint64_t messages,
		       int64_t queue_ns)
{
	struct sim_report r;
	struct sim_params p;

	sim_params_defaults(&p);
	p.workload = w;
	p.hosts = 16;
	p.load = 0.8;
	p.messages = messages;
	p.core.max_nic_queue_ns = queue_ns;
	sim_test_run(&p, &r, NULL, 0, NULL);
	assert_int_equal(r.completed, messages);
	return r.half_p99;
}

/* W1-W5 at 80% load on 16 hosts: the shortest half of the messages keeps
 * a P99 slowdown of at most 3 with the defaults (measured 1.78..2.71 over
 * seeds 1..3 with these counts), and stays under KERNEL_HALF_P99_BOUND
 * with the kernel's 5 us NIC allowance. */
static void w1_w5_80__shortest_half_tail(void **state)
{
	static const struct half_case cases[] = {
		{ "w1", 10000 }, { "w2", 10000 }, { "w3", 10000 },
		{ "w4", 4000 }, { "w5", 2000 },
	};
	struct workload_dist w;
	double dflt, kernel;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sim_test_load(&w, cases[i].name);
		dflt = half_p99(&w, cases[i].messages, 0);
		kernel = half_p99(&w, cases[i].messages, KERNEL_QUEUE_NS);
		print_message("%s 80%% 16 hosts: shortest-half P99 %.3f "
			      "(defaults), %.3f (5 us NIC allowance)\n",
			      cases[i].name, dflt, kernel);
		workload_dist_free(&w);
		assert_true(dflt <= HALF_P99_BOUND);
		assert_true(kernel <= KERNEL_HALF_P99_BOUND);
	}
}

/* The pacer: with it on (the defaults, max_nic_queue_ns 0), the NIC queue
 * stays within what the pacer allows (measured 1,902..2,252 bytes over
 * seeds 1..3 against a bound of 4,674: three full packets); with it off
 * (HOMA_FLAG_DONT_THROTTLE) each host pushes every byte it may send into
 * its NIC queue at once, the queue grows far beyond, and short messages
 * wait behind it: their tail grows many times over. */
static void w4_80__pacer_off(void **state)
{
	struct sim_counters con, coff;
	struct sim_report on, off;
	struct sim_params p;
	uint64_t bound;

	(void)state;
	w4_80(&p);
	sim_test_run(&p, &on, NULL, 0, &con);
	bound = nic_bound(&p);
	p.pacer_off = true;
	sim_test_run(&p, &off, NULL, 0, &coff);
	assert_int_equal(off.completed, 4000);
	print_message("W4 80%% 16 hosts: most bytes at a NIC %llu (pacer on; "
		      "bound %llu), %llu (off); short P99 %.3f (on), %.3f "
		      "(off)\n", (unsigned long long)con.max_nic_queue_bytes,
		      (unsigned long long)bound,
		      (unsigned long long)coff.max_nic_queue_bytes,
		      on.short_p99, off.short_p99);
	assert_true(con.max_nic_queue_bytes > 0);
	assert_true(con.max_nic_queue_bytes <= bound);
	assert_true(coff.max_nic_queue_bytes > 10 * bound);
	assert_true(off.short_p99 > 3 * on.short_p99);
	assert_true(p.core.flags & HOMA_FLAG_DONT_THROTTLE);
	assert_true(coff.violations == 0 && con.violations == 0);
}

/* Two tiers with packet spraying deliver everything. */
static void two_tier__completes(void **state)
{
	struct sim_counters c;
	struct sim_report r;
	struct sim_params p;

	(void)state;
	params(&p);
	p.topology = SIM_TOPO_TWO_TIER;
	p.racks = 3;
	p.hosts_per_rack = 4;
	p.spines = 2;
	p.load = 0.6;
	p.messages = 1000;
	sim_test_run(&p, &r, NULL, 0, &c);
	assert_int_equal(r.completed, 1000);
	assert_int_equal(c.unroutable, 0);
	assert_true(r.p50 >= 1.0);
}

/* Tiny switch buffers drop packets; the core's retransmissions still
 * finish every message. */
static void small_buffers__drops_recovered(void **state)
{
	struct sim_counters c;
	struct sim_report r;
	struct sim_params p;

	(void)state;
	params(&p);
	p.hosts = 6;
	p.load = 0.5;
	p.messages = 200;
	p.buffer_bytes = 8 * 1024;
	sim_test_run(&p, &r, NULL, 0, &c);
	assert_true(c.switch_drops > 0);
	assert_int_equal(r.completed + r.failed, 200);
	assert_int_equal(r.completed, 200);
}

/* Bad parameters are refused with a reason. */
static void sim_params_check__rejects(void **state)
{
	struct sim_params p;
	char err[128];

	(void)state;
	params(&p);
	p.load = 0.0;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "load"));
	params(&p);
	p.load = 1.5;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), -EINVAL);
	params(&p);
	p.priorities = 9;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), -EINVAL);
	params(&p);
	p.priorities = 0;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), -EINVAL);
	params(&p);
	p.hosts = 1;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), -EINVAL);
	params(&p);
	p.buffer_bytes = 100;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), -EINVAL);
	params(&p);
	p.workload = NULL;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), -EINVAL);
	params(&p);
	p.topology = SIM_TOPO_TWO_TIER;
	p.spines = 0;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), -EINVAL);
}

/* Priorities set the core's levels: half scheduled, the rest cut by
 * length; one level means everything at 0. */
static void sim_params_check__priorities(void **state)
{
	struct sim_params p;
	char err[128];
	int64_t cut;

	(void)state;
	params(&p);
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), 0);
	assert_int_equal(p.core.num_priorities, 8);
	assert_int_equal(p.core.max_sched_prio, 3);
	assert_int_equal(p.core.unsched_cutoffs[7], 200);
	assert_int_equal(p.core.unsched_cutoffs[4], HOMA_MAX_MESSAGE_LENGTH);
	assert_int_equal(p.core.link_mbps, 10000);
	params(&p);
	p.priorities = 4;
	p.cutoffs = SIM_CUTOFFS_CORE;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), 0);
	assert_int_equal(p.core.num_priorities, 4);
	assert_int_equal(p.core.max_sched_prio, 1);
	assert_int_equal(p.core.unsched_cutoffs[3], 200);
	assert_int_equal(p.core.unsched_cutoffs[2], HOMA_MAX_MESSAGE_LENGTH);
	assert_int_equal(p.core.unsched_cutoffs[1], HOMA_MAX_MESSAGE_LENGTH);
	assert_int_equal(p.core.unsched_cutoffs[4], 0);
	params(&p);
	p.priorities = 4;
	p.cutoffs = SIM_CUTOFFS_WORKLOAD;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), 0);
	cut = p.core.unsched_cutoffs[3];
	assert_true(cut > 200 && cut < HOMA_MAX_MESSAGE_LENGTH);
	params(&p);
	p.priorities = 4;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), 0);
	assert_true(p.core.unsched_cutoffs[3] == cut);
	params(&p);
	p.priorities = 1;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), 0);
	assert_int_equal(p.core.num_priorities, 1);
	assert_int_equal(p.core.max_sched_prio, 0);
	params(&p);
	p.cutoffs = SIM_CUTOFFS_WORKLOAD;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), 0);
	assert_true(p.core.unsched_cutoffs[7] < p.core.unsched_cutoffs[6]);
	assert_true(p.core.unsched_cutoffs[6] < p.core.unsched_cutoffs[5]);
	assert_true(p.core.unsched_cutoffs[5] < HOMA_MAX_MESSAGE_LENGTH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_unloaded_ns__one_small_packet),
		cmocka_unit_test(sim_unloaded_ns__sizes_and_paths),
		cmocka_unit_test(single_message__slowdown_one),
		cmocka_unit_test(small_run__completes_and_repeats),
		cmocka_unit_test(w4_80__short_tail),
		cmocka_unit_test(w4_80__kernel_allowance),
		cmocka_unit_test(w1_w5_80__shortest_half_tail),
		cmocka_unit_test(w4_80__pacer_off),
		cmocka_unit_test(two_tier__completes),
		cmocka_unit_test(small_buffers__drops_recovered),
		cmocka_unit_test(sim_params_check__rejects),
		cmocka_unit_test(sim_params_check__priorities),
	};

	return cmocka_run_group_tests(tests, load_w4, free_w4);
}
