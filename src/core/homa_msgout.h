/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * homa_msgout - one outgoing message: its bytes (a private copy), how far it
 * has been sent and granted, and ranges asked for again.  Packets always
 * cover [k * seg, min((k + 1) * seg, length)) for the message's segment size
 * seg, so a retransmission reuses the original packet boundaries.
 */
#ifndef HOMA_MSGOUT_H
#define HOMA_MSGOUT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

/* Pending retransmission ranges kept per message: as many as a receiver
 * asks for at once (its gap records and the tail); beyond this, new ranges
 * are merged into the last one. */
#define HOMA_MSGOUT_RESENDS 65

/* Large message buffers kept for reuse per cache, and the smallest size
 * worth keeping: a fresh megabyte from malloc costs hundreds of page faults
 * per message, more than the copy into it. */
#define HOMA_MSGOUT_CACHE 4
#define HOMA_MSGOUT_CACHE_MIN 65536

/* Freed message buffers of HOMA_MSGOUT_CACHE_MIN bytes or more, for reuse
 * (zero-initialise; one per endpoint, under its lock). */
struct homa_msgout_cache {
	uint8_t *bufs[HOMA_MSGOUT_CACHE];
	uint32_t caps[HOMA_MSGOUT_CACHE];
	uint32_t n;
};

struct homa_msgout {
	uint8_t *data;         /* owned copy of the message (malloc): with
				* frame 0 the bytes in order; else packet k's
				* frame, frame bytes of room for its header
				* then its payload, at k * (frame + seg) */
	const uint8_t *lent;   /* while not NULL, the message's bytes in
				* order in the sender's memory, and the
				* payloads in data not yet written
				* (homa_msgout_init_lent, homa_msgout_settle) */
	uint32_t settled;      /* while lent: bytes below this are in data */
	bool forgotten;        /* homa_msgout_forget_lent: no bytes kept,
				* nothing is ever sent again */
	uint32_t cap;          /* bytes allocated at data */
	uint32_t frame;        /* header room before each packet's payload */
	struct homa_msgout_cache *cache; /* where data goes when freed */
	uint32_t length;
	uint32_t seg;          /* payload bytes per packet */
	uint32_t next_offset;  /* first byte never sent */
	uint32_t granted;      /* bytes below this may be sent */
	uint32_t unscheduled;  /* min(unsched_bytes, length) */
	uint8_t sched_priority; /* priority for granted (scheduled) bytes */
	uint8_t num_resends;
	struct { uint32_t start, end; } resends[HOMA_MSGOUT_RESENDS];
};

/* The packets of the message chosen by homa_msgout_next (one) or
 * homa_msgout_next_run (count consecutive ones, each seg bytes but the
 * last): they cover [offset, offset + len). */
struct homa_segment {
	uint32_t offset;
	uint32_t len;
	uint32_t count;
	bool retransmit;
};

/*
 * homa_msgout_init_cached - homa_msgout_init taking the buffer from cache
 * when one is large enough (cache may be NULL; it must outlive m).  Large
 * buffers are allocated at a power of two, so that they fit later
 * messages; homa_msgout_free gives the buffer back to cache when there is
 * room.
 */
int homa_msgout_init_cached(struct homa_msgout *m,
			    struct homa_msgout_cache *cache,
			    const struct iovec *iov, int iovcnt,
			    uint32_t length, uint32_t seg, uint32_t unsched);

/*
 * homa_msgout_init_framed - homa_msgout_init_cached, with the copy laid out
 * in frames: frame bytes of room before each packet's payload, so that a
 * run of packets, once their headers are written in place
 * (homa_msgout_frame), is one contiguous buffer of whole packets.
 */
int homa_msgout_init_framed(struct homa_msgout *m,
			    struct homa_msgout_cache *cache,
			    const struct iovec *iov, int iovcnt,
			    uint32_t length, uint32_t seg, uint32_t unsched,
			    uint32_t frame);

/*
 * homa_msgout_init_lent - homa_msgout_init_framed of the length bytes at
 * src, without copying them yet: until homa_msgout_settle, packets read
 * their payload at src (homa_msgout_payload), which must stay valid and
 * unchanged.
 */
int homa_msgout_init_lent(struct homa_msgout *m,
			  struct homa_msgout_cache *cache, const uint8_t *src,
			  uint32_t length, uint32_t seg, uint32_t unsched,
			  uint32_t frame);

/* homa_msgout_settle - copy the lent bytes (if any) into m's own buffer;
 * afterwards m no longer reads the sender's memory. */
void homa_msgout_settle(struct homa_msgout *m);

/*
 * homa_msgout_settle_part - homa_msgout_settle in steps: copy the next
 * whole packets of the lent bytes, max_bytes or a little more (at least
 * one packet), into m's own buffer.  Returns true when nothing lent is left
 * (m then no longer reads the sender's memory), false when more remains.
 */
bool homa_msgout_settle_part(struct homa_msgout *m, uint32_t max_bytes);

/*
 * homa_msgout_forget_lent - the receiver has every byte of m for good (a
 * client's response is complete): stop reading the sender's memory without
 * copying what is left.  m sends nothing afterwards; RESENDs and restarts
 * find nothing to send.
 */
void homa_msgout_forget_lent(struct homa_msgout *m);

/* homa_msgout_payload - the message's bytes from offset (a packet
 * boundary) to the end of that packet: in the lent memory while there is
 * one, else in m's copy. */
static inline const uint8_t *homa_msgout_payload(const struct homa_msgout *m,
						 uint32_t offset)
{
	uint32_t k = offset / m->seg;

	if (m->lent)
		return m->lent + offset;
	return m->data + (size_t)k * (m->frame + m->seg) + m->frame +
	       offset % m->seg;
}

/* homa_msgout_frame - the frame of the packet starting at offset (a packet
 * boundary): its frame bytes of header room, followed by its payload. */
static inline uint8_t *homa_msgout_frame(const struct homa_msgout *m,
					 uint32_t offset)
{
	return m->data + (size_t)(offset / m->seg) * (m->frame + m->seg);
}

/* homa_msgout_cache_drain - free every buffer kept in cache. */
void homa_msgout_cache_drain(struct homa_msgout_cache *cache);

/*
 * homa_msgout_init - copy the iovec (total length bytes, 1..max, already
 * checked by the caller) into a new buffer.  seg >= 1, unsched = bytes sent
 * before any grant.  Returns 0 or -ENOMEM (m is then empty).
 */
int homa_msgout_init(struct homa_msgout *m, const struct iovec *iov,
		     int iovcnt, uint32_t length, uint32_t seg,
		     uint32_t unsched);

/* homa_msgout_free - free the copy (or keep it in m's cache); m may be
 * reinitialised afterwards. */
void homa_msgout_free(struct homa_msgout *m);

/* homa_msgout_grant - raise granted (clamped to length); returns true when
 * it grew. */
bool homa_msgout_grant(struct homa_msgout *m, uint32_t offset);

/*
 * homa_msgout_request_resend - the receiver asks again for
 * [offset, offset + len) (len HOMA_RESEND_ALL = everything sent so far).
 * Only bytes already sent are queued; the range is widened to packet
 * boundaries.  Returns the number of bytes queued.
 */
uint32_t homa_msgout_request_resend(struct homa_msgout *m, uint32_t offset,
				    uint32_t len);

/* homa_msgout_restart - send everything again from the start (the receiver
 * lost all state); grants fall back to the unscheduled bytes. */
void homa_msgout_restart(struct homa_msgout *m);

/* homa_msgout_has_work - true when a packet can be sent now. */
bool homa_msgout_has_work(const struct homa_msgout *m);

/* homa_msgout_fully_sent - every byte has been sent at least once and no
 * retransmission is pending. */
bool homa_msgout_fully_sent(const struct homa_msgout *m);

/* homa_msgout_remaining - bytes never sent yet (for SRPT ordering). */
static inline uint32_t homa_msgout_remaining(const struct homa_msgout *m)
{
	return m->length - m->next_offset;
}

/*
 * homa_msgout_next - pick the next packet: a pending retransmission first,
 * then new bytes below granted.  Returns false when there is none.
 * Advances the message's state as if the packet were sent.
 */
bool homa_msgout_next(struct homa_msgout *m, struct homa_segment *s);

/*
 * homa_msgout_next_run - like homa_msgout_next, but new bytes come as a run
 * of up to max_segs (>= 1) consecutive packets that homa_msgout_next would
 * have returned one by one, all on the same side of the unscheduled
 * boundary (so one priority fits them all).  A retransmission is always a
 * single packet.  Returns false when there is nothing to send.
 */
bool homa_msgout_next_run(struct homa_msgout *m, uint32_t max_segs,
			  struct homa_segment *s);

#endif /* HOMA_MSGOUT_H */
