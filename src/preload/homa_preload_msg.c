/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_preload_msg - sendmsg and recvmsg of the kernel Homa API on the
 * native engine, and the data calls a Homa socket refuses.
 *
 * sendmsg: msg_control -> struct hk_sendmsg_args (24 bytes) with
 *   msg_controllen 0; the kernel's checks (no destination or a control
 *   length: EINVAL; no arguments: EFAULT; unknown flag or reserved bits:
 *   EINVAL; another family: EAFNOSUPPORT; short address: EINVAL; a reply
 *   with a cookie: EINVAL), then homa_sendmsg with the native 16-byte
 *   arguments.  Returns 0; a request's id is written back.
 *
 * recvmsg: msg_control -> struct hk_recvmsg_args (88 bytes), msg_controllen
 *   88.  id 0 receives any shared message, request or response (native
 *   flags REQUEST|RESPONSE); id != 0 the response of that private RPC.
 *   MSG_DONTWAIT or O_NONBLOCK: EAGAIN instead of waiting.  The handed-back
 *   bpages are returned first, even when the call then fails.  Returns the
 *   length with id, completion_cookie, num_bpages, bpage_offsets and
 *   msg_name filled; a failed RPC: -1, errno its error, id/cookie/msg_name
 *   naming it, num_bpages 0.
 *
 * Private RPCs (HOMA_SENDMSG_PRIVATE).  The engine has no private RPCs: it
 * readies every response for any receiver and raises POLLIN for it.  The
 * shim keeps the ids of private requests; a shared receive that takes the
 * response (or failure) of one from the engine parks it here instead of
 * returning it, and goes on waiting; recvmsg(id) returns a parked one, or
 * waits in the engine for that RPC alone.  What the engine cannot be kept
 * from doing: the descriptor may be readable (POLLIN) because of a private
 * response, until some shared recvmsg has parked it (docs/preload.md).
 *
 * read, write, readv, writev, send, recv, sendto, recvfrom (and the
 * _FORTIFY_SOURCE variants) on a Homa socket: EINVAL, as in the kernel,
 * whose Homa sendmsg/recvmsg refuse a call without Homa arguments.
 * sendmmsg sends each message with sendmsg's rules and stops at the first
 * failure; recvmmsg receives one message per call (it may return fewer
 * than asked; a second would risk losing an RPC error).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "homa_preload.h"

/* How long a private receive or an abort waits for a shared receive that
 * took its RPC from the engine to park it (it does so right away). */
#define PRIV_SETTLE_NS 1000000000ull
#define PRIV_SETTLE_STEP_NS 10000000ull

#ifdef __SOCKADDR_ALLTYPES
#define SA_PTR(a) ((a).__sockaddr__)
#define CSA_PTR(a) ((a).__sockaddr__)
#else
#define SA_PTR(a) (a)
#define CSA_PTR(a) (a)
#endif

/* One receive's outcome. */
struct pl_msg {
	bool delivered;     /* a message or an RPC's failure was taken */
	int error;          /* delivered: the RPC's errno (0: a message);
			     * else the call's errno */
	uint64_t id;
	uint64_t cookie;
	union sockaddr_in_union peer;
	uint32_t length;
	uint32_t num_bpages;
	uint32_t bpage_offsets[HOMA_MAX_BPAGES];
};

/* ---- private RPC records (caller holds s->lock) ---- */

/* priv_find - the record of id, or NULL; *prevp (if not NULL) gets the
 * link pointing at it. */
static struct pl_priv *priv_find(struct pl_sock *s, uint64_t id,
				 struct pl_priv ***prevp)
{
	struct pl_priv **link = &s->privs;

	for (; *link; link = &(*link)->next) {
		if ((*link)->id == id) {
			if (prevp)
				*prevp = link;
			return *link;
		}
	}
	return NULL;
}

/* priv_take - unlink the record of id and return it (NULL if none). */
static struct pl_priv *priv_take(struct pl_sock *s, uint64_t id)
{
	struct pl_priv **link, *p = priv_find(s, id, &link);

	if (p) {
		*link = p->next;
		atomic_fetch_sub(&s->npriv, 1);
	}
	return p;
}

/* priv_to_msg - a parked record as a receive's outcome. */
static void priv_to_msg(const struct pl_priv *p, struct pl_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->delivered = true;
	m->error = p->error;
	m->id = p->id;
	m->cookie = p->cookie;
	m->peer = p->peer;
	m->length = p->length;
	m->num_bpages = p->num_bpages;
	memcpy(m->bpage_offsets, p->bpage_offsets,
	       p->num_bpages * sizeof(p->bpage_offsets[0]));
}

/*
 * priv_park - a shared receive took m from the engine: if it belongs to a
 * private RPC not yet parked, park it and wake private receivers.  Returns
 * true when parked (the shared receive must not return it).
 */
static bool priv_park(struct pl_sock *s, const struct pl_msg *m)
{
	struct pl_priv *p;
	bool parked = false;

	pthread_mutex_lock(&s->lock);
	p = priv_find(s, m->id, NULL);
	if (p && !p->ready) {
		p->ready = true;
		p->error = m->error;
		p->cookie = m->cookie;
		p->peer = m->peer;
		p->length = m->length;
		p->num_bpages = m->num_bpages;
		memcpy(p->bpage_offsets, m->bpage_offsets,
		       m->num_bpages * sizeof(m->bpage_offsets[0]));
		pthread_cond_broadcast(&s->cond);
		parked = true;
	}
	pthread_mutex_unlock(&s->lock);
	return parked;
}

/*
 * priv_settle - the engine no longer knows private RPC id but its record is
 * not parked: a shared receive took it and is parking it.  Wait (caller
 * holds s->lock) until the record is parked or gone, at most
 * PRIV_SETTLE_NS.  Returns the record (parked) or NULL (gone, or never
 * parked: then dropped).
 */
static struct pl_priv *priv_settle(struct pl_sock *s, uint64_t id)
{
	uint64_t waited = 0;
	struct pl_priv *p;

	while ((p = priv_find(s, id, NULL)) && !p->ready &&
	       waited < PRIV_SETTLE_NS) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (long)PRIV_SETTLE_STEP_NS;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
		waited += PRIV_SETTLE_STEP_NS;
	}
	if (p && !p->ready) {
		free(priv_take(s, id));
		return NULL;
	}
	return p;
}

/* return_bpages - give the bpages of a parked record back to the engine
 * (nobody will deliver them). */
static void return_bpages(struct pl_sock *s, const uint32_t *offsets,
			  uint32_t num)
{
	if (num > 0)
		(void)pl_engine_return_bpages(s->nfd, offsets, num);
}

/* See homa_preload.h. */
uint32_t pl_priv_ready_count(struct pl_sock *s)
{
	uint32_t n = 0;

	pthread_mutex_lock(&s->lock);
	for (struct pl_priv *p = s->privs; p; p = p->next)
		n += p->ready;
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* See homa_preload.h. */
void pl_priv_free_all(struct pl_sock *s)
{
	while (s->privs) {
		struct pl_priv *p = s->privs;

		s->privs = p->next;
		free(p);
	}
	atomic_store(&s->npriv, 0);
}

/*
 * abort_parked - HOMAIOCABORT of a parked private RPC p (caller holds
 * s->lock): error 0 drops it, else it becomes that failure (unless it
 * failed already).  Its bpages go back to the engine (lock order: the
 * shim's socket lock, then the engine's, as everywhere in the shim).
 */
static void abort_parked(struct pl_sock *s, struct pl_priv *p, int error)
{
	if (error == 0 || p->error == 0) {
		return_bpages(s, p->bpage_offsets, p->num_bpages);
		p->num_bpages = 0;
		p->length = 0;
	}
	if (error == 0)
		free(priv_take(s, p->id));
	else if (p->error == 0)
		p->error = error;
}

/* abort_one - HOMAIOCABORT of client RPC id != 0.  Returns 0 or errno. */
static int abort_one(struct pl_sock *s, uint64_t id, int error)
{
	struct pl_priv *p;
	bool known;
	int err;

	pthread_mutex_lock(&s->lock);
	p = priv_find(s, id, NULL);
	if (p && p->ready) {
		abort_parked(s, p, error);
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	known = p != NULL;
	pthread_mutex_unlock(&s->lock);
	err = homa_abort(s->nfd, id, error) == 0 ? 0 : errno;
	if (!known)
		return err;
	pthread_mutex_lock(&s->lock);
	if (err == EINVAL) {
		/* Taken by a shared receive meanwhile: abort the parked
		 * copy. */
		p = priv_settle(s, id);
		if (p) {
			abort_parked(s, p, error);
			err = 0;
		}
	} else if (err == 0 && error == 0) {
		/* Discarded in the engine: it will never come. */
		free(priv_take(s, id));
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* See homa_preload.h. */
int pl_priv_abort(struct pl_sock *s, uint64_t id, int error)
{
	struct pl_priv **link, *p;

	if (id != 0)
		return abort_one(s, id, error);
	if (homa_abort(s->nfd, 0, error) != 0)
		return errno;
	pthread_mutex_lock(&s->lock);
	link = &s->privs;
	while ((p = *link) != NULL) {
		if (p->ready && (error == 0 || p->error == 0)) {
			return_bpages(s, p->bpage_offsets, p->num_bpages);
			p->num_bpages = 0;
			p->length = 0;
			if (error != 0)
				p->error = error;
		}
		if (error == 0) {
			/* Discarded: parked or still in the engine (which
			 * dropped it), it will never be received. */
			*link = p->next;
			atomic_fetch_sub(&s->npriv, 1);
			free(p);
			continue;
		}
		link = &p->next;
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* ---- sendmsg ---- */

/* addr_len_of - the sockaddr size of family. */
static socklen_t addr_len_of(int family)
{
	return family == AF_INET6 ? sizeof(struct sockaddr_in6)
				  : sizeof(struct sockaddr_in);
}

/*
 * check_send - the kernel's checks of a sendmsg, in its order; copies the
 * arguments into *args.  Returns 0 or -1 (errno set, recorded).
 */
static int check_send(struct pl_sock *s, const struct msghdr *msg,
		      struct hk_sendmsg_args *args)
{
	sa_family_t family;

	if (!msg)
		return pl_fail(s, EFAULT, NULL);
	if (!msg->msg_name)
		return pl_fail(s, EINVAL, "sendmsg: no destination address");
	if (msg->msg_controllen != 0)
		return pl_fail(s, EINVAL,
			       "sendmsg: msg_controllen must be 0");
	if (!msg->msg_control)
		return pl_fail(s, EFAULT, "sendmsg: no homa_sendmsg_args");
	memcpy(args, msg->msg_control, sizeof(*args));
	if ((args->flags & ~HK_SENDMSG_VALID_FLAGS) || args->reserved != 0)
		return pl_fail(s, EINVAL,
			       "sendmsg: unknown flags or reserved not 0");
	if (msg->msg_namelen < (socklen_t)sizeof(sa_family_t))
		return pl_fail(s, EINVAL, "sendmsg: address too short");
	memcpy(&family, (const char *)msg->msg_name +
	       offsetof(struct sockaddr, sa_family), sizeof(family));
	if (family != s->family)
		return pl_fail(s, EAFNOSUPPORT,
			       "sendmsg: address family differs from "
			       "socket's");
	if (msg->msg_namelen < addr_len_of(family))
		return pl_fail(s, EINVAL, "sendmsg: address too short");
	if (args->id != 0 && args->completion_cookie != 0)
		return pl_fail(s, EINVAL,
			       "sendmsg: a response has no completion "
			       "cookie");
	return 0;
}

/* homa_send_k - sendmsg on Homa socket s.  Returns 0 or -1. */
static ssize_t homa_send_k(struct pl_sock *s, const struct msghdr *msg)
{
	struct homa_sendmsg_args nargs;
	struct hk_sendmsg_args args;
	struct pl_priv *p = NULL;
	struct msghdr nmsg;
	int r, err;

	if (check_send(s, msg, &args) != 0)
		return -1;
	nargs.id = args.id;
	nargs.completion_cookie = args.completion_cookie;
	nmsg = *msg;
	nmsg.msg_control = &nargs;
	nmsg.msg_controllen = sizeof(nargs);
	nmsg.msg_flags = 0;
	if (args.id == 0 && (args.flags & HK_SENDMSG_PRIVATE)) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return pl_fail(s, ENOMEM, NULL);
		/* Held until the id is recorded, and counted before the
		 * request leaves: a shared receive that gets the response
		 * first sees the count, waits here, then parks it. */
		pthread_mutex_lock(&s->lock);
		atomic_fetch_add(&s->npriv, 1);
	}
	r = homa_sendmsg(s->nfd, &nmsg, 0) < 0 ? -1 : 0;
	err = errno;
	if (p) {
		if (r == 0) {
			p->id = nargs.id;
			p->next = s->privs;
			s->privs = p;
		} else {
			atomic_fetch_sub(&s->npriv, 1);
			free(p);
		}
		pthread_mutex_unlock(&s->lock);
	}
	if (r != 0)
		return pl_fail(s, err, NULL);
	if (args.id == 0)
		memcpy((char *)msg->msg_control +
		       offsetof(struct hk_sendmsg_args, id),
		       &nargs.id, sizeof(nargs.id));
	return 0;
}

/* ---- recvmsg ---- */

/*
 * engine_recv - one homa_recvmsg for id (0: any request or response),
 * handing back offsets[0..num).  Fills *m: delivered (a message or an RPC
 * failure) or the call's errno.
 */
static void engine_recv(struct pl_sock *s, uint64_t id, bool nonblock,
			const uint32_t *offsets, uint32_t num,
			struct pl_msg *m)
{
	struct homa_recvmsg_args na;
	struct msghdr nmsg;
	ssize_t r;

	memset(&na, 0, sizeof(na));
	na.id = id;
	na.flags = HOMA_RECVMSG_REQUEST | HOMA_RECVMSG_RESPONSE;
	na.peer_addr.sa.sa_family = AF_UNSPEC;
	na.num_bpages = num;
	if (num > 0)
		memcpy(na.bpage_offsets, offsets, num * sizeof(offsets[0]));
	memset(&nmsg, 0, sizeof(nmsg));
	nmsg.msg_control = &na;
	nmsg.msg_controllen = sizeof(na);
	r = homa_recvmsg(s->nfd, &nmsg, nonblock ? MSG_DONTWAIT : 0);
	memset(m, 0, sizeof(*m));
	if (na.peer_addr.sa.sa_family == AF_UNSPEC) {
		/* Nothing taken (the engine fills the peer of every message
		 * and failure it hands over). */
		m->error = r < 0 ? errno : EIO;
		return;
	}
	m->delivered = true;
	m->error = r < 0 ? errno : 0;
	m->id = na.id;
	m->cookie = na.completion_cookie;
	m->peer = na.peer_addr;
	if (r >= 0) {
		m->length = (uint32_t)r;
		m->num_bpages = na.num_bpages;
		memcpy(m->bpage_offsets, na.bpage_offsets,
		       na.num_bpages * sizeof(na.bpage_offsets[0]));
	}
}

/* recv_shared - recvmsg with id 0: the next shared message, parking the
 * responses of private RPCs on the way. */
static void recv_shared(struct pl_sock *s, const struct hk_recvmsg_args *a,
			bool nonblock, struct pl_msg *m)
{
	uint32_t num = a->num_bpages;

	for (;;) {
		engine_recv(s, 0, nonblock, a->bpage_offsets, num, m);
		num = 0;   /* handed back by the first call */
		if (!m->delivered || (m->id & 1) != 0 ||
		    atomic_load(&s->npriv) == 0 || !priv_park(s, m))
			return;
	}
}

/* recv_private - recvmsg with id != 0: that private RPC's response. */
static void recv_private(struct pl_sock *s, const struct hk_recvmsg_args *a,
			 bool nonblock, struct pl_msg *m)
{
	struct pl_priv *p;
	int err;

	memset(m, 0, sizeof(*m));
	/* The handed-back bpages first, as the kernel does. */
	err = pl_engine_return_bpages(s->nfd, a->bpage_offsets,
				      a->num_bpages);
	if (err) {
		m->error = err;
		return;
	}
	pthread_mutex_lock(&s->lock);
	p = priv_find(s, a->id, NULL);
	if (p && p->ready) {
		p = priv_take(s, a->id);
		pthread_mutex_unlock(&s->lock);
		priv_to_msg(p, m);
		free(p);
		return;
	}
	pthread_mutex_unlock(&s->lock);
	if (!p) {
		m->error = EINVAL;   /* no such private RPC */
		return;
	}
	engine_recv(s, a->id, nonblock, NULL, 0, m);
	pthread_mutex_lock(&s->lock);
	if (m->delivered) {
		free(priv_take(s, a->id));
	} else if (m->error == EINVAL) {
		/* The engine no longer has it: a shared receive took it
		 * and parks it now (or an abort discarded it). */
		p = priv_settle(s, a->id);
		if (p) {
			p = priv_take(s, a->id);
			priv_to_msg(p, m);
			free(p);
		}
	}
	pthread_mutex_unlock(&s->lock);
}

/* fill_name - the peer into msg_name, as recvmsg(2) does (truncated to
 * msg_namelen, which becomes the full length). */
static void fill_name(struct msghdr *msg, const union sockaddr_in_union *peer)
{
	socklen_t n = addr_len_of(peer->sa.sa_family);

	if (!msg->msg_name)
		return;
	memcpy(msg->msg_name, peer, msg->msg_namelen < n ? msg->msg_namelen
							 : n);
	msg->msg_namelen = n;
}

/* homa_recv_k - recvmsg on Homa socket s.  Returns the length or -1. */
static ssize_t homa_recv_k(struct pl_sock *s, struct msghdr *msg, int flags)
{
	bool nonblock = (flags & MSG_DONTWAIT) || atomic_load(&s->nonblock);
	struct hk_recvmsg_args args;
	struct pl_msg m;
	ssize_t ret;

	if (!msg)
		return pl_fail(s, EFAULT, NULL);
	if (!msg->msg_control)
		return pl_fail(s, EINVAL, "recvmsg: no homa_recvmsg_args");
	if (msg->msg_controllen != sizeof(args))
		return pl_fail(s, EINVAL,
			       "recvmsg: msg_controllen must be 88");
	memcpy(&args, msg->msg_control, sizeof(args));
	args.completion_cookie = 0;
	memset(&m, 0, sizeof(m));
	if (args.num_bpages > HK_MAX_BPAGES) {
		m.error = EINVAL;
		pl_set_errmsg(s, "recvmsg: num_bpages above %d",
			      HK_MAX_BPAGES);
	} else if (args.reserved != 0) {
		m.error = EINVAL;
		pl_set_errmsg(s, "recvmsg: reserved not 0");
	} else if (args.id == 0) {
		recv_shared(s, &args, nonblock, &m);
	} else {
		recv_private(s, &args, nonblock, &m);
	}
	args.num_bpages = 0;
	msg->msg_flags = 0;
	if (!m.delivered) {
		ret = pl_fail(s, m.error, NULL);
	} else {
		args.id = m.id;
		args.completion_cookie = m.cookie;
		fill_name(msg, &m.peer);
		if (m.error) {
			pl_set_errmsg(s, "RPC %llu failed: %s",
				      (unsigned long long)m.id,
				      strerror(m.error));
			errno = m.error;
			ret = -1;
		} else {
			args.num_bpages = m.num_bpages;
			memcpy(args.bpage_offsets, m.bpage_offsets,
			       m.num_bpages * sizeof(m.bpage_offsets[0]));
			ret = (ssize_t)m.length;
		}
	}
	memcpy(msg->msg_control, &args, sizeof(args));
	return ret;
}

/* ---- the interposed calls ---- */

PL_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct pl_sock *s = pl_get(fd);
	ssize_t r;

	if (!s)
		return pl_next.sendmsg ? pl_next.sendmsg(fd, msg, flags)
				       : pl_nosys();
	r = homa_send_k(s, msg);
	pl_put(s);
	return r;
}

PL_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct pl_sock *s = pl_get(fd);
	ssize_t r;

	if (!s)
		return pl_next.recvmsg ? pl_next.recvmsg(fd, msg, flags)
				       : pl_nosys();
	r = homa_recv_k(s, msg, flags);
	pl_put(s);
	return r;
}

PL_EXPORT int sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen,
		       int flags)
{
	struct pl_sock *s = pl_get(fd);
	unsigned int i;

	if (!s)
		return pl_next.sendmmsg
			? pl_next.sendmmsg(fd, vec, vlen, flags)
			: pl_nosys();
	if (vlen > 1024)      /* UIO_MAXIOV, as the kernel clamps */
		vlen = 1024;
	for (i = 0; i < vlen; i++) {
		if (homa_send_k(s, &vec[i].msg_hdr) != 0)
			break;
		vec[i].msg_len = 0;
	}
	pl_put(s);
	return i > 0 || vlen == 0 ? (int)i : -1;
}

PL_EXPORT int recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen,
		       int flags, struct timespec *timeout)
{
	struct pl_sock *s = pl_get(fd);
	ssize_t r;

	if (!s)
		return pl_next.recvmmsg
			? pl_next.recvmmsg(fd, vec, vlen, flags, timeout)
			: pl_nosys();
	if (vlen == 0) {
		pl_put(s);
		return 0;
	}
	r = homa_recv_k(s, &vec[0].msg_hdr, flags & ~MSG_WAITFORONE);
	pl_put(s);
	if (r < 0)
		return -1;
	vec[0].msg_len = (unsigned int)r;
	return 1;
}

/* refuse - a data call without Homa arguments on Homa socket s: EINVAL. */
static ssize_t refuse(struct pl_sock *s, const char *call)
{
	pl_set_errmsg(s, "%s: a Homa socket needs sendmsg/recvmsg with "
		      "Homa arguments", call);
	pl_put(s);
	errno = EINVAL;
	return -1;
}

PL_EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.send ? pl_next.send(fd, buf, len, flags)
				    : pl_nosys();
	return refuse(s, "send");
}

PL_EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.recv ? pl_next.recv(fd, buf, len, flags)
				    : pl_nosys();
	return refuse(s, "recv");
}

PL_EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
			 __CONST_SOCKADDR_ARG addr, socklen_t alen)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.sendto
			? pl_next.sendto(fd, buf, len, flags, CSA_PTR(addr),
					 alen)
			: pl_nosys();
	return refuse(s, "sendto");
}

PL_EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
			   __SOCKADDR_ARG addr, socklen_t *alen)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.recvfrom
			? pl_next.recvfrom(fd, buf, len, flags, SA_PTR(addr),
					   alen)
			: pl_nosys();
	return refuse(s, "recvfrom");
}

PL_EXPORT ssize_t read(int fd, void *buf, size_t len)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.read(fd, buf, len);
	return refuse(s, "read");
}

PL_EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.write(fd, buf, len);
	return refuse(s, "write");
}

PL_EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.readv(fd, iov, n);
	return refuse(s, "readv");
}

PL_EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.writev(fd, iov, n);
	return refuse(s, "writev");
}

/* The _FORTIFY_SOURCE entry points of read, recv and recvfrom. */
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen,
		       int flags, __SOCKADDR_ARG addr, socklen_t *alen);

PL_EXPORT ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.read_chk ? pl_next.read_chk(fd, buf, len, buflen)
					: pl_nosys();
	return refuse(s, "read");
}

PL_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen,
			     int flags)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.recv_chk
			? pl_next.recv_chk(fd, buf, len, buflen, flags)
			: pl_nosys();
	return refuse(s, "recv");
}

PL_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t len,
				 size_t buflen, int flags,
				 __SOCKADDR_ARG addr, socklen_t *alen)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.recvfrom_chk
			? pl_next.recvfrom_chk(fd, buf, len, buflen, flags,
					       SA_PTR(addr), alen)
			: pl_nosys();
	return refuse(s, "recvfrom");
}
