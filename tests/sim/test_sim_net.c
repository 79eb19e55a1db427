// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of the simulated switch (src/sim/sim_net.c): strict priority
 * between queues, FIFO within one, the shared port buffer, priorities
 * folded into fewer queues, and frame sizes on the wire.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "sim_internal.h"
#include "sim_test_util.h"

static struct workload_dist tiny;

static int setup(void **state)
{
	char err[64];

	(void)state;
	return workload_dist_parse(&tiny, "100 1\n", 1000000, "t", err,
				   sizeof(err));
}

static int teardown(void **state)
{
	(void)state;
	workload_dist_free(&tiny);
	return 0;
}

/* two_hosts - an idle one-switch network of 2 hosts with nq priorities
 * and buffer bytes per port (no traffic). */
static struct sim *two_hosts(int nq, uint64_t buffer)
{
	struct sim_params p;
	char err[128];
	struct sim *s;

	sim_params_defaults(&p);
	p.workload = &tiny;
	p.hosts = 2;
	p.messages = 0;
	p.priorities = nq;
	p.buffer_bytes = buffer;
	assert_int_equal(sim_params_check(&p, err, sizeof(err)), 0);
	s = sim_create(&p, err, sizeof(err));
	assert_non_null(s);
	return s;
}

/* inject - a 1000-byte packet of priority prio from host 0 to host 1
 * arrives at the switch; returns it. */
static struct sim_pkt *inject(struct sim *s, uint8_t prio)
{
	struct sim_pkt *pkt = sim_pkt_alloc(s);

	assert_non_null(pkt);
	memset(pkt->data, 0, 16);
	pkt->src = 0;
	pkt->dst = 1;
	pkt->len = 1000;
	pkt->wire = sim_wire_bytes(pkt->len);
	pkt->prio = prio;
	sim_switch_receive(s, s->nhosts, pkt);
	return pkt;
}

/* next_out - the packet the port to host 1 puts on its link next (the
 * port is made free); NULL when none. */
static struct sim_pkt *next_out(struct sim *s)
{
	struct sim_port *port = &s->ports[1];
	struct sim_pkt *heads[SIM_MAX_QUEUES], *out = NULL;
	int q;

	memcpy(heads, port->head, sizeof(heads));
	sim_port_free(s, 1);
	for (q = 0; q < SIM_MAX_QUEUES; q++)
		if (heads[q] && heads[q] != port->head[q])
			out = heads[q];
	return out;
}

static void sim_switch_receive__strict_priority(void **state)
{
	struct sim_pkt *first, *lo, *mid, *hi1, *hi2;
	struct sim *s = two_hosts(8, 1 << 20);

	(void)state;
	first = inject(s, 0);          /* starts at once: the port is idle */
	assert_true(s->ports[1].busy);
	lo = inject(s, 1);
	hi1 = inject(s, 5);
	mid = inject(s, 3);
	hi2 = inject(s, 5);
	assert_non_null(first);
	assert_ptr_equal(next_out(s), hi1);
	assert_ptr_equal(next_out(s), hi2);
	assert_ptr_equal(next_out(s), mid);
	assert_ptr_equal(next_out(s), lo);
	assert_null(next_out(s));
	assert_false(s->ports[1].busy);
	assert_true(s->ports[1].queued == 0);
	sim_destroy(s);
}

static void sim_switch_receive__one_queue_is_fifo(void **state)
{
	struct sim *s = two_hosts(1, 1 << 20);
	struct sim_pkt *a, *b, *c;

	(void)state;
	inject(s, 7);
	a = inject(s, 0);
	b = inject(s, 7);
	c = inject(s, 3);
	assert_ptr_equal(next_out(s), a);
	assert_ptr_equal(next_out(s), b);
	assert_ptr_equal(next_out(s), c);
	sim_destroy(s);
}

/* With 4 queues, priorities 3..7 share the top queue in arrival order. */
static void sim_switch_receive__priorities_fold_into_top_queue(void **state)
{
	struct sim *s = two_hosts(4, 1 << 20);
	struct sim_pkt *a, *b, *c;

	(void)state;
	inject(s, 0);
	c = inject(s, 2);
	a = inject(s, 7);
	b = inject(s, 3);
	assert_ptr_equal(s->ports[1].head[3], a);
	assert_ptr_equal(next_out(s), a);
	assert_ptr_equal(next_out(s), b);
	assert_ptr_equal(next_out(s), c);
	sim_destroy(s);
}

/* Waiting packets of all queues share the port's buffer; one that does
 * not fit is dropped. */
static void sim_switch_receive__shared_buffer_drops(void **state)
{
	uint32_t wire = sim_wire_bytes(1000);
	struct sim *s = two_hosts(8, 3 * wire);

	(void)state;
	inject(s, 0);           /* on the link, not in the buffer */
	inject(s, 0);
	inject(s, 7);
	inject(s, 3);
	assert_true(s->ports[1].queued == 3 * (uint64_t)wire);
	assert_int_equal(s->c.switch_drops, 0);
	inject(s, 7);
	assert_int_equal(s->c.switch_drops, 1);
	assert_true(s->ports[1].queued == 3 * (uint64_t)wire);
	sim_destroy(s);
}

/* Frames: IP header, Ethernet framing, minimum payload. */
static void sim_wire_bytes__frames(void **state)
{
	(void)state;
	assert_int_equal(sim_wire_bytes(1480), 1538);
	assert_int_equal(sim_wire_bytes(28), 20 + 28 + 38);
	assert_int_equal(sim_wire_bytes(10), 46 + 38);
}

/* A transmitter rounds each end up to a nanosecond but keeps its exact
 * rate back to back: two 1538-byte frames at 10 Gbit/s take 2460.8 ns,
 * not 2 x 1231; after a gap it starts afresh. */
static void sim_tx_end__exact_back_to_back(void **state)
{
	uint64_t done = 0;

	(void)state;
	assert_true(sim_tx_end(&done, 0, 1538, 10000) == 1231);
	assert_true(sim_tx_end(&done, 1231, 1538, 10000) == 2461);
	assert_true(sim_tx_end(&done, 2461, 1250, 10000) == 3461);
	assert_true(sim_tx_end(&done, 5000, 1538, 10000) == 6231);
	assert_true(sim_tx_end(&done, 6232, 1250, 10000) == 7232);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_switch_receive__strict_priority),
		cmocka_unit_test(sim_switch_receive__one_queue_is_fifo),
		cmocka_unit_test(
			sim_switch_receive__priorities_fold_into_top_queue),
		cmocka_unit_test(sim_switch_receive__shared_buffer_drops),
		cmocka_unit_test(sim_wire_bytes__frames),
		cmocka_unit_test(sim_tx_end__exact_back_to_back),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
