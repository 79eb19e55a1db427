// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of the sans-IO endpoint as a whole (homa_endpoint.c: creation,
 * the application's calls, output and the pacer, whole RPCs of every size
 * with and without loss): two (or more) endpoints exchange packets through
 * the in-memory network of ep_test_util.  Packet input has its own tests
 * in test_homa_incoming.c, the timer in test_homa_timer.c and the counters
 * in test_homa_stats.c.
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
	homa_ep_finish_copies(net->ep[s]);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 0);
	assert_non_null(memmem(net->region[s], 4 * (size_t)HOMA_BPAGE_SIZE,
			       want, sizeof(want)));
	net_free(net);
}

/* Creation fails (NULL) for a family other than IPv4/IPv6, no parameters,
 * or more encapsulation bytes than HOMA_EP_MAX_ENCAP. */
static void homa_ep_create__bad_params(void **state)
{
	struct homa_ep_params p = { &cfg, AF_UNIX, 1, true, 2, 1, 0 };

	(void)state;
	assert_null(homa_ep_create(&p));
	assert_null(homa_ep_create(NULL));
	p.family = AF_INET;
	p.encap_bytes = HOMA_EP_MAX_ENCAP + 1;
	assert_null(homa_ep_create(&p));
}

/* max_packet_for - homa_ep_max_packet of a new endpoint of family with
 * encap bytes of datapath header (mtu 1500, the default). */
static size_t max_packet_for(int family, uint32_t encap)
{
	struct homa_ep_params p = { &cfg, family, 1, true, 2, 1, encap };
	struct homa_ep *ep = homa_ep_create(&p);
	size_t len;

	assert_non_null(ep);
	len = homa_ep_max_packet(ep);
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
	assert_int_equal(homa_ep_send_request(net->ep[c], &bad, &iov, 1, 0,
					      &id, 0), -EINVAL);
	assert_int_equal(homa_ep_send_request(net->ep[c], &net->addr[s], &zero,
					      1, 0, &id, 0), -EINVAL);
	assert_int_equal(homa_ep_send_request(net->ep[c], &net->addr[s], &big,
					      1, 0, &id, 0), -EINVAL);
	assert_int_equal(homa_ep_send_request(net->ep[c], &net->addr[s], NULL,
					      1, 0, &id, 0), -EINVAL);
	assert_int_equal(homa_ep_send_reply(net->ep[s], &net->addr[c], 2, &iov,
					    1, 0), -EINVAL);
	/* A reply to an RPC that no longer exists is dropped quietly. */
	assert_int_equal(homa_ep_send_reply(net->ep[s], &net->addr[c], 3, &iov,
					    1, 0), 0);
	assert_int_equal(homa_ep_num_rpcs(net->ep[c]), 0);
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
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 0);
	assert_int_equal(homa_ep_num_rpcs(net->ep[c]), 0);
	assert_int_equal(homa_pool_app_owned(homa_ep_pool(net->ep[c])), 0);
	assert_int_equal(homa_pool_free_bpages(homa_ep_pool(net->ep[s])) +
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
	seg = (uint32_t)homa_ep_max_packet(net->ep[c]) - HOMA_DATA_HDR_LEN;
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
	assert_true(homa_ep_pacer_wake(net->ep[c]) == 0);
	net_free(net);
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

/* A request copied in by parts (homa_ep_send_request_part): only the
 * whole packets copied so far leave, the server sees no message until the
 * rest is copied in (homa_ep_send_fill), and then gets it intact; a fill
 * with an iovec of another length is -EINVAL, and one for an RPC that has
 * ended -ENOENT. */
static void homa_ep_send_fill__request_by_parts(void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 64, &c, &s);
	const uint64_t *cs = homa_ep_stats(net->ep[c]);
	uint32_t len = 300000, seed = 11;
	uint8_t *buf = malloc(len), *got;
	struct iovec iov = { buf, len }, short_iov = { buf, len - 1 };
	struct homa_msg_ready m;
	uint64_t id = 0, sent;

	(void)state;
	assert_non_null(buf);
	fill(buf, len, seed);
	assert_int_equal(homa_ep_send_request_part(net->ep[c], &net->addr[s],
						   &iov, 1, seed, &id,
						   net->now, 20000), 0);
	step(net);
	sent = cs[HOMA_STAT_packets_sent_DATA];
	assert_true(sent > 0);
	/* Packets of 1,500 bytes carry over 1,400 bytes each: of the
	 * 40,000 unscheduled bytes, only those copied left. */
	assert_true(sent * 1400 <= 20000);
	advance(net, 100);
	assert_int_equal(cs[HOMA_STAT_packets_sent_DATA], sent);
	assert_int_not_equal(homa_ep_receive(net->ep[s], 0,
					     HOMA_RECVMSG_REQUEST, &m), 0);
	assert_int_equal(homa_ep_send_fill(net->ep[c], &net->addr[s], id,
					   &short_iov, 1, len), -EINVAL);
	assert_int_equal(homa_ep_send_fill(net->ep[c], &net->addr[s], id, &iov,
					   1, len), 0);
	for (int tries = 0; homa_ep_receive(net->ep[s], 0,
					    HOMA_RECVMSG_REQUEST, &m) != 0;
	     tries++) {
		assert_true(tries < 1000);
		step(net);
	}
	assert_int_equal(m.length, len);
	got = gather(net, s, &m);
	assert_memory_equal(got, buf, len);
	free(got);
	assert_int_equal(homa_ep_abort(net->ep[c], id, 0), 0);
	assert_int_equal(homa_ep_send_fill(net->ep[c], &net->addr[s], id, &iov,
					   1, len), -ENOENT);
	free(buf);
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
	grants = homa_ep_stats(net->ep[s])[HOMA_STAT_packets_sent_GRANT];
	net_free(net);
	return grants;
}

/* Messages from loopback peers share the window loopback_max_incoming
 * (no network queue to protect): a 1 MB request gets one GRANT for all
 * of it; with the setting at 0 the window is max_incoming's, and several
 * GRANTs follow the bytes. */
static void homa_ep_grants__loopback_window(void **state)
{
	(void)state;
	assert_int_equal(grants_for_1mb(), 1);
	cfg.loopback_max_incoming = 0;
	assert_true(grants_for_1mb() >= 3);
	cfg.loopback_max_incoming = 4000000;
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
	assert_true(homa_ep_stats(net->ep[c])[HOMA_STAT_resend_requests] +
		    homa_ep_stats(net->ep[s])[HOMA_STAT_resend_requests] > 0);
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
	assert_int_equal(homa_ep_num_rpcs(net->ep[c]), 0);
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
	assert_true(homa_ep_readable(net->ep[c]));
	assert_int_equal(homa_ep_receive(net->ep[c], 0, HOMA_RECVMSG_RESPONSE,
					 &m), -ESHUTDOWN);
	assert_int_equal(homa_ep_send_request(net->ep[c], &net->addr[s], &iov,
					      1, 0, &id, 0), -ESHUTDOWN);
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
	assert_int_equal(homa_ep_wmem(net->ep[c]), 0);
	assert_true(homa_ep_writable(net->ep[c]));
	a = send_req(net, c, s, 100, 1);
	b = send_req(net, c, s, 100, 2);
	assert_int_equal(homa_ep_wmem(net->ep[c]), 200);
	assert_true(homa_ep_writable(net->ep[c]));
	send_req(net, c, s, 300, 3);
	assert_int_equal(homa_ep_wmem(net->ep[c]), 500);
	assert_false(homa_ep_writable(net->ep[c]));
	step(net);
	while (serve(net, s, 10))
		;
	step(net);
	assert_int_equal(homa_ep_wmem(net->ep[c]), 500);
	assert_int_equal(homa_ep_receive(net->ep[c], b, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	homa_ep_return_bpages(net->ep[c], m.bpage_offsets, m.num_bpages, 0,
			      net->now);
	assert_int_equal(homa_ep_wmem(net->ep[c]), 400);
	assert_false(homa_ep_writable(net->ep[c]));
	assert_int_equal(homa_ep_receive(net->ep[c], a, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	homa_ep_return_bpages(net->ep[c], m.bpage_offsets, m.num_bpages, 0,
			      net->now);
	assert_int_equal(homa_ep_wmem(net->ep[c]), 300);
	assert_false(homa_ep_writable(net->ep[c]));
	assert_int_equal(homa_ep_receive(net->ep[c], 0, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	homa_ep_return_bpages(net->ep[c], m.bpage_offsets, m.num_bpages, 0,
			      net->now);
	assert_int_equal(homa_ep_wmem(net->ep[c]), 0);
	assert_true(homa_ep_writable(net->ep[c]));
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
	assert_int_equal(homa_ep_wmem(net->ep[s]), 0);
	assert_int_equal(homa_ep_send_reply(net->ep[s], &m.peer, m.id, &iov,
					    1, net->now), 0);
	assert_int_equal(homa_ep_wmem(net->ep[s]), 700);
	step(net);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &r), 0);
	homa_ep_return_bpages(net->ep[c], r.bpage_offsets, r.num_bpages, 0,
			      net->now);
	assert_int_equal(homa_ep_wmem(net->ep[c]), 0);
	/* The ACK comes with the server's NEED_ACK (request_ack_ticks). */
	advance(net, 20000);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 0);
	assert_int_equal(homa_ep_wmem(net->ep[s]), 0);
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
	assert_int_equal(homa_ep_wmem(net->ep[c]), 700);
	assert_int_equal(homa_ep_abort(net->ep[c], a, 0), 0);
	assert_int_equal(homa_ep_wmem(net->ep[c]), 600);
	assert_int_equal(homa_ep_abort(net->ep[c], b, ECANCELED), 0);
	assert_int_equal(homa_ep_wmem(net->ep[c]), 600);
	assert_int_equal(homa_ep_receive(net->ep[c], b, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, ECANCELED);
	assert_int_equal(homa_ep_wmem(net->ep[c]), 400);
	homa_ep_shutdown(net->ep[c]);
	assert_int_equal(homa_ep_wmem(net->ep[c]), 0);
	assert_true(homa_ep_writable(net->ep[c]));
	net_free(net);
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
	assert_true(homa_ep_pacer_wake(net->ep[c]) == 0);
	/* The link estimate is untouched: a remote peer's message still
	 * gets its first full burst at once. */
	send_req(net, c, s2, 40000, 2);
	assert_true(count_output(net->ep[c], t0) >= 9);
	assert_true(homa_ep_pacer_wake(net->ep[c]) > t0);
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
	assert_int_equal(homa_ep_stats(net->ep[c])[HOMA_STAT_packets_sent_DATA],
			 (1000000 + 64923) / 64924);
	assert_int_equal(homa_ep_stats(net->ep[s])[HOMA_STAT_packets_sent_DATA],
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

/* A private RPC's response is not readable and is taken only by a
 * receive naming its id; shared ones go on as usual. */
static void homa_ep_set_private__only_a_receive_naming_it(void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	struct homa_msg_ready m;
	uint64_t priv, shared;
	int tries = 0;

	(void)state;
	priv = send_req(net, c, s, 100, 1);
	assert_int_equal(homa_ep_set_private(net->ep[c], priv), 0);
	assert_int_equal(homa_ep_set_private(net->ep[c], 12345678), -EINVAL);
	while (!serve(net, s, 100)) {
		step(net);
		assert_true(++tries < 100);
	}
	step(net);
	/* The private response is ready but neither readable nor taken by
	 * a receive of any response. */
	assert_false(homa_ep_readable(net->ep[c]));
	assert_int_equal(homa_ep_receive(net->ep[c], 0, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	shared = send_req(net, c, s, 100, 2);
	while (!serve(net, s, 100))
		step(net);
	step(net);
	assert_true(homa_ep_readable(net->ep[c]));
	assert_int_equal(homa_ep_receive(net->ep[c], 0, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.id, shared);
	homa_ep_return_bpages(net->ep[c], m.bpage_offsets, m.num_bpages, 0,
			      net->now);
	assert_false(homa_ep_readable(net->ep[c]));
	assert_int_equal(homa_ep_receive(net->ep[c], priv,
					 HOMA_RECVMSG_RESPONSE, &m), 0);
	assert_int_equal(m.id, priv);
	assert_int_equal(m.length, 100);
	net_free(net);
}

/* A burst of 5000 answers (RPC_UNKNOWN to RESENDs for unknown RPCs) is
 * more than the ring's first 2048 entries: it grows and loses none, and
 * they go out in order; with max_ctrl_queue 64 the 65th is dropped. */
static void homa_ep_ctrl__queue_grows_up_to_max(void **state)
{
	uint8_t buf[64 * HOMA_DATA_HDR_LEN];
	struct homa_out out = { .buf = buf };
	struct net *net = net_new(&cfg);
	int s = net_add(net, 99, true, 8), n = 0;
	const uint64_t *st = homa_ep_stats(net->ep[s]);
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
	st = homa_ep_stats(net->ep[s]);
	for (i = 0; i < 65; i++)
		inject_simple(net, s, &src, HOMA_PKT_RESEND, 2 * i + 2);
	assert_int_equal(st[HOMA_STAT_drop_ctrl_queue_full], 1);
	assert_int_equal(st[HOMA_STAT_packets_sent_RPC_UNKNOWN], 64);
	cfg.max_ctrl_queue = 65536;
	net_free(net);
}

/* homa_ep_peer_unreachable - the client RPCs to the named address and port
 * still waiting fail with ENOTCONN (named by id and cookie, no bpages); a
 * complete response to the same port stays as it is, and RPCs to another
 * port of that host, or to another host, go on; a port that no RPC uses,
 * port 0 and another family do nothing. */
static void homa_ep_peer_unreachable__fails_only_that_port(void **state)
{
	struct net *net = net_new(&cfg);
	int c = net_add(net, 40000, false, 8);
	int s = net_add(net, 99, true, 8);
	int s2 = net_add(net, 98, true, 8);
	union sockaddr_in_union other = net->addr[s], six;
	struct homa_msg_ready m;
	uint64_t done, a, b, keep;
	int tries = 0;

	(void)state;
	done = send_req(net, c, s, 100, 1);
	while (!serve(net, s, 100)) {
		step(net);
		assert_true(++tries < 100);
	}
	step(net);
	a = send_req(net, c, s, 5000, 2);
	b = send_req(net, c, s, 100, 3);
	keep = send_req(net, c, s2, 100, 4);
	homa_addr_set_port(&other, 97);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &other,
						  net->now), 0);
	homa_addr_set_port(&other, 0);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &other,
						  net->now), 0);
	memset(&six, 0, sizeof(six));
	six.in6.sin6_family = AF_INET6;
	six.in6.sin6_port = htons(99);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &six,
						  net->now), 0);
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &net->addr[s],
						  net->now), 2);
	/* The complete response comes first (it was ready first). */
	assert_int_equal(homa_ep_receive(net->ep[c], done,
					 HOMA_RECVMSG_RESPONSE, &m), 0);
	assert_int_equal(m.error, 0);
	assert_int_equal(m.length, 100);
	homa_ep_return_bpages(net->ep[c], m.bpage_offsets, m.num_bpages, 0,
			      net->now);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(homa_ep_receive(net->ep[c], 0,
						 HOMA_RECVMSG_RESPONSE, &m), 0);
		assert_int_equal(m.error, ENOTCONN);
		assert_true(m.id == a || m.id == b);
		assert_int_equal(m.cookie, m.id == a ? 2 : 3);
		assert_int_equal(m.num_bpages, 0);
	}
	/* Again: nothing is left to fail. */
	assert_int_equal(homa_ep_peer_unreachable(net->ep[c], &net->addr[s],
						  net->now), 0);
	/* The RPC to the other port completes. */
	tries = 0;
	while (!serve(net, s2, 100)) {
		step(net);
		assert_true(++tries < 100);
	}
	step(net);
	assert_int_equal(homa_ep_receive(net->ep[c], keep,
					 HOMA_RECVMSG_RESPONSE, &m), 0);
	assert_int_equal(m.error, 0);
	net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_ep_create__bad_params),
		cmocka_unit_test(homa_ep_create__encap_counts_against_mtu),
		cmocka_unit_test(homa_ep_send_request__invalid),
		cmocka_unit_test(homa_ep_rpc__sizes),
		cmocka_unit_test(homa_ep_rpc__sizes_gathered),
		cmocka_unit_test(homa_ep_rpc__sizes_deferred_copies),
		cmocka_unit_test(homa_ep_shutdown__deferred_copies_made_first),
		cmocka_unit_test(homa_ep_output__gathered_run),
		cmocka_unit_test(homa_ep_rpc__many_outstanding),
		cmocka_unit_test(homa_ep_rpc__loss_recovery),
		cmocka_unit_test(homa_ep_send_fill__request_by_parts),
		cmocka_unit_test(homa_ep_grants__loopback_window),
		cmocka_unit_test(homa_ep_abort__with_and_without_error),
		cmocka_unit_test(homa_ep_shutdown__fails_everything),
		cmocka_unit_test(homa_ep_output__pacer_holds_long_messages),
		cmocka_unit_test(homa_ep_output__dont_throttle_flag),
		cmocka_unit_test(homa_ep_output__loopback_peer_unpaced),
		cmocka_unit_test(homa_ep_output__segment_size_per_destination),
		cmocka_unit_test(homa_ep_set_private__only_a_receive_naming_it),
		cmocka_unit_test(homa_ep_ctrl__queue_grows_up_to_max),
		cmocka_unit_test(homa_ep_peer_unreachable__fails_only_that_port),
		cmocka_unit_test(homa_ep_wmem__request_counts_until_rpc_ends),
		cmocka_unit_test(homa_ep_wmem__response_counts_until_acked),
		cmocka_unit_test(homa_ep_wmem__abort_and_shutdown_release),
	};

	/* The default settings once before the tests (each test that
	 * changes one puts it back). */
	return cmocka_run_group_tests(tests, ep_default_settings, NULL);
}
