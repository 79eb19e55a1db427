/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_preload_engine - what the preload shim needs from the socket layer
 * beyond homa.h, taken from its internals (homa_sock.h): the port and RPC
 * count of a socket, switching request acceptance on and off without
 * rebinding (SO_HOMA_SERVER), and sending a private request (the engine's
 * HOMA_EP_SEND_PRIVATE, in the critical section of the send).  Each function
 * locks the socket as the socket layer's own calls do, and brings output and
 * readiness up to date after changing the endpoint.  These are the only
 * places the shim reaches below homa.h; a socket-layer call for each would
 * replace them (see docs/preload.md).
 */
#include <errno.h>

#include "homa_preload.h"
#include "homa_sock.h"

/* See homa_preload.h. */
int pl_engine_info(int nfd, struct pl_engine_info *out)
{
	struct homa_sock *s = homa_sock_get(nfd);
	struct homa_ep_info info;
	struct homa_pool *pool;

	if (!s)
		return EBADF;
	pthread_mutex_lock(&s->lock);
	homa_ep_info(s->ep, &info);
	pool = info.pool;
	out->port = info.port;
	out->num_rpcs = info.num_rpcs;
	out->has_region = homa_pool_has_region(pool);
	out->free_bytes = out->has_region
		? (uint64_t)homa_pool_free_bpages(pool) * HOMA_BPAGE_SIZE : 0;
	pthread_mutex_unlock(&s->lock);
	homa_sock_put(s);
	return 0;
}

/* See homa_preload.h. */
int pl_engine_set_server(int nfd, bool on)
{
	struct homa_sock *s = homa_sock_get(nfd);
	struct homa_ep_info info;

	if (!s)
		return EBADF;
	pthread_mutex_lock(&s->lock);
	homa_ep_info(s->ep, &info);
	homa_ep_set_port(s->ep, info.port, on);
	pthread_mutex_unlock(&s->lock);
	homa_sock_put(s);
	return 0;
}

/* See homa_preload.h. */
int pl_engine_send_private(int nfd, const union sockaddr_in_union *dest,
			   const struct iovec *iov, int iovcnt,
			   uint64_t cookie, bool nonblock, uint64_t *id)
{
	struct homa_sock *s = homa_sock_get(nfd);
	uint64_t now;
	int err;

	if (!s)
		return EBADF;
	pthread_mutex_lock(&s->lock);
	err = homa_sock_wait_wmem(s, nonblock);
	homa_sock_send_begin(s);
	now = homa_sock_now();
	/* Lent as homa_sendmsg's (copied after the flush), and private
	 * from its start: no response can be handed to a shared receive,
	 * nor raise POLLIN, before the RPC is private. */
	if (!err)
		err = homa_ep_send_request(s->ep, dest, iov, iovcnt, cookie,
					   HOMA_EP_SEND_LENT |
					   HOMA_EP_SEND_PRIVATE, id, now);
	if (!err)
		homa_sock_flush(s, now);
	homa_sock_settle(s);
	homa_sock_send_end(s);
	homa_sock_sync(s);
	pthread_mutex_unlock(&s->lock);
	homa_sock_put(s);
	return -err;
}
