/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_msgin - reassembly bookkeeping of one incoming message: which byte
 * ranges have arrived, with a bounded set of gaps, and how much the sender
 * has been allowed to send.  It does not hold the data (that goes straight
 * into the buffer pool); it only decides whether a packet's range is new.
 */
#ifndef HOMA_MSGIN_H
#define HOMA_MSGIN_H

#include <stdbool.h>
#include <stdint.h>

/* Most gap records the implementation can hold (max_gaps is capped). */
#define HOMA_MSGIN_GAPS_CAP 64

struct homa_gap {
	uint32_t start;  /* first missing byte */
	uint32_t end;    /* one past the last missing byte */
};

struct homa_msgin {
	uint32_t length;        /* message length */
	uint32_t recv_end;      /* bytes below this have arrived, except gaps */
	uint32_t received;      /* bytes arrived in total */
	uint32_t granted;       /* the sender may send bytes below this */
	uint16_t num_gaps;
	uint16_t max_gaps;      /* bound on num_gaps */
	struct homa_gap gaps[HOMA_MSGIN_GAPS_CAP];
};

/* Outcome of homa_msgin_add. */
enum homa_msgin_result {
	HOMA_MSGIN_NEW = 0,        /* the range is new: store its bytes */
	HOMA_MSGIN_DUPLICATE = 1,  /* already arrived, or partly overlaps */
	HOMA_MSGIN_NO_GAP_ROOM = 2, /* would need one gap record too many */
	HOMA_MSGIN_OUT_OF_RANGE = 3, /* not inside the message */
};

/*
 * homa_msgin_init - start a message of length bytes (>= 1) whose sender
 * sends `incoming` bytes unasked (clamped to length), keeping at most
 * max_gaps gap records (clamped to 1..HOMA_MSGIN_GAPS_CAP).
 */
void homa_msgin_init(struct homa_msgin *m, uint32_t length, uint32_t incoming,
		     int max_gaps);

/*
 * homa_msgin_add - account for a packet carrying [offset, offset + len).
 * Returns HOMA_MSGIN_NEW when every byte is new and the range was recorded,
 * otherwise why it must be dropped (nothing is recorded).  A range that
 * fills a gap exactly, its head, its tail or its middle is new; a range that
 * overlaps received data at all is a duplicate.
 */
enum homa_msgin_result homa_msgin_add(struct homa_msgin *m, uint32_t offset,
				      uint32_t len);

/* homa_msgin_complete - true when every byte has arrived. */
static inline bool homa_msgin_complete(const struct homa_msgin *m)
{
	return m->received == m->length;
}

/* homa_msgin_remaining - bytes still to arrive. */
static inline uint32_t homa_msgin_remaining(const struct homa_msgin *m)
{
	return m->length - m->received;
}

/* homa_msgin_grant - raise the granted offset to at most the length;
 * returns true when it grew. */
bool homa_msgin_grant(struct homa_msgin *m, uint32_t offset);

/*
 * homa_msgin_missing - the ranges to ask for again: each gap, then the tail
 * [recv_end, granted) if not empty.  Writes at most max ranges into out and
 * returns how many were written.
 */
int homa_msgin_missing(const struct homa_msgin *m, struct homa_gap *out,
		       int max);

#endif /* HOMA_MSGIN_H */
