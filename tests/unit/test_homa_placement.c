// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_placement.c: the places an endpoint offers for the
 * payload of the packets it expects next (homa_ep_rx_hints), its check of
 * a datagram against one (homa_ep_hint_matches) and the input of a packet
 * whose payload is in place (homa_ep_input_placed), and a read into the
 * places that failed (homa_ep_rx_fault).  A client on one
 * loopback address sends a 1 MB request (64 KB packets) to a server on
 * another through the in-memory network of ep_test_util; a filter keeps
 * the request's DATA packets, which the tests then hand to the server
 * themselves, as the socket layer would after the kernel wrote them.
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

#define MSG_LEN 1000000
#define MAX_KEPT 1024

/* The DATA packets the filter kept, in the order they were sent. */
static uint8_t *kept[MAX_KEPT];
static size_t kept_len[MAX_KEPT];
static int num_kept;

/* keep_data - net filter: DATA packets are kept (and not delivered);
 * everything else goes through. */
static bool keep_data(struct net *net, const uint8_t *pkt, size_t len,
		      int from, int to)
{
	struct homa_pkt p;

	(void)net;
	(void)from;
	(void)to;
	assert_int_equal(homa_wire_decode(pkt, len, &p), HOMA_WIRE_OK);
	if (p.type != HOMA_PKT_DATA)
		return true;
	assert_true(num_kept < MAX_KEPT);
	kept[num_kept] = malloc(len);
	assert_non_null(kept[num_kept]);
	memcpy(kept[num_kept], pkt, len);
	kept_len[num_kept++] = len;
	return false;
}

/* free_kept - forget the kept packets. */
static void free_kept(void)
{
	for (int i = 0; i < num_kept; i++)
		free(kept[i]);
	num_kept = 0;
}

/* loopback_pair - a network of a client (*c, 127.0.0.2) and a server (*s,
 * 127.0.0.1) whose 1 MB request from the client waits in kept[] (16
 * packets of 64 KB, or more of a smaller loopback_mtu). */
static struct net *loopback_pair(int *c, int *s)
{
	struct net *net = net_pair(&cfg, 64, c, s);

	net->addr[*c].in4.sin_addr.s_addr = htonl(0x7f000002);
	net->addr[*s].in4.sin_addr.s_addr = htonl(0x7f000001);
	net->gather_segs = 64;
	net->filter = keep_data;
	num_kept = 0;
	send_req(net, *c, *s, MSG_LEN, 5);
	deliver_all(net);
	assert_true(num_kept >= 16);
	return net;
}

/* place - write the payload of kept packet k where hint h says, as the
 * kernel does for a datagram read into the place. */
static void place(int k, const struct homa_rx_hint *h)
{
	const uint8_t *src = kept[k] + HOMA_DATA_HDR_LEN;
	size_t left = kept_len[k] - HOMA_DATA_HDR_LEN;

	for (int j = 0; j < h->iovcnt && left > 0; j++) {
		size_t n = h->iov[j].iov_len < left ? h->iov[j].iov_len : left;

		memcpy(h->iov[j].iov_base, src, n);
		src += n;
		left -= n;
	}
}

/* request_intact - the server's request is whole and holds the bytes the
 * client sent (fill, seed 5). */
static void request_intact(struct net *net, int s)
{
	struct homa_msg_ready m;
	uint8_t *data, *want = malloc(MSG_LEN);

	assert_non_null(want);
	assert_int_equal(homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST,
					 &m), 0);
	assert_int_equal(m.length, MSG_LEN);
	data = gather(net, s, &m);
	fill(want, MSG_LEN, 5);
	assert_memory_equal(data, want, MSG_LEN);
	free(data);
	free(want);
}

/* No guess before a message's first packet; after it, places for the
 * packets that follow it, in order, each the size of the first and
 * together no more than the message; every later packet matches the first
 * place offered, goes in placed, and the message arrives intact without
 * one byte copied by the endpoint (rx_placed counts them). */
static void homa_ep_rx_hints__each_next_packet_placed(void **state)
{
	struct homa_rx_hint h[8];
	struct homa_pkt first;
	struct net *net;
	int c, s, n;

	(void)state;
	net = loopback_pair(&c, &s);
	assert_int_equal(homa_ep_rx_hints(net->ep[s], h, 8), 0);
	homa_ep_input(net->ep[s], kept[0], kept_len[0], &net->addr[c], 0,
		      net->now);
	assert_int_equal(homa_wire_decode(kept[0], kept_len[0], &first),
			 HOMA_WIRE_OK);
	n = homa_ep_rx_hints(net->ep[s], h, 8);
	assert_int_equal(n, 8);
	for (int i = 0; i < n; i++) {
		size_t len = 0;

		assert_int_equal(h[i].offset, (i + 1) * first.payload_len);
		assert_int_equal(h[i].payload_len, first.payload_len);
		assert_int_equal(h[i].message_length, MSG_LEN);
		assert_int_equal(h[i].sender_id, first.sender_id);
		for (int j = 0; j < h[i].iovcnt; j++)
			len += h[i].iov[j].iov_len;
		assert_int_equal(len, h[i].payload_len);
	}
	for (int k = 1; k < num_kept; k++) {
		assert_true(homa_ep_rx_hints(net->ep[s], h, 8) >= 1);
		assert_true(homa_ep_hint_matches(net->ep[s], &h[0], kept[k],
						 kept_len[k], &net->addr[c]));
		place(k, &h[0]);
		/* The header alone is the packet's buffer now. */
		memset(kept[k] + HOMA_DATA_HDR_LEN, 0xee,
		       kept_len[k] - HOMA_DATA_HDR_LEN);
		homa_ep_input_placed(net->ep[s], kept[k], kept_len[k],
				     &net->addr[c], 0, net->now);
	}
	assert_int_equal(homa_ep_rx_hints(net->ep[s], h, 8), 0);
	assert_int_equal(ep_counter(net, s, "rx_placed"), num_kept - 1);
	assert_int_equal(ep_counter(net, s, "rx_misplaced"), 0);
	request_intact(net, s);
	free_kept();
	net_free(net);
}

/* A datagram that is not the expected packet is refused: another RPC's
 * or host's (the guesses go on), another offset of the same message (no
 * more guesses for it, even when later packets come in order).  Refused packets go in as usual and the message
 * still arrives intact, whatever a refused datagram left in a place. */
static void homa_ep_hint_matches__refuses_other_packets(void **state)
{
	union sockaddr_in_union other;
	struct homa_rx_hint h[2];
	struct net *net;
	int c, s;

	(void)state;
	net = loopback_pair(&c, &s);
	homa_ep_input(net->ep[s], kept[0], kept_len[0], &net->addr[c], 0,
		      net->now);
	assert_int_equal(homa_ep_rx_hints(net->ep[s], h, 2), 2);
	other = net->addr[c];
	other.in4.sin_port = htons(ntohs(other.in4.sin_port) + 1);
	assert_false(homa_ep_hint_matches(net->ep[s], &h[0], kept[1],
					  kept_len[1], &other));
	assert_false(homa_ep_hint_matches(net->ep[s], &h[0], kept[1], 20,
					  &net->addr[c]));
	assert_int_equal(homa_ep_rx_hints(net->ep[s], h, 2), 2);
	/* Packet 2 where packet 1 was expected: the guess is off. */
	place(2, &h[0]);
	assert_false(homa_ep_hint_matches(net->ep[s], &h[0], kept[2],
					  kept_len[2], &net->addr[c]));
	assert_int_equal(homa_ep_rx_hints(net->ep[s], h, 2), 0);
	assert_int_equal(ep_counter(net, s, "rx_misplaced"), 3);
	for (int k = 1; k < num_kept; k++) {
		homa_ep_input(net->ep[s], kept[k], kept_len[k], &net->addr[c],
			      0, net->now);
		/* Later packets in order do not bring the guesses back. */
		assert_int_equal(homa_ep_rx_hints(net->ep[s], h, 2), 0);
	}
	request_intact(net, s);
	free_kept();
	net_free(net);
}

/* Messages in packets of a network's MTU get no guesses (placement pays
 * only for large packets), and no probe once complete. */
static void homa_ep_rx_hints__none_for_small_packets(void **state)
{
	struct homa_rx_hint h[8];
	struct net *net;
	int c, s;

	(void)state;
	cfg.loopback_mtu = 0;
	net = loopback_pair(&c, &s);
	homa_ep_input(net->ep[s], kept[0], kept_len[0], &net->addr[c], 0,
		      net->now);
	assert_int_equal(homa_ep_rx_hints(net->ep[s], h, 8), 0);
	free_kept();
	net_free(net);
}

/* input_kept - hand every kept packet to endpoint s, from c, as it came. */
static void input_kept(struct net *net, int c, int s)
{
	for (int k = 0; k < num_kept; k++)
		homa_ep_input(net->ep[s], kept[k], kept_len[k], &net->addr[c],
			      0, net->now);
}

/* Once a message of large packets is complete, the next read should take
 * one packet (its successor's first, whose places are known only then):
 * the first packet of the next large message brings hints instead, its
 * end the probe back, and any other packet (here a small request's) ends
 * it. */
static void homa_ep_rx_probe__between_large_messages(void **state)
{
	struct homa_rx_hint h[8];
	struct net *net;
	int c, s;

	(void)state;
	net = loopback_pair(&c, &s);
	assert_false(homa_ep_rx_probe(net->ep[s]));
	input_kept(net, c, s);
	assert_true(homa_ep_rx_probe(net->ep[s]));
	assert_int_equal(homa_ep_rx_hints(net->ep[s], h, 8), 0);
	request_intact(net, s);

	free_kept();
	send_req(net, c, s, MSG_LEN, 5);
	deliver_all(net);
	assert_true(num_kept >= 16);
	homa_ep_input(net->ep[s], kept[0], kept_len[0], &net->addr[c], 0,
		      net->now);
	assert_false(homa_ep_rx_probe(net->ep[s]));
	assert_int_equal(homa_ep_rx_hints(net->ep[s], h, 8), 8);
	for (int k = 1; k < num_kept; k++)
		homa_ep_input(net->ep[s], kept[k], kept_len[k], &net->addr[c],
			      0, net->now);
	assert_true(homa_ep_rx_probe(net->ep[s]));
	request_intact(net, s);

	free_kept();
	send_req(net, c, s, 100, 7);
	deliver_all(net);
	assert_int_equal(num_kept, 1);
	input_kept(net, c, s);
	assert_false(homa_ep_rx_probe(net->ep[s]));
	free_kept();
	net_free(net);
}

/* The caller's read into the places failed (the region could not be
 * written): the RPC the hints name fails as after a copy fault (counted
 * once, however many hints name it), gets no more places, and its request
 * is handed over with EFAULT; a hint naming no RPC changes nothing. */
static void homa_ep_rx_fault__fails_the_hinted_rpc(void **state)
{
	struct homa_rx_hint h[2], stranger;
	struct homa_msg_ready m;
	struct net *net;
	int c, s;

	(void)state;
	net = loopback_pair(&c, &s);
	homa_ep_input(net->ep[s], kept[0], kept_len[0], &net->addr[c], 0,
		      net->now);
	assert_int_equal(homa_ep_rx_hints(net->ep[s], h, 2), 2);
	stranger = h[0];
	stranger.sender_id += 2;
	homa_ep_rx_fault(net->ep[s], &stranger, 1);
	assert_int_equal(ep_counter(net, s, "copy_faults"), 0);
	assert_int_equal(homa_ep_rx_hints(net->ep[s], &stranger, 1), 1);
	homa_ep_rx_fault(net->ep[s], h, 2);
	assert_int_equal(ep_counter(net, s, "copy_faults"), 1);
	assert_int_equal(homa_ep_rx_hints(net->ep[s], h, 2), 0);
	for (int k = 1; k < num_kept; k++)
		homa_ep_input(net->ep[s], kept[k], kept_len[k], &net->addr[c],
			      0, net->now);
	assert_int_equal(homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST,
					 &m), 0);
	assert_int_equal(m.error, EFAULT);
	assert_int_equal(ep_counter(net, s, "copy_faults"), 1);
	free_kept();
	net_free(net);
}

/* homa_ep_input_placed takes only DATA: anything else is malformed. */
static void homa_ep_input_placed__only_data(void **state)
{
	struct net *net;
	int c, s;
	uint8_t pkt[64];
	struct homa_pkt g;
	size_t len;

	(void)state;
	net = net_pair(&cfg, 8, &c, &s);
	memset(&g, 0, sizeof(g));
	g.type = HOMA_PKT_GRANT;
	g.sport = homa_ep_port(net->ep[c]);
	g.dport = homa_ep_port(net->ep[s]);
	g.sender_id = 2;
	len = homa_wire_encode_ctrl(&g, pkt, sizeof(pkt));
	assert_true(len > 0);
	homa_ep_input_placed(net->ep[s], pkt, len, &net->addr[c], 0,
			     net->now);
	assert_int_equal(ep_counter(net, s, "drop_bad_type"), 1);
	assert_int_equal(ep_counter(net, s, "packets_rcvd_GRANT"), 0);
	net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_ep_rx_hints__each_next_packet_placed),
		T(homa_ep_hint_matches__refuses_other_packets),
		T(homa_ep_rx_hints__none_for_small_packets),
		T(homa_ep_rx_probe__between_large_messages),
		T(homa_ep_rx_fault__fails_the_hinted_rpc),
		T(homa_ep_input_placed__only_data),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
