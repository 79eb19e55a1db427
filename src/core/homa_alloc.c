// SPDX-License-Identifier: BSD-2-Clause
/*
 * The core's allocator: malloc, calloc, realloc and free, behind one
 * thread-local pointer that tests set to inject failures.
 */

#include <stdbool.h>
#include <stdlib.h>

#include "homa_alloc.h"

/* The faults of this thread (NULL: plain allocation, the usual case). */
static _Thread_local struct homa_alloc_faults *faults;

struct homa_alloc_faults *homa_alloc_set_faults(struct homa_alloc_faults *f)
{
	struct homa_alloc_faults *old = faults;

	faults = f;
	return old;
}

/* refused - count one allocation of class c against the installed faults;
 * true when it must fail. */
static bool refused(enum homa_alloc_class c)
{
	struct homa_alloc_faults *f = faults;
	bool fail;

	if (!f)
		return false;
	f->count++;
	f->seen_classes |= 1u << c;
	fail = f->count == f->fail_nth || ((f->fail_classes >> c) & 1u);
	if (fail)
		f->failed++;
	return fail;
}

void *homa_malloc(enum homa_alloc_class c, size_t size)
{
	return refused(c) ? NULL : malloc(size);
}

void *homa_calloc(enum homa_alloc_class c, size_t n, size_t size)
{
	return refused(c) ? NULL : calloc(n, size);
}

void *homa_realloc(enum homa_alloc_class c, void *p, size_t size)
{
	return refused(c) ? NULL : realloc(p, size);
}

void homa_free(void *p)
{
	free(p);
}
