/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_datapath - the packet I/O under one Homa socket.
 *
 * A datapath is a kernel socket (two with receive bands) bound to one Homa
 * port that sends and receives whole Homa packets in batches.  Every implementation (UDP now,
 * raw IP protocol 146 later) fills in the same operations table, so the
 * socket layer never knows which one it drives.
 *
 * A datapath is not thread-safe: the caller serialises every call on one
 * datapath (the socket layer does so with the socket's lock).
 */
#ifndef HOMA_DATAPATH_H
#define HOMA_DATAPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "homa.h"

/* Most packets one send or receive call moves (larger batches are split). */
#define HOMA_DP_BATCH 64

/*
 * One packet in a batch; or, to send on a datapath whose gather flag is
 * set, a run of segs whole packets to one destination at one priority,
 * back to back in buf[0..len): packet i starts at buf + i * (hdr_len + seg)
 * and is hdr_len + seg bytes long, the last one possibly shorter (it holds
 * the rest of the run's payload_len payload bytes).  segs 0 means one
 * packet at buf.  A run whose payload is not NULL has only its headers at
 * buf (packet i's at buf + i * (hdr_len + seg)) and its payload at
 * payload[0..payload_len) (packet i's from payload + i * seg).
 */
struct homa_dp_pkt {
	uint8_t *buf;                  /* send: the bytes; recv: the space */
	size_t len;                    /* send: bytes at buf; recv: in the
					* space available, out the bytes */
	union sockaddr_in_union addr;  /* send: destination; recv: source */
	uint8_t priority;              /* send: 0..7; recv: the sender's
					* marking (tos >> 5), 0 if unknown */
	uint32_t segs;                 /* send: 0, or packets of a run */
	uint32_t hdr_len;              /* send, run: bytes of each header */
	uint32_t seg;                  /* send, run: payload bytes per packet
					* (the last may have fewer) */
	uint32_t payload_len;          /* send, run: total payload bytes */
	const uint8_t *payload;        /* send, run: NULL (the payload is in
					* the frames at buf), or where it is */
	int place;                     /* recv: -1, or the index of the
					* place this datagram was tried
					* against: one packet whose bytes
					* after hdr_len filled it exactly
					* (homa_dp_recv_placed) */
	bool placed;                   /* recv: ... and it matched: those
					* bytes are at the place, not in buf */
};

/* Most places one homa_dp_recv_placed takes, the pieces of each, and the
 * most header bytes a place matches. */
#define HOMA_DP_MAX_PLACES 8
#define HOMA_DP_PLACE_IOVS 2
#define HOMA_DP_MATCH_LEN 64

/*
 * A place in the caller's memory for the bytes of one expected datagram
 * after its first hdr_len bytes (hdr_len <= HOMA_DP_MATCH_LEN):
 * iov[0..iovcnt), len bytes in all.  The expected datagram comes from src
 * and its first hdr_len bytes b satisfy (b[k] & mask[k]) == want[k].
 */
struct homa_dp_place {
	size_t hdr_len;
	struct iovec iov[HOMA_DP_PLACE_IOVS];
	int iovcnt;
	size_t len;
	union sockaddr_in_union src;
	uint8_t want[HOMA_DP_MATCH_LEN];
	uint8_t mask[HOMA_DP_MATCH_LEN];
};

/* Places for the datagrams of one kernel read (homa_dp_recv_placed):
 * places[i] for the i-th datagram read, i < n. */
struct homa_dp_placement {
	const struct homa_dp_place *places;
	int n;
};

/* Counters of one datapath (read by tests and diagnostics). */
struct homa_dp_counters {
	uint64_t packets_sent;
	uint64_t packets_received;
	uint64_t send_dropped;   /* packets not sent: ENOBUFS, EAGAIN, ... */
	uint64_t recv_truncated; /* datagrams larger than the space: dropped */
	uint64_t recv_errors;    /* receive calls failing with a real error */
	uint64_t icmp_errors;    /* error-queue entries read (ICMP errors of
				  * packets sent, and local errors) */
	uint64_t icmp_unreachable; /* of them: nobody listens
				    * (homa_dp_unreach_kind) for a packet
				    * of this datapath, handed
				    * to the caller (homa_dp_take_unreachable) */
	uint64_t unreach_no_id;    /* such errors whose quote was too short
				    * to hold the packet's RPC id: dropped */
	uint64_t unreach_answered; /* raw IP: ICMP port unreachable sent for
				    * a RESEND to a port nobody holds */
};

/* Unreachable reports a datapath holds until the caller takes them (one
 * already held is not added twice); homa_dp_errors stops reading the error
 * queue when they fill the list. */
#define HOMA_DP_UNREACH_MAX 16

/* One unreachable report: the destination (address and Homa port) of a
 * packet of ours whose host said nothing listens there, and the sender id
 * that packet carried (the RPC it was about, as we know it). */
struct homa_dp_unreach {
	union sockaddr_in_union dest;
	uint64_t id;
};

struct homa_dp;

/* The operations of one kind of datapath. */
struct homa_dp_ops {
	const char *name;
	int (*send)(struct homa_dp *dp, struct homa_dp_pkt *pkts, int n);
	int (*recv)(struct homa_dp *dp, struct homa_dp_pkt *pkts, int n);
	/* optional: recv with places (NULL: recv) */
	int (*recv_placed)(struct homa_dp *dp, struct homa_dp_pkt *pkts,
			   int n, const struct homa_dp_placement *pl);
	void (*close)(struct homa_dp *dp);
};

/* Most kernel sockets (receive bands) of one datapath. */
#define HOMA_DP_MAX_BANDS 2

/*
 * Receive bands: with n 2, a datapath receives on two kernel sockets, the
 * high band (DATA and GRANT packets whose priority is at least high_prio)
 * and the low band (the rest), and receive calls read the high band first
 * (the low band first once in a few calls that find both waiting), so
 * that the packets of short messages and grants do not wait behind bulk
 * data in the kernel's receive queue.  n 1: one socket.
 */
struct homa_dp_bands {
	int n;             /* 1 or 2 */
	uint8_t high_prio; /* 1..7: lowest priority of the high band */
};

/* The state every datapath shares; an implementation may embed it first
 * in a larger struct. */
struct homa_dp {
	const struct homa_dp_ops *ops;
	int fd;            /* what to watch with epoll: socks[0] with one
			    * band, else an epoll descriptor holding every
			    * socket of socks */
	int socks[HOMA_DP_MAX_BANDS]; /* the kernel sockets, high band first;
			    * socks[0] sends */
	int nsocks;        /* sockets in socks (receive bands) */
	int family;        /* AF_INET or AF_INET6 */
	uint16_t port;     /* the local Homa port */
	bool gather;       /* send takes runs (homa_dp_pkt.segs > 0) */
	bool port_unreach_only; /* only a port unreachable says that nobody
			    * listens (raw IP: see homa_dp_unreach_kind) */
	bool rx_buffered;  /* recv holds packets of an earlier kernel read
			    * (the rest of coalesced datagrams): the next
			    * recv hands them out without a system call */
	struct homa_dp_counters counters;
	int num_unreach;   /* entries of unreach in use */
	struct homa_dp_unreach unreach[HOMA_DP_UNREACH_MAX]; /* reports not
			    * yet taken (homa_dp_take_unreachable) */
};

/* Kinds of datapath (same values as the "transport" setting). */
enum homa_dp_kind { HOMA_DP_UDP = 0, HOMA_DP_IP = 1 };

/* First port tried for client sockets, and the last. */
#define HOMA_DP_CLIENT_PORT_MIN 32768
#define HOMA_DP_CLIENT_PORT_MAX 65535

/*
 * homa_dp_open - open a datapath of the given kind.
 * Takes: family AF_INET or AF_INET6; port 0 to pick a free client port
 * (32768..65535, tried in random order), else the exact port to bind;
 * bands NULL for one receive socket, else the receive bands wanted (only
 * the UDP datapath has them; where the kernel refuses them the datapath
 * falls back to one socket, which homa_dp.nsocks shows).
 * Returns 0 and sets *out (the caller owns it; release with homa_dp_close);
 * -EADDRINUSE when the port (or every client port) is taken;
 * -EAFNOSUPPORT for another family; -EPROTONOSUPPORT for a kind that is not
 * built; other negative errnos from socket(2) (-EMFILE, -ENOMEM, -EPERM).
 */
int homa_dp_open(enum homa_dp_kind kind, int family, uint16_t port,
		 const struct homa_dp_bands *bands, struct homa_dp **out);

/*
 * homa_dp_encap_bytes - header bytes a datapath of kind puts between the
 * IP header and each Homa packet: 8 (the UDP header) for HOMA_DP_UDP, 0 for
 * HOMA_DP_IP.  An endpoint subtracts them from the mtu setting so that the
 * IP datagram, not just the Homa packet, fits in mtu.
 */
uint32_t homa_dp_encap_bytes(enum homa_dp_kind kind);

/* homa_udp_open - homa_dp_open for the UDP datapath with one receive
 * socket (same contract). */
int homa_udp_open(int family, uint16_t port, struct homa_dp **out);

/*
 * homa_udp_open_bands - homa_dp_open for the UDP datapath with receive
 * bands (same contract; bands NULL or bands->n 1: homa_udp_open).  The two
 * sockets share the port through SO_REUSEPORT: the first is bound alone
 * (so a port anyone holds is refused), then allows sharing, then the
 * second joins it and a classic BPF program (SO_ATTACH_REUSEPORT_CBPF)
 * steers each datagram to a socket by its Homa type and the priority in
 * its IP header.
 */
int homa_udp_open_bands(int family, uint16_t port,
			const struct homa_dp_bands *bands,
			struct homa_dp **out);

/* homa_ip_open - homa_dp_open for the raw IP protocol 146 datapath (same
 * contract; -EPERM, with a message on stderr once, without CAP_NET_RAW). */
int homa_ip_open(int family, uint16_t port, struct homa_dp **out);

/* homa_dp_fd - the kernel descriptor to watch with epoll (readable when
 * packets wait). */
static inline int homa_dp_fd(const struct homa_dp *dp)
{
	return dp->fd;
}

/* homa_dp_port - the local Homa port. */
static inline uint16_t homa_dp_port(const struct homa_dp *dp)
{
	return dp->port;
}

/*
 * homa_dp_send - send pkts[0..n) (each with its destination and priority;
 * runs only when dp->gather is set).  Packets the kernel refuses (ENOBUFS,
 * EAGAIN, unreachable, ...) are dropped and counted: Homa retransmits.
 * Returns the number of packets actually sent (a run counts its packets).
 */
static inline int homa_dp_send(struct homa_dp *dp, struct homa_dp_pkt *pkts,
			       int n)
{
	return dp->ops->send(dp, pkts, n);
}

/*
 * homa_dp_recv - receive up to n packets without blocking.
 * Takes: pkts[i].buf/len describing the space for packet i.
 * Returns the number received (0 when none is waiting) and fills
 * len, addr and priority of each (and place -1, placed false); truncated
 * datagrams are dropped and counted.  An implementation may instead point
 * pkts[i].buf into memory of its own (coalesced datagrams), valid until
 * the next recv or close on dp.
 * Fewer than n packets does not prove the socket empty: the caller keeps
 * reading, or relies on its readiness notification.  One call takes at
 * most n datagrams from the kernel (a coalesced one may hold more than n
 * packets: the rest wait in the datapath, rx_buffered).  Returns a negative
 * errno only for a broken socket (-EBADF...).
 */
static inline int homa_dp_recv(struct homa_dp *dp, struct homa_dp_pkt *pkts,
			       int n)
{
	return dp->ops->recv(dp, pkts, n);
}

/*
 * homa_dp_recv_placed - homa_dp_recv, letting the kernel write the payload
 * of the datagrams it reads where pl's places say, so that nobody has to
 * copy it there afterwards.  A datagram that is one packet whose bytes
 * after hdr_len exactly fill its place comes back with place set to the
 * place's index; when it is also the expected one (struct homa_dp_place),
 * placed is set (buf holds its first hdr_len bytes, len counts them all);
 * every other datagram comes back whole in buf as from homa_dp_recv (its
 * bytes moved out of the place before this returns), and a place may then
 * hold any bytes.  pl NULL, or a datapath that cannot place: homa_dp_recv
 * (place -1 everywhere).
 */
static inline int homa_dp_recv_placed(struct homa_dp *dp,
				      struct homa_dp_pkt *pkts, int n,
				      const struct homa_dp_placement *pl)
{
	if (!pl || pl->n == 0 || !dp->ops->recv_placed)
		return dp->ops->recv(dp, pkts, n);
	return dp->ops->recv_placed(dp, pkts, n, pl);
}

/*
 * homa_dp_unreach_kind - whether the extended error ee, read from a socket
 * of dp, says that nothing listens at the destination: ICMP (ICMPv6) port
 * unreachable, and, unless dp->port_unreach_only, protocol unreachable
 * (ICMPv6: unrecognized next header).  Over raw IP a protocol unreachable
 * says nothing of the kind: Linux passes over a raw socket whose receive
 * buffer is full and, when no other raw socket of the protocol took the
 * packet, answers with protocol unreachable, so a live server that falls
 * behind its input would fail its clients' RPCs; a port nobody holds is
 * answered with port unreachable by the host's libhoma datapaths.
 */
struct sock_extended_err;
bool homa_dp_unreach_kind(const struct homa_dp *dp,
			  const struct sock_extended_err *ee);

/*
 * homa_dp_errors - read the error queue of each of dp's sockets
 * (IP_RECVERR/IPV6_RECVERR are on for every datapath) until it is empty,
 * without blocking.  Each
 * error that says nobody listens (homa_dp_unreach_kind) whose quoted
 * packet is a Homa packet of this datapath (source port dp->port) adds the packet's destination address,
 * Homa port and sender id to dp->unreach; one whose quote ends before the
 * sender id (bytes 20..27 of the Homa header) is counted (unreach_no_id)
 * and dropped, as is everything else.  The datapath calls it itself
 * whenever a send or receive call fails with an errno that reports an ICMP
 * error; the caller calls it when poll or epoll reports POLLERR on
 * homa_dp_fd (an error the socket's pending error did not announce), so
 * that the descriptor does not stay ready for nothing.
 * Returns true when it stopped because dp->unreach was full: the rest
 * waits in the queue (and keeps POLLERR up) until the caller has taken the
 * reports and calls again.
 */
bool homa_dp_errors(struct homa_dp *dp);

/*
 * homa_dp_take_unreachable - move the oldest report homa_dp_errors
 * recorded into *dest and *id.  Returns false when there is none.
 */
bool homa_dp_take_unreachable(struct homa_dp *dp,
			      union sockaddr_in_union *dest, uint64_t *id);

/*
 * homa_dp_icmp_errno - whether err, failing a send or receive call on a
 * datapath socket, only reports an ICMP error for an earlier packet (the
 * socket's pending error): the call may be retried, and the error queue
 * holds the details (homa_dp_errors).
 */
bool homa_dp_icmp_errno(int err);

/*
 * homa_dp_recverr_on - turn on IP_RECVERR (IPv4) or IPV6_RECVERR (IPv6) on
 * the datapath socket fd of family, so that ICMP errors of the packets it
 * sends land in its error queue (for homa_dp_errors).  Failure is ignored:
 * RPCs to a port where nobody listens then time out instead.
 */
void homa_dp_recverr_on(int fd, int family);

/* homa_dp_close - close the socket and free dp.  NULL is ignored. */
static inline void homa_dp_close(struct homa_dp *dp)
{
	if (dp)
		dp->ops->close(dp);
}

#endif /* HOMA_DATAPATH_H */
