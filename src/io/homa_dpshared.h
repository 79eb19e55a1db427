/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_dpshared - what the datapath implementations (homa_udp.c,
 * homa_ip.c) share to set up and read their kernel sockets: addresses
 * and their lengths, buffer sizes, the wildcard bind, the choice of a client port
 * and the receive loop that reads on past interruptions and ICMP errors.
 * Callers of a datapath use homa_datapath.h; this header is for the
 * implementations.
 */
#ifndef HOMA_DPSHARED_H
#define HOMA_DPSHARED_H

#include <stdint.h>
#include <sys/socket.h>

#include "homa_datapath.h"

/* Random client ports tried before a scan of the whole range. */
#define HOMA_DP_RANDOM_TRIES 64

/* Reads retried by homa_dp_recv_retry after an interruption or an error
 * that only reports an ICMP error of an earlier packet. */
#define HOMA_DP_RECV_RETRIES 4

/*
 * homa_dp_addr_len - the sockaddr length of family: that of a sockaddr_in
 * for AF_INET, of a sockaddr_in6 for AF_INET6, 0 for any other family.
 */
socklen_t homa_dp_addr_len(int family);

/*
 * homa_dp_addr_any, homa_dp_addr_loopback - the wildcard address, or the
 * loopback address (127.0.0.1, ::1), of family (AF_INET6, else AF_INET)
 * with port (host order); the unused bytes are zero.
 */
union sockaddr_in_union homa_dp_addr_any(int family, uint16_t port);
union sockaddr_in_union homa_dp_addr_loopback(int family, uint16_t port);

/*
 * homa_dp_set_bufs - ask for bytes of receive and of send buffer on fd:
 * SO_RCVBUFFORCE / SO_SNDBUFFORCE (beyond the sysctl limits; allowed with
 * CAP_NET_ADMIN), else SO_RCVBUF / SO_SNDBUF (capped by the kernel).
 * Failures are ignored: the defaults still work, only with more drops.
 */
void homa_dp_set_bufs(int fd, int bytes);

/*
 * homa_dp_bind_port - bind fd, a socket of family (AF_INET or AF_INET6),
 * to the wildcard address and port (0: the kernel picks one).  Returns 0,
 * or a negative errno from bind(2) (-EADDRINUSE when the port is taken).
 */
int homa_dp_bind_port(int fd, int family, uint16_t port);

/*
 * homa_dp_random - a random 32-bit number: getrandom(2), else (no entropy
 * yet, or no such call) a weak mix of rand() and the process id.
 */
uint32_t homa_dp_random(void);

/*
 * A try of a client port for homa_dp_client_port: returns a value >= 0
 * when it took the port (the caller's result, e.g. a descriptor),
 * -EADDRINUSE when the port is taken, or another negative errno that ends
 * the search.
 */
typedef int (*homa_dp_port_try_fn)(void *ctx, uint16_t port);

/*
 * homa_dp_client_port - take a free port of HOMA_DP_CLIENT_PORT_MIN..MAX
 * with try_port(ctx, port): HOMA_DP_RANDOM_TRIES random ports, then every
 * port of the range from a random start.  Returns what the successful try
 * returned and sets *port to its port; -EADDRINUSE when every try found
 * its port taken; another negative errno as soon as a try returns one.
 */
int homa_dp_client_port(homa_dp_port_try_fn try_port, void *ctx,
			uint16_t *port);

/*
 * A kernel read for homa_dp_recv_retry: read at most max datagrams
 * (max <= HOMA_DP_BATCH) after the off already kept, without blocking.
 * Returns the datagrams the kernel handed over, of which it sets *kept to
 * those it keeps (the rest were dropped and counted); 0 when none waits;
 * or a negative errno.
 */
typedef int (*homa_dp_read_fn)(void *ctx, int off, int max, int *kept);

/*
 * homa_dp_recv_retry - read up to n datagrams of dp with read(ctx, ...), in
 * reads of at most HOMA_DP_BATCH, until the socket is empty (a read that
 * got fewer than it asked for) or n are kept.  A read failing with EINTR,
 * or with an errno that only reports an ICMP error of an earlier packet
 * (homa_dp_icmp_errno; the error queue is then read, homa_dp_errors), is
 * tried again, HOMA_DP_RECV_RETRIES times at most in all.  Another error
 * is counted (dp->counters.recv_errors) and ends the loop.  Returns the
 * datagrams kept, or the negative errno when that error came before any
 * was kept.  Does not count packets_received (the caller does).
 */
int homa_dp_recv_retry(struct homa_dp *dp, homa_dp_read_fn read, void *ctx,
		       int n);

#endif /* HOMA_DPSHARED_H */
