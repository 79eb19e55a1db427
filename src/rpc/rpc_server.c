/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_server - the server of homa-rpc: a bound Homa socket, one receiving
 * thread that takes each request, stamps its arrival (the deadline counts
 * from there), answers at once what cannot run (malformed, unknown method,
 * queue full), and queues the rest for the workers (rpc_pool); graceful
 * shutdown.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "homa-rpc.h"
#include "rpc_clock.h"
#include "rpc_msg.h"
#include "rpc_pool.h"
#include "rpc_registry.h"
#include "rpc_scall.h"

#define DEFAULT_WORKERS 4
#define DEFAULT_QUEUE_MAX 1024
#define DEFAULT_SERVER_REGION (64u << 20)
/* How long a shutdown waits for the receiving thread to take its wake-up
 * message before it shuts the socket down instead. */
#define WAKE_WAIT_S 5
/* Requests up to this size are copied out of the region (handed back by
 * the next receive); larger ones are used in place when they can be. */
#define COPY_MAX HOMA_BPAGE_SIZE

struct homa_rpc_server {
	int fd;
	uint8_t *region;
	size_t region_len;
	union sockaddr_in_union addr;   /* as bound */
	struct rpcr reg;
	int workers;                    /* 0: the receiver runs calls */
	size_t queue_max;
	struct rpcp pool;
	bool started;
	atomic_bool stopping;
	pthread_t receiver;
	_Atomic uint64_t received, malformed, unimplemented, replies_failed;
};

/* addr_len - the length of the address @a. */
static socklen_t addr_len(const union sockaddr_in_union *a)
{
	return a->sa.sa_family == AF_INET6 ? sizeof(a->in6) : sizeof(a->in4);
}

/* apply_config - @s's settings from @cfg (NULL: defaults). */
static void apply_config(struct homa_rpc_server *s,
			 const struct homa_rpc_server_config *cfg)
{
	s->workers = DEFAULT_WORKERS;
	s->queue_max = DEFAULT_QUEUE_MAX;
	s->region_len = DEFAULT_SERVER_REGION;
	if (!cfg)
		return;
	if (cfg->workers < 0)
		s->workers = 0;
	else if (cfg->workers > 0)
		s->workers = cfg->workers;
	if (cfg->queue_max > 0)
		s->queue_max = (size_t)cfg->queue_max;
	if (cfg->region_bytes)
		s->region_len = cfg->region_bytes;
}

/* open_bound - @s's socket, region and binding to s->addr.  Returns 0 or
 * an errno. */
static int open_bound(struct homa_rpc_server *s)
{
	size_t want = s->region_len;

	s->fd = homa_socket(s->addr.sa.sa_family, SOCK_DGRAM, IPPROTO_HOMA);
	if (s->fd < 0)
		return errno;
	s->region = rpcm_region(s->fd, want, &s->region_len);
	if (!s->region)
		return errno;
	if (homa_bind(s->fd, &s->addr.sa, addr_len(&s->addr)) < 0)
		return errno;
	return 0;
}

/* See homa-rpc.h. */
struct homa_rpc_server *homa_rpc_server_new(
	const union sockaddr_in_union *addr,
	const struct homa_rpc_server_config *config)
{
	struct homa_rpc_server *s;
	int err;

	if (!addr || (addr->sa.sa_family != AF_INET &&
		      addr->sa.sa_family != AF_INET6)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->addr = *addr;
	apply_config(s, config);
	err = open_bound(s);
	if (err) {
		if (s->fd >= 0)
			homa_close(s->fd);
		if (s->region)
			munmap(s->region, s->region_len);
		free(s);
		errno = err;
		return NULL;
	}
	return s;
}

/* See homa-rpc.h. */
int homa_rpc_server_add(struct homa_rpc_server *s, ProtobufCService *service)
{
	int err;

	if (!s) {
		errno = EINVAL;
		return -1;
	}
	if (s->started) {
		errno = EBUSY;
		return -1;
	}
	err = rpcr_add(&s->reg, service);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* answer - send @call's response, counting a refused one. */
static void answer(struct homa_rpc_server *s, struct rpcsc *call)
{
	if (rpcsc_reply(call, s->fd) != 0)
		atomic_fetch_add(&s->replies_failed, 1);
}

/* answer_error - end @call at once with @code and @text, and free it. */
static void answer_error(struct homa_rpc_server *s, struct rpcsc *call,
			 int code, const char *text)
{
	if (rpcsc_set_error(call, code, text) == 0)
		answer(s, call);
	else
		atomic_fetch_add(&s->replies_failed, 1);
	rpcsc_free(call);
}

/* process - run @call unless its deadline has passed, and answer it (the
 * caller frees it).  Runs in a worker, or in the receiver without workers. */
static void process(void *ctx, struct rpcsc *call)
{
	struct homa_rpc_server *s = ctx;

	if (call->expiry_us != 0 && rpc_now_us() >= call->expiry_us) {
		atomic_fetch_add(&call->method->expired, 1);
		(void)rpcsc_set_error(call, HOMA_RPC_DEADLINE_EXCEEDED,
				      "deadline passed before the call "
				      "started");
	} else {
		rpcsc_run(call);
	}
	answer(s, call);
}

/* refuse - answer a request whose header did not parse (@werr) or
 * whose method is not served; frees @call. */
static void refuse(struct homa_rpc_server *s, struct rpcsc *call,
		   enum rpcw_error werr)
{
	char text[RPCW_MAX_PATH + 64];

	if (werr != RPCW_OK) {
		atomic_fetch_add(&s->malformed, 1);
		snprintf(text, sizeof(text), "malformed request: %s",
			 rpcw_error_name(werr));
		answer_error(s, call, HOMA_RPC_INVALID_ARGUMENT, text);
		return;
	}
	atomic_fetch_add(&s->unimplemented, 1);
	snprintf(text, sizeof(text), "unknown method %.*s",
		 (int)call->hdr.path_len, (const char *)call->hdr.path);
	answer_error(s, call, HOMA_RPC_UNIMPLEMENTED, text);
}

/* dispatch - a call whose method is known: run it here (no workers) or
 * queue it; a full queue or a stopping server answers at once. */
static void dispatch(struct homa_rpc_server *s, struct rpcsc *call)
{
	if (s->workers == 0) {
		process(s, call);
		rpcsc_free(call);
		return;
	}
	if (rpcp_push(&s->pool, call))
		return;
	atomic_fetch_add(&call->method->shed, 1);
	if (atomic_load(&s->stopping))
		answer_error(s, call, HOMA_RPC_UNAVAILABLE,
			     "server shutting down");
	else
		answer_error(s, call, HOMA_RPC_RESOURCE_EXHAUSTED,
			     "server queue full");
}

/* take - the request of @len bytes received with @args: copy it out of
 * the region (a small one), or leave it there for the call to hold (a
 * large one whose bpages follow each other: args->num_bpages is then set
 * to 0, the call hands them back), decode its header, and refuse or
 * dispatch it. */
static void take(struct homa_rpc_server *s, struct homa_recvmsg_args *args,
		 size_t len)
{
	int64_t now = rpc_now_us();
	struct rpcsc *call;
	struct rpcm_in in;
	enum rpcw_error werr = RPCW_OK;

	atomic_fetch_add(&s->received, 1);
	if (rpcm_gather(s->region, args->bpage_offsets, args->num_bpages,
			len, len <= COPY_MAX, &in) != 0)
		return;  /* no memory: the client's RPC times out */
	if (rpcsc_new(&in, args->id, &args->peer_addr, now, &call,
		      &werr) == ENOMEM)
		return;
	if (!call->in.owned) {
		rpcsc_hold_bpages(call, s->fd, args->bpage_offsets,
				  args->num_bpages);
		args->num_bpages = 0;
	}
	if (werr == RPCW_OK)
		call->method = rpcr_find(&s->reg, call->hdr.path,
					 call->hdr.path_len);
	if (werr != RPCW_OK || !call->method) {
		refuse(s, call, werr);
		return;
	}
	if (atomic_load(&s->stopping)) {
		atomic_fetch_add(&call->method->shed, 1);
		answer_error(s, call, HOMA_RPC_UNAVAILABLE,
			     "server shutting down");
		return;
	}
	dispatch(s, call);
}

/* receiver_main - the receiving thread: requests until the server stops.
 * The bpages of each request are handed back by the next receive. */
static void *receiver_main(void *arg)
{
	struct homa_rpc_server *s = arg;
	struct homa_recvmsg_args args;
	struct msghdr msg;

	memset(&args, 0, sizeof(args));
	while (!atomic_load(&s->stopping)) {
		ssize_t len;

		memset(&msg, 0, sizeof(msg));
		args.id = 0;
		args.flags = HOMA_RECVMSG_REQUEST;
		msg.msg_control = &args;
		msg.msg_controllen = sizeof(args);
		len = homa_recvmsg(s->fd, &msg, 0);
		if (len == 1 && atomic_load(&s->stopping))
			break;  /* the wake-up message of stop_receiver */
		if (len >= 0) {
			take(s, &args, (size_t)len);
			continue;
		}
		if (errno == ESHUTDOWN || errno == EBADF || errno == EINVAL)
			break;
	}
	return NULL;
}

/* See homa-rpc.h. */
int homa_rpc_server_start(struct homa_rpc_server *s)
{
	int err = 0;

	if (!s || s->started) {
		errno = s ? EBUSY : EINVAL;
		return -1;
	}
	if (s->workers > 0) {
		err = rpcp_init(&s->pool, s->workers, s->queue_max, process, s);
		if (err) {
			errno = err;
			return -1;
		}
		err = rpcp_start(&s->pool);
		if (err) {
			rpcp_stop(&s->pool);
			errno = err;
			return -1;
		}
	}
	err = pthread_create(&s->receiver, NULL, receiver_main, s);
	if (err) {
		if (s->workers > 0)
			rpcp_stop(&s->pool);
		errno = err;
		return -1;
	}
	s->started = true;
	return 0;
}

/* wake_socket - a client socket that sends a 1-byte message to the
 * server's own address (loopback for a wildcard), so that a receiver
 * blocked in homa_recvmsg returns and sees the server stopping.  Returns
 * the socket (close it after the join), or -1. */
static int wake_socket(struct homa_rpc_server *s)
{
	union sockaddr_in_union a = s->addr;
	uint64_t id;
	int fd;

	if (a.sa.sa_family == AF_INET &&
	    a.in4.sin_addr.s_addr == htonl(INADDR_ANY))
		a.in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (a.sa.sa_family == AF_INET6 &&
	    IN6_IS_ADDR_UNSPECIFIED(&a.in6.sin6_addr))
		a.in6.sin6_addr = in6addr_loopback;
	fd = homa_socket(a.sa.sa_family, SOCK_DGRAM, IPPROTO_HOMA);
	if (fd < 0)
		return -1;
	if (homa_send(fd, "", 1, &a, &id, 0) < 0) {
		homa_close(fd);
		return -1;
	}
	return fd;
}

/* stop_receiver - stop the receiving thread and join it: a wake-up
 * message, or a shutdown of the socket when that does not work. */
static void stop_receiver(struct homa_rpc_server *s)
{
	struct timespec ts;
	int wake = wake_socket(s);

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WAKE_WAIT_S;
	if (wake < 0 || pthread_timedjoin_np(s->receiver, NULL, &ts) != 0) {
		(void)homa_shutdown(s->fd, SHUT_RDWR);
		pthread_join(s->receiver, NULL);
	}
	if (wake >= 0)
		homa_close(wake);
}

/* stop_workers - answer the queued calls UNAVAILABLE, give the running
 * ones @grace_ms, mark them cancelled after that, and join the workers. */
static void stop_workers(struct homa_rpc_server *s, int grace_ms)
{
	struct rpcsc **queued = calloc(s->queue_max, sizeof(*queued));
	int64_t until = rpc_now_us() + (int64_t)(grace_ms > 0 ? grace_ms : 0)
					* 1000;

	if (queued) {
		size_t n = rpcp_drain(&s->pool, queued);

		for (size_t i = 0; i < n; i++) {
			atomic_fetch_add(&queued[i]->method->shed, 1);
			answer_error(s, queued[i], HOMA_RPC_UNAVAILABLE,
				     "server shutting down");
		}
		free(queued);
	}
	if (!rpcp_wait_idle(&s->pool, until))
		rpcp_cancel_running(&s->pool);
	rpcp_stop(&s->pool);
}

/* See homa-rpc.h. */
void homa_rpc_server_stop(struct homa_rpc_server *s, int grace_ms)
{
	if (!s)
		return;
	if (s->started) {
		atomic_store(&s->stopping, true);
		stop_receiver(s);
		if (s->workers > 0)
			stop_workers(s, grace_ms);
	}
	(void)homa_shutdown(s->fd, SHUT_RDWR);
	homa_close(s->fd);
	munmap(s->region, s->region_len);
	rpcr_free(&s->reg);
	free(s);
}

/* See homa-rpc.h. */
void homa_rpc_server_stats(struct homa_rpc_server *s,
			   struct homa_rpc_server_stats *st)
{
	st->received = atomic_load(&s->received);
	st->malformed = atomic_load(&s->malformed);
	st->unimplemented = atomic_load(&s->unimplemented);
	st->replies_failed = atomic_load(&s->replies_failed);
}

/* See homa-rpc.h. */
int homa_rpc_server_method_stats(struct homa_rpc_server *s, const char *path,
				 struct homa_rpc_method_stats *st)
{
	struct rpcr_method *m = path ? rpcr_find(&s->reg,
						 (const uint8_t *)path,
						 strlen(path))
				     : NULL;

	if (!m) {
		errno = ENOENT;
		return -1;
	}
	rpcr_stats(m, st);
	return 0;
}
