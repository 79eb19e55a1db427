// SPDX-License-Identifier: BSD-2-Clause
/* The core's intrusive hash table: see homa_hash.h. */

#include <errno.h>
#include <stddef.h>

#include "homa_alloc.h"
#include "homa_hash.h"

/* The most buckets a table grows to (a power of two). */
#define MAX_BUCKETS (1u << 30)

int homa_hash_init(struct homa_hash *h, uint32_t buckets)
{
	h->buckets = NULL;
	h->num_buckets = 0;
	h->count = 0;
	if (buckets == 0 || (buckets & (buckets - 1)) != 0 ||
	    buckets > MAX_BUCKETS)
		return -EINVAL;
	h->buckets = homa_calloc(HOMA_ALLOC_TABLE, buckets,
				 sizeof(*h->buckets));
	if (!h->buckets)
		return -ENOMEM;
	h->num_buckets = buckets;
	return 0;
}

void homa_hash_destroy(struct homa_hash *h,
		       void (*release)(struct homa_hash_link *l))
{
	uint32_t i;

	for (i = 0; release && i < h->num_buckets; i++) {
		struct homa_hash_link *l = h->buckets[i], *next;

		for (; l; l = next) {
			next = l->next;
			release(l);
		}
	}
	homa_free(h->buckets);
	h->buckets = NULL;
	h->num_buckets = 0;
	h->count = 0;
}

/* grow - double h's buckets, moving every entry to its new bucket; when
 * the table is at MAX_BUCKETS or out of memory, nothing changes. */
static void grow(struct homa_hash *h)
{
	uint32_t n = h->num_buckets * 2, i;
	struct homa_hash_link **b;

	if (h->num_buckets >= MAX_BUCKETS)
		return;
	b = homa_calloc(HOMA_ALLOC_TABLE, n, sizeof(*b));
	if (!b)
		return;
	for (i = 0; i < h->num_buckets; i++) {
		struct homa_hash_link *l = h->buckets[i], *next;

		for (; l; l = next) {
			uint32_t k = homa_hash_bucket(l->hash, n);

			next = l->next;
			l->next = b[k];
			b[k] = l;
		}
	}
	homa_free(h->buckets);
	h->buckets = b;
	h->num_buckets = n;
}

void homa_hash_insert(struct homa_hash *h, struct homa_hash_link *l,
		      uint64_t hash)
{
	struct homa_hash_link **head;

	head = &h->buckets[homa_hash_bucket(hash, h->num_buckets)];
	l->hash = hash;
	l->next = *head;
	*head = l;
	if (++h->count > 2 * (uint64_t)h->num_buckets)
		grow(h);
}

bool homa_hash_remove(struct homa_hash *h, struct homa_hash_link *l)
{
	struct homa_hash_link **pp;

	if (h->num_buckets == 0)
		return false;
	pp = &h->buckets[homa_hash_bucket(l->hash, h->num_buckets)];
	for (; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			l->next = NULL;
			h->count--;
			return true;
		}
	}
	return false;
}

struct homa_hash_link *homa_hash_find_any(const struct homa_hash *h,
					  homa_hash_eq pred,
					  const void *ctx)
{
	uint32_t i;

	for (i = 0; i < h->num_buckets; i++) {
		struct homa_hash_link *l = h->buckets[i];

		for (; l; l = l->next)
			if (pred(l, ctx))
				return l;
	}
	return NULL;
}
