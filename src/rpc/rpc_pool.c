/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_pool - the queue and the workers of a server (see rpc_pool.h).
 */
#include "rpc_pool.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "rpc_clock.h"

/* See rpc_pool.h. */
int rpcp_init(struct rpcp *p, int nworkers, size_t cap, rpcp_fn fn,
	      void *ctx)
{
	pthread_condattr_t ca;

	p->ring = calloc(cap, sizeof(*p->ring));
	p->threads = calloc((size_t)nworkers, sizeof(*p->threads));
	p->current = calloc((size_t)nworkers, sizeof(*p->current));
	if (!p->ring || !p->threads || !p->current) {
		free(p->ring);
		free(p->threads);
		free(p->current);
		return ENOMEM;
	}
	p->cap = cap;
	p->head = p->count = p->running = 0;
	p->nworkers = 0;
	p->stop = false;
	p->fn = fn;
	p->ctx = ctx;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->idle, &ca);
	pthread_condattr_destroy(&ca);
	p->want = nworkers;
	return 0;
}

/* pop_locked - the oldest queued call (lock held, count > 0). */
static struct rpcsc *pop_locked(struct rpcp *p)
{
	struct rpcsc *c = p->ring[p->head];

	p->head = (p->head + 1) % p->cap;
	p->count--;
	return c;
}

/* What a worker thread starts with (it frees it). */
struct worker_arg {
	struct rpcp *p;
	int index;
};

/* worker_main - take calls until the pool stops; record the current one. */
static void *worker_main(void *arg)
{
	struct worker_arg *wa = arg;
	struct rpcp *p = wa->p;
	int i = wa->index;

	free(wa);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct rpcsc *c;

		while (p->count == 0 && !p->stop)
			pthread_cond_wait(&p->work, &p->lock);
		if (p->count == 0)
			break;
		c = pop_locked(p);
		p->current[i] = c;
		p->running++;
		pthread_mutex_unlock(&p->lock);
		p->fn(p->ctx, c);
		pthread_mutex_lock(&p->lock);
		p->current[i] = NULL;
		p->running--;
		rpcsc_free(c);
		pthread_cond_broadcast(&p->idle);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* See rpc_pool.h. */
int rpcp_start(struct rpcp *p)
{
	int err = 0;

	for (int i = p->nworkers; i < p->want && !err; i++) {
		struct worker_arg *wa = malloc(sizeof(*wa));

		if (!wa) {
			err = ENOMEM;
			break;
		}
		wa->p = p;
		wa->index = i;
		err = pthread_create(&p->threads[i], NULL, worker_main, wa);
		if (err)
			free(wa);
		else
			p->nworkers = i + 1;
	}
	return err;
}

/* See rpc_pool.h. */
bool rpcp_push(struct rpcp *p, struct rpcsc *call)
{
	bool ok;

	pthread_mutex_lock(&p->lock);
	ok = !p->stop && p->count < p->cap;
	if (ok) {
		p->ring[(p->head + p->count) % p->cap] = call;
		p->count++;
		pthread_cond_signal(&p->work);
	}
	pthread_mutex_unlock(&p->lock);
	return ok;
}

/* See rpc_pool.h. */
size_t rpcp_drain(struct rpcp *p, struct rpcsc **out)
{
	size_t n = 0;

	pthread_mutex_lock(&p->lock);
	p->stop = true;
	while (p->count > 0)
		out[n++] = pop_locked(p);
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	return n;
}

/* See rpc_pool.h. */
bool rpcp_wait_idle(struct rpcp *p, int64_t until_us)
{
	struct timespec ts = rpc_abs_timespec(until_us);
	bool idle;

	pthread_mutex_lock(&p->lock);
	while (p->running > 0 &&
	       pthread_cond_timedwait(&p->idle, &p->lock, &ts) != ETIMEDOUT)
		;
	idle = p->running == 0;
	pthread_mutex_unlock(&p->lock);
	return idle;
}

/* See rpc_pool.h. */
void rpcp_cancel_running(struct rpcp *p)
{
	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < p->nworkers; i++) {
		if (p->current[i])
			atomic_store(&p->current[i]->cancelled, 1);
	}
	pthread_mutex_unlock(&p->lock);
}

/* See rpc_pool.h. */
void rpcp_stop(struct rpcp *p)
{
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	while (p->count > 0)
		rpcsc_free(pop_locked(p));
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->nworkers; i++)
		pthread_join(p->threads[i], NULL);
	free(p->ring);
	free(p->threads);
	free(p->current);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->idle);
	pthread_mutex_destroy(&p->lock);
}
