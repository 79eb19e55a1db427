// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of homa_copies.c, the payload copies of incoming DATA: a
 * copy deferred (homa_ep_defer_copies) is made before the message is
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
	assert_true(homa_ep_readable(net->ep[s]));
	for (size_t k = 0; k < 4 * (size_t)HOMA_BPAGE_SIZE; k++)
		assert_int_equal(((uint8_t *)net->region[s])[k], 0);
	check_pattern(net, s, 1000);
	net_free(net);
}

/* homa_ep_input__deferred_copies_overflow_in_order - more packets than
 * HOMA_EP_DEFERRED_COPIES in one deferred batch (some crossing bpage
 * boundaries): the early ones are copied as the record fills, and the
 * message arrives whole after homa_ep_finish_copies. */
static void homa_ep_input__deferred_copies_overflow_in_order(void **state)
{
	const uint32_t seg = 1000, npkts = HOMA_EP_DEFERRED_COPIES + 100;
	const uint32_t length = seg * npkts;
	union sockaddr_in_union src = from_peer9();
	struct net *net = net_new(&cfg);
	uint8_t *pkts;
	int s;

	(void)state;
	s = net_add(net, 99, true, 16);
	pkts = malloc((size_t)npkts * (HOMA_DATA_HDR_LEN + seg));
	homa_ep_defer_copies(net->ep[s]);
	for (uint32_t i = 0; i < npkts; i++) {
		uint8_t *p = pkts + (size_t)i * (HOMA_DATA_HDR_LEN + seg);

		data_pkt(net, s, p, 2, length, i * seg, seg);
		homa_ep_input(net->ep[s], p, HOMA_DATA_HDR_LEN + seg, &src, 0,
			      net->now);
	}
	homa_ep_finish_copies(net->ep[s]);
	memset(pkts, 0xee, (size_t)npkts * (HOMA_DATA_HDR_LEN + seg));
	check_pattern(net, s, length);
	free(pkts);
	net_free(net);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(homa_ep_input__deferred_copy_made_before_receive),
		T(homa_ep_input__deferred_copies_overflow_in_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
