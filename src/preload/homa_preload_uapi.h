/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_preload_uapi - the Linux kernel Homa module's newest user API as the
 * preload shim receives it (docs/protocol.md section 6): the option and ioctl
 * numbers and the layouts of the structures an application passes to
 * sendmsg, recvmsg, setsockopt and ioctl.  The names carry a "hk_" prefix
 * because homa.h (the native API, older uAPI) uses the same struct names
 * with other layouts.  Sizes are checked below; every field is in the
 * byte order of the machine.
 */
#ifndef HOMA_PRELOAD_UAPI_H
#define HOMA_PRELOAD_UAPI_H

#include <stdint.h>
#include <sys/socket.h>

/* Bpages of a received message listed in the recvmsg arguments. */
#define HK_MAX_BPAGES 16

/* setsockopt/getsockopt, level IPPROTO_HOMA. */
#define HK_SO_RCVBUF 10          /* struct hk_rcvbuf_args */
#define HK_SO_SERVER 11          /* int: nonzero accepts requests */

/* ioctls (type 'h'), read-write. */
#define HK_IOC_INFO  0xC0886890ul   /* struct hk_info */
#define HK_IOC_ABORT 0xC0206891ul   /* struct hk_abort_args */

/* hk_sendmsg_args.flags */
#define HK_SENDMSG_PRIVATE     0x01u
#define HK_SENDMSG_VALID_FLAGS 0x01u

/* sendmsg: msg_control points here and msg_controllen is 0. */
struct hk_sendmsg_args {
	uint64_t id;                /* in: 0 request, else reply to id;
				     * out: the new request's id */
	uint64_t completion_cookie; /* in: requests only (replies: 0) */
	uint32_t flags;             /* in: HK_SENDMSG_* */
	uint32_t reserved;          /* must be 0 */
};

/* recvmsg: msg_control points here and msg_controllen is its size. */
struct hk_recvmsg_args {
	uint64_t id;                /* in: 0 any shared RPC, else that private
				     * RPC; out: the RPC received */
	uint64_t completion_cookie; /* out: responses: the request's cookie */
	uint32_t num_bpages;        /* in: bpages handed back; out: bpages of
				     * the new message */
	uint32_t reserved;          /* must be 0 */
	uint32_t bpage_offsets[HK_MAX_BPAGES];
};

/* setsockopt SO_HOMA_RCVBUF (and what getsockopt returns). */
struct hk_rcvbuf_args {
	uint64_t start;             /* page-aligned address of the region */
	uint64_t length;            /* bytes at start */
};

/* ioctl HOMAIOCABORT. */
struct hk_abort_args {
	uint64_t id;                /* client RPC, or 0 for all of them */
	uint32_t error;             /* 0: discard silently; else complete the
				     * RPC(s) with this errno */
	uint32_t pad1;              /* must be 0 */
	uint64_t pad2[2];           /* must be 0 */
};

/* Size of hk_info.error_msg. */
#define HK_ERROR_MSG_SIZE 100

/* ioctl HOMAIOCINFO. */
struct hk_info {
	uint64_t rpc_info;          /* in: address of an array of per-RPC
				     * records (not written by the shim) */
	uint64_t rpc_info_length;   /* in: bytes at rpc_info */
	uint64_t bpool_avail_bytes; /* out: free bytes of the buffer region */
	uint32_t port;              /* out: the socket's Homa port */
	uint32_t num_rpcs;          /* out: live RPCs, client and server */
	char error_msg[HK_ERROR_MSG_SIZE]; /* out: why the last call on this
					    * socket failed ("" if none) */
};

_Static_assert(sizeof(struct hk_sendmsg_args) == 24, "sendmsg args: 24 B");
_Static_assert(sizeof(struct hk_recvmsg_args) == 88, "recvmsg args: 88 B");
_Static_assert(sizeof(struct hk_rcvbuf_args) == 16, "rcvbuf args: 16 B");
_Static_assert(sizeof(struct hk_abort_args) == 32, "abort args: 32 B");
_Static_assert(sizeof(struct hk_info) == 136, "homa_info: 136 B");
_Static_assert(((HK_IOC_INFO >> 16) & 0x3fff) == sizeof(struct hk_info),
	       "HOMAIOCINFO encodes the size of homa_info");
_Static_assert(((HK_IOC_ABORT >> 16) & 0x3fff) ==
	       sizeof(struct hk_abort_args),
	       "HOMAIOCABORT encodes the size of homa_abort_args");

#endif /* HOMA_PRELOAD_UAPI_H */
