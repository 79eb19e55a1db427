/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa.h - the public interface of libhoma, Homa in user space.
 *
 * This header carries the definitions of the Homa user API (names, values and
 * struct layouts as in the Linux uAPI of October 2024), the receive-buffer
 * getsockopt of the buffer pool, and the socket-call equivalents that this
 * library provides in place of kernel system calls.  See homa(7) and the man
 * page of each call for the full contract.
 */
#ifndef HOMA_H
#define HOMA_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* IANA-assigned IP protocol number of Homa. */
#ifndef IPPROTO_HOMA
#define IPPROTO_HOMA 146
#endif

/* Largest payload of one request or response message, in bytes. */
#define HOMA_MAX_MESSAGE_LENGTH 1000000

/* Receive buffers are divided into bpages of this size (a power of two). */
#define HOMA_BPAGE_SHIFT 16
#define HOMA_BPAGE_SIZE (1 << HOMA_BPAGE_SHIFT)

/* The most bpages one incoming message can occupy. */
#define HOMA_MAX_BPAGES ((HOMA_MAX_MESSAGE_LENGTH + HOMA_BPAGE_SIZE - 1) \
		>> HOMA_BPAGE_SHIFT)

/* Ports 1..32767 are for servers (bind); ports from this value up are
 * assigned to client sockets automatically.  Port 0 is reserved. */
#define HOMA_MIN_DEFAULT_PORT 0x8000

/* An IPv4 or IPv6 socket address. */
union sockaddr_in_union {
	struct sockaddr sa;
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;
};

/* Passed to homa_sendmsg through msg_control. */
struct homa_sendmsg_args {
	/* in/out: 0 sends a new request and receives its id; nonzero sends
	 * the response to the request with this id. */
	uint64_t id;
	/* in: returned by homa_recvmsg with the response of a request. */
	uint64_t completion_cookie;
};

/* Passed to homa_recvmsg through msg_control. */
struct homa_recvmsg_args {
	/* in/out: the id of the wanted client RPC, or 0 for any; returns the
	 * id of the message received (odd: request, even: response). */
	uint64_t id;
	/* out: the cookie given when the request was sent (0 for requests). */
	uint64_t completion_cookie;
	/* in: HOMA_RECVMSG_* bits. */
	int flags;
	/* out: the peer's address, also set when an RPC failed. */
	union sockaddr_in_union peer_addr;
	/* in/out: valid entries in bpage_offsets; in: bpages handed back,
	 * out: bpages holding the new message. */
	uint32_t num_bpages;
	uint32_t _pad[1];
	/* in/out: offsets into the buffer region; all but the last entry
	 * returned are whole, bpage-aligned bpages. */
	uint32_t bpage_offsets[HOMA_MAX_BPAGES];
};

#if !defined(__cplusplus)
_Static_assert(sizeof(struct homa_sendmsg_args) == 16,
	       "homa_sendmsg_args must be 16 bytes");
_Static_assert(sizeof(struct homa_recvmsg_args) == 120,
	       "homa_recvmsg_args must be 120 bytes");
#endif

/* Flag bits of homa_recvmsg_args.flags. */
#define HOMA_RECVMSG_REQUEST       0x01
#define HOMA_RECVMSG_RESPONSE      0x02
#define HOMA_RECVMSG_NONBLOCKING   0x04
#define HOMA_RECVMSG_VALID_FLAGS   0x07

/* setsockopt option (level IPPROTO_HOMA) giving the receive buffer region. */
#define SO_HOMA_SET_BUF 10

/* Argument of SO_HOMA_SET_BUF. */
struct homa_set_buf_args {
	void *start;     /* first byte of the region; page-aligned */
	size_t length;   /* bytes at start; at least 2 bpages */
};

/* getsockopt option (level IPPROTO_HOMA) reading the buffer region back. */
#define HOMA_SO_RCVBUF SO_HOMA_SET_BUF

/* Result of getsockopt HOMA_SO_RCVBUF. */
struct homa_rcvbuf_args {
	uint64_t start;  /* address of the region, 0 if none */
	size_t length;   /* bytes usable as bpages */
};

/* Bit of the "flags" setting: send every packet at once (no pacer). */
#define HOMA_FLAG_DONT_THROTTLE   2

/* The seed's convenience calls (thin wrappers over homa_sendmsg). */
int     homa_send(int sockfd, const void *message_buf,
		  size_t length, const union sockaddr_in_union *dest_addr,
		  uint64_t *id, uint64_t completion_cookie);
int     homa_sendv(int sockfd, const struct iovec *iov,
		   int iovcnt, const union sockaddr_in_union *dest_addr,
		   uint64_t *id, uint64_t completion_cookie);
ssize_t homa_reply(int sockfd, const void *message_buf,
		   size_t length, const union sockaddr_in_union *dest_addr,
		   uint64_t id);
ssize_t homa_replyv(int sockfd, const struct iovec *iov,
		    int iovcnt, const union sockaddr_in_union *dest_addr,
		    uint64_t id);

/*
 * Socket calls.  Each behaves like the system call it is named after:
 * -1 with errno set on error.  The descriptor is a real kernel descriptor that
 * poll/select/epoll report readable exactly when a message or an RPC error is
 * waiting for homa_recvmsg, and writable exactly when a send would not wait
 * for send memory (the wmem_max setting: homa_sendmsg and the wrappers wait
 * while the socket holds that many bytes of outgoing messages, or fail with
 * EAGAIN under MSG_DONTWAIT or SOCK_NONBLOCK).  Close it with homa_close,
 * never close(2).
 */
int     homa_socket(int domain, int type, int protocol);
int     homa_bind(int fd, const struct sockaddr *addr, socklen_t addrlen);
int     homa_setsockopt(int fd, int level, int optname, const void *optval,
			socklen_t optlen);
int     homa_getsockopt(int fd, int level, int optname, void *optval,
			socklen_t *optlen);
ssize_t homa_sendmsg(int fd, const struct msghdr *msg, int flags);
ssize_t homa_recvmsg(int fd, struct msghdr *msg, int flags);
int     homa_abort(int fd, uint64_t id, int error);
int     homa_shutdown(int fd, int how);
int     homa_close(int fd);

/*
 * Settings (see homa(7) for the table).  Each setting has a name, such as
 * "unsched_bytes", read at start-up from the environment variable
 * HOMA_<NAME> in upper case.  homa_config_set changes a numeric setting for
 * sockets created afterwards; homa_config_get reads one.  Both return 0, or
 * -1 with errno EINVAL (unknown name, or value out of range).
 */
int     homa_config_set(const char *name, int64_t value);
int     homa_config_get(const char *name, int64_t *value);

/*
 * Engine counters of one socket (packets by type, drops by reason, resends,
 * timeouts, ...).  homa_stats_get copies up to max entries into names/values
 * and returns how many the socket has, or -1 with errno EBADF.
 * Names are static strings.
 */
int     homa_stats_get(int fd, const char **names, uint64_t *values,
		       int max);

#ifdef __cplusplus
}
#endif

#endif /* HOMA_H */
