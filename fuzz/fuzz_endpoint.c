/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_endpoint - libFuzzer target for the whole receive path of the
 * sans-IO endpoint (homa_ep_input and everything it reaches), interleaved
 * with output, the timer and the application's calls.
 *
 * Two endpoints: a server S (10.0.0.1 port 99) and a client C (10.0.0.2
 * port 40000), each with a buffer region, joined by an in-memory network.
 * The input is a settings prologue and then a sequence of operations:
 *
 *   prologue (4 bytes): region sizes and a few settings (max_gaps,
 *     unsched_bytes, max_rpcs, timeouts and the backoff of RESENDs,
 *     pacer off, and the hostile-peer
 *     limits max_half_open, max_peer_rpcs, max_peers, peer_buffer_percent
 *     when the core has them), all set by name and only when valid;
 *   op % 16 == 0..4  a raw packet: target, source, time step, length u16
 *                    and that many bytes; the ports and the RPC id may be
 *                    patched in so that raw bytes reach deep states;
 *           5..8     a packet built from fields: any type (or an unknown
 *                    one), each field from the input, an id from the live
 *                    RPCs or the input, truncated to a chosen length;
 *           9        deliver what the endpoints send, losing packets by a
 *                    bit mask, in batches of STASH packets as the socket
 *                    layer reads them: the payload copies of a batch are
 *                    deferred (homa_rx_batch.defer_copies) while both
 *                    endpoints go on producing output, then made, then
 *                    the batch's bytes are wiped;
 *          10        advance time by some ticks, running the timers and
 *                    delivering;
 *          11        the client sends a request (to S, or to an address
 *                    where nobody answers);
 *          12        the server takes a request and replies, or keeps it;
 *          13        the server replies to a kept request;
 *          14        the client takes a response (by id or any);
 *          15        bpages go back (some of ours, or offsets we do not
 *                    own), or an abort, or (rarely) a shutdown.
 *   Sources: the genuine peer, its host with another port, another host
 *   with its port, many other hosts, and an IPv6 address.
 *
 * Checked (abort() on violation), besides ASan/UBSan/LSan:
 *   - every packet an endpoint emits fits homa_ep_info.max_packet, has a
 *     priority 0..7, decodes as a valid Homa packet and carries the
 *     endpoint's port and the destination's port;
 *   - every delivered message has 1..1,000,000 bytes in the documented
 *     bpage layout inside the region (its bytes are read); an error
 *     carries no bytes;
 *   - homa_ep_info.num_rpcs never exceeds max_rpcs; the pool's app-owned
 *     count equals the offsets the harness holds; homa_ep_return_bpages of an
 *     offset not owned returns -EINVAL and takes nothing;
 *   - liveness at the end (unless shut down): with no more hostile input
 *     and the application answering everything, every RPC of both
 *     endpoints disappears within a bounded number of ticks (40
 *     timeouts and one alive_timeout_ticks), and then a fresh RPC
 *     completes with exactly the bytes sent.
 * Everything is destroyed at the end (LeakSanitizer checks the frees).
 *
 * Debugging: built with -DFUZZ_ENDPOINT_TRACE, the target prints each
 * endpoint's nonzero counters at the end of an input and calls
 * fuzz_trace_stuck(server, client), which the debugging program defines
 * (with homa_ep_internal.h it can list the RPCs), before a liveness check
 * fails.
 *
 * Build and run (from the repository root):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc/core \
 *       fuzz/fuzz_endpoint.c src/core/homa_[a-z]*.c -o fuzz_endpoint
 *   cp -R fuzz/corpus/endpoint /tmp/ep && ./fuzz_endpoint /tmp/ep
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* posix_memalign (the build defines it too) */
#endif
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "homa_endpoint.h"
#include "homa_wire.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef FUZZ_ENDPOINT_TRACE
/* Debugging aid, defined by the program that builds the trace variant:
 * called when the liveness check is about to fail. */
void fuzz_trace_stuck(struct homa_ep *srv, struct homa_ep *cli);
#endif

#define SRV 0
#define CLI 1
#define SRV_PORT 99
#define CLI_PORT 40000
#define MAX_REGION_BPAGES 48
#define IDS 8             /* client request ids remembered */
#define KEPT 16           /* requests the server application holds */
#define HELD 512          /* bpage offsets the application holds */
#define MAX_DELIVER 4000  /* packets per delivery step */
#define STASH 8           /* packets delivered with deferred copies */
#define TICK_NS 1000000ull

/* A request the server application holds (in service). */
struct kept {
	uint64_t id;
	union sockaddr_in_union peer;
};

/* The world of one input. */
struct world {
	struct homa_config cfg;
	struct homa_ep *ep[2];
	union sockaddr_in_union addr[2];
	uint8_t *region[2];
	uint32_t region_bpages[2];
	uint8_t *outbuf[2];           /* homa_ep_info.max_packet bytes each */
	uint64_t now;
	bool shut;
	bool behind[2];               /* each side's last word on its backlog
				       * (homa_rx_batch.behind) */
	uint64_t ids[IDS];            /* recent client request ids */
	uint32_t next_id;
	struct kept kept[KEPT];
	uint32_t num_kept;
	uint32_t held[2][HELD];       /* bpages the application owns */
	uint32_t num_held[2];
	uint64_t max_rpcs;
	uint32_t sink;                /* bytes read, so reads are not dead */
};

/* Regions, the message source and the delivered packets' bytes (STASH
 * buffers of STASH_BYTES), allocated once and reused. */
static uint8_t *regions[2];
static uint8_t *pattern;
#define STASH_BYTES 65536
static uint8_t *stash;

/* fill_byte - byte i of a message with seed s. */
static uint8_t fill_byte(uint32_t s, uint32_t i)
{
	return (uint8_t)((i * 131u + s * 7u + (i >> 9)) & 0xff);
}

/* fill_pattern - make pattern hold message s in full (slow path). */
static void fill_pattern(uint32_t s, uint32_t len)
{
	for (uint32_t j = 0; j < len; j++)
		pattern[j] = fill_byte(s, j);
}

/* global_init - the regions and a 1 MB pattern (once per process). */
static void global_init(void)
{
	if (pattern)
		return;
	for (int i = 0; i < 2; i++) {
		void *p = NULL;

		check(posix_memalign(&p, 4096, (size_t)MAX_REGION_BPAGES *
				     HOMA_BPAGE_SIZE) == 0);
		regions[i] = p;
	}
	pattern = malloc(HOMA_MAX_MESSAGE_LENGTH);
	check(pattern != NULL);
	stash = malloc((size_t)STASH * STASH_BYTES);
	check(stash != NULL);
	fill_pattern(1, HOMA_MAX_MESSAGE_LENGTH);
}

/* set_opt - set a setting when the core has it and the value is valid
 * (names the core does not have yet are ignored). */
static void set_opt(struct homa_config *cfg, const char *name, int64_t v)
{
	(void)homa_config_set_value(cfg, name, v);
}

/* read_prologue - settings and region sizes from the first 4 bytes. */
static void read_prologue(struct world *w, struct reader *r)
{
	/* At least 17 bpages: a 1,000,000-byte message always fits (a
	 * message larger than the whole region is a separate issue, see the
	 * hostile-peer unit tests). */
	static const uint32_t bpages[4] = { 17, 18, 24, MAX_REGION_BPAGES };
	uint8_t a = rd_u8(r), b = rd_u8(r), c = rd_u8(r), d = rd_u8(r);
	int64_t v;

	homa_config_defaults(&w->cfg);
	w->region_bpages[SRV] = bpages[a & 3];
	w->region_bpages[CLI] = bpages[(a >> 2) & 3];
	if (a & 0x10)
		set_opt(&w->cfg, "max_gaps", 1 + (b & 7));
	if (a & 0x20)
		set_opt(&w->cfg, "unsched_bytes", 1 + (int64_t)(b >> 3) * 2000);
	if (a & 0x40)
		set_opt(&w->cfg, "max_rpcs", 16 + (c & 15));
	if (a & 0x80)
		set_opt(&w->cfg, "flags", HOMA_FLAG_DONT_THROTTLE);
	/* Short timeouts make the liveness check cheap; the silence allowed
	 * after a BUSY (or while the peer makes progress on other RPCs) is
	 * 2 to 5 timeouts. */
	set_opt(&w->cfg, "timeout_ticks", 10 + (c >> 4) * 4);
	set_opt(&w->cfg, "alive_timeout_ticks",
		(10 + (c >> 4) * 4) * (2 + ((b ^ d) & 3)));
	set_opt(&w->cfg, "resend_ticks", 1 + (d & 3));
	set_opt(&w->cfg, "resend_interval", 1 + ((d >> 2) & 3));
	/* The backoff of RESENDs and NEED_ACKs (capped at a third of the
	 * timeout by the core). */
	set_opt(&w->cfg, "resend_max_interval", 1 + ((b ^ c) & 15));
	if (d & 0x10)
		set_opt(&w->cfg, "max_half_open", 1 + (b & 15));
	if (d & 0x20)
		set_opt(&w->cfg, "max_peer_rpcs", 1 + (b >> 4));
	if (d & 0x40)
		set_opt(&w->cfg, "max_peers", 16);
	if (d & 0x80)
		set_opt(&w->cfg, "peer_buffer_percent", 1 + (c & 63));
	check(homa_config_get_value(&w->cfg, "max_rpcs", &v) == 0);
	w->max_rpcs = (uint64_t)v;
}

/* epi - homa_ep_info of ep, by value. */
static struct homa_ep_info epi(const struct homa_ep *ep)
{
	struct homa_ep_info info;

	homa_ep_info(ep, &info);
	return info;
}

/* pkt_in - the datagram buf[0..len) from src into endpoint t of w as a
 * batch of one (its copies deferred when defer), with t's backlog state
 * as it is. */
static void pkt_in(struct world *w, int t, const uint8_t *buf, size_t len,
		   const union sockaddr_in_union *src, int core, bool defer)
{
	struct homa_rx_pkt in = { .buf = buf, .len = len, .place = -1 };
	struct homa_rx_batch b = { .pkts = &in, .n = 1 };

	if (src)
		in.src = *src;
	b.behind = w->behind[t];
	b.defer_copies = defer;
	homa_ep_input(w->ep[t], &b, core, w->now);
}

/* backlog_in - an empty batch into endpoint t of w (making the copies
 * earlier batches deferred) that says whether packets wait (behind). */
static void backlog_in(struct world *w, int t, bool behind)
{
	struct homa_rx_batch b = { .behind = behind };

	w->behind[t] = behind;
	homa_ep_input(w->ep[t], &b, 0, w->now);
}

/* world_init - both endpoints with their regions. */
static void world_init(struct world *w, struct reader *r)
{
	memset(w, 0, sizeof(*w));
	read_prologue(w, r);
	w->now = 1000000000ull;
	for (int i = 0; i < 2; i++) {
		struct homa_ep_params p = {
			.cfg = &w->cfg, .family = AF_INET,
			.port = i == SRV ? SRV_PORT : CLI_PORT,
			.is_server = i == SRV,
			.first_client_id = 1000 + 5000 * (uint64_t)i,
			.num_cores = 2,
		};

		w->ep[i] = homa_ep_create(&p);
		check(w->ep[i] != NULL);
		w->addr[i].in4.sin_family = AF_INET;
		w->addr[i].in4.sin_port = htons(p.port);
		w->addr[i].in4.sin_addr.s_addr = htonl(0x0a000001 + i);
		w->region[i] = regions[i];
		check(homa_pool_set_region(epi(w->ep[i]).pool, regions[i],
					   (size_t)w->region_bpages[i] *
					   HOMA_BPAGE_SIZE) == 0);
		w->outbuf[i] = malloc(epi(w->ep[i]).max_packet);
		check(w->outbuf[i] != NULL);
	}
}

static void world_free(struct world *w)
{
	for (int i = 0; i < 2; i++) {
#ifdef FUZZ_ENDPOINT_TRACE
		/* Debugging aid: the nonzero counters of each endpoint. */
		const uint64_t *st = epi(w->ep[i]).stats;

		fprintf(stderr, "%s:", i == SRV ? "server" : "client");
		for (int k = 0; k < HOMA_STAT_COUNT; k++)
			if (st[k])
				fprintf(stderr, " %s=%llu",
					homa_stat_name((enum homa_stat)k),
					(unsigned long long)st[k]);
		fprintf(stderr, "\n");
#endif
		homa_ep_destroy(w->ep[i]);
		free(w->outbuf[i]);
	}
}

/* check_state - bounds that hold after every operation. */
static void check_state(struct world *w)
{
	for (int i = 0; i < 2; i++) {
		struct homa_pool *pool = epi(w->ep[i]).pool;

		check(epi(w->ep[i]).num_rpcs <= w->max_rpcs);
		check(homa_pool_app_owned(pool) == w->num_held[i]);
		check(homa_pool_free_bpages(pool) <=
		      homa_pool_num_bpages(pool));
	}
}

/* pick_source - the sender address of an injected packet for target t. */
static void pick_source(struct world *w, int t, uint8_t choice, uint8_t x,
			union sockaddr_in_union *src)
{
	const union sockaddr_in_union *peer = &w->addr[1 - t];

	memset(src, 0, sizeof(*src));
	src->in4.sin_family = AF_INET;
	switch (choice & 7) {
	case 0:
	case 1:
		*src = *peer;                              /* genuine */
		break;
	case 2:                                            /* other port */
		*src = *peer;
		src->in4.sin_port = htons((uint16_t)(ntohs(peer->in4.sin_port)
					  + 1 + x));
		break;
	case 3:                                            /* other host */
		*src = *peer;
		src->in4.sin_addr.s_addr = htonl(0x0a000009);
		break;
	case 4:
	case 5:                                            /* many hosts */
		src->in4.sin_addr.s_addr = htonl(0x0a020000u | x);
		src->in4.sin_port = htons((uint16_t)(30000 + (x & 7)));
		break;
	case 6:                                            /* target itself */
		*src = w->addr[t];
		break;
	default:                                           /* IPv6 */
		src->in6.sin6_family = AF_INET6;
		src->in6.sin6_port = peer->in4.sin_port;
		src->in6.sin6_addr.s6_addr[15] = 1;
		break;
	}
}

/* pick_id - an RPC id: one of the client's recent ids (as either side
 * names it), or any value from the input. */
static uint64_t pick_id(struct world *w, struct reader *r)
{
	uint8_t k = rd_u8(r);

	if (k < 0xc0)
		return w->ids[k % IDS] ^ ((k >> 3) & 1);
	if (k < 0xe0 && w->num_kept > 0)
		return w->kept[k % w->num_kept].id ^ ((k >> 1) & 1);
	return rd_u64(r);
}

/* check_output - a packet ep i emitted is well formed. */
static void check_output(struct world *w, int i, const struct homa_out *out)
{
	struct homa_pkt pkt;

	check(out->len >= HOMA_COMMON_HDR_LEN &&
	      out->len <= epi(w->ep[i]).max_packet);
	check(out->priority < 8);
	check(out->dest.sa.sa_family == AF_INET);
	check(homa_wire_decode(out->buf, out->len, &pkt) == HOMA_WIRE_OK);
	check(pkt.sport == (i == SRV ? SRV_PORT : CLI_PORT));
	check(pkt.dport == ntohs(out->dest.in4.sin_port));
}

/* finish_stash - make both endpoints' deferred copies, then wipe the held
 * packets' bytes (a copy made later would show as wrong message bytes). */
static void finish_stash(struct world *w, int *held)
{
	for (int i = 0; i < 2; i++)
		backlog_in(w, i, w->behind[i]);
	memset(stash, 0xa5, (size_t)*held * STASH_BYTES);
	*held = 0;
}

/* deliver - pull packets from both endpoints and hand those addressed to
 * the other one over (others vanish), losing packet k when bit k % 8 of
 * loss is set; stops after MAX_DELIVER packets.  Delivered packets are
 * held in the stash with their payload copies deferred, STASH at a time. */
static void deliver(struct world *w, uint8_t loss)
{
	int n = 0, held = 0;
	bool more = true;

	while (more && n < MAX_DELIVER) {
		more = false;
		for (int i = 0; i < 2 && n < MAX_DELIVER; i++) {
			struct homa_out out = { .buf = w->outbuf[i] };
			int to = 1 - i;

			if (!homa_ep_output(w->ep[i], w->now, &out))
				continue;
			more = true;
			check_output(w, i, &out);
			if (((loss >> (n++ % 8)) & 1) ||
			    out.dest.in4.sin_addr.s_addr !=
			    w->addr[to].in4.sin_addr.s_addr ||
			    out.dest.in4.sin_port != w->addr[to].in4.sin_port)
				continue;
			check(out.len <= STASH_BYTES);
			memcpy(stash + (size_t)held * STASH_BYTES, out.buf,
			       out.len);
			pkt_in(w, to, stash + (size_t)held * STASH_BYTES,
			       out.len, &w->addr[i], n & 1, true);
			if (++held == STASH)
				finish_stash(w, &held);
		}
	}
	finish_stash(w, &held);
}

/* advance - move the clock by ns, running the timers. */
static void advance(struct world *w, uint64_t ns)
{
	w->now += ns;
	for (int i = 0; i < 2; i++)
		homa_ep_timer(w->ep[i], w->now);
}

/* inject - hand bytes to endpoint t as if they came from src. */
static void inject(struct world *w, int t, const uint8_t *buf, size_t len,
		   const union sockaddr_in_union *src, int core)
{
	pkt_in(w, t, buf, len, src, core, false);
}

/* op_raw - a packet from raw input bytes, optionally with the ports and
 * the id patched in. */
static void op_raw(struct world *w, struct reader *r)
{
	uint8_t flags = rd_u8(r), x = rd_u8(r), dt = rd_u8(r);
	uint16_t len = rd_u16(r) % 1600;
	int t = flags & 1;
	union sockaddr_in_union src;
	uint8_t buf[1600];

	pick_source(w, t, (uint8_t)(flags >> 1), x, &src);
	if (len > r->left)
		len = (uint16_t)r->left;
	memcpy(buf, r->p, len);
	r->p += len;
	r->left -= len;
	if ((flags & 0x10) && len >= 4) {   /* patch ports */
		uint16_t sport = ntohs(src.in4.sin_port);
		uint16_t dport = ntohs(w->addr[t].in4.sin_port);

		buf[0] = (uint8_t)(sport >> 8);
		buf[1] = (uint8_t)sport;
		buf[2] = (uint8_t)(dport >> 8);
		buf[3] = (uint8_t)dport;
	}
	if ((flags & 0x20) && len >= 28) {  /* patch the id */
		uint64_t id = w->ids[x % IDS] ^ ((x >> 3) & 1);

		for (int k = 0; k < 8; k++)
			buf[20 + k] = (uint8_t)(id >> (56 - 8 * k));
	}
	w->now += (uint64_t)dt * 1000;
	inject(w, t, buf, len, &src, (flags >> 6) & 3);
}

/* op_built - a packet encoded from fields of the input. */
static void op_built(struct world *w, struct reader *r)
{
	uint8_t flags = rd_u8(r), x = rd_u8(r), tb = rd_u8(r);
	int t = flags & 1;
	union sockaddr_in_union src;
	struct homa_pkt pkt;
	uint8_t buf[HOMA_DATA_HDR_LEN + 1600];
	size_t len;
	uint16_t cut;

	pick_source(w, t, (uint8_t)(flags >> 1), x, &src);
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = (uint8_t)(tb < 0xf0 ? HOMA_PKT_DATA + tb % 9 : tb);
	pkt.sport = ntohs(src.in4.sin_port);
	pkt.dport = (flags & 0x10) ? rd_u16(r) :
		    ntohs(w->addr[t].in4.sin_port);
	pkt.sender_id = pick_id(w, r);
	if (pkt.type == HOMA_PKT_DATA) {
		uint8_t lk = rd_u8(r);
		uint32_t plen, seg = 1424;

		pkt.message_length = lk < 0x80 ? 1 + rd_u32(r) % 1000000u :
				     lk < 0xf0 ? 1 + (uint32_t)(lk & 0x3f) *
				     15000u : rd_u32(r);
		pkt.incoming = rd_u32(r);
		pkt.offset = (rd_u8(r) & 1) ? rd_u32(r) :
			     (uint32_t)rd_u16(r) % 704u * seg;
		plen = rd_u16(r) % 1500u;
		if (plen == 1 && pkt.offset < pkt.message_length)
			plen = pkt.message_length - pkt.offset < seg ?
			       pkt.message_length - pkt.offset : seg;
		pkt.cutoff_version = rd_u16(r);
		pkt.retransmit = rd_u8(r) & 1;
		if (rd_u8(r) & 1) {
			pkt.num_acks = 1;
			pkt.acks[0].client_id = pick_id(w, r);
			pkt.acks[0].server_port = rd_u16(r);
		}
		homa_wire_encode_data_hdr(&pkt, buf);
		for (uint32_t k = 0; k < plen; k++)
			buf[HOMA_DATA_HDR_LEN + k] = (uint8_t)(k + x);
		len = HOMA_DATA_HDR_LEN + plen;
	} else {
		pkt.offset = rd_u32(r);
		pkt.length = rd_u32(r);
		pkt.priority = rd_u8(r);
		for (int k = 0; k < HOMA_NUM_PRIORITIES; k++)
			pkt.unsched_cutoffs[k] = rd_u32(r);
		pkt.cutoff_version = rd_u16(r);
		pkt.num_acks = rd_u8(r) % (HOMA_MAX_ACKS + 1);
		for (int k = 0; k < pkt.num_acks; k++) {
			pkt.acks[k].client_id = pick_id(w, r);
			pkt.acks[k].server_port = (rd_u8(r) & 1) ? rd_u16(r) :
						  SRV_PORT;
		}
		len = homa_wire_encode_ctrl(&pkt, buf, sizeof(buf));
		if (len == 0) {         /* an unknown type: a bare header */
			pkt.type = HOMA_PKT_BUSY;
			len = homa_wire_encode_ctrl(&pkt, buf, sizeof(buf));
			buf[11] = tb;
		}
		if (pkt.type == HOMA_PKT_ACK && (x & 0x80)) {
			buf[28] = 0xff;     /* num_acks 65535 */
			buf[29] = 0xff;
		}
	}
	cut = rd_u16(r);
	if (cut & 0x8000)
		len = (cut & 0x7fff) % (len + 1);   /* truncated */
	inject(w, t, buf, len, &src, x & 1);
}

/* hold - record bpages the application now owns on side i. */
static void hold(struct world *w, int i, const struct homa_msg_ready *m)
{
	for (uint32_t k = 0; k < m->num_bpages; k++) {
		check(w->num_held[i] < HELD);
		w->held[i][w->num_held[i]++] = m->bpage_offsets[k];
	}
}

/* check_message - a delivered message obeys the layout contract; its
 * bytes are read (into w->sink).  Returns true when it carries data. */
static bool check_message(struct world *w, int i,
			  const struct homa_msg_ready *m)
{
	uint64_t region = (uint64_t)w->region_bpages[i] * HOMA_BPAGE_SIZE;
	uint32_t done = 0;

	if (m->error != 0) {
		check(i == CLI && (m->id & 1) == 0);
		check(m->length == 0 && m->num_bpages == 0);
		return false;
	}
	check(m->length >= 1 && m->length <= HOMA_MAX_MESSAGE_LENGTH);
	check(m->num_bpages == (m->length + HOMA_BPAGE_SIZE - 1) /
	      HOMA_BPAGE_SIZE);
	for (uint32_t k = 0; k < m->num_bpages; k++) {
		uint32_t n = m->length - done < HOMA_BPAGE_SIZE ?
			     m->length - done : HOMA_BPAGE_SIZE;
		uint32_t off = m->bpage_offsets[k];

		if (k + 1 < m->num_bpages)
			check(off % HOMA_BPAGE_SIZE == 0);
		else
			check(off % HOMA_BPAGE_SIZE + n <= HOMA_BPAGE_SIZE);
		check((uint64_t)off + n <= region);
		w->sink += w->region[i][off] + w->region[i][off + n - 1];
		done += n;
	}
	return true;
}

/* message_matches - the bytes of m equal message seed s. */
static bool message_matches(struct world *w, int i,
			    const struct homa_msg_ready *m, uint32_t s)
{
	uint32_t done = 0;

	for (uint32_t k = 0; k < m->num_bpages; k++) {
		uint32_t n = m->length - done < HOMA_BPAGE_SIZE ?
			     m->length - done : HOMA_BPAGE_SIZE;
		const uint8_t *p = w->region[i] + m->bpage_offsets[k];

		for (uint32_t j = 0; j < n; j++)
			if (p[j] != fill_byte(s, done + j))
				return false;
		done += n;
	}
	return true;
}

/* size_of - a message size from a selector byte (and maybe more input). */
static uint32_t size_of(struct reader *r)
{
	static const uint32_t sizes[] = { 1, 100, 1423, 1424, 1425, 2849,
		39999, 40000, 40001, 65535, 65536, 65537, 131073, 300000,
		999999, 1000000 };
	uint8_t k = rd_u8(r);

	if (k < 0xf0)
		return sizes[k % 16];
	return 1 + rd_u32(r) % HOMA_MAX_MESSAGE_LENGTH;
}

/* message - len bytes of the pattern buffer as an iovec (the fuzzed
 * traffic's contents are not checked; the liveness check fills its own). */
static struct iovec message(uint32_t len)
{
	struct iovec iov = { pattern, len };

	return iov;
}

/* op_send - the client sends a request. */
static void op_send(struct world *w, struct reader *r)
{
	uint8_t where = rd_u8(r);
	uint32_t len = size_of(r);
	union sockaddr_in_union dest = w->addr[SRV];
	struct iovec iov = message(len);
	uint64_t id = 0;
	int err;

	if (where & 1)
		dest.in4.sin_port = htons(SRV_PORT + 1);   /* nobody */
	if (where & 2)
		dest.in4.sin_addr.s_addr = htonl(0x0a0000fe);
	err = homa_ep_send_request(w->ep[CLI], &dest, &iov, 1, where, 0, &id,
				   w->now);
	check(err == 0 || err == -ENOMEM || err == -ESHUTDOWN);
	if (err == 0) {
		check(id != 0 && (id & 1) == 0);
		w->ids[w->next_id++ % IDS] = id;
	}
}

/* reply - the server answers request k of the kept list. */
static void reply(struct world *w, uint32_t k, uint32_t len)
{
	struct iovec iov = message(len);
	int err = homa_ep_send_reply(w->ep[SRV], &w->kept[k].peer,
				     w->kept[k].id, &iov, 1, 0, w->now);

	/* -EINVAL: the peer ended the RPC and a new request reuses its id
	 * (not yet delivered), which the contract allows. */
	check(err == 0 || err == -EINVAL || err == -ENOMEM ||
	      err == -ESHUTDOWN);
	w->kept[k] = w->kept[--w->num_kept];
}

/* op_serve - the server takes a request; replies at once or keeps it. */
static void op_serve(struct world *w, struct reader *r)
{
	uint8_t how = rd_u8(r);
	struct homa_msg_ready m;
	int err = homa_ep_receive(w->ep[SRV], 0, HOMA_RECVMSG_REQUEST |
				  ((how & 1) ? HOMA_RECVMSG_RESPONSE : 0), &m);

	check(err == 0 || err == -EAGAIN || err == -ESHUTDOWN);
	if (err != 0)
		return;
	check((m.id & 1) == 1 && m.error == 0);
	check(check_message(w, SRV, &m));
	hold(w, SRV, &m);
	if (w->num_kept == KEPT)
		reply(w, 0, 1);
	w->kept[w->num_kept].id = m.id;
	w->kept[w->num_kept].peer = m.peer;
	w->num_kept++;
	if (how & 2)
		reply(w, w->num_kept - 1, size_of(r));
}

/* op_client_recv - the client takes a response. */
static void op_client_recv(struct world *w, struct reader *r)
{
	uint8_t how = rd_u8(r);
	uint64_t id = (how & 1) ? 0 : w->ids[(how >> 1) % IDS];
	struct homa_msg_ready m;
	int err = homa_ep_receive(w->ep[CLI], id, HOMA_RECVMSG_RESPONSE |
				  ((how & 0x80) ? HOMA_RECVMSG_REQUEST : 0),
				  &m);

	check(err == 0 || err == -EAGAIN || err == -EINVAL ||
	      err == -ESHUTDOWN);
	if (err != 0)
		return;
	check((m.id & 1) == 0);
	if (id != 0)
		check(m.id == id);
	if (check_message(w, CLI, &m))
		hold(w, CLI, &m);
}

/* give_back - side i returns held bpages picked by mask (bit k of mask:
 * entry k of the first 8), or a forged offset. */
static void give_back(struct world *w, int i, uint8_t mask, uint32_t forged)
{
	uint32_t offs[HOMA_MAX_BPAGES], n = 0, before;
	struct homa_pool *pool = epi(w->ep[i]).pool;
	int err;

	for (uint32_t k = 0; k < 8 && k < w->num_held[i]; k++)
		if ((mask >> k) & 1)
			offs[n++] = w->held[i][k];
	if (forged != 0xffffffffu && n < HOMA_MAX_BPAGES) {
		bool owned = false;

		for (uint32_t k = 0; k < w->num_held[i]; k++)
			owned |= w->held[i][k] == forged;
		if (!owned) {
			offs[n++] = forged;
			before = homa_pool_app_owned(pool);
			err = homa_ep_return_bpages(w->ep[i], offs, n, 0,
						    w->now);
			check(err == -EINVAL);
			check(homa_pool_app_owned(pool) == before);
			return;
		}
	}
	err = homa_ep_return_bpages(w->ep[i], offs, n, (int)mask & 1,
				    w->now);
	check(err == 0);
	/* Remove the returned ones (highest index first). */
	for (int k = 7; k >= 0; k--)
		if (k < (int)w->num_held[i] && ((mask >> k) & 1))
			w->held[i][k] = w->held[i][--w->num_held[i]];
}

/* op_misc - bpages back, abort, shutdown, or a side behind its input. */
static void op_misc(struct world *w, struct reader *r)
{
	uint8_t what = rd_u8(r), mask = rd_u8(r);
	int err;

	switch (what % 8) {
	case 0:
	case 1:
	case 2:
		give_back(w, (what >> 3) & 1, mask, 0xffffffffu);
		break;
	case 3:
		give_back(w, (what >> 3) & 1, mask, rd_u32(r));
		break;
	case 4:
		err = homa_ep_abort(w->ep[CLI], (mask & 1) ? 0 :
				    w->ids[mask % IDS], (mask & 2) ? ECANCELED
				    : 0);
		check(err == 0 || err == -EINVAL);
		break;
	case 5:
		if (w->num_kept > 0)
			reply(w, mask % w->num_kept, 1);
		break;
	case 6:
		/* Once the timer has run, a next tick is always due. */
		advance(w, 0);
		for (int i = 0; i < 2; i++)
			check(homa_ep_next_timer(w->ep[i]) != 0);
		break;
	default:
		if (what == 0xff && mask == 0xff) {
			homa_ep_shutdown(w->ep[CLI]);
			w->shut = true;
		} else {
			/* Either side behind its input, or caught up. */
			backlog_in(w, mask & 1, (mask & 2) != 0);
		}
		break;
	}
}

/* one_op - read and run one operation. */
static void one_op(struct world *w, struct reader *r)
{
	uint8_t op = rd_u8(r);

	switch (op % 16) {
	case 0: case 1: case 2: case 3: case 4:
		op_raw(w, r);
		break;
	case 5: case 6: case 7: case 8:
		op_built(w, r);
		break;
	case 9:
		deliver(w, rd_u8(r));
		break;
	case 10: {
		uint8_t n = rd_u8(r), loss = rd_u8(r);

		for (int k = 0; k <= (n & 15); k++) {
			advance(w, TICK_NS / 4 + (uint64_t)(n >> 4) * 100000);
			deliver(w, loss);
		}
		break;
	}
	case 11:
		op_send(w, r);
		break;
	case 12:
		op_serve(w, r);
		break;
	case 13:
		if (w->num_kept > 0) {
			uint8_t k = rd_u8(r);

			reply(w, k % w->num_kept, size_of(r));
		}
		break;
	case 14:
		op_client_recv(w, r);
		break;
	default:
		op_misc(w, r);
		break;
	}
	check_state(w);
}

/* return_all - side i hands back every bpage it holds. */
static void return_all(struct world *w, int i)
{
	while (w->num_held[i] > 0) {
		uint32_t n = w->num_held[i] < HOMA_MAX_BPAGES ?
			     w->num_held[i] : HOMA_MAX_BPAGES;

		check(homa_ep_return_bpages(w->ep[i],
					    &w->held[i][w->num_held[i] - n],
					    n, 0, w->now) == 0);
		w->num_held[i] -= n;
	}
}

/* drain_app - the applications return every bpage, take every message
 * (returning its bpages) and answer every request with one byte. */
static void drain_app(struct world *w)
{
	struct homa_msg_ready m;
	bool again = true;

	while (again) {
		again = false;
		return_all(w, SRV);
		return_all(w, CLI);
		while (w->num_kept > 0)
			reply(w, 0, 1);
		if (homa_ep_receive(w->ep[SRV], 0, HOMA_RECVMSG_REQUEST |
				    HOMA_RECVMSG_RESPONSE, &m) == 0) {
			check(check_message(w, SRV, &m));
			hold(w, SRV, &m);
			w->kept[0].id = m.id;
			w->kept[0].peer = m.peer;
			w->num_kept = 1;
			again = true;
		}
		if (homa_ep_receive(w->ep[CLI], 0, HOMA_RECVMSG_REQUEST |
				    HOMA_RECVMSG_RESPONSE, &m) == 0) {
			if (check_message(w, CLI, &m))
				hold(w, CLI, &m);
			again = true;
		}
	}
}

/* liveness - with the hostile input over, every RPC ends, then a fresh
 * RPC completes intact. */
static void liveness(struct world *w)
{
	uint32_t ticks = 0, limit;
	struct homa_msg_ready m;
	struct iovec iov;
	uint64_t id;
	int64_t timeout, alive;

	check(homa_config_get_value(&w->cfg, "timeout_ticks", &timeout) == 0);
	check(homa_config_get_value(&w->cfg, "alive_timeout_ticks",
				    &alive) == 0);
	/* Both sides read everything from now on. */
	for (int i = 0; i < 2; i++)
		backlog_in(w, i, false);
	/* A chain of messages waiting for buffer space may need one timeout
	 * per link: allow many timeouts, and one longest silence (an RPC
	 * whose server answered BUSY waits alive_timeout_ticks). */
	limit = (uint32_t)timeout * 40 + (uint32_t)alive;
	for (;;) {
		drain_app(w);
		deliver(w, 0);
		drain_app(w);
		if (epi(w->ep[SRV]).num_rpcs == 0 &&
		    epi(w->ep[CLI]).num_rpcs == 0)
			break;
#ifdef FUZZ_ENDPOINT_TRACE
		if (ticks + 1 >= limit)
			fuzz_trace_stuck(w->ep[SRV], w->ep[CLI]);
#endif
		check(++ticks < limit);     /* an RPC that never ends */
		advance(w, TICK_NS);
	}
	/* A fresh RPC: request 3000 bytes, response 70000 bytes. */
	fill_pattern(77, 3000);
	iov.iov_base = pattern;
	iov.iov_len = 3000;
	check(homa_ep_send_request(w->ep[CLI], &w->addr[SRV], &iov, 1, 5, 0, &id,
				   w->now) == 0);
	for (ticks = 0;; ticks++) {
#ifdef FUZZ_ENDPOINT_TRACE
		if (ticks == 50)
			fuzz_trace_stuck(w->ep[SRV], w->ep[CLI]);
#endif
		check(ticks < 50);
		deliver(w, 0);
		if (homa_ep_receive(w->ep[SRV], 0, HOMA_RECVMSG_REQUEST,
				    &m) == 0) {
			check(m.length == 3000 && check_message(w, SRV, &m));
			check(message_matches(w, SRV, &m, 77));
			check(homa_ep_return_bpages(w->ep[SRV], m.bpage_offsets,
						    m.num_bpages, 0,
						    w->now) == 0);
			fill_pattern(78, 70000);
			iov.iov_len = 70000;
			check(homa_ep_send_reply(w->ep[SRV], &m.peer, m.id,
						 &iov, 1, 0, w->now) == 0);
			continue;
		}
		if (homa_ep_receive(w->ep[CLI], id, HOMA_RECVMSG_RESPONSE,
				    &m) == 0)
			break;
		advance(w, TICK_NS);
	}
	check(m.error == 0 && m.length == 70000 && m.cookie == 5);
	check(check_message(w, CLI, &m));
	check(message_matches(w, CLI, &m, 78));
	check(homa_ep_return_bpages(w->ep[CLI], m.bpage_offsets, m.num_bpages,
				    0, w->now) == 0);
}

/* LLVMFuzzerTestOneInput - one fuzz input; always returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reader r = { data, size };
	static struct world w;

	global_init();
	world_init(&w, &r);
	while (r.left > 0)
		one_op(&w, &r);
	if (!w.shut)
		liveness(&w);
	world_free(&w);
	return 0;
}
