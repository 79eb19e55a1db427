// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_resend.c, what the RESENDs of a receiver ask for:
 * gaps and the granted tail within the host's loss-recovery budget,
 * shortest message first, at the message's own levels; the kernel rule
 * (no budget, resend_priority=control); the first bytes of a message of
 * which nothing arrived; and the ablation resend_tail_probe.  The silent RPC's timer runs alone (tick_ep, or
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
	pkt_in(net->ep[s], pkt, sizeof(pkt), &src, 0, net->now);
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

/* seg - DATA payload bytes of one full packet of endpoint s. */
static uint32_t seg(struct net *net, int s)
{
	return (uint32_t)(epi(net->ep[s]).max_packet - HOMA_DATA_HDR_LEN);
}

/* A receiver whose sender went quiet asks for the granted tail past the
 * last arrival (all of the 100,000-byte message is granted here) within
 * its host's budget, at the level of the message's unscheduled bytes
 * (100,000 bytes: 4): the first round has the floor of two packets.  When
 * the retransmissions of that part have come, the next part is asked for
 * at once, as large as what arrived since (3,000 bytes). */
static void homa_ep_timer__tail_asked_within_budget(void **state)
{
	struct net *net;
	struct homa_pkt r;
	int s;

	(void)state;
	assert_int_equal(cfg.resend_tail_probe, 0);
	assert_int_equal(cfg.resend_priority, HOMA_RESEND_PRIO_MESSAGE);
	assert_int_equal(cfg.resend_floor_packets, 2);
	net = net_server(&cfg, 64, &s);
	for (uint32_t off = 0; off < 10000; off += 1000)
		inject_data(net, s, 2, off, false);
	(void)take_resends(net->ep[s], net->now, &r);
	assert_int_equal(tick_until_resend(net, s, &r), 1);
	assert_int_equal(r.sender_id, 2 ^ 1);
	assert_int_equal(r.offset, 10000);
	assert_int_equal(r.length, 2 * seg(net, s));
	assert_int_equal(r.priority, 4);
	assert_true(10000 + 2 * seg(net, s) > 12000);
	inject_data(net, s, 2, 10000, true);
	inject_data(net, s, 2, 11000, true);
	assert_int_equal(take_resends(net->ep[s], net->now, &r), 0);
	/* The packet that ends the part asked for. */
	inject_data(net, s, 2, 12000, true);
	assert_int_equal(take_resends(net->ep[s], net->now, &r), 1);
	assert_int_equal(r.offset, 13000);
	assert_int_equal(r.length, 3000);
	assert_int_equal(r.priority, 4);
	net_free(net);
}

/* Past the unscheduled bytes (40,000) a repair is asked for at the
 * message's grant level (0: it is alone), and after two probes without
 * progress at its unscheduled level (4), above scheduled traffic that may
 * have starved it, below short messages. */
static void homa_ep_timer__starved_repair_at_unsched_level(void **state)
{
	struct net *net;
	struct homa_pkt r;
	int s;

	(void)state;
	net = net_server(&cfg, 64, &s);
	for (uint32_t off = 0; off < 45000; off += 1000)
		inject_data(net, s, 2, off, false);
	(void)take_resends(net->ep[s], net->now, &r);
	assert_int_equal(tick_until_resend(net, s, &r), 1);
	assert_int_equal(r.offset, 45000);
	assert_int_equal(r.priority, 0);
	assert_int_equal(tick_until_resend(net, s, &r), 1);
	assert_int_equal(r.priority, 0);
	assert_int_equal(tick_until_resend(net, s, &r), 1);
	assert_int_equal(r.offset, 45000);
	assert_int_equal(r.priority, 4);
	net_free(net);
}

/* Without the budget (resend_floor_packets 0) and with
 * resend_priority=control, the kernel module's rule: the whole granted
 * tail at the control priority (7), once per probe. */
static void homa_ep_timer__kernel_rule_asks_whole_tail(void **state)
{
	struct homa_config saved = cfg;
	struct net *net;
	struct homa_pkt r;
	int s;

	(void)state;
	cfg.resend_floor_packets = 0;
	cfg.resend_priority = HOMA_RESEND_PRIO_CONTROL;
	net = net_server(&cfg, 64, &s);
	for (uint32_t off = 0; off < 10000; off += 1000)
		inject_data(net, s, 2, off, false);
	(void)take_resends(net->ep[s], net->now, &r);
	assert_int_equal(tick_until_resend(net, s, &r), 1);
	assert_int_equal(r.offset, 10000);
	assert_int_equal(r.length, 100000 - 10000);
	assert_int_equal(r.priority, 7);
	net_free(net);
	cfg = saved;
}

/* timer_resends - tick endpoint s until its timer asks; the RESENDs of
 * that tick (at most cap) into r; returns how many. */
static int timer_resends(struct net *net, int s, struct homa_pkt *r, int cap)
{
	uint8_t buf[2048];
	struct homa_out out = { .buf = buf };
	struct homa_pkt pkt;
	int n = 0;

	for (int i = 0; i < 50 && n == 0; i++) {
		net->now += 1000000;
		homa_ep_timer(net->ep[s], net->now);
		while (homa_ep_output(net->ep[s], net->now, &out)) {
			assert_int_equal(homa_wire_decode(buf, out.len, &pkt),
					 HOMA_WIRE_OK);
			if (pkt.type == HOMA_PKT_RESEND && n < cap)
				r[n++] = pkt;
		}
	}
	return n;
}

/* The kernel rule asks for gaps and the tail at once, each exactly, at
 * the control priority, clamped to the levels in use (num_priorities 4:
 * level 3). */
static void homa_ep_timer__gaps_asked_at_control_priority(void **state)
{
	struct homa_config saved = cfg;
	struct homa_pkt r[4];
	struct homa_pkt pkt;
	struct net *net;
	int s;

	(void)state;
	cfg.num_priorities = 4;
	cfg.max_sched_prio = 2;
	cfg.resend_floor_packets = 0;
	cfg.resend_priority = HOMA_RESEND_PRIO_CONTROL;
	net = net_server(&cfg, 64, &s);
	inject_data(net, s, 2, 0, false);
	inject_data(net, s, 2, 3000, false);
	(void)take_resends(net->ep[s], net->now, &pkt);
	assert_int_equal(timer_resends(net, s, r, 4), 2);
	assert_int_equal(r[0].offset, 1000);
	assert_int_equal(r[0].length, 2000);
	assert_int_equal(r[0].priority, 3);
	assert_int_equal(r[1].offset, 4000);
	assert_int_equal(r[1].length, 100000 - 4000);
	assert_int_equal(r[1].priority, 3);
	net_free(net);
	cfg = saved;
}

/* Within the budget (the first round: the floor of two packets) the gap
 * comes first, whole, and the tail gets what is left of the budget. */
static void homa_ep_timer__gap_first_then_part_of_tail(void **state)
{
	struct homa_pkt r[4];
	struct homa_pkt pkt;
	struct net *net;
	int s;

	(void)state;
	net = net_server(&cfg, 64, &s);
	inject_data(net, s, 2, 0, false);
	inject_data(net, s, 2, 3000, false);
	(void)take_resends(net->ep[s], net->now, &pkt);
	assert_int_equal(timer_resends(net, s, r, 4), 2);
	assert_int_equal(r[0].offset, 1000);
	assert_int_equal(r[0].length, 2000);
	assert_int_equal(r[1].offset, 4000);
	assert_int_equal(r[1].length, 2 * seg(net, s) - 2000);
	net_free(net);
}

/* Two silent messages from one host share its budget (the first round:
 * two packets) shortest remaining first: id 4, with nine packets here and
 * less to come than id 2 with one, asks for the two packets, id 2 only for
 * the one packet every due RPC asks for. */
static void homa_ep_timer__budget_split_shortest_first(void **state)
{
	struct homa_pkt r[4];
	struct homa_pkt pkt;
	struct net *net;
	int s;

	(void)state;
	net = net_server(&cfg, 64, &s);
	inject_data(net, s, 2, 0, false);
	for (uint32_t off = 0; off < 9000; off += 1000)
		inject_data(net, s, 4, off, false);
	(void)take_resends(net->ep[s], net->now, &pkt);
	assert_int_equal(timer_resends(net, s, r, 4), 2);
	assert_int_equal(r[0].sender_id, 4 ^ 1);
	assert_int_equal(r[0].offset, 9000);
	assert_int_equal(r[0].length, 2 * seg(net, s));
	assert_int_equal(r[1].sender_id, 2 ^ 1);
	assert_int_equal(r[1].offset, 1000);
	assert_int_equal(r[1].length, seg(net, s));
	net_free(net);
}

/* A client that has nothing of its response asks, by default, for its
 * first packet at unknown_peer_priority (6); with the kernel rule (no budget,
 * resend_priority=control) for all of it, RESEND(0, -1), at the control
 * priority (7). */
static void homa_ep_timer__nothing_arrived_asks_all(void **state)
{
	struct homa_config saved = cfg;
	int c, s;
	struct net *net;
	struct sent_pkt o;
	uint64_t id;
	int n;

	(void)state;
	for (int kernel = 0; kernel <= 1; kernel++) {
		cfg.resend_priority = kernel ? HOMA_RESEND_PRIO_CONTROL :
					       HOMA_RESEND_PRIO_MESSAGE;
		cfg.resend_floor_packets = kernel ? 0 : 2;
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
				if (!kernel) {
					assert_int_equal(o.pkt.length,
							 seg(net, c));
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

/* The ablation resend_tail_probe (without the budget): a receiver whose
 * sender went quiet asks for one packet past the last arrival, not for its
 * whole grant, at the level of the message's unscheduled bytes (4).  The
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
	cfg.resend_floor_packets = 0;
	net = net_server(&cfg, 64, &s);
	seg_max = epi(net->ep[s]).max_packet;
	for (uint32_t off = 0; off < 10000; off += 1000)
		inject_data(net, s, 2, off, false);
	(void)take_resends(net->ep[s], net->now, &r);
	assert_int_equal(tick_until_resend(net, s, &r), 1);
	assert_int_equal(r.offset, 10000);
	assert_true(r.length > 0 && r.length <= seg_max);
	assert_int_equal(r.priority, 4);
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
	assert_int_equal(r.priority, 4);
	/* A second retransmitted packet asks for nothing more. */
	inject_data(net, s, 2, 12000, true);
	assert_int_equal(take_resends(net->ep[s], net->now, &r), 0);
	net_free(net);
	cfg = saved;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_ep_timer__tail_asked_within_budget),
		T(homa_ep_timer__starved_repair_at_unsched_level),
		T(homa_ep_timer__kernel_rule_asks_whole_tail),
		T(homa_ep_timer__gaps_asked_at_control_priority),
		T(homa_ep_timer__gap_first_then_part_of_tail),
		T(homa_ep_timer__budget_split_shortest_first),
		T(homa_ep_timer__nothing_arrived_asks_all),
		T(homa_ep_timer__tail_probed_one_packet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
