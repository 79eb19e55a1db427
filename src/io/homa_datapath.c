/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_datapath - the choice between datapath implementations, and what
 * they share: the ICMP errors of the error queue.
 */
#include <errno.h>
#include <time.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "homa_addr.h"
#include "homa_datapath.h"

/* See homa_datapath.h. */
uint32_t homa_dp_encap_bytes(enum homa_dp_kind kind)
{
	return kind == HOMA_DP_UDP ? 8 : 0;
}

/* See homa_datapath.h. */
int homa_dp_open(enum homa_dp_kind kind, int family, uint16_t port,
		 const struct homa_dp_bands *bands, struct homa_dp **out)
{
	*out = NULL;
	switch (kind) {
	case HOMA_DP_UDP:
		return homa_udp_open_bands(family, port, bands, out);
	case HOMA_DP_IP:
		return homa_ip_open(family, port, out);
	}
	return -EPROTONOSUPPORT;
}

/* ---- ICMP errors (error queue) ---- */

/* ICMP (RFC 792) destination unreachable and its codes. */
#define DP_ICMP_DEST_UNREACH 3
#define DP_ICMP_PROT_UNREACH 2
#define DP_ICMP_PORT_UNREACH 3
/* ICMPv6 (RFC 4443): destination unreachable, port unreachable; parameter
 * problem, unrecognized next header (IPv6's protocol unreachable). */
#define DP_ICMP6_DEST_UNREACH 1
#define DP_ICMP6_PORT_UNREACH 4
#define DP_ICMP6_PARAM_PROB 4
#define DP_ICMP6_BAD_NEXT_HDR 1

/* Bytes of the quoted packet read from an error: its Homa common header.
 * The ports are bytes 0..3, the sender id bytes 20..27. */
#define DP_QUOTE_BYTES 28
#define DP_QUOTE_PORTS 4
#define DP_QUOTE_ID 20

/* Error-queue entries read at most by one homa_dp_errors. */
#define DP_ERRQUEUE_MAX 256

/* Control-message space of one error-queue entry. */
#define DP_ERR_CMSG_SPACE 512

/* See homa_datapath.h. */
void homa_dp_recverr_on(int fd, int family)
{
	int on = 1;

	if (family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &on,
				 sizeof(on));
	else
		(void)setsockopt(fd, IPPROTO_IP, IP_RECVERR, &on, sizeof(on));
}

/* See homa_datapath.h. */
bool homa_dp_icmp_errno(int err)
{
	switch (err) {
	case ECONNREFUSED:
	case EHOSTUNREACH:
	case ENETUNREACH:
	case EHOSTDOWN:
	case ENOPROTOOPT:
	case EPROTO:
	case EMSGSIZE:
	case ENONET:
	case EACCES:
		return true;
	default:
		return false;
	}
}

/* See homa_datapath.h. */
bool homa_dp_unreach_kind(const struct homa_dp *dp,
			  const struct sock_extended_err *ee)
{
	bool prot = !dp->port_unreach_only;

	if (ee->ee_origin == SO_EE_ORIGIN_ICMP)
		return ee->ee_type == DP_ICMP_DEST_UNREACH &&
		       (ee->ee_code == DP_ICMP_PORT_UNREACH ||
			(prot && ee->ee_code == DP_ICMP_PROT_UNREACH));
	if (ee->ee_origin == SO_EE_ORIGIN_ICMP6)
		return (ee->ee_type == DP_ICMP6_DEST_UNREACH &&
			ee->ee_code == DP_ICMP6_PORT_UNREACH) ||
		       (prot && ee->ee_type == DP_ICMP6_PARAM_PROB &&
			ee->ee_code == DP_ICMP6_BAD_NEXT_HDR);
	return false;
}

/* dp_find_ee - the extended error carried by m's control messages, or
 * NULL. */
static const struct sock_extended_err *dp_find_ee(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		bool v4 = c->cmsg_level == IPPROTO_IP &&
			  c->cmsg_type == IP_RECVERR;
		bool v6 = c->cmsg_level == IPPROTO_IPV6 &&
			  c->cmsg_type == IPV6_RECVERR;

		if ((v4 || v6) &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct sock_extended_err)))
			return (const struct sock_extended_err *)
				CMSG_DATA(c);
	}
	return NULL;
}

/*
 * dp_quoted_dest - check the quoted packet q[0..len) (from its Homa header
 * on) of an error whose offending destination is *dest (its port: the UDP
 * destination port, 0 over raw IP) and set dest's port to the Homa port.
 * Returns false when it is not a packet of dp's: its Homa source port is
 * not ours, its Homa and UDP destination ports differ, or nothing names the
 * port (a raw IP quote too short to hold it).
 */
static bool dp_quoted_dest(const struct homa_dp *dp, const uint8_t *q,
			   size_t len, union sockaddr_in_union *dest)
{
	uint16_t named = homa_addr_port(dest);

	if (dest->sa.sa_family != dp->family)
		return false;
	if (len >= DP_QUOTE_PORTS) {
		uint16_t sport = (uint16_t)(q[0] << 8 | q[1]);
		uint16_t dport = (uint16_t)(q[2] << 8 | q[3]);

		if (sport != dp->port || (named != 0 && named != dport))
			return false;
		named = dport;
	}
	/* A quote of the UDP header only: the kernel matched it to this
	 * socket, and the UDP port is the Homa port. */
	if (named == 0)
		return false;
	homa_addr_set_port(dest, named);
	return true;
}

/* dp_quoted_id - the sender id of the quoted packet q[0..len) (from its
 * Homa header on), or 0 when the quote ends before it. */
static uint64_t dp_quoted_id(const uint8_t *q, size_t len)
{
	uint64_t id = 0;

	if (len < DP_QUOTE_ID + 8)
		return 0;
	for (int i = 0; i < 8; i++)
		id = id << 8 | q[DP_QUOTE_ID + i];
	return id;
}

/* dp_add_unreach - record (dest, id) in dp->unreach, once (the caller
 * checked that the list has room). */
static void dp_add_unreach(struct homa_dp *dp,
			   const union sockaddr_in_union *dest, uint64_t id)
{
	struct homa_dp_unreach *u;

	for (int i = 0; i < dp->num_unreach; i++)
		if (dp->unreach[i].id == id &&
		    homa_addr_equal(&dp->unreach[i].dest, dest))
			return;
	u = &dp->unreach[dp->num_unreach++];
	homa_addr_copy(&u->dest, dest);
	u->id = id;
	dp->counters.icmp_unreachable++;
}

/*
 * dp_read_one_error - read one entry of the error queue of fd, a socket of
 * dp, and record it if it says nothing listens at a destination of ours
 * (the caller checked that dp->unreach has room).  Returns false when the
 * queue is empty (or the read fails).
 */
static bool dp_read_one_error(struct homa_dp *dp, int fd)
{
	char cbuf[DP_ERR_CMSG_SPACE] __attribute__((aligned(sizeof(size_t))));
	uint8_t quote[DP_QUOTE_BYTES];
	union sockaddr_in_union dest;
	struct iovec iov = { quote, sizeof(quote) };
	struct msghdr m;
	const struct sock_extended_err *ee;
	uint64_t id;
	ssize_t r;

	memset(&m, 0, sizeof(m));
	memset(&dest, 0, sizeof(dest));
	m.msg_name = &dest;
	m.msg_namelen = sizeof(dest);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	r = recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT);
	if (r < 0)
		return errno == EINTR;
	dp->counters.icmp_errors++;
	ee = dp_find_ee(&m);
	if (!ee || !homa_dp_unreach_kind(dp, ee) ||
	    !dp_quoted_dest(dp, quote, (size_t)r, &dest))
		return true;
	id = dp_quoted_id(quote, (size_t)r);
	if (id == 0)
		dp->counters.unreach_no_id++;
	else
		dp_add_unreach(dp, &dest, id);
	return true;
}

/* See homa_datapath.h. */
bool homa_dp_errors(struct homa_dp *dp)
{
	for (int b = 0; b < dp->nsocks; b++)
		for (int i = 0; i < DP_ERRQUEUE_MAX; i++) {
			if (dp->num_unreach == HOMA_DP_UNREACH_MAX)
				return true;
			if (!dp_read_one_error(dp, dp->socks[b]))
				break;
		}
	return false;
}

/* See homa_datapath.h. */
bool homa_dp_take_unreachable(struct homa_dp *dp,
			      union sockaddr_in_union *dest, uint64_t *id)
{
	if (dp->num_unreach == 0)
		return false;
	homa_addr_copy(dest, &dp->unreach[0].dest);
	*id = dp->unreach[0].id;
	dp->num_unreach--;
	memmove(&dp->unreach[0], &dp->unreach[1],
		(size_t)dp->num_unreach * sizeof(dp->unreach[0]));
	return true;
}
