// SPDX-License-Identifier: BSD-2-Clause
/*
 * The in-memory network and packet builders the endpoint's unit tests
 * share: see ep_test_util.h.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "ep_test_util.h"
#include "homa_ep_internal.h"

struct homa_config cfg;

/* The networks net_new made that net_free has not freed, newest first. */
static struct net *live_nets;

int ep_default_settings(void **state)
{
	(void)state;
	homa_config_defaults(&cfg);
	return 0;
}

int ep_free_networks(void **state)
{
	(void)state;
	while (live_nets)
		net_free(live_nets);
	return 0;
}

/* Packets the network's queue holds. */
#define QCAP 200000

/* A packet in flight. */
struct flight {
	int to;
	union sockaddr_in_union src;
	uint32_t len;
	uint8_t prio;
	uint8_t *data;
};

/* region_alloc - a page-aligned region of n bpages (the caller frees
 * it). */
static void *region_alloc(int n)
{
	void *p = NULL;

	assert_int_equal(posix_memalign(&p, 4096,
					(size_t)n * HOMA_BPAGE_SIZE), 0);
	return p;
}

int net_add(struct net *net, uint16_t port, bool server, int bpages)
{
	struct homa_ep_params p = { net->cfg, AF_INET, port, server,
				    1000 + 1000 * (uint64_t)net->n, 2, 0,
				    net->copier, net->copier_ctx };
	int i;

	assert_true(net->n < NET_MAX_EPS);
	i = net->n++;
	net->ep[i] = homa_ep_create(&p);
	assert_non_null(net->ep[i]);
	net->addr[i].in4.sin_family = AF_INET;
	net->addr[i].in4.sin_port = htons(port);
	net->addr[i].in4.sin_addr.s_addr = htonl(0x0a000001 + i);
	if (bpages) {
		net->region[i] = region_alloc(bpages);
		net->bpages[i] = (uint32_t)bpages;
		assert_int_equal(homa_pool_set_region(epi(net->ep[i]).pool,
				 net->region[i],
				 (size_t)bpages * HOMA_BPAGE_SIZE), 0);
	}
	return i;
}

struct net *net_new(const struct homa_config *cfg)
{
	struct net *net = calloc(1, sizeof(*net));

	assert_non_null(net);
	net->q = calloc(QCAP, sizeof(*net->q));
	assert_non_null(net->q);
	net->cfg = cfg;
	net->now = 1000000;
	net->next_live = live_nets;
	live_nets = net;
	return net;
}

/* forget_live - take net off the list of networks not freed yet. */
static void forget_live(struct net *net)
{
	struct net **p = &live_nets;

	while (*p && *p != net)
		p = &(*p)->next_live;
	if (*p)
		*p = net->next_live;
}

void net_free(struct net *net)
{
	int i;

	forget_live(net);

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

struct net *net_pair(const struct homa_config *settings, int bpages, int *c,
		     int *s)
{
	struct net *net = net_new(settings);

	*c = net_add(net, 40000, false, bpages);
	*s = net_add(net, 99, true, bpages);
	return net;
}

struct net *net_server(const struct homa_config *settings, int bpages,
		       int *s)
{
	struct net *net = net_new(settings);

	*s = net_add(net, 99, true, bpages);
	return net;
}

struct net *dead_pair(const struct homa_config *settings, int *c, int *s)
{
	struct net *net = net_pair(settings, 8, c, s);

	net->filter = drop_all;
	return net;
}

/* find_ep - index of the endpoint with address a, or -1. */
static int find_ep(struct net *net, const union sockaddr_in_union *a)
{
	int i;

	for (i = 0; i < net->n; i++)
		if (net->addr[i].in4.sin_addr.s_addr ==
		    a->in4.sin_addr.s_addr &&
		    net->addr[i].in4.sin_port == a->in4.sin_port)
			return i;
	return -1;
}

/* check_sent - packet pkt[0..len) that endpoint i sent at out->priority
 * fits its largest output, has a priority 0..7 and decodes. */
static void check_sent(struct net *net, int i, const struct homa_out *out,
		       const uint8_t *pkt, size_t len)
{
	struct homa_pkt decoded;

	assert_true(len <= epi(net->ep[i]).max_output);
	assert_true(out->priority < 8);
	assert_int_equal(homa_wire_decode(pkt, len, &decoded), HOMA_WIRE_OK);
}

/* enqueue - check packet pkt[0..len) from endpoint i (check_sent) and
 * queue it (unless dropped: to an address no endpoint has, or by the
 * filter). */
static void enqueue(struct net *net, int i, const struct homa_out *out,
		    const uint8_t *pkt, size_t len)
{
	int to = find_ep(net, &out->dest);
	struct flight *f;

	check_sent(net, i, out, pkt, len);
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
	assert_non_null(f->data);
	memcpy(f->data, pkt, len);
	net->qlen++;
}

/* enqueue_run - queue each packet of the run in out (whole packets back
 * to back at out->frames, or their headers there and their payload at
 * out->payload). */
static void enqueue_run(struct net *net, int i, const struct homa_out *out)
{
	size_t full = HOMA_DATA_HDR_LEN + out->seg;
	uint8_t *one = malloc(full);

	assert_non_null(one);
	assert_true(out->segs <= net->gather_segs);
	assert_int_equal(out->len,
			 out->segs * HOMA_DATA_HDR_LEN + out->payload_len);
	assert_true(out->payload_len > (out->segs - 1) * out->seg &&
		    out->payload_len <= out->segs * out->seg);
	for (uint32_t k = 0; k < out->segs; k++) {
		uint32_t off = k * out->seg, left = out->payload_len - off;
		uint32_t n = left < out->seg ? left : out->seg;
		const uint8_t *frame = out->frames + k * full;

		if (out->payload) {
			memcpy(one, frame, HOMA_DATA_HDR_LEN);
			memcpy(one + HOMA_DATA_HDR_LEN, out->payload + off, n);
			frame = one;
		}
		enqueue(net, i, out, frame, HOMA_DATA_HDR_LEN + n);
	}
	free(one);
}

/* collect - move every packet endpoint i wants to send into the queue. */
static void collect(struct net *net, int i)
{
	uint8_t buf[64 * HOMA_DATA_HDR_LEN];
	struct homa_out out = { .buf = buf, .max_segs = net->gather_segs };

	while (homa_ep_output(net->ep[i], net->now, &out)) {
		if (out.segs > 0)
			enqueue_run(net, i, &out);
		else
			enqueue(net, i, &out, buf, out.len);
	}
}

int deliver_some(struct net *net, int max)
{
	int i, n = 0;

	for (i = 0; i < net->n; i++)
		collect(net, i);
	while (net->qlen && n < max) {
		struct flight f = net->q[net->qhead];

		net->qhead = (net->qhead + 1) % QCAP;
		net->qlen--;
		/* In defer mode the receiver's output is pulled (its
		 * GRANTs) before the copies are made, as the socket layer
		 * does before its next read, and the bytes wiped. */
		if (net->defer_mode)
			pkt_in_defer(net->ep[f.to], f.data, f.len, &f.src,
				     net->now);
		else
			pkt_in(net->ep[f.to], f.data, f.len, &f.src, 0,
			       net->now);
		collect(net, f.to);
		if (net->defer_mode) {
			struct homa_lent_places lp;

			homa_ep_lent_places(net->ep[f.to], &lp);
			memset(f.data, 0xee, f.len);
		}
		free(f.data);
		n++;
		net->delivered++;
	}
	return n;
}

int deliver_all(struct net *net)
{
	return deliver_some(net, INT_MAX);
}

void settle(struct net *net)
{
	int rounds = 0;

	while (deliver_all(net) > 0) {
		net->now += 20000;
		assert_true(++rounds < 100000);
	}
}

void tick_all(struct net *net)
{
	int i;

	net->now += (uint64_t)net->cfg->tick_usecs * 1000;
	for (i = 0; i < net->n; i++)
		homa_ep_timer(net->ep[i], net->now);
	settle(net);
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

int step(struct net *net)
{
	int n = deliver_all(net);
	uint64_t wake;

	while ((wake = pacer_wake(net)) != 0) {
		net->now = wake;
		n += deliver_all(net);
	}
	return n;
}

void advance(struct net *net, uint64_t us)
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

void tick_ep(struct net *net, int i)
{
	net->now += (uint64_t)net->cfg->tick_usecs * 1000;
	homa_ep_timer(net->ep[i], net->now);
}

void fill(uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 7 + seed * 13 + (i >> 8)) & 0xff);
}

uint8_t *gather(struct net *net, int i, const struct homa_msg_ready *m)
{
	uint8_t *out = malloc(m->length ? m->length : 1);
	uint32_t done = 0, k;

	assert_non_null(out);
	assert_int_equal(m->num_bpages,
			 (m->length + HOMA_BPAGE_SIZE - 1) / HOMA_BPAGE_SIZE);
	for (k = 0; k < m->num_bpages; k++) {
		uint32_t n = m->length - done < HOMA_BPAGE_SIZE ?
			     m->length - done : HOMA_BPAGE_SIZE;

		assert_true((uint64_t)m->bpage_offsets[k] + n <=
			    (uint64_t)net->bpages[i] * HOMA_BPAGE_SIZE);
		memcpy(out + done, (uint8_t *)net->region[i] +
		       m->bpage_offsets[k], n);
		done += n;
	}
	assert_int_equal(done, m->length);
	return out;
}

uint64_t send_req(struct net *net, int c, int s, uint32_t len, uint32_t seed)
{
	uint8_t *buf = malloc(len);
	struct iovec iov = { buf, len };
	uint64_t id = 0;

	assert_non_null(buf);
	fill(buf, len, seed);
	assert_int_equal(homa_ep_send_request(net->ep[c], &net->addr[s], &iov,
					      1, seed, 0, &id, net->now), 0);
	free(buf);
	assert_true(id != 0 && (id & 1) == 0);
	return id;
}

int serve(struct net *net, int s, uint32_t resp_len)
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
	assert_non_null(resp);
	fill(resp, resp_len, seed);
	iov.iov_base = resp;
	iov.iov_len = resp_len;
	assert_int_equal(homa_ep_send_reply(net->ep[s], &m.peer, m.id, &iov, 1, 0,
					    net->now), 0);
	free(resp);
	return 1;
}

uint32_t request_seed(uint32_t seed)
{
	uint8_t b;

	fill(&b, 1, seed);
	return b;
}

void check_rpc(struct net *net, int c, int s, uint32_t req_len,
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
	assert_non_null(want);
	fill(want, resp_len, request_seed(seed));
	assert_memory_equal(data, want, resp_len);
	free(want);
	free(data);
	assert_int_equal(homa_ep_return_bpages(net->ep[c], m.bpage_offsets,
					       m.num_bpages, 0, net->now), 0);
}

uint64_t hold_request(struct net *net, int c, int s, struct homa_msg_ready *m)
{
	uint64_t id = send_req(net, c, s, 100, 5);

	step(net);
	assert_int_equal(homa_ep_receive(net->ep[s], 0, HOMA_RECVMSG_REQUEST,
					 m), 0);
	homa_ep_return_bpages(net->ep[s], m->bpage_offsets, m->num_bpages, 0,
			      net->now);
	return id;
}

bool drop_all(struct net *net, const uint8_t *pkt, size_t len, int from,
	      int to)
{
	(void)net; (void)pkt; (void)len; (void)from; (void)to;
	return false;
}

bool drop_every_7th(struct net *net, const uint8_t *pkt, size_t len,
		    int from, int to)
{
	(void)pkt; (void)len; (void)from; (void)to;
	return ++net->counter % 7 != 0;
}

uint64_t ep_counter(struct net *net, int i, const char *name)
{
	int k;

	for (k = 0; k < HOMA_STAT_COUNT; k++)
		if (strcmp(homa_stat_name((enum homa_stat)k), name) == 0)
			return epi(net->ep[i]).stats[k];
	fail_msg("no counter is called %s", name);
	return 0;
}

uint32_t used_bpages(struct net *net, int i)
{
	struct homa_pool *pool = epi(net->ep[i]).pool;

	return homa_pool_num_bpages(pool) - homa_pool_free_bpages(pool);
}

/* ---- single packets ---- */

size_t data_packet(uint8_t *pkt, struct homa_pkt *h, uint32_t len)
{
	h->type = HOMA_PKT_DATA;
	homa_wire_encode_data_hdr(h, pkt);
	for (uint32_t k = 0; k < len; k++)
		pkt[HOMA_DATA_HDR_LEN + k] = (uint8_t)((h->offset + k) & 0xff);
	return HOMA_DATA_HDR_LEN + len;
}

void data_pkt(struct net *net, int s, uint8_t *pkt, uint64_t id,
	      uint32_t message_length, uint32_t offset, uint32_t len)
{
	struct homa_pkt h;

	memset(&h, 0, sizeof(h));
	h.sport = 5000;
	h.dport = epi(net->ep[s]).port;
	h.sender_id = id;
	h.message_length = message_length;
	h.incoming = message_length;
	h.offset = offset;
	data_packet(pkt, &h, len);
}

union sockaddr_in_union from_peer9(void)
{
	return host_addr(0x0a000009, 5000);
}

void check_pattern(struct net *net, int s, uint32_t length)
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

int deferred_first_packet(struct net *net, uint8_t *pkt,
			  uint32_t message_length)
{
	union sockaddr_in_union src = from_peer9();
	int s = net_add(net, 99, true, 4);

	memset(net->region[s], 0, 4 * (size_t)HOMA_BPAGE_SIZE);
	data_pkt(net, s, pkt, 2, message_length, 0, 1000);
	pkt_in_defer(net->ep[s], pkt, HOMA_DATA_HDR_LEN + 1000, &src,
		     net->now);
	return s;
}

void inject_request_at(struct net *net, int s, uint32_t src_ip,
		       uint16_t sport, uint64_t id, uint32_t length,
		       uint32_t offset)
{
	uint8_t pkt[HOMA_DATA_HDR_LEN + 1000];
	union sockaddr_in_union src = host_addr(src_ip, sport);
	struct homa_pkt h;
	size_t len;

	memset(&h, 0, sizeof(h));
	h.sport = sport;
	h.dport = epi(net->ep[s]).port;
	h.sender_id = id;
	h.message_length = length;
	h.incoming = length < 40000 ? length : 40000;
	h.offset = offset;
	len = data_packet(pkt, &h, length - offset < 1000 ?
			  length - offset : 1000);
	pkt_in(net->ep[s], pkt, len, &src, 0, net->now);
}

void inject_request(struct net *net, int s, uint32_t src_ip, uint16_t sport,
		    uint64_t id, uint32_t length)
{
	inject_request_at(net, s, src_ip, sport, id, length, 0);
}

void requests_from_hosts(struct net *net, int s, uint32_t n, uint32_t length)
{
	for (uint32_t k = 0; k < n; k++)
		inject_request(net, s, 0x0b000100 + k, 5000, 2, length);
}

union sockaddr_in_union host_addr(uint32_t ip, uint16_t port)
{
	union sockaddr_in_union a;

	memset(&a, 0, sizeof(a));
	a.in4.sin_family = AF_INET;
	a.in4.sin_port = htons(port);
	a.in4.sin_addr.s_addr = htonl(ip);
	return a;
}

void inject_pkt(struct net *net, int s, const union sockaddr_in_union *src,
		struct homa_pkt *p)
{
	uint8_t buf[HOMA_MAX_CTRL_LEN];
	size_t len;

	p->sport = ntohs(src->in4.sin_port);
	p->dport = epi(net->ep[s]).port;
	len = homa_wire_encode_ctrl(p, buf, sizeof(buf));
	assert_true(len >= HOMA_COMMON_HDR_LEN);
	pkt_in(net->ep[s], buf, len, src, 0, net->now);
}

void inject_simple(struct net *net, int s, const union sockaddr_in_union *src,
		   uint8_t type, uint64_t sender_id)
{
	struct homa_pkt p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	p.sender_id = sender_id;
	p.length = HOMA_RESEND_ALL;
	inject_pkt(net, s, src, &p);
}

bool next_out(struct net *net, int i, struct sent_pkt *s)
{
	struct homa_out out = { .buf = s->buf };

	if (!homa_ep_output(net->ep[i], net->now, &out))
		return false;
	assert_true(out.len <= sizeof(s->buf));
	assert_int_equal(homa_wire_decode(s->buf, out.len, &s->pkt),
			 HOMA_WIRE_OK);
	s->dest = out.dest;
	s->priority = out.priority;
	return true;
}

bool next_out_paced(struct net *net, int i, struct sent_pkt *s)
{
	int waits = 0;

	while (!next_out(net, i, s)) {
		uint64_t wake = epi(net->ep[i]).pacer_wake;

		if (wake == 0)
			return false;
		assert_true(++waits < 100000);
		net->now = wake > net->now ? wake : net->now + 1000;
	}
	return true;
}

int count_type(struct net *net, int i, uint8_t type)
{
	struct sent_pkt s;
	int n = 0;

	while (next_out(net, i, &s))
		n += s.pkt.type == type;
	return n;
}

struct homa_rpc *server_rpc(struct net *net, int i, uint64_t client_id,
			    const union sockaddr_in_union *src)
{
	return homa_rpc_find_server(&net->ep[i]->rpcs, client_id ^ 1, src);
}

bool same_addr(const union sockaddr_in_union *a,
	       const union sockaddr_in_union *b)
{
	return a->in4.sin_addr.s_addr == b->in4.sin_addr.s_addr &&
	       a->in4.sin_port == b->in4.sin_port;
}

struct homa_ep_info epi(const struct homa_ep *ep)
{
	struct homa_ep_info info;

	homa_ep_info(ep, &info);
	return info;
}

/* batch_of_one - a batch of the one datagram buf[0..len) from src that
 * leaves ep's backlog state as it is. */
static void batch_of_one(struct homa_ep *ep, const uint8_t *buf, size_t len,
			 const union sockaddr_in_union *src,
			 struct homa_rx_pkt *in, struct homa_rx_batch *b)
{
	memset(in, 0, sizeof(*in));
	memset(b, 0, sizeof(*b));
	in->buf = buf;
	in->len = len;
	if (src)
		in->src = *src;
	in->place = -1;
	b->pkts = in;
	b->n = 1;
	b->behind = ep->input_behind;
}

void pkt_in(struct homa_ep *ep, const uint8_t *buf, size_t len,
	    const union sockaddr_in_union *src, int core, uint64_t now)
{
	struct homa_rx_pkt in;
	struct homa_rx_batch b;

	batch_of_one(ep, buf, len, src, &in, &b);
	homa_ep_input(ep, &b, core, now);
}

void pkt_in_defer(struct homa_ep *ep, const uint8_t *buf, size_t len,
		  const union sockaddr_in_union *src, uint64_t now)
{
	struct homa_rx_pkt in;
	struct homa_rx_batch b;

	batch_of_one(ep, buf, len, src, &in, &b);
	b.defer_copies = true;
	homa_ep_input(ep, &b, 0, now);
}

void backlog_in(struct homa_ep *ep, bool behind)
{
	struct homa_rx_batch b;

	memset(&b, 0, sizeof(b));
	b.behind = behind;
	homa_ep_input(ep, &b, 0, 0); /* no packet: the time is not read */
}

uint64_t lend_req(struct net *net, int c, int s, uint8_t *src, uint32_t len,
		  uint32_t seed)
{
	struct iovec iov[2] = { { src, 0 }, { src, len } };
	uint64_t id = 0;

	fill(src, len, seed);
	assert_int_equal(homa_ep_send_request(net->ep[c], &net->addr[s], iov,
					      2, seed, HOMA_EP_SEND_LENT, &id,
					      net->now), 0);
	return id;
}
