/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tool_frame - messages over TCP as the tools send them: a frame is a
 * 4-byte big-endian length (TOOL_FRAME_HDR) and that many payload bytes.
 * Two ways to read one: tool_frame_read takes exactly one frame off the
 * stream (safe when the peer sends several without waiting);
 * tool_frame_recv_part and tool_frame_read_whole read whatever has come,
 * one recv for a frame that arrived whole, for a peer that sends one frame
 * and then waits for the answer.
 */
#ifndef TOOL_FRAME_H
#define TOOL_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "tool_bytes.h"   /* the frame length: tool_put_be32, tool_get_be32 */

#define TOOL_FRAME_HDR 4

/*
 * tool_frame_iov - the iovec entries (1 or 2, into iov) of what is left of
 * the frame hdr[TOOL_FRAME_HDR] + payload[len] once its first sent bytes
 * went out (sent < TOOL_FRAME_HDR + len).  Returns the entries used.
 */
int tool_frame_iov(struct iovec *iov, const uint8_t *hdr,
		   const uint8_t *payload, size_t len, size_t sent);

/*
 * tool_frame_send_part - one sendmsg of more of the frame hdr[TOOL_FRAME_HDR]
 * + payload[len], from byte *sent of the frame on (*sent advances).
 * Returns 0 (progress, or EAGAIN/EINTR), or -1 with errno.
 */
int tool_frame_send_part(int fd, const uint8_t *hdr, const uint8_t *payload,
			 size_t len, size_t *sent);

/* tool_frame_write - blocking: send the whole frame of payload[len].
 * Returns 0, or -1 with errno. */
int tool_frame_write(int fd, const uint8_t *payload, size_t len);

/*
 * tool_frame_read - blocking: read exactly one frame, its payload into
 * buf (cap bytes).  Returns the payload length, or -1 with errno (0: end
 * of stream; EMSGSIZE: the payload would not fit cap).
 */
long tool_frame_read(int fd, uint8_t *buf, size_t cap);

/*
 * tool_frame_recv_part - one recv into buf[*have..cap) (*have advances),
 * for a connection that carries at most one frame at a time (it may read
 * up to cap).  Returns the payload length (payload at buf +
 * TOOL_FRAME_HDR) once the frame is whole; -1 while not (or on
 * EAGAIN/EINTR); -2 on error (errno; EMSGSIZE: the frame would not fit
 * cap) or at end of stream (errno 0).
 */
long tool_frame_recv_part(int fd, uint8_t *buf, size_t cap, size_t *have);

/*
 * tool_frame_read_whole - blocking tool_frame_recv_part until the frame
 * is whole.  Returns its payload length (payload at buf + TOOL_FRAME_HDR),
 * or -1 with errno (0 at end of stream).
 */
long tool_frame_read_whole(int fd, uint8_t *buf, size_t cap);

#endif /* TOOL_FRAME_H */
