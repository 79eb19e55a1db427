// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_resend.c, what the RESENDs of a receiver ask for:
 * the whole granted tail, gaps and tail at once at the control priority,
 * all of a message of which nothing arrived, and, with the ablations
 * resend_tail_probe and resend_low_priority, one packet of the tail first
 * and the old priorities.  The silent RPC's timer runs alone (tick_ep, or
 * homa_ep_timer) and its output is read directly.  When RESENDs go out:
 * test_homa_timer.c.
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

/* inject_data - DATA of a 100,000-byte request id from 10.0.0.9:5000 to
 * endpoint s: 1,000 bytes at offset, flagged as a retransmission when
 * retransmit is set. */
static void inject_data(struct net *net, int s, uint64_t id, uint32_t offset,
			bool retransmit)
{
	uint8_t pkt[HOMA_DATA_HDR_LEN + 1000];
	union sockaddr_in_union src = from_peer9();
	struct homa_pkt h;

	data_pkt(net, s, pkt, id, 100000, offset, 1000);
	assert_int_equal(homa_wire_decode(pkt, sizeof(pkt), &h), HOMA_WIRE_OK);
	h.retransmit = retransmit;
	homa_wire_encode_data_hdr(&h, pkt);
	homa_ep_input(net->ep[s], pkt, sizeof(pkt), &src, 0, net->now);
}

/* take_resends - pull every packet ep has now; returns how many were
 * RESENDs, the last of them in *last. */
static int take_resends(struct homa_ep *ep, uint64_t now,
			struct homa_pkt *last)
{
	uint8_t buf[2048];
	struct homa_out out = { .buf = buf };
	struct homa_pkt pkt;
	int n = 0;

	while (homa_ep_output(ep, now, &out)) {
		assert_int_equal(homa_wire_decode(buf, out.len, &pkt),
				 HOMA_WIRE_OK);
		if (pkt.type == HOMA_PKT_RESEND) {
			*last = pkt;
			n++;
		}
	}
	return n;
}

/* tick_until_resend - run ep's timer tick after tick until it asks for
 * something (at most 50 ticks); returns the RESENDs of that tick. */
static int tick_until_resend(struct net *net, int s, struct homa_pkt *last)
{
	for (int i = 0; i < 50; i++) {
		int n;

		net->now += 1000000;
		homa_ep_timer(net->ep[s], net->now);
		n = take_resends(net->ep[s], net->now, last);
		if (n)
			return n;
	}
	return 0;
}

/* A receiver whose sender went quiet asks for the whole granted tail past
 * the last arrival (all of the 100,000-byte message is granted here), at
 * the control priority (7), once per probe. */
static void homa_ep_timer__tail_asked_whole(void **state)
{
	struct net *net;
	struct homa_pkt r;
	int s;

	(void)state;
	assert_int_equal(cfg.resend_tail_probe, 0);
	assert_int_equal(cfg.resend_low_priority, 0);
	net = net_server(&cfg, 64, &s);
	for (uint32_t off = 0; off < 10000; off += 1000)
		inject_data(net, s, 2, off, false);
	(void)take_resends(net->ep[s], net->now, &r);
	assert_int_equal(tick_until_resend(net, s, &r), 1);
	assert_int_equal(r.sender_id, 2 ^ 1);
	assert_int_equal(r.offset, 10000);
	assert_int_equal(r.length, 100000 - 10000);
	assert_int_equal(r.priority, 7);
	/* A retransmitted packet of the tail asks for nothing more. */
	inject_data(net, s, 2, 10000, true);
	assert_int_equal(take_resends(net->ep[s], net->now, &r), 0);
	net_free(net);
}

/* Gaps and the tail are asked for at once, each exactly, at the control
 * priority, clamped to the levels in use (num_priorities 4: level 3). */
static void homa_ep_timer__gaps_asked_at_control_priority(void **state)
{
	struct homa_config saved = cfg;
	struct homa_pkt r[4];
	uint8_t buf[2048];
	struct homa_out out = { .buf = buf };
	struct homa_pkt pkt;
	struct net *net;
	int s, n = 0;

	(void)state;
	cfg.num_priorities = 4;
	cfg.max_sched_prio = 2;
	net = net_server(&cfg, 64, &s);
	inject_data(net, s, 2, 0, false);
	inject_data(net, s, 2, 3000, false);
	(void)take_resends(net->ep[s], net->now, &pkt);
	for (int i = 0; i < 50 && n == 0; i++) {
		net->now += 1000000;
		homa_ep_timer(net->ep[s], net->now);
		while (homa_ep_output(net->ep[s], net->now, &out)) {
			assert_int_equal(homa_wire_decode(buf, out.len, &pkt),
					 HOMA_WIRE_OK);
			if (pkt.type == HOMA_PKT_RESEND && n < 4)
				r[n++] = pkt;
		}
	}
	assert_int_equal(n, 2);
	assert_int_equal(r[0].offset, 1000);
	assert_int_equal(r[0].length, 2000);
	assert_int_equal(r[0].priority, 3);
	assert_int_equal(r[1].offset, 4000);
	assert_int_equal(r[1].length, 100000 - 4000);
	assert_int_equal(r[1].priority, 3);
	net_free(net);
	cfg = saved;
}

/* A client that has nothing of its response asks for all of it:
 * RESEND(0, -1) at the control priority (7).  The ablation
 * resend_low_priority asks for its first packet only, at the unknown-peer
 * priority (6). */
static void homa_ep_timer__nothing_arrived_asks_all(void **state)
{
	struct homa_config saved = cfg;
	int c, s;
	struct net *net;
	struct sent_pkt o;
	uint64_t id;
	int n;

	(void)state;
	for (int legacy = 0; legacy <= 1; legacy++) {
		cfg.resend_low_priority = legacy;
		net = dead_pair(&cfg, &c, &s);
		id = send_req(net, c, s, 100, 1);
		n = 0;
		for (int t = 0; t < 20 && n == 0; t++) {
			tick_ep(net, c);
			while (next_out(net, c, &o)) {
				if (o.pkt.type != HOMA_PKT_RESEND)
					continue;
				assert_int_equal(o.pkt.sender_id, id);
				assert_int_equal(o.pkt.offset, 0);
				if (legacy) {
					assert_int_equal(o.pkt.length,
						homa_ep_max_packet(net->ep[c]) -
						HOMA_DATA_HDR_LEN);
					assert_int_equal(o.pkt.priority, 6);
				} else {
					assert_int_equal(o.pkt.length,
							 HOMA_RESEND_ALL);
					assert_int_equal(o.pkt.priority, 7);
				}
				n++;
			}
		}
		assert_int_equal(n, 1);
		net_free(net);
	}
	cfg = saved;
}

/* The ablation resend_tail_probe: a receiver whose sender went quiet asks
 * for one packet past the last arrival, not for its whole grant, at the
 * grant priority with resend_low_priority (0: the message is alone).  The
 * probed packet arriving as original DATA means the rest is on its way:
 * nothing more is asked; arriving as a retransmission of bytes that had not
 * come, it means the rest was lost: the rest of the grant is asked for at
 * once. */
static void homa_ep_timer__tail_probed_one_packet(void **state)
{
	struct homa_config saved = cfg;
	struct net *net;
	struct homa_pkt r;
	size_t seg_max;
	int s;

	(void)state;
	cfg.resend_tail_probe = 1;
	cfg.resend_low_priority = 1;
	net = net_server(&cfg, 64, &s);
	seg_max = homa_ep_max_packet(net->ep[s]);
	for (uint32_t off = 0; off < 10000; off += 1000)
		inject_data(net, s, 2, off, false);
	(void)take_resends(net->ep[s], net->now, &r);
	assert_int_equal(tick_until_resend(net, s, &r), 1);
	assert_int_equal(r.offset, 10000);
	assert_true(r.length > 0 && r.length <= seg_max);
	assert_int_equal(r.priority, 0);
	/* The original comes (it was only late): nothing more asked. */
	inject_data(net, s, 2, 10000, false);
	assert_int_equal(take_resends(net->ep[s], net->now, &r), 0);
	/* Quiet again: the next probe, one packet at 11,000. */
	assert_int_equal(tick_until_resend(net, s, &r), 1);
	assert_int_equal(r.offset, 11000);
	assert_true(r.length <= seg_max);
	/* It comes as a retransmission: the rest of the grant was lost. */
	inject_data(net, s, 2, 11000, true);
	assert_int_equal(take_resends(net->ep[s], net->now, &r), 1);
	assert_int_equal(r.offset, 12000);
	assert_int_equal(r.length, 100000 - 12000);
	assert_int_equal(r.priority, 0);
	/* A second retransmitted packet asks for nothing more. */
	inject_data(net, s, 2, 12000, true);
	assert_int_equal(take_resends(net->ep[s], net->now, &r), 0);
	net_free(net);
	cfg = saved;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_ep_timer__tail_asked_whole),
		T(homa_ep_timer__gaps_asked_at_control_priority),
		T(homa_ep_timer__nothing_arrived_asks_all),
		T(homa_ep_timer__tail_probed_one_packet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
