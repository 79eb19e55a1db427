/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sim_events - the simulator's event queue: a binary min-heap keyed by
 * (time, sequence).  The sequence number is given out at push time, so
 * events due at the same time come out in the order they were pushed and a
 * run never depends on how the heap breaks ties.
 */
#ifndef SIM_EVENTS_H
#define SIM_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One event: what happens (kind, a node or host index, a pointer) when. */
struct sim_event {
	uint64_t time;     /* virtual ns */
	uint64_t seq;      /* push order */
	uint32_t kind;     /* chosen by the caller */
	uint32_t index;    /* chosen by the caller */
	void *ptr;         /* chosen by the caller (e.g. a packet) */
};

struct sim_events {
	struct sim_event *heap;
	size_t count, cap;
	uint64_t next_seq;
};

/* sim_events_init - an empty queue. */
void sim_events_init(struct sim_events *q);

/* sim_events_free - free the queue's storage (not what ptrs point to). */
void sim_events_free(struct sim_events *q);

/* sim_events_push - add an event.  Returns 0, or -ENOMEM (nothing added). */
int sim_events_push(struct sim_events *q, uint64_t time, uint32_t kind,
		    uint32_t index, void *ptr);

/* sim_events_pop - remove the earliest event (smallest time, then smallest
 * sequence) into *ev.  Returns false when the queue is empty. */
bool sim_events_pop(struct sim_events *q, struct sim_event *ev);

/* sim_events_peek_time - the time of the earliest event; UINT64_MAX when
 * the queue is empty. */
uint64_t sim_events_peek_time(const struct sim_events *q);

#endif /* SIM_EVENTS_H */
