// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests of the simulator's event queue (src/sim/sim_events.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim_events.h"
#include "workload_rng.h"

static void sim_events_pop__empty_queue(void **state)
{
	struct sim_events q;
	struct sim_event ev;

	(void)state;
	sim_events_init(&q);
	assert_false(sim_events_pop(&q, &ev));
	assert_true(sim_events_peek_time(&q) == UINT64_MAX);
	sim_events_free(&q);
}

static void sim_events_pop__time_order(void **state)
{
	static const uint64_t times[] = { 50, 10, 40, 20, 30 };
	struct sim_events q;
	struct sim_event ev;
	int i;

	(void)state;
	sim_events_init(&q);
	for (i = 0; i < 5; i++)
		assert_int_equal(sim_events_push(&q, times[i], 1,
						 (uint32_t)i, NULL), 0);
	assert_true(sim_events_peek_time(&q) == 10);
	for (i = 1; i <= 5; i++) {
		assert_true(sim_events_pop(&q, &ev));
		assert_true(ev.time == (uint64_t)i * 10);
	}
	assert_false(sim_events_pop(&q, &ev));
	sim_events_free(&q);
}

static void sim_events_pop__equal_times_in_push_order(void **state)
{
	struct sim_events q;
	struct sim_event ev;
	uint32_t i;

	(void)state;
	sim_events_init(&q);
	for (i = 0; i < 100; i++)
		sim_events_push(&q, 7, 2, i, NULL);
	sim_events_push(&q, 6, 3, 999, NULL);
	assert_true(sim_events_pop(&q, &ev));
	assert_int_equal(ev.index, 999);
	for (i = 0; i < 100; i++) {
		assert_true(sim_events_pop(&q, &ev));
		assert_int_equal(ev.index, i);
		assert_int_equal(ev.kind, 2);
	}
	sim_events_free(&q);
}

/* Many random pushes and pops interleaved: every pop is the smallest
 * (time, seq) left, and seq numbers are the push order. */
static void sim_events_pop__random_interleaving(void **state)
{
	struct sim_events q;
	struct sim_event ev;
	struct workload_rng r;
	uint64_t last_time = 0, last_seq = 0, now = 0;
	int i, popped = 0;

	(void)state;
	sim_events_init(&q);
	workload_rng_seed(&r, 42, 0);
	for (i = 0; i < 20000; i++) {
		if (workload_rng_below(&r, 3) != 0 || q.count == 0) {
			uint64_t t = now + workload_rng_below(&r, 50);

			assert_int_equal(sim_events_push(&q, t, 0, 0, NULL), 0);
			continue;
		}
		assert_true(sim_events_pop(&q, &ev));
		if (popped++ > 0 && ev.time == last_time)
			assert_true(ev.seq > last_seq);
		assert_true(ev.time >= last_time);
		last_time = now = ev.time;
		last_seq = ev.seq;
	}
	while (sim_events_pop(&q, &ev)) {
		assert_true(ev.time > last_time ||
			    (ev.time == last_time && ev.seq > last_seq));
		last_time = ev.time;
		last_seq = ev.seq;
	}
	sim_events_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_events_pop__empty_queue),
		cmocka_unit_test(sim_events_pop__time_order),
		cmocka_unit_test(sim_events_pop__equal_times_in_push_order),
		cmocka_unit_test(sim_events_pop__random_interleaving),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
