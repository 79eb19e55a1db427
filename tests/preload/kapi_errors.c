/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kapi_errors - the errors of the Linux kernel Homa API, with nothing but
 * libc (on libhoma: under LD_PRELOAD=libhoma_preload.so), and ordinary
 * descriptors next to Homa ones left alone.
 *
 *   usage: kapi_errors PORT
 *
 * Checked, each with the errno the kernel module gives:
 *   socket     SOCK_STREAM or AF_UNIX with IPPROTO_HOMA: EPROTONOSUPPORT
 *   setsockopt another level: ENOPROTOOPT; an unknown option: ENOPROTOOPT;
 *              SO_HOMA_RCVBUF with a wrong length, an unaligned or too
 *              small region, or a second time: EINVAL; SO_HOMA_SERVER
 *              with a wrong length: EINVAL
 *   getsockopt an unknown option: ENOPROTOOPT; SO_HOMA_RCVBUF returns the
 *              region; SOL_SOCKET SO_TYPE, SO_DOMAIN, SO_PROTOCOL
 *   bind       port 32768 and above: EINVAL; a port in use: EADDRINUSE;
 *              an IPv6 address on an IPv4 socket: EAFNOSUPPORT;
 *              getsockname then reports the port
 *   sendmsg    msg_controllen not 0, unknown flags, reserved bits, no
 *              address, a short address, 0 or 1,000,001 bytes, a response
 *              with a cookie: EINVAL; another family: EAFNOSUPPORT
 *   recvmsg    before SO_HOMA_RCVBUF, msg_controllen not 88, more than 16
 *              bpages, a bpage not owned, an unknown id: EINVAL; nothing
 *              waiting with MSG_DONTWAIT: EAGAIN
 *   ioctl      an unknown request: EINVAL
 *   read, write, send, recv on a Homa socket: EINVAL
 * After some of these, HOMAIOCINFO's error_msg must name the cause (the
 * texts checked are libhoma's: "buffer region not set", "message too
 * long: N bytes > HOMA_MAX_MESSAGE_LENGTH", "no such client RPC", ...).
 * The texts are each implementation's own: with KAPI_KERNEL=1 (run
 * against the kernel module) error_msg must only say something, and the
 * program prints what it says; nor is num_bpages checked after a recvmsg
 * that failed its argument checks (libhoma zeroes it, as it took no
 * bpages back; the module leaves the caller's value).
 * A response to an RPC that does not exist (odd id, no cookie) is not an
 * error: sendmsg returns 0 and sends nothing, as in the kernel.
 * and a file, a pipe and a UDP socket opened alongside behave as usual.
 * Prints "kapi_errors: PASS <n> checks" and exits 0, else "FAIL ..." and
 * exits 1.
 */
#include <fcntl.h>
#include <sys/un.h>

#include "kapi_util.h"

static int checks;

#define ERR(call, err, what) do { EXPECT_ERR(call, err, what); checks++; } \
	while (0)

/* ERRMSG - HOMAIOCINFO on fd says text (a part of error_msg). */
#define ERRMSG(fd, text, what) do { errmsg_has(fd, text, what); checks++; } \
	while (0)

/* errmsg_has - HOMAIOCINFO's error_msg on fd contains text; against the
 * kernel module (kapi_against_kernel), says anything (printed). */
static void errmsg_has(int fd, const char *text, const char *what)
{
	struct homa_info info;

	memset(&info, 0, sizeof(info));
	CHECK(ioctl(fd, HOMAIOCINFO, &info) == 0, "HOMAIOCINFO: %s",
	      strerror(errno));
	if (kapi_against_kernel()) {
		CHECK(info.error_msg[0] != '\0',
		      "%s: error_msg is empty", what);
		printf("kapi_errors: %s: error_msg \"%.*s\"\n", what,
		       (int)sizeof(info.error_msg), info.error_msg);
		return;
	}
	CHECK(strstr(info.error_msg, text) != NULL,
	      "%s: error_msg \"%s\", want \"%s\" in it", what,
	      info.error_msg, text);
}

/* send_k - sendmsg with explicit arguments, returns its result. */
static ssize_t send_k(int fd, const void *name, socklen_t namelen,
		      struct homa_sendmsg_args *args, size_t controllen,
		      const void *buf, size_t len)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr m;

	memset(&m, 0, sizeof(m));
	m.msg_name = (void *)name;
	m.msg_namelen = namelen;
	m.msg_iov = &v;
	m.msg_iovlen = 1;
	m.msg_control = args;
	m.msg_controllen = controllen;
	return sendmsg(fd, &m, 0);
}

/* recv_k - recvmsg with an explicit msg_controllen. */
static ssize_t recv_k(int fd, struct homa_recvmsg_args *args, size_t clen,
		      int flags)
{
	struct msghdr m;

	memset(&m, 0, sizeof(m));
	m.msg_control = args;
	m.msg_controllen = clen;
	return recvmsg(fd, &m, flags);
}

static void socket_errors(void)
{
	ERR(socket(AF_INET, SOCK_STREAM, IPPROTO_HOMA), EPROTONOSUPPORT,
	    "socket SOCK_STREAM/IPPROTO_HOMA");
	ERR(socket(AF_UNIX, SOCK_DGRAM, IPPROTO_HOMA), EPROTONOSUPPORT,
	    "socket AF_UNIX/IPPROTO_HOMA");
}

static void option_errors(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, IPPROTO_HOMA), v = 1, t = 0;
	size_t len = kapi_region_bytes();
	char *region = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			    0);
	struct homa_rcvbuf_args rb = { .start = (uintptr_t)region,
				       .length = len }, got;
	struct homa_recvmsg_args ra;
	socklen_t olen;

	CHECK(fd >= 0 && region != MAP_FAILED, "setup: %s", strerror(errno));
	memset(&ra, 0, sizeof(ra));
	ERR(recv_k(fd, &ra, sizeof(ra), MSG_DONTWAIT), EINVAL,
	    "recvmsg before SO_HOMA_RCVBUF");
	ERRMSG(fd, "buffer region not set", "recvmsg before SO_HOMA_RCVBUF");
	ERR(setsockopt(fd, IPPROTO_IP, IP_TOS, &v, sizeof(v)), ENOPROTOOPT,
	    "setsockopt level IPPROTO_IP");
	ERR(setsockopt(fd, IPPROTO_HOMA, 99, &v, sizeof(v)), ENOPROTOOPT,
	    "setsockopt unknown option");
	ERR(setsockopt(fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb, 8), EINVAL,
	    "SO_HOMA_RCVBUF with optlen 8");
	rb.start += 100;
	ERR(setsockopt(fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb, sizeof(rb)),
	    EINVAL, "SO_HOMA_RCVBUF unaligned");
	rb.start -= 100;
	rb.length = 2 * HOMA_BPAGE_SIZE;
	ERR(setsockopt(fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb, sizeof(rb)),
	    EINVAL, "SO_HOMA_RCVBUF of two bpages (below the minimum)");
	rb.length = len;
	CHECK(setsockopt(fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb,
			 sizeof(rb)) == 0, "SO_HOMA_RCVBUF: %s",
	      strerror(errno));
	ERR(setsockopt(fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb, sizeof(rb)),
	    EINVAL, "SO_HOMA_RCVBUF a second time");
	ERR(setsockopt(fd, IPPROTO_HOMA, SO_HOMA_SERVER, &v, 2), EINVAL,
	    "SO_HOMA_SERVER with optlen 2");
	olen = sizeof(v);
	ERR(getsockopt(fd, IPPROTO_HOMA, 99, &v, &olen), ENOPROTOOPT,
	    "getsockopt unknown option");
	olen = sizeof(got);
	CHECK(getsockopt(fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &got, &olen) == 0 &&
	      olen == sizeof(got) && got.start == rb.start &&
	      got.length > 0 && got.length <= len,
	      "getsockopt SO_HOMA_RCVBUF: %s", strerror(errno));
	olen = sizeof(t);
	CHECK(getsockopt(fd, SOL_SOCKET, SO_TYPE, &t, &olen) == 0 &&
	      t == SOCK_DGRAM, "SO_TYPE %d: %s", t, strerror(errno));
	CHECK(getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &t, &olen) == 0 &&
	      t == IPPROTO_HOMA, "SO_PROTOCOL %d", t);
	CHECK(getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &t, &olen) == 0 &&
	      t == AF_INET, "SO_DOMAIN %d", t);
	checks += 5;
	ERR(ioctl(fd, 0xC0046899ul, &v), EINVAL, "an unknown ioctl");
	CHECK(close(fd) == 0, "close: %s", strerror(errno));
	munmap(region, len);
}

static void bind_errors(int port)
{
	struct kapi_sock a = kapi_open(AF_INET, port, 0);
	struct kapi_sock b = kapi_open(AF_INET, 0, 0);
	struct sockaddr_storage addr;
	struct sockaddr_in got;
	socklen_t len = kapi_addr(AF_INET, port, &addr), glen = sizeof(got);

	ERR(bind(b.fd, (struct sockaddr *)&addr, len), EADDRINUSE,
	    "bind to a port in use");
	len = kapi_addr(AF_INET, 40000, &addr);
	ERR(bind(b.fd, (struct sockaddr *)&addr, len), EINVAL,
	    "bind to port 40000");
	len = kapi_addr(AF_INET6, port + 1, &addr);
	ERR(bind(b.fd, (struct sockaddr *)&addr, len), EAFNOSUPPORT,
	    "bind an IPv6 address to an IPv4 socket");
	CHECK(getsockname(a.fd, (struct sockaddr *)&got, &glen) == 0 &&
	      glen == sizeof(got) && got.sin_family == AF_INET &&
	      ntohs(got.sin_port) == port, "getsockname: %s",
	      strerror(errno));
	checks++;
	kapi_close(&b);
	kapi_close(&a);
}

static void send_recv_errors(int port)
{
	struct kapi_sock k = kapi_open(AF_INET, 0, 0);
	struct sockaddr_storage to, to6;
	socklen_t tlen = kapi_addr(AF_INET, port, &to);
	socklen_t tlen6 = kapi_addr(AF_INET6, port, &to6);
	struct homa_sendmsg_args sa;
	struct homa_recvmsg_args ra;
	static char big[HOMA_MAX_MESSAGE_LENGTH + 1];
	char buf[16];

	memset(&sa, 0, sizeof(sa));
	ERR(send_k(k.fd, &to, tlen, &sa, sizeof(sa), "x", 1), EINVAL,
	    "sendmsg with msg_controllen 24");
	sa.flags = 2;
	ERR(send_k(k.fd, &to, tlen, &sa, 0, "x", 1), EINVAL,
	    "sendmsg with an unknown flag");
	sa.flags = 0;
	sa.reserved = 1;
	ERR(send_k(k.fd, &to, tlen, &sa, 0, "x", 1), EINVAL,
	    "sendmsg with reserved bits");
	sa.reserved = 0;
	ERR(send_k(k.fd, NULL, 0, &sa, 0, "x", 1), EINVAL,
	    "sendmsg without an address");
	ERR(send_k(k.fd, &to, 8, &sa, 0, "x", 1), EINVAL,
	    "sendmsg with an 8-byte address");
	ERR(send_k(k.fd, &to6, tlen6, &sa, 0, "x", 1), EAFNOSUPPORT,
	    "sendmsg to an IPv6 address from an IPv4 socket");
	ERR(send_k(k.fd, &to, tlen, &sa, 0, "x", 0), EINVAL,
	    "sendmsg of 0 bytes");
	ERR(send_k(k.fd, &to, tlen, &sa, 0, big, sizeof(big)), EINVAL,
	    "sendmsg of 1,000,001 bytes");
	ERRMSG(k.fd, "message too long: 1000001 bytes > "
	       "HOMA_MAX_MESSAGE_LENGTH", "sendmsg of 1,000,001 bytes");
	sa.id = 3;
	CHECK(send_k(k.fd, &to, tlen, &sa, 0, "x", 1) == 0,
	      "a response to an RPC that does not exist: %s",
	      strerror(errno));
	sa.id = 0;
	checks++;
	sa.id = 3;
	sa.completion_cookie = 7;
	ERR(send_k(k.fd, &to, tlen, &sa, 0, "x", 1), EINVAL,
	    "a response with a completion cookie");

	memset(&ra, 0, sizeof(ra));
	ERR(recv_k(k.fd, &ra, 80, MSG_DONTWAIT), EINVAL,
	    "recvmsg with msg_controllen 80");
	ra.num_bpages = HOMA_MAX_BPAGES + 1;
	ERR(recv_k(k.fd, &ra, sizeof(ra), MSG_DONTWAIT), EINVAL,
	    "recvmsg handing back 17 bpages");
	ERRMSG(k.fd, "num_bpages above 16", "recvmsg handing back 17 bpages");
	CHECK(kapi_against_kernel() || ra.num_bpages == 0,
	      "num_bpages %u after a failed recvmsg", ra.num_bpages);
	ra.num_bpages = 1;
	ra.bpage_offsets[0] = 5 * HOMA_BPAGE_SIZE;
	ERR(recv_k(k.fd, &ra, sizeof(ra), MSG_DONTWAIT), EINVAL,
	    "recvmsg handing back a bpage it does not own");
	ERRMSG(k.fd, "bpage handed back is not the application's",
	       "recvmsg handing back a bpage it does not own");
	ra.num_bpages = 0;
	ra.id = 123456;
	ERR(recv_k(k.fd, &ra, sizeof(ra), MSG_DONTWAIT), EINVAL,
	    "recvmsg of an unknown RPC id");
	ERRMSG(k.fd, "no such client RPC: 123456",
	       "recvmsg of an unknown RPC id");
	ra.id = 0;
	ERR(recv_k(k.fd, &ra, sizeof(ra), MSG_DONTWAIT), EAGAIN,
	    "recvmsg with nothing waiting");

	ERR(read(k.fd, buf, sizeof(buf)), EINVAL, "read on a Homa socket");
	ERR(write(k.fd, "x", 1), EINVAL, "write on a Homa socket");
	ERR(send(k.fd, "x", 1, 0), EINVAL, "send on a Homa socket");
	ERR(recv(k.fd, buf, sizeof(buf), MSG_DONTWAIT), EINVAL,
	    "recv on a Homa socket");
	kapi_close(&k);
}

/* ordinary - a file, a pipe and a UDP socket work as ever. */
static void ordinary(void)
{
	char path[] = "/tmp/kapi_errors.XXXXXX", buf[32];
	int f = mkstemp(path), p[2], u, v = 65536, t = 0;
	socklen_t olen = sizeof(t);
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);

	CHECK(f >= 0 && pipe(p) == 0, "file/pipe: %s", strerror(errno));
	CHECK(write(f, "file bytes", 11) == 11 && lseek(f, 0, SEEK_SET) == 0 &&
	      read(f, buf, sizeof(buf)) == 11 && !strcmp(buf, "file bytes"),
	      "file I/O");
	CHECK(write(p[1], "pipe", 5) == 5 && read(p[0], buf, 5) == 5 &&
	      !strcmp(buf, "pipe"), "pipe I/O");
	u = socket(AF_INET, SOCK_DGRAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(u >= 0 && setsockopt(u, SOL_SOCKET, SO_RCVBUF, &v,
				   sizeof(v)) == 0 &&
	      getsockopt(u, SOL_SOCKET, SO_PROTOCOL, &t, &olen) == 0 &&
	      t == IPPROTO_UDP, "udp socket options: %s", strerror(errno));
	CHECK(bind(u, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	      getsockname(u, (struct sockaddr *)&a, &alen) == 0 &&
	      sendto(u, "udp", 4, 0, (struct sockaddr *)&a, alen) == 4 &&
	      recv(u, buf, sizeof(buf), 0) == 4 && !strcmp(buf, "udp"),
	      "udp I/O: %s", strerror(errno));
	ERR(setsockopt(u, IPPROTO_HOMA, SO_HOMA_RCVBUF, &v, sizeof(v)),
	    ENOPROTOOPT, "a Homa option on a UDP socket");
	checks += 4;
	close(u);
	close(p[0]);
	close(p[1]);
	close(f);
	unlink(path);
}

int main(int argc, char **argv)
{
	int port = kapi_port(argc, argv, 1, 4400);

	socket_errors();
	option_errors();
	bind_errors(port);
	send_recv_errors(port);
	ordinary();
	printf("kapi_errors: PASS %d checks\n", checks);
	return 0;
}
