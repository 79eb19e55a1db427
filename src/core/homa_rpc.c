// SPDX-License-Identifier: BSD-2-Clause
/*
 * RPC records and their lookup table (see homa_rpc.h), and the lifecycle
 * of an RPC in its endpoint: created and registered, found for a packet,
 * its request no longer incomplete, completed (ready), failed, evicted for
 * the buffer space it holds, and freed (see homa_ep_internal.h).
 */

#include "homa_addr.h"
#include "homa_alloc.h"
#include "homa_ep_internal.h"
#include "homa_rpc.h"

#define INITIAL_BUCKETS 256

/* The key of a server RPC: its id and its client's address and port. */
struct server_key {
	uint64_t id;
	const union sockaddr_in_union *src;
};

/* rpc_of - the RPC holding table link l. */
static struct homa_rpc *rpc_of(const struct homa_hash_link *l)
{
	return homa_container(l, struct homa_rpc, hash_links);
}

/* client_hash - the table hash of the client RPC with local id (its
 * id alone: ids of client RPCs are unique in the endpoint). */
static uint64_t client_hash(uint64_t id)
{
	return id;
}

/* server_hash - the table hash of the server RPC with local id from src
 * (address and port: clients choose ids independently). */
static uint64_t server_hash(uint64_t id, const union sockaddr_in_union *src)
{
	return id ^ (homa_addr_hash(src) + homa_addr_port(src));
}

/* is_client_id - true when l is the client RPC with the id *key (a
 * uint64_t). */
static bool is_client_id(const struct homa_hash_link *l, const void *key)
{
	const struct homa_rpc *r = rpc_of(l);

	return r->is_client && r->id == *(const uint64_t *)key;
}

/* is_server_key - true when l is the server RPC of key (a struct
 * server_key). */
static bool is_server_key(const struct homa_hash_link *l, const void *key)
{
	const struct homa_rpc *r = rpc_of(l);
	const struct server_key *k = key;

	return !r->is_client && r->id == k->id &&
	       homa_addr_equal(&r->dest, k->src);
}

int homa_rpc_table_init(struct homa_rpc_table *t)
{
	return homa_hash_init(&t->hash, INITIAL_BUCKETS);
}

void homa_rpc_table_destroy(struct homa_rpc_table *t)
{
	homa_hash_destroy(&t->hash, NULL);
}

void homa_rpc_table_insert(struct homa_rpc_table *t, struct homa_rpc *rpc)
{
	homa_hash_insert(&t->hash, &rpc->hash_links,
			 rpc->is_client ? client_hash(rpc->id) :
			 server_hash(rpc->id, &rpc->dest));
}

void homa_rpc_table_remove(struct homa_rpc_table *t, struct homa_rpc *rpc)
{
	homa_hash_remove(&t->hash, &rpc->hash_links);
}

struct homa_rpc *homa_rpc_find_client(const struct homa_rpc_table *t,
				      uint64_t id)
{
	struct homa_hash_link *l = homa_hash_find(&t->hash, client_hash(id),
						  is_client_id, &id);

	return l ? rpc_of(l) : NULL;
}

struct homa_rpc *homa_rpc_find_server(const struct homa_rpc_table *t,
				      uint64_t id,
				      const union sockaddr_in_union *src)
{
	struct server_key k = { id, src };
	struct homa_hash_link *l = homa_hash_find(&t->hash,
						  server_hash(id, src),
						  is_server_key, &k);

	return l ? rpc_of(l) : NULL;
}

struct homa_rpc *homa_rpc_alloc(void)
{
	struct homa_rpc *rpc = homa_calloc(HOMA_ALLOC_RPC, 1, sizeof(*rpc));

	if (!rpc)
		return NULL;
	homa_list_init(&rpc->all_links);
	homa_list_init(&rpc->ready_links);
	homa_list_init(&rpc->send_links);
	homa_list_init(&rpc->grant_links);
	homa_list_init(&rpc->wait_links);
	homa_list_init(&rpc->half_links);
	homa_list_init(&rpc->due_links);
	homa_list_init(&rpc->held_links);
	return rpc;
}

/* backoff_next - the count at which b's next retry is due: b->next, or
 * first (at least 1) before the first one was computed. */
static uint32_t backoff_next(const struct homa_backoff *b, uint32_t first)
{
	if (b->next != 0)
		return b->next;
	return first > 0 ? first : 1;
}

bool homa_backoff_peek(const struct homa_backoff *b, uint32_t count,
		       uint32_t first)
{
	return count >= backoff_next(b, first);
}

bool homa_backoff_due(struct homa_backoff *b, uint32_t count, uint32_t first,
		      uint32_t base, uint32_t cap, bool grow)
{
	uint64_t gap;

	b->next = backoff_next(b, first);
	if (count < b->next)
		return false;
	if (cap < 1)
		cap = 1;
	if (!grow)
		b->sent = 0;
	else if (b->sent < 32)
		b->sent++;
	gap = (uint64_t)(base > 0 ? base : 1) << b->sent;
	if (gap > cap)
		gap = cap;
	b->next = count + (uint32_t)gap;
	return true;
}

/* ---- the lifecycle of an RPC in its endpoint ---- */

struct homa_rpc *ep_new_rpc(struct homa_ep *ep, uint64_t id,
				bool is_client,
				const union sockaddr_in_union *dest)
{
	struct homa_rpc *rpc;
	struct homa_peer *peer;

	if (ep->num_rpcs >= (uint64_t)ep->cfg.max_rpcs)
		return NULL;
	peer = homa_peer_get(&ep->peers, dest);
	if (!peer)
		return NULL;
	rpc = homa_rpc_alloc();
	if (!rpc)
		return NULL;
	rpc->id = id;
	rpc->is_client = is_client;
	homa_addr_copy(&rpc->dest, dest);
	rpc->peer = peer;
	peer->rpcs++;
	rpc->birth = ep->birth_seq++;
	if (!is_client) {
		homa_list_add_tail(&ep->half_open, &rpc->half_links);
		ep->num_half_open++;
		peer->half_open++;
	}
	homa_rpc_table_insert(&ep->rpcs, rpc);
	homa_list_add_tail(&ep->all, &rpc->all_links);
	ep->num_rpcs++;
	return rpc;
}

struct homa_rpc *ep_find_rpc(struct homa_ep *ep, uint64_t sender_id,
			     const union sockaddr_in_union *src,
			     bool *wrong_peer)
{
	uint64_t id = sender_id ^ 1;
	struct homa_rpc *rpc;

	*wrong_peer = false;
	if (id & 1)
		return homa_rpc_find_server(&ep->rpcs, id, src);
	rpc = homa_rpc_find_client(&ep->rpcs, id);
	if (rpc && !homa_addr_equal(&rpc->dest, src)) {
		*wrong_peer = true;
		return NULL;
	}
	return rpc;
}

void ep_request_done(struct homa_ep *ep, struct homa_rpc *rpc)
{
	if (homa_list_empty(&rpc->half_links))
		return;
	homa_list_del(&rpc->half_links);
	ep->num_half_open--;
	rpc->peer->half_open--;
	rpc->peer->buffer_bytes -= rpc->peer_bytes;
	rpc->peer_bytes = 0;
}

void ep_rpc_free(struct homa_ep *ep, struct homa_rpc *rpc)
{
	bool had_buffers = rpc->has_buffers;

	ep_finish_copies(ep);
	ep_request_done(ep, rpc);
	if (rpc->is_client)
		ep_window_forget(ep, rpc);
	rpc->peer->rpcs--;
	homa_rpc_table_remove(&ep->rpcs, rpc);
	homa_list_del(&rpc->all_links);
	homa_list_del(&rpc->ready_links);
	homa_list_del(&rpc->send_links);
	homa_list_del(&rpc->grant_links);
	homa_list_del(&rpc->wait_links);
	if (!homa_list_empty(&rpc->due_links))
		ep->resends_due--;
	homa_list_del(&rpc->due_links);
	if (had_buffers)
		homa_pool_release(ep->pool, rpc->bpages, rpc->num_bpages);
	if (rpc->has_out)
		homa_msgout_free(&rpc->out);
	if (ep->lent == rpc)
		ep->lent = NULL;
	ep->wmem -= rpc->wmem_bytes;
	ep->num_rpcs--;
	homa_free(rpc);
	if (had_buffers)
		ep_check_waiting(ep, 0, ep->next_tick_ns);
	if (!ep->in_tick)
		ep_grant_update(ep);
}

void ep_rpc_ready(struct homa_ep *ep, struct homa_rpc *rpc)
{
	rpc->state = HOMA_RPC_READY;
	homa_list_del(&rpc->grant_links);
	homa_list_del(&rpc->wait_links);
	if (homa_list_empty(&rpc->ready_links))
		homa_list_add_tail(&ep->ready, &rpc->ready_links);
	ep->completions++;
}

void ep_rpc_fail(struct homa_ep *ep, struct homa_rpc *rpc, int err)
{
	rpc->error = err;
	ep_count(ep, HOMA_STAT_client_rpc_errors);
	ep_window_forget(ep, rpc);
	homa_list_del(&rpc->send_links);
	if (rpc->has_out)
		homa_msgout_free(&rpc->out);
	rpc->has_out = false;
	ep_release_in_buffers(ep, rpc, 0, ep->next_tick_ns);
	rpc->has_in = false;
	ep_rpc_ready(ep, rpc);
	if (!ep->in_tick)
		ep_grant_update(ep);
}

void ep_reclaim_buffers(struct homa_ep *ep)
{
	struct homa_rpc *victim = ep_buffer_victim(ep);

	if (!victim)
		return;
	ep_count(ep, HOMA_STAT_evicted_stalled);
	ep_rpc_free(ep, victim);      /* gives the space to the waiters */
}
