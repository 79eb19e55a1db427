/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_kernel_uapi.h - the Linux kernel Homa module's newest user API, as an
 * application written for the kernel would declare it (the kernel ships it
 * as <linux/homa.h>; this is a restatement of its constants and layouts,
 * docs/protocol.md section 6).  The kapi_*.c programs include only this, libc
 * and the Linux headers: they know nothing of libhoma, and run on it under
 * LD_PRELOAD=libhoma_preload.so.
 */
#ifndef HOMA_KERNEL_UAPI_H
#define HOMA_KERNEL_UAPI_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#ifdef KAPI_MODULE_HEADER
/*
 * Built with -DKAPI_MODULE_HEADER (scripts/kpeer/build_image.sh): the
 * module's own header instead of this restatement, as a program written
 * for the module includes it.  <netinet/in.h> comes first, so that the
 * Linux headers it pulls in leave libc's definitions alone.
 */
#include <sys/ioctl.h>
#include <linux/homa.h>
#else

/* IANA protocol number of Homa. */
#ifndef IPPROTO_HOMA
#define IPPROTO_HOMA 146
#endif

/* Largest message, bytes. */
#define HOMA_MAX_MESSAGE_LENGTH 1000000

/* Received messages are stored in the socket's buffer region in bpages. */
#define HOMA_BPAGE_SHIFT 16
#define HOMA_BPAGE_SIZE (1 << HOMA_BPAGE_SHIFT)
#define HOMA_MAX_BPAGES ((HOMA_MAX_MESSAGE_LENGTH + HOMA_BPAGE_SIZE - 1) >> \
			 HOMA_BPAGE_SHIFT)

/* Server ports are 1..32767; client sockets get ports from here up. */
#define HOMA_MIN_DEFAULT_PORT 0x8000

/* sendmsg: msg_control points to this, msg_controllen is 0. */
struct homa_sendmsg_args {
	uint64_t id;                 /* in: 0 = new request, else the request
				      * this replies to; out: request's id */
	uint64_t completion_cookie;  /* in: returned with the response */
	uint32_t flags;              /* in: HOMA_SENDMSG_* */
	uint32_t reserved;           /* 0 */
};

/* The response is returned only to recvmsg asking for its id, and never
 * makes the socket readable. */
#define HOMA_SENDMSG_PRIVATE     0x01
#define HOMA_SENDMSG_VALID_FLAGS 0x01

/* recvmsg: msg_control points to this, msg_controllen is its size. */
struct homa_recvmsg_args {
	uint64_t id;                 /* in: 0 = any shared RPC, else that
				      * private RPC; out: the RPC received */
	uint64_t completion_cookie;  /* out */
	uint32_t num_bpages;         /* in: bpages handed back; out: bpages
				      * holding the message */
	uint32_t reserved;           /* 0 */
	uint32_t bpage_offsets[HOMA_MAX_BPAGES];
};

/* ioctl HOMAIOCABORT. */
struct homa_abort_args {
	uint64_t id;                 /* client RPC, 0 = all client RPCs */
	uint32_t error;              /* 0 = discard, else complete with it */
	uint32_t _pad1;
	uint64_t _pad2[2];
};

/* setsockopt/getsockopt options, level IPPROTO_HOMA. */
#define SO_HOMA_RCVBUF 10
#define SO_HOMA_SERVER 11

/* Argument of SO_HOMA_RCVBUF. */
struct homa_rcvbuf_args {
	uint64_t start;              /* page-aligned */
	uint64_t length;
};

/* One RPC in HOMAIOCINFO's array. */
struct homa_rpc_info {
	uint64_t id;
	union {
		struct sockaddr_storage storage;
		struct sockaddr_in in4;
		struct sockaddr_in6 in6;
	} peer;
	uint64_t completion_cookie;
	int32_t tx_length;
	uint32_t tx_sent;
	uint32_t tx_granted;
	uint32_t tx_prio;
	int32_t rx_length;
	uint32_t rx_remaining;
	uint32_t rx_gaps;
	uint32_t rx_gap_bytes;
	uint32_t rx_granted;
	uint16_t flags;
};

#define HOMA_ERROR_MSG_SIZE 100

/* ioctl HOMAIOCINFO. */
struct homa_info {
	struct homa_rpc_info *rpc_info;  /* in: room for per-RPC records */
	size_t rpc_info_length;          /* in: bytes at rpc_info */
	uint64_t bpool_avail_bytes;      /* out: free buffer bytes */
	uint32_t port;                   /* out: the socket's port */
	uint32_t num_rpcs;               /* out: live RPCs */
	char error_msg[HOMA_ERROR_MSG_SIZE]; /* out: the last error's cause */
};

#define HOMAIOCINFO  0xC0886890ul
#define HOMAIOCABORT 0xC0206891ul

_Static_assert(sizeof(struct homa_sendmsg_args) == 24, "sendmsg args");
_Static_assert(sizeof(struct homa_recvmsg_args) == 88, "recvmsg args");
_Static_assert(sizeof(struct homa_abort_args) == 32, "abort args");
_Static_assert(sizeof(struct homa_info) == 136, "homa_info");

#endif /* KAPI_MODULE_HEADER */

#endif /* HOMA_KERNEL_UAPI_H */
