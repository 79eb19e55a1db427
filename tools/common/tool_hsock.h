/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tool_hsock - a Homa socket with its receive buffer region, as the tools
 * use one: open (socket, optional bind, region mapped lazily and given
 * with SO_HOMA_SET_BUF), receive (handing back the previous message's
 * bpages), and the received message as iovecs over the region after its
 * bpage layout has been checked.
 */
#ifndef TOOL_HSOCK_H
#define TOOL_HSOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "homa.h"

/* One Homa socket, its region and the receive state of one thread. */
struct tool_hsock {
	int fd;
	uint8_t *region;
	size_t region_len;
	struct homa_recvmsg_args args;  /* the last message received; its
					 * bpages go back with the next
					 * receive */
	struct msghdr msg;              /* msg_control = &args */
};

/*
 * tool_region_attach - map len bytes (private, anonymous, MAP_NORESERVE:
 * bpages cost memory only once used) and give them to Homa socket fd as
 * its buffer region (SO_HOMA_SET_BUF).  Returns the region, or NULL with
 * errno set and the failed call named in why (whycap bytes); nothing is
 * left mapped then.
 */
uint8_t *tool_region_attach(int fd, size_t len, char *why, size_t whycap);

/*
 * tool_hsock_open - a Homa socket of family, bound to *bind_addr unless
 * bind_addr is NULL, with a region of region_len bytes.  Returns 0, or -1
 * with errno set (EADDRINUSE: the port is taken) and the failed call named
 * in why ("homa_socket: ...", "homa_bind port P: ...", "mmap: ...",
 * "SO_HOMA_SET_BUF: ..."); nothing is left open then.
 */
int tool_hsock_open(struct tool_hsock *h, int family,
		    const union sockaddr_in_union *bind_addr,
		    size_t region_len, char *why, size_t whycap);

/* tool_hsock_close - close the socket, then unmap its region.  Returns
 * homa_close's result (errno set on failure). */
int tool_hsock_close(struct tool_hsock *h);

/* tool_hsock_share - make view a second handle of h's socket and region
 * with receive state of its own, for another thread to receive on. */
void tool_hsock_share(struct tool_hsock *view, const struct tool_hsock *h);

/*
 * tool_hsock_recv - one homa_recvmsg for flags (HOMA_RECVMSG_*) and RPC id
 * (0: any), handing back the bpages of the previous message.  Returns the
 * length with h->args describing the message, or -1 with errno (h->args.id
 * names a failed RPC, 0 when the error concerns no RPC).  EINTR is
 * retried.
 */
ssize_t tool_hsock_recv(struct tool_hsock *h, int flags, uint64_t id);

/*
 * tool_homa_sendmsg - a request of len bytes from buf to dest on Homa
 * socket fd through homa_sendmsg with flags (MSG_DONTWAIT: fail with
 * EAGAIN rather than wait for send memory) and completion cookie; its id
 * in *id unless id is NULL.  Returns homa_sendmsg's result (0, or -1 with
 * errno).
 */
int tool_homa_sendmsg(int fd, const union sockaddr_in_union *dest,
		      const void *buf, size_t len, uint64_t cookie, int flags,
		      uint64_t *id);

/*
 * tool_bpages_check - whether bpages offs[0..n) hold a message of len
 * bytes in a region of region_len bytes the way the library lays messages
 * out: ceil(len / HOMA_BPAGE_SIZE) entries, all but the last whole
 * bpage-aligned bpages, the last a fragment inside one bpage, every byte
 * inside the region.  Returns 0, or -1 with the reason in why.
 */
int tool_bpages_check(const uint32_t *offs, uint32_t n, size_t len,
		      size_t region_len, char *why, size_t whycap);

/*
 * tool_hsock_iov - iovecs (HOMA_MAX_BPAGES at most) over the message of
 * len bytes that h->args describes.  Returns their count, or -1 when its
 * bpages fail tool_bpages_check (a library fault).
 */
int tool_hsock_iov(const struct tool_hsock *h, size_t len, struct iovec *iov);

#endif /* TOOL_HSOCK_H */
