/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_alloc - the core's one way to take and give back heap memory, with
 * failure injection for tests.  Every allocation of src/core goes through
 * homa_malloc, homa_calloc or homa_realloc and names its class; by default
 * they are malloc, calloc and realloc.  A thread that installs a
 * struct homa_alloc_faults (homa_alloc_set_faults) sees its own
 * allocations counted and refused as that struct says: the n-th one, or
 * every one of some classes.  Other threads are not affected.
 */
#ifndef HOMA_ALLOC_H
#define HOMA_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* What an allocation is for. */
enum homa_alloc_class {
	HOMA_ALLOC_ENDPOINT = 0, /* the endpoint and its fixed arrays */
	HOMA_ALLOC_RPC,          /* an RPC record */
	HOMA_ALLOC_MESSAGE,      /* an outgoing message's bytes */
	HOMA_ALLOC_PEER,         /* a peer record and its held requests */
	HOMA_ALLOC_TABLE,        /* hash-table buckets (RPCs, peers) */
	HOMA_ALLOC_CTRL,         /* the control-packet queue growing */
	HOMA_ALLOC_GRANT,        /* grant candidates and scratch space */
	HOMA_ALLOC_POOL,         /* the buffer pool's bookkeeping */
	HOMA_ALLOC_CLASSES
};

/* Failure injection: the allocations of the thread that installed it. */
struct homa_alloc_faults {
	uint64_t fail_nth;       /* the allocation numbered fail_nth (from 1,
				  * counted in count) fails; 0: none */
	uint32_t fail_classes;   /* bit c set: every allocation of class c
				  * fails */
	uint64_t count;          /* allocations asked for so far */
	uint64_t failed;         /* of them, refused */
	uint32_t seen_classes;   /* bit c set: class c was asked for */
};

/*
 * homa_alloc_set_faults - install f (NULL: none) for the calling thread's
 * allocations from now on; f is not copied and must stay valid while
 * installed.  Returns the previous one.
 */
struct homa_alloc_faults *homa_alloc_set_faults(struct homa_alloc_faults *f);

/* homa_malloc - size bytes for class c (uninitialised).  Returns them
 * (the caller owns them; homa_free gives them back) or NULL when out of
 * memory or refused by the installed faults. */
void *homa_malloc(enum homa_alloc_class c, size_t size);

/* homa_calloc - n zeroed elements of size bytes for class c; NULL as
 * homa_malloc (or when n * size overflows). */
void *homa_calloc(enum homa_alloc_class c, size_t n, size_t size);

/* homa_realloc - p (NULL, or from these functions) resized to size bytes.
 * Returns the new block (p is then gone) or NULL, leaving p untouched and
 * still owned by the caller. */
void *homa_realloc(enum homa_alloc_class c, void *p, size_t size);

/* homa_free - give back p (NULL: nothing). */
void homa_free(void *p);

#endif /* HOMA_ALLOC_H */
