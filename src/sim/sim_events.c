// SPDX-License-Identifier: BSD-2-Clause
/* The event queue: see sim_events.h. */

#include <errno.h>
#include <stdlib.h>

#include "sim_events.h"

/* before - true when a is due before b. */
static bool before(const struct sim_event *a, const struct sim_event *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	return a->seq < b->seq;
}

void sim_events_init(struct sim_events *q)
{
	q->heap = NULL;
	q->count = 0;
	q->cap = 0;
	q->next_seq = 0;
}

void sim_events_free(struct sim_events *q)
{
	free(q->heap);
	sim_events_init(q);
}

/* grow - double the heap's capacity.  Returns 0 or -ENOMEM. */
static int grow(struct sim_events *q)
{
	size_t cap = q->cap ? q->cap * 2 : 1024;
	struct sim_event *h = realloc(q->heap, cap * sizeof(*h));

	if (!h)
		return -ENOMEM;
	q->heap = h;
	q->cap = cap;
	return 0;
}

int sim_events_push(struct sim_events *q, uint64_t time, uint32_t kind,
		    uint32_t index, void *ptr)
{
	struct sim_event ev = { time, q->next_seq, kind, index, ptr };
	size_t i;

	if (q->count == q->cap && grow(q) != 0)
		return -ENOMEM;
	q->next_seq++;
	/* Sift up: move parents that are due later down into the hole. */
	for (i = q->count++; i > 0; ) {
		size_t parent = (i - 1) / 2;

		if (!before(&ev, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = ev;
	return 0;
}

bool sim_events_pop(struct sim_events *q, struct sim_event *ev)
{
	struct sim_event last;
	size_t i = 0;

	if (q->count == 0)
		return false;
	*ev = q->heap[0];
	last = q->heap[--q->count];
	/* Sift down: move the earlier child up into the hole until last
	 * fits. */
	for (;;) {
		size_t child = 2 * i + 1;

		if (child >= q->count)
			break;
		if (child + 1 < q->count &&
		    before(&q->heap[child + 1], &q->heap[child]))
			child++;
		if (!before(&q->heap[child], &last))
			break;
		q->heap[i] = q->heap[child];
		i = child;
	}
	if (q->count > 0)
		q->heap[i] = last;
	return true;
}

uint64_t sim_events_peek_time(const struct sim_events *q)
{
	return q->count ? q->heap[0].time : UINT64_MAX;
}
