// SPDX-License-Identifier: BSD-2-Clause
/*
 * Hostile-peer tests of the sans-IO endpoint (see docs/security.md).
 *
 * A server endpoint S (10.0.0.1 port 99) and a genuine client C (10.0.0.2
 * port 40000) exchange packets through the in-memory network of
 * ep_test_util, driven by a fake clock, while an attacker hands S and C
 * packets of its own through homa_ep_input, from any address and port:
 * floods of half-open 1 MB requests, malformed packets of every kind,
 * forged control packets and forged responses.  Each test checks that
 *   - the genuine RPCs complete with exactly the bytes sent;
 *   - the counters name the reason of every drop;
 *   - memory stays bounded: RPCs (homa_ep_info.num_rpcs) and buffer-pool use
 *     within the configured limits.
 *
 * Counters and settings are named as the statistics and the configuration
 * name them (ep_counter, set); a name neither knows fails the test, so a
 * renamed counter cannot make a check pass unseen.  A check that a counter
 * stayed at 0 goes with one showing that the packets reached the code that
 * would have counted.
 *
 * HOSTILE_FILTER=pattern in the environment runs only the tests whose name
 * matches (cmocka's wildcards * and ?), e.g. HOSTILE_FILTER='forged*'.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "ep_test_util.h"

#define S 0                     /* the server */
#define C 1                     /* the genuine client */
#define S_PORT 99
#define C_PORT 40000
#define REGION_BPAGES 64        /* 4 MiB regions */
#define SEG 1424                /* DATA payload per packet (IPv4, mtu 1500) */
#define MB 1000000u

/* ---- the network ---- */

/* hostile_net - a network at time 1 s holding S and C (endpoints 0 and 1)
 * with regions of REGION_BPAGES bpages each, made with the current cfg.
 * T's teardown frees it if the test does not. */
static struct net *hostile_net(void)
{
	struct net *net = net_new(&cfg);

	net->now = 1000000000ull;
	assert_int_equal(net_add(net, S_PORT, true, REGION_BPAGES), S);
	assert_int_equal(net_add(net, C_PORT, false, REGION_BPAGES), C);
	return net;
}

/* server_silent - a filter: every packet S sends is lost (a dead
 * server). */
static bool server_silent(struct net *net, const uint8_t *pkt, size_t len,
			  int from, int to)
{
	(void)net; (void)pkt; (void)len; (void)to;
	return from != S;
}

/* set - give setting name of cfg the value; fails the test when no setting
 * has that name or the value is refused. */
static void set(const char *name, int64_t value)
{
	if (homa_config_set_value(&cfg, name, value) != 0)
		fail_msg("no setting %s, or it does not take %lld", name,
			 (long long)value);
}

/* ---- genuine RPCs ---- */

/* A genuine RPC from C to S.  The request carries its response length and
 * the response's seed in its first 8 bytes; everything else follows the
 * pattern of its seed (fill). */
struct rpc {
	uint64_t id;
	uint32_t req_len, resp_len, seed;
	bool done;
	int error;
};

/* make_msg - a malloc'd message of len bytes with seed s whose first 8
 * bytes are h0 and h1 (as far as they fit; the buffer has at least 8
 * bytes, only len of them are the message). */
static uint8_t *make_msg(uint32_t len, uint32_t s, uint32_t h0, uint32_t h1)
{
	uint8_t *p = malloc(len < 8 ? 8 : len);

	assert_non_null(p);
	fill(p, len, s);
	memcpy(p, &h0, 4);
	memcpy(p + 4, &h1, 4);
	return p;
}

/* rpc_start - C sends the request of r. */
static void rpc_start(struct net *net, struct rpc *r, uint32_t req_len,
		      uint32_t resp_len, uint32_t seed)
{
	uint8_t *msg = make_msg(req_len, seed, resp_len, seed + 1);
	struct iovec iov = { msg, req_len };

	memset(r, 0, sizeof(*r));
	r->req_len = req_len;
	r->resp_len = resp_len;
	r->seed = seed;
	assert_int_equal(homa_ep_send_request(net->ep[C], &net->addr[S], &iov,
					      1, seed, 0, &r->id, net->now), 0);
	free(msg);
}

/* same_msg - buf holds the message (len, s, h0, h1). */
static bool same_msg(const uint8_t *buf, uint32_t len, uint32_t s,
		     uint32_t h0, uint32_t h1)
{
	uint8_t *want = make_msg(len, s, h0, h1);
	bool same = memcmp(buf, want, len) == 0;

	free(want);
	return same;
}

/* serve_all - S's application: every request from C is checked and
 * answered as its header says; requests from anyone else get one byte.
 * Returns the number of requests taken. */
static int serve_all(struct net *net)
{
	struct homa_msg_ready m;
	int n = 0;

	while (homa_ep_receive(net->ep[S], 0, HOMA_RECVMSG_REQUEST, &m) == 0) {
		uint8_t *data = gather(net, S, &m);
		uint32_t resp_len = 1, seed = 0;
		uint8_t *resp;
		struct iovec iov;

		assert_int_equal(m.error, 0);
		if (m.peer.in4.sin_addr.s_addr ==
		    net->addr[C].in4.sin_addr.s_addr && m.length >= 8) {
			memcpy(&resp_len, data, 4);
			memcpy(&seed, data + 4, 4);
			assert_true(same_msg(data, m.length, seed - 1,
					     resp_len, seed));
		}
		free(data);
		assert_int_equal(homa_ep_return_bpages(net->ep[S],
			m.bpage_offsets, m.num_bpages, 0, net->now), 0);
		resp = make_msg(resp_len < 8 ? 8 : resp_len, seed, 0, seed);
		iov.iov_base = resp;
		iov.iov_len = resp_len;
		assert_int_equal(homa_ep_send_reply(net->ep[S], &m.peer, m.id,
						    &iov, 1, 0, net->now), 0);
		free(resp);
		n++;
	}
	return n;
}

/* rpc_poll - C's application: take r's response if it is there and check
 * it byte for byte.  Returns r->done. */
static bool rpc_poll(struct net *net, struct rpc *r)
{
	struct homa_msg_ready m;
	uint8_t *data;

	if (r->done)
		return true;
	if (homa_ep_receive(net->ep[C], r->id, HOMA_RECVMSG_RESPONSE, &m) != 0)
		return false;
	r->done = true;
	r->error = m.error;
	if (m.error)
		return true;
	assert_int_equal(m.id, r->id);
	assert_int_equal(m.cookie, r->seed);
	assert_int_equal(m.length, r->resp_len);
	data = gather(net, C, &m);
	assert_true(same_msg(data, m.length, r->seed + 1, 0, r->seed + 1));
	free(data);
	assert_int_equal(homa_ep_return_bpages(net->ep[C], m.bpage_offsets,
					       m.num_bpages, 0, net->now), 0);
	return true;
}

/* pump - some genuine progress: deliver up to max packets, serve, poll. */
static void pump(struct net *net, struct rpc *r, int max)
{
	deliver_some(net, max);
	serve_all(net);
	rpc_poll(net, r);
}

/* finish - run ticks until r completes (at most max_ticks); it must have
 * succeeded. */
static void finish(struct net *net, struct rpc *r, int max_ticks)
{
	int t;

	for (t = 0; !rpc_poll(net, r); t++) {
		assert_true(t < max_ticks);
		settle(net);
		serve_all(net);
		if (rpc_poll(net, r))
			break;
		tick_all(net);
	}
	assert_int_equal(r->error, 0);
}

/* wait_all_gone - run ticks until both endpoints hold no RPC (at most
 * max_ticks), answering every request. */
static void wait_all_gone(struct net *net, int max_ticks)
{
	int t = 0;

	while (epi(net->ep[S]).num_rpcs + epi(net->ep[C]).num_rpcs) {
		assert_true(++t < max_ticks);
		serve_all(net);
		tick_all(net);
	}
	/* Partly used bpages may stay leased to a core. */
	assert_true(used_bpages(net, S) <= 2);
}

/* ---- hostile packets ---- */

/* host - the address 10.9.(h >> 8).(h & 255) port port. */
static union sockaddr_in_union host(uint32_t h, uint16_t port)
{
	return host_addr(0x0a090000u | (h & 0xffff), port);
}

/* with_port - a copy of a with another port. */
static union sockaddr_in_union with_port(union sockaddr_in_union a,
					 uint16_t port)
{
	a.in4.sin_port = htons(port);
	return a;
}

/* port_of - the port of a, host order. */
static uint16_t port_of(const union sockaddr_in_union *a)
{
	return ntohs(a->in4.sin_port);
}

/* forged_data - a DATA packet (data_packet: plen pattern bytes) of
 * message sender_id, msg_len bytes long, at offset, from sport to dport,
 * announcing min(msg_len, 40000) unscheduled bytes under the default
 * cutoff version, written to buf (HOMA_DATA_HDR_LEN + plen bytes);
 * returns its length. */
static size_t forged_data(uint8_t *buf, uint16_t sport, uint16_t dport,
			  uint64_t sender_id, uint32_t msg_len,
			  uint32_t offset, uint32_t plen)
{
	struct homa_pkt p;

	memset(&p, 0, sizeof(p));
	p.sport = sport;
	p.dport = dport;
	p.sender_id = sender_id;
	p.message_length = msg_len;
	p.incoming = msg_len < 40000 ? msg_len : 40000;
	p.cutoff_version = 1;
	p.offset = offset;
	return data_packet(buf, &p, plen);
}

/* inject_data - hand endpoint i the forged_data packet (from src's port to
 * i's) as coming from src. */
static void inject_data(struct net *net, int i,
			const union sockaddr_in_union *src,
			uint64_t sender_id, uint32_t msg_len, uint32_t offset,
			uint32_t plen)
{
	uint8_t *buf = malloc(HOMA_DATA_HDR_LEN + (size_t)plen);
	size_t len;

	assert_non_null(buf);
	len = forged_data(buf, port_of(src), epi(net->ep[i]).port,
			  sender_id, msg_len, offset, plen);
	pkt_in(net->ep[i], buf, len, src, 0, net->now);
	free(buf);
}

/* half_open_len - the first packet of a request of msg_len bytes with
 * client id id from src to S. */
static void half_open_len(struct net *net, const union sockaddr_in_union *src,
			  uint64_t id, uint32_t msg_len)
{
	inject_data(net, S, src, id, msg_len, 0, SEG);
}

/* half_open - the first packet of a 1 MB request. */
static void half_open(struct net *net, const union sockaddr_in_union *src,
		      uint64_t id)
{
	half_open_len(net, src, id, MB);
}

/* ---- floods of half-open requests ---- */

/*
 * One host (10.9.0.1) sends the first packet of 3000 distinct 1 MB
 * requests, each from another source port, two per genuine packet
 * delivered, while C runs a 300 KB request with a 500 KB response.  At
 * max_peer_rpcs 8 that host holds at most 8 RPCs at any time, the excess
 * is evicted or dropped (counted), its requests hold at most
 * peer_buffer_percent of the pool (plus one message: a host holding
 * nothing may always start one), and the genuine RPC completes intact.
 */
static void flood__half_open_one_host_many_ports(void **state)
{
	const int n = 3000, peer_max = 8, pct = 25;
	uint32_t peer_share = REGION_BPAGES * pct / 100 +
			      homa_pool_bpages_needed(MB);
	struct net *net;
	struct rpc r;
	int k;

	(void)state;
	set("max_peer_rpcs", peer_max);
	set("peer_buffer_percent", pct);
	net = hostile_net();
	rpc_start(net, &r, 300000, 500000, 7);
	for (k = 0; k < n; k++) {
		union sockaddr_in_union src = host(1, (uint16_t)(1000 + k));

		half_open(net, &src, 0x10000000ull + 2ull * (uint64_t)k);
		/* The genuine request holds at most its own bpages. */
		assert_true(used_bpages(net, S) <= peer_share +
			    homa_pool_bpages_needed(300000));
		assert_true(epi(net->ep[S]).num_rpcs <=
			    (uint32_t)peer_max + 1);
		if (k % 2 == 1)
			pump(net, &r, 1);
		if (k % 200 == 199)
			tick_all(net);
	}
	print_message("one host, %d ports: evicted %" PRIu64 ", dropped (peer "
		      "limit) %" PRIu64 ", S rpcs %u, S bpages used %u\n", n,
		      ep_counter(net, S, "evicted_half_open"),
		      ep_counter(net, S, "drop_peer_limit"),
		      epi(net->ep[S]).num_rpcs, used_bpages(net, S));
	assert_true(ep_counter(net, S, "evicted_half_open") +
		    ep_counter(net, S, "drop_peer_limit") >=
		    (uint64_t)(n - peer_max));
	finish(net, &r, 500);
	wait_all_gone(net, 10 * (int)cfg.timeout_ticks);
	net_free(net);
}

/*
 * 5000 hosts each send the first packet of one 1 MB request (one host per
 * packet) while C runs its RPC.  At max_half_open 32 S never holds more
 * than 32 incomplete requests besides C's, the rest are evicted (counted),
 * and the genuine RPC completes intact.
 */
static void flood__half_open_many_hosts(void **state)
{
	const int n = 5000, max_half = 32;
	struct net *net;
	struct rpc r;
	int k;

	(void)state;
	set("max_half_open", max_half);
	net = hostile_net();
	rpc_start(net, &r, 300000, 500000, 8);
	for (k = 0; k < n; k++) {
		union sockaddr_in_union src = host((uint32_t)k + 2, 5000);

		half_open(net, &src, 0x20000000ull + 2ull * (uint64_t)k);
		assert_true(epi(net->ep[S]).num_rpcs <=
			    (uint32_t)max_half + 1);
		if (k % 2 == 1)
			pump(net, &r, 1);
		if (k % 200 == 199)
			tick_all(net);
	}
	print_message("%d hosts: evicted %" PRIu64 ", dropped (peer limit) "
		      "%" PRIu64 ", (too many peers) %" PRIu64 ", S rpcs %u\n",
		      n,
		      ep_counter(net, S, "evicted_half_open"),
		      ep_counter(net, S, "drop_peer_limit"),
		      ep_counter(net, S, "drop_too_many_peers"),
		      epi(net->ep[S]).num_rpcs);
	assert_true(ep_counter(net, S, "evicted_half_open") +
		    ep_counter(net, S, "drop_peer_limit") +
		    ep_counter(net, S, "drop_too_many_peers") >=
		    (uint64_t)(n - max_half));
	finish(net, &r, 500);
	wait_all_gone(net, 10 * (int)cfg.timeout_ticks);
	net_free(net);
}

/*
 * max_peers 16: 2000 hosts each open a request.  S never holds more RPCs
 * than its limits allow, the refused ones are counted
 * (drop_too_many_peers), the genuine RPC that started before the flood
 * completes, and once the flood's requests time out a new genuine RPC
 * (after the flood) completes too.
 */
static void flood__more_hosts_than_max_peers(void **state)
{
	const int n = 2000;
	struct net *net;
	struct rpc r;
	int k;

	(void)state;
	set("max_peers", 16);
	set("max_peer_rpcs", 2);
	net = hostile_net();
	rpc_start(net, &r, 200000, 200000, 9);
	for (k = 0; k < n; k++) {
		union sockaddr_in_union src = host((uint32_t)k + 10000, 6000);

		half_open(net, &src, 0x30000000ull + 2ull * (uint64_t)k);
		/* At most 16 peers with RPCs (each at most 2), C among
		 * them. */
		assert_true(epi(net->ep[S]).num_rpcs <= 16 * 2);
		if (k % 2 == 1)
			pump(net, &r, 1);
		if (k % 200 == 199)
			tick_all(net);
	}
	print_message("%d hosts, max_peers 16: dropped (too many peers) "
		      "%" PRIu64 ", evicted %" PRIu64 ", S rpcs %u\n", n,
		      ep_counter(net, S, "drop_too_many_peers"),
		      ep_counter(net, S, "evicted_half_open"),
		      epi(net->ep[S]).num_rpcs);
	assert_true(ep_counter(net, S, "drop_too_many_peers") +
		    ep_counter(net, S, "evicted_half_open") > 0);
	finish(net, &r, 500);
	wait_all_gone(net, 10 * (int)cfg.timeout_ticks);
	rpc_start(net, &r, 1000, 1000, 10);
	finish(net, &r, 50);
	net_free(net);
}

/*
 * With the default limits: 1000 hosts each send the first packet of one
 * 1 MB request (far below every limit, so none is refused).  S holds them
 * (at most max_rpcs); the genuine RPC (100 KB each way) still completes
 * within a few timeouts; and once the flood stops, every hostile RPC ends
 * within a few timeouts (nobody sends it anything), so S's RPC count and
 * pool return to zero.  Requests waiting for buffer space are silent too:
 * they must time out like the others.
 */
static void flood__half_open_times_out(void **state)
{
	const int n = 1000;
	struct net *net;
	struct rpc r;
	int k;

	(void)state;
	net = hostile_net();
	rpc_start(net, &r, 100000, 100000, 11);
	for (k = 0; k < n; k++) {
		union sockaddr_in_union src = host((uint32_t)k + 20000, 4000);

		half_open(net, &src, 0x40000000ull + 2ull * (uint64_t)k);
		assert_true(epi(net->ep[S]).num_rpcs <= cfg.max_rpcs);
		if (k % 10 == 9)
			pump(net, &r, 5);
	}
	deliver_some(net, 0);         /* take what S and C send now */
	finish(net, &r, 3 * (int)cfg.timeout_ticks);
	wait_all_gone(net, 5 * (int)cfg.timeout_ticks);
	net_free(net);
}

/*
 * A handful of half-open requests, under every limit: every 20 ticks, 12
 * new hosts each send the first packet of a 100 KB request (24 of them
 * alive at a time hold at most 48 of S's 64 bpages, so space is not the
 * problem).  A genuine 500 KB request needs grants all along; it must
 * complete within 30 ticks.  (Each half-open request announces 40,000
 * unscheduled bytes; if those count as granted-but-unreceived while
 * nothing arrives, ten of them use up max_incoming (400,000) and no grant
 * is sent to anyone until they time out.  A message whose sender has
 * sent nothing it was granted for resend_ticks ticks leaves the grant
 * budget and its slot, counted as grant_stalls.)
 */
static void flood__few_half_open_stall_grants(void **state)
{
	struct net *net = hostile_net();
	struct rpc r;
	int t, k, wave = 0;

	(void)state;
	rpc_start(net, &r, 500000, 100, 12);
	for (t = 0; !rpc_poll(net, &r); t++) {
		if (t % 20 == 0) {
			for (k = 0; k < 12; k++) {
				union sockaddr_in_union src =
					host(30000 + (uint32_t)wave * 12 +
					     (uint32_t)k, 4000);

				half_open_len(net, &src, 0x48000000ull +
					      2ull * (uint64_t)(wave * 12 + k),
					      100000);
			}
			wave++;
		}
		settle(net);
		serve_all(net);
		if (rpc_poll(net, &r) || t >= 30)
			break;
		tick_all(net);
	}
	print_message("500 KB request among half-open 100 KB requests: %s "
		      "after %d ticks, grant stalls %" PRIu64 "\n",
		      r.done ? "done" : "not done", t,
		      ep_counter(net, S, "grant_stalls"));
	assert_true(r.done);
	assert_int_equal(r.error, 0);
	assert_true(ep_counter(net, S, "grant_stalls") >= 12);
	net_free(net);
}

/*
 * Four hosts each send the first packet of a 1 MB request: each is under
 * its share of the pool (peer_buffer_percent), but together they hold all
 * 64 bpages of S.  They never send more.  A genuine 200 KB request arriving
 * next (it needs 4 bpages) must still complete within 30 ticks (a
 * request holding buffers while its sender stays silent must give them up
 * to one that is arriving, well before the 100-tick timeout: the timer
 * evicts a request whose client owes bytes and sent none for
 * resend_ticks + 2 * resend_interval ticks, counted as evicted_stalled).
 */
static void flood__pool_filled_by_silent_hosts(void **state)
{
	struct net *net = hostile_net();
	struct rpc r;
	int t, k;

	(void)state;
	for (k = 0; k < 4; k++) {
		union sockaddr_in_union src = host(31000 + (uint32_t)k, 4000);

		half_open(net, &src, 0x49000000ull + 2ull * (uint64_t)k);
	}
	deliver_some(net, 0);         /* take what S and C send now */
	print_message("4 half-open 1 MB requests hold %u of %u bpages\n",
		      used_bpages(net, S),
		      homa_pool_num_bpages(epi(net->ep[S]).pool));
	rpc_start(net, &r, 200000, 100, 13);
	for (t = 0; t <= 30 && !rpc_poll(net, &r); t++) {
		settle(net);
		serve_all(net);
		if (rpc_poll(net, &r))
			break;
		tick_all(net);
	}
	print_message("200 KB request with the pool held by silent hosts: %s "
		      "after %d ticks, evicted %" PRIu64 "\n",
		      r.done ? "done" : "not done", t,
		      ep_counter(net, S, "evicted_stalled"));
	assert_true(r.done);
	assert_int_equal(r.error, 0);
	assert_true(ep_counter(net, S, "evicted_stalled") >= 1);
	net_free(net);
}

/* ---- malformed packets ---- */

/* A valid encoding of each type (ports S_PORT <- C_PORT). */
static size_t valid_pkt(uint8_t type, uint8_t *buf)
{
	struct homa_pkt p;

	if (type == HOMA_PKT_DATA)
		return forged_data(buf, C_PORT, S_PORT, 0x5000, 100, 0, 100);
	memset(&p, 0, sizeof(p));
	p.type = type;
	p.sport = C_PORT;
	p.dport = S_PORT;
	p.sender_id = 0x5000;
	return homa_wire_encode_ctrl(&p, buf, HOMA_MAX_CTRL_LEN);
}

/* Every valid packet cut at every length shorter than its header is
 * dropped and counted (drop_short under 28 bytes, drop_short_type
 * above); nothing is created or sent. */
static void malformed__truncated_every_length(void **state)
{
	struct net *net = hostile_net();
	uint64_t want_short = 0, want_short_type = 0;
	uint8_t type, buf[HOMA_DATA_HDR_LEN + 100];

	(void)state;
	for (type = HOMA_PKT_DATA; type <= HOMA_PKT_ACK; type++) {
		size_t full = valid_pkt(type, buf), hdr, len;

		hdr = type == HOMA_PKT_DATA ? HOMA_DATA_HDR_LEN : full;
		assert_true(full >= HOMA_COMMON_HDR_LEN);
		for (len = 0; len < hdr; len++) {
			pkt_in(net->ep[S], buf, len, &net->addr[C], 0,
				      net->now);
			pkt_in(net->ep[C], buf, len, &net->addr[S], 0,
				      net->now);
			if (len < HOMA_COMMON_HDR_LEN)
				want_short++;
			else
				want_short_type++;
		}
	}
	assert_int_equal(ep_counter(net, S, "drop_short"), want_short);
	assert_int_equal(ep_counter(net, S, "drop_short_type"),
			 want_short_type);
	assert_int_equal(ep_counter(net, C, "drop_short"), want_short);
	assert_int_equal(ep_counter(net, C, "drop_short_type"),
			 want_short_type);
	assert_int_equal(epi(net->ep[S]).num_rpcs, 0);
	assert_int_equal(deliver_all(net) + net->drops, 0);
	net_free(net);
}

/* Every type byte outside 0x10..0x18 is dropped as drop_bad_type. */
static void malformed__unknown_types(void **state)
{
	struct net *net = hostile_net();
	uint8_t buf[HOMA_MAX_CTRL_LEN];
	uint64_t n = 0;
	int t;

	(void)state;
	valid_pkt(HOMA_PKT_ACK, buf);
	for (t = 0; t < 256; t++) {
		if (t >= HOMA_PKT_DATA && t <= HOMA_PKT_ACK)
			continue;
		buf[11] = (uint8_t)t;
		pkt_in(net->ep[S], buf, sizeof(buf), &net->addr[C], 0,
			      net->now);
		n++;
	}
	assert_int_equal(ep_counter(net, S, "drop_bad_type"), n);
	assert_int_equal(epi(net->ep[S]).num_rpcs, 0);
	net_free(net);
}

/*
 * DATA with impossible fields, each counted under its reason, while a
 * genuine RPC runs: offsets at or past the message end, payloads running
 * past it, an empty payload, message_length 0 and 1,000,001 and 2^32 - 1,
 * and (for an existing RPC) another message_length.  A payload larger
 * than one packet's (60,000 bytes in one datagram) is still a valid
 * message and is stored intact.
 */
static void malformed__data_fields(void **state)
{
	struct net *net = hostile_net();
	uint8_t *buf = malloc(HOMA_DATA_HDR_LEN + 60000);
	union sockaddr_in_union evil = host(5, 7000);
	struct homa_msg_ready m;
	struct rpc r;
	size_t len;
	uint8_t *data;

	(void)state;
	assert_non_null(buf);
	rpc_start(net, &r, 50000, 50000, 12);
	pump(net, &r, 3);
	/* Offsets: at the end, past it, far past it; payload past the end;
	 * empty payload. */
	inject_data(net, S, &evil, 0x600, 1000, 1000, 10);
	inject_data(net, S, &evil, 0x600, 1000, 0xfffffff0u, 10);
	inject_data(net, S, &evil, 0x600, 1000, 995, 10);
	inject_data(net, S, &evil, 0x600, 1000, 0, 0);
	assert_int_equal(ep_counter(net, S, "drop_bad_offset"), 4);
	/* message_length 0, just over the maximum, and 2^32 - 1. */
	inject_data(net, S, &evil, 0x602, 0, 0, 10);
	inject_data(net, S, &evil, 0x602, MB + 1, 0, 10);
	inject_data(net, S, &evil, 0x602, 0xffffffffu, 0, 10);
	assert_int_equal(ep_counter(net, S, "drop_bad_length"), 3);
	assert_int_equal(epi(net->ep[S]).num_rpcs, 1);   /* C's only */
	/* A second packet claiming another length for the same RPC. */
	inject_data(net, S, &evil, 0x604, 5000, 0, 1000);
	inject_data(net, S, &evil, 0x604, 6000, 1000, 1000);
	assert_int_equal(ep_counter(net, S, "drop_length_mismatch"), 1);
	/* One 60,000-byte datagram carrying a whole request. */
	len = forged_data(buf, 7000, S_PORT, 0x606, 60000, 0, 60000);
	fill(buf + HOMA_DATA_HDR_LEN, 60000, 99);
	pkt_in(net->ep[S], buf, len, &evil, 0, net->now);
	assert_int_equal(homa_ep_receive(net->ep[S], 0, HOMA_RECVMSG_REQUEST,
					 &m), 0);
	assert_int_equal(m.length, 60000);
	assert_int_equal(m.id, 0x607);
	data = gather(net, S, &m);
	assert_memory_equal(data, buf + HOMA_DATA_HDR_LEN, 60000);
	free(data);
	assert_int_equal(homa_ep_return_bpages(net->ep[S], m.bpage_offsets,
					       m.num_bpages, 0, net->now), 0);
	/* The genuine RPC is untouched. */
	finish(net, &r, 200);
	free(buf);
	net_free(net);
}

/*
 * An ACK whose num_acks says 65535 is read as 5 entries (the packet holds
 * 5); it ends no RPC of C at S (C never sent it: it comes from another
 * address), and the server RPC completes, ended by C's own ACK.
 */
static void malformed__ack_claiming_65535_entries(void **state)
{
	struct net *net = hostile_net();
	union sockaddr_in_union evil = host(6, C_PORT);
	uint8_t buf[HOMA_MAX_CTRL_LEN];
	struct homa_pkt p;
	struct rpc r;
	int k;

	(void)state;
	rpc_start(net, &r, 3000, 200000, 13);
	settle(net);
	assert_int_equal(serve_all(net), 1);
	memset(&p, 0, sizeof(p));
	p.type = HOMA_PKT_ACK;
	p.sport = C_PORT;
	p.dport = S_PORT;
	p.sender_id = r.id;
	p.num_acks = HOMA_MAX_ACKS;
	for (k = 0; k < HOMA_MAX_ACKS; k++) {
		p.acks[k].client_id = r.id;
		p.acks[k].server_port = S_PORT;
	}
	assert_int_equal(homa_wire_encode_ctrl(&p, buf, sizeof(buf)),
			 HOMA_ACK_HDR_LEN);
	buf[28] = 0xff;
	buf[29] = 0xff;
	for (k = 0; k < 100; k++)
		pkt_in(net->ep[S], buf, sizeof(buf), &evil, 0,
			      net->now);
	/* Every length of it up to the full 80 bytes, too. */
	for (k = 0; k < HOMA_ACK_HDR_LEN; k++)
		pkt_in(net->ep[S], buf, (size_t)k, &evil, 0, net->now);
	assert_int_equal(ep_counter(net, S, "packets_rcvd_ACK"), 100);
	assert_int_equal(ep_counter(net, S, "server_rpcs_acked"), 0);
	assert_int_equal(epi(net->ep[S]).num_rpcs, 1);
	finish(net, &r, 200);
	/* C's own ACK is what ends the server RPC. */
	wait_all_gone(net, 10 * (int)cfg.timeout_ticks);
	assert_int_equal(ep_counter(net, S, "server_rpcs_acked"), 1);
	net_free(net);
}

/*
 * GRANTs to C's 1 MB request with offsets beyond the message (2^32 - 1)
 * and priorities beyond 7, from the genuine server address: the grant is
 * clamped to the message, packets keep priorities 0..7, and the RPC
 * completes intact.
 */
static void malformed__grant_beyond_message(void **state)
{
	struct net *net = hostile_net();
	struct homa_pkt p;
	struct rpc r;

	(void)state;
	rpc_start(net, &r, MB, 1000, 14);
	memset(&p, 0, sizeof(p));
	p.type = HOMA_PKT_GRANT;
	p.sender_id = r.id ^ 1;
	p.offset = 0xffffffffu;
	p.priority = 200;
	inject_pkt(net, C, &net->addr[S], &p);
	finish(net, &r, 200);
	/* C sent each packet of the request once, and every one arrived
	 * (the network checked that each had a priority 0..7). */
	assert_int_equal(ep_counter(net, C, "packets_sent_DATA"),
			 (MB + SEG - 1) / SEG);
	assert_int_equal(ep_counter(net, C, "packets_sent_DATA"),
			 ep_counter(net, S, "packets_rcvd_DATA"));
	net_free(net);
}

/*
 * RESENDs with huge ranges ((0, 2^32 - 2), (2^32 - 16, 256), (5,000,000,
 * 10)) and priority 9 from the genuine server for C's 200 KB request:
 * C sends nothing past the message and retransmits no more packets than
 * the message has; the RPC completes.  The same RESENDs from a wrong port
 * are dropped (drop_wrong_peer) without any DATA sent.  (C's output is
 * taken with its pacer's clock running, so that the checks see every
 * packet the RESENDs cause.)
 */
static void malformed__resend_huge_ranges(void **state)
{
	static const uint32_t ranges[][2] = { { 0, 0xfffffffeu },
		{ 0xfffffff0u, 256 }, { 5000000, 10 },
		{ 199999, 0xffffffffu } };
	struct net *net = hostile_net();
	union sockaddr_in_union wrong = with_port(net->addr[S], S_PORT + 1);
	struct sent_pkt sent;
	struct homa_pkt p;
	struct rpc r;
	size_t k;

	(void)state;
	rpc_start(net, &r, 200000, 1000, 15);
	deliver_some(net, 20);
	while (next_out_paced(net, C, &sent))        /* all C may send */
		;
	/* From a wrong port first: no effect. */
	for (k = 0; k < sizeof(ranges) / sizeof(ranges[0]); k++) {
		memset(&p, 0, sizeof(p));
		p.type = HOMA_PKT_RESEND;
		p.sender_id = r.id ^ 1;
		p.offset = ranges[k][0];
		p.length = ranges[k][1];
		p.priority = 9;
		inject_pkt(net, C, &wrong, &p);
	}
	assert_int_equal(ep_counter(net, C, "drop_wrong_peer"),
			 sizeof(ranges) / sizeof(ranges[0]));
	while (next_out_paced(net, C, &sent))
		assert_false(sent.pkt.type == HOMA_PKT_DATA &&
			     sent.pkt.retransmit);
	assert_int_equal(ep_counter(net, C, "resent_packets"), 0);
	/* From the genuine server: DATA only inside the message. */
	for (k = 0; k < sizeof(ranges) / sizeof(ranges[0]); k++) {
		memset(&p, 0, sizeof(p));
		p.type = HOMA_PKT_RESEND;
		p.sender_id = r.id ^ 1;
		p.offset = ranges[k][0];
		p.length = ranges[k][1];
		p.priority = 9;
		inject_pkt(net, C, &net->addr[S], &p);
	}
	while (next_out_paced(net, C, &sent)) {
		assert_true(sent.priority < 8);
		if (sent.pkt.type == HOMA_PKT_DATA) {
			assert_true(sent.pkt.offset < 200000);
			assert_true(sent.pkt.payload_len <=
				    200000 - sent.pkt.offset);
		}
	}
	/* The genuine RESENDs were obeyed (so the count above was 0 for
	 * want of a retransmission, not of a counter). */
	assert_true(ep_counter(net, C, "resent_packets") > 0);
	assert_true(ep_counter(net, C, "resent_packets") <= 200000 / SEG + 1);
	finish(net, &r, 200);
	net_free(net);
}

/*
 * CUTOFFS from the genuine server with cutoffs increasing with priority
 * (the wrong way round), with versions 1..50, then with every cutoff 0:
 * C keeps sending at priorities 0..7 and its RPCs of several sizes
 * complete.
 */
static void malformed__cutoffs_increasing(void **state)
{
	static const uint32_t sizes[] = { 100, 3000, 20000, 300000 };
	struct net *net = hostile_net();
	struct homa_pkt p;
	struct rpc r;
	int v, k;
	size_t i;

	(void)state;
	for (v = 1; v <= 51; v++) {
		memset(&p, 0, sizeof(p));
		p.type = HOMA_PKT_CUTOFFS;
		p.sender_id = 0x777;
		for (k = 0; k < HOMA_NUM_PRIORITIES; k++)
			p.unsched_cutoffs[k] = v <= 50 ?
				(uint32_t)(k + 1) * (uint32_t)v * 1000u : 0;
		p.cutoff_version = (uint16_t)v;
		inject_pkt(net, C, &net->addr[S], &p);
	}
	assert_int_equal(ep_counter(net, C, "cutoffs_updates"), 51);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		rpc_start(net, &r, sizes[i], sizes[i], 16 + (uint32_t)i);
		finish(net, &r, 200);       /* priorities 0..7: checked */
	}
	net_free(net);
}

/* FREEZE (the kernel's debugging aid) is counted and otherwise ignored,
 * from anyone, whatever id it names. */
static void malformed__freeze_ignored(void **state)
{
	struct net *net = hostile_net();
	union sockaddr_in_union evil = host(7, 1);
	struct rpc r;
	int k;

	(void)state;
	rpc_start(net, &r, 100000, 100000, 20);
	deliver_some(net, 10);
	for (k = 0; k < 50; k++) {
		inject_simple(net, S, &net->addr[C], HOMA_PKT_FREEZE, r.id);
		inject_simple(net, S, &evil, HOMA_PKT_FREEZE, (uint64_t)k);
		inject_simple(net, C, &net->addr[S], HOMA_PKT_FREEZE, r.id ^ 1);
	}
	assert_int_equal(ep_counter(net, S, "packets_rcvd_FREEZE"), 100);
	assert_int_equal(ep_counter(net, C, "packets_rcvd_FREEZE"), 50);
	finish(net, &r, 200);
	assert_int_equal(ep_counter(net, S, "packets_sent_FREEZE") +
			 ep_counter(net, C, "packets_sent_FREEZE"), 0);
	net_free(net);
}

/* ---- forgeries aimed at a live RPC ---- */

/*
 * While C's 500 KB request is half sent and S holds C's request, forged
 * GRANT, RESEND, BUSY, RPC_UNKNOWN, NEED_ACK and a forged response (DATA)
 * arrive at C from the server's host with a wrong port and from another
 * host with the server's port; forged ACK and RPC_UNKNOWN arrive at S for
 * C's RPC from C's host with a wrong port and from another host.  Each is
 * dropped and counted (drop_wrong_peer at C; at S the server RPC is found
 * by address and port, so they name no RPC); the RPC completes intact and
 * C's own ACK ends it at S.
 */
static void forged__control_from_wrong_source(void **state)
{
	struct net *net = hostile_net();
	union sockaddr_in_union bad_c[2], bad_s[2];
	struct homa_pkt p;
	struct rpc r;
	uint64_t wrong_before, acked_before, acks_before;
	int k, round;

	(void)state;
	bad_c[0] = with_port(net->addr[S], S_PORT + 1);
	bad_c[1] = with_port(host(8, 0), S_PORT);
	bad_s[0] = with_port(net->addr[C], C_PORT + 1);
	bad_s[1] = with_port(host(9, 0), C_PORT);
	rpc_start(net, &r, 500000, 500000, 21);
	for (round = 0; round < 40; round++) {
		pump(net, &r, 20);
		if (r.done)
			break;
		wrong_before = ep_counter(net, C, "drop_wrong_peer");
		for (k = 0; k < 2; k++) {
			memset(&p, 0, sizeof(p));
			p.type = HOMA_PKT_GRANT;
			p.sender_id = r.id ^ 1;
			p.offset = 500000;
			p.priority = 7;
			inject_pkt(net, C, &bad_c[k], &p);
			p.type = HOMA_PKT_RESEND;
			p.offset = 0;
			p.length = HOMA_RESEND_ALL;
			inject_pkt(net, C, &bad_c[k], &p);
			inject_simple(net, C, &bad_c[k], HOMA_PKT_BUSY,
				      r.id ^ 1);
			inject_simple(net, C, &bad_c[k], HOMA_PKT_RPC_UNKNOWN,
				      r.id ^ 1);
			inject_simple(net, C, &bad_c[k], HOMA_PKT_NEED_ACK,
				      r.id ^ 1);
			inject_data(net, C, &bad_c[k], r.id ^ 1, 500000, 0,
				    SEG);
		}
		/* All 12 reached C's check of the sender (so no restart
		 * below is for want of an RPC_UNKNOWN). */
		assert_int_equal(ep_counter(net, C, "drop_wrong_peer"),
				 wrong_before + 12);
		acked_before = ep_counter(net, S, "server_rpcs_acked");
		acks_before = ep_counter(net, S, "packets_rcvd_ACK");
		for (k = 0; k < 2; k++) {
			memset(&p, 0, sizeof(p));
			p.type = HOMA_PKT_ACK;
			p.sender_id = r.id;
			p.num_acks = 1;
			p.acks[0].client_id = r.id;
			p.acks[0].server_port = S_PORT;
			inject_pkt(net, S, &bad_s[k], &p);
			inject_simple(net, S, &bad_s[k], HOMA_PKT_RPC_UNKNOWN,
				      r.id);
		}
		/* Both ACKs were read as ACKs, and ended nothing. */
		assert_int_equal(ep_counter(net, S, "packets_rcvd_ACK"),
				 acks_before + 2);
		assert_int_equal(ep_counter(net, S, "server_rpcs_acked"),
				 acked_before);
		if (round % 4 == 3)
			tick_all(net);
	}
	assert_int_equal(ep_counter(net, C, "rpc_restarts"), 0);
	finish(net, &r, 200);
	/* C's own ACK is what ends the server RPC. */
	wait_all_gone(net, 10 * (int)cfg.timeout_ticks);
	assert_int_equal(ep_counter(net, S, "server_rpcs_acked"), 1);
	net_free(net);
}

/*
 * Blind forgeries: GRANT, RESEND, BUSY, RPC_UNKNOWN, NEED_ACK, ACK and
 * response DATA with 2000 guessed ids (none live) from the genuine peers'
 * own addresses and ports: they name no RPC and are counted; the genuine
 * RPC completes intact.
 */
static void forged__blind_guesses(void **state)
{
	struct net *net = hostile_net();
	struct homa_pkt p;
	struct rpc r;
	uint64_t id;
	int k;

	(void)state;
	rpc_start(net, &r, 200000, 200000, 22);
	for (k = 0; k < 2000; k++) {
		/* Even guesses far from C's ids (which start at 2000). */
		id = 0x123456780ull + 2ull * (uint64_t)k;
		if (id == r.id)
			continue;
		memset(&p, 0, sizeof(p));
		p.type = HOMA_PKT_GRANT;
		p.sender_id = id ^ 1;
		p.offset = 200000;
		inject_pkt(net, C, &net->addr[S], &p);
		inject_simple(net, C, &net->addr[S], HOMA_PKT_BUSY, id ^ 1);
		inject_simple(net, C, &net->addr[S], HOMA_PKT_RPC_UNKNOWN,
			      id ^ 1);
		inject_data(net, C, &net->addr[S], id ^ 1, 1000, 0, 1000);
		inject_simple(net, S, &net->addr[C], HOMA_PKT_RPC_UNKNOWN, id);
		if (k % 10 == 0)
			pump(net, &r, 10);
	}
	assert_true(ep_counter(net, C, "drop_unknown_rpc") >= 4 * 2000 - 4);
	assert_int_equal(epi(net->ep[C]).num_rpcs, r.done ? 0 : 1);
	finish(net, &r, 200);
	net_free(net);
}

/*
 * A client whose server went silent must time out even while forged BUSY
 * packets (from the server's host, wrong port) arrive every tick: only the
 * genuine server may keep an RPC alive.
 */
static void forged__busy_cannot_keep_rpc_alive(void **state)
{
	struct net *net = hostile_net();
	union sockaddr_in_union wrong = with_port(net->addr[S], S_PORT + 7);
	struct rpc r;
	int t;

	(void)state;
	net->filter = server_silent;
	rpc_start(net, &r, 1000, 1000, 23);
	for (t = 0; t < 2 * cfg.timeout_ticks && !rpc_poll(net, &r); t++) {
		inject_simple(net, C, &wrong, HOMA_PKT_BUSY, r.id ^ 1);
		tick_all(net);
	}
	assert_true(r.done);
	assert_int_equal(r.error, ETIMEDOUT);
	assert_true(t <= cfg.timeout_ticks + 2);
	assert_true(ep_counter(net, C, "drop_wrong_peer") > 0);
	net_free(net);
}

/*
 * A forged GRANT from a wrong port for C's 1 MB request adds no DATA
 * beyond the unscheduled bytes: the first burst is exactly
 * ceil(40000 / 1424) packets.
 */
static void forged__grant_sends_nothing_more(void **state)
{
	struct net *net;
	union sockaddr_in_union wrong;
	struct homa_pkt p;
	struct rpc r;

	(void)state;
	cfg.flags = HOMA_FLAG_DONT_THROTTLE;
	net = hostile_net();
	wrong = with_port(net->addr[S], S_PORT + 1);
	rpc_start(net, &r, MB, 10, 24);
	memset(&p, 0, sizeof(p));
	p.type = HOMA_PKT_GRANT;
	p.sender_id = r.id ^ 1;
	p.offset = MB;
	inject_pkt(net, C, &wrong, &p);
	assert_int_equal(ep_counter(net, C, "drop_wrong_peer"), 1);
	assert_int_equal(count_type(net, C, HOMA_PKT_DATA),
			 (40000 + SEG - 1) / SEG);
	net_free(net);
}

/*
 * A DATA packet from the genuine client's address carrying only part of
 * a packet's range (bytes 1424..1429 of a 5000-byte request) arrives
 * before the real packet.  The real packet then overlaps received bytes
 * and is a duplicate, and so is every retransmission (they keep the
 * original boundaries).  Whatever the core does with it, the RPC must not
 * live forever: it completes, or fails, within a few timeouts.  The
 * current core livelocks: S's RESENDs and C's RESENDs (answered by BUSY)
 * keep both RPCs' silence counts at 0 forever.
 */
static void forged__partial_packet_from_genuine_source(void **state)
{
	struct net *net = hostile_net();
	struct rpc r;
	int t;

	(void)state;
	rpc_start(net, &r, 5000, 100, 25);
	inject_data(net, S, &net->addr[C], r.id, 5000, SEG, 6);
	for (t = 0; t < 5 * cfg.timeout_ticks && !rpc_poll(net, &r); t++) {
		serve_all(net);
		tick_all(net);
	}
	print_message("partial packet: %s after %d ticks (S duplicates "
		      "%" PRIu64 ", S rpcs %u)\n",
		      r.done ? "ended" : "still alive", t,
		      ep_counter(net, S, "drop_duplicate_data"),
		      epi(net->ep[S]).num_rpcs);
	assert_true(r.done);
	net_free(net);
}

/*
 * A request larger than the server's whole buffer region can never be
 * given buffers.  It must not wait forever: the RPC ends (both sides)
 * within a few timeouts.  (S has 2 bpages here, 128 KiB; the request is
 * 200,000 bytes.)
 */
static void memory__request_larger_than_region(void **state)
{
	struct net *net = hostile_net();
	struct homa_ep_params p = { &cfg, AF_INET, S_PORT, true, 1, 2, 0, NULL,
				    NULL };
	struct rpc r;
	int t;

	(void)state;
	/* Replace S by one with a 2-bpage region. */
	homa_ep_destroy(net->ep[S]);
	net->ep[S] = homa_ep_create(&p);
	assert_non_null(net->ep[S]);
	assert_int_equal(homa_pool_set_region(epi(net->ep[S]).pool,
		net->region[S], 2 * HOMA_BPAGE_SIZE), 0);
	net->bpages[S] = 2;
	rpc_start(net, &r, 200000, 100, 26);
	for (t = 0; t < 5 * cfg.timeout_ticks && !rpc_poll(net, &r); t++) {
		serve_all(net);
		tick_all(net);
	}
	print_message("request > region: %s after %d ticks (S rpcs %u, "
		      "buffer_waits %" PRIu64 ")\n",
		      r.done ? "ended" : "still alive", t,
		      epi(net->ep[S]).num_rpcs,
		      ep_counter(net, S, "buffer_waits"));
	assert_true(r.done);
	assert_int_not_equal(r.error, 0);
	for (t = 0; t < 5 * cfg.timeout_ticks &&
	     epi(net->ep[S]).num_rpcs > 0; t++)
		tick_all(net);
	assert_int_equal(epi(net->ep[S]).num_rpcs, 0);
	net_free(net);
}

/*
 * A client asks for a 500 KB response and vanishes (its application
 * aborts the RPC; a hostile client would simply stop answering) while the
 * response waits for grants.  S's RPC must not live forever: it ends
 * within a few timeouts, and S's memory returns to zero.
 */
static void memory__client_vanishes_during_response(void **state)
{
	struct net *net = hostile_net();
	struct rpc r;
	int t;

	(void)state;
	rpc_start(net, &r, 1000, 500000, 27);
	settle(net);
	assert_int_equal(serve_all(net), 1);
	deliver_some(net, 10);                  /* part of the response */
	assert_int_equal(homa_ep_abort(net->ep[C], r.id, 0), 0);
	for (t = 0; t < 5 * cfg.timeout_ticks &&
	     epi(net->ep[S]).num_rpcs > 0; t++)
		tick_all(net);
	print_message("server RPC of a vanished client: %s after %d ticks\n",
		      epi(net->ep[S]).num_rpcs ? "alive" : "gone", t);
	assert_int_equal(epi(net->ep[S]).num_rpcs, 0);
	assert_int_equal(epi(net->ep[C]).num_rpcs, 0);
	net_free(net);
}

/*
 * All of it at once, repeated: every 50 genuine packets, a burst of
 * half-open requests, malformed packets and forgeries; 20 genuine RPCs of
 * mixed sizes one after another must all complete intact, and S's RPCs
 * and pool stay within max_rpcs and the region.  (The flood is far faster
 * than max_half_open per tick: a genuine request, whose client sends more
 * than one packet, must not be the one evicted.)
 */
static void mixed__everything_while_rpcs_run(void **state)
{
	static const uint32_t sizes[] = { 1, 100, 1424, 1425, 40000, 65537,
		200000, MB };
	struct net *net;
	uint8_t buf[HOMA_DATA_HDR_LEN + SEG];
	uint32_t max_rpcs_seen = 0, hostile = 0;
	int i;

	(void)state;
	set("max_half_open", 64);
	set("max_peer_rpcs", 16);
	net = hostile_net();
	for (i = 0; i < 20; i++) {
		struct rpc r;
		int steps = 0;

		rpc_start(net, &r, sizes[i % 8] < 8 ? 8 : sizes[i % 8],
			  sizes[(i * 3 + 1) % 8], 100 + (uint32_t)i);
		while (!rpc_poll(net, &r)) {
			union sockaddr_in_union src =
				host(100 + hostile % 300,
				     (uint16_t)(3000 + hostile % 7));
			size_t len;
			int k;

			for (k = 0; k < 10; k++, hostile++) {
				half_open(net, &src, 0x50000000ull +
					  2ull * hostile);
				len = forged_data(buf, port_of(&src), S_PORT,
						  0x50000000ull +
						  2ull * hostile,
						  hostile % 3 ? MB + 1 : 0, 0,
						  10);
				pkt_in(net->ep[S], buf, len, &src, 0,
					      net->now);
				pkt_in(net->ep[S], buf, hostile % 60,
					      &src, 0, net->now);
				inject_simple(net, C, &src,
					      HOMA_PKT_RPC_UNKNOWN, r.id ^ 1);
				inject_simple(net, S, &src, HOMA_PKT_ACK, r.id);
			}
			if (epi(net->ep[S]).num_rpcs > max_rpcs_seen)
				max_rpcs_seen = epi(net->ep[S]).num_rpcs;
			assert_true(epi(net->ep[S]).num_rpcs <=
				    cfg.max_rpcs);
			deliver_some(net, 50);
			serve_all(net);
			if (++steps % 20 == 0)
				tick_all(net);
			/* 200 ticks (2 timeouts) per RPC at most. */
			assert_true(steps < 4000);
		}
		assert_int_equal(r.error, 0);
	}
	print_message("mixed: %u hostile bursts, S held at most %u RPCs, "
		      "evicted %" PRIu64 "\n", hostile, max_rpcs_seen,
		      ep_counter(net, S, "evicted_half_open"));
	/* 64 half-open, C's request, and C's earlier server RPCs whose
	 * acks may still be on their way. */
	assert_true(max_rpcs_seen <= 64 + 4);
	wait_all_gone(net, 60 * (int)cfg.timeout_ticks);
	net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(flood__half_open_one_host_many_ports),
		T(flood__half_open_many_hosts),
		T(flood__more_hosts_than_max_peers),
		T(flood__half_open_times_out),
		T(flood__few_half_open_stall_grants),
		T(flood__pool_filled_by_silent_hosts),
		T(malformed__truncated_every_length),
		T(malformed__unknown_types),
		T(malformed__data_fields),
		T(malformed__ack_claiming_65535_entries),
		T(malformed__grant_beyond_message),
		T(malformed__resend_huge_ranges),
		T(malformed__cutoffs_increasing),
		T(malformed__freeze_ignored),
		T(forged__control_from_wrong_source),
		T(forged__blind_guesses),
		T(forged__busy_cannot_keep_rpc_alive),
		T(forged__grant_sends_nothing_more),
		T(forged__partial_packet_from_genuine_source),
		T(memory__request_larger_than_region),
		T(memory__client_vanishes_during_response),
		T(mixed__everything_while_rpcs_run),
	};

	/* HOSTILE_FILTER=pattern runs only the matching tests (cmocka's
	 * wildcards). */
	if (getenv("HOSTILE_FILTER"))
		cmocka_set_test_filter(getenv("HOSTILE_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
