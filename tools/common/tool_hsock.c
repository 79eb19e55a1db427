// SPDX-License-Identifier: BSD-2-Clause
/* A Homa socket with its buffer region: see tool_hsock.h. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "tool_addr.h"
#include "tool_hsock.h"

uint8_t *tool_region_attach(int fd, size_t len, char *why, size_t whycap)
{
	struct homa_set_buf_args buf;
	void *region;
	int err;

	region = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (region == MAP_FAILED) {
		snprintf(why, whycap, "mmap: %s", strerror(errno));
		return NULL;
	}
	buf.start = region;
	buf.length = len;
	if (homa_setsockopt(fd, IPPROTO_HOMA, SO_HOMA_SET_BUF, &buf,
			    sizeof(buf)) < 0) {
		err = errno;
		snprintf(why, whycap, "SO_HOMA_SET_BUF: %s", strerror(err));
		munmap(region, len);
		errno = err;
		return NULL;
	}
	return region;
}

/* close_keeping_errno - homa_close fd without changing errno. */
static void close_keeping_errno(int fd)
{
	int err = errno;

	homa_close(fd);
	errno = err;
}

int tool_hsock_open(struct tool_hsock *h, int family,
		    const union sockaddr_in_union *bind_addr,
		    size_t region_len, char *why, size_t whycap)
{
	memset(h, 0, sizeof(*h));
	h->fd = homa_socket(family, SOCK_DGRAM, IPPROTO_HOMA);
	if (h->fd < 0) {
		snprintf(why, whycap, "homa_socket: %s", strerror(errno));
		return -1;
	}
	if (bind_addr && homa_bind(h->fd, &bind_addr->sa,
				   tool_addr_len(bind_addr)) < 0) {
		snprintf(why, whycap, "homa_bind port %u: %s",
			 tool_addr_port(bind_addr), strerror(errno));
		close_keeping_errno(h->fd);
		return -1;
	}
	h->region = tool_region_attach(h->fd, region_len, why, whycap);
	if (!h->region) {
		close_keeping_errno(h->fd);
		return -1;
	}
	h->region_len = region_len;
	h->msg.msg_control = &h->args;
	h->msg.msg_controllen = sizeof(h->args);
	return 0;
}

int tool_hsock_close(struct tool_hsock *h)
{
	int rc = homa_close(h->fd), err = errno;

	munmap(h->region, h->region_len);
	errno = err;
	return rc;
}

void tool_hsock_share(struct tool_hsock *view, const struct tool_hsock *h)
{
	*view = *h;
	memset(&view->args, 0, sizeof(view->args));
	view->msg.msg_control = &view->args;
}

ssize_t tool_hsock_recv(struct tool_hsock *h, int flags, uint64_t id)
{
	ssize_t n;

	do {
		h->args.id = id;
		h->args.flags = flags;
		n = homa_recvmsg(h->fd, &h->msg, 0);
	} while (n < 0 && errno == EINTR);
	return n;
}

/* See tool_hsock.h. */
int tool_homa_sendmsg(int fd, const union sockaddr_in_union *dest,
		      const void *buf, size_t len, uint64_t cookie, int flags,
		      uint64_t *id)
{
	struct homa_sendmsg_args args = { .id = 0,
					  .completion_cookie = cookie };
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg;

	memset(&msg, 0, sizeof(msg));
	msg.msg_name = (void *)dest;
	msg.msg_namelen = dest->sa.sa_family == AF_INET6
			  ? sizeof(struct sockaddr_in6)
			  : sizeof(struct sockaddr_in);
	msg.msg_iov = &v;
	msg.msg_iovlen = 1;
	msg.msg_control = &args;
	if (homa_sendmsg(fd, &msg, flags) < 0)
		return -1;
	if (id)
		*id = args.id;
	return 0;
}

/* bpage_check - entry i (offset off) of the need entries of a message of
 * len bytes; returns 0 or -1 with why (see tool_bpages_check). */
static int bpage_check(size_t i, size_t need, size_t off, size_t len,
		       size_t region_len, char *why, size_t whycap)
{
	size_t chunk = i + 1 < need ? HOMA_BPAGE_SIZE
				    : len - HOMA_BPAGE_SIZE * (need - 1);

	if (i + 1 < need && off % HOMA_BPAGE_SIZE != 0) {
		snprintf(why, whycap, "entry %zu (offset %zu) of a %zu-byte "
			 "message not bpage-aligned", i, off, len);
		return -1;
	}
	if (off % HOMA_BPAGE_SIZE + chunk > HOMA_BPAGE_SIZE) {
		snprintf(why, whycap, "last entry (offset %zu, %zu bytes) "
			 "crosses a bpage", off, chunk);
		return -1;
	}
	if (off >= region_len || chunk > region_len - off) {
		snprintf(why, whycap, "entry %zu (offset %zu, %zu bytes) "
			 "outside the %zu-byte region", i, off, chunk,
			 region_len);
		return -1;
	}
	return 0;
}

int tool_bpages_check(const uint32_t *offs, uint32_t n, size_t len,
		      size_t region_len, char *why, size_t whycap)
{
	size_t need = (len + HOMA_BPAGE_SIZE - 1) / HOMA_BPAGE_SIZE, i;

	if (n != need || n > HOMA_MAX_BPAGES) {
		snprintf(why, whycap, "length %zu in %u bpages, want %zu", len,
			 n, need);
		return -1;
	}
	for (i = 0; i < need; i++)
		if (bpage_check(i, need, offs[i], len, region_len, why,
				whycap) < 0)
			return -1;
	return 0;
}

int tool_hsock_iov(const struct tool_hsock *h, size_t len, struct iovec *iov)
{
	uint32_t i, n = h->args.num_bpages;
	size_t chunk, off = 0;
	char why[128];

	if (tool_bpages_check(h->args.bpage_offsets, n, len, h->region_len,
			      why, sizeof(why)) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		chunk = len - off < HOMA_BPAGE_SIZE ? len - off
						    : HOMA_BPAGE_SIZE;
		iov[i].iov_base = h->region + h->args.bpage_offsets[i];
		iov[i].iov_len = chunk;
		off += chunk;
	}
	return (int)n;
}
