// SPDX-License-Identifier: BSD-2-Clause
/* Length-prefixed frames over TCP: see tool_frame.h. */

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "tool_frame.h"

int tool_frame_iov(struct iovec *iov, const uint8_t *hdr,
		   const uint8_t *payload, size_t len, size_t sent)
{
	if (sent < TOOL_FRAME_HDR) {
		iov[0].iov_base = (void *)(hdr + sent);
		iov[0].iov_len = TOOL_FRAME_HDR - sent;
		iov[1].iov_base = (void *)payload;
		iov[1].iov_len = len;
		return 2;
	}
	iov[0].iov_base = (void *)(payload + (sent - TOOL_FRAME_HDR));
	iov[0].iov_len = len - (sent - TOOL_FRAME_HDR);
	return 1;
}

int tool_frame_send_part(int fd, const uint8_t *hdr, const uint8_t *payload,
			 size_t len, size_t *sent)
{
	struct iovec iov[2];
	struct msghdr m;
	ssize_t r;

	memset(&m, 0, sizeof(m));
	m.msg_iov = iov;
	m.msg_iovlen = (size_t)tool_frame_iov(iov, hdr, payload, len, *sent);
	r = sendmsg(fd, &m, MSG_NOSIGNAL);
	if (r < 0)
		return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
	*sent += (size_t)r;
	return 0;
}

int tool_frame_write(int fd, const uint8_t *payload, size_t len)
{
	uint8_t hdr[TOOL_FRAME_HDR];
	size_t sent = 0;

	tool_put_be32(hdr, (uint32_t)len);
	while (sent < TOOL_FRAME_HDR + len)
		if (tool_frame_send_part(fd, hdr, payload, len, &sent) < 0)
			return -1;
	return 0;
}

/* read_exactly - blocking: read len bytes into buf.  Returns 0, or -1
 * with errno (0 at end of stream). */
static int read_exactly(int fd, uint8_t *buf, size_t len)
{
	ssize_t r;

	while (len > 0) {
		r = recv(fd, buf, len, 0);
		if (r == 0) {
			errno = 0;
			return -1;
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += r;
		len -= (size_t)r;
	}
	return 0;
}

long tool_frame_read(int fd, uint8_t *buf, size_t cap)
{
	uint8_t hdr[TOOL_FRAME_HDR];
	uint32_t len;

	if (read_exactly(fd, hdr, TOOL_FRAME_HDR) < 0)
		return -1;
	len = tool_get_be32(hdr);
	if (len > cap) {
		errno = EMSGSIZE;
		return -1;
	}
	if (read_exactly(fd, buf, len) < 0)
		return -1;
	return (long)len;
}

/* frame_len - when buf[0..have) holds a whole frame, its payload length.
 * Returns the length (>= 0), -1 while incomplete, -2 when the frame would
 * not fit cap bytes. */
static long frame_len(const uint8_t *buf, size_t have, size_t cap)
{
	uint32_t len;

	if (have < TOOL_FRAME_HDR)
		return -1;
	len = tool_get_be32(buf);
	if (len > cap - TOOL_FRAME_HDR)
		return -2;
	return have - TOOL_FRAME_HDR >= len ? (long)len : -1;
}

long tool_frame_recv_part(int fd, uint8_t *buf, size_t cap, size_t *have)
{
	ssize_t r = recv(fd, buf + *have, cap - *have, 0);
	long len;

	if (r == 0) {
		errno = 0;
		return -2;
	}
	if (r < 0)
		return (errno == EAGAIN || errno == EINTR) ? -1 : -2;
	*have += (size_t)r;
	len = frame_len(buf, *have, cap);
	if (len == -2)
		errno = EMSGSIZE;
	return len;
}

long tool_frame_read_whole(int fd, uint8_t *buf, size_t cap)
{
	size_t have = 0;
	long len;

	do
		len = tool_frame_recv_part(fd, buf, cap, &have);
	while (len == -1);
	return len < 0 ? -1 : len;
}
