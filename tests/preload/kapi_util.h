/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kapi_util.h - small helpers shared by the kapi_*.c programs (shim tests
 * written against the kernel Homa API, homa_kernel_uapi.h): checks that
 * print what failed and exit 1, opening a Homa socket with its buffer
 * region, loopback addresses, and one request or response on the wire.
 * Everything is static inline: each program is one file plus headers.
 */
#ifndef KAPI_UTIL_H
#define KAPI_UTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "homa_kernel_uapi.h"

/* CHECK - cond must hold, else print the place and the message, exit 1. */
#define CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			kapi_die(__FILE__, __LINE__, #cond, __VA_ARGS__); \
	} while (0)

/* EXPECT_ERR - the call returned -1 with errno err. */
#define EXPECT_ERR(call, err, what)					\
	do {								\
		errno = 0;						\
		long r_ = (long)(call);					\
		int e_ = errno;						\
		CHECK(r_ == -1 && e_ == (err),				\
		      "%s: got %ld, errno %d (%s); want -1, %s",	\
		      what, r_, e_, strerror(e_), #err);		\
	} while (0)

static inline void kapi_die(const char *file, int line, const char *cond,
			    const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s:%d: %s: ", file, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* kapi_port - argv[i] as a port (1..65535), or def when absent. */
static inline int kapi_port(int argc, char **argv, int i, int def)
{
	long v;
	char *end;

	if (argc <= i)
		return def;
	v = strtol(argv[i], &end, 10);
	CHECK(*argv[i] && !*end && v > 0 && v < 65536, "bad port '%s'",
	      argv[i]);
	return (int)v;
}

/*
 * kapi_addr - the server's address of family with port: the loopback
 * address, or the address in the environment variable KAPI_ADDR4
 * (AF_INET) or KAPI_ADDR6 (AF_INET6) when set, for a server on another
 * host (scripts/kpeer/ sets them: a server binds that address, a client
 * sends to it).  Exits with a message when the variable holds no address.
 */
static inline socklen_t kapi_addr(int family, int port,
				  struct sockaddr_storage *out)
{
	const char *env = getenv(family == AF_INET6 ? "KAPI_ADDR6"
						    : "KAPI_ADDR4");

	memset(out, 0, sizeof(*out));
	if (family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)out;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		a->sin6_addr = in6addr_loopback;
		CHECK(!env || inet_pton(AF_INET6, env, &a->sin6_addr) == 1,
		      "KAPI_ADDR6 '%s' is not an IPv6 address", env);
		return sizeof(*a);
	}
	struct sockaddr_in *a = (struct sockaddr_in *)out;

	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(!env || inet_pton(AF_INET, env, &a->sin_addr) == 1,
	      "KAPI_ADDR4 '%s' is not an IPv4 address", env);
	return sizeof(*a);
}

/* kapi_region_bytes - a buffer region comfortably above the kernel's
 * minimum (cores x 64 KiB + 2,000,000 bytes), in whole bpages. */
static inline size_t kapi_region_bytes(void)
{
	long cores = sysconf(_SC_NPROCESSORS_CONF);
	size_t min = (size_t)(cores < 1 ? 1 : cores) * 65536 + 2000000;
	size_t want = min + (size_t)64 * 1024 * 1024;

	return (want + HOMA_BPAGE_SIZE - 1) & ~(size_t)(HOMA_BPAGE_SIZE - 1);
}

/* A Homa socket with its buffer region. */
struct kapi_sock {
	int fd;
	int family;
	char *region;
	size_t region_len;
};

/* kapi_set_region - map a region and give it to fd (SO_HOMA_RCVBUF). */
static inline void kapi_set_region(struct kapi_sock *k)
{
	struct homa_rcvbuf_args rb;

	k->region_len = kapi_region_bytes();
	k->region = mmap(NULL, k->region_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(k->region != MAP_FAILED, "mmap: %s", strerror(errno));
	rb.start = (uintptr_t)k->region;
	rb.length = k->region_len;
	CHECK(setsockopt(k->fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb,
			 sizeof(rb)) == 0,
	      "setsockopt SO_HOMA_RCVBUF: %s", strerror(errno));
}

/* kapi_open - a Homa socket of family with a region, bound to port when
 * port != 0 (it then serves requests).  type_flags: SOCK_NONBLOCK,
 * SOCK_CLOEXEC or 0. */
static inline struct kapi_sock kapi_open(int family, int port, int type_flags)
{
	struct kapi_sock k = { .family = family };

	k.fd = socket(family, SOCK_DGRAM | type_flags, IPPROTO_HOMA);
	CHECK(k.fd >= 0, "socket(IPPROTO_HOMA): %s (is "
	      "LD_PRELOAD=libhoma_preload.so set?)", strerror(errno));
	kapi_set_region(&k);
	if (port) {
		struct sockaddr_storage a;
		socklen_t len = kapi_addr(family, port, &a);

		CHECK(bind(k.fd, (struct sockaddr *)&a, len) == 0,
		      "bind port %d: %s", port, strerror(errno));
	}
	return k;
}

/* kapi_close - close the socket and unmap its region. */
static inline void kapi_close(struct kapi_sock *k)
{
	CHECK(close(k->fd) == 0, "close: %s", strerror(errno));
	munmap(k->region, k->region_len);
	k->fd = -1;
}

/*
 * kapi_send - send iov[0..n) to dest: a request when id is 0 (returns its
 * new id), else the response to request id.  Returns the id, or 0 with
 * errno set when sendmsg failed.
 */
static inline uint64_t kapi_sendv(int fd, const struct sockaddr *dest,
				  socklen_t dlen, const struct iovec *iov,
				  int n, uint64_t id, uint64_t cookie,
				  uint32_t flags)
{
	struct homa_sendmsg_args args = { .id = id,
					  .completion_cookie = cookie,
					  .flags = flags };
	struct msghdr msg;

	memset(&msg, 0, sizeof(msg));
	msg.msg_name = (void *)dest;
	msg.msg_namelen = dlen;
	msg.msg_iov = (struct iovec *)iov;
	msg.msg_iovlen = (size_t)n;
	msg.msg_control = &args;
	msg.msg_controllen = 0;
	if (sendmsg(fd, &msg, 0) != 0)
		return 0;
	return id ? id : args.id;
}

/* kapi_send - kapi_sendv of one buffer. */
static inline uint64_t kapi_send(int fd, const struct sockaddr *dest,
				 socklen_t dlen, const void *buf, size_t len,
				 uint64_t id, uint64_t cookie, uint32_t flags)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };

	return kapi_sendv(fd, dest, dlen, &v, 1, id, cookie, flags);
}

/* kapi_against_kernel - true when KAPI_KERNEL=1: the program runs against
 * the kernel module (scripts/kpeer/interop.sh sets it there), not
 * libhoma. */
static inline bool kapi_against_kernel(void)
{
	const char *k = getenv("KAPI_KERNEL");

	return k && strcmp(k, "1") == 0;
}

/*
 * kapi_recv - recvmsg on fd into *args (its id selects: 0 any shared RPC,
 * else that private RPC; its num_bpages/bpage_offsets are handed back and
 * then replaced by the new message's).  The peer goes to *peer when not
 * NULL.  Returns recvmsg's result (errno set on -1).
 */
static inline ssize_t kapi_recv(int fd, struct homa_recvmsg_args *args,
				int flags, struct sockaddr_storage *peer,
				socklen_t *peer_len)
{
	struct msghdr msg;
	ssize_t r;

	memset(&msg, 0, sizeof(msg));
	msg.msg_name = peer;
	msg.msg_namelen = peer ? sizeof(*peer) : 0;
	msg.msg_control = args;
	msg.msg_controllen = sizeof(*args);
	r = recvmsg(fd, &msg, flags);
	if (peer_len)
		*peer_len = msg.msg_namelen;
	return r;
}

/*
 * kapi_msg_iov - the pieces of a received message of len bytes in region
 * (as args->bpage_offsets say) as an iovec: iov must have HOMA_MAX_BPAGES
 * entries.  Returns the number of pieces.
 */
static inline int kapi_msg_iov(const char *region,
			       const struct homa_recvmsg_args *args,
			       size_t len, struct iovec *iov)
{
	size_t left = len;
	int n = 0;

	for (uint32_t i = 0; i < args->num_bpages && left > 0; i++) {
		size_t piece = left < HOMA_BPAGE_SIZE ? left : HOMA_BPAGE_SIZE;

		iov[n].iov_base = (void *)(region + args->bpage_offsets[i]);
		iov[n].iov_len = piece;
		left -= piece;
		n++;
	}
	return n;
}

/* kapi_fill - bytes of a message that tell its seed and position apart. */
static inline void kapi_fill(char *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (char)(x >> 24);
	}
}

/* kapi_info - HOMAIOCINFO of fd. */
static inline struct homa_info kapi_info(int fd)
{
	struct homa_info info;

	memset(&info, 0, sizeof(info));
	CHECK(ioctl(fd, HOMAIOCINFO, &info) == 0, "HOMAIOCINFO: %s",
	      strerror(errno));
	return info;
}

#endif /* KAPI_UTIL_H */
