/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_pool - the receive buffer pool of one socket.
 *
 * The application gives a region of its memory; it is divided into bpages of
 * HOMA_BPAGE_SIZE bytes.  An incoming message of length L gets L / 64 KiB
 * whole bpages plus, for the remainder, a chunk of a partly used bpage owned
 * by the current core.  A core owns its partial bpage under a lease; when the
 * lease has expired and nobody else uses the bpage, another core may steal
 * it.  Whole bpages are taken preferring low indexes, to keep the footprint
 * small.  Bpages handed to the application through recvmsg are owned by it
 * until it returns their offsets; a returned offset that the application does
 * not own is rejected (EINVAL) and nothing is taken.
 *
 * Sans-IO: the caller passes the core number and the time; the pool is not
 * thread-safe (the endpoint's lock covers it).
 */
#ifndef HOMA_POOL_H
#define HOMA_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "homa.h"

struct homa_pool;

/* Fewest bpages a region must hold. */
#define HOMA_POOL_MIN_BPAGES 2

/*
 * homa_pool_create - a pool with no region yet.
 * Takes: the number of cores (>= 1; core numbers passed later are taken
 * modulo this), the lease of a partial bpage in nanoseconds.
 * Returns the pool (caller owns it; free with homa_pool_destroy) or NULL when
 * out of memory.
 */
struct homa_pool *homa_pool_create(int num_cores, uint64_t lease_ns);

/* homa_pool_destroy - free the pool (not the region, which the application
 * owns).  NULL is ignored. */
void homa_pool_destroy(struct homa_pool *pool);

/*
 * homa_pool_set_region - attach the application's region.
 * Returns 0; -EINVAL when start is NULL or not page-aligned (4096), when
 * length holds fewer than HOMA_POOL_MIN_BPAGES bpages or more than 2^32 bytes
 * of bpages, or when a region is already set; -ENOMEM.
 * Only whole bpages are used (length rounded down).
 */
int homa_pool_set_region(struct homa_pool *pool, void *start, size_t length);

/* homa_pool_has_region - true once a region is set. */
bool homa_pool_has_region(const struct homa_pool *pool);

/* homa_pool_get_rcvbuf - the region's start and usable length (0, 0 when
 * none), as getsockopt HOMA_SO_RCVBUF returns them. */
void homa_pool_get_rcvbuf(const struct homa_pool *pool,
			  struct homa_rcvbuf_args *args);

/* homa_pool_bpages_needed - bpages a message of length bytes occupies in the
 * worst case (whole bpages plus one for the remainder). */
uint32_t homa_pool_bpages_needed(uint32_t length);

/* homa_pool_free_bpages - bpages that nobody uses now (not counting partial
 * bpages that could be stolen). */
uint32_t homa_pool_free_bpages(const struct homa_pool *pool);

/* homa_pool_num_bpages - bpages in the region (0 when none). */
uint32_t homa_pool_num_bpages(const struct homa_pool *pool);

/*
 * homa_pool_alloc_msg - allocate space for a message of length bytes
 * (1..HOMA_MAX_MESSAGE_LENGTH).
 * Takes: the core number of the caller, the time now (ns), an output array of
 * HOMA_MAX_BPAGES offsets and a count.
 * Returns 0 and fills offsets[0..*num) (whole bpages first, aligned; then the
 * offset of the remainder's chunk if length is not a multiple of the bpage
 * size); -ENOSPC when the pool cannot hold the message now (nothing is
 * allocated); -ENOMEM when there is no region.
 */
int homa_pool_alloc_msg(struct homa_pool *pool, uint32_t length, int core,
			uint64_t now, uint32_t *offsets, uint32_t *num);

/*
 * homa_pool_buffer - where byte `offset` of a message stored at
 * offsets[0..num) lives.
 * Returns the address in the region and sets *available to the bytes that
 * may be written there contiguously (up to the end of the bpage or the
 * message); NULL with *available 0 when offset >= length.
 */
void *homa_pool_buffer(const struct homa_pool *pool, const uint32_t *offsets,
		       uint32_t num, uint32_t length, uint32_t offset,
		       uint32_t *available);

/*
 * homa_pool_release - give back the space of a message that is not in the
 * application's hands (an RPC that died before delivery).  Offsets outside
 * the region are ignored.
 */
void homa_pool_release(struct homa_pool *pool, const uint32_t *offsets,
		       uint32_t num);

/*
 * homa_pool_give_to_app - record that the application now owns the space at
 * offsets[0..num) (called when a message is delivered by recvmsg).
 * Returns 0, or -ENOMEM when the bookkeeping could not grow (the space is
 * then released and must not be handed out).
 */
int homa_pool_give_to_app(struct homa_pool *pool, const uint32_t *offsets,
			  uint32_t num);

/*
 * homa_pool_take_from_app - the application hands back offsets[0..num).
 * Every offset must be one the application owns, each at most once.
 * Returns 0 and frees them all, or -EINVAL and frees none.
 */
int homa_pool_take_from_app(struct homa_pool *pool, const uint32_t *offsets,
			    uint32_t num);

/* homa_pool_app_owned - how many offsets the application holds now. */
uint32_t homa_pool_app_owned(const struct homa_pool *pool);

#endif /* HOMA_POOL_H */
