// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_output.c, the endpoint's packet output: gathered
 * runs of DATA, the pacer (long messages a burst at a time, short ones and
 * loopback peers past it, HOMA_FLAG_DONT_THROTTLE) and the packet size
 * per destination (the control queue: test_homa_ctrl.c).
 * Endpoints exchange packets through the in-memory network of
 * ep_test_util, or one endpoint's output is pulled directly.
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
#include "homa_addr.h"

/* A gathered run: consecutive packets of one message, each header naming
 * its offset; a paced run stops at HOMA_RUN_QUEUE_FACTOR times the pacer's
 * allowance and counts as one unit for the pacer. */
static void homa_ep_output__gathered_run(void **state)
{
	struct net *net;
	uint8_t buf[64 * HOMA_DATA_HDR_LEN];
	struct homa_out out = { .buf = buf, .max_segs = 64 };
	uint8_t one[2048];
	struct homa_pkt pkt;
	uint32_t seg;
	int c, s;

	(void)state;
	cfg.flags = HOMA_FLAG_DONT_THROTTLE;
	net = net_pair(&cfg, 8, &c, &s);
	cfg.flags = 0;
	seg = (uint32_t)epi(net->ep[c]).max_packet - HOMA_DATA_HDR_LEN;
	send_req(net, c, s, 30000, 1);
	assert_true(homa_ep_output(net->ep[c], net->now, &out));
	assert_int_equal(out.segs, (30000 + seg - 1) / seg);
	assert_int_equal(out.payload_len, 30000);
	assert_int_equal(out.seg, seg);
	assert_int_equal(out.len, out.segs * HOMA_DATA_HDR_LEN + 30000);
	for (uint32_t k = 0; k < out.segs; k++) {
		uint32_t n = 30000 - k * seg < seg ? 30000 - k * seg : seg;

		/* Whole packets back to back, each header in place. */
		memcpy(one, out.frames + k * (HOMA_DATA_HDR_LEN + seg),
		       HOMA_DATA_HDR_LEN + n);
		assert_int_equal(homa_wire_decode(one, HOMA_DATA_HDR_LEN + n,
						  &pkt), HOMA_WIRE_OK);
		assert_int_equal(pkt.type, HOMA_PKT_DATA);
		assert_int_equal(pkt.offset, k * seg);
		assert_int_equal(pkt.message_length, 30000);
		assert_int_equal(pkt.payload_len, n);
		assert_int_equal(pkt.payload[0],
				 (uint8_t)((k * seg * 7 + 13 + ((k * seg) >> 8))
					   & 0xff));
	}
	assert_false(homa_ep_output(net->ep[c], net->now, &out));
	net_free(net);

	/* Paced (25 Gbit/s, 4 x 5 us: 62,500 bytes, 41 packets of 1500):
	 * the unscheduled bytes leave as one run, then the pacer waits. */
	net = net_pair(&cfg, 8, &c, &s);
	send_req(net, c, s, 200000, 2);
	assert_true(homa_ep_output(net->ep[c], net->now, &out));
	assert_int_equal(out.segs, (40000 + seg - 1) / seg);
	assert_false(homa_ep_output(net->ep[c], net->now, &out));
	assert_true(epi(net->ep[c]).pacer_wake == 0);
	net_free(net);
}

/* A lent message: runs handed out before homa_ep_lent_settle carry the caller's
 * bytes (payload), the ones after come from the endpoint's copy, and the
 * server receives the message as it was even though the caller reuses its
 * buffer once settled. */
static void homa_ep_output__lent_message(void **state)
{
	uint8_t buf[64 * HOMA_DATA_HDR_LEN];
	struct homa_out out = { .buf = buf, .max_segs = 4 };
	uint32_t len = 100000;
	uint8_t *src = malloc(len);
	struct homa_msg_ready m;
	struct homa_pkt pkt;
	uint8_t one[2048];
	uint8_t *got, *want = malloc(len);
	struct net *net;
	int c, s;

	(void)state;
	assert_non_null(src);
	assert_non_null(want);
	cfg.flags = HOMA_FLAG_DONT_THROTTLE;
	cfg.unsched_bytes = 1000000;
	net = net_pair(&cfg, 8, &c, &s);
	lend_req(net, c, s, src, len, 5);
	memcpy(want, src, len);
	assert_true(homa_ep_output(net->ep[c], net->now, &out));
	assert_ptr_equal(out.payload, src);
	assert_int_equal(out.segs, 4);
	/* Packet 1: its header in its frame, its payload in src. */
	memcpy(one, out.frames + HOMA_DATA_HDR_LEN + out.seg,
	       HOMA_DATA_HDR_LEN);
	memcpy(one + HOMA_DATA_HDR_LEN, src + out.seg, out.seg);
	assert_int_equal(homa_wire_decode(one, HOMA_DATA_HDR_LEN + out.seg,
					  &pkt), HOMA_WIRE_OK);
	assert_int_equal(pkt.offset, out.seg);
	assert_memory_equal(pkt.payload, src + out.seg, out.seg);
	assert_true(homa_ep_output(net->ep[c], net->now, &out));
	assert_ptr_equal(out.payload, src + 4 * out.seg);
	assert_true(homa_ep_lent_settle(net->ep[c], UINT32_MAX));
	memset(src, 0, len);
	assert_true(homa_ep_output(net->ep[c], net->now, &out));
	assert_null(out.payload);
	net_free(net);

	/* Through the network: the first packets carry the lent bytes, the
	 * rest the copy made at homa_ep_lent_settle. */
	net = net_pair(&cfg, 8, &c, &s);
	net->gather_segs = 4;
	lend_req(net, c, s, src, len, 6);
	memcpy(want, src, len);
	assert_int_equal(deliver_some(net, 1), 1);
	assert_true(homa_ep_lent_settle(net->ep[c], UINT32_MAX));
	memset(src, 0, len);
	deliver_all(net);
	assert_int_equal(homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST,
					 &m), 0);
	assert_int_equal(m.length, len);
	got = gather(net, s, &m);
	assert_memory_equal(got, want, len);
	free(got);
	net_free(net);
	free(src);
	free(want);
}

/* Lending covers one send of one piece of HOMA_EP_LEND_MIN bytes or more;
 * other messages are copied at once, and an RPC ended before
 * homa_ep_lent_settle leaves nothing behind to copy. */
static void homa_ep_send_request__lends_only_large_single_pieces(void **state)
{
	uint8_t buf[64 * HOMA_DATA_HDR_LEN];
	struct homa_out out = { .buf = buf, .max_segs = 64 };
	uint32_t len = HOMA_EP_LEND_MIN;
	uint8_t *src = malloc(len);
	struct iovec two[2] = { { src, 100 }, { src + 100, len - 100 } };
	struct net *net;
	uint64_t id;
	int c, s;

	(void)state;
	assert_non_null(src);
	fill(src, len, 1);
	cfg.flags = HOMA_FLAG_DONT_THROTTLE;
	net = net_pair(&cfg, 8, &c, &s);
	/* Too short. */
	lend_req(net, c, s, src, len - 1, 1);
	assert_true(homa_ep_output(net->ep[c], net->now, &out));
	assert_null(out.payload);
	while (homa_ep_output(net->ep[c], net->now, &out))
		;
	assert_true(homa_ep_lent_settle(net->ep[c], UINT32_MAX));
	/* Two pieces. */
	assert_int_equal(homa_ep_send_request(net->ep[c], &net->addr[s], two,
					      2, 0, HOMA_EP_SEND_LENT, &id,
					      net->now), 0);
	assert_true(homa_ep_output(net->ep[c], net->now, &out));
	assert_null(out.payload);
	while (homa_ep_output(net->ep[c], net->now, &out))
		;
	/* Lending is for the send that asks for it only. */
	lend_req(net, c, s, src, len, 2);
	send_req(net, c, s, len, 3);
	assert_true(homa_ep_output(net->ep[c], net->now, &out));
	assert_true(out.payload != NULL);
	while (homa_ep_output(net->ep[c], net->now, &out))
		assert_null(out.payload);
	assert_true(homa_ep_lent_settle(net->ep[c], UINT32_MAX));
	/* Aborted before homa_ep_lent_settle: nothing to copy any more. */
	id = lend_req(net, c, s, src, len, 4);
	assert_int_equal(homa_ep_abort(net->ep[c], id, ECANCELED), 0);
	assert_true(homa_ep_lent_settle(net->ep[c], UINT32_MAX));
	net_free(net);
	free(src);
}

/* count_output - pull every packet ep has now; count DATA packets. */
static int count_output(struct homa_ep *ep, uint64_t now)
{
	uint8_t buf[2048];
	struct homa_out out = { .buf = buf };
	int n = 0;

	while (homa_ep_output(ep, now, &out))
		n += buf[11] == HOMA_PKT_DATA;
	return n;
}

/* The pacer lets a long message out a burst at a time (next_timer says
 * when the next may go), while a short one bypasses it. */
static void homa_ep_output__pacer_holds_long_messages(void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	uint64_t t0 = net->now, wake;
	int first, later;

	(void)state;
	/* 25 Gbit/s, 5 us: a burst of about ten 1500-byte packets. */
	send_req(net, c, s, 40000, 1);
	first = count_output(net->ep[c], t0);
	assert_true(first >= 9 && first <= 12);
	wake = homa_ep_next_timer(net->ep[c]);
	assert_true(wake > t0 && wake < t0 + 1000);
	/* A short message bypasses the pacer. */
	send_req(net, c, s, 500, 2);
	assert_int_equal(count_output(net->ep[c], t0), 1);
	assert_true(homa_ep_next_timer(net->ep[c]) > wake);
	wake = homa_ep_next_timer(net->ep[c]);
	assert_int_equal(count_output(net->ep[c], wake - 1), 0);
	later = count_output(net->ep[c], wake);
	assert_true(later >= 1);
	/* The rest goes out burst by burst at the pacer's pace: about
	 * 40 KB at 25 Gbit/s, 13 us in all. */
	while (first + later < 29) {
		wake = homa_ep_next_timer(net->ep[c]);
		assert_true(wake < t0 + 20000);
		later += count_output(net->ep[c], wake);
	}
	assert_int_equal(first + later, 29);
	net_free(net);
}

/* With HOMA_FLAG_DONT_THROTTLE the unscheduled bytes go out at once. */
static void homa_ep_output__dont_throttle_flag(void **state)
{
	struct net *net;
	int c, s;

	(void)state;
	cfg.flags = HOMA_FLAG_DONT_THROTTLE;
	net = net_pair(&cfg, 8, &c, &s);
	send_req(net, c, s, 40000, 1);
	assert_int_equal(count_output(net->ep[c], net->now), 29);
	cfg.flags = 0;
	net_free(net);
}

/* A peer on a loopback address is reached without a NIC queue: its DATA
 * bypasses the pacer, and what it is sent does not hold back DATA for
 * other peers either. */
static void homa_ep_output__loopback_peer_unpaced(void **state)
{
	int c, s;
	struct net *net;
	int s2;
	uint64_t t0;

	(void)state;
	cfg.loopback_mtu = 0; /* packets of mtu, counted */
	net = net_pair(&cfg, 8, &c, &s);
	s2 = net_add(net, 98, true, 8);
	t0 = net->now;
	net->addr[s].in4.sin_addr.s_addr = htonl(0x7f000001);
	send_req(net, c, s, 40000, 1);
	assert_int_equal(count_output(net->ep[c], t0), 29);
	assert_true(epi(net->ep[c]).pacer_wake == 0);
	/* The link estimate is untouched: a remote peer's message still
	 * gets its first full burst at once. */
	send_req(net, c, s2, 40000, 2);
	assert_true(count_output(net->ep[c], t0) >= 9);
	assert_true(epi(net->ep[c]).pacer_wake > t0);
	net_free(net);
	cfg.loopback_mtu = 65000;
}

/* first_seg - the packet payload of the first run ep outputs. */
static uint32_t first_seg(struct net *net, int i)
{
	uint8_t buf[64 * HOMA_DATA_HDR_LEN];
	struct homa_out out = { .buf = buf, .max_segs = 64 };

	assert_true(homa_ep_output(net->ep[i], net->now, &out));
	assert_true(out.segs >= 1);
	return out.seg;
}

/* The packet size is chosen per destination when a message starts: to a
 * loopback address from loopback_mtu (IP and Homa headers inside it),
 * elsewhere from mtu; loopback_mtu 0 means mtu everywhere.  The receiver's
 * own settings play no part: an endpoint whose loopback_mtu is 0 takes
 * the large packets (and answers in its own). */
static void homa_ep_output__segment_size_per_destination(void **state)
{
	struct net *net;
	int c, s, s2;

	(void)state;
	assert_int_equal(cfg.loopback_mtu, 65000);
	net = net_new(&cfg);
	c = net_add(net, 40000, false, 32);
	cfg.loopback_mtu = 0; /* the server: packets of mtu everywhere */
	s = net_add(net, 99, true, 32);
	s2 = net_add(net, 98, true, 32);
	cfg.loopback_mtu = 65000;
	net->addr[s].in4.sin_addr.s_addr = htonl(0x7f000001);
	net->gather_segs = 64;

	send_req(net, c, s, 1000000, 1);
	assert_int_equal(first_seg(net, c), 65000 - 20 - HOMA_DATA_HDR_LEN);
	send_req(net, c, s2, 1000000, 2);
	assert_int_equal(first_seg(net, c), 1500 - 20 - HOMA_DATA_HDR_LEN);
	net_free(net);

	/* A whole RPC: 16 DATA packets carry the 1 MB request. */
	net = net_new(&cfg);
	c = net_add(net, 40000, false, 32);
	cfg.loopback_mtu = 0;
	s = net_add(net, 99, true, 32);
	cfg.loopback_mtu = 65000;
	net->addr[s].in4.sin_addr.s_addr = htonl(0x7f000001);
	net->gather_segs = 64;
	check_rpc(net, c, s, 1000000, 1000, 3);
	assert_int_equal(epi(net->ep[c]).stats[HOMA_STAT_packets_sent_DATA],
			 (1000000 + 64923) / 64924);
	assert_int_equal(epi(net->ep[s]).stats[HOMA_STAT_packets_sent_DATA],
			 1);
	net_free(net);

	/* loopback_mtu 0: packets of mtu to a loopback address too. */
	cfg.loopback_mtu = 0;
	net = net_pair(&cfg, 32, &c, &s);
	cfg.loopback_mtu = 65000;
	net->addr[s].in4.sin_addr.s_addr = htonl(0x7f000001);
	net->gather_segs = 64;
	send_req(net, c, s, 1000000, 4);
	assert_int_equal(first_seg(net, c), 1500 - 20 - HOMA_DATA_HDR_LEN);
	net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_ep_output__gathered_run),
		T(homa_ep_output__lent_message),
		T(homa_ep_send_request__lends_only_large_single_pieces),
		T(homa_ep_output__pacer_holds_long_messages),
		T(homa_ep_output__dont_throttle_flag),
		T(homa_ep_output__loopback_peer_unpaced),
		T(homa_ep_output__segment_size_per_destination),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
