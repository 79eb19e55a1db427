/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_pool - the workers of a server: a bounded queue of calls received but
 * not started, and threads that take them in order and run a function on
 * each.  The pool knows which call each worker runs, so that a shutdown can
 * wait for them and then mark them cancelled.
 */
#ifndef RPC_POOL_H
#define RPC_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "rpc_scall.h"

/* What a worker does with a call (the pool frees the call afterwards). */
typedef void (*rpcp_fn)(void *ctx, struct rpcsc *call);

struct rpcp {
	pthread_mutex_t lock;
	pthread_cond_t work;      /* a call queued, or stop */
	pthread_cond_t idle;      /* CLOCK_MONOTONIC; a worker finished */
	struct rpcsc **ring;
	size_t cap, head, count;
	int want;                 /* workers to start */
	int nworkers;             /* workers started */
	pthread_t *threads;
	struct rpcsc **current;   /* per worker: the call it runs, or NULL */
	size_t running;
	bool stop;
	rpcp_fn fn;
	void *ctx;
};

/* rpcp_init - a pool of @nworkers threads (not started) and room for @cap
 * queued calls, running @fn(@ctx, call).  Returns 0 or an errno. */
int rpcp_init(struct rpcp *p, int nworkers, size_t cap, rpcp_fn fn,
	      void *ctx);

/* rpcp_start - start the workers.  Returns 0 or pthread_create's error
 * (the workers started are stopped again). */
int rpcp_start(struct rpcp *p);

/* rpcp_push - queue @call.  Returns true, or false when the queue is full
 * or the pool stopping (the call stays the caller's). */
bool rpcp_push(struct rpcp *p, struct rpcsc *call);

/*
 * rpcp_drain - stop queueing; move the calls queued but not started to
 * @out (room for p->cap) and return how many.
 */
size_t rpcp_drain(struct rpcp *p, struct rpcsc **out);

/* rpcp_wait_idle - wait until no worker runs a call, or until
 * CLOCK_MONOTONIC @until_us.  Returns whether they are idle. */
bool rpcp_wait_idle(struct rpcp *p, int64_t until_us);

/* rpcp_cancel_running - mark the calls the workers run cancelled. */
void rpcp_cancel_running(struct rpcp *p);

/* rpcp_stop - stop the workers once they finish their calls, join them,
 * free the pool (calls still queued are freed unanswered). */
void rpcp_stop(struct rpcp *p);

#endif /* RPC_POOL_H */
