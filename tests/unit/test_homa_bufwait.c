// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_bufwait.c, the buffer space of incoming messages:
 * messages that find no space wait for it, shortest first, and their
 * senders are asked for everything once they get it; one host's
 * incomplete requests hold at most their share of the pool.  Endpoints
 * exchange packets through the in-memory network of ep_test_util, or
 * packets are handed to one endpoint, whose state is read from
 * homa_ep_internal.h where that says more.
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
#include "homa_ep_internal.h"

/* expect_resend_all - endpoint s's output now holds one RESEND(0, -1) at
 * priority prio for the request client_id of src, and RESENDs for nothing
 * else: the request has buffer space and its client is asked for all of
 * it again (other packets, such as CUTOFFS, and a probe of the same
 * request by the timer, may come too).  resend_priority=message names the
 * level of the message's unscheduled bytes: 6 for 1,000 bytes (cutoffs
 * 200 / 2,800 / 15,000 for levels 7 / 6 / 5), 4 for longer ones. */
static void expect_resend_all(struct net *net, int s, uint64_t client_id,
			      const union sockaddr_in_union *src, int prio)
{
	struct sent_pkt o;
	int n = 0;

	while (next_out(net, s, &o)) {
		if (o.pkt.type != HOMA_PKT_RESEND)
			continue;
		assert_true(same_addr(&o.dest, src));
		assert_int_equal(o.pkt.sender_id, client_id ^ 1);
		if (o.pkt.length != HOMA_RESEND_ALL)
			continue;
		assert_int_equal(o.pkt.offset, 0);
		assert_int_equal(o.pkt.priority, prio);
		n++;
	}
	assert_int_equal(n, 1);
}

/* A client with a 4-bpage pool gets three 200,000-byte responses at once:
 * those that find no space wait (buffer_waits) and all arrive intact as
 * the application hands space back. */
static void homa_ep_pool__messages_wait_for_space(void **state)
{
	struct net *net = net_new(&cfg);
	int c = net_add(net, 40000, false, 4), s = net_add(net, 99, true, 64);
	uint64_t ids[3];
	int i, served = 0, got = 0, rounds = 0;

	(void)state;
	for (i = 0; i < 3; i++)
		ids[i] = send_req(net, c, s, 100, (uint32_t)i + 1);
	while (got < 3) {
		struct homa_msg_ready m;

		step(net);
		while (served < 3 && serve(net, s, 200000))
			served++;
		step(net);
		for (i = 0; i < 3; i++) {
			if (ids[i] && homa_ep_receive(net->ep[c], ids[i],
						      HOMA_RECVMSG_RESPONSE,
						      &m) == 0) {
				uint8_t *data = gather(net, c, &m);
				uint8_t *want = malloc(m.length);

				assert_int_equal(m.error, 0);
				assert_int_equal(m.length, 200000);
				fill(want, m.length, request_seed(m.cookie));
				assert_memory_equal(data, want, m.length);
				free(data);
				free(want);
				assert_int_equal(homa_ep_return_bpages(
					net->ep[c], m.bpage_offsets,
					m.num_bpages, 0, net->now), 0);
				ids[i] = 0;
				got++;
			}
		}
		advance(net, 1000);
		assert_true(++rounds < 2000);
	}
	assert_true(epi(net->ep[c]).stats[HOMA_STAT_buffer_waits] > 0);
	net_free(net);
}

/* Messages waiting for buffer space are served shortest first, whatever
 * their order of arrival.  Host a's request fills the whole pool (4
 * bpages); a long request (host b, 4 bpages) and then a short one (host
 * c, 1,000 bytes) find no space and wait.  When host a's
 * request ends (RPC_UNKNOWN), the short one gets space first, and its
 * client is asked for everything (RESEND(0, -1) at priority 7); the long
 * one, which no longer fits, keeps waiting.  Once the short message has
 * arrived and its space is back, the long one gets space and is asked
 * for. */
static void homa_ep_input__waiting_served_shortest_first(void **state)
{
	const uint32_t a = 0x0b000001, b = 0x0b000002, c = 0x0b000003;
	union sockaddr_in_union src_a = host_addr(a, 5000);
	union sockaddr_in_union src_b = host_addr(b, 5000);
	union sockaddr_in_union src_c = host_addr(c, 5000);
	struct net *net = net_new(&cfg);
	int s = net_add(net, 99, true, 4), t;
	const uint64_t *st = epi(net->ep[s]).stats;
	struct homa_rpc *lng, *shrt;
	struct homa_msg_ready m;

	(void)state;
	inject_request(net, s, a, 5000, 2, 4 * HOMA_BPAGE_SIZE);
	assert_int_equal(homa_pool_free_bpages(epi(net->ep[s]).pool), 0);
	inject_request(net, s, b, 5000, 2, 4 * HOMA_BPAGE_SIZE);
	inject_request(net, s, c, 5000, 2, 1000);
	assert_int_equal(st[HOMA_STAT_buffer_waits], 2);
	lng = server_rpc(net, s, 2, &src_b);
	shrt = server_rpc(net, s, 2, &src_c);
	assert_non_null(lng);
	assert_non_null(shrt);
	assert_false(lng->has_buffers || shrt->has_buffers);
	assert_int_equal(count_type(net, s, HOMA_PKT_RESEND), 0);

	inject_simple(net, s, &src_a, HOMA_PKT_RPC_UNKNOWN, 2);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 2);
	assert_true(shrt->has_buffers);
	assert_false(lng->has_buffers);
	expect_resend_all(net, s, 2, &src_c, 6);

	/* The short request arrives; its space comes back. */
	inject_request(net, s, c, 5000, 2, 1000);
	assert_int_equal(homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST,
					 &m), 0);
	assert_int_equal(m.length, 1000);
	assert_true(same_addr(&m.peer, &src_c));
	assert_int_equal(homa_ep_return_bpages(net->ep[s], m.bpage_offsets,
					       m.num_bpages, 0, net->now), 0);
	/* (A partly used bpage may stay leased a while.) */
	for (t = 0; t < 20 && !lng->has_buffers; t++)
		tick_ep(net, s);
	assert_true(lng->has_buffers);
	expect_resend_all(net, s, 2, &src_b, 4);
	net_free(net);
}

/* One host's incomplete requests may hold peer_buffer_percent of the pool
 * (one request always): its next one waits, another host's does not. */
static void homa_ep_limits__peer_buffer_share(void **state)
{
	struct net *net;
	const uint64_t *st;
	int s;

	(void)state;
	net = net_server(&cfg, 16, &s);          /* 1 MiB pool */
	st = epi(net->ep[s]).stats;
	/* A host holding nothing may start even a large message... */
	inject_request(net, s, 0x0b000001, 5000, 2, 600000);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 1);
	/* ...but not go past half the pool with a second one: that one
	 * waits for buffer space (its data dropped until then). */
	inject_request(net, s, 0x0b000001, 5000, 4, 200000);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 2);
	assert_int_equal(st[HOMA_STAT_drop_peer_limit], 1);
	assert_int_equal(st[HOMA_STAT_buffer_waits], 1);
	/* Another host still gets space, ahead of the waiting request. */
	inject_request(net, s, 0x0b000002, 5000, 2, 200000);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 3);
	assert_int_equal(st[HOMA_STAT_buffer_waits], 1);
	net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_ep_pool__messages_wait_for_space),
		T(homa_ep_input__waiting_served_shortest_first),
		T(homa_ep_limits__peer_buffer_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
