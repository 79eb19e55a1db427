/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tool_addr - IPv4 and IPv6 socket addresses (union sockaddr_in_union of
 * homa.h) for the tools and tests: the wildcard and loopback addresses of
 * a family, the port of an address, its length and its text.
 */
#ifndef TOOL_ADDR_H
#define TOOL_ADDR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "homa.h"

/* tool_addr_any - the wildcard address of family (AF_INET6, else AF_INET)
 * with port (host order), for bind. */
union sockaddr_in_union tool_addr_any(int family, int port);

/* tool_addr_loopback - 127.0.0.1 or ::1 (family AF_INET6) with port. */
union sockaddr_in_union tool_addr_loopback(int family, int port);

/* tool_addr_with_port - a copy of a with its port replaced by port. */
union sockaddr_in_union tool_addr_with_port(const union sockaddr_in_union *a,
					    int port);

/* tool_addr_port - the port of a in host order; 0 when a is neither IPv4
 * nor IPv6. */
uint16_t tool_addr_port(const union sockaddr_in_union *a);

/* tool_addr_len - the sockaddr length of a's family (for bind, connect). */
socklen_t tool_addr_len(const union sockaddr_in_union *a);

/* tool_addr_text - "ADDR:PORT" (IPv6: "[ADDR]:PORT") of a into buf of cap
 * bytes; returns buf. */
const char *tool_addr_text(const union sockaddr_in_union *a, char *buf,
			   size_t cap);

#endif /* TOOL_ADDR_H */
