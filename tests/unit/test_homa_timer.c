// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_timer.c, the endpoint's timer: timeouts (and what
 * keeps an RPC from timing out: BUSY, a peer alive with other RPCs), the
 * schedule of RESENDs (backoff, loss, the budget per host and the room in
 * the control queue; what a RESEND asks for: test_homa_resend.c), the
 * schedule of NEED_ACKs, and the deadline homa_ep_next_timer returns.
 * Endpoints exchange packets through the in-memory network of
 * ep_test_util, or one endpoint's timer runs alone (tick_ep) and its
 * output is read directly.
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

/* serve_held - the server answers request id (client id) from endpoint c,
 * which its application already holds, with one byte; returns the
 * result of homa_ep_send_reply. */
static int serve_held(struct net *net, int s, int c, uint64_t id)
{
	uint8_t b = 1;
	struct iovec iov = { &b, 1 };
	union sockaddr_in_union peer = net->addr[c];

	return homa_ep_send_reply(net->ep[s], &peer, id ^ 1, &iov, 1, 0,
				  net->now);
}

/* ---- timeouts ---- */

/* timeout_at - with timeout_ticks timeout, a client RPC whose every packet
 * is lost is still waiting after timeout - 1 silent ticks and has failed
 * with ETIMEDOUT after timeout ticks (rpc_timeouts counts it). */
static void timeout_at(int64_t timeout)
{
	struct net *net;
	struct homa_msg_ready m;
	uint64_t id;
	int c, s;

	cfg.timeout_ticks = timeout;
	net = dead_pair(&cfg, &c, &s);
	id = send_req(net, c, s, 100, 4);
	step(net);
	for (int64_t t = 1; t < timeout; t++) {
		tick_ep(net, c);
		step(net);
		assert_int_equal(homa_ep_receive(net->ep[c], id,
						 HOMA_RECVMSG_RESPONSE, &m),
				 -EAGAIN);
	}
	tick_ep(net, c);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, ETIMEDOUT);
	assert_int_equal(m.id, id);
	assert_int_equal(epi(net->ep[c]).stats[HOMA_STAT_rpc_timeouts], 1);
	net_free(net);
}

/* ETIMEDOUT comes after exactly timeout_ticks ticks of silence (the
 * default 100, and 30), not before. */
static void homa_ep_timer__timeout_after_timeout_ticks(void **state)
{
	(void)state;
	timeout_at(cfg.timeout_ticks);
	timeout_at(30);
}

/* A client RPC whose every packet is lost has no answer after 50 ms and
 * has failed with ETIMEDOUT (id and cookie named) after 110 ms. */
static void homa_ep_timer__client_times_out(void **state)
{
	int c, s;
	struct net *net = dead_pair(&cfg, &c, &s);
	struct homa_msg_ready m;
	uint64_t id;

	(void)state;
	id = send_req(net, c, s, 100, 9);
	advance(net, 50000);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	advance(net, 60000);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, ETIMEDOUT);
	assert_int_equal(m.id, id);
	assert_int_equal(m.cookie, 9);
	assert_int_equal(epi(net->ep[c]).num_rpcs, 0);
	net_free(net);
}

/* A request whose client sent one packet and went silent is dropped after
 * the timeout (server_rpcs_timed_out) and its buffer space is free. */
static void homa_ep_timer__half_open_requests_time_out(void **state)
{
	int s;
	struct net *net = net_server(&cfg, 64, &s);

	(void)state;
	inject_request(net, s, 0x0b000001, 5000, 2, 1000000);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 1);
	advance(net, 120000);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 0);
	assert_int_equal(epi(net->ep[s]).stats[
				HOMA_STAT_server_rpcs_timed_out], 1);
	assert_int_equal(homa_pool_free_bpages(epi(net->ep[s]).pool) + 1
			 >= 64, 1);
	net_free(net);
}

/* A server holding a request for 400 ms (4 timeouts) answers the
 * client's RESENDs with BUSY, which keeps the client's RPC alive; the
 * response then completes it. */
static void homa_ep_timer__busy_keeps_slow_server_alive(void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	struct homa_msg_ready m;
	uint64_t id;

	(void)state;
	/* The server holds the request for 400 ms. */
	id = hold_request(net, c, s, &m);
	advance(net, 400000);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	assert_true(epi(net->ep[s]).stats[HOMA_STAT_packets_sent_BUSY] > 0);
	assert_int_equal(serve_held(net, s, c, id), 0);
	step(net);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, 0);
	assert_int_equal(m.length, 1);
	net_free(net);
}

/* The RPC (client id) whose packets lose_rpc loses, both ways, and how
 * many RESENDs of it were lost. */
static uint64_t lost_rpc_id;
static int lost_resends;

/* lose_rpc - lose every packet of the RPC lost_rpc_id. */
static bool lose_rpc(struct net *net, const uint8_t *pkt, size_t len,
		     int from, int to)
{
	uint64_t id = 0;

	(void)net; (void)from; (void)to;
	if (len < HOMA_COMMON_HDR_LEN)
		return true;
	for (int i = 0; i < 8; i++)
		id = id << 8 | pkt[20 + i];
	if ((id & ~1ull) != lost_rpc_id)
		return true;
	if (pkt[11] == HOMA_PKT_RESEND)
		lost_resends++;
	return false;
}

/* Every packet of RPC A is lost while the same server keeps answering
 * another RPC of the client (B, held by its application: BUSY answers B's
 * probes).  The server's socket is alive, so A waits alive_timeout_ticks
 * (1,000) rather than timeout_ticks (100) before ETIMEDOUT.  A's first
 * RESENDs come every resend_interval (5) ticks, as for loss; from the
 * third on they back off as if answered (5 ticks apart they would be
 * about 180 in 900 ms).  B is untouched. */
static void homa_ep_timer__alive_peer_keeps_silent_rpc_waiting(void **s0)
{
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	const uint64_t *cst = epi(net->ep[c]).stats;
	struct homa_msg_ready m, held;
	uint64_t a, b, resends_b0;

	(void)s0;
	b = hold_request(net, c, s, &held);
	a = send_req(net, c, s, 100, 7);
	lost_rpc_id = a;
	lost_resends = 0;
	net->filter = lose_rpc;
	resends_b0 = cst[HOMA_STAT_packets_sent_RESEND];
	advance(net, 17000);
	assert_int_equal(lost_resends, 3);
	advance(net, 483000);
	assert_int_equal(homa_ep_receive(net->ep[c], a, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	advance(net, 400000);
	assert_int_equal(homa_ep_receive(net->ep[c], a, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	print_message("900 ms: client RESENDs %llu (A %d, B the rest)\n",
		      (unsigned long long)(cst[HOMA_STAT_packets_sent_RESEND] -
					   resends_b0), lost_resends);
	assert_true(lost_resends <= 40);
	assert_true(cst[HOMA_STAT_packets_sent_RESEND] - resends_b0 <= 80);
	advance(net, 150000);
	assert_int_equal(homa_ep_receive(net->ep[c], a, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, ETIMEDOUT);
	assert_int_equal(m.id, a);
	assert_int_equal(cst[HOMA_STAT_rpc_timeouts], 1);
	/* B still waits, and completes. */
	assert_int_equal(homa_ep_receive(net->ep[c], b, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	net->filter = NULL;
	assert_int_equal(serve_held(net, s, c, b), 0);
	step(net);
	assert_int_equal(homa_ep_receive(net->ep[c], b, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, 0);
	net_free(net);
}

/* The endpoint whose every packet drop_from_host loses. */
static int silent_host;

/* drop_from_host - lose every packet silent_host sends (a server process
 * that stalls: its threads all compute, none reads its socket). */
static bool drop_from_host(struct net *net, const uint8_t *pkt, size_t len,
			   int from, int to)
{
	(void)net; (void)pkt; (void)len; (void)to;
	return from != silent_host;
}

/* A request the server holds (its application computes) and answers with
 * BUSY, after which the server goes silent: the client RPC waits
 * alive_timeout_ticks (1,000) from the last BUSY, not timeout_ticks (100),
 * before ETIMEDOUT; the server holding it proves it alive. */
static void homa_ep_timer__busy_answered_rpc_waits_alive_timeout(void **st)
{
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	const uint64_t *cst = epi(net->ep[c]).stats;
	struct homa_msg_ready m, held;
	uint64_t b;

	(void)st;
	b = hold_request(net, c, s, &held);
	advance(net, 100000);
	assert_int_equal(homa_ep_receive(net->ep[c], b, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	assert_true(cst[HOMA_STAT_packets_rcvd_BUSY] > 0);
	silent_host = s;
	net->filter = drop_from_host;
	advance(net, 500000);
	assert_int_equal(homa_ep_receive(net->ep[c], b, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	assert_int_equal(cst[HOMA_STAT_rpc_timeouts], 0);
	advance(net, 600000);
	assert_int_equal(homa_ep_receive(net->ep[c], b, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, ETIMEDOUT);
	assert_int_equal(cst[HOMA_STAT_rpc_timeouts], 1);
	net_free(net);
}

/* ---- NEED_ACK ---- */

/* drop_acks - lose every ACK (a client too busy to answer). */
static bool drop_acks(struct net *net, const uint8_t *pkt, size_t len,
		      int from, int to)
{
	(void)net; (void)from; (void)to;
	return len < HOMA_COMMON_HDR_LEN || pkt[11] != HOMA_PKT_ACK;
}

/* A server whose response is never acknowledged asks with NEED_ACK 2, 4,
 * 8, 16, 32, 64 and 96 ticks after it (gaps doubling up to
 * resend_max_interval), not every tick, then forgets the RPC when it
 * times out (timeout_ticks after the response). */
static void homa_ep_timer__need_ack_backs_off(void **state)
{
	static const int want[] = { 2, 4, 8, 16, 32, 64, 96 };
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	int n = 0, t;

	(void)state;
	net->filter = drop_acks;
	send_req(net, c, s, 100, 6);
	step(net);
	assert_int_equal(serve(net, s, 10), 1);
	step(net);
	for (t = 1; epi(net->ep[s]).num_rpcs > 0; t++) {
		int k;

		assert_true(t <= cfg.timeout_ticks);
		tick_ep(net, s);
		k = count_type(net, s, HOMA_PKT_NEED_ACK);
		assert_true(k <= 1);
		if (k == 0)
			continue;
		assert_true(n < (int)(sizeof(want) / sizeof(want[0])));
		assert_int_equal(t, want[n]);
		n++;
	}
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	assert_int_equal(t - 1, cfg.timeout_ticks);
	net_free(net);
}

/* 10 responses to one client, none acknowledged: with max_peer_need_acks
 * 1 the server sends at most one NEED_ACK to that host per tick, and every
 * RPC is asked in turn (none passed over); the client's ACK answers then
 * let the server forget them all. */
static void homa_ep_timer__need_acks_per_host_budget(void **state)
{
	int c, s, asked[10] = { 0 }, i, t, total = 0;
	struct net *net = net_pair(&cfg, 64, &c, &s);
	uint64_t first = 0;
	struct sent_pkt o;

	(void)state;
	assert_int_equal(cfg.max_peer_need_acks, 1);
	net->filter = drop_acks;
	for (i = 0; i < 10; i++) {
		uint64_t id = send_req(net, c, s, 100, (uint32_t)i + 1);

		if (i == 0)
			first = id;
	}
	step(net);
	for (i = 0; i < 10; i++)
		assert_int_equal(serve(net, s, 10), 1);
	step(net);
	for (t = 1; t <= 40; t++) {
		int n = 0;

		tick_ep(net, s);
		while (next_out(net, s, &o)) {
			if (o.pkt.type != HOMA_PKT_NEED_ACK)
				continue;
			n++;
			i = (int)(((o.pkt.sender_id ^ 1) - first) / 2);
			assert_true(i >= 0 && i < 10);
			asked[i]++;
		}
		assert_true(n <= 1);
		total += n;
	}
	for (i = 0; i < 10; i++)
		assert_true(asked[i] >= 1);
	print_message("40 ticks: %d NEED_ACKs to the one host\n", total);
	/* Answered now (ACKs go through), the server forgets every RPC. */
	net->filter = NULL;
	for (t = 0; t < 40 && epi(net->ep[s]).num_rpcs > 0; t++) {
		tick_ep(net, s);
		step(net);
	}
	assert_int_equal(epi(net->ep[s]).num_rpcs, 0);
	net_free(net);
}

/* ---- RESEND schedule ---- */

/* resend_ticks_seen - run client c's timer alone for ticks ticks while
 * its request id waits; each RESEND it sends is answered at once with a
 * BUSY from server s, except the lost-th (counting from 1; 0: none is
 * lost).  The ticks of its RESENDs go to at[0..max); returns how many. */
static int resend_ticks_seen(struct net *net, int c, int s, uint64_t id,
			     int ticks, int lost, int *at, int max)
{
	struct sent_pkt o;
	int n = 0;

	for (int t = 1; t <= ticks; t++) {
		tick_ep(net, c);
		while (next_out(net, c, &o)) {
			if (o.pkt.type != HOMA_PKT_RESEND)
				continue;
			assert_int_equal(o.pkt.sender_id, id);
			assert_true(n < max);
			at[n++] = t;
			if (n != lost)
				inject_simple(net, c, &net->addr[s],
					      HOMA_PKT_BUSY, id ^ 1);
		}
	}
	return n;
}

/* check_resend_schedule - a fresh client sends a request (lost), then
 * resend_ticks_seen for 110 ticks loses the lost-th answer: its RESENDs
 * come exactly at the n ticks of want[]. */
static void check_resend_schedule(int lost, const int *want, int n)
{
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	int at[16];
	uint64_t id;

	id = send_req(net, c, s, 100, 3);
	assert_true(count_type(net, c, HOMA_PKT_DATA) > 0);
	assert_int_equal(resend_ticks_seen(net, c, s, id, 110, lost, at, 16),
			 n);
	for (int k = 0; k < n; k++)
		assert_int_equal(at[k], want[k]);
	assert_int_equal(epi(net->ep[c]).stats[HOMA_STAT_rpc_timeouts], 0);
	net_free(net);
}

/* The RESENDs of a client whose server holds the request and answers each
 * with BUSY: the first resend_ticks (5) ticks after the request, then
 * gaps of resend_interval (5) doubling while answered (10, 20), capped at
 * resend_max_interval (32).  A RESEND left unanswered (its BUSY lost:
 * here the third) brings the next gap back to resend_interval (loss is
 * retried soon), and the doubling starts again from there. */
static void homa_ep_timer__resend_backoff_schedule(void **state)
{
	static const int answered[] = { 5, 10, 20, 40, 72, 104 };
	static const int one_lost[] = { 5, 10, 20, 40, 45, 55, 75, 107 };

	(void)state;
	assert_int_equal(cfg.resend_ticks, 5);
	assert_int_equal(cfg.resend_interval, 5);
	assert_int_equal(cfg.resend_max_interval, 32);
	check_resend_schedule(0, answered,
			      sizeof(answered) / sizeof(answered[0]));
	check_resend_schedule(3, one_lost,
			      sizeof(one_lost) / sizeof(one_lost[0]));
}

/* A client whose request the server holds for 1 s: its RESENDs (each
 * answered by BUSY) back off from every resend_interval (5) ticks to every
 * resend_max_interval (32) ticks (at 5, 10, 20, 40, 72, ...), so about 35
 * instead of about 200, and the RPC stays alive throughout (10 timeouts'
 * worth). */
static void homa_ep_timer__probes_back_off_while_busy(void **state)
{
	int c, s;
	struct net *net = net_pair(&cfg, 8, &c, &s);
	const uint64_t *cst, *sst;
	struct homa_msg_ready m;
	uint64_t id;

	(void)state;
	cst = epi(net->ep[c]).stats;
	sst = epi(net->ep[s]).stats;
	id = hold_request(net, c, s, &m);
	advance(net, 1000000);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	print_message("1 s held: client RESENDs %llu, server BUSYs %llu\n",
		      (unsigned long long)cst[HOMA_STAT_packets_sent_RESEND],
		      (unsigned long long)sst[HOMA_STAT_packets_sent_BUSY]);
	assert_true(cst[HOMA_STAT_packets_sent_RESEND] >= 25);
	assert_true(cst[HOMA_STAT_packets_sent_RESEND] <= 40);
	assert_int_equal(cst[HOMA_STAT_rpc_timeouts], 0);
	assert_int_equal(serve_held(net, s, c, id), 0);
	step(net);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, 0);
	net_free(net);
}

/* slow_answers - n RPCs from c to s, each request held by the server's
 * application for ticks ticks (the client's RESENDs answered by BUSY)
 * before it answers; each response must arrive. */
static void slow_answers(struct net *net, int c, int s, int n, int ticks)
{
	struct homa_msg_ready m;

	for (int k = 0; k < n; k++) {
		uint64_t id = hold_request(net, c, s, &m);

		for (int t = 0; t < ticks; t++)
			tick_all(net);
		assert_int_equal(serve_held(net, s, c, id), 0);
		step(net);
		assert_int_equal(homa_ep_receive(net->ep[c], id,
						 HOMA_RECVMSG_RESPONSE, &m), 0);
		assert_int_equal(m.error, 0);
		homa_ep_return_bpages(net->ep[c], m.bpage_offsets,
				      m.num_bpages, 0, net->now);
	}
}

/* first_resend_after_slow_answers - a client whose server answered n
 * requests after ticks ticks each (probe_after_wait as given) sends one
 * more, held: the tick of its first RESEND (each answered by BUSY), and in
 * *bound its server host's homa_peer_wait_bound. */
static int first_resend_after_slow_answers(int64_t probe_after_wait, int n,
					   int ticks, uint32_t *bound)
{
	struct homa_config settings = cfg;
	struct homa_msg_ready m;
	struct net *net;
	int c, s, at[16];
	uint64_t id;

	settings.probe_after_wait = probe_after_wait;
	net = net_pair(&settings, 8, &c, &s);
	slow_answers(net, c, s, n, ticks);
	*bound = homa_peer_wait_bound(homa_peer_get(&net->ep[c]->peers,
						    &net->addr[s]));
	id = hold_request(net, c, s, &m);
	assert_true(resend_ticks_seen(net, c, s, id, 40, 0, at, 16) >= 1);
	net_free(net);
	return at[0];
}

/* A server host that answers only after 15 ticks is a slow one, not a
 * lossy one: once the client has seen that (homa_peer_wait_bound above
 * 15), its first RESEND for a new request waits that long instead of
 * resend_ticks (5), at most resend_max_interval (32); with
 * probe_after_wait 0 it comes after resend_ticks as before.  A host never
 * answered yet is probed after resend_ticks
 * (homa_ep_timer__resend_backoff_schedule). */
static void homa_ep_timer__first_probe_waits_usual_response_wait(void **s)
{
	uint32_t bound, off_bound;
	int first, first_off;

	(void)s;
	assert_int_equal(cfg.probe_after_wait, 1);
	first = first_resend_after_slow_answers(1, 8, 15, &bound);
	first_off = first_resend_after_slow_answers(0, 8, 15, &off_bound);
	print_message("wait bound %u ticks: first RESEND at tick %d "
		      "(probe_after_wait 0: %d)\n", bound, first, first_off);
	assert_true(bound >= 15);
	assert_int_equal(first, bound < 32 ? (int)bound : 32);
	assert_int_equal(first_off, 5);
}

/* A slow host's wait never puts the first RESEND past ep_backoff_cap:
 * answers after 60 ticks raise the bound above 60, the first RESEND still
 * comes at resend_max_interval (32). */
static void homa_ep_timer__first_probe_wait_capped(void **s)
{
	uint32_t bound;

	(void)s;
	assert_int_equal(first_resend_after_slow_answers(1, 3, 60, &bound),
			 32);
	assert_true(bound > 60);
}

/* resends_by_rpc - take endpoint i's output; count[k] += RESENDs it holds
 * for client RPC first_id + 2k (k < n). Returns the RESENDs counted. */
static int resends_by_rpc(struct net *net, int i, uint64_t first_id,
			  int *count, int n)
{
	uint8_t buf[64 * HOMA_DATA_HDR_LEN];
	struct homa_out out = { .buf = buf };
	struct homa_pkt p;
	int total = 0;

	while (homa_ep_output(net->ep[i], net->now, &out)) {
		uint64_t k;

		if (out.segs != 0 ||
		    homa_wire_decode(buf, out.len, &p) != HOMA_WIRE_OK ||
		    p.type != HOMA_PKT_RESEND)
			continue;
		k = (p.sender_id - first_id) / 2;
		if (p.sender_id >= first_id && k < (uint64_t)n) {
			count[k]++;
			total++;
		}
	}
	return total;
}

/* 40 silent client RPCs to one host, max_peer_probes 4: 4 RESENDs go to
 * it per tick, not 40 in the tick they are all due; those kept waiting go
 * first in the next ticks, so within 10 ticks every RPC has asked once. */
static void homa_ep_timer__probes_per_host_budget(void **s)
{
	int64_t saved_probes = cfg.max_peer_probes;
	struct net *net;
	int c, srv, count[40] = { 0 }, i, tick, total = 0;
	uint64_t first = 0;

	(void)s;
	cfg.max_peer_probes = 4;
	net = dead_pair(&cfg, &c, &srv);
	for (i = 0; i < 40; i++) {
		uint64_t id = send_req(net, c, srv, 100, (uint32_t)i);

		if (i == 0)
			first = id;
		assert_int_equal(id, first + 2 * (uint64_t)i);
	}
	step(net);
	for (tick = 0; tick < 16; tick++) {
		int n;

		net->now += 1000000;
		homa_ep_timer(net->ep[c], net->now);
		n = resends_by_rpc(net, c, first, count, 40);
		assert_true(n <= 4);
		total += n;
	}
	print_message("16 ticks: %d RESENDs to the one host\n", total);
	for (i = 0; i < 40; i++)
		assert_true(count[i] >= 1);
	cfg.max_peer_probes = saved_probes;
	net_free(net);
}

/* With the control queue half full the timer's probes wait: 40 silent
 * client RPCs and max_ctrl_queue 64 give 32 RESENDs in the tick they are
 * due, the other 8 in the next tick once the queue is drained; nothing is
 * dropped. */
static void homa_ep_timer__probes_wait_while_ctrl_queue_half_full(void **s)
{
	struct net *net;
	int c, srv, i, first;
	int64_t saved_probes;

	(void)s;
	saved_probes = cfg.max_peer_probes;
	cfg.max_ctrl_queue = 64;
	cfg.max_peer_probes = 1000;     /* only the queue limits here */
	net = dead_pair(&cfg, &c, &srv);
	for (i = 0; i < 40; i++)
		send_req(net, c, srv, 100, (uint32_t)i);
	step(net);
	for (i = 0; i < 6; i++) {
		net->now += 1000000;
		homa_ep_timer(net->ep[c], net->now);
	}
	first = count_type(net, c, HOMA_PKT_RESEND);
	assert_int_equal(first, 32);
	net->now += 1000000;
	homa_ep_timer(net->ep[c], net->now);
	assert_int_equal(count_type(net, c, HOMA_PKT_RESEND), 8);
	assert_int_equal(epi(net->ep[c]).stats
			 [HOMA_STAT_drop_ctrl_queue_full], 0);
	cfg.max_ctrl_queue = 65536;
	cfg.max_peer_probes = saved_probes;
	net_free(net);
}

/* ---- the deadline ---- */

/* homa_ep_next_timer is 0 before an endpoint has seen a time, then the
 * next tick: tick_usecs (250 here) after the first time it sees, from
 * homa_ep_timer or from a packet.  homa_ep_timer before that time does
 * nothing; a late call runs one tick and schedules the next a whole tick
 * after the call. */
static void homa_ep_timer__next_timer_deadline(void **state)
{
	struct net *net;
	struct homa_ep *ep;
	int a, b;

	(void)state;
	cfg.tick_usecs = 250;
	net = net_new(&cfg);
	a = net_add(net, 99, true, 8);
	b = net_add(net, 98, true, 8);
	ep = net->ep[a];
	assert_int_equal(homa_ep_next_timer(ep), 0);
	homa_ep_timer(ep, 5000000);
	assert_int_equal(homa_ep_next_timer(ep), 5250000);
	assert_int_equal(ep->tick, 0);
	homa_ep_timer(ep, 5249999);
	assert_int_equal(homa_ep_next_timer(ep), 5250000);
	assert_int_equal(ep->tick, 0);
	homa_ep_timer(ep, 5320000);
	assert_int_equal(ep->tick, 1);
	assert_int_equal(homa_ep_next_timer(ep), 5570000);
	net->now = 7000000;
	inject_request(net, b, 0x0b000001, 5000, 2, 100000);
	assert_int_equal(homa_ep_next_timer(net->ep[b]), 7250000);
	net_free(net);
}

/* ---- ticks behind the input ---- */

/* While the endpoint is behind its input (homa_rx_batch.behind), its
 * ticks count no silence: a client RPC on a dead network outlives many
 * timeouts and sends no RESEND; caught up, it times out timeout_ticks
 * later (ticks_behind counts the ticks that did not count). */
static void homa_ep_timer__ticks_behind_input_count_no_silence(void **state)
{
	struct homa_msg_ready m;
	struct net *net;
	uint64_t id;
	int c, s;

	(void)state;
	cfg.timeout_ticks = 10;
	cfg.alive_timeout_ticks = 10;
	net = dead_pair(&cfg, &c, &s);
	id = send_req(net, c, s, 100, 4);
	step(net);
	backlog_in(net->ep[c], true);
	tick_ep(net, c);         /* caught up before it: this one counts */
	for (int t = 0; t < 50; t++) {
		tick_ep(net, c);
		assert_int_equal(count_type(net, c, HOMA_PKT_RESEND), 0);
	}
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	assert_int_equal(epi(net->ep[c]).stats[HOMA_STAT_ticks_behind],
			 50);
	backlog_in(net->ep[c], false);
	for (int t = 0; t < 8; t++)
		tick_ep(net, c);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	tick_ep(net, c);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, ETIMEDOUT);
	net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_ep_timer__timeout_after_timeout_ticks),
		T(homa_ep_timer__client_times_out),
		T(homa_ep_timer__half_open_requests_time_out),
		T(homa_ep_timer__busy_keeps_slow_server_alive),
		T(homa_ep_timer__alive_peer_keeps_silent_rpc_waiting),
		T(homa_ep_timer__busy_answered_rpc_waits_alive_timeout),
		T(homa_ep_timer__need_ack_backs_off),
		T(homa_ep_timer__need_acks_per_host_budget),
		T(homa_ep_timer__resend_backoff_schedule),
		T(homa_ep_timer__probes_back_off_while_busy),
		T(homa_ep_timer__first_probe_waits_usual_response_wait),
		T(homa_ep_timer__first_probe_wait_capped),
		T(homa_ep_timer__probes_per_host_budget),
		T(homa_ep_timer__probes_wait_while_ctrl_queue_half_full),
		T(homa_ep_timer__next_timer_deadline),
		T(homa_ep_timer__ticks_behind_input_count_no_silence),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
