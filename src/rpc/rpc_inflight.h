/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_inflight - the calls a client has in flight, and their deadlines: a
 * thread (started with the first call that has a deadline) aborts each
 * call whose deadline passes with homa_abort(RPCS_ERR_DEADLINE), so that it
 * completes on the socket like any failed RPC, for a waiting thread and for
 * poll alike.
 */
#ifndef RPC_INFLIGHT_H
#define RPC_INFLIGHT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* One call.  Its address is the Homa completion cookie of its request. */
struct rpcf_call {
	uint64_t id;             /* Homa RPC id, 0 until linked */
	int64_t deadline_us;     /* CLOCK_MONOTONIC; 0: none */
	unsigned method;
	void *tag;
	bool linked;             /* in the list (under the lock) */
	bool done;               /* completed (under the lock) */
	bool aborted;            /* the deadline thread aborted it */
	atomic_int refs;         /* the starter's and the completer's */
	struct rpcf_call *next;
};

/* The calls of one client. */
struct rpcf {
	int fd;                  /* the client's Homa socket */
	pthread_mutex_t lock;
	pthread_cond_t cond;     /* CLOCK_MONOTONIC; wakes the thread */
	struct rpcf_call *head;
	bool thread_running;
	bool stop;
	pthread_t thread;
};

/* rpcf_init - an empty set for socket @fd.  Returns 0 or an errno. */
int rpcf_init(struct rpcf *f, int fd);

/* rpcf_destroy - stop the deadline thread and free the calls still
 * linked (no thread may be starting or completing a call). */
void rpcf_destroy(struct rpcf *f);

/* rpcf_call_new - a call of @method with @tag and @deadline_us (0: none),
 * holding two references (starter, completer).  NULL when out of memory. */
struct rpcf_call *rpcf_call_new(unsigned method, void *tag,
				int64_t deadline_us);

/* rpcf_put - drop a reference of @call; the last one frees it. */
void rpcf_put(struct rpcf_call *call);

/*
 * rpcf_link - the request of @call has been sent as RPC @id: record the id
 * and, unless the call has completed already, link it so that its deadline
 * is watched and homa_rpc_cancel finds it (starting the deadline thread the
 * first time a call has a deadline).  Returns 0, or an errno when the
 * thread cannot start (the call is linked, its deadline not enforced).
 */
int rpcf_link(struct rpcf *f, struct rpcf_call *call, uint64_t id);

/* rpcf_complete - @call has completed: unlink it.  Returns whether the
 * deadline thread had aborted it. */
bool rpcf_complete(struct rpcf *f, struct rpcf_call *call);

/* rpcf_cancel - abort linked call @id with RPCS_ERR_CANCEL.  Returns 0, or
 * EINVAL when no linked call has that id. */
int rpcf_cancel(struct rpcf *f, uint64_t id);

#endif /* RPC_INFLIGHT_H */
