/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_preload_sock - the socket calls of the kernel Homa API, mapped onto
 * homa.h, and the descriptor calls that must know about Homa descriptors:
 *
 *   socket(AF_INET|AF_INET6, SOCK_DGRAM[|NONBLOCK|CLOEXEC], IPPROTO_HOMA)
 *                      homa_socket; the application gets a dup of the
 *                      engine's readiness descriptor
 *   bind               port 0: nothing; the socket's own port: nothing;
 *                      1..32767: homa_bind (the socket accepts requests);
 *                      >= 32768: EINVAL; other family: EAFNOSUPPORT
 *   setsockopt         IPPROTO_HOMA SO_HOMA_RCVBUF (10): the kernel's checks,
 *                      then SO_HOMA_SET_BUF; SO_HOMA_SERVER (11): requests
 *                      accepted or not; SOL_SOCKET buffer sizes and flags:
 *                      accepted, no effect; anything else ENOPROTOOPT
 *   getsockopt         the same options; SOL_SOCKET SO_TYPE, SO_DOMAIN,
 *                      SO_PROTOCOL, SO_ERROR, SO_ACCEPTCONN, buffer sizes
 *   ioctl              HOMAIOCABORT, HOMAIOCINFO, FIONBIO; FIOCLEX, FIONCLEX,
 *                      FIOASYNC pass through; others EINVAL
 *   getsockname        the family and the Homa port (address: any)
 *   getpeername        ENOTCONN; connect, listen, accept: EOPNOTSUPP
 *   shutdown           homa_shutdown (every direction, as the kernel)
 *   close, close_range the last application descriptor closes the socket
 *   dup, dup2, dup3, fcntl F_DUPFD[_CLOEXEC]
 *                      one more application descriptor of the same socket
 *   fcntl F_GETFL/F_SETFL  O_NONBLOCK kept by the shim (the descriptor under it
 *                      stays nonblocking for the engine); others pass
 *
 * Each call on a descriptor that is not a Homa application descriptor goes
 * to the next definition untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "homa_preload.h"

/* The kernel's smallest buffer region: this many bytes per core on top of
 * HK_RCVBUF_BASE (docs/protocol.md section 6), and its largest. */
#define HK_RCVBUF_PER_CORE (64u * 1024u)
#define HK_RCVBUF_BASE     2000000u
#define HK_RCVBUF_MAX      (1ull << 32)

/* Page alignment the kernel asks of the region. */
#define HK_PAGE_SIZE 4096u

/* The address inside a glibc sockaddr argument (a transparent union when
 * _GNU_SOURCE is on with GCC). */
#ifdef __SOCKADDR_ALLTYPES
#define SA_PTR(a) ((a).__sockaddr__)
#define CSA_PTR(a) ((a).__sockaddr__)
#else
#define SA_PTR(a) (a)
#define CSA_PTR(a) (a)
#endif

/* See homa_preload.h. */
void pl_set_errmsg(struct pl_sock *s, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&s->lock);
	va_start(ap, fmt);
	vsnprintf(s->errmsg, sizeof(s->errmsg), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&s->lock);
}

/* See homa_preload.h. */
int pl_fail(struct pl_sock *s, int err, const char *msg)
{
	if (err != EAGAIN && err != EINTR) {
		if (msg)
			pl_set_errmsg(s, "%s", msg);
		else
			pl_set_errmsg(s, "%s", strerror(err));
	}
	errno = err;
	return -1;
}

/* fail_put - pl_fail, then release s. */
static int fail_put(struct pl_sock *s, int err, const char *msg)
{
	pl_fail(s, err, msg);
	pl_put(s);
	return -1;
}

/* addr_len_of - the sockaddr size of family. */
static socklen_t addr_len_of(int family)
{
	return family == AF_INET6 ? sizeof(struct sockaddr_in6)
				  : sizeof(struct sockaddr_in);
}

/* ---- socket ---- */

PL_EXPORT int socket(int domain, int type, int protocol)
{
	int nfd, afd, err;

	pl_init();
	if (protocol != IPPROTO_HOMA ||
	    (domain != AF_INET && domain != AF_INET6) ||
	    (type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) != SOCK_DGRAM ||
	    pl_in_child())
		return pl_next.socket ? pl_next.socket(domain, type, protocol)
				      : pl_nosys();
	nfd = homa_socket(domain, SOCK_DGRAM, IPPROTO_HOMA);
	if (nfd < 0)
		return -1;
	afd = pl_next.fcntl(nfd, (type & SOCK_CLOEXEC) ? F_DUPFD_CLOEXEC
						       : F_DUPFD, 0);
	if (afd < 0) {
		err = errno;
		homa_close(nfd);
		errno = err;
		return -1;
	}
	err = pl_sock_new(nfd, afd, domain, (type & SOCK_NONBLOCK) != 0);
	if (err) {
		pl_next.close(afd);
		homa_close(nfd);
		errno = err;
		return -1;
	}
	return afd;
}

/* ---- bind, names, connections ---- */

PL_EXPORT int bind(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	const struct sockaddr *sa = CSA_PTR(addr);
	struct pl_sock *s = pl_get(fd);
	struct pl_engine_info info;
	sa_family_t family;
	uint16_t port;

	if (!s)
		return pl_next.bind ? pl_next.bind(fd, sa, len) : pl_nosys();
	if (!sa)
		return fail_put(s, EFAULT, "bind: no address");
	if (len < (socklen_t)sizeof(sa_family_t) ||
	    len > (socklen_t)sizeof(struct sockaddr_storage))
		return fail_put(s, EINVAL, "bind: bad address length");
	memcpy(&family, (const char *)sa + offsetof(struct sockaddr,
						   sa_family),
	       sizeof(family));
	if (family != s->family)
		return fail_put(s, EAFNOSUPPORT,
				"bind: address family differs from socket's");
	if (len < addr_len_of(family))
		return fail_put(s, EINVAL, "bind: address too short");
	port = ntohs(family == AF_INET6
		     ? ((const struct sockaddr_in6 *)sa)->sin6_port
		     : ((const struct sockaddr_in *)sa)->sin_port);
	if (port == 0) {
		pl_put(s);
		return 0;
	}
	if (port >= HOMA_MIN_DEFAULT_PORT)
		return fail_put(s, EINVAL,
				"bind: port must be below 32768");
	if (pl_engine_info(s->nfd, &info) == 0 && info.port == port) {
		/* Already this socket's port: nothing changes (as in the
		 * kernel, not even SO_HOMA_SERVER). */
		pl_put(s);
		return 0;
	}
	if (homa_bind(s->nfd, sa, len) != 0)
		return fail_put(s, errno, errno == EADDRINUSE
				? "bind: port in use" : NULL);
	atomic_store(&s->server, true);
	pl_put(s);
	return 0;
}

PL_EXPORT int getsockname(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
	struct sockaddr *sa = SA_PTR(addr);
	struct pl_sock *s = pl_get(fd);
	struct pl_engine_info info;
	union sockaddr_in_union a;
	socklen_t n;

	if (!s)
		return pl_next.getsockname ? pl_next.getsockname(fd, sa, len)
					   : pl_nosys();
	if (!sa || !len)
		return fail_put(s, EFAULT, NULL);
	if (pl_engine_info(s->nfd, &info) != 0)
		return fail_put(s, EBADF, NULL);
	memset(&a, 0, sizeof(a));
	if (s->family == AF_INET6) {
		a.in6.sin6_family = AF_INET6;
		a.in6.sin6_port = htons(info.port);
	} else {
		a.in4.sin_family = AF_INET;
		a.in4.sin_port = htons(info.port);
	}
	n = addr_len_of(s->family);
	memcpy(sa, &a, *len < n ? *len : n);
	*len = n;
	pl_put(s);
	return 0;
}

PL_EXPORT int getpeername(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.getpeername
			? pl_next.getpeername(fd, SA_PTR(addr), len)
			: pl_nosys();
	return fail_put(s, ENOTCONN, "Homa sockets have no peer");
}

PL_EXPORT int connect(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.connect ? pl_next.connect(fd, CSA_PTR(addr), len)
				       : pl_nosys();
	return fail_put(s, EOPNOTSUPP, "connect: Homa has no connections");
}

PL_EXPORT int listen(int fd, int backlog)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.listen ? pl_next.listen(fd, backlog)
				      : pl_nosys();
	return fail_put(s, EOPNOTSUPP, "listen: Homa has no connections");
}

PL_EXPORT int accept(int fd, __SOCKADDR_ARG addr, socklen_t *len)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.accept ? pl_next.accept(fd, SA_PTR(addr), len)
				      : pl_nosys();
	return fail_put(s, EOPNOTSUPP, "accept: Homa has no connections");
}

PL_EXPORT int accept4(int fd, __SOCKADDR_ARG addr, socklen_t *len, int flags)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.accept4
			? pl_next.accept4(fd, SA_PTR(addr), len, flags)
			: pl_nosys();
	return fail_put(s, EOPNOTSUPP, "accept: Homa has no connections");
}

PL_EXPORT int shutdown(int fd, int how)
{
	struct pl_sock *s = pl_get(fd);

	if (!s)
		return pl_next.shutdown ? pl_next.shutdown(fd, how)
					: pl_nosys();
	/* The kernel shuts every direction down whatever how says. */
	if (homa_shutdown(s->nfd, SHUT_RDWR) != 0)
		return fail_put(s, errno, NULL);
	pl_put(s);
	return 0;
}

/* ---- options ---- */

/* rcvbuf_min - the smallest region the kernel accepts on this machine. */
static uint64_t rcvbuf_min(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	if (n < 1)
		n = 1;
	return (uint64_t)n * HK_RCVBUF_PER_CORE + HK_RCVBUF_BASE;
}

/* set_rcvbuf - SO_HOMA_RCVBUF.  Returns 0 or -1 (errno set, recorded). */
static int set_rcvbuf(struct pl_sock *s, const void *optval, socklen_t optlen)
{
	struct homa_set_buf_args nargs;
	struct hk_rcvbuf_args args;
	uint64_t min = rcvbuf_min();

	if (optlen != sizeof(args))
		return pl_fail(s, EINVAL, "SO_HOMA_RCVBUF: optlen must be 16");
	if (!optval)
		return pl_fail(s, EFAULT, NULL);
	memcpy(&args, optval, sizeof(args));
	if (args.start == 0 || (args.start & (HK_PAGE_SIZE - 1)) != 0)
		return pl_fail(s, EINVAL,
			       "SO_HOMA_RCVBUF: region not page-aligned");
	if (args.length < min) {
		pl_set_errmsg(s, "SO_HOMA_RCVBUF: region of %llu bytes is "
			      "below the minimum %llu",
			      (unsigned long long)args.length,
			      (unsigned long long)min);
		errno = EINVAL;
		return -1;
	}
	if (args.length > HK_RCVBUF_MAX)
		return pl_fail(s, EINVAL,
			       "SO_HOMA_RCVBUF: region larger than 4 GiB");
	nargs.start = (void *)(uintptr_t)args.start;
	nargs.length = (size_t)args.length;
	if (homa_setsockopt(s->nfd, IPPROTO_HOMA, SO_HOMA_SET_BUF, &nargs,
			    sizeof(nargs)) != 0)
		return pl_fail(s, errno, errno == EINVAL
			       ? "SO_HOMA_RCVBUF: region already set" : NULL);
	return 0;
}

/* sol_socket_known - a SOL_SOCKET option a Homa socket accepts (stored or
 * ignored, as it has no effect on the engine). */
static bool sol_socket_known(int optname)
{
	switch (optname) {
	case SO_RCVBUF: case SO_SNDBUF: case SO_RCVBUFFORCE:
	case SO_SNDBUFFORCE: case SO_REUSEADDR: case SO_REUSEPORT:
	case SO_KEEPALIVE: case SO_PRIORITY: case SO_BROADCAST:
	case SO_DONTROUTE: case SO_OOBINLINE:
		return true;
	default:
		return false;
	}
}

PL_EXPORT int setsockopt(int fd, int level, int optname, const void *optval,
			 socklen_t optlen)
{
	struct pl_sock *s = pl_get(fd);
	int v, r = 0;

	if (!s)
		return pl_next.setsockopt
			? pl_next.setsockopt(fd, level, optname, optval,
					     optlen)
			: pl_nosys();
	if (level == SOL_SOCKET && sol_socket_known(optname)) {
		if (optlen < (socklen_t)sizeof(int))
			return fail_put(s, EINVAL, NULL);
		if (!optval)
			return fail_put(s, EFAULT, NULL);
		memcpy(&v, optval, sizeof(v));
		if (optname == SO_RCVBUF || optname == SO_RCVBUFFORCE)
			atomic_store(&s->rcvbuf, v < INT_MAX / 2 ? 2 * v
							       : INT_MAX);
		else if (optname == SO_SNDBUF || optname == SO_SNDBUFFORCE)
			atomic_store(&s->sndbuf, v < INT_MAX / 2 ? 2 * v
							       : INT_MAX);
	} else if (level != IPPROTO_HOMA) {
		return fail_put(s, ENOPROTOOPT,
				"setsockopt: level must be IPPROTO_HOMA");
	} else if (optname == HK_SO_RCVBUF) {
		r = set_rcvbuf(s, optval, optlen);
	} else if (optname == HK_SO_SERVER) {
		if (optlen != sizeof(int))
			return fail_put(s, EINVAL,
					"SO_HOMA_SERVER: optlen must be 4");
		if (!optval)
			return fail_put(s, EFAULT, NULL);
		memcpy(&v, optval, sizeof(v));
		if (pl_engine_set_server(s->nfd, v != 0) != 0)
			return fail_put(s, EBADF, NULL);
		atomic_store(&s->server, v != 0);
	} else {
		return fail_put(s, ENOPROTOOPT, "setsockopt: unknown option");
	}
	pl_put(s);
	return r;
}

/* put_int - getsockopt's copy of an int: as many of its bytes as fit. */
static void put_int(void *optval, socklen_t *optlen, int v)
{
	socklen_t n = *optlen < (socklen_t)sizeof(v) ? *optlen
						     : (socklen_t)sizeof(v);

	memcpy(optval, &v, n);
	*optlen = n;
}

/* get_sol_socket - getsockopt level SOL_SOCKET.  Returns 0 or an errno. */
static int get_sol_socket(struct pl_sock *s, int optname, void *optval,
			  socklen_t *optlen)
{
	int v;

	switch (optname) {
	case SO_TYPE: v = SOCK_DGRAM; break;
	case SO_DOMAIN: v = s->family; break;
	case SO_PROTOCOL: v = IPPROTO_HOMA; break;
	case SO_ERROR: v = 0; break;
	case SO_ACCEPTCONN: v = 0; break;
	case SO_RCVBUF: v = atomic_load(&s->rcvbuf); break;
	case SO_SNDBUF: v = atomic_load(&s->sndbuf); break;
	default:
		if (!sol_socket_known(optname))
			return ENOPROTOOPT;
		v = 0;
	}
	put_int(optval, optlen, v);
	return 0;
}

PL_EXPORT int getsockopt(int fd, int level, int optname, void *optval,
			 socklen_t *optlen)
{
	struct pl_sock *s = pl_get(fd);
	struct homa_rcvbuf_args nargs;
	struct hk_rcvbuf_args args;
	socklen_t nlen = sizeof(nargs);
	int err;

	if (!s)
		return pl_next.getsockopt
			? pl_next.getsockopt(fd, level, optname, optval,
					     optlen)
			: pl_nosys();
	if (!optlen || !optval)
		return fail_put(s, EFAULT, NULL);
	if ((int)*optlen < 0)
		return fail_put(s, EINVAL, NULL);
	if (level == SOL_SOCKET) {
		err = get_sol_socket(s, optname, optval, optlen);
		if (err)
			return fail_put(s, err, "getsockopt: unknown option");
	} else if (level != IPPROTO_HOMA) {
		return fail_put(s, ENOPROTOOPT,
				"getsockopt: level must be IPPROTO_HOMA");
	} else if (optname == HK_SO_RCVBUF) {
		if (*optlen < (socklen_t)sizeof(args))
			return fail_put(s, EINVAL,
					"SO_HOMA_RCVBUF: optlen below 16");
		if (homa_getsockopt(s->nfd, IPPROTO_HOMA, HOMA_SO_RCVBUF,
				    &nargs, &nlen) != 0)
			return fail_put(s, errno, NULL);
		args.start = nargs.start;
		args.length = nargs.length;
		memcpy(optval, &args, sizeof(args));
		*optlen = sizeof(args);
	} else if (optname == HK_SO_SERVER) {
		if (*optlen < (socklen_t)sizeof(int))
			return fail_put(s, EINVAL,
					"SO_HOMA_SERVER: optlen below 4");
		put_int(optval, optlen, atomic_load(&s->server) ? 1 : 0);
	} else {
		return fail_put(s, ENOPROTOOPT, "getsockopt: unknown option");
	}
	pl_put(s);
	return 0;
}

/* ---- ioctl ---- */

/* ioc_abort - HOMAIOCABORT.  Returns 0 or -1. */
static int ioc_abort(struct pl_sock *s, void *arg)
{
	struct hk_abort_args args;
	int err;

	if (!arg)
		return pl_fail(s, EFAULT, NULL);
	memcpy(&args, arg, sizeof(args));
	if (args.pad1 || args.pad2[0] || args.pad2[1])
		return pl_fail(s, EINVAL, "HOMAIOCABORT: padding not zero");
	if (args.error > INT_MAX)
		return pl_fail(s, EINVAL, "HOMAIOCABORT: bad error value");
	if (homa_abort(s->nfd, args.id, (int)args.error) != 0) {
		err = errno;
		return pl_fail(s, err, err == EINVAL
			       ? "HOMAIOCABORT: no such client RPC" : NULL);
	}
	return 0;
}

/* ioc_info - HOMAIOCINFO: port, RPC count, free buffer bytes, last error.
 * The per-RPC array (rpc_info) is left as it is.  Returns 0 or -1. */
static int ioc_info(struct pl_sock *s, void *arg)
{
	struct pl_engine_info e;
	struct hk_info info;

	if (!arg)
		return pl_fail(s, EFAULT, NULL);
	if (pl_engine_info(s->nfd, &e) != 0)
		return pl_fail(s, EBADF, NULL);
	memcpy(&info, arg, sizeof(info));
	info.bpool_avail_bytes = e.free_bytes;
	info.port = e.port;
	info.num_rpcs = e.num_rpcs;
	pthread_mutex_lock(&s->lock);
	memcpy(info.error_msg, s->errmsg, sizeof(info.error_msg));
	pthread_mutex_unlock(&s->lock);
	info.error_msg[sizeof(info.error_msg) - 1] = '\0';
	memcpy(arg, &info, sizeof(info));
	return 0;
}

PL_EXPORT int ioctl(int fd, unsigned long request, ...)
{
	struct pl_sock *s;
	va_list ap;
	void *arg;
	int r = 0;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	s = pl_get(fd);
	if (!s)
		return pl_next.ioctl ? pl_next.ioctl(fd, request, arg)
				     : pl_nosys();
	switch (request) {
	case HK_IOC_ABORT:
		r = ioc_abort(s, arg);
		break;
	case HK_IOC_INFO:
		r = ioc_info(s, arg);
		break;
	case FIONBIO:
		if (!arg) {
			r = pl_fail(s, EFAULT, NULL);
			break;
		}
		atomic_store(&s->nonblock, *(const int *)arg != 0);
		break;
	case FIOCLEX: case FIONCLEX: case FIOASYNC:
		r = pl_next.ioctl(fd, request, arg);
		break;
	default:
		r = pl_fail(s, EINVAL, "ioctl: unknown request");
	}
	pl_put(s);
	return r;
}

/* ---- close ---- */

PL_EXPORT int close(int fd)
{
	switch (pl_kind(fd)) {
	case PL_APP:
		pl_forget(fd);
		break;
	case PL_ENGINE:
		errno = EBADF;    /* the shim's own descriptor */
		return -1;
	case PL_NONE:
		break;
	}
	return pl_next.close(fd);
}

PL_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	int lo, hi, fd, cur, r = 0;

	pl_init();
	if (!pl_next.close_range)
		return pl_nosys();
	if ((flags & CLOSE_RANGE_CLOEXEC) || first > last ||
	    first > (unsigned int)INT_MAX)
		return pl_next.close_range(first, last, flags);
	lo = (int)first;
	hi = last > (unsigned int)INT_MAX ? INT_MAX : (int)last;
	/* Forget the application descriptors in the range ... */
	for (fd = pl_scan(lo, hi, PL_APP); fd >= 0;
	     fd = fd < hi ? pl_scan(fd + 1, hi, PL_APP) : -1)
		pl_forget(fd);
	/* ... and close the range around the engine descriptors, which stay
	 * open (the shim's own). */
	cur = lo;
	for (fd = pl_scan(lo, hi, PL_ENGINE); fd >= 0;
	     fd = fd < hi ? pl_scan(fd + 1, hi, PL_ENGINE) : -1) {
		if (cur < fd &&
		    pl_next.close_range((unsigned int)cur,
					(unsigned int)fd - 1, flags) != 0)
			r = -1;
		cur = fd + 1;
	}
	if (cur <= hi &&
	    pl_next.close_range((unsigned int)cur, last, flags) != 0)
		r = -1;
	return r;
}

/* ---- dup, fcntl ---- */

/* adopt - newfd was made from an application descriptor of s (dup,
 * F_DUPFD): make it one too.  Returns newfd, or -1 (newfd closed). */
static int adopt(struct pl_sock *s, int newfd)
{
	int err;

	if (newfd < 0)
		return newfd;
	err = pl_add_app(newfd, s);
	if (err) {
		pl_next.close(newfd);
		errno = err;
		return -1;
	}
	return newfd;
}

PL_EXPORT int dup(int fd)
{
	struct pl_sock *s = pl_get(fd);
	int r;

	if (!s)
		return pl_next.dup(fd);
	r = adopt(s, pl_next.dup(fd));
	pl_put(s);
	return r;
}

/*
 * dup_onto - dup2 (is_dup3 false) or dup3 of old onto new, keeping the
 * table right: new stops being what it was (the last application
 * descriptor of a socket closes it) and becomes what old is.  The engine
 * descriptors are the shim's: EBUSY.
 */
static int dup_onto(int old, int new, int flags, bool is_dup3)
{
	enum pl_kind ko = pl_kind(old), kn = pl_kind(new);
	struct pl_sock *s;
	int r;

	if (old == new || (ko != PL_APP && kn == PL_NONE))
		return is_dup3 ? pl_next.dup3(old, new, flags)
			       : pl_next.dup2(old, new);
	if (kn == PL_ENGINE) {
		errno = EBUSY;
		return -1;
	}
	s = ko == PL_APP ? pl_get(old) : NULL;
	r = is_dup3 ? pl_next.dup3(old, new, flags) : pl_next.dup2(old, new);
	if (r < 0) {
		if (s)
			pl_put(s);
		return r;
	}
	if (kn == PL_APP)
		pl_forget(new);
	if (s) {
		r = adopt(s, new);
		pl_put(s);
	}
	return r;
}

PL_EXPORT int dup2(int old, int new)
{
	return dup_onto(old, new, 0, false);
}

PL_EXPORT int dup3(int old, int new, int flags)
{
	return dup_onto(old, new, flags, true);
}

/* do_fcntl - fcntl through next_fcntl (fcntl or fcntl64). */
static int do_fcntl(int (*next_fcntl)(int, int, ...), int fd, int cmd,
		    void *arg)
{
	struct pl_sock *s = pl_get(fd);
	int r;

	if (!s)
		return next_fcntl(fd, cmd, arg);
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		r = adopt(s, next_fcntl(fd, cmd, arg));
		break;
	case F_GETFL:
		r = next_fcntl(fd, cmd);
		if (r >= 0) {
			r &= ~O_NONBLOCK;
			if (atomic_load(&s->nonblock))
				r |= O_NONBLOCK;
		}
		break;
	case F_SETFL: {
		int fl = (int)(intptr_t)arg;

		atomic_store(&s->nonblock, (fl & O_NONBLOCK) != 0);
		r = next_fcntl(fd, cmd, fl | O_NONBLOCK);
		break;
	}
	default:
		r = next_fcntl(fd, cmd, arg);
	}
	pl_put(s);
	return r;
}

PL_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	pl_init();
	return do_fcntl(pl_next.fcntl, fd, cmd, arg);
}

PL_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	pl_init();
	return do_fcntl(pl_next.fcntl64, fd, cmd, arg);
}
