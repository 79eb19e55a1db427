/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_hash - an intrusive hash table with chained buckets.  An object
 * that can be in a table embeds a struct homa_hash_link; the table holds
 * links, never copies of objects, and never frees objects (except through
 * the release callback of homa_hash_destroy).  Each entry is filed under
 * a 64-bit hash of its key, which the caller computes; lookups compare
 * that hash first and then ask the caller's equality function, so entries
 * whose keys collide (or are equal: several entries may share a key) are
 * told apart by the caller.  The table doubles its buckets when it holds
 * more than two entries per bucket; the buckets come from homa_alloc
 * (class HOMA_ALLOC_TABLE), and a growth that fails leaves the table as
 * it was (chains get longer, nothing is lost).
 */
#ifndef HOMA_HASH_H
#define HOMA_HASH_H

#include <stdbool.h>
#include <stdint.h>

/* What an object embeds to be in a table. */
struct homa_hash_link {
	struct homa_hash_link *next;   /* chain of its bucket */
	uint64_t hash;                 /* its key's hash (homa_hash_insert) */
};

struct homa_hash {
	struct homa_hash_link **buckets;
	uint32_t num_buckets;          /* power of two; 0 when destroyed */
	uint32_t count;                /* entries */
};

/*
 * An equality check: true when the object holding link l has the key
 * (or, for homa_hash_find_any, satisfies the condition) key points to.
 */
typedef bool (*homa_hash_eq)(const struct homa_hash_link *l,
			     const void *key);

/*
 * homa_hash_init - an empty table of buckets buckets (a power of two, 1
 * to 2^30).  Returns 0, or -ENOMEM (h is then empty with no buckets, and
 * homa_hash_destroy is harmless on it), or -EINVAL for another count.
 */
int homa_hash_init(struct homa_hash *h, uint32_t buckets);

/*
 * homa_hash_destroy - free the buckets.  With release non-NULL, it is
 * called once for every entry (which may free the object holding it);
 * with NULL the objects stay their owners'.  h is then empty, with no
 * buckets; a second call does nothing.
 */
void homa_hash_destroy(struct homa_hash *h,
		       void (*release)(struct homa_hash_link *l));

/*
 * homa_hash_insert - file l (not in any table) under hash.  l stays the
 * caller's object; the table only links it.  Grows the buckets when
 * count exceeds twice their number (a failed growth is harmless).
 */
void homa_hash_insert(struct homa_hash *h, struct homa_hash_link *l,
		      uint64_t hash);

/*
 * homa_hash_remove - take l out of h.  Returns true when it was there
 * (l->next is then NULL); false, h and l unchanged, when it was not.
 */
bool homa_hash_remove(struct homa_hash *h, struct homa_hash_link *l);

/*
 * homa_hash_find_any - the first entry, in bucket order, for which
 * pred(entry, ctx) is true, or NULL.  Visits every bucket: for rare
 * scans (forgetting an idle entry), not for lookups.
 */
struct homa_hash_link *homa_hash_find_any(const struct homa_hash *h,
					  homa_hash_eq pred,
					  const void *ctx);

/*
 * homa_hash_bucket - the bucket of hash in a table of num_buckets (a
 * power of two): the hash is mixed first, so that keys whose low bits
 * agree (sequential ids, say) spread over the buckets.
 */
static inline uint32_t homa_hash_bucket(uint64_t hash, uint32_t num_buckets)
{
	uint64_t x = (hash ^ (hash >> 32)) * 0x9E3779B97F4A7C15ull;

	return (uint32_t)(x >> 32) & (num_buckets - 1);
}

/*
 * homa_hash_find - the entry filed under hash for which eq(entry, key) is
 * true (one of them, when several are), or NULL.  h must have
 * buckets (initialised, not destroyed).  Inline, so that a constant eq is
 * inlined into the lookup.
 */
static inline struct homa_hash_link *homa_hash_find(const struct homa_hash *h,
						    uint64_t hash,
						    homa_hash_eq eq,
						    const void *key)
{
	struct homa_hash_link *l;

	l = h->buckets[homa_hash_bucket(hash, h->num_buckets)];
	for (; l; l = l->next)
		if (l->hash == hash && eq(l, key))
			return l;
	return NULL;
}

#endif /* HOMA_HASH_H */
