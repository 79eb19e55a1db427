/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_trace - an in-memory trace of the library's I/O events, off unless
 * the environment names a file for it: with HOMA_TRACE_FILE=PATH set when
 * the library loads, each event (a kernel send or receive of the datapath,
 * a homa_sendmsg or homa_recvmsg entering or leaving, a step of a send's
 * kept copy, a receiving thread going to sleep or waking, a pass of the
 * progress thread) is stored with its time, thread and CPU, and the whole
 * trace is written to PATH when the process exits (scripts/trace_rpc.py
 * reads it).  At most HOMA_TRACE_EVENTS events (default 1,048,576, at
 * most 16,777,216; 24 bytes each, allocated when tracing starts) are kept;
 * later ones are counted as dropped.  Off, an event costs one load and a branch.
 *
 * File format: a first line "# libhoma trace: N events, D dropped", then
 * one line per event, in the order the events took their slot (time order
 * within a thread): "NS TID CPU EVENT VALUE", NS the CLOCK_MONOTONIC time
 * in nanoseconds, EVENT a name from homa_trace_name.
 */
#ifndef HOMA_TRACE_H
#define HOMA_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The events, and what VALUE holds for each. */
enum homa_trace_event {
	HOMA_TRACE_DP_SEND,     /* a send system call starts: datagrams */
	HOMA_TRACE_DP_SENT,     /* it returned: its result */
	HOMA_TRACE_DP_RECV,     /* a receive system call returned: its
				 * result (datagrams, or -1) */
	HOMA_TRACE_SEND_ENTER,  /* homa_sendmsg entered: 0 */
	HOMA_TRACE_SETTLE_STEP, /* a step of a send's kept copy ended: 1 when
				 * the copy is done (or skipped), else 0 */
	HOMA_TRACE_RECV_ENTER,  /* homa_recvmsg entered: 0 */
	HOMA_TRACE_RECV_LEAVE,  /* it returns: the length, or -errno */
	HOMA_TRACE_LEAD_SLEEP,  /* the socket's leader sleeps on its
				 * descriptors: 0 */
	HOMA_TRACE_LEAD_WAKE,   /* ... and wakes: 1 when packets wait */
	HOMA_TRACE_WAIT_SLEEP,  /* a waiter that does not lead sleeps: 0 */
	HOMA_TRACE_WAIT_WAKE,   /* ... and wakes: 0 */
	HOMA_TRACE_PASS,        /* the progress thread starts a pass: 1 on a
				 * tick (every socket drained), else 0 */
	HOMA_TRACE_PASS_END,    /* ... and ends it: the same */
	HOMA_TRACE_EVENT_COUNT
};

/* Default and largest number of events kept (HOMA_TRACE_EVENTS). */
#define HOMA_TRACE_DEFAULT_EVENTS (1u << 20)
#define HOMA_TRACE_MAX_EVENTS (1u << 24)

/* True while events are recorded. */
extern atomic_bool homa_trace_enabled;

/*
 * homa_trace_record - store event ev with value now (the caller checked
 * homa_trace_enabled).  Thread-safe; never blocks; drops the event when
 * the trace is full.
 */
void homa_trace_record(enum homa_trace_event ev, long value);

/* homa_trace - record ev with value when tracing is on. */
static inline void homa_trace(enum homa_trace_event ev, long value)
{
	if (atomic_load_explicit(&homa_trace_enabled, memory_order_acquire))
		homa_trace_record(ev, value);
}

/*
 * homa_trace_start - begin recording up to capacity events (0: the
 * default; capped at HOMA_TRACE_MAX_EVENTS), dropping any trace recorded
 * before.  Returns 0, or -ENOMEM (tracing stays off).  The library calls it
 * at load time when HOMA_TRACE_FILE is set; tests call it directly.  Not
 * while another thread may record (the old events' memory is freed).
 */
int homa_trace_start(size_t capacity);

/*
 * homa_trace_stop - stop recording; the events recorded so far stay until
 * the next homa_trace_start.
 */
void homa_trace_stop(void);

/*
 * homa_trace_write - write the recorded events to f in the file format
 * above.  Returns the number of events written, or -1 when a write failed.
 * Events whose recording had not finished when it looked are left out.
 */
long homa_trace_write(FILE *f);

/*
 * homa_trace_capacity - the most events the trace keeps (what the last
 * homa_trace_start set; 0 before any).  Like homa_trace_start, not while
 * another thread may start a trace.
 */
size_t homa_trace_capacity(void);

/* homa_trace_name - the name of ev in the file ("dp_send", ...), or "?". */
const char *homa_trace_name(enum homa_trace_event ev);

#endif /* HOMA_TRACE_H */
