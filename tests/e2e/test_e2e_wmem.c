/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_e2e_wmem.c - the send-memory limit (wmem_max) through the native
 * API: a socket holding wmem_max bytes of outgoing messages (a request
 * until its RPC ends, a response until acknowledged) makes a blocking send
 * wait until an RPC ends, fails a nonblocking one with EAGAIN (the socket
 * stays usable), is not writable (poll, epoll) until memory is freed, and
 * a waiting sender is woken by homa_shutdown (ESHUTDOWN) and homa_close
 * (EBADF).  Replies are limited as requests are.
 *
 * Every socket is made with wmem_max WMEM (20,000 bytes): four 5,000-byte
 * requests reach it.  The tests observe states (the engine's counters, the
 * waiting thread asleep in the kernel, readiness), never a pause.
 */
#include "e2e_util.h"
#include "tool_hsock.h"

#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The limit of every socket of these tests, and the request size that
 * reaches it in REQS_AT_LIMIT requests. */
#define WMEM 20000
#define REQ_LEN 5000
#define REQS_AT_LIMIT (WMEM / REQ_LEN)

/* set_wmem - new sockets get wmem_max v. */
static void set_wmem(int64_t v)
{
	assert_int_equal(homa_config_set("wmem_max", v), 0);
}


/* send_flags - a request of len bytes from buf to dest through
 * homa_sendmsg with flags; its id in *id.  Returns homa_sendmsg's
 * result. */
static int send_flags(struct e2e_sock *s, const union sockaddr_in_union *dest,
		      const void *buf, size_t len, int flags, uint64_t *id)
{
	return tool_homa_sendmsg(s->fd, dest, buf, len, 0, flags, id);
}

/* fill_to_limit - REQS_AT_LIMIT requests of REQ_LEN bytes from h's client
 * to its server, ids in ids[]; the client then holds WMEM bytes. */
static void fill_to_limit(struct e2e_hand *h, uint64_t *ids)
{
	for (int i = 0; i < REQS_AT_LIMIT; i++)
		assert_int_equal(send_flags(h->c, &h->dest, h->req, REQ_LEN,
					    MSG_DONTWAIT, &ids[i]), 0);
	assert_int_equal(e2e_stat(h->c->fd, "requests_sent"), REQS_AT_LIMIT);
}

/* revents - poll fd once, without waiting, for events. */
static short revents(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	assert_true(poll(&p, 1, 0) >= 0);
	return p.revents;
}

/* serve_all - the server of h receives n requests and answers each with
 * 100 bytes. */
static void serve_all(struct e2e_hand *h, int n)
{
	struct e2e_msg m;

	for (int i = 0; i < n; i++) {
		assert_true(e2e_recv_wait(h->s, 0, HOMA_RECVMSG_REQUEST, &m,
					  5000) >= 0);
		e2e_release(h->s, &m);
		assert_int_equal(homa_reply(h->s->fd, h->resp, 100, &m.peer,
					    m.id), 0);
	}
}

/* take_response - the client of h receives the response of id. */
static void take_response(struct e2e_hand *h, uint64_t id)
{
	struct e2e_msg m;

	assert_int_equal(e2e_recv_wait(h->c, id, HOMA_RECVMSG_RESPONSE, &m,
				       5000), 100);
	e2e_release(h->c, &m);
}

/* A send made from another thread, blocking. */
struct sender {
	struct e2e_hand *h;
	pthread_t thread;
	atomic_int tid;        /* the thread's id, once it runs */
	atomic_int done;       /* the send returned */
	int result, err;
	uint64_t id;
};

/* sender_main - one blocking homa_send of REQ_LEN bytes. */
static void *sender_main(void *arg)
{
	struct sender *sd = arg;

	atomic_store(&sd->tid, (int)syscall(SYS_gettid));
	sd->result = homa_send(sd->h->c->fd, sd->h->req, REQ_LEN,
			       &sd->h->dest, &sd->id, 7);
	sd->err = errno;
	atomic_store(&sd->done, 1);
	return NULL;
}

/* thread_state - the scheduler state letter of thread tid ('R', 'S',
 * ...), or 0 when unknown. */
static char thread_state(int tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* start_blocked_sender - start sd's thread and wait (up to 5 s) until it
 * is asleep inside homa_send, which has not returned. */
static void start_blocked_sender(struct sender *sd, struct e2e_hand *h)
{
	uint64_t end = e2e_now_ms() + 5000;

	memset(sd, 0, sizeof(*sd));
	sd->h = h;
	assert_int_equal(pthread_create(&sd->thread, NULL, sender_main, sd),
			 0);
	while (atomic_load(&sd->tid) == 0 ||
	       thread_state(atomic_load(&sd->tid)) != 'S') {
		if (e2e_now_ms() > end || atomic_load(&sd->done))
			break;
		e2e_sleep_ms(1);
	}
	assert_int_equal(atomic_load(&sd->done), 0);
	assert_int_equal(thread_state(atomic_load(&sd->tid)), 'S');
}

/* A client at the limit: its next send waits, although the server has
 * received and answered every request, until the application takes a
 * response (the RPC ends); the waiting send then goes through and its RPC
 * completes. */
static void wmem__send_blocks_until_rpc_ends(void **state)
{
	struct e2e_hand h;
	struct sender sd;
	uint64_t ids[REQS_AT_LIMIT];

	(void)state;
	assert_int_equal(e2e_hand_open(&h, AF_INET), 0);
	fill_to_limit(&h, ids);
	start_blocked_sender(&sd, &h);
	/* The server holds the requests, then answers them all. */
	serve_all(&h, REQS_AT_LIMIT);
	assert_int_equal(e2e_wait_readable(h.c->fd, 5000), 1);
	/* Responses have come, but no RPC has ended: still waiting. */
	assert_int_equal(atomic_load(&sd.done), 0);
	assert_int_equal(e2e_stat(h.c->fd, "requests_sent"), REQS_AT_LIMIT);
	take_response(&h, ids[0]);
	assert_int_equal(pthread_join(sd.thread, NULL), 0);
	assert_int_equal(sd.result, 0);
	assert_int_equal(e2e_stat(h.c->fd, "requests_sent"),
			 REQS_AT_LIMIT + 1);
	for (int i = 1; i < REQS_AT_LIMIT; i++)
		take_response(&h, ids[i]);
	serve_all(&h, 1);
	take_response(&h, sd.id);
}

/* At the limit, MSG_DONTWAIT fails with EAGAIN and sends nothing; once an
 * RPC ends the same send succeeds and its RPC completes. */
static void wmem__dontwait_send_eagain(void **state)
{
	struct e2e_hand h;
	uint64_t ids[REQS_AT_LIMIT], id;

	(void)state;
	assert_int_equal(e2e_hand_open(&h, AF_INET), 0);
	fill_to_limit(&h, ids);
	E2E_ASSERT_ERRNO(send_flags(h.c, &h.dest, h.req, 1, MSG_DONTWAIT,
				    &id), EAGAIN);
	E2E_ASSERT_ERRNO(send_flags(h.c, &h.dest, h.req, 1, MSG_DONTWAIT,
				    &id), EAGAIN);
	assert_int_equal(e2e_stat(h.c->fd, "requests_sent"), REQS_AT_LIMIT);
	/* Still usable: once one RPC ends, a send goes. */
	serve_all(&h, REQS_AT_LIMIT);
	take_response(&h, ids[0]);
	assert_int_equal(send_flags(h.c, &h.dest, h.req, 100, MSG_DONTWAIT,
				    &id), 0);
	serve_all(&h, 1);
	take_response(&h, id);
	for (int i = 1; i < REQS_AT_LIMIT; i++)
		take_response(&h, ids[i]);
}

/* A SOCK_NONBLOCK socket at the limit: homa_send fails with EAGAIN; after
 * homa_abort ends its RPCs it sends again.  Its requests go to a server
 * that holds them. */
static void wmem__nonblocking_socket_eagain(void **state)
{
	struct e2e_sock *srv = e2e_server_socket(AF_INET, E2E_REGION_DEFAULT);
	union sockaddr_in_union dest;
	uint8_t *buf = e2e_alloc(REQ_LEN);
	uint64_t id;
	int fd;

	(void)state;
	assert_non_null(srv);
	dest = e2e_sock_addr(srv);
	fd = homa_socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, IPPROTO_HOMA);
	assert_true(fd >= 0);
	for (int i = 0; i < REQS_AT_LIMIT; i++)
		assert_int_equal(homa_send(fd, buf, REQ_LEN, &dest, &id, 0),
				 0);
	E2E_ASSERT_ERRNO(homa_send(fd, buf, 1, &dest, &id, 0), EAGAIN);
	assert_int_equal(e2e_stat(fd, "requests_sent"), REQS_AT_LIMIT);
	assert_int_equal(homa_abort(fd, 0, 0), 0);
	assert_int_equal(homa_send(fd, buf, 1, &dest, &id, 0), 0);
	assert_int_equal(homa_close(fd), 0);
}

/* POLLOUT (poll) and EPOLLOUT (epoll, edge-triggered) go away at the limit
 * and come back when an RPC ends; the descriptor's POLLIN is unchanged by
 * either. */
static void wmem__pollout_follows_limit(void **state)
{
	struct epoll_event ev = { .events = EPOLLOUT | EPOLLET }, out;
	struct e2e_hand h;
	uint64_t ids[REQS_AT_LIMIT];
	int ep;

	(void)state;
	assert_int_equal(e2e_hand_open(&h, AF_INET), 0);
	assert_int_equal(revents(h.c->fd, POLLIN | POLLOUT), POLLOUT);
	ep = epoll_create1(EPOLL_CLOEXEC);
	assert_true(ep >= 0);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, h.c->fd, &ev), 0);
	assert_int_equal(epoll_wait(ep, &out, 1, 0), 1);
	fill_to_limit(&h, ids);
	assert_int_equal(revents(h.c->fd, POLLIN | POLLOUT), 0);
	assert_int_equal(epoll_wait(ep, &out, 1, 0), 0);
	serve_all(&h, REQS_AT_LIMIT);
	assert_int_equal(e2e_wait_readable(h.c->fd, 5000), 1);
	assert_int_equal(revents(h.c->fd, POLLIN | POLLOUT), POLLIN);
	take_response(&h, ids[0]);
	assert_true(revents(h.c->fd, POLLOUT) & POLLOUT);
	assert_int_equal(epoll_wait(ep, &out, 1, 1000), 1);
	assert_true(out.events & EPOLLOUT);
	for (int i = 1; i < REQS_AT_LIMIT; i++)
		take_response(&h, ids[i]);
	assert_int_equal(revents(h.c->fd, POLLIN | POLLOUT), POLLOUT);
	close(ep);
}

/* homa_shutdown wakes a sender waiting for memory: ESHUTDOWN. */
static void wmem__shutdown_wakes_blocked_sender(void **state)
{
	struct e2e_hand h;
	struct sender sd;
	uint64_t ids[REQS_AT_LIMIT];

	(void)state;
	assert_int_equal(e2e_hand_open(&h, AF_INET), 0);
	fill_to_limit(&h, ids);
	start_blocked_sender(&sd, &h);
	assert_int_equal(homa_shutdown(h.c->fd, SHUT_RDWR), 0);
	assert_int_equal(pthread_join(sd.thread, NULL), 0);
	assert_int_equal(sd.result, -1);
	assert_int_equal(sd.err, ESHUTDOWN);
	assert_int_equal(e2e_stat(h.c->fd, "requests_sent"), REQS_AT_LIMIT);
}

/* homa_close wakes a sender waiting for memory: EBADF. */
static void wmem__close_wakes_blocked_sender(void **state)
{
	struct e2e_hand h;
	struct sender sd;
	uint64_t ids[REQS_AT_LIMIT];

	(void)state;
	assert_int_equal(e2e_hand_open(&h, AF_INET), 0);
	fill_to_limit(&h, ids);
	start_blocked_sender(&sd, &h);
	assert_int_equal(homa_close(h.c->fd), 0);
	assert_int_equal(pthread_join(sd.thread, NULL), 0);
	assert_int_equal(sd.result, -1);
	assert_int_equal(sd.err, EBADF);
	h.c->fd = -1;
}

/* A server's responses count until the client acknowledges them: at the
 * limit a nonblocking reply fails with EAGAIN (the request stays in
 * service), a blocking one waits until the client has its response and
 * acknowledges it; both responses then arrive. */
static void wmem__reply_waits_for_ack(void **state)
{
	struct e2e_hand h;
	struct e2e_msg m1, m2;
	struct homa_sendmsg_args args;
	struct iovec v;
	struct msghdr msg;
	uint64_t id;
	int64_t tick;

	(void)state;
	/* One-second ticks: the client's ACK of the first response (flushed
	 * once a tick) cannot come before the checks of the held memory
	 * below, however slow the machine (a sanitizer build). */
	assert_int_equal(homa_config_get("tick_usecs", &tick), 0);
	assert_int_equal(homa_config_set("tick_usecs", 1000000), 0);
	assert_int_equal(e2e_hand_open(&h, AF_INET), 0);
	assert_int_equal(homa_config_set("tick_usecs", tick), 0);
	assert_int_equal(homa_send(h.c->fd, h.req, 100, &h.dest, &id, 1), 0);
	assert_int_equal(homa_send(h.c->fd, h.req, 100, &h.dest, &id, 2), 0);
	assert_true(e2e_recv_wait(h.s, 0, HOMA_RECVMSG_REQUEST, &m1, 5000)
		    >= 0);
	assert_true(e2e_recv_wait(h.s, 0, HOMA_RECVMSG_REQUEST, &m2, 5000)
		    >= 0);
	e2e_release(h.s, &m1);
	e2e_release(h.s, &m2);
	assert_int_equal(homa_reply(h.s->fd, h.resp, WMEM, &m1.peer, m1.id),
			 0);
	assert_int_equal(revents(h.s->fd, POLLOUT), 0);
	args.id = m2.id;
	args.completion_cookie = 0;
	v.iov_base = h.resp;
	v.iov_len = 100;
	memset(&msg, 0, sizeof(msg));
	msg.msg_name = &m2.peer;
	msg.msg_namelen = sizeof(struct sockaddr_in);
	msg.msg_iov = &v;
	msg.msg_iovlen = 1;
	msg.msg_control = &args;
	E2E_ASSERT_ERRNO(homa_sendmsg(h.s->fd, &msg, MSG_DONTWAIT), EAGAIN);
	/* The client takes the first response; its ACK (at its next tick,
	 * or answering the server's NEED_ACK, through the progress thread)
	 * frees the server's memory and the waiting reply goes. */
	{
		struct e2e_msg r;

		assert_int_equal(e2e_recv_wait(h.c, m1.id ^ 1,
					       HOMA_RECVMSG_RESPONSE, &r,
					       5000), WMEM);
		e2e_release(h.c, &r);
	}
	assert_int_equal(homa_sendmsg(h.s->fd, &msg, 0), 0);
	take_response(&h, m2.id ^ 1);
}

/* wmem_max is range-checked: 0 and negative values are EINVAL, the
 * setting unchanged. */
static void wmem__config_bad_values(void **state)
{
	int64_t v;

	(void)state;
	E2E_ASSERT_ERRNO(homa_config_set("wmem_max", 0), EINVAL);
	E2E_ASSERT_ERRNO(homa_config_set("wmem_max", -1), EINVAL);
	assert_int_equal(homa_config_get("wmem_max", &v), 0);
	assert_int_equal(v, WMEM);
	set_wmem(100000000);
	assert_int_equal(homa_config_get("wmem_max", &v), 0);
	assert_int_equal(v, 100000000);
}

static const struct e2e_test tests[] = {
	E2E_TEST(wmem__send_blocks_until_rpc_ends, 20),
	E2E_TEST(wmem__dontwait_send_eagain, 20),
	E2E_TEST(wmem__nonblocking_socket_eagain, 20),
	E2E_TEST(wmem__pollout_follows_limit, 20),
	E2E_TEST(wmem__shutdown_wakes_blocked_sender, 20),
	E2E_TEST(wmem__close_wakes_blocked_sender, 20),
	E2E_TEST(wmem__reply_waits_for_ack, 20),
	E2E_TEST(wmem__config_bad_values, 10),
};

int main(int argc, char **argv)
{
	/* Every socket of the tests (made after this) gets the small
	 * limit. */
	if (homa_config_set("wmem_max", WMEM) != 0)
		return 1;
	return e2e_main(argc, argv, "e2e_wmem", tests,
			sizeof tests / sizeof tests[0]);
}
