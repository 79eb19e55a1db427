/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * e2e_util.h - shared helpers of the end-to-end tests of libhoma.
 *
 * The tests drive the library only through the public header <homa.h>, on
 * loopback.  This file gives them:
 *   - a runner around cmocka with a per-test watchdog (a test that does not
 *     finish in its time budget is reported as failed and the remaining tests
 *     go on in a fresh copy of the process);
 *   - sockets with an mmap'ed buffer region (clients) or a bound port
 *     (servers), cleaned up automatically at the end of each test;
 *   - a message format with a position- and RPC-dependent byte pattern, so
 *     that lost, duplicated or misplaced data is detected byte for byte;
 *   - server threads that answer each request with an echo or a response of
 *     a requested size, after an optional service delay;
 *   - receiving a message and collecting it out of its bpages.
 *
 * Helpers that run in threads other than the test's own never call cmocka's
 * assertions (they report through return values and error strings); the
 * test thread asserts.
 */
#ifndef E2E_UTIL_H
#define E2E_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <cmocka.h>

#include "homa.h"

/* ------------------------------------------------------------------ */
/* Runner                                                              */
/* ------------------------------------------------------------------ */

/* One test of a file: its name (<area>__<case>), body and time budget. */
struct e2e_test {
	const char *name;
	CMUnitTestFunction fn;
	unsigned timeout_s;
	bool no_valgrind;   /* not run under valgrind (E2E_VALGRIND set) */
};

/* Declares a test entry with the function's own name as the test name. */
#define E2E_TEST(fn, secs) { #fn, fn, (secs), false }

/* E2E_TEST for a test that cannot run under valgrind, which runs one
 * thread at a time: under make valgrind it is left out with a line saying
 * so (it runs in every other run). */
#define E2E_TEST_NO_VALGRIND(fn, secs) { #fn, fn, (secs), true }

/*
 * e2e_main - run the tests of one file under cmocka.
 * @argc, @argv: the program's arguments (kept to restart the process).
 * @group:       the group name printed by cmocka.
 * @tests, @n:   the tests, in the order to run.
 * Each test gets a watchdog of its own timeout_s seconds covering the test and
 * its clean-up.  When it expires the test is reported "[  TIMEOUT ]" and the
 * program re-executes itself to run the tests after it (the hung threads and
 * library state die with the old image).  An optional argument narrows the
 * run to the tests whose name contains it.
 * Returns the exit status for main: 0 when every test passed, 77 when none
 * failed but some skipped (e2e_skip, e2e_skip_part: a skip for CTest), else
 * 1.
 */
int e2e_main(int argc, char **argv, const char *group,
	     const struct e2e_test *tests, size_t n);

/*
 * e2e_skip - the current test cannot run here (@fmt: why): with the
 * environment variable @require set to 1 (CI sets every such switch) it
 * fails; otherwise it is skipped with a SKIPPED line, and the program exits
 * 77 (skipped) unless a test failed.  Call from the test thread.
 */
void e2e_skip(const char *require, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* e2e_skip_part - as e2e_skip, but the test goes on without the part @fmt
 * names (which did not run). */
void e2e_skip_part(const char *require, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prints a diagnostic line to stderr, prefixed with the current test name.
 * Safe from any thread. */
void e2e_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Milliseconds on CLOCK_MONOTONIC. */
uint64_t e2e_now_ms(void);

/* Sleeps for @ms milliseconds (restarted after signals). */
void e2e_sleep_ms(unsigned ms);

/* e2e_wait_readable - poll @fd for POLLIN for up to @ms milliseconds.
 * Returns 1 when readable, 0 otherwise. */
int e2e_wait_readable(int fd, unsigned ms);

/* e2e_stat - the engine counter called name of socket fd; 0 when the
 * socket has no such counter or homa_stats_get fails. */
uint64_t e2e_stat(int fd, const char *name);

/* e2e_log_stats - log the nonzero engine counters of socket @fd (for
 * diagnosing a failure), prefixed with @label. */
void e2e_log_stats(int fd, const char *label);

/* ------------------------------------------------------------------ */
/* Sockets                                                             */
/* ------------------------------------------------------------------ */

/* Default buffer region of helper sockets: 32 MiB (512 bpages), mapped
 * lazily so that unused bpages cost nothing. */
#define E2E_REGION_DEFAULT (32u << 20)

/* Up to this many bpages can wait in an e2e_bpages list. */
#define E2E_MAX_PENDING 4096

/* Bpages the application owns and will hand back on a later recvmsg. */
struct e2e_bpages {
	uint32_t n;
	uint32_t offs[E2E_MAX_PENDING];
};

/* A Homa socket made by the helpers. */
struct e2e_sock {
	int fd;                 /* descriptor from homa_socket */
	int family;             /* AF_INET or AF_INET6 */
	uint8_t *region;        /* mmap'ed buffer region, NULL if none */
	size_t region_len;      /* bytes mapped at region */
	uint16_t port;          /* bound server port, 0 for a client */
	struct e2e_bpages ret;  /* bpages to hand back (single-thread use) */
};

/*
 * e2e_socket - create a Homa socket (family AF_INET or AF_INET6) and, when
 * @region_len > 0, map a fresh region of that many bytes and give it to the
 * socket with SO_HOMA_SET_BUF.
 * Returns the socket (registered for clean-up at the end of the test), or
 * NULL with errno set; a failure is also logged.
 */
struct e2e_sock *e2e_socket(int family, size_t region_len);

/*
 * e2e_server_socket - like e2e_socket, then bind it to a server port chosen by
 * e2e_next_port, trying further ports while homa_bind fails with EADDRINUSE.
 * On success s->port is the bound port.  Returns NULL with errno on failure.
 */
struct e2e_sock *e2e_server_socket(int family, size_t region_len);

/*
 * e2e_next_port - the next candidate server port of this process:
 * 20000 + (pid % 5000) + k for k = 0, 1, 2, ... wrapped into 20000..32767, so
 * that concurrent test programs rarely pick the same ports.
 */
uint16_t e2e_next_port(void);

/*
 * e2e_bind_port - bind @fd (of @family) to @port with the wildcard address.
 * Returns homa_bind's result (errno set on failure).
 */
int e2e_bind_port(int fd, int family, uint16_t port);

/* e2e_sock_close - homa_close the socket, unmap its region, forget it.
 * Returns homa_close's result.  @s may be NULL (returns 0). */
int e2e_sock_close(struct e2e_sock *s);

/* e2e_addr - fill @a with the loopback address of @family (127.0.0.1 or ::1)
 * and @port. */
void e2e_addr(int family, uint16_t port, union sockaddr_in_union *a);

/* e2e_sock_addr - the loopback address of server socket @s. */
union sockaddr_in_union e2e_sock_addr(const struct e2e_sock *s);

/* e2e_addr_port - the port of @a in host order (0 for other families). */
uint16_t e2e_addr_port(const union sockaddr_in_union *a);

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

/*
 * Message format.  Byte i of a message with seed S is byte (i % 8) of
 * mix(S + (i / 8) * golden): depends on the RPC (S) and the position (i).
 * Whole header fields that fit are then written over the first bytes:
 *   bytes 0..7   seed S (little endian)
 *   bytes 8..11  resp_len: response wanted (0: server default,
 *                E2E_RESP_ECHO: echo the request, else that many bytes)
 *   bytes 12..15 delay_ms: service time the server spends before replying
 *                (0: server default)
 * A server answers with e2e_make_response.  Messages under 8 bytes are pure
 * pattern; their seed for responses is a fold of their bytes.
 */
#define E2E_RESP_ECHO 0xFFFFFFFFu

/* e2e_fill - write the message of @len bytes with seed @seed and header
 * fields @resp_len, @delay_ms (as far as they fit) into @buf. */
void e2e_fill(uint8_t *buf, size_t len, uint64_t seed, uint32_t resp_len,
	      uint32_t delay_ms);

/* e2e_verify - compare @buf (@len bytes) with what e2e_fill would write for
 * the same arguments.  Returns SIZE_MAX when equal, else the offset of the
 * first differing byte. */
size_t e2e_verify(const uint8_t *buf, size_t len, uint64_t seed,
		  uint32_t resp_len, uint32_t delay_ms);

/* e2e_seed_of - the seed carried by a message (its first 8 bytes), or for a
 * message under 8 bytes a fold of its bytes. */
uint64_t e2e_seed_of(const uint8_t *msg, size_t len);

/* e2e_hdr_resp_len / e2e_hdr_delay_ms - header fields of a message, 0 when
 * the message is too short to carry them. */
uint32_t e2e_hdr_resp_len(const uint8_t *msg, size_t len);
uint32_t e2e_hdr_delay_ms(const uint8_t *msg, size_t len);

/* e2e_seed - a seed unique to (this process, @k), never 0. */
uint64_t e2e_seed(uint64_t k);

/*
 * e2e_make_response - the response a helper server sends for request @req
 * (@req_len bytes) when its default response length is @srv_default (0 =
 * echo).  Writes it to @out (room for HOMA_MAX_MESSAGE_LENGTH bytes) and
 * returns its length.  Echo copies the request; otherwise the response is
 * e2e_fill(len, e2e_resp_seed(e2e_seed_of(req)), 0, 0).
 */
size_t e2e_make_response(const uint8_t *req, size_t req_len,
			 size_t srv_default, uint8_t *out);

/* e2e_resp_seed - seed of the (non-echo) response to a request of seed @s. */
uint64_t e2e_resp_seed(uint64_t s);

/* A message (or RPC error) received with e2e_recv. */
struct e2e_msg {
	ssize_t len;                       /* message length, -1 on error */
	int err;                           /* errno when len < 0 */
	uint64_t id;                       /* args.id on return */
	uint64_t cookie;                   /* args.completion_cookie */
	union sockaddr_in_union peer;      /* args.peer_addr */
	union sockaddr_in_union name;      /* msg_name as filled */
	socklen_t namelen;                 /* msg_namelen on return */
	uint32_t num_bpages;               /* args.num_bpages on return */
	uint32_t offs[HOMA_MAX_BPAGES];    /* args.bpage_offsets */
};

/*
 * e2e_recv_r - one homa_recvmsg on @s: hands back up to HOMA_MAX_BPAGES
 * entries of @ret (removed from @ret unless the call fails with EINVAL),
 * asks for RPC @id (0: any) with args.flags @flags and recvmsg flags
 * @call_flags, and records the outcome in @m.  Returns the call's result
 * with errno preserved.  @ret lets several threads share one socket.
 */
ssize_t e2e_recv_r(struct e2e_sock *s, struct e2e_bpages *ret, uint64_t id,
		   int flags, int call_flags, struct e2e_msg *m);

/* e2e_recv - e2e_recv_r with the socket's own list s->ret. */
ssize_t e2e_recv(struct e2e_sock *s, uint64_t id, int flags, int call_flags,
		 struct e2e_msg *m);

/* e2e_recv_wait - e2e_recv (recvmsg flags 0) after handing back the
 * socket's pending bpages (nonblocking calls, which may already return the
 * message) and waiting up to @ms for the socket to be readable; when it does
 * not become readable, logs the socket's counters and returns -1 with
 * m->err = errno = ETIME (a test failure with a diagnosis, not a hang). */
ssize_t e2e_recv_wait(struct e2e_sock *s, uint64_t id, int flags,
		      struct e2e_msg *m, unsigned ms);

/* e2e_release_r / e2e_release - queue the bpages of @m (as many as
 * m->num_bpages says) to be handed back by the next receive; clears
 * m->num_bpages.  Returns 0, or -1 when the list is full. */
int e2e_release_r(struct e2e_bpages *ret, struct e2e_msg *m);
int e2e_release(struct e2e_sock *s, struct e2e_msg *m);

/*
 * e2e_collect - check the bpage layout of message @m on @s and copy its
 * m->len bytes to @out (room for m->len bytes).  The layout must have
 * ceil(len / HOMA_BPAGE_SIZE) entries, all but the last whole bpage-aligned
 * bpages, the last a fragment inside one bpage, all inside the region.
 * Returns 0, or -1 with a reason in @why (@whylen bytes).
 */
int e2e_collect(const struct e2e_sock *s, const struct e2e_msg *m,
		uint8_t *out, char *why, size_t whylen);

/*
 * e2e_take_request - the server side of an RPC the test thread serves by
 * hand, once request @m has been received on server socket @s: copies its
 * m->len bytes into @req with e2e_collect, writes the response a helper
 * server with default response @srv_default (0 = echo) would send into
 * @resp (room for HOMA_MAX_MESSAGE_LENGTH bytes; see e2e_make_response)
 * and queues the request's bpages to be handed back by the next receive on
 * @s.  m->id and m->peer stay, for the reply.
 * Returns the response's length, or -1 with a reason in @why (@whylen
 * bytes) when the request could not be collected (nothing is released).
 */
ssize_t e2e_take_request(struct e2e_sock *s, struct e2e_msg *m, uint8_t *req,
			 size_t srv_default, uint8_t *resp, char *why,
			 size_t whylen);

/* An RPC the test thread serves by hand: its two sockets and buffers. */
struct e2e_hand {
	struct e2e_sock *s;           /* server socket (e2e_server_socket) */
	struct e2e_sock *c;           /* client socket */
	union sockaddr_in_union dest; /* loopback address of s */
	uint8_t *req;                 /* for e2e_take_request: request and */
	uint8_t *resp;                /* response, HOMA_MAX_MESSAGE_LENGTH
				       * bytes each (e2e_alloc) */
};

/*
 * e2e_hand_open - fill @h: a server socket and a client socket of @family,
 * both with the default region (E2E_REGION_DEFAULT), the server's address
 * and the two buffers; all of it is cleaned up at the end of the test.
 * Call from the test thread.  Returns 0, or -1 with errno set when a
 * socket cannot be made (the failure is also logged).
 */
int e2e_hand_open(struct e2e_hand *h, int family);

/* e2e_send - send a request of @len bytes from @buf to @dest with cookie
 * @cookie through homa_sendmsg; stores the new RPC's id in *@id.
 * Returns homa_sendmsg's result (errno set on failure). */
int e2e_send(struct e2e_sock *s, const union sockaddr_in_union *dest,
	     const void *buf, size_t len, uint64_t cookie, uint64_t *id);

/* e2e_reply - send the response @buf (@len bytes) of request @id to @dest
 * through homa_sendmsg.  Returns its result (errno set on failure). */
int e2e_reply(struct e2e_sock *s, const union sockaddr_in_union *dest,
	      uint64_t id, const void *buf, size_t len);

/* A request sent by e2e_req_send, remembered to check its response. */
struct e2e_req {
	uint64_t id;          /* RPC id returned by homa_sendmsg */
	uint64_t cookie;      /* completion cookie given */
	uint64_t seed;        /* seed of the request */
	size_t req_len;       /* request length */
	uint32_t resp_len;    /* header field sent */
	uint32_t delay_ms;    /* header field sent */
	size_t srv_default;   /* the server's default response length */
	int done;             /* set by the test when the response came */
};

/*
 * e2e_req_send - build a request (e2e_fill with @r->seed, @r->req_len,
 * @r->resp_len, @r->delay_ms) and send it from @s to @dest with cookie
 * @r->cookie; stores the id in r->id.  Returns 0, or -1 with errno.
 */
int e2e_req_send(struct e2e_sock *s, const union sockaddr_in_union *dest,
		 struct e2e_req *r);

/*
 * e2e_resp_check - check that received message @m on @s is the correct
 * response to @r: no error, id and cookie of @r, the expected length and
 * every byte as the server makes it, sound bpage layout.
 * Returns 0, or -1 with a reason in @why.  Does not release bpages.
 */
int e2e_resp_check(const struct e2e_sock *s, const struct e2e_req *r,
		   const struct e2e_msg *m, char *why, size_t whylen);

/*
 * e2e_must_recv_responses - receive @n responses on @s, any id first, and
 * match each to its RPC among @r[0..n) by id: fails the running test
 * (cmocka) on an RPC error, an unknown id, a second response for one RPC
 * or a wrong response (e2e_resp_check).  Sets r[i].done and releases each
 * response's bpages.
 */
void e2e_must_recv_responses(struct e2e_sock *s, struct e2e_req *r, int n);

/*
 * e2e_rpc - one complete RPC from @s to @dest: request of @req_len bytes with
 * @seed, header @resp_len and @delay_ms, to a server whose default response
 * is @srv_default; waits for this RPC's id, checks the response with
 * e2e_resp_check and releases its bpages (handed back on the next receive of
 * @s).  Returns 0, or -1 with a reason in @why.
 */
int e2e_rpc(struct e2e_sock *s, const union sockaddr_in_union *dest,
	    size_t req_len, uint32_t resp_len, uint32_t delay_ms,
	    uint64_t seed, size_t srv_default, char *why, size_t whylen);

/* ------------------------------------------------------------------ */
/* Servers                                                             */
/* ------------------------------------------------------------------ */

#define E2E_SERVER_MAX_THREADS 8

/* A helper server: a bound socket and threads answering its requests. */
struct e2e_server {
	struct e2e_sock *sock;
	size_t default_resp;       /* 0: echo; else bytes of each response */
	unsigned default_delay_ms; /* service time of requests without one */
	int nthreads;
	pthread_t threads[E2E_SERVER_MAX_THREADS];
	int running[E2E_SERVER_MAX_THREADS];
	atomic_int stop;
	atomic_ulong requests;     /* requests answered (counted just
				    * before the reply is sent) */
	atomic_ulong problems;     /* wrong requests, failed calls */
	pthread_mutex_t lock;      /* guards the fields below */
	char first_problem[256];   /* description of the first problem */
	uint64_t last_id;          /* id of the last request received */
	union sockaddr_in_union last_peer; /* its args.peer_addr */
	union sockaddr_in_union last_name; /* its msg_name */
};

/*
 * e2e_server_start - make a server socket of @family with a region of
 * @region_len bytes and start @nthreads (1..E2E_SERVER_MAX_THREADS) threads
 * that loop: receive a request, check it (id odd, cookie 0, pattern when it
 * carries its seed), wait its service time, send e2e_make_response.  Problems
 * are counted in srv->problems, never asserted.  The server is stopped at the
 * end of the test if the test does not stop it.  Returns NULL on failure.
 */
struct e2e_server *e2e_server_start(int family, size_t region_len,
				    size_t default_resp,
				    unsigned default_delay_ms, int nthreads);

/*
 * e2e_must_server, e2e_must_socket - e2e_server_start (no service delay)
 * and e2e_socket that fail the running test (cmocka) when the server or
 * socket cannot be made.  They return what they made.
 */
struct e2e_server *e2e_must_server(int family, size_t region_len,
				   size_t default_resp, int nthreads);
struct e2e_sock *e2e_must_socket(int family, size_t region_len);

/*
 * e2e_server_stop - stop the threads (a "stop" request to each from a
 * temporary client, then homa_shutdown if some are still running), join them
 * and close the socket.  Returns 0, or -1 when a thread would not exit (then
 * the server is leaked on purpose, the socket left open).
 */
int e2e_server_stop(struct e2e_server *srv);

/* e2e_server_addr - loopback address of the server. */
union sockaddr_in_union e2e_server_addr(const struct e2e_server *srv);

/* e2e_server_problem - copy the first problem of the server (or "") to @buf. */
void e2e_server_problem(struct e2e_server *srv, char *buf, size_t len);

/* Asserts (in the test thread) that @srv saw no problems. */
#define E2E_ASSERT_SERVER_OK(srv) do {                                  \
		char p_[256];                                             \
		e2e_server_problem((srv), p_, sizeof p_);                 \
		if (atomic_load(&(srv)->problems) != 0)                   \
			fail_msg("server problems: %lu, first: %s",        \
				 (unsigned long)atomic_load(&(srv)->problems), \
				 p_);                                      \
	} while (0)

/* Asserts that an e2e helper returned 0, printing its reason otherwise. */
#define E2E_ASSERT_OK(call, why) do {                                   \
		if ((call) != 0)                                          \
			fail_msg("%s: %s", #call, (why));                  \
	} while (0)

/* Asserts that @expr is -1 with errno @err. */
#define E2E_ASSERT_ERRNO(expr, err) do {                                \
		errno = 0;                                                \
		long r_ = (long)(expr);                                   \
		int e_ = errno;                                           \
		if (r_ != -1 || e_ != (err))                              \
			fail_msg("%s: got %ld errno %d (%s), want -1 errno %d (%s)", \
				 #expr, r_, e_, strerror(e_), (err),       \
				 strerror(err));                           \
	} while (0)

/* e2e_alloc - zeroed memory of @size bytes that lives until the end of the
 * current test (freed by its clean-up, also after a failed assertion).
 * Call from the test thread; never returns NULL (aborts). */
void *e2e_alloc(size_t size);

/* e2e_scratch - a 1,000,000-byte buffer private to the calling thread,
 * index 0 or 1 (two per thread); valid until the thread exits. */
uint8_t *e2e_scratch(int index);

#endif /* E2E_UTIL_H */
