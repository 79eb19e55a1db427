// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_grant_ep.c, the endpoint's grants: admission under
 * overload (max_admitted).  Packets are handed to one server endpoint of
 * the in-memory network of ep_test_util and its GRANTs and BUSYs are read
 * from its output.  The grant policy itself: test_homa_grant.c.
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
#include "homa_ep_internal.h"

/* An overloaded server (behind its input) whose granted messages still
 * have max_admitted bytes to come gives a new message no first grant: its
 * sender hears once (BUSY) that its unscheduled bytes were read.  Once the
 * server has caught up, the message is granted. */
static void homa_ep_grant__admission_closed_while_overloaded(void **state)
{
	struct net *net;
	int s, busy = 0, grants = 0;
	struct sent_pkt p;

	(void)state;
	cfg.max_admitted = 1;
	net = net_server(&cfg, 64, &s);
	backlog_in(net->ep[s], true);
	inject_request(net, s, 0x0b000100, 5000, 2, 100000);
	while (next_out(net, s, &p)) {
		if (p.pkt.type != HOMA_PKT_GRANT)
			continue;
		grants++;
		assert_int_equal(ntohl(p.dest.in4.sin_addr.s_addr),
				 0x0b000100);
	}
	assert_int_equal(grants, 1);
	for (uint32_t off = 0; off < 40000; off += 1000)
		inject_request_at(net, s, 0x0b000101, 5000, 2, 100000, off);
	while (next_out(net, s, &p)) {
		if (p.pkt.type == HOMA_PKT_GRANT) {
			grants++;
		} else if (p.pkt.type == HOMA_PKT_BUSY) {
			busy++;
			assert_int_equal(ntohl(p.dest.in4.sin_addr.s_addr),
					 0x0b000101);
		}
	}
	assert_int_equal(grants, 1);
	assert_int_equal(busy, 1);
	/* No second BUSY for the same message. */
	inject_request_at(net, s, 0x0b000101, 5000, 2, 100000, 0);
	assert_int_equal(count_type(net, s, HOMA_PKT_BUSY), 0);
	/* Caught up: the waiting message gets its grant. */
	backlog_in(net->ep[s], false);
	tick_ep(net, s);
	grants = 0;
	while (next_out(net, s, &p)) {
		if (p.pkt.type != HOMA_PKT_GRANT ||
		    ntohl(p.dest.in4.sin_addr.s_addr) != 0x0b000101)
			continue;
		grants++;
	}
	assert_int_equal(grants, 1);
	net_free(net);
}

/* A server that keeps up grants in SRPT order alone, whatever its granted
 * messages still have to come. */
static void homa_ep_grant__admission_open_when_keeping_up(void **state)
{
	struct net *net;
	int s;

	(void)state;
	cfg.max_admitted = 1;
	net = net_server(&cfg, 64, &s);
	requests_from_hosts(net, s, 2, 100000);
	assert_int_equal(count_type(net, s, HOMA_PKT_GRANT), 2);
	net_free(net);
}

/* granted_ahead - a 1 MB request from 11.0.1.0 whose first 40 packets
 * (40,000 bytes) arrive in one tick, its host put in recovery (a RESEND
 * asked it for bytes of a message lately) after the first when recovery is
 * set: the bytes granted past what arrived, as the last GRANT says. */
static uint32_t granted_ahead(bool recovery)
{
	union sockaddr_in_union src = host_addr(0x0b000100, 5000);
	uint32_t granted = 0;
	struct sent_pkt p;
	struct homa_rpc *rpc;
	struct net *net;
	int s;

	net = net_server(&cfg, 64, &s);
	inject_request(net, s, 0x0b000100, 5000, 2, 1000000);
	rpc = server_rpc(net, s, 2, &src);
	assert_non_null(rpc);
	if (recovery)
		rpc->peer->loss_tick = net->ep[s]->tick + 1;
	for (uint32_t off = 1000; off < 40000; off += 1000)
		inject_request_at(net, s, 0x0b000100, 5000, 2, 1000000, off);
	while (next_out(net, s, &p))
		if (p.pkt.type == HOMA_PKT_GRANT && p.pkt.offset > granted)
			granted = p.pkt.offset;
	assert_int_equal(rpc->in.received, 40000);
	net_free(net);
	return granted - 40000;
}

/* A host in recovery has at most what its path delivered in resend_ticks / 2
 * ticks granted and not received (40,000 bytes arrived in this tick:
 * 100,000); a host not in recovery gets its grants as max_incoming allows
 * (more). */
static void homa_ep_grant__host_in_recovery_granted_at_path_pace(
	void **state)
{
	uint32_t free_ahead, capped_ahead;

	(void)state;
	free_ahead = granted_ahead(false);
	capped_ahead = granted_ahead(true);
	print_message("granted ahead: %u, in recovery %u\n", free_ahead,
		      capped_ahead);
	assert_true(capped_ahead <= 40000 * cfg.resend_ticks / 2);
	assert_true(capped_ahead > 0);
	assert_true(free_ahead > capped_ahead);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_ep_grant__admission_closed_while_overloaded),
		T(homa_ep_grant__admission_open_when_keeping_up),
		T(homa_ep_grant__host_in_recovery_granted_at_path_pace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
