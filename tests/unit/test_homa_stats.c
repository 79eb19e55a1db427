// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_stats.c, the engine's counters: their names
 * (homa_stat_name, in range and out of it), and how the endpoint counts
 * with them (homa_ep_info.stats): every packet sent and received by type, and
 * every dropped packet under exactly its reason.  Counters are looked up
 * by name where the name is what is tested.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "ep_test_util.h"

/* stat_named - the counter whose homa_stat_name is name, or
 * HOMA_STAT_COUNT when there is none. */
static enum homa_stat stat_named(const char *name)
{
	int k = 0;

	while (k < HOMA_STAT_COUNT &&
	       strcmp(homa_stat_name((enum homa_stat)k), name) != 0)
		k++;
	return (enum homa_stat)k;
}

/* type_stat - the counter prefix ("packets_sent_" or "packets_rcvd_")
 * followed by the name of packet type; it must exist. */
static enum homa_stat type_stat(const char *prefix, uint8_t type)
{
	char name[64];
	enum homa_stat k;

	snprintf(name, sizeof(name), "%s%s", prefix,
		 homa_wire_type_name(type));
	k = stat_named(name);
	assert_true(k < HOMA_STAT_COUNT);
	return k;
}

/* ---- names ---- */

/* is_identifier - name is a non-empty C identifier. */
static bool is_identifier(const char *name)
{
	if (!name[0] || (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (const char *p = name; *p; p++)
		if (!(*p == '_' || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			return false;
	return true;
}

/* Every counter has a name: an identifier, not "unknown", the same as its
 * enumerator's (spot checks at both ends), and no two the same. */
static void homa_stat_name__every_counter_named(void **state)
{
	(void)state;
	for (int k = 0; k < HOMA_STAT_COUNT; k++) {
		const char *name = homa_stat_name((enum homa_stat)k);

		assert_non_null(name);
		assert_true(is_identifier(name));
		assert_string_not_equal(name, "unknown");
		for (int j = 0; j < k; j++)
			assert_string_not_equal(
				name, homa_stat_name((enum homa_stat)j));
		assert_int_equal(stat_named(name), k);
	}
	assert_string_equal(homa_stat_name(HOMA_STAT_packets_sent_DATA),
			    "packets_sent_DATA");
	assert_string_equal(homa_stat_name(HOMA_STAT_drop_short),
			    "drop_short");
	assert_string_equal(homa_stat_name(HOMA_STAT_COUNT - 1),
			    "copy_faults");
}

/* The engine counts packets at HOMA_STAT_packets_sent_DATA (and _rcvd_)
 * plus the type's distance from DATA: the names there must follow
 * homa_wire_type_name for all nine types. */
static void homa_stat_name__type_counters_in_type_order(void **state)
{
	(void)state;
	for (uint8_t t = HOMA_PKT_DATA; t <= HOMA_PKT_ACK; t++) {
		int d = t - HOMA_PKT_DATA;

		assert_int_equal(type_stat("packets_sent_", t),
				 HOMA_STAT_packets_sent_DATA + d);
		assert_int_equal(type_stat("packets_rcvd_", t),
				 HOMA_STAT_packets_rcvd_DATA + d);
	}
}

/* Out of range (HOMA_STAT_COUNT, far beyond, negative) the name is
 * "unknown", never NULL; no name is found for it. */
static void homa_stat_name__out_of_range(void **state)
{
	(void)state;
	assert_string_equal(homa_stat_name(HOMA_STAT_COUNT), "unknown");
	assert_string_equal(homa_stat_name((enum homa_stat)100000), "unknown");
	assert_string_equal(homa_stat_name((enum homa_stat)-1), "unknown");
	assert_int_equal(stat_named("no_such_counter"), HOMA_STAT_COUNT);
}

/* ---- packets by type ---- */

/* H - the host the single packets of these tests come from. */
static union sockaddr_in_union from_h(void)
{
	return host_addr(0x0b000001, 5000);
}

/* encoded - a valid control packet of type from port 5000 to dport naming
 * sender_id 2, in buf (HOMA_MAX_CTRL_LEN bytes); returns its length. */
static size_t encoded(uint8_t type, uint16_t dport, uint8_t *buf)
{
	struct homa_pkt p;
	size_t len;

	memset(&p, 0, sizeof(p));
	p.type = type;
	p.sport = 5000;
	p.dport = dport;
	p.sender_id = 2;
	len = homa_wire_encode_ctrl(&p, buf, HOMA_MAX_CTRL_LEN);
	assert_true(len >= HOMA_COMMON_HDR_LEN);
	return len;
}

/* Each packet received is counted under its type (valid packets, whether
 * or not they name an RPC): one of each type, one count each; a fresh
 * endpoint counts nothing. */
static void homa_ep_stats__received_by_type(void **state)
{
	union sockaddr_in_union h = from_h();
	int s;
	struct net *net = net_server(&cfg, 8, &s);
	const uint64_t *st = epi(net->ep[s]).stats;
	uint8_t buf[HOMA_MAX_CTRL_LEN];

	(void)state;
	for (int k = 0; k < HOMA_STAT_COUNT; k++)
		assert_int_equal(st[k], 0);
	inject_request(net, s, 0x0b000001, 5000, 2, 100000);
	for (uint8_t t = HOMA_PKT_GRANT; t <= HOMA_PKT_ACK; t++)
		pkt_in(net->ep[s], buf, encoded(t, 99, buf), &h, 0,
			      net->now);
	for (uint8_t t = HOMA_PKT_DATA; t <= HOMA_PKT_ACK; t++)
		assert_int_equal(st[type_stat("packets_rcvd_", t)], 1);
	net_free(net);
}

/* Packets of each type that each endpoint sent (tallied as they pass) */
static uint64_t tally[2][HOMA_PKT_ACK - HOMA_PKT_DATA + 1];

/* tally_pkt - a filter that loses nothing and tallies each packet under
 * its sender and type. */
static bool tally_pkt(struct net *net, const uint8_t *pkt, size_t len,
		      int from, int to)
{
	(void)net; (void)to;
	assert_true(len > 11 && from < 2);
	assert_true(pkt[11] >= HOMA_PKT_DATA && pkt[11] <= HOMA_PKT_ACK);
	tally[from][pkt[11] - HOMA_PKT_DATA]++;
	return true;
}

/* Each packet an endpoint sends is counted under its type: after RPCs of
 * several sizes (grants, acks, NEED_ACKs) both endpoints' counters equal
 * the packets seen on the wire, type by type. */
static void homa_ep_stats__sent_by_type(void **state)
{
	static const uint32_t sizes[] = { 100, 5000, 60000, 300000 };
	int c, s;
	struct net *net = net_pair(&cfg, 64, &c, &s);

	(void)state;
	memset(tally, 0, sizeof(tally));
	net->filter = tally_pkt;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		check_rpc(net, c, s, sizes[k], sizes[k], (uint32_t)k + 1);
	advance(net, 20000);
	for (int i = 0; i < 2; i++) {
		const uint64_t *st = epi(net->ep[i]).stats;

		for (uint8_t t = HOMA_PKT_DATA; t <= HOMA_PKT_ACK; t++)
			assert_int_equal(st[type_stat("packets_sent_", t)],
					 tally[i][t - HOMA_PKT_DATA]);
	}
	assert_true(tally[c][HOMA_PKT_DATA - HOMA_PKT_DATA] > 0);
	assert_true(tally[s][HOMA_PKT_GRANT - HOMA_PKT_DATA] > 0);
	net_free(net);
}

/* ---- drops: one counter per reason ---- */

/* server - a server endpoint (port 99, 8 bpages) in net; its index. */
static int server(struct net *net)
{
	return net_add(net, 99, true, 8);
}

/* server_with_hosts - a server (server()) given a request of one packet
 * (1,000 bytes) from each of n hosts (requests_from_hosts); its index. */
static int server_with_hosts(struct net *net, uint32_t n)
{
	int s = server(net);

	requests_from_hosts(net, s, n, 1000);
	return s;
}

/* One way to make an endpoint drop a packet: run builds endpoints in net
 * (the settings, cfg, may be changed first) and hands them packets until
 * the one to drop; returns the index of the endpoint that dropped it. */
struct drop_case {
	enum homa_stat stat;       /* the counter that must count it */
	enum homa_stat also;       /* another one that may (or COUNT) */
	int (*run)(struct net *net);
};

/* input_encoded - a server (server()) is handed, from H, the control
 * packet encoded makes of type for dport, less its last cut bytes; returns
 * the server's index. */
static int input_encoded(struct net *net, uint8_t type, uint16_t dport,
			 size_t cut)
{
	union sockaddr_in_union h = from_h();
	uint8_t buf[HOMA_MAX_CTRL_LEN];
	int s = server(net);

	pkt_in(net->ep[s], buf, encoded(type, dport, buf) - cut, &h, 0,
		      net->now);
	return s;
}

/* drop_short - 27 bytes: shorter than the common header. */
static int drop_short(struct net *net)
{
	return input_encoded(net, HOMA_PKT_BUSY, 99, 1);
}

/* drop_bad_type - type 0x42. */
static int drop_bad_type(struct net *net)
{
	union sockaddr_in_union h = from_h();
	uint8_t buf[HOMA_MAX_CTRL_LEN];
	size_t len = encoded(HOMA_PKT_ACK, 99, buf);
	int s = server(net);

	buf[11] = 0x42;
	pkt_in(net->ep[s], buf, len, &h, 0, net->now);
	return s;
}

/* drop_short_type - a GRANT one byte short of its header. */
static int drop_short_type(struct net *net)
{
	return input_encoded(net, HOMA_PKT_GRANT, 99, 1);
}

/* drop_bad_length - DATA of a message one byte over the largest. */
static int drop_bad_length(struct net *net)
{
	int s = server(net);

	inject_request(net, s, 0x0b000001, 5000, 2,
		       HOMA_MAX_MESSAGE_LENGTH + 1);
	return s;
}

/* drop_bad_offset - DATA starting at its message's end (no payload). */
static int drop_bad_offset(struct net *net)
{
	int s = server(net);

	inject_request_at(net, s, 0x0b000001, 5000, 2, 1000, 1000);
	return s;
}

/* drop_wrong_port - a BUSY for another port. */
static int drop_wrong_port(struct net *net)
{
	return input_encoded(net, HOMA_PKT_BUSY, 98, 0);
}

/* drop_unknown_rpc - a BUSY naming no RPC. */
static int drop_unknown_rpc(struct net *net)
{
	union sockaddr_in_union h = from_h();
	int s = server(net);

	inject_simple(net, s, &h, HOMA_PKT_BUSY, 2);
	return s;
}

/* drop_wrong_peer - a GRANT for a live client RPC from another host than
 * its server. */
static int drop_wrong_peer(struct net *net)
{
	union sockaddr_in_union h = from_h();
	int c = net_add(net, 40000, false, 8), s = server(net);
	uint64_t id = send_req(net, c, s, 100000, 1);

	inject_simple(net, c, &h, HOMA_PKT_GRANT, id ^ 1);
	return c;
}

/* drop_length_mismatch - a second packet of a request with another
 * message length. */
static int drop_length_mismatch(struct net *net)
{
	int s = server(net);

	inject_request(net, s, 0x0b000001, 5000, 2, 100000);
	inject_request_at(net, s, 0x0b000001, 5000, 2, 50000, 1000);
	return s;
}

/* drop_duplicate_data - a request's first packet twice. */
static int drop_duplicate_data(struct net *net)
{
	int s = server(net);

	inject_request(net, s, 0x0b000001, 5000, 2, 100000);
	inject_request(net, s, 0x0b000001, 5000, 2, 100000);
	return s;
}

/* drop_too_many_gaps - with max_gaps 1, a packet that opens a second
 * gap. */
static int drop_too_many_gaps(struct net *net)
{
	int s;

	cfg.max_gaps = 1;
	s = server(net);
	inject_request_at(net, s, 0x0b000001, 5000, 2, 100000, 2000);
	inject_request_at(net, s, 0x0b000001, 5000, 2, 100000, 4000);
	return s;
}

/* drop_no_buffer - a request to a server with no buffer region. */
static int drop_no_buffer(struct net *net)
{
	int s = net_add(net, 99, true, 0);

	inject_request(net, s, 0x0b000001, 5000, 2, 100000);
	return s;
}

/* drop_not_server - a request to an endpoint that takes none. */
static int drop_not_server(struct net *net)
{
	int c = net_add(net, 99, false, 8);

	inject_request(net, c, 0x0b000001, 5000, 2, 100000);
	return c;
}

/* drop_ctrl_queue_full - with max_ctrl_queue 64, a 65th answer
 * (RPC_UNKNOWN to RESENDs for unknown RPCs) waiting for output. */
static int drop_ctrl_queue_full(struct net *net)
{
	union sockaddr_in_union h = from_h();
	int s;

	cfg.max_ctrl_queue = 64;
	s = server(net);
	for (uint64_t k = 0; k < 65; k++)
		inject_simple(net, s, &h, HOMA_PKT_RESEND, 2 + 2 * k);
	return s;
}

/* drop_no_memory - with max_rpcs 16, a 17th request (from a 17th host;
 * all of one packet, so that buffer space is no limit). */
static int drop_no_memory(struct net *net)
{
	cfg.max_rpcs = 16;
	return server_with_hosts(net, 17);
}

/* drop_peer_limit - a host's second request past its share of the pool
 * (half of 16 bpages): it waits for space (and its data is dropped, also
 * counted as drop_no_buffer). */
static int drop_peer_limit(struct net *net)
{
	int s = net_add(net, 99, true, 16);

	inject_request(net, s, 0x0b000001, 5000, 2, 600000);
	inject_request(net, s, 0x0b000001, 5000, 4, 200000);
	return s;
}

/* drop_too_many_peers - with max_peers 16, each holding an RPC (a
 * request of one packet), a request from a 17th host. */
static int drop_too_many_peers(struct net *net)
{
	cfg.max_peers = 16;
	return server_with_hosts(net, 17);
}

/* drop_half_open_busy - with max_half_open 1 held by a request whose
 * client sends (two packets), another host's request. */
static int drop_half_open_busy(struct net *net)
{
	int s;

	cfg.max_half_open = 1;
	s = server(net);
	inject_request(net, s, 0x0b000001, 5000, 2, 100000);
	inject_request_at(net, s, 0x0b000001, 5000, 2, 100000, 1000);
	inject_request(net, s, 0x0b000002, 5000, 2, 100000);
	return s;
}

#define NONE HOMA_STAT_COUNT
static const struct drop_case drop_cases[] = {
	{ HOMA_STAT_drop_short, NONE, drop_short },
	{ HOMA_STAT_drop_bad_type, NONE, drop_bad_type },
	{ HOMA_STAT_drop_short_type, NONE, drop_short_type },
	{ HOMA_STAT_drop_bad_length, NONE, drop_bad_length },
	{ HOMA_STAT_drop_bad_offset, NONE, drop_bad_offset },
	{ HOMA_STAT_drop_wrong_port, NONE, drop_wrong_port },
	{ HOMA_STAT_drop_unknown_rpc, NONE, drop_unknown_rpc },
	{ HOMA_STAT_drop_wrong_peer, NONE, drop_wrong_peer },
	{ HOMA_STAT_drop_length_mismatch, NONE, drop_length_mismatch },
	{ HOMA_STAT_drop_duplicate_data, NONE, drop_duplicate_data },
	{ HOMA_STAT_drop_too_many_gaps, NONE, drop_too_many_gaps },
	{ HOMA_STAT_drop_no_buffer, NONE, drop_no_buffer },
	{ HOMA_STAT_drop_not_server, NONE, drop_not_server },
	{ HOMA_STAT_drop_ctrl_queue_full, NONE, drop_ctrl_queue_full },
	{ HOMA_STAT_drop_no_memory, NONE, drop_no_memory },
	{ HOMA_STAT_drop_peer_limit, HOMA_STAT_drop_no_buffer,
	  drop_peer_limit },
	{ HOMA_STAT_drop_too_many_peers, NONE, drop_too_many_peers },
	{ HOMA_STAT_drop_half_open_busy, NONE, drop_half_open_busy },
};
#define NUM_DROP_CASES (sizeof(drop_cases) / sizeof(drop_cases[0]))

/* is_drop - counter k counts dropped packets (its name says drop_). */
static bool is_drop(int k)
{
	return strncmp(homa_stat_name((enum homa_stat)k), "drop_", 5) == 0;
}

/* check_drop_case - run one case on a fresh network with the default
 * settings: its packet is counted once under its counter (and under
 * `also`, when set), and under no other drop counter. */
static void check_drop_case(const struct drop_case *dc)
{
	struct net *net;
	const uint64_t *st;
	int i;

	homa_config_defaults(&cfg);
	net = net_new(&cfg);
	i = dc->run(net);
	st = epi(net->ep[i]).stats;
	for (int k = 0; k < HOMA_STAT_COUNT; k++) {
		uint64_t want = k == (int)dc->stat || k == (int)dc->also;

		if (is_drop(k) && st[k] != want)
			fail_msg("case %s: %s is %llu, not %llu",
				 homa_stat_name(dc->stat),
				 homa_stat_name((enum homa_stat)k),
				 (unsigned long long)st[k],
				 (unsigned long long)want);
	}
	net_free(net);
}

/* Every drop reason has a case (a counter named drop_* with none fails
 * here), and each case's packet is counted under exactly its reason. */
static void homa_ep_stats__each_drop_reason_counted_alone(void **state)
{
	(void)state;
	for (int k = 0; k < HOMA_STAT_COUNT; k++) {
		size_t j = 0;

		while (j < NUM_DROP_CASES && (int)drop_cases[j].stat != k)
			j++;
		if (is_drop(k) && j == NUM_DROP_CASES)
			fail_msg("no test case drops a packet as %s",
				 homa_stat_name((enum homa_stat)k));
	}
	for (size_t j = 0; j < NUM_DROP_CASES; j++) {
		assert_true(is_drop(drop_cases[j].stat));
		check_drop_case(&drop_cases[j]);
	}
}

/* Malformed packets: too short for the common header, an unknown type, too
 * short for their type, each counted under its reason and starting no
 * RPC. */
static void homa_ep_input__malformed_counted(void **state)
{
	int s;
	struct net *net = net_server(&cfg, 8, &s);
	uint8_t junk[100];

	(void)state;
	memset(junk, 0, sizeof(junk));
	pkt_in(net->ep[s], junk, 10, &net->addr[s], 0, 0);
	assert_int_equal(epi(net->ep[s]).stats[HOMA_STAT_drop_short], 1);
	junk[11] = 0x42;
	pkt_in(net->ep[s], junk, 40, &net->addr[s], 0, 0);
	assert_int_equal(epi(net->ep[s]).stats[HOMA_STAT_drop_bad_type], 1);
	junk[11] = HOMA_PKT_DATA;
	pkt_in(net->ep[s], junk, 40, &net->addr[s], 0, 0);
	assert_int_equal(epi(net->ep[s]).stats[HOMA_STAT_drop_short_type],
			 1);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 0);
	net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_stat_name__every_counter_named),
		T(homa_stat_name__type_counters_in_type_order),
		T(homa_stat_name__out_of_range),
		T(homa_ep_stats__received_by_type),
		T(homa_ep_stats__sent_by_type),
		T(homa_ep_stats__each_drop_reason_counted_alone),
		T(homa_ep_input__malformed_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
