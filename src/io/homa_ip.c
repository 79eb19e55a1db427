/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_ip - the raw IP datapath: Homa packets as the payload of IP protocol
 * 146 (IPv4 and IPv6), byte for byte as the kernel module sends them, so
 * that user-space and kernel Homa peers talk to each other.
 *
 * A raw socket of protocol 146 has no ports: the kernel hands every protocol
 * 146 packet that arrives at this host to every such socket.  Two things
 * turn it into a per-port socket:
 *
 *   - Port ownership.  Nothing in the kernel arbitrates Homa ports between
 *     the processes of one host, so each datapath also binds an ordinary
 *     UDP socket of its family to the same port number and keeps it open
 *     for its whole life.  The kernel's UDP port table then does the
 *     arbitration: a second datapath (of either transport: the UDP datapath
 *     binds the same UDP port) asking for a port in use gets EADDRINUSE, and
 *     the port is freed automatically when the owner closes or dies.  The
 *     reservation socket never reads: a socket filter that accepts nothing
 *     makes the kernel discard any datagram sent to it.
 *
 *   - Delivery.  A classic BPF program attached to the raw socket
 *     (SO_ATTACH_FILTER) keeps only packets that hold at least a common
 *     header (28 bytes) and whose Homa destination port (bytes 2..3 of
 *     the Homa header) is this datapath's port, or that are RESENDs (see
 *     below); everything else is dropped in the kernel, before any copy to
 *     user space.  IPv4 raw sockets see the
 *     IP header (the filter skips it with the IHL); IPv6 raw sockets see
 *     the packet from the Homa header on.  On loopback a sender's own
 *     packets come back in as received packets of the host: they are
 *     addressed to the peer's port, so the filter drops them too.
 *
 * Sending: IP_HDRINCL stays off, so the kernel builds the IP header; the
 * priority goes in an IP_TOS / IPV6_TCLASS control message (priority << 5).
 * The Homa checksum field is whatever the core wrote (0, docs/protocol.md section 1).
 * Receiving: IPv4 packets arrive behind their IP header, which is stripped
 * (its length from the IHL, its TOS byte gives the priority); IPv6 packets
 * carry the traffic class in an IPV6_TCLASS control message.  The source
 * address's port, absent from IP, is set from the Homa header's sport so that
 * the core sees the same peer address as over UDP.
 *
 * Ports where nobody listens.  The kernel module answers a packet for a
 * Homa port that no socket holds with ICMP port unreachable, and its
 * sender fails the RPCs to that port with ENOTCONN.  Here no kernel code
 * knows the Homa ports, so the datapaths of the host answer for it: a
 * RESEND (what a client whose server stays silent sends after resend_ticks)
 * for another port than this datapath's also passes the filter, and when
 * that port is free in the UDP port table (nobody holds it: a bind of it
 * succeeds), the datapath sends the RESEND's sender an ICMP (ICMPv6) port
 * unreachable quoting the packet, from a raw ICMP socket, as the kernel
 * would.  Such RESENDs are rare (loss, silent servers), so the cost is
 * small; every datapath of the host answers (duplicates are harmless: the
 * first fails the RPCs).  The errors that come back are read from the
 * raw socket's error queue (homa_dp_errors).
 *
 * Creating a raw socket needs CAP_NET_RAW: without it homa_ip_open fails
 * with -EPERM and says why on stderr (once per process).
 */
#include <errno.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "homa_addr.h"
#include "homa_datapath.h"
#include "homa_dpshared.h"
#include "homa_ip.h"
#include "homa_trace.h"

/* Socket buffer size asked for in each direction. */
#define IPDP_SOCKBUF_BYTES (4 * 1024 * 1024)

/* Space for the one int control message of a packet sent. */
#define IPDP_CMSG_SPACE CMSG_SPACE(sizeof(int))
/* Space for the control messages of a packet received: the IPv6 traffic
 * class and the destination address (IPV6_PKTINFO). */
#define IPDP_RX_CMSG_SPACE (CMSG_SPACE(sizeof(int)) + \
			    CMSG_SPACE(sizeof(struct in6_pktinfo)))

/* Bytes of a Homa packet quoted in an ICMP error, after its IP header. */
#define IPDP_QUOTE_BYTES 64

/* The IPv6 header's length, and the ICMP error header's. */
#define IPDP_IP6_HDR 40
#define IPDP_ICMP_HDR 8

/* Shortest packet the filter lets through: the Homa common header. */
#define IPDP_MIN_HOMA 28

/* Packets read and thrown away at most when a new socket is emptied. */
#define IPDP_DRAIN_MAX 4096

/* A raw IP datapath: the shared state, then the port's reservation. */
struct ipdp {
	struct homa_dp dp;  /* first: a struct homa_dp * points here */
	int resv_fd;        /* UDP socket bound to the port, never read */
	int icmp_fd;        /* raw ICMP(v6) socket answering RESENDs to
			     * ports nobody holds (opened at the first;
			     * -1 until then), never read */
};

static const struct homa_dp_ops ipdp_ops;

/* Set once the missing-capability message has been printed. */
static atomic_bool ipdp_warned;

/* See homa_ip.h. */
void homa_ip_forget_warning(void)
{
	atomic_store(&ipdp_warned, false);
}

/*
 * ipdp_warn_no_cap - say once per process on stderr why a raw socket could
 * not be created (errno err: EPERM or EACCES).
 */
static void ipdp_warn_no_cap(int err)
{
	if (atomic_exchange(&ipdp_warned, true))
		return;
	fprintf(stderr,
		"libhoma: HOMA_TRANSPORT=ip needs CAP_NET_RAW (run as root or "
		"grant the capability) to open a raw IP socket for protocol "
		"%d: %s; HOMA_TRANSPORT=udp needs no privileges\n",
		IPDP_PROTO, strerror(err));
}

/*
 * ipdp_attach - attach the classic BPF program prog[0..len) to fd.
 * Returns 0 or a negative errno.
 */
static int ipdp_attach(int fd, struct sock_filter *prog, unsigned short len)
{
	struct sock_fprog fp = { .len = len, .filter = prog };

	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)) != 0)
		return -errno;
	return 0;
}

/*
 * ipdp_new_raw - a nonblocking, close-on-exec raw socket of family for
 * protocol 146, with large buffers, the kernel building the IPv4 header, the
 * reception of the IPv6 traffic class on, and ICMP errors queued (the
 * kernel queues those of every protocol 146 packet this host sent on every
 * such socket: homa_dp_errors keeps those quoting our port).
 * Returns the descriptor or a negative errno from socket(2); on -EPERM or
 * -EACCES the reason has been printed.
 */
static int ipdp_new_raw(int family)
{
	int on = 1, off = 0;
	int fd = socket(family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
			IPDP_PROTO);

	if (fd < 0) {
		int err = errno;

		if (err == EPERM || err == EACCES)
			ipdp_warn_no_cap(err);
		return -err;
	}
	homa_dp_set_bufs(fd, IPDP_SOCKBUF_BYTES);
	if (family == AF_INET6) {
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &on,
				 sizeof(on));
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on,
				 sizeof(on));
	} else {
		(void)setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &off,
				 sizeof(off));
	}
	homa_dp_recverr_on(fd, family);
	return fd;
}

/*
 * ipdp_reserve - bind a UDP socket of family to port on the wildcard
 * address (IPv6: V6ONLY, the same port space as the UDP datapath's), with
 * a filter that discards every datagram sent to it.
 * Returns the descriptor, or a negative errno (-EADDRINUSE when the port is
 * taken).
 */
static int ipdp_reserve(int family, uint16_t port)
{
	struct sock_filter drop_all[] = {
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	int on = 1, small = 1, err;
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on,
				 sizeof(on));
	/* Nothing is ever read from it: keep its buffer at the minimum. */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	err = ipdp_attach(fd, drop_all, 1);
	if (err == 0)
		err = homa_dp_bind_port(fd, family, port);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* ipdp_try_reserve - a homa_dp_port_try_fn reserving port for the family
 * ctx points to (ipdp_reserve): the descriptor, or a negative errno. */
static int ipdp_try_reserve(void *ctx, uint16_t port)
{
	return ipdp_reserve(*(const int *)ctx, port);
}

/*
 * ipdp_filter_port - attach to raw socket fd (of family) the program that
 * accepts exactly the packets holding a Homa common header whose dport is
 * port, or whose type is RESEND (for another port: answered when nobody
 * holds it).  Returns 0 or a negative errno.
 *
 * IPv4 (the filter sees the IP header at offset 0):
 *     ldxb 4*([0]&0xf)         X = IP header length
 *     ld   #len                A = IP packet length
 *     sub  x                   A = Homa packet length
 *     jge  #28, next, drop
 *     ldh  [x+2]               A = Homa dport
 *     jeq  #port, accept, next
 *     ldb  [x+11]              A = Homa type
 *     jeq  #RESEND, accept, drop
 * IPv6 (the filter sees the Homa header at offset 0): the same with X = 0.
 * A load beyond the packet ends the program with 0 (drop).
 */
static int ipdp_filter_port(int fd, int family, uint16_t port)
{
	struct sock_filter prog[] = {
		family == AF_INET6
			? (struct sock_filter)BPF_STMT(BPF_LDX | BPF_IMM, 0)
			: (struct sock_filter)BPF_STMT(BPF_LDX | BPF_B |
						       BPF_MSH, 0),
		BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		BPF_STMT(BPF_ALU | BPF_SUB | BPF_X, 0),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, IPDP_MIN_HOMA, 0, 5),
		BPF_STMT(BPF_LD | BPF_H | BPF_IND, 2),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, port, 2, 0),
		BPF_STMT(BPF_LD | BPF_B | BPF_IND, IPDP_TYPE_OFFSET),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPDP_TYPE_RESEND, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0xFFFFFFFFu),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};

	return ipdp_attach(fd, prog, sizeof(prog) / sizeof(prog[0]));
}

/*
 * ipdp_icmp_errno - whether err, failing a receive call, only reports an
 * ICMP error that arrived for an earlier packet (raw sockets of the
 * protocol all get those, unfiltered), or an interruption.
 */
static bool ipdp_icmp_errno(int err)
{
	return err == EINTR || homa_dp_icmp_errno(err);
}

/*
 * ipdp_drain - read and discard what fd queued before its filter was
 * attached (at most IPDP_DRAIN_MAX packets).
 */
static void ipdp_drain(int fd)
{
	uint8_t byte;

	for (int i = 0; i < IPDP_DRAIN_MAX; i++) {
		ssize_t r = recv(fd, &byte, sizeof(byte), MSG_DONTWAIT);

		if (r < 0 && !ipdp_icmp_errno(errno))
			return; /* empty (EAGAIN), or broken */
	}
}

/*
 * homa_ip_open - homa_dp_open for the raw IP datapath (contract in
 * homa_datapath.h); -EPERM (message on stderr) without CAP_NET_RAW.
 */
int homa_ip_open(int family, uint16_t port, struct homa_dp **out)
{
	struct ipdp *ip;
	int fd, resv, err;

	*out = NULL;
	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	ip = calloc(1, sizeof(*ip));
	if (!ip)
		return -ENOMEM;
	/* The raw socket first: without the capability nothing else is
	 * worth doing, and EPERM is the error to report. */
	fd = ipdp_new_raw(family);
	if (fd < 0) {
		free(ip);
		return fd;
	}
	if (port == 0)
		resv = homa_dp_client_port(ipdp_try_reserve, &family, &port);
	else
		resv = ipdp_reserve(family, port);
	if (resv < 0) {
		close(fd);
		free(ip);
		return resv;
	}
	err = ipdp_filter_port(fd, family, port);
	if (err) {
		close(resv);
		close(fd);
		free(ip);
		return err;
	}
	ipdp_drain(fd);
	ip->dp.ops = &ipdp_ops;
	ip->dp.fd = fd;
	ip->dp.socks[0] = fd;
	ip->dp.nsocks = 1;
	ip->dp.family = family;
	ip->dp.port = port;
	ip->dp.port_unreach_only = true;
	ip->resv_fd = resv;
	ip->icmp_fd = -1;
	*out = &ip->dp;
	return 0;
}

/*
 * ipdp_fill_tos - write into cbuf the control message carrying priority for
 * family; returns the bytes used (0 for priority 0, the socket's default).
 */
static size_t ipdp_fill_tos(int family, uint8_t priority, char *cbuf)
{
	struct msghdr m = { .msg_control = cbuf,
			    .msg_controllen = IPDP_CMSG_SPACE };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	int tos = (priority & 7) << 5;

	if (tos == 0)
		return 0;
	memset(cbuf, 0, IPDP_CMSG_SPACE);
	c->cmsg_level = family == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP;
	c->cmsg_type = family == AF_INET6 ? IPV6_TCLASS : IP_TOS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &tos, sizeof(tos));
	return IPDP_CMSG_SPACE;
}

/*
 * ipdp_send_chunk - send pkts[0..n) (n <= HOMA_DP_BATCH) with sendmmsg,
 * dropping (and counting) each packet the kernel refuses.  Returns the
 * number sent.  The destinations go out with port 0: IPv6 raw sockets
 * reject a port other than the protocol number, and the Homa port is in
 * the packet.
 */
static int ipdp_send_chunk(struct homa_dp *dp, struct homa_dp_pkt *pkts,
			   int n)
{
	struct mmsghdr msgs[HOMA_DP_BATCH];
	struct iovec iovs[HOMA_DP_BATCH];
	union sockaddr_in_union dests[HOMA_DP_BATCH];
	char cbufs[HOMA_DP_BATCH][IPDP_CMSG_SPACE]
		__attribute__((aligned(sizeof(size_t))));
	int done = 0, sent = 0, retried = -1;

	memset(msgs, 0, sizeof(msgs[0]) * (size_t)n);
	for (int i = 0; i < n; i++) {
		struct msghdr *m = &msgs[i].msg_hdr;
		size_t clen = ipdp_fill_tos(dp->family, pkts[i].priority,
					    cbufs[i]);

		dests[i] = pkts[i].addr;
		homa_addr_set_port(&dests[i], 0);
		iovs[i].iov_base = pkts[i].buf;
		iovs[i].iov_len = pkts[i].len;
		m->msg_name = &dests[i];
		m->msg_namelen = homa_dp_addr_len(dests[i].sa.sa_family);
		m->msg_iov = &iovs[i];
		m->msg_iovlen = 1;
		m->msg_control = clen ? cbufs[i] : NULL;
		m->msg_controllen = clen;
	}
	while (done < n) {
		int r;

		homa_trace(HOMA_TRACE_DP_SEND, n - done);
		r = sendmmsg(dp->fd, msgs + done, (unsigned int)(n - done), 0);
		homa_trace(HOMA_TRACE_DP_SENT, r);

		if (r > 0) {
			done += r;
			sent += r;
		} else if (r < 0 && errno == EINTR) {
			continue;
		} else if (r < 0 && homa_dp_icmp_errno(errno) &&
			   retried != done) {
			/* The socket's pending error (an ICMP error of an
			 * earlier packet) failed the call: read the error
			 * queue, send msgs[done] once more. */
			retried = done;
			homa_dp_errors(dp);
		} else {
			/* msgs[done] was refused (ENOBUFS, EAGAIN,
			 * EHOSTUNREACH, ...): drop it, Homa resends. */
			dp->counters.send_dropped++;
			done++;
		}
	}
	dp->counters.packets_sent += (uint64_t)sent;
	return sent;
}

/* ipdp_send - homa_dp_send for raw IP (contract in homa_datapath.h). */
static int ipdp_send(struct homa_dp *dp, struct homa_dp_pkt *pkts, int n)
{
	int sent = 0;

	for (int i = 0; i < n; i += HOMA_DP_BATCH) {
		int k = n - i < HOMA_DP_BATCH ? n - i : HOMA_DP_BATCH;

		sent += ipdp_send_chunk(dp, pkts + i, k);
	}
	return sent;
}

/*
 * ipdp_read_tclass - the priority carried by the IPV6_TCLASS control
 * message of m (0 when there is none).
 */
static uint8_t ipdp_read_tclass(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		int tclass;

		if (c->cmsg_level != IPPROTO_IPV6 ||
		    c->cmsg_type != IPV6_TCLASS ||
		    c->cmsg_len < CMSG_LEN(sizeof(int)))
			continue;
		memcpy(&tclass, CMSG_DATA(c), sizeof(tclass));
		return (uint8_t)((tclass >> 5) & 7);
	}
	return 0;
}

/* See homa_ip.h. */
bool homa_ip_strip_ip4(const uint8_t *hdr, uint8_t *buf, size_t cap,
		       const uint8_t *tail, size_t got, size_t *len,
		       uint8_t *tos)
{
	size_t ihl = (size_t)(hdr[0] & 0x0f) * 4;
	size_t extra, homa_len;

	if (got < IPDP_IP4_HDR_MIN || (hdr[0] >> 4) != 4 ||
	    ihl < IPDP_IP4_HDR_MIN || got < ihl)
		return false;
	homa_len = got - ihl;
	if (homa_len > cap)
		return false;
	/* Options (ihl > 20) pushed the Homa packet extra bytes into buf,
	 * and its last extra bytes (at most) into tail; with a buffer of
	 * fewer than extra bytes it lies wholly in tail. */
	extra = ihl - IPDP_IP4_HDR_MIN;
	if (extra >= cap) {
		memcpy(buf, tail + (extra - cap), homa_len);
	} else if (extra > 0) {
		size_t in_buf = cap - extra < homa_len ? cap - extra
						       : homa_len;

		memmove(buf, buf + extra, in_buf);
		memcpy(buf + in_buf, tail, homa_len - in_buf);
	}
	*len = homa_len;
	*tos = hdr[1];
	return true;
}

/* ipdp_dport - the Homa destination port of the packet p[0..len) (0 when
 * too short to hold one). */
static uint16_t ipdp_dport(const uint8_t *p, size_t len)
{
	return len >= 4 ? (uint16_t)(p[2] << 8 | p[3]) : 0;
}

/*
 * ipdp_port_free - whether nobody on this host holds Homa port of family:
 * a reservation of it (ipdp_reserve: the UDP port table) succeeds, and is
 * given up at once.  A port that cannot be tried (no privilege for it, no
 * descriptor) counts as held.
 */
static bool ipdp_port_free(int family, uint16_t port)
{
	int fd = ipdp_reserve(family, port);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * ipdp_icmp_socket - ip's raw ICMP (ICMPv6) socket for sending errors,
 * opened at the first call (with a filter that discards everything it
 * would receive).  Returns the descriptor, or -1 when it cannot be opened.
 */
static int ipdp_icmp_socket(struct ipdp *ip)
{
	struct sock_filter drop_all[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
	int family = ip->dp.family, small = 1, fd;

	if (ip->icmp_fd >= 0)
		return ip->icmp_fd;
	fd = socket(family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
	if (fd < 0)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (ipdp_attach(fd, drop_all, 1) != 0) {
		close(fd);
		return -1;
	}
	ip->icmp_fd = fd;
	return fd;
}

/* ipdp_csum - the Internet checksum (RFC 1071) of p[0..len). */
static uint16_t ipdp_csum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * ipdp_icmp4_msg - build in msg an ICMP port unreachable quoting the IPv4
 * header iph (20 bytes, no options) and the first bytes of the Homa packet
 * homa[0..len).  Returns the message's length.
 */
static size_t ipdp_icmp4_msg(uint8_t *msg, const uint8_t *iph,
			     const uint8_t *homa, size_t len)
{
	size_t q = len < IPDP_QUOTE_BYTES ? len : IPDP_QUOTE_BYTES;
	size_t total = IPDP_ICMP_HDR + IPDP_IP4_HDR_MIN + q;
	uint16_t sum;

	memset(msg, 0, IPDP_ICMP_HDR);
	msg[0] = 3;  /* destination unreachable */
	msg[1] = 3;  /* port unreachable */
	memcpy(msg + IPDP_ICMP_HDR, iph, IPDP_IP4_HDR_MIN);
	memcpy(msg + IPDP_ICMP_HDR + IPDP_IP4_HDR_MIN, homa, q);
	sum = ipdp_csum(msg, total);
	msg[2] = (uint8_t)(sum >> 8);
	msg[3] = (uint8_t)sum;
	return total;
}

/*
 * ipdp_icmp6_msg - build in msg an ICMPv6 port unreachable quoting an IPv6
 * header from src to dst carrying the Homa packet homa[0..len), and its
 * first bytes (the kernel fills in the checksum).  Returns the length.
 */
static size_t ipdp_icmp6_msg(uint8_t *msg, const struct in6_addr *src,
			     const struct in6_addr *dst, const uint8_t *homa,
			     size_t len)
{
	size_t q = len < IPDP_QUOTE_BYTES ? len : IPDP_QUOTE_BYTES;
	uint8_t *h = msg + IPDP_ICMP_HDR;

	memset(msg, 0, IPDP_ICMP_HDR + IPDP_IP6_HDR);
	msg[0] = 1;  /* destination unreachable */
	msg[1] = 4;  /* port unreachable */
	h[0] = 0x60; /* version 6 */
	h[4] = (uint8_t)(len >> 8);
	h[5] = (uint8_t)len;
	h[6] = IPDP_PROTO;
	h[7] = 64;
	memcpy(h + 8, src, 16);
	memcpy(h + 24, dst, 16);
	memcpy(h + IPDP_IP6_HDR, homa, q);
	return IPDP_ICMP_HDR + IPDP_IP6_HDR + q;
}

/* ipdp_read_dst6 - the destination address of the IPv6 packet read with m
 * (its IPV6_PKTINFO) into *dst.  Returns false when it is missing. */
static bool ipdp_read_dst6(struct msghdr *m, struct in6_addr *dst)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		struct in6_pktinfo pi;

		if (c->cmsg_level != IPPROTO_IPV6 ||
		    c->cmsg_type != IPV6_PKTINFO ||
		    c->cmsg_len < CMSG_LEN(sizeof(pi)))
			continue;
		memcpy(&pi, CMSG_DATA(c), sizeof(pi));
		*dst = pi.ipi6_addr;
		return true;
	}
	return false;
}

/*
 * ipdp_answer_foreign - the RESEND homa[0..len) came for another Homa port
 * than ip's (read with m; over IPv4 its IP header is iph, the first 20
 * bytes): when nobody on this host holds that port, send its sender an
 * ICMP port unreachable quoting it, as the kernel module answers a packet
 * for a port without a socket.  Over IPv4, a header with options is not
 * quoted (nothing is sent).  Failures are ignored (the client times out).
 */
static void ipdp_answer_foreign(struct ipdp *ip, const uint8_t *iph,
				struct msghdr *m, const uint8_t *homa,
				size_t len)
{
	uint8_t msg[IPDP_ICMP_HDR + IPDP_IP6_HDR + IPDP_QUOTE_BYTES];
	union sockaddr_in_union to;
	struct in6_addr dst;
	size_t n;
	int fd;

	if (!ipdp_port_free(ip->dp.family, ipdp_dport(homa, len)))
		return;
	if (ip->dp.family == AF_INET6) {
		if (!ipdp_read_dst6(m, &dst))
			return;
		n = ipdp_icmp6_msg(msg, &((union sockaddr_in_union *)
					  m->msg_name)->in6.sin6_addr, &dst,
				   homa, len);
	} else {
		if ((iph[0] & 0x0f) * 4 != IPDP_IP4_HDR_MIN)
			return;
		n = ipdp_icmp4_msg(msg, iph, homa, len);
	}
	fd = ipdp_icmp_socket(ip);
	if (fd < 0)
		return;
	to = *(union sockaddr_in_union *)m->msg_name;
	homa_addr_set_port(&to, 0);
	if (sendto(fd, msg, n, 0, &to.sa,
		   homa_dp_addr_len(to.sa.sa_family)) >= 0)
		ip->dp.counters.unreach_answered++;
}

/*
 * ipdp_recv_chunk - one recvmmsg of up to n (<= HOMA_DP_BATCH) packets.
 * Returns the number of datagrams the kernel handed over (some may be
 * dropped: *kept says how many of them are in pkts[0..*kept)), 0 when none
 * waits, or a negative errno.
 */
static int ipdp_recv_chunk(struct homa_dp *dp, struct homa_dp_pkt *pkts,
			   int n, int *kept)
{
	const bool v4 = dp->family == AF_INET;
	struct mmsghdr msgs[HOMA_DP_BATCH];
	struct iovec iovs[HOMA_DP_BATCH][3];
	uint8_t hdrs[HOMA_DP_BATCH][IPDP_IP4_HDR_MIN];
	uint8_t tails[HOMA_DP_BATCH][IPDP_IP4_HDR_MAX - IPDP_IP4_HDR_MIN];
	char cbufs[HOMA_DP_BATCH][IPDP_RX_CMSG_SPACE]
		__attribute__((aligned(sizeof(size_t))));
	int r, k = 0;

	*kept = 0;
	memset(msgs, 0, sizeof(msgs[0]) * (size_t)n);
	for (int i = 0; i < n; i++) {
		struct msghdr *m = &msgs[i].msg_hdr;

		m->msg_name = &pkts[i].addr;
		m->msg_namelen = sizeof(pkts[i].addr);
		if (v4) {
			iovs[i][0].iov_base = hdrs[i];
			iovs[i][0].iov_len = sizeof(hdrs[i]);
			iovs[i][1].iov_base = pkts[i].buf;
			iovs[i][1].iov_len = pkts[i].len;
			iovs[i][2].iov_base = tails[i];
			iovs[i][2].iov_len = sizeof(tails[i]);
			m->msg_iovlen = 3;
		} else {
			iovs[i][0].iov_base = pkts[i].buf;
			iovs[i][0].iov_len = pkts[i].len;
			m->msg_iovlen = 1;
			m->msg_control = cbufs[i];
			m->msg_controllen = IPDP_RX_CMSG_SPACE;
		}
		m->msg_iov = iovs[i];
	}
	r = recvmmsg(dp->fd, msgs, (unsigned int)n, MSG_DONTWAIT, NULL);
	homa_trace(HOMA_TRACE_DP_RECV, r);
	if (r < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	for (int i = 0; i < r; i++) {
		struct msghdr *m = &msgs[i].msg_hdr;
		size_t len = msgs[i].msg_len;
		uint8_t tos = 0;

		if (m->msg_flags & MSG_TRUNC) {
			dp->counters.recv_truncated++;
			continue;
		}
		if (v4) {
			if (!homa_ip_strip_ip4(hdrs[i], pkts[i].buf,
					       pkts[i].len, tails[i], len,
					       &len, &tos)) {
				dp->counters.recv_truncated++;
				continue;
			}
			tos = (uint8_t)((tos >> 5) & 7);
		} else {
			tos = ipdp_read_tclass(m);
		}
		if (ipdp_dport(pkts[i].buf, len) != dp->port) {
			/* A RESEND for another port (the filter lets no other
			 * foreign packet in): answered if nobody holds it. */
			ipdp_answer_foreign((struct ipdp *)dp, hdrs[i], m,
					    pkts[i].buf, len);
			continue;
		}
		/* Compact: pkts[k] takes packet i's metadata; the buffers
		 * move with them so that pkts[k].buf holds its bytes. */
		if (k != i) {
			struct homa_dp_pkt t = pkts[k];

			pkts[k] = pkts[i];
			pkts[i] = t;
		}
		pkts[k].len = len;
		pkts[k].place = -1;
		pkts[k].placed = false;
		pkts[k].priority = tos;
		/* IP has no ports: the peer's is the Homa sport. */
		homa_addr_set_port(&pkts[k].addr,
				   len >= 2 ? (uint16_t)(pkts[k].buf[0] << 8 |
							 pkts[k].buf[1])
					    : 0);
		k++;
	}
	*kept = k;
	return r;
}

/* A read into the caller's buffers, for ipdp_read. */
struct ipdp_read_ctx {
	struct homa_dp *dp;
	struct homa_dp_pkt *pkts;
};

/* ipdp_read - a homa_dp_read_fn over ipdp_recv_chunk (ctx: a struct
 * ipdp_read_ctx), into the packets after the off kept. */
static int ipdp_read(void *ctx, int off, int max, int *kept)
{
	const struct ipdp_read_ctx *c = ctx;

	return ipdp_recv_chunk(c->dp, c->pkts + off, max, kept);
}

/* ipdp_recv - homa_dp_recv for raw IP (contract in homa_datapath.h). */
static int ipdp_recv(struct homa_dp *dp, struct homa_dp_pkt *pkts, int n)
{
	struct ipdp_read_ctx c = { dp, pkts };
	int got = homa_dp_recv_retry(dp, ipdp_read, &c, n);

	if (got > 0)
		dp->counters.packets_received += (uint64_t)got;
	return got;
}

/* ipdp_close - homa_dp_close for raw IP: the socket, then the port. */
static void ipdp_close(struct homa_dp *dp)
{
	struct ipdp *ip = (struct ipdp *)dp;

	if (dp->fd >= 0)
		close(dp->fd);
	if (ip->resv_fd >= 0)
		close(ip->resv_fd);
	if (ip->icmp_fd >= 0)
		close(ip->icmp_fd);
	free(ip);
}

static const struct homa_dp_ops ipdp_ops = {
	.name = "ip",
	.send = ipdp_send,
	.recv = ipdp_recv,
	.close = ipdp_close,
};
