/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_pool - the receive buffer pool of one socket (see homa_pool.h).
 *
 * Bookkeeping, in short:
 * - Each bpage has a use count: one for every live message that has bytes
 *   in it, plus one while a core holds it as the bpage it carves small
 *   chunks from.  A bpage with a count of 0 is free; free_bpages counts
 *   exactly those (between calls).
 * - Each core remembers its chunk bpage (hint) and how many of its leading
 *   bytes are handed out.  The hint is only trusted while the bpage's owner
 *   field still names the core: ownership may be given up or taken away.
 * - A core's hold on its chunk bpage is a lease.  Once the lease is over and
 *   no message uses the bpage any more, anyone may take it.
 * - Offsets handed to the application are kept in a hash set so that what
 *   it returns can be checked before anything is freed.
 *
 * Nothing here locks, reads a clock or knows which core it runs on: the
 * caller serialises the calls and passes the core number and the time.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "homa.h"
#include "homa_alloc.h"
#include "homa_pool.h"

/* Region alignment required by homa_pool_set_region. */
#define POOL_PAGE_SIZE 4096u

/* Whole-bpage searches look at least this many bpages beyond those in use. */
#define SEARCH_MIN_EXTRA 4u

/* Largest region, in bpages: offsets must fit in 32 bits. */
#define POOL_MAX_BPAGES ((uint32_t)((UINT64_C(1) << 32) >> HOMA_BPAGE_SHIFT))

/* Mask of the byte position inside a bpage. */
#define BPAGE_MASK ((uint32_t)HOMA_BPAGE_SIZE - 1u)

/* Hash set slots: an empty slot, and the flag marking an entry as already
 * named by the take_from_app call in progress (offsets use the low 32 bits
 * only, so neither can be confused with an offset). */
#define SLOT_EMPTY UINT64_MAX
#define SLOT_CLAIMED (UINT64_C(1) << 32)

/* Smallest hash table, in slots (a power of two). */
#define SET_MIN_SLOTS 16u

/* State of one bpage. */
struct pool_bpage {
	uint32_t refs;       /* live messages in it, +1 while a core owns it */
	int owner;           /* owning core, or -1 */
	uint64_t expiration; /* time at which the owner's lease ends */
};

/* State of one core. */
struct pool_core {
	uint32_t page_hint;      /* the bpage this core carves chunks from, if
				  * it still owns it */
	uint32_t allocated;      /* leading bytes of that bpage handed out */
	uint32_t next_candidate; /* where the next whole-bpage search starts */
};

struct homa_pool {
	int num_cores;
	uint64_t lease_ns;
	char *region;              /* NULL until set */
	uint32_t num_bpages;
	uint32_t free_bpages;      /* bpages with refs == 0, less reservations */
	struct pool_bpage *bpages; /* num_bpages entries */
	struct pool_core *cores;   /* num_cores entries */

	/* Offsets owned by the application: open addressing, linear probing,
	 * deletion by backward shift (no tombstones). */
	uint64_t *app_slots;       /* SLOT_EMPTY or offset (| SLOT_CLAIMED) */
	size_t app_cap;            /* slots, a power of two, or 0 */
	unsigned int app_bits;     /* log2(app_cap) */
	uint32_t app_count;        /* entries in use */
};

/*
 * lease_end - the time a lease taken at now ends (saturates rather than
 * wrapping, so a huge lease never ends).
 */
static uint64_t lease_end(const struct homa_pool *pool, uint64_t now)
{
	if (pool->lease_ns > UINT64_MAX - now)
		return UINT64_MAX;
	return now + pool->lease_ns;
}

/*
 * core_index - map a caller's core number onto 0..num_cores-1 (modulo, also
 * for negative numbers).
 */
static int core_index(const struct homa_pool *pool, int core)
{
	int c = core % pool->num_cores;

	return c < 0 ? c + pool->num_cores : c;
}

/*
 * homa_pool_create - see homa_pool.h.  Also returns NULL when num_cores < 1.
 * The per-core state is allocated here; the bpage table waits for the
 * region.
 */
struct homa_pool *homa_pool_create(int num_cores, uint64_t lease_ns)
{
	struct homa_pool *pool;

	if (num_cores < 1)
		return NULL;
	pool = homa_calloc(HOMA_ALLOC_POOL, 1, sizeof(*pool));
	if (!pool)
		return NULL;
	pool->cores = homa_calloc(HOMA_ALLOC_POOL, (size_t)num_cores,
				  sizeof(*pool->cores));
	if (!pool->cores) {
		homa_free(pool);
		return NULL;
	}
	pool->num_cores = num_cores;
	pool->lease_ns = lease_ns;
	return pool;
}

/*
 * homa_pool_destroy - free the pool and everything it allocated (never the
 * region).  NULL is ignored.
 */
void homa_pool_destroy(struct homa_pool *pool)
{
	if (!pool)
		return;
	homa_free(pool->app_slots);
	homa_free(pool->bpages);
	homa_free(pool->cores);
	homa_free(pool);
}

/*
 * homa_pool_set_region - see homa_pool.h.  Every check is made before
 * anything changes, so on any error the pool is as it was.  Also -EINVAL
 * when the region would wrap around the end of the address space.  The
 * region's memory is never touched here or later by the pool.
 */
int homa_pool_set_region(struct homa_pool *pool, void *start, size_t length)
{
	size_t count = length >> HOMA_BPAGE_SHIFT;
	uint32_t i, n;

	if (pool->region || !start)
		return -EINVAL;
	if ((uintptr_t)start % POOL_PAGE_SIZE != 0)
		return -EINVAL;
	if (count < HOMA_POOL_MIN_BPAGES || count > POOL_MAX_BPAGES)
		return -EINVAL;
	n = (uint32_t)count;
	/* The region must not wrap around the address space. */
	if ((uintptr_t)start >
	    UINTPTR_MAX - (((uintptr_t)n << HOMA_BPAGE_SHIFT) - 1))
		return -EINVAL;

	pool->bpages = homa_malloc(HOMA_ALLOC_POOL,
				   (size_t)n * sizeof(*pool->bpages));
	if (!pool->bpages)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		pool->bpages[i].refs = 0;
		pool->bpages[i].owner = -1;
		pool->bpages[i].expiration = 0;
	}
	memset(pool->cores, 0, (size_t)pool->num_cores * sizeof(*pool->cores));
	pool->region = start;
	pool->num_bpages = n;
	pool->free_bpages = n;
	return 0;
}

/* homa_pool_has_region - true once homa_pool_set_region succeeded. */
bool homa_pool_has_region(const struct homa_pool *pool)
{
	return pool->region != NULL;
}

/*
 * homa_pool_get_rcvbuf - fill args with the region's start and the bytes
 * of its whole bpages; 0 and 0 without a region.
 */
void homa_pool_get_rcvbuf(const struct homa_pool *pool,
			  struct homa_rcvbuf_args *args)
{
	args->start = (uint64_t)(uintptr_t)pool->region;
	args->length = (size_t)pool->num_bpages << HOMA_BPAGE_SHIFT;
}

/*
 * homa_pool_bpages_needed - ceil(length / HOMA_BPAGE_SIZE): the whole bpages
 * plus one for a nonzero remainder.  Pure; no pool needed.
 */
uint32_t homa_pool_bpages_needed(uint32_t length)
{
	return (uint32_t)(((uint64_t)length + BPAGE_MASK) >> HOMA_BPAGE_SHIFT);
}

/*
 * homa_pool_free_bpages - bpages with no use at all (refs 0).  A core's idle
 * chunk bpage is not counted, even after its lease has ended.
 */
uint32_t homa_pool_free_bpages(const struct homa_pool *pool)
{
	return pool->free_bpages;
}

/* homa_pool_num_bpages - bpages in the region; 0 without one. */
uint32_t homa_pool_num_bpages(const struct homa_pool *pool)
{
	return pool->num_bpages;
}

/*
 * bpage_takeable - true when bp may be taken now: nobody uses it, or only
 * its owning core does and that core's lease ended at or before now.
 */
static bool bpage_takeable(const struct pool_bpage *bp, uint64_t now)
{
	if (bp->refs == 0)
		return true;
	return bp->refs == 1 && bp->owner >= 0 && bp->expiration <= now;
}

/*
 * reclaim_expired_leases - end every core's hold on a chunk bpage that no
 * message uses and whose lease is over, making those bpages free.  Used
 * only when a reservation would fail: such bpages are not in free_bpages,
 * and without this they could stay out of reach for good (for instance
 * when every bpage of a small region is some idle core's chunk bpage).
 * Costs O(num_cores).
 */
static void reclaim_expired_leases(struct homa_pool *pool, uint64_t now)
{
	int c;

	for (c = 0; c < pool->num_cores; c++) {
		struct pool_bpage *bp = &pool->bpages[pool->cores[c].page_hint];

		if (bp->owner == c && bp->refs == 1 && bp->expiration <= now) {
			bp->owner = -1;
			bp->refs = 0;
			pool->free_bpages++;
		}
	}
}

/*
 * take_bpages - take count bpages for core c.
 * Takes: the pool (with a region), count >= 1, the core index (already
 * reduced), the time, an output array of count indexes, and whether the
 * bpages become owned by the core (then they get refs 2, one for the
 * message and one for the ownership, and a fresh lease) or not (refs 1).
 * Returns true and fills idx[0..count), or false with nothing taken when
 * fewer than count bpages are free.
 *
 * The count is reserved against free_bpages first, so the search below is
 * sure to succeed.  The search prefers low indexes: it only looks below a
 * limit a little above the number of bpages in use, wrapping to 0 when it
 * gets there, so a lightly loaded pool keeps reusing the same few bpages.
 */
static bool take_bpages(struct homa_pool *pool, uint32_t count, int c,
			uint64_t now, uint32_t *idx, bool owned)
{
	struct pool_core *core = &pool->cores[c];
	uint32_t taken = 0;
	uint32_t limit = 0;

	if (count > pool->free_bpages) {
		reclaim_expired_leases(pool, now);
		if (count > pool->free_bpages)
			return false;
	}
	/*
	 * From here on free_bpages == (bpages with refs 0) - (still to take),
	 * so below any limit >= in_use + (still to take) there are enough
	 * bpages with refs 0: the loop ends.
	 */
	pool->free_bpages -= count;

	while (taken < count) {
		struct pool_bpage *bp;
		uint32_t cur;

		if (limit == 0) {
			uint32_t in_use = pool->num_bpages - pool->free_bpages;
			uint32_t extra = in_use / 4;

			if (extra < SEARCH_MIN_EXTRA)
				extra = SEARCH_MIN_EXTRA;
			limit = pool->num_bpages;
			if (extra < pool->num_bpages &&
			    in_use < pool->num_bpages - extra)
				limit = in_use + extra;
		}
		cur = core->next_candidate;
		if (cur >= limit) {
			/* Back to the start; the limit is worked out anew. */
			core->next_candidate = 0;
			limit = 0;
			continue;
		}
		core->next_candidate = cur + 1;
		bp = &pool->bpages[cur];
		if (!bpage_takeable(bp, now))
			continue;
		if (bp->refs != 0) {
			/* Taken from an idle owner: this bpage was not in
			 * free_bpages, yet the reservation counted it. */
			pool->free_bpages++;
		}
		if (owned) {
			bp->refs = 2;
			bp->owner = c;
			bp->expiration = lease_end(pool, now);
		} else {
			bp->refs = 1;
			bp->owner = -1;
		}
		idx[taken++] = cur;
	}
	return true;
}

/*
 * drop_ref - remove one use of bpage index i (a valid index with refs > 0);
 * a bpage nobody uses any more becomes free.
 */
static void drop_ref(struct homa_pool *pool, uint32_t i)
{
	struct pool_bpage *bp = &pool->bpages[i];

	if (bp->refs == 0)
		return; /* not in use: a caller's mistake; keep counts sane */
	bp->refs--;
	if (bp->refs == 0)
		pool->free_bpages++;
}

/*
 * homa_pool_alloc_msg - see homa_pool.h.  Whole bpages come from
 * take_bpages (unowned, refs 1).  The remainder is carved from the core's
 * chunk bpage when the core still owns it and the chunk fits; when it does
 * not fit, the bpage is restarted at byte 0 if no message uses it any more,
 * else given up; then the core takes a fresh bpage of its own.  On -ENOSPC
 * everything taken by this call has been given back and *num is 0 (a chunk
 * bpage given up stays given up: that takes nothing from anyone).  Also
 * -EINVAL, with nothing taken, when length is 0 or above
 * HOMA_MAX_MESSAGE_LENGTH.
 */
int homa_pool_alloc_msg(struct homa_pool *pool, uint32_t length, int core,
			uint64_t now, uint32_t *offsets, uint32_t *num)
{
	uint32_t whole = length >> HOMA_BPAGE_SHIFT;
	uint32_t partial = length & BPAGE_MASK;
	uint32_t idx[HOMA_MAX_BPAGES];
	int c = core_index(pool, core);
	struct pool_core *pc;
	struct pool_bpage *bp;
	uint32_t i, n = 0;

	*num = 0;
	if (!pool->region)
		return -ENOMEM;
	if (length == 0 || length > HOMA_MAX_MESSAGE_LENGTH)
		return -EINVAL;

	if (whole > 0) {
		if (!take_bpages(pool, whole, c, now, idx, false))
			return -ENOSPC;
		for (i = 0; i < whole; i++)
			offsets[n++] = idx[i] << HOMA_BPAGE_SHIFT;
	}
	if (partial == 0) {
		*num = n;
		return 0;
	}

	/* The remainder goes into a chunk of the core's own bpage. */
	pc = &pool->cores[c];
	bp = &pool->bpages[pc->page_hint];
	if (bp->owner == c) {
		bool usable = true;

		if (partial > HOMA_BPAGE_SIZE - pc->allocated) {
			if (bp->refs == 1) {
				/* Only our ownership holds it: start over. */
				pc->allocated = 0;
			} else {
				/* Full and still in use: let it go (refs
				 * stays above 0, so it does not become
				 * free here). */
				bp->owner = -1;
				bp->refs--;
				usable = false;
			}
		}
		if (usable) {
			bp->refs++;
			bp->expiration = lease_end(pool, now);
			goto chunk;
		}
	}
	if (!take_bpages(pool, 1, c, now, idx, true)) {
		homa_pool_release(pool, offsets, n);
		return -ENOSPC;
	}
	pc->page_hint = idx[0];
	pc->allocated = 0;

chunk:
	offsets[n++] = (pc->page_hint << HOMA_BPAGE_SHIFT) + pc->allocated;
	pc->allocated += partial;
	*num = n;
	return 0;
}

/*
 * homa_pool_buffer - see homa_pool.h.  Entry i of offsets holds message
 * bytes [i * HOMA_BPAGE_SIZE, (i + 1) * HOMA_BPAGE_SIZE); all entries but the
 * last are whole bpages.  Also NULL with *available 0 without a region,
 * when offsets has no entry for the byte, or when that entry lies outside
 * the region.
 */
void *homa_pool_buffer(const struct homa_pool *pool, const uint32_t *offsets,
		       uint32_t num, uint32_t length, uint32_t offset,
		       uint32_t *available)
{
	uint32_t i = offset >> HOMA_BPAGE_SHIFT;
	uint32_t within = offset & BPAGE_MASK;
	uint64_t where;

	*available = 0;
	if (!pool->region || offset >= length || i >= num)
		return NULL;
	where = (uint64_t)offsets[i] + within;
	if (where >= (uint64_t)pool->num_bpages << HOMA_BPAGE_SHIFT)
		return NULL;
	if (i + 1 < num)
		*available = HOMA_BPAGE_SIZE - within;
	else
		*available = length - offset;
	return pool->region + where;
}

/*
 * homa_pool_release - drop one use of the bpage under each offset; bpages
 * left unused become free.  No ownership check: the caller vouches that
 * offsets[0..num) came from homa_pool_alloc_msg and were not given to the
 * application.  Offsets outside the region, or any call without a region,
 * change nothing.
 */
void homa_pool_release(struct homa_pool *pool, const uint32_t *offsets,
		       uint32_t num)
{
	uint32_t i;

	if (!pool->region)
		return;
	for (i = 0; i < num; i++) {
		uint32_t b = offsets[i] >> HOMA_BPAGE_SHIFT;

		if (b < pool->num_bpages)
			drop_ref(pool, b);
	}
}

/*
 * set_home - the slot where the search for offset starts (Fibonacci
 * hashing onto app_bits bits).  Needs app_cap > 0.
 */
static size_t set_home(const struct homa_pool *pool, uint32_t offset)
{
	return (size_t)(((uint64_t)offset * UINT64_C(0x9E3779B97F4A7C15)) >>
			(64 - pool->app_bits));
}

/*
 * set_find - the slot holding offset (claimed or not), or SIZE_MAX when it
 * is not in the set.
 */
static size_t set_find(const struct homa_pool *pool, uint32_t offset)
{
	size_t mask = pool->app_cap - 1;
	size_t s;

	if (pool->app_cap == 0)
		return SIZE_MAX;
	for (s = set_home(pool, offset); pool->app_slots[s] != SLOT_EMPTY;
	     s = (s + 1) & mask) {
		if ((uint32_t)pool->app_slots[s] == offset)
			return s;
	}
	return SIZE_MAX;
}

/*
 * set_put - add offset to the set if absent.  Needs a free slot (the table
 * is kept at most half full by set_reserve).
 */
static void set_put(struct homa_pool *pool, uint32_t offset)
{
	size_t mask = pool->app_cap - 1;
	size_t s;

	for (s = set_home(pool, offset); pool->app_slots[s] != SLOT_EMPTY;
	     s = (s + 1) & mask) {
		if ((uint32_t)pool->app_slots[s] == offset)
			return;
	}
	pool->app_slots[s] = offset;
	pool->app_count++;
}

/*
 * set_remove_slot - delete the entry at slot s, moving later entries of the
 * same probe run back so that every entry stays reachable from its home.
 */
static void set_remove_slot(struct homa_pool *pool, size_t s)
{
	size_t mask = pool->app_cap - 1;
	size_t hole = s;
	size_t k = s;

	pool->app_count--;
	pool->app_slots[hole] = SLOT_EMPTY;
	for (;;) {
		size_t home;

		k = (k + 1) & mask;
		if (pool->app_slots[k] == SLOT_EMPTY)
			return;
		home = set_home(pool, (uint32_t)pool->app_slots[k]);
		/* The entry at k may stay if its home lies cyclically in
		 * (hole, k]; otherwise it moves into the hole. */
		if (hole < k ? (home > hole && home <= k)
			     : (home > hole || home <= k))
			continue;
		pool->app_slots[hole] = pool->app_slots[k];
		pool->app_slots[k] = SLOT_EMPTY;
		hole = k;
	}
}

/*
 * set_reserve - make room for extra more entries, keeping the table at
 * most half full.  Returns 0, or -ENOMEM with the set unchanged.
 */
static int set_reserve(struct homa_pool *pool, uint32_t extra)
{
	uint64_t need = (uint64_t)pool->app_count + extra;
	size_t cap = pool->app_cap ? pool->app_cap : SET_MIN_SLOTS;
	unsigned int bits;
	uint64_t *slots;
	size_t i, old_cap = pool->app_cap;

	if (need <= old_cap / 2)
		return 0;
	while (cap / 2 < need) {
		if (cap > SIZE_MAX / 2 / sizeof(*slots))
			return -ENOMEM;
		cap *= 2;
	}
	slots = homa_malloc(HOMA_ALLOC_POOL, cap * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		slots[i] = SLOT_EMPTY;
	for (bits = 0; ((size_t)1 << bits) < cap; bits++)
		;

	{
		uint64_t *old = pool->app_slots;

		pool->app_slots = slots;
		pool->app_cap = cap;
		pool->app_bits = bits;
		pool->app_count = 0;
		for (i = 0; i < old_cap; i++) {
			if (old[i] != SLOT_EMPTY)
				set_put(pool, (uint32_t)old[i]);
		}
		homa_free(old);
	}
	return 0;
}

/*
 * homa_pool_give_to_app - see homa_pool.h.  Room for all num offsets is
 * made before any is recorded, so -ENOMEM records none (and releases all of
 * them, as the header requires).  Offsets outside the region are not
 * recorded; an offset already recorded stays recorded once (a caller error:
 * live messages never share an offset).  Without a region, does nothing.
 */
int homa_pool_give_to_app(struct homa_pool *pool, const uint32_t *offsets,
			  uint32_t num)
{
	uint32_t i;

	if (num == 0 || !pool->region)
		return 0;
	if (set_reserve(pool, num) != 0) {
		homa_pool_release(pool, offsets, num);
		return -ENOMEM;
	}
	for (i = 0; i < num; i++) {
		if ((offsets[i] >> HOMA_BPAGE_SHIFT) < pool->num_bpages)
			set_put(pool, offsets[i]);
	}
	return 0;
}

/*
 * homa_pool_take_from_app - see homa_pool.h.  Checks every offset (owned by
 * the application, not repeated in this call) before changing anything;
 * then forgets and releases all of them.  num == 0 returns 0.  Expected
 * cost O(num).
 */
int homa_pool_take_from_app(struct homa_pool *pool, const uint32_t *offsets,
			    uint32_t num)
{
	uint32_t i, j;

	/* First pass: every offset must be owned and named once; the ones
	 * seen so far are flagged so that a repeat is caught. */
	for (i = 0; i < num; i++) {
		size_t s = set_find(pool, offsets[i]);

		if (s == SIZE_MAX || (pool->app_slots[s] & SLOT_CLAIMED))
			break;
		pool->app_slots[s] |= SLOT_CLAIMED;
	}
	if (i < num) {
		for (j = 0; j < i; j++) {
			size_t s = set_find(pool, offsets[j]);

			pool->app_slots[s] &= ~SLOT_CLAIMED;
		}
		return -EINVAL;
	}

	/* Second pass: all valid; forget and free them. */
	for (i = 0; i < num; i++) {
		set_remove_slot(pool, set_find(pool, offsets[i]));
		drop_ref(pool, offsets[i] >> HOMA_BPAGE_SHIFT);
	}
	return 0;
}

/* homa_pool_app_owned - offsets recorded by give_to_app not yet taken. */
uint32_t homa_pool_app_owned(const struct homa_pool *pool)
{
	return pool->app_count;
}
