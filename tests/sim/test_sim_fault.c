// SPDX-License-Identifier: BSD-2-Clause
/*
 * Tests of the simulator's faults and invariant checks (src/sim/
 * sim_fault.c, the checks of sim_host.c and sim_driver.c, and
 * sim_campaign.c): the plans a seed derives, partitions, what each
 * per-packet fault does to a run, restarts, the checker catching
 * tampered runs, campaign runs repeating exactly, and recovery from
 * random loss under the RESEND rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "homa.h"
#include "sim_campaign.h"
#include "sim_internal.h"
#include "sim_test_util.h"

static struct workload_dist mix;

static int setup(void **state)
{
	char err[64];

	(void)state;
	return workload_dist_parse(&mix, "100 0.3\n3000 0.6\n60000 0.9\n"
				   "300000 1\n", HOMA_MAX_MESSAGE_LENGTH, "mix",
				   err, sizeof(err));
}

static int teardown(void **state)
{
	(void)state;
	workload_dist_free(&mix);
	return 0;
}

/* params - hosts on one switch, requests of the mix, responses of 2000
 * bytes, waiting for every response; no traffic of its own (messages 0)
 * unless the caller sets it. */
static void params(struct sim_params *p, int hosts)
{
	sim_params_defaults(p);
	p->workload = &mix;
	p->hosts = hosts;
	p->messages = 0;
	p->reply_bytes = 2000;
	p->wait_responses = true;
}

/* make - check p and create its simulation. */
static struct sim *make(struct sim_params *p)
{
	char err[128];
	struct sim *s;

	if (sim_params_check(p, err, sizeof(err)) != 0)
		fail_msg("parameters: %s", err);
	s = sim_create(p, err, sizeof(err));
	if (!s)
		fail_msg("sim_create: %s", err);
	return s;
}

/* send_sizes - requests of these sizes from host src to host dst now. */
static void send_sizes(struct sim *s, uint32_t src, uint32_t dst,
		       const uint32_t *sizes, int n)
{
	int i;

	for (i = 0; i < n; i++)
		assert_true(sim_send_one(s, src, dst, sizes[i]) >= 0);
}

/* finish - run to the end, then 400 ms of quiet, then the end checks;
 * returns the violations. */
static uint64_t finish(struct sim *s)
{
	assert_int_equal(sim_run_to(s, 5000000000ull, true), 0);
	assert_true(sim_finished(s));
	assert_int_equal(sim_run_to(s, sim_now(s) + 400000000ull, false), 0);
	return sim_check_quiet(s);
}

/* print_violations - show them (when a test fails, they say why). */
static void print_violations(const struct sim *s)
{
	const struct sim_violations *v = sim_get_violations(s);
	int i;

	for (i = 0; i < v->kept; i++)
		print_message("violation: %s\n", v->text[i]);
}

static const uint32_t sizes[] = { 1, 100, 1424, 5000, 70000, 300000,
				  1000000 };
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

/* The same seed gives the same plan; plans stay inside the fault phase
 * and the hosts; over many seeds every kind of fault appears. */
static void sim_fault_plan_derive__bounds_and_coverage(void **state)
{
	int seen[9] = { 0 };
	uint64_t seed;

	(void)state;
	for (seed = 1; seed <= 500; seed++) {
		struct sim_fault_plan a, b;
		int i, k;

		sim_fault_plan_derive(&a, seed, 4, 80000000, true);
		sim_fault_plan_derive(&b, seed, 4, 80000000, true);
		assert_memory_equal(&a, &b, sizeof(a));
		assert_true(a.seed == seed && a.heal_ns == 80000000);
		assert_true(a.drop >= 0 && a.drop < 1 && a.duplicate < 1 &&
			    a.reorder < 1 && a.delay < 1 &&
			    a.corrupt_payload < 1 && a.corrupt_header < 1 &&
			    a.escape < 1);
		assert_true(a.reorder == 0 || a.reorder_max_ns > 0);
		assert_true(a.delay == 0 || a.delay_max_ns >= 1000000);
		for (i = 0; i < a.npartitions; i++) {
			assert_true(a.part[i].start_ns < a.part[i].end_ns);
			assert_true(a.part[i].end_ns <= a.heal_ns);
			assert_true(a.part[i].side != 0 &&
				    a.part[i].side < 0xf);
		}
		for (i = 0; i < a.nrestarts; i++) {
			assert_true(a.restart[i].host < 4);
			/* Quiet: down longer than a packet can live. */
			assert_true(a.restart[i].down_ns >= a.delay_max_ns +
				    a.reorder_max_ns +
				    SIM_FAULT_QUEUE_SLACK_NS);
			assert_true(a.restart[i].at_ns + a.restart[i].down_ns <
				    a.heal_ns);
			for (k = 0; k < i; k++)
				assert_false(a.restart[k].host ==
					     a.restart[i].host &&
					     a.restart[i].at_ns <=
					     a.restart[k].at_ns +
					     a.restart[k].down_ns &&
					     a.restart[k].at_ns <=
					     a.restart[i].at_ns +
					     a.restart[i].down_ns);
		}
		seen[0] += a.drop > 0;
		seen[1] += a.duplicate > 0;
		seen[2] += a.reorder > 0;
		seen[3] += a.delay > 0;
		seen[4] += a.corrupt_payload > 0;
		seen[5] += a.corrupt_header > 0;
		seen[6] += a.escape > 0;
		seen[7] += a.npartitions > 0;
		seen[8] += a.nrestarts > 0;
	}
	for (seed = 0; seed < 9; seed++)
		assert_true(seen[seed] > 20 && seen[seed] < 480);
}

/* A two-way partition cuts both ways between the sides, a one-way one
 * only from side A; neither cuts inside a side, nor outside its time. */
static void sim_partitioned__ways_and_time(void **state)
{
	struct sim_fault_plan f;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.npartitions = 1;
	f.part[0].start_ns = 100;
	f.part[0].end_ns = 200;
	f.part[0].side = 0x3;           /* hosts 0 and 1 */
	assert_true(sim_partitioned(&f, 0, 2, 150));
	assert_true(sim_partitioned(&f, 2, 1, 150));
	assert_false(sim_partitioned(&f, 0, 1, 150));
	assert_false(sim_partitioned(&f, 2, 3, 150));
	assert_false(sim_partitioned(&f, 0, 2, 99));
	assert_false(sim_partitioned(&f, 0, 2, 200));
	f.part[0].one_way = true;
	assert_true(sim_partitioned(&f, 0, 2, 150));
	assert_false(sim_partitioned(&f, 2, 0, 150));
}

/* plan_only - an empty plan with a fault phase of heal_ns. */
static void plan_only(struct sim_fault_plan *f, uint64_t heal_ns)
{
	memset(f, 0, sizeof(f[0]));
	f->seed = 9;
	f->heal_ns = heal_ns;
}

/* Every packet lost for 20 ms: nothing arrives before the heal, then
 * retransmissions complete every RPC with its bytes. */
static void drop__all_until_heal(void **state)
{
	struct sim_fault_plan f;
	struct sim_params p;
	const struct sim_msg *m;
	struct sim *s;
	size_t n, i;

	(void)state;
	plan_only(&f, 20000000);
	f.drop = 1.0;
	params(&p, 3);
	p.faults = &f;
	s = make(&p);
	send_sizes(s, 0, 1, sizes, NSIZES);
	send_sizes(s, 2, 1, sizes, 3);
	assert_true(finish(s) == 0);
	m = sim_messages(s, &n);
	for (i = 0; i < n; i++) {
		assert_int_equal(m[i].state, SIM_MSG_OK);
		assert_true(m[i].done_ns > 20000000);
	}
	assert_true(sim_get_counters(s)->fault_drops > 0);
	assert_int_equal(sim_get_counters(s)->responses, n);
	sim_destroy(s);
}

/* loss_run - W4 on 16 hosts at load 0.5, 2,000 requests, every packet
 * lost with chance 1% all through the run (seed 1), waiting for every
 * response; with the core's RESEND rule, or with libhoma's rule before
 * 2026-12-04 (old: no budget, resend_floor_packets 0, the tail probed one
 * packet first, resend_tail_probe, at the message's levels);
 * probe_after_wait as given.  Counters into *c. */
static void loss_run(bool old, bool probe_after_wait, struct sim_counters *c)
{
	struct workload_dist w4;
	struct sim_fault_plan f;
	struct sim_params p;
	struct sim_report r;

	sim_test_load(&w4, "w4");
	plan_only(&f, UINT64_MAX / 2);
	f.seed = 1;
	f.drop = 0.01;
	sim_params_defaults(&p);
	p.workload = &w4;
	p.hosts = 16;
	p.load = 0.5;
	p.messages = 2000;
	p.wait_responses = true;
	p.seed = 1;
	p.faults = &f;
	if (old) {
		p.core.resend_floor_packets = 0;
		p.core.resend_tail_probe = 1;
	}
	p.core.probe_after_wait = probe_after_wait;
	sim_test_run(&p, &r, NULL, 0, c);
	workload_dist_free(&w4);
}

/* Random loss of 1%: with the core's rule (the missing tail asked for
 * within the host's budget, the next part as soon as the last one came)
 * every RPC completes within 60 ms of simulated time (measured 25 ms),
 * with the default settings and with probe_after_wait off (24 ms); with
 * probe_after_wait off too, the old rule (no budget, the tail probed one
 * packet first) takes more than four times as long (323 ms), its last
 * messages waiting on tail probes. */
static void drop__random_loss_recovers_fast(void **state)
{
	struct sim_counters now, base, old;

	(void)state;
	loss_run(false, true, &now);
	loss_run(false, false, &base);
	loss_run(true, false, &old);
	print_message("1%% loss: done at %.1f ms (probe_after_wait off "
		      "%.1f ms, and old rule %.1f ms), %llu packets lost\n",
		      now.end_ns / 1e6, base.end_ns / 1e6, old.end_ns / 1e6,
		      (unsigned long long)now.fault_drops);
	assert_true(now.fault_drops > 500);
	assert_int_equal(now.violations, 0);
	assert_int_equal(now.client_errors, 0);
	assert_int_equal(now.responses, 2000);
	assert_true(now.end_ns < 60000000);
	assert_int_equal(base.responses, 2000);
	assert_true(base.end_ns < 60000000);
	assert_int_equal(old.responses, 2000);
	assert_true(old.end_ns > 4 * base.end_ns);
}

/* Every packet twice, some late: duplicates are dropped by the core,
 * each request runs once, each RPC completes once with its bytes. */
static void duplicate__every_packet(void **state)
{
	const struct sim_counters *c;
	struct sim_fault_plan f;
	struct sim_params p;
	struct sim *s;

	(void)state;
	plan_only(&f, 1000000000);
	f.duplicate = 1.0;
	f.reorder_max_ns = 20000;
	params(&p, 3);
	p.faults = &f;
	s = make(&p);
	send_sizes(s, 0, 1, sizes, NSIZES);
	send_sizes(s, 1, 2, sizes, NSIZES);
	assert_true(finish(s) == 0);
	c = sim_get_counters(s);
	assert_true(c->fault_dups > c->packets / 2);
	assert_int_equal(c->responses, 2 * NSIZES);
	/* A late copy of a request may run again once its RPC is over. */
	assert_true(c->executions - c->reexecutions == 2 * NSIZES);
	assert_true(c->core[HOMA_STAT_drop_duplicate_data] > 0);
	sim_destroy(s);
}

/* Reordered and long-delayed packets (stale after their RPC ended):
 * everything completes once, nothing is left over. */
static void reorder_delay__stale_packets(void **state)
{
	const struct sim_counters *c;
	struct sim_fault_plan f;
	struct sim_params p;
	struct sim *s;
	uint64_t v;

	(void)state;
	plan_only(&f, 30000000);
	f.reorder = 0.3;
	f.reorder_max_ns = 30000;
	f.delay = 0.05;
	f.delay_max_ns = 20000000;
	params(&p, 3);
	p.faults = &f;
	s = make(&p);
	send_sizes(s, 0, 1, sizes, NSIZES);
	send_sizes(s, 2, 0, sizes, NSIZES);
	v = finish(s);
	print_violations(s);
	assert_true(v == 0);
	c = sim_get_counters(s);
	assert_true(c->fault_reorders > 0 && c->fault_delays > 0);
	assert_int_equal(c->responses, 2 * NSIZES);
	sim_destroy(s);
}

/* Corrupted payloads: the receiving datapath's checksum drops them and
 * retransmissions repair the messages.  When the corruption escapes the
 * checksum, the RPCs are tainted and their bytes are not held against
 * the core. */
static void corrupt__checksum_and_taint(void **state)
{
	const struct sim_counters *c;
	struct sim_fault_plan f;
	struct sim_params p;
	struct sim *s;
	size_t i, n, tainted = 0;
	const struct sim_msg *m;

	(void)state;
	plan_only(&f, 15000000);
	f.corrupt_payload = 0.2;
	params(&p, 3);
	p.faults = &f;
	s = make(&p);
	send_sizes(s, 0, 1, sizes, NSIZES);
	assert_true(finish(s) == 0);
	c = sim_get_counters(s);
	assert_true(c->fault_corrupts > 0);
	assert_true(c->csum_drops == c->fault_corrupts);
	assert_true(c->fault_escapes == 0);
	assert_int_equal(c->responses, NSIZES);
	sim_destroy(s);

	f.escape = 1.0;
	s = make(&p);
	send_sizes(s, 0, 1, sizes, NSIZES);
	assert_true(finish(s) == 0);
	c = sim_get_counters(s);
	assert_true(c->fault_escapes > 0 && c->csum_drops == 0);
	m = sim_messages(s, &n);
	for (i = 0; i < n; i++)
		tainted += sim_tainted(s, m[i].src, m[i].id);
	assert_true(tainted > 0);
	assert_int_equal(c->responses, NSIZES);
	sim_destroy(s);
}

/* A partition of host 1 for 30 ms: its RPCs wait (or time out, which
 * the fault phase allows) and the others go on; after the heal every
 * request of the healed phase completes. */
static void partition__then_heal(void **state)
{
	const struct sim_counters *c;
	struct sim_fault_plan f;
	struct sim_params p;
	struct sim *s;
	uint64_t v;

	(void)state;
	plan_only(&f, 40000000);
	f.npartitions = 1;
	f.part[0].start_ns = 1000000;
	f.part[0].end_ns = 31000000;
	f.part[0].side = 0x2;
	params(&p, 4);
	p.faults = &f;
	p.messages = 40;
	p.heal_messages = 20;
	p.mean_gap_ns = 2000000;
	s = make(&p);
	v = finish(s);
	print_violations(s);
	assert_true(v == 0);
	c = sim_get_counters(s);
	assert_true(c->partition_drops > 0);
	assert_int_equal(c->generated, 60);
	assert_int_equal(c->responses + c->client_errors, 60);
	sim_destroy(s);
}

/* A server restarts while it receives and serves requests: the client
 * RPCs start again at the new incarnation (RPC_UNKNOWN), which executes
 * them; nothing is left in either endpoint. */
static void restart__server_forgets(void **state)
{
	const struct sim_counters *c;
	struct sim_fault_plan f;
	struct sim_params p;
	const struct sim_msg *m;
	struct sim *s;
	size_t n, i, again = 0;
	uint64_t v;

	(void)state;
	plan_only(&f, 10000000);
	f.nrestarts = 1;
	f.restart[0].host = 1;
	f.restart[0].at_ns = 500000;
	f.restart[0].down_ns = 1000000;
	params(&p, 2);
	p.faults = &f;
	s = make(&p);
	send_sizes(s, 0, 1, sizes, NSIZES);
	v = finish(s);
	print_violations(s);
	assert_true(v == 0);
	c = sim_get_counters(s);
	assert_int_equal(c->restarts, 1);
	assert_int_equal(s->hosts[1].incarnation, 1);
	assert_int_equal(c->responses, NSIZES);
	m = sim_messages(s, &n);
	for (i = 0; i < n; i++)
		again += (m[i].exec_mask & 2) != 0;
	assert_true(again > 0);
	sim_destroy(s);
}

/* A client restarts: its outstanding RPCs are lost with it (not
 * violations), its new incarnation uses new ids and its new requests
 * complete. */
static void restart__client_loses_rpcs(void **state)
{
	const struct sim_counters *c;
	struct sim_fault_plan f;
	struct sim_params p;
	struct sim *s;
	long a, b;
	uint64_t v;

	(void)state;
	plan_only(&f, 3000000);
	f.nrestarts = 1;
	f.restart[0].host = 0;
	f.restart[0].at_ns = 100000;
	f.restart[0].down_ns = 0;
	params(&p, 2);
	p.faults = &f;
	s = make(&p);
	a = sim_send_one(s, 0, 1, 1000000);
	assert_int_equal(sim_run_to(s, 5000000, false), 0);
	b = sim_send_one(s, 0, 1, 1000);
	assert_true(a >= 0 && b > a);
	v = finish(s);
	print_violations(s);
	assert_true(v == 0);
	c = sim_get_counters(s);
	assert_int_equal(c->lost, 1);
	assert_int_equal(s->msgs[a].state, SIM_MSG_LOST);
	assert_int_equal(s->msgs[b].state, SIM_MSG_OK);
	assert_int_equal(s->msgs[b].client_inc, 1);
	assert_true(s->msgs[a].id >> 52 == 0 && s->msgs[b].id >> 52 == 1);
	sim_destroy(s);
}

/* The checks catch what is wrong: a request of another length than
 * sent, a response of another length, a response that completes an RPC
 * other than its own, bytes of another message, and at the end RPCs and
 * packets left over. */
static void checks__catch_tampering(void **state)
{
	const struct sim_violations *v;
	struct sim_params p;
	struct sim *s;
	long i;

	(void)state;
	params(&p, 2);
	s = make(&p);
	i = sim_send_one(s, 0, 1, 5000);
	s->msgs[i].size = 5001;
	assert_true(finish(s) == 0);
	v = sim_get_violations(s);
	assert_true(v->count == 1);
	assert_non_null(strstr(v->text[0], "wrong length"));
	sim_destroy(s);

	s = make(&p);
	i = sim_send_one(s, 0, 1, 5000);
	while (s->msgs[i].execs == 0)
		sim_run_to(s, sim_now(s) + 100, false);
	s->msgs[i].reply_size = 7;     /* the client expects 7 bytes */
	assert_true(finish(s) == 0);
	v = sim_get_violations(s);
	assert_true(v->count == 1);
	assert_non_null(strstr(v->text[0], "wrong response length"));
	sim_destroy(s);

	s = make(&p);
	i = sim_send_one(s, 0, 1, 5000);
	s->msgs[i].id += 2;            /* the response names another id */
	sim_run_to(s, 5000000, false);
	v = sim_get_violations(s);
	assert_true(v->count >= 1);
	assert_non_null(strstr(v->text[0], "no RPC of its own"));
	sim_destroy(s);

	s = make(&p);
	i = sim_send_one(s, 0, 1, 200000);
	s->p.seed++;                   /* the server expects other bytes */
	sim_run_to(s, 5000000, false);
	v = sim_get_violations(s);
	assert_true(v->count >= 1);
	assert_non_null(strstr(v->text[0], "bytes differ"));
	sim_destroy(s);

	s = make(&p);
	sim_send_one(s, 0, 1, 200000);
	sim_run_to(s, 20000, false);
	assert_true(sim_check_quiet(s) >= 3);
	v = sim_get_violations(s);
	assert_non_null(strstr(v->text[0], "never completed"));
	assert_non_null(strstr(v->text[1], "RPCs left"));
	sim_destroy(s);
	(void)i;
}

/* A campaign run repeats exactly for its seed, sends every request of
 * both phases, and differs for another seed. */
static void sim_campaign_run__repeats(void **state)
{
	struct sim_campaign_result a, b;
	struct workload_dist rq, rp;
	struct sim_campaign_opts o;
	char err[128];

	(void)state;
	assert_int_equal(sim_campaign_workloads(&rq, &rp), 0);
	sim_campaign_defaults(&o);
	o.requests = &rq;
	o.replies = &rp;
	o.messages = 20;
	o.heal_messages = 5;
	assert_int_equal(sim_campaign_run(&o, 3, &a, err, sizeof(err)), 0);
	assert_int_equal(sim_campaign_run(&o, 3, &b, err, sizeof(err)), 0);
	assert_memory_equal(&a.c, &b.c, sizeof(a.c));
	assert_memory_equal(&a.plan, &b.plan, sizeof(a.plan));
	assert_true(a.v.count == b.v.count && a.end_ns == b.end_ns);
	assert_int_equal(a.c.generated, 25);
	assert_true(a.end_ns > a.heal_ns);
	assert_int_equal(sim_campaign_run(&o, 4, &b, err, sizeof(err)), 0);
	assert_memory_not_equal(&a.plan, &b.plan, sizeof(a.plan));
	o.hosts = 1;
	assert_int_equal(sim_campaign_run(&o, 3, &b, err, sizeof(err)),
			 -EINVAL);
	workload_dist_free(&rq);
	workload_dist_free(&rp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_fault_plan_derive__bounds_and_coverage),
		cmocka_unit_test(sim_partitioned__ways_and_time),
		cmocka_unit_test(drop__all_until_heal),
		cmocka_unit_test(drop__random_loss_recovers_fast),
		cmocka_unit_test(duplicate__every_packet),
		cmocka_unit_test(reorder_delay__stale_packets),
		cmocka_unit_test(corrupt__checksum_and_taint),
		cmocka_unit_test(partition__then_heal),
		cmocka_unit_test(restart__server_forgets),
		cmocka_unit_test(restart__client_loses_rpcs),
		cmocka_unit_test(checks__catch_tampering),
		cmocka_unit_test(sim_campaign_run__repeats),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
