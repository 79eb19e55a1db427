// SPDX-License-Identifier: BSD-2-Clause
/* homa-perf: the queue between an open-loop generator and the thread that
 * sends its requests (see perf.h). */

#include <stdlib.h>

#include "perf.h"

int handoff_init(struct handoff *q, uint64_t cap)
{
	pthread_mutexattr_t a;

	q->ring = calloc(cap, sizeof(*q->ring));
	if (!q->ring)
		return -1;
	q->cap = cap;
	atomic_init(&q->tail, 0);
	atomic_init(&q->released, 0);
	q->waiting = 0;
	q->closing = 0;
	/* The generator may run at real-time priority: a consumer holding
	 * the lock runs at its priority until it lets go, so that a busy
	 * machine cannot keep the generator waiting behind it. */
	pthread_mutexattr_init(&a);
	(void)pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&q->lock, &a);
	pthread_mutexattr_destroy(&a);
	pthread_cond_init(&q->cond, NULL);
	return 0;
}

void handoff_destroy(struct handoff *q)
{
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	free(q->ring);
	q->ring = NULL;
}

struct perf_req *handoff_slot(struct handoff *q)
{
	uint64_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);

	if (tail - atomic_load(&q->released) >= q->cap)
		return NULL;
	return &q->ring[tail % q->cap];
}

void handoff_push(struct handoff *q)
{
	pthread_mutex_lock(&q->lock);
	atomic_fetch_add_explicit(&q->tail, 1, memory_order_release);
	if (q->waiting)
		pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

uint64_t handoff_wait(struct handoff *q, uint64_t from)
{
	uint64_t tail;

	pthread_mutex_lock(&q->lock);
	while ((tail = atomic_load(&q->tail)) == from && !q->closing) {
		q->waiting = 1;
		pthread_cond_wait(&q->cond, &q->lock);
		q->waiting = 0;
	}
	pthread_mutex_unlock(&q->lock);
	return tail;
}

struct perf_req *handoff_at(struct handoff *q, uint64_t i)
{
	return &q->ring[i % q->cap];
}

void handoff_release(struct handoff *q, uint64_t upto)
{
	uint64_t cur = atomic_load(&q->released);

	while (cur < upto &&
	       !atomic_compare_exchange_weak(&q->released, &cur, upto))
		;
}

uint64_t handoff_pending(struct handoff *q)
{
	return atomic_load(&q->tail) - atomic_load(&q->released);
}

void handoff_close(struct handoff *q)
{
	pthread_mutex_lock(&q->lock);
	q->closing = 1;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}
