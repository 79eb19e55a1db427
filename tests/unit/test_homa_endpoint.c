// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of the sans-IO endpoint as a whole (homa_endpoint.c: creation,
 * the application's calls, whole RPCs of every size with and without
 * loss): two (or more) endpoints exchange packets through the in-memory
 * network of ep_test_util.  Packet input has its own tests in
 * test_homa_incoming.c, output and the pacer in test_homa_output.c, the
 * timer in test_homa_timer.c and the counters in test_homa_stats.c.
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

/* homa_ep_rpc__sizes_deferred_copies - with every payload copy deferred
 * past the receiver's output (as the socket layer runs the endpoint),
 * messages of every size still arrive intact. */
static void homa_ep_rpc__sizes_deferred_copies(void **state)
{
	static const uint32_t sizes[] = { 1, 1424, 40000, 65536, 65537,
					  200000, 1000000 };
	struct net *net = net_new(&cfg);
	int c, s;

	(void)state;
	c = net_add(net, 40000, false, 64);
	s = net_add(net, 99, true, 64);
	net->defer_mode = true;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		check_rpc(net, c, s, sizes[i], sizes[i], (uint32_t)i + 1);
	net_free(net);
}

/* homa_ep_shutdown__deferred_copies_made_first - freeing RPCs whose copies
 * are deferred makes the copies before the space goes back to the pool:
 * nothing lands there once it is free (here: the packet's bytes are in the
 * region, not the wiped bytes that replace them after the shutdown). */
static void homa_ep_shutdown__deferred_copies_made_first(void **state)
{
	uint8_t pkt[HOMA_DATA_HDR_LEN + 1000], want[1000];
	struct net *net = net_new(&cfg);
	int s;

	(void)state;
	s = deferred_first_packet(net, pkt, 3000);
	memcpy(want, pkt + HOMA_DATA_HDR_LEN, sizeof(want));
	homa_ep_shutdown(net->ep[s]);
	memset(pkt, 0xee, sizeof(pkt));
	backlog_in(net->ep[s], false); /* nothing deferred is left */
	assert_int_equal(epi(net->ep[s]).num_rpcs, 0);
	assert_non_null(memmem(net->region[s], 4 * (size_t)HOMA_BPAGE_SIZE,
			       want, sizeof(want)));
	net_free(net);
}

/* Creation fails (NULL) for a family other than IPv4/IPv6, no parameters,
 * or more encapsulation bytes than HOMA_EP_MAX_ENCAP. */
static void homa_ep_create__bad_params(void **state)
{
	struct homa_ep_params p = { &cfg, AF_UNIX, 1, true, 2, 1, 0, NULL,
				    NULL };

	(void)state;
	assert_null(homa_ep_create(&p));
	assert_null(homa_ep_create(NULL));
	p.family = AF_INET;
	p.encap_bytes = HOMA_EP_MAX_ENCAP + 1;
	assert_null(homa_ep_create(&p));
}

/* max_packet_for - homa_ep_info.max_packet of a new endpoint of family with
 * encap bytes of datapath header (mtu 1500, the default). */
static size_t max_packet_for(int family, uint32_t encap)
{
	struct homa_ep_params p = { &cfg, family, 1, true, 2, 1, encap, NULL,
				    NULL };
	struct homa_ep *ep = homa_ep_create(&p);
	size_t len;

	assert_non_null(ep);
	len = epi(ep).max_packet;
	homa_ep_destroy(ep);
	return len;
}

/* The IP datagram fits in mtu: the IP header, the datapath's header (the
 * UDP header's 8 bytes) and the Homa packet; DATA payloads shrink by the
 * encapsulation (1424 bytes over raw IPv4 at 1500, 1416 over UDP). */
static void homa_ep_create__encap_counts_against_mtu(void **state)
{
	(void)state;
	assert_int_equal(cfg.mtu, 1500);
	assert_int_equal(max_packet_for(AF_INET, 0), 1500 - 20);
	assert_int_equal(max_packet_for(AF_INET, 8), 1500 - 20 - 8);
	assert_int_equal(max_packet_for(AF_INET6, 0), 1500 - 40);
	assert_int_equal(max_packet_for(AF_INET6, 8), 1500 - 40 - 8);
	assert_int_equal(max_packet_for(AF_INET, 8) - HOMA_DATA_HDR_LEN, 1416);
}

/* Requests with a wrong family, no bytes, too many bytes or no iovec are
 * refused (-EINVAL), and so is a reply with a client id; a reply to an
 * RPC that is gone is dropped quietly. */
static void homa_ep_send_request__invalid(void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	uint8_t buf[10];
	struct iovec iov = { buf, 10 }, big = { buf, HOMA_MAX_MESSAGE_LENGTH + 1 };
	struct iovec zero = { buf, 0 };
	union sockaddr_in_union bad = net->addr[s];
	uint64_t id;

	(void)state;
	bad.sa.sa_family = AF_INET6;
	assert_int_equal(homa_ep_send_request(net->ep[c], &bad, &iov, 1, 0, 0,
					      &id, 0), -EINVAL);
	assert_int_equal(homa_ep_send_request(net->ep[c], &net->addr[s], &zero,
					      1, 0, 0, &id, 0), -EINVAL);
	assert_int_equal(homa_ep_send_request(net->ep[c], &net->addr[s], &big,
					      1, 0, 0, &id, 0), -EINVAL);
	assert_int_equal(homa_ep_send_request(net->ep[c], &net->addr[s], NULL,
					      1, 0, 0, &id, 0), -EINVAL);
	assert_int_equal(homa_ep_send_reply(net->ep[s], &net->addr[c], 2, &iov,
					    1, 0, 0), -EINVAL);
	/* A reply to an RPC that no longer exists is dropped quietly. */
	assert_int_equal(homa_ep_send_reply(net->ep[s], &net->addr[c], 3, &iov,
					    1, 0, 0), 0);
	assert_int_equal(epi(net->ep[c]).num_rpcs, 0);
	net_free(net);
}

/* A request from source port 0 (over raw IP the peer's port is the Homa
 * header's, which a hostile host sets as it likes): nobody could take its
 * response (a reply to port 0 is EINVAL), so it is dropped and counted
 * (drop_wrong_port) and no RPC is left for the application to answer. */
static void homa_ep_input__source_port_zero_dropped(void **state)
{
	struct homa_msg_ready m;
	struct net *net;
	int s;

	(void)state;
	net = net_server(&cfg, 8, &s);
	inject_request(net, s, 0x0b000100, 0, 2, 500);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 0);
	assert_int_equal(ep_counter(net, s, "drop_wrong_port"), 1);
	assert_int_equal(homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST |
					 HOMA_RECVMSG_NONBLOCKING, &m),
			 -EAGAIN);
	net_free(net);
}

/* rpc_sizes - RPCs with requests, then responses, of sizes around every
 * boundary (packets, unscheduled bytes, bpages, the largest message),
 * with DATA gathered into runs of up to gather_segs packets (0: whole
 * packets); afterwards nothing is left anywhere. */
static void rpc_sizes(uint32_t gather_segs)
{
	static const uint32_t sizes[] = { 1, 100, 1423, 1424, 1425, 2848,
		2849, 39999, 40000, 40001, 65535, 65536, 65537, 131073,
		500000, 1000000 };
	int c, s;
	struct net *net = net_pair(&cfg, 64, &c, &s);
	size_t i;

	net->gather_segs = gather_segs;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		check_rpc(net, c, s, sizes[i], 100, (uint32_t)i + 1);
		check_rpc(net, c, s, 100, sizes[i], (uint32_t)i + 50);
	}
	advance(net, 10000);
	/* Acks ended every server RPC; nothing is left anywhere. */
	assert_int_equal(epi(net->ep[s]).num_rpcs, 0);
	assert_int_equal(epi(net->ep[c]).num_rpcs, 0);
	assert_int_equal(homa_pool_app_owned(epi(net->ep[c]).pool), 0);
	assert_int_equal(homa_pool_free_bpages(epi(net->ep[s]).pool) +
			 1 >= 64, 1);
	net_free(net);
}

/* RPCs of every size class arrive intact, with whole packets. */
static void homa_ep_rpc__sizes(void **state)
{
	(void)state;
	rpc_sizes(0);
}

/* The same with DATA gathered into runs of up to 64 packets. */
static void homa_ep_rpc__sizes_gathered(void **state)
{
	(void)state;
	rpc_sizes(64);
}

/* 200 requests outstanding at once all complete, each with its cookie. */
static void homa_ep_rpc__many_outstanding(void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 256, &c, &s);
	uint64_t ids[200];
	int i, served = 0;

	(void)state;
	for (i = 0; i < 200; i++)
		ids[i] = send_req(net, c, s, 1000 + (uint32_t)i * 100,
				  (uint32_t)i);
	while (served < 200) {
		step(net);
		while (serve(net, s, 2000))
			served++;
		advance(net, 100);
	}
	step(net);
	for (i = 199; i >= 0; i--) {
		struct homa_msg_ready m;

		assert_int_equal(homa_ep_receive(net->ep[c], ids[i],
						 HOMA_RECVMSG_RESPONSE, &m), 0);
		assert_int_equal(m.error, 0);
		assert_int_equal(m.cookie, (uint64_t)i);
		homa_ep_return_bpages(net->ep[c], m.bpage_offsets,
				      m.num_bpages, 0, net->now);
	}
	net_free(net);
}

/* grants_for_1mb - GRANTs the server sends for one 1 MB request from a
 * client on a loopback address to a server on another. */
static uint64_t grants_for_1mb(void)
{
	int c, s;
	struct net *net = net_pair(&cfg, 64, &c, &s);
	uint64_t grants;

	net->addr[c].in4.sin_addr.s_addr = htonl(0x7f000002);
	net->addr[s].in4.sin_addr.s_addr = htonl(0x7f000001);
	net->gather_segs = 64; /* 64 KB packets come out as runs */
	check_rpc(net, c, s, 1000000, 100, 5);
	grants = epi(net->ep[s]).stats[HOMA_STAT_packets_sent_GRANT];
	net_free(net);
	return grants;
}

/* Messages from loopback peers share the window loopback_max_incoming
 * (no network queue to protect): a 1 MB request that needs grants (here,
 * with loopback_unsched_bytes 0) gets one GRANT for all of it; with the
 * window at 0 it is max_incoming's, and several GRANTs follow the bytes. */
static void homa_ep_grants__loopback_window(void **state)
{
	(void)state;
	cfg.loopback_unsched_bytes = 0;
	assert_int_equal(grants_for_1mb(), 1);
	cfg.loopback_max_incoming = 0;
	assert_true(grants_for_1mb() >= 3);
	ep_default_settings(NULL);
}

/* A message to a loopback peer goes whole without grants
 * (loopback_unsched_bytes, 1,000,000 by default): the server of a 1 MB
 * request from a loopback client sends no GRANT, and the request's first
 * packet (of mtu here, loopback_mtu 0) announces all of it as
 * unscheduled. */
static void homa_ep_grants__loopback_unscheduled(void **state)
{
	int c, s;
	struct net *net;
	struct sent_pkt p;
	uint64_t id;

	(void)state;
	assert_int_equal(grants_for_1mb(), 0);
	cfg.loopback_mtu = 0;
	net = net_pair(&cfg, 64, &c, &s);
	net->addr[c].in4.sin_addr.s_addr = htonl(0x7f000002);
	net->addr[s].in4.sin_addr.s_addr = htonl(0x7f000001);
	id = send_req(net, c, s, 1000000, 1);
	assert_true(next_out(net, c, &p));
	assert_int_equal(p.pkt.type, HOMA_PKT_DATA);
	assert_int_equal(p.pkt.sender_id, id);
	assert_int_equal(p.pkt.incoming, 1000000);
	net_free(net);
	ep_default_settings(NULL);
}

/* With one packet in seven lost, RPCs of every size class complete
 * (RESENDs recover the losses). */
static void homa_ep_rpc__loss_recovery(void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 64, &c, &s);
	static const uint32_t sizes[] = { 100, 5000, 60000, 300000, 1000000 };
	size_t k;

	(void)state;
	net->filter = drop_every_7th;
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct homa_msg_ready m;
		uint64_t id = send_req(net, c, s, sizes[k], (uint32_t)k + 3);
		int rounds = 0;

		for (;;) {
			step(net);
			serve(net, s, sizes[k]);
			if (homa_ep_receive(net->ep[c], id,
					    HOMA_RECVMSG_RESPONSE, &m) == 0)
				break;
			advance(net, 1000);
			assert_true(++rounds < 5000);
		}
		assert_int_equal(m.error, 0);
		assert_int_equal(m.length, sizes[k]);
		homa_ep_return_bpages(net->ep[c], m.bpage_offsets,
				      m.num_bpages, 0, net->now);
	}
	assert_true(net->drops > 0);
	assert_true(epi(net->ep[c]).stats[HOMA_STAT_resend_requests] +
		    epi(net->ep[s]).stats[HOMA_STAT_resend_requests] > 0);
	net_free(net);
}

/* Abort without an error discards an RPC silently; with one, the RPC
 * completes with that error; an unknown id is -EINVAL. */
static void homa_ep_abort__with_and_without_error(void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	struct homa_msg_ready m;
	uint64_t a, b;

	(void)state;
	a = send_req(net, c, s, 100, 1);
	b = send_req(net, c, s, 100, 2);
	assert_int_equal(homa_ep_abort(net->ep[c], a, 0), 0);
	assert_int_equal(homa_ep_receive(net->ep[c], a, HOMA_RECVMSG_RESPONSE,
					 &m), -EINVAL);
	assert_int_equal(homa_ep_abort(net->ep[c], b, ECANCELED), 0);
	assert_int_equal(homa_ep_receive(net->ep[c], 0, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.id, b);
	assert_int_equal(m.error, ECANCELED);
	assert_int_equal(m.cookie, 2);
	assert_int_equal(homa_ep_abort(net->ep[c], 12345678, 0), -EINVAL);
	assert_int_equal(epi(net->ep[c]).num_rpcs, 0);
	net_free(net);
}

/* After shutdown the endpoint is readable, receives fail with -ESHUTDOWN
 * and new requests are refused. */
static void homa_ep_shutdown__fails_everything(void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	struct homa_msg_ready m;
	uint8_t b = 0;
	struct iovec iov = { &b, 1 };
	uint64_t id;

	(void)state;
	send_req(net, c, s, 100, 1);
	homa_ep_shutdown(net->ep[c]);
	assert_true(epi(net->ep[c]).readable);
	assert_int_equal(homa_ep_receive(net->ep[c], 0, HOMA_RECVMSG_RESPONSE,
					 &m), -ESHUTDOWN);
	assert_int_equal(homa_ep_send_request(net->ep[c], &net->addr[s], &iov,
					      1, 0, 0, &id, 0), -ESHUTDOWN);
	net_free(net);
}

/* Requests count in the client's wmem from the send until the RPC ends
 * (its response handed over), also after the response is complete;
 * writable is wmem < wmem_max, so the request that crosses the limit is
 * admitted. */
static void homa_ep_wmem__request_counts_until_rpc_ends(void **state)
{
	int c, s;
	struct net *net;
	struct homa_msg_ready m;
	uint64_t a, b;

	(void)state;
	cfg.wmem_max = 250;
	net = net_pair(&cfg, 8, &c, &s);
	cfg.wmem_max = 100000000;
	assert_int_equal(epi(net->ep[c]).wmem, 0);
	assert_true(epi(net->ep[c]).writable);
	a = send_req(net, c, s, 100, 1);
	b = send_req(net, c, s, 100, 2);
	assert_int_equal(epi(net->ep[c]).wmem, 200);
	assert_true(epi(net->ep[c]).writable);
	send_req(net, c, s, 300, 3);
	assert_int_equal(epi(net->ep[c]).wmem, 500);
	assert_false(epi(net->ep[c]).writable);
	step(net);
	while (serve(net, s, 10))
		;
	step(net);
	assert_int_equal(epi(net->ep[c]).wmem, 500);
	assert_int_equal(homa_ep_receive(net->ep[c], b, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	homa_ep_return_bpages(net->ep[c], m.bpage_offsets, m.num_bpages, 0,
			      net->now);
	assert_int_equal(epi(net->ep[c]).wmem, 400);
	assert_false(epi(net->ep[c]).writable);
	assert_int_equal(homa_ep_receive(net->ep[c], a, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	homa_ep_return_bpages(net->ep[c], m.bpage_offsets, m.num_bpages, 0,
			      net->now);
	assert_int_equal(epi(net->ep[c]).wmem, 300);
	assert_false(epi(net->ep[c]).writable);
	assert_int_equal(homa_ep_receive(net->ep[c], 0, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	homa_ep_return_bpages(net->ep[c], m.bpage_offsets, m.num_bpages, 0,
			      net->now);
	assert_int_equal(epi(net->ep[c]).wmem, 0);
	assert_true(epi(net->ep[c]).writable);
	net_free(net);
}

/* A response counts in the server's wmem until the client's ACK frees its
 * RPC. */
static void homa_ep_wmem__response_counts_until_acked(void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	struct homa_msg_ready m, r;
	uint8_t buf[700] = { 0 };
	struct iovec iov = { buf, sizeof(buf) };
	uint64_t id;

	(void)state;
	id = hold_request(net, c, s, &m);
	assert_int_equal(epi(net->ep[s]).wmem, 0);
	assert_int_equal(homa_ep_send_reply(net->ep[s], &m.peer, m.id, &iov,
					    1, 0, net->now), 0);
	assert_int_equal(epi(net->ep[s]).wmem, 700);
	step(net);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &r), 0);
	homa_ep_return_bpages(net->ep[c], r.bpage_offsets, r.num_bpages, 0,
			      net->now);
	assert_int_equal(epi(net->ep[c]).wmem, 0);
	/* The ACK comes with the server's NEED_ACK (request_ack_ticks). */
	advance(net, 20000);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 0);
	assert_int_equal(epi(net->ep[s]).wmem, 0);
	net_free(net);
}

/* An aborted request counts until its RPC ends: at once without an error,
 * when the error is handed over with one; shutdown frees everything. */
static void homa_ep_wmem__abort_and_shutdown_release(void **state)
{
	int c, s;
	struct net *net = dead_pair(&cfg, &c, &s);
	struct homa_msg_ready m;
	uint64_t a, b;

	(void)state;
	a = send_req(net, c, s, 100, 1);
	b = send_req(net, c, s, 200, 2);
	send_req(net, c, s, 400, 3);
	assert_int_equal(epi(net->ep[c]).wmem, 700);
	assert_int_equal(homa_ep_abort(net->ep[c], a, 0), 0);
	assert_int_equal(epi(net->ep[c]).wmem, 600);
	assert_int_equal(homa_ep_abort(net->ep[c], b, ECANCELED), 0);
	assert_int_equal(epi(net->ep[c]).wmem, 600);
	assert_int_equal(homa_ep_receive(net->ep[c], b, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, ECANCELED);
	assert_int_equal(epi(net->ep[c]).wmem, 400);
	homa_ep_shutdown(net->ep[c]);
	assert_int_equal(epi(net->ep[c]).wmem, 0);
	assert_true(epi(net->ep[c]).writable);
	net_free(net);
}

/* A private RPC's response is not readable and is taken only by a
 * receive naming its id; shared ones go on as usual. */
static void homa_ep_send_request__private_only_a_receive_naming_it(
	void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	uint8_t req[100];
	struct iovec iov = { req, sizeof(req) };
	struct homa_msg_ready m;
	uint64_t priv = 0, shared;
	int tries = 0;

	(void)state;
	fill(req, sizeof(req), 1);
	assert_int_equal(homa_ep_send_request(net->ep[c], &net->addr[s], &iov,
					      1, 1, HOMA_EP_SEND_PRIVATE,
					      &priv, net->now), 0);
	while (!serve(net, s, 100)) {
		step(net);
		assert_true(++tries < 100);
	}
	step(net);
	/* The private response is ready but neither readable nor taken by
	 * a receive of any response. */
	assert_false(epi(net->ep[c]).readable);
	assert_int_equal(homa_ep_receive(net->ep[c], 0, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	shared = send_req(net, c, s, 100, 2);
	while (!serve(net, s, 100))
		step(net);
	step(net);
	assert_true(epi(net->ep[c]).readable);
	assert_int_equal(homa_ep_receive(net->ep[c], 0, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.id, shared);
	homa_ep_return_bpages(net->ep[c], m.bpage_offsets, m.num_bpages, 0,
			      net->now);
	assert_false(epi(net->ep[c]).readable);
	assert_int_equal(homa_ep_receive(net->ep[c], priv,
					 HOMA_RECVMSG_RESPONSE, &m), 0);
	assert_int_equal(m.id, priv);
	assert_int_equal(m.length, 100);
	net_free(net);
}

/* take_request - the length of the next request server s's homa_ep_receive
 * with id 0 hands over (its bpages handed back). */
static uint32_t take_request(struct net *net, int s)
{
	struct homa_msg_ready m;

	assert_int_equal(homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST,
					 &m), 0);
	assert_int_equal(m.error, 0);
	homa_ep_return_bpages(net->ep[s], m.bpage_offsets, m.num_bpages, 0,
			      net->now);
	return m.length;
}

/* homa_ep_receive__shortest_ready_first - requests that are all ready
 * are taken shortest first, whatever order they came in. */
static void homa_ep_receive__shortest_ready_first(void **state)
{
	static const uint32_t lens[] = { 5000, 3000, 100, 4000, 100 };
	static const uint32_t want[] = { 100, 100, 3000, 4000, 5000 };
	int c, s;
	struct net *net = net_pair(&cfg, 64, &c, &s);

	(void)state;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		send_req(net, c, s, lens[i], (uint32_t)i);
		step(net);
	}
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(take_request(net, s), want[i]);
	net_free(net);
}

/* homa_ep_receive__oldest_not_passed_over_for_ever - a long request
 * ready before a stream of short ones is taken no later than the eighth
 * take. */
static void homa_ep_receive__oldest_not_passed_over_for_ever(void **state)
{
	int c, s, i;
	struct net *net = net_pair(&cfg, 64, &c, &s);

	(void)state;
	send_req(net, c, s, 20000, 0);
	step(net);
	for (i = 1; i <= 12; i++) {
		send_req(net, c, s, 100, (uint32_t)i);
		step(net);
	}
	for (i = 0; i < 7; i++)
		assert_int_equal(take_request(net, s), 100);
	assert_int_equal(take_request(net, s), 20000);
	for (i = 0; i < 5; i++)
		assert_int_equal(take_request(net, s), 100);
	net_free(net);
}

/* serve_until - step net until server s has answered one request (with
 * len bytes), within 100 steps. */
static void serve_until(struct net *net, int s, uint32_t len)
{
	int tries = 0;

	while (!serve(net, s, len)) {
		step(net);
		assert_true(++tries < 100);
	}
	step(net);
}

/* homa_ep_peer_unreachable - only the client RPC whose id the error quotes
 * fails with ENOTCONN (named by id and cookie, no bpages), and only when it
 * is to the named address and port and still waiting: a complete response,
 * an RPC to another port of that host or to another host, the same RPC
 * named with another port, port 0, another family, id 0 and a server's id
 * (odd) do nothing; another RPC to the same port goes on. */
static void homa_ep_peer_unreachable__fails_only_the_quoted_rpc(void **state)
{
	struct net *net = net_new(&cfg);
	int c = net_add(net, 40000, false, 8);
	int s = net_add(net, 99, true, 8);
	int s2 = net_add(net, 98, true, 8);
	union sockaddr_in_union other = net->addr[s], six;
	struct homa_msg_ready m;
	uint64_t done, a, b, keep;

	(void)state;
	done = send_req(net, c, s, 100, 1);
	serve_until(net, s, 100);
	a = send_req(net, c, s, 5000, 2);
	b = send_req(net, c, s, 100, 3);
	keep = send_req(net, c, s2, 100, 4);
	homa_addr_set_port(&other, 97);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &other, a,
						  net->now), 0);
	homa_addr_set_port(&other, 0);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &other, a,
						  net->now), 0);
	memset(&six, 0, sizeof(six));
	six.in6.sin6_family = AF_INET6;
	six.in6.sin6_port = htons(99);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &six, a,
						  net->now), 0);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &net->addr[s],
						  0, net->now), 0);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &net->addr[s],
						  a ^ 1, net->now), 0);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &net->addr[s],
						  keep, net->now), 0);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &net->addr[s],
						  done, net->now), 0);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &net->addr[s],
						  a, net->now), 1);
	/* The complete response comes first (it was ready first). */
	assert_int_equal(homa_ep_receive(net->ep[c], done,
					 HOMA_RECVMSG_RESPONSE, &m), 0);
	assert_int_equal(m.error, 0);
	assert_int_equal(m.length, 100);
	homa_ep_return_bpages(net->ep[c], m.bpage_offsets, m.num_bpages, 0,
			      net->now);
	assert_int_equal(homa_ep_receive(net->ep[c], 0,
					 HOMA_RECVMSG_RESPONSE, &m), 0);
	assert_int_equal(m.error, ENOTCONN);
	assert_int_equal(m.id, a);
	assert_int_equal(m.cookie, 2);
	assert_int_equal(m.num_bpages, 0);
	/* Again: a has ended, nothing is left to fail. */
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &net->addr[s],
						  a, net->now), 0);
	/* b, to the same port, and the RPC to the other port complete. */
	serve_until(net, s, 100);
	serve_until(net, s2, 100);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(homa_ep_receive(net->ep[c], 0,
						 HOMA_RECVMSG_RESPONSE, &m), 0);
		assert_int_equal(m.error, 0);
		assert_true(m.id == b || m.id == keep);
		homa_ep_return_bpages(net->ep[c], m.bpage_offsets,
				      m.num_bpages, 0, net->now);
	}
	net_free(net);
}

/* homa_ep_peer_unreachable - an error read late, after the port it names
 * was bound again, quotes a packet of an RPC that has ended since (failed
 * by an earlier copy of the error, or answered): it does not end the RPCs
 * started afterwards to the same address and port, which complete. */
static void homa_ep_peer_unreachable__late_error_spares_new_rpc(void **state)
{
	struct net *net = net_new(&cfg);
	int c = net_add(net, 40000, false, 8);
	int s = net_add(net, 99, true, 8);
	struct homa_msg_ready m;
	uint64_t old_failed, old_done, fresh;

	(void)state;
	old_failed = send_req(net, c, s, 100, 1);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &net->addr[s],
						  old_failed, net->now), 1);
	assert_int_equal(homa_ep_receive(net->ep[c], old_failed,
					 HOMA_RECVMSG_RESPONSE, &m), 0);
	assert_int_equal(m.error, ENOTCONN);
	old_done = send_req(net, c, s, 100, 2);
	serve_until(net, s, 100);
	assert_int_equal(homa_ep_receive(net->ep[c], old_done,
					 HOMA_RECVMSG_RESPONSE, &m), 0);
	assert_int_equal(m.error, 0);
	homa_ep_return_bpages(net->ep[c], m.bpage_offsets, m.num_bpages, 0,
			      net->now);
	fresh = send_req(net, c, s, 100, 3);
	assert_true(fresh != old_failed && fresh != old_done);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &net->addr[s],
						  old_failed, net->now), 0);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &net->addr[s],
						  old_done, net->now), 0);
	serve_until(net, s, 100);
	assert_int_equal(homa_ep_receive(net->ep[c], fresh,
					 HOMA_RECVMSG_RESPONSE, &m), 0);
	assert_int_equal(m.error, 0);
	assert_int_equal(m.length, 100);
	homa_ep_return_bpages(net->ep[c], m.bpage_offsets, m.num_bpages, 0,
			      net->now);
	net_free(net);
}

/* One message is lent at a time: a second lent send copies the first
 * message before it lends its own, so the caller may reuse the first
 * buffer at once, and both requests arrive as they were sent. */
static void homa_ep_send_request__second_lent_settles_first(void **state)
{
	uint32_t len = HOMA_EP_LEND_MIN * 2;
	uint8_t *a = malloc(len), *b = malloc(len), *want = malloc(len);
	struct homa_msg_ready m;
	struct net *net;
	int c, s;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(want);
	cfg.flags = HOMA_FLAG_DONT_THROTTLE;
	net = net_pair(&cfg, 16, &c, &s);
	lend_req(net, c, s, a, len, 1);
	lend_req(net, c, s, b, len, 2);
	memset(a, 0, len);
	deliver_all(net);
	assert_true(homa_ep_lent_settle(net->ep[c], UINT32_MAX));
	memset(b, 0, len);
	deliver_all(net);
	for (int k = 0; k < 2; k++) {
		uint8_t *got;

		assert_int_equal(homa_ep_receive(net->ep[s], 0,
						 HOMA_RECVMSG_REQUEST, &m), 0);
		assert_int_equal(m.length, len);
		got = gather(net, s, &m);
		/* Which request this is: fill starts seed 1 with 13. */
		fill(want, len, got[0] == 13 ? 1 : 2);
		assert_memory_equal(got, want, len);
		free(got);
		assert_int_equal(homa_ep_return_bpages(net->ep[s],
						       m.bpage_offsets,
						       m.num_bpages, 0,
						       net->now), 0);
	}
	net_free(net);
	free(a);
	free(b);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_ep_create__bad_params),
		cmocka_unit_test(homa_ep_create__encap_counts_against_mtu),
		cmocka_unit_test(homa_ep_send_request__invalid),
		cmocka_unit_test(homa_ep_input__source_port_zero_dropped),
		cmocka_unit_test(homa_ep_rpc__sizes),
		cmocka_unit_test(homa_ep_rpc__sizes_gathered),
		cmocka_unit_test(homa_ep_rpc__sizes_deferred_copies),
		cmocka_unit_test(homa_ep_shutdown__deferred_copies_made_first),
		cmocka_unit_test(homa_ep_rpc__many_outstanding),
		cmocka_unit_test(homa_ep_rpc__loss_recovery),
		T(homa_ep_grants__loopback_window),
		T(homa_ep_grants__loopback_unscheduled),
		cmocka_unit_test(homa_ep_abort__with_and_without_error),
		T(homa_ep_send_request__second_lent_settles_first),
		cmocka_unit_test(homa_ep_shutdown__fails_everything),
		cmocka_unit_test(
			homa_ep_send_request__private_only_a_receive_naming_it),
		cmocka_unit_test(homa_ep_receive__shortest_ready_first),
		cmocka_unit_test(homa_ep_receive__oldest_not_passed_over_for_ever),
		cmocka_unit_test(
			homa_ep_peer_unreachable__fails_only_the_quoted_rpc),
		cmocka_unit_test(
			homa_ep_peer_unreachable__late_error_spares_new_rpc),
		cmocka_unit_test(homa_ep_wmem__request_counts_until_rpc_ends),
		cmocka_unit_test(homa_ep_wmem__response_counts_until_acked),
		cmocka_unit_test(homa_ep_wmem__abort_and_shutdown_release),
	};

	/* The default settings once before the tests (each test that
	 * changes one puts it back). */
	return cmocka_run_group_tests(tests, ep_default_settings, NULL);
}
