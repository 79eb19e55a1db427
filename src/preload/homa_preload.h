/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_preload - internals of the LD_PRELOAD shim libhoma_preload.so, which
 * lets a program written for the Linux kernel Homa module's newest user API
 * (docs/protocol.md section 6) run on this library's engine.  docs/preload.md is
 * the user's guide; this header is the contract between the shim's files:
 *
 *   homa_preload.c         the next definition of each libc call, the table
 *                          of descriptors, fork
 *   homa_preload_sock.c    socket, bind, options, ioctl, close, dup, fcntl
 *   homa_preload_msg.c     sendmsg, recvmsg and the calls refused on Homa
 *                          descriptors
 *   homa_preload_engine.c  the few things taken from the socket layer's
 *                          internals (homa_sock.h), among them private
 *                          requests
 *   homa_preload_stats.c   HOMA_PRELOAD_STATS: a closing socket's counters
 *                          appended to a file
 *
 * Descriptors.  homa_socket() makes the engine's socket and its readiness
 * descriptor (an AF_UNIX stream socket; see homa_sockready.c),
 * whose number (the "engine descriptor") keys the socket layer's table and
 * which the engine itself reads and writes to signal readiness.  The
 * application never sees that number: socket() returns a dup of it (an
 * "application descriptor"), naming the same socket, so poll, select and
 * epoll work on it unchanged, while the engine's own read/write/close of its
 * descriptor never name an application descriptor and pass through the
 * shim untouched (also under sanitizers, whose interceptors sit between the
 * engine and the shim).  dup/dup2/dup3/fcntl(F_DUPFD) of an application
 * descriptor make more of them; the engine socket is closed with the last.
 *
 * Every interposed call first asks the table about its descriptor without a
 * lock (pl_kind); calls on other descriptors go to the next definition
 * (libc) at once.  Calls on engine descriptors also pass through, except
 * that close and dup2/dup3 onto them are refused (EBADF, EBUSY): they belong
 * to the shim, as a libc-internal descriptor would.
 *
 * In a child made by fork the shim is inert: the table is no longer
 * consulted, every call passes through and no Homa socket is made (the
 * engine's thread did not come along and its locks may be held).  The
 * child's copies of the parent's Homa descriptors are plain Unix sockets;
 * closing them does not disturb the parent.
 */
#ifndef HOMA_PRELOAD_H
#define HOMA_PRELOAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "homa.h"
#include "homa_preload_uapi.h"

#pragma GCC visibility push(hidden)

/* ---- homa_preload.c: the next definitions of the interposed calls ---- */

/* The next definition (normally libc's) of every interposed call; NULL when
 * the C library has none (then the shim reports ENOSYS). */
struct pl_next {
	int (*socket)(int, int, int);
	int (*bind)(int, const struct sockaddr *, socklen_t);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	int (*listen)(int, int);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*getsockname)(int, struct sockaddr *, socklen_t *);
	int (*getpeername)(int, struct sockaddr *, socklen_t *);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	int (*shutdown)(int, int);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	int (*sendmmsg)(int, struct mmsghdr *, unsigned int, int);
	int (*recvmmsg)(int, struct mmsghdr *, unsigned int, int,
			struct timespec *);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*sendto)(int, const void *, size_t, int,
			  const struct sockaddr *, socklen_t);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *,
			    socklen_t *);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*read_chk)(int, void *, size_t, size_t);
	ssize_t (*recv_chk)(int, void *, size_t, size_t, int);
	ssize_t (*recvfrom_chk)(int, void *, size_t, size_t, int,
				struct sockaddr *, socklen_t *);
	int (*ioctl)(int, unsigned long, ...);
	int (*close)(int);
	int (*close_range)(unsigned int, unsigned int, int);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*fcntl)(int, int, ...);
	int (*fcntl64)(int, int, ...);
};

/* The resolved next definitions; valid after pl_init. */
extern struct pl_next pl_next;

/* pl_init - resolve pl_next and register the fork handler (once per
 * process; cheap afterwards).  Every interposed call calls it first. */
void pl_init(void);

/* pl_nosys - errno ENOSYS, return -1 (a call the C library lacks). */
int pl_nosys(void);

/* pl_in_child - true in a child made by fork of a process with the shim:
 * new Homa sockets are then not made (the call goes to the kernel). */
bool pl_in_child(void);

/* ---- homa_preload.c: the descriptor table ---- */

/* One Homa socket as the shim sees it. */
struct pl_sock {
	atomic_int refs;            /* the table's (while an application
				     * descriptor names it) + each user's */
	int nfd;                    /* the engine descriptor (hidden) */
	int family;                 /* AF_INET or AF_INET6 */
	int napp;                   /* application descriptors naming it
				     * (under the table lock) */
	atomic_bool nonblock;       /* O_NONBLOCK as the application set it */
	atomic_bool server;         /* SO_HOMA_SERVER as the kernel reports
				     * it: set by bind, by the option */
	atomic_int sndbuf, rcvbuf;  /* SOL_SOCKET values (no effect) */

	pthread_mutex_t lock;       /* guards errmsg */
	char errmsg[HK_ERROR_MSG_SIZE]; /* why the last call failed */
};

/* What the table says about a descriptor. */
enum pl_kind { PL_NONE = 0, PL_APP = 1, PL_ENGINE = 2 };

/* pl_kind - what fd is, without a lock (a hint: an entry may change right
 * after).  Calls pl_init.  Always PL_NONE in a forked child. */
enum pl_kind pl_kind(int fd);

/* pl_scan - the first descriptor in from..to (from >= 0) whose kind is
 * kind (PL_APP or PL_ENGINE), or -1; unused parts of the table are skipped
 * quickly. */
int pl_scan(int from, int to, enum pl_kind kind);

/* pl_get - the socket of application descriptor fd with a new reference,
 * or NULL when fd is none.  Release with pl_put. */
struct pl_sock *pl_get(int fd);

/* pl_put - drop a reference; the last frees the socket's shim state (the
 * engine socket is closed separately, by pl_forget). */
void pl_put(struct pl_sock *s);

/*
 * pl_sock_new - shim state for engine descriptor nfd of family, with one
 * application descriptor afd; both are entered into the table.  Returns 0,
 * or a positive errno (ENOMEM; EMFILE when a number is beyond the table).
 */
int pl_sock_new(int nfd, int afd, int family, bool nonblock);

/*
 * pl_add_app - make fd (a fresh dup of an application descriptor of s) one
 * more application descriptor of s.  A stale entry at fd (a descriptor
 * closed behind the shim's back) is forgotten first.  Returns 0 or a
 * positive errno (ENOMEM, EMFILE).
 */
int pl_add_app(int fd, struct pl_sock *s);

/*
 * pl_forget - fd stops being an application descriptor (the caller closes
 * the number itself, or has replaced it with dup2).  When it was the last
 * one of its socket, the engine socket is closed (homa_close) and the
 * table's reference dropped.  Returns true when fd was an application
 * descriptor.
 */
bool pl_forget(int fd);

/* ---- homa_preload_sock.c ---- */

/* pl_set_errmsg - record why the last call on s failed (printf format),
 * for HOMAIOCINFO's error_msg. */
void pl_set_errmsg(struct pl_sock *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* pl_fail - record msg (may be NULL: the errno's text) for err on s, set
 * errno = err and return -1.  EAGAIN and EINTR are not recorded. */
int pl_fail(struct pl_sock *s, int err, const char *msg);

/* ---- homa_preload_engine.c: from the socket layer's internals ---- */

/* The state HOMAIOCINFO and getsockname report. */
struct pl_engine_info {
	uint16_t port;            /* the socket's Homa port */
	uint32_t num_rpcs;        /* RPCs alive in the endpoint */
	uint64_t free_bytes;      /* free bpages of the region, in bytes */
	bool has_region;          /* SO_HOMA_RCVBUF done */
};

/* pl_engine_info - fill *out for engine descriptor nfd.  Returns 0 or
 * EBADF. */
int pl_engine_info(int nfd, struct pl_engine_info *out);

/* pl_engine_set_server - whether the socket of nfd accepts requests on its
 * current port (SO_HOMA_SERVER).  Returns 0 or EBADF. */
int pl_engine_set_server(int nfd, bool on);

/*
 * pl_engine_send_private - send a private request (HOMA_SENDMSG_PRIVATE) of
 * iov[0..iovcnt) with cookie to dest on the socket of nfd: the engine's
 * homa_ep_send_request with HOMA_EP_SEND_PRIVATE, so that its response (or
 * failure) goes only to a receive naming *id and never makes the socket
 * readable.  The caller has checked dest's family
 * and length and the iovec's shape (the engine checks them again).  Waits
 * for send memory (wmem_max) as homa_sendmsg does, unless nonblock.
 * Returns 0 and sets *id; or a positive errno: EINVAL (bad address, length
 * or iovec), EAGAIN (nonblock, at the memory limit), ESHUTDOWN, ENOMEM,
 * EBADF.
 */
int pl_engine_send_private(int nfd, const union sockaddr_in_union *dest,
			   const struct iovec *iov, int iovcnt,
			   uint64_t cookie, bool nonblock, uint64_t *id);

#pragma GCC visibility pop

/* An interposed call: exported under its libc name. */
#define PL_EXPORT __attribute__((visibility("default")))

/* ---- homa_preload_stats.c ---- */

/*
 * pl_stats_dump - when HOMA_PRELOAD_STATS names a file, append one line to
 * it: "homa_preload_stats pid=PID port=PORT" and each nonzero counter of
 * engine descriptor nfd as " name=value".  Called just before the engine
 * socket closes; owns nothing afterwards; errors (no such socket, the file
 * cannot be opened) are ignored: the dump is for tests, never a reason for
 * close to fail.
 */
void pl_stats_dump(int nfd);

#endif /* HOMA_PRELOAD_H */
