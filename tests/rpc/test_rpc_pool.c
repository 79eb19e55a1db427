/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of rpc_pool (src/rpc/rpc_pool.c), named <function>__<case>:
 * the queue and the workers, with calls that lie in no socket.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "rpc_clock.h"
#include "rpc_pool.h"

/* What the test's worker function saw. */
struct seen {
	pthread_mutex_t lock;
	uint64_t ids[64];
	int n;
	atomic_int hold;        /* nonzero: calls wait until cancelled */
	atomic_int running;
};

/* new_call - a call with id @id and nothing else. */
static struct rpcsc *new_call(uint64_t id)
{
	struct rpcsc *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->magic = RPCSC_MAGIC;
	c->id = id;
	return c;
}

/* record - the worker function: note the id; with hold set, wait until
 * the call is marked cancelled. */
static void record(void *ctx, struct rpcsc *call)
{
	struct seen *s = ctx;

	atomic_fetch_add(&s->running, 1);
	while (atomic_load(&s->hold) && !atomic_load(&call->cancelled)) {
		struct timespec ts = { 0, 100000 };

		nanosleep(&ts, NULL);
	}
	pthread_mutex_lock(&s->lock);
	s->ids[s->n++] = call->id;
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_sub(&s->running, 1);
}

/* wait_running - wait (20 s at most) until @n calls run in record. */
static void wait_running(struct seen *s, int n)
{
	int64_t end = rpc_now_us() + 20000000;

	while (atomic_load(&s->running) != n) {
		struct timespec ts = { 0, 100000 };

		if (rpc_now_us() > end)
			fail_msg("%d calls running, want %d",
				 atomic_load(&s->running), n);
		nanosleep(&ts, NULL);
	}
}

/* wait_done - wait (20 s at most) until record has seen @n calls. */
static void wait_done(struct seen *s, int n)
{
	int64_t end = rpc_now_us() + 20000000;

	for (;;) {
		struct timespec ts = { 0, 100000 };
		int done;

		pthread_mutex_lock(&s->lock);
		done = s->n;
		pthread_mutex_unlock(&s->lock);
		if (done == n)
			return;
		if (rpc_now_us() > end)
			fail_msg("%d calls done, want %d", done, n);
		nanosleep(&ts, NULL);
	}
}

static void rpcp_push__one_worker_runs_calls_in_order(void **state)
{
	struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct rpcp p;

	(void)state;
	assert_int_equal(rpcp_init(&p, 1, 16, record, &s), 0);
	for (uint64_t i = 1; i <= 10; i++)
		assert_true(rpcp_push(&p, new_call(i)));
	assert_int_equal(rpcp_start(&p), 0);
	wait_done(&s, 10);
	rpcp_stop(&p);
	assert_int_equal(s.n, 10);
	for (int i = 0; i < 10; i++)
		assert_int_equal(s.ids[i], (uint64_t)i + 1);
}

static void rpcp_push__full_queue_refuses(void **state)
{
	struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct rpcsc *extra = new_call(3);
	struct rpcp p;

	(void)state;
	assert_int_equal(rpcp_init(&p, 1, 2, record, &s), 0);
	assert_true(rpcp_push(&p, new_call(1)));
	assert_true(rpcp_push(&p, new_call(2)));
	assert_false(rpcp_push(&p, extra));
	rpcsc_free(extra);
	rpcp_stop(&p);           /* frees the two queued, never run */
	assert_int_equal(s.n, 0);
}

static void rpcp_drain__hands_back_queued_calls_and_stops(void **state)
{
	struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct rpcsc *out[8], *late = new_call(9);
	struct rpcp p;
	size_t n;

	(void)state;
	atomic_store(&s.hold, 1);
	assert_int_equal(rpcp_init(&p, 1, 8, record, &s), 0);
	assert_int_equal(rpcp_start(&p), 0);
	assert_true(rpcp_push(&p, new_call(1)));
	wait_running(&s, 1);                 /* the worker holds call 1 */
	assert_true(rpcp_push(&p, new_call(2)));
	assert_true(rpcp_push(&p, new_call(3)));
	n = rpcp_drain(&p, out);
	assert_int_equal(n, 2);
	assert_int_equal(out[0]->id, 2);
	assert_int_equal(out[1]->id, 3);
	assert_false(rpcp_push(&p, late));   /* stopping: refused */
	rpcsc_free(late);
	rpcsc_free(out[0]);
	rpcsc_free(out[1]);
	/* Call 1 runs on: not idle within a grace time already over. */
	assert_false(rpcp_wait_idle(&p, rpc_now_us()));
	rpcp_cancel_running(&p);             /* record sees it and ends */
	assert_true(rpcp_wait_idle(&p, rpc_now_us() + 20000000));
	rpcp_stop(&p);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.ids[0], 1);
}

static void rpcp_start__many_workers_run_each_call_once(void **state)
{
	struct seen s = { .lock = PTHREAD_MUTEX_INITIALIZER };
	uint8_t count[65] = { 0 };
	struct rpcp p;

	(void)state;
	assert_int_equal(rpcp_init(&p, 4, 64, record, &s), 0);
	assert_int_equal(rpcp_start(&p), 0);
	for (uint64_t i = 1; i <= 64; i++)
		assert_true(rpcp_push(&p, new_call(i)));
	wait_done(&s, 64);
	rpcp_stop(&p);
	for (int i = 0; i < 64; i++) {
		assert_true(s.ids[i] >= 1 && s.ids[i] <= 64);
		count[s.ids[i]]++;
	}
	for (int i = 1; i <= 64; i++)
		assert_int_equal(count[i], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rpcp_push__one_worker_runs_calls_in_order),
		cmocka_unit_test(rpcp_push__full_queue_refuses),
		cmocka_unit_test(rpcp_drain__hands_back_queued_calls_and_stops),
		cmocka_unit_test(rpcp_start__many_workers_run_each_call_once),
	};

	return cmocka_run_group_tests_name("rpc_pool", tests, NULL, NULL);
}
