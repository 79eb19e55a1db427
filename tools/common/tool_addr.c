// SPDX-License-Identifier: BSD-2-Clause
/* Socket addresses: see tool_addr.h. */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "tool_addr.h"

union sockaddr_in_union tool_addr_any(int family, int port)
{
	union sockaddr_in_union a;

	memset(&a, 0, sizeof(a));
	if (family == AF_INET6) {
		a.in6.sin6_family = AF_INET6;
		a.in6.sin6_addr = in6addr_any;
		a.in6.sin6_port = htons((uint16_t)port);
	} else {
		a.in4.sin_family = AF_INET;
		a.in4.sin_addr.s_addr = htonl(INADDR_ANY);
		a.in4.sin_port = htons((uint16_t)port);
	}
	return a;
}

union sockaddr_in_union tool_addr_loopback(int family, int port)
{
	union sockaddr_in_union a = tool_addr_any(family, port);

	if (family == AF_INET6)
		a.in6.sin6_addr = in6addr_loopback;
	else
		a.in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

union sockaddr_in_union tool_addr_with_port(const union sockaddr_in_union *a,
					    int port)
{
	union sockaddr_in_union r = *a;

	if (r.sa.sa_family == AF_INET6)
		r.in6.sin6_port = htons((uint16_t)port);
	else
		r.in4.sin_port = htons((uint16_t)port);
	return r;
}

uint16_t tool_addr_port(const union sockaddr_in_union *a)
{
	if (a->sa.sa_family == AF_INET)
		return ntohs(a->in4.sin_port);
	if (a->sa.sa_family == AF_INET6)
		return ntohs(a->in6.sin6_port);
	return 0;
}

socklen_t tool_addr_len(const union sockaddr_in_union *a)
{
	return a->sa.sa_family == AF_INET6 ? sizeof(a->in6) : sizeof(a->in4);
}

const char *tool_addr_text(const union sockaddr_in_union *a, char *buf,
			   size_t cap)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (a->sa.sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &a->in6.sin6_addr, host, sizeof(host));
		snprintf(buf, cap, "[%s]:%u", host, ntohs(a->in6.sin6_port));
	} else {
		inet_ntop(AF_INET, &a->in4.sin_addr, host, sizeof(host));
		snprintf(buf, cap, "%s:%u", host, ntohs(a->in4.sin_port));
	}
	return buf;
}
