// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_lent.c, lent memory on the receive side: the places
 * an endpoint lends for the payload of the packets it expects next
 * (homa_ep_lent_places), what an input batch says of them (packets placed,
 * tried but not placed, a read into the places that failed), and the
 * read_one advice between large messages; and the end of a lent message
 * (homa_ep_lent_settle; what its packets carry is tested with the output,
 * test_homa_output.c).  A client on one
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

/* place - write the payload of kept packet k where place p says, as the
 * kernel does for a datagram read into the place. */
static void place(int k, const struct homa_lent_place *p)
{
	const uint8_t *src = kept[k] + HOMA_DATA_HDR_LEN;
	size_t left = kept_len[k] - HOMA_DATA_HDR_LEN;

	for (int j = 0; j < p->iovcnt && left > 0; j++) {
		size_t n = p->iov[j].iov_len < left ? p->iov[j].iov_len : left;

		memcpy(p->iov[j].iov_base, src, n);
		src += n;
		left -= n;
	}
}

/* fits - whether the datagram buf[0..len) from src is the one place p
 * expects, by the rule a datapath applies (struct homa_lent_place). */
static bool fits(const struct homa_lent_place *p, const uint8_t *buf,
		 size_t len, const union sockaddr_in_union *src)
{
	if (len != p->hdr_len + p->payload_len ||
	    memcmp(src, &p->src, sizeof(*src)) != 0)
		return false;
	for (uint32_t k = 0; k < p->hdr_len; k++)
		if ((buf[k] & p->mask[k]) != p->want[k])
			return false;
	return true;
}

/* in_tried - kept packet k from src into s as a batch of one, tried
 * against place i of lp (placed: its payload is there). */
static void in_tried(struct net *net, int s, int k,
		     const union sockaddr_in_union *src,
		     const struct homa_lent_places *lp, int i, bool placed)
{
	struct homa_rx_pkt in = { .buf = kept[k], .len = kept_len[k],
				  .src = *src, .place = i,
				  .placed = placed };
	struct homa_rx_batch b = { .pkts = &in, .n = 1, .places = lp };

	homa_ep_input(net->ep[s], &b, 0, net->now);
}

/* places_n - the number of places endpoint s lends now. */
static int places_n(struct net *net, int s)
{
	struct homa_lent_places lp;

	homa_ep_lent_places(net->ep[s], &lp);
	return lp.n;
}

/* read_one - the read_one advice of endpoint s now. */
static bool read_one(struct net *net, int s)
{
	struct homa_lent_places lp;

	homa_ep_lent_places(net->ep[s], &lp);
	return lp.read_one;
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

/* No place before a message's first packet; after it, places for the
 * packets that follow it, in order, each the size of the first and
 * together no more than the message; every later packet fits the first
 * place lent, goes in placed, and the message arrives intact without one
 * byte copied by the endpoint (rx_placed counts them). */
static void homa_ep_lent_places__each_next_packet_placed(void **state)
{
	struct homa_lent_places lp;
	struct homa_pkt first;
	struct net *net;
	int c, s;

	(void)state;
	net = loopback_pair(&c, &s);
	assert_int_equal(places_n(net, s), 0);
	pkt_in(net->ep[s], kept[0], kept_len[0], &net->addr[c], 0, net->now);
	assert_int_equal(homa_wire_decode(kept[0], kept_len[0], &first),
			 HOMA_WIRE_OK);
	homa_ep_lent_places(net->ep[s], &lp);
	assert_int_equal(lp.n, HOMA_LENT_PLACES);
	assert_false(lp.read_one);
	for (int i = 0; i < lp.n; i++) {
		const struct homa_lent_place *p = &lp.place[i];
		size_t len = 0;

		assert_int_equal(p->offset, (i + 1) * first.payload_len);
		assert_int_equal(p->payload_len, first.payload_len);
		assert_int_equal(p->message_length, MSG_LEN);
		assert_int_equal(p->sender_id, first.sender_id);
		assert_int_equal(p->hdr_len, HOMA_DATA_HDR_LEN);
		for (int j = 0; j < p->iovcnt; j++)
			len += p->iov[j].iov_len;
		assert_int_equal(len, p->payload_len);
	}
	for (int k = 1; k < num_kept; k++) {
		homa_ep_lent_places(net->ep[s], &lp);
		assert_true(lp.n >= 1);
		assert_true(fits(&lp.place[0], kept[k], kept_len[k],
				 &net->addr[c]));
		place(k, &lp.place[0]);
		/* The header alone is the packet's buffer now. */
		memset(kept[k] + HOMA_DATA_HDR_LEN, 0xee,
		       kept_len[k] - HOMA_DATA_HDR_LEN);
		in_tried(net, s, k, &net->addr[c], &lp, 0, true);
	}
	assert_int_equal(places_n(net, s), 0);
	assert_int_equal(ep_counter(net, s, "rx_placed"), num_kept - 1);
	assert_int_equal(ep_counter(net, s, "rx_misplaced"), 0);
	request_intact(net, s);
	free_kept();
	net_free(net);
}

/* lent_after_first - a loopback pair whose server *s took the first
 * packet of the kept message and lent places for the next ones in *lp (at
 * least two). */
static struct net *lent_after_first(int *c, int *s,
				    struct homa_lent_places *lp)
{
	struct net *net = loopback_pair(c, s);

	pkt_in(net->ep[*s], kept[0], kept_len[0], &net->addr[*c], 0,
	       net->now);
	homa_ep_lent_places(net->ep[*s], lp);
	assert_true(lp->n >= 2);
	return net;
}

/* A place fits only its own packet: not one from another port, of
 * another length or at another offset.  A packet tried against a place
 * but not placed counts as rx_misplaced; one of the same message at
 * another offset ends the places for it (even when later packets come in
 * order).  Such packets go in as usual and the message still arrives
 * intact, whatever they left in a place. */
static void homa_ep_input__misplaced_ends_the_places(void **state)
{
	union sockaddr_in_union other;
	struct homa_lent_places lp;
	struct net *net;
	int c, s;

	(void)state;
	net = lent_after_first(&c, &s, &lp);
	other = net->addr[c];
	other.in4.sin_port = htons(ntohs(other.in4.sin_port) + 1);
	assert_false(fits(&lp.place[0], kept[1], kept_len[1], &other));
	assert_false(fits(&lp.place[0], kept[1], 20, &net->addr[c]));
	assert_false(fits(&lp.place[0], kept[2], kept_len[2], &net->addr[c]));
	assert_true(fits(&lp.place[1], kept[2], kept_len[2], &net->addr[c]));
	/* Packet 2 where packet 1 was expected: the guess is off. */
	place(2, &lp.place[0]);
	in_tried(net, s, 2, &net->addr[c], &lp, 0, false);
	assert_int_equal(ep_counter(net, s, "rx_misplaced"), 1);
	assert_int_equal(places_n(net, s), 0);
	for (int k = 1; k < num_kept; k++) {
		if (k == 2)
			continue;
		pkt_in(net->ep[s], kept[k], kept_len[k], &net->addr[c], 0,
		       net->now);
		/* Later packets in order do not bring the places back. */
		assert_int_equal(places_n(net, s), 0);
	}
	request_intact(net, s);
	free_kept();
	net_free(net);
}

/* Messages in packets of a network's MTU get no places (placement pays
 * only for large packets). */
static void homa_ep_lent_places__none_for_small_packets(void **state)
{
	struct net *net;
	int c, s;

	(void)state;
	cfg.loopback_mtu = 0;
	net = loopback_pair(&c, &s);
	pkt_in(net->ep[s], kept[0], kept_len[0], &net->addr[c], 0, net->now);
	assert_int_equal(places_n(net, s), 0);
	free_kept();
	net_free(net);
}

/* input_kept - hand every kept packet to endpoint s, from c, as it came. */
static void input_kept(struct net *net, int c, int s)
{
	for (int k = 0; k < num_kept; k++)
		pkt_in(net->ep[s], kept[k], kept_len[k], &net->addr[c], 0,
		       net->now);
}

/* Once a message of large packets is complete, the next read should take
 * one packet (its successor's first, whose places are known only then):
 * the first packet of the next large message brings places instead, its
 * end read_one back, and any other packet (here a small request's) ends
 * it. */
static void homa_ep_lent_places__read_one_between_large_messages(
	void **state)
{
	struct net *net;
	int c, s;

	(void)state;
	net = loopback_pair(&c, &s);
	assert_false(read_one(net, s));
	input_kept(net, c, s);
	assert_true(read_one(net, s));
	assert_int_equal(places_n(net, s), 0);
	request_intact(net, s);

	free_kept();
	send_req(net, c, s, MSG_LEN, 5);
	deliver_all(net);
	assert_true(num_kept >= 16);
	pkt_in(net->ep[s], kept[0], kept_len[0], &net->addr[c], 0, net->now);
	assert_false(read_one(net, s));
	assert_int_equal(places_n(net, s), HOMA_LENT_PLACES);
	for (int k = 1; k < num_kept; k++)
		pkt_in(net->ep[s], kept[k], kept_len[k], &net->addr[c], 0,
		       net->now);
	assert_true(read_one(net, s));
	request_intact(net, s);

	free_kept();
	send_req(net, c, s, 100, 7);
	deliver_all(net);
	assert_int_equal(num_kept, 1);
	input_kept(net, c, s);
	assert_false(read_one(net, s));
	free_kept();
	net_free(net);
}

/* The caller's read into the places failed (the region could not be
 * written): the RPC the places name fails as after a copy fault (counted
 * once, however many places name it), gets no more places, and its
 * request is handed over with EFAULT; a place naming no RPC changes
 * nothing. */
static void homa_ep_input__fault_fails_the_placed_rpc(void **state)
{
	struct homa_lent_places lp, stranger;
	struct homa_rx_batch b = { .fault = true };
	struct homa_msg_ready m;
	struct net *net;
	int c, s;

	(void)state;
	net = lent_after_first(&c, &s, &lp);
	stranger = lp;
	stranger.n = 1;
	stranger.place[0].sender_id += 2;
	b.places = &stranger;
	homa_ep_input(net->ep[s], &b, 0, net->now);
	assert_int_equal(ep_counter(net, s, "copy_faults"), 0);
	assert_true(places_n(net, s) >= 1);
	b.places = &lp;
	homa_ep_input(net->ep[s], &b, 0, net->now);
	assert_int_equal(ep_counter(net, s, "copy_faults"), 1);
	assert_int_equal(places_n(net, s), 0);
	for (int k = 1; k < num_kept; k++)
		pkt_in(net->ep[s], kept[k], kept_len[k], &net->addr[c], 0,
		       net->now);
	assert_int_equal(homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST,
					 &m), 0);
	assert_int_equal(m.error, EFAULT);
	assert_int_equal(ep_counter(net, s, "copy_faults"), 1);
	free_kept();
	net_free(net);
}

/* A packet said to be placed that is not its place's packet (a datapath
 * that broke its word; here a GRANT), or that names no place of its
 * batch, has no payload where the endpoint knows: it is dropped as
 * malformed and counted as rx_misplaced. */
static void homa_ep_input__placed_must_be_its_places_packet(void **state)
{
	struct homa_lent_places lp;
	struct homa_pkt g;
	struct net *net;
	uint8_t pkt[64];
	int c, s;

	(void)state;
	net = loopback_pair(&c, &s);
	pkt_in(net->ep[s], kept[0], kept_len[0], &net->addr[c], 0, net->now);
	homa_ep_lent_places(net->ep[s], &lp);
	assert_true(lp.n >= 1);
	memset(&g, 0, sizeof(g));
	g.type = HOMA_PKT_GRANT;
	g.sport = epi(net->ep[c]).port;
	g.dport = epi(net->ep[s]).port;
	g.sender_id = lp.place[0].sender_id;
	free(kept[1]);
	kept_len[1] = homa_wire_encode_ctrl(&g, pkt, sizeof(pkt));
	assert_true(kept_len[1] > 0);
	kept[1] = malloc(kept_len[1]);
	assert_non_null(kept[1]);
	memcpy(kept[1], pkt, kept_len[1]);
	in_tried(net, s, 1, &net->addr[c], &lp, 0, true);
	assert_int_equal(ep_counter(net, s, "drop_bad_type"), 1);
	assert_int_equal(ep_counter(net, s, "rx_misplaced"), 1);
	assert_int_equal(ep_counter(net, s, "packets_rcvd_GRANT"), 0);
	/* Its own packet, said to be placed, but in a batch without the
	 * places (or with a place index beyond them): dropped as well. */
	in_tried(net, s, 2, &net->addr[c], NULL, 1, true);
	in_tried(net, s, 2, &net->addr[c], &lp, lp.n, true);
	assert_int_equal(ep_counter(net, s, "drop_bad_type"), 3);
	assert_int_equal(ep_counter(net, s, "rx_misplaced"), 3);
	assert_int_equal(ep_counter(net, s, "packets_rcvd_DATA"), 1);
	free_kept();
	net_free(net);
}

/* Settling in steps: a request whose response is complete stops being
 * copied (the server had all of it), and nothing of it is sent again; a
 * request still unanswered, and a server's lent response, are copied to
 * the end. */
static void homa_ep_lent_settle__stops_once_response_complete(void **state)
{
	uint32_t len = 100000;
	uint8_t *src = malloc(len), *got;
	struct homa_msg_ready m;
	struct iovec iov;
	struct net *net;
	uint64_t id;
	int c, s;

	(void)state;
	assert_non_null(src);
	cfg.flags = HOMA_FLAG_DONT_THROTTLE;
	cfg.unsched_bytes = 1000000;
	net = net_pair(&cfg, 8, &c, &s);
	/* Unanswered: every step copies, until the end. */
	lend_req(net, c, s, src, len, 7);
	assert_false(homa_ep_lent_settle(net->ep[c], 1));
	deliver_all(net);
	assert_false(homa_ep_lent_settle(net->ep[c], 20000));
	assert_true(homa_ep_lent_settle(net->ep[c], len));
	assert_int_equal(ep_counter(net, c, "tx_copies_skipped"), 0);
	assert_int_equal(serve(net, s, 100), 1);
	deliver_all(net);
	assert_int_equal(homa_ep_receive(net->ep[c], 0,
					 HOMA_RECVMSG_RESPONSE, &m), 0);
	assert_int_equal(homa_ep_return_bpages(net->ep[c], m.bpage_offsets,
					       m.num_bpages, 0, net->now), 0);

	/* Answered between two steps: the rest is not copied. */
	id = lend_req(net, c, s, src, len, 8);
	assert_false(homa_ep_lent_settle(net->ep[c], 1));
	deliver_all(net);
	assert_int_equal(serve(net, s, 100), 1);
	deliver_all(net);
	assert_true(homa_ep_lent_settle(net->ep[c], 1));
	assert_int_equal(ep_counter(net, c, "tx_copies_skipped"), 1);
	memset(src, 0, len);
	/* A RESEND for it now (a stale or forged one) finds nothing to
	 * send. */
	inject_simple(net, c, &net->addr[s], HOMA_PKT_RESEND, id ^ 1);
	assert_int_equal(ep_counter(net, c, "packets_rcvd_RESEND"), 1);
	assert_int_equal(ep_counter(net, c, "drop_unknown_rpc"), 0);
	assert_int_equal(count_type(net, c, HOMA_PKT_DATA), 0);
	assert_int_equal(homa_ep_receive(net->ep[c], 0,
					 HOMA_RECVMSG_RESPONSE, &m), 0);
	assert_int_equal(m.length, 100);
	assert_int_equal(homa_ep_return_bpages(net->ep[c], m.bpage_offsets,
					       m.num_bpages, 0, net->now), 0);

	/* A server's lent response is copied whole, answered or not. */
	id = send_req(net, c, s, 100, 9);
	deliver_all(net);
	assert_int_equal(homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST,
					 &m), 0);
	assert_int_equal(homa_ep_return_bpages(net->ep[s], m.bpage_offsets,
					       m.num_bpages, 0, net->now), 0);
	fill(src, len, 10);
	iov.iov_base = src;
	iov.iov_len = len;
	assert_int_equal(homa_ep_send_reply(net->ep[s], &net->addr[c], m.id,
					    &iov, 1, HOMA_EP_SEND_LENT,
					    net->now), 0);
	deliver_all(net);
	assert_true(homa_ep_lent_settle(net->ep[s], len));
	assert_int_equal(ep_counter(net, s, "tx_copies_skipped"), 0);
	memset(src, 0, len);
	assert_int_equal(homa_ep_receive(net->ep[c], id,
					 HOMA_RECVMSG_RESPONSE, &m), 0);
	got = gather(net, c, &m);
	fill(src, len, 10);
	assert_memory_equal(got, src, len);
	free(got);
	net_free(net);
	free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_ep_lent_places__each_next_packet_placed),
		T(homa_ep_input__misplaced_ends_the_places),
		T(homa_ep_lent_places__none_for_small_packets),
		T(homa_ep_lent_places__read_one_between_large_messages),
		T(homa_ep_input__fault_fails_the_placed_rpc),
		T(homa_ep_input__placed_must_be_its_places_packet),
		T(homa_ep_lent_settle__stops_once_response_complete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
