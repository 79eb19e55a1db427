// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of the sans-IO endpoint: two (or more) endpoints exchange
 * packets through an in-memory network driven by a fake clock, with
 * optional loss chosen by a filter.
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

#include "homa_endpoint.h"
#include "homa_wire.h"

#define MAX_EPS 4
#define QCAP 200000

/* A packet in flight. */
struct flight {
	int to;
	union sockaddr_in_union src;
	uint32_t len;
	uint8_t prio;
	uint8_t *data;
};

/* The in-memory network. */
struct net {
	struct homa_ep *ep[MAX_EPS];
	union sockaddr_in_union addr[MAX_EPS];
	void *region[MAX_EPS];
	int n;
	uint64_t now;
	struct flight *q;
	size_t qhead, qlen;
	/* return false to drop a packet */
	bool (*filter)(struct net *net, const uint8_t *pkt, size_t len,
		       int from, int to);
	int drops, delivered;
	int counter;
};

static struct homa_config cfg;

/* region_alloc - a page-aligned region of n bpages. */
static void *region_alloc(int n)
{
	void *p = NULL;

	assert_int_equal(posix_memalign(&p, 4096,
					(size_t)n * HOMA_BPAGE_SIZE), 0);
	return p;
}

/* net_add - add an endpoint on 10.0.0.(n+1):port with a region of
 * bpages bpages (0 = none). */
static int net_add(struct net *net, uint16_t port, bool server, int bpages)
{
	struct homa_ep_params p = { &cfg, AF_INET, port, server,
				    1000 + 1000 * (uint64_t)net->n, 2, 0 };
	int i = net->n++;

	net->ep[i] = homa_ep_create(&p);
	assert_non_null(net->ep[i]);
	net->addr[i].in4.sin_family = AF_INET;
	net->addr[i].in4.sin_port = htons(port);
	net->addr[i].in4.sin_addr.s_addr = htonl(0x0a000001 + i);
	if (bpages) {
		net->region[i] = region_alloc(bpages);
		assert_int_equal(homa_pool_set_region(homa_ep_pool(net->ep[i]),
				 net->region[i],
				 (size_t)bpages * HOMA_BPAGE_SIZE), 0);
	}
	return i;
}

static struct net *net_new(void)
{
	struct net *net = calloc(1, sizeof(*net));

	net->q = calloc(QCAP, sizeof(*net->q));
	net->now = 1000000;
	return net;
}

static void net_free(struct net *net)
{
	int i;

	while (net->qlen) {
		free(net->q[net->qhead].data);
		net->qhead = (net->qhead + 1) % QCAP;
		net->qlen--;
	}
	for (i = 0; i < net->n; i++) {
		homa_ep_destroy(net->ep[i]);
		free(net->region[i]);
	}
	free(net->q);
	free(net);
}

/* find_ep - index of the endpoint with address a, or -1. */
static int find_ep(struct net *net, const union sockaddr_in_union *a)
{
	int i;

	for (i = 0; i < net->n; i++)
		if (net->addr[i].in4.sin_addr.s_addr == a->in4.sin_addr.s_addr &&
		    net->addr[i].in4.sin_port == a->in4.sin_port)
			return i;
	return -1;
}

/* Most packets collect takes as one gathered run (0: whole packets). */
static uint32_t gather_segs;

/* enqueue - queue packet pkt[0..len) from endpoint i (unless dropped). */
static void enqueue(struct net *net, int i, const struct homa_out *out,
		    const uint8_t *pkt, size_t len)
{
	int to = find_ep(net, &out->dest);
	struct flight *f;

	assert_true(len <= homa_ep_max_packet(net->ep[i]));
	assert_true(out->priority < 8);
	if (to < 0 || (net->filter && !net->filter(net, pkt, len, i, to))) {
		net->drops++;
		return;
	}
	assert_true(net->qlen < QCAP);
	f = &net->q[(net->qhead + net->qlen) % QCAP];
	f->to = to;
	f->src = net->addr[i];
	f->len = (uint32_t)len;
	f->prio = out->priority;
	f->data = malloc(len);
	memcpy(f->data, pkt, len);
	net->qlen++;
}

/* enqueue_run - queue each packet of the run in out (whole packets back
 * to back at out->frames). */
static void enqueue_run(struct net *net, int i, const struct homa_out *out)
{
	size_t full = HOMA_DATA_HDR_LEN + out->seg;

	assert_true(out->segs <= gather_segs);
	assert_int_equal(out->len,
			 out->segs * HOMA_DATA_HDR_LEN + out->payload_len);
	assert_true(out->payload_len > (out->segs - 1) * out->seg &&
		    out->payload_len <= out->segs * out->seg);
	for (uint32_t k = 0; k < out->segs; k++) {
		uint32_t off = k * out->seg, left = out->payload_len - off;
		uint32_t n = left < out->seg ? left : out->seg;

		enqueue(net, i, out, out->frames + k * full,
			HOMA_DATA_HDR_LEN + n);
	}
}

/* collect - move every packet endpoint i wants to send into the queue. */
static void collect(struct net *net, int i)
{
	uint8_t buf[64 * HOMA_DATA_HDR_LEN];
	struct homa_out out = { .buf = buf, .max_segs = gather_segs };

	while (homa_ep_output(net->ep[i], net->now, &out)) {
		if (out.segs > 0)
			enqueue_run(net, i, &out);
		else
			enqueue(net, i, &out, buf, out.len);
	}
}

/* When set, deliver_all passes packets as the socket layer does: copies
 * deferred, the receiver's output (its GRANTs) collected before they are
 * made, and the packet's bytes wiped once they are. */
static bool defer_mode;

/* deliver_all - deliver every queued packet (and what they cause) at the
 * current time; returns the number delivered. */
static int deliver_all(struct net *net)
{
	int i, n = 0;

	for (i = 0; i < net->n; i++)
		collect(net, i);
	while (net->qlen) {
		struct flight f = net->q[net->qhead];

		net->qhead = (net->qhead + 1) % QCAP;
		net->qlen--;
		if (defer_mode)
			homa_ep_defer_copies(net->ep[f.to]);
		homa_ep_input(net->ep[f.to], f.data, f.len, &f.src, 0,
			      net->now);
		collect(net, f.to);
		if (defer_mode) {
			homa_ep_finish_copies(net->ep[f.to]);
			memset(f.data, 0xee, f.len);
		}
		free(f.data);
		n++;
		net->delivered++;
	}
	return n;
}

/* pacer_wake - the earliest time, within half a tick, at which an
 * endpoint wants to be called again (its pacer holds DATA back); 0 when
 * none does.  Runs the timers that are due first. */
static uint64_t pacer_wake(struct net *net)
{
	uint64_t best = 0;
	int i;

	for (i = 0; i < net->n; i++) {
		uint64_t t;

		homa_ep_timer(net->ep[i], net->now);
		t = homa_ep_next_timer(net->ep[i]);
		if (t > net->now && t < net->now + 500000 &&
		    (best == 0 || t < best))
			best = t;
	}
	return best;
}

/* step - deliver packets until the network is quiet, moving the clock
 * forward to wherever a pacer holds DATA back; returns the number
 * delivered. */
static int step(struct net *net)
{
	int n = deliver_all(net);
	uint64_t wake;

	while ((wake = pacer_wake(net)) != 0) {
		net->now = wake;
		n += deliver_all(net);
	}
	return n;
}

/* advance - move the clock by us microseconds, running timers each tick. */
static void advance(struct net *net, uint64_t us)
{
	uint64_t end = net->now + us * 1000;
	int i;

	while (net->now < end) {
		net->now += 100000;
		for (i = 0; i < net->n; i++)
			homa_ep_timer(net->ep[i], net->now);
		step(net);
	}
}

/* fill - a pattern depending on seed and position. */
static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 7 + seed * 13 + (i >> 8)) & 0xff);
}

/* gather - copy a delivered message out of its bpages. */
static uint8_t *gather(struct net *net, int i, const struct homa_msg_ready *m)
{
	uint8_t *out = malloc(m->length ? m->length : 1);
	uint32_t done = 0, k;

	for (k = 0; k < m->num_bpages; k++) {
		uint32_t n = m->length - done < HOMA_BPAGE_SIZE ?
			     m->length - done : HOMA_BPAGE_SIZE;

		memcpy(out + done, (uint8_t *)net->region[i] +
		       m->bpage_offsets[k], n);
		done += n;
	}
	assert_int_equal(done, m->length);
	return out;
}

/* send_req - client c sends a request of len bytes to endpoint s. */
static uint64_t send_req(struct net *net, int c, int s, uint32_t len,
			 uint32_t seed)
{
	uint8_t *buf = malloc(len);
	struct iovec iov = { buf, len };
	uint64_t id = 0;

	fill(buf, len, seed);
	assert_int_equal(homa_ep_send_request(net->ep[c], &net->addr[s], &iov,
					      1, seed, &id, net->now), 0);
	free(buf);
	assert_true(id != 0 && (id & 1) == 0);
	return id;
}

/* serve - the server takes one request, checks it and answers with
 * resp_len bytes; returns 0 when none was ready. */
static int serve(struct net *net, int s, uint32_t resp_len)
{
	struct homa_msg_ready m;
	struct iovec iov;
	uint8_t *data, *resp;
	uint32_t seed;

	if (homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST, &m) != 0)
		return 0;
	assert_int_equal(m.error, 0);
	assert_true(m.id & 1);
	data = gather(net, s, &m);
	seed = data[0];
	free(data);
	assert_int_equal(homa_ep_return_bpages(net->ep[s], m.bpage_offsets,
					       m.num_bpages, 0, net->now), 0);
	resp = malloc(resp_len);
	fill(resp, resp_len, seed);
	iov.iov_base = resp;
	iov.iov_len = resp_len;
	assert_int_equal(homa_ep_send_reply(net->ep[s], &m.peer, m.id, &iov, 1,
					    net->now), 0);
	free(resp);
	return 1;
}

/* serve_held - the server answers request id (client id) from endpoint c,
 * which its application already holds, with one byte; returns the
 * result of homa_ep_send_reply. */
static int serve_held(struct net *net, int s, int c, uint64_t id)
{
	uint8_t b = 1;
	struct iovec iov = { &b, 1 };
	union sockaddr_in_union peer = net->addr[c];

	return homa_ep_send_reply(net->ep[s], &peer, id ^ 1, &iov, 1,
				  net->now);
}

/* request_seed - the first byte of a request filled with seed (the server
 * answers with that byte as its seed). */
static uint32_t request_seed(uint32_t seed)
{
	uint8_t b;

	fill(&b, 1, seed);
	return b;
}

/* check_rpc - one RPC from c to s with the given sizes; the response's
 * bytes follow the pattern seeded by the request's first byte. */
static void check_rpc(struct net *net, int c, int s, uint32_t req_len,
		      uint32_t resp_len, uint32_t seed)
{
	struct homa_msg_ready m;
	uint64_t id = send_req(net, c, s, req_len, seed);
	uint8_t *data, *want;
	int tries = 0;

	while (!serve(net, s, resp_len)) {
		step(net);
		assert_true(++tries < 1000);
	}
	step(net);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, 0);
	assert_int_equal(m.length, resp_len);
	assert_int_equal(m.cookie, seed);
	data = gather(net, c, &m);
	want = malloc(resp_len);
	fill(want, resp_len, request_seed(seed));
	assert_memory_equal(data, want, resp_len);
	free(want);
	free(data);
	assert_int_equal(homa_ep_return_bpages(net->ep[c], m.bpage_offsets,
					       m.num_bpages, 0, net->now), 0);
}

/* homa_ep_rpc__sizes_deferred_copies - with every payload copy deferred
 * past the receiver's output (as the socket layer runs the endpoint),
 * messages of every size still arrive intact. */
static void homa_ep_rpc__sizes_deferred_copies(void **state)
{
	static const uint32_t sizes[] = { 1, 1424, 40000, 65536, 65537,
					  200000, 1000000 };
	struct net *net = net_new();
	int c, s;

	(void)state;
	c = net_add(net, 40000, false, 64);
	s = net_add(net, 99, true, 64);
	defer_mode = true;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		check_rpc(net, c, s, sizes[i], sizes[i], (uint32_t)i + 1);
	defer_mode = false;
	net_free(net);
}

/* data_pkt - DATA of request id (message_length bytes) from 10.0.0.9:5000
 * to endpoint s: len bytes at offset, each byte (offset + k) & 0xff, built
 * in pkt (HOMA_DATA_HDR_LEN + len bytes). */
static void data_pkt(struct net *net, int s, uint8_t *pkt, uint64_t id,
		     uint32_t message_length, uint32_t offset, uint32_t len)
{
	struct homa_pkt h;

	memset(&h, 0, sizeof(h));
	h.type = HOMA_PKT_DATA;
	h.sport = 5000;
	h.dport = homa_ep_port(net->ep[s]);
	h.sender_id = id;
	h.message_length = message_length;
	h.incoming = message_length;
	h.offset = offset;
	homa_wire_encode_data_hdr(&h, pkt);
	for (uint32_t k = 0; k < len; k++)
		pkt[HOMA_DATA_HDR_LEN + k] = (uint8_t)((offset + k) & 0xff);
}

/* from_peer9 - the address data_pkt's packets come from. */
static union sockaddr_in_union from_peer9(void)
{
	union sockaddr_in_union src;

	memset(&src, 0, sizeof(src));
	src.in4.sin_family = AF_INET;
	src.in4.sin_port = htons(5000);
	src.in4.sin_addr.s_addr = htonl(0x0a000009);
	return src;
}

/* check_pattern - the request s's application takes holds byte
 * k & 0xff at every position k. */
static void check_pattern(struct net *net, int s, uint32_t length)
{
	struct homa_msg_ready m;
	uint8_t *data;

	assert_int_equal(homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST,
					 &m), 0);
	assert_int_equal(m.length, length);
	data = gather(net, s, &m);
	for (uint32_t k = 0; k < length; k++)
		if (data[k] != (uint8_t)(k & 0xff))
			fail_msg("byte %u is %u", k, data[k]);
	free(data);
	assert_int_equal(homa_ep_return_bpages(net->ep[s], m.bpage_offsets,
					       m.num_bpages, 0, net->now), 0);
}

/* deferred_first_packet - a server endpoint (4 bpages, region zeroed) that
 * is given, with its copies deferred, the first 1,000 bytes (built in pkt)
 * of request 2 of message_length bytes from 10.0.0.9:5000; returns its
 * index. */
static int deferred_first_packet(struct net *net, uint8_t *pkt,
				 uint32_t message_length)
{
	union sockaddr_in_union src = from_peer9();
	int s = net_add(net, 99, true, 4);

	memset(net->region[s], 0, 4 * (size_t)HOMA_BPAGE_SIZE);
	data_pkt(net, s, pkt, 2, message_length, 0, 1000);
	homa_ep_defer_copies(net->ep[s]);
	homa_ep_input(net->ep[s], pkt, HOMA_DATA_HDR_LEN + 1000, &src, 0,
		      net->now);
	return s;
}

/* homa_ep_input__deferred_copy_made_before_receive - a complete message
 * whose copy is deferred is ready at once, its bytes are not in the pool
 * yet, and homa_ep_receive makes the copy before handing it over. */
static void homa_ep_input__deferred_copy_made_before_receive(void **state)
{
	uint8_t pkt[HOMA_DATA_HDR_LEN + 1000];
	struct net *net = net_new();
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
	struct net *net = net_new();
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

/* homa_ep_shutdown__deferred_copies_made_first - freeing RPCs whose copies
 * are deferred makes the copies before the space goes back to the pool:
 * nothing lands there once it is free (here: the packet's bytes are in the
 * region, not the wiped bytes that replace them after the shutdown). */
static void homa_ep_shutdown__deferred_copies_made_first(void **state)
{
	uint8_t pkt[HOMA_DATA_HDR_LEN + 1000], want[1000];
	struct net *net = net_new();
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

static int setup(void **state)
{
	(void)state;
	homa_config_defaults(&cfg);
	return 0;
}

/* ---- tests ---- */

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

static void homa_ep_send_request__invalid(void **state)
{
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 8), s = net_add(net, 99, true, 8);
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

static void homa_ep_rpc__sizes(void **state)
{
	static const uint32_t sizes[] = { 1, 100, 1423, 1424, 1425, 2848,
		2849, 39999, 40000, 40001, 65535, 65536, 65537, 131073,
		500000, 1000000 };
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 64), s = net_add(net, 99, true, 64);
	size_t i;

	(void)state;
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

/* The same with DATA gathered into runs of up to 64 packets. */
static void homa_ep_rpc__sizes_gathered(void **state)
{
	gather_segs = 64;
	homa_ep_rpc__sizes(state);
	gather_segs = 0;
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
	net = net_new();
	c = net_add(net, 40000, false, 8);
	s = net_add(net, 99, true, 8);
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
	net = net_new();
	c = net_add(net, 40000, false, 8);
	s = net_add(net, 99, true, 8);
	send_req(net, c, s, 200000, 2);
	assert_true(homa_ep_output(net->ep[c], net->now, &out));
	assert_int_equal(out.segs, (40000 + seg - 1) / seg);
	assert_false(homa_ep_output(net->ep[c], net->now, &out));
	assert_true(homa_ep_pacer_wake(net->ep[c]) == 0);
	net_free(net);
}

static void homa_ep_rpc__many_outstanding(void **state)
{
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 256), s = net_add(net, 99, true, 256);
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

/* drop_every_7th - lose one packet in seven. */
static bool drop_every_7th(struct net *net, const uint8_t *pkt, size_t len,
			   int from, int to)
{
	(void)pkt; (void)len; (void)from; (void)to;
	return ++net->counter % 7 != 0;
}

static void homa_ep_rpc__loss_recovery(void **state)
{
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 64), s = net_add(net, 99, true, 64);
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

/* drop_all - a dead network. */
static bool drop_all(struct net *net, const uint8_t *pkt, size_t len,
		     int from, int to)
{
	(void)net; (void)pkt; (void)len; (void)from; (void)to;
	return false;
}

static void homa_ep_timer__client_times_out(void **state)
{
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 8), s = net_add(net, 99, true, 8);
	struct homa_msg_ready m;
	uint64_t id;

	(void)state;
	net->filter = drop_all;
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
	assert_int_equal(homa_ep_num_rpcs(net->ep[c]), 0);
	net_free(net);
}

/* hold_request - client c sends a 100-byte request to s; the server takes
 * it (and hands back its bpages) into *m but does not answer yet.  Returns
 * the client's RPC id. */
static uint64_t hold_request(struct net *net, int c, int s,
			     struct homa_msg_ready *m)
{
	uint64_t id = send_req(net, c, s, 100, 5);

	step(net);
	assert_int_equal(homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST,
					 m), 0);
	homa_ep_return_bpages(net->ep[s], m->bpage_offsets, m->num_bpages, 0,
			      net->now);
	return id;
}

static void homa_ep_timer__busy_keeps_slow_server_alive(void **state)
{
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 8), s = net_add(net, 99, true, 8);
	struct homa_msg_ready m;
	uint64_t id;

	(void)state;
	/* The server holds the request for 400 ms. */
	id = hold_request(net, c, s, &m);
	advance(net, 400000);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	assert_true(homa_ep_stats(net->ep[s])[HOMA_STAT_packets_sent_BUSY] > 0);
	{
		uint8_t b = 1;
		struct iovec iov = { &b, 1 };
		union sockaddr_in_union peer = net->addr[c];

		assert_int_equal(homa_ep_send_reply(net->ep[s], &peer, id ^ 1,
						    &iov, 1, net->now), 0);
	}
	step(net);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), 0);
	assert_int_equal(m.error, 0);
	assert_int_equal(m.length, 1);
	net_free(net);
}

static void homa_ep_abort__with_and_without_error(void **state)
{
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 8), s = net_add(net, 99, true, 8);
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

static void homa_ep_pool__messages_wait_for_space(void **state)
{
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 4), s = net_add(net, 99, true, 64);
	uint64_t ids[3];
	int i, served = 0, got = 0, rounds = 0;

	(void)state;
	for (i = 0; i < 3; i++)
		ids[i] = send_req(net, c, s, 100, (uint32_t)i + 1);
	while (got < 3) {
		struct homa_msg_ready m;

		step(net);
		while (served < 3 && serve(net, s, 200000))
			served++;
		step(net);
		for (i = 0; i < 3; i++) {
			if (ids[i] && homa_ep_receive(net->ep[c], ids[i],
						      HOMA_RECVMSG_RESPONSE,
						      &m) == 0) {
				uint8_t *data = gather(net, c, &m);
				uint8_t *want = malloc(m.length);

				assert_int_equal(m.error, 0);
				assert_int_equal(m.length, 200000);
				fill(want, m.length, request_seed(m.cookie));
				assert_memory_equal(data, want, m.length);
				free(data);
				free(want);
				assert_int_equal(homa_ep_return_bpages(
					net->ep[c], m.bpage_offsets,
					m.num_bpages, 0, net->now), 0);
				ids[i] = 0;
				got++;
			}
		}
		advance(net, 1000);
		assert_true(++rounds < 2000);
	}
	assert_true(homa_ep_stats(net->ep[c])[HOMA_STAT_buffer_waits] > 0);
	net_free(net);
}

static void homa_ep_input__malformed_counted(void **state)
{
	struct net *net = net_new();
	int s = net_add(net, 99, true, 8);
	uint8_t junk[100];

	(void)state;
	memset(junk, 0, sizeof(junk));
	homa_ep_input(net->ep[s], junk, 10, &net->addr[s], 0, 0);
	assert_int_equal(homa_ep_stats(net->ep[s])[HOMA_STAT_drop_short], 1);
	junk[11] = 0x42;
	homa_ep_input(net->ep[s], junk, 40, &net->addr[s], 0, 0);
	assert_int_equal(homa_ep_stats(net->ep[s])[HOMA_STAT_drop_bad_type], 1);
	junk[11] = HOMA_PKT_DATA;
	homa_ep_input(net->ep[s], junk, 40, &net->addr[s], 0, 0);
	assert_int_equal(homa_ep_stats(net->ep[s])[HOMA_STAT_drop_short_type],
			 1);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 0);
	net_free(net);
}

static void homa_ep_input__wrong_peer_response_dropped(void **state)
{
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 8), s = net_add(net, 99, true, 8);
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
	homa_ep_input(net->ep[c], pkt, sizeof(pkt), &net->addr[evil], 0,
		      net->now);
	assert_int_equal(homa_ep_stats(net->ep[c])[HOMA_STAT_drop_wrong_peer],
			 1);
	assert_int_equal(homa_ep_receive(net->ep[c], id, HOMA_RECVMSG_RESPONSE,
					 &m), -EAGAIN);
	net_free(net);
}

static void homa_ep_shutdown__fails_everything(void **state)
{
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 8), s = net_add(net, 99, true, 8);
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

static void homa_ep_output__pacer_holds_long_messages(void **state)
{
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 8), s = net_add(net, 99, true, 8);
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

static void homa_ep_output__dont_throttle_flag(void **state)
{
	struct net *net;
	int c, s;

	(void)state;
	cfg.flags = HOMA_FLAG_DONT_THROTTLE;
	net = net_new();
	c = net_add(net, 40000, false, 8);
	s = net_add(net, 99, true, 8);
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
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 8), s = net_add(net, 99, true, 8);
	int s2 = net_add(net, 98, true, 8);
	uint64_t t0 = net->now;

	(void)state;
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
}

/* inject_request_at - the DATA packet at offset (1,000 bytes, or the rest
 * of the message) of a request of length bytes with id from src_ip, port
 * sport, to endpoint s. */
static void inject_request_at(struct net *net, int s, uint32_t src_ip,
			      uint16_t sport, uint64_t id, uint32_t length,
			      uint32_t offset)
{
	uint8_t pkt[HOMA_DATA_HDR_LEN + 1000];
	union sockaddr_in_union src;
	struct homa_pkt h;

	memset(&h, 0, sizeof(h));
	h.type = HOMA_PKT_DATA;
	h.sport = sport;
	h.dport = homa_ep_port(net->ep[s]);
	h.sender_id = id;
	h.message_length = length;
	h.incoming = length < 40000 ? length : 40000;
	h.offset = offset;
	homa_wire_encode_data_hdr(&h, pkt);
	memset(pkt + HOMA_DATA_HDR_LEN, 0x5a, 1000);
	memset(&src, 0, sizeof(src));
	src.in4.sin_family = AF_INET;
	src.in4.sin_port = htons(sport);
	src.in4.sin_addr.s_addr = htonl(src_ip);
	homa_ep_input(net->ep[s], pkt, length - offset < 1000 ?
		      HOMA_DATA_HDR_LEN + length - offset : sizeof(pkt), &src,
		      0, net->now);
}

/* inject_request - the first DATA packet of a request (inject_request_at
 * offset 0). */
static void inject_request(struct net *net, int s, uint32_t src_ip,
			   uint16_t sport, uint64_t id, uint32_t length)
{
	inject_request_at(net, s, src_ip, sport, id, length, 0);
}

static void homa_ep_limits__half_open_per_peer_and_total(void **state)
{
	struct net *net;
	const uint64_t *st;
	int s, i;

	(void)state;
	cfg.max_peer_rpcs = 10;
	cfg.max_half_open = 25;
	net = net_new();
	s = net_add(net, 99, true, 64);
	st = homa_ep_stats(net->ep[s]);
	/* One host opens 30 requests: only its 10 newest stay. */
	for (i = 0; i < 30; i++)
		inject_request(net, s, 0x0b000001, 5000, 2 * (uint64_t)i + 2,
			       100000);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 10);
	assert_int_equal(st[HOMA_STAT_evicted_half_open], 20);
	/* Many hosts: the total stays at 25. */
	for (i = 0; i < 40; i++)
		inject_request(net, s, 0x0b000100 + (uint32_t)i, 5000, 2,
			       100000);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 25);
	cfg.max_peer_rpcs = 2000;
	cfg.max_half_open = 10000;
	net_free(net);
}

static void homa_ep_limits__peer_buffer_share(void **state)
{
	struct net *net;
	const uint64_t *st;
	int s;

	(void)state;
	net = net_new();
	s = net_add(net, 99, true, 16);          /* 1 MiB pool */
	st = homa_ep_stats(net->ep[s]);
	/* A host holding nothing may start even a large message... */
	inject_request(net, s, 0x0b000001, 5000, 2, 600000);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 1);
	/* ...but not go past half the pool with a second one: that one
	 * waits for buffer space (its data dropped until then). */
	inject_request(net, s, 0x0b000001, 5000, 4, 200000);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 2);
	assert_int_equal(st[HOMA_STAT_drop_peer_limit], 1);
	assert_int_equal(st[HOMA_STAT_buffer_waits], 1);
	/* Another host still gets space, ahead of the waiting request. */
	inject_request(net, s, 0x0b000002, 5000, 2, 200000);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 3);
	assert_int_equal(st[HOMA_STAT_buffer_waits], 1);
	net_free(net);
}

static void homa_ep_limits__max_peers(void **state)
{
	struct net *net;
	const uint64_t *st;
	int s, i;

	(void)state;
	cfg.max_peers = 16;
	net = net_new();
	s = net_add(net, 99, true, 64);
	st = homa_ep_stats(net->ep[s]);
	for (i = 0; i < 20; i++)
		inject_request(net, s, 0x0b000100 + (uint32_t)i, 5000, 2,
			       100000);
	/* Every peer has an RPC: the 17th host onwards is refused. */
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 16);
	assert_int_equal(st[HOMA_STAT_drop_too_many_peers], 4);
	cfg.max_peers = 100000;
	net_free(net);
}

static void homa_ep_timer__half_open_requests_time_out(void **state)
{
	struct net *net = net_new();
	int s = net_add(net, 99, true, 64);

	(void)state;
	inject_request(net, s, 0x0b000001, 5000, 2, 1000000);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 1);
	advance(net, 120000);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 0);
	assert_int_equal(homa_ep_stats(net->ep[s])[
				HOMA_STAT_server_rpcs_timed_out], 1);
	assert_int_equal(homa_pool_free_bpages(homa_ep_pool(net->ep[s])) + 1
			 >= 64, 1);
	net_free(net);
}

static void homa_ep_set_private__only_a_receive_naming_it(void **state)
{
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 8), s = net_add(net, 99, true, 8);
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

/* A client whose request the server holds for 1 s: its RESENDs (each
 * answered by BUSY) back off from every resend_interval (5) ticks to every
 * resend_max_interval (32) ticks (at 5, 10, 20, 40, 72, ...), so about 35
 * instead of about 200, and the RPC stays alive throughout (10 timeouts'
 * worth). */
static void homa_ep_timer__probes_back_off_while_busy(void **state)
{
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 8), s = net_add(net, 99, true, 8);
	const uint64_t *cst, *sst;
	struct homa_msg_ready m;
	uint64_t id;

	(void)state;
	cst = homa_ep_stats(net->ep[c]);
	sst = homa_ep_stats(net->ep[s]);
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
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 8), s = net_add(net, 99, true, 8);
	const uint64_t *cst = homa_ep_stats(net->ep[c]);
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

/* drop_acks - lose every ACK (a client too busy to answer). */
static bool drop_acks(struct net *net, const uint8_t *pkt, size_t len,
		      int from, int to)
{
	(void)net; (void)from; (void)to;
	return len < HOMA_COMMON_HDR_LEN || pkt[11] != HOMA_PKT_ACK;
}

/* A server whose response is never acknowledged asks with NEED_ACK 2, 4,
 * 8, 16, 32, 64 and 96 ticks after it (gaps doubling up to
 * resend_max_interval), not every tick, then forgets the RPC. */
static void homa_ep_timer__need_ack_backs_off(void **state)
{
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 8), s = net_add(net, 99, true, 8);
	const uint64_t *sst;
	uint64_t id;

	(void)state;
	sst = homa_ep_stats(net->ep[s]);
	net->filter = drop_acks;
	id = send_req(net, c, s, 100, 6);
	step(net);
	assert_int_equal(serve(net, s, 10), 1);
	step(net);
	advance(net, 99000);
	print_message("unacknowledged for 99 ticks: NEED_ACKs %llu\n",
		      (unsigned long long)sst[HOMA_STAT_packets_sent_NEED_ACK]);
	assert_true(sst[HOMA_STAT_packets_sent_NEED_ACK] >= 6);
	assert_true(sst[HOMA_STAT_packets_sent_NEED_ACK] <= 9);
	(void)id;
	advance(net, 20000);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 0);
	net_free(net);
}

/* Over max_half_open the request that never sent a second packet goes
 * first, oldest first: one whose client sent more stays even though it is
 * the oldest. */
static void homa_ep_limits__half_open_evicts_unproven_first(void **state)
{
	struct net *net;
	uint8_t pkt[HOMA_DATA_HDR_LEN + 1000];
	union sockaddr_in_union src;
	struct homa_pkt h;
	int s, i;

	(void)state;
	cfg.max_half_open = 4;
	net = net_new();
	s = net_add(net, 99, true, 64);
	inject_request(net, s, 0x0b000001, 5000, 2, 100000);
	/* Its second packet. */
	memset(&h, 0, sizeof(h));
	h.type = HOMA_PKT_DATA;
	h.sport = 5000;
	h.dport = 99;
	h.sender_id = 2;
	h.message_length = 100000;
	h.incoming = 40000;
	h.offset = 1000;
	homa_wire_encode_data_hdr(&h, pkt);
	memset(&src, 0, sizeof(src));
	src.in4.sin_family = AF_INET;
	src.in4.sin_port = htons(5000);
	src.in4.sin_addr.s_addr = htonl(0x0b000001);
	homa_ep_input(net->ep[s], pkt, sizeof(pkt), &src, 0, net->now);
	for (i = 0; i < 20; i++)
		inject_request(net, s, 0x0b000100 + (uint32_t)i, 5000, 2,
			       100000);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 4);
	assert_int_equal(homa_ep_stats(net->ep[s])[HOMA_STAT_evicted_half_open],
			 17);
	/* The proven one is still there: its third packet joins it (had it
	 * been evicted, the packet would open a new request and evict
	 * another). */
	h.offset = 2000;
	homa_wire_encode_data_hdr(&h, pkt);
	homa_ep_input(net->ep[s], pkt, sizeof(pkt), &src, 0, net->now);
	assert_int_equal(homa_ep_stats(net->ep[s])[HOMA_STAT_evicted_half_open],
			 17);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 4);
	cfg.max_half_open = 10000;
	net_free(net);
}

/* inject_ctrl - a control packet of type with sender_id from
 * 10.11.0.1:5000 to endpoint s (no output is collected). */
static void inject_ctrl(struct net *net, int s, uint8_t type, uint64_t id)
{
	uint8_t pkt[HOMA_MAX_CTRL_LEN];
	union sockaddr_in_union src;
	struct homa_pkt h;
	size_t len;

	memset(&h, 0, sizeof(h));
	h.type = type;
	h.sport = 5000;
	h.dport = homa_ep_port(net->ep[s]);
	h.sender_id = id;
	h.length = HOMA_RESEND_ALL;
	len = homa_wire_encode_ctrl(&h, pkt, sizeof(pkt));
	assert_true(len > 0);
	memset(&src, 0, sizeof(src));
	src.in4.sin_family = AF_INET;
	src.in4.sin_port = htons(5000);
	src.in4.sin_addr.s_addr = htonl(0x0a0b0001);
	homa_ep_input(net->ep[s], pkt, len, &src, 0, net->now);
}

/* A burst of 5000 answers (RPC_UNKNOWN to RESENDs for unknown RPCs) is
 * more than the ring's first 2048 entries: it grows and loses none, and
 * they go out in order; with max_ctrl_queue 64 the 65th is dropped. */
static void homa_ep_ctrl__queue_grows_up_to_max(void **state)
{
	uint8_t buf[64 * HOMA_DATA_HDR_LEN];
	struct homa_out out = { .buf = buf };
	struct net *net = net_new();
	int s = net_add(net, 99, true, 8), n = 0;
	const uint64_t *st = homa_ep_stats(net->ep[s]);
	struct homa_pkt p;
	uint64_t i;

	(void)state;
	for (i = 0; i < 5000; i++)
		inject_ctrl(net, s, HOMA_PKT_RESEND, 2 * i + 2);
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
	net = net_new();
	s = net_add(net, 99, true, 8);
	st = homa_ep_stats(net->ep[s]);
	for (i = 0; i < 65; i++)
		inject_ctrl(net, s, HOMA_PKT_RESEND, 2 * i + 2);
	assert_int_equal(st[HOMA_STAT_drop_ctrl_queue_full], 1);
	assert_int_equal(st[HOMA_STAT_packets_sent_RPC_UNKNOWN], 64);
	cfg.max_ctrl_queue = 65536;
	net_free(net);
}

/* count_type - output packets of type endpoint i sends now (all output is
 * taken and dropped). */
static int count_type(struct net *net, int i, uint8_t type)
{
	uint8_t buf[64 * HOMA_DATA_HDR_LEN];
	struct homa_out out = { .buf = buf };
	struct homa_pkt p;
	int n = 0;

	while (homa_ep_output(net->ep[i], net->now, &out))
		if (out.segs == 0 &&
		    homa_wire_decode(buf, out.len, &p) == HOMA_WIRE_OK &&
		    p.type == type)
			n++;
	return n;
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
	net = net_new();
	c = net_add(net, 40000, false, 8);
	srv = net_add(net, 99, true, 8);
	net->filter = drop_all;
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
	assert_int_equal(homa_ep_stats(net->ep[c])
			 [HOMA_STAT_drop_ctrl_queue_full], 0);
	cfg.max_ctrl_queue = 65536;
	cfg.max_peer_probes = saved_probes;
	net_free(net);
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
	net = net_new();
	c = net_add(net, 40000, false, 8);
	srv = net_add(net, 99, true, 8);
	net->filter = drop_all;
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

/* inject_data - DATA of a 100,000-byte request id from 10.0.0.9:5000 to
 * endpoint s: 1,000 bytes at offset, flagged as a retransmission when
 * retransmit is set. */
static void inject_data(struct net *net, int s, uint64_t id, uint32_t offset,
			bool retransmit)
{
	uint8_t pkt[HOMA_DATA_HDR_LEN + 1000];
	union sockaddr_in_union src = from_peer9();
	struct homa_pkt h;

	memset(&h, 0, sizeof(h));
	h.type = HOMA_PKT_DATA;
	h.sport = 5000;
	h.dport = homa_ep_port(net->ep[s]);
	h.sender_id = id;
	h.message_length = 100000;
	h.incoming = 40000;
	h.offset = offset;
	h.retransmit = retransmit;
	homa_wire_encode_data_hdr(&h, pkt);
	memset(pkt + HOMA_DATA_HDR_LEN, 0x5a, 1000);
	homa_ep_input(net->ep[s], pkt, sizeof(pkt), &src, 0, net->now);
}

/* take_resends - pull every packet ep has now; returns how many were
 * RESENDs, the last of them in *last. */
static int take_resends(struct homa_ep *ep, uint64_t now,
			struct homa_pkt *last)
{
	uint8_t buf[2048];
	struct homa_out out = { .buf = buf };
	struct homa_pkt pkt;
	int n = 0;

	while (homa_ep_output(ep, now, &out)) {
		assert_int_equal(homa_wire_decode(buf, out.len, &pkt),
				 HOMA_WIRE_OK);
		if (pkt.type == HOMA_PKT_RESEND) {
			*last = pkt;
			n++;
		}
	}
	return n;
}

/* tick_until_resend - run ep's timer tick after tick until it asks for
 * something (at most 50 ticks); returns the RESENDs of that tick. */
static int tick_until_resend(struct net *net, int s, struct homa_pkt *last)
{
	for (int i = 0; i < 50; i++) {
		int n;

		net->now += 1000000;
		homa_ep_timer(net->ep[s], net->now);
		n = take_resends(net->ep[s], net->now, last);
		if (n)
			return n;
	}
	return 0;
}

/* A receiver whose sender went quiet asks for one packet past the last
 * arrival, not for its whole grant (those bytes may only be waiting in a
 * slow receiver's socket buffer).  The probed packet arriving as original
 * DATA means the rest is on its way: nothing more is asked; arriving as a
 * retransmission of bytes that had not come, it means the rest was lost:
 * the rest of the grant is asked for at once. */
static void homa_ep_timer__tail_probed_one_packet(void **state)
{
	struct net *net;
	struct homa_pkt r;
	size_t seg_max;
	int s;

	(void)state;
	net = net_new();
	s = net_add(net, 99, true, 64);
	seg_max = homa_ep_max_packet(net->ep[s]);
	for (uint32_t off = 0; off < 10000; off += 1000)
		inject_data(net, s, 2, off, false);
	(void)take_resends(net->ep[s], net->now, &r);
	assert_int_equal(tick_until_resend(net, s, &r), 1);
	assert_int_equal(r.offset, 10000);
	assert_true(r.length > 0 && r.length <= seg_max);
	/* The original comes (it was only late): nothing more asked. */
	inject_data(net, s, 2, 10000, false);
	assert_int_equal(take_resends(net->ep[s], net->now, &r), 0);
	/* Quiet again: the next probe, one packet at 11,000. */
	assert_int_equal(tick_until_resend(net, s, &r), 1);
	assert_int_equal(r.offset, 11000);
	assert_true(r.length <= seg_max);
	/* It comes as a retransmission: the rest of the grant was lost. */
	inject_data(net, s, 2, 11000, true);
	assert_int_equal(take_resends(net->ep[s], net->now, &r), 1);
	assert_int_equal(r.offset, 12000);
	assert_true(r.length >= 40000 - 12000);
	/* A second retransmitted packet asks for nothing more. */
	inject_data(net, s, 2, 12000, true);
	assert_int_equal(take_resends(net->ep[s], net->now, &r), 0);
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
	struct net *net = net_new();
	int c = net_add(net, 40000, false, 64), s = net_add(net, 99, true, 64);
	struct homa_msg_ready m;
	uint8_t pkt[HOMA_MAX_CTRL_LEN], *data, *want;
	struct homa_pkt h;
	const uint64_t *st = homa_ep_stats(net->ep[c]);
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
	homa_ep_input(net->ep[c], pkt, len, &net->addr[s], 0, net->now);
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
	net = net_new();
	c = net_add(net, 40000, false, 64);
	s = net_add(net, 99, true, 64);
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
	assert_true(homa_ep_stats(net->ep[s])[HOMA_STAT_drop_half_open_busy] >
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
	net = net_new();
	s = net_add(net, 99, true, 64);
	cfg.max_half_open = 10000;
	st = homa_ep_stats(net->ep[s]);
	/* Hosts a and b each open a request and send its second packet. */
	inject_request_at(net, s, a, 5000, 2, 100000, 0);
	inject_request_at(net, s, a, 5000, 2, 100000, 1000);
	inject_request_at(net, s, b, 5000, 2, 100000, 0);
	inject_request_at(net, s, b, 5000, 2, 100000, 1000);
	/* Host c's request finds both moving: it is dropped. */
	inject_request(net, s, c, 5000, 2, 100000);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 2);
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
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 2);
	inject_request_at(net, s, b, 5000, 2, 100000, 9000);
	assert_int_equal(homa_ep_num_rpcs(net->ep[s]), 2);
	assert_int_equal(st[HOMA_STAT_evicted_half_open], 1);
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
		cmocka_unit_test(
			homa_ep_input__deferred_copy_made_before_receive),
		cmocka_unit_test(
			homa_ep_input__deferred_copies_overflow_in_order),
		cmocka_unit_test(homa_ep_shutdown__deferred_copies_made_first),
		cmocka_unit_test(homa_ep_output__gathered_run),
		cmocka_unit_test(homa_ep_rpc__many_outstanding),
		cmocka_unit_test(homa_ep_rpc__loss_recovery),
		cmocka_unit_test(homa_ep_timer__client_times_out),
		cmocka_unit_test(homa_ep_timer__busy_keeps_slow_server_alive),
		cmocka_unit_test(homa_ep_abort__with_and_without_error),
		cmocka_unit_test(homa_ep_pool__messages_wait_for_space),
		cmocka_unit_test(homa_ep_input__malformed_counted),
		cmocka_unit_test(homa_ep_input__wrong_peer_response_dropped),
		cmocka_unit_test(homa_ep_shutdown__fails_everything),
		cmocka_unit_test(homa_ep_output__pacer_holds_long_messages),
		cmocka_unit_test(homa_ep_output__dont_throttle_flag),
		cmocka_unit_test(homa_ep_output__loopback_peer_unpaced),
		cmocka_unit_test(homa_ep_limits__half_open_per_peer_and_total),
		cmocka_unit_test(homa_ep_limits__peer_buffer_share),
		cmocka_unit_test(homa_ep_limits__max_peers),
		cmocka_unit_test(homa_ep_timer__half_open_requests_time_out),
		cmocka_unit_test(homa_ep_set_private__only_a_receive_naming_it),
		cmocka_unit_test(homa_ep_timer__probes_back_off_while_busy),
		cmocka_unit_test(
			homa_ep_timer__alive_peer_keeps_silent_rpc_waiting),
		cmocka_unit_test(homa_ep_timer__probes_per_host_budget),
		cmocka_unit_test(homa_ep_timer__need_ack_backs_off),
		cmocka_unit_test(homa_ep_limits__half_open_evicts_unproven_first),
		cmocka_unit_test(homa_ep_ctrl__queue_grows_up_to_max),
		cmocka_unit_test(
			homa_ep_timer__probes_wait_while_ctrl_queue_half_full),
		cmocka_unit_test(homa_ep_timer__tail_probed_one_packet),
		cmocka_unit_test(
			homa_ep_input__resend_during_response_restarts),
		cmocka_unit_test(
			homa_ep_limits__half_open_full_of_moving_requests),
		cmocka_unit_test(
			homa_ep_limits__half_open_evicts_stalled_not_moving),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
