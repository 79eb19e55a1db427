// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_incoming.c, the endpoint's packet input: the limits
 * on incomplete requests, DATA (new requests, duplicates, reassembly) and
 * the effect of each control packet (GRANT, RESEND, RPC_UNKNOWN, BUSY,
 * CUTOFFS, NEED_ACK, ACK).  Packets are built here and handed to one
 * endpoint (homa_ep_input), or exchanged through the in-memory network of
 * ep_test_util; what the endpoint sends is read from homa_ep_output, and
 * its state, where that says more, from homa_ep_internal.h.  Malformed
 * packets and their counters: test_homa_stats.c and test_hostile.c; the
 * modules input uses: test_homa_bufwait.c (buffer space),
 * test_homa_copies.c (payload copies), test_homa_grant_ep.c (grants).
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
#include "homa_addr.h"            /* homa_ep_internal.h needs it */
#include "homa_ep_internal.h"

/* seg_of - DATA payload bytes per packet of endpoint i. */
static uint32_t seg_of(struct net *net, int i)
{
	return (uint32_t)epi(net->ep[i]).max_packet - HOMA_DATA_HDR_LEN;
}

/* client_rpc - endpoint i's record of its client RPC id, or NULL. */
static struct homa_rpc *client_rpc(struct net *net, int i, uint64_t id)
{
	return homa_rpc_find_client(&net->ep[i]->rpcs, id);
}

/* unsched_sent - a client (*c, port 40000) and a server (*s, port 99),
 * unpaced; the client sends a request of len bytes (fill seed 1) whose
 * unscheduled packets leave and are lost.  Returns its id. */
static uint64_t unsched_sent(struct net *net, int *c, int *s, uint32_t len)
{
	struct sent_pkt o;
	uint64_t id;

	cfg.flags = HOMA_FLAG_DONT_THROTTLE;
	*c = net_add(net, 40000, false, 8);
	*s = net_add(net, 99, true, 8);
	id = send_req(net, *c, *s, len, 1);
	while (next_out(net, *c, &o))
		assert_int_equal(o.pkt.type, HOMA_PKT_DATA);
	return id;
}

/* ctrl_at - endpoint to gets a control packet of type with offset,
 * length and priority from endpoint from for its RPC id. */
static void ctrl_at(struct net *net, int to, int from, uint8_t type,
		    uint64_t id, uint32_t offset, uint32_t length, uint8_t prio)
{
	struct homa_pkt p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	p.sender_id = id ^ 1;
	p.offset = offset;
	p.length = length;
	p.priority = prio;
	inject_pkt(net, to, &net->addr[from], &p);
}

/* grant - endpoint to gets a GRANT(offset, prio) from endpoint from for
 * its RPC id. */
static void grant(struct net *net, int to, int from, uint64_t id,
		  uint32_t offset, uint8_t prio)
{
	ctrl_at(net, to, from, HOMA_PKT_GRANT, id, offset, 0, prio);
}

/* resend - endpoint to gets a RESEND(offset, length, prio) from endpoint
 * from for its RPC id. */
static void resend(struct net *net, int to, int from, uint64_t id,
		   uint32_t offset, uint32_t length, uint8_t prio)
{
	ctrl_at(net, to, from, HOMA_PKT_RESEND, id, offset, length, prio);
}

/* expect_only - endpoint i's output now is exactly one packet, of type,
 * naming sender_id, for dest; it is returned in *o. */
static void expect_only(struct net *net, int i, uint8_t type,
			uint64_t sender_id, const union sockaddr_in_union *dest,
			struct sent_pkt *o)
{
	struct sent_pkt extra;

	assert_true(next_out(net, i, o));
	assert_int_equal(o->pkt.type, type);
	assert_int_equal(o->pkt.sender_id, sender_id);
	assert_true(same_addr(&o->dest, dest));
	assert_false(next_out(net, i, &extra));
}

/* expect_new_data - endpoint c's output now is new DATA (no
 * retransmission) of one message, in order from offset next, at priority
 * prio (or any when prio < 0), up to the first packet boundary at or past
 * end. */
static void expect_new_data(struct net *net, int c, uint32_t next,
			    uint32_t end, int prio)
{
	struct sent_pkt o;

	while (next_out(net, c, &o)) {
		assert_int_equal(o.pkt.type, HOMA_PKT_DATA);
		assert_false(o.pkt.retransmit);
		assert_int_equal(o.pkt.offset, next);
		if (prio >= 0)
			assert_int_equal(o.priority, prio);
		next += o.pkt.payload_len;
	}
	assert_true(next >= end && next - end < seg_of(net, c));
}

/* ---- limits on incomplete requests ---- */

/* Incomplete requests are capped per host (max_peer_rpcs) and in all
 * (max_half_open): the oldest go (evicted_half_open). */
static void homa_ep_limits__half_open_per_peer_and_total(void **state)
{
	struct net *net;
	const uint64_t *st;
	int s, i;

	(void)state;
	cfg.max_peer_rpcs = 10;
	cfg.max_half_open = 25;
	net = net_server(&cfg, 64, &s);
	st = epi(net->ep[s]).stats;
	/* One host opens 30 requests: only its 10 newest stay. */
	for (i = 0; i < 30; i++)
		inject_request(net, s, 0x0b000001, 5000, 2 * (uint64_t)i + 2,
			       100000);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 10);
	assert_int_equal(st[HOMA_STAT_evicted_half_open], 20);
	/* Many hosts: the total stays at 25. */
	requests_from_hosts(net, s, 40, 100000);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 25);
	cfg.max_peer_rpcs = 2000;
	cfg.max_half_open = 10000;
	net_free(net);
}

/* Past max_peers hosts, with every peer holding an RPC, requests from new
 * hosts are dropped (drop_too_many_peers). */
static void homa_ep_limits__max_peers(void **state)
{
	struct net *net;
	const uint64_t *st;
	int s;

	(void)state;
	cfg.max_peers = 16;
	net = net_server(&cfg, 64, &s);
	st = epi(net->ep[s]).stats;
	requests_from_hosts(net, s, 20, 100000);
	/* Every peer has an RPC: the 17th host onwards is refused. */
	assert_int_equal(epi(net->ep[s]).num_rpcs, 16);
	assert_int_equal(st[HOMA_STAT_drop_too_many_peers], 4);
	cfg.max_peers = 100000;
	net_free(net);
}

/* Over max_half_open the request that never sent a second packet goes
 * first, oldest first: one whose client sent more stays even though it is
 * the oldest. */
static void homa_ep_limits__half_open_evicts_unproven_first(void **state)
{
	struct net *net;
	int s;

	(void)state;
	cfg.max_half_open = 4;
	net = net_server(&cfg, 64, &s);
	inject_request(net, s, 0x0b000001, 5000, 2, 100000);
	/* Its second packet. */
	inject_request_at(net, s, 0x0b000001, 5000, 2, 100000, 1000);
	requests_from_hosts(net, s, 20, 100000);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 4);
	assert_int_equal(epi(net->ep[s]).stats[HOMA_STAT_evicted_half_open],
			 17);
	/* The proven one is still there: its third packet joins it (had it
	 * been evicted, the packet would open a new request and evict
	 * another). */
	inject_request_at(net, s, 0x0b000001, 5000, 2, 100000, 2000);
	assert_int_equal(epi(net->ep[s]).stats[HOMA_STAT_evicted_half_open],
			 17);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 4);
	cfg.max_half_open = 10000;
	net_free(net);
}

/* More concurrent requests than the server keeps incomplete (one here)
 * all complete: a newcomer does not evict a request that is moving (its
 * client would restart it and evict the next one, and none would ever
 * finish); it is dropped, its client asks after it, learns the server
 * has no such RPC, and starts over once there is room. */
static void homa_ep_limits__half_open_full_of_moving_requests(void **state)
{
	struct homa_config saved = cfg;
	struct net *net;
	uint64_t ids[3];
	int c, s, done = 0, rounds = 0;

	(void)state;
	cfg.max_half_open = 1;
	cfg.throttle_min_bytes = 1000000; /* unpaced: the requests overlap */
	net = net_pair(&cfg, 64, &c, &s);
	cfg = saved;
	net->filter = drop_every_7th; /* recovery takes ticks */
	for (int k = 0; k < 3; k++)
		ids[k] = send_req(net, c, s, 131073, (uint32_t)k + 1);
	while (done < 3) {
		struct homa_msg_ready m;

		step(net);
		while (serve(net, s, 100))
			;
		step(net);
		for (int k = 0; k < 3; k++) {
			if (ids[k] == 0 ||
			    homa_ep_receive(net->ep[c], ids[k],
					    HOMA_RECVMSG_RESPONSE, &m) != 0)
				continue;
			assert_int_equal(m.error, 0);
			assert_int_equal(m.length, 100);
			homa_ep_return_bpages(net->ep[c], m.bpage_offsets,
					      m.num_bpages, 0, net->now);
			ids[k] = 0;
			done++;
		}
		advance(net, 1000);
		assert_true(++rounds < 1000);
	}
	assert_true(epi(net->ep[s]).stats[HOMA_STAT_drop_half_open_busy] >
		    0);
	net_free(net);
}

/* With the room for incomplete requests full of requests that move, a
 * new one is dropped (drop_half_open_busy), not one of them.  Once one has
 * made no progress for resend_ticks ticks, another host's new request
 * evicts it; a request of the same host never does. */
static void homa_ep_limits__half_open_evicts_stalled_not_moving(void **s0)
{
	const uint32_t a = 0x0b000001, b = 0x0b000002, c = 0x0b000003;
	const uint64_t *st;
	struct net *net;
	int s;

	(void)s0;
	cfg.max_half_open = 2;
	net = net_server(&cfg, 64, &s);
	cfg.max_half_open = 10000;
	st = epi(net->ep[s]).stats;
	/* Hosts a and b each open a request and send its second packet. */
	inject_request_at(net, s, a, 5000, 2, 100000, 0);
	inject_request_at(net, s, a, 5000, 2, 100000, 1000);
	inject_request_at(net, s, b, 5000, 2, 100000, 0);
	inject_request_at(net, s, b, 5000, 2, 100000, 1000);
	/* Host c's request finds both moving: it is dropped. */
	inject_request(net, s, c, 5000, 2, 100000);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 2);
	assert_int_equal(st[HOMA_STAT_drop_half_open_busy], 1);
	assert_int_equal(st[HOMA_STAT_evicted_half_open], 0);
	/* b keeps sending, a goes quiet for resend_ticks + 1 ticks. */
	for (int t = 0; t <= (int)cfg.resend_ticks; t++) {
		advance(net, 1000);
		inject_request_at(net, s, b, 5000, 2, 100000,
				  2000 + 1000 * (uint32_t)t);
	}
	/* A second request of host a does not evict a's first... */
	inject_request(net, s, a, 5000, 4, 100000);
	assert_int_equal(st[HOMA_STAT_drop_half_open_busy], 2);
	assert_int_equal(st[HOMA_STAT_evicted_half_open], 0);
	/* ...host c's evicts it, and b's stays. */
	inject_request(net, s, c, 5000, 2, 100000);
	assert_int_equal(st[HOMA_STAT_evicted_half_open], 1);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 2);
	inject_request_at(net, s, b, 5000, 2, 100000, 9000);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 2);
	assert_int_equal(st[HOMA_STAT_evicted_half_open], 1);
	net_free(net);
}

/* ---- DATA ---- */

/* input_data - DATA of request id (message_length bytes) from
 * 10.0.0.9:5000 to endpoint s: len bytes at offset (data_pkt's pattern,
 * or every byte 0xee when spoiled). */
static void input_data(struct net *net, int s, uint64_t id,
		       uint32_t message_length, uint32_t offset, uint32_t len,
		       bool spoiled)
{
	union sockaddr_in_union src = from_peer9();
	uint8_t pkt[HOMA_DATA_HDR_LEN + 1000];

	assert_true(len <= 1000);
	data_pkt(net, s, pkt, id, message_length, offset, len);
	if (spoiled)
		memset(pkt + HOMA_DATA_HDR_LEN, 0xee, len);
	pkt_in(net->ep[s], pkt, HOMA_DATA_HDR_LEN + len, &src, 0,
		      net->now);
}

/* DATA of a request no RPC knows starts a server RPC whose id is the
 * client's XOR 1, for the sender's address and port; once complete the
 * request reaches the application under that id from that peer.  DATA
 * of a response (odd id) that no client RPC knows starts nothing
 * (drop_unknown_rpc). */
static void homa_ep_input__data_new_request_starts_server_rpc(void **state)
{
	union sockaddr_in_union src = from_peer9();
	int s;
	struct net *net = net_server(&cfg, 8, &s);
	struct homa_msg_ready m;
	struct homa_rpc *rpc;
	uint8_t *data;

	(void)state;
	input_data(net, s, 2, 3000, 0, 1000, false);
	rpc = server_rpc(net, s, 2, &src);
	assert_non_null(rpc);
	assert_int_equal(rpc->id, 3);
	assert_false(rpc->is_client);
	assert_int_equal(rpc->state, HOMA_RPC_INCOMING);
	assert_int_equal(rpc->in.length, 3000);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 1);
	input_data(net, s, 2, 3000, 1000, 1000, false);
	assert_false(epi(net->ep[s]).readable);
	input_data(net, s, 2, 3000, 2000, 1000, false);
	assert_int_equal(homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST,
					 &m), 0);
	assert_int_equal(m.id, 3);
	assert_int_equal(m.length, 3000);
	assert_true(same_addr(&m.peer, &src));
	data = gather(net, s, &m);
	for (uint32_t k = 0; k < 3000; k++)
		assert_int_equal(data[k], k & 0xff);
	free(data);
	input_data(net, s, 5, 3000, 0, 1000, false);
	assert_int_equal(epi(net->ep[s]).stats[HOMA_STAT_drop_unknown_rpc],
			 1);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 1);
	net_free(net);
}

/* DATA already received is dropped and counted (drop_duplicate_data) and
 * changes no byte: the same packet again, a packet partly overlapping
 * received bytes (spoiled here: were it stored the check would see it),
 * and any packet of a complete message.  Once the application took the
 * request, a late packet is dropped too and starts no new RPC (it is
 * counted as drop_no_buffer then: the RPC holds no buffers any more). */
static void homa_ep_input__data_duplicate_ignored(void **state)
{
	int s;
	struct net *net = net_server(&cfg, 8, &s);
	const uint64_t *st = epi(net->ep[s]).stats;

	(void)state;
	input_data(net, s, 2, 3000, 0, 1000, false);
	input_data(net, s, 2, 3000, 0, 1000, true);
	assert_int_equal(st[HOMA_STAT_drop_duplicate_data], 1);
	input_data(net, s, 2, 3000, 500, 1000, true);
	assert_int_equal(st[HOMA_STAT_drop_duplicate_data], 2);
	input_data(net, s, 2, 3000, 1000, 1000, false);
	input_data(net, s, 2, 3000, 2000, 1000, false);
	input_data(net, s, 2, 3000, 1000, 1000, true);
	assert_int_equal(st[HOMA_STAT_drop_duplicate_data], 3);
	check_pattern(net, s, 3000);
	input_data(net, s, 2, 3000, 2000, 1000, true);
	assert_int_equal(st[HOMA_STAT_drop_duplicate_data] +
			 st[HOMA_STAT_drop_no_buffer], 4);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 1);
	assert_false(epi(net->ep[s]).readable);
	net_free(net);
}

/* The packets of a request arriving in any order (odd ones backwards,
 * then even ones backwards) are reassembled: the message is ready only
 * after the last, intact, with nothing counted as a duplicate. */
static void homa_ep_input__data_out_of_order_reassembled(void **state)
{
	static const uint32_t order[] = { 9, 7, 5, 3, 1, 8, 6, 4, 2, 0 };
	int s;
	struct net *net = net_server(&cfg, 8, &s);

	(void)state;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		assert_false(epi(net->ep[s]).readable);
		input_data(net, s, 2, 10000, order[i] * 1000, 1000, false);
	}
	check_pattern(net, s, 10000);
	assert_int_equal(epi(net->ep[s]).stats
			 [HOMA_STAT_drop_duplicate_data], 0);
	net_free(net);
}

/* A response for a live client RPC from another address than its server's
 * is dropped (drop_wrong_peer) and the RPC still waits. */
static void homa_ep_input__wrong_peer_response_dropped(void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	int evil = net_add(net, 99, true, 8);
	uint8_t pkt[HOMA_DATA_HDR_LEN + 10];
	struct homa_pkt h;
	struct homa_msg_ready m;
	uint64_t id = send_req(net, c, s, 100, 1);

	(void)state;
	memset(&h, 0, sizeof(h));
	h.type = HOMA_PKT_DATA;
	h.sport = 99;
	h.dport = 40000;
	h.sender_id = id ^ 1;
	h.message_length = 10;
	h.incoming = 10;
	h.offset = 0;
	homa_wire_encode_data_hdr(&h, pkt);
	memset(pkt + HOMA_DATA_HDR_LEN, 0xee, 10);
	pkt_in(net->ep[c], pkt, sizeof(pkt), &net->addr[evil], 0,
		      net->now);
	assert_int_equal(epi(net->ep[c]).stats[HOMA_STAT_drop_wrong_peer],
			 1);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	net_free(net);
}

/* ---- control packets ---- */

/* BUSY from the server is a sign of life for a client RPC: its silence
 * count starts again, and a client whose server answers BUSY now and
 * then (every 50 ticks here) does not time out, however long it waits.
 * BUSY from a client for a request this server is still receiving is no
 * progress: the request's silence count goes on. */
static void homa_ep_input__busy_counts_as_life(void **state)
{
	union sockaddr_in_union h = host_addr(0x0b000001, 5000);
	int c, s;
	struct net *net = dead_pair(&cfg, &c, &s);
	struct homa_rpc *rpc, *srv;
	struct homa_msg_ready m;
	uint64_t id;

	(void)state;
	id = send_req(net, c, s, 100, 1);
	inject_request(net, s, 0x0b000001, 5000, 2, 100000);
	step(net);
	rpc = client_rpc(net, c, id);
	srv = server_rpc(net, s, 2, &h);
	advance(net, 10000);
	assert_int_equal(rpc->silent_ticks, 10);
	assert_int_equal(srv->silent_ticks, 10);
	inject_simple(net, c, &net->addr[s], HOMA_PKT_BUSY, id ^ 1);
	assert_int_equal(rpc->silent_ticks, 0);
	assert_true(rpc->probe_answered);
	inject_simple(net, s, &h, HOMA_PKT_BUSY, 2);
	assert_int_equal(srv->silent_ticks, 10);
	for (int t = 0; t < 6; t++) {
		advance(net, 50000);
		inject_simple(net, c, &net->addr[s], HOMA_PKT_BUSY, id ^ 1);
	}
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	assert_int_equal(epi(net->ep[c]).stats[HOMA_STAT_rpc_timeouts], 0);
	net_free(net);
}

/* A BUSY before the response says the server holds the request
 * (alive_timeout_ticks of silence allowed); once the response's first
 * packet arrives that no longer holds: a response that stops after it
 * (here a forged one whose server never sends the rest, and a BUSY after
 * it) times out timeout_ticks after the last packet, not
 * alive_timeout_ticks. */
static void homa_ep_input__response_start_ends_busy_wait(void **state)
{
	int c, s;
	struct net *net = dead_pair(&cfg, &c, &s);
	struct homa_msg_ready m;
	struct homa_pkt h;
	uint8_t pkt[HOMA_DATA_HDR_LEN + 4];
	uint64_t id;
	int t;

	(void)state;
	id = send_req(net, c, s, 100, 1);
	step(net);
	inject_simple(net, c, &net->addr[s], HOMA_PKT_BUSY, id ^ 1);
	assert_true(client_rpc(net, c, id)->busy_heard);
	memset(&h, 0, sizeof(h));
	h.sport = epi(net->ep[s]).port;
	h.dport = epi(net->ep[c]).port;
	h.sender_id = id ^ 1;
	h.message_length = 1234;
	h.incoming = 1234;
	pkt_in(net->ep[c], pkt, data_packet(pkt, &h, 4),
		      &net->addr[s], 0, net->now);
	assert_false(client_rpc(net, c, id)->busy_heard);
	inject_simple(net, c, &net->addr[s], HOMA_PKT_BUSY, id ^ 1);
	assert_false(client_rpc(net, c, id)->busy_heard);
	for (t = 1; t < cfg.alive_timeout_ticks; t++) {
		advance(net, 1000);
		if (homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
				    &m) == 0)
			break;
	}
	assert_int_equal(m.error, ETIMEDOUT);
	assert_true(t <= cfg.timeout_ticks + 2);
	net_free(net);
}

/* GRANT: the granted offset rises to the GRANT's, and the bytes below it
 * go out, in order from where sending stopped, at the GRANT's priority.
 * A GRANT not above the granted offset lowers nothing and sends nothing,
 * but its priority is adopted. */
static void homa_ep_input__grant_raises_granted_offset(void **state)
{
	struct net *net = net_new(&cfg);
	struct homa_rpc *rpc;
	struct sent_pkt o;
	uint32_t next;
	uint64_t id;
	int c, s;

	(void)state;
	id = unsched_sent(net, &c, &s, 200000);
	rpc = client_rpc(net, c, id);
	assert_non_null(rpc);
	assert_int_equal(rpc->out.granted, 40000);
	next = rpc->out.next_offset;
	assert_true(next >= 40000);
	grant(net, c, s, id, 60000, 2);
	assert_int_equal(rpc->out.granted, 60000);
	expect_new_data(net, c, next, 60000, 2);
	grant(net, c, s, id, 50000, 1);
	assert_int_equal(rpc->out.granted, 60000);
	assert_int_equal(rpc->out.sched_priority, 1);
	assert_false(next_out(net, c, &o));
	net_free(net);
}

/* A GRANT that grants nothing new (a peer repeating an old one, or a
 * forged one every few ticks) is no sign of life: a request whose
 * receiver never grants more still times out after timeout_ticks of
 * silence. */
static void homa_ep_input__old_grant_keeps_nothing_alive(void **state)
{
	struct net *net = net_new(&cfg);
	struct homa_msg_ready m;
	uint64_t id;
	int c, s, t;

	(void)state;
	id = unsched_sent(net, &c, &s, 200000);
	net->filter = drop_all;
	for (t = 1; t < cfg.alive_timeout_ticks; t++) {
		if (t % 5 == 0)
			grant(net, c, s, id, 40000, 3);
		advance(net, 1000);
		if (homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
				    &m) == 0)
			break;
	}
	assert_int_equal(m.error, ETIMEDOUT);
	assert_true(t <= cfg.timeout_ticks + 2);
	net_free(net);
}

/* RESEND for bytes already sent: the packets covering the range go out
 * again on their original boundaries ([2000, 5000) is packets 1..3 of
 * 1,424 bytes), with their original bytes, flagged as retransmissions, at
 * the RESEND's priority (resent_packets counts them); RESEND(0, -1)
 * resends every packet sent so far. */
static void homa_ep_input__resend_sent_bytes_on_packet_boundaries(void **s0)
{
	struct net *net = net_new(&cfg);
	uint8_t *want = malloc(200000);
	struct sent_pkt o;
	uint32_t seg, n = 0;
	uint64_t id;
	int c, s;

	(void)s0;
	id = unsched_sent(net, &c, &s, 200000);
	seg = seg_of(net, c);
	assert_int_equal(seg, 1424);
	fill(want, 200000, 1);
	resend(net, c, s, id, 2000, 3000, 5);
	while (next_out(net, c, &o)) {
		assert_int_equal(o.pkt.type, HOMA_PKT_DATA);
		assert_true(o.pkt.retransmit);
		assert_int_equal(o.priority, 5);
		assert_int_equal(o.pkt.offset, seg * (1 + n));
		assert_int_equal(o.pkt.payload_len, seg);
		assert_memory_equal(o.pkt.payload, want + o.pkt.offset, seg);
		n++;
	}
	assert_int_equal(n, 3);
	assert_int_equal(epi(net->ep[c]).stats[HOMA_STAT_resent_packets],
			 3);
	resend(net, c, s, id, 0, HOMA_RESEND_ALL, 4);
	for (n = 0; next_out(net, c, &o); n++) {
		assert_true(o.pkt.retransmit);
		assert_int_equal(o.pkt.offset, seg * n);
	}
	assert_int_equal(n, (40000 + seg - 1) / seg);
	free(want);
	net_free(net);
}

/* RESEND for bytes never sent (from past the sent bytes, "all sent so
 * far"), or asking for nothing: there is nothing to retransmit, and the
 * answer is BUSY (alive, nothing to send now), not DATA. */
static void homa_ep_input__resend_unsent_bytes_draws_busy(void **state)
{
	struct net *net = net_new(&cfg);
	struct sent_pkt o;
	uint64_t id;
	int c, s;

	(void)state;
	id = unsched_sent(net, &c, &s, 200000);
	resend(net, c, s, id, 100000, HOMA_RESEND_ALL, 5);
	expect_only(net, c, HOMA_PKT_BUSY, id, &net->addr[s], &o);
	resend(net, c, s, id, 0, 0, 5);
	expect_only(net, c, HOMA_PKT_BUSY, id, &net->addr[s], &o);
	assert_int_equal(epi(net->ep[c]).stats[HOMA_STAT_resent_packets],
			 0);
	net_free(net);
}

/* A RESEND whose range ends beyond the granted offset also acts as a
 * grant: the bytes up to its end, never sent, go out as new DATA. */
static void homa_ep_input__resend_beyond_grant_acts_as_grant(void **state)
{
	struct net *net = net_new(&cfg);
	struct homa_rpc *rpc;
	uint32_t next, end;
	uint64_t id;
	int c, s;

	(void)state;
	id = unsched_sent(net, &c, &s, 200000);
	rpc = client_rpc(net, c, id);
	next = rpc->out.next_offset;
	end = next + 3000;
	resend(net, c, s, id, next, 3000, 5);
	assert_int_equal(rpc->out.granted, end);
	expect_new_data(net, c, next, end, -1);
	net_free(net);
}

/* drop_response_tail - drops the response DATA (from endpoint 1) at
 * offsets of 50,000 and more. */
static bool drop_response_tail(struct net *net, const uint8_t *pkt,
			       size_t len, int from, int to)
{
	struct homa_pkt h;

	(void)net; (void)to;
	return !(from == 1 && homa_wire_decode(pkt, len, &h) == HOMA_WIRE_OK &&
		 h.type == HOMA_PKT_DATA && h.offset >= 50000);
}

/* count_request_data - pull ep's output; returns how many DATA packets of
 * client RPC id it sends. */
static int count_request_data(struct homa_ep *ep, uint64_t now, uint64_t id)
{
	uint8_t buf[2048];
	struct homa_out out = { .buf = buf };
	struct homa_pkt pkt;
	int n = 0;

	while (homa_ep_output(ep, now, &out))
		if (homa_wire_decode(buf, out.len, &pkt) == HOMA_WIRE_OK &&
		    pkt.type == HOMA_PKT_DATA && pkt.sender_id == id)
			n++;
	return n;
}

/* A RESEND for request bytes reaching a client whose response is arriving
 * means the server lost the RPC (a new incarnation holds part of the
 * request) or is a stale packet.  The client starts over as on RPC_UNKNOWN:
 * its partial response is dropped and the request goes out again, so that
 * no response mixes bytes of two executions.  With the old server still
 * alive (the stale case), the RPC then completes with the right bytes. */
static void homa_ep_input__resend_during_response_restarts(void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 64, &c, &s);
	struct homa_msg_ready m;
	uint8_t pkt[HOMA_MAX_CTRL_LEN], *data, *want;
	struct homa_pkt h;
	const uint64_t *st = epi(net->ep[c]).stats;
	uint64_t id;
	size_t len;
	int rounds = 0;

	(void)state;
	net->filter = drop_response_tail;
	id = send_req(net, c, s, 3000, 7);
	step(net);
	assert_int_equal(serve(net, s, 100000), 1);
	step(net);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	assert_true(st[HOMA_STAT_packets_rcvd_DATA] > 0);
	/* The server asks for the request's first 1,000 bytes. */
	memset(&h, 0, sizeof(h));
	h.type = HOMA_PKT_RESEND;
	h.sport = 99;
	h.dport = 40000;
	h.sender_id = id ^ 1;
	h.offset = 0;
	h.length = 1000;
	h.priority = 6;
	len = homa_wire_encode_ctrl(&h, pkt, sizeof(pkt));
	assert_true(len > 0);
	pkt_in(net->ep[c], pkt, len, &net->addr[s], 0, net->now);
	assert_int_equal(st[HOMA_STAT_resend_during_response], 1);
	assert_int_equal(st[HOMA_STAT_rpc_restarts], 1);
	/* The whole request goes out again (3 packets). */
	assert_int_equal(count_request_data(net->ep[c], net->now, id), 3);
	/* The network heals; the RPC completes with the server's bytes. */
	net->filter = NULL;
	while (homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
			       &m) != 0) {
		advance(net, 1000);
		assert_true(++rounds < 200);
	}
	assert_int_equal(m.error, 0);
	assert_int_equal(m.length, 100000);
	data = gather(net, c, &m);
	want = malloc(100000);
	fill(want, 100000, request_seed(7));
	assert_memory_equal(data, want, 100000);
	free(want);
	free(data);
	net_free(net);
}


/* RPC_UNKNOWN to a client sending its request (the server lost it): the
 * request goes out again from its first byte, its grants back to the
 * unscheduled bytes (rpc_restarts counts it).  To a client whose
 * response is complete it changes nothing. */
static void homa_ep_input__rpc_unknown_restarts_client(void **state)
{
	struct net *net = net_new(&cfg);
	struct homa_msg_ready m;
	struct homa_rpc *rpc;
	struct sent_pkt o;
	uint64_t id, done;
	int c, s;

	(void)state;
	id = unsched_sent(net, &c, &s, 200000);
	rpc = client_rpc(net, c, id);
	grant(net, c, s, id, 60000, 2);
	while (next_out(net, c, &o))
		;
	inject_simple(net, c, &net->addr[s], HOMA_PKT_RPC_UNKNOWN, id ^ 1);
	assert_int_equal(epi(net->ep[c]).stats[HOMA_STAT_rpc_restarts], 1);
	assert_int_equal(rpc->out.granted, 40000);
	expect_new_data(net, c, 0, 40000, -1);
	assert_int_equal(homa_ep_abort(net->ep[c], id, 0), 0);

	done = send_req(net, c, s, 100, 2);
	step(net);
	assert_int_equal(serve(net, s, 100), 1);
	step(net);
	inject_simple(net, c, &net->addr[s], HOMA_PKT_RPC_UNKNOWN, done ^ 1);
	assert_int_equal(count_type(net, c, HOMA_PKT_DATA), 0);
	assert_int_equal(epi(net->ep[c]).stats[HOMA_STAT_rpc_restarts], 1);
	assert_int_equal(homa_ep_receive(net->ep[c], done,
					 HOMA_RECVMSG_RESPONSE, &m), 0);
	assert_int_equal(m.error, 0);
	assert_int_equal(m.length, 100);
	net_free(net);
}

/* A server that answers every tick with RPC_UNKNOWN: the client restarts
 * each time, but only the first HOMA_MAX_RESTARTS restarts count as signs
 * of life, so the RPC fails with ETIMEDOUT about timeout_ticks later
 * instead of restarting for ever. */
static void homa_ep_input__rpc_unknown_forever_times_out(void **state)
{
	int c, s;
	struct net *net = dead_pair(&cfg, &c, &s);
	struct homa_msg_ready m;
	uint64_t id;
	int t;

	(void)state;
	id = send_req(net, c, s, 100, 1);
	step(net);
	for (t = 1; t < 300; t++) {
		inject_simple(net, c, &net->addr[s], HOMA_PKT_RPC_UNKNOWN,
			      id ^ 1);
		advance(net, 1000);
		if (homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
				    &m) == 0)
			break;
	}
	assert_int_equal(m.error, ETIMEDOUT);
	assert_true(t >= cfg.timeout_ticks);
	assert_true(t <= cfg.timeout_ticks + HOMA_MAX_RESTARTS + 2);
	assert_int_equal(epi(net->ep[c]).stats[HOMA_STAT_rpc_restarts],
			 (uint64_t)t);
	net_free(net);
}

/* RPC_UNKNOWN to a server ends that server RPC: its request is forgotten
 * and its buffer space is free again. */
static void homa_ep_input__rpc_unknown_ends_server_rpc(void **state)
{
	union sockaddr_in_union h = host_addr(0x0b000001, 5000);
	int s;
	struct net *net = net_server(&cfg, 8, &s);
	struct homa_pool *pool = epi(net->ep[s]).pool;

	(void)state;
	inject_request(net, s, 0x0b000001, 5000, 2, 3 * HOMA_BPAGE_SIZE);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 1);
	assert_int_equal(homa_pool_free_bpages(pool), 5);
	inject_simple(net, s, &h, HOMA_PKT_RPC_UNKNOWN, 2);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 0);
	assert_int_equal(homa_pool_free_bpages(pool), 8);
	net_free(net);
}

/* first_data - pull endpoint i's output: the first DATA packet (the
 * others are dropped). */
static struct sent_pkt first_data(struct net *net, int i)
{
	struct sent_pkt o, first;
	int n = 0;

	memset(&first, 0, sizeof(first));
	while (next_out(net, i, &o))
		if (o.pkt.type == HOMA_PKT_DATA && n++ == 0)
			first = o;
	assert_true(n > 0);
	return first;
}

/* CUTOFFS: the sender's peer record takes its cutoffs (entry 0 unlimited,
 * whatever it says) and its version (cutoffs_updates counts it).  The
 * unscheduled DATA sent to that host then uses the priority they give a
 * message of its length (before: 6, the priority for a host whose
 * cutoffs are unknown) and carries the version. */
static void homa_ep_input__cutoffs_update_peer(void **state)
{
	static const uint32_t cut[HOMA_NUM_PRIORITIES] = { 0, 800000, 400000,
		4000, 2000, 1500, 1000, 100 };
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	struct homa_peer *peer;
	struct homa_pkt p;
	struct sent_pkt o;

	(void)state;
	send_req(net, c, s, 3000, 1);
	o = first_data(net, c);
	assert_int_equal(o.priority, 6);
	assert_int_equal(o.pkt.cutoff_version, 0);
	memset(&p, 0, sizeof(p));
	p.type = HOMA_PKT_CUTOFFS;
	p.sender_id = 0x777;
	memcpy(p.unsched_cutoffs, cut, sizeof(cut));
	p.cutoff_version = 7;
	inject_pkt(net, c, &net->addr[s], &p);
	assert_int_equal(epi(net->ep[c]).stats[HOMA_STAT_cutoffs_updates],
			 1);
	peer = homa_peer_get(&net->ep[c]->peers, &net->addr[s]);
	assert_non_null(peer);
	assert_int_equal(peer->cutoff_version, 7);
	assert_int_equal(peer->cutoffs[0], HOMA_MAX_MESSAGE_LENGTH);
	for (int k = 1; k < HOMA_NUM_PRIORITIES; k++)
		assert_int_equal(peer->cutoffs[k], cut[k]);
	send_req(net, c, s, 3000, 2);
	o = first_data(net, c);
	assert_int_equal(o.priority, 3);
	assert_int_equal(o.pkt.cutoff_version, 7);
	send_req(net, c, s, 50, 3);
	assert_int_equal(first_data(net, c).priority, 7);
	net_free(net);
}

/* stale_data - the whole 500-byte request id from src to endpoint s,
 * carrying cutoff_version version. */
static void stale_data(struct net *net, int s,
		       const union sockaddr_in_union *src, uint64_t id,
		       uint16_t version)
{
	uint8_t pkt[HOMA_DATA_HDR_LEN + 500];
	struct homa_pkt h;

	data_pkt(net, s, pkt, id, 500, 0, 500);
	assert_int_equal(homa_wire_decode(pkt, sizeof(pkt), &h), HOMA_WIRE_OK);
	h.sport = homa_addr_port(src);
	h.cutoff_version = version;
	homa_wire_encode_data_hdr(&h, pkt);
	pkt_in(net->ep[s], pkt, sizeof(pkt), src, 0, net->now);
}

/* take_cutoffs - endpoint s's output now: the CUTOFFS in it, each checked
 * to carry the 8 slots of the settings (slot i: the cutoff of priority i,
 * so slot 7, the highest priority, holds the smallest) and their version;
 * returns how many went to host ip (host order). */
static int take_cutoffs(struct net *net, int s, uint32_t ip)
{
	struct sent_pkt o;
	int n = 0;

	while (next_out(net, s, &o)) {
		if (o.pkt.type != HOMA_PKT_CUTOFFS)
			continue;
		for (int k = 0; k < HOMA_NUM_PRIORITIES; k++)
			assert_int_equal(o.pkt.unsched_cutoffs[k],
					 cfg.unsched_cutoffs[k]);
		assert_int_equal(o.pkt.cutoff_version, cfg.cutoff_version);
		assert_int_equal(o.priority, cfg.control_priority);
		if (ntohl(o.dest.in4.sin_addr.s_addr) == ip)
			n++;
	}
	return n;
}

/* A burst of DATA with a stale cutoff_version from one host draws one
 * CUTOFFS to it per tick, not one per packet (another host gets its own);
 * the next tick another stale DATA draws the next one; DATA with the
 * current version draws none.  Slots: 200 in 7, 2,800 in 6, 15,000 in 5,
 * unlimited below. */
static void homa_ep_input__cutoffs_once_per_peer_per_tick(void **state)
{
	int s;
	struct net *net = net_server(&cfg, 64, &s);
	union sockaddr_in_union a = host_addr(0x0a000009, 5000);
	union sockaddr_in_union a2 = host_addr(0x0a000009, 5001);
	union sockaddr_in_union b = host_addr(0x0a00000a, 5000);
	uint64_t id = 2;

	(void)state;
	assert_int_equal(cfg.unsched_cutoffs[7], 200);
	assert_int_equal(cfg.unsched_cutoffs[6], 2800);
	assert_int_equal(cfg.unsched_cutoffs[5], 15000);
	assert_int_equal(cfg.unsched_cutoffs[0], HOMA_MAX_MESSAGE_LENGTH);
	for (int i = 0; i < 10; i++, id += 2)
		stale_data(net, s, i & 1 ? &a2 : &a, id, 0);
	stale_data(net, s, &b, id, 0);
	id += 2;
	assert_int_equal(take_cutoffs(net, s, 0x0a000009), 1);
	assert_int_equal(epi(net->ep[s]).stats
			 [HOMA_STAT_packets_sent_CUTOFFS], 2);
	stale_data(net, s, &a, id, 0);
	id += 2;
	assert_int_equal(take_cutoffs(net, s, 0x0a000009), 0);
	tick_ep(net, s);
	stale_data(net, s, &a, id, (uint16_t)(cfg.cutoff_version + 1));
	id += 2;
	stale_data(net, s, &a, id, 0);
	id += 2;
	assert_int_equal(take_cutoffs(net, s, 0x0a000009), 1);
	tick_ep(net, s);
	stale_data(net, s, &a, id, (uint16_t)cfg.cutoff_version);
	assert_int_equal(take_cutoffs(net, s, 0x0a000009), 0);
	net_free(net);
}

/* NEED_ACK for a client RPC whose response is complete (waiting for the
 * application, or taken and gone) is answered with an ACK naming it; the
 * ACK reaching the server frees the server's RPC. */
static void homa_ep_input__need_ack_answered_with_ack(void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	struct homa_msg_ready m;
	struct sent_pkt o;
	uint64_t id;

	(void)state;
	id = send_req(net, c, s, 100, 1);
	step(net);
	assert_int_equal(serve(net, s, 100), 1);
	step(net);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 1);
	inject_simple(net, c, &net->addr[s], HOMA_PKT_NEED_ACK, id ^ 1);
	expect_only(net, c, HOMA_PKT_ACK, id, &net->addr[s], &o);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(homa_ep_return_bpages(net->ep[c], m.bpage_offsets,
					       m.num_bpages, 0, net->now), 0);
	assert_int_equal(epi(net->ep[c]).num_rpcs, 0);
	inject_simple(net, c, &net->addr[s], HOMA_PKT_NEED_ACK, id ^ 1);
	step(net);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 0);
	assert_int_equal(epi(net->ep[s]).stats
			 [HOMA_STAT_server_rpcs_acked], 1);
	net_free(net);
}

/* NEED_ACK for a client RPC still missing response bytes is answered
 * with a RESEND for them, not an ACK. */
static void homa_ep_input__need_ack_while_missing_bytes_resends(void **s0)
{
	int c, s;
	struct net *net = net_pair(&cfg, 64, &c, &s);
	struct sent_pkt o;
	uint64_t id;
	int resends = 0;

	(void)s0;
	net->filter = drop_response_tail;
	id = send_req(net, c, s, 100, 1);
	step(net);
	assert_int_equal(serve(net, s, 100000), 1);
	step(net);
	inject_simple(net, c, &net->addr[s], HOMA_PKT_NEED_ACK, id ^ 1);
	while (next_out(net, c, &o)) {
		assert_int_not_equal(o.pkt.type, HOMA_PKT_ACK);
		if (o.pkt.type != HOMA_PKT_RESEND)
			continue;
		assert_int_equal(o.pkt.sender_id, id);
		assert_true(o.pkt.offset >= 50000);
		resends++;
	}
	assert_true(resends >= 1);
	net_free(net);
}

/* answered_requests - server s gets n requests (ids 2, 4, ...) of 100
 * bytes from src and sends each its response (lost); its RPCs then wait
 * only for acks. */
static void answered_requests(struct net *net, int s,
			      const union sockaddr_in_union *src, int n)
{
	uint8_t b = 1;
	struct iovec iov = { &b, 1 };
	struct homa_msg_ready m;

	for (int k = 0; k < n; k++) {
		inject_request(net, s, ntohl(src->in4.sin_addr.s_addr),
			       ntohs(src->in4.sin_port), 2 + 2 * (uint64_t)k,
			       100);
		assert_int_equal(homa_ep_receive(net->ep[s], 0,
						 HOMA_RECVMSG_REQUEST, &m), 0);
		assert_int_equal(homa_ep_return_bpages(net->ep[s],
			m.bpage_offsets, m.num_bpages, 0, net->now), 0);
		assert_int_equal(homa_ep_send_reply(net->ep[s], &m.peer, m.id,
						    &iov, 1, 0, net->now), 0);
	}
	count_type(net, s, HOMA_PKT_DATA);
	assert_int_equal(epi(net->ep[s]).num_rpcs, (uint32_t)n);
}

/* ACK frees the server RPCs it names on this port, in its common header
 * and in its entries (server_rpcs_acked counts them); an entry for another
 * server port frees nothing; an ack riding on a DATA packet frees the
 * same way. */
static void homa_ep_input__ack_frees_server_rpcs(void **state)
{
	union sockaddr_in_union h = host_addr(0x0b000001, 5000);
	uint8_t pkt[HOMA_DATA_HDR_LEN + 100];
	int s;
	struct net *net = net_server(&cfg, 8, &s);
	const uint64_t *st = epi(net->ep[s]).stats;
	struct homa_pkt p;

	(void)state;
	answered_requests(net, s, &h, 4);
	memset(&p, 0, sizeof(p));
	p.type = HOMA_PKT_ACK;
	p.sender_id = 2;
	p.num_acks = 2;
	p.acks[0] = (struct homa_ack){ 4, 99 };
	p.acks[1] = (struct homa_ack){ 6, 98 };
	inject_pkt(net, s, &h, &p);
	assert_int_equal(st[HOMA_STAT_server_rpcs_acked], 2);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 2);
	assert_null(server_rpc(net, s, 2, &h));
	assert_null(server_rpc(net, s, 4, &h));
	/* The first packet of request 10 carries the ack of 6. */
	memset(&p, 0, sizeof(p));
	p.type = HOMA_PKT_DATA;
	p.sport = 5000;
	p.dport = 99;
	p.sender_id = 10;
	p.message_length = 100;
	p.incoming = 100;
	p.num_acks = 1;
	p.acks[0] = (struct homa_ack){ 6, 99 };
	homa_wire_encode_data_hdr(&p, pkt);
	memset(pkt + HOMA_DATA_HDR_LEN, 0x5a, 100);
	pkt_in(net->ep[s], pkt, sizeof(pkt), &h, 0, net->now);
	assert_int_equal(st[HOMA_STAT_server_rpcs_acked], 3);
	assert_null(server_rpc(net, s, 6, &h));
	assert_non_null(server_rpc(net, s, 8, &h));
	assert_non_null(server_rpc(net, s, 10, &h));
	net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_ep_limits__half_open_per_peer_and_total),
		T(homa_ep_limits__max_peers),
		T(homa_ep_limits__half_open_evicts_unproven_first),
		T(homa_ep_limits__half_open_full_of_moving_requests),
		T(homa_ep_limits__half_open_evicts_stalled_not_moving),
		T(homa_ep_input__data_new_request_starts_server_rpc),
		T(homa_ep_input__data_duplicate_ignored),
		T(homa_ep_input__data_out_of_order_reassembled),
		T(homa_ep_input__wrong_peer_response_dropped),
		T(homa_ep_input__busy_counts_as_life),
		T(homa_ep_input__response_start_ends_busy_wait),
		T(homa_ep_input__grant_raises_granted_offset),
		T(homa_ep_input__old_grant_keeps_nothing_alive),
		T(homa_ep_input__resend_sent_bytes_on_packet_boundaries),
		T(homa_ep_input__resend_unsent_bytes_draws_busy),
		T(homa_ep_input__resend_beyond_grant_acts_as_grant),
		T(homa_ep_input__resend_during_response_restarts),
		T(homa_ep_input__rpc_unknown_restarts_client),
		T(homa_ep_input__rpc_unknown_forever_times_out),
		T(homa_ep_input__rpc_unknown_ends_server_rpc),
		T(homa_ep_input__cutoffs_update_peer),
		T(homa_ep_input__cutoffs_once_per_peer_per_tick),
		T(homa_ep_input__need_ack_answered_with_ack),
		T(homa_ep_input__need_ack_while_missing_bytes_resends),
		T(homa_ep_input__ack_frees_server_rpcs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
