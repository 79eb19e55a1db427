/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_msg - homa-rpc messages on a Homa socket: a received message made
 * contiguous, bpages handed back, an outgoing message (header and packed
 * protobuf body) built in one buffer.
 */
#ifndef RPC_MSG_H
#define RPC_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

#include "homa.h"
#include "rpc_wire.h"

struct rpcm_buf;

/* A received message, contiguous. */
struct rpcm_in {
	const uint8_t *data;   /* its bytes */
	size_t len;
	struct rpcm_buf *owned; /* the copy data points into, or NULL when
				 * data points into the buffer region */
};

/*
 * rpcm_gather - make the message of @len bytes that lies in the bpages
 * @offs[0..@n) of @region contiguous in @in: in place when @copy is false
 * and the bpages follow each other in the region (in->owned NULL: the
 * bytes stay valid while the bpages are not handed back), else copied into
 * memory @in owns.  Returns 0, or ENOMEM (nothing owned).
 */
int rpcm_gather(const uint8_t *region, const uint32_t *offs, uint32_t n,
		size_t len, bool copy, struct rpcm_in *in);

/* rpcm_in_free - free what @in owns (a large copy is kept for the next
 * rpcm_gather that needs one). */
void rpcm_in_free(struct rpcm_in *in);

/*
 * rpcm_give_back - hand the bpages @offs[0..@n) back to Homa socket @fd
 * with a nonblocking homa_recvmsg for @spent_id, an even id that names no
 * RPC of the socket any more (the bpages are taken before the id is
 * checked, so the call returns nothing and takes no message).
 */
void rpcm_give_back(int fd, const uint32_t *offs, uint32_t n,
		    uint64_t spent_id);

/* An outgoing message: header and body in one buffer. */
struct rpcm_out {
	uint8_t *buf;
	size_t len;
};

/*
 * rpcm_build - encode header @h followed by @body packed (NULL: no body)
 * into @out; sets h->body_len.  Returns HOMA_RPC_OK, RESOURCE_EXHAUSTED
 * (more than a Homa message holds, or no memory) or INVALID_ARGUMENT (@h
 * refused by rpcw_check).  On OK, @out owns a buffer (rpcm_out_free).
 */
int rpcm_build(struct rpcw_hdr *h, const ProtobufCMessage *body,
	       struct rpcm_out *out);

/* rpcm_out_free - free @out's buffer. */
void rpcm_out_free(struct rpcm_out *out);

/* rpcm_region - map a buffer region of @bytes (rounded up to bpages, at
 * least 2) and give it to socket @fd.  Returns the region, or NULL with
 * errno; *@len_out is its length. */
uint8_t *rpcm_region(int fd, size_t bytes, size_t *len_out);

#endif /* RPC_MSG_H */
