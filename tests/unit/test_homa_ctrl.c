// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_ctrl.c, the endpoint's queue of control packets: it
 * grows up to max_ctrl_queue, keeps its packets in order, and drops (and
 * counts) what does not fit.  Packets are injected into one endpoint of
 * the in-memory network of ep_test_util and its output is pulled
 * directly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ep_test_util.h"

/* A burst of 5000 answers (RPC_UNKNOWN to RESENDs for unknown RPCs) is
 * more than the ring's first 2048 entries: it grows and loses none, and
 * they go out in order; with max_ctrl_queue 64 the 65th is dropped. */
static void ep_queue_ctrl__ring_grows_up_to_max(void **state)
{
	uint8_t buf[64 * HOMA_DATA_HDR_LEN];
	struct homa_out out = { .buf = buf };
	struct net *net = net_new(&cfg);
	int s = net_add(net, 99, true, 8), n = 0;
	const uint64_t *st = epi(net->ep[s]).stats;
	union sockaddr_in_union src = host_addr(0x0a0b0001, 5000);
	struct homa_pkt p;
	uint64_t i;

	(void)state;
	for (i = 0; i < 5000; i++)
		inject_simple(net, s, &src, HOMA_PKT_RESEND, 2 * i + 2);
	assert_int_equal(st[HOMA_STAT_drop_ctrl_queue_full], 0);
	while (homa_ep_output(net->ep[s], net->now, &out)) {
		assert_int_equal(homa_wire_decode(buf, out.len, &p),
				 HOMA_WIRE_OK);
		assert_int_equal(p.type, HOMA_PKT_RPC_UNKNOWN);
		assert_int_equal(p.sender_id, 2 * (uint64_t)n + 3);
		n++;
	}
	assert_int_equal(n, 5000);
	net_free(net);

	cfg.max_ctrl_queue = 64;
	net = net_server(&cfg, 8, &s);
	st = epi(net->ep[s]).stats;
	for (i = 0; i < 65; i++)
		inject_simple(net, s, &src, HOMA_PKT_RESEND, 2 * i + 2);
	assert_int_equal(st[HOMA_STAT_drop_ctrl_queue_full], 1);
	assert_int_equal(st[HOMA_STAT_packets_sent_RPC_UNKNOWN], 64);
	cfg.max_ctrl_queue = 65536;
	net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(ep_queue_ctrl__ring_grows_up_to_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
