/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_socket - the socket calls of homa.h (all but homa_recvmsg, which is
 * in homa_sockrecv.c), the send wrappers, the process-wide settings and the
 * counters.  Each call returns -1 with errno set on error, as the system
 * call it is named after, and a failed call leaves the socket usable.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "homa_sock.h"
#include "homa_sockconfig.h"
#include "homa_stats.h"
#include "homa_trace.h"

/* How long homa_close waits for other threads to leave the socket before
 * leaving the last of them to free it. */
#define CLOSE_WAIT_NS 2000000000ull
#define CLOSE_POLL_NS 50000

/* The settings new sockets copy. */
static struct {
	pthread_once_t once;
	pthread_mutex_t lock;
	struct homa_config cfg;
} settings = { .once = PTHREAD_ONCE_INIT,
	       .lock = PTHREAD_MUTEX_INITIALIZER };

/* settings_init - defaults, then the environment (once per process). */
static void settings_init(void)
{
	homa_config_defaults(&settings.cfg);
	homa_config_load_env(&settings.cfg);
}

/* settings_copy - a consistent copy of the current settings. */
static void settings_copy(struct homa_config *out)
{
	pthread_once(&settings.once, settings_init);
	pthread_mutex_lock(&settings.lock);
	*out = settings.cfg;
	pthread_mutex_unlock(&settings.lock);
}

/* fail - set errno to err (positive) and return -1. */
static int fail(int err)
{
	errno = err;
	return -1;
}

/* fail_put - release s, then fail(err). */
static int fail_put(struct homa_sock *s, int err)
{
	homa_sock_put(s);
	return fail(err);
}

/* See homa.h. */
int homa_socket(int domain, int type, int protocol)
{
	struct homa_config cfg;
	struct homa_sock *s;
	int err;

	if (domain != AF_INET && domain != AF_INET6)
		return fail(EAFNOSUPPORT);
	if ((type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) != SOCK_DGRAM)
		return fail(EPROTONOSUPPORT);
	if (protocol != 0 && protocol != IPPROTO_HOMA)
		return fail(EPROTONOSUPPORT);
	err = homa_progress_start();
	if (err)
		return fail(-err);
	settings_copy(&cfg);
	err = homa_sock_create(&cfg, domain, (type & SOCK_NONBLOCK) != 0, &s);
	if (err)
		return fail(-err);
	err = homa_sock_table_insert(s);
	if (err) {
		homa_sock_destroy(s);
		return fail(-err);
	}
	err = homa_progress_watch(s, -1);
	if (err) {
		struct homa_sock *t = homa_sock_table_remove(s->fd);

		if (t)
			homa_sock_put(t);
		return fail(-err);
	}
	return s->fd;
}

/*
 * addr_len_of - the sockaddr length family needs (0 for another family).
 */
static socklen_t addr_len_of(int family)
{
	if (family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return 0;
}

/*
 * copy_addr - check addr/addrlen against the socket's family and copy it
 * into *out.  Returns 0, EAFNOSUPPORT (another family than the socket's,
 * as the kernel module answers) or EINVAL (NULL, or too short).
 */
static int copy_addr(const struct homa_sock *s, const void *addr,
		     socklen_t addrlen, union sockaddr_in_union *out)
{
	sa_family_t family;

	if (!addr || addrlen < (socklen_t)sizeof(sa_family_t))
		return EINVAL;
	memcpy(&family, (const char *)addr + offsetof(struct sockaddr,
						     sa_family),
	       sizeof(family));
	if (family != s->family)
		return EAFNOSUPPORT;
	if (addrlen < addr_len_of(family))
		return EINVAL;
	memset(out, 0, sizeof(*out));
	memcpy(out, addr, addr_len_of(family));
	return 0;
}

/* addr_port - the port of a checked address (host order). */
static uint16_t addr_port(const union sockaddr_in_union *a)
{
	return ntohs(a->sa.sa_family == AF_INET6 ? a->in6.sin6_port
						 : a->in4.sin_port);
}

/* See homa.h. */
int homa_bind(int fd, const struct sockaddr *addr, socklen_t addrlen)
{
	struct homa_sock *s = homa_sock_get(fd);
	union sockaddr_in_union a;
	uint16_t port;
	int err;

	if (!s)
		return fail(EBADF);
	err = copy_addr(s, addr, addrlen, &a);
	if (err)
		return fail_put(s, err);
	port = addr_port(&a);
	if (port >= HOMA_MIN_DEFAULT_PORT)
		return fail_put(s, EINVAL);
	if (port == 0) {
		homa_sock_put(s);
		return 0;
	}
	pthread_mutex_lock(&s->lock);
	err = homa_sock_rebind(s, port);
	pthread_mutex_unlock(&s->lock);
	if (err)
		return fail_put(s, -err);
	homa_sock_put(s);
	return 0;
}

/*
 * set_buf - SO_HOMA_SET_BUF: attach the application's buffer region.
 * Returns 0 or a positive errno (EINVAL: size, alignment, too small, set
 * already; EFAULT: NULL optval).
 */
static int set_buf(struct homa_sock *s, const void *optval, socklen_t optlen)
{
	struct homa_set_buf_args args;
	int err;

	if (optlen != sizeof(args))
		return EINVAL;
	if (!optval)
		return EFAULT;
	memcpy(&args, optval, sizeof(args));
	pthread_mutex_lock(&s->lock);
	err = homa_pool_set_region(s->pool, args.start,
				   args.length);
	if (!err) {
		homa_sock_flush(s, homa_sock_now());
		homa_sock_sync(s);
	}
	pthread_mutex_unlock(&s->lock);
	return -err;
}

/* See homa.h. */
int homa_setsockopt(int fd, int level, int optname, const void *optval,
		    socklen_t optlen)
{
	struct homa_sock *s = homa_sock_get(fd);
	int err;

	if (!s)
		return fail(EBADF);
	if (level != IPPROTO_HOMA || optname != SO_HOMA_SET_BUF)
		return fail_put(s, ENOPROTOOPT);
	err = set_buf(s, optval, optlen);
	if (err)
		return fail_put(s, err);
	homa_sock_put(s);
	return 0;
}

/* See homa.h. */
int homa_getsockopt(int fd, int level, int optname, void *optval,
		    socklen_t *optlen)
{
	struct homa_sock *s = homa_sock_get(fd);
	struct homa_rcvbuf_args args;

	if (!s)
		return fail(EBADF);
	if (level != IPPROTO_HOMA || optname != HOMA_SO_RCVBUF)
		return fail_put(s, ENOPROTOOPT);
	if (!optval || !optlen)
		return fail_put(s, EFAULT);
	if (*optlen < (socklen_t)sizeof(args))
		return fail_put(s, EINVAL);
	pthread_mutex_lock(&s->lock);
	homa_pool_get_rcvbuf(s->pool, &args);
	pthread_mutex_unlock(&s->lock);
	memcpy(optval, &args, sizeof(args));
	*optlen = sizeof(args);
	homa_sock_put(s);
	return 0;
}

/*
 * check_iov - the message of msg: 1..HOMA_MAX_MESSAGE_LENGTH bytes in at
 * most IOV_MAX pieces.  Returns 0, EINVAL, or EFAULT (a NULL piece).
 */
static int check_iov(const struct msghdr *msg)
{
	size_t total = 0;

	if (msg->msg_iovlen == 0 || msg->msg_iovlen > IOV_MAX)
		return EINVAL;
	if (!msg->msg_iov)
		return EFAULT;
	for (size_t i = 0; i < msg->msg_iovlen; i++) {
		size_t len = msg->msg_iov[i].iov_len;

		if (len > HOMA_MAX_MESSAGE_LENGTH - total)
			return EINVAL;
		if (len > 0 && !msg->msg_iov[i].iov_base)
			return EFAULT;
		total += len;
	}
	return total == 0 ? EINVAL : 0;
}

/*
 * check_send - validate a homa_sendmsg msghdr; copy its arguments and
 * destination out.  Returns 0 or a positive errno (EINVAL, EAFNOSUPPORT,
 * EFAULT).
 */
static int check_send(const struct homa_sock *s, const struct msghdr *msg,
		      struct homa_sendmsg_args *args,
		      union sockaddr_in_union *dest)
{
	int err;

	if (!msg || !msg->msg_control)
		return EINVAL;
	if (msg->msg_controllen != 0 &&
	    msg->msg_controllen != sizeof(struct homa_sendmsg_args))
		return EINVAL;
	err = copy_addr(s, msg->msg_name, msg->msg_namelen, dest);
	if (err)
		return err;
	memcpy(args, msg->msg_control, sizeof(*args));
	return check_iov(msg);
}

/* See homa.h. */
ssize_t homa_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct homa_sock *s = homa_sock_get(fd);
	struct homa_sendmsg_args args;
	union sockaddr_in_union dest;
	uint64_t id = 0, now;
	int err;

	if (!s)
		return fail(EBADF);
	homa_trace(HOMA_TRACE_SEND_ENTER, 0);
	err = check_send(s, msg, &args, &dest);
	if (err)
		return fail_put(s, err);
	pthread_mutex_lock(&s->lock);
	err = homa_sock_wait_wmem(s, (flags & MSG_DONTWAIT) || s->nonblock);
	if (err) {
		pthread_mutex_unlock(&s->lock);
		return fail_put(s, -err);
	}
	homa_sock_send_begin(s);
	now = homa_sock_now();
	/* A large message's first packets leave from the caller's buffer
	 * (lent); the engine's copy is made once they are out
	 * (homa_sock_settle). */
	if (args.id == 0)
		err = homa_ep_send_request(s->ep, &dest, msg->msg_iov,
					   (int)msg->msg_iovlen,
					   args.completion_cookie,
					   HOMA_EP_SEND_LENT, &id, now);
	else
		err = homa_ep_send_reply(s->ep, &dest, args.id, msg->msg_iov,
					 (int)msg->msg_iovlen,
					 HOMA_EP_SEND_LENT, now);
	if (!err) {
		homa_sock_send_or_defer(s, now);
		homa_sock_pace_inline(s, now);
	}
	homa_sock_settle(s);
	homa_sock_send_end(s);
	homa_sock_sync(s);
	pthread_mutex_unlock(&s->lock);
	if (err)
		return fail_put(s, -err);
	if (args.id == 0)
		memcpy(msg->msg_control, &id, sizeof(id));
	homa_sock_put(s);
	return 0;
}

/*
 * send_iov - homa_sendmsg of iov[0..iovcnt) to dest with the given id and
 * cookie; the new id (requests) in *id_out when not NULL.  Returns 0 or -1.
 */
static int send_iov(int fd, const struct iovec *iov, int iovcnt,
		    const union sockaddr_in_union *dest, uint64_t id,
		    uint64_t cookie, uint64_t *id_out)
{
	struct homa_sendmsg_args args = { .id = id,
					  .completion_cookie = cookie };
	struct msghdr msg;

	if (iovcnt < 0 || !dest)
		return fail(EINVAL);
	memset(&msg, 0, sizeof(msg));
	msg.msg_name = (void *)dest;
	msg.msg_namelen = addr_len_of(dest->sa.sa_family);
	msg.msg_iov = (struct iovec *)iov;
	msg.msg_iovlen = (size_t)iovcnt;
	msg.msg_control = &args;
	msg.msg_controllen = 0;
	if (homa_sendmsg(fd, &msg, 0) < 0)
		return -1;
	if (id_out)
		*id_out = args.id;
	return 0;
}

/* See homa.h. */
int homa_send(int sockfd, const void *message_buf, size_t length,
	      const union sockaddr_in_union *dest_addr, uint64_t *id,
	      uint64_t completion_cookie)
{
	struct iovec v = { .iov_base = (void *)message_buf,
			   .iov_len = length };

	return send_iov(sockfd, &v, 1, dest_addr, 0, completion_cookie, id);
}

/* See homa.h. */
int homa_sendv(int sockfd, const struct iovec *iov, int iovcnt,
	       const union sockaddr_in_union *dest_addr, uint64_t *id,
	       uint64_t completion_cookie)
{
	return send_iov(sockfd, iov, iovcnt, dest_addr, 0, completion_cookie,
			id);
}

/* See homa.h. */
ssize_t homa_reply(int sockfd, const void *message_buf, size_t length,
		   const union sockaddr_in_union *dest_addr, uint64_t id)
{
	struct iovec v = { .iov_base = (void *)message_buf,
			   .iov_len = length };

	if (id == 0)
		return fail(EINVAL);
	return send_iov(sockfd, &v, 1, dest_addr, id, 0, NULL);
}

/* See homa.h. */
ssize_t homa_replyv(int sockfd, const struct iovec *iov, int iovcnt,
		    const union sockaddr_in_union *dest_addr, uint64_t id)
{
	if (id == 0)
		return fail(EINVAL);
	return send_iov(sockfd, iov, iovcnt, dest_addr, id, 0, NULL);
}

/* See homa.h. */
int homa_abort(int fd, uint64_t id, int error)
{
	struct homa_sock *s = homa_sock_get(fd);
	int err;

	if (!s)
		return fail(EBADF);
	if (error < 0)
		return fail_put(s, EINVAL);
	pthread_mutex_lock(&s->lock);
	err = homa_ep_abort(s->ep, id, error);
	homa_sock_flush(s, homa_sock_now());
	homa_sock_sync(s);
	pthread_mutex_unlock(&s->lock);
	if (err)
		return fail_put(s, -err);
	homa_sock_put(s);
	return 0;
}

/* See homa.h. */
int homa_shutdown(int fd, int how)
{
	struct homa_sock *s = homa_sock_get(fd);

	if (!s)
		return fail(EBADF);
	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		return fail_put(s, EINVAL);
	pthread_mutex_lock(&s->lock);
	homa_ep_shutdown(s->ep);
	homa_sock_flush(s, homa_sock_now());
	homa_sock_sync(s);
	homa_sock_wake(s);
	pthread_mutex_unlock(&s->lock);
	homa_sock_put(s);
	return 0;
}

/*
 * close_wait_alone - wait (up to CLOSE_WAIT_NS) until the caller's
 * reference is the only one left on s; threads blocked in recvmsg have been
 * woken and leave with EBADF.
 */
static void close_wait_alone(struct homa_sock *s)
{
	const struct timespec pause = { .tv_sec = 0,
					.tv_nsec = CLOSE_POLL_NS };
	uint64_t end = homa_sock_now() + CLOSE_WAIT_NS;

	while (atomic_load(&s->refs) > 1 && homa_sock_now() < end)
		nanosleep(&pause, NULL);
}

/* See homa.h. */
int homa_close(int fd)
{
	struct homa_sock *s = homa_sock_table_remove(fd);

	if (!s)
		return fail(EBADF);
	pthread_mutex_lock(&s->lock);
	atomic_store(&s->closing, true);
	homa_sock_wake(s);
	pthread_mutex_unlock(&s->lock);
	homa_progress_unwatch(s);
	close_wait_alone(s);
	homa_sock_put(s);
	return 0;
}

/* See homa.h. */
int homa_config_set(const char *name, int64_t value)
{
	struct homa_config tmp;
	int err;

	if (!name)
		return fail(EINVAL);
	pthread_once(&settings.once, settings_init);
	pthread_mutex_lock(&settings.lock);
	tmp = settings.cfg;
	err = homa_config_set_value(&tmp, name, value);
	if (!err)
		err = homa_config_check(&tmp);
	if (!err)
		settings.cfg = tmp;
	pthread_mutex_unlock(&settings.lock);
	return err ? fail(EINVAL) : 0;
}

/* See homa.h. */
int homa_config_get(const char *name, int64_t *value)
{
	int err;

	if (!name || !value)
		return fail(EINVAL);
	pthread_once(&settings.once, settings_init);
	pthread_mutex_lock(&settings.lock);
	err = homa_config_get_value(&settings.cfg, name, value);
	pthread_mutex_unlock(&settings.lock);
	return err ? fail(EINVAL) : 0;
}

/* The entries homa_stats_get gives after the engine's counters: gauges,
 * values of now rather than totals. */
#define GAUGE_NUM_RPCS  HOMA_STAT_COUNT         /* RPCs the socket holds */
#define STATS_ENTRIES   (HOMA_STAT_COUNT + 1)

/* See homa.h.  The counters first, then the gauge num_rpcs. */
int homa_stats_get(int fd, const char **names, uint64_t *values, int max)
{
	struct homa_sock *s = homa_sock_get(fd);
	int n = max < STATS_ENTRIES ? max : STATS_ENTRIES;

	if (!s)
		return fail(EBADF);
	if (n > 0) {
		struct homa_ep_info info;

		pthread_mutex_lock(&s->lock);
		homa_ep_info(s->ep, &info);
		for (int i = 0; i < n; i++) {
			if (values)
				values[i] = i == GAUGE_NUM_RPCS
					    ? info.num_rpcs : info.stats[i];
			if (names)
				names[i] = i == GAUGE_NUM_RPCS ? "num_rpcs"
					   : homa_stat_name((enum homa_stat)i);
		}
		pthread_mutex_unlock(&s->lock);
	}
	homa_sock_put(s);
	return STATS_ENTRIES;
}
