/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rpc_msg - homa-rpc messages on a Homa socket (see rpc_msg.h).
 */
#include "rpc_msg.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "homa-rpc.h"

/* consecutive - whether the bpages @offs[0..@n) follow each other in the
 * region (then the message is contiguous there). */
static bool consecutive(const uint32_t *offs, uint32_t n)
{
	for (uint32_t i = 1; i < n; i++) {
		if (offs[i] != offs[i - 1] + HOMA_BPAGE_SIZE)
			return false;
	}
	return true;
}

/* A copy buffer: its capacity, then its bytes. */
struct rpcm_buf {
	size_t cap;
	uint8_t bytes[];
};

/* Copies of at least this many bytes go back to the spare slot when freed
 * rather than to malloc. */
#define RPCM_SPARE_MIN (64u * 1024)

/* One spare copy buffer, process-wide.  A server copies each large request
 * that is not contiguous in the region (its last bpage is shared with
 * other messages) and protobuf-c then unpacks its bytes fields into more
 * memory: two blocks of up to 1 MB per call.  Freed by the same thread,
 * they leave enough at the top of its malloc arena for glibc to hand the
 * pages back to the kernel, and the next call faults them in again.
 * Reusing one buffer keeps its pages. */
static _Atomic(struct rpcm_buf *) spare;

/* buf_get - a copy buffer of at least @len bytes: the spare one when it is
 * large enough, else a new one (NULL: no memory). */
static struct rpcm_buf *buf_get(size_t len)
{
	struct rpcm_buf *b = atomic_exchange(&spare, NULL);

	if (b && b->cap >= len)
		return b;
	free(b);
	b = malloc(sizeof(*b) + (len ? len : 1));
	if (b)
		b->cap = len;
	return b;
}

/* buf_put - free @b, or keep it as the spare (a larger one wins). */
static void buf_put(struct rpcm_buf *b)
{
	struct rpcm_buf *old;

	if (!b)
		return;
	if (b->cap < RPCM_SPARE_MIN) {
		free(b);
		return;
	}
	old = atomic_exchange(&spare, b);
	if (old && old->cap > b->cap) {
		/* Keep the larger one: put old back, free b. */
		b = atomic_exchange(&spare, old);
		old = b;
	}
	free(old);
}

/* See rpc_msg.h. */
int rpcm_gather(const uint8_t *region, const uint32_t *offs, uint32_t n,
		size_t len, bool copy, struct rpcm_in *in)
{
	struct rpcm_buf *b;
	size_t done = 0;

	in->owned = NULL;
	in->len = len;
	if (n >= 1 && !copy && consecutive(offs, n)) {
		in->data = region + offs[0];
		return 0;
	}
	b = buf_get(len);
	if (!b)
		return ENOMEM;
	for (uint32_t i = 0; i < n && done < len; i++) {
		size_t piece = len - done < HOMA_BPAGE_SIZE ? len - done
							     : HOMA_BPAGE_SIZE;

		memcpy(b->bytes + done, region + offs[i], piece);
		done += piece;
	}
	in->owned = b;
	in->data = b->bytes;
	return 0;
}

/* See rpc_msg.h. */
void rpcm_in_free(struct rpcm_in *in)
{
	buf_put(in->owned);
	in->owned = NULL;
	in->data = NULL;
}

/* See rpc_msg.h. */
void rpcm_give_back(int fd, const uint32_t *offs, uint32_t n,
		    uint64_t spent_id)
{
	struct homa_recvmsg_args args;
	struct msghdr msg;

	if (n == 0)
		return;
	memset(&args, 0, sizeof(args));
	memset(&msg, 0, sizeof(msg));
	args.id = spent_id;
	args.flags = HOMA_RECVMSG_RESPONSE | HOMA_RECVMSG_NONBLOCKING;
	args.num_bpages = n;
	memcpy(args.bpage_offsets, offs, n * sizeof(offs[0]));
	msg.msg_control = &args;
	msg.msg_controllen = sizeof(args);
	(void)homa_recvmsg(fd, &msg, 0);
}

/* See rpc_msg.h. */
int rpcm_build(struct rpcw_hdr *h, const ProtobufCMessage *body,
	       struct rpcm_out *out)
{
	size_t body_len = body ? protobuf_c_message_get_packed_size(body) : 0;
	size_t hdr_len = rpcw_hdr_len(h);

	out->buf = NULL;
	out->len = 0;
	if (hdr_len > RPCW_MAX_HDR)
		return HOMA_RPC_INVALID_ARGUMENT;
	if (body_len > HOMA_MAX_MESSAGE_LENGTH - hdr_len)
		return HOMA_RPC_RESOURCE_EXHAUSTED;
	h->body_len = (uint32_t)body_len;
	if (rpcw_check(h) != RPCW_OK)
		return HOMA_RPC_INVALID_ARGUMENT;
	out->buf = malloc(hdr_len + body_len);
	if (!out->buf)
		return HOMA_RPC_RESOURCE_EXHAUSTED;
	out->len = rpcw_encode(h, out->buf, hdr_len);
	if (body_len)
		protobuf_c_message_pack(body, out->buf + hdr_len);
	out->len += body_len;
	return HOMA_RPC_OK;
}

/* See rpc_msg.h. */
void rpcm_out_free(struct rpcm_out *out)
{
	free(out->buf);
	out->buf = NULL;
	out->len = 0;
}

/* See rpc_msg.h. */
uint8_t *rpcm_region(int fd, size_t bytes, size_t *len_out)
{
	struct homa_set_buf_args args;
	size_t bpages = (bytes + HOMA_BPAGE_SIZE - 1) / HOMA_BPAGE_SIZE;
	void *p;

	if (bpages < 2)
		bpages = 2;
	args.length = bpages * HOMA_BPAGE_SIZE;
	p = mmap(NULL, args.length, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	args.start = p;
	if (homa_setsockopt(fd, IPPROTO_HOMA, SO_HOMA_SET_BUF, &args,
			    sizeof(args)) < 0) {
		int e = errno;

		munmap(p, args.length);
		errno = e;
		return NULL;
	}
	*len_out = args.length;
	return p;
}
