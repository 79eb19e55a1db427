/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_inflight - calls in flight and the deadline thread (see
 * rpc_inflight.h).
 */
#include "rpc_inflight.h"

#include <errno.h>
#include <stdlib.h>

#include "homa.h"
#include "rpc_clock.h"
#include "rpc_status.h"

/* See rpc_inflight.h. */
int rpcf_init(struct rpcf *f, int fd)
{
	pthread_condattr_t ca;
	int err;

	f->fd = fd;
	f->head = NULL;
	f->thread_running = false;
	f->stop = false;
	err = pthread_mutex_init(&f->lock, NULL);
	if (err)
		return err;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	err = pthread_cond_init(&f->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (err)
		pthread_mutex_destroy(&f->lock);
	return err;
}

/* See rpc_inflight.h. */
void rpcf_destroy(struct rpcf *f)
{
	struct rpcf_call *c, *next;

	pthread_mutex_lock(&f->lock);
	f->stop = true;
	pthread_cond_signal(&f->cond);
	pthread_mutex_unlock(&f->lock);
	if (f->thread_running)
		pthread_join(f->thread, NULL);
	/* Each linked call: the list's reference, and the completer's, as
	 * no completion will come. */
	for (c = f->head; c; c = next) {
		next = c->next;
		rpcf_put(c);
		rpcf_put(c);
	}
	f->head = NULL;
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
}

/* See rpc_inflight.h. */
struct rpcf_call *rpcf_call_new(unsigned method, void *tag,
				int64_t deadline_us)
{
	struct rpcf_call *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->method = method;
	c->tag = tag;
	c->deadline_us = deadline_us;
	atomic_init(&c->refs, 2);
	return c;
}

/* See rpc_inflight.h. */
void rpcf_put(struct rpcf_call *call)
{
	if (atomic_fetch_sub(&call->refs, 1) == 1)
		free(call);
}

/* unlink_locked - remove @call from the list of @f (lock held). */
static void unlink_locked(struct rpcf *f, struct rpcf_call *call)
{
	struct rpcf_call **pp;

	for (pp = &f->head; *pp; pp = &(*pp)->next) {
		if (*pp == call) {
			*pp = call->next;
			call->linked = false;
			return;
		}
	}
}

/* expire_due - abort the linked calls whose deadline is at or before @now;
 * returns the earliest deadline still ahead (0: none).  Lock held. */
static int64_t expire_due(struct rpcf *f, int64_t now)
{
	int64_t next = 0;

	for (struct rpcf_call *c = f->head; c; c = c->next) {
		if (c->deadline_us == 0 || c->aborted)
			continue;
		if (c->deadline_us <= now) {
			c->aborted = true;
			(void)homa_abort(f->fd, c->id, RPCS_ERR_DEADLINE);
		} else if (next == 0 || c->deadline_us < next) {
			next = c->deadline_us;
		}
	}
	return next;
}

/* deadline_main - the deadline thread: sleeps until the earliest deadline
 * of the linked calls (or a change), aborts the calls it has passed. */
static void *deadline_main(void *arg)
{
	struct rpcf *f = arg;

	pthread_mutex_lock(&f->lock);
	while (!f->stop) {
		int64_t next = expire_due(f, rpc_now_us());

		if (next == 0) {
			pthread_cond_wait(&f->cond, &f->lock);
		} else {
			struct timespec ts = rpc_abs_timespec(next);

			pthread_cond_timedwait(&f->cond, &f->lock, &ts);
		}
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/* See rpc_inflight.h. */
int rpcf_link(struct rpcf *f, struct rpcf_call *call, uint64_t id)
{
	int err = 0;

	pthread_mutex_lock(&f->lock);
	call->id = id;
	if (!call->done) {
		call->linked = true;
		call->next = f->head;
		f->head = call;
		atomic_fetch_add(&call->refs, 1);
		if (call->deadline_us != 0) {
			if (!f->thread_running) {
				err = pthread_create(&f->thread, NULL,
						     deadline_main, f);
				f->thread_running = (err == 0);
			}
			pthread_cond_signal(&f->cond);
		}
	}
	pthread_mutex_unlock(&f->lock);
	return err;
}

/* See rpc_inflight.h. */
bool rpcf_complete(struct rpcf *f, struct rpcf_call *call)
{
	bool aborted, was_linked;

	pthread_mutex_lock(&f->lock);
	call->done = true;
	was_linked = call->linked;
	if (was_linked)
		unlink_locked(f, call);
	aborted = call->aborted;
	pthread_mutex_unlock(&f->lock);
	if (was_linked)
		rpcf_put(call);
	return aborted;
}

/* See rpc_inflight.h. */
int rpcf_cancel(struct rpcf *f, uint64_t id)
{
	int err = EINVAL;

	pthread_mutex_lock(&f->lock);
	for (struct rpcf_call *c = f->head; c; c = c->next) {
		if (c->id == id) {
			err = homa_abort(f->fd, id, RPCS_ERR_CANCEL) < 0
			      ? errno : 0;
			break;
		}
	}
	pthread_mutex_unlock(&f->lock);
	return err;
}
