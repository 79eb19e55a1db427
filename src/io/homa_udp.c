/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_udp - the UDP datapath: one nonblocking UDP socket whose port is the
 * Homa port; the UDP payload is exactly the Homa packet.  Batches go out
 * with sendmmsg, each packet's priority in the DSCP bits (TOS or traffic
 * class = priority << 5), and come in with recvmmsg.
 *
 * Segmentation offload: consecutive packets of one batch that go to the
 * same address at the same priority, all of one size but the last, leave in
 * one sendmmsg entry with UDP_SEGMENT (GSO), whether they belong to one
 * message or to several small ones (a run of one packet counts as a whole
 * packet); a gathered run of a long message is cut into GSO entries of its
 * own.  The kernel cuts the buffer into
 * datagrams at the segment size, and since every packet carries its own
 * Homa header each datagram is a complete Homa packet.  On receive, UDP_GRO
 * lets the kernel hand over several datagrams of one sender in one buffer
 * with their segment size, which is cut back into packets here.  Both are
 * turned off for the socket at the first sign that the kernel refuses them.
 *
 * Receive bands (homa_udp_open_bands): a second UDP socket shares the port
 * through SO_REUSEPORT, a classic BPF program on the group steers short
 * messages' DATA and GRANTs to the first, and reads take the first one's
 * datagrams first; both sit in an epoll descriptor of the datapath's own.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <linux/filter.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "homa_addr.h"
#include "homa_datapath.h"
#include "homa_dpshared.h"
#include "homa_trace.h"
#include "homa_udp.h"

/* Socket buffer size asked for in each direction. */
#define UDP_SOCKBUF_BYTES (16 * 1024 * 1024)

static const struct homa_dp_ops udp_ops;

static void udp_tx_flush(struct udp_dp *u);

/*
 * udp_new_socket - a nonblocking, close-on-exec UDP socket of family with
 * large buffers, V6ONLY for IPv6, the reception of the sender's TOS on and
 * ICMP errors queued (homa_dp_recverr_on).
 * Returns the descriptor or a negative errno from socket(2).
 */
static int udp_new_socket(int family)
{
	int on = 1;
	int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	homa_dp_set_bufs(fd, UDP_SOCKBUF_BYTES);
	if (family == AF_INET6) {
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on,
				 sizeof(on));
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &on,
				 sizeof(on));
	} else {
		(void)setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on));
	}
	homa_dp_recverr_on(fd, family);
	return fd;
}

/* A socket to bind, for udp_try_port. */
struct udp_bind_ctx {
	int fd;
	int family;
};

/* udp_try_port - a homa_dp_port_try_fn binding the socket of ctx (a
 * struct udp_bind_ctx) to port: 0, or a negative errno. */
static int udp_try_port(void *ctx, uint16_t port)
{
	const struct udp_bind_ctx *b = ctx;

	return homa_dp_bind_port(b->fd, b->family, port);
}

/* udp_free - free u and its receive buffers (the socket is closed by the
 * caller). */
static void udp_free(struct udp_dp *u)
{
	for (int i = 0; i < UDP_GRO_BUFS; i++)
		free(u->gro[i].data);
	free(u);
}

/* udp_alloc - a zeroed udp_dp with its GRO receive buffers, or NULL. */
static struct udp_dp *udp_alloc(void)
{
	struct udp_dp *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	for (int i = 0; i < UDP_GRO_BUFS; i++) {
		u->gro[i].data = malloc(UDP_GRO_BUF_BYTES);
		if (!u->gro[i].data) {
			udp_free(u);
			return NULL;
		}
	}
	return u;
}

/* The Homa DATA and GRANT type codes, and where a packet's type byte
 * is. */
#define UDP_TYPE_DATA 0x10
#define UDP_TYPE_GRANT 0x11
#define UDP_TYPE_OFFSET 11

/* Most instructions of the band filter. */
#define UDP_BAND_FILTER_MAX 9

/*
 * udp_band_filter - the classic BPF program that picks a socket of a
 * reuseport group for each datagram: index 0 (the high band) for a DATA
 * or GRANT packet whose priority in the IP header (TOS >> 5; IPv6: traffic
 * class >> 5, the low nibble of the first byte >> 1) is at least
 * high_prio; index 1 (the low band) for the rest.  Other control packets
 * stay in order with the DATA they concern: a RESEND read before the DATA
 * it asks after would find no RPC (the server answers RPC_UNKNOWN and the
 * client starts over), an ACK read before a late copy of the request's
 * DATA would let that copy start the RPC again.  The program sees the
 * datagram from its UDP payload (the Homa header) on; SKF_NET_OFF reaches
 * back to the IP header.  A datagram too short to hold the type byte ends
 * the program with 0 (the high band; the engine drops it).  prog has room
 * for UDP_BAND_FILTER_MAX instructions.  Returns the number of
 * instructions.
 */
static unsigned short udp_band_filter(int family, uint8_t high_prio,
				      struct sock_filter *prog)
{
	int n = 0, grant;

	prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_B | BPF_ABS,
						 UDP_TYPE_OFFSET);
	prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						 UDP_TYPE_DATA, 1, 0);
	grant = n++; /* its jump to the end is known at the end */
	if (family == AF_INET6) {
		prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_B | BPF_ABS,
							 (uint32_t)SKF_NET_OFF);
		prog[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K,
							 0x0f);
		prog[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_RSH | BPF_K,
							 1);
	} else {
		prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_B | BPF_ABS,
							 (uint32_t)SKF_NET_OFF + 1);
		prog[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_RSH | BPF_K,
							 5);
	}
	prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K,
						 high_prio, 0, 1);
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
	prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 1);
	prog[grant] = (struct sock_filter)BPF_JUMP(
		BPF_JMP | BPF_JEQ | BPF_K, UDP_TYPE_GRANT, 0,
		(uint8_t)(n - 1 - grant - 1));
	return (unsigned short)n;
}

/*
 * udp_bind_any - bind fd: to port, or with port 0 to a free client port.
 * Returns the port bound, or a negative errno (-EADDRINUSE when taken).
 */
static int udp_bind_any(int fd, int family, uint16_t port)
{
	struct udp_bind_ctx b = { fd, family };
	int err;

	if (port == 0)
		err = homa_dp_client_port(udp_try_port, &b, &port);
	else
		err = homa_dp_bind_port(fd, family, port);
	return err < 0 ? err : port;
}

/*
 * udp_epoll_of - an epoll descriptor holding socks[0..n), each with its
 * index as data (EPOLLIN; errors are always reported).  Returns it or a
 * negative errno.
 */
static int udp_epoll_of(const int *socks, int n)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC);

	if (epfd < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN };

		ev.data.u32 = (uint32_t)i;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, socks[i], &ev) != 0) {
			int err = -errno;

			close(epfd);
			return err;
		}
	}
	return epfd;
}

/*
 * udp_add_low_band - give dp (one socket, bound to dp->port) a second
 * socket for the low band: the bound socket allows sharing its port
 * (SO_REUSEPORT, set only now, so that the bind before was exclusive), a
 * new socket joins it, the band filter goes on the group and both go into
 * an epoll descriptor, dp->fd.  Returns 0, or a negative errno with dp
 * unchanged (one socket, sharing off again).
 */
static int udp_add_low_band(struct homa_dp *dp, uint8_t high_prio)
{
	struct sock_filter insns[UDP_BAND_FILTER_MAX];
	struct sock_fprog prog;
	int on = 1, off = 0, fd, epfd, err;

	/* Zeroed whole: the kernel copies the padding after len too. */
	memset(&prog, 0, sizeof(prog));
	prog.filter = insns;
	prog.len = udp_band_filter(dp->family, high_prio, insns);
	if (setsockopt(dp->socks[0], SOL_SOCKET, SO_REUSEPORT, &on,
		       sizeof(on)) != 0)
		return -errno;
	fd = udp_new_socket(dp->family);
	err = fd < 0 ? fd : 0;
	if (!err && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on,
			       sizeof(on)) != 0)
		err = -errno;
	if (!err)
		err = homa_dp_bind_port(fd, dp->family, dp->port);
	if (!err && setsockopt(dp->socks[0], SOL_SOCKET,
			       SO_ATTACH_REUSEPORT_CBPF, &prog,
			       sizeof(prog)) != 0)
		err = -errno;
	dp->socks[1] = fd;
	epfd = err ? err : udp_epoll_of(dp->socks, 2);
	if (epfd < 0) {
		if (fd >= 0)
			close(fd);
		(void)setsockopt(dp->socks[0], SOL_SOCKET, SO_REUSEPORT, &off,
				 sizeof(off));
		dp->socks[1] = -1;
		return epfd;
	}
	dp->fd = epfd;
	dp->nsocks = 2;
	return 0;
}

/*
 * udp_gro_all - turn UDP_GRO on for every socket of dp.  Returns true when
 * every one took it; otherwise it is off again for all of them.
 */
static bool udp_gro_all(struct homa_dp *dp)
{
	int on = 1, off = 0;

	for (int b = 0; b < dp->nsocks; b++) {
		if (setsockopt(dp->socks[b], SOL_UDP, UDP_GRO, &on,
			       sizeof(on)) == 0)
			continue;
		for (int c = 0; c < b; c++)
			(void)setsockopt(dp->socks[c], SOL_UDP, UDP_GRO, &off,
					 sizeof(off));
		return false;
	}
	return true;
}

/* See homa_datapath.h. */
int homa_udp_open_bands(int family, uint16_t port,
			const struct homa_dp_bands *bands,
			struct homa_dp **out)
{
	struct udp_dp *u;
	struct homa_dp *dp;
	int fd, err;

	*out = NULL;
	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	u = udp_alloc();
	if (!u)
		return -ENOMEM;
	dp = &u->dp;
	fd = udp_new_socket(family);
	err = fd < 0 ? fd : udp_bind_any(fd, family, port);
	if (err < 0) {
		if (fd >= 0)
			close(fd);
		udp_free(u);
		return err;
	}
	dp->ops = &udp_ops;
	dp->fd = dp->socks[0] = fd;
	dp->socks[1] = -1;
	dp->nsocks = 1;
	dp->family = family;
	dp->port = (uint16_t)err;
	if (bands && bands->n > 1)
		(void)udp_add_low_band(dp, bands->high_prio);
	u->gso = true;
	dp->gather = true;
	u->gro_on = udp_gro_all(dp);
	*out = dp;
	return 0;
}

/* See homa_datapath.h. */
int homa_udp_open(int family, uint16_t port, struct homa_dp **out)
{
	return homa_udp_open_bands(family, port, NULL, out);
}

/*
 * udp_add_cmsg - append a control message (level, type, an int or a
 * uint16_t value of size bytes) to m, whose msg_control has room
 * (UDP_CMSG_SPACE).  m->msg_controllen counts the bytes used so far.
 */
static void udp_add_cmsg(struct msghdr *m, int level, int type,
			 const void *value, size_t size)
{
	struct cmsghdr *c = (struct cmsghdr *)((char *)m->msg_control +
					       m->msg_controllen);

	memset(c, 0, CMSG_SPACE(size));
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(size);
	memcpy(CMSG_DATA(c), value, size);
	m->msg_controllen += CMSG_SPACE(size);
}

/*
 * udp_tx_room - make room in u's send batch for one more entry of niov
 * iovecs, sending what is batched when it is full.
 */
static void udp_tx_room(struct udp_dp *u, int niov)
{
	if (u->tx.nmsgs == UDP_TX_MSGS || u->tx.niovs + niov > UDP_TX_IOVS)
		udp_tx_flush(u);
}

/*
 * udp_tx_add - append to u's send batch one entry: segs packets of gso
 * bytes (the last may be shorter) in niov iovecs (starting at the next free
 * iovec, filled by the caller afterwards; no packet spans two of them) to
 * addr at priority; several packets leave as one GSO send.  The caller made
 * room (udp_tx_room).  Returns the entry's first iovec.
 */
static struct iovec *udp_tx_add(struct udp_dp *u,
				const union sockaddr_in_union *addr,
				uint8_t priority, uint32_t segs, int niov,
				size_t gso)
{
	struct udp_tx *t = &u->tx;
	struct msghdr *m = &t->msgs[t->nmsgs].msg_hdr;
	int tos = (priority & 7) << 5;

	memset(m, 0, sizeof(*m));
	m->msg_name = (void *)addr;
	m->msg_namelen = homa_dp_addr_len(addr->sa.sa_family);
	m->msg_iov = &t->iovs[t->niovs];
	m->msg_iovlen = (size_t)niov;
	m->msg_control = t->cbufs[t->nmsgs];
	if (tos)
		udp_add_cmsg(m, u->dp.family == AF_INET6 ? IPPROTO_IPV6
							 : IPPROTO_IP,
			     u->dp.family == AF_INET6 ? IPV6_TCLASS : IP_TOS,
			     &tos, sizeof(tos));
	if (segs > 1) {
		uint16_t seg = (uint16_t)gso;

		udp_add_cmsg(m, SOL_UDP, UDP_SEGMENT, &seg, sizeof(seg));
	}
	if (m->msg_controllen == 0)
		m->msg_control = NULL;
	t->segs[t->nmsgs] = segs;
	t->gso[t->nmsgs] = (uint32_t)gso;
	t->nmsgs++;
	t->niovs += niov;
	return m->msg_iov;
}

/*
 * udp_icmp_retry - a sendmsg of one on u failed: when the error reported an
 * earlier packet's ICMP error (the socket's pending error), read the error
 * queue and send one once more.  Returns true when that sent it.
 */
static bool udp_icmp_retry(struct udp_dp *u, const struct msghdr *one)
{
	if (!homa_dp_icmp_errno(errno))
		return false;
	homa_dp_errors(&u->dp);
	return sendmsg(u->dp.socks[0], one, 0) >= 0;
}

/* Most iovec pieces one packet of an entry spans (a header and a
 * payload). */
#define UDP_PACKET_PIECES 4

/*
 * udp_next_packet - the pieces of the next packet of an entry as GSO would
 * cut it: gso bytes (fewer at the end) from iov[*v] at offset *at on,
 * into pieces (at most UDP_PACKET_PIECES); advances *v and *at.  Returns
 * the number of pieces.
 */
static int udp_next_packet(const struct iovec *iov, size_t niov, size_t gso,
			   size_t *v, size_t *at, struct iovec *pieces)
{
	int np = 0;

	while (gso > 0 && *v < niov && np < UDP_PACKET_PIECES) {
		size_t left = iov[*v].iov_len - *at;
		size_t n = left < gso ? left : gso;

		if (n > 0) {
			pieces[np].iov_base = (uint8_t *)iov[*v].iov_base + *at;
			pieces[np].iov_len = n;
			np++;
		}
		gso -= n;
		*at += n;
		if (*at == iov[*v].iov_len) {
			(*v)++;
			*at = 0;
		}
	}
	return np;
}

/*
 * udp_tx_singly - GSO was refused for entry e: send its packets one by one
 * (keeping the priority), counting what is sent and dropped.
 */
static void udp_tx_singly(struct udp_dp *u, int e)
{
	struct udp_tx *t = &u->tx;
	struct msghdr one = t->msgs[e].msg_hdr;
	const struct iovec *iov = one.msg_iov;
	size_t niov = one.msg_iovlen, v = 0, at = 0;
	struct iovec pieces[UDP_PACKET_PIECES];

	/* The priority's control message comes first; drop the segment
	 * size after it. */
	if (one.msg_control) {
		struct cmsghdr *c = CMSG_FIRSTHDR(&one);

		one.msg_controllen = c->cmsg_level == SOL_UDP ? 0
			: CMSG_SPACE(sizeof(int));
		if (one.msg_controllen == 0)
			one.msg_control = NULL;
	}
	one.msg_iov = pieces;
	while (v < niov) {
		one.msg_iovlen = (size_t)udp_next_packet(iov, niov, t->gso[e],
							 &v, &at, pieces);
		if (one.msg_iovlen == 0)
			continue;
		if (sendmsg(u->dp.socks[0], &one, 0) >= 0)
			t->sent++;
		else if (udp_icmp_retry(u, &one))
			t->sent++;
		else
			u->dp.counters.send_dropped++;
	}
}

static atomic_bool udp_mtu_warned;

/*
 * udp_warn_mtu - say once per process on stderr that UDP datagrams of
 * bytes exceed a route's MTU (the mtu setting is larger than the link's).
 */
static void udp_warn_mtu(uint32_t bytes)
{
	if (atomic_exchange(&udp_mtu_warned, true))
		return;
	fprintf(stderr,
		"libhoma: UDP datagrams of %u bytes exceed the MTU of a route "
		"(EMSGSIZE); they now leave one by one and are IP-fragmented, "
		"which is slow: set HOMA_MTU to the link's MTU\n", bytes);
}

/*
 * udp_tx_flush - send u's batched entries with sendmmsg, dropping (and
 * counting) what the kernel refuses.  A refused GSO entry turns GSO off for
 * the socket and is sent again packet by packet.  The batch is empty
 * afterwards; t->sent counts the packets that left.
 */
static void udp_tx_flush(struct udp_dp *u)
{
	struct udp_tx *t = &u->tx;
	int done = 0, retried = -1;

	while (done < t->nmsgs) {
		int r;

		homa_trace(HOMA_TRACE_DP_SEND, t->nmsgs - done);
		r = sendmmsg(u->dp.socks[0], t->msgs + done,
			     (unsigned int)(t->nmsgs - done), 0);
		homa_trace(HOMA_TRACE_DP_SENT, r);

		if (r > 0) {
			for (int e = done; e < done + r; e++)
				t->sent += (int)t->segs[e];
			done += r;
		} else if (r < 0 && errno == EINTR) {
			continue;
		} else if (r < 0 && (errno == ECONNREFUSED ||
			   errno == EHOSTUNREACH || errno == ENETUNREACH ||
			   errno == EHOSTDOWN) && retried != done) {
			/* The socket's pending error, from an ICMP error of
			 * an earlier packet, failed this call: read the
			 * details, send the entry once more. */
			retried = done;
			homa_dp_errors(&u->dp);
		} else if (t->segs[done] > 1 && (errno == EIO ||
			   errno == EINVAL || errno == EOPNOTSUPP ||
			   errno == EMSGSIZE)) {
			/* The kernel refuses segmentation offload (with
			 * EMSGSIZE: the packets exceed the route's MTU;
			 * sent alone they are fragmented). */
			if (errno == EMSGSIZE)
				udp_warn_mtu(t->gso[done]);
			u->gso = false;
			udp_tx_singly(u, done);
			done++;
		} else {
			/* Entry done was refused (ENOBUFS, EAGAIN,
			 * ECONNREFUSED, ...): drop it, Homa resends. */
			u->dp.counters.send_dropped += t->segs[done];
			done++;
		}
	}
	t->nmsgs = 0;
	t->niovs = 0;
}

/* udp_whole_len - the bytes of p as one whole packet: a run of one packet
 * is one (its frame is its header, then its payload), so small messages
 * batched by the socket layer can share one GSO send. */
static size_t udp_whole_len(const struct homa_dp_pkt *p)
{
	return p->segs == 1 ? (size_t)p->hdr_len + p->payload_len : p->len;
}

/*
 * udp_run_length - how many whole packets from pkts[0] (of n) can leave as
 * one GSO send: same address and priority, every one the size of the first
 * but the last (which may be smaller), within the segment and byte limits.
 */
static int udp_run_length(const struct udp_dp *u,
			  const struct homa_dp_pkt *pkts, int n)
{
	size_t seg = udp_whole_len(&pkts[0]), bytes = seg;
	int k = 1;

	if (!u->gso)
		return 1;
	while (k < n && k < UDP_GSO_MAX_SEGS) {
		const struct homa_dp_pkt *p = &pkts[k];
		size_t len = udp_whole_len(p);

		if (p->segs > 1 || len > seg || bytes + len > UDP_GSO_MAX_BYTES ||
		    p->priority != pkts[0].priority ||
		    !homa_addr_equal(&p->addr, &pkts[0].addr))
			break;
		bytes += len;
		k++;
		if (len < seg)
			break;
	}
	return k;
}

/* udp_tx_whole - batch whole packets pkts[0..k) (a run from
 * udp_run_length; runs of one packet among them) as one entry. */
static void udp_tx_whole(struct udp_dp *u, const struct homa_dp_pkt *pkts,
			 int k)
{
	struct iovec *iov;

	udp_tx_room(u, k);
	iov = udp_tx_add(u, &pkts[0].addr, pkts[0].priority, (uint32_t)k, k,
			 udp_whole_len(&pkts[0]));
	for (int i = 0; i < k; i++) {
		iov[i].iov_base = pkts[i].buf;
		iov[i].iov_len = udp_whole_len(&pkts[i]);
	}
}

/* udp_gso_per_entry - packets of full bytes one GSO entry of u carries:
 * at most UDP_GSO_MAX_SEGS and UDP_GSO_MAX_BYTES bytes, at least 1 (1
 * when GSO is off). */
static uint32_t udp_gso_per_entry(const struct udp_dp *u, size_t full)
{
	uint32_t per = u->gso ? (uint32_t)(UDP_GSO_MAX_BYTES / full) : 1;

	if (per > UDP_GSO_MAX_SEGS)
		per = UDP_GSO_MAX_SEGS;
	return per < 1 ? 1 : per;
}

/*
 * udp_tx_run - batch the run p (whole packets back to back): GSO entries of
 * at most UDP_GSO_MAX_SEGS packets and UDP_GSO_MAX_BYTES bytes (one packet
 * each when GSO is off), each one slice of p's buffer in a single iovec
 * (the kernel copies one long slice much faster than a header and a
 * payload per packet).
 */
static void udp_tx_run(struct udp_dp *u, const struct homa_dp_pkt *p)
{
	size_t full = (size_t)p->hdr_len + p->seg;
	size_t total = (size_t)p->segs * p->hdr_len + p->payload_len;
	uint32_t per = udp_gso_per_entry(u, full);

	for (uint32_t first = 0; first < p->segs; first += per) {
		uint32_t k = p->segs - first < per ? p->segs - first : per;
		size_t off = (size_t)first * full;
		size_t len = (size_t)k * full;
		struct iovec *iov;

		if (len > total - off)
			len = total - off;
		udp_tx_room(u, 1);
		iov = udp_tx_add(u, &p->addr, p->priority, k, 1, full);
		iov->iov_base = p->buf + off;
		iov->iov_len = len;
	}
}

/*
 * udp_tx_split - batch the run p whose payload is apart from its headers
 * (p->payload): GSO entries as udp_tx_run cuts them, each packet in two
 * iovecs, its header and its payload.
 */
static void udp_tx_split(struct udp_dp *u, const struct homa_dp_pkt *p)
{
	size_t full = (size_t)p->hdr_len + p->seg;
	uint32_t per = udp_gso_per_entry(u, full);

	for (uint32_t first = 0; first < p->segs; first += per) {
		uint32_t k = p->segs - first < per ? p->segs - first : per;
		struct iovec *iov;

		udp_tx_room(u, 2 * (int)k);
		iov = udp_tx_add(u, &p->addr, p->priority, k, 2 * (int)k,
				 full);
		for (uint32_t i = 0; i < k; i++) {
			size_t off = (size_t)(first + i) * p->seg;
			size_t left = p->payload_len - off;

			iov[2 * i].iov_base = p->buf + (first + i) * full;
			iov[2 * i].iov_len = p->hdr_len;
			iov[2 * i + 1].iov_base = (void *)(p->payload + off);
			iov[2 * i + 1].iov_len = left < p->seg ? left : p->seg;
		}
	}
}

/* udp_send - homa_dp_send for UDP (contract in homa_datapath.h): whole
 * packets folded into GSO runs where they allow it, gathered runs cut into
 * GSO entries, all of it in as few sendmmsg calls as fit the batch. */
static int udp_send(struct homa_dp *dp, struct homa_dp_pkt *pkts, int n)
{
	struct udp_dp *u = (struct udp_dp *)dp;

	u->tx.sent = 0;
	for (int i = 0; i < n;) {
		if (pkts[i].segs > 0 && pkts[i].payload) {
			udp_tx_split(u, &pkts[i]);
			i++;
		} else if (pkts[i].segs > 1) {
			udp_tx_run(u, &pkts[i]);
			i++;
		} else {
			int k = udp_run_length(u, pkts + i, n - i);

			udp_tx_whole(u, pkts + i, k);
			i += k;
		}
	}
	udp_tx_flush(u);
	dp->counters.packets_sent += (uint64_t)u->tx.sent;
	return u->tx.sent;
}

/*
 * udp_read_cmsgs - the priority carried by the TOS/traffic-class control
 * message of m (0 when there is none) and, in *seg, the GRO segment size
 * (0 when the datagram was not coalesced).
 */
static uint8_t udp_read_cmsgs(struct msghdr *m, size_t *seg)
{
	uint8_t priority = 0;

	*seg = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		int v = 0;

		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
			priority = (uint8_t)((*(const uint8_t *)CMSG_DATA(c) >>
					      5) & 7);
		} else if (c->cmsg_level == IPPROTO_IPV6 &&
			   c->cmsg_type == IPV6_TCLASS &&
			   c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			priority = (uint8_t)((v >> 5) & 7);
		} else if (c->cmsg_level == SOL_UDP &&
			   c->cmsg_type == UDP_GRO &&
			   c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			*seg = v > 0 ? (size_t)v : 0;
		}
	}
	return priority;
}

/*
 * udp_recv_chunk - one recvmmsg on fd, a socket of dp, of up to n
 * (<= HOMA_DP_BATCH) packets into the caller's buffers (GRO off).  Returns the number of datagrams the
 * kernel handed over (some may be dropped as truncated: *kept says how many
 * of them are in pkts[0..*kept)), 0 when none waits, or a negative errno.
 */
static int udp_recv_chunk(struct homa_dp *dp, int fd,
			  struct homa_dp_pkt *pkts, int n, int *kept)
{
	struct mmsghdr msgs[HOMA_DP_BATCH];
	struct iovec iovs[HOMA_DP_BATCH];
	char cbufs[HOMA_DP_BATCH][UDP_CMSG_SPACE]
		__attribute__((aligned(sizeof(size_t))));
	int r, k = 0;

	*kept = 0;
	memset(msgs, 0, sizeof(msgs[0]) * (size_t)n);
	for (int i = 0; i < n; i++) {
		struct msghdr *m = &msgs[i].msg_hdr;

		iovs[i].iov_base = pkts[i].buf;
		iovs[i].iov_len = pkts[i].len;
		m->msg_name = &pkts[i].addr;
		m->msg_namelen = sizeof(pkts[i].addr);
		m->msg_iov = &iovs[i];
		m->msg_iovlen = 1;
		m->msg_control = cbufs[i];
		m->msg_controllen = UDP_CMSG_SPACE;
	}
	r = recvmmsg(fd, msgs, (unsigned int)n, MSG_DONTWAIT, NULL);
	homa_trace(HOMA_TRACE_DP_RECV, r);
	if (r < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	for (int i = 0; i < r; i++) {
		struct msghdr *m = &msgs[i].msg_hdr;
		size_t seg;

		if (m->msg_flags & MSG_TRUNC) {
			dp->counters.recv_truncated++;
			continue;
		}
		/* Compact: pkts[k] takes packet i's metadata; the buffers
		 * move with them so that pkts[k].buf holds its bytes. */
		if (k != i) {
			struct homa_dp_pkt t = pkts[k];

			pkts[k] = pkts[i];
			pkts[i] = t;
		}
		pkts[k].len = msgs[i].msg_len;
		pkts[k].place = -1;
		pkts[k].placed = false;
		pkts[k].priority = udp_read_cmsgs(m, &seg);
		k++;
	}
	*kept = k;
	return r;
}

/* udp_gro_left - true when u's coalescing buffers hold packets not yet
 * handed out. */
static bool udp_gro_left(const struct udp_dp *u)
{
	for (int i = u->gro_next; i < u->gro_count; i++)
		if (u->gro[i].off < u->gro[i].len)
			return true;
	return false;
}

/*
 * udp_gro_emit - hand out packets cut from the coalesced datagrams not yet
 * consumed, into pkts[0..n) (their buf pointing into u's buffers).
 * Returns how many.
 */
static int udp_gro_emit(struct udp_dp *u, struct homa_dp_pkt *pkts, int n)
{
	int k = 0;

	while (k < n && u->gro_next < u->gro_count) {
		struct udp_gro_buf *g = &u->gro[u->gro_next];
		size_t left = g->len - g->off;

		if (left == 0) {
			u->gro_next++;
			continue;
		}
		pkts[k].buf = g->data + g->off;
		pkts[k].len = left < g->seg ? left : g->seg;
		pkts[k].addr = g->addr;
		pkts[k].priority = g->priority;
		pkts[k].place = g->place;
		pkts[k].placed = g->placed;
		g->off += pkts[k].len;
		k++;
	}
	u->dp.rx_buffered = udp_gro_left(u);
	return k;
}

/* Most iovecs of one receive buffer: the header part, a place's pieces,
 * the rest of the buffer. */
#define UDP_RX_IOVS (2 + HOMA_DP_PLACE_IOVS)

/* udp_place_usable - whether place p can take the bytes of a datagram
 * read into a buffer of UDP_GRO_BUF_BYTES (its header part and the rest of
 * the datagram stay in the buffer). */
static bool udp_place_usable(const struct homa_dp_place *p)
{
	return p->iovcnt >= 1 && p->iovcnt <= HOMA_DP_PLACE_IOVS &&
	       p->len > 0 && p->hdr_len <= HOMA_DP_MATCH_LEN &&
	       p->hdr_len + p->len < UDP_GRO_BUF_BYTES;
}

/* udp_rx_iovs - the iovecs of receive buffer g: all of it, or, with place
 * p, its first p->hdr_len bytes, then p's pieces, then the buffer after
 * hdr_len + len bytes (so that moving the place's bytes back to hdr_len
 * leaves the datagram whole in the buffer).  Returns how many. */
static int udp_rx_iovs(struct udp_gro_buf *g, const struct homa_dp_place *p,
		       struct iovec *iov)
{
	int n = 0;

	if (!p) {
		iov[0].iov_base = g->data;
		iov[0].iov_len = UDP_GRO_BUF_BYTES;
		return 1;
	}
	iov[n].iov_base = g->data;
	iov[n++].iov_len = p->hdr_len;
	for (int j = 0; j < p->iovcnt; j++)
		iov[n++] = p->iov[j];
	iov[n].iov_base = g->data + p->hdr_len + p->len;
	iov[n++].iov_len = UDP_GRO_BUF_BYTES - p->hdr_len - p->len;
	return n;
}

/* udp_unplace - move the bytes datagram g left at place p back into g's
 * buffer, after its header part, where the rest of it follows. */
static void udp_unplace(struct udp_gro_buf *g, const struct homa_dp_place *p)
{
	size_t left = g->len > p->hdr_len ? g->len - p->hdr_len : 0;
	uint8_t *dst = g->data + p->hdr_len;

	if (left > p->len)
		left = p->len;
	for (int j = 0; j < p->iovcnt && left > 0; j++) {
		size_t n = p->iov[j].iov_len < left ? p->iov[j].iov_len : left;

		memcpy(dst, p->iov[j].iov_base, n);
		dst += n;
		left -= n;
	}
}

/* udp_place_matches - whether datagram g, read with place p, is the one p
 * expects: from p->src, its header bytes as p->want under p->mask. */
static bool udp_place_matches(const struct udp_gro_buf *g,
			      const struct homa_dp_place *p)
{
	if (!homa_addr_equal(&g->addr, &p->src))
		return false;
	for (size_t k = 0; k < p->hdr_len; k++)
		if ((g->data[k] & p->mask[k]) != p->want[k])
			return false;
	return true;
}

/* udp_settle - datagram i of a fill was read with place p: it keeps its
 * bytes there when they fill the place exactly, it is one packet (not
 * coalesced) and it is the one p expects; otherwise they move back into
 * its buffer.  A datagram that filled p exactly is marked as tried against
 * it (place i). */
static void udp_settle(struct udp_gro_buf *g, int i,
		       const struct homa_dp_place *p)
{
	if (g->len == p->hdr_len + p->len && g->seg == g->len) {
		g->place = i;
		if (udp_place_matches(g, p)) {
			g->placed = true;
			return;
		}
	}
	udp_unplace(g, p);
}

/*
 * udp_gro_fill - one recvmmsg on fd, a socket of u, of at most max
 * datagrams into u's coalescing buffers after the u->gro_count already
 * filled (all handed out or still to be), which it counts on; buffer i
 * takes its datagram's bytes after a header part at pl's place i when pl
 * gives a usable one (then settled: kept there or moved back, before this
 * returns).  Returns the number of datagrams received (truncated ones are
 * counted and left empty), 0 when none waits, or a negative errno.
 */
static int udp_gro_fill(struct udp_dp *u, int fd, int max,
			const struct homa_dp_placement *pl)
{
	struct mmsghdr msgs[UDP_GRO_BUFS];
	struct iovec iovs[UDP_GRO_BUFS][UDP_RX_IOVS];
	const struct homa_dp_place *place[UDP_GRO_BUFS];
	char cbufs[UDP_GRO_BUFS][UDP_CMSG_SPACE]
		__attribute__((aligned(sizeof(size_t))));
	const int first = u->gro_count;
	int r;

	if (max > UDP_GRO_BUFS - first)
		max = UDP_GRO_BUFS - first;
	if (max <= 0)
		return 0;
	memset(msgs, 0, sizeof(msgs));
	for (int i = first; i < first + max; i++) {
		struct msghdr *m = &msgs[i].msg_hdr;

		place[i] = pl && i < pl->n && udp_place_usable(&pl->places[i])
				   ? &pl->places[i] : NULL;
		m->msg_name = &u->gro[i].addr;
		m->msg_namelen = sizeof(u->gro[i].addr);
		m->msg_iov = iovs[i];
		m->msg_iovlen = (size_t)udp_rx_iovs(&u->gro[i], place[i],
						    iovs[i]);
		m->msg_control = cbufs[i];
		m->msg_controllen = UDP_CMSG_SPACE;
	}
	r = recvmmsg(fd, msgs + first, (unsigned int)max, MSG_DONTWAIT, NULL);
	homa_trace(HOMA_TRACE_DP_RECV, r);
	if (r < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	for (int i = first; i < first + r; i++) {
		struct udp_gro_buf *g = &u->gro[i];
		struct msghdr *m = &msgs[i].msg_hdr;

		g->len = msgs[i].msg_len;
		g->off = 0;
		g->place = -1;
		g->placed = false;
		g->priority = udp_read_cmsgs(m, &g->seg);
		if (g->seg == 0 || g->seg > g->len)
			g->seg = g->len;
		if (m->msg_flags & MSG_TRUNC) {
			u->dp.counters.recv_truncated++;
			g->len = 0;
		}
		if (place[i] && g->len > 0)
			udp_settle(g, i, place[i]);
	}
	u->gro_count = first + r;
	return r;
}

/*
 * udp_bands_ready - which sockets of u have datagrams waiting: bit b for
 * u->dp.socks[b].  With one socket, bit 0 without asking the kernel; with
 * more, one look at the epoll descriptor, which also shows a socket whose
 * error queue holds entries (read at once, homa_dp_errors: an error the
 * socket's pending error did not announce would leave the descriptor
 * readable for nothing).
 */
static unsigned int udp_bands_ready(struct udp_dp *u)
{
	struct epoll_event ev[HOMA_DP_MAX_BANDS];
	unsigned int mask = 0;
	bool err = false;
	int r;

	if (u->dp.nsocks == 1)
		return 1;
	r = epoll_wait(u->dp.fd, ev, u->dp.nsocks, 0);
	for (int i = 0; i < r; i++) {
		if (ev[i].events & EPOLLERR)
			err = true;
		if (ev[i].events & EPOLLIN)
			mask |= 1u << ev[i].data.u32;
	}
	if (err)
		homa_dp_errors(&u->dp);
	return mask;
}

/*
 * udp_band_order - the order in which to read the bands of ready (from
 * udp_bands_ready) into order[]: the high band first, except once in
 * UDP_LOW_BAND_TURN reads that find both ready.  Returns how many.
 */
static int udp_band_order(struct udp_dp *u, unsigned int ready, int *order)
{
	int n = 0;

	for (int b = 0; b < u->dp.nsocks; b++)
		if (ready & (1u << b))
			order[n++] = b;
	if (n < 2)
		return n;
	if (++u->low_waited >= UDP_LOW_BAND_TURN) {
		u->low_waited = 0;
		order[0] = 1;
		order[1] = 0;
	}
	return n;
}

/* One band's coalescing read, for udp_gro_read. */
struct udp_gro_read_ctx {
	struct udp_dp *u;
	int fd;
	const struct homa_dp_placement *pl;
};

/* udp_gro_read - a homa_dp_read_fn over udp_gro_fill (ctx: a struct
 * udp_gro_read_ctx); every datagram read is kept (a truncated one as an
 * empty buffer). */
static int udp_gro_read(void *ctx, int off, int max, int *kept)
{
	const struct udp_gro_read_ctx *c = ctx;
	int r = udp_gro_fill(c->u, c->fd, max, c->pl);

	(void)off; /* udp_gro_fill appends after c->u->gro_count */
	*kept = r > 0 ? r : 0;
	return r;
}

/*
 * udp_gro_fill_band - udp_gro_fill on fd, reading on after EINTR or an
 * error that only reports an ICMP error (homa_dp_recv_retry).  Returns the
 * datagrams read, or a negative errno (counted in recv_errors).
 */
static int udp_gro_fill_band(struct udp_dp *u, int fd, int max,
			     const struct homa_dp_placement *pl)
{
	struct udp_gro_read_ctx c = { u, fd, pl };

	return homa_dp_recv_retry(&u->dp, udp_gro_read, &c, max);
}

/*
 * udp_gro_refill - one new round of kernel reads into u's emptied
 * coalescing buffers: the ready bands in udp_band_order's order (the high
 * band first, mostly), the next one while buffers are left (at most max
 * datagrams in all).  Returns the datagrams read, or a negative errno
 * when the first read failed.
 */
static int udp_gro_refill(struct udp_dp *u, int max,
			  const struct homa_dp_placement *pl)
{
	int order[HOMA_DP_MAX_BANDS];
	int n = udp_band_order(u, udp_bands_ready(u), order);

	u->gro_count = u->gro_next = 0;
	for (int i = 0; i < n && u->gro_count < max; i++) {
		int r = udp_gro_fill_band(u, u->dp.socks[order[i]],
					  max - u->gro_count, pl);

		if (r < 0) {
			if (u->gro_count == 0)
				return r;
			break;
		}
	}
	return u->gro_count;
}

/*
 * udp_recv_gro - homa_dp_recv with coalescing on: packets left from the
 * last coalesced batch first; only when none is left, one new batch (with
 * pl's places, if not NULL: homa_dp_recv_placed).
 * (Buffers are never refilled while packets handed out in this call still
 * point into them.)
 */
static int udp_recv_gro(struct udp_dp *u, struct homa_dp_pkt *pkts, int n,
			const struct homa_dp_placement *pl)
{
	int got = udp_gro_emit(u, pkts, n);

	for (int tries = 0; got == 0 && tries < HOMA_DP_RECV_RETRIES;
	     tries++) {
		int r = udp_gro_refill(u, n < UDP_GRO_BUFS ? n : UDP_GRO_BUFS,
				       pl);

		if (r < 0)
			return r;
		if (r == 0)
			break;
		got = udp_gro_emit(u, pkts, n);
	}
	u->dp.counters.packets_received += (uint64_t)got;
	return got;
}

/* One band's read into the caller's buffers, for udp_each_read. */
struct udp_each_read_ctx {
	struct homa_dp *dp;
	int fd;
	struct homa_dp_pkt *pkts;
};

/* udp_each_read - a homa_dp_read_fn over udp_recv_chunk (ctx: a struct
 * udp_each_read_ctx), into the packets after the off kept. */
static int udp_each_read(void *ctx, int off, int max, int *kept)
{
	const struct udp_each_read_ctx *c = ctx;

	return udp_recv_chunk(c->dp, c->fd, c->pkts + off, max, kept);
}

/* udp_recv_each_band - udp_recv_each from fd, one socket of dp (the
 * packets not counted yet; homa_dp_recv_retry).  Returns the packets
 * received, or a negative errno when none came and the socket is
 * broken. */
static int udp_recv_each_band(struct homa_dp *dp, int fd,
			      struct homa_dp_pkt *pkts, int n)
{
	struct udp_each_read_ctx c = { dp, fd, pkts };

	return homa_dp_recv_retry(dp, udp_each_read, &c, n);
}

/* udp_recv_each - homa_dp_recv with coalescing off: datagrams straight
 * into the caller's buffers, the bands in udp_band_order's order. */
static int udp_recv_each(struct homa_dp *dp, struct homa_dp_pkt *pkts, int n)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	int order[HOMA_DP_MAX_BANDS];
	int nb = udp_band_order(u, udp_bands_ready(u), order);
	int got = 0;

	for (int i = 0; i < nb && got < n; i++) {
		int r = udp_recv_each_band(dp, dp->socks[order[i]], pkts + got,
					   n - got);

		if (r < 0) {
			if (got == 0)
				return r;
			break;
		}
		got += r;
	}
	dp->counters.packets_received += (uint64_t)got;
	return got;
}

/* udp_recv_placed - homa_dp_recv_placed for UDP (contract in
 * homa_datapath.h): places are used while coalescing is on (the buffers
 * are then the datapath's own), else none. */
static int udp_recv_placed(struct homa_dp *dp, struct homa_dp_pkt *pkts,
			   int n, const struct homa_dp_placement *pl)
{
	if (((struct udp_dp *)dp)->gro_on)
		return udp_recv_gro((struct udp_dp *)dp, pkts, n, pl);
	return udp_recv_each(dp, pkts, n);
}

/* udp_recv - homa_dp_recv for UDP (contract in homa_datapath.h). */
static int udp_recv(struct homa_dp *dp, struct homa_dp_pkt *pkts, int n)
{
	return udp_recv_placed(dp, pkts, n, NULL);
}

/* udp_close - homa_dp_close for UDP. */
static void udp_close(struct homa_dp *dp)
{
	for (int b = 0; b < dp->nsocks; b++)
		if (dp->socks[b] >= 0)
			close(dp->socks[b]);
	if (dp->nsocks > 1 && dp->fd >= 0)
		close(dp->fd);
	udp_free((struct udp_dp *)dp);
}

static const struct homa_dp_ops udp_ops = {
	.name = "udp",
	.send = udp_send,
	.recv = udp_recv,
	.recv_placed = udp_recv_placed,
	.close = udp_close,
};
