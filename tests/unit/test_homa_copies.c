// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_copies.c, the payload copies of incoming DATA: a
 * copy deferred (homa_rx_batch.defer_copies) is made before the message is
 * handed over, and more deferred copies than the record holds are made in
 * order.  Packets are handed to one endpoint of the in-memory network of
 * ep_test_util.
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

/* drain_output - pull endpoint i's output until it runs dry (the GRANTs
 * a batch earns; its deferred copies stay deferred); the packets are
 * dropped. */
static void drain_output(struct net *net, int i)
{
	uint8_t buf[70000];
	struct homa_out out = { .buf = buf };

	while (homa_ep_output(net->ep[i], net->now, &out))
		;
}

/* before_next_read - what the socket layer calls before its next kernel
 * read (homa_ep_lent_places), which makes the deferred copies. */
static void before_next_read(struct net *net, int i)
{
	struct homa_lent_places lp;

	homa_ep_lent_places(net->ep[i], &lp);
}

/* homa_ep_input__deferred_copy_made_before_receive - a complete message
 * whose copy is deferred is ready at once, its bytes are not in the pool
 * yet, and homa_ep_receive makes the copy before handing it over. */
static void homa_ep_input__deferred_copy_made_before_receive(void **state)
{
	uint8_t pkt[HOMA_DATA_HDR_LEN + 1000];
	struct net *net = net_new(&cfg);
	int s;

	(void)state;
	s = deferred_first_packet(net, pkt, 1000);
	assert_true(epi(net->ep[s]).readable);
	for (size_t k = 0; k < 4 * (size_t)HOMA_BPAGE_SIZE; k++)
		assert_int_equal(((uint8_t *)net->region[s])[k], 0);
	check_pattern(net, s, 1000);
	net_free(net);
}

/* homa_ep_input__deferred_copies_overflow_in_order - more packets than
 * HOMA_EP_DEFERRED_COPIES in one deferred batch (some crossing bpage
 * boundaries): the early ones are copied as the record fills, and the
 * message arrives whole once the copies are made (before the next
 * read). */
static void homa_ep_input__deferred_copies_overflow_in_order(void **state)
{
	const uint32_t seg = 1000, npkts = HOMA_EP_DEFERRED_COPIES + 100;
	const uint32_t length = seg * npkts;
	union sockaddr_in_union src = from_peer9();
	struct net *net = net_new(&cfg);
	struct homa_rx_pkt *in = calloc(npkts, sizeof(*in));
	struct homa_rx_batch b = { .pkts = in, .n = (int)npkts,
				   .defer_copies = true };
	uint8_t *pkts;
	int s;

	(void)state;
	s = net_add(net, 99, true, 16);
	pkts = malloc((size_t)npkts * (HOMA_DATA_HDR_LEN + seg));
	for (uint32_t i = 0; i < npkts; i++) {
		uint8_t *p = pkts + (size_t)i * (HOMA_DATA_HDR_LEN + seg);

		data_pkt(net, s, p, 2, length, i * seg, seg);
		in[i].buf = p;
		in[i].len = HOMA_DATA_HDR_LEN + seg;
		in[i].src = src;
		in[i].place = -1;
	}
	homa_ep_input(net->ep[s], &b, 0, net->now);
	drain_output(net, s);
	before_next_read(net, s);
	memset(pkts, 0xee, (size_t)npkts * (HOMA_DATA_HDR_LEN + seg));
	check_pattern(net, s, length);
	free(pkts);
	free(in);
	net_free(net);
}

/* A copier that refuses every copy into [bad, bad + bad_len) (memory the
 * application took away) and makes the others; it counts its calls. */
struct picky {
	const uint8_t *bad;
	size_t bad_len;
	int calls;
};

static uint32_t picky_copy(void *ctx, const struct homa_ep_copy *c,
			   uint32_t n)
{
	struct picky *p = ctx;

	p->calls++;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *d = c[i].dst;

		if (d + c[i].len > p->bad && d < p->bad + p->bad_len)
			return i;
		memcpy(c[i].dst, c[i].src, c[i].len);
	}
	return n;
}

/* A client whose region cannot be written (its copier refuses): the
 * response fails with EFAULT (copy_faults counts the RPC once, however
 * many packets it had), and once the region is writable again a fresh
 * RPC completes. */
static void homa_ep_create__copier_fault_fails_response_with_efault(
	void **st)
{
	int c, s;
	struct net *net = net_new(&cfg);
	struct picky p = { NULL, 8 * (size_t)HOMA_BPAGE_SIZE, 0 };
	struct homa_msg_ready m;
	uint64_t id;

	(void)st;
	net->copier = picky_copy;
	net->copier_ctx = &p;
	c = net_add(net, 40000, false, 8);
	net->copier = NULL;
	s = net_add(net, 99, true, 8);
	p.bad = net->region[c];
	id = send_req(net, c, s, 100, 1);
	step(net);
	assert_int_equal(serve(net, s, 20000), 1);
	step(net);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, EFAULT);
	assert_int_equal(m.num_bpages, 0);
	assert_true(p.calls > 0);
	assert_int_equal(ep_counter(net, c, "copy_faults"), 1);
	p.bad_len = 0;
	check_rpc(net, c, s, 100, 20000, 2);
	net_free(net);
}

/* A server whose region cannot be written: the request is handed over
 * with error EFAULT and no bytes (the RPC ends; its client's RPC fails
 * later, as when a server drops it); a request that is still arriving
 * when its copy faults ends at the next tick.  Once the region is
 * writable again, RPCs complete. */
static void homa_ep_create__copier_fault_ends_server_rpc(void **st)
{
	int c, s;
	struct net *net = net_new(&cfg);
	struct picky p = { NULL, 8 * (size_t)HOMA_BPAGE_SIZE, 0 };
	struct homa_msg_ready m;
	uint8_t pkt[HOMA_DATA_HDR_LEN + 1000];
	union sockaddr_in_union h = from_peer9();

	(void)st;
	c = net_add(net, 40000, false, 8);
	net->copier = picky_copy;
	net->copier_ctx = &p;
	s = net_add(net, 99, true, 8);
	p.bad = net->region[s];
	send_req(net, c, s, 3000, 1);
	step(net);
	assert_int_equal(homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST,
					 &m), 0);
	assert_int_equal(m.error, EFAULT);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 0);
	data_pkt(net, s, pkt, 2, 100000, 0, 1000);
	pkt_in(net->ep[s], pkt, sizeof(pkt), &h, 0, net->now);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 1);
	tick_ep(net, s);
	assert_int_equal(epi(net->ep[s]).num_rpcs, 0);
	assert_int_equal(ep_counter(net, s, "copy_faults"), 2);
	p.bad_len = 0;
	check_rpc(net, c, s, 3000, 100, 2);
	net_free(net);
}

/* In a deferred batch, the copy that faults is skipped and the copies
 * after it are made: a fault costs only the RPC whose memory is gone. */
static void homa_ep_input__deferred_fault_skips_one_copy_only(void **st)
{
	struct net *net = net_new(&cfg);
	uint8_t pkt[2][HOMA_DATA_HDR_LEN + 1000];
	union sockaddr_in_union h = from_peer9();
	struct picky p = { NULL, 0, 0 };
	struct homa_rx_pkt in[2] = {
		{ .buf = pkt[0], .len = sizeof(pkt[0]), .src = h, .place = -1 },
		{ .buf = pkt[1], .len = sizeof(pkt[1]), .src = h, .place = -1 },
	};
	struct homa_rx_batch b = { .pkts = in, .n = 2, .defer_copies = true };
	struct homa_msg_ready m;
	int s;

	(void)st;
	net->copier = picky_copy;
	net->copier_ctx = &p;
	s = net_add(net, 99, true, 4);
	/* Request 2 takes the region's first bytes: refuse them; request 4
	 * comes after it. */
	p.bad = net->region[s];
	p.bad_len = 1000;
	data_pkt(net, s, pkt[0], 2, 1000, 0, 1000);
	data_pkt(net, s, pkt[1], 4, 1000, 0, 1000);
	homa_ep_input(net->ep[s], &b, 0, net->now);
	drain_output(net, s);
	assert_int_equal(p.calls, 0);   /* the GRANTs went first */
	before_next_read(net, s);
	assert_int_equal(p.calls, 2);
	assert_int_equal(homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST,
					 &m), 0);
	assert_int_equal(m.error, EFAULT);
	check_pattern(net, s, 1000);
	net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_ep_input__deferred_copy_made_before_receive),
		T(homa_ep_input__deferred_copies_overflow_in_order),
		T(homa_ep_create__copier_fault_fails_response_with_efault),
		T(homa_ep_create__copier_fault_ends_server_rpc),
		T(homa_ep_input__deferred_fault_skips_one_copy_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
