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
 *   arguments.  A socket holding wmem_max bytes of outgoing messages makes
 *   the call wait for memory, as the kernel's does; with MSG_DONTWAIT or
 *   O_NONBLOCK it fails with EAGAIN instead (the descriptor is not
 *   writable, POLLOUT, meanwhile).  Returns 0; a request's id is written
 *   back.  A request
 *   with HOMA_SENDMSG_PRIVATE goes through pl_engine_send_private instead,
 *   which makes it private in the engine in the same critical section as
 *   the send: its response (or failure) is handed only to a receive naming
 *   its id and never makes the descriptor readable (POLLIN).
 *
 * recvmsg: msg_control -> struct hk_recvmsg_args (88 bytes), msg_controllen
 *   88.  id 0 receives any shared message, request or response (native
 *   flags REQUEST|RESPONSE; the engine never hands it a private RPC);
 *   id != 0 the response of that client RPC (native homa_recvmsg with that
 *   id; EINVAL when it names no live client RPC).  MSG_DONTWAIT or
 *   O_NONBLOCK: EAGAIN instead of waiting.  The handed-back bpages are
 *   returned first, even when the call then fails.  Returns the length with
 *   id, completion_cookie, num_bpages, bpage_offsets and msg_name filled; a
 *   failed RPC: -1, errno its error, id/cookie/msg_name naming it,
 *   num_bpages 0.
 *
 * read, write, readv, writev, send, recv, sendto, recvfrom (and the
 * _FORTIFY_SOURCE variants) on a Homa socket: EINVAL, as in the kernel,
 * whose Homa sendmsg/recvmsg refuse a call without Homa arguments.
 * sendmmsg sends each message with sendmsg's rules and stops at the first
 * failure; recvmmsg receives one message per call (it may return fewer
 * than asked; a second would risk losing an RPC error).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "homa_preload.h"

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

/* ---- why a call failed (HOMAIOCINFO's error_msg) ---- */

/* fail_why - pl_fail with a message formatted from fmt.  Returns -1. */
static int fail_why(struct pl_sock *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_why(struct pl_sock *s, int err, const char *fmt, ...)
{
	char why[HK_ERROR_MSG_SIZE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return pl_fail(s, err, why);
}

/* msg_bytes - the bytes of msg's message (its iovec lengths summed,
 * SIZE_MAX when the sum overflows). */
static size_t msg_bytes(const struct msghdr *msg)
{
	size_t total = 0;

	for (size_t i = 0; i < msg->msg_iovlen; i++) {
		if (msg->msg_iov[i].iov_len > SIZE_MAX - total)
			return SIZE_MAX;
		total += msg->msg_iov[i].iov_len;
	}
	return total;
}

/*
 * send_fail - the engine refused sendmsg msg (arguments args) with err:
 * record the reason as precisely as the call tells it (the kernel module's
 * error_msg names the cause, not just the errno).  Returns -1 (errno err).
 */
static int send_fail(struct pl_sock *s, const struct msghdr *msg,
		     const struct hk_sendmsg_args *args, int err)
{
	size_t len = msg_bytes(msg);

	if (err == EINVAL && len == 0)
		return pl_fail(s, err, "sendmsg: message is empty");
	if (err == EINVAL && len > HOMA_MAX_MESSAGE_LENGTH)
		return fail_why(s, err, "message too long: %zu bytes > "
				"HOMA_MAX_MESSAGE_LENGTH (%d)", len,
				HOMA_MAX_MESSAGE_LENGTH);
	if (err == EINVAL && args->id != 0 && (args->id & 1) == 0)
		return fail_why(s, err, "sendmsg: id %llu is not a server "
				"RPC's (even)", (unsigned long long)args->id);
	if (err == EINVAL && args->id != 0)
		return fail_why(s, err, "sendmsg: server RPC %llu is not "
				"waiting for a response (request not yet "
				"received, or already answered)",
				(unsigned long long)args->id);
	if (err == ESHUTDOWN)
		return pl_fail(s, err, "sendmsg: socket has been shut down");
	if (err == EAGAIN)
		return pl_fail(s, err, "sendmsg: the socket holds wmem_max "
			       "bytes of outgoing messages (MSG_DONTWAIT)");
	if (err == ENOMEM)
		return fail_why(s, err, "sendmsg: no memory for a message of "
				"%zu bytes", len);
	return pl_fail(s, err, NULL);
}

/*
 * recv_fail - the engine's recvmsg for id, handing back num bpages, failed
 * with err (nothing delivered): record the reason as precisely as the call
 * tells it.  Returns -1 (errno err).
 */
static int recv_fail(struct pl_sock *s, uint64_t id, uint32_t num, int err)
{
	struct pl_engine_info e;

	if (err == EINVAL && pl_engine_info(s->nfd, &e) == 0 &&
	    !e.has_region)
		return pl_fail(s, err, "recvmsg: buffer region not set "
			       "(SO_HOMA_RCVBUF)");
	if (err == EINVAL && num > 0 && id != 0)
		return fail_why(s, err, "recvmsg: a bpage handed back is not "
				"the application's, or no client RPC %llu",
				(unsigned long long)id);
	if (err == EINVAL && num > 0)
		return pl_fail(s, err, "recvmsg: a bpage handed back is not "
			       "the application's");
	if (err == EINVAL && id != 0)
		return fail_why(s, err, "recvmsg: no such client RPC: %llu",
				(unsigned long long)id);
	if (err == ESHUTDOWN)
		return pl_fail(s, err, "recvmsg: socket has been shut down");
	return pl_fail(s, err, NULL);
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
		return pl_fail(s, EFAULT, "sendmsg: msg is NULL");
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

/*
 * check_iov - the message of msg as the native homa_sendmsg accepts it:
 * 1..IOV_MAX pieces, none NULL with bytes in it (the total is checked by
 * the engine).  Returns 0 or -1 (errno set, recorded): EINVAL, EFAULT.
 */
static int check_iov(struct pl_sock *s, const struct msghdr *msg)
{
	if (msg->msg_iovlen == 0 || msg->msg_iovlen > IOV_MAX)
		return pl_fail(s, EINVAL, "sendmsg: bad msg_iovlen");
	if (!msg->msg_iov)
		return pl_fail(s, EFAULT, "sendmsg: msg_iov is NULL");
	for (size_t i = 0; i < msg->msg_iovlen; i++)
		if (msg->msg_iov[i].iov_len > 0 && !msg->msg_iov[i].iov_base)
			return fail_why(s, EFAULT, "sendmsg: msg_iov[%zu] has "
					"a NULL buffer", i);
	return 0;
}

/*
 * send_private - a new private request (HOMA_SENDMSG_PRIVATE) of msg, whose
 * check_send has passed, waiting for send memory unless nonblock; its id
 * goes to *id.  Returns 0 or -1 (errno set, recorded).
 */
static int send_private(struct pl_sock *s, const struct msghdr *msg,
			const struct hk_sendmsg_args *args, bool nonblock,
			uint64_t *id)
{
	union sockaddr_in_union dest;
	int err;

	if (check_iov(s, msg) != 0)
		return -1;
	memset(&dest, 0, sizeof(dest));
	memcpy(&dest, msg->msg_name, addr_len_of(s->family));
	err = pl_engine_send_private(s->nfd, &dest, msg->msg_iov,
				     (int)msg->msg_iovlen,
				     args->completion_cookie, nonblock, id);
	return err ? send_fail(s, msg, args, err) : 0;
}

/* homa_send_k - sendmsg on Homa socket s with flags (MSG_DONTWAIT, or
 * O_NONBLOCK on the socket: EAGAIN instead of waiting for send memory).
 * Returns 0 or -1 (errno set). */
static ssize_t homa_send_k(struct pl_sock *s, const struct msghdr *msg,
			   int flags)
{
	bool nonblock = (flags & MSG_DONTWAIT) || atomic_load(&s->nonblock);

	struct homa_sendmsg_args nargs;
	struct hk_sendmsg_args args;
	struct msghdr nmsg;

	if (check_send(s, msg, &args) != 0)
		return -1;
	nargs.id = args.id;
	nargs.completion_cookie = args.completion_cookie;
	if (args.id == 0 && (args.flags & HK_SENDMSG_PRIVATE)) {
		if (send_private(s, msg, &args, nonblock, &nargs.id) != 0)
			return -1;
	} else {
		nmsg = *msg;
		nmsg.msg_control = &nargs;
		nmsg.msg_controllen = sizeof(nargs);
		nmsg.msg_flags = 0;
		if (homa_sendmsg(s->nfd, &nmsg,
				 nonblock ? MSG_DONTWAIT : 0) < 0)
			return send_fail(s, msg, &args, errno);
	}
	if (args.id == 0)
		memcpy((char *)msg->msg_control +
		       offsetof(struct hk_sendmsg_args, id),
		       &nargs.id, sizeof(nargs.id));
	return 0;
}

/* ---- recvmsg ---- */

/*
 * engine_recv - one homa_recvmsg for id (0: any shared request or
 * response; else the response of that client RPC, private or not), handing
 * back offsets[0..num) first.  Fills *m: delivered (a message or an RPC
 * failure) or the call's errno (EINVAL when id names no live client RPC or
 * a bpage is not owned, EAGAIN, ESHUTDOWN, ...).
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
	na.flags = id == 0 ? HOMA_RECVMSG_REQUEST | HOMA_RECVMSG_RESPONSE
			   : HOMA_RECVMSG_RESPONSE;
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
	bool recorded = false;   /* the failure's reason is recorded */
	uint32_t num;
	struct pl_msg m;
	ssize_t ret;

	if (!msg)
		return pl_fail(s, EFAULT, "recvmsg: msg is NULL");
	if (!msg->msg_control)
		return pl_fail(s, EINVAL, "recvmsg: no homa_recvmsg_args");
	if (msg->msg_controllen != sizeof(args))
		return pl_fail(s, EINVAL,
			       "recvmsg: msg_controllen must be 88");
	memcpy(&args, msg->msg_control, sizeof(args));
	args.completion_cookie = 0;
	memset(&m, 0, sizeof(m));
	num = args.num_bpages;
	if (args.num_bpages > HK_MAX_BPAGES) {
		m.error = EINVAL;
		recorded = true;
		pl_set_errmsg(s, "recvmsg: num_bpages above %d",
			      HK_MAX_BPAGES);
	} else if (args.reserved != 0) {
		m.error = EINVAL;
		recorded = true;
		pl_set_errmsg(s, "recvmsg: reserved not 0");
	} else {
		engine_recv(s, args.id, nonblock, args.bpage_offsets,
			    args.num_bpages, &m);
	}
	args.num_bpages = 0;
	msg->msg_flags = 0;
	if (!m.delivered && recorded) {
		errno = m.error;
		ret = -1;
	} else if (!m.delivered) {
		ret = recv_fail(s, args.id, num, m.error);
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
	r = homa_send_k(s, msg, flags);
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
		if (homa_send_k(s, &vec[i].msg_hdr, flags) != 0)
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
