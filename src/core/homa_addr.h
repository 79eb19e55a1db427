/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_addr - small helpers on union sockaddr_in_union: family checks,
 * ports, equality and hashing of addresses (with or without the port).
 */
#ifndef HOMA_ADDR_H
#define HOMA_ADDR_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "homa.h"

/* homa_addr_valid - true when a's family is AF_INET or AF_INET6. */
static inline bool homa_addr_valid(const union sockaddr_in_union *a)
{
	return a->sa.sa_family == AF_INET || a->sa.sa_family == AF_INET6;
}

/* homa_addr_port - the port of a valid address, in host order. */
static inline uint16_t homa_addr_port(const union sockaddr_in_union *a)
{
	return ntohs(a->sa.sa_family == AF_INET6 ? a->in6.sin6_port
						  : a->in4.sin_port);
}

/* homa_addr_set_port - set the port (host order) of a valid address. */
static inline void homa_addr_set_port(union sockaddr_in_union *a,
				      uint16_t port)
{
	if (a->sa.sa_family == AF_INET6)
		a->in6.sin6_port = htons(port);
	else
		a->in4.sin_port = htons(port);
}

/* homa_addr_same_host - true when a and b name the same IP address
 * (ports ignored). */
static inline bool homa_addr_same_host(const union sockaddr_in_union *a,
				       const union sockaddr_in_union *b)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return false;
	if (a->sa.sa_family == AF_INET6)
		return memcmp(&a->in6.sin6_addr, &b->in6.sin6_addr, 16) == 0;
	return a->in4.sin_addr.s_addr == b->in4.sin_addr.s_addr;
}

/* homa_addr_equal - same host and same port. */
static inline bool homa_addr_equal(const union sockaddr_in_union *a,
				   const union sockaddr_in_union *b)
{
	return homa_addr_same_host(a, b) &&
	       homa_addr_port(a) == homa_addr_port(b);
}

/* homa_addr_is_loopback - true when a is a loopback address: 127.0.0.0/8,
 * ::1 or ::ffff:127.0.0.0/104.  Such packets never wait in a NIC queue. */
static inline bool homa_addr_is_loopback(const union sockaddr_in_union *a)
{
	static const uint8_t one[16] = { [15] = 1 };
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	const uint8_t *b;

	if (a->sa.sa_family == AF_INET)
		return (ntohl(a->in4.sin_addr.s_addr) >> 24) == 127;
	if (a->sa.sa_family != AF_INET6)
		return false;
	b = a->in6.sin6_addr.s6_addr;
	return memcmp(b, one, 16) == 0 ||
	       (memcmp(b, v4mapped, 12) == 0 && b[12] == 127);
}

/* homa_addr_hash - a hash of the host address (ports ignored). */
static inline uint64_t homa_addr_hash(const union sockaddr_in_union *a)
{
	uint64_t h = 1469598103934665603ull;
	const uint8_t *p;
	size_t n, i;

	if (a->sa.sa_family == AF_INET6) {
		p = (const uint8_t *)&a->in6.sin6_addr;
		n = 16;
	} else {
		p = (const uint8_t *)&a->in4.sin_addr;
		n = 4;
	}
	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* homa_addr_copy - copy a valid address, clearing unused bytes. */
static inline void homa_addr_copy(union sockaddr_in_union *dst,
				  const union sockaddr_in_union *src)
{
	memset(dst, 0, sizeof(*dst));
	if (src->sa.sa_family == AF_INET6)
		dst->in6 = src->in6;
	else
		dst->in4 = src->in4;
}

#endif /* HOMA_ADDR_H */
