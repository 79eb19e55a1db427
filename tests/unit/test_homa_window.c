// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_window.c, a client's request windows towards each
 * server host: requests beyond the packet window (request_window) or the
 * buffer window (request_buffer_window) wait in the client, shortest
 * first; answers (GRANT, the response, a RESEND of request bytes) release
 * both windows, a BUSY the packet window only (abort test); waiting requests cannot
 * time out, can be aborted, and ignore forged answers.  Endpoints exchange
 * packets through the in-memory network of ep_test_util.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "ep_test_util.h"

/* stat - counter k of endpoint i. */
static uint64_t stat(struct net *net, int i, enum homa_stat k)
{
	return epi(net->ep[i]).stats[k];
}

/* answer - inject into client c a control packet of type from server s
 * for client RPC id (a GRANT allows offset bytes). */
static void answer(struct net *net, int c, int s, uint8_t type, uint64_t id,
		   uint32_t offset)
{
	struct homa_pkt p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	p.sender_id = id ^ 1;
	p.offset = offset;
	p.sport = epi(net->ep[s]).port;
	inject_pkt(net, c, &net->addr[s], &p);
}

/* sends_data_of - client c's output now holds DATA of its RPC id (all
 * output is taken). */
static bool sends_data_of(struct net *net, int c, uint64_t id)
{
	struct sent_pkt p;
	bool seen = false;

	while (next_out(net, c, &p))
		if (p.pkt.type == HOMA_PKT_DATA && p.pkt.sender_id == id)
			seen = true;
	return seen;
}

/* With a window of one request, a client sends one request at a time to
 * a host: the others wait (requests_held) and go as responses come, the
 * shortest first, and every RPC completes. */
static void homa_window__one_at_a_time_shortest_first(void **state)
{
	static const uint32_t sizes[] = { 500, 300, 200, 100 };
	struct homa_msg_ready m;
	uint32_t order[4];
	struct net *net;
	int c, s;

	(void)state;
	cfg.request_window = 1;
	net = net_pair(&cfg, 8, &c, &s);
	for (int i = 0; i < 4; i++)
		send_req(net, c, s, sizes[i], (uint32_t)i + 1);
	assert_int_equal(stat(net, c, HOMA_STAT_requests_held), 3);
	for (int i = 0; i < 4; i++) {
		step(net);
		assert_int_equal(homa_ep_receive(net->ep[s], 0,
						 HOMA_RECVMSG_REQUEST, &m), 0);
		order[i] = m.length;
		/* Only one request is ever at the server. */
		assert_int_equal(homa_ep_receive(net->ep[s], 0,
						 HOMA_RECVMSG_REQUEST, &m),
				 -EAGAIN);
		homa_ep_return_bpages(net->ep[s], m.bpage_offsets,
				      m.num_bpages, 0, net->now);
		assert_int_equal(homa_ep_send_reply(net->ep[s], &net->addr[c],
						    m.id, &(struct iovec){
							    "ok", 2 }, 1, 0,
						    net->now), 0);
		step(net);
		assert_int_equal(homa_ep_receive(net->ep[c], 0,
						 HOMA_RECVMSG_RESPONSE, &m), 0);
		assert_int_equal(m.error, 0);
		homa_ep_return_bpages(net->ep[c], m.bpage_offsets,
				      m.num_bpages, 0, net->now);
	}
	assert_int_equal(order[0], 500);
	assert_int_equal(order[1], 100);
	assert_int_equal(order[2], 200);
	assert_int_equal(order[3], 300);
	net_free(net);
}

/* request_window 0 and request_buffer_window 0: no limit, as the kernel
 * module: every request's DATA leaves at once. */
static void homa_window__zero_is_no_limit(void **state)
{
	struct net *net;
	int c, s;

	(void)state;
	cfg.request_window = 0;
	cfg.request_buffer_window = 0;
	net = dead_pair(&cfg, &c, &s);
	for (int i = 0; i < 5; i++)
		send_req(net, c, s, 100, (uint32_t)i);
	assert_int_equal(count_type(net, c, HOMA_PKT_DATA), 5);
	assert_int_equal(stat(net, c, HOMA_STAT_requests_held), 0);
	net_free(net);
}

/* Towards a loopback host the packet window is loopback_request_window
 * (requests to it go whole, loopback_unsched_bytes): with request_window
 * 1, four 1 MB requests to a server on a loopback address all start; with
 * loopback_request_window 0, request_window applies and three wait. */
static void homa_window__loopback_host(void **state)
{
	for (int k = 0; k < 2; k++) {
		struct net *net;
		int c, s;

		(void)state;
		cfg.request_window = 1;
		cfg.loopback_request_window = k == 0 ? 8000000 : 0;
		net = dead_pair(&cfg, &c, &s);
		net->addr[c].in4.sin_addr.s_addr = htonl(0x7f000002);
		net->addr[s].in4.sin_addr.s_addr = htonl(0x7f000001);
		for (int i = 0; i < 4; i++)
			send_req(net, c, s, 1000000, (uint32_t)i);
		assert_int_equal(stat(net, c, HOMA_STAT_requests_held),
				 k == 0 ? 0 : 3);
		net_free(net);
	}
}

/* The buffer window: a long request waits while another long one is
 * unanswered; a short one does not (it takes no buffer space in the
 * window); a BUSY for the first (its packets were read) does not release
 * the buffer window, its GRANT does. */
static void homa_window__buffer_window_released_by_grant(void **state)
{
	struct net *net;
	uint64_t a, b, d;
	int c, s;

	(void)state;
	cfg.request_window = 0;
	cfg.request_buffer_window = 1;
	cfg.flags = HOMA_FLAG_DONT_THROTTLE;     /* no pacer: all goes now */
	net = dead_pair(&cfg, &c, &s);
	a = send_req(net, c, s, 100000, 1);      /* needs grants */
	b = send_req(net, c, s, 100000, 2);
	d = send_req(net, c, s, 100, 3);
	assert_int_equal(stat(net, c, HOMA_STAT_requests_held), 1);
	assert_true(sends_data_of(net, c, d));
	answer(net, c, s, HOMA_PKT_BUSY, a, 0);
	assert_false(sends_data_of(net, c, b));
	answer(net, c, s, HOMA_PKT_GRANT, a, 60000);
	assert_true(sends_data_of(net, c, b));
	net_free(net);
}

/* An answer for a request that waits in the client (forged: the server
 * never saw it) neither starts it nor releases anything. */
static void homa_window__forged_answer_ignored(void **state)
{
	struct net *net;
	uint64_t b;
	int c, s;

	(void)state;
	cfg.request_window = 1;
	net = dead_pair(&cfg, &c, &s);
	send_req(net, c, s, 100, 1);
	b = send_req(net, c, s, 100, 2);
	assert_int_equal(count_type(net, c, HOMA_PKT_DATA), 1);
	answer(net, c, s, HOMA_PKT_GRANT, b, 100);
	answer(net, c, s, HOMA_PKT_BUSY, b, 0);
	assert_int_equal(count_type(net, c, HOMA_PKT_DATA), 0);
	net_free(net);
}

/* Time spent waiting in the client is no silence: on a dead network the
 * first request times out after timeout_ticks, the one waiting behind it
 * only timeout_ticks after that. */
static void homa_window__waiting_request_does_not_time_out(void **state)
{
	struct homa_msg_ready m;
	struct net *net;
	uint64_t a, b;
	int c, s;

	(void)state;
	cfg.request_window = 1;
	cfg.timeout_ticks = 20;
	cfg.alive_timeout_ticks = 20;
	net = dead_pair(&cfg, &c, &s);
	a = send_req(net, c, s, 100, 1);
	b = send_req(net, c, s, 100, 2);
	step(net);
	for (int t = 0; t < 20; t++) {
		tick_ep(net, c);
		step(net);
	}
	assert_int_equal(homa_ep_receive(net->ep[c], a, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, ETIMEDOUT);
	for (int t = 0; t < 19; t++) {
		tick_ep(net, c);
		step(net);
	}
	assert_int_equal(homa_ep_receive(net->ep[c], b, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	tick_ep(net, c);
	assert_int_equal(homa_ep_receive(net->ep[c], b, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, ETIMEDOUT);
	net_free(net);
}

/* A waiting request can be aborted (it never sent anything); the window
 * is intact: the next answer still releases the others. */
static void homa_window__abort_waiting_request(void **state)
{
	struct homa_msg_ready m;
	struct net *net;
	uint64_t a, b, d;
	int c, s;

	(void)state;
	cfg.request_window = 1;
	net = dead_pair(&cfg, &c, &s);
	a = send_req(net, c, s, 100, 1);
	b = send_req(net, c, s, 100, 2);
	d = send_req(net, c, s, 200, 3);
	assert_int_equal(count_type(net, c, HOMA_PKT_DATA), 1);
	assert_int_equal(homa_ep_abort(net->ep[c], b, ECANCELED), 0);
	assert_int_equal(homa_ep_receive(net->ep[c], b, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, ECANCELED);
	assert_int_equal(count_type(net, c, HOMA_PKT_DATA), 0);
	answer(net, c, s, HOMA_PKT_BUSY, a, 0);   /* d goes now */
	assert_int_equal(count_type(net, c, HOMA_PKT_DATA), 1);
	assert_int_equal(homa_ep_abort(net->ep[c], d, 0), 0);
	assert_int_equal(epi(net->ep[c]).num_rpcs, 1);
	net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_window__one_at_a_time_shortest_first),
		T(homa_window__zero_is_no_limit),
		T(homa_window__loopback_host),
		T(homa_window__buffer_window_released_by_grant),
		T(homa_window__forged_answer_ignored),
		T(homa_window__waiting_request_does_not_time_out),
		T(homa_window__abort_waiting_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
