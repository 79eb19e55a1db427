// SPDX-License-Identifier: BSD-2-Clause
/* The per-endpoint table of remote hosts: see homa_peer.h. */

#include <stdbool.h>
#include <string.h>

#include "homa_addr.h"
#include "homa_alloc.h"
#include "homa_peer.h"

#define INITIAL_BUCKETS 64

/* peer_of - the peer holding table link l. */
static struct homa_peer *peer_of(const struct homa_hash_link *l)
{
	return homa_container(l, struct homa_peer, hash_links);
}

/* peer_free - free peer p and what it owns. */
static void peer_free(struct homa_peer *p)
{
	homa_free(p->held);
	homa_free(p);
}

/* release - homa_hash_destroy's callback: free the peer of l. */
static void release(struct homa_hash_link *l)
{
	peer_free(peer_of(l));
}

/* same_host - true when the peer of l has the host of addr (a union
 * sockaddr_in_union; ports ignored). */
static bool same_host(const struct homa_hash_link *l, const void *addr)
{
	return homa_addr_same_host(&peer_of(l)->addr, addr);
}

/* idle - true when no RPC refers to the peer of l (ctx unused). */
static bool idle(const struct homa_hash_link *l, const void *ctx)
{
	(void)ctx;
	return peer_of(l)->rpcs == 0;
}

int homa_peer_table_init(struct homa_peer_table *t)
{
	return homa_hash_init(&t->hash, INITIAL_BUCKETS);
}

void homa_peer_table_destroy(struct homa_peer_table *t)
{
	homa_hash_destroy(&t->hash, release);
}

/* forget_idle - remove one peer that no RPC refers to; returns false when
 * there is none. */
static bool forget_idle(struct homa_peer_table *t)
{
	struct homa_hash_link *l = homa_hash_find_any(&t->hash, idle, NULL);
	struct homa_peer *p;

	if (!l)
		return false;
	p = peer_of(l);
	homa_hash_remove(&t->hash, l);
	homa_list_del(&p->ack_links);
	peer_free(p);
	return true;
}

struct homa_peer *homa_peer_get(struct homa_peer_table *t,
				const union sockaddr_in_union *addr)
{
	uint64_t h = homa_addr_hash(addr);
	struct homa_hash_link *l = homa_hash_find(&t->hash, h, same_host,
						  addr);
	struct homa_peer *p;

	if (l)
		return peer_of(l);
	if (t->max_peers && t->hash.count >= t->max_peers && !forget_idle(t))
		return NULL;
	p = homa_calloc(HOMA_ALLOC_PEER, 1, sizeof(*p));
	if (!p)
		return NULL;
	homa_addr_copy(&p->addr, addr);
	homa_addr_set_port(&p->addr, 0);
	p->loopback = homa_addr_is_loopback(addr);
	homa_list_init(&p->ack_links);
	homa_list_init(&p->due);
	homa_list_init(&p->due_links);
	homa_hash_insert(&t->hash, &p->hash_links, h);
	return p;
}

uint8_t homa_peer_unsched_priority(const struct homa_peer *peer,
				   uint32_t length, int num_priorities,
				   uint8_t fallback)
{
	int i;

	if (num_priorities < 1)
		num_priorities = 1;
	if (num_priorities > HOMA_NUM_PRIORITIES)
		num_priorities = HOMA_NUM_PRIORITIES;
	if (peer->cutoff_version == 0)
		return fallback < num_priorities ? fallback :
		       (uint8_t)(num_priorities - 1);
	for (i = num_priorities - 1; i > 0; i--)
		if (length <= peer->cutoffs[i])
			return (uint8_t)i;
	return 0;
}

void homa_peer_set_cutoffs(struct homa_peer *peer, const uint32_t *cutoffs,
			   uint16_t version)
{
	memcpy(peer->cutoffs, cutoffs, sizeof(peer->cutoffs));
	peer->cutoff_version = version;
}

bool homa_peer_cutoffs_due(struct homa_peer *peer, uint64_t tick,
			   uint64_t interval)
{
	/* cutoffs_sent_tick is the tick of the last send + 1 (0: never). */
	if (interval == 0)
		interval = 1;
	if (peer->cutoffs_sent_tick != 0 &&
	    tick + 1 - peer->cutoffs_sent_tick < interval)
		return false;
	peer->cutoffs_sent_tick = tick + 1;
	return true;
}

int homa_peer_add_ack(struct homa_peer *peer, uint64_t id,
		      uint16_t server_port)
{
	if (peer->num_acks < HOMA_MAX_ACKS) {
		peer->acks[peer->num_acks].client_id = id;
		peer->acks[peer->num_acks].server_port = server_port;
		peer->num_acks++;
	}
	return peer->num_acks;
}

/* remove_ack - delete entry i keeping order. */
static void remove_ack(struct homa_peer *peer, int i)
{
	memmove(&peer->acks[i], &peer->acks[i + 1],
		(size_t)(peer->num_acks - i - 1) * sizeof(peer->acks[0]));
	peer->num_acks--;
}

struct homa_ack homa_peer_pop_ack(struct homa_peer *peer,
				  uint16_t server_port)
{
	struct homa_ack none = { 0, 0 };
	int i;

	for (i = 0; i < peer->num_acks; i++) {
		if (peer->acks[i].server_port == server_port) {
			struct homa_ack a = peer->acks[i];

			remove_ack(peer, i);
			return a;
		}
	}
	return none;
}

int homa_peer_take_acks(struct homa_peer *peer, struct homa_ack *out)
{
	uint16_t port;
	int n = 0, i = 0;

	if (peer->num_acks == 0)
		return 0;
	port = peer->acks[0].server_port;
	while (i < peer->num_acks) {
		if (peer->acks[i].server_port == port) {
			out[n++] = peer->acks[i];
			remove_ack(peer, i);
		} else {
			i++;
		}
	}
	return n;
}

/* heard_entry - peer's entry for port, or NULL when it is not
 * remembered. */
static const struct homa_peer_heard *heard_entry(const struct homa_peer *peer,
						 uint16_t port)
{
	for (int i = 0; i < HOMA_PEER_HEARD_PORTS; i++)
		if (peer->heard[i].tick != 0 && peer->heard[i].port == port)
			return &peer->heard[i];
	return NULL;
}

/* heard_tick - the tick + 1 at which port of peer was last heard from, or
 * 0 when it is not remembered. */
static uint64_t heard_tick(const struct homa_peer *peer, uint16_t port)
{
	const struct homa_peer_heard *h = heard_entry(peer, port);

	return h ? h->tick : 0;
}

void homa_peer_heard(struct homa_peer *peer, uint16_t port, uint64_t tick)
{
	const struct homa_peer_heard *found = heard_entry(peer, port);
	struct homa_peer_heard *slot = &peer->heard[0];

	if (found) {
		slot = &peer->heard[found - peer->heard];
	} else {
		for (int i = 1; i < HOMA_PEER_HEARD_PORTS; i++)
			if (peer->heard[i].tick < slot->tick)
				slot = &peer->heard[i];
	}
	slot->port = port;
	slot->tick = tick + 1;
}

bool homa_peer_heard_within(const struct homa_peer *peer, uint16_t port,
			    uint64_t now_tick, uint64_t ticks)
{
	uint64_t t = heard_tick(peer, port);

	/* t - 1 is the tick heard; heard within when now - (t - 1) < ticks,
	 * written without underflow. */
	return t != 0 && now_tick + 1 < t + ticks;
}

bool homa_peer_heard_since(const struct homa_peer *peer, uint16_t port,
			   uint64_t tick)
{
	return heard_tick(peer, port) > tick;
}

/* budget_room - true when fewer than max were counted in tick, given the
 * tick of the count plus one (at) and the count (n). */
static bool budget_room(uint64_t at, uint32_t n, uint64_t tick, uint32_t max)
{
	return at != tick + 1 ? max > 0 : n < max;
}

/* budget_take - count one more in tick (at, n as for budget_room). */
static void budget_take(uint64_t *at, uint32_t *n, uint64_t tick)
{
	if (*at != tick + 1) {
		*at = tick + 1;
		*n = 0;
	}
	(*n)++;
}

bool homa_peer_probe_room(const struct homa_peer *peer, uint64_t tick,
			  uint32_t max)
{
	return budget_room(peer->probe_tick, peer->probes_in_tick, tick, max);
}

void homa_peer_probe_taken(struct homa_peer *peer, uint64_t tick)
{
	budget_take(&peer->probe_tick, &peer->probes_in_tick, tick);
}

bool homa_peer_need_ack_room(const struct homa_peer *peer, uint64_t tick,
			     uint32_t max)
{
	return budget_room(peer->need_ack_tick, peer->need_acks_in_tick, tick,
			   max);
}

void homa_peer_need_ack_taken(struct homa_peer *peer, uint64_t tick)
{
	budget_take(&peer->need_ack_tick, &peer->need_acks_in_tick, tick);
}

/* See homa_peer.h. */
void homa_peer_note_wait(struct homa_peer *peer, uint32_t ticks)
{
	uint32_t smooth;
	int64_t err;

	if (ticks > HOMA_PEER_WAIT_MAX)
		ticks = HOMA_PEER_WAIT_MAX;
	if (!peer->wait_known) {
		peer->wait_known = true;
		peer->wait_smooth8 = ticks * 8;
		peer->wait_dev4 = ticks * 2;     /* deviation: half the wait */
		return;
	}
	/* Both decay rounding up, so that steady samples bring them to the
	 * sample and to 0 exactly. */
	smooth = (peer->wait_smooth8 + 7) / 8;
	err = (int64_t)ticks - (int64_t)smooth;
	peer->wait_smooth8 = peer->wait_smooth8 - smooth + ticks;
	peer->wait_dev4 = peer->wait_dev4 - (peer->wait_dev4 + 3) / 4 +
			  (uint32_t)(err < 0 ? -err : err);
}

/* See homa_peer.h. */
uint32_t homa_peer_wait_bound(const struct homa_peer *peer)
{
	if (!peer->wait_known)
		return 0;
	return (peer->wait_smooth8 + 7) / 8 + peer->wait_dev4;
}

void homa_peer_note_rx(struct homa_peer *peer, uint32_t bytes,
		       uint64_t tick)
{
	peer->rx_bytes += bytes;
	if (peer->rx_tick != tick) {
		/* The finished tick becomes the peak when it beats it or the
		 * peak is too old to count. */
		if (peer->rx_cur >= peer->rx_peak ||
		    peer->rx_peak_tick + HOMA_PEER_PEAK_TICKS <= peer->rx_tick) {
			peer->rx_peak = peer->rx_cur;
			peer->rx_peak_tick = peer->rx_tick;
		}
		peer->rx_prev = peer->rx_tick + 1 == tick ? peer->rx_cur : 0;
		peer->rx_cur = 0;
		peer->rx_tick = tick;
	}
	peer->rx_cur += bytes;
}

uint64_t homa_peer_rx_rate(const struct homa_peer *peer, uint64_t tick)
{
	uint64_t cur = 0, prev = 0;

	if (peer->rx_tick == tick) {
		cur = peer->rx_cur;
		prev = peer->rx_prev;
	} else if (peer->rx_tick + 1 == tick) {
		prev = peer->rx_cur;
	}
	return cur > prev ? cur : prev;
}

uint64_t homa_peer_rx_peak(const struct homa_peer *peer, uint64_t tick)
{
	uint64_t cur = peer->rx_tick == tick ? peer->rx_cur : 0;
	uint64_t last = peer->rx_tick < tick &&
			peer->rx_tick + HOMA_PEER_PEAK_TICKS > tick ?
			peer->rx_cur : 0;
	uint64_t peak = peer->rx_peak_tick + HOMA_PEER_PEAK_TICKS > tick ?
			peer->rx_peak : 0;

	if (last > peak)
		peak = last;
	return cur > peak ? cur : peak;
}

void homa_peer_resend_round(struct homa_peer *peer, uint64_t tick,
			    uint64_t floor)
{
	peer->round_left = peer->round_tick != 0 && peer->rx_bytes > floor ?
			   peer->rx_bytes : floor;
	peer->round_tick = tick + 1;
	peer->rx_bytes = 0;
}

uint32_t homa_peer_resend_take(struct homa_peer *peer, uint64_t tick,
			       uint64_t floor, uint32_t want)
{
	if (peer->round_tick != tick + 1)
		homa_peer_resend_round(peer, tick, floor);
	if (want > peer->round_left)
		want = (uint32_t)peer->round_left;
	peer->round_left -= want;
	return want;
}
